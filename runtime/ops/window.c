/*
 * window.c - sliding-window geometry of Conv, ConvTranspose and the pools,
 * and float32 staging of narrow dtypes (see window.h).
 */
#include "runtime/ops/window.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "runtime/ops/vec.h"

/* Floor division (C's / truncates toward zero; ONNX's formulas are Python's). */
static int64_t floordiv(int64_t a, int64_t b)
{
	int64_t q = a / b;
	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

enum { PAD_NOTSET, PAD_VALID, PAD_SAME_UPPER, PAD_SAME_LOWER };

static int auto_pad(const pn_node *node, char *err)
{
	const char *s = pn_attr_str(node, "auto_pad", "NOTSET");
	if (!strcmp(s, "NOTSET") || !*s)
		return PAD_NOTSET;
	if (!strcmp(s, "VALID"))
		return PAD_VALID;
	if (!strcmp(s, "SAME_UPPER"))
		return PAD_SAME_UPPER;
	if (!strcmp(s, "SAME_LOWER"))
		return PAD_SAME_LOWER;
	return pn_fail(err, "unknown auto_pad '%s'", s);
}

/* An ints attribute of exactly n entries (or absent: dflt everywhere). */
static int read_ints(const pn_node *node, const char *name, int n, int64_t dflt, int64_t *out,
		     int positive, char *err)
{
	int64_t tmp[2 * PN_WIN_MAX + 1];
	int got = pn_attr_ints(node, name, tmp, 2 * PN_WIN_MAX + 1);
	if (got < 0) {
		for (int i = 0; i < n; i++)
			out[i] = dflt;
		return 0;
	}
	if (got != n)
		return pn_fail(err, "%s has %d entries, expected %d", name, got, n);
	for (int i = 0; i < n; i++) {
		if (positive && tmp[i] < 1)
			return pn_fail(err, "%s[%d] = %lld must be positive", name, i, (long long)tmp[i]);
		out[i] = tmp[i];
	}
	return 0;
}

/* Strides, dilations and explicit pads, common to both directions. */
static int read_common(pn_window *w, const pn_node *node, int n, const int64_t *in,
		       const int64_t *k, char *err)
{
	if (n < 1 || n > PN_WIN_MAX)
		return pn_fail(err, "%d spatial dims (1..%d supported)", n, PN_WIN_MAX);
	memset(w, 0, sizeof(*w));
	w->n = n;
	for (int i = 0; i < n; i++) {
		w->in[i] = in[i];
		w->k[i] = k[i];
		w->out[i] = -1;
	}
	if (read_ints(node, "strides", n, 1, w->s, 1, err))
		return -1;
	if (read_ints(node, "dilations", n, 1, w->d, 1, err))
		return -1;
	int64_t pads[2 * PN_WIN_MAX];
	if (read_ints(node, "pads", 2 * n, 0, pads, 0, err))
		return -1;
	for (int i = 0; i < n; i++) {
		w->pb[i] = pads[i];
		w->pe[i] = pads[n + i];
	}
	return 0;
}

int pn_win_forward(pn_window *w, const pn_node *node, int n, const int64_t *in, const int64_t *k,
		   int flags, char *err)
{
	int ap = auto_pad(node, err);
	if (ap < 0 || read_common(w, node, n, in, k, err))
		return -1;
	for (int i = 0; i < n; i++) {
		if (k[i] == 0 || k[i] < -1)
			return pn_fail(err, "kernel size %lld on spatial axis %d", (long long)k[i], i);
		if (ap != PAD_NOTSET)
			w->pb[i] = w->pe[i] = 0;
		if (in[i] < 0 || k[i] < 0)
			continue;
		int64_t s = w->s[i], ek = (k[i] - 1) * w->d[i] + 1, out;
		if (ap == PAD_SAME_UPPER || ap == PAD_SAME_LOWER) {
			out = (in[i] + s - 1) / s;
			int64_t total = (out - 1) * s + ek - in[i];
			if (total < 0)
				total = 0;
			/* SAME_UPPER puts the odd pixel at the end, SAME_LOWER at the start. */
			w->pb[i] = ap == PAD_SAME_UPPER ? total / 2 : total - total / 2;
			w->pe[i] = total - w->pb[i];
		} else {
			int64_t span = in[i] + w->pb[i] + w->pe[i] - ek;
			if (span < 0)
				return pn_fail(err, "window %lld exceeds padded input %lld on spatial axis %d",
					       (long long)ek, (long long)(in[i] + w->pb[i] + w->pe[i]), i);
			out = span / s + 1;
			if ((flags & PN_WIN_CEIL) && ap == PAD_NOTSET && span % s) {
				out++;
				/* As PyTorch does: the last window must start inside the
				 * input or its leading padding, never in the trailing one. */
				if ((out - 1) * s >= in[i] + w->pb[i])
					out--;
			}
		}
		w->out[i] = out;
	}
	return 0;
}

int pn_win_transpose(pn_window *w, const pn_node *node, int n, const int64_t *in,
		     const int64_t *k, char *err)
{
	int ap = auto_pad(node, err);
	if (ap < 0 || read_common(w, node, n, in, k, err))
		return -1;
	int64_t opad[PN_WIN_MAX], oshape[PN_MAX_RANK + 1];
	if (read_ints(node, "output_padding", n, 0, opad, 0, err))
		return -1;
	int n_os = pn_attr_ints(node, "output_shape", oshape, PN_MAX_RANK + 1);
	/* output_shape lists the spatial sizes; some exporters give N and C too. */
	if (n_os >= 0 && n_os != n && n_os != n + 2)
		return pn_fail(err, "output_shape has %d entries, expected %d", n_os, n);
	const int64_t *os = n_os == n + 2 ? oshape + 2 : oshape;
	for (int i = 0; i < n; i++) {
		if (k[i] < 1 && k[i] != -1)
			return pn_fail(err, "kernel size %lld on spatial axis %d", (long long)k[i], i);
		if (in[i] < 0 || k[i] < 0)
			continue;
		int64_t full = w->s[i] * (in[i] - 1) + opad[i] + (k[i] - 1) * w->d[i] + 1;
		int64_t out = -1;
		if (n_os >= 0)
			out = os[i];
		else if (ap == PAD_SAME_UPPER || ap == PAD_SAME_LOWER)
			out = in[i] * w->s[i];
		if (out >= 0) {
			/* Pads that give the requested size (ConvTranspose spec, with
			 * Python's floor division: a negative total grows the end). */
			int64_t total = full - out;
			if (ap == PAD_SAME_UPPER) {
				w->pb[i] = floordiv(total, 2);
				w->pe[i] = total - w->pb[i];
			} else {
				w->pe[i] = floordiv(total, 2);
				w->pb[i] = total - w->pe[i];
			}
		} else {
			if (ap == PAD_VALID)
				w->pb[i] = w->pe[i] = 0;
			out = full - w->pb[i] - w->pe[i];
		}
		if (out < 1)
			return pn_fail(err, "ConvTranspose output size %lld on spatial axis %d",
				       (long long)out, i);
		w->out[i] = out;
	}
	return 0;
}

int pn_win_to3(const pn_window *w, pn_window *w3)
{
	if (w->n > 3)
		return -1;
	int lead = 3 - w->n;
	memset(w3, 0, sizeof(*w3));
	w3->n = 3;
	for (int i = 0; i < 3; i++) {
		int j = i - lead;
		w3->in[i] = j < 0 ? 1 : w->in[j];
		w3->out[i] = j < 0 ? 1 : w->out[j];
		w3->k[i] = j < 0 ? 1 : w->k[j];
		w3->s[i] = j < 0 ? 1 : w->s[j];
		w3->d[i] = j < 0 ? 1 : w->d[j];
		w3->pb[i] = j < 0 ? 0 : w->pb[j];
		w3->pe[i] = j < 0 ? 0 : w->pe[j];
	}
	return 0;
}

/* --- flat layout ------------------------------------------------------------------ */

/* Range [*lo, *hi) of j in [0, n) with 0 <= x0 + j * s < size. */
static void inside(int64_t x0, int64_t s, int64_t size, int64_t n, int64_t *lo, int64_t *hi)
{
	int64_t a = x0 >= 0 ? 0 : (-x0 + s - 1) / s;
	int64_t b = x0 > size - 1 ? 0 : (size - 1 - x0) / s + 1;
	*lo = a < n ? a : n;
	*hi = b < n ? b : n;
	if (*hi < *lo)
		*hi = *lo;
}

/* Beyond this a window's padded extent, stride, dilation, padding or
 * packed volume is no shape the flat layout is for (a hostile attribute can be near 2^63): the plan is
 * declined and the kernel takes its general path. */
#define PN_FLAT_MAX_EXTENT ((int64_t)1 << 40)

/* The padded extent the outputs of axis a read (ceil_mode may reach past
 * the end padding), or -1 when it is beyond PN_FLAT_MAX_EXTENT. */
static int64_t padded_span(const pn_window *w, int a)
{
	int64_t x, y;
	if (w->s[a] < 1 || w->s[a] > PN_FLAT_MAX_EXTENT || w->d[a] > PN_FLAT_MAX_EXTENT ||
	    w->pb[a] < 0 || w->pb[a] > PN_FLAT_MAX_EXTENT || w->in[a] > PN_FLAT_MAX_EXTENT ||
	    __builtin_mul_overflow(w->out[a] - 1, w->s[a], &x) ||
	    __builtin_mul_overflow(w->k[a] - 1, w->d[a], &y) || __builtin_add_overflow(x, y, &x) ||
	    x >= PN_FLAT_MAX_EXTENT)
		return -1;
	return x + 1;
}

int pn_flat_plan(pn_flat *f, const pn_window *w3, int64_t *off)
{
	memset(f, 0, sizeof(*f));
	f->w = *w3;
	const pn_window *w = w3;
	int64_t nph = 1;
	for (int a = 0; a < 3; a++) {
		/* the padded extent, split evenly into s[a] phases */
		int64_t span = padded_span(w, a);
		if (span < 0)
			return -1;
		f->n[a] = (span + w->s[a] - 1) / w->s[a];
		for (int64_t k = 0; k < w->k[a]; k++) {
			int64_t r = k * w->d[a] % w->s[a], i = 0;
			while (i < f->nres[a] && f->res[a][i] != r)
				i++;
			if (i == f->nres[a]) {
				if (i == PN_FLAT_PHASES)
					return -1;
				f->res[a][f->nres[a]++] = r;
			}
		}
		nph *= f->nres[a];
	}
	if (nph > PN_FLAT_PHASES)
		return -1;
	for (int a = 0; a < 3; a++)
		for (int64_t i = 0; i < f->nres[a]; i++)
			inside(f->res[a][i] - w->pb[a], w->s[a], w->in[a], f->n[a], &f->lo[a][i],
			       &f->hi[a][i]);
	if (__builtin_mul_overflow(f->n[0], f->n[1], &f->vol) ||
	    __builtin_mul_overflow(f->vol, f->n[2], &f->vol) || f->vol > PN_FLAT_MAX_EXTENT)
		return -1;
	int64_t last = pn_flat_row(f, w->out[0] - 1, w->out[1] - 1) + w->out[2];
	f->nq = (last + PN_FLAT_Q - 1) / PN_FLAT_Q * PN_FLAT_Q;
	int64_t t = 0, max_off = 0;
	for (int64_t kz = 0; kz < w->k[0]; kz++)
		for (int64_t ky = 0; ky < w->k[1]; ky++)
			for (int64_t kx = 0; kx < w->k[2]; kx++) {
				int64_t e[3] = {kz * w->d[0], ky * w->d[1], kx * w->d[2]}, ph = 0;
				for (int a = 0; a < 3; a++) {
					int64_t i = 0;
					while (f->res[a][i] != e[a] % w->s[a])
						i++;
					ph = ph * f->nres[a] + i;
				}
				off[t] = ph * f->vol + pn_flat_row(f, e[0] / w->s[0], e[1] / w->s[1]) +
					 e[2] / w->s[2];
				max_off = off[t] > max_off ? off[t] : max_off;
				t++;
			}
	/* The last block reads up to max_off + nq - 1, packing a row may write
	 * PN_VL - 1 floats past it, and planes stay 64-byte aligned one after
	 * another. */
	int64_t size = nph * f->vol + PN_VL > max_off + f->nq ? nph * f->vol + PN_VL : max_off + f->nq;
	f->size = (size + 15) / 16 * 16;
	return 0;
}

/* d[0, n) = src[0, n * s) read with stride s (1 or 2). */
static inline void copy_strided(float *restrict d, const float *restrict src, int64_t s, int64_t n)
{
	for (int64_t j = 0; j < n; j += PN_VL) {
		int64_t m = n - j < PN_VL ? n - j : PN_VL;
		pn_vstore_n(d + j, pn_vload_win(src + j * s, 0, m, s, 0.0f), m);
	}
}

/*
 * The two column phases of stride 2 from one pass over the input rows:
 * phase rows d0 (even padded columns) and d1 (odd), n floats each, from
 * input row src (width iw) whose column 0 is padded column pb.
 */
static void pack_row_pair(float *d0, float *d1, const float *src, int64_t iw, int64_t pb,
			  int64_t n, float pad)
{
	for (int64_t j = 0; j < n; j += PN_VL) {
		/* Padded columns 2j .. 2j + 2 PN_VL - 1 are input pb less. */
		int64_t c = 2 * j - pb, m = n - j < PN_VL ? n - j : PN_VL;
		pn_vf e, o;
		pn_vload_deint(src + c, -c, iw - c, pad, &e, &o);
		pn_vstore_n(d0 + j, e, m);
		pn_vstore_n(d1 + j, o, m);
	}
}

/*
 * Each plane is first filled with the pad value, then the rows and columns
 * that hold input are copied in, a vector at a time: planes are often a
 * few dozen floats wide, where per-element loops and library calls would
 * cost more than the convolution itself.  With stride 2 along rows and both
 * column phases used, each input row is read once for both.
 */
void pn_flat_pack(const pn_flat *f, const float *x, float pad, float *dst)
{
	const pn_window *w = &f->w;
	const int64_t n1 = f->n[1], n2 = f->n[2];
	const int pair = w->s[2] == 2 && f->nres[2] == 2;
	float *d = dst;
	pn_vfill(dst, f->size, pad);
	for (int64_t i0 = 0; i0 < f->nres[0]; i0++)
		for (int64_t i1 = 0; i1 < f->nres[1]; i1++)
			for (int64_t i2 = 0; i2 < f->nres[2]; i2++, d += f->vol) {
				int64_t z0 = f->res[0][i0] - w->pb[0], y0 = f->res[1][i1] - w->pb[1];
				int64_t x0 = f->res[2][i2] - w->pb[2];
				int64_t alo = f->lo[0][i0], ahi = f->hi[0][i0], blo = f->lo[1][i1];
				int64_t bhi = f->hi[1][i1], lo = f->lo[2][i2], hi = f->hi[2][i2];
				for (int64_t a = alo; a < ahi; a++) {
					const float *xa = x + (z0 + a * w->s[0]) * w->in[1] * w->in[2];
					for (int64_t b = blo; b < bhi; b++) {
						float *dr = d + (a * n1 + b) * n2;
						const float *sr = xa + (y0 + b * w->s[1]) * w->in[2];
						if (pair)
							pack_row_pair(dr + (f->res[2][0] ? f->vol : 0),
								      dr + (f->res[2][0] ? 0 : f->vol), sr,
								      w->in[2], w->pb[2], n2, pad);
						else if (w->s[2] > 2)
							for (int64_t j = lo; j < hi; j++)
								dr[j] = sr[x0 + j * w->s[2]];
						else
							copy_strided(dr + lo, sr + x0 + lo * w->s[2], w->s[2],
								     hi - lo);
					}
				}
				if (pair) {	/* both phases written */
					i2++;
					d += f->vol;
				}
			}
}

float *pn_win_load_f32(const pn_tensor *t)
{
	if (t->dtype == PN_FLOAT)
		return t->data;
	float *f = malloc(sizeof(float) * (size_t)(t->numel ? t->numel : 1));
	if (!f)
		return NULL;
	int64_t n = t->numel;
	switch (t->dtype) {
	case PN_FLOAT16:
		pn_f16_to_f32_n(t->data, f, n);
		break;
	case PN_BFLOAT16:
		for (int64_t i = 0; i < n; i++)
			f[i] = pn_bf16_to_f32(((const uint16_t *)t->data)[i]);
		break;
	case PN_INT8:
		for (int64_t i = 0; i < n; i++)
			f[i] = ((const int8_t *)t->data)[i];
		break;
	case PN_UINT8:
		for (int64_t i = 0; i < n; i++)
			f[i] = ((const uint8_t *)t->data)[i];
		break;
	default:
		free(f);
		return NULL;
	}
	return f;
}

static float clampf(float v, float lo, float hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

void pn_win_store_f32(pn_tensor *t, const float *src)
{
	int64_t n = t->numel;
	switch (t->dtype) {
	case PN_FLOAT:
		if (t->data != src)
			memcpy(t->data, src, sizeof(float) * (size_t)n);
		break;
	case PN_FLOAT16:
		pn_f32_to_f16_n(src, t->data, n);
		break;
	case PN_BFLOAT16:
		for (int64_t i = 0; i < n; i++)
			((uint16_t *)t->data)[i] = pn_f32_to_bf16(src[i]);
		break;
	case PN_INT8:
		for (int64_t i = 0; i < n; i++)
			((int8_t *)t->data)[i] = (int8_t)clampf(nearbyintf(src[i]), -128, 127);
		break;
	case PN_UINT8:
		for (int64_t i = 0; i < n; i++)
			((uint8_t *)t->data)[i] = (uint8_t)clampf(nearbyintf(src[i]), 0, 255);
		break;
	default:
		break;
	}
}
