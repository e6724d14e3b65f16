/*
 * index.c - ops that pick or place elements by index: Gather,
 * GatherElements, GatherND, Scatter (the deprecated alias of
 * ScatterElements), ScatterElements, ScatterND, OneHot, Compress, NonZero
 * (Unique: unique.c, Col2Im: col2im.c).
 *
 * Kernels move elements by byte size so one kernel serves every dtype; only
 * scatter reductions look at values, through one typed loop per dtype.
 * Index tensors are read once into int64 (negative values normalised and
 * range-checked up front), so the inner loops are plain copies.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/ops/layout.h"

/* Normalised copy of an index tensor against an axis of extent n: negative
 * indices count from the end, anything out of [-n, n) fails.  Caller frees. */
static int64_t *load_indices(pn_kctx *k, const pn_tensor *t, int64_t n)
{
	int64_t *tmp;
	const int64_t *src = pn_lay_indices(t, &tmp);
	if (!src)
		return pn_kfail(k, "indices must be int32 or int64"), NULL;
	int64_t *v = tmp ? tmp : malloc(sizeof(int64_t) * (size_t)(t->numel ? t->numel : 1));
	if (!v)
		return pn_kfail(k, "out of memory"), NULL;
	for (int64_t i = 0; i < t->numel; i++) {
		int64_t x = src[i];
		if (x < -n || x >= n) {
			free(v);
			return pn_kfail(k, "index %lld out of range [-%lld, %lld)", (long long)x,
					(long long)n, (long long)n), NULL;
		}
		v[i] = x < 0 ? x + n : x;
	}
	return v;
}

/* Copies one element of es bytes; the switch is on a loop-invariant value,
 * so the compiler unswitches it out of the callers' loops. */
static inline void copy_elem(char *d, const char *s, size_t es)
{
	switch (es) {
	case 1: *d = *s; break;
	case 2: memcpy(d, s, 2); break;
	case 4: memcpy(d, s, 4); break;
	case 8: memcpy(d, s, 8); break;
	default: memcpy(d, s, es); break;
	}
}

/* --- Gather --------------------------------------------------------------------- */

int pn_infer_Gather(pn_ictx *c)
{
	const pn_type *x = pn_lay_itype(c, 0), *ix = pn_lay_itype(c, 1);
	int dtype = x ? x->dtype : PN_UNDEFINED;
	if (!x || !ix || x->rank < 0 || ix->rank < 0) {
		pn_iset(c, 0, dtype, -1, NULL);
		return 0;
	}
	int axis = pn_axis(pn_attr_int(c->node, "axis", 0), x->rank);
	int r = x->rank - 1 + ix->rank;
	if (axis < 0 || r > PN_MAX_RANK)
		return pn_ifail(c, "axis out of range or output rank %d too large", r);
	int64_t out[PN_MAX_RANK];
	int n = 0;
	for (int d = 0; d < axis; d++)
		out[n++] = x->dims[d];
	for (int d = 0; d < ix->rank; d++)
		out[n++] = ix->dims[d];
	for (int d = axis + 1; d < x->rank; d++)
		out[n++] = x->dims[d];
	pn_iset(c, 0, dtype, r, out);
	return 0;
}

