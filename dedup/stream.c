/*
 * stream.c - the streamed build (stream.h).
 */
#include "dedup/stream.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/assert.h"
#include "common/util.h"
#include "dedup/blocks.h"
#include "dedup/forms.h"
#include "extract/ingest.h"
#include "runtime/infer.h"
#include "store/batches.h"
#include "store/records.h"

#define BATCH_MODELS 16
/* models planned at a time (a chunk may overshoot by one key bucket) */
#define CHUNK_MODELS 256

typedef struct stream {
	pn_part_plan plan;
	pn_dd_job *dd;        /* per job of the plan: its cuts' forms */
	int dd_cap;
	int (*first_cut)[PN_N_STRATEGIES];   /* per job: strategy s's first cut in dd */
	pn_store *st;
	pn_stage_stats *cut, *hashed;
	pn_dd_caches caches;
	pn_dd_seen *seen;
} stream;

/* --- the work on one model ------------------------------------------------------------- */

/* Lists job i's cuts as dedup's, in strategy then cut order. */
static int list_cuts(stream *sm, int i)
{
	pn_part_job *j = &sm->plan.jobs[i];
	pn_dd_job *d = &sm->dd[i];
	memcpy(d->structure, j->structure.b, 16);
	memcpy(d->model, j->key, 16);
	for (int s = 0; s < PN_N_STRATEGIES; s++) {
		sm->first_cut[i][s] = d->n;
		for (int k = 0; (j->todo >> s & 1) && k < j->cuts[s].n; k++) {
			pn_dd_cut *c = pn_dd_add_cut(d);
			if (!c)
				return -1;
			c->strategy = pn_strategies[s].name;
			c->index = (uint32_t)k;
			c->nodes = j->cuts[s].nodes[k];
			c->placed = j->placed[s].nodes[k];
			c->n = j->cuts[s].len[k];
		}
	}
	return 0;
}

static void work(void *ud, int i)
{
	stream *sm = ud;
	pn_part_job *j = &sm->plan.jobs[i];
	if (!j->todo)
		return;
	pn_model *m = NULL;
	Passnet__Model *rec = NULL;
	pn_infer_result r;
	if (pn_model_from_record_typed(j->record, j->len, &m, &rec, &r, j->err)) {
		j->failed = 1;
		return;
	}
	if (!pn_part_cut(&sm->plan, j, m, rec, &r)) {
		pn_dd_job *d = &sm->dd[i];
		if (list_cuts(sm, i))
			d->failed = !!pn_fail(d->err, "out of memory");
		else
			pn_dd_forms(d, m, rec, &r, pn_dd_cache_of_thread(&sm->caches));
	}
	pn_infer_result_free(&r);
	pn_model_free(m);
}

/* --- committing ------------------------------------------------------------------------ */

/* A candidate's subgraph and occurrence when dedup's half worked; its
 * list entry says whether it did. */
static int put_cut(void *ud, pn_writer *w, const pn_part_job *j, int s, int k, pn_cand_entry *e,
		   char *err)
{
	stream *sm = ud;
	int i = (int)(j - sm->plan.jobs);
	PN_ASSERT(i >= 0 && i < sm->plan.n);
	pn_dd_job *d = &sm->dd[i];
	if (d->failed)
		return 0;
	pn_dd_cut *c = &d->c[sm->first_cut[i][s] + k];
	/* list_cuts listed them in the order pn_part_commit puts them */
	PN_ASSERT(sm->first_cut[i][s] + k < d->n && c->index == (uint32_t)k &&
		  c->strategy == pn_strategies[s].name);
	int rc = pn_dd_commit_cut(w, d, c, sm->seen, sm->hashed, err);
	if (rc == 1) {
		e->hashed = 1;
		e->subgraph = c->form.hash;
		e->approximate = c->form.approximate != 0;
	}
	return rc < 0 ? -1 : 0;
}

static int commit(void *ud, pn_writer *w, int i, char *err)
{
	stream *sm = ud;
	pn_part_job *j = &sm->plan.jobs[i];
	pn_dd_job *d = &sm->dd[i];
	int cuts = j->todo && !j->failed;
	if (pn_part_commit(w, sm->plan.jobs, i, sm->cut, put_cut, sm, err))
		return -1;
	if (!cuts)
		return 0;
	if (d->failed) {
		sm->hashed->failed++;
		return pn_model_error_put(w, j->key, "dedup", d->err, err);
	}
	sm->hashed->structures++;
	sm->hashed->models++;
	return 0;
}

