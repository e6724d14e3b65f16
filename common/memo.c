/*
 * memo.c - see memo.h.
 */
#include "common/memo.h"

#include <stdlib.h>
#include <string.h>

/* What entry e owns, freed (an entry of plain values owns nothing). */
static void free_owned(const pn_memo *m, void *e)
{
	if (m->free_entry)
		m->free_entry(e);
}

int pn_memo_init(pn_memo *m, size_t entry_size, size_t budget, void (*free_entry)(void *e))
{
	memset(m, 0, sizeof *m);
	m->size = entry_size;
	m->budget = budget;
	m->free_entry = free_entry;
	return pthread_mutex_init(&m->lock, NULL) ? -1 : 0;
}

void pn_memo_destroy(pn_memo *m)
{
	for (size_t i = 0; i < m->n; i++)
		free_owned(m, m->e + i * m->size);
	free(m->e);
	pn_keymap_free(&m->index);
	pthread_mutex_destroy(&m->lock);
	memset(m, 0, sizeof *m);
}

int pn_memo_use(pn_memo *m, const pn_key *key, int (*use)(const void *e, void *ud), void *ud)
{
	pthread_mutex_lock(&m->lock);
	const uint64_t *slot = pn_keymap_find(&m->index, key);
	int rc = use(slot ? m->e + (*slot - 1) * m->size : NULL, ud);
	pthread_mutex_unlock(&m->lock);
	return rc;
}

/* Room for one more entry: 0, or -1 when out of memory. */
static int grow(pn_memo *m)
{
	if (m->n < m->cap)
		return 0;
	size_t cap = m->cap ? 2 * m->cap : 16;
	unsigned char *e = realloc(m->e, m->size * cap);
	if (!e)
		return -1;
	m->e = e;
	m->cap = cap;
	return 0;
}

int pn_memo_put(pn_memo *m, const pn_key *key, void *e, size_t bytes)
{
	pthread_mutex_lock(&m->lock);
	int added = 0, rc = 0;
	if (m->bytes + bytes > m->budget) {   /* full: this one is computed anew each time */
		pthread_mutex_unlock(&m->lock);
		free_owned(m, e);
		return 0;
	}
	uint64_t *slot = grow(m) ? NULL : pn_keymap_put(&m->index, key, &added);
	if (slot && added) {
		memcpy(m->e + m->n * m->size, e, m->size);
		*slot = ++m->n;
		m->bytes += bytes;
	} else {
		/* another worker remembered the same result first, or no memory */
		free_owned(m, e);
		rc = slot ? 0 : -1;
	}
	pthread_mutex_unlock(&m->lock);
	return rc;
}
