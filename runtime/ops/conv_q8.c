/*
 * conv_q8.c - a quantized convolution computed on 8-bit integers: the chain
 *
 *     DequantizeLinear(x) -> Conv(., DequantizeLinear(w), b) [-> Relu] -> QuantizeLinear
 *
 * that QDQ exporters (torch.ao, ORT's quantizer) write around every
 * convolution of a quantized model.  Run node by node it is a float32
 * convolution between two conversions; the session runs the chain as this
 * one kernel instead (runtime/fuse.h), as ORT does with its QLinearConv.
 *
 * The products are summed exactly in int32:
 *
 *     acc[m, p] = sum over taps t of (x[t] - x_zp) * w[m, t]
 *
 * with the padding read as x_zp (it dequantizes to 0), then requantized
 * with the float32 operations of the chain, in its order:
 *
 *     y = float(acc) * (x_scale * w_scale[m]) + b[m];  y = max(y, 0) if Relu
 *     q = saturate(round_half_even(y / y_scale) + y_zp)
 *
 * An integer sum does not depend on its order, so the result is the same
 * bits for every instruction set, thread count and blocking; it differs
 * from the node-by-node float32 chain only where that one's rounding moves a
 * value across a quantization step (then by one step).
 *
 * The GEMM is Y[m, p] = W[m, k] X[k, p] in the layout of 8-bit dot-product
 * instructions (VNNI's vpdpbusd: 4 u8 x s8 products summed into each int32
 * lane): X is packed in panels of Q8_NR output positions, each k-quad of a
 * position 4 consecutive bytes; W in panels of Q8_MR rows, each row's k-quad
 * one 32-bit word that is broadcast.  The micro-kernel keeps Q8_MR x Q8_NR
 * int32 sums in registers.
 */
#include <stdlib.h>
#include <string.h>
#include <float.h>
#include <math.h>
#include <omp.h>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "runtime/kernel.h"
#include "runtime/ops/conv.h"
#include "runtime/ops/vec.h"

/* Output channels per micro-tile: its 2 x MR accumulators, two input
 * vectors and a broadcast fit the 32 vector registers of AVX-512VL at 8
 * (8 rows tile 64 or 128 channels exactly), the 16 of AVX2 at 6. */
#if defined(__AVX512VL__)
#define Q8_MR 8
#else
#define Q8_MR 6
#endif
#define Q8_NR 16         /* output positions per micro-tile: two 8-lane vectors */
#define Q8_KMAX 65536    /* taps: 255 * 128 * 65536 < 2^31, the int32 sum cannot overflow */
#define Q8_DW_KMAX 513    /* depthwise taps: 255 * 128 * 513 < 2^24, exact in float32 */
/* Positions per segment: its im2col and packed columns (taps x positions
 * bytes each) stay in L2 while every weight panel passes over them (measured
 * on quantized MobileNet-v2 and ResNet-18: 1 MiB was 10% slower), yet at
 * least Q8_COL_MIN, so that a weight panel is used more than a few times. */
#define Q8_COL_BUDGET ((int64_t)1 << 17)
#define Q8_COL_MIN 64

