/*
 * parse_options.h - declarative command-line options, after Git's
 * parse-options: a command lists its options once, in a table, and the
 * parser, the usage line, `--help` and the README's command table are all
 * made from that table, so they cannot disagree.
 *
 * The parser takes `--name VALUE`, `--name=VALUE`, `-x VALUE`, `-xVALUE`,
 * ends options at `--`, and hands the other arguments back in order (a lone
 * `-` is an argument: it names stdin).  Numbers are parsed whole: "--trials
 * x" or "--trials 3x" is an error, never 0 or 3.
 */
#ifndef PN_PARSE_OPTIONS_H
#define PN_PARSE_OPTIONS_H

#include <stdint.h>
#include <stdio.h>

typedef enum pn_opt_kind {
	PN_OPT_END = 0,   /* ends a table */
	PN_OPT_FLAG,      /* int: set to 1, takes no value */
	PN_OPT_INT,       /* int */
	PN_OPT_INT64,     /* int64_t */
	PN_OPT_UINT64,    /* uint64_t */
	PN_OPT_DOUBLE,    /* double */
	PN_OPT_STRING,    /* const char *: the last one given wins */
	PN_OPT_LIST,      /* pn_strlist: every value, split at commas, appended */
	PN_OPT_CALLBACK,  /* cb(dest, value, err) parses the value itself */
	PN_OPT_INCLUDE,   /* the options of another table (`build` takes extract's) */
} pn_opt_kind;

/* A callback's verdict: 0, or -1 with a one-line reason in err. */
typedef int (*pn_opt_cb)(void *dest, const char *value, char *err);

typedef struct pn_option {
	pn_opt_kind kind;
	const char *name;        /* long name without "--" */
	char short_name;         /* 'j' for -j, or 0 */
	const char *arg;         /* value placeholder in usage: "N", "FILE" */
	void *dest;
	const char *def;         /* default shown in --help, or NULL */
	const char *help;        /* one sentence, wrapped by the help printer */
	pn_opt_cb cb;            /* PN_OPT_CALLBACK */
	const struct pn_option *include;   /* PN_OPT_INCLUDE */
	int required;            /* a usage error when absent */
	int once;                /* PN_OPT_CALLBACK: a value, not a list (no "..." in usage) */
} pn_option;

/* PN_OPT_LIST's destination; owns its strings (pn_strlist_free). */
typedef struct pn_strlist {
	char **v;
	int n;
} pn_strlist;

void pn_strlist_free(pn_strlist *l);

#define PN_OPT_FLAG_(s, l, d, h) {.kind = PN_OPT_FLAG, .name = (l), .short_name = (s), .dest = (d), .help = (h)}
#define PN_OPT_VAL_(k, s, l, a, d, def_, h) \
	{.kind = (k), .name = (l), .short_name = (s), .arg = (a), .dest = (d), .def = (def_), .help = (h)}

#define PN_FLAG(s, l, d, h)              PN_OPT_FLAG_(s, l, d, h)
#define PN_INT(s, l, a, d, def, h)       PN_OPT_VAL_(PN_OPT_INT, s, l, a, d, def, h)
#define PN_INT64(s, l, a, d, def, h)     PN_OPT_VAL_(PN_OPT_INT64, s, l, a, d, def, h)
#define PN_UINT64(s, l, a, d, def, h)    PN_OPT_VAL_(PN_OPT_UINT64, s, l, a, d, def, h)
#define PN_DOUBLE(s, l, a, d, def, h)    PN_OPT_VAL_(PN_OPT_DOUBLE, s, l, a, d, def, h)
#define PN_STRING(s, l, a, d, def, h)    PN_OPT_VAL_(PN_OPT_STRING, s, l, a, d, def, h)
#define PN_LIST(s, l, a, d, h)           PN_OPT_VAL_(PN_OPT_LIST, s, l, a, d, NULL, h)
#define PN_CALLBACK(s, l, a, d, f, def_, h)                                                     \
	{.kind = PN_OPT_CALLBACK, .name = (l), .short_name = (s), .arg = (a), .dest = (d), \
	 .cb = (f), .def = (def_), .help = (h)}
/* A callback option that takes one value (the last one given wins). */
#define PN_CALLBACK1(s, l, a, d, f, def_, h)                                                    \
	{.kind = PN_OPT_CALLBACK, .name = (l), .short_name = (s), .arg = (a), .dest = (d), \
	 .cb = (f), .def = (def_), .help = (h), .once = 1}
#define PN_REQUIRED(s, l, a, d, h) \
	{.kind = PN_OPT_STRING, .name = (l), .short_name = (s), .arg = (a), .dest = (d), .help = (h), .required = 1}
#define PN_INCLUDE(t)                    {.kind = PN_OPT_INCLUDE, .include = (t)}
#define PN_OPT_TABLE_END                 {.kind = PN_OPT_END}

/* What usage and help say about a command besides its options. */
typedef struct pn_usage {
	const char *prog;        /* "passnet ls" */
	const char *args;        /* the arguments after the options: "[PATH...]" */
	const char *details;     /* --help prose, or NULL */
	const pn_option *options;
} pn_usage;

/* Leave unknown options and -h/--help among the arguments instead of
 * failing: how passnet.c takes the global options out of a command line. */
#define PN_PARSE_KEEP_UNKNOWN 1u

/* What pn_parse_options returns besides 0 (parsed). */
#define PN_PARSE_HELP  1   /* -h/--help: help printed on stdout; exit 0 */
#define PN_PARSE_ERROR 2   /* one-line error and the usage line on stderr; exit 2 */

/* Parses argv[0..argc) (the program or command name already skipped),
 * storing values through the table's destinations; the arguments that are
 * not options are moved, in order, to argv[0..*nargs), argv[*nargs] = NULL. */
int pn_parse_options(const pn_usage *u, int argc, char **argv, unsigned flags, int *nargs);

/* The synopsis: options (short alias when there is one) then u->args,
 * "[--seed S] [--dim NAME=V]... HASH OUT.onnx". */
void pn_usage_synopsis(const pn_usage *u, char *buf, size_t cap);
/* "usage: PROG SYNOPSIS\n", wrapped at 80 columns. */
void pn_usage_line(const pn_usage *u, FILE *f);
/* The usage line, the details, then one entry per option with its default. */
void pn_usage_help(const pn_usage *u, FILE *f);
/* The option list alone (what pn_usage_help ends with). */
void pn_usage_options(const pn_option *opts, FILE *f);
/* A one-line usage error: "passnet: PROG-WORD: MSG" and the usage line;
 * returns PN_PARSE_ERROR. */
int pn_usage_error(const pn_usage *u, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
