/* parse_options.c - the option tables of parse_options.h: parsing, usage
 * and help. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/parse_options.h"
#include "common/err.h"

#define WIDTH 80       /* help is wrapped for an 80-column terminal */
#define HELP_COL 24    /* where an option's help text starts */

void pn_strlist_free(pn_strlist *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* The command word of "passnet ls" for error lines ("passnet: ls: ..."). */
static const char *command_word(const pn_usage *u)
{
	const char *sp = strchr(u->prog, ' ');
	return sp ? sp + 1 : NULL;
}

int pn_usage_error(const pn_usage *u, const char *fmt, ...)
{
	const char *word = command_word(u);
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "passnet: ");
	if (word)
		fprintf(stderr, "%s: ", word);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	pn_usage_line(u, stderr);
	return PN_PARSE_ERROR;
}

/* --- lookup -------------------------------------------------------------- */

static const pn_option *find_long(const pn_option *t, const char *name, size_t len)
{
	for (; t->kind != PN_OPT_END; t++) {
		if (t->kind == PN_OPT_INCLUDE) {
			const pn_option *o = find_long(t->include, name, len);
			if (o)
				return o;
		} else if (t->name && strlen(t->name) == len && !strncmp(t->name, name, len)) {
			return t;
		}
	}
	return NULL;
}

static const pn_option *find_short(const pn_option *t, char c)
{
	for (; t->kind != PN_OPT_END; t++) {
		if (t->kind == PN_OPT_INCLUDE) {
			const pn_option *o = find_short(t->include, c);
			if (o)
				return o;
		} else if (t->short_name && t->short_name == c) {
			return t;
		}
	}
	return NULL;
}

/* --- values -------------------------------------------------------------- */

static int whole(const char *v, int is_unsigned, long long lo, long long hi, long long *out,
		 unsigned long long *uout)
{
	char *end;
	errno = 0;
	/* strtoll would skip leading blanks and take a sign for unsigned. */
	if (!*v || *v == ' ' || *v == '\t' || (is_unsigned && strchr(v, '-')))
		return -1;
	if (is_unsigned) {
		*uout = strtoull(v, &end, 10);
	} else {
		*out = strtoll(v, &end, 10);
		if (*out < lo || *out > hi)
			return -1;
	}
	return *end || errno ? -1 : 0;
}

