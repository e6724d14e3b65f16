/*
 * bench/gemm.c - pn_sgemm against OpenBLAS's cblas_sgemm.
 *
 *   build/bench/gemm [-t SECONDS] [-s N,N,...] [-j THREADS,...]
 *
 * For each thread count and shape: GFLOP/s of both (median over samples,
 * each sample long enough to swamp timer and thread wake-up noise), and
 * pn / OpenBLAS, with the interquartile spread of the pn samples.  Each
 * result is also checked against the other so that a fast wrong kernel
 * cannot pass.
 *
 * Only this program links OpenBLAS; bin/passnet never does.
 */
#include "exec/gemm.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Provided by OpenBLAS, not declared by every cblas.h. */
char *openblas_get_corename(void);

typedef struct {
	const char *name;
	int ta, tb;
	int64_t M, N, K;
} pn_bench_shape;

/*
 * Convolution shapes (im2col GEMMs: M = Cout, N = Hout*Wout, K = Cin*kh*kw)
 * go here once the conv kernels exist; they are run after the square sizes,
 * with the same columns.
 */
static const pn_bench_shape conv_shapes[] = {
	{ NULL, 0, 0, 0, 0, 0 },
};

static double pn_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int pn_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

typedef struct {
	const pn_bench_shape *s;
	const float *A, *B;
	float *C;
} pn_bench_args;

static void run_pn(const pn_bench_args *a)
{
	const pn_bench_shape *s = a->s;
	pn_sgemm(s->ta, s->tb, s->M, s->N, s->K, 1.0f, a->A, s->ta ? s->M : s->K,
	         a->B, s->tb ? s->K : s->N, 0.0f, a->C, s->N);
}

static void run_blas(const pn_bench_args *a)
{
	const pn_bench_shape *s = a->s;
	cblas_sgemm(CblasRowMajor, s->ta ? CblasTrans : CblasNoTrans,
	            s->tb ? CblasTrans : CblasNoTrans, (int)s->M, (int)s->N, (int)s->K,
	            1.0f, a->A, (int)(s->ta ? s->M : s->K), a->B, (int)(s->tb ? s->K : s->N),
	            0.0f, a->C, (int)s->N);
}

#define PN_SAMPLES 15
#define PN_GROUP 5

/* Calls per sample so that one sample takes about `sample` seconds. */
static int64_t pn_calibrate(void (*fn)(const pn_bench_args *), const pn_bench_args *a,
                            double sample)
{
	int64_t reps = 1;
	for (;;) {
		double t0 = pn_now();
		for (int64_t r = 0; r < reps; r++)
			fn(a);
		double dt = pn_now() - t0;
		if (dt >= sample / 4 || reps >= ((int64_t)1 << 30))
			return dt > 0 ? (int64_t)ceil((double)reps * sample / dt) : reps;
		reps *= 4;
	}
}

static double pn_sample(void (*fn)(const pn_bench_args *), const pn_bench_args *a,
                        int64_t reps)
{
	double t0 = pn_now();
	for (int64_t r = 0; r < reps; r++)
		fn(a);
	return (pn_now() - t0) / (double)reps;
}

