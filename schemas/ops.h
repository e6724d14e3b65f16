/*
 * ops.h - the op table built from schemas/ops.def.
 *
 * partition/ reads kinds and F_ANCHOR, canon/form.c F_COMM; the executor
 * library calls the inference and kernel functions (runtime/infer.c,
 * runtime/session.c) and the cost functions (runtime/cost.c).  A kernel
 * or cost function that is not linked in is NULL in the table (weak symbol):
 * the op is then known but reported as "not implemented" when executed.
 */
#ifndef PN_OPS_H
#define PN_OPS_H

enum pn_op_kind {
	ELEMWISE,
	BROADCAST,
	INJECTIVE,
	REDUCTION,
	OUT_FUSABLE,
	OPAQUE,
	CONTROL,
	PN_KIND_COUNT
};

enum pn_op_flags {
	F_COMM = 1u << 0,
	F_SHAPE_ONLY = 1u << 1,
	F_RANDOM = 1u << 2,
	F_DATA_DEP = 1u << 3,
	F_SEQ = 1u << 4,
	F_ANCHOR = 1u << 5,
	F_QUANT = 1u << 6,
	F_TRAINING = 1u << 7,
};

enum pn_op_id {
#define OP(name, domain, kind, flags, infer) PN_OP_##name,
#include "schemas/ops.def"
	PN_OP_COUNT
};

typedef struct pn_ictx pn_ictx;   /* runtime/infer.h */
typedef struct pn_kctx pn_kctx;   /* runtime/kernel.h */
typedef struct pn_costctx pn_costctx; /* runtime/cost.h */

typedef int (*pn_infer_fn)(pn_ictx *ctx);
typedef int (*pn_kernel_fn)(pn_kctx *ctx);
typedef int (*pn_cost_fn)(pn_costctx *ctx);

typedef struct pn_op_info {
	const char *name;
	const char *domain;
	int kind;
	unsigned flags;
	pn_infer_fn infer;
	pn_kernel_fn kernel;
	pn_cost_fn cost;
} pn_op_info;

extern const pn_op_info pn_ops[PN_OP_COUNT];

/* Op id for (domain, op_type), or -1.  "" and "ai.onnx" are the same domain. */
int pn_op_lookup(const char *domain, const char *op_type);
const char *pn_kind_name(int kind);

#endif
