/*
 * manifest.c - data-manifest.txt, the corpus recipe, and SHA-256 of files.
 *
 * Format: one source per line, fields separated by blanks (spaces or tabs):
 *
 *     name  kind  location  sha256  licence  note...
 *
 *   name      the source's key in the store: 1-128 characters from
 *             [A-Za-z0-9._+-] (no '/' or '!', which are path separators);
 *             unique within the manifest.
 *   kind      file (one .onnx file), dir (a directory, walked recursively)
 *             or archive (.tar, .tar.gz/.tgz, .tar.xz/.txz, .tar.bz2/.tbz2,
 *             .zip).
 *   location  a path, relative to the folder the manifest is in unless it
 *             starts with '/'.  It is handed back resolved.  It cannot
 *             contain blanks.
 *   sha256    the SHA-256 of the file or archive as 64 hex digits (either
 *             case; handed back in lower case), or '-' meaning "not
 *             checked", which only a dir may use (a directory has no single
 *             checksum).
 *   licence   an SPDX identifier ("BSD-3-Clause", "Apache-2.0") or another
 *             single token such as "unknown".
 *   note      the rest of the line, free text (may be empty; may contain '#').
 *
 * A line whose first non-blank character is '#' is a comment; blank lines
 * are ignored; a trailing '\r' is dropped.  Any other line that does not fit
 * is an error "FILE:LINE: problem", and so is a name used twice.  The file is
 * only parsed here: checking that locations exist and match their checksums
 * is the extract stage's job (with pn_sha256_file).
 */
#include "extract/sources.h"

#include "common/err.h"
#include "common/sha256.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PN_MANIFEST_NAME_MAX 128

static int pn_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Cuts the next blank-separated field out of *p (NUL-terminating it). */
static char *pn_field(char **p)
{
	char *s = *p;
	while (pn_blank(*s))
		s++;
	if (!*s)
		return NULL;
	char *e = s;
	while (*e && !pn_blank(*e))
		e++;
	if (*e)
		*e++ = '\0';
	*p = e;
	return s;
}

static int pn_name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > PN_MANIFEST_NAME_MAX)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._+-", *s))
			return 0;
	return 1;
}

static int pn_sha_ok(char *s)
{
	if (strlen(s) != 64)
		return 0;
	for (; *s; s++) {
		if (!isxdigit((unsigned char)*s))
			return 0;
		*s = (char)tolower((unsigned char)*s);
	}
	return 1;
}

/* location relative to the manifest's folder (the first baselen bytes of
 * base, up to and including its last '/'), unless it is absolute. */
static char *pn_resolve(const char *base, size_t baselen, const char *loc)
{
	if (loc[0] == '/' || baselen == 0)
		return strdup(loc);
	size_t n = baselen + strlen(loc) + 1;
	char *r = malloc(n);
	if (r)
		snprintf(r, n, "%.*s%s", (int)baselen, base, loc);
	return r;
}

static void pn_entry_clear(pn_manifest_entry *e)
{
	free(e->name);
	free(e->kind);
	free(e->location);
	free(e->sha256);
	free(e->licence);
	free(e->note);
}

void pn_manifest_free(pn_manifest_entry *e, int n)
{
	if (!e)
		return;
	for (int i = 0; i < n; i++)
		pn_entry_clear(&e[i]);
	free(e);
}

/* Parses one non-comment line into *e (strings malloc'd), or fails with the
 * problem (the caller adds FILE:LINE). */
