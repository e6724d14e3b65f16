/*
 * gemm.c - see gemm.h.  The blocking loops around the micro-kernels of
 * gemm_kernel.c, after the Goto/BLIS scheme: pack a block of A and a block
 * of B into contiguous micro-panels sized for the caches, then sweep the
 * micro-kernel over them.
 *
 * The micro-kernel's vector dimension is N (C is row-major), so the roles
 * are those of BLIS with A and B swapped:
 *
 *   ic over M in MC rows          A block (MC x KC) packed, lives in L3/L2
 *     pc over K in KC steps
 *       jc over N in NC columns   B block (KC x NC) packed, lives in L2
 *         ir over MC in MR rows   one A micro-panel (KC x MR) stays in L1
 *           jr over NC in NR      B micro-panels stream from L2
 *             micro-kernel        MR x NR tile of C in registers
 *
 * Packing only pays when a panel is reused often, so small and thin
 * products read one or both operands in place instead (pn_gemm_plan), and
 * products with N <= 4 turn the tile around (pn_gemm_narrow).  All of these
 * run the same arithmetic per element, which the tests check bit for bit.
 *
 * Threads each take a rectangle of C (whole micro-tiles) and run these loops
 * on it with their own packing buffers; nothing is shared but the inputs, so
 * there are no barriers, and K is never split, so each element of C sees the
 * same k-blocks in the same order whatever the thread count.
 */
#include "runtime/gemm.h"

#include "runtime/gemm_kernel.h"

#include <omp.h>
#include <pthread.h>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif
#include <stdlib.h>
#include <string.h>

#define MR PN_SGEMM_MR
#define NR PN_SGEMM_NR

/*
 * Blocking for the machine we build on (Zen 4: 32 KiB L1d, 1 MiB L2 per
 * core, 32 MiB L3 shared).  KC x MR floats of A (24 KiB) stay in L1 across a
 * sweep of B micro-panels; KC x NC of B (768 KiB) stays in L2 across a sweep
 * of A micro-panels; MC x KC of A (8 MiB) sits in L3, large enough that B is
 * packed once for M up to 4032.  KC between 384 and 512 and NC between 384
 * and 512 measured alike (within noise); KC also fixes the summation blocks,
 * so changing it changes result bits.  Overridable with -D for tuning.
 */
#ifndef PN_SGEMM_KC
#define PN_SGEMM_KC 512
#endif
#ifndef PN_SGEMM_MC
#define PN_SGEMM_MC (MR * 336)
#endif
#ifndef PN_SGEMM_NC
#define PN_SGEMM_NC 384
#endif
/*
 * Multiply-adds (M*N*K) per thread below which another thread is not worth
 * waking.  On 2 quiet cores 48^3 loses with a second thread, 64^3 gains
 * 10-30%, 80^3 about 40%; but a fork-join of a few microseconds is the
 * first thing to suffer when the other core is busy, so the second thread
 * starts at 2 x 64^3.
 */
#ifndef PN_SGEMM_MT_MIN
#define PN_SGEMM_MT_MIN ((int64_t)1 << 18)
#endif

/* When to read an operand in place instead of packing it: pn_gemm_plan. */
#ifndef PN_SGEMM_DIRECT_B_M
#define PN_SGEMM_DIRECT_B_M 512
#endif
#ifndef PN_SGEMM_DIRECT_A_N
#define PN_SGEMM_DIRECT_A_N 256
#endif
#ifndef PN_SGEMM_DIRECT_A_MK
#define PN_SGEMM_DIRECT_A_MK (256 * 1024)
#endif

_Static_assert(PN_SGEMM_MC % MR == 0, "MC must be a multiple of MR");
_Static_assert(PN_SGEMM_NC % NR == 0, "NC must be a multiple of NR");

#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* One operand: a raw row-major matrix, or the output of pn_sgemm_pack_*. */
typedef struct {
	const float *p;
	int64_t ld;
	int trans;
	int packed;
	int64_t pad;    /* packed: M (or N) rounded up to MR (or NR) */
} pn_gemm_opnd;

