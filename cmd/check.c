/*
 * check.c - `passnet check TASKDIR CANDIDATE`: judges a candidate against an
 * exported task (export/check.h) and writes one results line per variant.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "export/check.h"

static const char usage[] =
	"usage: passnet check TASKDIR CANDIDATE [--out RESULTS.jsonl] [--time-limit S]\n"
	"                     [--runs N]\n"
	"\n"
	"Checks a candidate against an exported task: TASKDIR is a task folder\n"
	"(task.json and variant folders) or one variant folder.  CANDIDATE is an\n"
	".onnx file used for every variant, a folder with <variant>/model.onnx, or\n"
	"a folder with <variant>/output_N.pb (outputs computed elsewhere: compared\n"
	"on the exported test_data_set_0, not timed).\n"
	"\n"
	"Reference and candidate run on passnet's executor in child processes (each\n"
	"alone for its outputs, then together for timing, their samples\n"
	"alternating) on fresh inputs from a seed that was not exported (task.json's\n"
	"check_seed_rule).  One JSON line per variant (export/export.h): error_class,\n"
	"pass_level (least tolerance level -10..4 at which every output passes),\n"
	"max_abs, max_rel, speedup (median reference time / candidate time).\n"
	"  --out FILE      append the lines to FILE instead of stdout\n"
	"  --time-limit S  seconds per child process (default 60); beyond it the\n"
	"                  candidate fails with error_class runtime\n"
	"  --runs N        timed samples whose median is taken (default 5)\n"
	"Exit status: 0 every variant correct at t = 1 (error_class none and\n"
	"pass_level <= 1), 1 some variant is not, 3 some variant could not be\n"
	"checked (task or reference problem; no line written for it), 2 usage.\n";

int cmd_check(int argc, char **argv, const pn_cli *cli)
{
	if (pn_wants_help(argc, argv, usage))
		return 0;
	pn_check_opts o = {.time_limit = PN_CHECK_TIME_LIMIT, .runs = PN_CHECK_RUNS,
			   .threads = cli->threads};
	const char *args[2] = {0}, *out = NULL, *v;
	int n = 0;
	for (int i = 1; i < argc; i++) {
		if ((v = pn_opt_value(argc, argv, &i, "--out"))) {
			out = v;
		} else if ((v = pn_opt_value(argc, argv, &i, "--time-limit"))) {
			o.time_limit = atoi(v);
		} else if ((v = pn_opt_value(argc, argv, &i, "--runs"))) {
			o.runs = atoi(v);
		} else if (argv[i][0] == '-' || n == 2) {
			fputs(usage, stderr);
			return 2;
		} else {
			args[n++] = argv[i];
		}
	}
	if (n != 2) {
		fputs(usage, stderr);
		return 2;
	}
	if (o.time_limit < 1 || o.runs < 1)
		return pn_die("--time-limit and --runs need positive numbers");
	FILE *f = out ? fopen(out, "a") : stdout;
	if (!f)
		return pn_die("%s: %s", out, strerror(errno));
	int rc = pn_check_task(args[0], args[1], &o, f);
	if (f != stdout && fclose(f))
		return pn_die("%s: cannot write", out);
	return rc;
}
