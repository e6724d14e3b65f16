/*
 * weights.c - tensors for weights that were stored as metadata, and seeded
 * inputs.
 *
 * A weight is drawn from the uniform distribution with the recorded mean
 * and standard deviation (on mean +- sqrt(3) std), clamped to [min, max], so
 * a BatchNormalization variance (min >= 0) stays positive and quantized
 * weights stay in their integer range.  Uniform rather than normal: it
 * matches the two moments the store keeps, and needs no transcendental per
 * element (a 90-million-weight model regenerates in a fraction of a second).
 * Each of the first channels (model/onnx_weights.c says which) is drawn from its own mean and std
 * when the statistics keep them (model/onnx_weights.c: a batch-norm folded
 * into a conv makes channel scales differ by orders of magnitude), and the
 * whole tensor is multiplied by its correction scale, chosen at extract
 * against the real weights (extract/weight_scale.h).
 * Without statistics (the bytes were never available) the value's role
 * decides: a variance is drawn around 1 in [0.5, 1.5], a scale near 1, an
 * integer tensor is all zeros (a valid index for every gather), and other
 * floats get std 1/sqrt(fan_in) like a freshly initialised layer (fan_in:
 * the axis a MatMul or Gemm sums over, all but dim 0 of a conv weight), so
 * each layer's output keeps about its input's spread; extract's per-layer
 * scale corrects what the nonlinearities between layers change.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "model/onnx.h"
#include "runtime/session.h"
#include "runtime/rng.h"
#include "schemas/ops.h"

typedef struct draw {
	double mean, std, lo, hi;
} draw;

/* Ops that pass a weight on unchanged in value (exporters wrap BatchNorm
 * statistics in Identity, reshape scales to broadcast): a role is read
 * through them. */
static int passes_values_on(int op)
{
	return op == PN_OP_Identity || op == PN_OP_Reshape || op == PN_OP_Unsqueeze ||
	       op == PN_OP_Squeeze || op == PN_OP_Flatten || op == PN_OP_Cast;
}

/* The draw that v's readers call for (depth: how many pass-on ops were
 * followed), or 0 when none of them says. */
static int role_draw(const pn_graph *g, int v, int depth, draw *d)
{
	const pn_value *val = &g->values[v];
	for (int c = 0; c < val->n_consumers; c++) {
		const pn_node *n = &g->nodes[val->consumers[c]];
		for (int k = 0; k < n->n_in; k++) {
			if (n->in[k] != v)
				continue;
			if (n->op == PN_OP_BatchNormalization && k == 4) {
				*d = (draw){1.0, 0.25, 0.5, 1.5};
				return 1;
			}
			if ((n->op == PN_OP_BatchNormalization && k == 1) ||
			    ((n->op == PN_OP_LayerNormalization || n->op == PN_OP_InstanceNormalization ||
			      n->op == PN_OP_GroupNormalization) && k == 1)) {
				*d = (draw){1.0, 0.05, 0.5, 1.5};
				return 1;
			}
			if (passes_values_on(n->op) && k == 0 && depth < 4 && n->n_out > 0 &&
			    n->out[0] >= 0 && role_draw(g, n->out[0], depth + 1, d))
				return 1;
		}
	}
	return 0;
}

/* The axis a MatMul or Gemm reading v as its B sums over (MatMul: the
 * second to last; Gemm: 0, or 1 with transB), or -1: conv weights
 * [out, in, k...] sum over every axis but 0. */
static int contraction_axis(const pn_graph *g, int v)
{
	const pn_value *val = &g->values[v];
	for (int c = 0; c < val->n_consumers; c++) {
		const pn_node *n = &g->nodes[val->consumers[c]];
		if (n->n_in < 2 || n->in[1] != v)
			continue;
		if (n->op == PN_OP_MatMul && val->type.rank >= 2)
			return val->type.rank - 2;
		if (n->op == PN_OP_Gemm)
			return pn_attr_int(n, "transB", 0) ? 1 : 0;
	}
	return -1;
}

/* How to draw weight v without stats: by its role, else like a freshly
 * initialised layer. */
static draw default_draw(const pn_graph *g, int v)
{
	const pn_value *val = &g->values[v];
	draw d = {0, 0.05, -INFINITY, INFINITY};
	int64_t fan_in = 1;
	int k_axis = contraction_axis(g, v);
	for (int i = 1; i < val->type.rank; i++)
		fan_in *= val->type.dims[i] > 0 ? val->type.dims[i] : 1;
	if (k_axis >= 0 && k_axis < val->type.rank && val->type.dims[k_axis] > 0)
		fan_in = val->type.dims[k_axis];
	if (val->type.rank >= 2)
		d.std = 1.0 / sqrt((double)fan_in);
	role_draw(g, v, 0, &d);
	return d;
}

static double draw_one(pn_rng *r, const draw *d)
{
	double x = d->mean + d->std * 1.7320508075688772 * (2 * pn_rng_uniform(r) - 1);
	return x < d->lo ? d->lo : x > d->hi ? d->hi : x;
}

static void put(pn_tensor *t, int64_t i, double x, int is_int)
{
	if (t->dtype == PN_FLOAT)   /* the common case, without the generic setter */
		((float *)t->data)[i] = (float)x;
	else
		pn_tensor_set_f64(t, i, is_int ? nearbyint(x) : x);
}

/* The draw of dim-0 channel c: its own mean and std when the statistics
 * keep them (model/onnx_weights.c), clamped to the whole tensor's range,
 * else the whole tensor's. */
static draw channel_draw(const pn_wmeta *m, draw whole, int64_t c)
{
	if (!m || c >= m->n_channels)
		return whole;
	return (draw){m->ch_mean[c], m->ch_std ? m->ch_std[c] : 0, whole.lo, whole.hi};
}

