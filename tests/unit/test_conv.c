/*
 * test_conv.c - the Conv and ConvTranspose kernels against a naive direct
 * loop in double on random inputs (grouped, depthwise, strided, dilated,
 * padded, 1x1, 1-D and 3-D), each Conv through every path (the kernel's own
 * choice, which takes dot products along the reduction for outputs of a
 * few positions and one GEMM over the batch for outputs of one, im2col +
 * GEMM, and the direct path over the flat layout), and
 * bitwise identical outputs for one and two threads on convolutions large
 * enough to be split into im2col segments and run in parallel.  Kernels are
 * called through pn_exec_node on hand-made nodes, as constant folding calls
 * them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "runtime/session.h"
#include "runtime/infer.h"
#include "runtime/ops/conv.h"
#include "runtime/ops/window.h"
#include "schemas/ops.h"

typedef struct conv_case {
	const char *what;
	int transpose;
	int nsp;
	int64_t N, C, M, G;
	int64_t in[3], k[3], s[3], d[3], pb[3], pe[3];
	int bias;
} conv_case;

/* --- building nodes -------------------------------------------------------------------- */

typedef struct node_buf {
	pn_node n;
	pn_attr attrs[5];
	int64_t ints[5][6];
	int32_t in_idx[3], out_idx[1];
} node_buf;

static void set_ints(node_buf *b, int i, const char *name, const int64_t *v, int n)
{
	memcpy(b->ints[i], v, sizeof(int64_t) * (size_t)n);
	b->attrs[i] = (pn_attr){.name = name, .type = PN_ATTR_INTS, .n = n, .ints = b->ints[i]};
}

static void make_node(const conv_case *c, node_buf *b)
{
	memset(b, 0, sizeof(*b));
	int64_t pads[6];
	for (int i = 0; i < c->nsp; i++) {
		pads[i] = c->pb[i];
		pads[c->nsp + i] = c->pe[i];
	}
	set_ints(b, 0, "strides", c->s, c->nsp);
	set_ints(b, 1, "dilations", c->d, c->nsp);
	set_ints(b, 2, "pads", pads, 2 * c->nsp);
	set_ints(b, 3, "kernel_shape", c->k, c->nsp);
	b->attrs[4] = (pn_attr){.name = "group", .type = PN_ATTR_INT, .i = c->G};
	b->n.name = c->what;
	b->n.op_type = c->transpose ? "ConvTranspose" : "Conv";
	b->n.domain = "";
	b->n.op = c->transpose ? PN_OP_ConvTranspose : PN_OP_Conv;
	b->n.opset = 13;
	b->n.n_in = c->bias ? 3 : 2;
	b->n.n_out = 1;
	b->n.n_attr = 5;
	b->n.attrs = b->attrs;
	b->n.in = b->in_idx;
	b->n.out = b->out_idx;
}

static uint64_t rng_state = 12345;

static float frand(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (float)((rng_state >> 40) & 0xffffff) / (float)0x1000000 * 2.0f - 1.0f;
}

static pn_tensor *random_tensor(int rank, const int64_t *dims)
{
	pn_tensor *t = pn_tensor_new(PN_FLOAT, rank, dims);
	assert_non_null(t);
	for (int64_t i = 0; i < t->numel; i++)
		((float *)t->data)[i] = frand();
	return t;
}

/* X, W, B of a case (W is [M, C/G, k] for Conv, [C, M/G, k] for ConvTranspose). */
static void make_inputs(const conv_case *c, pn_tensor **in)
{
	int64_t xd[5] = {c->N, c->C}, wd[5];
	wd[0] = c->transpose ? c->C : c->M;
	wd[1] = c->transpose ? c->M / c->G : c->C / c->G;
	for (int i = 0; i < c->nsp; i++) {
		xd[2 + i] = c->in[i];
		wd[2 + i] = c->k[i];
	}
	in[0] = random_tensor(c->nsp + 2, xd);
	in[1] = random_tensor(c->nsp + 2, wd);
	in[2] = c->bias ? random_tensor(1, &c->M) : NULL;
}

static pn_tensor *run_node(const conv_case *c, pn_tensor **in)
{
	node_buf b;
	make_node(c, &b);
	pn_tensor *out[1] = {NULL};
	char err[PN_ERRLEN] = "";
	int rc = pn_exec_node(&b.n, in, b.n.n_in, out, 0, err);
	if (rc)
		fprintf(stderr, "%s: %s\n", c->what, err);
	assert_int_equal(rc, 0);
	return out[0];
}

