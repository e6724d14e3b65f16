/*
 * pool.c - windowed pooling: MaxPool (with Indices), AveragePool, LpPool,
 * their Global forms, and MaxUnpool.  (RoI pooling is in roi.c.)
 *
 * Window bounds are tabulated per output index and spatial axis once per
 * call (first and last tap that land inside the input), so the inner loops
 * never test for padding.  float32 and float64 run natively; float16,
 * bfloat16, int8 and uint8 are staged through float32 (exact for the 8-bit
 * types, which only MaxPool takes).
 */
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "runtime/infer.h"
#include "runtime/kernel.h"
#include "runtime/ops/vec.h"
#include "runtime/ops/window.h"

enum { POOL_MAX, POOL_AVG, POOL_LP };

static int pool_kind(const pn_node *n)
{
	if (!strcmp(n->op_type, "MaxPool") || !strcmp(n->op_type, "GlobalMaxPool"))
		return POOL_MAX;
	if (!strcmp(n->op_type, "LpPool") || !strcmp(n->op_type, "GlobalLpPool"))
		return POOL_LP;
	return POOL_AVG;
}

/* LpPool-1 has a float p; later versions an int. */
static double lp_p(const pn_node *n)
{
	const pn_attr *a = pn_attr_find(n, "p");
	if (!a)
		return 2.0;
	return a->type == PN_ATTR_FLOAT ? a->f : (double)a->i;
}

/* --- inference ------------------------------------------------------------------------ */

static int pool_window(const pn_node *node, int nsp, const int64_t *in, pn_window *w, char *err)
{
	int64_t k[PN_WIN_MAX];
	int nk = pn_attr_ints(node, "kernel_shape", k, PN_WIN_MAX);
	if (nk < 0)
		return pn_fail(err, "kernel_shape is required");
	if (nk != nsp)
		return pn_fail(err, "kernel_shape has %d entries for %d spatial dims", nk, nsp);
	int flags = pn_attr_int(node, "ceil_mode", 0) ? PN_WIN_CEIL : 0;
	return pn_win_forward(w, node, nsp, in, k, flags, err);
}

/* MaxPool, AveragePool, LpPool: [N, C, out...]; MaxPool's Indices alike in int64. */
int pn_infer_Pool(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0);
	if (!x || x->type.rank < 0) {
		pn_iset(c, 0, x ? x->type.dtype : PN_UNDEFINED, -1, NULL);
		pn_iset(c, 1, PN_INT64, -1, NULL);
		return 0;
	}
	int rank = x->type.rank;
	if (rank < 3)
		return pn_ifail(c, "input rank %d, expected at least 3", rank);
	int64_t dims[PN_MAX_RANK] = {x->type.dims[0], x->type.dims[1]};
	pn_window w;
	if (pool_window(c->node, rank - 2, x->type.dims + 2, &w, c->err))
		return -1;
	for (int i = 0; i < rank - 2; i++)
		dims[2 + i] = w.out[i];
	pn_iset(c, 0, x->type.dtype, rank, dims);
	pn_iset(c, 1, PN_INT64, rank, dims);
	return 0;
}

/* Global pools: [N, C, 1, ...]. */
int pn_infer_GlobalPool(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0);
	if (!x || x->type.rank < 0) {
		pn_iset(c, 0, x ? x->type.dtype : PN_UNDEFINED, -1, NULL);
		return 0;
	}
	if (x->type.rank < 2)
		return pn_ifail(c, "input rank %d, expected at least 2", x->type.rank);
	int64_t dims[PN_MAX_RANK];
	for (int i = 0; i < x->type.rank; i++)
		dims[i] = i < 2 ? x->type.dims[i] : 1;
	pn_iset(c, 0, x->type.dtype, x->type.rank, dims);
	return 0;
}

