/*
 * conv_direct.c - the direct float32 convolution paths, for every Conv but
 * ungrouped 1x1 ones (which conv.c runs as a GEMM on the input):
 *
 *   dot      ungrouped, at most DOT_MAX_N outputs per image: dot products
 *            along the reduction (SSD heads, 1x1 maps of one image);
 *   same     depthwise, stride 1, output as large as the input: the input
 *            read in place with lane masks (MobileNet, EfficientNet);
 *   flat     the rest: the input packed into the flat layout of window.h
 *            (padded, split by stride phase) where every tap is a constant
 *            offset, then FMA micro-kernels over blocks of output channels
 *            and vectors of flat outputs.
 *
 * Micro-kernels are separate from the loops that block and parallelise
 * them; each output element is summed in one fixed order whatever the
 * blocking or the thread count (threads only own disjoint output channels
 * or images).  Scratch comes from pn_kscratch.
 */
#include <omp.h>
#include <stdint.h>
#include <string.h>

#include "runtime/kernel.h"
#include "runtime/ops/conv.h"
#include "runtime/ops/vec.h"

/* Largest packed input (floats) of a group the flat path takes. */
#define DIRECT_MAX_PACKED ((int64_t)16 << 20)

/*
 * Direct convolution micro-kernel: out[i * ldo + j] = sum over k of
 * w[i * K + k] * base[off[k] + j] for MB output channels i and the VB
 * vectors of flat outputs j from 0 (the caller offsets base and out).
 * Taps are summed in order from zero in blocks of TAPS_KB, each block's sum
 * then added to the sum of the blocks before it in out: one chain of
 * 18,432 fused multiply-adds (a 3x3 convolution of 2,048 channels) drifted
 * from the exact sum several times further than the GEMM's blocked sums do.
 * The blocks depend on K alone, so the blocking never changes a result.
 */
#define TAPS_KB 512
#define DEFINE_TAPS(NAME, MB, VB)                                                                \
	static inline void NAME(int64_t K, const float *w, const int64_t *off, const float *base, \
				float *out, int64_t ldo)                                         \
	{                                                                                        \
		for (int64_t k0 = 0; k0 < K; k0 += TAPS_KB) {                                    \
			const int64_t k1 = K - k0 < TAPS_KB ? K : k0 + TAPS_KB;                  \
			pn_vf acc[MB][VB];                                                       \
			for (int i = 0; i < MB; i++)                                             \
				for (int v = 0; v < VB; v++)                                     \
					acc[i][v] = pn_vzero();                                  \
			for (int64_t k = k0; k < k1; k++) {                                      \
				const float *p = base + off[k];                                  \
				pn_vf xv[VB];                                                    \
				for (int v = 0; v < VB; v++)                                     \
					xv[v] = pn_vload(p + v * PN_VL);                         \
				for (int i = 0; i < MB; i++) {                                   \
					pn_vf wv = pn_vset1(w[i * K + k]);                       \
					for (int v = 0; v < VB; v++)                             \
						acc[i][v] = pn_vfma(wv, xv[v], acc[i][v]);       \
				}                                                                \
			}                                                                        \
			for (int i = 0; i < MB; i++)                                             \
				for (int v = 0; v < VB; v++) {                                   \
					float *o = out + i * ldo + v * PN_VL;                    \
					pn_vstore(o, k0 ? pn_vadd(pn_vload(o), acc[i][v])        \
							: acc[i][v]);                            \
				}                                                                \
		}                                                                                \
	}

/* Output channels per block of a group, and vectors of flat outputs per
 * block: as many accumulators as registers allow (AVX2: 12 of 16, which
 * leaves 3 for the inputs and 1 for the broadcast weight; with 8 the FMA
 * chains were too few to hide their latency). */
#define TAPS_MB 4
#define TAPS_VB (PN_VREGS / TAPS_MB)
DEFINE_TAPS(taps_4xN, TAPS_MB, TAPS_VB)
DEFINE_TAPS(taps_4x1, TAPS_MB, 1)
/* One channel (depthwise): enough vectors for independent FMA chains. */
DEFINE_TAPS(taps_1x8, 1, 8)
DEFINE_TAPS(taps_1x4, 1, 4)
DEFINE_TAPS(taps_1x2, 1, 2)
DEFINE_TAPS(taps_1x1, 1, 1)

