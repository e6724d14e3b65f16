/*
 * replay.c - a main for a harness built without libFuzzer (gcc, `make
 * test`): each argument is a file passed once to LLVMFuzzerTestOneInput.
 * A crash kills the process, so the caller runs one file per process to
 * know which input did it; "ok FILE" is printed after each.
 */
#include "fuzz.h"

#include <stdlib.h>

#include "common/err.h"
#include "model/onnx.h"

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		void *data = NULL;
		size_t len = 0;
		char err[PN_ERRLEN];
		if (pn_read_file(argv[i], &data, &len, err)) {
			fprintf(stderr, "replay: %s: cannot read: %s\n", argv[i], err);
			return 2;
		}
		LLVMFuzzerTestOneInput(data, len);
		free(data);
		printf("ok %s\n", argv[i]);
	}
	return 0;
}
