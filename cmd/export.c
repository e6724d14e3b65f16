/*
 * export.c - `passnet export`: a curated benchmark task set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "export/select.h"
#include "export/write.h"
#include "partition/partition.h"

static const char usage[] =
	"usage: passnet export --out DIR [--tasks K] [--seed S] [--split TRAIN/VAL/TEST]\n"
	"                      [--variants N] [--archive OUT.tar.gz] [--ops A,B]\n"
	"                      [--source NAME] [--min-ops N] [--max-ops N] [--flag F,G]\n"
	"                      [--strategy LIST]\n"
	"\n"
	"Selects K tasks (default 200) from the profiled subgraphs: a task is one\n"
	"pattern with up to N (default 10) of its shape/dtype variants, spread over\n"
	"sizes.  Eligible: profiled, not failed, fusible, at least 2 ops (--min-ops),\n"
	"and the filters.  Slow patterns first, then greedily the pattern adding\n"
	"the most op-to-op transitions not yet covered, weighted by rarity under a\n"
	"Markov model of all subgraphs.  Tasks are split by pattern (default\n"
	"80/10/10, shuffled with seed S, default 1) and written in the ONNX\n"
	"backend-test layout (see README: export layout); the same store and seed\n"
	"give byte-identical directories.\n"
	"  --ops A,B      only subgraphs containing every listed op\n"
	"  --source NAME  only subgraphs found in models of this source\n"
	"  --flag F,G     only subgraphs with every listed flag (slow, ...)\n"
	"  --strategy L   only subgraphs found by these strategies\n"
	"  --archive F    also write the directory as one .tar.gz\n";

/* Splits "a,b" in place into names. */
static int split_names(char *s, const char **out, int max)
{
	int n = 0;
	for (char *tok = strtok(s, ","); tok && n < max; tok = strtok(NULL, ","))
		out[n++] = tok;
	return n;
}

int cmd_export(int argc, char **argv, const pn_cli *cli)
{
	if (pn_wants_help(argc, argv, usage))
		return 0;
	pn_export_opts o = {.seed = 1, .threads = cli->threads};
	pn_export_filter f = {.min_ops = 2};
	int k = 200, variants = 10, split[3] = {80, 10, 10};
	const char *ops[32], *flags[16], *v;
	char *ops_buf = NULL, *flags_buf = NULL, *strat_buf = NULL;
	for (int i = 1; i < argc; i++) {
		if ((v = pn_opt_value(argc, argv, &i, "--out")))
			o.out = v;
		else if ((v = pn_opt_value(argc, argv, &i, "--tasks")))
			k = atoi(v);
		else if ((v = pn_opt_value(argc, argv, &i, "--seed")))
			o.seed = strtoull(v, NULL, 10);
		else if ((v = pn_opt_value(argc, argv, &i, "--variants")))
			variants = atoi(v);
		else if ((v = pn_opt_value(argc, argv, &i, "--archive")))
			o.archive = v;
		else if ((v = pn_opt_value(argc, argv, &i, "--source")))
			f.source = v;
		else if ((v = pn_opt_value(argc, argv, &i, "--min-ops")))
			f.min_ops = atoi(v);
		else if ((v = pn_opt_value(argc, argv, &i, "--max-ops")))
			f.max_ops = atoi(v);
		else if ((v = pn_opt_value(argc, argv, &i, "--split"))) {
			if (sscanf(v, "%d/%d/%d", &split[0], &split[1], &split[2]) != 3 || split[0] < 0 ||
			    split[1] < 0 || split[2] < 0 || split[0] + split[1] + split[2] <= 0)
				return pn_die("--split wants TRAIN/VAL/TEST percentages, got '%s'", v);
		} else if ((v = pn_opt_value(argc, argv, &i, "--ops"))) {
			ops_buf = strdup(v);
			f.n_ops = split_names(ops_buf, ops, 32);
			f.ops = ops;
		} else if ((v = pn_opt_value(argc, argv, &i, "--flag"))) {
			flags_buf = strdup(v);
			f.n_flags = split_names(flags_buf, flags, 16);
			f.flags = flags;
		} else if ((v = pn_opt_value(argc, argv, &i, "--strategy"))) {
			if (pn_strategy_mask(v, &f.strategies))
				return pn_die("--strategy: unknown strategy in '%s'", v);
		} else {
			fputs(usage, stderr);
			return 2;
		}
	}
	if (!o.out || k < 1 || variants < 1) {
		fputs(usage, stderr);
		return 2;
	}
	pn_store *st;
	char err[PN_ERRLEN];
	if (pn_store_open(&st, cli->db, 1, err))
		return pn_die("%s", err);
	pn_selection sel;
	int *written = NULL;
	int rc = pn_select_tasks(st, &f, k, variants, &sel, err);
	if (!rc && !(written = calloc((size_t)sel.n + 1, sizeof(int))))
		rc = pn_fail(err, "out of memory");
	if (!rc) {
		pn_split_tasks(&sel, o.seed, split);
		rc = pn_write_export(st, &sel, &o, written, err);
	}
	if (!rc) {
		int counts[3] = {0, 0, 0}, nv = 0, nt = 0, left_out = 0;
		for (int i = 0; i < sel.n; i++) {
			counts[sel.tasks[i].split] += written[i] > 0;
			nt += written[i] > 0;
			nv += written[i];
			left_out += sel.tasks[i].n_variants - written[i];
		}
		if (left_out)
			printf("export: %d selected variants left out (warnings above), %d tasks dropped\n",
			       left_out, sel.n - nt);
		printf("export: %d tasks (%d variants) from %d eligible patterns (%lld subgraphs); "
		       "train %d, val %d, test %d; %d of %d op transitions covered; written to %s%s%s\n",
		       nt, nv, sel.eligible_patterns, (long long)sel.eligible_subgraphs, counts[0],
		       counts[1], counts[2], sel.covered, sel.transitions, o.out,
		       o.archive ? " and " : "", o.archive ? o.archive : "");
	}
	free(written);
	pn_selection_free(&sel);
	pn_store_close(st);
	free(ops_buf);
	free(flags_buf);
	free(strat_buf);
	return rc ? pn_die("export: %s", err) : 0;
}
