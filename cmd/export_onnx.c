/*
 * export_onnx.c - `passnet export-onnx HASH OUT.onnx`: one stored subgraph as
 * a standalone ONNX model any ONNX tool loads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "export/export.h"
#include "passnet.pb-c.h"
#include "store/query.h"

static const char usage[] =
	"usage: passnet export-onnx HASH OUT.onnx [--seed S]\n"
	"\n"
	"Writes the subgraph HASH (or a unique prefix) as a standalone ONNX model:\n"
	"its boundary inputs become graph inputs, its outputs graph outputs, and\n"
	"its weights initializers regenerated from their metadata with seed S\n"
	"(default 1); small constants keep their values.\n";

int cmd_export_onnx(int argc, char **argv, const pn_cli *cli)
{
	if (pn_wants_help(argc, argv, usage))
		return 0;
	const char *hash = NULL, *out = NULL, *v;
	uint64_t seed = 1;
	for (int i = 1; i < argc; i++) {
		if ((v = pn_opt_value(argc, argv, &i, "--seed")))
			seed = strtoull(v, NULL, 10);
		else if (!hash)
			hash = argv[i];
		else if (!out)
			out = argv[i];
		else {
			fputs(usage, stderr);
			return 2;
		}
	}
	if (!out) {
		fputs(usage, stderr);
		return 2;
	}
	pn_store *st;
	pn_rtxn *t;
	if (pn_open_for_reading(cli->db, &st, &t))
		return 1;
	char err[PN_ERRLEN];
	pn_key key;
	pn_bytes val;
	int rc = pn_find_key(t, PN_T_SUBGRAPHS, hash, &key, err);
	if (rc == 1)
		rc = pn_fail(err, "no subgraph %s", hash);
	Passnet__Subgraph *sg = NULL;
	if (!rc && pn_get(t, PN_T_SUBGRAPHS, key.b, 16, &val) == 0)
		sg = passnet__subgraph__unpack(NULL, val.len, val.data);
	if (!rc && (!sg || !sg->has_canonical))
		rc = pn_fail(err, "subgraph record does not decode");
	if (!rc)
		rc = pn_export_subgraph_onnx(sg->canonical.data, sg->canonical.len, seed, out, err);
	if (sg)
		passnet__subgraph__free_unpacked(sg, NULL);
	pn_rtxn_end(t);
	pn_store_close(st);
	return rc ? pn_die("export-onnx: %s", err) : 0;
}
