/*
 * partition.h - cutting a model graph into candidate subgraphs.
 *
 * Strategies work on the model's compute nodes: every top-level node except
 * Constants and nodes whose outputs constant folding computed (those are
 * constants of whatever subgraph reads them).  Each strategy is one file and
 * emits cuts; every cut is convex (no path leaves it and comes back), has at
 * most PN_CUT_MAX_NODES nodes, PN_CUT_MAX_INPUTS inputs and
 * PN_CUT_MAX_OUTPUTS outputs.
 *
 *   sole    every compute node alone
 *   window  connected, convex runs of 2..8 nodes of a canonical topological
 *           order (the order depends on the graph, not the file)
 *   anchor  each Conv/ConvTranspose/MatMul/Gemm (F_ANCHOR in ops.def) with
 *           its chain of elementwise producers and consumers
 *   fusion  groups by TVM's FuseOps rules over the post-dominator tree
 *   typical blocks of 4..64 nodes a model repeats, or the corpus does
 *           (partition/typical.c)
 */
#ifndef PN_PARTITION_H
#define PN_PARTITION_H

#include <stdint.h>

#include "common/util.h"
#include "runtime/infer.h"
#include "schemas/ir.h"
#include "schemas/strategies.h"

#define PN_CUT_MAX_NODES 64
#define PN_CUT_MAX_INPUTS 16
#define PN_CUT_MAX_OUTPUTS 8
#define PN_WINDOW_MAX 8

/* The partition view of one model. */
typedef struct pn_pview {
	const pn_graph *g;
	const pn_infer_result *r;
	uint8_t *compute;        /* node is a compute node */
	int n;                   /* compute nodes */
	int32_t *order;          /* compute nodes in canonical topological order */
	int32_t *rank;           /* node -> position in order, -1 if not compute */
	uint64_t *colour;        /* node -> canonical colour */
	int32_t *succ_start, *succ;   /* compute successors of each node */
	int32_t *pred_start, *pred;   /* compute predecessors */
	uint32_t *stamp;         /* scratch marks for graph walks (see pn_cut_ok) */
	uint32_t epoch;
	int32_t *stack;
} pn_pview;

int  pn_pview_build(pn_pview *pv, const pn_graph *g, const pn_infer_result *r, char *err);
/* Orders pv again with nodes of equal colour taken by position[node] (the
 * canonical positions of the structure, store/structures.h) instead of by
 * node index, so every model of a structure is cut alike: 0, or -1 (out
 * of memory). */
int  pn_pview_tie_break(pn_pview *pv, const int32_t *position);
void pn_pview_free(pn_pview *pv);

/* A growable list of cuts (node index lists, each sorted ascending). */
typedef struct pn_cuts {
	int32_t **nodes;
	int32_t *len;
	int n, cap;
} pn_cuts;

int  pn_cuts_add(pn_cuts *c, const int32_t *nodes, int n);   /* copies, sorts */
void pn_cuts_free(pn_cuts *c);

/* Checks a cut: convex and within the bounds.  in_cut is a scratch mask of
 * g->n_nodes bytes, all zero on entry and on return.  (The view's scratch
 * marks make these calls unsafe to share between threads: one view per
 * thread.) */
int pn_cut_ok(pn_pview *pv, const int32_t *nodes, int n, uint8_t *in_cut);
/* The values a cut exchanges with the rest: distinct non-constant values
 * read from outside plus values read outside (or graph outputs), or -1
 * past PN_CUT_MAX_INPUTS or PN_CUT_MAX_OUTPUTS.  in_cut as pn_cut_ok. */
int pn_cut_boundary(pn_pview *pv, const int32_t *nodes, int n, uint8_t *in_cut);
/* True if the cut's nodes are connected (ignoring edge direction). */
int pn_cut_connected(pn_pview *pv, const int32_t *nodes, int n, uint8_t *in_cut);

/* The typical strategy's corpus blocks (partition/typical.c): the stretches
 * of a model's op order between boundaries where one stream passes (a
 * layer's edge, a residual block's), 4..64 ops, on the nodes its repeats
 * left.  They depend on the model alone; a
 * block is kept as a typical cut once two places in the corpus hold it
 * (dedup/blocks.h), so what the other models are decides, not their order. */
typedef struct pn_block_list {
	pn_cuts cuts;      /* node index lists, each ascending */
	pn_key *hash;      /* each one's pattern hash (canon/form.h) */
	int cap;
} pn_block_list;
/* The typical strategy whole: its repeats into repeats (what
 * pn_partition_typical cuts) and, when blocks is not NULL, its corpus
 * blocks, on one op order.  0, or -1 out of memory. */
int  pn_typical_cut(pn_pview *pv, pn_cuts *repeats, pn_block_list *blocks);
void pn_block_list_free(pn_block_list *b);

typedef int (*pn_strategy_fn)(pn_pview *pv, pn_cuts *out);

typedef struct pn_strategy {
	const char *name;
	pn_strategy_fn run;
} pn_strategy;

/* One entry per line of schemas/strategies.def, in its order. */
extern const pn_strategy pn_strategies[PN_N_STRATEGIES];
const pn_strategy *pn_strategy_find(const char *name);

#define PN_STRATEGY(name, summary) int pn_partition_##name(pn_pview *pv, pn_cuts *out);
#include "schemas/strategies.def"
#undef PN_STRATEGY

#endif