/* Draws t channel by channel, each element times m's correction scale (a
 * blind draw has no channels, only its per-layer scale). */
static void fill(pn_tensor *t, pn_rng *r, draw d, const pn_wmeta *m)
{
	int is_int = !pn_dtype_is_float(t->dtype);
	double scale = m && m->scale != 0 ? m->scale : 1;
	int a = pn_weight_channel_axis(t->rank, t->dims);
	int64_t per = a >= 0 ? t->numel / t->dims[a] : t->numel;
	for (int64_t c = 0, i = 0; i < t->numel; c++) {
		draw dc = channel_draw(m, d, c);
		for (int64_t k = 0; k < per && i < t->numel; k++, i++)
			put(t, i, scale * draw_one(r, &dc), is_int);
	}
}

pn_tensor *pn_weight_regen(const pn_graph *g, int value, uint64_t seed, char *err)
{
	const pn_value *v = &g->values[value];
	if (!pn_type_is_static(&v->type) || !pn_dtype_size(v->type.dtype) || v->type.dtype == PN_STRING)
		return pn_fail(err, "weight '%s' has no static numeric type to regenerate", v->name),
		       NULL;
	pn_tensor *t = pn_tensor_new(v->type.dtype, v->type.rank, v->type.dims);
	if (!t)
		return pn_fail(err, "cannot allocate weight '%s'", v->name), NULL;
	pn_rng r;
	pn_rng_seed(&r, seed, v->name);
	draw d;
	const pn_wmeta *m = v->meta;
	if (m && m->has_stats)
		d = (draw){m->mean, m->std, m->min, m->max};
	else if (!pn_dtype_is_float(v->type.dtype))
		d = (draw){0, 0, 0, 0};
	else
		d = default_draw(g, value);
	fill(t, &r, d, m);
	return t;
}

/* --- inputs of a subgraph ----------------------------------------------------- */

enum int_role { INT_DATA, INT_INDEX, INT_COUNT };

/* What an integer input is for, from the op and slot that read it: an index
 * (0 is in range of every non-empty axis), a count or step (1 keeps shapes
 * and loops small and valid), or data. */
static int int_role(const pn_graph *g, int v)
{
	const pn_value *val = &g->values[v];
	for (int c = 0; c < val->n_consumers; c++) {
		const pn_node *n = &g->nodes[val->consumers[c]];
		for (int k = 0; k < n->n_in; k++) {
			if (n->in[k] != v)
				continue;
			switch (n->op) {
			case PN_OP_Gather: case PN_OP_GatherElements: case PN_OP_GatherND:
			case PN_OP_Scatter: case PN_OP_ScatterElements: case PN_OP_ScatterND:
			case PN_OP_Compress: case PN_OP_NegativeLogLikelihoodLoss:
			case PN_OP_SoftmaxCrossEntropyLoss: case PN_OP_MaxUnpool:
			case PN_OP_RoiAlign:
				if (k >= 1)
					return INT_INDEX;
				break;
			case PN_OP_OneHot: case PN_OP_SequenceAt: case PN_OP_SequenceErase:
			case PN_OP_SequenceInsert:
				return k == 0 && n->op == PN_OP_OneHot ? INT_INDEX : k >= 1 ? INT_INDEX : INT_DATA;
			case PN_OP_Slice:
				return k == 4 ? INT_COUNT : INT_INDEX;
			case PN_OP_Tile: case PN_OP_Expand: case PN_OP_ConstantOfShape:
			case PN_OP_Reshape: case PN_OP_Range: case PN_OP_TopK: case PN_OP_Resize:
			case PN_OP_CumSum:   /* its axis: 0 exists in every rank */
				if (k == 1)
					return INT_INDEX;
				break;
			case PN_OP_Upsample: case PN_OP_Loop: case PN_OP_Split: case PN_OP_Pad:
			case PN_OP_Squeeze: case PN_OP_Unsqueeze:
				if (k >= 1 || n->op == PN_OP_ConstantOfShape || n->op == PN_OP_Loop)
					return INT_COUNT;
				break;
			default:
				break;
			}
		}
	}
	return INT_DATA;
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
	pn_rng_seed(&r, seed, name);
	if (pn_dtype_is_float(ty->dtype) && range && range->known) {
		double width = range->hi - range->lo;
		for (int64_t i = 0; i < t->numel; i++)
			pn_tensor_set_f64(t, i, range->lo + width * pn_rng_uniform(&r));
	} else if (pn_dtype_is_float(ty->dtype)) {
		/* positive and away from 0: Log, Sqrt, Div, Pow of what a model
		 * computes stay finite whatever ops the cut starts with */
		for (int64_t i = 0; i < t->numel; i++)
			pn_tensor_set_f64(t, i, 0.1 + pn_rng_uniform(&r));
	} else if (ty->dtype == PN_BOOL) {
		for (int64_t i = 0; i < t->numel; i++)
			pn_tensor_set_f64(t, i, (double)(pn_rng_next(&r) & 1));
	} else if (range && range->n_ints > 0 && range->n_ints == t->numel) {
		/* a shape, an axis or an index computed upstream: as the model had it */
		for (int64_t i = 0; i < t->numel; i++)
			pn_tensor_set_f64(t, i, (double)range->ints[i]);
	} else {
		int role = int_role(g, v);
		for (int64_t i = 0; i < t->numel; i++)
			pn_tensor_set_f64(t, i, role == INT_INDEX ? 0 : role == INT_COUNT ? 1
								: (double)(pn_rng_next(&r) % 4));
	}
	return t;
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
