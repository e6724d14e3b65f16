/*
 * generate.c - ops that make tensors from attributes or from shapes:
 * Constant, Shape, Size, ConstantOfShape, Range, EyeLike (the random
 * generators, window functions and MelWeightMatrix: random_window.c).
 */
#include <math.h>
#include <string.h>

#include "runtime/infer.h"
#include "runtime/kernel.h"
#include "runtime/ops/layout.h"

/* --- Constant ------------------------------------------------------------------ */

/* The attribute that holds a Constant's value, whichever form it takes. */
static const pn_attr *constant_attr(const pn_node *n)
{
	static const char *const names[] = {"value", "value_float", "value_floats", "value_int",
					    "value_ints", "value_string", "value_strings",
					    "sparse_value"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		const pn_attr *a = pn_attr_find(n, names[i]);
		if (a)
			return a;
	}
	return NULL;
}

int pn_infer_Constant(pn_ictx *c)
{
	const pn_attr *a = constant_attr(c->node);
	if (!a)
		return pn_ifail(c, "Constant has no value attribute");
	int64_t n1[1];
	switch (a->type) {
	case PN_ATTR_TENSOR:
		if (a->t)   /* else a weight kept as metadata: its value is typed */
			pn_iset(c, 0, a->t->dtype, a->t->rank, a->t->dims);
		return 0;
	case PN_ATTR_FLOAT:
		pn_iset(c, 0, PN_FLOAT, 0, NULL);
		return 0;
	case PN_ATTR_INT:
		pn_iset(c, 0, PN_INT64, 0, NULL);
		return 0;
	case PN_ATTR_STRING:
		pn_iset(c, 0, PN_STRING, 0, NULL);
		return 0;
	case PN_ATTR_FLOATS:
	case PN_ATTR_INTS:
	case PN_ATTR_STRINGS:
		n1[0] = a->n;
		pn_iset(c, 0, a->type == PN_ATTR_FLOATS ? PN_FLOAT : a->type == PN_ATTR_INTS ? PN_INT64 : PN_STRING,
			1, n1);
		return 0;
	default:
		return pn_ifail(c, "Constant attribute '%s' has unsupported type %d", a->name, a->type);
	}
}

int pn_kernel_Constant(pn_kctx *k)
{
	const pn_attr *a = constant_attr(k->node);
	pn_tensor *o = k->out[0];
	if (!a)
		return pn_kfail(k, "Constant has no value attribute");
	switch (a->type) {
	case PN_ATTR_TENSOR:
		if (!a->t)
			return pn_kfail(k, "Constant value is metadata only");
		if (a->t->dtype == PN_STRING) {
			for (int64_t i = 0; i < o->numel; i++)
				((char **)o->data)[i] = strdup(((char **)a->t->data)[i]);
		} else if (pn_tensor_nbytes(o) > 0) {
			memcpy(o->data, a->t->data, pn_tensor_nbytes(o));
		}
		return 0;
	case PN_ATTR_FLOAT:
		((float *)o->data)[0] = a->f;
		return 0;
	case PN_ATTR_INT:
		((int64_t *)o->data)[0] = a->i;
		return 0;
	case PN_ATTR_FLOATS:   /* an empty list has no array at all */
		if (a->n > 0)
			memcpy(o->data, a->floats, sizeof(float) * (size_t)a->n);
		return 0;
	case PN_ATTR_INTS:
		if (a->n > 0)
			memcpy(o->data, a->ints, sizeof(int64_t) * (size_t)a->n);
		return 0;
	case PN_ATTR_STRING:
		((char **)o->data)[0] = strdup(a->s);
		return 0;
	case PN_ATTR_STRINGS:
		for (int i = 0; i < a->n; i++)
			((char **)o->data)[i] = strdup(a->strings[i]);
		return 0;
	default:
		return pn_kfail(k, "unsupported Constant attribute");
	}
}

/* --- Shape, Size ----------------------------------------------------------------- */

