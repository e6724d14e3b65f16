/*
 * rank.c - excess time and the kinds of cut the report ranks apart (see
 * rank.h for the rule).
 */
#include "report/rank.h"

#include <math.h>

#include "runtime/cost.h"
#include "schemas/ops.h"
#include "schemas/tensor.h"

const char *pn_cut_kind_name(int kind)
{
	static const char *const names[PN_CUT_KINDS] = {"work", "control", "shape-only",
							 "little work"};
	return kind >= 0 && kind < PN_CUT_KINDS ? names[kind] : "?";
}

/* What a shape, an axis list or an index into a shape holds: integers (or
 * the bools of comparing them), known to be at most PN_MAX_RANK of them. */
static int metadata_value(const pn_graph *g, int32_t v)
{
	if (v < 0)
		return 1;   /* an absent optional input */
	const pn_type *t = &g->values[v].type;
	return t->kind == PN_KIND_TENSOR && (pn_dtype_is_int(t->dtype) || t->dtype == PN_BOOL) &&
	       pn_type_is_static(t) && pn_type_numel(t) <= PN_MAX_RANK;
}

static int metadata_node(const pn_graph *g, const pn_node *n)
{
	if (n->op >= 0 && (pn_ops[n->op].flags & F_SHAPE_ONLY))
		return 1;
	for (int i = 0; i < n->n_in; i++)
		if (!metadata_value(g, n->in[i]))
			return 0;
	for (int i = 0; i < n->n_out; i++)
		if (!metadata_value(g, n->out[i]))
			return 0;
	return 1;
}

int pn_little_work(double flops, double bytes_fused)
{
	/* no cost at all is a cost never computed (every cut writes its outputs) */
	double work = flops + bytes_fused;
	return work > 0 && work < PN_MIN_WORK;
}

int pn_cut_kind(const pn_graph *g, double flops, double bytes_fused, int cost_known)
{
	int shape_only = g->n_nodes > 0;
	for (int k = 0; k < g->n_nodes; k++) {
		const pn_node *n = &g->nodes[k];
		if (n->op >= 0 && pn_ops[n->op].kind == CONTROL)
			return PN_CUT_CONTROL;
		shape_only = shape_only && metadata_node(g, n);
	}
	if (shape_only)
		return PN_CUT_SHAPE_ONLY;
	return cost_known && pn_little_work(flops, bytes_fused) ? PN_CUT_LITTLE : PN_CUT_WORK;
}

double pn_excess_us(double time_us, double bound_us, int64_t occurrences)
{
	if (!(time_us > 0) || !(bound_us > 0) || !isfinite(time_us) || !isfinite(bound_us) ||
	    time_us <= bound_us)
		return 0;
	return (time_us - bound_us) * (double)occurrences;
}
