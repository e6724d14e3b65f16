#include "schemas/opschema.h"

#include <stdlib.h>

#include "schemas/ops.h"

static const char *const versions[PN_OP_COUNT] = {
#define VERSIONS(op, domain, list) [PN_OP_##op] = list,
#define DEFAULT(op, since, attr, kind, value)
#include "schemas/op_schemas.def"
};

#define PN_AD_FLOAT_INIT(v) .f = v
#define PN_AD_INT_INIT(v) .i = v
#define PN_AD_STRING_INIT(v) .s = v
#define PN_AD_INTS_INIT(v) .s = v
#define PN_AD_FLOATS_INIT(v) .s = v
#define PN_AD_STRINGS_INIT(v) .s = v

/* In file order: grouped by op, then version. */
static const pn_attr_default defaults[] = {
#define VERSIONS(op, domain, list)
#define DEFAULT(op, since, attr, kind, value) {PN_OP_##op, since, #attr, kind, kind##_INIT(value)},
#include "schemas/op_schemas.def"
};

int pn_op_effective_version(int op, int opset)
{
	if (op < 0 || op >= PN_OP_COUNT || !versions[op] || !*versions[op])
		return opset;
	int best = 0;
	const char *p = versions[op];
	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		if (v <= opset && v > best)
			best = (int)v;
		p = end;
	}
	return best ? best : opset;
}

#define N_DEFAULTS ((int)(sizeof defaults / sizeof *defaults))

/* Where each op's defaults start in the table (the generator writes them
 * grouped by op), built once before main runs. */
static int op_first[PN_OP_COUNT + 1];

__attribute__((constructor)) static void index_defaults(void)
{
	for (int op = 0; op <= PN_OP_COUNT; op++)
		op_first[op] = -1;
	for (int i = N_DEFAULTS - 1; i >= 0; i--)
		op_first[defaults[i].op] = i;
}

int pn_op_defaults(int op, int since, const pn_attr_default **first)
{
	int n = 0;
	*first = NULL;
	if (op < 0 || op >= PN_OP_COUNT || op_first[op] < 0)
		return 0;
	for (int i = op_first[op]; i < N_DEFAULTS && defaults[i].op == op; i++) {
		if (defaults[i].since != since)
			continue;
		if (!n)
			*first = &defaults[i];
		n++;
	}
	return n;
}
