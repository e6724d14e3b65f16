/*
 * bench/gemm.c - pn_sgemm against OpenBLAS's cblas_sgemm, and passnet's
 * Conv kernel against im2col + cblas_sgemm.
 *
 *   build/bench/gemm [-t SECONDS] [-s N,N,...] [-j THREADS,...] [-c] [-n NAME]
 *
 * For each thread count and shape: GFLOP/s of both (median over samples,
 * each sample long enough to swamp timer and thread wake-up noise), and
 * pn / OpenBLAS, with the interquartile spread of the pn samples.  Each
 * result is also checked against the other so that a fast wrong kernel
 * cannot pass.  -c runs the convolution shapes only, -n only those whose
 * name contains NAME.
 *
 * Only this program links OpenBLAS; bin/passnet never does.
 */
#include "runtime/gemm.h"

#include <cblas.h>
#include <malloc.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/err.h"
#include "common/timing.h"
#include "common/util.h"
#include "runtime/session.h"
#include "runtime/ops/conv.h"
#include "schemas/ops.h"

/* Provided by OpenBLAS, not declared by every cblas.h. */
char *openblas_get_corename(void);

typedef struct {
	const char *name;
	int ta, tb;
	int64_t M, N, K;
} pn_bench_shape;

/* A 2-D convolution [1, C, H, W] * [M, C/G, k, k], stride s, padding p on
 * every side; FLOPs are 2 M (C/G) k^2 Ho Wo. */
typedef struct {
	const char *name;
	int64_t C, H, W, M, k, s, p, G;
} pn_bench_conv;

static const pn_bench_conv conv_shapes[] = {
	{ "resnet3x3", 64, 56, 56, 64, 3, 1, 1, 1 },
	{ "resnet3x3s2", 128, 56, 56, 128, 3, 2, 1, 1 },
	{ "resnet3x3-14", 256, 14, 14, 256, 3, 1, 1, 1 },
	{ "vgg3x3-56", 256, 56, 56, 256, 3, 1, 1, 1 },
	{ "resnet3x3-7", 512, 7, 7, 512, 3, 1, 1, 1 },
	{ "resnet1x1", 256, 56, 56, 64, 1, 1, 0, 1 },
	{ "resnet1x1up", 64, 56, 56, 256, 1, 1, 0, 1 },
	{ "stem7x7s2", 3, 224, 224, 64, 7, 2, 3, 1 },
	{ "mbv2expand", 16, 112, 112, 96, 1, 1, 0, 1 },
	{ "effnet1x1", 96, 14, 14, 576, 1, 1, 0, 1 },
	{ "yolohead1x1", 256, 80, 80, 12, 1, 1, 0, 1 },
	{ "head1x1-40", 256, 40, 40, 3, 1, 1, 0, 1 },
	{ "head3x3-3", 256, 3, 3, 16, 3, 1, 1, 1 },
	{ "head3x3-10", 256, 10, 10, 24, 3, 1, 1, 1 },
	{ "dw3x3-112", 32, 112, 112, 32, 3, 1, 1, 32 },
	{ "dw3x3s2-56", 144, 56, 56, 144, 3, 2, 1, 144 },
	{ "dw5x5-14", 672, 14, 14, 672, 5, 1, 2, 672 },
	{ "dw3x3-7", 1152, 7, 7, 1152, 3, 1, 1, 1152 },
	{ "resnext-g32", 512, 14, 14, 512, 3, 1, 1, 32 },
};

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

/* --- convolution -------------------------------------------------------------- */

typedef struct {
	pn_node n;
	pn_attr attrs[5];
	int64_t ints[4][4];
	int32_t idx[4];
} pn_conv_node;

static void pn_conv_node_init(pn_conv_node *b, const pn_bench_conv *c)
{
	memset(b, 0, sizeof(*b));
	int64_t v[4][4] = { { c->s, c->s }, { 1, 1 }, { c->p, c->p, c->p, c->p }, { c->k, c->k } };
	static const char *names[4] = { "strides", "dilations", "pads", "kernel_shape" };
	static const int lens[4] = { 2, 2, 4, 2 };
	for (int i = 0; i < 4; i++) {
		memcpy(b->ints[i], v[i], sizeof(v[i]));
		b->attrs[i] = (pn_attr){ .name = names[i], .type = PN_ATTR_INTS, .n = lens[i],
					 .ints = b->ints[i] };
	}
	b->attrs[4] = (pn_attr){ .name = "group", .type = PN_ATTR_INT, .i = c->G };
	b->n = (pn_node){ .name = c->name, .op_type = "Conv", .domain = "", .op = PN_OP_Conv,
			  .opset = 13, .n_in = 3, .n_out = 1, .n_attr = 5, .attrs = b->attrs,
			  .in = b->idx, .out = b->idx + 3 };
}

