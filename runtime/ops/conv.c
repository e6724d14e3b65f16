/*
 * conv.c - Conv and ConvTranspose, and the shape inference of the whole
 * convolution family (Conv, ConvInteger, QLinearConv share pn_infer_Conv).
 *
 * float32 Conv takes the direct paths of conv_direct.c where they apply
 * (every convolution but ungrouped 1x1 ones, in practice).  The others are
 * pn_sgemm: 1x1 stride-1 unpadded convolutions straight on the input (it
 * already is the matrix), the rest on an im2col matrix built in bounded
 * column segments so that its scratch stays a few MB whatever the image
 * size.  ConvTranspose is the adjoint: GEMM into columns, then col2im.
 * float16 and bfloat16 are computed in float32; float64 has its own (plain)
 * loops.
 */
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "runtime/gemm.h"
#include "runtime/infer.h"
#include "runtime/kernel.h"
#include "runtime/ops/conv.h"

/* Elements of im2col scratch per segment (4 MB of floats). */
#define COL_BUDGET ((int64_t)1 << 20)
/* Fewer columns than this per GEMM call wastes the GEMM. */
#define COL_MIN 256

/* --- inference ------------------------------------------------------------------- */

static int is_op(const pn_node *n, const char *op)
{
	return !strcmp(n->op_type, op);
}

/* Output type of Conv (float), ConvInteger (int32), QLinearConv (type of
 * y_zero_point): [N, M, spatial...]. */
int pn_infer_Conv(pn_ictx *c)
{
	int qlinear = is_op(c->node, "QLinearConv");
	const pn_tinfo *x = pn_iin(c, 0), *w = pn_iin(c, qlinear ? 3 : 1);
	int dtype = x ? x->type.dtype : PN_UNDEFINED;
	if (is_op(c->node, "ConvInteger")) {
		dtype = PN_INT32;
	} else if (qlinear) {
		const pn_tinfo *yzp = pn_iin(c, 7);
		dtype = yzp ? yzp->type.dtype : PN_UINT8;
	}
	int rank = x && x->type.rank >= 0 ? x->type.rank : w ? w->type.rank : -1;
	if (rank < 0) {
		pn_iset(c, 0, dtype, -1, NULL);
		return 0;
	}
	if (rank < 3)
		return pn_ifail(c, "input rank %d, expected at least 3", rank);
	int nsp = rank - 2;
	int64_t dims[PN_MAX_RANK], in[PN_WIN_MAX], k[PN_WIN_MAX];
	for (int i = 0; i < rank; i++)
		dims[i] = -1;
	if (x && x->type.rank == rank)
		dims[0] = x->type.dims[0];
	if (w && w->type.rank == rank)
		dims[1] = w->type.dims[0];
	for (int i = 0; i < nsp; i++) {
		in[i] = x && x->type.rank == rank ? x->type.dims[2 + i] : -1;
		k[i] = w && w->type.rank == rank ? w->type.dims[2 + i] : -1;
	}
	int nk = pn_attr_ints(c->node, "kernel_shape", k, PN_WIN_MAX);
	if (nk >= 0 && nk != nsp)
		return pn_ifail(c, "kernel_shape has %d entries for %d spatial dims", nk, nsp);
	pn_window win;
	if (pn_win_forward(&win, c->node, nsp, in, k, 0, c->err))
		return -1;
	for (int i = 0; i < nsp; i++)
		dims[2 + i] = win.out[i];
	pn_iset(c, 0, dtype, rank, dims);
	return 0;
}