/* Default MaxUnpool size per spatial axis: the MaxPool input it inverts. */
static void unpool_dims(const pn_node *node, int nsp, const int64_t *in, int64_t *out)
{
	int64_t k[PN_WIN_MAX] = {0}, s[PN_WIN_MAX], pads[2 * PN_WIN_MAX] = {0};
	pn_attr_ints(node, "kernel_shape", k, PN_WIN_MAX);
	for (int i = 0; i < nsp; i++)
		s[i] = 1;
	pn_attr_ints(node, "strides", s, PN_WIN_MAX);
	pn_attr_ints(node, "pads", pads, 2 * PN_WIN_MAX);
	for (int i = 0; i < nsp; i++)
		out[i] = in[i] < 0 ? -1 : (in[i] - 1) * s[i] + k[i] - pads[i] - pads[nsp + i];
}

static int unpool_check_attrs(const pn_node *node, int nsp, char *err)
{
	int64_t tmp[2 * PN_WIN_MAX + 1];
	int nk = pn_attr_ints(node, "kernel_shape", tmp, PN_WIN_MAX + 1);
	int ns = pn_attr_ints(node, "strides", tmp, PN_WIN_MAX + 1);
	int np = pn_attr_ints(node, "pads", tmp, 2 * PN_WIN_MAX + 1);
	if (nk != nsp || (ns >= 0 && ns != nsp) || (np >= 0 && np != 2 * nsp))
		return pn_fail(err, "kernel_shape/strides/pads do not match %d spatial dims", nsp);
	return 0;
}

int pn_infer_MaxUnpool(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0);
	int dtype = x ? x->type.dtype : PN_UNDEFINED;
	int64_t dims[PN_MAX_RANK];
	int n = pn_iints(c, 2, dims, PN_MAX_RANK);
	if (n >= 0) {
		pn_iset(c, 0, dtype, n, dims);
		return 0;
	}
	if (pn_iin(c, 2) || !x || x->type.rank < 0) {
		const pn_tinfo *os = pn_iin(c, 2);
		int rank = os && os->type.rank == 1 ? (int)os->type.dims[0] : x ? x->type.rank : -1;
		pn_iset(c, 0, dtype, rank <= PN_MAX_RANK ? rank : -1, NULL);
		return 0;
	}
	int rank = x->type.rank;
	if (rank < 3)
		return pn_ifail(c, "input rank %d, expected at least 3", rank);
	if (unpool_check_attrs(c->node, rank - 2, c->err))
		return -1;
	dims[0] = x->type.dims[0];
	dims[1] = x->type.dims[1];
	unpool_dims(c->node, rank - 2, x->type.dims + 2, dims + 2);
	pn_iset(c, 0, dtype, rank, dims);
	return 0;
}

/* --- window tables ----------------------------------------------------------------- */

typedef struct pool_plan {
	pn_window w;            /* 3-D */
	int kind, include_pad, col_major;
	double p;
	int64_t planes, isp, osp;
	/* per axis and output index: taps [lo, hi) land inside the input; npad
	 * taps land inside input + padding (count_include_pad's divisor) */
	int64_t *lo[3], *hi[3], *npad[3];
	int64_t *mem;
} pool_plan;

static int plan_tables(pool_plan *pp)
{
	const pn_window *w = &pp->w;
	int64_t total = w->out[0] + w->out[1] + w->out[2];
	pp->mem = malloc(sizeof(int64_t) * (size_t)(3 * total + 1));
	if (!pp->mem)
		return -1;
	int64_t *m = pp->mem;
	for (int a = 0; a < 3; a++) {
		pp->lo[a] = m;
		pp->hi[a] = m + w->out[a];
		pp->npad[a] = m + 2 * w->out[a];
		m += 3 * w->out[a];
		for (int64_t o = 0; o < w->out[a]; o++) {
			int64_t start = o * w->s[a] - w->pb[a], d = w->d[a], k = w->k[a];
			int64_t lo = start >= 0 ? 0 : (-start + d - 1) / d;
			int64_t hi = start > w->in[a] - 1 ? 0 : (w->in[a] - 1 - start) / d + 1;
			int64_t lim = w->in[a] + w->pe[a] - start;
			int64_t np = lim <= 0 ? 0 : (lim + d - 1) / d;
			pp->lo[a][o] = lo < k ? lo : k;
			pp->hi[a][o] = hi < k ? (hi < lo ? lo : hi) : k;
			pp->npad[a][o] = np < k ? np : k;
		}
	}
	return 0;
}

