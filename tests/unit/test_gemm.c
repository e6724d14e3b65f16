/*
 * test_gemm.c - pn_sgemm and friends against a double-precision triple loop,
 * plus the promises of gemm.h that a numeric check alone would miss: the
 * same bits for 1 and 2 threads, beta == 0 never reading C, alpha == 0
 * never reading A or B, nothing written outside the M x N window of C, and
 * a row alone computed to the bits it gets inside a taller product.
 *
 * Stored matrices get leading dimensions larger than their rows and NaN in
 * the gap, so a kernel that reads past a row shows up as NaN in C.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "runtime/gemm.h"
#include "runtime/gemm_kernel.h"

#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 0x243f6a8885a308d3u;

static float rnd(void)
{
	rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
	return (float)((double)(rng_state >> 40) / (double)(1u << 24)) * 2.0f - 1.0f;
}

/* rows x cols stored with leading dimension ld; the gap holds NaN. */
static float *matrix(int64_t rows, int64_t cols, int64_t ld)
{
	size_t n = (size_t)(rows > 0 ? rows : 1) * (size_t)(ld > 0 ? ld : 1);
	float *m = malloc(n * sizeof(float));
	assert_non_null(m);
	for (size_t i = 0; i < n; i++)
		m[i] = NAN;
	for (int64_t i = 0; i < rows; i++)
		for (int64_t j = 0; j < cols; j++)
			m[i * ld + j] = rnd();
	return m;
}

typedef struct {
	int ta, tb;
	int64_t M, N, K;
	int64_t lda, ldb, ldc;
	float alpha, beta;
	float *A, *B, *C0, *C;
} problem;

/* Stored shapes follow gemm.h: A is M x K (K x M if ta), B is K x N (N x K if tb). */
static void problem_make(problem *p, int ta, int tb, int64_t M, int64_t N, int64_t K,
                         int64_t pad, float alpha, float beta)
{
	p->ta = ta;
	p->tb = tb;
	p->M = M;
	p->N = N;
	p->K = K;
	p->alpha = alpha;
	p->beta = beta;
	int64_t ar = ta ? K : M, ac = ta ? M : K, br = tb ? N : K, bc = tb ? K : N;
	p->lda = ac + pad;
	p->ldb = bc + pad;
	p->ldc = N + pad;
	p->A = matrix(ar, ac, p->lda);
	p->B = matrix(br, bc, p->ldb);
	p->C0 = matrix(M, N, p->ldc);
	/* The gap of C gets a sentinel that must survive. */
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = N; j < p->ldc; j++)
			p->C0[i * p->ldc + j] = 12345.0f;
	size_t cn = (size_t)(M > 0 ? M : 1) * (size_t)(p->ldc > 0 ? p->ldc : 1);
	p->C = malloc(cn * sizeof(float));
	assert_non_null(p->C);
	memcpy(p->C, p->C0, cn * sizeof(float));
}

static void problem_free(problem *p)
{
	free(p->A);
	free(p->B);
	free(p->C0);
	free(p->C);
}

static void problem_run(problem *p)
{
	pn_sgemm(p->ta, p->tb, p->M, p->N, p->K, p->alpha, p->A, p->lda, p->B, p->ldb,
	         p->beta, p->C, p->ldc);
}

static double elem_a(const problem *p, int64_t i, int64_t k)
{
	return p->ta ? p->A[k * p->lda + i] : p->A[i * p->lda + k];
}

static double elem_b(const problem *p, int64_t k, int64_t j)
{
	return p->tb ? p->B[j * p->ldb + k] : p->B[k * p->ldb + j];
}

/*
 * Each element within (K + 2) * 2 * eps of the sum of the magnitudes it was
 * made of, which bounds the rounding of any order of float summation.
 */
