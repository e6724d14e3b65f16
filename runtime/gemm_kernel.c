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
#include "runtime/gemm_kernel.h"

#include <math.h>
#include <string.h>

#if defined(__AVX512F__)
#include <immintrin.h>

/*
 * One body, instantiated for every row count 1..MR so that thin products
 * (M = 1..11, or the last rows of C) do not pay for MR rows of FMAs, and for
 * three ways of reading A: packed (ars = 1, aks = MR), or in place from a
 * row-major A (ars = lda, aks = 1) or a transposed one (ars = 1, aks = lda).
 * vecs is the number of 16-column vectors: 2 for an NR-wide tile, 1 when
 * n <= 16 (the second would only multiply zeros), and up to 8 for one or two
 * rows of C against B read in place, where two vectors would leave the FMA
 * unit waiting on a single accumulator chain and B would be fetched in
 * scattered 128-byte pieces.  mask_b loads B under the column masks, for B
 * read in place, whose rows may end before the vectors do.  Every instance
 * performs the same per-element sequence of operations.
 */
#define PN_UK_MAXV 8
static inline __attribute__((always_inline)) void
ukernel_avx512(const int rows, const int vecs, int64_t kc,
               const float *restrict a, int64_t ars, int64_t aks,
               const float *restrict b, int64_t ldbk, const int mask_b,
               float *restrict c, int64_t ldc, int n, float alpha, float beta)
{
	__m512 acc[14][PN_UK_MAXV];    /* only rows x vecs live, in registers */
	__mmask16 km[PN_UK_MAXV];
#pragma GCC unroll 8
	for (int v = 0; v < vecs; v++) {
		int left = n - 16 * v;
		km[v] = left >= 16 ? (__mmask16)0xffff :
		        left > 0 ? (__mmask16)((1u << left) - 1) : (__mmask16)0;
	}

	/* C is touched only at the end; start its lines on their way now. */
#pragma GCC unroll 16
	for (int i = 0; i < rows; i++)
#pragma GCC unroll 8
		for (int v = 0; v < vecs; v++)
			_mm_prefetch((const char *)(c + i * ldc + 16 * v), _MM_HINT_T0);
#pragma GCC unroll 16
	for (int i = 0; i < rows; i++)
#pragma GCC unroll 8
		for (int v = 0; v < vecs; v++)
			acc[i][v] = _mm512_setzero_ps();
#pragma GCC unroll 4
	for (int64_t k = 0; k < kc; k++) {
		__m512 bv[PN_UK_MAXV];
#pragma GCC unroll 8
		for (int v = 0; v < vecs; v++)
			bv[v] = mask_b ? _mm512_maskz_loadu_ps(km[v], b + 16 * v)
			               : _mm512_loadu_ps(b + 16 * v);
#pragma GCC unroll 16
		for (int i = 0; i < rows; i++) {
			__m512 ai = _mm512_set1_ps(a[i * ars]);
#pragma GCC unroll 8
			for (int v = 0; v < vecs; v++)
				acc[i][v] = _mm512_fmadd_ps(ai, bv[v], acc[i][v]);
		}
		a += aks;
		b += ldbk;
	}

	__m512 va = _mm512_set1_ps(alpha);
	if (beta == 0.0f) {
#pragma GCC unroll 16
		for (int i = 0; i < rows; i++)
#pragma GCC unroll 8
			for (int v = 0; v < vecs; v++)
				_mm512_mask_storeu_ps(c + i * ldc + 16 * v, km[v],
				                      _mm512_mul_ps(va, acc[i][v]));
	} else {
		__m512 vb = _mm512_set1_ps(beta);
#pragma GCC unroll 16
		for (int i = 0; i < rows; i++) {
#pragma GCC unroll 8
			for (int v = 0; v < vecs; v++) {
				float *ci = c + i * ldc + 16 * v;
				__m512 cv = _mm512_maskz_loadu_ps(km[v], ci);
				cv = _mm512_fmadd_ps(vb, cv, _mm512_mul_ps(va, acc[i][v]));
				_mm512_mask_storeu_ps(ci, km[v], cv);
			}
		}
	}
}

typedef void (*ukernel_fn)(int64_t, const float *restrict, const float *restrict,
                           float *restrict, int64_t, int, float, float);
