/*
 * window.c - sliding-window geometry of Conv, ConvTranspose and the pools,
 * and float32 staging of narrow dtypes (see window.h).
 */
#include "exec/ops/window.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"

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
		for (int64_t i = 0; i < n; i++)
			f[i] = pn_f16_to_f32(((const uint16_t *)t->data)[i]);
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
		for (int64_t i = 0; i < n; i++)
			((uint16_t *)t->data)[i] = pn_f32_to_f16(src[i]);
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
