/*
 * form.c - building the canonical-labelling problem (canon.h) of a cut or of
 * a nested graph from the IR, and hashing the result.
 */
#include "canon/form.h"

#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "common/err.h"
#include "canon/labels.h"
#include "schemas/ops.h"

/* The problem under construction, with the IR value behind each value. */
/* IR value -> cgraph value: a small open-addressing map, so building the
 * problem of a 5-node cut of a 5000-value model costs 5 nodes, not 5000. */
typedef struct slot_map {
	int32_t *key, *val;
	uint32_t cap, n;
} slot_map;

typedef struct builder {
	pn_arena a;
	pn_cgraph cg;
	int32_t *ir_value;     /* cgraph value -> IR value */
	slot_map slots;        /* IR value -> cgraph value */
	int cap_v;
	int mode;
	const pn_graph *g;
	const pn_infer_result *r;   /* NULL for nested graphs */
	const uint8_t *in_cut;      /* IR node -> in the cut (NULL: all) */
	const uint64_t *outer_colour; /* a body's: the parent graph's value colours */
	const uint64_t *colour;     /* this graph's value colours (NULL: none needed) */
	int colour_pass;            /* building only to find those colours */
} builder;

static int slots_init(builder *b, uint32_t expected)
{
	uint32_t cap = 16;
	while (cap < 2 * expected)
		cap *= 2;
	b->slots.key = pn_arena_alloc(&b->a, sizeof(int32_t) * cap);
	b->slots.val = pn_arena_alloc(&b->a, sizeof(int32_t) * cap);
	if (!b->slots.key || !b->slots.val)
		return -1;
	for (uint32_t i = 0; i < cap; i++)
		b->slots.key[i] = -1;
	b->slots.cap = cap;
	b->slots.n = 0;
	return 0;
}

static int32_t slot_get(const builder *b, int32_t v)
{
	for (uint32_t i = ((uint32_t)v * 2654435761u) & (b->slots.cap - 1);; i = (i + 1) & (b->slots.cap - 1)) {
		if (b->slots.key[i] == v)
			return b->slots.val[i];
		if (b->slots.key[i] < 0)
			return -1;
	}
}

static int slot_put(builder *b, int32_t v, int32_t k)
{
	if (2 * (b->slots.n + 1) > b->slots.cap) {
		slot_map old = b->slots;
		if (slots_init(b, old.cap))
			return -1;
		for (uint32_t i = 0; i < old.cap; i++)
			if (old.key[i] >= 0 && slot_put(b, old.key[i], old.val[i]))
				return -1;
	}
	uint32_t i = ((uint32_t)v * 2654435761u) & (b->slots.cap - 1);
	while (b->slots.key[i] >= 0)
		i = (i + 1) & (b->slots.cap - 1);
	b->slots.key[i] = v;
	b->slots.val[i] = k;
	b->slots.n++;
	return 0;
}

static int grow_values(builder *b)
{
	if (b->cg.nv < b->cap_v)
		return 0;
	int cap = b->cap_v ? b->cap_v * 2 : 32;
	void *p[5] = {
		pn_arena_alloc(&b->a, sizeof(uint8_t) * (size_t)cap),
		pn_arena_alloc(&b->a, sizeof(int32_t) * (size_t)cap),
		pn_arena_alloc(&b->a, sizeof(int32_t) * (size_t)cap),
		pn_arena_alloc(&b->a, sizeof(pn_blob) * (size_t)cap),
		pn_arena_alloc(&b->a, sizeof(int32_t) * (size_t)cap),
	};
	for (int i = 0; i < 5; i++)
		if (!p[i])
			return -1;
	size_t n = (size_t)b->cg.nv;
	if (n) {
		memcpy(p[0], b->cg.v_kind, n);
		memcpy(p[1], b->cg.v_in_pos, n * 4);
		memcpy(p[2], b->cg.v_out_pos, n * 4);
		memcpy(p[3], b->cg.v_label, n * sizeof(pn_blob));
		memcpy(p[4], b->ir_value, n * 4);
	}
	b->cg.v_kind = p[0];
	b->cg.v_in_pos = p[1];
	b->cg.v_out_pos = p[2];
	b->cg.v_label = p[3];
	b->ir_value = p[4];
	b->cap_v = cap;
	return 0;
}

static const pn_type *type_of(const builder *b, int v)
{
	return b->r ? &b->r->v[v].type : &b->g->values[v].type;
}

