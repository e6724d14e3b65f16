/*
 * jsonread.c - recursive-descent JSON parser (RFC 8259) into heap nodes.
 */
#include "export/jsonread.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"

#define JMAX_DEPTH 64

typedef struct jp {
	const char *s;
	size_t len, pos;
	int depth;
	char *err;
} jp;

static pn_jv *parse_value(jp *p);

static int jfail(jp *p, const char *what)
{
	return pn_fail(p->err, "JSON: %s at offset %zu", what, p->pos);
}

static void skip_ws(jp *p)
{
	while (p->pos < p->len && strchr(" \t\r\n", p->s[p->pos]))
		p->pos++;
}

static int peek(jp *p)
{
	skip_ws(p);
	return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1;
}

static pn_jv *node(int type)
{
	pn_jv *v = calloc(1, sizeof *v);
	if (v)
		v->type = type;
	return v;
}

/* Appends one code point as UTF-8. */
static size_t put_utf8(char *out, unsigned cp)
{
	if (cp < 0x80)
		return out[0] = (char)cp, 1;
	if (cp < 0x800)
		return out[0] = (char)(0xc0 | cp >> 6), out[1] = (char)(0x80 | (cp & 63)), 2;
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | ((cp >> 6) & 63));
		out[2] = (char)(0x80 | (cp & 63));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | ((cp >> 12) & 63));
	out[2] = (char)(0x80 | ((cp >> 6) & 63));
	out[3] = (char)(0x80 | (cp & 63));
	return 4;
}

static int hex4(jp *p, unsigned *cp)
{
	if (p->pos + 4 > p->len)
		return -1;
	*cp = 0;
	for (int i = 0; i < 4; i++) {
		char c = p->s[p->pos++];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return -1;
		*cp = *cp << 4 | (unsigned)d;
	}
	return 0;
}