/*
 * One pooling kernel per element type.  Rows (plane, od, oh) are the parallel
 * unit; every output element is reduced over its window in a fixed order.
 */
#define DEFINE_POOL(NAME, T, LOWEST)                                                             \
	static void NAME(const pool_plan *pp, const T *x, T *y, int64_t *ind)                    \
	{                                                                                        \
		const pn_window *w = &pp->w;                                                     \
		const int64_t OD = w->out[0], OH = w->out[1], OW = w->out[2];                    \
		const int64_t IH = w->in[1], IW = w->in[2], rows = pp->planes * OD * OH;         \
		const int64_t work = rows * OW * w->k[0] * w->k[1] * w->k[2];                     \
		_Pragma("omp parallel for if (work > PN_PAR_MIN_WORK) schedule(static)")          \
		for (int64_t r = 0; r < rows; r++) {                                             \
			int64_t oh = r % OH, od = r / OH % OD, pl = r / (OH * OD);               \
			const T *xp = x + pl * pp->isp;                                          \
			int64_t zs = od * w->s[0] - w->pb[0], ys = oh * w->s[1] - w->pb[1];      \
			int64_t zl = pp->lo[0][od], zh = pp->hi[0][od];                          \
			int64_t yl = pp->lo[1][oh], yh = pp->hi[1][oh];                          \
			int64_t oi = pl * pp->osp + (od * OH + oh) * OW;                         \
			for (int64_t ow = 0; ow < OW; ow++, oi++) {                              \
				int64_t xs = ow * w->s[2] - w->pb[2];                            \
				int64_t xl = pp->lo[2][ow], xh = pp->hi[2][ow];                  \
				if (pp->kind == POOL_MAX && !ind) {                              \
					T best = LOWEST;                                         \
					for (int64_t kz = zl; kz < zh; kz++) {                   \
						int64_t iz = zs + kz * w->d[0];                  \
						for (int64_t ky = yl; ky < yh; ky++) {           \
							const T *row = xp + (iz * IH + ys + ky * w->d[1]) * IW + xs; \
							for (int64_t kx = xl; kx < xh; kx++)     \
								best = row[kx * w->d[2]] > best ? row[kx * w->d[2]] : best; \
						}                                                \
					}                                                        \
					y[oi] = best;                                            \
					continue;                                                \
				}                                                                \
				if (pp->kind == POOL_MAX) {                                      \
					T best = LOWEST;                                         \
					int64_t bz = 0, by = 0, bx = 0;                          \
					for (int64_t kz = zl; kz < zh; kz++) {                   \
						int64_t iz = zs + kz * w->d[0];                  \
						for (int64_t ky = yl; ky < yh; ky++) {           \
							int64_t iy = ys + ky * w->d[1];          \
							const T *row = xp + (iz * IH + iy) * IW; \
							for (int64_t kx = xl; kx < xh; kx++) {   \
								int64_t ix = xs + kx * w->d[2];  \
								if (row[ix] > best) {            \
									best = row[ix];          \
									bz = iz, by = iy, bx = ix; \
								}                                \
							}                                        \
						}                                                \
					}                                                        \
					y[oi] = best;                                            \
					if (ind)                                                 \
						ind[oi] = pl * pp->isp +                         \
							  (pp->col_major ?                       \
							   bz + by * w->in[0] + bx * w->in[0] * IH : \
							   (bz * IH + by) * IW + bx);            \
					continue;                                                \
				}                                                                \
				double acc = 0;                                                  \
				for (int64_t kz = zl; kz < zh; kz++) {                           \
					int64_t iz = zs + kz * w->d[0];                          \
					for (int64_t ky = yl; ky < yh; ky++) {                   \
						int64_t iy = ys + ky * w->d[1];                  \
						const T *row = xp + (iz * IH + iy) * IW + xs;    \
						if (pp->kind == POOL_AVG)                        \
							for (int64_t kx = xl; kx < xh; kx++)     \
								acc += row[kx * w->d[2]];        \
						else if (pp->p == 2)                             \
							for (int64_t kx = xl; kx < xh; kx++)     \
								acc += (double)row[kx * w->d[2]] * row[kx * w->d[2]]; \
						else                                             \
							for (int64_t kx = xl; kx < xh; kx++)     \
								acc += pow(fabs((double)row[kx * w->d[2]]), pp->p); \
					}                                                        \
				}                                                                \
				if (pp->kind == POOL_AVG) {                                      \
					int64_t cnt = pp->include_pad ?                          \
						pp->npad[0][od] * pp->npad[1][oh] * pp->npad[2][ow] : \
						(zh - zl) * (yh - yl) * (xh - xl);               \
					y[oi] = (T)(cnt ? acc / (double)cnt : 0);                \
				} else {                                                         \
					y[oi] = (T)(pp->p == 2 ? sqrt(acc) : pow(acc, 1.0 / pp->p)); \
				}                                                                \
			}                                                                        \
		}                                                                                \
	}

