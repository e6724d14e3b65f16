/*
 * manifest.c - data-manifest.txt, the corpus recipe.
 *
 * Format: one source per line, fields separated by blanks (spaces or tabs):
 *
 *     name  kind  location  checksum  licence  note...
 *
 *   name      the source's key in the store: 1-128 characters from
 *             [A-Za-z0-9._+-] (no '/' or '!', which are path separators);
 *             unique within the manifest.
 *   kind      local: file (one model file: .onnx, .pt), dir (a directory, walked
 *             recursively) or archive (.tar, .tar.gz/.tgz, .tar.xz/.txz,
 *             .tar.bz2/.tbz2, .zip); remote, fetched into the cache first
 *             (extract/fetch.h): npm, deb or url.
 *   location  file, dir, archive: a path, relative to the folder the
 *             manifest is in unless it starts with '/' (handed back
 *             resolved); npm: NAME@VERSION (NAME may be @scope/name; an
 *             exact version, since the checksum pins the bytes); deb:
 *             NAME=VERSION; url: an http:// or https:// URL.  No blanks.
 *   checksum  what the bytes must hash to: for file, archive, deb and url
 *             the SHA-256 as 64 hex digits (either case; handed back in
 *             lower case); for npm the registry's integrity string
 *             "sha512-BASE64"; for a dir '-' (a directory has no single
 *             checksum), which no other kind may use.
 *   licence   an SPDX identifier ("BSD-3-Clause", "Apache-2.0") or another
 *             single token such as "unknown".
 *   note      the rest of the line, free text (may be empty; may contain '#').
 *
 * A line "[NAME]" (NAME as for a source) starts a group: the sources after
 * it, up to the next such line, belong to it, and the store, `passnet
 * stats` and the report count them apart (the default corpus keeps trained
 * models and Debian's one-op backend tests apart, so that what real models
 * give is not lost among op tests).  Sources before the first group line
 * belong to none.
 *
 * A line whose first non-blank character is '#' is a comment; blank lines
 * are ignored; a trailing '\r' is dropped.  Any other line that does not fit
 * is an error "FILE:LINE: problem", and so is a name used twice.  The file is
 * only parsed here: fetching and checking checksums is the fetch and extract
 * stages' job.
 */
#include "extract/sources.h"

#include "common/digest.h"
#include "common/err.h"

#include <ctype.h>
#include <strings.h>
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

static int pn_hex_sha256_ok(char *s)
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

/* "sha512-" and the base64 of a 64-byte digest, as npm's registry writes
 * dist.integrity. */
static int pn_integrity_ok(const char *s)
{
	uint8_t d[PN_DIGEST_MAX];
	return !strncmp(s, "sha512-", 7) && pn_base64_decode(s + 7, d, sizeof d) == 64;
}

static int pn_chars_ok(const char *s, size_t n, const char *extra)
{
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr(extra, s[i]))
			return 0;
	return 1;
}

/* npm: [@scope/]name@version, the version exact (no range characters). */
static int pn_npm_spec_ok(const char *s)
{
	const char *name = s, *at = strrchr(s, '@');
	if (!at || at == s)
		return 0;
	if (*s == '@') {
		const char *slash = strchr(s, '/');
		if (!slash || slash > at || !pn_chars_ok(s + 1, (size_t)(slash - s - 1), "-._~"))
			return 0;
		name = slash + 1;
	}
	return pn_chars_ok(name, (size_t)(at - name), "-._~") && pn_chars_ok(at + 1, strlen(at + 1), "-.+");
}

/* deb: name=version, with Debian's characters for each. */
static int pn_deb_spec_ok(const char *s)
{
	const char *eq = strchr(s, '=');
	return eq && pn_chars_ok(s, (size_t)(eq - s), "+-.") && pn_chars_ok(eq + 1, strlen(eq + 1), "+-.~:");
}

