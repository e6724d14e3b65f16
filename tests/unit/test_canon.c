/*
 * test_canon.c - the canonical labelling (canon/canon.h) and the canonical
 * forms of cuts (canon/form.h, canon/labels.h, canon/decode.h) on small
 * hand-built ONNX models: every model is built with onnx_builder.h, decoded
 * like a model file, inferred, and hashed as one cut holding all its nodes
 * (as `doctor --deep` hashes a decoded subgraph).
 *
 * Each numbered case pins one property of README "Subgraphs and canonical
 * hashing": what must not change the hash (names, node order, input order,
 * operand order of commutative ops, defaults written out or not), and what
 * must (ops, operand order, sharing, dims, dtypes, constants, graphs that
 * colour refinement alone cannot tell apart).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canon/canon.h"
#include "canon/decode.h"
#include "canon/form.h"
#include "canon/labels.h"
#include "common/err.h"
#include "model/onnx.h"
#include "runtime/infer.h"
#include "onnx_builder.h"

/* --- building, transforming and hashing ------------------------------------------ */

typedef void (*build_fn)(builder *b, const void *arg);

/* What to do to a built graph before decoding it: none of it changes the
 * computation, so none of it may change a hash. */
typedef struct variant {
	const char *prefix;    /* rename every value and node */
	unsigned shuffle;      /* list nodes in a pseudo-random order (seed), */
	int reverse;           /* or in reverse, */
	const int *perm;       /* or in this order */
	int reverse_inputs;    /* list graph inputs in reverse */
	int meta;              /* load as stored: big weights as statistics */
} variant;

static const variant AS_BUILT = {0};

typedef struct hashes {
	pn_key exact, pattern;
	int approximate, n_nodes, n_inputs, n_outputs, n_consts;
} hashes;

static void shuffle(int *p, int n, unsigned seed)
{
	uint32_t s = seed * 2654435761u + 1;
	for (int i = n - 1; i > 0; i--) {
		s = s * 1103515245u + 12345u;
		int j = (int)((s >> 8) % (uint32_t)(i + 1));
		int t = p[i];
		p[i] = p[j];
		p[j] = t;
	}
}

static pn_model *build(build_fn fn, const void *arg, const variant *v)
{
	builder b;
	builder_init(&b);
	fn(&b, arg);
	int perm[128];
	for (int i = 0; i < (int)b.nn; i++)
		perm[i] = v->reverse ? (int)b.nn - 1 - i : i;
	if (v->shuffle)
		shuffle(perm, (int)b.nn, v->shuffle);
	permute_nodes(&b, v->perm ? v->perm : perm);
	if (v->reverse_inputs)
		reverse_inputs(&b);
	if (v->prefix)
		rename_all(&b, v->prefix);
	pn_model *m = load_with(&b, v->meta);
	pn_arena_free(&b.a);
	return m;
}

/* The forms of the cut holding every node of m. */
static void form_all(const pn_model *m, pn_infer_result *r, pn_form *f)
{
	char err[PN_ERRLEN] = "";
	const pn_graph *g = m->graph;
	if (pn_infer_graph(g, NULL, NULL, r, err))
		fail_msg("infer: %s", err);
	int32_t all[128];
	for (int i = 0; i < g->n_nodes; i++)
		all[i] = i;
	if (pn_form_of_cut(g, r, all, g->n_nodes, f, err))
		fail_msg("form: %s", err);
}

static hashes hashes_of_model(const pn_model *m)
{
	pn_infer_result r;
	pn_form f;
	form_all(m, &r, &f);
	hashes h = {f.hash, f.pattern, f.approximate, f.n_nodes, f.n_inputs, f.n_outputs,
		    f.n_consts};
	/* the key is the hash of the bytes, which say their format first */
	pn_key k = pn_key_of(f.bytes, f.len);
	assert_memory_equal(k.b, f.hash.b, 16);
	pn_form_free(&f);
	pn_infer_result_free(&r);
	return h;
}

static hashes hash_of(build_fn fn, const void *arg, const variant *v)
{
	pn_model *m = build(fn, arg, v);
	hashes h = hashes_of_model(m);
	pn_model_free(m);
	return h;
}

#define SAME_KEY(x, y) assert_memory_equal((x).b, (y).b, 16)
#define OTHER_KEY(x, y) assert_memory_not_equal((x).b, (y).b, 16)

