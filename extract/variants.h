/*
 * variants.h - shape variants: the same model at further bindings.
 *
 * A benchmark task holds one computation at many shapes (the published one
 * about ten per task: nine reified shapes and the original).  A model seen
 * at one binding gives each of its subgraphs one shape, so at ingest every
 * model is also instantiated at up to `max` further bindings (default
 * PN_VARIANTS_DEFAULT, `--variants N`, 0 for none).  Each is stored as a
 * model of its own (schemas/passnet.proto: variant_of), partitioned and
 * deduplicated like any model; a subgraph it shares with the base at another
 * shape gets another canonical hash but the same pattern hash, so export's
 * tasks (patterns) gather the shapes.
 *
 * Which bindings: the variant ladder of binding_rules.c gives each dim kind
 * PN_VARIANT_SLOTS values, smallest first.  Slot s binds every dim the base
 * binding chose by rule or took from the model's test set to its kind's
 * value at s (a batch next to other varying kinds follows the paired batch
 * ladder, so that (batch, sequence) runs from (1, 16) to (16, 4096) rather
 * than to (512, 4096)); --dim values, state dims, dims of kind "other" and
 * configuring scalars keep the base's value.  Slots that give the base's
 * binding again, or one already made, are passed over.
 *
 * A model whose inputs are all fixed (most exported architectures) has
 * nothing to bind; its batch is generalized instead (generalize.h) when the
 * file fixes it at 1 and the graph can be followed: slot s is the batch
 * ladder's value, and the variant is kept only if the model at batch 2 gives
 * each sample what it gives that sample alone (batch independence; a model
 * too big for that check, PN_GENERALIZE_CHECK_FLOPS, is not generalized).
 *
 * Validation, per variant: shape inference of the whole model with every
 * input static, then the size limits below, then one run on seeded inputs
 * (as the base binding is validated: binding.h).  Above the run limit the
 * variant is validated by inference alone and its record says so (the
 * kernels it needs are those a smaller variant of the same graph ran).  A
 * variant that fails is not stored; the base model's record lists every
 * variant made or refused, with the reason (variant_notes).  A generalized
 * batch's runs (its independence check and each variant's run) draw every
 * weight from its coarse statistics (check_form.h), so what is chosen is a
 * function of the model's file key, and the copies of a model in one run
 * (its fine-tunes) share one choice (variant_memo.h).  The independence
 * check, the costliest of those runs, draws by the canonical names of the
 * model's form (check_form.h, pn_run_form_make) as well, so that renamed
 * and reordered copies (its re-exports) share its verdict too.
 */
#ifndef PN_VARIANTS_H
#define PN_VARIANTS_H

#include <stdint.h>

#include "common/arena.h"
#include "extract/binding.h"
#include "runtime/infer.h"
#include "schemas/ir.h"

#define PN_VARIANTS_DEFAULT 9
#define PN_VARIANTS_MAX (PN_VARIANT_SLOTS - 1)

/* Size limits.  A variant with a value of more than PN_VARIANT_MAX_ELEMS
 * elements (256 MiB of float32) or more than PN_VARIANT_MAX_FLOPS of work is
 * skipped: every subgraph of it is profiled on its own later, and work and
 * storage must stay bounded.  One above PN_VARIANT_RUN_FLOPS or
 * PN_VARIANT_RUN_ELEMS is not run at ingest (validated by inference). */
#define PN_VARIANT_MAX_ELEMS ((int64_t)1 << 26)
#define PN_VARIANT_MAX_FLOPS 2e11
#define PN_VARIANT_RUN_FLOPS 1e9
#define PN_VARIANT_RUN_ELEMS ((int64_t)1 << 24)

/* The batch independence check of a generalized batch compares each
 * sample of the batch-2 outputs with that sample's batch-1 outputs: the
 * same kernels on the same values, so only summation order differs. */
#define PN_GENERALIZE_RTOL 1e-4
#define PN_GENERALIZE_ATOL 1e-5
/* The check runs the model at batch 2 and twice at batch 1; a model for
 * which that is more work than this is not generalized (ingest must stay
 * a matter of seconds per model, not of minutes). */
#define PN_GENERALIZE_CHECK_FLOPS 2e10

typedef struct pn_variant {
	pn_dimbind bind;      /* the variant's full binding (base entries overridden) */
	int n_changed;        /* the entries that differ from the base, as "name=value" */
	const char **changed;
	int64_t batch;        /* > 0: a generalized batch (bind is then empty) */
	const char *text;     /* "name=v,name=v" or "batch=B (generalized)" */
	const char *how;      /* how it was validated */
	int ran;              /* validated by a run */
} pn_variant;

typedef struct pn_variants {
	int n;
	pn_variant *v;        /* slot order */
	int n_notes;
	const char **notes;   /* one per slot considered: made or refused, and why */
} pn_variants;

/* Decodes a fresh copy of the model (generalizing rewrites a copy in
 * place); returns NULL and sets err on failure. */
typedef pn_model *(*pn_model_copy_fn)(void *ud, char *err);

/* What choosing reads besides the model and its binding. */
typedef struct pn_variant_src {
	pn_model_copy_fn copy;          /* fresh copies of m; NULL: no generalization */
	void *copy_ud;
	const pn_infer_result *r;       /* m's inference at its binding; NULL: none */
	struct pn_variant_memo *memo;   /* the run's verdicts (variant_memo.h); NULL */
	int independence_reused;        /* out: the batch independence verdict was
					 * the memo's */
} pn_variant_src;

/* Chooses and validates up to max variants of m, whose base binding is b.
 * Everything is allocated in a; m's weight statistics are as they were
 * after (a generalized batch's runs draw from their coarse form
 * meanwhile).  -1 only when out of memory. */
int pn_variants_choose(pn_model *m, const pn_binding *b, int max, pn_variant_src *src,
		       pn_arena *a, pn_variants *out, char *err);

#endif
