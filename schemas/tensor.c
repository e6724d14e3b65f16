#include "schemas/tensor.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__F16C__) && defined(__AVX__)
#include <immintrin.h>
#endif

static const struct {
	const char *name;
	size_t size;
} dtype_info[PN_DTYPE_COUNT] = {
	[PN_UNDEFINED] = {"undefined", 0},
	[PN_FLOAT] = {"float32", 4},
	[PN_UINT8] = {"uint8", 1},
	[PN_INT8] = {"int8", 1},
	[PN_UINT16] = {"uint16", 2},
	[PN_INT16] = {"int16", 2},
	[PN_INT32] = {"int32", 4},
	[PN_INT64] = {"int64", 8},
	[PN_STRING] = {"string", sizeof(char *)},
	[PN_BOOL] = {"bool", 1},
	[PN_FLOAT16] = {"float16", 2},
	[PN_DOUBLE] = {"float64", 8},
	[PN_UINT32] = {"uint32", 4},
	[PN_UINT64] = {"uint64", 8},
	[PN_COMPLEX64] = {"complex64", 8},
	[PN_COMPLEX128] = {"complex128", 16},
	[PN_BFLOAT16] = {"bfloat16", 2},
};

size_t pn_dtype_size(int dtype)
{
	return dtype > 0 && dtype < PN_DTYPE_COUNT ? dtype_info[dtype].size : 0;
}

const char *pn_dtype_name(int dtype)
{
	return dtype >= 0 && dtype < PN_DTYPE_COUNT ? dtype_info[dtype].name : "unknown";
}

int pn_dtype_from_name(const char *name)
{
	for (int i = 1; i < PN_DTYPE_COUNT; i++)
		if (!strcmp(name, dtype_info[i].name))
			return i;
	if (!strcmp(name, "float"))
		return PN_FLOAT;
	if (!strcmp(name, "double"))
		return PN_DOUBLE;
	return PN_UNDEFINED;
}

int pn_dtype_is_float(int d)
{
	return d == PN_FLOAT || d == PN_DOUBLE || d == PN_FLOAT16 || d == PN_BFLOAT16;
}

int pn_dtype_is_int(int d)
{
	switch (d) {
	case PN_UINT8: case PN_INT8: case PN_UINT16: case PN_INT16:
	case PN_INT32: case PN_INT64: case PN_UINT32: case PN_UINT64:
		return 1;
	default:
		return 0;
	}
}

int pn_dtype_is_signed(int d)
{
	return d == PN_INT8 || d == PN_INT16 || d == PN_INT32 || d == PN_INT64 ||
	       pn_dtype_is_float(d);
}

float pn_f16_to_f32_soft(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
	if (exp == 0) {
		if (man == 0) {
			bits = sign;
		} else {        /* subnormal: renormalise */
			exp = 127 - 15 + 1;
			while (!(man & 0x400)) {
				man <<= 1;
				exp--;
			}
			man &= 0x3ff;
			bits = sign | (exp << 23) | (man << 13);
		}
	} else if (exp == 31) {   /* infinity, or a NaN made quiet as F16C makes it */
		bits = sign | 0x7f800000u | (man << 13) | (man ? 0x400000u : 0);
	} else {
		bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
	}
	float f;
	memcpy(&f, &bits, 4);
	return f;
}

