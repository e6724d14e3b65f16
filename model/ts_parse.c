/*
 * ts_parse.c - see ts_syntax.h.  A recursive-descent parser over the tokens
 * of ts_lex.c, one function per level of Python's grammar, holding one token
 * of lookahead (Python's grammar needs no more: `not in` and `is not` are
 * settled after their first word).
 *
 * Two counters keep a hostile file from exhausting the stack: p->depth
 * counts the expressions being parsed inside one another (a bracket, a
 * unary operator, an exponent, the else of `a if c else b`), p->blocks the
 * blocks, each checked against PN_TS_LIMIT_DEPTH before recursing.  The
 * tree is bounded as well, so that its readers may recurse: every node is
 * allocated as an `enode` whose tail holds the height of its subtree,
 * checked as the node is built, which catches the deep trees that need no
 * recursion here (a + b + c + ..., a.b.c...), and an elif chain counts as
 * the nested blocks it is.
 *
 * Lists of unknown length (arguments, statements, members) grow by doubling
 * in the arena; the copies left behind cost at most as much as the final
 * list.  *out is filled only once the whole file has parsed.
 */
#include "model/ts_syntax.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "model/ts_lex.h"

typedef struct enode {
	pn_ts_expr e;      /* first: every pn_ts_expr * of this file is an enode * */
	int32_t height;    /* nodes on the longest path down, this one included */
} enode;

typedef struct parser {
	pn_ts_lexer lx;
	pn_ts_tok tok;     /* the lookahead */
	size_t prev_end;   /* where the last token consumed ends: a type's text ends there */
	pn_arena *a;
	char *err;
	int32_t depth;     /* expressions being parsed inside one another */
	int32_t blocks;    /* blocks open, elif links included */
} parser;

typedef struct vec {
	char *items;
	int32_t n, cap;
} vec;