/* Flat outputs per chunk: the direct path computes a chunk for every output
 * channel before the next, so the input it reads stays in cache. */
#define DIRECT_QC 512

/* Flat outputs [q0, q1) (q1 - q0 a multiple of PN_FLAT_Q) of one channel
 * into out[0, q1 - q0). */
static void taps_row(int64_t K, const float *w, const int64_t *off, const float *in, int64_t q0,
		     int64_t q1, float *out)
{
	int64_t q = q0;
	for (; q + 8 * PN_VL <= q1; q += 8 * PN_VL)
		taps_1x8(K, w, off, in + q, out + (q - q0), 0);
	if (q + 4 * PN_VL <= q1) {
		taps_1x4(K, w, off, in + q, out + (q - q0), 0);
		q += 4 * PN_VL;
	}
	if (q + 2 * PN_VL <= q1) {
		taps_1x2(K, w, off, in + q, out + (q - q0), 0);
		q += 2 * PN_VL;
	}
	for (; q < q1; q += PN_VL)
		taps_1x1(K, w, off, in + q, out + (q - q0), 0);
}

/* The same for mb <= TAPS_MB output channels reading one input (rows of
 * out DIRECT_QC apart). */
static void taps_rows(int mb, int64_t K, const float *w, const int64_t *off, const float *in,
		      int64_t q0, int64_t q1, float *out)
{
	if (mb < TAPS_MB) {
		for (int i = 0; i < mb; i++)
			taps_row(K, w + i * K, off, in, q0, q1, out + i * DIRECT_QC);
		return;
	}
	int64_t q = q0;
	for (; q + TAPS_VB * PN_VL <= q1; q += TAPS_VB * PN_VL)
		taps_4xN(K, w, off, in + q, out + (q - q0), DIRECT_QC);
	for (; q < q1; q += PN_VL)
		taps_4x1(K, w, off, in + q, out + (q - q0), DIRECT_QC);
}

/*
 * Copies the valid ones of flat outputs [q0, q1) (acc[0, q1 - q0), with
 * PN_VL floats of slack) of one channel into its output plane y, plus bias.
 * Rows are stored as whole vectors, running into the next rows (written
 * after) but never past the plane.
 */
static void flat_unpack(const pn_flat *f, const float *acc, int64_t q0, int64_t q1, float bias,
			float *y)
{
	const pn_window *w = &f->w;
	const int64_t n2 = f->n[2], OW = w->out[2], OH = w->out[1], OD = w->out[0];
	const float *yend = y + OD * OH * OW;
	const pn_vf vb = pn_vset1(bias);
	int64_t row = q0 / n2, oy = row % f->n[1], oz = row / f->n[1];
	for (int64_t rs = row * n2; rs < q1; rs += n2) {
		int64_t c0 = q0 > rs ? q0 - rs : 0, c1 = q1 - rs < OW ? q1 - rs : OW;
		if (oy < OH && oz < OD) {
			const float *a = acc + (rs - q0);
			float *d = y + (oz * OH + oy) * OW;
			for (int64_t ox = c0; ox < c1; ox += PN_VL) {
				pn_vf v = pn_vadd(pn_vload(a + ox), vb);
				if (d + ox + PN_VL <= yend)
					pn_vstore(d + ox, v);
				else
					pn_vstore_n(d + ox, v, c1 - ox);
			}
		}
		if (++oy == f->n[1]) {
			oy = 0;
			oz++;
		}
	}
}

/* Output channels [m0, m1) of image n from the packed input planes in, a
 * chunk of flat outputs at a time (acc: TAPS_MB x DIRECT_QC floats). */