typedef void (*ukernel_direct_fn)(int64_t, const float *restrict, int64_t,
                                  const float *restrict, int64_t,
                                  float *restrict, int64_t, int, float, float);

#define PN_UK(R, V) \
	static void uk_packed_##R##_##V(int64_t kc, const float *restrict a, \
	                                const float *restrict b, float *restrict c, int64_t ldc, \
	                                int n, float alpha, float beta) \
	{ ukernel_avx512(R, V, kc, a, 1, PN_SGEMM_MR, b, PN_SGEMM_NR, 0, c, ldc, n, alpha, beta); } \
	static void uk_rows_##R##_##V(int64_t kc, const float *restrict a, int64_t lda, \
	                              const float *restrict b, int64_t ldb, \
	                              float *restrict c, int64_t ldc, int n, float alpha, float beta) \
	{ ukernel_avx512(R, V, kc, a, lda, 1, b, ldb, 1, c, ldc, n, alpha, beta); } \
	static void uk_cols_##R##_##V(int64_t kc, const float *restrict a, int64_t lda, \
	                              const float *restrict b, int64_t ldb, \
	                              float *restrict c, int64_t ldc, int n, float alpha, float beta) \
	{ ukernel_avx512(R, V, kc, a, 1, lda, b, ldb, 1, c, ldc, n, alpha, beta); }
#define PN_UK2(R) PN_UK(R, 1) PN_UK(R, 2)
PN_UK2(1) PN_UK2(2) PN_UK2(3) PN_UK2(4) PN_UK2(5) PN_UK2(6) PN_UK2(7)
PN_UK2(8) PN_UK2(9) PN_UK2(10) PN_UK2(11) PN_UK2(12) PN_UK2(13) PN_UK2(14)
#undef PN_UK2
#undef PN_UK

/* [vecs - 1][rows] */
#define PN_UK_ROW(F, V) { NULL, F##1_##V, F##2_##V, F##3_##V, F##4_##V, F##5_##V, \
                          F##6_##V, F##7_##V, F##8_##V, F##9_##V, F##10_##V, F##11_##V, \
                          F##12_##V, F##13_##V, F##14_##V }
#define PN_UK_TABLE(F) { PN_UK_ROW(F, 1), PN_UK_ROW(F, 2) }
static const ukernel_fn uk_packed[2][15] = PN_UK_TABLE(uk_packed_);
static const ukernel_direct_fn uk_rows[2][15] = PN_UK_TABLE(uk_rows_);
static const ukernel_direct_fn uk_cols[2][15] = PN_UK_TABLE(uk_cols_);
_Static_assert(PN_SGEMM_MR <= 14, "add kernel instances for a larger MR");

void pn_sgemm_ukernel(int64_t kc, const float *restrict a, const float *restrict b,
                      float *restrict c, int64_t ldc, int m, int n,
                      float alpha, float beta)
{
	uk_packed[n > 16][m](kc, a, b, c, ldc, n, alpha, beta);
}

/* Wide tiles for one to four rows against B read in place (see above). */
#define PN_UKW(R, V) \
	static void uk_wrows_##R##_##V(int64_t kc, const float *restrict a, int64_t lda, \
	                               const float *restrict b, int64_t ldb, float *restrict c, \
	                               int64_t ldc, int n, float alpha, float beta) \
	{ ukernel_avx512(R, V, kc, a, lda, 1, b, ldb, 1, c, ldc, n, alpha, beta); } \
	static void uk_wcols_##R##_##V(int64_t kc, const float *restrict a, int64_t lda, \
	                               const float *restrict b, int64_t ldb, float *restrict c, \
	                               int64_t ldc, int n, float alpha, float beta) \
	{ ukernel_avx512(R, V, kc, a, 1, lda, b, ldb, 1, c, ldc, n, alpha, beta); }
