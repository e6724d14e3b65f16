/*
 * ort_time.c - times backend-test folders with ONNX Runtime through its C
 * API, with the protocol and clock of `passnet time`: W untimed warm-up
 * runs, then T runs each timed with CLOCK_MONOTONIC around the Run call
 * alone; median, IQR and minimum in milliseconds.  ORT's outputs of the
 * last run are compared with the folder's output_N.pb (pn_compare).
 *
 *   ort_time --lib LIBONNXRUNTIME [--trials T] [--warmup W] [--rtol R]
 *            [--atol A] DIR...     (one JSON object per line)
 *
 * Why C and not only bench/ort/time.js: through Node, each run call pays
 * the binding (a setImmediate hop, tensor marshalling, output copies) and
 * ORT's profiler, the other way to see the native time, adds its own
 * per-node bookkeeping and reports whole microseconds.  Both swamp
 * subgraphs that run in a few microseconds.  Here the timed region is the
 * same as passnet's: the native run call on prepared inputs.
 *
 * ORT is passnet's own baseline backend (exec/ort.h: the library opened
 * with dlopen, C API 16), here with 1 intra-op and 1 inter-op thread,
 * sequential execution, graph optimisation level ALL (ORT's default), CPU
 * provider: the timed call is pn_ort_run, as `passnet baseline` times it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/err.h"
#include "common/timing.h"
#include "common/util.h"
#include "exec/ort.h"
#include "runtime/compare.h"
#include "model/onnx.h"
#include "schemas/ir.h"

typedef struct opts {
	int trials, warmup;
	double rtol, atol;
} opts;

static void json_num(const char *key, double v)
{
	if (isfinite(v))
		printf(",\"%s\":%.6g", key, v);
	else
		printf(",\"%s\":null", key);
}

typedef struct verdict {
	int checked, agree;
	double max_abs, max_rel;
	char what[200];
} verdict;

static void check_outputs(const pn_testset *ts, pn_ort_session *sess, int n_out, const opts *o,
			  verdict *v)
{
	char err[PN_ERRLEN];
	v->checked = ts->n_outputs > 0;
	v->agree = 1;
	for (int i = 0; i < ts->n_outputs && i < n_out; i++) {
		pn_tensor got;
		pn_cmp c;
		if (pn_ort_output(sess, i, &got, err)) {
			v->agree = 0;
			snprintf(v->what, sizeof v->what, "output %d: %s", i, err);
			return;
		}
		pn_compare(&got, ts->outputs[i], o->rtol, o->atol, &c);
		if (c.max_abs > v->max_abs)
			v->max_abs = c.max_abs;
		if (c.max_rel > v->max_rel)
			v->max_rel = c.max_rel;
		if (c.cls != PN_CMP_OK && v->agree) {
			v->agree = 0;
			snprintf(v->what, sizeof v->what, "output %d: %s", i, c.what);
		}
	}
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Runs the session W + T times on the test set's inputs; the session holds
 * the last run's outputs. */
static int ort_measure(pn_ort_session *sess, const pn_graph *g, const pn_testset *ts,
		       const opts *o, pn_time_summary *st, char *err)
{
	int n_in = ts->n_inputs;
	const char **in_names = calloc((size_t)n_in + 1, sizeof(char *));
	const char **out_names = calloc((size_t)g->n_outputs + 1, sizeof(char *));
	double *t = calloc((size_t)o->trials, sizeof(double));
	int rc = in_names && out_names && t ? 0 : pn_fail(err, "out of memory");
	for (int i = 0; i < n_in && !rc; i++)
		in_names[i] = g->values[g->inputs[i]].name;
	for (int i = 0; i < g->n_outputs && !rc; i++)
		out_names[i] = g->values[g->outputs[i]].name;
	for (int r = 0; !rc && r < o->warmup + o->trials; r++) {
		double t0 = now_ms();
		rc = pn_ort_run(sess, ts->inputs, in_names, n_in, out_names, g->n_outputs, err);
		double ms = now_ms() - t0;
		if (r >= o->warmup)
			t[r - o->warmup] = ms;
	}
	if (!rc)
		*st = pn_summarise_times(t, o->trials);
	free(in_names);
	free(out_names);
	free(t);
	return rc;
}

