/*
 * gemm.h - single-precision matrix products for MatMul, Gemm, Conv and
 * friends.  Row-major; op(X) is X or its transpose.
 *
 * (Interim reference implementation; the blocked, packed kernel replaces
 * exec/gemm.c behind this same interface.)
 */
#ifndef PN_GEMM_H
#define PN_GEMM_H

#include <stdint.h>

/* C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C.  beta == 0 never
 * reads C.  Deterministic for any thread count. */
void pn_sgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
	      const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
	      int64_t ldc);

#endif
