/*
 * pad.c - Pad (constant, reflect, edge, wrap; pads as attribute before
 * opset 11, as input from 11, axes input from 18) and CenterCropPad.
 *
 * A pad is one box copy of the (possibly cropped) input into the middle of
 * the output; constant mode fills the output first, the other modes then
 * fill the border slabs axis by axis, innermost first, by copying slabs of
 * the output that are already complete (so each copy is a long row).
 */
#include <string.h>

#include "common/err.h"
#include "runtime/ops/layout.h"

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

static int pad_mode(const pn_node *n)
{
	const char *m = pn_attr_str(n, "mode", "constant");
	if (!strcmp(m, "constant"))
		return PAD_CONSTANT;
	if (!strcmp(m, "reflect"))
		return PAD_REFLECT;
	if (!strcmp(m, "edge"))
		return PAD_EDGE;
	if (!strcmp(m, "wrap"))
		return PAD_WRAP;
	return -1;
}

/* Begin/end pads of every dim.  Returns 0, 1 when the pads are not known
 * (inference), -1 on a bad node.  in[] are the known input contents. */
static int pad_amounts(const pn_node *n, int opset, int rank, const pn_tensor *pads_in,
		       const pn_tensor *axes_in, int axes_present, int64_t *pb, int64_t *pe, char *err)
{
	int64_t p[2 * PN_MAX_RANK + 1], axes[PN_MAX_RANK + 1];
	int np, na = rank;
	if (opset < 11) {
		np = pn_attr_ints(n, opset < 2 ? "paddings" : "pads", p, 2 * PN_MAX_RANK + 1);
		if (np < 0)
			return pn_fail(err, "Pad needs pads");
	} else {
		if (!pads_in)
			return 1;
		np = pn_lay_ints(pads_in, p, 2 * PN_MAX_RANK + 1);
		if (np < 0)
			return pn_fail(err, "pads must be a 1-d integer tensor");
	}
	if (axes_present) {
		if (!axes_in)
			return 1;
		na = pn_lay_ints(axes_in, axes, PN_MAX_RANK + 1);
		if (na < 0 || na > rank)
			return pn_fail(err, "axes must be a 1-d integer tensor of at most %d values", rank);
	} else {
		for (int d = 0; d < rank; d++)
			axes[d] = d;
	}
	if (np != 2 * na)
		return pn_fail(err, "pads has %d values for %d axes", np, na);
	for (int d = 0; d < rank; d++)
		pb[d] = pe[d] = 0;
	for (int i = 0; i < na; i++) {
		int a = pn_axis(axes[i], rank);
		if (a < 0)
			return pn_fail(err, "axis %lld out of range", (long long)axes[i]);
		if (p[i] > PN_MAX_NUMEL || p[i] < -PN_MAX_NUMEL || p[na + i] > PN_MAX_NUMEL ||
		    p[na + i] < -PN_MAX_NUMEL)
			return pn_fail(err, "pad amount out of range");
		pb[a] = p[i];
		pe[a] = p[na + i];
	}
	return 0;
}

int pn_infer_Pad(pn_ictx *c)
{
	const pn_type *x = pn_lay_itype(c, 0);
	int64_t pb[PN_MAX_RANK], pe[PN_MAX_RANK], out[PN_MAX_RANK];
	if (pad_mode(c->node) < 0)
		return pn_ifail(c, "unknown mode '%s'", pn_attr_str(c->node, "mode", ""));
	if (!x || x->rank < 0) {
		pn_iset(c, 0, x ? x->dtype : PN_UNDEFINED, -1, NULL);
		return 0;
	}
	const pn_tinfo *pads = pn_iin(c, 1), *axes = c->opset >= 18 ? pn_iin(c, 3) : NULL;
	int rc = pad_amounts(c->node, c->opset, x->rank, pads ? pads->value : NULL,
			     axes ? axes->value : NULL, axes != NULL, pb, pe, c->err);
	if (rc < 0)
		return -1;
	for (int d = 0; d < x->rank; d++) {
		out[d] = rc || x->dims[d] < 0 ? -1 : x->dims[d] + pb[d] + pe[d];
		if (!rc && x->dims[d] >= 0 && out[d] < 0)
			return pn_ifail(c, "pads make dim %d negative", d);
	}
	pn_iset(c, 0, x->dtype, x->rank, out);
	return 0;
}

