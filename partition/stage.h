/*
 * stage.h - the partition and dedup stages over the store.
 *
 * partition: for every stored model and every requested strategy that has
 * no done marker yet, cut the model and store its candidates.
 * dedup: for every candidate without a subgraph hash, compute its canonical
 * forms, store the subgraph once (checking byte for byte that an existing
 * record with the same hash is the same computation), add the occurrence and
 * write the hash into the candidate.
 *
 * Both decode models in parallel, in batches, and commit from one thread in
 * key order; both only do what is missing, so a killed run resumes.
 */
#ifndef PN_STAGE_H
#define PN_STAGE_H

#include <stdint.h>

#include "store/store.h"

typedef struct pn_stage_stats {
	uint64_t models;          /* models worked on */
	uint64_t candidates;      /* candidates written (partition) or hashed (dedup) */
	uint64_t per_strategy[8];
	uint64_t new_subgraphs;
	uint64_t collisions;      /* equal hash, different bytes: reported, never merged */
	uint64_t approximate;     /* canonical searches that hit their budget */
	uint64_t failed;          /* models that could not be processed */
	double seconds;
} pn_stage_stats;

/* strategies: names (NULL = all). */
int pn_partition_stage(pn_store *st, const char *const *strategies, int n_strategies, int threads,
		       pn_stage_stats *stats, char *err);
int pn_dedup_stage(pn_store *st, int threads, pn_stage_stats *stats, char *err);

/* Keys of the candidates table. */
size_t pn_candidate_key(uint8_t *key, const uint8_t model[16], const char *strategy, uint32_t index);
#define PN_CANDIDATE_DONE 0xffffffffu

#endif
