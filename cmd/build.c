/*
 * build.c - `passnet build`: every stage, in order, over the same store.
 * Each stage does only what is not done yet, so building again after adding
 * a source costs only that source's models.
 */
#include <stdio.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "partition/partition.h"

static const char *strategy;

static const pn_option options[] = {
	PN_INCLUDE(pn_extract_options),
	PN_STRING(0, "strategy", "LIST", &strategy, "all",
		  "partition with these strategies (typical,fusion,anchor,window,sole)"),
	PN_OPT_TABLE_END,
};

/* A bad --strategy fails before extract does any work. */
static int check(pn_ctx *ctx)
{
	unsigned mask;
	if (strategy && pn_strategy_mask(strategy, &mask))
		return pn_die("--strategy: unknown strategy in '%s'", strategy);
	return pn_check_extract(ctx);
}

/* One store, opened once by passnet.c, for every stage. */
static int run(pn_ctx *ctx)
{
	int rc = pn_call_extract(ctx);
	if (!rc)   /* all the store holds */
		rc = pn_call_cut_and_dedup(ctx, strategy);
	return rc;
}

const pn_cmd_spec pn_cmd_build = {
	.options = options,
	.args = "[PATH...]",
	.max_args = -1,
	.summary = "extract, then partition and dedup in one streamed pass",
	.description = "extract, then partition and dedup in one streamed pass (each does only what "
		       "is not done yet)",
	.details = "Runs extract (see `passnet extract --help`), then cuts every model\n"
		   "(with the strategies of LIST, default all) and hashes its cuts in the\n"
		   "same pass, each model decoded once (docs/design.md); the store is the\n"
		   "same as partition and dedup run apart.  Prints each stage's summary.\n",
	.check = check,
	.run = run,
};
