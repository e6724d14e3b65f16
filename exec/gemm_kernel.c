/*
 * gemm_kernel.c - see gemm_kernel.h.  One micro-kernel per instruction set;
 * all keep the MR x NR accumulator tile in registers for the whole kc loop
 * and touch C once, at the end.
 *
 * Every variant computes an element the same way: acc = sum over k in order
 * of a*b (fused when the ISA has FMA), then C = alpha*acc (beta == 0) or
 * C = fma(beta, C, alpha*acc).  Partial tiles mask the loads and stores
 * rather than taking another code path, so the bits of an element do not
 * depend on whether its tile was full, and hence not on how the threads
 * divided C.
 */
#include "exec/gemm_kernel.h"

#include <math.h>
#include <string.h>

#if defined(__AVX512F__)
#include <immintrin.h>

/*
 * One body, instantiated for every row count 1..MR so that thin products
 * (M = 1..11, or the last rows of C) do not pay for MR rows of FMAs, and for
 * three ways of reading A: packed (ars = 1, aks = MR), or in place from a
 * row-major A (ars = lda, aks = 1) or a transposed one (ars = 1, aks = lda).
 * mask_b loads B under the column mask, for B read in place, whose last
 * rows may end before NR columns.  Every instance performs the same
 * per-element sequence of operations.
 */
static inline __attribute__((always_inline)) void
ukernel_avx512(const int rows, int64_t kc, const float *restrict a, int64_t ars, int64_t aks,
               const float *restrict b, int64_t ldbk, const int mask_b,
               float *restrict c, int64_t ldc, int n, float alpha, float beta)
{
	__m512 acc[14][2];    /* rows <= 14; only rows x 2 live, in registers */
	__mmask16 k0 = n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1);
	__mmask16 k1 = n >= 32 ? (__mmask16)0xffff :
	               n > 16 ? (__mmask16)((1u << (n - 16)) - 1) : (__mmask16)0;

	/* C is touched only at the end; start its lines on their way now. */
#pragma GCC unroll 16
	for (int i = 0; i < rows; i++) {
		_mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);
		_mm_prefetch((const char *)(c + i * ldc + 16), _MM_HINT_T0);
	}
#pragma GCC unroll 16
	for (int i = 0; i < rows; i++) {
		acc[i][0] = _mm512_setzero_ps();
		acc[i][1] = _mm512_setzero_ps();
	}
#pragma GCC unroll 4
	for (int64_t k = 0; k < kc; k++) {
		__m512 b0, b1;
		if (mask_b) {
			b0 = _mm512_maskz_loadu_ps(k0, b);
			b1 = _mm512_maskz_loadu_ps(k1, b + 16);
		} else {
			b0 = _mm512_loadu_ps(b);
			b1 = _mm512_loadu_ps(b + 16);
		}
#pragma GCC unroll 16
		for (int i = 0; i < rows; i++) {
			__m512 ai = _mm512_set1_ps(a[i * ars]);
			acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
			acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
		}
		a += aks;
		b += ldbk;
	}

	__m512 va = _mm512_set1_ps(alpha);
	if (beta == 0.0f) {
#pragma GCC unroll 16
		for (int i = 0; i < rows; i++) {
			float *ci = c + i * ldc;
			_mm512_mask_storeu_ps(ci, k0, _mm512_mul_ps(va, acc[i][0]));
			_mm512_mask_storeu_ps(ci + 16, k1, _mm512_mul_ps(va, acc[i][1]));
		}
	} else {
		__m512 vb = _mm512_set1_ps(beta);
#pragma GCC unroll 16
		for (int i = 0; i < rows; i++) {
			float *ci = c + i * ldc;
			__m512 c0 = _mm512_maskz_loadu_ps(k0, ci);
			__m512 c1 = _mm512_maskz_loadu_ps(k1, ci + 16);
			c0 = _mm512_fmadd_ps(vb, c0, _mm512_mul_ps(va, acc[i][0]));
			c1 = _mm512_fmadd_ps(vb, c1, _mm512_mul_ps(va, acc[i][1]));
			_mm512_mask_storeu_ps(ci, k0, c0);
			_mm512_mask_storeu_ps(ci + 16, k1, c1);
		}
	}
}

typedef void (*ukernel_fn)(int64_t, const float *restrict, const float *restrict,
                           float *restrict, int64_t, int, float, float);
typedef void (*ukernel_direct_fn)(int64_t, const float *restrict, int64_t,
                                  const float *restrict, int64_t,
                                  float *restrict, int64_t, int, float, float);

#define PN_UK(R) \
	static void uk_packed_##R(int64_t kc, const float *restrict a, const float *restrict b, \
	                          float *restrict c, int64_t ldc, int n, float alpha, float beta) \
	{ ukernel_avx512(R, kc, a, 1, PN_SGEMM_MR, b, PN_SGEMM_NR, 0, c, ldc, n, alpha, beta); } \
	static void uk_rows_##R(int64_t kc, const float *restrict a, int64_t lda, \
	                        const float *restrict b, int64_t ldb, \
	                        float *restrict c, int64_t ldc, int n, float alpha, float beta) \
	{ ukernel_avx512(R, kc, a, lda, 1, b, ldb, 1, c, ldc, n, alpha, beta); } \
	static void uk_cols_##R(int64_t kc, const float *restrict a, int64_t lda, \
	                        const float *restrict b, int64_t ldb, \
	                        float *restrict c, int64_t ldc, int n, float alpha, float beta) \
	{ ukernel_avx512(R, kc, a, 1, lda, b, ldb, 1, c, ldc, n, alpha, beta); }
