/*
 * canon.h - canonical labelling of a computation graph.
 *
 * The graph is bipartite: value vertices (inputs, constants, intermediates)
 * and node vertices (ops).  Each vertex carries a label blob: the exact bytes
 * that describe it (an op with its attributes, a value's type and constant
 * contents).  canon finds an order of the vertices that depends only on the
 * graph's structure and labels, never on how the file numbered or named
 * them, and serialises the graph in that order: two graphs get the same
 * bytes exactly when they are isomorphic with equal labels.
 *
 * Method (individualisation-refinement, as in nauty, with a light form of
 * its automorphism pruning):
 *   1. colour every vertex by a hash of its label;
 *   2. refine: a vertex's new colour hashes its colour with the multiset of
 *      (edge kind, neighbour colour); edge kinds say input slot k, output
 *      slot s, or "commutative operand" (slot-free), so sharing and operand
 *      order are seen exactly; repeat until no colour class splits;
 *   3. if a class still holds several vertices (a tie: symmetry, or a graph
 *      on which refinement is blind, like one 12-cycle against two
 *      6-cycles), try each of its vertices in turn as distinguished,
 *      refine, and recurse; every leaf (all colours distinct) gives one
 *      serialisation, and the least bytes win;
 *   4. two leaves with equal bytes reveal an automorphism (the first 64 are
 *      kept); a vertex of a tied class that such an automorphism, fixing
 *      every vertex distinguished on the current path, maps to or from a
 *      sibling already tried would lead to the same leaves, so it is not
 *      tried.
 * The tie search is exact up to PN_CANON_MAX_LEAVES leaves; past that, the
 * remaining ties are broken by the first vertex of the class, which is
 * exact when the tied vertices are symmetric (the usual reason for big
 * ties) and reported through pn_canon_out.approximate otherwise.
 */
#ifndef PN_CANON_H
#define PN_CANON_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"   /* labels and serialisations are built in a pn_buf */

#define PN_CANON_VERSION 1
#define PN_CANON_MAX_LEAVES 4096

enum pn_cvalue_kind { PN_CV_INPUT = 0, PN_CV_CONST = 1, PN_CV_INNER = 2 };

typedef struct pn_blob {
	const uint8_t *p;
	size_t n;
} pn_blob;

typedef struct pn_cgraph {
	int nv, nn;
	/* values */
	uint8_t *v_kind;        /* enum pn_cvalue_kind */
	int32_t *v_in_pos;      /* inputs: position if inputs are ordered, else -1 */
	int32_t *v_out_pos;     /* -1: not an output; else position (or 0 if unordered) */
	pn_blob *v_label;
	/* nodes */
	pn_blob *n_label;
	uint8_t *n_comm;        /* operands commute */
	int32_t *n_nin, *n_nout;
	int32_t **n_in;         /* value indices, -1 for an absent slot */
	int32_t **n_out;
	int ordered_outputs;    /* outputs are positional (a graph's), else a set */
} pn_cgraph;

typedef struct pn_canon_out {
	uint8_t *bytes;         /* malloc'd canonical serialisation */
	size_t len;
	int32_t *value_order;   /* canonical position -> value index (malloc'd) */
	int32_t *node_order;    /* canonical position -> node index (malloc'd) */
	int leaves;             /* leaves of the tie search that were serialised */
	int approximate;        /* the leaf budget ran out on a non-trivial tie */
} pn_canon_out;

/* kind: a tag byte written after the format version (subgraph, pattern,
 * nested body), so forms of different kinds never compare equal. */
int  pn_canon(const pn_cgraph *g, uint8_t kind, pn_canon_out *out);
/* Only the refinement (no tie search): stable colours of every vertex,
 * values first then nodes, into colours[nv + nn].  Isomorphism-invariant;
 * partition uses them to order nodes canonically. */
int  pn_canon_colours(const pn_cgraph *g, uint64_t *colours);
void pn_canon_out_free(pn_canon_out *o);

#endif