int pn_kernel_Gather(pn_kctx *k)
{
	const pn_tensor *x = k->in[0], *it = k->in[1];
	pn_tensor *o = pn_lay_out(k, 0);
	if (!o)
		return -1;
	int axis = pn_axis(pn_attr_int(k->node, "axis", 0), x->rank);
	if (axis < 0)
		return pn_kfail(k, "axis out of range");
	int64_t A = x->dims[axis], outer = pn_numel(axis, x->dims);
	int64_t inner = pn_numel(x->rank - axis - 1, x->dims + axis + 1), ni = it->numel;
	int64_t *idx = load_indices(k, it, A);
	if (!idx)
		return -1;
	size_t es = pn_dtype_size(x->dtype), run = (size_t)inner * es;
	const char *s = x->data;
	char *d = o->data;
	if (inner == 1) {
		#pragma omp parallel for if (o->numel > PN_PAR_MIN_WORK)
		for (int64_t t = 0; t < outer * ni; t++)
			copy_elem(d + t * (int64_t)es, s + ((t / ni) * A + idx[t % ni]) * (int64_t)es, es);
	} else {
		#pragma omp parallel for if (o->numel > PN_PAR_MIN_WORK)
		for (int64_t t = 0; t < outer * ni; t++)
			memcpy(d + (size_t)t * run, s + (size_t)((t / ni) * A + idx[t % ni]) * run, run);
	}
	free(idx);
	return pn_lay_own_strings(k, o);
}

/* --- GatherElements ------------------------------------------------------------------- */

int pn_infer_GatherElements(pn_ictx *c)
{
	const pn_type *x = pn_lay_itype(c, 0);
	pn_iset_like(c, 0, 1, x ? x->dtype : PN_UNDEFINED);
	if (!x)
		c->out[0].type.dtype = PN_UNDEFINED;
	return 0;
}

/* Element offsets into data (rank r, strides dst) for positions of a tensor
 * of shape idims whose index along axis comes from idx[]: the shared walk of
 * GatherElements and ScatterElements. */
static int elements_offsets(pn_kctx *k, const pn_tensor *data, const pn_tensor *it, int axis,
			    int64_t **out)
{
	int r = data->rank;
	if (it->rank != r)
		return pn_kfail(k, "indices rank %d differs from data rank %d", it->rank, r);
	for (int d = 0; d < r; d++)
		if (d != axis && it->dims[d] > data->dims[d])
			return pn_kfail(k, "indices dim %d exceeds the data's", d);
	int64_t *off = load_indices(k, it, data->dims[axis]);
	if (!off)
		return -1;
	int64_t st[PN_MAX_RANK];
	pn_lay_strides(r, data->dims, st);
	int64_t L = r ? it->dims[r - 1] : 1, rows = L ? it->numel / L : 0;
	#pragma omp parallel for if (it->numel > PN_PAR_MIN_WORK)
	for (int64_t row = 0; row < rows; row++) {
		int64_t base = 0, rest = row;
		for (int d = r - 2; d >= 0; d--) {
			int64_t i = rest % it->dims[d];
			rest /= it->dims[d];
			base += (d == axis ? 0 : i) * st[d];
		}
		int64_t *o = off + row * L;
		if (axis == r - 1)
			for (int64_t j = 0; j < L; j++)
				o[j] = base + o[j];
		else
			for (int64_t j = 0; j < L; j++)
				o[j] = base + j + o[j] * st[axis];
	}
	*out = off;
	return 0;
}

int pn_kernel_GatherElements(pn_kctx *k)
{
	const pn_tensor *x = k->in[0], *it = k->in[1];
	pn_tensor *o = pn_lay_out(k, 0);
	int64_t *off;
	if (!o)
		return -1;
	int axis = pn_axis(pn_attr_int(k->node, "axis", 0), x->rank);
	if (axis < 0)
		return pn_kfail(k, "axis out of range");
	if (elements_offsets(k, x, it, axis, &off))
		return -1;
	size_t es = pn_dtype_size(x->dtype);
	const char *s = x->data;
	char *d = o->data;
	#pragma omp parallel for if (o->numel > PN_PAR_MIN_WORK)
	for (int64_t i = 0; i < o->numel; i++)
		copy_elem(d + i * (int64_t)es, s + off[i] * (int64_t)es, es);
	free(off);
	return pn_lay_own_strings(k, o);
}

/* --- GatherND ------------------------------------------------------------------- */

