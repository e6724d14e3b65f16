/*
 * test_cost.c - FLOPs and bytes of single nodes against figures computed by
 * hand (the formulas are in runtime/ops/cost_*.c), and the fused and unfused
 * traffic of a small graph built as an ONNX model with protobuf-c and
 * decoded like any model file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "runtime/cost.h"
#include "runtime/infer.h"
#include "model/onnx.h"
#include "schemas/ops.h"
#include "onnx_builder.h"

/* --- single nodes ------------------------------------------------------------------- */

#define NDIMS(...) ((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define TY(dtype, ...) ty((dtype), NDIMS(__VA_ARGS__), (int64_t[]){__VA_ARGS__})
#define F32(...) TY(PN_FLOAT, __VA_ARGS__)
#define INTS(nm, ...) {.name = (nm), .type = PN_ATTR_INTS, .n = NDIMS(__VA_ARGS__), \
		       .ints = (int64_t[]){__VA_ARGS__}}
#define INT(nm, v) {.name = (nm), .type = PN_ATTR_INT, .i = (v)}
#define STR(nm, v) {.name = (nm), .type = PN_ATTR_STRING, .s = (v), .s_len = (int64_t)strlen(v)}

static pn_type ty(int dtype, int rank, const int64_t *dims)
{
	pn_type t;
	memset(&t, 0, sizeof(t));
	t.kind = PN_KIND_TENSOR;
	t.dtype = dtype;
	t.rank = rank;
	for (int i = 0; i < rank; i++)
		t.dims[i] = dims[i];
	return t;
}

typedef struct cost {
	double flops, read, written;
} cost;

typedef struct node_spec {
	int op;
	const pn_attr *attrs;
	int n_attr;
	const pn_type *in[8];
	int n_in;
	const pn_type *out[4];
	int n_out;
	const pn_tensor *val[8];
} node_spec;

static cost node_cost(const node_spec *s)
{
	pn_node n;
	memset(&n, 0, sizeof(n));
	n.op = s->op;
	n.op_type = s->op >= 0 ? pn_ops[s->op].name : "NoSuchOp";
	n.domain = "";
	n.opset = 17;
	n.n_in = s->n_in;
	n.n_out = s->n_out;
	n.n_attr = s->n_attr;
	n.attrs = (pn_attr *)s->attrs;
	cost c = {-1, -1, -1};
	assert_int_equal(pn_node_cost(&n, s->in, s->out, s->val, &c.flops, &c.read, &c.written), 0);
	return c;
}

static void expect(cost c, double flops, double read, double written)
{
	assert_float_equal(c.flops, flops, 1e-9 * (flops + 1));
	assert_float_equal(c.read, read, 1e-9 * (read + 1));
	assert_float_equal(c.written, written, 1e-9 * (written + 1));
}

static void test_type_sizes(void **state)
{
	(void)state;
	pn_type a = F32(2, 3), s = ty(PN_INT64, 0, NULL), u = F32(2, 3), str = TY(PN_STRING, 4);
	u.dims[1] = -1;
	assert_float_equal(pn_type_bytes(&a), 24, 0);
	assert_float_equal(pn_type_numel(&a), 6, 0);
	assert_float_equal(pn_type_bytes(&s), 8, 0);      /* a scalar is one element */
	assert_float_equal(pn_type_bytes(&u), 0, 0);      /* unknown dim: not counted */
	assert_float_equal(pn_type_numel(&u), 0, 0);
	assert_float_equal(pn_type_bytes(&str), 0, 0);    /* string lengths are unknown */
	a.kind = PN_KIND_SEQUENCE;
	assert_float_equal(pn_type_bytes(&a), 0, 0);
}

/* Conv 3x3, pad 1: 2 * N * Cout * Hout * Wout * Cin * kh * kw; the bias
 * read with the rest. */
static void test_conv(void **state)
{
	(void)state;
	pn_type x = F32(1, 3, 8, 8), w = F32(4, 3, 3, 3), b = F32(4), y = F32(1, 4, 8, 8);
	pn_attr at[] = {INTS("kernel_shape", 3, 3), INTS("pads", 1, 1, 1, 1)};
	node_spec s = {PN_OP_Conv, at, 2, {&x, &w, &b}, 3, {&y}, 1, {0}};
	expect(node_cost(&s), 2.0 * 1 * 4 * 8 * 8 * 3 * 3 * 3, (192 + 108 + 4) * 4, 256 * 4);
}

