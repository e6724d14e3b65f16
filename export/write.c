/*
 * write.c - the export directory (see export.h for the layout).
 */
#include "export/write.h"

#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <xxhash.h>

#include "common/err.h"
#include "common/util.h"
#include "runtime/session.h"
#include "runtime/feed.h"
#include "runtime/compare.h"
#include "export/dtype.h"
#include "export/export.h"
#include "export/left_out.h"
#include "model/onnx.h"
#include "passnet.pb-c.h"
#include "store/structures.h"
#include "store/subgraphs.h"
#include "store/tables.h"

static const char *const split_names[3] = {"train", "val", "test"};

/* Task folders: rwxr-xr-x (before the umask), as they always were. */
#define DIR_MODE 0755

static void task_id(const pn_task *t, int rank, char *out, size_t cap)
{
	char hex[33];
	pn_hex(t->pattern, 16, hex);
	snprintf(out, cap, "t%04d-%.12s", rank + 1, hex);
}

static void variant_name(const pn_variant *v, int i, int dtype, char *out, size_t cap)
{
	char hex[33];
	pn_hex(v->hash, 16, hex);
	snprintf(out, cap, "v%02d-%.12s%s%s", i + 1, hex, dtype == PN_FLOAT ? "" : "-",
		 pn_dtype_suffix(dtype));
}

/* --- which variants a task gets (the rule is in export.h) -------------------------------- */

typedef struct planned {
	int v;       /* index in the task's float32 variants */
	int dtype;   /* PN_FLOAT: the stored subgraph; else its dtype variant */
} planned;

static const int dtype_variants[2] = {PN_FLOAT16, PN_BFLOAT16};

/* Whether the rule makes a dtype variant of the task's smallest subgraph. */
static int dtype_possible(pn_store *st, const pn_task *t, int dtype, uint64_t seed)
{
	char err[PN_ERRLEN];
	size_t len = 0;
	uint8_t *canon = pn_subgraph_canonical(st, t->v[0].hash, &len, err);
	pn_subgraph_weights ws;
	pn_read_subgraph_weights(st, t->v[0].hash, &ws);
	int rc = canon ? pn_export_subgraph_onnx_as(canon, len, &ws, seed, dtype, NULL, err) : -1;
	pn_subgraph_weights_free(&ws);
	free(canon);
	return rc == 0;
}

/* The variants to write, in order of size (each float32 subgraph followed
 * by its dtype variants); returns how many (at most budget). */
static int plan_variants(pn_store *st, const pn_task *t, int budget, uint64_t seed, planned *out)
{
	int dts[2], k = 0;
	for (int i = 0; i < 2; i++)
		if (dtype_possible(st, t, dtype_variants[i], seed))
			dts[k++] = dtype_variants[i];
	int n = t->n_variants;
	int shapes = (budget + k) / (k + 1);   /* ceil(budget / (1 + k)) */
	if (shapes > n)
		shapes = n;
	int m = 0;
	for (int i = 0; i < shapes && m < budget; i++) {
		int v = shapes > 1 ? (int)lround((double)i * (n - 1) / (shapes - 1)) : 0;
		out[m++] = (planned){v, PN_FLOAT};
		for (int j = 0; j < k && m < budget; j++)
			out[m++] = (planned){v, dts[j]};
	}
	return m;
}

/* The precision a variant computes in, for task.json: its dtype, or for a
 * stored subgraph "float32" if it has a float32 tensor, else the dtype of
 * its first output. */
static const char *variant_dtype(const pn_graph *g, int dtype)
{
	if (dtype != PN_FLOAT)
		return pn_dtype_name(dtype);
	for (int v = 0; v < g->n_values; v++)
		if (g->values[v].type.kind == PN_KIND_TENSOR && g->values[v].type.dtype == PN_FLOAT)
			return pn_dtype_name(PN_FLOAT);
	return pn_dtype_name(g->n_outputs ? g->values[g->outputs[0]].type.dtype : PN_FLOAT);
}

/* --- one variant: model.onnx and its test set ------------------------------------------ */

/* Which output elements of a float32 variant are finite, kept for the
 * dtype variants of the same subgraph that follow it. */
