/*
 * ranges.c - recording the value ranges of subgraph inputs (ranges.h).
 */
#include "exec/ranges.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/shard.h"
#include "common/strmap.h"
#include "common/util.h"
#include "canon/form.h"
#include "runtime/session.h"
#include "runtime/feed.h"
#include "runtime/infer.h"
#include "extract/ingest.h"
#include "model/onnx.h"
#include "partition/stage.h"
#include "passnet.pb-c.h"
#include "store/records.h"
#include "store/structures.h"
#include "store/subgraphs.h"
#include "store/tables.h"
#include "store/warnings.h"

/* --- one model's values --------------------------------------------------------------- */

/* Folds the finite values of t into r. */
static void widen(pn_range *r, const pn_tensor *t)
{
	if (!t || t->kind != PN_KIND_TENSOR || !pn_dtype_is_float(t->dtype) || !t->numel)
		return;
	double lo = INFINITY, hi = -INFINITY;
	if (t->dtype == PN_FLOAT) {   /* the common case, without the generic getter */
		const float *p = t->data;
		for (int64_t i = 0; i < t->numel; i++)
			if (isfinite(p[i])) {
				lo = p[i] < lo ? p[i] : lo;
				hi = p[i] > hi ? p[i] : hi;
			}
	} else {
		for (int64_t i = 0; i < t->numel; i++) {
			double x = pn_tensor_get_f64(t, i);
			if (isfinite(x)) {
				lo = x < lo ? x : lo;
				hi = x > hi ? x : hi;
			}
		}
	}
	if (lo > hi)
		return;
	if (!r->known || lo < r->lo)
		r->lo = lo;
	if (!r->known || hi > r->hi)
		r->hi = hi;
	r->known = 1;
}

/* Folds t's values into r and keeps its shape, and the values of a small
 * integer tensor. */
static void see(pn_range *r, const pn_tensor *t)
{
	widen(r, t);
	if (!t || t->kind != PN_KIND_TENSOR || t->rank > PN_MAX_RANK)
		return;
	r->rank = t->rank;
	memcpy(r->dims, t->dims, sizeof(int64_t) * (size_t)t->rank);
	r->n_ints = 0;
	if (pn_dtype_is_int(t->dtype) && t->numel <= PN_SEEN_INTS) {
		for (int64_t i = 0; i < t->numel; i++)
			r->ints[i] = (int64_t)pn_tensor_get_f64(t, i);
		r->n_ints = (int32_t)t->numel;
	}
}

static void observe(void *ud, int value, const pn_tensor *t)
{
	see(&((pn_range *)ud)[value], t);
}

/* The model's own test inputs when the record has a complete set. */
static pn_tensor **testset_inputs(const pn_graph *g, const Passnet__Model *rec, char *err)
{
	if (!rec->n_testsets || rec->testsets[0]->n_inputs != (size_t)g->n_inputs)
		return NULL;
	pn_tensor **in = calloc((size_t)g->n_inputs + 1, sizeof(void *));
	for (int i = 0; in && i < g->n_inputs; i++) {
		ProtobufCBinaryData b = rec->testsets[0]->inputs[i];
		if (pn_tensor_read_pb(b.data, b.len, g->values[g->inputs[i]].type.kind, &in[i], NULL,
				      err)) {
			for (int k = 0; k < i; k++)
				pn_tensor_free(in[k]);
			free(in);
			return NULL;
		}
	}
	return in;
}

/* Runs m once with an observer; vr[n_values] receives every value's range.
 * *inputs says what it ran on. */
static int run_model(const pn_model *m, const Passnet__Model *rec, int threads, uint64_t seed,
		     pn_range *vr, const char **inputs, char *err)
{
	const pn_graph *g = m->graph;
	pn_feed f;
	memset(&f, 0, sizeof f);
	char terr[PN_ERRLEN];
	pn_tensor **own = testset_inputs(g, rec, terr);
	*inputs = own ? "test_data_set_0" : "seeded";
	if (own) {
		f.v = f.owned = own;
		f.n = g->n_inputs;
	} else if (pn_feed_prepare(m, NULL, &m->bind, seed, &f, err)) {
		return -1;
	}
	for (int i = 0; i < f.n && i < g->n_inputs; i++)
		see(&vr[g->inputs[i]], f.v[i]);
	pn_exec_opts eo = {.seed = seed, .threads = threads, .observe = observe, .observe_ud = vr};
	int rc = pn_run_once(g, &eo, f.v, f.n, err);
	pn_feed_free(&f);
	return rc;
}

