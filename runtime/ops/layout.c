/*
 * layout.c - ops that only move elements: Reshape, Flatten, Squeeze,
 * Unsqueeze, Transpose, Concat, Split, Slice, Expand, Tile, DepthToSpace,
 * SpaceToDepth, ReverseSequence, Trilu (Pad and CenterCropPad: pad.c).
 *
 * Every kernel moves bytes (box copies, memcpy of runs), so one kernel serves
 * every dtype; string outputs then get copies of their own strings.  The
 * inference functions compute exact shapes from known shape/axes/starts
 * values, which is what lets Shape -> Gather -> Concat -> Reshape chains
 * resolve; the kernels read the shapes inference fixed.
 */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "runtime/ops/layout.h"

static int in_dtype(const pn_ictx *c, int i)
{
	const pn_type *t = pn_lay_itype(c, i);
	return t ? t->dtype : PN_UNDEFINED;
}

/* Length of a 1-d input whose contents are unknown but whose shape is. */
static int in_len(const pn_ictx *c, int i)
{
	const pn_type *t = pn_lay_itype(c, i);
	if (!t || t->rank != 1 || t->dims[0] < 0 || t->dims[0] > PN_BOX_MAX)
		return -1;
	return (int)t->dims[0];
}

/* Reshape, Flatten, Squeeze, Unsqueeze: same elements, new shape. */
static int kernel_copy(pn_kctx *k)
{
	pn_tensor *o = pn_lay_out(k, 0);
	if (!o)
		return -1;
	return pn_lay_copy_all(k, o, k->in[0]);
}

/* --- Reshape -------------------------------------------------------------------- */

/* Output dims of a Reshape: 0 copies the input dim (unless allowzero), one
 * -1 takes what is left.  Unknown input dims give -1 where they matter. */
static int reshape_dims(pn_ictx *c, const pn_type *x, const int64_t *shape, int n, int allowzero,
			int64_t *out)
{
	int neg = -1;
	for (int i = 0; i < n; i++) {
		int64_t v = shape[i];
		if (v == 0 && !allowzero) {
			if (x && x->rank >= 0 && i >= x->rank)
				return pn_ifail(c, "shape[%d] = 0 but the input has rank %d", i, x->rank);
			out[i] = x && x->rank >= 0 ? x->dims[i] : -1;
		} else if (v == -1) {
			if (neg >= 0)
				return pn_ifail(c, "shape has more than one -1");
			neg = i;
			out[i] = -1;
		} else if (v < 0) {
			return pn_ifail(c, "shape[%d] = %lld is invalid", i, (long long)v);
		} else {
			out[i] = v;
		}
	}
	int64_t total = pn_lay_type_numel(x), rest = 1;
	int known = 1;
	for (int i = 0; i < n; i++)
		if (i != neg) {
			if (out[i] < 0)
				known = 0;
			else if (out[i] && rest > PN_MAX_NUMEL / out[i])
				return pn_ifail(c, "target shape has too many elements");
			else
				rest *= out[i];
		}
	if (!known || total < 0)
		return 0;
	if (neg >= 0) {
		if (rest == 0) {
			if (total)
				return pn_ifail(c, "cannot infer -1: other dims have 0 elements");
			out[neg] = 0;
		} else if (total % rest) {
			return pn_ifail(c, "cannot reshape %lld elements with -1 (rest %lld)",
					(long long)total, (long long)rest);
		} else {
			out[neg] = total / rest;
		}
	} else if (rest != total) {
		return pn_ifail(c, "cannot reshape %lld elements into %lld", (long long)total,
				(long long)rest);
	}
	return 0;
}

int pn_infer_Reshape(pn_ictx *c)
{
	const pn_type *x = pn_lay_itype(c, 0);
	int64_t shape[PN_MAX_RANK + 1], out[PN_MAX_RANK];
	int n = c->opset < 5 ? pn_attr_ints(c->node, "shape", shape, PN_MAX_RANK + 1)
			     : pn_iints(c, 1, shape, PN_MAX_RANK + 1);
	if (n < 0) {
		pn_iset(c, 0, in_dtype(c, 0), in_len(c, 1) <= PN_MAX_RANK ? in_len(c, 1) : -1, NULL);
		return 0;
	}
	if (n > PN_MAX_RANK)
		return pn_ifail(c, "target rank %d is too large", n);
	if (reshape_dims(c, x, shape, n, (int)pn_attr_int(c->node, "allowzero", 0), out))
		return -1;
	pn_iset(c, 0, in_dtype(c, 0), n, out);
	return 0;
}

int pn_kernel_Reshape(pn_kctx *k)
{
	return kernel_copy(k);
}

/* --- Flatten -------------------------------------------------------------------- */

int pn_infer_Flatten(pn_ictx *c)
{
	const pn_type *x = pn_lay_itype(c, 0);
	int64_t axis = pn_attr_int(c->node, "axis", 1), out[2] = {-1, -1};
	if (x && x->rank >= 0) {
		if (axis < 0)
			axis += x->rank;
		if (axis < 0 || axis > x->rank)
			return pn_ifail(c, "axis %lld out of range for rank %d",
					(long long)pn_attr_int(c->node, "axis", 1), x->rank);
		out[0] = pn_numel((int)axis, x->dims);
		out[1] = pn_numel(x->rank - (int)axis, x->dims + axis);
	}
	pn_iset(c, 0, in_dtype(c, 0), 2, out);
	return 0;
}

