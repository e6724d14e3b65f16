/*
 * ts_syntax.h - the TorchScript source that torch.jit.save writes under
 * code/ (one file per module path), parsed into a tree.
 *
 * The language is a subset of Python: class definitions with typed
 * attributes (`weight : Tensor`, `in_features : Final[int] = 4`,
 * `__parameters__ = ["weight", ]`) and methods, top-level functions,
 * `import` lines (skipped), and inside bodies assignments (with tuple
 * targets and subscripts), augmented assignments, expression statements,
 * `return`, `if`/`elif`/`else`, `for ... in ...`, `while`, `break`,
 * `continue`, `pass`, `raise`, `assert`, `with`.  Expressions are Python's:
 * names, attributes, calls with keyword arguments, subscripts and slices,
 * literals (int, float with exponent, string, True/False/None), tuples,
 * lists, dicts, unary and binary operators, comparisons (chained, `is`,
 * `is not`, `in`, `not in`), `and`/`or`/`not` and `a if c else b`.
 * Types (annotations) are kept as source text, with line breaks, comments
 * and runs of blanks squeezed out: "Tuple[Tensor, Optional[Tensor]]".
 *
 * What the tree makes plain for its reader:
 *  - A minus applied to a number literal is folded into it: `-1` is an INT
 *    -1 (TorchScript prints -9223372036854775808 that way too), `-2 ** 2`
 *    is still -(2 ** 2).
 *  - In a chain `a < b < c` the node b is shared by both comparisons.
 *  - `__annotations__["0"] = T` in a class body (how torch declares a
 *    submodule whose name is not an identifier) is the attr "0" of type T.
 *  - Strings decode as TorchScript's own lexer does: \ooo and \xhh give
 *    one byte each (no \u); an unknown escape is kept as written.  The
 *    bytes are not checked to be UTF-8.
 *  - No node nests deeper than PN_TS_LIMIT_DEPTH (expressions and blocks
 *    each), so a reader may walk the tree recursively.
 *
 * Indentation is significant as in Python: bodies are blocks of deeper
 * indentation; brackets continue a line.  Limits are checked before
 * allocation (PN_TS_LIMIT_*): a hostile file gets a one-line error naming
 * the line, never a crash.  Everything lives in the arena.
 */
#ifndef PN_TS_SYNTAX_H
#define PN_TS_SYNTAX_H

#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"

enum pn_ts_expr_kind {
	PN_TSE_NAME = 1,   /* s */
	PN_TSE_INT,        /* i */
	PN_TSE_FLOAT,      /* f */
	PN_TSE_STR,        /* s (escapes decoded), len */
	PN_TSE_NONE,
	PN_TSE_BOOL,       /* i */
	PN_TSE_ATTR,       /* a.s */
	PN_TSE_CALL,       /* a(args[0..n), keywords: kw_names[k] for args[n_pos + k]) */
	PN_TSE_SUBSCRIPT,  /* a[b] (b a TUPLE for x[i, j]) */
	PN_TSE_SLICE,      /* lo:hi:step inside a subscript: args[0..3), NULL when omitted */
	PN_TSE_TUPLE,      /* args[0..n) */
	PN_TSE_LIST,       /* args[0..n) */
	PN_TSE_DICT,       /* args[0..2n): key, value, ... (n pairs) */
	PN_TSE_UNARY,      /* op a: op is "-", "+", "not", "~" */
	PN_TSE_BINARY,     /* a op b: "+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "^", "<<", ">>" */
	PN_TSE_COMPARE,    /* a op b: "==", "!=", "<", "<=", ">", ">=", "is", "is not", "in", "not in";
	                      a chain a < b < c is (a < b) and (b < c) */
	PN_TSE_BOOLOP,     /* a op b: "and", "or" */
	PN_TSE_IFEXP,      /* b if a else c: a the condition, b, c */
};

