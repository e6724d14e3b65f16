/*
 * layout.h - helpers shared by the data-movement kernels (layout.c, pad.c,
 * index.c, generate.c): strided box copies, reading small int tensors,
 * and the string-ownership fix-up that lets one byte-moving kernel serve
 * every dtype.
 *
 * A "box" is an n-d block of elements with independent element strides on
 * the destination and the source side (strides may be 0 for broadcasting or
 * negative for reversed reads).  Transpose, Slice, Expand, Tile, Concat,
 * Split, DepthToSpace, SpaceToDepth and Pad are all one or a few box copies.
 */
#ifndef PN_OPS_LAYOUT_H
#define PN_OPS_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/infer.h"
#include "runtime/kernel.h"

/* Tile views each axis as (repeat, dim), so boxes go up to twice the rank. */
#define PN_BOX_MAX (2 * PN_MAX_RANK)

typedef struct pn_box {
	int rank;
	int64_t n[PN_BOX_MAX];    /* extent of each box dim */
	int64_t ds[PN_BOX_MAX];   /* destination element stride */
	int64_t ss[PN_BOX_MAX];   /* source element stride */
} pn_box;

/* Copies the box: dst[sum i*ds] = src[sum i*ss] for every index.  par = 0
 * keeps it on the calling thread (for callers already inside a parallel
 * loop).  Writes of distinct box indices must not overlap. */
void pn_lay_box_copy(void *dst, const void *src, size_t esize, const pn_box *b, int par);

/* Row-major element strides of a shape. */
void pn_lay_strides(int rank, const int64_t *dims, int64_t *strides);

/* Sets n elements of esize bytes to the bytes at val. */
void pn_lay_fill(void *dst, const void *val, size_t esize, int64_t n);

/* After a string tensor was filled by moving pointers that still belong to
 * the inputs (NULL allowed: empty string), gives it copies of its own. */
int pn_lay_own_strings(pn_kctx *k, pn_tensor *t);

/* Copies the whole of src into dst (same numel and dtype). */
int pn_lay_copy_all(pn_kctx *k, pn_tensor *dst, const pn_tensor *src);

/* Reads the ints of a 0-d or 1-d integer tensor; returns the count, -1 if
 * the tensor is not an integer tensor or holds more than max. */
int pn_lay_ints(const pn_tensor *t, int64_t *out, int max);

/* The indices of t as int64: t's own data when it already is int64,
 * otherwise a converted copy stored in *scratch (free it after use).
 * NULL on a non-integer dtype or allocation failure. */
const int64_t *pn_lay_indices(const pn_tensor *t, int64_t **scratch);

/* Type of input i for inference, or NULL if absent or not a tensor. */
const pn_type *pn_lay_itype(const pn_ictx *c, int i);

/* Number of elements of a type, -1 if unknown. */
int64_t pn_lay_type_numel(const pn_type *t);

/* Output i as pre-allocated from its inferred shape; NULL with an error if
 * inference could not fix it (a kernel that trusts its inference). */
pn_tensor *pn_lay_out(pn_kctx *k, int i);

#endif