static const pn_tensor *known_value(const builder *b, int v)
{
	if (b->g->values[v].data)
		return b->g->values[v].data;
	return b->r ? b->r->v[v].value : NULL;
}

static int produced_inside(const builder *b, int v)
{
	int p = b->g->values[v].producer;
	return p >= 0 && (!b->in_cut || b->in_cut[p]);
}

/* Adds IR value v (once) with its kind and label. */
static int add_value(builder *b, int v)
{
	int32_t known_slot = slot_get(b, v);
	if (known_slot >= 0)
		return known_slot;
	if (grow_values(b))
		return -1;
	int k = b->cg.nv++;
	const pn_value *val = &b->g->values[v];
	const pn_tensor *known = known_value(b, v);
	pn_buf lb = {0};
	uint8_t kind;
	int32_t in_pos = -1;
	if (produced_inside(b, v)) {
		kind = PN_CV_INNER;
	} else if (known || val->meta) {
		kind = PN_CV_CONST;
	} else {
		kind = PN_CV_INPUT;
		if (!b->r && val->role == PN_ROLE_INPUT)   /* a body's formal input */
			for (int i = 0; i < b->g->n_inputs; i++)
				if (b->g->inputs[i] == v)
					in_pos = i;
	}
	/* A body's captured value is typed by the outer operand it is wired
	 * to (the owning node's label sees that); its own copy of the type is
	 * whatever the file declared at that point, so it is left out.  What
	 * it carries instead is the outer value's colour: two captured values
	 * the body alone cannot tell apart (the operands of an Equal) would
	 * otherwise be put in an order the file decides, and the owning node
	 * would wire its captures in that order. */
	if (!b->r && val->role == PN_ROLE_OUTER) {
		pn_buf_u8(&lb, 0xca);
		if (b->outer_colour)
			pn_buf_varint(&lb, b->outer_colour[val->outer]);
	} else
		pn_type_label(type_of(b, v), b->mode, &lb);
	if (kind == PN_CV_CONST) {
		pn_buf_u8(&lb, known ? 1 : 2);
		if (known && b->mode == PN_LABEL_EXACT)
			pn_tensor_label(known, &lb);
	}
	if (lb.oom)
		return -1;
	b->cg.v_kind[k] = kind;
	b->cg.v_in_pos[k] = in_pos;
	b->cg.v_out_pos[k] = -1;
	b->cg.v_label[k] = (pn_blob){pn_arena_memdup(&b->a, lb.p, lb.n), lb.n};
	b->ir_value[k] = v;
	pn_buf_free(&lb);
	return slot_put(b, v, k) ? -1 : k;
}

/* The colouring pass adds a node's captured values as vertices of their
 * own, with no edge: their labels (a constant's contents, an input's type)
 * still colour them, and nothing in it depends on an order of captures. */
static int add_captured_alone(builder *b, const pn_node *n)
{
	for (int i = 0; i < n->n_attr; i++) {
		const pn_attr *at = &n->attrs[i];
		int ng = at->type == PN_ATTR_GRAPH ? 1 : at->type == PN_ATTR_GRAPHS ? at->n : 0;
		for (int k = 0; k < ng; k++) {
			const pn_graph *sub = at->type == PN_ATTR_GRAPH ? at->g : at->graphs[k];
			for (int j = 0; j < sub->n_outer; j++)
				if (add_value(b, sub->values[sub->outer[j]].outer) < 0)
					return -1;
		}
	}
	return 0;
}

/* A node and its wiring: listed inputs, then the values its nested graphs
 * capture.  In a colouring pass (no context colours yet) the captures are
 * left out: their order is only canonical once the colours tell the
 * captured values apart, and refinement without them is still invariant. */