/* The float values' lo/hi of the run with the real weights that extract
 * recorded (extract/weight_scale.h) in place of this run's, so that cuts
 * are fed what the trained model computes: the regenerated weights only
 * approximate its scale.  Shapes and integer values stay this run's (the
 * real run saw the same ones at the base binding; a variant's are its
 * own). */
static int use_real_ranges(const pn_model *m, const Passnet__Model *rec, pn_range *vr)
{
	const pn_graph *g = m->graph;
	if (!rec->n_real_ranges)
		return 0;
	pn_arena a;
	pn_arena_init(&a, 0);
	pn_strmap names;
	int rc = pn_strmap_init(&names, &a, (uint32_t)g->n_values);
	for (int v = 0; !rc && v < g->n_values; v++)
		rc = pn_strmap_put(&names, g->values[v].name, v);
	for (size_t i = 0; !rc && i < rec->n_real_ranges; i++) {
		const Passnet__ValueRange *r = rec->real_ranges[i];
		int32_t v = r->name ? pn_strmap_get(&names, r->name) : -1;
		if (v < 0 || !r->has_lo || !r->has_hi)
			continue;
		vr[v].lo = r->lo;
		vr[v].hi = r->hi;
		vr[v].known = 1;
		vr[v].real = 1;
	}
	pn_arena_free(&a);
	return rc;
}

/* n ranges with nothing seen yet. */
static pn_range *unseen(int n)
{
	pn_range *r = calloc((size_t)n + 1, sizeof(pn_range));
	for (int i = 0; r && i < n; i++)
		r[i].rank = -1;
	return r;
}

/* --- its cuts ------------------------------------------------------------------------- */

/* A weight of a cut, its model's statistics under the decoded name. */
typedef struct cut_weight {
	Passnet__WeightMeta meta;   /* shallow copy: arrays stay the model record's */
	char name[16];              /* "v<canonical index>" */
} cut_weight;

typedef struct cut {
	uint8_t hash[16];
	int32_t *nodes;
	int n;
	pn_range *in;    /* per input of the decoded subgraph, after cut_ranges */
	int n_in;
	cut_weight *w;   /* its weights kept as metadata, after cut_ranges */
	int n_w;
} cut;

typedef struct cuts {
	cut *c;
	int n, cap;
	const pn_alias *alias;   /* the model's: positions -> its nodes (others skipped) */
} cuts;

/* One hashed candidate at canonical positions pos: its nodes in the model. */
static void collect_one(cuts *cs, const uint8_t hash[16], const uint32_t *pos, size_t n)
{
	int ok = n > 0;
	if (ok && cs->n == cs->cap) {
		cs->cap = cs->cap ? cs->cap * 2 : 256;
		cut *grown = realloc(cs->c, sizeof(cut) * (size_t)cs->cap);
		ok = grown != NULL;
		cs->c = grown ? grown : cs->c;
	}
	cut *x = ok ? &cs->c[cs->n] : NULL;
	if (x && (x->nodes = malloc(sizeof(int32_t) * n))) {
		if (pn_alias_nodes(cs->alias, pos, n, x->nodes)) {
			free(x->nodes);   /* a position out of range: skipped */
			return;
		}
		memcpy(x->hash, hash, 16);
		x->n = (int)n;
		x->in = NULL;
		x->n_in = 0;
		x->w = NULL;
		x->n_w = 0;
		cs->n++;
	}
}

/* A (structure, strategy) list's hashed entries, or a kept block's record. */
static int collect_cut(void *ud, pn_bytes key, pn_bytes val, const Passnet__Candidate *c)
{
	(void)val;
	cuts *cs = ud;
	if (key.len < 21 || !c)
		return 0;
	if (c->has_subgraph && c->subgraph.len == 16)
		collect_one(cs, c->subgraph.data, c->nodes, c->n_nodes);
	for (size_t i = 0; i < c->n_entries; i++) {
		const Passnet__CandidateEntry *e = c->entries[i];
		if (e->has_subgraph && e->subgraph.len == 16)
			collect_one(cs, e->subgraph.data, e->nodes, e->n_nodes);
	}
	return 0;
}

/* The statistics of x's weights kept as metadata (by_value: the model
 * record's WeightMeta of each value, or NULL), named as the decoder names
 * them. */