/* Grouped: each output channel sees Cin/group = 2 input channels; and a
 * depthwise one (group = channels) sees one. */
static void test_conv_grouped(void **state)
{
	(void)state;
	pn_type x = F32(2, 8, 6, 6), w = F32(8, 2, 3, 3), y = F32(2, 8, 4, 4);
	pn_attr at[] = {INT("group", 4), INTS("kernel_shape", 3, 3)};
	node_spec s = {PN_OP_Conv, at, 2, {&x, &w}, 2, {&y}, 1, {0}};
	expect(node_cost(&s), 2.0 * 2 * 8 * 4 * 4 * 2 * 3 * 3, (576 + 144) * 4, 256 * 4);

	pn_type dx = F32(1, 16, 10, 10), dw = F32(16, 1, 3, 3), dy = F32(1, 16, 8, 8);
	pn_attr dat[] = {INT("group", 16)};
	node_spec d = {PN_OP_Conv, dat, 1, {&dx, &dw}, 2, {&dy}, 1, {0}};
	expect(node_cost(&d), 2.0 * 16 * 64 * 9, (1600 + 144) * 4, 1024 * 4);
}

/* ConvTranspose: every input element times (Cout/group) * kh * kw. */
static void test_conv_transpose(void **state)
{
	(void)state;
	pn_type x = F32(1, 4, 5, 5), w = F32(4, 2, 3, 3), y = F32(1, 2, 7, 7);
	node_spec s = {PN_OP_ConvTranspose, NULL, 0, {&x, &w}, 2, {&y}, 1, {0}};
	expect(node_cost(&s), 2.0 * 100 * 2 * 9, (100 + 72) * 4, 98 * 4);
}

/* MatMul with batch broadcast [2,1,4,5] x [3,5,6] -> [2,3,4,6]: six
 * products of 4x5 by 5x6; B is read once. */
static void test_matmul_broadcast(void **state)
{
	(void)state;
	pn_type a = F32(2, 1, 4, 5), b = F32(3, 5, 6), y = F32(2, 3, 4, 6);
	node_spec s = {PN_OP_MatMul, NULL, 0, {&a, &b}, 2, {&y}, 1, {0}};
	expect(node_cost(&s), 2.0 * 6 * 4 * 6 * 5, (40 + 90) * 4, 144 * 4);

	pn_type v = F32(5), m = F32(5, 6), o = F32(6);   /* a 1-D operand */
	node_spec s1 = {PN_OP_MatMul, NULL, 0, {&v, &m}, 2, {&o}, 1, {0}};
	expect(node_cost(&s1), 2.0 * 6 * 5, (5 + 30) * 4, 6 * 4);
}

/* Gemm with transA: A is [K, M] = [5, 3]. */
static void test_gemm(void **state)
{
	(void)state;
	pn_type a = F32(5, 3), b = F32(5, 7), c = F32(7), y = F32(3, 7);
	pn_attr at[] = {INT("transA", 1)};
	node_spec s = {PN_OP_Gemm, at, 1, {&a, &b, &c}, 3, {&y}, 1, {0}};
	expect(node_cost(&s), 2.0 * 3 * 7 * 5, (15 + 35 + 7) * 4, 21 * 4);
}

static void test_pooling(void **state)
{
	(void)state;
	pn_type x = F32(1, 2, 6, 6), y = F32(1, 2, 4, 4), g = F32(1, 2, 1, 1);
	pn_attr at[] = {INTS("kernel_shape", 3, 3)};
	node_spec mp = {PN_OP_MaxPool, at, 1, {&x}, 1, {&y}, 1, {0}};
	expect(node_cost(&mp), 32 * 9, 72 * 4, 32 * 4);
	node_spec ap = {PN_OP_AveragePool, at, 1, {&x}, 1, {&y}, 1, {0}};
	expect(node_cost(&ap), 32 * 9, 72 * 4, 32 * 4);
	node_spec gp = {PN_OP_GlobalAveragePool, NULL, 0, {&x}, 1, {&g}, 1, {0}};
	expect(node_cost(&gp), 72, 72 * 4, 2 * 4);
}

