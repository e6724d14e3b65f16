/*
 * archive.c - reading one archive into memory with libarchive (see walk.h).
 *
 * The archive is streamed once, member by member; each regular file is
 * copied into its own buffer, which is all the memory an archive costs.
 * Nothing touches the disk.  Sorting comes after reading because archives
 * store members in whatever order their writer chose, and passnet's order
 * must not depend on that.
 *
 * Limits are checked against the size a member declares before its buffer
 * is allocated, and again against the bytes that actually arrive (a zip
 * written as a stream may not declare sizes, and a header may lie).
 */
#include "extract/walk.h"

#include "common/err.h"

#include <archive.h>
#include <archive_entry.h>
#include <inttypes.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pn_loader {
	pn_walker *w;
	struct archive *a;
	const char *place;
	pn_budget *b;
	pn_archive *ar;
	size_t cap;
} pn_loader;

void pn_budget_init(pn_budget *b, uint64_t archive_size)
{
	uint64_t lim = archive_size > PN_LIMIT_ARCHIVE_MAX_BYTES / PN_LIMIT_ARCHIVE_RATIO
	               ? PN_LIMIT_ARCHIVE_MAX_BYTES : archive_size * PN_LIMIT_ARCHIVE_RATIO;
	if (lim < PN_LIMIT_ARCHIVE_MIN_BYTES)
		lim = PN_LIMIT_ARCHIVE_MIN_BYTES;
	if (lim > PN_LIMIT_ARCHIVE_MAX_BYTES)
		lim = PN_LIMIT_ARCHIVE_MAX_BYTES;
	b->limit = lim;
	b->used = 0;
	b->archive_size = archive_size;
}

/* member: where reading stopped, NULL while skipping damaged blocks. */
static void pn_budget_report(pn_loader *L, const char *member)
{
	char where[PN_ERRLEN];
	if (member)
		snprintf(where, sizeof where, "at member '%s'", member);
	else
		snprintf(where, sizeof where, "while skipping damaged data");
	pn_walk_error(L->w, L->place,
	              "archive expands beyond %" PRIu64 " bytes (limit: %d x the %" PRIu64
	              "-byte archive, at least %" PRIu64 " MiB, at most %" PRIu64
	              " GiB); reading stopped %s",
	              L->b->limit, PN_LIMIT_ARCHIVE_RATIO, L->b->archive_size,
	              PN_LIMIT_ARCHIVE_MIN_BYTES >> 20, PN_LIMIT_ARCHIVE_MAX_BYTES >> 30, where);
}

static int pn_loader_add(pn_loader *L, char *name, unsigned char *data, size_t len)
{
	pn_archive *ar = L->ar;
	if (ar->n == L->cap) {
		size_t cap = L->cap ? L->cap * 2 : 16;
		pn_member *m = realloc(ar->m, cap * sizeof *m);
		if (!m)
			return -1;
		ar->m = m;
		L->cap = cap;
	}
	ar->m[ar->n] = (pn_member){ name, data, len, ar->n };
	ar->n++;
	return 0;
}

enum { PN_READ_OK, PN_READ_SKIP, PN_READ_STOP };

/* Appends r freshly read bytes to the budget; 0 if they fit. */
static int pn_budget_take(pn_loader *L, uint64_t r, const char *member)
{
	if (r > L->b->limit - L->b->used) {
		L->b->used = L->b->limit;
		pn_budget_report(L, member);
		return -1;
	}
	L->b->used += r;
	return 0;
}

/*
 * Reads the current member's data.  declared is its size, or -1 if the
 * archive does not say.  PN_READ_SKIP: the member is lost but the archive
 * goes on; PN_READ_STOP: nothing more can be read from this archive.
 */