/* ConvTranspose: [N, M, spatial...] with M = W.dims[1] * group. */
int pn_infer_ConvTranspose(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0), *w = pn_iin(c, 1);
	int dtype = x ? x->type.dtype : PN_UNDEFINED;
	int rank = x && x->type.rank >= 0 ? x->type.rank : w ? w->type.rank : -1;
	if (rank < 0) {
		pn_iset(c, 0, dtype, -1, NULL);
		return 0;
	}
	if (rank < 3)
		return pn_ifail(c, "input rank %d, expected at least 3", rank);
	int nsp = rank - 2;
	int64_t group = pn_attr_int(c->node, "group", 1);
	int64_t dims[PN_MAX_RANK], in[PN_WIN_MAX], k[PN_WIN_MAX];
	for (int i = 0; i < rank; i++)
		dims[i] = -1;
	if (x && x->type.rank == rank)
		dims[0] = x->type.dims[0];
	if (w && w->type.rank == rank && w->type.dims[1] >= 0)
		dims[1] = w->type.dims[1] * group;
	for (int i = 0; i < nsp; i++) {
		in[i] = x && x->type.rank == rank ? x->type.dims[2 + i] : -1;
		k[i] = w && w->type.rank == rank ? w->type.dims[2 + i] : -1;
	}
	int nk = pn_attr_ints(c->node, "kernel_shape", k, PN_WIN_MAX);
	if (nk >= 0 && nk != nsp)
		return pn_ifail(c, "kernel_shape has %d entries for %d spatial dims", nk, nsp);
	pn_window win;
	if (pn_win_transpose(&win, c->node, nsp, in, k, c->err))
		return -1;
	for (int i = 0; i < nsp; i++)
		dims[2 + i] = win.out[i];
	/* output_shape fixes the spatial sizes even when the input's are unknown. */
	int64_t os[PN_MAX_RANK + 1];
	int n_os = pn_attr_ints(c->node, "output_shape", os, PN_MAX_RANK + 1);
	for (int i = 0; i < nsp && (n_os == nsp || n_os == nsp + 2); i++)
		dims[2 + i] = os[n_os - nsp + i];
	pn_iset(c, 0, dtype, rank, dims);
	return 0;
}

/* --- geometry ---------------------------------------------------------------------- */

/* kernel_shape, when given, must agree with the weight tensor. */
static int check_kernel_shape(pn_kctx *k, const pn_tensor *w)
{
	int64_t ks[PN_WIN_MAX];
	int nsp = w->rank - 2;
	int n = pn_attr_ints(k->node, "kernel_shape", ks, PN_WIN_MAX);
	if (n < 0)
		return 0;
	if (n != nsp)
		return pn_kfail(k, "kernel_shape has %d entries for %d spatial dims", n, nsp);
	for (int i = 0; i < nsp; i++)
		if (ks[i] != w->dims[2 + i])
			return pn_kfail(k, "kernel_shape[%d] = %lld but W has %lld", i, (long long)ks[i],
					(long long)w->dims[2 + i]);
	return 0;
}

/* Widens the window to three spatial dims and fills the derived sizes. */
static int finish_geom(pn_kctx *k, const pn_window *win, pn_conv_geom *g)
{
	if (pn_win_to3(win, &g->w))
		return pn_kfail(k, "%d spatial dims (at most 3 supported)", win->n);
	g->isp = g->w.in[0] * g->w.in[1] * g->w.in[2];
	g->osp = g->w.out[0] * g->w.out[1] * g->w.out[2];
	g->ksz = g->w.k[0] * g->w.k[1] * g->w.k[2];
	return 0;
}

/* Output 0 must be [N, M, out...] (inference made it so; kernels called
 * directly still get it allocated here). */
static int alloc_out(pn_kctx *k, const pn_conv_geom *g, const pn_window *win, int dtype)
{
	int64_t dims[PN_MAX_RANK] = {g->N, g->M};
	for (int i = 0; i < win->n; i++)
		dims[2 + i] = win->out[i];
	return pn_out_alloc(k, 0, dtype, win->n + 2, dims) ? 0 : -1;
}

int pn_conv_setup(pn_kctx *k, const pn_tensor *x, const pn_tensor *w, int out_dtype,
		  pn_conv_geom *g)
{
	memset(g, 0, sizeof(*g));
	if (x->rank < 3 || w->rank != x->rank)
		return pn_kfail(k, "X rank %d and W rank %d: expected equal ranks >= 3", x->rank,
				w->rank);
	g->G = pn_attr_int(k->node, "group", 1);
	g->N = x->dims[0];
	g->C = x->dims[1];
	g->M = w->dims[0];
	if (g->G < 1 || g->C % g->G || g->M % g->G || w->dims[1] != g->C / g->G)
		return pn_kfail(k, "X has %lld channels, W is %lld x %lld, group %lld",
				(long long)g->C, (long long)g->M, (long long)w->dims[1],
				(long long)g->G);
	g->Cg = g->C / g->G;
	g->Mg = g->M / g->G;
	if (check_kernel_shape(k, w))
		return -1;
	pn_window win;
	if (pn_win_forward(&win, k->node, x->rank - 2, x->dims + 2, w->dims + 2, 0, k->err))
		return -1;
	if (finish_geom(k, &win, g))
		return -1;
	return alloc_out(k, g, &win, out_dtype);
}

