/*
 * variant_memo.c - see variant_memo.h.
 */
#include "extract/variant_memo.h"

#include <stdlib.h>
#include <string.h>

#include "common/assert.h"
#include "common/memo.h"

#define MEMO_BYTES ((size_t)16 << 20)
#define VERDICT_BYTES ((size_t)1 << 20)

/* One remembered choice: strings malloc'd. */
typedef struct entry {
	int n, n_notes;
	pn_variant *v;        /* batch, text, how, ran */
	char **notes;
} entry;

struct pn_variant_memo {
	pn_memo m;            /* of entry */
	pn_memo independent;  /* of char: forms found batch independent */
};

static void entry_free(void *p)
{
	entry *e = p;
	for (int i = 0; i < e->n; i++) {
		free((char *)e->v[i].text);
		free((char *)e->v[i].how);
	}
	for (int i = 0; i < e->n_notes; i++)
		free(e->notes[i]);
	free(e->v);
	free(e->notes);
}

pn_variant_memo *pn_variant_memo_new(void)
{
	pn_variant_memo *memo = calloc(1, sizeof *memo);
	if (!memo)
		return NULL;
	if (pn_memo_init(&memo->m, sizeof(entry), MEMO_BYTES, entry_free)) {
		free(memo);
		return NULL;
	}
	if (pn_memo_init(&memo->independent, 1, VERDICT_BYTES, NULL)) {
		pn_memo_destroy(&memo->m);
		free(memo);
		return NULL;
	}
	return memo;
}

void pn_variant_memo_free(pn_variant_memo *memo)
{
	if (!memo)
		return;
	pn_memo_destroy(&memo->m);
	pn_memo_destroy(&memo->independent);
	free(memo);
}

/* e made from v, and the bytes it holds, about; -1 when out of memory (e
 * freed). */
static int entry_make(entry *e, const pn_variants *v, size_t *bytes)
{
	memset(e, 0, sizeof *e);
	e->v = calloc((size_t)v->n + 1, sizeof(pn_variant));
	e->notes = calloc((size_t)v->n_notes + 1, sizeof(char *));
	int rc = e->v && e->notes ? 0 : -1;
	*bytes = sizeof *e;
	for (int i = 0; !rc && i < v->n; i++, e->n++) {
		PN_ASSERT(v->v[i].batch > 0 && !v->v[i].bind.n && !v->v[i].n_changed);
		e->v[i] = (pn_variant){.batch = v->v[i].batch, .ran = v->v[i].ran,
				       .text = strdup(v->v[i].text), .how = strdup(v->v[i].how)};
		rc = e->v[i].text && e->v[i].how ? 0 : -1;
		*bytes += sizeof(pn_variant) + strlen(v->v[i].text) + strlen(v->v[i].how) + 2;
	}
	for (int i = 0; !rc && i < v->n_notes; i++, e->n_notes++) {
		rc = (e->notes[i] = strdup(v->notes[i])) ? 0 : -1;
		*bytes += sizeof(char *) + strlen(v->notes[i]) + 1;
	}
	if (rc)
		entry_free(e);
	return rc;
}

/* e's copy into out, its strings in a. */
static int entry_copy(const entry *e, pn_arena *a, pn_variants *out)
{
	memset(out, 0, sizeof *out);
	out->v = pn_arena_alloc(a, sizeof(pn_variant) * ((size_t)e->n + 1));
	out->notes = pn_arena_alloc(a, sizeof(char *) * ((size_t)e->n_notes + 1));
	if (!out->v || !out->notes)
		return -1;
	for (int i = 0; i < e->n; i++) {
		out->v[i] = (pn_variant){.batch = e->v[i].batch, .ran = e->v[i].ran,
					 .text = pn_arena_strdup(a, e->v[i].text),
					 .how = pn_arena_strdup(a, e->v[i].how)};
		if (!out->v[i].text || !out->v[i].how)
			return -1;
	}
	for (int i = 0; i < e->n_notes; i++)
		if (!(out->notes[i] = pn_arena_strdup(a, e->notes[i])))
			return -1;
	out->n = e->n;
	out->n_notes = e->n_notes;
	return 0;
}

typedef struct copy_to {
	pn_arena *a;
	pn_variants *out;
} copy_to;

/* A pn_memo_use callback: 1 and the entry copied, 0 when none, -1. */
static int copy_out(const void *e, void *ud)
{
	copy_to *to = ud;
	return !e ? 0 : entry_copy(e, to->a, to->out) ? -1 : 1;
}

int pn_variant_memo_get(pn_variant_memo *memo, const pn_key *key, pn_arena *a, pn_variants *out)
{
	copy_to to = {a, out};
	return pn_memo_use(&memo->m, key, copy_out, &to);
}

int pn_variant_memo_put(pn_variant_memo *memo, const pn_key *key, const pn_variants *v)
{
	entry e;
	size_t bytes;
	if (entry_make(&e, v, &bytes))
		return -1;
	return pn_memo_put(&memo->m, key, &e, bytes);
}

/* A pn_memo_use callback: 1 when the form is there. */
static int present(const void *e, void *ud)
{
	(void)ud;
	return e != NULL;
}

int pn_variant_memo_independent(pn_variant_memo *memo, const pn_key *form)
{
	return pn_memo_use(&memo->independent, form, present, NULL);
}

int pn_variant_memo_learn_independent(pn_variant_memo *memo, const pn_key *form)
{
	char verdict = 1;
	return pn_memo_put(&memo->independent, form, &verdict, sizeof(pn_key) + 1);
}
