/*
 * onnx_decode.c - ModelProto -> graph IR (schemas/ir.h).
 *
 * Decoding a graph takes two passes: the first gives every initializer,
 * graph input and node output a value index, so the second can resolve node
 * inputs whatever order the file lists nodes in.  A name that is not defined
 * in the graph is looked up in the enclosing graphs (If/Loop/Scan bodies
 * capture outer values); one that is defined nowhere is an error.  The graph
 * is then linked and sorted; a cycle is an error.
 */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/strmap.h"
#include "model/onnx.h"
#include "schemas/ops.h"

typedef struct scope {
	pn_graph *g;
	pn_strmap names;
	int32_t cap_values;
	struct scope *parent;
} scope;

typedef struct decoder {
	pn_model *m;
	pn_arena *a;
	const pn_decode_opts *o;
	char *err;
	int depth;
} decoder;

Onnx__ModelProto *pn_onnx_unpack(const void *bytes, size_t len, pn_arena *a, char *err)
{
	ProtobufCAllocator al;
	if (len > PN_LIMIT_MODEL_BYTES)
		return pn_fail(err, "model file is %zu bytes (limit %zu)", len, PN_LIMIT_MODEL_BYTES),
		       NULL;
	pn_arena_protobuf_allocator(a, &al);
	Onnx__ModelProto *mp = onnx__model_proto__unpack(&al, len, bytes);
	if (!mp)
		return pn_fail(err, "not a valid ONNX protobuf (truncated or corrupt)"), NULL;
	if (!mp->graph)
		return pn_fail(err, "protobuf holds no ONNX graph (not a model)"), NULL;
	if (!mp->has_ir_version || mp->ir_version < 1 || mp->ir_version > 10)
		return pn_fail(err, "unsupported ONNX IR version %lld (passnet reads 1..10)",
			       (long long)mp->ir_version), NULL;
	return mp;
}

/* --- types ------------------------------------------------------------------ */

static int decode_type(decoder *d, const Onnx__TypeProto *tp, pn_type *t, const char *what)
{
	memset(t, 0, sizeof(*t));
	t->rank = -1;
	if (!tp)
		return 0;
	switch (tp->value_case) {
	case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
	case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE: {
		const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
		t->kind = PN_KIND_TENSOR;
		t->dtype = tt->has_elem_type ? tt->elem_type : PN_UNDEFINED;
		if (!tt->shape)
			return 0;
		if (tt->shape->n_dim > PN_MAX_RANK)
			return pn_fail(d->err, "value '%s' has rank %zu (limit %d)", what,
				       tt->shape->n_dim, PN_MAX_RANK);
		t->rank = (int32_t)tt->shape->n_dim;
		for (int i = 0; i < t->rank; i++) {
			const Onnx__TensorShapeProto__Dimension *dm = tt->shape->dim[i];
			t->dims[i] = -1;
			if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
				if (dm->dim_value > PN_MAX_NUMEL)
					return pn_fail(d->err, "value '%s' has dim %lld (limit 2^40)",
						       what, (long long)dm->dim_value);
				t->dims[i] = dm->dim_value >= 0 ? dm->dim_value : -1;
			} else if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
				   dm->dim_param && *dm->dim_param) {
				t->dim_names[i] = pn_arena_strdup(d->a, dm->dim_param);
			}
		}
		return 0;
	}
	case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: {
		pn_type inner;
		if (decode_type(d, tp->sequence_type->elem_type, &inner, what))
			return -1;
		*t = inner;
		t->kind = PN_KIND_SEQUENCE;
		return 0;
	}
	case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: {
		pn_type inner;
		if (decode_type(d, tp->optional_type->elem_type, &inner, what))
			return -1;
		*t = inner;
		t->elem_kind = inner.kind;
		t->kind = PN_KIND_OPTIONAL;
		return 0;
	}
	case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
		return pn_fail(d->err, "value '%s' is a map (unsupported)", what);
	default:
		return 0;
	}
}

