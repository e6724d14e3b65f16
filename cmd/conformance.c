/*
 * conformance.c - `passnet conformance DIR...`: runs ONNX backend-test
 * folders (model.onnx + test_data_set_N/) on the executor and compares every
 * output with the expected one (rtol 1e-3, atol 1e-7, as the ONNX backend
 * tests do).
 *
 * Each case runs in a child process, so a crash or a hang (60 s limit) is
 * reported as that case's failure and the run goes on.  With --expect FILE
 * the exit status says whether the failures are exactly the listed ones:
 * a new failure or a listed case that now passes both fail the run, which
 * keeps the list of known failures honest.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "runtime/compare.h"
#include "runtime/session.h"
#include "model/onnx.h"
#include "extract/sources.h"

#define CONF_TIMEOUT 60

typedef struct expect {
	char **names;
	int n;
	uint8_t *seen;
} expect;

typedef struct conf {
	int passed, failed, skipped, unexpected_fail, unexpected_pass;
	const char *filter;
	int fork, threads;
	double rtol, atol;
	expect *ex;
	const char *source;   /* the SOURCE argument being walked */
} conf;

enum { CASE_PASS, CASE_FAIL, CASE_SKIP };

static int folder_read(void *ud, const char *rel, void **data, size_t *len, char *err)
{
	return pn_folder_read(ud, rel, data, len, err);
}

static int folder_list(void *ud, const char *rel, char ***names, char *err)
{
	return pn_folder_list(ud, rel, names, err);
}

/* Compares every output of one run with its expected value. */
static int check_outputs(const conf *c, const pn_graph *g, const pn_testset *ts, pn_tensor **outs,
			 double *max_abs, double *max_rel, char *line, size_t cap)
{
	if (ts->n_outputs > g->n_outputs) {
		snprintf(line, cap, "FAIL expected %d outputs, graph has %d", ts->n_outputs, g->n_outputs);
		return -1;
	}
	for (int k = 0; k < ts->n_outputs; k++) {
		pn_cmp r;
		if (pn_compare(outs[k], ts->outputs[k], c->rtol, c->atol, &r)) {
			snprintf(line, cap, "FAIL output %d (%s): %s: %s", k, g->values[g->outputs[k]].name,
				 pn_cmp_class_name(r.cls), r.what);
			return -1;
		}
		*max_abs = r.max_abs > *max_abs ? r.max_abs : *max_abs;
		*max_rel = r.max_rel > *max_rel ? r.max_rel : *max_rel;
	}
	return 0;
}

/* Runs one case; writes "PASS ...", "FAIL ..." or "SKIP ..." to line. */
static int run_case(const conf *c, const pn_unit *u, char *line, size_t cap)
{
	char err[PN_ERRLEN] = "";
	pn_model *m = NULL;
	pn_fileio io = {folder_read, folder_list, u->folder};
	if (pn_model_load(u->bytes, u->len, &io, 1, &m, err)) {
		snprintf(line, cap, "FAIL load: %s", err);
		return CASE_FAIL;
	}
	if (!m->n_testsets) {
		pn_model_free(m);
		snprintf(line, cap, "SKIP no test_data_set_N folder");
		return CASE_SKIP;
	}
	for (int t = 0; t < m->n_testsets; t++) {
		const pn_testset *ts = &m->testsets[t];
		if (ts->n_inputs < m->graph->n_inputs)
			snprintf(line, cap, "SKIP test_data_set_%d has %d of the %d inputs", t,
				 ts->n_inputs, m->graph->n_inputs);
		else if (!ts->n_outputs)   /* nothing to compare: not a pass */
			snprintf(line, cap, "SKIP test_data_set_%d has no expected output", t);
		else
			continue;
		pn_model_free(m);
		return CASE_SKIP;
	}
	pn_exec_opts o = {.seed = 1, .threads = c->threads};
	pn_session *s = NULL;
	int bad = pn_session_new(m->graph, &o, &s, err);
	double max_abs = 0, max_rel = 0;
	const pn_graph *g = m->graph;
	pn_tensor **outs = calloc((size_t)g->n_outputs + 1, sizeof(void *));
	for (int t = 0; !bad && t < m->n_testsets; t++) {
		const pn_testset *ts = &m->testsets[t];
		if (pn_session_run(s, ts->inputs, ts->n_inputs, outs, err)) {
			snprintf(line, cap, "FAIL run: %s", err);
			bad = 1;
		} else if (check_outputs(c, g, ts, outs, &max_abs, &max_rel, line, cap)) {
			bad = 1;
		}
		for (int k = 0; k < g->n_outputs; k++) {
			pn_tensor_free(outs[k]);
			outs[k] = NULL;
		}
	}
	if (!bad)
		snprintf(line, cap, "PASS max_abs=%.3g max_rel=%.3g", max_abs, max_rel);
	else if (!*line)
		snprintf(line, cap, "FAIL %s", err);
	free(outs);
	pn_session_free(s);
	pn_model_free(m);
	return bad ? CASE_FAIL : CASE_PASS;
}

