/*
 * stage.c - the dedup stage (partition/stage.h): candidates -> subgraphs.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/util.h"
#include "canon/decode.h"
#include "canon/form.h"
#include "runtime/cost.h"
#include "runtime/infer.h"
#include "extract/ingest.h"
#include "dedup/dedup.h"
#include "passnet.pb-c.h"
#include "store/batches.h"
#include "store/records.h"
#include "store/structures.h"

#define BATCH_MODELS 16
/* The plan is made and worked a chunk at a time, so memory stays flat in
 * the number of models: a chunk closes once it holds this many models or
 * candidates (it may overshoot by one key bucket, see plan_chunk). */
#define CHUNK_MODELS 128
#define CHUNK_CANDIDATES 100000

typedef struct cand {
	uint8_t *key;          /* candidates key (copy) */
	size_t klen;
	Passnet__Candidate *rec;
	pn_form form;
	int ok;
	double flops, bytes_unfused;   /* the cut's work (runtime/cost.h), for exec's order */
	/* the records commit puts, packed by the worker into its job's
	 * `packed` buffer (offsets, as the buffer moves when it grows) */
	size_t sub_off, sub_len, occ_off, occ_len, cand_off, cand_len;
	int occ_too_large;
} cand;

/* One structure (store/structures.h): its candidates are hashed once, on
 * the record of its least model (any of its models would give the same). */
typedef struct mjob {
	uint8_t structure[16];
	uint8_t model[16];     /* the model whose record is decoded */
	int unlisted;          /* no model listed yet: partition was cut short */
	cand *c;
	int n, cap;
	void *record;
	size_t len;
	char *binding;         /* the model's binding as occurrences record it, or NULL */
	pn_buf packed;         /* the candidates' records, see cand */
	char err[PN_ERRLEN];
	int failed;
} mjob;

typedef struct dplan {
	mjob *jobs;
	int n, cap;
	size_t cands;
	const pn_shard *shard;   /* the structures this run works on */
} dplan;

/* Collects candidates without a subgraph hash, grouped by structure (the
 * key prefix, so one pass sees each structure's candidates together). */
static int plan_candidate(void *ud, pn_bytes key, pn_bytes val)
{
	dplan *p = ud;
	if (key.len < 21)
		return 0;
	const uint8_t *k = key.data;
	uint32_t idx = (uint32_t)k[key.len - 4] << 24 | (uint32_t)k[key.len - 3] << 16 |
		       (uint32_t)k[key.len - 2] << 8 | k[key.len - 1];
	if (idx == PN_CANDIDATE_DONE || !pn_shard_holds(p->shard, k))
		return 0;
	Passnet__Candidate *c = passnet__candidate__unpack(NULL, val.len, val.data);
	if (!c)
		return 0;
	if (c->has_subgraph) {
		passnet__candidate__free_unpacked(c, NULL);
		return 0;
	}
	if (!p->n || memcmp(p->jobs[p->n - 1].structure, k, 16)) {
		if (p->n == p->cap) {
			p->cap = p->cap ? p->cap * 2 : 64;
			p->jobs = realloc(p->jobs, sizeof(mjob) * (size_t)p->cap);
		}
		memset(&p->jobs[p->n], 0, sizeof(mjob));
		memcpy(p->jobs[p->n].structure, k, 16);
		p->n++;
	}
	mjob *j = &p->jobs[p->n - 1];
	if (j->n == j->cap) {
		j->cap = j->cap ? j->cap * 2 : 64;
		j->c = realloc(j->c, sizeof(cand) * (size_t)j->cap);
	}
	cand *cd = &j->c[j->n++];
	memset(cd, 0, sizeof(*cd));
	cd->key = malloc(key.len);
	memcpy(cd->key, key.data, key.len);
	cd->klen = key.len;
	cd->rec = c;
	p->cands++;
	return 0;
}

/* "name=v,name=v" of the binding the model was cut at, with a generalized
 * batch last ("batch=B (generalized)"); NULL when it binds nothing. */
