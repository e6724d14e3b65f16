/*
 * test_partition.c - the partition view and the four strategies
 * (partition/partition.h) on hand-built ONNX models.
 *
 * pn_cut_ok is checked against a reference written here from its
 * definition (convex: no compute node outside the cut is both reachable
 * from it and reaches it; at most 64 nodes, 16 non-constant inputs read from
 * outside, 8 values read outside or graph outputs) on every subset of the
 * nodes of small graphs; the strategies' cuts are checked against the same
 * reference, against their rules (README "Subgraphs and canonical
 * hashing", the comments in partition/), and for independence from the
 * order the file lists nodes in.
 *
 * Nodes are named by the builder n0, n1, ... in the order they are built,
 * and keep that name when the file lists them in another order: a node's
 * build index is its identity across orders.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canon/form.h"
#include "common/err.h"
#include "model/onnx.h"
#include "partition/partition.h"
#include "runtime/infer.h"
#include "schemas/ops.h"
#include "onnx_builder.h"

/* --- views ------------------------------------------------------------------------ */

typedef void (*build_fn)(builder *b, const void *arg);

typedef struct view {
	pn_model *m;
	const pn_graph *g;
	pn_infer_result r;
	pn_pview pv;
	int node_of[128];   /* build index -> IR node */
	int built[128];     /* IR node -> build index */
	uint8_t adj[128][128];   /* compute node j reads an output of compute node i */
} view;

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

/* order: 0 as built, -1 reversed, > 0 a shuffle with that seed. */
static void view_open(view *v, build_fn fn, const void *arg, int order)
{
	builder b;
	builder_init(&b);
	memset(v, 0, sizeof(*v));
	fn(&b, arg);
	int perm[128];
	for (int i = 0; i < (int)b.nn; i++)
		perm[i] = order < 0 ? (int)b.nn - 1 - i : i;
	if (order > 0)
		shuffle(perm, (int)b.nn, (unsigned)order);
	permute_nodes(&b, perm);
	v->m = load(&b);
	pn_arena_free(&b.a);
	v->g = v->m->graph;
	char err[PN_ERRLEN] = "";
	if (pn_infer_graph(v->g, NULL, NULL, &v->r, err))
		fail_msg("infer: %s", err);
	if (pn_pview_build(&v->pv, v->g, &v->r, err))
		fail_msg("pview: %s", err);
	assert_true(v->g->n_nodes <= 128);
	for (int i = 0; i < v->g->n_nodes; i++) {
		int k = atoi(v->g->nodes[i].name + 1);
		v->built[i] = k;
		v->node_of[k] = i;
	}
	/* the reference's own adjacency, from values, not from the view */
	for (int i = 0; i < v->g->n_nodes; i++)
		for (int j = 0; j < v->g->n_nodes; j++) {
			const pn_node *a = &v->g->nodes[i], *b = &v->g->nodes[j];
			int e = 0;
			for (int k = 0; k < a->n_out; k++)
				for (int q = 0; q < b->n_in; q++)
					e |= a->out[k] >= 0 && a->out[k] == b->in[q];
			v->adj[i][j] = (uint8_t)(e && v->pv.compute[i] && v->pv.compute[j]);
		}
}

static void view_close(view *v)
{
	pn_pview_free(&v->pv);
	pn_infer_result_free(&v->r);
	pn_model_free(v->m);
}

static void run(view *v, const char *strategy, pn_cuts *cuts)
{
	const pn_strategy *s = pn_strategy_find(strategy);
	assert_non_null(s);
	memset(cuts, 0, sizeof(*cuts));
	assert_int_equal(s->run(&v->pv, cuts), 0);
}

/* --- the reference cut check ------------------------------------------------------------ */

static int edge(const view *v, int i, int j)
{
	return v->adj[i][j];
}

/* Marks in out every compute node reachable from the set by a path of at
 * least one edge (forward, or backward with dir < 0). */
static void reach(const view *v, const uint8_t *set, int dir, uint8_t *out)
{
	int n = v->g->n_nodes, queue[128], qn = 0;
	memset(out, 0, (size_t)n);
	for (int i = 0; i < n; i++)
		if (set[i])
			queue[qn++] = i;
	/* the set's nodes start the walk unmarked: a mark on one of them
	 * means a path comes back to it */
	for (int head = 0; head < qn; head++) {
		int x = queue[head];
		for (int y = 0; y < n; y++)
			if ((dir > 0 ? edge(v, x, y) : edge(v, y, x)) && !out[y]) {
				out[y] = 1;
				if (!set[y])
					queue[qn++] = y;
			}
	}
}

static int is_const(const view *v, int val)
{
	return v->g->values[val].data || v->g->values[val].meta || v->r.v[val].value;
}

typedef struct refcut {
	int convex, inputs, outputs, connected;
} refcut;

