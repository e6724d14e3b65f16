/*
 * gridsample.c - GridSample (opset 16, 4-D): samples X at the normalized
 * locations of a flow grid with bilinear, nearest or bicubic interpolation
 * and zeros / border / reflection padding, with PyTorch's grid_sample
 * semantics (which the spec defers to).  Sample coordinates are computed once
 * per output pixel and reused across channels.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/infer.h"
#include "runtime/kernel.h"
#include "runtime/ops/window.h"

enum { G_BILINEAR, G_NEAREST, G_BICUBIC };
enum { P_ZEROS, P_BORDER, P_REFLECTION };

int pn_infer_GridSample(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0), *g = pn_iin(c, 1);
	int dtype = x ? x->type.dtype : PN_UNDEFINED;
	if (x && x->type.rank >= 0 && x->type.rank != 4)
		return pn_ifail(c, "X rank %d, expected 4", x->type.rank);
	if (g && g->type.rank >= 0 && g->type.rank != 4)
		return pn_ifail(c, "grid rank %d, expected 4", g->type.rank);
	int64_t dims[4] = {-1, -1, -1, -1};
	if (x && x->type.rank == 4) {
		dims[0] = x->type.dims[0];
		dims[1] = x->type.dims[1];
	}
	if (g && g->type.rank == 4) {
		if (dims[0] < 0)
			dims[0] = g->type.dims[0];
		dims[2] = g->type.dims[1];
		dims[3] = g->type.dims[2];
	}
	pn_iset(c, 0, dtype, 4, dims);
	return 0;
}

typedef struct gs_args {
	int mode, pad, align;
	int64_t H, W;
} gs_args;

/* Grid value in [-1, 1] to a pixel coordinate. */
static double unnormalize(double v, int64_t size, int align)
{
	return align ? (v + 1) / 2 * (double)(size - 1) : ((v + 1) * (double)size - 1) / 2;
}

/* Reflects v into [lo2/2, hi2/2] (bounds given doubled, as PyTorch does). */
static double reflect(double v, double lo2, double hi2)
{
	if (lo2 == hi2)
		return 0;
	double lo = lo2 / 2, span = (hi2 - lo2) / 2;
	v = fabs(v - lo);
	double extra = fmod(v, span);
	int64_t flips = (int64_t)floor(v / span);
	return flips % 2 == 0 ? extra + lo : span - extra + lo;
}

static double clip(double v, int64_t size)
{
	return v < 0 ? 0 : v > (double)(size - 1) ? (double)(size - 1) : v;
}

/* Applies border / reflection padding to a pixel coordinate. */
static double pad_coord(double v, int64_t size, const gs_args *a)
{
	if (a->pad == P_BORDER)
		return clip(v, size);
	if (a->pad == P_REFLECTION) {
		v = a->align ? reflect(v, 0, 2.0 * (double)(size - 1)) : reflect(v, -1, 2.0 * (double)size - 1);
		return clip(v, size);
	}
	return v;
}

/* Up to 16 taps: flat input offsets and weights (out-of-range taps dropped). */
typedef struct taps {
	int n;
	int64_t off[16];
	double wt[16];
} taps;

static void add_tap(taps *t, const gs_args *a, int64_t y, int64_t x, double w)
{
	if (y < 0 || y >= a->H || x < 0 || x >= a->W || w == 0)
		return;
	t->off[t->n] = y * a->W + x;
	t->wt[t->n++] = w;
}

