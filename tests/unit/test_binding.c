/*
 * test_binding.c - roles of model inputs and kinds of their symbolic dims
 * (extract/roles.c), the names of unnamed dims, and the base binding
 * pn_binding_choose gives, with --dim values and the graph's stride.
 *
 * Models are built with protobuf-c (onnx_builder.h); the CLI test
 * tests/cli/binding.sh covers the search and the record.
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
#include "extract/binding.h"
#include "model/onnx.h"
#include "runtime/infer.h"
#include "onnx_builder.h"

/* Names the dims of vi from a comma list: "" leaves a dim unnamed, "=" keeps
 * it as built (static dims stay static). */
static void name_dims(builder *b, Onnx__ValueInfoProto *vi, const char *csv)
{
	Onnx__TensorShapeProto *sh = vi->type->tensor_type->shape;
	const char *p = csv;
	for (size_t i = 0; i < sh->n_dim && p; i++) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l == 0) {
			sh->dim[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE__NOT_SET;
		} else if (strncmp(p, "=", l)) {
			sh->dim[i]->dim_param = pn_arena_strndup(&b->a, p, l);
		}
		p = e ? e + 1 : NULL;
	}
}

static void attr_ints2(builder *b, Onnx__NodeProto *n, const char *name, int64_t v)
{
	Onnx__AttributeProto *a = pn_arena_alloc(&b->a, sizeof(*a));
	Onnx__AttributeProto **all = pn_arena_alloc(&b->a, sizeof(void *) * (n->n_attribute + 1));
	int64_t *ints = pn_arena_alloc(&b->a, sizeof(int64_t) * 2);
	onnx__attribute_proto__init(a);
	ints[0] = ints[1] = v;
	a->name = pn_arena_strdup(&b->a, name);
	a->has_type = 1;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
	a->n_ints = 2;
	a->ints = ints;
	if (n->n_attribute)
		memcpy(all, n->attribute, sizeof(void *) * n->n_attribute);
	all[n->n_attribute++] = a;
	n->attribute = all;
}

static void start(builder *b)
{
	builder_init(b);
}

static pn_model *finish(builder *b)
{
	pn_model *m = load(b);
	pn_arena_free(&b->a);
	return m;
}

/* An NCHW and an NHWC image, token ids read by an embedding Gather and an
 * attention mask. */