int pn_infer_GatherND(pn_ictx *c)
{
	const pn_type *x = pn_lay_itype(c, 0), *ix = pn_lay_itype(c, 1);
	int dtype = x ? x->dtype : PN_UNDEFINED;
	int64_t b = pn_attr_int(c->node, "batch_dims", 0), out[PN_MAX_RANK];
	if (!x || !ix || x->rank < 0 || ix->rank < 1 || ix->dims[ix->rank - 1] < 0) {
		pn_iset(c, 0, dtype, -1, NULL);
		return 0;
	}
	int64_t kk = ix->dims[ix->rank - 1];
	if (b < 0 || b >= x->rank || b >= ix->rank || kk < 1 || kk > x->rank - b)
		return pn_ifail(c, "bad batch_dims %lld or index depth %lld", (long long)b,
				(long long)kk);
	int r = 0;
	for (int d = 0; d < ix->rank - 1; d++)
		out[r++] = ix->dims[d];
	for (int d = (int)(b + kk); d < x->rank; d++) {
		if (r >= PN_MAX_RANK)
			return pn_ifail(c, "output rank too large");
		out[r++] = x->dims[d];
	}
	pn_iset(c, 0, dtype, r, out);
	return 0;
}

/* Offsets (in slices of the trailing data dims) of every index tuple of a
 * GatherND / ScatterND: the tuple count is returned in *n, slice elements in
 * *slice.  b batch dims lead both tensors. */
static int64_t *nd_offsets(pn_kctx *k, const pn_tensor *x, const pn_tensor *it, int b, int64_t *n,
			   int64_t *slice)
{
	if (it->rank < 1)
		return pn_kfail(k, "indices must have rank >= 1"), NULL;
	int64_t kk = it->dims[it->rank - 1];
	if (b < 0 || b >= x->rank || b >= it->rank || kk < 1 || kk > x->rank - b)
		return pn_kfail(k, "bad batch_dims %d or index depth %lld", b, (long long)kk), NULL;
	for (int d = 0; d < b; d++)
		if (it->dims[d] != x->dims[d])
			return pn_kfail(k, "batch dim %d differs", d), NULL;
	int64_t *tmp;
	const int64_t *iv = pn_lay_indices(it, &tmp);
	if (!iv)
		return pn_kfail(k, "indices must be int32 or int64"), NULL;
	*n = it->numel / kk;
	*slice = pn_numel(x->rank - b - (int)kk, x->dims + b + kk);
	int64_t per_batch = *n / (b ? pn_numel(b, x->dims) : 1);
	int64_t batch_slices = pn_numel((int)kk, x->dims + b);
	int64_t *off = malloc(sizeof(int64_t) * (size_t)(*n ? *n : 1));
	if (!off) {
		free(tmp);
		return pn_kfail(k, "out of memory"), NULL;
	}
	for (int64_t t = 0; t < *n; t++) {
		int64_t o = 0;
		for (int64_t j = 0; j < kk; j++) {
			int64_t dim = x->dims[b + j], v = iv[t * kk + j];
			if (v < -dim || v >= dim) {
				free(tmp);
				free(off);
				return pn_kfail(k, "index %lld out of range for dim %lld", (long long)v,
						(long long)dim), NULL;
			}
			o = o * dim + (v < 0 ? v + dim : v);
		}
		off[t] = (per_batch ? t / per_batch : 0) * batch_slices + o;
	}
	free(tmp);
	return off;
}

int pn_kernel_GatherND(pn_kctx *k)
{
	const pn_tensor *x = k->in[0], *it = k->in[1];
	pn_tensor *o = pn_lay_out(k, 0);
	int64_t n, slice;
	if (!o)
		return -1;
	int64_t *off = nd_offsets(k, x, it, (int)pn_attr_int(k->node, "batch_dims", 0), &n, &slice);
	if (!off)
		return -1;
	size_t run = (size_t)slice * pn_dtype_size(x->dtype);
	#pragma omp parallel for if (o->numel > PN_PAR_MIN_WORK)
	for (int64_t t = 0; t < n; t++)
		memcpy((char *)o->data + (size_t)t * run, (const char *)x->data + (size_t)off[t] * run, run);
	free(off);
	return pn_lay_own_strings(k, o);
}

