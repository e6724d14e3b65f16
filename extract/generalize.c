/*
 * generalize.c - following the batch through a fixed-shape graph (see
 * generalize.h).
 *
 * The analysis runs once over the top-level graph in topological order on
 * the types inference gives at the base batch.  Every value gets a bval:
 *   ax, q  the axis holding the batch (-1: none) and how many elements of
 *          that axis one sample spans inside it (1 unless a Reshape merged
 *          the batch with an inner axis); p = dim / q spans outside it;
 *   lin    for a small integer tensor (a shape being computed), the
 *          elements that count the batch: their value at batch B is their
 *          base value times B (Shape of a carrier, then Gather, Slice,
 *          Concat, Unsqueeze, Cast, Mul or exact Div by a constant);
 *   taint  an integer computed from the batch size some other way: harmless
 *          as data (the independence check sees it), refused as a shape.
 * The rules, by op:
 *   elementwise and broadcasting ops: the carriers aligned from the right
 *     agree on the axis and q; other operands have 1 (or nothing) there;
 *   Conv, pools, normalizations over channels, Resize, GridSample: the
 *     batch on axis 0 (rows are independent there whatever q is);
 *   Softmax, LayerNormalization, reductions, TopK, CumSum, Concat, Split,
 *     Gather, Slice, Pad, Tile: not along the batch axis (a Slice keeping
 *     the whole batch axis is fine; its end is rewritten when it is the
 *     base count);
 *   MatMul: the batch in a leading axis or the rows of A, or the columns
 *     of B, never the contracted axis; Gemm: the rows of A;
 *   Transpose permutes it; Squeeze and Unsqueeze move it;
 *   Reshape and Flatten: the elements before and after the batch (L and R
 *     in row-major order) must come out as they went in: some output axis k
 *     has L = prod(out[:k]) * p' and R = q' * prod(out[k+1:]) with
 *     out[k] = p' q'; an axis holding exactly the batch (out[k] = 1) is
 *     preferred, one whose entry follows the batch by itself (-1, a copy
 *     with 0, a computed batch count) first.  Otherwise the entry is a
 *     literal that is rewritten;
 *   Expand: an entry of 1 at the batch axis broadcasts to any batch; a
 *     computed batch count makes the output carry it;
 *   ConstantOfShape: carries the batch where its shape counts it;
 *   If, Loop, Scan and every op not listed: refused when they read it.
 * A constant read by two consumers must be rewritten the same way for both.
 */
#include "extract/generalize.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "extract/run_gate.h"
#include "runtime/compare.h"
#include "runtime/session.h"
#include "runtime/infer.h"

#define LIN_MAX 32            /* elements of a shape tensor followed */
#define PROBE_BATCH 3         /* the batch the plan is checked at */
#define BIG_END ((int64_t)1 << 30)   /* a Slice end meaning "to the end" */

typedef struct bval {
	int8_t ax;
	int8_t taint;
	int64_t q;
	uint32_t lin;
} bval;

typedef struct plan {
	const pn_graph *g;
	pn_infer_result r;        /* at the base batch */
	bval *v;
	uint32_t *mask;           /* per constant: the elements to scale */
	uint8_t *demanded;        /* a consumer said what mask it needs */
	uint8_t *carrier_input;   /* per graph input */
	int64_t base;
	char *why;
} plan;

enum { OK = 0, NO = 1, ERR = -1 };

