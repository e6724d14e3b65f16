/*
 * check.h - `passnet check TASKDIR CANDIDATE`: judges a candidate against an
 * exported task (layout and results format: export/export.h).
 *
 * Per variant the reference (the variant's model.onnx) and the candidate run
 * on passnet's executor in child processes under a time limit each (one per
 * model for the outputs, then one that times both, alternating their
 * samples so that a change in machine load falls on both), on fresh inputs
 * drawn with a seed that was not exported (PN_CHECK_SEED_RULE).
 * The result line says how close the candidate's outputs are (pass_level on
 * the tolerance ladder), why it failed (error_class) and how fast it ran
 * against the reference (speedup: median of timed runs).
 *
 * error_class and pass_level: "shape"/"dtype" when the signature or an
 * output's shape or type differs, "runtime" when the candidate does not load
 * or run (kernel error, crash, time limit), "cheat" when it holds an exported
 * output among its constants or its outputs ignore its inputs, "nan_inf"
 * when it produces NaN or Inf where the reference is finite, "accuracy" when
 * it passes at no level up to 4 (pass_level null).  Otherwise error_class is
 * "none" and pass_level the least level at which every output passes; which
 * levels count as correct is the scorer's decision (export/score.h), so
 * "none" does not mean correct at every level.
 */
#ifndef PN_CHECK_H
#define PN_CHECK_H

#include <stdint.h>
#include <stdio.h>

#define PN_CHECK_TIME_LIMIT 60   /* seconds per child process */
#define PN_CHECK_RUNS 5          /* timed samples whose median is reported */

typedef struct pn_check_opts {
	int time_limit;
	int runs;
	int threads;     /* executor threads (0: OpenMP's default) */
	/* --backend ort: reference and candidate timed on this ONNX Runtime
	 * (exec/ort.h) at level ALL, threads intra-op threads (0: 1); their
	 * outputs still judged on passnet's executor.  NULL: timed there. */
	struct pn_ort *ort;
} pn_check_opts;

/* Exit statuses of `passnet check` (2 is a usage error). */
enum {
	PN_CHECK_ALL_CORRECT = 0,   /* every variant: error_class none, pass_level <= 1 */
	PN_CHECK_NOT_CORRECT = 1,   /* some variant is not correct at t = 1 */
	PN_CHECK_UNCHECKED = 3,     /* some variant could not be checked (task-side
				     * problem: unreadable task, failing reference) */
};

/* Checks candidate against the task (or single variant) folder taskdir and
 * writes one results line per variant to out.  Returns an exit status. */
int pn_check_task(const char *taskdir, const char *candidate, const pn_check_opts *o, FILE *out);

/* Seed of fresh input set k (0: compared and timed, 1: only to see that
 * outputs follow inputs) for a variant; see PN_CHECK_SEED_RULE. */
uint64_t pn_check_seed(uint64_t export_seed, const char *variant, int set);

#endif
