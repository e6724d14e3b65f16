/*
 * op_table.h - what the executor library runs for each op of the catalogue
 * (schemas/ops.h): its shape and type inference, its kernel and its cost
 * function, looked up by op id.  The catalogue itself (names, kinds, flags)
 * stays in schemas/ so that partition, dedup and canon need no executor.
 */
#ifndef PN_OP_TABLE_H
#define PN_OP_TABLE_H

#include "schemas/ops.h"

typedef struct pn_ictx pn_ictx;       /* runtime/infer.h */
typedef struct pn_kctx pn_kctx;       /* runtime/kernel.h */
typedef struct pn_costctx pn_costctx; /* runtime/cost.h */

typedef int (*pn_infer_fn)(pn_ictx *ctx);
typedef int (*pn_kernel_fn)(pn_kctx *ctx);
typedef int (*pn_cost_fn)(pn_costctx *ctx);

/* Each returns NULL for an op id outside the catalogue (-1: an op passnet
 * does not know).  pn_op_kernel is NULL for the training ops, which have no
 * kernel: they are known, and "not implemented" when run.  pn_op_cost is
 * NULL for an op without a cost function of its own (runtime/ops/costs.def),
 * which pn_cost_default then costs. */
pn_infer_fn  pn_op_infer(int op);
pn_kernel_fn pn_op_kernel(int op);
pn_cost_fn   pn_op_cost(int op);

#endif
