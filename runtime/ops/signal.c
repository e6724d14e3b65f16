/*
 * signal.c - Fourier transforms: DFT and STFT (opset 17).
 *
 * Signals carry a last dim of 1 (real) or 2 (real, imaginary); outputs are
 * always complex (last dim 2).  Transforms are computed in double: an
 * iterative radix-2 FFT for power-of-two lengths, the direct O(n^2) sum
 * otherwise.  Each transformed line is independent, so lines are split
 * across threads; every line is computed the same way whatever the split.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/infer.h"
#include "runtime/kernel.h"

/* --- one-dimensional transform ------------------------------------------------------- */

/* Twiddle factors exp(-2 pi i k / n) for k < n, shared by every line. */
typedef struct dft_plan {
	int64_t n;
	int pow2, inverse;
	double *cs, *sn;
} dft_plan;

static int plan_init(dft_plan *p, int64_t n, int inverse)
{
	p->n = n;
	p->inverse = inverse;
	p->pow2 = n > 0 && !(n & (n - 1));
	p->cs = malloc(sizeof(double) * (size_t)(n ? n : 1));
	p->sn = malloc(sizeof(double) * (size_t)(n ? n : 1));
	if (!p->cs || !p->sn)
		return -1;
	for (int64_t k = 0; k < n; k++) {
		double a = -2.0 * M_PI * (double)k / (double)n;
		p->cs[k] = cos(a);
		p->sn[k] = inverse ? -sin(a) : sin(a);
	}
	return 0;
}

static void plan_free(dft_plan *p)
{
	free(p->cs);
	free(p->sn);
}

/* In-place radix-2 FFT of re/im (length a power of two). */
static void fft_pow2(const dft_plan *p, double *re, double *im)
{
	int64_t n = p->n;
	for (int64_t i = 1, j = 0; i < n; i++) {
		int64_t bit = n >> 1;
		for (; j & bit; bit >>= 1)
			j ^= bit;
		j ^= bit;
		if (i < j) {
			double t = re[i];
			re[i] = re[j];
			re[j] = t;
			t = im[i];
			im[i] = im[j];
			im[j] = t;
		}
	}
	for (int64_t len = 2; len <= n; len <<= 1) {
		int64_t half = len >> 1, step = n / len;
		for (int64_t s = 0; s < n; s += len)
			for (int64_t k = 0; k < half; k++) {
				double wr = p->cs[k * step], wi = p->sn[k * step];
				double *ar = re + s + k, *ai = im + s + k;
				double br = ar[half] * wr - ai[half] * wi;
				double bi = ar[half] * wi + ai[half] * wr;
				ar[half] = *ar - br;
				ai[half] = *ai - bi;
				*ar += br;
				*ai += bi;
			}
	}
}

/* The direct sum, reading re/im and writing ore/oim. */
static void dft_direct(const dft_plan *p, const double *re, const double *im, double *ore, double *oim)
{
	int64_t n = p->n;
	for (int64_t k = 0; k < n; k++) {
		double sr = 0, si = 0;
		for (int64_t j = 0, idx = 0; j < n; j++) {
			sr += re[j] * p->cs[idx] - im[j] * p->sn[idx];
			si += re[j] * p->sn[idx] + im[j] * p->cs[idx];
			idx += k;
			if (idx >= n)
				idx -= n;
		}
		ore[k] = sr;
		oim[k] = si;
	}
}

/* Transforms re/im (length n, zero-padded by the caller) in place; buf is
 * 2n doubles of scratch.  The inverse is scaled by 1/n. */
static void dft_line(const dft_plan *p, double *re, double *im, double *buf)
{
	int64_t n = p->n;
	if (p->pow2) {
		fft_pow2(p, re, im);
	} else {
		dft_direct(p, re, im, buf, buf + n);
		memcpy(re, buf, sizeof(double) * (size_t)n);
		memcpy(im, buf + n, sizeof(double) * (size_t)n);
	}
	if (p->inverse)
		for (int64_t k = 0; k < n; k++) {
			re[k] /= (double)n;
			im[k] /= (double)n;
		}
}