static void cut_weights(const pn_form *f, const Passnet__WeightMeta *const *by_value, cut *x)
{
	for (int j = 0; j < f->n_consts; j++) {
		const Passnet__WeightMeta *wm = by_value[f->const_values[j]];
		if (!wm)
			continue;
		if (!x->w && !(x->w = calloc((size_t)f->n_consts, sizeof(cut_weight))))
			return;
		cut_weight *cw = &x->w[x->n_w++];
		cw->meta = *wm;
		snprintf(cw->name, sizeof cw->name, "v%d", f->const_slots[j]);
		cw->meta.name = cw->name;
		cw->meta.n_dims = 0;   /* the canonical form states them */
		cw->meta.dims = NULL;
	}
}

/* The ranges of x's inputs and the statistics of its weights, through the
 * form that maps them to m's values.  A form that no longer hashes to the
 * stored subgraph adds nothing. */
static void cut_ranges(const pn_model *m, const pn_infer_result *r, const pn_range *vr,
		       const Passnet__WeightMeta *const *by_value, cut *x)
{
	pn_form f;
	char err[PN_ERRLEN];
	if (pn_form_of_cut(m->graph, r, x->nodes, x->n, &f, err))
		return;
	if (!memcmp(f.hash.b, x->hash, 16) && (x->in = calloc((size_t)f.n_inputs + 1, sizeof(pn_range)))) {
		x->n_in = f.n_inputs;
		for (int i = 0; i < f.n_inputs; i++)
			x->in[i] = vr[f.input_values[i]];
		cut_weights(&f, by_value, x);
	}
	pn_form_free(&f);
}

/* The record's WeightMeta of each of m's values kept as metadata (NULL
 * elsewhere), by name: malloc'd, n_values entries. */
static const Passnet__WeightMeta **weights_by_value(const pn_model *m, const Passnet__Model *rec)
{
	const pn_graph *g = m->graph;
	const Passnet__WeightMeta **by = calloc((size_t)g->n_values + 1, sizeof(void *));
	pn_arena a;
	pn_strmap names;
	pn_arena_init(&a, 0);
	if (by && !pn_strmap_init(&names, &a, (uint32_t)rec->n_weights)) {
		for (size_t i = 0; i < rec->n_weights; i++)
			if (rec->weights[i]->name)
				pn_strmap_put(&names, rec->weights[i]->name, (int32_t)i);
		for (int v = 0; v < g->n_values; v++) {
			int32_t i = g->values[v].meta ? pn_strmap_get(&names, g->values[v].name) : -1;
			by[v] = i >= 0 ? rec->weights[i] : NULL;
		}
	}
	pn_arena_free(&a);
	return by;
}

static void free_cuts(cuts *cs)
{
	for (int i = 0; i < cs->n; i++) {
		free(cs->c[i].nodes);
		free(cs->c[i].in);
		free(cs->c[i].w);
	}
	free(cs->c);
}

/* --- merging into the store ----------------------------------------------------------- */

static int put_ranges(pn_writer *w, const uint8_t hash[16], const pn_range *r, int n,
		      const uint8_t from[16], Passnet__WeightMeta **weights, size_t n_weights,
		      char *err)
{
	Passnet__InputRanges rec;
	passnet__input_ranges__init(&rec);
	rec.has_version = 1;
	rec.version = PN_SCHEMA_VERSION;
	size_t cap = (size_t)n + 1, nd = 0, ni = 0;
	double *lo = malloc(sizeof(double) * cap), *hi = malloc(sizeof(double) * cap);
	protobuf_c_boolean *known = malloc(sizeof(protobuf_c_boolean) * cap);
	protobuf_c_boolean *real = malloc(sizeof(protobuf_c_boolean) * cap);
	int32_t *rank = malloc(sizeof(int32_t) * cap), *counts = malloc(sizeof(int32_t) * cap);
	int64_t *dims = malloc(sizeof(int64_t) * cap * PN_MAX_RANK);
	int64_t *ints = malloc(sizeof(int64_t) * cap * PN_SEEN_INTS);
	int rc = lo && hi && known && real && rank && counts && dims && ints ? 0
		 : pn_fail(err, "out of memory");
	for (int i = 0; !rc && i < n; i++) {
		lo[i] = r[i].known ? r[i].lo : 0;
		hi[i] = r[i].known ? r[i].hi : 0;
		known[i] = r[i].known;
		real[i] = r[i].known && r[i].real;
		rank[i] = r[i].rank;
		for (int d = 0; d < r[i].rank; d++)
			dims[nd++] = r[i].dims[d];
		counts[i] = r[i].n_ints;
		for (int k = 0; k < r[i].n_ints; k++)
			ints[ni++] = r[i].ints[k];
	}
	rec.n_lo = rec.n_hi = rec.n_known = rec.n_rank = (size_t)n;
	rec.lo = lo;
	rec.hi = hi;
	rec.known = known;
	rec.n_real_run = (size_t)n;
	rec.real_run = real;
	rec.rank = rank;
	rec.n_dims = nd;
	rec.dims = dims;
	rec.n_int_counts = (size_t)n;
	rec.int_counts = counts;
	rec.n_int_values = ni;
	rec.int_values = ints;
	rec.has_shapes_from = 1;
	rec.shapes_from.data = (uint8_t *)from;
	rec.shapes_from.len = 16;
	rec.n_weights = n_weights;
	rec.weights = weights;
	if (!rc)
		rc = pn_put_msg(w, PN_T_RANGES, hash, 16, &rec.base, err);
	free(lo);
	free(hi);
	free(known);
	free(real);
	free(rank);
	free(counts);
	free(dims);
	free(ints);
	return rc;
}

