/*
 * cost_layout.c - costs of layout, indexing and shape ops: data movement,
 * no arithmetic.
 *
 * They count 0 FLOPs.  Their bytes are counted like any node's (input read,
 * output written), views included: passnet's executor materialises the
 * output of Reshape, Squeeze, Unsqueeze, Flatten and Identity, so an
 * unfused run really moves those bytes, and the unfused figure must say so.
 * In a fused kernel they are free views, which the fused figure already
 * reflects since it counts only what crosses the subgraph's boundary.
 */
#include <string.h>

#include "runtime/ops/cost_impl.h"

#define NO_FLOPS(op)                                                                \
	int pn_cost_##op(pn_costctx *c)                                             \
	{                                                                           \
		c->flops = 0;                                                       \
		return 0;                                                           \
	}

NO_FLOPS(Identity)
NO_FLOPS(Reshape)
NO_FLOPS(Flatten)
NO_FLOPS(Squeeze)
NO_FLOPS(Unsqueeze)
NO_FLOPS(Transpose)
NO_FLOPS(Concat)
NO_FLOPS(Split)
NO_FLOPS(Expand)
NO_FLOPS(Tile)
NO_FLOPS(Pad)
NO_FLOPS(CenterCropPad)
NO_FLOPS(DepthToSpace)
NO_FLOPS(SpaceToDepth)
NO_FLOPS(ReverseSequence)
NO_FLOPS(Trilu)
NO_FLOPS(OneHot)
NO_FLOPS(Compress)
NO_FLOPS(MaxUnpool)
NO_FLOPS(Constant)
NO_FLOPS(ConstantOfShape)
NO_FLOPS(Range)
NO_FLOPS(EyeLike)

/* Ops that read only part of their data input (Slice, Gather*) touch at
 * most as many data elements as they output, not the whole input: an
 * embedding lookup reads a few rows of a large table.  Their index inputs
 * are read whole.  Shape and Size read no data at all, only the type. */
double pn_cost_slot_read(const pn_node *n, int slot, const pn_type *in, const pn_type *out0)
{
	double full = pn_type_bytes(in);
	switch (n->op) {
	case PN_OP_Shape:
	case PN_OP_Size:
		return 0;
	case PN_OP_Slice:
	case PN_OP_Gather:
	case PN_OP_GatherElements:
	case PN_OP_GatherND:
		if (slot == 0 && in && out0 && pn_type_is_static(out0)) {
			double touched = pn_type_numel(out0) * (double)pn_dtype_size(in->dtype);
			return touched < full ? touched : full;
		}
		return full;
	default:
		return full;
	}
}

static int partial_read(pn_costctx *c)
{
	c->bytes_read = 0;
	for (int i = 0; i < c->n_in; i++)
		c->bytes_read += pn_cost_slot_read(c->node, i, pn_cin(c, i), pn_cout(c, 0));
	c->flops = 0;
	return 0;
}

int pn_cost_Slice(pn_costctx *c)
{
	return partial_read(c);
}

int pn_cost_Gather(pn_costctx *c)
{
	return partial_read(c);
}

int pn_cost_GatherElements(pn_costctx *c)
{
	return partial_read(c);
}

int pn_cost_GatherND(pn_costctx *c)
{
	return partial_read(c);
}

/* Scatters copy the data and write the updates; with a reduction (add,
 * mul, max, min) each update is also one operation. */
static int scatter(pn_costctx *c)
{
	const char *red = pn_attr_str(c->node, "reduction", "none");
	c->flops = red && strcmp(red, "none") ? pn_cin_numel(c, 2) : 0;
	return 0;
}

int pn_cost_Scatter(pn_costctx *c)
{
	return scatter(c);
}

int pn_cost_ScatterElements(pn_costctx *c)
{
	return scatter(c);
}

int pn_cost_ScatterND(pn_costctx *c)
{
	return scatter(c);
}

int pn_cost_Shape(pn_costctx *c)
{
	return partial_read(c);
}

int pn_cost_Size(pn_costctx *c)
{
	return partial_read(c);
}

/* NonZero compares every input element with zero. */
int pn_cost_NonZero(pn_costctx *c)
{
	return pn_cost_per_input(c, 1);
}

/* Col2Im adds every column element into the image. */
int pn_cost_Col2Im(pn_costctx *c)
{
	return pn_cost_per_input(c, 1);
}
