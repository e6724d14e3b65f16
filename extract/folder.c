/*
 * folder.c - pn_folder: where a model's neighbours (external weights,
 * test_data_set_N/) are read from, on disk or inside an archive in memory.
 *
 * Reads copy the bytes out (the caller frees them, per sources.h), and a
 * name that is a sub-folder rather than a file is "no such file" (1) in an
 * archive, an error on disk.  Listing a sub-folder that does not exist gives
 * no names rather than an error: an archive has no record of folders, only
 * of the files in them, so the two cannot be told apart there.
 *
 * Thread safety: a folder never changes after it is made.  Disk reads open
 * their own descriptor; archive reads search the sorted, immutable member
 * array and copy out.  Only the reference counts are shared writes, and
 * they are atomic.
 */
#include "extract/walk.h"

#include "common/err.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct pn_folder {
	atomic_int refs;
	pn_archive *ar;   /* NULL: a directory on disk */
	char *path;       /* disk directory, or prefix of member names ("" or "a/b/") */
};

static pn_folder *pn_folder_new(pn_archive *ar, const char *path)
{
	pn_folder *f = malloc(sizeof *f);
	if (!f)
		return NULL;
	f->path = strdup(path);
	if (!f->path) {
		free(f);
		return NULL;
	}
	atomic_init(&f->refs, 1);
	f->ar = ar;
	return f;
}

pn_folder *pn_folder_disk(const char *dir)
{
	return pn_folder_new(NULL, dir);
}

pn_folder *pn_folder_archive(pn_archive *ar, const char *prefix)
{
	pn_folder *f = pn_folder_new(ar, prefix);
	if (f)
		atomic_fetch_add(&ar->refs, 1);
	return f;
}

const char *pn_folder_prefix(const pn_folder *f)
{
	return f->path;
}

void pn_folder_retain(pn_folder *f)
{
	if (f)
		atomic_fetch_add(&f->refs, 1);
}

void pn_folder_release(pn_folder *f)
{
	if (!f || atomic_fetch_sub(&f->refs, 1) != 1)
		return;
	pn_archive_release(f->ar);
	free(f->path);
	free(f);
}

void pn_unit_free(pn_unit *u)
{
	if (!u)
		return;
	free(u->source);
	free(u->path);
	free(u->bytes);
	free(u->model_name);
	pn_folder_release(u->folder);
	free(u);
}

/* f->path joined with rel ('/' between them when both are non-empty). */
static char *pn_folder_join(const pn_folder *f, const char *rel)
{
	char *s = NULL;
	const char *sep = f->ar || !*rel ? "" : "/";
	if (asprintf(&s, "%s%s%s", f->path, sep, rel) < 0)
		return NULL;
	return s;
}

int pn_disk_read(const char *path, void **data, size_t *len, char *err)
{
	struct stat st;
	if (stat(path, &st)) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 1;
		return pn_fail(err, "%s", strerror(errno));
	}
	/* Checked before open: opening a FIFO for reading would block. */
	if (!S_ISREG(st.st_mode))
		return pn_fail(err, "not a regular file");
	if ((uint64_t)st.st_size > PN_LIMIT_MEMBER_BYTES)
		return pn_fail(err, "%lld bytes, over the %llu-byte limit for one file",
		               (long long)st.st_size, (unsigned long long)PN_LIMIT_MEMBER_BYTES);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 1 : pn_fail(err, "%s", strerror(errno));
	size_t n = (size_t)st.st_size, got = 0;
	unsigned char *buf = malloc(n ? n : 1);
	if (!buf) {
		close(fd);
		return pn_fail(err, "out of memory (%zu bytes)", n);
	}
	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int e = r < 0 ? errno : 0;
			free(buf);
			close(fd);
			return pn_fail(err, "%s", e ? strerror(e) : "file shrank while being read");
		}
		got += (size_t)r;
	}
	close(fd);
	*data = buf;
	*len = n;
	return 0;
}