/* --- the naive reference ---------------------------------------------------------------- */

/* Sizes widened to 3 spatial dims (leading 1s). */
static void widen(const conv_case *c, const int64_t *src, int64_t dflt, int64_t *dst)
{
	int lead = 3 - c->nsp;
	for (int i = 0; i < 3; i++)
		dst[i] = i < lead ? dflt : src[i - lead];
}

/* Output sizes, and the reference result in double with |terms| sums. */
static void reference(const conv_case *c, pn_tensor *const *in, int64_t *out3, double **ref,
		      double **mag)
{
	int64_t I[3], K[3], S[3], D[3], P[3], E[3];
	widen(c, c->in, 1, I);
	widen(c, c->k, 1, K);
	widen(c, c->s, 1, S);
	widen(c, c->d, 1, D);
	widen(c, c->pb, 0, P);
	widen(c, c->pe, 0, E);
	for (int i = 0; i < 3; i++) {
		int64_t ek = (K[i] - 1) * D[i] + 1;
		out3[i] = c->transpose ? S[i] * (I[i] - 1) + ek - P[i] - E[i]
				       : (I[i] + P[i] + E[i] - ek) / S[i] + 1;
	}
	int64_t osp = out3[0] * out3[1] * out3[2], isp = I[0] * I[1] * I[2];
	int64_t ksz = K[0] * K[1] * K[2], Cg = c->C / c->G, Mg = c->M / c->G;
	size_t n = (size_t)(c->N * c->M * osp);
	*ref = calloc(n, sizeof(double));
	*mag = calloc(n, sizeof(double));
	const float *x = in[0]->data, *w = in[1]->data, *b = in[2] ? in[2]->data : NULL;
	for (int64_t nn = 0; nn < c->N; nn++)
		for (int64_t ci = 0; ci < c->C; ci++)
			for (int64_t p = 0; p < isp; p++)
				for (int64_t q = 0; q < osp; q++)
					for (int64_t kk = 0; kk < ksz; kk++) {
						/* input position p and output position q meet
						 * through tap kk when o*s - pad + k*d = i, where
						 * (o, i) is (q, p) for Conv and (p, q) for the
						 * transpose. */
						int64_t kt[3] = {kk / (K[1] * K[2]), kk / K[2] % K[1], kk % K[2]};
						int64_t ip[3] = {p / (I[1] * I[2]), p / I[2] % I[1], p % I[2]};
						int64_t oq[3] = {q / (out3[1] * out3[2]), q / out3[2] % out3[1],
								 q % out3[2]};
						int hit = 1;
						for (int a = 0; a < 3 && hit; a++) {
							int64_t lo = c->transpose ? ip[a] : oq[a];
							int64_t hi = c->transpose ? oq[a] : ip[a];
							hit = lo * S[a] - P[a] + kt[a] * D[a] == hi;
						}
						if (!hit)
							continue;
						int64_t g = ci / Cg;
						for (int64_t mg = 0; mg < Mg; mg++) {
							int64_t m = g * Mg + mg;
							double wv = c->transpose
									    ? w[(ci * Mg + mg) * ksz + kk]
									    : w[(m * Cg + ci % Cg) * ksz + kk];
							double t = wv * x[(nn * c->C + ci) * isp + p];
							(*ref)[(nn * c->M + m) * osp + q] += t;
							(*mag)[(nn * c->M + m) * osp + q] += fabs(t);
						}
					}
	for (int64_t i = 0; b && i < (int64_t)n; i++) {
		(*ref)[i] += b[i / osp % c->M];
		(*mag)[i] += fabs(b[i / osp % c->M]);
	}
}

static void check_case(const conv_case *c)
{
	pn_tensor *in[3];
	make_inputs(c, in);
	pn_tensor *y = run_node(c, in);
	int64_t out3[3];
	double *ref, *mag;
	reference(c, in, out3, &ref, &mag);
	int lead = 3 - c->nsp;
	assert_int_equal(y->rank, c->nsp + 2);
	assert_int_equal(y->dims[0], c->N);
	assert_int_equal(y->dims[1], c->M);
	for (int i = 0; i < c->nsp; i++)
		assert_int_equal(y->dims[2 + i], out3[lead + i]);
	double worst = 0;
	for (int64_t i = 0; i < y->numel; i++) {
		double e = fabs(((float *)y->data)[i] - ref[i]) / (1e-6 + mag[i]);
		worst = e > worst ? e : worst;
	}
	if (worst > 1e-5)
		fprintf(stderr, "%s (path %d): relative error %g\n", c->what, pn_conv_force_path, worst);
	assert_true(worst <= 1e-5);
	free(ref);
	free(mag);
	pn_tensor_free(y);
	for (int i = 0; i < 3; i++)
		pn_tensor_free(in[i]);
}

