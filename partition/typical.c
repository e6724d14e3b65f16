/*
 * typical.c - the `typical` strategy: the blocks a model repeats (a
 * transformer layer, a residual block, an inverted bottleneck), found as
 * tandem repeats of its op sequence, the unit the published corpus is made
 * of (GraphNet's typical subgraphs: repeated blocks of 4 to 64 ops).
 *
 * 1. Each compute node gets a token: a hash of what it computes alone - op
 *    type and domain, its attributes (whatever order the file lists them
 *    in) and the types of its inputs and outputs - never its place in the
 *    graph.  Refined colours (canon/form.h) would not do: they tell the
 *    layers of a stack apart, which is exactly what must look alike here.
 * 2. The nodes are ordered by depth (the longest path from the graph's
 *    inputs), then token, then canonical rank (pview.c): the layers of a
 *    stack become the same token sequence, whatever order the file lists
 *    their nodes in.
 * 3. A tandem repeat is a run of 2 or more equal consecutive blocks of p
 *    tokens, 4 <= p <= PN_CUT_MAX_NODES.  Every maximal p-periodic stretch
 *    of each period is a candidate; candidates are taken by the positions
 *    they cover, most first (then the shorter period: the block itself
 *    rather than two of it, then the earlier start).  A stretch longer than
 *    its copies leaves a choice of where the first copy starts: the one
 *    whose copies exchange the fewest values with the rest of the graph
 *    (a block cut at a layer's edges passes one stream on, so its copies
 *    are one subgraph; one cut mid-layer passes several, and the last copy
 *    differs), keeping the longest stretch of 2 or more consecutive copies
 *    on positions no earlier candidate took.  So the blocks are disjoint
 *    within a model.
 * 4. Each copy is a contiguous stretch of a topological order, so convex;
 *    it becomes a cut when it is also connected and within the cut limits
 *    (pn_cut_ok).
 *
 * The blocks of a model depend on that model alone, so a build over any
 * set of models, in any order, thread count or shard split, cuts the same
 * ones, and a new source adds its own without changing anyone else's.
 *
 * Corpus blocks (pn_typical_cut) find what several models hold once
 * each: the same order is split where one stream passes (no value computed
 * before a boundary is read after it but one: a layer's edge, a residual
 * block's; inside one the skip keeps a second alive), on the positions the
 * repeats left; a stretch of 4..64 positions is a block, shorter ones next
 * to each other (a chain of single ops) are joined until they hold 4; a
 * stretch longer than a cut is split at its narrowest inner boundaries.  A
 * block depends on its model alone and is listed under its pattern hash;
 * it becomes a typical cut once another place (another model, or another
 * place of this one) holds that pattern (dedup/blocks.h), which the whole
 * corpus decides: the published method's tokens are op names, so a layer
 * repeated at other widths is one block there too.  A block with a branch
 * is found whole, since the split goes by the graph, not the sequence.
 */
#include "partition/partition.h"

#include "canon/form.h"
#include "common/assert.h"
#include "common/err.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define TYPICAL_MIN 4

/* --- tokens ------------------------------------------------------------------------------------ */

static uint64_t hash_bytes(const void *p, size_t n, uint64_t seed)
{
	return XXH3_64bits_withSeed(p, n, seed);
}

static uint64_t hash_str(const char *s, uint64_t seed)
{
	return s ? hash_bytes(s, strlen(s), seed) : seed ^ 0x9e3779b97f4a7c15ull;
}

/* An attribute's name and value; tensors and graphs by their shape and
 * size only (their contents are weights or bodies). */
