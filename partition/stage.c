/*
 * stage.c - the partition stage (see stage.h).
 */
#include "partition/stage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/util.h"
#include "runtime/infer.h"
#include "extract/ingest.h"
#include "partition/partition.h"
#include "passnet.pb-c.h"
#include "store/batches.h"
#include "store/records.h"

#define BATCH_MODELS 32

size_t pn_candidate_key(uint8_t *key, const uint8_t model[16], const char *strategy, uint32_t index)
{
	size_t l = strlen(strategy);
	memcpy(key, model, 16);
	memcpy(key + 16, strategy, l);
	key[16 + l] = 0;
	key[17 + l] = (uint8_t)(index >> 24);
	key[18 + l] = (uint8_t)(index >> 16);
	key[19 + l] = (uint8_t)(index >> 8);
	key[20 + l] = (uint8_t)index;
	return 21 + l;
}

/* --- what is left to do ------------------------------------------------------------- */

typedef struct job {
	uint8_t key[16];
	unsigned todo;          /* strategies (bit i = pn_strategies[i]) to run */
	void *record;           /* copy of the model record */
	size_t len;
	/* results */
	pn_cuts cuts[PN_N_STRATEGIES];
	char err[PN_ERRLEN];
	int failed;
} job;

typedef struct plan {
	pn_rtxn *t;
	unsigned wanted;
	job *jobs;
	int n, cap;
} plan;

static int done_marker(pn_rtxn *t, const uint8_t *model, const char *strategy)
{
	uint8_t key[64];
	size_t kl = pn_candidate_key(key, model, strategy, PN_CANDIDATE_DONE);
	pn_bytes v;
	return pn_get(t, PN_T_CANDIDATES, key, kl, &v) == 0;
}

static int plan_model(void *ud, pn_bytes key, pn_bytes val)
{
	(void)val;
	plan *p = ud;
	if (key.len != 16)
		return 0;
	unsigned todo = 0;
	for (int i = 0; i < PN_N_STRATEGIES; i++)
		if ((p->wanted >> i & 1) && !done_marker(p->t, key.data, pn_strategies[i].name))
			todo |= 1u << i;
	if (!todo)
		return 0;
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 256;
		job *j = realloc(p->jobs, sizeof(job) * (size_t)p->cap);
		if (!j)
			return -1;
		p->jobs = j;
	}
	job *j = &p->jobs[p->n++];
	memset(j, 0, sizeof(*j));
	memcpy(j->key, key.data, 16);
	j->todo = todo;
	return 0;
}

static int load_records(pn_store *st, job *jobs, int n, char *err)
{
	pn_rtxn *t;
	if (pn_rtxn_begin(st, &t, err))
		return -1;
	int rc = 0;
	for (int i = 0; i < n && !rc; i++) {
		int got = pn_model_record_copy(t, jobs[i].key, &jobs[i].record, &jobs[i].len);
		if (got)
			rc = pn_fail(err, got > 0 ? "model record vanished" : "out of memory");
	}
	pn_rtxn_end(t);
	return rc;
}

/* --- the work on one model ---------------------------------------------------------- */

static void partition_model(job *j)
{
	pn_model *m = NULL;
	pn_infer_result r;
	pn_pview pv;
	memset(&pv, 0, sizeof(pv));
	if (pn_model_from_record(j->record, j->len, &m, NULL, j->err)) {
		j->failed = 1;
		return;
	}
	if (pn_infer_graph(m->graph, &m->bind, NULL, &r, j->err)) {
		j->failed = 1;
		pn_model_free(m);
		return;
	}
	if (pn_pview_build(&pv, m->graph, &r, j->err)) {
		j->failed = 1;
	} else {
		for (int s = 0; s < PN_N_STRATEGIES && !j->failed; s++)
			if ((j->todo >> s & 1) && pn_strategies[s].run(&pv, &j->cuts[s]))
				j->failed = !!pn_fail(j->err, "%s: out of memory", pn_strategies[s].name);
	}
	pn_pview_free(&pv);
	pn_infer_result_free(&r);
	pn_model_free(m);
}

/* --- committing ------------------------------------------------------------------------ */

