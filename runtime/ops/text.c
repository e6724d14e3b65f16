/*
 * text.c - string and token ops: StringNormalizer, TfIdfVectorizer.
 *
 * Case folding is ASCII only: bytes outside A-Z/a-z (UTF-8 sequences
 * included) pass through unchanged and the locale attribute is not
 * consulted.  That matches ONNX Runtime for ASCII text; non-ASCII letters
 * (e.g. "É", "ß", Turkish dotted i) would need a real locale.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "runtime/infer.h"
#include "runtime/kernel.h"

/* --- StringNormalizer --------------------------------------------------------------------- */

enum { CASE_NONE, CASE_LOWER, CASE_UPPER };

static int case_action(const pn_node *n, int *out)
{
	const char *s = pn_attr_str(n, "case_change_action", "NONE");
	if (!strcmp(s, "NONE"))
		*out = CASE_NONE;
	else if (!strcmp(s, "LOWER"))
		*out = CASE_LOWER;
	else if (!strcmp(s, "UPPER"))
		*out = CASE_UPPER;
	else
		return -1;
	return 0;
}

int pn_infer_StringNormalizer(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0);
	int act;
	if (case_action(c->node, &act))
		return pn_ifail(c, "unknown case_change_action '%s'",
				pn_attr_str(c->node, "case_change_action", ""));
	if (!x || x->type.rank < 0) {
		pn_iset(c, 0, PN_STRING, -1, NULL);
		return 0;
	}
	if (x->type.rank == 1)
		pn_iset(c, 0, PN_STRING, 1, (int64_t[]){-1});
	else if (x->type.rank == 2)
		pn_iset(c, 0, PN_STRING, 2, (int64_t[]){1, -1});
	else
		return pn_ifail(c, "input must be [C] or [1, C]");
	return 0;
}

static int is_stopword(const pn_attr *sw, const char *s, int case_sensitive)
{
	for (int i = 0; sw && i < sw->n; i++)
		if (case_sensitive ? !strcmp(sw->strings[i], s) : !strcasecmp(sw->strings[i], s))
			return 1;
	return 0;
}

static char *fold_case(const char *s, int act)
{
	char *r = strdup(s ? s : "");
	for (char *p = r; r && *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if (ch < 128)
			*p = (char)(act == CASE_LOWER ? tolower(ch) : act == CASE_UPPER ? toupper(ch) : ch);
	}
	return r;
}

int pn_kernel_StringNormalizer(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	int act;
	if (case_action(k->node, &act))
		return pn_kfail(k, "unknown case_change_action '%s'",
				pn_attr_str(k->node, "case_change_action", ""));
	if (x->dtype != PN_STRING || x->rank < 1 || x->rank > 2 || (x->rank == 2 && x->dims[0] != 1))
		return pn_kfail(k, "input must be strings of shape [C] or [1, C]");
	const pn_attr *sw = pn_attr_find(k->node, "stopwords");
	int cs = pn_attr_int(k->node, "is_case_sensitive", 0) != 0;
	char *const *in = x->data;
	int64_t kept = 0;
	for (int64_t i = 0; i < x->numel; i++)
		kept += !is_stopword(sw, in[i] ? in[i] : "", cs);
	/* Everything dropped: one empty string, keeping the rank. */
	int64_t n = kept ? kept : 1;
	int64_t dims[2] = {1, n};
	pn_tensor *o = pn_out_alloc(k, 0, PN_STRING, x->rank, x->rank == 1 ? dims + 1 : dims);
	if (!o)
		return -1;
	char **out = o->data;
	for (int64_t i = 0; i < o->numel; i++) {
		free(out[i]);
		out[i] = NULL;
	}
	if (!kept)
		return (out[0] = strdup("")) ? 0 : pn_kfail(k, "out of memory");
	for (int64_t i = 0, j = 0; i < x->numel; i++) {
		const char *s = in[i] ? in[i] : "";
		if (is_stopword(sw, s, cs))
			continue;
		if (!(out[j++] = fold_case(s, act)))
			return pn_kfail(k, "out of memory");
	}
	return 0;
}

