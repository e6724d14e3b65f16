/*
 * conv_q8_dw.c - the depthwise convolutions of the 8-bit chains
 * (conv_q8.c's pn_conv_q8_run sends them here): one input and one output
 * channel per group, as in MobileNets, too few taps per output for the
 * GEMM.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "common/assert.h"
#include "runtime/kernel.h"
#include "runtime/ops/conv.h"
#include "runtime/ops/q8_out.h"
#include "runtime/ops/vec.h"

/*
 * Depthwise convolutions have too few taps per output for the GEMM.  Their
 * sums are taken in float32 instead, on x - x_zp and w as floats: every
 * product and partial sum is an integer of magnitude below
 * 255 * 128 * taps < 2^24 (PN_Q8_DW_KMAX bounds the taps), so float32 holds
 * each exactly, in any order, fused multiply-adds or not: the same integers
 * as the GEMM would sum.
 *
 * Channels go in batches of DW_CB = 16, interleaved: a position's 16
 * channels are one AVX-512 vector (two of AVX2), and a tap's 16 weights
 * another, so every tap of every output is one fused multiply-add of whole
 * vectors, whatever the plane's width (a 7 x 7 plane loses nothing to rows
 * shorter than a vector, as it would one channel at a time).  The planes
 * come in and go out through 16 x 16 byte transposes.
 *
 * A batch is taken in bands of output rows.  A band's input rows (its
 * slab) are converted once into floats with the padding around them
 * (0, which is x_zp - x_zp): slab position (zz, yy, xx) is input
 * (z0 + zz, y0 + yy, xx - pb), DW_CB floats each.  Then each output row's
 * sums, then the band's requantization, over its positions as one flat
 * range (a band's output rows are consecutive in the output plane).
 */
#define DW_CB 16
#define DW_NV (DW_CB / PN_VL)    /* vectors per position: 1 (AVX-512), 2 (AVX2), 4 */
/* Outputs of a row summed together: 8 vectors of sums in flight (an
 * AVX-512 machine's fused multiply-adds take 4 cycles, two a cycle). */
#define DW_XB (8 / DW_NV > 1 ? 8 / DW_NV : 1)
/* Floats of a slab: a band's input rows stay in L2 while its rows of
 * outputs are summed (a band is at least one output row, whatever this). */
#define DW_SLAB_BUDGET ((int64_t)1 << 15)

typedef struct dw_geom {
	int64_t X;           /* slab columns: padded input width, at least what the outputs reach */
	int64_t zd;          /* slab depth: (k0 - 1) d0 + 1 */
	int64_t ry;          /* slab rows the taps of one output row reach: (k1 - 1) d1 + 1 */
	int64_t rows;        /* slab rows of a full band: (band - 1) s1 + ry */
	int64_t band;        /* output rows per band */
	int64_t *off;        /* per tap: its floats from the slab position of its output */
} dw_geom;

/* Padded extent of axis a: the input with its padding, and at least what
 * the last output's window reaches. */
static int64_t dw_extent(const pn_window *W, int a)
{
	int64_t e = W->in[a] + W->pb[a] + W->pe[a];
	int64_t reach = (W->out[a] - 1) * W->s[a] + (W->k[a] - 1) * W->d[a] + 1;
	return e > reach ? e : reach;
}

int pn_conv_q8_dw_fits(const pn_conv_geom *g)
{
	const pn_window *W = &g->w;
	if (g->Cg != 1 || g->Mg != 1 || g->ksz > PN_Q8_DW_KMAX)
		return 0;
	/* one band of one output row must not be far larger than the planes
	 * (a dilation of thousands on a small padded input would make it vast) */
	double slab = (double)((W->k[0] - 1) * W->d[0] + 1) * (double)((W->k[1] - 1) * W->d[1] + 1) *
		      (double)dw_extent(W, 2);
	return slab <= 4.0 * (double)(g->isp + g->osp) + 4096;
}

