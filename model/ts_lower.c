/*
 * ts_lower.c - a TorchScript module lowered to one ONNX graph by running
 * its forward() over symbolic values.
 *
 * The interpreter walks the parsed code (ts_syntax.h) the way Python would,
 * except that tensors are names of ONNX values: a call of torch.* or ops.*
 * becomes nodes (ts_aten.c), a call of a submodule's method is run in
 * place, so its nodes land in the same graph (inlining), and everything
 * Python-level (ints, lists, the module tree, `if` on a constant, loops
 * over a known range) is computed now, as torch.jit.trace or torch.onnx
 * would have.  What depends on a tensor's value at run time becomes
 * control flow: an `if` on a tensor condition is an ONNX If whose branches
 * are lowered into its two bodies, and a `for` over range(n) with n known
 * only at run time is an ONNX Loop.
 *
 * Graph inputs are forward()'s parameters.  An archive says nothing of
 * their shapes, so a tensor input starts with an unknown rank, and the
 * first op that needs one gives it (a convolution: [batch, C, spatial...]
 * from its weight), with symbolic dims named so that extract's binding
 * rules recognise their roles (batch, height, width, sequence).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "model/torchscript.h"
#include "model/ts_internal.h"

/* --- frames ------------------------------------------------------------------------- */

ts_val **ts_lookup(ts_frame *f, const char *name)
{
	for (int i = f->n - 1; i >= 0; i--)
		if (!strcmp(f->names[i], name))
			return &f->vals[i];
	return NULL;
}

int ts_bind(ts_ctx *c, ts_frame *f, const char *name, ts_val *v)
{
	ts_val **slot = ts_lookup(f, name);
	if (slot) {
		*slot = v;
		return 0;
	}
	if (f->n == f->cap) {
		int nc = f->cap ? f->cap * 2 : 16;
		const char **nn = pn_arena_alloc(c->a, sizeof(char *) * (size_t)nc);
		ts_val **nv = pn_arena_alloc(c->a, sizeof(ts_val *) * (size_t)nc);
		if (!nn || !nv)
			return ts_err(c, "out of memory");
		if (f->n) {
			memcpy(nn, f->names, sizeof(char *) * (size_t)f->n);
			memcpy(nv, f->vals, sizeof(ts_val *) * (size_t)f->n);
		}
		f->names = nn;
		f->vals = nv;
		f->cap = nc;
	}
	f->names[f->n] = name;
	f->vals[f->n++] = v;
	return 0;
}

int ts_frame_copy(ts_ctx *c, const ts_frame *from, ts_frame *to)
{
	memset(to, 0, sizeof(*to));
	for (int i = 0; i < from->n; i++)
		if (ts_bind(c, to, from->names[i], from->vals[i]))
			return -1;
	return 0;
}

/* --- the module tree ---------------------------------------------------------------- */

static ts_val *memo_get(ts_ctx *c, const pn_pkl *k)
{
	for (int i = 0; i < c->n_memo; i++)
		if (c->memos[i].key == k)
			return c->memos[i].val;
	return NULL;
}

static int memo_put(ts_ctx *c, const pn_pkl *k, ts_val *v)
{
	if (c->n_memo == c->cap_memo) {
		int nc = c->cap_memo ? c->cap_memo * 2 : 64;
		ts_memo *nm = pn_arena_alloc(c->a, sizeof(*nm) * (size_t)nc);
		if (!nm)
			return ts_err(c, "out of memory");
		if (c->n_memo)
			memcpy(nm, c->memos, sizeof(*nm) * (size_t)c->n_memo);
		c->memos = nm;
		c->cap_memo = nc;
	}
	c->memos[c->n_memo++] = (ts_memo){k, v};
	return 0;
}

static const char *qual_of(ts_ctx *c, const pn_pkl *g)
{
	return pn_arena_printf(c->a, "%s.%s", g->module ? g->module : "", g->name ? g->name : "");
}

/* A pickled value as an interpreter value; path names weights. */
static ts_val *from_pickle(ts_ctx *c, const pn_pkl *p, const char *path, const char *folder)
{
	if (!p)
		return ts_new(c, TSV_NONE);
	ts_val *v = memo_get(c, p);
	if (v)
		return v;
	switch (p->kind) {
	case PN_PKL_NONE: return ts_new(c, TSV_NONE);
	case PN_PKL_BOOL: return ts_bool(c, (int)p->i);
	case PN_PKL_INT: return ts_int(c, p->i);
	case PN_PKL_FLOAT: return ts_float(c, p->f);
	case PN_PKL_STR:
		if ((v = ts_new(c, TSV_STR)))
			v->s = p->s;
		return v;
	case PN_PKL_TUPLE:
	case PN_PKL_LIST: {
		v = ts_seq(c, p->kind == PN_PKL_TUPLE ? TSV_TUPLE : TSV_LIST, p->n);
		for (int i = 0; v && i < p->n; i++) {
			const char *ip = pn_arena_printf(c->a, "%s.%d", path, i);
			if (!(v->items[i] = from_pickle(c, p->items[i], ip, folder)))
				return NULL;
		}
		return v;
	}
	case PN_PKL_OBJECT: {
		pn_tensor t;
		int rc = ts_archive_tensor(&c->ar, p, folder, &t, c->err);
		if (rc < 0)
			return NULL;
		if (rc == 0) {
			pn_tensor *tp = pn_arena_memdup(c->a, &t, sizeof(t));
			const char *name = pn_arena_strdup(c->a, *path ? path : "constant");
			if (!tp || !name || ts_initializer(&c->root, name, tp)) {
				ts_err(c, "out of memory");
				return NULL;
			}
			v = ts_tensor(c, name, t.dtype, t.rank);
			if (!v)
				return NULL;
			memcpy(v->dims, t.dims, sizeof(t.dims));
			v->data = tp;
			return memo_put(c, p, v) ? NULL : v;
		}
		if (p->fn && p->fn->kind == PN_PKL_GLOBAL && p->fn->module &&
		    !strncmp(p->fn->module, "__torch__", 9)) {
			const char *qual = qual_of(c, p->fn);
			const pn_ts_class *cls = ts_archive_class(&c->ar, qual, c->err);
			if (!cls) {
				ts_err(c, "class %s is not in the archive's code", qual);
				return NULL;
			}
			if (!(v = ts_new(c, TSV_MODULE)))
				return NULL;
			v->obj = p;
			v->cls = cls;
			v->path = path;
			return memo_put(c, p, v) ? NULL : v;
		}
		ts_err(c, "%s: a pickled %s.%s is not supported", *path ? path : "data.pkl",
		       p->fn && p->fn->module ? p->fn->module : "?", p->fn && p->fn->name ? p->fn->name : "?");
		return NULL;
	}
	default:
		ts_err(c, "%s: an unsupported pickled value (kind %d)", *path ? path : "data.pkl", p->kind);
		return NULL;
	}
}

