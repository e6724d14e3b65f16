/*
 * pool.h - buffer pool of an executor session.  A freed buffer is kept and
 * handed out again for any request it can hold (smallest fit first), so a
 * graph that is run repeatedly stops allocating after its first run.  A
 * graph run once gains little from it and a CNN's shrinking activations
 * would pile up in it (each too large for the next requests): such a
 * session sets a small limit.
 */
#ifndef PN_POOL_H
#define PN_POOL_H

#include <stddef.h>

typedef struct pn_pool {
	void **ptr;
	size_t *cap;
	int n, max;
	size_t held;       /* bytes currently kept for reuse */
	size_t limit;      /* the most it keeps; 0: PN_POOL_MAX_HELD (pool.c) */
} pn_pool;

/* 64-byte aligned buffer of at least size bytes; *cap receives its size. */
void *pn_pool_get(pn_pool *p, size_t size, size_t *cap);
void  pn_pool_put(pn_pool *p, void *ptr, size_t cap);
void  pn_pool_clear(pn_pool *p);

#endif