typedef struct finite_ref {
	int v;              /* float32 variant (index in the task), -1: none */
	int n;
	int64_t *numel;
	uint8_t **finite;
} finite_ref;

static void finite_ref_clear(finite_ref *r)
{
	for (int i = 0; i < r->n; i++)
		free(r->finite[i]);
	free(r->finite);
	free(r->numel);
	memset(r, 0, sizeof(*r));
	r->v = -1;
}

static int is_float_tensor(const pn_tensor *t)
{
	return t && t->kind == PN_KIND_TENSOR && pn_dtype_is_float(t->dtype);
}

static void finite_ref_keep(finite_ref *r, int v, pn_tensor *const *out, int n)
{
	finite_ref_clear(r);
	r->numel = calloc((size_t)n + 1, sizeof(int64_t));
	r->finite = calloc((size_t)n + 1, sizeof(uint8_t *));
	if (!r->numel || !r->finite)
		return finite_ref_clear(r);
	r->v = v;
	r->n = n;
	for (int i = 0; i < n; i++) {
		if (!is_float_tensor(out[i]) || !(r->finite[i] = malloc((size_t)out[i]->numel + 1)))
			continue;
		r->numel[i] = out[i]->numel;
		for (int64_t k = 0; k < out[i]->numel; k++)
			r->finite[i][k] = (uint8_t)isfinite(pn_tensor_get_f64(out[i], k));
	}
}

/* A dtype variant whose values leave the narrow range (float16 tops out at
 * 65504) is not the same computation: an output element finite in float32
 * (or, with no float32 run to go by, any element) must stay finite. */
static int overflows(const finite_ref *r, int v, pn_tensor *const *out, int n, char *err)
{
	int have = r->v == v && r->n == n;
	for (int i = 0; i < n; i++) {
		if (!is_float_tensor(out[i]))
			continue;
		const uint8_t *ok = have && r->numel[i] == out[i]->numel ? r->finite[i] : NULL;
		for (int64_t k = 0; k < out[i]->numel; k++)
			if ((!ok || ok[k]) && !isfinite(pn_tensor_get_f64(out[i], k)))
				return pn_fail(err, "output %d overflows %s (element %lld)", i,
					       pn_dtype_name(out[i]->dtype), (long long)k);
	}
	return 0;
}

/* --- outputs that follow the inputs ------------------------------------------------------ */

/* Draws of a variant's inputs its outputs are tried on, the exported one
 * first.  `passnet check` draws up to 8 sets (judge/check.c MORE_SETS) and
 * takes a reference whose outputs keep their bits on all of them as
 * constant, which a candidate may then hold.  A variant whose outputs are
 * mostly one value (a QuantizeLinear over inputs a step wide, a comparison
 * giving one bool) would let constants pass such a check now and then, so
 * export wants the outputs of every two draws with different inputs to
 * differ, not only the exported draw's from the others (unless one output
 * changes widely, changed_widely below: most variants, at one other
 * draw). */
#define DRAWS 8

/* Seed of the j-th other draw: never the export seed, and not the check's
 * (`passnet check` draws from a seed of its own, judge/check.h). */
static uint64_t other_draw_seed(uint64_t seed, int j)
{
	char text[64];
	int n = snprintf(text, sizeof text, "passnet-export-other-draw/%llu/%d",
			 (unsigned long long)seed, j);
	return XXH64(text, (size_t)n, 0);
}

static void free_tensors(pn_tensor **t, int n)
{
	for (int i = 0; t && i < n; i++) {
		pn_tensor_free(t[i]);
		t[i] = NULL;
	}
}

/* Whether tensors a[0..n) and b[0..n) have the same bits. */
static int same_tensors(pn_tensor *const *a, pn_tensor *const *b, int n)
{
	for (int i = 0; i < n; i++)
		if (!pn_tensor_same_bits(a[i], b[i]))
			return 0;
	return 1;
}