/* --- requantization --------------------------------------------------------------- */

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
static inline __attribute__((always_inline)) void requant_row(const q8_out *o, int64_t m,
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

/* --- the micro-kernel ------------------------------------------------------------- */

#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
static inline __m256i dot4(__m256i acc, __m256i x, __m256i w)
{
	return _mm256_dpbusd_epi32(acc, x, w);
}
#elif defined(__AVXVNNI__)
static inline __m256i dot4(__m256i acc, __m256i x, __m256i w)
{
	return _mm256_dpbusd_avx_epi32(acc, x, w);
}
#elif defined(__AVX2__)
/*
 * vpdpbusd without VNNI, exactly: the even and the odd bytes of each 16-bit
 * lane widened to int16 (x zero-extended, w sign-extended) and multiplied
 * pairwise by vpmaddwd, whose int32 pair sums cannot overflow.  (vpmaddubsw
 * would be one instruction fewer but saturates at 2 x 255 x 127.)
 */
static inline __m256i dot4(__m256i acc, __m256i x, __m256i w)
{
	const __m256i lo = _mm256_set1_epi16(0xff);
	__m256i xe = _mm256_and_si256(x, lo), xo = _mm256_srli_epi16(x, 8);
	__m256i we = _mm256_srai_epi16(_mm256_slli_epi16(w, 8), 8), wo = _mm256_srai_epi16(w, 8);
	__m256i s = _mm256_add_epi32(_mm256_madd_epi16(xe, we), _mm256_madd_epi16(xo, wo));
	return _mm256_add_epi32(acc, s);
}
#endif

#if defined(__AVX2__)
/* acc[i][l] = sum over kq of the 4-products of W panel row i and X panel column l. */
static void q8_tile(int64_t kq_n, const uint8_t *xp, const int8_t *wp, int32_t acc[Q8_MR][Q8_NR])
{
	__m256i a[Q8_MR][2];
	for (int i = 0; i < Q8_MR; i++)
		a[i][0] = a[i][1] = _mm256_setzero_si256();
	for (int64_t kq = 0; kq < kq_n; kq++) {
		__m256i x0 = _mm256_loadu_si256((const __m256i *)(xp + kq * Q8_NR * 4));
		__m256i x1 = _mm256_loadu_si256((const __m256i *)(xp + kq * Q8_NR * 4 + 32));
		const int8_t *wk = wp + kq * Q8_MR * 4;
		for (int i = 0; i < Q8_MR; i++) {
			int32_t wq;
			memcpy(&wq, wk + i * 4, 4);
			__m256i w = _mm256_set1_epi32(wq);
			a[i][0] = dot4(a[i][0], x0, w);
			a[i][1] = dot4(a[i][1], x1, w);
		}
	}
	for (int i = 0; i < Q8_MR; i++) {
		_mm256_storeu_si256((__m256i *)acc[i], a[i][0]);
		_mm256_storeu_si256((__m256i *)(acc[i] + 8), a[i][1]);
	}
}

/* The same for the first 8 columns only: a last panel of at most 8
 * positions (a 7x7 plane has 49 = 3 x 16 + 1) does half the work. */
static void q8_tile8(int64_t kq_n, const uint8_t *xp, const int8_t *wp, int32_t acc[Q8_MR][Q8_NR])
{
	__m256i a[Q8_MR];
	for (int i = 0; i < Q8_MR; i++)
		a[i] = _mm256_setzero_si256();
	for (int64_t kq = 0; kq < kq_n; kq++) {
		__m256i x0 = _mm256_loadu_si256((const __m256i *)(xp + kq * Q8_NR * 4));
		const int8_t *wk = wp + kq * Q8_MR * 4;
		for (int i = 0; i < Q8_MR; i++) {
			int32_t wq;
			memcpy(&wq, wk + i * 4, 4);
			a[i] = dot4(a[i], x0, _mm256_set1_epi32(wq));
		}
	}
	for (int i = 0; i < Q8_MR; i++)
		_mm256_storeu_si256((__m256i *)acc[i], a[i]);
}

/* Rows m0.. of a tile's sums (rows < mc, columns < nc), less x_zp times
 * each row's weight sum, requantized into y (row stride ldy): the int32
 * sums converted in registers (an AVX-512 vector holds a row). */
static void requant_tile(const q8_out *o, int32_t acc[Q8_MR][Q8_NR], int64_t m0, int64_t mc,
			 int64_t nc, uint8_t *y, int64_t ldy)
{
	for (int64_t i = 0; i < mc; i++) {
		const int64_t m = m0 + i;
		const float mult = o->mult[m], b = o->bias ? o->bias[m] : 0.0f;
		const int32_t shift = o->x_zp * o->wsum[m];
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
		__m512i s = _mm512_sub_epi32(_mm512_loadu_si512(acc[i]), _mm512_set1_epi32(shift));
		q8_store16(y + i * ldy, q8_finish512(o, mult, b, _mm512_cvtepi32_ps(s)), nc);
#else
		const __m256i sh = _mm256_set1_epi32(shift);
		__m256i s0 = _mm256_sub_epi32(_mm256_loadu_si256((const __m256i *)acc[i]), sh);
		__m256i s1 = _mm256_sub_epi32(_mm256_loadu_si256((const __m256i *)(acc[i] + 8)), sh);
		__m128i q = q8_pack16(o, q8_finish256(o, mult, b, _mm256_cvtepi32_ps(s0)),
				      q8_finish256(o, mult, b, _mm256_cvtepi32_ps(s1)));
		q8_store16(y + i * ldy, q, nc);
#endif
	}
}

/*
 * One tile: the sums of W panel rows (mc of them, from output channel m0)
 * and X panel columns (nc), over kq_n k-quads, requantized into y (row
 * stride ldy).
 */
static inline __attribute__((always_inline)) void q8_tile_out(int64_t kq_n, const uint8_t *xp,
							      const int8_t *wp, const q8_out *o,
							      int64_t m0, int64_t mc, int64_t nc,
							      uint8_t *y, int64_t ldy)
{
	int32_t acc[Q8_MR][Q8_NR] __attribute__((aligned(64)));
	if (nc <= 8)
		q8_tile8(kq_n, xp, wp, acc);
	else
		q8_tile(kq_n, xp, wp, acc);
	requant_tile(o, acc, m0, mc, nc, y, ldy);
}
#else
static void q8_tile_out(int64_t kq_n, const uint8_t *xp, const int8_t *wp, const q8_out *o,
			int64_t m0, int64_t mc, int64_t nc, uint8_t *y, int64_t ldy)
{
	int32_t acc[Q8_MR][Q8_NR] = {{0}};
	for (int64_t kq = 0; kq < kq_n; kq++) {
		const uint8_t *xk = xp + kq * Q8_NR * 4;
		const int8_t *wk = wp + kq * Q8_MR * 4;
		for (int i = 0; i < Q8_MR; i++)
			for (int l = 0; l < Q8_NR; l++) {
				int32_t s = 0;
				for (int j = 0; j < 4; j++)
					s += (int32_t)xk[l * 4 + j] * (int32_t)wk[i * 4 + j];
				acc[i][l] += s;
			}
	}
	for (int64_t i = 0; i < mc; i++) {
		float v[Q8_NR];
		int32_t shift = o->x_zp * o->wsum[m0 + i];
		for (int l = 0; l < Q8_NR; l++)
			v[l] = (float)(acc[i][l] - shift);
		requant_row(o, m0 + i, v, nc, y + i * ldy);
	}
}
#endif

/* --- packing ---------------------------------------------------------------------- */

/* The Mg x K weights of one group as Q8_MR-row panels of k-quads, zero
 * rows and taps past the ends; wsum[m] = sum of row m. */
static void pack_w(const int8_t *w, int64_t Mg, int64_t K, int64_t kq_n, int8_t *wp,
		   int32_t *wsum)
{
	int64_t panels = (Mg + Q8_MR - 1) / Q8_MR;
	for (int64_t b = 0; b < panels; b++)
		for (int64_t kq = 0; kq < kq_n; kq++)
			for (int i = 0; i < Q8_MR; i++)
				for (int j = 0; j < 4; j++) {
					int64_t m = b * Q8_MR + i, t = kq * 4 + j;
					wp[((b * kq_n + kq) * Q8_MR + i) * 4 + j] =
						m < Mg && t < K ? w[m * K + t] : 0;
				}
	for (int64_t m = 0; m < Mg; m++) {
		int32_t s = 0;
		for (int64_t t = 0; t < K; t++)
			s += w[m * K + t];
		wsum[m] = s;
	}
}

/* One k-quad of one panel, the slow way: the panel's last positions or the
 * last taps, 0 past the ends (their products are discarded or meet zero
 * weights). */
static void pack_quad_edge(const uint8_t *col, int64_t ld, int64_t K, int64_t np, int64_t t0,
			   int64_t p0, uint8_t *d)
{
	for (int j = 0; j < 4; j++)
		for (int64_t l = 0; l < Q8_NR; l++)
			d[l * 4 + j] = t0 + j < K && p0 + l < np ? col[(t0 + j) * ld + p0 + l] : 0;
}

/* Rows t0..t0+3 of col (rows ld apart), positions p0..p0+15, interleaved:
 * d[l * 4 + j] = col[t0 + j][p0 + l] (a 4 x 16 byte transpose). */
static inline void pack_quad(const uint8_t *col, int64_t np, int64_t t0, int64_t p0, uint8_t *d)
{
#if defined(__SSE2__)
	const uint8_t *s = col + t0 * np + p0;
	__m128i r0 = _mm_loadu_si128((const __m128i *)s);
	__m128i r1 = _mm_loadu_si128((const __m128i *)(s + np));
	__m128i r2 = _mm_loadu_si128((const __m128i *)(s + 2 * np));
	__m128i r3 = _mm_loadu_si128((const __m128i *)(s + 3 * np));
	__m128i a = _mm_unpacklo_epi8(r0, r1), b = _mm_unpackhi_epi8(r0, r1);
	__m128i c = _mm_unpacklo_epi8(r2, r3), e = _mm_unpackhi_epi8(r2, r3);
	_mm_storeu_si128((__m128i *)d, _mm_unpacklo_epi16(a, c));
	_mm_storeu_si128((__m128i *)(d + 16), _mm_unpackhi_epi16(a, c));
	_mm_storeu_si128((__m128i *)(d + 32), _mm_unpacklo_epi16(b, e));
	_mm_storeu_si128((__m128i *)(d + 48), _mm_unpackhi_epi16(b, e));
#else
	for (int j = 0; j < 4; j++)
		for (int l = 0; l < Q8_NR; l++)
			d[l * 4 + j] = col[(t0 + j) * np + p0 + l];
#endif
}

/*
 * im2col of a stride-1 window whose output rows are as wide as the input's
 * (a "same" convolution, the common 3x3 one): every tap's row of columns
 * is then the input plane shifted by one offset, so it is one copy, with
 * the padding filled in before and after it and in the columns that
 * wrapped around a row's end.  The generic im2col copies one output row at
 * a time, and a 7- to 56-byte copy costs more in its call than in its
 * bytes.  1-D and 2-D windows only.
 */
static int im2col_shifts(const pn_window *w)
{
	return w->in[0] == 1 && w->out[0] == 1 && w->k[0] == 1 && w->s[1] == 1 && w->s[2] == 1 &&
	       w->out[2] == w->in[2];
}

static void im2col_shift_u8(const pn_window *w, const uint8_t *x, int64_t channels, int64_t p0,
			    int64_t np, uint8_t pad, uint8_t *col)
{
	const int64_t W = w->in[2], isp = w->in[1] * W, taps = w->k[1] * w->k[2];
	#pragma omp parallel for if (channels * taps * np > PN_PAR_MIN_WORK) schedule(static)
	for (int64_t c = 0; c < channels; c++)
		for (int64_t t = 0; t < taps; t++) {
			uint8_t *dst = col + (c * taps + t) * np;
			int64_t dy = t / w->k[2] * w->d[1] - w->pb[1], dx = t % w->k[2] * w->d[2] - w->pb[2];
			int64_t delta = dy * W + dx;
			/* positions whose shifted index is inside the plane */
			int64_t lo = -delta - p0, hi = isp - delta - p0;
			lo = lo < 0 ? 0 : lo > np ? np : lo;
			hi = hi < lo ? lo : hi > np ? np : hi;
			memset(dst, pad, (size_t)lo);
			memcpy(dst + lo, x + c * isp + p0 + lo + delta, (size_t)(hi - lo));
			memset(dst + hi, pad, (size_t)(np - hi));
			/* columns ox with ox + dx outside [0, W): they read the row
			 * before or after; each run starts at row start rs */
			int64_t a0 = dx < 0 ? 0 : W - dx, a1 = dx < 0 ? -dx : W;
			for (int64_t rs = -(p0 % W); dx && rs < np; rs += W) {
				int64_t a = rs + a0 < 0 ? 0 : rs + a0, b = rs + a1 > np ? np : rs + a1;
				for (int64_t q = a; q < b; q++)   /* a byte or two: no call */
					dst[q] = pad;
			}
		}
}

/* Columns col[K][np] (rows ld apart: np for im2col's, the plane size for a
 * pointwise convolution's input itself) as panels of Q8_NR positions of
 * k-quads: xp[((panel * kq_n + kq) * Q8_NR + l) * 4 + j] =
 * col[kq * 4 + j][panel * Q8_NR + l]. */
static void pack_x(const uint8_t *col, int64_t ld, int64_t K, int64_t np, int64_t kq_n,
		   uint8_t *xp)
{
	int64_t panels = (np + Q8_NR - 1) / Q8_NR;
	#pragma omp parallel for if (K * np > PN_PAR_MIN_WORK) schedule(static)
	for (int64_t b = 0; b < panels; b++) {
		int64_t p0 = b * Q8_NR;
		int full = p0 + Q8_NR <= np;
		for (int64_t kq = 0; kq < kq_n; kq++) {
			uint8_t *d = xp + (b * kq_n + kq) * Q8_NR * 4;
			if (full && kq * 4 + 4 <= K)
				pack_quad(col, ld, kq * 4, p0, d);
			else
				pack_quad_edge(col, ld, K, np, kq * 4, p0, d);
		}
	}
}

/* --- the convolution --------------------------------------------------------------- */

int pn_conv_q8_fits(const pn_conv_q8 *a)
{
	const pn_tensor *x = a->x, *w = a->w;
	if (x->dtype != PN_UINT8 || w->dtype != PN_INT8 || x->rank < 3 || w->rank != x->rank)
		return 0;
	if (w->dims[0] < 1 || (a->w_scale->numel != 1 && a->w_scale->numel != w->dims[0]))
		return 0;
	if (a->bias && (a->bias->kind != PN_KIND_TENSOR || a->bias->dtype != PN_FLOAT ||
			a->bias->numel != w->dims[0]))
		return 0;
	if (a->y_dtype != PN_UINT8 && a->y_dtype != PN_INT8)
		return 0;
	int64_t K = 1;
	for (int d = 1; d < w->rank; d++)
		K *= w->dims[d];
	return K >= 1 && K <= Q8_KMAX;
}

/* The requantization of the output channels from m0 on (group or channel). */
static q8_out out_of(const pn_conv_q8 *a, const int32_t *wsum, const float *mult, int64_t m0)
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

/* --- depthwise ---------------------------------------------------------------------- */

/*
 * Depthwise convolutions (one input and one output channel per group, as
 * in MobileNets) have too few taps per output for the GEMM.  Their sums are
 * taken in float32 instead, on x - x_zp and w as floats: every product and
 * partial sum is an integer of magnitude below 255 * 128 * taps < 2^24
 * (Q8_DW_KMAX bounds the taps), so float32 holds each exactly, in any order,
 * fused multiply-adds or not: the same integers as the GEMM would sum.
 *
 * Each channel plane is converted once into a padded float plane (the
 * padding 0, which is x_zp - x_zp) split into phases by the stride on every
 * axis: padded position (z, y, x) is stored in phase plane (z % sz, y % sy,
 * x % sx) at (z / sz, y / sy, x / sx).  Tap t of output (oz, oy, ox) then
 * reads its phase plane at (oz, oy, ox) plus a fixed offset, so the outputs
 * are computed over one flat index q = (oz e1 + oy) e2 + ox of the phase
 * extents e[]: every tap is one fused multiply-add over whole vectors, and
 * the q whose ox or oy lie past the output are computed and dropped (a
 * 7 x 7 plane wastes 2 columns of 9, not 9 of 16 as a vector per row would).
 */
typedef struct dw_run {
	int64_t dst;         /* offset in the phase planes */
	int64_t src;         /* offset in the input plane */
	int64_t n;           /* input columns, every s-th */
} dw_run;

typedef struct dw_plan {
	int64_t e[3];        /* phase plane extents */
	int64_t phase;       /* floats per phase plane: e0 e1 e2 */
	int64_t plane;       /* floats of all phases */
	int64_t nq;          /* flat outputs computed: (out0 - 1) e1 e2 + (out1 - 1) e2 + out2 */
	int64_t *off;        /* per tap: its phase plane's start plus its offset in it */
	dw_run *run;         /* per input row and column phase: one run, in dst order */
	int64_t nrun;
} dw_plan;

/* Padded extent of axis a: the input with its padding, and at least what
 * the last output's window reaches. */
static int64_t dw_extent(const pn_window *W, int a)
{
	int64_t e = W->in[a] + W->pb[a] + W->pe[a];
	int64_t reach = (W->out[a] - 1) * W->s[a] + (W->k[a] - 1) * W->d[a] + 1;
	return e > reach ? e : reach;
}

static int dw_run_cmp(const void *a, const void *b)
{
	int64_t x = ((const dw_run *)a)->dst, y = ((const dw_run *)b)->dst;
	return (x > y) - (x < y);
}

/* The plan's sizes, then its tables: off[ksz] and run[in0 in1 s2] (the
 * divisions by the strides happen here, once, not per channel). */
static void dw_plan_init(const pn_window *W, dw_plan *P, int64_t *off, dw_run *run)
{
	for (int a = 0; a < 3; a++)
		P->e[a] = (dw_extent(W, a) + W->s[a] - 1) / W->s[a];
	P->phase = P->e[0] * P->e[1] * P->e[2];
	P->plane = P->phase * W->s[0] * W->s[1] * W->s[2];
	P->nq = ((W->out[0] - 1) * P->e[1] + W->out[1] - 1) * P->e[2] + W->out[2];
	P->off = off;
	P->run = run;
	int64_t t = 0;
	for (int64_t kz = 0; kz < W->k[0]; kz++)
		for (int64_t ky = 0; ky < W->k[1]; ky++)
			for (int64_t kx = 0; kx < W->k[2]; kx++) {
				const int64_t c[3] = {kz * W->d[0], ky * W->d[1], kx * W->d[2]};
				int64_t ph = (c[0] % W->s[0] * W->s[1] + c[1] % W->s[1]) * W->s[2] +
					     c[2] % W->s[2];
				off[t++] = ph * P->phase +
					   (c[0] / W->s[0] * P->e[1] + c[1] / W->s[1]) * P->e[2] +
					   c[2] / W->s[2];
			}
	/* phase p of a row holds padded columns c = j s + p, input column c - pb */
	const int64_t s = W->s[2], pb = W->pb[2], in = W->in[2];
	P->nrun = 0;
	for (int64_t z = 0; z < W->in[0]; z++)
		for (int64_t r = 0; r < W->in[1]; r++) {
			int64_t pz = z + W->pb[0], py = r + W->pb[1];
			int64_t ph = (pz % W->s[0] * W->s[1] + py % W->s[1]) * s;
			int64_t row = ph * P->phase + (pz / W->s[0] * P->e[1] + py / W->s[1]) * P->e[2];
			for (int64_t p = 0; p < s; p++) {
				int64_t j0 = pb > p ? (pb - p + s - 1) / s : 0;
				int64_t j1 = in + pb - p > 0 ? (in + pb - p - 1) / s + 1 : 0;
				if (j1 > j0)
					run[P->nrun++] = (dw_run){
						.dst = row + p * P->phase + j0,
						.src = (z * W->in[1] + r) * in + j0 * s + p - pb,
						.n = j1 - j0};
			}
		}
	qsort(run, (size_t)P->nrun, sizeof(dw_run), dw_run_cmp);
}

/* d[j] = src[j * s] - zp for j < n.  Strides 1 and 2, the common ones, in
 * vectors: rows are short (a 14-wide plane would be all loop remainder).
 * With AVX-512 a last part of under 16 is stored as a whole vector, its
 * lanes past n zero (a masked store costs this machine's kind, AMD Zen 4,
 * many plain ones): d[n, n + 15) must be padding or written later. */
static void dw_run_to_f32(float *restrict d, const uint8_t *restrict src, int64_t n, int64_t s,
			  float zp)
{
	int64_t j = 0;
#if defined(__AVX512BW__) && defined(__AVX512VL__)
	const __m512 z = _mm512_set1_ps(zp);
	if (s == 1) {
		/* whole vectors with plain loads and stores, the last with masks */
		for (; j + 16 <= n; j += 16) {
			__m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(src + j)));
			_mm512_storeu_ps(d + j, _mm512_sub_ps(_mm512_cvtepi32_ps(v), z));
		}
		if (j < n) {
			__mmask16 m = (__mmask16)((1u << (n - j)) - 1);
			__m512i v = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, src + j));
			_mm512_storeu_ps(d + j, _mm512_maskz_sub_ps(m, _mm512_cvtepi32_ps(v), z));
			j = n;
		}
	}
	else if (s == 2)
		for (; j < n; j += 16) {
			/* the 16-bit lanes' low bytes are the even elements; the last
			 * pair's odd byte is past the run when n - j < 16 */
			int64_t b = 2 * (n - j) - 1;
			__m256i w = b >= 32 ? _mm256_loadu_si256((const __m256i *)(src + 2 * j))
					    : _mm256_maskz_loadu_epi8((__mmask32)((1u << b) - 1), src + 2 * j);
			__m512i v = _mm512_cvtepu16_epi32(_mm256_and_si256(w, _mm256_set1_epi16(0xff)));
			__mmask16 k = n - j >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - j)) - 1);
			_mm512_storeu_ps(d + j, _mm512_maskz_sub_ps(k, _mm512_cvtepi32_ps(v), z));
		}
