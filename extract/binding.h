/*
 * binding.h - the base binding of a model's symbolic dims, chosen at ingest.
 *
 * A model exported with dynamic axes says "batch", "sequence" or nothing at
 * all where a size should be; binding every such dim to 1 gives a 1-sample
 * clip or a 1x1 image, which audio and vision models cannot take.  Instead
 * each graph input gets a role (roles.c: image, audio, token ids, mask,
 * recurrent state, configuring scalar, other) from its rank, dtype, names and
 * how the graph reads it, each symbolic dim a kind (batch, spatial, sequence,
 * samples, state, other), and each kind a base value from one table
 * (binding_rules.c).  A dim the file leaves unnamed is bound by the name
 * "INPUT:AXIS" (runtime/infer.h, pn_dim_bind_name); a configuring integer
 * scalar input (a sample rate 'sr') by its own name, and the seeded inputs of
 * runtime/feed.c take that value.
 *
 * The base is validated by shape inference of the whole model and one run on
 * the executor (seeded inputs, 1 thread).  If it fails, the kinds' values are
 * searched (binding.c says in which order and how far) for the smallest that
 * passes.  --dim NAME=V fixes a name and is never searched.
 */
#ifndef PN_BINDING_H
#define PN_BINDING_H

#include <stdint.h>

#include "common/arena.h"
#include "runtime/infer.h"
#include "schemas/ir.h"

enum pn_input_role {
	PN_IR_NONE = 0,      /* nothing to bind */
	PN_IR_IMAGE_NCHW,
	PN_IR_IMAGE_NHWC,
	PN_IR_AUDIO,
	PN_IR_TOKENS,
	PN_IR_MASK,
	PN_IR_STATE,
	PN_IR_CONFIG,        /* an integer scalar that configures the model */
	PN_IR_LENGTHS,       /* a sequence length per batch element (runtime/inputs.h) */
	PN_IR_OTHER,
	PN_N_INPUT_ROLES
};

enum pn_dim_kind {
	PN_DK_BATCH = 0,
	PN_DK_SPATIAL,
	PN_DK_SEQUENCE,
	PN_DK_SAMPLES,
	PN_DK_STATE,
	PN_DK_OTHER,
	PN_N_DIM_KINDS
};

#define PN_RULE_MAX_ALT 16

/* One kind of dim, or one kind of configuring scalar: its base value and
 * the alternatives the search tries when the base fails. */
typedef struct pn_bind_rule {
	const char *name;
	int64_t base;
	int n_alt;
	int64_t alt[PN_RULE_MAX_ALT];
} pn_bind_rule;

/* A configuring scalar input recognised by its name ('|'-separated list of
 * names, compared without case). */
typedef struct pn_scalar_rule {
	const char *names;
	pn_bind_rule rule;
} pn_scalar_rule;

extern const pn_bind_rule pn_dim_rules[PN_N_DIM_KINDS];
extern const pn_scalar_rule pn_scalar_rules[];
extern const int pn_n_scalar_rules;

/* The shape variants' ladder (variants.h): per dim kind, the value of each
 * slot, smallest first; 0 keeps the base's value. */
#define PN_VARIANT_SLOTS 10
extern const int64_t pn_variant_ladder[PN_N_DIM_KINDS][PN_VARIANT_SLOTS];
/* The batch of a slot when other kinds vary with it. */
extern const int64_t pn_variant_paired_batch[PN_VARIANT_SLOTS];

/* The search stops after this many tries, the base included. */
#define PN_BIND_MAX_TRIES 24

/* --- roles (roles.c) --- */

const char *pn_input_role_name(int role);
/* Role of graph input i of g (the top-level graph). */
int pn_input_role(const pn_graph *g, int i);
/* Kind of axis `axis` (unknown in the file) of input i with role `role`. */
int pn_dim_kind(const pn_graph *g, int i, int role, int axis);
/* Index in pn_scalar_rules of a configuring scalar input named `name`, or -1. */
int pn_scalar_rule_of(const char *name);
/* Total stride of the graph: the largest product of Conv/pool strides (first
 * spatial axis) along any path, at most 1024. */
int64_t pn_graph_stride(const pn_graph *g);

/* --- the choice (binding.c) --- */

typedef struct pn_binding {
	pn_dimbind bind;        /* the --dim entries it uses first, then the chosen ones */
	int *kinds;             /* per bind entry: its dim kind, or -1 (a --dim value or a
				 * configuring scalar: shape variants keep it) */
	const char *how;        /* NULL: the model has nothing to bind */
	int n_tries;
	const char **tries;     /* rejected bindings with their first error */
	int n_roles;
	const char **roles;     /* "input=role" */
	const char *warning;    /* set when no tried binding passed */
} pn_binding;

/* The model's own test_data_set_0 inputs (input_K.pb bytes, K in graph
 * input order), when it holds every input of the model (one with fewer is
 * not a binding source: the model binds as it would alone). */
typedef struct pn_bind_testset {
	int n;
	const void *const *bytes;
	const size_t *len;
} pn_bind_testset;

/* Chooses the binding of m (decoded, weights as metadata) with the given
 * --dim values fixed.  Dims and configuring scalars a test set shows are
 * bound as it shows them (the model's own example input), validated by
 * inference alone.  Everything is allocated in a.  -1 only when out of
 * memory; a binding that does not pass is a warning, not an error. */
int pn_binding_choose(const pn_model *m, const pn_dimbind *given, const pn_bind_testset *ts,
		      pn_arena *a, pn_binding *out, char *err);

/* The rest of validating binding b of m as the choice does, given the
 * whole-model inference r under b: every input static, then one run on
 * seeded inputs (seed 1, 1 thread).  0 passes; 1 rejected (err says why);
 * 2 could not be run (an input that cannot be generated, weights too
 * large: err says). */
int pn_binding_run(const pn_model *m, const pn_dimbind *b, const pn_infer_result *r, char *err);

#endif
