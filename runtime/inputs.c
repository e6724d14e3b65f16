/*
 * inputs.c - seeded inputs of a model or a subgraph (declared in
 * runtime/session.h), and the concrete input types a subgraph runs at.
 */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "runtime/session.h"
#include "runtime/rng.h"
#include "schemas/ops.h"

/* --- inputs of a subgraph ----------------------------------------------------- */

enum int_role { INT_DATA, INT_INDEX, INT_COUNT };

/* What an integer input is for, from the op and slot that read it: an index
 * (0 is in range of every non-empty axis), a count or step (1 keeps shapes
 * and loops small and valid), or data. */
static int int_role(const pn_graph *g, int v)
{
	const pn_value *val = &g->values[v];
	for (int c = 0; c < val->n_consumers; c++) {
		const pn_node *n = &g->nodes[val->consumers[c]];
		for (int k = 0; k < n->n_in; k++) {
			if (n->in[k] != v)
				continue;
			switch (n->op) {
			case PN_OP_Gather: case PN_OP_GatherElements: case PN_OP_GatherND:
			case PN_OP_Scatter: case PN_OP_ScatterElements: case PN_OP_ScatterND:
			case PN_OP_Compress: case PN_OP_NegativeLogLikelihoodLoss:
			case PN_OP_SoftmaxCrossEntropyLoss: case PN_OP_MaxUnpool:
			case PN_OP_RoiAlign:
				if (k >= 1)
					return INT_INDEX;
				break;
			case PN_OP_OneHot: case PN_OP_SequenceAt: case PN_OP_SequenceErase:
			case PN_OP_SequenceInsert:
				return k == 0 && n->op == PN_OP_OneHot ? INT_INDEX : k >= 1 ? INT_INDEX : INT_DATA;
			case PN_OP_Slice:
				return k == 4 ? INT_COUNT : INT_INDEX;
			case PN_OP_Tile: case PN_OP_Expand: case PN_OP_ConstantOfShape:
			case PN_OP_Reshape: case PN_OP_Range: case PN_OP_TopK: case PN_OP_Resize:
			case PN_OP_CumSum:   /* its axis: 0 exists in every rank */
				if (k == 1)
					return INT_INDEX;
				break;
			case PN_OP_Upsample: case PN_OP_Loop: case PN_OP_Split: case PN_OP_Pad:
			case PN_OP_Squeeze: case PN_OP_Unsqueeze:
				if (k >= 1 || n->op == PN_OP_ConstantOfShape || n->op == PN_OP_Loop)
					return INT_COUNT;
				break;
			default:
				break;
			}
		}
	}
	return INT_DATA;
}

pn_tensor *pn_input_for(const pn_graph *g, int input, const pn_type *ty, uint64_t seed,
			const pn_range *range, char *err)
{
	int v = g->inputs[input];
	const char *name = g->values[v].name;
	if (ty->kind != PN_KIND_TENSOR)
		return pn_fail(err, "no generator for a %s input: '%s'",
			       ty->kind == PN_KIND_SEQUENCE ? "sequence" : "optional", name), NULL;
	if (ty->dtype == PN_STRING)
		return pn_fail(err, "no generator for a string input: '%s'", name), NULL;
	if (!pn_type_is_static(ty) || !pn_dtype_size(ty->dtype))
		return pn_fail(err, "input '%s' has no static numeric type", name), NULL;
	pn_tensor *t = pn_tensor_new(ty->dtype, ty->rank, ty->dims);
	if (!t)
		return pn_fail(err, "cannot allocate input '%s'", name), NULL;
	pn_rng r;
	pn_rng_seed(&r, seed, name);
	if (pn_dtype_is_float(ty->dtype) && range && range->known) {
		double width = range->hi - range->lo;
		for (int64_t i = 0; i < t->numel; i++)
			pn_tensor_set_f64(t, i, range->lo + width * pn_rng_uniform(&r));
	} else if (pn_dtype_is_float(ty->dtype)) {
		/* positive and away from 0: Log, Sqrt, Div, Pow of what a model
		 * computes stay finite whatever ops the cut starts with */
		for (int64_t i = 0; i < t->numel; i++)
			pn_tensor_set_f64(t, i, 0.1 + pn_rng_uniform(&r));
	} else if (ty->dtype == PN_BOOL) {
		for (int64_t i = 0; i < t->numel; i++)
			pn_tensor_set_f64(t, i, (double)(pn_rng_next(&r) & 1));
	} else if (range && range->n_ints > 0 && range->n_ints == t->numel) {
		/* a shape, an axis or an index computed upstream: as the model had it */
		for (int64_t i = 0; i < t->numel; i++)
			pn_tensor_set_f64(t, i, (double)range->ints[i]);
	} else {
		int role = int_role(g, v);
		for (int64_t i = 0; i < t->numel; i++)
			pn_tensor_set_f64(t, i, role == INT_INDEX ? 0 : role == INT_COUNT ? 1
								: (double)(pn_rng_next(&r) % 4));
	}
	return t;
}

/* Elements of input type t with its unknown dims at `size`. */
static double elems_at(const pn_type *t, int64_t size)
{
	double n = 1;
	for (int d = 0; d < t->rank; d++)
		n *= (double)(t->dims[d] < 0 ? size : t->dims[d]);
	return n;
}

/* A declared input type with what a run showed where it leaves the rank or
 * dims unknown (dims the file states are kept). */
static pn_type with_seen_shape(const pn_type *decl, const pn_range *seen)
{
	pn_type t = *decl;
	if (!seen || seen->rank < 0 || (t.rank >= 0 && t.rank != seen->rank))
		return t;
	for (int d = 0; d < seen->rank; d++)
		if (t.rank < 0 || t.dims[d] < 0) {
			t.dims[d] = seen->dims[d];
			t.dim_names[d] = NULL;
		}
	t.rank = seen->rank;
	return t;
}

int pn_concrete_input_types(const pn_graph *g, const pn_range *seen, int n_seen, pn_type *out,
			    int64_t *size, char *err)
{
	int64_t s = PN_ASSUMED_DIM;
	int assumed = 0;
	for (int i = 0; i < g->n_inputs; i++) {
		const pn_value *v = &g->values[g->inputs[i]];
		out[i] = v->type;
		if (v->type.kind != PN_KIND_TENSOR)
			continue;
		out[i] = with_seen_shape(&v->type, n_seen == g->n_inputs ? &seen[i] : NULL);
		if (out[i].rank < 0 || out[i].dtype == PN_UNDEFINED)
			return pn_fail(err, "data-dependent shape: input %s has an unknown %s", v->name,
				       out[i].rank < 0 ? "rank" : "element type");
		int unknown = 0;
		for (int d = 0; d < out[i].rank; d++)
			unknown += out[i].dims[d] < 0;
		assumed += unknown;
		while (unknown && s > 1 && elems_at(&out[i], s) > PN_ASSUMED_ELEMS)
			s /= 2;
	}
	for (int i = 0; i < g->n_inputs; i++)
		for (int d = 0; out[i].kind == PN_KIND_TENSOR && d < out[i].rank; d++)
			if (out[i].dims[d] < 0) {
				out[i].dims[d] = s;
				out[i].dim_names[d] = NULL;
			}
	*size = s;
	return assumed;
}
