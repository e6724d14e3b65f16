/*
 * mathutil.c - compute-type views, dtype conversion and strided gathers for
 * the math kernels (see mathutil.h).
 */
#include "runtime/ops/mathutil.h"

#include <stdlib.h>
#include <string.h>

int pn_mu_ctype(int dtype)
{
	switch (dtype) {
	case PN_FLOAT:
	case PN_FLOAT16:
	case PN_BFLOAT16:
		return PN_FLOAT;
	case PN_DOUBLE:
		return PN_DOUBLE;
	case PN_INT8:
	case PN_UINT8:
	case PN_INT16:
	case PN_UINT16:
	case PN_INT32:
	case PN_UINT32:
	case PN_INT64:
	case PN_UINT64:
	case PN_BOOL:
		return PN_INT64;
	default:
		return 0;
	}
}

/* --- conversion ------------------------------------------------------------------ */

/* Every integer storage type, for the typed loops below. */
#define PN_MU_INTS(X)                                                                      \
	X(PN_INT8, int8_t) X(PN_UINT8, uint8_t) X(PN_INT16, int16_t) X(PN_UINT16, uint16_t) \
	X(PN_INT32, int32_t) X(PN_UINT32, uint32_t) X(PN_INT64, int64_t) X(PN_UINT64, uint64_t)

static void to_i64(int dt, const void *src, int64_t *dst, int64_t n)
{
	switch (dt) {
#define X(code, T)                                      \
	case code:                                      \
		for (int64_t i = 0; i < n; i++)         \
			dst[i] = (int64_t)((const T *)src)[i]; \
		return;
		PN_MU_INTS(X)
#undef X
	case PN_BOOL:
		for (int64_t i = 0; i < n; i++)
			dst[i] = ((const uint8_t *)src)[i] != 0;
		return;
	}
}

static void from_i64(const int64_t *src, int dt, void *dst, int64_t n)
{
	switch (dt) {
#define X(code, T)                                   \
	case code:                                   \
		for (int64_t i = 0; i < n; i++)      \
			((T *)dst)[i] = (T)src[i];   \
		return;
		PN_MU_INTS(X)
#undef X
	case PN_BOOL:
		for (int64_t i = 0; i < n; i++)
			((uint8_t *)dst)[i] = src[i] != 0;
		return;
	}
}

static void to_f64(int dt, const void *src, double *dst, int64_t n)
{
	switch (dt) {
#define X(code, T)                                      \
	case code:                                      \
		for (int64_t i = 0; i < n; i++)         \
			dst[i] = (double)((const T *)src)[i]; \
		return;
		PN_MU_INTS(X)
		X(PN_FLOAT, float)
		X(PN_DOUBLE, double)
#undef X
	case PN_BOOL:
		for (int64_t i = 0; i < n; i++)
			dst[i] = ((const uint8_t *)src)[i] != 0;
		return;
	case PN_FLOAT16:
		for (int64_t i = 0; i < n; i++)
			dst[i] = pn_f16_to_f32(((const uint16_t *)src)[i]);
		return;
	case PN_BFLOAT16:
		for (int64_t i = 0; i < n; i++)
			dst[i] = pn_bf16_to_f32(((const uint16_t *)src)[i]);
		return;
	}
}

static void from_f64(const double *src, int dt, void *dst, int64_t n)
{
	switch (dt) {
#define X(code, T)                                   \
	case code:                                   \
		for (int64_t i = 0; i < n; i++)      \
			((T *)dst)[i] = (T)src[i];   \
		return;
		PN_MU_INTS(X)
		X(PN_FLOAT, float)
		X(PN_DOUBLE, double)
#undef X
	case PN_BOOL:
		for (int64_t i = 0; i < n; i++)
			((uint8_t *)dst)[i] = src[i] != 0;
		return;
	case PN_FLOAT16:
		for (int64_t i = 0; i < n; i++)
			((uint16_t *)dst)[i] = pn_f32_to_f16((float)src[i]);
		return;
	case PN_BFLOAT16:
		for (int64_t i = 0; i < n; i++)
			((uint16_t *)dst)[i] = pn_f32_to_bf16((float)src[i]);
		return;
	}
}