/* An output that tells draws apart by itself: at least WIDE_MIN elements,
 * at least WIDE_DISTINCT distinct values among its first WIDE_SAMPLE, and
 * half of them changed from one draw to the next.  Such an output takes
 * no one value often, so one other draw shows what all eight would; a
 * mostly constant output (a conv of inputs quantized to 0 but for a
 * step here and there: a few elements change) or a broadcast flag (one
 * value in many elements) needs the pairwise test. */
#define WIDE_MIN 64
#define WIDE_DISTINCT 16
#define WIDE_SAMPLE 256

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int changed_widely(const pn_tensor *a, const pn_tensor *b)
{
	size_t es = pn_dtype_size(b->dtype);
	if (a->kind != PN_KIND_TENSOR || b->kind != PN_KIND_TENSOR || a->none || b->none ||
	    b->dtype == PN_STRING || !es || es > 8 || a->dtype != b->dtype ||
	    a->numel != b->numel || b->numel < WIDE_MIN)
		return 0;
	const uint8_t *x = a->data, *y = b->data;
	int64_t changed = 0;
	for (int64_t i = 0; i < b->numel; i++)
		changed += memcmp(x + i * es, y + i * es, es) != 0;
	if (2 * changed < b->numel)
		return 0;
	uint64_t v[WIDE_SAMPLE];
	int n = b->numel < WIDE_SAMPLE ? (int)b->numel : WIDE_SAMPLE, distinct = 0;
	for (int i = 0; i < n; i++) {
		v[i] = 0;
		memcpy(&v[i], y + (size_t)i * es, es);
	}
	qsort(v, (size_t)n, sizeof v[0], cmp_u64);
	for (int i = 0; i < n; i++)
		distinct += !i || v[i] != v[i - 1];
	return distinct >= WIDE_DISTINCT;
}

/* Draw j (1..DRAWS-1) of the inputs and the outputs they give, into
 * in[j * n_in ...] and out[j * n_out ...]. */
static int run_other_draw(const pn_graph *g, const pn_type *types, const pn_range *ranges,
			  int n_ranges, uint64_t seed, int j, pn_session *s, pn_tensor **in,
			  pn_tensor **out, char *err)
{
	uint64_t sj = other_draw_seed(seed, j - 1);
	pn_tensor **din = in + (size_t)j * g->n_inputs;
	for (int i = 0; i < g->n_inputs; i++) {
		const pn_range *r = n_ranges == g->n_inputs ? &ranges[i] : NULL;
		din[i] = pn_input_for(g, i, &types[i], sj, r, err);
		if (!din[i])
			return -1;
	}
	return pn_session_run(s, din, g->n_inputs, out + (size_t)j * g->n_outputs, err);
}

/*
 * A task measures computation only if its outputs depend on inputs that
 * `passnet check` draws afresh: a variant whose inputs are all pinned (a
 * shape or count fed as the model had it, an index fed as 0) or whose
 * outputs keep the same bits on two draws of different inputs could be
 * passed by a candidate made of constants.  Returns 0, or -1 with the
 * reason such a variant is left out.  in/out: the exported test set's
 * inputs and outputs (draw 0).
 */
static int outputs_follow_draws(const pn_graph *g, const pn_type *types, const pn_range *ranges,
				int n_ranges, uint64_t seed, pn_session *s, pn_tensor *const *in,
				pn_tensor *const *out, char *err)
{
	int n_in = g->n_inputs, n_out = g->n_outputs;
	pn_tensor **din = calloc((size_t)DRAWS * n_in + 1, sizeof(void *));
	pn_tensor **dout = calloc((size_t)DRAWS * n_out + 1, sizeof(void *));
	int rc = din && dout ? 0 : pn_fail(err, "out of memory"), wide = 0, last = DRAWS;
	for (int j = 1; !rc && j < last; j++) {
		rc = run_other_draw(g, types, ranges, n_ranges, seed, j, s, din, dout, err);
		for (int k = 0; !rc && j == 1 && k < n_out && !wide; k++)
			wide = changed_widely(out[k], dout[n_out + k]);
		last = wide ? 2 : DRAWS;   /* draws 0 and 1 settle it */
	}
	int drawn = 0, kept_a = -1, kept_b = -1;
	for (int b = 1; !rc && b < last && kept_a < 0; b++)
		for (int a = 0; a < b && kept_a < 0; a++) {
			pn_tensor *const *ia = a ? din + (size_t)a * n_in : in;
			pn_tensor *const *oa = a ? dout + (size_t)a * n_out : out;
			if (same_tensors(ia, din + (size_t)b * n_in, n_in))
				continue;
			drawn = 1;
			if (same_tensors(oa, dout + (size_t)b * n_out, n_out))
				kept_a = a, kept_b = b;
		}
	free_tensors(din, DRAWS * n_in);
	free_tensors(dout, DRAWS * n_out);
	free(din);
	free(dout);
	if (!rc && !drawn)
		rc = pn_fail(err, "every input is pinned (fed as the model had it, not drawn), so "
			     "its outputs never change and constants could pass it");
	else if (!rc && kept_a >= 0)
		rc = pn_fail(err, "its outputs keep the same bits on draws %d and %d of %d draws of "
			     "its inputs (they do not follow the values drawn), so constants could "
			     "pass it", kept_a, kept_b, DRAWS);
	return rc;
}

