/*
 * test_math.c - the math kernels (reductions, softmax, normalisation,
 * matrix products, Einsum, TopK) on inputs large enough to use threads:
 * 1 and 2 OpenMP threads must give the same bits.  Also the inference
 * functions on partly unknown inputs, which the backend tests (all values
 * known) never exercise.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "runtime/session.h"
#include "runtime/infer.h"
#include "runtime/op_table.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static float rnd(void)
{
	rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
	return (float)((double)(rng_state >> 40) / (double)(1u << 24)) * 4.0f - 2.0f;
}

static pn_tensor *tensor(int dtype, int rank, const int64_t *dims)
{
	pn_tensor *t = pn_tensor_new(dtype, rank, dims);
	assert_non_null(t);
	for (int64_t i = 0; i < t->numel; i++)
		pn_tensor_set_f64(t, i, dtype == PN_INT64 ? (double)(i % 7) : rnd());
	return t;
}

static pn_tensor *ints(int n, const int64_t *v)
{
	pn_tensor *t = pn_tensor_new(PN_INT64, 1, (int64_t[]){n});
	assert_non_null(t);
	memcpy(t->data, v, sizeof(int64_t) * (size_t)n);
	return t;
}

static pn_attr attr_int(const char *name, int64_t v)
{
	return (pn_attr){.name = name, .type = PN_ATTR_INT, .i = v};
}

static pn_attr attr_ints(const char *name, int n, int64_t *v)
{
	return (pn_attr){.name = name, .type = PN_ATTR_INTS, .n = n, .ints = v};
}

static pn_attr attr_str(const char *name, const char *s)
{
	return (pn_attr){.name = name, .type = PN_ATTR_STRING, .s = s, .s_len = (int64_t)strlen(s)};
}

static int32_t slots[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

static pn_node node(const char *op, int opset, int n_in, int n_out, pn_attr *attrs, int n_attr)
{
	pn_node n = {.name = op, .op_type = op, .domain = "", .opset = opset, .n_in = n_in,
		     .n_out = n_out, .n_attr = n_attr, .in = slots, .out = slots, .attrs = attrs};
	n.op = pn_op_lookup("", op);
	assert_true(n.op >= 0);
	return n;
}

/* Runs n with 1 and with 2 threads; every output must match bit for bit. */
static void same_bits(const pn_node *n, pn_tensor **in)
{
	pn_tensor *a[4] = {0}, *b[4] = {0};
	char err[PN_ERRLEN] = "";
	omp_set_num_threads(1);
	int rc = pn_exec_node(n, in, n->n_in, a, 1, err);
	if (rc)
		fail_msg("%s: %s", n->op_type, err);
	omp_set_num_threads(2);
	rc = pn_exec_node(n, in, n->n_in, b, 1, err);
	if (rc)
		fail_msg("%s: %s", n->op_type, err);
	for (int i = 0; i < n->n_out; i++) {
		assert_int_equal(a[i]->numel, b[i]->numel);
		assert_true(a[i]->numel > 0);
		if (memcmp(a[i]->data, b[i]->data, pn_tensor_nbytes(a[i])))
			fail_msg("%s output %d differs between 1 and 2 threads", n->op_type, i);
		pn_tensor_free(a[i]);
		pn_tensor_free(b[i]);
	}
	for (int i = 0; i < n->n_in; i++)
		pn_tensor_free(in[i]);
}

