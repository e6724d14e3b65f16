/*
 * vec.h - a few float vector operations for the direct window loops
 * (depthwise and grouped Conv, the pools), so that each loop is written
 * once and compiles to AVX-512, AVX2 or plain C.
 *
 * Every lane does exactly what the scalar fallback does (a fused
 * multiply-add is fmaf, pn_vmax(x, m) is x > m ? x : m, which keeps m when
 * x is NaN, pn_vmin(x, m) x < m ? x : m, pn_vclamp x < lo ? lo : x > hi ?
 * hi : x with both tests on x), so the width never changes a result bit.
 */
#ifndef PN_OPS_VEC_H
#define PN_OPS_VEC_H

#include <math.h>
#include <stdint.h>

#if defined(__AVX512F__)
#include <immintrin.h>
#define PN_VL 16
/* Accumulator vectors a register block may hold (of 32 registers). */
#define PN_VREGS 24
typedef __m512 pn_vf;
static inline pn_vf pn_vload(const float *p) { return _mm512_loadu_ps(p); }
static inline void pn_vstore(float *p, pn_vf v) { _mm512_storeu_ps(p, v); }
static inline pn_vf pn_vset1(float x) { return _mm512_set1_ps(x); }
static inline pn_vf pn_vfma(pn_vf a, pn_vf b, pn_vf c) { return _mm512_fmadd_ps(a, b, c); }
static inline pn_vf pn_vadd(pn_vf a, pn_vf b) { return _mm512_add_ps(a, b); }
static inline pn_vf pn_vmul(pn_vf a, pn_vf b) { return _mm512_mul_ps(a, b); }
static inline pn_vf pn_vmax(pn_vf x, pn_vf m) { return _mm512_max_ps(x, m); }
static inline pn_vf pn_vmin(pn_vf x, pn_vf m) { return _mm512_min_ps(x, m); }
static inline pn_vf pn_vdiv(pn_vf a, pn_vf b) { return _mm512_div_ps(a, b); }
static inline pn_vf pn_vclamp(pn_vf x, float lo, float hi)
{
	__m512 l = _mm512_set1_ps(lo), h = _mm512_set1_ps(hi);
	__mmask16 below = _mm512_cmp_ps_mask(x, l, _CMP_LT_OQ);
	x = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, h, _CMP_GT_OQ), x, h);
	return _mm512_mask_blend_ps(below, x, l);
}
static inline __mmask16 pn_vmask(int64_t n)
{
	return n >= 16 ? (__mmask16)0xffff : n <= 0 ? 0 : (__mmask16)((1u << n) - 1);
}
static inline pn_vf pn_vload_n(const float *p, int64_t n)
{
	return _mm512_maskz_loadu_ps(pn_vmask(n), p);
}
static inline void pn_vstore_n(float *p, pn_vf v, int64_t n)
{
	_mm512_mask_storeu_ps(p, pn_vmask(n), v);
}
/* Lanes whose bit is set in m get p[lane], the others 0; reads nothing
 * else (p itself may lie outside the array when those lanes are off). */
static inline pn_vf pn_vload_bits(const float *p, uint32_t m)
{
	return _mm512_maskz_loadu_ps((__mmask16)m, p);
}
/* Lanes j in [lo, hi) (0 <= lo <= hi <= PN_VL) get p[j * s] for s = 1 or
 * 2, the others pad; reads nothing else. */
static inline pn_vf pn_vload_win(const float *p, int64_t lo, int64_t hi, int64_t s, float pad)
{
	__mmask16 k = (__mmask16)(pn_vmask(hi) & ~pn_vmask(lo));
	if (s == 1)
		return _mm512_mask_loadu_ps(_mm512_set1_ps(pad), k, p);
	const __m512i idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
					      28, 30);
	uint64_t m = hi > lo ? ((1ull << (2 * hi - 1)) - 1) & ~((1ull << (2 * lo)) - 1) : 0;
	pn_vf a = _mm512_maskz_loadu_ps((__mmask16)m, p);
	pn_vf b = _mm512_maskz_loadu_ps((__mmask16)(m >> 16), p + 16);
	return _mm512_mask_blend_ps(k, _mm512_set1_ps(pad), _mm512_permutex2var_ps(a, idx, b));
}
/* Splits the 2 PN_VL floats at p into even and odd elements: element
 * t in [lo, hi) is p[t], any other is pad; reads nothing else. */
