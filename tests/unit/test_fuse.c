/*
 * test_fuse.c - the fusion plan (runtime/fuse.h) of small QDQ graphs: the
 * chain DequantizeLinear -> Conv [-> Relu] -> QuantizeLinear is found with
 * and without its Relu, and not where an intermediate value is seen outside
 * the chain (a graph output, a second reader) or the QuantizeLinear's scale
 * is computed; and the residual join DequantizeLinear + DequantizeLinear ->
 * Add [-> Relu] -> QuantizeLinear; a fully connected Gemm heads a qconv
 * chain, any other Gemm does not.  (What the chains compute is
 * tests/cli/qdq_chains.sh's.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "model/onnx.h"
#include "runtime/fuse.h"
#include "schemas/ops.h"
#include "onnx_builder.h"

enum shape {
	WITH_RELU = 1,
	CONV_IS_OUTPUT = 2,     /* the Conv's output is a graph output too */
	X_READ_TWICE = 4,       /* the dequantized x has a second reader */
	SCALE_COMPUTED = 8,     /* the QuantizeLinear's scale is a node's output */
};

static pn_model *chain(int shape)
{
	builder b;
	builder_init(&b);
	const int64_t x_d[] = {1, 2, 5, 5}, w_d[] = {3, 2, 3, 3}, y_d[] = {1, 3, 3, 3};
	const int64_t one[] = {1};
	b.inputs[b.nin++] = vinfo(&b, "x", 4, x_d);
	b.inits[b.ni++] = tensor(&b, "xs", 0, one);
	b.inits[b.ni++] = tensor(&b, "wq", 4, w_d);
	b.inits[b.ni++] = tensor(&b, "ws", 0, one);
	b.inits[b.ni++] = tensor(&b, "ys", 0, one);
	node(&b, "DequantizeLinear", "x,xs", "xf");
	node(&b, "DequantizeLinear", "wq,ws", "wf");
	node(&b, "Conv", "xf,wf", "cv");
	const char *last = "cv";
	if (shape & WITH_RELU) {
		node(&b, "Relu", "cv", "rl");
		last = "rl";
	}
	const char *scale = "ys";
	if (shape & SCALE_COMPUTED) {
		node(&b, "Identity", "ys", "ys2");
		scale = "ys2";
	}
	char qin[32];
	snprintf(qin, sizeof(qin), "%s,%s", last, scale);
	node(&b, "QuantizeLinear", qin, "y");
	b.outputs[b.nout++] = vout(&b, "y");
	if (shape & CONV_IS_OUTPUT)
		b.outputs[b.nout++] = vinfo(&b, "cv", 4, y_d);
	if (shape & X_READ_TWICE) {
		node(&b, "Neg", "xf", "nx");
		b.outputs[b.nout++] = vinfo(&b, "nx", 4, x_d);
	}
	pn_model *m = load(&b);
	pn_arena_free(&b.a);
	return m;
}

/* The index of the first node of op `op`. */
static int node_of(const pn_graph *g, int op)
{
	for (int i = 0; i < g->n_nodes; i++)
		if (g->nodes[i].op == op)
			return i;
	fail_msg("no node of op %d", op);
	return -1;
}

/* 1. DequantizeLinear -> Conv -> Relu -> QuantizeLinear is one chain headed
 * by the Conv; the weights' DequantizeLinear still runs as itself. */