/* --- ScatterElements, ScatterND --------------------------------------------------------- */

enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

static int reduction(pn_kctx *k, int *red)
{
	const char *s = pn_attr_str(k->node, "reduction", "none");
	static const char *const names[] = {"none", "add", "mul", "max", "min"};
	for (int i = 0; i < 5; i++)
		if (!strcmp(s, names[i])) {
			*red = i;
			return 0;
		}
	return pn_kfail(k, "unknown reduction '%s'", s);
}

/* dst[off[i] + j] (op)= src[i*m + j] for i < n, j < m, in order (so the
 * result is deterministic with repeated indices). */
#define PN_APPLY_LOOP(T, EXPR)                                     \
	for (int64_t i = 0; i < n; i++)                            \
		for (int64_t j = 0; j < m; j++) {                  \
			T *p = d + off[i] + j, a = *p, b = s[i * m + j]; \
			(void)a;                                   \
			*p = (T)(EXPR);                            \
		}

#define PN_APPLY(T)                                                                           \
	static void apply_##T(T *d, const T *s, const int64_t *off, int64_t n, int64_t m, int red) \
	{                                                                                     \
		switch (red) {                                                                \
		case RED_ADD: PN_APPLY_LOOP(T, a + b) break;                                  \
		case RED_MUL: PN_APPLY_LOOP(T, a * b) break;                                  \
		case RED_MAX: PN_APPLY_LOOP(T, a > b ? a : b) break;                          \
		case RED_MIN: PN_APPLY_LOOP(T, a < b ? a : b) break;                          \
		default: break;                                                               \
		}                                                                             \
	}

PN_APPLY(float)
PN_APPLY(double)
PN_APPLY(int8_t)
PN_APPLY(uint8_t)
PN_APPLY(int16_t)
PN_APPLY(uint16_t)
PN_APPLY(int32_t)
PN_APPLY(uint32_t)
PN_APPLY(int64_t)
PN_APPLY(uint64_t)

/* float16 / bfloat16 reductions go through float. */
static void apply_half(uint16_t *d, const uint16_t *s, const int64_t *off, int64_t n, int64_t m,
		       int red, int bf)
{
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < m; j++) {
			uint16_t *p = d + off[i] + j;
			float a = bf ? pn_bf16_to_f32(*p) : pn_f16_to_f32(*p);
			float b = bf ? pn_bf16_to_f32(s[i * m + j]) : pn_f16_to_f32(s[i * m + j]);
			float r = red == RED_ADD ? a + b : red == RED_MUL ? a * b
				: red == RED_MAX ? (a > b ? a : b) : (a < b ? a : b);
			*p = bf ? pn_f32_to_bf16(r) : pn_f32_to_f16(r);
		}
}

/* Reductions on bool: add/max = or, mul/min = and. */
static void apply_bool(uint8_t *d, const uint8_t *s, const int64_t *off, int64_t n, int64_t m, int red)
{
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < m; j++) {
			uint8_t *p = d + off[i] + j, b = s[i * m + j] != 0;
			*p = red == RED_ADD || red == RED_MAX ? (*p || b) : (*p && b);
		}
}

