/*
 * rank.h - what a compiler could win back on a cut, and the cuts where it
 * could not: the rule by which the report ranks its slowest patterns.
 *
 * A cut's excess time is what it takes beyond its fused roofline bound,
 * once per occurrence: (median_us - bound_fused_us) x occurrences, taken as
 * 0 when the time is at or under the bound.  The report ranks patterns by
 * the sum of their measured variants' excess times.
 *
 * Three kinds of cut hold no work a compiler pass could speed up, however
 * far above their bound they run, and are ranked apart (pn_cut_kind):
 *   control     a node of the op catalogue's kind CONTROL (If, Loop, Scan,
 *               SequenceMap): the time is the interpreter's walk of the
 *               nested graphs, and the bound counts only their boundary;
 *   shape-only  every node is metadata arithmetic: an op the catalogue
 *               flags F_SHAPE_ONLY (Shape, Size), or a node whose inputs and
 *               outputs are all integer or bool tensors of at most
 *               PN_MAX_RANK elements, which is what a shape, an axis list or
 *               an index into a shape holds (Gather on a shape, Unsqueeze,
 *               Concat and Reshape of shapes, a Constant of one, arithmetic
 *               on dims);
 *   little      work (flops + fused bytes, runtime/cost.h) under
 *               PN_MIN_WORK (see below), where the cost is known: a value
 *               whose dims the profile's inference could not tell (they
 *               depend on data inside the cut: NonZero, a ConstantOfShape of
 *               a computed shape) counts no bytes, and a cost of 0 is one
 *               never computed (every cut writes its outputs), so such cuts
 *               stay ranked.
 * A cut that is none of these is "work".  Control is tested first, then
 * shape-only, then little work.
 */
#ifndef PN_RANK_H
#define PN_RANK_H

#include <stdint.h>

#include "schemas/ir.h"

/*
 * 4096 flops + bytes: at most a 32 x 32 float32 tensor read and written
 * once with an op per element.  Its roofline bound is a few nanoseconds on
 * any machine passnet calibrates (>= 1 GFLOP/s, >= 1 GB/s), under the
 * per-node dispatch cost (a microsecond or so), so its measured time is that
 * dispatch: a compiler removes it by fusing the cut into its neighbours,
 * which the neighbours' own rows already show, not by compiling the cut.
 * A machine-independent number, so that the same store gives the same
 * page on every machine.
 */
#define PN_MIN_WORK 4096.0

enum pn_cut_kind {
	PN_CUT_WORK,
	PN_CUT_CONTROL,
	PN_CUT_SHAPE_ONLY,
	PN_CUT_LITTLE,
	PN_CUT_KINDS
};

/* "work", "control", "shape-only", "little work". */
const char *pn_cut_kind_name(int kind);

/* 1 when a cost of flops + bytes_fused is little work: over 0, under
 * PN_MIN_WORK. */
int pn_little_work(double flops, double bytes_fused);

/* The kind of the cut g (decoded from its canonical bytes, every value
 * typed) whose cost model gave flops and bytes_fused; cost_known: every
 * value had static dims where the profile costed it. */
int pn_cut_kind(const pn_graph *g, double flops, double bytes_fused, int cost_known);

/* (time - bound) x occurrences, 0 when time <= bound or either is not a
 * positive finite number. */
double pn_excess_us(double time_us, double bound_us, int64_t occurrences);

#endif
