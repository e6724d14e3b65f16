/*
 * form.c - building the canonical-labelling problem (canon.h) of a cut or of
 * a nested graph from the IR, and hashing the result.
 */
#include "canon/form.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

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
	struct label_memo *memo;    /* the model's labels, or NULL */
} builder;

/* Labels of one model's nodes and values, kept across its cuts (a cut's
 * labels depend on the node or value alone, see labels.h): a node's label
 * (not of nodes with nested graphs, whose label depends on the mode), and a
 * value's exact label as an input or inner value, and as a constant. */
typedef struct label_memo {
	const pn_graph *g;
	pn_arena a;
	pn_blob *node;
	pn_blob *value[2];
	uint8_t *in_cut;            /* all zero between cuts */
} label_memo;

static int plain_node(const pn_node *n)
{
	for (int a = 0; a < n->n_attr; a++)
		if (n->attrs[a].type == PN_ATTR_GRAPH || n->attrs[a].type == PN_ATTR_GRAPHS)
			return 0;
	return 1;
}

static label_memo *value_memo(const builder *b)
{
	return b->memo && b->r && b->mode == PN_LABEL_EXACT ? b->memo : NULL;
}


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

int pn_const_source(const pn_graph *g, const pn_infer_result *r, int v)
{
	for (int hops = 0; v >= 0 && v < g->n_values && hops < 64; hops++) {
		const pn_value *val = &g->values[v];
		if (val->data || val->meta || (r && r->v[v].value))
			return v;
		if (val->role != PN_ROLE_NODE || val->producer < 0)
			return -1;
		const pn_node *n = &g->nodes[val->producer];
		if (n->op != PN_OP_Identity || n->n_in < 1 || n->n_out != 1)
			return -1;
		v = n->in[0];
	}
	return -1;
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
	int src = produced_inside(b, v) ? -1 : pn_const_source(b->g, b->r, v);
	const pn_tensor *known = src >= 0 ? known_value(b, src) : NULL;
	pn_buf lb = {0};
	uint8_t kind;
	int32_t in_pos = -1;
	if (produced_inside(b, v)) {
		kind = PN_CV_INNER;
	} else if (src >= 0) {
		kind = PN_CV_CONST;
	} else {
		kind = PN_CV_INPUT;
		if (!b->r && val->role == PN_ROLE_INPUT)   /* a body's formal input */
			for (int i = 0; i < b->g->n_inputs; i++)
				if (b->g->inputs[i] == v)
					in_pos = i;
	}
	label_memo *m = value_memo(b);
	int as_const = kind == PN_CV_CONST;
	if (m && m->value[as_const][v].p) {
		b->cg.v_kind[k] = kind;
		b->cg.v_in_pos[k] = in_pos;
		b->cg.v_out_pos[k] = -1;
		b->cg.v_label[k] = m->value[as_const][v];
		b->ir_value[k] = v;
		return slot_put(b, v, k) ? -1 : k;
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
	b->cg.v_label[k] = (pn_blob){pn_arena_memdup(m ? &m->a : &b->a, lb.p, lb.n), lb.n};
	if (m)
		m->value[as_const][v] = b->cg.v_label[k];
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
	/* the memo serves every mode and pass: a node without nested graphs
	 * has one label and captures nothing */
	label_memo *m = b->memo && plain_node(n) ? b->memo : NULL;
	int memo_hit = m && m->node[ni].p;
	if ((!memo_hit && pn_node_label(n, b->mode, b->colour, &lb, b->colour_pass ? NULL : &caps)) ||
	    (b->colour_pass && add_captured_alone(b, n))) {
		pn_buf_free(&lb);
		free(caps.v);
		return -1;
	}
	if (memo_hit)
		b->cg.n_label[slot] = m->node[ni];
	else
		b->cg.n_label[slot] = (pn_blob){pn_arena_memdup(m ? &m->a : &b->a, lb.p, lb.n), lb.n};
	if (m)
		m->node[ni] = b->cg.n_label[slot];
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
	label_memo *memo;             /* a cut's model's labels, or NULL */
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
	b->memo = p->in_cut ? p->memo : NULL;
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
	problem p = {g, NULL, g->topo, g->n_nodes, NULL, mode, outer_colour, NULL};
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

static int count_boundary(pn_form *f, const builder *b, const pn_canon_out *co)
{
	const pn_cgraph *cg = &b->cg;
	for (int k = 0; k < cg->nv; k++) {
		f->n_inputs += cg->v_kind[k] == PN_CV_INPUT;
		f->n_consts += cg->v_kind[k] == PN_CV_CONST;
		f->n_outputs += cg->v_out_pos[k] >= 0;
	}
	/* the decoder lists a cut's inputs in canonical value order, and names
	 * its values v<canonical index> */
	f->input_values = malloc(sizeof(int32_t) * (size_t)(f->n_inputs + 2 * f->n_consts + 1));
	if (!f->input_values)
		return -1;
	f->const_values = f->input_values + f->n_inputs;
	f->const_slots = f->const_values + f->n_consts;
	for (int i = 0, j = 0, c = 0; i < cg->nv; i++) {
		int k = co->value_order[i];
		if (cg->v_kind[k] == PN_CV_INPUT)
			f->input_values[j++] = b->ir_value[k];
		else if (cg->v_kind[k] == PN_CV_CONST) {
			f->const_values[c] = pn_const_source(b->g, b->r, b->ir_value[k]);
			f->const_slots[c++] = i;
		}
	}
	return 0;
}

/* --- the exact cache (form.h) ------------------------------------------------------- */

typedef struct cache_entry {
	uint64_t h;
	const uint8_t *key;      /* the problem as built (in this block) */
	size_t klen;
	const uint8_t *bytes;    /* exact canonical form */
	size_t len;
	const int32_t *value_order, *node_order;
	pn_key pattern;
	int approximate;
} cache_entry;

/* Entries by key hash, open addressing. */
typedef struct form_table {
	cache_entry **slot;
	uint32_t cap, n;
	size_t bytes;
} form_table;

/* Two tables: exact problems (whole forms), and pattern problems (only
 * the pattern hash: shape variants of one computation share it, so a miss
 * of the exact table often still skips the pattern's canonical labelling). */
struct pn_form_cache {
	form_table exact, pattern;
	size_t max_bytes;
	uint64_t lookups, hits, pattern_hits;
	pn_buf key, pkey;        /* scratch: the keys being looked up */
	label_memo memo;         /* of the model pn_form_cache_model named */
};

#define CACHE_DEFAULT_BYTES ((size_t)32 << 20)
#define CACHE_MAX_KEY ((size_t)64 << 10)   /* bigger problems (large constants) are not kept */

pn_form_cache *pn_form_cache_new(size_t max_bytes)
{
	pn_form_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->max_bytes = max_bytes ? max_bytes : CACHE_DEFAULT_BYTES;
	return c;
}

static void table_clear(form_table *t)
{
	for (uint32_t i = 0; i < t->cap; i++)
		free(t->slot[i]);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}

static void cache_clear(pn_form_cache *c)
{
	table_clear(&c->exact);
	table_clear(&c->pattern);
}

static void memo_free(label_memo *m)
{
	pn_arena_free(&m->a);
	free(m->node);
	free(m->value[0]);
	free(m->value[1]);
	free(m->in_cut);
	memset(m, 0, sizeof(*m));
}

int pn_form_cache_model(pn_form_cache *c, const pn_graph *g)
{
	if (!c)
		return 0;
	label_memo *m = &c->memo;
	memo_free(m);
	pn_arena_init(&m->a, 0);
	m->node = calloc((size_t)g->n_nodes + 1, sizeof(pn_blob));
	m->value[0] = calloc((size_t)g->n_values + 1, sizeof(pn_blob));
	m->value[1] = calloc((size_t)g->n_values + 1, sizeof(pn_blob));
	m->in_cut = calloc((size_t)g->n_nodes + 1, 1);
	if (!m->node || !m->value[0] || !m->value[1] || !m->in_cut) {
		memo_free(m);
		return -1;
	}
	m->g = g;
	return 0;
}

void pn_form_cache_free(pn_form_cache *c)
{
	if (!c)
		return;
	memo_free(&c->memo);
	cache_clear(c);
	pn_buf_free(&c->key);
	pn_buf_free(&c->pkey);
	free(c);
}

void pn_form_cache_counts(const pn_form_cache *c, uint64_t *lookups, uint64_t *hits,
			  uint64_t *pattern_hits)
{
	*lookups = c ? c->lookups : 0;
	*hits = c ? c->hits : 0;
	*pattern_hits = c ? c->pattern_hits : 0;
}

/* Nested graphs wire their captures in an order of their own canonical
 * form in each mode, so only cuts without them are cached. */
static int cacheable(const pn_graph *g, const int32_t *nodes, int n)
{
	for (int i = 0; i < n; i++) {
		const pn_node *nd = &g->nodes[nodes[i]];
		for (int a = 0; a < nd->n_attr; a++)
			if (nd->attrs[a].type == PN_ATTR_GRAPH || nd->attrs[a].type == PN_ATTR_GRAPHS)
				return 0;
	}
	return 1;
}

/* Everything pn_canon reads of the problem, in its own order.  The pattern
 * problem of a cut without nested graphs has the same wiring, and each of
 * its labels is a prefix-projection of the exact one (type: kind and rank
 * of kind, dtype, rank, dims; constants: the same marker, no contents), so
 * this key fixes both forms. */
static void problem_key(const pn_cgraph *cg, pn_buf *k)
{
	k->n = 0;
	pn_buf_varint(k, (uint64_t)cg->nv);
	pn_buf_varint(k, (uint64_t)cg->nn);
	pn_buf_u8(k, (uint8_t)cg->ordered_outputs);
	for (int v = 0; v < cg->nv; v++) {
		pn_buf_u8(k, cg->v_kind[v]);
		pn_buf_svarint(k, cg->v_in_pos[v]);
		pn_buf_svarint(k, cg->v_out_pos[v]);
		pn_buf_blob(k, cg->v_label[v].p, cg->v_label[v].n);
	}
	for (int i = 0; i < cg->nn; i++) {
		pn_buf_blob(k, cg->n_label[i].p, cg->n_label[i].n);
		pn_buf_u8(k, cg->n_comm[i]);
		pn_buf_varint(k, (uint64_t)cg->n_nin[i]);
		for (int j = 0; j < cg->n_nin[i]; j++)
			pn_buf_svarint(k, cg->n_in[i][j]);
		pn_buf_varint(k, (uint64_t)cg->n_nout[i]);
		for (int j = 0; j < cg->n_nout[i]; j++)
			pn_buf_svarint(k, cg->n_out[i][j]);
	}
}

static const cache_entry *table_find(const form_table *t, uint64_t h, const pn_buf *key)
{
	for (uint32_t i = (uint32_t)h & (t->cap - 1); t->cap && t->slot[i]; i = (i + 1) & (t->cap - 1)) {
		const cache_entry *e = t->slot[i];
		if (e->h == h && e->klen == key->n && !memcmp(e->key, key->p, e->klen))
			return e;
	}
	return NULL;
}

static int table_grow(form_table *t)
{
	uint32_t cap = t->cap ? t->cap * 2 : 1024;
	cache_entry **slot = calloc(cap, sizeof(*slot));
	if (!slot)
		return -1;
	for (uint32_t i = 0; i < t->cap; i++) {
		cache_entry *e = t->slot[i];
		if (!e)
			continue;
		uint32_t k = (uint32_t)e->h & (cap - 1);
		while (slot[k])
			k = (k + 1) & (cap - 1);
		slot[k] = e;
	}
	free(t->slot);
	t->slot = slot;
	t->cap = cap;
	return 0;
}

/* A block of `need` bytes for an entry of t, or NULL (then nothing is
 * kept); the whole cache starts afresh when it would pass its bound. */
static cache_entry *table_block(pn_form_cache *c, form_table *t, size_t need)
{
	if (c->exact.bytes + c->pattern.bytes + need > c->max_bytes)
		cache_clear(c);
	if (2 * (t->n + 1) > t->cap && table_grow(t))
		return NULL;
	return malloc(need);
}

static void table_insert(form_table *t, cache_entry *e, size_t need)
{
	uint32_t k = (uint32_t)e->h & (t->cap - 1);
	while (t->slot[k])
		k = (k + 1) & (t->cap - 1);
	t->slot[k] = e;
	t->n++;
	t->bytes += need;
}

static const cache_entry *cache_find(pn_form_cache *c, uint64_t h)
{
	c->lookups++;
	const cache_entry *e = table_find(&c->exact, h, &c->key);
	c->hits += e != NULL;
	return e;
}

/* Keeps the current key's result; a failure only loses the entry. */
static void cache_put(pn_form_cache *c, uint64_t h, const pn_form *f, const pn_canon_out *co,
		      int nv)
{
	size_t need = sizeof(cache_entry) + c->key.n + f->len + sizeof(int32_t) * (size_t)(nv + f->n_nodes);
	uint8_t *blk = (uint8_t *)table_block(c, &c->exact, need);
	if (!blk)
		return;
	cache_entry *e = (cache_entry *)blk;
	int32_t *vo = (int32_t *)(blk + sizeof(cache_entry));
	int32_t *no = vo + nv;
	uint8_t *key = (uint8_t *)(no + f->n_nodes);
	uint8_t *bytes = key + c->key.n;
	memcpy(vo, co->value_order, sizeof(int32_t) * (size_t)nv);
	memcpy(no, co->node_order, sizeof(int32_t) * (size_t)f->n_nodes);
	memcpy(key, c->key.p, c->key.n);
	memcpy(bytes, f->bytes, f->len);
	*e = (cache_entry){h, key, c->key.n, bytes, f->len, vo, no, f->pattern, f->approximate};
	table_insert(&c->exact, e, need);
}

/* The pattern table: the key is the pattern problem (c->pkey) itself. */
static const cache_entry *pattern_find(pn_form_cache *c, uint64_t h)
{
	const cache_entry *e = table_find(&c->pattern, h, &c->pkey);
	c->pattern_hits += e != NULL;
	return e;
}

static void pattern_put(pn_form_cache *c, uint64_t h, pn_key pattern, int approximate)
{
	size_t need = sizeof(cache_entry) + c->pkey.n;
	uint8_t *blk = (uint8_t *)table_block(c, &c->pattern, need);
	if (!blk)
		return;
	cache_entry *e = (cache_entry *)blk;
	uint8_t *key = blk + sizeof(cache_entry);
	memcpy(key, c->pkey.p, c->pkey.n);
	*e = (cache_entry){h, key, c->pkey.n, NULL, 0, NULL, NULL, pattern, approximate};
	table_insert(&c->pattern, e, need);
}

/* --- cuts, continued ------------------------------------------------------------------ */

/* The cut's problem in mode into b (whose arena the caller frees either way). */
static int cut_build(const pn_graph *g, const pn_infer_result *r, const int32_t *nodes, int n,
		     const uint8_t *in_cut, int mode, label_memo *memo, builder *b)
{
	problem p = {g, r, nodes, n, in_cut, mode, NULL, memo};
	return build_in_context(b, &p);
}

/* The exact form's fields of out from the canonical result co. */
static int fill_exact(pn_form *out, const pn_graph *g, const int32_t *nodes, int n,
		      const builder *b, const pn_canon_out *co)
{
	out->hash = pn_key_of(out->bytes, out->len);
	out->n_nodes = n;
	/* one block, the pointers then the strings: a cut's form is made and
	 * freed per candidate, so its op names are one malloc, not n */
	size_t chars = 0;
	for (int i = 0; i < n; i++)
		chars += strlen(g->nodes[nodes[co->node_order[i]]].op_type) + 1;
	out->ops = malloc(sizeof(char *) * ((size_t)n + 1) + chars);
	char *at = out->ops ? (char *)(out->ops + n + 1) : NULL;
	for (int i = 0; out->ops && i < n; i++) {
		const char *op = g->nodes[nodes[co->node_order[i]]].op_type;
		size_t len = strlen(op) + 1;
		out->ops[i] = memcpy(at, op, len);
		at += len;
	}
	if (out->ops)
		out->ops[n] = NULL;
	return !out->ops || count_boundary(out, b, co) ? -1 : 0;
}

/* The memo's mask is cleared cut by cut, so no cut costs the model's size. */
static void release_in_cut(uint8_t *in_cut, label_memo *memo, const int32_t *nodes, int n)
{
	if (!memo) {
		free(in_cut);
		return;
	}
	for (int i = 0; i < n; i++)
		in_cut[nodes[i]] = 0;
}

int pn_form_of_cut(const pn_graph *g, const pn_infer_result *r, const int32_t *nodes, int n,
		   pn_form *out, char *err)
{
	return pn_form_of_cut_cached(g, r, nodes, n, NULL, out, err);
}

int pn_form_of_cut_cached(const pn_graph *g, const pn_infer_result *r, const int32_t *nodes,
			  int n, pn_form_cache *cache, pn_form *out, char *err)
{
	memset(out, 0, sizeof(*out));
	label_memo *memo = cache && cache->memo.g == g ? &cache->memo : NULL;
	uint8_t *in_cut = memo ? memo->in_cut : calloc((size_t)g->n_nodes + 1, 1);
	if (!in_cut)
		return pn_fail(err, "out of memory");
	for (int i = 0; i < n; i++)
		in_cut[nodes[i]] = 1;
	builder b;
	pn_canon_out co = {0}, cp = {0};
	const cache_entry *hit = NULL;
	uint64_t h = 0;
	int keyed = 0;
	int rc = cut_build(g, r, nodes, n, in_cut, PN_LABEL_EXACT, memo, &b);
	if (!rc && cache && cacheable(g, nodes, n)) {
		problem_key(&b.cg, &cache->key);
		keyed = !cache->key.oom && cache->key.n <= CACHE_MAX_KEY;
		if (keyed) {
			h = XXH3_64bits(cache->key.p, cache->key.n);
			hit = cache_find(cache, h);
		}
	}
	if (!rc && hit) {
		pn_canon_out view = {.value_order = (int32_t *)hit->value_order,
				     .node_order = (int32_t *)hit->node_order};
		out->bytes = malloc(hit->len + 1);
		if (!out->bytes)
			rc = -1;
		else {
			memcpy(out->bytes, hit->bytes, hit->len);
			out->len = hit->len;
			out->pattern = hit->pattern;
			out->approximate = hit->approximate;
			rc = fill_exact(out, g, nodes, n, &b, &view);
		}
		pn_arena_free(&b.a);
		release_in_cut(in_cut, memo, nodes, n);
		if (rc) {
			pn_form_free(out);
			return pn_fail(err, "canonical form failed (out of memory)");
		}
		return 0;
	}
	if (!rc)
		rc = pn_canon(&b.cg, PN_CK_SUBGRAPH, &co);
	if (!rc) {
		out->bytes = co.bytes;
		out->len = co.len;
		co.bytes = NULL;
		out->approximate = co.approximate;
		rc = fill_exact(out, g, nodes, n, &b, &co);
	}
	int nv = b.cg.nv;
	pn_arena_free(&b.a);
	if (!rc) {
		rc = cut_build(g, r, nodes, n, in_cut, PN_LABEL_PATTERN, memo, &b);
		const cache_entry *phit = NULL;
		uint64_t ph = 0;
		int pkeyed = 0;
		if (!rc && keyed) {
			problem_key(&b.cg, &cache->pkey);
			pkeyed = !cache->pkey.oom && cache->pkey.n <= CACHE_MAX_KEY;
			if (pkeyed) {
				ph = XXH3_64bits(cache->pkey.p, cache->pkey.n);
				phit = pattern_find(cache, ph);
			}
		}
		if (!rc && phit) {
			out->pattern = phit->pattern;
			out->approximate |= phit->approximate;
		} else if (!rc) {
			rc = pn_canon(&b.cg, PN_CK_PATTERN, &cp);
			if (!rc) {
				out->pattern = pn_key_of(cp.bytes, cp.len);
				out->approximate |= cp.approximate;
				if (pkeyed)
					pattern_put(cache, ph, out->pattern, cp.approximate);
			}
		}
		pn_arena_free(&b.a);
	}
	if (!rc && keyed)
		cache_put(cache, h, out, &co, nv);
	pn_canon_out_free(&co);
	pn_canon_out_free(&cp);
	release_in_cut(in_cut, memo, nodes, n);
	if (rc) {
		pn_form_free(out);
		return pn_fail(err, "canonical form failed (out of memory)");
	}
	return 0;
}

int pn_form_positions(const pn_graph *g, const pn_infer_result *r, const int32_t *nodes, int n,
		      pn_key *hash, int32_t *node_at, int *approximate, char *err)
{
	uint8_t *in_cut = calloc((size_t)g->n_nodes + 1, 1);
	if (!in_cut)
		return pn_fail(err, "out of memory");
	for (int i = 0; i < n; i++)
		in_cut[nodes[i]] = 1;
	builder b;
	pn_canon_out co = {0};
	int rc = cut_build(g, r, nodes, n, in_cut, PN_LABEL_EXACT, NULL, &b);
	if (!rc)
		rc = pn_canon(&b.cg, PN_CK_SUBGRAPH, &co);
	pn_arena_free(&b.a);
	free(in_cut);
	if (!rc) {
		*hash = pn_key_of(co.bytes, co.len);
		*approximate = co.approximate;
		for (int p = 0; p < n; p++)
			node_at[p] = nodes[co.node_order[p]];
	}
	pn_canon_out_free(&co);
	return rc ? pn_fail(err, "canonical form failed (out of memory)") : 0;
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
	problem p = {g, r, nodes, n, mask, PN_LABEL_EXACT, NULL, NULL};
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
	free(f->bytes);   /* ops is one block with its strings (fill_exact) */
	free(f->ops);
	free(f->input_values);
	memset(f, 0, sizeof(*f));
}
