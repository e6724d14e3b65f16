/*
 * baseline.h - ONNX Runtime as the baseline of every profiled subgraph
 * (`passnet exec --baseline ort`, `passnet baseline`).
 *
 * For each profile that is ok or unstable and has no baseline from this ORT
 * version, or a skipped one (with redo: every such profile), on the
 * profile's inputs (its seed, the stored input ranges: the inputs passnet
 * timed) and the weights regenerated with its seed into the model:
 *   1. ORT sessions at graph optimisation level ALL (ORT's default, "the
 *      compiler") and with optimisations disabled ("eager"), 1 intra-op
 *      thread; the node count of each optimised graph;
 *   2. one run of each, whose outputs are compared with passnet's (a
 *      disagreement is recorded: agree, max_abs, max_rel, diff);
 *   3. both timed with the profile's protocol (its warm-ups and trials;
 *      median, IQR; measured again while IQR/median > 0.2, up to
 *      max_repeats); a compiler regression is timed once more (both levels,
 *      the lower medians kept) before it is flagged;
 *   4. where the profile is multi-threaded, both medians on its threads too;
 *   5. the flags compiler-regression and compiler-gap, with their thresholds
 *      (baseline.c defines them), and the ORT/passnet ratio.
 * A subgraph ORT cannot load or run gets status "refused" and ORT's message;
 * its profile is otherwise unchanged.  One passnet cannot hand to ORT (its
 * correctness run fails) gets "skipped" and is tried again by the next run.
 * Boundaries of unknown rank go to ORT as tensor types without a shape.
 */
#ifndef PN_BASELINE_H
#define PN_BASELINE_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

typedef struct pn_baseline_opts {
	const char *ort_lib;   /* NULL: pn_ort_open's default search */
	int max_repeats;       /* default 3 */
	double budget_s;       /* start no new subgraph after this (0: none) */
	int64_t limit;         /* at most this many (0: all) */
	int redo;              /* time again those with a baseline of this version */
} pn_baseline_opts;

typedef struct pn_baseline_stats {
	char ort_version[32];
	int64_t todo, done, refused, skipped, disagree, regressions, gaps, left;
	double seconds;
} pn_baseline_stats;

/* Fails (err set) only when the library cannot be used or the store fails. */
int pn_baseline_stage(pn_store *st, const pn_baseline_opts *o, pn_baseline_stats *s, char *err);

/* How stats and the report group the baselines, so both give the same
 * figures: the op set of ORT's unoptimised graph ("Conv BatchNormalization
 * Conv" -> "BatchNormalization Conv", sorted, each op once) ... */
void pn_baseline_op_set(const char *ops, char *out, size_t cap);
/* ... and the size of the subgraph in nodes, as one of PN_BASELINE_SIZES
 * buckets ("1 node", "2 nodes", "3-4 nodes", ..., "17+ nodes"), smallest
 * first. */
#define PN_BASELINE_SIZES 6
extern const char *const pn_baseline_size_names[PN_BASELINE_SIZES];
int pn_baseline_size_bucket(uint32_t nodes);

#endif