/* Runs the model.onnx just written (the very file users get) on seeded
 * inputs and writes both into test_data_set_0, unless its outputs do not
 * follow its inputs (outputs_follow_draws). */
static int write_test_set(const char *vdir, const pn_range *ranges, int n_ranges,
			  const pn_export_opts *o, int v, int dtype, finite_ref *ref, char *err)
{
	pn_model *m = NULL;
	char set[4200];
	snprintf(set, sizeof set, "%s/test_data_set_0", vdir);
	if (pn_mkdirs(set, DIR_MODE, err) || pn_model_load_path(vdir, 0, &m, err))
		return -1;
	const pn_graph *g = m->graph;
	pn_tensor **in = calloc((size_t)g->n_inputs + 1, sizeof(void *));
	pn_tensor **out = calloc((size_t)g->n_outputs + 1, sizeof(void *));
	pn_session *s = NULL;
	pn_exec_opts eo = {.seed = o->seed, .threads = o->threads};
	pn_type *types = calloc((size_t)g->n_inputs + 1, sizeof(pn_type));
	int rc = in && out && types ? 0 : pn_fail(err, "out of memory");
	int64_t assumed;
	if (!rc && pn_concrete_input_types(g, ranges, n_ranges, types, &assumed, err) < 0)   /* as the profiler ran it */
		rc = -1;
	for (int i = 0; !rc && i < g->n_inputs; i++) {
		const pn_range *r = n_ranges == g->n_inputs ? &ranges[i] : NULL;
		in[i] = pn_input_for(g, i, &types[i], o->seed, r, err);
		rc = in[i] ? 0 : -1;
	}
	/* The same files `passnet run --write-inputs` and `--outputs` write. */
	if (!rc)
		rc = pn_write_pb_files(set, "input", g, g->inputs, in, g->n_inputs, err);
	if (!rc)
		rc = pn_session_new(g, &eo, &s, err);
	if (!rc)
		rc = pn_session_run(s, in, g->n_inputs, out, err);
	if (!rc && dtype != PN_FLOAT)
		rc = overflows(ref, v, out, g->n_outputs, err);
	else if (!rc)
		finite_ref_keep(ref, v, out, g->n_outputs);
	if (!rc)
		rc = outputs_follow_draws(g, types, ranges, n_ranges, o->seed, s, in, out, err);
	if (!rc)
		rc = pn_write_pb_files(set, "output", g, g->outputs, out, g->n_outputs, err);
	for (int i = 0; in && i < g->n_inputs; i++)
		pn_tensor_free(in[i]);
	for (int i = 0; out && i < g->n_outputs; i++)
		pn_tensor_free(out[i]);
	free(in);
	free(out);
	free(types);
	pn_session_free(s);
	pn_model_free(m);
	return rc;
}

/* --- task.json ------------------------------------------------------------------------------ */

/* Values as a list of {name, dtype, shape[, range][, values]}: range is
 * [lo, hi] for a float input whose models showed its values (what `check`
 * draws in), values those of a small integer input (a shape computed
 * upstream, which `check` feeds as it is). */
