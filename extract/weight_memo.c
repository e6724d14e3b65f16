/*
 * weight_memo.c - see weight_memo.h.
 */
#include "extract/weight_memo.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/keymap.h"
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
	pthread_mutex_t lock;
	pn_keymap index;   /* key -> entry number + 1 */
	entry *e;
	size_t n, cap;
	size_t bytes;      /* held by the entries, about */
};

pn_weight_memo *pn_weight_memo_new(void)
{
	pn_weight_memo *memo = calloc(1, sizeof(*memo));
	if (memo && pthread_mutex_init(&memo->lock, NULL)) {
		free(memo);
		return NULL;
	}
	return memo;
}

static void entry_free(entry *e)
{
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
	for (size_t i = 0; i < memo->n; i++)
		entry_free(&memo->e[i]);
	free(memo->e);
	pn_keymap_free(&memo->index);
	pthread_mutex_destroy(&memo->lock);
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

/* ranges[0..n) copied into *out (allocated in a). */
static int ranges_copy(const Passnet__ValueRange *ranges, int n, pn_arena *a,
		       Passnet__ValueRange ***out)
{
	*out = pn_arena_alloc(a, sizeof(void *) * (size_t)(n + 1));
	for (int i = 0; *out && i < n; i++) {
		Passnet__ValueRange *r = pn_arena_alloc(a, sizeof(*r));
		if (!r)
			return -1;
		*r = ranges[i];
		if (!(r->name = pn_arena_strdup(a, ranges[i].name)))
			return -1;
		(*out)[i] = r;
	}
	return *out ? 0 : -1;
}

/* Copies e onto m's weight statistics and into out (allocated in a). */
static int entry_apply(const entry *e, pn_model *m, pn_arena *a, pn_weight_check *out)
{
	pn_wmeta **metas = NULL;
	int n = pn_weight_metas(m->graph, &metas);
	if (n < 0)
		return -1;
	if (n != e->n_scales) {   /* not the model remembered: check it anew */
		free(metas);
		return 0;
	}
	for (int i = 0; i < n; i++)
		metas[i]->scale = e->scales[i];
	free(metas);
	memset(out, 0, sizeof *out);
	out->n_absent = e->n_absent;
	out->how = pn_arena_strdup(a, e->how);
	if (!out->how || ranges_copy(e->real, e->n_real, a, &out->real) ||
	    ranges_copy(e->regen, e->n_regen, a, &out->regen))
		return -1;
	out->n_real = (size_t)e->n_real;
	out->n_regen = (size_t)e->n_regen;
	return 1;
}

int pn_weight_memo_get(pn_weight_memo *memo, const pn_key *key, pn_model *m, pn_arena *a,
		       pn_weight_check *out)
{
	pthread_mutex_lock(&memo->lock);
	const uint64_t *slot = pn_keymap_find(&memo->index, key);
	/* entries are never moved out from under a reader: e grows under the
	 * lock, and the copy is made under it */
	int rc = slot ? entry_apply(&memo->e[*slot - 1], m, a, out) : 0;
	pthread_mutex_unlock(&memo->lock);
	return rc;
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

/* ranges[0..n) copied into *out (malloc'd); counts them in *done. */
static int ranges_keep(Passnet__ValueRange *const *ranges, size_t n, Passnet__ValueRange **out,
		       int *done)
{
	*out = calloc(n + 1, sizeof(Passnet__ValueRange));
	for (size_t i = 0; *out && i < n; i++) {
		(*out)[i] = *ranges[i];
		(*out)[i].name = strdup(ranges[i]->name ? ranges[i]->name : "");
		if (!(*out)[i].name)
			return -1;
		*done = (int)i + 1;
	}
	return *out ? 0 : -1;
}

/* e made from m's scales and wc; -1 when out of memory (e freed). */
static int entry_make(entry *e, const pn_model *m, const pn_weight_check *wc)
{
	memset(e, 0, sizeof *e);
	pn_wmeta **metas = NULL;
	int n = pn_weight_metas(m->graph, &metas);
	e->how = strdup(wc->how ? wc->how : "");
	e->n_absent = wc->n_absent;
	e->scales = malloc(sizeof(double) * (size_t)(n + 1));
	int rc = n >= 0 && e->how && e->scales ? 0 : -1;
	for (int i = 0; !rc && i < n; i++)
		e->scales[i] = metas[i]->scale;
	e->n_scales = n;
	free(metas);
	if (!rc)
		rc = ranges_keep(wc->real, wc->n_real, &e->real, &e->n_real) ||
		     ranges_keep(wc->regen, wc->n_regen, &e->regen, &e->n_regen);
	if (rc)
		entry_free(e);
	return rc ? -1 : 0;
}

int pn_weight_memo_put(pn_weight_memo *memo, const pn_key *key, const pn_model *m,
		       const pn_weight_check *wc)
{
	entry e;
	if (entry_make(&e, m, wc))
		return -1;
	size_t eb = entry_bytes(&e);
	pthread_mutex_lock(&memo->lock);
	int added = 0, rc = 0;
	if (memo->bytes + eb > MEMO_BYTES) {   /* full: this one is checked anew each time */
		pthread_mutex_unlock(&memo->lock);
		entry_free(&e);
		return 0;
	}
	if (memo->n == memo->cap) {
		size_t cap = memo->cap ? 2 * memo->cap : 16;
		entry *ne = realloc(memo->e, sizeof(entry) * cap);
		rc = ne ? 0 : -1;
		if (ne) {
			memo->e = ne;
			memo->cap = cap;
		}
	}
	uint64_t *slot = rc ? NULL : pn_keymap_put(&memo->index, key, &added);
	if (slot && added) {
		memo->e[memo->n] = e;
		*slot = ++memo->n;
		memo->bytes += eb;
	} else {
		/* another worker remembered the same result first, or no memory */
		entry_free(&e);
		rc = slot ? 0 : -1;
	}
	pthread_mutex_unlock(&memo->lock);
	return rc;
}