/* ConvTranspose: X [N, C, in...], W [C, M/group, k...]. */
static int convT_setup(pn_kctx *k, const pn_tensor *x, const pn_tensor *w, pn_conv_geom *g)
{
	memset(g, 0, sizeof(*g));
	if (x->rank < 3 || w->rank != x->rank)
		return pn_kfail(k, "X rank %d and W rank %d: expected equal ranks >= 3", x->rank,
				w->rank);
	g->G = pn_attr_int(k->node, "group", 1);
	g->N = x->dims[0];
	g->C = x->dims[1];
	if (g->G < 1 || g->C % g->G || w->dims[0] != g->C)
		return pn_kfail(k, "X has %lld channels, W has %lld, group %lld", (long long)g->C,
				(long long)w->dims[0], (long long)g->G);
	g->Cg = g->C / g->G;
	g->Mg = w->dims[1];
	g->M = g->Mg * g->G;
	if (check_kernel_shape(k, w))
		return -1;
	pn_window win;
	if (pn_win_transpose(&win, k->node, x->rank - 2, x->dims + 2, w->dims + 2, k->err))
		return -1;
	if (finish_geom(k, &win, g))
		return -1;
	return alloc_out(k, g, &win, x->dtype);
}

/* --- im2col / col2im / plain GEMM, for float, double and int32 ------------------- */

/* Range [*lo, *hi) of j in [0, n) with 0 <= x0 + j * s < size. */
static inline void valid_range(int64_t x0, int64_t s, int64_t size, int64_t n, int64_t *lo,
			       int64_t *hi)
{
	int64_t a = x0 >= 0 ? 0 : (-x0 + s - 1) / s;
	int64_t b = x0 > size - 1 ? 0 : (size - 1 - x0) / s + 1;
	*lo = a < n ? a : n;
	*hi = b < n ? b : n;
	if (*hi < *lo)
		*hi = *lo;
}

/* Widest kernel whose valid output columns im2col tabulates per tap. */
#define IM2COL_KX 64

/* dst[q] = src[q * s] for q < n: an im2col run under a strided window. */
#define DEFINE_STRIDED(NAME, T)                                                                  \
	static inline void NAME(T *dst, const T *src, int64_t n, int64_t s)                     \
	{                                                                                        \
		for (int64_t q = 0; q < n; q++)                                                  \
			dst[q] = src[q * s];                                                     \
	}
DEFINE_STRIDED(strided_f32, float)
DEFINE_STRIDED(strided_i32, int32_t)
DEFINE_STRIDED(strided_f64, double)
DEFINE_STRIDED(strided_u8_any, uint8_t)

/* The 8-bit one, with stride 2 (the downsampling convolutions) 16 bytes at
 * a time: the even bytes of 32 (their 16-bit lanes masked and packed). */
static inline void strided_u8(uint8_t *dst, const uint8_t *src, int64_t n, int64_t s)
{
	int64_t q = 0;
#if defined(__SSE2__)
	const __m128i lo = _mm_set1_epi16(0xff);
	/* the last load ends at byte 2q + 31 < 2(n - 1), the run's last byte
	 * read: never past the tensor */
	for (; s == 2 && q + 16 < n; q += 16) {
		__m128i a = _mm_loadu_si128((const __m128i *)(src + 2 * q));
		__m128i b = _mm_loadu_si128((const __m128i *)(src + 2 * q + 16));
		_mm_storeu_si128((__m128i *)(dst + q),
				 _mm_packus_epi16(_mm_and_si128(a, lo), _mm_and_si128(b, lo)));
	}
#endif
	strided_u8_any(dst + q, src + q * s, n - q, s);
}

