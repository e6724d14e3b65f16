/*
 * blocks.h - the corpus blocks the corpus holds twice, kept as typical cuts.
 *
 * partition lists every structure's corpus blocks (partition/partition.h:
 * pn_typical_cut) in the blocks table, keyed by their pattern hash
 * (canon/form.h: the computation at any dims and dtypes).  A block is a
 * typical cut once two places hold its pattern: two models (a shape
 * variant stands for its base: every variant of a model holds its blocks'
 * patterns, and that repeats nothing), or two places of one structure (a
 * bottleneck at each stage, a dense layer at each width).  Whether a block is kept so
 * depends on the whole corpus and not on the order models came in: each
 * run ends by keeping every block held at two places and not kept yet, as
 * the candidate (structure, "typical", PN_BLOCK_INDEX0 + its index), hashed
 * like any other (dedup.h).  A source added later keeps its own blocks that
 * an earlier source held and the earlier source's that it holds; nothing
 * kept is dropped (models are never removed, and places only add up), so
 * building in steps, at once, in shards then `merge` (which runs this
 * too), in any order or thread count give the same store.
 */
#ifndef PN_DEDUP_BLOCKS_H
#define PN_DEDUP_BLOCKS_H

#include "partition/stage.h"
#include "store/store.h"

/* Keeps the blocks held at two places that are not kept yet: their
 * candidates are put, then hashed (pn_dedup_structures) with threads, in
 * this store whatever shard built it (a shard store keeps what its own
 * blocks decide; `merge` keeps what the union decides, and its candidates
 * rule takes the hashed copy).  cut (NULL: none) counts the candidates put
 * as typical's, hashed counts their hashing.  0, or -1 with err. */
int pn_blocks_keep(pn_store *st, int threads, pn_stage_stats *cut, pn_stage_stats *hashed,
		   char *err);

#endif
