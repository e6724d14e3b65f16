/*
 * archive.c - an archive as a source walk reads it: tar, zip, each under
 * gzip, bzip2, xz or lzma, an ar archive (a .deb) when it starts like one,
 * and archives nested in it (read from memory).  Every model found has its
 * folder listed and test sets looked for, as ingest does.
 */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "extract/sources.h"

static int on_unit(void *ud, pn_unit *u)
{
	(void)ud;
	char **names, err[PN_ERRLEN];
	int n = pn_folder_list(u->folder, "", &names, err);
	for (int i = 0; i < n; i++) {
		void *bytes;
		size_t len;
		if (!pn_folder_read(u->folder, names[i], &bytes, &len, err))
			free(bytes);
		free(names[i]);
	}
	if (n >= 0)
		free(names);
	pn_unit_free(u);
	return 0;
}

static void on_error(void *ud, const char *source, const char *path, const char *msg)
{
	(void)ud, (void)source, (void)path, (void)msg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = pn_fuzz_as_file(data, size);
	if (!path)
		return 0;
	/* the name decides only whether ar is read (as for a fetched .deb) */
	int deb = size >= 8 && !memcmp(data, "!<arch>\n", 8);
	pn_walk_cb cb = {.on_unit = on_unit, .on_error = on_error};
	char err[PN_ERRLEN];
	pn_source_walk_fetched("fuzz", path, deb ? "input.deb" : "input.tar", &cb, err);
	return 0;
}