/* The state dict of a pickled module (its BUILD state, or a dict it was
 * built with). */
static const pn_pkl *module_state(const ts_val *m)
{
	const pn_pkl *s = m->obj ? m->obj->state : NULL;
	return s && s->kind == PN_PKL_DICT ? s : NULL;
}

static const pn_ts_func *class_method(const pn_ts_class *cls, const char *name)
{
	for (int i = 0; cls && i < cls->n_methods; i++)
		if (!strcmp(cls->methods[i].name, name))
			return &cls->methods[i];
	return NULL;
}

static ts_val *eval(ts_ctx *c, ts_frame *f, const pn_ts_expr *e);

static ts_val *module_attr(ts_ctx *c, ts_frame *f, ts_val *m, const char *name)
{
	const pn_pkl *st = module_state(m);
	const pn_pkl *p = st ? pn_pkl_dict_get(st, name) : NULL;
	if (p) {
		const char *path = *m->path ? pn_arena_printf(c->a, "%s.%s", m->path, name)
					    : pn_arena_strdup(c->a, name);
		return path ? from_pickle(c, p, path, "data") : NULL;
	}
	for (int i = 0; i < m->cls->n_attrs; i++)
		if (!strcmp(m->cls->attrs[i].name, name) && m->cls->attrs[i].value)
			return eval(c, f, m->cls->attrs[i].value);
	if (class_method(m->cls, name)) {
		ts_val *v = ts_new(c, TSV_METHOD);
		if (v) {
			v->self = m;
			v->s = name;
		}
		return v;
	}
	ts_err(c, "%s has no attribute %s", m->cls->name, name);
	return NULL;
}

static ts_val *constant_attr(ts_ctx *c, const char *name)
{
	const pn_pkl *k = c->ar.constants;
	long idx;
	char *end;
	if (name[0] != 'c' || (idx = strtol(name + 1, &end, 10)) < 0 || *end || !k ||
	    k->kind != PN_PKL_TUPLE || idx >= k->n) {
		ts_err(c, "CONSTANTS.%s is not in constants.pkl", name);
		return NULL;
	}
	const char *path = pn_arena_printf(c->a, "CONSTANTS.%s", name);
	return path ? from_pickle(c, k->items[idx], path, "constants") : NULL;
}

/* --- expressions -------------------------------------------------------------------- */

static ts_val *call_func(ts_ctx *c, const pn_ts_func *fn, ts_val *self, ts_val **args, int n,
			 const char **kw, int n_kw);

int ts_truth(ts_val *v, int *out)
{
	if (!v)
		return -1;
	switch (v->kind) {
	case TSV_NONE: *out = 0; return 0;
	case TSV_BOOL:
	case TSV_INT: *out = v->i != 0; return 0;
	case TSV_FLOAT: *out = v->f != 0; return 0;
	case TSV_STR: *out = v->s && *v->s; return 0;
	case TSV_LIST:
	case TSV_TUPLE:
	case TSV_DICT: *out = v->n != 0; return 0;
	case TSV_TENSOR:
		if (v->data && v->data->numel == 1 && v->data->dtype == PN_BOOL) {
			*out = ((const uint8_t *)v->data->data)[0] != 0;
			return 0;
		}
		return 1;   /* known only at run time */
	default: *out = 1; return 0;
	}
}

static ts_val *arith(ts_ctx *c, const char *op, ts_val *a, ts_val *b);

ts_val *ts_py_binary(ts_ctx *c, const char *op, ts_val *a, ts_val *b)
{
	int64_t x = 0, y = 0;
	double p, q;
	int ints = ts_get_int(a, &x) && ts_get_int(b, &y);
	if (!ts_get_float(a, &p) || !ts_get_float(b, &q))
		return NULL;
	if (!strcmp(op, "+")) return ints ? ts_int(c, x + y) : ts_float(c, p + q);
	if (!strcmp(op, "-")) return ints ? ts_int(c, x - y) : ts_float(c, p - q);
	if (!strcmp(op, "*")) return ints ? ts_int(c, x * y) : ts_float(c, p * q);
	if (!strcmp(op, "/")) return q == 0 ? (ts_err(c, "division by zero"), NULL) : ts_float(c, p / q);
	if (!strcmp(op, "//")) {
		if (ints) {
			if (y == 0)
				return ts_err(c, "division by zero"), NULL;
			int64_t d = x / y;
			if ((x % y != 0) && ((x < 0) != (y < 0)))
				d--;
			return ts_int(c, d);
		}
		return q == 0 ? (ts_err(c, "division by zero"), NULL) : ts_float(c, floor(p / q));
	}
	if (!strcmp(op, "%")) {
		if (ints) {
			if (y == 0)
				return ts_err(c, "division by zero"), NULL;
			int64_t r = x % y;
			if (r && ((r < 0) != (y < 0)))
				r += y;
			return ts_int(c, r);
		}
		return ts_float(c, p - q * floor(p / q));
	}
	if (!strcmp(op, "**")) return ints && y >= 0 ? ts_int(c, (int64_t)pow((double)x, (double)y)) : ts_float(c, pow(p, q));
	if (!strcmp(op, "==")) return ts_bool(c, p == q);
	if (!strcmp(op, "!=")) return ts_bool(c, p != q);
	if (!strcmp(op, "<")) return ts_bool(c, p < q);
	if (!strcmp(op, "<=")) return ts_bool(c, p <= q);
	if (!strcmp(op, ">")) return ts_bool(c, p > q);
	if (!strcmp(op, ">=")) return ts_bool(c, p >= q);
	if (ints && !strcmp(op, "&")) return ts_int(c, x & y);
	if (ints && !strcmp(op, "|")) return ts_int(c, x | y);
	return NULL;
}

/* a op b where either is a tensor (or a runtime scalar): the aten op. */
static ts_val *arith(ts_ctx *c, const char *op, ts_val *a, ts_val *b)
{
	static const struct {
		const char *op, *aten;
	} ops[] = {
		{"+", "aten::add"}, {"-", "aten::sub"}, {"*", "aten::mul"}, {"/", "aten::div"},
		{"//", "aten::floordiv"}, {"%", "aten::remainder"}, {"**", "aten::pow"},
		{"==", "aten::eq"}, {"!=", "aten::ne"}, {"<", "aten::lt"}, {"<=", "aten::le"},
		{">", "aten::gt"}, {">=", "aten::ge"}, {"@", "aten::matmul"}, {"&", "aten::bitwise_and"},
		{"|", "aten::bitwise_or"},
	};
	for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
		if (!strcmp(ops[i].op, op)) {
			const ts_aten *t = ts_aten_find(ops[i].aten);
			ts_val *args[2] = {a, b}, *out = NULL;
			if (!t)
				break;
			return t->fn(c, args, 2, &out) ? NULL : out;
		}
	ts_err(c, "operator %s on tensors is not supported", op);
	return NULL;
}

