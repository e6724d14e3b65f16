/*
 * test_resize.c - Resize in nearest mode (the gather fast path: one load and
 * a lane permutation per vector of outputs, repeated rows copied) against a
 * naive loop, for upsampling, downsampling and sizes where a vector's
 * sources are too far apart for a permutation; and 1 vs 2 threads bitwise.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "runtime/session.h"
#include "schemas/ops.h"

/* Resize-13, nearest, asymmetric coordinates, floor: input index
 * floor(o * in / out) on every axis. */
static pn_tensor *resize(pn_tensor *x, const int64_t *out)
{
	pn_attr attrs[3] = {
		{.name = "mode", .type = PN_ATTR_STRING, .s = "nearest", .s_len = 7},
		{.name = "coordinate_transformation_mode", .type = PN_ATTR_STRING, .s = "asymmetric",
		 .s_len = 10},
		{.name = "nearest_mode", .type = PN_ATTR_STRING, .s = "floor", .s_len = 5},
	};
	int32_t idx[5] = {0, 1, 2, 3, 4};
	pn_node n = {.name = "r", .op_type = "Resize", .domain = "", .op = PN_OP_Resize, .opset = 13,
		     .n_in = 4, .n_out = 1, .n_attr = 3, .attrs = attrs, .in = idx, .out = idx + 4};
	int64_t four = 4;
	pn_tensor *sizes = pn_tensor_new(PN_INT64, 1, &four);
	memcpy(sizes->data, out, sizeof(int64_t) * 4);
	pn_tensor *in[4] = {x, NULL, NULL, sizes}, *y[1] = {NULL};
	char err[PN_ERRLEN] = "";
	int rc = pn_exec_node(&n, in, 4, y, 0, err);
	if (rc)
		fprintf(stderr, "resize: %s\n", err);
	assert_int_equal(rc, 0);
	pn_tensor_free(sizes);
	return y[0];
}

static pn_tensor *input(const int64_t *dims)
{
	pn_tensor *x = pn_tensor_new(PN_FLOAT, 4, dims);
	for (int64_t i = 0; i < x->numel; i++)
		((float *)x->data)[i] = (float)i * 0.25f - 3.0f;
	return x;
}

static void check(const int64_t *in, const int64_t *out)
{
	pn_tensor *x = input(in), *y = resize(x, out);
	for (int a = 0; a < 4; a++)
		assert_int_equal(y->dims[a], out[a]);
	const float *xv = x->data, *yv = y->data;
	for (int64_t i = 0; i < y->numel; i++) {
		int64_t rem = i, off = 0, stride = 1;
		for (int a = 3; a >= 0; a--) {
			int64_t o = rem % out[a];
			rem /= out[a];
			off += (int64_t)floor((double)o * (double)in[a] / (double)out[a]) * stride;
			stride *= in[a];
		}
		if (yv[i] != xv[off])
			fail_msg("%lld: %g vs %g", (long long)i, yv[i], xv[off]);
	}
	pn_tensor_free(x);
	pn_tensor_free(y);
}

static void test_nearest(void **state)
{
	(void)state;
	static const int64_t shapes[][2][4] = {
		{{1, 3, 10, 10}, {1, 3, 20, 20}},    /* 2x, FPN */
		{{2, 2, 5, 7}, {2, 2, 15, 21}},      /* 3x */
		{{1, 2, 8, 13}, {1, 2, 12, 19}},     /* 1.5x */
		{{1, 2, 16, 40}, {1, 2, 8, 20}},     /* 0.5x */
		{{1, 1, 4, 100}, {1, 1, 4, 17}},     /* sources too far apart */
		{{1, 4, 1, 1}, {1, 4, 3, 33}},       /* broadcast a pixel */
		{{1, 2, 3, 3}, {2, 4, 3, 3}},        /* outer axes only */
	};
	for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
		check(shapes[i][0], shapes[i][1]);
}

static void test_threads_bitwise(void **state)
{
	(void)state;
	const int64_t in[4] = {1, 64, 40, 40}, out[4] = {1, 64, 80, 80};
	pn_tensor *x = input(in);
	omp_set_num_threads(1);
	pn_tensor *y1 = resize(x, out);
	omp_set_num_threads(2);
	pn_tensor *y2 = resize(x, out);
	assert_memory_equal(y1->data, y2->data, sizeof(float) * (size_t)y1->numel);
	pn_tensor_free(x);
	pn_tensor_free(y1);
	pn_tensor_free(y2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nearest),
		cmocka_unit_test(test_threads_bitwise),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
