/*
 * arena.h - bump allocator for everything that lives as long as one model.
 *
 * Decoding an ONNX file creates tens of thousands of small objects (names,
 * dims, attributes).  They all die together, so they are carved out of large
 * chunks and released with one pn_arena_free().  protobuf-c is given the same
 * arena through pn_arena_protobuf_allocator(), so unpacking a model does not
 * call malloc/free per field either.
 */
#ifndef PN_ARENA_H
#define PN_ARENA_H

#include <stddef.h>
#include <stdint.h>

typedef struct pn_arena_chunk pn_arena_chunk;

typedef struct pn_arena {
	pn_arena_chunk *head;   /* chunk currently being filled */
	size_t used_total;      /* bytes handed out, for limits and stats */
	size_t limit;           /* 0 = unlimited; otherwise allocations fail past it */
} pn_arena;

void  pn_arena_init(pn_arena *a, size_t limit);
void  pn_arena_free(pn_arena *a);
/* Returns 16-byte aligned zeroed memory, or NULL past the limit. */
void *pn_arena_alloc(pn_arena *a, size_t size);
void *pn_arena_memdup(pn_arena *a, const void *p, size_t size);
char *pn_arena_strdup(pn_arena *a, const char *s);
char *pn_arena_strndup(pn_arena *a, const char *s, size_t n);
char *pn_arena_printf(pn_arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

struct ProtobufCAllocator;
/* Fills *out so that protobuf-c allocates from the arena (free is a no-op). */
void pn_arena_protobuf_allocator(pn_arena *a, struct ProtobufCAllocator *out);

#endif