PN_UKW(1, 4) PN_UKW(2, 4) PN_UKW(3, 4) PN_UKW(4, 4) PN_UKW(1, 8) PN_UKW(2, 8)
#undef PN_UKW
/* [n > 64][rows] */
static const ukernel_direct_fn uk_wrows[2][5] = {
	{ NULL, uk_wrows_1_4, uk_wrows_2_4, uk_wrows_3_4, uk_wrows_4_4 },
	{ NULL, uk_wrows_1_8, uk_wrows_2_8, NULL, NULL },
};
static const ukernel_direct_fn uk_wcols[2][5] = {
	{ NULL, uk_wcols_1_4, uk_wcols_2_4, uk_wcols_3_4, uk_wcols_4_4 },
	{ NULL, uk_wcols_1_8, uk_wcols_2_8, NULL, NULL },
};

int pn_sgemm_direct_width(int m)
{
	return m <= 2 ? 128 : m <= 4 ? 64 : PN_SGEMM_NR;
}

void pn_sgemm_ukernel_direct(int64_t kc, const float *restrict a, int64_t lda, int trans_a,
                             const float *restrict b, int64_t ldb,
                             float *restrict c, int64_t ldc, int m, int n,
                             float alpha, float beta)
{
	if (n > PN_SGEMM_NR)
		(trans_a ? uk_wcols : uk_wrows)[n > 64][m](kc, a, lda, b, ldb, c, ldc, n, alpha, beta);
	else
		(trans_a ? uk_cols : uk_rows)[n > 16][m](kc, a, lda, b, ldb, c, ldc, n, alpha, beta);
}

/*
 * Narrow products (N <= 4): vectors run down the rows of C instead, 16 rows
 * each, so that one column of B no longer fills a 32-wide tile alone.  A is
 * read k-major, A(i,k) = a[k * ldk + i] (transposed A in place, or a block
 * packed that way), B(k,j) = b[k * bks + j * bjs] by broadcast.  Same
 * per-element operations as above: products FMA-accumulated in k order from
 * zero, then alpha * acc, fused with beta * C.
 */
static inline __attribute__((always_inline)) void
uk_narrow_body(const int vecs, const int cols, int64_t kc, const float *restrict a, int64_t ldk,
               int rows, const float *restrict b, int64_t bks, int64_t bjs,
               float *restrict c, int64_t ldc, float alpha, float beta)
{
	__m512 acc[4][4];
	__mmask16 km[4];
#pragma GCC unroll 4
	for (int v = 0; v < vecs; v++) {
		int left = rows - 16 * v;
		km[v] = left >= 16 ? (__mmask16)0xffff :
		        left > 0 ? (__mmask16)((1u << left) - 1) : (__mmask16)0;
#pragma GCC unroll 4
		for (int j = 0; j < cols; j++)
			acc[v][j] = _mm512_setzero_ps();
	}
	for (int64_t k = 0; k < kc; k++) {
		__m512 av[4];
#pragma GCC unroll 4
		for (int v = 0; v < vecs; v++)
			av[v] = _mm512_maskz_loadu_ps(km[v], a + 16 * v);
#pragma GCC unroll 4
		for (int j = 0; j < cols; j++) {
			__m512 bj = _mm512_set1_ps(b[j * bjs]);
#pragma GCC unroll 4
			for (int v = 0; v < vecs; v++)
				acc[v][j] = _mm512_fmadd_ps(av[v], bj, acc[v][j]);
		}
		a += ldk;
		b += bks;
	}
	/* C's columns are strided: through a small buffer, same arithmetic. */
	__m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
	_Alignas(64) float t[16];
	for (int j = 0; j < cols; j++) {
		for (int v = 0; v < vecs; v++) {
			int live = rows - 16 * v < 16 ? rows - 16 * v : 16;
			float *cj = c + 16 * v * ldc + j;
			__m512 r = _mm512_mul_ps(va, acc[v][j]);
			if (beta != 0.0f) {
				for (int l = 0; l < live; l++)
					t[l] = cj[l * ldc];
				r = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(km[v], t), r);
			}
			_mm512_store_ps(t, r);
			for (int l = 0; l < live; l++)
				cj[l * ldc] = t[l];
		}
	}
}

typedef void (*uk_narrow_fn)(int64_t, const float *restrict, int64_t, int,
                             const float *restrict, int64_t, int64_t,
                             float *restrict, int64_t, float, float);