static uint64_t attr_hash(const pn_attr *a)
{
	uint64_t h = hash_str(a->name, (uint64_t)a->type);
	h = hash_bytes(&a->f, sizeof a->f, h);
	h = hash_bytes(&a->i, sizeof a->i, h);
	h = hash_str(a->s, h);
	if (a->floats)
		h = hash_bytes(a->floats, sizeof(float) * (size_t)a->n, h);
	if (a->ints)
		h = hash_bytes(a->ints, sizeof(int64_t) * (size_t)a->n, h);
	for (int k = 0; a->strings && k < a->n; k++)
		h = hash_str(a->strings[k], h);
	if (a->t) {
		h = hash_bytes(&a->t->dtype, sizeof a->t->dtype, h);
		h = hash_bytes(a->t->dims, sizeof(int64_t) * (size_t)a->t->rank, h);
	}
	if (a->g)
		h = hash_bytes(&a->g->n_nodes, sizeof a->g->n_nodes, h);
	return h;
}

static uint64_t type_hash(const pn_pview *pv, int v, uint64_t seed)
{
	if (v < 0)
		return hash_bytes("-", 1, seed);
	const pn_type *t = &pv->r->v[v].type;
	uint64_t h = hash_bytes(&t->dtype, sizeof t->dtype, seed);
	h = hash_bytes(&t->rank, sizeof t->rank, h);
	return t->rank > 0 ? hash_bytes(t->dims, sizeof(int64_t) * (size_t)t->rank, h) : h;
}

static uint64_t token_of(const pn_pview *pv, int i)
{
	const pn_node *n = &pv->g->nodes[i];
	uint64_t h = hash_str(n->domain, hash_str(n->op_type, 1));
	uint64_t attrs = 0;   /* a sum: the file's attribute order does not count */
	for (int k = 0; k < n->n_attr; k++)
		attrs += attr_hash(&n->attrs[k]);
	h = hash_bytes(&attrs, sizeof attrs, h);
	for (int k = 0; k < n->n_in; k++)
		h = type_hash(pv, n->in[k], h);
	for (int k = 0; k < n->n_out; k++)
		h = type_hash(pv, n->out[k], h + 1);
	return h;
}

/* --- the order --------------------------------------------------------------------------------- */

/* The output slot of node that is v (-1: none). */
static int out_slot(const pn_graph *g, int node, int v)
{
	for (int o = 0; o < g->nodes[node].n_out; o++)
		if (g->nodes[node].out[o] == v)
			return o;
	return -1;
}

/* One round of refinement: a node's colour with its producers' (by input
 * slot) and its consumers' (as a multiset: a sum). */
static void refine(const pn_pview *pv, const uint64_t *c, uint64_t *next)
{
	const pn_graph *g = pv->g;
	for (int i = 0; i < g->n_nodes; i++) {
		next[i] = 0;
		if (!pv->compute[i])
			continue;
		const pn_node *nd = &g->nodes[i];
		uint64_t h = c[i], succ = 0;
		for (int k = 0; k < nd->n_in; k++) {
			int v = nd->in[k], pr = v < 0 ? -1 : g->values[v].producer;
			uint64_t w[2] = {pr >= 0 && pv->compute[pr] ? c[pr] : 0,
					 pr >= 0 ? (uint64_t)out_slot(g, pr, v) : (uint64_t)k};
			h = hash_bytes(w, sizeof w, h);
		}
		for (int o = 0; o < nd->n_out; o++)
			for (int e = 0; nd->out[o] >= 0 && e < g->values[nd->out[o]].n_consumers; e++) {
				int q = g->values[nd->out[o]].consumers[e];
				uint64_t w[2] = {pv->compute[q] ? c[q] : 0, (uint64_t)o};
				succ += hash_bytes(w, sizeof w, 3);
			}
		next[i] = hash_bytes(&succ, sizeof succ, h);
	}
}

/* Tokens refined LOCAL_ROUNDS times over the graph's edges: nodes of equal
 * token and depth (the Q, K and V reshapes of a layer) told apart by their
 * neighbourhoods, alike in every layer but the outermost, where global
 * colours (pview.c) would order each layer's ties its own way.  0, or -1. */