int pn_kernel_Flatten(pn_kctx *k)
{
	return kernel_copy(k);
}

/* --- Squeeze, Unsqueeze --------------------------------------------------------------- */

/* Axes of (Un)Squeeze: attribute before opset 13, input 1 from 13.
 * Returns the count, -1 when absent, -2 when present but unknown. */
static int squeeze_axes(const pn_ictx *c, int64_t *axes)
{
	if (c->opset < 13)
		return pn_attr_ints(c->node, "axes", axes, PN_BOX_MAX);
	if (!pn_iin(c, 1))
		return -1;
	int n = pn_iints(c, 1, axes, PN_BOX_MAX);
	return n < 0 || n > PN_BOX_MAX ? -2 : n;
}

/* Marks the normalised axes in flags[rank]; -1 on a bad or repeated axis. */
static int mark_axes(pn_ictx *c, const int64_t *axes, int n, int rank, uint8_t *flags)
{
	memset(flags, 0, (size_t)rank);
	for (int i = 0; i < n; i++) {
		int a = pn_axis(axes[i], rank);
		if (a < 0)
			return pn_ifail(c, "axis %lld out of range for rank %d", (long long)axes[i], rank);
		if (flags[a])
			return pn_ifail(c, "axis %lld repeated", (long long)axes[i]);
		flags[a] = 1;
	}
	return 0;
}

int pn_infer_Squeeze(pn_ictx *c)
{
	const pn_type *x = pn_lay_itype(c, 0);
	int64_t axes[PN_BOX_MAX], out[PN_MAX_RANK];
	uint8_t drop[PN_MAX_RANK];
	int n = squeeze_axes(c, axes), dtype = in_dtype(c, 0);
	if (!x || x->rank < 0 || n == -2) {
		int r = x && x->rank >= 0 && n == -2 && in_len(c, 1) >= 0 ? x->rank - in_len(c, 1) : -1;
		pn_iset(c, 0, dtype, r, NULL);
		return 0;
	}
	if (n < 0) {        /* no axes: every dim of 1 goes, which needs them all known */
		for (int d = 0; d < x->rank; d++)
			if (x->dims[d] < 0) {
				pn_iset(c, 0, dtype, -1, NULL);
				return 0;
			}
		for (int d = 0; d < x->rank; d++)
			drop[d] = x->dims[d] == 1;
	} else if (mark_axes(c, axes, n, x->rank, drop)) {
		return -1;
	}
	int r = 0;
	for (int d = 0; d < x->rank; d++) {
		if (!drop[d]) {
			out[r++] = x->dims[d];
		} else if (x->dims[d] > 1) {
			return pn_ifail(c, "cannot squeeze dim %d of size %lld", d,
					(long long)x->dims[d]);
		}
	}
	pn_iset(c, 0, dtype, r, out);
	return 0;
}

int pn_kernel_Squeeze(pn_kctx *k)
{
	return kernel_copy(k);
}

int pn_infer_Unsqueeze(pn_ictx *c)
{
	const pn_type *x = pn_lay_itype(c, 0);
	int64_t axes[PN_BOX_MAX], out[PN_MAX_RANK];
	uint8_t ins[PN_BOX_MAX];
	int n = squeeze_axes(c, axes), dtype = in_dtype(c, 0);
	if (n == -1)
		return pn_ifail(c, "Unsqueeze needs axes");
	if (!x || x->rank < 0 || n < 0) {
		int len = n >= 0 ? n : in_len(c, 1);
		pn_iset(c, 0, dtype, x && x->rank >= 0 && len >= 0 ? x->rank + len : -1, NULL);
		return 0;
	}
	int r = x->rank + n;
	if (r > PN_MAX_RANK)
		return pn_ifail(c, "output rank %d is too large", r);
	if (mark_axes(c, axes, n, r, ins))
		return -1;
	for (int d = 0, j = 0; d < r; d++)
		out[d] = ins[d] ? 1 : x->dims[j++];
	pn_iset(c, 0, dtype, r, out);
	return 0;
}

int pn_kernel_Unsqueeze(pn_kctx *k)
{
	return kernel_copy(k);
}

/* --- Transpose ------------------------------------------------------------------- */

/* perm attribute, reversed dims by default; -1 if invalid. */
static int transpose_perm(const pn_node *n, int rank, int64_t *perm)
{
	int np = pn_attr_ints(n, "perm", perm, PN_MAX_RANK + 1);
	if (np < 0) {
		for (int d = 0; d < rank; d++)
			perm[d] = rank - 1 - d;
		return 0;
	}
	if (np != rank)
		return -1;
	uint8_t seen[PN_MAX_RANK] = {0};
	for (int d = 0; d < rank; d++) {
		if (perm[d] < 0)
			perm[d] += rank;
		if (perm[d] < 0 || perm[d] >= rank || seen[perm[d]])
			return -1;
		seen[perm[d]] = 1;
	}
	return 0;
}

int pn_infer_Transpose(pn_ictx *c)
{
	const pn_type *x = pn_lay_itype(c, 0);
	int64_t perm[PN_MAX_RANK + 1], out[PN_MAX_RANK];
	if (!x || x->rank < 0) {
		pn_iset(c, 0, in_dtype(c, 0), -1, NULL);
		return 0;
	}
	if (transpose_perm(c->node, x->rank, perm))
		return pn_ifail(c, "perm is not a permutation of %d dims", x->rank);
	for (int d = 0; d < x->rank; d++)
		out[d] = x->dims[perm[d]];
	pn_iset(c, 0, x->dtype, x->rank, out);
	return 0;
}