/* Both hashes of fn(arg) equal those of the graph as built, under
 * renaming, reversed, shuffled node orders and reversed input order. */
static void assert_invariant(build_fn fn, const void *arg)
{
	hashes h0 = hash_of(fn, arg, &AS_BUILT);
	assert_false(h0.approximate);
	const variant vs[] = {
		{.prefix = "renamed_"},
		{.reverse = 1},
		{.shuffle = 1},
		{.shuffle = 2},
		{.shuffle = 3},
		{.reverse_inputs = 1},
		{.prefix = "q", .shuffle = 7, .reverse_inputs = 1},
	};
	for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
		hashes h = hash_of(fn, arg, &vs[i]);
		SAME_KEY(h0.exact, h.exact);
		SAME_KEY(h0.pattern, h.pattern);
		assert_false(h.approximate);
	}
}

static const int64_t D23[] = {2, 3};
static const int64_t D33[] = {3, 3};

/* --- the graphs ---------------------------------------------------------------------- */

/* s = Sub(x, y); r = Relu(s); m = Mul(r, x); o = Neg(m): two inputs told
 * apart only by their operand slots, no symmetry. */
static void g_mixed(builder *b, const void *arg)
{
	(void)arg;
	b->inputs[b->nin++] = vinfo(b, "x", 2, D23);
	b->inputs[b->nin++] = vinfo(b, "y", 2, D23);
	node(b, "Sub", "x,y", "s");
	node(b, "Relu", "s", "r");
	node(b, "Mul", "r,x", "m");
	node(b, "Neg", "m", "o");
	b->outputs[b->nout++] = vout(b, "o");
}

/* x -> Relu -> a, x -> Relu -> b, Add(a, b): two identical branches. */
static void g_parallel(builder *b, const void *arg)
{
	(void)arg;
	b->inputs[b->nin++] = vinfo(b, "x", 2, D23);
	node(b, "Relu", "x", "a");
	node(b, "Relu", "x", "b");
	node(b, "Add", "a,b", "y");
	b->outputs[b->nout++] = vout(b, "y");
}

/* x -> Relu -> a -> {Neg -> b, Neg -> c} -> Add -> d -> Relu -> e. */
static void g_diamond(builder *b, const void *arg)
{
	(void)arg;
	b->inputs[b->nin++] = vinfo(b, "x", 2, D23);
	node(b, "Relu", "x", "a");
	node(b, "Neg", "a", "b");
	node(b, "Neg", "a", "c");
	node(b, "Add", "b,c", "d");
	node(b, "Relu", "d", "e");
	b->outputs[b->nout++] = vout(b, "e");
}

/* x read by *arg identical Relu branches that one Sum joins. */
static void g_fan(builder *b, const void *arg)
{
	int n = *(const int *)arg;
	char sum_in[256] = "";
	b->inputs[b->nin++] = vinfo(b, "x", 2, D23);
	for (int i = 0; i < n; i++) {
		char out[16];
		snprintf(out, sizeof out, "r%d", i);
		node(b, "Relu", "x", out);
		snprintf(sum_in + strlen(sum_in), sizeof sum_in - strlen(sum_in), "%s%s",
			 i ? "," : "", out);
	}
	node(b, "Sum", sum_in, "y");
	b->outputs[b->nout++] = vout(b, "y");
}

/* Rings of binary ops: node i reads input v_i and the next input of its
 * ring, and its output is a graph output.  Every value and every node sees
 * exactly the same neighbourhood whatever the ring lengths, so colour
 * refinement gives one ring of 12 and two rings of 6 the same colours. */
typedef struct rings {
	const char *op;
	int n_rings;
	int len[3];
} rings;

static void g_rings(builder *b, const void *arg)
{
	const rings *c = arg;
	int total = 0;
	for (int r = 0; r < c->n_rings; r++)
		total += c->len[r];
	for (int i = 0; i < total; i++) {
		char nm[8];
		snprintf(nm, sizeof nm, "v%d", i);
		b->inputs[b->nin++] = vinfo(b, nm, 2, D23);
	}
	for (int r = 0, first = 0; r < c->n_rings; first += c->len[r++])
		for (int k = 0; k < c->len[r]; k++) {
			int i = first + k, next = first + (k + 1) % c->len[r];
			char in[16], out[8];
			snprintf(in, sizeof in, "v%d,v%d", i, next);
			snprintf(out, sizeof out, "o%d", i);
			node(b, c->op, in, out);
			b->outputs[b->nout++] = vout(b, out);
		}
}

