/*
 * mkarchive - builds archives for tests with libarchive, with any member
 * names (including hostile ones such as "../x.onnx" that archivers refuse
 * to create).
 *
 *   mkarchive OUT FORMAT NAME=SOURCE...
 *
 * FORMAT: tar, tar.gz, tar.xz, tar.bz2, zip.  SOURCE is a file path, or
 * "@zeros:N" for N zero bytes (streamed, so a bomb costs no memory).
 */
#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int set_format(struct archive *a, const char *fmt)
{
	if (!strcmp(fmt, "zip"))
		return archive_write_set_format_zip(a);
	if (archive_write_set_format_pax_restricted(a))
		return -1;
	if (!strcmp(fmt, "tar"))
		return 0;
	if (!strcmp(fmt, "tar.gz"))
		return archive_write_add_filter_gzip(a);
	if (!strcmp(fmt, "tar.xz"))
		return archive_write_add_filter_xz(a);
	if (!strcmp(fmt, "tar.bz2"))
		return archive_write_add_filter_bzip2(a);
	return -1;
}

static int add_zeros(struct archive *a, struct archive_entry *e, const char *name, long long n)
{
	static char zeros[1 << 16];
	archive_entry_set_pathname(e, name);
	archive_entry_set_size(e, n);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	if (archive_write_header(a, e))
		return -1;
	while (n > 0) {
		size_t k = n > (long long)sizeof zeros ? sizeof zeros : (size_t)n;
		if (archive_write_data(a, zeros, k) < 0)
			return -1;
		n -= (long long)k;
	}
	return 0;
}

static int add_file(struct archive *a, struct archive_entry *e, const char *name, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc(n ? (size_t)n : 1);
	size_t got = fread(buf, 1, (size_t)n, f);
	fclose(f);
	archive_entry_set_pathname(e, name);
	archive_entry_set_size(e, (long long)got);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	int rc = archive_write_header(a, e) || archive_write_data(a, buf, got) < 0 ? -1 : 0;
	free(buf);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: mkarchive OUT FORMAT NAME=SOURCE...\n");
		return 2;
	}
	struct archive *a = archive_write_new();
	if (set_format(a, argv[2]) || archive_write_open_filename(a, argv[1])) {
		fprintf(stderr, "mkarchive: %s: %s\n", argv[1], archive_error_string(a));
		return 1;
	}
	for (int i = 3; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		if (!eq) {
			fprintf(stderr, "mkarchive: '%s' is not NAME=SOURCE\n", argv[i]);
			return 2;
		}
		*eq = 0;
		struct archive_entry *e = archive_entry_new();
		int rc = !strncmp(eq + 1, "@zeros:", 7) ? add_zeros(a, e, argv[i], atoll(eq + 8))
							: add_file(a, e, argv[i], eq + 1);
		archive_entry_free(e);
		if (rc) {
			fprintf(stderr, "mkarchive: %s: %s\n", argv[i], archive_error_string(a));
			return 1;
		}
	}
	archive_write_close(a);
	archive_write_free(a);
	return 0;
}
