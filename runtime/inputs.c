/*
 * inputs.c - seeded inputs of a model or a subgraph (pn_input_for, declared
 * in runtime/session.h; pn_model_inputs, runtime/inputs.h), what an input's
 * values mean, and the concrete input types a subgraph runs at.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "runtime/inputs.h"
#include "runtime/session.h"
#include "runtime/rng.h"
#include "schemas/ops.h"

/* --- what an input means: the rule table ----------------------------------------
 *
 * An integer (or bool) input whose values steer the computation must hold
 * values the model expects, or a seeded run computes what the model never
 * does: a padding mask as wide as random lengths instead of the frames (a
 * Conformer's "cannot reshape 100 elements into 128"), embedding rows out of
 * range, the branch no sample rate takes.  Each meaning is read from the
 * graph, following the input through ops that keep it what it is (Cast,
 * Reshape, Unsqueeze, Expand, ReduceMax, ...; up to 4 deep):
 *
 *   meaning    recognised by                                 values
 *   mask       bool or int named *mask*                      0 or 1, drawn: both branches of what
 *                                                            it selects run (a check compares them)
 *   lengths    int, rank 1, named *length*, *lens or *_len,  the length of the sequence axis of the
 *              or the limit of a Range, or compared (Less,   input it describes, every element (the
 *              Greater, ...) with what a Range makes         first other input of rank >= 2 with as
 *                                                            many rows; its first symbolic axis
 *                                                            after 0, else its longest)
 *   token ids  int, the indices of a Gather on a tensor      uniform in [0, R)
 *              with R rows on its axis
 *   rate       int, one element, compared (Equal, Greater,   that constant (the first compared)
 *              ...) with a constant
 *   mask       bool or int: the condition of a Where, or     0 or 1, as above
 *              (int) a factor of a Mul
 *
 * The first rule that matches, in this order, wins.  Before any of them,
 * pn_input_for feeds a value the model's run recorded (range ints) as it
 * was; without a meaning, int_role decides (index, count or data).  A
 * configuring scalar the binding names (a sample rate 'sr',
 * extract/binding.h) takes its bound value over all (runtime/feed.c).
 */

static const char *const meaning_names[PN_N_INPUT_MEANINGS] = {
	[PN_IM_NONE] = "none", [PN_IM_LENGTHS] = "lengths", [PN_IM_RATE] = "rate",
	[PN_IM_TOKENS] = "token ids", [PN_IM_MASK] = "mask",
};

const char *pn_input_meaning_name(int meaning)
{
	return meaning >= 0 && meaning < PN_N_INPUT_MEANINGS ? meaning_names[meaning] : "?";
}

#define MEANING_DEPTH 4

static int is_int(int dtype)
{
	return dtype == PN_INT64 || dtype == PN_INT32 || dtype == PN_INT16 || dtype == PN_INT8 ||
	       dtype == PN_UINT8 || dtype == PN_UINT16 || dtype == PN_UINT32 || dtype == PN_UINT64;
}

static int contains(const char *s, const char *w)
{
	size_t n = strlen(w);
	for (; s && *s; s++)
		if (!strncasecmp(s, w, n))
			return 1;
	return 0;
}

static int ends_with(const char *s, const char *w)
{
	size_t n = strlen(s), m = strlen(w);
	return n >= m && !strcasecmp(s + n - m, w);
}

static int lengths_name(const char *s)
{
	return contains(s, "length") || ends_with(s, "lens") || ends_with(s, "_len") ||
	       !strcasecmp(s, "len");
}

/* Ops whose output (of input slot 0) is still the same kind of value. */
static int keeps_meaning(int op)
{
	return op == PN_OP_Identity || op == PN_OP_Cast || op == PN_OP_Reshape ||
	       op == PN_OP_Unsqueeze || op == PN_OP_Squeeze || op == PN_OP_Flatten ||
	       op == PN_OP_Expand || op == PN_OP_ReduceMax || op == PN_OP_ReduceMin;
}

