/*
 * canon.c - canonical labelling by individualisation-refinement (canon.h).
 *
 * Vertices: values are 0..nv-1, nodes nv..nv+nn-1.  Colours are 64-bit
 * hashes, so "the class of colour c" is the set of vertices holding c.
 * Everything that decides the result depends only on colours, never on
 * vertex numbers, except the order children of a search node are visited
 * in, which cannot change the least leaf found (every child is visited,
 * unless an automorphism already proved two children equivalent).
 */
#include "canon/canon.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

/* --- the search state ------------------------------------------------------------- */

enum edge_kind { E_CONSUMER = 1, E_INPUT = 2, E_OUTPUT = 3, E_PRODUCER = 4 };
#define SLOT_COMM 0xffffu

typedef struct autom {
	int32_t *map;      /* vertex -> vertex */
	struct autom *next;
} autom;

typedef struct state {
	const pn_cgraph *g;
	uint8_t kind;
	int nvert;
	int32_t *adj_start, *adj_nb;
	uint32_t *adj_tag;
	uint64_t *scratch;     /* neighbour hashes, refinement */
	uint64_t *sorted;      /* colour copy for finding the target class */
	uint64_t *set;         /* hash set for counting classes */
	uint8_t *set_used;
	uint32_t set_cap;
	pn_buf best;
	int32_t *best_order;   /* canonical position -> vertex, of the best leaf */
	/* scratch reused by every refinement and leaf (no allocation per leaf) */
	uint64_t *next;        /* refinement's next colours */
	pn_buf leaf_bytes;     /* the leaf being serialised; swapped with best */
	int32_t *leaf_order, *leaf_pos;
	struct vsort *leaf_sort;
	int have_best;
	int leaves;
	int approximate;
	autom *autos;
	int n_autos;
} state;

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t v[2] = {a, b};
	return XXH3_64bits(v, sizeof v);
}

static void add_edge(state *s, int32_t *fill, int from, int to, uint32_t tag)
{
	int k = s->adj_start[from] + fill[from]++;
	s->adj_nb[k] = to;
	s->adj_tag[k] = tag;
}

/* Builds the adjacency lists of the bipartite graph (both directions). */
static int build_adjacency(state *s)
{
	const pn_cgraph *g = s->g;
	int nv = g->nv;
	s->adj_start = calloc((size_t)s->nvert + 1, sizeof(int32_t));
	int32_t *fill = calloc((size_t)s->nvert + 1, sizeof(int32_t));
	if (!s->adj_start || !fill)
		return free(fill), -1;
	for (int n = 0; n < g->nn; n++) {
		for (int k = 0; k < g->n_nin[n]; k++)
			if (g->n_in[n][k] >= 0) {
				s->adj_start[nv + n + 1]++;
				s->adj_start[g->n_in[n][k] + 1]++;
			}
		for (int k = 0; k < g->n_nout[n]; k++)
			if (g->n_out[n][k] >= 0) {
				s->adj_start[nv + n + 1]++;
				s->adj_start[g->n_out[n][k] + 1]++;
			}
	}
	for (int i = 0; i < s->nvert; i++)
		s->adj_start[i + 1] += s->adj_start[i];
	int ne = s->adj_start[s->nvert];
	s->adj_nb = malloc(sizeof(int32_t) * (size_t)(ne + 1));
	s->adj_tag = malloc(sizeof(uint32_t) * (size_t)(ne + 1));
	s->scratch = malloc(sizeof(uint64_t) * (size_t)(ne + s->nvert + 1));
	s->sorted = malloc(sizeof(uint64_t) * (size_t)(s->nvert + 1));
	s->set_cap = 16;
	while (s->set_cap < 2u * (uint32_t)s->nvert)
		s->set_cap *= 2;
	s->set = malloc(sizeof(uint64_t) * s->set_cap);
	s->set_used = malloc(s->set_cap);
	if (!s->adj_nb || !s->adj_tag || !s->scratch || !s->sorted || !s->set || !s->set_used)
		return free(fill), -1;
	s->next = malloc(sizeof(uint64_t) * (size_t)(s->nvert + 1));
	if (!s->next)
		return free(fill), -1;
	for (int n = 0; n < g->nn; n++) {
		uint32_t comm = g->n_comm[n];
		for (int k = 0; k < g->n_nin[n]; k++) {
			int v = g->n_in[n][k];
			if (v < 0)
				continue;
			uint32_t slot = comm ? SLOT_COMM : (uint32_t)k;
			add_edge(s, fill, nv + n, v, (E_INPUT << 24) | slot);
			add_edge(s, fill, v, nv + n, (E_CONSUMER << 24) | slot);
		}
		for (int k = 0; k < g->n_nout[n]; k++) {
			int v = g->n_out[n][k];
			if (v < 0)
				continue;
			add_edge(s, fill, nv + n, v, (E_OUTPUT << 24) | (uint32_t)k);
			add_edge(s, fill, v, nv + n, (E_PRODUCER << 24) | (uint32_t)k);
		}
	}
	free(fill);
	return 0;
}

