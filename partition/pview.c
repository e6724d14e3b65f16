/*
 * pview.c - the partition view of a model: which nodes are compute nodes,
 * their canonical topological order, adjacency, and the checks every cut
 * must pass.
 */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "canon/form.h"
#include "partition/partition.h"
#include "schemas/ops.h"

static int is_compute(const pn_graph *g, const pn_infer_result *r, int i)
{
	const pn_node *n = &g->nodes[i];
	if (n->op == PN_OP_Constant)
		return 0;
	for (int k = 0; k < n->n_out; k++) {
		int v = n->out[k];
		if (v >= 0 && pn_const_source(g, r, v) < 0)
			return 1;
	}
	return 0;   /* every output is a known constant (or an Identity of one): folded away */
}

/* Adjacency lists in CSR form; succ = 1 for successors, 0 predecessors. */
static int build_adjacency(pn_pview *pv, int succ)
{
	const pn_graph *g = pv->g;
	int32_t *start = calloc((size_t)g->n_nodes + 1, sizeof(int32_t));
	int32_t *list = NULL;
	if (!start)
		return -1;
	for (int pass = 0; pass < 2; pass++) {
		int fill = 0;
		for (int i = 0; i < g->n_nodes; i++) {
			if (pass)
				start[i] = fill;
			if (!pv->compute[i])
				continue;
			const pn_node *n = &g->nodes[i];
			int first = fill;
			int cnt = succ ? n->n_out : n->n_in + n->n_implicit;
			for (int k = 0; k < cnt; k++) {
				int v = succ ? n->out[k] : k < n->n_in ? n->in[k] : n->implicit[k - n->n_in];
				if (v < 0)
					continue;
				const pn_value *val = &g->values[v];
				int m = succ ? val->n_consumers : 1;
				for (int c = 0; c < m; c++) {
					int j = succ ? val->consumers[c] : val->producer;
					if (j < 0 || !pv->compute[j])
						continue;
					int dup = 0;
					for (int q = first; pass && q < fill && !dup; q++)
						dup = list[q] == j;
					if (pass && !dup)
						list[fill] = j;
					if (!pass || !dup)
						fill++;
				}
			}
			if (!pass)
				fill = fill;   /* counting pass over-counts duplicates: fine */
		}
		if (!pass) {
			list = malloc(sizeof(int32_t) * (size_t)(fill + 1));
			if (!list) {
				free(start);
				return -1;
			}
		} else {
			start[g->n_nodes] = fill;
		}
	}
	if (succ) {
		pv->succ_start = start;
		pv->succ = list;
	} else {
		pv->pred_start = start;
		pv->pred = list;
	}
	return 0;
}

/* Kahn's algorithm choosing, among ready nodes, the least colour: an order
 * fixed by the graph, whatever order the file lists nodes in.  Equal
 * colours (nodes refinement cannot tell apart) go by tie[node], the
 * canonical positions when known, else by node index. */
static int canonical_order(pn_pview *pv, const int32_t *tie)
{
	const pn_graph *g = pv->g;
	int32_t *pending = calloc((size_t)g->n_nodes + 1, sizeof(int32_t));
	int32_t *ready = malloc(sizeof(int32_t) * (size_t)(g->n_nodes + 1));
	if (!pending || !ready) {
		free(pending);
		free(ready);
		return -1;
	}
	int nr = 0, done = 0;
	for (int i = 0; i < g->n_nodes; i++) {
		if (!pv->compute[i])
			continue;
		pending[i] = pv->pred_start[i + 1] - pv->pred_start[i];
		if (!pending[i])
			ready[nr++] = i;
	}
	while (nr) {
		int best = 0;
		for (int k = 1; k < nr; k++) {
			uint64_t a = pv->colour[ready[k]], b = pv->colour[ready[best]];
			int32_t ta = tie ? tie[ready[k]] : ready[k];
			int32_t tb = tie ? tie[ready[best]] : ready[best];
			if (a < b || (a == b && ta < tb))
				best = k;
		}
		int i = ready[best];
		ready[best] = ready[--nr];
		pv->rank[i] = done;
		pv->order[done++] = i;
		for (int k = pv->succ_start[i]; k < pv->succ_start[i + 1]; k++)
			if (--pending[pv->succ[k]] == 0)
				ready[nr++] = pv->succ[k];
	}
	free(pending);
	free(ready);
	return done == pv->n ? 0 : -1;
}