/* --- tests ------------------------------------------------------------------------------ */

#define ONES {1, 1, 1}
#define ZEROS {0, 0, 0}

static void test_conv_vs_naive(void **state)
{
	(void)state;
	static const conv_case cases[] = {
		{"plain 3x3", 0, 2, 2, 3, 4, 1, {7, 6}, {3, 3}, ONES, ONES, ZEROS, ZEROS, 1},
		{"grouped padded", 0, 2, 1, 4, 6, 2, {6, 5}, {3, 3}, ONES, ONES, {1, 1}, {1, 1}, 1},
		{"depthwise strided", 0, 2, 2, 5, 5, 5, {9, 8}, {3, 3}, {2, 2}, ONES, {1, 1}, {1, 1}, 1},
		{"depthwise x2 dilated", 0, 2, 1, 3, 6, 3, {9, 9}, {3, 3}, ONES, {2, 2}, {2, 1}, {0, 2}, 0},
		{"strided dilated", 0, 2, 1, 3, 4, 1, {11, 10}, {3, 2}, {2, 3}, {2, 2}, {1, 0}, {2, 1}, 1},
		{"1x1", 0, 2, 2, 8, 5, 1, {4, 6}, {1, 1}, ONES, ONES, ZEROS, ZEROS, 1},
		{"1x1 grouped", 0, 2, 1, 8, 6, 2, {5, 3}, {1, 1}, ONES, ONES, ZEROS, ZEROS, 0},
		{"1x1 strided", 0, 2, 1, 4, 3, 1, {7, 7}, {1, 1}, {2, 2}, ONES, ZEROS, ZEROS, 1},
		{"1-D", 0, 1, 2, 3, 4, 1, {13}, {4}, {2}, {1}, {2}, {1}, 1},
		{"3-D", 0, 3, 1, 2, 3, 1, {5, 6, 4}, {3, 3, 2}, {1, 2, 1}, ONES, {1, 1, 0}, {1, 0, 1}, 1},
		{"3-D depthwise", 0, 3, 1, 2, 2, 2, {4, 5, 6}, {2, 3, 3}, ONES, {1, 1, 2}, ONES, ONES, 1},
		/* depthwise, stride 1, output as large as the input: in place */
		{"dw same 3x3", 0, 2, 2, 5, 5, 5, {9, 8}, {3, 3}, ONES, ONES, {1, 1}, {1, 1}, 1},
		{"dw same 5x5 wide", 0, 2, 1, 3, 3, 3, {6, 37}, {5, 5}, ONES, ONES, {2, 2}, {2, 2}, 1},
		{"dw same asym k4", 0, 2, 1, 2, 2, 2, {7, 7}, {4, 4}, ONES, ONES, {1, 2}, {2, 1}, 0},
		{"dw same dilated", 0, 2, 1, 2, 2, 2, {8, 11}, {3, 3}, ONES, {2, 3}, {2, 3}, {2, 3}, 1},
		{"dw same 1-D", 0, 1, 2, 3, 3, 3, {40}, {7}, {1}, {1}, {3}, {3}, 1},
		{"dw same 3-D", 0, 3, 1, 2, 2, 2, {3, 5, 6}, {3, 3, 3}, ONES, ONES, ONES, ONES, 1},
		{"dw same 1x1", 0, 2, 1, 4, 4, 4, {5, 5}, {1, 1}, ONES, ONES, ZEROS, ZEROS, 1},
		/* direct over the flat layout */
		{"dw multiplier", 0, 2, 1, 3, 6, 3, {7, 9}, {3, 3}, ONES, ONES, {1, 1}, {1, 1}, 1},
		{"dw 1-D dilated", 0, 1, 1, 4, 4, 4, {50}, {3}, {1}, {4}, {2}, {2}, 1},
		{"dw stride 2 5x5", 0, 2, 1, 3, 3, 3, {15, 20}, {5, 5}, {2, 2}, ONES, {2, 2}, {1, 2}, 1},
		{"grouped strided", 0, 2, 2, 8, 10, 2, {9, 10}, {3, 3}, {2, 1}, ONES, {1, 1}, {0, 1}, 1},
		{"stride 3 dilated 2", 0, 2, 1, 3, 5, 1, {17, 16}, {3, 3}, {3, 3}, {2, 2}, {2, 1}, {1, 2}, 1},
		{"stride 4 kernel 2", 0, 2, 1, 2, 3, 1, {13, 9}, {2, 2}, {4, 4}, ONES, {1, 0}, {0, 1}, 1},
		{"3-D grouped strided", 0, 3, 1, 4, 4, 2, {5, 6, 7}, {2, 3, 3}, {2, 1, 2}, ONES, {1, 1, 1}, {0, 1, 0}, 1},
		{"wide phases", 0, 2, 1, 2, 2, 1, {20, 20}, {9, 9}, {9, 9}, ONES, ZEROS, ZEROS, 1},
		{"tiny image", 0, 2, 1, 16, 3, 1, {1, 1}, {3, 3}, ONES, ONES, {1, 1}, {1, 1}, 1},
		/* outputs of at most 12 positions: dot products along the reduction */
		{"head 3x3 on 3x3", 0, 2, 2, 30, 5, 1, {3, 3}, {3, 3}, ONES, ONES, {1, 1}, {1, 1}, 1},
		{"1x1 on 1x1", 0, 2, 2, 70, 3, 1, {1, 1}, {1, 1}, ONES, ONES, ZEROS, ZEROS, 1},
		{"3x4 valid", 0, 2, 1, 20, 4, 1, {5, 6}, {3, 3}, ONES, ONES, ZEROS, ZEROS, 0},
		{"1-D small strided", 0, 1, 1, 40, 7, 1, {8}, {3}, {2}, {1}, {1}, {0}, 1},
		{"1x1 strided grouped", 0, 2, 1, 6, 4, 2, {7, 8}, {1, 1}, {2, 3}, ONES, ZEROS, ZEROS, 1},
		/* one output position per image, a batch of them: one GEMM */
		{"batch 3x3 on 1x1", 0, 2, 7, 9, 5, 1, {1, 1}, {3, 3}, ONES, ONES, {1, 1}, {1, 1}, 1},
		{"batch 1x1 on 1x1", 0, 2, 6, 10, 3, 1, {1, 1}, {1, 1}, ONES, ONES, ZEROS, ZEROS, 1},
		{"batch window = map", 0, 2, 4, 3, 6, 1, {3, 4}, {3, 4}, ONES, ONES, ZEROS, ZEROS, 0},
		{"batch 1-D strided", 0, 1, 5, 4, 2, 1, {6}, {3}, {4}, {2}, {1}, {0}, 1},
		{"transpose", 1, 2, 2, 4, 6, 2, {4, 5}, {3, 3}, {2, 2}, ONES, {1, 0}, {0, 1}, 1},
		{"transpose dilated", 1, 2, 1, 3, 2, 1, {3, 4}, {2, 3}, {3, 1}, {2, 2}, ZEROS, ZEROS, 0},
		{"transpose 1-D", 1, 1, 1, 2, 3, 1, {6}, {3}, {2}, {1}, {1}, {1}, 1},
		{"transpose 3-D", 1, 3, 1, 2, 2, 1, {3, 3, 2}, {2, 2, 2}, {2, 1, 2}, ONES, ZEROS, ZEROS, 1},
	};
	/* Conv: the kernel's choice, then im2col + GEMM, then direct. */
	for (int path = -1; path <= 1; path++) {
		pn_conv_force_path = path;
		for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
			if (path == -1 || !cases[i].transpose)
				check_case(&cases[i]);
	}
	pn_conv_force_path = -1;
}

