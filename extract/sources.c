/*
 * sources.c - walking a source (see sources.h): a .onnx file, a directory
 * tree, or an archive, with archives inside either walked in turn.
 *
 * Order: a directory's entries are sorted by name, a sub-directory's name
 * taken with its trailing '/' ("a/" sorts after "a.txt" and "a-b").  That is
 * the byte order of the paths below them, which is also the order the
 * members of an archive holding the same tree are walked in, so moving a
 * tree into an archive does not reorder it.
 *
 * A single file or archive as the source is treated as a directory holding
 * just that file: its units are "model.onnx" or "zoo.tar.gz!a/model.onnx",
 * which keeps the archive's name in every path and error.
 */
#include "extract/walk.h"

#include "common/err.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- names ---------------------------------------------------------------- */

int pn_has_suffix_ci(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n > k && strcasecmp(s + n - k, suffix) == 0;
}

int pn_is_model_name(const char *s)
{
	/* ONNX, and TorchScript archives as torch.jit.save names them; which
	 * reader a file goes to is decided by its content (model/formats.c) */
	static const char *ext[] = {".onnx", ".pt", ".pth", ".jit", ".torchscript",
	                            ".pt2" /* torch.export: recognised, recorded as not read */};
	const char *base = strrchr(s, '/');
	base = base ? base + 1 : s;
	for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++)
		if (pn_has_suffix_ci(base, ext[i]))
			return 1;
	return 0;
}

int pn_is_archive_name(const char *s)
{
	static const char *ext[] = { ".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz",
	                             ".tar.bz2", ".tbz2", ".tbz", ".zip",
	                             ".mar" /* TorchServe's model archive: a zip */ };
	for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++)
		if (pn_has_suffix_ci(s, ext[i]))
			return 1;
	return 0;
}

const char *pn_clean_path(const char *raw, char *out)
{
	if (raw[0] == '/')
		return "absolute member name, refused";
	char *o = out;
	const char *p = raw;
	while (*p) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return "member name contains a '..' component, refused";
		if (n && !(n == 1 && p[0] == '.')) {
			if (o != out)
				*o++ = '/';
			memcpy(o, p, n);
			o += n;
		}
		p += n;
		if (*p == '/')
			p++;
	}
	*o = '\0';
	return NULL;
}

/* --- reports --------------------------------------------------------------- */

static void pn_one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

void pn_walk_error(pn_walker *w, const char *place, const char *fmt, ...)
{
	if (!w->cb->on_error)
		return;
	char msg[PN_ERRLEN];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	pn_one_line(msg);
	char *p = strdup(place);
	if (p)
		pn_one_line(p);
	w->cb->on_error(w->cb->ud, w->source, p ? p : place, msg);
	free(p);
}

/* --- units ------------------------------------------------------------------ */

static char *pn_join(const char *a, const char *sep, const char *b)
{
	char *s = NULL;
	if (asprintf(&s, "%s%s%s", *a ? a : "", *a ? sep : "", b) < 0)
		return NULL;
	return s;
}

/*
 * Hands one unit to on_unit.  bytes (malloc'd) and path are taken over
 * whatever happens; folder gets a reference of the unit's own.
 */
static void pn_emit(pn_walker *w, char *path, void *bytes, size_t len, pn_folder *folder)
{
	pn_unit *u = calloc(1, sizeof *u);
	const char *base = strrchr(path, '/');
	const char *bang = strrchr(path, '!');
	if (!base || (bang && bang > base))
		base = bang;
	base = base ? base + 1 : path;
	if (u) {
		u->source = strdup(w->source);
		u->model_name = strdup(base);
	}
	if (!u || !u->source || !u->model_name) {
		pn_walk_error(w, path, "out of memory");
		if (u) {
			free(u->source);
			free(u->model_name);
		}
		free(u);
		free(path);
		free(bytes);
		return;
	}
	u->path = path;
	u->bytes = bytes;
	u->len = len;
	pn_folder_retain(folder);
	u->folder = folder;
	if (!w->cb->on_unit)
		pn_unit_free(u);
	else
		w->stop = w->cb->on_unit(w->cb->ud, u);
}

