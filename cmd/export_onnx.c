/*
 * export_onnx.c - `passnet export-onnx HASH OUT.onnx`: one stored subgraph as
 * a standalone ONNX model any ONNX tool loads.
 */
#include <stdio.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "export/export.h"
#include "passnet.pb-c.h"
#include "store/query.h"
#include "store/tables.h"

static uint64_t seed = 1;

static const pn_option options[] = {
	PN_UINT64(0, "seed", "S", &seed, "1", "seed of the regenerated weights"),
	PN_OPT_TABLE_END,
};

static int run(pn_ctx *ctx)
{
	const char *hash = ctx->argv[0], *out = ctx->argv[1];
	pn_rtxn *t = ctx->txn;
	char err[PN_ERRLEN];
	pn_key key;
	int rc = pn_find_key(t, PN_T_SUBGRAPHS, hash, &key, err);
	if (rc == 1)
		rc = pn_fail(err, "no subgraph %s", hash);
	Passnet__Subgraph *sg = NULL;
	if (!rc)
		pn_subgraphs_get(t, key.b, 16, &sg);
	if (!rc && (!sg || !sg->has_canonical))
		rc = pn_fail(err, "subgraph record does not decode");
	if (!rc)
		rc = pn_export_subgraph_onnx(sg->canonical.data, sg->canonical.len, seed, out, err);
	pn_subgraphs_free(sg);
	return rc ? pn_die("export-onnx: %s", err) : 0;
}

const pn_cmd_spec pn_cmd_export_onnx = {
	.options = options,
	.args = "HASH OUT.onnx",
	.min_args = 2,
	.max_args = 2,
	.summary = "write a stored subgraph as a standalone ONNX model",
	.description = "write a stored subgraph as a standalone ONNX model (weights regenerated "
		       "from metadata)",
	.details = "Writes the subgraph HASH (or a unique prefix) as a standalone ONNX model:\n"
		   "its boundary inputs become graph inputs, its outputs graph outputs, and\n"
		   "its weights initializers regenerated from their metadata with seed S;\n"
		   "small constants keep their values.\n",
	.run = run,
};
