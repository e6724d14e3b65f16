/*
 * infer_util.c - helpers for inference functions, and the inference of the
 * op families that share one rule (same shape as input 0, numpy broadcast).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "runtime/infer.h"

int pn_ifail(pn_ictx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pn_vfail(c->err, fmt, ap);
	va_end(ap);
	return -1;
}

const pn_tinfo *pn_iin(const pn_ictx *c, int i)
{
	return i >= 0 && i < c->n_in ? c->in[i] : NULL;
}

void pn_iset(pn_ictx *c, int i, int dtype, int rank, const int64_t *dims)
{
	if (i >= c->n_out)
		return;
	pn_type *t = &c->out[i].type;
	memset(t, 0, sizeof(*t));
	t->kind = PN_KIND_TENSOR;
	t->dtype = dtype;
	t->rank = rank;
	for (int d = 0; d < rank && d < PN_MAX_RANK; d++)
		t->dims[d] = dims ? dims[d] : -1;
}

void pn_iset_like(pn_ictx *c, int i, int j, int dtype)
{
	const pn_tinfo *src = pn_iin(c, j);
	if (i >= c->n_out)
		return;
	if (!src) {
		pn_iset(c, i, dtype, -1, NULL);
		return;
	}
	c->out[i].type = src->type;
	for (int d = 0; d < PN_MAX_RANK; d++)
		c->out[i].type.dim_names[d] = NULL;
	if (dtype)
		c->out[i].type.dtype = dtype;
}

int pn_iints(const pn_ictx *c, int i, int64_t *out, int max)
{
	const pn_tinfo *t = pn_iin(c, i);
	if (!t || !t->value || !t->value->data || t->value->rank > 1)
		return -1;
	const pn_tensor *v = t->value;
	if (!pn_dtype_is_int(v->dtype))
		return -1;
	int n = (int)v->numel;
	for (int k = 0; k < n && k < max; k++)
		out[k] = pn_tensor_get_i64(v, k);
	return n;
}

int pn_axis(int64_t axis, int rank)
{
	if (axis < -rank || axis >= rank)
		return -1;
	return (int)(axis < 0 ? axis + rank : axis);
}

int pn_bcast_shape(pn_ictx *c, const pn_type *a, const pn_type *b, pn_type *out)
{
	memset(out, 0, sizeof(*out));
	out->kind = PN_KIND_TENSOR;
	out->dtype = a->dtype;
	if (a->rank < 0 || b->rank < 0) {
		out->rank = -1;
		return 0;
	}
	int r = a->rank > b->rank ? a->rank : b->rank;
	out->rank = r;
	for (int i = 0; i < r; i++) {
		int ia = i - (r - a->rank), ib = i - (r - b->rank);
		int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
		int64_t d;
		if (da == 1)
			d = db;
		else if (db == 1)
			d = da;
		else if (da < 0 || db < 0)
			d = da < 0 ? db : da;   /* the known side decides (or both unknown) */
		else if (da == db)
			d = da;
		else
			return pn_ifail(c, "shapes cannot broadcast: dim %d is %lld vs %lld", i,
					(long long)da, (long long)db);
		out->dims[i] = d;
	}
	return 0;
}

/* --- shared inference rules (named in ops.def) ------------------------------- */

/* Output 0 is input 0: elementwise ops, activations, layout-preserving ops. */
int pn_infer_unary(pn_ictx *c)
{
	pn_iset_like(c, 0, 0, 0);
	return 0;
}

int pn_infer_unary_bool(pn_ictx *c)
{
	pn_iset_like(c, 0, 0, PN_BOOL);
	return 0;
}

