/*
 * cost_control.c - costs of If, Loop and Scan: their bodies' costs times
 * the trip count.
 *
 * A body is costed from its own value types (pn_body_cost); whatever is not
 * static there costs 0.  The body's memory traffic (every node of it,
 * unfused) is added on the node's read side, on top of the node's own
 * inputs and outputs; only the sum matters to the graph figures.
 * SequenceMap iterates over a sequence, whose length is not in its type:
 * it keeps the default, like every sequence op.
 */
#include "runtime/ops/cost_impl.h"

static const pn_graph *graph_attr(const pn_costctx *c, const char *name)
{
	const pn_attr *a = pn_attr_find(c->node, name);
	return a && a->type == PN_ATTR_GRAPH ? a->g : NULL;
}

static void add_trips(pn_costctx *c, const pn_graph_cost *body, double trips)
{
	c->flops = trips * body->flops;
	c->bytes_read += trips * body->bytes_unfused;
}

/* If: the more expensive branch (the condition is data). */
int pn_cost_If(pn_costctx *c)
{
	pn_graph_cost a, b;
	pn_body_cost(graph_attr(c, "then_branch"), &a);
	pn_body_cost(graph_attr(c, "else_branch"), &b);
	add_trips(c, a.flops >= b.flops ? &a : &b, 1);
	return 0;
}

/* Loop: M trips when the trip count is a known constant; otherwise (a
 * condition computed from data, or M unknown) one trip, a lower bound. */
int pn_cost_Loop(pn_costctx *c)
{
	const pn_tensor *m = pn_cval(c, 0);
	double trips = 1;
	if (m && m->numel == 1 && pn_dtype_is_int(m->dtype)) {
		int64_t v = pn_tensor_get_i64(m, 0);
		if (v >= 0 && v <= ((int64_t)1 << 31))
			trips = (double)v;
	}
	pn_graph_cost body;
	pn_body_cost(graph_attr(c, "body"), &body);
	add_trips(c, &body, trips);
	return 0;
}

/* Scan: one trip per slice of the first scan input along its scan axis
 * (opset 9+: the last num_scan_inputs inputs, axes from scan_input_axes).
 * Opset 8 scans [batch, sequence, ...] inputs after its sequence_lens
 * input, looping over both. */
int pn_cost_Scan(pn_costctx *c)
{
	int64_t n_scan = pn_attr_int(c->node, "num_scan_inputs", 1);
	double trips;
	if (c->opset < 9) {
		const pn_type *x = pn_cin(c, (int)(c->n_in - n_scan));
		if (!x || x->rank < 2)
			return 1;
		trips = (double)x->dims[0] * (double)x->dims[1];
	} else {
		int64_t axes[1] = {0};
		pn_attr_ints(c->node, "scan_input_axes", axes, 1);
		int64_t n = pn_cdim(pn_cin(c, (int)(c->n_in - n_scan)), axes[0]);
		if (n < 0)
			return 1;
		trips = (double)n;
	}
	pn_graph_cost body;
	pn_body_cost(graph_attr(c, "body"), &body);
	add_trips(c, &body, trips);
	return 0;
}