/* A union is from the real run when every range in it is. */
static void union_into(pn_range *acc, const pn_range *add)
{
	if (!add->known)
		return;
	if (!acc->known) {
		acc->lo = add->lo;
		acc->hi = add->hi;
		acc->known = 1;
		acc->real = add->real;
		return;
	}
	acc->real = acc->real && add->real;
	acc->lo = add->lo < acc->lo ? add->lo : acc->lo;
	acc->hi = add->hi > acc->hi ? add->hi : acc->hi;
}

/* The stored record of x's subgraph widened by x's ranges.  Shapes and
 * integer values come from one model, the least key among those seen, so
 * that they agree with each other whatever order the models came in. */
static int merge_cut(pn_writer *w, const cut *x, const uint8_t model[16], char *err)
{
	int n = x->n_in;
	pn_range *acc = calloc((size_t)n + 1, sizeof(pn_range));
	pn_range *old = calloc((size_t)n + 1, sizeof(pn_range));
	if (!acc || !old) {
		free(acc);
		free(old);
		return pn_fail(err, "out of memory");
	}
	memcpy(acc, x->in, sizeof(pn_range) * (size_t)n);
	uint8_t from[16];
	memcpy(from, model, 16);
	pn_bytes v;
	/* read through the writer, which sees this batch's puts (pn_ranges_get
	 * takes a reader) */
	Passnet__InputRanges *rec = pn_wget(w, PN_T_RANGES, x->hash, 16, &v) == 0
					    ? pn_ranges_unpack(v) : NULL;
	int theirs = 0;
	if (rec && rec->n_lo == (size_t)n && !pn_ranges_decode(rec, old)) {
		theirs = rec->has_shapes_from && rec->shapes_from.len == 16 &&
			 memcmp(rec->shapes_from.data, model, 16) < 0;
		if (theirs)
			memcpy(from, rec->shapes_from.data, 16);
		for (int i = 0; i < n; i++) {
			union_into(&acc[i], &old[i]);
			if (theirs) {
				acc[i].rank = old[i].rank;
				memcpy(acc[i].dims, old[i].dims, sizeof acc[i].dims);
				acc[i].n_ints = old[i].n_ints;
				memcpy(acc[i].ints, old[i].ints, sizeof acc[i].ints);
			}
		}
	}
	/* the weights' statistics of the same model as the shapes */
	Passnet__WeightMeta **ws = NULL;
	size_t nw = 0;
	int rc = 0;
	if (theirs) {
		ws = rec->weights;
		nw = rec->n_weights;
	} else if (x->n_w && !(ws = malloc(sizeof(void *) * (size_t)x->n_w))) {
		rc = pn_fail(err, "out of memory");
	} else {
		for (int i = 0; i < x->n_w; i++)
			ws[nw++] = &x->w[i].meta;
	}
	if (!rc)
		rc = put_ranges(w, x->hash, acc, n, from, ws, nw, err);
	if (!theirs)
		free(ws);
	pn_ranges_free(rec);
	free(acc);
	free(old);
	return rc;
}

static void marker_key(uint8_t key[17], const uint8_t model[16])
{
	pn_ranges_marker_key(key, model);
}

static int put_marker(pn_writer *w, const uint8_t model[16], const char *inputs, const char *error,
		      char *err)
{
	Passnet__RangesDone d;
	passnet__ranges_done__init(&d);
	d.has_version = 1;
	d.version = PN_SCHEMA_VERSION;
	d.inputs = (char *)inputs;
	d.error = (char *)error;
	uint8_t key[17];
	marker_key(key, model);
	return pn_put_msg(w, PN_T_RANGES, key, 17, &d.base, err);
}

