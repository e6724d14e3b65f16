/*
 * op_table.c - the executor's functions of every op, by op id, from the
 * same catalogue (schemas/ops.def) as the op ids themselves, so the two
 * cannot disagree.  Every function named here must be linked in: an op of
 * the catalogue whose kernel or inference is missing fails the link, it
 * does not become NULL silently.
 */
#include "runtime/op_table.h"

#include <stddef.h>

#define OP(name, domain, kind, flags, infer)                                  \
	int pn_kernel_##name(pn_kctx *);                                     \
	int pn_infer_##infer(pn_ictx *);
#include "schemas/ops.def"

#define COST(name) int pn_cost_##name(pn_costctx *);
#include "runtime/ops/costs.def"

static const pn_infer_fn infer_fns[PN_OP_COUNT] = {
#define OP(name, domain, kind, flags, infer) [PN_OP_##name] = pn_infer_##infer,
#include "schemas/ops.def"
};

/* The domain token of an ops.def line picks the kernel: passnet runs
 * inference graphs, and the training domain (ai.onnx.preview.training)
 * has no kernels. */
#define KERNEL_OF_PN_AI(name) pn_kernel_##name
#define KERNEL_OF_PN_TRAINING(name) NULL

static const pn_kernel_fn kernel_fns[PN_OP_COUNT] = {
#define OP(name, domain, kind, flags, infer) [PN_OP_##name] = KERNEL_OF_##domain(name),
#include "schemas/ops.def"
};

static const pn_cost_fn cost_fns[PN_OP_COUNT] = {
#define COST(name) [PN_OP_##name] = pn_cost_##name,
#include "runtime/ops/costs.def"
};

static int known(int op)
{
	return op >= 0 && op < PN_OP_COUNT;
}

pn_infer_fn pn_op_infer(int op)
{
	return known(op) ? infer_fns[op] : NULL;
}

pn_kernel_fn pn_op_kernel(int op)
{
	return known(op) ? kernel_fns[op] : NULL;
}

pn_cost_fn pn_op_cost(int op)
{
	return known(op) ? cost_fns[op] : NULL;
}
