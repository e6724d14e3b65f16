/*
 * session.h - the reference executor: runs a graph on concrete inputs.
 *
 * A session binds a graph to executor options and caches what does not
 * change between runs: weights regenerated from metadata, nested-graph
 * sessions, and the buffer pool.  Each run walks the nodes in topological
 * order; for every node it infers output shapes from the real inputs, takes
 * output buffers from the pool and calls the kernel.  A buffer goes back to
 * the pool after its last reader, so after the first run a session runs
 * without calling malloc (lifetime-based reuse).
 */
#ifndef PN_SESSION_H
#define PN_SESSION_H

#include <stdint.h>

#include "schemas/ir.h"

typedef struct pn_exec_opts {
	uint64_t seed;     /* weights regenerated from metadata, random ops */
	int threads;       /* 0 = leave OpenMP's default */
	/* Called with every value a node of the top-level graph produces, right
	 * after the node ran (for shape checks and debugging). */
	void (*observe)(void *ud, int value, const pn_tensor *t);
	/* The same for every node of every graph, nested ones included (a Loop
	 * body's once per iteration), with the graph it belongs to. */
	void (*observe_all)(void *ud, const pn_graph *g, int value, const pn_tensor *t);
	void *observe_ud;
} pn_exec_opts;

typedef struct pn_session pn_session;

int  pn_session_new(const pn_graph *g, const pn_exec_opts *o, pn_session **out, char *err);
void pn_session_free(pn_session *s);
/* Seconds spent regenerating weights in this session's runs so far. */
double pn_session_weight_seconds(const pn_session *s);
/* Changes the thread count of the next runs (weights and buffers stay). */
void pn_session_set_threads(pn_session *s, int threads);
/* Runs the graph.  inputs[i] feeds g->inputs[i] (NULL or n_inputs short:
 * absent).  outputs[] (g->n_outputs entries) receive heap tensors owned by
 * the caller.  Errors name the failing node. */
int  pn_session_run(pn_session *s, pn_tensor *const *inputs, int n_inputs, pn_tensor **outputs,
		    char *err);

/* Runs g once in a session of its own on inputs[0..n_inputs) and frees the
 * outputs: for callers that want only whether it runs, or what o->observe
 * sees (the binding search, the value-range run). */
int  pn_run_once(const pn_graph *g, const pn_exec_opts *o, pn_tensor *const *inputs, int n_inputs,
		 char *err);

/* Runs a single node on the given inputs (outputs are heap tensors); used by
 * constant folding.  seed feeds random ops. */
int pn_exec_node(const pn_node *n, pn_tensor *const *inputs, int n_inputs, pn_tensor **outputs,
		 uint64_t seed, char *err);

/* A tensor for a weight kept as metadata, regenerated with a seeded
 * generator from its recorded statistics (see runtime/weights.c). */
pn_tensor *pn_weight_regen(const pn_graph *g, int value, uint64_t seed, char *err);
/* Seeded value for graph input `input` of g (a model's or a subgraph's), typed
 * ty: floats uniform in the input's recorded range when `range` knows one
 * (the values it took when its models ran, exec/ranges.h), else in
 * [0.1, 1.1) so that what follows stays finite; a small integer tensor the
 * range recorded by value (a shape computed upstream) as it was; other
 * integers by what they mean (token ids, rates, masks: runtime/inputs.c),
 * else by what reads them (indices 0, counts and steps 1, data in [0, 4));
 * bools alternating by generator.  range may be NULL. */
pn_tensor *pn_input_for(const pn_graph *g, int input, const pn_type *ty, uint64_t seed,
			const pn_range *range, char *err);

/* A subgraph cut below a data-dependent op (NonZero, NonMaxSuppression,
 * TopK with a computed k) has input dims that no file states.  It runs at
 * the shape its model's run showed (pn_range.rank/dims, exec/ranges.h), all
 * inputs from the same run so that they agree.  Where no run showed one,
 * every unknown dim takes one assumed size (one for all, so that dims which
 * must agree do): PN_ASSUMED_DIM, the 100 detections per image that
 * detection heads commonly keep, halved until no input with an assumed dim
 * holds more than PN_ASSUMED_ELEMS elements (an RoI head's [?,256,?,?]
 * would otherwise be a 1 TFLOP convolution). */
#define PN_ASSUMED_DIM   100
#define PN_ASSUMED_ELEMS (1 << 20)

/* The input types of g, into out[g->n_inputs], with unknown dims (and
 * ranks) taken from seen[0..n_seen) when it matches (n_seen may be 0), the
 * rest set to the assumed size.  Returns how many dims were assumed and
 * sets *size to the size used, or returns -1 (err set) when a rank or an
 * element type is still unknown. */
int pn_concrete_input_types(const pn_graph *g, const pn_range *seen, int n_seen, pn_type *out,
			    int64_t *size, char *err);


#endif
