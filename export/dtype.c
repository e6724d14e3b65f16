/*
 * dtype.c - float16 and bfloat16 variants of a float32 subgraph.
 *
 * ONNX types ops by type variables: all slots of a node that share a
 * variable hold one dtype, and each variable allows a set of dtypes at each
 * op version (export/dtype_rules.def, generated from the ONNX schemas).  So
 * the float32 values of a graph fall into groups that must change together:
 * values joined through a shared variable of some node.  A group becomes
 * the target dtype when every slot it meets allows that dtype; otherwise it
 * stays float32 (Resize's scales, say, are float32 at every version).  A
 * variant is made only if some graph input or output changes: that is the
 * computation in the new dtype.
 */
#include "export/dtype.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "common/err.h"
#include "common/strmap.h"
#include "schemas/tensor.h"

typedef struct rule {
	const char *op;
	int since;
	const char *in, *out;
} rule;

static const rule rules[] = {
#define RULE(op, since, in, out) {op, since, in, out},
#include "export/dtype_rules.def"
#undef RULE
};

#define MASK_F32 1
#define MASK_F16 2
#define MASK_BF16 4

/* The schema version a node of this opset uses: the latest since <= opset
 * (rules are sorted by op, then since). */
static const rule *rule_for(const char *op, int opset)
{
	const rule *best = NULL;
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
		if (!strcmp(rules[i].op, op) && rules[i].since <= opset)
			best = &rules[i];
	return best;
}

/* Slot k of a spec "a:7 -:1 b:3+": its type variable ('-': its own) and
 * float mask; past the listed slots only a variadic ('+') last one repeats.
 * 0 when the spec has no such slot. */
static int slot_spec(const char *spec, int k, char *var, int *mask)
{
	const char *tok = NULL;
	int i = 0;
	for (const char *p = spec; *p; p++)
		if (*p != ' ' && (p == spec || p[-1] == ' ')) {
			if (i++ <= k)
				tok = p;
		}
	if (!tok || (k >= i && tok[3] != '+'))
		return 0;
	*var = tok[0];
	*mask = tok[2] - '0';
	return 1;
}

static int find_root(int32_t *parent, int v)
{
	while (parent[v] != v)
		v = parent[v] = parent[parent[v]];
	return v;
}

static int is_f32(const pn_graph *g, int v)
{
	return v >= 0 && g->values[v].type.kind == PN_KIND_TENSOR && g->values[v].type.dtype == PN_FLOAT;
}

static const pn_attr *attr_of(const pn_node *nd, const char *name)
{
	for (int i = 0; i < nd->n_attr; i++)
		if (!strcmp(nd->attrs[i].name, name))
			return &nd->attrs[i];
	return NULL;
}

/* Outputs whose dtype an attribute sets: Cast's "to" follows the group, as
 * does a Constant's or ConstantOfShape's value tensor; any other such
 * output (a "dtype" attribute, a Constant given as value_float) stays
 * float32. */
static int output_dtype_pinned(const pn_node *nd)
{
	if (!strcmp(nd->op_type, "Cast"))
		return 0;
	if (!strcmp(nd->op_type, "Constant") || !strcmp(nd->op_type, "ConstantOfShape")) {
		const pn_attr *v = attr_of(nd, "value");
		return !v || v->type != PN_ATTR_TENSOR;
	}
	return attr_of(nd, "dtype") || attr_of(nd, "to");
}

typedef struct groups {
	int32_t *parent;
	uint8_t *allow;      /* per value, then per root: floats every slot allows */
	char why[PN_ERRLEN]; /* the first slot that keeps a value float32 */
} groups;

static void meet_slot(groups *gr, const pn_node *nd, int v, const char *spec, int k, int *first,
		      int bit)
{
	char var = '-';
	int mask;
	if (!slot_spec(spec, k, &var, &mask))
		mask = 0;
	gr->allow[v] &= (uint8_t)mask;
	if (!(mask & bit) && !gr->why[0])
		snprintf(gr->why, sizeof gr->why, "%s (opset %d) does not allow %s there", nd->op_type,
			 nd->opset, pn_dtype_name(bit == MASK_F16 ? PN_FLOAT16 : PN_BFLOAT16));
	if (var >= 'a' && var <= 'z') {
		int *f = &first[var - 'a'];
		if (*f < 0)
			*f = v;
		else
			gr->parent[find_root(gr->parent, v)] = find_root(gr->parent, *f);
	}
}

