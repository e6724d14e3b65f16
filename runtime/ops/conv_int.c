/*
 * conv_int.c - the integer convolutions: ConvInteger (int32 output) and
 * QLinearConv (requantized to uint8/int8).
 *
 * Both shift inputs by their zero points into int32 first, so padding reads
 * 0 (= the zero point, as the spec means it) and the GEMM is plain int32,
 * exact whatever the summation order.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/infer.h"
#include "runtime/kernel.h"
#include "runtime/ops/conv.h"

static int is_8bit(int dtype)
{
	return dtype == PN_UINT8 || dtype == PN_INT8;
}

/* Zero point of channel i: zp is absent (0), a scalar, or one per channel. */
static int zero_point(pn_kctx *k, const pn_tensor *zp, int dtype, int64_t channels,
		      int32_t *out)
{
	if (!zp || !zp->numel) {
		for (int64_t i = 0; i < channels; i++)
			out[i] = 0;
		return 0;
	}
	if (zp->dtype != dtype)
		return pn_kfail(k, "zero point is %s, its tensor is %s", pn_dtype_name(zp->dtype),
				pn_dtype_name(dtype));
	if (zp->numel != 1 && zp->numel != channels)
		return pn_kfail(k, "zero point has %lld values for %lld channels", (long long)zp->numel,
				(long long)channels);
	for (int64_t i = 0; i < channels; i++)
		out[i] = (int32_t)pn_tensor_get_i64(zp, zp->numel == 1 ? 0 : i);
	return 0;
}

/* dst[i] = t[i] - zp[i / per], t uint8 or int8. */
static void shift(const pn_tensor *t, const int32_t *zp, int64_t per, int32_t *dst)
{
	if (t->dtype == PN_UINT8) {
		const uint8_t *s = t->data;
		for (int64_t i = 0; i < t->numel; i++)
			dst[i] = (int32_t)s[i] - zp[i / per];
	} else {
		const int8_t *s = t->data;
		for (int64_t i = 0; i < t->numel; i++)
			dst[i] = (int32_t)s[i] - zp[i / per];
	}
}

/*
 * acc[N, M, osp] = conv(x - x_zp, w - w_zp) (+ bias), where w_zp is a scalar
 * or one per output channel.
 */
static int conv_acc(pn_kctx *k, const pn_conv_geom *g, const pn_tensor *x, const pn_tensor *xzp,
		    const pn_tensor *w, const pn_tensor *wzp, const pn_tensor *bias, int32_t *acc)
{
	if (!is_8bit(x->dtype) || !is_8bit(w->dtype))
		return pn_kfail(k, "x is %s and w is %s, expected uint8/int8", pn_dtype_name(x->dtype),
				pn_dtype_name(w->dtype));
	if (bias && (bias->dtype != PN_INT32 || bias->numel != g->M))
		return pn_kfail(k, "bias must be int32[%lld]", (long long)g->M);
	const int64_t rows = g->Cg * g->ksz, np = pn_conv_cols(rows, g->osp);
	int32_t xz, *wz = malloc(sizeof(int32_t) * (size_t)(g->M + 1));
	int32_t *xs = malloc(sizeof(int32_t) * (size_t)(x->numel + 1));
	int32_t *ws = malloc(sizeof(int32_t) * (size_t)(w->numel + 1));
	int32_t *col = malloc(sizeof(int32_t) * (size_t)(rows * np + 1));
	int rc = (!wz || !xs || !ws || !col) ? pn_kfail(k, "out of memory") : 0;
	if (!rc && xzp && xzp->numel > 1)
		rc = pn_kfail(k, "x_zero_point must be a scalar");
	if (!rc)
		rc = zero_point(k, xzp, x->dtype, 1, &xz);
	if (!rc)
		rc = zero_point(k, wzp, w->dtype, g->M, wz);
	if (!rc) {
		shift(x, &xz, x->numel + 1, xs);
		shift(w, wz, rows, ws);
	}
	for (int64_t n = 0; !rc && n < g->N; n++)
		for (int64_t gi = 0; gi < g->G; gi++)
			for (int64_t p0 = 0; p0 < g->osp; p0 += np) {
				int64_t cnt = g->osp - p0 < np ? g->osp - p0 : np;
				int32_t *yg = acc + (n * g->M + gi * g->Mg) * g->osp + p0;
				pn_conv_im2col_i32(&g->w, xs + (n * g->C + gi * g->Cg) * g->isp, g->Cg,
						   p0, cnt, 0, col);
				pn_conv_gemm_i32(g->Mg, cnt, rows, ws + gi * g->Mg * rows, rows, col,
						 cnt, yg, g->osp);
				const int32_t *b = bias ? (const int32_t *)bias->data + gi * g->Mg : NULL;
				for (int64_t m = 0; b && m < g->Mg; m++)
					for (int64_t j = 0; j < cnt; j++)
						yg[m * g->osp + j] += b[m];
			}
	free(wz);
	free(xs);
	free(ws);
	free(col);
	return rc;
}

