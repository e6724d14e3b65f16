/*
 * generalize.h - a fixed-shape model made to take another batch size.
 *
 * Most exported models state every input dim as a number (batch 1), and
 * their shape constants (Reshape targets, Slice ends, Resize sizes) encode
 * that batch too, so binding a symbolic dim cannot give them a shape
 * variant.  This pass follows the batch through the graph instead: every
 * value gets the axis that holds it (or none), each op by a rule of its own
 * (generalize.c lists them), and a constant read as a shape whose entry at
 * that axis counts the batch is rewritten.  What the rules cannot follow
 * (an op that mixes samples, a shape computed with the batch size, control
 * flow reading the batch) refuses the model with the reason, rather than
 * guessing; shape inference at another batch checks the plan, and
 * pn_batch_independent, one run at the new batch against runs of each
 * sample alone, is the final judge.
 *
 * A batch axis may be merged with neighbours by a Reshape (attention folds
 * batch and heads into one axis, [B*12, S, 64]); the value then records
 * how many elements of that axis lie inside one sample (q) so that such
 * axes are followed through row-wise ops and split back.  The base batch
 * must be 1: every count that holds the batch is then its base value times
 * the new batch.
 */
#ifndef PN_GENERALIZE_H
#define PN_GENERALIZE_H

#include <stdint.h>

#include "schemas/ir.h"

/* 0: m can be generalized to another batch (*base: the batch the file
 * fixes, always 1); 1: it cannot, and why says why in one line (e.g.
 * "input 'x' fixes dim 0 at 3, not a batch of 1", "Reshape 'n12' folds the
 * batch into another axis"); -1: out of memory or error (why).  The plan
 * is checked by shape inference at batch 3 with the constants rewritten
 * (on a copy: m is not touched). */
int pn_generalize_plan(const pn_model *m, int64_t *base, char *why);

/* Rewrites m's IR in place for batch `batch` (>= 1): every batch-carrying
 * graph input's dim 0 becomes batch, the declared types of the values that
 * carry it follow, and every constant read as a shape that encodes the
 * batch (an initializer or a Constant's output, a small int64/int32
 * tensor) is replaced by a rewritten copy in m's arena (the old bytes may
 * be shared and are never written).  Checked by shape inference at the new
 * batch.  Same return convention as pn_generalize_plan; on 1 or -1 m may
 * be partly rewritten and should be dropped.  Deterministic: depends only
 * on m and batch. */
int pn_generalize_batch(pn_model *m, int64_t batch, char *why);

/* B when every input of g of rank >= 2 fixes dim 0 at the same B (as
 * numbers; inputs of rank 0 and 1 aside), else 0. */
int64_t pn_fixed_batch(const pn_graph *g);

/* Rewrites m's IR in place into its one-sample form: the model that
 * pn_generalize_batch makes m again at m's fixed batch B (*batch, >= 2)
 * without rewriting a constant.  The inputs' dim 0 becomes 1 and the
 * declared types of the values that carry the batch follow.  A model that
 * spells its batch in a constant, or computes with its size, is not such a
 * copy: 1, and why says why.  The plan made at batch 1 is checked by shape
 * inference at B, which must give every value the plan's shape.  Same
 * return convention as pn_generalize_plan; on 1 or -1 m may be partly
 * rewritten and should be dropped. */
int pn_generalize_one(pn_model *m, int64_t *batch, char *why);

/* What a caller remembers of pn_batch_independent's verdicts (NULL:
 * nothing).  After the checks that run nothing (the plan, the runs' size),
 * known(ud) 1 says that base was found independent before, by the same
 * runs (variants.c: its canonical form, drawn by canonical names), and the
 * runs are skipped; learn(ud) is told of each independent verdict the runs
 * give (0, or -1 when out of memory). */
typedef struct pn_indep_memory {
	int (*known)(void *ud);
	int (*learn)(void *ud);
	void *ud;
} pn_indep_memory;

/* Batch independence: runs `gen` (base generalized to batch >= 2) once on
 * `batch` samples, each seeded from seed and its index, and `base` (at its
 * own batch 1) on each sample alone, weights regenerated with the same
 * seed, one thread; then compares sample i of every batched output (along
 * its batch axis, as the plan of base follows it) with the batch-1 output
 * of sample i within rtol/atol (floats; integers exactly); an output that
 * carries no batch must equal every sample's.  0: independent; 1: not (why
 * names the output, the sample and the largest difference); -1: could not
 * run (why). */
int pn_batch_independent(const pn_model *base, const pn_model *gen, int64_t batch, uint64_t seed,
			 double rtol, double atol, const pn_indep_memory *memory, char *why);

#endif
