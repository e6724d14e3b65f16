/*
 * exec.c - `passnet exec`: profile the stored subgraphs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "common/util.h"
#include "exec/baseline.h"
#include "exec/profile.h"
#include "partition/partition.h"
#include "store/warnings.h"

static pn_profile_opts po = {.warmups = 3, .trials = 5, .max_repeats = 3, .seed = 1};
static const char *strategy, *redo, *only, *baseline, *protocol;
static pn_baseline_opts bo = {.max_repeats = 3};
static int plan_only;

static const pn_option options[] = {
	PN_STRING(0, "protocol", "NAME", &protocol, "adaptive",
		  "adaptive: 1 warm-up and 3..T trials, stopped once the median is far enough "
		  "from every flag's threshold; full: W warm-ups and T trials on every subgraph "
		  "(docs/executor.md)"),
	PN_INT(0, "warmup", "W", &po.warmups, "3", "untimed runs before the trials (full protocol)"),
	PN_INT(0, "trials", "T", &po.trials, "5",
	       "timed runs whose median and IQR are kept (adaptive: at most T)"),
	PN_INT(0, "repeats", "R", &po.max_repeats, "3",
	       "measure again up to R times while IQR/median > 0.2"),
	PN_UINT64(0, "seed", "S", &po.seed, "1", "seed of the generated inputs and weights"),
	PN_DOUBLE(0, "budget", "SECONDS", &po.budget_s, "0: none",
		  "start no new subgraph after this long; the rest waits for the next run"),
	PN_INT64(0, "limit", "N", &po.limit, "0: all", "at most N subgraphs this run"),
	PN_STRING(0, "strategy", "LIST", &strategy, "all",
		  "only subgraphs found by these strategies"),
	PN_INT(0, "min-nodes", "K", &po.min_nodes, "0", "only subgraphs of at least K nodes"),
	PN_STRING(0, "redo", "FLAG,...", &redo, NULL,
		  "measure again the subgraphs whose profile has one of these flags (e.g. "
		  "unstable,parallel-slowdown after a run that shared the machine), and only those"),
	PN_STRING(0, "only", "FILE", &only, NULL,
		  "only the subgraphs whose hashes FILE lists (one 32-digit hex hash a line; "
		  "passnet-mpi hands out its batches so); an empty FILE runs only the calibration "
		  "and the ranges phase"),
	PN_FLAG(0, "ranges-only", &po.ranges_only,
		"run only the ranges phase; with --shard K/N only the models whose key falls in "
		"shard K, whose stores `passnet merge` joins into the ranges of one run (so N "
		"machines share the phase before they profile)"),
	PN_FLAG(0, "plan", &plan_only,
		"print the hashes of the subgraphs this run would profile, in the order it would, "
		"one a line, and profile none (the calibration and the ranges phase run as usual)"),
	PN_STRING(0, "baseline", "BACKEND", &baseline, NULL,
		  "then time this backend (ort: ONNX Runtime, optimised and not) on every "
		  "profiled subgraph without its baseline, as `passnet baseline` does"),
	PN_STRING(0, "ort-lib", "PATH", &bo.ort_lib, "build/ort/libonnxruntime.so.1",
		  "ONNX Runtime's library for --baseline ort"),
	PN_CALLBACK1(0, "shard", "K/N", &po.shard, pn_opt_shard, "0/1: every subgraph",
		    "profile only the subgraphs whose hash falls in shard K of N (the ranges "
		    "phase runs every model; docs/machines.md)"),
	PN_OPT_TABLE_END,
};

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

/* Subgraphs a second over the profiling itself (from the first read to the
 * last commit: ranges, calibration and the plan aside). */
static double rate(const pn_profile_stats *s)
{
	return s->profile_s > 0 ? (double)s->profiled / s->profile_s : 0;
}

static void print_times_json(const pn_profile_stats *s)
{
	const pn_profile_times *w = &s->work;
	printf("\"subgraphs_per_s\":%.1f,\"time\":{\"calibration\":%.3f,\"ranges\":%.3f,"
	       "\"plan\":%.3f,\"read\":%.3f,\"check\":%.3f,\"timing\":%.3f,\"commit\":%.3f,"
	       "\"profiling\":%.3f,", rate(s), s->calibration_s, s->ranges.seconds, s->plan_s,
	       s->read_s, s->check_s, s->timing_s, s->commit_s, s->profile_s);
	printf("\"work\":{\"decode\":%.3f,\"infer\":%.3f,\"inputs\":%.3f,\"weights\":%.3f,"
	       "\"correctness\":%.3f,\"timed_runs\":%.3f,\"flags\":%.3f}},\"correctness_runs\":%lld,",
	       w->decode, w->infer, w->inputs, w->weights, w->correct, w->timing, w->cost,
	       (long long)w->check_runs);
}