static char *binding_text(const pn_model *m, const Passnet__Model *rec)
{
	/* an occurrence is a dupsort value (at most 511 bytes): the text is cut */
	char buf[201];
	int off = 0;
	buf[0] = 0;
	for (int i = 0; i < m->bind.n && off < (int)sizeof buf; i++)
		off += snprintf(buf + off, sizeof buf - (size_t)off, "%s%s=%lld", i ? "," : "",
				m->bind.names[i], (long long)m->bind.values[i]);
	if (rec->has_variant_batch && off < (int)sizeof buf)
		off += snprintf(buf + off, sizeof buf - (size_t)off, "%sbatch=%llu (generalized)",
				off ? "," : "", (unsigned long long)rec->variant_batch);
	return off ? strdup(buf) : NULL;
}

static void pack_records(mjob *j);

/* A cut with a value whose dtype inference could not find (after an op
 * passnet does not know: damaged or custom files) is typed by what the
 * whole model told inference, which the cut alone may not reproduce (a
 * shape computed outside it, partly known).  Such a cut is stored only if
 * its canonical bytes decode into a graph that hashes back to its key, so
 * that `doctor --deep` holds for every stored subgraph; the others are
 * left out like cuts without a form.  Found by tests/cli/hostile_inputs.sh. */
static int has_inference_gap(const pn_graph *g, const pn_infer_result *r, const int32_t *nodes,
			     int n)
{
	for (int i = 0; i < n; i++) {
		const pn_node *nd = &g->nodes[nodes[i]];
		for (int k = 0; k < nd->n_in; k++)
			if (nd->in[k] >= 0 && r->v[nd->in[k]].type.dtype == PN_UNDEFINED)
				return 1;
		for (int k = 0; k < nd->n_out; k++)
			if (nd->out[k] >= 0 && r->v[nd->out[k]].type.dtype == PN_UNDEFINED)
				return 1;
	}
	return 0;
}

static int form_round_trips(const pn_form *f, char *err)
{
	pn_model *sub;
	pn_key k;
	if (pn_subgraph_model(f->bytes, f->len, &sub, err))
		return 0;
	int same = !pn_subgraph_rehash(sub, &k, err) && !memcmp(k.b, f->hash.b, 16);
	pn_model_free(sub);
	return same;
}

static void dedup_model(mjob *j, pn_form_cache *cache)
{
	pn_model *m = NULL;
	Passnet__Model *rec = NULL;
	pn_infer_result r;
	if (pn_model_from_record(j->record, j->len, &m, &rec, j->err)) {
		j->failed = 1;
		return;
	}
	j->binding = binding_text(m, rec);
	if (pn_infer_graph(m->graph, &m->bind, NULL, &r, j->err)) {
		j->failed = 1;
		pn_model_free(m);
		return;
	}
	pn_form_cache_model(cache, m->graph);
	/* the model's inferred types and contents, for every cut's cost */
	pn_type *types = malloc(sizeof(pn_type) * (size_t)(m->graph->n_values + 1));
	const pn_tensor **values = malloc(sizeof(void *) * (size_t)(m->graph->n_values + 1));
	for (int v = 0; types && values && v < m->graph->n_values; v++) {
		types[v] = r.v[v].type;
		values[v] = r.v[v].value;
	}
	int32_t *nodes = malloc(sizeof(int32_t) * (size_t)(m->graph->n_nodes + 1));
	for (int i = 0; nodes && i < j->n; i++) {
		cand *c = &j->c[i];
		int n = 0, bad = 0;
		for (size_t k = 0; k < c->rec->n_nodes; k++) {
			if (c->rec->nodes[k] >= (uint32_t)m->graph->n_nodes)
				bad = 1;
			else
				nodes[n++] = (int32_t)c->rec->nodes[k];
		}
		if (bad || !n)
			continue;
		c->ok = !pn_form_of_cut_cached(m->graph, &r, nodes, n, cache, &c->form, j->err);
		if (c->ok && has_inference_gap(m->graph, &r, nodes, n) &&
		    !form_round_trips(&c->form, j->err)) {
			pn_form_free(&c->form);
			c->ok = 0;
		}
		pn_graph_cost cost = {0};
		char cerr[PN_ERRLEN];   /* a cost left at 0 only changes exec's order */
		if (c->ok && types && values &&
		    !pn_nodes_cost(m->graph, types, values, nodes, n, &cost, cerr)) {
			c->flops = cost.flops;
			c->bytes_unfused = cost.bytes_unfused;
		}
	}
	free(nodes);
	free(types);
	free(values);
	pack_records(j);
	pn_infer_result_free(&r);
	pn_model_free(m);
}

/* --- committing ------------------------------------------------------------------------ */

/* --- packing, in the worker ------------------------------------------------------------ */