static void direct_range(const pn_conv_geom *g, const pn_flat *f, const int64_t *off,
			 const float *in, const float *w, const float *b, int64_t n, int64_t m0,
			 int64_t m1, float *acc, float *y)
{
	const int64_t K = g->Cg * g->ksz;
	for (int64_t q0 = 0; q0 < f->nq; q0 += DIRECT_QC) {
		int64_t q1 = f->nq - q0 < DIRECT_QC ? f->nq : q0 + DIRECT_QC;
		for (int64_t m = m0; m < m1; m += TAPS_MB) {
			int mb = m1 - m < TAPS_MB ? (int)(m1 - m) : TAPS_MB;
			taps_rows(mb, K, w + m * K, off, in, q0, q1, acc);
			for (int i = 0; i < mb; i++)
				flat_unpack(f, acc + i * DIRECT_QC, q0, q1, b ? b[m + i] : 0.0f,
					    y + (n * g->M + m + i) * g->osp);
		}
	}
}

/* Threads for a direct convolution of this much work over this many items. */
static int direct_threads(const pn_conv_geom *g, const pn_flat *f, int64_t items)
{
	if (g->N * g->M * f->nq * g->Cg * g->ksz <= PN_PAR_MIN_WORK || omp_in_parallel())
		return 1;
	int nt = omp_get_max_threads();
	return nt < items ? nt : (int)(items > 0 ? items : 1);
}

/*
 * Depthwise convolution with stride 1 and outputs as large as the inputs
 * ("same" padding, the common case): output q and input q have the same
 * flat index, so tap t reads x[q + off_t] in place, with the lanes whose
 * tap falls in the padding (or would wrap into a neighbouring row) masked
 * off.  No packing and no unpacking: per output vector and tap, one masked
 * load and one FMA.  The masks depend on the position only, so they are
 * tabulated once per call for every channel.  A masked lane adds w * 0, as
 * a padded tap of the flat layout does: both paths give the same bits.
 */
typedef struct same_plan {
	int64_t nb;             /* output vectors per plane */
	const int64_t *off;     /* per tap (may be negative) */
	const uint16_t *mask;   /* [vector][tap]: lanes whose tap is inside */
	const uint8_t *inner;   /* [vector]: every lane of every tap inside */
} same_plan;

/* Most mask entries (vectors x taps) the same path tabulates. */
#define SAME_MAX_MASKS ((int64_t)4 << 20)

/* Widest kernel (per axis) the same path takes. */
#define SAME_MAX_K 32

static int same_applies(const pn_conv_geom *g)
{
	for (int a = 0; a < 3; a++)
		if (g->w.s[a] != 1 || g->w.out[a] != g->w.in[a] || g->w.k[a] > SAME_MAX_K)
			return 0;
	return g->Cg == 1 && g->Mg == 1 && PN_VL <= 16 &&
	       (g->osp + PN_VL - 1) / PN_VL * g->ksz <= SAME_MAX_MASKS;
}