static void print_record(const char *path, const pn_time_summary *st, const opts *o,
			 const verdict *v)
{
	printf("{\"path\":");
	pn_json_str(stdout, path);
	printf(",\"median_ms\":%.6f,\"iqr_ms\":%.6f,\"min_ms\":%.6f,\"trials\":%d,\"threads\":1",
	       st->median, st->iqr, st->min, o->trials);
	if (v->checked) {
		/* JSON has no infinity (max_rel is infinite where the reference
		 * is 0 and ORT is not): null, as JSON.stringify writes it. */
		printf(",\"agree\":%s", v->agree ? "true" : "false");
		json_num("max_abs", v->max_abs);
		json_num("max_rel", v->max_rel);
		if (!v->agree) {
			printf(",\"diff\":");
			pn_json_str(stdout, v->what);
		}
	}
	printf("}\n");
}

static int time_case(pn_ort *ort, const char *dir, const opts *o, char *err)
{
	pn_model *m = NULL;
	pn_ort_session *sess = NULL;
	void *bytes = NULL;
	size_t len = 0;
	char model[4096];
	snprintf(model, sizeof model, "%s/model.onnx", dir);
	if (pn_model_load_path(dir, 1, &m, err))
		return -1;
	const pn_graph *g = m->graph;
	int rc = m->n_testsets ? 0 : pn_fail(err, "no test_data_set_0 with the inputs");
	const pn_testset *ts = rc ? NULL : &m->testsets[0];
	if (!rc)
		rc = pn_read_file(model, &bytes, &len, err);
	if (!rc)
		rc = pn_ort_session_new(ort, bytes, len, PN_ORT_ENABLE_ALL, 1, NULL, &sess, err);
	pn_time_summary st;
	if (!rc)
		rc = ort_measure(sess, g, ts, o, &st, err);
	if (!rc) {
		verdict v = {0};
		check_outputs(ts, sess, g->n_outputs, o, &v);
		print_record(dir, &st, o, &v);
	}
	pn_ort_session_free(sess);
	free(bytes);
	pn_model_free(m);
	return rc;
}

static int usage(void)
{
	fputs("usage: ort_time --lib LIBONNXRUNTIME [--trials T] [--warmup W] [--rtol R] [--atol A]\n"
	      "                [--version] DIR...\n", stderr);
	return 2;
}

int main(int argc, char **argv)
{
	opts o = {.trials = 10, .warmup = 3, .rtol = 1e-3, .atol = 1e-5};
	const char *lib = NULL;
	int first = argc, show_version = 0;
	for (int i = 1; i < argc && first == argc; i++) {
		const char *a = argv[i];
		int more = i + 1 < argc;
		if (!strcmp(a, "--lib") && more)
			lib = argv[++i];
		else if (!strcmp(a, "--trials") && more)
			o.trials = atoi(argv[++i]);
		else if (!strcmp(a, "--warmup") && more)
			o.warmup = atoi(argv[++i]);
		else if (!strcmp(a, "--rtol") && more)
			o.rtol = atof(argv[++i]);
		else if (!strcmp(a, "--atol") && more)
			o.atol = atof(argv[++i]);
		else if (!strcmp(a, "--version"))
			show_version = 1;
		else if (a[0] == '-')
			return usage();
		else
			first = i;
	}
	if (!lib || o.trials < 1 || o.warmup < 0 || (first == argc && !show_version))
		return usage();
	char err[PN_ERRLEN] = "";
	pn_ort *ort = NULL;
	if (pn_ort_open(lib, &ort, err)) {
		fprintf(stderr, "ort_time: %s\n", err);
		return 1;
	}
	if (show_version)
		printf("%s\n", pn_ort_version(ort));
	int failed = 0;
	for (int i = first; i < argc; i++) {
		if (time_case(ort, argv[i], &o, err)) {
			printf("{\"path\":");
			pn_json_str(stdout, argv[i]);
			printf(",\"error\":");
			pn_json_str(stdout, err);
			printf("}\n");
			fprintf(stderr, "ort_time: %s: %s\n", argv[i], err);
			failed++;
		}
		fflush(stdout);
	}
	pn_ort_close(ort);
	return failed ? 1 : 0;
}
