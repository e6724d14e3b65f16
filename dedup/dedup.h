/*
 * dedup.h - the dedup stage: for every candidate without a subgraph hash,
 * compute its canonical forms (canon/form.h), store the subgraph once
 * (checking byte for byte that an existing record with the same hash is the
 * same computation), add the occurrence and write the hash into the
 * candidate.  Models are decoded in parallel, in batches, and committed from
 * one thread in key order; only what is missing is done, so a killed run
 * resumes.
 */
#ifndef PN_DEDUP_H
#define PN_DEDUP_H

#include <stdint.h>

#include "partition/stage.h"
#include "store/store.h"

/* shard (NULL: all) keeps the structures whose key falls in it
 * (common/shard.h). */
int pn_dedup_stage(pn_store *st, int threads, const pn_shard *shard, pn_stage_stats *stats,
		   char *err);

/* The same for the unhashed candidates of the n structures listed (in key
 * order) alone: dedup/blocks.h's, for the blocks it keeps. */
int pn_dedup_structures(pn_store *st, const uint8_t (*structures)[16], int n, int threads,
			const pn_shard *shard, pn_stage_stats *stats, char *err);

#endif