#define LOCAL_ROUNDS 3
static int local_colours(const pn_pview *pv, const uint64_t *tok, uint64_t *out)
{
	size_t nn = (size_t)pv->g->n_nodes + 1;
	uint64_t *tmp = malloc(sizeof(uint64_t) * nn);
	if (!tmp)
		return -1;
	memcpy(out, tok, sizeof(uint64_t) * (nn - 1));
	for (int r = 0; r < LOCAL_ROUNDS; r++) {
		refine(pv, out, tmp);
		memcpy(out, tmp, sizeof(uint64_t) * (nn - 1));
	}
	free(tmp);
	return 0;
}

typedef struct keyed {
	int32_t depth, rank, node;
	uint64_t tok, local;
} keyed;

static int cmp_keyed(const void *x, const void *y)
{
	const keyed *a = x, *b = y;
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	if (a->tok != b->tok)
		return a->tok < b->tok ? -1 : 1;
	if (a->local != b->local)
		return a->local < b->local ? -1 : 1;
	return (a->rank > b->rank) - (a->rank < b->rank);
}

/* The compute nodes by (longest path from the graph's inputs, token,
 * canonical rank) into seq/at (token and node of each position): a
 * topological order (a node is deeper than its predecessors) in which the
 * layers of a stack, each one deeper than the last by the same amount, are
 * the same token sequence.  (Kahn's algorithm by least token is not: a node
 * left ready from far away changes the choices of the layer it lingers in.)
 * 0, or -1 out of memory. */
static int token_order(const pn_pview *pv, const uint64_t *tok, uint64_t *seq, int32_t *at)
{
	keyed *k = malloc(sizeof(keyed) * (size_t)(pv->n + 1));
	int32_t *depth = calloc((size_t)pv->g->n_nodes + 1, sizeof(int32_t));
	uint64_t *local = malloc(sizeof(uint64_t) * (size_t)(pv->g->n_nodes + 1));
	if (!k || !depth || !local || local_colours(pv, tok, local)) {
		free(k);
		free(depth);
		free(local);
		return -1;
	}
	for (int q = 0; q < pv->n; q++) {
		int i = pv->order[q];
		for (int e = pv->pred_start[i]; e < pv->pred_start[i + 1]; e++)
			if (depth[pv->pred[e]] + 1 > depth[i])
				depth[i] = depth[pv->pred[e]] + 1;
		k[q] = (keyed){depth[i], q, i, tok[i], local[i]};
	}
	qsort(k, (size_t)pv->n, sizeof(keyed), cmp_keyed);
	for (int q = 0; q < pv->n; q++) {
		seq[q] = k[q].tok;
		at[q] = k[q].node;
	}
	free(k);
	free(depth);
	free(local);
	return 0;
}

/* --- tandem repeats ---------------------------------------------------------------------------- */

/* seq[start..start+len) has period `period`, len >= 2 period. */
typedef struct repeat {
	int period, start, len;
} repeat;

static long coverage(const repeat *r)
{
	return (long)(r->len / r->period) * r->period;
}

static int cmp_repeat(const void *x, const void *y)
{
	const repeat *a = x, *b = y;
	long ca = coverage(a), cb = coverage(b);
	if (ca != cb)
		return ca > cb ? -1 : 1;
	if (a->period != b->period)
		return a->period < b->period ? -1 : 1;
	return (a->start > b->start) - (a->start < b->start);
}

static int push_repeat(repeat **r, int *m, int *cap, repeat x)
{
	if (*m == *cap) {
		int c = *cap ? 2 * *cap : 64;
		repeat *g = realloc(*r, sizeof(repeat) * (size_t)c);
		if (!g)
			return -1;
		*r = g;
		*cap = c;
	}
	(*r)[(*m)++] = x;
	return 0;
}

/* Every maximal p-periodic stretch of 2+ copies of each period p in
 * seq[0..n), most coverage first. */