static refcut ref_check(const view *v, const int32_t *nodes, int n)
{
	const pn_graph *g = v->g;
	uint8_t set[128] = {0}, down[128], up[128];
	refcut c = {1, 0, 0, 1};
	for (int i = 0; i < n; i++)
		set[nodes[i]] = 1;
	reach(v, set, 1, down);
	reach(v, set, -1, up);
	for (int i = 0; i < g->n_nodes; i++)
		if (!set[i] && down[i] && up[i])
			c.convex = 0;
	int seen[256], ns = 0;
	for (int i = 0; i < n; i++) {
		const pn_node *nd = &g->nodes[nodes[i]];
		for (int k = 0; k < nd->n_in; k++) {
			int x = nd->in[k], dup = 0;
			if (x < 0 || is_const(v, x))
				continue;
			int p = g->values[x].producer;
			if (p >= 0 && set[p])
				continue;
			for (int q = 0; q < ns; q++)
				dup |= seen[q] == x;
			if (!dup)
				seen[ns++] = x;
		}
		for (int k = 0; k < nd->n_out; k++) {
			int x = nd->out[k];
			if (x < 0)
				continue;
			int out = g->values[x].is_output;
			for (int q = 0; q < g->values[x].n_consumers; q++)
				out |= !set[g->values[x].consumers[q]];
			c.outputs += out;
		}
	}
	c.inputs = ns;
	/* connected: flood within the set, ignoring direction */
	uint8_t got[128] = {0};
	int count = 1, changed = 1;
	if (n)
		got[nodes[0]] = 1;
	while (changed) {
		changed = 0;
		for (int a = 0; a < n; a++)
			for (int b = 0; b < n; b++) {
				int i = nodes[a], j = nodes[b];
				if (got[i] && !got[j] && (edge(v, i, j) || edge(v, j, i))) {
					got[j] = 1;
					count++;
					changed = 1;
				}
			}
	}
	c.connected = n && count == n;
	return c;
}

static int ref_ok(const view *v, const int32_t *nodes, int n)
{
	refcut c = ref_check(v, nodes, n);
	return n >= 1 && n <= PN_CUT_MAX_NODES && c.convex && c.inputs <= PN_CUT_MAX_INPUTS &&
	       c.outputs <= PN_CUT_MAX_OUTPUTS;
}

/* pn_cut_ok on the cut given by build indices. */
static int cut_ok(view *v, const int *built, int n)
{
	int32_t nodes[128];
	uint8_t in_cut[128] = {0};
	for (int i = 0; i < n; i++)
		nodes[i] = v->node_of[built[i]];
	int ok = pn_cut_ok(&v->pv, nodes, n, in_cut);
	for (int i = 0; i < v->g->n_nodes; i++)   /* the scratch mask comes back clean */
		assert_int_equal(in_cut[i], 0);
	return ok;
}

/* Every cut of every strategy: compute nodes only, sorted and distinct,
 * and accepted by both pn_cut_ok and the reference. */
static void assert_cuts_valid(view *v, const pn_cuts *c)
{
	uint8_t in_cut[128] = {0};
	for (int i = 0; i < c->n; i++) {
		assert_true(c->len[i] >= 1 && c->len[i] <= PN_CUT_MAX_NODES);
		for (int k = 0; k < c->len[i]; k++) {
			assert_true(v->pv.compute[c->nodes[i][k]]);
			if (k)
				assert_true(c->nodes[i][k - 1] < c->nodes[i][k]);
		}
		assert_true(pn_cut_ok(&v->pv, c->nodes[i], c->len[i], in_cut));
		assert_true(ref_ok(v, c->nodes[i], c->len[i]));
	}
}

/* --- signatures: cuts by build index -------------------------------------------------- */

typedef struct sigs {
	char **s;
	int n;
} sigs;

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* "3,4,7": the cut's nodes by build index, ascending. */
static char *sig_of(const view *v, const int32_t *nodes, int n)
{
	int k[128];
	for (int i = 0; i < n; i++)
		k[i] = v->built[nodes[i]];
	qsort(k, (size_t)n, sizeof(int), cmp_int);
	char *s = malloc((size_t)n * 5 + 2), *p = s;
	*p = 0;
	for (int i = 0; i < n; i++)
		p += sprintf(p, "%s%d", i ? "," : "", k[i]);
	return s;
}

static sigs sigs_of(const view *v, const pn_cuts *c)
{
	sigs s = {malloc(sizeof(char *) * (size_t)(c->n + 1)), c->n};
	for (int i = 0; i < c->n; i++)
		s.s[i] = sig_of(v, c->nodes[i], c->len[i]);
	qsort(s.s, (size_t)s.n, sizeof(char *), cmp_str);
	return s;
}

static int has_sig(const sigs *s, const char *want)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->s[i], want))
			return 1;
	return 0;
}

static void sigs_free(sigs *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->s[i]);
	free(s->s);
}

/* The cuts of one strategy on fn(arg), as signatures, after checking
 * every cut. */
static sigs strategy_sigs(build_fn fn, const void *arg, const char *strategy, int order)
{
	view v;
	view_open(&v, fn, arg, order);
	pn_cuts c;
	run(&v, strategy, &c);
	assert_cuts_valid(&v, &c);
	sigs s = sigs_of(&v, &c);
	pn_cuts_free(&c);
	view_close(&v);
	return s;
}

/* Exactly the cuts want[] (signatures), in any order. */
static void assert_sigs(const sigs *s, const char *const *want, int n)
{
	int ok = s->n == n;
	for (int i = 0; i < n; i++)
		ok &= has_sig(s, want[i]);
	if (ok)
		return;
	for (int i = 0; i < s->n; i++)
		print_message("  got cut %s\n", s->s[i]);
	for (int i = 0; i < n; i++)
		print_message("  want cut %s\n", want[i]);
	fail_msg("other cuts than expected");
}

/* --- the graphs ------------------------------------------------------------------------- */

static const int64_t D23[] = {2, 3};
static const int64_t D1244[] = {1, 2, 4, 4};

/* x -> Relu -> Neg -> Abs -> ... (*arg nodes, ops in turn). */
static void g_chain(builder *b, const void *arg)
{
	int n = *(const int *)arg;
	static const char *ops[] = {"Relu", "Neg", "Abs", "Sigmoid", "Tanh"};
	b->inputs[b->nin++] = vinfo(b, "x", 2, D23);
	for (int i = 0; i < n; i++) {
		char in[8], out[8];
		snprintf(in, sizeof in, i ? "t%d" : "x", i - 1);
		snprintf(out, sizeof out, "t%d", i);
		node(b, ops[i % 5], in, out);
	}
	char last[8];
	snprintf(last, sizeof last, "t%d", n - 1);
	b->outputs[b->nout++] = vout(b, last);
}

