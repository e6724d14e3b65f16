/*
 * ops.c - materialises the op catalogue from ops.def: what every op is
 * (name, domain, kind, flags).  What the executor runs for it is
 * runtime/op_table.c's, so nothing here names a runtime function.
 */
#include "schemas/ops.h"

#include <stdlib.h>
#include <string.h>

const pn_op_info pn_ops[PN_OP_COUNT] = {
#define OP(name, domain, kind, flags, infer) [PN_OP_##name] = {#name, domain, kind, flags},
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
