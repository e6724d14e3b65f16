/*
 * calibrate.c - `passnet calibrate`: measures peak FLOP/s, memory bandwidth
 * and the executor's per-node overhead, and keeps them in the store.
 */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "common/util.h"
#include "exec/calibrate.h"
#include "store/query.h"

static int only_show;

static const pn_option options[] = {
	PN_FLAG(0, "show", &only_show, "print the stored calibration, measure nothing"),
	PN_OPT_TABLE_END,
};

static void print_json_list(const char *name, const double *v, int n)
{
	printf("\"%s\":[", name);
	for (int t = 1; t <= n; t++)
		printf("%s%.6g", t > 1 ? "," : "", v[t]);
	putchar(']');
}

static void print_calibration(const pn_calibration *c, const char *db, int json)
{
	if (json) {
		printf("{\"db\":");
		pn_json_str(stdout, db);
		printf(",\"machine\":");
		pn_json_str(stdout, c->machine);
		printf(",\"host\":");
		pn_json_str(stdout, c->host);
		printf(",\"cpu_model\":");
		pn_json_str(stdout, c->cpu_model);
		printf(",\"threads\":%d,", c->max_threads);
		print_json_list("peak_gflops", c->peak_gflops, c->max_threads);
		putchar(',');
		print_json_list("bandwidth_gbs", c->bandwidth_gbs, c->max_threads);
		printf(",\"node_overhead_us\":%.6g}\n", c->node_overhead_us);
		return;
	}
	printf("machine  %s: %s, %s\n", c->machine[0] ? c->machine : "(no id)",
	       c->host[0] ? c->host : "(host not recorded)", c->cpu_model[0] ? c->cpu_model : "?");
	printf("threads  peak GFLOP/s  bandwidth GB/s\n");
	for (int t = 1; t <= c->max_threads; t++)
		printf("%7d  %12.1f  %14.2f\n", t, c->peak_gflops[t], c->bandwidth_gbs[t]);
	printf("node overhead  %.3f us per node\n", c->node_overhead_us);
}

static int show(const pn_ctx *cli)
{
	pn_store *st;
	pn_rtxn *t;
	char err[PN_ERRLEN];
	if (pn_open_for_reading(cli->db, &st, &t))
		return 1;
	pn_calibration c;
	int rc = pn_calibration_get(t, &c, err);
	pn_rtxn_end(t);
	pn_store_close(st);
	if (rc > 0)
		return pn_die("no calibration in %s (measure with `passnet calibrate`)", cli->db);
	if (rc < 0)
		return pn_die("%s", err);
	print_calibration(&c, cli->db, cli->json);
	return 0;
}

static int store(pn_store *st, pn_calibration *c, char *err)
{
	pn_writer *w;
	if (pn_writer_open(st, &w, 0, err))
		return -1;
	if (pn_calibration_put(w, c, err)) {
		pn_writer_abandon(w);
		return -1;
	}
	return pn_writer_close(w, err);
}

/* The store is opened here, not by passnet.c: read-only for --show (a
 * missing store is an error), writable (created) to measure. */
static int run(pn_ctx *cli)
{
	if (only_show)
		return show(cli);
	/* Open the store first: a bad --db fails before seconds of measuring. */
	pn_store *st;
	char err[PN_ERRLEN];
	if (pn_store_open(&st, cli->db, 0, err))
		return pn_die("%s", err);
	pn_calibration c;
	int rc = pn_calibrate(cli->threads, &c, err);
	if (!rc)
		rc = store(st, &c, err);
	pn_store_close(st);
	if (rc)
		return pn_die("calibrate: %s", err);
	print_calibration(&c, cli->db, cli->json);
	if (!cli->json && !cli->quiet)
		printf("stored in %s (meta \"calibration\" and \"machine/%s\")\n", cli->db, c.machine);
	return 0;
}

const pn_cmd_spec pn_cmd_calibrate = {
	.options = options,
	.summary = "measure this machine's peak FLOP/s, bandwidth and per-node overhead",
	.description = "measure this machine's peak GFLOP/s (FMA loop), memory bandwidth (triad "
		       "over 288 MiB) for 1..N threads and the executor's per-node overhead; stored "
		       "in meta for the roofline bounds",
	.details = "Measures this machine's limits and stores them in the store's meta table\n"
		   "(\"calibration\"), where profiling reads them for roofline bounds:\n"
		   "  peak GFLOP/s   a single-precision FMA loop per thread, 1..N threads\n"
		   "  bandwidth      STREAM triad a = b + s*c over 288 MiB, 1..N threads;\n"
		   "                 GB/s of 1e9 bytes, 3 x 8 bytes per element (the\n"
		   "                 write-allocate read is not counted)\n"
		   "  node overhead  the executor's time per node of a 64-node chain of\n"
		   "                 Relus on one element (median of 7 batches)\n"
		   "N is -j/--threads (default: every core).  Each figure is the median of\n"
		   "7 repetitions; it takes a few seconds, best on an otherwise idle machine.\n"
		   "The calibration names the machine: host name (gethostname, or\n"
		   "$PASSNET_HOSTNAME when set) and CPU model.  It is kept as meta\n"
		   "\"machine/<id>\" (id: XXH3-64 of the record) and made the store's current\n"
		   "machine; profiles name the machine that measured them.\n"
		   "The store is created if missing; a previous calibration stays as a machine.\n"
		   "With --json, one JSON object.\n",
	.run = run,
};