typedef struct {
	int64_t M, N, K;
	float alpha, beta;
	pn_gemm_opnd a, b;
	float *C;
	int64_t ldc;
	/* Read A (B) in place rather than packing it: see pn_gemm_plan. */
	int direct_a, direct_b;
	/* N too small for the tile's width: pn_gemm_narrow. */
	int narrow;
} pn_gemm_job;

const char *pn_sgemm_isa(void)
{
	return PN_SGEMM_ISA;
}

float *pn_sgemm_alloc(size_t n)
{
	size_t bytes = (n * sizeof(float) + 63) & ~(size_t)63;
	return aligned_alloc(64, bytes ? bytes : 64);
}

/*
 * K is cut into the fewest blocks of at most KC, of near-equal length
 * (K = 600 gives 300 + 300, not 512 + 88).  Only K decides the cut: this is
 * what fixes the order of every element's sum, and what the packed layouts
 * are built on.
 */
static int64_t pn_kblocks(int64_t K)
{
	return (K + PN_SGEMM_KC - 1) / PN_SGEMM_KC;
}

static void pn_kblock(int64_t K, int64_t nk, int64_t p, int64_t *k0, int64_t *kc)
{
	int64_t base = K / nk, rem = K % nk;
	*k0 = p * base + MIN(p, rem);
	*kc = base + (p < rem);
}

#if defined(__AVX512F__)
/* r[i] = column i of the 16 x 16 block whose rows were r[0..15]. */
static inline void pn_transpose16(__m512 r[16])
{
	__m512 t[16];
	/* Pairs of rows interleaved: lane l of t[2i] = a4l b4l a4l+1 b4l+1. */
	for (int i = 0; i < 8; i++) {
		t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
		t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
	}
	/* Quads: lane l of r[4i+j] = column 4l+j of rows 4i..4i+3. */
	for (int i = 0; i < 4; i++) {
		__m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]);
		__m512d c = _mm512_castps_pd(t[4 * i + 2]), d = _mm512_castps_pd(t[4 * i + 3]);
		r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
		r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
		r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
		r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
	}
	/* Gather lane l of r[j], r[4+j], r[8+j], r[12+j] into column 4l+j. */
	for (int j = 0; j < 4; j++) {
		__m512 e = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x88);
		__m512 f = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xdd);
		__m512 g = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x88);
		__m512 h = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xdd);
		t[j] = _mm512_shuffle_f32x4(e, g, 0x88);
		t[8 + j] = _mm512_shuffle_f32x4(e, g, 0xdd);
		t[4 + j] = _mm512_shuffle_f32x4(f, h, 0x88);
		t[12 + j] = _mm512_shuffle_f32x4(f, h, 0xdd);
	}
	for (int i = 0; i < 16; i++)
		r[i] = t[i];
}
#endif

/*
 * dst[k * w + r] = src[r * ld + k] for k < kc and r < rows, zero for
 * rows <= r < w: a micro-panel whose k steps run along the stored rows (A
 * not transposed, B transposed), so packing it is a transpose.
 */
static void pn_pack_transposed(const float *src, int64_t ld, int rows, int64_t kc,
                               float *restrict dst, int w)
{
#if defined(__AVX512F__)
	/* 16 x 16 blocks through registers instead of kc*w scattered stores. */
	for (int r0 = 0; r0 < w; r0 += 16) {
		int lanes = w - r0 < 16 ? w - r0 : 16;
		int live = rows - r0 < 0 ? 0 : rows - r0 < lanes ? rows - r0 : lanes;
		__mmask16 store = (__mmask16)((1u << lanes) - 1);
		for (int64_t k = 0; k < kc; k += 16) {
			int kn = kc - k < 16 ? (int)(kc - k) : 16;
			__mmask16 load = (__mmask16)((1u << kn) - 1);
			__m512 r[16];
			for (int i = 0; i < 16; i++)
				r[i] = i < live ? _mm512_maskz_loadu_ps(load, src + (r0 + i) * ld + k)
				                : _mm512_setzero_ps();
			pn_transpose16(r);
			for (int i = 0; i < kn; i++)
				_mm512_mask_storeu_ps(dst + (k + i) * w + r0, store, r[i]);
		}
	}
#else
	for (int64_t k0 = 0; k0 < kc; k0 += 16) {
		int64_t k1 = kc - k0 < 16 ? kc : k0 + 16;
		for (int r = 0; r < w; r++)
			for (int64_t k = k0; k < k1; k++)
				dst[k * w + r] = r < rows ? src[r * ld + k] : 0.0f;
	}
#endif
}