#elif defined(__AVX2__)
	const __m256 z = _mm256_set1_ps(zp);
	if (s == 1)
		for (; j + 8 <= n; j += 8) {
			__m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(src + j)));
			_mm256_storeu_ps(d + j, _mm256_sub_ps(_mm256_cvtepi32_ps(v), z));
		}
	else if (s == 2)
		for (; j + 8 <= n; j += 8) {
			/* 16 bytes from src + 2j: the last odd one is read only when
			 * the run goes on past it */
			if (2 * (j + 8) > 2 * (n - 1) + 1)
				break;
			__m128i w = _mm_loadu_si128((const __m128i *)(src + 2 * j));
			__m256i v = _mm256_cvtepu16_epi32(_mm_and_si128(w, _mm_set1_epi16(0xff)));
			_mm256_storeu_ps(d + j, _mm256_sub_ps(_mm256_cvtepi32_ps(v), z));
		}
#endif
	for (; j < n; j++)
		d[j] = (float)src[j * s] - zp;
}

/* Plane x (uint8) into buf as floats x - zp, in the padded phase layout.
 * The runs go in their order in buf, so that what a run's last vector
 * writes past its end (zeros) is padding or the place of a later run: the
 * padding stays the 0 the buffer was made with. */
static void dw_convert(const pn_window *W, const dw_plan *P, const uint8_t *x, float zp,
		       float *buf)
{
	for (int64_t r = 0; r < P->nrun; r++)
		dw_run_to_f32(buf + P->run[r].dst, x + P->run[r].src, P->run[r].n, W->s[2], zp);
}

