/*
 * test_layout.c - the layout, index and generator kernels: bitwise identical
 * results on 1 and 2 threads for the parallel kernels on inputs large enough
 * to go parallel, a few results against naive loops, and shape inference
 * from known values (the Shape -> Gather -> Concat -> Reshape chains).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "runtime/session.h"
#include "runtime/infer.h"
#include "runtime/kernel.h"
#include "schemas/ir.h"

/* --- building nodes and tensors ------------------------------------------------------- */

static pn_node make_node(int op, int opset, int n_in, int n_out, pn_attr *attrs, int n_attr)
{
	pn_node n = {.name = "n", .op_type = pn_ops[op].name, .domain = "", .op = op,
		     .opset = opset, .n_in = n_in, .n_out = n_out, .n_attr = n_attr,
		     .attrs = attrs};
	return n;
}

static pn_attr attr_int(const char *name, int64_t v)
{
	return (pn_attr){.name = name, .type = PN_ATTR_INT, .i = v};
}

static pn_attr attr_ints(const char *name, int64_t *v, int n)
{
	return (pn_attr){.name = name, .type = PN_ATTR_INTS, .ints = v, .n = n};
}

static pn_attr attr_str(const char *name, const char *s)
{
	return (pn_attr){.name = name, .type = PN_ATTR_STRING, .s = s, .s_len = (int64_t)strlen(s)};
}

/* A float tensor with deterministic, distinct values. */
static pn_tensor *ramp(int rank, const int64_t *dims)
{
	pn_tensor *t = pn_tensor_new(PN_FLOAT, rank, dims);
	assert_non_null(t);
	for (int64_t i = 0; i < t->numel; i++)
		((float *)t->data)[i] = (float)((i * 7919) % 10007) - 5000.0f;
	return t;
}

static pn_tensor *ints(int n, const int64_t *v)
{
	int64_t d = n;
	pn_tensor *t = pn_tensor_new(PN_INT64, 1, &d);
	assert_non_null(t);
	memcpy(t->data, v, sizeof(int64_t) * (size_t)n);
	return t;
}

/* Runs the node on `threads` threads; returns output 0 (caller frees). */
static pn_tensor *run(const pn_node *n, pn_tensor **in, int threads)
{
	pn_tensor *out[4] = {0};
	char err[PN_ERRLEN] = "";
	omp_set_num_threads(threads);
	int rc = pn_exec_node(n, in, n->n_in, out, 7, err);
	if (rc)
		fail_msg("%s: %s", n->op_type, err);
	for (int i = 1; i < n->n_out; i++)
		pn_tensor_free(out[i]);
	return out[0];
}

/* The node gives bitwise identical output on 1 and 2 threads. */
static pn_tensor *run_both(const pn_node *n, pn_tensor **in)
{
	pn_tensor *a = run(n, in, 1), *b = run(n, in, 2);
	assert_int_equal(a->rank, b->rank);
	assert_int_equal(a->numel, b->numel);
	assert_memory_equal(a->data, b->data, pn_tensor_nbytes(a));
	pn_tensor_free(b);
	return a;
}

/* --- kernels: thread-count independence and naive references ------------------------------ */

static void test_transpose(void **state)
{
	(void)state;
	int64_t dims[3] = {3, 301, 257}, perm[3] = {0, 2, 1};
	pn_attr at[1] = {attr_ints("perm", perm, 3)};
	pn_node n = make_node(PN_OP_Transpose, 13, 1, 1, at, 1);
	pn_tensor *x = ramp(3, dims), *in[1] = {x};
	pn_tensor *y = run_both(&n, in);
	assert_int_equal(y->dims[1], 257);
	const float *xs = x->data, *ys = y->data;
	for (int64_t a = 0; a < 3; a++)
		for (int64_t i = 0; i < 301; i++)
			for (int64_t j = 0; j < 257; j++)
				assert_true(ys[(a * 257 + j) * 301 + i] == xs[(a * 301 + i) * 257 + j]);
	pn_tensor_free(x);
	pn_tensor_free(y);
}

