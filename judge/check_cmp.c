/*
 * check_cmp.c - how close a candidate's outputs are, and its static checks.
 *
 * pass_level: an element passes at level t when |got - ref| <= atol_t +
 * rtol_t * |ref| on the ladder of the reference's dtype (judge/score.h); the
 * output's level is the least t at which all of its elements pass.  The
 * ladder is monotone in t, so one pass over the elements suffices: the level
 * only ever climbs.  Integers follow the float32 ladder like any number (a
 * quantized value one step off is an accuracy question); bools and strings
 * are labels, so they pass at the strictest level or not at all.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/infer.h"
#include "judge/check_impl.h"
#include "export/export.h"
#include "judge/score.h"
#include "model/onnx.h"

typedef struct ladder {
	double rtol[PN_N_LEVELS], atol[PN_N_LEVELS];
} ladder;

static void ladder_of(int dtype, ladder *l)
{
	for (int i = 0; i < PN_N_LEVELS; i++)
		pn_tolerance(dtype, PN_TOL_MIN_LEVEL + i, &l->rtol[i], &l->atol[i]);
}

/* Element i (real and imaginary parts interleaved for complex types). */
static double elem(const pn_tensor *t, int64_t i)
{
	if (t->dtype == PN_COMPLEX64)
		return ((const float *)t->data)[i];
	if (t->dtype == PN_COMPLEX128)
		return ((const double *)t->data)[i];
	return pn_tensor_get_f64(t, i);
}

static void note_failure(pn_outcmp *r, int64_t i, double g, double w)
{
	if (!r->what[0])
		snprintf(r->what, sizeof r->what, "element %lld: %.9g, reference %.9g", (long long)i,
			 g, w);
}

static void compare_numbers(const pn_tensor *got, const pn_tensor *want, pn_outcmp *r)
{
	ladder l;
	ladder_of(want->dtype, &l);
	int label = want->dtype == PN_BOOL;
	int64_t n = want->numel;
	if (want->dtype == PN_COMPLEX64 || want->dtype == PN_COMPLEX128)
		n *= 2;
	int at = 0;   /* index of the current level in the ladder */
	for (int64_t i = 0; i < n; i++) {
		double g = elem(got, i), w = elem(want, i);
		if ((isnan(w) && isnan(g)) || (isinf(w) && g == w))
			continue;
		if (!isfinite(g) && isfinite(w)) {
			if (r->cls != PN_EC_NANINF)
				snprintf(r->what, sizeof r->what, "element %lld: %g, reference %.9g",
					 (long long)i, g, w);
			r->cls = PN_EC_NANINF;
			r->max_abs = INFINITY;
			at = PN_N_LEVELS;
			continue;
		}
		double d = fabs(g - w);
		if (!(d <= r->max_abs))
			r->max_abs = isnan(d) ? INFINITY : d;
		if (w != 0 && isfinite(w) && d / fabs(w) > r->max_rel)
			r->max_rel = d / fabs(w);
		if (label && d != 0)
			at = PN_N_LEVELS;
		while (at < PN_N_LEVELS && !(d <= l.atol[at] + l.rtol[at] * fabs(w)))
			at++;
		if (at == PN_N_LEVELS)
			note_failure(r, i, g, w);
	}
	r->level = at < PN_N_LEVELS ? PN_TOL_MIN_LEVEL + at : PN_NO_LEVEL;
}

static void compare_strings(const pn_tensor *got, const pn_tensor *want, pn_outcmp *r)
{
	char *const *g = got->data, *const *w = want->data;
	r->level = PN_TOL_MIN_LEVEL;
	for (int64_t i = 0; i < want->numel; i++)
		if (strcmp(g[i] ? g[i] : "", w[i] ? w[i] : "")) {
			snprintf(r->what, sizeof r->what, "string %lld differs", (long long)i);
			r->level = PN_NO_LEVEL;
			return;
		}
}

/* How bad a class is when parts of one output fail differently: a wrong
 * shape or type says more than NaNs, which say more than inaccuracy. */
