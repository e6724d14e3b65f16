/*
 * layout_util.c - the strided box copy behind the layout kernels, and small
 * helpers they share (see layout.h).
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/ops/layout.h"

/* --- box copy ------------------------------------------------------------------ */

/* Drops unit dims and merges dims that are contiguous on both sides, so most
 * layout ops end up as a few long rows.  Returns 0 when the box is empty. */
static int box_simplify(const pn_box *in, pn_box *b)
{
	b->rank = 0;
	for (int d = 0; d < in->rank; d++) {
		if (in->n[d] == 0)
			return 0;
		if (in->n[d] == 1)
			continue;
		int r = b->rank;
		if (r > 0 && b->ds[r - 1] == in->ds[d] * in->n[d] &&
		    b->ss[r - 1] == in->ss[d] * in->n[d]) {
			b->n[r - 1] *= in->n[d];
			b->ds[r - 1] = in->ds[d];
			b->ss[r - 1] = in->ss[d];
			continue;
		}
		b->n[r] = in->n[d];
		b->ds[r] = in->ds[d];
		b->ss[r] = in->ss[d];
		b->rank++;
	}
	return 1;
}

/* Tile edge of the blocked transpose: one cache line of 4-byte elements. */
#define PN_TBLOCK 16

/* One 2-d tile, element type T.  The cases: contiguous rows (memcpy), a
 * transpose (contiguous writes, reads contiguous down the rows: blocked so
 * the source lines are reused), a broadcast row, and the general loop. */
#define PN_COPY2D(T)                                                                       \
	static void copy2d_##T(T *restrict d, const T *restrict s, int64_t n0, int64_t n1,   \
			       int64_t d0, int64_t d1, int64_t s0, int64_t s1)                \
	{                                                                                  \
		if (d1 == 1 && s1 == 1) {                                                  \
			for (int64_t i = 0; i < n0; i++)                                   \
				memcpy(d + i * d0, s + i * s0, (size_t)n1 * sizeof(T));    \
		} else if (d1 == 1 && s1 == 0) {                                           \
			for (int64_t i = 0; i < n0; i++) {                                 \
				T v = s[i * s0];                                           \
				T *dr = d + i * d0;                                        \
				for (int64_t j = 0; j < n1; j++)                           \
					dr[j] = v;                                         \
			}                                                                  \
		} else if (d1 == 1 && s0 == 1) {                                           \
			for (int64_t jb = 0; jb < n1; jb += PN_TBLOCK) {                   \
				int64_t je = jb + PN_TBLOCK < n1 ? jb + PN_TBLOCK : n1;    \
				for (int64_t i = 0; i < n0; i++) {                         \
					T *dr = d + i * d0;                                \
					const T *sr = s + i;                               \
					for (int64_t j = jb; j < je; j++)                  \
						dr[j] = sr[j * s1];                        \
				}                                                          \
			}                                                                  \
		} else {                                                                   \
			for (int64_t i = 0; i < n0; i++) {                                 \
				T *dr = d + i * d0;                                        \
				const T *sr = s + i * s0;                                  \
				for (int64_t j = 0; j < n1; j++)                           \
					dr[j * d1] = sr[j * s1];                           \
			}                                                                  \
		}                                                                          \
	}

PN_COPY2D(uint8_t)
PN_COPY2D(uint16_t)
PN_COPY2D(uint32_t)
PN_COPY2D(uint64_t)

static void copy2d_bytes(char *d, const char *s, size_t es, int64_t n0, int64_t n1, int64_t d0,
			 int64_t d1, int64_t s0, int64_t s1)
{
	for (int64_t i = 0; i < n0; i++)
		for (int64_t j = 0; j < n1; j++)
			memcpy(d + (size_t)((i * d0 + j * d1)) * es, s + (size_t)(i * s0 + j * s1) * es,
			       es);
}

