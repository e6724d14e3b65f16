/*
 * report.c - `passnet report --out DIR`: an HTML page on the profiled
 * subgraphs (report/report.c writes it).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "common/util.h"
#include "report/report.h"
#include "store/query.h"

static pn_report_opts ro;
static int top = INT_MIN;   /* INT_MIN: not given, the page's default */

static const pn_option options[] = {
	PN_REQUIRED(0, "out", "DIR", &ro.out_dir, "where to write (created if missing)"),
	PN_INT(0, "top", "N", &top, "25", "rows in the table of patterns by excess time"),
	PN_OPT_TABLE_END,
};

static int check(pn_ctx *ctx)
{
	if (!*ro.out_dir)
		return pn_usage_error(ctx->usage, "--out wants a directory");
	if (top != INT_MIN && (top < 1 || top > 100000))
		return pn_die("--top wants a count from 1 to 100000, not '%d'", top);
	ro.top = top == INT_MIN ? 0 : top;
	return 0;
}

static int run(pn_ctx *ctx)
{
	pn_rtxn *t = ctx->txn;
	char err[PN_ERRLEN];
	pn_report_summary s;
	int rc = pn_report_write(t, &ro, &s, err);
	if (rc)
		return pn_die("report: %s", err);
	if (ctx->json) {
		printf("{\"report\":");
		pn_json_str(stdout, s.path);
		printf(",\"models\":%lld,\"sources\":%lld,\"subgraphs\":%lld,\"patterns\":%lld,"
		       "\"profiled\":%lld,\"measured\":%lld,\"orphan_profiles\":%lld}\n",
		       (long long)s.models, (long long)s.sources, (long long)s.subgraphs,
		       (long long)s.patterns, (long long)s.profiled, (long long)s.measured,
		       (long long)s.orphans);
	} else {
		printf("report: %s: %lld models, %lld subgraphs, %lld profiled (%lld measured)\n",
		       s.path, (long long)s.models, (long long)s.subgraphs, (long long)s.profiled,
		       (long long)s.measured);
	}
	return 0;
}

const pn_cmd_spec pn_cmd_report = {
	.options = options,
	.summary = "write an HTML report of the profiled subgraphs",
	.description = "write DIR/index.html, a self-contained page (inline SVG, no script) on the "
		       "profiled subgraphs: headline figures with the compiler-regression share (by "
		       "size and strategy; not measured without an ORT baseline), the corpus beside the "
		       "published one (unique subgraphs per strategy, typical subgraphs and their share), "
		       "histogram of time / fused roofline "
		       "bound, flag shares, time against bound, the patterns with the most excess "
		       "time over their bound (control-flow, shape-only and little-work cuts in a "
		       "table apart) with ops and shapes, a summary per source",
	.details = "Writes DIR/index.html, one self-contained page (inline CSS and SVG, no\n"
		   "script, nothing fetched) on the store's profiled subgraphs: headline\n"
		   "figures, the compiler-regression share (\"X% of N timed subgraphs are\n"
		   "slower with ONNX Runtime's default optimisations than without\", by size\n"
		   "and by strategy, or that the ORT baseline was not measured), the corpus\n"
		   "beside the published one (unique subgraphs per strategy; typical\n"
		   "subgraphs, the published corpus's unit, and their share), the machine\n"
		   "calibration, a histogram of time / fused roofline\n"
		   "bound, the share of each flag, time against bound (log-log), the patterns\n"
		   "with their ops and shapes ranked by excess time, (time - bound) x\n"
		   "occurrences, with control-flow, shape-only and little-work cuts (under\n"
		   "4096 flops + bytes) in a short table of their own, and a summary per\n"
		   "source.  The same store gives the same page byte for byte.\n",
	.check = check,
	.run = run,
};