/* VB vectors of sums from flat output q0 into acc. */
static inline __attribute__((always_inline)) void dw_vectors(int VB, int64_t ksz,
							     const int64_t *off, const float *wf,
							     const float *buf, int64_t q0, float *acc)
{
	pn_vf a[4];
	for (int v = 0; v < VB; v++)
		a[v] = pn_vzero();
	for (int64_t t = 0; t < ksz; t++) {
		pn_vf wv = pn_vset1(wf[t]);
		const float *p = buf + off[t] + q0;
		for (int v = 0; v < VB; v++)
			a[v] = pn_vfma(wv, pn_vload(p + v * PN_VL), a[v]);
	}
	for (int v = 0; v < VB; v++)
		pn_vstore(acc + q0 + v * PN_VL, a[v]);
}

/* The flat sums of one channel (plane buf, weights wf) into acc: blocks of
 * 4 vectors (4 independent chains of fused multiply-adds), the last block
 * with what is left. */
static void dw_sums(const dw_plan *P, int64_t ksz, const float *wf, const float *buf, float *acc)
{
	for (int64_t q0 = 0; q0 < P->nq; q0 += 4 * PN_VL) {
		switch ((P->nq - q0 + PN_VL - 1) / PN_VL) {
		case 1:
			dw_vectors(1, ksz, P->off, wf, buf, q0, acc);
			break;
		case 2:
			dw_vectors(2, ksz, P->off, wf, buf, q0, acc);
			break;
		case 3:
			dw_vectors(3, ksz, P->off, wf, buf, q0, acc);
			break;
		default:
			dw_vectors(4, ksz, P->off, wf, buf, q0, acc);
			break;
		}
	}
}