static void test_tile_slice_concat(void **state)
{
	(void)state;
	int64_t dims[3] = {4, 130, 70}, rep[3] = {2, 3, 1};
	pn_tensor *x = ramp(3, dims), *r = ints(3, rep);
	pn_node tile = make_node(PN_OP_Tile, 13, 2, 1, NULL, 0);
	pn_tensor *in[5] = {x, r};
	pn_tensor *y = run_both(&tile, in);
	assert_int_equal(y->dims[0], 8);
	assert_int_equal(y->dims[1], 390);
	assert_true(((float *)y->data)[(5 * 390 + 200) * 70 + 9] ==
		    ((float *)x->data)[(1 * 130 + 70) * 70 + 9]);
	pn_tensor_free(y);

	int64_t st[2] = {-1, 3}, en[2] = {-1000, 69}, ax[2] = {1, 2}, sp[2] = {-2, 4};
	pn_tensor *s = ints(2, st), *e = ints(2, en), *a = ints(2, ax), *p = ints(2, sp);
	pn_node slice = make_node(PN_OP_Slice, 13, 5, 1, NULL, 0);
	pn_tensor *sin[5] = {x, s, e, a, p};
	y = run_both(&slice, sin);
	assert_int_equal(y->dims[1], 65);
	assert_int_equal(y->dims[2], 17);
	/* y[i, j, k] = x[i, 129 - 2j, 3 + 4k] */
	assert_true(((float *)y->data)[(2 * 65 + 10) * 17 + 5] ==
		    ((float *)x->data)[(2 * 130 + 109) * 70 + 23]);
	pn_tensor_free(y);

	pn_attr cat[1] = {attr_int("axis", -1)};
	pn_node concat = make_node(PN_OP_Concat, 13, 3, 1, cat, 1);
	pn_tensor *cin[3] = {x, x, x};
	y = run_both(&concat, cin);
	assert_int_equal(y->dims[2], 210);
	pn_tensor_free(y);
	pn_tensor_free(x);
	pn_tensor_free(r);
	pn_tensor_free(s);
	pn_tensor_free(e);
	pn_tensor_free(a);
	pn_tensor_free(p);
}

static void test_pad_modes(void **state)
{
	(void)state;
	int64_t dims[3] = {5, 90, 80}, pads[6] = {1, 7, 3, 2, 9, 100};
	pn_tensor *x = ramp(3, dims), *p = ints(6, pads);
	const char *modes[3] = {"reflect", "edge", "wrap"};
	for (int m = 0; m < 3; m++) {
		pn_attr at[1] = {attr_str("mode", modes[m])};
		pn_node n = make_node(PN_OP_Pad, 18, 2, 1, at, 1);
		pn_tensor *in[2] = {x, p};
		pn_tensor *y = run_both(&n, in);
		assert_int_equal(y->dims[2], 183);
		pn_tensor_free(y);
	}
	pn_tensor_free(x);
	pn_tensor_free(p);
}

static void test_gather_scatter(void **state)
{
	(void)state;
	int64_t dims[2] = {300, 500}, idims[2] = {200, 500};
	pn_tensor *x = ramp(2, dims), *ix = pn_tensor_new(PN_INT64, 2, idims);
	for (int64_t i = 0; i < ix->numel; i++)
		((int64_t *)ix->data)[i] = (i * 31) % 600 - 300;
	pn_attr ax[1] = {attr_int("axis", 0)};
	pn_node g = make_node(PN_OP_Gather, 13, 2, 1, ax, 1);
	pn_tensor *in[3] = {x, ix, NULL};
	pn_tensor *y = run_both(&g, in);
	assert_int_equal(y->rank, 3);
	pn_tensor_free(y);

	pn_node ge = make_node(PN_OP_GatherElements, 13, 2, 1, ax, 1);
	y = run_both(&ge, in);
	/* y[i][j] = x[ix[i][j] mod 300][j] */
	int64_t i = 123, j = 77, v = ((int64_t *)ix->data)[i * 500 + j];
	assert_true(((float *)y->data)[i * 500 + j] == ((float *)x->data)[((v + 300) % 300) * 500 + j]);

	pn_attr sa[2] = {attr_int("axis", 0), attr_str("reduction", "add")};
	pn_node se = make_node(PN_OP_ScatterElements, 16, 3, 1, sa, 2);
	in[2] = y;
	pn_tensor *z = run_both(&se, in);
	pn_tensor_free(z);
	pn_tensor_free(y);
	pn_tensor_free(x);
	pn_tensor_free(ix);
}

static void test_col2im(void **state)
{
	(void)state;
	/* 2 channels of 3x3 blocks over a 40x40 image, stride 1, pad 1 */
	int64_t dims[3] = {2, 2 * 9, 40 * 40}, img[2] = {40, 40}, blk[2] = {3, 3}, pads[4] = {1, 1, 1, 1};
	pn_tensor *x = pn_tensor_new(PN_FLOAT, 3, dims), *ti = ints(2, img), *tb = ints(2, blk);
	for (int64_t i = 0; i < x->numel; i++)
		((float *)x->data)[i] = 1.0f;
	pn_attr at[1] = {attr_ints("pads", pads, 4)};
	pn_node n = make_node(PN_OP_Col2Im, 18, 3, 1, at, 1);
	pn_tensor *in[3] = {x, ti, tb};
	pn_tensor *y = run_both(&n, in);
	/* all-ones columns: each pixel counts the patches covering it */
	const float *ys = y->data;
	assert_true(ys[0] == 4.0f);
	assert_true(ys[1] == 6.0f);
	assert_true(ys[41] == 9.0f);
	pn_tensor_free(y);
	pn_tensor_free(x);
	pn_tensor_free(ti);
	pn_tensor_free(tb);
}

