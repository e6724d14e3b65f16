/*
 * buf.h - a growable byte buffer, and the varints canonical forms are
 * written in.
 *
 * A failed allocation sets oom and turns every later write into a no-op,
 * so a writer checks once at the end instead of after every call.
 */
#ifndef PN_BUF_H
#define PN_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct pn_buf {
	uint8_t *p;
	size_t n, cap;
	int oom;
} pn_buf;

void pn_buf_put(pn_buf *b, const void *p, size_t n);
void pn_buf_u8(pn_buf *b, uint8_t x);
void pn_buf_varint(pn_buf *b, uint64_t x);     /* LEB128, as protobuf */
void pn_buf_svarint(pn_buf *b, int64_t x);     /* zigzag, then varint */
void pn_buf_blob(pn_buf *b, const void *p, size_t n);   /* length-prefixed */
void pn_buf_free(pn_buf *b);

#endif