/* --- values ------------------------------------------------------------------ */

static int new_value(decoder *d, scope *s, const char *name, int role)
{
	pn_graph *g = s->g;
	if (g->n_values == s->cap_values) {
		int32_t cap = s->cap_values ? s->cap_values * 2 : 64;
		pn_value *v = pn_arena_alloc(d->a, sizeof(pn_value) * (size_t)cap);
		if (!v)
			return pn_fail(d->err, "out of memory");
		if (g->n_values)
			memcpy(v, g->values, sizeof(pn_value) * (size_t)g->n_values);
		g->values = v;
		s->cap_values = cap;
	}
	int id = g->n_values++;
	pn_value *v = &g->values[id];
	v->name = name;
	v->role = (uint8_t)role;
	v->producer = -1;
	v->outer = -1;
	v->type.rank = -1;
	if (pn_strmap_put(&s->names, name, id) < 0)
		return pn_fail(d->err, "out of memory");
	return id;
}

/* Finds name in s or its ancestors; an outer hit is captured through every
 * scope in between, so each graph only ever refers to its direct parent. */
static int resolve(decoder *d, scope *s, const char *name)
{
	int id = pn_strmap_get(&s->names, name);
	if (id >= 0)
		return id;
	if (!s->parent)
		return -1;
	int outer = resolve(d, s->parent, name);
	if (outer < 0)
		return outer;
	id = new_value(d, s, name, PN_ROLE_OUTER);
	if (id < 0)
		return -2;
	s->g->values[id].outer = outer;
	s->g->values[id].type = s->parent->g->values[outer].type;
	return id;
}

/* --- constant tensors -------------------------------------------------------- */

static Passnet__WeightMeta *find_meta(decoder *d, const char *name)
{
	for (size_t i = 0; i < d->o->n_metas; i++)
		if (d->o->metas[i]->name && !strcmp(d->o->metas[i]->name, name))
			return d->o->metas[i];
	return NULL;
}

/* Attaches tensor tp to value v: by value, or as metadata per the policy or
 * because its bytes are missing. */
static int attach_tensor(decoder *d, pn_value *v, const Onnx__TensorProto *tp)
{
	pn_tensor *t = pn_arena_alloc(d->a, sizeof(*t));
	if (!t)
		return pn_fail(d->err, "out of memory");
	int rc = pn_tensor_from_proto(tp, d->a, t, d->err);
	if (rc < 0)
		return -1;
	v->type.kind = PN_KIND_TENSOR;
	v->type.dtype = t->dtype;
	v->type.rank = t->rank;
	for (int i = 0; i < t->rank; i++)
		v->type.dims[i] = t->dims[i];
	if (rc == 0 && (!d->o->weights_as_meta || pn_weight_by_value(t->dtype, t->numel))) {
		v->data = t;
		return 0;
	}
	v->meta = pn_arena_alloc(d->a, sizeof(*v->meta));
	if (!v->meta)
		return pn_fail(d->err, "out of memory");
	if (rc == 0 && t->dtype != PN_STRING) {
		if (pn_weight_stats(t, d->a, v->meta))
			return pn_fail(d->err, "out of memory");
	} else {
		pn_weight_meta_from_record(find_meta(d, v->name), v->meta);
	}
	return 0;
}

/* --- attributes -------------------------------------------------------------- */

static int decode_graph(decoder *d, const Onnx__GraphProto *gp, scope *parent, pn_graph **out);

