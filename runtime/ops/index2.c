/*
 * index2.c - Unique (sorted or in first-occurrence order, with or without
 * an axis, four outputs) and Col2Im (the inverse of im2col: overlapping
 * patches summed back into an image).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
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

/* --- Col2Im --------------------------------------------------------------------- */

#define PN_COL_MAX (PN_MAX_RANK - 2)

typedef struct col_geom {
	int s;                          /* spatial dims */
	int64_t img[PN_COL_MAX], blk[PN_COL_MAX], dil[PN_COL_MAX], str[PN_COL_MAX];
	int64_t pad[2 * PN_COL_MAX];
	int64_t nb[PN_COL_MAX];         /* block positions per dim */
	int64_t K, L;                   /* kernel size, block positions */
} col_geom;

/* Reads the geometry from attributes and the two shape inputs; 1 if the
 * shape inputs are unknown. */
static int col_geom_read(const pn_node *n, const pn_tensor *img, const pn_tensor *blk, col_geom *g,
			 char *err)
{
	if (!img || !blk)
		return 1;
	int s = pn_lay_ints(img, g->img, PN_COL_MAX);
	if (s < 1 || pn_lay_ints(blk, g->blk, PN_COL_MAX) != s)
		return pn_fail(err, "image_shape and block_shape must be 1-d ints of equal length");
	g->s = s;
	int nd = pn_attr_ints(n, "dilations", g->dil, PN_COL_MAX);
	int ns = pn_attr_ints(n, "strides", g->str, PN_COL_MAX);
	int np = pn_attr_ints(n, "pads", g->pad, 2 * PN_COL_MAX);
	if ((nd >= 0 && nd != s) || (ns >= 0 && ns != s) || (np >= 0 && np != 2 * s))
		return pn_fail(err, "dilations, strides and pads must match %d spatial dims", s);
	g->K = g->L = 1;
	for (int d = 0; d < s; d++) {
		if (nd < 0)
			g->dil[d] = 1;
		if (ns < 0)
			g->str[d] = 1;
		if (np < 0)
			g->pad[d] = g->pad[s + d] = 0;
		if (g->blk[d] < 1 || g->dil[d] < 1 || g->str[d] < 1 || g->img[d] < 0 ||
		    g->blk[d] > PN_MAX_NUMEL || g->dil[d] > PN_MAX_NUMEL || g->str[d] > PN_MAX_NUMEL ||
		    g->img[d] > PN_MAX_NUMEL || g->pad[d] < 0 || g->pad[s + d] < 0 ||
		    g->pad[d] > PN_MAX_NUMEL || g->pad[s + d] > PN_MAX_NUMEL)
			return pn_fail(err, "block, dilation, stride, pads or image size out of range");
		if (g->blk[d] > 1 && g->dil[d] > PN_MAX_NUMEL / (g->blk[d] - 1))
			return pn_fail(err, "dilated block too large");
		int64_t span = g->dil[d] * (g->blk[d] - 1) + 1;
		int64_t room = g->img[d] + g->pad[d] + g->pad[s + d] - span;
		g->nb[d] = room < 0 ? 0 : room / g->str[d] + 1;
		if (g->K > PN_MAX_NUMEL / g->blk[d] || (g->nb[d] && g->L > PN_MAX_NUMEL / g->nb[d]))
			return pn_fail(err, "block geometry too large");
		g->K *= g->blk[d];
		g->L *= g->nb[d];
	}
	return 0;
}

int pn_infer_Col2Im(pn_ictx *c)
{
	const pn_type *x = pn_lay_itype(c, 0);
	const pn_tinfo *ti = pn_iin(c, 1), *tb = pn_iin(c, 2);
	int dtype = x ? x->dtype : PN_UNDEFINED;
	col_geom g;
	int rc = col_geom_read(c->node, ti ? ti->value : NULL, tb ? tb->value : NULL, &g, c->err);
	if (rc < 0)
		return -1;
	if (rc) {
		const pn_type *it = pn_lay_itype(c, 1);
		int s = it && it->rank == 1 && it->dims[0] >= 0 && it->dims[0] <= PN_COL_MAX ? (int)it->dims[0] : -1;
		pn_iset(c, 0, dtype, s < 0 ? -1 : s + 2, NULL);
		return 0;
	}
	int64_t out[PN_MAX_RANK] = {-1, -1};
	if (x && x->rank >= 0) {
		if (x->rank != 3)
			return pn_ifail(c, "input must be [N, C*prod(block), L]");
		out[0] = x->dims[0];
		if (x->dims[1] >= 0 && x->dims[1] % g.K)
			return pn_ifail(c, "dim 1 (%lld) not divisible by the block size %lld",
					(long long)x->dims[1], (long long)g.K);
		out[1] = x->dims[1] < 0 ? -1 : x->dims[1] / g.K;
		if (x->dims[2] >= 0 && x->dims[2] != g.L)
			return pn_ifail(c, "input has %lld blocks, geometry gives %lld",
					(long long)x->dims[2], (long long)g.L);
	}
	for (int d = 0; d < g.s; d++)
		out[2 + d] = g.img[d];
	pn_iset(c, 0, dtype, g.s + 2, out);
	return 0;
}

