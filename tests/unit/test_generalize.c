/*
 * test_generalize.c - the batch generalization of fixed-shape models
 * (extract/generalize.c): which models it takes, how it rewrites the
 * constants that encode the batch, and the batch-independence check that
 * judges the result.  Models are built with protobuf-c (onnx_builder.h).
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
#include "extract/generalize.h"
#include "model/onnx.h"
#include "runtime/infer.h"
#include "onnx_builder.h"

static void start(builder *b)
{
	builder_init(b);
}

static void ints_attr(builder *b, Onnx__NodeProto *n, const char *name, int k, const int64_t *v)
{
	Onnx__AttributeProto *a = pn_arena_alloc(&b->a, sizeof(*a));
	Onnx__AttributeProto **all = pn_arena_alloc(&b->a, sizeof(void *) * (n->n_attribute + 1));
	onnx__attribute_proto__init(a);
	a->name = pn_arena_strdup(&b->a, name);
	a->has_type = 1;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
	a->n_ints = (size_t)k;
	a->ints = pn_arena_memdup(&b->a, v, sizeof(int64_t) * (size_t)k);
	if (n->n_attribute)
		memcpy(all, n->attribute, sizeof(void *) * n->n_attribute);
	all[n->n_attribute++] = a;
	n->attribute = all;
}

/* Seeded-looking weights (not all equal, so that a wrong layout shows). */
static Onnx__TensorProto *weights(builder *b, const char *name, int rank, const int64_t *dims)
{
	int64_t n = 1;
	for (int i = 0; i < rank; i++)
		n *= dims[i];
	float *v = pn_arena_alloc(&b->a, sizeof(float) * (size_t)n);
	for (int64_t i = 0; i < n; i++)
		v[i] = (float)((i * 37) % 11) / 11.0f - 0.4f;
	return tensor_of(b, name, rank, dims, v);
}

/* Conv -> Relu -> GlobalAveragePool -> head -> Gemm at a fixed batch, its
 * output declared [batch, 5]; the head is a Reshape to T = [batch, -1]
 * (the batch spelled in a constant) or a Flatten (nothing spells it). */
enum head { RESHAPE, FLATTEN };
static pn_model *classifier_at(int64_t batch, enum head head)
{
	builder b;
	start(&b);
	int64_t x[] = {batch, 3, 8, 8}, w[] = {4, 3, 3, 3}, fc[] = {5, 4}, bias[] = {5}, two[] = {2};
	int64_t target[] = {batch, -1}, y[] = {batch, 5};
	b.inputs[b.nin++] = vinfo(&b, "X", 4, x);
	b.inits[b.ni++] = weights(&b, "W", 4, w);
	b.inits[b.ni++] = weights(&b, "FC", 2, fc);
	b.inits[b.ni++] = weights(&b, "FB", 1, bias);
	node(&b, "Conv", "X,W", "C");
	node(&b, "Relu", "C", "R");
	node(&b, "GlobalAveragePool", "R", "P");
	if (head == RESHAPE) {
		b.inits[b.ni++] = tensor_i64(&b, "T", 1, two, target);
		node(&b, "Reshape", "P,T", "F");
	} else {
		node(&b, "Flatten", "P", "F");
	}
	Onnx__NodeProto *g = node(&b, "Gemm", "F,FC,FB", "Y");
	attr_int(&b, g, "transB", 1);
	b.outputs[b.nout++] = vinfo(&b, "Y", 2, y);
	pn_model *m = load(&b);
	pn_arena_free(&b.a);
	return m;
}

/* (1) Conv -> Relu -> GlobalAveragePool -> Reshape [1,-1] -> Gemm. */
static pn_model *classifier(void)
{
	return classifier_at(1, RESHAPE);
}

static const pn_tensor *data_of(const pn_model *m, const char *name)
{
	int v = pn_graph_find_value(m->graph, name);
	assert_true(v >= 0);
	return m->graph->values[v].data;
}

/* A caller's memory of verdicts (pn_indep_memory) that counts its calls. */
typedef struct memory {
	int knows, asked, learned;
} memory;

static int mem_known(void *ud)
{
	memory *m = ud;
	m->asked++;
	return m->knows;
}

static int mem_learn(void *ud)
{
	((memory *)ud)->learned++;
	return 0;
}