/*
 * im2col: col[r][j] for rows r = (channel, kz, ky, kx) of `channels` input
 * channels and columns j = output positions p0 .. p0+np-1, `pad` where the
 * window reads padding (0, or a quantized tensor's zero point).  The
 * columns are walked as runs along output rows (a whole row but for the
 * segment's ends), and for whole rows the valid range of each kx is
 * tabulated once: no division per row or element.
 * Channels are independent, so they are the parallel unit.
 */
#define DEFINE_IM2COL(NAME, T, STRIDED)                                                          \
	void NAME(const pn_window *w, const T *x, int64_t channels, int64_t p0, int64_t np,      \
		  T pad, T *col)                                                                 \
	{                                                                                        \
		const int64_t K = w->k[0] * w->k[1] * w->k[2], OW = w->out[2], OH = w->out[1];   \
		const int64_t isp = w->in[0] * w->in[1] * w->in[2];                              \
		int64_t lo_kx[IM2COL_KX], hi_kx[IM2COL_KX];                                      \
		for (int64_t kx = 0; kx < w->k[2] && kx < IM2COL_KX; kx++)                       \
			valid_range(kx * w->d[2] - w->pb[2], w->s[2], w->in[2], OW, &lo_kx[kx],  \
				    &hi_kx[kx]);                                                 \
		const int64_t ow0 = p0 % OW, oh0 = p0 / OW % OH, od0 = p0 / (OW * OH);           \
		_Pragma("omp parallel for if (channels * K * np > PN_PAR_MIN_WORK) schedule(static)") \
		for (int64_t c = 0; c < channels; c++) {                                         \
			T *dst = col + c * K * np;                                               \
			for (int64_t kz = 0; kz < w->k[0]; kz++)                                 \
			for (int64_t ky = 0; ky < w->k[1]; ky++)                                 \
			for (int64_t kx = 0; kx < w->k[2]; kx++) {                               \
				int64_t od = od0, oh = oh0, ow = ow0;                            \
				for (int64_t j = 0; j < np;) {                                   \
					int64_t cnt = OW - ow < np - j ? OW - ow : np - j;       \
					int64_t iz = od * w->s[0] - w->pb[0] + kz * w->d[0];     \
					int64_t iy = oh * w->s[1] - w->pb[1] + ky * w->d[1];     \
					int64_t ix0 = ow * w->s[2] - w->pb[2] + kx * w->d[2];    \
					int64_t lo = 0, hi = 0;                                  \
					if (iz < 0 || iz >= w->in[0] || iy < 0 || iy >= w->in[1]) \
						;                                                \
					else if (cnt == OW && kx < IM2COL_KX)                    \
						lo = lo_kx[kx], hi = hi_kx[kx];                  \
					else                                                     \
						valid_range(ix0, w->s[2], w->in[2], cnt, &lo, &hi); \
					const T *src = x + c * isp + (iz * w->in[1] + iy) * w->in[2] + ix0; \
					for (int64_t q = 0; q < lo; q++)                         \
						dst[q] = pad;                                    \
					if (w->s[2] == 1 && hi > lo)  /* short runs: memcpy's */ \
						memcpy(dst + lo, src + lo, sizeof(T) * (size_t)(hi - lo)); \
					else if (w->s[2] != 1)                                   \
						STRIDED(dst + lo, src + lo * w->s[2], hi - lo, w->s[2]); \
					for (int64_t q = hi; q < cnt; q++)                       \
						dst[q] = pad;                                    \
					dst += cnt;                                              \
					j += cnt;                                                \
					ow = 0;                                                  \
					if (++oh == OH) {                                        \
						oh = 0;                                          \
						od++;                                            \
					}                                                        \
				}                                                                \
			}                                                                        \
		}                                                                                \
	}

DEFINE_IM2COL(pn_conv_im2col_f32, float, strided_f32)
DEFINE_IM2COL(pn_conv_im2col_i32, int32_t, strided_i32)
DEFINE_IM2COL(pn_conv_im2col_u8, uint8_t, strided_u8)
static DEFINE_IM2COL(im2col_f64, double, strided_f64)

/*
 * C[M, N] = A[M, K] * B[K, N] (+ C when accumulate), row-major, for the dtypes
 * pn_sgemm does not cover.  Rows of C are independent: the parallel unit.
 */
