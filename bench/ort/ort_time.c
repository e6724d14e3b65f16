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
 * The library is the libonnxruntime.so.1 that the onnxruntime-node npm
 * package ships (bench/ort/node_modules/...), opened with dlopen, so
 * building this needs no ORT headers or libraries.  ORT's C API is a table
 * of function pointers (OrtApi) that only ever grows at the end; the few
 * entries used are called by their position in it, listed below from ORT's
 * public onnxruntime_c_api.h.  Session options: 1 intra-op and 1 inter-op
 * thread, sequential execution, graph optimisation level ALL (ORT's
 * default), CPU provider.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/err.h"
#include "common/timing.h"
#include "common/util.h"
#include "runtime/compare.h"
#include "model/onnx.h"
#include "schemas/ir.h"

/* Positions in OrtApi (stable since ORT 1.x: entries are only appended). */
enum {
	ORT_GET_ERROR_MESSAGE = 2,
	ORT_CREATE_ENV = 3,
	ORT_CREATE_SESSION = 7,
	ORT_RUN = 9,
	ORT_CREATE_SESSION_OPTIONS = 10,
	ORT_SET_EXECUTION_MODE = 13,
	ORT_SET_GRAPH_OPT_LEVEL = 23,
	ORT_SET_INTRA_OP_THREADS = 24,
	ORT_SET_INTER_OP_THREADS = 25,
	ORT_CREATE_TENSOR_WITH_DATA = 49,
	ORT_GET_TENSOR_MUTABLE_DATA = 51,
	ORT_GET_TENSOR_ELEMENT_TYPE = 60,
	ORT_GET_DIMENSIONS_COUNT = 61,
	ORT_GET_DIMENSIONS = 62,
	ORT_GET_TENSOR_TYPE_AND_SHAPE = 65,
	ORT_CREATE_CPU_MEMORY_INFO = 69,
	ORT_RELEASE_ENV = 92,
	ORT_RELEASE_STATUS = 93,
	ORT_RELEASE_MEMORY_INFO = 94,
	ORT_RELEASE_SESSION = 95,
	ORT_RELEASE_VALUE = 96,
	ORT_RELEASE_TENSOR_INFO = 99,
	ORT_RELEASE_SESSION_OPTIONS = 100,
};
/* The API version asked for: any library at least this new serves it. */
#define ORT_API_WANTED 16
#define ORT_LOG_ERROR 3
#define ORT_SEQUENTIAL 0
#define ORT_OPT_ALL 99
#define ORT_DEVICE_ALLOCATOR 0
#define ORT_MEM_DEFAULT 0

/* ORT's objects are opaque here: every handle is a void pointer and every
 * status a pointer that is NULL on success. */
typedef void *ort_h;
typedef void (*ort_slot)(void);
typedef struct ort_api_base {
	const ort_slot *(*get_api)(unsigned version);
	const char *(*version)(void);
} ort_api_base;

static const ort_slot *api;

#define ORT_FN(idx, type) ((type)api[idx])

/* Turns a status into a message in err; 0 if it was success. */
static int ort_check(ort_h status, const char *what, char *err)
{
	if (!status)
		return 0;
	const char *msg = ORT_FN(ORT_GET_ERROR_MESSAGE, const char *(*)(ort_h))(status);
	pn_fail(err, "%s: %s", what, msg);
	ORT_FN(ORT_RELEASE_STATUS, void (*)(ort_h))(status);
	return -1;
}

static void ort_release(int idx, ort_h h)
{
	if (h)
		ORT_FN(idx, void (*)(ort_h))(h);
}

static int ort_load(const char *lib, ort_h *env, const char **version, char *err)
{
	void *dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!dl)
		return pn_fail(err, "%s", dlerror());
	const ort_api_base *(*get_base)(void);
	*(void **)&get_base = dlsym(dl, "OrtGetApiBase");
	if (!get_base)
		return pn_fail(err, "%s: no OrtGetApiBase", lib);
	const ort_api_base *base = get_base();
	api = base->get_api(ORT_API_WANTED);
	if (!api)
		return pn_fail(err, "%s (ORT %s) does not serve API version %d", lib, base->version(),
			       ORT_API_WANTED);
	*version = base->version();
	return ort_check(ORT_FN(ORT_CREATE_ENV, ort_h (*)(int, const char *, ort_h *))(ORT_LOG_ERROR,
		"ort_time", env), "CreateEnv", err);
}