/* Root mean square over the outputs of |y - ref| / sum |terms| for case c
 * on conv path `path`. */
static double rms_error(const conv_case *c, int path)
{
	rng_state = 777;
	pn_tensor *in[3];
	make_inputs(c, in);
	pn_conv_force_path = path;
	pn_tensor *y = run_node(c, in);
	pn_conv_force_path = -1;
	int64_t out3[3];
	double *ref, *mag, s = 0;
	reference(c, in, out3, &ref, &mag);
	for (int64_t i = 0; i < y->numel; i++) {
		double e = (((float *)y->data)[i] - ref[i]) / mag[i];
		s += e * e;
	}
	free(ref);
	free(mag);
	pn_tensor_free(y);
	for (int i = 0; i < 3; i++)
		pn_tensor_free(in[i]);
	return sqrt(s / (double)(c->N * c->M * out3[0] * out3[1] * out3[2]));
}

/* A reduction of 18,432 terms (3x3 over 2,048 channels, as in FCN's head):
 * the direct path sums it in blocks, as the GEMM does, not in one chain of
 * fused multiply-adds, whose drift from the exact sum was 5.1 times the
 * GEMM's here; both paths now stay near each other. */
static void test_long_reduction(void **state)
{
	(void)state;
	const conv_case c = {"3x3 over 2048 channels", 0, 2, 1, 2048, 6, 1, {6, 6}, {3, 3},
			     ONES, ONES, {1, 1}, {1, 1}, 0};
	double gemm = rms_error(&c, 0), direct = rms_error(&c, 1);
	if (direct > 2 * gemm)
		fail_msg("direct path error %g against the GEMM's %g", direct, gemm);
}