uint16_t pn_f32_to_f16_soft(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	uint32_t sign = (x >> 16) & 0x8000;
	uint32_t exp = (x >> 23) & 0xff, man = x & 0x7fffff;
	if (exp == 0xff)
		return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
	int e = (int)exp - 127 + 15;
	if (e >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (e <= 0) {
		if (e < -10)
			return (uint16_t)sign;
		man |= 0x800000;
		int shift = 14 - e;
		uint32_t half = 1u << (shift - 1);
		uint32_t rest = man & ((1u << shift) - 1);
		uint32_t r = man >> shift;
		if (rest > half || (rest == half && (r & 1)))
			r++;
		return (uint16_t)(sign | r);
	}
	uint32_t r = ((uint32_t)e << 10) | (man >> 13);
	uint32_t rest = man & 0x1fff;
	if (rest > 0x1000 || (rest == 0x1000 && (r & 1)))
		r++;    /* may carry into the exponent, which is what rounding wants */
	return (uint16_t)(sign | r);
}

void pn_f16_to_f32_n(const uint16_t *src, float *dst, int64_t n)
{
	int64_t i = 0;
#if defined(__F16C__) && defined(__AVX__)
	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
#endif
	for (; i < n; i++)
		dst[i] = pn_f16_to_f32(src[i]);
}

void pn_f32_to_f16_n(const float *src, uint16_t *dst, int64_t n)
{
	int64_t i = 0;
#if defined(__F16C__) && defined(__AVX__)
	for (; i + 8 <= n; i += 8)
		_mm_storeu_si128((__m128i *)(dst + i),
				 _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
#endif
	for (; i < n; i++)
		dst[i] = pn_f32_to_f16(src[i]);
}

int64_t pn_numel(int rank, const int64_t *dims)
{
	int64_t n = 1;
	for (int i = 0; i < rank; i++) {
		if (dims[i] < 0)
			return -1;
		if (dims[i] == 0)
			return 0;
	}
	for (int i = 0; i < rank; i++) {
		if (n > PN_MAX_NUMEL / dims[i])
			return -1;
		n *= dims[i];
	}
	return n;
}

size_t pn_tensor_nbytes(const pn_tensor *t)
{
	return (size_t)t->numel * pn_dtype_size(t->dtype);
}

int pn_tensor_same_shape(const pn_tensor *a, const pn_tensor *b)
{
	if (a->rank != b->rank)
		return 0;
	for (int i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return 0;
	return 1;
}

int pn_seq_push(pn_tensor *seq, pn_tensor *item)
{
	pn_tensor **items = realloc(seq->items, sizeof(*items) * (size_t)(seq->n_items + 1));
	if (!items)
		return -1;
	seq->items = items;
	seq->items[seq->n_items++] = item;
	return 0;
}

/* The largest tensor one process allocates: a quarter of this machine's
 * memory.  Past that calloc may still succeed (the pages come only when
 * written), and the kernel then kills the whole run as it fills them,
 * losing every model's work instead of failing one (ASan aborts outright);
 * found by tests/cli/hostile_semantic.sh. */
static size_t tensor_byte_limit(void)
{
	static atomic_size_t limit;
	size_t l = atomic_load_explicit(&limit, memory_order_relaxed);
	if (!l) {
		long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
		l = pages > 0 && page > 0 ? (size_t)pages / 4 * (size_t)page : SIZE_MAX;
		atomic_store_explicit(&limit, l, memory_order_relaxed);
	}
	return l;
}

int pn_tensor_alloc_data(pn_tensor *t)
{
	t->numel = pn_numel(t->rank, t->dims);
	if (t->numel < 0)
		return -1;
	size_t n = pn_tensor_nbytes(t);
	if (n > tensor_byte_limit())
		return -1;
	t->data = calloc(1, n ? n : 1);
	if (!t->data)
		return -1;
	t->owns = 1;
	return 0;
}

pn_tensor *pn_tensor_new(int dtype, int rank, const int64_t *dims)
{
	if (rank < 0 || rank > PN_MAX_RANK)
		return NULL;
	pn_tensor *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->dtype = dtype;
	t->rank = rank;
	for (int i = 0; i < rank; i++)
		t->dims[i] = dims[i];
	if (pn_tensor_alloc_data(t)) {
		free(t);
		return NULL;
	}
	return t;
}

void pn_tensor_clear(pn_tensor *t)
{
	if (!t)
		return;
	if (t->owns && t->data) {
		if (t->dtype == PN_STRING) {
			char **s = t->data;
			for (int64_t i = 0; i < t->numel; i++)
				free(s[i]);
		}
		free(t->data);
	}
	for (int i = 0; i < t->n_items; i++)
		pn_tensor_free(t->items[i]);
	free(t->items);
	memset(t, 0, sizeof(*t));
}

void pn_tensor_free(pn_tensor *t)
{
	if (!t)
		return;
	pn_tensor_clear(t);
	free(t);
}

pn_tensor *pn_tensor_clone(const pn_tensor *src)
{
	pn_tensor *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	*t = *src;
	t->data = NULL;
	t->items = NULL;
	t->n_items = 0;
	t->owns = 1;
	t->pooled = 0;   /* the copy's data is malloc'd, never a pool buffer */
	t->cap = 0;
	if (src->kind == PN_KIND_TENSOR || (src->kind == PN_KIND_OPTIONAL && !src->none &&
					    src->elem_kind == PN_KIND_TENSOR)) {
		size_t n = pn_tensor_nbytes(src);
		t->data = malloc(n ? n : 1);
		if (!t->data)
			goto fail;
		if (src->dtype == PN_STRING) {
			char **d = t->data, *const *s = src->data;
			for (int64_t i = 0; i < src->numel; i++)
				d[i] = strdup(s[i] ? s[i] : "");
		} else if (n) {
			memcpy(t->data, src->data, n);
		}
	}
	if (src->n_items) {
		t->items = calloc((size_t)src->n_items, sizeof(*t->items));
		if (!t->items)
			goto fail;
		for (int i = 0; i < src->n_items; i++) {
			t->items[i] = pn_tensor_clone(src->items[i]);
			if (!t->items[i])
				goto fail;
			t->n_items = i + 1;
		}
	}
	return t;
fail:
	pn_tensor_free(t);
	return NULL;
}

double pn_tensor_get_f64(const pn_tensor *t, int64_t i)
{
	const void *p = t->data;
	switch (t->dtype) {
	case PN_FLOAT: return ((const float *)p)[i];
	case PN_DOUBLE: return ((const double *)p)[i];
	case PN_FLOAT16: return pn_f16_to_f32(((const uint16_t *)p)[i]);
	case PN_BFLOAT16: return pn_bf16_to_f32(((const uint16_t *)p)[i]);
	case PN_INT8: return ((const int8_t *)p)[i];
	case PN_UINT8: return ((const uint8_t *)p)[i];
	case PN_BOOL: return ((const uint8_t *)p)[i] != 0;
	case PN_INT16: return ((const int16_t *)p)[i];
	case PN_UINT16: return ((const uint16_t *)p)[i];
	case PN_INT32: return ((const int32_t *)p)[i];
	case PN_UINT32: return ((const uint32_t *)p)[i];
	case PN_INT64: return (double)((const int64_t *)p)[i];
	case PN_UINT64: return (double)((const uint64_t *)p)[i];
	default: return NAN;
	}
}

int64_t pn_tensor_get_i64(const pn_tensor *t, int64_t i)
{
	const void *p = t->data;
	switch (t->dtype) {
	case PN_INT64: return ((const int64_t *)p)[i];
	case PN_INT32: return ((const int32_t *)p)[i];
	case PN_UINT64: return (int64_t)((const uint64_t *)p)[i];
	case PN_INT8: return ((const int8_t *)p)[i];
	case PN_UINT8: return ((const uint8_t *)p)[i];
	case PN_BOOL: return ((const uint8_t *)p)[i] != 0;
	case PN_INT16: return ((const int16_t *)p)[i];
	case PN_UINT16: return ((const uint16_t *)p)[i];
	case PN_UINT32: return ((const uint32_t *)p)[i];
	default: {
		double v = pn_tensor_get_f64(t, i);
		return isfinite(v) ? (int64_t)v : 0;
	}
	}
}

void pn_tensor_set_f64(pn_tensor *t, int64_t i, double v)
{
	void *p = t->data;
	switch (t->dtype) {
	case PN_FLOAT: ((float *)p)[i] = (float)v; break;
	case PN_DOUBLE: ((double *)p)[i] = v; break;
	case PN_FLOAT16: ((uint16_t *)p)[i] = pn_f32_to_f16((float)v); break;
	case PN_BFLOAT16: ((uint16_t *)p)[i] = pn_f32_to_bf16((float)v); break;
	case PN_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
	case PN_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
	case PN_BOOL: ((uint8_t *)p)[i] = v != 0; break;
	case PN_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
	case PN_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
	case PN_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
	case PN_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
	case PN_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
	case PN_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; break;
	default: break;
	}
}

char *pn_tensor_desc(const pn_tensor *t, char *buf, size_t n)
{
	size_t off = (size_t)snprintf(buf, n, "%s[", pn_dtype_name(t->dtype));
	for (int i = 0; i < t->rank && off < n; i++)
		off += (size_t)snprintf(buf + off, n - off, i ? ",%lld" : "%lld",
					(long long)t->dims[i]);
	if (off < n)
		snprintf(buf + off, n - off, "]");
	return buf;
}
