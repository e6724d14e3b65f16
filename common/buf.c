/* buf.c - growable byte buffers (see buf.h). */
#include "common/buf.h"

#include <stdlib.h>
#include <string.h>

void pn_buf_put(pn_buf *b, const void *p, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		while (cap < b->n + n)
			cap *= 2;
		uint8_t *q = realloc(b->p, cap);
		if (!q) {
			b->oom = 1;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->n, p, n);
	b->n += n;
}

void pn_buf_u8(pn_buf *b, uint8_t x)
{
	pn_buf_put(b, &x, 1);
}

void pn_buf_varint(pn_buf *b, uint64_t x)
{
	uint8_t tmp[10];
	int n = 0;
	do {
		tmp[n++] = (uint8_t)((x & 0x7f) | (x > 0x7f ? 0x80 : 0));
		x >>= 7;
	} while (x);
	pn_buf_put(b, tmp, (size_t)n);
}

void pn_buf_svarint(pn_buf *b, int64_t x)
{
	pn_buf_varint(b, ((uint64_t)x << 1) ^ (uint64_t)(x >> 63));
}

void pn_buf_blob(pn_buf *b, const void *p, size_t n)
{
	pn_buf_varint(b, n);
	pn_buf_put(b, p, n);
}

void pn_buf_free(pn_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}