/* One channel's flat sums acc requantized into y, a row at a time (the q
 * past each row dropped). */
static void dw_requant(const pn_window *W, const dw_plan *P, const q8_out *o, int64_t m,
		       const float *acc, uint8_t *y)
{
	const int64_t ox_n = W->out[2];
	if (ox_n == P->e[2] && W->out[1] == P->e[1]) {
		requant_row(o, m, acc, P->nq, y);
		return;
	}
	for (int64_t oz = 0; oz < W->out[0]; oz++)
		for (int64_t oy = 0; oy < W->out[1]; oy++, y += ox_n)
			requant_row(o, m, acc + (oz * P->e[1] + oy) * P->e[2], ox_n, y);
}

/* Per-thread buffers of a batch of channels. */
typedef struct dw_bufs {
	float *plane;      /* the batch's phase planes, each plane_ld floats */
	float *acc;        /* their flat sums, each nqv floats */
	int64_t plane_ld, nqv;
} dw_bufs;

/* Channels per batch: each phase (conversion, sums, requantization) runs
 * over the batch before the next begins, so that no load waits on the
 * stores just before it (a small plane's conversion is read back within a
 * few dozen cycles otherwise); fewer for large planes, to stay in L2. */
#define DW_BATCH 8

static int dw_batch_of(const dw_plan *P)
{
	int64_t b = ((int64_t)1 << 16) / (P->plane + 1);
	return b < 1 ? 1 : b > DW_BATCH ? DW_BATCH : (int)b;
}

