/*
 * canon_decode.c - a subgraph record's canonical bytes (as a damaged store
 * could hold them), decoded back into a model as `passnet export` (for
 * ONNX) and `exec` (for the executor, then inferred) do.
 */
#include "fuzz.h"

#include "canon/decode.h"
#include "common/err.h"
#include "runtime/infer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[PN_ERRLEN];
	pn_model *m;
	Onnx__ModelProto *proto;
	if (!pn_subgraph_decode(data, size, 1, NULL, &m, &proto, err))
		pn_model_free(m);
	if (pn_subgraph_model(data, size, &m, err))
		return 0;
	pn_infer_result r;
	if (!pn_infer_graph(m->graph, NULL, NULL, &r, err))
		pn_infer_result_free(&r);
	pn_model_free(m);
	return 0;
}