/* Reductions follow the input; Mean adds a division per output. */
static void test_reduction(void **state)
{
	(void)state;
	pn_type x = F32(4, 5, 6), y = F32(4, 1, 6), i = TY(PN_INT64, 4, 1, 6);
	pn_attr at[] = {INTS("axes", 1)};
	node_spec sum = {PN_OP_ReduceSum, at, 1, {&x}, 1, {&y}, 1, {0}};
	expect(node_cost(&sum), 120, 480, 96);
	node_spec mean = {PN_OP_ReduceMean, at, 1, {&x}, 1, {&y}, 1, {0}};
	expect(node_cost(&mean), 120 + 24, 480, 96);
	pn_attr am[] = {INT("axis", 1)};
	node_spec arg = {PN_OP_ArgMax, am, 1, {&x}, 1, {&i}, 1, {0}};
	expect(node_cost(&arg), 120, 480, 24 * 8);
}

/* Broadcasting: one op per output element, each input read once. */
static void test_elementwise_broadcast(void **state)
{
	(void)state;
	pn_type a = F32(3, 1, 5), b = F32(4, 1), y = F32(3, 4, 5), q = TY(PN_BOOL, 3, 4, 5);
	node_spec add = {PN_OP_Add, NULL, 0, {&a, &b}, 2, {&y}, 1, {0}};
	expect(node_cost(&add), 60, (15 + 4) * 4, 240);
	node_spec eq = {PN_OP_Equal, NULL, 0, {&a, &b}, 2, {&q}, 1, {0}};
	expect(node_cost(&eq), 60, (15 + 4) * 4, 60);
	node_spec ex = {PN_OP_Exp, NULL, 0, {&y}, 1, {&y}, 1, {0}};
	expect(node_cost(&ex), 600, 240, 240);   /* a transcendental counts 10 */
	node_spec sum3 = {PN_OP_Sum, NULL, 0, {&y, &a, &b}, 3, {&y}, 1, {0}};
	expect(node_cost(&sum3), 120, (60 + 15 + 4) * 4, 240);
}

/* Pow by a known 2 is one multiply; by an unknown exponent two
 * transcendentals and a multiply. */
static void test_pow(void **state)
{
	(void)state;
	pn_type x = F32(2, 3), e = ty(PN_FLOAT, 0, NULL);
	float two = 2;
	pn_tensor ev = {.dtype = PN_FLOAT, .rank = 0, .numel = 1, .data = &two};
	node_spec known = {PN_OP_Pow, NULL, 0, {&x, &e}, 2, {&x}, 1, {NULL, &ev}};
	expect(node_cost(&known), 6, 28, 24);
	node_spec open = {PN_OP_Pow, NULL, 0, {&x, &e}, 2, {&x}, 1, {0}};
	expect(node_cost(&open), 6 * 21, 28, 24);
}

/* Layout ops move bytes, no FLOPs; Gather reads only the rows it outputs. */
static void test_layout(void **state)
{
	(void)state;
	pn_type x = F32(2, 3), shape = TY(PN_INT64, 2), y = F32(3, 2);
	node_spec r = {PN_OP_Reshape, NULL, 0, {&x, &shape}, 2, {&y}, 1, {0}};
	expect(node_cost(&r), 0, 24 + 16, 24);
	pn_type table = F32(1000, 8), idx = TY(PN_INT64, 4), rows = F32(4, 8);
	node_spec g = {PN_OP_Gather, NULL, 0, {&table, &idx}, 2, {&rows}, 1, {0}};
	expect(node_cost(&g), 0, 32 * 4 + 4 * 8, 32 * 4);
	node_spec sh = {PN_OP_Shape, NULL, 0, {&table}, 1, {&shape}, 1, {0}};
	expect(node_cost(&sh), 0, 0, 16);
}

static void test_einsum_softmax_lstm_topk(void **state)
{
	(void)state;
	pn_type a = F32(2, 3, 4), b = F32(2, 4, 5), y = F32(2, 3, 5);
	pn_attr eq[] = {STR("equation", "bij,bjk->bik")};
	node_spec es = {PN_OP_Einsum, eq, 1, {&a, &b}, 2, {&y}, 1, {0}};
	expect(node_cost(&es), 2.0 * 2 * 3 * 4 * 5, (24 + 40) * 4, 30 * 4);
	pn_attr ell[] = {STR("equation", "...ij,...jk")};
	node_spec ee = {PN_OP_Einsum, ell, 1, {&a, &b}, 2, {&y}, 1, {0}};
	expect(node_cost(&ee), 2.0 * 2 * 3 * 4 * 5, (24 + 40) * 4, 30 * 4);

	pn_type s = F32(2, 10);
	node_spec sm = {PN_OP_Softmax, NULL, 0, {&s}, 1, {&s}, 1, {0}};
	expect(node_cost(&sm), 20 * 14, 80, 80);

	/* seq 5, batch 2, input 3, hidden 4: per step 2*16*3 + 2*16*4 gate
	 * products and 5*10+12 ops per hidden unit. */
	pn_type x = F32(5, 2, 3), w = F32(1, 16, 3), r = F32(1, 16, 4), h = F32(5, 1, 2, 4);
	node_spec ls = {PN_OP_LSTM, NULL, 0, {&x, &w, &r}, 3, {&h}, 1, {0}};
	expect(node_cost(&ls), 5 * 2 * (96 + 128 + 62 * 4), (30 + 48 + 64) * 4, 40 * 4);

	pn_type tx = F32(4, 16), tv = F32(4, 4), ti = TY(PN_INT64, 4, 4), k = TY(PN_INT64, 1);
	node_spec tk = {PN_OP_TopK, NULL, 0, {&tx, &k}, 2, {&tv, &ti}, 2, {0}};
	expect(node_cost(&tk), 64 * 2, 64 * 4 + 8, 16 * 4 + 16 * 8);
}

