/*
 * stage.c - the dedup stage (dedup.h): the candidates table's unhashed
 * candidates -> subgraphs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/assert.h"
#include "common/err.h"
#include "common/util.h"
#include "dedup/blocks.h"
#include "dedup/dedup.h"
#include "dedup/forms.h"
#include "runtime/infer.h"
#include "store/batches.h"
#include "store/records.h"
#include "store/structures.h"
#include "store/tables.h"

#define BATCH_MODELS 16
/* The plan is made and worked a chunk at a time, so memory stays flat in
 * the number of models: a chunk closes once it holds this many models or
 * candidates (it may overshoot by one key bucket, see plan_chunk). */
#define CHUNK_MODELS 128
#define CHUNK_CANDIDATES 100000

/* One structure: its candidates are hashed once, on the record of its
 * least model (any of its models would give the same). */
typedef struct mjob {
	pn_dd_job d;
	int unlisted;          /* no model listed yet: partition was cut short */
	int other_shard;       /* left to another shard's run */
	void *record;
	size_t len;
	/* the lists with unhashed entries, rewritten with their hashes once
	 * committed (NULL: none of that strategy) */
	Passnet__Candidate *list[PN_N_STRATEGIES];
} mjob;

typedef struct dplan {
	mjob *jobs;
	int n, cap;
	size_t cands;
	/* the structures this run works on: those whose least model's record
	 * key falls in it, as partition --shard cut them (a structure cut in
	 * several shards has its least model in each of their stores) */
	const pn_shard *shard;
} dplan;

/* The job of the structure key k starts, the plan being in key order. */
static mjob *job_of(dplan *p, const uint8_t *k)
{
	if (!p->n || memcmp(p->jobs[p->n - 1].d.structure, k, 16)) {
		if (p->n == p->cap) {
			int cap = p->cap ? p->cap * 2 : 64;
			mjob *jobs = realloc(p->jobs, sizeof(mjob) * (size_t)cap);
			if (!jobs)
				return NULL;
			p->jobs = jobs;
			p->cap = cap;
		}
		memset(&p->jobs[p->n], 0, sizeof(mjob));
		memcpy(p->jobs[p->n].d.structure, k, 16);
		p->n++;
	}
	return &p->jobs[p->n - 1];
}

/* An unhashed candidate of job j: its canonical positions, whose nodes in
 * the model are found once a model is read. */
static int add_cut(dplan *p, mjob *j, int s, uint32_t idx, const uint32_t *placed, size_t n)
{
	pn_dd_cut *cd = pn_dd_add_cut(&j->d);
	int32_t *nodes = malloc(sizeof(int32_t) * (2 * n + 1));
	if (!cd || !nodes) {
		free(nodes);
		return -1;
	}
	cd->strategy = pn_strategies[s].name;
	cd->index = idx;
	cd->nodes = nodes;
	cd->placed = nodes + n;
	cd->owns_nodes = 1;
	cd->n = (int)n;
	for (size_t i = 0; i < n; i++) {   /* out of range: left unhashed */
		nodes[i] = -1;
		nodes[n + i] = placed[i] > INT32_MAX ? -1 : (int32_t)placed[i];
	}
	p->cands++;
	return 0;
}

/* The unhashed entries of a (structure, strategy) list; the job keeps the
 * list to put it back with their hashes. */
static int plan_list(dplan *p, const uint8_t *k, int s, Passnet__Candidate *c)
{
	size_t unhashed = 0;
	for (size_t i = 0; i < c->n_entries; i++)
		unhashed += !c->entries[i]->has_subgraph;
	if (!unhashed) {
		pn_candidates_free(c);
		return 0;
	}
	mjob *j = job_of(p, k);
	if (!j) {
		pn_candidates_free(c);
		return -1;
	}
	PN_ASSERT(!j->list[s]);   /* one list per (structure, strategy) key */
	j->list[s] = c;
	for (size_t i = 0; i < c->n_entries; i++)
		if (!c->entries[i]->has_subgraph &&
		    add_cut(p, j, s, (uint32_t)i, c->entries[i]->nodes, c->entries[i]->n_nodes))
			return -1;
	return 0;
}

/* Collects candidates without a subgraph hash, grouped by structure (the
 * key prefix, so one pass sees each structure's candidates together): the
 * lists' unhashed entries and the kept blocks' unhashed records. */
