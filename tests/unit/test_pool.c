/*
 * test_pool.c - MaxPool and AveragePool against a naive loop in double on
 * random inputs (padded, strided, dilated, ceil_mode, count_include_pad,
 * 1-D, 2-D and 3-D, windows whose taps fall wholly in the padding), and
 * bitwise identical outputs for one and two threads.  Kernels are called
 * through pn_exec_node on hand-made nodes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "runtime/session.h"
#include "schemas/ops.h"

typedef struct pool_case {
	const char *what;
	int avg, nsp, ceil, include_pad;
	int64_t N, C;
	int64_t in[3], k[3], s[3], d[3], pb[3], pe[3];
} pool_case;

typedef struct node_buf {
	pn_node n;
	pn_attr attrs[7];
	int64_t ints[4][6];
	int32_t idx[2];
} node_buf;

static void make_node(const pool_case *c, node_buf *b)
{
	memset(b, 0, sizeof(*b));
	int64_t pads[6];
	for (int i = 0; i < c->nsp; i++) {
		pads[i] = c->pb[i];
		pads[c->nsp + i] = c->pe[i];
	}
	const int64_t *v[4] = {c->k, c->s, pads, c->d};
	static const char *names[4] = {"kernel_shape", "strides", "pads", "dilations"};
	int na = 0;
	for (int i = 0; i < 4; i++) {
		int n = i == 2 ? 2 * c->nsp : c->nsp;
		memcpy(b->ints[i], v[i], sizeof(int64_t) * (size_t)n);
		/* AveragePool takes dilations from opset 19 only; 1 is the default. */
		if (i == 3 && c->avg)
			continue;
		b->attrs[na++] = (pn_attr){.name = names[i], .type = PN_ATTR_INTS, .n = n, .ints = b->ints[i]};
	}
	b->attrs[na++] = (pn_attr){.name = "ceil_mode", .type = PN_ATTR_INT, .i = c->ceil};
	if (c->avg)
		b->attrs[na++] = (pn_attr){.name = "count_include_pad", .type = PN_ATTR_INT,
					   .i = c->include_pad};
	b->n = (pn_node){.name = c->what, .op_type = c->avg ? "AveragePool" : "MaxPool", .domain = "",
			 .op = c->avg ? PN_OP_AveragePool : PN_OP_MaxPool, .opset = c->avg ? 11 : 12,
			 .n_in = 1, .n_out = 1, .n_attr = na, .attrs = b->attrs, .in = b->idx,
			 .out = b->idx + 1};
}

static uint64_t rng_state = 777;

static pn_tensor *random_input(const pool_case *c)
{
	int64_t dims[5] = {c->N, c->C};
	for (int i = 0; i < c->nsp; i++)
		dims[2 + i] = c->in[i];
	pn_tensor *t = pn_tensor_new(PN_FLOAT, c->nsp + 2, dims);
	for (int64_t i = 0; i < t->numel; i++) {
		rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
		((float *)t->data)[i] = (float)((rng_state >> 40) & 0xffffff) / (float)0x1000000 - 0.5f;
	}
	return t;
}

static pn_tensor *run(const pool_case *c, pn_tensor *x)
{
	node_buf b;
	make_node(c, &b);
	pn_tensor *out[1] = {NULL};
	char err[PN_ERRLEN] = "";
	int rc = pn_exec_node(&b.n, &x, 1, out, 0, err);
	if (rc)
		fprintf(stderr, "%s: %s\n", c->what, err);
	assert_int_equal(rc, 0);
	return out[0];
}

/* Output size of one axis (PyTorch's ceil_mode rule: the last window
 * starts inside the input or its leading padding). */
static int64_t out_size(const pool_case *c, int a)
{
	int64_t ek = (c->k[a] - 1) * c->d[a] + 1, span = c->in[a] + c->pb[a] + c->pe[a] - ek;
	int64_t o = span / c->s[a] + 1;
	if (c->ceil && span % c->s[a]) {
		o++;
		if ((o - 1) * c->s[a] >= c->in[a] + c->pb[a])
			o--;
	}
	return o;
}