/* --- element access ---------------------------------------------------------------------- */

static double ld(const pn_tensor *t, int64_t i)
{
	switch (t->dtype) {
	case PN_FLOAT: return ((const float *)t->data)[i];
	case PN_DOUBLE: return ((const double *)t->data)[i];
	default: return pn_tensor_get_f64(t, i);
	}
}

static void st(pn_tensor *t, int64_t i, double v)
{
	switch (t->dtype) {
	case PN_FLOAT: ((float *)t->data)[i] = (float)v; break;
	case PN_DOUBLE: ((double *)t->data)[i] = v; break;
	default: pn_tensor_set_f64(t, i, v);
	}
}

static int float_dtype(int dt)
{
	return dt == PN_FLOAT || dt == PN_DOUBLE || dt == PN_FLOAT16 || dt == PN_BFLOAT16;
}

/* Per-thread scratch: re, im and 2n of work space. */
static double *scratch(int64_t n)
{
	return malloc(sizeof(double) * (size_t)(4 * n + 1));
}

/* --- DFT ------------------------------------------------------------------------------------ */

typedef struct dft_shape {
	int axis;
	int64_t len;     /* signal length along axis */
	int64_t n;       /* transform length */
	int64_t n_out;   /* kept along axis: n, or n/2+1 when onesided */
} dft_shape;

/* Reads axis and lengths; n is -1 when dft_length is given but unknown. */
static int dft_geometry(const pn_node *node, int rank, const int64_t *dims, int has_len, int64_t len_v,
			dft_shape *s, const char **why)
{
	int64_t a = pn_attr_int(node, "axis", 1);
	if (a < 0)
		a += rank;
	if (rank < 2 || a < 0 || a > rank - 2) {
		*why = "axis out of range (the last dim holds real/imaginary parts)";
		return -1;
	}
	s->axis = (int)a;
	s->len = dims[a];
	s->n = has_len ? len_v : s->len;
	if (has_len && len_v != -1 && len_v < 1) {
		*why = "dft_length must be positive";
		return -1;
	}
	s->n_out = s->n < 0 ? -1 : pn_attr_int(node, "onesided", 0) ? s->n / 2 + 1 : s->n;
	return 0;
}

int pn_infer_DFT(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0);
	if (!x || x->type.rank < 0) {
		pn_iset(c, 0, x ? x->type.dtype : PN_UNDEFINED, -1, NULL);
		return 0;
	}
	int64_t lv = -1;
	int has_len = pn_iin(c, 1) != NULL;
	if (has_len && pn_iints(c, 1, &lv, 1) != 1)
		lv = -1;
	dft_shape s;
	const char *why;
	if (dft_geometry(c->node, x->type.rank, x->type.dims, has_len, lv, &s, &why))
		return pn_ifail(c, "%s", why);
	int64_t dims[PN_MAX_RANK];
	for (int d = 0; d < x->type.rank; d++)
		dims[d] = x->type.dims[d];
	dims[s.axis] = s.n_out;
	dims[x->type.rank - 1] = 2;
	pn_iset(c, 0, x->type.dtype, x->type.rank, dims);
	return 0;
}