int pn_kernel_Transpose(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	pn_tensor *o = pn_lay_out(k, 0);
	int64_t perm[PN_MAX_RANK + 1], ist[PN_MAX_RANK];
	if (!o)
		return -1;
	if (transpose_perm(k->node, x->rank, perm))
		return pn_kfail(k, "perm is not a permutation of %d dims", x->rank);
	pn_box b = {.rank = x->rank};
	pn_lay_strides(x->rank, x->dims, ist);
	pn_lay_strides(o->rank, o->dims, b.ds);
	for (int d = 0; d < x->rank; d++) {
		b.n[d] = o->dims[d];
		b.ss[d] = ist[perm[d]];
	}
	pn_lay_box_copy(o->data, x->data, pn_dtype_size(x->dtype), &b, 1);
	return pn_lay_own_strings(k, o);
}

/* --- Concat --------------------------------------------------------------------- */

static int64_t concat_axis_attr(const pn_node *n, int opset)
{
	return pn_attr_int(n, "axis", opset < 4 ? 1 : 0);
}

/* PyTorch exports torch.cat of a legacy empty 1-d tensor (Emformer does):
 * such an input adds nothing and is skipped whatever the others' rank, as
 * ONNX Runtime does. */
static int legacy_empty(const pn_type *t)
{
	return t && t->rank == 1 && t->dims[0] == 0;
}

int pn_infer_Concat(pn_ictx *c)
{
	int rank = -1, dtype = PN_UNDEFINED, empties = 0;
	for (int i = 0; i < c->n_in; i++) {
		const pn_type *t = pn_lay_itype(c, i);
		if (t && !dtype)
			dtype = t->dtype;
		if (legacy_empty(t))
			empties++;
		else if (t && t->rank >= 0 && rank < 0)
			rank = t->rank;
	}
	if (rank < 0 && empties)
		rank = 1;
	if (rank < 0) {
		pn_iset(c, 0, dtype, -1, NULL);
		return 0;
	}
	int64_t axis_attr = concat_axis_attr(c->node, c->opset), out[PN_MAX_RANK];
	int axis = pn_axis(axis_attr, rank);
	if (axis < 0)
		return pn_ifail(c, "axis %lld out of range for rank %d", (long long)axis_attr, rank);
	for (int d = 0; d < rank; d++)
		out[d] = d == axis ? 0 : -1;
	for (int i = 0; i < c->n_in; i++) {
		const pn_type *t = pn_lay_itype(c, i);
		if (!t || t->rank < 0) {
			out[axis] = -1;
			continue;
		}
		if (legacy_empty(t) && rank != 1)
			continue;
		if (t->rank != rank)
			return pn_ifail(c, "input %d has rank %d, expected %d", i, t->rank, rank);
		for (int d = 0; d < rank; d++) {
			int64_t v = t->dims[d];
			if (d == axis)
				out[d] = out[d] < 0 || v < 0 ? -1 : out[d] + v;
			else if (out[d] < 0)
				out[d] = v;
			else if (v >= 0 && v != out[d])
				return pn_ifail(c, "input %d has dim %d = %lld, expected %lld", i, d,
						(long long)v, (long long)out[d]);
		}
	}
	pn_iset(c, 0, dtype, rank, out);
	return 0;
}

int pn_kernel_Concat(pn_kctx *k)
{
	pn_tensor *o = pn_lay_out(k, 0);
	if (!o)
		return -1;
	int axis = pn_axis(concat_axis_attr(k->node, k->opset), o->rank);
	if (axis < 0)
		return pn_kfail(k, "axis out of range");
	size_t es = pn_dtype_size(o->dtype);
	int64_t outer = pn_numel(axis, o->dims), inner = pn_numel(o->rank - axis - 1, o->dims + axis + 1);
	int64_t row = o->dims[axis] * inner, off = 0;
	for (int i = 0; i < k->n_in; i++) {
		const pn_tensor *x = k->in[i];
		if (!x || (x->rank != o->rank && !x->numel))   /* legacy empty input */
			continue;
		int64_t len = x->dims[axis] * inner;
		pn_box b = {.rank = 2, .n = {outer, len}, .ds = {row, 1}, .ss = {len, 1}};
		pn_lay_box_copy((char *)o->data + (size_t)off * es, x->data, es, &b, 1);
		off += len;
	}
	return pn_lay_own_strings(k, o);
}

/* --- Split ---------------------------------------------------------------------- */

/* The split sizes given by the node (attribute or input by opset); count,
 * -1 when not given, -2 when given but unknown. */
static int split_given(const pn_node *n, int opset, const pn_tensor *in1, int known1,
		       int64_t *sizes, int max)
{
	if (opset >= 13 || (opset < 2 && in1)) {
		if (!in1 && !known1)
			return -1;
		if (!in1)
			return -2;
		int k = pn_lay_ints(in1, sizes, max);
		/* some exporters feed an empty 'split' to mean "not given" */
		return k < 0 ? -2 : k == 0 ? -1 : k;
	}
	return pn_attr_ints(n, "split", sizes, max);
}

