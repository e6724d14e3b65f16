/*
 * test_session.c - what a session keeps between runs.
 *
 * A session packs a constant GEMM operand (a Gemm or MatMul weight) on its
 * first run and reuses the panels afterwards (pn_kconst_packed_b).  These
 * tests run ONNX models, built with protobuf-c (onnx_builder.h) and decoded
 * like any model file, several times in one session with fresh inputs each
 * time, and check every result bit for bit against pn_sgemm on the raw
 * matrices; and that a B which is a graph input, so may change between
 * runs, is never kept.  Nodes computed from weights alone (a Transpose of
 * one) run once and are kept: later runs on fresh inputs must still agree
 * with a fresh session's first run bit for bit, and a fixed value that is
 * also a graph output must come out whole every time.  An Identity, or a
 * Cast to its input's own type, takes over its input's buffer only where it
 * is the last reader of a value the run owns: graph outputs and values read
 * again later keep theirs.  A node's inference is kept for the next run on
 * the same inputs, never taken for another shape value or NonZero's data.
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
#include "runtime/gemm.h"
#include "model/onnx.h"
#include "onnx_builder.h"

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

static float rnd(void)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (float)((rng_state >> 40) & 0xffff) / 32768.0f - 1.0f;
}

static void fill(float *p, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		p[i] = rnd();
}

/*
 * y = op(a, b) with a [M, K] an input and b [K, N] ([N, K] when trans_b)
 * either an initializer holding b_init or, when b_init is NULL, a second
 * graph input.  op is "Gemm" (transB = trans_b) or "MatMul".
 */
static pn_model *product_model(const char *op, int trans_b, int64_t M, int64_t K, int64_t N,
			       const float *b_init)
{
	int64_t a_dims[2] = {M, K}, y_dims[2] = {M, N};
	int64_t b_dims[2] = {trans_b ? N : K, trans_b ? K : N};
	builder b;
	builder_init(&b);
	b.inputs[b.nin++] = vinfo(&b, "a", 2, a_dims);
	if (b_init)
		b.inits[b.ni++] = tensor_of(&b, "b", 2, b_dims, b_init);
	else
		b.inputs[b.nin++] = vinfo(&b, "b", 2, b_dims);
	Onnx__NodeProto *n = node(&b, op, "a,b", "y");
	if (!strcmp(op, "Gemm"))
		attr_int(&b, n, "transB", trans_b);
	b.outputs[b.nout++] = vinfo(&b, "y", 2, y_dims);
	pn_model *m = load(&b);
	pn_arena_free(&b.a);
	return m;
}

static pn_tensor *matrix(int64_t d0, int64_t d1)
{
	pn_tensor *t = pn_tensor_new(PN_FLOAT, 2, (int64_t[]){d0, d1});
	assert_non_null(t);
	fill(t->data, d0 * d1);
	return t;
}

/* A session of m's graph on `threads` threads (seed 1). */
static pn_session *session_of(const pn_model *m, int threads)
{
	pn_session *s = NULL;
	char err[PN_ERRLEN] = "";
	pn_exec_opts o = {.seed = 1, .threads = threads};
	if (pn_session_new(m->graph, &o, &s, err))
		fail_msg("session: %s", err);
	return s;
}

/*
 * Runs the model `runs` times in one session, each time on a fresh A (and
 * a fresh B when B is an input), against pn_sgemm on the raw operands.
 */
