/*
 * unique.c - Unique: sorted or in first-occurrence order, with or without
 * an axis, four outputs (the distinct values, their first indices, the
 * inverse indices and the counts).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/ops/layout.h"

/* --- Unique --------------------------------------------------------------------- */

int pn_infer_Unique(pn_ictx *c)
{
	const pn_type *x = pn_lay_itype(c, 0);
	int dtype = x ? x->dtype : PN_UNDEFINED;
	const pn_attr *ax = pn_attr_find(c->node, "axis");
	int64_t items = -1;
	if (!ax) {
		items = pn_lay_type_numel(x);
		pn_iset(c, 0, dtype, 1, NULL);
	} else if (!x || x->rank < 0) {
		pn_iset(c, 0, dtype, -1, NULL);
	} else {
		int axis = pn_axis(ax->i, x->rank);
		if (axis < 0)
			return pn_ifail(c, "axis out of range");
		int64_t dims[PN_MAX_RANK];
		memcpy(dims, x->dims, sizeof(dims));
		dims[axis] = -1;
		items = x->dims[axis];
		pn_iset(c, 0, dtype, x->rank, dims);
	}
	pn_iset(c, 1, PN_INT64, 1, NULL);
	pn_iset(c, 2, PN_INT64, 1, &items);
	pn_iset(c, 3, PN_INT64, 1, NULL);
	return 0;
}

/* Three-way compare of floats that orders NaN after every number and
 * equal to itself (as numpy's unique does), so sorting stays consistent. */
static int fcmp(double x, double y)
{
	int nx = isnan(x), ny = isnan(y);
	if (nx || ny)
		return nx - ny;
	return x < y ? -1 : x > y ? 1 : 0;
}

/* Three-way compare of two elements of a dtype (NULL strings are ""). */
static int elem_cmp(int dtype, const void *a, const void *b)
{
#define PN_CMP3(T) { T x, y; memcpy(&x, a, sizeof x); memcpy(&y, b, sizeof y); \
		     return x < y ? -1 : x > y ? 1 : 0; }
	switch (dtype) {
	case PN_FLOAT: {
		float x, y;
		memcpy(&x, a, 4);
		memcpy(&y, b, 4);
		return fcmp(x, y);
	}
	case PN_DOUBLE: {
		double x, y;
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		return fcmp(x, y);
	}
	case PN_INT8: PN_CMP3(int8_t)
	case PN_INT16: PN_CMP3(int16_t)
	case PN_INT32: PN_CMP3(int32_t)
	case PN_INT64: PN_CMP3(int64_t)
	case PN_UINT16: PN_CMP3(uint16_t)
	case PN_UINT32: PN_CMP3(uint32_t)
	case PN_UINT64: PN_CMP3(uint64_t)
	case PN_FLOAT16:
	case PN_BFLOAT16: {
		uint16_t x, y;
		memcpy(&x, a, 2);
		memcpy(&y, b, 2);
		return fcmp(dtype == PN_FLOAT16 ? pn_f16_to_f32(x) : pn_bf16_to_f32(x),
			    dtype == PN_FLOAT16 ? pn_f16_to_f32(y) : pn_bf16_to_f32(y));
	}
	case PN_STRING: {
		const char *x = *(char *const *)a, *y = *(char *const *)b;
		return strcmp(x ? x : "", y ? y : "");
	}
	default: PN_CMP3(uint8_t)       /* uint8, bool */
	}
#undef PN_CMP3
}

typedef struct uniq_ctx {
	const char *items;   /* n items of m elements each, contiguous */
	int64_t m;
	size_t es;
	int dtype;
} uniq_ctx;

static int item_cmp(const uniq_ctx *u, int64_t i, int64_t j)
{
	const char *a = u->items + (size_t)(i * u->m) * u->es, *b = u->items + (size_t)(j * u->m) * u->es;
	for (int64_t e = 0; e < u->m; e++) {
		int c = elem_cmp(u->dtype, a + (size_t)e * u->es, b + (size_t)e * u->es);
		if (c)
			return c;
	}
	return 0;
}

/* Sorts item numbers by value, ties by position: each group of equal
 * items then starts with its first occurrence. */
static int order_cmp(const void *pa, const void *pb, void *arg)
{
	int64_t i = *(const int64_t *)pa, j = *(const int64_t *)pb;
	int c = item_cmp(arg, i, j);
	return c ? c : (i > j) - (i < j);
}

static int first_cmp(const void *pa, const void *pb)
{
	int64_t i = ((const int64_t *)pa)[0], j = ((const int64_t *)pb)[0];
	return (i > j) - (i < j);
}

/* Groups n items into unique ones: first[u] and count[u] per unique item in
 * output order, inv[i] per item.  Returns the unique count. */