static void pn_bench_one(const pn_bench_shape *s, int threads, double sample)
{
	size_t na = (size_t)(s->M * s->K), nb = (size_t)(s->K * s->N), nc = (size_t)(s->M * s->N);
	float *A = pn_sgemm_alloc(na), *B = pn_sgemm_alloc(nb);
	float *C1 = pn_sgemm_alloc(nc), *C2 = pn_sgemm_alloc(nc);
	uint64_t x = 0x9e3779b97f4a7c15u;
	for (size_t i = 0; i < na; i++) {
		x = x * 6364136223846793005u + 1442695040888963407u;
		A[i] = (float)((double)(x >> 40) / (double)(1u << 24)) - 0.5f;
	}
	for (size_t i = 0; i < nb; i++) {
		x = x * 6364136223846793005u + 1442695040888963407u;
		B[i] = (float)((double)(x >> 40) / (double)(1u << 24)) - 0.5f;
	}
	pn_bench_args ap = { s, A, B, C1 }, ab = { s, A, B, C2 };

	/* Warm both up (pages, packing buffers, thread pools) before timing. */
	run_pn(&ap);
	run_blas(&ab);
	double maxdiff = 0;
	for (size_t i = 0; i < nc; i++)
		maxdiff = fmax(maxdiff, fabs((double)C1[i] - (double)C2[i]));

	struct timespec pause = { 0, threads > 1 ? 300000000L : 0L };
	int64_t rp = pn_calibrate(run_pn, &ap, sample);
	nanosleep(&pause, NULL);
	int64_t rb = pn_calibrate(run_blas, &ab, sample);
	nanosleep(&pause, NULL);
	/*
	 * Rounds of a few samples of one library then a few of the other, so
	 * that load from elsewhere on the machine hits both alike.  With
	 * threads, both libraries' idle workers spin for a while after a call
	 * (OpenBLAS's for up to ~0.1 s) and would steal a core from the other:
	 * hence whole groups per library and a pause in between.
	 */
	double tp[PN_SAMPLES], tb[PN_SAMPLES];
	for (int i = 0; i < PN_SAMPLES; i += PN_GROUP) {
		for (int j = i; j < i + PN_GROUP && j < PN_SAMPLES; j++)
			tp[j] = pn_sample(run_pn, &ap, rp);
		nanosleep(&pause, NULL);
		for (int j = i; j < i + PN_GROUP && j < PN_SAMPLES; j++)
			tb[j] = pn_sample(run_blas, &ab, rb);
		nanosleep(&pause, NULL);
	}
	qsort(tp, PN_SAMPLES, sizeof(double), pn_cmp_double);
	qsort(tb, PN_SAMPLES, sizeof(double), pn_cmp_double);
	double flops = 2.0 * (double)s->M * (double)s->N * (double)s->K;
	double gp = flops / tp[PN_SAMPLES / 2] * 1e-9, gb = flops / tb[PN_SAMPLES / 2] * 1e-9;
	/* Spread of the pn samples: (third quartile - first) / median, percent. */
	double spread = (tp[PN_SAMPLES * 3 / 4] - tp[PN_SAMPLES / 4]) / tp[PN_SAMPLES / 2] * 100;
	printf("%-12s %5lld %5lld %5lld %3s%s %7d %9.1f %9.1f %7.2f %6.0f%% %9.1e\n",
	       s->name, (long long)s->M, (long long)s->N, (long long)s->K,
	       s->ta ? "T" : "N", s->tb ? "T" : "N", threads, gp, gb, gp / gb, spread,
	       maxdiff);
	fflush(stdout);
	free(A);
	free(B);
	free(C1);
	free(C2);
}

int main(int argc, char **argv)
{
	double sample = 0.05;
	int64_t sizes[32] = { 64, 128, 256, 512, 1024 };
	int nsizes = 5;
	int threads[8] = { 1, 2 };
	int nthreads = 2;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-t") && i + 1 < argc) {
			sample = atof(argv[++i]);
		} else if (!strcmp(argv[i], "-s") && i + 1 < argc) {
			nsizes = 0;
			for (char *p = strtok(argv[++i], ","); p && nsizes < 32; p = strtok(NULL, ","))
				sizes[nsizes++] = atoll(p);
		} else if (!strcmp(argv[i], "-j") && i + 1 < argc) {
			nthreads = 0;
			for (char *p = strtok(argv[++i], ","); p && nthreads < 8; p = strtok(NULL, ","))
				threads[nthreads++] = atoi(p);
		} else {
			fprintf(stderr, "usage: %s [-t SECONDS] [-s N,N,...] [-j THREADS,...]\n",
			        argv[0]);
			return 2;
		}
	}

	/* Other work on the machine skews the 2-thread rows most: say how much. */
	char load[64] = "?";
	FILE *f = fopen("/proc/loadavg", "r");
	if (f) {
		if (!fgets(load, sizeof(load), f))
			snprintf(load, sizeof(load), "?");
		load[strcspn(load, "\n")] = 0;
		fclose(f);
	}
	printf("pn_sgemm (%s) vs OpenBLAS %s; median of %d samples of ~%.0f ms each; "
	       "loadavg %s\n", pn_sgemm_isa(), openblas_get_corename(), PN_SAMPLES,
	       sample * 1e3, load);
	printf("%-12s %5s %5s %5s %5s %7s %9s %9s %7s %7s %9s\n", "shape", "M", "N", "K", "op",
	       "threads", "pn GF/s", "BLAS GF/s", "ratio", "spread", "max|diff|");
	for (int t = 0; t < nthreads; t++) {
		omp_set_num_threads(threads[t]);
		openblas_set_num_threads(threads[t]);
		for (int i = 0; i < nsizes; i++) {
			char name[32];
			snprintf(name, sizeof(name), "square");
			pn_bench_shape s = { name, 0, 0, sizes[i], sizes[i], sizes[i] };
			pn_bench_one(&s, threads[t], sample);
		}
		for (size_t i = 0; i < sizeof(conv_shapes) / sizeof(conv_shapes[0]); i++)
			if (conv_shapes[i].name)
				pn_bench_one(&conv_shapes[i], threads[t], sample);
	}
	return 0;
}