static int decode_attr(decoder *d, scope *s, const Onnx__AttributeProto *ap, pn_attr *at)
{
	int rc;
	at->name = ap->name ? ap->name : "";
	at->type = ap->has_type ? (int32_t)ap->type : PN_ATTR_UNDEFINED;
	/* An attribute without a type, or of one onnx.proto does not define,
	 * holds nothing an op can read; kept, it made subgraphs whose
	 * canonical bytes do not decode (tests/cli/hostile_inputs.sh). */
	if (at->type <= PN_ATTR_UNDEFINED || at->type > PN_ATTR_TYPE_PROTOS)
		return at->type == PN_ATTR_UNDEFINED
		       ? pn_fail(d->err, "attribute '%s' has no type", at->name)
		       : pn_fail(d->err, "attribute '%s' has unknown type %d", at->name, (int)at->type);
	at->f = ap->f;
	at->i = ap->i;
	/* A STRING attribute whose s is missing holds the empty string (the
	 * proto default); readers of a->s expect a string (fuzzing found a
	 * NULL handed to strcmp). */
	if (ap->has_s || at->type == PN_ATTR_STRING) {
		at->s = pn_arena_strndup(d->a, (const char *)ap->s.data, ap->s.len);
		at->s_len = (int64_t)ap->s.len;
	}
	switch (at->type) {
	case PN_ATTR_FLOATS:
		at->n = (int32_t)ap->n_floats;
		at->floats = ap->floats;
		break;
	case PN_ATTR_INTS:
		at->n = (int32_t)ap->n_ints;
		at->ints = ap->ints;
		break;
	case PN_ATTR_STRINGS:
		at->n = (int32_t)ap->n_strings;
		at->strings = pn_arena_alloc(d->a, sizeof(char *) * (ap->n_strings + 1));
		for (size_t i = 0; at->strings && i < ap->n_strings; i++)
			at->strings[i] = pn_arena_strndup(d->a, (const char *)ap->strings[i].data,
							  ap->strings[i].len);
		break;
	case PN_ATTR_TENSOR:
		if (!ap->t)
			return pn_fail(d->err, "attribute '%s' has no tensor", at->name);
		at->t = pn_arena_alloc(d->a, sizeof(pn_tensor));
		if (!at->t)
			return pn_fail(d->err, "out of memory");
		rc = pn_tensor_from_proto(ap->t, d->a, at->t, d->err);
		if (rc < 0)
			return -1;
		if (rc > 0)   /* bytes absent: a Constant's value kept as metadata */
			at->t = NULL;
		break;
	case PN_ATTR_TENSORS:
		at->n = (int32_t)ap->n_tensors;
		at->tensors = pn_arena_alloc(d->a, sizeof(pn_tensor *) * (ap->n_tensors + 1));
		for (size_t i = 0; i < ap->n_tensors; i++) {
			at->tensors[i] = pn_arena_alloc(d->a, sizeof(pn_tensor));
			if (!at->tensors[i] || pn_tensor_from_proto(ap->tensors[i], d->a, at->tensors[i], d->err))
				return -1;
		}
		break;
	case PN_ATTR_GRAPH:
		if (!ap->g)
			return pn_fail(d->err, "attribute '%s' has no graph", at->name);
		return decode_graph(d, ap->g, s, &at->g);
	case PN_ATTR_GRAPHS:
		at->n = (int32_t)ap->n_graphs;
		at->graphs = pn_arena_alloc(d->a, sizeof(pn_graph *) * (ap->n_graphs + 1));
		for (size_t i = 0; i < ap->n_graphs; i++)
			if (decode_graph(d, ap->graphs[i], s, &at->graphs[i]))
				return -1;
		break;
	case PN_ATTR_TYPE_PROTO:
		at->tp = pn_arena_alloc(d->a, sizeof(pn_type));
		if (!at->tp || decode_type(d, ap->tp, at->tp, at->name))
			return -1;
		break;
	default:
		break;
	}
	return 0;
}

/* --- nodes ------------------------------------------------------------------- */

static const char *node_name(const Onnx__NodeProto *np, int index, pn_arena *a)
{
	if (np->name && *np->name)
		return np->name;
	return pn_arena_printf(a, "#%d", index);
}