/* Offsets and lane masks of sp (its arrays from k's scratch). */
static int same_init(pn_kctx *k, const pn_conv_geom *g, same_plan *sp)
{
	const pn_window *w = &g->w;
	sp->nb = (g->osp + PN_VL - 1) / PN_VL;
	int64_t *off = pn_kscratch(k, sizeof(int64_t) * (size_t)g->ksz), t = 0;
	uint16_t *mask = pn_kscratch(k, sizeof(uint16_t) * (size_t)(sp->nb * g->ksz));
	uint8_t *inner = pn_kscratch(k, (size_t)sp->nb);
	if (!off || !mask || !inner)
		return -1;
	for (int64_t kz = 0; kz < w->k[0]; kz++)
		for (int64_t ky = 0; ky < w->k[1]; ky++)
			for (int64_t kx = 0; kx < w->k[2]; kx++)
				off[t++] = ((kz * w->d[0] - w->pb[0]) * w->in[1] + ky * w->d[1] - w->pb[1]) *
						   w->in[2] + kx * w->d[2] - w->pb[2];
	/* Tap kk on axis a is inside for outputs o in [lo, hi) of that axis. */
	int64_t lo[3][SAME_MAX_K], hi[3][SAME_MAX_K];
	for (int a = 0; a < 3; a++)
		for (int64_t kk = 0; kk < w->k[a]; kk++) {
			lo[a][kk] = w->pb[a] - kk * w->d[a];
			hi[a][kk] = w->in[a] + w->pb[a] - kk * w->d[a];
		}
	/* Per vector: lane bits per axis and tap, then their products.  A
	 * vector's lanes are runs along output rows; a tap's lanes within a
	 * run form one range. */
	int64_t o[3] = {0, 0, 0};
	for (int64_t b = 0; b < sp->nb; b++) {
		uint32_t ax[3][SAME_MAX_K] = {{0}};
		for (int64_t l = 0, q = b * PN_VL; l < PN_VL && q < g->osp;) {
			int64_t len = w->out[2] - o[2];
			len = len < PN_VL - l ? len : PN_VL - l;
			len = len < g->osp - q ? len : g->osp - q;
			uint32_t run = (((uint32_t)1 << len) - 1) << l;
			for (int a = 0; a < 2; a++)
				for (int64_t kk = 0; kk < w->k[a]; kk++)
					if (o[a] >= lo[a][kk] && o[a] < hi[a][kk])
						ax[a][kk] |= run;
			for (int64_t kk = 0; kk < w->k[2]; kk++) {
				int64_t c0 = lo[2][kk] - o[2], c1 = hi[2][kk] - o[2];
				c0 = c0 > 0 ? c0 : 0;
				c1 = c1 < len ? c1 : len;
				if (c0 < c1)
					ax[2][kk] |= (((uint32_t)1 << (c1 - c0)) - 1) << (l + c0);
			}
			l += len;
			q += len;
			o[2] += len;
			for (int a = 2; a > 0 && o[a] == w->out[a]; a--) {
				o[a] = 0;
				o[a - 1]++;
			}
		}
		uint16_t *m = mask + b * g->ksz;
		for (int64_t kz = 0; kz < w->k[0]; kz++)
			for (int64_t ky = 0; ky < w->k[1]; ky++)
				for (int64_t kx = 0; kx < w->k[2]; kx++)
					*m++ = (uint16_t)(ax[0][kz] & ax[1][ky] & ax[2][kx]);
	}
	for (int64_t b = 0; b < sp->nb; b++) {
		inner[b] = 1;
		for (int64_t t = 0; t < g->ksz; t++)
			inner[b] &= mask[b * g->ksz + t] == (uint16_t)((1u << PN_VL) - 1);
	}
	sp->off = off;
	sp->mask = mask;
	sp->inner = inner;
	return 0;
}

/* VB output vectors from vector b of one channel plane; INNER: vectors
 * whose every tap is inside, read with plain loads. */
#define DEFINE_SAME(NAME, VB, INNER)                                                             \
	static inline void NAME(int64_t K, const same_plan *sp, const float *x, const float *wk, \
				float bias, int64_t b, int64_t osp, float *y)                    \
	{                                                                                        \
		pn_vf acc[VB];                                                                   \
		for (int v = 0; v < VB; v++)                                                     \
			acc[v] = pn_vzero();                                                     \
		const uint16_t *m = sp->mask + b * K;                                            \
		const float *xb = x + b * PN_VL;                                                 \
		for (int64_t t = 0; t < K; t++) {                                                \
			pn_vf wv = pn_vset1(wk[t]);                                              \
			const float *p = xb + sp->off[t];                                        \
			for (int v = 0; v < VB; v++)                                             \
				acc[v] = pn_vfma(wv, INNER ? pn_vload(p + v * PN_VL)               \
							       : pn_vload_bits(p + v * PN_VL, m[v * K + t]), \
						 acc[v]);                                        \
		}                                                                                \
		for (int v = 0; v < VB; v++) {                                                   \
			int64_t q = (b + v) * PN_VL;                                             \
			pn_vf r = pn_vadd(acc[v], pn_vset1(bias));                               \
			if (q + PN_VL <= osp)                                                    \
				pn_vstore(y + q, r);                                             \
			else                                                                     \
				pn_vstore_n(y + q, r, osp - q);                                  \
		}                                                                                \
	}

DEFINE_SAME(same_4, 4, 0)
DEFINE_SAME(same_1, 1, 0)
DEFINE_SAME(same_4_inner, 4, 1)