static int list_add(pn_strlist *l, const char *v)
{
	const char *p = v;
	for (;;) {
		size_t n = strcspn(p, ",");
		if (n) {
			char **nv = realloc(l->v, sizeof(char *) * (size_t)(l->n + 2));
			if (!nv)
				return -1;
			l->v = nv;
			if (!(l->v[l->n] = strndup(p, n)))
				return -1;
			l->v[++l->n] = NULL;
		}
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

/* Stores one value; -1 with the reason in err. */
static int set_value(const pn_option *o, const char *v, char *err)
{
	long long x;
	unsigned long long ux;
	char *end;
	switch (o->kind) {
	case PN_OPT_INT:
		if (whole(v, 0, INT_MIN, INT_MAX, &x, &ux))
			return pn_fail(err, "wants a whole number, got '%s'", v);
		*(int *)o->dest = (int)x;
		return 0;
	case PN_OPT_INT64:
		if (whole(v, 0, INT64_MIN, INT64_MAX, &x, &ux))
			return pn_fail(err, "wants a whole number, got '%s'", v);
		*(int64_t *)o->dest = (int64_t)x;
		return 0;
	case PN_OPT_UINT64:
		if (whole(v, 1, 0, 0, &x, &ux))
			return pn_fail(err, "wants a whole number >= 0, got '%s'", v);
		*(uint64_t *)o->dest = (uint64_t)ux;
		return 0;
	case PN_OPT_DOUBLE: {
		errno = 0;
		double d = strtod(v, &end);
		if (!*v || *end || errno || !isfinite(d))
			return pn_fail(err, "wants a number, got '%s'", v);
		*(double *)o->dest = d;
		return 0;
	}
	case PN_OPT_STRING:
		*(const char **)o->dest = v;
		return 0;
	case PN_OPT_LIST:
		return list_add(o->dest, v) ? pn_fail(err, "out of memory") : 0;
	case PN_OPT_CALLBACK:
		return o->cb(o->dest, v, err);
	default:
		return pn_fail(err, "option kind %d takes no value", (int)o->kind);
	}
}

/* "--name" or "-x" as the user typed it, for messages. */
static void spelling(const pn_option *o, int as_short, char *buf, size_t cap)
{
	if (as_short)
		snprintf(buf, cap, "-%c", o->short_name);
	else
		snprintf(buf, cap, "--%s", o->name);
}

static int check_required(const pn_usage *u, const pn_option *t)
{
	for (; t->kind != PN_OPT_END; t++) {
		if (t->kind == PN_OPT_INCLUDE) {
			int rc = check_required(u, t->include);
			if (rc)
				return rc;
		} else if (t->required && !*(const char **)t->dest) {
			return pn_usage_error(u, "--%s %s is required", t->name, t->arg);
		}
	}
	return 0;
}

int pn_parse_options(const pn_usage *u, int argc, char **argv, unsigned flags, int *nargs)
{
	int keep = (flags & PN_PARSE_KEEP_UNKNOWN) != 0, n = 0;
	for (int i = 0; i < argc; i++) {
		char *a = argv[i];
		if (a[0] != '-' || !a[1]) {
			argv[n++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			/* The rest are arguments; a caller that keeps unknowns
			 * passes the "--" on for the command's own parse. */
			if (keep)
				argv[n++] = argv[i];
			while (++i < argc)
				argv[n++] = argv[i];
			break;
		}
		if (!keep && (!strcmp(a, "-h") || !strcmp(a, "--help"))) {
			pn_usage_help(u, stdout);
			return PN_PARSE_HELP;
		}
		const pn_option *o;
		const char *value = NULL;
		int as_short = a[1] != '-';
		if (!as_short) {
			const char *name = a + 2, *eq = strchr(name, '=');
			o = find_long(u->options, name, eq ? (size_t)(eq - name) : strlen(name));
			if (eq)
				value = eq + 1;
		} else {
			o = find_short(u->options, a[1]);
			if (a[2])
				value = a + 2;
		}
		if (!o) {
			if (keep) {
				argv[n++] = a;
				continue;
			}
			return pn_usage_error(u, "unknown option '%s'", a);
		}
		char name[64], err[PN_ERRLEN];
		spelling(o, as_short, name, sizeof name);
		if (o->kind == PN_OPT_FLAG) {
			if (value)
				return pn_usage_error(u, "%s takes no value, got '%s'", name, a);
			*(int *)o->dest = 1;
			continue;
		}
		if (!value) {
			if (i + 1 >= argc)
				return pn_usage_error(u, "%s needs a value (%s)", name, o->arg);
			value = argv[++i];
		}
		if (set_value(o, value, err))
			return pn_usage_error(u, "%s %s", name, err);
	}
	argv[n] = NULL;
	*nargs = n;
	return keep ? 0 : check_required(u, u->options);
}

/* --- usage and help ------------------------------------------------------ */

/* One synopsis token per option, in table order. */
typedef void (*token_fn)(void *ud, const char *tok);

static void option_tokens(const pn_option *t, token_fn fn, void *ud)
{
	for (; t->kind != PN_OPT_END; t++) {
		if (t->kind == PN_OPT_INCLUDE) {
			option_tokens(t->include, fn, ud);
			continue;
		}
		char tok[160], name[64];
		if (t->short_name)
			snprintf(name, sizeof name, "-%c", t->short_name);
		else
			snprintf(name, sizeof name, "--%s", t->name);
		int repeat = t->kind == PN_OPT_LIST || (t->kind == PN_OPT_CALLBACK && !t->once);
		if (t->kind == PN_OPT_FLAG)
			snprintf(tok, sizeof tok, "[%s]", name);
		else if (t->required)
			snprintf(tok, sizeof tok, "%s %s", name, t->arg);
		else
			snprintf(tok, sizeof tok, "[%s %s]%s", name, t->arg, repeat ? "..." : "");
		fn(ud, tok);
	}
}

typedef struct joined {
	char *buf;
	size_t cap, len;
} joined;

static void join_token(void *ud, const char *tok)
{
	joined *j = ud;
	int w = snprintf(j->buf + j->len, j->cap - j->len, "%s%s", j->len ? " " : "", tok);
	if (w > 0)
		j->len = j->len + (size_t)w < j->cap ? j->len + (size_t)w : j->cap - 1;
}

void pn_usage_synopsis(const pn_usage *u, char *buf, size_t cap)
{
	joined j = {buf, cap, 0};
	buf[0] = 0;
	option_tokens(u->options, join_token, &j);
	if (u->args && *u->args)
		join_token(&j, u->args);
}

typedef struct wrapped {
	FILE *f;
	int col, indent;
} wrapped;

/* Tokens after "usage: PROG", wrapped at WIDTH under the first one.  col
 * starts one short of indent: the first token is preceded by a space. */
static void wrap_token(void *ud, const char *tok)
{
	wrapped *w = ud;
	int len = (int)strlen(tok);
	if (w->col > w->indent && w->col + 1 + len > WIDTH) {
		fprintf(w->f, "\n%*s", w->indent, "");
		w->col = w->indent;
	} else if (w->col != w->indent) {
		fputc(' ', w->f);
		w->col++;
	}
	fputs(tok, w->f);
	w->col += len;
}

void pn_usage_line(const pn_usage *u, FILE *f)
{
	fprintf(f, "usage: %s", u->prog);
	int indent = (int)strlen("usage: ") + (int)strlen(u->prog) + 1;
	wrapped w = {f, indent - 1, indent};
	option_tokens(u->options, wrap_token, &w);
	if (u->args && *u->args)
		wrap_token(&w, u->args);
	fputc('\n', f);
}

/* Words of text, wrapped from column `col` (already reached) to WIDTH,
 * continuation lines indented by `indent`. */
static void wrap_words(FILE *f, const char *text, int col, int indent)
{
	const char *p = text;
	int first = 1;
	while (*p) {
		while (*p == ' ')
			p++;
		size_t n = strcspn(p, " ");
		if (!n)
			break;
		if (!first && col + 1 + (int)n > WIDTH) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (!first) {
			fputc(' ', f);
			col++;
		}
		fwrite(p, 1, n, f);
		col += (int)n;
		first = 0;
		p += n;
	}
}

static void option_entries(const pn_option *t, FILE *f)
{
	for (; t->kind != PN_OPT_END; t++) {
		if (t->kind == PN_OPT_INCLUDE) {
			option_entries(t->include, f);
			continue;
		}
		char left[160];
		int col;
		if (t->short_name)
			col = snprintf(left, sizeof left, "  -%c, --%s%s%s", t->short_name, t->name,
				       t->arg ? " " : "", t->arg ? t->arg : "");
		else
			col = snprintf(left, sizeof left, "  --%s%s%s", t->name, t->arg ? " " : "",
				       t->arg ? t->arg : "");
		fputs(left, f);
		if (col + 2 > HELP_COL) {
			fprintf(f, "\n%*s", HELP_COL, "");
		} else {
			fprintf(f, "%*s", HELP_COL - col, "");
		}
		char text[1024];
		snprintf(text, sizeof text, "%s%s%s%s", t->help ? t->help : "", t->def ? " (default " : "",
			 t->def ? t->def : "", t->def ? ")" : "");
		wrap_words(f, text, HELP_COL, HELP_COL);
		fputc('\n', f);
	}
}

void pn_usage_options(const pn_option *opts, FILE *f)
{
	option_entries(opts, f);
}

void pn_usage_help(const pn_usage *u, FILE *f)
{
	pn_usage_line(u, f);
	if (u->details && *u->details)
		fprintf(f, "\n%s", u->details);
	if (u->options && u->options->kind != PN_OPT_END) {
		fprintf(f, "\noptions:\n");
		option_entries(u->options, f);
	}
}
