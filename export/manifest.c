/*
 * manifest.c - MANIFEST.tsv of an export, and the export as one .tar.gz.
 * Both walk the tree in byte-wise sorted order so that the same files give
 * the same manifest and the same archive bytes.
 */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <nettle/sha2.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <xxhash.h>

#include "common/err.h"
#include "common/util.h"
#include "export/write.h"
#include "model/onnx.h"

typedef struct file_list {
	char **rel;        /* paths relative to the root; directories end in '/' */
	int n, cap;
} file_list;

static int list_tree(const char *root, const char *rel, file_list *out, char *err)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	DIR *d = opendir(path);
	if (!d)
		return pn_fail(err, "%s: %s", path, strerror(errno));
	char **names = NULL;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		names = realloc(names, sizeof(char *) * (size_t)(n + 1));
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof(char *), pn_cmp_str);
	int rc = 0;
	for (int i = 0; i < n; i++) {
		char sub[4096], full[8192];
		struct stat st;
		snprintf(sub, sizeof sub, "%s%s", rel, names[i]);
		snprintf(full, sizeof full, "%s/%s", root, sub);
		if (!rc && !stat(full, &st)) {
			if (out->n == out->cap) {
				out->cap = out->cap ? out->cap * 2 : 256;
				out->rel = realloc(out->rel, sizeof(char *) * (size_t)out->cap);
			}
			if (S_ISDIR(st.st_mode)) {
				strcat(sub, "/");
				out->rel[out->n++] = strdup(sub);
				rc = list_tree(root, sub, out, err);
			} else if (S_ISREG(st.st_mode)) {
				out->rel[out->n++] = strdup(sub);
			}
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

static void free_list(file_list *l)
{
	pn_strv_free(l->rel, l->n);
}

static int hash_file(const char *path, uint64_t *size, char xxh[33], char sha[65], char *err)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return pn_fail(err, "%s: %s", path, strerror(errno));
	XXH3_state_t *x = XXH3_createState();
	XXH3_128bits_reset(x);
	struct sha256_ctx s;
	sha256_init(&s);
	unsigned char buf[1 << 16];
	size_t n;
	*size = 0;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
		XXH3_128bits_update(x, buf, n);
		sha256_update(&s, n, buf);
		*size += n;
	}
	fclose(f);
	XXH128_canonical_t c;
	XXH128_canonicalFromHash(&c, XXH3_128bits_digest(x));
	XXH3_freeState(x);
	pn_hex(c.digest, 16, xxh);
	uint8_t d[SHA256_DIGEST_SIZE];
	sha256_digest(&s, sizeof d, d);
	pn_hex(d, sizeof d, sha);
	return 0;
}

/* MANIFEST.tsv is the export's last file, and a rerun takes a folder
 * holding it for a finished export: so it is written as MANIFEST.tsv.part
 * and renamed, and a kill while it is written leaves no MANIFEST.tsv (the
 * .part of a killed run is removed before the listing). */
int pn_write_manifest(const char *dir, char *err)
{
	file_list l = {0};
	char path[4096], part[4200];
	snprintf(path, sizeof path, "%s/MANIFEST.tsv", dir);
	snprintf(part, sizeof part, "%s.part", path);
	if (unlink(part) && errno != ENOENT)
		return pn_fail(err, "%s: %s", part, strerror(errno));
	int rc = list_tree(dir, "", &l, err);
	FILE *f = rc ? NULL : fopen(part, "w");
	if (!rc && !f)
		rc = pn_fail(err, "%s: %s", path, strerror(errno));
	if (f)
		fprintf(f, "path\tbytes\txxh3_128\tsha256\n");
	for (int i = 0; !rc && i < l.n; i++) {
		const char *rel = l.rel[i];
		if (rel[strlen(rel) - 1] == '/' || !strcmp(rel, "MANIFEST.tsv"))
			continue;
		char full[8192], xxh[33], sha[65];
		uint64_t size = 0;
		snprintf(full, sizeof full, "%s/%s", dir, rel);
		rc = hash_file(full, &size, xxh, sha, err);
		if (!rc)
			fprintf(f, "%s\t%llu\t%s\t%s\n", rel, (unsigned long long)size, xxh, sha);
	}
	if (f && fclose(f) && !rc)
		rc = pn_fail(err, "%s: write error", part);
	if (!rc && rename(part, path))
		rc = pn_fail(err, "%s: %s", path, strerror(errno));
	free_list(&l);
	return rc;
}

static int add_entry(struct archive *a, const char *root, const char *top, const char *rel, char *err)
{
	char full[8192], name[8192];
	snprintf(full, sizeof full, "%s/%s", root, rel);
	snprintf(name, sizeof name, "%s/%s", top, rel);
	int is_dir = rel[strlen(rel) - 1] == '/';
	struct archive_entry *e = archive_entry_new();
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, is_dir ? AE_IFDIR : AE_IFREG);
	archive_entry_set_perm(e, is_dir ? 0755 : 0644);
	archive_entry_set_mtime(e, 0, 0);
	void *data = NULL;
	size_t len = 0;
	int rc = 0;
	if (!is_dir && pn_read_file(full, &data, &len, err))
		rc = -1;
	archive_entry_set_size(e, (la_int64_t)len);
	if (!rc && archive_write_header(a, e) != ARCHIVE_OK)
		rc = pn_fail(err, "%s: %s", name, archive_error_string(a));
	if (!rc && len && archive_write_data(a, data, len) < 0)
		rc = pn_fail(err, "%s: %s", name, archive_error_string(a));
	free(data);
	archive_entry_free(e);
	return rc;
}

int pn_write_archive(const char *dir, const char *path, char *err)
{
	file_list l = {0};
	if (list_tree(dir, "", &l, err))
		return -1;
	const char *top = strrchr(dir, '/');
	top = top && top[1] ? top + 1 : dir;
	struct archive *a = archive_write_new();
	int rc = 0;
	if (archive_write_set_format_pax_restricted(a) || archive_write_add_filter_gzip(a) ||
	    archive_write_set_options(a, "gzip:!timestamp") || archive_write_open_filename(a, path))
		rc = pn_fail(err, "%s: %s", path, archive_error_string(a));
	for (int i = 0; !rc && i < l.n; i++)
		rc = add_entry(a, dir, top, l.rel[i], err);
	if (archive_write_close(a) != ARCHIVE_OK && !rc)
		rc = pn_fail(err, "%s: %s", path, archive_error_string(a));
	archive_write_free(a);
	free_list(&l);
	return rc;
}