static int is_intlike(int dt)
{
	return pn_dtype_is_int(dt) || dt == PN_BOOL;
}

void pn_mu_convert(int sdt, const void *src, int ddt, void *dst, int64_t n)
{
	if (sdt == ddt) {
		memcpy(dst, src, (size_t)n * pn_dtype_size(sdt));
		return;
	}
	/* The frequent pairs go straight; the rest through a small hub buffer
	 * (int64 between integers, double otherwise) so no loop switches on
	 * dtype per element. */
	if (sdt == PN_FLOAT && ddt == PN_FLOAT16) {
		pn_f32_to_f16_n(src, dst, n);
		return;
	}
	if (sdt == PN_FLOAT && ddt == PN_BFLOAT16) {
		for (int64_t i = 0; i < n; i++)
			((uint16_t *)dst)[i] = pn_f32_to_bf16(((const float *)src)[i]);
		return;
	}
	if (sdt == PN_FLOAT16 && ddt == PN_FLOAT) {
		pn_f16_to_f32_n(src, dst, n);
		return;
	}
	if (sdt == PN_BFLOAT16 && ddt == PN_FLOAT) {
		for (int64_t i = 0; i < n; i++)
			((float *)dst)[i] = pn_bf16_to_f32(((const uint16_t *)src)[i]);
		return;
	}
	/* quantized tensors to and from int32 (QuantizeLinear, DequantizeLinear
	 * and the integer convolutions, every run): C's conversions, as
	 * through the hub */
	if (sdt == PN_INT32 && ddt == PN_UINT8) {
		for (int64_t i = 0; i < n; i++)
			((uint8_t *)dst)[i] = (uint8_t)((const int32_t *)src)[i];
		return;
	}
	if (sdt == PN_INT32 && ddt == PN_INT8) {
		for (int64_t i = 0; i < n; i++)
			((int8_t *)dst)[i] = (int8_t)((const int32_t *)src)[i];
		return;
	}
	if (sdt == PN_UINT8 && ddt == PN_INT32) {
		for (int64_t i = 0; i < n; i++)
			((int32_t *)dst)[i] = ((const uint8_t *)src)[i];
		return;
	}
	if (sdt == PN_INT8 && ddt == PN_INT32) {
		for (int64_t i = 0; i < n; i++)
			((int32_t *)dst)[i] = ((const int8_t *)src)[i];
		return;
	}
	size_t ss = pn_dtype_size(sdt), ds = pn_dtype_size(ddt);
	enum { CH = 512 };
	if (is_intlike(sdt) && is_intlike(ddt)) {
		int64_t hub[CH];
		for (int64_t i = 0; i < n; i += CH) {
			int64_t m = n - i < CH ? n - i : CH;
			to_i64(sdt, (const char *)src + i * ss, hub, m);
			from_i64(hub, ddt, (char *)dst + i * ds, m);
		}
		return;
	}
	double hub[CH];
	for (int64_t i = 0; i < n; i += CH) {
		int64_t m = n - i < CH ? n - i : CH;
		to_f64(sdt, (const char *)src + i * ss, hub, m);
		from_f64(hub, ddt, (char *)dst + i * ds, m);
	}
}

/* --- compute-type views --------------------------------------------------------------- */

int pn_mu_in(pn_kctx *k, const pn_tensor *t, int ct, pn_cbuf *b)
{
	b->heap = NULL;
	if (t->dtype == ct) {
		b->p = t->data;
		return 0;
	}
	if (!pn_mu_ctype(t->dtype))
		return pn_kfail(k, "unsupported input type %s", pn_dtype_name(t->dtype));
	b->heap = malloc((size_t)(t->numel ? t->numel : 1) * pn_dtype_size(ct));
	if (!b->heap)
		return pn_kfail(k, "out of memory");
	pn_mu_convert(t->dtype, t->data, ct, b->heap, t->numel);
	b->p = b->heap;
	return 0;
}

