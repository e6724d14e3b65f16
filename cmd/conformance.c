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
#include <dirent.h>
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
#include "exec/compare.h"
#include "exec/exec.h"
#include "extract/onnx.h"

static const char usage[] =
	"usage: passnet conformance [--expect FILE] [--filter TEXT] [--no-fork] DIR...\n"
	"\n"
	"Runs ONNX backend-test cases: each DIR is a case (model.onnx beside\n"
	"test_data_set_N/) or a folder of cases.  Prints one line per case and\n"
	"'N passed, N failed'.\n"
	"  --expect FILE  known failures, one 'case<TAB>reason' per line; exit 0\n"
	"                 only if the failures are exactly these\n"
	"  --filter TEXT  only cases whose name contains TEXT\n"
	"  --no-fork      run cases in this process (for debugging)\n";

#define CONF_RTOL 1e-3
#define CONF_ATOL 1e-7
#define CONF_TIMEOUT 60

typedef struct expect {
	char **names;
	int n;
	uint8_t *seen;
} expect;

/* Runs one case; writes "PASS ..." or "FAIL ..." (without the name) to line. */
static int run_case(const char *dir, int threads, char *line, size_t cap)
{
	char err[PN_ERRLEN] = "";
	pn_model *m = NULL;
	if (pn_model_load_path(dir, 1, &m, err)) {
		snprintf(line, cap, "FAIL load: %s", err);
		return 1;
	}
	if (!m->n_testsets) {
		pn_model_free(m);
		snprintf(line, cap, "FAIL no test_data_set_N folder");
		return 1;
	}
	pn_exec_opts o = {.seed = 1, .threads = threads};
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
			break;
		}
		for (int k = 0; k < ts->n_outputs && !bad; k++) {
			pn_cmp c;
			if (k >= g->n_outputs) {
				snprintf(line, cap, "FAIL expected %d outputs, graph has %d",
					 ts->n_outputs, g->n_outputs);
				bad = 1;
			} else if (pn_compare(outs[k], ts->outputs[k], CONF_RTOL, CONF_ATOL, &c)) {
				snprintf(line, cap, "FAIL output %d (%s): %s: %s", k,
					 g->values[g->outputs[k]].name, pn_cmp_class_name(c.cls), c.what);
				bad = 1;
			} else {
				if (c.max_abs > max_abs)
					max_abs = c.max_abs;
				if (c.max_rel > max_rel)
					max_rel = c.max_rel;
			}
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
	return bad;
}

static int run_case_forked(const char *dir, int threads, char *line, size_t cap)
{
	int fds[2];
	if (pipe(fds))
		return snprintf(line, cap, "FAIL pipe: %s", strerror(errno)), 1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		alarm(CONF_TIMEOUT);
		char buf[1024] = "";
		run_case(dir, threads, buf, sizeof buf);
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
	return strncmp(line, "PASS", 4) != 0;
}

static int is_case(const char *dir)
{
	char p[4096];
	struct stat st;
	snprintf(p, sizeof p, "%s/model.onnx", dir);
	return !stat(p, &st) && S_ISREG(st.st_mode);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Case name: "<parent>/<case>" as the known-failures list spells it. */
static void case_name(const char *dir, char *out, size_t cap)
{
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s", dir);
	size_t l = strlen(tmp);
	while (l > 1 && tmp[l - 1] == '/')
		tmp[--l] = 0;
	char *last = strrchr(tmp, '/');
	if (!last) {
		snprintf(out, cap, "%s", tmp);
		return;
	}
	*last = 0;
	char *prev = strrchr(tmp, '/');
	snprintf(out, cap, "%s/%s", prev ? prev + 1 : tmp, last + 1);
}

typedef struct tally {
	int passed, failed, unexpected_fail, unexpected_pass;
	const char *filter;
	int fork, threads;
	expect *ex;
} tally;

static int expect_index(const expect *e, const char *name)
{
	for (int i = 0; e && i < e->n; i++)
		if (!strcmp(e->names[i], name))
			return i;
	return -1;
}

static void one_case(tally *t, const char *dir)
{
	char name[512], line[1024];
	case_name(dir, name, sizeof name);
	if (t->filter && !strstr(name, t->filter))
		return;
	int bad = t->fork ? run_case_forked(dir, t->threads, line, sizeof line)
			  : run_case(dir, t->threads, line, sizeof line);
	int ei = expect_index(t->ex, name);
	const char *note = "";
	if (ei >= 0)
		t->ex->seen[ei] = 1;
	if (bad) {
		t->failed++;
		if (t->ex && ei < 0) {
			t->unexpected_fail++;
			note = " [UNEXPECTED]";
		}
	} else {
		t->passed++;
		if (ei >= 0) {
			t->unexpected_pass++;
			note = " [UNEXPECTED PASS: remove it from the list]";
		}
	}
	printf("%.4s %s %s%s\n", line, name, line + 5, note);
	fflush(stdout);
}

static int walk(tally *t, const char *dir)
{
	if (is_case(dir)) {
		one_case(t, dir);
		return 0;
	}
	DIR *d = opendir(dir);
	if (!d)
		return pn_die("%s: %s", dir, strerror(errno));
	char **names = NULL;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char **nn = realloc(names, sizeof(char *) * (size_t)(n + 1));
		if (!nn)
			break;
		names = nn;
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof(char *), cmp_names);
	for (int i = 0; i < n; i++) {
		char sub[4096];
		snprintf(sub, sizeof sub, "%s/%s", dir, names[i]);
		if (is_case(sub))
			one_case(t, sub);
		free(names[i]);
	}
	free(names);
	return 0;
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

int cmd_conformance(int argc, char **argv, const pn_cli *cli)
{
	if (pn_wants_help(argc, argv, usage))
		return 0;
	tally t = {.fork = 1, .threads = cli->threads};
	expect ex = {0};
	const char *v;
	int ndirs = 0;
	char **dirs = calloc((size_t)argc + 1, sizeof(char *));
	for (int i = 1; i < argc; i++) {
		if ((v = pn_opt_value(argc, argv, &i, "--expect"))) {
			if (read_expect(v, &ex))
				return 1;
			t.ex = &ex;
		} else if ((v = pn_opt_value(argc, argv, &i, "--filter"))) {
			t.filter = v;
		} else if (!strcmp(argv[i], "--no-fork")) {
			t.fork = 0;
		} else if (argv[i][0] == '-') {
			fputs(usage, stderr);
			return 2;
		} else {
			dirs[ndirs++] = argv[i];
		}
	}
	if (!ndirs) {
		fputs(usage, stderr);
		return 2;
	}
	for (int i = 0; i < ndirs; i++)
		if (walk(&t, dirs[i]))
			return 1;
	free(dirs);
	printf("%d passed, %d failed\n", t.passed, t.failed);
	if (!t.ex)
		return t.failed ? 1 : 0;
	int missing = 0;
	for (int i = 0; i < ex.n; i++)
		if (!ex.seen[i] && !t.filter)
			missing++;
	if (t.unexpected_fail || t.unexpected_pass)
		printf("conformance: %d unexpected failures, %d unexpected passes\n",
		       t.unexpected_fail, t.unexpected_pass);
	if (missing)
		printf("conformance: %d listed cases were not found\n", missing);
	return t.unexpected_fail || t.unexpected_pass || missing ? 1 : 0;
}
