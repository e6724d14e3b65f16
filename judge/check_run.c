/*
 * check_run.c - running a model for `passnet check` in a child process.
 *
 * A candidate is untrusted code for the executor: it may crash it, loop, or
 * exhaust memory.  So each model loads and runs in a forked child with an
 * alarm (the time limit); the child sends its outputs and timing back
 * through a pipe as .pb encoded tensors, and whatever goes wrong there
 * becomes a "runtime" verdict instead of taking passnet down.  The parent
 * runs no OpenMP region before forking, so the child's thread pool starts
 * clean.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/timing.h"
#include "common/util.h"
#include "runtime/session.h"
#include "judge/check_impl.h"
#include "judge/score.h"
#include "model/onnx.h"

/* A timed sample repeats the run until it lasts this long, so that timer
 * resolution and one-off stalls do not decide a small subgraph's speedup. */
#define SAMPLE_TARGET_US 5000.0
#define SAMPLE_MAX_REPS 1000

static void set_reason(pn_runres *r, int cls, const char *what, const char *err)
{
	r->cls = cls;
	snprintf(r->reason, sizeof r->reason, "%s%s%s", what, err ? ": " : "", err ? err : "");
}

/* A model loaded in the child with its session. */
typedef struct loaded {
	pn_model *m;
	pn_session *s;
	pn_check_ort *ort; /* --backend ort: timed runs go to ONNX Runtime */
	pn_tensor **out;   /* scratch for timed runs */
	int reps;          /* runs per timed sample */
} loaded;

static int load(const char *path, const pn_check_opts *o, loaded *l, pn_runres *r)
{
	char err[PN_ERRLEN] = "";
	pn_exec_opts eo = {.seed = 1, .threads = o->threads};
	if (pn_model_load_path(path, 0, &l->m, err)) {
		set_reason(r, PN_EC_RUNTIME, "the model does not load", err);
		return -1;
	}
	if (pn_session_new(l->m->graph, &eo, &l->s, err)) {
		set_reason(r, PN_EC_RUNTIME, "the executor rejects the model", err);
		return -1;
	}
	l->out = calloc((size_t)l->m->graph->n_outputs + 1, sizeof(void *));
	return 0;
}

/* --backend ort: the timed runs on an ORT session of the same file.  A
 * reference ORT refuses is the task's problem, not the candidate's. */
static int load_ort(const char *path, int is_ref, const pn_check_opts *o, loaded *l,
		    pn_runres *r)
{
	char err[PN_ERRLEN] = "";
	if (pn_check_ort_load(path, l->m->graph, o, &l->ort, err)) {
		set_reason(r, PN_EC_RUNTIME, is_ref ? PN_CHECK_REF_UNTIMED
					     : "ONNX Runtime does not load the model", err);
		return -1;
	}
	return 0;
}

static void unload(loaded *l)
{
	free(l->out);
	pn_check_ort_free(l->ort);
	pn_session_free(l->s);
	pn_model_free(l->m);
}

/* One run on inputs in; outputs dropped.  Returns its time in us, or -1. */
static double run_once(loaded *l, pn_tensor **in, int n_in, pn_runres *r)
{
	char err[PN_ERRLEN] = "";
	double t0 = pn_now();
	int rc = l->ort ? pn_check_ort_run(l->ort, in, n_in, err)
			: pn_session_run(l->s, in, n_in, l->out, err);
	double us = (pn_now() - t0) * 1e6;
	for (int k = 0; k < l->m->graph->n_outputs; k++) {
		pn_tensor_free(l->out[k]);
		l->out[k] = NULL;
	}
	if (rc)
		set_reason(r, PN_EC_RUNTIME, "run failed", err);
	return rc ? -1 : us;
}

/* --- outputs --------------------------------------------------------------------- */

typedef struct outputs_job {
	const pn_runspec *spec;
	const pn_check_opts *o;
} outputs_job;