static void json_type_list(FILE *f, const pn_graph *g, const int32_t *ids, int n,
			   const pn_range *ranges, int n_ranges)
{
	fputc('[', f);
	for (int i = 0; i < n; i++) {
		const pn_value *v = &g->values[ids[i]];
		fprintf(f, "%s{\"name\":", i ? "," : "");
		pn_json_str(f, v->name);
		fprintf(f, ",\"dtype\":\"%s\",\"shape\":[", pn_dtype_name(v->type.dtype));
		for (int d = 0; d < v->type.rank; d++)
			fprintf(f, d ? ",%lld" : "%lld", (long long)v->type.dims[d]);
		fputc(']', f);
		if (n_ranges == n && ranges[i].known && pn_dtype_is_float(v->type.dtype))
			fprintf(f, ",\"range\":[%.17g,%.17g]", ranges[i].lo, ranges[i].hi);
		if (n_ranges == n && ranges[i].n_ints && pn_dtype_is_int(v->type.dtype)) {
			fprintf(f, ",\"values\":[");
			for (int k = 0; k < ranges[i].n_ints; k++)
				fprintf(f, k ? ",%lld" : "%lld", (long long)ranges[i].ints[k]);
			fputc(']', f);
		}
		fputc('}', f);
	}
	fputc(']', f);
}

typedef struct prov_model {
	uint8_t key[16];
	char *binding;
} prov_model;

typedef struct prov_walk {
	prov_model *m;
	int n, cap;
	int64_t occurrences;
} prov_walk;

/* Collects each model the subgraph was found in, with the binding it was
 * cut at (a shape variant is a model of its own). */
static int collect_provenance(void *ud, const uint8_t hash[16], const Passnet__Occurrence *o,
			      const uint8_t model[16])
{
	(void)hash;
	prov_walk *w = ud;
	w->occurrences++;
	if (w->n && !memcmp(w->m[w->n - 1].key, model, 16))
		return 0;   /* a model's occurrences come together */
	if (w->n == w->cap) {
		prov_model *m = realloc(w->m, sizeof(*m) * (size_t)(w->cap ? 2 * w->cap : 16));
		if (!m)
			return 0;
		w->m = m;
		w->cap = w->cap ? 2 * w->cap : 16;
	}
	memcpy(w->m[w->n].key, model, 16);
	w->m[w->n].binding = strdup(o->binding ? o->binding : "");
	w->n++;
	return 0;
}

static int prov_cmp(const void *a, const void *b)
{
	return memcmp(((const prov_model *)a)->key, ((const prov_model *)b)->key, 16);
}

/* The models, in key order, once each, with source, path and binding (a
 * model's occurrences all have its binding). */
static void print_provenance(FILE *f, pn_rtxn *t, prov_walk *w)
{
	qsort(w->m, (size_t)w->n, sizeof(*w->m), prov_cmp);
	int printed = 0;
	for (int i = 0; i < w->n; i++) {
		Passnet__Model *m;
		if (i && !memcmp(w->m[i - 1].key, w->m[i].key, 16)) {   /* once each */
			free(w->m[i].binding);
			continue;
		}
		pn_models_get(t, w->m[i].key, 16, &m);
		if (m) {
			fprintf(f, "%s{\"source\":", printed++ ? "," : "");
			pn_json_str(f, m->source);
			fprintf(f, ",\"path\":");
			pn_json_str(f, m->path);
			fprintf(f, ",\"binding\":");
			pn_json_str(f, w->m[i].binding ? w->m[i].binding : "");
			fputc('}', f);
		}
		pn_models_free(m);
		free(w->m[i].binding);
	}
	free(w->m);
}

/* The binding of the subgraph's first occurrence (the least in the
 * occurrences table's order), copied into buf; "" when it binds nothing. */
static int first_binding(void *ud, pn_bytes key, pn_bytes val, const Passnet__Occurrence *o)
{
	(void)key;
	(void)val;
	char *buf = ud;
	if (o && o->binding)
		snprintf(buf, 256, "%s", o->binding);
	return 1;
}

