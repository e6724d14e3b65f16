/*
 * fetch.c - see fetch.h.  npm and apt-get run as child processes in a
 * temporary folder of the cache, their output captured in files there (no
 * pipes to drain, and nothing of theirs reaches the terminal); libcurl
 * writes URLs straight into a temporary file.  Whatever arrives is hashed
 * before it is renamed to the name its checksum gives it.
 */
#include "extract/fetch.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/digest.h"
#include "common/jsonc.h"
#include "common/util.h"
#include "extract/sources.h"
#include "model/onnx.h"

extern char **environ;

/* --- checksums and names -------------------------------------------------------- */

typedef struct want {
	int algo;
	uint8_t d[PN_DIGEST_MAX];
	char hex[2 * PN_DIGEST_MAX + 1];
} want;

static int parse_checksum(const char *kind, const char *checksum, want *w)
{
	if (!strcmp(kind, "npm")) {
		w->algo = PN_SHA512;
		if (strncmp(checksum, "sha512-", 7) || pn_base64_decode(checksum + 7, w->d, sizeof w->d) != 64)
			return -1;
	} else {
		w->algo = PN_SHA256;
		if (strlen(checksum) != 64)
			return -1;
		for (int i = 0; i < 32; i++) {
			unsigned v;
			if (sscanf(checksum + 2 * i, "%2x", &v) != 1)
				return -1;
			w->d[i] = (uint8_t)v;
		}
	}
	pn_hex(w->d, pn_digest_size(w->algo), w->hex);
	return 0;
}

/* A digest spelled the way the manifest spells this kind's checksum. */
static void spell(int algo, const uint8_t *d, char *out)
{
	if (algo == PN_SHA512) {
		memcpy(out, "sha512-", 7);
		pn_base64(d, 64, out + 7);
	} else {
		pn_hex(d, 32, out);
	}
}

/*
 * The file name a source's paths start with, from its manifest location
 * alone (so that it is the same fetched or cached, on any mirror): npm's
 * own tarball name ("scope-name-1.0.0.tgz"), Debian's package file name
 * without the architecture ("name_1.0-1.deb", the epoch dropped as Debian
 * drops it), or a URL's last path segment.  '!' separates archive members
 * in passnet's paths, so it cannot be in a name.
 */
static char *display_name(const char *kind, const char *loc)
{
	char *s = NULL;
	if (!strcmp(kind, "npm")) {
		const char *at = strrchr(loc, '@');
		const char *name = loc[0] == '@' ? loc + 1 : loc;
		if (asprintf(&s, "%.*s-%s.tgz", (int)(at - name), name, at + 1) < 0)
			return NULL;
		for (char *p = s; *p; p++)
			if (*p == '/')
				*p = '-';
	} else if (!strcmp(kind, "deb")) {
		const char *eq = strchr(loc, '=');
		const char *ver = eq + 1, *colon = strchr(ver, ':');
		if (asprintf(&s, "%.*s_%s.deb", (int)(eq - loc), loc, colon ? colon + 1 : ver) < 0)
			return NULL;
	} else {
		const char *p = strstr(loc, "://");
		p = p ? p + 3 : loc;
		size_t n = strcspn(p, "?#");
		const char *end = p + n, *seg = end;
		while (seg > p && seg[-1] != '/')
			seg--;
		if (seg == end || seg == p)
			s = strdup("download");
		else
			s = strndup(seg, (size_t)(end - seg));
		for (char *q = s; q && *q; q++)
			if (*q == '!')
				*q = '_';
	}
	return s;
}

char *pn_cache_dir(void)
{
	const char *c = getenv("PASSNET_CACHE");
	if (c && *c)
		return strdup(c);
	const char *h = getenv("HOME");
	char *s = NULL;
	if (!h || !*h || asprintf(&s, "%s/.cache/passnet", h) < 0)
		return NULL;
	return s;
}

/* --- files ------------------------------------------------------------------------ */