/* Shape-15 slices the shape with start/end attributes (clamped like Slice). */
static void shape_range(const pn_node *n, int opset, int rank, int *lo, int *hi)
{
	*lo = 0;
	*hi = rank;
	if (opset < 15)
		return;
	int64_t s = pn_attr_int(n, "start", 0), e = pn_attr_int(n, "end", rank);
	if (s < 0)
		s += rank;
	if (e < 0)
		e += rank;
	*lo = (int)(s < 0 ? 0 : s > rank ? rank : s);
	*hi = (int)(e < 0 ? 0 : e > rank ? rank : e);
	if (*hi < *lo)
		*hi = *lo;
}

int pn_infer_Shape(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0);
	if (!x || x->type.rank < 0) {
		pn_iset(c, 0, PN_INT64, 1, (int64_t[]){-1});
		return 0;
	}
	int lo, hi;
	shape_range(c->node, c->opset, x->type.rank, &lo, &hi);
	pn_iset(c, 0, PN_INT64, 1, (int64_t[]){hi - lo});
	return 0;
}

int pn_kernel_Shape(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	int lo, hi;
	shape_range(k->node, k->opset, x->rank, &lo, &hi);
	pn_tensor *o = pn_out_alloc(k, 0, PN_INT64, 1, (int64_t[]){hi - lo});
	if (!o)
		return -1;
	for (int i = lo; i < hi; i++)
		((int64_t *)o->data)[i - lo] = x->dims[i];
	return 0;
}

int pn_infer_Size(pn_ictx *c)
{
	pn_iset(c, 0, PN_INT64, 0, NULL);
	return 0;
}

int pn_kernel_Size(pn_kctx *k)
{
	((int64_t *)k->out[0]->data)[0] = pn_numel(k->in[0]->rank, k->in[0]->dims);
	return 0;
}

/* --- ConstantOfShape ---------------------------------------------------------------- */

/* The fill value: the 'value' attribute (one element), float 0 by default. */
static const pn_tensor *cos_value(const pn_node *n)
{
	const pn_attr *a = pn_attr_find(n, "value");
	return a && a->type == PN_ATTR_TENSOR && a->t && a->t->numel == 1 ? a->t : NULL;
}

int pn_infer_ConstantOfShape(pn_ictx *c)
{
	const pn_tensor *v = cos_value(c->node);
	int dtype = v ? v->dtype : PN_FLOAT;
	int64_t dims[PN_MAX_RANK + 1];
	int n = pn_iints(c, 0, dims, PN_MAX_RANK + 1);
	if (n > PN_MAX_RANK)
		return pn_ifail(c, "shape has %d dims", n);
	if (n < 0) {
		const pn_tinfo *s = pn_iin(c, 0);
		int r = s && s->type.rank == 1 && s->type.dims[0] >= 0 && s->type.dims[0] <= PN_MAX_RANK
				? (int)s->type.dims[0] : -1;
		pn_iset(c, 0, dtype, r, NULL);
		return 0;
	}
	for (int d = 0; d < n; d++)
		if (dims[d] < 0)
			return pn_ifail(c, "negative dim %lld", (long long)dims[d]);
	pn_iset(c, 0, dtype, n, dims);
	return 0;
}

int pn_kernel_ConstantOfShape(pn_kctx *k)
{
	pn_tensor *o = pn_lay_out(k, 0);
	if (!o)
		return -1;
	const pn_tensor *v = cos_value(k->node);
	uint8_t zero[16] = {0};
	if (v && v->dtype == PN_STRING)
		return pn_kfail(k, "string values are not supported");
	pn_lay_fill(o->data, v ? v->data : zero, pn_dtype_size(o->dtype), o->numel);
	return 0;
}

/* --- Range ---------------------------------------------------------------------- */

/* Element count of a Range, from scalar tensors of one numeric dtype. */
static int range_count(const pn_tensor *s, const pn_tensor *l, const pn_tensor *d, int64_t *n)
{
	if (!s || !l || !d || s->numel != 1 || l->numel != 1 || d->numel != 1)
		return -1;
	if (pn_dtype_is_int(s->dtype)) {
		int64_t a = pn_tensor_get_i64(s, 0), b = pn_tensor_get_i64(l, 0), st = pn_tensor_get_i64(d, 0);
		if (!st)
			return -1;
		int64_t span, q;
		if (__builtin_sub_overflow(b, a, &span) || (st == -1 && span == INT64_MIN))
			return -1;
		q = span / st;
		if (q * st != span && ((span < 0) == (st < 0)))
			q++;        /* ceil of the quotient when the signs agree */
		if (q > PN_MAX_NUMEL)
			return -1;
		*n = q > 0 ? q : 0;
	} else {
		double a = pn_tensor_get_f64(s, 0), b = pn_tensor_get_f64(l, 0), st = pn_tensor_get_f64(d, 0);
		double q = ceil((b - a) / st);
		if (!st || !isfinite(q) || q > (double)PN_MAX_NUMEL)
			return -1;
		*n = q > 0 ? (int64_t)q : 0;
	}
	return 0;
}

