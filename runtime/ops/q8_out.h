/*
 * q8_out.h - the requantization of the 8-bit convolution chains
 * (runtime/fuse.h), shared by its GEMM path (conv_q8.c) and its depthwise
 * path (conv_q8_dw.c): an output channel's exact integer sums, as float32,
 * through the chain's own float32 operations in its order,
 *
 *     y = float(sum) * (x_scale * w_scale[m]) + b[m];  y = act(y)
 *     q = saturate(round_half_even(y / y_scale) + y_zp)
 *
 * in a scalar form and in AVX-512 and AVX2 forms that do the same
 * operations lane by lane, so that every instruction set gives the same
 * bits.
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

typedef struct q8_out {
	const int32_t *wsum;     /* per output channel: x_zp * wsum is taken from the sums */
	const float *mult;       /* x_scale * w_scale[m] */
	const float *bias;       /* per output channel, or NULL */
	int32_t x_zp;
	int act;                 /* enum pn_q8_act */
	float act_a, act_b;
	float y_scale, y_zp, lo, hi;
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

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
/* x < lo ? lo : x > hi ? hi : x, lane by lane (NaN stays NaN; both tests
 * on x itself, as the scalar form makes them). */
static inline __m512 q8_clamp512(__m512 x, float lo, float hi)
{
	__m512 l = _mm512_set1_ps(lo), h = _mm512_set1_ps(hi);
	__mmask16 below = _mm512_cmp_ps_mask(x, l, _CMP_LT_OQ);
	x = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, h, _CMP_GT_OQ), x, h);
	return _mm512_mask_blend_ps(below, x, l);
}

static inline __attribute__((always_inline)) __m512 q8_act512(const q8_out *o, __m512 t)
{
	switch (o->act) {
	case PN_Q8_RELU:
		return _mm512_max_ps(t, _mm512_setzero_ps());    /* NaN to 0, as t > 0 ? t : 0 */
	case PN_Q8_CLIP:
		return q8_clamp512(t, o->act_a, o->act_b);
	case PN_Q8_HARDSIGMOID:
		return q8_clamp512(_mm512_add_ps(_mm512_mul_ps(_mm512_set1_ps(o->act_a), t),
						 _mm512_set1_ps(o->act_b)),
				   0.0f, 1.0f);
	case PN_Q8_HARDSWISH:
		return _mm512_mul_ps(t, q8_clamp512(_mm512_add_ps(_mm512_mul_ps(
							     t, _mm512_set1_ps((float)(1.0 / 6.0))),
								 _mm512_set1_ps(0.5f)),
						    0.0f, 1.0f));
	default:
		return t;
	}
}

/* 16 exact sums x as 16 output bytes. */
static inline __attribute__((always_inline)) __m128i q8_finish512(const q8_out *o, float mult,
								  float b, __m512 x)
{
	__m512 t = q8_act512(o, _mm512_add_ps(_mm512_mul_ps(x, _mm512_set1_ps(mult)),
					      _mm512_set1_ps(b)));
	t = _mm512_roundscale_ps(_mm512_div_ps(t, _mm512_set1_ps(o->y_scale)),
				 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	/* max_ps gives its second operand for NaN: lo, as q8_finish1 */
	t = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(t, _mm512_set1_ps(o->y_zp)),
					_mm512_set1_ps(o->lo)),
			  _mm512_set1_ps(o->hi));
	/* in range: the low byte of each int32 is the value */
	return _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(t));
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
	q8_store16(y, q8_finish512(o, mult, b, x), n);
}
#elif defined(__AVX2__)
static inline __m256 q8_clamp256(__m256 x, float lo, float hi)
{
	__m256 l = _mm256_set1_ps(lo), h = _mm256_set1_ps(hi);
	__m256 below = _mm256_cmp_ps(x, l, _CMP_LT_OQ);
	x = _mm256_blendv_ps(x, h, _mm256_cmp_ps(x, h, _CMP_GT_OQ));
	return _mm256_blendv_ps(x, l, below);
}

static inline __attribute__((always_inline)) __m256 q8_act256(const q8_out *o, __m256 t)
{
	switch (o->act) {
	case PN_Q8_RELU:
		return _mm256_max_ps(t, _mm256_setzero_ps());
	case PN_Q8_CLIP:
		return q8_clamp256(t, o->act_a, o->act_b);
	case PN_Q8_HARDSIGMOID:
		return q8_clamp256(_mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(o->act_a), t),
						 _mm256_set1_ps(o->act_b)),
				   0.0f, 1.0f);
	case PN_Q8_HARDSWISH:
		return _mm256_mul_ps(t, q8_clamp256(_mm256_add_ps(_mm256_mul_ps(
							     t, _mm256_set1_ps((float)(1.0 / 6.0))),
								 _mm256_set1_ps(0.5f)),
						    0.0f, 1.0f));
	default:
		return t;
	}
}

/* 8 exact sums x as 8 int32 output values. */
static inline __attribute__((always_inline)) __m256i q8_finish256(const q8_out *o, float mult,
								  float b, __m256 x)
{
	__m256 t = q8_act256(o, _mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(mult)),
					      _mm256_set1_ps(b)));
	t = _mm256_round_ps(_mm256_div_ps(t, _mm256_set1_ps(o->y_scale)),
			    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	t = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(t, _mm256_set1_ps(o->y_zp)),
					_mm256_set1_ps(o->lo)),
			  _mm256_set1_ps(o->hi));
	return _mm256_cvtps_epi32(t);
}

/* 16 in-range int32 as 16 bytes (packs work per 128-bit lane). */
static inline __m128i q8_pack16(const q8_out *o, __m256i q0, __m256i q1)
{
	__m256i w16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(q0, q1), 0xd8);
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
	__m128i q = q8_pack16(o, q8_finish256(o, mult, b, x0), q8_finish256(o, mult, b, x1));
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
#if defined(__AVX2__)
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
	return o;
}

#endif