static int pn_url_ok(const char *s)
{
	size_t n = !strncasecmp(s, "http://", 7) ? 7 : !strncasecmp(s, "https://", 8) ? 8 : 0;
	return n && s[n] && s[n] != '/';
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
	free(e->checksum);
	free(e->licence);
	free(e->note);
	free(e->group);
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
	static const char *what[] = { "name", "kind", "location", "checksum", "licence" };
	char *f[5];
	for (int i = 0; i < 5; i++)
		if (!(f[i] = pn_field(&s)))
			return pn_fail(err, "missing field '%s' (expected: name kind location checksum licence note...)",
			               what[i]);
	if (!pn_name_ok(f[0]))
		return pn_fail(err, "bad source name '%s' (1-%d characters from A-Z a-z 0-9 . _ + -)",
		               f[0], PN_MANIFEST_NAME_MAX);
	static const char *kinds[] = { "file", "dir", "archive", "npm", "deb", "url" };
	size_t k = 0;
	while (k < sizeof kinds / sizeof *kinds && strcmp(f[1], kinds[k]))
		k++;
	if (k == sizeof kinds / sizeof *kinds)
		return pn_fail(err, "bad kind '%s' (expected file, dir, archive, npm, deb or url)", f[1]);
	int remote = pn_kind_is_remote(f[1]);
	if (!strcmp(f[1], "npm") && !pn_npm_spec_ok(f[2]))
		return pn_fail(err, "bad npm location '%s' (expected NAME@VERSION, an exact version)", f[2]);
	if (!strcmp(f[1], "deb") && !pn_deb_spec_ok(f[2]))
		return pn_fail(err, "bad deb location '%s' (expected NAME=VERSION)", f[2]);
	if (!strcmp(f[1], "url") && !pn_url_ok(f[2]))
		return pn_fail(err, "bad url '%s' (expected http://... or https://...)", f[2]);
	if (strcmp(f[3], "-") == 0) {
		if (strcmp(f[1], "dir"))
			return pn_fail(err, "checksum '-' is only allowed for kind dir, not %s", f[1]);
	} else if (!strcmp(f[1], "dir")) {
		return pn_fail(err, "a dir takes checksum '-' (a directory has no single checksum), not '%s'", f[3]);
	} else if (!strcmp(f[1], "npm")) {
		if (!pn_integrity_ok(f[3]))
			return pn_fail(err, "bad npm integrity '%s' (expected sha512-BASE64 of 64 bytes, as the registry's dist.integrity)",
			               f[3]);
	} else if (!pn_hex_sha256_ok(f[3])) {
		return pn_fail(err, "bad sha256 '%s' (expected 64 hex digits)", f[3]);
	}
	while (pn_blank(*s))
		s++;
	size_t nl = strlen(s);
	while (nl && pn_blank(s[nl - 1]))
		s[--nl] = '\0';
	e->name = strdup(f[0]);
	e->kind = strdup(f[1]);
	e->location = remote ? strdup(f[2]) : pn_resolve(base, baselen, f[2]);
	e->checksum = strdup(f[3]);
	e->licence = strdup(f[4]);
	e->note = strdup(s);
	if (!e->name || !e->kind || !e->location || !e->checksum || !e->licence || !e->note) {
		pn_entry_clear(e);
		return pn_fail(err, "out of memory");
	}
	return 0;
}

/* "[NAME]" (blanks around it allowed) into *group. */
static int set_group(const char *s, char **group, char *err)
{
	const char *end = strchr(s, ']');
	if (!end)
		return pn_fail(err, "a group line is [NAME], got '%s'", s);
	for (const char *q = end + 1; *q; q++)
		if (!pn_blank(*q))
			return pn_fail(err, "nothing may follow a group's ']', got '%s'", s);
	char *name = strndup(s + 1, (size_t)(end - s - 1));
	if (!name)
		return pn_fail(err, "out of memory");
	if (!pn_name_ok(name)) {
		pn_fail(err, "bad group name '%s' (1-%d characters from A-Z a-z 0-9 . _ + -)", name,
			PN_MANIFEST_NAME_MAX);
		free(name);
		return -1;
	}
	free(*group);
	*group = name;
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
	char *group = NULL;
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
		if (*s == '[') {
			if (set_group(s, &group, err)) {
				pn_errprefix(err, "%s:%d", path, lineno);
				rc = -1;
				break;
			}
			continue;
		}
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
		if (group && !(e->group = strdup(group))) {
			pn_entry_clear(e);
			rc = pn_fail(err, "%s:%d: out of memory", path, lineno);
			break;
		}
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
	free(group);
	fclose(fp);
	if (rc) {
		pn_manifest_free(v, cnt);
		return -1;
	}
	*out = v;
	*n = cnt;
	return 0;
}

int pn_kind_is_remote(const char *kind)
{
	return kind && (!strcmp(kind, "npm") || !strcmp(kind, "deb") || !strcmp(kind, "url"));
}