/* Unknown shapes, sequences and unknown ops never fail: what is unknown
 * costs nothing, what is known is still counted. */
static void test_unknown_never_fails(void **state)
{
	(void)state;
	pn_type x = F32(1, 3, 8, 8), w = F32(4, 3, 3, 3), y = F32(1, 4, 8, 8);
	x.rank = -1;
	node_spec s = {PN_OP_Conv, NULL, 0, {&x, &w}, 2, {&y}, 1, {0}};
	expect(node_cost(&s), 2.0 * 256 * 27, 108 * 4, 256 * 4);   /* W and Y still tell */
	w.dims[0] = -1;
	expect(node_cost(&s), 256, 0, 256 * 4);                     /* the default */

	pn_type seq = F32(2, 2), t = F32(2, 2);
	seq.kind = PN_KIND_SEQUENCE;
	node_spec at = {PN_OP_SequenceAt, NULL, 0, {&seq, NULL}, 2, {&t}, 1, {0}};
	expect(node_cost(&at), 4, 0, 16);

	node_spec unknown = {-1, NULL, 0, {&t, &t}, 2, {&t}, 1, {0}};
	expect(node_cost(&unknown), 4, 32, 16);
	pn_attr bad[] = {STR("equation", "ij,jk,kl->il")};   /* more terms than inputs */
	node_spec es = {PN_OP_Einsum, bad, 1, {&t, &t}, 2, {&t}, 1, {0}};
	expect(node_cost(&es), 4, 32, 16);
}

/* --- a whole graph -------------------------------------------------------------------- */

/* X[2,4] -> MatMul(W[4,3]) -> Add(b[3]) -> Mul(Constant k[1]) = m;
 * Y = Relu(m), Z = m + b (b read twice; two outputs). */
