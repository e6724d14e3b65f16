/*
 * select.c - long-tail task selection (see select.h).
 */
#include "export/select.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "common/err.h"
#include "common/strmap.h"
#include "common/util.h"
#include "canon/decode.h"
#include "runtime/rng.h"
#include "partition/partition.h"
#include "passnet.pb-c.h"
#include "store/structures.h"
#include "store/subgraphs.h"
#include "store/tables.h"

/* A pattern collecting its eligible variants. */
typedef struct pat {
	pn_task t;
	int32_t *trans;      /* distinct transition ids of its first variant */
	int n_trans;
	int cap_v;
	int picked;
} pat;

typedef struct scan {
	pn_rtxn *t;
	const pn_export_filter *f;
	pn_arena a;
	pn_strmap pairs;     /* "A>B" -> transition id */
	int64_t *pair_count;
	int32_t *pair_from;  /* transition id -> op id (in ops) */
	int n_pairs, cap_pairs;
	pn_strmap ops;       /* op type -> op id */
	int64_t *op_out;     /* transitions leaving each op */
	int n_ops, cap_ops;
	pn_strmap pattern_index;
	pat *pats;
	int n_pats, cap_pats;
	pn_strmap model_source;   /* model key hex -> index in sources */
	char **sources;
	int n_sources;
	int64_t eligible;
	char *err;
	int failed;
} scan;

/* --- counting transitions ---------------------------------------------------------- */

static int op_id(scan *s, const char *op)
{
	int id = pn_strmap_get(&s->ops, op);
	if (id >= 0)
		return id;
	if (s->n_ops == s->cap_ops) {
		s->cap_ops = s->cap_ops ? s->cap_ops * 2 : 256;
		s->op_out = realloc(s->op_out, sizeof(int64_t) * (size_t)s->cap_ops);
	}
	s->op_out[s->n_ops] = 0;
	pn_strmap_put(&s->ops, pn_arena_strdup(&s->a, op), s->n_ops);
	return s->n_ops++;
}