static void dw_geom_init(const pn_window *W, dw_geom *G, int64_t *off)
{
	G->X = dw_extent(W, 2);
	G->zd = (W->k[0] - 1) * W->d[0] + 1;
	G->ry = (W->k[1] - 1) * W->d[1] + 1;
	int64_t fit = DW_SLAB_BUDGET / (G->zd * G->X * DW_CB);
	G->band = fit > G->ry ? (fit - G->ry) / W->s[1] + 1 : 1;
	if (G->band > W->out[1])
		G->band = W->out[1];
	G->rows = (G->band - 1) * W->s[1] + G->ry;
	/* a slab row holds the padding before, the whole input row (dw_fill
	 * converts whole rows) and what the taps reach */
	PN_ASSERT(G->band >= 1 && G->X >= W->pb[2] + W->in[2]);
	G->off = off;
	int64_t t = 0;
	for (int64_t kz = 0; kz < W->k[0]; kz++)
		for (int64_t ky = 0; ky < W->k[1]; ky++)
			for (int64_t kx = 0; kx < W->k[2]; kx++)
				off[t++] = ((kz * W->d[0] * G->rows + ky * W->d[1]) * G->X +
					    kx * W->d[2]) * DW_CB;
}

/* --- 16 x 16 bytes: channels to positions and back ---------------------------------- */

#if defined(__SSE2__)
typedef __m128i dw_b16;
static inline dw_b16 dw_b16_load(const uint8_t *p) { return _mm_loadu_si128((const __m128i *)p); }
static inline void dw_b16_store(uint8_t *p, dw_b16 v) { _mm_storeu_si128((__m128i *)p, v); }

/* r[i][j] -> r[j][i]: four rounds of interleaving row i with row i + 8
 * (each round moves the row index's bits one place; after four they are
 * the column's). */
static inline void dw_transpose(dw_b16 r[16])
{
	for (int round = 0; round < 4; round++) {
		dw_b16 t[16];
		for (int i = 0; i < 8; i++) {
			t[2 * i] = _mm_unpacklo_epi8(r[i], r[i + 8]);
			t[2 * i + 1] = _mm_unpackhi_epi8(r[i], r[i + 8]);
		}
		memcpy(r, t, sizeof(t));
	}
}
#else
typedef struct { uint8_t b[16]; } dw_b16;
static inline dw_b16 dw_b16_load(const uint8_t *p)
{
	dw_b16 v;
	memcpy(v.b, p, 16);
	return v;
}
static inline void dw_b16_store(uint8_t *p, dw_b16 v) { memcpy(p, v.b, 16); }
static inline void dw_transpose(dw_b16 r[16])
{
	dw_b16 t[16];
	for (int i = 0; i < 16; i++)
		for (int j = 0; j < 16; j++)
			t[j].b[i] = r[i].b[j];
	memcpy(r, t, sizeof(t));
}
#endif

/* The first n bytes of v to p (n <= 16). */
static inline void dw_b16_store_n(uint8_t *p, dw_b16 v, int64_t n)
{
	if (n == 16) {
		dw_b16_store(p, v);
		return;
	}
	uint8_t t[16];
	dw_b16_store(t, v);
	memcpy(p, t, (size_t)n);
}

/* 16 bytes as 16 floats b - zp at d. */
static inline void dw_widen(dw_b16 b, float zp, float *d)
{
#if defined(__AVX512F__)
	_mm512_storeu_ps(d, _mm512_sub_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(b)),
					  _mm512_set1_ps(zp)));
#elif defined(__AVX2__)
	const __m256 z = _mm256_set1_ps(zp);
	_mm256_storeu_ps(d, _mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b)), z));
	_mm256_storeu_ps(d + 8, _mm256_sub_ps(_mm256_cvtepi32_ps(
						      _mm256_cvtepu8_epi32(_mm_srli_si128(b, 8))), z));
#elif defined(__SSE2__)
	const __m128i zero = _mm_setzero_si128();
	const __m128 z = _mm_set1_ps(zp);
	__m128i lo = _mm_unpacklo_epi8(b, zero), hi = _mm_unpackhi_epi8(b, zero);
	_mm_storeu_ps(d, _mm_sub_ps(_mm_cvtepi32_ps(_mm_unpacklo_epi16(lo, zero)), z));
	_mm_storeu_ps(d + 4, _mm_sub_ps(_mm_cvtepi32_ps(_mm_unpackhi_epi16(lo, zero)), z));
	_mm_storeu_ps(d + 8, _mm_sub_ps(_mm_cvtepi32_ps(_mm_unpacklo_epi16(hi, zero)), z));
	_mm_storeu_ps(d + 12, _mm_sub_ps(_mm_cvtepi32_ps(_mm_unpackhi_epi16(hi, zero)), z));
#else
	for (int i = 0; i < 16; i++)
		d[i] = (float)b.b[i] - zp;
#endif
}

/* --- the three phases of a band ----------------------------------------------------- */

