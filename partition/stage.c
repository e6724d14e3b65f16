/*
 * stage.c - the partition stage (see stage.h).
 */
#include "partition/stage.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/assert.h"
#include "common/util.h"
#include "runtime/infer.h"
#include "extract/ingest.h"
#include "partition/partition.h"
#include "passnet.pb-c.h"
#include "store/batches.h"
#include "store/records.h"
#include "store/structures.h"

#define BATCH_MODELS 32

size_t pn_candidate_key(uint8_t *key, const uint8_t structure[16], const char *strategy,
			uint32_t index)
{
	size_t l = strlen(strategy);
	PN_ASSERT(21 + l <= PN_CANDIDATE_KEY_MAX);   /* the callers' key buffers */
	memcpy(key, structure, 16);
	memcpy(key + 16, strategy, l);
	key[16 + l] = 0;
	key[17 + l] = (uint8_t)(index >> 24);
	key[18 + l] = (uint8_t)(index >> 16);
	key[19 + l] = (uint8_t)(index >> 8);
	key[20 + l] = (uint8_t)index;
	return 21 + l;
}

/* --- candidates without a hash ------------------------------------------------------- */

static const char unhashed_key[] = "candidates_unhashed";

int pn_unhashed_mark(pn_writer *w, char *err)
{
	Passnet__Meta m;
	passnet__meta__init(&m);
	m.has_version = 1;
	m.version = PN_SCHEMA_VERSION;
	m.text = "a partition run may have left candidates without a subgraph hash";
	return pn_put_msg(w, PN_T_META, unhashed_key, sizeof unhashed_key - 1, &m.base, err);
}

int pn_unhashed_clear(pn_writer *w, char *err)
{
	return pn_del(w, PN_T_META, unhashed_key, sizeof unhashed_key - 1, err);
}

int pn_unhashed_marked(pn_rtxn *t)
{
	pn_bytes v;
	return pn_get(t, PN_T_META, unhashed_key, sizeof unhashed_key - 1, &v) == 0;
}

/* --- what is left to do ------------------------------------------------------------- */

/* Structure keys seen in the plan -> the job that cuts them: open
 * addressing over the keys' first bytes (they are hashes). */

static int seen_find(const pn_seen_set *ss, const pn_key *k, size_t *slot)
{
	uint64_t h;
	memcpy(&h, k->b, sizeof h);
	for (size_t i = h & (ss->cap - 1);; i = (i + 1) & (ss->cap - 1)) {
		*slot = i;
		if (ss->jobs[i] < 0)
			return -1;
		if (!memcmp(ss->keys[i].b, k->b, 16))
			return ss->jobs[i];
	}
}

static int seen_grow(pn_seen_set *ss)
{
	pn_seen_set g = {calloc(ss->cap ? ss->cap * 2 : 1024, sizeof(pn_key)), NULL,
		      ss->cap ? ss->cap * 2 : 1024, ss->n};
	g.jobs = malloc(sizeof(int) * g.cap);
	if (!g.keys || !g.jobs) {
		free(g.keys);
		free(g.jobs);
		return -1;
	}
	for (size_t i = 0; i < g.cap; i++)
		g.jobs[i] = -1;
	for (size_t i = 0; i < ss->cap; i++) {
		size_t slot;
		if (ss->jobs[i] >= 0 && seen_find(&g, &ss->keys[i], &slot) < 0) {
			g.keys[slot] = ss->keys[i];
			g.jobs[slot] = ss->jobs[i];
		}
	}
	free(ss->keys);
	free(ss->jobs);
	*ss = g;
	return 0;
}

#define UNSEEN (-1)     /* not seen in this plan */
#define NO_CUTTER (-2)  /* seen, and nothing to cut: its candidates are stored */

static int seen_get(const pn_seen_set *ss, const pn_key *k)
{
	size_t slot;
	return ss->cap ? seen_find(ss, k, &slot) : UNSEEN;
}

static int seen_record(pn_seen_set *ss, const pn_key *k, int job)
{
	size_t slot;
	if (2 * (ss->n + 1) > ss->cap && seen_grow(ss))
		return -1;
	if (seen_find(ss, k, &slot) == UNSEEN)
		ss->n++;
	ss->keys[slot] = *k;
	ss->jobs[slot] = job;
	return 0;
}

static int done_marker(pn_rtxn *t, const uint8_t *structure, const char *strategy)
{
	uint8_t key[PN_CANDIDATE_KEY_MAX];
	size_t kl = pn_candidate_key(key, structure, strategy, PN_CANDIDATE_DONE);
	pn_bytes v;
	return pn_get(t, PN_T_CANDIDATES, key, kl, &v) == 0;
}