typedef struct {
	const pn_bench_conv *c;
	pn_conv_node node;
	pn_tensor *in[3];
	int64_t Ho, Wo;
	float *col, *y;        /* the yardstick's im2col matrix and output */
	float *out;            /* a pn output, for the check (when not NULL) */
	int path;              /* pn_conv_force_path for run_pn_conv */
} pn_conv_args;

/* One Conv node through the executor (allocation of its output included:
 * that is how the executor runs it). */
static void run_pn_conv(const pn_conv_args *a)
{
	pn_tensor *out[1] = { NULL };
	char err[PN_ERRLEN];
	pn_conv_force_path = a->path;
	if (pn_exec_node(&a->node.n, a->in, 3, out, 0, err)) {
		fprintf(stderr, "%s: %s\n", a->c->name, err);
		exit(1);
	}
	pn_conv_force_path = -1;
	if (a->out)
		memcpy(a->out, out[0]->data, sizeof(float) * (size_t)out[0]->numel);
	pn_tensor_free(out[0]);
}

/* The yardstick: a plain im2col per group, cblas_sgemm, bias. */
static void run_blas_conv(const pn_conv_args *a)
{
	const pn_bench_conv *c = a->c;
	const int64_t Cg = c->C / c->G, Mg = c->M / c->G, K = Cg * c->k * c->k, N = a->Ho * a->Wo;
	const float *x = a->in[0]->data, *w = a->in[1]->data, *b = a->in[2]->data;
	for (int64_t g = 0; g < c->G; g++) {
		float *col = a->col;
		for (int64_t ci = 0; ci < Cg; ci++)
			for (int64_t ky = 0; ky < c->k; ky++)
				for (int64_t kx = 0; kx < c->k; kx++)
					for (int64_t oy = 0; oy < a->Ho; oy++) {
						int64_t iy = oy * c->s - c->p + ky;
						const float *xr = x + ((g * Cg + ci) * c->H + iy) * c->W;
						for (int64_t ox = 0; ox < a->Wo; ox++) {
							int64_t ix = ox * c->s - c->p + kx;
							*col++ = iy >= 0 && iy < c->H && ix >= 0 && ix < c->W ? xr[ix] : 0.0f;
						}
					}
		float *y = a->y + g * Mg * N;
		for (int64_t m = 0; m < Mg; m++)
			for (int64_t j = 0; j < N; j++)
				y[m * N + j] = b[g * Mg + m];
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)Mg, (int)N, (int)K, 1.0f,
			    w + g * Mg * K, (int)K, a->col, (int)N, 1.0f, y, (int)N);
	}
}

static pn_tensor *pn_bench_tensor(int rank, const int64_t *dims, uint64_t *x)
{
	pn_tensor *t = pn_tensor_new(PN_FLOAT, rank, dims);
	for (int64_t i = 0; i < t->numel; i++) {
		*x = *x * 6364136223846793005u + 1442695040888963407u;
		((float *)t->data)[i] = (float)((double)(*x >> 40) / (double)(1u << 24)) - 0.5f;
	}
	return t;
}

/* Median seconds per call of fn over PN_SAMPLES samples of about `sample` s. */
static double pn_conv_time(void (*fn)(const pn_conv_args *), const pn_conv_args *a, double sample,
			   double *spread)
{
	int64_t reps = 1;
	for (;;) {
		double t0 = pn_now();
		for (int64_t r = 0; r < reps; r++)
			fn(a);
		double dt = pn_now() - t0;
		if (dt >= sample / 4 || reps >= ((int64_t)1 << 30)) {
			reps = dt > 0 ? (int64_t)ceil((double)reps * sample / dt) : reps;
			break;
		}
		reps *= 4;
	}
	double t[PN_SAMPLES];
	for (int i = 0; i < PN_SAMPLES; i++) {
		double t0 = pn_now();
		for (int64_t r = 0; r < reps; r++)
			fn(a);
		t[i] = (pn_now() - t0) / (double)reps;
	}
	qsort(t, PN_SAMPLES, sizeof(double), pn_cmp_double);
	if (spread)
		*spread = (t[PN_SAMPLES * 3 / 4] - t[PN_SAMPLES / 4]) / t[PN_SAMPLES / 2] * 100;
	return t[PN_SAMPLES / 2];
}

static double pn_conv_maxdiff(const float *a, const float *b, int64_t n)
{
	double d = 0;
	for (int64_t i = 0; i < n; i++)
		d = fmax(d, fabs((double)a[i] - (double)b[i]));
	return d;
}

/*
 * GFLOP/s of passnet's Conv as the executor runs it (its own choice of
 * path), then forced onto the direct path and onto im2col + GEMM (- where
 * the direct layout does not apply), and of the OpenBLAS yardstick.
 */
