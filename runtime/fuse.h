/*
 * fuse.h - chains of nodes the session runs as one kernel.
 *
 * A plan is read off the graph once per session graph, before any run:
 * which node heads a chain, which nodes the chain swallows, and what the
 * chain's kernel reads.  It is a property of the graph alone (ops and
 * edges, not values), so the same graph gets the same plan whatever runs it;
 * whether the values suit the chain's kernel (dtypes, zero points) is
 * decided at the head when it runs, and where they do not the swallowed
 * nodes run one by one there instead.
 *
 * Chains (each intermediate value read by the next node only, and not a
 * graph output):
 *
 *   qconv: DequantizeLinear(x) -> Conv(., W, B) [-> act] -> QuantizeLinear,
 *          act one of Relu, Clip (constant bounds), HardSigmoid, HardSwish,
 *          W the output of a DequantizeLinear, the QuantizeLinear's scale and
 *          zero point constants (so that they are there when the head runs).
 *          The Conv is the head; the x DequantizeLinear, the Relu and the
 *          QuantizeLinear are swallowed (runtime/ops/conv_q8.c).  The head
 *          reads the W DequantizeLinear's inputs (the int8 weights), so the
 *          session keeps them until it has run.  A fully connected Gemm
 *          (transB = 1, no transA, alpha = beta = 1) heads one as the 1x1
 *          convolution it is.
 *   qadd:  DequantizeLinear(a), DequantizeLinear(b) -> Add [-> Relu] ->
 *          QuantizeLinear, the residual join of a quantized ResNet or
 *          MobileNet-v2.  The Add is the head and swallows the rest
 *          (runtime/ops/quant.c: the same float32 operations as the nodes,
 *          one pass instead of five).
 */
#ifndef PN_RUNTIME_FUSE_H
#define PN_RUNTIME_FUSE_H

#include <stdint.h>

#include "schemas/ir.h"

enum pn_fuse_role {
	PN_FUSE_NONE = 0,    /* runs as itself */
	PN_FUSE_SWALLOWED,   /* runs inside the chain its head runs */
	PN_FUSE_QCONV,       /* heads a qconv chain */
	PN_FUSE_QADD,        /* heads a qadd chain */
};

typedef struct pn_fuse_qconv {
	int32_t dq_x;        /* node: DequantizeLinear of the quantized input */
	int32_t dq_w;        /* node: DequantizeLinear of the int8 weights (not swallowed) */
	int32_t act;         /* node: the activation, or -1 */
	int32_t q;           /* node: the QuantizeLinear whose output the chain writes */
} pn_fuse_qconv;

typedef struct pn_fuse_qadd {
	int32_t dq_a, dq_b;  /* nodes: the DequantizeLinear of each operand */
	int32_t relu;        /* node, or -1 */
	int32_t q;           /* node: the QuantizeLinear whose output the chain writes */
} pn_fuse_qadd;

typedef struct pn_fusion {
	uint8_t *role;           /* per node: enum pn_fuse_role */
	pn_fuse_qconv *qconv;    /* per node, where role is PN_FUSE_QCONV */
	pn_fuse_qadd *qadd;      /* per node, where role is PN_FUSE_QADD */
	int n_chains;
} pn_fusion;

/* The plan of g into *f: 0, or -1 when out of memory. */
int pn_fusion_plan(const pn_graph *g, pn_fusion *f);
void pn_fusion_free(pn_fusion *f);

#endif