/* --- archives ---------------------------------------------------------------- */

static void pn_walk_archive(pn_walker *w, pn_archive *ar, const char *place, int depth, pn_budget *b);

/* A member of ar that is itself an archive, at nesting depth depth. */
static void pn_walk_nested(pn_walker *w, const pn_member *m, const char *place, int depth, pn_budget *b)
{
	if (depth > PN_LIMIT_NESTING) {
		pn_walk_error(w, place, "archive nesting deeper than %d", PN_LIMIT_NESTING);
		return;
	}
	pn_archive *inner;
	char err[PN_ERRLEN];
	if (pn_archive_load_memory(w, m->data, m->len, place, b, &inner, err)) {
		pn_walk_error(w, place, "cannot read archive: %s", err);
		return;
	}
	pn_walk_archive(w, inner, place, depth, b);
	pn_archive_release(inner);
}

/* The folder prefix of a member name: "a/b/" for "a/b/model.onnx". */
static size_t pn_dir_len(const char *name)
{
	const char *s = strrchr(name, '/');
	return s ? (size_t)(s - name) + 1 : 0;
}

static void pn_walk_archive(pn_walker *w, pn_archive *ar, const char *place, int depth, pn_budget *b)
{
	pn_folder *folder = NULL;   /* shared by consecutive models in one folder */
	for (size_t i = 0; i < ar->n && !w->stop; i++) {
		const pn_member *m = &ar->m[i];
		int onnx = pn_is_model_name(m->name);
		if (!onnx && !pn_is_archive_name(m->name))
			continue;
		char *path = pn_join(place, "!", m->name);
		if (!path) {
			pn_walk_error(w, place, "out of memory");
			continue;
		}
		if (!onnx) {
			pn_walk_nested(w, m, path, depth + 1, b);
			free(path);
			continue;
		}
		size_t dl = pn_dir_len(m->name);
		if (folder) {
			const char *fp = pn_folder_prefix(folder);
			if (strlen(fp) != dl || strncmp(fp, m->name, dl)) {
				pn_folder_release(folder);
				folder = NULL;
			}
		}
		char *prefix = strndup(m->name, dl);
		if (!folder && prefix)
			folder = pn_folder_archive(ar, prefix);
		free(prefix);
		void *bytes = malloc(m->len ? m->len : 1);
		if (!folder || !bytes) {
			pn_walk_error(w, path, "out of memory");
			free(bytes);
			free(path);
			continue;
		}
		memcpy(bytes, m->data, m->len);
		pn_emit(w, path, bytes, m->len, folder);
	}
	pn_folder_release(folder);
}

/* An archive file on disk, the outermost of its nest. */
static int pn_walk_archive_file(pn_walker *w, const char *disk, const char *place, off_t size,
                                char *err)
{
	pn_budget b;
	pn_budget_init(&b, (uint64_t)size);
	pn_archive *ar;
	if (pn_archive_load_file(w, disk, place, &b, &ar, err))
		return -1;
	pn_walk_archive(w, ar, place, 1, &b);
	pn_archive_release(ar);
	return 0;
}

/* --- files and directories ---------------------------------------------------- */

typedef struct pn_dirent {
	char *name;
	char *key;     /* name, with '/' appended for a directory: the sort key */
	int dir;
	off_t size;
} pn_dirent;

static int pn_cmp_dirent(const void *a, const void *b)
{
	return strcmp(((const pn_dirent *)a)->key, ((const pn_dirent *)b)->key);
}

static void pn_dirents_free(pn_dirent *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].key);
	}
	free(v);
}

/*
 * Reads and sorts the entries of a directory worth walking: sub-directories
 * (not through symlinks, which could loop or leave the source) and regular
 * files (symlinks to files are followed).  A dangling link named like a
 * model or an archive is reported; other entries are of no interest.
 */
