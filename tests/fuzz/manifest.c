/*
 * manifest.c - a data-manifest.txt, through the parser `passnet build
 * --manifest` uses (it reads a path, so the input goes to a memory file).
 */
#include "fuzz.h"

#include "common/err.h"
#include "extract/sources.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = pn_fuzz_as_file(data, size);
	if (!path)
		return 0;
	pn_manifest_entry *e;
	int n;
	char err[PN_ERRLEN];
	if (!pn_manifest_read(path, &e, &n, err)) {
		for (int i = 0; i < n; i++)
			(void)pn_kind_is_remote(e[i].kind);
		pn_manifest_free(e, n);
	}
	return 0;
}
