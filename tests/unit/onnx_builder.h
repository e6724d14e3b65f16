/*
 * onnx_builder.h - ONNX models for unit tests, built with protobuf-c in an
 * arena and decoded by pn_model_load like any model file.
 *
 *   builder b;
 *   builder_init(&b);
 *   b.inputs[b.nin++] = vinfo(&b, "X", 2, dims);   (a dim < 0 is unknown)
 *   node(&b, "Relu", "X", "Y");                      (inputs, outputs as CSV)
 *   b.outputs[b.nout++] = vinfo(&b, "Y", 2, dims);
 *   pn_model *m = load(&b);                          (opset 17, IR 8)
 *   pn_arena_free(&b.a);
 *
 * b.opset, when set, replaces opset 17.  The arrays are fixed-size: room for
 * the biggest graph a test builds (the partition tests go past the cut
 * bounds: 64 nodes, 16 inputs, 8 outputs).
 *
 * Include it after cmocka.h: load() fails the test when decoding fails.
 */
#ifndef PN_TEST_ONNX_BUILDER_H
#define PN_TEST_ONNX_BUILDER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "common/err.h"
#include "model/onnx.h"

typedef struct builder {
	pn_arena a;
	Onnx__NodeProto *nodes[128];
	Onnx__TensorProto *inits[16];
	Onnx__ValueInfoProto *inputs[32], *outputs[32], *infos[32];
	size_t nn, ni, nin, nout, ninfo;
	int64_t opset;   /* 0: 17 */
} builder;

/* An empty model with its own arena (pn_arena_free(&b->a) drops it all). */
static inline void builder_init(builder *b)
{
	memset(b, 0, sizeof(*b));
	pn_arena_init(&b->a, 0);
}

