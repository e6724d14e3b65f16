/*
 * memo.h - a run's memo: results under 16-byte keys (pn_key), shared by
 * a stage's worker threads, up to a byte budget.
 *
 * extract remembers a weight check (extract/weight_memo.h) and a model's
 * generalized variants (extract/variant_memo.h) for the copies of a model
 * that come later in the run.  Both are caches of results that do not
 * depend on which copy came first, so a full memo keeps the first ones
 * (on a hub, the popular models) and the rest are computed anew.
 * Entries are fixed-size structs copied in by value; the memo frees what
 * they own through the caller's free function (NULL when entries are
 * plain values that own nothing).
 */
#ifndef PN_MEMO_H
#define PN_MEMO_H

#include <pthread.h>
#include <stddef.h>

#include "common/keymap.h"
#include "common/util.h"

typedef struct pn_memo {
	pthread_mutex_t lock;
	pn_keymap index;                 /* key -> entry number + 1 */
	unsigned char *e;                /* n entries of size bytes each */
	size_t size, n, cap;
	size_t bytes, budget;            /* held by the entries (the caller's count) */
	void (*free_entry)(void *e);
} pn_memo;

/* 0, or -1 when the lock cannot be made. */
int  pn_memo_init(pn_memo *m, size_t entry_size, size_t budget, void (*free_entry)(void *e));
void pn_memo_destroy(pn_memo *m);

/* use(entry, ud) under the lock, with key's entry or NULL when there is
 * none; returns what use returns.  An entry never moves while used. */
int  pn_memo_use(pn_memo *m, const pn_key *key, int (*use)(const void *e, void *ud), void *ud);

/* Takes entry e (its bytes copied in; it holds about `bytes`) under key.
 * When the budget is spent, or another thread put the key first, e is
 * freed and nothing changes: 0 either way; -1 when out of memory (e
 * freed). */
int  pn_memo_put(pn_memo *m, const pn_key *key, void *e, size_t bytes);

#endif