static ts_val *binary(ts_ctx *c, const char *op, ts_val *a, ts_val *b)
{
	if (!a || !b)
		return NULL;
	if (a->kind == TSV_TENSOR || b->kind == TSV_TENSOR)
		return arith(c, op, a, b);
	if ((a->kind == TSV_LIST || a->kind == TSV_TUPLE) && a->kind == b->kind && !strcmp(op, "+")) {
		ts_val *v = ts_seq(c, a->kind, 0);
		for (int i = 0; v && i < a->n + b->n; i++)
			if (ts_seq_push(c, v, i < a->n ? a->items[i] : b->items[i - a->n]))
				return NULL;
		return v;
	}
	if (a->kind == TSV_STR && b->kind == TSV_STR && (!strcmp(op, "==") || !strcmp(op, "!=")))
		return ts_bool(c, !strcmp(a->s, b->s) == !strcmp(op, "=="));
	ts_val *v = ts_py_binary(c, op, a, b);
	if (!v && !*c->err)
		ts_err(c, "operator %s on values of kinds %d and %d", op, a->kind, b->kind);
	return v;
}

static ts_val *compare(ts_ctx *c, const char *op, ts_val *a, ts_val *b)
{
	if (!a || !b)
		return NULL;
	if (!strcmp(op, "is") || !strcmp(op, "is not")) {
		int same = a->kind == b->kind && (a->kind == TSV_NONE || a == b);
		return ts_bool(c, same == !strcmp(op, "is"));
	}
	if (!strcmp(op, "in") || !strcmp(op, "not in")) {
		if (b->kind != TSV_LIST && b->kind != TSV_TUPLE)
			return ts_err(c, "`in` on a value of kind %d", b->kind), NULL;
		int found = 0;
		for (int i = 0; i < b->n && !found; i++) {
			ts_val *eq = binary(c, "==", a, b->items[i]);
			if (!eq || eq->kind != TSV_BOOL)
				return NULL;
			found = (int)eq->i;
		}
		return ts_bool(c, found == !strcmp(op, "in"));
	}
	return binary(c, op, a, b);
}

static ts_val *subscript(ts_ctx *c, ts_val *a, ts_val *idx)
{
	if (!a || !idx)
		return NULL;
	int64_t k;
	if ((a->kind == TSV_LIST || a->kind == TSV_TUPLE) && ts_get_int(idx, &k)) {
		if (k < 0)
			k += a->n;
		if (k < 0 || k >= a->n)
			return ts_err(c, "index %lld out of range", (long long)k), NULL;
		return a->items[k];
	}
	if (a->kind == TSV_DICT && idx->kind == TSV_STR) {
		for (int i = 0; i < a->n; i++)
			if (a->items[2 * i]->kind == TSV_STR && !strcmp(a->items[2 * i]->s, idx->s))
				return a->items[2 * i + 1];
		return ts_err(c, "key %s not in dict", idx->s), NULL;
	}
	if (a->kind == TSV_QUAL)   /* a type: List[int], Optional[Tensor] */
		return a;
	if (a->kind == TSV_TENSOR) {
		const ts_aten *t = ts_aten_find("aten::index_value");
		ts_val *args[2] = {a, idx}, *out = NULL;
		return t && !t->fn(c, args, 2, &out) ? out : NULL;
	}
	ts_err(c, "subscript of a value of kind %d", a->kind);
	return NULL;
}

/* Python's range() over known ints, as a list. */
ts_val *ts_range_list(ts_ctx *c, ts_val **args, int n)
{
	int64_t a[3] = {0, 0, 1}, v;
	if (n < 1 || n > 3)
		return ts_err(c, "range() with %d arguments", n), NULL;
	for (int i = 0; i < n; i++)
		if (!ts_get_int(args[i], &v))
			return NULL;   /* runtime: the caller lowers a Loop */
	if (n == 1)
		ts_get_int(args[0], &a[1]);
	else
		for (int i = 0; i < n; i++)
			ts_get_int(args[i], &a[i]);
	if (a[2] == 0)
		return ts_err(c, "range() step 0"), NULL;
	ts_val *l = ts_seq(c, TSV_LIST, 0);
	int count = 0;
	for (int64_t x = a[0]; l && (a[2] > 0 ? x < a[1] : x > a[1]); x += a[2]) {
		if (++count > TS_LIMIT_UNROLL)
			return ts_err(c, "range() of more than %d steps", TS_LIMIT_UNROLL), NULL;
		if (ts_seq_push(c, l, ts_int(c, x)))
			return NULL;
	}
	return l;
}

/* The builtins TorchScript's printer writes as plain names. */
/* The torch.* and ops.prim.* calls scripted code makes on Python values
 * (None checks, list lengths, casts of Optionals, exceptions): computed
 * now, never nodes.  1 when name is one, *out its result. */
