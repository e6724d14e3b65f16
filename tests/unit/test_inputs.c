/*
 * test_inputs.c - the shapes and values a subgraph is run on
 * (pn_concrete_input_types, pn_input_for): unknown dims take the shape a
 * model's run showed, else one assumed size bounded by an element budget;
 * float inputs are drawn in their recorded range, else in [0.1, 1.1);
 * small integer inputs recorded by value are fed as they were.
 *
 * The graphs are ONNX models built with protobuf-c and decoded like any
 * model file.
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
#include "exec/exec.h"
#include "extract/onnx.h"

/* One input per spec: dims < 0 are left unknown (a dim_param). */
typedef struct in_spec {
	const char *name;
	int rank;
	int64_t dims[4];
	int dtype;   /* 0: float */
} in_spec;

static Onnx__ValueInfoProto *input_info(const in_spec *s)
{
	Onnx__ValueInfoProto *vi = calloc(1, sizeof(*vi));
	Onnx__TypeProto *tp = calloc(1, sizeof(*tp));
	Onnx__TypeProto__Tensor *tt = calloc(1, sizeof(*tt));
	Onnx__TensorShapeProto *sh = calloc(1, sizeof(*sh));
	Onnx__TensorShapeProto__Dimension **d = calloc(4, sizeof(*d));
	onnx__value_info_proto__init(vi);
	onnx__type_proto__init(tp);
	onnx__type_proto__tensor__init(tt);
	onnx__tensor_shape_proto__init(sh);
	for (int i = 0; i < s->rank; i++) {
		d[i] = calloc(1, sizeof(**d));
		onnx__tensor_shape_proto__dimension__init(d[i]);
		if (s->dims[i] >= 0) {
			d[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d[i]->dim_value = s->dims[i];
		} else {
			d[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
			d[i]->dim_param = (char *)"n";   /* a name, but the same one for all: unbound */
		}
	}
	sh->n_dim = (size_t)s->rank;
	sh->dim = d;
	tt->has_elem_type = 1;
	tt->elem_type = s->dtype ? s->dtype : PN_FLOAT;
	tt->shape = sh;
	tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp->tensor_type = tt;
	vi->name = (char *)s->name;
	vi->type = tp;
	return vi;
}

static void free_info(Onnx__ValueInfoProto *vi, int rank)
{
	Onnx__TensorShapeProto *sh = vi->type->tensor_type->shape;
	for (int i = 0; i < rank; i++)
		free(sh->dim[i]);
	free(sh->dim);
	free(sh);
	free(vi->type->tensor_type);
	free(vi->type);
	free(vi);
}

/* A model whose graph has the given inputs, each passed through Relu. */
static pn_model *model_of(const in_spec *specs, int n)
{
	Onnx__ValueInfoProto *ins[4], *outs[4];
	Onnx__NodeProto nodes[4], *np[4];
	char *node_in[4][1], *node_out[4][1], out_names[4][8];
	for (int i = 0; i < n; i++) {
		ins[i] = input_info(&specs[i]);
		snprintf(out_names[i], sizeof out_names[i], "y%d", i);
		in_spec o = specs[i];
		o.name = out_names[i];
		outs[i] = input_info(&o);
		onnx__node_proto__init(&nodes[i]);
		nodes[i].op_type = (char *)"Relu";
		node_in[i][0] = (char *)specs[i].name;
		node_out[i][0] = out_names[i];
		nodes[i].n_input = nodes[i].n_output = 1;
		nodes[i].input = node_in[i];
		nodes[i].output = node_out[i];
		np[i] = &nodes[i];
	}
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT, *osp = &os;
	os.has_version = 1;
	os.version = 17;
	g.name = (char *)"g";
	g.n_node = (size_t)n;
	g.node = np;
	g.n_input = g.n_output = (size_t)n;
	g.input = ins;
	g.output = outs;
	mp.has_ir_version = 1;
	mp.ir_version = 8;
	mp.n_opset_import = 1;
	mp.opset_import = &osp;
	mp.graph = &g;
	size_t len = onnx__model_proto__get_packed_size(&mp);
	uint8_t *bytes = malloc(len);
	onnx__model_proto__pack(&mp, bytes);
	for (int i = 0; i < n; i++) {
		free_info(ins[i], specs[i].rank);
		free_info(outs[i], specs[i].rank);
	}
	pn_model *m = NULL;
	char err[PN_ERRLEN] = "";
	int rc = pn_model_load(bytes, len, NULL, 0, &m, err);
	free(bytes);
	if (rc)
		fail_msg("model: %s", err);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_assumed_size),
		cmocka_unit_test(test_assumed_size_bounded),
		cmocka_unit_test(test_seen_shapes),
		cmocka_unit_test(test_input_ranges),
		cmocka_unit_test(test_input_ints),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
