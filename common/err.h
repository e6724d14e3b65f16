/*
 * err.h - one-line error messages carried up the stack in caller buffers.
 *
 * A failing function writes a single line (no trailing newline) into the
 * caller's char err[PN_ERRLEN] and returns -1.  The caller adds context
 * (the file name) with pn_errprefix() and decides whether to record it in
 * the store's errors table and go on, which is what every stage does.
 */
#ifndef PN_ERR_H
#define PN_ERR_H

#include <stdarg.h>

#define PN_ERRLEN 512

int  pn_fail(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int  pn_vfail(char *err, const char *fmt, va_list ap);
/* Prepends "prefix: " to the message already in err. */
void pn_errprefix(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Process-wide verbosity and output switches set by passnet.c. */
extern int pn_quiet;
extern int pn_json;
/* -v: every warning of a kind a stage counts in its summary line is printed
 * too, one line each (pn_warn_each). */
extern int pn_verbose;

void pn_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A warning about one item of many (a model, a variant): printed like
 * pn_warn only under -v.  The stage counts it by kind in its summary line,
 * which names the command that lists them, and keeps it where that command
 * reads it (the store, or what the stage writes): see store/warnings.h. */
void pn_warn_each(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "passnet: error: ..." on stderr for bad input the run records and goes
 * past (the exit status is not affected). */
void pn_error_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pn_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "passnet: <msg>" on stderr and returns 1 (the exit code). */
int  pn_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