/* Gives every node output a value (pass one). */
static int declare_outputs(decoder *d, scope *s, const Onnx__NodeProto *np, pn_node *n)
{
	n->n_out = (int32_t)np->n_output;
	n->out = pn_arena_alloc(d->a, sizeof(int32_t) * (np->n_output + 1));
	if (!n->out)
		return pn_fail(d->err, "out of memory");
	for (size_t k = 0; k < np->n_output; k++) {
		const char *nm = np->output[k];
		if (!nm || !*nm) {
			n->out[k] = -1;
			continue;
		}
		if (pn_strmap_get(&s->names, nm) >= 0)
			return pn_fail(d->err, "value '%s' is defined twice (node '%s' redefines it)",
				       nm, n->name);
		int id = new_value(d, s, nm, PN_ROLE_NODE);
		if (id < 0)
			return -1;
		n->out[k] = id;
	}
	return 0;
}

/* Decodes the value of a Constant node into its output value. */
static int constant_value(decoder *d, pn_graph *g, pn_node *n, const Onnx__NodeProto *np)
{
	if (n->n_out < 1 || n->out[0] < 0)
		return 0;
	pn_value *v = &g->values[n->out[0]];
	for (size_t i = 0; i < np->n_attribute; i++) {
		const Onnx__AttributeProto *ap = np->attribute[i];
		if (ap->name && !strcmp(ap->name, "value") && ap->t)
			return attach_tensor(d, v, ap->t);
	}
	/* value_float(s)/value_int(s)/value_string(s) are decoded by the
	 * Constant kernel through constant folding, like any other op. */
	return 0;
}

static int domain_imported(const pn_model *m, const char *domain)
{
	for (int i = 0; i < m->n_opsets; i++)
		if (!strcmp(m->opsets[i].domain, domain))
			return 1;
	return 0;
}

static int decode_node(decoder *d, scope *s, const Onnx__NodeProto *np, pn_node *n)
{
	/* ONNX requires an op type; a node without one (a damaged file) made
	 * subgraphs whose decoded canonical graph hashed to another key
	 * (tests/cli/hostile_inputs.sh) */
	if (!np->op_type || !*np->op_type)
		return pn_fail(d->err, "node '%s' has no op_type", np->name ? np->name : "");
	n->op_type = np->op_type;
	n->domain = np->domain ? np->domain : "";
	if (!strcmp(n->domain, "ai.onnx"))
		n->domain = "";
	/* ONNX requires every node's domain among the model's opset imports;
	 * a node of another (a damaged file: a name read as a domain) made
	 * subgraphs whose decoded canonical graph hashed to another key */
	if (!domain_imported(d->m, n->domain))
		return pn_fail(d->err, "node '%s' (%s): domain '%s' has no opset import",
			       np->name ? np->name : "", n->op_type, n->domain);
	n->op = pn_op_lookup(n->domain, n->op_type);
	n->opset = (int32_t)pn_model_opset(d->m, n->domain);
	n->n_in = (int32_t)np->n_input;
	n->in = pn_arena_alloc(d->a, sizeof(int32_t) * (np->n_input + 1));
	if (!n->in)
		return pn_fail(d->err, "out of memory");
	for (size_t k = 0; k < np->n_input; k++) {
		const char *nm = np->input[k];
		if (!nm || !*nm) {
			n->in[k] = -1;
			continue;
		}
		int id = resolve(d, s, nm);
		if (id == -1)
			return pn_fail(d->err, "node '%s' (%s) reads undefined value '%s'", n->name,
				       n->op_type, nm);
		if (id < 0)
			return -1;
		n->in[k] = id;
	}
	n->n_attr = (int32_t)np->n_attribute;
	n->attrs = pn_arena_alloc(d->a, sizeof(pn_attr) * (np->n_attribute + 1));
	if (!n->attrs)
		return pn_fail(d->err, "out of memory");
	for (size_t i = 0; i < np->n_attribute; i++)
		if (decode_attr(d, s, np->attribute[i], &n->attrs[i])) {
			pn_errprefix(d->err, "node '%s' (%s)", n->name, n->op_type);
			return -1;
		}
	if (n->op == PN_OP_Constant)
		return constant_value(d, s->g, n, np);
	return 0;
}

/* --- graphs -------------------------------------------------------------------- */