/* Groups the float32 values of g; 1 (why) for a node no rule covers. */
static int group_values(const pn_graph *g, groups *gr, int bit, char *why)
{
	for (int v = 0; v < g->n_values; v++) {
		gr->parent[v] = v;
		gr->allow[v] = MASK_F32 | MASK_F16 | MASK_BF16;
	}
	for (int i = 0; i < g->n_nodes; i++) {
		const pn_node *nd = &g->nodes[i];
		int touches = 0;
		for (int k = 0; k < nd->n_in; k++)
			touches |= is_f32(g, nd->in[k]);
		for (int k = 0; k < nd->n_out; k++)
			touches |= is_f32(g, nd->out[k]);
		if (!touches)
			continue;   /* integer shape arithmetic needs no rule */
		if (nd->domain && nd->domain[0] && strcmp(nd->domain, "ai.onnx"))
			return snprintf(why, PN_ERRLEN, "op %s of domain %s", nd->op_type, nd->domain), 1;
		for (int k = 0; k < nd->n_attr; k++)
			if (nd->attrs[k].type == PN_ATTR_GRAPH || nd->attrs[k].type == PN_ATTR_GRAPHS)
				return snprintf(why, PN_ERRLEN, "%s holds a nested graph", nd->op_type), 1;
		const rule *r = rule_for(nd->op_type, nd->opset);
		if (!r)
			return snprintf(why, PN_ERRLEN, "no ONNX schema of %s at opset %d", nd->op_type,
					nd->opset), 1;
		int first[26];
		for (int k = 0; k < 26; k++)
			first[k] = -1;
		for (int k = 0; k < nd->n_in; k++)
			if (is_f32(g, nd->in[k]))
				meet_slot(gr, nd, nd->in[k], r->in, k, first, bit);
		for (int k = 0; k < nd->n_out; k++)
			if (is_f32(g, nd->out[k])) {
				meet_slot(gr, nd, nd->out[k], r->out, k, first, bit);
				if (output_dtype_pinned(nd))
					gr->allow[nd->out[k]] = MASK_F32;
			}
	}
	/* a group allows what all its values allow */
	uint8_t *root_allow = malloc((size_t)g->n_values + 1);
	if (!root_allow)
		return snprintf(why, PN_ERRLEN, "out of memory"), -1;
	memset(root_allow, MASK_F32 | MASK_F16 | MASK_BF16, (size_t)g->n_values + 1);
	for (int v = 0; v < g->n_values; v++)
		root_allow[find_root(gr->parent, v)] &= gr->allow[v];
	for (int v = 0; v < g->n_values; v++)
		gr->allow[v] = root_allow[find_root(gr->parent, v)];
	free(root_allow);
	return 0;
}

/* --- rewriting the proto ----------------------------------------------------------------- */

static uint16_t narrow(float f, int dtype)
{
	return dtype == PN_FLOAT16 ? pn_f32_to_f16(f) : pn_f32_to_bf16(f);
}

/* A float32 TensorProto's data as dtype (raw little-endian bytes). */
static int narrow_tensor(Onnx__TensorProto *tp, int dtype, pn_arena *a, char *why)
{
	if (!tp || tp->data_type != PN_FLOAT)
		return 0;
	if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
		return snprintf(why, PN_ERRLEN, "tensor '%s' has external data", tp->name), -1;
	size_t n = tp->has_raw_data ? tp->raw_data.len / 4 : tp->n_float_data;
	uint8_t *b = pn_arena_alloc(a, 2 * n + 1);
	if (!b)
		return snprintf(why, PN_ERRLEN, "out of memory"), -1;
	for (size_t i = 0; i < n; i++) {
		float f;
		if (tp->has_raw_data)
			memcpy(&f, tp->raw_data.data + 4 * i, 4);
		else
			f = tp->float_data[i];
		uint16_t h = narrow(f, dtype);
		b[2 * i] = (uint8_t)(h & 0xff);
		b[2 * i + 1] = (uint8_t)(h >> 8);
	}
	tp->n_float_data = 0;
	tp->float_data = NULL;
	tp->has_raw_data = 1;
	tp->raw_data.len = 2 * n;
	tp->raw_data.data = b;
	tp->data_type = dtype;
	return 0;
}

typedef struct rewrite {
	const pn_graph *g;
	const groups *gr;
	pn_strmap names;    /* value name -> index in g */
	int bit, dtype;
} rewrite;

static int converts(const rewrite *rw, const char *name)
{
	int v = name ? pn_strmap_get(&rw->names, name) : -1;
	return v >= 0 && is_f32(rw->g, v) && (rw->gr->allow[v] & rw->bit);
}

