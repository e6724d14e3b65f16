/*
 * col2im.c - Col2Im, the inverse of im2col: overlapping patches summed
 * back into an image.
 */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "runtime/ops/layout.h"

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