static void outputs_body(void *ud, pn_runres *r)
{
	const outputs_job *j = ud;
	const pn_runspec *spec = j->spec;
	loaded l = {0};
	char err[PN_ERRLEN] = "";
	if (!load(spec->model, j->o, &l, r) && spec->precheck)
		r->cls = spec->precheck(spec->precheck_ud, l.m->graph, r);
	if (r->cls == PN_EC_NONE) {
		r->n_sets = spec->n_sets;
		r->n_out = l.m->graph->n_outputs;
		r->out = calloc((size_t)(r->n_sets * r->n_out) + 1, sizeof(void *));
	}
	for (int k = 0; r->cls == PN_EC_NONE && k < spec->n_sets; k++)
		if (pn_session_run(l.s, spec->inputs + k * spec->n_in, spec->n_in,
				   r->out + k * r->n_out, err))
			set_reason(r, PN_EC_RUNTIME, "run failed", err);
	unload(&l);
}

/* --- timing ---------------------------------------------------------------------- */

typedef struct timing_job {
	const pn_runspec *spec;
	const char *candidate;
	const pn_check_opts *o;
} timing_job;

/* Warm-up run (it also fills the session's buffer pool), a second one
 * measured unless the first took over a second, then how many runs make
 * one sample last SAMPLE_TARGET_US. */
static double warm_up(loaded *l, const pn_runspec *spec, pn_runres *r)
{
	double us = run_once(l, spec->inputs, spec->n_in, r);
	if (us >= 0 && us < 1e6)
		us = run_once(l, spec->inputs, spec->n_in, r);
	int reps = us > 0 ? (int)ceil(SAMPLE_TARGET_US / us) : SAMPLE_MAX_REPS;
	l->reps = reps < 1 ? 1 : reps > SAMPLE_MAX_REPS ? SAMPLE_MAX_REPS : reps;
	return us;
}

static double sample(loaded *l, const pn_runspec *spec, pn_runres *r)
{
	double t0 = pn_now();
	for (int j = 0; j < l->reps; j++)
		if (run_once(l, spec->inputs, spec->n_in, r) < 0)
			return -1;
	return (pn_now() - t0) * 1e6 / l->reps;
}

/* Samples alternate between the two models.  Fewer are taken when they
 * would not fit in half of the time left, so a slow model is timed less
 * precisely instead of hitting the limit; when not even one round fits,
 * the warm-up runs are the measurement. */
static void timing_body(void *ud, pn_runres *r)
{
	const timing_job *j = ud;
	loaded l[2] = {{0}, {0}};
	double first[2] = {0, 0}, deadline = 0;
	for (int m = 0; m < 2 && r->cls == PN_EC_NONE; m++) {
		const char *path = m ? j->candidate : j->spec->model;
		/* the candidate's limit counts from its own load: the reference's
		 * load and warm-up, however slow the machine, are not its time */
		if (m)
			deadline = pn_now() + j->o->time_limit;
		if (!load(path, j->o, &l[m], r) && (!j->o->ort || !load_ort(path, !m, j->o, &l[m], r)))
			first[m] = warm_up(&l[m], j->spec, r);
	}
	int runs = j->o->runs > 0 ? j->o->runs : 1;
	double round_us = first[0] * l[0].reps + first[1] * l[1].reps;
	while (runs > 0 && runs * round_us > (deadline - pn_now()) * 1e6 / 2)
		runs--;
	double *t[2] = {calloc((size_t)runs + 1, sizeof(double)),
			calloc((size_t)runs + 1, sizeof(double))};
	if (!t[0] || !t[1])
		set_reason(r, PN_EC_RUNTIME, "out of memory", NULL);
	for (int i = 0; i < runs && r->cls == PN_EC_NONE; i++)
		for (int m = 0; m < 2 && r->cls == PN_EC_NONE; m++)
			t[m][i] = sample(&l[m], j->spec, r);
	if (r->cls == PN_EC_NONE) {
		r->ref_us = runs ? pn_median(t[0], runs) : first[0];
		r->cand_us = runs ? pn_median(t[1], runs) : first[1];
	}
	free(t[0]);
	free(t[1]);
	unload(&l[0]);
	unload(&l[1]);
}

