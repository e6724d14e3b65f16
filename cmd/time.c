/*
 * time.c - `passnet time PATH...`: wall time of the executor on models.
 *
 * Each PATH (an .onnx file or a backend-test folder) is loaded once, its
 * inputs prepared as `passnet run` prepares them (runtime/feed.h), and one
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
#include "runtime/session.h"
#include "model/onnx.h"

typedef struct time_opts {
	int trials, warmup, threads, json;
	uint64_t seed;
	pn_dimbind bind;
} time_opts;

static time_opts to = {.trials = 10, .warmup = 3, .seed = 1};

static const pn_option options[] = {
	PN_INT(0, "trials", "T", &to.trials, "10", "timed runs"),
	PN_INT(0, "warmup", "W", &to.warmup, "3", "untimed runs first"),
	PN_UINT64(0, "seed", "S", &to.seed, "1", "seed for regenerated weights and random inputs"),
	PN_CALLBACK(0, "dim", "NAME=V", &to.bind, pn_opt_dim, "1", "value of a symbolic input dim"),
	PN_OPT_TABLE_END,
};

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

/* Counts out of range are usage errors, as a malformed one is. */
static int check(pn_ctx *ctx)
{
	if (to.trials < 1 || to.trials > 1000000)
		return pn_usage_error(ctx->usage, "--trials wants a whole number >= 1, got '%d'", to.trials);
	if (to.warmup < 0 || to.warmup > 1000000)
		return pn_usage_error(ctx->usage, "--warmup wants a whole number >= 0, got '%d'", to.warmup);
	return 0;
}

static int run(pn_ctx *ctx)
{
	/* One thread unless told: single-thread times are the stable ones,
	 * and what the comparison with other runtimes is made at. */
	to.json = ctx->json;
	to.threads = ctx->threads > 0 ? ctx->threads : 1;
	int failed = 0;
	for (int i = 0; i < ctx->argc; i++) {
		const char *path = ctx->argv[i];
		char err[PN_ERRLEN] = "";
		time_stats st;
		if (time_model(path, &to, &st, err)) {
			/* Loader messages often start with the path already. */
			if (strncmp(err, path, strlen(path)))
				pn_errprefix(err, "%s", path);
			pn_error_line("time: %s", err);
			failed++;
			continue;
		}
		print_stats(path, &st, &to);
		fflush(stdout);
	}
	pn_dimbind_free(&to.bind);
	return failed ? 1 : 0;
}

const pn_cmd_spec pn_cmd_time = {
	.options = options,
	.args = "PATH...",
	.min_args = 1,
	.max_args = -1,
	.summary = "time ONNX models or backend-test folders on the executor",
	.description = "time `.onnx` files or backend-test folders on the executor (1 thread unless "
		       "`-j N`): after W warm-up runs (default 3), T timed runs (default 10) of the "
		       "run call alone; one line `median_ms iqr_ms trials path` per model, or with "
		       "`--json` `{\"path\",\"median_ms\",\"iqr_ms\",\"min_ms\",\"trials\",\"threads\"}`",
	.details = "Times the reference executor on models.  PATH is an .onnx file or a\n"
		   "folder holding model.onnx; the inputs are those of its test_data_set_0\n"
		   "when present, else seeded random inputs (symbolic dims bound to 1 unless\n"
		   "--dim says otherwise), as `passnet run` uses.  After W warm-up runs, each\n"
		   "of T runs is timed (wall clock, CLOCK_MONOTONIC, around the run call only)\n"
		   "on -j/--threads N executor threads (default 1 for this command).\n"
		   "Prints one line per model: median_ms iqr_ms trials path; with --json one\n"
		   "object per line: path, median_ms, iqr_ms, min_ms, trials, threads.\n"
		   "A PATH that fails is reported on stderr and the others are still timed;\n"
		   "the exit status is then 1.\n",
	.check = check,
	.run = run,
};
