/*
 * run_gate.h - how much memory the extract workers' model runs may hold at
 * once.
 *
 * Each worker runs whole models: the binding's validation run, the weight
 * check's runs, a variant's batch-independence runs.  Most are small, but a
 * detection model at its binding holds most of a gigabyte, and two of them
 * side by side took the 10,000-model build to 2.5 GB.  A run enters the gate
 * with its estimated peak (pn_infer_peak_bytes: what inference knows of
 * it) and waits while the runs already inside hold too much of the budget
 * for it; a run larger than the whole budget (VGG at batch 64) waits until
 * it is alone.  The gate decides only when a run
 * starts, never what it computes: a store comes out byte-identical with any
 * budget and thread count.
 *
 * The budget is PASSNET_RUN_MEMORY_MB (default 1024), read once.
 */
#ifndef PN_RUN_GATE_H
#define PN_RUN_GATE_H

#include <stddef.h>
#include <stdint.h>

/* Waits until a run of `bytes` may start, then counts it in; returns what
 * it counted (at most the budget), which pn_run_gate_leave takes back. */
size_t pn_run_gate_enter(size_t bytes);
void   pn_run_gate_leave(size_t counted);

/* The budget in bytes. */
size_t pn_run_gate_budget(void);
/* Sets the budget (tests; 0: back to the environment's). */
void pn_run_gate_set_budget(size_t bytes);

/* What the gate saw since the process began: runs admitted, runs that had
 * to wait, and the most bytes admitted at once. */
typedef struct pn_run_gate_stats {
	uint64_t runs, waited;
	size_t most_held;
} pn_run_gate_stats;
void pn_run_gate_stats_get(pn_run_gate_stats *out);

/*
 * The largest run extract makes at all, in estimated bytes: a model whose
 * run would hold more (VGG-16 at a fixed batch of 64 holds two 822 MB
 * activations and its 550 MB of weights) is not run; inference has the
 * last word on its binding and its weight check says "not run" with the
 * size.  A machine of 8 GB then holds any run beside the rest of a build.
 * A constant, not the budget's setting: what a store records must not
 * depend on the machine that built it.
 */
#define PN_RUN_MAX_BYTES ((size_t)1 << 30)

/* The reason a run of `bytes` is not made, in err (a line): 1 when it is
 * over PN_RUN_MAX_BYTES, else 0 and err untouched. */
int pn_run_too_big(size_t bytes, char *err);

#endif