/* n0 a = Relu(x); n1 b = Neg(a); n2 c = Abs(a); n3 d = Add(b, c);
 * n4 e = Sigmoid(d). */
static void g_diamond(builder *b, const void *arg)
{
	(void)arg;
	b->inputs[b->nin++] = vinfo(b, "x", 2, D23);
	node(b, "Relu", "x", "a");
	node(b, "Neg", "a", "b");
	node(b, "Abs", "a", "c");
	node(b, "Add", "b,c", "d");
	node(b, "Sigmoid", "d", "e");
	b->outputs[b->nout++] = vout(b, "e");
}

/* Two components: n0 Relu(x) -> n1 Neg -> n2 Abs; n3 Sigmoid(y) -> n4 Tanh. */
static void g_two(builder *b, const void *arg)
{
	(void)arg;
	b->inputs[b->nin++] = vinfo(b, "x", 2, D23);
	b->inputs[b->nin++] = vinfo(b, "y", 2, D23);
	node(b, "Relu", "x", "a");
	node(b, "Neg", "a", "b");
	node(b, "Abs", "b", "c");
	node(b, "Sigmoid", "y", "d");
	node(b, "Tanh", "d", "e");
	b->outputs[b->nout++] = vout(b, "c");
	b->outputs[b->nout++] = vout(b, "e");
}

/* n0 = Sum(x0 .. x(k-1)) [, x0 again] [, an initializer]. */
typedef struct wide {
	int k, repeat, with_const;
} wide;

static void g_wide(builder *b, const void *arg)
{
	const wide *w = arg;
	char in[512] = "";
	for (int i = 0; i < w->k; i++) {
		char nm[8];
		snprintf(nm, sizeof nm, "x%d", i);
		b->inputs[b->nin++] = vinfo(b, nm, 2, D23);
		snprintf(in + strlen(in), sizeof in - strlen(in), "%s%s", i ? "," : "", nm);
	}
	if (w->repeat)
		strcat(in, ",x0");
	if (w->with_const) {
		b->inits[b->ni++] = tensor(b, "C", 2, D23);
		strcat(in, ",C");
	}
	node(b, "Sum", in, "y");
	b->outputs[b->nout++] = vout(b, "y");
}

/* n0 t0 = Add(x0, x1); n(i) ti = Add(t(i-1), x(i+1)) up to n16: each
 * link reads a fresh input, 18 in all. */
static void g_add_chain(builder *b, const void *arg)
{
	(void)arg;
	for (int i = 0; i < 18; i++) {
		char nm[8];
		snprintf(nm, sizeof nm, "x%d", i);
		b->inputs[b->nin++] = vinfo(b, nm, 2, D23);
	}
	for (int i = 0; i < 17; i++) {
		char in[16], out[8];
		snprintf(in, sizeof in, i ? "t%d,x%d" : "x0,x1", i - 1, i + 1);
		snprintf(out, sizeof out, "t%d", i);
		node(b, "Add", in, out);
	}
	b->outputs[b->nout++] = vout(b, "t16");
}

/* A chain of 10 Relus n0..n9 whose every link is also a graph output. */
static void g_chain_outs(builder *b, const void *arg)
{
	(void)arg;
	b->inputs[b->nin++] = vinfo(b, "x", 2, D23);
	for (int i = 0; i < 10; i++) {
		char in[8], out[8];
		snprintf(in, sizeof in, i ? "t%d" : "x", i - 1);
		snprintf(out, sizeof out, "t%d", i);
		node(b, "Relu", in, out);
		b->outputs[b->nout++] = vout(b, out);
	}
}

/* x read by *arg Relus n0.., each output a graph output. */
static void g_fanout(builder *b, const void *arg)
{
	int k = *(const int *)arg;
	b->inputs[b->nin++] = vinfo(b, "x", 2, D23);
	for (int i = 0; i < k; i++) {
		char out[8];
		snprintf(out, sizeof out, "r%d", i);
		node(b, "Relu", "x", out);
		b->outputs[b->nout++] = vout(b, out);
	}
}

/* Compute nodes among constants:
 *   n0 r = Relu(x)            compute
 *   n1 K = Constant 2.0       a Constant
 *   n2 m = Mul(r, K)          compute
 *   n3 nc = Neg(C)            folded (C an initializer)
 *   n4 a = Add(m, nc)         compute
 *   n5 s = Shape(x)           folded (x's shape is known)
 *   n6 z = Reshape(a, s)      compute */
static void g_consts(builder *b, const void *arg)
{
	(void)arg;
	b->inputs[b->nin++] = vinfo(b, "x", 2, D23);
	b->inits[b->ni++] = tensor(b, "C", 2, D23);
	node(b, "Relu", "x", "r");
	attr_float(b, node(b, "Constant", "", "K"), "value_float", 2.0f);
	node(b, "Mul", "r,K", "m");
	node(b, "Neg", "C", "nc");
	node(b, "Add", "m,nc", "a");
	node(b, "Shape", "x", "s");
	node(b, "Reshape", "a,s", "z");
	b->outputs[b->nout++] = vout(b, "z");
}

static void conv_weights(builder *b, const char *w)
{
	static const int64_t dw[] = {2, 2, 1, 1};
	b->inits[b->ni++] = tensor(b, w, 4, dw);
}

static void per_channel(builder *b, const char *name)
{
	static const int64_t d[] = {1, 2, 1, 1};
	b->inits[b->ni++] = tensor(b, name, 4, d);
}