/* op(first(x), second(x)) on x[3,3]: the operands are told apart by the
 * op producing them, so swapping them is a different graph unless op
 * commutes. */
typedef struct binop {
	const char *op;
	int swap;
} binop;

static void g_binop(builder *b, const void *arg)
{
	const binop *c = arg;
	b->inputs[b->nin++] = vinfo(b, "x", 2, D33);
	node(b, "Relu", "x", "p");
	node(b, "Neg", "x", "q");
	node(b, c->op, c->swap ? "q,p" : "p,q", "y");
	b->outputs[b->nout++] = vout(b, "y");
}

/* One node with one attribute set, or left out. */
typedef struct attr_case {
	const char *op;
	const char *name;   /* NULL: no attribute */
	int is_float;
	float f;
	int64_t i;
	int64_t opset;      /* 0: 17 */
} attr_case;

static void g_attr(builder *b, const void *arg)
{
	const attr_case *c = arg;
	b->opset = c->opset;
	b->inputs[b->nin++] = vinfo(b, "x", 2, D23);
	Onnx__NodeProto *n = node(b, c->op, "x", "y");
	if (c->name && c->is_float)
		attr_float(b, n, c->name, c->f);
	else if (c->name)
		attr_int(b, n, c->name, c->i);
	b->outputs[b->nout++] = vout(b, "y");
}

/* Gemm(x, W) with alpha and transB set, in the order the flag says. */
static void g_gemm(builder *b, const void *arg)
{
	const int *order = arg;
	static const int64_t dx[] = {2, 3}, dw[] = {4, 3};
	b->inputs[b->nin++] = vinfo(b, "x", 2, dx);
	b->inits[b->ni++] = tensor(b, "W", 2, dw);
	Onnx__NodeProto *n = node(b, "Gemm", "x,W", "y");
	if (order[0]) {
		attr_int(b, n, "transB", 1);
		attr_float(b, n, "alpha", (float)order[1]);
	} else {
		attr_float(b, n, "alpha", (float)order[1]);
		attr_int(b, n, "transB", 1);
	}
	b->outputs[b->nout++] = vout(b, "y");
}

/* Relu of one input of the given dtype and shape. */
typedef struct typed {
	int dtype, rank;
	int64_t dims[4];
} typed;

static void g_typed(builder *b, const void *arg)
{
	const typed *c = arg;
	b->inputs[b->nin++] = vinfo_t(b, "x", c->dtype, c->rank, c->dims);
	node(b, "Relu", "x", "y");
	b->outputs[b->nout++] = vout(b, "y");
}

/* Add(x, y) against Add(x, x) (and Mul): x and y of one type. */
typedef struct share {
	const char *op;
	int shared;
} share;

static void g_share(builder *b, const void *arg)
{
	const share *c = arg;
	b->inputs[b->nin++] = vinfo(b, "x", 2, D23);
	if (!c->shared)
		b->inputs[b->nin++] = vinfo(b, "y", 2, D23);
	node(b, c->op, c->shared ? "x,x" : "x,y", "z");
	b->outputs[b->nout++] = vout(b, "z");
}

/* Add(x, C) with C an initializer [3] of the given values. */
static void g_const(builder *b, const void *arg)
{
	const float *c = arg;
	static const int64_t d3[] = {3}, d23[] = {2, 3};
	b->inputs[b->nin++] = vinfo(b, "x", 2, d23);
	b->inits[b->ni++] = tensor_of(b, "C", 1, d3, c);
	node(b, "Add", "x,C", "y");
	b->outputs[b->nout++] = vout(b, "y");
}

/* Mul(x, W) with W a [4, 5] initializer filled with *arg: 20 floats, past
 * the 16 kept by value when weights become statistics. */
static void g_weight(builder *b, const void *arg)
{
	static const int64_t d45[] = {4, 5};
	float w[20];
	for (int i = 0; i < 20; i++)
		w[i] = *(const float *)arg * (float)(i + 1);
	b->inputs[b->nin++] = vinfo(b, "x", 2, d45);
	b->inits[b->ni++] = tensor_of(b, "W", 2, d45, w);
	node(b, "Mul", "x,W", "y");
	b->outputs[b->nout++] = vout(b, "y");
}

static const float ONE_F = 1.0f, TWO_F = 2.0f;