/* The constant to pad with, as element bytes of the output dtype. */
static void pad_value(pn_kctx *k, int dtype, uint8_t *val)
{
	memset(val, 0, 16);
	if (k->opset < 11) {
		pn_tensor t = {.dtype = dtype, .rank = 0, .numel = 1, .data = val};
		if (dtype != PN_STRING)
			pn_tensor_set_f64(&t, 0, pn_attr_float(k->node, "value", 0));
		return;
	}
	const pn_tensor *v = pn_kin(k, 2);
	if (!v || !v->numel)
		return;
	if (v->dtype == dtype) {
		memcpy(val, v->data, pn_dtype_size(dtype));
	} else if (dtype != PN_STRING && v->dtype != PN_STRING) {
		pn_tensor t = {.dtype = dtype, .rank = 0, .numel = 1, .data = val};
		pn_tensor_set_f64(&t, 0, pn_tensor_get_f64(v, 0));
	}
}

/* Where output position i (relative to the interior start) reads from,
 * inside an interior of len positions. */
static int64_t pad_source(int mode, int64_t i, int64_t len)
{
	switch (mode) {
	case PAD_EDGE:
		return i < 0 ? 0 : i >= len ? len - 1 : i;
	case PAD_WRAP:
		return ((i % len) + len) % len;
	default: {           /* reflect: period 2(len-1), no repeat of the edge */
		if (len == 1)
			return 0;
		int64_t period = 2 * (len - 1), m = ((i % period) + period) % period;
		return m >= len ? period - m : m;
	}
	}
}

/* Fills the border along axis d from the interior of that axis, over the
 * full extent of the axes after d and the interior of the axes before it. */
static void pad_axis(pn_tensor *o, int d, int mode, const int64_t *lo, const int64_t *len,
		     const int64_t *ost)
{
	size_t es = pn_dtype_size(o->dtype);
	pn_box b = {.rank = o->rank};
	int64_t base = 0;
	for (int e = 0; e < o->rank; e++) {
		b.n[e] = e == d ? 1 : e < d ? len[e] : o->dims[e];
		b.ds[e] = b.ss[e] = ost[e];
		if (e < d)
			base += lo[e] * ost[e];
	}
	for (int64_t p = 0; p < o->dims[d]; p++) {
		if (p == lo[d]) {
			p = lo[d] + len[d] - 1;
			continue;
		}
		int64_t q = lo[d] + pad_source(mode, p - lo[d], len[d]);
		char *data = o->data;
		pn_lay_box_copy(data + (base + p * ost[d]) * (int64_t)es,
				data + (base + q * ost[d]) * (int64_t)es, es, &b, 1);
	}
}

int pn_kernel_Pad(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	pn_tensor *o = pn_lay_out(k, 0);
	int64_t pb[PN_MAX_RANK], pe[PN_MAX_RANK], ist[PN_MAX_RANK], ost[PN_MAX_RANK];
	int64_t lo[PN_MAX_RANK], len[PN_MAX_RANK];
	if (!o)
		return -1;
	int mode = pad_mode(k->node);
	if (mode < 0)
		return pn_kfail(k, "unknown mode");
	const pn_tensor *axes = k->opset >= 18 ? pn_kin(k, 3) : NULL;
	if (pad_amounts(k->node, k->opset, x->rank, pn_kin(k, 1), axes, axes != NULL, pb, pe, k->err))
		return *k->err ? -1 : pn_kfail(k, "pads are missing");
	size_t es = pn_dtype_size(x->dtype);
	pn_lay_strides(x->rank, x->dims, ist);
	pn_lay_strides(o->rank, o->dims, ost);
	/* interior: the input cropped by negative pads, placed after positive ones */
	pn_box b = {.rank = x->rank};
	int64_t soff = 0, doff = 0, empty = 0;
	for (int d = 0; d < x->rank; d++) {
		int64_t cut = pb[d] < 0 ? -pb[d] : 0;
		lo[d] = pb[d] > 0 ? pb[d] : 0;
		len[d] = x->dims[d] - cut - (pe[d] < 0 ? -pe[d] : 0);
		if (len[d] <= 0)
			empty = 1;
		if (o->dims[d] != lo[d] + (len[d] > 0 ? len[d] : 0) + (pe[d] > 0 ? pe[d] : 0))
			return pn_kfail(k, "output dim %d does not match the pads", d);
		b.n[d] = len[d] > 0 ? len[d] : 0;
		b.ds[d] = ost[d];
		b.ss[d] = ist[d];
		soff += cut * ist[d];
		doff += lo[d] * ost[d];
	}
	if (mode == PAD_CONSTANT || empty) {
		if (mode != PAD_CONSTANT && o->numel)
			return pn_kfail(k, "cannot pad an empty input in this mode");
		uint8_t val[16];
		pad_value(k, o->dtype, val);
		pn_lay_fill(o->data, val, es, o->numel);
	}
	if (!empty)
		pn_lay_box_copy((char *)o->data + doff * (int64_t)es,
				(const char *)x->data + soff * (int64_t)es, es, &b, 1);
	if (mode != PAD_CONSTANT && !empty)
		for (int d = o->rank - 1; d >= 0; d--)
			if (o->dims[d] != len[d])
				pad_axis(o, d, mode, lo, len, ost);
	return pn_lay_own_strings(k, o);
}