static int pn_read_dir(pn_walker *w, const char *disk, const char *rel, pn_dirent **out, size_t *nout,
                       char *err)
{
	DIR *d = opendir(disk);
	if (!d)
		return pn_fail(err, "%s", strerror(errno));
	int dfd = dirfd(d);
	pn_dirent *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int rc = 0;
	errno = 0;
	while ((de = readdir(d))) {
		const char *nm = de->d_name;
		if (!strcmp(nm, ".") || !strcmp(nm, ".."))
			continue;
		struct stat st;
		if (fstatat(dfd, nm, &st, AT_SYMLINK_NOFOLLOW))
			continue;   /* vanished since readdir */
		int link = S_ISLNK(st.st_mode);
		if (link && fstatat(dfd, nm, &st, 0)) {
			/* A dangling link only matters where a file would have. */
			int e = errno;
			if (pn_is_model_name(nm) || pn_is_archive_name(nm)) {
				char *place = pn_join(rel, "", nm);
				pn_walk_error(w, place ? place : nm, "%s", strerror(e));
				free(place);
			}
			continue;
		}
		int dir = S_ISDIR(st.st_mode);
		if ((dir && link) || (!dir && !S_ISREG(st.st_mode)))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			pn_dirent *nv = realloc(v, cap * sizeof *v);
			if (!nv) {
				rc = pn_fail(err, "out of memory");
				break;
			}
			v = nv;
		}
		pn_dirent *e = &v[n];
		e->name = strdup(nm);
		e->key = pn_join(nm, "", dir ? "/" : "");
		e->dir = dir;
		e->size = st.st_size;
		if (!e->name || !e->key) {
			free(e->name);
			free(e->key);
			rc = pn_fail(err, "out of memory");
			break;
		}
		n++;
		errno = 0;
	}
	if (!rc && errno)
		rc = pn_fail(err, "%s", strerror(errno));
	closedir(d);
	if (rc) {
		pn_dirents_free(v, n);
		return -1;
	}
	if (n > 1)
		qsort(v, n, sizeof *v, pn_cmp_dirent);
	*out = v;
	*nout = n;
	return 0;
}

/* A .onnx file on disk whose folder is f; path is handed over. */
static int pn_walk_onnx_file(pn_walker *w, const char *disk, char *path, pn_folder *f, char *err)
{
	void *bytes;
	size_t len;
	int rc = pn_disk_read(disk, &bytes, &len, err);
	if (rc) {
		if (rc > 0)
			pn_fail(err, "%s", strerror(ENOENT));
		free(path);
		return -1;
	}
	pn_emit(w, path, bytes, len, f);
	return 0;
}

/* disk is the directory, rel its path in the source ("" or "a/b/").
 * Returns -1 only if the directory itself cannot be read. */
static int pn_walk_dir(pn_walker *w, const char *disk, const char *rel, char *err)
{
	pn_dirent *v = NULL;
	size_t n = 0;
	if (pn_read_dir(w, disk, rel, &v, &n, err))
		return -1;
	pn_folder *folder = NULL;   /* made on the first model found here */
	for (size_t i = 0; i < n && !w->stop; i++) {
		pn_dirent *e = &v[i];
		int onnx = !e->dir && pn_is_model_name(e->name);
		if (!e->dir && !onnx && !pn_is_archive_name(e->name))
			continue;
		char *sub = pn_join(disk, "/", e->name);
		char *path = pn_join(rel, "", e->key);
		char *place = path ? strdup(path) : NULL;   /* path may be handed over */
		char suberr[PN_ERRLEN];
		if (!sub || !path || !place) {
			pn_walk_error(w, rel, "out of memory");
			free(path);
		} else if (e->dir) {
			if (pn_walk_dir(w, sub, path, suberr))
				pn_walk_error(w, place, "cannot read directory: %s", suberr);
			free(path);
		} else if (onnx) {
			if (!folder)
				folder = pn_folder_disk(disk);
			if (!folder) {
				pn_walk_error(w, place, "out of memory");
				free(path);
			} else if (pn_walk_onnx_file(w, sub, path, folder, suberr)) {
				pn_walk_error(w, place, "cannot read: %s", suberr);
			}
		} else {
			if (pn_walk_archive_file(w, sub, path, e->size, suberr))
				pn_walk_error(w, place, "cannot read archive: %s", suberr);
			free(path);
		}
		free(place);
		free(sub);
	}
	pn_folder_release(folder);
	pn_dirents_free(v, n);
	return 0;
}