/* One escape after the backslash; writes its UTF-8 bytes. */
static int unescape(jp *p, char *out, size_t *n)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	char c = p->s[p->pos++];
	const char *k = strchr(from, c);
	if (c && k) {
		out[(*n)++] = to[k - from];
		return 0;
	}
	unsigned cp, lo;
	if (c != 'u' || hex4(p, &cp))
		return jfail(p, "bad escape");
	if (cp >= 0xd800 && cp < 0xdc00) {   /* a surrogate pair */
		if (p->pos + 2 > p->len || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u')
			return jfail(p, "lone surrogate");
		p->pos += 2;
		if (hex4(p, &lo) || lo < 0xdc00 || lo >= 0xe000)
			return jfail(p, "bad surrogate pair");
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	*n += put_utf8(out + *n, cp);
	return 0;
}

/* A string literal at p->pos (the opening quote); malloc'd result. */
static char *parse_string(jp *p)
{
	p->pos++;
	/* escapes never grow the text: "\uXXXX" (6 bytes) is at most 4 in UTF-8 */
	char *out = malloc(p->len - p->pos + 1);
	size_t n = 0;
	int bad = !out;
	while (!bad && p->pos < p->len && p->s[p->pos] != '"') {
		unsigned char c = (unsigned char)p->s[p->pos++];
		if (c < 0x20)
			bad = jfail(p, "control character in string");
		else if (c != '\\')
			out[n++] = (char)c;
		else if (p->pos >= p->len)
			bad = jfail(p, "unterminated string");
		else if (unescape(p, out, &n))
			bad = -1;
	}
	if (!bad && p->pos >= p->len)
		bad = jfail(p, "unterminated string");
	if (bad) {
		free(out);
		return NULL;
	}
	p->pos++;
	out[n] = 0;
	return out;
}

static pn_jv *parse_number(jp *p)
{
	size_t start = p->pos;
	while (p->pos < p->len && strchr("+-0123456789.eE", p->s[p->pos]))
		p->pos++;
	pn_jv *v = node(PN_JNUM);
	if (!v)
		return NULL;
	v->str = strndup(p->s + start, p->pos - start);
	char *end = NULL;
	v->num = v->str ? strtod(v->str, &end) : 0;
	if (!v->str || end == v->str || *end) {
		jfail(p, "bad number");
		pn_jfree(v);
		return NULL;
	}
	return v;
}

static int grow(pn_jv *v, int with_keys)
{
	pn_jv **items = realloc(v->items, sizeof(*items) * (size_t)(v->n + 1));
	if (!items)
		return -1;
	v->items = items;
	v->items[v->n] = NULL;
	if (with_keys) {
		char **keys = realloc(v->keys, sizeof(*keys) * (size_t)(v->n + 1));
		if (!keys)
			return -1;
		v->keys = keys;
		v->keys[v->n] = NULL;
	}
	return 0;
}

/* An array or object: its opening bracket is at p->pos. */
static pn_jv *parse_container(jp *p, int is_obj)
{
	char close = is_obj ? '}' : ']';
	pn_jv *v = node(is_obj ? PN_JOBJ : PN_JARR);
	if (!v || ++p->depth > JMAX_DEPTH) {
		jfail(p, "nested too deep");
		pn_jfree(v);
		return NULL;
	}
	p->pos++;
	if (peek(p) == close) {
		p->pos++;
		p->depth--;
		return v;
	}
	for (;;) {
		if (grow(v, is_obj))
			goto bad;
		if (is_obj) {
			if (peek(p) != '"' || !(v->keys[v->n] = parse_string(p)))
				goto bad;
			if (peek(p) != ':')
				goto bad;
			p->pos++;
		}
		if (!(v->items[v->n] = parse_value(p)))
			goto bad;
		v->n++;
		int c = peek(p);
		p->pos++;
		if (c == close)
			break;
		if (c != ',')
			goto bad;
	}
	p->depth--;
	return v;
bad:
	if (!*p->err)
		jfail(p, is_obj ? "bad object" : "bad array");
	if (is_obj && v->keys && v->keys[v->n])
		free(v->keys[v->n]);
	pn_jfree(v);
	return NULL;
}

static pn_jv *parse_word(jp *p, const char *word, int type, double num)
{
	size_t l = strlen(word);
	if (p->pos + l > p->len || memcmp(p->s + p->pos, word, l)) {
		jfail(p, "unexpected text");
		return NULL;
	}
	p->pos += l;
	pn_jv *v = node(type);
	if (v)
		v->num = num;
	return v;
}

static pn_jv *parse_value(jp *p)
{
	int c = peek(p);
	if (c == '{' || c == '[')
		return parse_container(p, c == '{');
	if (c == '"') {
		pn_jv *v = node(PN_JSTR);
		if (v && !(v->str = parse_string(p))) {
			free(v);
			return NULL;
		}
		return v;
	}
	if (c == '-' || (c >= '0' && c <= '9'))
		return parse_number(p);
	if (c == 't')
		return parse_word(p, "true", PN_JBOOL, 1);
	if (c == 'f')
		return parse_word(p, "false", PN_JBOOL, 0);
	if (c == 'n')
		return parse_word(p, "null", PN_JNULL, 0);
	jfail(p, c < 0 ? "unexpected end" : "unexpected character");
	return NULL;
}

pn_jv *pn_jparse(const char *text, size_t len, char *err)
{
	jp p = {.s = text, .len = len, .err = err};
	*err = 0;
	pn_jv *v = parse_value(&p);
	if (v && peek(&p) >= 0) {
		jfail(&p, "text after the value");
		pn_jfree(v);
		return NULL;
	}
	if (!v && !*err)
		pn_fail(err, "JSON: out of memory");
	return v;
}

void pn_jfree(pn_jv *v)
{
	if (!v)
		return;
	for (int i = 0; i < v->n; i++) {
		pn_jfree(v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
	free(v);
}

const pn_jv *pn_jget(const pn_jv *obj, const char *key)
{
	if (!obj || obj->type != PN_JOBJ)
		return NULL;
	for (int i = 0; i < obj->n; i++)
		if (!strcmp(obj->keys[i], key))
			return obj->items[i];
	return NULL;
}

const char *pn_jstr(const pn_jv *obj, const char *key)
{
	const pn_jv *v = pn_jget(obj, key);
	return v && v->type == PN_JSTR ? v->str : NULL;
}

int pn_ju64(const pn_jv *obj, const char *key, uint64_t *out)
{
	const pn_jv *v = pn_jget(obj, key);
	if (!v || v->type != PN_JNUM || !v->str || v->str[0] == '-' || strpbrk(v->str, ".eE"))
		return -1;
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v->str, &end, 10);
	if (errno || *end)
		return -1;
	*out = x;
	return 0;
}