/* Fills sizes[n_out] for a split of dim (-1: unknown) along the axis. */
static int split_sizes(const pn_node *n, int given, int64_t *sizes, int64_t dim, int n_out,
		       char *err)
{
	if (given >= 0) {
		if (given != n_out)
			return pn_fail(err, "split has %d sizes for %d outputs", given, n_out);
		int64_t sum = 0;
		for (int i = 0; i < given; i++) {
			if (sizes[i] < 0)
				return pn_fail(err, "negative split size %lld", (long long)sizes[i]);
			sum += sizes[i];
		}
		if (dim >= 0 && sum != dim)
			return pn_fail(err, "split sizes add up to %lld, dim is %lld", (long long)sum,
				       (long long)dim);
		return 0;
	}
	int64_t parts = pn_attr_int(n, "num_outputs", n_out);
	if (parts != n_out)
		return pn_fail(err, "num_outputs %lld but %d outputs", (long long)parts, n_out);
	if (n_out < 1)
		return pn_fail(err, "Split has no outputs");
	/* Opset 18: an uneven split makes the last chunk smaller (also used,
	 * leniently, where older opsets required an even split). */
	int64_t chunk = dim < 0 ? -1 : (dim + n_out - 1) / n_out;
	for (int i = 0; i < n_out; i++)
		sizes[i] = dim < 0 ? -1 : i < n_out - 1 ? chunk : dim - chunk * (n_out - 1);
	if (dim >= 0 && sizes[n_out - 1] < 0)
		return pn_fail(err, "cannot split %lld into %d chunks", (long long)dim, n_out);
	return 0;
}

int pn_infer_Split(pn_ictx *c)
{
	const pn_type *x = pn_lay_itype(c, 0);
	int dtype = in_dtype(c, 0);
	if (!x || x->rank < 0) {
		for (int i = 0; i < c->n_out; i++)
			pn_iset(c, i, dtype, -1, NULL);
		return 0;
	}
	int axis = pn_axis(pn_attr_int(c->node, "axis", 0), x->rank);
	if (axis < 0)
		return pn_ifail(c, "axis out of range for rank %d", x->rank);
	int64_t *sizes = malloc(sizeof(int64_t) * (size_t)(c->n_out + 1));
	if (!sizes)
		return pn_ifail(c, "out of memory");
	const pn_tinfo *s = pn_iin(c, 1);
	int given = split_given(c->node, c->opset, s ? s->value : NULL, s != NULL, sizes, c->n_out + 1);
	int rc = 0;
	if (given == -2) {
		for (int i = 0; i < c->n_out; i++)
			sizes[i] = -1;
	} else if (split_sizes(c->node, given, sizes, x->dims[axis], c->n_out, c->err)) {
		rc = -1;
	}
	for (int i = 0; !rc && i < c->n_out; i++) {
		int64_t dims[PN_MAX_RANK];
		memcpy(dims, x->dims, sizeof(dims));
		dims[axis] = sizes[i];
		pn_iset(c, i, dtype, x->rank, dims);
	}
	free(sizes);
	return rc;
}

int pn_kernel_Split(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	int axis = pn_axis(pn_attr_int(k->node, "axis", 0), x->rank);
	if (axis < 0)
		return pn_kfail(k, "axis out of range for rank %d", x->rank);
	size_t es = pn_dtype_size(x->dtype);
	int64_t outer = pn_numel(axis, x->dims), inner = pn_numel(x->rank - axis - 1, x->dims + axis + 1);
	int64_t row = x->dims[axis] * inner, off = 0;
	for (int i = 0; i < k->n_out; i++) {
		pn_tensor *o = pn_lay_out(k, i);
		if (!o)
			return -1;
		if (o->rank != x->rank)
			return pn_kfail(k, "output %d has rank %d", i, o->rank);
		int64_t len = o->dims[axis] * inner;
		if (off + len > row)
			return pn_kfail(k, "split sizes exceed the dim");
		pn_box b = {.rank = 2, .n = {outer, len}, .ds = {len, 1}, .ss = {row, 1}};
		pn_lay_box_copy(o->data, (const char *)x->data + (size_t)off * es, es, &b, 1);
		off += len;
		if (pn_lay_own_strings(k, o))
			return -1;
	}
	return 0;
}

/* --- Slice ---------------------------------------------------------------------- */

typedef struct slice_args {
	int n;                 /* number of sliced axes, -1 if unknown */
	int64_t starts[PN_MAX_RANK], ends[PN_MAX_RANK], axes[PN_MAX_RANK], steps[PN_MAX_RANK];
	int axes_known;        /* axes given and known (or defaulted) */
} slice_args;

/* Gathers starts/ends/axes/steps (attributes before opset 10, inputs from
 * 10) from either known input contents or tensors.  Returns -1 on a bad
 * node; a->n = -1 when starts or ends are unknown. */