/* The child reports its line through a pipe; a crash or the time limit
 * becomes the case's failure. */
static int run_case_forked(const conf *c, const pn_unit *u, char *line, size_t cap)
{
	int fds[2];
	if (pipe(fds))
		return snprintf(line, cap, "FAIL pipe: %s", strerror(errno)), CASE_FAIL;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		alarm(CONF_TIMEOUT);
		char buf[1024] = "";
		run_case(c, u, buf, sizeof buf);
		ssize_t w = write(fds[1], buf, strlen(buf));
		(void)w;
		_exit(0);
	}
	close(fds[1]);
	size_t got = 0;
	ssize_t r;
	while (got + 1 < cap && (r = read(fds[0], line + got, cap - 1 - got)) > 0)
		got += (size_t)r;
	line[got] = 0;
	close(fds[0]);
	int status = 0;
	waitpid(pid, &status, 0);
	if (!got) {
		if (WIFSIGNALED(status))
			snprintf(line, cap, "FAIL crashed: %s%s", strsignal(WTERMSIG(status)),
				 WTERMSIG(status) == SIGALRM ? " (time limit)" : "");
		else
			snprintf(line, cap, "FAIL no result");
	}
	return !strncmp(line, "PASS", 4) ? CASE_PASS : !strncmp(line, "SKIP", 4) ? CASE_SKIP : CASE_FAIL;
}

/* Case name: the source folder's name, then the model's folder inside it
 * ("node/test_abs", "zoo/squeezenet1_1.tar.gz!squeezenet1_1"). */
static void case_name(const char *source, const char *path, char *out, size_t cap)
{
	char src[4096];
	snprintf(src, sizeof src, "%s", source);
	size_t l = strlen(src);
	while (l > 1 && src[l - 1] == '/')
		src[--l] = 0;
	const char *base = strrchr(src, '/') ? strrchr(src, '/') + 1 : src;
	const char *slash = strrchr(path, '/');
	if (slash)
		snprintf(out, cap, "%s/%.*s", base, (int)(slash - path), path);
	else
		snprintf(out, cap, "%s", base);
}

static int expect_index(const expect *e, const char *name)
{
	for (int i = 0; e && i < e->n; i++)
		if (!strcmp(e->names[i], name))
			return i;
	return -1;
}

static void tally_case(conf *c, const char *name, int result, const char *line)
{
	int ei = expect_index(c->ex, name);
	const char *note = "";
	if (ei >= 0)
		c->ex->seen[ei] = 1;
	if (result == CASE_SKIP) {
		c->skipped++;
	} else if (result == CASE_FAIL) {
		c->failed++;
		if (c->ex && ei < 0) {
			c->unexpected_fail++;
			note = " [UNEXPECTED]";
		}
	} else {
		c->passed++;
		if (ei >= 0) {
			c->unexpected_pass++;
			note = " [UNEXPECTED PASS: remove it from the list]";
		}
	}
	printf("%.4s %s %s%s\n", line, name, line + 5, note);
	fflush(stdout);
}

static int on_unit(void *ud, pn_unit *u)
{
	conf *c = ud;
	char name[1024], line[1024];
	case_name(c->source, u->path, name, sizeof name);
	if (!c->filter || strstr(name, c->filter)) {
		int r = c->fork ? run_case_forked(c, u, line, sizeof line)
				: run_case(c, u, line, sizeof line);
		tally_case(c, name, r, line);
	}
	pn_unit_free(u);
	return 0;
}

