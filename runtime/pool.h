/*
 * pool.h - buffer pool of an executor session.  A freed buffer is kept and
 * handed out again for any request it can hold (smallest fit first), so a
 * graph that is run repeatedly stops allocating after its first run.
 */
#ifndef PN_POOL_H
#define PN_POOL_H

#include <stddef.h>

typedef struct pn_pool {
	void **ptr;
	size_t *cap;
	int n, max;
	size_t held;       /* bytes currently kept for reuse */
} pn_pool;

/* 64-byte aligned buffer of at least size bytes; *cap receives its size. */
void *pn_pool_get(pn_pool *p, size_t size, size_t *cap);
void  pn_pool_put(pn_pool *p, void *ptr, size_t cap);
void  pn_pool_clear(pn_pool *p);

#endif
