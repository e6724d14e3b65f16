/*
 * ir.h - passnet's in-memory graph: what every stage works on.
 *
 * A model is decoded once (model/onnx_decode.c) into this form.  Values and
 * nodes are numbered densely and refer to each other by index, so the graph
 * can be walked, copied and hashed without chasing names.  Everything lives
 * in the model's arena and is freed with it.
 *
 * Nested graphs (If/Loop/Scan bodies) are full pn_graphs whose values may be
 * captured from an enclosing scope (role PN_ROLE_OUTER); the node owning the
 * body lists those captures as "implicit inputs" so that ordering and value
 * lifetimes in the outer graph see them.
 */
#ifndef PN_IR_H
#define PN_IR_H

#include <stdint.h>

#include "common/arena.h"
#include "schemas/tensor.h"

/* What is known of a value's type.  Unknown parts are -1 (rank, dims) or
 * PN_UNDEFINED (dtype). */
typedef struct pn_type {
	uint8_t kind;        /* enum pn_value_kind */
	uint8_t elem_kind;   /* optional: kind of the held value */
	int32_t dtype;       /* element type; for sequences, of the items */
	int32_t rank;        /* -1: unknown */
	int64_t dims[PN_MAX_RANK];
	const char *dim_names[PN_MAX_RANK]; /* symbolic name from the file, or NULL */
} pn_type;

/* Integer inputs up to this many elements (shapes, axes, indices computed by
 * Shape -> Gather chains) are recorded by value. */
#define PN_SEEN_INTS 16

/* What the models holding a subgraph showed of one of its inputs when they
 * ran (see exec/ranges.h): the range of its values (known = 0 when no
 * finite float was seen), its shape (rank -1 when none was seen) and, for a
 * small integer tensor, its values (n_ints of them; 0: none). */
typedef struct pn_range {
	double lo, hi;
	int known;
	int real;            /* lo/hi are a run's with the model's real weights */
	int32_t rank;
	int64_t dims[PN_MAX_RANK];
	int32_t n_ints;
	int64_t ints[PN_SEEN_INTS];
} pn_range;

/* Statistics of a weight kept as metadata instead of bytes. */
typedef struct pn_wmeta {
	double mean, std, min, max;
	uint8_t has_stats;   /* 0: bytes were absent (missing external file) */
	int32_t n_channels;  /* per dim-0 channel statistics (model/onnx_weights.c) */
	float *ch_mean, *ch_std;   /* ch_std NULL: every channel's std is 0 */
	double scale;        /* the regenerated tensor is multiplied by it; 0 means 1 */
} pn_wmeta;

enum pn_value_role {
	PN_ROLE_NODE = 0,    /* produced by a node */
	PN_ROLE_INPUT,       /* graph input */
	PN_ROLE_INIT,        /* initializer (constant weight) */
	PN_ROLE_OUTER,       /* captured from an enclosing graph */
};

typedef struct pn_value {
	const char *name;
	pn_type type;
	uint8_t role;
	uint8_t is_output;   /* listed in graph outputs */
	int32_t producer;    /* node index, -1 unless role is NODE */
	int32_t producer_slot;
	int32_t n_consumers; /* one entry per (node, input slot) use */
	int32_t *consumers;
	pn_tensor *data;     /* known contents: initializer, Constant, folded */
	pn_wmeta *meta;      /* weights kept as metadata (data == NULL) */
	int32_t outer;       /* PN_ROLE_OUTER: index in the parent graph */
} pn_value;

/* ONNX AttributeProto.AttributeType numbers. */
enum pn_attr_type {
	PN_ATTR_UNDEFINED = 0,
	PN_ATTR_FLOAT = 1,
	PN_ATTR_INT = 2,
	PN_ATTR_STRING = 3,
	PN_ATTR_TENSOR = 4,
	PN_ATTR_GRAPH = 5,
	PN_ATTR_FLOATS = 6,
	PN_ATTR_INTS = 7,
	PN_ATTR_STRINGS = 8,
	PN_ATTR_TENSORS = 9,
	PN_ATTR_GRAPHS = 10,
	PN_ATTR_SPARSE_TENSOR = 11,
	PN_ATTR_SPARSE_TENSORS = 12,
	PN_ATTR_TYPE_PROTO = 13,
	PN_ATTR_TYPE_PROTOS = 14,
};

struct pn_graph;

typedef struct pn_attr {
	const char *name;
	int32_t type;        /* enum pn_attr_type */
	float f;
	int64_t i;
	const char *s;       /* NUL-terminated copy; s_len excludes the NUL */
	int64_t s_len;
	int32_t n;           /* element count of the list forms */
	float *floats;
	int64_t *ints;
	const char **strings;
	pn_tensor *t;        /* NULL when its bytes are absent (stripped weights) */
	pn_tensor **tensors;
	struct pn_graph *g;
	struct pn_graph **graphs;
	pn_type *tp;         /* TYPE_PROTO */
} pn_attr;