static int conv_dw_same_f32(pn_kctx *k, const pn_conv_geom *g, const float *x, const float *w,
			    const float *b, float *y)
{
	same_plan sp;
	if (same_init(k, g, &sp))
		return -1;
	int nt = 1;
	if (g->N * g->M * g->osp * g->ksz > PN_PAR_MIN_WORK && !omp_in_parallel())
		nt = omp_get_max_threads();
	#pragma omp parallel for num_threads(nt) schedule(static)
	for (int64_t nc = 0; nc < g->N * g->C; nc++) {
		int64_t c = nc % g->C, bb = 0;
		const float *xc = x + nc * g->isp, *wk = w + c * g->ksz;
		float bias = b ? b[c] : 0.0f, *yc = y + nc * g->osp;
		/* 4 vectors at a time (independent FMA chains), with plain loads
		 * when all 4 are inner. */
		for (; bb + 4 <= sp.nb; bb += 4) {
			if (sp.inner[bb] & sp.inner[bb + 1] & sp.inner[bb + 2] & sp.inner[bb + 3])
				same_4_inner(g->ksz, &sp, xc, wk, bias, bb, g->osp, yc);
			else
				same_4(g->ksz, &sp, xc, wk, bias, bb, g->osp, yc);
		}
		for (; bb < sp.nb; bb++)
			same_1(g->ksz, &sp, xc, wk, bias, bb, g->osp, yc);
	}
	return 0;
}

/* Depthwise channels per item: each phase (packing, taps, unpacking) runs
 * over the batch before the next starts, so that no load waits on the
 * stores just before it (small planes are packed, summed and unpacked in
 * a few dozen cycles each). */
#define DW_BATCH 8

/* Depthwise convolution (one input and one output channel per group):
 * items are DW_BATCH neighbouring channels of one image. */
static void conv_depthwise_f32(const pn_conv_geom *g, const pn_flat *f, const int64_t *toff,
			       const float *x, const float *w, const float *b, float *y, int nt,
			       float *scr)
{
	const int64_t per = TAPS_MB * DIRECT_QC + PN_VL + g->Cg * f->size +
			    DW_BATCH * (f->size + DIRECT_QC);
	const int64_t nbat = (g->C + DW_BATCH - 1) / DW_BATCH;
	#pragma omp parallel for num_threads(nt) schedule(static)
	for (int64_t it = 0; it < g->N * nbat; it++) {
		int64_t n = it / nbat, c0 = it % nbat * DW_BATCH;
		int nb = g->C - c0 < DW_BATCH ? (int)(g->C - c0) : DW_BATCH;
		float *in = scr + per * omp_get_thread_num(), *acc = in + DW_BATCH * f->size;
		for (int i = 0; i < nb; i++)
			pn_flat_pack(f, x + (n * g->C + c0 + i) * g->isp, 0.0f, in + i * f->size);
		for (int64_t q0 = 0; q0 < f->nq; q0 += DIRECT_QC) {
			int64_t q1 = f->nq - q0 < DIRECT_QC ? f->nq : q0 + DIRECT_QC;
			for (int i = 0; i < nb; i++)
				taps_row(g->ksz, w + (c0 + i) * g->ksz, toff, in + i * f->size, q0, q1,
					 acc + i * DIRECT_QC);
			for (int i = 0; i < nb; i++)
				flat_unpack(f, acc + i * DIRECT_QC, q0, q1, b ? b[c0 + i] : 0.0f,
					    y + (n * g->M + c0 + i) * g->osp);
		}
	}
}

/*
 * Direct convolution over the flat layout: out[m][q] = sum over (c, t) of
 * W[m][c][t] * in_c[q + off_t], TAPS_MB output channels at a time.  For
 * groups of few channels (depthwise convolutions have one), where an im2col
 * GEMM per group would have a tiny K and pay its packing per group, each
 * (image, group) packs its own planes and is the parallel unit.  With one
 * group, the image is packed once and each thread computes a contiguous
 * share of the output channels.
 */