static int slice_read(const pn_node *node, int opset, const pn_tensor *const *in, int n_in,
		      const uint8_t *present, slice_args *a, char *err)
{
	int ns, ne, na = -1, nst = -1;
	a->axes_known = 1;
	if (opset < 10) {
		ns = pn_attr_ints(node, "starts", a->starts, PN_MAX_RANK + 1);
		ne = pn_attr_ints(node, "ends", a->ends, PN_MAX_RANK + 1);
		na = pn_attr_ints(node, "axes", a->axes, PN_MAX_RANK + 1);
		if (ns < 0 || ne < 0)
			return pn_fail(err, "Slice needs starts and ends");
	} else {
		ns = n_in > 1 && in[1] ? pn_lay_ints(in[1], a->starts, PN_MAX_RANK) : -1;
		ne = n_in > 2 && in[2] ? pn_lay_ints(in[2], a->ends, PN_MAX_RANK) : -1;
		if (n_in > 3 && present[3]) {
			na = in[3] ? pn_lay_ints(in[3], a->axes, PN_MAX_RANK) : -2;
			if (na == -2)
				a->axes_known = 0;
		}
		if (n_in > 4 && present[4])
			nst = in[4] ? pn_lay_ints(in[4], a->steps, PN_MAX_RANK) : -2;
	}
	if (ns > PN_MAX_RANK || ne > PN_MAX_RANK || na > PN_MAX_RANK)
		return pn_fail(err, "too many slice axes");
	if (ns < 0 || ne < 0 || nst == -2 || !a->axes_known) {
		a->n = -1;
		return 0;
	}
	if (ns != ne || (na >= 0 && na != ns) || (nst >= 0 && nst != ns))
		return pn_fail(err, "starts, ends, axes and steps differ in length");
	a->n = ns;
	for (int i = 0; i < ns; i++) {
		if (na < 0)
			a->axes[i] = i;
		if (nst < 0)
			a->steps[i] = 1;
		if (a->steps[i] == 0)
			return pn_fail(err, "slice step is 0");
	}
	return 0;
}

/* Start and count of one axis of extent d, clamped as the spec says. */
static void slice_axis(int64_t d, int64_t s, int64_t e, int64_t st, int64_t *start, int64_t *count)
{
	if (s < 0)
		s += d;
	if (e < 0)
		e += d;
	if (st > 0) {
		s = s < 0 ? 0 : s > d ? d : s;
		e = e < 0 ? 0 : e > d ? d : e;
		*count = e > s ? (e - s - 1) / st + 1 : 0;
	} else {
		s = s < 0 ? 0 : s > d - 1 ? d - 1 : s;
		e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
		/* |st| in unsigned: st may be INT64_MIN */
		*count = s > e ? (int64_t)((uint64_t)(s - e - 1) / ((uint64_t)-(st + 1) + 1)) + 1 : 0;
	}
	*start = s;
}

/* Per-dim start, step and count (-1 for unknown counts when dims are). */
static int slice_plan(const slice_args *a, int rank, const int64_t *dims, int64_t *start,
		      int64_t *step, int64_t *count, char *err)
{
	uint8_t seen[PN_MAX_RANK] = {0};
	for (int d = 0; d < rank; d++) {
		start[d] = 0;
		step[d] = 1;
		count[d] = dims[d];
	}
	for (int i = 0; i < a->n; i++) {
		int ax = pn_axis(a->axes[i], rank);
		if (ax < 0 || seen[ax])
			return pn_fail(err, "slice axis %lld invalid or repeated", (long long)a->axes[i]);
		seen[ax] = 1;
		step[ax] = a->steps[i];
		if (dims[ax] < 0)
			count[ax] = -1;
		else
			slice_axis(dims[ax], a->starts[i], a->ends[i], a->steps[i], &start[ax],
				   &count[ax]);
	}
	return 0;
}

int pn_infer_Slice(pn_ictx *c)
{
	const pn_type *x = pn_lay_itype(c, 0);
	if (!x || x->rank < 0) {
		pn_iset(c, 0, in_dtype(c, 0), -1, NULL);
		return 0;
	}
	const pn_tensor *in[5] = {NULL};
	uint8_t present[5] = {0};
	for (int i = 0; i < 5 && i < c->n_in; i++) {
		const pn_tinfo *t = pn_iin(c, i);
		present[i] = t != NULL;
		in[i] = t ? t->value : NULL;
	}
	slice_args a;
	int64_t start[PN_MAX_RANK], step[PN_MAX_RANK], count[PN_MAX_RANK];
	if (slice_read(c->node, c->opset, in, c->n_in, present, &a, c->err))
		return -1;
	if (a.n < 0) {
		/* unknown bounds: the axes that may be sliced lose their dims */
		int64_t dims[PN_MAX_RANK];
		int ns = -1;
		if (c->opset >= 10 && present[3] && a.axes_known) {
			ns = pn_iints(c, 3, a.axes, PN_MAX_RANK);
		} else if (c->opset >= 10 && !present[3]) {
			ns = in_len(c, 1);      /* axes default to 0 .. len(starts)-1 */
			for (int i = 0; i < ns && i < PN_MAX_RANK; i++)
				a.axes[i] = i;
		}
		if (ns > PN_MAX_RANK)
			ns = -1;
		for (int d = 0; d < x->rank; d++)
			dims[d] = ns < 0 ? -1 : x->dims[d];
		for (int i = 0; i < ns; i++) {
			int ax = pn_axis(a.axes[i], x->rank);
			if (ax >= 0)
				dims[ax] = -1;
		}
		pn_iset(c, 0, x->dtype, x->rank, dims);
		return 0;
	}
	if (slice_plan(&a, x->rank, x->dims, start, step, count, c->err))
		return -1;
	pn_iset(c, 0, x->dtype, x->rank, count);
	return 0;
}