/* --- the result over the pipe ---------------------------------------------------- */

/* Layout: int32 cls, double ref_us, cand_us, int32 n_sets, n_out, uint32 reason
 * length, reason, then per output: uint8 kind (255: absent), uint64 length,
 * its .pb bytes. */
static int encode(const pn_runres *r, pn_buf *b, char *err)
{
	int32_t head[3] = {r->cls, r->n_sets, r->n_out};
	uint32_t rl = (uint32_t)strlen(r->reason);
	pn_buf_put(b, &head[0], 4);
	pn_buf_put(b, &r->ref_us, sizeof(double));
	pn_buf_put(b, &r->cand_us, sizeof(double));
	pn_buf_put(b, &head[1], 4);
	pn_buf_put(b, &head[2], 4);
	pn_buf_put(b, &rl, 4);
	pn_buf_put(b, r->reason, rl);
	for (int i = 0; r->out && i < r->n_sets * r->n_out; i++) {
		uint8_t kind = r->out[i] ? r->out[i]->kind : 255;
		void *bytes = NULL;
		size_t len = 0;
		if (r->out[i] && pn_tensor_write_pb(r->out[i], "", &bytes, &len, err))
			return -1;
		uint64_t l64 = len;
		pn_buf_put(b, &kind, 1);
		pn_buf_put(b, &l64, 8);
		pn_buf_put(b, bytes, len);
		free(bytes);
	}
	return b->oom ? pn_fail(err, "out of memory") : 0;
}

typedef struct rbuf {
	const uint8_t *p;
	size_t n, at;
} rbuf;

static int take(rbuf *b, void *out, size_t n)
{
	if (b->n - b->at < n)
		return -1;
	memcpy(out, b->p + b->at, n);
	b->at += n;
	return 0;
}

static int decode(const uint8_t *p, size_t n, pn_runres *r, char *err)
{
	rbuf b = {p, n, 0};
	int32_t cls, sets, outs;
	uint32_t rl;
	if (take(&b, &cls, 4) || take(&b, &r->ref_us, sizeof(double)) ||
	    take(&b, &r->cand_us, sizeof(double)) || take(&b, &sets, 4) ||
	    take(&b, &outs, 4) || take(&b, &rl, 4) || rl >= sizeof r->reason ||
	    take(&b, r->reason, rl) || sets < 0 || outs < 0 || sets > 16 || outs > 1 << 20)
		return pn_fail(err, "truncated result");
	r->reason[rl] = 0;
	r->cls = cls;
	r->n_sets = sets;
	r->n_out = outs;
	r->out = calloc((size_t)(sets * outs) + 1, sizeof(void *));
	for (int i = 0; r->out && i < sets * outs; i++) {
		uint8_t kind;
		uint64_t len;
		if (take(&b, &kind, 1) || take(&b, &len, 8) || len > b.n - b.at)
			return pn_fail(err, "truncated result");
		if (kind != 255 &&
		    pn_tensor_read_pb(b.p + b.at, (size_t)len, kind, &r->out[i], NULL, err))
			return -1;
		b.at += (size_t)len;
	}
	return r->out ? 0 : pn_fail(err, "out of memory");
}

static void write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

static int read_all(int fd, pn_buf *b)
{
	uint8_t chunk[65536];
	for (;;) {
		ssize_t r = read(fd, chunk, sizeof chunk);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -1 : 0;
		pn_buf_put(b, chunk, (size_t)r);
	}
}

typedef void (*body_fn)(void *ud, pn_runres *r);

double pn_check_memory_limit(const pn_check_opts *o)
{
	if (o->memory_limit_mb > 0)
		return (double)o->memory_limit_mb * 1048576.0;
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
	double half = pages > 0 && size > 0 ? (double)pages * (double)size / 2 : 4294967296.0;
	return half;
}

/* AddressSanitizer reserves terabytes of address space for its shadow
 * memory, so under it (gcc says so with __SANITIZE_ADDRESS__, clang, which
 * builds the fuzz harnesses, with __has_feature) no limit is set. */
