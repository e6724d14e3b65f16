/*
 * strmap.h - string -> int32 open-addressing map in an arena, used to resolve
 * value names while a graph is decoded.  Keys are not copied: they must live
 * as long as the map (they point into the same arena).
 */
#ifndef PN_STRMAP_H
#define PN_STRMAP_H

#include <stdint.h>

#include "common/arena.h"

typedef struct pn_strmap {
	const char **keys;
	int32_t *vals;
	uint32_t cap, n;
	pn_arena *arena;
} pn_strmap;

int     pn_strmap_init(pn_strmap *m, pn_arena *a, uint32_t expected);
/* Returns the value for key, or -1. */
int32_t pn_strmap_get(const pn_strmap *m, const char *key);
/* Inserts; returns 0, 1 if the key was already present (value unchanged),
 * -1 when out of memory. */
int     pn_strmap_put(pn_strmap *m, const char *key, int32_t val);

#endif