typedef struct pn_ts_expr pn_ts_expr;
struct pn_ts_expr {
	uint8_t kind;
	int32_t line;
	int64_t i;
	double f;
	const char *s;          /* NAME, STR, ATTR's attribute name */
	size_t len;
	const char *op;         /* UNARY, BINARY, COMPARE, BOOLOP */
	pn_ts_expr *a, *b, *c;
	pn_ts_expr **args;
	int32_t n;              /* args (CALL: all of them, positional first) */
	int32_t n_pos;          /* CALL: positional ones */
	const char **kw_names;  /* CALL: names of args[n_pos..n) */
};

enum pn_ts_stmt_kind {
	PN_TSS_ASSIGN = 1,  /* targets[0..n_targets) = value (a = b = v has two targets); a target is
	                       a NAME, a TUPLE of targets, an ATTR or a SUBSCRIPT; type: the
	                       annotation of `x : T = v`, or NULL */
	PN_TSS_AUGASSIGN,   /* targets[0] op= value (op without "=") */
	PN_TSS_EXPR,        /* value */
	PN_TSS_RETURN,      /* value (NULL: bare return) */
	PN_TSS_IF,          /* if value: body else orelse (elif: an orelse holding one IF) */
	PN_TSS_FOR,         /* for targets[0] in value: body */
	PN_TSS_WHILE,       /* while value: body */
	PN_TSS_BREAK,
	PN_TSS_CONTINUE,
	PN_TSS_PASS,
	PN_TSS_RAISE,       /* value (may be NULL) */
	PN_TSS_ASSERT,      /* value, msg (may be NULL) */
	PN_TSS_WITH,        /* with value [as targets[0]]: body (n_targets 0 without `as`) */
};

typedef struct pn_ts_stmt pn_ts_stmt;
typedef struct pn_ts_block {
	pn_ts_stmt **stmts;
	int32_t n;
} pn_ts_block;

struct pn_ts_stmt {
	uint8_t kind;
	int32_t line;
	pn_ts_expr **targets;
	int32_t n_targets;
	pn_ts_expr *value, *msg;
	const char *op;
	const char *type;
	pn_ts_block body, orelse;
};

typedef struct pn_ts_param {
	const char *name;
	const char *type;          /* annotation text, or NULL */
	pn_ts_expr *dflt;          /* default value, or NULL */
} pn_ts_param;

typedef struct pn_ts_func {
	const char *name;
	int32_t line;
	pn_ts_param *params;       /* self first for a method */
	int32_t n_params;
	const char *ret_type;      /* annotation text after ->, or NULL */
	pn_ts_block body;
} pn_ts_func;

/* A class-level line: `name : type` or `name : type = value` or
 * `name = value` (type NULL). */
typedef struct pn_ts_attr {
	const char *name;
	const char *type;
	pn_ts_expr *value;
} pn_ts_attr;

typedef struct pn_ts_class {
	const char *name;          /* as written: "Conv2d" */
	const char **bases;        /* "Module", "NamedTuple", ... */
	int32_t n_bases;
	pn_ts_attr *attrs;
	int32_t n_attrs;
	pn_ts_func *methods;
	int32_t n_methods;
	int32_t line;
} pn_ts_class;

/* One code file. */
typedef struct pn_ts_file {
	pn_ts_class *classes;
	int32_t n_classes;
	pn_ts_func *funcs;         /* top-level def */
	int32_t n_funcs;
	pn_ts_attr *globals;       /* top-level assignments (CONSTANTS-like tables) */
	int32_t n_globals;
} pn_ts_file;

#define PN_TS_LIMIT_DEPTH 200          /* nested expressions and blocks */
#define PN_TS_LIMIT_ITEMS (1 << 24)    /* items of one list: arguments, statements, members */
#define PN_TS_LIMIT_SOURCE ((size_t)64 << 20)

/* Parses src[0..len) into *out.  Returns 0, or -1 with a one-line message
 * "line N: problem" in err (PN_ERRLEN bytes). */
int pn_ts_parse(const char *src, size_t len, pn_arena *a, pn_ts_file *out, char *err);

#endif