static inline void pn_vload_deint(const float *p, int64_t lo, int64_t hi, float pad, pn_vf *even,
				  pn_vf *odd)
{
	const __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
	const __m512i io = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
	lo = lo < 0 ? 0 : lo;
	hi = hi > 32 ? 32 : hi;
	uint32_t m = hi > lo ? (uint32_t)(((1ull << hi) - 1) & ~((1ull << lo) - 1)) : 0;
	pn_vf v = _mm512_set1_ps(pad);
	pn_vf a = _mm512_mask_loadu_ps(v, (__mmask16)m, p);
	pn_vf b = _mm512_mask_loadu_ps(v, (__mmask16)(m >> 16), p + 16);
	*even = _mm512_permutex2var_ps(a, ie, b);
	*odd = _mm512_permutex2var_ps(a, io, b);
}
/* Lane l gets p[idx[l]] for idx[l] < n <= PN_VL; reads only p[0, n). */
static inline pn_vf pn_vload_perm(const float *p, int64_t n, const int32_t *idx)
{
	return _mm512_permutexvar_ps(_mm512_loadu_si512(idx), _mm512_maskz_loadu_ps(pn_vmask(n), p));
}
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define PN_VL 8
#define PN_VREGS 12
typedef __m256 pn_vf;
static inline pn_vf pn_vload(const float *p) { return _mm256_loadu_ps(p); }
static inline void pn_vstore(float *p, pn_vf v) { _mm256_storeu_ps(p, v); }
static inline pn_vf pn_vset1(float x) { return _mm256_set1_ps(x); }
static inline pn_vf pn_vfma(pn_vf a, pn_vf b, pn_vf c) { return _mm256_fmadd_ps(a, b, c); }
static inline pn_vf pn_vadd(pn_vf a, pn_vf b) { return _mm256_add_ps(a, b); }
static inline pn_vf pn_vmul(pn_vf a, pn_vf b) { return _mm256_mul_ps(a, b); }
static inline pn_vf pn_vmax(pn_vf x, pn_vf m) { return _mm256_max_ps(x, m); }
static inline pn_vf pn_vmin(pn_vf x, pn_vf m) { return _mm256_min_ps(x, m); }
static inline pn_vf pn_vdiv(pn_vf a, pn_vf b) { return _mm256_div_ps(a, b); }
static inline pn_vf pn_vclamp(pn_vf x, float lo, float hi)
{
	__m256 l = _mm256_set1_ps(lo), h = _mm256_set1_ps(hi);
	__m256 below = _mm256_cmp_ps(x, l, _CMP_LT_OQ);
	x = _mm256_blendv_ps(x, h, _mm256_cmp_ps(x, h, _CMP_GT_OQ));
	return _mm256_blendv_ps(x, l, below);
}
static inline __m256i pn_vmask(int64_t n)
{
	static const int32_t ones[16] = {-1, -1, -1, -1, -1, -1, -1, -1};
	n = n < 0 ? 0 : n > 8 ? 8 : n;
	return _mm256_loadu_si256((const __m256i *)(ones + 8 - n));
}
/* Whole vectors take plain loads and stores: AMD's Zen microcodes masked
 * stores (a dozen cycles each), and loops call these for every vector. */
static inline pn_vf pn_vload_n(const float *p, int64_t n)
{
	return n >= 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, pn_vmask(n));
}
static inline void pn_vstore_n(float *p, pn_vf v, int64_t n)
{
	if (n >= 8)
		_mm256_storeu_ps(p, v);
	else
		_mm256_maskstore_ps(p, pn_vmask(n), v);
}
static inline pn_vf pn_vload_bits(const float *p, uint32_t m)
{
	const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
	__m256i k = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)m), bit), bit);
	return _mm256_maskload_ps(p, k);
}
/* Lanes [lo, hi) of p (clamped to the vector), the others pad; masked
 * loads read nothing outside the lanes asked for.  (Gathering through a
 * stack array instead stalls every load on the eight stores before it.) */
static inline pn_vf pn_vload_lanes(const float *p, int64_t lo, int64_t hi, float pad)
{
	if (lo <= 0 && hi >= 8)
		return _mm256_loadu_ps(p);
	__m256i k = _mm256_andnot_si256(pn_vmask(lo), pn_vmask(hi));
	return _mm256_blendv_ps(_mm256_set1_ps(pad), _mm256_maskload_ps(p, k), _mm256_castsi256_ps(k));
}
/* Even and odd elements of the 16 floats a, b: [a0 a2 .. a6 b0 .. b6] and
 * [a1 a3 .. b7]. */