static int mkdirs(const char *path, char *err)
{
	char *tmp = strdup(path);
	if (!tmp)
		return pn_fail(err, "out of memory");
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) && errno != EEXIST) {
			pn_fail(err, "cannot create the cache folder %s: %s", tmp, strerror(errno));
			free(tmp);
			return -1;
		}
		*p = '/';
	}
	int rc = 0;
	if (mkdir(tmp, 0755) && errno != EEXIST)
		rc = pn_fail(err, "cannot create the cache folder %s: %s", tmp, strerror(errno));
	free(tmp);
	return rc;
}

/* Removes a temporary folder and the files in it (it has no sub-folders). */
static void remove_flat_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char *p = NULL;
		if (asprintf(&p, "%s/%s", dir, e->d_name) >= 0)
			unlink(p);
		free(p);
	}
	closedir(d);
	rmdir(dir);
}

/* A whole small text file, NUL-terminated (NULL if unreadable). */
static char *read_text(const char *path)
{
	void *data;
	size_t len;
	char err[PN_ERRLEN];
	if (pn_read_file(path, &data, &len, err))
		return NULL;
	char *s = realloc(data, len + 1);
	if (!s) {
		free(data);
		return NULL;
	}
	s[len] = '\0';
	return s;
}

/*
 * <file>.origin: where the bytes came from, one line per manifest location
 * that fetched them ("LOCATION\tORIGIN"): the same bytes may be fetched for
 * two sources from two places, and each source's record must name its own,
 * whichever was fetched first.  NULL when the location has no line.
 */
static char *read_origin(const char *disk, const char *location)
{
	char *p = NULL;
	if (asprintf(&p, "%s.origin", disk) < 0)
		return NULL;
	char *s = read_text(p);
	free(p);
	char *found = NULL;
	size_t ll = strlen(location);
	for (char *line = s; line && *line && !found;) {
		size_t n = strcspn(line, "\n");
		if (n > ll && !strncmp(line, location, ll) && line[ll] == '\t')
			found = strndup(line + ll + 1, n - ll - 1);
		line += n;
		if (*line)
			line++;
	}
	free(s);
	return found;
}

/* Sets location's line of <file>.origin, keeping the others; written
 * through a temporary name. */
static int write_origin(const char *disk, const char *location, const char *origin, char *err)
{
	char *final = NULL, *tmp = NULL;
	if (asprintf(&final, "%s.origin", disk) < 0 || asprintf(&tmp, "%s.origin.tmp-%d", disk, (int)getpid()) < 0) {
		free(final);
		return pn_fail(err, "out of memory");
	}
	char *old = read_text(final);
	FILE *f = fopen(tmp, "w");
	int rc = 0, bad = !f;
	size_t ll = strlen(location);
	for (char *line = old; f && line && *line;) {
		size_t n = strcspn(line, "\n");
		if (n && !(n > ll && !strncmp(line, location, ll) && line[ll] == '\t'))
			bad |= fprintf(f, "%.*s\n", (int)n, line) < 0;
		line += n;
		if (*line)
			line++;
	}
	if (f) {
		bad |= fprintf(f, "%s\t%s\n", location, origin) < 0;
		bad |= fclose(f) != 0;
	}
	if (bad || rename(tmp, final)) {
		rc = pn_fail(err, "cannot write to the cache: %s", strerror(errno));
		if (f)
			unlink(tmp);
	}
	free(old);
	free(final);
	free(tmp);
	return rc;
}

/* --- child processes --------------------------------------------------------------- */

typedef struct child_out {
	int status;       /* exit status, 128 + signal, or 127 if it could not run */
	char *out, *err;  /* what it wrote on stdout and stderr */
} child_out;

static void child_out_clear(child_out *c)
{
	free(c->out);
	free(c->err);
	c->out = c->err = NULL;
}

/* The environment with LC_ALL=C, so that the messages parsed below are the
 * untranslated ones whatever the user's locale. */
static char **c_locale_env(void)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 2, sizeof *env);
	if (!env)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LC_ALL=", 7))
			env[k++] = environ[i];
	env[k++] = "LC_ALL=C";
	env[k] = NULL;
	return env;
}

/* Runs argv (argv[0] searched in PATH) in folder dir, stdin from /dev/null,
 * stdout and stderr into files there. */