static void test_roles_image_tokens(void **state)
{
	(void)state;
	builder b;
	start(&b);
	b.inputs[b.nin++] = vinfo(&b, "img", 4, (int64_t[]){-1, 3, -1, -1});
	name_dims(&b, b.inputs[0], "N,=,H,W");
	b.inputs[b.nin++] = vinfo(&b, "nhwc", 4, (int64_t[]){-1, -1, -1, 3});
	name_dims(&b, b.inputs[1], ",,,=");
	b.inputs[b.nin++] = vinfo_t(&b, "ids", PN_INT64, 2, (int64_t[]){-1, -1});
	name_dims(&b, b.inputs[2], "batch,seq");
	b.inputs[b.nin++] = vinfo_t(&b, "attention_mask", PN_INT64, 2, (int64_t[]){-1, -1});
	name_dims(&b, b.inputs[3], "batch,seq");
	b.inits[b.ni++] = tensor(&b, "emb", 2, (int64_t[]){10, 4});
	node(&b, "Relu", "img", "a");
	node(&b, "Relu", "nhwc", "c");
	node(&b, "Gather", "emb,ids", "e");
	node(&b, "Identity", "attention_mask", "f");
	b.outputs[b.nout++] = vinfo(&b, "a", 4, (int64_t[]){-1, 3, -1, -1});
	pn_model *m = finish(&b);
	const pn_graph *g = m->graph;
	assert_int_equal(pn_input_role(g, 0), PN_IR_IMAGE_NCHW);
	assert_int_equal(pn_dim_kind(g, 0, PN_IR_IMAGE_NCHW, 0), PN_DK_BATCH);
	assert_int_equal(pn_dim_kind(g, 0, PN_IR_IMAGE_NCHW, 3), PN_DK_SPATIAL);
	assert_int_equal(pn_input_role(g, 1), PN_IR_IMAGE_NHWC);
	assert_int_equal(pn_dim_kind(g, 1, PN_IR_IMAGE_NHWC, 2), PN_DK_SPATIAL);
	assert_int_equal(pn_input_role(g, 2), PN_IR_TOKENS);
	assert_int_equal(pn_dim_kind(g, 2, PN_IR_TOKENS, 1), PN_DK_SEQUENCE);
	assert_int_equal(pn_input_role(g, 3), PN_IR_MASK);

	pn_binding bd;
	char err[PN_ERRLEN];
	assert_int_equal(pn_binding_choose(m, NULL, NULL, &m->arena, &bd, err), 0);
	assert_string_equal(bd.how, "rule");
	/* N, H, W, nhwc:0..2, batch, seq in input order */
	const char *names[] = {"N", "H", "W", "nhwc:0", "nhwc:1", "nhwc:2", "batch", "seq"};
	const int64_t values[] = {1, 224, 224, 1, 224, 224, 1, 128};
	assert_int_equal(bd.bind.n, 8);
	for (int i = 0; i < 8; i++) {
		assert_string_equal(bd.bind.names[i], names[i]);
		assert_int_equal(bd.bind.values[i], values[i]);
	}
	assert_int_equal(bd.n_roles, 4);
	assert_string_equal(bd.roles[1], "nhwc=image NHWC");
	pn_model_free(m);
}

/* A recurrent state and a sample-rate scalar are told apart from data; a
 * [1] integer named steps (Slice's operand) configures nothing. */
static void test_roles_state_scalar(void **state)
{
	(void)state;
	builder b;
	start(&b);
	b.inputs[b.nin++] = vinfo(&b, "input", 2, (int64_t[]){-1, -1});
	name_dims(&b, b.inputs[0], "batch,sequence");
	b.inputs[b.nin++] = vinfo(&b, "state", 3, (int64_t[]){2, -1, 128});
	name_dims(&b, b.inputs[1], "=,batch,=");
	b.inputs[b.nin++] = vinfo_t(&b, "sr", PN_INT64, 0, NULL);
	b.inputs[b.nin++] = vinfo_t(&b, "steps", PN_INT64, 1, (int64_t[]){1});
	node(&b, "Relu", "input", "a");
	node(&b, "Relu", "state", "c");
	node(&b, "Identity", "sr", "d");
	node(&b, "Identity", "steps", "e");
	b.outputs[b.nout++] = vinfo(&b, "a", 2, (int64_t[]){-1, -1});
	pn_model *m = finish(&b);
	const pn_graph *g = m->graph;
	assert_int_equal(pn_input_role(g, 0), PN_IR_AUDIO);
	assert_int_equal(pn_dim_kind(g, 0, PN_IR_AUDIO, 1), PN_DK_SAMPLES);
	assert_int_equal(pn_input_role(g, 1), PN_IR_STATE);
	assert_int_equal(pn_input_role(g, 2), PN_IR_CONFIG);
	assert_int_equal(pn_input_role(g, 3), PN_IR_NONE);

	pn_binding bd;
	char err[PN_ERRLEN];
	assert_int_equal(pn_binding_choose(m, NULL, NULL, &m->arena, &bd, err), 0);
	assert_string_equal(bd.how, "rule");
	assert_int_equal(bd.bind.n, 3);
	assert_string_equal(bd.bind.names[0], "batch");
	assert_int_equal(bd.bind.values[0], 1);
	assert_string_equal(bd.bind.names[1], "sequence");
	assert_int_equal(bd.bind.values[1], 16000);
	assert_string_equal(bd.bind.names[2], "sr");
	assert_int_equal(bd.bind.values[2], 16000);
	pn_model_free(m);
}

