/*
 * ort.c - ONNX Runtime through its C API, opened with dlopen (see ort.h).
 *
 * ORT's C API is a table of function pointers (OrtApi) that only ever grows
 * at its end; the entries used here are called by their position in it, as
 * ORT's public onnxruntime_c_api.h lists them, so no ORT header or library
 * is needed to build.  Every ORT handle is opaque (a void pointer) and every
 * status a pointer that is NULL on success.
 */
#include "exec/ort.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "model/onnx.h"

/* Positions in OrtApi (onnxruntime_c_api.h, struct OrtApi). */
enum {
	ORT_GET_ERROR_MESSAGE = 2,
	ORT_CREATE_ENV = 3,
	ORT_CREATE_SESSION_FROM_ARRAY = 8,
	ORT_RUN = 9,
	ORT_CREATE_SESSION_OPTIONS = 10,
	ORT_SET_OPTIMIZED_MODEL_FILE_PATH = 11,
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
#define ORT_API_WANTED 16
/* ORT_LOGGING_LEVEL_FATAL: ORT's own log stays quiet; its errors come back
 * as statuses and are recorded. */
#define ORT_LOG_FATAL 4
#define ORT_SEQUENTIAL 0
#define ORT_DEVICE_ALLOCATOR 0
#define ORT_MEM_DEFAULT 0

typedef void *ort_h;
typedef void (*ort_slot)(void);
typedef struct ort_api_base {
	const ort_slot *(*get_api)(unsigned version);
	const char *(*version)(void);
} ort_api_base;

struct pn_ort {
	void *dl;
	const ort_slot *api;
	ort_h env, mem;
	char version[32];
	char path[PATH_MAX];
};

struct pn_ort_session {
	pn_ort *o;
	ort_h sess;
	ort_h *in;        /* values over the last run's inputs */
	ort_h *out;       /* the last run's outputs */
	int n_in, n_out;
};

#define ORT_FN(o, idx, type) ((type)(o)->api[idx])

/* Turns a status into a message in err; 0 if it was success. */
static int ort_check(const pn_ort *o, ort_h status, char *err)
{
	if (!status)
		return 0;
	const char *msg = ORT_FN(o, ORT_GET_ERROR_MESSAGE, const char *(*)(ort_h))(status);
	pn_fail(err, "%s", msg ? msg : "(no message)");
	ORT_FN(o, ORT_RELEASE_STATUS, void (*)(ort_h))(status);
	return -1;
}

static void ort_release(const pn_ort *o, int idx, ort_h h)
{
	if (h)
		ORT_FN(o, idx, void (*)(ort_h))(h);
}

/* --- opening the library ------------------------------------------------------ */

/* Where `make ort` puts the library: build/ort/ beside the binary's bin/. */
static int beside_binary(char *path, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = 0;   /* .../bin */
	slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = 0;
	return snprintf(path, size, "%s/build/ort/libonnxruntime.so.1", exe) < (int)size ? 0 : -1;
}

static const char *default_lib(char *buf, size_t size)
{
	const char *env = getenv("PASSNET_ORT_LIB");
	if (env && env[0])
		return env;
	if (!beside_binary(buf, size) && access(buf, R_OK) == 0)
		return buf;
	return "libonnxruntime.so.1";
}

/* "1.30.0" -> 1 and 30; -1 for a version that is not major.minor. */
static int parse_version(const char *v, int *major, int *minor)
{
	return sscanf(v, "%d.%d", major, minor) == 2 ? 0 : -1;
}

static int load_api(pn_ort *o, char *err)
{
	const ort_api_base *(*get_base)(void);
	*(void **)&get_base = dlsym(o->dl, "OrtGetApiBase");
	if (!get_base)
		return pn_fail(err, "%s: not ONNX Runtime (no OrtGetApiBase)", o->path);
	const ort_api_base *base = get_base();
	const char *v = base && base->version ? base->version() : NULL;
	int major = 0, minor = 0;
	if (!v || parse_version(v, &major, &minor))
		return pn_fail(err, "%s: ONNX Runtime gives no version", o->path);
	snprintf(o->version, sizeof o->version, "%s", v);
	if (major != 1 || minor < PN_ORT_MIN_MINOR)
		return pn_fail(err, "%s: ONNX Runtime %s; supported: 1.%d to 1.x", o->path, v,
			       PN_ORT_MIN_MINOR);
	o->api = base->get_api(ORT_API_WANTED);
	if (!o->api)
		return pn_fail(err, "%s: ONNX Runtime %s does not serve C API version %d", o->path, v,
			       ORT_API_WANTED);
	int rc = ort_check(o, ORT_FN(o, ORT_CREATE_ENV, ort_h (*)(int, const char *, ort_h *))(
		ORT_LOG_FATAL, "passnet", &o->env), err);
	if (!rc)
		rc = ort_check(o, ORT_FN(o, ORT_CREATE_CPU_MEMORY_INFO, ort_h (*)(int, int, ort_h *))(
			ORT_DEVICE_ALLOCATOR, ORT_MEM_DEFAULT, &o->mem), err);
	return rc;
}

int pn_ort_open(const char *lib, pn_ort **out, char *err)
{
	*out = NULL;
	pn_ort *o = calloc(1, sizeof *o);
	if (!o)
		return pn_fail(err, "out of memory");
	char buf[PATH_MAX];
	snprintf(o->path, sizeof o->path, "%s", lib ? lib : default_lib(buf, sizeof buf));
	o->dl = dlopen(o->path, RTLD_NOW | RTLD_LOCAL);
	if (!o->dl) {
		pn_fail(err, "cannot open ONNX Runtime: %s (make ort installs it; --ort-lib PATH)",
			dlerror());
		free(o);
		return -1;
	}
	if (load_api(o, err)) {
		pn_ort_close(o);
		return -1;
	}
	*out = o;
	return 0;
}

void pn_ort_close(pn_ort *o)
{
	if (!o)
		return;
	if (o->api) {
		ort_release(o, ORT_RELEASE_MEMORY_INFO, o->mem);
		ort_release(o, ORT_RELEASE_ENV, o->env);
	}
	/* the library stays mapped: ORT keeps threads and statics that do not
	 * survive an unload */
	free(o);
}

const char *pn_ort_version(const pn_ort *o)
{
	return o->version;
}

const char *pn_ort_path(const pn_ort *o)
{
	return o->path;
}

/* --- sessions ----------------------------------------------------------------- */

static int session_options(pn_ort *o, int level, int threads, const char *save_to, ort_h *opt,
			   char *err)
{
	int rc = ort_check(o, ORT_FN(o, ORT_CREATE_SESSION_OPTIONS, ort_h (*)(ort_h *))(opt), err);
	if (!rc)
		rc = ort_check(o, ORT_FN(o, ORT_SET_INTRA_OP_THREADS, ort_h (*)(ort_h, int))(*opt,
			threads), err);
	if (!rc)
		rc = ort_check(o, ORT_FN(o, ORT_SET_INTER_OP_THREADS, ort_h (*)(ort_h, int))(*opt, 1),
			       err);
	if (!rc)
		rc = ort_check(o, ORT_FN(o, ORT_SET_EXECUTION_MODE, ort_h (*)(ort_h, int))(*opt,
			ORT_SEQUENTIAL), err);
	if (!rc)
		rc = ort_check(o, ORT_FN(o, ORT_SET_GRAPH_OPT_LEVEL, ort_h (*)(ort_h, int))(*opt,
			level), err);
	if (!rc && save_to)
		rc = ort_check(o, ORT_FN(o, ORT_SET_OPTIMIZED_MODEL_FILE_PATH,
					 ort_h (*)(ort_h, const char *))(*opt, save_to), err);
	return rc;
}

static int create_session(pn_ort *o, const void *model, size_t len, int level, int threads,
			  const char *save_to, ort_h *sess, char *err)
{
	ort_h opt = NULL;
	int rc = session_options(o, level, threads, save_to, &opt, err);
	if (!rc)
		rc = ort_check(o, ORT_FN(o, ORT_CREATE_SESSION_FROM_ARRAY,
					 ort_h (*)(ort_h, const void *, size_t, ort_h, ort_h *))(
			o->env, model, len, opt, sess), err);
	ort_release(o, ORT_RELEASE_SESSION_OPTIONS, opt);
	return rc;
}

static void describe(const Onnx__GraphProto *g, pn_ort_graph *out)
{
	out->nodes = (int)g->n_node;
	size_t at = 0;
	for (size_t i = 0; i < g->n_node && at < sizeof out->ops; i++) {
		const Onnx__NodeProto *n = g->node[i];
		const char *dom = n->domain && n->domain[0] ? n->domain : NULL;
		int k = snprintf(out->ops + at, sizeof out->ops - at, "%s%s%s%s", at ? " " : "",
				 dom ? dom : "", dom ? ":" : "", n->op_type ? n->op_type : "?");
		at += k > 0 ? (size_t)k : 0;
	}
}

/* The graph ORT optimised, from the model it writes out (a session of its
 * own: writing can fail where running would not). */
static void optimised_graph(pn_ort *o, const void *model, size_t len, int level,
			    pn_ort_graph *out)
{
	out->nodes = -1;
	out->ops[0] = 0;
	const char *tmp = getenv("TMPDIR");
	char path[PATH_MAX], err[PN_ERRLEN];
	snprintf(path, sizeof path, "%s/passnet-ort-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	int fd = mkstemp(path);
	if (fd < 0)
		return;
	close(fd);
	ort_h sess = NULL;
	if (!create_session(o, model, len, level, 1, path, &sess, err)) {
		ort_release(o, ORT_RELEASE_SESSION, sess);
		FILE *f = fopen(path, "rb");
		uint8_t *buf = NULL;
		long n = -1;
		if (f && !fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET) &&
		    (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
			Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, (size_t)n, buf);
			if (mp && mp->graph)
				describe(mp->graph, out);
			if (mp)
				onnx__model_proto__free_unpacked(mp, NULL);
		}
		free(buf);
		if (f)
			fclose(f);
	}
	unlink(path);
}

int pn_ort_session_new(pn_ort *o, const void *model, size_t len, int level, int threads,
		       pn_ort_graph *graph, pn_ort_session **out, char *err)
{
	*out = NULL;
	pn_ort_session *s = calloc(1, sizeof *s);
	if (!s)
		return pn_fail(err, "out of memory");
	s->o = o;
	if (create_session(o, model, len, level, threads, NULL, &s->sess, err)) {
		free(s);
		return -1;
	}
	if (graph)
		optimised_graph(o, model, len, level, graph);
	*out = s;
	return 0;
}

static void release_values(pn_ort_session *s)
{
	for (int i = 0; i < s->n_in; i++)
		ort_release(s->o, ORT_RELEASE_VALUE, s->in[i]);
	for (int i = 0; i < s->n_out; i++)
		ort_release(s->o, ORT_RELEASE_VALUE, s->out[i]);
	free(s->in);
	free(s->out);
	s->in = s->out = NULL;
	s->n_in = s->n_out = 0;
}

void pn_ort_session_free(pn_ort_session *s)
{
	if (!s)
		return;
	release_values(s);
	ort_release(s->o, ORT_RELEASE_SESSION, s->sess);
	free(s);
}

/* ORT values over the tensors' buffers (no copy), made once per input set. */
static int wrap_inputs(pn_ort_session *s, pn_tensor *const *in, int n_in, char *err)
{
	if (s->in && s->n_in == n_in)
		return 0;
	release_values(s);
	s->in = calloc((size_t)n_in + 1, sizeof(ort_h));
	if (!s->in)
		return pn_fail(err, "out of memory");
	s->n_in = n_in;
	for (int i = 0; i < n_in; i++) {
		const pn_tensor *t = in[i];
		if (t->kind != PN_KIND_TENSOR || t->dtype == PN_STRING)
			return pn_fail(err, "input %d: passnet feeds ORT numeric tensors only", i);
		if (ort_check(s->o, ORT_FN(s->o, ORT_CREATE_TENSOR_WITH_DATA,
					   ort_h (*)(ort_h, void *, size_t, const int64_t *, size_t, int,
						     ort_h *))(s->o->mem, t->data,
				(size_t)t->numel * pn_dtype_size(t->dtype), t->dims, (size_t)t->rank,
				t->dtype, &s->in[i]), err))
			return -1;
	}
	return 0;
}

int pn_ort_run(pn_ort_session *s, pn_tensor *const *in, const char *const *in_names, int n_in,
	       const char *const *out_names, int n_out, char *err)
{
	if (wrap_inputs(s, in, n_in, err))
		return -1;
	if (!s->out) {
		s->out = calloc((size_t)n_out + 1, sizeof(ort_h));
		if (!s->out)
			return pn_fail(err, "out of memory");
		s->n_out = n_out;
	}
	for (int i = 0; i < s->n_out; i++) {
		ort_release(s->o, ORT_RELEASE_VALUE, s->out[i]);
		s->out[i] = NULL;
	}
	return ort_check(s->o, ORT_FN(s->o, ORT_RUN,
				      ort_h (*)(ort_h, ort_h, const char *const *, const ort_h *,
						size_t, const char *const *, size_t, ort_h *))(
		s->sess, NULL, in_names, (const ort_h *)s->in, (size_t)n_in, out_names,
		(size_t)s->n_out, s->out), err);
}

int pn_ort_output(pn_ort_session *s, int i, pn_tensor *t, char *err)
{
	memset(t, 0, sizeof *t);
	if (i < 0 || i >= s->n_out || !s->out[i])
		return pn_fail(err, "output %d: not produced", i);
	const pn_ort *o = s->o;
	ort_h info = NULL;
	size_t rank = 0;
	int dtype = 0;
	int rc = ort_check(o, ORT_FN(o, ORT_GET_TENSOR_TYPE_AND_SHAPE, ort_h (*)(ort_h, ort_h *))(
		s->out[i], &info), err);
	if (!rc)
		rc = ort_check(o, ORT_FN(o, ORT_GET_TENSOR_ELEMENT_TYPE, ort_h (*)(ort_h, int *))(info,
			&dtype), err);
	if (!rc)
		rc = ort_check(o, ORT_FN(o, ORT_GET_DIMENSIONS_COUNT, ort_h (*)(ort_h, size_t *))(info,
			&rank), err);
	if (!rc && rank > PN_MAX_RANK)
		rc = pn_fail(err, "output %d of rank %zu", i, rank);
	if (!rc)
		rc = ort_check(o, ORT_FN(o, ORT_GET_DIMENSIONS, ort_h (*)(ort_h, int64_t *, size_t))(
			info, t->dims, rank), err);
	if (!rc && dtype == PN_STRING)
		rc = pn_fail(err, "output %d: a string tensor", i);
	if (!rc)
		rc = ort_check(o, ORT_FN(o, ORT_GET_TENSOR_MUTABLE_DATA, ort_h (*)(ort_h, void **))(
			s->out[i], &t->data), err);
	ort_release(o, ORT_RELEASE_TENSOR_INFO, info);
	t->kind = PN_KIND_TENSOR;
	t->dtype = dtype;
	t->rank = (int)rank;
	t->numel = pn_numel(t->rank, t->dims);
	return rc;
}
