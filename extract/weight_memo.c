/*
 * weight_memo.c - see weight_memo.h.
 */
#include "extract/weight_memo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/memo.h"
#include "store/records.h"

/* One remembered check: what pn_weight_scale_check left on the model. */
typedef struct entry {
	char *how;
	uint32_t n_absent;
	int n_scales;
	double *scales;            /* each WeightMeta's scale, pn_weight_metas order */
	int n_real, n_regen;
	Passnet__ValueRange *real, *regen;   /* names malloc'd */
} entry;

/* What the memo may hold: a cache, so a run of 100K distinct models keeps
 * flat memory (their real runs' ranges are thousands of names each); the
 * checks remembered first stay, which on a hub are the popular models. */
#define MEMO_BYTES ((size_t)64 << 20)

struct pn_weight_memo {
	pn_memo m;             /* of entry */
	pn_value_book *book;   /* blind checks' values (value_keys.h) */
};

static void entry_free(void *p);

pn_weight_memo *pn_weight_memo_new(void)
{
	pn_weight_memo *memo = calloc(1, sizeof(*memo));
	if (!memo)
		return NULL;
	memo->book = pn_value_book_new();
	if (!memo->book || pn_memo_init(&memo->m, sizeof(entry), MEMO_BYTES, entry_free)) {
		pn_value_book_free(memo->book);
		free(memo);
		return NULL;
	}
	return memo;
}

pn_value_book *pn_weight_memo_book(pn_weight_memo *memo)
{
	return memo->book;
}

static void entry_free(void *p)
{
	entry *e = p;
	free(e->how);
	free(e->scales);
	for (int i = 0; i < e->n_real; i++)
		free(e->real[i].name);
	for (int i = 0; i < e->n_regen; i++)
		free(e->regen[i].name);
	free(e->real);
	free(e->regen);
}

void pn_weight_memo_free(pn_weight_memo *memo)
{
	if (!memo)
		return;
	pn_memo_destroy(&memo->m);
	pn_value_book_free(memo->book);
	free(memo);
}

int pn_weight_memo_key(const pn_model *m, const void *bytes, size_t len, const pn_dimbind *bind,
		       int has_testset, pn_key *key)
{
	if (has_testset || m->n_external_read)
		return 0;
	pn_key file = pn_onnx_model_key(bytes, len);
	pn_buf b = {0};
	pn_buf_put(&b, file.b, sizeof file.b);
	for (int i = 0; bind && i < bind->n; i++) {
		char v[32];
		int l = snprintf(v, sizeof v, "=%lld\n", (long long)bind->values[i]);
		pn_buf_put(&b, bind->names[i], strlen(bind->names[i]));
		pn_buf_put(&b, v, (size_t)l);
	}
	int ok = !b.oom;
	if (ok)
		*key = pn_key_of(b.p, b.n);
	pn_buf_free(&b);
	return ok;
}

/* The weight statistics e's scales go to, in its order: the file's order
 * (pn_weight_metas), or with f the canonical order of f->metas; *n of them
 * (malloc'd), or NULL when out of memory. */
static pn_wmeta **metas_for(const pn_model *m, const pn_check_form *f, int *n)
{
	pn_wmeta **metas = NULL;
	if (!f) {
		*n = pn_weight_metas(m->graph, &metas);
		return *n < 0 ? NULL : metas;
	}
	metas = malloc(sizeof(pn_wmeta *) * ((size_t)f->n_metas + 1));
	for (int i = 0; metas && i < f->n_metas; i++)
		metas[i] = m->graph->values[f->metas[i]].meta;
	*n = f->n_metas;
	return metas;
}

/* The name a range of e goes under in m: its own, or with f the output
 * of m with that canonical name (NULL: m has none). */
static const char *range_name(const pn_model *m, const pn_check_form *f, const char *name)
{
	if (!f)
		return name;
	int v = pn_check_form_output(f, m->graph, name);
	return v < 0 ? NULL : m->graph->values[v].name;
}