static int find_repeats(const uint64_t *seq, int n, repeat **out, int *n_out)
{
	int cap = 0, m = 0;
	repeat *r = NULL;
	for (int p = TYPICAL_MIN; p <= PN_CUT_MAX_NODES && 2 * p <= n; p++)
		for (int i = 0; i + p < n;) {
			int a = i;
			while (i + p < n && seq[i] == seq[i + p])
				i++;
			/* seq[a..i+p) has period p */
			if (i - a >= p && push_repeat(&r, &m, &cap, (repeat){p, a, i - a + p})) {
				free(r);
				return -1;
			}
			i = i > a ? i : i + 1;
		}
	if (m > 1)	/* r is NULL when nothing repeats: qsort must not see it */
		qsort(r, (size_t)m, sizeof(repeat), cmp_repeat);
	*out = r;
	*n_out = m;
	return 0;
}

static int copy_free(const uint8_t *used, int start, int p)
{
	for (int k = start; k < start + p; k++)
		if (used[k])
			return 0;
	return 1;
}

/* Where r's copies go: the rotation (copies start at r->start + rot + c p)
 * whose longest stretch of 2+ copies on free positions exchanges the fewest
 * values with the rest of the graph, per copy (a block cut at a layer's
 * edges passes one stream on; one cut mid-layer passes several, and its
 * first or last copy is then another subgraph), then the one with the most
 * copies, then the least rotation. */
typedef struct placement {
	int start, count;      /* the stretch: count copies from start */
	long boundary;         /* summed over its copies */
} placement;

static int better(const placement *a, const placement *b)
{
	long x = a->boundary * b->count, y = b->boundary * a->count;
	return !b->count || x < y || (x == y && a->count > b->count);
}

static long stretch_boundary(pn_pview *pv, const int32_t *at, const placement *x, int p,
			     uint8_t *in_cut)
{
	long sum = 0;
	for (int c = 0; c < x->count; c++) {
		int b = pn_cut_boundary(pv, at + x->start + c * p, p, in_cut);
		sum += b < 0 ? 4L * (PN_CUT_MAX_INPUTS + PN_CUT_MAX_OUTPUTS) : b;
	}
	return sum;
}

static placement place(pn_pview *pv, const int32_t *at, const repeat *r, const uint8_t *used,
		       uint8_t *in_cut)
{
	placement best = {0, 0, 0};
	int p = r->period;
	for (int rot = 0; rot < p && (r->len - rot) / p >= 2; rot++) {
		int total = (r->len - rot) / p, first = 0, count = 0;
		for (int c = 0, run = 0; c < total; c++) {
			run = copy_free(used, r->start + rot + c * p, p) ? run + 1 : 0;
			if (run > count) {
				count = run;
				first = c - run + 1;
			}
		}
		if (count < 2)
			continue;
		placement x = {r->start + rot + first * p, count, 0};
		x.boundary = stretch_boundary(pv, at, &x, p, in_cut);
		if (better(&x, &best))
			best = x;
	}
	return best;
}

/* The copies of pl that are cuts (connected, within the limits) and the
 * same subgraph as another of them (the exact canonical form, canon/form.h:
 * equal tokens in equal order do not make equal wiring, constants or
 * boundaries); each is cut and its positions taken.  0, or -1. */
static int add_copies(pn_pview *pv, const int32_t *at, const placement *pl, int p,
		      uint8_t *in_cut, uint8_t *used, pn_cuts *out)
{
	pn_key *hash = calloc((size_t)pl->count + 1, sizeof(pn_key));
	uint8_t *cut = calloc((size_t)pl->count + 1, 1);
	int32_t node_at[PN_CUT_MAX_NODES];
	char err[PN_ERRLEN];
	int rc = hash && cut ? 0 : -1;
	for (int c = 0; !rc && c < pl->count; c++) {
		const int32_t *block = at + pl->start + c * p;
		int approximate = 0;
		if (!pn_cut_connected(pv, block, p, in_cut) || !pn_cut_ok(pv, block, p, in_cut))
			continue;
		cut[c] = 1;
		if (pn_form_positions(pv->g, pv->r, block, p, &hash[c], node_at, &approximate, err))
			rc = -1;
	}
	for (int c = 0; !rc && c < pl->count; c++) {
		int shared = 0;
		for (int d = 0; d < pl->count && !shared && cut[c]; d++)
			shared = d != c && cut[d] && !memcmp(&hash[c], &hash[d], sizeof(pn_key));
		if (!shared)
			continue;
		memset(used + pl->start + c * p, 1, (size_t)p);
		rc = pn_cuts_add(out, at + pl->start + c * p, p);
	}
	free(hash);
	free(cut);
	return rc;
}

