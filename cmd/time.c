/*
 * time.c - `passnet time PATH...`: wall time of the executor on models.
 *
 * Each PATH (an .onnx file or a backend-test folder) is loaded once, its
 * inputs prepared as `passnet run` prepares them (cmd/feed.h), and one
 * session runs W untimed warm-up runs, then T timed ones.  Only
 * pn_session_run is inside the clock: loading, input preparation and
 * freeing the outputs are not, so the figure is the executor's own cost and
 * can be set beside another runtime's run call (bench/ort/).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "runtime/feed.h"
#include "common/err.h"
#include "common/timing.h"
#include "common/util.h"
#include "runtime/exec.h"
#include "model/onnx.h"

static const char usage[] =
	"usage: passnet time [--threads N] [--trials T] [--warmup W] [--seed S]\n"
	"                    [--dim NAME=V]... [--json] PATH...\n"
	"\n"
	"Times the reference executor on models.  PATH is an .onnx file or a\n"
	"folder holding model.onnx; the inputs are those of its test_data_set_0\n"
	"when present, else seeded random inputs (symbolic dims bound to 1 unless\n"
	"--dim says otherwise), as `passnet run` uses.  After W warm-up runs, each\n"
	"of T runs is timed (wall clock, CLOCK_MONOTONIC, around the run call only).\n"
	"  -j, --threads N  executor threads (default 1 for this command)\n"
	"  --trials T     timed runs (default 10)\n"
	"  --warmup W     untimed runs first (default 3)\n"
	"  --seed S       seed for regenerated weights and random inputs (default 1)\n"
	"  --dim NAME=V   value of a symbolic input dim (default 1)\n"
	"Prints one line per model: median_ms iqr_ms trials path; with --json one\n"
	"object per line: path, median_ms, iqr_ms, min_ms, trials, threads.\n"
	"A PATH that fails is reported on stderr and the others are still timed;\n"
	"the exit status is then 1.\n";

typedef struct time_opts {
	int trials, warmup, threads, json;
	uint64_t seed;
	pn_dimbind bind;
} time_opts;

typedef pn_time_summary time_stats;   /* milliseconds */

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* One run: only the run call is timed; the outputs are freed after. */
static int timed_run(pn_session *s, const pn_feed *f, pn_tensor **out, int n_out, double *ms,
		     char *err)
{
	double t0 = now_ms();
	int rc = pn_session_run(s, f->v, f->n, out, err);
	*ms = now_ms() - t0;
	for (int i = 0; i < n_out; i++) {
		pn_tensor_free(out[i]);
		out[i] = NULL;
	}
	return rc;
}

static int measure(pn_session *s, const pn_feed *f, int n_out, const time_opts *o, time_stats *st,
		   char *err)
{
	pn_tensor **out = calloc((size_t)n_out + 1, sizeof(pn_tensor *));
	double *t = calloc((size_t)o->trials, sizeof(double));
	double dummy;
	int rc = out && t ? 0 : pn_fail(err, "out of memory");
	for (int i = 0; !rc && i < o->warmup; i++)
		rc = timed_run(s, f, out, n_out, &dummy, err);
	for (int i = 0; !rc && i < o->trials; i++)
		rc = timed_run(s, f, out, n_out, &t[i], err);
	if (!rc)
		*st = pn_summarise_times(t, o->trials);
	free(out);
	free(t);
	return rc;
}

static int time_model(const char *path, const time_opts *o, time_stats *st, char *err)
{
	pn_model *m = NULL;
	pn_session *s = NULL;
	pn_feed feed = {0};
	if (pn_model_load_path(path, 1, &m, err))
		return -1;
	pn_exec_opts eo = {.seed = o->seed, .threads = o->threads};
	int rc = pn_feed_prepare(m, NULL, &o->bind, o->seed, &feed, err);
	if (!rc)
		rc = pn_session_new(m->graph, &eo, &s, err);
	if (!rc)
		rc = measure(s, &feed, m->graph->n_outputs, o, st, err);
	pn_session_free(s);
	pn_feed_free(&feed);
	pn_model_free(m);
	return rc;
}

static void print_stats(const char *path, const time_stats *st, const time_opts *o)
{
	if (!o->json) {
		printf("%.6f %.6f %d %s\n", st->median, st->iqr, o->trials, path);
		return;
	}
	printf("{\"path\":");
	pn_json_str(stdout, path);
	printf(",\"median_ms\":%.6f,\"iqr_ms\":%.6f,\"min_ms\":%.6f,\"trials\":%d,\"threads\":%d}\n",
	       st->median, st->iqr, st->min, o->trials, o->threads);
}

/* A count option: a whole number of at least lo. */
static int parse_count(const char *name, const char *v, int lo, int *out)
{
	char *end;
	long x = strtol(v, &end, 10);
	if (*end || end == v || x < lo || x > 1000000) {
		pn_die("%s wants a whole number >= %d, got '%s'", name, lo, v);
		return -1;
	}
	*out = (int)x;
	return 0;
}

/* Options; the paths are left in paths[0..*n) (argv order). */
static int parse_args(int argc, char **argv, time_opts *o, char **paths, int *n)
{
	const char *v;
	for (int i = 1; i < argc; i++) {
		if ((v = pn_opt_value(argc, argv, &i, "--trials"))) {
			if (parse_count("--trials", v, 1, &o->trials))
				return 2;
		} else if ((v = pn_opt_value(argc, argv, &i, "--warmup"))) {
			if (parse_count("--warmup", v, 0, &o->warmup))
				return 2;
		} else if ((v = pn_opt_value(argc, argv, &i, "--threads"))) {
			if (parse_count("--threads", v, 1, &o->threads))
				return 2;
		} else if ((v = pn_opt_value(argc, argv, &i, "--seed"))) {
			o->seed = strtoull(v, NULL, 10);
		} else if (!strcmp(argv[i], "--json")) {
			o->json = 1;
		} else if ((v = pn_opt_value(argc, argv, &i, "--dim"))) {
			if (pn_parse_dim(&o->bind, v)) {
				pn_die("--dim wants NAME=V, got '%s'", v);
				return 2;
			}
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fputs(usage, stderr);
			return 2;
		} else {
			paths[(*n)++] = argv[i];
		}
	}
	if (!*n) {
		fputs(usage, stderr);
		return 2;
	}
	return 0;
}

int cmd_time(int argc, char **argv, const pn_cli *cli)
{
	if (pn_wants_help(argc, argv, usage))
		return 0;
	/* One thread unless told: single-thread times are the stable ones,
	 * and what the comparison with other runtimes is made at. */
	time_opts o = {.trials = 10, .warmup = 3, .seed = 1, .json = cli->json,
		       .threads = cli->threads > 0 ? cli->threads : 1};
	char **paths = calloc((size_t)argc + 1, sizeof(char *));
	int n = 0, failed = 0;
	int rc = paths ? parse_args(argc, argv, &o, paths, &n) : pn_die("out of memory");
	for (int i = 0; !rc && i < n; i++) {
		char err[PN_ERRLEN] = "";
		time_stats st;
		if (time_model(paths[i], &o, &st, err)) {
			/* Loader messages often start with the path already. */
			if (strncmp(err, paths[i], strlen(paths[i])))
				pn_errprefix(err, "%s", paths[i]);
			pn_error_line("time: %s", err);
			failed++;
			continue;
		}
		print_stats(paths[i], &st, &o);
		fflush(stdout);
	}
	pn_dimbind_free(&o.bind);
	free(paths);
	return rc ? rc : failed ? 1 : 0;
}