static void test_chain_with_relu(void **state)
{
	(void)state;
	pn_model *m = chain(WITH_RELU);
	const pn_graph *g = m->graph;
	pn_fusion f;
	assert_int_equal(pn_fusion_plan(g, &f), 0);
	assert_int_equal(f.n_chains, 1);
	int conv = node_of(g, PN_OP_Conv), relu = node_of(g, PN_OP_Relu);
	int q = node_of(g, PN_OP_QuantizeLinear);
	assert_int_equal(f.role[conv], PN_FUSE_QCONV);
	assert_int_equal(f.role[relu], PN_FUSE_SWALLOWED);
	assert_int_equal(f.role[q], PN_FUSE_SWALLOWED);
	const pn_fuse_qconv *c = &f.qconv[conv];
	assert_int_equal(c->act, relu);
	assert_int_equal(c->q, q);
	assert_int_equal(g->nodes[c->dq_x].out[0], g->nodes[conv].in[0]);
	assert_int_equal(g->nodes[c->dq_w].out[0], g->nodes[conv].in[1]);
	assert_int_equal(f.role[c->dq_x], PN_FUSE_SWALLOWED);
	assert_int_equal(f.role[c->dq_w], PN_FUSE_NONE);
	pn_fusion_free(&f);
	pn_model_free(m);
}

/* 2. Without the Relu, the Conv feeds the QuantizeLinear itself. */
static void test_chain_without_relu(void **state)
{
	(void)state;
	pn_model *m = chain(0);
	pn_fusion f;
	assert_int_equal(pn_fusion_plan(m->graph, &f), 0);
	assert_int_equal(f.n_chains, 1);
	int conv = node_of(m->graph, PN_OP_Conv);
	assert_int_equal(f.role[conv], PN_FUSE_QCONV);
	assert_int_equal(f.qconv[conv].act, -1);
	assert_int_equal(f.qconv[conv].q, node_of(m->graph, PN_OP_QuantizeLinear));
	pn_fusion_free(&f);
	pn_model_free(m);
}

/* 3. A value seen outside the chain, or a scale that may not be there when
 * the head runs: no chain, every node runs as itself. */
static void test_no_chain(void **state)
{
	(void)state;
	const int shapes[] = {WITH_RELU | CONV_IS_OUTPUT, WITH_RELU | X_READ_TWICE,
			      WITH_RELU | SCALE_COMPUTED, CONV_IS_OUTPUT};
	for (size_t i = 0; i < sizeof(shapes) / sizeof(*shapes); i++) {
		pn_model *m = chain(shapes[i]);
		pn_fusion f;
		assert_int_equal(pn_fusion_plan(m->graph, &f), 0);
		assert_int_equal(f.n_chains, 0);
		for (int n = 0; n < m->graph->n_nodes; n++)
			assert_int_equal(f.role[n], PN_FUSE_NONE);
		pn_fusion_free(&f);
		pn_model_free(m);
	}
}

/* The residual join; `twice`: a dequantized operand is read again. */
static pn_model *join(int relu, int twice)
{
	builder b;
	builder_init(&b);
	const int64_t d[] = {1, 4, 3, 3}, one[] = {1};
	b.inputs[b.nin++] = vinfo(&b, "a", 4, d);
	b.inputs[b.nin++] = vinfo(&b, "b", 4, d);
	b.inits[b.ni++] = tensor(&b, "s", 0, one);
	node(&b, "DequantizeLinear", "a,s", "af");
	node(&b, "DequantizeLinear", "b,s", "bf");
	node(&b, "Add", "af,bf", "sum");
	if (relu)
		node(&b, "Relu", "sum", "r");
	node(&b, "QuantizeLinear", relu ? "r,s" : "sum,s", "y");
	b.outputs[b.nout++] = vout(&b, "y");
	if (twice) {
		node(&b, "Neg", "bf", "nb");
		b.outputs[b.nout++] = vinfo(&b, "nb", 4, d);
	}
	pn_model *m = load(&b);
	pn_arena_free(&b.a);
	return m;
}

/* 4. The join is one chain headed by the Add, swallowing both
 * DequantizeLinears, the Relu and the QuantizeLinear. */
