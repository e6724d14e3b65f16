/*
 * quant.c - linear quantization: QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear.
 *
 * q = saturate(round_half_even(x / scale) + zero_point) and
 * x = (q - zero_point) * scale, per tensor or per slice of one axis.  The
 * division is done in float32 for float32 inputs, as numpy does, so values
 * that land on .5 round the same way as the reference.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/infer.h"
#include "runtime/kernel.h"
#include "runtime/ops/mathutil.h"
#include "runtime/ops/quant.h"

/* Saturation range of a quantized type; -1 for types not supported. */
static int qrange(int dtype, int32_t *lo, int32_t *hi)
{
	switch (dtype) {
	case PN_UINT8: *lo = 0; *hi = 255; return 0;
	case PN_INT8: *lo = -128; *hi = 127; return 0;
	case PN_UINT16: *lo = 0; *hi = 65535; return 0;
	case PN_INT16: *lo = -32768; *hi = 32767; return 0;
	default: return -1;
	}
}

/*
 * Per-tensor or per-axis layout of scale and zero point over x: O outer
 * slices, C channels along the axis (1 for per-tensor), I inner elements.
 * Fails when the scale fits neither.
 */
static int qlayout(pn_kctx *k, const pn_tensor *x, const pn_tensor *scale, int64_t *O,
		   int64_t *C, int64_t *I)
{
	if (scale->numel == 1) {
		*O = 1;
		*C = 1;
		*I = x->numel;
		return 0;
	}
	int axis = pn_axis(pn_attr_int(k->node, "axis", 1), x->rank);
	if (axis < 0 || scale->rank != 1)
		return pn_kfail(k, "scale must be a scalar or a 1-D tensor along a valid axis");
	pn_mu_ori(x->rank, x->dims, axis, O, C, I);
	if (scale->numel != *C)
		return pn_kfail(k, "scale has %lld elements, axis %d has %lld", (long long)scale->numel,
				axis, (long long)*C);
	return 0;
}

/* Zero points as int32, one per channel (zeros when absent). */
static int32_t *zero_points(pn_kctx *k, const pn_tensor *zp, int64_t C)
{
	int32_t *z = calloc((size_t)C, sizeof(int32_t));
	if (!z) {
		pn_kfail(k, "out of memory");
		return NULL;
	}
	if (!zp)
		return z;
	if (zp->numel != C && zp->numel != 1) {
		free(z);
		pn_kfail(k, "zero point has %lld elements, scale has %lld", (long long)zp->numel,
			 (long long)C);
		return NULL;
	}
	for (int64_t c = 0; c < C; c++)
		z[c] = (int32_t)pn_tensor_get_i64(zp, zp->numel == 1 ? 0 : c);
	return z;
}

/* --- QuantizeLinear -------------------------------------------------------------------- */

int pn_infer_QuantizeLinear(pn_ictx *c)
{
	const pn_tinfo *zp = pn_iin(c, 2);
	int dt = zp ? zp->type.dtype : (int)pn_attr_int(c->node, "output_dtype", 0);
	pn_iset_like(c, 0, 0, dt ? dt : PN_UINT8);
	return 0;
}

#define DEF_QUANT(T, S, RINT)                                                                \
	static void quant_##S(const T *x, int32_t *q, int64_t O, int64_t C, int64_t I,          \
			      const T *sc, const int32_t *zp, int32_t lo, int32_t hi)          \
	{                                                                                    \
		_Pragma("omp parallel for if (O * C * I > PN_PAR_MIN_WORK) schedule(static)") \
		for (int64_t oc = 0; oc < O * C; oc++) {                                     \
			int64_t c = oc % C;                                                  \
			T s = sc[c], z = (T)zp[c], l = (T)lo, h = (T)hi;                     \
			const T *xr = x + oc * I;                                            \
			int32_t *qr = q + oc * I;                                            \
			for (int64_t i = 0; i < I; i++) {                                    \
				T v = RINT(xr[i] / s) + z;                                   \
				v = v < l ? l : v > h ? h : v;                               \
				qr[i] = (int32_t)v;                                          \
			}                                                                    \
		}                                                                            \
	}

DEF_QUANT(float, f32, nearbyintf)
DEF_QUANT(double, f64, nearbyint)