static int conv_direct_f32(pn_kctx *k, const pn_conv_geom *g, const pn_flat *f,
			   const int64_t *toff, const float *x, const float *w, const float *b,
			   float *y)
{
	const int64_t K = g->Cg * g->ksz, mblk = (g->M + TAPS_MB - 1) / TAPS_MB;
	const int shared = g->G == 1;
	const int nt = direct_threads(g, f, shared ? mblk : g->N * g->G);
	/* Per thread: flat outputs, and the group's planes unless shared
	 * (depthwise: DW_BATCH of each). */
	const int64_t per = TAPS_MB * DIRECT_QC + PN_VL + (shared ? 0 : g->Cg * f->size) +
			    (g->Cg == 1 && g->Mg == 1 ? DW_BATCH * (f->size + DIRECT_QC) : 0);
	int64_t *off = pn_kscratch(k, sizeof(int64_t) * (size_t)K);
	float *scr = pn_kscratch(k, sizeof(float) * (size_t)(per * nt + (shared ? g->C * f->size : 0)));
	if (!off || !scr)
		return -1;
	/* Tap (c, t) reads plane c at its offset t: the order of W's row. */
	for (int64_t c = 0; c < g->Cg; c++)
		for (int64_t t = 0; t < g->ksz; t++)
			off[c * g->ksz + t] = c * f->size + toff[t];
	if (shared) {
		float *in = scr + per * nt;
		for (int64_t n = 0; n < g->N; n++) {
			/* (if: a team of one still costs a fork-join per image) */
			#pragma omp parallel for if (nt > 1) num_threads(nt) schedule(static)
			for (int64_t c = 0; c < g->C; c++)
				pn_flat_pack(f, x + (n * g->C + c) * g->isp, 0.0f, in + c * f->size);
			#pragma omp parallel if (nt > 1) num_threads(nt)
			{
				int t = omp_get_thread_num(), T = omp_get_num_threads();
				int64_t m0 = mblk * t / T * TAPS_MB, m1 = mblk * (t + 1) / T * TAPS_MB;
				direct_range(g, f, off, in, w, b, n, m0, m1 < g->M ? m1 : g->M,
					     scr + per * t, y);
			}
		}
		return 0;
	}
	if (g->Cg == 1 && g->Mg == 1) {
		conv_depthwise_f32(g, f, toff, x, w, b, y, nt, scr);
		return 0;
	}
	#pragma omp parallel for num_threads(nt) schedule(static)
	for (int64_t it = 0; it < g->N * g->G; it++) {
		int64_t n = it / g->G, gi = it % g->G;
		float *acc = scr + per * omp_get_thread_num(), *in = acc + TAPS_MB * DIRECT_QC + PN_VL;
		for (int64_t c = 0; c < g->Cg; c++)
			pn_flat_pack(f, x + (n * g->C + gi * g->Cg + c) * g->isp, 0.0f, in + c * f->size);
		direct_range(g, f, off, in, w, b, n, gi * g->Mg, (gi + 1) * g->Mg, acc, y);
	}
	return 0;
}

int pn_conv_force_path = -1;

/*
 * Whether the direct path (flat layout in f, tap offsets in toff) should
 * compute g rather than (im2col +) GEMM.  It does whenever its layout
 * applies, measured faster than im2col + GEMM from 3x3 heads on 3x3 images
 * to VGG's 256 channels at 56x56 (bench/gemm.c), but for ungrouped 1x1
 * convolutions, which are a GEMM on the input as it is.
 */
static int use_direct(const pn_conv_geom *g, pn_flat *f, int64_t *toff)
{
	if (pn_conv_force_path == 0 || pn_flat_plan(f, &g->w, toff))
		return 0;
	if (pn_conv_force_path == 1)
		return 1;
	/* Wide dilations on small outputs leave most flat outputs unused. */
	if (f->nq > 4 * g->osp + 64 || g->Cg * f->size > DIRECT_MAX_PACKED)
		return 0;
	return g->G > 1 || !pn_conv_is_pointwise(&g->w);
}

