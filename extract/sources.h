/*
 * sources.h - finding model files in files, directories and archives.
 *
 * A source is walked in a deterministic order (directory entries and archive
 * members sorted by byte-wise name, whatever order the file system or the
 * archive stores them in), and every *.onnx file found becomes a pn_unit:
 * the model bytes, the folder it sits in (to read external data and test
 * sets from), and its canonical path inside the source.
 *
 * Paths: relative to the source root, '/' separated; a member of an archive
 * is written "<archive path>!<member path>", nested archives repeat the
 * "!" ("zoo/bundle.tar!a.zip!a/model.onnx").  A source that is a single
 * file or archive is rooted at the folder it sits in, so its paths start
 * with its file name ("model.onnx", "zoo.tar.gz!a/model.onnx").
 *
 * Archives (.tar, .tar.gz/.tgz, .tar.xz/.txz, .tar.bz2/.tbz2, .zip, and the
 * same found inside archives; a source that is a .deb, an ar archive, with
 * its data.tar.* inside) are read with libarchive as streams; nothing is
 * unpacked to disk.  Members are held in memory until every unit that
 * refers to the archive is freed.
 *
 * Bad input never stops a walk: each problem is reported through on_error
 * with the place and a one-line message, and the walk goes on with the
 * next member or file.
 *
 * Limits (checked before memory is committed; see PN_LIMIT_* below):
 *   - one member may expand to at most PN_LIMIT_MEMBER_BYTES;
 *   - one top-level archive may expand to at most
 *     max(PN_LIMIT_ARCHIVE_MIN_BYTES, PN_LIMIT_ARCHIVE_RATIO x its size),
 *     capped at PN_LIMIT_ARCHIVE_MAX_BYTES (stops gzip bombs early);
 *   - archives nest at most PN_LIMIT_NESTING deep;
 *   - member names that are absolute or contain a ".." component are refused.
 */
#ifndef PN_SOURCES_H
#define PN_SOURCES_H

#include <stddef.h>
#include <stdint.h>

#define PN_LIMIT_MEMBER_BYTES      ((uint64_t)4 << 30)
#define PN_LIMIT_ARCHIVE_MIN_BYTES ((uint64_t)256 << 20)
#define PN_LIMIT_ARCHIVE_RATIO     100
#define PN_LIMIT_ARCHIVE_MAX_BYTES ((uint64_t)16 << 30)
#define PN_LIMIT_NESTING           8

/* A folder a model was found in: a directory on disk or a folder inside an
 * (in-memory) archive.  Reference counted; safe to read from many threads. */
typedef struct pn_folder pn_folder;

/* Reads the file at rel (relative to the folder, '/' separated, already free
 * of ".." and leading '/').  Returns 0 and a malloc'd buffer the caller frees,
 * 1 if there is no such file, -1 with a message on error. */
int  pn_folder_read(pn_folder *f, const char *rel, void **data, size_t *len, char *err);
/* Lists names directly in the sub-folder rel ("" = the folder itself), sorted;
 * directories end in '/'.  Returns the count (>= 0), -1 on error; *names and
 * each name are malloc'd. */
int  pn_folder_list(pn_folder *f, const char *rel, char ***names, char *err);
void pn_folder_retain(pn_folder *f);
void pn_folder_release(pn_folder *f);

typedef struct pn_unit {
	char *source;        /* source name */
	char *path;          /* canonical path inside the source (see above) */
	void *bytes;         /* the .onnx file */
	size_t len;
	pn_folder *folder;   /* where bytes came from: for external data, test sets */
	char *model_name;    /* file name inside the folder ("model.onnx") */
} pn_unit;

void pn_unit_free(pn_unit *u);   /* releases the folder reference */

typedef struct pn_walk_cb {
	/* Receives ownership of u (call pn_unit_free). Return non-zero to stop. */
	int (*on_unit)(void *ud, pn_unit *u);
	/* A file or member that could not be read; the walk goes on. */
	void (*on_error)(void *ud, const char *source, const char *path, const char *msg);
	void *ud;
} pn_walk_cb;

/* Walks one source rooted at location (a .onnx file, a directory or an
 * archive).  Returns 0 when the walk reached its end (even if on_error was
 * called), -1 with a message if the location itself cannot be opened, or the
 * non-zero value on_unit stopped it with. */
int pn_source_walk(const char *source, const char *location, const pn_walk_cb *cb, char *err);

/* Walks a fetched file (extract/fetch.h: a cached copy named by its
 * checksum) as the file name it stands for: paths start with name, as if
 * the file were called so ("tiny-1.0.0.tgz!package/a.onnx"), and no report
 * names disk.  A name ending in .onnx is one model (in a folder of its own:
 * nothing beside it in the cache is visible to it); anything else is an
 * archive, and a name ending in .deb an ar archive (a Debian package, whose
 * data.tar.* is walked as an archive inside it), as it is for
 * pn_source_walk. */
int pn_source_walk_fetched(const char *source, const char *disk, const char *name,
                           const pn_walk_cb *cb, char *err);

/* One line of data-manifest.txt (format: manifest.c). */
typedef struct pn_manifest_entry {
	char *name, *kind, *location, *checksum, *licence, *note;
	char *group;     /* the [section] the line is in, or NULL before any */
	int line;
} pn_manifest_entry;

/* Parses a manifest; locations are resolved relative to the manifest's
 * folder.  A malformed line is an error naming the file and line. */
int  pn_manifest_read(const char *path, pn_manifest_entry **out, int *n, char *err);
void pn_manifest_free(pn_manifest_entry *e, int n);
/* True for the kinds fetched into the cache first: npm, deb, url. */
int  pn_kind_is_remote(const char *kind);

#endif