static inline Onnx__ValueInfoProto *vinfo_t(builder *b, const char *name, int dtype, int rank,
				     const int64_t *dims)
{
	Onnx__ValueInfoProto *vi = pn_arena_alloc(&b->a, sizeof(*vi));
	Onnx__TypeProto *tp = pn_arena_alloc(&b->a, sizeof(*tp));
	Onnx__TypeProto__Tensor *tt = pn_arena_alloc(&b->a, sizeof(*tt));
	Onnx__TensorShapeProto *sh = pn_arena_alloc(&b->a, sizeof(*sh));
	Onnx__TensorShapeProto__Dimension **d = pn_arena_alloc(&b->a, sizeof(void *) * 8);
	onnx__value_info_proto__init(vi);
	onnx__type_proto__init(tp);
	onnx__type_proto__tensor__init(tt);
	onnx__tensor_shape_proto__init(sh);
	for (int i = 0; i < rank; i++) {
		d[i] = pn_arena_alloc(&b->a, sizeof(**d));
		onnx__tensor_shape_proto__dimension__init(d[i]);
		if (dims[i] >= 0) {
			d[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d[i]->dim_value = dims[i];
		} else {
			/* one name for every unknown dim: none is bound */
			d[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
			d[i]->dim_param = (char *)"n";
		}
	}
	sh->n_dim = (size_t)rank;
	sh->dim = d;
	tt->has_elem_type = 1;
	tt->elem_type = dtype;
	tt->shape = sh;
	tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp->tensor_type = tt;
	vi->name = pn_arena_strdup(&b->a, name);
	vi->type = tp;
	return vi;
}

static inline Onnx__ValueInfoProto *vinfo(builder *b, const char *name, int rank,
					   const int64_t *dims)
{
	return vinfo_t(b, name, PN_FLOAT, rank, dims);
}

/* A graph output or value_info with no type: inference gives it one. */
static inline Onnx__ValueInfoProto *vout(builder *b, const char *name)
{
	Onnx__ValueInfoProto *vi = pn_arena_alloc(&b->a, sizeof(*vi));
	onnx__value_info_proto__init(vi);
	vi->name = pn_arena_strdup(&b->a, name);
	return vi;
}

/* A float tensor of the given shape holding data (copied). */
static inline Onnx__TensorProto *tensor_of(builder *b, const char *name, int rank,
					   const int64_t *dims, const float *data)
{
	Onnx__TensorProto *t = pn_arena_alloc(&b->a, sizeof(*t));
	onnx__tensor_proto__init(t);
	t->name = pn_arena_strdup(&b->a, name);
	t->has_data_type = 1;
	t->data_type = PN_FLOAT;
	t->n_dims = (size_t)rank;
	t->dims = pn_arena_memdup(&b->a, dims, sizeof(int64_t) * (size_t)(rank ? rank : 1));
	size_t n = 1;
	for (int i = 0; i < rank; i++)
		n *= (size_t)dims[i];
	float *v = pn_arena_memdup(&b->a, data, n * sizeof(float));
	t->has_raw_data = 1;
	t->raw_data.data = (uint8_t *)v;
	t->raw_data.len = n * sizeof(float);
	return t;
}

/* A float tensor of the given shape filled with 0.5. */
static inline Onnx__TensorProto *tensor(builder *b, const char *name, int rank,
					const int64_t *dims)
{
	size_t n = 1;
	for (int i = 0; i < rank; i++)
		n *= (size_t)dims[i];
	float *v = pn_arena_alloc(&b->a, (n ? n : 1) * sizeof(float));
	for (size_t i = 0; i < n; i++)
		v[i] = 0.5f;
	return tensor_of(b, name, rank, dims, v);
}

static inline char **names(builder *b, const char *csv, size_t *n)
{
	size_t cap = 1;   /* tokens are at most commas + 1 (variadic Sum, Concat) */
	for (const char *c = csv; *c; c++)
		cap += *c == ',';
	char **v = pn_arena_alloc(&b->a, sizeof(char *) * cap);
	char *s = pn_arena_strdup(&b->a, csv), *save = NULL;
	*n = 0;
	for (char *tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		v[(*n)++] = tok;
	return v;
}

static inline Onnx__NodeProto *node(builder *b, const char *op, const char *in, const char *out)
{
	Onnx__NodeProto *n = pn_arena_alloc(&b->a, sizeof(*n));
	onnx__node_proto__init(n);
	n->op_type = pn_arena_strdup(&b->a, op);
	n->name = pn_arena_printf(&b->a, "n%zu", b->nn);
	n->input = names(b, in, &n->n_input);
	n->output = names(b, out, &n->n_output);
	b->nodes[b->nn++] = n;
	return n;
}

/* Gives node n the integer attribute name = v. */
static inline void attr_int(builder *b, Onnx__NodeProto *n, const char *name, int64_t v)
{
	Onnx__AttributeProto *a = pn_arena_alloc(&b->a, sizeof(*a));
	Onnx__AttributeProto **all = pn_arena_alloc(&b->a, sizeof(void *) * (n->n_attribute + 1));
	onnx__attribute_proto__init(a);
	a->name = pn_arena_strdup(&b->a, name);
	a->has_type = 1;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	a->has_i = 1;
	a->i = v;
	if (n->n_attribute)
		memcpy(all, n->attribute, sizeof(void *) * n->n_attribute);
	all[n->n_attribute++] = a;
	n->attribute = all;
}

/* Gives node n the float attribute name = v. */
static inline void attr_float(builder *b, Onnx__NodeProto *n, const char *name, float v)
{
	Onnx__AttributeProto *a = pn_arena_alloc(&b->a, sizeof(*a));
	Onnx__AttributeProto **all = pn_arena_alloc(&b->a, sizeof(void *) * (n->n_attribute + 1));
	onnx__attribute_proto__init(a);
	a->name = pn_arena_strdup(&b->a, name);
	a->has_type = 1;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
	a->has_f = 1;
	a->f = v;
	if (n->n_attribute)
		memcpy(all, n->attribute, sizeof(void *) * n->n_attribute);
	all[n->n_attribute++] = a;
	n->attribute = all;
}

/* An int64 tensor of the given shape holding data (copied). */
static inline Onnx__TensorProto *tensor_i64(builder *b, const char *name, int rank,
					    const int64_t *dims, const int64_t *data)
{
	Onnx__TensorProto *t = pn_arena_alloc(&b->a, sizeof(*t));
	onnx__tensor_proto__init(t);
	t->name = pn_arena_strdup(&b->a, name);
	t->has_data_type = 1;
	t->data_type = PN_INT64;
	t->n_dims = (size_t)rank;
	t->dims = pn_arena_memdup(&b->a, dims, sizeof(int64_t) * (size_t)(rank ? rank : 1));
	size_t n = 1;
	for (int i = 0; i < rank; i++)
		n *= (size_t)dims[i];
	t->has_raw_data = 1;
	t->raw_data.data = pn_arena_memdup(&b->a, data, (n ? n : 1) * sizeof(int64_t));
	t->raw_data.len = n * sizeof(int64_t);
	return t;
}

/* --- transforms of a built graph that must not change what it computes ---- */

/* Lists the nodes in the order perm gives: file position i holds the node
 * built perm[i]-th.  Node names (n0, n1, ... by build order) go along. */
static inline void permute_nodes(builder *b, const int *perm)
{
	Onnx__NodeProto *was[128];
	memcpy(was, b->nodes, sizeof(void *) * b->nn);
	for (size_t i = 0; i < b->nn; i++)
		b->nodes[i] = was[perm[i]];
}

static inline void reverse_inputs(builder *b)
{
	for (size_t i = 0; i < b->nin / 2; i++) {
		Onnx__ValueInfoProto *t = b->inputs[i];
		b->inputs[i] = b->inputs[b->nin - 1 - i];
		b->inputs[b->nin - 1 - i] = t;
	}
}

static inline char *renamed(builder *b, const char *prefix, const char *name)
{
	return name && *name ? pn_arena_printf(&b->a, "%s%s", prefix, name) : (char *)name;
}

/* Renames every value and node: prefix + old name. */
static inline void rename_all(builder *b, const char *prefix)
{
	for (size_t i = 0; i < b->nn; i++) {
		Onnx__NodeProto *n = b->nodes[i];
		n->name = renamed(b, prefix, n->name);
		for (size_t k = 0; k < n->n_input; k++)
			n->input[k] = renamed(b, prefix, n->input[k]);
		for (size_t k = 0; k < n->n_output; k++)
			n->output[k] = renamed(b, prefix, n->output[k]);
	}
	for (size_t i = 0; i < b->ni; i++)
		b->inits[i]->name = renamed(b, prefix, b->inits[i]->name);
	for (size_t i = 0; i < b->nin; i++)
		b->inputs[i]->name = renamed(b, prefix, b->inputs[i]->name);
	for (size_t i = 0; i < b->nout; i++)
		b->outputs[i]->name = renamed(b, prefix, b->outputs[i]->name);
	for (size_t i = 0; i < b->ninfo; i++)
		b->infos[i]->name = renamed(b, prefix, b->infos[i]->name);
}

/* Decodes the built model.  With weights_as_meta, as `passnet build` stores
 * models: tensors past the by-value thresholds (model/onnx_weights.c)
 * become statistics without bytes; without, every byte is kept, as for
 * execution. */
static inline pn_model *load_with(builder *b, int weights_as_meta)
{
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT, *osp = &os;
	os.has_version = 1;
	os.version = b->opset ? b->opset : 17;
	g.name = "g";
	g.n_node = b->nn;
	g.node = b->nodes;
	g.n_initializer = b->ni;
	g.initializer = b->inits;
	g.n_input = b->nin;
	g.input = b->inputs;
	g.n_output = b->nout;
	g.output = b->outputs;
	g.n_value_info = b->ninfo;
	g.value_info = b->infos;
	mp.has_ir_version = 1;
	mp.ir_version = 8;
	mp.n_opset_import = 1;
	mp.opset_import = &osp;
	mp.graph = &g;
	size_t len = onnx__model_proto__get_packed_size(&mp);
	uint8_t *bytes = malloc(len);
	onnx__model_proto__pack(&mp, bytes);
	pn_model *m = NULL;
	char err[PN_ERRLEN] = "";
	int rc;
	if (weights_as_meta) {
		/* the proto must live in the model's arena (pn_model_from_proto) */
		m = calloc(1, sizeof(*m));
		pn_arena_init(&m->arena, 0);
		Onnx__ModelProto *up = pn_onnx_unpack(bytes, len, &m->arena, err);
		pn_decode_opts o = {.weights_as_meta = 1};
		rc = !up || pn_model_from_proto(up, &o, m, err);
	} else {
		rc = pn_model_load(bytes, len, NULL, 0, &m, err);
	}
	free(bytes);
	if (rc)
		fail_msg("model: %s", err);
	return m;
}

static inline pn_model *load(builder *b)
{
	return load_with(b, 0);
}

/* Value `name` of g (pn_graph_find_value); the test fails when there is
 * none. */
static inline int value_named(const pn_graph *g, const char *name)
{
	int v = pn_graph_find_value(g, name);
	if (v < 0)
		fail_msg("no value %s", name);
	return v;
}

#endif