static int take_repeats(pn_pview *pv, const uint64_t *seq, const int32_t *at, pn_cuts *out)
{
	repeat *r = NULL;
	int m = 0;
	uint8_t *used = calloc((size_t)pv->n + 1, 1);
	uint8_t *in_cut = calloc((size_t)pv->g->n_nodes + 1, 1);
	int rc = used && in_cut ? find_repeats(seq, pv->n, &r, &m) : -1;
	for (int k = 0; !rc && k < m; k++) {
		placement pl = place(pv, at, &r[k], used, in_cut);
		if (pl.count)
			rc = add_copies(pv, at, &pl, r[k].period, in_cut, used, out);
	}
	free(r);
	free(used);
	free(in_cut);
	return rc;
}

/* --- corpus blocks ----------------------------------------------------------------------------- */

/* Where the order narrows to one stream: width[b] is the number of values
 * computed before position b (or read from the graph's inputs) and still
 * read at b or after, for 0 < b < n.  A layer's edge
 * passes one stream on (the residual stream, a CNN's feature map); inside
 * a residual block or a layer the skip keeps two alive. */
static int stream_widths(const pn_pview *pv, const int32_t *at, int32_t *width)
{
	const pn_graph *g = pv->g;
	int n = pv->n;
	int32_t *pos = malloc(sizeof(int32_t) * ((size_t)g->n_nodes + 1));
	if (!pos)
		return -1;
	for (int i = 0; i < g->n_nodes; i++)
		pos[i] = -1;
	for (int q = 0; q < n; q++)
		pos[at[q]] = q;
	memset(width, 0, sizeof(int32_t) * ((size_t)n + 2));
	for (int v = 0; v < g->n_values; v++) {
		const pn_value *val = &g->values[v];
		int from;   /* the first boundary it crosses */
		if (val->role == PN_ROLE_INPUT && !pv->r->v[v].value)
			from = 1;
		else if (val->role == PN_ROLE_NODE && val->producer >= 0 && pos[val->producer] >= 0)
			from = pos[val->producer] + 1;
		else
			continue;   /* a constant: not a stream */
		/* a graph output nothing later reads (a layer's key/value cache
		 * handed out) passes no boundary: it leaves, it does not flow on */
		int last = from - 1;
		for (int e = 0; e < val->n_consumers; e++)
			if (pos[val->consumers[e]] > last)
				last = pos[val->consumers[e]];
		if (last >= from) {   /* crosses boundaries from..last */
			width[from]++;
			width[last + 1]--;
		}
	}
	for (int b = 1; b <= n; b++)
		width[b] += width[b - 1];
	free(pos);
	return 0;
}

static int cmp_int32(const void *x, const void *y)
{
	int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
	return (a > b) - (a < b);
}

/* Adds nodes[0..n) (ascending) to out when it is a cut (connected, within
 * the limits) whose forms can be taken, with its pattern hash
 * (canon/form.h: ranks kept, dims and dtypes not), so that a dense layer at
 * every width or a bottleneck at every stage is one block. */
