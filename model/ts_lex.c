/*
 * ts_lex.c - see ts_lex.h.  The lexer reads the source in place and keeps
 * only two small stacks, the open brackets and the indentation levels,
 * both bounded by PN_TS_LIMIT_DEPTH: a hostile file can make it say no,
 * never make it grow.  String literals are decoded into the arena as they
 * are met, so the parser gets their bytes.
 */
#include "model/ts_lex.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"

#define PN_TS_KW_TEXT(id, text) text,
#define PN_TS_OP_TEXT(id, text) text,
#define PN_TS_LEN(id, text) sizeof(text) - 1,
static const char *const kw_text[PN_KW_COUNT] = {"", PN_TS_KEYWORDS(PN_TS_KW_TEXT)};
static const char *const op_text[PN_OP_COUNT] = {"", PN_TS_OPS(PN_TS_OP_TEXT)};
static const uint8_t kw_len[PN_KW_COUNT] = {0, PN_TS_KEYWORDS(PN_TS_LEN)};
static const uint8_t op_len[PN_OP_COUNT] = {0, PN_TS_OPS(PN_TS_LEN)};

const char *pn_ts_op_text(int op)
{
	return op > 0 && op < PN_OP_COUNT ? op_text[op] : "?";
}

const char *pn_ts_kw_text(int kw)
{
	return kw > 0 && kw < PN_KW_COUNT ? kw_text[kw] : "?";
}

