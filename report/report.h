/*
 * report.h - the HTML report of the profiled subgraphs (`passnet report`).
 *
 * One self-contained page, DIR/index.html: inline CSS and SVG, no script,
 * nothing fetched.  Every figure in it comes from the store, sorted, so the
 * same store gives the same bytes (no timestamps, no store path).
 *
 * What it reads from a Profile record (schemas/passnet.proto):
 *   median_us       the measured time;
 *   bound_fused_us  the fused roofline bound; a profile counts as measured
 *                   when both are > 0 and it did not fail;
 *   flags           any of slow, fusible, overhead-bound, parallel-slowdown,
 *                   failed, unstable (others are listed apart);
 *   status          "failed" or "unstable" count as those flags too, so a
 *                   profiler that sets only the status is still counted;
 *   flops, bytes_fused  the cut's work, by which little-work cuts are set
 *                   apart from the ranking by excess time (report/rank.h;
 *                   absent, the subgraph record's);
 *   denormal_inputs, denormal_outputs: profiles with either counted as
 *                   run on denormal values;
 *   executor_build, threads, thresholds: shown as how it was measured;
 *   ort             the ONNX Runtime baseline (exec/baseline.h): the
 *                   compiler-regression share, its distribution by size and
 *                   op set (grouped as `passnet stats` groups it), a scatter
 *                   of ORT at level ALL against disabled, the worst ones.
 * Profiles are keyed by the 16-byte subgraph hash; one whose subgraph is
 * not in the store is counted as an orphan and otherwise ignored.
 */
#ifndef PN_REPORT_H
#define PN_REPORT_H

#include <stdint.h>

#include "store/store.h"

typedef struct pn_report_opts {
	const char *out_dir;   /* created if missing (mkdir -p) */
	int top;               /* rows of the table by excess time (0: 25) */
} pn_report_opts;

typedef struct pn_report_summary {
	int64_t models, sources, subgraphs, patterns, profiled, measured, orphans;
	char path[4096];       /* the page written */
} pn_report_summary;

int pn_report_write(pn_rtxn *t, const pn_report_opts *o, pn_report_summary *sum, char *err);

#endif