/* Sums one channel: col is [K][L], img the channel's output (zeroed).  Loop
 * order is fixed, so the sums are the same whatever the thread count. */
#define PN_COL2IM(T, ACC)                                                                     \
	static void col2im_##T(const col_geom *g, const T *col, T *img)                       \
	{                                                                                     \
		int s = g->s;                                                                 \
		int64_t kk[PN_COL_MAX] = {0}, ist[PN_COL_MAX];                                \
		pn_lay_strides(s, g->img, ist);                                               \
		for (int64_t kf = 0; kf < g->K; kf++) {                                       \
			int64_t ll[PN_COL_MAX] = {0};                                         \
			for (int64_t lf = 0; lf < g->L; lf++) {                               \
				int64_t off = 0;                                              \
				int in = 1;                                                   \
				for (int d = 0; d < s; d++) {                                 \
					int64_t p = ll[d] * g->str[d] - g->pad[d] + kk[d] * g->dil[d]; \
					in &= p >= 0 && p < g->img[d];                        \
					off += p * ist[d];                                    \
				}                                                             \
				if (in)                                                       \
					img[off] = (T)((ACC)img[off] + (ACC)col[kf * g->L + lf]); \
				for (int d = s - 1; d >= 0 && ++ll[d] == g->nb[d]; d--)       \
					ll[d] = 0;                                            \
			}                                                                     \
			for (int d = s - 1; d >= 0 && ++kk[d] == g->blk[d]; d--)              \
				kk[d] = 0;                                                    \
		}                                                                             \
	}

PN_COL2IM(float, float)
PN_COL2IM(double, double)

int pn_kernel_Col2Im(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	pn_tensor *o = pn_lay_out(k, 0);
	col_geom g;
	if (!o)
		return -1;
	if (col_geom_read(k->node, k->in[1], k->in[2], &g, k->err))
		return *k->err ? -1 : pn_kfail(k, "image_shape and block_shape are required");
	if (x->rank != 3 || x->dims[1] % g.K || x->dims[2] != g.L)
		return pn_kfail(k, "input shape does not match the block geometry");
	int64_t NC = x->dims[0] * (x->dims[1] / g.K), img = pn_numel(g.s, g.img), col = g.K * g.L;
	int dt = x->dtype;
	if (dt != PN_FLOAT && dt != PN_DOUBLE && dt != PN_FLOAT16 && dt != PN_BFLOAT16)
		return pn_kfail(k, "Col2Im supports float types, not %s", pn_dtype_name(dt));
	memset(o->data, 0, pn_tensor_nbytes(o));
	float *fin = NULL, *fout = NULL;
	if (dt == PN_FLOAT16 || dt == PN_BFLOAT16) {
		/* halves: sum in float, round once at the end */
		fin = malloc(sizeof(float) * (size_t)(x->numel + 1));
		fout = calloc((size_t)(o->numel + 1), sizeof(float));
		if (!fin || !fout) {
			free(fin);
			free(fout);
			return pn_kfail(k, "out of memory");
		}
		const uint16_t *h = x->data;
		for (int64_t i = 0; i < x->numel; i++)
			fin[i] = dt == PN_FLOAT16 ? pn_f16_to_f32(h[i]) : pn_bf16_to_f32(h[i]);
	}
	#pragma omp parallel for if (x->numel > PN_PAR_MIN_WORK)
	for (int64_t ch = 0; ch < NC; ch++) {
		if (dt == PN_DOUBLE)
			col2im_double(&g, (const double *)x->data + ch * col, (double *)o->data + ch * img);
		else if (dt == PN_FLOAT)
			col2im_float(&g, (const float *)x->data + ch * col, (float *)o->data + ch * img);
		else
			col2im_float(&g, fin + ch * col, fout + ch * img);
	}
	if (fout) {
		uint16_t *h = o->data;
		for (int64_t i = 0; i < o->numel; i++)
			h[i] = dt == PN_FLOAT16 ? pn_f32_to_f16(fout[i]) : pn_f32_to_bf16(fout[i]);
	}
	free(fin);
	free(fout);
	return 0;
}