static void problem_check(const problem *p)
{
	for (int64_t i = 0; i < p->M; i++) {
		for (int64_t j = 0; j < p->N; j++) {
			double s = 0, mag = 0;
			for (int64_t k = 0; p->alpha != 0.0f && k < p->K; k++) {
				double t = elem_a(p, i, k) * elem_b(p, k, j);
				s += t;
				mag += fabs(t);
			}
			double c0 = p->C0[i * p->ldc + j];
			double want = p->alpha * s + (p->beta != 0.0f ? p->beta * c0 : 0.0);
			double bound = fabs(p->alpha) * mag + (p->beta != 0.0f ? fabs(p->beta * c0) : 0.0);
			double tol = 2.0 * (double)(p->K + 2) * FLT_EPSILON * bound + 1e-30;
			double got = p->C[i * p->ldc + j];
			if (!(fabs(got - want) <= tol)) {
				fail_msg("ta=%d tb=%d M=%lld N=%lld K=%lld alpha=%g beta=%g: "
				         "C[%lld,%lld] = %.9g, want %.9g (tol %.3g)",
				         p->ta, p->tb, (long long)p->M, (long long)p->N,
				         (long long)p->K, p->alpha, p->beta, (long long)i,
				         (long long)j, got, want, tol);
			}
		}
		for (int64_t j = p->N; j < p->ldc; j++)
			assert_true(p->C[i * p->ldc + j] == 12345.0f);
	}
}

static const float alphas[] = { 1.0f, -0.5f, 2.0f };
static const float betas[] = { 0.0f, 1.0f, -1.5f };

static void check_one(int ta, int tb, int64_t M, int64_t N, int64_t K, int64_t pad,
                      float alpha, float beta)
{
	problem p;
	problem_make(&p, ta, tb, M, N, K, pad, alpha, beta);
	problem_run(&p);
	problem_check(&p);
	problem_free(&p);
}

/* Edges and odd sizes around the micro-tile (MR <= 14, NR <= 32) and KC. */
static void test_shapes(void **state)
{
	(void)state;
	static const int64_t Ms[] = { 1, 2, 5, 11, 12, 13, 29 };
	static const int64_t Ns[] = { 1, 3, 15, 16, 17, 32, 33, 70 };
	static const int64_t Ks[] = { 1, 3, 64, 385, 800 };
	int n = 0;
	for (size_t a = 0; a < sizeof(Ms) / sizeof(Ms[0]); a++)
		for (size_t b = 0; b < sizeof(Ns) / sizeof(Ns[0]); b++)
			for (size_t c = 0; c < sizeof(Ks) / sizeof(Ks[0]); c++)
				for (int t = 0; t < 4; t++, n++)
					check_one(t & 1, t >> 1, Ms[a], Ns[b], Ks[c], n % 3 == 0 ? 0 : n % 5 + 1,
					          alphas[n % 3], betas[(n / 3) % 3]);
}

/* Several NC blocks and k-blocks (KC = 512), more than MC rows; every transpose. */
static void test_large(void **state)
{
	(void)state;
	for (int t = 0; t < 4; t++)
		check_one(t & 1, t >> 1, 301 - 7 * t, 830 + 29 * t, 1030 + 11 * t, 3,
		          alphas[t % 3], betas[t % 3]);
	check_one(0, 1, 4100, 40, 600, 2, 1.0f, 0.5f);
	check_one(1, 0, 4100, 70, 530, 0, -1.0f, 0.0f);
	check_one(0, 0, 4100, 300, 100, 1, 1.0f, 1.0f);    /* A packed in two MC blocks */
	check_one(0, 0, 1, 4100, 1000, 0, 1.0f, 0.0f);  /* thin: threads split N */
	check_one(1, 1, 3000, 1, 500, 1, 1.0f, 1.0f);   /* thin: threads split M */
}

static void test_empty(void **state)
{
	(void)state;
	/* M or N == 0: nothing to do, nothing touched. */
	float c = 7.0f;
	pn_sgemm(0, 0, 0, 5, 5, 1.0f, NULL, 5, NULL, 5, 0.0f, &c, 5);
	pn_sgemm(0, 0, 5, 0, 5, 1.0f, NULL, 5, NULL, 5, 0.0f, &c, 1);
	assert_true(c == 7.0f);
	/* K == 0 and alpha == 0: C = beta * C without reading A or B. */
	for (int b = 0; b < 3; b++) {
		problem p;
		problem_make(&p, 0, 0, 9, 40, 0, 2, 1.0f, betas[b]);
		problem_run(&p);
		problem_check(&p);
		problem_free(&p);

		problem_make(&p, 1, 0, 9, 40, 33, 2, 0.0f, betas[b]);
		for (int64_t i = 0; i < 33 * p.lda; i++)
			p.A[i] = NAN;
		problem_run(&p);
		problem_check(&p);
		problem_free(&p);
	}
}