static void check_runs(const char *op, int trans_b, int64_t M, int64_t K, int64_t N,
		       int b_const, int threads, int runs)
{
	float *b_init = malloc(sizeof(float) * (size_t)(K * N));
	fill(b_init, K * N);
	pn_model *m = product_model(op, trans_b, M, K, N, b_const ? b_init : NULL);
	pn_session *s = session_of(m, threads);
	char err[PN_ERRLEN] = "";
	float *want = malloc(sizeof(float) * (size_t)(M * N));
	for (int r = 0; r < runs; r++) {
		pn_tensor *in[2] = {matrix(M, K), NULL}, *out[1] = {NULL};
		const float *b = b_init;
		if (!b_const) {
			in[1] = matrix(trans_b ? N : K, trans_b ? K : N);
			b = in[1]->data;
		}
		if (pn_session_run(s, in, b_const ? 1 : 2, out, err))
			fail_msg("%s run %d: %s", op, r, err);
		pn_sgemm(0, trans_b, M, N, K, 1.0f, in[0]->data, K, b, trans_b ? K : N, 0.0f, want,
			 N);
		assert_int_equal(out[0]->numel, M * N);
		if (memcmp(out[0]->data, want, sizeof(float) * (size_t)(M * N)))
			fail_msg("%s %lldx%lldx%lld (B %s) run %d differs from pn_sgemm", op,
				 (long long)M, (long long)K, (long long)N,
				 b_const ? "constant" : "an input", r);
		pn_tensor_free(in[0]);
		pn_tensor_free(in[1]);
		pn_tensor_free(out[0]);
	}
	free(want);
	pn_session_free(s);
	pn_model_free(m);
	free(b_init);
}

/* A batch-1 fully connected layer (Gemm, transB = 1): packed once. */
static void test_gemm_const_b(void **state)
{
	(void)state;
	check_runs("Gemm", 1, 1, 300, 70, 1, 1, 3);
	check_runs("Gemm", 1, 37, 520, 100, 1, 2, 3);
	check_runs("Gemm", 0, 600, 64, 48, 1, 2, 3);
}

/* MatMul reads B in place for small M and packs it for large M. */
static void test_matmul_const_b(void **state)
{
	(void)state;
	check_runs("MatMul", 0, 8, 96, 40, 1, 1, 3);
	check_runs("MatMul", 0, 700, 96, 40, 1, 2, 3);
}

/* B a graph input: every run must use that run's B. */
static void test_input_b_not_kept(void **state)
{
	(void)state;
	check_runs("Gemm", 1, 3, 200, 50, 0, 1, 3);
	check_runs("MatMul", 0, 700, 96, 40, 0, 2, 3);
}

/*
 * y = MatMul(a, Transpose(w)) + MatMul(a, Relu(Transpose(w))): the
 * Transpose and the Relu read the weight alone, so the session keeps their
 * outputs after its first run; wt = Transpose(w) is a graph output too.
 */
static pn_model *folded_model(int64_t M, int64_t K, int64_t N, const float *w)
{
	int64_t a_dims[2] = {M, K}, w_dims[2] = {N, K}, y_dims[2] = {M, N}, wt_dims[2] = {K, N};
	builder b;
	builder_init(&b);
	b.inputs[b.nin++] = vinfo(&b, "a", 2, a_dims);
	b.inits[b.ni++] = tensor_of(&b, "w", 2, w_dims, w);
	node(&b, "Transpose", "w", "wt");
	node(&b, "MatMul", "a,wt", "p");
	node(&b, "Relu", "wt", "rw");
	node(&b, "MatMul", "a,rw", "q");
	node(&b, "Add", "p,q", "y");
	b.outputs[b.nout++] = vinfo(&b, "y", 2, y_dims);
	b.outputs[b.nout++] = vinfo(&b, "wt", 2, wt_dims);
	pn_model *m = load(&b);
	pn_arena_free(&b.a);
	return m;
}

/* One run of m in a session of its own. */
static void fresh_run(const pn_model *m, pn_tensor *a, pn_tensor **out)
{
	pn_session *s = NULL;
	char err[PN_ERRLEN] = "";
	pn_exec_opts o = {.seed = 1, .threads = 1};
	if (pn_session_new(m->graph, &o, &s, err) || pn_session_run(s, &a, 1, out, err))
		fail_msg("fresh session: %s", err);
	pn_session_free(s);
}