static int script_builtin(ts_ctx *c, const char *name, ts_val **args, int n, ts_val **out)
{
	if ((!strcmp(name, "torch.__is__") || !strcmp(name, "torch.__isnot__")) && n == 2) {
		int same = args[0]->kind == args[1]->kind && (args[0]->kind == TSV_NONE || args[0] == args[1]);
		*out = ts_bool(c, same == !strcmp(name, "torch.__is__"));
		return 1;
	}
	if (!strcmp(name, "torch.__not__") && n == 1) {
		int t;
		*out = ts_truth(args[0], &t) ? NULL : ts_bool(c, !t);
		if (!*out)
			ts_err(c, "not of a value known only at run time");
		return 1;
	}
	if ((!strcmp(name, "unchecked_cast") || !strcmp(name, "ops.prim.unchecked_unwrap_optional") ||
	     !strcmp(name, "ops.prim.unchecked_cast")) && n >= 1) {
		*out = args[n - 1];
		return 1;
	}
	if (!strcmp(name, "torch.len") && n == 1) {
		ts_val *a = args[0];
		if (a->kind == TSV_TENSOR && a->rank >= 1 && a->dims[0] >= 0 && !a->input)
			*out = ts_int(c, a->dims[0]);
		else if (a->kind == TSV_LIST || a->kind == TSV_TUPLE || a->kind == TSV_DICT)
			*out = ts_int(c, a->n);
		else
			*out = NULL, ts_err(c, "len() of a value of unknown length");
		return 1;
	}
	if (!strcmp(name, "torch.dim") && n == 1) {
		if (args[0]->kind == TSV_TENSOR && args[0]->rank >= 0)
			*out = ts_int(c, args[0]->rank);
		else
			*out = NULL, ts_err(c, "dim() of a tensor of unknown rank");
		return 1;
	}
	if (!strcmp(name, "ops.prim.RaiseException")) {
		*out = NULL;
		ts_err(c, "the model raises %s", n && args[0]->kind == TSV_STR ? args[0]->s : "an exception");
		return 1;
	}
	if (!strcmp(name, "torch.format") || !strcmp(name, "torch.str")) {
		*out = ts_new(c, TSV_STR);
		if (*out)
			(*out)->s = n && args[0]->kind == TSV_STR ? args[0]->s : "";
		return 1;
	}
	if (!strcmp(name, "torch.warn") || !strcmp(name, "torch._assert") || !strcmp(name, "print")) {
		*out = ts_new(c, TSV_NONE);
		return 1;
	}
	if (!strcmp(name, "torch.list") && n == 1 && (args[0]->kind == TSV_LIST || args[0]->kind == TSV_TUPLE)) {
		ts_val *l = ts_seq(c, TSV_LIST, args[0]->n);
		for (int i = 0; l && i < args[0]->n; i++)
			l->items[i] = args[0]->items[i];
		*out = l;
		return 1;
	}
	if (!strcmp(name, "torch.append") && n == 2 && args[0]->kind == TSV_LIST) {
		*out = ts_seq_push(c, args[0], args[1]) ? NULL : args[0];
		return 1;
	}
	if (!strcmp(name, "torch.jit.is_scripting") || !strcmp(name, "torch.jit.is_tracing")) {
		*out = ts_bool(c, name[10] == 's');
		return 1;
	}
	return 0;
}

static int builtin(ts_ctx *c, const char *name, ts_val **args, int n, ts_val **out)
{
	if (script_builtin(c, name, args, n, out))
		return 1;
	if (!strcmp(name, "annotate") && n == 2) {
		*out = args[1];
		return 1;
	}
	if (!strcmp(name, "uninitialized")) {
		*out = ts_new(c, TSV_NONE);
		return 1;
	}
	if ((!strcmp(name, "int") || !strcmp(name, "float") || !strcmp(name, "bool")) && n == 1) {
		ts_val *a = args[0];
		double f;
		int t;
		if (!strcmp(name, "bool") && !ts_truth(a, &t))
			*out = ts_bool(c, t);
		else if (ts_get_float(a, &f))
			*out = name[0] == 'i' ? ts_int(c, (int64_t)f) : name[0] == 'f' ? ts_float(c, f) : ts_bool(c, f != 0);
		else if (a && a->kind == TSV_TENSOR)
			*out = a;   /* a runtime scalar stays one */
		else
			*out = NULL;
		if (!*out && !*c->err)
			ts_err(c, "%s() of a value of kind %d", name, a ? a->kind : -1);
		return 1;
	}
	if (!strcmp(name, "len") && n == 1) {
		if (args[0] && (args[0]->kind == TSV_LIST || args[0]->kind == TSV_TUPLE || args[0]->kind == TSV_DICT))
			*out = ts_int(c, args[0]->n);
		else
			*out = NULL, ts_err(c, "len() of a value of kind %d", args[0] ? args[0]->kind : -1);
		return 1;
	}
	if (!strcmp(name, "range")) {
		*out = ts_range_list(c, args, n);
		if (!*out && !*c->err)
			ts_err(c, "range() over a value known only at run time outside a for loop");
		return 1;
	}
	if (!strcmp(name, "isinstance") || !strcmp(name, "hasattr")) {
		*out = ts_bool(c, 1);
		return 1;
	}
	if ((!strcmp(name, "min") || !strcmp(name, "max")) && n == 2) {
		ts_val *lt = binary(c, "<", args[0], args[1]);
		*out = lt && lt->kind == TSV_BOOL ? ((lt->i != 0) == (name[1] == 'i') ? args[0] : args[1]) : NULL;
		if (!*out && !*c->err)
			ts_err(c, "%s() of values known only at run time", name);
		return 1;
	}
	return 0;
}

/* Keyword arguments put in place by the aten table's parameter names. */
static int place_keywords(ts_ctx *c, const ts_aten *t, ts_val ***args, int *n, const char **kw,
			  ts_val **kwv, int n_kw)
{
	if (!n_kw)
		return 0;
	int max = *n;
	ts_val **v = pn_arena_alloc(c->a, sizeof(ts_val *) * 32);
	if (!v)
		return ts_err(c, "out of memory");
	memcpy(v, *args, sizeof(ts_val *) * (size_t)*n);
	for (int k = 0; k < n_kw; k++) {
		int pos = 0, found = -1;
		const char *p = t->params ? t->params : "";
		while (*p) {
			const char *e = strchr(p, ',');
			size_t l = e ? (size_t)(e - p) : strlen(p);
			if (l == strlen(kw[k]) && !strncmp(p, kw[k], l)) {
				found = pos;
				break;
			}
			pos++;
			p = e ? e + 1 : p + l;
		}
		if (found < 0 || found >= 32)
			return ts_err(c, "%s: unknown keyword %s", t->name, kw[k]);
		v[found] = kwv[k];
		if (found + 1 > max)
			max = found + 1;
	}
	*args = v;
	*n = max;
	return 0;
}

/* An op the table does not map: a node of domain "torch" named for it,
 * over the call's tensor arguments, so the model is kept and the
 * partition cuts around the node as it does around an unknown ONNX op. */
ts_val *ts_unknown_op(ts_ctx *c, const char *op, ts_val **args, int n)
{
	ts_unsupported(c, op);
	const char **in = pn_arena_alloc(c->a, sizeof(char *) * (size_t)(n + 1));
	int k = 0, dtype = PN_FLOAT;
	if (!in)
		return ts_err(c, "out of memory"), NULL;
	for (int i = 0; i < n; i++)
		if (args[i] && args[i]->kind == TSV_TENSOR) {
			if (!k && args[i]->dtype)
				dtype = args[i]->dtype;
			in[k++] = args[i]->name;
		}
	const char *type = strncmp(op, "aten::", 6) ? op : op + 6;
	Onnx__NodeProto *node = ts_node(c->cur, type, in, k, 1);
	if (!node)
		return ts_err(c, "out of memory"), NULL;
	node->domain = "torch";
	ts_val *v = ts_tensor(c, node->output[0], dtype, -1);
	if (v)
		v->node = node;
	return v;
}

/* A NamedTuple's constructor: a tuple that remembers its class, so that
 * its fields can be read by name. */
