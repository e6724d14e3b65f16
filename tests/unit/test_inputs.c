/*
 * test_inputs.c - the shapes and values a subgraph is run on
 * (pn_concrete_input_types, pn_input_for): unknown dims take the shape a
 * model's run showed, else one assumed size bounded by an element budget;
 * float inputs are drawn in their recorded range, else in [0.1, 1.1);
 * small integer inputs recorded by value are fed as they were; integer
 * and bool inputs follow what they mean (runtime/inputs.c's rule table),
 * read from the graph alone, without names to go by.
 *
 * The graphs are ONNX models built with protobuf-c (onnx_builder.h) and
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
#include "runtime/inputs.h"
#include "runtime/session.h"
#include "model/onnx.h"
#include "onnx_builder.h"

/* One input per spec: dims < 0 are left unknown (a dim_param). */
typedef struct in_spec {
	const char *name;
	int rank;
	int64_t dims[4];
	int dtype;   /* 0: float */
} in_spec;

/* A model whose graph has the given inputs, each passed through Relu. */
static pn_model *model_of(const in_spec *specs, int n)
{
	builder b;
	builder_init(&b);
	for (int i = 0; i < n; i++) {
		const in_spec *sp = &specs[i];
		int dtype = sp->dtype ? sp->dtype : PN_FLOAT;
		char out[8];
		snprintf(out, sizeof out, "y%d", i);
		b.inputs[b.nin++] = vinfo_t(&b, sp->name, dtype, sp->rank, sp->dims);
		node(&b, "Relu", sp->name, out);
		b.outputs[b.nout++] = vinfo_t(&b, out, dtype, sp->rank, sp->dims);
	}
	pn_model *m = load(&b);
	pn_arena_free(&b.a);
	return m;
}

static void assert_dims(const pn_type *t, int rank, const int64_t *dims)
{
	assert_int_equal(t->rank, rank);
	for (int i = 0; i < rank; i++)
		assert_int_equal(t->dims[i], dims[i]);
}

/* Nothing seen: every unknown dim is PN_ASSUMED_DIM while the inputs stay
 * small. */
static void test_assumed_size(void **state)
{
	(void)state;
	in_spec s[] = {{"boxes", 2, {-1, 4}, PN_FLOAT}, {"scores", 1, {-1}, PN_FLOAT}};
	pn_model *m = model_of(s, 2);
	pn_type out[2];
	int64_t size = 0;
	char err[PN_ERRLEN];
	assert_int_equal(pn_concrete_input_types(m->graph, NULL, 0, out, &size, err), 2);
	assert_int_equal(size, PN_ASSUMED_DIM);
	assert_dims(&out[0], 2, (int64_t[]){100, 4});
	assert_dims(&out[1], 1, (int64_t[]){100});
	pn_model_free(m);
}

/* An RoI head's [?,256,?,?]: 100^3 x 256 elements is far over the budget,
 * so the one size halves to 12 (12^3 x 256 = 442368 <= 2^20 < 25^3 x 256). */
static void test_assumed_size_bounded(void **state)
{
	(void)state;
	in_spec s[] = {{"rois", 4, {-1, 256, -1, -1}, PN_FLOAT}, {"n", 1, {-1}, PN_FLOAT}};
	pn_model *m = model_of(s, 2);
	pn_type out[2];
	int64_t size = 0;
	char err[PN_ERRLEN];
	assert_int_equal(pn_concrete_input_types(m->graph, NULL, 0, out, &size, err), 4);
	assert_int_equal(size, 12);
	assert_dims(&out[0], 4, (int64_t[]){12, 256, 12, 12});
	assert_dims(&out[1], 1, (int64_t[]){12});
	pn_model_free(m);
}

/* A run's shapes fill the unknown dims, nothing is assumed; a seen shape of
 * another rank is ignored. */