static int fail(parser *p, int32_t line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(parser *p, int32_t line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = pn_ts_vfail(p->err, line, fmt, ap);
	va_end(ap);
	return rc;
}

static int oom(parser *p)
{
	return fail(p, p->tok.line, "out of memory");
}

static int too_deep(parser *p, int32_t line, const char *what)
{
	return fail(p, line, "%s nested deeper than %d", what, PN_TS_LIMIT_DEPTH);
}

static int advance(parser *p)
{
	p->prev_end = p->tok.end;
	return pn_ts_lex_next(&p->lx, &p->tok);
}

static int is_op(const parser *p, int op)
{
	return p->tok.kind == PN_TSK_OP && p->tok.sub == op;
}

static int is_kw(const parser *p, int kw)
{
	return p->tok.kind == PN_TSK_KW && p->tok.sub == kw;
}

/* The lookahead in words, for "expected X, got Y". */
static void describe(const parser *p, char *buf, size_t n)
{
	const pn_ts_tok *t = &p->tok;
	switch (t->kind) {
	case PN_TSK_EOF: snprintf(buf, n, "end of file"); break;
	case PN_TSK_NEWLINE: snprintf(buf, n, "end of line"); break;
	case PN_TSK_INDENT: snprintf(buf, n, "an indent"); break;
	case PN_TSK_DEDENT: snprintf(buf, n, "a dedent"); break;
	case PN_TSK_NAME:
		snprintf(buf, n, "name '%.*s'%s", (int)(t->len > 40 ? 40 : t->len), t->s,
			 t->len > 40 ? "..." : "");
		break;
	case PN_TSK_KW: snprintf(buf, n, "'%s'", pn_ts_kw_text(t->sub)); break;
	case PN_TSK_OP: snprintf(buf, n, "'%s'", pn_ts_op_text(t->sub)); break;
	case PN_TSK_STR: snprintf(buf, n, "a string"); break;
	default: snprintf(buf, n, "a number"); break;
	}
}

static int unexpected(parser *p, const char *wanted)
{
	char got[64];
	describe(p, got, sizeof got);
	return fail(p, p->tok.line, "expected %s, got %s", wanted, got);
}

static int expect_op(parser *p, int op)
{
	if (!is_op(p, op)) {
		char wanted[16];
		snprintf(wanted, sizeof wanted, "'%s'", pn_ts_op_text(op));
		return unexpected(p, wanted);
	}
	return advance(p);
}

static int expect_kind(parser *p, int kind, const char *wanted)
{
	return p->tok.kind == kind ? advance(p) : unexpected(p, wanted);
}

static int push(parser *p, vec *v, const void *item, size_t size)
{
	if (v->n == v->cap) {
		if (v->n >= PN_TS_LIMIT_ITEMS)
			return fail(p, p->tok.line, "more than %d items in one list",
				    PN_TS_LIMIT_ITEMS);
		int32_t cap = v->cap ? v->cap * 2 : 4;
		if (cap > PN_TS_LIMIT_ITEMS)
			cap = PN_TS_LIMIT_ITEMS;
		char *q = pn_arena_alloc(p->a, size * (size_t)cap);
		if (!q)
			return oom(p);
		if (v->n)
			memcpy(q, v->items, size * (size_t)v->n);
		v->items = q;
		v->cap = cap;
	}
	memcpy(v->items + size * (size_t)v->n++, item, size);
	return 0;
}

static int enter(parser *p)
{
	if (++p->depth > PN_TS_LIMIT_DEPTH)
		return too_deep(p, p->tok.line, "expression");
	return 0;
}

static void leave(parser *p)
{
	p->depth--;
}

static const char *copy_name(parser *p)
{
	const char *s = pn_arena_strndup(p->a, p->tok.s, p->tok.len);
	if (!s)
		oom(p);
	return s;
}

/* --- nodes ------------------------------------------------------------------ */

static pn_ts_expr *new_expr(parser *p, int kind, int32_t line)
{
	enode *n = pn_arena_alloc(p->a, sizeof *n);
	if (!n)
		return oom(p), NULL;
	n->e.kind = (uint8_t)kind;
	n->e.line = line;
	n->height = 1;
	return &n->e;
}

static int32_t height(const pn_ts_expr *e)
{
	return e ? ((const enode *)e)->height : 0;
}

/* Sets e's height from its children, now that they are in place. */
static pn_ts_expr *seal(parser *p, pn_ts_expr *e)
{
	int32_t h = height(e->a);
	if (height(e->b) > h)
		h = height(e->b);
	if (height(e->c) > h)
		h = height(e->c);
	for (int32_t i = 0; i < e->n; i++)
		if (height(e->args[i]) > h)
			h = height(e->args[i]);
	if (h >= PN_TS_LIMIT_DEPTH)
		return too_deep(p, e->line, "expression"), NULL;
	((enode *)e)->height = h + 1;
	return e;
}

static pn_ts_expr *new_op(parser *p, int kind, const char *op, pn_ts_expr *a, pn_ts_expr *b,
			  int32_t line)
{
	pn_ts_expr *e = new_expr(p, kind, line);
	if (!e)
		return NULL;
	e->op = op;
	e->a = a;
	e->b = b;
	return seal(p, e);
}

/* A TUPLE, LIST or DICT (pairs) over the items gathered in v. */
static pn_ts_expr *new_seq(parser *p, int kind, int32_t line, vec *v)
{
	pn_ts_expr *e = new_expr(p, kind, line);
	if (!e)
		return NULL;
	e->args = (pn_ts_expr **)v->items;
	e->n = v->n;    /* seal reads args[0..n): every key and value of a DICT */
	if (!seal(p, e))
		return NULL;
	if (kind == PN_TSE_DICT)
		e->n = v->n / 2;
	return e;
}

/* --- expressions ------------------------------------------------------------ */

static pn_ts_expr *parse_test(parser *p);

/* Whether the lookahead can start an expression: a list may end in a comma. */
static int starts_expr(const parser *p)
{
	const pn_ts_tok *t = &p->tok;
	switch (t->kind) {
	case PN_TSK_NAME: case PN_TSK_INT: case PN_TSK_FLOAT: case PN_TSK_STR:
		return 1;
	case PN_TSK_KW:
		return t->sub == PN_KW_NONE || t->sub == PN_KW_TRUE || t->sub == PN_KW_FALSE ||
		       t->sub == PN_KW_NOT || t->sub == PN_KW_LAMBDA;
	case PN_TSK_OP:
		return t->sub == PN_OP_LPAR || t->sub == PN_OP_LSQB || t->sub == PN_OP_LBRACE ||
		       t->sub == PN_OP_MINUS || t->sub == PN_OP_PLUS || t->sub == PN_OP_TILDE;
	default:
		return 0;
	}
}

/* Adjacent string literals are one string, as in Python. */
static pn_ts_expr *parse_strings(parser *p)
{
	int32_t line = p->tok.line;
	vec parts = {0};
	size_t total = 0;
	while (p->tok.kind == PN_TSK_STR) {
		if (push(p, &parts, &p->tok, sizeof p->tok))
			return NULL;
		total += p->tok.len;
		if (advance(p))
			return NULL;
	}
	pn_ts_expr *e = new_expr(p, PN_TSE_STR, line);
	if (!e)
		return NULL;
	const pn_ts_tok *t = (const pn_ts_tok *)parts.items;
	if (parts.n == 1) {
		e->s = t[0].s;
		e->len = t[0].len;
		return e;
	}
	char *s = pn_arena_alloc(p->a, total + 1);
	if (!s)
		return oom(p), NULL;
	size_t k = 0;
	for (int32_t i = 0; i < parts.n; i++) {
		if (t[i].len)
			memcpy(s + k, t[i].s, t[i].len);
		k += t[i].len;
	}
	e->s = s;
	e->len = total;
	return e;
}

/* Items up to the closing bracket: test (',' test)* [',']; *comma says
 * whether there was a comma, which makes (x,) a tuple. */
static int parse_items(parser *p, int close, vec *v, int *comma)
{
	*comma = 0;
	while (!is_op(p, close)) {
		pn_ts_expr *e = parse_test(p);
		if (!e || push(p, v, &e, sizeof e))
			return -1;
		if (!is_op(p, PN_OP_COMMA))
			break;
		*comma = 1;
		if (advance(p))
			return -1;
	}
	return expect_op(p, close);
}

static pn_ts_expr *parse_paren(parser *p)
{
	int32_t line = p->tok.line;
	vec v = {0};
	int comma;
	if (advance(p) || parse_items(p, PN_OP_RPAR, &v, &comma))
		return NULL;
	if (v.n == 1 && !comma)
		return ((pn_ts_expr **)v.items)[0];
	return new_seq(p, PN_TSE_TUPLE, line, &v);
}

static pn_ts_expr *parse_list(parser *p)
{
	int32_t line = p->tok.line;
	vec v = {0};
	int comma;
	if (advance(p) || parse_items(p, PN_OP_RSQB, &v, &comma))
		return NULL;
	return new_seq(p, PN_TSE_LIST, line, &v);
}

static pn_ts_expr *parse_dict(parser *p)
{
	int32_t line = p->tok.line;
	vec v = {0};
	if (advance(p))
		return NULL;
	while (!is_op(p, PN_OP_RBRACE)) {
		pn_ts_expr *k = parse_test(p);
		if (!k || push(p, &v, &k, sizeof k) || expect_op(p, PN_OP_COLON))
			return NULL;
		pn_ts_expr *val = parse_test(p);
		if (!val || push(p, &v, &val, sizeof val))
			return NULL;
		if (!is_op(p, PN_OP_COMMA))
			break;
		if (advance(p))
			return NULL;
	}
	if (expect_op(p, PN_OP_RBRACE))
		return NULL;
	return new_seq(p, PN_TSE_DICT, line, &v);
}

static pn_ts_expr *parse_atom(parser *p)
{
	const pn_ts_tok *t = &p->tok;
	int32_t line = t->line;
	pn_ts_expr *e = NULL;
	switch (t->kind) {
	case PN_TSK_NAME:
		if (!(e = new_expr(p, PN_TSE_NAME, line)) || !(e->s = copy_name(p)))
			return NULL;
		e->len = t->len;
		return advance(p) ? NULL : e;
	case PN_TSK_INT:
		if (t->u > (uint64_t)INT64_MAX)
			return fail(p, line, "integer literal out of range"), NULL;
		if (!(e = new_expr(p, PN_TSE_INT, line)))
			return NULL;
		e->i = (int64_t)t->u;
		return advance(p) ? NULL : e;
	case PN_TSK_FLOAT:
		if (!(e = new_expr(p, PN_TSE_FLOAT, line)))
			return NULL;
		e->f = t->f;
		return advance(p) ? NULL : e;
	case PN_TSK_STR:
		return parse_strings(p);
	case PN_TSK_KW:
		if (t->sub == PN_KW_NONE)
			e = new_expr(p, PN_TSE_NONE, line);
		else if (t->sub == PN_KW_TRUE || t->sub == PN_KW_FALSE)
			e = new_expr(p, PN_TSE_BOOL, line);
		else
			break;
		if (!e)
			return NULL;
		e->i = t->sub == PN_KW_TRUE;
		return advance(p) ? NULL : e;
	case PN_TSK_OP:
		if (t->sub == PN_OP_LPAR)
			return parse_paren(p);
		if (t->sub == PN_OP_LSQB)
			return parse_list(p);
		if (t->sub == PN_OP_LBRACE)
			return parse_dict(p);
		break;
	default:
		break;
	}
	unexpected(p, "an expression");
	return NULL;
}

static pn_ts_expr *parse_call(parser *p, pn_ts_expr *fn)
{
	vec pos = {0}, kw = {0}, names = {0};
	if (advance(p))
		return NULL;
	while (!is_op(p, PN_OP_RPAR)) {
		if (is_op(p, PN_OP_STAR) || is_op(p, PN_OP_DSTAR))
			return fail(p, p->tok.line, "starred arguments are not supported"), NULL;
		pn_ts_expr *e = parse_test(p);
		if (!e)
			return NULL;
		if (is_op(p, PN_OP_ASSIGN)) {
			if (e->kind != PN_TSE_NAME)
				return fail(p, e->line, "a keyword argument needs a name"), NULL;
			if (advance(p) || push(p, &names, &e->s, sizeof e->s))
				return NULL;
			if (!(e = parse_test(p)) || push(p, &kw, &e, sizeof e))
				return NULL;
		} else if (kw.n) {
			return fail(p, e->line, "positional after keyword argument"), NULL;
		} else if (push(p, &pos, &e, sizeof e)) {
			return NULL;
		}
		if (!is_op(p, PN_OP_COMMA))
			break;
		if (advance(p))
			return NULL;
	}
	if (expect_op(p, PN_OP_RPAR))
		return NULL;
	pn_ts_expr *e = new_expr(p, PN_TSE_CALL, fn->line);
	if (!e)
		return NULL;
	e->a = fn;
	e->n = pos.n + kw.n;
	e->n_pos = pos.n;
	e->kw_names = (const char **)names.items;
	if (e->n) {
		e->args = pn_arena_alloc(p->a, sizeof *e->args * (size_t)e->n);
		if (!e->args)
			return oom(p), NULL;
		if (pos.n)
			memcpy(e->args, pos.items, sizeof *e->args * (size_t)pos.n);
		if (kw.n)
			memcpy(e->args + pos.n, kw.items, sizeof *e->args * (size_t)kw.n);
	}
	return seal(p, e);
}

static int ends_slice_part(const parser *p)
{
	return is_op(p, PN_OP_COLON) || is_op(p, PN_OP_COMMA) || is_op(p, PN_OP_RSQB);
}

/* One item of a subscript: an expression, or lo:hi:step with any part left out. */
static pn_ts_expr *parse_slice_item(parser *p)
{
	int32_t line = p->tok.line;
	pn_ts_expr *part[3] = {NULL, NULL, NULL};
	if (!is_op(p, PN_OP_COLON)) {
		if (!(part[0] = parse_test(p)))
			return NULL;
		if (!is_op(p, PN_OP_COLON))
			return part[0];
	}
	if (advance(p))
		return NULL;
	if (!ends_slice_part(p) && !(part[1] = parse_test(p)))
		return NULL;
	if (is_op(p, PN_OP_COLON)) {
		if (advance(p))
			return NULL;
		if (!ends_slice_part(p) && !(part[2] = parse_test(p)))
			return NULL;
	}
	pn_ts_expr *e = new_expr(p, PN_TSE_SLICE, line);
	if (!e)
		return NULL;
	if (!(e->args = pn_arena_memdup(p->a, part, sizeof part)))
		return oom(p), NULL;
	e->n = 3;
	return seal(p, e);
}

static pn_ts_expr *parse_subscript(parser *p, pn_ts_expr *base)
{
	int32_t line = p->tok.line;
	vec v = {0};
	int comma = 0;
	if (advance(p))
		return NULL;
	for (;;) {
		pn_ts_expr *e = parse_slice_item(p);
		if (!e || push(p, &v, &e, sizeof e))
			return NULL;
		if (!is_op(p, PN_OP_COMMA))
			break;
		comma = 1;
		if (advance(p))
			return NULL;
		if (is_op(p, PN_OP_RSQB))
			break;
	}
	if (expect_op(p, PN_OP_RSQB))
		return NULL;
	pn_ts_expr *index = ((pn_ts_expr **)v.items)[0];
	if ((v.n > 1 || comma) && !(index = new_seq(p, PN_TSE_TUPLE, line, &v)))
		return NULL;
	return new_op(p, PN_TSE_SUBSCRIPT, NULL, base, index, base->line);
}

/* An atom and its trailers: calls, subscripts, attributes. */
static pn_ts_expr *parse_postfix(parser *p)
{
	pn_ts_expr *e = parse_atom(p);
	while (e) {
		if (is_op(p, PN_OP_LPAR)) {
			e = parse_call(p, e);
		} else if (is_op(p, PN_OP_LSQB)) {
			e = parse_subscript(p, e);
		} else if (is_op(p, PN_OP_DOT)) {
			if (advance(p))
				return NULL;
			if (p->tok.kind != PN_TSK_NAME)
				return unexpected(p, "a name after '.'"), NULL;
			pn_ts_expr *at = new_expr(p, PN_TSE_ATTR, e->line);
			if (!at || !(at->s = copy_name(p)))
				return NULL;
			at->len = p->tok.len;
			at->a = e;
			if (advance(p))
				return NULL;
			e = seal(p, at);
		} else {
			break;
		}
	}
	return e;
}

static pn_ts_expr *parse_factor(parser *p);

static pn_ts_expr *parse_power(parser *p)
{
	pn_ts_expr *e = parse_postfix(p);
	if (!e || !is_op(p, PN_OP_DSTAR))
		return e;
	if (advance(p) || enter(p))
		return NULL;
	pn_ts_expr *r = parse_factor(p);
	leave(p);
	return r ? new_op(p, PN_TSE_BINARY, "**", e, r, e->line) : NULL;
}

/* -9223372036854775808: the one literal that fits only with its sign. */
static pn_ts_expr *int64_min(parser *p, int32_t line)
{
	if (advance(p))
		return NULL;
	if (is_op(p, PN_OP_DSTAR) || is_op(p, PN_OP_LPAR) || is_op(p, PN_OP_LSQB) ||
	    is_op(p, PN_OP_DOT))
		return fail(p, line, "integer literal out of range"), NULL;
	pn_ts_expr *e = new_expr(p, PN_TSE_INT, line);
	if (e)
		e->i = INT64_MIN;
	return e;
}

static pn_ts_expr *parse_factor(parser *p)
{
	int op = p->tok.kind == PN_TSK_OP ? p->tok.sub : 0;
	if (op != PN_OP_MINUS && op != PN_OP_PLUS && op != PN_OP_TILDE)
		return parse_power(p);
	int32_t line = p->tok.line;
	if (advance(p))
		return NULL;
	if (op == PN_OP_MINUS && p->tok.kind == PN_TSK_INT && p->tok.u == (uint64_t)INT64_MAX + 1)
		return int64_min(p, line);
	if (enter(p))
		return NULL;
	pn_ts_expr *x = parse_factor(p);
	leave(p);
	if (!x)
		return NULL;
	/* A negative literal is a literal (x is a fresh node: nothing shares it). */
	if (op == PN_OP_MINUS && x->kind == PN_TSE_INT && x->i != INT64_MIN) {
		x->i = -x->i;
		x->line = line;
		return x;
	}
	if (op == PN_OP_MINUS && x->kind == PN_TSE_FLOAT) {
		x->f = -x->f;
		x->line = line;
		return x;
	}
	return new_op(p, PN_TSE_UNARY, pn_ts_op_text(op), x, NULL, line);
}

/* Binary operators by level, loosest first; each level is left-associative. */
#define N_LEVELS 6
static const uint8_t level_ops[N_LEVELS][6] = {
	{PN_OP_PIPE}, {PN_OP_CARET}, {PN_OP_AMP}, {PN_OP_LSHIFT, PN_OP_RSHIFT},
	{PN_OP_PLUS, PN_OP_MINUS},
	{PN_OP_STAR, PN_OP_SLASH, PN_OP_DSLASH, PN_OP_PERCENT, PN_OP_AT},
};

static int level_op(const parser *p, int level)
{
	if (p->tok.kind != PN_TSK_OP)
		return 0;
	for (int i = 0; i < 6 && level_ops[level][i]; i++)
		if (p->tok.sub == level_ops[level][i])
			return p->tok.sub;
	return 0;
}

static pn_ts_expr *parse_binary(parser *p, int level)
{
	if (level == N_LEVELS)
		return parse_factor(p);
	pn_ts_expr *e = parse_binary(p, level + 1);
	int op;
	while (e && (op = level_op(p, level))) {
		if (advance(p))
			return NULL;
		pn_ts_expr *r = parse_binary(p, level + 1);
		e = r ? new_op(p, PN_TSE_BINARY, pn_ts_op_text(op), e, r, e->line) : NULL;
	}
	return e;
}

static pn_ts_expr *parse_bitor(parser *p)
{
	return parse_binary(p, 0);
}

/* Consumes a comparison operator into *op: 1, or 0 when the lookahead is
 * none, or -1 on an error. */
static int comparison_op(parser *p, const char **op)
{
	if (p->tok.kind == PN_TSK_OP) {
		switch (p->tok.sub) {
		case PN_OP_LT: case PN_OP_GT: case PN_OP_LE: case PN_OP_GE: case PN_OP_EQ:
		case PN_OP_NE:
			*op = pn_ts_op_text(p->tok.sub);
			return advance(p) ? -1 : 1;
		default:
			return 0;
		}
	}
	if (is_kw(p, PN_KW_IN)) {
		*op = "in";
		return advance(p) ? -1 : 1;
	}
	if (is_kw(p, PN_KW_NOT)) {
		/* After an operand, `not` can only begin `not in`. */
		if (advance(p))
			return -1;
		if (!is_kw(p, PN_KW_IN))
			return unexpected(p, "'in' after 'not'");
		*op = "not in";
		return advance(p) ? -1 : 1;
	}
	if (is_kw(p, PN_KW_IS)) {
		if (advance(p))
			return -1;
		*op = "is";
		if (is_kw(p, PN_KW_NOT)) {
			*op = "is not";
			return advance(p) ? -1 : 1;
		}
		return 1;
	}
	return 0;
}

/* a < b < c is (a < b) and (b < c), b one node in both. */
static pn_ts_expr *parse_comparison(parser *p)
{
	pn_ts_expr *left = parse_bitor(p), *all = NULL;
	const char *op = NULL;
	int r;
	while (left && (r = comparison_op(p, &op)) != 0) {
		pn_ts_expr *right = r > 0 ? parse_bitor(p) : NULL;
		if (!right)
			return NULL;
		pn_ts_expr *c = new_op(p, PN_TSE_COMPARE, op, left, right, left->line);
		if (!c)
			return NULL;
		all = all ? new_op(p, PN_TSE_BOOLOP, "and", all, c, all->line) : c;
		if (!all)
			return NULL;
		left = right;
	}
	return left ? (all ? all : left) : NULL;
}

static pn_ts_expr *parse_not(parser *p)
{
	if (!is_kw(p, PN_KW_NOT))
		return parse_comparison(p);
	int32_t line = p->tok.line;
	if (advance(p) || enter(p))
		return NULL;
	pn_ts_expr *x = parse_not(p);
	leave(p);
	return x ? new_op(p, PN_TSE_UNARY, "not", x, NULL, line) : NULL;
}

static pn_ts_expr *parse_and(parser *p)
{
	pn_ts_expr *e = parse_not(p);
	while (e && is_kw(p, PN_KW_AND)) {
		if (advance(p))
			return NULL;
		pn_ts_expr *r = parse_not(p);
		e = r ? new_op(p, PN_TSE_BOOLOP, "and", e, r, e->line) : NULL;
	}
	return e;
}

static pn_ts_expr *parse_or(parser *p)
{
	pn_ts_expr *e = parse_and(p);
	while (e && is_kw(p, PN_KW_OR)) {
		if (advance(p))
			return NULL;
		pn_ts_expr *r = parse_and(p);
		e = r ? new_op(p, PN_TSE_BOOLOP, "or", e, r, e->line) : NULL;
	}
	return e;
}

/* `then if cond else other`, the lookahead being the `if`. */
static pn_ts_expr *parse_ifexp(parser *p, pn_ts_expr *then)
{
	pn_ts_expr *cond, *other, *x;
	if (advance(p) || !(cond = parse_or(p)))
		return NULL;
	if (!is_kw(p, PN_KW_ELSE))
		return unexpected(p, "'else'"), NULL;
	if (advance(p) || !(other = parse_test(p)) || !(x = new_expr(p, PN_TSE_IFEXP, then->line)))
		return NULL;
	x->a = cond;
	x->b = then;
	x->c = other;
	return seal(p, x);
}

/* A full expression, `b if a else c` included. */
static pn_ts_expr *parse_test(parser *p)
{
	if (enter(p))
		return NULL;
	pn_ts_expr *e = parse_or(p);
	if (e && is_kw(p, PN_KW_IF))
		e = parse_ifexp(p, e);
	leave(p);
	return e;
}

/* item (',' item)* [','], a TUPLE when there is a comma: the right side of
 * `=`, `return a, b`, and (items parsed by parse_bitor) a `for` target. */
static pn_ts_expr *parse_list_of(parser *p, pn_ts_expr *(*item)(parser *))
{
	int32_t line = p->tok.line;
	pn_ts_expr *e = item(p);
	if (!e || !is_op(p, PN_OP_COMMA))
		return e;
	vec v = {0};
	if (push(p, &v, &e, sizeof e))
		return NULL;
	while (is_op(p, PN_OP_COMMA)) {
		if (advance(p))
			return NULL;
		if (!starts_expr(p))
			break;
		if (!(e = item(p)) || push(p, &v, &e, sizeof e))
			return NULL;
	}
	return new_seq(p, PN_TSE_TUPLE, line, &v);
}

static pn_ts_expr *parse_testlist(parser *p)
{
	return parse_list_of(p, parse_test);
}

/* --- types ------------------------------------------------------------------ */

static int is_open(char c)
{
	return c == '(' || c == '[' || c == '{';
}

static int is_close(char c)
{
	return c == ')' || c == ']' || c == '}' || c == ',';
}

static int is_blank(const char *s, size_t i, size_t end)
{
	char c = s[i];
	return c == ' ' || c == '\t' || c == '\f' || c == '\n' || c == '\r' ||
	       (c == '\\' && i + 1 < end && (s[i + 1] == '\n' || s[i + 1] == '\r'));
}

/* The source text of src[start, end), which the lexer has accepted, with
 * comments dropped and every run of blanks made one space or, next to a
 * bracket or before a comma, none. */
static const char *source_text(parser *p, size_t start, size_t end)
{
	const char *s = p->lx.src;
	char *o = pn_arena_alloc(p->a, end - start + 1);
	if (!o)
		return oom(p), NULL;
	size_t k = 0;
	int blank = 0;
	for (size_t i = start; i < end;) {
		if (is_blank(s, i, end)) {
			blank = 1;
			i++;
			continue;
		}
		if (s[i] == '#') {
			while (i < end && s[i] != '\n' && s[i] != '\r')
				i++;
			blank = 1;
			continue;
		}
		if (blank && k && !is_open(o[k - 1]) && !is_close(s[i]))
			o[k++] = ' ';
		blank = 0;
		size_t j = i + 1;
		if (s[i] == '"' || s[i] == '\'')
			j = pn_ts_string_end(s, end, i);
		memcpy(o + k, s + i, j - i);
		k += j - i;
		i = j;
	}
	o[k] = 0;
	return o;
}

/* An annotation: parsed as an expression, kept as its text. */
static const char *parse_type(parser *p)
{
	size_t start = p->tok.off;
	if (!parse_test(p))
		return NULL;
	return source_text(p, start, p->prev_end);
}

/* --- statements ------------------------------------------------------------- */

static int parse_block(parser *p, pn_ts_block *b);

static pn_ts_stmt *new_stmt(parser *p, int kind, int32_t line)
{
	pn_ts_stmt *s = pn_arena_alloc(p->a, sizeof *s);
	if (!s)
		return oom(p), NULL;
	s->kind = (uint8_t)kind;
	s->line = line;
	return s;
}

static int ends_stmt(const parser *p)
{
	return p->tok.kind == PN_TSK_NEWLINE || p->tok.kind == PN_TSK_EOF || is_op(p, PN_OP_SEMI);
}

/* What may stand left of `=`: a name, an attribute, a subscript, or a
 * tuple of those (a list target is made a tuple: it means the same). */
static int check_target(parser *p, pn_ts_expr *e, int single)
{
	switch (e->kind) {
	case PN_TSE_NAME: case PN_TSE_ATTR: case PN_TSE_SUBSCRIPT:
		return 0;
	case PN_TSE_TUPLE: case PN_TSE_LIST:
		if (single)
			break;
		e->kind = PN_TSE_TUPLE;
		for (int32_t i = 0; i < e->n; i++)
			if (check_target(p, e->args[i], 0))
				return -1;
		return 0;
	default:
		break;
	}
	return fail(p, e->line, "cannot assign to this expression");
}

static int set_targets(parser *p, pn_ts_stmt *s, pn_ts_expr *target)
{
	if (!(s->targets = pn_arena_alloc(p->a, sizeof *s->targets)))
		return oom(p);
	s->targets[0] = target;
	s->n_targets = 1;
	return 0;
}

/* aug is an augmented assignment operator: its operator without "=", or NULL. */
static const char *aug_op(const parser *p)
{
	static const uint8_t aug[][2] = {
		{PN_OP_PLUSEQ, PN_OP_PLUS}, {PN_OP_MINUSEQ, PN_OP_MINUS},
		{PN_OP_STAREQ, PN_OP_STAR}, {PN_OP_SLASHEQ, PN_OP_SLASH},
		{PN_OP_DSLASHEQ, PN_OP_DSLASH}, {PN_OP_PERCENTEQ, PN_OP_PERCENT},
		{PN_OP_DSTAREQ, PN_OP_DSTAR}, {PN_OP_ATEQ, PN_OP_AT}, {PN_OP_AMPEQ, PN_OP_AMP},
		{PN_OP_PIPEEQ, PN_OP_PIPE}, {PN_OP_CARETEQ, PN_OP_CARET},
		{PN_OP_LSHIFTEQ, PN_OP_LSHIFT}, {PN_OP_RSHIFTEQ, PN_OP_RSHIFT},
	};
	for (size_t i = 0; i < sizeof aug / sizeof *aug; i++)
		if (is_op(p, aug[i][0]))
			return pn_ts_op_text(aug[i][1]);
	return NULL;
}

/* An expression statement, or an assignment of one of its three kinds. */
static pn_ts_stmt *parse_expr_stmt(parser *p)
{
	int32_t line = p->tok.line;
	pn_ts_expr *e = parse_testlist(p);
	if (!e)
		return NULL;
	const char *aug = aug_op(p);
	pn_ts_stmt *s = new_stmt(p, PN_TSS_EXPR, line);
	if (!s)
		return NULL;
	if (is_op(p, PN_OP_ASSIGN)) {
		vec targets = {0};
		s->kind = PN_TSS_ASSIGN;
		while (is_op(p, PN_OP_ASSIGN)) {
			if (check_target(p, e, 0) || push(p, &targets, &e, sizeof e) || advance(p))
				return NULL;
			if (!(e = parse_testlist(p)))
				return NULL;
		}
		s->targets = (pn_ts_expr **)targets.items;
		s->n_targets = targets.n;
	} else if (is_op(p, PN_OP_COLON)) {
		s->kind = PN_TSS_ASSIGN;
		if (check_target(p, e, 1) || set_targets(p, s, e) || advance(p) ||
		    !(s->type = parse_type(p)))
			return NULL;
		if (!is_op(p, PN_OP_ASSIGN))
			return unexpected(p, "'=' after the annotation"), NULL;
		if (advance(p) || !(e = parse_testlist(p)))
			return NULL;
	} else if (aug) {
		s->kind = PN_TSS_AUGASSIGN;
		s->op = aug;
		if (check_target(p, e, 1) || set_targets(p, s, e) || advance(p) ||
		    !(e = parse_testlist(p)))
			return NULL;
	}
	s->value = e;
	return s;
}

static pn_ts_stmt *parse_small(parser *p)
{
	int32_t line = p->tok.line;
	pn_ts_stmt *s;
	if (p->tok.kind != PN_TSK_KW || starts_expr(p))
		return parse_expr_stmt(p);
	switch (p->tok.sub) {
	case PN_KW_PASS:
		return (s = new_stmt(p, PN_TSS_PASS, line)) && !advance(p) ? s : NULL;
	case PN_KW_BREAK:
		return (s = new_stmt(p, PN_TSS_BREAK, line)) && !advance(p) ? s : NULL;
	case PN_KW_CONTINUE:
		return (s = new_stmt(p, PN_TSS_CONTINUE, line)) && !advance(p) ? s : NULL;
	case PN_KW_RETURN:
		if (!(s = new_stmt(p, PN_TSS_RETURN, line)) || advance(p))
			return NULL;
		if (!ends_stmt(p) && !(s->value = parse_testlist(p)))
			return NULL;
		return s;
	case PN_KW_RAISE:
		if (!(s = new_stmt(p, PN_TSS_RAISE, line)) || advance(p))
			return NULL;
		if (!ends_stmt(p) && !(s->value = parse_test(p)))
			return NULL;
		if (is_kw(p, PN_KW_FROM))
			return fail(p, line, "'raise ... from' is not supported"), NULL;
		return s;
	case PN_KW_ASSERT:
		if (!(s = new_stmt(p, PN_TSS_ASSERT, line)) || advance(p) ||
		    !(s->value = parse_test(p)))
			return NULL;
		if (is_op(p, PN_OP_COMMA) && (advance(p) || !(s->msg = parse_test(p))))
			return NULL;
		return s;
	default:
		break;
	}
	unexpected(p, "a statement");
	return NULL;
}

/* Simple statements separated by ';', up to the end of the line. */
static int parse_simple_line(parser *p, vec *out)
{
	for (;;) {
		pn_ts_stmt *s = parse_small(p);
		if (!s || push(p, out, &s, sizeof s))
			return -1;
		if (!is_op(p, PN_OP_SEMI))
			break;
		if (advance(p))
			return -1;
		if (p->tok.kind == PN_TSK_NEWLINE)
			break;
	}
	return expect_kind(p, PN_TSK_NEWLINE, "end of line");
}

/* The condition and body after `if` or `elif`, the lookahead being that word. */
static pn_ts_stmt *parse_cond_body(parser *p, int kind)
{
	pn_ts_stmt *s = new_stmt(p, kind, p->tok.line);
	if (!s || advance(p) || !(s->value = parse_test(p)) || expect_op(p, PN_OP_COLON) ||
	    parse_block(p, &s->body))
		return NULL;
	return s;
}

static int one_stmt_block(parser *p, pn_ts_block *b, pn_ts_stmt *s)
{
	if (!(b->stmts = pn_arena_alloc(p->a, sizeof *b->stmts)))
		return oom(p);
	b->stmts[0] = s;
	b->n = 1;
	return 0;
}

/* if/elif/else: an elif is an IF alone in the orelse of the one before,
 * read in a loop, but counted as the nested block it makes. */
static pn_ts_stmt *parse_if(parser *p)
{
	pn_ts_stmt *first = parse_cond_body(p, PN_TSS_IF), *s = first;
	int32_t links = 0;
	while (s && is_kw(p, PN_KW_ELIF)) {
		if (++p->blocks > PN_TS_LIMIT_DEPTH)
			return too_deep(p, p->tok.line, "blocks"), NULL;
		links++;
		pn_ts_stmt *next = parse_cond_body(p, PN_TSS_IF);
		if (!next || one_stmt_block(p, &s->orelse, next))
			return NULL;
		s = next;
	}
	if (s && is_kw(p, PN_KW_ELSE) &&
	    (advance(p) || expect_op(p, PN_OP_COLON) || parse_block(p, &s->orelse)))
		return NULL;
	p->blocks -= links;
	return s ? first : NULL;
}

static int no_else(parser *p, const char *what)
{
	if (is_kw(p, PN_KW_ELSE))
		return fail(p, p->tok.line, "'%s ... else' is not supported", what);
	return 0;
}

static pn_ts_stmt *parse_while(parser *p)
{
	pn_ts_stmt *s = parse_cond_body(p, PN_TSS_WHILE);
	return s && !no_else(p, "while") ? s : NULL;
}

static pn_ts_stmt *parse_for(parser *p)
{
	pn_ts_stmt *s = new_stmt(p, PN_TSS_FOR, p->tok.line);
	pn_ts_expr *target;
	if (!s || advance(p) || !(target = parse_list_of(p, parse_bitor)) ||
	    check_target(p, target, 0) || set_targets(p, s, target))
		return NULL;
	if (!is_kw(p, PN_KW_IN))
		return unexpected(p, "'in'"), NULL;
	if (advance(p) || !(s->value = parse_testlist(p)) || expect_op(p, PN_OP_COLON) ||
	    parse_block(p, &s->body) || no_else(p, "for"))
		return NULL;
	return s;
}

static pn_ts_stmt *parse_with(parser *p)
{
	pn_ts_stmt *s = new_stmt(p, PN_TSS_WITH, p->tok.line);
	pn_ts_expr *target;
	if (!s || advance(p) || !(s->value = parse_test(p)))
		return NULL;
	if (is_kw(p, PN_KW_AS) && (advance(p) || !(target = parse_bitor(p)) ||
				   check_target(p, target, 0) || set_targets(p, s, target)))
		return NULL;
	if (is_op(p, PN_OP_COMMA))
		return fail(p, p->tok.line, "'with' over several items is not supported"), NULL;
	if (expect_op(p, PN_OP_COLON) || parse_block(p, &s->body))
		return NULL;
	return s;
}

static int parse_stmt(parser *p, vec *out)
{
	pn_ts_stmt *s = NULL;
	if (p->tok.kind == PN_TSK_INDENT)
		return fail(p, p->tok.line, "unexpected indent");
	if (is_kw(p, PN_KW_IF))
		s = parse_if(p);
	else if (is_kw(p, PN_KW_WHILE))
		s = parse_while(p);
	else if (is_kw(p, PN_KW_FOR))
		s = parse_for(p);
	else if (is_kw(p, PN_KW_WITH))
		s = parse_with(p);
	else
		return parse_simple_line(p, out);
	return s ? push(p, out, &s, sizeof s) : -1;
}

/* The body after a ':': an indented block, or simple statements on the
 * same line. */
static int parse_block(parser *p, pn_ts_block *b)
{
	vec v = {0};
	if (p->tok.kind != PN_TSK_NEWLINE) {
		if (parse_simple_line(p, &v))
			return -1;
	} else {
		if (advance(p) || expect_kind(p, PN_TSK_INDENT, "an indented block"))
			return -1;
		if (++p->blocks > PN_TS_LIMIT_DEPTH)
			return too_deep(p, p->tok.line, "blocks");
		while (p->tok.kind != PN_TSK_DEDENT && p->tok.kind != PN_TSK_EOF)
			if (parse_stmt(p, &v))
				return -1;
		if (advance(p))
			return -1;
		p->blocks--;
	}
	b->stmts = (pn_ts_stmt **)v.items;
	b->n = v.n;
	return 0;
}

/* --- definitions ------------------------------------------------------------ */

static int parse_params(parser *p, pn_ts_func *f)
{
	vec v = {0};
	if (expect_op(p, PN_OP_LPAR))
		return -1;
	while (!is_op(p, PN_OP_RPAR)) {
		pn_ts_param prm = {0};
		if (is_op(p, PN_OP_STAR) || is_op(p, PN_OP_DSTAR) || is_op(p, PN_OP_SLASH))
			return fail(p, p->tok.line, "'%s' in parameters is not supported",
				    pn_ts_op_text(p->tok.sub));
		if (p->tok.kind != PN_TSK_NAME)
			return unexpected(p, "a parameter name");
		if (!(prm.name = copy_name(p)) || advance(p))
			return -1;
		if (is_op(p, PN_OP_COLON) && (advance(p) || !(prm.type = parse_type(p))))
			return -1;
		if (is_op(p, PN_OP_ASSIGN) && (advance(p) || !(prm.dflt = parse_test(p))))
			return -1;
		if (push(p, &v, &prm, sizeof prm))
			return -1;
		if (!is_op(p, PN_OP_COMMA))
			break;
		if (advance(p))
			return -1;
	}
	f->params = (pn_ts_param *)v.items;
	f->n_params = v.n;
	return expect_op(p, PN_OP_RPAR);
}

static int parse_def(parser *p, pn_ts_func *f)
{
	f->line = p->tok.line;
	if (advance(p))
		return -1;
	if (p->tok.kind != PN_TSK_NAME)
		return unexpected(p, "a function name");
	if (!(f->name = copy_name(p)) || advance(p) || parse_params(p, f))
		return -1;
	if (is_op(p, PN_OP_ARROW) && (advance(p) || !(f->ret_type = parse_type(p))))
		return -1;
	if (expect_op(p, PN_OP_COLON))
		return -1;
	return parse_block(p, &f->body);
}

/* `__annotations__["0"] = T` (the name after its first word): attr "0" of type T. */
static int parse_annotation(parser *p, pn_ts_attr *at)
{
	if (advance(p))
		return -1;
	if (p->tok.kind != PN_TSK_STR)
		return unexpected(p, "a string");
	if (memchr(p->tok.s, 0, p->tok.len))
		return fail(p, p->tok.line, "attribute name holds a NUL byte");
	at->name = p->tok.s;
	if (advance(p) || expect_op(p, PN_OP_RSQB) || expect_op(p, PN_OP_ASSIGN) ||
	    !(at->type = parse_type(p)))
		return -1;
	return expect_kind(p, PN_TSK_NEWLINE, "end of line");
}

/* A line `name : type`, `name : type = value` or `name = value`, in a class
 * body or (in_class 0) at the top of the file. */
static int parse_member(parser *p, pn_ts_attr *at, int in_class)
{
	if (!(at->name = copy_name(p)) || advance(p))
		return -1;
	if (in_class && is_op(p, PN_OP_LSQB) && !strcmp(at->name, "__annotations__"))
		return parse_annotation(p, at);
	if (is_op(p, PN_OP_COLON)) {
		if (advance(p) || !(at->type = parse_type(p)))
			return -1;
		if (is_op(p, PN_OP_ASSIGN) && (advance(p) || !(at->value = parse_testlist(p))))
			return -1;
	} else if (is_op(p, PN_OP_ASSIGN)) {
		if (advance(p) || !(at->value = parse_testlist(p)))
			return -1;
	} else {
		return unexpected(p, "':' or '='");
	}
	return expect_kind(p, PN_TSK_NEWLINE, "end of line");
}

static int parse_bases(parser *p, pn_ts_class *c)
{
	vec v = {0};
	if (advance(p))
		return -1;
	while (!is_op(p, PN_OP_RPAR)) {
		const char *base = parse_type(p);
		if (!base || push(p, &v, &base, sizeof base))
			return -1;
		if (!is_op(p, PN_OP_COMMA))
			break;
		if (advance(p))
			return -1;
	}
	c->bases = (const char **)v.items;
	c->n_bases = v.n;
	return expect_op(p, PN_OP_RPAR);
}

static int parse_class_body(parser *p, pn_ts_class *c)
{
	vec attrs = {0}, methods = {0};
	while (p->tok.kind != PN_TSK_DEDENT && p->tok.kind != PN_TSK_EOF) {
		if (is_kw(p, PN_KW_DEF)) {
			pn_ts_func f = {0};
			if (parse_def(p, &f) || push(p, &methods, &f, sizeof f))
				return -1;
		} else if (is_kw(p, PN_KW_PASS)) {
			if (advance(p) || expect_kind(p, PN_TSK_NEWLINE, "end of line"))
				return -1;
		} else if (p->tok.kind == PN_TSK_NAME) {
			pn_ts_attr at = {0};
			if (parse_member(p, &at, 1) || push(p, &attrs, &at, sizeof at))
				return -1;
		} else if (p->tok.kind == PN_TSK_INDENT) {
			return fail(p, p->tok.line, "unexpected indent");
		} else {
			return unexpected(p, "an attribute or a method");
		}
	}
	c->attrs = (pn_ts_attr *)attrs.items;
	c->n_attrs = attrs.n;
	c->methods = (pn_ts_func *)methods.items;
	c->n_methods = methods.n;
	return advance(p);
}

static int parse_class(parser *p, pn_ts_class *c)
{
	c->line = p->tok.line;
	if (advance(p))
		return -1;
	if (p->tok.kind != PN_TSK_NAME)
		return unexpected(p, "a class name");
	if (!(c->name = copy_name(p)) || advance(p))
		return -1;
	if (is_op(p, PN_OP_LPAR) && parse_bases(p, c))
		return -1;
	if (expect_op(p, PN_OP_COLON))
		return -1;
	if (is_kw(p, PN_KW_PASS))
		return advance(p) || expect_kind(p, PN_TSK_NEWLINE, "end of line") ? -1 : 0;
	if (expect_kind(p, PN_TSK_NEWLINE, "end of line") ||
	    expect_kind(p, PN_TSK_INDENT, "an indented class body"))
		return -1;
	return parse_class_body(p, c);
}

/* `import a.b` and `from a import b`: nothing to keep. */
static int skip_line(parser *p)
{
	while (p->tok.kind != PN_TSK_NEWLINE && p->tok.kind != PN_TSK_EOF)
		if (advance(p))
			return -1;
	return p->tok.kind == PN_TSK_NEWLINE ? advance(p) : 0;
}

static int parse_top(parser *p, pn_ts_file *out)
{
	vec classes = {0}, funcs = {0}, globals = {0};
	while (p->tok.kind != PN_TSK_EOF) {
		if (is_kw(p, PN_KW_IMPORT) || is_kw(p, PN_KW_FROM)) {
			if (skip_line(p))
				return -1;
		} else if (is_kw(p, PN_KW_CLASS)) {
			pn_ts_class c = {0};
			if (parse_class(p, &c) || push(p, &classes, &c, sizeof c))
				return -1;
		} else if (is_kw(p, PN_KW_DEF)) {
			pn_ts_func f = {0};
			if (parse_def(p, &f) || push(p, &funcs, &f, sizeof f))
				return -1;
		} else if (p->tok.kind == PN_TSK_NAME) {
			pn_ts_attr at = {0};
			if (parse_member(p, &at, 0) || push(p, &globals, &at, sizeof at))
				return -1;
		} else if (p->tok.kind == PN_TSK_INDENT) {
			return fail(p, p->tok.line, "unexpected indent");
		} else {
			return unexpected(p, "a class, a function or an assignment");
		}
	}
	out->classes = (pn_ts_class *)classes.items;
	out->n_classes = classes.n;
	out->funcs = (pn_ts_func *)funcs.items;
	out->n_funcs = funcs.n;
	out->globals = (pn_ts_attr *)globals.items;
	out->n_globals = globals.n;
	return 0;
}

int pn_ts_parse(const char *src, size_t len, pn_arena *a, pn_ts_file *out, char *err)
{
	memset(out, 0, sizeof *out);
	if (len > PN_TS_LIMIT_SOURCE)
		return pn_fail(err, "line 1: source of %zu bytes (limit %zu)", len,
			       PN_TS_LIMIT_SOURCE);
	if (!src && len)
		return pn_fail(err, "line 1: no source");
	parser p;
	memset(&p, 0, sizeof p);
	p.a = a;
	p.err = err;
	pn_ts_lex_init(&p.lx, src, len, a, err);
	pn_ts_file f = {0};
	if (pn_ts_lex_next(&p.lx, &p.tok) || parse_top(&p, &f))
		return -1;
	*out = f;
	return 0;
}