/*
 * The panels of cols columns starting at src, w wide, zero past cols, when
 * their k steps are stored rows (A transposed, B not): each stored row is
 * read once, left to right, and dealt out to the panels.  Going panel by
 * panel instead would read short pieces of kc rows at a stride that is often
 * a multiple of 4 KiB, which all land in one cache set.
 */
static void pn_pack_rows(const float *src, int64_t ld, int64_t cols, int64_t kc,
                         float *restrict dst, int w)
{
	int64_t full = cols / w, rest = cols % w;
	for (int64_t k = 0; k < kc; k++) {
		const float *s = src + k * ld;
		float *d = dst + k * w;
		for (int64_t p = 0; p < full; p++)
			memcpy(d + p * kc * w, s + p * w, (size_t)w * sizeof(float));
		if (rest) {
			d += full * kc * w;
			s += full * w;
			for (int r = 0; r < rest; r++)
				d[r] = s[r];
			for (int r = (int)rest; r < w; r++)
				d[r] = 0.0f;
		}
	}
}

/*
 * Packed layouts.  A block of op(A) rows [i0, i0+mc) x k [k0, k0+kc) becomes
 * ceil(mc/MR) micro-panels of kc x MR floats, each k step holding MR rows'
 * values (zero past the last row).  B likewise becomes kc x NR micro-panels.
 * A whole pre-packed operand is its k-blocks one after another, each k-block
 * holding all its micro-panels, so k-block p of a panel starting at row r
 * sits at k0 * pad + r * kc.
 */
static void pn_pack_a(const pn_gemm_opnd *a, int64_t i0, int64_t mc, int64_t k0, int64_t kc,
                      float *restrict dst)
{
	if (a->trans) {
		pn_pack_rows(a->p + k0 * a->ld + i0, a->ld, mc, kc, dst, MR);
		return;
	}
	for (int64_t ip = 0; ip < mc; ip += MR, dst += MR * kc)
		pn_pack_transposed(a->p + (i0 + ip) * a->ld + k0, a->ld, (int)MIN(MR, mc - ip),
		                   kc, dst, MR);
}

static void pn_pack_b(const pn_gemm_opnd *b, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
                      float *restrict dst)
{
	if (!b->trans) {
		pn_pack_rows(b->p + k0 * b->ld + j0, b->ld, nc, kc, dst, NR);
		return;
	}
	for (int64_t jp = 0; jp < nc; jp += NR, dst += NR * kc)
		pn_pack_transposed(b->p + (j0 + jp) * b->ld + k0, b->ld, (int)MIN(NR, nc - jp),
		                   kc, dst, NR);
}

/*
 * The packing buffer, one per thread, kept for the life of the thread:
 * the executor calls GEMM thousands of times and OpenMP keeps its threads,
 * so allocating on every call would only churn the allocator.
 */
static _Thread_local float *pn_tl_buf;
static _Thread_local size_t pn_tl_cap;

/* _Thread_local has no destructor: the buffer is also the value of a key
 * whose destructor frees it when its thread ends, else every thread that
 * OpenMP (or a caller's pthread) retires would leak its buffer (found by
 * LeakSanitizer, `make test-sanitize`). */
static pthread_key_t pn_tl_key;
static pthread_once_t pn_tl_once = PTHREAD_ONCE_INIT;
static int pn_tl_key_ok;

static void pn_tl_key_create(void)
{
	pn_tl_key_ok = pthread_key_create(&pn_tl_key, free) == 0;
}