DEFINE_POOL(pool_f32, float, -FLT_MAX)
DEFINE_POOL(pool_f64, double, -DBL_MAX)

/* --- float32 MaxPool and AveragePool over the flat layout ------------------------------ */

/*
 * The window's taps are summed (or maxed) over the flat layout of window.h,
 * a vector of outputs at a time: the input plane is packed with -FLT_MAX
 * (MaxPool) or 0 (AveragePool) in the padding, so no tap needs a bounds
 * test.  Taps are visited in the order pool_f32 visits them; a padding tap
 * leaves a maximum unchanged (x > m ? x : m), so MaxPool gives the same
 * bits as pool_f32.  AveragePool sums in float where pool_f32 sums in
 * double (within an ulp or two for these window sizes).
 */
#define FLAT_VB 4

#define DEFINE_POOL_TAPS(NAME, VB, OP)                                                           \
	static inline void NAME(int64_t K, const int64_t *off, const float *base, float init,    \
				float *out)                                                      \
	{                                                                                        \
		pn_vf acc[VB];                                                                   \
		for (int v = 0; v < VB; v++)                                                     \
			acc[v] = pn_vset1(init);                                                 \
		for (int64_t k = 0; k < K; k++) {                                                \
			const float *p = base + off[k];                                          \
			for (int v = 0; v < VB; v++)                                             \
				acc[v] = OP(pn_vload(p + v * PN_VL), acc[v]);                     \
		}                                                                                \
		for (int v = 0; v < VB; v++)                                                     \
			pn_vstore(out + v * PN_VL, acc[v]);                                      \
	}

static inline pn_vf vsum(pn_vf x, pn_vf acc)
{
	return pn_vadd(acc, x);
}

DEFINE_POOL_TAPS(max_taps_n, FLAT_VB, pn_vmax)
DEFINE_POOL_TAPS(max_taps_1, 1, pn_vmax)
DEFINE_POOL_TAPS(sum_taps_n, FLAT_VB, vsum)
DEFINE_POOL_TAPS(sum_taps_1, 1, vsum)

/* Window counts per axis and output index as floats (the divisors of
 * AveragePool, whose products are exact). */
static float *flat_counts(pn_kctx *k, const pool_plan *pp)
{
	const pn_window *w = &pp->w;
	float *c = pn_kscratch(k, sizeof(float) * (size_t)(w->out[0] + w->out[1] + w->out[2]));
	if (!c)
		return NULL;
	float *d = c;
	for (int a = 0; a < 3; a++)
		for (int64_t o = 0; o < w->out[a]; o++)
			*d++ = (float)(pp->include_pad ? pp->npad[a][o] : pp->hi[a][o] - pp->lo[a][o]);
	return c;
}