/* --- TfIdfVectorizer ------------------------------------------------------------------------- */

enum { TF, IDF, TFIDF };

/* The pool as token ids: int64 pools are their own ids; string pools are
 * numbered by first occurrence, and input strings outside the pool map to
 * -1, which no pool n-gram contains. */
typedef struct tfidf {
	int mode;
	int64_t min_n, max_n, max_skip, out_size;
	const int64_t *idx;          /* ngram_indexes */
	int n_idx;
	const float *w;              /* weights by output index, or NULL */
	int n_w;
	int strings;
	const pn_attr *pool_s;
	int64_t *tok;                /* pool as token ids */
	int64_t n_tok;
	/* hash of pool n-grams: slot -> (n, start in tok, ngram number) or empty */
	int64_t *h_start, *h_id;
	int32_t *h_n;
	int64_t h_cap;
	/* string pools: hash of the distinct pool strings -> index in pool_s */
	int32_t *s_slot;             /* -1: empty */
	int64_t s_cap;
} tfidf;

static uint64_t mix(uint64_t h, int64_t v)
{
	h ^= (uint64_t)v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static uint64_t hash_gram(const int64_t *t, int64_t n, int64_t stride)
{
	uint64_t h = (uint64_t)n;
	for (int64_t i = 0; i < n; i++)
		h = mix(h, t[i * stride]);
	return h;
}

/* Looks up the n tokens t[0], t[stride], ...; returns the n-gram number or -1. */
static int64_t gram_find(const tfidf *f, const int64_t *t, int64_t n, int64_t stride)
{
	uint64_t m = (uint64_t)f->h_cap - 1;
	for (uint64_t s = hash_gram(t, n, stride) & m;; s = (s + 1) & m) {
		if (f->h_n[s] == 0)
			return -1;
		if (f->h_n[s] != n)
			continue;
		const int64_t *p = f->tok + f->h_start[s];
		int64_t i = 0;
		while (i < n && p[i] == t[i * stride])
			i++;
		if (i == n)
			return f->h_id[s];
	}
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* Slot of string s in the string table: where it is, or the empty slot
 * where it would go. */
static uint64_t str_slot(const tfidf *f, const char *s)
{
	uint64_t m = (uint64_t)f->s_cap - 1, i = hash_str(s) & m;
	while (f->s_slot[i] >= 0 && strcmp(f->pool_s->strings[f->s_slot[i]], s))
		i = (i + 1) & m;
	return i;
}

static int64_t string_id(const tfidf *f, const char *s)
{
	int32_t j = f->s_slot[str_slot(f, s)];
	return j >= 0 ? f->tok[j] : -1;
}

/* Numbers the pool strings: repeats share the id of the first occurrence. */
static int build_strings(pn_kctx *k, tfidf *f)
{
	const pn_attr *ps = f->pool_s;
	f->s_cap = 16;
	while (f->s_cap < 2 * (int64_t)ps->n + 1)
		f->s_cap *= 2;
	f->s_slot = malloc(sizeof(int32_t) * (size_t)f->s_cap);
	if (!f->s_slot)
		return pn_kfail(k, "out of memory");
	memset(f->s_slot, 0xff, sizeof(int32_t) * (size_t)f->s_cap);
	for (int i = 0; i < ps->n; i++) {
		uint64_t sl = str_slot(f, ps->strings[i]);
		if (f->s_slot[sl] < 0)
			f->s_slot[sl] = i;
		f->tok[i] = f->s_slot[sl];
	}
	return 0;
}

static int build_pool(pn_kctx *k, tfidf *f)
{
	const pn_attr *pi = pn_attr_find(k->node, "pool_int64s"), *ps = pn_attr_find(k->node, "pool_strings");
	const pn_attr *cnt = pn_attr_find(k->node, "ngram_counts");
	if (!!pi == !!ps)
		return pn_kfail(k, "exactly one of pool_int64s and pool_strings must be set");
	if (!cnt || !cnt->n)
		return pn_kfail(k, "ngram_counts is required");
	f->strings = ps != NULL;
	f->pool_s = ps;
	f->n_tok = ps ? ps->n : pi->n;
	f->tok = malloc(sizeof(int64_t) * (size_t)(f->n_tok + 1));
	if (!f->tok)
		return pn_kfail(k, "out of memory");
	for (int64_t i = 0; !ps && i < f->n_tok; i++)
		f->tok[i] = pi->ints[i];
	if (ps && build_strings(k, f))
		return -1;
	int64_t grams = 0;
	for (int j = 0; j < cnt->n; j++) {
		int64_t lo = cnt->ints[j], hi = j + 1 < cnt->n ? cnt->ints[j + 1] : f->n_tok;
		if (lo < 0 || hi < lo || hi > f->n_tok || (hi - lo) % (j + 1))
			return pn_kfail(k, "ngram_counts does not split the pool into %d-grams", j + 1);
		grams += (hi - lo) / (j + 1);
	}
	if (grams > f->n_idx)
		return pn_kfail(k, "%lld n-grams in the pool, %d ngram_indexes", (long long)grams, f->n_idx);
	f->h_cap = 16;
	while (f->h_cap < 2 * grams + 1)
		f->h_cap *= 2;
	f->h_start = malloc(sizeof(int64_t) * (size_t)f->h_cap);
	f->h_id = malloc(sizeof(int64_t) * (size_t)f->h_cap);
	f->h_n = calloc((size_t)f->h_cap, sizeof(int32_t));
	if (!f->h_start || !f->h_id || !f->h_n)
		return pn_kfail(k, "out of memory");
	int64_t id = 0;
	uint64_t m = (uint64_t)f->h_cap - 1;
	for (int j = 0; j < cnt->n; j++) {
		int64_t n = j + 1, lo = cnt->ints[j], hi = j + 1 < cnt->n ? cnt->ints[j + 1] : f->n_tok;
		for (int64_t p = lo; p < hi; p += n, id++) {
			/* A repeated n-gram keeps its first number. */
			if (gram_find(f, f->tok + p, n, 1) >= 0)
				continue;
			uint64_t s = hash_gram(f->tok + p, n, 1) & m;
			while (f->h_n[s])
				s = (s + 1) & m;
			f->h_n[s] = (int32_t)n;
			f->h_start[s] = p;
			f->h_id[s] = id;
		}
	}
	return 0;
}

static int read_tfidf(pn_kctx *k, tfidf *f)
{
	memset(f, 0, sizeof(*f));
	const char *mode = pn_attr_str(k->node, "mode", "TF");
	f->mode = !strcmp(mode, "TF") ? TF : !strcmp(mode, "IDF") ? IDF : !strcmp(mode, "TFIDF") ? TFIDF : -1;
	if (f->mode < 0)
		return pn_kfail(k, "unknown mode '%s'", mode);
	f->min_n = pn_attr_int(k->node, "min_gram_length", 1);
	f->max_n = pn_attr_int(k->node, "max_gram_length", 1);
	f->max_skip = pn_attr_int(k->node, "max_skip_count", 0);
	if (f->min_n < 1 || f->max_n < f->min_n || f->max_skip < 0)
		return pn_kfail(k, "bad gram lengths or skip count");
	const pn_attr *ix = pn_attr_find(k->node, "ngram_indexes"), *w = pn_attr_find(k->node, "weights");
	if (!ix || !ix->n)
		return pn_kfail(k, "ngram_indexes is required");
	f->idx = ix->ints;
	f->n_idx = ix->n;
	for (int i = 0; i < ix->n; i++) {
		if (ix->ints[i] < 0)
			return pn_kfail(k, "negative ngram index");
		if (ix->ints[i] + 1 > f->out_size)
			f->out_size = ix->ints[i] + 1;
	}
	f->w = w ? w->floats : NULL;
	f->n_w = w ? w->n : 0;
	return build_pool(k, f);
}

static void tfidf_free(tfidf *f)
{
	free(f->tok);
	free(f->h_start);
	free(f->h_id);
	free(f->h_n);
	free(f->s_slot);
}

/* Counts the pool n-grams of one row of C tokens into cnt[out_size].
 * Unigrams are counted once per position; longer n-grams once per skip
 * distance 1 .. max_skip+1 (as ONNX Runtime and the ONNX reference do). */
static void count_row(const tfidf *f, const int64_t *t, int64_t C, float *cnt)
{
	if (f->min_n <= 1)
		for (int64_t i = 0; i < C; i++) {
			int64_t id = gram_find(f, t + i, 1, 1);
			if (id >= 0)
				cnt[f->idx[id]] += 1;
		}
	for (int64_t n = f->min_n > 2 ? f->min_n : 2; n <= f->max_n; n++)
		for (int64_t s = 1; s <= f->max_skip + 1; s++)
			for (int64_t i = 0; i + (n - 1) * s < C; i++) {
				int64_t id = gram_find(f, t + i, n, s);
				if (id >= 0)
					cnt[f->idx[id]] += 1;
			}
}

static void weigh_row(const tfidf *f, float *cnt)
{
	for (int64_t j = 0; j < f->out_size; j++) {
		float w = f->w && j < f->n_w ? f->w[j] : 1.0f;
		if (f->mode == IDF)
			cnt[j] = cnt[j] > 0 ? w : 0;
		else if (f->mode == TFIDF)
			cnt[j] *= w;
	}
}

int pn_infer_TfIdfVectorizer(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0);
	int64_t size = -1;
	const pn_attr *ix = pn_attr_find(c->node, "ngram_indexes");
	for (int i = 0; ix && i < ix->n; i++)
		if (ix->ints[i] + 1 > size)
			size = ix->ints[i] + 1;
	if (!x || x->type.rank < 0)
		pn_iset(c, 0, PN_FLOAT, -1, NULL);
	else if (x->type.rank == 1)
		pn_iset(c, 0, PN_FLOAT, 1, (int64_t[]){size});
	else if (x->type.rank == 2)
		pn_iset(c, 0, PN_FLOAT, 2, (int64_t[]){x->type.dims[0], size});
	else
		return pn_ifail(c, "input must be [C] or [N, C]");
	return 0;
}

int pn_kernel_TfIdfVectorizer(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	tfidf f;
	int rc = read_tfidf(k, &f);
	if (!rc && (x->rank < 1 || x->rank > 2))
		rc = pn_kfail(k, "input must be [C] or [N, C]");
	if (!rc && (f.strings ? x->dtype != PN_STRING : !pn_dtype_is_int(x->dtype)))
		rc = pn_kfail(k, "input dtype %s does not match the pool", pn_dtype_name(x->dtype));
	int64_t rows = x->rank == 2 ? x->dims[0] : 1, C = x->dims[x->rank - 1];
	int64_t *tok = rc ? NULL : malloc(sizeof(int64_t) * (size_t)(x->numel + 1));
	if (!rc && !tok)
		rc = pn_kfail(k, "out of memory");
	pn_tensor *o = NULL;
	if (!rc) {
		int64_t dims[2] = {rows, f.out_size};
		o = pn_out_alloc(k, 0, PN_FLOAT, x->rank, x->rank == 2 ? dims : dims + 1);
		rc = o ? 0 : -1;
	}
	for (int64_t i = 0; !rc && i < x->numel; i++)
		tok[i] = f.strings ? string_id(&f, ((char *const *)x->data)[i] ? ((char *const *)x->data)[i] : "")
				   : pn_tensor_get_i64(x, i);
	if (!rc) {
		float *y = o->data;
		memset(y, 0, sizeof(float) * (size_t)o->numel);
		for (int64_t r = 0; r < rows; r++) {
			count_row(&f, tok + r * C, C, y + r * f.out_size);
			weigh_row(&f, y + r * f.out_size);
		}
	}
	free(tok);
	tfidf_free(&f);
	return rc;
}