static void test_1_classifier_to_batch_4(void **state)
{
	(void)state;
	pn_model *m = classifier(), *g = classifier();
	char why[PN_ERRLEN] = "";
	int64_t base = 0;
	assert_int_equal(pn_generalize_plan(m, &base, why), 0);
	assert_int_equal(base, 1);
	/* the plan leaves m as it was */
	assert_int_equal(pn_tensor_get_i64(data_of(m, "T"), 0), 1);
	assert_int_equal(m->graph->values[m->graph->inputs[0]].type.dims[0], 1);

	assert_int_equal(pn_generalize_batch(g, 4, why), 0);
	assert_int_equal(pn_tensor_get_i64(data_of(g, "T"), 0), 4);
	assert_int_equal(pn_tensor_get_i64(data_of(g, "T"), 1), -1);
	pn_infer_result r;
	assert_int_equal(pn_infer_graph(g->graph, NULL, NULL, &r, why), 0);
	const pn_type *y = &r.v[g->graph->outputs[0]].type;
	assert_int_equal(y->rank, 2);
	assert_int_equal(y->dims[0], 4);
	assert_int_equal(y->dims[1], 5);
	pn_infer_result_free(&r);

	assert_int_equal(pn_batch_independent(m, g, 4, 11, 1e-5, 1e-6, NULL, why), 0);
	/* a caller's memory is asked, then told of the verdict the runs give */
	memory seen = {0};
	pn_indep_memory mem = {mem_known, mem_learn, &seen};
	assert_int_equal(pn_batch_independent(m, g, 4, 11, 1e-5, 1e-6, &mem, why), 0);
	assert_int_equal(seen.asked, 1);
	assert_int_equal(seen.learned, 1);
	pn_model_free(m);
	pn_model_free(g);
}

/* (2) Reshape [1, 64] baked into the file, read from a Constant node. */
static pn_model *baked_reshape(void)
{
	builder b;
	start(&b);
	int64_t x[] = {1, 4, 4, 4}, two[] = {2}, target[] = {1, 64};
	b.inputs[b.nin++] = vinfo(&b, "X", 4, x);
	Onnx__NodeProto *c = node(&b, "Constant", "", "T");
	Onnx__AttributeProto *a = pn_arena_alloc(&b.a, sizeof(*a));
	onnx__attribute_proto__init(a);
	a->name = "value";
	a->has_type = 1;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
	a->t = tensor_i64(&b, "", 1, two, target);
	c->attribute = pn_arena_memdup(&b.a, &a, sizeof(void *));
	c->n_attribute = 1;
	node(&b, "Reshape", "X,T", "F");
	node(&b, "Sigmoid", "F", "Y");
	b.outputs[b.nout++] = vout(&b, "Y");
	pn_model *m = load(&b);
	pn_arena_free(&b.a);
	return m;
}

static void test_2_baked_reshape_target(void **state)
{
	(void)state;
	pn_model *m = baked_reshape(), *g = baked_reshape();
	char why[PN_ERRLEN] = "";
	const pn_tensor *before = data_of(g, "T");
	assert_int_equal(pn_generalize_batch(g, 3, why), 0);
	const pn_tensor *after = data_of(g, "T");
	assert_ptr_not_equal(before, after);           /* a copy, the old bytes untouched */
	assert_int_equal(pn_tensor_get_i64(before, 0), 1);
	assert_int_equal(pn_tensor_get_i64(after, 0), 3);
	assert_int_equal(pn_tensor_get_i64(after, 1), 64);
	pn_infer_result r;
	assert_int_equal(pn_infer_graph(g->graph, NULL, NULL, &r, why), 0);
	assert_int_equal(r.v[g->graph->outputs[0]].type.dims[0], 3);
	assert_int_equal(r.v[g->graph->outputs[0]].type.dims[1], 64);
	pn_infer_result_free(&r);
	assert_int_equal(pn_batch_independent(m, g, 3, 5, 1e-6, 1e-7, NULL, why), 0);
	pn_model_free(m);
	pn_model_free(g);
}

