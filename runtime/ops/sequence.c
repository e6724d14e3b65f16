/*
 * sequence.c - sequences and optionals: SequenceConstruct, SequenceEmpty,
 * SequenceAt, SequenceInsert, SequenceErase, SequenceLength,
 * SplitToSequence, ConcatFromSequence, Optional, OptionalGetElement,
 * OptionalHasElement.
 *
 * A sequence is a pn_tensor of kind SEQUENCE whose items are heap tensors;
 * an optional is kind OPTIONAL with `none` set when empty, and otherwise
 * carries the held value itself (tensor data or sequence items) with
 * elem_kind saying which.  Sequence items are never shared between values:
 * every op that passes an item on clones it, so a value can be released
 * whatever else still reads its items.
 */
#include "runtime/ops/sequence.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/infer.h"

/* --- shared helpers -------------------------------------------------------------- */

int64_t pn_dims_prod(const int64_t *dims, int lo, int hi)
{
	int64_t n = 1;
	for (int i = lo; i < hi; i++)
		n *= dims[i];
	return n;
}

int pn_out_take(pn_kctx *k, int i, pn_tensor *t)
{
	if (!t)
		return pn_kfail(k, "out of memory");
	pn_tensor *o = pn_out_container(k, i, t->kind, t->dtype);
	if (!o) {
		pn_tensor_free(t);
		return -1;
	}
	/* o is cleared and holds nothing: t's storage (heap, owned) moves in.
	 * A heap tensor's data is never a pool buffer, whatever a copy of a
	 * pooled tensor says. */
	t->pooled = 0;
	t->cap = 0;
	*o = *t;
	free(t);
	return 0;
}

void pn_axis_copy(void *dst, int64_t dst_axis, int64_t dst_start, const void *src,
		  int64_t src_axis, int64_t src_start, int64_t len, int64_t outer, int64_t inner,
		  int dtype)
{
	size_t es = pn_dtype_size(dtype);
	int64_t block = len * inner;
	for (int64_t o = 0; o < outer; o++) {
		int64_t d = (o * dst_axis + dst_start) * inner, s = (o * src_axis + src_start) * inner;
		if (dtype == PN_STRING) {
			char **dp = (char **)dst + d;
			char *const *sp = (char *const *)src + s;
			for (int64_t j = 0; j < block; j++)
				dp[j] = strdup(sp[j] ? sp[j] : "");
		} else if (block) {
			memcpy((char *)dst + (size_t)d * es, (const char *)src + (size_t)s * es,
			       (size_t)block * es);
		}
	}
}

/* Output i becomes a copy of src (any kind).  Plain tensors go through
 * pn_out_alloc so that a buffer inference already gave is reused. */
static int out_copy(pn_kctx *k, int i, const pn_tensor *src)
{
	if (src->kind != PN_KIND_TENSOR)
		return pn_out_take(k, i, pn_tensor_clone(src));
	pn_tensor *o = pn_out_alloc(k, i, src->dtype, src->rank, src->dims);
	if (!o)
		return -1;
	pn_axis_copy(o->data, 1, 0, src->data, 1, 0, 1, 1, src->numel, src->dtype);
	return 0;
}

/* A clone of tensor t as a sequence item (always kind TENSOR). */
static pn_tensor *item_clone(const pn_tensor *t)
{
	pn_tensor *c = pn_tensor_clone(t);
	if (c) {
		c->kind = PN_KIND_TENSOR;
		c->elem_kind = PN_KIND_TENSOR;
		c->none = 0;
	}
	return c;
}

static int push_clone(pn_kctx *k, pn_tensor *seq, const pn_tensor *t)
{
	pn_tensor *c = item_clone(t);
	if (!c || pn_seq_push(seq, c)) {
		pn_tensor_free(c);
		return pn_kfail(k, "out of memory");
	}
	return 0;
}

