/*
 * report.c - `passnet report --out DIR`: an HTML page on the profiled
 * subgraphs (export/report.c writes it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "common/util.h"
#include "export/report.h"
#include "store/query.h"

static const char usage[] =
	"usage: passnet report --out DIR [--top N]\n"
	"\n"
	"Writes DIR/index.html, one self-contained page (inline CSS and SVG, no\n"
	"script, nothing fetched) on the store's profiled subgraphs: headline\n"
	"figures and the machine calibration, a histogram of time / fused roofline\n"
	"bound, the share of each flag, time against bound (log-log), the slowest\n"
	"patterns with their ops and shapes, and a summary per source.  The same\n"
	"store gives the same page byte for byte.\n"
	"  --out DIR  where to write (created if missing)\n"
	"  --top N    rows in the slow-pattern table (default 25)\n";

int cmd_report(int argc, char **argv, const pn_cli *cli)
{
	if (pn_wants_help(argc, argv, usage))
		return 0;
	pn_report_opts o = {0};
	const char *v;
	for (int i = 1; i < argc; i++) {
		char *end;
		if ((v = pn_opt_value(argc, argv, &i, "--out"))) {
			o.out_dir = v;
		} else if ((v = pn_opt_value(argc, argv, &i, "--top"))) {
			long n = strtol(v, &end, 10);
			if (*end || end == v || n < 1 || n > 100000)
				return pn_die("--top wants a count from 1 to 100000, not '%s'", v);
			o.top = (int)n;
		} else {
			fputs(usage, stderr);
			return 2;
		}
	}
	if (!o.out_dir || !*o.out_dir) {
		fputs(usage, stderr);
		return 2;
	}
	pn_store *st;
	pn_rtxn *t;
	if (pn_open_for_reading(cli->db, &st, &t))
		return 1;
	char err[PN_ERRLEN];
	pn_report_summary s;
	int rc = pn_report_write(t, &o, &s, err);
	pn_rtxn_end(t);
	pn_store_close(st);
	if (rc)
		return pn_die("report: %s", err);
	if (cli->json) {
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