int pn_pview_build(pn_pview *pv, const pn_graph *g, const pn_infer_result *r, char *err)
{
	memset(pv, 0, sizeof(*pv));
	pv->g = g;
	pv->r = r;
	size_t nn = (size_t)g->n_nodes + 1;
	pv->compute = calloc(nn, 1);
	pv->order = malloc(sizeof(int32_t) * nn);
	pv->rank = malloc(sizeof(int32_t) * nn);
	pv->colour = calloc(nn, sizeof(uint64_t));
	pv->stamp = calloc(nn, sizeof(uint32_t));
	pv->stack = malloc(sizeof(int32_t) * nn);
	if (!pv->compute || !pv->order || !pv->rank || !pv->colour || !pv->stamp || !pv->stack)
		return pn_fail(err, "out of memory");
	for (int i = 0; i < g->n_nodes; i++) {
		pv->compute[i] = (uint8_t)is_compute(g, r, i);
		pv->n += pv->compute[i];
		pv->rank[i] = -1;
	}
	if (build_adjacency(pv, 1) || build_adjacency(pv, 0))
		return pn_fail(err, "out of memory");
	if (pn_node_colours(g, r, pv->compute, pv->colour, err))
		return -1;
	if (canonical_order(pv, NULL))
		return pn_fail(err, "compute nodes do not form a DAG");
	return 0;
}

void pn_pview_free(pn_pview *pv)
{
	free(pv->compute);
	free(pv->order);
	free(pv->rank);
	free(pv->colour);
	free(pv->succ_start);
	free(pv->succ);
	free(pv->pred_start);
	free(pv->pred);
	free(pv->stamp);
	free(pv->stack);
	memset(pv, 0, sizeof(*pv));
}

/* --- cut lists ------------------------------------------------------------------ */

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

int pn_cuts_add(pn_cuts *c, const int32_t *nodes, int n)
{
	if (c->n == c->cap) {
		int cap = c->cap ? c->cap * 2 : 64;
		int32_t **nv = realloc(c->nodes, sizeof(*nv) * (size_t)cap);
		int32_t *lv = nv ? realloc(c->len, sizeof(*lv) * (size_t)cap) : NULL;
		if (!nv || !lv) {
			if (nv)
				c->nodes = nv;
			return -1;
		}
		c->nodes = nv;
		c->len = lv;
		c->cap = cap;
	}
	int32_t *copy = malloc(sizeof(int32_t) * (size_t)(n + 1));
	if (!copy)
		return -1;
	memcpy(copy, nodes, sizeof(int32_t) * (size_t)n);
	qsort(copy, (size_t)n, sizeof(int32_t), cmp_i32);
	c->nodes[c->n] = copy;
	c->len[c->n++] = n;
	return 0;
}

void pn_cuts_free(pn_cuts *c)
{
	for (int i = 0; i < c->n; i++)
		free(c->nodes[i]);
	free(c->nodes);
	free(c->len);
	memset(c, 0, sizeof(*c));
}

/* --- cut checks --------------------------------------------------------------------- */

static uint32_t next_epoch(pn_pview *pv)
{
	if (++pv->epoch == 0) {
		memset(pv->stamp, 0, sizeof(uint32_t) * (size_t)pv->g->n_nodes);
		pv->epoch = 1;
	}
	return pv->epoch;
}

/* A path leaving the cut and coming back must end at a node ranked below
 * the cut's last node, so the walk only visits those. */
static int convex(pn_pview *pv, const int32_t *nodes, int n, const uint8_t *in_cut)
{
	int hi = 0;
	for (int i = 0; i < n; i++)
		hi = pv->rank[nodes[i]] > hi ? pv->rank[nodes[i]] : hi;
	uint32_t ep = next_epoch(pv);
	int sp = 0;
	for (int i = 0; i < n; i++)
		for (int k = pv->succ_start[nodes[i]]; k < pv->succ_start[nodes[i] + 1]; k++) {
			int j = pv->succ[k];
			if (!in_cut[j] && pv->rank[j] < hi && pv->stamp[j] != ep) {
				pv->stamp[j] = ep;
				pv->stack[sp++] = j;
			}
		}
	while (sp) {
		int x = pv->stack[--sp];
		for (int k = pv->succ_start[x]; k < pv->succ_start[x + 1]; k++) {
			int j = pv->succ[k];
			if (in_cut[j])
				return 0;
			if (pv->rank[j] < hi && pv->stamp[j] != ep) {
				pv->stamp[j] = ep;
				pv->stack[sp++] = j;
			}
		}
	}
	return 1;
}