/* beta == 0 must not read C: NaN garbage in C gives a finite result. */
static void test_beta0_nan(void **state)
{
	(void)state;
	static const int64_t sz[][3] = { { 1, 1, 1 }, { 13, 33, 7 }, { 300, 257, 400 }, { 1, 64, 64 } };
	for (size_t s = 0; s < sizeof(sz) / sizeof(sz[0]); s++) {
		problem p;
		problem_make(&p, 0, 1, sz[s][0], sz[s][1], sz[s][2], 1, 1.0f, 0.0f);
		for (int64_t i = 0; i < p.M; i++)
			for (int64_t j = 0; j < p.N; j++)
				p.C0[i * p.ldc + j] = p.C[i * p.ldc + j] = NAN;
		problem_run(&p);
		for (int64_t i = 0; i < p.M; i++)
			for (int64_t j = 0; j < p.N; j++)
				assert_true(isfinite(p.C[i * p.ldc + j]));
		problem_check(&p);
		problem_free(&p);
	}
}

static void assert_same_bits(const float *x, const float *y, size_t n)
{
	if (memcmp(x, y, n * sizeof(float)) != 0) {
		for (size_t i = 0; i < n; i++)
			if (memcmp(x + i, y + i, sizeof(float)) != 0)
				fail_msg("element %zu differs: %.9g vs %.9g", i, x[i], y[i]);
	}
}

/* Same bits for 1 and 2 threads, whatever way the threads split C. */
static void test_threads_bitwise(void **state)
{
	(void)state;
	static const int64_t sz[][3] = {
		{ 777, 901, 1100 }, { 1, 4100, 1000 }, { 2500, 20, 700 }, { 64, 64, 64 },
	};
	int saved = omp_get_max_threads();
	for (size_t s = 0; s < sizeof(sz) / sizeof(sz[0]); s++) {
		for (int t = 0; t < 4; t++) {
			problem p;
			problem_make(&p, t & 1, t >> 1, sz[s][0], sz[s][1], sz[s][2], 1, 0.75f, 0.5f);
			size_t cn = (size_t)(p.M * p.ldc);
			omp_set_num_threads(1);
			problem_run(&p);
			float *one = malloc(cn * sizeof(float));
			assert_non_null(one);
			memcpy(one, p.C, cn * sizeof(float));
			memcpy(p.C, p.C0, cn * sizeof(float));
			omp_set_num_threads(2);
			problem_run(&p);
			assert_same_bits(one, p.C, cn);
			if (s == 0 && t == 0)
				problem_check(&p);
			free(one);
			problem_free(&p);
		}
	}
	omp_set_num_threads(saved);
}

/* Pre-packed A or B: the same arithmetic, so the same bits as pn_sgemm. */
static void test_packed(void **state)
{
	(void)state;
	static const int64_t sz[][3] = { { 1, 1, 1 }, { 13, 45, 390 }, { 700, 300, 800 }, { 37, 1100, 9 } };
	for (size_t s = 0; s < sizeof(sz) / sizeof(sz[0]); s++) {
		for (int t = 0; t < 4; t++) {
			int ta = t & 1, tb = t >> 1;
			problem p;
			problem_make(&p, ta, tb, sz[s][0], sz[s][1], sz[s][2], 2, 1.25f, t == 3 ? 0.0f : 1.0f);
			size_t cn = (size_t)(p.M * p.ldc);
			problem_run(&p);
			float *want = malloc(cn * sizeof(float));
			assert_non_null(want);
			memcpy(want, p.C, cn * sizeof(float));

			float *pa = pn_sgemm_alloc(pn_sgemm_pack_a_size(p.M, p.K));
			assert_non_null(pa);
			pn_sgemm_pack_a(ta, p.M, p.K, p.A, p.lda, pa);
			memcpy(p.C, p.C0, cn * sizeof(float));
			pn_sgemm_packed_a(tb, p.M, p.N, p.K, p.alpha, pa, p.B, p.ldb, p.beta, p.C, p.ldc);
			assert_same_bits(want, p.C, cn);
			free(pa);

			float *pb = pn_sgemm_alloc(pn_sgemm_pack_b_size(p.K, p.N));
			assert_non_null(pb);
			pn_sgemm_pack_b(tb, p.K, p.N, p.B, p.ldb, pb);
			memcpy(p.C, p.C0, cn * sizeof(float));
			pn_sgemm_packed_b(ta, p.M, p.N, p.K, p.alpha, p.A, p.lda, pb, p.beta, p.C, p.ldc);
			assert_same_bits(want, p.C, cn);
			free(pb);

			problem_check(&p);
			free(want);
			problem_free(&p);
		}
	}
}

