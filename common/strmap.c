#include "common/strmap.h"

#include <string.h>
#include <xxhash.h>

static uint32_t slot_of(const pn_strmap *m, const char *key)
{
	return (uint32_t)XXH3_64bits(key, strlen(key)) & (m->cap - 1);
}

int pn_strmap_init(pn_strmap *m, pn_arena *a, uint32_t expected)
{
	uint32_t cap = 16;
	while (cap < expected * 2 + 1)
		cap *= 2;
	m->arena = a;
	m->cap = cap;
	m->n = 0;
	m->keys = pn_arena_alloc(a, sizeof(char *) * cap);
	m->vals = pn_arena_alloc(a, sizeof(int32_t) * cap);
	return m->keys && m->vals ? 0 : -1;
}

int32_t pn_strmap_get(const pn_strmap *m, const char *key)
{
	for (uint32_t i = slot_of(m, key);; i = (i + 1) & (m->cap - 1)) {
		if (!m->keys[i])
			return -1;
		if (!strcmp(m->keys[i], key))
			return m->vals[i];
	}
}

static int grow(pn_strmap *m)
{
	pn_strmap bigger;
	if (pn_strmap_init(&bigger, m->arena, m->cap))
		return -1;
	for (uint32_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			pn_strmap_put(&bigger, m->keys[i], m->vals[i]);
	*m = bigger;
	return 0;
}

int pn_strmap_put(pn_strmap *m, const char *key, int32_t val)
{
	if ((m->n + 1) * 2 > m->cap && grow(m))
		return -1;
	uint32_t i = slot_of(m, key);
	while (m->keys[i]) {
		if (!strcmp(m->keys[i], key))
			return 1;
		i = (i + 1) & (m->cap - 1);
	}
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
	return 0;
}
