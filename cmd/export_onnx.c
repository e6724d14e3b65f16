/*
 * export_onnx.c - `passnet export-onnx HASH OUT.onnx`: one stored subgraph as
 * a standalone ONNX model any ONNX tool loads; `--out-dir DIR HASH...`:
 * many, DIR/<hash>.onnx each, in one process.
 */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "common/util.h"
#include "export/export.h"
#include "passnet.pb-c.h"
#include "store/query.h"
#include "store/subgraphs.h"
#include "store/tables.h"

static uint64_t seed = 1;
static const char *out_dir;

static const pn_option options[] = {
	PN_UINT64(0, "seed", "S", &seed, "1", "seed of the regenerated weights"),
	PN_STRING(0, "out-dir", "DIR", &out_dir, NULL,
		  "write each HASH argument (- reads them from stdin, one a line) as DIR/HASH.onnx"),
	PN_OPT_TABLE_END,
};

/* Writes subgraph `hash` (or a unique prefix) to out: 0, or -1 and err. */
static int export_one(pn_rtxn *t, const char *hash, const char *out, char *err)
{
	pn_key key;
	int rc = pn_find_key(t, PN_T_SUBGRAPHS, hash, &key, err);
	if (rc == 1)
		rc = pn_fail(err, "no subgraph %s", hash);
	Passnet__Subgraph *sg = NULL;
	if (!rc)
		pn_subgraphs_get(t, key.b, 16, &sg);
	if (!rc && (!sg || !sg->has_canonical))
		rc = pn_fail(err, "subgraph record does not decode");
	/* the weights on the scale of a model holding it, as export writes them */
	pn_subgraph_weights ws = {0};
	if (!rc)
		pn_read_subgraph_weights_in(t, key.b, &ws);
	if (!rc)
		rc = pn_export_subgraph_onnx(sg->canonical.data, sg->canonical.len, &ws, seed, out, err);
	pn_subgraph_weights_free(&ws);
	pn_subgraphs_free(sg);
	return rc ? -1 : 0;
}

/* One HASH into out_dir: a failure is one line naming it, and the rest go on. */
static int export_into_dir(pn_rtxn *t, const char *hash, int *failed)
{
	char err[PN_ERRLEN], out[4200];
	if (!*hash)
		return 0;
	if (snprintf(out, sizeof out, "%s/%s.onnx", out_dir, hash) >= (int)sizeof out) {
		fprintf(stderr, "passnet: export-onnx: %s: the output path is too long\n", hash);
		++*failed;
		return 0;
	}
	if (export_one(t, hash, out, err)) {
		fprintf(stderr, "passnet: export-onnx: %s: %s\n", hash, err);
		++*failed;
	}
	return 0;
}

static int run(pn_ctx *ctx)
{
	char err[PN_ERRLEN];
	if (!out_dir) {
		if (ctx->argc != 2)
			return pn_die("export-onnx: HASH OUT.onnx wanted (or --out-dir DIR HASH...)");
		return export_one(ctx->txn, ctx->argv[0], ctx->argv[1], err)
			       ? pn_die("export-onnx: %s", err) : 0;
	}
	if (pn_mkdirs(out_dir, 0755, err))
		return pn_die("export-onnx: %s", err);
	int failed = 0, n = 0;
	for (int i = 0; i < ctx->argc; i++) {
		if (strcmp(ctx->argv[i], "-")) {
			export_into_dir(ctx->txn, ctx->argv[i], &failed);
			n++;
			continue;
		}
		char line[256];
		while (fgets(line, sizeof line, stdin)) {
			line[strcspn(line, " \t\r\n")] = 0;
			export_into_dir(ctx->txn, line, &failed);
			n += !!*line;
		}
	}
	printf("export-onnx: %d subgraphs, %d written to %s, %d failed\n", n, n - failed, out_dir,
	       failed);
	return failed ? 1 : 0;
}

const pn_cmd_spec pn_cmd_export_onnx = {
	.options = options,
	.args = "HASH OUT.onnx | --out-dir DIR HASH...",
	.min_args = 1,
	.max_args = -1,
	.summary = "write a stored subgraph as a standalone ONNX model",
	.description = "write a stored subgraph as a standalone ONNX model (weights regenerated "
		       "from metadata)",
	.details = "Writes the subgraph HASH (or a unique prefix) as a standalone ONNX model:\n"
		   "its boundary inputs become graph inputs, its outputs graph outputs, and\n"
		   "its weights initializers regenerated from their metadata with seed S;\n"
		   "small constants keep their values.  With --out-dir, each HASH argument\n"
		   "(- reads hashes from stdin, one a line) is written as DIR/HASH.onnx in one\n"
		   "process; one that cannot be written gets a line on stderr naming it, the\n"
		   "rest go on, and the exit status is 1.\n",
	.run = run,
};