static int severity(int cls)
{
	return cls == PN_EC_SHAPE || cls == PN_EC_DTYPE ? 3 : cls == PN_EC_NANINF ? 2
		: cls == PN_EC_ACCURACY ? 1 : 0;
}

void pn_check_merge(pn_outcmp *r, const pn_outcmp *sub, const char *part)
{
	int first_failure = sub->what[0] && !r->what[0];
	if (sub->max_abs > r->max_abs)
		r->max_abs = sub->max_abs;
	if (sub->max_rel > r->max_rel)
		r->max_rel = sub->max_rel;
	if (sub->level > r->level)
		r->level = sub->level;
	if (severity(sub->cls) > severity(r->cls))
		r->cls = sub->cls;
	if (first_failure)
		snprintf(r->what, sizeof r->what, "%s: %s", part, sub->what);
}

static void compare_sequence(const pn_tensor *got, const pn_tensor *want, pn_outcmp *r)
{
	if (got->n_items != want->n_items) {
		r->cls = PN_EC_SHAPE;
		snprintf(r->what, sizeof r->what, "sequence of %d items, reference %d", got->n_items,
			 want->n_items);
		return;
	}
	r->level = PN_TOL_MIN_LEVEL;
	for (int i = 0; i < want->n_items; i++) {
		pn_outcmp sub;
		char part[32];
		pn_check_compare(got->items[i], want->items[i], &sub);
		snprintf(part, sizeof part, "item %d", i);
		pn_check_merge(r, &sub, part);
	}
}

void pn_check_compare(const pn_tensor *got, const pn_tensor *want, pn_outcmp *r)
{
	memset(r, 0, sizeof *r);
	r->level = PN_NO_LEVEL;
	char a[96], b[96];
	if (got->kind != want->kind || got->none != want->none) {
		r->cls = PN_EC_DTYPE;
		snprintf(r->what, sizeof r->what, "a %s where the reference has a %s",
			 got->kind == PN_KIND_TENSOR ? "tensor" : got->kind == PN_KIND_SEQUENCE ? "sequence"
			 : got->none ? "empty optional" : "optional",
			 want->kind == PN_KIND_TENSOR ? "tensor" : want->kind == PN_KIND_SEQUENCE ? "sequence"
			 : want->none ? "empty optional" : "optional");
	} else if (want->kind == PN_KIND_OPTIONAL && want->none) {
		r->level = PN_TOL_MIN_LEVEL;
	} else if (want->kind != PN_KIND_TENSOR) {
		compare_sequence(got, want, r);
	} else if (got->dtype != want->dtype) {
		r->cls = PN_EC_DTYPE;
		snprintf(r->what, sizeof r->what, "dtype %s, reference %s", pn_dtype_name(got->dtype),
			 pn_dtype_name(want->dtype));
	} else if (!pn_tensor_same_shape(got, want)) {
		r->cls = PN_EC_SHAPE;
		snprintf(r->what, sizeof r->what, "shape %s, reference %s",
			 pn_tensor_desc(got, a, sizeof a), pn_tensor_desc(want, b, sizeof b));
	} else if (want->dtype == PN_STRING) {
		compare_strings(got, want, r);
	} else {
		compare_numbers(got, want, r);
	}
	if (r->cls == PN_EC_NONE && r->level == PN_NO_LEVEL)
		r->cls = PN_EC_ACCURACY;
}

/* --- signature --------------------------------------------------------------- */

/* A declared type against an actual tensor: unknown parts of the declared
 * type are accepted (a candidate may keep dims symbolic), known ones must
 * agree. */
static int type_matches(const pn_type *ty, const pn_tensor *t, char *why, size_t cap)
{
	char a[128], b[128];
	if (ty->kind != t->kind) {
		snprintf(why, cap, "is a %s, the reference's a %s",
			 ty->kind == PN_KIND_TENSOR ? "tensor" : "sequence or optional",
			 t->kind == PN_KIND_TENSOR ? "tensor" : "sequence or optional");
		return PN_EC_DTYPE;
	}
	if (t->kind != PN_KIND_TENSOR)
		return PN_EC_NONE;
	if (ty->dtype != PN_UNDEFINED && ty->dtype != t->dtype) {
		snprintf(why, cap, "is %s, the reference's %s", pn_dtype_name(ty->dtype),
			 pn_dtype_name(t->dtype));
		return PN_EC_DTYPE;
	}
	int same = ty->rank < 0 || ty->rank == t->rank;
	for (int d = 0; same && ty->rank >= 0 && d < t->rank; d++)
		same = ty->dims[d] < 0 || ty->dims[d] == t->dims[d];
	if (!same) {
		snprintf(why, cap, "is %s, the reference's %s", pn_type_desc(ty, a, sizeof a),
			 pn_tensor_desc(t, b, sizeof b));
		return PN_EC_SHAPE;
	}
	return PN_EC_NONE;
}