static void copy2d(char *d, const char *s, size_t es, int64_t n0, int64_t n1, int64_t d0,
		   int64_t d1, int64_t s0, int64_t s1)
{
	switch (es) {
	case 1: copy2d_uint8_t((uint8_t *)d, (const uint8_t *)s, n0, n1, d0, d1, s0, s1); break;
	case 2: copy2d_uint16_t((uint16_t *)d, (const uint16_t *)s, n0, n1, d0, d1, s0, s1); break;
	case 4: copy2d_uint32_t((uint32_t *)d, (const uint32_t *)s, n0, n1, d0, d1, s0, s1); break;
	case 8: copy2d_uint64_t((uint64_t *)d, (const uint64_t *)s, n0, n1, d0, d1, s0, s1); break;
	default: copy2d_bytes(d, s, es, n0, n1, d0, d1, s0, s1); break;
	}
}

void pn_lay_box_copy(void *dst, const void *src, size_t es, const pn_box *in, int par)
{
	pn_box b;
	if (!box_simplify(in, &b))
		return;
	/* Always at least two dims: the tile kernel works on 2-d blocks. */
	while (b.rank < 2) {
		memmove(b.n + 1, b.n, sizeof(int64_t) * (size_t)b.rank);
		memmove(b.ds + 1, b.ds, sizeof(int64_t) * (size_t)b.rank);
		memmove(b.ss + 1, b.ss, sizeof(int64_t) * (size_t)b.rank);
		b.n[0] = 1;
		b.ds[0] = b.ss[0] = 0;
		b.rank++;
	}
	int r = b.rank;
	/* Writes run along the last dim; if reads are contiguous along some
	 * outer dim, make it the tile's row dim so the tile is a transpose
	 * (blocked) instead of a gather with a huge stride on every element. */
	if (b.ds[r - 1] == 1 && b.ss[r - 1] != 1 && b.ss[r - 2] != 1) {
		for (int k = 0; k < r - 2; k++) {
			if (b.ss[k] != 1)
				continue;
			int64_t t;
			t = b.n[k], b.n[k] = b.n[r - 2], b.n[r - 2] = t;
			t = b.ds[k], b.ds[k] = b.ds[r - 2], b.ds[r - 2] = t;
			t = b.ss[k], b.ss[k] = b.ss[r - 2], b.ss[r - 2] = t;
			break;
		}
	}
	int64_t n0 = b.n[r - 2], n1 = b.n[r - 1], outer = 1;
	for (int d = 0; d < r - 2; d++)
		outer *= b.n[d];
	/* Tasks are tiles of about 8K elements (at least 32 rows, so transposes
	 * get square-ish blocks), numbered over (outer, row block, column block). */
	int64_t cb = n1 < 8192 ? n1 : 8192, rb = 8192 / cb;
	if (rb < 32)
		rb = 32;
	if (rb > n0)
		rb = n0;
	int64_t ncb = (n1 + cb - 1) / cb, nrb = (n0 + rb - 1) / rb;
	int64_t tasks = outer * nrb * ncb, work = outer * n0 * n1;
	char *d = dst;
	const char *s = src;
	#pragma omp parallel for schedule(static) if (par && work > PN_PAR_MIN_WORK && tasks > 1)
	for (int64_t t = 0; t < tasks; t++) {
		int64_t rest = t / (nrb * ncb), tile = t % (nrb * ncb);
		int64_t i0 = (tile / ncb) * rb, j0 = (tile % ncb) * cb;
		int64_t doff = i0 * b.ds[r - 2] + j0 * b.ds[r - 1];
		int64_t soff = i0 * b.ss[r - 2] + j0 * b.ss[r - 1];
		for (int k = r - 3; k >= 0; k--) {
			int64_t i = rest % b.n[k];
			rest /= b.n[k];
			doff += i * b.ds[k];
			soff += i * b.ss[k];
		}
		int64_t rows = n0 - i0 < rb ? n0 - i0 : rb, cols = n1 - j0 < cb ? n1 - j0 : cb;
		copy2d(d + doff * (int64_t)es, s + soff * (int64_t)es, es, rows, cols, b.ds[r - 2],
		       b.ds[r - 1], b.ss[r - 2], b.ss[r - 1]);
	}
}