static void test_graph_fused_unfused(void **state)
{
	(void)state;
	builder b;
	builder_init(&b);
	int64_t x_d[] = {2, 4}, w_d[] = {4, 3}, b_d[] = {3}, k_d[] = {1}, h_d[] = {2, 3};
	b.inputs[b.nin++] = vinfo(&b, "X", 2, x_d);
	b.inits[b.ni++] = tensor(&b, "W", 2, w_d);
	b.inits[b.ni++] = tensor(&b, "B", 1, b_d);
	b.inits[b.ni++] = tensor(&b, "unused", 1, b_d);   /* read by no node */
	node(&b, "MatMul", "X,W", "h");
	node(&b, "Add", "h,B", "a");
	Onnx__NodeProto *k = node(&b, "Constant", "", "k");
	Onnx__AttributeProto *val = pn_arena_alloc(&b.a, sizeof(*val));
	Onnx__AttributeProto **attrs = pn_arena_alloc(&b.a, sizeof(void *));
	onnx__attribute_proto__init(val);
	val->name = "value";
	val->has_type = 1;
	val->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
	val->t = tensor(&b, "", 1, k_d);
	attrs[0] = val;
	k->n_attribute = 1;
	k->attribute = attrs;
	node(&b, "Mul", "a,k", "m");
	node(&b, "Relu", "m", "Y");
	node(&b, "Add", "m,B", "Z");
	const char *mid[] = {"h", "a", "m"};
	for (int i = 0; i < 3; i++)
		b.infos[b.ninfo++] = vinfo(&b, mid[i], 2, h_d);
	b.infos[b.ninfo++] = vinfo(&b, "k", 1, k_d);
	b.outputs[b.nout++] = vinfo(&b, "Y", 2, h_d);
	b.outputs[b.nout++] = vinfo(&b, "Z", 2, h_d);
	pn_model *m = load(&b);
	pn_arena_free(&b.a);

	char err[PN_ERRLEN] = "";
	pn_graph_cost gc;
	assert_int_equal(pn_graph_cost_of(m->graph, NULL, &gc, err), 0);
	/* MatMul 2*2*3*4, four elementwise ops of 6, Constant 0. */
	assert_float_equal(gc.flops, 48 + 4 * 6, 0);
	/* Fused: X 32, W 48, B 12 once, k 4, Y 24, Z 24; the unused
	 * initializer and the intermediates h, a, m never leave the kernel. */
	assert_float_equal(gc.bytes_fused, 32 + 48 + 12 + 4 + 24 + 24, 0);
	/* Unfused, node by node: MatMul 32+48+24, Add 24+12+24, Constant 4,
	 * Mul 24+4+24, Relu 24+24, Add 24+12+24. */
	assert_float_equal(gc.bytes_unfused, 104 + 60 + 4 + 52 + 48 + 60, 0);
	assert_int_equal(gc.nodes, 6);

	/* Types from inference instead of value_info: the same figures. */
	pn_infer_result r;
	assert_int_equal(pn_infer_graph(m->graph, NULL, NULL, &r, err), 0);
	pn_type *types = calloc((size_t)r.n, sizeof(pn_type));
	for (int v = 0; v < r.n; v++)
		types[v] = r.v[v].type;
	pn_graph_cost gi;
	assert_int_equal(pn_graph_cost_of(m->graph, types, &gi, err), 0);
	assert_float_equal(gi.flops, gc.flops, 0);
	assert_float_equal(gi.bytes_fused, gc.bytes_fused, 0);
	assert_float_equal(gi.bytes_unfused, gc.bytes_unfused, 0);

	/* A graph input of unknown size costs nothing where it is unknown,
	 * and the call still succeeds. */
	int x = m->graph->inputs[0];
	types[x].dims[0] = -1;
	assert_int_equal(pn_graph_cost_of(m->graph, types, &gi, err), 0);
	assert_float_equal(gi.bytes_fused, gc.bytes_fused - 32, 0);
	free(types);
	pn_infer_result_free(&r);
	pn_model_free(m);
}

/* A graph that only gathers from a table reads the gathered rows, not the
 * table, fused or not; an input only Shape looks at is never read. */
static void test_graph_partial_reads(void **state)
{
	(void)state;
	builder b;
	builder_init(&b);
	int64_t i_d[] = {3}, t_d[] = {100, 4}, x_d[] = {5, 6}, y_d[] = {3, 4}, s_d[] = {2};
	b.inputs[b.nin++] = vinfo_t(&b, "I", PN_INT64, 1, i_d);
	b.inputs[b.nin++] = vinfo(&b, "X", 2, x_d);
	b.inits[b.ni++] = tensor(&b, "T", 2, t_d);
	node(&b, "Gather", "T,I", "Y");
	node(&b, "Shape", "X", "S");
	b.outputs[b.nout++] = vinfo(&b, "Y", 2, y_d);
	b.outputs[b.nout++] = vinfo_t(&b, "S", PN_INT64, 1, s_d);
	pn_model *m = load(&b);
	pn_arena_free(&b.a);
	char err[PN_ERRLEN] = "";
	pn_graph_cost gc;
	assert_int_equal(pn_graph_cost_of(m->graph, NULL, &gc, err), 0);
	assert_float_equal(gc.flops, 0, 0);
	/* I 24, three rows of T 48, X nothing; Y 48, S 16. */
	assert_float_equal(gc.bytes_fused, 24 + 48 + 48 + 16, 0);
	assert_float_equal(gc.bytes_unfused, 24 + 48 + 48 + 16, 0);
	pn_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_type_sizes),
		cmocka_unit_test(test_conv),
		cmocka_unit_test(test_conv_grouped),
		cmocka_unit_test(test_conv_transpose),
		cmocka_unit_test(test_matmul_broadcast),
		cmocka_unit_test(test_gemm),
		cmocka_unit_test(test_pooling),
		cmocka_unit_test(test_reduction),
		cmocka_unit_test(test_elementwise_broadcast),
		cmocka_unit_test(test_pow),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_einsum_softmax_lstm_topk),
		cmocka_unit_test(test_unknown_never_fails),
		cmocka_unit_test(test_graph_fused_unfused),
		cmocka_unit_test(test_graph_partial_reads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