/* Runs a case with 1 and then 2 threads; outputs must match bit for bit. */
static void check_threads(const conv_case *c)
{
	pn_tensor *in[3];
	make_inputs(c, in);
	omp_set_num_threads(1);
	pn_tensor *y1 = run_node(c, in);
	omp_set_num_threads(2);
	pn_tensor *y2 = run_node(c, in);
	assert_int_equal(y1->numel, y2->numel);
	assert_memory_equal(y1->data, y2->data, sizeof(float) * (size_t)y1->numel);
	pn_tensor_free(y1);
	pn_tensor_free(y2);
	for (int i = 0; i < 3; i++)
		pn_tensor_free(in[i]);
}

static void test_threads_bitwise(void **state)
{
	(void)state;
	/* 144 im2col rows x 9216 columns: two segments, parallel im2col and GEMM */
	static const conv_case big = {"big 3x3", 0, 2, 2, 16, 24, 1, {96, 96}, {3, 3}, ONES, ONES,
				      {1, 1}, {1, 1}, 1};
	static const conv_case dw = {"big depthwise", 0, 2, 1, 32, 32, 32, {64, 64}, {3, 3}, ONES,
				     ONES, {1, 1}, {1, 1}, 1};
	static const conv_case tr = {"big transpose", 1, 2, 1, 32, 16, 1, {48, 48}, {4, 4}, {2, 2},
				     ONES, {1, 1}, {1, 1}, 1};
	static const conv_case dws2 = {"big depthwise s2", 0, 2, 2, 24, 24, 24, {57, 56}, {3, 3}, {2, 2},
				       ONES, {1, 1}, {1, 1}, 1};
	static const conv_case dwmul = {"big depthwise x2", 0, 2, 1, 16, 32, 16, {40, 40}, {5, 5}, ONES,
					ONES, {2, 2}, {2, 2}, 1};
	static const conv_case grp = {"big grouped", 0, 2, 1, 32, 48, 4, {30, 30}, {3, 3}, ONES, ONES,
				      {1, 1}, {1, 1}, 1};
	static const conv_case one = {"big one group", 0, 2, 2, 12, 40, 1, {33, 35}, {3, 3}, ONES, ONES,
				      {1, 1}, {1, 1}, 1};
	static const conv_case head = {"big head", 0, 2, 1, 256, 33, 1, {3, 3}, {3, 3}, ONES, ONES,
				       {1, 1}, {1, 1}, 1};
	for (int path = -1; path <= 1; path++) {
		pn_conv_force_path = path;
		check_threads(&big);
		check_threads(&dw);
		check_threads(&dws2);
		check_threads(&dwmul);
		check_threads(&grp);
		check_threads(&one);
		check_threads(&head);
	}
	pn_conv_force_path = -1;
	check_threads(&tr);
}

/* --- inference with partly known shapes --------------------------------------------- */

int pn_infer_Conv(pn_ictx *c);
int pn_infer_Resize(pn_ictx *c);

static pn_tinfo tinfo(int dtype, int rank, const int64_t *dims, const pn_tensor *value)
{
	pn_tinfo t;
	memset(&t, 0, sizeof(t));
	t.type.dtype = dtype;
	t.type.rank = rank;
	for (int i = 0; i < rank; i++)
		t.type.dims[i] = dims[i];
	t.value = value;
	return t;
}

