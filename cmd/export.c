/*
 * export.c - `passnet export`: a curated benchmark task set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "export/left_out.h"
#include "export/select.h"
#include "export/write.h"
#include "partition/partition.h"

static pn_export_opts eo = {.seed = 1};
static pn_export_filter ef = {.min_ops = 2};
static int k = 200, variants = 10, split[3] = {80, 10, 10};
static pn_strlist ops, flags;
static const char *split_arg, *strategy;

static const pn_option options[] = {
	PN_REQUIRED(0, "out", "DIR", &eo.out, "where to write (created; must be empty or absent)"),
	PN_INT(0, "tasks", "K", &k, "200", "tasks to select"),
	PN_UINT64(0, "seed", "S", &eo.seed, "1", "seed of the split shuffle and the exported data"),
	PN_STRING(0, "split", "80/10/10", &split_arg, "80/10/10",
		  "train/val/test percentages, by pattern"),
	PN_INT(0, "variants", "N", &variants, "10", "shape/dtype variants per task at most"),
	PN_STRING(0, "archive", "OUT.tar.gz", &eo.archive, NULL,
		  "also write the directory as one .tar.gz"),
	PN_LIST(0, "ops", "A,B", &ops, "only subgraphs containing every listed op"),
	PN_STRING(0, "source", "NAME", &ef.source, NULL,
		  "only subgraphs found in models of this source"),
	PN_INT(0, "min-ops", "N", &ef.min_ops, "2", "only subgraphs of at least N ops"),
	PN_INT(0, "max-ops", "N", &ef.max_ops, "no bound", "only subgraphs of at most N ops"),
	PN_LIST(0, "flag", "F,G", &flags, "only subgraphs with every listed flag (slow, ...)"),
	PN_STRING(0, "strategy", "LIST", &strategy, "typical,fusion",
		  "only subgraphs found by these strategies (all: any), as PassBench's tasks are "
		  "repeated blocks and fusion groups"),
	PN_OPT_TABLE_END,
};

static int check(pn_ctx *ctx)
{
	if (split_arg && (sscanf(split_arg, "%d/%d/%d", &split[0], &split[1], &split[2]) != 3 ||
			  split[0] < 0 || split[1] < 0 || split[2] < 0 ||
			  split[0] + split[1] + split[2] <= 0))
		return pn_die("--split wants TRAIN/VAL/TEST percentages, got '%s'", split_arg);
	if (!strategy)
		strategy = "typical,fusion";
	if (!strcmp(strategy, "all"))
		ef.strategies = 0;
	else if (pn_strategy_mask(strategy, &ef.strategies))
		return pn_die("--strategy: unknown strategy in '%s'", strategy);
	if (k < 1 || variants < 1)
		return pn_usage_error(ctx->usage, "--tasks and --variants need positive numbers");
	ef.ops = (const char *const *)ops.v;
	ef.n_ops = ops.n;
	ef.flags = (const char *const *)flags.v;
	ef.n_flags = flags.n;
	return 0;
}

static int run(pn_ctx *ctx)
{
	eo.threads = ctx->threads;
	eo.max_variants = variants;
	char err[PN_ERRLEN];
	pn_selection sel;
	int *written = NULL, left_out = 0;
	int rc = pn_select_tasks(ctx->store, &ef, k, variants, &sel, err);
	if (!rc && !(written = calloc((size_t)sel.n + 1, sizeof(int))))
		rc = pn_fail(err, "out of memory");
	if (!rc) {
		pn_split_tasks(&sel, eo.seed, split);
		rc = pn_write_export(ctx->store, &sel, &eo, written, &left_out, err);
	}
	if (!rc) {
		int counts[3] = {0, 0, 0}, nv = 0, nt = 0;
		for (int i = 0; i < sel.n; i++) {
			counts[sel.tasks[i].split] += written[i] > 0;
			nt += written[i] > 0;
			nv += written[i];
		}
		printf("export: %d tasks (%d variants) from %d eligible patterns (%lld subgraphs); "
		       "train %d, val %d, test %d; %d of %d op transitions covered; written to %s%s%s",
		       nt, nv, sel.eligible_patterns, (long long)sel.eligible_subgraphs, counts[0],
		       counts[1], counts[2], sel.covered, sel.transitions, eo.out,
		       eo.archive ? " and " : "", eo.archive ? eo.archive : "");
		if (left_out)
			printf("; %d selected variants left out, %d tasks dropped", left_out, sel.n - nt);
		rc = pn_left_out_summary(stdout, eo.out, err);
		printf("\n");
	}
	free(written);
	pn_selection_free(&sel);
	pn_strlist_free(&ops);
	pn_strlist_free(&flags);
	return rc ? pn_die("export: %s", err) : 0;
}

const pn_cmd_spec pn_cmd_export = {
	.options = options,
	.summary = "write a curated benchmark task set",
	.description = "select K long-tail tasks (one pattern, up to N variants each) from the "
		       "profiled subgraphs and write them split by pattern in the ONNX backend-test "
		       "layout (docs/tasks.md)",
	.details = "Selects K tasks from the profiled subgraphs: a task is one pattern with\n"
		   "up to N of its shape/dtype variants, spread over sizes.  Eligible:\n"
		   "profiled, not failed, fusible, at least 2 ops (--min-ops), and the\n"
		   "filters.  Slow patterns first, then greedily the pattern adding the most\n"
		   "op-to-op transitions not yet covered, weighted by rarity under a Markov\n"
		   "model of all subgraphs.  Tasks are split by pattern (shuffled with seed S)\n"
		   "and written in the ONNX backend-test layout (docs/tasks.md);\n"
		   "the same store and seed give byte-identical directories.\n",
	.check = check,
	.run = run,
};
