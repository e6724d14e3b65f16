/*
 * baseline.c - `passnet baseline`: ONNX Runtime's times for the subgraphs
 * already profiled (exec/baseline.h); `passnet exec --baseline ort` runs
 * the same after its profiling.
 */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "common/util.h"
#include "store/warnings.h"
#include "exec/baseline.h"
#include "exec/headline.h"

static pn_baseline_opts bo = {.max_repeats = 3};

static const pn_option options[] = {
	PN_STRING(0, "ort-lib", "PATH", &bo.ort_lib, "build/ort/libonnxruntime.so.1",
		  "ONNX Runtime's library (else $PASSNET_ORT_LIB, build/ort/ beside bin/, the "
		  "loader's path; `make ort` installs it)"),
	PN_INT(0, "repeats", "R", &bo.max_repeats, "3",
	       "measure again up to R times while IQR/median > 0.2"),
	PN_DOUBLE(0, "budget", "SECONDS", &bo.budget_s, "0: none",
		  "start no new subgraph after this long; the rest waits for the next run"),
	PN_INT64(0, "limit", "N", &bo.limit, "0: all", "at most N subgraphs this run"),
	PN_FLAG(0, "redo", &bo.redo, "time again the subgraphs that have a baseline of this ORT "
		"version"),
	PN_OPT_TABLE_END,
};

/* This run's counts, then the store's compiler-regression share (h), which
 * a run that times nothing new still gives. */
static void print_stats(const pn_baseline_stats *s, const pn_headline *h, int json)
{
	if (json) {
		printf("{\"baseline\":\"ort\",\"ort_version\":\"%s\",\"todo\":%lld,\"done\":%lld,"
		       "\"refused\":%lld,\"skipped\":%lld,\"disagree\":%lld,"
		       "\"compiler_regression\":%lld,\"compiler_gap\":%lld,\"left_for_later\":%lld,"
		       "\"seconds\":%.3f,", s->ort_version, (long long)s->todo, (long long)s->done,
		       (long long)s->refused, (long long)s->skipped, (long long)s->disagree,
		       (long long)s->regressions, (long long)s->gaps, (long long)s->left, s->seconds);
		pn_headline_json(stdout, h);
		printf("}\n");
		return;
	}
	printf("baseline: ONNX Runtime %s: %lld subgraphs timed (%lld refused by ORT, %lld "
	       "skipped, %lld disagree with passnet), %lld left for a later run, %.1f s; "
	       "compiler-regression %lld, compiler-gap %lld", s->ort_version, (long long)s->done,
	       (long long)s->refused, (long long)s->skipped, (long long)s->disagree,
	       (long long)s->left, s->seconds, (long long)s->regressions, (long long)s->gaps);
	pn_warning_clause(stdout, s->refused, "ort-refused", NULL);
	pn_warning_clause(stdout, s->skipped, "ort-skipped", NULL);
	printf("\n");
	pn_headline_print(stdout, h, "baseline: ");
}

/* The stage could not run (no ORT library): the store's share as it
 * stands, which without earlier baselines says it was not measured. */
static void print_store_headline(const char *why, const pn_headline *h, int json)
{
	if (!json) {
		pn_headline_print(stdout, h, "baseline: ");
		return;
	}
	printf("{\"baseline\":\"ort\",\"error\":");
	pn_json_str(stdout, why);
	putchar(',');
	pn_headline_json(stdout, h);
	printf("}\n");
}

static int read_headline(pn_store *st, pn_headline *h, char *err)
{
	pn_rtxn *t;
	if (pn_rtxn_begin(st, &t, err))
		return -1;
	int rc = pn_headline_read(t, h, err);
	pn_rtxn_end(t);
	return rc;
}

int pn_call_baseline(pn_ctx *ctx, const pn_baseline_opts *o, const char *who)
{
	char err[PN_ERRLEN], herr[PN_ERRLEN];
	pn_baseline_stats s;
	pn_headline h;
	int failed = pn_baseline_stage(ctx->store, o, &s, err);
	int no_headline = read_headline(ctx->store, &h, herr);
	if (failed) {
		pn_die("%s: baseline ort: %s", who, err);
		if (!no_headline)
			print_store_headline(err, &h, ctx->json);
		return 1;
	}
	if (no_headline)
		return pn_die("%s: baseline ort: %s", who, herr);
	print_stats(&s, &h, ctx->json);
	return 0;
}

static int check(pn_ctx *ctx)
{
	(void)ctx;
	if (bo.max_repeats < 0)
		return pn_die("--repeats must be at least 0");
	return 0;
}

static int run(pn_ctx *ctx)
{
	return pn_call_baseline(ctx, &bo, "baseline");
}

const pn_cmd_spec pn_cmd_baseline = {
	.options = options,
	.summary = "time ONNX Runtime (optimised and not) on every profiled subgraph",
	.description = "for every profile (ok or unstable) without a baseline of this ONNX Runtime "
		       "version: ORT at graph optimisation level ALL and with optimisations "
		       "disabled, 1 thread, on the profile's inputs and weights, timed with its "
		       "protocol, outputs checked against passnet's; flags compiler-regression and "
		       "compiler-gap (docs/executor.md); a subgraph ORT refuses keeps ORT's message; "
		       "prints the store's compiler-regression share by size and strategy",
	.details = "For every profile that is ok or unstable and has no baseline from this ONNX\n"
		   "Runtime version (or one skipped: passnet could not hand it to ORT, tried\n"
		   "again each run): the subgraph as ONNX (weights regenerated with the profile's\n"
		   "seed) in ORT sessions at graph optimisation level ALL (ORT's default) and\n"
		   "with every optimisation disabled, 1 intra-op thread (and the profile's\n"
		   "threads when it has more); the profile's inputs; ORT's outputs compared with\n"
		   "passnet's (agree, max_abs, max_rel); both levels timed with the profile's\n"
		   "warm-ups and trials (median, IQR, repeats while unstable).  Flags:\n"
		   "compiler-regression (ALL slower than disabled by more than 1.1x, confirmed\n"
		   "by a second timing) and compiler-gap (ALL above 10x the fused roofline\n"
		   "bound of 1 thread).  A subgraph ORT cannot load or run is recorded as\n"
		   "refused with ORT's message.  ORT 1.16 or newer 1.x (tested: 1.30.0), opened\n"
		   "at run time: passnet builds and runs without it.\n"
		   "Then prints the store's headline, over every baseline ORT timed: \"X% of N\n"
		   "timed subgraphs are slower with ONNX Runtime's default optimisations than\n"
		   "without (published: 43% under TorchInductor)\", the share by size and by\n"
		   "strategy (a subgraph counts in each strategy that cut it); without the\n"
		   "library (exit 1) or with nothing timed, that the baseline was not measured.\n",
	.check = check,
	.run = run,
};