static void retype(const rewrite *rw, Onnx__ValueInfoProto **vi, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		Onnx__TypeProto *tp = vi[i]->type;
		if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && tp->tensor_type &&
		    tp->tensor_type->elem_type == PN_FLOAT && converts(rw, vi[i]->name))
			tp->tensor_type->elem_type = rw->dtype;
	}
}

static int rewrite_nodes(const rewrite *rw, Onnx__GraphProto *gp, pn_arena *a, char *why)
{
	for (size_t i = 0; i < gp->n_node; i++) {
		Onnx__NodeProto *np = gp->node[i];
		if (!np->n_output || !converts(rw, np->output[0]))
			continue;
		for (size_t k = 0; k < np->n_attribute; k++) {
			Onnx__AttributeProto *at = np->attribute[k];
			if (!strcmp(np->op_type, "Cast") && !strcmp(at->name, "to"))
				at->i = rw->dtype;
			else if ((!strcmp(np->op_type, "Constant") || !strcmp(np->op_type, "ConstantOfShape")) &&
				 !strcmp(at->name, "value") && narrow_tensor(at->t, rw->dtype, a, why))
				return -1;
		}
	}
	return 0;
}

static int apply(const pn_graph *g, const groups *gr, Onnx__ModelProto *mp, int dtype, int bit,
		 pn_arena *a, char *why)
{
	rewrite rw = {.g = g, .gr = gr, .bit = bit, .dtype = dtype};
	pn_strmap_init(&rw.names, a, (uint32_t)g->n_values + 1);
	for (int v = 0; v < g->n_values; v++)
		if (g->values[v].name)
			pn_strmap_put(&rw.names, g->values[v].name, v);
	Onnx__GraphProto *gp = mp->graph;
	retype(&rw, gp->input, gp->n_input);
	retype(&rw, gp->output, gp->n_output);
	retype(&rw, gp->value_info, gp->n_value_info);
	for (size_t i = 0; i < gp->n_initializer; i++)
		if (converts(&rw, gp->initializer[i]->name) &&
		    narrow_tensor(gp->initializer[i], dtype, a, why))
			return -1;
	if (gp->n_sparse_initializer)
		return snprintf(why, PN_ERRLEN, "sparse initializers"), -1;
	return rewrite_nodes(&rw, gp, a, why);
}

/* Some graph input or output changes dtype. */
static int boundary_converts(const pn_graph *g, const groups *gr, int bit)
{
	for (int i = 0; i < g->n_inputs; i++)
		if (is_f32(g, g->inputs[i]) && (gr->allow[g->inputs[i]] & bit))
			return 1;
	for (int i = 0; i < g->n_outputs; i++)
		if (is_f32(g, g->outputs[i]) && (gr->allow[g->outputs[i]] & bit))
			return 1;
	return 0;
}

int pn_dtype_variant(const pn_graph *g, Onnx__ModelProto *mp, int dtype, pn_arena *a, char *why)
{
	int bit = dtype == PN_FLOAT16 ? MASK_F16 : dtype == PN_BFLOAT16 ? MASK_BF16 : 0;
	if (!bit)
		return snprintf(why, PN_ERRLEN, "no dtype variants in %s", pn_dtype_name(dtype)), -1;
	int any_f32 = 0;
	for (int v = 0; v < g->n_values; v++) {
		if (g->values[v].type.kind != PN_KIND_TENSOR)
			return snprintf(why, PN_ERRLEN, "it holds a sequence or optional value"), 1;
		any_f32 |= is_f32(g, v);
	}
	if (!any_f32)
		return snprintf(why, PN_ERRLEN, "no float32 tensor"), 1;
	groups gr = {0};
	gr.parent = malloc(sizeof(int32_t) * ((size_t)g->n_values + 1));
	gr.allow = malloc((size_t)g->n_values + 1);
	int rc = gr.parent && gr.allow ? group_values(g, &gr, bit, why)
				       : (snprintf(why, PN_ERRLEN, "out of memory"), -1);
	if (!rc && !boundary_converts(g, &gr, bit)) {
		snprintf(why, PN_ERRLEN, "no float32 input or output can be %s: %s",
			 pn_dtype_name(dtype), gr.why[0] ? gr.why : "kept float32");
		rc = 1;
	}
	if (!rc)
		rc = apply(g, &gr, mp, dtype, bit, a, why);
	free(gr.parent);
	free(gr.allow);
	return rc;
}

const char *pn_dtype_suffix(int dtype)
{
	return dtype == PN_FLOAT16 ? "f16" : dtype == PN_BFLOAT16 ? "bf16" : "";
}