int pn_kernel_QuantizeLinear(pn_kctx *k)
{
	const pn_tensor *x = k->in[0], *scale = pn_kin(k, 1);
	pn_tensor *y = k->out[0];
	int32_t lo, hi;
	if (!scale)
		return pn_kfail(k, "y_scale is required");
	if (qrange(y->dtype, &lo, &hi))
		return pn_kfail(k, "unsupported quantized type %s", pn_dtype_name(y->dtype));
	/* float32 divides in float32 like numpy; int32 (numpy: float64) and
	 * float64 inputs in double */
	int ct = pn_mu_ctype(x->dtype) == PN_FLOAT ? PN_FLOAT : PN_DOUBLE;
	if (!pn_mu_ctype(x->dtype))
		return pn_kfail(k, "unsupported input type %s", pn_dtype_name(x->dtype));
	int64_t O, C, I;
	if (qlayout(k, x, scale, &O, &C, &I))
		return -1;
	int32_t *zp = zero_points(k, pn_kin(k, 2), C);
	if (!zp)
		return -1;
	pn_cbuf xb = {0}, sb = {0};
	int32_t *q = malloc(sizeof(int32_t) * (size_t)(x->numel + 1));
	int bad = q ? 0 : pn_kfail(k, "out of memory");
	if (!bad && (pn_mu_in(k, x, ct, &xb) || pn_mu_in(k, scale, ct, &sb)))
		bad = -1;
	if (!bad && ct == PN_FLOAT)
		quant_f32(xb.p, q, O, C, I, sb.p, zp, lo, hi);
	else if (!bad)
		quant_f64(xb.p, q, O, C, I, sb.p, zp, lo, hi);
	if (!bad)
		pn_mu_convert(PN_INT32, q, y->dtype, y->data, y->numel);
	free(q);
	free(zp);
	pn_mu_free(&xb);
	pn_mu_free(&sb);
	return bad;
}

/* --- DequantizeLinear -------------------------------------------------------------------- */

int pn_infer_DequantizeLinear(pn_ictx *c)
{
	const pn_tinfo *s = pn_iin(c, 1);
	int dt = s && pn_dtype_is_float(s->type.dtype) ? s->type.dtype : PN_FLOAT;
	pn_iset_like(c, 0, 0, dt);
	return 0;
}

/* y = (x - zero point) * scale per channel, in float32 as the reference. */
#define DEF_DEQUANT(T, S)                                                                        \
	static void dequant_##S(const T *x, float *y, int64_t O, int64_t C, int64_t I,          \
				const float *s, const int32_t *zp)                              \
	{                                                                                        \
		_Pragma("omp parallel for if (O * C * I > PN_PAR_MIN_WORK) schedule(static)")     \
		for (int64_t oc = 0; oc < O * C; oc++) {                                         \
			int64_t c = oc % C;                                                      \
			float sc = s[c];                                                         \
			int32_t z = zp[c];                                                       \
			for (int64_t i = 0; i < I; i++)                                          \
				y[oc * I + i] = (float)((int32_t)x[oc * I + i] - z) * sc;        \
		}                                                                                \
	}

DEF_DEQUANT(uint8_t, u8)
DEF_DEQUANT(int8_t, i8)
DEF_DEQUANT(int32_t, i32)

int pn_kernel_DequantizeLinear(pn_kctx *k)
{
	const pn_tensor *x = k->in[0], *scale = pn_kin(k, 1);
	pn_tensor *y = k->out[0];
	if (!scale)
		return pn_kfail(k, "x_scale is required");
	if (!pn_dtype_is_int(x->dtype))
		return pn_kfail(k, "unsupported quantized type %s", pn_dtype_name(x->dtype));
	int64_t O, C, I;
	if (qlayout(k, x, scale, &O, &C, &I))
		return -1;
	int32_t *zp = zero_points(k, pn_kin(k, 2), C);
	if (!zp)
		return -1;
	/* 8- and 32-bit x is read as it is; other integers through an int32
	 * copy */
	const int copy = x->dtype != PN_UINT8 && x->dtype != PN_INT8 && x->dtype != PN_INT32;
	int32_t *q = copy ? malloc(sizeof(int32_t) * (size_t)(x->numel + 1)) : NULL;
	float *s = malloc(sizeof(float) * (size_t)C);
	pn_cbuf yb = {0};
	int bad = (q || !copy) && s ? 0 : pn_kfail(k, "out of memory");
	if (bad || pn_mu_out(k, y, PN_FLOAT, &yb)) {
		free(q);
		free(s);
		free(zp);
		return -1;
	}
	if (copy)
		pn_mu_convert(x->dtype, x->data, PN_INT32, q, x->numel);
	pn_mu_convert(scale->dtype, scale->data, PN_FLOAT, s, C);
	if (x->dtype == PN_UINT8)
		dequant_u8(x->data, yb.p, O, C, I, s, zp);
	else if (x->dtype == PN_INT8)
		dequant_i8(x->data, yb.p, O, C, I, s, zp);
	else
		dequant_i32(copy ? q : x->data, yb.p, O, C, I, s, zp);
	free(q);
	free(s);
	free(zp);
	pn_mu_commit(y, PN_FLOAT, &yb);
	return 0;
}

/* --- DynamicQuantizeLinear ------------------------------------------------------------------- */

int pn_infer_DynamicQuantizeLinear(pn_ictx *c)
{
	pn_iset_like(c, 0, 0, PN_UINT8);
	pn_iset(c, 1, PN_FLOAT, 0, NULL);
	pn_iset(c, 2, PN_UINT8, 0, NULL);
	return 0;
}

/*
 * uint8 quantization with the range of x widened to include 0:
 * scale = (max - min) / 255, zero_point = round(-min / scale).  All in
 * float32 as the reference does; an all-zero x gets scale 0, zero point 0.
 */