static void test_reduce_threads(void **state)
{
	(void)state;
	int64_t ax1[] = {1}, ax0[] = {0}, ax02[] = {0, 2};
	static const char *ops[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceL2", "ReduceLogSumExp"};
	for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
		int sum = !strcmp(ops[o], "ReduceSum");
		pn_attr at[2] = {attr_int("keepdims", 0), attr_ints("axes", 1, ax1)};
		/* rows (I == 1), columns (I > 1), and a gathered reduction */
		const int64_t *axes[] = {ax1, ax0, ax02};
		int nax[] = {1, 1, 2};
		int64_t shapes[3][3] = {{64, 3000, 1}, {3000, 64, 1}, {40, 30, 50}};
		for (int s = 0; s < 3; s++) {
			at[1] = attr_ints("axes", nax[s], (int64_t *)axes[s]);
			pn_node n = node(ops[o], 13, sum ? 2 : 1, 1, at, sum ? 1 : 2);
			pn_tensor *in[2] = {tensor(PN_FLOAT, 3, shapes[s]), ints(nax[s], axes[s])};
			if (!sum)
				pn_tensor_free(in[1]);
			same_bits(&n, in);
		}
	}
}

static void test_softmax_threads(void **state)
{
	(void)state;
	pn_attr at[] = {attr_int("axis", 1)};
	static const char *ops[] = {"Softmax", "LogSoftmax", "Hardmax"};
	for (size_t o = 0; o < 3; o++) {
		pn_node n = node(ops[o], 13, 1, 1, at, 1);
		pn_tensor *in[] = {tensor(PN_FLOAT, 3, (int64_t[]){64, 300, 20})};
		same_bits(&n, in);
		pn_node r = node(ops[o], 13, 1, 1, NULL, 0);
		pn_tensor *in2[] = {tensor(PN_DOUBLE, 2, (int64_t[]){512, 300})};
		same_bits(&r, in2);
	}
}

static void test_argmax_cumsum_topk_threads(void **state)
{
	(void)state;
	pn_attr at[] = {attr_int("axis", 1)};
	pn_node a = node("ArgMax", 13, 1, 1, at, 1);
	pn_tensor *in[] = {tensor(PN_FLOAT, 3, (int64_t[]){50, 400, 30})};
	same_bits(&a, in);
	pn_node c = node("CumSum", 14, 2, 1, NULL, 0);
	pn_tensor *in2[] = {tensor(PN_FLOAT, 3, (int64_t[]){50, 400, 30}), ints(1, (int64_t[]){1})};
	same_bits(&c, in2);
	pn_node t = node("TopK", 11, 2, 2, NULL, 0);
	pn_tensor *in3[] = {tensor(PN_FLOAT, 2, (int64_t[]){300, 1000}), ints(1, (int64_t[]){10})};
	same_bits(&t, in3);
}

static void test_norm_threads(void **state)
{
	(void)state;
	pn_node ln = node("LayerNormalization", 17, 3, 3, NULL, 0);
	pn_tensor *in[] = {tensor(PN_FLOAT, 2, (int64_t[]){256, 768}),
			   tensor(PN_FLOAT, 1, (int64_t[]){768}), tensor(PN_FLOAT, 1, (int64_t[]){768})};
	same_bits(&ln, in);
	pn_node inn = node("InstanceNormalization", 6, 3, 1, NULL, 0);
	pn_tensor *in2[] = {tensor(PN_FLOAT, 4, (int64_t[]){4, 32, 30, 30}),
			    tensor(PN_FLOAT, 1, (int64_t[]){32}), tensor(PN_FLOAT, 1, (int64_t[]){32})};
	same_bits(&inn, in2);
	pn_attr at[] = {attr_int("size", 5)};
	pn_node lrn = node("LRN", 13, 1, 1, at, 1);
	pn_tensor *in3[] = {tensor(PN_FLOAT, 4, (int64_t[]){2, 32, 30, 30})};
	same_bits(&lrn, in3);
	pn_node mvn = node("MeanVarianceNormalization", 13, 1, 1, NULL, 0);
	pn_tensor *in4[] = {tensor(PN_FLOAT, 4, (int64_t[]){4, 16, 30, 30})};
	same_bits(&mvn, in4);
}