static int apply(pn_kctx *k, pn_tensor *o, const pn_tensor *u, const int64_t *off, int64_t n,
		 int64_t m, int red)
{
	void *d = o->data;
	const void *s = u->data;
	if (red == RED_NONE) {
		size_t es = pn_dtype_size(o->dtype);
		for (int64_t i = 0; i < n; i++)
			memcpy((char *)d + off[i] * (int64_t)es, (const char *)s + i * m * (int64_t)es,
			       (size_t)m * es);
		return 0;
	}
	switch (o->dtype) {
	case PN_FLOAT: apply_float(d, s, off, n, m, red); return 0;
	case PN_DOUBLE: apply_double(d, s, off, n, m, red); return 0;
	case PN_INT8: apply_int8_t(d, s, off, n, m, red); return 0;
	case PN_UINT8: apply_uint8_t(d, s, off, n, m, red); return 0;
	case PN_INT16: apply_int16_t(d, s, off, n, m, red); return 0;
	case PN_UINT16: apply_uint16_t(d, s, off, n, m, red); return 0;
	case PN_INT32: apply_int32_t(d, s, off, n, m, red); return 0;
	case PN_UINT32: apply_uint32_t(d, s, off, n, m, red); return 0;
	case PN_INT64: apply_int64_t(d, s, off, n, m, red); return 0;
	case PN_UINT64: apply_uint64_t(d, s, off, n, m, red); return 0;
	case PN_FLOAT16: apply_half(d, s, off, n, m, red, 0); return 0;
	case PN_BFLOAT16: apply_half(d, s, off, n, m, red, 1); return 0;
	case PN_BOOL: apply_bool(d, s, off, n, m, red); return 0;
	default: return pn_kfail(k, "reduction not supported for %s", pn_dtype_name(o->dtype));
	}
}

/* Scatter's three inputs: data, indices, updates.  The node may list fewer
 * (a damaged file; fuzzing found in[2] read past the input array), or
 * leave one empty. */
static int scatter_inputs(pn_kctx *k)
{
	if (k->n_in < 3 || !k->in[0] || !k->in[1] || !k->in[2])
		return pn_kfail(k, "%s needs data, indices and updates", k->node->op_type);
	return 0;
}

static int scatter_elements(pn_kctx *k)
{
	if (scatter_inputs(k))
		return -1;
	const pn_tensor *x = k->in[0], *it = k->in[1], *u = k->in[2];
	pn_tensor *o = pn_lay_out(k, 0);
	int64_t *off;
	int red = RED_NONE;
	if (!o)
		return -1;
	if (k->opset >= 16 && reduction(k, &red))
		return -1;
	int axis = pn_axis(pn_attr_int(k->node, "axis", 0), x->rank);
	if (axis < 0)
		return pn_kfail(k, "axis out of range");
	if (u->dtype != x->dtype || u->rank != it->rank)
		return pn_kfail(k, "updates must match data's dtype and indices' shape");
	for (int d = 0; d < u->rank; d++)
		if (u->dims[d] != it->dims[d])
			return pn_kfail(k, "updates shape differs from indices shape");
	if (elements_offsets(k, x, it, axis, &off))
		return -1;
	memcpy(o->data, x->data, pn_tensor_nbytes(x));
	int rc = apply(k, o, u, off, it->numel, 1, red);
	free(off);
	return rc ? rc : pn_lay_own_strings(k, o);
}

int pn_kernel_Scatter(pn_kctx *k)
{
	return scatter_elements(k);
}

int pn_kernel_ScatterElements(pn_kctx *k)
{
	return scatter_elements(k);
}

int pn_kernel_ScatterND(pn_kctx *k)
{
	if (scatter_inputs(k))
		return -1;
	const pn_tensor *x = k->in[0], *it = k->in[1], *u = k->in[2];
	pn_tensor *o = pn_lay_out(k, 0);
	int64_t n, slice;
	int red = RED_NONE;
	if (!o)
		return -1;
	if (k->opset >= 16 && reduction(k, &red))
		return -1;
	int64_t *off = nd_offsets(k, x, it, 0, &n, &slice);
	if (!off)
		return -1;
	if (u->dtype != x->dtype || u->numel != n * slice) {
		free(off);
		return pn_kfail(k, "updates must have %lld elements of data's dtype",
				(long long)(n * slice));
	}
	for (int64_t t = 0; t < n; t++)
		off[t] *= slice;
	memcpy(o->data, x->data, pn_tensor_nbytes(x));
	int rc = apply(k, o, u, off, n, slice, red);
	free(off);
	return rc ? rc : pn_lay_own_strings(k, o);
}