static void test_fixed_nodes_kept(void **state)
{
	(void)state;
	int64_t M = 5, K = 40, N = 24;
	float *w = malloc(sizeof(float) * (size_t)(N * K));
	fill(w, N * K);
	pn_model *m = folded_model(M, K, N, w);
	assert_non_null(m);
	pn_session *s = session_of(m, 2);
	char err[PN_ERRLEN] = "";
	for (int r = 0; r < 4; r++) {
		pn_session_set_threads(s, r % 2 ? 1 : 2);
		pn_tensor *a = matrix(M, K), *out[2] = {NULL, NULL}, *want[2] = {NULL, NULL};
		if (pn_session_run(s, &a, 1, out, err))
			fail_msg("run %d: %s", r, err);
		fresh_run(m, a, want);
		for (int i = 0; i < 2; i++) {
			assert_int_equal(out[i]->numel, want[i]->numel);
			if (memcmp(out[i]->data, want[i]->data, sizeof(float) * (size_t)want[i]->numel))
				fail_msg("run %d: output %d differs from a fresh session's", r, i);
		}
		/* the kept Transpose is w transposed, whatever ran before */
		const float *wt = out[1]->data;
		for (int64_t k = 0; k < K; k++)
			for (int64_t n = 0; n < N; n++)
				if (wt[k * N + n] != w[n * K + k])
					fail_msg("run %d: wt[%lld][%lld] is not w's", r, (long long)k,
						 (long long)n);
		for (int i = 0; i < 2; i++) {
			pn_tensor_free(out[i]);
			pn_tensor_free(want[i]);
		}
		pn_tensor_free(a);
	}
	pn_session_free(s);
	pn_model_free(m);
	free(w);
}

/*
 * d = Identity(Cast(Relu(x))) (both take over), f = Identity(e) of a graph
 * output e = Neg(x) (copied), y = g + Identity(g) for g = Relu(x) read twice
 * (copied: the Identity is not g's last reader).
 */
static pn_model *hand_over_model(int64_t n)
{
	int64_t dims[1] = {n};
	builder b;
	builder_init(&b);
	b.inputs[b.nin++] = vinfo(&b, "x", 1, dims);
	node(&b, "Relu", "x", "r");
	attr_int(&b, node(&b, "Cast", "r", "c"), "to", 1);
	node(&b, "Identity", "c", "d");
	node(&b, "Neg", "x", "e");
	node(&b, "Identity", "e", "f");
	node(&b, "Relu", "x", "g");
	node(&b, "Identity", "g", "h");
	node(&b, "Add", "g,h", "y");
	const char *outs[] = {"d", "e", "f", "y"};
	for (int i = 0; i < 4; i++)
		b.outputs[b.nout++] = vinfo(&b, outs[i], 1, dims);
	pn_model *m = load(&b);
	pn_arena_free(&b.a);
	return m;
}

static void test_hand_over(void **state)
{
	(void)state;
	const int64_t n = 1000;
	pn_model *m = hand_over_model(n);
	assert_non_null(m);
	pn_session *s = session_of(m, 1);
	char err[PN_ERRLEN] = "";
	for (int r = 0; r < 3; r++) {
		pn_tensor *x = pn_tensor_new(PN_FLOAT, 1, (int64_t[]){n}), *out[4] = {NULL};
		assert_non_null(x);
		fill(x->data, n);
		if (pn_session_run(s, &x, 1, out, err))
			fail_msg("run %d: %s", r, err);
		const float *xv = x->data, *d = out[0]->data, *e = out[1]->data, *f = out[2]->data,
			    *y = out[3]->data;
		for (int64_t i = 0; i < n; i++) {
			float relu = xv[i] > 0.0f ? xv[i] : 0.0f;
			if (d[i] != relu || e[i] != -xv[i] || f[i] != -xv[i] || y[i] != relu + relu)
				fail_msg("run %d, element %lld: d %g e %g f %g y %g for x %g", r,
					 (long long)i, d[i], e[i], f[i], y[i], xv[i]);
		}
		assert_ptr_not_equal(out[1]->data, out[2]->data);
		for (int i = 0; i < 4; i++)
			pn_tensor_free(out[i]);
		pn_tensor_free(x);
	}
	pn_session_free(s);
	pn_model_free(m);
}