static float *pn_gemm_buffer(size_t n)
{
	if (n > pn_tl_cap) {
		free(pn_tl_buf);
		pn_tl_buf = pn_sgemm_alloc(n);
		pn_tl_cap = pn_tl_buf ? n : 0;
		pthread_once(&pn_tl_once, pn_tl_key_create);
		if (pn_tl_key_ok)
			pthread_setspecific(pn_tl_key, pn_tl_buf);
	}
	return pn_tl_buf;
}

/*
 * Step for cutting n into the fewest blocks of at most max, near-equal and
 * in whole units: M = 4100 with MC = 4032 gives 2 x 2052, not 4032 + 68 (which
 * would pack all of B again for 68 rows).  Unlike the k-blocks these cuts
 * do not change any result bit.
 */
static int64_t pn_block_step(int64_t n, int64_t max, int64_t unit)
{
	int64_t blocks = (n + max - 1) / max;
	int64_t step = (n + blocks - 1) / blocks;
	return (step + unit - 1) / unit * unit;
}

#ifdef PN_SGEMM_HAVE_DIRECT
/*
 * Rows [m0, m1) of a product with N <= PN_SGEMM_NARROW_N: blocks of up to
 * 64 rows, A read k-major (in place when transposed, else packed that way a
 * block at a time), B by single elements.  The k-blocks and the beta of
 * each are those of pn_gemm_region, so the bits are too.
 */
static void pn_gemm_narrow(const pn_gemm_job *g, int64_t m0, int64_t m1)
{
	const int64_t W = PN_SGEMM_NARROW_M;
	int64_t K = g->K, nk = pn_kblocks(K);
	float *buf = NULL;
	if (!g->a.trans && !(buf = pn_gemm_buffer((size_t)W * PN_SGEMM_KC)))
		abort();
	int64_t bks = g->b.trans ? 1 : g->b.ld, bjs = g->b.trans ? g->b.ld : 1;
	for (int64_t i0 = m0; i0 < m1; i0 += W) {
		int rows = (int)MIN(W, m1 - i0);
		for (int64_t p = 0; p < nk; p++) {
			int64_t k0, kc;
			pn_kblock(K, nk, p, &k0, &kc);
			float beta = p == 0 ? g->beta : 1.0f;
			const float *a;
			int64_t ldk;
			if (g->a.trans) {
				a = g->a.p + k0 * g->a.ld + i0;
				ldk = g->a.ld;
			} else if (rows == 1) {
				a = g->a.p + i0 * g->a.ld + k0;    /* one row is k-major already */
				ldk = 1;
			} else {
				pn_pack_transposed(g->a.p + i0 * g->a.ld + k0, g->a.ld, rows, kc, buf, (int)W);
				a = buf;
				ldk = W;
			}
			for (int64_t j0 = 0; j0 < g->N; j0 += PN_SGEMM_NARROW_N)
				pn_sgemm_ukernel_narrow(kc, a, ldk, rows, g->b.p + k0 * bks + j0 * bjs, bks, bjs,
				                        g->C + i0 * g->ldc + j0, g->ldc,
				                        (int)MIN(PN_SGEMM_NARROW_N, g->N - j0), g->alpha, beta);
		}
	}
}
#endif