static int is_seq(const pn_tensor *t)
{
	return t && (t->kind == PN_KIND_SEQUENCE ||
		     (t->kind == PN_KIND_OPTIONAL && !t->none && t->elem_kind == PN_KIND_SEQUENCE));
}

/* Reads a scalar (or one-element) integer position. */
static int read_index(pn_kctx *k, const pn_tensor *t, const char *what, int64_t *out)
{
	if (t->kind != PN_KIND_TENSOR || !pn_dtype_is_int(t->dtype) || t->numel != 1)
		return pn_kfail(k, "%s must be one integer", what);
	*out = pn_tensor_get_i64(t, 0);
	return 0;
}

/* Normalises position p for a sequence of n items; valid range [-n, n-1]
 * (or [-n, n] when inserting). */
static int seq_pos(pn_kctx *k, int64_t p, int64_t n, int inserting, int64_t *out)
{
	int64_t hi = inserting ? n : n - 1;
	if (p < -n || p > hi)
		return pn_kfail(k, "position %lld out of range for %lld items", (long long)p,
				(long long)n);
	*out = p < 0 ? p + n : p;
	return 0;
}

/* --- inference --------------------------------------------------------------------- */

static void iset_seq(pn_ictx *c, int i, int dtype)
{
	pn_iset(c, i, dtype, -1, NULL);
	c->out[i].type.kind = PN_KIND_SEQUENCE;
}

static int in_dtype(const pn_ictx *c, int i)
{
	const pn_tinfo *t = pn_iin(c, i);
	return t ? t->type.dtype : PN_UNDEFINED;
}

/* The known item shape of a sequence input with known contents, all items
 * alike; rank -1 otherwise. */
static void seq_item_type(const pn_tinfo *t, pn_type *ty)
{
	memset(ty, 0, sizeof(*ty));
	ty->kind = PN_KIND_TENSOR;
	ty->dtype = t ? t->type.dtype : PN_UNDEFINED;
	ty->rank = -1;
	if (!t)
		return;
	if (!t->value) {
		/* Declared sequence types keep the item shape. */
		if (t->type.kind == PN_KIND_SEQUENCE && t->type.rank >= 0) {
			ty->rank = t->type.rank;
			for (int d = 0; d < ty->rank; d++)
				ty->dims[d] = t->type.dims[d];
		}
		return;
	}
	const pn_tensor *s = t->value;
	if (!s->n_items)
		return;
	ty->rank = s->items[0]->rank;
	for (int d = 0; d < ty->rank; d++)
		ty->dims[d] = s->items[0]->dims[d];
	for (int i = 1; i < s->n_items; i++) {
		if (s->items[i]->rank != ty->rank) {
			ty->rank = -1;
			return;
		}
		for (int d = 0; d < ty->rank; d++)
			if (s->items[i]->dims[d] != ty->dims[d])
				ty->dims[d] = -1;
	}
}

static int infer_concat_from_seq(pn_ictx *c)
{
	pn_type it;
	seq_item_type(pn_iin(c, 0), &it);
	const pn_tinfo *s = pn_iin(c, 0);
	int new_axis = pn_attr_int(c->node, "new_axis", 0) != 0;
	if (it.rank < 0) {
		pn_iset(c, 0, it.dtype, -1, NULL);
		return 0;
	}
	int r = it.rank + new_axis;
	int axis = pn_axis(pn_attr_int(c->node, "axis", 0), r);
	if (axis < 0)
		return pn_ifail(c, "axis out of range for rank %d", r);
	int64_t dims[PN_MAX_RANK];
	for (int d = 0, j = 0; d < r; d++)
		dims[d] = (new_axis && d == axis) ? 1 : it.dims[j++];
	dims[axis] = -1;
	if (s->value) {
		int64_t total = 0;
		for (int i = 0; i < s->value->n_items; i++)
			total += new_axis ? 1 : s->value->items[i]->dims[axis];
		dims[axis] = total;
	}
	pn_iset(c, 0, it.dtype, r, dims);
	return 0;
}