/*
 * Ungrouped convolutions with very small outputs (at most DOT_MAX_N
 * positions per image: SSD heads, 1x1 maps): each output is a dot product
 * of a weight row with its window, and there are too few positions to fill
 * vectors along them (a 3x3 map fills 9 lanes of 16) while the weights,
 * read once, are most of the traffic.  So the vectors run along the
 * reduction: the windows are gathered once into rows colT[q] (im2col
 * transposed, zero-padded to whole vectors), and 2 weight rows x all the
 * positions accumulate lane-wise partial sums, reduced in a fixed order.
 */
#define DOT_MAX_N 12
/* Reduction lengths below this leave the vectors mostly empty. */
#define DOT_MIN_K 64

/* One step of the reduction: k .. k + PN_VL (weights masked to n lanes). */
#define DOT_STEP(MB, QB, LOAD)                                                                   \
	do {                                                                                     \
		pn_vf wv[MB];                                                                    \
		for (int i = 0; i < MB; i++)                                                     \
			wv[i] = LOAD;                                                            \
		for (int q = 0; q < QB; q++) {                                                   \
			pn_vf cv = pn_vload(colT + q * ldc + k);                                 \
			for (int i = 0; i < MB; i++)                                             \
				acc[i][q] = pn_vfma(wv[i], cv, acc[i][q]);                       \
		}                                                                                \
	} while (0)

#define DEFINE_DOT(NAME, MB, QB)                                                                 \
	static void NAME(int64_t K, const float *w, const float *colT, int64_t ldc, float *out, \
			 int64_t ldo)                                                            \
	{                                                                                        \
		pn_vf acc[MB][QB];                                                               \
		for (int i = 0; i < MB; i++)                                                     \
			for (int q = 0; q < QB; q++)                                             \
				acc[i][q] = pn_vzero();                                          \
		int64_t k = 0;                                                                   \
		for (; k + PN_VL <= K; k += PN_VL)                                               \
			DOT_STEP(MB, QB, pn_vload(w + i * K + k));                               \
		if (k < K)                                                                       \
			DOT_STEP(MB, QB, pn_vload_n(w + i * K + k, K - k));                      \
		for (int i = 0; i < MB; i++)                                                     \
			for (int q = 0; q < QB; q++)                                             \
				out[i * ldo + q] = pn_vhsum(acc[i][q]);                          \
	}

#define DOT_PAIR(QB) DEFINE_DOT(dot2_##QB, 2, QB) DEFINE_DOT(dot1_##QB, 1, QB)
DOT_PAIR(1) DOT_PAIR(2) DOT_PAIR(3) DOT_PAIR(4) DOT_PAIR(5) DOT_PAIR(6)
DOT_PAIR(7) DOT_PAIR(8) DOT_PAIR(9) DOT_PAIR(10) DOT_PAIR(11) DOT_PAIR(12)

typedef void (*dot_fn)(int64_t, const float *, const float *, int64_t, float *, int64_t);
#define DOT_ENT(QB) {dot1_##QB, dot2_##QB}
static const dot_fn dot_tab[DOT_MAX_N + 1][2] = {
	{NULL, NULL}, DOT_ENT(1), DOT_ENT(2), DOT_ENT(3), DOT_ENT(4), DOT_ENT(5), DOT_ENT(6),
	DOT_ENT(7), DOT_ENT(8), DOT_ENT(9), DOT_ENT(10), DOT_ENT(11), DOT_ENT(12)};

/* Positions one call takes: 2 x QB accumulators, 2 weight vectors and
 * one column vector must fit the registers (AVX2's 16 hold QB = 4). */
#define DOT_QB (PN_VREGS >= 24 ? DOT_MAX_N : PN_VREGS / 3)

static int use_dot(const pn_conv_geom *g)
{
	return g->G == 1 && g->osp <= DOT_MAX_N && g->C * g->ksz >= DOT_MIN_K &&
	       pn_conv_force_path != 0 && pn_conv_force_path != 1;
}