static int plan_candidate(void *ud, pn_bytes key, pn_bytes val)
{
	dplan *p = ud;
	if (key.len < 21)
		return 0;
	const uint8_t *k = key.data;
	uint32_t idx = (uint32_t)k[key.len - 4] << 24 | (uint32_t)k[key.len - 3] << 16 |
		       (uint32_t)k[key.len - 2] << 8 | k[key.len - 1];
	Passnet__Candidate *c = pn_candidates_unpack(val);
	if (!c)
		return 0;
	int s = pn_strategy_index(c->strategy);   /* NULL: -1 */
	if (s < 0 || (idx != PN_CANDIDATE_DONE && (idx < PN_BLOCK_INDEX0 || c->has_subgraph))) {
		pn_candidates_free(c);
		return 0;
	}
	if (idx == PN_CANDIDATE_DONE)
		return plan_list(p, k, s, c);
	mjob *j = job_of(p, k);
	int rc = j ? add_cut(p, j, s, idx, c->nodes, c->n_nodes) : -1;
	pn_candidates_free(c);
	return rc;
}

static void dedup_model(mjob *j, pn_form_cache *cache)
{
	pn_model *m = NULL;
	Passnet__Model *rec = NULL;
	pn_infer_result r;
	if (pn_model_from_record_typed(j->record, j->len, &m, &rec, &r, j->d.err)) {
		j->d.failed = 1;
		return;
	}
	pn_dd_forms(&j->d, m, rec, &r, cache);
	pn_infer_result_free(&r);
	pn_model_free(m);
}

/* The list entry cut c came from (NULL: a kept block's own record). */
static Passnet__CandidateEntry *entry_of(mjob *j, const pn_dd_cut *c)
{
	Passnet__Candidate *l =
		c->index < PN_BLOCK_INDEX0 ? j->list[pn_strategy_index(c->strategy)] : NULL;
	PN_ASSERT(!l || c->index < l->n_entries);   /* plan_list's cuts */
	return l ? l->entries[c->index] : NULL;
}

/* Lends each hashed cut's hash to its list entry (on), or takes it back
 * before the lists are freed (!on). */
static void lend_hashes(mjob *j, const uint8_t *hashed, int on)
{
	for (int i = 0; i < j->d.n; i++) {
		pn_dd_cut *c = &j->d.c[i];
		Passnet__CandidateEntry *e = hashed[i] ? entry_of(j, c) : NULL;
		if (!e)
			continue;
		e->has_subgraph = on;
		e->subgraph.data = on ? c->form.hash.b : NULL;
		e->subgraph.len = on ? 16 : 0;
		e->has_approximate = e->approximate = on && c->form.approximate;
	}
}

/* Job j's lists back, each entry hashed now with its hash. */
static int put_lists(pn_writer *w, mjob *j, const uint8_t *hashed, char *err)
{
	lend_hashes(j, hashed, 1);
	int rc = 0;
	for (int s = 0; s < PN_N_STRATEGIES && !rc; s++)
		if (j->list[s]) {
			uint8_t key[PN_CANDIDATE_KEY_MAX];
			size_t kl = pn_candidate_key(key, j->d.structure, pn_strategies[s].name,
						     PN_CANDIDATE_DONE);
			rc = pn_put_msg(w, PN_T_CANDIDATES, key, kl, &j->list[s]->base, err);
		}
	lend_hashes(j, hashed, 0);
	return rc;
}

static int commit_job(pn_writer *w, mjob *j, pn_dd_seen *seen, pn_stage_stats *stats,
		      char *err)
{
	if (j->unlisted || j->other_shard)
		return 0;
	if (j->d.failed) {
		stats->failed++;
		return pn_model_error_put(w, j->d.model, "dedup", j->d.err, err);
	}
	stats->structures++;
	stats->models++;
	uint8_t *hashed = calloc((size_t)j->d.n + 1, 1);
	if (!hashed)
		return pn_fail(err, "out of memory");
	int rc = 0;
	for (int i = 0; i < j->d.n && !rc; i++) {
		pn_dd_cut *c = &j->d.c[i];
		int got = pn_dd_commit_cut(w, &j->d, c, seen, stats, err);
		hashed[i] = got == 1;
		rc = got < 0;
		/* a kept block's own record gets its hash; list entries, below */
		if (got == 1 && c->index >= PN_BLOCK_INDEX0)
			rc = pn_candidate_record_put(w, j->d.structure, c->strategy, c->index,
						     c->placed, c->n, &c->form.hash,
						     c->form.approximate, err);
	}
	if (!rc)
		rc = put_lists(w, j, hashed, err);
	free(hashed);
	return rc ? -1 : 0;
}