static int infer_optional(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0);
	const pn_attr *a = pn_attr_find(c->node, "type");
	if (x) {
		c->out[0].type = x->type;
		c->out[0].type.elem_kind = x->type.kind == PN_KIND_OPTIONAL ? x->type.elem_kind
									     : x->type.kind;
	} else if (a && a->tp) {
		c->out[0].type = *a->tp;
		c->out[0].type.elem_kind = a->tp->kind;
	} else {
		return pn_ifail(c, "Optional needs an input or a type attribute");
	}
	c->out[0].type.kind = PN_KIND_OPTIONAL;
	for (int d = 0; d < PN_MAX_RANK; d++)
		c->out[0].type.dim_names[d] = NULL;
	return 0;
}

static int infer_optional_get(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0);
	if (!x)
		return pn_ifail(c, "OptionalGetElement needs an input");
	pn_iset_like(c, 0, 0, 0);
	pn_type *t = &c->out[0].type;
	if (t->kind == PN_KIND_OPTIONAL)
		t->kind = t->elem_kind;
	if (t->kind == PN_KIND_SEQUENCE)
		t->rank = -1;
	t->elem_kind = 0;
	return 0;
}

int pn_infer_Sequence(pn_ictx *c)
{
	const pn_tinfo *x0 = pn_iin(c, 0);
	pn_type it;
	switch (c->node->op) {
	case PN_OP_SequenceConstruct:
		iset_seq(c, 0, in_dtype(c, 0));
		return 0;
	case PN_OP_SequenceEmpty:
		iset_seq(c, 0, (int)pn_attr_int(c->node, "dtype", PN_FLOAT));
		return 0;
	case PN_OP_SequenceInsert:
		/* An empty sequence takes the inserted tensor's dtype (see the
		 * kernel), so that is the better guess. */
		iset_seq(c, 0, in_dtype(c, 1) ? in_dtype(c, 1) : in_dtype(c, 0));
		return 0;
	case PN_OP_SequenceErase:
	case PN_OP_SplitToSequence:
		iset_seq(c, 0, in_dtype(c, 0));
		return 0;
	case PN_OP_SequenceLength:
		pn_iset(c, 0, PN_INT64, 0, NULL);
		return 0;
	case PN_OP_SequenceAt: {
		int64_t p;
		seq_item_type(x0, &it);
		if (x0 && x0->value && pn_iints(c, 1, &p, 1) == 1) {
			int64_t n = x0->value->n_items;
			if (p < -n || p >= n)
				return pn_ifail(c, "position %lld out of range for %lld items",
						(long long)p, (long long)n);
			const pn_tensor *t = x0->value->items[p < 0 ? p + n : p];
			pn_iset(c, 0, t->dtype, t->rank, t->dims);
			return 0;
		}
		pn_iset(c, 0, it.dtype, it.rank, it.dims);
		return 0;
	}
	case PN_OP_ConcatFromSequence:
		return infer_concat_from_seq(c);
	case PN_OP_Optional:
		return infer_optional(c);
	case PN_OP_OptionalGetElement:
		return infer_optional_get(c);
	case PN_OP_OptionalHasElement:
		pn_iset(c, 0, PN_BOOL, 0, NULL);
		return 0;
	default:
		return pn_ifail(c, "not a sequence op");
	}
}

/* --- SequenceConstruct, SequenceEmpty, SequenceLength, SequenceAt ----------------------- */

int pn_kernel_SequenceConstruct(pn_kctx *k)
{
	if (k->n_in < 1 || !k->in[0])
		return pn_kfail(k, "SequenceConstruct needs at least one input");
	int dtype = k->in[0]->dtype;
	pn_tensor *o = pn_out_container(k, 0, PN_KIND_SEQUENCE, dtype);
	if (!o)
		return -1;
	for (int i = 0; i < k->n_in; i++) {
		const pn_tensor *t = pn_kin(k, i);
		if (!t || t->kind != PN_KIND_TENSOR)
			return pn_kfail(k, "input %d is not a tensor", i);
		if (t->dtype != dtype)
			return pn_kfail(k, "input %d is %s, input 0 is %s", i, pn_dtype_name(t->dtype),
					pn_dtype_name(dtype));
		if (push_clone(k, o, t))
			return -1;
	}
	return 0;
}

