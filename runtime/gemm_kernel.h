/*
 * gemm_kernel.h - the register-blocked micro-kernel behind pn_sgemm (internal).
 *
 * The micro-kernel computes one MR x NR tile of C from two packed
 * micro-panels: A as kc steps of MR floats (one broadcast each), B as kc
 * steps of NR floats (NR/16 vector loads each), so C rows are the vector
 * dimension, which is what row-major C wants.  The tile shape is chosen per
 * instruction set at compile time; the blocking loops in gemm.c only read
 * PN_SGEMM_MR / PN_SGEMM_NR and never look inside.
 */
#ifndef PN_GEMM_KERNEL_H
#define PN_GEMM_KERNEL_H

#include <stdint.h>

#if defined(__AVX512F__)
/* 32 zmm registers: 12x2 accumulators + 2 B vectors + broadcasts. */
#ifndef PN_SGEMM_MR
#define PN_SGEMM_MR 12
#endif
#define PN_SGEMM_NR 32
#define PN_SGEMM_ISA "avx512"
#elif defined(__AVX2__) && defined(__FMA__)
/* 16 ymm registers: 6x2 accumulators + 2 B vectors + 1 broadcast. */
#define PN_SGEMM_MR 6
#define PN_SGEMM_NR 16
#define PN_SGEMM_ISA "avx2"
#else
#define PN_SGEMM_MR 4
#define PN_SGEMM_NR 16
#define PN_SGEMM_ISA "generic"
#endif

/*
 * C[0..m, 0..n] = alpha * (A_panel * B_panel) + beta * C, m <= MR, n <= NR.
 * a: kc x MR packed, rows beyond m zero.  b: kc x NR packed, columns beyond
 * n zero.  beta == 0 stores without reading C.  Edge tiles run the same
 * arithmetic as full tiles, so where a tile boundary falls never changes a
 * result bit.
 */
void pn_sgemm_ukernel(int64_t kc, const float *restrict a, const float *restrict b,
                      float *restrict c, int64_t ldc, int m, int n,
                      float alpha, float beta);

#if defined(__AVX512F__)
/*
 * The same tile, same arithmetic, reading A and B where they are: A's m
 * rows at a (row-major with leading dimension lda, or stored transposed
 * when trans_a), B's kc rows of n floats ldb apart.  Small products spend
 * more on packing than on multiplying; this lets them skip it.  n may exceed
 * NR, up to pn_sgemm_direct_width(m), when B is read in place with
 * ldb != NR (the columns of a packed B panel end at NR).
 */
#define PN_SGEMM_HAVE_DIRECT 1
void pn_sgemm_ukernel_direct(int64_t kc, const float *restrict a, int64_t lda, int trans_a,
                             const float *restrict b, int64_t ldb,
                             float *restrict c, int64_t ldc, int m, int n,
                             float alpha, float beta);
int pn_sgemm_direct_width(int m);

/*
 * C[0..m, 0..n] for n <= 4 and m <= 64 with the vectors down the rows:
 * A(i,k) = a[k * ldk + i], B(k,j) = b[k * bks + j * bjs].  Same arithmetic
 * again; for products too narrow to fill a row of the tile.
 */
#define PN_SGEMM_NARROW_N 4
#define PN_SGEMM_NARROW_M 64
void pn_sgemm_ukernel_narrow(int64_t kc, const float *restrict a, int64_t ldk, int m,
                             const float *restrict b, int64_t bks, int64_t bjs,
                             float *restrict c, int64_t ldc, int n, float alpha, float beta);
#endif

#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)
/*
 * One row of C (m == 1) against `panels` consecutive packed B micro-panels
 * (at most PN_SGEMM_ROW_PANELS, bpanel floats apart), n columns in all, the
 * row's kc floats of A aks apart.  The per-element arithmetic of
 * pn_sgemm_ukernel, but no padding rows are computed and the FMA chains of
 * the panels interleave: a batch-1 fully connected layer ran the 6-row tile
 * at 6 times its work, one latency-bound chain per panel.
 */
#define PN_SGEMM_HAVE_ROW 1
#define PN_SGEMM_ROW_PANELS 4
void pn_sgemm_ukernel_row(int64_t kc, const float *restrict a, int64_t aks,
                          const float *restrict b, int64_t bpanel, int panels,
                          float *restrict c, int n, float alpha, float beta);
#endif

/*
 * For tests only: -1 (the default) lets gemm.c choose per product whether
 * to pack A and B and which kernel to run; 0..7 forces reading A (bit 0)
 * and B (bit 1) in place and the narrow kernel (bit 2) where they apply.
 * Every choice must give the same bits.
 */
extern int pn_sgemm_force_direct;

#endif