#if defined(__SANITIZE_ADDRESS__)
#define PN_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PN_UNDER_ASAN 1
#endif
#endif

/* A bomb that shape inference could not see (a shape computed from input
 * values) fails to allocate instead of taking the machine's memory. */
static void limit_memory(double bytes)
{
#if !defined(PN_UNDER_ASAN)
	struct rlimit rl = {(rlim_t)bytes, (rlim_t)bytes};
	setrlimit(RLIMIT_AS, &rl);
#else
	(void)bytes;
#endif
}

static void run_child(int fd, body_fn body, void *ud, int time_limit, double memory)
{
	/* The time limit is SIGALRM's default action, which ends the child; a
	 * handler inherited from the parent would swallow it and let a looping
	 * candidate run on (libFuzzer installs one for its own timeouts). */
	signal(SIGALRM, SIG_DFL);
	alarm((unsigned)time_limit);
	limit_memory(memory);
	pn_runres r = {0};
	char err[PN_ERRLEN] = "";
	body(ud, &r);
	pn_buf b = {0};
	if (encode(&r, &b, err)) {
		pn_runres_free(&r);
		r = (pn_runres){0};
		set_reason(&r, PN_EC_RUNTIME, "cannot send the outputs", err);
		b.n = 0;
		b.oom = 0;
		encode(&r, &b, err);
	}
	write_all(fd, b.p, b.n);
	_exit(0);
}

/* Runs body in a child process and collects what it sends back. */
static void forked(body_fn body, void *ud, int time_limit, double memory, pn_runres *r)
{
	memset(r, 0, sizeof *r);
	int fds[2];
	if (pipe(fds)) {
		set_reason(r, PN_EC_RUNTIME, "pipe", strerror(errno));
		return;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		set_reason(r, PN_EC_RUNTIME, "fork", strerror(errno));
		return;
	}
	if (pid == 0) {
		close(fds[0]);
		run_child(fds[1], body, ud, time_limit, memory);
	}
	close(fds[1]);
	pn_buf b = {0};
	read_all(fds[0], &b);
	close(fds[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	char err[PN_ERRLEN] = "", what[128];
	if (WIFSIGNALED(status)) {
		if (WTERMSIG(status) == SIGALRM)
			snprintf(what, sizeof what, "time limit of %d s exceeded", time_limit);
		else
			snprintf(what, sizeof what, "crashed: %s", strsignal(WTERMSIG(status)));
		set_reason(r, PN_EC_RUNTIME, what, NULL);
	} else if (b.oom || decode(b.p, b.n, r, err)) {
		pn_runres_free(r);
		set_reason(r, PN_EC_RUNTIME, "no result from the child process",
			   b.oom ? "out of memory" : err);
	}
	pn_buf_free(&b);
}

/* The reference's limit: its own, or the candidate's where that is longer. */
static int reference_time_limit(const pn_check_opts *o)
{
	return o->time_limit > PN_CHECK_REF_TIME_LIMIT ? o->time_limit : PN_CHECK_REF_TIME_LIMIT;
}

void pn_run_forked(const pn_runspec *spec, const pn_check_opts *o, pn_runres *r)
{
	outputs_job j = {spec, o};
	int limit = spec->reference ? reference_time_limit(o) : o->time_limit;
	forked(outputs_body, &j, limit, pn_check_memory_limit(o), r);
}

void pn_time_forked(const pn_runspec *spec, const char *candidate, const pn_check_opts *o,
		    pn_runres *r)
{
	timing_job j = {spec, candidate, o};
	forked(timing_body, &j, reference_time_limit(o) + o->time_limit,
	       pn_check_memory_limit(o), r);
}

void pn_runres_free(pn_runres *r)
{
	for (int i = 0; r->out && i < r->n_sets * r->n_out; i++)
		pn_tensor_free(r->out[i]);
	free(r->out);
	r->out = NULL;
	r->n_sets = r->n_out = 0;
}