int pn_kernel_SequenceEmpty(pn_kctx *k)
{
	int dtype = (int)pn_attr_int(k->node, "dtype", PN_FLOAT);
	if (!pn_dtype_size(dtype))
		return pn_kfail(k, "unsupported dtype %d", dtype);
	return pn_out_container(k, 0, PN_KIND_SEQUENCE, dtype) ? 0 : -1;
}

int pn_kernel_SequenceLength(pn_kctx *k)
{
	const pn_tensor *s = k->in[0];
	if (!is_seq(s))
		return pn_kfail(k, "input is not a sequence");
	pn_tensor *o = pn_out_alloc(k, 0, PN_INT64, 0, NULL);
	if (!o)
		return -1;
	((int64_t *)o->data)[0] = s->n_items;
	return 0;
}

int pn_kernel_SequenceAt(pn_kctx *k)
{
	const pn_tensor *s = k->in[0];
	int64_t p = 0;
	if (!is_seq(s))
		return pn_kfail(k, "input is not a sequence");
	if (read_index(k, k->in[1], "position", &p) || seq_pos(k, p, s->n_items, 0, &p))
		return -1;
	return out_copy(k, 0, s->items[p]);
}

/* --- SequenceInsert, SequenceErase ------------------------------------------------------ */

int pn_kernel_SequenceInsert(pn_kctx *k)
{
	const pn_tensor *s = k->in[0], *t = k->in[1];
	const pn_tensor *pos = pn_kin(k, 2);
	int64_t n = s ? s->n_items : 0, p = n;
	if (!is_seq(s))
		return pn_kfail(k, "input is not a sequence");
	if (!t || t->kind != PN_KIND_TENSOR)
		return pn_kfail(k, "inserted value is not a tensor");
	/* An empty sequence takes the dtype of what goes in (SequenceEmpty
	 * defaults to float even when the model then inserts ints). */
	if (n && t->dtype != s->dtype)
		return pn_kfail(k, "inserting %s into a sequence of %s", pn_dtype_name(t->dtype),
				pn_dtype_name(s->dtype));
	if (pos && (read_index(k, pos, "position", &p) || seq_pos(k, p, n, 1, &p)))
		return -1;
	pn_tensor *o = pn_out_container(k, 0, PN_KIND_SEQUENCE, t->dtype);
	if (!o)
		return -1;
	for (int64_t i = 0; i <= n; i++) {
		if (i == p && push_clone(k, o, t))
			return -1;
		if (i < n && push_clone(k, o, s->items[i]))
			return -1;
	}
	return 0;
}

int pn_kernel_SequenceErase(pn_kctx *k)
{
	const pn_tensor *s = k->in[0];
	const pn_tensor *pos = pn_kin(k, 1);
	if (!is_seq(s))
		return pn_kfail(k, "input is not a sequence");
	int64_t n = s->n_items, p = -1;
	if (pos && read_index(k, pos, "position", &p))
		return -1;
	if (seq_pos(k, p, n, 0, &p))
		return -1;
	pn_tensor *o = pn_out_container(k, 0, PN_KIND_SEQUENCE, s->dtype);
	if (!o)
		return -1;
	for (int64_t i = 0; i < n; i++)
		if (i != p && push_clone(k, o, s->items[i]))
			return -1;
	return 0;
}

/* --- SplitToSequence ---------------------------------------------------------------------- */

/* Chunk lengths along the split axis: one per element when split is absent,
 * equal chunks (last one shorter) for a scalar, the given lengths for 1-D. */
