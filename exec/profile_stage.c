/*
 * profile_stage.c - `passnet exec`: after the models not yet run for their
 * value ranges are (exec/ranges.h), every subgraph without a profile from
 * this executor build is measured, and its profile committed in small
 * batches, so a killed run loses at most the subgraphs being measured.
 *
 * Subgraphs go in batches of up to BATCH, each in two phases that never
 * overlap:
 *   1. set-up and correctness (pn_profile_check: decode, inputs, session,
 *      the correctness run) of the whole batch on `threads` threads at
 *      once, each taking the next subgraph; nothing is timed meanwhile, and
 *      the threads end before phase 2, so their OpenMP teams are gone too;
 *   2. timing (pn_profile_time), one subgraph after the other in plan
 *      order, alone on the machine as before, reusing the session, weights
 *      and inputs that phase 1 made and checked.
 * What is measured is unchanged: the same runs on the same inputs in the
 * same order per subgraph; only the untimed work of different subgraphs
 * shares the machine.  A batch also stops growing once the subgraphs it
 * keeps ready hold BATCH_BYTES (their values' sizes as inferred), once its
 * phase 1 has lasted BATCH_SECONDS, and at the budget: a subgraph whose
 * checks started is one started, as the budget counts them.
 */
#include <pthread.h>
#include <stdatomic.h>
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
#include "store/tables.h"

/* Committed every this many profiles or seconds, whichever first: a kill
 * loses little, and the store is not flushed for every tiny subgraph. */
#define COMMIT_EVERY 32
#define COMMIT_SECONDS 1.0
#define BATCH 64
#define BATCH_BYTES (1024.0 * 1024 * 1024)
/* ... or once its phase 1 has lasted this long, so that big subgraphs go
 * in small batches and the budget is not overrun by a batch's checks. */
#define BATCH_SECONDS 2.0
#define MAX_WORKERS 16

/* Subgraphs are measured in order of the first strategy that found them
 * (typical, fusion, anchor, window, sole: the candidates an export draws on come
 * first under a time budget), then cheapest first (the work dedup recorded:
 * FLOPs plus unfused bytes), so that a budget measures many subgraphs rather
 * than a few batch-512 shape variants, then by hash. */
typedef struct pitem {
	uint8_t key[16];
	int rank;
	double cost;
} pitem;

typedef struct pplan {
	pn_rtxn *t;
	const pn_profile_opts *o;
	pitem *items;
	int64_t n, cap;
	/* structures whose models have not all run for ranges (the ranges
	 * phase stopped at half the budget): their subgraphs wait */
	uint8_t (*pending)[16];
	int64_t n_pending, waiting;
} pplan;

static int cmp_item(const void *a, const void *b)
{
	const pitem *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	if (x->cost != y->cost)
		return x->cost < y->cost ? -1 : 1;
	return memcmp(x->key, y->key, 16);
}

/*
 * By its stored profile: with redo_flags, whether it carries one of them;
 * otherwise whether this executor build has not measured it yet.  No
 * profile (missing, unreadable or malformed) carries no flag and has not
 * been measured.
 */
static int to_measure(pn_rtxn *t, const uint8_t *key, unsigned redo_flags)
{
	Passnet__Profile *p;
	pn_profiles_get(t, key, 16, &p);
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
	pn_profiles_free(p);
	return yes;
}

static int wanted(pplan *pl, pn_bytes key, pn_bytes val, int *rank, double *cost)
{
	const pn_profile_opts *o = pl->o;
	/* decoded here, not by a typed foreach: records outside the shard are
	 * never decoded */
	Passnet__Subgraph *sg = pn_subgraphs_unpack(val);
	int small = !sg || (o->min_nodes > 1 && (int)sg->nodes < o->min_nodes);
	*cost = sg ? sg->flops + sg->bytes_unfused : 0;
	pn_subgraphs_free(sg);
	if (small)
		return 0;
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
	double cost = 0;
	if (key.len != 16 || !pn_shard_holds(&pl->o->shard, key.data))
		return 0;
	if (pl->o->accept && !pl->o->accept(pl->o->accept_ud, key.data))
		return 0;
	if (!wanted(pl, key, val, &rank, &cost))
		return 0;
	/* measured on inputs drawn from ranges still to widen, its profile
	 * would differ from one run's: it waits for the next run */
	if (pl->n_pending && pn_ranges_pending_in(pl->t, key.data, pl->pending, pl->n_pending)) {
		pl->waiting++;
		return 0;
	}
	if (pl->n == pl->cap) {
		pl->cap = pl->cap ? pl->cap * 2 : 1024;
		pl->items = realloc(pl->items, sizeof(pitem) * (size_t)pl->cap);
		if (!pl->items)
			return -1;
	}
	memcpy(pl->items[pl->n].key, key.data, 16);
	pl->items[pl->n].cost = cost;
	pl->items[pl->n++].rank = rank;
	return 0;
}

