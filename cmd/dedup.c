/*
 * dedup.c - `passnet dedup`: the dedup stage (dedup/stage.c) over the
 * store's candidates, and its summary (pn_print_stage, cmd/stage_summary.c).
 */
#include <stdio.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "common/shard.h"
#include "dedup/dedup.h"
#include "dedup/stream.h"
#include "partition/partition.h"
#include "partition/stage.h"

int pn_call_dedup(pn_ctx *ctx, const pn_shard *shard)
{
	pn_stage_stats s;
	char err[PN_ERRLEN];
	if (pn_dedup_stage(ctx->store, ctx->threads, shard, &s, err))
		return pn_die("dedup: %s", err);
	pn_print_stage("dedup", &s, ctx->json);
	return 0;
}

int pn_call_cut_and_dedup(pn_ctx *ctx, const char *strategies)
{
	unsigned mask = 0;
	if (strategies && pn_strategy_mask(strategies, &mask))
		return pn_die("--strategy: unknown strategy in '%s'", strategies);
	pn_stage_stats cut, hashed;
	char err[PN_ERRLEN];
	if (pn_stream_stage(ctx->store, mask, ctx->threads, NULL, &cut, &hashed, err))
		return pn_die("build: %s", err);
	pn_print_stage("partition", &cut, ctx->json);
	pn_rtxn *t;
	if (pn_rtxn_begin(ctx->store, &t, err))
		return pn_die("build: %s", err);
	int marked = pn_unhashed_marked(t);
	pn_rtxn_end(t);
	if (marked) {   /* a partition run's candidates, not hashed yet */
		pn_stage_stats more;
		if (pn_dedup_stage(ctx->store, ctx->threads, NULL, &more, err))
			return pn_die("dedup: %s", err);
		pn_stage_stats_add(&hashed, &more);
	}
	pn_print_stage("dedup", &hashed, ctx->json);
	return 0;
}

static const pn_option dedup_options[] = {
	PN_CALLBACK1(0, "shard", "K/N", &pn_cmd_shard, pn_opt_shard, "0/1: every structure",
		    "only the candidates of the structures whose least model's record key "
		    "falls in shard K of N (docs/machines.md)"),
	PN_OPT_TABLE_END,
};

static int run_dedup(pn_ctx *ctx)
{
	return pn_call_dedup(ctx, &pn_cmd_shard);
}

const pn_cmd_spec pn_cmd_dedup = {
	.options = dedup_options,
	.summary = "hash candidates canonically and store each subgraph once",
	.description = "hash every candidate canonically and store each distinct computation once, "
		       "with all its occurrences",
	.details = "Gives every candidate its canonical hash and stores each distinct\n"
		   "computation once (subgraphs), with every place it occurs (occurrences).\n"
		   "A hash equal to a stored one whose canonical bytes differ is reported as\n"
		   "a collision and never merged.\n",
	.run = run_dedup,
};