static int add_block(pn_pview *pv, int32_t *nodes, int n, uint8_t *in_cut, pn_block_list *out)
{
	if (n < TYPICAL_MIN || !pn_cut_ok(pv, nodes, n, in_cut))
		return 0;
	if (out->cuts.n == out->cap) {
		int cap = out->cap ? 2 * out->cap : 16;
		pn_key *h = realloc(out->hash, sizeof(pn_key) * (size_t)cap);
		if (!h)
			return -1;
		out->hash = h;
		out->cap = cap;
	}
	pn_form f;
	char err[PN_ERRLEN];
	if (pn_form_of_cut(pv->g, pv->r, nodes, n, &f, err))
		return 0;   /* dedup could not hash it either: not a block */
	out->hash[out->cuts.n] = f.pattern;
	pn_form_free(&f);
	return pn_cuts_add(&out->cuts, nodes, n);
}

static int find_root(int8_t *up, int i)
{
	while (up[i] != i)
		i = up[i] = up[up[i]];
	return i;
}

/* The stretch at[a..b) (at most PN_CUT_MAX_NODES) as blocks: whole when it
 * is connected, else each of its connected parts (a side computation the
 * order interleaves, a mask's, falls apart from the layer it sits in; each
 * part of a convex stretch is convex), in the order of their first node. */
static int add_stretch(pn_pview *pv, const int32_t *at, int a, int b, uint8_t *in_cut,
		       pn_block_list *out)
{
	int n = b - a;
	PN_ASSERT(n <= PN_CUT_MAX_NODES);
	int8_t up[PN_CUT_MAX_NODES];
	for (int i = 0; i < n; i++) {
		up[i] = (int8_t)i;
		in_cut[at[a + i]] = (uint8_t)(i + 1);
	}
	for (int i = 0; i < n; i++) {
		int x = at[a + i];
		for (int k = pv->succ_start[x]; k < pv->succ_start[x + 1]; k++)
			if (in_cut[pv->succ[k]])
				up[find_root(up, in_cut[pv->succ[k]] - 1)] = (int8_t)find_root(up, i);
	}
	for (int i = 0; i < n; i++)
		in_cut[at[a + i]] = 0;
	int rc = 0;
	uint8_t done[PN_CUT_MAX_NODES] = {0};
	for (int i = 0; !rc && i < n; i++) {
		if (done[i])
			continue;
		int32_t nodes[PN_CUT_MAX_NODES];
		int m = 0, r = find_root(up, i);
		for (int j = i; j < n; j++)
			if (!done[j] && find_root(up, j) == r) {
				done[j] = 1;
				nodes[m++] = at[a + j];
			}
		qsort(nodes, (size_t)m, sizeof(int32_t), cmp_int32);
		rc = add_block(pv, nodes, m, in_cut, out);
	}
	return rc;
}

/* Stretches are taken in order; run is where the short ones joined so far
 * start (-1: none). */
typedef struct stretches {
	pn_pview *pv;
	const int32_t *at, *width;
	uint8_t *in_cut;
	pn_block_list *out;
	int run;
} stretches;

/* One stretch at[a..b), at most PN_CUT_MAX_NODES: a block when it holds 4
 * or more, else joined to the short ones before it until they do. */
static int take_stretch(stretches *st, int a, int b)
{
	if (b - a >= TYPICAL_MIN) {
		st->run = -1;
		return add_stretch(st->pv, st->at, a, b, st->in_cut, st->out);
	}
	if (st->run < 0)
		st->run = a;
	if (b - st->run < TYPICAL_MIN)
		return 0;
	int from = st->run;
	st->run = -1;
	return add_stretch(st->pv, st->at, from, b, st->in_cut, st->out);
}

/* at[a..b): longer than a cut may be, it is split at its narrowest inner
 * boundaries (the fewest streams passing: inside a transformer layer, where
 * only the residual stream and the mask do), and so on down. */
