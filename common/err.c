#include "common/err.h"

#include <stdlib.h>

#include "common/assert.h"

#include <stdio.h>
#include <string.h>

int pn_quiet;
int pn_json;
int pn_verbose;

int pn_vfail(char *err, const char *fmt, va_list ap)
{
	if (err) {
		vsnprintf(err, PN_ERRLEN, fmt, ap);
		/* Keep it one line whatever the caller interpolated. */
		for (char *p = err; *p; p++)
			if (*p == '\n' || *p == '\r')
				*p = ' ';
	}
	return -1;
}

int pn_fail(char *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pn_vfail(err, fmt, ap);
	va_end(ap);
	return -1;
}

void pn_errprefix(char *err, const char *fmt, ...)
{
	char prefix[PN_ERRLEN], old[PN_ERRLEN];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	snprintf(old, sizeof old, "%s", err);
	snprintf(err, PN_ERRLEN, "%s: %s", prefix, old);
}

/* One line on stderr, prefix then the message: a message interpolates
 * names from the files read, whose bytes may hold line breaks, so those
 * become spaces and every error or warning stays one line. */
static void print_line(const char *prefix, const char *fmt, va_list ap)
{
	char line[8192];
	vsnprintf(line, sizeof line, fmt, ap);
	for (char *p = line; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	fprintf(stderr, "%s%s\n", prefix, line);
}

void pn_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	print_line("passnet: warning: ", fmt, ap);
	va_end(ap);
}

void pn_warn_each(const char *fmt, ...)
{
	if (!pn_verbose)
		return;
	va_list ap;
	va_start(ap, fmt);
	print_line("passnet: warning: ", fmt, ap);
	va_end(ap);
}

void pn_error_line(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	print_line("passnet: error: ", fmt, ap);
	va_end(ap);
}

void pn_info(const char *fmt, ...)
{
	if (pn_quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int pn_die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	print_line("passnet: ", fmt, ap);
	va_end(ap);
	return 1;
}

void pn_assert_fail(const char *file, int line, const char *func, const char *cond)
{
	fprintf(stderr, "passnet: internal error: %s:%d: %s: %s\n", file, line, func, cond);
	fflush(stderr);
	abort();
}
