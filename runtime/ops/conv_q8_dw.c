/*
 * conv_q8_dw.c - the depthwise convolutions of the 8-bit chains
 * (conv_q8.c's pn_conv_q8_run sends them here): one input and one output
 * channel per group, as in MobileNets, too few taps per output for the
 * GEMM.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "runtime/kernel.h"
#include "runtime/ops/conv.h"
#include "runtime/ops/q8_out.h"
#include "runtime/ops/vec.h"

/*
 * Depthwise convolutions (one input and one output channel per group, as
 * in MobileNets) have too few taps per output for the GEMM.  Their sums are
 * taken in float32 instead, on x - x_zp and w as floats: every product and
 * partial sum is an integer of magnitude below 255 * 128 * taps < 2^24
 * (PN_Q8_DW_KMAX bounds the taps), so float32 holds each exactly, in any order,
 * fused multiply-adds or not: the same integers as the GEMM would sum.
 *
 * Each channel plane is converted once into a padded float plane (the
 * padding 0, which is x_zp - x_zp) split into phases by the stride on every
 * axis: padded position (z, y, x) is stored in phase plane (z % sz, y % sy,
 * x % sx) at (z / sz, y / sy, x / sx).  Tap t of output (oz, oy, ox) then
 * reads its phase plane at (oz, oy, ox) plus a fixed offset, so the outputs
 * are computed over one flat index q = (oz e1 + oy) e2 + ox of the phase
 * extents e[]: every tap is one fused multiply-add over whole vectors, and
 * the q whose ox or oy lie past the output are computed and dropped (a
 * 7 x 7 plane wastes 2 columns of 9, not 9 of 16 as a vector per row would).
 */
typedef struct dw_run {
	int64_t dst;         /* offset in the phase planes */
	int64_t src;         /* offset in the input plane */
	int64_t n;           /* input columns, every s-th */
} dw_run;

typedef struct dw_plan {
	int64_t e[3];        /* phase plane extents */
	int64_t phase;       /* floats per phase plane: e0 e1 e2 */
	int64_t plane;       /* floats of all phases */
	int64_t nq;          /* flat outputs computed: (out0 - 1) e1 e2 + (out1 - 1) e2 + out2 */
	int64_t *off;        /* per tap: its phase plane's start plus its offset in it */
	dw_run *run;         /* per input row and column phase: one run, in dst order */
	int64_t nrun;
} dw_plan;

/* Padded extent of axis a: the input with its padding, and at least what
 * the last output's window reaches. */
static int64_t dw_extent(const pn_window *W, int a)
{
	int64_t e = W->in[a] + W->pb[a] + W->pe[a];
	int64_t reach = (W->out[a] - 1) * W->s[a] + (W->k[a] - 1) * W->d[a] + 1;
	return e > reach ? e : reach;
}

static int dw_run_cmp(const void *a, const void *b)
{
	int64_t x = ((const dw_run *)a)->dst, y = ((const dw_run *)b)->dst;
	return (x > y) - (x < y);
}

int pn_conv_q8_dw_fits(const pn_conv_geom *g)
{
	const pn_window *W = &g->w;
	if (g->Cg != 1 || g->Mg != 1 || g->ksz > PN_Q8_DW_KMAX)
		return 0;
	/* the phase planes hold prod over axes of s ceil(extent / s) floats,
	 * the padded input prod of extent */
	double phases = 1, padded = 1;
	for (int a = 0; a < 3; a++) {
		const int64_t e = dw_extent(W, a);
		phases *= (double)W->s[a] * (double)((e + W->s[a] - 1) / W->s[a]);
		padded *= (double)e;
	}
	return phases <= 2 * padded + 4096;
}

/* The plan's sizes, then its tables: off[ksz] and run[in0 in1 s2] (the
 * divisions by the strides happen here, once, not per channel). */