#define PN_UKN(V, J) \
	static void uk_narrow_##V##_##J(int64_t kc, const float *restrict a, int64_t ldk, int rows, \
	                                const float *restrict b, int64_t bks, int64_t bjs, \
	                                float *restrict c, int64_t ldc, float alpha, float beta) \
	{ uk_narrow_body(V, J, kc, a, ldk, rows, b, bks, bjs, c, ldc, alpha, beta); }
#define PN_UKN4(V) PN_UKN(V, 1) PN_UKN(V, 2) PN_UKN(V, 3) PN_UKN(V, 4)
PN_UKN4(1) PN_UKN4(2) PN_UKN4(3) PN_UKN4(4)
#undef PN_UKN4
#undef PN_UKN
#define PN_UKN_ROW(V) { uk_narrow_##V##_1, uk_narrow_##V##_2, uk_narrow_##V##_3, uk_narrow_##V##_4 }
static const uk_narrow_fn uk_narrow[4][4] = {
	PN_UKN_ROW(1), PN_UKN_ROW(2), PN_UKN_ROW(3), PN_UKN_ROW(4),
};

void pn_sgemm_ukernel_narrow(int64_t kc, const float *restrict a, int64_t ldk, int m,
                             const float *restrict b, int64_t bks, int64_t bjs,
                             float *restrict c, int64_t ldc, int n, float alpha, float beta)
{
	uk_narrow[(m + 15) / 16 - 1][n - 1](kc, a, ldk, m, b, bks, bjs, c, ldc, alpha, beta);
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


/* A row against P panels (pn_sgemm_ukernel_row): acc[p] is panel p's 16
 * columns, FMA-accumulated in k order from zero as the tile does. */
static inline __attribute__((always_inline)) void
uk_row_body(const int P, int64_t kc, const float *restrict a, int64_t aks,
            const float *restrict b, int64_t bpanel, float *restrict c, int n,
            float alpha, float beta)
{
	__m256 acc[PN_SGEMM_ROW_PANELS][2];
#pragma GCC unroll 4
	for (int p = 0; p < P; p++)
		acc[p][0] = acc[p][1] = _mm256_setzero_ps();
	for (int64_t k = 0; k < kc; k++) {
		__m256 ak = _mm256_broadcast_ss(a + k * aks);
#pragma GCC unroll 4
		for (int p = 0; p < P; p++) {
			const float *bk = b + p * bpanel + k * NR;
			acc[p][0] = _mm256_fmadd_ps(ak, _mm256_loadu_ps(bk), acc[p][0]);
			acc[p][1] = _mm256_fmadd_ps(ak, _mm256_loadu_ps(bk + 8), acc[p][1]);
		}
	}
	__m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
#pragma GCC unroll 4
	for (int p = 0; p < P; p++) {
		int cols = n - p * NR < NR ? n - p * NR : NR;
		_Alignas(32) float tmp[NR];
		float *t = cols == NR ? c + p * NR : tmp;
		if (cols < NR) {
			memset(tmp, 0, sizeof tmp);
			if (beta != 0.0f)
				memcpy(tmp, c + p * NR, (size_t)cols * sizeof(float));
		}
		__m256 r0 = _mm256_mul_ps(va, acc[p][0]), r1 = _mm256_mul_ps(va, acc[p][1]);
		if (beta != 0.0f) {
			r0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(t), r0);
			r1 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(t + 8), r1);
		}
		_mm256_storeu_ps(t, r0);
		_mm256_storeu_ps(t + 8, r1);
		if (cols < NR)
			memcpy(c + p * NR, tmp, (size_t)cols * sizeof(float));
	}
}

void pn_sgemm_ukernel_row(int64_t kc, const float *restrict a, int64_t aks,
                          const float *restrict b, int64_t bpanel, int panels,
                          float *restrict c, int n, float alpha, float beta)
{
	switch (panels) {
	case 4: uk_row_body(4, kc, a, aks, b, bpanel, c, n, alpha, beta); break;
	case 3: uk_row_body(3, kc, a, aks, b, bpanel, c, n, alpha, beta); break;
	case 2: uk_row_body(2, kc, a, aks, b, bpanel, c, n, alpha, beta); break;
	default: uk_row_body(1, kc, a, aks, b, bpanel, c, n, alpha, beta); break;
	}
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