int pn_kernel_DynamicQuantizeLinear(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	pn_tensor *y = k->out[0];
	if (pn_mu_ctype(x->dtype) != PN_FLOAT)
		return pn_kfail(k, "unsupported input type %s", pn_dtype_name(x->dtype));
	pn_cbuf xb;
	if (pn_mu_in(k, x, PN_FLOAT, &xb))
		return -1;
	const float *xd = xb.p;
	float mn = 0, mx = 0;
	for (int64_t i = 0; i < x->numel; i++) {
		mn = xd[i] < mn ? xd[i] : mn;
		mx = xd[i] > mx ? xd[i] : mx;
	}
	float scale = (mx - mn) / 255.0f;
	float zpf = scale > 0 ? nearbyintf((0 - mn) / scale) : 0;
	zpf = zpf < 0 ? 0 : zpf > 255 ? 255 : zpf;
	uint8_t *q = y->data;
	#pragma omp parallel for if (x->numel > PN_PAR_MIN_WORK) schedule(static)
	for (int64_t i = 0; i < x->numel; i++) {
		float v = scale > 0 ? nearbyintf(xd[i] / scale) + zpf : zpf;
		q[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
	}
	pn_mu_convert(PN_FLOAT, &scale, k->out[1]->dtype, k->out[1]->data, 1);
	((uint8_t *)k->out[2]->data)[0] = (uint8_t)zpf;
	pn_mu_free(&xb);
	return 0;
}

/* --- the quantized residual join (runtime/fuse.h's qadd chain) --------------------------- */

int pn_qadd_fits(const pn_qadd *q)
{
	const pn_tensor *a = q->a, *b = q->b;
	if (a->kind != PN_KIND_TENSOR || b->kind != PN_KIND_TENSOR || a->dtype != b->dtype ||
	    (a->dtype != PN_UINT8 && a->dtype != PN_INT8) || a->rank != b->rank)
		return 0;
	for (int d = 0; d < a->rank; d++)
		if (a->dims[d] != b->dims[d])
			return 0;
	return q->y_dtype == PN_UINT8 || q->y_dtype == PN_INT8;
}

/*
 * The nodes' own float32 operations, in their order, per element: each
 * DequantizeLinear's (x - zp) * scale, the Add, the Relu, the
 * QuantizeLinear's round(v / scale) + zp saturated.  So the same bits as
 * the five nodes, in one pass and without their four float32 tensors.
 */
#define DEF_QADD(S, TA, TY)                                                                      \
	static void qadd_##S(const pn_qadd *q, const TA *a, const TA *b, TY *y, int64_t n)      \
	{                                                                                        \
		const float sa = q->a_scale, sb = q->b_scale, sy = q->y_scale;                   \
		const float zy = (float)q->y_zp;                                                 \
		const float lo = q->y_dtype == PN_UINT8 ? 0.0f : -128.0f;                        \
		const float hi = q->y_dtype == PN_UINT8 ? 255.0f : 127.0f;                       \
		const int32_t za = q->a_zp, zb = q->b_zp;                                        \
		const int relu = q->relu;                                                        \
		_Pragma("omp parallel for if (n > PN_PAR_MIN_WORK) schedule(static)")             \
		for (int64_t i = 0; i < n; i++) {                                                \
			float v = (float)((int32_t)a[i] - za) * sa + (float)((int32_t)b[i] - zb) * sb; \
			if (relu)   /* Relu's: NaN stays */                                      \
				v = v > 0.0f ? v : (v == v ? 0.0f : v);                          \
			v = nearbyintf(v / sy) + zy;                                             \
			/* QuantizeLinear's clamp; a NaN (from a NaN scale) goes to lo */        \
			v = v >= lo ? v : lo;                                                    \
			v = v > hi ? hi : v;                                                     \
			y[i] = (TY)v;                                                            \
		}                                                                                \
	}

DEF_QADD(u8u8, uint8_t, uint8_t)
DEF_QADD(u8i8, uint8_t, int8_t)
DEF_QADD(i8u8, int8_t, uint8_t)
DEF_QADD(i8i8, int8_t, int8_t)

int pn_qadd_run(pn_kctx *k, const pn_qadd *q)
{
	if (!pn_qadd_fits(q))
		return pn_kfail(k, "quantized add: operands outside the fused loop");
	const pn_tensor *a = q->a;
	pn_tensor *y = pn_out_alloc(k, 0, q->y_dtype, a->rank, a->dims);
	if (!y)
		return -1;
	int au8 = a->dtype == PN_UINT8, yu8 = q->y_dtype == PN_UINT8;
	if (au8 && yu8)
		qadd_u8u8(q, a->data, q->b->data, y->data, a->numel);
	else if (au8)
		qadd_u8i8(q, a->data, q->b->data, y->data, a->numel);
	else if (yu8)
		qadd_i8u8(q, a->data, q->b->data, y->data, a->numel);
	else
		qadd_i8i8(q, a->data, q->b->data, y->data, a->numel);
	return 0;
}
