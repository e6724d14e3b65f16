/*
 * cost.h - what an op costs: floating-point work and memory traffic.
 *
 * Every op in schemas/ops.def may have int pn_cost_<Op>(pn_costctx *c),
 * which reads the node and its input/output types (static shapes) and fills
 * c->flops, c->bytes_read and c->bytes_written.  An op without one costs
 * one operation per output element and reads its inputs and writes its
 * outputs once (pn_cost_default), which is right for simple elementwise
 * ops (layout ops have functions that count 0 FLOPs).  pn_node_cost fills the default before calling the op's
 * function, which changes only what differs and returns 0, or returns
 * non-zero (a shape it needs is unknown) to keep the default.  Unknown
 * shapes, sequences and optionals cost 0 bytes; nothing here ever fails.
 * The FLOP conventions of each family are in runtime/ops/cost_*.c.
 *
 * A subgraph's unfused traffic counts every node's inputs and outputs (every
 * intermediate goes through memory); its fused traffic counts only what
 * crosses its boundary: inputs, constants and weights, outputs.  With the
 * machine's peak FLOP/s and bandwidth (passnet calibrate), the roofline
 * bound is max(flops / peak, bytes / bandwidth).
 */
#ifndef PN_COST_H
#define PN_COST_H

#include "schemas/ir.h"
#include "runtime/op_table.h"

struct pn_costctx {
	const pn_node *node;
	int opset;
	int n_in, n_out;
	const pn_type *const *in;    /* NULL for an absent input */
	const pn_type *const *out;
	const pn_tensor *const *in_value;   /* known contents (small constants), or NULL */
	double flops;                /* to fill */
	double bytes_read, bytes_written;
};

/* Bytes of a static tensor type (0 if not static). */
double pn_type_bytes(const pn_type *t);
double pn_type_numel(const pn_type *t);
/* Every input read once, every output written once, one op per output
 * element. */
int pn_cost_default(pn_costctx *c);
/* Cost of one node (its op's function or the default). */
int pn_node_cost(const pn_node *n, const pn_type *const *in, const pn_type *const *out,
		 const pn_tensor *const *in_value, double *flops, double *bytes_read,
		 double *bytes_written);

typedef struct pn_graph_cost {
	double flops;
	double bytes_unfused;   /* sum over nodes of their reads and writes */
	double bytes_fused;     /* graph inputs, constants, outputs, once each */
	int nodes;
} pn_graph_cost;

/* Cost of a whole graph whose value types are all static (a subgraph).
 * types[v] is the type of value v (g->n_values entries), or NULL to use
 * g->values[v].type.  Known contents come from g->values[v].data; nested
 * bodies (If/Loop/Scan) are costed from their own value types.  Fails only
 * when out of memory. */
int pn_graph_cost_of(const pn_graph *g, const pn_type *types, pn_graph_cost *out, char *err);
/* Adds to out->flops and out->bytes_unfused the cost of nodes[0..n_nodes)
 * of g (nodes NULL: every node), value v typed types[v] and holding
 * values[v] (values NULL: g->values[v].data).  A cut of a model is costed
 * with the model's inferred types. */
int pn_nodes_cost(const pn_graph *g, const pn_type *types, const pn_tensor *const *values,
		  const int32_t *nodes, int n_nodes, pn_graph_cost *out, char *err);

#endif