#define DEFINE_GEMM_NN(NAME, T)                                                                  \
	void NAME(int64_t M, int64_t N, int64_t K, const T *A, int64_t lda, const T *B,          \
		  int64_t ldb, T *C, int64_t ldc)                                                \
	{                                                                                        \
		_Pragma("omp parallel for if (M * N * K > PN_PAR_MIN_WORK) schedule(static)")    \
		for (int64_t i = 0; i < M; i++) {                                                \
			T *c = C + i * ldc;                                                      \
			for (int64_t j = 0; j < N; j++)                                          \
				c[j] = 0;                                                        \
			for (int64_t p = 0; p < K; p++) {                                        \
				T a = A[i * lda + p];                                            \
				const T *b = B + p * ldb;                                        \
				for (int64_t j = 0; j < N; j++)                                  \
					c[j] += a * b[j];                                        \
			}                                                                        \
		}                                                                                \
	}

DEFINE_GEMM_NN(pn_conv_gemm_i32, int32_t)
static DEFINE_GEMM_NN(gemm_f64, double)

/* Columns per im2col segment for `rows` rows. */
int64_t pn_conv_cols(int64_t rows, int64_t total)
{
	int64_t np = COL_BUDGET / (rows ? rows : 1);
	if (np < COL_MIN)
		np = COL_MIN;
	return np < total ? np : total;
}

/* --- float32 Conv ------------------------------------------------------------------- */

static void add_bias_f32(float *y, int64_t ldy, int64_t m_count, int64_t n, const float *b)
{
	if (!b)
		return;
	for (int64_t m = 0; m < m_count; m++)
		for (int64_t j = 0; j < n; j++)
			y[m * ldy + j] += b[m];
}

int pn_conv_is_pointwise(const pn_window *w)
{
	for (int i = 0; i < 3; i++)
		if (w->k[i] != 1 || w->s[i] != 1 || w->pb[i] || w->pe[i])
			return 0;
	return 1;
}

/*
 * Ungrouped convolutions with one output position per image (a 1x1 map: a
 * batch variant of an SE block or a head on pooled features): Y (N x M) =
 * X' (N x K) * W^T, each image's window one row of X' (the input itself for
 * a 1x1 kernel on a 1x1 map), so a chunk of images is one GEMM instead of a
 * product of one column, its packing and its fork-join per image.
 */
static int conv_one_position_f32(pn_kctx *k, const pn_conv_geom *g, const float *x,
				 const float *w, const float *b, float *y)
{
	const int64_t K = g->C * g->ksz;
	const int direct = pn_conv_is_pointwise(&g->w);
	const int64_t chunk = direct ? g->N : pn_conv_cols(K, g->N);
	float *rows = direct ? NULL : pn_kscratch(k, sizeof(float) * (size_t)(chunk * K));
	if (!direct && !rows)
		return -1;
	for (int64_t n0 = 0; n0 < g->N; n0 += chunk) {
		const int64_t cnt = g->N - n0 < chunk ? g->N - n0 : chunk;
		for (int64_t i = 0; !direct && i < cnt; i++)
			pn_conv_gather_windows(g, x + (n0 + i) * g->C * g->isp, K, rows + i * K);
		pn_sgemm(0, 1, cnt, g->M, K, 1.0f, direct ? x + n0 * K : rows, K, w, K, 0.0f,
			 y + n0 * g->M, g->M);
		for (int64_t n = n0; b && n < n0 + cnt; n++)
			for (int64_t m = 0; m < g->M; m++)
				y[n * g->M + m] += b[m];
	}
	return 0;
}

