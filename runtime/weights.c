/*
 * weights.c - tensors for weights that were stored as metadata (the seeded
 * inputs are in inputs.c).
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

/* The draw that one reader of a weight calls for (1 and *ud), or 0 when it
 * does not say. */
static int role_use(const pn_graph *g, const pn_node *n, int k, void *ud)
{
	(void)g;
	draw *d = ud;
	if (n->op == PN_OP_BatchNormalization && k == 4) {
		*d = (draw){1.0, 0.25, 0.5, 1.5};
		return 1;
	}
	if ((n->op == PN_OP_BatchNormalization || n->op == PN_OP_LayerNormalization ||
	     n->op == PN_OP_InstanceNormalization || n->op == PN_OP_GroupNormalization) && k == 1) {
		*d = (draw){1.0, 0.05, 0.5, 1.5};
		return 1;
	}
	return 0;
}

/* The draw that v's readers call for, through up to 4 pass-on ops: 1 and
 * *d, or 0 when none of them says. */
static int role_draw(const pn_graph *g, int v, draw *d)
{
	return pn_each_use(g, v, 4, passes_values_on, role_use, d);
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
	role_draw(g, v, &d);
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
 * blind draw has no channels, only its per-layer scale).  float32, the
 * common case, stores without put's type test an element. */
static void fill(pn_tensor *t, pn_rng *r, draw d, const pn_wmeta *m)
{
	int is_int = !pn_dtype_is_float(t->dtype);
	double scale = m && m->scale != 0 ? m->scale : 1;
	int a = pn_weight_channel_axis(t->rank, t->dims);
	int64_t per = a >= 0 ? t->numel / t->dims[a] : t->numel;
	float *f = t->dtype == PN_FLOAT ? t->data : NULL;
	for (int64_t c = 0, i = 0; i < t->numel; c++) {
		draw dc = channel_draw(m, d, c);
		const int64_t end = t->numel - i < per ? t->numel : i + per;
		if (f) {
			for (; i < end; i++)
				f[i] = (float)(scale * draw_one(r, &dc));
			continue;
		}
		for (; i < end; i++)
			put(t, i, scale * draw_one(r, &dc), is_int);
	}
}

/* The whole tensor's draw: its statistics, else by its role. */
static draw whole_draw(const pn_graph *g, int value)
{
	const pn_value *v = &g->values[value];
	const pn_wmeta *m = v->meta;
	if (m && m->has_stats)
		return (draw){m->mean, m->std, m->min, m->max};
	if (!pn_dtype_is_float(v->type.dtype))
		return (draw){0, 0, 0, 0};
	return default_draw(g, value);
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
	pn_rng_seed(&r, seed, pn_draw_stream(g, value));
	draw d = whole_draw(g, value);
	fill(t, &r, d, v->meta);
	return t;
}

void pn_weight_draw(const pn_graph *g, int value, double out[4])
{
	draw d = whole_draw(g, value);
	out[0] = d.mean;
	out[1] = d.std;
	out[2] = d.lo;
	out[3] = d.hi;
}
