/*
 * merge.h - merging shard stores into one (`passnet merge`).
 *
 * Each table of the input is streamed with a cursor and folded into the
 * output by the table's rule, so that any grouping and order of the inputs
 * gives the same bytes, and those of a one-machine build of the same
 * sources:
 *   meta          "schema_version" must be equal (else the input is
 *                 refused); "calibration" (the current machine): the least
 *                 bytes, settled, not a conflict, since every machine is
 *                 kept under its own "machine/<id>" key too; every other
 *                 key ("machine/...") is added, equal, or a conflict;
 *   sources       the descriptive fields must be equal (else a conflict);
 *                 complete is the AND of every copy; files_seen, models_ok
 *                 and models_failed are counted again from model_paths;
 *   models        equal, or the record of the least (source, path) wins
 *                 (what a one-machine extract keeps);
 *   candidates    equal, or the one with the subgraph hash (dedup ran) when
 *                 they are otherwise equal;
 *   occurrences, structures (dupsort)  the union of the pairs;
 *   blocks        equal, or a conflict (a structure's blocks are its own);
 *                 the blocks that two shards each held once are kept by
 *                 `passnet merge` afterwards (dedup/blocks.h);
 *   ranges        a subgraph's input ranges: their join (bounds widened,
 *                 shapes from the least model: what the ranges stage
 *                 folds model by model), so shards that each ran some
 *                 models merge into the record of one run of them all;
 *                 a model's "ran" marker: equal or a conflict;
 *   everything else (graphs, subgraphs, model_paths, profiles, errors)
 *                 equal, or a conflict.
 * A conflict is one line on stderr (input, table, key, the first field that
 * differs) and counted; the store keeps the least bytes (memcmp, then the
 * shorter), so the result does not depend on the order.  Where a rule
 * compares a part of the record first (the place of a model, a candidate
 * without its hash, a source's descriptive fields), it is that part that is
 * least: min over one total order is what makes the fold order-free.
 *
 * A merge writes only what differs, in batches: a killed merge leaves a
 * store that merging again completes (every rule is idempotent).  Tables
 * are merged in the order the stages write them (models before their
 * places, subgraphs and occurrences before the candidates that name them,
 * candidates before the structures lists that mark them done), so a killed
 * merge's store reads as a store whose stages stopped early.
 */
#ifndef PN_MERGE_H
#define PN_MERGE_H

#include <stdint.h>

#include "store/store.h"

typedef struct pn_merge_counts {
	uint64_t added;      /* records (pairs, for dupsort tables) new to the store */
	uint64_t equal;      /* already there, the same bytes */
	uint64_t resolved;   /* other bytes, settled by the table's rule */
	uint64_t conflicts;  /* other bytes, no rule: reported, the least kept */
} pn_merge_counts;

typedef struct pn_merge_stats {
	pn_merge_counts table[PN_T_COUNT];
	uint64_t inputs;     /* inputs merged */
	uint64_t recounted;  /* source records whose counts changed */
} pn_merge_stats;

/* Merges the store in directory in_dir (opened read-only) into out, which
 * must be open writable with no writer open, then recounts out's sources
 * (pn_merge_recount_sources).  Adds to *stats (zero it first).  -1 with
 * err set when in_dir cannot be read (not a store, another schema version,
 * the store itself) or on a store error; conflicts are not errors. */
int pn_store_merge(pn_store *out, const char *in_dir, pn_merge_stats *stats, char *err);

/* Sets files_seen, models_ok and models_failed of every source of out from
 * its model_paths (the places of that source; ok: status not failed), the
 * way extract counts them.  Adds the records changed to stats->recounted. */
int pn_merge_recount_sources(pn_store *out, pn_merge_stats *stats, char *err);

uint64_t pn_merge_total_conflicts(const pn_merge_stats *s);

#endif