/* The loops of the header comment over C rows [m0,m1) x columns [n0,n1). */
static void pn_gemm_region(const pn_gemm_job *g, int64_t m0, int64_t m1, int64_t n0, int64_t n1)
{
#ifdef PN_SGEMM_HAVE_DIRECT
	if (g->narrow) {
		pn_gemm_narrow(g, m0, m1);    /* n0, n1 span all of N: one tile wide */
		return;
	}
#endif
	int64_t K = g->K, nk = pn_kblocks(K);
	int pack_a = !g->a.packed && !g->direct_a, pack_b = !g->b.packed && !g->direct_b;
	int raw_a = !g->a.packed && !pack_a, raw_b = !g->b.packed && !pack_b;
	int64_t mstep = pn_block_step(m1 - m0, PN_SGEMM_MC, MR);
	int64_t nstep = pn_block_step(n1 - n0, PN_SGEMM_NC, NR);
	/* Buffers for the largest blocks this region will pack, B 64-byte aligned. */
	int64_t kcmax = (K + nk - 1) / nk;
	size_t asz = pack_a ? ((size_t)(mstep * kcmax) + 15) & ~(size_t)15 : 0;
	size_t bsz = pack_b ? (size_t)(nstep * kcmax) : 0;
	float *buf = asz + bsz ? pn_gemm_buffer(asz + bsz) : NULL;
	if (!buf && asz + bsz)
		abort();    /* at most ~9 MiB; nothing sensible to do without them */
	float *bufa = buf, *bufb = buf + asz;

	for (int64_t ic = m0; ic < m1; ic += mstep) {
		int64_t mc = MIN(mstep, m1 - ic);
		for (int64_t p = 0; p < nk; p++) {
			int64_t k0, kc;
			pn_kblock(K, nk, p, &k0, &kc);
			/* Later k-blocks add onto what the first one stored. */
			float beta = p == 0 ? g->beta : 1.0f;
			/*
			 * Micro-panel ir of A is A(ic+ir.., k0..) read as
			 * pa[i * ars + k * aks]; packed, that is (1, MR).
			 */
			const float *pa;
			int64_t ars = 1, aks = MR;
#ifdef PN_SGEMM_HAVE_ROW
			int64_t row_aks = MR;   /* a row alone: its k step in pa */
#endif
			if (g->a.packed) {
				pa = g->a.p + k0 * g->a.pad + ic * kc;
#ifdef PN_SGEMM_HAVE_ROW
			} else if (pack_a && mc == 1 && !raw_b) {
				/* one row: its kernel reads it in place, no zero rows packed */
				pa = g->a.trans ? g->a.p + k0 * g->a.ld + ic : g->a.p + ic * g->a.ld + k0;
				row_aks = g->a.trans ? g->a.ld : 1;
#endif
			} else if (pack_a) {
				pn_pack_a(&g->a, ic, mc, k0, kc, bufa);
				pa = bufa;
			} else if (g->a.trans) {
				pa = g->a.p + k0 * g->a.ld + ic;
				aks = g->a.ld;
			} else {
				pa = g->a.p + ic * g->a.ld + k0;
				ars = g->a.ld;
				aks = 1;
			}
			int64_t apanel = raw_a ? MR * ars : MR * kc;
			for (int64_t jc = n0; jc < n1; jc += nstep) {
				int64_t nc = MIN(nstep, n1 - jc);
				/* Micro-panel jr of B: kc rows of NR floats ldbk apart. */
				const float *pb;
				int64_t ldbk = NR, bpanel = NR * kc;
				if (g->b.packed) {
					pb = g->b.p + k0 * g->b.pad + jc * kc;
				} else if (pack_b) {
					pn_pack_b(&g->b, k0, kc, jc, nc, bufb);
					pb = bufb;
				} else {
					pb = g->b.p + k0 * g->b.ld + jc;
					ldbk = g->b.ld;
					bpanel = NR;
				}
				for (int64_t ir = 0; ir < mc; ir += MR) {
					int mr = (int)MIN(MR, mc - ir);
					const float *a = pa + ir / MR * apanel;
					float *c = g->C + (ic + ir) * g->ldc + jc;
#ifdef PN_SGEMM_HAVE_ROW
					if (mr == 1 && !raw_a && !raw_b) {
						/* a row alone: its own kernel, several panels at once */
						const int64_t span = PN_SGEMM_ROW_PANELS * NR;
						for (int64_t jr = 0; jr < nc; jr += span) {
							int64_t w = MIN(span, nc - jr);
							pn_sgemm_ukernel_row(kc, a, row_aks, pb + jr / NR * bpanel, bpanel,
							                     (int)((w + NR - 1) / NR), c + jr, (int)w,
							                     g->alpha, beta);
						}
						continue;
					}
#endif
					int64_t width = NR;
#ifdef PN_SGEMM_HAVE_DIRECT
					if (raw_b)
						width = pn_sgemm_direct_width(mr);
#endif
					for (int64_t jr = 0; jr < nc; jr += width) {
						const float *b = pb + jr / NR * bpanel;
						int nr = (int)MIN(width, nc - jr);
#ifdef PN_SGEMM_HAVE_DIRECT
						if (raw_a || raw_b) {
							/* Packed A is A^T with leading dimension MR. */
							int by_cols = aks != 1;
							pn_sgemm_ukernel_direct(kc, a, by_cols ? aks : ars, by_cols,
							                        b, ldbk, c + jr, g->ldc, mr, nr,
							                        g->alpha, beta);
							continue;
						}
#else
						(void)raw_b;
						(void)ldbk;
						(void)aks;
#endif
						pn_sgemm_ukernel(kc, a, b, c + jr, g->ldc, mr, nr, g->alpha, beta);
					}
				}
			}
		}
	}
}

