/*
 * infer.h - shape and type inference, the interface op files implement.
 *
 * Every op in schemas/ops.def names an inference function pn_infer_<name>.
 * It reads what is known of the node's inputs (pn_tinfo: type, and the
 * contents when they are known) and fills the type of each output.  It never
 * computes output contents: the engine does that by running the op's kernel
 * when every input is known and the result is small (constant folding), so
 * Shape -> Gather -> Concat -> Reshape chains get concrete values with no
 * extra code per op.
 *
 * The same functions run at execution time with every input known, which is
 * how the executor learns output shapes before calling a kernel.
 *
 * Conventions: leave rank -1 or a dim -1 when it cannot be known (e.g. it
 * depends on float data); return -1 with a message only when the node is
 * invalid (incompatible shapes, bad attributes), never for "unknown".
 */
#ifndef PN_INFER_H
#define PN_INFER_H

#include "schemas/ir.h"
#include "runtime/op_table.h"

typedef struct pn_tinfo {
	pn_type type;
	const pn_tensor *value;   /* known contents, or NULL */
} pn_tinfo;

struct pn_infer_env;

struct pn_ictx {
	const pn_node *node;
	int opset;
	int n_in, n_out;
	const pn_tinfo *const *in;   /* NULL for an absent optional input */
	pn_tinfo *out;               /* fill out[i].type */
	struct pn_infer_env *env;    /* for nested graphs (If/Loop/Scan) */
	char *err;
};

/* --- helpers for inference functions (runtime/infer_util.c) --- */

int  pn_ifail(pn_ictx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Input i, or NULL if absent or beyond n_in. */
const pn_tinfo *pn_iin(const pn_ictx *c, int i);
/* Sets output i to a tensor type with the given dtype and shape (rank -1 for
 * unknown). */
void pn_iset(pn_ictx *c, int i, int dtype, int rank, const int64_t *dims);
/* Output i gets input j's type (dtype changed when dtype != 0). */
void pn_iset_like(pn_ictx *c, int i, int j, int dtype);
/* Reads the known int values of a 1-D (or scalar) integer input into out;
 * returns the count, or -1 if the input is absent or its contents unknown. */
int  pn_iints(const pn_ictx *c, int i, int64_t *out, int max);
/* Numpy broadcasting of shapes a and b into out (unknown dims stay -1 unless
 * the other side decides them).  -1 with a message if incompatible. */
int  pn_bcast_shape(pn_ictx *c, const pn_type *a, const pn_type *b, pn_type *out);
/* Normalises a possibly negative axis for rank r; -1 if out of range. */
int  pn_axis(int64_t axis, int rank);

/* --- the engine (runtime/infer.c) --- */


typedef struct pn_infer_result {
	int n;                 /* one entry per value of the graph */
	pn_tinfo *v;
	pn_tensor **folded;    /* contents computed by folding (owned) */
	int n_folded;
	int unknown;           /* values whose type is not fully known */
} pn_infer_result;

/* Infers every value of g (inputs typed from the graph with symbolic dims
 * bound, initializers and constants from their contents).  With input_types
 * given (n = g->n_inputs), those replace the declared input types. */
/* True when n lacks input 0 (has_input0: whether it is given, as a value
 * number or a tensor, by the caller) and its op
 * requires it: every op but Loop, Scan, Optional and OptionalHasElement
 * (optional there) and the ops that take no inputs (Constant, RandomNormal,
 * RandomUniform, SequenceEmpty).  Kernels read input 0 unchecked, so
 * inference (folding) and the executor refuse such a node instead. */
int  pn_node_lacks_input0(const pn_node *n, int has_input0);
int  pn_infer_graph(const pn_graph *g, const pn_dimbind *bind, const pn_type *input_types,
		    pn_infer_result *res, char *err);
void pn_infer_result_free(pn_infer_result *res);

/* The name by which axis `axis` of graph input `input` (typed t, the dim
 * unknown) is bound: its symbolic name from the file, or, for a dim the file
 * leaves unnamed, "INPUT:AXIS" written into buf (e.g. "input:1"), so that
 * --dim and a model's binding can reach it too. */
const char *pn_dim_bind_name(const char *input, const pn_type *t, int axis, char *buf, int n);

/* For inference functions of If/Loop/Scan: infers nested graph g with the
 * given input types (its captured values typed from the enclosing graph)
 * and returns the types of its outputs.  Only available while a whole graph
 * is being inferred (c->env set); at execution time it fails and the kernel
 * allocates its outputs itself. */
int pn_infer_subgraph(pn_ictx *c, const pn_graph *g, const pn_type *input_types,
		      pn_type *output_types, char *err);

/* The memory a run of g at the types of r holds at its fullest, in bytes:
 * its initializers (kept or regenerated) and, walking g->topo, the most its
 * node outputs hold at once, each freed after its last reader (as the
 * session's pool frees it).  A value whose size is not known before the run
 * (a detector's regions after its NMS) counts nothing, and nested graphs
 * count their owner's outputs only: an estimate of what is known, for
 * scheduling runs (extract/run_gate.h), not a bound. */
size_t pn_infer_peak_bytes(const pn_graph *g, const pn_infer_result *r);
/* The bytes of g's initializers, the part of that estimate a weight check
 * holds more than once (extract/ingest.c). */
size_t pn_infer_weight_bytes(const pn_graph *g);

/* Largest output (elements) constant folding will compute. */
#define PN_FOLD_MAX_NUMEL 65536

#endif