static int split_lengths(pn_kctx *k, const pn_tensor *split, int64_t dim, int64_t **out,
			 int64_t *n)
{
	int64_t cnt;
	if (!split) {
		cnt = dim;
	} else if (split->rank == 0) {
		int64_t s = pn_tensor_get_i64(split, 0);
		if (s <= 0)
			return pn_kfail(k, "split must be positive, got %lld", (long long)s);
		cnt = dim ? (dim + s - 1) / s : 0;
	} else if (split->rank == 1) {
		cnt = split->numel;
	} else {
		return pn_kfail(k, "split must be a scalar or 1-D");
	}
	int64_t *len = malloc(sizeof(int64_t) * (size_t)(cnt ? cnt : 1));
	if (!len)
		return pn_kfail(k, "out of memory");
	int64_t sum = 0, each = split && split->rank == 0 ? pn_tensor_get_i64(split, 0) : 1;
	for (int64_t i = 0; i < cnt; i++) {
		if (!split || split->rank == 0)
			len[i] = dim - sum < each ? dim - sum : each;
		else
			len[i] = pn_tensor_get_i64(split, i);
		if (len[i] < 0) {
			free(len);
			return pn_kfail(k, "split lengths must not be negative");
		}
		sum += len[i];
	}
	if (sum != dim) {
		free(len);
		return pn_kfail(k, "split lengths add up to %lld, axis has %lld", (long long)sum,
				(long long)dim);
	}
	*out = len;
	*n = cnt;
	return 0;
}

int pn_kernel_SplitToSequence(pn_kctx *k)
{
	const pn_tensor *x = k->in[0], *split = pn_kin(k, 1);
	if (x->kind != PN_KIND_TENSOR || x->rank < 1)
		return pn_kfail(k, "input must be a tensor of rank >= 1");
	if (split && !pn_dtype_is_int(split->dtype))
		return pn_kfail(k, "split must be integers");
	int axis = pn_axis(pn_attr_int(k->node, "axis", 0), x->rank);
	if (axis < 0)
		return pn_kfail(k, "axis out of range for rank %d", x->rank);
	/* keepdims only matters when split is absent (chunks of one). */
	int squeeze = !split && !pn_attr_int(k->node, "keepdims", 1);
	int64_t *len = NULL, cnt = 0;
	if (split_lengths(k, split, x->dims[axis], &len, &cnt))
		return -1;
	pn_tensor *o = pn_out_container(k, 0, PN_KIND_SEQUENCE, x->dtype);
	int64_t outer = pn_dims_prod(x->dims, 0, axis), inner = pn_dims_prod(x->dims, axis + 1, x->rank);
	int rc = o ? 0 : -1;
	for (int64_t i = 0, start = 0; !rc && i < cnt; start += len[i], i++) {
		int64_t dims[PN_MAX_RANK];
		int r = 0;
		for (int d = 0; d < x->rank; d++)
			if (d != axis || !squeeze)
				dims[r++] = d == axis ? len[i] : x->dims[d];
		pn_tensor *t = pn_tensor_new(x->dtype, r, dims);
		if (!t || pn_seq_push(o, t)) {
			pn_tensor_free(t);
			rc = pn_kfail(k, "out of memory");
			break;
		}
		pn_axis_copy(t->data, len[i], 0, x->data, x->dims[axis], start, len[i], outer, inner,
			     x->dtype);
	}
	free(len);
	return rc;
}

/* --- ConcatFromSequence ------------------------------------------------------------------- */