static void dw_plan_init(const pn_window *W, dw_plan *P, int64_t *off, dw_run *run)
{
	for (int a = 0; a < 3; a++)
		P->e[a] = (dw_extent(W, a) + W->s[a] - 1) / W->s[a];
	P->phase = P->e[0] * P->e[1] * P->e[2];
	P->plane = P->phase * W->s[0] * W->s[1] * W->s[2];
	P->nq = ((W->out[0] - 1) * P->e[1] + W->out[1] - 1) * P->e[2] + W->out[2];
	P->off = off;
	P->run = run;
	int64_t t = 0;
	for (int64_t kz = 0; kz < W->k[0]; kz++)
		for (int64_t ky = 0; ky < W->k[1]; ky++)
			for (int64_t kx = 0; kx < W->k[2]; kx++) {
				const int64_t c[3] = {kz * W->d[0], ky * W->d[1], kx * W->d[2]};
				int64_t ph = (c[0] % W->s[0] * W->s[1] + c[1] % W->s[1]) * W->s[2] +
					     c[2] % W->s[2];
				off[t++] = ph * P->phase +
					   (c[0] / W->s[0] * P->e[1] + c[1] / W->s[1]) * P->e[2] +
					   c[2] / W->s[2];
			}
	/* phase p of a row holds padded columns c = j s + p, input column c - pb */
	const int64_t s = W->s[2], pb = W->pb[2], in = W->in[2];
	P->nrun = 0;
	for (int64_t z = 0; z < W->in[0]; z++)
		for (int64_t r = 0; r < W->in[1]; r++) {
			int64_t pz = z + W->pb[0], py = r + W->pb[1];
			int64_t ph = (pz % W->s[0] * W->s[1] + py % W->s[1]) * s;
			int64_t row = ph * P->phase + (pz / W->s[0] * P->e[1] + py / W->s[1]) * P->e[2];
			for (int64_t p = 0; p < s; p++) {
				int64_t j0 = pb > p ? (pb - p + s - 1) / s : 0;
				int64_t j1 = in + pb - p > 0 ? (in + pb - p - 1) / s + 1 : 0;
				if (j1 > j0)
					run[P->nrun++] = (dw_run){
						.dst = row + p * P->phase + j0,
						.src = (z * W->in[1] + r) * in + j0 * s + p - pb,
						.n = j1 - j0};
			}
		}
	qsort(run, (size_t)P->nrun, sizeof(dw_run), dw_run_cmp);
}

/* d[j] = src[j * s] - zp for j < n.  Strides 1 and 2, the common ones, in
 * vectors: rows are short (a 14-wide plane would be all loop remainder).
 * With AVX-512 a last part of under 16 is stored as a whole vector, its
 * lanes past n zero (a masked store costs this machine's kind, AMD Zen 4,
 * many plain ones): d[n, n + 15) must be padding or written later. */
static void dw_run_to_f32(float *restrict d, const uint8_t *restrict src, int64_t n, int64_t s,
			  float zp)
{
	int64_t j = 0;
#if defined(__AVX512BW__) && defined(__AVX512VL__)
	const __m512 z = _mm512_set1_ps(zp);
	if (s == 1) {
		/* whole vectors with plain loads and stores, the last with masks */
		for (; j + 16 <= n; j += 16) {
			__m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(src + j)));
			_mm512_storeu_ps(d + j, _mm512_sub_ps(_mm512_cvtepi32_ps(v), z));
		}
		if (j < n) {
			__mmask16 m = (__mmask16)((1u << (n - j)) - 1);
			__m512i v = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, src + j));
			_mm512_storeu_ps(d + j, _mm512_maskz_sub_ps(m, _mm512_cvtepi32_ps(v), z));
			j = n;
		}
	}
	else if (s == 2)
		for (; j < n; j += 16) {
			/* the 16-bit lanes' low bytes are the even elements; the last
			 * pair's odd byte is past the run when n - j < 16 */
			int64_t b = 2 * (n - j) - 1;
			__m256i w = b >= 32 ? _mm256_loadu_si256((const __m256i *)(src + 2 * j))
					    : _mm256_maskz_loadu_epi8((__mmask32)((1u << b) - 1), src + 2 * j);
			__m512i v = _mm512_cvtepu16_epi32(_mm256_and_si256(w, _mm256_set1_epi16(0xff)));
			__mmask16 k = n - j >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - j)) - 1);
			_mm512_storeu_ps(d + j, _mm512_maskz_sub_ps(k, _mm512_cvtepi32_ps(v), z));
		}
