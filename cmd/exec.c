/*
 * exec.c - `passnet exec`: profile the stored subgraphs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "exec/profile.h"
#include "partition/partition.h"

static const char usage[] =
	"usage: passnet exec [--threads N] [--warmup W] [--trials T] [--repeats R]\n"
	"                    [--seed S] [--budget SECONDS] [--limit N]\n"
	"                    [--strategy LIST] [--min-nodes K] [--redo FLAG,...]\n"
	"\n"
	"First runs every model not run yet once on its own inputs (test_data_set_0,\n"
	"else seeded ones) and records the range of values each subgraph input takes\n"
	"there.  Then profiles every stored subgraph that this executor build has\n"
	"not measured: seeded inputs (floats in those ranges), a correctness run (no\n"
	"NaN, bitwise equal across two runs and across thread counts), W warm-up runs (default 3), T timed trials\n"
	"(default 5), median and IQR (repeated up to R times, default 3, while\n"
	"IQR/median > 0.2, then marked unstable), roofline bounds from the\n"
	"calibration (measured first if the store has none) and flags: slow,\n"
	"fusible, overhead-bound, parallel-slowdown, unstable, failed.\n"
	"Subgraphs are measured one at a time, in hash order; a killed run resumes.\n"
	"  --budget SECONDS  start no new subgraph after this long (the rest waits\n"
	"                    for the next run)\n"
	"  --limit N         at most N subgraphs this run\n"
	"  --strategy LIST   only subgraphs found by these strategies\n"
	"  --min-nodes K     only subgraphs of at least K nodes\n"
	"  --redo FLAG,...   measure again the subgraphs whose profile has one of\n"
	"                    these flags (e.g. unstable,parallel-slowdown after a run\n"
	"                    that shared the machine), and only those\n";

static int flags_mask(char *list, unsigned *mask)
{
	*mask = 0;
	for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		int f = pn_flag_index(tok);
		if (f < 0)
			return -1;
		*mask |= 1u << f;
	}
	return 0;
}

static void print_stats(const pn_profile_stats *s, int json)
{
	if (json) {
		printf("{\"ranges_models\":%lld,\"ranges_failed\":%lld,\"ranges_subgraphs\":%lld,"
		       "\"ranges_seconds\":%.3f,", (long long)s->ranges.models, (long long)s->ranges.failed,
		       (long long)s->ranges.subgraphs, s->ranges.seconds);
		printf("\"todo\":%lld,\"profiled\":%lld,\"failed\":%lld,\"unstable\":%lld,"
		       "\"left_for_later\":%lld,\"seconds\":%.3f,\"flags\":{",
		       (long long)s->todo, (long long)s->profiled, (long long)s->failed,
		       (long long)s->unstable, (long long)s->skipped_budget, s->seconds);
		for (int f = 0; f < pn_n_flags; f++)
			printf("%s\"%s\":%lld", f ? "," : "", pn_flag_names[f], (long long)s->flag_count[f]);
		printf("}}\n");
		return;
	}
	if (s->ranges.models || s->ranges.failed)
		printf("ranges: %lld models run (%lld could not run), %lld cut input ranges recorded, "
		       "%.1f s\n", (long long)s->ranges.models, (long long)s->ranges.failed,
		       (long long)s->ranges.subgraphs, s->ranges.seconds);
	printf("exec: %lld subgraphs profiled (%lld failed, %lld unstable), %lld left for a later "
	       "run, %.1f s; flags:", (long long)s->profiled, (long long)s->failed,
	       (long long)s->unstable, (long long)(s->todo - s->profiled), s->seconds);
	for (int f = 0; f < pn_n_flags; f++)
		printf(" %s %lld", pn_flag_names[f], (long long)s->flag_count[f]);
	printf("\n");
}

int pn_run_exec(const pn_cli *cli, const pn_profile_opts *o)
{
	pn_store *st;
	char err[PN_ERRLEN];
	if (pn_store_open(&st, cli->db, 0, err))
		return pn_die("%s", err);
	pn_profile_stats s;
	int rc = pn_exec_stage(st, o, &s, err);
	pn_store_close(st);
	if (rc)
		return pn_die("exec: %s", err);
	print_stats(&s, cli->json);
	return 0;
}

int cmd_exec(int argc, char **argv, const pn_cli *cli)
{
	if (pn_wants_help(argc, argv, usage))
		return 0;
	pn_profile_opts o = {.threads = cli->threads, .warmups = 3, .trials = 5, .max_repeats = 3,
			     .seed = 1};
	const char *v;
	for (int i = 1; i < argc; i++) {
		if ((v = pn_opt_value(argc, argv, &i, "--warmup")))
			o.warmups = atoi(v);
		else if ((v = pn_opt_value(argc, argv, &i, "--trials")))
			o.trials = atoi(v);
		else if ((v = pn_opt_value(argc, argv, &i, "--repeats")))
			o.max_repeats = atoi(v);
		else if ((v = pn_opt_value(argc, argv, &i, "--seed")))
			o.seed = strtoull(v, NULL, 10);
		else if ((v = pn_opt_value(argc, argv, &i, "--budget")))
			o.budget_s = atof(v);
		else if ((v = pn_opt_value(argc, argv, &i, "--limit")))
			o.limit = atoll(v);
		else if ((v = pn_opt_value(argc, argv, &i, "--min-nodes")))
			o.min_nodes = atoi(v);
		else if ((v = pn_opt_value(argc, argv, &i, "--strategy"))) {
			if (pn_strategy_mask(v, &o.strategies))
				return pn_die("--strategy: unknown strategy in '%s'", v);
		} else if ((v = pn_opt_value(argc, argv, &i, "--redo"))) {
			char *copy = strdup(v);
			int bad = flags_mask(copy, &o.redo_flags);
			free(copy);
			if (bad || !o.redo_flags)
				return pn_die("--redo: unknown flag in '%s'", v);
		} else {
			fputs(usage, stderr);
			return 2;
		}
	}
	if (o.trials < 1 || o.warmups < 0 || o.max_repeats < 0)
		return pn_die("--trials must be at least 1, --warmup and --repeats at least 0");
	return pn_run_exec(cli, &o);
}