int pn_infer_Range(pn_ictx *c)
{
	const pn_tinfo *s = pn_iin(c, 0), *l = pn_iin(c, 1), *d = pn_iin(c, 2);
	int64_t n = -1;
	if (s && l && d && s->value && l->value && d->value &&
	    range_count(s->value, l->value, d->value, &n))
		return pn_ifail(c, "start, limit, delta must be scalars, delta nonzero, count in range");
	pn_iset(c, 0, s ? s->type.dtype : PN_UNDEFINED, 1, &n);
	return 0;
}

#define PN_RANGE_INT(T)                                                 \
	{                                                               \
		T *p = o->data;                                         \
		int64_t a = pn_tensor_get_i64(k->in[0], 0), st = pn_tensor_get_i64(k->in[2], 0); \
		for (int64_t i = 0; i < o->numel; i++)                  \
			p[i] = (T)(a + i * st);                         \
		return 0;                                               \
	}

#define PN_RANGE_FLT(T)                                                 \
	{                                                               \
		T *p = o->data;                                         \
		double a = pn_tensor_get_f64(k->in[0], 0), st = pn_tensor_get_f64(k->in[2], 0); \
		for (int64_t i = 0; i < o->numel; i++)                  \
			p[i] = (T)(a + (double)i * st);                 \
		return 0;                                               \
	}

int pn_kernel_Range(pn_kctx *k)
{
	pn_tensor *o = pn_lay_out(k, 0);
	if (!o)
		return -1;
	switch (o->dtype) {
	case PN_INT16: PN_RANGE_INT(int16_t)
	case PN_INT32: PN_RANGE_INT(int32_t)
	case PN_INT64: PN_RANGE_INT(int64_t)
	case PN_FLOAT: PN_RANGE_FLT(float)
	case PN_DOUBLE: PN_RANGE_FLT(double)
	default:
		for (int64_t i = 0; i < o->numel; i++)
			pn_tensor_set_f64(o, i, pn_tensor_get_f64(k->in[0], 0) +
						(double)i * pn_tensor_get_f64(k->in[2], 0));
		return 0;
	}
}

/* --- EyeLike -------------------------------------------------------------------- */

int pn_infer_EyeLike(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0);
	int dtype = (int)pn_attr_int(c->node, "dtype", x ? x->type.dtype : PN_UNDEFINED);
	if (x && x->type.rank >= 0 && x->type.rank != 2)
		return pn_ifail(c, "input must be 2-d");
	pn_iset_like(c, 0, 0, 0);
	c->out[0].type.dtype = dtype;
	return 0;
}

int pn_kernel_EyeLike(pn_kctx *k)
{
	pn_tensor *o = pn_lay_out(k, 0);
	if (!o)
		return -1;
	if (o->rank != 2 || o->dtype == PN_STRING)
		return pn_kfail(k, "output must be a 2-d numeric tensor");
	/* the bytes of a 1 in the output dtype */
	uint8_t one[16] = {0};
	pn_tensor t1 = {.dtype = o->dtype, .numel = 1, .data = one};
	pn_tensor_set_f64(&t1, 0, 1.0);
	int64_t R = o->dims[0], C = o->dims[1], kk = pn_attr_int(k->node, "k", 0);
	size_t es = pn_dtype_size(o->dtype);
	memset(o->data, 0, pn_tensor_nbytes(o));
	for (int64_t i = 0; i < R; i++) {
		int64_t j = i + kk;
		if (j >= 0 && j < C)
			memcpy((char *)o->data + (size_t)(i * C + j) * es, one, es);
	}
	return 0;
}