static void test_residual_join(void **state)
{
	(void)state;
	for (int relu = 0; relu <= 1; relu++) {
		pn_model *m = join(relu, 0);
		const pn_graph *g = m->graph;
		pn_fusion f;
		assert_int_equal(pn_fusion_plan(g, &f), 0);
		assert_int_equal(f.n_chains, 1);
		int add = node_of(g, PN_OP_Add);
		assert_int_equal(f.role[add], PN_FUSE_QADD);
		const pn_fuse_qadd *a = &f.qadd[add];
		assert_int_equal(g->nodes[a->dq_a].out[0], g->nodes[add].in[0]);
		assert_int_equal(g->nodes[a->dq_b].out[0], g->nodes[add].in[1]);
		assert_int_equal(a->relu, relu ? node_of(g, PN_OP_Relu) : -1);
		assert_int_equal(a->q, node_of(g, PN_OP_QuantizeLinear));
		for (int n = 0; n < g->n_nodes; n++)
			assert_int_equal(f.role[n], n == add ? PN_FUSE_QADD : PN_FUSE_SWALLOWED);
		pn_fusion_free(&f);
		pn_model_free(m);
	}
	pn_model *m = join(1, 1);
	pn_fusion f;
	assert_int_equal(pn_fusion_plan(m->graph, &f), 0);
	assert_int_equal(f.n_chains, 0);
	pn_fusion_free(&f);
	pn_model_free(m);
}

/* DequantizeLinear -> Gemm(., DequantizeLinear(W)) -> QuantizeLinear with
 * the Gemm's transA, transB and alpha as given. */
static pn_model *linear(int trans_a, int trans_b, float alpha)
{
	builder b;
	builder_init(&b);
	const int64_t x_d[] = {3, 4}, w_d[] = {4, 4}, one[] = {1};
	b.inputs[b.nin++] = vinfo(&b, "x", 2, x_d);
	b.inits[b.ni++] = tensor(&b, "xs", 0, one);
	b.inits[b.ni++] = tensor(&b, "wq", 2, w_d);
	b.inits[b.ni++] = tensor(&b, "ws", 0, one);
	b.inits[b.ni++] = tensor(&b, "ys", 0, one);
	node(&b, "DequantizeLinear", "x,xs", "xf");
	node(&b, "DequantizeLinear", "wq,ws", "wf");
	Onnx__NodeProto *n = node(&b, "Gemm", "xf,wf", "mm");
	attr_int(&b, n, "transA", trans_a);
	attr_int(&b, n, "transB", trans_b);
	attr_float(&b, n, "alpha", alpha);
	node(&b, "QuantizeLinear", "mm,ys", "y");
	b.outputs[b.nout++] = vout(&b, "y");
	pn_model *m = load(&b);
	pn_arena_free(&b.a);
	return m;
}

/* 5. A fully connected Gemm (x W^T) heads a qconv chain; with transB 0,
 * transA 1 or alpha other than 1 it is no 1x1 convolution and runs as
 * itself. */
static void test_linear_gemm(void **state)
{
	(void)state;
	const struct {
		int trans_a, trans_b;
		float alpha;
		int chains;
	} cases[] = {{0, 1, 1.0f, 1}, {0, 0, 1.0f, 0}, {1, 1, 1.0f, 0}, {0, 1, 2.0f, 0}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		pn_model *m = linear(cases[i].trans_a, cases[i].trans_b, cases[i].alpha);
		const pn_graph *g = m->graph;
		pn_fusion f;
		assert_int_equal(pn_fusion_plan(g, &f), 0);
		assert_int_equal(f.n_chains, cases[i].chains);
		int gemm = node_of(g, PN_OP_Gemm);
		assert_int_equal(f.role[gemm], cases[i].chains ? PN_FUSE_QCONV : PN_FUSE_NONE);
		if (cases[i].chains)
			assert_int_equal(f.qconv[gemm].q, node_of(g, PN_OP_QuantizeLinear));
		pn_fusion_free(&f);
		pn_model_free(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain_with_relu),
		cmocka_unit_test(test_chain_without_relu),
		cmocka_unit_test(test_no_chain),
		cmocka_unit_test(test_residual_join),
		cmocka_unit_test(test_linear_gemm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
