/*
 * roi.c - region-of-interest pooling: MaxRoiPool (Fast R-CNN, integer bins)
 * and RoiAlign (Mask R-CNN, bilinear samples), following the reference
 * semantics ONNX Runtime implements.  Output elements are independent, so
 * (roi, channel) planes are the parallel unit.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/infer.h"
#include "runtime/kernel.h"
#include "runtime/ops/window.h"

/* --- inference --------------------------------------------------------------------- */

static void set_roi_out(pn_ictx *c, const pn_tinfo *x, int64_t rois, int64_t h, int64_t w)
{
	int64_t dims[4] = {rois, x && x->type.rank == 4 ? x->type.dims[1] : -1, h, w};
	pn_iset(c, 0, x ? x->type.dtype : PN_UNDEFINED, 4, dims);
}

int pn_infer_MaxRoiPool(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0), *r = pn_iin(c, 1);
	int64_t ps[3];
	if (pn_attr_ints(c->node, "pooled_shape", ps, 3) != 2)
		return pn_ifail(c, "pooled_shape must hold 2 values");
	if (x && x->type.rank >= 0 && x->type.rank != 4)
		return pn_ifail(c, "X rank %d, expected 4", x->type.rank);
	set_roi_out(c, x, r && r->type.rank == 2 ? r->type.dims[0] : -1, ps[0], ps[1]);
	return 0;
}

int pn_infer_RoiAlign(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0), *r = pn_iin(c, 1), *b = pn_iin(c, 2);
	if (x && x->type.rank >= 0 && x->type.rank != 4)
		return pn_ifail(c, "X rank %d, expected 4", x->type.rank);
	int64_t n = r && r->type.rank == 2 ? r->type.dims[0] : -1;
	if (n < 0 && b && b->type.rank == 1)
		n = b->type.dims[0];
	set_roi_out(c, x, n, pn_attr_int(c->node, "output_height", 1),
		    pn_attr_int(c->node, "output_width", 1));
	return 0;
}

/* --- shared ------------------------------------------------------------------------------ */

/* Runs fn on float32 views of X and rois and a float32 output buffer. */
typedef int (*roi_fn)(pn_kctx *k, const float *x, const float *rois, float *y);

static int run_f32(pn_kctx *k, const pn_tensor *rois_t, roi_fn fn)
{
	const pn_tensor *x = k->in[0];
	pn_tensor *y = k->out[0];
	float *xf = pn_win_load_f32(x), *rf = NULL;
	float *yf = y->dtype == PN_FLOAT ? y->data : malloc(sizeof(float) * (size_t)(y->numel + 1));
	if (rois_t->dtype == PN_DOUBLE) {
		rf = malloc(sizeof(float) * (size_t)(rois_t->numel + 1));
		for (int64_t i = 0; rf && i < rois_t->numel; i++)
			rf[i] = (float)((const double *)rois_t->data)[i];
	} else {
		rf = pn_win_load_f32(rois_t);
	}
	int rc = 0;
	if (x->dtype == PN_DOUBLE || !xf || !rf || !yf)
		rc = pn_kfail(k, "unsupported dtype %s or out of memory", pn_dtype_name(x->dtype));
	else
		rc = fn(k, xf, rf, yf);
	if (!rc && yf != y->data)
		pn_win_store_f32(y, yf);
	if (xf != x->data)
		free(xf);
	if (rf != rois_t->data)
		free(rf);
	if (yf != y->data)
		free(yf);
	return rc;
}

/* Allocates the [num_rois, C, ph, pw] output and runs fn in float32. */
static int roi_dispatch(pn_kctx *k, const pn_tensor *rois, int64_t n_rois, int64_t ph, int64_t pw,
			roi_fn fn)
{
	const pn_tensor *x = k->in[0];
	if (x->rank != 4)
		return pn_kfail(k, "X rank %d, expected 4", x->rank);
	pn_tensor *y = pn_out_alloc(k, 0, x->dtype, 4, (int64_t[]){n_rois, x->dims[1], ph, pw});
	if (!y)
		return -1;
	if (x->dtype != PN_DOUBLE)
		return run_f32(k, rois, fn);
	/* float64: compute in float32 on converted copies (RoI ops are not
	 * precision-critical and no model feeds them doubles in practice). */
	pn_tensor *xf = pn_tensor_new(PN_FLOAT, 4, x->dims), *yf = pn_tensor_new(PN_FLOAT, 4, y->dims);
	float *rf = malloc(sizeof(float) * (size_t)(rois->numel + 1));
	int rc = (!xf || !yf || !rf) ? pn_kfail(k, "out of memory") : 0;
	if (!rc) {
		for (int64_t i = 0; i < x->numel; i++)
			((float *)xf->data)[i] = (float)((const double *)x->data)[i];
		for (int64_t i = 0; i < rois->numel; i++)
			rf[i] = (float)pn_tensor_get_f64(rois, i);
		rc = fn(k, xf->data, rf, yf->data);
	}
	for (int64_t i = 0; !rc && i < y->numel; i++)
		((double *)y->data)[i] = ((float *)yf->data)[i];
	pn_tensor_free(xf);
	pn_tensor_free(yf);
	free(rf);
	return rc;
}

