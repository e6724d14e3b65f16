/*
 * ts_graph.c - the ONNX graph a TorchScript model lowers to, built as
 * protobuf-c messages in the model's arena, so that everything after the
 * reader (inference, the store's record, hashing) sees an ONNX model.
 *
 * Names: graph inputs keep forward()'s parameter names, weights their
 * attribute path ("layer1.0.conv1.weight", as torch.onnx names them), and
 * every node output a fresh "/Op_output_N".
 */
#include <stdio.h>
#include <string.h>

#include "common/strmap.h"
#include "model/ts_internal.h"

void ts_graph_init(ts_graph *g, pn_arena *a, ts_graph *parent, int64_t *counter, int64_t *total)
{
	memset(g, 0, sizeof(*g));
	g->a = a;
	g->parent = parent;
	g->counter = counter;
	g->total_nodes = total;
}

/* Appends p to a growing arena array (*v, *n, *cap). */
static int push(pn_arena *a, void ***v, size_t *n, size_t *cap, void *p)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		void **nv = pn_arena_alloc(a, nc * sizeof(void *));
		if (!nv)
			return -1;
		if (*n)
			memcpy(nv, *v, *n * sizeof(void *));
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = p;
	return 0;
}

const char *ts_fresh_name(ts_graph *g, const char *hint)
{
	return pn_arena_printf(g->a, "/%s_output_%lld", hint, (long long)(*g->counter)++);
}

Onnx__NodeProto *ts_node(ts_graph *g, const char *op, const char *const *in, int n_in, int n_out)
{
	if (*g->total_nodes >= TS_LIMIT_NODES)
		return NULL;
	Onnx__NodeProto *n = pn_arena_alloc(g->a, sizeof(*n));
	if (!n)
		return NULL;
	onnx__node_proto__init(n);
	n->op_type = pn_arena_strdup(g->a, op);
	n->input = pn_arena_alloc(g->a, sizeof(char *) * (size_t)(n_in + 1));
	n->output = pn_arena_alloc(g->a, sizeof(char *) * (size_t)(n_out + 1));
	if (!n->op_type || !n->input || !n->output)
		return NULL;
	for (int i = 0; i < n_in; i++)
		n->input[i] = (char *)(in[i] ? in[i] : "");
	n->n_input = (size_t)n_in;
	for (int i = 0; i < n_out; i++)
		if (!(n->output[i] = (char *)ts_fresh_name(g, op)))
			return NULL;
	n->n_output = (size_t)n_out;
	n->name = pn_arena_printf(g->a, "%s_%lld", op, (long long)*g->total_nodes);
	if (!n->name || push(g->a, (void ***)&g->nodes, &g->n_nodes, &g->cap_nodes, n))
		return NULL;
	(*g->total_nodes)++;
	return n;
}

static Onnx__AttributeProto *attr(ts_graph *g, Onnx__NodeProto *n, const char *name, int type)
{
	Onnx__AttributeProto *at = pn_arena_alloc(g->a, sizeof(*at));
	if (!at)
		return NULL;
	onnx__attribute_proto__init(at);
	at->name = pn_arena_strdup(g->a, name);
	at->has_type = 1;
	at->type = type;
	Onnx__AttributeProto **v = pn_arena_alloc(g->a, sizeof(*v) * (n->n_attribute + 1));
	if (!at->name || !v)
		return NULL;
	if (n->n_attribute)
		memcpy(v, n->attribute, sizeof(*v) * n->n_attribute);
	v[n->n_attribute++] = at;
	n->attribute = v;
	return at;
}

