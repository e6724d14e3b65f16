/*
 * arena.c - see arena.h.  Chunks grow geometrically so that a 500 MB model
 * costs a few dozen mallocs, and an oversized request gets a chunk of its own.
 */
#include "common/arena.h"

#include <protobuf-c/protobuf-c.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pn_arena_chunk {
	pn_arena_chunk *next;
	size_t size, used;
	_Alignas(16) unsigned char data[];
};

#define PN_ARENA_MIN_CHUNK (64u * 1024u)

void pn_arena_init(pn_arena *a, size_t limit)
{
	a->head = NULL;
	a->used_total = 0;
	a->limit = limit;
}

void pn_arena_free(pn_arena *a)
{
	pn_arena_chunk *c = a->head;
	while (c) {
		pn_arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	a->head = NULL;
	a->used_total = 0;
}

void *pn_arena_alloc(pn_arena *a, size_t size)
{
	size_t need = (size + 15) & ~(size_t)15;
	if (need < size)
		return NULL;
	if (a->limit && a->used_total + need > a->limit)
		return NULL;
	pn_arena_chunk *c = a->head;
	if (!c || c->size - c->used < need) {
		size_t csize = c ? c->size * 2 : PN_ARENA_MIN_CHUNK;
		if (csize > 64u * 1024u * 1024u)
			csize = 64u * 1024u * 1024u;
		if (csize < need)
			csize = need;
		pn_arena_chunk *n = malloc(sizeof(*n) + csize);
		if (!n)
			return NULL;
		n->size = csize;
		n->used = 0;
		/* A big one-off allocation must not retire the current chunk. */
		if (c && csize == need && c->size - c->used > 4096) {
			n->next = c->next;
			c->next = n;
			c = n;
		} else {
			n->next = c;
			a->head = c = n;
		}
	}
	void *p = c->data + c->used;
	c->used += need;
	a->used_total += need;
	memset(p, 0, need);
	return p;
}

void *pn_arena_memdup(pn_arena *a, const void *p, size_t size)
{
	void *q = pn_arena_alloc(a, size ? size : 1);
	if (q && size)
		memcpy(q, p, size);
	return q;
}

char *pn_arena_strndup(pn_arena *a, const char *s, size_t n)
{
	char *q = pn_arena_alloc(a, n + 1);
	if (q) {
		if (n)
			memcpy(q, s, n);
		q[n] = 0;
	}
	return q;
}

char *pn_arena_strdup(pn_arena *a, const char *s)
{
	return pn_arena_strndup(a, s ? s : "", s ? strlen(s) : 0);
}

char *pn_arena_printf(pn_arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	char *q = pn_arena_alloc(a, (size_t)n + 1);
	if (!q)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(q, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return q;
}

static void *arena_pb_alloc(void *data, size_t size)
{
	return pn_arena_alloc(data, size);
}

static void arena_pb_free(void *data, void *p)
{
	(void)data;
	(void)p;
}

void pn_arena_protobuf_allocator(pn_arena *a, ProtobufCAllocator *out)
{
	out->alloc = arena_pb_alloc;
	out->free = arena_pb_free;
	out->allocator_data = a;
}