/* ranges[pick[0..n)] (pick NULL: in order) copied into *out (allocated in
 * a), under their names in m (range_name). */
static int ranges_copy(const Passnet__ValueRange *ranges, int n, const int *pick,
		       const pn_model *m, const pn_check_form *f, pn_arena *a,
		       Passnet__ValueRange ***out)
{
	*out = pn_arena_alloc(a, sizeof(void *) * (size_t)(n + 1));
	for (int i = 0; *out && i < n; i++) {
		const Passnet__ValueRange *src = &ranges[pick ? pick[i] : i];
		Passnet__ValueRange *r = pn_arena_alloc(a, sizeof(*r));
		if (!r)
			return -1;
		*r = *src;
		if (!(r->name = pn_arena_strdup(a, range_name(m, f, src->name))))
			return -1;
		(*out)[i] = r;
	}
	return *out ? 0 : -1;
}

/* e's output ranges (canonical names, f) in the order m's own check would
 * record them (its outputs in value order, weight_scale.c), as indices into
 * e->regen: 0, or 1 when m's outputs do not hold them one to one.  A
 * re-export numbers its values in its own node order. */
static int regen_order(const entry *e, const pn_check_form *f, const pn_model *m, int *pick)
{
	const pn_graph *g = m->graph;
	int n = 0;
	for (int v = 0; v < g->n_values; v++) {
		const char *name = g->values[v].is_output ? f->draw[v] : NULL;
		for (int j = 0; name && j < e->n_regen; j++)
			if (!strcmp(e->regen[j].name, name)) {
				if (n == e->n_regen)
					return 1;
				pick[n++] = j;
				break;
			}
	}
	return n == e->n_regen ? 0 : 1;
}

/* Copies e onto m's weight statistics and into out (allocated in a); f:
 * e is in canonical terms (check_form.h). */
static int entry_apply(const entry *e, const pn_check_form *f, pn_model *m, pn_arena *a,
		       pn_weight_check *out)
{
	int n = 0;
	pn_wmeta **metas = metas_for(m, f, &n);
	int *pick = f ? pn_arena_alloc(a, sizeof(int) * ((size_t)e->n_regen + 1)) : NULL;
	if (!metas || (f && !pick)) {
		free(metas);
		return -1;
	}
	/* else not the model remembered: check it anew */
	int fits = n == e->n_scales && (!f || !regen_order(e, f, m, pick));
	for (int i = 0; fits && i < n; i++)
		metas[i]->scale = e->scales[i];
	free(metas);
	if (!fits)
		return 0;
	memset(out, 0, sizeof *out);
	out->n_absent = e->n_absent;
	out->how = pn_arena_strdup(a, e->how);
	if (!out->how || ranges_copy(e->real, e->n_real, NULL, m, NULL, a, &out->real) ||
	    ranges_copy(e->regen, e->n_regen, pick, m, f, a, &out->regen))
		return -1;
	out->n_real = (size_t)e->n_real;
	out->n_regen = (size_t)e->n_regen;
	return 1;
}

typedef struct apply_to {
	const pn_check_form *f;
	pn_model *m;
	pn_arena *a;
	pn_weight_check *out;
} apply_to;

/* A pn_memo_use callback: entry_apply's, 0 when there is no entry. */
static int apply_found(const void *e, void *ud)
{
	apply_to *to = ud;
	return e ? entry_apply(e, to->f, to->m, to->a, to->out) : 0;
}

static int memo_get(pn_weight_memo *memo, const pn_key *key, const pn_check_form *f, pn_model *m,
		    pn_arena *a, pn_weight_check *out)
{
	apply_to to = {f, m, a, out};
	return pn_memo_use(&memo->m, key, apply_found, &to);
}

int pn_weight_memo_get(pn_weight_memo *memo, const pn_key *key, pn_model *m, pn_arena *a,
		       pn_weight_check *out)
{
	return memo_get(memo, key, NULL, m, a, out);
}

int pn_weight_memo_get_form(pn_weight_memo *memo, const pn_check_form *f, pn_model *m,
			    pn_arena *a, pn_weight_check *out)
{
	return memo_get(memo, &f->key, f, m, a, out);
}