int pn_kernel_DFT(pn_kctx *k)
{
	const pn_tensor *x = k->in[0], *lt = pn_kin(k, 1);
	if (!float_dtype(x->dtype))
		return pn_kfail(k, "unsupported dtype %s", pn_dtype_name(x->dtype));
	if (lt && (lt->numel != 1 || !pn_dtype_is_int(lt->dtype)))
		return pn_kfail(k, "dft_length must be one integer");
	dft_shape s;
	const char *why;
	if (dft_geometry(k->node, x->rank, x->dims, lt != NULL, lt ? pn_tensor_get_i64(lt, 0) : 0, &s,
			 &why))
		return pn_kfail(k, "%s", why);
	int64_t C = x->dims[x->rank - 1];
	if (C != 1 && C != 2)
		return pn_kfail(k, "last dim must be 1 (real) or 2 (complex), got %lld", (long long)C);
	int64_t dims[PN_MAX_RANK];
	memcpy(dims, x->dims, sizeof(dims));
	dims[s.axis] = s.n_out;
	dims[x->rank - 1] = 2;
	pn_tensor *o = pn_out_alloc(k, 0, x->dtype, x->rank, dims);
	if (!o)
		return -1;
	int64_t outer = 1, inner = 1;
	for (int d = 0; d < s.axis; d++)
		outer *= x->dims[d];
	for (int d = s.axis + 1; d < x->rank - 1; d++)
		inner *= x->dims[d];
	dft_plan p;
	if (plan_init(&p, s.n, (int)pn_attr_int(k->node, "inverse", 0))) {
		plan_free(&p);
		return pn_kfail(k, "out of memory");
	}
	int64_t lines = outer * inner, keep = s.len < s.n ? s.len : s.n;
	int par = lines > 1 && lines * s.n * (p.pow2 ? 8 : s.n) >= PN_PAR_MIN_WORK;
	int fail = 0;
	#pragma omp parallel if (par) reduction(| : fail)
	{
		double *w = scratch(s.n);
		if (!w)
			fail = 1;
		#pragma omp for schedule(static)
		for (int64_t l = 0; l < lines; l++) {
			if (!w)
				continue;
			int64_t ob = l / inner, ib = l % inner;
			double *re = w, *im = w + s.n;
			for (int64_t j = 0; j < s.n; j++) {
				int64_t e = ((ob * s.len + j) * inner + ib) * C;
				re[j] = j < keep ? ld(x, e) : 0;
				im[j] = j < keep && C == 2 ? ld(x, e + 1) : 0;
			}
			dft_line(&p, re, im, w + 2 * s.n);
			for (int64_t j = 0; j < s.n_out; j++) {
				int64_t e = ((ob * s.n_out + j) * inner + ib) * 2;
				st(o, e, re[j]);
				st(o, e + 1, im[j]);
			}
		}
		free(w);
	}
	plan_free(&p);
	return fail ? pn_kfail(k, "out of memory") : 0;
}

/* --- STFT ------------------------------------------------------------------------------------- */

typedef struct stft_shape {
	int64_t batch, len, C;   /* signal [batch, len, C] */
	int64_t step, flen;      /* frame step and length */
	int64_t frames, bins;
} stft_shape;

static void stft_counts(stft_shape *s, int onesided)
{
	s->frames = s->len >= 0 && s->flen >= 0 && s->step > 0
			    ? (s->len >= s->flen ? (s->len - s->flen) / s->step + 1 : 0)
			    : -1;
	s->bins = s->flen < 0 ? -1 : onesided ? s->flen / 2 + 1 : s->flen;
}

int pn_infer_STFT(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0), *win = pn_iin(c, 2);
	int dt = x ? x->type.dtype : PN_UNDEFINED;
	if (!x || (x->type.rank != 3 && x->type.rank != 2)) {
		if (x && x->type.rank >= 0)
			return pn_ifail(c, "signal must be [batch, length, 1 or 2]");
		pn_iset(c, 0, dt, 4, (int64_t[]){-1, -1, -1, 2});
		return 0;
	}
	stft_shape s = {.batch = x->type.dims[0], .len = x->type.dims[1], .step = -1, .flen = -1};
	int64_t v;
	if (pn_iints(c, 1, &v, 1) == 1)
		s.step = v;
	if (pn_iints(c, 3, &v, 1) == 1)
		s.flen = v;
	else if (win && win->type.rank == 1)
		s.flen = win->type.dims[0];
	stft_counts(&s, (int)pn_attr_int(c->node, "onesided", 1));
	pn_iset(c, 0, dt, 4, (int64_t[]){s.batch, s.frames, s.bins, 2});
	return 0;
}