static ts_val *named_tuple(ts_ctx *c, const pn_ts_class *cls, ts_val **args, int n)
{
	if (n != cls->n_attrs)
		return ts_err(c, "%s takes %d fields, given %d", cls->name, cls->n_attrs, n), NULL;
	ts_val *t = ts_seq(c, TSV_TUPLE, n);
	if (!t)
		return NULL;
	memcpy(t->items, args, sizeof(ts_val *) * (size_t)n);
	t->cls = cls;
	return t;
}

static ts_val *call_qual(ts_ctx *c, const char *q, ts_val **args, int n, const char **kw, ts_val **kwv,
			 int n_kw)
{
	ts_val *out = NULL;
	if (!strncmp(q, "__torch__.", 10)) {
		const pn_ts_func *fn = ts_archive_func(&c->ar, q, c->err);
		if (fn)
			return call_func(c, fn, NULL, args, n, kw, n_kw);
		*c->err = 0;
		const pn_ts_class *cls = ts_archive_class(&c->ar, q, c->err);
		if (cls && cls->n_bases == 1 && !strcmp(cls->bases[0], "NamedTuple") && !n_kw)
			return named_tuple(c, cls, args, n);
		if (!*c->err)
			ts_err(c, "%s is not in the archive's code", q);
		return NULL;
	}
	if (!n_kw && builtin(c, q, args, n, &out))
		return out;
	if (!strcmp(q, "torch.device")) {
		return ts_new(c, TSV_DEVICE);
	}
	const char *aten = !strncmp(q, "torch.", 6) ? pn_arena_printf(c->a, "aten::%s", q + 6)
			   : !strncmp(q, "ops.", 4) ? pn_arena_printf(c->a, "%s", q + 4)
			   : pn_arena_printf(c->a, "aten::%s", q);
	const ts_aten *t = aten ? ts_aten_find(aten) : NULL;
	if (!t)
		return ts_unknown_op(c, aten ? aten : q, args, n);
	if (place_keywords(c, t, &args, &n, kw, kwv, n_kw))
		return NULL;
	if (t->fn(c, args, n, &out))
		return NULL;
	return out;
}

static ts_val *call(ts_ctx *c, ts_frame *f, const pn_ts_expr *e)
{
	ts_val *callee = eval(c, f, e->a);
	if (!callee)
		return NULL;
	int n = e->n_pos, n_kw = e->n - e->n_pos;
	ts_val **args = pn_arena_alloc(c->a, sizeof(ts_val *) * (size_t)(n + 1));
	ts_val **kwv = pn_arena_alloc(c->a, sizeof(ts_val *) * (size_t)(n_kw + 1));
	if (!args || !kwv)
		return ts_err(c, "out of memory"), NULL;
	for (int i = 0; i < e->n; i++) {
		ts_val *v = eval(c, f, e->args[i]);
		if (!v)
			return NULL;
		if (i < n)
			args[i] = v;
		else
			kwv[i - n] = v;
	}
	if (callee->kind == TSV_QUAL && !strcmp(callee->s, "getattr") && n == 2 && args[0]->kind == TSV_MODULE &&
	    args[1]->kind == TSV_STR)
		return module_attr(c, f, args[0], args[1]->s);
	if (callee->kind == TSV_QUAL)
		return call_qual(c, callee->s, args, n, e->kw_names, kwv, n_kw);
	if (callee->kind == TSV_METHOD && callee->self->kind == TSV_MODULE) {
		const pn_ts_func *fn = class_method(callee->self->cls, callee->s);
		return call_func(c, fn, callee->self, args, n, e->kw_names, n_kw);
	}
	if (callee->kind == TSV_METHOD && callee->self->kind == TSV_LIST && !strcmp(callee->s, "append") &&
	    n == 1) {
		return ts_seq_push(c, callee->self, args[0]) ? NULL : ts_new(c, TSV_NONE);
	}
	if (callee->kind == TSV_METHOD && callee->self->kind == TSV_TENSOR) {
		/* x.method(args) is torch.method(x, args) */
		ts_val **a2 = pn_arena_alloc(c->a, sizeof(ts_val *) * (size_t)(n + 2));
		if (!a2)
			return ts_err(c, "out of memory"), NULL;
		a2[0] = callee->self;
		memcpy(a2 + 1, args, sizeof(ts_val *) * (size_t)n);
		const char *q = pn_arena_printf(c->a, "torch.%s", callee->s);
		return q ? call_qual(c, q, a2, n + 1, e->kw_names, kwv, n_kw) : NULL;
	}
	ts_err(c, "line %d: a call of a value of kind %d", e->line, callee->kind);
	return NULL;
}

static ts_val *attribute(ts_ctx *c, ts_frame *f, const pn_ts_expr *e)
{
	ts_val *base = eval(c, f, e->a);
	if (!base)
		return NULL;
	if (base->kind == TSV_MODULE)
		return module_attr(c, f, base, e->s);
	if (base->kind == TSV_QUAL) {
		if (!strcmp(base->s, "CONSTANTS"))
			return constant_attr(c, e->s);
		ts_val *v = ts_new(c, TSV_QUAL);
		if (v && !(v->s = pn_arena_printf(c->a, "%s.%s", base->s, e->s)))
			return ts_err(c, "out of memory"), NULL;
		return v;
	}
	if (base->kind == TSV_TUPLE && base->cls) {
		for (int i = 0; i < base->cls->n_attrs && i < base->n; i++)
			if (!strcmp(base->cls->attrs[i].name, e->s))
				return base->items[i];
		return ts_err(c, "line %d: %s has no field %s", e->line, base->cls->name, e->s), NULL;
	}
	if (base->kind == TSV_TENSOR || base->kind == TSV_LIST) {
		if (base->kind == TSV_TENSOR && !strcmp(e->s, "dtype"))
			return ts_int(c, base->dtype == PN_FLOAT ? 6 : base->dtype == PN_INT64 ? 4 : 6);
		if (base->kind == TSV_TENSOR && !strcmp(e->s, "is_cuda"))
			return ts_bool(c, 0);
		ts_val *v = ts_new(c, TSV_METHOD);
		if (v) {
			v->self = base;
			v->s = e->s;
		}
		return v;
	}
	ts_err(c, "line %d: attribute %s of a value of kind %d", e->line, e->s, base->kind);
	return NULL;
}

static ts_val *eval_seq(ts_ctx *c, ts_frame *f, const pn_ts_expr *e, int kind)
{
	ts_val *v = ts_seq(c, kind, e->n);
	for (int i = 0; v && i < e->n; i++)
		if (!(v->items[i] = eval(c, f, e->args[i])))
			return NULL;
	if (v && kind == TSV_DICT)
		v->n = e->n / 2;
	return v;
}

ts_val *ts_eval(ts_ctx *c, ts_frame *f, const pn_ts_expr *e)
{
	return eval(c, f, e);
}