static inline pn_vf pn_veven(pn_vf a, pn_vf b)
{
	__m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
	return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
}
static inline pn_vf pn_vodd(pn_vf a, pn_vf b)
{
	__m256 o = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
	return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), _MM_SHUFFLE(3, 1, 2, 0)));
}
static inline pn_vf pn_vload_win(const float *p, int64_t lo, int64_t hi, int64_t s, float pad)
{
	if (s == 1)
		return pn_vload_lanes(p, lo, hi, pad);
	/* lane j reads p[2j]: elements [2 lo, 2 hi - 1) of the 16 at p */
	pn_vf a = pn_vload_lanes(p, 2 * lo, 2 * hi - 1, pad);
	pn_vf b = pn_vload_lanes(p + 8, 2 * lo - 8, 2 * hi - 9, pad);
	return pn_veven(a, b);
}
static inline void pn_vload_deint(const float *p, int64_t lo, int64_t hi, float pad, pn_vf *even,
				  pn_vf *odd)
{
	pn_vf a = pn_vload_lanes(p, lo, hi, pad);
	pn_vf b = pn_vload_lanes(p + 8, lo - 8, hi - 8, pad);
	*even = pn_veven(a, b);
	*odd = pn_vodd(a, b);
}
static inline pn_vf pn_vload_perm(const float *p, int64_t n, const int32_t *idx)
{
	return _mm256_permutevar8x32_ps(pn_vload_n(p, n), _mm256_loadu_si256((const __m256i *)idx));
}
#else
#define PN_VL 4
#define PN_VREGS 8
typedef struct { float v[4]; } pn_vf;
static inline pn_vf pn_vload(const float *p)
{
	pn_vf r;
	for (int i = 0; i < 4; i++)
		r.v[i] = p[i];
	return r;
}
static inline void pn_vstore(float *p, pn_vf v)
{
	for (int i = 0; i < 4; i++)
		p[i] = v.v[i];
}
static inline pn_vf pn_vset1(float x)
{
	return (pn_vf){{x, x, x, x}};
}
static inline pn_vf pn_vfma(pn_vf a, pn_vf b, pn_vf c)
{
	for (int i = 0; i < 4; i++)
		c.v[i] = fmaf(a.v[i], b.v[i], c.v[i]);
	return c;
}
static inline pn_vf pn_vadd(pn_vf a, pn_vf b)
{
	for (int i = 0; i < 4; i++)
		a.v[i] += b.v[i];
	return a;
}
static inline pn_vf pn_vmul(pn_vf a, pn_vf b)
{
	for (int i = 0; i < 4; i++)
		a.v[i] *= b.v[i];
	return a;
}
static inline pn_vf pn_vmax(pn_vf x, pn_vf m)
{
	for (int i = 0; i < 4; i++)
		m.v[i] = x.v[i] > m.v[i] ? x.v[i] : m.v[i];
	return m;
}
static inline pn_vf pn_vmin(pn_vf x, pn_vf m)
{
	for (int i = 0; i < 4; i++)
		m.v[i] = x.v[i] < m.v[i] ? x.v[i] : m.v[i];
	return m;
}
static inline pn_vf pn_vdiv(pn_vf a, pn_vf b)
{
	for (int i = 0; i < 4; i++)
		a.v[i] /= b.v[i];
	return a;
}
static inline pn_vf pn_vclamp(pn_vf x, float lo, float hi)
{
	for (int i = 0; i < 4; i++)
		x.v[i] = x.v[i] < lo ? lo : x.v[i] > hi ? hi : x.v[i];
	return x;
}
static inline pn_vf pn_vload_n(const float *p, int64_t n)
{
	pn_vf r = {{0}};
	for (int64_t i = 0; i < n && i < 4; i++)
		r.v[i] = p[i];
	return r;
}
static inline void pn_vstore_n(float *p, pn_vf v, int64_t n)
{
	for (int64_t i = 0; i < n && i < 4; i++)
		p[i] = v.v[i];
}
static inline pn_vf pn_vload_bits(const float *p, uint32_t m)
{
	pn_vf r;
	for (int i = 0; i < 4; i++)
		r.v[i] = m >> i & 1 ? p[i] : 0.0f;
	return r;
}
static inline pn_vf pn_vload_win(const float *p, int64_t lo, int64_t hi, int64_t s, float pad)
{
	pn_vf r;
	for (int64_t j = 0; j < 4; j++)
		r.v[j] = j >= lo && j < hi ? p[j * s] : pad;
	return r;
}
static inline void pn_vload_deint(const float *p, int64_t lo, int64_t hi, float pad, pn_vf *even,
				  pn_vf *odd)
{
	for (int64_t j = 0; j < 4; j++) {
		even->v[j] = 2 * j >= lo && 2 * j < hi ? p[2 * j] : pad;
		odd->v[j] = 2 * j + 1 >= lo && 2 * j + 1 < hi ? p[2 * j + 1] : pad;
	}
}
static inline pn_vf pn_vload_perm(const float *p, int64_t n, const int32_t *idx)
{
	pn_vf r;
	(void)n;
	for (int i = 0; i < 4; i++)
		r.v[i] = p[idx[i]];
	return r;
}
#endif

static inline pn_vf pn_vzero(void)
{
	return pn_vset1(0.0f);
}

/* Sum of the lanes, in a fixed order. */
static inline float pn_vhsum(pn_vf v)
{
	float t[PN_VL];
	pn_vstore(t, v);
	for (int w = PN_VL / 2; w > 0; w /= 2)
		for (int i = 0; i < w; i++)
			t[i] += t[i + w];
	return t[0];
}

/* p[0, n) = v (any n). */
static inline void pn_vfill(float *p, int64_t n, float v)
{
	pn_vf x = pn_vset1(v);
	int64_t j = 0;
	for (; j + PN_VL <= n; j += PN_VL)
		pn_vstore(p + j, x);
	if (j < n)
		pn_vstore_n(p + j, x, n - j);
}

/* d[0, n) = s[0, n) (any n; the ranges must not overlap). */
static inline void pn_vcopy(float *restrict d, const float *restrict s, int64_t n)
{
	int64_t j = 0;
	for (; j + PN_VL <= n; j += PN_VL)
		pn_vstore(d + j, pn_vload(s + j));
	if (j < n)
		pn_vstore_n(d + j, pn_vload_n(s + j, n - j), n - j);
}

#endif