static int conv_f32(pn_kctx *k, const pn_conv_geom *g, const float *x, const float *w,
		    const float *b, float *y)
{
	if (g->G == 1 && g->osp == 1 && g->N > 1 && pn_conv_force_path < 0)
		return conv_one_position_f32(k, g, x, w, b, y);
	int rc = pn_conv_direct_f32(k, g, x, w, b, y);
	if (rc <= 0)
		return rc;
	const int64_t rows = g->Cg * g->ksz;
	if (pn_conv_is_pointwise(&g->w)) {
		/* Y[n, group] = W[group] (Mg x Cg) * X[n, group] (Cg x spatial). */
		for (int64_t n = 0; n < g->N; n++)
			for (int64_t gi = 0; gi < g->G; gi++) {
				float *yg = y + (n * g->M + gi * g->Mg) * g->osp;
				pn_sgemm(0, 0, g->Mg, g->osp, g->Cg, 1.0f, w + gi * g->Mg * rows, rows,
					 x + (n * g->C + gi * g->Cg) * g->isp, g->isp, 0.0f, yg, g->osp);
				add_bias_f32(yg, g->osp, g->Mg, g->osp, b ? b + gi * g->Mg : NULL);
			}
		return 0;
	}
	const int64_t np = pn_conv_cols(rows, g->osp);
	float *col = pn_kscratch(k, sizeof(float) * (size_t)(rows * np));
	if (!col)
		return -1;
	for (int64_t n = 0; n < g->N; n++)
		for (int64_t gi = 0; gi < g->G; gi++)
			for (int64_t p0 = 0; p0 < g->osp; p0 += np) {
				int64_t cnt = g->osp - p0 < np ? g->osp - p0 : np;
				float *yg = y + (n * g->M + gi * g->Mg) * g->osp + p0;
				pn_conv_im2col_f32(&g->w, x + (n * g->C + gi * g->Cg) * g->isp, g->Cg,
						   p0, cnt, 0.0f, col);
				/* the weights, packed in the session's first run */
				const float *wp = pn_kconst_packed_a(k, 1, (int)gi, g->Mg, rows,
								     w + gi * g->Mg * rows, rows);
				if (wp)
					pn_sgemm_packed_a(0, g->Mg, cnt, rows, 1.0f, wp, col, cnt, 0.0f, yg,
							  g->osp);
				else
					pn_sgemm(0, 0, g->Mg, cnt, rows, 1.0f, w + gi * g->Mg * rows, rows,
						 col, cnt, 0.0f, yg, g->osp);
				add_bias_f32(yg, g->osp, g->Mg, cnt, b ? b + gi * g->Mg : NULL);
			}
	return 0;
}

/* --- float64 Conv ------------------------------------------------------------------- */

static int conv_f64(pn_kctx *k, const pn_conv_geom *g, const double *x, const double *w,
		    const double *b, double *y)
{
	const int64_t rows = g->Cg * g->ksz, np = pn_conv_cols(rows, g->osp);
	double *col = malloc(sizeof(double) * (size_t)(rows * np + 1));
	if (!col)
		return pn_kfail(k, "out of memory (im2col %lld x %lld)", (long long)rows, (long long)np);
	for (int64_t n = 0; n < g->N; n++)
		for (int64_t gi = 0; gi < g->G; gi++)
			for (int64_t p0 = 0; p0 < g->osp; p0 += np) {
				int64_t cnt = g->osp - p0 < np ? g->osp - p0 : np;
				double *yg = y + (n * g->M + gi * g->Mg) * g->osp + p0;
				im2col_f64(&g->w, x + (n * g->C + gi * g->Cg) * g->isp, g->Cg, p0, cnt,
					   0.0, col);
				gemm_f64(g->Mg, cnt, rows, w + gi * g->Mg * rows, rows, col, cnt, yg,
					 g->osp);
				for (int64_t m = 0; b && m < g->Mg; m++)
					for (int64_t j = 0; j < cnt; j++)
						yg[m * g->osp + j] += b[gi * g->Mg + m];
			}
	free(col);
	return 0;
}

/* --- float32 ConvTranspose ---------------------------------------------------------- */

/*
 * col2im for ConvTranspose: adds col[(m, kz, ky, kx)][j] into y[m] at the
 * output position input position p0+j reaches through tap (kz, ky, kx).  Each
 * m writes only its own output plane, so m is the parallel unit and every
 * plane is summed in the same order whatever the thread count.
 */