/* --- MaxRoiPool ---------------------------------------------------------------------------- */

static int maxroi_f32(pn_kctx *k, const float *x, const float *rois, float *y)
{
	const pn_tensor *xt = k->in[0];
	const pn_tensor *yt = k->out[0];
	const int64_t C = xt->dims[1], H = xt->dims[2], W = xt->dims[3];
	const int64_t R = yt->dims[0], PH = yt->dims[2], PW = yt->dims[3];
	const float scale = pn_attr_float(k->node, "spatial_scale", 1.0f);
	for (int64_t r = 0; r < R; r++) {
		int64_t b = (int64_t)rois[r * 5];
		if (b < 0 || b >= xt->dims[0])
			return pn_kfail(k, "roi %lld has batch index %lld", (long long)r, (long long)b);
	}
	#pragma omp parallel for if (R * C * H * W > PN_PAR_MIN_WORK) schedule(static)
	for (int64_t rc = 0; rc < R * C; rc++) {
		const float *roi = rois + rc / C * 5;
		const float *xp = x + ((int64_t)roi[0] * C + rc % C) * H * W;
		/* Caffe's RoIPool: corners rounded to pixels, the RoI at least 1x1. */
		int64_t x1 = (int64_t)roundf(roi[1] * scale), y1 = (int64_t)roundf(roi[2] * scale);
		int64_t x2 = (int64_t)roundf(roi[3] * scale), y2 = (int64_t)roundf(roi[4] * scale);
		int64_t rh = y2 - y1 + 1 > 1 ? y2 - y1 + 1 : 1, rw = x2 - x1 + 1 > 1 ? x2 - x1 + 1 : 1;
		float bh = (float)rh / (float)PH, bw = (float)rw / (float)PW;
		for (int64_t ph = 0; ph < PH; ph++) {
			int64_t hs = (int64_t)floorf((float)ph * bh) + y1;
			int64_t he = (int64_t)ceilf((float)(ph + 1) * bh) + y1;
			hs = hs < 0 ? 0 : hs > H ? H : hs;
			he = he < 0 ? 0 : he > H ? H : he;
			for (int64_t pw = 0; pw < PW; pw++) {
				int64_t ws = (int64_t)floorf((float)pw * bw) + x1;
				int64_t we = (int64_t)ceilf((float)(pw + 1) * bw) + x1;
				ws = ws < 0 ? 0 : ws > W ? W : ws;
				we = we < 0 ? 0 : we > W ? W : we;
				float best = he <= hs || we <= ws ? 0.0f : -FLT_MAX;
				for (int64_t h = hs; h < he; h++)
					for (int64_t w = ws; w < we; w++)
						best = xp[h * W + w] > best ? xp[h * W + w] : best;
				y[(rc * PH + ph) * PW + pw] = best;
			}
		}
	}
	return 0;
}

int pn_kernel_MaxRoiPool(pn_kctx *k)
{
	const pn_tensor *rois = pn_kin(k, 1);
	int64_t ps[3];
	if (pn_attr_ints(k->node, "pooled_shape", ps, 3) != 2 || ps[0] < 1 || ps[1] < 1)
		return pn_kfail(k, "pooled_shape must hold 2 positive values");
	if (!rois || rois->rank != 2 || rois->dims[1] != 5)
		return pn_kfail(k, "rois must be [num_rois, 5]");
	return roi_dispatch(k, rois, rois->dims[0], ps[0], ps[1], maxroi_f32);
}

/* --- RoiAlign ------------------------------------------------------------------------------ */

/* Bilinear taps of one sample point: 4 positions and weights (all 0 when the
 * point lies more than a pixel outside the map). */
typedef struct sample {
	int64_t pos[4];
	double wt[4];
} sample;

static void bilinear_sample(double y, double x, int64_t H, int64_t W, sample *s)
{
	memset(s, 0, sizeof(*s));
	if (y < -1.0 || y > (double)H || x < -1.0 || x > (double)W)
		return;
	y = y <= 0 ? 0 : y;
	x = x <= 0 ? 0 : x;
	int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1, x1;
	if (y0 >= H - 1) {
		y0 = y1 = H - 1;
		y = (double)y0;
	} else {
		y1 = y0 + 1;
	}
	if (x0 >= W - 1) {
		x0 = x1 = W - 1;
		x = (double)x0;
	} else {
		x1 = x0 + 1;
	}
	double ly = y - (double)y0, lx = x - (double)x0, hy = 1.0 - ly, hx = 1.0 - lx;
	s->pos[0] = y0 * W + x0;
	s->pos[1] = y0 * W + x1;
	s->pos[2] = y1 * W + x0;
	s->pos[3] = y1 * W + x1;
	s->wt[0] = hy * hx;
	s->wt[1] = hy * lx;
	s->wt[2] = ly * hx;
	s->wt[3] = ly * lx;
}

typedef struct align_args {
	double scale, offset;
	int64_t ratio;
	int max_mode, half_pixel;
} align_args;

