/*
 * decode.h - turning a subgraph's canonical bytes back into a model.
 *
 * The canonical form records everything about the computation: ops with all
 * attributes, value types, constants by value, weights as metadata.  So the
 * stored bytes are the subgraph: this decoder builds a standalone ONNX model
 * from them (values named v0, v1, ... in canonical order, nodes n0, n1, ...,
 * nodes listed in a topological order), which is the same whichever model
 * the subgraph was found in.
 */
#ifndef PN_DECODE_H
#define PN_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "common/util.h"
#include "model/onnx.h"

/* Builds the ModelProto (allocated in a).  Weights kept as metadata become
 * initializers without bytes, listed in *metas (statistics unknown).  With
 * for_onnx, a boundary value of unknown rank (it depends on data) is an
 * error: ONNX requires graph inputs and outputs to state their shape. */
Onnx__ModelProto *pn_canon_to_model(const uint8_t *bytes, size_t len, int for_onnx, pn_arena *a,
				    Passnet__WeightMeta ***metas, size_t *n_metas, char *err);

/* Statistics for a subgraph's weights kept as metadata, from a model that
 * holds it (the ranges table: store/subgraphs.h reads them), each named as
 * the decoder names the weight, "v<canonical index>" (canon/form.h
 * const_slots).  The canonical form keeps no statistics (they differ
 * between the models that share the computation); without these the
 * executor draws a weight blind, by its role. */
typedef struct pn_subgraph_weights {
	Passnet__WeightMeta **w;
	size_t n;
	void *record;   /* what holds them (store/subgraphs.h frees it) */
} pn_subgraph_weights;

/* The subgraph as IR, ready to run (weights regenerated blind by the
 * executor): for its structure, not its values. */
int pn_subgraph_model(const uint8_t *bytes, size_t len, pn_model **out, char *err);
/* The same with the statistics of ws (NULL: blind), also giving the
 * ModelProto it was built from (in the model's arena; proto may be NULL);
 * for_onnx as for pn_canon_to_model. */
int pn_subgraph_decode(const uint8_t *bytes, size_t len, int for_onnx, const pn_subgraph_weights *ws,
		       pn_model **out, Onnx__ModelProto **proto, char *err);
/* Gives every weight of m kept as metadata the bytes the executor
 * regenerates for it with seed, as raw data of mp's initializer of that
 * name (in arena a): the ONNX file then holds the very weights passnet's
 * session runs on (an exported model.onnx, ONNX Runtime's baseline). */
int pn_subgraph_fill_weights(Onnx__ModelProto *mp, const pn_model *m, uint64_t seed,
			     pn_arena *a, char *err);

/* The key of the graph decoded from canonical bytes (m, from
 * pn_subgraph_model): inferred from its inputs' types as stored (unknown
 * dims included: binding them would describe another computation), then
 * hashed whole.  `doctor --deep` requires it to equal the stored key;
 * dedup checks it before storing a cut that holds an inference gap. */
int pn_subgraph_rehash(const pn_model *m, pn_key *key, char *err);

#endif
