/*
 * quant.h - what the session calls in runtime/ops/quant.c besides the op
 * kernels: the quantized residual join (runtime/fuse.h's qadd chain).
 */
#ifndef PN_OPS_QUANT_H
#define PN_OPS_QUANT_H

#include <stdint.h>

#include "runtime/kernel.h"

/*
 * QuantizeLinear([Relu](DequantizeLinear(a) + DequantizeLinear(b))) with
 * per-tensor scales and zero points, a and b of one shape and one 8-bit
 * type.  k->out[0] receives the QuantizeLinear's output.
 */
typedef struct pn_qadd {
	const pn_tensor *a, *b;      /* uint8 or int8, the same shape and type */
	float a_scale, b_scale;
	int32_t a_zp, b_zp;
	int relu;
	float y_scale;
	int y_dtype;                 /* PN_UINT8 or PN_INT8 */
	int32_t y_zp;
} pn_qadd;

/* 1 when the operands are the ones the fused loop takes. */
int pn_qadd_fits(const pn_qadd *q);
int pn_qadd_run(pn_kctx *k, const pn_qadd *q);

#endif