static void test_random_repeatable(void **state)
{
	(void)state;
	int64_t shape[2] = {100, 50};
	pn_attr at[1] = {attr_ints("shape", shape, 2)};
	pn_node n = make_node(PN_OP_RandomNormal, 13, 0, 1, at, 1);
	pn_tensor *a = run_both(&n, NULL);
	pn_tensor *b = run(&n, NULL, 2);
	assert_memory_equal(a->data, b->data, pn_tensor_nbytes(a));
	double sum = 0;
	for (int64_t i = 0; i < a->numel; i++)
		sum += ((float *)a->data)[i];
	assert_true(sum / (double)a->numel > -0.1 && sum / (double)a->numel < 0.1);
	pn_tensor_free(a);
	pn_tensor_free(b);
}

/* --- inference from known values ------------------------------------------------------ */

typedef struct ictx_fix {
	pn_tinfo in[5], out[4];
	const pn_tinfo *pin[5];
	char err[PN_ERRLEN];
	pn_ictx c;
} ictx_fix;

static void fix_init(ictx_fix *f, const pn_node *n)
{
	memset(f, 0, sizeof(*f));
	for (int i = 0; i < n->n_in; i++)
		f->pin[i] = &f->in[i];
	f->c = (pn_ictx){.node = n, .opset = n->opset, .n_in = n->n_in, .n_out = n->n_out,
			 .in = f->pin, .out = f->out, .err = f->err};
}

static void fix_type(ictx_fix *f, int i, int dtype, int rank, const int64_t *dims)
{
	f->in[i].type.kind = PN_KIND_TENSOR;
	f->in[i].type.dtype = dtype;
	f->in[i].type.rank = rank;
	for (int d = 0; d < rank; d++)
		f->in[i].type.dims[d] = dims ? dims[d] : -1;
}

static void fix_value(ictx_fix *f, int i, const pn_tensor *v)
{
	fix_type(f, i, v->dtype, v->rank, v->dims);
	f->in[i].value = v;
}

static void assert_dims(const pn_type *t, int rank, const int64_t *dims)
{
	assert_int_equal(t->rank, rank);
	for (int d = 0; d < rank; d++)
		assert_int_equal(t->dims[d], dims[d]);
}

static void test_infer_reshape(void **state)
{
	(void)state;
	pn_node n = make_node(PN_OP_Reshape, 14, 2, 1, NULL, 0);
	ictx_fix f;
	int64_t xd[3] = {2, 3, 4}, sv[2] = {0, -1}, want[2] = {2, 12};
	pn_tensor *s = ints(2, sv);
	fix_init(&f, &n);
	fix_type(&f, 0, PN_FLOAT, 3, xd);
	fix_value(&f, 1, s);
	assert_int_equal(pn_op_infer(PN_OP_Reshape)(&f.c), 0);
	assert_dims(&f.out[0].type, 2, want);
	/* shape contents unknown but its length known: the rank is */
	f.in[1].value = NULL;
	assert_int_equal(pn_op_infer(PN_OP_Reshape)(&f.c), 0);
	assert_int_equal(f.out[0].type.rank, 2);
	assert_int_equal(f.out[0].type.dims[0], -1);
	/* a bad element count is an invalid node */
	int64_t bad[2] = {5, -1};
	pn_tensor *sb = ints(2, bad);
	f.in[1].value = sb;
	assert_int_equal(pn_op_infer(PN_OP_Reshape)(&f.c), -1);
	pn_tensor_free(s);
	pn_tensor_free(sb);
}

