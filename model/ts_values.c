/*
 * ts_values.c - the values the TorchScript interpreter computes with
 * (ts_internal.h): constructors, numbers known now, a value as an ONNX
 * tensor (numbers and lists of runtime ints become Constants and Concats,
 * as torch.onnx makes them), and the rank hints graph inputs take from
 * their first use.
 */
#include <stdarg.h>
#include <string.h>

#include "common/err.h"
#include "model/ts_internal.h"

ts_graph *ts_cur(ts_ctx *c) { return c->cur; }
pn_arena *ts_arena(ts_ctx *c) { return c->a; }

int ts_err(ts_ctx *c, const char *fmt, ...)
{
	if (*c->err)
		return -1;   /* keep the innermost message */
	va_list ap;
	va_start(ap, fmt);
	pn_vfail(c->err, fmt, ap);
	va_end(ap);
	return -1;
}

ts_val *ts_new(ts_ctx *c, int kind)
{
	ts_val *v = pn_arena_alloc(c->a, sizeof(*v));
	if (!v) {
		ts_err(c, "out of memory");
		return NULL;
	}
	v->kind = (uint8_t)kind;
	v->rank = -1;
	for (int i = 0; i < PN_MAX_RANK; i++)
		v->dims[i] = -1;
	return v;
}

ts_val *ts_int(ts_ctx *c, int64_t x)
{
	ts_val *v = ts_new(c, TSV_INT);
	if (v)
		v->i = x;
	return v;
}

ts_val *ts_float(ts_ctx *c, double x)
{
	ts_val *v = ts_new(c, TSV_FLOAT);
	if (v)
		v->f = x;
	return v;
}

ts_val *ts_bool(ts_ctx *c, int x)
{
	ts_val *v = ts_new(c, TSV_BOOL);
	if (v)
		v->i = !!x;
	return v;
}

ts_val *ts_tensor(ts_ctx *c, const char *name, int dtype, int rank)
{
	if (!name) {
		ts_err(c, "out of memory");
		return NULL;
	}
	ts_val *v = ts_new(c, TSV_TENSOR);
	if (v) {
		v->name = name;
		v->dtype = dtype;
		v->rank = rank;
	}
	return v;
}

int ts_seq_push(ts_ctx *c, ts_val *s, ts_val *item)
{
	if (s->n == s->cap) {
		int nc = s->cap ? s->cap * 2 : 4;
		if (nc > (1 << 24))
			return ts_err(c, "a list of more than %d items", 1 << 24);
		ts_val **ni = pn_arena_alloc(c->a, sizeof(*ni) * (size_t)nc);
		if (!ni)
			return ts_err(c, "out of memory");
		if (s->n)
			memcpy(ni, s->items, sizeof(*ni) * (size_t)s->n);
		s->items = ni;
		s->cap = nc;
	}
	s->items[s->n++] = item;
	return 0;
}

ts_val *ts_seq(ts_ctx *c, int kind, int n)
{
	ts_val *v = ts_new(c, kind);
	if (!v)
		return NULL;
	if (n > 0) {
		v->items = pn_arena_alloc(c->a, sizeof(*v->items) * (size_t)n);
		if (!v->items) {
			ts_err(c, "out of memory");
			return NULL;
		}
		v->n = v->cap = n;
	}
	return v;
}

int ts_get_int(const ts_val *v, int64_t *out)
{
	if (!v || (v->kind != TSV_INT && v->kind != TSV_BOOL))
		return 0;
	*out = v->i;
	return 1;
}

int ts_get_float(const ts_val *v, double *out)
{
	if (!v)
		return 0;
	if (v->kind == TSV_FLOAT) {
		*out = v->f;
		return 1;
	}
	if (v->kind == TSV_INT || v->kind == TSV_BOOL) {
		*out = (double)v->i;
		return 1;
	}
	return 0;
}

int ts_get_ints(const ts_val *v, int64_t *out, int max, int rep)
{
	if (v && (v->kind == TSV_INT || v->kind == TSV_BOOL)) {
		for (int i = 0; i < rep && i < max; i++)
			out[i] = v->i;
		return rep;
	}
	if (!v || (v->kind != TSV_LIST && v->kind != TSV_TUPLE) || v->n > max)
		return -1;
	for (int i = 0; i < v->n; i++)
		if (!ts_get_int(v->items[i], &out[i]))
			return -1;
	return v->n;
}

