/*
 * keymap.h - a map from 16-byte hash keys (pn_key) to 64-bit values.
 *
 * The stages keep sets of what a run has seen: the record keys planned
 * (partition), the structures claimed, the subgraphs stored (dedup).  Their
 * keys are XXH3-128 hashes, so the first 8 bytes index an open-addressing
 * table directly, with no hash of the hash.  Not thread-safe: a caller that
 * shares one holds its own lock.
 */
#ifndef PN_KEYMAP_H
#define PN_KEYMAP_H

#include <stddef.h>
#include <stdint.h>

#include "common/util.h"

typedef struct pn_keymap {
	pn_key *keys;
	uint64_t *vals;
	uint8_t *used;
	size_t cap, n;
} pn_keymap;

/* The value slot of k, or NULL when k is not in m. */
uint64_t *pn_keymap_find(const pn_keymap *m, const pn_key *k);
/* The value slot of k, added with value 0 (and *added = 1) when missing;
 * NULL when out of memory (m is unchanged). */
uint64_t *pn_keymap_put(pn_keymap *m, const pn_key *k, int *added);
/* Forgets every key, keeping the table's memory. */
void pn_keymap_clear(pn_keymap *m);
void pn_keymap_free(pn_keymap *m);

#endif