static int pn_parse_line(char *s, const char *base, size_t baselen, pn_manifest_entry *e, char *err)
{
	static const char *what[] = { "name", "kind", "location", "sha256", "licence" };
	char *f[5];
	for (int i = 0; i < 5; i++)
		if (!(f[i] = pn_field(&s)))
			return pn_fail(err, "missing field '%s' (expected: name kind location sha256 licence note...)",
			               what[i]);
	if (!pn_name_ok(f[0]))
		return pn_fail(err, "bad source name '%s' (1-%d characters from A-Z a-z 0-9 . _ + -)",
		               f[0], PN_MANIFEST_NAME_MAX);
	if (strcmp(f[1], "file") && strcmp(f[1], "dir") && strcmp(f[1], "archive"))
		return pn_fail(err, "bad kind '%s' (expected file, dir or archive)", f[1]);
	if (strcmp(f[3], "-") == 0) {
		if (strcmp(f[1], "dir"))
			return pn_fail(err, "sha256 '-' is only allowed for kind dir, not %s", f[1]);
	} else if (!pn_sha_ok(f[3])) {
		return pn_fail(err, "bad sha256 '%s' (expected 64 hex digits, or '-' for a dir)", f[3]);
	}
	while (pn_blank(*s))
		s++;
	size_t nl = strlen(s);
	while (nl && pn_blank(s[nl - 1]))
		s[--nl] = '\0';
	e->name = strdup(f[0]);
	e->kind = strdup(f[1]);
	e->location = pn_resolve(base, baselen, f[2]);
	e->sha256 = strdup(f[3]);
	e->licence = strdup(f[4]);
	e->note = strdup(s);
	if (!e->name || !e->kind || !e->location || !e->sha256 || !e->licence || !e->note) {
		pn_entry_clear(e);
		return pn_fail(err, "out of memory");
	}
	return 0;
}

int pn_manifest_read(const char *path, pn_manifest_entry **out, int *n, char *err)
{
	*out = NULL;
	*n = 0;
	FILE *fp = fopen(path, "r");
	if (!fp)
		return pn_fail(err, "%s: %s", path, strerror(errno));
	const char *slash = strrchr(path, '/');
	size_t baselen = slash ? (size_t)(slash - path) + 1 : 0;
	pn_manifest_entry *v = NULL;
	int cnt = 0, cap = 0, lineno = 0, rc = 0;
	char *line = NULL;
	size_t linecap = 0;
	ssize_t len;
	while ((len = getline(&line, &linecap, fp)) >= 0) {
		lineno++;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (memchr(line, '\0', (size_t)len)) {
			rc = pn_fail(err, "%s:%d: NUL byte in line", path, lineno);
			break;
		}
		char *s = line;
		while (pn_blank(*s))
			s++;
		if (!*s || *s == '#')
			continue;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 16;
			pn_manifest_entry *nv = realloc(v, (size_t)cap * sizeof *v);
			if (!nv) {
				rc = pn_fail(err, "%s:%d: out of memory", path, lineno);
				break;
			}
			v = nv;
		}
		pn_manifest_entry *e = &v[cnt];
		memset(e, 0, sizeof *e);
		if (pn_parse_line(s, path, baselen, e, err)) {
			pn_errprefix(err, "%s:%d", path, lineno);
			rc = -1;
			break;
		}
		e->line = lineno;
		cnt++;
		/* Manifests are short (tens of lines): a linear scan is fine. */
		for (int i = 0; i < cnt - 1; i++)
			if (strcmp(v[i].name, e->name) == 0) {
				rc = pn_fail(err, "%s:%d: duplicate source name '%s' (first on line %d)",
				             path, lineno, e->name, v[i].line);
				break;
			}
		if (rc)
			break;
	}
	if (!rc && ferror(fp))
		rc = pn_fail(err, "%s: read error: %s", path, strerror(errno));
	free(line);
	fclose(fp);
	if (rc) {
		pn_manifest_free(v, cnt);
		return -1;
	}
	*out = v;
	*n = cnt;
	return 0;
}

int pn_sha256_file(const char *path, char hex[65], char *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pn_fail(err, "%s: %s", path, strerror(errno));
	pn_sha256 s;
	pn_sha256_init(&s);
	static const size_t bufsize = 1 << 16;
	unsigned char *buf = malloc(bufsize);
	if (!buf) {
		close(fd);
		return pn_fail(err, "%s: out of memory", path);
	}
	for (;;) {
		ssize_t r = read(fd, buf, bufsize);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			close(fd);
			return pn_fail(err, "%s: read error: %s", path, strerror(e));
		}
		if (r == 0)
			break;
		pn_sha256_update(&s, buf, (size_t)r);
	}
	free(buf);
	close(fd);
	uint8_t d[32];
	pn_sha256_final(&s, d);
	pn_sha256_hex(d, hex);
	return 0;
}
