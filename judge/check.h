/*
 * check.h - `passnet check TASKDIR CANDIDATE`: judges a candidate against an
 * exported task (layout and results format: export/export.h).
 *
 * Per variant the reference (the variant's model.onnx) and the candidate run
 * on passnet's executor in child processes under a time limit each (one per
 * model for the outputs, then one that times both, alternating their
 * samples so that a change in machine load falls on both), on fresh inputs
 * drawn with a seed that was not exported (PN_CHECK_SEED_RULE).  With
 * --backend ort the timing child runs both on ONNX Runtime instead
 * (judge/check_ort.c); a candidate ORT cannot load fails as "runtime", a
 * reference it cannot load leaves the variant not checked.
 * The result line says how close the candidate's outputs are (pass_level on
 * the tolerance ladder), why it failed (error_class), how fast it ran
 * against the reference (speedup: median of timed runs) and on which
 * backend.
 *
 * error_class and pass_level: "shape"/"dtype" when the signature or an
 * output's shape or type differs, "runtime" when the candidate does not load
 * or run (kernel error, crash, time limit, a value that shape inference
 * shows beyond the memory limit), "cheat" when it holds an exported output
 * among its constants, its outputs ignore its inputs, or an output is one of
 * its inputs bit for bit (the reference's is not), "nan_inf"
 * when it produces NaN or Inf where the reference is finite, "accuracy" when
 * it passes at no level up to 4 (pass_level null).  Otherwise error_class is
 * "none" and pass_level the least level at which every output passes; which
 * levels count as correct is the scorer's decision (judge/score.h), so
 * "none" does not mean correct at every level.
 */
#ifndef PN_CHECK_H
#define PN_CHECK_H

#include <stdint.h>
#include <stdio.h>

#define PN_CHECK_TIME_LIMIT 60   /* seconds for the candidate's child process */
/* The reference (the task's own model) runs under its own, generous limit:
 * --time-limit is meant for the candidate, and a tight one must not stop
 * the reference on a loaded machine and leave the candidate unjudged.  It
 * is a limit still, since a task folder is input like any other. */
#define PN_CHECK_REF_TIME_LIMIT 600
#define PN_CHECK_RUNS 5          /* timed samples whose median is reported */

/* Check seeds stay below 2^53 so that every JSON reader keeps them exact. */
#define PN_CHECK_SEED_MAX ((UINT64_C(1) << 53) - 1)

typedef struct pn_check_opts {
	int time_limit;
	int runs;
	int threads;     /* executor threads (0: OpenMP's default) */
	uint64_t check_seed;   /* the seed fresh inputs are drawn from (see below) */
	const char *write_inputs;   /* write input set 0 as DIR/<variant>/input_N.pb, or NULL */
	int memory_limit_mb;   /* per child (0: half the machine's memory) */
	/* --backend ort: reference and candidate timed on this ONNX Runtime
	 * (exec/ort.h) at level ALL, threads intra-op threads (0: 1); their
	 * outputs still judged on passnet's executor.  NULL: timed there. */
	struct pn_ort *ort;
} pn_check_opts;

/* A candidate's child may use this much memory (bytes): a value that shape
 * inference shows larger is refused before the run, and the child's address
 * space is limited to it (not in AddressSanitizer builds, whose shadow
 * memory needs more). */
double pn_check_memory_limit(const pn_check_opts *o);

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

/* Seed of fresh input set k (0: compared and timed, others only to see
 * that outputs follow inputs) of a variant; see PN_CHECK_SEED_RULE. */
uint64_t pn_check_seed(uint64_t check_seed, const char *variant, int set);
/* A check seed no one knows in advance: 53 bits from the system's random
 * source (getrandom, else /dev/urandom).  0, or -1 with a message. */
int pn_check_random_seed(uint64_t *seed, char *err);
/* Identifies the code that judges (executor, model loading, the check):
 * results of two builds may not be comparable. */
extern const char pn_check_build[];

#endif
