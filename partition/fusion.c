/*
 * fusion.c - the `fusion` strategy: groups by the rules of TVM's FuseOps
 * over the post-dominator tree of the compute nodes.
 *
 * With d the immediate post-dominator of node n (every path from n to the
 * graph's outputs passes d) and "the path" every node between them:
 *   - an out-elementwise-fusable op (Conv, MatMul, pooling, softmax, ...)
 *     fuses with d when d and the path are elementwise/broadcast (its
 *     epilogue);
 *   - an elementwise/broadcast op fuses into d when the path is at most
 *     injective and d is at most injective or a reduction (a reduction
 *     absorbs its elementwise producers, and ends the group);
 *   - an injective op fuses into d when the path and d are at most injective;
 *   - reductions, opaque and control-flow ops fuse into nothing.
 * Nodes are visited in the canonical topological order; a fusion that would
 * break convexity or the size bounds is not made.  Every group is a cut.
 */
#include "partition/partition.h"

#include <stdlib.h>
#include <string.h>

#include "schemas/ops.h"

typedef struct fuser {
	pn_pview *pv;
	int32_t *ipdom;      /* node -> immediate post-dominator, -1 = the sink */
	int32_t *depth;      /* depth in the post-dominator tree */
	int32_t *parent;     /* union-find */
	int32_t *members;    /* scratch: nodes of a prospective group */
	uint8_t *mark, *in_cut;
} fuser;

static int kind_of(const pn_pview *pv, int node)
{
	int op = pv->g->nodes[node].op;
	return op >= 0 ? pn_ops[op].kind : OPAQUE;
}

static int lca(const fuser *f, int a, int b)
{
	while (a != b) {
		if (a < 0 || b < 0)
			return -1;
		if (f->depth[a] >= f->depth[b])
			a = f->ipdom[a];
		else
			b = f->ipdom[b];
	}
	return a;
}

/* A node whose value leaves the compute graph is post-dominated only by
 * the sink. */
static int exits(const pn_pview *pv, int node)
{
	const pn_node *n = &pv->g->nodes[node];
	for (int k = 0; k < n->n_out; k++) {
		int v = n->out[k];
		if (v < 0)
			continue;
		const pn_value *val = &pv->g->values[v];
		if (val->is_output)
			return 1;
		for (int c = 0; c < val->n_consumers; c++)
			if (!pv->compute[val->consumers[c]])
				return 1;
	}
	return 0;
}

static void post_dominators(fuser *f)
{
	pn_pview *pv = f->pv;
	for (int i = pv->n - 1; i >= 0; i--) {
		int x = pv->order[i];
		int d = -1, first = 1;
		if (!exits(pv, x) && pv->succ_start[x] < pv->succ_start[x + 1]) {
			for (int k = pv->succ_start[x]; k < pv->succ_start[x + 1]; k++) {
				int s = pv->succ[k];
				d = first ? s : lca(f, d, s);
				first = 0;
			}
		}
		f->ipdom[x] = d;
		f->depth[x] = d < 0 ? 1 : f->depth[d] + 1;
	}
}

static int find(fuser *f, int x)
{
	while (f->parent[x] != x)
		x = f->parent[x] = f->parent[f->parent[x]];
	return x;
}

/* Marks the nodes strictly between n and d (reachable from n, reaching d). */
static int mark_path(fuser *f, int n, int d, int max_kind)
{
	pn_pview *pv = f->pv;
	int hi = pv->rank[d], ok = 1;
	int32_t *stack = pv->stack;
	int sp = 0;
	for (int i = pv->rank[n] + 1; i < hi; i++)
		f->mark[pv->order[i]] = 0;
	f->mark[n] = 1;
	stack[sp++] = n;
	while (sp) {   /* forward from n */
		int x = stack[--sp];
		for (int k = pv->succ_start[x]; k < pv->succ_start[x + 1]; k++) {
			int s = pv->succ[k];
			if (pv->rank[s] < hi && !f->mark[s]) {
				f->mark[s] = 1;
				stack[sp++] = s;
			}
		}
	}
	/* Every node reachable from n below d reaches d (d post-dominates n),
	 * so the marked set is the path. */
	for (int i = pv->rank[n] + 1; i < hi && ok; i++) {
		int x = pv->order[i];
		if (f->mark[x] && kind_of(pv, x) > max_kind)
			ok = 0;
	}
	return ok;
}