int pn_check_signature(const pn_graph *cand, pn_tensor *const *ref_in, int n_in,
		       pn_tensor *const *ref_out, int n_out, char *reason, size_t cap)
{
	if (cand->n_inputs != n_in || cand->n_outputs != n_out) {
		snprintf(reason, cap, "the candidate has %d inputs and %d outputs, the reference %d and %d",
			 cand->n_inputs, cand->n_outputs, n_in, n_out);
		return PN_EC_SHAPE;
	}
	char why[320];
	for (int io = 0; io < 2; io++)
		for (int i = 0; i < (io ? n_out : n_in); i++) {
			const pn_value *v = &cand->values[io ? cand->outputs[i] : cand->inputs[i]];
			int cls = type_matches(&v->type, io ? ref_out[i] : ref_in[i], why, sizeof why);
			if (cls != PN_EC_NONE) {
				snprintf(reason, cap, "%s %d ('%s') %s", io ? "output" : "input", i, v->name,
					 why);
				return cls;
			}
		}
	return PN_EC_NONE;
}

/* --- constants ------------------------------------------------------------ */

int pn_check_informative(const pn_tensor *t)
{
	if (t->kind != PN_KIND_TENSOR || t->dtype == PN_STRING || !pn_dtype_size(t->dtype))
		return 0;
	size_t es = pn_dtype_size(t->dtype);
	for (int64_t i = 1; i < t->numel; i++)
		if (memcmp((const char *)t->data + (size_t)i * es, t->data, es))
			return 1;
	return 0;
}

/* Whether constant c holds the values of exported output e (any shape with
 * the same element count: a reshaped copy is a copy). */
static int holds(const pn_tensor *c, const pn_tensor *e, double rtol, double atol)
{
	if (!c || !c->data || c->kind != PN_KIND_TENSOR || c->numel != e->numel ||
	    c->dtype == PN_STRING || !pn_dtype_size(c->dtype) || c->dtype == PN_COMPLEX64 ||
	    c->dtype == PN_COMPLEX128)
		return 0;
	for (int64_t i = 0; i < e->numel; i++) {
		double x = pn_tensor_get_f64(c, i), y = pn_tensor_get_f64(e, i);
		if (!(fabs(x - y) <= atol + rtol * fabs(y)) && !(isnan(x) && isnan(y)))
			return 0;
	}
	return 1;
}

typedef struct scan {
	pn_tensor *const *outs;
	const char *const *labels;
	int n;
	double rtol, atol;
	char *reason;
	size_t cap;
} scan;

static int scan_tensor(const scan *s, const pn_tensor *c, const char *where)
{
	for (int k = 0; k < s->n; k++)
		if (s->outs[k] && holds(c, s->outs[k], s->rtol, s->atol)) {
			snprintf(s->reason, s->cap, "%s holds the exported %s", where, s->labels[k]);
			return 1;
		}
	return 0;
}

/* value_floats / value_ints of a Constant node, as a 1-D tensor. */
static int scan_list(const scan *s, const pn_attr *a, const char *where)
{
	if (a->n <= 0 || (a->type != PN_ATTR_FLOATS && a->type != PN_ATTR_INTS))
		return 0;
	int64_t dims[1] = {a->n};
	pn_tensor t = {.dtype = a->type == PN_ATTR_FLOATS ? PN_FLOAT : PN_INT64, .rank = 1,
		       .dims = {dims[0]}, .numel = a->n,
		       .data = a->type == PN_ATTR_FLOATS ? (void *)a->floats : (void *)a->ints};
	return scan_tensor(s, &t, where);
}