int pn_mu_out(pn_kctx *k, pn_tensor *t, int ct, pn_cbuf *b)
{
	b->heap = NULL;
	if (t->dtype == ct) {
		b->p = t->data;
		return 0;
	}
	b->heap = calloc((size_t)(t->numel ? t->numel : 1), pn_dtype_size(ct));
	if (!b->heap)
		return pn_kfail(k, "out of memory");
	b->p = b->heap;
	return 0;
}

void pn_mu_commit(pn_tensor *t, int ct, pn_cbuf *b)
{
	if (b->heap)
		pn_mu_convert(ct, b->heap, t->dtype, t->data, t->numel);
	pn_mu_free(b);
}

void pn_mu_free(pn_cbuf *b)
{
	free(b->heap);
	b->heap = NULL;
	b->p = NULL;
}

/* --- shapes ---------------------------------------------------------------------------- */

void pn_mu_strides(int rank, const int64_t *dims, int64_t *strides)
{
	int64_t s = 1;
	for (int d = rank - 1; d >= 0; d--) {
		strides[d] = s;
		s *= dims[d];
	}
}

void pn_mu_ori(int rank, const int64_t *dims, int axis, int64_t *O, int64_t *R, int64_t *I)
{
	*O = 1;
	*I = 1;
	for (int d = 0; d < axis; d++)
		*O *= dims[d];
	for (int d = axis + 1; d < rank; d++)
		*I *= dims[d];
	*R = axis < rank ? dims[axis] : 1;
}

int pn_mu_scalar_i64(const pn_tensor *t, int64_t *v)
{
	if (!t || t->numel != 1 || t->rank > 1 || !pn_dtype_is_int(t->dtype))
		return -1;
	*v = pn_tensor_get_i64(t, 0);
	return 0;
}

/* The innermost dim is copied with a typed loop per element size so the
 * compiler emits plain loads and stores. */
#define GATHER_ROW(T)                                        \
	do {                                                 \
		const T *s_ = (const T *)src + off;          \
		T *d_ = (T *)dst + o * inner;                \
		if (is == 1)                                 \
			memcpy(d_, s_, sizeof(T) * (size_t)inner); \
		else                                         \
			for (int64_t i = 0; i < inner; i++)  \
				d_[i] = s_[i * is];          \
	} while (0)

void pn_mu_gather(size_t esz, int rank, const int64_t *dims, const int64_t *strides,
		  const void *src, void *dst)
{
	if (rank == 0) {
		memcpy(dst, src, esz);
		return;
	}
	int64_t inner = dims[rank - 1], is = strides[rank - 1];
	int64_t outer = 1;
	for (int d = 0; d < rank - 1; d++)
		outer *= dims[d];
	if (!inner || !outer)
		return;
	#pragma omp parallel for if (outer * inner > PN_PAR_MIN_WORK) schedule(static)
	for (int64_t o = 0; o < outer; o++) {
		/* Source offset of row o from its multi-index over dims[:-1]. */
		int64_t off = 0, rem = o;
		for (int d = rank - 2; d >= 0; d--) {
			off += (rem % dims[d]) * strides[d];
			rem /= dims[d];
		}
		switch (esz) {
		case 1: GATHER_ROW(uint8_t); break;
		case 2: GATHER_ROW(uint16_t); break;
		case 4: GATHER_ROW(uint32_t); break;
		case 8: GATHER_ROW(uint64_t); break;
		default:
			for (int64_t i = 0; i < inner; i++)
				memcpy((char *)dst + (o * inner + i) * esz,
				       (const char *)src + (off + i * is) * esz, esz);
		}
	}
}