static int conv_depthwise(pn_kctx *k, const pn_conv_geom *g, const pn_conv_q8 *a,
			  const float *mult)
{
	const pn_window *W = &g->w;
	dw_plan P;
	int64_t *off = malloc(sizeof(int64_t) * (size_t)g->ksz);
	dw_run *run = malloc(sizeof(dw_run) * (size_t)(W->in[0] * W->in[1] * W->s[2]));
	if (!off || !run) {
		free(off);
		free(run);
		return pn_kfail(k, "out of memory");
	}
	dw_plan_init(W, &P, off, run);
	const int nb = dw_batch_of(&P);
	const int64_t nbat = (g->C + nb - 1) / nb, items = g->N * nbat;
	/* per thread: the phase planes, each with slack for the reads of the
	 * last vector's dropped lanes (at most nq rounded up past a tap's
	 * offset, which is inside the planes); the flat sums */
	dw_bufs B = {.nqv = (P.nq + PN_VL - 1) / PN_VL * PN_VL};
	B.plane_ld = (P.plane + B.nqv + 15) / 16 * 16;
	const int64_t per = nb * (B.plane_ld + B.nqv);
	int nt = 1;
	if (items > 1 && g->N * g->C * g->osp * g->ksz > PN_PAR_MIN_WORK && !omp_in_parallel())
		nt = omp_get_max_threads() < items ? omp_get_max_threads() : (int)items;
	float *wf = malloc(sizeof(float) * (size_t)(g->M * g->ksz));
	float *scr = calloc((size_t)(per * nt), sizeof(float));
	if (!wf || !scr) {
		free(off);
		free(run);
		free(wf);
		free(scr);
		return pn_kfail(k, "out of memory");
	}
	const int8_t *w = a->w->data;
	for (int64_t i = 0; i < g->M * g->ksz; i++)
		wf[i] = (float)w[i];
	const q8_out o = out_of(a, NULL, mult, 0);
	const uint8_t *x = a->x->data;
	uint8_t *y = k->out[0]->data;
	const float zp = (float)a->x_zp;
	#pragma omp parallel for num_threads(nt) schedule(static)
	for (int64_t it = 0; it < items; it++) {
		dw_bufs T = B;
		T.plane = scr + per * omp_get_thread_num();
		T.acc = T.plane + nb * B.plane_ld;
		int64_t n = it / nbat, c0 = it % nbat * nb;
		int cn = g->C - c0 < nb ? (int)(g->C - c0) : nb;
		const int64_t nc0 = n * g->C + c0;
		for (int i = 0; i < cn; i++)
			dw_convert(W, &P, x + (nc0 + i) * g->isp, zp, T.plane + i * T.plane_ld);
		for (int i = 0; i < cn; i++)
			dw_sums(&P, g->ksz, wf + (c0 + i) * g->ksz, T.plane + i * T.plane_ld,
				T.acc + i * T.nqv);
		for (int i = 0; i < cn; i++)
			dw_requant(W, &P, &o, c0 + i, T.acc + i * T.nqv, y + (nc0 + i) * g->osp);
	}
	free(off);
	free(run);
	free(wf);
	free(scr);
	return 0;
}

