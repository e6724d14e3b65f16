/*
 * cost_impl.h - what the cost functions of runtime/ops/cost_*.c share (see
 * runtime/cost.h for the contract).
 *
 * pn_node_cost fills the default (inputs read once, outputs written once,
 * one op per output element) before it calls an op's function, so a
 * function changes only what differs.  A function returns 0 when it has
 * set its figures, or 1 when a shape it needs is not known: the default is
 * then kept, never an error.
 *
 * FLOPs count scalar arithmetic operations of any element type (an integer
 * multiply-add is two, like a float one), as a roofline model needs: what
 * the computation intrinsically takes, not what a particular kernel does.
 */
#ifndef PN_COST_IMPL_H
#define PN_COST_IMPL_H

#include "runtime/cost.h"

/* exp, log, tanh, erf, sin, ...: a vectorised polynomial evaluation is about
 * ten multiply/add operations per element (range reduction and a degree
 * 5-7 polynomial), so that is what one transcendental call counts. */
#define PN_COST_TRANS 10.0

/* Input / output i as a tensor type whose shape is fully known, else NULL
 * (absent slot, sequence, optional, unknown dims). */
const pn_type *pn_cin(const pn_costctx *c, int i);
const pn_type *pn_cout(const pn_costctx *c, int i);
/* Known contents of input i (a small constant), or NULL. */
const pn_tensor *pn_cval(const pn_costctx *c, int i);
/* Element count of input / output i (0 unless pn_cin/pn_cout has it). */
double pn_cin_numel(const pn_costctx *c, int i);
double pn_cout_numel(const pn_costctx *c, int i);
/* A static type's dim at a possibly negative axis, or -1. */
int64_t pn_cdim(const pn_type *t, int64_t axis);
/* log2(n), at least 1: the depth of a sort or a heap never drops below one
 * comparison per element. */
double pn_clog2(double n);
/* Sets flops to per_elem times the element count of output 0 (the
 * elementwise families). */
int pn_cost_per_output(pn_costctx *c, double per_elem);
/* Sets flops to per_elem times the element count of input 0 (reductions). */
int pn_cost_per_input(pn_costctx *c, double per_elem);

/* Bytes of input `slot` that node n reads (in: that input's type, out0:
 * the node's first output): the whole input, except for the ops that read
 * only what they output (Slice, Gather*) or only the shape (Shape, Size).
 * The fused traffic of a graph uses it too, so a table that a subgraph only
 * gathers from is not counted whole. */
double pn_cost_slot_read(const pn_node *n, int slot, const pn_type *in, const pn_type *out0);

/* A control op's body (If branch, Loop/Scan body) as seen from the node:
 * flops and the traffic of its intermediates, from the body's own value
 * types; unknown parts cost 0. */
void pn_body_cost(const pn_graph *body, pn_graph_cost *out);

#endif