void pn_conv_gather_windows(const pn_conv_geom *g, const float *x, int64_t ldc, float *colT)
{
	const pn_window *w = &g->w;
	for (int64_t q = 0; q < g->osp; q++) {
		int64_t o[3] = {q / (w->out[1] * w->out[2]), q / w->out[2] % w->out[1], q % w->out[2]};
		float *r = colT + q * ldc;
		for (int64_t t = 0; t < g->ksz; t++) {
			int64_t kk[3] = {t / (w->k[1] * w->k[2]), t / w->k[2] % w->k[1], t % w->k[2]};
			int64_t i[3], in = 1;
			for (int a = 0; a < 3; a++) {
				i[a] = o[a] * w->s[a] - w->pb[a] + kk[a] * w->d[a];
				in &= i[a] >= 0 && i[a] < w->in[a];
			}
			int64_t off = (i[0] * w->in[1] + i[1]) * w->in[2] + i[2];
			for (int64_t c = 0; c < g->C; c++)
				r[c * g->ksz + t] = in ? x[c * g->isp + off] : 0.0f;
		}
		for (int64_t j = g->C * g->ksz; j < ldc; j++)
			r[j] = 0.0f;
	}
}

/* Images gathered at once: a batch of 1x1 maps (a batch variant of an SE
 * block or a head) is one parallel loop, not one fork-join per image. */
#define DOT_GATHER_FLOATS (1 << 16)

static void dot_item(const pn_conv_geom *g, const float *w, const float *b, const float *colT,
		     int64_t ldc, int64_t pr, float *yn)
{
	const int64_t K = g->C * g->ksz, N = g->osp, m = 2 * pr;
	int mb = g->M - m < 2 ? 1 : 2;
	/* each output's sum is its own: cutting the positions into calls
	 * changes no result */
	for (int64_t q = 0; q < N; q += DOT_QB) {
		int64_t qb = N - q < DOT_QB ? N - q : DOT_QB;
		dot_tab[qb][mb - 1](K, w + m * K, colT + q * ldc, ldc, yn + m * N + q, N);
	}
	for (int i = 0; i < mb && b; i++)
		for (int64_t q = 0; q < N; q++)
			yn[(m + i) * N + q] += b[m + i];
}

static int conv_dot_f32(pn_kctx *k, const pn_conv_geom *g, const float *x, const float *w,
			const float *b, float *y)
{
	const int64_t K = g->C * g->ksz, ldc = (K + PN_VL - 1) / PN_VL * PN_VL, N = g->osp;
	const int64_t pairs = (g->M + 1) / 2, per_image = N * ldc;
	int64_t chunk = DOT_GATHER_FLOATS / per_image;
	chunk = chunk < 1 ? 1 : chunk < g->N ? chunk : g->N;
	float *colT = pn_kscratch(k, sizeof(float) * (size_t)(chunk * per_image));
	if (!colT)
		return -1;
	for (int64_t n0 = 0; n0 < g->N; n0 += chunk) {
		const int64_t cnt = g->N - n0 < chunk ? g->N - n0 : chunk, items = cnt * pairs;
		for (int64_t i = 0; i < cnt; i++)
			pn_conv_gather_windows(g, x + (n0 + i) * g->C * g->isp, ldc, colT + i * per_image);
		int nt = 1;
		if (cnt * g->M * N * K > PN_PAR_MIN_WORK && !omp_in_parallel())
			nt = omp_get_max_threads();
		nt = nt < items ? nt : (int)items;
		#pragma omp parallel for if (nt > 1) num_threads(nt) schedule(static)
		for (int64_t it = 0; it < items; it++) {
			int64_t i = it / pairs;
			dot_item(g, w, b, colT + i * per_image, ldc, it % pairs,
				 y + (n0 + i) * g->M * N);
		}
	}
	return 0;
}

/* --- dispatch ----------------------------------------------------------------------- */

int pn_conv_direct_f32(pn_kctx *k, const pn_conv_geom *g, const float *x, const float *w,
		       const float *b, float *y)
{
	pn_flat f;
	int64_t *toff = pn_kscratch(k, sizeof(int64_t) * (size_t)g->ksz);
	if (!toff)
		return -1;
	if (use_dot(g))
		return conv_dot_f32(k, g, x, w, b, y);
	if (!use_direct(g, &f, toff))
		return 1;
	return same_applies(g) ? conv_dw_same_f32(k, g, x, w, b, y)
			       : conv_direct_f32(k, g, &f, toff, x, w, b, y);
}