static int declare_initializers(decoder *d, scope *s, const Onnx__GraphProto *gp)
{
	pn_graph *g = s->g;
	g->inits = pn_arena_alloc(d->a, sizeof(int32_t) * (gp->n_initializer + 1));
	if (!g->inits)
		return pn_fail(d->err, "out of memory");
	for (size_t i = 0; i < gp->n_initializer; i++) {
		const Onnx__TensorProto *tp = gp->initializer[i];
		const char *nm = tp->name ? tp->name : "";
		if (!*nm)
			return pn_fail(d->err, "initializer %zu has no name", i);
		if (pn_strmap_get(&s->names, nm) >= 0)
			return pn_fail(d->err, "initializer '%s' is defined twice", nm);
		int id = new_value(d, s, nm, PN_ROLE_INIT);
		if (id < 0)
			return -1;
		if (attach_tensor(d, &g->values[id], tp))
			return -1;
		g->inits[g->n_inits++] = id;
	}
	if (gp->n_sparse_initializer)
		return pn_fail(d->err, "sparse initializers are not supported");
	return 0;
}

static int declare_inputs(decoder *d, scope *s, const Onnx__GraphProto *gp)
{
	pn_graph *g = s->g;
	g->inputs = pn_arena_alloc(d->a, sizeof(int32_t) * (gp->n_input + 1));
	if (!g->inputs)
		return pn_fail(d->err, "out of memory");
	for (size_t i = 0; i < gp->n_input; i++) {
		const Onnx__ValueInfoProto *vi = gp->input[i];
		const char *nm = vi->name ? vi->name : "";
		int id = pn_strmap_get(&s->names, nm);
		if (id >= 0 && g->values[id].role == PN_ROLE_INIT)
			continue;   /* IR < 4 lists initializers as inputs too */
		if (id >= 0)
			return pn_fail(d->err, "graph input '%s' is listed twice", nm);
		id = new_value(d, s, nm, PN_ROLE_INPUT);
		if (id < 0 || decode_type(d, vi->type, &g->values[id].type, nm))
			return -1;
		g->inputs[g->n_inputs++] = id;
	}
	return 0;
}

static int declare_value_info(decoder *d, scope *s, const Onnx__GraphProto *gp)
{
	for (size_t i = 0; i < gp->n_value_info; i++) {
		const Onnx__ValueInfoProto *vi = gp->value_info[i];
		int id = vi->name ? pn_strmap_get(&s->names, vi->name) : -1;
		if (id < 0 || s->g->values[id].role != PN_ROLE_NODE)
			continue;   /* info about a value nobody produces: ignore */
		if (decode_type(d, vi->type, &s->g->values[id].type, vi->name))
			return -1;
	}
	return 0;
}

static int declare_outputs_of_graph(decoder *d, scope *s, const Onnx__GraphProto *gp)
{
	pn_graph *g = s->g;
	g->outputs = pn_arena_alloc(d->a, sizeof(int32_t) * (gp->n_output + 1));
	if (!g->outputs)
		return pn_fail(d->err, "out of memory");
	for (size_t i = 0; i < gp->n_output; i++) {
		const Onnx__ValueInfoProto *vi = gp->output[i];
		const char *nm = vi->name ? vi->name : "";
		int id = resolve(d, s, nm);
		if (id == -1)
			return pn_fail(d->err, "graph output '%s' is never produced", nm);
		if (id < 0)
			return -1;
		pn_value *v = &g->values[id];
		if (v->role == PN_ROLE_NODE && vi->type) {
			pn_type t;
			if (decode_type(d, vi->type, &t, nm))
				return -1;
			/* The output's declared type fills what value_info left open. */
			if (v->type.rank < 0 || !v->type.dtype)
				v->type = t;
		}
		v->is_output = 1;
		g->outputs[g->n_outputs++] = id;
	}
	return 0;
}