static void on_error(void *ud, const char *source, const char *path, const char *msg)
{
	conf *c = ud;
	char name[1024], line[1200];
	case_name(source, path, name, sizeof name);
	snprintf(line, sizeof line, "FAIL read: %s", msg);
	tally_case(c, name, CASE_FAIL, line);
}

static int read_expect(const char *path, expect *e)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return pn_die("%s: %s", path, strerror(errno));
	char line[1024];
	while (fgets(line, sizeof line, f)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		line[strcspn(line, "\t \n")] = 0;
		char **nn = realloc(e->names, sizeof(char *) * (size_t)(e->n + 1));
		if (!nn)
			break;
		e->names = nn;
		e->names[e->n++] = strdup(line);
	}
	fclose(f);
	e->seen = calloc((size_t)e->n + 1, 1);
	return 0;
}

static int report(const conf *c, const expect *ex)
{
	printf("%d passed, %d failed", c->passed, c->failed);
	if (c->skipped)
		printf(", %d skipped (no complete test data)", c->skipped);
	printf("\n");
	if (!c->ex)
		return c->failed ? 1 : 0;
	int missing = 0;
	for (int i = 0; i < ex->n; i++)
		if (!ex->seen[i] && !c->filter)
			missing++;
	if (c->unexpected_fail || c->unexpected_pass)
		printf("conformance: %d unexpected failures, %d unexpected passes\n",
		       c->unexpected_fail, c->unexpected_pass);
	if (missing)
		printf("conformance: %d listed cases were not found\n", missing);
	return c->unexpected_fail || c->unexpected_pass || missing ? 1 : 0;
}

static conf co = {.rtol = 1e-3, .atol = 1e-7};
static expect ex;
static const char *expect_path;
static int no_fork;

static const pn_option options[] = {
	PN_STRING(0, "expect", "FILE", &expect_path, NULL,
		  "known failures, one 'case<TAB>reason' per line; exit 0 only if the failures "
		  "are exactly these"),
	PN_STRING(0, "filter", "TEXT", &co.filter, NULL, "only cases whose name contains TEXT"),
	PN_DOUBLE(0, "rtol", "R", &co.rtol, "1e-3", "relative tolerance, as the ONNX backend tests use"),
	PN_DOUBLE(0, "atol", "A", &co.atol, "1e-7", "absolute tolerance, as the ONNX backend tests use"),
	PN_FLAG(0, "no-fork", &no_fork, "run cases in this process (for debugging)"),
	PN_OPT_TABLE_END,
};

static int check(pn_ctx *ctx)
{
	(void)ctx;
	if (expect_path) {
		if (read_expect(expect_path, &ex))
			return 1;
		co.ex = &ex;
	}
	return 0;
}

static int run(pn_ctx *ctx)
{
	co.fork = !no_fork;
	co.threads = ctx->threads;
	pn_walk_cb cb = {on_unit, on_error, &co};
	for (int i = 0; i < ctx->argc; i++) {
		char err[PN_ERRLEN];
		co.source = ctx->argv[i];
		if (pn_source_walk(ctx->argv[i], ctx->argv[i], &cb, err) < 0)
			return pn_die("%s", err);
	}
	return report(&co, &ex);
}

const pn_cmd_spec pn_cmd_conformance = {
	.options = options,
	.args = "SOURCE...",
	.min_args = 1,
	.max_args = -1,
	.summary = "run ONNX backend-test folders and compare outputs",
	.description = "run ONNX backend-test cases found in folders or archives, one line per case "
		       "and `N passed, N failed`",
	.details = "Runs ONNX backend-test cases: every model found in the SOURCEs (folders,\n"
		   "archives, model-zoo layouts) that has test_data_set_N/ folders beside it\n"
		   "is run on each set and its outputs compared with the expected ones.\n"
		   "Prints one line per case and 'N passed, N failed' (models without test\n"
		   "data are skipped and counted apart).\n",
	.check = check,
	.run = run,
};