/* Unnamed dims are bound as INPUT:AXIS, by the rule and by --dim. */
static void test_unnamed_dims(void **state)
{
	(void)state;
	builder b;
	start(&b);
	b.inputs[b.nin++] = vinfo(&b, "x", 2, (int64_t[]){-1, -1});
	name_dims(&b, b.inputs[0], ",");
	node(&b, "Relu", "x", "y");
	b.outputs[b.nout++] = vinfo(&b, "y", 2, (int64_t[]){-1, -1});
	pn_model *m = finish(&b);
	const pn_graph *g = m->graph;
	char buf[64];
	assert_string_equal(pn_dim_bind_name("x", &g->values[g->inputs[0]].type, 1, buf, sizeof buf),
			    "x:1");

	const char *gn[] = {"x:1", "unused"};
	int64_t gv[] = {300, 7};
	pn_dimbind given = {2, gn, gv};
	pn_binding bd;
	char err[PN_ERRLEN];
	assert_int_equal(pn_binding_choose(m, &given, NULL, &m->arena, &bd, err), 0);
	assert_string_equal(bd.how, "rule, with --dim");
	assert_int_equal(bd.bind.n, 2);   /* "unused" is not this model's */
	assert_string_equal(bd.bind.names[0], "x:1");
	assert_string_equal(bd.bind.names[1], "x:0");
	pn_infer_result r;
	assert_int_equal(pn_infer_graph(g, &bd.bind, NULL, &r, err), 0);
	const pn_type *t = &r.v[g->outputs[0]].type;
	assert_int_equal(t->dims[0], 1);
	assert_int_equal(t->dims[1], 300);
	pn_infer_result_free(&r);
	pn_model_free(m);
}

/* Six stride-2 pools make a stride of 64, which 224 is not a multiple of:
 * the spatial base rounds up to 256.  A static model has nothing to bind. */
static void test_stride_base(void **state)
{
	(void)state;
	builder b;
	start(&b);
	b.inputs[b.nin++] = vinfo(&b, "x", 4, (int64_t[]){-1, 3, -1, -1});
	name_dims(&b, b.inputs[0], "N,=,H,W");
	const char *chain[] = {"x", "p1", "p2", "p3", "p4", "p5", "p6"};
	for (int i = 0; i < 6; i++) {
		Onnx__NodeProto *n = node(&b, "MaxPool", chain[i], chain[i + 1]);
		attr_ints2(&b, n, "kernel_shape", 2);
		attr_ints2(&b, n, "strides", 2);
	}
	b.outputs[b.nout++] = vinfo(&b, "p6", 4, (int64_t[]){-1, 3, -1, -1});
	pn_model *m = finish(&b);
	assert_int_equal(pn_graph_stride(m->graph), 64);
	pn_binding bd;
	char err[PN_ERRLEN];
	assert_int_equal(pn_binding_choose(m, NULL, NULL, &m->arena, &bd, err), 0);
	assert_string_equal(bd.how, "rule");
	assert_int_equal(bd.bind.values[1], 256);
	assert_int_equal(bd.bind.values[2], 256);
	pn_model_free(m);

	start(&b);
	b.inputs[b.nin++] = vinfo(&b, "x", 2, (int64_t[]){2, 5});
	node(&b, "Relu", "x", "y");
	b.outputs[b.nout++] = vinfo(&b, "y", 2, (int64_t[]){2, 5});
	m = finish(&b);
	assert_int_equal(pn_binding_choose(m, NULL, NULL, &m->arena, &bd, err), 0);
	assert_null(bd.how);
	assert_int_equal(bd.bind.n, 0);
	pn_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roles_image_tokens),
		cmocka_unit_test(test_roles_state_scalar),
		cmocka_unit_test(test_unnamed_dims),
		cmocka_unit_test(test_stride_base),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