#elif defined(__AVX2__)
	const __m256 z = _mm256_set1_ps(zp);
	if (s == 1)
		for (; j + 8 <= n; j += 8) {
			__m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(src + j)));
			_mm256_storeu_ps(d + j, _mm256_sub_ps(_mm256_cvtepi32_ps(v), z));
		}
	else if (s == 2)
		for (; j + 8 <= n; j += 8) {
			/* 16 bytes from src + 2j: the last odd one is read only when
			 * the run goes on past it */
			if (2 * (j + 8) > 2 * (n - 1) + 1)
				break;
			__m128i w = _mm_loadu_si128((const __m128i *)(src + 2 * j));
			__m256i v = _mm256_cvtepu16_epi32(_mm_and_si128(w, _mm_set1_epi16(0xff)));
			_mm256_storeu_ps(d + j, _mm256_sub_ps(_mm256_cvtepi32_ps(v), z));
		}
#endif
	for (; j < n; j++)
		d[j] = (float)src[j * s] - zp;
}

/* Plane x (uint8) into buf as floats x - zp, in the padded phase layout.
 * The runs go in their order in buf, so that what a run's last vector
 * writes past its end (zeros) is padding or the place of a later run: the
 * padding stays the 0 the buffer was made with. */
static void dw_convert(const pn_window *W, const dw_plan *P, const uint8_t *x, float zp,
		       float *buf)
{
	for (int64_t r = 0; r < P->nrun; r++)
		dw_run_to_f32(buf + P->run[r].dst, x + P->run[r].src, P->run[r].n, W->s[2], zp);
}

/* VB vectors of sums from flat output q0 into acc. */
static inline __attribute__((always_inline)) void dw_vectors(int VB, int64_t ksz,
							     const int64_t *off, const float *wf,
							     const float *buf, int64_t q0, float *acc)
{
	pn_vf a[4];
	for (int v = 0; v < VB; v++)
		a[v] = pn_vzero();
	for (int64_t t = 0; t < ksz; t++) {
		pn_vf wv = pn_vset1(wf[t]);
		const float *p = buf + off[t] + q0;
		for (int v = 0; v < VB; v++)
			a[v] = pn_vfma(wv, pn_vload(p + v * PN_VL), a[v]);
	}
	for (int v = 0; v < VB; v++)
		pn_vstore(acc + q0 + v * PN_VL, a[v]);
}

/* The flat sums of one channel (plane buf, weights wf) into acc: blocks of
 * 4 vectors (4 independent chains of fused multiply-adds), the last block
 * with what is left. */
static void dw_sums(const dw_plan *P, int64_t ksz, const float *wf, const float *buf, float *acc)
{
	for (int64_t q0 = 0; q0 < P->nq; q0 += 4 * PN_VL) {
		switch ((P->nq - q0 + PN_VL - 1) / PN_VL) {
		case 1:
			dw_vectors(1, ksz, P->off, wf, buf, q0, acc);
			break;
		case 2:
			dw_vectors(2, ksz, P->off, wf, buf, q0, acc);
			break;
		case 3:
			dw_vectors(3, ksz, P->off, wf, buf, q0, acc);
			break;
		default:
			dw_vectors(4, ksz, P->off, wf, buf, q0, acc);
			break;
		}
	}
}

/* One channel's flat sums acc requantized into y, a row at a time (the q
 * past each row dropped). */
static void dw_requant(const pn_window *W, const dw_plan *P, const q8_out *o, int64_t m,
		       const float *acc, uint8_t *y)
{
	const int64_t ox_n = W->out[2];
	if (ox_n == P->e[2] && W->out[1] == P->e[1]) {
		q8_requant_row(o, m, acc, P->nq, y);
		return;
	}
	for (int64_t oz = 0; oz < W->out[0]; oz++)
		for (int64_t oy = 0; oy < W->out[1]; oy++, y += ox_n)
			q8_requant_row(o, m, acc + (oz * P->e[1] + oy) * P->e[2], ox_n, y);
}

