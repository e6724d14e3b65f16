/*
 * pickle.c - see pickle.h.  One loop over the opcodes drives a stack of
 * values, a stack of marks and the memo; nothing is called, so the only
 * state is the tree being built.
 *
 * Every node is allocated as a `node` whose head is the public pn_pkl; the
 * tail holds what only this file needs: the capacity of a container, so
 * APPEND and SETITEM can grow a list the memo already shares in place, and
 * what the last pass computes.  That pass walks the result once, without
 * recursion, and refuses cycles (a list appended to itself through the
 * memo), nesting deeper than PN_PKL_LIMIT_DEPTH and trees that a reader
 * would walk for too long (PN_PKL_LIMIT_TREE), so that readers may recurse.
 *
 * A value is only reached through the stack or the memo, so each opcode
 * costs O(1) amortized plus the items it moves: the work and the memory
 * are linear in the input.
 */
#include "model/pickle.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/assert.h"
#include "common/err.h"

/* Each opcode: its name, its byte, and the function that runs it. */
#define PN_PKL_OPS(X) \
	X(MARK, '(', op_stack) X(STOP, '.', op_stop) X(POP, '0', op_stack) \
	X(POP_MARK, '1', op_stack) X(DUP, '2', op_stack) X(FLOAT, 'F', op_number) \
	X(INT, 'I', op_number) X(BININT, 'J', op_number) X(BININT1, 'K', op_number) \
	X(LONG, 'L', op_number) X(BININT2, 'M', op_number) X(NONE, 'N', op_const) \
	X(PERSID, 'P', op_persid) X(BINPERSID, 'Q', op_persid) X(REDUCE, 'R', op_call) \
	X(STRING, 'S', op_bytes) X(BINSTRING, 'T', op_bytes) X(SHORT_BINSTRING, 'U', op_bytes) \
	X(UNICODE, 'V', op_bytes) X(BINUNICODE, 'X', op_bytes) X(APPEND, 'a', op_container) \
	X(BUILD, 'b', op_build) X(GLOBAL, 'c', op_global) X(DICT, 'd', op_container) \
	X(EMPTY_DICT, '}', op_container) X(APPENDS, 'e', op_container) X(GET, 'g', op_memo) \
	X(BINGET, 'h', op_memo) X(INST, 'i', op_obj) X(LONG_BINGET, 'j', op_memo) \
	X(LIST, 'l', op_container) X(EMPTY_LIST, ']', op_container) X(OBJ, 'o', op_obj) \
	X(PUT, 'p', op_memo) X(BINPUT, 'q', op_memo) X(LONG_BINPUT, 'r', op_memo) \
	X(SETITEM, 's', op_container) X(TUPLE, 't', op_container) \
	X(EMPTY_TUPLE, ')', op_container) X(SETITEMS, 'u', op_container) \
	X(BINFLOAT, 'G', op_number) X(BINBYTES, 'B', op_bytes) X(SHORT_BINBYTES, 'C', op_bytes) \
	X(PROTO, 0x80, op_stack) X(NEWOBJ, 0x81, op_call) X(EXT1, 0x82, op_unsupported) \
	X(EXT2, 0x83, op_unsupported) X(EXT4, 0x84, op_unsupported) \
	X(TUPLE1, 0x85, op_container) X(TUPLE2, 0x86, op_container) \
	X(TUPLE3, 0x87, op_container) X(NEWTRUE, 0x88, op_const) X(NEWFALSE, 0x89, op_const) \
	X(LONG1, 0x8a, op_number) X(LONG4, 0x8b, op_number) X(SHORT_BINUNICODE, 0x8c, op_bytes) \
	X(BINUNICODE8, 0x8d, op_bytes) X(BINBYTES8, 0x8e, op_bytes) \
	X(EMPTY_SET, 0x8f, op_container) X(ADDITEMS, 0x90, op_container) \
	X(FROZENSET, 0x91, op_container) X(NEWOBJ_EX, 0x92, op_call) \
	X(STACK_GLOBAL, 0x93, op_global) X(MEMOIZE, 0x94, op_memo) X(FRAME, 0x95, op_stack) \
	X(BYTEARRAY8, 0x96, op_bytes) X(NEXT_BUFFER, 0x97, op_unsupported) \
	X(READONLY_BUFFER, 0x98, op_unsupported)

#define PN_OP_ENUM(name, code, fn) OP_##name = code,
enum { PN_PKL_OPS(PN_OP_ENUM) };

typedef struct node {
	pn_pkl v;             /* first: every pn_pkl * of this file is a node * */
	int32_t cap;          /* slots of v.items (LIST, DICT) */
	uint8_t items_state;  /* OBJECT: state is the LIST or DICT that APPEND/SETITEM made */
	int32_t height;       /* check_tree's: 0 unseen, -1 on the path, else its height */
	int64_t weight;       /* check_tree's: values a walk meets under it, itself included */
} node;