/* One plane: pack, reduce all flat outputs into acc, write the valid ones. */
static void flat_plane(const pool_plan *pp, const pn_flat *f, const int64_t *off,
		       const float *cnt, const float *x, float *in, float *acc, float *y)
{
	const pn_window *w = &pp->w;
	const int max = pp->kind == POOL_MAX;
	const int64_t K = w->k[0] * w->k[1] * w->k[2];
	const float init = max ? -FLT_MAX : 0.0f;
	pn_flat_pack(f, x, init, in);
	int64_t q = 0;
	for (; q + FLAT_VB * PN_VL <= f->nq; q += FLAT_VB * PN_VL)
		(max ? max_taps_n : sum_taps_n)(K, off, in + q, init, acc + q);
	for (; q < f->nq; q += PN_VL)
		(max ? max_taps_1 : sum_taps_1)(K, off, in + q, init, acc + q);
	const float *cz = cnt, *cy = cz + w->out[0], *cx = cy + w->out[1];
	for (int64_t oz = 0; oz < w->out[0]; oz++)
		for (int64_t oy = 0; oy < w->out[1]; oy++) {
			const float *a = acc + pn_flat_row(f, oz, oy);
			float *d = y + (oz * w->out[1] + oy) * w->out[2];
			if (max) {
				memcpy(d, a, sizeof(float) * (size_t)w->out[2]);
				continue;
			}
			float czy = cz[oz] * cy[oy];
			for (int64_t ox = 0; ox < w->out[2]; ox++)
				d[ox] = a[ox] / (czy * cx[ox]);
		}
}

/*
 * 2x2 windows with stride 2 and no padding (the usual downsampling): each
 * pair of input rows is split into even and odd columns in registers and
 * the four taps combined, with no packing; the taps in the order pool_f32
 * takes them, so MaxPool keeps its bits.
 */
static int is_pool2x2(const pool_plan *pp)
{
	const pn_window *w = &pp->w;
	return w->k[0] == 1 && w->s[0] == 1 && w->k[1] == 2 && w->k[2] == 2 && w->s[1] == 2 &&
	       w->s[2] == 2 && w->d[1] == 1 && w->d[2] == 1 && !w->pb[1] && !w->pb[2] &&
	       2 * w->out[1] <= w->in[1] && 2 * w->out[2] <= w->in[2] && pp->kind != POOL_LP;
}

static void pool2x2_plane(const pool_plan *pp, const float *x, float *y)
{
	const pn_window *w = &pp->w;
	const int64_t IW = w->in[2], OW = w->out[2];
	const int max = pp->kind == POOL_MAX;
	const pn_vf low = pn_vset1(-FLT_MAX), quarter = pn_vset1(0.25f);
	for (int64_t oz = 0; oz < w->out[0]; oz++)
		for (int64_t oy = 0; oy < w->out[1]; oy++) {
			const float *r0 = x + (oz * w->in[1] + 2 * oy) * IW, *r1 = r0 + IW;
			float *d = y + (oz * w->out[1] + oy) * OW;
			for (int64_t ox = 0; ox < OW; ox += PN_VL) {
				int64_t n = OW - ox < PN_VL ? OW - ox : PN_VL;
				pn_vf e0, o0, e1, o1, v;
				pn_vload_deint(r0 + 2 * ox, 0, 2 * n, 0.0f, &e0, &o0);
				pn_vload_deint(r1 + 2 * ox, 0, 2 * n, 0.0f, &e1, &o1);
				if (max)
					v = pn_vmax(o1, pn_vmax(e1, pn_vmax(o0, pn_vmax(e0, low))));
				else
					v = pn_vmul(pn_vadd(pn_vadd(pn_vadd(e0, o0), e1), o1), quarter);
				pn_vstore_n(d + ox, v, n);
			}
		}
}

/* MaxPool without Indices and AveragePool on float32 planes; 1 when the
 * flat layout does not suit the window (pool_f32 takes it). */