/*
 * y = Reshape(Relu(x), shape), z = NonZero(x), with x's dims and the shape
 * input unknown to the graph: the inference memo must take neither a new
 * shape's value nor new data for the last run's.
 */
static pn_model *memo_model(void)
{
	builder b;
	builder_init(&b);
	b.inputs[b.nin++] = vinfo(&b, "x", 2, (int64_t[]){-1, -1});
	b.inputs[b.nin++] = vinfo_t(&b, "shape", PN_INT64, 1, (int64_t[]){2});
	node(&b, "Relu", "x", "r");
	node(&b, "Reshape", "r,shape", "y");
	node(&b, "NonZero", "x", "z");
	b.outputs[b.nout++] = vout(&b, "y");
	b.outputs[b.nout++] = vout(&b, "z");
	pn_model *m = load(&b);
	pn_arena_free(&b.a);
	return m;
}

/* One run: x [x0, x1] holding i % mod (nonzeros: those not a multiple),
 * shape (s0, s1); y must be [s0, s1] holding Relu(x) in order, z [2, nnz]. */
static void memo_run(pn_session *s, int64_t x0, int64_t x1, int64_t s0, int64_t s1, int mod)
{
	pn_tensor *x = pn_tensor_new(PN_FLOAT, 2, (int64_t[]){x0, x1});
	pn_tensor *shape = pn_tensor_new(PN_INT64, 1, (int64_t[]){2});
	assert_non_null(x);
	assert_non_null(shape);
	int64_t nnz = 0;
	for (int64_t i = 0; i < x0 * x1; i++) {
		((float *)x->data)[i] = (float)(i % mod) - 1.0f;
		nnz += i % mod != 1;
	}
	((int64_t *)shape->data)[0] = s0;
	((int64_t *)shape->data)[1] = s1;
	pn_tensor *in[2] = {x, shape}, *out[2] = {NULL, NULL};
	char err[PN_ERRLEN] = "";
	if (pn_session_run(s, in, 2, out, err))
		fail_msg("run: %s", err);
	assert_int_equal(out[0]->rank, 2);
	assert_int_equal(out[0]->dims[0], s0);
	assert_int_equal(out[0]->dims[1], s1);
	for (int64_t i = 0; i < s0 * s1; i++) {
		float v = ((float *)x->data)[i];
		assert_true(((float *)out[0]->data)[i] == (v > 0 ? v : 0));
	}
	assert_int_equal(out[1]->rank, 2);
	assert_int_equal(out[1]->dims[0], 2);
	assert_int_equal(out[1]->dims[1], nnz);
	for (int i = 0; i < 2; i++)
		pn_tensor_free(out[i]);
	pn_tensor_free(x);
	pn_tensor_free(shape);
}

static void test_infer_memo(void **state)
{
	(void)state;
	pn_model *m = memo_model();
	assert_non_null(m);
	pn_session *s = session_of(m, 1);
	/* x of 240 floats: too many to key on by value, few enough that
	 * NonZero's inference counts them */
	memo_run(s, 10, 24, 12, 20, 3);
	memo_run(s, 10, 24, 12, 20, 3);    /* the same key: taken from the memo */
	memo_run(s, 10, 24, 20, 12, 3);    /* the same shapes, another shape value */
	memo_run(s, 10, 24, 20, 12, 5);    /* the same again, other data: NonZero counts */
	memo_run(s, 12, 20, 24, 10, 5);    /* another input shape */
	memo_run(s, 10, 24, 12, 20, 3);    /* back to the first */
	pn_session_free(s);
	pn_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gemm_const_b),
		cmocka_unit_test(test_matmul_const_b),
		cmocka_unit_test(test_input_b_not_kept),
		cmocka_unit_test(test_fixed_nodes_kept),
		cmocka_unit_test(test_hand_over),
		cmocka_unit_test(test_infer_memo),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