static int stft_read(pn_kctx *k, stft_shape *s)
{
	const pn_tensor *x = k->in[0], *step = k->in[1], *win = pn_kin(k, 2), *fl = pn_kin(k, 3);
	/* [batch, length] is taken as real too (ONNX Runtime accepts it). */
	if (!float_dtype(x->dtype) || x->rank < 2 || x->rank > 3 ||
	    (x->rank == 3 && x->dims[2] != 1 && x->dims[2] != 2))
		return pn_kfail(k, "signal must be float [batch, length, 1 or 2]");
	s->batch = x->dims[0];
	s->len = x->dims[1];
	s->C = x->rank == 3 ? x->dims[2] : 1;
	if (step->numel != 1 || !pn_dtype_is_int(step->dtype) || (s->step = pn_tensor_get_i64(step, 0)) < 1)
		return pn_kfail(k, "frame_step must be one positive integer");
	if (win && win->rank != 1)
		return pn_kfail(k, "window must be 1-D");
	if (fl) {
		if (fl->numel != 1 || !pn_dtype_is_int(fl->dtype))
			return pn_kfail(k, "frame_length must be one integer");
		s->flen = pn_tensor_get_i64(fl, 0);
		if (win && win->dims[0] != s->flen)
			return pn_kfail(k, "window has %lld values, frame_length is %lld",
					(long long)win->dims[0], (long long)s->flen);
	} else if (win) {
		s->flen = win->dims[0];
	} else {
		return pn_kfail(k, "STFT needs a window or a frame_length");
	}
	if (s->flen < 1 || s->flen > s->len)
		return pn_kfail(k, "frame length %lld out of [1, %lld]", (long long)s->flen,
				(long long)s->len);
	stft_counts(s, (int)pn_attr_int(k->node, "onesided", 1));
	return 0;
}

int pn_kernel_STFT(pn_kctx *k)
{
	const pn_tensor *x = k->in[0], *win = pn_kin(k, 2);
	stft_shape s;
	if (stft_read(k, &s))
		return -1;
	pn_tensor *o = pn_out_alloc(k, 0, x->dtype, 4, (int64_t[]){s.batch, s.frames, s.bins, 2});
	if (!o)
		return -1;
	dft_plan p;
	if (plan_init(&p, s.flen, 0)) {
		plan_free(&p);
		return pn_kfail(k, "out of memory");
	}
	int64_t lines = s.batch * s.frames, n = s.flen;
	int par = lines > 1 && lines * n * (p.pow2 ? 8 : n) >= PN_PAR_MIN_WORK;
	int fail = 0;
	#pragma omp parallel if (par) reduction(| : fail)
	{
		double *w = scratch(n);
		if (!w)
			fail = 1;
		#pragma omp for schedule(static)
		for (int64_t l = 0; l < lines; l++) {
			if (!w)
				continue;
			int64_t b = l / s.frames, f = l % s.frames;
			double *re = w, *im = w + n;
			for (int64_t j = 0; j < n; j++) {
				int64_t e = (b * s.len + f * s.step + j) * s.C;
				double wv = win ? ld(win, j) : 1.0;
				re[j] = ld(x, e) * wv;
				im[j] = s.C == 2 ? ld(x, e + 1) * wv : 0;
			}
			dft_line(&p, re, im, w + 2 * n);
			for (int64_t j = 0; j < s.bins; j++) {
				int64_t e = (l * s.bins + j) * 2;
				st(o, e, re[j]);
				st(o, e + 1, im[j]);
			}
		}
		free(w);
	}
	plan_free(&p);
	return fail ? pn_kfail(k, "out of memory") : 0;
}
