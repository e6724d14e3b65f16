/*
 * ts_lex.h - the tokens of TorchScript source, for ts_parse.c only.
 *
 * The lexer hands out one token at a time, as Python's does: NEWLINE ends a
 * logical line (never inside brackets, never for a blank or comment line),
 * INDENT and DEDENT bracket a block.  An indentation is compared as the
 * exact run of blanks that starts the line: a deeper one must begin with
 * the current one, a shallower one must equal an outer one, so a file that
 * mixes tabs and spaces either says the same thing on every line or gets
 * an error, never a guess about tab stops.
 */
#ifndef PN_TS_LEX_H
#define PN_TS_LEX_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "model/ts_syntax.h"

enum pn_ts_tok_kind {
	PN_TSK_EOF = 0,
	PN_TSK_NEWLINE,
	PN_TSK_INDENT,
	PN_TSK_DEDENT,
	PN_TSK_NAME,    /* s, len: the bytes in the source (not NUL-terminated) */
	PN_TSK_KW,      /* sub: PN_KW_* */
	PN_TSK_INT,     /* u: the magnitude (a minus sign is an operator) */
	PN_TSK_FLOAT,   /* f */
	PN_TSK_STR,     /* s, len: decoded, in the arena, NUL-terminated */
	PN_TSK_OP,      /* sub: PN_OP_* */
};

/* Keywords: Python's, so that none of them is taken for a name. */
#define PN_TS_KEYWORDS(X) \
	X(AND, "and") X(AS, "as") X(ASSERT, "assert") X(ASYNC, "async") X(AWAIT, "await") \
	X(BREAK, "break") X(CLASS, "class") X(CONTINUE, "continue") X(DEF, "def") \
	X(DEL, "del") X(ELIF, "elif") X(ELSE, "else") X(EXCEPT, "except") X(FALSE, "False") \
	X(FINALLY, "finally") X(FOR, "for") X(FROM, "from") X(GLOBAL, "global") X(IF, "if") \
	X(IMPORT, "import") X(IN, "in") X(IS, "is") X(LAMBDA, "lambda") X(NONE, "None") \
	X(NONLOCAL, "nonlocal") X(NOT, "not") X(OR, "or") X(PASS, "pass") X(RAISE, "raise") \
	X(RETURN, "return") X(TRUE, "True") X(TRY, "try") X(WHILE, "while") X(WITH, "with") \
	X(YIELD, "yield")

/* Operators and delimiters; an augmented assignment names its operator. */
#define PN_TS_OPS(X) \
	X(LPAR, "(") X(RPAR, ")") X(LSQB, "[") X(RSQB, "]") X(LBRACE, "{") X(RBRACE, "}") \
	X(COLON, ":") X(COMMA, ",") X(SEMI, ";") X(DOT, ".") X(ELLIPSIS, "...") \
	X(ARROW, "->") X(ASSIGN, "=") X(WALRUS, ":=") \
	X(PLUS, "+") X(MINUS, "-") X(STAR, "*") X(SLASH, "/") X(DSLASH, "//") \
	X(PERCENT, "%") X(DSTAR, "**") X(AT, "@") X(AMP, "&") X(PIPE, "|") X(CARET, "^") \
	X(TILDE, "~") X(LSHIFT, "<<") X(RSHIFT, ">>") \
	X(LT, "<") X(GT, ">") X(LE, "<=") X(GE, ">=") X(EQ, "==") X(NE, "!=") \
	X(PLUSEQ, "+=") X(MINUSEQ, "-=") X(STAREQ, "*=") X(SLASHEQ, "/=") \
	X(DSLASHEQ, "//=") X(PERCENTEQ, "%=") X(DSTAREQ, "**=") X(ATEQ, "@=") \
	X(AMPEQ, "&=") X(PIPEEQ, "|=") X(CARETEQ, "^=") X(LSHIFTEQ, "<<=") \
	X(RSHIFTEQ, ">>=")

#define PN_TS_KW_ENUM(id, text) PN_KW_##id,
#define PN_TS_OP_ENUM(id, text) PN_OP_##id,
enum { PN_KW_NONE_ = 0, PN_TS_KEYWORDS(PN_TS_KW_ENUM) PN_KW_COUNT };
enum { PN_OP_NONE_ = 0, PN_TS_OPS(PN_TS_OP_ENUM) PN_OP_COUNT };

typedef struct pn_ts_tok {
	uint8_t kind;
	uint8_t sub;        /* KW, OP */
	int32_t line;
	size_t off, end;    /* the bytes of the source it spans */
	uint64_t u;
	double f;
	const char *s;
	size_t len;
} pn_ts_tok;

typedef struct pn_ts_span {
	size_t off, len;
} pn_ts_span;

typedef struct pn_ts_lexer {
	const char *src;
	size_t len, pos;
	int32_t line;
	pn_arena *a;
	char *err;
	int at_bol;           /* the next token starts a logical line */
	int32_t dedents;      /* DEDENTs still owed */
	int32_t n_indent;     /* indent[0] is the empty top level */
	pn_ts_span indent[PN_TS_LIMIT_DEPTH + 1];
	int32_t n_brackets;
	char bracket[PN_TS_LIMIT_DEPTH];
	int32_t bracket_line[PN_TS_LIMIT_DEPTH];
} pn_ts_lexer;

void pn_ts_lex_init(pn_ts_lexer *lx, const char *src, size_t len, pn_arena *a, char *err);
/* The next token into *t.  Returns 0, or -1 with "line N: ..." in err. */
int pn_ts_lex_next(pn_ts_lexer *lx, pn_ts_tok *t);
/* The text of an operator ("+", "**=") and of a keyword, for messages. */
const char *pn_ts_op_text(int op);
const char *pn_ts_kw_text(int kw);
/* The offset just past the string literal that starts at src[pos] (a quote),
 * which the lexer has already accepted; len if it does not end. */
size_t pn_ts_string_end(const char *src, size_t len, size_t pos);

/* "line N: message" into err (PN_ERRLEN bytes); returns -1.  The lexer's
 * and the parser's errors both take this form. */
int pn_ts_vfail(char *err, int32_t line, const char *fmt, va_list ap);

#endif