static int pool_flat_f32(pn_kctx *k, const pool_plan *pp, const float *x, float *y)
{
	const pn_window *w = &pp->w;
	if (is_pool2x2(pp)) {
		int nt = pp->planes * pp->osp * 4 > PN_PAR_MIN_WORK && !omp_in_parallel()
				 ? omp_get_max_threads() : 1;
		#pragma omp parallel for num_threads(nt) schedule(static)
		for (int64_t pl = 0; pl < pp->planes; pl++)
			pool2x2_plane(pp, x + pl * pp->isp, y + pl * pp->osp);
		return 0;
	}
	pn_flat f;
	int64_t *off = pn_kscratch(k, sizeof(int64_t) * (size_t)(w->k[0] * w->k[1] * w->k[2]));
	if (!off)
		return -1;
	if (pn_flat_plan(&f, w, off) || f.nq > 4 * pp->osp + 64)
		return 1;
	float *cnt = pp->kind == POOL_AVG ? flat_counts(k, pp) : NULL;
	int nt = 1;
	if (pp->planes * pp->osp * w->k[0] * w->k[1] * w->k[2] > PN_PAR_MIN_WORK && !omp_in_parallel())
		nt = omp_get_max_threads();
	nt = nt < pp->planes ? nt : (int)(pp->planes > 0 ? pp->planes : 1);
	float *scr = pn_kscratch(k, sizeof(float) * (size_t)((f.size + f.nq) * nt));
	if (!scr || (pp->kind == POOL_AVG && !cnt))
		return -1;
	#pragma omp parallel for num_threads(nt) schedule(static)
	for (int64_t pl = 0; pl < pp->planes; pl++) {
		float *in = scr + (f.size + f.nq) * omp_get_thread_num();
		flat_plane(pp, &f, off, cnt, x + pl * pp->isp, in, in + f.size, y + pl * pp->osp);
	}
	return 0;
}

/* --- windowed pool kernels ------------------------------------------------------------- */

static int pool_run(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	pool_plan pp = {0};
	pn_window w;
	if (x->rank < 3)
		return pn_kfail(k, "input rank %d, expected at least 3", x->rank);
	if (pool_window(k->node, x->rank - 2, x->dims + 2, &w, k->err))
		return -1;
	if (pn_win_to3(&w, &pp.w))
		return pn_kfail(k, "%d spatial dims (at most 3 supported)", w.n);
	pp.kind = pool_kind(k->node);
	pp.include_pad = (int)pn_attr_int(k->node, "count_include_pad", 0);
	pp.col_major = pn_attr_int(k->node, "storage_order", 0) == 1;
	pp.p = lp_p(k->node);
	pp.planes = x->dims[0] * x->dims[1];
	pp.isp = pp.w.in[0] * pp.w.in[1] * pp.w.in[2];
	pp.osp = pp.w.out[0] * pp.w.out[1] * pp.w.out[2];
	int64_t dims[PN_MAX_RANK] = {x->dims[0], x->dims[1]};
	for (int i = 0; i < w.n; i++)
		dims[2 + i] = w.out[i];
	pn_tensor *y = pn_out_alloc(k, 0, x->dtype, x->rank, dims);
	/* Indices only when the node names that output (an empty slot gets a
	 * scratch tensor nobody reads). */
	int want_ind = pp.kind == POOL_MAX && k->n_out > 1 && k->node->n_out > 1 && k->node->out[1] >= 0;
	pn_tensor *ind = want_ind ? pn_out_alloc(k, 1, PN_INT64, x->rank, dims) : NULL;
	if (!y || (want_ind && !ind))
		return -1;
	if (plan_tables(&pp))
		return pn_kfail(k, "out of memory");
	int rc = 0;
	int64_t *iv = ind ? ind->data : NULL;
	if (x->dtype == PN_DOUBLE) {
		pool_f64(&pp, x->data, y->data, iv);
	} else {
		float *xf = pn_win_load_f32(x);
		float *yf = x->dtype == PN_FLOAT ? y->data : malloc(sizeof(float) * (size_t)(y->numel + 1));
		if (!xf || !yf)
			rc = pn_kfail(k, "unsupported dtype %s or out of memory", pn_dtype_name(x->dtype));
		else if (!iv && pp.kind != POOL_LP)
			rc = pool_flat_f32(k, &pp, xf, yf);
		else
			rc = 1;
		if (rc > 0) {	/* Indices, LpPool, or a window the flat layout does not take */
			pool_f32(&pp, xf, yf, iv);
			rc = 0;
		}
		if (!rc && yf != y->data)
			pn_win_store_f32(y, yf);
		if (xf != x->data)
			free(xf);
		if (yf != y->data)
			free(yf);
	}
	free(pp.mem);
	return rc;
}