/* --- OneHot --------------------------------------------------------------------- */

/* A numeric scalar (or 1-element tensor) as int64, truncating floats. */
static int scalar_i64(const pn_tensor *t, int64_t *v)
{
	if (!t || t->numel != 1 || t->dtype == PN_STRING)
		return -1;
	*v = pn_dtype_is_int(t->dtype) ? pn_tensor_get_i64(t, 0) : (int64_t)pn_tensor_get_f64(t, 0);
	return 0;
}

int pn_infer_OneHot(pn_ictx *c)
{
	const pn_type *ix = pn_lay_itype(c, 0), *vals = pn_lay_itype(c, 2);
	const pn_tinfo *dt = pn_iin(c, 1);
	int dtype = vals ? vals->dtype : PN_UNDEFINED;
	int64_t depth = -1, out[PN_MAX_RANK];
	if (!ix || ix->rank < 0) {
		pn_iset(c, 0, dtype, -1, NULL);
		return 0;
	}
	int r = ix->rank + 1;
	if (r > PN_MAX_RANK)
		return pn_ifail(c, "output rank too large");
	int axis = pn_axis(pn_attr_int(c->node, "axis", -1), r);
	if (axis < 0)
		return pn_ifail(c, "axis out of range");
	if (dt && dt->value && scalar_i64(dt->value, &depth))
		return pn_ifail(c, "depth must be a numeric scalar");
	if (dt && dt->value && depth < 1)
		return pn_ifail(c, "depth %lld must be positive", (long long)depth);
	for (int d = 0, j = 0; d < r; d++)
		out[d] = d == axis ? depth : ix->dims[j++];
	pn_iset(c, 0, dtype, r, out);
	return 0;
}

/* Indices of any numeric dtype as int64 (floats truncated). */
static int64_t *numeric_as_i64(const pn_tensor *t)
{
	int64_t *v = malloc(sizeof(int64_t) * (size_t)(t->numel ? t->numel : 1));
	if (!v)
		return NULL;
	switch (t->dtype) {
	case PN_INT64: memcpy(v, t->data, sizeof(int64_t) * (size_t)t->numel); break;
	case PN_INT32:
		for (int64_t i = 0; i < t->numel; i++)
			v[i] = ((const int32_t *)t->data)[i];
		break;
	case PN_FLOAT:
		for (int64_t i = 0; i < t->numel; i++)
			v[i] = (int64_t)((const float *)t->data)[i];
		break;
	case PN_DOUBLE:
		for (int64_t i = 0; i < t->numel; i++)
			v[i] = (int64_t)((const double *)t->data)[i];
		break;
	default:
		for (int64_t i = 0; i < t->numel; i++)
			v[i] = pn_dtype_is_int(t->dtype) ? pn_tensor_get_i64(t, i)
							 : (int64_t)pn_tensor_get_f64(t, i);
	}
	return v;
}