static float f32_bits(uint32_t x)
{
	float f;
	memcpy(&f, &x, 4);
	return f;
}

/* --- 1: names, node order and input order ---------------------------------------- */

/* Case 1 (a): renaming values and nodes, listing nodes in other orders and
 * graph inputs in reverse keep both hashes; the boundary is counted the
 * same way whatever the order. */
static void test_01_relabelling(void **state)
{
	(void)state;
	assert_invariant(g_mixed, NULL);
	hashes h = hash_of(g_mixed, NULL, &AS_BUILT);
	assert_int_equal(h.n_nodes, 4);
	assert_int_equal(h.n_inputs, 2);
	assert_int_equal(h.n_outputs, 1);
	assert_int_equal(h.n_consts, 0);
	/* and the hash says something: one op changed is another graph */
	binop add = {"Add", 0}, sub = {"Sub", 0};
	OTHER_KEY(hash_of(g_binop, &add, &AS_BUILT).exact, hash_of(g_binop, &sub, &AS_BUILT).exact);
}

/* --- 2: automorphisms -------------------------------------------------------------- */

/* Calls visit on every permutation of p[0..n) (Heap's algorithm). */
static void each_perm(int *p, int k, int n, void (*visit)(const int *p, void *ud), void *ud)
{
	if (k == 1) {
		visit(p, ud);
		return;
	}
	for (int i = 0; i < k; i++) {
		each_perm(p, k - 1, n, visit, ud);
		int j = k % 2 ? 0 : i;
		int t = p[j];
		p[j] = p[k - 1];
		p[k - 1] = t;
	}
}

typedef struct perm_check {
	build_fn fn;
	hashes first;
	int seen;
} perm_check;

static void check_perm(const int *p, void *ud)
{
	perm_check *c = ud;
	variant v = {.perm = p};
	hashes h = hash_of(c->fn, NULL, &v);
	assert_false(h.approximate);
	if (c->seen++) {
		SAME_KEY(c->first.exact, h.exact);
		SAME_KEY(c->first.pattern, h.pattern);
	} else {
		c->first = h;
	}
}

/* Case 2 (b): graphs with automorphisms (two identical parallel branches;
 * a diamond of two equal Negs) hash the same under every one of their node
 * orders (3! and 5!), and the tie search says it was exact. */
static void test_02_automorphisms_every_order(void **state)
{
	(void)state;
	int p[5] = {0, 1, 2, 3, 4};
	perm_check c = {.fn = g_parallel};
	each_perm(p, 3, 3, check_perm, &c);
	assert_int_equal(c.seen, 6);
	perm_check d = {.fn = g_diamond};
	each_perm(p, 5, 5, check_perm, &d);
	assert_int_equal(d.seen, 120);
	assert_invariant(g_diamond, NULL);
}

/* Case 3 (b): eight identical branches tie 8! = 40320 ways, about ten times the
 * leaf budget; the automorphisms found on the way prune the equivalent
 * branches, so the search stays exact, and the hash is order-free. */
static void test_03_automorphism_pruning(void **state)
{
	(void)state;
	int eight = 8;
	assert_invariant(g_fan, &eight);
	/* 7 branches are another graph than 8 */
	int seven = 7;
	OTHER_KEY(hash_of(g_fan, &seven, &AS_BUILT).exact, hash_of(g_fan, &eight, &AS_BUILT).exact);
}

/* --- 4: ties colour refinement cannot break ------------------------------------------ */

/* Refined colours of every node of fn(arg), sorted. */
static void sorted_node_colours(build_fn fn, const void *arg, uint64_t *c, int *n)
{
	pn_model *m = build(fn, arg, &AS_BUILT);
	const pn_graph *g = m->graph;
	pn_infer_result r;
	char err[PN_ERRLEN] = "";
	assert_int_equal(pn_infer_graph(g, NULL, NULL, &r, err), 0);
	uint8_t mask[128];
	memset(mask, 1, sizeof mask);
	assert_int_equal(pn_node_colours(g, &r, mask, c, err), 0);
	*n = g->n_nodes;
	for (int i = 1; i < *n; i++)   /* insertion sort */
		for (int j = i; j > 0 && c[j - 1] > c[j]; j--) {
			uint64_t t = c[j];
			c[j] = c[j - 1];
			c[j - 1] = t;
		}
	pn_infer_result_free(&r);
	pn_model_free(m);
}

