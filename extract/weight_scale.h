/*
 * weight_scale.h - regenerated weights checked against the real ones at
 * extract, and rescaled until they stay on the real model's scale.
 *
 * The store keeps large weights as statistics (model/onnx_weights.c) and
 * every later stage runs on weights regenerated from them
 * (runtime/weights.c).  Where the real bytes are at hand, at extract, the
 * model runs twice on the same inputs (test_data_set_0 when the model has
 * a complete one, else the seeded inputs of seed 1 that the binding's
 * validation run used): once with its real weights, once with the
 * regenerated ones.  Both runs' value ranges go on the model record (the
 * real run's for every float value of the main graph, which the ranges
 * phase uses, exec/ranges.h; the regenerated run's for the outputs).
 *
 * The rule: every float output whose real largest magnitude R is nonzero
 * must have a regenerated largest magnitude G with R/10 <= G <= 10 R.  While
 * one does not (at most PN_WS_ROUNDS corrections), each layer that reads a
 * weight linearly (Conv, ConvTranspose, MatMul, Gemm, Mul; the scale of
 * BatchNormalization, LayerNormalization, InstanceNormalization,
 * GroupNormalization) gets a correction factor: its real gain (largest
 * output magnitude over largest data-input magnitude) over its regenerated
 * gain, multiplied into the weight's WeightMeta.scale, which
 * pn_weight_regen applies.  Gains, not magnitudes: a layer's factor does
 * not depend on what the layers before it were corrected by, so one round
 * corrects them all at once (up to biases and nonlinearities, which the next
 * rounds take up).  Factors within 10% of 1 are left out, so that a model
 * already on scale keeps scale 1 everywhere.  A layer whose output the real
 * run keeps of one sign and the regenerated run of the other (the logit of
 * a "no speech" sigmoid: Silero VAD, wake-word heads) gets a negative
 * factor: magnitudes alone cannot bring a probability of 0.9999 back to
 * 1e-4.
 *
 * Where some weight's bytes were never present (a missing external data
 * file: WeightMeta.has_stats false), there is no real run: the model record
 * counts those weights.  Their draw keeps each layer's output spread near
 * its input's by construction (runtime/weights.c: std 1/sqrt(fan_in)); the
 * regenerated run checks that every float output is finite and free of
 * denormals (largest magnitude 0 or at least FLT_MIN), and while one is
 * not, each layer reading such a weight is scaled so that its gain is 1
 * (its output's largest magnitude that of its data input), which the
 * nonlinearities between layers would otherwise shrink or grow with depth.
 * Either way the scales of the best round are kept: a round may make a
 * model worse (RAFT's recurrent refinement went non-finite).
 *
 * Layers in nested graphs (If branches, Loop and Scan bodies, which read
 * the main graph's weights as captured values) are observed and rescaled
 * alike (pn_exec_opts.observe_all); only the main graph's values go on the
 * record, since the ranges phase maps cuts of the main graph.
 *
 * Not checked: models whose binding did not pass (they do not run), and
 * models with more than PN_WS_MAX_WEIGHT_BYTES of weights (their runs
 * would dominate extract).  Measured on the 23 trained npm models of
 * data-manifest.txt: 25 of their 30 float outputs were within 10x before
 * (PP-OCRv4 detection 1.8e5x off), all 30 after, the worst 7.05x
 * (tests/cli/weights_scale_trained.sh).  The cost is one run of every
 * model at extract (two or three with real weights, one with the real
 * ones): extract of the 71-model test corpus took 41 s of wall time (78 s
 * of CPU) instead of 7 s (12 s) on 2 threads, most of it runs of the
 * detection models (Mask R-CNN: 8 s a run), which have no binding to
 * validate and so were never run at extract; on the hub-like bench/scale
 * corpus 16 times the rest of extract (docs/benchmarks.md, Scale).  Copies
 * of one file that differ only in who made it are checked once a run
 * (weight_memo.h), and so are the re-exports of a blind model, whose draws
 * are seeded by canonical names (check_form.h); `--no-weight-check` skips
 * the check.
 */
#ifndef PN_WEIGHT_SCALE_H
#define PN_WEIGHT_SCALE_H

#include "common/arena.h"
#include "passnet.pb-c.h"
#include "extract/value_keys.h"
#include "schemas/ir.h"

#define PN_WS_RULE 10.0           /* outputs within this factor of the real magnitude */
#define PN_WS_ROUNDS 4
#define PN_WS_MAX_WEIGHT_BYTES ((double)(256u << 20))

typedef struct pn_weight_check {
	uint32_t n_absent;                 /* weights without statistics */
	Passnet__ValueRange **real;        /* the real run: every float value */
	size_t n_real;
	Passnet__ValueRange **regen;       /* the regenerated run: the outputs */
	size_t n_regen;
	const char *how;                   /* one line: what was found and done */
	int booked;                        /* round 0 came from the book (value_keys.h) */
} pn_weight_check;

/* Checks m (decoded with weights as statistics from the unstripped mp)
 * against mp's real weights on the inputs above (testset: the record's
 * first test set, or NULL), sets the correction scales on m's weight
 * statistics, and fills out (allocated in a).  book (may be NULL): a
 * blind check's round 0 is taken from it when it answers for every output,
 * and booked in it when run (value_keys.h); the result is the same either
 * way.  -1 only when out of memory; a model that cannot be checked says
 * why in out->how. */
int pn_weight_scale_check(pn_model *m, const Onnx__ModelProto *mp, const pn_dimbind *bind,
			  const Passnet__TestSet *testset, pn_value_book *book, pn_arena *a,
			  pn_weight_check *out, char *err);

/* How many weights of g (nested graphs included) have no statistics: their
 * bytes were never present. */
uint32_t pn_weights_absent(const pn_graph *g);

/* The weight statistics of g and its nested graphs (the graphs depth first,
 * each one's values in order: the same order for two decodes of one file),
 * in *out (malloc'd); returns how many, -1 when out of memory. */
int pn_weight_metas(const pn_graph *g, pn_wmeta ***out);

#endif