/* The batch's channel planes pl[16] (8-bit; the batch's missing channels
 * repeat its first), flat positions [p0, p1) of whole input rows, into the
 * slab from row start dst (column pb on): positions p0.. go to dst, dst +
 * DW_CB, ..., the next input row X DW_CB floats further.  A last block
 * reads no byte past the plane when that would leave the tensor (end). */
static void dw_convert(const uint8_t *const *pl, int64_t p0, int64_t p1, int64_t in2, int64_t X,
		       float zp, const uint8_t *end, float *dst)
{
	int64_t col = 0;
	for (int64_t p = p0; p < p1; p += 16) {
		const int64_t n = p1 - p < 16 ? p1 - p : 16;
		dw_b16 r[16];
		for (int i = 0; i < 16; i++) {
			const uint8_t *s = pl[i] + p;
			if (n == 16 || end - s >= 16) {
				r[i] = dw_b16_load(s);
			} else {
				uint8_t t[16] = {0};
				memcpy(t, s, (size_t)n);
				r[i] = dw_b16_load(t);
			}
		}
		dw_transpose(r);
		for (int64_t j = 0; j < n; j++) {
			dw_widen(r[j], zp, dst + col * DW_CB);
			if (++col == in2) {
				col = 0;
				dst += X * DW_CB;
			}
		}
	}
}

/* The slab of the band whose first output is (oz, oy0): rows outside the
 * input and columns of padding 0, the rest converted. */
static void dw_fill(const pn_window *W, const dw_geom *G, const uint8_t *const *pl, int64_t oz,
		    int64_t oy0, int64_t rows, float zp, const uint8_t *end, float *slab)
{
	const int64_t in1 = W->in[1], in2 = W->in[2], pb = W->pb[2];
	const int64_t y0 = oy0 * W->s[1] - W->pb[1];
	const size_t row_bytes = sizeof(float) * (size_t)(G->X * DW_CB);
	PN_ASSERT(rows <= G->rows);
	for (int64_t zz = 0; zz < G->zd; zz++) {
		const int64_t z = oz * W->s[0] - W->pb[0] + zz;
		float *plane = slab + zz * G->rows * G->X * DW_CB;
		int64_t ya = y0 < 0 ? 0 : y0, yb = y0 + rows < in1 ? y0 + rows : in1;
		if (z < 0 || z >= W->in[0] || ya >= yb) {
			memset(plane, 0, row_bytes * (size_t)rows);
			continue;
		}
		for (int64_t yy = 0; yy < rows; yy++) {
			float *row = plane + yy * G->X * DW_CB;
			if (y0 + yy < ya || y0 + yy >= yb) {
				memset(row, 0, row_bytes);
				continue;
			}
			memset(row, 0, sizeof(float) * (size_t)(pb * DW_CB));
			memset(row + (pb + in2) * DW_CB, 0,
			       sizeof(float) * (size_t)((G->X - pb - in2) * DW_CB));
		}
		dw_convert(pl, (z * in1 + ya) * in2, (z * in1 + yb) * in2, in2, G->X, zp, end,
			   plane + ((ya - y0) * G->X + pb) * DW_CB);
	}
}

/* XB outputs of a row (their slab positions step floats apart from src)
 * into acc, DW_CB floats each: every tap one fused multiply-add per vector. */
static inline __attribute__((always_inline)) void dw_block(int XB, int64_t ksz,
							   const int64_t *off, const float *wv,
							   const float *src, int64_t step,
							   float *acc)
{
	pn_vf a[DW_XB][DW_NV];
	for (int j = 0; j < XB; j++)
		for (int v = 0; v < DW_NV; v++)
			a[j][v] = pn_vzero();
	for (int64_t t = 0; t < ksz; t++) {
		const float *p = src + off[t];
		for (int v = 0; v < DW_NV; v++) {
			const pn_vf w = pn_vload(wv + t * DW_CB + v * PN_VL);
			for (int j = 0; j < XB; j++)
				a[j][v] = pn_vfma(w, pn_vload(p + j * step + v * PN_VL), a[j][v]);
		}
	}
	for (int j = 0; j < XB; j++)
		for (int v = 0; v < DW_NV; v++)
			pn_vstore(acc + j * DW_CB + v * PN_VL, a[j][v]);
}

/* One output row's sums (ox_n outputs, slab row start src) into acc:
 * blocks of DW_XB, then one block of what is left (a 7-wide row is one
 * block of 7, not 7 of 1). */
