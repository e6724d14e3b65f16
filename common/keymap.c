/*
 * keymap.c - open addressing over hash keys (keymap.h).
 */
#include "common/keymap.h"

#include <stdlib.h>
#include <string.h>

#include "common/assert.h"

static size_t slot_of(const pn_keymap *m, const pn_key *k)
{
	uint64_t h;
	memcpy(&h, k->b, sizeof h);   /* a hash already */
	size_t i = h & (m->cap - 1);
	while (m->used[i] && memcmp(m->keys[i].b, k->b, 16))
		i = (i + 1) & (m->cap - 1);
	return i;
}

uint64_t *pn_keymap_find(const pn_keymap *m, const pn_key *k)
{
	if (!m->cap)
		return NULL;
	size_t i = slot_of(m, k);
	return m->used[i] ? &m->vals[i] : NULL;
}

/* Rehashes m into twice the slots: 0, or -1 with m unchanged. */
static int grow(pn_keymap *m)
{
	pn_keymap g = {.cap = m->cap ? 2 * m->cap : 1024, .n = m->n};
	g.keys = malloc(sizeof(pn_key) * g.cap);
	g.vals = malloc(sizeof(uint64_t) * g.cap);
	g.used = calloc(g.cap, 1);
	if (!g.keys || !g.vals || !g.used) {
		pn_keymap_free(&g);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->used[i]) {
			size_t t = slot_of(&g, &m->keys[i]);
			g.used[t] = 1;
			g.keys[t] = m->keys[i];
			g.vals[t] = m->vals[i];
		}
	pn_keymap_free(m);
	*m = g;
	return 0;
}

uint64_t *pn_keymap_put(pn_keymap *m, const pn_key *k, int *added)
{
	if (2 * (m->n + 1) > m->cap && grow(m))
		return NULL;
	size_t i = slot_of(m, k);
	*added = !m->used[i];
	if (*added) {
		m->used[i] = 1;
		m->keys[i] = *k;
		m->vals[i] = 0;
		m->n++;
	}
	PN_ASSERT(2 * m->n <= m->cap);   /* half empty: every probe ends */
	return &m->vals[i];
}

void pn_keymap_clear(pn_keymap *m)
{
	if (m->cap)
		memset(m->used, 0, m->cap);
	m->n = 0;
}

void pn_keymap_free(pn_keymap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof *m);
}