/* C = beta * C, for alpha == 0 or K == 0 (A and B are not read). */
static void pn_gemm_scale(const pn_gemm_job *g)
{
	for (int64_t i = 0; i < g->M; i++) {
		float *c = g->C + i * g->ldc;
		if (g->beta == 0.0f)
			memset(c, 0, (size_t)g->N * sizeof(float));
		else if (g->beta != 1.0f)
			for (int64_t j = 0; j < g->N; j++)
				c[j] *= g->beta;
	}
}

/*
 * How many threads a product deserves: one per PN_SGEMM_MT_MIN multiply-adds
 * at most, and none beyond the caller inside a parallel region (the
 * executor may already run ops or batch items in parallel).
 */
static int pn_gemm_threads(int64_t M, int64_t N, int64_t K)
{
	double work = (double)M * (double)N * (double)K;
	if (work < 2.0 * (double)PN_SGEMM_MT_MIN || omp_in_parallel())
		return 1;
	int nt = omp_get_max_threads();
	double cap = work / (double)PN_SGEMM_MT_MIN;
	if ((double)nt > cap)
		nt = (int)cap;
	return nt < 1 ? 1 : nt;
}

/* Thread t's share [lo, hi) of n units split as evenly as whole units allow. */
static void pn_share(int64_t n, int parts, int t, int64_t *lo, int64_t *hi)
{
	*lo = n * t / parts;
	*hi = n * (t + 1) / parts;
}

int pn_sgemm_force_direct = -1;

/*
 * Pack or read in place.  Packing an operand pays off when its panels are
 * reused often: B's panels are reused once per MR rows of A, A's once per
 * NR columns of B.  Measured on Zen 4: reading B in place wins up to
 * M ~ 512, reading A in place up to N ~ 256, and both win whenever the
 * operands are small enough to stay in L2 anyway.  Transposed B can only be
 * packed (the kernel loads rows of op(B)).
 */
static void pn_gemm_plan(pn_gemm_job *g)
{
	g->direct_a = g->direct_b = g->narrow = 0;
#ifdef PN_SGEMM_HAVE_DIRECT
	int may_a = !g->a.packed, may_b = !g->b.packed && !g->b.trans;
	if (pn_sgemm_force_direct >= 0) {
		g->direct_a = may_a && (pn_sgemm_force_direct & 1);
		g->direct_b = may_b && (pn_sgemm_force_direct & 2);
		g->narrow = (pn_sgemm_force_direct & 4) && !g->a.packed && !g->b.packed &&
		            g->N <= PN_SGEMM_NARROW_N;
		return;
	}
	g->narrow = !g->a.packed && !g->b.packed && g->N <= PN_SGEMM_NARROW_N;
	g->direct_b = may_b && g->M <= PN_SGEMM_DIRECT_B_M;
	g->direct_a = may_a && (g->N <= PN_SGEMM_DIRECT_A_N || g->M * g->K <= PN_SGEMM_DIRECT_A_MK);
#endif
}

int pn_sgemm_packs_b(int trans_b, int64_t M, int64_t N)
{
#ifdef PN_SGEMM_HAVE_DIRECT
	if (N <= PN_SGEMM_NARROW_N)
		return 0;
	return trans_b || M > PN_SGEMM_DIRECT_B_M;
#else
	(void)trans_b, (void)M, (void)N;
	return 1;
#endif
}