static ts_val *eval(ts_ctx *c, ts_frame *f, const pn_ts_expr *e)
{
	if (!e)
		return ts_err(c, "a missing expression"), NULL;
	if (*c->err)
		return NULL;
	switch (e->kind) {
	case PN_TSE_NAME: {
		ts_val **slot = ts_lookup(f, e->s);
		if (slot)
			return *slot;
		if (!strcmp(e->s, "inf"))
			return ts_float(c, INFINITY);
		if (!strcmp(e->s, "nan"))
			return ts_float(c, NAN);
		ts_val *v = ts_new(c, TSV_QUAL);
		if (v)
			v->s = e->s;
		return v;
	}
	case PN_TSE_INT: return ts_int(c, e->i);
	case PN_TSE_FLOAT: return ts_float(c, e->f);
	case PN_TSE_BOOL: return ts_bool(c, (int)e->i);
	case PN_TSE_NONE: return ts_new(c, TSV_NONE);
	case PN_TSE_STR: {
		ts_val *v = ts_new(c, TSV_STR);
		if (v)
			v->s = e->s;
		return v;
	}
	case PN_TSE_ATTR: return attribute(c, f, e);
	case PN_TSE_CALL: return call(c, f, e);
	case PN_TSE_SUBSCRIPT: return subscript(c, eval(c, f, e->a), eval(c, f, e->b));
	case PN_TSE_TUPLE: return eval_seq(c, f, e, TSV_TUPLE);
	case PN_TSE_LIST: return eval_seq(c, f, e, TSV_LIST);
	case PN_TSE_DICT: return eval_seq(c, f, e, TSV_DICT);
	case PN_TSE_SLICE: {
		/* a slice object: a tuple (lo, hi, step) of which NULL parts are None */
		ts_val *v = ts_seq(c, TSV_TUPLE, 3);
		for (int i = 0; v && i < 3; i++)
			if (!(v->items[i] = e->args && e->args[i] ? eval(c, f, e->args[i]) : ts_new(c, TSV_NONE)))
				return NULL;
		if (v)
			v->s = "slice";
		return v;
	}
	case PN_TSE_UNARY: {
		ts_val *a = eval(c, f, e->a);
		if (!a)
			return NULL;
		if (!strcmp(e->op, "not")) {
			int t;
			int rc = ts_truth(a, &t);
			if (rc == 0)
				return ts_bool(c, !t);
			const ts_aten *n = ts_aten_find("aten::logical_not");
			ts_val *out = NULL;
			return n && !n->fn(c, &a, 1, &out) ? out : NULL;
		}
		if (!strcmp(e->op, "-")) {
			if (a->kind == TSV_INT)
				return ts_int(c, -a->i);
			if (a->kind == TSV_FLOAT)
				return ts_float(c, -a->f);
			const ts_aten *n = ts_aten_find("aten::neg");
			ts_val *out = NULL;
			return n && !n->fn(c, &a, 1, &out) ? out : NULL;
		}
		if (!strcmp(e->op, "+"))
			return a;
		return ts_err(c, "line %d: unary %s", e->line, e->op), NULL;
	}
	case PN_TSE_BINARY: return binary(c, e->op, eval(c, f, e->a), eval(c, f, e->b));
	case PN_TSE_COMPARE: return compare(c, e->op, eval(c, f, e->a), eval(c, f, e->b));
	case PN_TSE_BOOLOP: {
		ts_val *a = eval(c, f, e->a);
		int t;
		if (!a)
			return NULL;
		if (ts_truth(a, &t))
			return ts_err(c, "line %d: %s on a value known only at run time", e->line, e->op), NULL;
		if (!strcmp(e->op, "and") ? !t : t)
			return a;
		return eval(c, f, e->b);
	}
	case PN_TSE_IFEXP: {
		int t;
		ts_val *cond = eval(c, f, e->a);
		if (!cond)
			return NULL;
		if (ts_truth(cond, &t))
			return ts_err(c, "line %d: `x if c else y` on a condition known only at run time", e->line), NULL;
		return eval(c, f, t ? e->b : e->c);
	}
	default:
		return ts_err(c, "line %d: an expression of kind %d", e->line, e->kind), NULL;
	}
}

/* --- statements --------------------------------------------------------------------- */


static ts_val *unknown_outputs(ts_ctx *c, ts_val *v, int k);

static int assign(ts_ctx *c, ts_frame *f, const pn_ts_expr *t, ts_val *v)
{
	if (!v)
		return -1;
	if (t->kind == PN_TSE_NAME)
		return ts_bind(c, f, t->s, v);
	if (t->kind == PN_TSE_TUPLE || t->kind == PN_TSE_LIST) {
		if (v->kind == TSV_TENSOR && v->node && v->node->domain && !strcmp(v->node->domain, "torch") && v->node->n_output == 1 && t->n > 1 &&
		    (v = unknown_outputs(c, v, t->n)) == NULL)
			return -1;
		if (v->kind != TSV_TUPLE && v->kind != TSV_LIST)
			return ts_err(c, "line %d: unpacking a value of kind %d", t->line, v->kind);
		if (v->n != t->n)
			return ts_err(c, "line %d: unpacking %d values into %d names", t->line, v->n, t->n);
		for (int i = 0; i < t->n; i++)
			if (assign(c, f, t->args[i], v->items[i]))
				return -1;
		return 0;
	}
	if (t->kind == PN_TSE_SUBSCRIPT) {
		ts_val *seq = eval(c, f, t->a), *idx = eval(c, f, t->b);
		int64_t k;
		if (seq && seq->kind == TSV_LIST && ts_get_int(idx, &k)) {
			if (k < 0)
				k += seq->n;
			if (k < 0 || k >= seq->n)
				return ts_err(c, "line %d: index out of range", t->line);
			seq->items[k] = v;
			return 0;
		}
	}
	return ts_err(c, "line %d: assignment to this target is not supported", t->line);
}

/* An unmapped op whose result is unpacked into k names: its node gets k
 * outputs (the ONNX graph cannot say how many it has otherwise). */
static ts_val *unknown_outputs(ts_ctx *c, ts_val *v, int k)
{
	Onnx__NodeProto *nd = v->node;
	char **outs = pn_arena_alloc(c->a, sizeof(char *) * (size_t)k);
	ts_val *t = ts_seq(c, TSV_TUPLE, k);
	if (!outs || !t)
		return ts_err(c, "out of memory"), NULL;
	outs[0] = nd->output[0];
	for (int i = 1; i < k; i++)
		if (!(outs[i] = (char *)ts_fresh_name(c->cur, nd->op_type)))
			return ts_err(c, "out of memory"), NULL;
	nd->output = outs;
	nd->n_output = (size_t)k;
	for (int i = 0; i < k; i++)
		if (!(t->items[i] = ts_tensor(c, outs[i], v->dtype, -1)))
			return NULL;
	return t;
}