static int run_in(const char *dir, char *const argv[], child_out *c, char *err)
{
	memset(c, 0, sizeof *c);
	char *op = NULL, *ep = NULL;
	if (asprintf(&op, "%s/.stdout", dir) < 0 || asprintf(&ep, "%s/.stderr", dir) < 0) {
		free(op);
		return pn_fail(err, "out of memory");
	}
	int ofd = open(op, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int efd = open(ep, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int nfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	char **env = c_locale_env();
	int rc = 0;
	if (ofd < 0 || efd < 0 || nfd < 0 || !env) {
		rc = pn_fail(err, "cannot run %s: %s", argv[0], env ? strerror(errno) : "out of memory");
	} else {
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0) {
			/* Only async-signal-safe calls between fork and exec. */
			if (chdir(dir) || dup2(nfd, 0) < 0 || dup2(ofd, 1) < 0 || dup2(efd, 2) < 0)
				_exit(127);
			execvpe(argv[0], argv, env);
			_exit(127);
		}
		if (pid < 0) {
			rc = pn_fail(err, "cannot run %s: %s", argv[0], strerror(errno));
		} else {
			int st = 0;
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			c->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		}
	}
	if (ofd >= 0)
		close(ofd);
	if (efd >= 0)
		close(efd);
	if (nfd >= 0)
		close(nfd);
	free(env);
	if (!rc) {
		c->out = read_text(op);
		c->err = read_text(ep);
		if (!c->out)
			c->out = strdup("");
		if (!c->err)
			c->err = strdup("");
	}
	unlink(op);
	unlink(ep);
	free(op);
	free(ep);
	if (!rc && c->status == 127 && !*c->out && !*c->err)
		rc = pn_fail(err, "cannot run %s (is it installed?)", argv[0]);
	return rc;
}

/* The first line of text starting with prefix, without it (into out). */
static int line_after(const char *text, const char *prefix, const char *skip, char *out, size_t cap)
{
	size_t pl = strlen(prefix);
	for (const char *p = text; p && *p;) {
		size_t n = strcspn(p, "\n");
		if (n >= pl && !strncmp(p, prefix, pl) && !(skip && strstr(p, skip) && strstr(p, skip) < p + n)) {
			snprintf(out, cap, "%.*s", (int)(n - pl), p + pl);
			return 1;
		}
		p += n;
		if (*p)
			p++;
	}
	return 0;
}

/* --- npm --------------------------------------------------------------------------- */

/* Where the registry serves spec's tarball (`npm view SPEC dist.tarball`),
 * for the record; NULL when it does not say, which is no reason to fail. */
static char *npm_origin(const char *tmpdir, const char *spec)
{
	char *view[] = {"npm", "view", "--json", (char *)spec, "dist.tarball", NULL};
	char err[PN_ERRLEN];
	child_out c;
	char *origin = NULL;
	if (!run_in(tmpdir, view, &c, err) && !c.status) {
		json_object *u = pn_json_parse(c.out, strlen(c.out), err);
		if (u && json_object_is_type(u, json_type_string))
			origin = strdup(json_object_get_string(u));
		json_object_put(u);
	}
	child_out_clear(&c);
	return origin;
}

static int fetch_npm(const char *tmpdir, const char *spec, char **file, char **origin, char *err)
{
	char *pack[] = {"npm", "pack", "--json", "--ignore-scripts", "--pack-destination", (char *)tmpdir,
			(char *)spec, NULL};
	child_out c;
	if (run_in(tmpdir, pack, &c, err))
		return -1;
	json_object *j = pn_json_parse(c.out, strlen(c.out), err);
	json_object *first = pn_json_item(j, 0);
	const char *filename = pn_json_str_of(first, "filename");
	int rc = 0;
	if (c.status || !filename) {
		/* npm --json reports {"error": {"code", "summary", "detail"}}. */
		json_object *e = pn_json_get(j, "error");
		const char *code = pn_json_str_of(e, "code"), *summary = pn_json_str_of(e, "summary");
		char line[PN_ERRLEN];
		if (code && (!strcmp(code, "E404") || !strcmp(code, "ETARGET")))
			rc = pn_fail(err, "package not found: npm %s: %s", code, summary ? summary : "");
		else if (code)
			rc = pn_fail(err, "npm pack failed: %s: %s", code, summary ? summary : "");
		else if (line_after(c.err, "npm error ", "complete log", line, sizeof line))
			rc = pn_fail(err, "npm pack failed: %s", line);
		else
			rc = pn_fail(err, "npm pack exited with status %d and named no tarball", c.status);
	} else if (strchr(filename, '/') || !strcmp(filename, "..")) {
		rc = pn_fail(err, "npm pack named a tarball outside its folder: %s", filename);
	} else if (asprintf(file, "%s/%s", tmpdir, filename) < 0) {
		rc = pn_fail(err, "out of memory");
	}
	json_object_put(j);
	child_out_clear(&c);
	if (rc)
		return -1;
	*origin = npm_origin(tmpdir, spec);
	return 0;
}

/* --- deb --------------------------------------------------------------------------- */

static int apt_failure(const child_out *c, const char *what, char *err)
{
	char line[PN_ERRLEN];
	if (!line_after(c->err, "E: ", NULL, line, sizeof line))
		return pn_fail(err, "%s exited with status %d", what, c->status);
	if (strstr(line, "Unable to locate package") || strstr(line, "was not found") ||
	    strstr(line, "has no installation candidate") || strstr(line, "Can't select"))
		return pn_fail(err, "package not found: apt: %s", line);
	return pn_fail(err, "%s failed: %s", what, line);
}

/* `apt-get download --print-uris` downloads nothing; it says which URL
 * and file name apt would use: "'URL' FILE SIZE SHA256:HEX". */
static int deb_uris(const char *tmpdir, const char *spec, char url[4096], char name[1024], char *err)
{
	char *uris[] = {"apt-get", "-q", "download", "--print-uris", (char *)spec, NULL};
	child_out c;
	if (run_in(tmpdir, uris, &c, err))
		return -1;
	int rc = 0;
	if (c.status)
		rc = apt_failure(&c, "apt-get download", err);
	else if (sscanf(c.out, "'%4095[^']' %1023s", url, name) != 2 || strchr(name, '/'))
		rc = pn_fail(err, "apt-get download --print-uris gave no file for %s", spec);
	child_out_clear(&c);
	return rc;
}

static int fetch_deb(const char *tmpdir, const char *spec, char **file, char **origin, char *err)
{
	char url[4096] = "", name[1024] = "";
	if (deb_uris(tmpdir, spec, url, name, err))
		return -1;
	char *get[] = {"apt-get", "-q", "download", (char *)spec, NULL};
	child_out c;
	if (run_in(tmpdir, get, &c, err))
		return -1;
	int rc = 0;
	if (c.status)
		rc = apt_failure(&c, "apt-get download", err);
	else if (asprintf(file, "%s/%s", tmpdir, name) < 0)
		rc = pn_fail(err, "out of memory");
	else if (access(*file, F_OK))
		rc = pn_fail(err, "apt-get download left no %s", name);
	child_out_clear(&c);
	if (!rc)
		*origin = strdup(url);
	return rc;
}

/* --- url ---------------------------------------------------------------------------- */

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	return fwrite(p, size, n, ud);
}