PN_UK(1) PN_UK(2) PN_UK(3) PN_UK(4) PN_UK(5) PN_UK(6) PN_UK(7) PN_UK(8)
PN_UK(9) PN_UK(10) PN_UK(11) PN_UK(12) PN_UK(13) PN_UK(14)
#undef PN_UK

#define PN_UK_TABLE(F) { NULL, F##1, F##2, F##3, F##4, F##5, F##6, F##7, F##8, \
                         F##9, F##10, F##11, F##12, F##13, F##14 }
static const ukernel_fn uk_packed[15] = PN_UK_TABLE(uk_packed_);
static const ukernel_direct_fn uk_rows[15] = PN_UK_TABLE(uk_rows_);
static const ukernel_direct_fn uk_cols[15] = PN_UK_TABLE(uk_cols_);
_Static_assert(PN_SGEMM_MR <= 14, "add kernel instances for a larger MR");

void pn_sgemm_ukernel(int64_t kc, const float *restrict a, const float *restrict b,
                      float *restrict c, int64_t ldc, int m, int n,
                      float alpha, float beta)
{
	uk_packed[m](kc, a, b, c, ldc, n, alpha, beta);
}

void pn_sgemm_ukernel_direct(int64_t kc, const float *restrict a, int64_t lda, int trans_a,
                             const float *restrict b, int64_t ldb,
                             float *restrict c, int64_t ldc, int m, int n,
                             float alpha, float beta)
{
	(trans_a ? uk_cols : uk_rows)[m](kc, a, lda, b, ldb, c, ldc, n, alpha, beta);
}

#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#define MR PN_SGEMM_MR
#define NR PN_SGEMM_NR

void pn_sgemm_ukernel(int64_t kc, const float *restrict a, const float *restrict b,
                      float *restrict c, int64_t ldc, int m, int n,
                      float alpha, float beta)
{
	__m256 acc[MR][2];

#pragma GCC unroll 8
	for (int i = 0; i < MR; i++) {
		acc[i][0] = _mm256_setzero_ps();
		acc[i][1] = _mm256_setzero_ps();
	}
#pragma GCC unroll 4
	for (int64_t k = 0; k < kc; k++) {
		__m256 b0 = _mm256_loadu_ps(b);
		__m256 b1 = _mm256_loadu_ps(b + 8);
#pragma GCC unroll 8
		for (int i = 0; i < MR; i++) {
			__m256 ai = _mm256_broadcast_ss(a + i);
			acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
			acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
		}
		a += MR;
		b += NR;
	}

	/*
	 * AVX2 masks only 32-bit lanes through integer vectors; a partial tile
	 * goes through a stack copy instead, with the same vector arithmetic.
	 */
	int full = m == MR && n == NR;
	_Alignas(32) float tmp[MR * NR];
	float *t = full ? c : tmp;
	int64_t ldt = full ? ldc : NR;
	__m256 va = _mm256_set1_ps(alpha);
	if (!full && beta != 0.0f) {
		memset(tmp, 0, sizeof(tmp));
		for (int i = 0; i < m; i++)
			memcpy(tmp + i * NR, c + i * ldc, (size_t)n * sizeof(float));
	}
	if (beta == 0.0f) {
#pragma GCC unroll 8
		for (int i = 0; i < MR; i++) {
			_mm256_storeu_ps(t + i * ldt, _mm256_mul_ps(va, acc[i][0]));
			_mm256_storeu_ps(t + i * ldt + 8, _mm256_mul_ps(va, acc[i][1]));
		}
	} else {
		__m256 vb = _mm256_set1_ps(beta);
#pragma GCC unroll 8
		for (int i = 0; i < MR; i++) {
			float *ti = t + i * ldt;
			__m256 c0 = _mm256_loadu_ps(ti), c1 = _mm256_loadu_ps(ti + 8);
			_mm256_storeu_ps(ti, _mm256_fmadd_ps(vb, c0, _mm256_mul_ps(va, acc[i][0])));
			_mm256_storeu_ps(ti + 8, _mm256_fmadd_ps(vb, c1, _mm256_mul_ps(va, acc[i][1])));
		}
	}
	if (!full)
		for (int i = 0; i < m; i++)
			memcpy(c + i * ldc, tmp + i * NR, (size_t)n * sizeof(float));
}

#else
/*
 * Portable fallback: GCC vector extensions compile to whatever SIMD the
 * target has (or to scalar code).  Without FMA the multiply and the add round
 * separately; -std=c11 keeps GCC from contracting them, so every path still
 * agrees with every other.
 */
#define MR PN_SGEMM_MR
#define NR PN_SGEMM_NR
typedef float pn_v8 __attribute__((vector_size(32)));

void pn_sgemm_ukernel(int64_t kc, const float *restrict a, const float *restrict b,
                      float *restrict c, int64_t ldc, int m, int n,
                      float alpha, float beta)
{
	pn_v8 acc[MR][NR / 8];
	memset(acc, 0, sizeof(acc));
	for (int64_t k = 0; k < kc; k++) {
		pn_v8 bv[NR / 8];
		memcpy(bv, b, sizeof(bv));
		for (int i = 0; i < MR; i++)
			for (int v = 0; v < NR / 8; v++)
				acc[i][v] += a[i] * bv[v];
		a += MR;
		b += NR;
	}
	float r[MR][NR];
	memcpy(r, acc, sizeof(r));
	for (int i = 0; i < m; i++) {
		float *ci = c + i * ldc;
		if (beta == 0.0f)
			for (int j = 0; j < n; j++)
				ci[j] = alpha * r[i][j];
		else
			for (int j = 0; j < n; j++)
				ci[j] = beta * ci[j] + alpha * r[i][j];
	}
}
#endif
