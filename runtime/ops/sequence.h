/*
 * sequence.h - helpers shared by the container ops (sequence.c) and the
 * control-flow ops (control.c): moving heap tensors into kernel outputs and
 * copying blocks of a tensor along one axis.
 */
#ifndef PN_OPS_SEQUENCE_H
#define PN_OPS_SEQUENCE_H

#include <stdint.h>

#include "runtime/kernel.h"

/* Makes output i hold heap tensor t (any kind) and frees the struct t; t's
 * data and items move to the output.  t == NULL reports out of memory. */
int pn_out_take(pn_kctx *k, int i, pn_tensor *t);

/* Copies len slices along an axis: the tensors are viewed as
 * [outer, axis_len, inner]; slices src_start.. of src go to dst_start.. of
 * dst.  Strings are duplicated (dst entries must be empty). */
void pn_axis_copy(void *dst, int64_t dst_axis, int64_t dst_start, const void *src,
		  int64_t src_axis, int64_t src_start, int64_t len, int64_t outer, int64_t inner,
		  int dtype);

/* Product of dims [lo, hi). */
int64_t pn_dims_prod(const int64_t *dims, int lo, int hi);

#endif