typedef struct pn_node {
	const char *name;
	const char *op_type;
	const char *domain;  /* "" for ai.onnx */
	int32_t op;          /* index in pn_ops[], -1 if passnet does not know it */
	int32_t opset;       /* version of its domain imported by the model */
	int32_t n_in, n_out, n_attr;
	int32_t *in, *out;   /* value indices; -1 marks an absent optional slot */
	pn_attr *attrs;
	int32_t n_implicit;  /* outer values read by nested graphs */
	int32_t *implicit;
} pn_node;

typedef struct pn_graph {
	const char *name;
	struct pn_graph *parent;
	int32_t n_values, n_nodes;
	pn_value *values;
	pn_node *nodes;
	int32_t n_inputs, n_outputs, n_inits, n_outer;
	int32_t *inputs;     /* graph inputs that are not initializers */
	int32_t *outputs;
	int32_t *inits;
	int32_t *outer;      /* values with role PN_ROLE_OUTER */
	int32_t *topo;       /* all nodes in a topological order */
	/* Per value, the stream a seeded draw of it (a graph input, a weight
	 * kept as metadata) is seeded by; NULL, or a NULL entry: the value's
	 * name.  Not owned: extract's weight check sets it for the length of its
	 * runs, so that copies of one structure draw alike whatever their
	 * files call their values (extract/check_form.h). */
	const char *const *draw_name;
} pn_graph;

/* The stream the seeded draws of value v of g use. */
static inline const char *pn_draw_stream(const pn_graph *g, int v)
{
	return g->draw_name && g->draw_name[v] ? g->draw_name[v] : g->values[v].name;
}

typedef struct pn_opset {
	const char *domain;
	int64_t version;
} pn_opset;

/* One test_data_set_N folder found beside a model. */
typedef struct pn_testset {
	int32_t n_inputs, n_outputs;
	pn_tensor **inputs;    /* in file order input_0, input_1, ... */
	pn_tensor **outputs;
} pn_testset;

/* Symbolic dims bound to values (--dim NAME=V); unbound names default to 1. */
typedef struct pn_dimbind {
	int n;
	const char **names;
	int64_t *values;
} pn_dimbind;

typedef struct pn_model {
	pn_arena arena;
	pn_dimbind bind;     /* dims bound when the model was stored */
	int64_t ir_version;
	int32_t n_opsets;
	pn_opset *opsets;
	const char *producer;
	pn_graph *graph;
	int32_t n_warnings;
	const char **warnings;
	int32_t n_testsets;
	pn_testset *testsets;
	int32_t n_external_read;   /* tensors whose bytes came from files beside the model
				    * (pn_onnx_resolve_external) */
} pn_model;

/* Attribute lookup on a node; defaults are returned when absent. */
const pn_attr *pn_attr_find(const pn_node *n, const char *name);
int64_t        pn_attr_int(const pn_node *n, const char *name, int64_t dflt);
float          pn_attr_float(const pn_node *n, const char *name, float dflt);
const char    *pn_attr_str(const pn_node *n, const char *name, const char *dflt);
/* Copies up to max ints into out; returns the count, or -1 if absent. */
int            pn_attr_ints(const pn_node *n, const char *name, int64_t *out, int max);

/* Finds a value by name in this graph (not its parents); -1 if absent. */
int pn_graph_find_value(const pn_graph *g, const char *name);
/* One use of a value: node n reads it at input slot k.  Returns non-zero
 * to end the walk with that value. */
typedef int (*pn_use_fn)(const pn_graph *g, const pn_node *n, int k, void *ud);
/* Calls f on each use of value v (consumers in order, then slots), and,
 * right after a use by an op that through(op) says passes its input 0 on
 * to its output 0 (Cast, Reshape, ...; through NULL: none does), on the
 * uses of that output, up to max_depth such steps.  What a value is for
 * (an embedding's indices, a norm's scale) is read so.  Returns the first
 * non-zero f gave, or 0. */
int pn_each_use(const pn_graph *g, int v, int max_depth, int (*through)(int op), pn_use_fn f,
		void *ud);
/* Version of a domain imported by the model, or 0. */
int64_t pn_model_opset(const pn_model *m, const char *domain);

/* Topological sort: fills g->topo preferring file order among ready nodes.
 * Fails with a message naming a node on the cycle. */
int pn_graph_toposort(pn_graph *g, pn_arena *a, char *err);
/* Fills producer/consumer links and implicit inputs from node in/out lists. */
int pn_graph_link(pn_graph *g, pn_arena *a, char *err);

/* Describes a type as "float32[N,3,224,224]" ("?" for unknown dims). */
char *pn_type_desc(const pn_type *t, char *buf, int n);
int   pn_type_is_static(const pn_type *t);  /* rank and every dim known */

/* An empty model with its arena ready; NULL when out of memory. */
pn_model *pn_model_new(void);
void pn_model_free(pn_model *m);
void pn_model_warn(pn_model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