/* n0 m = Mul(x, S); n1 c = Conv(m, W); n2 a = Add(c, B); n3 y = Relu(a). */
static void g_conv_block(builder *b, const void *arg)
{
	(void)arg;
	b->inputs[b->nin++] = vinfo(b, "x", 4, D1244);
	per_channel(b, "S");
	per_channel(b, "B");
	conv_weights(b, "W");
	node(b, "Mul", "x,S", "m");
	node(b, "Conv", "m,W", "c");
	node(b, "Add", "c,B", "a");
	node(b, "Relu", "a", "y");
	b->outputs[b->nout++] = vout(b, "y");
}

/* The prologue's output is also read elsewhere, and the epilogue forks:
 * n0 m = Mul(x, S); n1 c = Conv(m, W); n2 a = Add(c, B); n3 p = Relu(a);
 * n4 q = Sigmoid(a); n5 n = Neg(m). */
static void g_conv_forks(builder *b, const void *arg)
{
	(void)arg;
	b->inputs[b->nin++] = vinfo(b, "x", 4, D1244);
	per_channel(b, "S");
	per_channel(b, "B");
	conv_weights(b, "W");
	node(b, "Mul", "x,S", "m");
	node(b, "Conv", "m,W", "c");
	node(b, "Add", "c,B", "a");
	node(b, "Relu", "a", "p");
	node(b, "Sigmoid", "a", "q");
	node(b, "Neg", "m", "n");
	b->outputs[b->nout++] = vout(b, "p");
	b->outputs[b->nout++] = vout(b, "q");
	b->outputs[b->nout++] = vout(b, "n");
}

/* n0 p = Relu(x); n1 q = Neg(y); n2 mm = MatMul(p, q) (or (q, p) when
 * *arg); n3 a = Add(mm, B); n4 s = Sigmoid(a). */
static void g_matmul(builder *b, const void *arg)
{
	int swap = arg && *(const int *)arg;
	static const int64_t d33[] = {3, 3};
	b->inputs[b->nin++] = vinfo(b, "x", 2, d33);
	b->inputs[b->nin++] = vinfo(b, "y", 2, d33);
	b->inits[b->ni++] = tensor(b, "B", 2, d33);
	node(b, "Relu", "x", "p");
	node(b, "Neg", "y", "q");
	node(b, "MatMul", swap ? "q,p" : "p,q", "mm");
	node(b, "Add", "mm,B", "a");
	node(b, "Sigmoid", "a", "s");
	b->outputs[b->nout++] = vout(b, "s");
}

/* n0 c = Conv(x, W); n1 n = BatchNormalization(c, ...); n2 y = Relu(n). */
static void g_conv_bn_relu(builder *b, const void *arg)
{
	(void)arg;
	static const int64_t d2[] = {2};
	b->inputs[b->nin++] = vinfo(b, "x", 4, D1244);
	conv_weights(b, "W");
	const char *p[] = {"scale", "bias", "mean", "var"};
	for (int i = 0; i < 4; i++)
		b->inits[b->ni++] = tensor(b, p[i], 1, d2);
	node(b, "Conv", "x,W", "c");
	node(b, "BatchNormalization", "c,scale,bias,mean,var", "n");
	node(b, "Relu", "n", "y");
	b->outputs[b->nout++] = vout(b, "y");
}

/* n0 c = Conv(x, W); n1 m = Mul(c, S); n2 a = Add(m, B); n3 y = Relu(a):
 * batch norm as the elementwise ops it folds into. */
static void g_conv_mul_add_relu(builder *b, const void *arg)
{
	(void)arg;
	b->inputs[b->nin++] = vinfo(b, "x", 4, D1244);
	conv_weights(b, "W");
	per_channel(b, "S");
	per_channel(b, "B");
	node(b, "Conv", "x,W", "c");
	node(b, "Mul", "c,S", "m");
	node(b, "Add", "m,B", "a");
	node(b, "Relu", "a", "y");
	b->outputs[b->nout++] = vout(b, "y");
}

/* n0 c = Conv(x, W1); [n1 r = Relu(c);] n1/n2 y = Conv(., W2). */
static void g_conv_conv(builder *b, const void *arg)
{
	int relu = *(const int *)arg;
	b->inputs[b->nin++] = vinfo(b, "x", 4, D1244);
	conv_weights(b, "W1");
	conv_weights(b, "W2");
	node(b, "Conv", "x,W1", "c");
	if (relu)
		node(b, "Relu", "c", "r");
	node(b, "Conv", relu ? "r,W2" : "c,W2", "y");
	b->outputs[b->nout++] = vout(b, "y");
}

/* n0 e = Exp(x); n1 s = ReduceSum(e); n2 y = Relu(s). */
static void g_reduce(builder *b, const void *arg)
{
	(void)arg;
	b->inputs[b->nin++] = vinfo(b, "x", 2, D23);
	node(b, "Exp", "x", "e");
	node(b, "ReduceSum", "e", "s");
	node(b, "Relu", "s", "y");
	b->outputs[b->nout++] = vout(b, "y");
}

/* n0 r = Relu(x); n1 v, i = TopK(r, K); n2 y = Neg(v). */
static void g_opaque(builder *b, const void *arg)
{
	(void)arg;
	static const int64_t d1[] = {1}, k[] = {2};
	b->inputs[b->nin++] = vinfo(b, "x", 2, D23);
	b->inits[b->ni++] = tensor_i64(b, "K", 1, d1, k);
	node(b, "Relu", "x", "r");
	node(b, "TopK", "r,K", "v,i");
	node(b, "Neg", "v", "y");
	b->outputs[b->nout++] = vout(b, "y");
}

/* A residual block with a squeeze-and-excite style gate, no symmetry:
 *   n0 c1 = Conv(x, W1); n1 b1 = BatchNormalization(c1); n2 r1 = Relu(b1);
 *   n3 c2 = Conv(r1, W2); n4 s = Add(c2, x); n5 r2 = Relu(s);
 *   n6 m = ReduceMean(r2); n7 g = Sigmoid(m); n8 y = Mul(r2, g);
 *   n9 t = Transpose(r2); n10 u = Neg(t); n11 o = Abs(y). */