int pn_folder_read(pn_folder *f, const char *rel, void **data, size_t *len, char *err)
{
	*data = NULL;
	*len = 0;
	char *clean = malloc(strlen(rel) + 1);
	if (!clean)
		return pn_fail(err, "%s: out of memory", rel);
	const char *why = pn_clean_path(rel, clean);
	if (why || !*clean) {
		free(clean);
		return pn_fail(err, "'%s': not a file path inside the folder", rel);
	}
	char *key = pn_folder_join(f, clean);
	free(clean);
	if (!key)
		return pn_fail(err, "%s: out of memory", rel);
	int rc;
	if (!f->ar) {
		rc = pn_disk_read(key, data, len, err);
		if (rc < 0)
			pn_errprefix(err, "%s", rel);
	} else {
		size_t i = pn_archive_lower(f->ar, key);
		const pn_member *m = i < f->ar->n ? &f->ar->m[i] : NULL;
		if (!m || strcmp(m->name, key)) {
			rc = 1;
		} else if (!(*data = malloc(m->len ? m->len : 1))) {
			rc = pn_fail(err, "%s: out of memory (%zu bytes)", rel, m->len);
		} else {
			memcpy(*data, m->data, m->len);
			*len = m->len;
			rc = 0;
		}
	}
	free(key);
	return rc;
}

/* Growable list of names, sorted and freed on the caller's behalf. */
typedef struct pn_names {
	char **v;
	int n, cap;
} pn_names;

static int pn_names_add(pn_names *l, const char *s, size_t n, int dir)
{
	if (l->n == l->cap) {
		int cap = l->cap ? l->cap * 2 : 16;
		char **v = realloc(l->v, (size_t)cap * sizeof *v);
		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	char *c = malloc(n + 2);
	if (!c)
		return -1;
	memcpy(c, s, n);
	if (dir)
		c[n++] = '/';
	c[n] = '\0';
	l->v[l->n++] = c;
	return 0;
}

static int pn_list_disk(const char *path, pn_names *l, char *err)
{
	DIR *d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : pn_fail(err, "%s: %s", path, strerror(errno));
	int dfd = dirfd(d);
	struct dirent *de;
	int rc = 0;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		struct stat st;
		int dir = de->d_type == DT_DIR;
		if (de->d_type == DT_UNKNOWN || de->d_type == DT_LNK)
			dir = fstatat(dfd, de->d_name, &st, 0) == 0 && S_ISDIR(st.st_mode);
		if (pn_names_add(l, de->d_name, strlen(de->d_name), dir)) {
			rc = pn_fail(err, "out of memory");
			break;
		}
	}
	closedir(d);
	return rc;
}

/* Members under the prefix, cut at the next '/': "a.pb", "sub/". */
static int pn_list_archive(const pn_archive *ar, const char *prefix, pn_names *l, char *err)
{
	size_t plen = strlen(prefix);
	for (size_t i = pn_archive_lower(ar, prefix); i < ar->n; i++) {
		const char *name = ar->m[i].name;
		if (strncmp(name, prefix, plen))
			break;   /* names under one prefix are contiguous when sorted */
		const char *rest = name + plen;
		const char *slash = strchr(rest, '/');
		size_t n = slash ? (size_t)(slash - rest) : strlen(rest);
		if (l->n && strncmp(l->v[l->n - 1], rest, n) == 0 && l->v[l->n - 1][n] == '/' &&
		    slash)
			continue;   /* same sub-folder as the previous member */
		if (pn_names_add(l, rest, n, slash != NULL))
			return pn_fail(err, "out of memory");
	}
	return 0;
}

int pn_folder_list(pn_folder *f, const char *rel, char ***names, char *err)
{
	*names = NULL;
	char *clean = malloc(strlen(rel) + 1);
	if (!clean)
		return pn_fail(err, "out of memory");
	if (pn_clean_path(rel, clean)) {
		free(clean);
		return pn_fail(err, "'%s': not a path inside the folder", rel);
	}
	/* Archive prefixes end in '/' so that "t" does not match "t2/x". */
	char *r2 = NULL;
	int ok = asprintf(&r2, "%s%s", clean, f->ar && *clean ? "/" : "") >= 0;
	free(clean);
	if (!ok)
		return pn_fail(err, "out of memory");
	char *key = pn_folder_join(f, r2);
	free(r2);
	if (!key)
		return pn_fail(err, "out of memory");
	pn_names l = { 0 };
	int rc = f->ar ? pn_list_archive(f->ar, key, &l, err) : pn_list_disk(key, &l, err);
	free(key);
	if (rc) {
		pn_strv_free(l.v, l.n);
		return -1;
	}
	if (l.n > 1)
		qsort(l.v, (size_t)l.n, sizeof *l.v, pn_cmp_str);
	*names = l.v;
	return l.n;
}