int pn_kernel_Slice(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	pn_tensor *o = pn_lay_out(k, 0);
	if (!o)
		return -1;
	uint8_t present[5] = {0};
	for (int i = 0; i < 5 && i < k->n_in; i++)
		present[i] = k->in[i] != NULL;
	slice_args a;
	int64_t start[PN_MAX_RANK], step[PN_MAX_RANK], count[PN_MAX_RANK], ist[PN_MAX_RANK];
	if (slice_read(k->node, k->opset, (const pn_tensor *const *)k->in, k->n_in, present, &a,
		       k->err))
		return -1;
	if (a.n < 0)
		return pn_kfail(k, "starts/ends/axes/steps must be integer tensors");
	if (slice_plan(&a, x->rank, x->dims, start, step, count, k->err))
		return -1;
	pn_box b = {.rank = x->rank};
	pn_lay_strides(x->rank, x->dims, ist);
	pn_lay_strides(o->rank, o->dims, b.ds);
	int64_t off = 0;
	for (int d = 0; d < x->rank; d++) {
		if (count[d] != o->dims[d])
			return pn_kfail(k, "output dim %d is %lld, slice gives %lld", d,
					(long long)o->dims[d], (long long)count[d]);
		b.n[d] = count[d];
		b.ss[d] = ist[d] * step[d];
		off += start[d] * ist[d];
	}
	if (o->numel)
		pn_lay_box_copy(o->data, (const char *)x->data + off * (int64_t)pn_dtype_size(x->dtype),
				pn_dtype_size(x->dtype), &b, 1);
	return pn_lay_own_strings(k, o);
}

/* --- Expand --------------------------------------------------------------------- */

int pn_infer_Expand(pn_ictx *c)
{
	const pn_type *x = pn_lay_itype(c, 0);
	int64_t shape[PN_MAX_RANK + 1];
	int n = pn_iints(c, 1, shape, PN_MAX_RANK + 1), dtype = in_dtype(c, 0);
	if (n > PN_MAX_RANK)
		return pn_ifail(c, "shape has %d dims", n);
	if (!x || x->rank < 0 || n < 0) {
		int len = in_len(c, 1);
		int r = x && x->rank >= 0 && len >= 0 ? (x->rank > len ? x->rank : len) : -1;
		pn_iset(c, 0, dtype, r <= PN_MAX_RANK ? r : -1, NULL);
		return 0;
	}
	pn_type s = {.kind = PN_KIND_TENSOR, .dtype = dtype, .rank = n}, out;
	for (int d = 0; d < n; d++) {
		if (shape[d] < 0)
			return pn_ifail(c, "shape[%d] = %lld is negative", d, (long long)shape[d]);
		s.dims[d] = shape[d];
	}
	if (pn_bcast_shape(c, x, &s, &out))
		return -1;
	pn_iset(c, 0, dtype, out.rank, out.dims);
	return 0;
}

/* Box that reads x broadcast (numpy rules, right-aligned) into o. */
static void bcast_box(const pn_tensor *x, const pn_tensor *o, pn_box *b)
{
	int64_t ist[PN_MAX_RANK];
	pn_lay_strides(x->rank, x->dims, ist);
	b->rank = o->rank;
	pn_lay_strides(o->rank, o->dims, b->ds);
	for (int d = 0; d < o->rank; d++) {
		int j = d - (o->rank - x->rank);
		b->n[d] = o->dims[d];
		b->ss[d] = j < 0 || x->dims[j] == 1 ? 0 : ist[j];
	}
}

int pn_kernel_Expand(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	pn_tensor *o = pn_lay_out(k, 0);
	if (!o)
		return -1;
	if (o->rank < x->rank)
		return pn_kfail(k, "output rank %d below input rank %d", o->rank, x->rank);
	pn_box b;
	bcast_box(x, o, &b);
	pn_lay_box_copy(o->data, x->data, pn_dtype_size(x->dtype), &b, 1);
	return pn_lay_own_strings(k, o);
}

/* --- Tile ----------------------------------------------------------------------- */

/* Repeats per dim: input 'repeats' (opset 6+), or Tile-1's scalar 'tiles'
 * and 'axis' inputs.  1 when the repeat counts are unknown. */
static int tile_repeats(int opset, int rank, const pn_tensor *in1, const pn_tensor *in2,
			int64_t *rep, char *err)
{
	if (opset < 6) {
		int64_t t, ax;
		if (pn_lay_ints(in1, &t, 1) != 1 || pn_lay_ints(in2, &ax, 1) != 1)
			return 1;
		int a = pn_axis(ax, rank);
		if (a < 0)
			return pn_fail(err, "axis %lld out of range", (long long)ax);
		for (int d = 0; d < rank; d++)
			rep[d] = d == a ? t : 1;
	} else {
		int n = pn_lay_ints(in1, rep, PN_MAX_RANK);
		if (n < 0)
			return 1;
		if (n != rank)
			return pn_fail(err, "repeats has %d values for rank %d", n, rank);
	}
	for (int d = 0; d < rank; d++)
		if (rep[d] < 0)
			return pn_fail(err, "negative repeat %lld", (long long)rep[d]);
	return 0;
}