/* A libcurl handle for url with what every request of passnet sets: http
 * and https only (redirects too, at most 10), HTTP errors as errors, a
 * connect timeout, no signals (fetching runs beside OpenMP threads). */
static CURL *http_handle(const char *url)
{
	CURL *c = curl_easy_init();
	if (!c)
		return NULL;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "passnet");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
	return c;
}

/*
 * Only libcurl's fixed messages go into the error: its error buffer also
 * holds timings ("after 3 ms"), which would make two runs' errors differ.
 */
static int fetch_url(const char *dir, const char *url, char **file, char **origin, char *err)
{
	if (asprintf(file, "%s/.part-XXXXXX", dir) < 0) {
		*file = NULL;
		return pn_fail(err, "out of memory");
	}
	int fd = mkstemp(*file);
	/* mkstemp makes it private; the cache is as readable as the files
	 * npm and apt-get leave. */
	if (fd >= 0)
		fchmod(fd, 0644);
	FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		free(*file);
		*file = NULL;
		return pn_fail(err, "cannot write to the cache: %s", strerror(errno));
	}
	CURL *c = http_handle(url);
	if (!c) {
		fclose(f);
		return pn_fail(err, "cannot start libcurl");
	}
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, f);
	/* A stalled server: under 1 byte/s for a minute ends the transfer. */
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)PN_LIMIT_ARCHIVE_MAX_BYTES);
	CURLcode r = curl_easy_perform(c);
	long code = 0;
	curl_off_t length = -1, got = 0;
	char *eff = NULL;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_getinfo(c, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
	curl_easy_getinfo(c, CURLINFO_SIZE_DOWNLOAD_T, &got);
	curl_easy_getinfo(c, CURLINFO_EFFECTIVE_URL, &eff);
	int wrote = fclose(f) == 0;
	int rc = 0;
	if (r == CURLE_HTTP_RETURNED_ERROR) {
		if (eff && strcmp(eff, url))
			rc = pn_fail(err, "HTTP %ld (from %s, redirected from the manifest's URL)", code, eff);
		else
			rc = pn_fail(err, "HTTP %ld", code);
	} else if (r == CURLE_PARTIAL_FILE || (r == CURLE_OK && length >= 0 && got != length)) {
		rc = pn_fail(err, "truncated body: Content-Length %lld, got %lld bytes", (long long)length,
			     (long long)got);
	} else if (r != CURLE_OK) {
		rc = pn_fail(err, "%s", curl_easy_strerror(r));
	} else if (!wrote) {
		rc = pn_fail(err, "cannot write to the cache: %s", strerror(errno));
	} else {
		*origin = strdup(eff ? eff : url);
	}
	curl_easy_cleanup(c);
	return rc;
}

