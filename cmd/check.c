/*
 * check.c - `passnet check TASKDIR CANDIDATE`: judges a candidate against an
 * exported task (judge/check.h) and writes one results line per variant.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "exec/ort.h"
#include "judge/check.h"

/* UINT64_MAX: no --check-seed, a seed is drawn from the system's random source */
static pn_check_opts co = {.time_limit = PN_CHECK_TIME_LIMIT, .runs = PN_CHECK_RUNS,
			   .check_seed = UINT64_MAX};
static const char *out, *backend = "passnet", *ort_lib;

static const pn_option options[] = {
	PN_STRING(0, "out", "FILE", &out, "stdout", "append the lines to FILE"),
	PN_INT(0, "time-limit", "S", &co.time_limit, "60",
	       "seconds the candidate may run (the reference has its own limit of 600 s); "
	       "beyond it the candidate fails with error_class runtime"),
	PN_INT(0, "runs", "N", &co.runs, "5", "timed samples whose median is taken"),
	PN_UINT64(0, "check-seed", "S", &co.check_seed, "random",
		  "draw the fresh inputs from seed S (below 2^53) to repeat a past check; "
		  "by default a seed no one knows in advance"),
	PN_INT(0, "memory-limit", "MB", &co.memory_limit_mb, "half the memory",
	       "memory per child process: a larger value is refused before the run"),
	PN_STRING(0, "write-inputs", "DIR", &co.write_inputs, NULL,
		  "also write the inputs compared on as DIR/<variant>/input_N.pb"),
	PN_STRING(0, "backend", "NAME", &backend, "passnet",
		  "what times reference and candidate: passnet (its executor) or ort (ONNX "
		  "Runtime at its default optimisation level; outputs still judged on passnet's)"),
	PN_STRING(0, "ort-lib", "PATH", &ort_lib, "build/ort/libonnxruntime.so.1",
		  "ONNX Runtime's library for --backend ort (else $PASSNET_ORT_LIB, build/ort/ "
		  "beside bin/, the loader's path; `make ort` installs it)"),
	PN_OPT_TABLE_END,
};

static int check(pn_ctx *ctx)
{
	(void)ctx;
	if (co.time_limit < 1 || co.runs < 1 || co.memory_limit_mb < 0)
		return pn_die("--time-limit and --runs need positive numbers, --memory-limit one >= 0");
	if (co.check_seed != UINT64_MAX && co.check_seed > PN_CHECK_SEED_MAX)
		return pn_die("--check-seed %llu: a check seed is below 2^53 (%llu)",
			      (unsigned long long)co.check_seed,
			      (unsigned long long)PN_CHECK_SEED_MAX + 1);
	if (strcmp(backend, "passnet") && strcmp(backend, "ort"))
		return pn_die("--backend %s: not a backend (passnet, ort)", backend);
	if (ort_lib && strcmp(backend, "ort"))
		return pn_die("--ort-lib needs --backend ort");
	return 0;
}

static int run(pn_ctx *ctx)
{
	co.threads = ctx->threads;
	char err[PN_ERRLEN];
	if (co.check_seed == UINT64_MAX && pn_check_random_seed(&co.check_seed, err))
		return pn_die("%s", err);
	/* Opened before any child is forked: a missing library is one line
	 * here, not a runtime verdict on every variant. */
	if (!strcmp(backend, "ort") && pn_ort_open(ort_lib, &co.ort, err))
		return pn_die("check: --backend ort: %s", err);
	FILE *f = out ? fopen(out, "a") : stdout;
	if (!f)
		return pn_die("%s: %s", out, strerror(errno));
	int rc = pn_check_task(ctx->argv[0], ctx->argv[1], &co, f);
	pn_ort_close(co.ort);
	if (f != stdout && fclose(f))
		return pn_die("%s: cannot write", out);
	return rc;
}

const pn_cmd_spec pn_cmd_check = {
	.options = options,
	.args = "TASKDIR CANDIDATE",
	.min_args = 2,
	.max_args = 2,
	.summary = "check a candidate against an exported task: correctness and speedup",
	.description = "judge a candidate (an `.onnx`, a folder of `<variant>/model.onnx`, or of "
		       "`<variant>/output_N.pb`) against an exported task on fresh inputs: one "
		       "results line per variant with error class, pass level on the tolerance "
		       "ladder, speedup, and which backend timed it (passnet's executor, or ONNX Runtime with "
		       "`--backend ort`) (docs/tasks.md; judge/check.h)",
	.details = "Checks a candidate against an exported task: TASKDIR is a task folder\n"
		   "(task.json and variant folders) or one variant folder.  CANDIDATE is an\n"
		   ".onnx file used for every variant, a folder with <variant>/model.onnx, or\n"
		   "a folder with <variant>/output_N.pb (outputs computed elsewhere: compared\n"
		   "on the exported test_data_set_0, not timed).\n"
		   "\n"
		   "Reference and candidate run on passnet's executor in child processes (each\n"
		   "alone for its outputs, then together for timing, their samples\n"
		   "alternating) on fresh inputs drawn from a check seed that no one knows in\n"
		   "advance: 53 bits from the system's random source, printed as check_seed in\n"
		   "every line (task.json's check_seed_rule); --check-seed S repeats a check\n"
		   "exactly.  One JSON line per variant (export/export.h): error_class,\n"
		   "pass_level (least tolerance level -10..4 at which every output passes),\n"
		   "max_abs, max_rel, speedup (median reference time / candidate time),\n"
		   "check_seed, check_build (which build judged), backend (what timed them).\n"
		   "--backend ort times both on ONNX Runtime at its default optimisation level\n"
		   "(ALL; 1 intra-op thread, or -j N) instead, so a rewrite is scored by what\n"
		   "it gains under a real compiler; the outputs are still judged on passnet's\n"
		   "executor against its reference outputs, and the line adds ort_version.\n"
		   "Exit status: 0 every variant correct at t = 1 (error_class none and\n"
		   "pass_level <= 1), 1 some variant is not, 3 some variant could not be\n"
		   "checked (task or reference problem; no line written for it), 2 usage.\n",
	.check = check,
	.run = run,
};