int pn_kernel_MaxPool(pn_kctx *k)
{
	return pool_run(k);
}

int pn_kernel_AveragePool(pn_kctx *k)
{
	return pool_run(k);
}

int pn_kernel_LpPool(pn_kctx *k)
{
	return pool_run(k);
}

/* --- global pools -------------------------------------------------------------------------- */

/* Partial results per plane: lanes of a fixed split, combined in a fixed
 * order, so that the loops vectorise (a single running sum or maximum is a
 * chain of dependent operations) and results do not depend on threads. */
#define GLOBAL_LANES 32

#define DEFINE_GLOBAL(NAME, T)                                                                   \
	static void NAME(int kind, double p, int64_t planes, int64_t n, const T *x, T *y)        \
	{                                                                                        \
		_Pragma("omp parallel for if (planes * n > PN_PAR_MIN_WORK) schedule(static)")   \
		for (int64_t pl = 0; pl < planes; pl++) {                                        \
			const T *xp = x + pl * n;                                                \
			int64_t i = 0;                                                           \
			if (kind == POOL_MAX) {                                                  \
				T part[GLOBAL_LANES], best = xp[0];                              \
				for (int j = 0; j < GLOBAL_LANES; j++)                           \
					part[j] = xp[0];                                         \
				for (; i + GLOBAL_LANES <= n; i += GLOBAL_LANES)                 \
					for (int j = 0; j < GLOBAL_LANES; j++)                   \
						part[j] = xp[i + j] > part[j] ? xp[i + j] : part[j]; \
				for (; i < n; i++)                                               \
					best = xp[i] > best ? xp[i] : best;                      \
				for (int j = 0; j < GLOBAL_LANES; j++)                           \
					best = part[j] > best ? part[j] : best;                  \
				y[pl] = best;                                                    \
				continue;                                                        \
			}                                                                        \
			double acc = 0;                                                          \
			if (kind == POOL_AVG) {                                                  \
				double part[GLOBAL_LANES] = {0};                                 \
				for (; i + GLOBAL_LANES <= n; i += GLOBAL_LANES)                 \
					for (int j = 0; j < GLOBAL_LANES; j++)                   \
						part[j] += xp[i + j];                            \
				for (; i < n; i++)                                               \
					acc += xp[i];                                            \
				for (int j = 0; j < GLOBAL_LANES; j++)                           \
					acc += part[j];                                          \
				y[pl] = (T)(acc / (double)n);                                    \
			} else if (p == 2) {                                                     \
				for (; i < n; i++)                                               \
					acc += (double)xp[i] * xp[i];                            \
				y[pl] = (T)sqrt(acc);                                            \
			} else {                                                                 \
				for (; i < n; i++)                                               \
					acc += pow(fabs((double)xp[i]), p);                      \
				y[pl] = (T)pow(acc, 1.0 / p);                                    \
			}                                                                        \
		}                                                                                \
	}

DEFINE_GLOBAL(global_f32, float)
DEFINE_GLOBAL(global_f64, double)