int pn_kernel_OneHot(pn_kctx *k)
{
	const pn_tensor *it = k->in[0], *vals = k->in[2];
	pn_tensor *o = pn_lay_out(k, 0);
	int64_t depth;
	if (!o)
		return -1;
	if (scalar_i64(k->in[1], &depth) || depth < 1)
		return pn_kfail(k, "depth must be a positive numeric scalar");
	if (vals->numel != 2 || vals->dtype != o->dtype)
		return pn_kfail(k, "values must hold [off, on]");
	int axis = pn_axis(pn_attr_int(k->node, "axis", -1), it->rank + 1);
	if (axis < 0)
		return pn_kfail(k, "axis out of range");
	size_t es = pn_dtype_size(o->dtype);
	const char *off_v = vals->data, *on_v = off_v + es;
	int64_t *iv = numeric_as_i64(it);
	if (!iv)
		return pn_kfail(k, "out of memory");
	/* output as [outer][depth][inner], indices as [outer][inner] */
	int64_t inner = pn_numel(it->rank - axis, it->dims + axis), outer = inner ? it->numel / inner : 0;
	pn_lay_fill(o->data, off_v, es, o->numel);
	/* negative indices count from the end since opset 11; out of range
	 * leaves the row all off */
	int neg_ok = k->opset >= 11;
	for (int64_t t = 0; t < outer * inner; t++) {
		int64_t v = iv[t];
		if (v < 0 && neg_ok)
			v += depth;
		if (v < 0 || v >= depth)
			continue;
		int64_t pos = ((t / inner) * depth + v) * inner + t % inner;
		copy_elem((char *)o->data + pos * (int64_t)es, on_v, es);
	}
	free(iv);
	return pn_lay_own_strings(k, o);
}

/* --- Compress ------------------------------------------------------------------- */

/* Number of true entries of the condition that fall inside an extent. */
static int64_t count_true(const pn_tensor *cond, int64_t extent)
{
	const uint8_t *p = cond->data;
	int64_t n = cond->numel < extent ? cond->numel : extent, c = 0;
	for (int64_t i = 0; i < n; i++)
		c += p[i] != 0;
	return c;
}

int pn_infer_Compress(pn_ictx *c)
{
	const pn_type *x = pn_lay_itype(c, 0);
	const pn_tinfo *cond = pn_iin(c, 1);
	int dtype = x ? x->dtype : PN_UNDEFINED;
	const pn_attr *ax = pn_attr_find(c->node, "axis");
	int known = cond && cond->value && cond->value->dtype == PN_BOOL;
	if (!ax) {
		int64_t n = pn_lay_type_numel(x);
		pn_iset(c, 0, dtype, 1, (int64_t[]){known && n >= 0 ? count_true(cond->value, n) : -1});
		return 0;
	}
	if (!x || x->rank < 0) {
		pn_iset(c, 0, dtype, -1, NULL);
		return 0;
	}
	int axis = pn_axis(ax->i, x->rank);
	if (axis < 0)
		return pn_ifail(c, "axis out of range");
	int64_t out[PN_MAX_RANK];
	memcpy(out, x->dims, sizeof(out));
	out[axis] = known && x->dims[axis] >= 0 ? count_true(cond->value, x->dims[axis]) : -1;
	pn_iset(c, 0, dtype, x->rank, out);
	return 0;
}

int pn_kernel_Compress(pn_kctx *k)
{
	const pn_tensor *x = k->in[0], *cond = k->in[1];
	if (cond->dtype != PN_BOOL || cond->rank != 1)
		return pn_kfail(k, "condition must be a 1-d bool tensor");
	const pn_attr *ax = pn_attr_find(k->node, "axis");
	int axis = ax ? pn_axis(ax->i, x->rank) : 0;
	if (axis < 0)
		return pn_kfail(k, "axis out of range");
	int64_t A = ax ? x->dims[axis] : x->numel;
	int64_t outer = ax ? pn_numel(axis, x->dims) : 1;
	int64_t inner = ax ? pn_numel(x->rank - axis - 1, x->dims + axis + 1) : 1;
	int64_t n = count_true(cond, A), dims[PN_MAX_RANK];
	pn_tensor *o;
	if (ax) {
		memcpy(dims, x->dims, sizeof(dims));
		dims[axis] = n;
		o = pn_out_alloc(k, 0, x->dtype, x->rank, dims);
	} else {
		o = pn_out_alloc(k, 0, x->dtype, 1, &n);
	}
	if (!o)
		return -1;
	size_t run = (size_t)inner * pn_dtype_size(x->dtype);
	const uint8_t *cv = cond->data;
	char *d = o->data;
	for (int64_t i = 0; i < outer; i++)
		for (int64_t j = 0; j < A && j < cond->numel; j++)
			if (cv[j]) {
				memcpy(d, (const char *)x->data + (size_t)(i * A + j) * run, run);
				d += run;
			}
	return pn_lay_own_strings(k, o);
}