static void g_block(builder *b, const void *arg)
{
	(void)arg;
	static const int64_t d2[] = {2};
	b->inputs[b->nin++] = vinfo(b, "x", 4, D1244);
	conv_weights(b, "W1");
	conv_weights(b, "W2");
	const char *p[] = {"scale", "bias", "mean", "var"};
	for (int i = 0; i < 4; i++)
		b->inits[b->ni++] = tensor(b, p[i], 1, d2);
	node(b, "Conv", "x,W1", "c1");
	node(b, "BatchNormalization", "c1,scale,bias,mean,var", "b1");
	node(b, "Relu", "b1", "r1");
	node(b, "Conv", "r1,W2", "c2");
	node(b, "Add", "c2,x", "s");
	node(b, "Relu", "s", "r2");
	node(b, "ReduceMean", "r2", "m");
	node(b, "Sigmoid", "m", "g");
	node(b, "Mul", "r2,g", "y");
	node(b, "Transpose", "r2", "t");
	node(b, "Neg", "t", "u");
	node(b, "Abs", "y", "o");
	b->outputs[b->nout++] = vout(b, "o");
	b->outputs[b->nout++] = vout(b, "u");
}

/* Every graph above, for the checks that hold on all of them. */
typedef struct graph_case {
	const char *name;
	build_fn fn;
	const void *arg;
	int symmetric;   /* has automorphisms: cuts compare up to them */
} graph_case;

static const int N5 = 5, N12 = 12, N70 = 70, N9 = 9, ZERO = 0, ONE = 1;
static const wide W17 = {17, 0, 0}, W16 = {16, 0, 0}, W16R = {16, 1, 1};

static const graph_case graphs[] = {
	{"chain5", g_chain, &N5, 0},
	{"chain12", g_chain, &N12, 0},
	{"chain70", g_chain, &N70, 0},
	{"diamond", g_diamond, NULL, 0},
	{"two", g_two, NULL, 0},
	{"sum17", g_wide, &W17, 1},
	{"sum16", g_wide, &W16, 1},
	{"sum16+dup+const", g_wide, &W16R, 1},
	{"fanout9", g_fanout, &N9, 1},
	{"add_chain18", g_add_chain, NULL, 0},
	{"chain_outs10", g_chain_outs, NULL, 0},
	{"consts", g_consts, NULL, 0},
	{"conv_block", g_conv_block, NULL, 0},
	{"conv_forks", g_conv_forks, NULL, 0},
	{"matmul", g_matmul, NULL, 0},
	{"matmul_swapped", g_matmul, &ONE, 0},
	{"conv_bn_relu", g_conv_bn_relu, NULL, 0},
	{"conv_mul_add_relu", g_conv_mul_add_relu, NULL, 0},
	{"conv_conv", g_conv_conv, &ZERO, 0},
	{"conv_relu_conv", g_conv_conv, &ONE, 0},
	{"reduce", g_reduce, NULL, 0},
	{"opaque", g_opaque, NULL, 0},
	{"block", g_block, NULL, 0},
};
#define N_GRAPHS ((int)(sizeof graphs / sizeof graphs[0]))

/* --- 1: convexity --------------------------------------------------------------------------- */

/* Case 1 (a): on a -> b -> c the cut {a, c} is not convex (the path
 * leaves through b and comes back); {a, b}, {b, c}, {a, b, c} and single
 * nodes are.  On the diamond a -> {b, c} -> d, {a, d} and {a, b, d} are not
 * convex, {a, b, c, d} is, and {b, c} is convex though not connected. */
static void test_01_convexity(void **state)
{
	(void)state;
	int three = 3;
	view v;
	view_open(&v, g_chain, &three, 0);
	assert_false(cut_ok(&v, (int[]){0, 2}, 2));
	assert_true(cut_ok(&v, (int[]){0, 1}, 2));
	assert_true(cut_ok(&v, (int[]){1, 2}, 2));
	assert_true(cut_ok(&v, (int[]){0, 1, 2}, 3));
	for (int i = 0; i < 3; i++)
		assert_true(cut_ok(&v, &i, 1));
	assert_false(cut_ok(&v, (int[]){0}, 0));   /* an empty cut is no cut */
	view_close(&v);

	view_open(&v, g_diamond, NULL, 0);
	assert_false(cut_ok(&v, (int[]){0, 3}, 2));
	assert_false(cut_ok(&v, (int[]){0, 1, 3}, 3));
	assert_false(cut_ok(&v, (int[]){0, 2, 3}, 3));
	assert_true(cut_ok(&v, (int[]){0, 1, 2, 3}, 4));
	assert_true(cut_ok(&v, (int[]){1, 2}, 2));
	assert_true(cut_ok(&v, (int[]){3, 4}, 2));
	int32_t bc[2] = {v.node_of[1], v.node_of[2]}, bd[2] = {v.node_of[1], v.node_of[3]};
	uint8_t in_cut[128] = {0};
	assert_false(pn_cut_connected(&v.pv, bc, 2, in_cut));
	assert_true(pn_cut_connected(&v.pv, bd, 2, in_cut));
	view_close(&v);
}

/* Case 2 (a, b): pn_cut_ok and pn_cut_connected agree with the reference
 * on every non-empty subset of the nodes of every small graph, in two
 * node orders. */