static int is_comparison(int op)
{
	return op == PN_OP_Equal || op == PN_OP_Greater || op == PN_OP_Less ||
	       op == PN_OP_GreaterOrEqual || op == PN_OP_LessOrEqual;
}

/* The first meaning f finds among the uses of v and of what ops that keep
 * its meaning make of it (pn_each_use), or PN_IM_NONE; f's ud is the
 * int64_t that gets the number the meaning needs (rows, a constant). */
static int each_use(const pn_graph *g, int v, pn_use_fn f, int64_t *x)
{
	return pn_each_use(g, v, MEANING_DEPTH, keeps_meaning, f, x);
}

/* A constant 0, 1, ..., n-1 (n >= 2): an arange a traced export baked at
 * the length its example had. */
static int64_t constant_arange(const pn_tensor *t)
{
	if (!t || t->rank != 1 || t->numel < 2 || !is_int(t->dtype))
		return 0;
	for (int64_t i = 0; i < t->numel; i++)
		if (pn_tensor_get_f64(t, i) != (double)i)
			return 0;
	return t->numel;
}

/* Whether v is an arange within a few producers (through Expand,
 * Unsqueeze, Cast, ...): -1 for a Range, n for a constant arange of n, 0
 * for neither. */
static int64_t arange_of(const pn_graph *g, int v, int depth)
{
	if (v < 0 || depth > MEANING_DEPTH)
		return 0;
	int64_t n = constant_arange(g->values[v].data);
	if (n || g->values[v].role != PN_ROLE_NODE || g->values[v].producer < 0)
		return n;
	const pn_node *p = &g->nodes[g->values[v].producer];
	if (p->op == PN_OP_Range)
		return -1;
	for (int k = 0; k < p->n_in && k < 2 && !n; k++)
		n = arange_of(g, p->in[k], depth + 1);
	return n;
}

static int other_operand(const pn_node *n, int k)
{
	return n->n_in == 2 ? n->in[1 - k] : -1;
}

/* *x: the length of a constant arange it is compared with, else -1. */
static int lengths_use(const pn_graph *g, const pn_node *n, int k, void *ud)
{
	int64_t *x = ud;
	*x = -1;
	if (n->op == PN_OP_Range && k == 1)
		return PN_IM_LENGTHS;
	if (is_comparison(n->op) && (*x = arange_of(g, other_operand(n, k), 0)) != 0)
		return PN_IM_LENGTHS;
	*x = -1;
	return PN_IM_NONE;
}

/* The rows of the gathered tensor along the Gather's axis. */
static int tokens_use(const pn_graph *g, const pn_node *n, int k, void *ud)
{
	int64_t *x = ud;
	if (n->op != PN_OP_Gather || k != 1 || n->in[0] < 0)
		return PN_IM_NONE;
	const pn_type *t = &g->values[n->in[0]].type;
	int64_t axis = pn_attr_int(n, "axis", 0);
	axis += axis < 0 ? t->rank : 0;
	if (axis < 0 || axis >= t->rank || t->dims[axis] <= 0)
		return PN_IM_NONE;
	*x = t->dims[axis];
	return PN_IM_TOKENS;
}

static int rate_use(const pn_graph *g, const pn_node *n, int k, void *ud)
{
	int64_t *x = ud;
	int o = is_comparison(n->op) ? other_operand(n, k) : -1;
	const pn_tensor *c = o >= 0 ? g->values[o].data : NULL;
	if (!c || c->numel < 1 || c->dtype == PN_STRING)
		return PN_IM_NONE;
	*x = (int64_t)pn_tensor_get_f64(c, 0);
	return PN_IM_RATE;
}

static int mask_use(const pn_graph *g, const pn_node *n, int k, void *ud)
{
	(void)g, (void)ud;   /* a bool reaches a Mul only through a Cast */
	return (n->op == PN_OP_Where && k == 0) || n->op == PN_OP_Mul ? PN_IM_MASK : PN_IM_NONE;
}