/* Numpy broadcast over every present input; dtype of input 0. */
int pn_infer_bcast(pn_ictx *c)
{
	/* Before opset 7, B broadcasts onto A only with broadcast=1 (aligned at
	 * `axis`, not numpy-style): the output is A's type. */
	if (c->opset < 7 && c->n_in == 2 && pn_attr_int(c->node, "broadcast", 0)) {
		pn_iset_like(c, 0, 0, 0);
		return 0;
	}
	const pn_tinfo *first = NULL;
	pn_type acc;
	for (int i = 0; i < c->n_in; i++) {
		const pn_tinfo *t = pn_iin(c, i);
		if (!t)
			continue;
		if (!first) {
			first = t;
			acc = t->type;
			continue;
		}
		/* Every input shares the type T (Pow's exponent aside): refused
		 * here, mixed types would give the output the type of whichever
		 * input comes first, and commutative ops' canonical form reorders
		 * their inputs, so a subgraph's decoded graph would hash to
		 * another key (and kernels would read one type as another). */
		if (c->node->op != PN_OP_Pow && acc.dtype && t->type.dtype && acc.dtype != t->type.dtype)
			return pn_ifail(c, "input %d is %s, the first %s: the types must agree", i,
					pn_dtype_name(t->type.dtype), pn_dtype_name(acc.dtype));
		pn_type next;
		if (pn_bcast_shape(c, &acc, &t->type, &next))
			return -1;
		next.dtype = acc.dtype;
		acc = next;
	}
	if (!first) {
		pn_iset(c, 0, PN_UNDEFINED, -1, NULL);
		return 0;
	}
	for (int d = 0; d < PN_MAX_RANK; d++)
		acc.dim_names[d] = NULL;
	acc.kind = PN_KIND_TENSOR;
	c->out[0].type = acc;
	return 0;
}

int pn_infer_bcast_bool(pn_ictx *c)
{
	if (pn_infer_bcast(c))
		return -1;
	c->out[0].type.dtype = PN_BOOL;
	return 0;
}

/* Training ops and the like: nothing is inferred. */
int pn_infer_none(pn_ictx *c)
{
	for (int i = 0; i < c->n_out; i++)
		pn_iset(c, i, PN_UNDEFINED, -1, NULL);
	return 0;
}

/* --- the memory a run holds ---------------------------------------------------------- */

/* The bytes of a value of type t; 0 when a dim is not known before the run
 * (after NonZero or an NMS). */
static size_t type_bytes(const pn_type *t)
{
	if (t->kind != PN_KIND_TENSOR || t->rank < 0 || !pn_type_is_static(t))
		return 0;
	int64_t n = pn_numel(t->rank, t->dims);
	return n > 0 ? (size_t)n * pn_dtype_size(t->dtype) : 0;
}

static size_t add_sat(size_t a, size_t b)
{
	return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

size_t pn_infer_weight_bytes(const pn_graph *g)
{
	size_t weights = 0;
	for (int i = 0; i < g->n_inits; i++)
		weights = add_sat(weights, type_bytes(&g->values[g->inits[i]].type));
	return weights;
}

size_t pn_infer_peak_bytes(const pn_graph *g, const pn_infer_result *r)
{
	size_t weights = pn_infer_weight_bytes(g);
	/* last[v]: the step after which nothing reads v (-1: never read) */
	int32_t *last = malloc(sizeof(int32_t) * ((size_t)g->n_values + 1));
	if (!last || !g->topo) {
		free(last);
		return weights;
	}
	for (int v = 0; v < g->n_values; v++)
		last[v] = g->values[v].is_output ? g->n_nodes : -1;
	for (int s = 0; s < g->n_nodes; s++) {
		const pn_node *n = &g->nodes[g->topo[s]];
		for (int k = 0; k < n->n_in + n->n_implicit; k++) {
			int v = k < n->n_in ? n->in[k] : n->implicit[k - n->n_in];
			if (v >= 0 && last[v] < s)
				last[v] = s;
		}
	}
	/* freed[s]: bytes whose last reader is step s */
	size_t *freed = calloc((size_t)g->n_nodes + 1, sizeof(size_t));
	size_t live = 0, peak = 0;
	for (int i = 0; freed && i < g->n_inputs; i++)
		live = add_sat(live, type_bytes(&r->v[g->inputs[i]].type));
	for (int s = 0; freed && s < g->n_nodes; s++) {
		const pn_node *n = &g->nodes[g->topo[s]];
		for (int k = 0; k < n->n_out; k++) {
			int v = n->out[k];
			if (v < 0 || g->values[v].data)
				continue;
			size_t b = type_bytes(&r->v[v].type);
			live += b;
			if (last[v] < 0)
				freed[s] += b;   /* read by no one: dropped after its step */
			else if (last[v] < g->n_nodes)
				freed[last[v]] += b;
		}
		peak = live > peak ? live : peak;
		live -= freed[s] < live ? freed[s] : live;
	}
	free(freed);
	free(last);
	return add_sat(weights, peak);
}
