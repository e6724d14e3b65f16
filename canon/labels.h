/*
 * labels.h - the exact bytes that describe one node or one value in a
 * canonical form (canon/canon.h).
 *
 * A node: domain, op type, the op version in effect (not the model's opset:
 * Relu hashes the same under opsets 14 to 18), and every attribute, sorted
 * by name, with the defaults of that version written out.  Floats are
 * written by their bits with every NaN made one NaN; nested graphs (If,
 * Loop, Scan bodies) by their own canonical form.
 *
 * A value: its type, and for a constant its contents (or a marker when it
 * is a weight kept as metadata: the statistics of learned weights do not
 * change what a subgraph computes).  The pattern form keeps only ranks.
 */
#ifndef PN_LABELS_H
#define PN_LABELS_H

#include "canon/canon.h"
#include "schemas/ir.h"

enum pn_label_mode { PN_LABEL_EXACT = 0, PN_LABEL_PATTERN = 1 };

/* Canonical-form kinds (the tag byte after the format version). */
enum pn_canon_kind { PN_CK_SUBGRAPH = 1, PN_CK_PATTERN = 2, PN_CK_BODY = 3, PN_CK_BODY_PATTERN = 4 };

/* The outer values a node's nested graphs capture, in the order its operand
 * list carries them after its listed inputs (pn_node_label fills it). */
typedef struct pn_captures {
	int32_t *v;          /* values of the node's graph (malloc'd) */
	int n;
} pn_captures;

/* colour: a colour for every value of n's graph that tells apart captured
 * values the node's nested graphs alone cannot (form.c), or NULL for a
 * label free of context; caps (may be NULL) receives the captured values
 * in wiring order: graph attributes by name, then each graph's canonical
 * order. */
int  pn_node_label(const pn_node *n, int mode, const uint64_t *colour, pn_buf *b,
		   pn_captures *caps);
void pn_tensor_label(const pn_tensor *t, pn_buf *b);
/* A value's type (exact: dtype and dims; pattern: rank) into b. */
void pn_type_label(const pn_type *t, int mode, pn_buf *b);

/* Canonical bytes of a nested graph: formal inputs and outputs keep their
 * positions; captured outer values are inputs without a position, labelled
 * by outer_colour (indexed by the parent graph's values; NULL: unlabelled),
 * and *captured_order (malloc'd, may be NULL) lists the graph's outer
 * values in canonical order so the owning node can wire them in that
 * order. */
int pn_body_canon(const pn_graph *g, int mode, const uint64_t *outer_colour, pn_buf *b,
		  int32_t **captured_order);

#endif