static void test_02_cut_ok_every_subset(void **state)
{
	(void)state;
	for (int gi = 0; gi < N_GRAPHS; gi++)
		for (int order = 0; order <= 5; order += 5) {
			view v;
			view_open(&v, graphs[gi].fn, graphs[gi].arg, order);
			int n = v.g->n_nodes;
			if (n > 12) {
				view_close(&v);
				continue;
			}
			int32_t cn[16];
			int nc = 0;
			for (int i = 0; i < n; i++)
				if (v.pv.compute[i])
					cn[nc++] = i;
			uint8_t in_cut[128] = {0};
			int accepted = 0, rejected = 0;
			for (uint32_t mask = 1; mask < (1u << nc); mask++) {
				int32_t nodes[16];
				int k = 0;
				for (int i = 0; i < nc; i++)
					if (mask & (1u << i))
						nodes[k++] = cn[i];
				int ok = pn_cut_ok(&v.pv, nodes, k, in_cut);
				if (ok != ref_ok(&v, nodes, k))
					fail_msg("%s: pn_cut_ok %d on subset %#x", graphs[gi].name, ok, mask);
				int conn = pn_cut_connected(&v.pv, nodes, k, in_cut);
				if (conn != ref_check(&v, nodes, k).connected)
					fail_msg("%s: pn_cut_connected %d on subset %#x", graphs[gi].name, conn,
						 mask);
				accepted += ok;
				rejected += !ok;
			}
			/* every graph with a path of 3 has a non-convex subset */
			if (nc >= 3 && strcmp(graphs[gi].name, "fanout9"))
				assert_true(rejected > 0);
			assert_true(accepted > 0 || !strcmp(graphs[gi].name, "sum17"));
			view_close(&v);
		}
}

/* --- 2: bounds -------------------------------------------------------------------------------- */

/* Case 3 (b): 64 nodes pass, 65 do not (a chain of 70, convex and
 * connected throughout); 16 distinct non-constant inputs pass, 17 do not,
 * and a repeated input or a constant does not count; 8 outputs pass, 9 do
 * not. */
static void test_03_bounds(void **state)
{
	(void)state;
	int idx[128];
	for (int i = 0; i < 128; i++)
		idx[i] = i;
	view v;
	view_open(&v, g_chain, &N70, 0);
	assert_true(cut_ok(&v, idx, PN_CUT_MAX_NODES));
	assert_true(cut_ok(&v, idx + 6, PN_CUT_MAX_NODES));
	assert_false(cut_ok(&v, idx, PN_CUT_MAX_NODES + 1));
	view_close(&v);

	view_open(&v, g_wide, &W17, 0);
	assert_false(cut_ok(&v, idx, 1));
	view_close(&v);
	view_open(&v, g_wide, &W16, 0);
	assert_true(cut_ok(&v, idx, 1));
	view_close(&v);
	view_open(&v, g_wide, &W16R, 0);   /* 16 inputs, x0 twice, one constant */
	assert_true(cut_ok(&v, idx, 1));
	view_close(&v);

	view_open(&v, g_fanout, &N9, 0);
	assert_false(cut_ok(&v, idx, 9));
	assert_true(cut_ok(&v, idx, PN_CUT_MAX_OUTPUTS));
	assert_true(cut_ok(&v, idx + 1, PN_CUT_MAX_OUTPUTS));
	view_close(&v);
}

/* Case 4 (b): no strategy emits a cut out of bounds or non-convex, on
 * graphs that invite it (a chain of 70 elementwise ops fusion would like
 * to take whole, a chain of Adds reading 18 inputs, a Sum of 17 inputs,
 * 9 parallel outputs, a chain of 10 graph outputs), and in shuffled
 * node orders. */
static void test_04_strategies_within_bounds(void **state)
{
	(void)state;
	for (int gi = 0; gi < N_GRAPHS; gi++)
		for (int s = 0; s < PN_N_STRATEGIES; s++)
			for (int order = -1; order <= 2; order++) {
				view v;
				view_open(&v, graphs[gi].fn, graphs[gi].arg, order);
				pn_cuts c;
				run(&v, pn_strategies[s].name, &c);
				assert_cuts_valid(&v, &c);
				pn_cuts_free(&c);
				view_close(&v);
			}
	/* the big ones are not emitted: fusion splits the chain of 70 at the
	 * node bound, sole leaves the Sum of 17 out */
	sigs f = strategy_sigs(g_chain, &N70, "fusion", 0);
	assert_int_equal(f.n, 2);
	sigs_free(&f);
	sigs s = strategy_sigs(g_wide, &W17, "sole", 0);
	assert_int_equal(s.n, 0);
	sigs_free(&s);
	/* fusion stops growing a group at 16 inputs */
	f = strategy_sigs(g_add_chain, NULL, "fusion", 0);
	assert_int_equal(f.n, 2);
	assert_true(has_sig(&f, "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14"));
	sigs_free(&f);
}

/* --- 3: sole ---------------------------------------------------------------------------------- */

/* Case 5 (c): Constants and nodes constant folding computes (Neg of an
 * initializer, Shape of a known shape) are not compute nodes; sole emits
 * exactly one single-node cut per compute node. */
static void test_05_sole_compute_nodes(void **state)
{
	(void)state;
	view v;
	view_open(&v, g_consts, NULL, 0);
	const int compute[7] = {1, 0, 1, 0, 1, 0, 1};
	for (int k = 0; k < 7; k++)
		assert_int_equal(v.pv.compute[v.node_of[k]], compute[k]);
	assert_int_equal(v.pv.n, 4);
	view_close(&v);

	sigs s = strategy_sigs(g_consts, NULL, "sole", 0);
	const char *want[] = {"0", "2", "4", "6"};
	assert_sigs(&s, want, 4);
	sigs_free(&s);

	/* on every graph: one cut per compute node that is a cut alone */
	for (int gi = 0; gi < N_GRAPHS; gi++) {
		view_open(&v, graphs[gi].fn, graphs[gi].arg, 3);
		pn_cuts c;
		run(&v, "sole", &c);
		int expect = 0;
		for (int i = 0; i < v.g->n_nodes; i++) {
			int32_t one = i;
			expect += v.pv.compute[i] && ref_ok(&v, &one, 1);
		}
		assert_int_equal(c.n, expect);
		uint8_t seen[128] = {0};
		for (int i = 0; i < c.n; i++) {
			assert_int_equal(c.len[i], 1);
			assert_false(seen[c.nodes[i][0]]);
			seen[c.nodes[i][0]] = 1;
		}
		pn_cuts_free(&c);
		view_close(&v);
	}
}

