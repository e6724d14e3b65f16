/*
 * partition.c - `passnet partition` and `passnet dedup`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "partition/partition.h"
#include "partition/stage.h"
#include "dedup/dedup.h"

static const char partition_usage[] =
	"usage: passnet partition [--strategy fusion,anchor,window,sole]\n"
	"\n"
	"Cuts every stored model into candidate subgraphs with each strategy\n"
	"(default: all) and stores them.  Models already cut with a strategy are\n"
	"skipped, so rerunning does nothing new.\n"
	"  fusion  TVM FuseOps-style groups over the post-dominator tree\n"
	"  anchor  each Conv/ConvTranspose/MatMul/Gemm with its elementwise\n"
	"          prologue and epilogue\n"
	"  window  connected, convex runs of 2..8 ops in canonical topological order\n"
	"  sole    every single op\n"
	"Every candidate is convex, with at most 64 nodes, 16 inputs and 8 outputs.\n";

static const char dedup_usage[] =
	"usage: passnet dedup\n"
	"\n"
	"Gives every candidate its canonical hash and stores each distinct\n"
	"computation once (subgraphs), with every place it occurs (occurrences).\n"
	"A hash equal to a stored one whose canonical bytes differ is reported as\n"
	"a collision and never merged.\n";

void pn_print_stage(const char *stage, const pn_stage_stats *s, int json)
{
	if (json) {
		printf("{\"stage\":\"%s\",\"models\":%llu,\"candidates\":%llu,\"new_subgraphs\":%llu,"
		       "\"collisions\":%llu,\"approximate\":%llu,\"failed\":%llu,\"seconds\":%.3f}\n",
		       stage, (unsigned long long)s->models, (unsigned long long)s->candidates,
		       (unsigned long long)s->new_subgraphs, (unsigned long long)s->collisions,
		       (unsigned long long)s->approximate, (unsigned long long)s->failed, s->seconds);
		return;
	}
	if (!strcmp(stage, "partition")) {
		printf("partition: %llu models cut into %llu candidates (", (unsigned long long)s->models,
		       (unsigned long long)s->candidates);
		for (int i = 0; i < PN_N_STRATEGIES; i++)
			printf("%s%s %llu", i ? ", " : "", pn_strategies[i].name,
			       (unsigned long long)s->per_strategy[i]);
		printf("), %llu failed, %.2f s\n", (unsigned long long)s->failed, s->seconds);
	} else {
		printf("dedup: %llu candidates of %llu models hashed: %llu new subgraphs, %llu collisions, "
		       "%llu approximate, %llu failed, %.2f s\n",
		       (unsigned long long)s->candidates, (unsigned long long)s->models,
		       (unsigned long long)s->new_subgraphs, (unsigned long long)s->collisions,
		       (unsigned long long)s->approximate, (unsigned long long)s->failed, s->seconds);
	}
}

int pn_run_partition(const pn_cli *cli, char *strategies)
{
	unsigned mask = 0;
	if (strategies && pn_strategy_mask(strategies, &mask))
		return pn_die("--strategy: unknown strategy in '%s'", strategies);
	pn_store *st;
	char err[PN_ERRLEN];
	if (pn_store_open(&st, cli->db, 0, err))
		return pn_die("%s", err);
	pn_stage_stats s;
	int rc = pn_partition_stage(st, mask, cli->threads, &s, err);
	pn_store_close(st);
	if (rc)
		return pn_die("partition: %s", err);
	pn_print_stage("partition", &s, cli->json);
	return 0;
}

int pn_run_dedup(const pn_cli *cli)
{
	pn_store *st;
	char err[PN_ERRLEN];
	if (pn_store_open(&st, cli->db, 0, err))
		return pn_die("%s", err);
	pn_stage_stats s;
	int rc = pn_dedup_stage(st, cli->threads, &s, err);
	pn_store_close(st);
	if (rc)
		return pn_die("dedup: %s", err);
	pn_print_stage("dedup", &s, cli->json);
	return 0;
}

int cmd_partition(int argc, char **argv, const pn_cli *cli)
{
	if (pn_wants_help(argc, argv, partition_usage))
		return 0;
	char *strategies = NULL;
	const char *v;
	for (int i = 1; i < argc; i++) {
		if ((v = pn_opt_value(argc, argv, &i, "--strategy"))) {
			strategies = strdup(v);
		} else {
			fputs(partition_usage, stderr);
			return 2;
		}
	}
	int rc = pn_run_partition(cli, strategies);
	free(strategies);
	return rc;
}

int cmd_dedup(int argc, char **argv, const pn_cli *cli)
{
	if (pn_wants_help(argc, argv, dedup_usage))
		return 0;
	if (argc != 1) {
		fputs(dedup_usage, stderr);
		return 2;
	}
	return pn_run_dedup(cli);
}
