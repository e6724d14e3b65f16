/*
 * resize.c - Resize (opsets 10, 11, 13, 18) and the deprecated Upsample
 * (1, 7, 9).
 *
 * Every mode is separable: along each axis, output index o reads a few input
 * indices with weights (1 tap for nearest, 2 for linear, 4 for cubic, more
 * with antialias), computed once per call as in the ONNX reference
 * (coordinates in double, edge-clamped taps, the ratio convention of
 * interpolate_1d_with_x).  An output element is the tensor product of its
 * axes' taps; axes that are not resized collapse to one tap, so NCHW
 * bilinear costs four multiply-adds per element.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "runtime/infer.h"
#include "runtime/kernel.h"
#include "runtime/ops/vec.h"

enum { M_NEAREST, M_LINEAR, M_CUBIC };
enum { T_HALF_PIXEL, T_PYTORCH_HALF_PIXEL, T_ALIGN_CORNERS, T_ASYMMETRIC, T_TF_HALF_PIXEL_NN,
       T_TF_CROP_AND_RESIZE };
enum { N_ROUND_PREFER_FLOOR, N_ROUND_PREFER_CEIL, N_FLOOR, N_CEIL, N_SIMPLE };

typedef struct rs_plan {
	int rank;
	int mode, ctm, nearest, exclude, antialias;
	double cubic_a, extrap;
	int64_t in[PN_MAX_RANK], out[PN_MAX_RANK];  /* out -1: unknown */
	double scale[PN_MAX_RANK];   /* the scale coordinates are transformed with */
	double lout[PN_MAX_RANK];    /* "length_resized": scale * in, or the given size */
	double roi_s[PN_MAX_RANK], roi_e[PN_MAX_RANK];
} rs_plan;

/* --- attributes and inputs ----------------------------------------------------------- */