static void test_seen_shapes(void **state)
{
	(void)state;
	in_spec s[] = {{"rois", 4, {-1, 256, -1, -1}, PN_FLOAT}, {"k", 2, {-1, 3}, PN_FLOAT}};
	pn_model *m = model_of(s, 2);
	pn_range seen[2] = {{.rank = 4, .dims = {7, 256, 14, 14}}, {.rank = 3, .dims = {5, 3, 1}}};
	pn_type out[2];
	int64_t size = 0;
	char err[PN_ERRLEN];
	assert_int_equal(pn_concrete_input_types(m->graph, seen, 2, out, &size, err), 1);
	assert_dims(&out[0], 4, (int64_t[]){7, 256, 14, 14});
	assert_dims(&out[1], 2, (int64_t[]){size, 3});
	/* a count that does not match the inputs is not used at all */
	assert_int_equal(pn_concrete_input_types(m->graph, seen, 1, out, &size, err), 4);
	pn_model_free(m);
}

/* Floats are drawn in the recorded range, else in [0.1, 1.1). */
static void test_input_ranges(void **state)
{
	(void)state;
	in_spec s[] = {{"x", 2, {64, 64}, PN_FLOAT}};
	pn_model *m = model_of(s, 1);
	const pn_graph *g = m->graph;
	const pn_type *ty = &g->values[g->inputs[0]].type;
	char err[PN_ERRLEN];
	pn_range r = {.lo = -3.0, .hi = -2.5, .known = 1, .rank = -1};
	pn_tensor *a = pn_input_for(g, 0, ty, 7, &r, err);
	pn_tensor *b = pn_input_for(g, 0, ty, 7, NULL, err);
	pn_range unknown = {.known = 0, .rank = -1};
	pn_tensor *c = pn_input_for(g, 0, ty, 7, &unknown, err);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	double amin = 1e9, amax = -1e9;
	for (int64_t i = 0; i < a->numel; i++) {
		double x = pn_tensor_get_f64(a, i), y = pn_tensor_get_f64(b, i);
		amin = x < amin ? x : amin;
		amax = x > amax ? x : amax;
		assert_true(y >= 0.1 && y < 1.1 + 1e-6);
		assert_true(y == pn_tensor_get_f64(c, i));   /* unknown = no range */
	}
	assert_true(amin >= -3.0 && amax <= -2.5);
	assert_true(amax - amin > 0.45);   /* spread over the range, not a constant */
	pn_tensor_free(a);
	pn_tensor_free(b);
	pn_tensor_free(c);
	pn_model_free(m);
}

/* A small integer input recorded by value (a shape computed upstream) is
 * fed as it was; without a record, by what reads it. */
static void test_input_ints(void **state)
{
	(void)state;
	in_spec s[] = {{"shape", 1, {3}, PN_INT64}};
	pn_model *m = model_of(s, 1);
	const pn_graph *g = m->graph;
	const pn_type *ty = &g->values[g->inputs[0]].type;
	char err[PN_ERRLEN];
	pn_range r = {.rank = 1, .dims = {3}, .n_ints = 3, .ints = {1, 769, 4}};
	pn_tensor *a = pn_input_for(g, 0, ty, 7, &r, err);
	assert_non_null(a);
	assert_int_equal(a->dtype, PN_INT64);
	const int64_t *v = a->data;
	assert_int_equal(v[0], 1);
	assert_int_equal(v[1], 769);
	assert_int_equal(v[2], 4);
	r.n_ints = 2;   /* a record of another size is not used */
	pn_tensor *b = pn_input_for(g, 0, ty, 7, &r, err);
	const int64_t *w = b->data;
	assert_true(w[1] >= 0 && w[1] < 4);
	pn_tensor_free(a);
	pn_tensor_free(b);
	pn_model_free(m);
}

/* A model whose inputs mean something only the graph says (their names say
 * nothing): a limit of a Range through ReduceMax (lengths), a Where's
 * condition (a mask), a Gather's indices into 5 rows (token ids), a scalar
 * compared with 7 (a rate). */
