/* gemm.c - interim reference SGEMM (see gemm.h). */
#include "exec/gemm.h"

void pn_sgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
	      const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
	      int64_t ldc)
{
	#pragma omp parallel for if (M * N * K > 65536) schedule(static)
	for (int64_t i = 0; i < M; i++) {
		for (int64_t j = 0; j < N; j++)
			C[i * ldc + j] = beta == 0 ? 0 : beta * C[i * ldc + j];
		for (int64_t p = 0; p < K; p++) {
			float a = alpha * (trans_a ? A[p * lda + i] : A[i * lda + p]);
			for (int64_t j = 0; j < N; j++)
				C[i * ldc + j] += a * (trans_b ? B[j * ldb + p] : B[p * ldb + j]);
		}
	}
}