static int lookup(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

static int read_modes(rs_plan *p, const pn_node *node, int opset, char *err)
{
	static const char *const modes[] = {"nearest", "linear", "cubic", "bilinear"};
	static const char *const ctms[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
					   "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
	static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
	const char *m = pn_attr_str(node, "mode", "nearest");
	p->mode = lookup(m, modes, 4);
	if (p->mode == 3)
		p->mode = M_LINEAR;   /* Upsample-1 calls it bilinear */
	if (p->mode < 0 || (p->mode == M_CUBIC && opset < 11))
		return pn_fail(err, "unknown mode '%s'", m);
	int legacy = !strcmp(node->op_type, "Upsample") || opset < 11;
	if (legacy) {
		/* Upsample and Resize-10: asymmetric coordinates; nearest rounds
		 * down when upsampling and up when downsampling (as ONNX Runtime). */
		p->ctm = T_ASYMMETRIC;
		p->nearest = N_SIMPLE;
	} else {
		const char *c = pn_attr_str(node, "coordinate_transformation_mode", "half_pixel");
		const char *n = pn_attr_str(node, "nearest_mode", "round_prefer_floor");
		p->ctm = lookup(c, ctms, 6);
		p->nearest = lookup(n, nms, 4);
		if (p->ctm < 0 || (p->ctm == T_TF_HALF_PIXEL_NN && opset >= 13))
			return pn_fail(err, "unknown coordinate_transformation_mode '%s'", c);
		if (p->nearest < 0)
			return pn_fail(err, "unknown nearest_mode '%s'", n);
	}
	p->cubic_a = pn_attr_float(node, "cubic_coeff_a", -0.75f);
	p->exclude = (int)pn_attr_int(node, "exclude_outside", 0);
	p->extrap = pn_attr_float(node, "extrapolation_value", 0.0f);
	p->antialias = opset >= 18 && pn_attr_int(node, "antialias", 0) && p->mode != M_NEAREST;
	return 0;
}

/* Reads up to max values of a float or integer 1-D tensor as doubles. */
static int read_values(const pn_tensor *t, double *out, int max)
{
	int n = (int)(t->numel < max ? t->numel : max);
	for (int i = 0; i < n; i++)
		out[i] = pn_tensor_get_f64(t, i);
	return (int)t->numel;
}

/* The inputs that steer Resize/Upsample; *unknown is set when one is present
 * but its contents are not known (inference before values exist). */
typedef struct rs_inputs {
	const pn_tensor *roi, *scales, *sizes;
	int unknown;
} rs_inputs;

/* Axes the scales/sizes/roi of Resize-18 refer to (all, by default). */
static int read_axes(const pn_node *node, int opset, int rank, int *axes, char *err)
{
	int64_t a[PN_MAX_RANK + 1];
	int n = opset >= 18 ? pn_attr_ints(node, "axes", a, PN_MAX_RANK + 1) : -1;
	if (n < 0) {
		for (int i = 0; i < rank; i++)
			axes[i] = i;
		return rank;
	}
	if (n > rank)
		return pn_fail(err, "axes has %d entries for rank %d", n, rank);
	for (int i = 0; i < n; i++) {
		int64_t v = a[i] < 0 ? a[i] + rank : a[i];
		if (v < 0 || v >= rank)
			return pn_fail(err, "axis %lld out of range", (long long)a[i]);
		axes[i] = (int)v;
	}
	return n;
}

/* Upsample-1/-7 keep their scales in attributes. */
static int attr_scales(const pn_node *node, int rank, double *sc, char *err)
{
	float f[PN_MAX_RANK];
	const pn_attr *a = pn_attr_find(node, "scales");
	if (a) {
		if (a->type != PN_ATTR_FLOATS || a->n != rank)
			return pn_fail(err, "scales has %d entries for rank %d", a->n, rank);
		for (int i = 0; i < rank; i++)
			sc[i] = a->floats[i];
		return 0;
	}
	if (rank != 4)
		return pn_fail(err, "Upsample-1 needs a 4-D input");
	f[0] = pn_attr_float(node, "height_scale", 1.0f);
	f[1] = pn_attr_float(node, "width_scale", 1.0f);
	sc[0] = sc[1] = 1;
	sc[2] = f[0];
	sc[3] = f[1];
	return 0;
}

/* keep_aspect_ratio_policy (Resize-18) turns sizes into one common scale. */
static int aspect_policy(const pn_node *node, int opset, char *err)
{
	const char *s = opset >= 18 ? pn_attr_str(node, "keep_aspect_ratio_policy", "stretch")
				    : "stretch";
	static const char *const pol[] = {"stretch", "not_larger", "not_smaller"};
	int v = lookup(s, pol, 3);
	return v < 0 ? pn_fail(err, "unknown keep_aspect_ratio_policy '%s'", s) : v;
}

static int plan_sizes(rs_plan *p, const pn_node *node, int opset, const int *axes, int na,
		      const double *sz, char *err)
{
	int pol = aspect_policy(node, opset, err);
	if (pol < 0)
		return -1;
	int in_known = 1;
	for (int i = 0; i < na; i++) {
		if (sz[i] < 0)
			return pn_fail(err, "negative size %g", sz[i]);
		in_known &= p->in[axes[i]] >= 0;
	}
	/* Stretching gives the sizes as they are; the aspect-ratio policies
	 * need the input sizes to pick one common scale. */
	double common = pol == 1 ? INFINITY : 0;
	for (int i = 0; i < na && in_known; i++) {
		double s = sz[i] / (double)p->in[axes[i]];
		common = pol == 1 ? fmin(common, s) : fmax(common, s);
	}
	for (int i = 0; i < na; i++) {
		int a = axes[i];
		if (!pol) {
			p->out[a] = (int64_t)sz[i];
			p->scale[a] = in_known ? (double)p->out[a] / (double)p->in[a] : 1;
			p->lout[a] = (double)p->out[a];
		} else {
			p->scale[a] = in_known ? common : 1;
			p->out[a] = in_known ? (int64_t)round(common * (double)p->in[a]) : -1;
			p->lout[a] = p->scale[a] * (double)p->in[a];
		}
	}
	return 0;
}

static int plan_scales(rs_plan *p, const int *axes, int na, const double *sc, char *err)
{
	for (int i = 0; i < na; i++) {
		int a = axes[i];
		if (!(sc[i] > 0))
			return pn_fail(err, "scale %g on axis %d must be positive", sc[i], a);
		p->scale[a] = sc[i];
		/* in float, as ONNX's shape inference (and ONNX Runtime) do */
		p->out[a] = p->in[a] < 0 ? -1 : (int64_t)floorf((float)p->in[a] * (float)sc[i]);
		p->lout[a] = sc[i] * (double)p->in[a];
	}
	return 0;
}

/* Fills p from the node and its input values; out[a] = -1 where unknowable. */
static int plan_init(rs_plan *p, const pn_node *node, int opset, int rank, const int64_t *in,
		     const rs_inputs *ri, char *err)
{
	memset(p, 0, sizeof(*p));
	p->rank = rank;
	if (rank < 1 || rank > PN_MAX_RANK)
		return pn_fail(err, "input rank %d", rank);
	if (read_modes(p, node, opset, err))
		return -1;
	int axes[PN_MAX_RANK];
	int na = read_axes(node, opset, rank, axes, err);
	if (na < 0)
		return -1;
	for (int i = 0; i < rank; i++) {
		p->in[i] = in[i];
		p->out[i] = in[i];
		p->scale[i] = 1;
		p->lout[i] = (double)in[i];
		p->roi_s[i] = 0;
		p->roi_e[i] = 1;
	}
	double v[2 * PN_MAX_RANK];
	if (ri->roi && ri->roi->numel && p->ctm == T_TF_CROP_AND_RESIZE) {
		if (read_values(ri->roi, v, 2 * PN_MAX_RANK) != 2 * na)
			return pn_fail(err, "roi has %lld values, expected %d", (long long)ri->roi->numel,
				       2 * na);
		for (int i = 0; i < na; i++) {
			p->roi_s[axes[i]] = v[i];
			p->roi_e[axes[i]] = v[na + i];
		}
	}
	int legacy_attr = !strcmp(node->op_type, "Upsample") && opset < 9;
	if (legacy_attr)
		return attr_scales(node, rank, v, err) ? -1 : plan_scales(p, axes, rank, v, err);
	if (ri->unknown) {
		for (int i = 0; i < na; i++)
			p->out[axes[i]] = -1;
		return 0;
	}
	for (int i = 0; i < rank; i++)
		if (in[i] < 0)
			p->out[i] = -1;
	if (ri->sizes && ri->sizes->numel) {
		if (ri->scales && ri->scales->numel)
			return pn_fail(err, "both scales and sizes are given");
		if (read_values(ri->sizes, v, PN_MAX_RANK) != na)
			return pn_fail(err, "sizes has %lld values, expected %d",
				       (long long)ri->sizes->numel, na);
		return plan_sizes(p, node, opset, axes, na, v, err);
	}
	if (!ri->scales || !ri->scales->numel)
		return pn_fail(err, "neither scales nor sizes is given");
	if (read_values(ri->scales, v, PN_MAX_RANK) != na)
		return pn_fail(err, "scales has %lld values, expected %d", (long long)ri->scales->numel,
			       na);
	return plan_scales(p, axes, na, v, err);
}

/* Input slots of roi, scales, sizes for this op and opset (-1: none). */
static void input_slots(const pn_node *node, int opset, int *roi, int *scales, int *sizes)
{
	*roi = *scales = *sizes = -1;
	if (!strcmp(node->op_type, "Upsample")) {
		if (opset >= 9)
			*scales = 1;
	} else if (opset < 11) {
		*scales = 1;
	} else {
		*roi = 1;
		*scales = 2;
		*sizes = 3;
	}
}

/* --- inference ------------------------------------------------------------------------ */

static const pn_tensor *known(const pn_ictx *c, int slot, int *unknown)
{
	const pn_tinfo *t = slot >= 0 ? pn_iin(c, slot) : NULL;
	if (!t)
		return NULL;
	if (!t->value || !t->value->data) {
		/* An empty (shape [0]) scales or roi is as good as absent. */
		if (t->type.rank == 1 && t->type.dims[0] == 0)
			return NULL;
		*unknown = 1;
		return NULL;
	}
	return t->value;
}

int pn_infer_Resize(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0);
	int dtype = x ? x->type.dtype : PN_UNDEFINED;
	if (!x || x->type.rank < 0) {
		pn_iset(c, 0, dtype, -1, NULL);
		return 0;
	}
	int s_roi, s_scales, s_sizes;
	input_slots(c->node, c->opset, &s_roi, &s_scales, &s_sizes);
	rs_inputs ri = {0};
	int roi_unknown = 0;   /* the RoI never changes the output shape */
	ri.roi = known(c, s_roi, &roi_unknown);
	ri.scales = known(c, s_scales, &ri.unknown);
	ri.sizes = known(c, s_sizes, &ri.unknown);
	rs_plan p;
	if (plan_init(&p, c->node, c->opset, x->type.rank, x->type.dims, &ri, c->err))
		return -1;
	pn_iset(c, 0, dtype, x->type.rank, p.out);
	return 0;
}

/* --- taps --------------------------------------------------------------------------- */

/* Input coordinate of output index o along axis a. */
static double source_coord(const rs_plan *p, int a, int64_t o)
{
	double x = (double)o, s = p->scale[a], lin = (double)p->in[a], lout = p->lout[a];
	switch (p->ctm) {
	case T_HALF_PIXEL:
		return (x + 0.5) / s - 0.5;
	case T_PYTORCH_HALF_PIXEL:
		return lout > 1 ? (x + 0.5) / s - 0.5 : 0;
	case T_ALIGN_CORNERS:
		return lout == 1 ? 0 : x * (lin - 1) / (lout - 1);
	case T_TF_HALF_PIXEL_NN:
		return (x + 0.5) / s;
	case T_TF_CROP_AND_RESIZE:
		if (lout > 1)
			return p->roi_s[a] * (lin - 1) +
			       x * (p->roi_e[a] - p->roi_s[a]) * (lin - 1) / (lout - 1);
		return 0.5 * (p->roi_s[a] + p->roi_e[a]) * (lin - 1);
	default:
		return x / s;
	}
}

static int64_t nearest_index(const rs_plan *p, int a, double x)
{
	double f = floor(x), t = x - f;
	switch (p->nearest) {
	case N_ROUND_PREFER_FLOOR:
		return (int64_t)(t <= 0.5 ? f : f + 1);
	case N_ROUND_PREFER_CEIL:
		return (int64_t)(t < 0.5 ? f : f + 1);
	case N_FLOOR:
		return (int64_t)f;
	case N_CEIL:
		return (int64_t)ceil(x);
	default:
		return (int64_t)(p->scale[a] < 1 ? ceil(x) : f);
	}
}

static double cubic_weight(double x, double A)
{
	x = fabs(x);
	if (x <= 1)
		return ((A + 2) * x - (A + 3)) * x * x + 1;
	if (x < 2)
		return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
	return 0;
}

/* Taps of one axis: T per output index, or T = 1 when the axis is untouched. */
typedef struct rs_axis {
	int T;
	int64_t *idx;
	double *wt;
	uint8_t *outside;    /* tf_crop_and_resize: coordinate outside the input */
} rs_axis;

/* Offsets j (relative to floor(x)) a filter reaches: [*j0, *j0 + T). */
static int filter_span(const rs_plan *p, int a, int64_t *j0, double *sc)
{
	*sc = p->antialias && p->scale[a] < 1 ? p->scale[a] : 1.0;
	if (p->mode == M_NEAREST) {
		*j0 = 0;
		return 1;
	}
	double support = p->mode == M_LINEAR ? 1.0 : 2.0;
	*j0 = (int64_t)floor(-support / *sc) + 1;
	return (int)(2 - 2 * *j0);
}

static int axis_taps(const rs_plan *p, int a, rs_axis *ax)
{
	int64_t n = p->out[a], lin = p->in[a], j0;
	double sc;
	int T = filter_span(p, a, &j0, &sc);
	ax->T = T;
	ax->idx = malloc(sizeof(int64_t) * (size_t)(n * T + 1));
	ax->wt = malloc(sizeof(double) * (size_t)(n * T + 1));
	ax->outside = calloc((size_t)n + 1, 1);
	if (!ax->idx || !ax->wt || !ax->outside)
		return -1;
	for (int64_t o = 0; o < n; o++) {
		double x = source_coord(p, a, o);
		int64_t *idx = ax->idx + o * T;
		double *wt = ax->wt + o * T;
		if (p->ctm == T_TF_CROP_AND_RESIZE && (x < 0 || x > (double)(lin - 1)))
			ax->outside[o] = 1;
		if (p->mode == M_NEAREST) {
			int64_t i = nearest_index(p, a, x);
			idx[0] = i < 0 ? 0 : i >= lin ? lin - 1 : i;
			wt[0] = 1;
			continue;
		}
		double f = floor(x), t = x - f, sum = 0;
		for (int j = 0; j < T; j++) {
			double d = ((double)(j0 + j) - t) * sc;
			double w = p->mode == M_LINEAR ? fmax(0.0, 1 - fabs(d)) : cubic_weight(d, p->cubic_a);
			int64_t i = (int64_t)f + j0 + j;
			if (p->exclude && (i < 0 || i >= lin))
				w = 0;
			idx[j] = i < 0 ? 0 : i >= lin ? lin - 1 : i;
			wt[j] = w;
			sum += w;
		}
		/* Renormalise when taps were dropped or the filter was stretched. */
		if ((p->exclude || sc != 1.0) && sum != 0)
			for (int j = 0; j < T; j++)
				wt[j] /= sum;
	}
	return 0;
}

/* An axis whose every output reads exactly one input with weight 1 keeps one
 * tap (the common case of N and C). */
static void compact(rs_axis *ax, int64_t n)
{
	int T = ax->T;
	int64_t *best = malloc(sizeof(int64_t) * (size_t)(n + 1));
	if (!best)
		return;
	for (int64_t o = 0; o < n; o++) {
		int ones = 0, others = 0;
		for (int j = 0; j < T; j++) {
			double w = ax->wt[o * T + j];
			if (w == 1.0) {
				ones++;
				best[o] = ax->idx[o * T + j];
			} else if (w != 0.0) {
				others++;
			}
		}
		if (ones != 1 || others) {
			free(best);
			return;
		}
	}
	for (int64_t o = 0; o < n; o++) {
		ax->idx[o] = best[o];
		ax->wt[o] = 1.0;
	}
	ax->T = 1;
	free(best);
}

/* --- the resampler ---------------------------------------------------------------------- */

typedef struct rs_run {
	const rs_plan *p;
	rs_axis ax[PN_MAX_RANK];
	int64_t istride[PN_MAX_RANK];
	int64_t rows, max_combos;
} rs_run;

/* The outer-axes tap combinations of one output row: offsets and weights;
 * returns their count, or -1 when the row lies outside a tf_crop_and_resize
 * RoI. */
static int64_t row_combos(const rs_run *r, int64_t row, int64_t *off, double *wt)
{
	const rs_plan *p = r->p;
	int64_t n = 1, o[PN_MAX_RANK];
	for (int a = p->rank - 2; a >= 0; a--) {
		o[a] = row % p->out[a];
		row /= p->out[a];
	}
	off[0] = 0;
	wt[0] = 1;
	for (int a = 0; a < p->rank - 1; a++) {
		const rs_axis *ax = &r->ax[a];
		if (ax->outside[o[a]])
			return -1;
		int64_t m = 0;
		for (int64_t c = 0; c < n; c++)
			for (int j = 0; j < ax->T; j++) {
				double w = ax->wt[o[a] * ax->T + j];
				if (w == 0)
					continue;
				off[n + m] = off[c] + ax->idx[o[a] * ax->T + j] * r->istride[a];
				wt[n + m] = wt[c] * w;
				m++;
			}
		/* move the new combinations to the front */
		memmove(off, off + n, sizeof(int64_t) * (size_t)m);
		memmove(wt, wt + n, sizeof(double) * (size_t)m);
		n = m;
	}
	return n;
}

#define DEFINE_RESAMPLE(NAME, TY)                                                                \
	static int NAME(const rs_run *r, const TY *x, TY *y)                                      \
	{                                                                                       \
		const rs_plan *p = r->p;                                                        \
		const rs_axis *last = &r->ax[p->rank - 1];                                      \
		const int64_t W = p->out[p->rank - 1], LT = last->T;                            \
		int fail = 0;                                                                   \
		_Pragma("omp parallel if (r->rows * W * r->max_combos * LT > PN_PAR_MIN_WORK)") \
		{                                                                               \
			int64_t *off = malloc(sizeof(int64_t) * (size_t)(2 * r->max_combos));   \
			double *cw = malloc(sizeof(double) * (size_t)(2 * r->max_combos));      \
			if (!off || !cw) {                                                      \
				_Pragma("omp atomic write")                                     \
				fail = 1;                                                       \
			}                                                                       \
			_Pragma("omp for schedule(static)")                                     \
			for (int64_t row = 0; row < r->rows; row++) {                           \
				if (!off || !cw)                                                \
					continue;                                               \
				TY *yr = y + row * W;                                            \
				int64_t nc = row_combos(r, row, off, cw);                      \
				for (int64_t o = 0; o < W; o++) {                               \
					if (nc < 0 || last->outside[o]) {                       \
						yr[o] = (TY)p->extrap;                           \
						continue;                                       \
					}                                                       \
					const int64_t *li = last->idx + o * LT;                 \
					const double *lw = last->wt + o * LT;                   \
					double acc = 0;                                         \
					for (int64_t c = 0; c < nc; c++) {                      \
						const TY *xc = x + off[c];                       \
						double s = 0;                                   \
						for (int64_t j = 0; j < LT; j++)                \
							s += lw[j] * xc[li[j]];                 \
						acc += cw[c] * s;                               \
					}                                                       \
					yr[o] = (TY)acc;                                         \
				}                                                               \
			}                                                                       \
			free(off);                                                              \
			free(cw);                                                               \
		}                                                                               \
		return fail ? -1 : 0;                                                           \
	}

DEFINE_RESAMPLE(resample_f32, float)
DEFINE_RESAMPLE(resample_f64, double)

/* Whether every output copies one input element (nearest, or an axis left
 * as it is): then resampling is a gather, with no weights to apply. */
static int is_gather(const rs_run *r)
{
	const rs_plan *p = r->p;
	for (int a = 0; a < p->rank; a++) {
		const rs_axis *ax = &r->ax[a];
		if (ax->T != 1)
			return 0;
		for (int64_t o = 0; o < p->out[a]; o++)
			if (ax->wt[o] != 1.0 || ax->outside[o])
				return 0;
	}
	return 1;
}

/* The gather: y[row][o] = x[offset of row + idx[o]], the same values the
 * weighted loop computes (weights of exactly 1), a plain indexed copy. */
#define DEFINE_GATHER(NAME, TY)                                                                  \
	static void NAME(const rs_run *r, const TY *x, TY *y)                                    \
	{                                                                                       \
		const rs_plan *p = r->p;                                                        \
		const int64_t W = p->out[p->rank - 1], *li = r->ax[p->rank - 1].idx;            \
		_Pragma("omp parallel for if (r->rows * W > PN_PAR_MIN_WORK) schedule(static)") \
		for (int64_t row = 0; row < r->rows; row++) {                                   \
			int64_t off = 0, rem = row;                                             \
			for (int a = p->rank - 2; a >= 0; a--) {                                \
				off += r->ax[a].idx[rem % p->out[a]] * r->istride[a];           \
				rem /= p->out[a];                                               \
			}                                                                       \
			const TY *xr = x + off;                                                 \
			TY *yr = y + row * W;                                                   \
			for (int64_t o = 0; o < W; o++)                                         \
				yr[o] = xr[li[o]];                                              \
		}                                                                               \
	}

DEFINE_GATHER(gather_scalar_f32, float)
DEFINE_GATHER(gather_f64, double)

/*
 * float32 gather, a vector of outputs at a time: when each vector's sources
 * lie within PN_VL consecutive inputs (upsampling, mild downsampling), one
 * load and one lane permutation fill it, and an output row that reads the
 * same input row as the one before (nearest upsampling repeats rows) is a
 * copy of it.  Each thread takes a contiguous range of rows, so that the
 * row it copies is its own.
 */
static int gather_f32(pn_kctx *k, const rs_run *r, const float *x, float *y)
{
	const rs_plan *p = r->p;
	const int64_t W = p->out[p->rank - 1], IW = p->in[p->rank - 1];
	const int64_t *li = r->ax[p->rank - 1].idx, nv = (W + PN_VL - 1) / PN_VL;
	int64_t *base = pn_kscratch(k, sizeof(int64_t) * (size_t)nv);
	int32_t *perm = pn_kscratch(k, sizeof(int32_t) * (size_t)(nv * PN_VL));
	if (!base || !perm)
		return -1;
	for (int64_t v = 0; v < nv; v++) {
		base[v] = li[v * PN_VL];
		for (int64_t l = 0; l < PN_VL; l++) {
			int64_t o = v * PN_VL + l, d = o < W ? li[o] - base[v] : 0;
			if (d < 0 || d >= PN_VL || base[v] + d >= IW) {
				gather_scalar_f32(r, x, y);
				return 0;
			}
			perm[v * PN_VL + l] = (int32_t)d;
		}
	}
	int nt = r->rows * W > PN_PAR_MIN_WORK && !omp_in_parallel() ? omp_get_max_threads() : 1;
	#pragma omp parallel num_threads(nt)
	{
		int t = omp_get_thread_num(), T = omp_get_num_threads();
		int64_t r0 = r->rows * t / T, r1 = r->rows * (t + 1) / T, prev = -1;
		for (int64_t row = r0; row < r1; row++) {
			int64_t off = 0, rem = row;
			for (int a = p->rank - 2; a >= 0; a--) {
				off += r->ax[a].idx[rem % p->out[a]] * r->istride[a];
				rem /= p->out[a];
			}
			float *yr = y + row * W;
			if (off == prev) {
				memcpy(yr, yr - W, sizeof(float) * (size_t)W);
				continue;
			}
			prev = off;
			const float *xr = x + off;
			for (int64_t v = 0; v < nv; v++) {
				int64_t n = IW - base[v] < PN_VL ? IW - base[v] : PN_VL;
				pn_vf val = pn_vload_perm(xr + base[v], n, perm + v * PN_VL);
				if ((v + 1) * PN_VL <= W)
					pn_vstore(yr + v * PN_VL, val);
				else
					pn_vstore_n(yr + v * PN_VL, val, W - v * PN_VL);
			}
		}
	}
	return 0;
}

static void run_free(rs_run *r)
{
	for (int a = 0; a < PN_MAX_RANK; a++) {
		free(r->ax[a].idx);
		free(r->ax[a].wt);
		free(r->ax[a].outside);
	}
}

static int run_init(rs_run *r, const rs_plan *p)
{
	memset(r, 0, sizeof(*r));
	r->p = p;
	r->rows = 1;
	r->max_combos = 1;
	for (int a = p->rank - 1; a >= 0; a--) {
		r->istride[a] = a == p->rank - 1 ? 1 : r->istride[a + 1] * p->in[a + 1];
		if (axis_taps(p, a, &r->ax[a]))
			return -1;
		compact(&r->ax[a], p->out[a]);
		if (a < p->rank - 1) {
			r->rows *= p->out[a];
			r->max_combos *= r->ax[a].T;
		}
	}
	return 0;
}

/* Integer and narrow float dtypes go through a double copy (rounded back to
 * the nearest integer for integer types). */
static int resample_staged(rs_run *r, const pn_tensor *x, pn_tensor *y)
{
	double *xd = malloc(sizeof(double) * (size_t)(x->numel + 1));
	double *yd = malloc(sizeof(double) * (size_t)(y->numel + 1));
	int rc = (!xd || !yd) ? -1 : 0;
	for (int64_t i = 0; !rc && i < x->numel; i++)
		xd[i] = pn_tensor_get_f64(x, i);
	if (!rc)
		rc = resample_f64(r, xd, yd);
	int is_int = pn_dtype_is_int(y->dtype);
	for (int64_t i = 0; !rc && i < y->numel; i++)
		pn_tensor_set_f64(y, i, is_int ? nearbyint(yd[i]) : yd[i]);
	free(xd);
	free(yd);
	return rc;
}

static int kernel_resize(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	int s_roi, s_scales, s_sizes;
	input_slots(k->node, k->opset, &s_roi, &s_scales, &s_sizes);
	rs_inputs ri = {s_roi >= 0 ? pn_kin(k, s_roi) : NULL, s_scales >= 0 ? pn_kin(k, s_scales) : NULL,
			s_sizes >= 0 ? pn_kin(k, s_sizes) : NULL, 0};
	rs_plan p;
	if (plan_init(&p, k->node, k->opset, x->rank, x->dims, &ri, k->err))
		return -1;
	pn_tensor *y = pn_out_alloc(k, 0, x->dtype, x->rank, p.out);
	if (!y)
		return -1;
	if (!y->numel)
		return 0;
	if (!x->numel)
		return pn_kfail(k, "cannot resize an empty tensor to a non-empty one");
	rs_run r;
	int rc = run_init(&r, &p);
	if (!rc && is_gather(&r) && (x->dtype == PN_FLOAT || x->dtype == PN_DOUBLE)) {
		if (x->dtype == PN_FLOAT)
			rc = gather_f32(k, &r, x->data, y->data);
		else
			gather_f64(&r, x->data, y->data);
	} else if (!rc) {
		if (x->dtype == PN_FLOAT)
			rc = resample_f32(&r, x->data, y->data);
		else if (x->dtype == PN_DOUBLE)
			rc = resample_f64(&r, x->data, y->data);
		else if (pn_dtype_is_float(x->dtype) || pn_dtype_is_int(x->dtype))
			rc = resample_staged(&r, x, y);
		else
			rc = pn_kfail(k, "unsupported dtype %s", pn_dtype_name(x->dtype));
	}
	run_free(&r);
	if (rc && !*k->err)
		pn_kfail(k, "out of memory");
	return rc;
}

int pn_kernel_Resize(pn_kctx *k)
{
	return kernel_resize(k);
}

int pn_kernel_Upsample(pn_kctx *k)
{
	return kernel_resize(k);
}