/* Where url leads, redirects followed, asked with a HEAD request; NULL if
 * the server does not say. */
static char *url_origin(const char *url)
{
	CURL *c = http_handle(url);
	if (!c)
		return NULL;
	curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
	char *eff = NULL, *origin = NULL;
	if (curl_easy_perform(c) == CURLE_OK && curl_easy_getinfo(c, CURLINFO_EFFECTIVE_URL, &eff) == CURLE_OK &&
	    eff)
		origin = strdup(eff);
	curl_easy_cleanup(c);
	return origin;
}

/*
 * The origin of bytes already cached that this location never fetched
 * (another source, or another manifest, fetched the same bytes first):
 * asked of the location itself, without downloading, so that a source's
 * record does not depend on which source came first.  Offline only apt can
 * answer (from its lists); otherwise "".
 */
static char *lookup_origin(const char *kind, const char *location, const char *dir, int offline)
{
	char *origin = NULL;
	if (!strcmp(kind, "url")) {
		if (!offline)
			origin = url_origin(location);
	} else if (!strcmp(kind, "deb") || !offline) {
		char *tmpdir = NULL;
		if (asprintf(&tmpdir, "%s/.%s-XXXXXX", dir, !strcmp(kind, "npm") ? "npm" : "apt") >= 0 &&
		    mkdtemp(tmpdir)) {
			char url[4096], name[1024], err[PN_ERRLEN];
			if (!strcmp(kind, "npm"))
				origin = npm_origin(tmpdir, location);
			else if (!deb_uris(tmpdir, location, url, name, err))
				origin = strdup(url);
			remove_flat_dir(tmpdir);
		}
		free(tmpdir);
	}
	return origin ? origin : strdup("");
}

/* --- one source ---------------------------------------------------------------------- */

