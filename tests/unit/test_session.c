/*
 * test_session.c - what a session keeps between runs.
 *
 * A session packs a constant GEMM operand (a Gemm or MatMul weight) on its
 * first run and reuses the panels afterwards (pn_kconst_packed_b).  These
 * tests run ONNX models, built with protobuf-c and decoded like any model
 * file, several times in one session with fresh inputs each time, and
 * check every result bit for bit against pn_sgemm on the raw matrices; and
 * that a B which is a graph input, so may change between runs, is never
 * kept.
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
#include "exec/exec.h"
#include "exec/gemm.h"
#include "extract/onnx.h"

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

/* A float tensor type [d0, d1] for a graph input or output. */
static Onnx__ValueInfoProto *info(const char *name, int64_t d0, int64_t d1)
{
	Onnx__ValueInfoProto *vi = calloc(1, sizeof(*vi));
	Onnx__TypeProto *tp = calloc(1, sizeof(*tp));
	Onnx__TypeProto__Tensor *tt = calloc(1, sizeof(*tt));
	Onnx__TensorShapeProto *sh = calloc(1, sizeof(*sh));
	Onnx__TensorShapeProto__Dimension **d = calloc(2, sizeof(*d));
	onnx__value_info_proto__init(vi);
	onnx__type_proto__init(tp);
	onnx__type_proto__tensor__init(tt);
	onnx__tensor_shape_proto__init(sh);
	for (int i = 0; i < 2; i++) {
		d[i] = calloc(1, sizeof(**d));
		onnx__tensor_shape_proto__dimension__init(d[i]);
		d[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
		d[i]->dim_value = i ? d1 : d0;
	}
	sh->n_dim = 2;
	sh->dim = d;
	tt->has_elem_type = 1;
	tt->elem_type = PN_FLOAT;
	tt->shape = sh;
	tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp->tensor_type = tt;
	vi->name = (char *)name;
	vi->type = tp;
	return vi;
}

static void free_info(Onnx__ValueInfoProto *vi)
{
	Onnx__TensorShapeProto *sh = vi->type->tensor_type->shape;
	free(sh->dim[0]);
	free(sh->dim[1]);
	free(sh->dim);
	free(sh);
	free(vi->type->tensor_type);
	free(vi->type);
	free(vi);
}

/*
 * y = op(a, b) with a [M, K] an input and b [bd0, bd1] either an
 * initializer holding b_init (small enough to stay by value) or, when
 * b_init is NULL, a second graph input.  op is "Gemm" (transB = trans_b)
 * or "MatMul".
 */
static pn_model *product_model(const char *op, int trans_b, int64_t M, int64_t K, int64_t N,
			       const float *b_init)
{
	int64_t bd0 = trans_b ? N : K, bd1 = trans_b ? K : N;
	Onnx__ValueInfoProto *ins[2] = {info("a", M, K), info("b", bd0, bd1)};
	Onnx__ValueInfoProto *out = info("y", M, N);
	Onnx__NodeProto node = ONNX__NODE_PROTO__INIT, *np = &node;
	char *node_in[2] = {(char *)"a", (char *)"b"}, *node_out[1] = {(char *)"y"};
	Onnx__AttributeProto tb = ONNX__ATTRIBUTE_PROTO__INIT, *tbp = &tb;
	tb.name = (char *)"transB";
	tb.has_type = 1;
	tb.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	tb.has_i = 1;
	tb.i = trans_b;
	node.op_type = (char *)op;
	node.n_input = 2;
	node.input = node_in;
	node.n_output = 1;
	node.output = node_out;
	if (!strcmp(op, "Gemm")) {
		node.n_attribute = 1;
		node.attribute = &tbp;
	}
	Onnx__TensorProto init = ONNX__TENSOR_PROTO__INIT, *initp = &init;
	int64_t idims[2] = {bd0, bd1};
	init.name = (char *)"b";
	init.has_data_type = 1;
	init.data_type = PN_FLOAT;
	init.n_dims = 2;
	init.dims = idims;
	init.n_float_data = (size_t)(K * N);
	init.float_data = (float *)b_init;

	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT, *osp = &os;
	os.has_version = 1;
	os.version = 17;
	g.name = (char *)"g";
	g.n_node = 1;
	g.node = &np;
	g.n_input = b_init ? 1 : 2;
	g.input = ins;
	g.n_output = 1;
	g.output = &out;
	if (b_init) {
		g.n_initializer = 1;
		g.initializer = &initp;
	}
	mp.has_ir_version = 1;
	mp.ir_version = 8;
	mp.n_opset_import = 1;
	mp.opset_import = &osp;
	mp.graph = &g;
	size_t len = onnx__model_proto__get_packed_size(&mp);
	uint8_t *bytes = malloc(len);
	onnx__model_proto__pack(&mp, bytes);
	free_info(ins[0]);
	free_info(ins[1]);
	free_info(out);
	pn_model *m = NULL;
	char err[PN_ERRLEN] = "";
	int rc = pn_model_load(bytes, len, NULL, 0, &m, err);
	free(bytes);
	if (rc)
		fail_msg("model: %s", err);
	return m;
}

static pn_tensor *matrix(int64_t d0, int64_t d1)
{
	pn_tensor *t = pn_tensor_new(PN_FLOAT, 2, (int64_t[]){d0, d1});
	assert_non_null(t);
	fill(t->data, d0 * d1);
	return t;
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
	pn_session *s = NULL;
	char err[PN_ERRLEN] = "";
	pn_exec_opts o = {.seed = 1, .threads = threads};
	if (pn_session_new(m->graph, &o, &s, err))
		fail_msg("session: %s", err);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gemm_const_b),
		cmocka_unit_test(test_matmul_const_b),
		cmocka_unit_test(test_input_b_not_kept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