static int fail(pn_ts_lexer *lx, int32_t line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

int pn_ts_vfail(char *err, int32_t line, const char *fmt, va_list ap)
{
	char msg[PN_ERRLEN];
	vsnprintf(msg, sizeof msg, fmt, ap);
	return pn_fail(err, "line %d: %s", (int)line, msg);
}

static int fail(pn_ts_lexer *lx, int32_t line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = pn_ts_vfail(lx->err, line, fmt, ap);
	va_end(ap);
	return rc;
}

void pn_ts_lex_init(pn_ts_lexer *lx, const char *src, size_t len, pn_arena *a, char *err)
{
	memset(lx, 0, sizeof *lx);
	lx->src = src;
	lx->len = src ? len : 0;
	lx->line = 1;
	lx->a = a;
	lx->err = err;
	lx->at_bol = 1;
	lx->n_indent = 1;
}

static int is_name_start(unsigned char c)
{
	/* Bytes past ASCII are taken as parts of a name: Python allows Unicode
	 * identifiers, and a module attribute may be one. */
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static int is_name_char(unsigned char c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_newline(char c)
{
	return c == '\n' || c == '\r';
}

/* Steps over the line break at src[pos] (\n, \r\n or \r). */
static size_t skip_newline(const char *src, size_t len, size_t pos)
{
	if (src[pos] == '\r' && pos + 1 < len && src[pos + 1] == '\n')
		return pos + 2;
	return pos + 1;
}

static size_t skip_comment(const char *src, size_t len, size_t pos)
{
	while (pos < len && !is_newline(src[pos]))
		pos++;
	return pos;
}

/* --- strings ---------------------------------------------------------------- */

/* Finds the end of the literal whose opening quote is src[pos]: between the
 * quotes lies [*body, *body_end), the return value is the offset past the
 * closing quote, 0 when there is none (end of file, or a line break in a
 * one-line string).  *lines counts the line breaks inside. */
static size_t scan_string(const char *src, size_t len, size_t pos, size_t *body,
			  size_t *body_end, int32_t *lines)
{
	char q = src[pos];
	int triple = pos + 2 < len && src[pos + 1] == q && src[pos + 2] == q;
	size_t p = pos + (triple ? 3 : 1);
	*body = p;
	*lines = 0;
	while (p < len) {
		char c = src[p];
		if (c == '\\') {
			/* The escaped byte belongs to the string, even a quote
			 * or a line break (a continued line). */
			if (p + 1 >= len)
				return 0;
			if (is_newline(src[p + 1]))
				(*lines)++;
			p = is_newline(src[p + 1]) ? skip_newline(src, len, p + 1) : p + 2;
			continue;
		}
		if (is_newline(c)) {
			if (!triple)
				return 0;
			(*lines)++;
			p = skip_newline(src, len, p);
			continue;
		}
		if (c == q) {
			if (!triple) {
				*body_end = p;
				return p + 1;
			}
			if (p + 2 < len && src[p + 1] == q && src[p + 2] == q) {
				*body_end = p;
				return p + 3;
			}
		}
		p++;
	}
	return 0;
}

size_t pn_ts_string_end(const char *src, size_t len, size_t pos)
{
	size_t body, body_end;
	int32_t lines;
	size_t end = scan_string(src, len, pos, &body, &body_end, &lines);
	return end ? end : len;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* One escape: s[*i] is the byte after the backslash, which scan_string
 * guarantees lies before end.  Appends to o[*k]; the output of an escape is
 * never longer than its input, so o sized like the body is enough. */
static int decode_escape(pn_ts_lexer *lx, int32_t line, const char *s, size_t end, size_t *i,
			 char *o, size_t *k)
{
	char e = s[(*i)++];
	int v;
	switch (e) {
	case '\n':
		return 0;
	case '\r':
		if (*i < end && s[*i] == '\n')
			(*i)++;
		return 0;
	case '\\': case '\'': case '"':
		o[(*k)++] = e;
		return 0;
	case 'a': o[(*k)++] = '\a'; return 0;
	case 'b': o[(*k)++] = '\b'; return 0;
	case 'f': o[(*k)++] = '\f'; return 0;
	case 'n': o[(*k)++] = '\n'; return 0;
	case 'r': o[(*k)++] = '\r'; return 0;
	case 't': o[(*k)++] = '\t'; return 0;
	case 'v': o[(*k)++] = '\v'; return 0;
	case 'x':
		if (*i + 2 > end || hex_value(s[*i]) < 0 || hex_value(s[*i + 1]) < 0)
			return fail(lx, line, "\\x escape needs two hex digits");
		o[(*k)++] = (char)(hex_value(s[*i]) * 16 + hex_value(s[*i + 1]));
		*i += 2;
		return 0;
	default:
		break;
	}
	if (e >= '0' && e <= '7') {
		v = e - '0';
		for (int j = 0; j < 2 && *i < end && s[*i] >= '0' && s[*i] <= '7'; j++)
			v = v * 8 + (s[(*i)++] - '0');
		if (v > 255)
			return fail(lx, line, "octal escape \\%o is beyond a byte", (unsigned)v);
		o[(*k)++] = (char)v;
		return 0;
	}
	/* Python keeps an escape it does not know as written. */
	o[(*k)++] = '\\';
	o[(*k)++] = e;
	return 0;
}

static int lex_string(pn_ts_lexer *lx, pn_ts_tok *t)
{
	size_t body, body_end;
	int32_t lines;
	size_t end = scan_string(lx->src, lx->len, lx->pos, &body, &body_end, &lines);
	if (!end)
		return fail(lx, t->line, "unterminated string");
	char *o = pn_arena_alloc(lx->a, body_end - body + 1);
	if (!o)
		return fail(lx, t->line, "out of memory");
	size_t k = 0;
	for (size_t i = body; i < body_end;) {
		char c = lx->src[i];
		if (c == 0)
			return fail(lx, t->line, "NUL byte in a string");
		if (c != '\\') {
			o[k++] = c;
			i++;
			continue;
		}
		i++;
		if (decode_escape(lx, t->line, lx->src, body_end, &i, o, &k))
			return -1;
	}
	o[k] = 0;
	t->kind = PN_TSK_STR;
	t->s = o;
	t->len = k;
	lx->pos = end;
	lx->line += lines;
	return 0;
}

/* --- numbers ---------------------------------------------------------------- */

static int digit_in_base(char c, int base)
{
	int v = hex_value(c);
	return v >= 0 && v < base ? v : -1;
}

/* 0x, 0o and 0b integers. */
static int lex_based(pn_ts_lexer *lx, pn_ts_tok *t, int base, size_t *p)
{
	const char *s = lx->src;
	size_t start = *p;
	uint64_t u = 0;
	int d;
	while (*p < lx->len && (d = digit_in_base(s[*p], base)) >= 0) {
		if (u > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return fail(lx, t->line, "integer literal is too large");
		u = u * (uint64_t)base + (uint64_t)d;
		(*p)++;
	}
	if (*p == start)
		return fail(lx, t->line, "bad number literal");
	t->kind = PN_TSK_INT;
	t->u = u;
	return 0;
}

static int lex_decimal(pn_ts_lexer *lx, pn_ts_tok *t, size_t *p)
{
	const char *s = lx->src;
	size_t start = *p, n = lx->len;
	int is_float = 0;
	while (*p < n && is_digit(s[*p]))
		(*p)++;
	if (*p < n && s[*p] == '.') {
		is_float = 1;
		(*p)++;
		while (*p < n && is_digit(s[*p]))
			(*p)++;
	}
	if (*p < n && (s[*p] == 'e' || s[*p] == 'E')) {
		size_t q = *p + 1;
		if (q < n && (s[q] == '+' || s[q] == '-'))
			q++;
		if (q >= n || !is_digit(s[q]))
			return fail(lx, t->line, "bad number literal");
		is_float = 1;
		while (q < n && is_digit(s[q]))
			q++;
		*p = q;
	}
	if (is_float) {
		char buf[512], *end;
		size_t k = *p - start;
		if (k >= sizeof buf)
			return fail(lx, t->line, "number literal of %zu characters", k);
		memcpy(buf, s + start, k);
		buf[k] = 0;
		t->kind = PN_TSK_FLOAT;
		t->f = strtod(buf, &end);
		if (end != buf + k)
			return fail(lx, t->line, "bad number literal");
		return 0;
	}
	/* Python refuses 012 (an old octal) but takes 00. */
	if (s[start] == '0')
		for (size_t i = start; i < *p; i++)
			if (s[i] != '0')
				return fail(lx, t->line, "integer literal with a leading zero");
	uint64_t u = 0;
	for (size_t i = start; i < *p; i++) {
		uint64_t d = (uint64_t)(s[i] - '0');
		if (u > (UINT64_MAX - d) / 10)
			return fail(lx, t->line, "integer literal is too large");
		u = u * 10 + d;
	}
	t->kind = PN_TSK_INT;
	t->u = u;
	return 0;
}

static int lex_number(pn_ts_lexer *lx, pn_ts_tok *t)
{
	const char *s = lx->src;
	size_t p = lx->pos;
	int base = 0;
	if (s[p] == '0' && p + 1 < lx->len) {
		char c = (char)(s[p + 1] | 0x20);   /* lower case */
		base = c == 'x' ? 16 : c == 'o' ? 8 : c == 'b' ? 2 : 0;
	}
	if (base) {
		p += 2;
		if (lex_based(lx, t, base, &p))
			return -1;
	} else if (lex_decimal(lx, t, &p)) {
		return -1;
	}
	/* 1j, 1_000, 0x1g: forms TorchScript never writes. */
	if (p < lx->len && is_name_char((unsigned char)s[p]))
		return fail(lx, t->line, "bad number literal");
	lx->pos = p;
	return 0;
}

/* --- names and operators ---------------------------------------------------- */

static void lex_name(pn_ts_lexer *lx, pn_ts_tok *t)
{
	size_t p = lx->pos;
	while (p < lx->len && is_name_char((unsigned char)lx->src[p]))
		p++;
	t->kind = PN_TSK_NAME;
	t->s = lx->src + lx->pos;
	t->len = p - lx->pos;
	lx->pos = p;
	if (t->len > 8)
		return;
	for (int k = 1; k < PN_KW_COUNT; k++)
		if (kw_len[k] == t->len && kw_text[k][0] == t->s[0] &&
		    !memcmp(kw_text[k], t->s, t->len)) {
			t->kind = PN_TSK_KW;
			t->sub = (uint8_t)k;
			return;
		}
}

static char closing_of(char open)
{
	return open == '(' ? ')' : open == '[' ? ']' : '}';
}

static int track_bracket(pn_ts_lexer *lx, int32_t line, char c)
{
	if (c == '(' || c == '[' || c == '{') {
		if (lx->n_brackets >= PN_TS_LIMIT_DEPTH)
			return fail(lx, line, "brackets nested deeper than %d", PN_TS_LIMIT_DEPTH);
		lx->bracket[lx->n_brackets] = c;
		lx->bracket_line[lx->n_brackets++] = line;
		return 0;
	}
	if (c == ')' || c == ']' || c == '}') {
		if (!lx->n_brackets)
			return fail(lx, line, "unmatched '%c'", c);
		char open = lx->bracket[lx->n_brackets - 1];
		if (closing_of(open) != c)
			return fail(lx, line, "'%c' does not match '%c' of line %d", c, open,
				    (int)lx->bracket_line[lx->n_brackets - 1]);
		lx->n_brackets--;
	}
	return 0;
}

static int lex_op(pn_ts_lexer *lx, pn_ts_tok *t)
{
	size_t rest = lx->len - lx->pos, best_len = 0;
	int best = 0;
	for (int k = 1; k < PN_OP_COUNT; k++) {
		size_t n = op_len[k];
		if (n > best_len && n <= rest && op_text[k][0] == lx->src[lx->pos] &&
		    !memcmp(op_text[k], lx->src + lx->pos, n)) {
			best = k;
			best_len = n;
		}
	}
	if (!best) {
		unsigned char c = (unsigned char)lx->src[lx->pos];
		if (c > ' ' && c < 0x7f)
			return fail(lx, t->line, "unexpected character '%c'", c);
		return fail(lx, t->line, "unexpected byte 0x%02x", c);
	}
	if (track_bracket(lx, t->line, op_text[best][0]))
		return -1;
	t->kind = PN_TSK_OP;
	t->sub = (uint8_t)best;
	lx->pos += best_len;
	return 0;
}

/* --- lines ------------------------------------------------------------------ */

/* The end of the file: the last line's NEWLINE, then a DEDENT for each open
 * block, then EOF for good. */
static int at_eof(pn_ts_lexer *lx, pn_ts_tok *t)
{
	t->line = lx->line;
	t->off = t->end = lx->len;
	if (lx->n_brackets)
		return fail(lx, lx->bracket_line[lx->n_brackets - 1], "'%c' is never closed",
			    lx->bracket[lx->n_brackets - 1]);
	if (!lx->at_bol) {
		lx->at_bol = 1;
		t->kind = PN_TSK_NEWLINE;
		return 0;
	}
	if (lx->n_indent > 1) {
		lx->dedents = lx->n_indent - 2;
		lx->n_indent = 1;
		t->kind = PN_TSK_DEDENT;
		return 0;
	}
	t->kind = PN_TSK_EOF;
	return 0;
}

static int inconsistent(pn_ts_lexer *lx)
{
	return fail(lx, lx->line, "indentation mixes tabs and spaces unlike the lines above");
}

/* Compares the indentation src[off, off + n) of a line with the open
 * levels.  Returns 1 with an INDENT or DEDENT in *t, 0 when the level is
 * the same, -1 on an error. */
static int indent(pn_ts_lexer *lx, pn_ts_tok *t, size_t off, size_t n)
{
	const char *s = lx->src;
	pn_ts_span *top = &lx->indent[lx->n_indent - 1];
	lx->at_bol = 0;
	t->line = lx->line;
	t->off = t->end = off + n;
	if (n == top->len)
		return memcmp(s + off, s + top->off, n) ? inconsistent(lx) : 0;
	if (n > top->len) {
		if (memcmp(s + off, s + top->off, top->len))
			return inconsistent(lx);
		if (lx->n_indent > PN_TS_LIMIT_DEPTH)
			return fail(lx, lx->line, "blocks nested deeper than %d",
				    PN_TS_LIMIT_DEPTH);
		lx->indent[lx->n_indent].off = off;
		lx->indent[lx->n_indent++].len = n;
		t->kind = PN_TSK_INDENT;
		return 1;
	}
	int32_t k = lx->n_indent - 1;
	while (k > 0 && lx->indent[k].len > n)
		k--;
	/* Blanks that are not where the open level has them are a tab/space
	 * mix; a mere length that no level has is a bad dedent. */
	if (memcmp(s + off, s + top->off, n))
		return inconsistent(lx);
	if (lx->indent[k].len != n)
		return fail(lx, lx->line, "dedent to a level that matches no outer block");
	lx->dedents = lx->n_indent - 1 - k - 1;
	lx->n_indent = k + 1;
	t->kind = PN_TSK_DEDENT;
	return 1;
}

/* At the start of a line: steps over blank and comment lines, then reads
 * the indentation of the first line that holds something.  Returns 1 when
 * that gave a token (INDENT, DEDENT, or the end of the file), 0 when the
 * line's first token is next, -1 on an error. */
static int start_line(pn_ts_lexer *lx, pn_ts_tok *t)
{
	const char *s = lx->src;
	for (;;) {
		size_t off = lx->pos;
		while (lx->pos < lx->len && (s[lx->pos] == ' ' || s[lx->pos] == '\t' ||
					     s[lx->pos] == '\f'))
			lx->pos++;
		if (lx->pos < lx->len && s[lx->pos] == '#')
			lx->pos = skip_comment(s, lx->len, lx->pos);
		if (lx->pos >= lx->len)
			return at_eof(lx, t) ? -1 : 1;
		if (is_newline(s[lx->pos])) {
			lx->pos = skip_newline(s, lx->len, lx->pos);
			lx->line++;
			continue;
		}
		return indent(lx, t, off, lx->pos - off);
	}
}

int pn_ts_lex_next(pn_ts_lexer *lx, pn_ts_tok *t)
{
	const char *s = lx->src;
	memset(t, 0, sizeof *t);
	if (lx->dedents > 0) {
		lx->dedents--;
		t->kind = PN_TSK_DEDENT;
		t->line = lx->line;
		t->off = t->end = lx->pos;
		return 0;
	}
	if (lx->at_bol) {
		int r = start_line(lx, t);
		if (r)
			return r < 0 ? -1 : 0;
	}
	for (;;) {
		while (lx->pos < lx->len && (s[lx->pos] == ' ' || s[lx->pos] == '\t' ||
					     s[lx->pos] == '\f'))
			lx->pos++;
		if (lx->pos >= lx->len)
			return at_eof(lx, t);
		char c = s[lx->pos];
		if (c == '#') {
			lx->pos = skip_comment(s, lx->len, lx->pos);
			continue;
		}
		if (c == '\\' && lx->pos + 1 < lx->len && is_newline(s[lx->pos + 1])) {
			lx->pos = skip_newline(s, lx->len, lx->pos + 1);
			lx->line++;
			continue;
		}
		if (is_newline(c)) {
			t->line = lx->line;
			t->off = t->end = lx->pos;
			lx->pos = skip_newline(s, lx->len, lx->pos);
			lx->line++;
			if (lx->n_brackets)
				continue;
			lx->at_bol = 1;
			t->kind = PN_TSK_NEWLINE;
			return 0;
		}
		break;
	}
	unsigned char c = (unsigned char)s[lx->pos];
	t->line = lx->line;
	t->off = lx->pos;
	int r = 0;
	if (c == 0)
		r = fail(lx, t->line, "NUL byte");
	else if (is_name_start(c))
		lex_name(lx, t);
	else if (is_digit((char)c) ||
		 (c == '.' && lx->pos + 1 < lx->len && is_digit(s[lx->pos + 1])))
		r = lex_number(lx, t);
	else if (c == '"' || c == '\'')
		r = lex_string(lx, t);
	else
		r = lex_op(lx, t);
	t->end = lx->pos;
	return r;
}