static int plan_model(void *ud, pn_bytes key, pn_bytes val)
{
	pn_part_plan *p = ud;
	if (key.len != 16)
		return 0;
	void *rec;
	size_t len;
	if (pn_model_record_whole(p->t, val, &rec, &len))
		return 0;   /* a variant without its base: nothing to cut */
	pn_key st = pn_model_structure_key(rec, len);
	free(rec);
	if (!pn_shard_holds(p->shard, st.b))
		return 0;   /* another shard's structure */
	int cutter = seen_get(&p->seen, &st);
	unsigned todo = 0;
	for (int i = 0; cutter == UNSEEN && i < PN_N_STRATEGIES; i++)
		if ((p->wanted >> i & 1) && !done_marker(p->t, st.b, pn_strategies[i].name))
			todo |= 1u << i;
	if (cutter == UNSEEN && seen_record(&p->seen, &st, todo ? p->n : NO_CUTTER))
		return -1;
	int link = !pn_structure_has_model(p->t, st.b, key.data);
	if (!todo && !link)
		return 0;
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 256;
		pn_part_job *j = realloc(p->jobs, sizeof(pn_part_job) * (size_t)p->cap);
		if (!j)
			return -1;
		p->jobs = j;
	}
	pn_part_job *j = &p->jobs[p->n];
	memset(j, 0, sizeof(*j));
	memcpy(j->key, key.data, 16);
	j->structure = st;
	j->todo = todo;
	j->link = link;
	j->cutter = cutter >= 0 ? cutter : p->n;
	uint8_t base[16];
	j->variant = pn_model_variant_of(val, base);
	p->n++;
	return 0;
}

int pn_part_plan_models(pn_part_plan *p, pn_rtxn *t, const void *prefix, size_t plen)
{
	p->t = t;
	int rc = pn_foreach(t, PN_T_MODELS, prefix, plen, plan_model, p) < 0 ? -1 : 0;
	p->t = NULL;
	return rc;
}

void pn_part_plan_clear(pn_part_plan *p)
{
	for (int i = 0; i < p->n; i++)
		pn_part_job_free(&p->jobs[i]);
	p->n = 0;
	if (p->seen.cap)
		for (size_t i = 0; i < p->seen.cap; i++)
			p->seen.jobs[i] = UNSEEN;
	p->seen.n = 0;
}

void pn_part_plan_free(pn_part_plan *p)
{
	pn_part_plan_clear(p);
	free(p->jobs);
	free(p->seen.keys);
	free(p->seen.jobs);
	memset(&p->jobs, 0, sizeof(*p) - offsetof(pn_part_plan, jobs));
}

int pn_part_load(pn_store *st, pn_part_job *jobs, int n, char *err)
{
	pn_rtxn *t;
	if (pn_rtxn_begin(st, &t, err))
		return -1;
	int rc = 0;
	for (int i = 0; i < n && !rc; i++) {
		if (!jobs[i].todo)
			continue;
		int got = pn_model_record_copy(t, jobs[i].key, &jobs[i].record, &jobs[i].len);
		if (got)
			rc = pn_fail(err, got > 0 ? "model record vanished" : "out of memory");
	}
	pn_rtxn_end(t);
	return rc;
}

/* --- the work on one model ---------------------------------------------------------- */

int pn_part_cut(pn_part_job *j, const pn_model *m, const pn_infer_result *r)
{
	pn_pview pv;
	memset(&pv, 0, sizeof(pv));
	if (pn_pview_build(&pv, m->graph, r, j->err)) {
		j->failed = 1;
	} else {
		for (int s = 0; s < PN_N_STRATEGIES && !j->failed; s++)
			if ((j->todo >> s & 1) && pn_strategies[s].run(&pv, &j->cuts[s]))
				j->failed = !!pn_fail(j->err, "%s: out of memory", pn_strategies[s].name);
	}
	pn_pview_free(&pv);
	return j->failed ? -1 : 0;
}

static void partition_model(pn_part_job *j)
{
	if (!j->todo)
		return;
	pn_model *m = NULL;
	pn_infer_result r;
	if (pn_model_from_record_typed(j->record, j->len, &m, NULL, &r, j->err)) {
		j->failed = 1;
		return;
	}
	pn_part_cut(j, m, &r);
	pn_infer_result_free(&r);
	pn_model_free(m);
}

/* --- committing ------------------------------------------------------------------------ */

int pn_candidate_record_put(pn_writer *w, const uint8_t structure[16], const char *strategy,
			    uint32_t idx, const int32_t *nodes, int n, const pn_key *subgraph,
			    int approximate, char *err)
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
	if (subgraph) {
		c.has_subgraph = 1;
		c.subgraph.data = (uint8_t *)subgraph->b;
		c.subgraph.len = 16;
	}
	if (approximate) {
		c.has_approximate = 1;
		c.approximate = 1;
	}
	uint8_t key[PN_CANDIDATE_KEY_MAX];
	size_t kl = pn_candidate_key(key, structure, strategy, idx);
	int rc = pn_put_msg(w, PN_T_CANDIDATES, key, kl, &c.base, err);
	free(nv);
	return rc;
}

