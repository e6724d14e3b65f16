/*
 * inputs.h - what a graph input's values mean, and the seeded inputs of a
 * whole model that follow it (runtime/inputs.c, with the rule table).
 * pn_input_for and pn_concrete_input_types, for one input of a model or a
 * subgraph, are declared in runtime/session.h.
 */
#ifndef PN_INPUTS_H
#define PN_INPUTS_H

#include <stdint.h>

#include "schemas/ir.h"

enum pn_input_meaning {
	PN_IM_NONE = 0,
	PN_IM_LENGTHS,   /* the length of each batch element's sequence */
	PN_IM_RATE,      /* a scalar the graph compares with a constant (a sample rate) */
	PN_IM_TOKENS,    /* indices into an embedding */
	PN_IM_MASK,      /* 0/1 per position */
	PN_N_INPUT_MEANINGS
};

/* Meaning of graph input `input` (an index into g->inputs) of g. */
int pn_input_meaning(const pn_graph *g, int input);
const char *pn_input_meaning_name(int meaning);

/* For lengths input `input`: the input whose sequence it gives the length
 * of (the first other input of rank >= 2 with the same dim 0) and in *axis
 * that input's sequence axis (its first axis after 0 the file leaves
 * symbolic, else its longest); -1 when no input has the same dim 0.  types:
 * the inputs' static types, or NULL for the declared ones. */
int pn_lengths_described(const pn_graph *g, int input, const pn_type *types, int *axis);

/* For a lengths input compared with a constant arange of n (a traced
 * export: torch bakes arange(max(lengths)) at its example's length, so n is
 * the only sequence length the model runs at): n; else 0. */
int64_t pn_lengths_traced(const pn_graph *g, int input);

/* Seeded inputs of the whole model g into out[g->n_inputs], input i of
 * static type types[i]: each as pn_input_for gives it (no range), and a
 * lengths input at the length of the sequence axis of the input it
 * describes.  0, or -1 with err set (out then holds nothing). */
int pn_model_inputs(const pn_graph *g, const pn_type *types, uint64_t seed, pn_tensor **out,
		    char *err);

#endif