/* X - ReduceMean(X over axis 0): at batch 1 it is X - X. */
static pn_model *centred(int64_t batch)
{
	builder b;
	start(&b);
	int64_t x[] = {batch, 6};
	b.inputs[b.nin++] = vinfo(&b, "X", 2, x);
	Onnx__NodeProto *r = node(&b, "ReduceMean", "X", "M");
	int64_t axes[] = {0};
	ints_attr(&b, r, "axes", 1, axes);
	node(&b, "Sub", "X,M", "D");
	node(&b, "Relu", "D", "Y");
	b.outputs[b.nout++] = vout(&b, "Y");
	b.opset = 13;
	pn_model *m = load(&b);
	pn_arena_free(&b.a);
	return m;
}

/* The same graph without the mean: what a batch-1 run computes. */
static pn_model *uncentred(void)
{
	builder b;
	start(&b);
	int64_t x[] = {1, 6};
	b.inputs[b.nin++] = vinfo(&b, "X", 2, x);
	node(&b, "Sub", "X,X", "D");
	node(&b, "Relu", "D", "Y");
	b.outputs[b.nout++] = vout(&b, "Y");
	pn_model *m = load(&b);
	pn_arena_free(&b.a);
	return m;
}

static void test_3_mixing_samples(void **state)
{
	(void)state;
	char why[PN_ERRLEN] = "";
	int64_t base = 0;
	/* the plan sees the reduction over the batch */
	pn_model *m = centred(1);
	assert_int_equal(pn_generalize_plan(m, &base, why), 1);
	assert_non_null(strstr(why, "reduces over the batch"));
	assert_int_equal(pn_generalize_batch(m, 2, why), 1);
	pn_model_free(m);
	/* a generalization that mixes samples, handed to the check: sample i of
	 * the batch-2 run is relu(X_i - mean), its batch-1 run relu(X_i - X_i) */
	pn_model *one = uncentred(), *mixed = centred(2);
	assert_int_equal(pn_batch_independent(one, mixed, 2, 3, 1e-5, 1e-6, NULL, why), 1);
	assert_non_null(strstr(why, "output 'Y' sample"));
	/* a refusal is not learned; a memory that knows the form skips the
	 * runs, so its word is the verdict */
	memory unknown = {0}, known = {.knows = 1};
	pn_indep_memory mem = {mem_known, mem_learn, &unknown};
	assert_int_equal(pn_batch_independent(one, mixed, 2, 3, 1e-5, 1e-6, &mem, why), 1);
	assert_int_equal(unknown.asked, 1);
	assert_int_equal(unknown.learned, 0);
	mem.ud = &known;
	assert_int_equal(pn_batch_independent(one, mixed, 2, 3, 1e-5, 1e-6, &mem, why), 0);
	assert_int_equal(known.learned, 0);
	pn_model_free(one);
	pn_model_free(mixed);
}

static void test_4_refused_with_reason(void **state)
{
	(void)state;
	char why[PN_ERRLEN] = "";
	int64_t base = 0;
	builder b;
	start(&b);
	int64_t sym[] = {-1, 3};
	b.inputs[b.nin++] = vinfo(&b, "X", 2, sym);
	node(&b, "Relu", "X", "Y");
	b.outputs[b.nout++] = vout(&b, "Y");
	pn_model *m = load(&b);
	pn_arena_free(&b.a);
	assert_int_equal(pn_generalize_plan(m, &base, why), 1);
	assert_non_null(strstr(why, "has symbolic dims: bound, not generalized"));
	pn_model_free(m);

	start(&b);
	int64_t two[] = {2, 3, 4};
	b.inputs[b.nin++] = vinfo(&b, "X", 3, two);
	node(&b, "Relu", "X", "Y");
	b.outputs[b.nout++] = vout(&b, "Y");
	m = load(&b);
	pn_arena_free(&b.a);
	assert_int_equal(pn_generalize_plan(m, &base, why), 1);
	assert_non_null(strstr(why, "fixes dim 0 at 2"));
	pn_model_free(m);

	/* a MatMul contracting the batch axis (after a Transpose put it last) */
	start(&b);
	int64_t x[] = {1, 4}, w[] = {1, 2};
	b.inputs[b.nin++] = vinfo(&b, "X", 2, x);
	b.inits[b.ni++] = weights(&b, "W", 2, w);
	node(&b, "Transpose", "X", "XT");   /* [4,1]: the batch is last */
	node(&b, "MatMul", "XT,W", "Y");
	b.outputs[b.nout++] = vout(&b, "Y");
	m = load(&b);
	pn_arena_free(&b.a);
	assert_int_equal(pn_generalize_plan(m, &base, why), 1);
	assert_non_null(strstr(why, "MatMul 'n1' contracts the batch axis"));
	pn_model_free(m);
}