/* Case 4 (c): one ring of 12 against two rings of 6 (commutative Add, and
 * Sub whose operand slots make the rings directed).  Colour refinement
 * gives both graphs the same colours (checked: the premise), yet their
 * forms differ, and each is invariant under relabelling: the tie search
 * individualises until the ring structure shows. */
static void test_04_ring_12_vs_two_6(void **state)
{
	(void)state;
	const char *ops[] = {"Add", "Sub"};
	for (int k = 0; k < 2; k++) {
		rings one = {ops[k], 1, {12}}, two = {ops[k], 2, {6, 6}};
		uint64_t c1[128], c2[128];
		int n1, n2;
		sorted_node_colours(g_rings, &one, c1, &n1);
		sorted_node_colours(g_rings, &two, c2, &n2);
		assert_int_equal(n1, 12);
		assert_int_equal(n2, 12);
		assert_memory_equal(c1, c2, sizeof(uint64_t) * 12);
		assert_true(c1[0] == c1[11]);   /* one class: refinement is blind */

		hashes h1 = hash_of(g_rings, &one, &AS_BUILT);
		hashes h2 = hash_of(g_rings, &two, &AS_BUILT);
		OTHER_KEY(h1.exact, h2.exact);
		OTHER_KEY(h1.pattern, h2.pattern);
		assert_false(h1.approximate);
		assert_false(h2.approximate);
		assert_invariant(g_rings, &one);
		assert_invariant(g_rings, &two);
	}
}

/* Case 5 (c): a 12-ring beside two 6-rings in one graph: refinement leaves
 * all 24 nodes in one class, but unlike in case 4 they are not all alike
 * (a node of the 12-ring is not the image of one of a 6-ring under any
 * automorphism), so taking the first member of the class as distinguished
 * would depend on the file's order: every member must be tried.  Shuffled
 * orders put a node of either kind of ring first. */
static void test_05_ties_across_orbits(void **state)
{
	(void)state;
	rings mixed = {"Add", 3, {12, 6, 6}};
	uint64_t c[128];
	int n;
	sorted_node_colours(g_rings, &mixed, c, &n);
	assert_int_equal(n, 24);
	assert_true(c[0] == c[23]);
	assert_invariant(g_rings, &mixed);
	hashes h0 = hash_of(g_rings, &mixed, &AS_BUILT);
	for (unsigned seed = 10; seed < 20; seed++) {
		variant v = {.shuffle = seed};
		SAME_KEY(h0.exact, hash_of(g_rings, &mixed, &v).exact);
	}
	/* building the rings in another order is the same graph; three rings
	 * of 8 (as blind to refinement, same counts) are another */
	rings mixed2 = {"Add", 3, {6, 12, 6}};
	SAME_KEY(h0.exact, hash_of(g_rings, &mixed2, &AS_BUILT).exact);
	rings other = {"Add", 3, {8, 8, 8}};
	OTHER_KEY(h0.exact, hash_of(g_rings, &other, &AS_BUILT).exact);
}

/* --- 6: commutative slots ------------------------------------------------------------ */

/* Case 6 (d): Add(p, q) == Add(q, p) and Mul likewise (F_COMM: operands
 * are a multiset), but Sub, Div and MatMul keep their operand order. */
static void test_06_commutative_slots(void **state)
{
	(void)state;
	const char *comm[] = {"Add", "Mul", "Max"};
	const char *ordered[] = {"Sub", "Div", "MatMul"};
	for (int i = 0; i < 3; i++) {
		binop a = {comm[i], 0}, b = {comm[i], 1};
		hashes ha = hash_of(g_binop, &a, &AS_BUILT), hb = hash_of(g_binop, &b, &AS_BUILT);
		SAME_KEY(ha.exact, hb.exact);
		SAME_KEY(ha.pattern, hb.pattern);
	}
	for (int i = 0; i < 3; i++) {
		binop a = {ordered[i], 0}, b = {ordered[i], 1};
		hashes ha = hash_of(g_binop, &a, &AS_BUILT), hb = hash_of(g_binop, &b, &AS_BUILT);
		OTHER_KEY(ha.exact, hb.exact);
		OTHER_KEY(ha.pattern, hb.pattern);
	}
}

/* --- 7: attributes and op versions ---------------------------------------------------- */

/* Case 7 (e): an attribute left at its default hashes as the default
 * written out (LeakyRelu alpha 0.01, a float; Softmax axis -1 in version
 * 13, an int); another value is another graph. */