static void test_infer_unknown_dims(void **state)
{
	(void)state;
	char err[PN_ERRLEN] = "";
	/* Conv: unknown batch and height stay unknown, the rest is computed. */
	conv_case cc = {"infer", 0, 2, 1, 3, 8, 1, {0, 0}, {3, 3}, {2, 2}, ONES, {1, 1}, {1, 1}, 0};
	node_buf b;
	make_node(&cc, &b);
	pn_tinfo x = tinfo(PN_FLOAT, 4, (int64_t[]){-1, 3, -1, 224}, NULL);
	pn_tinfo w = tinfo(PN_FLOAT, 4, (int64_t[]){8, 3, 3, 3}, NULL);
	const pn_tinfo *in[2] = {&x, &w};
	pn_tinfo out[1];
	pn_ictx c = {.node = &b.n, .opset = 13, .n_in = 2, .n_out = 1, .in = in, .out = out, .err = err};
	assert_int_equal(pn_infer_Conv(&c), 0);
	assert_int_equal(out[0].type.rank, 4);
	assert_true(out[0].type.dims[0] == -1 && out[0].type.dims[1] == 8);
	assert_true(out[0].type.dims[2] == -1 && out[0].type.dims[3] == 112);

	/* Resize with known sizes fixes the output even when X's dims are not. */
	pn_node rn = {.name = "r", .op_type = "Resize", .domain = "", .op = PN_OP_Resize, .opset = 13,
		      .n_in = 4, .n_out = 1};
	pn_tensor *sizes = pn_tensor_new(PN_INT64, 1, (int64_t[]){4});
	int64_t sv[4] = {1, 3, 64, 48};
	memcpy(sizes->data, sv, sizeof(sv));
	pn_tinfo rx = tinfo(PN_FLOAT, 4, (int64_t[]){-1, 3, -1, -1}, NULL);
	pn_tinfo rs = tinfo(PN_INT64, 1, (int64_t[]){4}, sizes);
	const pn_tinfo *rin[4] = {&rx, NULL, NULL, &rs};
	c = (pn_ictx){.node = &rn, .opset = 13, .n_in = 4, .n_out = 1, .in = rin, .out = out, .err = err};
	assert_int_equal(pn_infer_Resize(&c), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(out[0].type.dims[i], sv[i]);
	/* ... and unknown scales leave the spatial dims unknown. */
	pn_tinfo sc = tinfo(PN_FLOAT, 1, (int64_t[]){4}, NULL);
	const pn_tinfo *rin2[3] = {&rx, NULL, &sc};
	c.in = rin2;
	c.n_in = 3;
	assert_int_equal(pn_infer_Resize(&c), 0);
	assert_int_equal(out[0].type.rank, 4);
	assert_int_equal(out[0].type.dims[2], -1);
	pn_tensor_free(sizes);
}

/* The flat layout declines a window whose attributes no real model has (a
 * stride or dilation near 2^63, from a hostile model that shape inference
 * let through because its output size is 1): planning it overflowed int64
 * (UBSan, tests/cli/hostile_semantic.sh).  A real window still plans. */
static void test_flat_plan_hostile(void **state)
{
	(void)state;
	static pn_flat f;
	static int64_t off[4096];
	pn_window w = {.n = 3, .in = {1, 8, 8}, .out = {1, 4, 4}, .k = {1, 3, 3}, .s = {1, 2, 2},
		       .d = {1, 1, 1}, .pb = {0, 1, 1}, .pe = {0, 1, 1}};
	assert_int_equal(pn_flat_plan(&f, &w, off), 0);
	pn_window big_stride = w;
	big_stride.out[2] = 2;
	big_stride.s[2] = INT64_MAX;
	assert_int_equal(pn_flat_plan(&f, &big_stride, off), -1);
	pn_window big_dilation = w;
	big_dilation.d[1] = INT64_MAX / 2;
	assert_int_equal(pn_flat_plan(&f, &big_dilation, off), -1);
	pn_window big_pad = w;
	big_pad.pb[2] = INT64_MAX - 1;
	assert_int_equal(pn_flat_plan(&f, &big_pad, off), -1);
	/* each extent fits, their product does not */
	pn_window big_volume = w;
	for (int a = 0; a < 3; a++) {
		big_volume.out[a] = (int64_t)1 << 20;
		big_volume.in[a] = (int64_t)1 << 20;
		big_volume.s[a] = 1;
	}
	assert_int_equal(pn_flat_plan(&f, &big_volume, off), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conv_vs_naive),
		cmocka_unit_test(test_infer_unknown_dims),
		cmocka_unit_test(test_threads_bitwise),
		cmocka_unit_test(test_flat_plan_hostile),
		cmocka_unit_test(test_long_reduction),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