/* Appends msg packed to b; its offset and length into *off, *len. */
static void pack_into(pn_buf *b, const ProtobufCMessage *msg, size_t *off, size_t *len)
{
	size_t n = protobuf_c_message_get_packed_size(msg);
	uint8_t tmp[1024];
	uint8_t *p = n <= sizeof tmp ? tmp : malloc(n);
	if (!p) {
		b->oom = 1;
		return;
	}
	protobuf_c_message_pack(msg, p);
	*off = b->n;
	*len = n;
	pn_buf_put(b, p, n);
	if (p != tmp)
		free(p);
}

static void pack_subgraph(pn_buf *b, cand *c)
{
	const pn_form *f = &c->form;
	Passnet__Subgraph s;
	passnet__subgraph__init(&s);
	s.has_version = 1;
	s.version = PN_SCHEMA_VERSION;
	s.has_canonical = 1;
	s.canonical.data = f->bytes;
	s.canonical.len = f->len;
	s.has_pattern = 1;
	s.pattern.data = (uint8_t *)f->pattern.b;
	s.pattern.len = 16;
	s.n_ops = (size_t)f->n_nodes;
	s.ops = (char **)f->ops;
	s.has_nodes = s.has_inputs = s.has_outputs = s.has_constants = 1;
	s.nodes = (uint32_t)f->n_nodes;
	s.inputs = (uint32_t)f->n_inputs;
	s.outputs = (uint32_t)f->n_outputs;
	s.constants = (uint32_t)f->n_consts;
	s.has_flops = s.has_bytes_unfused = 1;
	s.flops = c->flops;
	s.bytes_unfused = c->bytes_unfused;
	pack_into(b, &s.base, &c->sub_off, &c->sub_len);
}

static void pack_occurrence(pn_buf *b, const mjob *j, cand *c)
{
	Passnet__Occurrence o;
	passnet__occurrence__init(&o);
	o.has_version = 1;
	o.version = PN_SCHEMA_VERSION;
	o.has_structure = 1;
	o.structure.data = (uint8_t *)j->structure;
	o.structure.len = 16;
	o.strategy = c->rec->strategy;
	o.has_candidate = 1;
	const uint8_t *k = c->key + c->klen - 4;
	o.candidate = (uint32_t)k[0] << 24 | (uint32_t)k[1] << 16 | (uint32_t)k[2] << 8 | k[3];
	o.binding = j->binding;
	/* an occurrence is a dupsort value: at most 511 bytes */
	c->occ_too_large = passnet__occurrence__get_packed_size(&o) > 512;
	if (!c->occ_too_large)
		pack_into(b, &o.base, &c->occ_off, &c->occ_len);
}

/* The candidate record as it is stored once hashed. */
static void pack_candidate(pn_buf *b, cand *c)
{
	c->rec->has_subgraph = 1;
	c->rec->subgraph.data = c->form.hash.b;
	c->rec->subgraph.len = 16;
	if (c->form.approximate) {
		c->rec->has_approximate = 1;
		c->rec->approximate = 1;
	}
	pack_into(b, &c->rec->base, &c->cand_off, &c->cand_len);
	/* the record is freed by protobuf-c: it must not free the form's key */
	c->rec->has_subgraph = 0;
	c->rec->subgraph.data = NULL;
}

static void pack_records(mjob *j)
{
	for (int i = 0; i < j->n; i++) {
		cand *c = &j->c[i];
		if (!c->ok)
			continue;
		pack_subgraph(&j->packed, c);
		pack_occurrence(&j->packed, j, c);
		pack_candidate(&j->packed, c);
	}
	if (j->packed.oom) {
		j->failed = 1;
		pn_fail(j->err, "out of memory");
	}
}

/* --- committing ------------------------------------------------------------------------ */

/* 1 = new, 0 = the same computation is stored, -1 = collision or error. */
static int store_subgraph(pn_writer *w, const mjob *j, const cand *c, pn_stage_stats *stats,
			  char *err)
{
	const pn_form *f = &c->form;
	const uint8_t *rec = j->packed.p + c->sub_off;
	pn_bytes v;
	if (pn_wget(w, PN_T_SUBGRAPHS, f->hash.b, 16, &v) != 0) {
		stats->new_subgraphs++;
		return pn_put(w, PN_T_SUBGRAPHS, f->hash.b, 16, rec, c->sub_len, err) ? -1 : 1;
	}
	/* the same record bytes hold the same canonical bytes */
	if (v.len == c->sub_len && !memcmp(v.data, rec, v.len))
		return 0;
	Passnet__Subgraph *s = passnet__subgraph__unpack(NULL, v.len, v.data);
	int same = s && s->has_canonical && s->canonical.len == f->len &&
		   !memcmp(s->canonical.data, f->bytes, f->len);
	if (s)
		passnet__subgraph__free_unpacked(s, NULL);
	if (same)
		return 0;
	stats->collisions++;
	return -2;
}