static void test_07_attribute_defaults(void **state)
{
	(void)state;
	attr_case lr_none = {"LeakyRelu", NULL, 1, 0, 0, 0};
	attr_case lr_dflt = {"LeakyRelu", "alpha", 1, 0.01f, 0, 0};
	attr_case lr_other = {"LeakyRelu", "alpha", 1, 0.2f, 0, 0};
	hashes a = hash_of(g_attr, &lr_none, &AS_BUILT);
	SAME_KEY(a.exact, hash_of(g_attr, &lr_dflt, &AS_BUILT).exact);
	OTHER_KEY(a.exact, hash_of(g_attr, &lr_other, &AS_BUILT).exact);
	/* attributes are part of the computation, not of its shape */
	OTHER_KEY(a.pattern, hash_of(g_attr, &lr_other, &AS_BUILT).pattern);

	attr_case sm_none = {"Softmax", NULL, 0, 0, 0, 0};
	attr_case sm_dflt = {"Softmax", "axis", 0, 0, -1, 0};
	attr_case sm_other = {"Softmax", "axis", 0, 0, 0, 0};
	hashes s = hash_of(g_attr, &sm_none, &AS_BUILT);
	SAME_KEY(s.exact, hash_of(g_attr, &sm_dflt, &AS_BUILT).exact);
	OTHER_KEY(s.exact, hash_of(g_attr, &sm_other, &AS_BUILT).exact);

	/* Softmax-11's default axis is 1: left out under opset 11, it equals
	 * axis=1 written out, not axis=-1 (defaults are those of the version) */
	attr_case sm11_none = {"Softmax", NULL, 0, 0, 0, 11};
	attr_case sm11_one = {"Softmax", "axis", 0, 0, 1, 11};
	attr_case sm11_last = {"Softmax", "axis", 0, 0, -1, 11};
	hashes s11 = hash_of(g_attr, &sm11_none, &AS_BUILT);
	SAME_KEY(s11.exact, hash_of(g_attr, &sm11_one, &AS_BUILT).exact);
	OTHER_KEY(s11.exact, hash_of(g_attr, &sm11_last, &AS_BUILT).exact);

	/* attributes go by name: the order a file lists them in is not hashed */
	const int ab2[2] = {0, 2}, ba2[2] = {1, 2}, ab3[2] = {0, 3};
	hashes g = hash_of(g_gemm, ab2, &AS_BUILT);
	SAME_KEY(g.exact, hash_of(g_gemm, ba2, &AS_BUILT).exact);
	OTHER_KEY(g.exact, hash_of(g_gemm, ab3, &AS_BUILT).exact);
}

/* Case 8: the op version in effect is hashed, not the model's opset: Relu
 * is version 14 under opsets 14 and 17 (one hash), version 13 under opset
 * 13 (another). */
static void test_08_op_version_in_effect(void **state)
{
	(void)state;
	attr_case r17 = {"Relu", NULL, 0, 0, 0, 17};
	attr_case r14 = {"Relu", NULL, 0, 0, 0, 14};
	attr_case r13 = {"Relu", NULL, 0, 0, 0, 13};
	hashes h17 = hash_of(g_attr, &r17, &AS_BUILT);
	SAME_KEY(h17.exact, hash_of(g_attr, &r14, &AS_BUILT).exact);
	OTHER_KEY(h17.exact, hash_of(g_attr, &r13, &AS_BUILT).exact);
}

/* --- 9: dims and dtypes --------------------------------------------------------------- */

/* Case 9 (f): dims and dtypes are in the exact hash and not in the pattern
 * hash, which keeps ranks only: which dims happen to be equal is not kept
 * either (a batch of 8 beside 8 channels is a coincidence of sizes, and
 * would split one computation's shape variants over two tasks). */