static int pair_id(scan *s, const char *from, const char *to)
{
	char key[256];
	snprintf(key, sizeof key, "%s>%s", from, to);
	int id = pn_strmap_get(&s->pairs, key);
	if (id >= 0)
		return id;
	if (s->n_pairs == s->cap_pairs) {
		s->cap_pairs = s->cap_pairs ? s->cap_pairs * 2 : 1024;
		s->pair_count = realloc(s->pair_count, sizeof(int64_t) * (size_t)s->cap_pairs);
		s->pair_from = realloc(s->pair_from, sizeof(int32_t) * (size_t)s->cap_pairs);
	}
	s->pair_count[s->n_pairs] = 0;
	s->pair_from[s->n_pairs] = op_id(s, from);
	pn_strmap_put(&s->pairs, pn_arena_strdup(&s->a, key), s->n_pairs);
	return s->n_pairs++;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

/* The distinct op-to-op transitions (producer op -> consumer op, along
 * every edge) of a graph; counted into the Markov model once per subgraph. */
static int transitions(scan *s, const pn_graph *g, int32_t **out)
{
	int n = 0, cap = 16;
	int32_t *ids = malloc(sizeof(int32_t) * (size_t)cap);
	for (int i = 0; ids && i < g->n_nodes; i++) {
		const pn_node *nd = &g->nodes[i];
		for (int k = 0; k < nd->n_in; k++) {
			int v = nd->in[k];
			int p = v >= 0 ? g->values[v].producer : -1;
			if (p < 0)
				continue;
			if (n == cap)
				ids = realloc(ids, sizeof(int32_t) * (size_t)(cap *= 2));
			ids[n++] = pair_id(s, g->nodes[p].op_type, nd->op_type);
		}
	}
	if (!ids)
		return -1;
	qsort(ids, (size_t)n, sizeof(int32_t), cmp_i32);
	int m = 0;
	for (int i = 0; i < n; i++)
		if (!m || ids[m - 1] != ids[i])
			ids[m++] = ids[i];
	for (int i = 0; i < m; i++) {
		s->pair_count[ids[i]]++;
		s->op_out[s->pair_from[ids[i]]]++;
	}
	*out = ids;
	return m;
}

/* --- eligibility ----------------------------------------------------------------------- */

static int has_flag(const Passnet__Profile *p, const char *flag)
{
	for (size_t i = 0; i < p->n_flags; i++)
		if (!strcmp(p->flags[i], flag))
			return 1;
	return 0;
}

static int has_op(const Passnet__Subgraph *sg, const char *op)
{
	for (size_t i = 0; i < sg->n_ops; i++)
		if (!strcmp(sg->ops[i], op))
			return 1;
	return 0;
}

/* The source of a model, cached by key. */
static const char *model_source(scan *s, const uint8_t *model)
{
	char hex[33];
	pn_hex(model, 16, hex);
	int id = pn_strmap_get(&s->model_source, hex);
	if (id >= 0)
		return s->sources[id];
	Passnet__Model *m;
	pn_models_get(s->t, model, 16, &m);
	char *src = m && m->source ? pn_arena_strdup(&s->a, m->source) : NULL;
	pn_models_free(m);
	s->sources = realloc(s->sources, sizeof(char *) * (size_t)(s->n_sources + 1));
	s->sources[s->n_sources] = src ? src : "";
	pn_strmap_put(&s->model_source, pn_arena_strdup(&s->a, hex), s->n_sources);
	return s->sources[s->n_sources++];
}

typedef struct source_walk {
	scan *s;
	int found;
} source_walk;

static int occurs_in_source(void *ud, const uint8_t hash[16], const Passnet__Occurrence *o,
			    const uint8_t model[16])
{
	(void)hash;
	(void)o;
	source_walk *w = ud;
	if (!strcmp(model_source(w->s, model), w->s->f->source))
		w->found = 1;
	return w->found;
}

static int eligible(scan *s, const uint8_t *key, const Passnet__Subgraph *sg, const Passnet__Profile *p)
{
	const pn_export_filter *f = s->f;
	if (!p || !p->status || !strcmp(p->status, "failed") || !has_flag(p, "fusible"))
		return 0;
	int nodes = (int)sg->nodes;
	if (nodes < (f->min_ops > 0 ? f->min_ops : 2) || (f->max_ops > 0 && nodes > f->max_ops))
		return 0;
	/* a subgraph computed from constants alone is constant folding, not a
	 * kernel to compile: every task takes inputs */
	if (!sg->inputs)
		return 0;
	for (int i = 0; i < f->n_ops; i++)
		if (!has_op(sg, f->ops[i]))
			return 0;
	for (int i = 0; i < f->n_flags; i++)
		if (!has_flag(p, f->flags[i]))
			return 0;
	if (f->strategies) {
		pn_occ_summary occ;
		pn_occurrences(s->t, key, NULL, &occ);
		if (!pn_occ_in_strategies(&occ, f->strategies))
			return 0;
	}
	if (f->source) {
		source_walk w = {s, 0};
		pn_foreach_occurrence(s->t, key, occurs_in_source, &w);
		if (!w.found)
			return 0;
	}
	return 1;
}

/* --- patterns ----------------------------------------------------------------------------- */

static pat *pattern_of(scan *s, const uint8_t *pattern)
{
	char hex[33];
	pn_hex(pattern, 16, hex);
	int id = pn_strmap_get(&s->pattern_index, hex);
	if (id >= 0)
		return &s->pats[id];
	if (s->n_pats == s->cap_pats) {
		s->cap_pats = s->cap_pats ? s->cap_pats * 2 : 256;
		s->pats = realloc(s->pats, sizeof(pat) * (size_t)s->cap_pats);
	}
	pat *p = &s->pats[s->n_pats];
	memset(p, 0, sizeof(*p));
	memcpy(p->t.pattern, pattern, 16);
	pn_strmap_put(&s->pattern_index, pn_arena_strdup(&s->a, hex), s->n_pats++);
	return p;
}

static char **copy_strings(char *const *src, int n)
{
	char **d = malloc(sizeof(char *) * (size_t)(n + 1));
	for (int i = 0; d && i < n; i++)
		d[i] = strdup(src[i]);
	return d;
}

static void add_variant(scan *s, const uint8_t *key, const Passnet__Subgraph *sg,
			const Passnet__Profile *p, int32_t *trans, int n_trans)
{
	pat *pt = pattern_of(s, sg->pattern.data);
	if (!pt->t.n_variants) {
		pt->t.ops = copy_strings(sg->ops, (int)sg->n_ops);
		pt->t.n_ops = (int)sg->n_ops;
		pt->trans = trans;
		pt->n_trans = n_trans;
	} else {
		free(trans);
	}
	if (pt->t.n_variants == pt->cap_v) {
		pt->cap_v = pt->cap_v ? pt->cap_v * 2 : 4;
		pt->t.v = realloc(pt->t.v, sizeof(pn_variant) * (size_t)pt->cap_v);
	}
	pn_variant *v = &pt->t.v[pt->t.n_variants++];
	memset(v, 0, sizeof(*v));
	memcpy(v->hash, key, 16);
	v->flops = p->flops;
	v->bytes_fused = p->bytes_fused;
	v->bytes_unfused = p->bytes_unfused;
	v->median_us = p->median_us;
	v->bound_fused_us = p->bound_fused_us;
	v->threads = p->threads;
	if (p->ort) {   /* the compiler's numbers travel with the task */
		snprintf(v->ort_version, sizeof v->ort_version, "%s", p->ort->ort_version ? p->ort->ort_version : "");
		snprintf(v->ort_status, sizeof v->ort_status, "%s", p->ort->status ? p->ort->status : "");
		v->ort_all_us = p->ort->median_all_us;
		v->ort_disabled_us = p->ort->median_disabled_us;
	}
	v->nodes = (int)sg->nodes;
	v->flags = copy_strings(p->flags, (int)p->n_flags);
	v->n_flags = (int)p->n_flags;
	pt->t.slow |= has_flag(p, "slow");
	s->eligible++;
}

/* Whether every Concat joins inputs of one rank.  PyTorch's exporter joins
 * an empty 1-D constant onto rank-3 tensors (emformer's attention caches),
 * which ONNX Runtime and passnet run (it adds nothing) but onnx's checker
 * rejects: such a subgraph stays in the store, not in a task set whose
 * every model a user's ONNX tools must accept. */
static int concat_ranks_agree(const pn_graph *g)
{
	for (int i = 0; i < g->n_nodes; i++) {
		const pn_node *nd = &g->nodes[i];
		if (strcmp(nd->op_type, "Concat"))
			continue;
		int rank = -1;
		for (int k = 0; k < nd->n_in; k++) {
			int r = nd->in[k] >= 0 ? g->values[nd->in[k]].type.rank : -1;
			if (r >= 0 && rank >= 0 && r != rank)
				return 0;
			rank = r >= 0 ? r : rank;
		}
	}
	return 1;
}

static int on_subgraph(void *ud, pn_bytes key, pn_bytes val, const Passnet__Subgraph *sg)
{
	(void)val;
	scan *s = ud;
	if (key.len != 16 || !sg || !sg->has_canonical || sg->pattern.len != 16)
		return 0;
	pn_model *m = NULL;
	char err[PN_ERRLEN];
	int32_t *trans = NULL;
	int n_trans = -1;
	/* Decoded as the export will write it: a subgraph whose boundary rank
	 * depends on data (profiled at the shape its model showed) cannot be a
	 * task, as ONNX files state every boundary rank. */
	if (!pn_subgraph_decode(sg->canonical.data, sg->canonical.len, 1, NULL, &m, NULL, err) &&
	    concat_ranks_agree(m->graph))
		n_trans = transitions(s, m->graph, &trans);
	pn_model_free(m);
	Passnet__Profile *p;
	pn_profiles_get(s->t, key.data, 16, &p);
	if (n_trans >= 0 && eligible(s, key.data, sg, p)) {
		add_variant(s, key.data, sg, p, trans, n_trans);
		trans = NULL;
	}
	free(trans);
	pn_profiles_free(p);
	return 0;
}

/* --- rarity and the greedy pick ---------------------------------------------------------- */

static double rarity(const scan *s, const pat *p)
{
	if (!p->n_trans)
		return 0;
	double sum = 0, v = (double)s->n_ops;
	for (int i = 0; i < p->n_trans; i++) {
		int id = p->trans[i];
		double prob = ((double)s->pair_count[id] + PN_MARKOV_ALPHA) /
			      ((double)s->op_out[s->pair_from[id]] + PN_MARKOV_ALPHA * v);
		sum += -log(prob);
	}
	return sum / p->n_trans;
}

static int new_transitions(const pat *p, const uint8_t *covered)
{
	int n = 0;
	for (int i = 0; i < p->n_trans; i++)
		n += !covered[p->trans[i]];
	return n;
}

/* Next pattern to take: the best gain among unpicked ones of this class
 * (rich in shapes or not, slow or not), ties to the least pattern hash. */
static int pick_next(scan *s, const uint8_t *covered, double max_rarity, int want_rich,
		     int want_slow)
{
	int best = -1;
	double best_gain = -1;
	for (int i = 0; i < s->n_pats; i++) {
		const pat *p = &s->pats[i];
		int rich = p->t.n_variants >= PN_TASK_RICH;
		if (p->picked || p->t.slow != want_slow || rich != want_rich)
			continue;
		double r = max_rarity > 0 ? p->t.rarity / max_rarity : 0;
		double gain = (new_transitions(p, covered) + 0.01) * (1 + r);
		if (gain > best_gain ||
		    (gain == best_gain && memcmp(p->t.pattern, s->pats[best].t.pattern, 16) < 0)) {
			best = i;
			best_gain = gain;
		}
	}
	return best;
}

static int cmp_variant_size(const void *a, const void *b)
{
	const pn_variant *x = a, *y = b;
	if (x->flops != y->flops)
		return x->flops < y->flops ? -1 : 1;
	if (x->bytes_fused != y->bytes_fused)
		return x->bytes_fused < y->bytes_fused ? -1 : 1;
	return memcmp(x->hash, y->hash, 16);
}

static void free_variant(pn_variant *v)
{
	for (int i = 0; i < v->n_flags; i++)
		free(v->flags[i]);
	free(v->flags);
}

/* The size bucket of a variant: log2 of the bytes a fused run moves (its
 * boundary tensors and weights), as the published selection buckets dims. */
static int size_bucket(const pn_variant *v)
{
	return v->bytes_fused >= 1 ? (int)floor(log2(v->bytes_fused)) : 0;
}

/* Marks up to max of the sorted variants: buckets evenly spaced when there
 * are more buckets than max (the middle variant of each), else one per
 * bucket and then further ones, round by round, from each bucket in turn. */
static int pick_over_buckets(const int *start, int nb, int max, uint8_t *kept)
{
	int n = 0;
	if (nb >= max) {
		for (int i = 0; i < max; i++) {
			int k = max > 1 ? (int)lround((double)i * (nb - 1) / (max - 1)) : nb / 2;
			int j = (start[k] + start[k + 1] - 1) / 2;
			n += !kept[j];
			kept[j] = 1;
		}
		return n;
	}
	for (int round = 0; n < max; round++) {
		int took = 0;
		for (int k = 0; k < nb && n < max; k++)
			if (start[k] + round < start[k + 1]) {
				kept[start[k] + round] = 1;
				n++;
				took = 1;
			}
		if (!took)
			break;
	}
	return n;
}

static int cmp_bucket_size(const void *a, const void *b)
{
	int x = size_bucket(a), y = size_bucket(b);
	return x != y ? (x < y ? -1 : 1) : cmp_variant_size(a, b);
}

/* Keeps at most max variants, spread over size buckets (size_bucket), in
 * size order. */
static void spread_variants(pn_task *t, int max)
{
	if (t->n_variants <= max) {
		qsort(t->v, (size_t)t->n_variants, sizeof(pn_variant), cmp_variant_size);
		return;
	}
	qsort(t->v, (size_t)t->n_variants, sizeof(pn_variant), cmp_bucket_size);
	int *start = malloc(sizeof(int) * (size_t)(t->n_variants + 1));
	uint8_t *kept = calloc((size_t)t->n_variants, 1);
	pn_variant *keep = malloc(sizeof(pn_variant) * (size_t)max);
	if (!start || !kept || !keep) {
		free(start), free(kept), free(keep);
		return;
	}
	int nb = 0;
	for (int j = 0; j < t->n_variants; j++)
		if (!j || size_bucket(&t->v[j]) != size_bucket(&t->v[j - 1]))
			start[nb++] = j;
	start[nb] = t->n_variants;
	pick_over_buckets(start, nb, max, kept);
	int n = 0;
	for (int j = 0; j < t->n_variants; j++) {
		if (kept[j])
			keep[n++] = t->v[j];
		else
			free_variant(&t->v[j]);
	}
	free(t->v);
	free(kept);
	free(start);
	qsort(keep, (size_t)n, sizeof(pn_variant), cmp_variant_size);
	t->v = keep;
	t->n_variants = n;
}

static void free_pat(pat *p)
{
	for (int i = 0; i < p->t.n_ops; i++)
		free(p->t.ops[i]);
	free(p->t.ops);
	for (int i = 0; i < p->t.n_variants; i++)
		free_variant(&p->t.v[i]);
	free(p->t.v);
	free(p->trans);
}

static void select_greedy(scan *s, int k, int max_variants, pn_selection *out)
{
	uint8_t *covered = calloc((size_t)s->n_pairs + 1, 1);
	double max_rarity = 0;
	for (int i = 0; i < s->n_pats; i++) {
		s->pats[i].t.rarity = rarity(s, &s->pats[i]);
		if (s->pats[i].t.rarity > max_rarity)
			max_rarity = s->pats[i].t.rarity;
	}
	out->tasks = calloc((size_t)(k > 0 ? k : 1), sizeof(pn_task));
	for (int cls = 0; cls < 4; cls++) {
		int rich = cls < 2, slow = cls % 2 == 0;
		while (out->n < k) {
			int i = pick_next(s, covered, max_rarity, rich, slow);
			if (i < 0)
				break;
			pat *p = &s->pats[i];
			p->picked = 1;
			for (int j = 0; j < p->n_trans; j++)
				covered[p->trans[j]] = 1;
			spread_variants(&p->t, max_variants);
			out->tasks[out->n++] = p->t;
			memset(&p->t, 0, sizeof(p->t));   /* moved into the selection */
		}
	}
	for (int i = 0; i < s->n_pairs; i++)
		out->covered += covered[i];
	free(covered);
}

int pn_select_tasks(pn_store *st, const pn_export_filter *f, int k, int max_variants,
		    pn_selection *out, char *err)
{
	memset(out, 0, sizeof(*out));
	scan s;
	memset(&s, 0, sizeof(s));
	s.f = f;
	s.err = err;
	pn_arena_init(&s.a, 0);
	pn_strmap_init(&s.pairs, &s.a, 4096);
	pn_strmap_init(&s.ops, &s.a, 256);
	pn_strmap_init(&s.pattern_index, &s.a, 4096);
	pn_strmap_init(&s.model_source, &s.a, 1024);
	int rc = pn_rtxn_begin(st, &s.t, err);
	if (!rc) {
		pn_subgraphs_foreach(s.t, NULL, 0, on_subgraph, &s);
		select_greedy(&s, k, max_variants, out);
		pn_rtxn_end(s.t);
	}
	out->eligible_patterns = s.n_pats;
	out->eligible_subgraphs = s.eligible;
	out->transitions = s.n_pairs;
	for (int i = 0; i < s.n_pats; i++)
		free_pat(&s.pats[i]);
	free(s.pats);
	free(s.pair_count);
	free(s.pair_from);
	free(s.op_out);
	free(s.sources);
	pn_arena_free(&s.a);
	return rc;
}

void pn_split_tasks(pn_selection *s, uint64_t seed, const int percent[3])
{
	int n = s->n;
	int *order = malloc(sizeof(int) * (size_t)(n + 1));
	for (int i = 0; i < n; i++)
		order[i] = i;
	pn_rng r;
	pn_rng_seed(&r, seed, "split");
	for (int i = n - 1; i > 0; i--) {   /* Fisher-Yates */
		int j = (int)(pn_rng_next(&r) % (uint64_t)(i + 1));
		int t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	int total = percent[0] + percent[1] + percent[2];
	int n_train = total ? n * percent[0] / total : n;
	int n_val = total ? n * percent[1] / total : 0;
	for (int i = 0; i < n; i++)
		s->tasks[order[i]].split = i < n_train ? 0 : i < n_train + n_val ? 1 : 2;
	free(order);
}

void pn_selection_free(pn_selection *s)
{
	for (int i = 0; i < s->n; i++) {
		pat p = {.t = s->tasks[i]};
		free_pat(&p);
	}
	free(s->tasks);
	memset(s, 0, sizeof(*s));
}
