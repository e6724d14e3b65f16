/*
 * stage.h - the partition stage over the store (and the counts it and the
 * dedup stage, dedup/dedup.h, report).
 *
 * For every stored model whose structure (store/structures.h) has no done
 * marker yet for a requested strategy, cut the model and store its
 * candidates under the structure; list every model under its structure.  Models are decoded
 * in parallel, in batches, and committed from one thread in key order; only
 * what is missing is done, so a killed run resumes.
 */
#ifndef PN_PARTITION_STAGE_H
#define PN_PARTITION_STAGE_H

#include <stdint.h>

#include "common/shard.h"
#include "schemas/strategies.h"
#include "store/store.h"

typedef struct pn_stage_stats {
	uint64_t models;          /* models worked on, not counting ... */
	uint64_t variants;        /* ... their shape variants (extract/variants.h) */
	uint64_t structures;      /* structures cut or hashed (store/structures.h) */
	uint64_t candidates;      /* candidates written (partition) or hashed (dedup) */
	uint64_t per_strategy[PN_N_STRATEGIES];
	uint64_t new_subgraphs;
	uint64_t collisions;      /* equal hash, different bytes: reported, never merged */
	uint64_t approximate;     /* canonical searches that hit their budget */
	uint64_t failed;          /* models that could not be processed */
	double seconds;
} pn_stage_stats;

/* strategies: a mask of schemas/strategies.def entries (0 = all); shard
 * (NULL: all) keeps the structures whose key falls in it (common/shard.h). */
int pn_partition_stage(pn_store *st, unsigned strategies, int threads, const pn_shard *shard,
		       pn_stage_stats *stats, char *err);

/* Keys of the candidates table. */
size_t pn_candidate_key(uint8_t *key, const uint8_t structure[16], const char *strategy,
			uint32_t index);
#define PN_CANDIDATE_DONE 0xffffffffu

#endif