/* About the bytes e holds. */
static size_t entry_bytes(const entry *e)
{
	size_t b = sizeof *e + strlen(e->how) + sizeof(double) * (size_t)e->n_scales;
	for (int i = 0; i < e->n_real; i++)
		b += sizeof(Passnet__ValueRange) + strlen(e->real[i].name) + 1;
	for (int i = 0; i < e->n_regen; i++)
		b += sizeof(Passnet__ValueRange) + strlen(e->regen[i].name) + 1;
	return b;
}

/* The canonical name of m's output called name (NULL: none). */
static const char *canonical_name(const pn_model *m, const pn_check_form *f, const char *name)
{
	const pn_graph *g = m->graph;
	for (int i = 0; name && i < g->n_outputs; i++)
		if (!strcmp(g->values[g->outputs[i]].name, name))
			return f->draw[g->outputs[i]];
	return NULL;
}

/* ranges[0..n) copied into *out (malloc'd), with f named canonically
 * (pn_weight_memo_put_form has seen that each has a canonical name);
 * counts them in *done. */
static int ranges_keep(const pn_model *m, const pn_check_form *f,
		       Passnet__ValueRange *const *ranges, size_t n, Passnet__ValueRange **out,
		       int *done)
{
	*out = calloc(n + 1, sizeof(Passnet__ValueRange));
	for (size_t i = 0; *out && i < n; i++) {
		const char *name = f ? canonical_name(m, f, ranges[i]->name) : ranges[i]->name;
		(*out)[i] = *ranges[i];
		(*out)[i].name = strdup(name ? name : "");
		if (!(*out)[i].name)
			return -1;
		*done = (int)i + 1;
	}
	return *out ? 0 : -1;
}

/* e made from m's scales and wc (f: in canonical terms); -1 when out of
 * memory (e freed). */
static int entry_make(entry *e, const pn_model *m, const pn_check_form *f,
		      const pn_weight_check *wc)
{
	memset(e, 0, sizeof *e);
	int n = 0;
	pn_wmeta **metas = metas_for(m, f, &n);
	e->how = strdup(wc->how ? wc->how : "");
	e->n_absent = wc->n_absent;
	e->scales = malloc(sizeof(double) * (size_t)(n + 1));
	int rc = metas && e->how && e->scales ? 0 : -1;
	for (int i = 0; !rc && i < n; i++)
		e->scales[i] = metas[i]->scale;
	e->n_scales = n;
	free(metas);
	if (!rc)
		rc = ranges_keep(m, f, wc->real, wc->n_real, &e->real, &e->n_real) ||
		     ranges_keep(m, f, wc->regen, wc->n_regen, &e->regen, &e->n_regen);
	if (rc)
		entry_free(e);
	return rc ? -1 : 0;
}

static int memo_put(pn_weight_memo *memo, const pn_key *key, const pn_check_form *f,
		    const pn_model *m, const pn_weight_check *wc)
{
	entry e;
	if (entry_make(&e, m, f, wc))
		return -1;
	return pn_memo_put(&memo->m, key, &e, entry_bytes(&e));
}

int pn_weight_memo_put(pn_weight_memo *memo, const pn_key *key, const pn_model *m,
		       const pn_weight_check *wc)
{
	return memo_put(memo, key, NULL, m, wc);
}

int pn_weight_memo_put_form(pn_weight_memo *memo, const pn_check_form *f, const pn_model *m,
			    const pn_weight_check *wc)
{
	/* only a plain pass: the other outcomes name values of the file
	 * (weight_scale.c's texts), and the real ranges are not a blind run's */
	if (wc->n_real || !wc->how || strncmp(wc->how, "outputs finite and normal: yes", 30))
		return 0;
	for (size_t i = 0; i < wc->n_regen; i++)
		if (!canonical_name(m, f, wc->regen[i]->name))
			return 0;   /* a range on no output: not this model's terms */
	return memo_put(memo, &f->key, f, m, wc);
}