static int pn_read_data(pn_loader *L, const char *member, int64_t declared,
                        unsigned char **data, size_t *len)
{
	size_t cap = declared >= 0 ? (size_t)declared : 65536;
	size_t got = 0;
	unsigned char *buf = malloc(cap ? cap : 1);
	if (!buf) {
		pn_walk_error(L->w, L->place, "member '%s': out of memory (%zu bytes)", member, cap);
		return PN_READ_STOP;
	}
	for (;;) {
		unsigned char probe[4096];
		/* Reading into a full buffer would be a zero-length read, which
		 * libarchive cannot tell from the end: probe for more instead. */
		int full = got == cap;
		la_ssize_t r = full ? archive_read_data(L->a, probe, sizeof probe)
		                    : archive_read_data(L->a, buf + got, cap - got);
		if (r == 0)
			break;
		if (r < 0) {
			int fatal = r == ARCHIVE_FATAL;
			pn_walk_error(L->w, L->place, "%s archive, member '%s' lost: %s",
			              fatal ? "corrupt" : "damaged", member, archive_error_string(L->a));
			free(buf);
			return fatal ? PN_READ_STOP : PN_READ_SKIP;
		}
		/* Declared sizes were checked up front; only bytes beyond them
		 * (or all bytes when there was no declaration) count here. */
		uint64_t extra = declared >= 0 && got + (size_t)r <= (size_t)declared ? 0 : (uint64_t)r;
		if (extra && pn_budget_take(L, extra, member)) {
			free(buf);
			return PN_READ_STOP;
		}
		if (got + (uint64_t)r > PN_LIMIT_MEMBER_BYTES) {
			pn_walk_error(L->w, L->place, "member '%s' expands beyond %" PRIu64
			              " bytes (limit for one member); reading stopped",
			              member, PN_LIMIT_MEMBER_BYTES);
			free(buf);
			return PN_READ_STOP;
		}
		if (full) {
			size_t ncap = cap * 2 > got + (size_t)r ? cap * 2 : got + (size_t)r;
			if (ncap < 65536)
				ncap = 65536;
			unsigned char *nb = realloc(buf, ncap);
			if (!nb) {
				pn_walk_error(L->w, L->place, "member '%s': out of memory", member);
				free(buf);
				return PN_READ_STOP;
			}
			buf = nb;
			cap = ncap;
			memcpy(buf + got, probe, (size_t)r);
		}
		got += (size_t)r;
	}
	*data = buf;
	*len = got;
	return PN_READ_OK;
}

/* A hard link in a tar carries no data of its own: copy its target's. */
static int pn_read_hardlink(pn_loader *L, struct archive_entry *e, const char *member,
                            unsigned char **data, size_t *len)
{
	const char *target = archive_entry_hardlink(e);
	char *clean = malloc(strlen(target) + 1);
	if (!clean || pn_clean_path(target, clean)) {
		free(clean);
		pn_walk_error(L->w, L->place, "member '%s': hard link to a refused name, skipped", member);
		return PN_READ_SKIP;
	}
	for (size_t i = L->ar->n; i-- > 0;) {
		pn_member *m = &L->ar->m[i];
		if (strcmp(m->name, clean))
			continue;
		free(clean);
		if (pn_budget_take(L, m->len, member))
			return PN_READ_STOP;
		*data = malloc(m->len ? m->len : 1);
		if (!*data)
			return PN_READ_STOP;
		memcpy(*data, m->data, m->len);
		*len = m->len;
		return PN_READ_OK;
	}
	free(clean);
	pn_walk_error(L->w, L->place, "member '%s': hard link to '%s', which is not in the archive before it; skipped",
	              member, target);
	return PN_READ_SKIP;
}

static const char *pn_type_name(unsigned t)
{
	switch (t) {
	case AE_IFLNK: return "a symbolic link";
	case AE_IFCHR: return "a character device";
	case AE_IFBLK: return "a block device";
	case AE_IFIFO: return "a FIFO";
	case AE_IFSOCK: return "a socket";
	default: return "not a regular file";
	}
}