static void test_matmul_threads(void **state)
{
	(void)state;
	pn_node mm = node("MatMul", 13, 2, 1, NULL, 0);
	pn_tensor *in[] = {tensor(PN_FLOAT, 3, (int64_t[]){8, 128, 256}),
			   tensor(PN_FLOAT, 3, (int64_t[]){8, 256, 64})};
	same_bits(&mm, in);
	pn_tensor *in2[] = {tensor(PN_DOUBLE, 3, (int64_t[]){4, 100, 80}),
			    tensor(PN_DOUBLE, 2, (int64_t[]){80, 90})};
	same_bits(&mm, in2);
	pn_attr at[] = {attr_int("transA", 1)};
	pn_node g = node("Gemm", 13, 3, 1, at, 1);
	pn_tensor *in3[] = {tensor(PN_DOUBLE, 2, (int64_t[]){100, 120}),
			    tensor(PN_DOUBLE, 2, (int64_t[]){100, 90}), tensor(PN_DOUBLE, 1, (int64_t[]){90})};
	same_bits(&g, in3);
	pn_attr eq[] = {attr_str("equation", "bhqd,bhkd->bhqk")};
	pn_node e = node("Einsum", 12, 2, 1, eq, 1);
	pn_tensor *in4[] = {tensor(PN_FLOAT, 4, (int64_t[]){2, 4, 64, 32}),
			    tensor(PN_FLOAT, 4, (int64_t[]){2, 4, 80, 32})};
	same_bits(&e, in4);
	pn_attr tr[] = {attr_str("equation", "iij,kj->ik")};
	pn_node t = node("Einsum", 12, 2, 1, tr, 1);
	pn_tensor *in5[] = {tensor(PN_FLOAT, 3, (int64_t[]){300, 300, 8}),
			    tensor(PN_FLOAT, 2, (int64_t[]){200, 8})};
	same_bits(&t, in5);
}

/* --- inference on partly unknown inputs ------------------------------------------- */

typedef struct ictx_fixture {
	pn_tinfo in[8];
	const pn_tinfo *pin[8];
	pn_tinfo out[4];
	char err[PN_ERRLEN];
	pn_ictx c;
} ictx_fixture;

static pn_ictx *ictx(ictx_fixture *f, const pn_node *n, const pn_type *types, int n_in)
{
	memset(f, 0, sizeof(*f));
	for (int i = 0; i < n_in; i++) {
		f->in[i].type = types[i];
		f->pin[i] = &f->in[i];
	}
	f->c = (pn_ictx){.node = n, .opset = n->opset, .n_in = n_in, .n_out = n->n_out,
			 .in = f->pin, .out = f->out, .err = f->err};
	return &f->c;
}

static pn_type ty(int dtype, int rank, const int64_t *dims)
{
	pn_type t = {.kind = PN_KIND_TENSOR, .dtype = dtype, .rank = rank};
	for (int i = 0; i < rank; i++)
		t.dims[i] = dims[i];
	return t;
}