static int ort_session(ort_h env, const char *model, ort_h *sess, char *err)
{
	ort_h opt = NULL;
	int rc = ort_check(ORT_FN(ORT_CREATE_SESSION_OPTIONS, ort_h (*)(ort_h *))(&opt),
			   "CreateSessionOptions", err);
	if (!rc)
		rc = ort_check(ORT_FN(ORT_SET_INTRA_OP_THREADS, ort_h (*)(ort_h, int))(opt, 1),
			       "SetIntraOpNumThreads", err);
	if (!rc)
		rc = ort_check(ORT_FN(ORT_SET_INTER_OP_THREADS, ort_h (*)(ort_h, int))(opt, 1),
			       "SetInterOpNumThreads", err);
	if (!rc)
		rc = ort_check(ORT_FN(ORT_SET_EXECUTION_MODE, ort_h (*)(ort_h, int))(opt, ORT_SEQUENTIAL),
			       "SetSessionExecutionMode", err);
	if (!rc)
		rc = ort_check(ORT_FN(ORT_SET_GRAPH_OPT_LEVEL, ort_h (*)(ort_h, int))(opt, ORT_OPT_ALL),
			       "SetSessionGraphOptimizationLevel", err);
	if (!rc)
		rc = ort_check(ORT_FN(ORT_CREATE_SESSION, ort_h (*)(ort_h, const char *, ort_h, ort_h *))(
			env, model, opt, sess), "CreateSession", err);
	ort_release(ORT_RELEASE_SESSION_OPTIONS, opt);
	return rc;
}

/* ORT values over the test set's input buffers (no copy). */
static int ort_inputs(const pn_testset *ts, ort_h *vals, char *err)
{
	ort_h mem = NULL;
	int rc = ort_check(ORT_FN(ORT_CREATE_CPU_MEMORY_INFO, ort_h (*)(int, int, ort_h *))(
		ORT_DEVICE_ALLOCATOR, ORT_MEM_DEFAULT, &mem), "CreateCpuMemoryInfo", err);
	for (int i = 0; !rc && i < ts->n_inputs; i++) {
		const pn_tensor *t = ts->inputs[i];
		if (t->kind != PN_KIND_TENSOR || t->dtype == PN_STRING)
			rc = pn_fail(err, "input %d: only numeric tensors are fed to ORT here", i);
		else
			rc = ort_check(ORT_FN(ORT_CREATE_TENSOR_WITH_DATA,
					      ort_h (*)(ort_h, void *, size_t, const int64_t *, size_t, int,
							ort_h *))(mem, t->data,
					(size_t)t->numel * pn_dtype_size(t->dtype), t->dims,
					(size_t)t->rank, t->dtype, &vals[i]), "CreateTensorWithDataAsOrtValue", err);
	}
	ort_release(ORT_RELEASE_MEMORY_INFO, mem);
	return rc;
}

/* A borrowed view of an ORT output as a pn_tensor, for pn_compare. */
static int ort_view(ort_h v, pn_tensor *t, char *err)
{
	ort_h info = NULL;
	size_t rank = 0;
	int dtype = 0;
	memset(t, 0, sizeof *t);
	int rc = ort_check(ORT_FN(ORT_GET_TENSOR_TYPE_AND_SHAPE, ort_h (*)(ort_h, ort_h *))(v, &info),
			   "GetTensorTypeAndShape", err);
	if (!rc)
		rc = ort_check(ORT_FN(ORT_GET_TENSOR_ELEMENT_TYPE, ort_h (*)(ort_h, int *))(info, &dtype),
			       "GetTensorElementType", err);
	if (!rc)
		rc = ort_check(ORT_FN(ORT_GET_DIMENSIONS_COUNT, ort_h (*)(ort_h, size_t *))(info, &rank),
			       "GetDimensionsCount", err);
	if (!rc && rank > PN_MAX_RANK)
		rc = pn_fail(err, "output of rank %zu", rank);
	if (!rc)
		rc = ort_check(ORT_FN(ORT_GET_DIMENSIONS, ort_h (*)(ort_h, int64_t *, size_t))(info, t->dims,
			rank), "GetDimensions", err);
	if (!rc)
		rc = ort_check(ORT_FN(ORT_GET_TENSOR_MUTABLE_DATA, ort_h (*)(ort_h, void **))(v, &t->data),
			       "GetTensorMutableData", err);
	ort_release(ORT_RELEASE_TENSOR_INFO, info);
	t->dtype = dtype;
	t->rank = (int)rank;
	t->numel = pn_numel(t->rank, t->dims);
	return rc;
}

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