/* Stores cal as the current machine. */
static int put_calibration(pn_store *st, pn_calibration *cal, char *err)
{
	pn_writer *w;
	if (pn_writer_open(st, &w, 0, err))
		return -1;
	int rc = pn_calibration_put(w, cal, err);
	char cerr[PN_ERRLEN];
	if (pn_writer_close(w, rc ? cerr : err))
		rc = -1;
	return rc;
}

/* The store's current calibration if it is this machine's, else this
 * machine measured now and made current: a store copied to another node
 * profiles there against that node's roofline, and its earlier profiles
 * keep the machine they name.  A record of the old layout names no host
 * and counts as this machine's: it is given this machine's name (and so an
 * id) and kept. */
static int calibration(pn_store *st, int threads, pn_calibration *cal, char *err)
{
	pn_rtxn *t;
	if (pn_rtxn_begin(st, &t, err))
		return -1;
	int rc = pn_calibration_get(t, cal, err);
	pn_rtxn_end(t);
	if (rc < 0)
		return rc;
	char host[PN_MACHINE_TEXT];
	pn_machine_host(host);
	if (rc == 0 && !cal->host[0]) {
		pn_info("exec: the calibration names no machine (an older passnet); recording it as "
			"this machine's (%s)", host);
		memcpy(cal->host, host, sizeof host);
		pn_machine_cpu_model(cal->cpu_model);
		return put_calibration(st, cal, err);
	}
	if (rc == 0 && !strcmp(cal->host, host))
		return cal->machine[0] ? 0 : put_calibration(st, cal, err);
	if (rc == 0)
		pn_info("exec: the store's calibration is of %s, not this machine (%s); measuring "
			"this machine (passnet calibrate)", cal->host, host);
	else
		pn_info("exec: no calibration in the store yet; measuring this machine (passnet calibrate)");
	if (pn_calibrate(threads, cal, err))
		return -1;
	return put_calibration(st, cal, err);
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

/* --- a batch ----------------------------------------------------------------------- */

typedef struct pslot {
	const uint8_t *key;
	uint8_t *canon;
	size_t len;
	pn_range *ranges;
	int n_ranges;
	pn_subgraph_weights ws;  /* its weights' statistics (canon/decode.h) */
	/* 1 when the range record says every input's range came from the
	 * models' runs on their real weights (exec/ranges.c); copied to the
	 * profile's inputs_from_real_run. */
	int from_real_run;
	Passnet__Profile p;
	pn_measure *m;       /* ready to be timed; NULL: p is final (failed) */
} pslot;

typedef struct pbatch {
	pslot *s;
	int n;                   /* slots read */
	atomic_int next;         /* the next slot to check */
	atomic_llong kept_kb;    /* what the checked ones hold */
	const pn_profile_opts *o;
	const pn_calibration *cal;
	double stop_at;          /* no slot is claimed after this (pn_now) */
	pn_profile_times tm[MAX_WORKERS];
} pbatch;

typedef struct pworker {
	pbatch *b;
	int id;
} pworker;

static void free_input(pslot *sl)
{
	free(sl->canon);
	free(sl->ranges);
	pn_subgraph_weights_free(&sl->ws);
	sl->canon = NULL;
	sl->ranges = NULL;
}

/* Claims slots in order, so that the checked ones are always a prefix. */
static void *check_worker(void *ud)
{
	pworker *w = ud;
	pbatch *b = w->b;
	while (atomic_load(&b->kept_kb) < (long long)(BATCH_BYTES / 1024) && pn_now() < b->stop_at) {
		int i = atomic_fetch_add(&b->next, 1);
		if (i >= b->n)
			break;
		pslot *sl = &b->s[i];
		sl->m = pn_profile_check(sl->canon, sl->len, sl->ranges, sl->n_ranges, &sl->ws, b->o, b->cal,
					 &sl->p, &b->tm[w->id]);
		pn_profile_input_source(&sl->p, sl->from_real_run);
		free_input(sl);
		atomic_fetch_add(&b->kept_kb, (long long)(pn_measure_bytes(sl->m) / 1024));
	}
	return NULL;
}

/* Phase 1 on `workers` threads (this one among them), claiming no slot
 * after `budget_end` (0: none); returns how many slots, from the first, are
 * checked. */
static int check_batch(pbatch *b, int workers, double budget_end, pn_profile_times *sum)
{
	b->stop_at = pn_now() + BATCH_SECONDS;
	if (budget_end > 0 && budget_end < b->stop_at)
		b->stop_at = budget_end;
	atomic_store(&b->next, 0);
	atomic_store(&b->kept_kb, 0);
	memset(b->tm, 0, sizeof(b->tm));
	pthread_t th[MAX_WORKERS];
	pworker w[MAX_WORKERS];
	int started = 1;
	for (int k = 0; k < workers; k++)
		w[k] = (pworker){b, k};
	for (int k = 1; k < workers && k < b->n; k++, started++)
		if (pthread_create(&th[k], NULL, check_worker, &w[k]))
			break;
	check_worker(&w[0]);
	for (int k = 1; k < started; k++)
		pthread_join(th[k], NULL);
	for (int k = 0; k < workers; k++) {
		const pn_profile_times *t = &b->tm[k];
		sum->decode += t->decode;
		sum->infer += t->infer;
		sum->inputs += t->inputs;
		sum->weights += t->weights;
		sum->correct += t->correct;
		sum->check_runs += t->check_runs;
	}
	int done = atomic_load(&b->next);
	return done < b->n ? done : b->n;
}

/* Reads the canonical bytes and input ranges of items into slots from
 * b->n on, in one reader; returns -1 (err set) when a record is missing,
 * after the slots before it. */
static int read_batch(pn_store *st, pbatch *b, const pitem *items, int64_t *next, int64_t n,
		      char *err)
{
	pn_rtxn *t;
	if (pn_rtxn_begin(st, &t, err))
		return -1;
	int rc = 0;
	for (; b->n < BATCH && *next < n; ++*next) {
		pslot *sl = &b->s[b->n];
		memset(sl, 0, sizeof(*sl));
		sl->key = items[*next].key;
		Passnet__Subgraph *sg;
		pn_subgraphs_get(t, sl->key, 16, &sg);
		if (sg && sg->has_canonical && (sl->canon = malloc(sg->canonical.len + 1))) {
			memcpy(sl->canon, sg->canonical.data, sg->canonical.len);
			sl->len = sg->canonical.len;
		}
		pn_subgraphs_free(sg);
		if (!sl->canon) {
			rc = pn_fail(err, "subgraph record is missing or corrupt");
			break;
		}
		sl->ranges = pn_subgraph_ranges_in(t, sl->key, &sl->n_ranges);
		pn_read_subgraph_weights_in(t, sl->key, &sl->ws);
		/* every input drawn in what the trained model computed */
		sl->from_real_run = sl->ranges && sl->n_ranges > 0;
		for (int i = 0; i < sl->n_ranges && sl->from_real_run; i++)
			sl->from_real_run = sl->ranges[i].real;
		b->n++;
	}
	pn_rtxn_end(t);
	return rc;
}

/* --- the stage ----------------------------------------------------------------------- */

typedef struct pcommit {
	pn_writer *w;
	int since;
	double last;
} pcommit;

static int commit_profile(pcommit *c, pslot *sl, pn_profile_stats *stats, char *err)
{
	double t0 = pn_now();
	count_flags(&sl->p, stats);
	stats->profiled++;
	int rc = pn_put_msg(c->w, PN_T_PROFILES, sl->key, 16, &sl->p.base, err);
	pn_profile_clear(&sl->p);
	if (!rc && (++c->since >= COMMIT_EVERY || pn_now() - c->last > COMMIT_SECONDS)) {
		rc = pn_writer_flush(c->w, err);
		c->since = 0;
		c->last = pn_now();
	}
	stats->commit_s += pn_now() - t0;
	return rc;
}

/* Frees slots [from, to) of a batch that will not be timed. */
static void drop_slots(pbatch *b, int from, int to)
{
	for (int i = from; i < to; i++) {
		pn_profile_drop(b->s[i].m);
		b->s[i].m = NULL;
		pn_profile_clear(&b->s[i].p);
		free_input(&b->s[i]);
	}
}

int pn_exec_stage(pn_store *st, const pn_profile_opts *o, pn_profile_stats *stats, char *err)
{
	memset(stats, 0, sizeof(*stats));
	double t0 = pn_now();
	int threads = pn_stage_threads(o->threads);
	pn_profile_opts opts = *o;
	opts.threads = threads;
	if (o->ranges_only) {
		double stop = o->budget_s > 0 ? t0 + o->budget_s : 0;
		int rc = pn_ranges_stage(st, threads, o->seed, stop, &o->shard, &stats->ranges, err);
		stats->seconds = pn_now() - t0;
		return rc;
	}
	pn_calibration cal;
	if (calibration(st, threads, &cal, err))
		return -1;
	stats->calibration_s = pn_now() - t0;
	/* the inputs are drawn in the ranges the models show: those first,
	 * within half the budget (the models left run in the next exec) */
	double ranges_stop = o->budget_s > 0 ? t0 + o->budget_s / 2 : 0;
	/* every model, with or without a shard: a shard's profiles are drawn
	 * in the ranges of all the models, as one run's are */
	if (pn_ranges_stage(st, threads, o->seed, ranges_stop, NULL, &stats->ranges, err))
		return -1;
	double tp = pn_now();
	pplan pl = {.o = o};
	if (pn_rtxn_begin(st, &pl.t, err))
		return -1;
	if (stats->ranges.left)
		pl.pending = pn_ranges_pending(pl.t, &pl.n_pending);
	int rc = pn_foreach(pl.t, PN_T_SUBGRAPHS, NULL, 0, plan_subgraph, &pl) < 0 ? -1 : 0;
	pn_rtxn_end(pl.t);
	free(pl.pending);
	stats->waiting_ranges = pl.waiting;
	if (pl.n)
		qsort(pl.items, (size_t)pl.n, sizeof(pitem), cmp_item);
	stats->todo = pl.n;
	int64_t n = o->limit > 0 && o->limit < pl.n ? o->limit : pl.n;
	double tq = pn_now();
	stats->plan_s = tq - tp;
	if (o->on_plan) {
		for (int64_t i = 0; i < n; i++)
			o->on_plan(o->on_plan_ud, pl.items[i].key);
		free(pl.items);
		stats->seconds = pn_now() - t0;
		return rc;
	}
	pcommit c = {.last = pn_now()};
	if (!rc)
		rc = pn_writer_open(st, &c.w, 0, err);
	pbatch b = {.o = &opts, .cal = &cal};
	b.s = calloc(BATCH, sizeof(pslot));
	if (!rc && !b.s)
		rc = pn_fail(err, "out of memory");
	int workers = threads < MAX_WORKERS ? threads : MAX_WORKERS;
	pn_progress prog;
	pn_progress_start(&prog, "exec", (uint64_t)n);
	int64_t read = 0, done = 0;   /* items read into slots; items committed */
	int read_rc = 0, out_of_budget = 0;
	char read_err[PN_ERRLEN] = "";
	while (!rc && done < n) {
		if ((out_of_budget = o->budget_s > 0 && pn_now() - t0 > o->budget_s))
			break;
		double ta = pn_now();
		if (!read_rc)
			read_rc = read_batch(st, &b, pl.items, &read, n, read_err);
		double tb = pn_now();
		stats->read_s += tb - ta;
		if (!b.n)
			break;   /* only after a read error */
		int checked = check_batch(&b, workers, o->budget_s > 0 ? t0 + o->budget_s : 0,
					  &stats->work);
		stats->check_s += pn_now() - tb;
		int i = 0;
		for (; !rc && i < checked; i++) {
			if ((out_of_budget = o->budget_s > 0 && pn_now() - t0 > o->budget_s))
				break;
			pslot *sl = &b.s[i];
			double tt = pn_now();
			if (sl->m)
				pn_profile_time(sl->m, &opts, &cal, &sl->p, &stats->work);
			sl->m = NULL;
			stats->timing_s += pn_now() - tt;
			rc = commit_profile(&c, sl, stats, err);
			done++;
			char note[64];
			snprintf(note, sizeof note, "%lld failed", (long long)stats->failed);
			pn_progress_step(&prog, (uint64_t)done, note);
		}
		if (i < checked) {   /* out of budget (or an error) */
			drop_slots(&b, i, checked);
			break;
		}
		/* the slots read but not checked go first in the next batch */
		memmove(b.s, b.s + checked, sizeof(pslot) * (size_t)(b.n - checked));
		b.n -= checked;
	}
	drop_slots(&b, 0, b.n);
	if (!rc && read_rc && !out_of_budget)
		rc = pn_fail(err, "%s", read_err);
	if (!rc && out_of_budget)
		stats->skipped_budget = n - done;
	pn_progress_end(&prog);
	if (c.w) {
		double tc = pn_now();
		char cerr[PN_ERRLEN];
		if (pn_writer_close(c.w, rc ? cerr : err))
			rc = -1;
		stats->commit_s += pn_now() - tc;
	}
	free(b.s);
	free(pl.items);
	stats->profile_s = pn_now() - tq;
	stats->seconds = pn_now() - t0;
	return rc;
}