/* --- NonZero -------------------------------------------------------------------- */

/* Marks nonzero elements in nz[] (1 byte each) and returns their count.
 * Floats compare by value (-0 is zero, NaN is not), strings by emptiness. */
static int64_t nonzero_mask(const pn_tensor *x, uint8_t *nz)
{
	int64_t n = x->numel, c = 0;
	const void *p = x->data;
	switch (x->dtype) {
	case PN_FLOAT:
		for (int64_t i = 0; i < n; i++)
			nz[i] = ((const float *)p)[i] != 0;
		break;
	case PN_DOUBLE:
		for (int64_t i = 0; i < n; i++)
			nz[i] = ((const double *)p)[i] != 0;
		break;
	case PN_FLOAT16:
	case PN_BFLOAT16:
		for (int64_t i = 0; i < n; i++)
			nz[i] = (((const uint16_t *)p)[i] & 0x7fff) != 0;
		break;
	case PN_STRING:
		for (int64_t i = 0; i < n; i++) {
			const char *s = ((char *const *)p)[i];
			nz[i] = s && *s;
		}
		break;
	case PN_COMPLEX64:
		for (int64_t i = 0; i < n; i++)
			nz[i] = ((const float *)p)[2 * i] != 0 || ((const float *)p)[2 * i + 1] != 0;
		break;
	case PN_COMPLEX128:
		for (int64_t i = 0; i < n; i++)
			nz[i] = ((const double *)p)[2 * i] != 0 || ((const double *)p)[2 * i + 1] != 0;
		break;
	default: {               /* integers and bool: any set byte */
		size_t es = pn_dtype_size(x->dtype);
		const uint8_t *b = p;
		for (int64_t i = 0; i < n; i++) {
			uint8_t any = 0;
			for (size_t j = 0; j < es; j++)
				any |= b[(size_t)i * es + j];
			nz[i] = any != 0;
		}
	}
	}
	for (int64_t i = 0; i < n; i++)
		c += nz[i];
	return c;
}

int pn_infer_NonZero(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0);
	int64_t dims[2] = {x && x->type.rank >= 0 ? x->type.rank : -1, -1};
	const pn_tensor *v = x ? x->value : NULL;
	/* small known inputs get their exact count (so folding can use it);
	 * at execution the kernel counts anyway */
	if (v && v->data && v->numel <= PN_FOLD_MAX_NUMEL) {
		uint8_t *nz = malloc((size_t)(v->numel ? v->numel : 1));
		if (nz)
			dims[1] = nonzero_mask(v, nz);
		free(nz);
	}
	pn_iset(c, 0, PN_INT64, 2, dims);
	return 0;
}

int pn_kernel_NonZero(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	uint8_t *nz = malloc((size_t)(x->numel ? x->numel : 1));
	if (!nz)
		return pn_kfail(k, "out of memory");
	int64_t n = nonzero_mask(x, nz), st[PN_MAX_RANK];
	pn_tensor *o = pn_out_alloc(k, 0, PN_INT64, 2, (int64_t[]){x->rank, n});
	if (!o) {
		free(nz);
		return -1;
	}
	pn_lay_strides(x->rank, x->dims, st);
	int64_t *out = o->data, j = 0;
	for (int64_t i = 0; i < x->numel; i++) {
		if (!nz[i])
			continue;
		int64_t rest = i;
		for (int d = 0; d < x->rank; d++) {
			out[d * n + j] = rest / st[d];
			rest %= st[d];
		}
		j++;
	}
	free(nz);
	return 0;
}