int ts_dtype_from_scalar_type(int64_t st)
{
	switch (st) {
	case 0: return PN_UINT8;
	case 1: return PN_INT8;
	case 2: return PN_INT16;
	case 3: return PN_INT32;
	case 4: return PN_INT64;
	case 5: return PN_FLOAT16;
	case 6: return PN_FLOAT;
	case 7: return PN_DOUBLE;
	case 11: return PN_BOOL;
	case 15: return PN_BFLOAT16;
	default: return 0;
	}
}

const char *ts_as_tensor(ts_ctx *c, ts_val *v)
{
	if (!v) {
		ts_err(c, "a missing value where a tensor is needed");
		return NULL;
	}
	if (v->kind == TSV_TENSOR)
		return v->name;
	if (v->kind == TSV_INT || v->kind == TSV_BOOL) {
		pn_tensor t = {.dtype = v->kind == TSV_BOOL ? PN_BOOL : PN_INT64, .rank = 0, .numel = 1};
		int64_t x = v->i;
		uint8_t b = (uint8_t)v->i;
		t.data = v->kind == TSV_BOOL ? (void *)&b : (void *)&x;
		return ts_constant(c->cur, &t);
	}
	if (v->kind == TSV_FLOAT)
		return ts_constant_f32(c->cur, (float)v->f);
	if (v->kind == TSV_LIST || v->kind == TSV_TUPLE) {
		int64_t k[64];
		if (v->n <= 64 && ts_get_ints(v, k, 64, 0) == v->n)
			return ts_constant_i64(c->cur, k, v->n, 1);
		/* runtime ints: each unsqueezed to [1], then one Concat */
		const char **parts = pn_arena_alloc(c->a, sizeof(char *) * (size_t)(v->n + 1));
		if (!parts)
			return NULL;
		int64_t zero = 0;
		for (int i = 0; i < v->n; i++) {
			ts_val *it = v->items[i];
			int64_t x;
			if (ts_get_int(it, &x)) {
				parts[i] = ts_constant_i64(c->cur, &x, 1, 1);
			} else if (it && it->kind == TSV_TENSOR && it->rank == 0) {
				const char *in[2] = {it->name, ts_constant_i64(c->cur, &zero, 1, 1)};
				Onnx__NodeProto *n = ts_node(c->cur, "Unsqueeze", in, 2, 1);
				parts[i] = n ? n->output[0] : NULL;
			} else {
				ts_err(c, "a list item that is neither an int nor a scalar tensor");
				return NULL;
			}
			if (!parts[i])
				return NULL;
		}
		Onnx__NodeProto *n = ts_node(c->cur, "Concat", parts, v->n, 1);
		if (!n || ts_attr_int(c->cur, n, "axis", 0))
			return NULL;
		return n->output[0];
	}
	ts_err(c, "a value of kind %d where a tensor is needed", v->kind);
	return NULL;
}

void ts_hint_input(ts_ctx *c, ts_val *v, int rank, const int64_t *dims, const char *const *names)
{
	if (!v || v->kind != TSV_TENSOR || !v->input || v->rank >= 0 || rank < 0 || rank > PN_MAX_RANK)
		return;
	v->rank = rank;
	int k = v->input - 1;
	for (int i = 0; i < rank; i++) {
		v->dims[i] = dims ? dims[i] : -1;
		c->input_names[k][i] = names ? names[i] : NULL;
	}
}

void ts_unsupported(ts_ctx *c, const char *op)
{
	for (int i = 0; i < c->n_unsup; i++)
		if (!strcmp(c->unsupported[i], op))
			return;
	const char **nv = pn_arena_alloc(c->a, sizeof(char *) * (size_t)(c->n_unsup + 1));
	if (!nv)
		return;
	if (c->n_unsup)
		memcpy(nv, c->unsupported, sizeof(char *) * (size_t)c->n_unsup);
	nv[c->n_unsup++] = op;
	c->unsupported = nv;
}