/* One image's group: its columns in segments, each packed, then its tiles
 * into y (8-bit, one byte an element). */
static void conv_group(const pn_conv_geom *g, const uint8_t *x, uint8_t x_zp, const int8_t *wp,
		       const q8_out *o, uint8_t *col, uint8_t *xp, uint8_t *y, int64_t np_max)
{
	const int64_t K = g->Cg * g->ksz, kq_n = (K + 3) / 4;
	const int64_t mpanels = (g->Mg + Q8_MR - 1) / Q8_MR;
	for (int64_t p0 = 0; p0 < g->osp; p0 += np_max) {
		int64_t np = g->osp - p0 < np_max ? g->osp - p0 : np_max;
		int64_t npanels = (np + Q8_NR - 1) / Q8_NR;
		if (pn_conv_is_pointwise(&g->w)) {
			pack_x(x + p0, g->isp, K, np, kq_n, xp);    /* the input is the matrix */
		} else {
			if (im2col_shifts(&g->w))
				im2col_shift_u8(&g->w, x, g->Cg, p0, np, x_zp, col);
			else
				pn_conv_im2col_u8(&g->w, x, g->Cg, p0, np, x_zp, col);
			pack_x(col, np, K, np, kq_n, xp);
		}
		#pragma omp parallel for collapse(2) if (g->Mg * K * np > PN_PAR_MIN_WORK) schedule(static)
		for (int64_t mb = 0; mb < mpanels; mb++)
			for (int64_t nb = 0; nb < npanels; nb++) {
				const uint8_t *xb = xp + nb * kq_n * Q8_NR * 4;
				const int8_t *wb = wp + mb * kq_n * Q8_MR * 4;
				int64_t m0 = mb * Q8_MR, n0 = nb * Q8_NR;
				int64_t mc = g->Mg - m0 < Q8_MR ? g->Mg - m0 : Q8_MR;
				int64_t nc = np - n0 < Q8_NR ? np - n0 : Q8_NR;
				q8_tile_out(kq_n, xb, wb, o, m0, mc, nc, y + m0 * g->osp + p0 + n0,
					    g->osp);
			}
	}
}