/* One (roi, channel) plane of RoiAlign output. */
static void align_plane(const align_args *a, const float *xp, int64_t H, int64_t W,
			const float *roi, int64_t PH, int64_t PW, float *y)
{
	double x1 = roi[0] * a->scale - a->offset, y1 = roi[1] * a->scale - a->offset;
	double rw = roi[2] * a->scale - a->offset - x1, rh = roi[3] * a->scale - a->offset - y1;
	if (!a->half_pixel) {
		/* output_half_pixel (RoiAlign-10): RoIs are at least one pixel. */
		rw = rw > 1.0 ? rw : 1.0;
		rh = rh > 1.0 ? rh : 1.0;
	}
	double bh = rh / (double)PH, bw = rw / (double)PW;
	int64_t gh = a->ratio > 0 ? a->ratio : (int64_t)ceil(rh / (double)PH);
	int64_t gw = a->ratio > 0 ? a->ratio : (int64_t)ceil(rw / (double)PW);
	double count = (double)(gh * gw > 1 ? gh * gw : 1);
	for (int64_t ph = 0; ph < PH; ph++)
		for (int64_t pw = 0; pw < PW; pw++) {
			double acc = 0.0;
			int first = 1;
			for (int64_t iy = 0; iy < gh; iy++) {
				double yy = y1 + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
				for (int64_t ix = 0; ix < gw; ix++) {
					double xx = x1 + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
					sample s;
					bilinear_sample(yy, xx, H, W, &s);
					if (!a->max_mode) {
						for (int t = 0; t < 4; t++)
							acc += s.wt[t] * xp[s.pos[t]];
						continue;
					}
					/* max mode: the largest weighted tap, as ONNX Runtime does */
					double v = s.wt[0] * xp[s.pos[0]];
					for (int t = 1; t < 4; t++)
						v = s.wt[t] * xp[s.pos[t]] > v ? s.wt[t] * xp[s.pos[t]] : v;
					acc = first || v > acc ? v : acc;
					first = 0;
				}
			}
			y[ph * PW + pw] = (float)(a->max_mode ? acc : acc / count);
		}
}

static int align_args_of(pn_kctx *k, align_args *a)
{
	const char *mode = pn_attr_str(k->node, "mode", "avg");
	const char *ctm = pn_attr_str(k->node, "coordinate_transformation_mode",
				      k->opset >= 16 ? "half_pixel" : "output_half_pixel");
	if (strcmp(mode, "avg") && strcmp(mode, "max"))
		return pn_kfail(k, "unknown mode '%s'", mode);
	if (strcmp(ctm, "half_pixel") && strcmp(ctm, "output_half_pixel"))
		return pn_kfail(k, "unknown coordinate_transformation_mode '%s'", ctm);
	a->max_mode = !strcmp(mode, "max");
	a->half_pixel = !strcmp(ctm, "half_pixel");
	a->offset = a->half_pixel ? 0.5 : 0.0;
	a->scale = pn_attr_float(k->node, "spatial_scale", 1.0f);
	a->ratio = pn_attr_int(k->node, "sampling_ratio", 0);
	return 0;
}

static int align_f32(pn_kctx *k, const float *x, const float *rois, float *y)
{
	const pn_tensor *xt = k->in[0], *yt = k->out[0], *bi = k->in[2];
	const int64_t C = xt->dims[1], H = xt->dims[2], W = xt->dims[3];
	const int64_t R = yt->dims[0], PH = yt->dims[2], PW = yt->dims[3];
	align_args a;
	if (align_args_of(k, &a))
		return -1;
	for (int64_t r = 0; r < R; r++) {
		int64_t b = pn_tensor_get_i64(bi, r);
		if (b < 0 || b >= xt->dims[0])
			return pn_kfail(k, "roi %lld has batch index %lld", (long long)r, (long long)b);
	}
	#pragma omp parallel for if (R * C * PH * PW * 4 > PN_PAR_MIN_WORK) schedule(static)
	for (int64_t rc = 0; rc < R * C; rc++) {
		int64_t r = rc / C, b = pn_tensor_get_i64(bi, r);
		align_plane(&a, x + (b * C + rc % C) * H * W, H, W, rois + r * 4, PH, PW,
			    y + rc * PH * PW);
	}
	return 0;
}

int pn_kernel_RoiAlign(pn_kctx *k)
{
	const pn_tensor *rois = pn_kin(k, 1), *bi = pn_kin(k, 2);
	if (!rois || rois->rank != 2 || rois->dims[1] != 4)
		return pn_kfail(k, "rois must be [num_rois, 4]");
	if (!bi || !pn_dtype_is_int(bi->dtype) || bi->numel != rois->dims[0])
		return pn_kfail(k, "batch_indices must hold one integer per roi");
	int64_t oh = pn_attr_int(k->node, "output_height", 1), ow = pn_attr_int(k->node, "output_width", 1);
	if (oh < 1 || ow < 1)
		return pn_kfail(k, "output_height/output_width must be positive");
	return roi_dispatch(k, rois, rois->dims[0], oh, ow, align_f32);
}
