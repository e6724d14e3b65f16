/*
 * fuse.c - finding the chains of runtime/fuse.h in a graph.
 */
#include "runtime/fuse.h"

#include <stdlib.h>

#include "schemas/ops.h"

/* The node that produces value v, if v is one node's output. */
static const pn_node *producer(const pn_graph *g, int v)
{
	if (v < 0 || v >= g->n_values || g->values[v].role != PN_ROLE_NODE ||
	    g->values[v].producer < 0)
		return NULL;
	return &g->nodes[g->values[v].producer];
}

/* The one node that reads v, when exactly one does, once, and v is not a
 * graph output: then a chain may keep v to itself. */
static const pn_node *sole_reader(const pn_graph *g, int v)
{
	if (v < 0 || v >= g->n_values)
		return NULL;
	const pn_value *val = &g->values[v];
	if (val->is_output || val->n_consumers != 1)
		return NULL;
	return &g->nodes[val->consumers[0]];
}

/* A value with contents of its own: an initializer, a Constant's output, a
 * weight kept as metadata.  Absent optional inputs (-1) count as constant. */
static int constant(const pn_graph *g, int v)
{
	if (v < 0)
		return 1;
	return v < g->n_values && (g->values[v].data || g->values[v].meta);
}

/* A plain node of op `op` (ai.onnx, no nested graph reads) with one output. */
static int plain(const pn_node *n, int op)
{
	return n && n->op == op && n->n_out == 1 && n->out[0] >= 0 && n->n_implicit == 0;
}

/* An activation a qconv chain may hold (any: 1) or only a Relu (any: 0);
 * a Clip's bounds must be constants. */
static int activation(const pn_graph *g, const pn_node *n, int any)
{
	if (!n || n->n_out != 1 || n->n_in < 1 || n->n_implicit)
		return 0;
	if (n->op == PN_OP_Relu)
		return n->n_in == 1;
	if (!any)
		return 0;
	if (n->op == PN_OP_HardSwish || n->op == PN_OP_HardSigmoid)
		return n->n_in == 1;
	if (n->op != PN_OP_Clip || n->n_in > 3)
		return 0;
	for (int i = 1; i < n->n_in; i++)
		if (!constant(g, n->in[i]))
			return 0;
	return 1;
}

/* The node after value v in a chain: its sole reader, past an activation
 * (activation()) that is the sole reader; *act is that node or NULL.  NULL
 * unless it is a QuantizeLinear whose scale and zero point are constants. */
static const pn_node *quantize_after(const pn_graph *g, int v, int any, const pn_node **act)
{
	const pn_node *next = sole_reader(g, v);
	*act = NULL;
	if (activation(g, next, any) && next->out[0] >= 0) {
		*act = next;
		next = sole_reader(g, next->out[0]);
	}
	if (!plain(next, PN_OP_QuantizeLinear) || next->n_in < 2 || next->n_in > 3)
		return NULL;
	if (!constant(g, next->in[1]) || (next->n_in > 2 && !constant(g, next->in[2])))
		return NULL;
	return next;
}

/* The DequantizeLinear whose output is input i of n and is read by n alone,
 * from a value that is not constant (a constant operand is folded). */
static const pn_node *dequantized_input(const pn_graph *g, const pn_node *n, int i)
{
	const pn_node *d = producer(g, n->in[i]);
	if (!plain(d, PN_OP_DequantizeLinear) || d->n_in < 2 || sole_reader(g, n->in[i]) != n)
		return NULL;
	return constant(g, d->in[0]) ? NULL : d;
}

/* The index of node n of g, -1 for none. */
static int32_t index_of(const pn_graph *g, const pn_node *n)
{
	return n ? (int32_t)(n - g->nodes) : -1;
}

/* Whether Add node n heads a qadd chain; fills *q. */
static int match_qadd(const pn_graph *g, const pn_node *n, pn_fuse_qadd *q)
{
	if (!plain(n, PN_OP_Add) || n->n_in != 2 || n->in[0] == n->in[1])
		return 0;
	const pn_node *da = dequantized_input(g, n, 0), *db = dequantized_input(g, n, 1), *relu;
	const pn_node *qn = da && db ? quantize_after(g, n->out[0], 0, &relu) : NULL;
	if (!qn)
		return 0;
	*q = (pn_fuse_qadd){index_of(g, da), index_of(g, db), index_of(g, relu), index_of(g, qn)};
	return 1;
}

/* A Gemm that is a fully connected layer, y = x W^T + b: the 1x1
 * convolution of x [N, K] as [N, K, 1] by W [M, K] as [M, K, 1]. */
static int linear_gemm(const pn_node *n)
{
	return plain(n, PN_OP_Gemm) && pn_attr_int(n, "transA", 0) == 0 &&
	       pn_attr_int(n, "transB", 0) == 1 && pn_attr_float(n, "alpha", 1.0f) == 1.0f &&
	       pn_attr_float(n, "beta", 1.0f) == 1.0f;
}

/* Whether Conv node c (or a linear Gemm) heads a qconv chain; fills *q. */
static int match_qconv(const pn_graph *g, const pn_node *c, pn_fuse_qconv *q)
{
	if (!(plain(c, PN_OP_Conv) || linear_gemm(c)) || c->n_in < 2 || c->n_in > 3)
		return 0;
	/* a constant input: the session folds the Conv instead */
	const pn_node *dx = dequantized_input(g, c, 0);
	if (!dx)
		return 0;
	const pn_node *dw = producer(g, c->in[1]), *act;
	if (!plain(dw, PN_OP_DequantizeLinear) || dw->n_in < 2)
		return 0;
	const pn_node *next = quantize_after(g, c->out[0], 1, &act);
	if (!next)
		return 0;
	*q = (pn_fuse_qconv){index_of(g, dx), index_of(g, dw), index_of(g, act), index_of(g, next)};
	return 1;
}

/* Node i (-1: none) runs inside a chain's head. */
static void swallow(pn_fusion *f, int32_t i)
{
	if (i >= 0)
		f->role[i] = PN_FUSE_SWALLOWED;
}

int pn_fusion_plan(const pn_graph *g, pn_fusion *f)
{
	f->n_chains = 0;
	f->role = calloc((size_t)g->n_nodes + 1, 1);
	f->qconv = calloc((size_t)g->n_nodes + 1, sizeof(*f->qconv));
	f->qadd = calloc((size_t)g->n_nodes + 1, sizeof(*f->qadd));
	if (!f->role || !f->qconv || !f->qadd) {
		pn_fusion_free(f);
		return -1;
	}
	for (int i = 0; i < g->n_nodes; i++) {
		pn_fuse_qconv q;
		pn_fuse_qadd a;
		if (match_qconv(g, &g->nodes[i], &q)) {
			f->role[i] = PN_FUSE_QCONV;
			f->qconv[i] = q;
			swallow(f, q.dq_x);
			swallow(f, q.act);
			swallow(f, q.q);
		} else if (match_qadd(g, &g->nodes[i], &a)) {
			f->role[i] = PN_FUSE_QADD;
			f->qadd[i] = a;
			swallow(f, a.dq_a);
			swallow(f, a.dq_b);
			swallow(f, a.relu);
			swallow(f, a.q);
		} else {
			continue;
		}
		f->n_chains++;
	}
	return 0;
}

void pn_fusion_free(pn_fusion *f)
{
	free(f->role);
	free(f->qconv);
	free(f->qadd);
	f->role = NULL;
	f->qconv = NULL;
	f->qadd = NULL;
	f->n_chains = 0;
}