static int scan_graph(const scan *s, const pn_graph *g, int depth);

static int scan_node(const scan *s, const pn_node *n, int depth)
{
	char where[256];
	for (int i = 0; i < n->n_attr; i++) {
		const pn_attr *a = &n->attrs[i];
		snprintf(where, sizeof where, "attribute '%s' of node '%s' (%s)", a->name, n->name,
			 n->op_type);
		if (a->type == PN_ATTR_TENSOR && scan_tensor(s, a->t, where))
			return 1;
		for (int k = 0; a->type == PN_ATTR_TENSORS && k < a->n; k++)
			if (scan_tensor(s, a->tensors[k], where))
				return 1;
		if (scan_list(s, a, where))
			return 1;
		if (a->type == PN_ATTR_GRAPH && a->g && scan_graph(s, a->g, depth + 1))
			return 1;
		for (int k = 0; a->type == PN_ATTR_GRAPHS && k < a->n; k++)
			if (scan_graph(s, a->graphs[k], depth + 1))
				return 1;
	}
	return 0;
}

static int scan_graph(const scan *s, const pn_graph *g, int depth)
{
	char where[256];
	if (depth > PN_LIMIT_GRAPH_DEPTH)
		return 0;
	for (int v = 0; v < g->n_values; v++) {
		snprintf(where, sizeof where, "constant '%s'", g->values[v].name);
		if (g->values[v].data && scan_tensor(s, g->values[v].data, where))
			return 1;
	}
	for (int i = 0; i < g->n_nodes; i++)
		if (scan_node(s, &g->nodes[i], depth))
			return 1;
	return 0;
}

int pn_check_constants(const pn_graph *g, pn_tensor *const *outs, const char *const *labels,
		       int n, char *reason, size_t cap)
{
	scan s = {.outs = outs, .labels = labels, .n = n, .reason = reason, .cap = cap};
	pn_tolerance(PN_FLOAT, -3, &s.rtol, &s.atol);
	return scan_graph(&s, g, 0);
}

/* --- memory ---------------------------------------------------------------- */

/* Bytes of a fully known tensor type (as a double: a bomb's element count
 * overflows int64), or -1. */
static double type_bytes(const pn_type *t)
{
	if (t->kind != PN_KIND_TENSOR || t->rank < 0 || !pn_dtype_size(t->dtype))
		return -1;
	double n = (double)pn_dtype_size(t->dtype);
	for (int d = 0; d < t->rank; d++) {
		if (t->dims[d] < 0)
			return -1;
		n *= (double)t->dims[d];
	}
	return n;
}

int pn_check_memory(const pn_graph *cand, pn_tensor *const *ref_in, int n_in, double limit,
		    char *reason, size_t cap)
{
	if (cand->n_inputs != n_in)
		return PN_EC_NONE;
	pn_type *types = calloc((size_t)n_in + 1, sizeof(pn_type));
	if (!types)
		return PN_EC_NONE;
	for (int i = 0; i < n_in; i++) {
		types[i] = cand->values[cand->inputs[i]].type;
		if (ref_in[i]->kind == PN_KIND_TENSOR) {
			types[i].dtype = ref_in[i]->dtype;
			types[i].rank = ref_in[i]->rank;
			memcpy(types[i].dims, ref_in[i]->dims, sizeof types[i].dims);
		}
	}
	pn_infer_result r = {0};
	char err[PN_ERRLEN];
	int cls = PN_EC_NONE;
	if (!pn_infer_graph(cand, NULL, types, &r, err))
		for (int v = 0; v < r.n && v < cand->n_values && cls == PN_EC_NONE; v++) {
			double bytes = type_bytes(&r.v[v].type);
			if (bytes > limit) {
				snprintf(reason, cap, "value '%s' would hold %.4g bytes, more than the "
					 "check's memory limit of %.4g (refused before allocating)",
					 cand->values[v].name, bytes, limit);
				cls = PN_EC_RUNTIME;
			}
		}
	pn_infer_result_free(&r);
	free(types);
	return cls;
}