static void pn_bench_conv_one(const pn_bench_conv *c, int threads, double sample)
{
	pn_conv_args a = { .c = c, .path = -1 };
	pn_conv_node_init(&a.node, c);
	uint64_t x = 0x9e3779b97f4a7c15u;
	int64_t xd[4] = { 1, c->C, c->H, c->W }, wd[4] = { c->M, c->C / c->G, c->k, c->k };
	a.in[0] = pn_bench_tensor(4, xd, &x);
	a.in[1] = pn_bench_tensor(4, wd, &x);
	a.in[2] = pn_bench_tensor(1, &c->M, &x);
	a.Ho = (c->H + 2 * c->p - c->k) / c->s + 1;
	a.Wo = (c->W + 2 * c->p - c->k) / c->s + 1;
	int64_t ny = c->M * a.Ho * a.Wo;
	a.col = pn_sgemm_alloc((size_t)(c->C / c->G * c->k * c->k * a.Ho * a.Wo));
	a.y = pn_sgemm_alloc((size_t)ny);
	float *out = pn_sgemm_alloc((size_t)ny);
	run_blas_conv(&a);
	double flops = 2.0 * (double)ny * (double)(c->C / c->G * c->k * c->k);
	double sp, maxdiff = 0, g[3];
	for (int path = -1; path <= 1; path++) {
		a.path = path;
		a.out = out;
		run_pn_conv(&a);
		maxdiff = fmax(maxdiff, pn_conv_maxdiff(out, a.y, ny));
		a.out = NULL;
		double t = pn_conv_time(run_pn_conv, &a, sample, path == -1 ? &sp : NULL);
		g[path + 1] = flops / t * 1e-9;
	}
	double gb = flops / pn_conv_time(run_blas_conv, &a, sample, NULL) * 1e-9;
	printf("%-12s %4lld %3lldx%-3lld %4lld %lldx%lld/%lld %4lld %7d %8.1f %8.1f %8.1f %9.1f %7.2f %6.0f%% %9.1e\n",
	       c->name, (long long)c->C, (long long)c->H, (long long)c->W, (long long)c->M,
	       (long long)c->k, (long long)c->k, (long long)c->s, (long long)c->G, threads, g[0],
	       g[2], g[1], gb, g[0] / gb, sp, maxdiff);
	fflush(stdout);
	for (int i = 0; i < 3; i++)
		pn_tensor_free(a.in[i]);
	free(a.col);
	free(a.y);
	free(out);
}

int main(int argc, char **argv)
{
	double sample = 0.05;
	int64_t sizes[32] = { 64, 128, 256, 512, 1024 };
	int nsizes = 5;
	int threads[8] = { 1, 2 };
	int nthreads = 2, conv_only = 0;
	const char *only = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-c")) {
			conv_only = 1;
		} else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			only = argv[++i];
			conv_only = 1;
		} else if (!strcmp(argv[i], "-t") && i + 1 < argc) {
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
			fprintf(stderr, "usage: %s [-t SECONDS] [-s N,N,...] [-j THREADS,...] [-c] [-n NAME]\n",
			        argv[0]);
			return 2;
		}
	}

	/* pn_exec_node allocates its output and scratch per call, where a
	 * session reuses its pool: keep freed memory on the heap so that
	 * large buffers are not mapped and faulted in on every call. */
	mallopt(M_MMAP_THRESHOLD, 1 << 30);
	mallopt(M_TRIM_THRESHOLD, 1 << 30);

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
	for (int t = 0; t < nthreads && !conv_only; t++) {
		if (t == 0)
			printf("%-12s %5s %5s %5s %5s %7s %9s %9s %7s %7s %9s\n", "shape", "M", "N",
			       "K", "op", "threads", "pn GF/s", "BLAS GF/s", "ratio", "spread",
			       "max|diff|");
		omp_set_num_threads(threads[t]);
		openblas_set_num_threads(threads[t]);
		for (int i = 0; i < nsizes; i++) {
			char name[32];
			snprintf(name, sizeof(name), "square");
			pn_bench_shape s = { name, 0, 0, sizes[i], sizes[i], sizes[i] };
			pn_bench_one(&s, threads[t], sample);
		}
	}
	/* Conv: pn is the executor's choice; direct and im2col are the two
	 * paths forced (direct: - where its layout does not apply, then it
	 * runs im2col); BLAS is im2col + cblas_sgemm per group. */
	printf("\n%-12s %4s %7s %4s %6s %4s %7s %8s %8s %8s %9s %7s %7s %9s\n", "conv", "C",
	       "HxW", "M", "k/s", "G", "threads", "pn GF/s", "direct", "im2col", "BLAS GF/s",
	       "ratio", "spread", "max|diff|");
	for (int t = 0; t < nthreads; t++) {
		omp_set_num_threads(threads[t]);
		openblas_set_num_threads(threads[t]);
		for (size_t i = 0; i < sizeof(conv_shapes) / sizeof(conv_shapes[0]); i++)
			if (!only || strstr(conv_shapes[i].name, only))
				pn_bench_conv_one(&conv_shapes[i], threads[t], sample);
	}
	return 0;
}