static void col2im_f32(const pn_conv_geom *g, const float *col, int64_t p0, int64_t np, float *y)
{
	const pn_window *w = &g->w;
	const int64_t K = g->ksz;
	#pragma omp parallel for if (g->Mg * K * np > PN_PAR_MIN_WORK) schedule(static)
	for (int64_t m = 0; m < g->Mg; m++) {
		float *ym = y + m * g->osp;
		for (int64_t kk = 0; kk < K; kk++) {
			int64_t kx = kk % w->k[2], ky = kk / w->k[2] % w->k[1];
			int64_t kz = kk / (w->k[2] * w->k[1]);
			const float *src = col + (m * K + kk) * np;
			int64_t p = p0, end = p0 + np, iw = p % w->in[2];
			int64_t ih = p / w->in[2] % w->in[1], id = p / (w->in[2] * w->in[1]);
			while (p < end) {
				int64_t cnt = w->in[2] - iw < end - p ? w->in[2] - iw : end - p;
				int64_t oz = id * w->s[0] - w->pb[0] + kz * w->d[0];
				int64_t oy = ih * w->s[1] - w->pb[1] + ky * w->d[1];
				int64_t ox0 = iw * w->s[2] - w->pb[2] + kx * w->d[2], lo = 0, hi = 0;
				if (oz >= 0 && oz < w->out[0] && oy >= 0 && oy < w->out[1])
					valid_range(ox0, w->s[2], w->out[2], cnt, &lo, &hi);
				float *dst = ym + (oz * w->out[1] + oy) * w->out[2] + ox0;
				if (w->s[2] == 1)
					for (int64_t j = lo; j < hi; j++)
						dst[j] += src[j];
				else
					for (int64_t j = lo; j < hi; j++)
						dst[j * w->s[2]] += src[j];
				src += cnt;
				p += cnt;
				iw = 0;
				if (++ih == w->in[1]) {
					ih = 0;
					id++;
				}
			}
		}
	}
}

static void fill_bias_f32(const pn_conv_geom *g, const float *b, float *y)
{
	#pragma omp parallel for if (g->N * g->M * g->osp > PN_PAR_MIN_WORK) schedule(static)
	for (int64_t nm = 0; nm < g->N * g->M; nm++) {
		float v = b ? b[nm % g->M] : 0.0f;
		for (int64_t j = 0; j < g->osp; j++)
			y[nm * g->osp + j] = v;
	}
}

static int convT_f32(pn_kctx *k, const pn_conv_geom *g, const float *x, const float *w,
		     const float *b, float *y)
{
	const int64_t rows = g->Mg * g->ksz, np = pn_conv_cols(rows, g->isp);
	float *col = malloc(sizeof(float) * (size_t)(rows * np + 1));
	if (!col)
		return pn_kfail(k, "out of memory (col2im %lld x %lld)", (long long)rows, (long long)np);
	fill_bias_f32(g, b, y);
	for (int64_t n = 0; n < g->N; n++)
		for (int64_t gi = 0; gi < g->G; gi++)
			for (int64_t p0 = 0; p0 < g->isp; p0 += np) {
				int64_t cnt = g->isp - p0 < np ? g->isp - p0 : np;
				/* col (Mg*K x cnt) = W[group]^T (Cg x Mg*K)^T * X[n, group] (Cg x cnt) */
				pn_sgemm(1, 0, rows, cnt, g->Cg, 1.0f, w + gi * g->Cg * rows, rows,
					 x + (n * g->C + gi * g->Cg) * g->isp + p0, g->isp, 0.0f, col, cnt);
				col2im_f32(g, col, p0, cnt, y + (n * g->M + gi * g->Mg) * g->osp);
			}
	free(col);
	return 0;
}

/* float64 ConvTranspose: a direct scatter, in a fixed order per output plane. */
static int convT_f64(pn_kctx *k, const pn_conv_geom *g, const double *x, const double *w,
		     const double *b, double *y)
{
	(void)k;
	const pn_window *wn = &g->w;
	#pragma omp parallel for if (g->N * g->M * g->isp * g->Cg * g->ksz > PN_PAR_MIN_WORK)
	for (int64_t nm = 0; nm < g->N * g->M; nm++) {
		int64_t n = nm / g->M, m = nm % g->M, gi = m / g->Mg, mg = m % g->Mg;
		double *ym = y + nm * g->osp;
		for (int64_t j = 0; j < g->osp; j++)
			ym[j] = b ? b[m] : 0.0;
		for (int64_t cg = 0; cg < g->Cg; cg++) {
			int64_t c = gi * g->Cg + cg;
			const double *xc = x + (n * g->C + c) * g->isp;
			const double *wk = w + (c * g->Mg + mg) * g->ksz;
			for (int64_t p = 0; p < g->isp; p++) {
				int64_t iw = p % wn->in[2], ih = p / wn->in[2] % wn->in[1];
				int64_t id = p / (wn->in[2] * wn->in[1]);
				for (int64_t kk = 0; kk < g->ksz; kk++) {
					int64_t kx = kk % wn->k[2], ky = kk / wn->k[2] % wn->k[1];
					int64_t kz = kk / (wn->k[2] * wn->k[1]);
					int64_t oz = id * wn->s[0] - wn->pb[0] + kz * wn->d[0];
					int64_t oy = ih * wn->s[1] - wn->pb[1] + ky * wn->d[1];
					int64_t ox = iw * wn->s[2] - wn->pb[2] + kx * wn->d[2];
					if (oz < 0 || oz >= wn->out[0] || oy < 0 || oy >= wn->out[1] ||
					    ox < 0 || ox >= wn->out[2])
						continue;
					ym[(oz * wn->out[1] + oy) * wn->out[2] + ox] += xc[p] * wk[kk];
				}
			}
		}
	}
	return 0;
}