/* Collects the members of every group touching n, the path, and d. */
static int collect(fuser *f, int n, int d, int *count)
{
	pn_pview *pv = f->pv;
	int32_t roots[PN_CUT_MAX_NODES + 2];
	int nr = 0, k = 0;
	roots[nr++] = find(f, n);
	roots[nr++] = find(f, d);
	for (int j = pv->rank[n] + 1; j < pv->rank[d]; j++) {
		int y = pv->order[j];
		if (!f->mark[y])
			continue;
		int r = find(f, y), seen = 0;
		for (int q = 0; q < nr && !seen; q++)
			seen = roots[q] == r;
		if (!seen) {
			if (nr == PN_CUT_MAX_NODES)
				return -1;
			roots[nr++] = r;
		}
	}
	for (int i = 0; i < pv->n; i++) {
		int x = pv->order[i], r = find(f, x), take = 0;
		for (int q = 0; q < nr && !take; q++)
			take = roots[q] == r;
		if (!take)
			continue;
		if (k == PN_CUT_MAX_NODES)
			return -1;
		f->members[k++] = x;
	}
	*count = k;
	return 0;
}

static void try_fuse(fuser *f, int n)
{
	pn_pview *pv = f->pv;
	int d = f->ipdom[n];
	if (d < 0)
		return;
	int kn = kind_of(pv, n), kd = kind_of(pv, d), path_max;
	if (kn == OUT_FUSABLE && kd <= BROADCAST)
		path_max = BROADCAST;
	else if (kn <= BROADCAST && (kd <= INJECTIVE || kd == REDUCTION))
		path_max = INJECTIVE;
	else if (kn == INJECTIVE && kd <= INJECTIVE)
		path_max = INJECTIVE;
	else
		return;
	if (!mark_path(f, n, d, path_max))
		return;
	int count;
	if (collect(f, n, d, &count) || !pn_cut_ok(pv, f->members, count, f->in_cut))
		return;
	int root = find(f, n);
	for (int i = 0; i < count; i++)
		f->parent[find(f, f->members[i])] = root;
}

static int emit_groups(fuser *f, pn_cuts *out)
{
	pn_pview *pv = f->pv;
	for (int i = 0; i < pv->n; i++) {
		int x = pv->order[i];
		if (find(f, x) != x)
			continue;
		int k = 0;
		for (int j = 0; j < pv->n; j++)
			if (find(f, pv->order[j]) == x)
				f->members[k++] = pv->order[j];
		if (pn_cut_ok(pv, f->members, k, f->in_cut) && pn_cuts_add(out, f->members, k))
			return -1;
	}
	return 0;
}

int pn_partition_fusion(pn_pview *pv, pn_cuts *out)
{
	size_t nn = (size_t)pv->g->n_nodes + 1;
	fuser f = {.pv = pv};
	f.ipdom = malloc(sizeof(int32_t) * nn);
	f.depth = malloc(sizeof(int32_t) * nn);
	f.parent = malloc(sizeof(int32_t) * nn);
	f.members = malloc(sizeof(int32_t) * (nn + PN_CUT_MAX_NODES));
	f.mark = calloc(nn, 1);
	f.in_cut = calloc(nn, 1);
	int rc = f.ipdom && f.depth && f.parent && f.members && f.mark && f.in_cut ? 0 : -1;
	if (!rc) {
		for (size_t i = 0; i < nn; i++)
			f.parent[i] = (int32_t)i;
		post_dominators(&f);
		for (int i = 0; i < pv->n; i++)
			try_fuse(&f, pv->order[i]);
		rc = emit_groups(&f, out);
	}
	free(f.ipdom);
	free(f.depth);
	free(f.parent);
	free(f.members);
	free(f.mark);
	free(f.in_cut);
	return rc;
}
