/*
 * select.h - choosing the tasks of an export (long-tail selection).
 *
 * Eligible subgraphs: profiled and not failed, flagged fusible, with at
 * least min_ops nodes (2) and at least one input (one computed from
 * constants alone is constant folding), and passing the user's filters.  A task is one
 * pattern with up to max_variants of its eligible subgraphs, spread over
 * size buckets (log2 of the bytes a fused run moves: one per bucket first,
 * then more from each in turn).  Patterns are picked greedily as the published benchmark does: a
 * first-order Markov model of op-to-op transitions is fitted over every
 * stored subgraph (add-alpha smoothing); a pattern's rarity is the mean
 * negative log-probability of its transitions; the next pick maximises
 * (transitions not yet covered + 0.01) x (1 + rarity / max rarity), ties to
 * the least pattern hash, in four classes taken in turn: patterns with at
 * least PN_TASK_RICH eligible shapes, slow ones first, then the others,
 * slow ones first.  A task is one computation at many shapes: a pattern
 * measured at one shape makes a thin task, taken only when the rich ones
 * are used up.
 */
#ifndef PN_SELECT_H
#define PN_SELECT_H

#include <stdint.h>

#include "store/store.h"

#define PN_MARKOV_ALPHA 1.0
/* Eligible shapes that make a pattern rich: with its float16 and bfloat16
 * passes, four shapes fill a task of ten. */
#define PN_TASK_RICH 4

typedef struct pn_export_filter {
	const char *const *ops;     /* every listed op must occur in the subgraph */
	int n_ops;
	const char *source;         /* found in a model of this source */
	int min_ops, max_ops;       /* nodes (max 0: no bound) */
	const char *const *flags;   /* every listed flag must be set */
	int n_flags;
	unsigned strategies;        /* bit i: found by pn_strategies[i]; 0: any */
} pn_export_filter;

typedef struct pn_variant {
	uint8_t hash[16];
	double flops, bytes_fused, bytes_unfused, median_us, bound_fused_us;
	uint32_t threads;
	int nodes;
	char **flags;
	int n_flags;
	/* its ONNX Runtime baseline (passnet baseline), when it has one:
	 * ort_status "ok" (times set) or "refused"/"skipped" */
	char ort_version[32], ort_status[16];
	double ort_all_us, ort_disabled_us;
} pn_variant;

typedef struct pn_task {
	uint8_t pattern[16];
	char **ops;                 /* canonical op list of the first variant */
	int n_ops;
	pn_variant *v;
	int n_variants;
	double rarity;
	int slow;                   /* some variant is flagged slow */
	int split;                  /* 0 train, 1 val, 2 test */
} pn_task;

typedef struct pn_selection {
	pn_task *tasks;             /* in selection order */
	int n;
	int eligible_patterns;
	int64_t eligible_subgraphs;
	int transitions, covered;   /* distinct op-to-op transitions, covered by the tasks */
} pn_selection;

int  pn_select_tasks(pn_store *st, const pn_export_filter *f, int k, int max_variants,
		     pn_selection *out, char *err);
/* Splits by pattern: a seeded shuffle, then train/val/test by percent. */
void pn_split_tasks(pn_selection *s, uint64_t seed, const int percent[3]);
void pn_selection_free(pn_selection *s);

#endif