/* --- the stage ----------------------------------------------------------------------- */

typedef struct todo {
	pn_rtxn *t;
	const pn_shard *shard;   /* the models this call runs */
	uint8_t (*keys)[16];
	int n, cap;
} todo;

static int plan_model(void *ud, pn_bytes key, pn_bytes val)
{
	(void)val;
	todo *td = ud;
	uint8_t mk[17];
	pn_bytes v;
	if (key.len != 16 || !pn_shard_holds(td->shard, key.data))
		return 0;
	marker_key(mk, key.data);
	if (pn_get(td->t, PN_T_RANGES, mk, 17, &v) == 0)
		return 0;
	if (td->n == td->cap) {
		td->cap = td->cap ? td->cap * 2 : 256;
		void *grown = realloc(td->keys, 16 * (size_t)td->cap);
		if (!grown)
			return -1;
		td->keys = grown;
	}
	memcpy(td->keys[td->n++], key.data, 16);
	return 0;
}

/* Loads model `key` and the cuts stored for it (reader held only here). */
static int load_model(pn_store *st, const uint8_t key[16], pn_model **m, Passnet__Model **rec,
		      cuts *cs, char *err)
{
	pn_rtxn *t;
	if (pn_rtxn_begin(st, &t, err))
		return -1;
	void *whole = NULL;
	size_t len = 0;
	int rc = pn_model_record_copy(t, key, &whole, &len) == 0 ? 0
		 : pn_fail(err, "model record vanished");
	pn_alias alias = {0};
	if (!rc) {
		int got = pn_record_alias(t, whole, len, &alias);
		rc = got < 0 ? pn_fail(err, "its alias does not decode") : 0;
		if (!rc)
			rc = pn_model_from_record(whole, len, m, rec, err);
		if (!rc && got == 0) {
			/* the cuts of its structure (store/structures.h) */
			cs->alias = &alias;
			rc = pn_candidates_foreach(t, alias.structure.b, 16, collect_cut, cs) < 0 ? -1
												   : 0;
			cs->alias = NULL;
		}
	}
	free(whole);
	pn_alias_free(&alias);
	pn_rtxn_end(t);
	return rc;
}

/* One model: run it, map its cuts, merge them.  A model that cannot run is
 * recorded with its reason and the stage goes on. */
static int one_model(pn_store *st, pn_writer *w, const uint8_t key[16], int threads, uint64_t seed,
		     pn_ranges_stats *stats, char *err)
{
	pn_model *m = NULL;
	Passnet__Model *rec = NULL;
	cuts cs = {0};
	pn_infer_result r;
	memset(&r, 0, sizeof r);
	pn_range *vr = NULL;
	const Passnet__WeightMeta **by_value = NULL;
	char why[PN_ERRLEN] = "";
	const char *inputs = "";
	int rc = 0;
	if (load_model(st, key, &m, &rec, &cs, why)) {
		if (!why[0])
			snprintf(why, sizeof why, "out of memory");
	} else if (rec->has_variant_of && !rec->variant_ran) {
		/* too big to run at ingest (extract/variants.h), too big here */
		stats->not_run++;
		rc = put_marker(w, key, "", PN_RANGES_TOO_BIG, err);
		free_cuts(&cs);
		pn_model_free(m);
		return rc;
	} else if (!(vr = unseen(m->graph->n_values)) ||
	    run_model(m, rec, threads, seed, vr, &inputs, why) || use_real_ranges(m, rec, vr) ||
	    pn_infer_graph(m->graph, &m->bind, NULL, &r, why) ||
	    !(by_value = weights_by_value(m, rec))) {
		if (!why[0])
			snprintf(why, sizeof why, "out of memory");
	} else {
		#pragma omp parallel for schedule(dynamic, 8) num_threads(threads)
		for (int i = 0; i < cs.n; i++)
			cut_ranges(m, &r, vr, by_value, &cs.c[i]);
	}
	free(by_value);
	if (why[0]) {
		char hex[33];
		pn_hex(key, 16, hex);
		pn_warn_each("ranges: model %s (%s) did not run, its subgraphs get generic inputs: %s", hex,
			rec && rec->path ? rec->path : "?", why);
		stats->failed++;
	} else {
		stats->models++;
		for (int i = 0; !rc && i < cs.n; i++)
			if (cs.c[i].in) {
				rc = merge_cut(w, &cs.c[i], key, err);
				stats->subgraphs++;
			}
	}
	if (!rc)
		rc = put_marker(w, key, inputs, why[0] ? why : NULL, err);
	if (r.v)
		pn_infer_result_free(&r);
	free(vr);
	free_cuts(&cs);
	pn_model_free(m);
	return rc;
}