/* --- 4: window -------------------------------------------------------------------------------- */

/* Case 6 (d): window emits runs of 2..PN_WINDOW_MAX consecutive nodes of
 * the canonical order, each connected and convex, and every such run: on a
 * chain of 12 that is 11 + 10 + ... + 5 = 56 windows, none of 9; on two
 * separate chains no window mixes them. */
static void test_06_window_runs(void **state)
{
	(void)state;
	for (int gi = 0; gi < N_GRAPHS; gi++) {
		view v;
		view_open(&v, graphs[gi].fn, graphs[gi].arg, 1);
		pn_cuts c;
		run(&v, "window", &c);
		sigs got = sigs_of(&v, &c);
		for (int i = 0; i < c.n; i++) {
			int lo = 1 << 30, hi = -1;
			for (int k = 0; k < c.len[i]; k++) {
				int r = v.pv.rank[c.nodes[i][k]];
				lo = r < lo ? r : lo;
				hi = r > hi ? r : hi;
			}
			assert_true(c.len[i] >= 2 && c.len[i] <= PN_WINDOW_MAX);
			assert_int_equal(hi - lo + 1, c.len[i]);   /* a run of the order */
			assert_true(ref_check(&v, c.nodes[i], c.len[i]).connected);
		}
		/* every connected run that is a cut is there */
		int expect = 0;
		for (int start = 0; start < v.pv.n; start++)
			for (int len = 2; len <= PN_WINDOW_MAX && start + len <= v.pv.n; len++) {
				const int32_t *run_ = v.pv.order + start;
				if (!ref_check(&v, run_, len).connected || !ref_ok(&v, run_, len))
					continue;
				expect++;
				char *sg = sig_of(&v, run_, len);
				if (!has_sig(&got, sg))
					fail_msg("%s: window %s missing", graphs[gi].name, sg);
				free(sg);
			}
		assert_int_equal(c.n, expect);
		sigs_free(&got);
		pn_cuts_free(&c);
		view_close(&v);
	}
	sigs s = strategy_sigs(g_chain, &N12, "window", 0);
	assert_int_equal(s.n, 56);
	assert_true(has_sig(&s, "0,1,2,3,4,5,6,7"));
	assert_false(has_sig(&s, "0,1,2,3,4,5,6,7,8"));
	sigs_free(&s);
	/* which runs of two interleaved chains are windows depends on how the
	 * canonical order interleaves them; none mixes the chains */
	for (int order = -1; order <= 3; order++) {
		s = strategy_sigs(g_two, NULL, "window", order);
		for (int i = 0; i < s.n; i++) {
			int lo = strchr("012", s.s[i][0]) != NULL;
			for (const char *p = s.s[i]; *p; p++)
				if (*p != ',')
					assert_int_equal(strchr("012", *p) != NULL, lo);
		}
		sigs_free(&s);
	}
}

/* --- 5: anchor -------------------------------------------------------------------------------- */

/* Case 7 (e): a Conv with an elementwise prologue (Mul by a per-channel
 * scale) and epilogue (bias Add, Relu) is one cut; a prologue whose output
 * is read outside the cut stays out, and the epilogue stops where the
 * chain forks.  MatMul takes the producers of both operands, whichever
 * order they come in. */
static void test_07_anchor(void **state)
{
	(void)state;
	sigs s = strategy_sigs(g_conv_block, NULL, "anchor", 0);
	const char *block[] = {"0,1,2,3"};
	assert_sigs(&s, block, 1);
	sigs_free(&s);

	s = strategy_sigs(g_conv_forks, NULL, "anchor", 0);
	const char *forks[] = {"1,2"};
	assert_sigs(&s, forks, 1);
	sigs_free(&s);

	const char *mm[] = {"0,1,2,3,4"};
	s = strategy_sigs(g_matmul, NULL, "anchor", 0);
	assert_sigs(&s, mm, 1);
	sigs_free(&s);
	s = strategy_sigs(g_matmul, &ONE, "anchor", 0);
	assert_sigs(&s, mm, 1);
	sigs_free(&s);

	/* one cut per anchor; Conv -> Conv: each Conv its own, the second
	 * taking the Relu between as prologue once the first cannot */
	int zero = 0, one = 1;
	s = strategy_sigs(g_conv_conv, &zero, "anchor", 0);
	const char *cc[] = {"0", "1"};
	assert_sigs(&s, cc, 2);
	sigs_free(&s);
	s = strategy_sigs(g_conv_conv, &one, "anchor", 0);
	const char *crc[] = {"0,1", "1,2"};
	assert_sigs(&s, crc, 2);
	sigs_free(&s);
}

/* --- 6: fusion -------------------------------------------------------------------------------- */

/* Case 8 (f): fusion's groups partition the compute nodes (every node in
 * exactly one group, when each node is a cut alone). */
