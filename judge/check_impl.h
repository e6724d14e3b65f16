/*
 * check_impl.h - the parts of `passnet check` (judge/check*.c): comparing
 * outputs over the tolerance ladder, the candidate's static checks, and
 * running a model in a child process.
 */
#ifndef PN_CHECK_IMPL_H
#define PN_CHECK_IMPL_H

#include <stddef.h>

#include "common/err.h"
#include "judge/check.h"
#include "schemas/ir.h"

/* --- check_cmp.c --- */

/* One output compared with its reference over the ladder. */
typedef struct pn_outcmp {
	int cls;           /* enum pn_err_class */
	int level;         /* least passing level, PN_NO_LEVEL if none */
	double max_abs;    /* over all elements */
	double max_rel;    /* over elements whose reference is non-zero */
	char what[200];    /* the first failure when cls != none or level is null */
} pn_outcmp;

void pn_check_compare(const pn_tensor *got, const pn_tensor *want, pn_outcmp *r);
/* Folds the result of one part (an output, a sequence item) into r, which
 * starts as {cls none, level PN_TOL_MIN_LEVEL}: the highest level, the
 * worst class (shape, dtype > nan_inf > accuracy), the first failure. */
void pn_check_merge(pn_outcmp *r, const pn_outcmp *sub, const char *part);
/* The candidate graph's inputs and outputs against the reference's actual
 * input and output tensors: count, kind, dtype, rank and every known dim.
 * Returns PN_EC_NONE, PN_EC_SHAPE or PN_EC_DTYPE with a reason. */
int  pn_check_signature(const pn_graph *cand, pn_tensor *const *ref_in, int n_in,
			pn_tensor *const *ref_out, int n_out, char *reason, size_t cap);
/* 1 (with a reason) if a constant of g or of a graph nested in it holds
 * one of the tensors in outs[0..n) (NULL entries skipped): same element
 * count and every element within the float32 tolerance at level -3. */
int  pn_check_constants(const pn_graph *g, pn_tensor *const *outs, const char *const *labels,
			int n, char *reason, size_t cap);
/* Whether a value of the candidate (its inputs typed as ref_in) would hold
 * more than limit bytes by shape inference: a memory bomb refused before
 * anything is allocated.  Returns PN_EC_NONE or PN_EC_RUNTIME with a
 * reason (shapes inference cannot know are left to the child's address
 * space limit). */
int  pn_check_memory(const pn_graph *cand, pn_tensor *const *ref_in, int n_in, double limit,
		     char *reason, size_t cap);
/* Whether an exported output is worth looking for among constants: it has
 * at least two distinct values (a scalar or a fill value may well be a
 * legitimate constant of any model). */
int  pn_check_informative(const pn_tensor *t);

/* --- check_ort.c: the timed runs on ONNX Runtime (--backend ort) --- */

typedef struct pn_check_ort pn_check_ort;
/* A session of the model at path (a .onnx file or a folder holding
 * model.onnx) on o->ort at level ALL; g is the same model loaded by passnet,
 * whose input and output names the runs use (kept loaded by the caller). */
int  pn_check_ort_load(const char *path, const pn_graph *g, const pn_check_opts *o,
		       pn_check_ort **out, char *err);
/* One run; its outputs stay with the session until the next. */
int  pn_check_ort_run(pn_check_ort *x, pn_tensor *const *in, int n_in, char *err);
void pn_check_ort_free(pn_check_ort *x);

/* --- check_run.c --- */

/* How a timing result whose reference could not be timed (ORT refuses it)
 * begins: the variant is not checked, the candidate not blamed. */
#define PN_CHECK_REF_UNTIMED "the reference cannot be timed: ONNX Runtime does not load it"

/* What a child process brought back. */
typedef struct pn_runres {
	int cls;              /* PN_EC_NONE, or why there are no outputs */
	char reason[PN_ERRLEN + 256];
	double ref_us, cand_us;   /* pn_time_forked: median time of one run */
	int n_sets, n_out;
	pn_tensor **out;      /* pn_run_forked: [set * n_out + k], heap tensors */
} pn_runres;

/* What the child does before running: the candidate's static checks.
 * Returns PN_EC_NONE to go on, or a class with r->reason filled. */
typedef int (*pn_precheck_fn)(void *ud, const pn_graph *g, pn_runres *r);

typedef struct pn_runspec {
	const char *model;           /* .onnx file or folder with model.onnx */
	pn_tensor **inputs;          /* [set * n_in + i] */
	int n_sets, n_in;
	pn_precheck_fn precheck;     /* may be NULL */
	void *precheck_ud;
	int reference;               /* the task's model: PN_CHECK_REF_TIME_LIMIT applies */
} pn_runspec;

/* Loads spec->model in a child process and runs it once on every input
 * set, under the time limit (the candidate's, or the reference's own when
 * spec->reference).  A load or kernel error, a crash or the time
 * limit gives cls PN_EC_RUNTIME. */
void pn_run_forked(const pn_runspec *spec, const pn_check_opts *o, pn_runres *r);
/* Times reference and candidate on input set 0 of spec (spec->model is
 * the reference) in one child process, alternating their samples so that a
 * change of machine load falls on both; the child's limit is the sum of the
 * two limits, and the candidate's share of it is its own limit; fills ref_us and cand_us (medians)
 * or cls PN_EC_RUNTIME. */
void pn_time_forked(const pn_runspec *spec, const char *candidate, const pn_check_opts *o,
		    pn_runres *r);
void pn_runres_free(pn_runres *r);

#endif