int ts_attr_int(ts_graph *g, Onnx__NodeProto *n, const char *name, int64_t v)
{
	Onnx__AttributeProto *at = attr(g, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
	if (!at)
		return -1;
	at->has_i = 1;
	at->i = v;
	return 0;
}

int ts_attr_float(ts_graph *g, Onnx__NodeProto *n, const char *name, float v)
{
	Onnx__AttributeProto *at = attr(g, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
	if (!at)
		return -1;
	at->has_f = 1;
	at->f = v;
	return 0;
}

int ts_attr_ints(ts_graph *g, Onnx__NodeProto *n, const char *name, const int64_t *v, int k)
{
	Onnx__AttributeProto *at = attr(g, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
	if (!at || !(at->ints = pn_arena_memdup(g->a, v, sizeof(int64_t) * (size_t)(k ? k : 1))))
		return -1;
	at->n_ints = (size_t)k;
	return 0;
}

int ts_attr_str(ts_graph *g, Onnx__NodeProto *n, const char *name, const char *s)
{
	Onnx__AttributeProto *at = attr(g, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
	if (!at || !(at->s.data = (uint8_t *)pn_arena_strdup(g->a, s)))
		return -1;
	at->has_s = 1;
	at->s.len = strlen(s);
	return 0;
}

int ts_attr_graph(ts_graph *g, Onnx__NodeProto *n, const char *name, Onnx__GraphProto *body)
{
	Onnx__AttributeProto *at = attr(g, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
	if (!at)
		return -1;
	at->g = body;
	return 0;
}

static Onnx__TensorProto *tensor_proto(ts_graph *g, const char *name, const pn_tensor *t, int copy)
{
	Onnx__TensorProto *tp = pn_arena_alloc(g->a, sizeof(*tp));
	if (!tp)
		return NULL;
	onnx__tensor_proto__init(tp);
	tp->name = (char *)name;
	tp->has_data_type = 1;
	tp->data_type = t->dtype;
	tp->n_dims = (size_t)t->rank;
	tp->dims = pn_arena_memdup(g->a, t->dims, sizeof(int64_t) * PN_MAX_RANK);
	size_t bytes = (size_t)t->numel * pn_dtype_size(t->dtype);
	tp->has_raw_data = 1;
	tp->raw_data.len = bytes;
	tp->raw_data.data = copy ? pn_arena_memdup(g->a, t->data ? t->data : "", bytes ? bytes : 1)
				 : (uint8_t *)t->data;
	if (!tp->dims || (bytes && !tp->raw_data.data))
		return NULL;
	return tp;
}

int ts_attr_tensor(ts_graph *g, Onnx__NodeProto *n, const char *name, const pn_tensor *t)
{
	Onnx__AttributeProto *at = attr(g, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
	return at && (at->t = tensor_proto(g, NULL, t, 1)) ? 0 : -1;
}

const char *ts_constant(ts_graph *g, const pn_tensor *t)
{
	Onnx__NodeProto *n = ts_node(g, "Constant", NULL, 0, 1);
	return n && !ts_attr_tensor(g, n, "value", t) ? n->output[0] : NULL;
}

const char *ts_constant_i64(ts_graph *g, const int64_t *v, int k, int rank)
{
	pn_tensor t = {.dtype = PN_INT64, .rank = rank, .numel = k, .data = (void *)v};
	if (rank == 1)
		t.dims[0] = k;
	return ts_constant(g, &t);
}

const char *ts_constant_f32(ts_graph *g, float v)
{
	pn_tensor t = {.dtype = PN_FLOAT, .rank = 0, .numel = 1, .data = &v};
	return ts_constant(g, &t);
}

int ts_initializer(ts_graph *g, const char *name, const pn_tensor *t)
{
	Onnx__TensorProto *tp = tensor_proto(g, name, t, 0);
	return tp ? push(g->a, (void ***)&g->inits, &g->n_inits, &g->cap_inits, tp) : -1;
}

Onnx__ValueInfoProto *ts_value_info(ts_graph *g, const char *name, int dtype, int rank,
				    const int64_t *dims, const char *const *dim_names)
{
	Onnx__ValueInfoProto *vi = pn_arena_alloc(g->a, sizeof(*vi));
	Onnx__TypeProto *tp = pn_arena_alloc(g->a, sizeof(*tp));
	Onnx__TypeProto__Tensor *tt = pn_arena_alloc(g->a, sizeof(*tt));
	if (!vi || !tp || !tt)
		return NULL;
	onnx__value_info_proto__init(vi);
	onnx__type_proto__init(tp);
	onnx__type_proto__tensor__init(tt);
	vi->name = (char *)name;
	vi->type = tp;
	tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp->tensor_type = tt;
	tt->has_elem_type = 1;
	tt->elem_type = dtype;
	if (rank < 0)
		return vi;
	Onnx__TensorShapeProto *sp = pn_arena_alloc(g->a, sizeof(*sp));
	Onnx__TensorShapeProto__Dimension **dv = pn_arena_alloc(g->a, sizeof(*dv) * (size_t)(rank + 1));
	if (!sp || !dv)
		return NULL;
	onnx__tensor_shape_proto__init(sp);
	for (int i = 0; i < rank; i++) {
		Onnx__TensorShapeProto__Dimension *d = pn_arena_alloc(g->a, sizeof(*d));
		if (!d)
			return NULL;
		onnx__tensor_shape_proto__dimension__init(d);
		if (dims && dims[i] >= 0) {
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d->dim_value = dims[i];
		} else if (dim_names && dim_names[i]) {
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
			d->dim_param = (char *)dim_names[i];
		}
		dv[i] = d;
	}
	sp->dim = dv;
	sp->n_dim = (size_t)rank;
	tt->shape = sp;
	return vi;
}

int ts_graph_input(ts_graph *g, Onnx__ValueInfoProto *vi)
{
	return vi ? push(g->a, (void ***)&g->inputs, &g->n_inputs, &g->cap_inputs, vi) : -1;
}

int ts_graph_output(ts_graph *g, Onnx__ValueInfoProto *vi)
{
	return vi ? push(g->a, (void ***)&g->outputs, &g->n_outputs, &g->cap_outputs, vi) : -1;
}

/* Every value name a body (and the bodies inside it) reads, as used. */
static int mark_body_inputs(pn_strmap *used, const Onnx__GraphProto *b)
{
	for (size_t i = 0; i < b->n_node; i++) {
		const Onnx__NodeProto *n = b->node[i];
		for (size_t k = 0; k < n->n_input; k++)
			if (*n->input[k] && pn_strmap_put(used, n->input[k], 1) < 0)
				return -1;
		for (size_t a = 0; a < n->n_attribute; a++)
			if (n->attribute[a]->g && mark_body_inputs(used, n->attribute[a]->g))
				return -1;
	}
	return 0;
}

int ts_graph_prune(ts_graph *g)
{
	pn_strmap used;
	if (pn_strmap_init(&used, g->a, (uint32_t)(g->n_nodes * 2 + 16)))
		return -1;
	for (size_t i = 0; i < g->n_outputs; i++)
		if (pn_strmap_put(&used, g->outputs[i]->name, 1) < 0)
			return -1;
	/* nodes were made in the order they run, so one pass from the end
	 * sees every use of a value before its producer */
	size_t kept = g->n_nodes;
	for (size_t i = g->n_nodes; i-- > 0;) {
		Onnx__NodeProto *n = g->nodes[i];
		int live = 0;
		for (size_t k = 0; k < n->n_output && !live; k++)
			live = pn_strmap_get(&used, n->output[k]) >= 0;
		if (!live) {
			g->nodes[i] = NULL;
			kept--;
			continue;
		}
		for (size_t k = 0; k < n->n_input; k++)
			if (*n->input[k] && pn_strmap_put(&used, n->input[k], 1) < 0)
				return -1;
		for (size_t a = 0; a < n->n_attribute; a++)
			if (n->attribute[a]->g && mark_body_inputs(&used, n->attribute[a]->g))
				return -1;
	}
	size_t j = 0;
	for (size_t i = 0; i < g->n_nodes; i++)
		if (g->nodes[i])
			g->nodes[j++] = g->nodes[i];
	g->n_nodes = kept;
	/* initializers no live node reads go too */
	j = 0;
	for (size_t i = 0; i < g->n_inits; i++)
		if (pn_strmap_get(&used, g->inits[i]->name) >= 0)
			g->inits[j++] = g->inits[i];
	g->n_inits = j;
	return 0;
}

Onnx__GraphProto *ts_graph_finish(ts_graph *g, const char *name)
{
	Onnx__GraphProto *gp = pn_arena_alloc(g->a, sizeof(*gp));
	if (!gp)
		return NULL;
	onnx__graph_proto__init(gp);
	gp->name = pn_arena_strdup(g->a, name);
	gp->node = g->nodes;
	gp->n_node = g->n_nodes;
	gp->initializer = g->inits;
	gp->n_initializer = g->n_inits;
	gp->input = g->inputs;
	gp->n_input = g->n_inputs;
	gp->output = g->outputs;
	gp->n_output = g->n_outputs;
	return gp;
}