static int take_split(stretches *st, int a, int b)
{
	if (b - a <= PN_CUT_MAX_NODES)
		return take_stretch(st, a, b);
	int narrowest = INT32_MAX;
	for (int k = a + 1; k < b; k++)
		if (st->width[k] < narrowest)
			narrowest = st->width[k];
	int rc = 0, from = a;
	for (int k = a + 1; !rc && k <= b; k++)
		if (k == b || st->width[k] == narrowest) {
			rc = take_split(st, from, k);
			from = k;
		}
	return rc;
}

/* The stretches between consecutive one-stream boundaries, in order, split
 * further where longer than a cut may be (take_split), each a block or
 * joined (take_stretch); a position a repeat took ends a stretch and is in
 * none. */
static int take_blocks(pn_pview *pv, const int32_t *at, const uint8_t *used, const int32_t *width,
		       pn_block_list *out)
{
	stretches st = {pv, at, width, calloc((size_t)pv->g->n_nodes + 1, 1), out, -1};
	if (!st.in_cut)
		return -1;
	int rc = 0;
	for (int a = 0; !rc && a < pv->n;) {
		if (used[a]) {
			st.run = -1;
			a++;
			continue;
		}
		int b = a + 1;
		while (b < pv->n && !used[b] && width[b] > 1)
			b++;
		rc = take_split(&st, a, b);
		a = b;
	}
	free(st.in_cut);
	return rc;
}

/* --- the strategy ------------------------------------------------------------------------------ */

/* The positions of the order whose nodes the repeats took. */
static int taken_positions(const pn_pview *pv, const int32_t *at, const pn_cuts *repeats,
			   uint8_t *used)
{
	uint8_t *taken = calloc((size_t)pv->g->n_nodes + 1, 1);
	if (!taken)
		return -1;
	for (int k = 0; k < repeats->n; k++)
		for (int i = 0; i < repeats->len[k]; i++)
			taken[repeats->nodes[k][i]] = 1;
	for (int q = 0; q < pv->n; q++)
		used[q] = taken[at[q]];
	free(taken);
	return 0;
}

/* The order's corpus blocks, on the positions the repeats left. */
static int corpus_blocks(pn_pview *pv, const int32_t *at, const pn_cuts *repeats,
			 pn_block_list *out)
{
	int32_t *width = malloc(sizeof(int32_t) * ((size_t)pv->n + 2));
	uint8_t *used = calloc((size_t)pv->n + 1, 1);
	int rc = width && used ? taken_positions(pv, at, repeats, used) : -1;
	if (!rc)
		rc = stream_widths(pv, at, width);
	if (!rc)
		rc = take_blocks(pv, at, used, width, out);
	free(width);
	free(used);
	return rc;
}

int pn_typical_cut(pn_pview *pv, pn_cuts *repeats, pn_block_list *blocks)
{
	if (pv->n < TYPICAL_MIN)
		return 0;
	uint64_t *tok = malloc(sizeof(uint64_t) * (size_t)(pv->g->n_nodes + 1));
	uint64_t *seq = malloc(sizeof(uint64_t) * (size_t)(pv->n + 1));
	int32_t *at = malloc(sizeof(int32_t) * (size_t)(pv->n + 1));
	int rc = tok && seq && at ? 0 : -1;
	for (int i = 0; !rc && i < pv->g->n_nodes; i++)
		tok[i] = pv->compute[i] ? token_of(pv, i) : 0;
	if (!rc)
		rc = token_order(pv, tok, seq, at);
	if (!rc && pv->n >= 2 * TYPICAL_MIN)
		rc = take_repeats(pv, seq, at, repeats);
	if (!rc && blocks)
		rc = corpus_blocks(pv, at, repeats, blocks);
	free(tok);
	free(seq);
	free(at);
	return rc;
}

int pn_partition_typical(pn_pview *pv, pn_cuts *out)
{
	return pn_typical_cut(pv, out, NULL);
}

void pn_block_list_free(pn_block_list *b)
{
	pn_cuts_free(&b->cuts);
	free(b->hash);
	memset(b, 0, sizeof(*b));
}