void pn_fetch_global_init(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

void pn_fetch_global_cleanup(void)
{
	curl_global_cleanup();
}

void pn_fetched_clear(pn_fetched *f)
{
	free(f->disk);
	free(f->display);
	free(f->origin);
	memset(f, 0, sizeof *f);
}

static int verify(const char *file, const want *w, char *err)
{
	uint8_t d[PN_DIGEST_MAX];
	if (pn_digest_file(file, w->algo, d, err))
		return -1;
	if (!memcmp(d, w->d, pn_digest_size(w->algo)))
		return 0;
	char want_s[160], got_s[160];
	spell(w->algo, w->d, want_s);
	spell(w->algo, d, got_s);
	return pn_fail(err, "%s mismatch: manifest says %s, fetched file is %s",
		       w->algo == PN_SHA512 ? "sha512 integrity" : "sha256", want_s, got_s);
}

static int fetch_into_cache(const char *kind, const char *location, const want *w, const char *dir,
			    pn_fetched *out)
{
	char *err = out->err;
	if (mkdirs(dir, err))
		return -1;
	char *file = NULL, *origin = NULL, *tmpdir = NULL;
	int rc;
	if (!strcmp(kind, "url")) {
		rc = fetch_url(dir, location, &file, &origin, err);
	} else {
		if (asprintf(&tmpdir, "%s/.%s-XXXXXX", dir, !strcmp(kind, "npm") ? "npm" : "apt") < 0) {
			tmpdir = NULL;
			return pn_fail(err, "out of memory");
		}
		if (!mkdtemp(tmpdir)) {
			rc = pn_fail(err, "cannot write to the cache: %s", strerror(errno));
			free(tmpdir);
			tmpdir = NULL;
		} else if (!strcmp(kind, "npm")) {
			rc = fetch_npm(tmpdir, location, &file, &origin, err);
		} else {
			rc = fetch_deb(tmpdir, location, &file, &origin, err);
		}
	}
	struct stat st;
	if (!rc)
		rc = verify(file, w, err);
	if (!rc && stat(file, &st))
		rc = pn_fail(err, "cannot read what was fetched: %s", strerror(errno));
	/* The origin goes first: a kill between the renames leaves an origin
	 * without a file, which the next fetch simply rewrites. */
	if (!rc)
		rc = write_origin(out->disk, location, origin ? origin : "", err);
	if (!rc && rename(file, out->disk))
		rc = pn_fail(err, "cannot write to the cache: %s", strerror(errno));
	if (!rc) {
		out->bytes = (uint64_t)st.st_size;
		out->origin = origin ? origin : strdup("");
		origin = NULL;
	}
	if (file && rc)
		unlink(file);
	if (tmpdir)
		remove_flat_dir(tmpdir);
	free(tmpdir);
	free(file);
	free(origin);
	return rc;
}

int pn_fetch_source(const char *kind, const char *location, const char *checksum,
		    const char *cache, int offline, pn_fetched *out)
{
	memset(out, 0, sizeof *out);
	out->state = PN_FETCH_FAILED;
	want w;
	char *dir = NULL;
	out->display = display_name(kind, location);
	if (parse_checksum(kind, checksum, &w)) {
		pn_fail(out->err, "bad checksum '%s'", checksum);
		return out->state;
	}
	if (!out->display || asprintf(&dir, "%s/%s", cache, pn_digest_name(w.algo)) < 0 ||
	    asprintf(&out->disk, "%s/%s", dir, w.hex) < 0) {
		free(dir);
		out->disk = NULL;
		pn_fail(out->err, "out of memory");
		return out->state;
	}
	const char *sub = pn_digest_name(w.algo);
	struct stat st;
	if (stat(out->disk, &st) == 0) {
		char verr[PN_ERRLEN];
		if (!verify(out->disk, &w, verr)) {
			out->state = PN_FETCH_CACHED;
			out->bytes = (uint64_t)st.st_size;
			out->origin = read_origin(out->disk, location);
			if (!out->origin) {
				out->origin = lookup_origin(kind, location, dir, offline);
				/* Remembered, so that the question is asked once;
				 * a cache that cannot be written is no error here. */
				if (*out->origin)
					write_origin(out->disk, location, out->origin, verr);
			}
			free(dir);
			return out->state;
		}
		if (offline) {
			pn_fail(out->err, "the cached copy %s/%s is corrupt and --offline forbids fetching it again",
				sub, w.hex);
			free(dir);
			return out->state;
		}
		unlink(out->disk);
		out->refetched = 1;
	} else if (offline) {
		out->state = PN_FETCH_MISSING;
		pn_fail(out->err, "not in the cache (offline): %s/%s", sub, w.hex);
		free(dir);
		return out->state;
	}
	if (!fetch_into_cache(kind, location, &w, dir, out))
		out->state = PN_FETCH_FETCHED;
	free(dir);
	return out->state;
}
