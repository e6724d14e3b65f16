/*
 * profile_stage.c - `passnet exec`: after the models not yet run for their
 * value ranges are (exec/ranges.h), every subgraph without a profile from
 * this executor build is measured, one at a time (timings must not share
 * the machine), and its profile committed right away in small batches, so a
 * killed run loses at most the subgraph being measured.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/util.h"
#include "exec/profile.h"
#include "exec_build.h"
#include "partition/partition.h"
#include "store/records.h"
#include "store/subgraphs.h"

/* Committed every this many profiles or seconds, whichever first: a kill
 * loses little, and the store is not flushed for every tiny subgraph. */
#define COMMIT_EVERY 32
#define COMMIT_SECONDS 1.0

/* Subgraphs are measured in order of the first strategy that found them
 * (fusion, anchor, window, sole: the candidates an export draws on come
 * first under a time budget), then by hash. */
typedef struct pitem {
	uint8_t key[16];
	int rank;
} pitem;

typedef struct pplan {
	pn_rtxn *t;
	const pn_profile_opts *o;
	pitem *items;
	int64_t n, cap;
} pplan;

static int cmp_item(const void *a, const void *b)
{
	const pitem *x = a, *y = b;
	return x->rank != y->rank ? x->rank - y->rank : memcmp(x->key, y->key, 16);
}

/*
 * By its stored profile: with redo_flags, whether it carries one of them;
 * otherwise whether this executor build has not measured it yet.
 */
static int to_measure(pn_rtxn *t, const uint8_t *key, unsigned redo_flags)
{
	pn_bytes v;
	if (pn_get(t, PN_T_PROFILES, key, 16, &v) != 0)
		return !redo_flags;
	Passnet__Profile *p = passnet__profile__unpack(NULL, v.len, v.data);
	int yes;
	if (redo_flags) {
		yes = 0;
		for (size_t i = 0; p && i < p->n_flags; i++) {
			int f = pn_flag_index(p->flags[i]);
			yes |= f >= 0 && (redo_flags >> f & 1);
		}
	} else {
		yes = !(p && p->executor_build && !strcmp(p->executor_build, PN_EXECUTOR_BUILD));
	}
	if (p)
		passnet__profile__free_unpacked(p, NULL);
	return yes;
}

static int wanted(pplan *pl, pn_bytes key, pn_bytes val, int *rank)
{
	const pn_profile_opts *o = pl->o;
	if (o->min_nodes > 1) {
		Passnet__Subgraph *sg = passnet__subgraph__unpack(NULL, val.len, val.data);
		int small = !sg || (int)sg->nodes < o->min_nodes;
		if (sg)
			passnet__subgraph__free_unpacked(sg, NULL);
		if (small)
			return 0;
	}
	pn_occ_summary occ;
	pn_occurrences(pl->t, key.data, NULL, &occ);
	*rank = PN_N_STRATEGIES;
	for (int i = PN_N_STRATEGIES - 1; i >= 0; i--)
		if (occ.per_strategy[i])
			*rank = i;
	if (o->strategies && !pn_occ_in_strategies(&occ, o->strategies))
		return 0;
	return to_measure(pl->t, key.data, o->redo_flags);
}

static int plan_subgraph(void *ud, pn_bytes key, pn_bytes val)
{
	pplan *pl = ud;
	int rank = 0;
	if (key.len != 16 || !wanted(pl, key, val, &rank))
		return 0;
	if (pl->n == pl->cap) {
		pl->cap = pl->cap ? pl->cap * 2 : 1024;
		pl->items = realloc(pl->items, sizeof(pitem) * (size_t)pl->cap);
		if (!pl->items)
			return -1;
	}
	memcpy(pl->items[pl->n].key, key.data, 16);
	pl->items[pl->n++].rank = rank;
	return 0;
}