static int exec_for(ts_ctx *c, ts_frame *f, const pn_ts_stmt *s)
{
	const pn_ts_expr *it = s->value;
	ts_val *seq;
	/* for i in range(n) with n a runtime int: an ONNX Loop */
	if (it->kind == PN_TSE_CALL && it->a->kind == PN_TSE_NAME && !strcmp(it->a->s, "range") &&
	    it->n == 1) {
		ts_val *n = eval(c, f, it->args[0]);
		if (!n)
			return -1;
		if (n->kind == TSV_TENSOR)
			return ts_lower_loop(c, f, s, n);
		seq = ts_range_list(c, &n, 1);
	} else {
		seq = eval(c, f, it);
	}
	if (!seq)
		return -1;
	if (seq->kind != TSV_LIST && seq->kind != TSV_TUPLE)
		return ts_err(c, "line %d: a for loop over a value of kind %d", s->line, seq->kind);
	for (int i = 0; i < seq->n; i++) {
		if (assign(c, f, s->targets[0], seq->items[i]))
			return -1;
		int r = ts_exec_block(c, f, &s->body);
		if (r < 0 || r == FLOW_RETURN)
			return r;
		if (r == FLOW_BREAK)
			break;
	}
	return FLOW_NEXT;
}

static int exec_stmt(ts_ctx *c, ts_frame *f, const pn_ts_stmt *s)
{
	if (++c->steps > TS_LIMIT_STEPS)
		return ts_err(c, "more than %d statements run", TS_LIMIT_STEPS);
	switch (s->kind) {
	case PN_TSS_ASSIGN: {
		ts_val *v = eval(c, f, s->value);
		for (int i = 0; v && i < s->n_targets; i++)
			if (assign(c, f, s->targets[i], v))
				return -1;
		return v ? FLOW_NEXT : -1;
	}
	case PN_TSS_AUGASSIGN:
		return assign(c, f, s->targets[0],
			      binary(c, s->op, eval(c, f, s->targets[0]), eval(c, f, s->value)))
			       ? -1 : FLOW_NEXT;
	case PN_TSS_EXPR: return eval(c, f, s->value) ? FLOW_NEXT : -1;
	case PN_TSS_RETURN:
		f->ret = s->value ? eval(c, f, s->value) : ts_new(c, TSV_NONE);
		return f->ret ? FLOW_RETURN : -1;
	case PN_TSS_IF: {
		ts_val *cond = eval(c, f, s->value);
		int t;
		if (!cond)
			return -1;
		int rc = ts_truth(cond, &t);
		if (rc == 1)
			return ts_lower_if(c, f, s, cond);
		if (rc < 0)
			return -1;
		return ts_exec_block(c, f, t ? &s->body : &s->orelse);
	}
	case PN_TSS_FOR: return exec_for(c, f, s);
	case PN_TSS_WHILE: {
		for (int k = 0;; k++) {
			int t;
			ts_val *cond = eval(c, f, s->value);
			if (!cond)
				return -1;
			int rc = ts_truth(cond, &t);
			if (rc)   /* the steps left as an ONNX Loop */
				return rc < 0 ? -1 : ts_lower_while(c, f, s, cond);
			if (!t)
				break;
			if (k >= TS_LIMIT_UNROLL)
				return ts_err(c, "line %d: a while loop of more than %d steps", s->line, TS_LIMIT_UNROLL);
			int r = ts_exec_block(c, f, &s->body);
			if (r < 0 || r == FLOW_RETURN)
				return r;
			if (r == FLOW_BREAK)
				break;
		}
		return FLOW_NEXT;
	}
	case PN_TSS_WITH:
		/* `with torch.no_grad():` and the like change nothing a graph
		 * holds: the body runs as it is */
		if (s->n_targets)
			return ts_err(c, "line %d: `with ... as` is not supported", s->line);
		return ts_exec_block(c, f, &s->body);
	case PN_TSS_BREAK: return FLOW_BREAK;
	case PN_TSS_CONTINUE: return FLOW_CONTINUE;
	case PN_TSS_PASS: return FLOW_NEXT;
	case PN_TSS_RAISE: return ts_err(c, "line %d: the model raises an exception here", s->line);
	case PN_TSS_ASSERT: {
		int t;
		ts_val *v = eval(c, f, s->value);
		if (!v)
			return -1;
		if (!ts_truth(v, &t) && !t)
			return ts_err(c, "line %d: an assert fails", s->line);
		return FLOW_NEXT;
	}
	default: return ts_err(c, "line %d: a statement of kind %d", s->line, s->kind);
	}
}

int ts_exec_block(ts_ctx *c, ts_frame *f, const pn_ts_block *b)
{
	for (int i = 0; i < b->n; i++) {
		int r = exec_stmt(c, f, b->stmts[i]);
		if (r != FLOW_NEXT)
			return r;
	}
	return FLOW_NEXT;
}

static ts_val *call_func(ts_ctx *c, const pn_ts_func *fn, ts_val *self, ts_val **args, int n,
			 const char **kw, int n_kw)
{
	if (!fn)
		return ts_err(c, "a call of a method the class does not define"), NULL;
	if (c->depth >= TS_LIMIT_CALL_DEPTH)
		return ts_err(c, "calls nested more than %d deep", TS_LIMIT_CALL_DEPTH), NULL;
	ts_frame f = {0};
	int p = 0;
	if (self) {
		if (fn->n_params < 1)
			return ts_err(c, "method %s without self", fn->name), NULL;
		if (ts_bind(c, &f, fn->params[0].name, self))
			return NULL;
		p = 1;
	}
	if (n > fn->n_params - p)
		return ts_err(c, "%s takes %d arguments, given %d", fn->name, fn->n_params - p, n), NULL;
	for (int i = p; i < fn->n_params; i++) {
		ts_val *v = i - p < n ? args[i - p] : NULL;
		for (int k = 0; !v && k < n_kw; k++)
			if (kw && !strcmp(kw[k], fn->params[i].name))
				v = args[n + k];
		if (!v && fn->params[i].dflt)
			v = eval(c, &f, fn->params[i].dflt);
		if (!v)
			return ts_err(c, "%s: argument %s missing", fn->name, fn->params[i].name), NULL;
		if (ts_bind(c, &f, fn->params[i].name, v))
			return NULL;
	}
	c->depth++;
	int r = ts_exec_block(c, &f, &fn->body);
	c->depth--;
	if (r < 0)
		return NULL;
	return f.ret ? f.ret : ts_new(c, TSV_NONE);
}

/* --- the model ---------------------------------------------------------------------- */

