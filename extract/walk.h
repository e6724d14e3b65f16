/*
 * walk.h - internals shared by sources.c (walking), archive.c (reading an
 * archive into memory) and folder.c (pn_folder).  Not for other stages:
 * they see only extract/sources.h.
 */
#ifndef PN_WALK_H
#define PN_WALK_H

#include "extract/sources.h"

#include <stdatomic.h>
#include <stdint.h>

/* One regular file of an archive, its name normalised (no "./", no "//",
 * never absolute, never "..").  Directories are implied by the names. */
typedef struct pn_member {
	char *name;
	unsigned char *data;
	size_t len;
	size_t seq;   /* order read, to settle duplicate names */
} pn_member;

/* An archive read into memory: members sorted by name, unique, immutable
 * once built (so any number of threads may look things up without locks).
 * Freed when the last pn_folder pointing into it is released. */
typedef struct pn_archive {
	atomic_int refs;
	pn_member *m;
	size_t n;
} pn_archive;

/* What one top-level archive, with every archive nested in it, may expand
 * to (see PN_LIMIT_* in sources.h).  Shared down the nesting so that an
 * archive of archives cannot multiply the bound. */
typedef struct pn_budget {
	uint64_t limit, used;
	uint64_t archive_size;   /* compressed size the limit was derived from */
} pn_budget;

/* What a walk reports to, and the source it names in every report.  stop
 * holds what on_unit returned once it asked to stop; every loop checks it. */
typedef struct pn_walker {
	const char *source;
	const pn_walk_cb *cb;
	int stop;
	int ar_format;   /* the outermost archive may be an ar archive (a .deb) */
} pn_walker;

/* on_error with a formatted message; control characters in the place and
 * the message become '?' so that every report is one line. */
void pn_walk_error(pn_walker *w, const char *place, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

void pn_budget_init(pn_budget *b, uint64_t archive_size);

/* Reads the archive in the file at disk_path (format by libarchive's
 * detection), or in memory.  place is its canonical path, used in reports.
 * Problems after the archive was recognised are reported through w and the
 * members read completely before them are kept; returns 0 and *out then.
 * Returns -1 with err (libarchive's message) if the data is not an archive
 * that libarchive recognises or fails before its first member. */
int pn_archive_load_file(pn_walker *w, const char *disk_path, const char *place,
                         pn_budget *b, pn_archive **out, char *err);
int pn_archive_load_memory(pn_walker *w, const void *data, size_t len, const char *place,
                           pn_budget *b, pn_archive **out, char *err);
void pn_archive_release(pn_archive *ar);
/* Index of the first member whose name is >= key (n if none). */
size_t pn_archive_lower(const pn_archive *ar, const char *key);

/* Folders: on disk (dir is a path, "." allowed) or in an archive (prefix is
 * "" or ends in '/'; the folder takes a reference to ar).  refs start at 1. */
pn_folder *pn_folder_disk(const char *dir);
pn_folder *pn_folder_archive(pn_archive *ar, const char *prefix);
/* The directory or member-name prefix a folder was made with. */
const char *pn_folder_prefix(const pn_folder *f);

/* Reads a whole regular file (size checked against PN_LIMIT_MEMBER_BYTES
 * first).  0, 1 if there is no such file, or -1 with the problem (the
 * caller names the file). */
int pn_disk_read(const char *path, void **data, size_t *len, char *err);

/* Name helpers. */
int pn_has_suffix_ci(const char *s, const char *suffix);
int pn_is_model_name(const char *s);
int pn_is_archive_name(const char *s);
/* Normalises a relative path into out (at least strlen(raw) + 1 bytes):
 * drops "." and empty components and a trailing '/'.  Returns NULL, or why
 * the path is refused (absolute, or a ".." component). */
const char *pn_clean_path(const char *raw, char *out);

#endif