static pn_model *meaning_model(void)
{
	builder b;
	builder_init(&b);
	int64_t xd[] = {-1, -1, 4}, ad[] = {-1}, cd[] = {-1, -1}, ed[] = {5, 4}, one[] = {1};
	int64_t zero = 0, step = 1, seven = 7;
	b.inputs[b.nin++] = vinfo_t(&b, "x", PN_FLOAT, 3, xd);
	b.inputs[b.nin++] = vinfo_t(&b, "a", PN_INT64, 1, ad);
	b.inputs[b.nin++] = vinfo_t(&b, "c", PN_BOOL, 2, cd);
	b.inputs[b.nin++] = vinfo_t(&b, "t", PN_INT64, 2, cd);
	b.inputs[b.nin++] = vinfo_t(&b, "k", PN_INT64, 0, one);
	b.inits[b.ni++] = tensor_i64(&b, "zero", 0, one, &zero);
	b.inits[b.ni++] = tensor_i64(&b, "step", 0, one, &step);
	b.inits[b.ni++] = tensor_i64(&b, "seven", 0, one, &seven);
	b.inits[b.ni++] = tensor(&b, "emb", 2, ed);
	attr_int(&b, node(&b, "ReduceMax", "a", "amax"), "keepdims", 0);
	node(&b, "Range", "zero,amax,step", "r");
	node(&b, "ReduceSum", "x", "xs");
	node(&b, "Where", "c,xs,xs", "w");
	node(&b, "Gather", "emb,t", "e");
	node(&b, "Equal", "k,seven", "q");
	const char *outs[] = {"r", "w", "e", "q"};
	for (int i = 0; i < 4; i++)
		b.outputs[b.nout++] = vout(&b, outs[i]);
	pn_model *m = load(&b);
	pn_arena_free(&b.a);
	return m;
}

static void test_input_meanings(void **state)
{
	(void)state;
	pn_model *m = meaning_model();
	assert_non_null(m);
	const pn_graph *g = m->graph;
	assert_int_equal(pn_input_meaning(g, 0), PN_IM_NONE);
	assert_int_equal(pn_input_meaning(g, 1), PN_IM_LENGTHS);
	assert_int_equal(pn_input_meaning(g, 2), PN_IM_MASK);
	assert_int_equal(pn_input_meaning(g, 3), PN_IM_TOKENS);
	assert_int_equal(pn_input_meaning(g, 4), PN_IM_RATE);
	int axis = -1;
	assert_int_equal(pn_lengths_described(g, 1, NULL, &axis), 0);
	assert_int_equal(axis, 1);
	assert_int_equal(pn_lengths_traced(g, 1), 0);   /* a Range, not a baked arange */
	pn_type types[5];
	for (int i = 0; i < 5; i++)
		types[i] = g->values[g->inputs[i]].type;
	int64_t dims[][3] = {{2, 6, 4}, {2}, {2, 6}, {2, 6}, {0}};
	for (int i = 0; i < 4; i++)
		memcpy(types[i].dims, dims[i], sizeof(int64_t) * (size_t)types[i].rank);
	pn_tensor *in[5];
	char err[PN_ERRLEN];
	assert_int_equal(pn_model_inputs(g, types, 7, in, err), 0);
	for (int64_t i = 0; i < in[1]->numel; i++)
		assert_int_equal(pn_tensor_get_f64(in[1], i), 6);   /* x's sequence */
	int seen[5] = {0};
	for (int64_t i = 0; i < in[3]->numel; i++) {
		double id = pn_tensor_get_f64(in[3], i);
		assert_true(id >= 0 && id < 5);
		seen[(int)id] = 1;
		double c = pn_tensor_get_f64(in[2], i);
		assert_true(c == 0 || c == 1);
	}
	assert_true(seen[0] + seen[1] + seen[2] + seen[3] + seen[4] >= 3);   /* spread */
	assert_int_equal(pn_tensor_get_f64(in[4], 0), 7);
	for (int i = 0; i < 5; i++)
		pn_tensor_free(in[i]);
	pn_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_assumed_size),
		cmocka_unit_test(test_assumed_size_bounded),
		cmocka_unit_test(test_seen_shapes),
		cmocka_unit_test(test_input_ranges),
		cmocka_unit_test(test_input_ints),
		cmocka_unit_test(test_input_meanings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