static int commit_candidate(pn_writer *w, mjob *j, cand *c, pn_stage_stats *stats, char *err)
{
	char hex[33];
	if (!c->ok)
		return 0;
	int rc = store_subgraph(w, j, c, stats, err);
	if (rc == -2) {
		pn_key_hex(&c->form.hash, hex);
		char msg[PN_ERRLEN];
		snprintf(msg, sizeof msg, "hash collision: two different computations hash to %s", hex);
		pn_error_line("dedup: %s", msg);
		return pn_error_put(w, &c->form.hash, "dedup", "", hex, msg, err);
	}
	if (rc < 0)
		return -1;
	if (c->occ_too_large)
		return pn_fail(err, "occurrence record too large");
	if (pn_put_dup(w, PN_T_OCCURRENCES, c->form.hash.b, 16, j->packed.p + c->occ_off,
		       c->occ_len, err))
		return -1;
	stats->approximate += c->form.approximate != 0;
	stats->candidates++;
	return pn_put(w, PN_T_CANDIDATES, c->key, c->klen, j->packed.p + c->cand_off, c->cand_len,
		      err);
}

static int commit_job(pn_writer *w, mjob *j, pn_stage_stats *stats, char *err)
{
	if (j->unlisted)
		return 0;
	if (j->failed) {
		stats->failed++;
		return pn_model_error_put(w, j->model, "dedup", j->err, err);
	}
	stats->structures++;
	stats->models++;
	for (int i = 0; i < j->n; i++)
		if (commit_candidate(w, j, &j->c[i], stats, err))
			return -1;
	return 0;
}

static void free_job(mjob *j)
{
	for (int i = 0; i < j->n; i++) {
		free(j->c[i].key);
		passnet__candidate__free_unpacked(j->c[i].rec, NULL);
		pn_form_free(&j->c[i].form);
	}
	free(j->c);
	free(j->record);
	free(j->binding);
	pn_buf_free(&j->packed);
	memset(j, 0, sizeof(*j));
}

static int load_records(pn_store *st, mjob *jobs, int n, char *err)
{
	pn_rtxn *t;
	if (pn_rtxn_begin(st, &t, err))
		return -1;
	int rc = 0;
	for (int i = 0; i < n && !rc; i++) {
		/* a structure whose partition was killed before it listed a
		 * model is left for the next run (partition lists it, then
		 * dedup finds it again) */
		if (pn_structure_first_model(t, jobs[i].structure, jobs[i].model)) {
			jobs[i].unlisted = 1;
			continue;
		}
		int got = pn_model_record_copy(t, jobs[i].model, &jobs[i].record, &jobs[i].len);
		if (got > 0)
			jobs[i].failed = !!pn_fail(jobs[i].err, "model record is missing");
		else if (got < 0)
			rc = pn_fail(err, "out of memory");
	}
	pn_rtxn_end(t);
	return rc;
}

/* --- the pipeline (store/batches.h) ------------------------------------------------------ */

typedef struct pipe {
	dplan *p;
	pn_stage_stats *stats;
	pn_store *st;
	pn_form_cache **caches;   /* one per OpenMP thread, or NULL (no cache) */
	int n_caches;
} pipe;

static int pipe_load(void *ud, int first, int n, char *err)
{
	pipe *pp = ud;
	return load_records(pp->st, pp->p->jobs + first, n, err);
}