static void test_infer_slice_concat(void **state)
{
	(void)state;
	pn_node n = make_node(PN_OP_Slice, 13, 4, 1, NULL, 0);
	ictx_fix f;
	int64_t xd[2] = {4, 10}, st[1] = {-3}, en[1] = {INT64_MAX}, ax[1] = {1}, want[2] = {4, 3};
	pn_tensor *ts = ints(1, st), *te = ints(1, en), *ta = ints(1, ax);
	fix_init(&f, &n);
	fix_type(&f, 0, PN_INT64, 2, xd);
	fix_value(&f, 1, ts);
	fix_value(&f, 2, te);
	fix_value(&f, 3, ta);
	assert_int_equal(pn_op_infer(PN_OP_Slice)(&f.c), 0);
	assert_dims(&f.out[0].type, 2, want);
	/* unknown ends: only the sliced axis is lost */
	f.in[2].value = NULL;
	int64_t want2[2] = {4, -1};
	assert_int_equal(pn_op_infer(PN_OP_Slice)(&f.c), 0);
	assert_dims(&f.out[0].type, 2, want2);

	pn_node cn = make_node(PN_OP_Concat, 13, 3, 1, (pn_attr[]){attr_int("axis", 0)}, 1);
	int64_t a[1] = {2}, b[1] = {-1}, want3[1] = {-1}, want4[1] = {7};
	fix_init(&f, &cn);
	fix_type(&f, 0, PN_INT64, 1, a);
	fix_type(&f, 1, PN_INT64, 1, b);
	fix_type(&f, 2, PN_INT64, 1, a);
	assert_int_equal(pn_op_infer(PN_OP_Concat)(&f.c), 0);
	assert_dims(&f.out[0].type, 1, want3);
	f.in[1].type.dims[0] = 3;
	assert_int_equal(pn_op_infer(PN_OP_Concat)(&f.c), 0);
	assert_dims(&f.out[0].type, 1, want4);
	pn_tensor_free(ts);
	pn_tensor_free(te);
	pn_tensor_free(ta);
}

static void test_infer_misc(void **state)
{
	(void)state;
	ictx_fix f;
	/* Squeeze without axes needs every dim known */
	pn_node sq = make_node(PN_OP_Squeeze, 13, 1, 1, NULL, 0);
	int64_t d1[3] = {1, -1, 1}, d2[3] = {1, 5, 1}, w2[1] = {5};
	fix_init(&f, &sq);
	fix_type(&f, 0, PN_FLOAT, 3, d1);
	assert_int_equal(pn_op_infer(PN_OP_Squeeze)(&f.c), 0);
	assert_int_equal(f.out[0].type.rank, -1);
	fix_type(&f, 0, PN_FLOAT, 3, d2);
	assert_int_equal(pn_op_infer(PN_OP_Squeeze)(&f.c), 0);
	assert_dims(&f.out[0].type, 1, w2);

	/* Gather of a known shape by known indices */
	pn_node g = make_node(PN_OP_Gather, 13, 2, 1, NULL, 0);
	int64_t sd[1] = {4}, iv[2] = {0, 1}, wg[1] = {2};
	pn_tensor *ti = ints(2, iv);
	fix_init(&f, &g);
	fix_type(&f, 0, PN_INT64, 1, sd);
	fix_value(&f, 1, ti);
	assert_int_equal(pn_op_infer(PN_OP_Gather)(&f.c), 0);
	assert_dims(&f.out[0].type, 1, wg);

	/* Range with known scalars */
	pn_node r = make_node(PN_OP_Range, 11, 3, 1, NULL, 0);
	pn_tensor *s0 = pn_tensor_new(PN_INT64, 0, NULL), *s1 = pn_tensor_new(PN_INT64, 0, NULL),
		  *s2 = pn_tensor_new(PN_INT64, 0, NULL);
	((int64_t *)s0->data)[0] = 10;
	((int64_t *)s1->data)[0] = -3;
	((int64_t *)s2->data)[0] = -4;
	int64_t wr[1] = {4};
	fix_init(&f, &r);
	fix_value(&f, 0, s0);
	fix_value(&f, 1, s1);
	fix_value(&f, 2, s2);
	assert_int_equal(pn_op_infer(PN_OP_Range)(&f.c), 0);
	assert_dims(&f.out[0].type, 1, wr);

	/* Split at opset 18: uneven chunks */
	pn_node sp = make_node(PN_OP_Split, 18, 1, 3, (pn_attr[]){attr_int("num_outputs", 3)}, 1);
	int64_t xd[1] = {7};
	fix_init(&f, &sp);
	fix_type(&f, 0, PN_FLOAT, 1, xd);
	assert_int_equal(pn_op_infer(PN_OP_Split)(&f.c), 0);
	assert_int_equal(f.out[0].type.dims[0], 3);
	assert_int_equal(f.out[2].type.dims[0], 1);
	pn_tensor_free(ti);
	pn_tensor_free(s0);
	pn_tensor_free(s1);
	pn_tensor_free(s2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_transpose),
		cmocka_unit_test(test_tile_slice_concat),
		cmocka_unit_test(test_pad_modes),
		cmocka_unit_test(test_gather_scatter),
		cmocka_unit_test(test_col2im),
		cmocka_unit_test(test_random_repeatable),
		cmocka_unit_test(test_infer_reshape),
		cmocka_unit_test(test_infer_slice_concat),
		cmocka_unit_test(test_infer_misc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