/* --- small helpers ------------------------------------------------------------- */

void pn_lay_strides(int rank, const int64_t *dims, int64_t *st)
{
	int64_t acc = 1;
	for (int d = rank - 1; d >= 0; d--) {
		st[d] = acc;
		acc *= dims[d];
	}
}

void pn_lay_fill(void *dst, const void *val, size_t es, int64_t n)
{
	if (n <= 0)
		return;
	switch (es) {
	case 1: memset(dst, *(const uint8_t *)val, (size_t)n); return;
	case 2: {
		uint16_t v, *p = dst;
		memcpy(&v, val, 2);
		for (int64_t i = 0; i < n; i++)
			p[i] = v;
		return;
	}
	case 4: {
		uint32_t v, *p = dst;
		memcpy(&v, val, 4);
		for (int64_t i = 0; i < n; i++)
			p[i] = v;
		return;
	}
	case 8: {
		uint64_t v, *p = dst;
		memcpy(&v, val, 8);
		for (int64_t i = 0; i < n; i++)
			p[i] = v;
		return;
	}
	default:
		for (int64_t i = 0; i < n; i++)
			memcpy((char *)dst + (size_t)i * es, val, es);
	}
}

int pn_lay_own_strings(pn_kctx *k, pn_tensor *t)
{
	if (t->dtype != PN_STRING)
		return 0;
	char **s = t->data;
	for (int64_t i = 0; i < t->numel; i++) {
		char *p = strdup(s[i] ? s[i] : "");
		if (!p) {
			/* the rest still point into the inputs: never free them */
			for (int64_t j = i; j < t->numel; j++)
				s[j] = NULL;
			return pn_kfail(k, "out of memory copying strings");
		}
		s[i] = p;
	}
	return 0;
}

int pn_lay_copy_all(pn_kctx *k, pn_tensor *dst, const pn_tensor *src)
{
	if (dst->numel != src->numel || dst->dtype != src->dtype)
		return pn_kfail(k, "internal: copy of %lld elements into %lld", (long long)src->numel,
				(long long)dst->numel);
	if (dst->data != src->data && src->numel)
		memcpy(dst->data, src->data, pn_tensor_nbytes(src));
	return pn_lay_own_strings(k, dst);
}

int pn_lay_ints(const pn_tensor *t, int64_t *out, int max)
{
	if (!t || !pn_dtype_is_int(t->dtype) || t->rank > 1 || t->numel > max)
		return -1;
	for (int64_t i = 0; i < t->numel; i++)
		out[i] = pn_tensor_get_i64(t, i);
	return (int)t->numel;
}

const int64_t *pn_lay_indices(const pn_tensor *t, int64_t **scratch)
{
	*scratch = NULL;
	if (t->dtype == PN_INT64)
		return t->data;
	if (!pn_dtype_is_int(t->dtype))
		return NULL;
	int64_t *v = malloc(sizeof(int64_t) * (size_t)(t->numel ? t->numel : 1));
	if (!v)
		return NULL;
	if (t->dtype == PN_INT32) {
		const int32_t *p = t->data;
		for (int64_t i = 0; i < t->numel; i++)
			v[i] = p[i];
	} else {
		for (int64_t i = 0; i < t->numel; i++)
			v[i] = pn_tensor_get_i64(t, i);
	}
	*scratch = v;
	return v;
}

const pn_type *pn_lay_itype(const pn_ictx *c, int i)
{
	const pn_tinfo *t = pn_iin(c, i);
	if (!t || t->type.kind != PN_KIND_TENSOR)
		return NULL;
	return &t->type;
}

int64_t pn_lay_type_numel(const pn_type *t)
{
	if (!t || t->rank < 0)
		return -1;
	return pn_numel(t->rank, t->dims);
}

pn_tensor *pn_lay_out(pn_kctx *k, int i)
{
	pn_tensor *o = k->out[i];
	if (!o->data || o->rank < 0 || o->kind != PN_KIND_TENSOR)
		return pn_kfail(k, "output %d: shape was not inferred", i), NULL;
	return o;
}