static void free_job(mjob *j)
{
	pn_dd_job_free(&j->d);
	free(j->record);
	for (int s = 0; s < PN_N_STRATEGIES; s++)
		pn_candidates_free(j->list[s]);
	memset(j, 0, sizeof(*j));
}

/* The cuts' nodes in j's model: its alias maps the positions the
 * candidates list.  A position out of its range leaves the cut unhashed. */
static void find_nodes(pn_rtxn *t, mjob *j)
{
	pn_alias a;
	int got = pn_record_alias(t, j->record, j->len, &a);
	if (got) {
		j->d.failed = !!pn_fail(j->d.err, got > 0 ? "its record key has no alias"
							 : "its alias does not decode");
		return;
	}
	for (int i = 0; i < j->d.n; i++) {
		pn_dd_cut *c = &j->d.c[i];
		for (int k = 0; k < c->n; k++)
			c->nodes[k] = c->placed[k] >= 0 && c->placed[k] < a.n ? a.node_of[c->placed[k]]
									      : -1;
	}
	pn_alias_free(&a);
}

static int load_records(pn_store *st, const pn_shard *shard, mjob *jobs, int n, char *err)
{
	pn_rtxn *t;
	if (pn_rtxn_begin(st, &t, err))
		return -1;
	int rc = 0;
	for (int i = 0; i < n && !rc; i++) {
		/* a structure whose partition was killed before it listed a
		 * model is left for the next run (partition lists it, then
		 * dedup finds it again) */
		if (pn_structure_first_model(t, jobs[i].d.structure, jobs[i].d.model)) {
			jobs[i].unlisted = 1;
			continue;
		}
		int got = pn_model_record_copy(t, jobs[i].d.model, &jobs[i].record, &jobs[i].len);
		if (got > 0)
			jobs[i].d.failed = !!pn_fail(jobs[i].d.err, "model record is missing");
		else if (got < 0)
			rc = pn_fail(err, "out of memory");
		else if (!pn_shard_holds(shard, pn_model_record_key(jobs[i].record, jobs[i].len).b))
			jobs[i].other_shard = 1;
		else
			find_nodes(t, &jobs[i]);
	}
	pn_rtxn_end(t);
	return rc;
}

/* --- the pipeline (store/batches.h) ------------------------------------------------------ */

typedef struct pipe {
	dplan *p;
	pn_stage_stats *stats;
	pn_store *st;
	pn_dd_caches caches;
	pn_dd_seen *seen;
} pipe;

static int pipe_load(void *ud, int first, int n, char *err)
{
	pipe *pp = ud;
	return load_records(pp->st, pp->p->shard, pp->p->jobs + first, n, err);
}

static void pipe_work(void *ud, int i)
{
	pipe *pp = ud;
	mjob *j = &pp->p->jobs[i];
	if (!j->d.failed && !j->unlisted && !j->other_shard)
		dedup_model(j, pn_dd_cache_of_thread(&pp->caches));
}

static int pipe_commit(void *ud, pn_writer *w, int i, char *err)
{
	pipe *pp = ud;
	return commit_job(w, &pp->p->jobs[i], pp->seen, pp->stats, err);
}

static void pipe_release(void *ud, int i)
{
	free_job(&((pipe *)ud)->p->jobs[i]);
}

static const pn_batch_ops dedup_ops = {.load = pipe_load, .work = pipe_work,
				       .commit = pipe_commit, .release = pipe_release};

/* --- streaming the plan --------------------------------------------------------------- */

/* The candidates table is walked in buckets of its key's first byte or two
 * (model keys are hashes, so buckets are even), each bucket one seek: a
 * chunk is planned, worked and committed before the next is read, and each
 * bucket is read once.  Buckets are visited in key order, so the commits
 * happen in the same order as with one plan of everything. */
typedef struct walk {
	size_t prefix_len;   /* 1 or 2, or 16: the structures listed */
	uint32_t next, end;  /* buckets, or structures */
	const uint8_t (*structures)[16];
} walk;

static void walk_init(walk *wk, int64_t models)
{
	wk->prefix_len = models > 16 * 256 ? 2 : 1;
	wk->next = 0;
	wk->end = 1u << (8 * wk->prefix_len);
}