/* One header just read: keep the member, skip it, or stop. */
static int pn_load_entry(pn_loader *L, struct archive_entry *e)
{
	const char *raw = archive_entry_pathname_utf8(e);
	if (!raw)
		raw = archive_entry_pathname(e);
	if (!raw || !*raw) {
		pn_walk_error(L->w, L->place, "member without a name, skipped");
		return PN_READ_SKIP;
	}
	unsigned type = archive_entry_filetype(e);
	int hardlink = archive_entry_hardlink(e) != NULL;
	if (type == AE_IFDIR)
		return PN_READ_SKIP;
	char *name = malloc(strlen(raw) + 1);
	if (!name) {
		pn_walk_error(L->w, L->place, "out of memory");
		return PN_READ_STOP;
	}
	const char *why = pn_clean_path(raw, name);
	/* macOS zips carry AppleDouble twins ("__MACOSX/a/._model.onnx"): not
	 * models, just metadata, and silently noise otherwise. */
	if (!why && (!*name || strncmp(name, "__MACOSX/", 9) == 0)) {
		free(name);
		return PN_READ_SKIP;
	}
	if (why) {
		char *place = NULL;
		if (asprintf(&place, "%s!%s", L->place, raw) >= 0)
			pn_walk_error(L->w, place, "%s", why);
		free(place);
		free(name);
		return PN_READ_SKIP;
	}
	if (type != AE_IFREG && !hardlink) {
		/* Links are not followed inside archives; only worth a word if
		 * the link would have been a model or an archive. */
		if (pn_is_model_name(name) || pn_is_archive_name(name))
			pn_walk_error(L->w, L->place, "member '%s' is %s, skipped", name, pn_type_name(type));
		free(name);
		return PN_READ_SKIP;
	}
	unsigned char *data = NULL;
	size_t len = 0;
	int rc;
	int64_t declared = archive_entry_size_is_set(e) ? archive_entry_size(e) : -1;
	if (hardlink && declared <= 0) {
		rc = pn_read_hardlink(L, e, name, &data, &len);
	} else if (declared >= 0 && (uint64_t)declared > L->b->limit - L->b->used) {
		L->b->used = L->b->limit;
		pn_budget_report(L, name);
		rc = PN_READ_STOP;
	} else if (declared >= 0 && (uint64_t)declared > PN_LIMIT_MEMBER_BYTES) {
		/* Within the archive's bound, so skipping over it is bounded too. */
		L->b->used += (uint64_t)declared;
		pn_walk_error(L->w, L->place, "member '%s' is %" PRId64 " bytes, over the %" PRIu64
		              "-byte limit; skipped", name, declared, PN_LIMIT_MEMBER_BYTES);
		rc = PN_READ_SKIP;
	} else {
		if (declared >= 0)
			L->b->used += (uint64_t)declared;
		rc = pn_read_data(L, name, declared, &data, &len);
	}
	if (rc == PN_READ_OK && pn_loader_add(L, name, data, len)) {
		pn_walk_error(L->w, L->place, "out of memory");
		rc = PN_READ_STOP;
	} else if (rc == PN_READ_OK) {
		return PN_READ_OK;
	}
	free(data);
	free(name);
	return rc;
}