/* Meaning of value v (a graph input) of type t; *x as each_use gives it. */
static int meaning_of(const pn_graph *g, int v, const pn_type *t, int64_t *x)
{
	const char *name = g->values[v].name;
	int integer = is_int(t->dtype);
	int m = PN_IM_NONE;
	if (t->kind != PN_KIND_TENSOR || (!integer && t->dtype != PN_BOOL))
		return PN_IM_NONE;
	if (contains(name, "mask"))
		return PN_IM_MASK;
	if (integer && t->rank == 1 &&
	    (lengths_name(name) || each_use(g, v, lengths_use, x)))
		return PN_IM_LENGTHS;
	if (integer && (m = each_use(g, v, tokens_use, x)))
		return m;
	if (integer && t->rank >= 0 && pn_numel(t->rank, t->dims) == 1 &&
	    (m = each_use(g, v, rate_use, x)))
		return m;
	return each_use(g, v, mask_use, x);
}

int pn_input_meaning(const pn_graph *g, int input)
{
	int64_t x = 0;
	int v = g->inputs[input];
	return meaning_of(g, v, &g->values[v].type, &x);
}

/* Fills an integer or bool input by its meaning; 0 when it has none this
 * can fill (lengths need the other inputs: pn_model_inputs). */
static int fill_by_meaning(const pn_graph *g, int v, pn_tensor *t, pn_rng *r)
{
	pn_type ty = {.kind = PN_KIND_TENSOR, .dtype = t->dtype, .rank = t->rank};
	for (int d = 0; d < t->rank && d < PN_MAX_RANK; d++)
		ty.dims[d] = t->dims[d];
	int64_t x = 0;
	int m = meaning_of(g, v, &ty, &x);
	if (m != PN_IM_TOKENS && m != PN_IM_RATE && m != PN_IM_MASK)
		return 0;
	for (int64_t i = 0; i < t->numel; i++)
		pn_tensor_set_f64(t, i, m == PN_IM_TOKENS ? (double)(pn_rng_next(r) % (uint64_t)x)
					: m == PN_IM_RATE  ? (double)x
							   : (double)(pn_rng_next(r) & 1));
	return 1;
}

/* --- inputs of a subgraph ----------------------------------------------------- */

enum int_role { INT_DATA, INT_INDEX, INT_COUNT };

/* What one use says an integer input is for: its role + 1, or 0 when the
 * use does not say. */
static int role_use(const pn_graph *g, const pn_node *n, int k, void *ud)
{
	(void)g, (void)ud;
	switch (n->op) {
	case PN_OP_Gather: case PN_OP_GatherElements: case PN_OP_GatherND:
	case PN_OP_Scatter: case PN_OP_ScatterElements: case PN_OP_ScatterND:
	case PN_OP_Compress: case PN_OP_NegativeLogLikelihoodLoss:
	case PN_OP_SoftmaxCrossEntropyLoss: case PN_OP_MaxUnpool:
	case PN_OP_RoiAlign:
		return k >= 1 ? INT_INDEX + 1 : 0;
	case PN_OP_OneHot: case PN_OP_SequenceAt: case PN_OP_SequenceErase:
	case PN_OP_SequenceInsert:
		return 1 + (k == 0 && n->op == PN_OP_OneHot ? INT_INDEX : k >= 1 ? INT_INDEX : INT_DATA);
	case PN_OP_Slice:
		return 1 + (k == 4 ? INT_COUNT : INT_INDEX);
	case PN_OP_Tile: case PN_OP_Expand: case PN_OP_ConstantOfShape:
	case PN_OP_Reshape: case PN_OP_Range: case PN_OP_TopK: case PN_OP_Resize:
	case PN_OP_CumSum:   /* its axis: 0 exists in every rank */
		return k == 1 ? INT_INDEX + 1 : 0;
	case PN_OP_Upsample: case PN_OP_Loop: case PN_OP_Split: case PN_OP_Pad:
	case PN_OP_Squeeze: case PN_OP_Unsqueeze:
		return k >= 1 || n->op == PN_OP_Loop ? INT_COUNT + 1 : 0;
	default:
		return 0;
	}
}