/* Plans the next chunk into p (empty when the walk is over). */
static int plan_chunk(pn_store *st, walk *wk, dplan *p, int chunk_models, char *err)
{
	p->n = 0;
	p->cands = 0;
	pn_rtxn *t;
	if (wk->next >= wk->end)
		return 0;
	if (pn_rtxn_begin(st, &t, err))
		return -1;
	int rc = 0;
	while (!rc && wk->next < wk->end && p->n < chunk_models && p->cands < CHUNK_CANDIDATES) {
		uint8_t bucket[2] = {0, (uint8_t)wk->next};
		if (!wk->structures)
			bucket[0] = (uint8_t)(wk->next >> (8 * (wk->prefix_len - 1)));
		const uint8_t *prefix = wk->structures ? wk->structures[wk->next] : bucket;
		rc = pn_foreach(t, PN_T_CANDIDATES, prefix, wk->prefix_len, plan_candidate, p) < 0;
		wk->next++;
	}
	pn_rtxn_end(t);
	return rc ? pn_fail(err, "reading the candidates failed") : 0;
}

/* PASSNET_DEDUP_CHUNK=N plans N models at a time instead of CHUNK_MODELS,
 * so a test can run a small corpus through many chunks. */
static int chunk_models(void)
{
	const char *e = getenv("PASSNET_DEDUP_CHUNK");
	return e && atoi(e) > 0 ? atoi(e) : CHUNK_MODELS;
}

/* Hashes the unhashed candidates that wk reaches. */
static int dedup_walk(pn_store *st, walk *wk, int64_t models, int threads, const pn_shard *shard,
		      pn_stage_stats *stats, char *err)
{
	dplan p = {.shard = shard};
	pipe pp = {&p, stats, st, {0}, pn_dd_seen_new()};
	pn_dd_caches_open(&pp.caches, threads);
	pn_writer *w = NULL;
	int rc = pn_writer_open(st, &w, 0, err);
	pn_progress prog, chunk_prog;
	pn_progress_start(&prog, "dedup", models > 0 ? (uint64_t)models : 0);
	uint64_t done = 0;
	while (!rc) {
		rc = plan_chunk(st, wk, &p, chunk_models(), err);
		if (rc || !p.n)
			break;
		memset(&chunk_prog, 0, sizeof(chunk_prog));   /* inactive: prog counts */
		rc = pn_run_batches(w, p.n, BATCH_MODELS, threads, &dedup_ops, &pp, &chunk_prog, err);
		for (int i = 0; i < p.n; i++)
			free_job(&p.jobs[i]);
		done += (uint64_t)p.n;
		pn_store_drop_pages(st);   /* resident memory: one chunk's pages */
		pn_progress_step(&prog, done, NULL);
	}
	for (int i = 0; i < p.n; i++)
		free_job(&p.jobs[i]);
	free(p.jobs);
	pn_progress_end(&prog);
	pn_dd_caches_close(&pp.caches);
	pn_dd_seen_free(pp.seen);
	/* every unhashed candidate (of the shard) has been tried: `build` need
	 * not scan for them again until a partition run marks the table */
	if (!rc && w && !wk->structures)
		rc = pn_unhashed_clear(w, err);
	if (w) {
		char cerr[PN_ERRLEN];
		if (pn_writer_close(w, rc ? cerr : err))
			rc = -1;
	}
	return rc;
}

int pn_dedup_stage(pn_store *st, int threads, const pn_shard *shard, pn_stage_stats *stats,
		   char *err)
{
	memset(stats, 0, sizeof(*stats));
	double t0 = pn_now();
	pn_rtxn *t;
	if (pn_rtxn_begin(st, &t, err))
		return -1;
	int64_t models = pn_count(t, PN_T_MODELS);
	pn_rtxn_end(t);
	walk wk = {0};
	walk_init(&wk, models);
	int rc = dedup_walk(st, &wk, models, threads, shard, stats, err);
	if (!rc)
		rc = pn_blocks_keep(st, threads, NULL, stats, err);
	stats->seconds = pn_now() - t0;
	return rc;
}

int pn_dedup_structures(pn_store *st, const uint8_t (*structures)[16], int n, int threads,
			const pn_shard *shard, pn_stage_stats *stats, char *err)
{
	walk wk = {16, 0, (uint32_t)n, structures};
	return n ? dedup_walk(st, &wk, n, threads, shard, stats, err) : 0;
}