/*
 * Batched: every item gets the bits pn_sgemm gives it alone, for small
 * items (one per thread), large ones (threads inside), shared operands
 * (stride 0), and any thread count.
 */
static void check_batched(int ta, int tb, int64_t M, int64_t N, int64_t K, int64_t batch,
                          int share_a, int share_b, int tight)
{
	/* tight: items back to back, which lets a shared B become one product. */
	int64_t gap = tight ? 0 : 1;
	int64_t lda = (ta ? M : K) + 1, ldb = (tb ? K : N) + 2, ldc = N + 1;
	int64_t sa = share_a ? 0 : (ta ? K : M) * lda + 5 * gap;
	int64_t sb = share_b ? 0 : (tb ? N : K) * ldb + 3 * gap;
	int64_t sc = M * ldc + 7 * gap;
	int64_t an = (share_a ? 1 : batch) * ((ta ? K : M) * lda + 5 * gap);
	int64_t bn = (share_b ? 1 : batch) * ((tb ? N : K) * ldb + 3 * gap);
	size_t cn = (size_t)(batch * sc);
	float *A = matrix(1, an, an), *B = matrix(1, bn, bn);
	float *C0 = matrix(1, (int64_t)cn, (int64_t)cn), *want = malloc(cn * sizeof(float));
	float *got = malloc(cn * sizeof(float));
	assert_non_null(want);
	assert_non_null(got);
	memcpy(want, C0, cn * sizeof(float));
	for (int64_t i = 0; i < batch; i++)
		pn_sgemm(ta, tb, M, N, K, 1.5f, A + i * sa, lda, B + i * sb, ldb, 0.5f,
		         want + i * sc, ldc);
	int saved = omp_get_max_threads();
	for (int t = 1; t <= 2; t++) {
		omp_set_num_threads(t);
		memcpy(got, C0, cn * sizeof(float));
		pn_sgemm_batched(ta, tb, M, N, K, 1.5f, A, lda, sa, B, ldb, sb, 0.5f, got, ldc, sc,
		                 batch);
		assert_same_bits(want, got, cn);
	}
	omp_set_num_threads(saved);

	/* And the first item is right, not just consistent. */
	problem p = {
		.ta = ta, .tb = tb, .M = M, .N = N, .K = K, .lda = lda, .ldb = ldb, .ldc = ldc,
		.alpha = 1.5f, .beta = 0.5f, .A = A, .B = B, .C0 = C0, .C = got,
	};
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = N; j < ldc; j++)
			p.C[i * ldc + j] = 12345.0f;
	problem_check(&p);
	free(A);
	free(B);
	free(C0);
	free(want);
	free(got);
}

static void test_batched(void **state)
{
	(void)state;
	check_batched(0, 0, 7, 19, 33, 50, 0, 0, 0);      /* small items across threads */
	check_batched(1, 0, 64, 64, 64, 9, 0, 1, 0);      /* shared B */
	check_batched(0, 1, 40, 70, 100, 5, 1, 0, 0);     /* shared A */
	check_batched(1, 1, 300, 200, 250, 3, 0, 0, 0);   /* large items, threads inside */
	check_batched(0, 1, 150, 130, 140, 4, 0, 0, 0);   /* large items, one per thread */
	check_batched(0, 0, 3, 5, 2, 1, 0, 0, 0);         /* batch of one */
	check_batched(0, 1, 20, 33, 17, 6, 0, 1, 1);      /* shared B: one tall product */
	check_batched(0, 0, 5, 600, 300, 4, 0, 1, 1);
	check_batched(0, 0, 9, 3, 40, 7, 0, 1, 1);        /* ... and a narrow one */
	check_batched(0, 0, 6, 50, 20, 30, 0, 0, 1);
	pn_sgemm_batched(0, 0, 4, 4, 4, 1.0f, NULL, 4, 16, NULL, 4, 16, 0.0f, NULL, 4, 16, 0);
}

/*
 * Packing an operand or reading it in place, and the narrow kernel (gemm.c
 * picks per shape) run the same arithmetic, so forcing each choice must
 * give the same bits.
 */
