/*
 * dtype.h - float16 and bfloat16 variants of a float32 subgraph (the rule
 * is documented in export.h, "Dtype variants").
 */
#ifndef PN_DTYPE_H
#define PN_DTYPE_H

#include "model/onnx.h"
#include "schemas/ir.h"

/* Rewrites mp (the model g was loaded from: same value names) to compute in
 * dtype (PN_FLOAT16 or PN_BFLOAT16): every float32 value whose type
 * variables allow dtype at the model's opset becomes dtype, initializers
 * and Constant/ConstantOfShape values are rounded to nearest even, Cast
 * targets of float32 follow.  New bytes are allocated in a.  Returns 0 when
 * done, 1 when no such variant is made (why says which rule), -1 on error
 * (why set). */
int pn_dtype_variant(const pn_graph *g, Onnx__ModelProto *mp, int dtype, pn_arena *a, char *why);

/* "f16" / "bf16": the suffix of a dtype variant's folder name. */
const char *pn_dtype_suffix(int dtype);

#endif