static void test_5_deterministic(void **state)
{
	(void)state;
	char why[PN_ERRLEN] = "";
	pn_model *a = classifier(), *b = classifier();
	assert_int_equal(pn_generalize_batch(a, 5, why), 0);
	assert_int_equal(pn_generalize_batch(b, 5, why), 0);
	const pn_graph *ga = a->graph, *gb = b->graph;
	assert_int_equal(ga->n_values, gb->n_values);
	for (int v = 0; v < ga->n_values; v++) {
		const pn_tensor *x = ga->values[v].data, *y = gb->values[v].data;
		assert_int_equal(!x, !y);
		if (x) {
			assert_int_equal(pn_tensor_nbytes(x), pn_tensor_nbytes(y));
			assert_memory_equal(x->data, y->data, pn_tensor_nbytes(x));
		}
		assert_int_equal(ga->values[v].type.rank, gb->values[v].type.rank);
		for (int d = 0; d < ga->values[v].type.rank; d++)
			assert_int_equal(ga->values[v].type.dims[d], gb->values[v].type.dims[d]);
	}
	pn_model_free(a);
	pn_model_free(b);
}

static void assert_types_equal(const pn_graph *a, const pn_graph *b)
{
	assert_int_equal(a->n_values, b->n_values);
	for (int v = 0; v < a->n_values; v++) {
		assert_int_equal(a->values[v].type.rank, b->values[v].type.rank);
		for (int d = 0; d < a->values[v].type.rank; d++)
			assert_int_equal(a->values[v].type.dims[d], b->values[v].type.dims[d]);
	}
}

/* (6) The one-sample form of a fixed batch: m at 4 becomes m at 1 (inputs
 * and declared outputs), and generalized back to 4 it is m again; a model
 * that spells its batch in a constant, mixes its samples or has no batch
 * above 1 has none. */
static void test_6_one_sample(void **state)
{
	(void)state;
	char why[PN_ERRLEN] = "";
	int64_t batch = 0;
	pn_model *m = classifier_at(4, FLATTEN), *one = classifier_at(4, FLATTEN), *seed = classifier_at(1, FLATTEN);
	assert_int_equal(pn_fixed_batch(m->graph), 4);
	assert_int_equal(pn_generalize_one(one, &batch, why), 0);
	assert_int_equal(batch, 4);
	assert_types_equal(one->graph, seed->graph);
	assert_int_equal(pn_generalize_batch(one, 4, why), 0);
	assert_types_equal(one->graph, m->graph);
	pn_model_free(m);
	pn_model_free(one);

	assert_int_equal(pn_fixed_batch(seed->graph), 1);
	assert_int_equal(pn_generalize_one(seed, &batch, why), 1);
	assert_non_null(strstr(why, "no fixed batch above 1"));
	pn_model_free(seed);

	/* the batch spelled in a Reshape target: [4, -1] at batch 1 still says
	 * 4, and the plan reads that 4 as the batch times 4 */
	builder b;
	start(&b);
	int64_t x[] = {4, 4, 4, 4}, two[] = {2}, target[] = {4, -1};
	b.inputs[b.nin++] = vinfo(&b, "X", 4, x);
	b.inits[b.ni++] = tensor_i64(&b, "T", 1, two, target);
	node(&b, "Reshape", "X,T", "F");
	node(&b, "Sigmoid", "F", "Y");
	b.outputs[b.nout++] = vout(&b, "Y");
	pn_model *spelled = load(&b);
	pn_arena_free(&b.a);
	assert_int_equal(pn_generalize_one(spelled, &batch, why), 1);
	assert_non_null(strstr(why, "'T' is a constant that counts the batch"));
	pn_model_free(spelled);

	pn_model *mixed = centred(3);
	assert_int_equal(pn_generalize_one(mixed, &batch, why), 1);
	assert_non_null(strstr(why, "reduces over the batch"));
	pn_model_free(mixed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_1_classifier_to_batch_4),
		cmocka_unit_test(test_2_baked_reshape_target),
		cmocka_unit_test(test_3_mixing_samples),
		cmocka_unit_test(test_4_refused_with_reason),
		cmocka_unit_test(test_5_deterministic),
		cmocka_unit_test(test_6_one_sample),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