static int collect_outer(decoder *d, pn_graph *g)
{
	g->outer = pn_arena_alloc(d->a, sizeof(int32_t) * (size_t)(g->n_values + 1));
	if (!g->outer)
		return pn_fail(d->err, "out of memory");
	for (int i = 0; i < g->n_values; i++)
		if (g->values[i].role == PN_ROLE_OUTER)
			g->outer[g->n_outer++] = i;
	return 0;
}

static int decode_graph(decoder *d, const Onnx__GraphProto *gp, scope *parent, pn_graph **out)
{
	if (++d->depth > PN_LIMIT_GRAPH_DEPTH) {
		d->depth--;
		return pn_fail(d->err, "graphs nest deeper than %d", PN_LIMIT_GRAPH_DEPTH);
	}
	scope s = {0};
	s.parent = parent;
	s.g = pn_arena_alloc(d->a, sizeof(pn_graph));
	if (!s.g || pn_strmap_init(&s.names, d->a, (uint32_t)(gp->n_node * 2 + gp->n_initializer + 16)))
		return pn_fail(d->err, "out of memory");
	pn_graph *g = s.g;
	g->name = gp->name ? gp->name : "";
	g->parent = parent ? parent->g : NULL;
	g->nodes = pn_arena_alloc(d->a, sizeof(pn_node) * (gp->n_node + 1));
	if (!g->nodes)
		return pn_fail(d->err, "out of memory");
	g->n_nodes = (int32_t)gp->n_node;
	if (declare_initializers(d, &s, gp) || declare_inputs(d, &s, gp))
		return -1;
	for (size_t i = 0; i < gp->n_node; i++) {
		g->nodes[i].name = node_name(gp->node[i], (int)i, d->a);
		if (declare_outputs(d, &s, gp->node[i], &g->nodes[i]))
			return -1;
	}
	if (declare_value_info(d, &s, gp))
		return -1;
	for (size_t i = 0; i < gp->n_node; i++)
		if (decode_node(d, &s, gp->node[i], &g->nodes[i]))
			return -1;
	if (declare_outputs_of_graph(d, &s, gp) || collect_outer(d, g))
		return -1;
	if (pn_graph_link(g, d->a, d->err) || pn_graph_toposort(g, d->a, d->err))
		return -1;
	d->depth--;
	*out = g;
	return 0;
}

static int decode_opsets(decoder *d, const Onnx__ModelProto *mp)
{
	pn_model *m = d->m;
	m->opsets = pn_arena_alloc(d->a, sizeof(pn_opset) * (mp->n_opset_import + 1));
	if (!m->opsets)
		return pn_fail(d->err, "out of memory");
	for (size_t i = 0; i < mp->n_opset_import; i++) {
		const Onnx__OperatorSetIdProto *os = mp->opset_import[i];
		const char *dom = os->domain && strcmp(os->domain, "ai.onnx") ? os->domain : "";
		m->opsets[m->n_opsets].domain = dom;
		m->opsets[m->n_opsets].version = os->version;
		m->n_opsets++;
		if (!*dom && (os->version < 1 || os->version > 18))
			return pn_fail(d->err, "unsupported ai.onnx opset %lld (passnet reads 1..18)",
				       (long long)os->version);
	}
	if (!pn_model_opset(m, "")) {
		if (mp->ir_version >= 3 && mp->n_opset_import)
			return 0;   /* a model of other domains only */
		/* IR 1-2 had no opset imports: version 1 is implied. */
		m->opsets[m->n_opsets].domain = "";
		m->opsets[m->n_opsets].version = 1;
		m->n_opsets++;
	}
	return 0;
}

int pn_model_from_proto(const Onnx__ModelProto *mp, const pn_decode_opts *o, pn_model *m,
			char *err)
{
	static const pn_decode_opts defaults;
	decoder d = {.m = m, .a = &m->arena, .o = o ? o : &defaults, .err = err};
	m->ir_version = mp->ir_version;
	m->producer = mp->producer_name ? mp->producer_name : "";
	if (decode_opsets(&d, mp))
		return -1;
	return decode_graph(&d, mp->graph, NULL, &m->graph);
}