static void test_09_dims_dtypes_pattern(void **state)
{
	(void)state;
	typed f23 = {PN_FLOAT, 2, {2, 3}}, f45 = {PN_FLOAT, 2, {4, 5}};
	typed d23 = {PN_DOUBLE, 2, {2, 3}}, f6 = {PN_FLOAT, 1, {6}};
	typed f33 = {PN_FLOAT, 2, {3, 3}}, f55 = {PN_FLOAT, 2, {5, 5}};
	hashes a = hash_of(g_typed, &f23, &AS_BUILT);
	hashes dims = hash_of(g_typed, &f45, &AS_BUILT);
	hashes dtype = hash_of(g_typed, &d23, &AS_BUILT);
	hashes rank = hash_of(g_typed, &f6, &AS_BUILT);
	OTHER_KEY(a.exact, dims.exact);
	SAME_KEY(a.pattern, dims.pattern);
	OTHER_KEY(a.exact, dtype.exact);
	SAME_KEY(a.pattern, dtype.pattern);
	OTHER_KEY(a.pattern, rank.pattern);
	/* [3,3], [5,5] and [2,3]: one pattern */
	hashes sq3 = hash_of(g_typed, &f33, &AS_BUILT), sq5 = hash_of(g_typed, &f55, &AS_BUILT);
	OTHER_KEY(sq3.exact, sq5.exact);
	SAME_KEY(sq3.pattern, sq5.pattern);
	SAME_KEY(sq3.pattern, a.pattern);
	/* the exact and the pattern form are different kinds of bytes */
	OTHER_KEY(a.exact, a.pattern);
}

/* --- 10: sharing ----------------------------------------------------------------------- */

/* Case 10 (g): f(x, x) differs from f(x, y), for a commutative op too (its
 * operands are a multiset, not a set). */
static void test_10_sharing(void **state)
{
	(void)state;
	const char *ops[] = {"Add", "Mul", "Sub"};
	for (int i = 0; i < 3; i++) {
		share xx = {ops[i], 1}, xy = {ops[i], 0};
		hashes a = hash_of(g_share, &xx, &AS_BUILT), b = hash_of(g_share, &xy, &AS_BUILT);
		OTHER_KEY(a.exact, b.exact);
		OTHER_KEY(a.pattern, b.pattern);
		assert_int_equal(a.n_inputs, 1);
		assert_int_equal(b.n_inputs, 2);
	}
}

/* --- 11: small constants -------------------------------------------------------------- */

/* Case 11 (h): small constants are hashed by value: other values, another
 * exact hash (the pattern ignores them); every NaN is one NaN; floats go
 * by their bits, so -0 is not 0. */
static void test_11_constants_by_value(void **state)
{
	(void)state;
	const float c123[3] = {1, 2, 3}, c124[3] = {1, 2, 4};
	hashes a = hash_of(g_const, c123, &AS_BUILT), b = hash_of(g_const, c124, &AS_BUILT);
	assert_int_equal(a.n_consts, 1);
	assert_int_equal(a.n_inputs, 1);
	OTHER_KEY(a.exact, b.exact);
	SAME_KEY(a.pattern, b.pattern);
	assert_invariant(g_const, c123);

	const float nan1[3] = {f32_bits(0x7fc00001u), 2, 3};
	const float nan2[3] = {f32_bits(0xffa00000u), 2, 3};
	assert_true(isnan(nan1[0]) && isnan(nan2[0]));
	SAME_KEY(hash_of(g_const, nan1, &AS_BUILT).exact, hash_of(g_const, nan2, &AS_BUILT).exact);
	const float zero[3] = {0, 2, 3}, negzero[3] = {-0.0f, 2, 3};
	OTHER_KEY(hash_of(g_const, zero, &AS_BUILT).exact,
		  hash_of(g_const, negzero, &AS_BUILT).exact);
}

/* --- 12: canonical bytes decode back ---------------------------------------------------- */

/* fn(arg) -> canonical bytes -> decoded model -> canonical bytes: equal
 * bytes and keys, equal boundary. */
static void roundtrip_v(build_fn fn, const void *arg, const variant *v)
{
	pn_model *m = build(fn, arg, v);
	pn_infer_result r;
	pn_form f;
	form_all(m, &r, &f);
	assert_true(f.len > 2);
	assert_int_equal(f.bytes[0], PN_CANON_VERSION);
	assert_int_equal(f.bytes[1], PN_CK_SUBGRAPH);

	char err[PN_ERRLEN] = "";
	pn_model *d = NULL;
	if (pn_subgraph_model(f.bytes, f.len, &d, err))
		fail_msg("decode: %s", err);
	assert_int_equal(d->graph->n_nodes, m->graph->n_nodes);
	pn_infer_result rd;
	pn_form fd;
	form_all(d, &rd, &fd);
	assert_int_equal(fd.len, f.len);
	assert_memory_equal(fd.bytes, f.bytes, f.len);
	SAME_KEY(fd.hash, f.hash);
	SAME_KEY(fd.pattern, f.pattern);
	assert_int_equal(fd.n_inputs, f.n_inputs);
	assert_int_equal(fd.n_outputs, f.n_outputs);
	assert_int_equal(fd.n_consts, f.n_consts);
	for (int i = 0; i < f.n_nodes; i++)
		assert_string_equal(fd.ops[i], f.ops[i]);

	/* a truncated form is refused, and so is another format version */
	pn_model *bad = NULL;
	assert_int_not_equal(pn_subgraph_model(f.bytes, f.len - 1, &bad, err), 0);
	uint8_t *other = malloc(f.len);
	memcpy(other, f.bytes, f.len);
	other[0] = PN_CANON_VERSION + 1;
	assert_int_not_equal(pn_subgraph_model(other, f.len, &bad, err), 0);
	free(other);

	pn_form_free(&fd);
	pn_infer_result_free(&rd);
	pn_model_free(d);
	pn_form_free(&f);
	pn_infer_result_free(&r);
	pn_model_free(m);
}

