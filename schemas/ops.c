/*
 * ops.c - materialises the op table from ops.def.
 *
 * Kernels, inference and cost functions are declared weak so that the table
 * links whatever exists: an op added to ops.def before its kernel is written
 * is simply "not implemented" at run time, and nothing else has to change.
 */
#include "schemas/ops.h"

#include <stdlib.h>
#include <string.h>

#define OP(name, domain, kind, flags, infer)                                  \
	extern int pn_kernel_##name(pn_kctx *) __attribute__((weak));        \
	extern int pn_cost_##name(pn_costctx *) __attribute__((weak));       \
	extern int pn_infer_##infer(pn_ictx *) __attribute__((weak));
#include "schemas/ops.def"

const pn_op_info pn_ops[PN_OP_COUNT] = {
#define OP(name, domain, kind, flags, infer)                                  \
	[PN_OP_##name] = {#name, domain, kind, flags, pn_infer_##infer,     \
			  pn_kernel_##name, pn_cost_##name},
#include "schemas/ops.def"
};

static const char *const kind_names[PN_KIND_COUNT] = {
	"elementwise", "broadcast", "injective", "reduction",
	"out-elementwise-fusable", "opaque", "control-flow",
};

const char *pn_kind_name(int kind)
{
	return kind >= 0 && kind < PN_KIND_COUNT ? kind_names[kind] : "unknown";
}

static int domain_eq(const char *a, const char *b)
{
	if (!a || !strcmp(a, "ai.onnx"))
		a = "";
	if (!b || !strcmp(b, "ai.onnx"))
		b = "";
	return !strcmp(a, b);
}

int pn_op_lookup(const char *domain, const char *op_type)
{
	/* Linear scan over ~200 names costs well under a microsecond per node
	 * and happens once per node at decode time. */
	for (int i = 0; i < PN_OP_COUNT; i++)
		if (!strcmp(pn_ops[i].name, op_type) && domain_eq(pn_ops[i].domain, domain))
			return i;
	return -1;
}
