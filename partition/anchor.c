/*
 * anchor.c - the `anchor` strategy: each compute-heavy op (F_ANCHOR in
 * ops.def: Conv, ConvTranspose, MatMul, Gemm and their quantized forms) with
 * its elementwise prologue (the elementwise ops that produce its operands
 * and are read by nothing outside the cut) and epilogue (the chain of
 * elementwise ops consuming its output, each the only reader of the
 * previous link).
 */
#include "partition/partition.h"

#include <stdlib.h>

#include "schemas/ops.h"

static int elementwise(const pn_pview *pv, int node)
{
	int op = pv->g->nodes[node].op;
	return op >= 0 && (pn_ops[op].kind == ELEMWISE || pn_ops[op].kind == BROADCAST);
}

/* The single compute consumer of node's only output, or -1. */
static int only_consumer(const pn_pview *pv, int node)
{
	const pn_node *n = &pv->g->nodes[node];
	if (n->n_out != 1 || n->out[0] < 0)
		return -1;
	const pn_value *v = &pv->g->values[n->out[0]];
	if (v->n_consumers != 1 || v->is_output || !pv->compute[v->consumers[0]])
		return -1;
	return v->consumers[0];
}

static int grow_epilogue(const pn_pview *pv, int anchor, int32_t *cut, int n)
{
	int tail = anchor;
	while (n < PN_CUT_MAX_NODES) {
		int c = only_consumer(pv, tail);
		if (c < 0 || !elementwise(pv, c))
			break;
		cut[n++] = tail = c;
	}
	return n;
}

static int in_list(const int32_t *cut, int n, int x)
{
	for (int i = 0; i < n; i++)
		if (cut[i] == x)
			return 1;
	return 0;
}

/* An elementwise producer joins the prologue when every reader of its
 * output is already in the cut.  Operands are all followed (whatever their
 * order in the file: Add(a, b) and Add(b, a) give one prologue), and among
 * the candidates the one latest in the canonical order joins first, so a
 * prologue cut short by the size bound is cut the same way every time. */
static int joins_prologue(const pn_pview *pv, const int32_t *cut, int n, int p)
{
	if (p < 0 || !pv->compute[p] || !elementwise(pv, p) || in_list(cut, n, p))
		return 0;
	const pn_node *nd = &pv->g->nodes[p];
	for (int k = 0; k < nd->n_out; k++) {
		if (nd->out[k] < 0)
			continue;
		const pn_value *v = &pv->g->values[nd->out[k]];
		if (v->is_output)
			return 0;
		for (int c = 0; c < v->n_consumers; c++)
			if (!in_list(cut, n, v->consumers[c]))
				return 0;
	}
	return 1;
}

static int grow_prologue(const pn_pview *pv, int32_t *cut, int n)
{
	for (;;) {
		int best = -1;
		for (int i = 0; i < n; i++) {
			const pn_node *nd = &pv->g->nodes[cut[i]];
			for (int k = 0; k < nd->n_in; k++) {
				int v = nd->in[k];
				int p = v >= 0 ? pv->g->values[v].producer : -1;
				if (joins_prologue(pv, cut, n, p) && (best < 0 || pv->rank[p] > pv->rank[best]))
					best = p;
			}
		}
		if (best < 0 || n == PN_CUT_MAX_NODES)
			return n;
		cut[n++] = best;
	}
}

int pn_partition_anchor(pn_pview *pv, pn_cuts *out)
{
	uint8_t *in_cut = calloc((size_t)pv->g->n_nodes + 1, 1);
	int32_t *cut = malloc(sizeof(int32_t) * (PN_CUT_MAX_NODES + 1));
	int rc = in_cut && cut ? 0 : -1;
	for (int i = 0; i < pv->n && !rc; i++) {
		int a = pv->order[i];
		int op = pv->g->nodes[a].op;
		if (op < 0 || !(pn_ops[op].flags & F_ANCHOR))
			continue;
		cut[0] = a;
		int n = grow_epilogue(pv, a, cut, 1);
		n = grow_prologue(pv, cut, n);
		if (pn_cut_ok(pv, cut, n, in_cut))
			rc = pn_cuts_add(out, cut, n);
	}
	free(in_cut);
	free(cut);
	return rc;
}