static void pn_gemm_run(const pn_gemm_job *job, int nt)
{
	pn_gemm_job plan = *job;
	const pn_gemm_job *g = &plan;
	pn_gemm_plan(&plan);
	if (g->M <= 0 || g->N <= 0)
		return;
	if (g->K <= 0 || g->alpha == 0.0f) {
		pn_gemm_scale(g);
		return;
	}
	int64_t mt = (g->M + MR - 1) / MR, ntl = (g->N + NR - 1) / NR;
	if (nt > 1 && mt * ntl < nt)
		nt = (int)(mt * ntl);
	if (nt <= 1) {
		pn_gemm_region(g, 0, g->M, 0, g->N);
		return;
	}
	/*
	 * A grid of tm x tn rectangles of whole tiles: the fewest tiles on the
	 * busiest thread first, then the least duplicated packing (every
	 * thread packs all of A for its columns and all of B for its rows).
	 */
	int tm = 1, tn = nt;
	double best = -1, best_pack = 0;
	for (int r = 1; r <= nt; r++) {
		if (nt % r || r > mt || nt / r > ntl)
			continue;
		int c = nt / r;
		double busiest = (double)((mt + r - 1) / r) * (double)((ntl + c - 1) / c);
		double pack = (double)((mt + r - 1) / r) * MR + (double)((ntl + c - 1) / c) * NR;
		if (best < 0 || busiest < best || (busiest == best && pack < best_pack)) {
			best = busiest;
			best_pack = pack;
			tm = r;
			tn = c;
		}
	}
	if (best < 0) {
		pn_gemm_region(g, 0, g->M, 0, g->N);
		return;
	}
#pragma omp parallel num_threads(tm * tn)
	{
		int t = omp_get_thread_num();
		int64_t i0, i1, j0, j1;
		pn_share(mt, tm, t / tn, &i0, &i1);
		pn_share(ntl, tn, t % tn, &j0, &j1);
		if (i1 > i0 && j1 > j0)
			pn_gemm_region(g, i0 * MR, MIN(i1 * MR, g->M), j0 * NR, MIN(j1 * NR, g->N));
	}
}

static pn_gemm_opnd pn_raw(const float *p, int64_t ld, int trans)
{
	return (pn_gemm_opnd){ .p = p, .ld = ld, .trans = trans };
}

static pn_gemm_opnd pn_packed(const float *p, int64_t pad)
{
	return (pn_gemm_opnd){ .p = p, .packed = 1, .pad = pad };
}

void pn_sgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K,
              float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
              float beta, float *C, int64_t ldc)
{
	pn_gemm_job g = {
		.M = M, .N = N, .K = K, .alpha = alpha, .beta = beta,
		.a = pn_raw(A, lda, trans_a), .b = pn_raw(B, ldb, trans_b),
		.C = C, .ldc = ldc,
	};
	pn_gemm_run(&g, pn_gemm_threads(M, N, K));
}