/* forward()'s parameters as graph inputs. */
static int make_inputs(ts_ctx *c, const pn_ts_func *fwd, ts_val **args, int *n_args)
{
	int n = 0;
	c->inputs = pn_arena_alloc(c->a, sizeof(ts_val *) * (size_t)(fwd->n_params + 1));
	c->input_names = pn_arena_alloc(c->a, sizeof(char **) * (size_t)(fwd->n_params + 1));
	if (!c->inputs || !c->input_names)
		return ts_err(c, "out of memory");
	for (int i = 1; i < fwd->n_params; i++) {
		const char *ty = fwd->params[i].type ? fwd->params[i].type : "Tensor";
		ts_val *v;
		if (!strcmp(ty, "Tensor")) {
			v = ts_tensor(c, fwd->params[i].name, PN_FLOAT, -1);
		} else if (!strcmp(ty, "int") || !strcmp(ty, "float") || !strcmp(ty, "bool")) {
			int dt = ty[0] == 'i' ? PN_INT64 : ty[0] == 'f' ? PN_FLOAT : PN_BOOL;
			v = ts_tensor(c, fwd->params[i].name, dt, 0);
			if (v)
				v->scalar = 1;
		} else if (!strncmp(ty, "Optional[", 9)) {
			args[n++] = ts_new(c, TSV_NONE);
			continue;
		} else {
			return ts_err(c, "forward's parameter %s of type %s is not supported", fwd->params[i].name, ty);
		}
		if (!v)
			return -1;
		c->input_names[c->n_inputs] = pn_arena_alloc(c->a, sizeof(char *) * PN_MAX_RANK);
		if (!c->input_names[c->n_inputs])
			return ts_err(c, "out of memory");
		c->inputs[c->n_inputs++] = v;
		v->input = c->n_inputs;
		args[n++] = v;
	}
	*n_args = n;
	return 0;
}

static int declare_inputs(ts_ctx *c)
{
	for (int i = 0; i < c->n_inputs; i++) {
		ts_val *v = c->inputs[i];
		Onnx__ValueInfoProto *vi = ts_value_info(&c->root, v->name, v->dtype, v->rank, v->dims,
							 c->input_names[i]);
		if (ts_graph_input(&c->root, vi))
			return ts_err(c, "out of memory");
	}
	return 0;
}

static int declare_outputs(ts_ctx *c, ts_val *ret)
{
	ts_val *one[1] = {ret};
	ts_val **items = one;
	int n = 1;
	if (ret->kind == TSV_TUPLE || ret->kind == TSV_LIST) {
		items = ret->items;
		n = ret->n;
	}
	for (int i = 0; i < n; i++) {
		ts_val *v = items[i];
		if (v->kind == TSV_NONE && n > 1)
			continue;   /* an Optional output that is None (an aux head left off) */
		if (v->kind == TSV_TUPLE || v->kind == TSV_LIST)
			return ts_err(c, "forward returns nested tuples or lists");
		const char *name = ts_as_tensor(c, v);
		if (!name)
			return -1;
		/* an output that is an input or a weight as is gets a node of its own */
		if (v->kind != TSV_TENSOR || v->input || v->data) {
			Onnx__NodeProto *id = ts_node(c->cur, "Identity", &name, 1, 1);
			if (!id)
				return ts_err(c, "out of memory");
			name = id->output[0];
		}
		int dt = v->kind == TSV_TENSOR ? v->dtype : v->kind == TSV_FLOAT ? PN_FLOAT : PN_INT64;
		if (ts_graph_output(&c->root, ts_value_info(&c->root, name, dt, -1, NULL, NULL)))
			return ts_err(c, "out of memory");
	}
	return 0;
}

static Onnx__ModelProto *model_proto(ts_ctx *c, Onnx__GraphProto *g)
{
	Onnx__ModelProto *mp = pn_arena_alloc(c->a, sizeof(*mp));
	Onnx__OperatorSetIdProto **ops = pn_arena_alloc(c->a, sizeof(*ops) * 2);
	if (!mp || !ops)
		return NULL;
	onnx__model_proto__init(mp);
	mp->has_ir_version = 1;
	mp->ir_version = 8;
	mp->producer_name = "passnet torchscript";
	mp->graph = g;
	int n_ops = c->n_unsup ? 2 : 1;
	for (int i = 0; i < n_ops; i++) {
		ops[i] = pn_arena_alloc(c->a, sizeof(**ops));
		if (!ops[i])
			return NULL;
		onnx__operator_set_id_proto__init(ops[i]);
		ops[i]->domain = i ? "torch" : "";
		ops[i]->has_version = 1;
		ops[i]->version = i ? 1 : 17;
	}
	mp->opset_import = ops;
	mp->n_opset_import = (size_t)n_ops;
	return mp;
}

Onnx__ModelProto *pn_torchscript_to_onnx(const void *bytes, size_t len, pn_arena *a,
					 pn_torchscript_info *info, char *err)
{
	ts_ctx *c = pn_arena_alloc(a, sizeof(*c));
	if (!c) {
		pn_fail(err, "out of memory");
		return NULL;
	}
	*err = 0;
	c->a = a;
	c->err = err;
	if (info)
		memset(info, 0, sizeof(*info));
	ts_graph_init(&c->root, a, NULL, &c->counter, &c->total);
	c->cur = &c->root;
	if (ts_archive_open(bytes, len, a, &c->ar, err))
		return NULL;
	ts_val *root = from_pickle(c, c->ar.data, "", "data");
	if (!root)
		return NULL;
	if (root->kind != TSV_MODULE) {
		pn_fail(err, "data.pkl does not hold a module");
		return NULL;
	}
	const pn_ts_func *fwd = class_method(root->cls, "forward");
	if (!fwd) {
		pn_fail(err, "class %s has no forward method", root->cls->name);
		return NULL;
	}
	ts_val **args = pn_arena_alloc(a, sizeof(ts_val *) * (size_t)(fwd->n_params + 1));
	int n_args = 0;
	if (!args || make_inputs(c, fwd, args, &n_args))
		return NULL;
	ts_val *ret = call_func(c, fwd, root, args, n_args, NULL, 0);
	if (!ret || declare_inputs(c) || declare_outputs(c, ret)) {
		if (c->n_unsup && info) {
			info->n_unsupported = c->n_unsup;
			info->unsupported = c->unsupported;
		}
		return NULL;
	}
	if (info) {
		info->n_unsupported = c->n_unsup;
		info->unsupported = c->unsupported;
	}
	if (ts_graph_prune(&c->root)) {
		pn_fail(err, "out of memory");
		return NULL;
	}
	Onnx__GraphProto *g = ts_graph_finish(&c->root, "torchscript");
	Onnx__ModelProto *mp = g ? model_proto(c, g) : NULL;
	if (!mp)
		pn_fail(err, "out of memory");
	return mp;
}
