/*
 * onnx_model.c - an ONNX model file: decoding (weights as metadata, as
 * extract reads it), shape inference, and for a model that infers, every
 * strategy's cuts and the canonical form of each, as `passnet hash
 * --subgraphs` computes them (no store is needed for any of it).
 */
#include "fuzz.h"

#include "canon/form.h"
#include "common/err.h"
#include "model/onnx.h"
#include "partition/partition.h"
#include "runtime/infer.h"

static void hash_every_cut(pn_pview *pv, const pn_graph *g, const pn_infer_result *r)
{
	char err[PN_ERRLEN];
	for (int s = 0; s < PN_N_STRATEGIES; s++) {
		pn_cuts cuts = {0};
		if (!pn_strategies[s].run(pv, &cuts))
			for (int i = 0; i < cuts.n; i++) {
				pn_form f;
				if (!pn_form_of_cut(g, r, cuts.nodes[i], cuts.len[i], &f, err))
					pn_form_free(&f);
			}
		pn_cuts_free(&cuts);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[PN_ERRLEN];
	pn_model *m = pn_model_new();
	if (!m)
		return 0;
	Onnx__ModelProto *mp = pn_onnx_unpack(data, size, &m->arena, err);
	pn_decode_opts o = {.weights_as_meta = 1};
	pn_infer_result r;
	if (mp && !pn_model_from_proto(mp, &o, m, err) &&
	    !pn_infer_graph(m->graph, NULL, NULL, &r, err)) {
		pn_pview pv = {0};
		if (!pn_pview_build(&pv, m->graph, &r, err))
			hash_every_cut(&pv, m->graph, &r);
		pn_pview_free(&pv);
		pn_infer_result_free(&r);
	}
	pn_model_free(m);
	return 0;
}