static void initial_colours(const state *s, uint64_t *c)
{
	const pn_cgraph *g = s->g;
	for (int v = 0; v < g->nv; v++) {
		int64_t head[3] = {g->v_kind[v], g->v_in_pos[v], g->v_out_pos[v]};
		uint64_t h = XXH3_64bits(head, sizeof head);
		c[v] = mix(h, XXH3_64bits(g->v_label[v].p, g->v_label[v].n));
	}
	for (int n = 0; n < g->nn; n++) {
		uint64_t h = XXH3_64bits(g->n_label[n].p, g->n_label[n].n);
		c[g->nv + n] = mix(h, 0x6e6f6465ull + g->n_comm[n]);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Distinct colours, counted in an open-addressing set (sorted[] is reused
 * as its table: 2 * nvert slots are allocated for it). */
static int count_classes(state *s, const uint64_t *c)
{
	uint32_t cap = 16;
	while (cap < 2u * (uint32_t)s->nvert)
		cap *= 2;
	if (cap > s->set_cap)
		return -1;
	uint64_t *set = s->set;
	uint8_t *used = s->set_used;
	memset(used, 0, cap);
	int k = 0;
	for (int x = 0; x < s->nvert; x++) {
		uint32_t i = (uint32_t)(c[x] ^ (c[x] >> 29)) & (cap - 1);
		while (used[i] && set[i] != c[x])
			i = (i + 1) & (cap - 1);
		if (!used[i]) {
			used[i] = 1;
			set[i] = c[x];
			k++;
		}
	}
	return k;
}

/* One refinement round into out. */
static void refine_round(state *s, const uint64_t *c, uint64_t *out)
{
	for (int x = 0; x < s->nvert; x++) {
		int a = s->adj_start[x], b = s->adj_start[x + 1];
		uint64_t *h = s->scratch;
		int n = b - a;
		for (int k = 0; k < n; k++) {   /* insertion sort: degrees are small */
			uint64_t v = mix(s->adj_tag[a + k], c[s->adj_nb[a + k]]);
			int j = k;
			while (j > 0 && h[j - 1] > v) {
				h[j] = h[j - 1];
				j--;
			}
			h[j] = v;
		}
		h[b - a] = c[x];
		out[x] = XXH3_64bits(h, sizeof(uint64_t) * (size_t)(b - a + 1));
	}
}

/* Refines c in place until no class splits. */
static int refine(state *s, uint64_t *c)
{
	uint64_t *next = s->next;
	int classes = count_classes(s, c);
	for (;;) {
		refine_round(s, c, next);
		int k = count_classes(s, next);
		if (k < 0 || classes < 0)
			return -1;
		if (k == classes)
			break;
		memcpy(c, next, sizeof(uint64_t) * (size_t)s->nvert);
		classes = k;
	}
	return classes;
}

/* --- leaves ------------------------------------------------------------------------ */

typedef struct vsort {
	uint64_t c;
	int32_t v;
} vsort;

static int cmp_vsort(const void *a, const void *b)
{
	const vsort *x = a, *y = b;
	return x->c < y->c ? -1 : x->c > y->c;
}

/* Sorts: the small arrays of windows go by insertion (no allocation, as
 * qsort's merge sort does); the result is the same, the keys being all
 * the order depends on. */
#define SMALL_SORT 48

static void sort_u64(uint64_t *a, int n)
{
	if (n > SMALL_SORT) {
		qsort(a, (size_t)n, sizeof(uint64_t), cmp_u64);
		return;
	}
	for (int i = 1; i < n; i++) {
		uint64_t v = a[i];
		int j = i;
		for (; j > 0 && a[j - 1] > v; j--)
			a[j] = a[j - 1];
		a[j] = v;
	}
}

static void sort_i64(int64_t *a, int n)
{
	for (int i = 1; i < n; i++) {
		int64_t v = a[i];
		int j = i;
		for (; j > 0 && a[j - 1] > v; j--)
			a[j] = a[j - 1];
		a[j] = v;
	}
}

/* Leaf colours are all distinct, so any sort gives the same order. */
static void sort_vsort(vsort *a, int n)
{
	if (n > SMALL_SORT) {
		qsort(a, (size_t)n, sizeof(vsort), cmp_vsort);
		return;
	}
	for (int i = 1; i < n; i++) {
		vsort v = a[i];
		int j = i;
		for (; j > 0 && a[j - 1].c > v.c; j--)
			a[j] = a[j - 1];
		a[j] = v;
	}
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* Orders values and nodes by colour: order[0..nv) values, [nv..) nodes. */
static void leaf_order(const state *s, const uint64_t *c, int32_t *order, int32_t *pos)
{
	const pn_cgraph *g = s->g;
	vsort *t = s->leaf_sort;
	for (int x = 0; x < s->nvert; x++)
		t[x] = (vsort){c[x], x};
	sort_vsort(t, g->nv);
	sort_vsort(t + g->nv, g->nn);
	for (int i = 0; i < s->nvert; i++) {
		order[i] = t[i].v;
		pos[t[i].v] = i < g->nv ? i : i - g->nv;
	}
}

static void serialise(const state *s, const int32_t *order, const int32_t *pos, pn_buf *b)
{
	const pn_cgraph *g = s->g;
	pn_buf_u8(b, PN_CANON_VERSION);
	pn_buf_u8(b, s->kind);
	pn_buf_varint(b, (uint64_t)g->nv);
	pn_buf_varint(b, (uint64_t)g->nn);
	for (int i = 0; i < g->nv; i++) {
		int v = order[i];
		pn_buf_u8(b, g->v_kind[v]);
		pn_buf_svarint(b, g->v_in_pos[v]);
		pn_buf_svarint(b, g->v_out_pos[v]);
		pn_buf_blob(b, g->v_label[v].p, g->v_label[v].n);
	}
	int64_t refs[64];
	for (int i = 0; i < g->nn; i++) {
		int n = order[g->nv + i] - g->nv;
		pn_buf_blob(b, g->n_label[n].p, g->n_label[n].n);
		pn_buf_u8(b, g->n_comm[n]);
		int nin = g->n_nin[n];
		int64_t *r = nin <= 64 ? refs : malloc(sizeof(int64_t) * (size_t)nin);
		for (int k = 0; k < nin; k++)
			r[k] = g->n_in[n][k] >= 0 ? pos[g->n_in[n][k]] + 1 : 0;
		if (g->n_comm[n] && nin <= SMALL_SORT)
			sort_i64(r, nin);
		else if (g->n_comm[n])
			qsort(r, (size_t)nin, sizeof(int64_t), cmp_i64);
		pn_buf_varint(b, (uint64_t)nin);
		for (int k = 0; k < nin; k++)
			pn_buf_varint(b, (uint64_t)r[k]);
		if (r != refs)
			free(r);
		pn_buf_varint(b, (uint64_t)g->n_nout[n]);
		for (int k = 0; k < g->n_nout[n]; k++)
			pn_buf_varint(b, g->n_out[n][k] >= 0 ? (uint64_t)pos[g->n_out[n][k]] + 1 : 0);
	}
}

static int buf_cmp(const pn_buf *a, const pn_buf *b)
{
	size_t n = a->n < b->n ? a->n : b->n;
	int c = memcmp(a->p, b->p, n);
	return c ? c : (a->n > b->n) - (a->n < b->n);
}

/* Two leaves with equal bytes differ by an automorphism: best -> this. */
static void remember_automorphism(state *s, const int32_t *order)
{
	if (s->n_autos >= 64)
		return;
	autom *a = malloc(sizeof(*a));
	if (!a)
		return;
	a->map = malloc(sizeof(int32_t) * (size_t)s->nvert);
	if (!a->map) {
		free(a);
		return;
	}
	for (int i = 0; i < s->nvert; i++)
		a->map[s->best_order[i]] = order[i];
	a->next = s->autos;
	s->autos = a;
	s->n_autos++;
}

/* The leaf's buffers are the state's scratch; a better leaf swaps them
 * with the best one's, so no leaf allocates once the first two exist. */
static int leaf(state *s, const uint64_t *c)
{
	int32_t *order = s->leaf_order, *pos = s->leaf_pos;
	pn_buf *b = &s->leaf_bytes;
	b->n = 0;
	leaf_order(s, c, order, pos);
	serialise(s, order, pos, b);
	s->leaves++;
	int rc = b->oom ? -1 : 0;
	int cmp = s->have_best ? buf_cmp(b, &s->best) : -1;
	if (!rc && cmp < 0) {
		pn_buf old = s->best;
		s->best = *b;
		*b = old;
		s->leaf_order = s->best_order;
		s->best_order = order;
		if (!s->leaf_order)
			s->leaf_order = malloc(sizeof(int32_t) * (size_t)(s->nvert + 1));
		if (!s->leaf_order)
			rc = -1;
		s->have_best = 1;
	} else if (!rc && cmp == 0) {
		remember_automorphism(s, order);
	}
	return rc;
}

/* --- the search ---------------------------------------------------------------------- */

/* The class to split: the smallest non-singleton class, ties to the least
 * colour (both invariant). Returns its colour, sets *size; 0 size = none. */
static uint64_t target_class(state *s, const uint64_t *c, int *size)
{
	memcpy(s->sorted, c, sizeof(uint64_t) * (size_t)s->nvert);
	sort_u64(s->sorted, s->nvert);
	uint64_t best = 0;
	*size = 0;
	for (int i = 0; i < s->nvert;) {
		int j = i;
		while (j < s->nvert && s->sorted[j] == s->sorted[i])
			j++;
		if (j - i > 1 && (!*size || j - i < *size)) {
			*size = j - i;
			best = s->sorted[i];
		}
		i = j;
	}
	return best;
}

/* Is w the image of an explored vertex under an automorphism that fixes
 * every vertex individualised on the current path? */
static int equivalent_to_explored(const state *s, int w, const int32_t *explored, int n_explored,
				  const int32_t *path, int depth)
{
	for (const autom *a = s->autos; a; a = a->next) {
		int fixes = 1;
		for (int d = 0; d < depth && fixes; d++)
			fixes = a->map[path[d]] == path[d];
		if (!fixes)
			continue;
		for (int i = 0; i < n_explored; i++)
			if (a->map[explored[i]] == w || a->map[w] == explored[i])
				return 1;
	}
	return 0;
}

static int search(state *s, uint64_t *c, int32_t *path, int depth)
{
	if (refine(s, c) < 0)
		return -1;
	int size;
	uint64_t target = target_class(s, c, &size);
	if (!size)
		return leaf(s, c);
	int32_t *cell = malloc(sizeof(int32_t) * (size_t)size);
	int32_t *explored = malloc(sizeof(int32_t) * (size_t)size);
	uint64_t *child = malloc(sizeof(uint64_t) * (size_t)(s->nvert + 1));
	int n = 0, ne = 0, rc = 0;
	if (!cell || !explored || !child)
		rc = -1;
	for (int x = 0; !rc && x < s->nvert; x++)
		if (c[x] == target)
			cell[n++] = x;
	for (int i = 0; !rc && i < n; i++) {
		if (ne && equivalent_to_explored(s, cell[i], explored, ne, path, depth))
			continue;
		if (ne && s->leaves >= PN_CANON_MAX_LEAVES) {
			s->approximate = 1;
			break;
		}
		memcpy(child, c, sizeof(uint64_t) * (size_t)s->nvert);
		child[cell[i]] = mix(child[cell[i]], 0x696e646976ull + (uint64_t)depth);
		path[depth] = cell[i];
		rc = search(s, child, path, depth + 1);
		explored[ne++] = cell[i];
	}
	free(cell);
	free(explored);
	free(child);
	return rc;
}

int pn_canon(const pn_cgraph *g, uint8_t kind, pn_canon_out *out)
{
	memset(out, 0, sizeof(*out));
	state s = {.g = g, .kind = kind, .nvert = g->nv + g->nn};
	uint64_t *c = malloc(sizeof(uint64_t) * (size_t)(s.nvert + 1));
	int32_t *path = malloc(sizeof(int32_t) * (size_t)(s.nvert + 1));
	s.leaf_order = malloc(sizeof(int32_t) * (size_t)(s.nvert + 1));
	s.leaf_pos = malloc(sizeof(int32_t) * (size_t)(s.nvert + 1));
	s.leaf_sort = malloc(sizeof(vsort) * (size_t)(s.nvert + 1));
	int rc = (!c || !path || !s.leaf_order || !s.leaf_pos || !s.leaf_sort || build_adjacency(&s)) ? -1 : 0;
	if (!rc) {
		initial_colours(&s, c);
		rc = search(&s, c, path, 0);
	}
	if (!rc && s.have_best) {
		out->bytes = s.best.p;
		out->len = s.best.n;
		s.best.p = NULL;
		out->value_order = malloc(sizeof(int32_t) * (size_t)(g->nv + 1));
		out->node_order = malloc(sizeof(int32_t) * (size_t)(g->nn + 1));
		if (!out->value_order || !out->node_order)
			rc = -1;
		for (int i = 0; !rc && i < g->nv; i++)
			out->value_order[i] = s.best_order[i];
		for (int i = 0; !rc && i < g->nn; i++)
			out->node_order[i] = s.best_order[g->nv + i] - g->nv;
		out->leaves = s.leaves;
		out->approximate = s.approximate;
	} else if (!rc) {
		rc = -1;
	}
	while (s.autos) {
		autom *next = s.autos->next;
		free(s.autos->map);
		free(s.autos);
		s.autos = next;
	}
	pn_buf_free(&s.best);
	pn_buf_free(&s.leaf_bytes);
	free(s.best_order);
	free(s.leaf_order);
	free(s.leaf_pos);
	free(s.leaf_sort);
	free(s.next);
	free(s.adj_start);
	free(s.adj_nb);
	free(s.adj_tag);
	free(s.scratch);
	free(s.sorted);
	free(s.set);
	free(s.set_used);
	free(c);
	free(path);
	if (rc)
		pn_canon_out_free(out);
	return rc;
}

int pn_canon_colours(const pn_cgraph *g, uint64_t *colours)
{
	state s = {.g = g, .nvert = g->nv + g->nn};
	int rc = build_adjacency(&s);
	if (!rc) {
		initial_colours(&s, colours);
		rc = refine(&s, colours) < 0 ? -1 : 0;
	}
	free(s.adj_start);
	free(s.adj_nb);
	free(s.adj_tag);
	free(s.scratch);
	free(s.sorted);
	free(s.set);
	free(s.set_used);
	free(s.next);
	return rc;
}

void pn_canon_out_free(pn_canon_out *o)
{
	free(o->bytes);
	free(o->value_order);
	free(o->node_order);
	memset(o, 0, sizeof(*o));
}
