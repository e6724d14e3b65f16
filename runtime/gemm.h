/*
 * gemm.h - single-precision matrix multiply for the reference executor.
 *
 *   C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C
 *
 * All matrices are row-major with leading dimensions (elements between the
 * starts of consecutive rows as stored): op(A) = A when trans_a == 0, so A
 * is M x K with lda >= K; op(A) = A^T when trans_a != 0, so A is stored
 * K x M with lda >= M.  Likewise for B (K x N, or N x K when transposed) and
 * C (M x N, ldc >= N).  beta == 0 never reads C, so C may hold garbage;
 * alpha == 0 or K == 0 never reads A or B.
 *
 * Every element is computed the same way whatever the path taken: products
 * fused-multiply-added in k order from zero within fixed blocks of K (which
 * depend on K alone), then C = alpha * sum, fused with beta * C.  So results
 * are bitwise identical for any OpenMP thread count (threads only own
 * disjoint blocks of C, K is never split), for pre-packed or raw operands,
 * and for a batched call or a loop of single ones.  Products below a size
 * threshold run on the calling thread, and a call from inside an OpenMP
 * parallel region never starts threads of its own.
 *
 * Pre-packed operands: a weight used by many calls (a convolution or Gemm
 * initializer) can be packed once into the micro-kernel's panel layout and
 * passed in place of the raw matrix.  The layout is private to this build
 * (it depends on the micro-kernel the compiler chose), so packed buffers live
 * in memory only, never in the store.  Buffers must be 64-byte aligned
 * (pn_sgemm_alloc) and hold pn_sgemm_pack_*_size() floats.
 */
#ifndef PN_GEMM_H
#define PN_GEMM_H

#include <stddef.h>
#include <stdint.h>

void pn_sgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K,
              float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
              float beta, float *C, int64_t ldc);

/*
 * batch independent products; item i uses A + i*stride_a, B + i*stride_b and
 * C + i*stride_c (strides in elements).  A stride of 0 shares the operand
 * across the batch (MatMul broadcasting); the C blocks must not overlap.
 * Small items run one per thread, large ones one after another with the
 * threads inside each; either way the bits match pn_sgemm on every item.
 */
void pn_sgemm_batched(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K,
                      float alpha, const float *A, int64_t lda, int64_t stride_a,
                      const float *B, int64_t ldb, int64_t stride_b,
                      float beta, float *C, int64_t ldc, int64_t stride_c,
                      int64_t batch);

/* 64-byte aligned buffer of n floats for packed operands; free() it. */
float *pn_sgemm_alloc(size_t n);

/* op(A)[M,K] packed once, for pn_sgemm_packed_a (conv weights in NCHW). */
size_t pn_sgemm_pack_a_size(int64_t M, int64_t K);
void pn_sgemm_pack_a(int trans_a, int64_t M, int64_t K, const float *A, int64_t lda,
                     float *packed);
void pn_sgemm_packed_a(int trans_b, int64_t M, int64_t N, int64_t K,
                       float alpha, const float *packed_a,
                       const float *B, int64_t ldb,
                       float beta, float *C, int64_t ldc);

/* op(B)[K,N] packed once, for pn_sgemm_packed_b (Gemm/MatMul weights). */
size_t pn_sgemm_pack_b_size(int64_t K, int64_t N);
void pn_sgemm_pack_b(int trans_b, int64_t K, int64_t N, const float *B, int64_t ldb,
                     float *packed);
void pn_sgemm_packed_b(int trans_a, int64_t M, int64_t N, int64_t K,
                       float alpha, const float *A, int64_t lda,
                       const float *packed_b,
                       float beta, float *C, int64_t ldc);

/* Whether pn_sgemm packs op(B) for this product (rather than reading it
 * in place or turning the tile around): then a B reused by many calls is
 * worth packing once with pn_sgemm_pack_b. */
int pn_sgemm_packs_b(int trans_b, int64_t M, int64_t N);

/* Name of the micro-kernel compiled in ("avx512", "avx2", "generic"). */
const char *pn_sgemm_isa(void);

#endif