int pn_infer_Tile(pn_ictx *c)
{
	const pn_type *x = pn_lay_itype(c, 0);
	const pn_tinfo *t1 = pn_iin(c, 1), *t2 = pn_iin(c, 2);
	int64_t rep[PN_MAX_RANK], out[PN_MAX_RANK];
	if (!x || x->rank < 0) {
		pn_iset(c, 0, in_dtype(c, 0), -1, NULL);
		return 0;
	}
	int rc = tile_repeats(c->opset, x->rank, t1 ? t1->value : NULL, t2 ? t2->value : NULL, rep,
			      c->err);
	if (rc < 0)
		return -1;
	for (int d = 0; d < x->rank; d++) {
		if (!rc && x->dims[d] > 0 && rep[d] > PN_MAX_NUMEL / x->dims[d])
			return pn_ifail(c, "repeat %lld of dim %d is too large", (long long)rep[d], d);
		out[d] = rc || x->dims[d] < 0 ? -1 : x->dims[d] * rep[d];
	}
	pn_iset(c, 0, x->dtype, x->rank, out);
	return 0;
}

int pn_kernel_Tile(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	pn_tensor *o = pn_lay_out(k, 0);
	int64_t rep[PN_MAX_RANK], ist[PN_MAX_RANK], ost[PN_MAX_RANK];
	if (!o)
		return -1;
	if (tile_repeats(k->opset, x->rank, pn_kin(k, 1), pn_kin(k, 2), rep, k->err))
		return *k->err ? -1 : pn_kfail(k, "repeats must be an integer tensor");
	/* each axis as (repeat, dim): the source stride of the repeat is 0 */
	pn_box b = {.rank = 2 * x->rank};
	pn_lay_strides(x->rank, x->dims, ist);
	pn_lay_strides(o->rank, o->dims, ost);
	for (int d = 0; d < x->rank; d++) {
		b.n[2 * d] = rep[d];
		b.ds[2 * d] = x->dims[d] * ost[d];
		b.ss[2 * d] = 0;
		b.n[2 * d + 1] = x->dims[d];
		b.ds[2 * d + 1] = ost[d];
		b.ss[2 * d + 1] = ist[d];
	}
	pn_lay_box_copy(o->data, x->data, pn_dtype_size(x->dtype), &b, 1);
	return pn_lay_own_strings(k, o);
}

/* --- DepthToSpace, SpaceToDepth ------------------------------------------------------ */

static int block_size(const pn_node *n, int64_t *b)
{
	*b = pn_attr_int(n, "blocksize", 0);
	return *b > 0 && *b <= (1 << 20) ? 0 : -1;   /* b*b must not overflow */
}

int pn_infer_DepthToSpace(pn_ictx *c)
{
	const pn_type *x = pn_lay_itype(c, 0);
	int64_t b, out[4];
	if (block_size(c->node, &b))
		return pn_ifail(c, "blocksize must be in [1, 2^20]");
	if (!x || x->rank < 0) {
		pn_iset(c, 0, in_dtype(c, 0), 4, NULL);
		return 0;
	}
	if (x->rank != 4)
		return pn_ifail(c, "input must be 4-d, has rank %d", x->rank);
	if (x->dims[1] >= 0 && x->dims[1] % (b * b))
		return pn_ifail(c, "channels %lld not divisible by blocksize^2", (long long)x->dims[1]);
	out[0] = x->dims[0];
	out[1] = x->dims[1] < 0 ? -1 : x->dims[1] / (b * b);
	out[2] = x->dims[2] < 0 ? -1 : x->dims[2] * b;
	out[3] = x->dims[3] < 0 ? -1 : x->dims[3] * b;
	pn_iset(c, 0, x->dtype, 4, out);
	return 0;
}

int pn_kernel_DepthToSpace(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	pn_tensor *o = pn_lay_out(k, 0);
	int64_t b;
	if (!o)
		return -1;
	if (block_size(k->node, &b) || x->rank != 4)
		return pn_kfail(k, "needs a 4-d input and a positive blocksize");
	int64_t N = x->dims[0], C = x->dims[1] / (b * b), H = x->dims[2], W = x->dims[3];
	int64_t hw = H * W;
	int crd = !strcmp(pn_attr_str(k->node, "mode", "DCR"), "CRD");
	/* output viewed as [N, C, H, b1, W, b2], read from the input channel
	 * b1*b*C + b2*C + c (DCR) or c*b*b + b1*b + b2 (CRD) */
	pn_box bx = {.rank = 6, .n = {N, C, H, b, W, b}};
	pn_lay_strides(6, bx.n, bx.ds);
	int64_t sc = crd ? b * b * hw : hw, sb1 = crd ? b * hw : b * C * hw, sb2 = crd ? hw : C * hw;
	int64_t ss[6] = {C * b * b * hw, sc, W, sb1, 1, sb2};
	memcpy(bx.ss, ss, sizeof(ss));
	pn_lay_box_copy(o->data, x->data, pn_dtype_size(x->dtype), &bx, 1);
	return pn_lay_own_strings(k, o);
}

int pn_infer_SpaceToDepth(pn_ictx *c)
{
	const pn_type *x = pn_lay_itype(c, 0);
	int64_t b, out[4];
	if (block_size(c->node, &b))
		return pn_ifail(c, "blocksize must be in [1, 2^20]");
	if (!x || x->rank < 0) {
		pn_iset(c, 0, in_dtype(c, 0), 4, NULL);
		return 0;
	}
	if (x->rank != 4)
		return pn_ifail(c, "input must be 4-d, has rank %d", x->rank);
	for (int d = 2; d < 4; d++)
		if (x->dims[d] >= 0 && x->dims[d] % b)
			return pn_ifail(c, "dim %d = %lld not divisible by blocksize", d,
					(long long)x->dims[d]);
	out[0] = x->dims[0];
	out[1] = x->dims[1] < 0 ? -1 : x->dims[1] * b * b;
	out[2] = x->dims[2] < 0 ? -1 : x->dims[2] / b;
	out[3] = x->dims[3] < 0 ? -1 : x->dims[3] / b;
	pn_iset(c, 0, x->dtype, 4, out);
	return 0;
}