static void test_08_fusion_partitions(void **state)
{
	(void)state;
	for (int gi = 0; gi < N_GRAPHS; gi++) {
		view v;
		view_open(&v, graphs[gi].fn, graphs[gi].arg, 0);
		pn_cuts c;
		run(&v, "fusion", &c);
		int count[128] = {0}, all_alone = 1;
		for (int i = 0; i < c.n; i++)
			for (int k = 0; k < c.len[i]; k++)
				count[c.nodes[i][k]]++;
		for (int i = 0; i < v.g->n_nodes; i++) {
			int32_t one = i;
			if (v.pv.compute[i] && !ref_ok(&v, &one, 1))
				all_alone = 0;
		}
		for (int i = 0; i < v.g->n_nodes; i++) {
			assert_true(count[i] <= 1);
			if (all_alone)
				assert_int_equal(count[i], v.pv.compute[i] ? 1 : 0);
		}
		pn_cuts_free(&c);
		view_close(&v);
	}
}

/* Case 9 (f): the TVM rules on small graphs.  Conv + BatchNormalization +
 * Relu is one group, as is Conv + Mul + Add + Relu (an out-elementwise-
 * fusable op takes its elementwise/broadcast epilogue); Exp fuses into the
 * ReduceSum after it (a reduction absorbs its elementwise producers) but
 * the reduction ends the group: the Relu after it is alone; Conv -> Conv
 * stays two groups, and Conv -> Relu -> Conv gives {Conv, Relu}, {Conv};
 * TopK (opaque) stays alone with neighbours on both sides; a diamond of
 * elementwise ops is one group (fusion through the post-dominator). */
static void test_09_fusion_rules(void **state)
{
	(void)state;
	struct {
		build_fn fn;
		const void *arg;
		const char *want[4];
		int n;
	} cases[] = {
		{g_conv_bn_relu, NULL, {"0,1,2"}, 1},
		{g_conv_mul_add_relu, NULL, {"0,1,2,3"}, 1},
		{g_conv_block, NULL, {"0", "1,2,3"}, 2},
		{g_reduce, NULL, {"0,1", "2"}, 2},
		{g_conv_conv, &ZERO, {"0", "1"}, 2},
		{g_conv_conv, &ONE, {"0,1", "2"}, 2},
		{g_opaque, NULL, {"0", "1", "2"}, 3},
		{g_diamond, NULL, {"0,1,2,3,4"}, 1},
		{g_chain, &N5, {"0,1,2,3,4"}, 1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		for (int order = -1; order <= 1; order++) {
			sigs s = strategy_sigs(cases[i].fn, cases[i].arg, "fusion", order);
			assert_sigs(&s, cases[i].want, cases[i].n);
			sigs_free(&s);
		}
	}
}

/* --- 7: node order ------------------------------------------------------------------------------ */

/* Canonical hashes of a strategy's cuts, sorted: the cuts up to
 * isomorphism, for graphs whose automorphisms make node identities
 * interchangeable. */
static void form_hashes(build_fn fn, const void *arg, const char *strategy, int order,
			pn_key *out, int *n)
{
	view v;
	view_open(&v, fn, arg, order);
	pn_cuts c;
	run(&v, strategy, &c);
	char err[PN_ERRLEN] = "";
	assert_true(c.n <= 1024);
	for (int i = 0; i < c.n; i++) {
		pn_form f;
		if (pn_form_of_cut(v.g, &v.r, c.nodes[i], c.len[i], &f, err))
			fail_msg("form: %s", err);
		out[i] = f.hash;
		pn_form_free(&f);
	}
	*n = c.n;
	for (int i = 1; i < *n; i++)
		for (int j = i; j > 0 && memcmp(out[j - 1].b, out[j].b, 16) > 0; j--) {
			pn_key t = out[j];
			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	pn_cuts_free(&c);
	view_close(&v);
}

/* Case 10 (g): every strategy gives the same cuts whatever order the file
 * lists nodes in: the same node sets (by build index) on graphs without
 * automorphisms, the same canonical forms on all. */
static void test_10_node_order_independence(void **state)
{
	(void)state;
	const int orders[] = {-1, 1, 2, 3, 4, 5};
	static pn_key h0[1024], h[1024];
	for (int gi = 0; gi < N_GRAPHS; gi++)
		for (int s = 0; s < PN_N_STRATEGIES; s++) {
			const char *name = pn_strategies[s].name;
			sigs base = strategy_sigs(graphs[gi].fn, graphs[gi].arg, name, 0);
			int n0, n;
			form_hashes(graphs[gi].fn, graphs[gi].arg, name, 0, h0, &n0);
			for (size_t o = 0; o < sizeof orders / sizeof orders[0]; o++) {
				form_hashes(graphs[gi].fn, graphs[gi].arg, name, orders[o], h, &n);
				if (n != n0 || memcmp(h, h0, sizeof(pn_key) * (size_t)n))
					fail_msg("%s/%s: other cuts in order %d", graphs[gi].name, name,
						 orders[o]);
				if (graphs[gi].symmetric)
					continue;
				sigs other = strategy_sigs(graphs[gi].fn, graphs[gi].arg, name, orders[o]);
				assert_int_equal(other.n, base.n);
				for (int i = 0; i < base.n; i++)
					if (strcmp(base.s[i], other.s[i]))
						fail_msg("%s/%s: order %d gives %s for %s", graphs[gi].name,
							 name, orders[o], other.s[i], base.s[i]);
				sigs_free(&other);
			}
			sigs_free(&base);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_01_convexity),
		cmocka_unit_test(test_02_cut_ok_every_subset),
		cmocka_unit_test(test_03_bounds),
		cmocka_unit_test(test_04_strategies_within_bounds),
		cmocka_unit_test(test_05_sole_compute_nodes),
		cmocka_unit_test(test_06_window_runs),
		cmocka_unit_test(test_07_anchor),
		cmocka_unit_test(test_08_fusion_partitions),
		cmocka_unit_test(test_09_fusion_rules),
		cmocka_unit_test(test_10_node_order_independence),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