static void print_times(const pn_profile_stats *s)
{
	const pn_profile_times *w = &s->work;
	printf("exec: %.1f subgraphs/s over %.1f s of profiling; wall s: calibration %.2f, ranges "
	       "%.2f, plan %.2f, read %.2f, set-up+correctness %.2f, timing %.2f, commit %.2f\n",
	       rate(s), s->profile_s, s->calibration_s, s->ranges.seconds, s->plan_s, s->read_s,
	       s->check_s, s->timing_s, s->commit_s);
	printf("exec: thread s (summed over subgraphs): decode %.2f, infer %.2f, inputs %.2f, "
	       "weights %.2f, correctness runs %.2f, timed runs %.2f, flags %.2f\n", w->decode,
	       w->infer, w->inputs, w->weights, w->correct, w->timing, w->cost);
	printf("exec: %lld correctness runs (one per subgraph checked: a second run and the "
	       "1-thread one are timing's first runs)\n", (long long)w->check_runs);
}

static void print_stats(const pn_profile_stats *s, int json)
{
	if (json) {
		printf("{\"ranges_models\":%lld,\"ranges_failed\":%lld,\"ranges_subgraphs\":%lld,"
		       "\"ranges_left\":%lld,\"waiting_ranges\":%lld,"
		       "\"ranges_seconds\":%.3f,", (long long)s->ranges.models, (long long)s->ranges.failed,
		       (long long)s->ranges.subgraphs, (long long)s->ranges.left,
		       (long long)s->waiting_ranges, s->ranges.seconds);
		print_times_json(s);
		printf("\"todo\":%lld,\"profiled\":%lld,\"failed\":%lld,\"unstable\":%lld,"
		       "\"left_for_later\":%lld,\"seconds\":%.3f,\"flags\":{",
		       (long long)s->todo, (long long)s->profiled, (long long)s->failed,
		       (long long)s->unstable, (long long)s->skipped_budget, s->seconds);
		for (int f = 0; f < pn_n_flags; f++)
			printf("%s\"%s\":%lld", f ? "," : "", pn_flag_names[f], (long long)s->flag_count[f]);
		printf("}}\n");
		return;
	}
	if (s->ranges.models || s->ranges.failed || s->ranges.not_run || s->ranges.left)
	{
		printf("ranges: %lld models run, %lld cut input ranges recorded, %.1f s",
		       (long long)s->ranges.models, (long long)s->ranges.subgraphs, s->ranges.seconds);
		pn_warning_clause(stdout, s->ranges.failed, "ranges-not-run", NULL);
		pn_warning_clause(stdout, s->ranges.not_run, "ranges-too-big", NULL);
		printf("\n");
	}
	if (s->ranges.left)
		printf("ranges: %lld models left for a later run (at half the budget); %lld subgraphs "
		       "wait for their ranges\n", (long long)s->ranges.left, (long long)s->waiting_ranges);
	printf("exec: %lld subgraphs profiled (%lld failed, %lld unstable), %lld left for a later "
	       "run, %.1f s; flags:", (long long)s->profiled, (long long)s->failed,
	       (long long)s->unstable, (long long)(s->todo - s->profiled), s->seconds);
	/* the compiler- flags are the baseline's (exec/baseline.h), which prints
	 * them: exec's own count of them is always 0, read as "no regression" */
	for (int f = 0; f < pn_n_flags; f++)
		if (f != PN_FLAG_COMPILER_REGRESSION && f != PN_FLAG_COMPILER_GAP)
			printf(" %s %lld", pn_flag_names[f], (long long)s->flag_count[f]);
	pn_warning_clause(stdout, s->failed, "profile-failed", NULL);
	printf("\n");
	print_times(s);
}

int pn_call_exec(pn_ctx *ctx, const pn_profile_opts *o)
{
	char err[PN_ERRLEN];
	pn_profile_stats s;
	if (pn_exec_stage(ctx->store, o, &s, err))
		return pn_die("exec: %s", err);
	print_stats(&s, ctx->json);
	return 0;
}

/* --only FILE: the hashes, sorted, for a binary search per subgraph. */
typedef struct hash_set {
	uint8_t (*h)[16];
	size_t n;
} hash_set;

static hash_set only_set;

static int cmp_hash(const void *a, const void *b)
{
	return memcmp(a, b, 16);
}

static int in_only_set(void *ud, const uint8_t hash[16])
{
	const hash_set *hs = ud;
	return hs->n && bsearch(hash, hs->h, hs->n, 16, cmp_hash) != NULL;
}