/* Per-thread buffers of a batch of channels. */
typedef struct dw_bufs {
	float *plane;      /* the batch's phase planes, each plane_ld floats */
	float *acc;        /* their flat sums, each nqv floats */
	int64_t plane_ld, nqv;
} dw_bufs;

/* Channels per batch: each phase (conversion, sums, requantization) runs
 * over the batch before the next begins, so that no load waits on the
 * stores just before it (a small plane's conversion is read back within a
 * few dozen cycles otherwise); fewer for large planes, to stay in L2. */
#define DW_BATCH 8

static int dw_batch_of(const dw_plan *P)
{
	int64_t b = ((int64_t)1 << 16) / (P->plane + 1);
	return b < 1 ? 1 : b > DW_BATCH ? DW_BATCH : (int)b;
}

int pn_conv_q8_depthwise(pn_kctx *k, const pn_conv_geom *g, const pn_conv_q8 *a,
			 const float *mult)
{
	const pn_window *W = &g->w;
	dw_plan P;
	int64_t *off = malloc(sizeof(int64_t) * (size_t)g->ksz);
	dw_run *run = malloc(sizeof(dw_run) * (size_t)(W->in[0] * W->in[1] * W->s[2]));
	if (!off || !run) {
		free(off);
		free(run);
		return pn_kfail(k, "out of memory");
	}
	dw_plan_init(W, &P, off, run);
	const int nb = dw_batch_of(&P);
	const int64_t nbat = (g->C + nb - 1) / nb, items = g->N * nbat;
	/* per thread: the phase planes, each with slack for the reads of the
	 * last vector's dropped lanes (at most nq rounded up past a tap's
	 * offset, which is inside the planes); the flat sums */
	dw_bufs B = {.nqv = (P.nq + PN_VL - 1) / PN_VL * PN_VL};
	B.plane_ld = (P.plane + B.nqv + 15) / 16 * 16;
	const int64_t per = nb * (B.plane_ld + B.nqv);
	int nt = 1;
	if (items > 1 && g->N * g->C * g->osp * g->ksz > PN_PAR_MIN_WORK && !omp_in_parallel())
		nt = omp_get_max_threads() < items ? omp_get_max_threads() : (int)items;
	float *wf = malloc(sizeof(float) * (size_t)(g->M * g->ksz));
	float *scr = calloc((size_t)(per * nt), sizeof(float));
	if (!wf || !scr) {
		free(off);
		free(run);
		free(wf);
		free(scr);
		return pn_kfail(k, "out of memory");
	}
	const int8_t *w = a->w->data;
	for (int64_t i = 0; i < g->M * g->ksz; i++)
		wf[i] = (float)w[i];
	const q8_out o = q8_out_of(a, NULL, mult, 0);
	const uint8_t *x = a->x->data;
	uint8_t *y = k->out[0]->data;
	const float zp = (float)a->x_zp;
	#pragma omp parallel for num_threads(nt) schedule(static)
	for (int64_t it = 0; it < items; it++) {
		dw_bufs T = B;
		T.plane = scr + per * omp_get_thread_num();
		T.acc = T.plane + nb * B.plane_ld;
		int64_t n = it / nbat, c0 = it % nbat * nb;
		int cn = g->C - c0 < nb ? (int)(g->C - c0) : nb;
		const int64_t nc0 = n * g->C + c0;
		for (int i = 0; i < cn; i++)
			dw_convert(W, &P, x + (nc0 + i) * g->isp, zp, T.plane + i * T.plane_ld);
		for (int i = 0; i < cn; i++)
			dw_sums(&P, g->ksz, wf + (c0 + i) * g->ksz, T.plane + i * T.plane_ld,
				T.acc + i * T.nqv);
		for (int i = 0; i < cn; i++)
			dw_requant(W, &P, &o, c0 + i, T.acc + i * T.nqv, y + (nc0 + i) * g->osp);
	}
	free(off);
	free(run);
	free(wf);
	free(scr);
	return 0;
}