static void pipe_work(void *ud, int i)
{
	pipe *pp = ud;
	mjob *j = &pp->p->jobs[i];
	int t = omp_get_thread_num();
	if (!j->failed && !j->unlisted)
		dedup_model(j, pp->caches && t < pp->n_caches ? pp->caches[t] : NULL);
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

static const pn_batch_ops dedup_ops = {pipe_load, pipe_work, pipe_commit, pipe_release};

/* --- streaming the plan --------------------------------------------------------------- */

/* The candidates table is walked in buckets of its key's first byte or two
 * (model keys are hashes, so buckets are even), each bucket one seek: a
 * chunk is planned, worked and committed before the next is read, and each
 * bucket is read once.  Buckets are visited in key order, so the commits
 * happen in the same order as with one plan of everything. */
typedef struct walk {
	size_t prefix_len;   /* 1 or 2 */
	uint32_t next, end;  /* buckets */
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
		uint8_t prefix[2] = {(uint8_t)(wk->next >> (8 * (wk->prefix_len - 1))), (uint8_t)wk->next};
		rc = pn_foreach(t, PN_T_CANDIDATES, prefix, wk->prefix_len, plan_candidate, p) < 0;
		wk->next++;
	}
	pn_rtxn_end(t);
	return rc ? pn_fail(err, "reading the candidates failed") : 0;
}

/* PASSNET_FORM_CACHE=0 turns the exact cache (canon/form.h) off, so a test
 * can check that the store is the same either way. */
static int cache_wanted(void)
{
	const char *e = getenv("PASSNET_FORM_CACHE");
	return !e || strcmp(e, "0");
}

/* PASSNET_DEDUP_CHUNK=N plans N models at a time instead of CHUNK_MODELS,
 * so a test can run a small corpus through many chunks. */
static int chunk_models(void)
{
	const char *e = getenv("PASSNET_DEDUP_CHUNK");
	return e && atoi(e) > 0 ? atoi(e) : CHUNK_MODELS;
}

int pn_dedup_stage(pn_store *st, int threads, const pn_shard *shard, pn_stage_stats *stats,
		   char *err)
{
	memset(stats, 0, sizeof(*stats));
	double t0 = pn_now();
	dplan p = {.shard = shard};
	pn_rtxn *t;
	if (pn_rtxn_begin(st, &t, err))
		return -1;
	int64_t models = pn_count(t, PN_T_MODELS);
	pn_rtxn_end(t);
	walk wk;
	walk_init(&wk, models);
	pipe pp = {&p, stats, st, NULL, 0};
	if (cache_wanted()) {
		pp.n_caches = threads > 0 ? threads : omp_get_max_threads();
		pp.caches = calloc((size_t)pp.n_caches, sizeof(*pp.caches));
		for (int i = 0; pp.caches && i < pp.n_caches; i++)
			pp.caches[i] = pn_form_cache_new(0);
	}
	pn_writer *w = NULL;
	int rc = pn_writer_open(st, &w, 0, err);
	pn_progress prog, chunk_prog;
	pn_progress_start(&prog, "dedup", models > 0 ? (uint64_t)models : 0);
	uint64_t done = 0;
	while (!rc) {
		rc = plan_chunk(st, &wk, &p, chunk_models(), err);
		if (rc || !p.n)
			break;
		memset(&chunk_prog, 0, sizeof(chunk_prog));   /* inactive: prog counts */
		rc = pn_run_batches(w, p.n, BATCH_MODELS, threads, &dedup_ops, &pp, &chunk_prog, err);
		for (int i = 0; i < p.n; i++)
			free_job(&p.jobs[i]);
		done += (uint64_t)p.n;
		pn_progress_step(&prog, done, NULL);
	}
	for (int i = 0; i < p.n; i++)
		free_job(&p.jobs[i]);
	free(p.jobs);
	pn_progress_end(&prog);
	if (getenv("PASSNET_DEDUP_STATS")) {
		uint64_t lookups = 0, hits = 0, phits = 0;
		for (int i = 0; pp.caches && i < pp.n_caches; i++) {
			uint64_t l, h, ph;
			pn_form_cache_counts(pp.caches[i], &l, &h, &ph);
			lookups += l;
			hits += h;
			phits += ph;
		}
		fprintf(stderr, "dedup: form cache: %llu lookups, %llu hits, %llu pattern hits\n",
			(unsigned long long)lookups, (unsigned long long)hits, (unsigned long long)phits);
	}
	for (int i = 0; pp.caches && i < pp.n_caches; i++)
		pn_form_cache_free(pp.caches[i]);
	free(pp.caches);
	if (w) {
		char cerr[PN_ERRLEN];
		if (pn_writer_close(w, rc ? cerr : err))
			rc = -1;
	}
	stats->seconds = pn_now() - t0;
	return rc;
}