/* What an integer input is for, from the op and slot that read it: an index
 * (0 is in range of every non-empty axis), a count or step (1 keeps shapes
 * and loops small and valid), or data. */
static int int_role(const pn_graph *g, int v)
{
	int r = pn_each_use(g, v, 0, NULL, role_use, NULL);
	return r ? r - 1 : INT_DATA;
}

pn_tensor *pn_input_for(const pn_graph *g, int input, const pn_type *ty, uint64_t seed,
			const pn_range *range, char *err)
{
	int v = g->inputs[input];
	const char *name = g->values[v].name;
	if (ty->kind != PN_KIND_TENSOR)
		return pn_fail(err, "no generator for a %s input: '%s'",
			       ty->kind == PN_KIND_SEQUENCE ? "sequence" : "optional", name), NULL;
	if (ty->dtype == PN_STRING)
		return pn_fail(err, "no generator for a string input: '%s'", name), NULL;
	if (!pn_type_is_static(ty) || !pn_dtype_size(ty->dtype))
		return pn_fail(err, "input '%s' has no static numeric type", name), NULL;
	pn_tensor *t = pn_tensor_new(ty->dtype, ty->rank, ty->dims);
	if (!t)
		return pn_fail(err, "cannot allocate input '%s'", name), NULL;
	pn_rng r;
	pn_rng_seed(&r, seed, pn_draw_stream(g, v));
	if (pn_dtype_is_float(ty->dtype) && range && range->known) {
		double width = range->hi - range->lo;
		for (int64_t i = 0; i < t->numel; i++)
			pn_tensor_set_f64(t, i, range->lo + width * pn_rng_uniform(&r));
	} else if (pn_dtype_is_float(ty->dtype)) {
		/* positive and away from 0: Log, Sqrt, Div, Pow of what a model
		 * computes stay finite whatever ops the cut starts with */
		for (int64_t i = 0; i < t->numel; i++)
			pn_tensor_set_f64(t, i, 0.1 + pn_rng_uniform(&r));
	} else if (ty->dtype == PN_BOOL) {   /* a mask or not: 0 or 1 */
		for (int64_t i = 0; i < t->numel; i++)
			pn_tensor_set_f64(t, i, (double)(pn_rng_next(&r) & 1));
	} else if (range && range->n_ints > 0 && range->n_ints == t->numel) {
		/* a shape, an axis or an index computed upstream: as the model had it */
		for (int64_t i = 0; i < t->numel; i++)
			pn_tensor_set_f64(t, i, (double)range->ints[i]);
	} else if (!fill_by_meaning(g, v, t, &r)) {
		int role = int_role(g, v);
		for (int64_t i = 0; i < t->numel; i++)
			pn_tensor_set_f64(t, i, role == INT_INDEX ? 0 : role == INT_COUNT ? 1
								: (double)(pn_rng_next(&r) % 4));
	}
	return t;
}

/* Dim 0 of declared types a and b is one dim: one symbolic name, or one
 * stated size. */
static int same_rows(const pn_type *a, const pn_type *b)
{
	if (a->dims[0] >= 0 || b->dims[0] >= 0)
		return a->dims[0] == b->dims[0];
	return a->dim_names[0] && b->dim_names[0] && !strcmp(a->dim_names[0], b->dim_names[0]);
}