/* Inputs: x, w, x_zero_point, w_zero_point. */
int pn_kernel_ConvInteger(pn_kctx *k)
{
	pn_conv_geom g;
	if (k->n_in < 2 || !k->in[0] || !k->in[1])
		return pn_kfail(k, "ConvInteger needs x and w");
	if (pn_conv_setup(k, k->in[0], k->in[1], PN_INT32, &g))
		return -1;
	return conv_acc(k, &g, k->in[0], pn_kin(k, 2), k->in[1], pn_kin(k, 3), NULL,
			k->out[0]->data);
}

static float scalar_f32(const pn_tensor *t)
{
	return (float)pn_tensor_get_f64(t, 0);
}

/*
 * y = saturate(round_half_even(acc * x_scale * w_scale / y_scale) + y_zp),
 * the multiplier formed in float32 per output channel as ONNX Runtime does.
 */
static int requantize(pn_kctx *k, const pn_conv_geom *g, const int32_t *acc, float xs,
		      const pn_tensor *wscale, float ys, const pn_tensor *yzp, pn_tensor *y)
{
	if (wscale->numel != 1 && wscale->numel != g->M)
		return pn_kfail(k, "w_scale has %lld values for %lld channels",
				(long long)wscale->numel, (long long)g->M);
	int32_t zp = 0;
	if (zero_point(k, yzp, y->dtype, 1, &zp))
		return -1;
	const float lo = y->dtype == PN_UINT8 ? 0 : -128, hi = y->dtype == PN_UINT8 ? 255 : 127;
	#pragma omp parallel for if (g->N * g->M * g->osp > PN_PAR_MIN_WORK) schedule(static)
	for (int64_t nm = 0; nm < g->N * g->M; nm++) {
		int64_t m = nm % g->M;
		float mult = xs * (float)pn_tensor_get_f64(wscale, wscale->numel == 1 ? 0 : m) / ys;
		const int32_t *a = acc + nm * g->osp;
		for (int64_t j = 0; j < g->osp; j++) {
			float v = nearbyintf((float)a[j] * mult) + (float)zp;
			v = v < lo ? lo : v > hi ? hi : v;
			if (y->dtype == PN_UINT8)
				((uint8_t *)y->data)[nm * g->osp + j] = (uint8_t)v;
			else
				((int8_t *)y->data)[nm * g->osp + j] = (int8_t)v;
		}
	}
	return 0;
}

/* Inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
 * y_zero_point, B. */
int pn_kernel_QLinearConv(pn_kctx *k)
{
	for (int i = 0; i < 8; i++)
		if (i != 2 && i != 5 && i != 7 && !pn_kin(k, i))
			return pn_kfail(k, "QLinearConv input %d is missing", i);
	const pn_tensor *yzp = pn_kin(k, 7);
	int ydt = yzp ? yzp->dtype : PN_UINT8;
	if (!is_8bit(ydt))
		return pn_kfail(k, "y_zero_point is %s, expected uint8/int8", pn_dtype_name(ydt));
	pn_conv_geom g;
	if (pn_conv_setup(k, k->in[0], k->in[3], ydt, &g))
		return -1;
	if (k->in[1]->numel != 1 || k->in[6]->numel != 1)
		return pn_kfail(k, "x_scale and y_scale must be scalars");
	int32_t *acc = malloc(sizeof(int32_t) * (size_t)(g.N * g.M * g.osp + 1));
	if (!acc)
		return pn_kfail(k, "out of memory");
	int rc = conv_acc(k, &g, k->in[0], pn_kin(k, 2), k->in[3], pn_kin(k, 5), pn_kin(k, 8), acc);
	if (!rc)
		rc = requantize(k, &g, acc, scalar_f32(k->in[1]), k->in[4], scalar_f32(k->in[6]), yzp,
				k->out[0]);
	free(acc);
	return rc;
}