void pn_sgemm_batched(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K,
                      float alpha, const float *A, int64_t lda, int64_t stride_a,
                      const float *B, int64_t ldb, int64_t stride_b,
                      float beta, float *C, int64_t ldc, int64_t stride_c,
                      int64_t batch)
{
	if (batch <= 0 || M <= 0 || N <= 0)
		return;
	pn_gemm_job g = {
		.M = M, .N = N, .K = K, .alpha = alpha, .beta = beta,
		.a = pn_raw(A, lda, trans_a), .b = pn_raw(B, ldb, trans_b),
		.C = C, .ldc = ldc,
	};
	/*
	 * A shared B under row-major A and C items stacked at exactly M rows
	 * apart is one product of batch * M rows (MatMul of [b, m, k] by
	 * [k, n]): one plan, B packed once.  Every path computes an element
	 * the same way, so this changes no bit.
	 */
	if (stride_b == 0 && !trans_a && stride_a == M * lda && stride_c == M * ldc) {
		g.M = M * batch;
		pn_gemm_run(&g, pn_gemm_threads(g.M, N, K));
		return;
	}
	/*
	 * Whole items per thread need no synchronisation inside an item and
	 * suit small items, but split unevenly when the batch is short and not
	 * a multiple of the threads (3 items on 2 threads: 2/3 efficiency);
	 * then the threads share each item instead.
	 */
	int per = pn_gemm_threads(M, N, K);
	int all = pn_gemm_threads(M * batch, N, K);
	if (all > batch)
		all = (int)batch;
	if (all <= 1 || (per > 1 && batch % all != 0 && batch < 8 * (int64_t)all)) {
		for (int64_t i = 0; i < batch; i++) {
			g.a.p = A + i * stride_a;
			g.b.p = B + i * stride_b;
			g.C = C + i * stride_c;
			pn_gemm_run(&g, per);
		}
		return;
	}
#pragma omp parallel for num_threads(all) schedule(static) firstprivate(g)
	for (int64_t i = 0; i < batch; i++) {
		g.a.p = A + i * stride_a;
		g.b.p = B + i * stride_b;
		g.C = C + i * stride_c;
		pn_gemm_run(&g, 1);
	}
}

size_t pn_sgemm_pack_a_size(int64_t M, int64_t K)
{
	if (M <= 0 || K <= 0)
		return 0;
	return (size_t)((M + MR - 1) / MR * MR) * (size_t)K;
}

size_t pn_sgemm_pack_b_size(int64_t K, int64_t N)
{
	if (N <= 0 || K <= 0)
		return 0;
	return (size_t)((N + NR - 1) / NR * NR) * (size_t)K;
}

void pn_sgemm_pack_a(int trans_a, int64_t M, int64_t K, const float *A, int64_t lda,
                     float *packed)
{
	if (M <= 0 || K <= 0)
		return;
	pn_gemm_opnd a = pn_raw(A, lda, trans_a);
	int64_t nk = pn_kblocks(K), pad = (M + MR - 1) / MR * MR;
	for (int64_t p = 0; p < nk; p++) {
		int64_t k0, kc;
		pn_kblock(K, nk, p, &k0, &kc);
		pn_pack_a(&a, 0, M, k0, kc, packed + k0 * pad);
	}
}

void pn_sgemm_pack_b(int trans_b, int64_t K, int64_t N, const float *B, int64_t ldb,
                     float *packed)
{
	if (N <= 0 || K <= 0)
		return;
	pn_gemm_opnd b = pn_raw(B, ldb, trans_b);
	int64_t nk = pn_kblocks(K), pad = (N + NR - 1) / NR * NR;
	for (int64_t p = 0; p < nk; p++) {
		int64_t k0, kc;
		pn_kblock(K, nk, p, &k0, &kc);
		pn_pack_b(&b, k0, kc, 0, N, packed + k0 * pad);
	}
}

void pn_sgemm_packed_a(int trans_b, int64_t M, int64_t N, int64_t K,
                       float alpha, const float *packed_a,
                       const float *B, int64_t ldb,
                       float beta, float *C, int64_t ldc)
{
	pn_gemm_job g = {
		.M = M, .N = N, .K = K, .alpha = alpha, .beta = beta,
		.a = pn_packed(packed_a, (M + MR - 1) / MR * MR), .b = pn_raw(B, ldb, trans_b),
		.C = C, .ldc = ldc,
	};
	pn_gemm_run(&g, pn_gemm_threads(M, N, K));
}

void pn_sgemm_packed_b(int trans_a, int64_t M, int64_t N, int64_t K,
                       float alpha, const float *A, int64_t lda,
                       const float *packed_b,
                       float beta, float *C, int64_t ldc)
{
	pn_gemm_job g = {
		.M = M, .N = N, .K = K, .alpha = alpha, .beta = beta,
		.a = pn_raw(A, lda, trans_a), .b = pn_packed(packed_b, (N + NR - 1) / NR * NR),
		.C = C, .ldc = ldc,
	};
	pn_gemm_run(&g, pn_gemm_threads(M, N, K));
}
