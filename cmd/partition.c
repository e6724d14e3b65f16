/*
 * partition.c - `passnet partition` (its summary line: cmd/stage_summary.c).
 */

#include "cmd/cmd.h"
#include "common/err.h"
#include "common/shard.h"
#include "partition/partition.h"
#include "partition/stage.h"

int pn_call_partition(pn_ctx *ctx, const char *strategies, const pn_shard *shard)
{
	unsigned mask = 0;
	if (strategies && pn_strategy_mask(strategies, &mask))
		return pn_die("--strategy: unknown strategy in '%s'", strategies);
	pn_stage_stats s;
	char err[PN_ERRLEN];
	if (pn_partition_stage(ctx->store, mask, ctx->threads, shard, &s, err))
		return pn_die("partition: %s", err);
	pn_print_stage("partition", &s, ctx->json);
	return 0;
}

static const char *strategies;

static const pn_option partition_options[] = {
	PN_STRING(0, "strategy", "typical,fusion,anchor,window,sole", &strategies, "all",
		  "the strategies to cut with"),
	PN_CALLBACK1(0, "shard", "K/N", &pn_cmd_shard, pn_opt_shard, "0/1: every model",
		    "only the models whose record key falls in shard K of N "
		    "(docs/machines.md)"),
	PN_OPT_TABLE_END,
};

static int check_partition(pn_ctx *ctx)
{
	(void)ctx;
	unsigned mask;
	if (strategies && pn_strategy_mask(strategies, &mask))
		return pn_die("--strategy: unknown strategy in '%s'", strategies);
	return 0;
}

static int run_partition(pn_ctx *ctx)
{
	return pn_call_partition(ctx, strategies, &pn_cmd_shard);
}

const pn_cmd_spec pn_cmd_partition = {
	.options = partition_options,
	.summary = "cut stored models into candidate subgraphs",
	.description = "cut every stored model into candidate subgraphs (convex, at most 64 nodes, "
		       "16 inputs, 8 outputs); only (model, strategy) pairs not yet done",
	.details = "Cuts every stored model into candidate subgraphs with each strategy\n"
		   "(default: all) and stores them.  Models already cut with a strategy are\n"
		   "skipped, so rerunning does nothing new.\n"
		   "  fusion  TVM FuseOps-style groups over the post-dominator tree\n"
		   "  anchor  each Conv/ConvTranspose/MatMul/Gemm with its elementwise\n"
		   "          prologue and epilogue\n"
		   "  window  connected, convex runs of 2..8 ops in canonical topological order\n"
		   "  sole    every single op\n"
		   "Every candidate is convex, with at most 64 nodes, 16 inputs and 8 outputs.\n",
	.check = check_partition,
	.run = run_partition,
};