/* --- CenterCropPad ------------------------------------------------------------------ */

/* Target extent of every dim (the input's where the node does not say);
 * 1 when the target shape is unknown. */
static int crop_target(const pn_node *n, int rank, const int64_t *dims, const pn_tensor *shape,
		       int64_t *out, char *err)
{
	int64_t axes[PN_MAX_RANK + 1], sh[PN_MAX_RANK + 1];
	int na = pn_attr_ints(n, "axes", axes, PN_MAX_RANK + 1);
	if (na < 0) {
		na = rank;
		for (int d = 0; d < rank; d++)
			axes[d] = d;
	}
	if (na > rank)
		return pn_fail(err, "more axes than dims");
	for (int d = 0; d < rank; d++)
		out[d] = dims[d];
	if (!shape) {
		for (int i = 0; i < na; i++) {
			int a = pn_axis(axes[i], rank);
			if (a < 0)
				return pn_fail(err, "axis %lld out of range", (long long)axes[i]);
			out[a] = -1;
		}
		return 1;
	}
	int ns = pn_lay_ints(shape, sh, PN_MAX_RANK + 1);
	if (ns != na)
		return pn_fail(err, "shape has %d values for %d axes", ns, na);
	for (int i = 0; i < na; i++) {
		int a = pn_axis(axes[i], rank);
		if (a < 0 || sh[i] < 0)
			return pn_fail(err, "bad axis %lld or size %lld", (long long)axes[i],
				       (long long)sh[i]);
		out[a] = sh[i];
	}
	return 0;
}

int pn_infer_CenterCropPad(pn_ictx *c)
{
	const pn_type *x = pn_lay_itype(c, 0);
	const pn_tinfo *s = pn_iin(c, 1);
	int64_t out[PN_MAX_RANK];
	if (!x || x->rank < 0) {
		pn_iset(c, 0, x ? x->dtype : PN_UNDEFINED, -1, NULL);
		return 0;
	}
	if (crop_target(c->node, x->rank, x->dims, s ? s->value : NULL, out, c->err) < 0)
		return -1;
	pn_iset(c, 0, x->dtype, x->rank, out);
	return 0;
}

int pn_kernel_CenterCropPad(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	pn_tensor *o = pn_lay_out(k, 0);
	int64_t ist[PN_MAX_RANK], soff = 0, doff = 0;
	if (!o)
		return -1;
	if (o->rank != x->rank)
		return pn_kfail(k, "output rank differs from the input's");
	size_t es = pn_dtype_size(x->dtype);
	pn_box b = {.rank = x->rank};
	pn_lay_strides(x->rank, x->dims, ist);
	pn_lay_strides(o->rank, o->dims, b.ds);
	/* crop starts at floor((in-out)/2) in the input, pad at floor((out-in)/2)
	 * in the output, as the spec's reference does */
	for (int d = 0; d < x->rank; d++) {
		int64_t in = x->dims[d], out = o->dims[d];
		b.n[d] = in < out ? in : out;
		b.ss[d] = ist[d];
		if (in > out)
			soff += (in - out) / 2 * ist[d];
		else
			doff += (out - in) / 2 * b.ds[d];
	}
	memset(o->data, 0, pn_tensor_nbytes(o));
	pn_lay_box_copy((char *)o->data + doff * (int64_t)es, (const char *)x->data + soff * (int64_t)es,
			es, &b, 1);
	return pn_lay_own_strings(k, o);
}
