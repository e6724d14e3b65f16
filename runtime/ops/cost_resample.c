/*
 * cost_resample.c - costs of resampling (Resize, Upsample, GridSample,
 * RoiAlign, MaxRoiPool) and spectral ops (DFT, STFT).
 *
 * Resamplers count interpolation taps per output element: a tap is one
 * multiply-add (2 FLOPs) of an input element by its weight.  Nearest
 * neighbour takes one input element and computes nothing: one operation
 * per output, like the default.  Traffic is the default (the input read
 * once, which is what a kernel whose neighbourhoods overlap in cache
 * moves).
 */
#include <string.h>

#include "runtime/ops/cost_impl.h"

/* Taps of an interpolation mode over d interpolated dims: 2^d for
 * (bi/tri)linear, 4^d for (bi)cubic, 0 for nearest. */
static double mode_taps(const char *mode, int d)
{
	double per_dim = strstr(mode, "cubic") ? 4 : strstr(mode, "linear") ? 2 : 0;
	double taps = 1;
	for (int i = 0; i < d; i++)
		taps *= per_dim;
	return per_dim ? taps : 0;
}

/* Resize and Upsample interpolate over the dims whose size changes. */
static int resize(pn_costctx *c)
{
	const pn_type *x = pn_cin(c, 0), *y = pn_cout(c, 0);
	if (!x || !y || x->rank != y->rank)
		return 1;
	int d = 0;
	for (int i = 0; i < x->rank; i++)
		d += x->dims[i] != y->dims[i];
	double taps = mode_taps(pn_attr_str(c->node, "mode", "nearest"), d);
	c->flops = pn_type_numel(y) * (taps ? 2 * taps : 1);
	return 0;
}

int pn_cost_Resize(pn_costctx *c)
{
	return resize(c);
}

int pn_cost_Upsample(pn_costctx *c)
{
	return resize(c);
}

/* GridSample: taps over every spatial dim of X per output element, plus
 * turning each grid coordinate from [-1, 1] into an input position (a
 * multiply-add, 2), shared by all channels. */
int pn_cost_GridSample(pn_costctx *c)
{
	const pn_type *x = pn_cin(c, 0);
	if (!x || x->rank < 3 || !pn_cout(c, 0))
		return 1;
	const char *dflt = c->opset >= 20 ? "linear" : "bilinear";
	double taps = mode_taps(pn_attr_str(c->node, "mode", dflt), x->rank - 2);
	c->flops = pn_cout_numel(c, 0) * (taps ? 2 * taps : 1) + 2 * pn_cin_numel(c, 1);
	return 0;
}

/* RoiAlign: each output bin averages (or maxes) sampling_ratio^2 bilinear
 * samples (4 taps each) and then divides once.  sampling_ratio 0 is
 * adaptive (ceil(roi size / bins), which depends on the boxes): counted
 * as 2, the usual value. */
int pn_cost_RoiAlign(pn_costctx *c)
{
	double sr = (double)pn_attr_int(c->node, "sampling_ratio", 0);
	if (sr <= 0)
		sr = 2;
	return pn_cost_per_output(c, sr * sr * 4 * 2 + 1);
}

/* MaxRoiPool: every input element inside a region is compared once per
 * region; the regions come from data, so count the worst case, each region
 * the whole image: R * C * H * W. */
int pn_cost_MaxRoiPool(pn_costctx *c)
{
	const pn_type *x = pn_cin(c, 0), *y = pn_cout(c, 0);
	if (!x || !y || x->rank != 4 || y->rank != 4)
		return 1;
	c->flops = (double)y->dims[0] * (double)y->dims[1] * (double)x->dims[2] * (double)x->dims[3];
	return 0;
}

/* --- spectral ---------------------------------------------------------------------------- */

/* A complex FFT of length n: 5 n log2 n FLOPs (the usual radix-2 count;
 * real input is counted the same, an upper bound), at least n. */
static double fft_flops(double n)
{
	return n >= 2 ? 5 * n * pn_clog2(n) : n;
}

static int64_t scalar_int(const pn_costctx *c, int i, int64_t dflt)
{
	const pn_tensor *v = pn_cval(c, i);
	return v && v->numel == 1 && pn_dtype_is_int(v->dtype) ? pn_tensor_get_i64(v, 0) : dflt;
}

/* DFT over one axis of X [..., n, ..., 1|2]: one transform per position of
 * the other dims.  The axis is an attribute up to opset 17 (default 1) and
 * an input from opset 20 (default -2); dft_length, when known, is the
 * transform length (zero-padded or truncated input). */
int pn_cost_DFT(pn_costctx *c)
{
	const pn_type *x = pn_cin(c, 0);
	if (!x || x->rank < 2)
		return 1;
	int64_t axis = c->opset >= 20 ? scalar_int(c, 2, -2) : pn_attr_int(c->node, "axis", 1);
	int64_t n = pn_cdim(x, axis);
	if (n < 0)
		return 1;
	if (!n) {
		c->flops = 0;
		return 0;
	}
	double len = (double)scalar_int(c, 1, n);
	double transforms = pn_type_numel(x) / ((double)n * (double)x->dims[x->rank - 1]);
	c->flops = transforms * fft_flops(len);
	return 0;
}

/* STFT: per batch and frame, the window multiply (frame_length) and one
 * FFT of frame_length.  The frame length is the window's length, else the
 * frame_length input, else what the output's bins imply. */
int pn_cost_STFT(pn_costctx *c)
{
	const pn_type *y = pn_cout(c, 0), *w = pn_cin(c, 2);
	if (!y || y->rank != 4)
		return 1;
	double fl;
	if (w && w->rank == 1)
		fl = (double)w->dims[0];
	else if (scalar_int(c, 3, -1) > 0)
		fl = (double)scalar_int(c, 3, -1);
	else if (pn_attr_int(c->node, "onesided", 1))
		fl = 2 * (double)(y->dims[2] - 1);
	else
		fl = (double)y->dims[2];
	double frames = (double)y->dims[0] * (double)y->dims[1];
	c->flops = frames * (fft_flops(fl) + (w ? fl : 0));
	return 0;
}