static int put_candidate(pn_writer *w, const job *j, const char *strategy, uint32_t idx,
			 const int32_t *nodes, int n, char *err)
{
	Passnet__Candidate c;
	passnet__candidate__init(&c);
	c.has_version = 1;
	c.version = PN_SCHEMA_VERSION;
	c.strategy = (char *)strategy;
	int listed = idx == PN_CANDIDATE_DONE ? 0 : n;
	uint32_t *nv = malloc(sizeof(uint32_t) * (size_t)(listed + 1));
	if (!nv)
		return pn_fail(err, "out of memory");
	for (int i = 0; i < listed; i++)
		nv[i] = (uint32_t)nodes[i];
	c.n_nodes = (size_t)listed;
	c.nodes = nv;
	if (idx == PN_CANDIDATE_DONE) {   /* the marker counts, lists nothing */
		c.has_count = 1;
		c.count = (uint32_t)n;
	}
	uint8_t key[64];
	size_t kl = pn_candidate_key(key, j->key, strategy, idx);
	int rc = pn_put_msg(w, PN_T_CANDIDATES, key, kl, &c.base, err);
	free(nv);
	return rc;
}

static int commit_job(pn_writer *w, job *j, pn_stage_stats *stats, char *err)
{
	if (j->failed) {
		stats->failed++;
		return pn_model_error_put(w, j->key, "partition", j->err, err);
	}
	uint8_t base[16];
	if (pn_model_variant_of((pn_bytes){j->record, j->len}, base))
		stats->variants++;
	else
		stats->models++;
	for (int s = 0; s < PN_N_STRATEGIES; s++) {
		if (!(j->todo >> s & 1))
			continue;
		const char *name = pn_strategies[s].name;
		pn_cuts *c = &j->cuts[s];
		for (int i = 0; i < c->n; i++)
			if (put_candidate(w, j, name, (uint32_t)i, c->nodes[i], c->len[i], err))
				return -1;
		stats->candidates += (uint64_t)c->n;
		stats->per_strategy[s] += (uint64_t)c->n;
		/* the marker last: a kill before it redoes this (model, strategy) */
		if (put_candidate(w, j, name, PN_CANDIDATE_DONE, NULL, c->n, err))
			return -1;
	}
	return 0;
}

static void free_job(job *j)
{
	free(j->record);
	j->record = NULL;
	for (int s = 0; s < PN_N_STRATEGIES; s++)
		pn_cuts_free(&j->cuts[s]);
}

/* --- the pipeline (store/batches.h) ------------------------------------------------------ */

typedef struct pipe {
	plan *p;
	pn_stage_stats *stats;
	pn_store *st;
} pipe;

static int pipe_load(void *ud, int first, int n, char *err)
{
	pipe *pp = ud;
	return load_records(pp->st, pp->p->jobs + first, n, err);
}

static void pipe_work(void *ud, int i)
{
	partition_model(&((pipe *)ud)->p->jobs[i]);
}

static int pipe_commit(void *ud, pn_writer *w, int i, char *err)
{
	pipe *pp = ud;
	return commit_job(w, &pp->p->jobs[i], pp->stats, err);
}

static void pipe_release(void *ud, int i)
{
	free_job(&((pipe *)ud)->p->jobs[i]);
}

static const pn_batch_ops partition_ops = {pipe_load, pipe_work, pipe_commit, pipe_release};

int pn_partition_stage(pn_store *st, unsigned strategies, int threads,
		       pn_stage_stats *stats, char *err)
{
	memset(stats, 0, sizeof(*stats));
	double t0 = pn_now();
	plan p = {0};
	p.wanted = strategies ? strategies : (1u << PN_N_STRATEGIES) - 1;
	if (pn_rtxn_begin(st, &p.t, err))
		return -1;
	int rc = pn_foreach(p.t, PN_T_MODELS, NULL, 0, plan_model, &p) < 0 ? -1 : 0;
	pn_rtxn_end(p.t);
	pn_writer *w = NULL;
	if (!rc)
		rc = pn_writer_open(st, &w, 0, err);
	pn_progress prog;
	pn_progress_start(&prog, "partition", (uint64_t)p.n);
	if (!rc) {
		pipe pp = {&p, stats, st};
		rc = pn_run_batches(w, p.n, BATCH_MODELS, threads, &partition_ops, &pp, &prog, err);
	}
	for (int i = 0; i < p.n; i++)
		free_job(&p.jobs[i]);
	pn_progress_end(&prog);
	if (w) {
		char cerr[PN_ERRLEN];
		if (pn_writer_close(w, rc ? cerr : err))
			rc = -1;
	}
	free(p.jobs);
	stats->seconds = pn_now() - t0;
	return rc;
}