static void dw_row_sums(const pn_window *W, const dw_geom *G, int64_t ksz, const float *wv,
			const float *src, float *acc)
{
	const int64_t ox_n = W->out[2], step = W->s[2] * DW_CB;
	for (int64_t ox = 0; ox < ox_n; ox += DW_XB) {
		const float *s = src + ox * step;
		float *a = acc + ox * DW_CB;
		switch (ox_n - ox < DW_XB ? ox_n - ox : DW_XB) {
#define DW_CASE(n)                                                   \
	case n:                                                      \
		dw_block(n < DW_XB ? n : DW_XB, ksz, G->off, wv, s, step, a); \
		break;
			DW_CASE(1) DW_CASE(2) DW_CASE(3) DW_CASE(4) DW_CASE(5) DW_CASE(6) DW_CASE(7)
#undef DW_CASE
		default:
			dw_block(DW_XB, ksz, G->off, wv, s, step, a);
			break;
		}
	}
}

/* One position's 16 channel sums as 16 output bytes (mult, bias: the
 * batch's channels). */
static inline dw_b16 dw_requant16(const q8_out *o, const float *mult, const float *bias,
				  const float *acc)
{
#if Q8_VEC == 512
	return q8_bytes16(o, q8_finish_lanes(o, pn_vload(mult), pn_vload(bias), pn_vload(acc)));
#elif Q8_VEC == 256
	return q8_pack16(o, q8_finish_lanes(o, pn_vload(mult), pn_vload(bias), pn_vload(acc)),
			 q8_finish_lanes(o, pn_vload(mult + 8), pn_vload(bias + 8),
					 pn_vload(acc + 8)));
#else
	uint8_t b[16];
	for (int i = 0; i < 16; i++) {
		float t = q8_finish1(o, mult[i], bias[i], acc[i]);
		b[i] = o->u8 ? (uint8_t)t : (uint8_t)(int8_t)t;
	}
	return dw_b16_load(b);
#endif
}

/* The band's npos sums (acc, DW_CB floats each) requantized: 16 positions
 * at a time, transposed to 16 channel rows, the batch's cn channels
 * written from y[i] on.  acc has room for a last block's unused lanes. */
static void dw_requant(const q8_out *o, const float *mult, const float *bias, const float *acc,
		       int64_t npos, int cn, uint8_t *const *y)
{
	for (int64_t p = 0; p < npos; p += 16) {
		const int64_t n = npos - p < 16 ? npos - p : 16;
		dw_b16 r[16];
		for (int j = 0; j < 16; j++)
			r[j] = dw_requant16(o, mult, bias, acc + (p + j) * DW_CB);
		dw_transpose(r);
		for (int i = 0; i < cn; i++)
			dw_b16_store_n(y[i] + p, r[i], n);
	}
}

/* --- the convolution ---------------------------------------------------------------- */

/* Per batch of channels: each tap's DW_CB weights (made once per session
 * when the weights are fixed), each channel's scale and bias; 0 in the
 * lanes past the last channel. */
typedef struct dw_consts {
	float *w;            /* [batch][tap][DW_CB] */
	float *mult, *bias;  /* [batch][DW_CB] */
} dw_consts;

static void dw_weights_fill(const pn_conv_geom *g, const int8_t *w, int64_t nbat, float *wv)
{
	for (int64_t b = 0; b < nbat; b++)
		for (int64_t t = 0; t < g->ksz; t++)
			for (int i = 0; i < DW_CB; i++) {
				const int64_t c = b * DW_CB + i;
				wv[(b * g->ksz + t) * DW_CB + i] = c < g->C ? (float)w[c * g->ksz + t] : 0;
			}
}

static void dw_scales_fill(const pn_conv_geom *g, const float *bias, const float *mult,
			   int64_t nbat, dw_consts *K)
{
	for (int64_t c = 0; c < nbat * DW_CB; c++) {
		K->mult[c] = c < g->C ? mult[c] : 0;
		K->bias[c] = c < g->C && bias ? bias[c] : 0;
	}
}

/* Per-thread buffers: the slab and the band's sums. */
typedef struct dw_bufs {
	float *slab, *acc;
} dw_bufs;