int pn_lengths_described(const pn_graph *g, int input, const pn_type *types, int *axis)
{
	const pn_type *lt = types ? &types[input] : &g->values[g->inputs[input]].type;
	for (int p = 0; lt->rank == 1 && p < g->n_inputs; p++) {
		const pn_type *decl = &g->values[g->inputs[p]].type;
		const pn_type *t = types ? &types[p] : decl;
		if (p == input || t->kind != PN_KIND_TENSOR || t->rank < 2 || decl->rank != t->rank ||
		    (types ? t->dims[0] != lt->dims[0] : !same_rows(t, lt)))
			continue;
		*axis = -1;
		for (int a = 1; a < t->rank && *axis < 0; a++)
			if (decl->dims[a] < 0)
				*axis = a;
		if (*axis < 0)
			for (int a = *axis = 1; a < t->rank; a++)
				*axis = t->dims[a] > t->dims[*axis] ? a : *axis;
		return p;
	}
	return -1;
}

int64_t pn_lengths_traced(const pn_graph *g, int input)
{
	int64_t n = 0;
	int v = g->inputs[input];
	if (pn_input_meaning(g, input) != PN_IM_LENGTHS)
		return 0;
	each_use(g, v, lengths_use, &n);
	return n > 0 ? n : 0;
}

int pn_model_inputs(const pn_graph *g, const pn_type *types, uint64_t seed, pn_tensor **out,
		    char *err)
{
	for (int i = 0; i < g->n_inputs; i++) {
		out[i] = pn_input_for(g, i, &types[i], seed, NULL, err);
		if (!out[i]) {
			while (i--) {
				pn_tensor_free(out[i]);
				out[i] = NULL;
			}
			return -1;
		}
		int axis, p = pn_input_meaning(g, i) == PN_IM_LENGTHS
				      ? pn_lengths_described(g, i, types, &axis) : -1;
		for (int64_t k = 0; p >= 0 && k < out[i]->numel; k++)
			pn_tensor_set_f64(out[i], k, (double)types[p].dims[axis]);
	}
	return 0;
}

/* Elements of input type t with its unknown dims at `size`. */
static double elems_at(const pn_type *t, int64_t size)
{
	double n = 1;
	for (int d = 0; d < t->rank; d++)
		n *= (double)(t->dims[d] < 0 ? size : t->dims[d]);
	return n;
}

/* A declared input type with what a run showed where it leaves the rank or
 * dims unknown (dims the file states are kept). */
static pn_type with_seen_shape(const pn_type *decl, const pn_range *seen)
{
	pn_type t = *decl;
	if (!seen || seen->rank < 0 || (t.rank >= 0 && t.rank != seen->rank))
		return t;
	for (int d = 0; d < seen->rank; d++)
		if (t.rank < 0 || t.dims[d] < 0) {
			t.dims[d] = seen->dims[d];
			t.dim_names[d] = NULL;
		}
	t.rank = seen->rank;
	return t;
}

int pn_concrete_input_types(const pn_graph *g, const pn_range *seen, int n_seen, pn_type *out,
			    int64_t *size, char *err)
{
	int64_t s = PN_ASSUMED_DIM;
	int assumed = 0;
	for (int i = 0; i < g->n_inputs; i++) {
		const pn_value *v = &g->values[g->inputs[i]];
		out[i] = v->type;
		if (v->type.kind != PN_KIND_TENSOR)
			continue;
		out[i] = with_seen_shape(&v->type, n_seen == g->n_inputs ? &seen[i] : NULL);
		if (out[i].rank < 0 || out[i].dtype == PN_UNDEFINED)
			return pn_fail(err, "data-dependent shape: input %s has an unknown %s", v->name,
				       out[i].rank < 0 ? "rank" : "element type");
		int unknown = 0;
		for (int d = 0; d < out[i].rank; d++)
			unknown += out[i].dims[d] < 0;
		assumed += unknown;
		while (unknown && s > 1 && elems_at(&out[i], s) > PN_ASSUMED_ELEMS)
			s /= 2;
	}
	for (int i = 0; i < g->n_inputs; i++)
		for (int d = 0; out[i].kind == PN_KIND_TENSOR && d < out[i].rank; d++)
			if (out[i].dims[d] < 0) {
				out[i].dims[d] = s;
				out[i].dim_names[d] = NULL;
			}
	*size = s;
	return assumed;
}