static int64_t uniq_groups(const uniq_ctx *u, int64_t n, int sorted, int64_t *order, int64_t *first,
			   int64_t *count, int64_t *inv)
{
	for (int64_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, (size_t)n, sizeof(int64_t), order_cmp, (void *)u);
	int64_t nu = 0;
	for (int64_t s = 0; s < n; s++) {
		if (s == 0 || item_cmp(u, order[s - 1], order[s])) {
			first[nu] = order[s];
			count[nu++] = 0;
		}
		count[nu - 1]++;
		inv[order[s]] = nu - 1;
	}
	if (!sorted && nu > 1) {
		/* first-occurrence order: sort (first, count, old id) triples */
		int64_t *tri = malloc(sizeof(int64_t) * 3 * (size_t)nu), *map = order;
		if (!tri)
			return -1;
		for (int64_t g = 0; g < nu; g++) {
			tri[3 * g] = first[g];
			tri[3 * g + 1] = count[g];
			tri[3 * g + 2] = g;
		}
		qsort(tri, (size_t)nu, 3 * sizeof(int64_t), first_cmp);
		for (int64_t g = 0; g < nu; g++) {
			first[g] = tri[3 * g];
			count[g] = tri[3 * g + 1];
			map[tri[3 * g + 2]] = g;
		}
		for (int64_t i = 0; i < n; i++)
			inv[i] = map[inv[i]];
		free(tri);
	}
	return nu;
}

int pn_kernel_Unique(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	const pn_attr *ax = pn_attr_find(k->node, "axis");
	int sorted = pn_attr_int(k->node, "sorted", 1) != 0;
	int axis = ax ? pn_axis(ax->i, x->rank) : 0;
	if (axis < 0)
		return pn_kfail(k, "axis out of range");
	size_t es = pn_dtype_size(x->dtype);
	int64_t n = ax ? x->dims[axis] : x->numel;
	int64_t outer = ax ? pn_numel(axis, x->dims) : 1;
	int64_t inner = ax ? pn_numel(x->rank - axis - 1, x->dims + axis + 1) : 1;
	uniq_ctx u = {.items = x->data, .m = outer * inner, .es = es, .dtype = x->dtype};
	char *buf = NULL;
	int64_t *scratch = malloc(sizeof(int64_t) * 4 * (size_t)(n ? n : 1));
	int rc = -1;
	if (!scratch)
		return pn_kfail(k, "out of memory");
	if (ax && outer > 1) {
		/* items along the axis gathered contiguous: [n][outer][inner] */
		buf = malloc((size_t)(n * u.m) * es + 1);
		if (!buf)
			goto oom;
		pn_box b = {.rank = 3, .n = {n, outer, inner}, .ds = {outer * inner, inner, 1},
			    .ss = {inner, n * inner, 1}};
		pn_lay_box_copy(buf, x->data, es, &b, 1);
		u.items = buf;
	}
	int64_t *order = scratch, *first = scratch + n, *count = scratch + 2 * n, *inv = scratch + 3 * n;
	int64_t nu = uniq_groups(&u, n, sorted, order, first, count, inv);
	if (nu < 0)
		goto oom;
	int64_t dims[PN_MAX_RANK];
	memcpy(dims, x->dims, sizeof(dims));
	dims[axis] = nu;
	pn_tensor *y = ax ? pn_out_alloc(k, 0, x->dtype, x->rank, dims) : pn_out_alloc(k, 0, x->dtype, 1, &nu);
	if (!y)
		goto out;
	for (int64_t g = 0; g < nu && !ax; g++)
		memcpy((char *)y->data + (size_t)g * es, (const char *)x->data + (size_t)first[g] * es, es);
	for (int64_t g = 0; g < nu && ax; g++) {
		pn_box b = {.rank = 2, .n = {outer, inner}, .ds = {nu * inner, 1}, .ss = {n * inner, 1}};
		pn_lay_box_copy((char *)y->data + (size_t)(g * inner) * es,
				(const char *)x->data + (size_t)(first[g] * inner) * es, es, &b, 0);
	}
	if (pn_lay_own_strings(k, y))
		goto out;
	const int64_t *src[3] = {first, inv, count};
	int64_t len[3] = {nu, n, nu};
	for (int i = 1; i < 4 && i < k->n_out; i++) {
		pn_tensor *o = pn_out_alloc(k, i, PN_INT64, 1, &len[i - 1]);
		if (!o)
			goto out;
		memcpy(o->data, src[i - 1], sizeof(int64_t) * (size_t)len[i - 1]);
	}
	rc = 0;
	goto out;
oom:
	rc = pn_kfail(k, "out of memory");
out:
	free(buf);
	free(scratch);
	return rc;
}