static int refuse(plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(plan *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pn_vfail(p->why, fmt, ap);
	va_end(ap);
	return NO;
}

/* --- what is known of a value ------------------------------------------------------- */

static const pn_type *ty(const plan *p, int v)
{
	return &p->r.v[v].type;
}

static int rank_of(const plan *p, int v)
{
	return ty(p, v)->rank;
}

static int carries(const plan *p, int v)
{
	return v >= 0 && p->v[v].ax >= 0;
}

static int counts_batch(const plan *p, int v)
{
	return v >= 0 && (p->v[v].lin || p->v[v].taint);
}

static int direct_constant(const plan *p, int v)
{
	const pn_value *val = &p->g->values[v];
	return val->data && val->role != PN_ROLE_INPUT && val->role != PN_ROLE_OUTER;
}

/* Known int values of v (IR contents or folded at the base), or -1. */
static int ints_of(const plan *p, int v, int64_t *out, int max)
{
	if (v < 0)
		return -1;
	const pn_tensor *t = p->r.v[v].value;
	if (!t || t->kind != PN_KIND_TENSOR || !pn_dtype_is_int(t->dtype) || t->numel > max)
		return -1;
	for (int64_t i = 0; i < t->numel; i++)
		out[i] = pn_tensor_get_i64(t, i);
	return (int)t->numel;
}

static int64_t prod(const int64_t *d, int from, int to)
{
	int64_t n = 1;
	for (int i = from; i < to; i++)
		n *= d[i];
	return n;
}

static const char *node_name(const pn_node *n)
{
	return n->name && *n->name ? n->name : n->op_type;
}

/* Axes from attribute `name` or, from the opset that moved them, input
 * `slot`.  Returns the count (normalised for rank r), 0 when absent, -1
 * when they are computed. */
static int axes_of(const plan *p, const pn_node *n, const char *name, int slot, int r,
		   int64_t *out)
{
	int k = pn_attr_ints(n, name, out, PN_MAX_RANK);
	if (k < 0 && slot < n->n_in && n->in[slot] >= 0) {
		if (counts_batch(p, n->in[slot]))
			return -1;
		k = ints_of(p, n->in[slot], out, PN_MAX_RANK);
		if (k < 0)
			return -1;
	}
	if (k < 0)
		return 0;
	for (int i = 0; i < k; i++)
		out[i] = out[i] < 0 ? out[i] + r : out[i];
	return k;
}

static int has_axis(const int64_t *axes, int k, int a)
{
	for (int i = 0; i < k; i++)
		if (axes[i] == a)
			return 1;
	return 0;
}

/* --- constants read as shapes -------------------------------------------------------- */

static int demand(plan *p, int v, uint32_t mask, const pn_node *n)
{
	if (v < 0 || !direct_constant(p, v))
		return OK;
	if (p->demanded[v] && p->mask[v] != mask)
		return refuse(p, "constant '%s' is read with and without the batch (by %s '%s')",
			      p->g->values[v].name, n->op_type, node_name(n));
	p->demanded[v] = 1;
	p->mask[v] = mask;
	return OK;
}

/* Entry e of shape input `slot` must count the batch: fine when it does by
 * itself (lin), else rewritten when the input is a constant. */
static int scale_entry(plan *p, const pn_node *n, int slot, int e, uint32_t *mask)
{
	int v = n->in[slot];
	if (p->v[v].lin & (1u << e))
		return OK;
	const pn_tensor *t = p->g->values[v].data;
	if (!direct_constant(p, v) || !t || t->rank != 1 || t->numel > LIN_MAX ||
	    (t->dtype != PN_INT64 && t->dtype != PN_INT32))
		return refuse(p, "%s '%s': input %d fixes the batch and is computed, not a constant",
			      n->op_type, node_name(n), slot);
	*mask |= 1u << e;
	return OK;
}

/* --- small integer tensors (shapes being computed) ----------------------------------- */

static void set_out(plan *p, const pn_node *n, int k, bval b)
{
	if (k < n->n_out && n->out[k] >= 0)
		p->v[n->out[k]] = b;
}

static void taint_outputs(plan *p, const pn_node *n)
{
	for (int k = 0; k < n->n_out; k++)
		set_out(p, n, k, (bval){.ax = -1, .taint = 1, .q = 1});
}

static int64_t numel_of(const plan *p, int v)
{
	const pn_type *t = ty(p, v);
	return pn_type_is_static(t) ? pn_numel(t->rank, t->dims) : -1;
}

static uint32_t bit_at(const plan *p, int v, int64_t i)
{
	int64_t n = numel_of(p, v);
	if (n == 1)
		i = 0;
	return i < LIN_MAX ? (p->v[v].lin >> i) & 1u : 0;
}

/* Gather along axis 0 of a 1-D shape. */
static int lin_gather(plan *p, const pn_node *n, uint32_t *out)
{
	int64_t idx[LIN_MAX];
	int k = ints_of(p, n->in[1], idx, LIN_MAX);
	int64_t len = numel_of(p, n->in[0]);
	if (k < 0 || rank_of(p, n->in[0]) != 1 || pn_attr_int(n, "axis", 0) != 0)
		return -1;
	for (int j = 0; j < k; j++) {
		int64_t i = idx[j] < 0 ? idx[j] + len : idx[j];
		if (i < 0 || i >= len)
			return -1;
		*out |= bit_at(p, n->in[0], i) << j;
	}
	return 0;
}

static int lin_slice(plan *p, const pn_node *n, uint32_t *out)
{
	int64_t st = 0, en = 0, stp = 1, ax = 0;
	int64_t len = numel_of(p, n->in[0]);
	if (rank_of(p, n->in[0]) != 1 || n->n_in < 3 || ints_of(p, n->in[1], &st, 1) != 1 ||
	    ints_of(p, n->in[2], &en, 1) != 1 ||
	    (n->n_in > 3 && n->in[3] >= 0 && (ints_of(p, n->in[3], &ax, 1) != 1 || (ax != 0 && ax != -1))) ||
	    (n->n_in > 4 && n->in[4] >= 0 && ints_of(p, n->in[4], &stp, 1) != 1) || stp <= 0)
		return -1;
	st = st < 0 ? st + len : st;
	en = en < 0 ? en + len : en;
	st = st < 0 ? 0 : st > len ? len : st;
	en = en < 0 ? 0 : en > len ? len : en;
	int j = 0;
	for (int64_t i = st; i < en && j < LIN_MAX; i += stp, j++)
		*out |= bit_at(p, n->in[0], i) << j;
	return 0;
}

static int lin_concat(plan *p, const pn_node *n, uint32_t *out)
{
	int64_t off = 0;
	for (int i = 0; i < n->n_in; i++) {
		int v = n->in[i];
		int64_t len = v >= 0 ? numel_of(p, v) : 0;
		if (v < 0 || len < 0 || rank_of(p, v) != 1 || off + len > LIN_MAX || p->v[v].taint)
			return -1;
		*out |= p->v[v].lin << off;
		off += len;
	}
	return 0;
}

/* Mul, Div of a batch count by a constant. */
static int lin_arith(plan *p, const pn_node *n, uint32_t *out)
{
	int a = n->in[0], b = n->in[1];
	int64_t na = numel_of(p, a), nb = numel_of(p, b), no = numel_of(p, n->out[0]);
	if (n->n_in != 2 || no < 0 || no > LIN_MAX || p->v[a].taint || p->v[b].taint)
		return -1;
	if (n->op == PN_OP_Div && p->v[b].lin)
		return -1;
	int64_t va[LIN_MAX], vb[LIN_MAX];
	if (n->op == PN_OP_Div && (ints_of(p, a, va, LIN_MAX) != na || ints_of(p, b, vb, LIN_MAX) != nb))
		return -1;
	for (int64_t j = 0; j < no; j++) {
		uint32_t la = bit_at(p, a, j), lb = bit_at(p, b, j);
		if (la && lb)
			return -1;   /* batch squared */
		if (la && n->op == PN_OP_Div && (vb[nb == 1 ? 0 : j] == 0 || va[na == 1 ? 0 : j] % vb[nb == 1 ? 0 : j]))
			return -1;   /* the quotient would not scale exactly */
		*out |= (la | lb) << j;
	}
	return 0;
}

/* A node with no carrier among its inputs but a batch count. */
static int shape_math(plan *p, const pn_node *n)
{
	uint32_t lin = 0;
	int rc = -1;
	int in0 = n->n_in ? n->in[0] : -1;
	int others_clean = 1;
	for (int i = 1; i < n->n_in; i++)
		if (n->op != PN_OP_Concat && n->op != PN_OP_Mul && counts_batch(p, n->in[i]))
			others_clean = 0;
	if (n->n_out == 1 && n->out[0] >= 0 && others_clean && in0 >= 0 &&
	    numel_of(p, n->out[0]) >= 0 && numel_of(p, n->out[0]) <= LIN_MAX &&
	    pn_dtype_is_int(ty(p, n->out[0])->dtype)) {
		switch (n->op) {
		case PN_OP_Cast: case PN_OP_Identity: case PN_OP_Unsqueeze: case PN_OP_Squeeze:
		case PN_OP_Reshape: case PN_OP_Flatten:
			rc = p->v[in0].taint ? -1 : 0;
			lin = p->v[in0].lin;
			break;
		case PN_OP_Gather:
			rc = p->v[in0].taint ? -1 : lin_gather(p, n, &lin);
			break;
		case PN_OP_Slice:
			rc = p->v[in0].taint ? -1 : lin_slice(p, n, &lin);
			break;
		case PN_OP_Concat:
			rc = lin_concat(p, n, &lin);
			break;
		case PN_OP_Mul: case PN_OP_Div:
			rc = lin_arith(p, n, &lin);
			break;
		default:
			break;
		}
	}
	if (rc)
		taint_outputs(p, n);
	else
		set_out(p, n, 0, (bval){.ax = -1, .q = 1, .lin = lin});
	return OK;
}

/* --- tensors carrying the batch ----------------------------------------------------- */

static bval at(int ax, int64_t q)
{
	return (bval){.ax = (int8_t)ax, .q = q};
}

/* Broadcasting: carriers aligned from the right agree, the others hold 1
 * (or nothing) at the batch axis. */
static int rule_broadcast(plan *p, const pn_node *n)
{
	int out = n->out[0], r = rank_of(p, out);
	int ax = -1;
	int64_t q = 1;
	for (int i = 0; i < n->n_in; i++) {
		int v = n->in[i];
		if (!carries(p, v))
			continue;
		int k = p->v[v].ax + r - rank_of(p, v);
		if (ax >= 0 && (k != ax || p->v[v].q != q))
			return refuse(p, "%s '%s' combines the batch on two different axes", n->op_type,
				      node_name(n));
		ax = k;
		q = p->v[v].q;
	}
	for (int i = 0; i < n->n_in; i++) {
		int v = n->in[i];
		if (v < 0 || carries(p, v))
			continue;
		int k = ax - (r - rank_of(p, v));
		if (k >= 0 && ty(p, v)->dims[k] != 1)
			return refuse(p, "%s '%s' broadcasts '%s' (dim %lld) along the batch axis",
				      n->op_type, node_name(n), p->g->values[v].name,
				      (long long)ty(p, v)->dims[k]);
	}
	for (int k = 0; k < n->n_out; k++)
		set_out(p, n, k, at(ax, q));
	return OK;
}

/* Ops whose axis 0 holds independent rows. */
static int rule_rows(plan *p, const pn_node *n)
{
	int x = n->in[0];
	for (int i = 1; i < n->n_in; i++)
		if (carries(p, n->in[i]) && !(n->op == PN_OP_GridSample && p->v[n->in[i]].ax == 0 &&
					      p->v[n->in[i]].q == p->v[x].q))
			return refuse(p, "%s '%s' reads the batch in input %d", n->op_type, node_name(n), i);
	if (n->op == PN_OP_BatchNormalization && pn_attr_int(n, "training_mode", 0))
		return refuse(p, "BatchNormalization '%s' takes statistics over the batch", node_name(n));
	if (!carries(p, x) || p->v[x].ax != 0)
		return refuse(p, "%s '%s' has the batch on axis %d, not 0", n->op_type, node_name(n),
			      carries(p, x) ? p->v[x].ax : -1);
	set_out(p, n, 0, at(0, p->v[x].q));
	if (n->op == PN_OP_Dropout || n->op == PN_OP_BatchNormalization)
		for (int k = 1; k < n->n_out; k++)
			set_out(p, n, k, at(0, p->v[x].q));
	else
		for (int k = 1; k < n->n_out; k++)   /* MaxPool indices count across the batch */
			set_out(p, n, k, (bval){.ax = -1, .taint = 1, .q = 1});
	return OK;
}

/* Resize and Upsample: rows, with scales 1 and sizes counting the batch. */
static int rule_resize(plan *p, const pn_node *n)
{
	int rc = rule_rows(p, n);
	if (rc)
		return rc;
	int scales = n->op == PN_OP_Upsample ? 1 : 2, sizes = 3;
	float f = 1;
	const pn_tensor *st = scales < n->n_in && n->in[scales] >= 0 ? p->r.v[n->in[scales]].value : NULL;
	if (st && st->numel > 0 && (f = (float)pn_tensor_get_f64(st, 0)) != 1)
		return refuse(p, "%s '%s' scales the batch axis by %g", n->op_type, node_name(n), f);
	if (sizes < n->n_in && n->in[sizes] >= 0 && ty(p, n->in[sizes])->rank == 1 &&
	    numel_of(p, n->in[sizes]) > 0) {
		uint32_t mask = 0;
		int64_t s[PN_MAX_RANK];
		if (ints_of(p, n->in[sizes], s, PN_MAX_RANK) > 0 && s[0] != ty(p, n->in[0])->dims[0])
			return refuse(p, "%s '%s' resizes the batch axis", n->op_type, node_name(n));
		if ((rc = scale_entry(p, n, sizes, 0, &mask)) || (rc = demand(p, n->in[sizes], mask, n)))
			return rc;
	}
	return OK;
}

/* One data input, and an op working along `axis` that must not be the
 * batch axis (before: the op coerces to 2-D at axis, so the batch must be
 * before it). */
static int rule_along(plan *p, const pn_node *n, int64_t axis, int before)
{
	int x = n->in[0], r = rank_of(p, x), a = p->v[x].ax;
	axis = axis < 0 ? axis + r : axis;
	if (before ? a >= axis : a == axis)
		return refuse(p, "%s '%s' works along the batch axis %d", n->op_type, node_name(n), a);
	for (int i = 1; i < n->n_in; i++)
		if (carries(p, n->in[i]) || counts_batch(p, n->in[i]))
			return refuse(p, "%s '%s' reads the batch in input %d", n->op_type, node_name(n), i);
	for (int k = 0; k < n->n_out; k++)
		set_out(p, n, k, p->v[x]);
	return OK;
}

static int rule_softmax(plan *p, const pn_node *n)
{
	int old = n->opset < 13;
	return rule_along(p, n, pn_attr_int(n, "axis", old ? 1 : -1), old);
}

static int rule_reduce(plan *p, const pn_node *n)
{
	int x = n->in[0], r = rank_of(p, x), a = p->v[x].ax;
	int64_t axes[PN_MAX_RANK];
	int k;
	if (n->op == PN_OP_ArgMax || n->op == PN_OP_ArgMin) {
		axes[0] = pn_attr_int(n, "axis", 0);
		axes[0] = axes[0] < 0 ? axes[0] + r : axes[0];
		k = 1;
	} else {
		k = axes_of(p, n, "axes", 1, r, axes);
	}
	if (k < 0)
		return refuse(p, "%s '%s' reduces over computed axes", n->op_type, node_name(n));
	if ((k == 0 && !pn_attr_int(n, "noop_with_empty_axes", 0)) || has_axis(axes, k, a))
		return refuse(p, "%s '%s' reduces over the batch axis", n->op_type, node_name(n));
	int out_ax = a;
	if (!pn_attr_int(n, "keepdims", 1))
		for (int i = 0; i < k; i++)
			out_ax -= axes[i] < a;
	set_out(p, n, 0, at(out_ax, p->v[x].q));
	return OK;
}

static int rule_layernorm(plan *p, const pn_node *n)
{
	return rule_along(p, n, pn_attr_int(n, "axis", -1), 1);
}

static int rule_quant(plan *p, const pn_node *n)
{
	int x = n->in[0], a = p->v[x].ax;
	int64_t axis = pn_attr_int(n, "axis", 1);
	axis = axis < 0 ? axis + rank_of(p, x) : axis;
	for (int i = 1; i < n->n_in; i++) {
		int v = n->in[i];
		if (v >= 0 && (carries(p, v) || counts_batch(p, v)))
			return refuse(p, "%s '%s' reads the batch in input %d", n->op_type, node_name(n), i);
		if (v >= 0 && numel_of(p, v) > 1 && axis == a)
			return refuse(p, "%s '%s' quantizes per batch row", n->op_type, node_name(n));
	}
	set_out(p, n, 0, p->v[x]);
	return OK;
}

static int rule_transpose(plan *p, const pn_node *n)
{
	int x = n->in[0], r = rank_of(p, x);
	int64_t perm[PN_MAX_RANK];
	int k = pn_attr_ints(n, "perm", perm, PN_MAX_RANK);
	for (int i = 0; k < 0 && i < r; i++)
		perm[i] = r - 1 - i;
	for (int j = 0; j < r; j++)
		if (perm[j] == p->v[x].ax) {
			set_out(p, n, 0, at(j, p->v[x].q));
			return OK;
		}
	return refuse(p, "Transpose '%s' has no axis for the batch", node_name(n));
}

static int rule_matmul(plan *p, const pn_node *n)
{
	int A = n->in[0], B = n->in[1], out = n->out[0];
	int ra = rank_of(p, A), rb = rank_of(p, B), r = rank_of(p, out);
	int ax = -1;
	int64_t q = 1;
	if (n->n_in > 2)   /* QLinearMatMul, MatMulInteger: zero points, scales */
		for (int i = 2; i < n->n_in; i++)
			if (carries(p, n->in[i]) && n->in[i] != A && n->in[i] != B)
				return refuse(p, "%s '%s' reads the batch in input %d", n->op_type, node_name(n), i);
	if (n->op == PN_OP_QLinearMatMul)
		B = n->in[3], rb = rank_of(p, B);
	if (carries(p, A)) {
		int a = p->v[A].ax;
		if (a == ra - 1)
			return refuse(p, "%s '%s' contracts the batch axis", n->op_type, node_name(n));
		ax = rb == 1 ? a : a == ra - 2 ? r - 2 : a + r - ra;
		q = p->v[A].q;
	}
	if (carries(p, B)) {
		int b = p->v[B].ax;
		if (b == rb - 2 || rb == 1)
			return refuse(p, "%s '%s' contracts the batch axis", n->op_type, node_name(n));
		int k = ra == 1 ? (b == rb - 1 ? r - 1 : b) : b == rb - 1 ? r - 1 : b + r - rb;
		if (ax >= 0 && (k != ax || q != p->v[B].q))
			return refuse(p, "%s '%s' combines the batch on two axes", n->op_type, node_name(n));
		ax = k;
		q = p->v[B].q;
	}
	int other = carries(p, A) ? B : A;
	if (!carries(p, other) && ax < r - 2) {   /* a leading axis broadcasts the other operand */
		int ro = rank_of(p, other), k = ax - (r - ro);
		if (k >= 0 && k < ro - 2 && ty(p, other)->dims[k] != 1)
			return refuse(p, "%s '%s' broadcasts '%s' along the batch", n->op_type,
				      node_name(n), p->g->values[other].name);
	}
	set_out(p, n, 0, at(ax, q));
	return OK;
}

static int rule_gemm(plan *p, const pn_node *n)
{
	int A = n->in[0];
	int want = pn_attr_int(n, "transA", 0) ? 1 : 0;
	for (int i = 1; i < n->n_in; i++)
		if (carries(p, n->in[i]))
			return refuse(p, "Gemm '%s' reads the batch in input %d", node_name(n), i);
	if (p->v[A].ax != want)
		return refuse(p, "Gemm '%s' contracts the batch axis", node_name(n));
	if (n->n_in > 2 && n->in[2] >= 0 && rank_of(p, n->in[2]) == 2 && ty(p, n->in[2])->dims[0] != 1)
		return refuse(p, "Gemm '%s' adds a bias per batch row", node_name(n));
	set_out(p, n, 0, at(0, p->v[A].q));
	return OK;
}

/* Concat of carriers along another axis. */
static int rule_concat(plan *p, const pn_node *n)
{
	int r = rank_of(p, n->out[0]);
	int64_t axis = pn_attr_int(n, "axis", 0);
	axis = axis < 0 ? axis + r : axis;
	int first = -1;
	for (int i = 0; i < n->n_in; i++) {
		int v = n->in[i];
		if (v < 0 || numel_of(p, v) == 0)
			continue;
		if (!carries(p, v))
			return refuse(p, "Concat '%s' joins '%s', which does not carry the batch", node_name(n),
				      p->g->values[v].name);
		if (first >= 0 && (p->v[v].ax != p->v[first].ax || p->v[v].q != p->v[first].q))
			return refuse(p, "Concat '%s' joins the batch on different axes", node_name(n));
		first = first < 0 ? v : first;
	}
	if (first < 0)
		return refuse(p, "Concat '%s' joins only empty tensors", node_name(n));
	if (p->v[first].ax == axis)
		return refuse(p, "Concat '%s' stacks along the batch axis", node_name(n));
	set_out(p, n, 0, p->v[first]);
	return OK;
}

static int rule_split(plan *p, const pn_node *n)
{
	int x = n->in[0];
	int64_t axis = pn_attr_int(n, "axis", 0);
	axis = axis < 0 ? axis + rank_of(p, x) : axis;
	if (axis == p->v[x].ax)
		return refuse(p, "Split '%s' splits the batch axis", node_name(n));
	for (int k = 0; k < n->n_out; k++)
		set_out(p, n, k, p->v[x]);
	return OK;
}

static int rule_gather(plan *p, const pn_node *n)
{
	int data = n->in[0], idx = n->in[1];
	int r = rank_of(p, data), ri = rank_of(p, idx);
	int64_t axis = pn_attr_int(n, "axis", 0);
	axis = axis < 0 ? axis + r : axis;
	if (carries(p, data) && carries(p, idx))
		return refuse(p, "Gather '%s' indexes a batch with a batch", node_name(n));
	if (carries(p, idx)) {   /* an embedding lookup of ids */
		set_out(p, n, 0, at((int)axis + p->v[idx].ax, p->v[idx].q));
		return OK;
	}
	int a = p->v[data].ax;
	if (a == axis)
		return refuse(p, "Gather '%s' picks along the batch axis", node_name(n));
	set_out(p, n, 0, at(a < axis ? a : a - 1 + ri, p->v[data].q));
	return OK;
}

static int rule_gather_elements(plan *p, const pn_node *n)
{
	int data = n->in[0], idx = n->in[1];
	int64_t axis = pn_attr_int(n, "axis", 0);
	axis = axis < 0 ? axis + rank_of(p, data) : axis;
	if (!carries(p, data) || !carries(p, idx) || p->v[data].ax != p->v[idx].ax ||
	    p->v[data].q != p->v[idx].q || p->v[data].ax == axis)
		return refuse(p, "%s '%s' mixes rows of the batch", n->op_type, node_name(n));
	set_out(p, n, 0, p->v[data]);
	return OK;
}

static int rule_slice(plan *p, const pn_node *n)
{
	int x = n->in[0], r = rank_of(p, x), a = p->v[x].ax;
	int64_t st[PN_MAX_RANK], en[PN_MAX_RANK], axes[PN_MAX_RANK], steps[PN_MAX_RANK];
	if (n->n_in < 3) 
		return refuse(p, "Slice '%s' has its ranges as attributes (opset < 10)", node_name(n));
	int k = ints_of(p, n->in[1], st, PN_MAX_RANK);
	if (k < 0 || ints_of(p, n->in[2], en, PN_MAX_RANK) != k)
		return refuse(p, "Slice '%s' has computed ranges", node_name(n));
	for (int i = 0; i < k; i++)
		axes[i] = i, steps[i] = 1;
	if ((n->n_in > 3 && n->in[3] >= 0 && axes_of(p, n, "", 3, r, axes) != k) ||
	    (n->n_in > 4 && n->in[4] >= 0 && ints_of(p, n->in[4], steps, PN_MAX_RANK) != k))
		return refuse(p, "Slice '%s' has computed axes or steps", node_name(n));
	for (int s = 1; s < n->n_in; s++)
		if (s != 2 && counts_batch(p, n->in[s]))
			return refuse(p, "Slice '%s' computes its range from the batch", node_name(n));
	uint32_t mask = 0, batch_entries = 0;
	int rc;
	for (int i = 0; i < k; i++) {
		if (axes[i] != a)
			continue;
		batch_entries |= 1u << i;
		int64_t dim = ty(p, x)->dims[a];
		if (st[i] != 0 || steps[i] != 1 || (en[i] < dim))
			return refuse(p, "Slice '%s' cuts the batch axis", node_name(n));
		if (en[i] == dim && (rc = scale_entry(p, n, 2, i, &mask)))
			return rc;
		if (en[i] > dim && en[i] < BIG_END)
			return refuse(p, "Slice '%s' ends the batch axis at %lld", node_name(n),
				      (long long)en[i]);
	}
	if (counts_batch(p, n->in[2]) && (p->v[n->in[2]].taint || (p->v[n->in[2]].lin & ~batch_entries)))
		return refuse(p, "Slice '%s' ends an axis at a batch count", node_name(n));
	if ((rc = demand(p, n->in[2], mask, n)))
		return rc;
	set_out(p, n, 0, p->v[x]);
	return OK;
}

static int rule_pad(plan *p, const pn_node *n)
{
	int x = n->in[0], r = rank_of(p, x), a = p->v[x].ax;
	int64_t pads[2 * PN_MAX_RANK];
	int k = pn_attr_ints(n, "pads", pads, 2 * PN_MAX_RANK);
	if (k < 0 && n->n_in > 1)
		k = ints_of(p, n->in[1], pads, 2 * PN_MAX_RANK);
	if (n->n_in > 3 && n->in[3] >= 0)
		return refuse(p, "Pad '%s' pads chosen axes", node_name(n));
	if (k != 2 * r || pads[a] || pads[a + r])
		return refuse(p, "Pad '%s' pads the batch axis", node_name(n));
	set_out(p, n, 0, p->v[x]);
	return OK;
}

static int rule_tile(plan *p, const pn_node *n)
{
	int x = n->in[0];
	int64_t rep[PN_MAX_RANK];
	if (ints_of(p, n->in[1], rep, PN_MAX_RANK) != rank_of(p, x) || rep[p->v[x].ax] != 1)
		return refuse(p, "Tile '%s' repeats the batch axis", node_name(n));
	set_out(p, n, 0, p->v[x]);
	return OK;
}

static int rule_squeeze(plan *p, const pn_node *n)
{
	int x = n->in[0], r = rank_of(p, x), a = p->v[x].ax;
	int64_t axes[PN_MAX_RANK];
	int k = axes_of(p, n, "axes", 1, r, axes);
	if (k < 0)
		return refuse(p, "Squeeze '%s' has computed axes", node_name(n));
	if (k == 0)
		for (int i = 0; i < r; i++)
			if (ty(p, x)->dims[i] == 1)
				axes[k++] = i;
	if (has_axis(axes, k, a))
		return refuse(p, "Squeeze '%s' drops the batch axis", node_name(n));
	int out_ax = a;
	for (int i = 0; i < k; i++)
		out_ax -= axes[i] < a;
	set_out(p, n, 0, at(out_ax, p->v[x].q));
	return OK;
}

static int rule_unsqueeze(plan *p, const pn_node *n)
{
	int x = n->in[0], ro = rank_of(p, n->out[0]), a = p->v[x].ax;
	int64_t axes[PN_MAX_RANK];
	int k = axes_of(p, n, "axes", 1, ro, axes);
	if (k <= 0)
		return refuse(p, "Unsqueeze '%s' has computed axes", node_name(n));
	int seen = 0;
	for (int j = 0; j < ro; j++) {
		if (has_axis(axes, k, j))
			continue;
		if (seen++ == a) {
			set_out(p, n, 0, at(j, p->v[x].q));
			return OK;
		}
	}
	return refuse(p, "Unsqueeze '%s' loses the batch axis", node_name(n));
}

/* Reshape, Flatten: where the batch lands (see the top of the file). */
typedef struct target {
	int n;
	int64_t raw[PN_MAX_RANK];   /* as given: 0 copies, -1 infers */
	int64_t dim[PN_MAX_RANK];   /* resolved at the base */
	uint32_t lin;
	int allowzero;
	int all_dynamic;            /* Flatten: no literal entries */
} target;

static int entry_dynamic(const target *t, int k, int in_ax)
{
	return t->all_dynamic || t->raw[k] == -1 || ((t->lin >> k) & 1u) ||
	       (t->raw[k] == 0 && !t->allowzero && k == in_ax);
}

/* The output axis of the batch, or -1; *merged: the entry holds more than
 * the batch. */
static int reshape_axis(const plan *p, int x, const target *t, int64_t *q_out)
{
	const pn_type *d = ty(p, x);
	int a = p->v[x].ax;
	int64_t q = p->v[x].q, pp = d->dims[a] / q;
	int64_t L = prod(d->dims, 0, a) * pp, R = q * prod(d->dims, a + 1, d->rank);
	int best = -1, best_score = -1;
	for (int k = 0; k < t->n; k++) {
		int64_t pk = prod(t->dim, 0, k);
		if (pk == 0 || L % pk)
			continue;
		int64_t p2 = L / pk;
		if (t->dim[k] % p2)
			continue;
		int64_t q2 = t->dim[k] / p2;
		if (q2 * prod(t->dim, k + 1, t->n) != R)
			continue;
		int score = (t->dim[k] == 1) * 2 + entry_dynamic(t, k, a);
		if (score > best_score) {
			best = k;
			best_score = score;
			*q_out = q2;
		}
	}
	return best;
}

static int read_target(plan *p, const pn_node *n, target *t)
{
	int x = n->in[0];
	const pn_type *d = ty(p, x);
	memset(t, 0, sizeof *t);
	if (n->op == PN_OP_Flatten) {
		int64_t axis = pn_attr_int(n, "axis", 1);
		axis = axis < 0 ? axis + d->rank : axis;
		t->n = 2;
		t->dim[0] = prod(d->dims, 0, (int)axis);
		t->dim[1] = prod(d->dims, (int)axis, d->rank);
		t->all_dynamic = 1;
		return OK;
	}
	int s = n->in[1];
	if (p->v[s].taint)
		return refuse(p, "Reshape '%s' target is computed from the batch size", node_name(n));
	t->n = ints_of(p, s, t->raw, PN_MAX_RANK);
	if (t->n < 0 || !pn_type_is_static(ty(p, n->out[0])) || ty(p, n->out[0])->rank != t->n)
		return refuse(p, "Reshape '%s' has an unknown target", node_name(n));
	t->lin = p->v[s].lin;
	t->allowzero = (int)pn_attr_int(n, "allowzero", 0);
	for (int k = 0; k < t->n; k++)
		t->dim[k] = ty(p, n->out[0])->dims[k];
	return OK;
}

static int rule_reshape(plan *p, const pn_node *n)
{
	int x = n->in[0], a = p->v[x].ax;
	target t;
	int rc = read_target(p, n, &t);
	if (rc)
		return rc;
	int64_t q = 1;
	int k = reshape_axis(p, x, &t, &q);
	if (k < 0)
		return refuse(p, "%s '%s' folds the batch into another axis", n->op_type, node_name(n));
	for (int j = 0; j < t.n && !t.all_dynamic; j++)
		if (j != k && (((t.lin >> j) & 1u) || (t.raw[j] == 0 && !t.allowzero && j == a)))
			return refuse(p, "%s '%s' puts a batch count on axis %d, the batch lands on %d",
				      n->op_type, node_name(n), j, k);
	uint32_t mask = 0;
	if (!entry_dynamic(&t, k, a) && (rc = scale_entry(p, n, 1, k, &mask)))
		return rc;
	if (n->op == PN_OP_Reshape && (rc = demand(p, n->in[1], mask, n)))
		return rc;
	set_out(p, n, 0, at(k, q));
	return OK;
}

static int rule_expand(plan *p, const pn_node *n)
{
	int x = n->in[0], s = n->in[1], r = rank_of(p, n->out[0]);
	int64_t sh[PN_MAX_RANK];
	int k = ints_of(p, s, sh, PN_MAX_RANK);
	if (p->v[s].taint || k < 0)
		return refuse(p, "Expand '%s' has a shape computed from the batch size", node_name(n));
	uint32_t mask = 0;
	int rc;
	if (carries(p, x)) {
		int ax = p->v[x].ax + r - rank_of(p, x), e = ax - (r - k);
		if (e >= 0 && sh[e] != 1 && !((p->v[s].lin >> e) & 1u) &&
		    (rc = scale_entry(p, n, 1, e, &mask)))
			return rc;
		if (p->v[s].lin & ~(e >= 0 ? 1u << e : 0))
			return refuse(p, "Expand '%s' broadcasts a batch count off the batch axis", node_name(n));
		if ((rc = demand(p, s, mask, n)))
			return rc;
		set_out(p, n, 0, at(ax, p->v[x].q));
		return OK;
	}
	/* the data holds one value along the axis: any layout of it is a batch */
	for (int e = 0; e < k; e++)
		if ((p->v[s].lin >> e) & 1u) {
			if (p->v[s].lin != 1u << e)
				return refuse(p, "Expand '%s' counts the batch twice", node_name(n));
			set_out(p, n, 0, at(e + r - k, 1));
			return OK;
		}
	return OK;
}

static int rule_constant_of_shape(plan *p, const pn_node *n)
{
	int s = n->in[0];
	uint32_t l = p->v[s].lin;
	if (p->v[s].taint || (l & (l - 1)))
		return refuse(p, "ConstantOfShape '%s' has a shape computed from the batch size",
			      node_name(n));
	for (int e = 0; e < LIN_MAX; e++)
		if ((l >> e) & 1u)
			set_out(p, n, 0, at(e, 1));
	return OK;
}

static int rule_shape(plan *p, const pn_node *n)
{
	int x = n->in[0], r = rank_of(p, x);
	int64_t st = pn_attr_int(n, "start", 0), en = pn_attr_int(n, "end", r);
	st = st < 0 ? st + r : st;
	en = en < 0 ? en + r : en > r ? r : en;
	int a = p->v[x].ax;
	uint32_t lin = a >= st && a < en ? 1u << (a - st) : 0;
	set_out(p, n, 0, (bval){.ax = -1, .q = 1, .lin = lin});
	return OK;
}

/* --- the walk ------------------------------------------------------------------------ */

static int rule_carrier(plan *p, const pn_node *n)
{
	int x = n->n_in ? n->in[0] : -1;
	const pn_op_info *op = n->op >= 0 ? &pn_ops[n->op] : NULL;
	if (op && op->kind == CONTROL)
		return refuse(p, "%s '%s' reads the batch: control flow is not followed", n->op_type,
			      node_name(n));
	switch (n->op) {
	case PN_OP_Conv: case PN_OP_ConvTranspose: case PN_OP_MaxPool: case PN_OP_AveragePool:
	case PN_OP_LpPool: case PN_OP_GlobalAveragePool: case PN_OP_GlobalMaxPool:
	case PN_OP_GlobalLpPool: case PN_OP_BatchNormalization: case PN_OP_InstanceNormalization:
	case PN_OP_GroupNormalization: case PN_OP_LRN: case PN_OP_DepthToSpace:
	case PN_OP_SpaceToDepth: case PN_OP_GridSample: case PN_OP_QLinearConv:
	case PN_OP_ConvInteger: case PN_OP_Dropout:
		if (n->op == PN_OP_Dropout)
			return rule_broadcast(p, n);
		return rule_rows(p, n);
	case PN_OP_Resize: case PN_OP_Upsample:
		return rule_resize(p, n);
	case PN_OP_Softmax: case PN_OP_LogSoftmax: case PN_OP_Hardmax:
		return rule_softmax(p, n);
	case PN_OP_LpNormalization:
		return rule_along(p, n, pn_attr_int(n, "axis", -1), 0);
	case PN_OP_CumSum: {
		int64_t axis;
		if (carries(p, x) && ints_of(p, n->in[1], &axis, 1) == 1)
			return rule_along(p, n, axis, 0);
		break;
	}
	case PN_OP_TopK:
		return rule_along(p, n, pn_attr_int(n, "axis", -1), 0);
	case PN_OP_LayerNormalization:
		return rule_layernorm(p, n);
	case PN_OP_ReduceSum: case PN_OP_ReduceMean: case PN_OP_ReduceMax: case PN_OP_ReduceMin:
	case PN_OP_ReduceProd: case PN_OP_ReduceL1: case PN_OP_ReduceL2: case PN_OP_ReduceLogSum:
	case PN_OP_ReduceLogSumExp: case PN_OP_ReduceSumSquare: case PN_OP_ArgMax: case PN_OP_ArgMin:
		if (carries(p, x))
			return rule_reduce(p, n);
		break;
	case PN_OP_QuantizeLinear: case PN_OP_DequantizeLinear:
		if (carries(p, x))
			return rule_quant(p, n);
		break;
	case PN_OP_Transpose:
		return rule_transpose(p, n);
	case PN_OP_MatMul: case PN_OP_MatMulInteger: case PN_OP_QLinearMatMul:
		return rule_matmul(p, n);
	case PN_OP_Gemm:
		return rule_gemm(p, n);
	case PN_OP_Concat:
		return rule_concat(p, n);
	case PN_OP_Split:
		if (carries(p, x))
			return rule_split(p, n);
		break;
	case PN_OP_Gather:
		return rule_gather(p, n);
	case PN_OP_GatherElements:
		return rule_gather_elements(p, n);
	case PN_OP_Slice:
		if (carries(p, x))
			return rule_slice(p, n);
		break;
	case PN_OP_Pad:
		if (carries(p, x))
			return rule_pad(p, n);
		break;
	case PN_OP_Tile:
		if (carries(p, x))
			return rule_tile(p, n);
		break;
	case PN_OP_Squeeze:
		if (carries(p, x))
			return rule_squeeze(p, n);
		break;
	case PN_OP_Unsqueeze:
		if (carries(p, x))
			return rule_unsqueeze(p, n);
		break;
	case PN_OP_Reshape: case PN_OP_Flatten:
		if (carries(p, x))
			return rule_reshape(p, n);
		break;
	case PN_OP_Expand:
		return rule_expand(p, n);
	case PN_OP_Shape:
		return rule_shape(p, n);
	case PN_OP_Size:
		taint_outputs(p, n);
		return OK;
	default:
		if (op && (op->kind == ELEMWISE || op->kind == BROADCAST))
			return rule_broadcast(p, n);
		break;
	}
	return refuse(p, "%s '%s' reads the batch: not followed", n->op_type, node_name(n));
}

static int reads_batch(const plan *p, const pn_node *n, int *carrier, int *count)
{
	*carrier = *count = 0;
	for (int i = 0; i < n->n_in; i++) {
		*carrier |= carries(p, n->in[i]);
		*count |= counts_batch(p, n->in[i]);
	}
	for (int i = 0; i < n->n_implicit; i++) {
		*carrier |= carries(p, n->implicit[i]);
		*count |= counts_batch(p, n->implicit[i]);
	}
	return *carrier || *count;
}

static int walk_node(plan *p, const pn_node *n)
{
	int carrier, count;
	for (int k = 0; k < n->n_out; k++)
		set_out(p, n, k, (bval){.ax = -1, .q = 1});
	if (!reads_batch(p, n, &carrier, &count)) {
		for (int i = 0; i < n->n_in; i++)
			if (demand(p, n->in[i], 0, n))
				return NO;
		return OK;
	}
	if (n->op == PN_OP_ConstantOfShape)
		return rule_constant_of_shape(p, n);
	if (n->op == PN_OP_Expand && !carries(p, n->in[0]) && !counts_batch(p, n->in[0]))
		return rule_expand(p, n);
	if (!carrier) {
		if (pn_ops[n->op >= 0 ? n->op : 0].kind == CONTROL || n->op < 0)
			return refuse(p, "%s '%s' reads a batch count: not followed", n->op_type,
				      node_name(n));
		for (int i = 0; i < n->n_in; i++)
			if (!counts_batch(p, n->in[i]) && demand(p, n->in[i], 0, n))
				return NO;
		return shape_math(p, n);
	}
	/* constants read as data keep their bytes; shape rules demand their own */
	int rc = rule_carrier(p, n);
	if (rc)
		return rc;
	for (int i = 0; i < n->n_in; i++) {
		int v = n->in[i];
		if (v >= 0 && direct_constant(p, v) && !p->demanded[v] && demand(p, v, 0, n))
			return NO;
	}
	return OK;
}

/* --- inputs --------------------------------------------------------------------------- */

static int pick_inputs(plan *p, const pn_model *m)
{
	const pn_graph *g = p->g;
	int64_t batch = -1;
	const char *first = NULL;
	for (int i = 0; i < g->n_inputs; i++) {
		const pn_value *val = &g->values[g->inputs[i]];
		const pn_type *t = &val->type;
		if (t->kind != PN_KIND_TENSOR)
			return refuse(p, "input '%s' is not a tensor", val->name);
		if (t->rank < 0)
			return refuse(p, "input '%s' has an unknown rank", val->name);
		for (int d = 0; d < t->rank; d++)
			if (t->dims[d] < 0 || t->dim_names[d])
				return refuse(p, "has symbolic dims: bound, not generalized (input '%s')",
					      val->name);
		if (t->rank < 2)
			continue;
		if (batch >= 0 && t->dims[0] != batch)
			return refuse(p, "inputs '%s' and '%s' disagree on dim 0 (%lld, %lld)", first,
				      val->name, (long long)batch, (long long)t->dims[0]);
		batch = t->dims[0];
		first = first ? first : val->name;
		p->carrier_input[i] = 1;
	}
	(void)m;
	if (batch < 0)
		return refuse(p, "no input has a batch dim (rank >= 2)");
	if (batch != 1)
		return refuse(p, "input '%s' fixes dim 0 at %lld, not a batch of 1", first,
			      (long long)batch);
	p->base = batch;
	for (int i = 0; i < g->n_inputs; i++)
		if (p->carrier_input[i])
			p->v[g->inputs[i]] = at(0, 1);
	return OK;
}

static void plan_free(plan *p)
{
	pn_infer_result_free(&p->r);
	free(p->v);
	free(p->mask);
	free(p->demanded);
	free(p->carrier_input);
	memset(p, 0, sizeof *p);
}

static int analyze(const pn_model *m, plan *p, char *why)
{
	memset(p, 0, sizeof *p);
	const pn_graph *g = m->graph;
	p->g = g;
	p->why = why;
	int nv = g->n_values + 1;
	p->v = calloc((size_t)nv, sizeof(bval));
	p->mask = calloc((size_t)nv, sizeof(uint32_t));
	p->demanded = calloc((size_t)nv, 1);
	p->carrier_input = calloc((size_t)g->n_inputs + 1, 1);
	if (!p->v || !p->mask || !p->demanded || !p->carrier_input)
		return pn_fail(why, "out of memory");
	for (int v = 0; v < g->n_values; v++)
		p->v[v] = (bval){.ax = -1, .q = 1};
	int rc = pick_inputs(p, m);
	if (rc)
		return rc;
	char err[PN_ERRLEN];
	if (pn_infer_graph(g, &m->bind, NULL, &p->r, err))
		return refuse(p, "inference at the base batch fails: %s", err);
	for (int i = 0; i < g->n_nodes; i++)
		if ((rc = walk_node(p, &g->nodes[g->topo[i]])))
			return rc;
	return OK;
}

/* --- rewriting -------------------------------------------------------------------------- */

/* A copy of constant v's tensor with its masked elements times batch; the
 * copy and its bytes come from a (NULL: the heap). */
static pn_tensor *scaled(const pn_tensor *t, uint32_t mask, int64_t batch, pn_arena *a)
{
	pn_tensor *c = a ? pn_arena_alloc(a, sizeof *c) : malloc(sizeof *c);
	size_t nb = pn_tensor_nbytes(t);
	void *d = a ? pn_arena_alloc(a, nb ? nb : 1) : malloc(nb ? nb : 1);
	if (!c || !d) {
		if (!a)
			free(c), free(d);
		return NULL;
	}
	*c = *t;
	memcpy(d, t->data, nb);
	c->data = d;
	c->owns = 0;
	c->pooled = 0;
	for (int e = 0; e < LIN_MAX && e < t->numel; e++)
		if ((mask >> e) & 1u)
			pn_tensor_set_f64(c, e, (double)(pn_tensor_get_i64(t, e) * batch));
	return c;
}

/* The input types at `batch`. */
static pn_type *input_types(const plan *p, int64_t batch)
{
	const pn_graph *g = p->g;
	pn_type *t = calloc((size_t)g->n_inputs + 1, sizeof(pn_type));
	for (int i = 0; t && i < g->n_inputs; i++) {
		t[i] = g->values[g->inputs[i]].type;
		if (p->carrier_input[i])
			t[i].dims[0] = batch;
	}
	return t;
}

/* Inference of g (the rewritten graph) at `batch` must give every value
 * the plan's shape. */
static int check_shapes(plan *p, const pn_graph *g, int64_t batch)
{
	pn_type *types = input_types(p, batch);
	if (!types)
		return pn_fail(p->why, "out of memory");
	pn_infer_result r;
	char err[PN_ERRLEN];
	int rc = pn_infer_graph(g, NULL, types, &r, err);
	free(types);
	if (rc)
		return refuse(p, "inference at batch %lld fails: %s", (long long)batch, err);
	for (int v = 0; v < g->n_values && !rc; v++) {
		const pn_type *b = ty(p, v), *t = &r.v[v].type;
		if (b->kind != PN_KIND_TENSOR || !pn_type_is_static(b) || p->v[v].taint)
			continue;
		int same = t->rank == b->rank;
		for (int d = 0; same && d < b->rank; d++)
			same = t->dims[d] == b->dims[d] * (d == p->v[v].ax ? batch : 1);
		if (!same) {
			char x[128], y[128];
			pn_type want = *b;
			if (p->v[v].ax >= 0)
				want.dims[p->v[v].ax] *= batch;
			rc = refuse(p, "at batch %lld '%s' is %s, the plan expects %s", (long long)batch,
				    g->values[v].name, pn_type_desc(t, x, sizeof x),
				    pn_type_desc(&want, y, sizeof y));
		}
	}
	pn_infer_result_free(&r);
	return rc;
}

int pn_generalize_plan(const pn_model *m, int64_t *base, char *why)
{
	plan p;
	int rc = analyze(m, &p, why);
	if (rc) {
		plan_free(&p);
		return rc;
	}
	/* a view of the graph sharing its nodes, with rewritten constants */
	const pn_graph *g = m->graph;
	pn_graph view = *g;
	pn_value *vals = malloc(sizeof(pn_value) * (size_t)(g->n_values + 1));
	if (!vals) {
		plan_free(&p);
		return pn_fail(why, "out of memory");
	}
	memcpy(vals, g->values, sizeof(pn_value) * (size_t)g->n_values);
	view.values = vals;
	for (int v = 0; v < g->n_values && !rc; v++)
		if (p.mask[v] && !(vals[v].data = scaled(g->values[v].data, p.mask[v], PROBE_BATCH, NULL)))
			rc = pn_fail(why, "out of memory");
	if (!rc)
		rc = check_shapes(&p, &view, PROBE_BATCH);
	for (int v = 0; v < g->n_values; v++)
		if (p.mask[v] && vals[v].data)
			free(vals[v].data->data), free(vals[v].data);
	free(vals);
	if (!rc)
		*base = p.base;
	plan_free(&p);
	return rc;
}

/* A Constant node whose output was rewritten holds the same tensor in its
 * attribute, for whatever reads the node rather than the value. */
static void rewrite_constant_attr(pn_graph *g, int v)
{
	int pr = g->values[v].producer;
	if (pr < 0 || g->nodes[pr].op != PN_OP_Constant)
		return;
	pn_node *n = &g->nodes[pr];
	for (int i = 0; i < n->n_attr; i++)
		if (!strcmp(n->attrs[i].name, "value") && n->attrs[i].t)
			n->attrs[i].t = g->values[v].data;
}

static void retype(plan *p, pn_graph *g, int64_t batch)
{
	for (int i = 0; i < g->n_inputs; i++)
		if (p->carrier_input[i])
			g->values[g->inputs[i]].type.dims[0] = batch;
	for (int v = 0; v < g->n_values; v++) {
		pn_type *t = &g->values[v].type;
		int a = p->v[v].ax;
		if (g->values[v].role == PN_ROLE_INPUT || a < 0 || t->rank != ty(p, v)->rank)
			continue;
		t->dims[a] = ty(p, v)->dims[a] >= 0 ? ty(p, v)->dims[a] * batch : -1;
	}
}

int pn_generalize_batch(pn_model *m, int64_t batch, char *why)
{
	if (batch < 1)
		return pn_fail(why, "batch %lld is not positive", (long long)batch);
	plan p;
	int rc = analyze(m, &p, why);
	pn_graph *g = m->graph;
	for (int v = 0; !rc && v < g->n_values; v++) {
		if (!p.mask[v])
			continue;
		pn_tensor *t = scaled(g->values[v].data, p.mask[v], batch, &m->arena);
		if (!t)
			rc = pn_fail(why, "out of memory");
		else
			g->values[v].data = t, rewrite_constant_attr(g, v);
	}
	if (!rc)
		retype(&p, g, batch);
	if (!rc)
		rc = check_shapes(&p, g, batch);
	plan_free(&p);
	return rc;
}

/* --- one sample of a fixed batch ----------------------------------------------------- */

int64_t pn_fixed_batch(const pn_graph *g)
{
	int64_t batch = 0;
	for (int i = 0; i < g->n_inputs; i++) {
		const pn_type *t = &g->values[g->inputs[i]].type;
		if (t->kind != PN_KIND_TENSOR || t->rank < 0)
			return 0;
		if (t->rank < 2)
			continue;
		if (t->dims[0] < 1 || t->dim_names[0] || (batch && t->dims[0] != batch))
			return 0;
		batch = t->dims[0];
	}
	return batch;
}

/* The declared types of the values the plan says carry the batch, divided
 * back from `batch` samples to the one the plan was made at; a declared
 * dim that is not the plan's times batch is left to inference. */
static void untype(plan *p, pn_graph *g, int64_t batch)
{
	for (int v = 0; v < g->n_values; v++) {
		pn_type *t = &g->values[v].type;
		int a = p->v[v].ax;
		if (g->values[v].role == PN_ROLE_INPUT || a < 0 || t->rank != ty(p, v)->rank)
			continue;
		if (ty(p, v)->dims[a] >= 0 && t->dims[a] == ty(p, v)->dims[a] * batch)
			t->dims[a] = ty(p, v)->dims[a];
	}
}

int pn_generalize_one(pn_model *m, int64_t *batch, char *why)
{
	pn_graph *g = m->graph;
	int64_t b = pn_fixed_batch(g);
	if (b < 2) {
		pn_fail(why, "no fixed batch above 1 at dim 0 of the inputs");
		return NO;
	}
	for (int i = 0; i < g->n_inputs; i++)
		if (g->values[g->inputs[i]].type.rank >= 2)
			g->values[g->inputs[i]].type.dims[0] = 1;
	plan p;
	int rc = analyze(m, &p, why);
	for (int v = 0; !rc && v < g->n_values; v++)
		if (p.mask[v] || p.v[v].taint)
			rc = refuse(&p, "'%s' %s the batch", g->values[v].name,
				    p.mask[v] ? "is a constant that counts" : "is computed from");
	if (!rc)
		untype(&p, g, b);
	/* m at b is then m as it was: the constants are its own */
	if (!rc)
		rc = check_shapes(&p, g, b);
	plan_free(&p);
	if (!rc)
		*batch = b;
	return rc;
}

/* --- batch independence --------------------------------------------------------------- */

typedef struct indep {
	plan p;
	int n_in, n_out;
	int64_t batch;
	pn_tensor ***samples;     /* [sample][input] */
	pn_tensor **batched;      /* [input] */
	pn_tensor **gen_out;      /* [output] */
	pn_tensor **one_out;      /* [output] of the current sample */
} indep;

static uint64_t sample_seed(uint64_t seed, int64_t s)
{
	return seed + (uint64_t)s * 0x9E3779B97F4A7C15ull;
}

/* The batch's inputs: one per sample of each carrier, stacked on axis 0;
 * the others are the same for every sample. */
static int make_inputs(indep *x, const pn_model *base, uint64_t seed, char *why)
{
	const pn_graph *g = base->graph;
	for (int64_t s = 0; s < x->batch; s++)
		for (int i = 0; i < x->n_in; i++) {
			const pn_type *t = &g->values[g->inputs[i]].type;
			uint64_t sd = x->p.carrier_input[i] ? sample_seed(seed, s) : seed;
			if (!(x->samples[s][i] = pn_input_for(g, i, t, sd, NULL, why)))
				return ERR;
		}
	for (int i = 0; i < x->n_in; i++) {
		const pn_tensor *t0 = x->samples[0][i];
		if (!x->p.carrier_input[i]) {
			if (!(x->batched[i] = pn_tensor_clone(t0)))
				return pn_fail(why, "out of memory");
			continue;
		}
		if (t0->dtype == PN_STRING)
			return pn_fail(why, "input '%s' holds strings", g->values[g->inputs[i]].name);
		int64_t dims[PN_MAX_RANK];
		memcpy(dims, t0->dims, sizeof dims);
		dims[0] = x->batch;
		pn_tensor *b = pn_tensor_new(t0->dtype, t0->rank, dims);
		if (!b)
			return pn_fail(why, "out of memory");
		x->batched[i] = b;
		size_t one = pn_tensor_nbytes(t0);
		for (int64_t s = 0; s < x->batch; s++)
			memcpy((char *)b->data + one * (size_t)s, x->samples[s][i]->data, one);
	}
	return OK;
}

/* Sample s of batched output t along (ax, q), shaped like the base's. */
static pn_tensor *sample_of(const pn_tensor *t, int ax, int64_t q, int64_t batch, int64_t s)
{
	int64_t dims[PN_MAX_RANK];
	memcpy(dims, t->dims, sizeof dims);
	dims[ax] /= batch;
	pn_tensor *o = pn_tensor_new(t->dtype, t->rank, dims);
	if (!o)
		return NULL;
	size_t es = pn_dtype_size(t->dtype);
	int64_t outer = prod(t->dims, 0, ax) * (dims[ax] / q), inner = prod(t->dims, ax + 1, t->rank);
	size_t run = (size_t)(q * inner) * es;
	for (int64_t i = 0; i < outer; i++)
		memcpy((char *)o->data + (size_t)i * run,
		       (const char *)t->data + ((size_t)(i * batch + s)) * run, run);
	return o;
}

static int compare_sample(indep *x, const pn_graph *g, int64_t s, double rtol, double atol,
			  char *why)
{
	for (int k = 0; k < x->n_out; k++) {
		int v = g->outputs[k];
		const pn_tensor *got = x->gen_out[k], *want = x->one_out[k];
		const char *name = g->values[v].name;
		if (got->kind != PN_KIND_TENSOR || want->kind != PN_KIND_TENSOR)
			return pn_fail(why, "output '%s' is not a tensor", name);
		int ax = x->p.v[v].ax;
		pn_tensor *cut = NULL;
		if (ax >= 0) {
			if (got->rank != want->rank || got->dims[ax] != want->dims[ax] * x->batch ||
			    want->dims[ax] % x->p.v[v].q)
				return refuse(&x->p, "output '%s' has no batch of %lld on axis %d", name,
					      (long long)x->batch, ax);
			if (!(cut = sample_of(got, ax, x->p.v[v].q, x->batch, s)))
				return pn_fail(why, "out of memory");
		}
		int exact = !pn_dtype_is_float(want->dtype);
		pn_cmp c;
		pn_compare(cut ? cut : got, want, exact ? 0 : rtol, exact ? 0 : atol, &c);
		pn_tensor_free(cut);
		if (c.cls != PN_CMP_OK)
			return refuse(&x->p, "output '%s' sample %lld differs from its batch-1 run: max |diff| %g (%s)",
				      name, (long long)s, c.max_abs, c.what);
	}
	return OK;
}

static void indep_free(indep *x)
{
	for (int64_t s = 0; x->samples && s < x->batch; s++) {
		for (int i = 0; x->samples[s] && i < x->n_in; i++)
			pn_tensor_free(x->samples[s][i]);
		free(x->samples[s]);
	}
	free(x->samples);
	for (int i = 0; x->batched && i < x->n_in; i++)
		pn_tensor_free(x->batched[i]);
	free(x->batched);
	for (int k = 0; k < x->n_out; k++) {
		if (x->gen_out)
			pn_tensor_free(x->gen_out[k]);
		if (x->one_out)
			pn_tensor_free(x->one_out[k]);
	}
	free(x->gen_out);
	free(x->one_out);
	plan_free(&x->p);
}

static int run_all(indep *x, const pn_model *base, const pn_model *gen, uint64_t seed, double rtol,
		   double atol, const pn_indep_memory *memory, char *why)
{
	pn_exec_opts eo = {.seed = seed, .threads = 1};
	pn_session *sg = NULL, *sb = NULL;
	/* the batched run and a sample's run, each session with its weights */
	size_t one = pn_infer_peak_bytes(base->graph, &x->p.r);
	size_t copies = (size_t)(x->batch + 1);
	size_t bytes = one > SIZE_MAX / copies ? SIZE_MAX : one * copies;
	if (pn_run_too_big(bytes, why))
		return NO;    /* unchecked, so not generalized */
	if (memory && memory->known(memory->ud))
		return OK;    /* its form ran before: the same runs, the same verdict */
	size_t counted = pn_run_gate_enter(bytes);
	int rc = make_inputs(x, base, seed, why);
	if (!rc && (pn_session_new(gen->graph, &eo, &sg, why) ||
		    pn_session_run(sg, x->batched, x->n_in, x->gen_out, why)))
		rc = ERR;
	if (!rc && pn_session_new(base->graph, &eo, &sb, why))
		rc = ERR;
	for (int64_t s = 0; !rc && s < x->batch; s++) {
		if (pn_session_run(sb, x->samples[s], x->n_in, x->one_out, why))
			rc = ERR;
		else
			rc = compare_sample(x, base->graph, s, rtol, atol, why);
		for (int k = 0; k < x->n_out; k++) {
			pn_tensor_free(x->one_out[k]);
			x->one_out[k] = NULL;
		}
	}
	pn_session_free(sg);
	pn_session_free(sb);
	pn_run_gate_leave(counted);
	if (rc == OK && memory && memory->learn(memory->ud))
		rc = pn_fail(why, "out of memory");
	return rc;
}

int pn_batch_independent(const pn_model *base, const pn_model *gen, int64_t batch, uint64_t seed,
			 double rtol, double atol, const pn_indep_memory *memory, char *why)
{
	if (batch < 2)
		return pn_fail(why, "batch %lld: independence needs at least 2 samples", (long long)batch);
	if (gen->graph->n_inputs != base->graph->n_inputs ||
	    gen->graph->n_outputs != base->graph->n_outputs)
		return pn_fail(why, "the generalized model's inputs or outputs differ from the base's");
	indep x;
	memset(&x, 0, sizeof x);
	int rc = analyze(base, &x.p, why);
	if (rc) {
		plan_free(&x.p);
		if (rc > 0) {
			char was[PN_ERRLEN];
			snprintf(was, sizeof was, "%s", why);
			pn_fail(why, "the base cannot be generalized: %.400s", was);
		}
		return ERR;
	}
	x.n_in = base->graph->n_inputs;
	x.n_out = base->graph->n_outputs;
	x.batch = batch;
	x.samples = calloc((size_t)batch, sizeof(pn_tensor **));
	x.batched = calloc((size_t)x.n_in + 1, sizeof(pn_tensor *));
	x.gen_out = calloc((size_t)x.n_out + 1, sizeof(pn_tensor *));
	x.one_out = calloc((size_t)x.n_out + 1, sizeof(pn_tensor *));
	rc = x.samples && x.batched && x.gen_out && x.one_out ? OK : pn_fail(why, "out of memory");
	for (int64_t s = 0; !rc && s < batch; s++)
		if (!(x.samples[s] = calloc((size_t)x.n_in + 1, sizeof(pn_tensor *))))
			rc = pn_fail(why, "out of memory");
	if (!rc)
		rc = run_all(&x, base, gen, seed, rtol, atol, memory, why);
	indep_free(&x);
	return rc;
}