static int add_node(builder *b, int ni, int slot)
{
	const pn_node *n = &b->g->nodes[ni];
	pn_buf lb = {0};
	pn_captures caps = {0};
	if (pn_node_label(n, b->mode, b->colour, &lb, b->colour_pass ? NULL : &caps) ||
	    (b->colour_pass && add_captured_alone(b, n))) {
		pn_buf_free(&lb);
		free(caps.v);
		return -1;
	}
	b->cg.n_label[slot] = (pn_blob){pn_arena_memdup(&b->a, lb.p, lb.n), lb.n};
	pn_buf_free(&lb);
	/* Before opset 7, Add/Mul/... broadcast B onto A when the node says
	 * broadcast=1: then operand order matters. */
	b->cg.n_comm[slot] = n->op >= 0 && (pn_ops[n->op].flags & F_COMM) &&
			     !pn_attr_int(n, "broadcast", 0);
	int nin = n->n_in + caps.n;
	b->cg.n_nin[slot] = nin;
	b->cg.n_in[slot] = pn_arena_alloc(&b->a, sizeof(int32_t) * (size_t)(nin + 1));
	b->cg.n_nout[slot] = n->n_out;
	b->cg.n_out[slot] = pn_arena_alloc(&b->a, sizeof(int32_t) * (size_t)(n->n_out + 1));
	int rc = b->cg.n_in[slot] && b->cg.n_out[slot] ? 0 : -1;
	for (int k = 0; !rc && k < nin; k++) {
		int v = k < n->n_in ? n->in[k] : caps.v[k - n->n_in];
		b->cg.n_in[slot][k] = v >= 0 ? add_value(b, v) : -1;
		if (v >= 0 && b->cg.n_in[slot][k] < 0)
			rc = -1;
	}
	for (int k = 0; !rc && k < n->n_out; k++) {
		int v = n->out[k];
		b->cg.n_out[slot][k] = v >= 0 ? add_value(b, v) : -1;
		if (v >= 0 && b->cg.n_out[slot][k] < 0)
			rc = -1;
	}
	free(caps.v);
	return rc;
}

static int init_builder(builder *b, const pn_graph *g, const pn_infer_result *r, int mode, int nn)
{
	memset(b, 0, sizeof(*b));
	pn_arena_init(&b->a, 0);
	b->g = g;
	b->r = r;
	b->mode = mode;
	b->cg.nn = nn;
	b->cg.n_label = pn_arena_alloc(&b->a, sizeof(pn_blob) * (size_t)(nn + 1));
	b->cg.n_comm = pn_arena_alloc(&b->a, (size_t)nn + 1);
	b->cg.n_nin = pn_arena_alloc(&b->a, sizeof(int32_t) * (size_t)(nn + 1));
	b->cg.n_nout = pn_arena_alloc(&b->a, sizeof(int32_t) * (size_t)(nn + 1));
	b->cg.n_in = pn_arena_alloc(&b->a, sizeof(void *) * (size_t)(nn + 1));
	b->cg.n_out = pn_arena_alloc(&b->a, sizeof(void *) * (size_t)(nn + 1));
	if (slots_init(b, (uint32_t)(4 * nn + 16)) || !b->cg.n_label || !b->cg.n_comm ||
	    !b->cg.n_nin || !b->cg.n_nout || !b->cg.n_in || !b->cg.n_out)
		return -1;
	return 0;
}

/* --- problems: a cut or a nested graph, built in two passes ---------------------- */

/* What is labelled: a cut of a model's graph (typed by r), or a nested
 * graph (all its nodes; its captured values coloured by its parent). */
typedef struct problem {
	const pn_graph *g;
	const pn_infer_result *r;
	const int32_t *nodes;
	int n;
	const uint8_t *in_cut;        /* a cut's nodes (NULL: a nested graph) */
	int mode;
	const uint64_t *outer_colour; /* a nested graph's parent's value colours */
} problem;

/* Marks the cut's values read outside it (or graph outputs) as outputs. */
static void mark_outputs(builder *b)
{
	for (int k = 0; k < b->cg.nv; k++) {
		int v = b->ir_value[k];
		const pn_value *val = &b->g->values[v];
		if (b->cg.v_kind[k] != PN_CV_INNER)
			continue;
		int outside = val->is_output;
		for (int c = 0; c < val->n_consumers && !outside; c++)
			outside = !b->in_cut[val->consumers[c]];
		if (outside)
			b->cg.v_out_pos[k] = 0;
	}
}

/* A nested graph's boundary: formal inputs, captured values, and outputs
 * in their positions. */
static int add_body_boundary(builder *b)
{
	const pn_graph *g = b->g;
	for (int i = 0; i < g->n_inputs; i++)
		if (add_value(b, g->inputs[i]) < 0)
			return -1;
	for (int i = 0; i < g->n_outer; i++)
		if (add_value(b, g->outer[i]) < 0)
			return -1;
	for (int i = 0; i < g->n_outputs; i++) {
		int k = add_value(b, g->outputs[i]);
		if (k < 0)
			return -1;
		if (b->cg.v_out_pos[k] < 0)
			b->cg.v_out_pos[k] = i;
	}
	b->cg.ordered_outputs = 1;
	return 0;
}