static void cubic_coeffs(double t, double *c)
{
	const double A = -0.75;
	double x = t + 1;
	c[0] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
	c[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
	x = 1 - t;
	c[2] = ((A + 2) * x - (A + 3)) * x * x + 1;
	x = 2 - t;
	c[3] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
}

static void sample_taps(const gs_args *a, double gx, double gy, taps *t)
{
	t->n = 0;
	double x = unnormalize(gx, a->W, a->align), y = unnormalize(gy, a->H, a->align);
	if (a->mode == G_BICUBIC) {
		/* padding applies to each tap's coordinate, not to the sample point */
		double fx = floor(x), fy = floor(y), cx[4], cy[4];
		cubic_coeffs(x - fx, cx);
		cubic_coeffs(y - fy, cy);
		for (int j = 0; j < 4; j++)
			for (int i = 0; i < 4; i++) {
				double px = pad_coord(fx - 1 + i, a->W, a), py = pad_coord(fy - 1 + j, a->H, a);
				add_tap(t, a, (int64_t)floor(py), (int64_t)floor(px), cx[i] * cy[j]);
			}
		return;
	}
	x = pad_coord(x, a->W, a);
	y = pad_coord(y, a->H, a);
	if (a->mode == G_NEAREST) {
		add_tap(t, a, (int64_t)nearbyint(y), (int64_t)nearbyint(x), 1.0);
		return;
	}
	double fx = floor(x), fy = floor(y), lx = x - fx, ly = y - fy;
	int64_t x0 = (int64_t)fx, y0 = (int64_t)fy;
	add_tap(t, a, y0, x0, (1 - ly) * (1 - lx));
	add_tap(t, a, y0, x0 + 1, (1 - ly) * lx);
	add_tap(t, a, y0 + 1, x0, ly * (1 - lx));
	add_tap(t, a, y0 + 1, x0 + 1, ly * lx);
}

static int gs_args_of(pn_kctx *k, gs_args *a)
{
	const char *m = pn_attr_str(k->node, "mode", "bilinear");
	const char *p = pn_attr_str(k->node, "padding_mode", "zeros");
	if (!strcmp(m, "bilinear") || !strcmp(m, "linear"))
		a->mode = G_BILINEAR;
	else if (!strcmp(m, "nearest"))
		a->mode = G_NEAREST;
	else if (!strcmp(m, "bicubic") || !strcmp(m, "cubic"))
		a->mode = G_BICUBIC;
	else
		return pn_kfail(k, "unknown mode '%s'", m);
	if (!strcmp(p, "zeros"))
		a->pad = P_ZEROS;
	else if (!strcmp(p, "border"))
		a->pad = P_BORDER;
	else if (!strcmp(p, "reflection"))
		a->pad = P_REFLECTION;
	else
		return pn_kfail(k, "unknown padding_mode '%s'", p);
	a->align = (int)pn_attr_int(k->node, "align_corners", 0);
	return 0;
}

int pn_kernel_GridSample(pn_kctx *k)
{
	const pn_tensor *x = k->in[0], *g = pn_kin(k, 1);
	if (x->rank != 4 || !g || g->rank != 4 || g->dims[3] != 2 || g->dims[0] != x->dims[0])
		return pn_kfail(k, "X must be [N, C, H, W] and grid [N, H_out, W_out, 2]");
	gs_args a;
	if (gs_args_of(k, &a))
		return -1;
	a.H = x->dims[2];
	a.W = x->dims[3];
	const int64_t N = x->dims[0], C = x->dims[1], OH = g->dims[1], OW = g->dims[2];
	pn_tensor *y = pn_out_alloc(k, 0, x->dtype, 4, (int64_t[]){N, C, OH, OW});
	if (!y)
		return -1;
	int xd = x->dtype == PN_DOUBLE;
	float *xf = xd ? NULL : pn_win_load_f32(x);
	float *gf = malloc(sizeof(float) * (size_t)(g->numel + 1));
	double *yd = malloc(sizeof(double) * (size_t)(y->numel + 1));
	int rc = ((!xd && !xf) || !gf || !yd) ? pn_kfail(k, "unsupported dtype or out of memory") : 0;
	for (int64_t i = 0; !rc && i < g->numel; i++)
		gf[i] = (float)pn_tensor_get_f64(g, i);
	if (!rc && a.H > 0 && a.W > 0) {
		#pragma omp parallel for if (N * OH * OW * C * 4 > PN_PAR_MIN_WORK) schedule(static)
		for (int64_t row = 0; row < N * OH; row++) {
			int64_t n = row / OH, oh = row % OH;
			for (int64_t ow = 0; ow < OW; ow++) {
				taps t;
				const float *gp = gf + ((n * OH + oh) * OW + ow) * 2;
				sample_taps(&a, gp[0], gp[1], &t);
				for (int64_t c = 0; c < C; c++) {
					int64_t base = (n * C + c) * a.H * a.W;
					double acc = 0;
					for (int i = 0; i < t.n; i++)
						acc += t.wt[i] * (xd ? ((const double *)x->data)[base + t.off[i]]
								     : xf[base + t.off[i]]);
					yd[((n * C + c) * OH + oh) * OW + ow] = acc;
				}
			}
		}
	} else if (!rc) {
		memset(yd, 0, sizeof(double) * (size_t)y->numel);
	}
	if (!rc && y->dtype == PN_FLOAT)
		for (int64_t i = 0; i < y->numel; i++)
			((float *)y->data)[i] = (float)yd[i];
	else if (!rc && y->dtype == PN_DOUBLE)
		memcpy(y->data, yd, sizeof(double) * (size_t)y->numel);
	else
		for (int64_t i = 0; !rc && i < y->numel; i++)
			pn_tensor_set_f64(y, i, yd[i]);
	if (xf && xf != x->data)
		free(xf);
	free(gf);
	free(yd);
	return rc;
}
