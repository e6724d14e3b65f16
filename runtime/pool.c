#include "runtime/pool.h"

#include <stdlib.h>

/* Buffers beyond this many bytes in reserve are returned to the system. */
#define PN_POOL_MAX_HELD ((size_t)4 << 30)

void *pn_pool_get(pn_pool *p, size_t size, size_t *cap)
{
	int best = -1;
	for (int i = 0; i < p->n; i++)
		if (p->cap[i] >= size && (best < 0 || p->cap[i] < p->cap[best]))
			best = i;
	/* Reuse only a buffer that is not far larger than asked, so one huge
	 * buffer is not pinned by a stream of tiny requests. */
	if (best >= 0 && (p->cap[best] <= 2 * size + 4096)) {
		void *ptr = p->ptr[best];
		*cap = p->cap[best];
		p->held -= p->cap[best];
		p->ptr[best] = p->ptr[--p->n];
		p->cap[best] = p->cap[p->n];
		return ptr;
	}
	size_t c = (size + 63) & ~(size_t)63;
	if (!c)
		c = 64;
	void *ptr = aligned_alloc(64, c);
	if (ptr)
		*cap = c;
	return ptr;
}

void pn_pool_put(pn_pool *p, void *ptr, size_t cap)
{
	if (!ptr)
		return;
	if (p->held + cap > (p->limit ? p->limit : PN_POOL_MAX_HELD))
		goto drop;
	if (p->n == p->max) {
		int m = p->max ? p->max * 2 : 64;
		void **np = realloc(p->ptr, sizeof(void *) * (size_t)m);
		if (!np)
			goto drop;
		p->ptr = np;
		size_t *nc = realloc(p->cap, sizeof(size_t) * (size_t)m);
		if (!nc)
			goto drop;
		p->cap = nc;
		p->max = m;
	}
	p->ptr[p->n] = ptr;
	p->cap[p->n++] = cap;
	p->held += cap;
	return;
drop:
	free(ptr);
}

void pn_pool_clear(pn_pool *p)
{
	for (int i = 0; i < p->n; i++)
		free(p->ptr[i]);
	free(p->ptr);
	free(p->cap);
	p->ptr = NULL;
	p->cap = NULL;
	p->n = p->max = 0;
	p->held = 0;
}