/* Batch bt of image n through every band. */
static void dw_batch(const pn_conv_geom *g, const pn_conv_q8 *a, const dw_geom *G,
		     const dw_consts *K, const q8_out *o, int64_t n, int64_t bt, dw_bufs B,
		     uint8_t *yt)
{
	const pn_window *W = &g->w;
	const int64_t c0 = bt * DW_CB;
	const int cn = g->C - c0 < DW_CB ? (int)(g->C - c0) : DW_CB;
	const uint8_t *x = a->x->data, *end = x + g->N * g->C * g->isp;
	const uint8_t *pl[DW_CB];
	for (int i = 0; i < DW_CB; i++)
		pl[i] = x + (n * g->C + c0 + (i < cn ? i : 0)) * g->isp;
	const float *wv = K->w + bt * g->ksz * DW_CB;
	const int64_t ox_n = W->out[2];
	for (int64_t oz = 0; oz < W->out[0]; oz++)
		for (int64_t oy0 = 0; oy0 < W->out[1]; oy0 += G->band) {
			const int64_t nr = W->out[1] - oy0 < G->band ? W->out[1] - oy0 : G->band;
			dw_fill(W, G, pl, oz, oy0, (nr - 1) * W->s[1] + G->ry, (float)a->x_zp, end,
				B.slab);
			for (int64_t r = 0; r < nr; r++)
				dw_row_sums(W, G, g->ksz, wv, B.slab + r * W->s[1] * G->X * DW_CB,
					    B.acc + r * ox_n * DW_CB);
			uint8_t *y[DW_CB];
			for (int i = 0; i < cn; i++)
				y[i] = yt + (n * g->C + c0 + i) * g->osp + (oz * W->out[1] + oy0) * ox_n;
			dw_requant(o, K->mult + c0, K->bias + c0, B.acc, nr * ox_n, cn, y);
		}
}

int pn_conv_q8_depthwise(pn_kctx *k, const pn_conv_geom *g, const pn_conv_q8 *a,
			 const float *mult)
{
	const pn_window *W = &g->w;
	PN_ASSERT(pn_conv_q8_dw_fits(g));    /* the taps keep every sum exact in float32 */
	dw_geom G;
	const int64_t nbat = (g->C + DW_CB - 1) / DW_CB, items = g->N * nbat;
	int64_t *off = malloc(sizeof(int64_t) * (size_t)g->ksz);
	const size_t wbytes = sizeof(float) * (size_t)(nbat * g->ksz * DW_CB);
	int fresh = 0;
	/* tag 1: a node whose planes change size may take the GEMM path (tag 0) too */
	float *kept = a->w_fixed ? pn_kmemo(k, 1, wbytes, &fresh) : NULL;
	float *own = kept ? NULL : malloc(wbytes);
	fresh = fresh || own;    /* a buffer of its own is always filled */
	dw_consts K = {
		.w = kept ? kept : own,
		.mult = malloc(sizeof(float) * (size_t)(nbat * DW_CB)),
		.bias = malloc(sizeof(float) * (size_t)(nbat * DW_CB)),
	};
	int nt = 1;
	if (items > 1 && g->N * g->C * g->osp * g->ksz > PN_PAR_MIN_WORK && !omp_in_parallel())
		nt = omp_get_max_threads() < items ? omp_get_max_threads() : (int)items;
	float *scr = NULL;
	int64_t per = 0;
	if (off) {
		dw_geom_init(W, &G, off);
		/* per thread: the slab, then the band's sums with a last block's
		 * 16 positions of slack; 64-byte multiples */
		const int64_t slab = G.zd * G.rows * G.X * DW_CB;
		per = (slab + (G.band * W->out[2] + 16) * DW_CB + 15) / 16 * 16;
		scr = aligned_alloc(64, sizeof(float) * (size_t)(per * nt));
		if (scr)    /* a last block's unused lanes are read: defined, not stale */
			memset(scr, 0, sizeof(float) * (size_t)(per * nt));
	}
	if (!off || !K.w || !K.mult || !K.bias || !scr) {
		free(off);
		free(own);
		free(K.mult);
		free(K.bias);
		free(scr);
		return pn_kfail(k, "out of memory");
	}
	if (fresh)
		dw_weights_fill(g, a->w->data, nbat, K.w);
	dw_scales_fill(g, a->bias ? a->bias->data : NULL, mult, nbat, &K);
	const q8_out o = q8_out_of(a, NULL, mult, 0);
	uint8_t *y = k->out[0]->data;
	#pragma omp parallel for num_threads(nt) schedule(static)
	for (int64_t it = 0; it < items; it++) {
		float *mine = scr + per * omp_get_thread_num();
		dw_bufs B = {.slab = mine, .acc = mine + G.zd * G.rows * G.X * DW_CB};
		dw_batch(g, a, &G, &K, &o, it / nbat, it % nbat, B, y);
	}
	free(off);
	free(own);
	free(K.mult);
	free(K.bias);
	free(scr);
	return 0;
}