static int read_only_file(const char *path, hash_set *hs)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return pn_die("--only: %s: %s", path, strerror(errno));
	char line[256];
	size_t cap = 0;
	for (int no = 1; fgets(line, sizeof line, f); no++) {
		line[strcspn(line, "\r\n")] = 0;
		if (!line[0])
			continue;
		pn_key k;
		if (pn_key_parse(line, &k)) {
			fclose(f);
			return pn_die("--only: %s: line %d: not a 32-digit hex hash: '%s'", path, no,
				      line);
		}
		if (hs->n == cap) {
			cap = cap ? cap * 2 : 256;
			void *g = realloc(hs->h, cap * 16);
			if (!g) {
				fclose(f);
				return pn_die("out of memory");
			}
			hs->h = g;
		}
		memcpy(hs->h[hs->n++], k.b, 16);
	}
	fclose(f);
	if (hs->n)
		qsort(hs->h, hs->n, 16, cmp_hash);
	return 0;
}

static void print_planned(void *ud, const uint8_t hash[16])
{
	(void)ud;
	char hex[33];
	pn_hex(hash, 16, hex);
	printf("%s\n", hex);
}

static int check(pn_ctx *ctx)
{
	(void)ctx;
	if (strategy && pn_strategy_mask(strategy, &po.strategies))
		return pn_die("--strategy: unknown strategy in '%s'", strategy);
	if (redo) {
		char *copy = strdup(redo);
		int bad = !copy || flags_mask(copy, &po.redo_flags);
		free(copy);
		if (bad || !po.redo_flags)
			return pn_die("--redo: unknown flag in '%s'", redo);
	}
	if (protocol && (po.protocol = pn_protocol_index(protocol)) < 0)
		return pn_die("--protocol: unknown protocol '%s' (there are: adaptive, full)", protocol);
	if (po.trials < 1 || po.warmups < 0 || po.max_repeats < 0)
		return pn_die("--trials must be at least 1, --warmup and --repeats at least 0");
	if (only) {
		if (read_only_file(only, &only_set))
			return 1;
		po.accept = in_only_set;
		po.accept_ud = &only_set;
	}
	if (plan_only)
		po.on_plan = print_planned;
	if (baseline && strcmp(baseline, "ort"))
		return pn_die("--baseline: unknown backend '%s' (there is: ort)", baseline);
	bo.max_repeats = po.max_repeats;
	return 0;
}

static int run(pn_ctx *ctx)
{
	po.threads = ctx->threads;
	if (!plan_only) {
		/* the profiles are committed first: a baseline that cannot run
		 * (no ORT library) leaves them as a plain exec would */
		int rc = pn_call_exec(ctx, &po);
		if (!rc && baseline) {
			bo.budget_s = po.budget_s;
			bo.limit = po.limit;
			rc = pn_call_baseline(ctx, &bo, "exec");
		}
		return rc;
	}
	char err[PN_ERRLEN];
	pn_profile_stats s;
	return pn_exec_stage(ctx->store, &po, &s, err) ? pn_die("exec: %s", err) : 0;
}

const pn_cmd_spec pn_cmd_exec = {
	.options = options,
	.summary = "profile every subgraph not yet measured and flag the slow ones",
	.description = "record the value ranges of every model's run once, then profile every "
		       "unique subgraph this executor build has not measured: correctness run, "
		       "warm-up, timed trials until the flags are decided (median, IQR), roofline "
		       "bounds and flags "
		       "(docs/executor.md); incremental, resumable after SIGKILL, progress bar with ETA on "
		       "a terminal",
	.details = "First runs every model not run yet once on its own inputs (test_data_set_0,\n"
		   "else seeded ones) and records the range of values each subgraph input takes\n"
		   "there.  Then profiles every stored subgraph that this executor build has\n"
		   "not measured: seeded inputs (floats in those ranges), a correctness run (no\n"
		   "NaN; bitwise equal on the warm-up and on the first 1-thread trial), a\n"
		   "warm-up run, 3 to T timed trials, stopped once the median is far enough from\n"
		   "every threshold the flags compare it with (--protocol full: W warm-ups\n"
		   "and T trials), median and IQR (repeated up to R times while\n"
		   "IQR/median > 0.2, then marked unstable), roofline bounds from the\n"
		   "calibration (measured first if the store has none) and flags: slow,\n"
		   "fusible, overhead-bound, parallel-slowdown, unstable, failed.\n"
		   "Subgraphs are timed one at a time, in hash order, with nothing else\n"
		   "running; the set-up and correctness runs of the next batch run on every\n"
		   "thread at once between timings.  A killed run resumes.  The summary gives\n"
		   "subgraphs/s and where the time went (--json: \"time\").\n",
	.check = check,
	.run = run,
};