static void check(const pool_case *c)
{
	pn_tensor *x = random_input(c), *y = run(c, x);
	int64_t I[3] = {1, 1, 1}, O[3] = {1, 1, 1}, K[3] = {1, 1, 1}, S[3] = {1, 1, 1};
	int64_t D[3] = {1, 1, 1}, P[3] = {0, 0, 0}, E[3] = {0, 0, 0};
	int lead = 3 - c->nsp;
	for (int i = 0; i < c->nsp; i++) {
		I[lead + i] = c->in[i];
		O[lead + i] = out_size(c, i);
		K[lead + i] = c->k[i];
		S[lead + i] = c->s[i];
		D[lead + i] = c->d[i];
		P[lead + i] = c->pb[i];
		E[lead + i] = c->pe[i];
		assert_int_equal(y->dims[2 + i], O[lead + i]);
	}
	const float *xv = x->data, *yv = y->data;
	int64_t isp = I[0] * I[1] * I[2], osp = O[0] * O[1] * O[2];
	for (int64_t pl = 0; pl < c->N * c->C; pl++)
		for (int64_t q = 0; q < osp; q++) {
			int64_t o[3] = {q / (O[1] * O[2]), q / O[2] % O[1], q % O[2]};
			double best = -FLT_MAX, sum = 0;
			int64_t n = 0, npad = 1;
			for (int a = 0; a < 3; a++) {
				/* taps inside input + explicit padding */
				int64_t cnt = 0;
				for (int64_t kk = 0; kk < K[a]; kk++)
					cnt += o[a] * S[a] - P[a] + kk * D[a] < I[a] + E[a];
				npad *= cnt;
			}
			for (int64_t t = 0; t < K[0] * K[1] * K[2]; t++) {
				int64_t kk[3] = {t / (K[1] * K[2]), t / K[2] % K[1], t % K[2]}, i[3];
				int in = 1;
				for (int a = 0; a < 3; a++) {
					i[a] = o[a] * S[a] - P[a] + kk[a] * D[a];
					in &= i[a] >= 0 && i[a] < I[a];
				}
				if (!in)
					continue;
				double v = xv[pl * isp + (i[0] * I[1] + i[1]) * I[2] + i[2]];
				best = v > best ? v : best;
				sum += v;
				n++;
			}
			double want = c->avg ? (c->include_pad ? sum / npad : n ? sum / n : 0) : best;
			double got = yv[pl * osp + q];
			if (!c->avg && got != (float)want)
				fail_msg("%s: max at %lld: %g vs %g", c->what, (long long)q, got, want);
			if (c->avg && fabs(got - want) > 1e-6 * (1 + fabs(want)))
				fail_msg("%s: avg at %lld: %.9g vs %.9g", c->what, (long long)q, got, want);
		}
	pn_tensor_free(x);
	pn_tensor_free(y);
}

#define ONES {1, 1, 1}
#define ZEROS {0, 0, 0}