static void test_paths_bitwise(void **state)
{
	(void)state;
	static const int64_t sz[][3] = {
		{ 1, 64, 64 }, { 13, 45, 600 }, { 100, 300, 70 }, { 600, 40, 530 }, { 37, 700, 1030 },
		{ 200, 1, 600 }, { 77, 3, 70 }, { 5, 4, 1100 }, { 1, 2, 9 },
	};
	for (size_t s = 0; s < sizeof(sz) / sizeof(sz[0]); s++) {
		for (int t = 0; t < 4; t++) {
			problem p;
			problem_make(&p, t & 1, t >> 1, sz[s][0], sz[s][1], sz[s][2], 3, -1.0f, 0.25f);
			size_t cn = (size_t)(p.M * p.ldc);
			problem_run(&p);
			float *want = malloc(cn * sizeof(float));
			assert_non_null(want);
			memcpy(want, p.C, cn * sizeof(float));
			for (int f = 0; f < 8; f++) {
				pn_sgemm_force_direct = f;
				memcpy(p.C, p.C0, cn * sizeof(float));
				problem_run(&p);
				assert_same_bits(want, p.C, cn);
			}
			pn_sgemm_force_direct = -1;
			problem_check(&p);
			free(want);
			problem_free(&p);
		}
	}
}

/*
 * A row alone (M = 1: a batch-1 fully connected layer, which may run a
 * kernel of its own) gets the bits that row gets inside a taller product,
 * for B as given and packed, across panel and k-block edges.
 */
static void test_row_alone(void **state)
{
	(void)state;
	static const int64_t nk[][2] = {
		{ 64, 2688 }, { 1, 7 }, { 17, 600 }, { 33, 1 }, { 70, 513 }, { 130, 90 }, { 300, 1030 },
	};
	for (size_t s = 0; s < sizeof(nk) / sizeof(nk[0]); s++) {
		for (int t = 0; t < 16; t++) {
			int tb = t & 1, packed = (t >> 1) & 1, ta = t >> 3;
			float beta = t & 4 ? -1.5f : 0.0f;
			problem p;   /* 7 rows: row 3 of it is the row alone */
			problem_make(&p, ta, tb, 7, nk[s][0], nk[s][1], 2, 0.75f, beta);
			problem_run(&p);
			problem_check(&p);
			float *row = malloc((size_t)p.ldc * sizeof(float));
			assert_non_null(row);
			memcpy(row, p.C0 + 3 * p.ldc, (size_t)p.ldc * sizeof(float));
			/* row 3 of op(A): 1 x K, read with A's own leading dimension */
			const float *a3 = ta ? p.A + 3 : p.A + 3 * p.lda;
			if (packed) {
				float *pb = pn_sgemm_alloc(pn_sgemm_pack_b_size(p.K, p.N));
				assert_non_null(pb);
				pn_sgemm_pack_b(tb, p.K, p.N, p.B, p.ldb, pb);
				pn_sgemm_packed_b(ta, 1, p.N, p.K, p.alpha, a3, p.lda, pb, p.beta, row, p.ldc);
				free(pb);
			} else {
				pn_sgemm(ta, tb, 1, p.N, p.K, p.alpha, a3, p.lda, p.B, p.ldb, p.beta, row, p.ldc);
			}
			assert_same_bits(p.C + 3 * p.ldc, row, (size_t)p.N);
			for (int64_t j = p.N; j < p.ldc; j++)
				assert_true(row[j] == 12345.0f);
			free(row);
			problem_free(&p);
		}
	}
}

/* The smallest products take the single-threaded path and stay right. */
static void test_tiny(void **state)
{
	(void)state;
	for (int t = 0; t < 4; t++) {
		check_one(t & 1, t >> 1, 1, 64, 64, 0, 1.0f, 0.0f);
		check_one(t & 1, t >> 1, 64, 1, 64, 0, 1.0f, 1.0f);
		check_one(t & 1, t >> 1, 1, 1, 1, 0, 2.0f, 0.5f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shapes),
		cmocka_unit_test(test_large),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_beta0_nan),
		cmocka_unit_test(test_threads_bitwise),
		cmocka_unit_test(test_packed),
		cmocka_unit_test(test_batched),
		cmocka_unit_test(test_paths_bitwise),
		cmocka_unit_test(test_row_alone),
		cmocka_unit_test(test_tiny),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