static int put_unhashed(void *ud, pn_writer *w, const pn_part_job *j, int s, int i, char *err)
{
	(void)ud;
	return pn_candidate_record_put(w, j->structure.b, pn_strategies[s].name, (uint32_t)i,
				       j->cuts[s].nodes[i], j->cuts[s].len[i], NULL, 0, err);
}

int pn_part_commit(pn_writer *w, pn_part_job *jobs, int i, pn_stage_stats *stats,
		   pn_cand_put_fn put, void *ud, char *err)
{
	pn_part_job *j = &jobs[i];
	/* the cutter is the structure's first job in the plan, committed first */
	PN_ASSERT(j->cutter >= 0 && j->cutter <= i);
	PN_ASSERT(!j->todo || j->cutter == i);
	/* a model of a structure its cutter failed on fails the same way */
	if (j->cutter != i && !j->failed && jobs[j->cutter].failed) {
		j->failed = 1;
		memcpy(j->err, jobs[j->cutter].err, sizeof j->err);
	}
	if (j->failed) {
		stats->failed++;
		return pn_model_error_put(w, j->key, "partition", j->err, err);
	}
	if (j->variant)
		stats->variants++;
	else
		stats->models++;
	stats->structures += j->todo != 0;
	for (int s = 0; s < PN_N_STRATEGIES; s++) {
		if (!(j->todo >> s & 1))
			continue;
		const char *name = pn_strategies[s].name;
		pn_cuts *c = &j->cuts[s];
		for (int k = 0; k < c->n; k++)
			if (put(ud, w, j, s, k, err))
				return -1;
		stats->candidates += (uint64_t)c->n;
		stats->per_strategy[s] += (uint64_t)c->n;
		/* the marker last: a kill before it redoes this (model, strategy) */
		if (pn_candidate_record_put(w, j->structure.b, name, PN_CANDIDATE_DONE, NULL, c->n,
					    NULL, 0, err))
			return -1;
	}
	/* listed last: a model listed under its structure is done */
	return j->link ? pn_put_dup(w, PN_T_STRUCTURES, j->structure.b, 16, j->key, 16, err) : 0;
}

void pn_part_job_free(pn_part_job *j)
{
	free(j->record);
	j->record = NULL;
	for (int s = 0; s < PN_N_STRATEGIES; s++)
		pn_cuts_free(&j->cuts[s]);
}

/* --- the pipeline (store/batches.h) ------------------------------------------------------ */

typedef struct pipe {
	pn_part_plan *p;
	pn_stage_stats *stats;
	pn_store *st;
} pipe;

static int pipe_load(void *ud, int first, int n, char *err)
{
	pipe *pp = ud;
	return pn_part_load(pp->st, pp->p->jobs + first, n, err);
}

static void pipe_work(void *ud, int i)
{
	partition_model(&((pipe *)ud)->p->jobs[i]);
}

static int pipe_commit(void *ud, pn_writer *w, int i, char *err)
{
	pipe *pp = ud;
	return pn_part_commit(w, pp->p->jobs, i, pp->stats, put_unhashed, NULL, err);
}

static void pipe_release(void *ud, int i)
{
	pn_part_job_free(&((pipe *)ud)->p->jobs[i]);
}

static const pn_batch_ops partition_ops = {pipe_load, pipe_work, pipe_commit, pipe_release};

int pn_partition_stage(pn_store *st, unsigned strategies, int threads, const pn_shard *shard,
		       pn_stage_stats *stats, char *err)
{
	memset(stats, 0, sizeof(*stats));
	double t0 = pn_now();
	pn_part_plan p = {.shard = shard};
	p.wanted = strategies ? strategies : (1u << PN_N_STRATEGIES) - 1;
	pn_rtxn *t;
	int rc = pn_rtxn_begin(st, &t, err);
	if (!rc) {
		rc = pn_part_plan_models(&p, t, NULL, 0);
		pn_rtxn_end(t);
	}
	pn_writer *w = NULL;
	if (!rc)
		rc = pn_writer_open(st, &w, 0, err);
	/* the mark lands before any candidate does (a killed run leaves it) */
	if (!rc && p.n && !(rc = pn_unhashed_mark(w, err)))
		rc = pn_writer_flush(w, err);
	pn_progress prog;
	pn_progress_start(&prog, "partition", (uint64_t)p.n);
	if (!rc) {
		pipe pp = {&p, stats, st};
		rc = pn_run_batches(w, p.n, BATCH_MODELS, threads, &partition_ops, &pp, &prog, err);
	}
	pn_progress_end(&prog);
	if (w) {
		char cerr[PN_ERRLEN];
		if (pn_writer_close(w, rc ? cerr : err))
			rc = -1;
	}
	pn_part_plan_free(&p);
	stats->seconds = pn_now() - t0;
	return rc;
}
