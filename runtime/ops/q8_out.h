/*
 * q8_out.h - the requantization of the 8-bit convolution chains
 * (runtime/fuse.h), shared by its GEMM path (conv_q8.c) and its depthwise
 * path (conv_q8_dw.c): an output channel's exact integer sums, as float32,
 * through the chain's own float32 operations in its order,
 *
 *     y = float(sum) * (x_scale * w_scale[m]) + b[m];  y = act(y)
 *     q = saturate(round_half_even(y / y_scale) + y_zp)
 *
 * in a scalar form and a vector form (runtime/ops/vec.h: AVX-512 or
 * AVX2) that does the same operations lane by lane, so that every
 * instruction set gives the same bits.
 */
#ifndef PN_OPS_Q8_OUT_H
#define PN_OPS_Q8_OUT_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "runtime/ops/conv.h"
#include "runtime/ops/vec.h"

typedef struct q8_out {
	const int32_t *wsum;     /* per output channel: x_zp * wsum is taken from the sums */
	const float *mult;       /* x_scale * w_scale[m] */
	const float *bias;       /* per output channel, or NULL */
	int32_t x_zp;
	int act;                 /* enum pn_q8_act */
	float act_a, act_b;
	float y_scale, y_zp, lo, hi;
	float qlo, qhi;          /* lo - y_zp, hi - y_zp: the vector form's bounds */
	int32_t y_zpi;
	int u8;
} q8_out;

/*
 * The chain's float32 operations on one exact sum v (an integer as
 * float32), in its order: the scale and bias, the activation (the formulas
 * of runtime/ops/activation.c), the division by y_scale, rounding half to
 * even, the zero point, saturation (NaN to lo).  The vector forms below do
 * the same operations lane by lane, so they give the same bits.
 */
static inline float q8_act1(const q8_out *o, float t)
{
	const float a = o->act_a, b = o->act_b;
	float h;
	switch (o->act) {
	case PN_Q8_RELU:
		return t > 0.0f ? t : 0.0f;
	case PN_Q8_CLIP:
		return t < a ? a : t > b ? b : t;
	case PN_Q8_HARDSIGMOID:
		h = a * t + b;
		return h < 0.0f ? 0.0f : h > 1.0f ? 1.0f : h;
	case PN_Q8_HARDSWISH:
		h = t * (float)(1.0 / 6.0) + 0.5f;
		return t * (h < 0.0f ? 0.0f : h > 1.0f ? 1.0f : h);
	default:
		return t;
	}
}

static inline float q8_finish1(const q8_out *o, float mult, float b, float v)
{
	float t = nearbyintf(q8_act1(o, v * mult + b) / o->y_scale) + o->y_zp;
	t = t >= o->lo ? t : o->lo;
	return t > o->hi ? o->hi : t;
}

/* The vector form: 16 lanes of AVX-512 (with BW and VL for the bytes), or
 * two halves of 8 on AVX2 (vec.h's width there); none elsewhere. */
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define Q8_VEC 512
#elif defined(__AVX2__) && PN_VL == 8
#define Q8_VEC 256
#endif

#if defined(Q8_VEC)
/* q8_act1 lane by lane. */
static inline __attribute__((always_inline)) pn_vf q8_act_v(const q8_out *o, pn_vf t)
{
	switch (o->act) {
	case PN_Q8_RELU:
		return pn_vmax(t, pn_vzero());    /* NaN to 0, as t > 0 ? t : 0 */
	case PN_Q8_CLIP:
		return pn_vclamp(t, o->act_a, o->act_b);
	case PN_Q8_HARDSIGMOID:
		return pn_vclamp(pn_vadd(pn_vmul(pn_vset1(o->act_a), t), pn_vset1(o->act_b)), 0.0f,
				 1.0f);
	case PN_Q8_HARDSWISH:
		return pn_vmul(t, pn_vclamp(pn_vadd(pn_vmul(t, pn_vset1((float)(1.0 / 6.0))),
						    pn_vset1(0.5f)),
					    0.0f, 1.0f));
	default:
		return t;
	}
}

/* q8_finish1 lane by lane, up to its rounding: PN_VL exact sums x as
 * quotients y / y_scale clamped to [lo - y_zp, hi - y_zp], each lane with
 * its own scale and bias (the depthwise path holds one channel a lane).
 * q8_bytes16 / q8_pack16 round them half to even in the conversion to
 * integers and add y_zp there: the same result as rounding, adding and
 * clamping in float32 (the bounds are integers and rounding is monotonic),
 * two operations fewer. */
static inline __attribute__((always_inline)) pn_vf q8_finish_lanes(const q8_out *o, pn_vf mult,
								   pn_vf b, pn_vf x)
{
	pn_vf t = pn_vdiv(q8_act_v(o, pn_vadd(pn_vmul(x, mult), b)), pn_vset1(o->y_scale));
	/* pn_vmax keeps the bound for NaN, as q8_finish1 gives lo */
	return pn_vmin(pn_vmax(t, pn_vset1(o->qlo)), pn_vset1(o->qhi));
}

/* The same with one output channel's scale and bias in every lane. */
static inline __attribute__((always_inline)) pn_vf q8_finish_v(const q8_out *o, float mult,
							       float b, pn_vf x)
{
	return q8_finish_lanes(o, pn_vset1(mult), pn_vset1(b), x);
}
#endif