static int pn_cmp_member(const void *a, const void *b)
{
	const pn_member *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

/*
 * Sorts by name; when a name repeats (tar appends updated copies), the copy
 * read last wins, as it would when the archive is unpacked.
 */
static void pn_loader_finish(pn_loader *L)
{
	pn_archive *ar = L->ar;
	if (ar->n > 1)
		qsort(ar->m, ar->n, sizeof *ar->m, pn_cmp_member);
	size_t k = 0;
	for (size_t i = 0; i < ar->n; i++) {
		if (i + 1 < ar->n && strcmp(ar->m[i].name, ar->m[i + 1].name) == 0) {
			pn_walk_error(L->w, L->place, "member '%s' appears more than once; the last copy is used",
			              ar->m[i].name);
			free(ar->m[i].name);
			free(ar->m[i].data);
			continue;
		}
		ar->m[k++] = ar->m[i];
	}
	ar->n = k;
}

/* Walks every header of an opened archive into L->ar. */
static int pn_load(pn_loader *L, char *err)
{
	int retries = 0, seen = 0;
	for (;;) {
		struct archive_entry *e;
		int r = archive_read_next_header(L->a, &e);
		if (r == ARCHIVE_EOF)
			break;
		if (r == ARCHIVE_FATAL && !seen)
			return pn_fail(err, "%s", archive_error_string(L->a));
		seen = 1;
		if (r == ARCHIVE_FATAL) {
			pn_walk_error(L->w, L->place, "corrupt archive, reading stopped: %s",
			              archive_error_string(L->a));
			break;
		}
		if (r == ARCHIVE_RETRY || r == ARCHIVE_FAILED) {
			/* libarchive skips damage a block at a time; one report per
			 * damaged stretch, and every block skipped is charged to the
			 * budget so that endless junk cannot keep us here. */
			if (!retries++)
				pn_walk_error(L->w, L->place, "damaged archive, skipping to the next readable member: %s",
				              archive_error_string(L->a));
			if (pn_budget_take(L, 512, NULL))
				break;
			continue;
		}
		retries = 0;
		/* Should C.UTF-8 be missing, names still come through as UTF-8
		 * (archive_entry_pathname_utf8) for most formats, and the
		 * warning that they do not fit the locale is beside the point. */
		const char *why = archive_error_string(L->a);
		if (r == ARCHIVE_WARN && !(why && (strstr(why, "can't be converted") ||
		                                   strstr(why, "cannot be converted"))))
			pn_walk_error(L->w, L->place, "warning: %s", why ? why : "(no message)");
		if (pn_load_entry(L, e) == PN_READ_STOP)
			break;
	}
	pn_loader_finish(L);
	return 0;
}

/* Formats and filters passnet reads (see sources.h).  Not support_*_all:
 * that would also take cpio, ISO images or mtree text files for archives,
 * and hand some filters to external programs.  ar only where a .deb is
 * expected (its members, data.tar.xz and the like, are walked as nested
 * archives). */
static struct archive *pn_archive_new(int ar)
{
	struct archive *a = archive_read_new();
	if (!a)
		return NULL;
	if (ar)
		archive_read_support_format_ar(a);
	archive_read_support_format_tar(a);
	archive_read_support_format_zip(a);
	archive_read_support_filter_gzip(a);
	archive_read_support_filter_bzip2(a);
	archive_read_support_filter_xz(a);
	archive_read_support_filter_lzma(a);
	return a;
}

/*
 * libarchive converts member names to the locale's charset, and in the "C"
 * locale every program starts in, a UTF-8 name in a zip is then dropped
 * altogether.  Reading under a thread-local UTF-8 locale keeps names as the
 * UTF-8 bytes they are, whatever the process's locale (uselocale() touches
 * this thread only; the previous locale comes back after).
 */
typedef struct pn_locale {
	locale_t utf8, old;
} pn_locale;

static void pn_locale_enter(pn_locale *l)
{
	l->utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	l->old = l->utf8 ? uselocale(l->utf8) : (locale_t)0;
}

static void pn_locale_leave(pn_locale *l)
{
	if (!l->utf8)
		return;
	uselocale(l->old);
	freelocale(l->utf8);
}

static int pn_archive_run(pn_walker *w, struct archive *a, const char *place, pn_budget *b,
                          pn_archive **out, char *err)
{
	pn_loader L = { .w = w, .a = a, .place = place, .b = b };
	L.ar = calloc(1, sizeof *L.ar);
	if (!L.ar) {
		archive_read_free(a);
		return pn_fail(err, "out of memory");
	}
	atomic_init(&L.ar->refs, 1);
	int rc = pn_load(&L, err);
	archive_read_free(a);
	if (rc) {
		pn_archive_release(L.ar);
		return -1;
	}
	*out = L.ar;
	return 0;
}

/* Opens a file (disk_path) or memory (data, len) and reads it all. */
static int pn_archive_load(pn_walker *w, const char *disk_path, const void *data, size_t len,
                           const char *place, pn_budget *b, pn_archive **out, char *err)
{
	pn_locale loc;
	pn_locale_enter(&loc);
	int rc = -1;
	struct archive *a = pn_archive_new(disk_path && w->ar_format);
	if (!a) {
		pn_fail(err, "out of memory");
	} else if ((disk_path ? archive_read_open_filename(a, disk_path, 1 << 16)
	                      : archive_read_open_memory(a, data, len)) != ARCHIVE_OK) {
		pn_fail(err, "%s", archive_error_string(a));
		archive_read_free(a);
	} else {
		rc = pn_archive_run(w, a, place, b, out, err);
	}
	pn_locale_leave(&loc);
	return rc;
}

int pn_archive_load_file(pn_walker *w, const char *disk_path, const char *place,
                         pn_budget *b, pn_archive **out, char *err)
{
	return pn_archive_load(w, disk_path, NULL, 0, place, b, out, err);
}

int pn_archive_load_memory(pn_walker *w, const void *data, size_t len, const char *place,
                           pn_budget *b, pn_archive **out, char *err)
{
	return pn_archive_load(w, NULL, data, len, place, b, out, err);
}

void pn_archive_release(pn_archive *ar)
{
	if (!ar || atomic_fetch_sub(&ar->refs, 1) != 1)
		return;
	for (size_t i = 0; i < ar->n; i++) {
		free(ar->m[i].name);
		free(ar->m[i].data);
	}
	free(ar->m);
	free(ar);
}

size_t pn_archive_lower(const pn_archive *ar, const char *key)
{
	size_t lo = 0, hi = ar->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(ar->m[mid].name, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