/* The folder a lone file sits in: "." for a bare name. */
static char *pn_parent_dir(const char *path)
{
	const char *s = strrchr(path, '/');
	if (!s)
		return strdup(".");
	if (s == path)
		return strdup("/");
	return strndup(path, (size_t)(s - path));
}

int pn_source_walk(const char *source, const char *location, const pn_walk_cb *cb, char *err)
{
	pn_walker w = { .source = source, .cb = cb };
	struct stat st;
	if (stat(location, &st))
		return pn_fail(err, "%s: %s", location, strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		/* Directory entries are taken without a trailing '/' on the root. */
		size_t n = strlen(location);
		while (n > 1 && location[n - 1] == '/')
			n--;
		char *root = strndup(location, n);
		if (!root)
			return pn_fail(err, "out of memory");
		int rc = pn_walk_dir(&w, root, "", err);
		free(root);
		if (rc) {
			pn_errprefix(err, "%s: cannot read directory", location);
			return -1;
		}
		return w.stop;
	}
	if (!S_ISREG(st.st_mode))
		return pn_fail(err, "%s: not a file or a directory", location);
	const char *base = strrchr(location, '/');
	base = base ? base + 1 : location;
	if (pn_is_model_name(base)) {
		char *dir = pn_parent_dir(location);
		pn_folder *f = dir ? pn_folder_disk(dir) : NULL;
		char *path = strdup(base);
		free(dir);
		if (!f || !path) {
			pn_folder_release(f);
			free(path);
			return pn_fail(err, "out of memory");
		}
		int rc = pn_walk_onnx_file(&w, location, path, f, err);
		pn_folder_release(f);
		if (rc) {
			pn_errprefix(err, "%s", location);
			return -1;
		}
		return w.stop;
	}
	/* Anything else must be an archive, whatever its name says; a .deb
	 * is an ar archive, which no other name lets in. */
	w.ar_format = pn_has_suffix_ci(base, ".deb");
	if (pn_walk_archive_file(&w, location, base, st.st_size, err)) {
		pn_errprefix(err, "%s: not a model file (.onnx, .pt), a directory or a readable archive", location);
		return -1;
	}
	return w.stop;
}

/* A model file alone in an in-memory folder: an archive of one member. */
static int pn_walk_lone_model(pn_walker *w, const char *disk, const char *name, char *err)
{
	void *bytes;
	size_t len;
	int rc = pn_disk_read(disk, &bytes, &len, err);
	if (rc)
		return rc > 0 ? pn_fail(err, "%s", strerror(ENOENT)) : -1;
	pn_archive *ar = calloc(1, sizeof *ar);
	pn_member *m = calloc(1, sizeof *m);
	char *mname = strdup(name);
	if (!ar || !m || !mname) {
		free(ar);
		free(m);
		free(mname);
		free(bytes);
		return pn_fail(err, "out of memory");
	}
	atomic_init(&ar->refs, 1);
	*m = (pn_member){ mname, bytes, len, 0 };
	ar->m = m;
	ar->n = 1;
	pn_budget b;
	pn_budget_init(&b, len);
	pn_walk_archive(w, ar, "", 1, &b);
	pn_archive_release(ar);
	return 0;
}

int pn_source_walk_fetched(const char *source, const char *disk, const char *name,
                           const pn_walk_cb *cb, char *err)
{
	int deb = pn_has_suffix_ci(name, ".deb");
	pn_walker w = { .source = source, .cb = cb, .ar_format = deb };
	struct stat st;
	if (stat(disk, &st) || !S_ISREG(st.st_mode))
		return pn_fail(err, "%s: the cached file is gone", name);
	if (!deb && pn_is_model_name(name)) {
		if (pn_walk_lone_model(&w, disk, name, err)) {
			pn_errprefix(err, "%s", name);
			return -1;
		}
		return w.stop;
	}
	if (pn_walk_archive_file(&w, disk, name, st.st_size, err)) {
		pn_errprefix(err, "%s: not %s", name, deb ? "a Debian package (an ar archive)"
		                                         : "a model file (.onnx, .pt) or a readable archive");
		return -1;
	}
	return w.stop;
}