static void json_variant(FILE *f, pn_rtxn *t, const pn_variant *v, const char *name, const pn_graph *g,
			 int dtype, const pn_range *ranges, int n_ranges)
{
	char hex[33], binding[256] = "";
	pn_hex(v->hash, 16, hex);
	pn_occurrences_foreach(t, v->hash, 16, first_binding, binding);
	fprintf(f, "    {\"name\":\"%s\",\"hash\":\"%s\",\"dtype\":\"%s\",\"binding\":", name, hex,
		variant_dtype(g, dtype));
	pn_json_str(f, binding);
	fprintf(f, ",\"inputs\":");
	json_type_list(f, g, g->inputs, g->n_inputs, ranges, n_ranges);
	fprintf(f, ",\"outputs\":");
	json_type_list(f, g, g->outputs, g->n_outputs, NULL, 0);
	fprintf(f, ",\"flops\":%.17g,\"bytes_fused\":%.17g,\"bytes_unfused\":%.17g,"
		   "\"baseline_us\":%.17g,\"baseline_threads\":%u,\"bound_fused_us\":%.17g,",
		v->flops, v->bytes_fused, v->bytes_unfused, v->median_us, v->threads, v->bound_fused_us);
	if (v->ort_status[0]) {
		/* ONNX Runtime on the float32 subgraph, 1 thread (passnet baseline) */
		fprintf(f, "\"ort\":{\"version\":\"%s\",\"status\":\"%s\"", v->ort_version, v->ort_status);
		if (!strcmp(v->ort_status, "ok"))
			fprintf(f, ",\"dtype\":\"float32\",\"threads\":1,\"median_all_us\":%.17g,"
				   "\"median_disabled_us\":%.17g", v->ort_all_us, v->ort_disabled_us);
		fprintf(f, "},");
	}
	prov_walk w = {0};
	fprintf(f, "\"models\":[");
	pn_foreach_occurrence(t, v->hash, collect_provenance, &w);
	print_provenance(f, t, &w);
	fprintf(f, "],\"occurrences\":%lld}", (long long)w.occurrences);
}

/* Flags every variant of the task has. */
static void json_shared_flags(FILE *f, const pn_task *t)
{
	fputc('[', f);
	int first = 1;
	for (int i = 0; t->n_variants && i < t->v[0].n_flags; i++) {
		const char *flag = t->v[0].flags[i];
		int all = 1;
		for (int k = 1; k < t->n_variants && all; k++) {
			all = 0;
			for (int j = 0; j < t->v[k].n_flags; j++)
				all |= !strcmp(t->v[k].flags[j], flag);
		}
		if (all) {
			fprintf(f, "%s\"%s\"", first ? "" : ",", flag);
			first = 0;
		}
	}
	fputc(']', f);
}

static void json_tolerances(FILE *f)
{
	fprintf(f, "  \"tolerance\": {\"levels\":\"t = -10..4\","
		   "\"float32\":{\"rtol\":\"10^(5.886t/5)\",\"atol\":\"10^t\"},"
		   "\"float16\":{\"rtol\":\"10^(3t/5)\",\"atol\":\"10^t\"},"
		   "\"bfloat16\":{\"rtol\":\"10^(1.796t/5)\",\"atol\":\"10^t\"},"
		   "\"float64\":{\"rtol\":\"10^(7t/5)\",\"atol\":\"10^(7t/5)\"}},\n");
}

/* Removes a variant folder that could not be completed (model.onnx and
 * test_data_set_0/ with its .pb files: all that write_task puts there). */
static int unlink_file(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb, (void)type, (void)ftw;
	return remove(path);
}

static void remove_tree(const char *dir)
{
	nftw(dir, unlink_file, 8, FTW_DEPTH | FTW_PHYS);
}

/* One entry of task.json's "left_out": a planned variant that was not
 * written, and why. */
static void note_left_out(FILE *nf, const char *name, const char *reason)
{
	if (!nf)
		return;
	if (ftell(nf) > 0)
		fputs(",\n", nf);
	fprintf(nf, "    {\"name\":");
	pn_json_str(nf, name);
	fprintf(nf, ",\"reason\":");
	pn_json_str(nf, reason);
	fputc('}', nf);
}

