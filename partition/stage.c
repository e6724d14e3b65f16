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
#include "store/structures.h"

#define BATCH_MODELS 32

size_t pn_candidate_key(uint8_t *key, const uint8_t structure[16], const char *strategy,
			uint32_t index)
{
	size_t l = strlen(strategy);
	memcpy(key, structure, 16);
	memcpy(key + 16, strategy, l);
	key[16 + l] = 0;
	key[17 + l] = (uint8_t)(index >> 24);
	key[18 + l] = (uint8_t)(index >> 16);
	key[19 + l] = (uint8_t)(index >> 8);
	key[20 + l] = (uint8_t)index;
	return 21 + l;
}

/* --- what is left to do ------------------------------------------------------------- */

/* One model.  The first model of a structure in the plan cuts it (todo: the
 * strategies the structure has no done marker for); every model, that one
 * too, is then listed under its structure (store/structures.h), unless it
 * is already. */
typedef struct job {
	uint8_t key[16];
	pn_key structure;
	unsigned todo;          /* strategies (bit i = pn_strategies[i]) to run */
	int link;               /* list the model under its structure */
	int cutter;             /* the job that cuts this structure (itself, or earlier) */
	int variant;            /* a shape variant (extract/variants.h) */
	void *record;           /* copy of the model record (when todo) */
	size_t len;
	/* results */
	pn_cuts cuts[PN_N_STRATEGIES];
	char err[PN_ERRLEN];
	int failed;
} job;

/* Structure keys seen in the plan -> the job that cuts them: open
 * addressing over the keys' first bytes (they are hashes). */
typedef struct seen_set {
	pn_key *keys;
	int *jobs;
	size_t cap, n;
} seen_set;

static int seen_find(const seen_set *ss, const pn_key *k, size_t *slot)
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

static int seen_grow(seen_set *ss)
{
	seen_set g = {calloc(ss->cap ? ss->cap * 2 : 1024, sizeof(pn_key)), NULL,
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

static int seen_get(const seen_set *ss, const pn_key *k)
{
	size_t slot;
	return ss->cap ? seen_find(ss, k, &slot) : UNSEEN;
}

static int seen_record(seen_set *ss, const pn_key *k, int job)
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

typedef struct plan {
	pn_rtxn *t;
	unsigned wanted;
	const pn_shard *shard;   /* the structures this run works on */
	job *jobs;
	int n, cap;
	seen_set seen;
} plan;

static int done_marker(pn_rtxn *t, const uint8_t *structure, const char *strategy)
{
	uint8_t key[64];
	size_t kl = pn_candidate_key(key, structure, strategy, PN_CANDIDATE_DONE);
	pn_bytes v;
	return pn_get(t, PN_T_CANDIDATES, key, kl, &v) == 0;
}

static int plan_model(void *ud, pn_bytes key, pn_bytes val)
{
	plan *p = ud;
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
		job *j = realloc(p->jobs, sizeof(job) * (size_t)p->cap);
		if (!j)
			return -1;
		p->jobs = j;
	}
	job *j = &p->jobs[p->n];
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

static int load_records(pn_store *st, job *jobs, int n, char *err)
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

static void partition_model(job *j)
{
	if (!j->todo)
		return;
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
	size_t kl = pn_candidate_key(key, j->structure.b, strategy, idx);
	int rc = pn_put_msg(w, PN_T_CANDIDATES, key, kl, &c.base, err);
	free(nv);
	return rc;
}

static int commit_job(pn_writer *w, job *jobs, int i, pn_stage_stats *stats, char *err)
{
	job *j = &jobs[i];
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
		for (int i = 0; i < c->n; i++)
			if (put_candidate(w, j, name, (uint32_t)i, c->nodes[i], c->len[i], err))
				return -1;
		stats->candidates += (uint64_t)c->n;
		stats->per_strategy[s] += (uint64_t)c->n;
		/* the marker last: a kill before it redoes this (model, strategy) */
		if (put_candidate(w, j, name, PN_CANDIDATE_DONE, NULL, c->n, err))
			return -1;
	}
	/* listed last: a model listed under its structure is done */
	return j->link ? pn_put_dup(w, PN_T_STRUCTURES, j->structure.b, 16, j->key, 16, err) : 0;
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
	return commit_job(w, pp->p->jobs, i, pp->stats, err);
}

static void pipe_release(void *ud, int i)
{
	free_job(&((pipe *)ud)->p->jobs[i]);
}

static const pn_batch_ops partition_ops = {pipe_load, pipe_work, pipe_commit, pipe_release};

int pn_partition_stage(pn_store *st, unsigned strategies, int threads, const pn_shard *shard,
		       pn_stage_stats *stats, char *err)
{
	memset(stats, 0, sizeof(*stats));
	double t0 = pn_now();
	plan p = {.shard = shard};
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
	free(p.seen.keys);
	free(p.seen.jobs);
	stats->seconds = pn_now() - t0;
	return rc;
}