/* --- kernels -------------------------------------------------------------------------- */

typedef int (*conv_f32_fn)(pn_kctx *, const pn_conv_geom *, const float *, const float *,
			   const float *, float *);
typedef int (*conv_f64_fn)(pn_kctx *, const pn_conv_geom *, const double *, const double *,
			   const double *, double *);

static int check_bias(pn_kctx *k, const pn_tensor *b, const pn_tensor *x, int64_t M)
{
	if (!b)
		return 0;
	if (b->dtype != x->dtype || b->numel != M)
		return pn_kfail(k, "B must be %s[%lld]", pn_dtype_name(x->dtype), (long long)M);
	return 0;
}

/* Runs a float kernel on X, W, B of the node's dtype (float16/bfloat16 staged
 * through float32). */
static int run_float(pn_kctx *k, const pn_conv_geom *g, conv_f32_fn f32, conv_f64_fn f64)
{
	const pn_tensor *x = k->in[0], *w = k->in[1], *b = pn_kin(k, 2);
	pn_tensor *y = k->out[0];
	if (w->dtype != x->dtype)
		return pn_kfail(k, "X is %s but W is %s", pn_dtype_name(x->dtype),
				pn_dtype_name(w->dtype));
	if (check_bias(k, b, x, g->M))
		return -1;
	if (x->dtype == PN_DOUBLE)
		return f64(k, g, x->data, w->data, b ? b->data : NULL, y->data);
	if (x->dtype != PN_FLOAT && x->dtype != PN_FLOAT16 && x->dtype != PN_BFLOAT16)
		return pn_kfail(k, "unsupported dtype %s", pn_dtype_name(x->dtype));
	float *xf = pn_win_load_f32(x), *wf = pn_win_load_f32(w), *bf = b ? pn_win_load_f32(b) : NULL;
	float *yf = x->dtype == PN_FLOAT ? y->data : malloc(sizeof(float) * (size_t)(y->numel + 1));
	int rc = (!xf || !wf || (b && !bf) || !yf) ? pn_kfail(k, "out of memory") : 0;
	if (!rc)
		rc = f32(k, g, xf, wf, bf, yf);
	if (!rc && yf != y->data)
		pn_win_store_f32(y, yf);
	if (xf != x->data)
		free(xf);
	if (wf != w->data)
		free(wf);
	if (b && bf != b->data)
		free(bf);
	if (yf != y->data)
		free(yf);
	return rc;
}

int pn_kernel_Conv(pn_kctx *k)
{
	pn_conv_geom g;
	if (k->n_in < 2 || !k->in[0] || !k->in[1])
		return pn_kfail(k, "Conv needs X and W");
	if (pn_conv_setup(k, k->in[0], k->in[1], k->in[0]->dtype, &g))
		return -1;
	return run_float(k, &g, conv_f32, conv_f64);
}

int pn_kernel_ConvTranspose(pn_kctx *k)
{
	pn_conv_geom g;
	if (k->n_in < 2 || !k->in[0] || !k->in[1])
		return pn_kfail(k, "ConvTranspose needs X and W");
	if (convT_setup(k, k->in[0], k->in[1], &g))
		return -1;
	return run_float(k, &g, convT_f32, convT_f64);
}