/*
 * Writes one task; *written gets the number of its variants written.  A
 * variant that cannot be written (its reference run fails, say) is left
 * out, named in task.json's notes and in left_out.tsv (lo; a warning line
 * under -v), and the others go on; err is set only for
 * what stops the whole export (the task's own folder or file).
 */
static int write_task(pn_store *st, const pn_task *t, int rank, const pn_export_opts *o,
		      int *written, int *left_out, FILE *lo, char *err)
{
	char id[64], tdir[4096];
	task_id(t, rank, id, sizeof id);
	snprintf(tdir, sizeof tdir, "%s/tasks/%s", o->out, id);
	if (pn_mkdirs(tdir, DIR_MODE, err))
		return -1;
	char path[4200];
	snprintf(path, sizeof path, "%s/task.json", tdir);
	FILE *f = fopen(path, "w");
	if (!f)
		return pn_fail(err, "%s: %s", path, strerror(errno));
	char hex[33];
	pn_hex(t->pattern, 16, hex);
	fprintf(f, "{\n  \"task\": \"%s\",\n  \"pattern\": \"%s\",\n  \"split\": \"%s\",\n  \"ops\": [",
		id, hex, split_names[t->split]);
	for (int i = 0; i < t->n_ops; i++)
		fprintf(f, "%s\"%s\"", i ? "," : "", t->ops[i]);
	fprintf(f, "],\n  \"flags\": ");
	json_shared_flags(f, t);
	fprintf(f, ",\n  \"seed\": %llu,\n  \"check_seed_rule\": ", (unsigned long long)o->seed);
	pn_json_str(f, PN_CHECK_SEED_RULE);
	fprintf(f, ",\n");
	json_tolerances(f);
	fprintf(f, "  \"variants\": [\n");
	pn_rtxn *txn = NULL;
	int rc = 0;
	*written = 0;
	int budget = o->max_variants > 0 ? o->max_variants : 10;
	planned *plan = malloc(sizeof(planned) * (size_t)budget);
	int n_plan = plan ? plan_variants(st, t, budget, o->seed, plan) : 0;
	finite_ref ref = {.v = -1};
	char *notes = NULL;   /* the "left_out" list of task.json */
	size_t notes_len = 0;
	FILE *nf = open_memstream(&notes, &notes_len);
	for (int p = 0; p < n_plan; p++) {
		const pn_variant *var = &t->v[plan[p].v];
		int dtype = plan[p].dtype;
		char vname[64], vdir[4200], model[4300], verr[PN_ERRLEN] = "";
		variant_name(var, p, dtype, vname, sizeof vname);
		snprintf(vdir, sizeof vdir, "%s/%s", tdir, vname);
		snprintf(model, sizeof model, "%s/model.onnx", vdir);
		size_t len = 0;
		uint8_t *canon = NULL;
		int n_ranges = 0;
		pn_range *ranges = pn_subgraph_ranges(st, var->hash, &n_ranges);
		int vrc = pn_mkdirs(vdir, DIR_MODE, verr);
		if (!vrc && !(canon = pn_subgraph_canonical(st, var->hash, &len, verr)))
			vrc = -1;
		pn_subgraph_weights ws;
		pn_read_subgraph_weights(st, var->hash, &ws);
		if (!vrc)
			vrc = pn_export_subgraph_onnx_as(canon, len, &ws, o->seed, dtype, model, verr);
		pn_subgraph_weights_free(&ws);
		free(canon);
		if (!vrc)
			vrc = write_test_set(vdir, ranges, n_ranges, o, plan[p].v, dtype, &ref, verr);
		pn_model *m = NULL;
		if (!vrc)
			vrc = pn_model_load_path(vdir, 0, &m, verr);
		if (!vrc && !(rc = pn_rtxn_begin(st, &txn, err))) {
			fprintf(f, "%s", *written ? ",\n" : "");
			json_variant(f, txn, var, vname, m->graph, dtype, ranges, n_ranges);
			pn_rtxn_end(txn);
			(*written)++;
		} else if (vrc) {
			/* a dtype variant the rule does not make (1) is no loss to report */
			if (vrc < 0 && ++*left_out) {
				pn_warn_each("export: task %s variant %s left out: %s", id, vname, verr);
				note_left_out(nf, vname, verr);
				pn_left_out_line(lo, id, vname, verr);
			}
			remove_tree(vdir);
		}
		pn_model_free(m);
		free(ranges);
		if (rc)
			break;
	}
	free(plan);
	finite_ref_clear(&ref);
	fprintf(f, "%s", *written ? "\n" : "");
	fprintf(f, "  ]");
	if (nf && !fclose(nf) && notes_len)
		fprintf(f, ",\n  \"left_out\": [\n%s\n  ]", notes);
	free(notes);
	fprintf(f, "\n}\n");
	if (fclose(f) && !rc)
		rc = pn_fail(err, "%s: write error", path);
	if (!rc && !*written)
		remove_tree(tdir);
	if (rc)
		pn_errprefix(err, "task %s", id);
	return rc;
}

