/*
 * test_ts_parse.c - model/ts_parse.c: TorchScript source as torch.jit.save
 * writes it under code/ (the sources below are real ones, shortened) parsed
 * into the tree of ts_syntax.h, and hostile sources refused with a one-line
 * "line N: ..." error, never a crash.
 *
 * Expressions and statements are checked through a rendering of the tree
 * as S-expressions, "(+ a (* b c))", which pins precedence, associativity
 * and every node kind in one string.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "common/err.h"
#include "model/ts_syntax.h"

/* --- rendering -------------------------------------------------------------- */

typedef struct out {
	char buf[8192];
	size_t n;
} out;

static void put(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(out *o, const char *fmt, ...)
{
	if (o->n + 1 >= sizeof o->buf)
		return;
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(o->buf + o->n, sizeof o->buf - o->n, fmt, ap);
	va_end(ap);
	if (k > 0)
		o->n += (size_t)k;
	if (o->n >= sizeof o->buf)
		o->n = sizeof o->buf - 1;
}

static void render_expr(out *o, const pn_ts_expr *e)
{
	if (!e) {
		put(o, "_");
		return;
	}
	switch (e->kind) {
	case PN_TSE_NAME: put(o, "%s", e->s); break;
	case PN_TSE_INT: put(o, "%lld", (long long)e->i); break;
	case PN_TSE_FLOAT: put(o, "%g", e->f); break;
	case PN_TSE_NONE: put(o, "None"); break;
	case PN_TSE_BOOL: put(o, "%s", e->i ? "True" : "False"); break;
	case PN_TSE_STR:
		put(o, "\"");
		for (size_t i = 0; i < e->len; i++) {
			unsigned char c = (unsigned char)e->s[i];
			if (c >= ' ' && c < 0x7f && c != '\\')
				put(o, "%c", c);
			else
				put(o, "\\x%02x", c);
		}
		put(o, "\"");
		break;
	case PN_TSE_ATTR:
		put(o, "(. ");
		render_expr(o, e->a);
		put(o, " %s)", e->s);
		break;
	case PN_TSE_CALL:
		put(o, "(call ");
		render_expr(o, e->a);
		for (int32_t i = 0; i < e->n; i++) {
			put(o, " ");
			if (i >= e->n_pos)
				put(o, "%s=", e->kw_names[i - e->n_pos]);
			render_expr(o, e->args[i]);
		}
		put(o, ")");
		break;
	case PN_TSE_SUBSCRIPT:
		put(o, "([] ");
		render_expr(o, e->a);
		put(o, " ");
		render_expr(o, e->b);
		put(o, ")");
		break;
	case PN_TSE_SLICE: case PN_TSE_TUPLE: case PN_TSE_LIST: case PN_TSE_DICT: {
		static const char *const name[] = {
			[PN_TSE_SLICE] = ":", [PN_TSE_TUPLE] = "tuple", [PN_TSE_LIST] = "list",
			[PN_TSE_DICT] = "dict"};
		int32_t n = e->kind == PN_TSE_DICT ? 2 * e->n : e->n;
		put(o, "(%s", name[e->kind]);
		for (int32_t i = 0; i < n; i++) {
			put(o, " ");
			render_expr(o, e->args[i]);
		}
		put(o, ")");
		break;
	}
	case PN_TSE_UNARY:
		put(o, "(%s ", e->op);
		render_expr(o, e->a);
		put(o, ")");
		break;
	case PN_TSE_BINARY: case PN_TSE_COMPARE: case PN_TSE_BOOLOP:
		put(o, "(%s ", e->op);
		render_expr(o, e->a);
		put(o, " ");
		render_expr(o, e->b);
		put(o, ")");
		break;
	case PN_TSE_IFEXP:
		put(o, "(if ");
		render_expr(o, e->a);
		put(o, " ");
		render_expr(o, e->b);
		put(o, " ");
		render_expr(o, e->c);
		put(o, ")");
		break;
	default:
		put(o, "?%d", e->kind);
	}
}

static void render_block(out *o, const pn_ts_block *b);

static void render_stmt(out *o, const pn_ts_stmt *s)
{
	switch (s->kind) {
	case PN_TSS_ASSIGN: case PN_TSS_AUGASSIGN:
		put(o, "(%s%s", s->kind == PN_TSS_AUGASSIGN ? s->op : "", "=");
		for (int32_t i = 0; i < s->n_targets; i++) {
			put(o, " ");
			render_expr(o, s->targets[i]);
		}
		if (s->type)
			put(o, " :%s", s->type);
		put(o, " ");
		render_expr(o, s->value);
		put(o, ")");
		break;
	case PN_TSS_EXPR: render_expr(o, s->value); break;
	case PN_TSS_RETURN:
		put(o, "(return");
		if (s->value) {
			put(o, " ");
			render_expr(o, s->value);
		}
		put(o, ")");
		break;
	case PN_TSS_IF: case PN_TSS_WHILE:
		put(o, "(%s ", s->kind == PN_TSS_IF ? "if" : "while");
		render_expr(o, s->value);
		render_block(o, &s->body);
		if (s->orelse.n)
			render_block(o, &s->orelse);
		put(o, ")");
		break;
	case PN_TSS_FOR: case PN_TSS_WITH:
		put(o, "(%s ", s->kind == PN_TSS_FOR ? "for" : "with");
		if (s->n_targets) {
			render_expr(o, s->targets[0]);
			put(o, " ");
		}
		render_expr(o, s->value);
		render_block(o, &s->body);
		put(o, ")");
		break;
	case PN_TSS_BREAK: put(o, "break"); break;
	case PN_TSS_CONTINUE: put(o, "continue"); break;
	case PN_TSS_PASS: put(o, "pass"); break;
	case PN_TSS_RAISE:
		put(o, "(raise ");
		render_expr(o, s->value);
		put(o, ")");
		break;
	case PN_TSS_ASSERT:
		put(o, "(assert ");
		render_expr(o, s->value);
		put(o, " ");
		render_expr(o, s->msg);
		put(o, ")");
		break;
	default:
		put(o, "?stmt%d", s->kind);
	}
}

static void render_block(out *o, const pn_ts_block *b)
{
	put(o, " {");
	for (int32_t i = 0; i < b->n; i++) {
		if (i)
			put(o, "; ");
		render_stmt(o, b->stmts[i]);
	}
	put(o, "}");
}

static const char *show_expr(out *o, const pn_ts_expr *e)
{
	o->n = 0;
	o->buf[0] = 0;
	render_expr(o, e);
	return o->buf;
}

static const char *show_stmt(out *o, const pn_ts_stmt *s)
{
	o->n = 0;
	o->buf[0] = 0;
	render_stmt(o, s);
	return o->buf;
}

/* --- helpers ---------------------------------------------------------------- */

static int parse(pn_arena *a, const char *src, pn_ts_file *f, char *err)
{
	err[0] = 0;
	return pn_ts_parse(src, strlen(src), a, f, err);
}

/* err is "line <line>: ..." (line -1: any line), one line. */
static int is_line_error(const char *err, int line)
{
	int n = 0, got = -1;
	if (sscanf(err, "line %d: %n", &got, &n) != 1 || n == 0 || !err[n])
		return 0;
	if (strchr(err, '\n') || got < 1)
		return 0;
	return line < 0 || got == line;
}

/* src fails on line `line` with a message holding `what`. */
static void assert_fails(const char *src, size_t len, int line, const char *what)
{
	pn_arena a;
	pn_ts_file f;
	char err[PN_ERRLEN] = "";
	pn_arena_init(&a, 0);
	char *copy = malloc(len ? len : 1);
	assert_non_null(copy);
	memcpy(copy, src, len);
	int r = pn_ts_parse(copy, len, &a, &f, err);
	if (r != -1 || !is_line_error(err, line) || !strstr(err, what))
		fail_msg("source %.60s...: r=%d, err '%s', wanted line %d '%s'", src, r, err, line,
			 what);
	assert_int_equal(f.n_classes + f.n_funcs + f.n_globals, 0);
	free(copy);
	pn_arena_free(&a);
}

static void assert_fails_str(const char *src, int line, const char *what)
{
	assert_fails(src, strlen(src), line, what);
}

/* Parses src[0..len) from a buffer of exactly len bytes, so that a read
 * past the end is the sanitizer's to see: 0 or -1 with a good message. */
static int parse_exact(const char *src, size_t len, size_t limit)
{
	pn_arena a;
	pn_ts_file f;
	char err[PN_ERRLEN] = "";
	pn_arena_init(&a, limit);
	char *copy = malloc(len ? len : 1);
	assert_non_null(copy);
	if (len)
		memcpy(copy, src, len);
	int r = pn_ts_parse(copy, len, &a, &f, err);
	if (r != 0 && !is_line_error(err, -1))
		fail_msg("prefix of %zu bytes: r=%d, err '%s'", len, r, err);
	free(copy);
	pn_arena_free(&a);
	return r;
}

static const pn_ts_attr *find_attr(const pn_ts_class *c, const char *name)
{
	for (int32_t i = 0; i < c->n_attrs; i++)
		if (!strcmp(c->attrs[i].name, name))
			return &c->attrs[i];
	return NULL;
}

/* --- sources ---------------------------------------------------------------- */

/* resnet18 traced: code/__torch__/torch/nn/modules/conv.py, one class of it. */
static const char conv_src[] =
	"class Conv2d(Module):\n"
	"  __parameters__ = [\"weight\", ]\n"
	"  __buffers__ = []\n"
	"  weight : Tensor\n"
	"  training : bool\n"
	"  _is_full_backward_hook : Optional[bool]\n"
	"  def forward(self: __torch__.torch.nn.modules.conv.Conv2d,\n"
	"    x: Tensor) -> Tensor:\n"
	"    weight = self.weight\n"
	"    input = torch._convolution(x, weight, None, [2, 2], [3, 3], [1, 1], False, [0, 0], 1,"
	" False, False, True, True)\n"
	"    return input\n";

/* A scripted module: annotate, uninitialized, NumToTensor, raise, assert,
 * escapes of both quote kinds, a type over two lines, __annotations__. */
static const char flow_src[] =
	"class Flow(Module):\n"
	"  __parameters__ = []\n"
	"  __buffers__ = []\n"
	"  training : bool\n"
	"  names : List[str]\n"
	"  eps : Final[float] = 1.0000000000000001e-05\n"
	"  __annotations__[\"0\"] = __torch__.torch.nn.modules.linear.Linear\n"
	"  def forward(self: __torch__.Flow,\n"
	"    x: Tensor,\n"
	"    hx: Optional[Tuple[Tensor,   # h\n"
	"                       Tensor]]=None) -> Tuple[Tensor, List[int]]:\n"
	"    acc = annotate(List[int], [])\n"
	"    y = uninitialized(Tensor)\n"
	"    if torch.__is__(hx, None):\n"
	"      y0 = ops.prim.NumToTensor(torch.size(x, 0))\n"
	"    else:\n"
	"      hx0 = unchecked_cast(Tuple[Tensor, Tensor], hx)\n"
	"      y0 = (hx0)[0]\n"
	"    assert torch.__isnot__(y0, None), \"y0 \\\"must\\\" be set\"\n"
	"    if torch.gt(torch.len(acc), 100):\n"
	"      raise __torch__.torch.jit.Error('too big: \\x01 tab\\t \"q\" \\\\ \\101 \\'')\n"
	"    else:\n"
	"      pass\n"
	"    _0 = __torch__.torch.nn.functional.relu(x, False, )\n"
	"    _1, _2, = (y0, CONSTANTS.c0)\n"
	"    return (_0, acc)\n";

/* --- cases ------------------------------------------------------------------ */

/* 1. A traced Conv2d: the class, its attributes and their types, the
 *    method's parameters over two lines, the call's positional arguments. */
static void test_conv2d(void **state)
{
	(void)state;
	pn_arena a;
	pn_ts_file f;
	char err[PN_ERRLEN];
	out o;
	pn_arena_init(&a, 0);
	assert_int_equal(parse(&a, conv_src, &f, err), 0);
	assert_int_equal(f.n_classes, 1);
	assert_int_equal(f.n_funcs, 0);
	const pn_ts_class *c = &f.classes[0];
	assert_string_equal(c->name, "Conv2d");
	assert_int_equal(c->line, 1);
	assert_int_equal(c->n_bases, 1);
	assert_string_equal(c->bases[0], "Module");
	assert_int_equal(c->n_attrs, 5);
	assert_string_equal(c->attrs[0].name, "__parameters__");
	assert_null(c->attrs[0].type);
	assert_string_equal(show_expr(&o, c->attrs[0].value), "(list \"weight\")");
	assert_string_equal(show_expr(&o, c->attrs[1].value), "(list)");
	assert_string_equal(c->attrs[2].name, "weight");
	assert_string_equal(c->attrs[2].type, "Tensor");
	assert_null(c->attrs[2].value);
	assert_string_equal(c->attrs[3].type, "bool");
	assert_string_equal(c->attrs[4].name, "_is_full_backward_hook");
	assert_string_equal(c->attrs[4].type, "Optional[bool]");

	assert_int_equal(c->n_methods, 1);
	const pn_ts_func *m = &c->methods[0];
	assert_string_equal(m->name, "forward");
	assert_int_equal(m->line, 7);
	assert_int_equal(m->n_params, 2);
	assert_string_equal(m->params[0].name, "self");
	assert_string_equal(m->params[0].type, "__torch__.torch.nn.modules.conv.Conv2d");
	assert_string_equal(m->params[1].name, "x");
	assert_string_equal(m->params[1].type, "Tensor");
	assert_null(m->params[1].dflt);
	assert_string_equal(m->ret_type, "Tensor");

	assert_int_equal(m->body.n, 3);
	const pn_ts_stmt *s = m->body.stmts[1];
	assert_int_equal(s->kind, PN_TSS_ASSIGN);
	assert_int_equal(s->line, 10);
	assert_int_equal(s->n_targets, 1);
	assert_int_equal(s->targets[0]->kind, PN_TSE_NAME);
	assert_string_equal(s->targets[0]->s, "input");
	const pn_ts_expr *call = s->value;
	assert_int_equal(call->kind, PN_TSE_CALL);
	assert_string_equal(show_expr(&o, call->a), "(. torch _convolution)");
	assert_int_equal(call->n, 13);
	assert_int_equal(call->n_pos, 13);
	static const uint8_t kinds[13] = {
		PN_TSE_NAME, PN_TSE_NAME, PN_TSE_NONE, PN_TSE_LIST, PN_TSE_LIST, PN_TSE_LIST,
		PN_TSE_BOOL, PN_TSE_LIST, PN_TSE_INT, PN_TSE_BOOL, PN_TSE_BOOL, PN_TSE_BOOL,
		PN_TSE_BOOL};
	for (int i = 0; i < 13; i++)
		assert_int_equal(call->args[i]->kind, kinds[i]);
	assert_int_equal(call->args[3]->n, 2);
	assert_int_equal(call->args[3]->args[0]->i, 2);
	assert_int_equal(call->args[8]->i, 1);
	assert_int_equal(call->args[6]->i, 0);
	assert_int_equal(call->args[12]->i, 1);
	assert_string_equal(show_stmt(&o, m->body.stmts[2]), "(return input)");
	pn_arena_free(&a);
}

/* 2. Expressions: precedence and associativity, comparisons (chained, is
 *    not, not in), the conditional, subscripts and slices, calls with
 *    keywords and trailing commas, literals, tuple targets. */
static void test_expressions(void **state)
{
	(void)state;
	static const struct {
		const char *src, *want;
	} cases[] = {
		{"a + b * c ** -d", "(+ a (* b (** c (- d))))"},
		{"a - b - c", "(- (- a b) c)"},
		{"a ** b ** c", "(** a (** b c))"},
		{"-2 ** 2", "(- (** 2 2))"},
		{"not a and b or c", "(or (and (not a) b) c)"},
		{"a or b and not not c", "(or a (and b (not (not c))))"},
		{"a < b <= c != d", "(and (and (< a b) (<= b c)) (!= c d))"},
		{"x is not None and y not in z", "(and (is not x None) (not in y z))"},
		{"x is y or y in z", "(or (is x y) (in y z))"},
		{"x if c else y if d else w", "(if c x (if d y w))"},
		{"a | b ^ c & d << 1 + 2 // 3 % e @ f",
		 "(| a (^ b (& c (<< d (+ 1 (@ (% (// 2 3) e) f))))))"},
		{"~x - -1.5e-3 + +y", "(+ (- (~ x) -0.0015) (+ y))"},
		{"x[:, 0]", "([] x (tuple (: _ _ _) 0))"},
		{"x[0:2:1]", "([] x (: 0 2 1))"},
		{"x[1:, :-1, ::2]", "([] x (tuple (: 1 _ _) (: _ -1 _) (: _ _ 2)))"},
		{"x[i,]", "([] x (tuple i))"},
		{"(hx1)[0]", "([] hx1 0)"},
		{"f(a, b=1, c=[1, 2], )", "(call f a b=1 c=(list 1 2))"},
		{"torch.zeros([4, n, 16], dtype=_2, layout=None, device=_3)",
		 "(call (. torch zeros) (list 4 n 16) dtype=_2 layout=None device=_3)"},
		{"(seq).forward(x, )", "(call (. seq forward) x)"},
		{"__torch__.torch.nn.functional.relu(x, False, )",
		 "(call (. (. (. (. __torch__ torch) nn) functional) relu) x False)"},
		{"a.b(c)[d].e", "(. ([] (call (. a b) c) d) e)"},
		{"{\"a\": 1, 2: (3,), }", "(dict \"a\" 1 2 (tuple 3))"},
		{"((), [], {}, (x))", "(tuple (tuple) (list) (dict) x)"},
		{"\"a\" 'b\\'c' \"\\x41\\101\\n\"", "\"ab'cAA\\x0a\""},
		{"-9223372036854775808", "-9223372036854775808"},
		{"9223372036854775807", "9223372036854775807"},
		{"- -5", "5"},
		{"[0x1F, 0o17, 0b101, 00, -4., 0., .5, 1e3, inf]",
		 "(list 31 15 5 0 -4 0 0.5 1000 inf)"},
		{"True if not False else None", "(if (not False) True None)"},
		{"f(g(h(x)))[0]", "([] (call f (call g (call h x))) 0)"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		pn_arena a;
		pn_ts_file f;
		char err[PN_ERRLEN], src[512];
		out o;
		pn_arena_init(&a, 0);
		snprintf(src, sizeof src, "e = %s\n", cases[i].src);
		if (parse(&a, src, &f, err))
			fail_msg("%s: %s", cases[i].src, err);
		assert_int_equal(f.n_globals, 1);
		assert_string_equal(f.globals[0].name, "e");
		const char *got = show_expr(&o, f.globals[0].value);
		if (strcmp(got, cases[i].want))
			fail_msg("%s: got %s, want %s", cases[i].src, got, cases[i].want);
		pn_arena_free(&a);
	}

	/* Exact values, and the chain's middle operand shared. */
	pn_arena a;
	pn_ts_file f;
	char err[PN_ERRLEN];
	out o;
	pn_arena_init(&a, 0);
	assert_int_equal(parse(&a, "x = 1.0000000000000001e-05\ny = a < b < c\n", &f, err), 0);
	assert_true(f.globals[0].value->f == 1.0000000000000001e-05);
	const pn_ts_expr *chain = f.globals[1].value;
	assert_ptr_equal(chain->a->b, chain->b->a);

	/* Targets: tuples (a trailing comma, nested, a list made a tuple),
	 * several targets, attributes, subscripts, annotations, augmented. */
	static const char body[] =
		"def f(x):\n"
		"  _0, _1, = x\n"
		"  a, (b, c) = y\n"
		"  [p, q] = r\n"
		"  a = b = 1, 2\n"
		"  x.y = 2\n"
		"  x[0] += 1\n"
		"  n //= 2\n"
		"  l : List[int] = []\n"
		"  f(x)\n";
	static const char *const want[] = {
		"(= (tuple _0 _1) x)", "(= (tuple a (tuple b c)) y)", "(= (tuple p q) r)",
		"(= a b (tuple 1 2))", "(= (. x y) 2)", "(+= ([] x 0) 1)", "(//= n 2)",
		"(= l :List[int] (list))", "(call f x)"};
	assert_int_equal(parse(&a, body, &f, err), 0);
	assert_int_equal(f.n_funcs, 1);
	assert_int_equal(f.funcs[0].body.n, 9);
	for (int i = 0; i < 9; i++)
		assert_string_equal(show_stmt(&o, f.funcs[0].body.stmts[i]), want[i]);
	assert_int_equal(f.funcs[0].body.stmts[5]->kind, PN_TSS_AUGASSIGN);
	assert_string_equal(f.funcs[0].body.stmts[5]->op, "+");
	pn_arena_free(&a);

	static const char *const bad[] = {
		"e = f(a=1, b)\n", "e = f(1 + 1 = 2)\n", "e = a not b\n", "e = a if b\n",
		"e = x[]\n", "e = {1, 2}\n", "e = f(*a)\n", "e = 9223372036854775808\n",
		"e = -9223372036854775808 ** 2\n", "e = 18446744073709551616\n", "e = 012\n",
		"e = 1_000\n", "e = 3j\n", "e = 1e\n", "e = 0x\n", "e = a.1\n", "e = lambda: 1\n",
		"e = x := 1\n", "e = [i for i in x]\n", "e = \"\\x4\"\n", "e = '\\777'\n",
		"e = a $ b\n", "e = ...\n"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		assert_fails_str(bad[i], 1, "");
	assert_fails_str("def f():\n  f(x) = 1\n", 2, "cannot assign");
	assert_fails_str("def f():\n  a, b += 1\n", 2, "cannot assign");
	assert_fails_str("def f():\n  x : int\n", 2, "expected '='");
}

/* 3. Control flow: if/elif/else chains, for and while with break and
 *    continue, blocks nested and closed several levels at once, with,
 *    one-line bodies, return with and without a value. */
static void test_control_flow(void **state)
{
	(void)state;
	static const char src[] =
		"def g(self, n: int) -> int:\n"
		"  i = 0\n"
		"  while i < n:\n"
		"    if i == 1:\n"
		"      i += 2\n"
		"      continue\n"
		"    elif i == 3:\n"
		"      break\n"
		"    elif i > 10:\n"
		"      pass\n"
		"    else:\n"
		"      for j, k in pairs:\n"
		"        if j:\n"
		"          if k:\n"
		"\n"
		"            return j\n"
		"# a comment at column 0 between blocks\n"
		"          # and one deeper\n"
		"  return i\n"
		"def h(a):\n"
		"  if a: return 1\n"
		"  else: x = 2; return\n"
		"  with _0 as c:\n"
		"    y = c\n"
		"  with _1:\n"
		"    pass\n";
	pn_arena a;
	pn_ts_file f;
	char err[PN_ERRLEN];
	out o;
	pn_arena_init(&a, 0);
	if (parse(&a, src, &f, err))
		fail_msg("%s", err);
	assert_int_equal(f.n_funcs, 2);
	const pn_ts_func *g = &f.funcs[0];
	assert_int_equal(g->n_params, 2);
	assert_null(g->params[0].type);
	assert_string_equal(g->params[1].type, "int");
	assert_string_equal(g->ret_type, "int");
	assert_int_equal(g->body.n, 3);
	assert_string_equal(show_stmt(&o, g->body.stmts[1]),
			    "(while (< i n) {(if (== i 1) {(+= i 2); continue}"
			    " {(if (== i 3) {break} {(if (> i 10) {pass}"
			    " {(for (tuple j k) pairs {(if j {(if k {(return j)})})})})})})})");
	assert_int_equal(g->body.stmts[1]->line, 3);
	assert_int_equal(g->body.stmts[2]->line, 19);
	assert_string_equal(show_stmt(&o, g->body.stmts[2]), "(return i)");
	/* elif is an IF alone in the orelse of the IF before */
	const pn_ts_stmt *if1 = g->body.stmts[1]->body.stmts[0];
	assert_int_equal(if1->orelse.n, 1);
	assert_int_equal(if1->orelse.stmts[0]->kind, PN_TSS_IF);
	assert_int_equal(if1->orelse.stmts[0]->line, 7);

	const pn_ts_func *h = &f.funcs[1];
	assert_int_equal(h->body.n, 3);
	assert_string_equal(show_stmt(&o, h->body.stmts[0]),
			    "(if a {(return 1)} {(= x 2); (return)})");
	assert_string_equal(show_stmt(&o, h->body.stmts[1]), "(with c _0 {(= y c)})");
	assert_int_equal(h->body.stmts[2]->kind, PN_TSS_WITH);
	assert_int_equal(h->body.stmts[2]->n_targets, 0);
	pn_arena_free(&a);

	assert_fails_str("def f():\n  for x in y:\n    pass\n  else:\n    pass\n", 4,
			 "not supported");
	assert_fails_str("def f():\n  else:\n    pass\n", 2, "'else'");
	assert_fails_str("def f():\n  if x:\n  return\n", 3, "indented block");
	assert_fails_str("def f():\n  if x\n    return\n", 2, "':'");
	assert_fails_str("def f():\n  return 1\n    return 2\n", 3, "unexpected indent");
	assert_fails_str("def f():\n  def g():\n    pass\n", 2, "'def'");
}

/* 4. A scripted module: annotate, uninitialized, unchecked_cast, raise,
 *    assert, string escapes, a parameter type spread over two lines with a
 *    comment, a submodule declared through __annotations__. */
static void test_scripted(void **state)
{
	(void)state;
	pn_arena a;
	pn_ts_file f;
	char err[PN_ERRLEN];
	out o;
	pn_arena_init(&a, 0);
	if (parse(&a, flow_src, &f, err))
		fail_msg("%s", err);
	const pn_ts_class *c = &f.classes[0];
	assert_string_equal(c->name, "Flow");
	const pn_ts_attr *eps = find_attr(c, "eps");
	assert_non_null(eps);
	assert_string_equal(eps->type, "Final[float]");
	assert_int_equal(eps->value->kind, PN_TSE_FLOAT);
	assert_true(eps->value->f == 1.0000000000000001e-05);
	const pn_ts_attr *sub = find_attr(c, "0");
	assert_non_null(sub);
	assert_string_equal(sub->type, "__torch__.torch.nn.modules.linear.Linear");
	assert_null(sub->value);
	assert_string_equal(find_attr(c, "names")->type, "List[str]");

	const pn_ts_func *m = &c->methods[0];
	assert_int_equal(m->n_params, 3);
	assert_string_equal(m->params[2].name, "hx");
	assert_string_equal(m->params[2].type, "Optional[Tuple[Tensor, Tensor]]");
	assert_int_equal(m->params[2].dflt->kind, PN_TSE_NONE);
	assert_string_equal(m->ret_type, "Tuple[Tensor, List[int]]");

	const pn_ts_block *b = &m->body;
	assert_int_equal(b->n, 8);
	assert_string_equal(show_stmt(&o, b->stmts[0]),
			    "(= acc (call annotate ([] List int) (list)))");
	assert_string_equal(show_stmt(&o, b->stmts[1]), "(= y (call uninitialized Tensor))");
	assert_string_equal(show_stmt(&o, b->stmts[2]),
			    "(if (call (. torch __is__) hx None)"
			    " {(= y0 (call (. (. ops prim) NumToTensor)"
			    " (call (. torch size) x 0)))}"
			    " {(= hx0 (call unchecked_cast ([] Tuple (tuple Tensor Tensor)) hx));"
			    " (= y0 ([] hx0 0))})");
	assert_string_equal(show_stmt(&o, b->stmts[3]),
			    "(assert (call (. torch __isnot__) y0 None) \"y0 \"must\" be set\")");
	const pn_ts_stmt *r = b->stmts[4]->body.stmts[0];
	assert_int_equal(r->kind, PN_TSS_RAISE);
	assert_int_equal(r->line, 21);
	const pn_ts_expr *msg = r->value->args[0];
	assert_int_equal(msg->kind, PN_TSE_STR);
	static const char want[] = "too big: \x01 tab\t \"q\" \\ A '";
	assert_int_equal(msg->len, sizeof want - 1);
	assert_memory_equal(msg->s, want, sizeof want);   /* NUL-terminated too */
	assert_string_equal(show_stmt(&o, b->stmts[5]),
			    "(= _0 (call (. (. (. (. __torch__ torch) nn) functional) relu)"
			    " x False))");
	assert_string_equal(show_stmt(&o, b->stmts[6]),
			    "(= (tuple _1 _2) (tuple y0 (. CONSTANTS c0)))");
	assert_string_equal(show_stmt(&o, b->stmts[7]), "(return (tuple _0 acc))");

	/* An escape makes a NUL byte inside a string: len counts it. */
	assert_int_equal(parse(&a, "s = \"a\\000b\"\n", &f, err), 0);
	assert_int_equal(f.globals[0].value->len, 3);
	assert_memory_equal(f.globals[0].value->s, "a\0b", 4);
	pn_arena_free(&a);
}

/* 5. Hostile inputs: every prefix of a valid file, and every byte of it
 *    replaced by troublemakers, parses or fails with "line N:"; the
 *    classic breakages name their line. */
static void test_hostile(void **state)
{
	(void)state;
	const char *const srcs[] = {conv_src, flow_src};
	static const char subst[] = {'\n', '\t', ' ', '(', ']', '"', '\\', '#', ':', '-', '\0',
				     '\r', (char)0xff};
	for (size_t s = 0; s < 2; s++) {
		size_t len = strlen(srcs[s]);
		int parsed = 0;
		for (size_t k = 0; k <= len; k++)
			parsed += parse_exact(srcs[s], k, 0) == 0;
		assert_true(parsed > 0);
		assert_int_equal(parse_exact(srcs[s], len, 0), 0);
		char *m = malloc(len);
		assert_non_null(m);
		for (size_t k = 0; k < len; k++)
			for (size_t j = 0; j < sizeof subst; j++) {
				memcpy(m, srcs[s], len);
				m[k] = subst[j];
				parse_exact(m, len, 0);
			}
		free(m);
	}

	/* tabs and spaces: the same on every line is fine, a mix is not */
	pn_arena a;
	pn_ts_file f;
	char err[PN_ERRLEN];
	pn_arena_init(&a, 0);
	assert_int_equal(parse(&a, "def f(x):\n\tif x:\n\t\treturn 1\n\treturn 2\n", &f, err), 0);
	assert_int_equal(parse(&a, "def f(x):\n \tif x:\n \t  return 1\n \treturn 2\n", &f, err),
			 0);
	pn_arena_free(&a);
	assert_fails_str("def f(x):\n\tif x:\n\t\treturn 1\n        return 2\n", 4,
			 "tabs and spaces");
	assert_fails_str("def f(x):\n        if x:\n\t\treturn 1\n", 3, "tabs and spaces");
	assert_fails_str("def f(x):\n  \tx = 1\n\t  y = 2\n", 3, "tabs and spaces");

	assert_fails_str("x = 1\ns = \"abc\ny = 2\n", 2, "unterminated string");
	assert_fails_str("s = 'abc", 1, "unterminated string");
	assert_fails_str("s = 'abc\\", 1, "unterminated string");
	assert_fails_str("s = \"\"\"abc\n\ndef", 1, "unterminated string");
	assert_fails_str("x = (1,\n  2\n", 1, "never closed");
	assert_fails_str("x = 1)\n", 1, "unmatched ')'");
	assert_fails_str("x = [1,\n 2)\n", 2, "does not match '['");
	assert_fails_str("def f():\n    if x:\n        pass\n  return 1\n", 4, "no outer block");
	assert_fails_str("  x = 1\n", 1, "unexpected indent");
	assert_fails("x = 1\0\n", 7, 1, "NUL");
	assert_fails_str("x = `a`\n", 1, "unexpected character '`'");
	assert_fails_str("x = 1 \\ 2\n", 1, "'\\'");
	assert_fails_str("class A(Module):\n  x + 1\n", 2, "':' or '='");
	assert_fails_str("class A(Module):\n  x : int\ny = 1 2\n", 3, "end of line");
	assert_fails_str("for x in y:\n  pass\n", 1, "a class, a function");

	/* 10,000 nested parentheses: refused at the limit, no deep recursion */
	size_t n = 10000;
	char *deep = malloc(2 * n + 16);
	assert_non_null(deep);
	memcpy(deep, "x = ", 4);
	memset(deep + 4, '(', n);
	deep[4 + n] = '1';
	memset(deep + 5 + n, ')', n);
	memcpy(deep + 5 + 2 * n, "\n", 2);
	assert_fails_str(deep, 1, "deeper than 200");
	free(deep);
}

/* Builds "x = " + n times `pre` + mid + n times `post` + "\n". */
static char *nest(size_t n, const char *pre, const char *mid, const char *post)
{
	size_t lp = strlen(pre), lm = strlen(mid), lq = strlen(post);
	char *s = malloc(8 + n * (lp + lq) + lm), *q = s;
	assert_non_null(s);
	q += sprintf(q, "x = ");
	for (size_t i = 0; i < n; i++, q += lp)
		memcpy(q, pre, lp);
	memcpy(q, mid, lm);
	q += lm;
	for (size_t i = 0; i < n; i++, q += lq)
		memcpy(q, post, lq);
	strcpy(q, "\n");
	return s;
}

/* 6. Limits: nesting of every kind is refused past PN_TS_LIMIT_DEPTH,
 *    including the trees built without recursion (a + a + ..., a.a.a...,
 *    elif chains), and accepted below it; a small arena ends in "out of
 *    memory", not a crash. */
static void test_limits(void **state)
{
	(void)state;
	static const struct {
		const char *pre, *mid, *post;
	} kinds[] = {
		{"(", "1", ")"}, {"[", "1", "]"}, {"-", "x", ""}, {"not ", "x", ""},
		{"f(", "1", ")"}, {"x[", "1", "]"}, {"a if b else ", "c", ""}, {"a ** ", "b", ""},
		{"", "a", " + a"}, {"", "a", ".a"}, {"", "a", "[0]"}, {"", "a", "()"},
		{"", "a", " < a"}, {"", "a", " and a"}, {"{1: ", "1", "}"},
	};
	for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
		char *big = nest(10000, kinds[k].pre, kinds[k].mid, kinds[k].post);
		assert_fails_str(big, 1, "deeper than 200");
		free(big);
		char *ok = nest(60, kinds[k].pre, kinds[k].mid, kinds[k].post);
		pn_arena a;
		pn_ts_file f;
		char err[PN_ERRLEN];
		pn_arena_init(&a, 0);
		if (parse(&a, ok, &f, err))
			fail_msg("%s...: %s", ok, err);
		pn_arena_free(&a);
		free(ok);
	}

	/* blocks: nested by indentation, and by a chain of elifs */
	size_t n = 300;
	char *blocks = malloc(n * (n + 8) + 32), *q = blocks;
	assert_non_null(blocks);
	q += sprintf(q, "def f():\n");
	for (size_t i = 1; i <= n; i++) {
		memset(q, ' ', i);
		q += i;
		q += sprintf(q, "if x:\n");
	}
	memset(q, ' ', n + 1);
	q += n + 1;
	strcpy(q, "pass\n");
	assert_fails_str(blocks, 202, "deeper than 200");
	free(blocks);
	char *elifs = malloc(10000 * 24 + 64);
	assert_non_null(elifs);
	q = elifs + sprintf(elifs, "def f():\n  if x:\n    pass\n");
	for (int i = 0; i < 10000; i++)
		q += sprintf(q, "  elif x:\n    pass\n");
	/* the body of the 199th elif is the 201st block: def, 199 links, its own */
	assert_fails_str(elifs, 2 + 2 * 199 + 1, "deeper than 200");
	free(elifs);

	/* a long flat file is fine: many statements, many arguments */
	size_t m = 20000;
	char *flat = malloc(m * 16 + 64);
	assert_non_null(flat);
	q = flat + sprintf(flat, "def f():\n  x = g(");
	for (size_t i = 0; i < m; i++)
		q += sprintf(q, "%zu, ", i);
	q += sprintf(q, ")\n");
	for (size_t i = 0; i < m; i++)
		q += sprintf(q, "  y = x\n");
	pn_arena a;
	pn_ts_file f;
	char err[PN_ERRLEN];
	pn_arena_init(&a, 0);
	assert_int_equal(parse(&a, flat, &f, err), 0);
	assert_int_equal(f.funcs[0].body.n, (int)m + 1);
	assert_int_equal(f.funcs[0].body.stmts[0]->value->n, (int)m);
	pn_arena_free(&a);

	/* an arena too small for the tree */
	for (size_t limit = 1024; limit <= 64 * 1024; limit *= 4) {
		pn_arena_init(&a, limit);
		assert_int_equal(parse(&a, flat, &f, err), -1);
		assert_true(is_line_error(err, -1));
		assert_non_null(strstr(err, "out of memory"));
		pn_arena_free(&a);
	}
	free(flat);
	for (size_t limit = 256; limit <= 16384; limit += 256)
		parse_exact(flow_src, strlen(flow_src), limit);

	/* a source past PN_TS_LIMIT_SOURCE is refused before a byte is read */
	char *huge = malloc(PN_TS_LIMIT_SOURCE + 1);
	assert_non_null(huge);
	pn_arena_init(&a, 0);
	assert_int_equal(pn_ts_parse(huge, PN_TS_LIMIT_SOURCE + 1, &a, &f, err), -1);
	assert_true(is_line_error(err, 1));
	pn_arena_free(&a);
	free(huge);
}

/* 7. The lexical odds and ends: CRLF and CR line breaks, a backslash
 *    continuation, brackets across lines with comments, ';', a file
 *    without its last newline, empty and comment-only files, imports,
 *    top-level assignments, the classes torch writes besides modules. */
static void test_file(void **state)
{
	(void)state;
	static const char src[] =
		"import __torch__.torch.nn.modules.linear\r\n"
		"from __torch__ import (a,\r\n"
		"    b)\r\n"
		"op_version_set = 8\r\n"
		"CONST : Final[int] = 3 + \\\r\n"
		"  4\n"
		"class Iface(ModuleInterface):\r"
		"  def forward(self, x: Tensor) -> Tensor:\n"
		"    pass\n"
		"class Pair(NamedTuple):\n"
		"  a : Tensor\n"
		"  b : Optional[int]\n"
		"class Color(Enum):\n"
		"  RED = 1\n"
		"  GREEN = 2\n"
		"class Empty: pass\n"
		"def relu(input: Tensor,\n"
		"    inplace: bool=False) -> Tensor:\n"
		"  if inplace: result = torch.relu_(input); x = [1,  # one\n"
		"      2,\n"
		"      ]\n"
		"  else:\n"
		"    result = torch.relu(input)\n"
		"  return result";
	pn_arena a;
	pn_ts_file f;
	char err[PN_ERRLEN];
	out o;
	pn_arena_init(&a, 0);
	if (parse(&a, src, &f, err))
		fail_msg("%s", err);
	assert_int_equal(f.n_globals, 2);
	assert_string_equal(f.globals[0].name, "op_version_set");
	assert_int_equal(f.globals[0].value->i, 8);
	assert_string_equal(f.globals[1].type, "Final[int]");
	assert_string_equal(show_expr(&o, f.globals[1].value), "(+ 3 4)");
	assert_int_equal(f.n_classes, 4);
	assert_string_equal(f.classes[0].bases[0], "ModuleInterface");
	assert_int_equal(f.classes[0].n_methods, 1);
	assert_int_equal(f.classes[0].line, 7);
	assert_null(f.classes[0].methods[0].params[0].type);
	assert_string_equal(f.classes[1].attrs[1].type, "Optional[int]");
	assert_string_equal(f.classes[2].attrs[1].name, "GREEN");
	assert_int_equal(f.classes[2].attrs[1].value->i, 2);
	assert_string_equal(f.classes[3].name, "Empty");
	assert_int_equal(f.classes[3].n_bases, 0);
	assert_int_equal(f.n_funcs, 1);
	const pn_ts_func *r = &f.funcs[0];
	assert_int_equal(r->line, 17);
	assert_string_equal(show_expr(&o, r->params[1].dflt), "False");
	assert_string_equal(show_stmt(&o, r->body.stmts[0]),
			    "(if inplace {(= result (call (. torch relu_) input));"
			    " (= x (list 1 2))}"
			    " {(= result (call (. torch relu) input))})");
	assert_int_equal(r->body.stmts[1]->line, 24);

	static const char *const empty[] = {"", "\n\n", "# only\n  # comments\n", "   ", "\t\n"};
	for (size_t i = 0; i < sizeof empty / sizeof *empty; i++) {
		assert_int_equal(parse(&a, empty[i], &f, err), 0);
		assert_int_equal(f.n_classes + f.n_funcs + f.n_globals, 0);
	}
	assert_int_equal(pn_ts_parse(NULL, 0, &a, &f, err), 0);
	pn_arena_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conv2d),
		cmocka_unit_test(test_expressions),
		cmocka_unit_test(test_control_flow),
		cmocka_unit_test(test_scripted),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
