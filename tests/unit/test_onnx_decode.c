/*
 * test_onnx_decode.c - model/onnx_decode.c refuses what ONNX does not allow
 * and what, stored, made subgraphs that do not survive their canonical
 * bytes (tests/cli/hostile_inputs.sh found each in damaged files): a node
 * without an op type, a node of a domain the model does not import, an
 * attribute without a type or of a type onnx.proto does not define.  Each
 * is one error naming the node or attribute; the same model made valid
 * loads.  And pn_json_str keeps its output valid JSON whatever bytes a name
 * holds.
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
#include "common/util.h"
#include "model/onnx.h"

/* One Relu Y = Relu(X) on float [2], opset 17, with the node as the test
 * leaves it; a second import of domain "custom" when custom_import. */
typedef struct one_node {
	Onnx__NodeProto node;
	Onnx__AttributeProto attr, *attrs[1];
	char *in[1], *out[1];
	int custom_import;
} one_node;

static void one_node_init(one_node *t)
{
	memset(t, 0, sizeof *t);
	onnx__node_proto__init(&t->node);
	t->node.op_type = "Relu";
	t->node.name = "relu0";
	t->in[0] = "X";
	t->out[0] = "Y";
	t->node.n_input = 1;
	t->node.input = t->in;
	t->node.n_output = 1;
	t->node.output = t->out;
}

/* pn_model_load's status for the model; its error in err. */
static int load_one(one_node *t, char *err)
{
	Onnx__TensorShapeProto__Dimension d = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT, *dp = &d;
	d.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
	d.dim_value = 2;
	Onnx__TensorShapeProto shape = ONNX__TENSOR_SHAPE_PROTO__INIT;
	shape.n_dim = 1;
	shape.dim = &dp;
	Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT;
	tt.has_elem_type = 1;
	tt.elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	tt.shape = &shape;
	Onnx__TypeProto type = ONNX__TYPE_PROTO__INIT;
	type.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	type.tensor_type = &tt;
	Onnx__ValueInfoProto x = ONNX__VALUE_INFO_PROTO__INIT, y = ONNX__VALUE_INFO_PROTO__INIT;
	Onnx__ValueInfoProto *xp = &x, *yp = &y;
	x.name = "X";
	x.type = &type;
	y.name = "Y";
	y.type = &type;
	Onnx__NodeProto *np = &t->node;
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	g.name = "g";
	g.n_node = 1;
	g.node = &np;
	g.n_input = 1;
	g.input = &xp;
	g.n_output = 1;
	g.output = &yp;
	Onnx__OperatorSetIdProto onnx = ONNX__OPERATOR_SET_ID_PROTO__INIT;
	Onnx__OperatorSetIdProto custom = ONNX__OPERATOR_SET_ID_PROTO__INIT;
	Onnx__OperatorSetIdProto *ops[2] = {&onnx, &custom};
	onnx.has_version = 1;
	onnx.version = 17;
	custom.domain = "custom";
	custom.has_version = 1;
	custom.version = 1;
	Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
	mp.has_ir_version = 1;
	mp.ir_version = 8;
	mp.n_opset_import = t->custom_import ? 2 : 1;
	mp.opset_import = ops;
	mp.graph = &g;
	size_t len = onnx__model_proto__get_packed_size(&mp);
	uint8_t *bytes = malloc(len);
	onnx__model_proto__pack(&mp, bytes);
	pn_model *m = NULL;
	int rc = pn_model_load(bytes, len, NULL, 0, &m, err);
	free(bytes);
	if (!rc)
		pn_model_free(m);
	return rc;
}

static void expect_refused(one_node *t, const char *why)
{
	char err[PN_ERRLEN] = "";
	assert_int_not_equal(load_one(t, err), 0);
	if (!strstr(err, why))
		fail_msg("expected '%s' in: %s", why, err);
}

/* 1: the valid model loads (the cases below differ from it by one field) */
static void test_valid_loads(void **state)
{
	(void)state;
	one_node t;
	one_node_init(&t);
	char err[PN_ERRLEN] = "";
	assert_int_equal(load_one(&t, err), 0);
}

/* 2: no op type, or an empty one */
static void test_node_without_op_type(void **state)
{
	(void)state;
	one_node t;
	one_node_init(&t);
	t.node.op_type = NULL;
	expect_refused(&t, "node 'relu0' has no op_type");
	t.node.op_type = "";
	expect_refused(&t, "node 'relu0' has no op_type");
}

/* 3: a domain without an opset import; with the import it decodes (an op
 * passnet does not know is not an error when the model is read) */
static void test_domain_not_imported(void **state)
{
	(void)state;
	one_node t;
	one_node_init(&t);
	t.node.domain = "custom";
	expect_refused(&t, "node 'relu0' (Relu): domain 'custom' has no opset import");
	t.custom_import = 1;
	char err[PN_ERRLEN] = "";
	assert_int_equal(load_one(&t, err), 0);
}

/* 4: an attribute without a type, or of type 99 */
static void test_attribute_types(void **state)
{
	(void)state;
	one_node t;
	one_node_init(&t);
	onnx__attribute_proto__init(&t.attr);
	t.attr.name = "alpha";
	t.attrs[0] = &t.attr;
	t.node.n_attribute = 1;
	t.node.attribute = t.attrs;
	expect_refused(&t, "attribute 'alpha' has no type");
	t.attr.has_type = 1;
	t.attr.type = (Onnx__AttributeProto__AttributeType)99;
	expect_refused(&t, "attribute 'alpha' has unknown type 99");
	t.attr.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
	char err[PN_ERRLEN] = "";
	assert_int_equal(load_one(&t, err), 0);
}

static char *json_of(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	pn_json_str(f, s);
	fclose(f);
	return buf;
}

/* 5: well-formed UTF-8 (2, 3 and 4 bytes) is kept; each byte that starts
 * no well-formed sequence (a stray continuation byte, a truncated
 * sequence, an overlong form, a surrogate) becomes a U+FFFD escape;
 * control characters are escaped */
static void test_json_str_utf8(void **state)
{
	(void)state;
	char *j = json_of("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	assert_string_equal(j, "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
	free(j);
	j = json_of("a\x80" "b\xc3" "c\xc0\xaf" "d\xed\xa0\x80" "e\x01");
	assert_string_equal(j, "\"a\\ufffdb\\ufffdc\\ufffd\\ufffdd\\ufffd\\ufffd\\ufffde\\u0001\"");
	free(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_loads),
		cmocka_unit_test(test_node_without_op_type),
		cmocka_unit_test(test_domain_not_imported),
		cmocka_unit_test(test_attribute_types),
		cmocka_unit_test(test_json_str_utf8),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