static int build_problem(builder *b, const problem *p, const uint64_t *colour, int colour_pass)
{
	if (init_builder(b, p->g, p->r, p->mode, p->n))
		return -1;
	b->in_cut = p->in_cut;
	b->outer_colour = p->outer_colour;
	b->colour = colour;
	b->colour_pass = colour_pass;
	for (int i = 0; i < p->n; i++)
		if (add_node(b, p->nodes[i], i))
			return -1;
	if (p->in_cut)
		mark_outputs(b);
	else if (add_body_boundary(b))
		return -1;
	return 0;
}

static int captures_anything(const problem *p)
{
	for (int i = 0; i < p->n; i++) {
		const pn_node *n = &p->g->nodes[p->nodes[i]];
		for (int a = 0; a < n->n_attr; a++) {
			const pn_attr *at = &n->attrs[a];
			if (at->type == PN_ATTR_GRAPH && at->g->n_outer)
				return 1;
			for (int k = 0; at->type == PN_ATTR_GRAPHS && k < at->n; k++)
				if (at->graphs[k]->n_outer)
					return 1;
		}
	}
	return 0;
}

/* The colours (by IR value) in whose light nested graphs order what they
 * capture: refinement of the problem built without the captures' edges,
 * so they depend on the computation and not on any order of captures.
 * NULL (and 0) when no node captures anything. */
static int context_colours(const problem *p, uint64_t **out)
{
	*out = NULL;
	if (!captures_anything(p))
		return 0;
	builder b;
	int rc = build_problem(&b, p, NULL, 1);
	uint64_t *c = rc ? NULL : malloc(sizeof(uint64_t) * (size_t)(b.cg.nv + b.cg.nn + 1));
	uint64_t *colour = c ? calloc((size_t)p->g->n_values + 1, sizeof(uint64_t)) : NULL;
	if (!colour || pn_canon_colours(&b.cg, c))
		rc = -1;
	for (int k = 0; !rc && k < b.cg.nv; k++)
		colour[b.ir_value[k]] = c[k];
	free(c);
	pn_arena_free(&b.a);
	if (rc) {
		free(colour);
		return -1;
	}
	*out = colour;
	return 0;
}

/* Builds p with its context colours into b (whose arena the caller frees
 * either way); the colours are only read while building. */
static int build_in_context(builder *b, const problem *p)
{
	uint64_t *colour = NULL;
	int rc = context_colours(p, &colour);
	if (rc) {
		memset(b, 0, sizeof(*b));
		pn_arena_init(&b->a, 0);
	} else {
		rc = build_problem(b, p, colour, 0);
	}
	free(colour);
	return rc;
}

/* --- nested graphs ------------------------------------------------------------------ */

int pn_body_canon(const pn_graph *g, int mode, const uint64_t *outer_colour, pn_buf *out,
		  int32_t **captured_order)
{
	problem p = {g, NULL, g->topo, g->n_nodes, NULL, mode, outer_colour};
	builder b;
	pn_canon_out co;
	int rc = build_in_context(&b, &p);
	if (!rc)
		rc = pn_canon(&b.cg, mode == PN_LABEL_EXACT ? PN_CK_BODY : PN_CK_BODY_PATTERN, &co);
	if (!rc) {
		pn_buf_blob(out, co.bytes, co.len);
		if (captured_order) {
			/* the outer values, in the order canon put them */
			*captured_order = malloc(sizeof(int32_t) * (size_t)(g->n_outer + 1));
			int k = 0;
			for (int i = 0; *captured_order && i < b.cg.nv; i++) {
				int v = b.ir_value[co.value_order[i]];
				if (g->values[v].role == PN_ROLE_OUTER)
					(*captured_order)[k++] = v;
			}
		}
		pn_canon_out_free(&co);
	}
	pn_arena_free(&b.a);
	return rc;
}

/* --- cuts --------------------------------------------------------------------------- */

static int cut_canon(const pn_graph *g, const pn_infer_result *r, const int32_t *nodes, int n,
		     const uint8_t *in_cut, int mode, pn_canon_out *co, builder *b)
{
	problem p = {g, r, nodes, n, in_cut, mode, NULL};
	if (build_in_context(b, &p))
		return -1;
	return pn_canon(&b->cg, mode == PN_LABEL_EXACT ? PN_CK_SUBGRAPH : PN_CK_PATTERN, co);
}