static int load(void *ud, int first, int n, char *err)
{
	stream *sm = ud;
	return pn_part_load(sm->st, sm->plan.jobs + first, n, err);
}

static void release(void *ud, int i)
{
	stream *sm = ud;
	pn_dd_job_free(&sm->dd[i]);
	pn_part_job_free(&sm->plan.jobs[i]);
}

static size_t cost(void *ud, int i)
{
	return pn_part_job_cost(&((stream *)ud)->plan.jobs[i]);
}

static const pn_batch_ops stream_ops = {load, work, commit, release, cost};

/* --- planning a chunk at a time -------------------------------------------------------- */

/* Plans the models of the next key buckets (one or two bytes of the key,
 * which is a hash) until the chunk is full; *next is the next bucket. */
static int plan_chunk(stream *sm, uint32_t *next, uint32_t end, size_t plen, char *err)
{
	pn_part_plan_clear(&sm->plan);
	pn_rtxn *t;
	if (pn_rtxn_begin(sm->st, &t, err))
		return -1;
	int rc = 0;
	while (!rc && *next < end && sm->plan.n < CHUNK_MODELS) {
		uint8_t prefix[2] = {(uint8_t)(*next >> (8 * (plen - 1))), (uint8_t)*next};
		rc = pn_part_plan_models(&sm->plan, t, prefix, plen);
		(*next)++;
	}
	pn_rtxn_end(t);
	if (rc)
		return pn_fail(err, "out of memory");
	if (sm->plan.n > sm->dd_cap) {
		free(sm->dd);
		free(sm->first_cut);
		sm->dd_cap = sm->plan.n;
		sm->dd = calloc((size_t)sm->dd_cap, sizeof(*sm->dd));
		sm->first_cut = calloc((size_t)sm->dd_cap, sizeof(*sm->first_cut));
		if (!sm->dd || !sm->first_cut)
			return pn_fail(err, "out of memory");
	}
	return 0;
}

int pn_stream_stage(pn_store *st, unsigned strategies, int threads, const pn_shard *shard,
		    pn_stage_stats *cut, pn_stage_stats *hashed, char *err)
{
	memset(cut, 0, sizeof(*cut));
	memset(hashed, 0, sizeof(*hashed));
	double t0 = pn_now();
	stream sm = {.st = st, .cut = cut, .hashed = hashed};
	if (pn_part_plan_init(&sm.plan, st, strategies, shard, err))
		return -1;
	pn_rtxn *t;
	if (pn_rtxn_begin(st, &t, err)) {
		pn_part_plan_free(&sm.plan);
		return -1;
	}
	int64_t models = pn_count(t, PN_T_MODELS);
	pn_rtxn_end(t);
	size_t plen = models > 16 * 256 ? 2 : 1;
	uint32_t next = 0, end = 1u << (8 * plen);
	pn_dd_caches_open(&sm.caches, threads);
	sm.seen = pn_dd_seen_new();
	pn_writer *w = NULL;
	int rc = pn_writer_open(st, &w, 0, err);
	pn_progress prog, chunk_prog;
	pn_progress_start(&prog, "build", models > 0 ? (uint64_t)models : 0);
	while (!rc && next < end) {
		rc = plan_chunk(&sm, &next, end, plen, err);
		if (rc || !sm.plan.n)
			continue;
		memset(&chunk_prog, 0, sizeof(chunk_prog));   /* inactive: prog counts */
		rc = pn_run_batches(w, sm.plan.n, BATCH_MODELS, threads, &stream_ops, &sm,
				    &chunk_prog, err);
		/* the next chunk's plan reads the lists this one wrote */
		if (!rc)
			rc = pn_writer_flush(w, err);
		pn_store_drop_pages(st);   /* resident memory: one chunk's pages */
		pn_progress_step(&prog, (uint64_t)next * (uint64_t)(models > 0 ? models : 0) / end,
				 NULL);
	}
	pn_progress_end(&prog);
	for (int i = 0; i < sm.plan.n && i < sm.dd_cap; i++)
		pn_dd_job_free(&sm.dd[i]);
	pn_part_plan_free(&sm.plan);
	free(sm.dd);
	free(sm.first_cut);
	pn_dd_caches_close(&sm.caches);
	pn_dd_seen_free(sm.seen);
	if (w) {
		char cerr[PN_ERRLEN];
		if (pn_writer_close(w, rc ? cerr : err))
			rc = -1;
	}
	if (!rc)
		rc = pn_blocks_keep(st, threads, cut, hashed, err);
	cut->seconds = hashed->seconds = pn_now() - t0;
	return rc;
}