int pn_ranges_stage(pn_store *st, int threads, uint64_t seed, double stop_at,
		    const pn_shard *shard, pn_ranges_stats *stats, char *err)
{
	memset(stats, 0, sizeof *stats);
	double t0 = pn_now();
	threads = pn_stage_threads(threads);
	todo td = {.shard = shard};
	if (pn_rtxn_begin(st, &td.t, err))
		return -1;
	int rc = pn_foreach(td.t, PN_T_MODELS, NULL, 0, plan_model, &td) < 0 ? pn_fail(err, "out of memory") : 0;
	pn_rtxn_end(td.t);
	pn_writer *w = NULL;
	if (!rc && td.n)
		rc = pn_writer_open(st, &w, 0, err);
	pn_progress prog;
	pn_progress_start(&prog, "ranges", (uint64_t)td.n);
	for (int i = 0; !rc && i < td.n; i++) {
		/* one model at least, so that every call gets somewhere */
		if (stop_at > 0 && i > 0 && pn_now() > stop_at) {
			stats->left = td.n - i;
			break;
		}
		rc = one_model(st, w, td.keys[i], threads, seed, stats, err);
		if (!rc)   /* one commit per model: a kill loses one model's run */
			rc = pn_writer_flush(w, err);
		pn_progress_step(&prog, (uint64_t)(i + 1), NULL);
	}
	pn_progress_end(&prog);
	if (w) {
		char cerr[PN_ERRLEN];
		if (pn_writer_close(w, rc ? cerr : err))
			rc = -1;
	}
	free(td.keys);
	stats->seconds = pn_now() - t0;
	return rc;
}

/* --- ranges still to come ------------------------------------------------------------ */

typedef struct pending_walk {
	pn_rtxn *t;
	uint8_t (*keys)[16];
	int64_t n, cap;
	int oom;
} pending_walk;

/* structures table: key = structure, value = one of its models */
static int note_pending(void *ud, pn_bytes key, pn_bytes val)
{
	pending_walk *w = ud;
	uint8_t mk[17];
	pn_bytes v;
	if (key.len != 16 || val.len != 16)
		return 0;
	if (w->n && !memcmp(w->keys[w->n - 1], key.data, 16))
		return 0;   /* already pending */
	marker_key(mk, val.data);
	if (pn_get(w->t, PN_T_RANGES, mk, 17, &v) == 0)
		return 0;
	if (w->n == w->cap) {
		int64_t cap = w->cap ? 2 * w->cap : 64;
		void *k = realloc(w->keys, 16 * (size_t)cap);
		if (!k) {
			w->oom = 1;
			return 1;
		}
		w->keys = k;
		w->cap = cap;
	}
	memcpy(w->keys[w->n++], key.data, 16);
	return 0;
}

uint8_t (*pn_ranges_pending(pn_rtxn *t, int64_t *n))[16]
{
	/* the table is walked in key order, so the keys come sorted */
	pending_walk w = {.t = t};
	pn_foreach(t, PN_T_STRUCTURES, NULL, 0, note_pending, &w);
	if (w.oom) {   /* without the list, every subgraph counts as pending */
		free(w.keys);
		*n = -1;
		return NULL;
	}
	*n = w.n;
	return w.keys;
}

static int key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, 16);
}

typedef struct pending_in {
	uint8_t (*keys)[16];
	int64_t n;
} pending_in;

static int occurs_in_pending(void *ud, pn_bytes key, pn_bytes val, const Passnet__Occurrence *o)
{
	(void)key;
	(void)val;
	pending_in *p = ud;
	const uint8_t *s = pn_occurrence_structure(o);
	return s && bsearch(s, p->keys, (size_t)p->n, 16, key_cmp) != NULL;
}

int pn_ranges_pending_in(pn_rtxn *t, const uint8_t hash[16], uint8_t (*pending)[16], int64_t n)
{
	if (n < 0)
		return 1;
	if (!n)
		return 0;
	pending_in p = {pending, n};
	return pn_occurrences_foreach(t, hash, 16, occurs_in_pending, &p) == 1;
}