static int count_boundary(pn_form *f, const builder *b, const pn_canon_out *co)
{
	const pn_cgraph *cg = &b->cg;
	for (int k = 0; k < cg->nv; k++) {
		f->n_inputs += cg->v_kind[k] == PN_CV_INPUT;
		f->n_consts += cg->v_kind[k] == PN_CV_CONST;
		f->n_outputs += cg->v_out_pos[k] >= 0;
	}
	/* the decoder lists a cut's inputs in canonical value order */
	f->input_values = malloc(sizeof(int32_t) * (size_t)(f->n_inputs + 1));
	if (!f->input_values)
		return -1;
	for (int i = 0, j = 0; i < cg->nv; i++) {
		int k = co->value_order[i];
		if (cg->v_kind[k] == PN_CV_INPUT)
			f->input_values[j++] = b->ir_value[k];
	}
	return 0;
}

int pn_form_of_cut(const pn_graph *g, const pn_infer_result *r, const int32_t *nodes, int n,
		   pn_form *out, char *err)
{
	memset(out, 0, sizeof(*out));
	uint8_t *in_cut = calloc((size_t)g->n_nodes + 1, 1);
	if (!in_cut)
		return pn_fail(err, "out of memory");
	for (int i = 0; i < n; i++)
		in_cut[nodes[i]] = 1;
	builder b;
	pn_canon_out co = {0}, cp = {0};
	int rc = cut_canon(g, r, nodes, n, in_cut, PN_LABEL_EXACT, &co, &b);
	if (!rc) {
		out->bytes = co.bytes;
		out->len = co.len;
		co.bytes = NULL;
		out->hash = pn_key_of(out->bytes, out->len);
		out->n_nodes = n;
		out->approximate = co.approximate;
		out->ops = calloc((size_t)n + 1, sizeof(char *));
		for (int i = 0; out->ops && i < n; i++)
			out->ops[i] = strdup(g->nodes[nodes[co.node_order[i]]].op_type);
		if (!out->ops || count_boundary(out, &b, &co))
			rc = -1;
	}
	pn_arena_free(&b.a);
	if (!rc) {
		rc = cut_canon(g, r, nodes, n, in_cut, PN_LABEL_PATTERN, &cp, &b);
		if (!rc) {
			out->pattern = pn_key_of(cp.bytes, cp.len);
			out->approximate |= cp.approximate;
		}
		pn_arena_free(&b.a);
	}
	pn_canon_out_free(&co);
	pn_canon_out_free(&cp);
	free(in_cut);
	if (rc) {
		pn_form_free(out);
		return pn_fail(err, "canonical form failed (out of memory)");
	}
	return 0;
}

int pn_node_colours(const pn_graph *g, const pn_infer_result *r, const uint8_t *mask,
		    uint64_t *colour, char *err)
{
	int n = 0;
	for (int i = 0; i < g->n_nodes; i++)
		n += mask[i] != 0;
	int32_t *nodes = malloc(sizeof(int32_t) * (size_t)(n + 1));
	builder b;
	memset(&b, 0, sizeof(b));
	pn_arena_init(&b.a, 0);
	int rc = nodes ? 0 : -1;
	n = 0;
	for (int i = 0; nodes && i < g->n_nodes; i++)
		if (mask[i])
			nodes[n++] = i;
	problem p = {g, r, nodes, n, mask, PN_LABEL_EXACT, NULL};
	if (!rc) {
		pn_arena_free(&b.a);
		rc = build_in_context(&b, &p);
	}
	uint64_t *c = rc ? NULL : malloc(sizeof(uint64_t) * (size_t)(b.cg.nv + n + 1));
	if (!c || pn_canon_colours(&b.cg, c))
		rc = -1;
	for (int i = 0; !rc && i < g->n_nodes; i++)
		colour[i] = 0;
	for (int i = 0; !rc && i < n; i++)
		colour[nodes[i]] = c[b.cg.nv + i];
	free(c);
	pn_arena_free(&b.a);
	free(nodes);
	return rc ? pn_fail(err, "node colouring failed (out of memory)") : 0;
}

void pn_form_free(pn_form *f)
{
	for (int i = 0; f->ops && i < f->n_nodes; i++)
		free(f->ops[i]);
	free(f->bytes);
	free(f->ops);
	free(f->input_values);
	memset(f, 0, sizeof(*f));
}