static int global_run(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	if (x->rank < 2)
		return pn_kfail(k, "input rank %d, expected at least 2", x->rank);
	int64_t dims[PN_MAX_RANK];
	for (int i = 0; i < x->rank; i++)
		dims[i] = i < 2 ? x->dims[i] : 1;
	pn_tensor *y = pn_out_alloc(k, 0, x->dtype, x->rank, dims);
	if (!y)
		return -1;
	int64_t planes = x->dims[0] * x->dims[1], n = planes ? x->numel / planes : 0;
	if (!planes)
		return 0;
	if (!n)
		return pn_kfail(k, "empty spatial dims");
	int kind = pool_kind(k->node);
	double p = lp_p(k->node);
	if (x->dtype == PN_DOUBLE) {
		global_f64(kind, p, planes, n, x->data, y->data);
		return 0;
	}
	float *xf = pn_win_load_f32(x);
	float *yf = x->dtype == PN_FLOAT ? y->data : malloc(sizeof(float) * (size_t)(y->numel + 1));
	int rc = 0;
	if (!xf || !yf)
		rc = pn_kfail(k, "unsupported dtype %s or out of memory", pn_dtype_name(x->dtype));
	else
		global_f32(kind, p, planes, n, xf, yf);
	if (!rc && yf != y->data)
		pn_win_store_f32(y, yf);
	if (xf != x->data)
		free(xf);
	if (yf != y->data)
		free(yf);
	return rc;
}

int pn_kernel_GlobalAveragePool(pn_kctx *k)
{
	return global_run(k);
}

int pn_kernel_GlobalMaxPool(pn_kctx *k)
{
	return global_run(k);
}

int pn_kernel_GlobalLpPool(pn_kctx *k)
{
	return global_run(k);
}

/* --- MaxUnpool ------------------------------------------------------------------------------ */

/* Flat index i of a tensor of dims `from` re-expressed in dims `to` (same
 * coordinates), or -1 when a coordinate falls outside `to`. */
static int64_t reindex(int64_t i, int rank, const int64_t *from, const int64_t *to)
{
	int64_t out = 0, mul = 1;
	for (int d = rank - 1; d >= 0; d--) {
		int64_t c = i % from[d];
		i /= from[d];
		if (c >= to[d])
			return -1;
		out += c * mul;
		mul *= to[d];
	}
	return i ? -1 : out;
}

/*
 * Y = 0 except Y[I[j]] = X[j].  I holds MaxPool's flat indices into the
 * tensor MaxPool read, whose shape the attributes give; with an explicit
 * output_shape each index keeps its coordinates in that larger tensor (as
 * the backend tests expect).
 */
int pn_kernel_MaxUnpool(pn_kctx *k)
{
	const pn_tensor *x = k->in[0], *ind = pn_kin(k, 1), *os = pn_kin(k, 2);
	if (!ind || ind->dtype != PN_INT64 || ind->numel != x->numel)
		return pn_kfail(k, "I must be int64 with X's shape");
	if (x->rank < 3)
		return pn_kfail(k, "input rank %d, expected at least 3", x->rank);
	if (unpool_check_attrs(k->node, x->rank - 2, k->err))
		return -1;
	int64_t dims[PN_MAX_RANK], pooled[PN_MAX_RANK];
	int rank = x->rank;
	pooled[0] = x->dims[0];
	pooled[1] = x->dims[1];
	unpool_dims(k->node, rank - 2, x->dims + 2, pooled + 2);
	memcpy(dims, pooled, sizeof(dims));
	if (os) {
		if (os->rank != 1 || os->numel != x->rank)
			return pn_kfail(k, "output_shape must hold %d dims", x->rank);
		for (int i = 0; i < rank; i++)
			dims[i] = pn_tensor_get_i64(os, i);
	}
	int same = !memcmp(dims, pooled, sizeof(int64_t) * (size_t)rank);
	pn_tensor *y = pn_out_alloc(k, 0, x->dtype, rank, dims);
	if (!y)
		return -1;
	size_t es = pn_dtype_size(x->dtype);
	memset(y->data, 0, es * (size_t)y->numel);
	const int64_t *iv = ind->data;
	for (int64_t j = 0; j < x->numel; j++) {
		int64_t at = same ? iv[j] : iv[j] >= 0 ? reindex(iv[j], rank, pooled, dims) : -1;
		if (at < 0 || at >= y->numel)
			return pn_kfail(k, "index %lld out of range", (long long)iv[j]);
		memcpy((char *)y->data + (size_t)at * es, (const char *)x->data + (size_t)j * es, es);
	}
	return 0;
}