static void roundtrip(build_fn fn, const void *arg)
{
	roundtrip_v(fn, arg, &AS_BUILT);
}

/* Case 12 (i): canonical bytes start with the format version and the
 * kind, and decode (canon/decode.h) into a model whose form is the same
 * bytes, so it hashes back to the same key: the bytes are the subgraph. */
static void test_12_decode_roundtrip(void **state)
{
	(void)state;
	roundtrip(g_mixed, NULL);
	roundtrip(g_diamond, NULL);
	int eight = 8;
	roundtrip(g_fan, &eight);
	rings two = {"Sub", 2, {6, 6}};
	roundtrip(g_rings, &two);
	binop mm = {"MatMul", 1};
	roundtrip(g_binop, &mm);
	attr_case lr = {"LeakyRelu", "alpha", 1, 0.2f, 0, 0};
	roundtrip(g_attr, &lr);
	attr_case sm11 = {"Softmax", NULL, 0, 0, 0, 11};
	roundtrip(g_attr, &sm11);
	typed d23 = {PN_DOUBLE, 2, {2, 3}};
	roundtrip(g_typed, &d23);
	share xx = {"Mul", 1};
	roundtrip(g_share, &xx);
	const float c123[3] = {1, 2, 3};
	roundtrip(g_const, c123);
	const int ab2[2] = {1, 2};
	roundtrip(g_gemm, ab2);
	variant meta = {.meta = 1};
	roundtrip_v(g_weight, &ONE_F, &meta);
}

/* --- 13: learned weights --------------------------------------------------------------- */

/* Case 13: stored as `passnet build` stores models, a weight past the
 * by-value threshold is a marker: two models that differ only in its
 * values are one subgraph, while loaded with every byte they are two; a
 * weight is not the same as a known constant; small constants stay by
 * value (case 11) whichever way the model is loaded. */
static void test_13_weights_as_markers(void **state)
{
	(void)state;
	variant meta = {.meta = 1};
	hashes a = hash_of(g_weight, &ONE_F, &meta), b = hash_of(g_weight, &TWO_F, &meta);
	assert_int_equal(a.n_consts, 1);
	SAME_KEY(a.exact, b.exact);
	hashes ab = hash_of(g_weight, &ONE_F, &AS_BUILT), bb = hash_of(g_weight, &TWO_F, &AS_BUILT);
	OTHER_KEY(ab.exact, bb.exact);
	OTHER_KEY(a.exact, ab.exact);
	const float c123[3] = {1, 2, 3}, c124[3] = {1, 2, 4};
	OTHER_KEY(hash_of(g_const, c123, &meta).exact, hash_of(g_const, c124, &meta).exact);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_01_relabelling),
		cmocka_unit_test(test_02_automorphisms_every_order),
		cmocka_unit_test(test_03_automorphism_pruning),
		cmocka_unit_test(test_04_ring_12_vs_two_6),
		cmocka_unit_test(test_05_ties_across_orbits),
		cmocka_unit_test(test_06_commutative_slots),
		cmocka_unit_test(test_07_attribute_defaults),
		cmocka_unit_test(test_08_op_version_in_effect),
		cmocka_unit_test(test_09_dims_dtypes_pattern),
		cmocka_unit_test(test_10_sharing),
		cmocka_unit_test(test_11_constants_by_value),
		cmocka_unit_test(test_12_decode_roundtrip),
		cmocka_unit_test(test_13_weights_as_markers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
