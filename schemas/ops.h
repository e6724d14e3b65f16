/*
 * ops.h - the op catalogue built from schemas/ops.def.
 *
 * The catalogue only: names, domains, kinds and flags.  partition/ reads
 * kinds and F_ANCHOR, canon/form.c F_COMM.  The executor's inference,
 * kernel and cost function of each op are runtime/op_table.h's, by the
 * same op id.
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

typedef struct pn_op_info {
	const char *name;
	const char *domain;
	int kind;
	unsigned flags;
} pn_op_info;

extern const pn_op_info pn_ops[PN_OP_COUNT];

/* Op id for (domain, op_type), or -1.  "" and "ai.onnx" are the same domain. */
int pn_op_lookup(const char *domain, const char *op_type);
const char *pn_kind_name(int kind);

#endif