static int is_constant(const pn_pview *pv, int v)
{
	return pn_const_source(pv->g, pv->r, v) >= 0;
}

/* Distinct non-constant values read from outside plus values read outside
 * (or graph outputs), or -1 past either bound. */
static int boundary(pn_pview *pv, const int32_t *nodes, int n, const uint8_t *in_cut)
{
	const pn_graph *g = pv->g;
	int inputs = 0, outputs = 0;
	int32_t seen[PN_CUT_MAX_INPUTS + 1];
	for (int i = 0; i < n; i++) {
		const pn_node *nd = &g->nodes[nodes[i]];
		for (int k = 0; k < nd->n_in + nd->n_implicit; k++) {
			int v = k < nd->n_in ? nd->in[k] : nd->implicit[k - nd->n_in];
			if (v < 0 || is_constant(pv, v))
				continue;
			int p = g->values[v].producer;
			if (p >= 0 && in_cut[p])
				continue;
			int dup = 0;
			for (int q = 0; q < inputs && !dup; q++)
				dup = seen[q] == v;
			if (dup)
				continue;
			if (inputs == PN_CUT_MAX_INPUTS)
				return -1;
			seen[inputs++] = v;
		}
		for (int k = 0; k < nd->n_out; k++) {
			int v = nd->out[k];
			if (v < 0)
				continue;
			const pn_value *val = &g->values[v];
			int out = val->is_output;
			for (int c = 0; c < val->n_consumers && !out; c++)
				out = !in_cut[val->consumers[c]];
			if (out && ++outputs > PN_CUT_MAX_OUTPUTS)
				return -1;
		}
	}
	return inputs + outputs;
}

int pn_cut_ok(pn_pview *pv, const int32_t *nodes, int n, uint8_t *in_cut)
{
	if (n < 1 || n > PN_CUT_MAX_NODES)
		return 0;
	for (int i = 0; i < n; i++)
		in_cut[nodes[i]] = 1;
	int ok = boundary(pv, nodes, n, in_cut) >= 0 && convex(pv, nodes, n, in_cut);
	for (int i = 0; i < n; i++)
		in_cut[nodes[i]] = 0;
	return ok;
}

int pn_cut_boundary(pn_pview *pv, const int32_t *nodes, int n, uint8_t *in_cut)
{
	for (int i = 0; i < n; i++)
		in_cut[nodes[i]] = 1;
	int b = boundary(pv, nodes, n, in_cut);
	for (int i = 0; i < n; i++)
		in_cut[nodes[i]] = 0;
	return b;
}

int pn_cut_connected(pn_pview *pv, const int32_t *nodes, int n, uint8_t *in_cut)
{
	for (int i = 0; i < n; i++)
		in_cut[nodes[i]] = 1;
	uint32_t ep = next_epoch(pv);
	int sp = 0, seen = 1;
	pv->stack[sp++] = nodes[0];
	pv->stamp[nodes[0]] = ep;
	while (sp) {
		int x = pv->stack[--sp];
		for (int dir = 0; dir < 2; dir++) {
			const int32_t *st = dir ? pv->pred_start : pv->succ_start;
			const int32_t *li = dir ? pv->pred : pv->succ;
			for (int k = st[x]; k < st[x + 1]; k++) {
				int j = li[k];
				if (in_cut[j] && pv->stamp[j] != ep) {
					pv->stamp[j] = ep;
					pv->stack[sp++] = j;
					seen++;
				}
			}
		}
	}
	for (int i = 0; i < n; i++)
		in_cut[nodes[i]] = 0;
	return seen == n;
}

int pn_pview_tie_break(pn_pview *pv, const int32_t *position)
{
	return canonical_order(pv, position);
}
