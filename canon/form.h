/*
 * form.h - the canonical forms of a cut of a model (a candidate subgraph):
 * the exact form, whose XXH3-128 is the subgraph's hash, and the pattern
 * form, whose hash groups the shape/dtype variants of one computation.
 *
 * A cut's boundary: values it reads from outside become inputs (unordered:
 * the order of graph inputs in a file is not part of a computation), except
 * those whose contents are known (initializers, Constant outputs, values
 * constant folding computed, weights kept as metadata, and an Identity of
 * any of those), which become
 * constants of the subgraph; values it produces that are read outside, or
 * are graph outputs, become its outputs (also unordered).
 */
#ifndef PN_FORM_H
#define PN_FORM_H

#include "common/util.h"
#include "canon/canon.h"
#include "runtime/infer.h"
#include "schemas/ir.h"

typedef struct pn_form {
	uint8_t *bytes;        /* exact canonical form (malloc'd) */
	size_t len;
	pn_key hash;           /* XXH3-128 of bytes */
	pn_key pattern;        /* XXH3-128 of the pattern form */
	int n_nodes;
	char **ops;            /* op types in canonical order, NULL-ended: one malloc'd
				  block with its strings */
	int n_inputs, n_outputs, n_consts;
	int32_t *input_values; /* the model's value behind each input of the decoded
				  subgraph, in its order (malloc'd, n_inputs) */
	/* The model's value behind each constant of the cut's top graph, in
	 * canonical order, and its index there: the decoder names it
	 * "v<const_slots[j]>" (n_consts each, in input_values' block). */
	int32_t *const_values, *const_slots;
	int approximate;       /* the tie search hit its budget */
} pn_form;

/* The constant that value v of g is (r: its inference result, or NULL for
 * a nested graph): v itself when its contents are known or kept as
 * metadata, the constant an Identity (or a chain of them) passes on
 * unchanged, or -1.  torch exports a buffer shared by every layer (a causal
 * mask) as one initializer read directly by the first layer and through an
 * Identity by the others: the layers are then one subgraph, not two. */
int pn_const_source(const pn_graph *g, const pn_infer_result *r, int v);

/* Canonical forms of the cut nodes[0..n) of g, typed by r (the model's
 * inference result: types and folded contents). */
int  pn_form_of_cut(const pn_graph *g, const pn_infer_result *r, const int32_t *nodes, int n,
		    pn_form *out, char *err);
void pn_form_free(pn_form *f);

/* An exact cache of cut forms, for one thread.  Its key is the cut's
 * labelling problem as built (every label and every wire, in the cut's own
 * node order, before canonical labelling), so equal keys are the same
 * problem and pn_canon, a function of the problem alone, would give the
 * same result: a hit reuses the canonical and pattern forms and their
 * orders instead of computing them, and a store built with the cache is
 * byte-identical to one built without.  Keys are compared in full (the hash
 * only finds them).  On a miss, the pattern form is looked up the same way,
 * keyed by the pattern problem.  Cuts with nested graphs are not cached:
 * their pattern problem is not a function of the exact one.  max_bytes bounds the cache
 * (0: a default); when full it starts afresh. */
typedef struct pn_form_cache pn_form_cache;
pn_form_cache *pn_form_cache_new(size_t max_bytes);
void pn_form_cache_free(pn_form_cache *c);
/* Names the model the next cuts come from (its graph), before its first
 * cut: its node and value labels are then built once and kept until the
 * next call, instead of once per cut.  0, or -1 (out of memory: no memo). */
int  pn_form_cache_model(pn_form_cache *c, const pn_graph *g);
/* Lookups and hits so far (exact hits; pattern hits of exact misses). */
void pn_form_cache_counts(const pn_form_cache *c, uint64_t *lookups, uint64_t *hits,
			  uint64_t *pattern_hits);
/* pn_form_of_cut through cache (NULL: no cache). */
int  pn_form_of_cut_cached(const pn_graph *g, const pn_infer_result *r, const int32_t *nodes,
			   int n, pn_form_cache *cache, pn_form *out, char *err);

/* The exact canonical form of the cut nodes[0..n) alone (no pattern form,
 * no cache), for a model's structure key (store/structures.h): its hash
 * into *hash, and node_at[p] the node at canonical position p (n entries):
 * isomorphic cuts with equal labels put corresponding nodes at equal
 * positions. */
int pn_form_positions(const pn_graph *g, const pn_infer_result *r, const int32_t *nodes, int n,
		      pn_key *hash, int32_t *node_at, int *approximate, char *err);

/* Refined colours of the nodes in mask (IR node -> colour, 0 outside the
 * mask): equal for nodes no relabelling of the file can tell apart. */
int pn_node_colours(const pn_graph *g, const pn_infer_result *r, const uint8_t *mask,
		    uint64_t *colour, char *err);

#endif