static void test_infer_unknown(void **state)
{
	(void)state;
	ictx_fixture f;

	/* ReduceSum with axes of unknown value: rank kept, dims unknown */
	pn_attr keep[] = {attr_int("keepdims", 1)};
	pn_node rs = node("ReduceSum", 13, 2, 1, keep, 1);
	pn_type rt[] = {ty(PN_FLOAT, 3, (int64_t[]){2, 3, 4}), ty(PN_INT64, 1, (int64_t[]){1})};
	assert_int_equal(pn_op_infer(rs.op)(ictx(&f, &rs, rt, 2)), 0);
	assert_int_equal(f.out[0].type.rank, 3);
	assert_int_equal(f.out[0].type.dims[0], -1);

	/* TopK with k unknown: that axis is unknown */
	pn_node tk = node("TopK", 11, 2, 2, NULL, 0);
	pn_type tt[] = {ty(PN_FLOAT, 2, (int64_t[]){5, 9}), ty(PN_INT64, 1, (int64_t[]){1})};
	assert_int_equal(pn_op_infer(tk.op)(ictx(&f, &tk, tt, 2)), 0);
	assert_int_equal(f.out[0].type.dims[0], 5);
	assert_int_equal(f.out[0].type.dims[1], -1);
	assert_int_equal(f.out[1].type.dtype, PN_INT64);

	/* MatMul: unknown batch dim broadcast against a known one */
	pn_node mm = node("MatMul", 13, 2, 1, NULL, 0);
	pn_type mt[] = {ty(PN_FLOAT, 3, (int64_t[]){-1, 3, 4}), ty(PN_FLOAT, 3, (int64_t[]){7, 4, 5})};
	assert_int_equal(pn_op_infer(mm.op)(ictx(&f, &mm, mt, 2)), 0);
	assert_int_equal(f.out[0].type.rank, 3);
	assert_int_equal(f.out[0].type.dims[0], 7);
	assert_int_equal(f.out[0].type.dims[2], 5);
	pn_type bad[] = {ty(PN_FLOAT, 2, (int64_t[]){3, 4}), ty(PN_FLOAT, 2, (int64_t[]){5, 6})};
	assert_int_equal(pn_op_infer(mm.op)(ictx(&f, &mm, bad, 2)), -1);

	/* QLinearMatMul: B is input 3, result typed like y_zero_point */
	pn_node q = node("QLinearMatMul", 10, 8, 1, NULL, 0);
	pn_type qt[8] = {ty(PN_INT8, 2, (int64_t[]){2, 3}), ty(PN_FLOAT, 0, NULL), ty(PN_INT8, 0, NULL),
			 ty(PN_INT8, 2, (int64_t[]){3, 6}), ty(PN_FLOAT, 0, NULL), ty(PN_INT8, 0, NULL),
			 ty(PN_FLOAT, 0, NULL), ty(PN_INT8, 0, NULL)};
	assert_int_equal(pn_op_infer(q.op)(ictx(&f, &q, qt, 8)), 0);
	assert_int_equal(f.out[0].type.dtype, PN_INT8);
	assert_int_equal(f.out[0].type.dims[1], 6);

	/* Einsum: ellipsis over an operand of unknown rank */
	pn_attr eq[] = {attr_str("equation", "...ij,jk->...ik")};
	pn_node e = node("Einsum", 12, 2, 1, eq, 1);
	pn_type et[] = {ty(PN_FLOAT, -1, NULL), ty(PN_FLOAT, 2, (int64_t[]){4, 5})};
	assert_int_equal(pn_op_infer(e.op)(ictx(&f, &e, et, 2)), 0);
	assert_int_equal(f.out[0].type.rank, -1);
	pn_type et2[] = {ty(PN_FLOAT, 3, (int64_t[]){2, -1, 4}), ty(PN_FLOAT, 2, (int64_t[]){4, 5})};
	assert_int_equal(pn_op_infer(e.op)(ictx(&f, &e, et2, 2)), 0);
	assert_int_equal(f.out[0].type.rank, 3);
	assert_int_equal(f.out[0].type.dims[0], 2);
	assert_int_equal(f.out[0].type.dims[1], -1);
	assert_int_equal(f.out[0].type.dims[2], 5);

	/* LayerNormalization: Mean/InvStdDev keep the leading dims */
	pn_attr ax[] = {attr_int("axis", 1)};
	pn_node ln = node("LayerNormalization", 17, 2, 3, ax, 1);
	pn_type lt[] = {ty(PN_FLOAT16, 3, (int64_t[]){2, 3, 4}), ty(PN_FLOAT16, 2, (int64_t[]){3, 4})};
	assert_int_equal(pn_op_infer(ln.op)(ictx(&f, &ln, lt, 2)), 0);
	assert_int_equal(f.out[1].type.dtype, PN_FLOAT);
	assert_int_equal(f.out[1].type.dims[0], 2);
	assert_int_equal(f.out[1].type.dims[1], 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reduce_threads),
		cmocka_unit_test(test_softmax_threads),
		cmocka_unit_test(test_argmax_cumsum_topk_threads),
		cmocka_unit_test(test_norm_threads),
		cmocka_unit_test(test_matmul_threads),
		cmocka_unit_test(test_infer_unknown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