/* --- splits ------------------------------------------------------------------------------- */

static int write_splits(const pn_selection *sel, const int *written, const char *dir, char *err)
{
	char sdir[4096];
	snprintf(sdir, sizeof sdir, "%s/splits", dir);
	if (pn_mkdirs(sdir, DIR_MODE, err))
		return -1;
	for (int sp = 0; sp < 3; sp++) {
		char path[4200];
		snprintf(path, sizeof path, "%s/%s.csv", sdir, split_names[sp]);
		FILE *f = fopen(path, "w");
		if (!f)
			return pn_fail(err, "%s: %s", path, strerror(errno));
		fprintf(f, "task_id,pattern,variants,ops,flags\n");
		for (int i = 0; i < sel->n; i++) {
			const pn_task *t = &sel->tasks[i];
			if (t->split != sp || !written[i])
				continue;
			char id[64], hex[33];
			task_id(t, i, id, sizeof id);
			pn_hex(t->pattern, 16, hex);
			fprintf(f, "%s,%s,%d,", id, hex, written[i]);
			for (int k = 0; k < t->n_ops; k++)
				fprintf(f, "%s%s", k ? " " : "", t->ops[k]);
			fputc(',', f);
			for (int k = 0; t->n_variants && k < t->v[0].n_flags; k++)
				fprintf(f, "%s%s", k ? " " : "", t->v[0].flags[k]);
			fputc('\n', f);
		}
		if (fclose(f))
			return pn_fail(err, "%s: write error", path);
	}
	return 0;
}

int pn_write_export(pn_store *st, const pn_selection *sel, const pn_export_opts *o, int *written,
		    int *left_out, char *err)
{
	struct stat sb;
	if (!stat(o->out, &sb)) {
		char probe[4200];
		snprintf(probe, sizeof probe, "%s/MANIFEST.tsv", o->out);
		if (!stat(probe, &sb))
			return pn_fail(err, "%s already holds an export (remove it first)", o->out);
	}
	if (pn_mkdirs(o->out, DIR_MODE, err))
		return -1;
	*left_out = 0;
	char lo_path[4200];
	snprintf(lo_path, sizeof lo_path, "%s/%s", o->out, PN_LEFT_OUT_FILE);
	FILE *lo = fopen(lo_path, "w");
	if (!lo)
		return pn_fail(err, "%s: %s", lo_path, strerror(errno));
	fputs(PN_LEFT_OUT_HEADER, lo);
	pn_progress prog;
	pn_progress_start(&prog, "export", (uint64_t)sel->n);
	int rc = 0;
	for (int i = 0; !rc && i < sel->n; i++) {
		rc = write_task(st, &sel->tasks[i], i, o, &written[i], left_out, lo, err);
		pn_progress_step(&prog, (uint64_t)(i + 1), NULL);
	}
	pn_progress_end(&prog);
	if (fclose(lo) && !rc)
		rc = pn_fail(err, "%s: write error", lo_path);
	if (!rc)
		rc = write_splits(sel, written, o->out, err);
	if (!rc)
		rc = pn_write_manifest(o->out, err);
	if (!rc && o->archive)
		rc = pn_write_archive(o->out, o->archive, err);
	return rc;
}