#if Q8_VEC == 512
/* 16 finished values as 16 bytes: rounded half to even (the conversion's
 * default mode), y_zp added; in range, the low byte of each int32. */
static inline __m128i q8_bytes16(const q8_out *o, __m512 t)
{
	return _mm512_cvtepi32_epi8(
		_mm512_add_epi32(_mm512_cvtps_epi32(t), _mm512_set1_epi32(o->y_zpi)));
}

/* n (1..16) bytes of q to y: a whole vector takes a plain store (a masked
 * one costs several on this machine's kind, AMD Zen 4). */
static inline void q8_store16(void *y, __m128i q, int64_t n)
{
	if (n >= 16)
		_mm_storeu_si128((__m128i *)y, q);
	else
		_mm_mask_storeu_epi8(y, (__mmask16)((1u << n) - 1), q);
}

/* The first n (1..16) of the sums v[] into n bytes at y; lanes past n are
 * neither read nor written. */
static inline __attribute__((always_inline)) void requant16(const q8_out *o, float mult, float b,
							    const float *v, void *y, int64_t n)
{
	__m512 x = n >= 16 ? _mm512_loadu_ps(v)
			   : _mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1), v);
	q8_store16(y, q8_bytes16(o, q8_finish_v(o, mult, b, x)), n);
}
#elif Q8_VEC == 256
/* 16 finished values, in two halves, as 16 bytes (packs work per 128-bit
 * lane). */
static inline __m128i q8_pack16(const q8_out *o, __m256 t0, __m256 t1)
{
	const __m256i zp = _mm256_set1_epi32(o->y_zpi);
	__m256i w16 = _mm256_permute4x64_epi64(
		_mm256_packs_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(t0), zp),
				   _mm256_add_epi32(_mm256_cvtps_epi32(t1), zp)), 0xd8);
	__m128i lo16 = _mm256_castsi256_si128(w16), hi16 = _mm256_extracti128_si256(w16, 1);
	return o->u8 ? _mm_packus_epi16(lo16, hi16) : _mm_packs_epi16(lo16, hi16);
}

/* n (1..16) bytes of q to y (a masked store costs a dozen cycles on AMD
 * Zen: the last part goes through a copy). */
static inline void q8_store16(void *y, __m128i q, int64_t n)
{
	if (n >= 16) {
		_mm_storeu_si128((__m128i *)y, q);
		return;
	}
	uint8_t r[16];
	_mm_storeu_si128((__m128i *)r, q);
	memcpy(y, r, (size_t)n);
}

static inline __attribute__((always_inline)) void requant16(const q8_out *o, float mult, float b,
							    const float *v, void *y, int64_t n)
{
	__m256 x0, x1;
	if (n >= 16) {
		x0 = _mm256_loadu_ps(v);
		x1 = _mm256_loadu_ps(v + 8);
	} else {
		float t[16] = {0};
		memcpy(t, v, sizeof(float) * (size_t)n);
		x0 = _mm256_loadu_ps(t);
		x1 = _mm256_loadu_ps(t + 8);
	}
	__m128i q = q8_pack16(o, q8_finish_v(o, mult, b, x0), q8_finish_v(o, mult, b, x1));
	q8_store16(y, q, n);
}
#endif

/* n exact sums v[] of output channel m into y, 16 at a time where the
 * machine has vectors. */
static inline __attribute__((always_inline)) void q8_requant_row(const q8_out *o, int64_t m,
							       const float *v, int64_t n, void *y)
{
	const float mult = o->mult[m], b = o->bias ? o->bias[m] : 0.0f;
	int64_t l = 0;
#if defined(Q8_VEC)
	for (; l < n; l += 16)
		requant16(o, mult, b, v + l, (char *)y + l, n - l);
#endif
	for (; l < n; l++) {
		float t = q8_finish1(o, mult, b, v[l]);
		if (o->u8)
			((uint8_t *)y)[l] = (uint8_t)t;
		else
			((int8_t *)y)[l] = (int8_t)t;
	}
}

/* The requantization of the output channels from m0 on (group or channel). */
static inline q8_out q8_out_of(const pn_conv_q8 *a, const int32_t *wsum, const float *mult, int64_t m0)
{
	const float *bias = a->bias ? a->bias->data : NULL;
	q8_out o = {.wsum = wsum ? wsum + m0 : NULL, .mult = mult + m0,
		    .bias = bias ? bias + m0 : NULL, .x_zp = a->x_zp, .act = a->act,
		    .act_a = a->act_a, .act_b = a->act_b,
		    .y_scale = a->y_scale, .y_zp = (float)a->y_zp,
		    .lo = a->y_dtype == PN_UINT8 ? 0.0f : -128.0f,
		    .hi = a->y_dtype == PN_UINT8 ? 255.0f : 127.0f, .u8 = a->y_dtype == PN_UINT8};
	/* A Relu before the quantization is the zero point as the low bound,
	 * one operation fewer per element, for a finite y_scale > 0: t <= 0
	 * (and NaN, which the Relu makes 0) gives y_zp either way, and t > 0
	 * the same quotient. */
	if (o.act == PN_Q8_RELU && o.y_scale > 0.0f && o.y_scale <= FLT_MAX) {
		o.act = PN_Q8_NONE;
		o.lo = o.lo > o.y_zp ? o.lo : o.y_zp;
	}
	o.y_zpi = a->y_zp;
	o.qlo = o.lo - o.y_zp;
	o.qhi = o.hi - o.y_zp;
	return o;
}

#endif