/* The calibration stored with the store, measured now if there is none. */
static int calibration(pn_store *st, int threads, pn_calibration *cal, char *err)
{
	pn_rtxn *t;
	if (pn_rtxn_begin(st, &t, err))
		return -1;
	int rc = pn_calibration_get(t, cal, err);
	pn_rtxn_end(t);
	if (rc <= 0)
		return rc;
	pn_info("exec: no calibration in the store yet; measuring this machine (passnet calibrate)");
	if (pn_calibrate(threads, cal, err))
		return -1;
	pn_writer *w;
	if (pn_writer_open(st, &w, 0, err))
		return -1;
	rc = pn_calibration_put(w, cal, err);
	char cerr[PN_ERRLEN];
	if (pn_writer_close(w, rc ? cerr : err))
		rc = -1;
	return rc;
}

static void count_flags(const Passnet__Profile *p, pn_profile_stats *s)
{
	for (size_t i = 0; i < p->n_flags; i++) {
		int f = pn_flag_index(p->flags[i]);
		if (f >= 0)
			s->flag_count[f]++;
	}
	s->failed += !strcmp(p->status, "failed");
	s->unstable += !strcmp(p->status, "unstable");
}

int pn_exec_stage(pn_store *st, const pn_profile_opts *o, pn_profile_stats *stats, char *err)
{
	memset(stats, 0, sizeof(*stats));
	double t0 = pn_now();
	int threads = o->threads > 0 ? o->threads : omp_get_max_threads();
	pn_profile_opts opts = *o;
	opts.threads = threads;
	pn_calibration cal;
	if (calibration(st, threads, &cal, err))
		return -1;
	/* the inputs are drawn in the ranges the models show: those first */
	if (pn_ranges_stage(st, threads, o->seed, &stats->ranges, err))
		return -1;
	pplan pl = {.o = o};
	if (pn_rtxn_begin(st, &pl.t, err))
		return -1;
	int rc = pn_foreach(pl.t, PN_T_SUBGRAPHS, NULL, 0, plan_subgraph, &pl) < 0 ? -1 : 0;
	pn_rtxn_end(pl.t);
	if (pl.n)
		qsort(pl.items, (size_t)pl.n, sizeof(pitem), cmp_item);
	stats->todo = pl.n;
	int64_t n = o->limit > 0 && o->limit < pl.n ? o->limit : pl.n;
	pn_writer *w = NULL;
	if (!rc)
		rc = pn_writer_open(st, &w, 0, err);
	pn_progress prog;
	pn_progress_start(&prog, "exec", (uint64_t)n);
	int since_commit = 0;
	double last_commit = pn_now();
	for (int64_t i = 0; !rc && i < n; i++) {
		if (o->budget_s > 0 && pn_now() - t0 > o->budget_s) {
			stats->skipped_budget = n - i;
			break;
		}
		size_t len = 0;
		uint8_t *canon = pn_subgraph_canonical(st, pl.items[i].key, &len, err);
		if (!canon) {
			rc = -1;
			break;
		}
		int n_ranges = 0;
		pn_range *ranges = pn_subgraph_ranges(st, pl.items[i].key, &n_ranges);
		Passnet__Profile p;
		pn_profile_one(canon, len, ranges, n_ranges, &opts, &cal, &p);
		free(ranges);
		free(canon);
		count_flags(&p, stats);
		stats->profiled++;
		rc = pn_put_msg(w, PN_T_PROFILES, pl.items[i].key, 16, &p.base, err);
		pn_profile_clear(&p);
		if (!rc && (++since_commit >= COMMIT_EVERY || pn_now() - last_commit > COMMIT_SECONDS)) {
			rc = pn_writer_flush(w, err);
			since_commit = 0;
			last_commit = pn_now();
		}
		char note[64];
		snprintf(note, sizeof note, "%lld failed", (long long)stats->failed);
		pn_progress_step(&prog, (uint64_t)(i + 1), note);
	}
	pn_progress_end(&prog);
	if (w) {
		char cerr[PN_ERRLEN];
		if (pn_writer_close(w, rc ? cerr : err))
			rc = -1;
	}
	free(pl.items);
	stats->seconds = pn_now() - t0;
	return rc;
}