static void check_outputs(const pn_testset *ts, ort_h *out, int n_out, const opts *o, verdict *v)
{
	char err[PN_ERRLEN];
	v->checked = ts->n_outputs > 0;
	v->agree = 1;
	for (int i = 0; i < ts->n_outputs && i < n_out; i++) {
		pn_tensor got;
		pn_cmp c;
		if (ort_view(out[i], &got, err)) {
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

/* Runs the session W + T times; out[] holds the last run's outputs. */
static int ort_measure(ort_h sess, const pn_graph *g, ort_h *in, int n_in, ort_h *out,
		       const opts *o, pn_time_summary *st, char *err)
{
	const char **in_names = calloc((size_t)n_in + 1, sizeof(char *));
	const char **out_names = calloc((size_t)g->n_outputs + 1, sizeof(char *));
	double *t = calloc((size_t)o->trials, sizeof(double));
	int rc = in_names && out_names && t ? 0 : pn_fail(err, "out of memory");
	for (int i = 0; i < n_in && !rc; i++)
		in_names[i] = g->values[g->inputs[i]].name;
	for (int i = 0; i < g->n_outputs && !rc; i++)
		out_names[i] = g->values[g->outputs[i]].name;
	ort_h (*run)(ort_h, ort_h, const char *const *, const ort_h *, size_t, const char *const *,
		     size_t, ort_h *) = ORT_FN(ORT_RUN, ort_h (*)(ort_h, ort_h, const char *const *,
					       const ort_h *, size_t, const char *const *, size_t, ort_h *));
	for (int r = 0; !rc && r < o->warmup + o->trials; r++) {
		for (int i = 0; i < g->n_outputs; i++) {
			ort_release(ORT_RELEASE_VALUE, out[i]);
			out[i] = NULL;
		}
		double t0 = now_ms();
		ort_h status = run(sess, NULL, in_names, in, (size_t)n_in, out_names,
				   (size_t)g->n_outputs, out);
		double ms = now_ms() - t0;
		rc = ort_check(status, "Run", err);
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

static int time_case(ort_h env, const char *dir, const opts *o, char *err)
{
	pn_model *m = NULL;
	ort_h sess = NULL;
	if (pn_model_load_path(dir, 1, &m, err))
		return -1;
	const pn_graph *g = m->graph;
	int rc = m->n_testsets ? 0 : pn_fail(err, "no test_data_set_0 with the inputs");
	const pn_testset *ts = rc ? NULL : &m->testsets[0];
	int n_in = ts ? ts->n_inputs : 0;
	ort_h *in = calloc((size_t)n_in + 1, sizeof(ort_h));
	ort_h *out = calloc((size_t)g->n_outputs + 1, sizeof(ort_h));
	char model[4096];
	snprintf(model, sizeof model, "%s/model.onnx", dir);
	if (!rc)
		rc = ort_session(env, model, &sess, err);
	if (!rc)
		rc = ort_inputs(ts, in, err);
	pn_time_summary st;
	if (!rc)
		rc = ort_measure(sess, g, in, n_in, out, o, &st, err);
	if (!rc) {
		verdict v = {0};
		check_outputs(ts, out, g->n_outputs, o, &v);
		print_record(dir, &st, o, &v);
	}
	for (int i = 0; i < g->n_outputs; i++)
		ort_release(ORT_RELEASE_VALUE, out[i]);
	for (int i = 0; i < n_in; i++)
		ort_release(ORT_RELEASE_VALUE, in[i]);
	free(in);
	free(out);
	ort_release(ORT_RELEASE_SESSION, sess);
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
	const char *lib = NULL, *version = "";
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
	ort_h env = NULL;
	if (ort_load(lib, &env, &version, err)) {
		fprintf(stderr, "ort_time: %s\n", err);
		return 1;
	}
	if (show_version)
		printf("%s\n", version);
	int failed = 0;
	for (int i = first; i < argc; i++) {
		if (time_case(env, argv[i], &o, err)) {
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
	ort_release(ORT_RELEASE_ENV, env);
	return failed ? 1 : 0;
}