typedef struct unpickler {
	const uint8_t *p, *end;
	size_t len, op;               /* input bytes; offset of the running opcode */
	const char *name;             /* its name, for messages */
	pn_arena *a;
	char *err;
	pn_pkl **stack;
	int32_t n, cap;
	int32_t marks[PN_PKL_LIMIT_DEPTH];
	int32_t n_marks;
	pn_pkl **memo;
	uint32_t memo_cap, memo_len;  /* slots allocated; slots set (MEMOIZE's next index) */
	pn_pkl *none, *yes, *no;      /* shared: one NONE costs a byte of input, not a node */
	pn_pkl *root;                 /* set by STOP */
} unpickler;

static const char *kind_name(int kind)
{
	static const char *const names[] = {"None", "a bool", "an int", "a float", "a str",
					    "bytes", "a tuple", "a list", "a dict", "a global",
					    "an object", "a persistent id"};
	return kind >= 0 && kind <= PN_PKL_PERSID ? names[kind] : "?";
}

static void complain(unpickler *u, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void complain(unpickler *u, const char *fmt, ...)
{
	char msg[PN_ERRLEN];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	pn_fail(u->err, "pickle offset %zu (%s): %s", u->op, u->name, msg);
}

/* A macro, so that the compiler sees the -1 and knows that a function which
 * returns 0 has set its outputs. */
#define fail(u, ...) (complain(u, __VA_ARGS__), -1)
#define fail_null(u, ...) (complain(u, __VA_ARGS__), (pn_pkl *)NULL)

/* --- input ------------------------------------------------------------------- */

static int take(unpickler *u, size_t n, const uint8_t **out)
{
	size_t left = (size_t)(u->end - u->p);
	if (n > left)
		return fail(u, "truncated: needs %zu bytes, %zu left", n, left);
	*out = u->p;
	u->p += n;
	return 0;
}

static uint64_t le(const uint8_t *b, int n)
{
	uint64_t x = 0;
	for (int i = n; i-- > 0;)
		x = x << 8 | b[i];
	return x;
}

/* An unsigned little-endian integer of `width` bytes. */
static int take_uint(unpickler *u, int width, uint64_t *out)
{
	const uint8_t *b;
	if (take(u, (size_t)width, &b))
		return -1;
	*out = le(b, width);
	return 0;
}

/* A length of `width` bytes, then that many bytes: the length is checked
 * against what is left before anything is allocated. */
static int take_sized(unpickler *u, int width, const uint8_t **out, size_t *len)
{
	uint64_t n;
	if (take_uint(u, width, &n))
		return -1;
	if (n > (uint64_t)(u->end - u->p))
		return fail(u, "truncated: %llu bytes announced, %zu left", (unsigned long long)n,
			    (size_t)(u->end - u->p));
	*len = (size_t)n;
	return take(u, *len, out);
}

/* The text arguments of protocol 0 end with a newline, which is dropped. */
static int take_line(unpickler *u, const char **s, size_t *len)
{
	size_t left = (size_t)(u->end - u->p);
	const uint8_t *nl = left ? memchr(u->p, '\n', left) : NULL;
	if (!nl)
		return fail(u, "truncated: no end of line");
	*s = (const char *)u->p;
	*len = (size_t)(nl - u->p);
	u->p = nl + 1;
	return 0;
}

/* Decimal with an optional sign; -1 when malformed, -2 beyond 64 bits. */
static int parse_int(const char *s, size_t len, int64_t *out)
{
	size_t i = 0;
	int neg = 0;
	if (len && (s[0] == '-' || s[0] == '+'))
		neg = s[i++] == '-';
	if (i == len)
		return -1;
	uint64_t x = 0;
	for (; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		unsigned d = (unsigned)(s[i] - '0');
		if (x > (UINT64_MAX - d) / 10)
			return -2;
		x = x * 10 + d;
	}
	if (x > (uint64_t)INT64_MAX + neg)
		return -2;
	*out = neg ? (x ? -(int64_t)(x - 1) - 1 : 0) : (int64_t)x;
	return 0;
}

/* LONG1/LONG4: two's complement little-endian.  Bytes past the eighth are
 * allowed only as sign extension (the value still fits in 64 bits). */
static int long_bytes(unpickler *u, const uint8_t *b, size_t n, int64_t *out)
{
	if (n == 0)
		return *out = 0, 0;
	uint8_t sign = b[n - 1] & 0x80 ? 0xff : 0;
	for (size_t i = 8; i < n; i++)
		if (b[i] != sign)
			return fail(u, "integer of %zu bytes is beyond 64 bits", n);
	if (n > 8 && (b[7] & 0x80 ? 0xff : 0) != sign)
		return fail(u, "integer of %zu bytes is beyond 64 bits", n);
	uint64_t x = sign ? UINT64_MAX : 0;
	for (size_t i = 0; i < n && i < 8; i++)
		x = (x & ~((uint64_t)0xff << 8 * i)) | (uint64_t)b[i] << 8 * i;
	*out = x > INT64_MAX ? -(int64_t)~x - 1 : (int64_t)x;
	return 0;
}

/* --- nodes and the stack ----------------------------------------------------- */

static pn_pkl *new_node(unpickler *u, int kind)
{
	node *x = pn_arena_alloc(u->a, sizeof(*x));
	if (!x)
		return fail_null(u, "out of memory");
	x->v.kind = (uint8_t)kind;
	return &x->v;
}

static pn_pkl *new_int(unpickler *u, int kind, int64_t i)
{
	pn_pkl *v = new_node(u, kind);
	if (v)
		v->i = i;
	return v;
}

static pn_pkl *new_str(unpickler *u, int kind, const void *s, size_t len)
{
	pn_pkl *v = new_node(u, kind);
	if (v && !(v->s = pn_arena_strndup(u->a, s, len)))
		return fail_null(u, "out of memory");
	if (v)
		v->len = len;
	return v;
}

static pn_pkl *shared(unpickler *u, pn_pkl **slot, int kind, int64_t i)
{
	if (!*slot)
		*slot = new_int(u, kind, i);
	return *slot;
}

/* Grows an array of pointers to hold `need` (the caller checked the limit). */
static int grow(unpickler *u, pn_pkl ***items, int32_t *cap, int64_t need)
{
	if (need <= *cap)
		return 0;
	int64_t c = *cap ? (int64_t)*cap * 2 : 8;
	if (c < need)
		c = need;
	if (c > 2 * (int64_t)PN_PKL_LIMIT_ITEMS)
		c = need;
	pn_pkl **p = pn_arena_alloc(u->a, sizeof(*p) * (size_t)c);
	if (!p)
		return fail(u, "out of memory");
	if (*cap)
		memcpy(p, *items, sizeof(*p) * (size_t)*cap);
	*items = p;
	*cap = (int32_t)c;
	return 0;
}

/* Takes v, or fails when it is NULL (whoever made it wrote the error). */
static int push(unpickler *u, pn_pkl *v)
{
	if (!v)
		return -1;
	if (u->n == u->cap) {
		if (u->n >= PN_PKL_LIMIT_ITEMS)
			return fail(u, "stack of over %d values", PN_PKL_LIMIT_ITEMS);
		if (grow(u, &u->stack, &u->cap, u->n + 1))
			return -1;
	}
	u->stack[u->n++] = v;
	return 0;
}

/* Values under the top mark belong to the enclosing frame: ops must not
 * reach them, as in Python's own unpickler. */
static int32_t fence(const unpickler *u)
{
	return u->n_marks ? u->marks[u->n_marks - 1] : 0;
}

static int need_items(unpickler *u, int32_t k)
{
	if (u->n - fence(u) < k)
		return fail(u, "stack underflow");
	return 0;
}

static pn_pkl *pop(unpickler *u)
{
	return need_items(u, 1) ? NULL : u->stack[--u->n];
}

static int pop_mark(unpickler *u, int32_t *at)
{
	if (!u->n_marks)
		return fail(u, "no MARK before it");
	*at = u->marks[--u->n_marks];
	PN_ASSERT(*at <= u->n);   /* nothing pops below the top mark (fence) */
	return 0;
}

/* A new TUPLE, LIST or DICT of the values stack[at..n), which leave it. */
static pn_pkl *seq_from(unpickler *u, int kind, int32_t at)
{
	int32_t k = u->n - at;
	pn_pkl *v = new_node(u, kind);
	if (!v)
		return NULL;
	if (k) {   /* exactly k: most are tuples, which never grow */
		v->items = pn_arena_memdup(u->a, u->stack + at, sizeof(*v->items) * (size_t)k);
		if (!v->items)
			return fail_null(u, "out of memory");
		((node *)v)->cap = k;
	}
	v->n = kind == PN_PKL_DICT ? k / 2 : k;
	u->n = at;
	return v;
}

/* Appends k slots (k / 2 pairs for a DICT) to a container in place. */
static int extend(unpickler *u, pn_pkl *c, pn_pkl *const *src, int32_t k)
{
	int dict = c->kind == PN_PKL_DICT;
	int64_t used = dict ? 2 * (int64_t)c->n : c->n;
	if ((used + k) >> dict > PN_PKL_LIMIT_ITEMS)
		return fail(u, "container of over %d items", PN_PKL_LIMIT_ITEMS);
	if (grow(u, &c->items, &((node *)c)->cap, used + k))
		return -1;
	if (k)
		memcpy(c->items + used, src, sizeof(*src) * (size_t)k);
	c->n = (int32_t)((used + k) >> dict);
	return 0;
}

static pn_pkl *object(unpickler *u, pn_pkl *fn, pn_pkl *args)
{
	if (!fn || !args)
		return NULL;
	if (args->kind != PN_PKL_TUPLE)
		return fail_null(u, "arguments are %s, not a tuple", kind_name(args->kind));
	pn_pkl *v = new_node(u, PN_PKL_OBJECT);
	if (v) {
		v->fn = fn;
		v->args = args;
	}
	return v;
}

static pn_pkl *global(unpickler *u, const char *mod, size_t ml, const char *name, size_t nl)
{
	pn_pkl *v = new_node(u, PN_PKL_GLOBAL);
	if (!v)
		return NULL;
	v->module = pn_arena_strndup(u->a, mod, ml);
	v->name = pn_arena_strndup(u->a, name, nl);
	if (!v->module || !v->name)
		return fail_null(u, "out of memory");
	return v;
}

/* --- text arguments (protocol 0) --------------------------------------------- */

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int is_octal(char c)
{
	return c >= '0' && c <= '7';
}

static size_t utf8_put(char *o, uint32_t c)
{
	if (c < 0x80)
		return o[0] = (char)c, 1;
	if (c < 0x800)
		return o[0] = (char)(0xc0 | c >> 6), o[1] = (char)(0x80 | (c & 0x3f)), 2;
	if (c < 0x10000) {
		o[0] = (char)(0xe0 | c >> 12);
		o[1] = (char)(0x80 | (c >> 6 & 0x3f));
		o[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | c >> 18);
	o[1] = (char)(0x80 | (c >> 12 & 0x3f));
	o[2] = (char)(0x80 | (c >> 6 & 0x3f));
	o[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* A STR of the k bytes decoded into o (which has room for the NUL). */
static pn_pkl *decoded(unpickler *u, char *o, size_t k)
{
	pn_pkl *v = new_node(u, PN_PKL_STR);
	if (v) {
		o[k] = 0;
		v->s = o;
		v->len = k;
	}
	return v;
}

/* STRING: a Python 2 repr, quoted, with the escapes of string literals.
 * Decoding only shrinks it, so len bytes hold the result. */
static pn_pkl *quoted_str(unpickler *u, const char *s, size_t len)
{
	if (len < 2 || (s[0] != '\'' && s[0] != '"') || s[len - 1] != s[0])
		return fail_null(u, "argument is not a quoted string");
	char *o = pn_arena_alloc(u->a, len);
	if (!o)
		return fail_null(u, "out of memory");
	size_t k = 0, end = len - 1;
	for (size_t i = 1; i < end; i++) {
		static const char from[] = "abfnrtv\\'\"", to[] = "\a\b\f\n\r\t\v\\'\"";
		if (s[i] != '\\') {
			o[k++] = s[i];
			continue;
		}
		if (++i == end)
			return fail_null(u, "backslash at the end of a string");
		const char *e = strchr(from, s[i]);
		if (e && *e) {
			o[k++] = to[e - from];
		} else if (s[i] == 'x') {
			int h = i + 2 < end ? hexval(s[i + 1]) : -1;
			int l = h >= 0 ? hexval(s[i + 2]) : -1;
			if (l < 0)
				return fail_null(u, "bad \\x escape in a string");
			o[k++] = (char)(h << 4 | l);
			i += 2;
		} else if (is_octal(s[i])) {   /* up to three digits */
			unsigned c = (unsigned)(s[i] - '0');
			for (int d = 0; d < 2 && i + 1 < end && is_octal(s[i + 1]); d++)
				c = c * 8 + (unsigned)(s[++i] - '0');
			o[k++] = (char)(c & 0xff);
		} else {
			o[k++] = '\\';
			o[k++] = s[i];
		}
	}
	return decoded(u, o, k);
}

/* UNICODE: raw-unicode-escape, latin-1 bytes where only \uXXXX and
 * \UXXXXXXXX are escapes.  A byte becomes at most 2 bytes of UTF-8. */
static pn_pkl *raw_unicode(unpickler *u, const char *s, size_t len)
{
	char *o = pn_arena_alloc(u->a, 2 * len + 1);
	if (!o)
		return fail_null(u, "out of memory");
	size_t k = 0;
	for (size_t i = 0; i < len; i++) {
		char e = s[i] == '\\' && i + 1 < len ? s[i + 1] : 0;
		int digits = e == 'u' ? 4 : e == 'U' ? 8 : 0;
		if (!digits) {
			k += utf8_put(o + k, (uint8_t)s[i]);
			continue;
		}
		if (len - i - 2 < (size_t)digits)
			return fail_null(u, "truncated \\u escape");
		uint32_t c = 0;
		for (int d = 0; d < digits; d++) {
			int h = hexval(s[i + 2 + d]);
			if (h < 0)
				return fail_null(u, "bad \\u escape");
			c = c << 4 | (uint32_t)h;
		}
		if (c > 0x10ffff)
			return fail_null(u, "code point U+%X out of range", (unsigned)c);
		k += utf8_put(o + k, c);
		i += 1 + (size_t)digits;
	}
	return decoded(u, o, k);
}

static pn_pkl *text_float(unpickler *u, const char *s, size_t len)
{
	char buf[64], *end;
	if (len == 0 || len >= sizeof buf)
		return fail_null(u, "bad float");
	memcpy(buf, s, len);
	buf[len] = 0;
	double f = strtod(buf, &end);
	if (end != buf + len)
		return fail_null(u, "bad float");
	pn_pkl *v = new_node(u, PN_PKL_FLOAT);
	if (v)
		v->f = f;
	return v;
}

/* INT and LONG; protocol 0 writes booleans as INT "01" and "00". */
static pn_pkl *text_int(unpickler *u, const char *s, size_t len, int op)
{
	if (op == OP_INT && len == 2 && s[0] == '0' && (s[1] == '0' || s[1] == '1'))
		return shared(u, s[1] == '1' ? &u->yes : &u->no, PN_PKL_BOOL, s[1] == '1');
	if (op == OP_LONG && len && s[len - 1] == 'L')
		len--;
	int64_t i;
	int rc = parse_int(s, len, &i);
	if (rc)
		return fail_null(u, rc == -2 ? "integer beyond 64 bits" : "bad integer");
	return new_int(u, PN_PKL_INT, i);
}

/* --- the memo ---------------------------------------------------------------- */

/* Writers number the memo from 0 and a slot costs at least a byte, so an
 * index past the input's length is hostile: it would only make us allocate. */
static int memo_put(unpickler *u, uint64_t idx)
{
	if (need_items(u, 1))
		return -1;
	if (idx >= PN_PKL_LIMIT_MEMO || idx > u->len)
		return fail(u, "memo index %llu out of range", (unsigned long long)idx);
	if (idx >= u->memo_cap) {
		int32_t cap = (int32_t)u->memo_cap;
		if (grow(u, &u->memo, &cap, (int64_t)idx + 1))
			return -1;
		u->memo_cap = (uint32_t)cap;
	}
	u->memo_len += !u->memo[idx];
	u->memo[idx] = u->stack[u->n - 1];
	return 0;
}

static int memo_get(unpickler *u, uint64_t idx)
{
	if (idx >= u->memo_cap || !u->memo[idx])
		return fail(u, "memo slot %llu was never set", (unsigned long long)idx);
	return push(u, u->memo[idx]);
}

static int text_index(unpickler *u, uint64_t *idx)
{
	const char *s;
	size_t len;
	int64_t i;
	if (take_line(u, &s, &len))
		return -1;
	if (parse_int(s, len, &i) || i < 0)
		return fail(u, "bad memo index");
	*idx = (uint64_t)i;
	return 0;
}

/* --- opcodes ----------------------------------------------------------------- */

/* The container APPEND (kind LIST) or SETITEM (DICT) fills.  On an OBJECT
 * (torch's OrderedDict: REDUCE, then SETITEMS; a list subclass: NEWOBJ, then
 * APPENDS) the items go to a container that becomes the object's state. */
static pn_pkl *items_target(unpickler *u, pn_pkl *t, int kind)
{
	node *x = (node *)t;
	if (t->kind == kind)
		return t;
	if (t->kind == PN_PKL_OBJECT && !t->state) {
		x->items_state = 1;
		return t->state = new_node(u, kind);
	}
	if (t->kind == PN_PKL_OBJECT && x->items_state && t->state->kind == kind)
		return t->state;
	return fail_null(u, "target is %s%s, not %s", kind_name(t->kind),
		    t->kind == PN_PKL_OBJECT ? " with a state" : "", kind_name(kind));
}

/* APPENDS, ADDITEMS, SETITEMS: the values above the mark go into the
 * container right under it. */
static int add_marked(unpickler *u, int op)
{
	int32_t at;
	if (pop_mark(u, &at))
		return -1;
	if (at <= fence(u))
		return fail(u, "stack underflow");
	pn_pkl *t = u->stack[at - 1];
	int32_t k = u->n - at;
	if (op == OP_SETITEMS && k % 2)
		return fail(u, "odd number of values (%d) for key/value pairs", k);
	if (!(t = items_target(u, t, op == OP_SETITEMS ? PN_PKL_DICT : PN_PKL_LIST)) ||
	    extend(u, t, u->stack + at, k))
		return -1;
	u->n = at;
	return 0;
}

static int op_build(unpickler *u, int op)
{
	(void)op;
	pn_pkl *state = pop(u), *t;
	if (!state || need_items(u, 1))
		return -1;
	t = u->stack[u->n - 1];
	if (t->kind == PN_PKL_OBJECT && !t->state) {
		t->state = state;
		return 0;
	}
	/* A dict-like object keeps its items as state (see pickle.h). */
	if (t->kind == PN_PKL_OBJECT && ((node *)t)->items_state && !t->attrs) {
		t->attrs = state;
		return 0;
	}
	/* Not an object, or one that has a state already: a new one holds both. */
	pn_pkl *v = object(u, t, seq_from(u, PN_PKL_TUPLE, u->n));
	if (!v)
		return -1;
	v->state = state;
	u->stack[u->n - 1] = v;
	return 0;
}

static int op_obj(unpickler *u, int op)
{
	const char *mod = NULL, *name = NULL;
	size_t ml = 0, nl = 0;
	int32_t at;
	if (op == OP_INST && (take_line(u, &mod, &ml) || take_line(u, &name, &nl)))
		return -1;
	if (pop_mark(u, &at))
		return -1;
	if (op == OP_INST) {
		pn_pkl *cls = global(u, mod, ml, name, nl);
		return push(u, object(u, cls, cls ? seq_from(u, PN_PKL_TUPLE, at) : NULL));
	}
	if (u->n == at)
		return fail(u, "no class above the MARK");
	pn_pkl *cls = u->stack[at];
	pn_pkl *args = seq_from(u, PN_PKL_TUPLE, at + 1);
	u->n = at;
	return push(u, object(u, cls, args));
}

static int op_call(unpickler *u, int op)
{
	pn_pkl *kw = op == OP_NEWOBJ_EX ? pop(u) : NULL;
	if (op == OP_NEWOBJ_EX && !kw)
		return -1;
	if (kw && (kw->kind != PN_PKL_DICT || kw->n))
		return fail(u, "keyword arguments are unsupported");
	pn_pkl *args = pop(u);
	pn_pkl *fn = args ? pop(u) : NULL;
	return push(u, object(u, fn, args));
}

static int op_global(unpickler *u, int op)
{
	if (op == OP_GLOBAL) {
		const char *mod, *name;
		size_t ml, nl;
		if (take_line(u, &mod, &ml) || take_line(u, &name, &nl))
			return -1;
		return push(u, global(u, mod, ml, name, nl));
	}
	pn_pkl *name = pop(u);
	pn_pkl *mod = name ? pop(u) : NULL;
	if (!mod)
		return -1;
	if (mod->kind != PN_PKL_STR || name->kind != PN_PKL_STR)
		return fail(u, "module and name are %s and %s, not strings", kind_name(mod->kind),
			    kind_name(name->kind));
	return push(u, global(u, mod->s, mod->len, name->s, name->len));
}

/* PERSID's id is a line of text; BINPERSID's is the value on the stack. */
static int op_persid(unpickler *u, int op)
{
	const char *s;
	size_t len;
	pn_pkl *pid;
	if (op == OP_PERSID)
		pid = take_line(u, &s, &len) ? NULL : new_str(u, PN_PKL_STR, s, len);
	else
		pid = pop(u);
	pn_pkl *v = pid ? new_node(u, PN_PKL_PERSID) : NULL;
	if (v)
		v->pid = pid;
	return push(u, v);
}

static int op_const(unpickler *u, int op)
{
	if (op == OP_NONE)
		return push(u, shared(u, &u->none, PN_PKL_NONE, 0));
	return push(u, op == OP_NEWTRUE ? shared(u, &u->yes, PN_PKL_BOOL, 1)
			: shared(u, &u->no, PN_PKL_BOOL, 0));
}

static int op_unsupported(unpickler *u, int op)
{
	if (op == OP_NEXT_BUFFER || op == OP_READONLY_BUFFER)
		return fail(u, "out-of-band buffers are unsupported");
	return fail(u, "the extension registry is unsupported");
}

/* Opcodes whose argument is a string. */
static int op_bytes(unpickler *u, int op)
{
	const uint8_t *b;
	const char *s;
	size_t len;
	int width = 0, kind = PN_PKL_STR;
	switch (op) {
	case OP_STRING:
		return take_line(u, &s, &len) ? -1 : push(u, quoted_str(u, s, len));
	case OP_UNICODE:
		return take_line(u, &s, &len) ? -1 : push(u, raw_unicode(u, s, len));
	case OP_SHORT_BINSTRING: case OP_SHORT_BINUNICODE: width = 1; break;
	case OP_BINSTRING: case OP_BINUNICODE: width = 4; break;
	case OP_BINUNICODE8: width = 8; break;
	case OP_SHORT_BINBYTES: width = 1, kind = PN_PKL_BYTES; break;
	case OP_BINBYTES: width = 4, kind = PN_PKL_BYTES; break;
	default: width = 8, kind = PN_PKL_BYTES; break;   /* BINBYTES8, BYTEARRAY8 */
	}
	if (take_sized(u, width, &b, &len))
		return -1;
	return push(u, new_str(u, kind, b, len));
}

static int op_number(unpickler *u, int op)
{
	const uint8_t *b;
	const char *s;
	size_t len;
	uint64_t x;
	int64_t i;
	double f;
	switch (op) {
	case OP_INT: case OP_LONG:
		return take_line(u, &s, &len) ? -1 : push(u, text_int(u, s, len, op));
	case OP_FLOAT:
		return take_line(u, &s, &len) ? -1 : push(u, text_float(u, s, len));
	case OP_BININT:
		if (take_uint(u, 4, &x))
			return -1;
		i = x > INT32_MAX ? (int64_t)x - ((int64_t)1 << 32) : (int64_t)x;   /* signed */
		return push(u, new_int(u, PN_PKL_INT, i));
	case OP_BININT1: case OP_BININT2:
		return take_uint(u, op == OP_BININT1 ? 1 : 2, &x) ? -1
			: push(u, new_int(u, PN_PKL_INT, (int64_t)x));
	case OP_LONG1: case OP_LONG4:
		if (take_uint(u, op == OP_LONG1 ? 1 : 4, &x))
			return -1;
		if (x > INT32_MAX)
			return fail(u, "negative length");
		if (take(u, (size_t)x, &b) || long_bytes(u, b, (size_t)x, &i))
			return -1;
		return push(u, new_int(u, PN_PKL_INT, i));
	default:   /* BINFLOAT: big-endian IEEE 754 */
		if (take(u, 8, &b))
			return -1;
		x = 0;
		for (int k = 0; k < 8; k++)
			x = x << 8 | b[k];
		memcpy(&f, &x, sizeof f);
		pn_pkl *v = new_node(u, PN_PKL_FLOAT);
		if (v)
			v->f = f;
		return push(u, v);
	}
}

static int op_memo(unpickler *u, int op)
{
	uint64_t idx;
	switch (op) {
	case OP_PUT: return text_index(u, &idx) ? -1 : memo_put(u, idx);
	case OP_BINPUT: return take_uint(u, 1, &idx) ? -1 : memo_put(u, idx);
	case OP_LONG_BINPUT: return take_uint(u, 4, &idx) ? -1 : memo_put(u, idx);
	case OP_MEMOIZE: return memo_put(u, u->memo_len);
	case OP_GET: return text_index(u, &idx) ? -1 : memo_get(u, idx);
	case OP_BINGET: return take_uint(u, 1, &idx) ? -1 : memo_get(u, idx);
	default: return take_uint(u, 4, &idx) ? -1 : memo_get(u, idx);   /* LONG_BINGET */
	}
}

static int op_stack(unpickler *u, int op)
{
	int32_t at;
	uint64_t x;
	switch (op) {
	case OP_PROTO:
		if (take_uint(u, 1, &x))
			return -1;
		return x > 5 ? fail(u, "protocol %llu (reads 0..5)", (unsigned long long)x) : 0;
	case OP_FRAME:   /* frames only group opcodes for buffered writers */
		if (take_uint(u, 8, &x))
			return -1;
		return x > (uint64_t)(u->end - u->p) ? fail(u, "truncated frame") : 0;
	case OP_MARK:
		if (u->n_marks == PN_PKL_LIMIT_DEPTH)
			return fail(u, "over %d nested MARKs", PN_PKL_LIMIT_DEPTH);
		u->marks[u->n_marks++] = u->n;
		return 0;
	case OP_POP:   /* with nothing above the mark, Python's POP drops the mark */
		if (u->n == fence(u) && u->n_marks)
			return u->n_marks--, 0;
		return pop(u) ? 0 : -1;
	case OP_POP_MARK:
		if (pop_mark(u, &at))
			return -1;
		u->n = at;
		return 0;
	default:   /* DUP */
		return need_items(u, 1) ? -1 : push(u, u->stack[u->n - 1]);
	}
}

static int op_container(unpickler *u, int op)
{
	int32_t at, k;
	pn_pkl *v, *t;
	switch (op) {
	case OP_EMPTY_TUPLE: return push(u, seq_from(u, PN_PKL_TUPLE, u->n));
	case OP_EMPTY_LIST: case OP_EMPTY_SET: return push(u, seq_from(u, PN_PKL_LIST, u->n));
	case OP_EMPTY_DICT: return push(u, seq_from(u, PN_PKL_DICT, u->n));
	case OP_TUPLE1: case OP_TUPLE2: case OP_TUPLE3:
		k = op - OP_TUPLE1 + 1;
		return need_items(u, k) ? -1 : push(u, seq_from(u, PN_PKL_TUPLE, u->n - k));
	case OP_TUPLE: case OP_LIST: case OP_FROZENSET: case OP_DICT:
		if (pop_mark(u, &at))
			return -1;
		if (op == OP_DICT && (u->n - at) % 2)
			return fail(u, "odd number of values (%d) for key/value pairs", u->n - at);
		return push(u, seq_from(u, op == OP_TUPLE ? PN_PKL_TUPLE
					: op == OP_DICT ? PN_PKL_DICT : PN_PKL_LIST, at));
	case OP_APPEND:
		if (!(v = pop(u)) || need_items(u, 1))
			return -1;
		t = items_target(u, u->stack[u->n - 1], PN_PKL_LIST);
		return t ? extend(u, t, &v, 1) : -1;
	case OP_SETITEM:
		if (need_items(u, 3) || !(t = items_target(u, u->stack[u->n - 3], PN_PKL_DICT)))
			return -1;
		if (extend(u, t, u->stack + u->n - 2, 2))
			return -1;
		u->n -= 2;
		return 0;
	default:   /* APPENDS, ADDITEMS, SETITEMS */
		return add_marked(u, op);
	}
}

/* --- the finished tree ------------------------------------------------------- */

static int is_container(const pn_pkl *v)
{
	return v->kind >= PN_PKL_TUPLE && v->kind != PN_PKL_GLOBAL;
}

static int32_t n_children(const pn_pkl *v)
{
	switch (v->kind) {
	case PN_PKL_DICT: return 2 * v->n;
	case PN_PKL_OBJECT: return 4;
	case PN_PKL_PERSID: return 1;
	default: return v->n;
	}
}

static pn_pkl *child(const pn_pkl *v, int32_t i)
{
	if (v->kind == PN_PKL_OBJECT)
		return i == 0 ? v->fn : i == 1 ? v->args : i == 2 ? v->state : v->attrs;
	return v->kind == PN_PKL_PERSID ? v->pid : v->items[i];
}

static int too_deep(unpickler *u)
{
	return fail(u, "nested deeper than %d containers", PN_PKL_LIMIT_DEPTH);
}

/* Depth-first over the containers, each once (the memo makes the tree a
 * graph whose shared nodes must not be walked again), on an explicit path
 * that the depth limit bounds.  Each container gets its height and its
 * weight: the values a reader that recurses meets under it, shared ones
 * counted each time, which a chain of tuples holding the previous one
 * twice would make exponential. */
static int check_tree(unpickler *u, pn_pkl *root)
{
	struct { pn_pkl *v; int32_t next, below; int64_t weight; } path[PN_PKL_LIMIT_DEPTH];
	int d = 0;
	if (!is_container(root))
		return 0;
	path[0].v = root;
	path[0].next = path[0].below = 0;
	path[0].weight = 1;
	((node *)root)->height = -1;
	while (d >= 0) {
		pn_pkl *v = path[d].v;
		if (path[d].next < n_children(v)) {
			node *c = (node *)child(v, path[d].next++);
			if (!c || !is_container(&c->v)) {
				path[d].weight += c != NULL;
				continue;
			}
			if (c->height < 0)
				return fail(u, "a container holds itself (a cycle)");
			if (c->height > 0) {
				if (c->height > path[d].below)
					path[d].below = c->height;
				path[d].weight += c->weight;
				continue;
			}
			if (d + 1 == PN_PKL_LIMIT_DEPTH)
				return too_deep(u);
			c->height = -1;
			d++;
			path[d].v = &c->v;
			path[d].next = path[d].below = 0;
			path[d].weight = 1;
			continue;
		}
		node *x = (node *)v;
		x->height = path[d].below + 1;
		x->weight = path[d].weight;
		if (x->height > PN_PKL_LIMIT_DEPTH)
			return too_deep(u);
		if (x->weight > PN_PKL_LIMIT_TREE)
			return fail(u, "over %d values when shared ones count each time",
				    PN_PKL_LIMIT_TREE);
		if (--d >= 0) {
			path[d].below = x->height > path[d].below ? x->height : path[d].below;
			path[d].weight += x->weight;
		}
	}
	return 0;
}

static int op_stop(unpickler *u, int op)
{
	(void)op;
	pn_pkl *root = pop(u);
	if (!root || check_tree(u, root))
		return -1;
	u->root = root;
	return 0;
}

#define PN_OP_NAME(name, code, fn) [code] = #name,
#define PN_OP_FN(name, code, fn) [code] = fn,
static const char *const op_names[256] = { PN_PKL_OPS(PN_OP_NAME) };
static int (*const op_fns[256])(unpickler *, int) = { PN_PKL_OPS(PN_OP_FN) };

int pn_pickle_load(const void *bytes, size_t len, pn_arena *a, pn_pkl **out, char *err)
{
	unpickler u = {.len = len, .name = "start", .a = a, .err = err};
	*out = NULL;
	if (!bytes || !len)
		return fail(&u, "empty pickle");
	u.p = bytes;
	u.end = u.p + len;
	while (!u.root) {
		if (u.p == u.end) {
			u.op = len;
			u.name = "end";
			return fail(&u, "truncated: no STOP");
		}
		u.op = len - (size_t)(u.end - u.p);
		int op = *u.p++;
		u.name = op_names[op] ? op_names[op] : "?";
		if (!op_fns[op])
			return fail(&u, "unknown opcode 0x%02x", (unsigned)op);
		if (op_fns[op](&u, op))
			return -1;
	}
	*out = u.root;
	return 0;
}

/* --- helpers for readers ----------------------------------------------------- */

const pn_pkl *pn_pkl_dict_get(const pn_pkl *dict, const char *key)
{
	if (dict && dict->kind == PN_PKL_OBJECT)
		dict = dict->state;
	if (!dict || dict->kind != PN_PKL_DICT || !key)
		return NULL;
	size_t kl = strlen(key);
	/* From the end: a key set twice is worth its last value, as in Python. */
	for (int32_t i = dict->n; i-- > 0;) {
		const pn_pkl *k = dict->items[2 * i];
		if (k->kind == PN_PKL_STR && k->len == kl && !memcmp(k->s, key, kl))
			return dict->items[2 * i + 1];
	}
	return NULL;
}

int pn_pkl_is_global(const pn_pkl *v, const char *module, const char *name)
{
	if (v && v->kind == PN_PKL_OBJECT)
		v = v->fn;
	return v && v->kind == PN_PKL_GLOBAL && !strcmp(v->module, module) &&
	       !strcmp(v->name, name);
}
