#include "common/compress.h"

#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"

static la_ssize_t to_buf(struct archive *a, void *ud, const void *p, size_t n)
{
	(void)a;
	pn_buf *out = ud;
	pn_buf_put(out, p, n);
	return out->oom ? -1 : (la_ssize_t)n;
}

static int write_failed(struct archive *a, const char *what, char *err)
{
	pn_fail(err, "zstd: %s: %s", what, archive_error_string(a) ? archive_error_string(a) : "failed");
	archive_write_free(a);
	return -1;
}

int pn_zstd_pack(const void *in, size_t n, int level, pn_buf *out, char *err)
{
	if (!n)
		return 0;   /* libarchive's raw format reads no empty entry back */
	struct archive *a = archive_write_new();
	if (!a)
		return pn_fail(err, "out of memory");
	char lv[16];
	snprintf(lv, sizeof lv, "%d", level);
	/* unblocked: the frame and nothing after it */
	if (archive_write_add_filter_zstd(a) != ARCHIVE_OK ||
	    archive_write_set_filter_option(a, "zstd", "compression-level", lv) != ARCHIVE_OK ||
	    archive_write_set_format_raw(a) != ARCHIVE_OK ||
	    archive_write_set_bytes_per_block(a, 0) != ARCHIVE_OK)
		return write_failed(a, "setting up", err);
	if (archive_write_open2(a, out, NULL, to_buf, NULL, NULL) != ARCHIVE_OK)
		return write_failed(a, "opening", err);
	struct archive_entry *e = archive_entry_new();
	if (!e)
		return write_failed(a, "out of memory", err);
	archive_entry_set_pathname(e, "data");
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_size(e, (la_int64_t)n);
	int rc = archive_write_header(a, e);
	archive_entry_free(e);
	if (rc != ARCHIVE_OK)
		return write_failed(a, "writing", err);
	for (size_t done = 0; done < n;) {
		la_ssize_t k = archive_write_data(a, (const char *)in + done, n - done);
		if (k <= 0)
			return write_failed(a, "writing", err);
		done += (size_t)k;
	}
	if (archive_write_close(a) != ARCHIVE_OK || out->oom)
		return write_failed(a, out->oom ? "out of memory" : "closing", err);
	archive_write_free(a);
	return 0;
}

/* The zstd frame's magic number (RFC 8878), little-endian. */
static const unsigned char ZSTD_MAGIC[4] = {0x28, 0xb5, 0x2f, 0xfd};

int pn_zstd_unpack(const void *in, size_t n, pn_buf *out, char *err)
{
	if (!n)
		return 0;
	/* the raw format reads any bytes as themselves: insist on a frame */
	if (n < sizeof ZSTD_MAGIC || memcmp(in, ZSTD_MAGIC, sizeof ZSTD_MAGIC)) {
		pn_fail(err, "not a zstd frame");
		return 1;
	}
	struct archive *a = archive_read_new();
	if (!a)
		return pn_fail(err, "out of memory");
	struct archive_entry *e;
	int rc = archive_read_support_filter_zstd(a) != ARCHIVE_OK ||
		 archive_read_support_format_raw(a) != ARCHIVE_OK ||
		 archive_read_open_memory(a, in, n) != ARCHIVE_OK ||
		 archive_read_next_header(a, &e) != ARCHIVE_OK;
	while (!rc) {
		char chunk[65536];
		la_ssize_t k = archive_read_data(a, chunk, sizeof chunk);
		if (k < 0)
			rc = 1;
		if (k <= 0)
			break;
		pn_buf_put(out, chunk, (size_t)k);
		if (out->oom)
			rc = -1;
	}
	if (rc > 0)
		pn_fail(err, "zstd: %s",
			archive_error_string(a) ? archive_error_string(a) : "not one whole frame");
	else if (rc < 0)
		pn_fail(err, "out of memory");
	archive_read_free(a);
	return rc;
}