int pn_kernel_SpaceToDepth(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	pn_tensor *o = pn_lay_out(k, 0);
	int64_t b;
	if (!o)
		return -1;
	if (block_size(k->node, &b) || x->rank != 4)
		return pn_kfail(k, "needs a 4-d input and a positive blocksize");
	int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2] / b, W = x->dims[3] / b;
	int64_t iw = x->dims[3], ihw = x->dims[2] * iw;
	/* output viewed as [N, b1, b2, C, H, W]; input as [N, C, H, b1, W, b2] */
	pn_box bx = {.rank = 6, .n = {N, b, b, C, H, W}};
	pn_lay_strides(6, bx.n, bx.ds);
	int64_t ss[6] = {C * ihw, iw, 1, ihw, b * iw, b};
	memcpy(bx.ss, ss, sizeof(ss));
	pn_lay_box_copy(o->data, x->data, pn_dtype_size(x->dtype), &bx, 1);
	return pn_lay_own_strings(k, o);
}

/* --- ReverseSequence -------------------------------------------------------------- */

int pn_kernel_ReverseSequence(pn_kctx *k)
{
	const pn_tensor *x = k->in[0], *lens = k->in[1];
	pn_tensor *o = pn_lay_out(k, 0);
	if (!o)
		return -1;
	int ba = (int)pn_attr_int(k->node, "batch_axis", 1), ta = (int)pn_attr_int(k->node, "time_axis", 0);
	if (x->rank < 2 || ba == ta || ba < 0 || ba > 1 || ta < 0 || ta > 1)
		return pn_kfail(k, "batch_axis and time_axis must be 0 and 1 of a rank>=2 input");
	int64_t B = x->dims[ba], T = x->dims[ta];
	if (lens->numel != B)
		return pn_kfail(k, "sequence_lens has %lld values for batch %lld", (long long)lens->numel,
				(long long)B);
	int64_t *scratch;
	const int64_t *len = pn_lay_indices(lens, &scratch);
	if (!len)
		return pn_kfail(k, "sequence_lens must be an integer tensor");
	size_t es = pn_dtype_size(x->dtype);
	int64_t inner = pn_numel(x->rank - 2, x->dims + 2), st_b = ba ? inner : T * inner,
		st_t = ta ? inner : B * inner;
	size_t run = (size_t)inner * es;
	int bad = 0;
	#pragma omp parallel for if (x->numel > PN_PAR_MIN_WORK) reduction(|: bad)
	for (int64_t bt = 0; bt < B * T; bt++) {
		int64_t b = bt / T, t = bt % T, l = len[b];
		if (l < 0 || l > T) {
			bad = 1;
			continue;
		}
		int64_t src = t < l ? l - 1 - t : t;
		memcpy((char *)o->data + (size_t)(b * st_b + t * st_t) * es,
		       (const char *)x->data + (size_t)(b * st_b + src * st_t) * es, run);
	}
	free(scratch);
	if (bad)
		return pn_kfail(k, "sequence length out of range [0, %lld]", (long long)T);
	return pn_lay_own_strings(k, o);
}

/* --- Trilu ---------------------------------------------------------------------- */

int pn_kernel_Trilu(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	pn_tensor *o = pn_lay_out(k, 0);
	if (!o)
		return -1;
	if (x->rank < 2)
		return pn_kfail(k, "input must have rank >= 2");
	int64_t kk = 0;
	const pn_tensor *kt = pn_kin(k, 1);
	if (kt && pn_lay_ints(kt, &kk, 1) != 1)
		return pn_kfail(k, "k must be an integer scalar");
	int upper = pn_attr_int(k->node, "upper", 1) != 0;
	int64_t R = x->dims[x->rank - 2], C = x->dims[x->rank - 1];
	int64_t rows = R && C ? x->numel / C : 0;
	size_t es = pn_dtype_size(x->dtype);
	/* zero bytes are 0 for every numeric dtype and NULL ("") for strings */
	#pragma omp parallel for if (x->numel > PN_PAR_MIN_WORK)
	for (int64_t r = 0; r < rows; r++) {
		int64_t i = r % R, edge = i + kk;   /* first kept (upper) / last kept (lower) col */
		int64_t lo = upper ? edge : 0, hi = upper ? C : edge + 1;
		lo = lo < 0 ? 0 : lo > C ? C : lo;
		hi = hi < lo ? lo : hi > C ? C : hi;
		char *d = (char *)o->data + (size_t)(r * C) * es;
		const char *s = (const char *)x->data + (size_t)(r * C) * es;
		memset(d, 0, (size_t)lo * es);
		memcpy(d + lo * (int64_t)es, s + lo * (int64_t)es, (size_t)(hi - lo) * es);
		memset(d + hi * (int64_t)es, 0, (size_t)(C - hi) * es);
	}
	return pn_lay_own_strings(k, o);
}