static const pool_case cases[] = {
	{"max 3x3 s2 p1", 0, 2, 0, 0, 2, 3, {11, 12}, {3, 3}, {2, 2}, ONES, {1, 1}, {1, 1}},
	{"max 3x3 s1 same ceil", 0, 2, 1, 0, 1, 5, {7, 7}, {3, 3}, ONES, ONES, {1, 1}, {1, 1}},
	{"max 2x2 s2", 0, 2, 0, 0, 1, 4, {14, 10}, {2, 2}, {2, 2}, ONES, ZEROS, ZEROS},
	{"max 2x2 s2 odd wide", 0, 2, 0, 0, 2, 3, {7, 71}, {2, 2}, {2, 2}, ONES, ZEROS, ZEROS},
	{"avg 2x2 s2 odd", 1, 2, 0, 0, 1, 3, {15, 11}, {2, 2}, {2, 2}, ONES, ZEROS, ZEROS},
	{"max 2x2 s2 ceil odd", 0, 2, 1, 0, 1, 2, {9, 9}, {2, 2}, {2, 2}, ONES, ZEROS, ZEROS},
	{"max 2x2 s2 3-D", 0, 3, 0, 0, 1, 2, {3, 8, 8}, {1, 2, 2}, {1, 2, 2}, ONES, ZEROS, ZEROS},
	{"max ceil odd", 0, 2, 1, 0, 1, 2, {9, 11}, {3, 2}, {2, 2}, ONES, ZEROS, ZEROS},
	{"max dilated", 0, 2, 0, 0, 1, 2, {12, 13}, {3, 3}, {1, 2}, {2, 3}, {2, 1}, {1, 3}},
	{"max pad > half", 0, 2, 0, 0, 1, 2, {5, 6}, {3, 3}, {2, 2}, ONES, {2, 2}, {2, 2}},
	{"max stride 3", 0, 2, 1, 0, 1, 3, {16, 17}, {2, 3}, {3, 3}, ONES, {1, 0}, {0, 1}},
	{"max 1-D", 0, 1, 0, 0, 2, 3, {41}, {4}, {3}, {1}, {1}, {2}},
	{"max 3-D", 0, 3, 0, 0, 1, 2, {5, 6, 7}, {2, 3, 3}, {2, 1, 2}, ONES, {1, 1, 1}, {0, 1, 1}},
	{"max wide", 0, 2, 0, 0, 1, 2, {5, 70}, {3, 3}, {1, 2}, ONES, {1, 1}, {1, 1}},
	{"avg 2x2 s2", 1, 2, 0, 0, 1, 4, {14, 14}, {2, 2}, {2, 2}, ONES, ZEROS, ZEROS},
	{"avg 3x3 p1 exclude", 1, 2, 0, 0, 2, 3, {9, 10}, {3, 3}, {2, 2}, ONES, {1, 1}, {1, 1}},
	{"avg 3x3 p1 include", 1, 2, 0, 1, 1, 3, {9, 10}, {3, 3}, {2, 2}, ONES, {1, 1}, {1, 1}},
	{"avg ceil include", 1, 2, 1, 1, 1, 2, {10, 7}, {3, 3}, {2, 2}, ONES, {1, 0}, {0, 1}},
	{"avg same s1", 1, 2, 0, 0, 1, 3, {7, 9}, {5, 5}, ONES, ONES, {2, 2}, {2, 2}},
	{"avg 1-D", 1, 1, 0, 1, 1, 2, {30}, {5}, {2}, {1}, {2}, {1}},
	{"avg 3-D", 1, 3, 1, 0, 1, 2, {4, 7, 6}, {2, 2, 3}, {2, 2, 1}, ONES, {0, 1, 1}, {1, 0, 1}},
	{"avg global-like", 1, 2, 0, 0, 1, 5, {7, 7}, {7, 7}, ONES, ONES, ZEROS, ZEROS},
};

static void test_pool_vs_naive(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		check(&cases[i]);
}

static void test_threads_bitwise(void **state)
{
	(void)state;
	static const pool_case big[] = {
		{"big max", 0, 2, 0, 0, 2, 24, {56, 57}, {3, 3}, {2, 2}, ONES, {1, 1}, {1, 1}},
		{"big avg", 1, 2, 1, 0, 1, 32, {28, 30}, {3, 3}, {2, 2}, ONES, {1, 1}, {1, 1}},
	};
	for (size_t i = 0; i < sizeof big / sizeof *big; i++) {
		pn_tensor *x = random_input(&big[i]);
		omp_set_num_threads(1);
		pn_tensor *y1 = run(&big[i], x);
		omp_set_num_threads(2);
		pn_tensor *y2 = run(&big[i], x);
		assert_int_equal(y1->numel, y2->numel);
		assert_memory_equal(y1->data, y2->data, sizeof(float) * (size_t)y1->numel);
		pn_tensor_free(x);
		pn_tensor_free(y1);
		pn_tensor_free(y2);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_vs_naive),
		cmocka_unit_test(test_threads_bitwise),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
