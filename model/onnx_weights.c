/*
 * onnx_weights.c - which constant tensors are stored by value.
 *
 * docs/design.md keeps large float weights as statistics (dtype, dims, mean, std,
 * min, max) and every small or computation-steering tensor by value.  The
 * thresholds:
 *
 *   strings                                   always by value
 *   bool, int16/32/64, uint16/32/64           by value up to 4096 elements:
 *                                             shapes, axes, pads, indices,
 *                                             gather tables (Swin's 2401-entry
 *                                             relative position index fits)
 *   float16/32/64, bfloat16, int8, uint8      by value up to 16 elements:
 *                                             scalars such as GELU's 0.5 and
 *                                             sqrt(2), Clip bounds, zero
 *                                             points; anything bigger is a
 *                                             learned weight (8-bit ones are
 *                                             quantized weights), whose values
 *                                             do not change what a subgraph
 *                                             computes, only its numbers
 *
 * So two fine-tunes of one architecture share their subgraphs, while x*0.5
 * and x*2.0 stay different computations.
 */
#include "model/onnx.h"

#define PN_BYVALUE_MAX_INDEX 4096
#define PN_BYVALUE_MAX_WEIGHT 16

int pn_weight_by_value(int dtype, int64_t numel)
{
	switch (dtype) {
	case PN_STRING:
		return 1;
	case PN_BOOL: case PN_INT16: case PN_INT32: case PN_INT64:
	case PN_UINT16: case PN_UINT32: case PN_UINT64:
		return numel <= PN_BYVALUE_MAX_INDEX;
	default:
		return numel <= PN_BYVALUE_MAX_WEIGHT;
	}
}