/* Every group of every image through the GEMM. */
static int conv_gemm(pn_kctx *k, const pn_conv_geom *g, const pn_conv_q8 *a, const float *mult)
{
	const int64_t K = g->Cg * g->ksz, kq_n = (K + 3) / 4;
	const int64_t mpanels = (g->Mg + Q8_MR - 1) / Q8_MR;
	int64_t np_max = Q8_COL_BUDGET / K / Q8_NR * Q8_NR;
	if (np_max < Q8_COL_MIN)
		np_max = Q8_COL_MIN;
	const int64_t cols = g->osp < np_max ? g->osp : np_max;
	const int64_t xpanels = (cols + Q8_NR - 1) / Q8_NR;
	/* the packed weights and their row sums, made once per session when
	 * the weights are fixed */
	const size_t wbytes = (size_t)(g->G * mpanels * kq_n * Q8_MR * 4);
	const size_t packed = wbytes + sizeof(int32_t) * (size_t)g->M;
	int fresh = 0;
	void *kept = a->w_fixed ? pn_kmemo(k, 0, packed, &fresh) : NULL;
	void *own = kept ? NULL : malloc(packed);
	fresh = fresh || own;    /* a buffer of its own is always filled */
	int8_t *wp = kept ? kept : own;
	int32_t *wsum = wp ? (int32_t *)(void *)(wp + wbytes) : NULL;
	uint8_t *col = malloc((size_t)(K * cols));
	uint8_t *xp = malloc((size_t)(xpanels * kq_n * Q8_NR * 4));
	int rc = wp && col && xp ? 0 : pn_kfail(k, "out of memory");
	const int8_t *w = a->w->data;
	for (int64_t gi = 0; !rc && fresh && gi < g->G; gi++)
		pack_w(w + gi * g->Mg * K, g->Mg, K, kq_n, wp + gi * mpanels * kq_n * Q8_MR * 4,
		       wsum + gi * g->Mg);
	for (int64_t n = 0; !rc && n < g->N; n++)
		for (int64_t gi = 0; gi < g->G; gi++) {
			q8_out o = out_of(a, wsum, mult, gi * g->Mg);
			const uint8_t *xg = (const uint8_t *)a->x->data + (n * g->C + gi * g->Cg) * g->isp;
			uint8_t *yg = (uint8_t *)k->out[0]->data + (n * g->M + gi * g->Mg) * g->osp;
			conv_group(g, xg, a->x_zp, wp + gi * mpanels * kq_n * Q8_MR * 4, &o, col, xp, yg,
				   np_max);
		}
	free(own);
	free(col);
	free(xp);
	return rc;
}

int pn_conv_q8_run(pn_kctx *k, const pn_conv_q8 *a)
{
	pn_conv_geom g;
	if (!pn_conv_q8_fits(a))
		return pn_kfail(k, "quantized conv: operands outside the 8-bit path");
	if (pn_conv_setup(k, a->x, a->w, a->y_dtype, &g))
		return -1;
	float *mult = malloc(sizeof(float) * (size_t)g.M);
	if (!mult)
		return pn_kfail(k, "out of memory");
	for (int64_t m = 0; m < g.M; m++)
		mult[m] = a->x_scale * (float)pn_tensor_get_f64(a->w_scale,
								 a->w_scale->numel == 1 ? 0 : m);
	int rc;
	if (g.Cg == 1 && g.Mg == 1 && g.ksz <= Q8_DW_KMAX) {
		rc = conv_depthwise(k, &g, a, mult);
	} else {
		rc = conv_gemm(k, &g, a, mult);
	}
	free(mult);
	return rc;
}
