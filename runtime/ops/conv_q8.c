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
 * with the float32 operations of the chain, in its order (q8_out.h).
 * Depthwise convolutions have a path of their own (conv_q8_dw.c); a fully
 * connected Gemm comes here as a 1x1 convolution.
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

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "common/assert.h"
#include "runtime/kernel.h"
#include "runtime/ops/conv.h"
#include "runtime/ops/q8_out.h"

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
/* Positions per segment: its im2col and packed columns (taps x positions
 * bytes each) stay in L2 while every weight panel passes over them (measured
 * on quantized MobileNet-v2 and ResNet-18: 1 MiB was 10% slower), yet at
 * least Q8_COL_MIN, so that a weight panel is used more than a few times. */
#define Q8_COL_BUDGET ((int64_t)1 << 17)
#define Q8_COL_MIN 64

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

#if defined(Q8_VEC)
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
static void requant_tile(const q8_out *out, int32_t acc[Q8_MR][Q8_NR], int64_t m0, int64_t mc,
			 int64_t nc, uint8_t *y, int64_t ldy)
{
	/* a copy of its own: the byte stores to y could alias *out, and every
	 * row would load (and branch on) its fields again */
	const q8_out copy = *out, *o = &copy;
	for (int64_t i = 0; i < mc; i++) {
		const int64_t m = m0 + i;
		const float mult = o->mult[m], b = o->bias ? o->bias[m] : 0.0f;
		const int32_t shift = o->x_zp * o->wsum[m];
#if Q8_VEC == 512
		__m512i s = _mm512_sub_epi32(_mm512_loadu_si512(acc[i]), _mm512_set1_epi32(shift));
		q8_store16(y + i * ldy, q8_bytes16(o, q8_finish_v(o, mult, b, _mm512_cvtepi32_ps(s))),
			   nc);
#else
		const __m256i sh = _mm256_set1_epi32(shift);
		__m256i s0 = _mm256_sub_epi32(_mm256_loadu_si256((const __m256i *)acc[i]), sh);
		__m256i s1 = _mm256_sub_epi32(_mm256_loadu_si256((const __m256i *)(acc[i] + 8)), sh);
		__m128i q = q8_pack16(o, q8_finish_v(o, mult, b, _mm256_cvtepi32_ps(s0)),
				      q8_finish_v(o, mult, b, _mm256_cvtepi32_ps(s1)));
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
		q8_requant_row(o, m0 + i, v, nc, y + i * ldy);
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
#if defined(__SSE2__)
/* Four rows of 16 bytes interleaved into one k-quad of a panel:
 * d[l * 4 + j] = r[j][l]. */
static inline void quad_interleave(const __m128i r[4], uint8_t *d)
{
	__m128i a = _mm_unpacklo_epi8(r[0], r[1]), b = _mm_unpackhi_epi8(r[0], r[1]);
	__m128i c = _mm_unpacklo_epi8(r[2], r[3]), e = _mm_unpackhi_epi8(r[2], r[3]);
	_mm_storeu_si128((__m128i *)d, _mm_unpacklo_epi16(a, c));
	_mm_storeu_si128((__m128i *)(d + 16), _mm_unpackhi_epi16(a, c));
	_mm_storeu_si128((__m128i *)(d + 32), _mm_unpacklo_epi16(b, e));
	_mm_storeu_si128((__m128i *)(d + 48), _mm_unpackhi_epi16(b, e));
}
#endif

static inline void pack_quad(const uint8_t *col, int64_t np, int64_t t0, int64_t p0, uint8_t *d)
{
#if defined(__SSE2__)
	const uint8_t *s = col + t0 * np + p0;
	__m128i r[4];
	for (int j = 0; j < 4; j++)
		r[j] = _mm_loadu_si128((const __m128i *)(s + j * np));
	quad_interleave(r, d);
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

#if defined(__AVX512BW__) && defined(__AVX512VL__)
#define Q8_SHIFT_TAPS 64    /* taps of a window packed straight from its planes */

/* Lane l's bit set when position p + l (l < n) reads inside the plane
 * from tap offset (dy, dx): its row oy + dy in [0, H) (rows) and its
 * column ox + dx in [0, W) (cols), one mask per ky and per kx. */
static void shift_masks(const pn_window *w, int64_t p, int64_t n, __mmask16 *rows,
			__mmask16 *cols)
{
	const int64_t W = w->in[2], H = w->in[1];
	int32_t oy[Q8_NR], ox[Q8_NR];
	for (int64_t l = 0, y = p / W, c = p % W; l < Q8_NR; l++) {
		oy[l] = (int32_t)y;
		ox[l] = (int32_t)c;
		if (++c == W) {
			c = 0;
			y++;
		}
	}
	const __m512i vy = _mm512_loadu_si512(oy), vx = _mm512_loadu_si512(ox);
	const __mmask16 live = (__mmask16)((1u << n) - 1);
	for (int64_t ky = 0; ky < w->k[1]; ky++) {
		__m512i r = _mm512_add_epi32(vy, _mm512_set1_epi32((int32_t)(ky * w->d[1] - w->pb[1])));
		rows[ky] = _mm512_mask_cmplt_epi32_mask(_mm512_cmpge_epi32_mask(r, _mm512_setzero_si512()) &
								live,
							r, _mm512_set1_epi32((int32_t)H));
	}
	for (int64_t kx = 0; kx < w->k[2]; kx++) {
		__m512i c = _mm512_add_epi32(vx, _mm512_set1_epi32((int32_t)(kx * w->d[2] - w->pb[2])));
		cols[kx] = _mm512_mask_cmplt_epi32_mask(_mm512_cmpge_epi32_mask(c, _mm512_setzero_si512()),
							c, _mm512_set1_epi32((int32_t)W));
	}
}

/*
 * pack_x of im2col_shift_u8's columns without writing them: each k-quad's
 * four rows are read from the planes at their tap's offset by masked loads
 * (the padding, the columns that would wrap around a row's end, and the
 * positions past np are the pad byte, or 0 past K), then interleaved as
 * pack_quad's are (quad_interleave).  One pass over the bytes instead of
 * three (im2col's padding, its copy, the packing).  Windows of at most
 * Q8_SHIFT_TAPS taps.
 */
static void pack_x_shift(const pn_window *w, const uint8_t *x, int64_t K, int64_t p0, int64_t np,
			 int64_t kq_n, uint8_t pad, uint8_t *xp)
{
	const int64_t W = w->in[2], isp = w->in[1] * W, taps = w->k[1] * w->k[2];
	const int64_t panels = (np + Q8_NR - 1) / Q8_NR;
	PN_ASSERT(taps <= Q8_SHIFT_TAPS && isp < INT32_MAX / 2);    /* the masks' arrays and lanes */
	#pragma omp parallel for if (K * np > PN_PAR_MIN_WORK) schedule(static)
	for (int64_t b = 0; b < panels; b++) {
		const int64_t p = p0 + b * Q8_NR, n = np - b * Q8_NR < Q8_NR ? np - b * Q8_NR : Q8_NR;
		__mmask16 mask[Q8_SHIFT_TAPS], rows[Q8_SHIFT_TAPS], cols[Q8_SHIFT_TAPS];
		int64_t delta[Q8_SHIFT_TAPS];
		shift_masks(w, p, n, rows, cols);
		for (int64_t t = 0; t < taps; t++) {
			const int64_t ky = t / w->k[2], kx = t % w->k[2];
			mask[t] = rows[ky] & cols[kx];
			delta[t] = p + (ky * w->d[1] - w->pb[1]) * W + kx * w->d[2] - w->pb[2];
		}
		const __m128i padv = _mm_set1_epi8((char)pad);
		int64_t c = 0, t = 0;    /* row k = c taps + t */
		for (int64_t kq = 0; kq < kq_n; kq++) {
			__m128i r[4];
			for (int j = 0; j < 4; j++) {
				if (kq * 4 + j >= K) {
					r[j] = _mm_setzero_si128();
					continue;
				}
				/* the address of a masked-out lane is never read */
				const uintptr_t a = (uintptr_t)x + (uintptr_t)(c * isp + delta[t]);
				r[j] = _mm_mask_loadu_epi8(padv, mask[t], (const void *)a);
				if (++t == taps) {
					t = 0;
					c++;
				}
			}
			quad_interleave(r, xp + (b * kq_n + kq) * Q8_NR * 4);
		}
	}
}
#endif

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

/* 1 when pack_columns goes through im2col's columns (col): not for a
 * pointwise convolution, whose input is the matrix, nor for a window that
 * pack_x_shift packs straight from the planes. */
static int im2col_needed(const pn_conv_geom *g)
{
	if (pn_conv_is_pointwise(&g->w))
		return 0;
#if defined(__AVX512BW__) && defined(__AVX512VL__)
	if (im2col_shifts(&g->w) && g->ksz <= Q8_SHIFT_TAPS && g->isp < INT32_MAX / 2)
		return 0;
#endif
	return 1;
}

/* Positions p0..p0+np-1 of one image's group as packed panels xp (col:
 * room for their im2col columns). */
static void pack_columns(const pn_conv_geom *g, const uint8_t *x, uint8_t x_zp, int64_t p0,
			 int64_t np, uint8_t *col, uint8_t *xp)
{
	const int64_t K = g->Cg * g->ksz, kq_n = (K + 3) / 4;
	if (pn_conv_is_pointwise(&g->w)) {
		pack_x(x + p0, g->isp, K, np, kq_n, xp);    /* the input is the matrix */
		return;
	}
#if defined(__AVX512BW__) && defined(__AVX512VL__)
	if (!im2col_needed(g)) {
		pack_x_shift(&g->w, x, K, p0, np, kq_n, x_zp, xp);
		return;
	}
#endif
	if (im2col_shifts(&g->w))
		im2col_shift_u8(&g->w, x, g->Cg, p0, np, x_zp, col);
	else
		pn_conv_im2col_u8(&g->w, x, g->Cg, p0, np, x_zp, col);
	pack_x(col, np, K, np, kq_n, xp);
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
		pack_columns(g, x, x_zp, p0, np, col, xp);
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
	uint8_t *col = im2col_needed(g) ? malloc((size_t)(K * cols)) : NULL;
	uint8_t *xp = malloc((size_t)(xpanels * kq_n * Q8_NR * 4));
	int rc = wp && (col || !im2col_needed(g)) && xp ? 0 : pn_kfail(k, "out of memory");
	const int8_t *w = a->w->data;
	for (int64_t gi = 0; !rc && fresh && gi < g->G; gi++)
		pack_w(w + gi * g->Mg * K, g->Mg, K, kq_n, wp + gi * mpanels * kq_n * Q8_MR * 4,
		       wsum + gi * g->Mg);
	for (int64_t n = 0; !rc && n < g->N; n++)
		for (int64_t gi = 0; gi < g->G; gi++) {
			q8_out o = q8_out_of(a, wsum, mult, gi * g->Mg);
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
	if (pn_conv_q8_dw_fits(&g)) {
		rc = pn_conv_q8_depthwise(k, &g, a, mult);
	} else {
		rc = conv_gemm(k, &g, a, mult);
	}
	free(mult);
	return rc;
}
