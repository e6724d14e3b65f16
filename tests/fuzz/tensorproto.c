/*
 * tensorproto.c - an input_N.pb / output_N.pb file as `passnet run` and
 * `check` read it, as each kind a graph value may be (a tensor, a sequence,
 * an optional); what decodes is written back and read again.
 */
#include "fuzz.h"

#include <stdlib.h>

#include "common/err.h"
#include "model/onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int kinds[] = {PN_KIND_TENSOR, PN_KIND_SEQUENCE, PN_KIND_OPTIONAL};
	char err[PN_ERRLEN];
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		pn_tensor *t = NULL, *again = NULL;
		char *name = NULL;
		if (pn_tensor_read_pb(data, size, kinds[k], &t, &name, err))
			continue;
		void *bytes;
		size_t len;
		if (!pn_tensor_write_pb(t, name, &bytes, &len, err)) {
			if (!pn_tensor_read_pb(bytes, len, kinds[k], &again, NULL, err))
				pn_tensor_free(again);
			free(bytes);
		}
		free(name);
		pn_tensor_free(t);
	}
	return 0;
}
