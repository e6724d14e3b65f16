/*
 * stream.h - the streamed build: partition and dedup in one pass.
 *
 * For every stored model with something to cut (partition/stage.h), the
 * model is decoded and typed once, cut, and each cut put into canonical
 * form on the spot: the candidates are written once, already hashed,
 * beside their subgraphs and occurrences, in one commit per model.  The
 * two stages' separate runs read the model twice and write every candidate
 * twice (partition unhashed, dedup hashed); the store this pass leaves is
 * the same, table for table (tests/cli/stream.sh compares mdb_dump).
 *
 * Models are planned a key bucket at a time (memory does not grow with
 * the number of models) and committed in key order from one thread, so the
 * store does not depend on the thread count.  A killed run resumes: a
 * model's candidates, markers and listing commit together.
 */
#ifndef PN_DEDUP_STREAM_H
#define PN_DEDUP_STREAM_H

#include "partition/stage.h"
#include "store/store.h"

/* strategies: a mask of schemas/strategies.def entries (0 = all); cut and
 * hashed receive the two stages' counts. */
int pn_stream_stage(pn_store *st, unsigned strategies, int threads, const pn_shard *shard,
		    pn_stage_stats *cut, pn_stage_stats *hashed, char *err);

#endif