int pn_kernel_ConcatFromSequence(pn_kctx *k)
{
	const pn_tensor *s = k->in[0];
	if (!is_seq(s))
		return pn_kfail(k, "input is not a sequence");
	if (!s->n_items)
		return pn_kfail(k, "cannot concatenate an empty sequence");
	int new_axis = pn_attr_int(k->node, "new_axis", 0) != 0;
	const pn_tensor *t0 = s->items[0];
	int r = t0->rank + new_axis;
	int axis = pn_axis(pn_attr_int(k->node, "axis", 0), r);
	if (axis < 0 || r < 1)
		return pn_kfail(k, "axis out of range for rank %d", r);
	int64_t dims[PN_MAX_RANK];
	for (int d = 0, j = 0; d < r; d++)
		dims[d] = (new_axis && d == axis) ? 0 : t0->dims[j++];
	dims[axis] = 0;
	for (int i = 0; i < s->n_items; i++) {
		const pn_tensor *t = s->items[i];
		if (t->dtype != t0->dtype || t->rank != t0->rank)
			return pn_kfail(k, "item %d differs in dtype or rank from item 0", i);
		for (int d = 0; d < t->rank; d++)
			if ((new_axis || d != axis) && t->dims[d] != t0->dims[d])
				return pn_kfail(k, "item %d has dim %d = %lld, item 0 has %lld", i, d,
						(long long)t->dims[d], (long long)t0->dims[d]);
		dims[axis] += new_axis ? 1 : t->dims[axis];
	}
	pn_tensor *o = pn_out_alloc(k, 0, t0->dtype, r, dims);
	if (!o)
		return -1;
	int64_t outer = pn_dims_prod(dims, 0, axis), inner = pn_dims_prod(dims, axis + 1, r);
	for (int i = 0, at = 0; i < s->n_items; i++) {
		const pn_tensor *t = s->items[i];
		int64_t len = new_axis ? 1 : t->dims[axis];
		pn_axis_copy(o->data, dims[axis], at, t->data, len, 0, len, outer, inner, t->dtype);
		at += (int)len;
	}
	return 0;
}

/* --- Optional, OptionalGetElement, OptionalHasElement --------------------------------------- */

int pn_kernel_Optional(pn_kctx *k)
{
	const pn_tensor *x = pn_kin(k, 0);
	if (x) {
		pn_tensor *t = pn_tensor_clone(x);
		if (!t)
			return pn_kfail(k, "out of memory");
		if (x->kind != PN_KIND_OPTIONAL)
			t->elem_kind = x->kind;
		t->kind = PN_KIND_OPTIONAL;
		return pn_out_take(k, 0, t);
	}
	const pn_attr *a = pn_attr_find(k->node, "type");
	if (!a || !a->tp)
		return pn_kfail(k, "Optional needs an input or a type attribute");
	pn_tensor *o = pn_out_container(k, 0, PN_KIND_OPTIONAL, a->tp->dtype);
	if (!o)
		return -1;
	o->none = 1;
	o->elem_kind = a->tp->kind;
	return 0;
}

/* Opset 18 lets both ops take a plain tensor or sequence (as if held by an
 * optional); earlier models also pass them one (a Loop whose carried value
 * starts as an optional and continues as a sequence), so every opset
 * accepts it. */
int pn_kernel_OptionalGetElement(pn_kctx *k)
{
	const pn_tensor *x = pn_kin(k, 0);
	if (!x)
		return pn_kfail(k, "OptionalGetElement needs an input");
	if (x->kind != PN_KIND_OPTIONAL)
		return out_copy(k, 0, x);
	if (x->none)
		return pn_kfail(k, "the optional input holds no value");
	pn_tensor *t = pn_tensor_clone(x);
	if (!t)
		return pn_kfail(k, "out of memory");
	t->kind = (uint8_t)x->elem_kind;
	t->elem_kind = PN_KIND_TENSOR;
	return pn_out_take(k, 0, t);
}

int pn_kernel_OptionalHasElement(pn_kctx *k)
{
	const pn_tensor *x = pn_kin(k, 0);
	pn_tensor *o = pn_out_alloc(k, 0, PN_BOOL, 0, NULL);
	if (!o)
		return -1;
	((uint8_t *)o->data)[0] = x && !(x->kind == PN_KIND_OPTIONAL && x->none);
	return 0;
}
