/*
 * calibrate.c - measures this machine's roofline and the executor's fixed
 * cost per node (see calibrate.h).
 *
 * Every figure is the median of PN_CALIB_REPS timed repetitions: the
 * machine is shared, and the median ignores the repetitions a neighbour's
 * burst slowed down without averaging them in.
 */
#include "exec/calibrate.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "common/arena.h"
#include "common/util.h"
#include "common/err.h"
#include "common/timing.h"
#include "runtime/session.h"
#include "model/onnx.h"
#include "passnet.pb-c.h"

#define PN_CALIB_REPS 7
/* Layout of the numbers in meta "calibration" (see pn_calibration_put). */
#define PN_CALIB_LAYOUT 1

/* --- peak FLOP/s --------------------------------------------------------------------- */

/* Independent accumulators: an FMA has a latency of about 4 cycles and two
 * issue ports, so at least 8 vectors must be in flight to keep both busy.
 * 256 floats are 16 AVX-512 vectors (32 AVX2 ones), which fit in the
 * register file and leave the loop bound by FMA throughput alone.  GCC
 * vectorises the inner loop into one vfmadd per vector (fmaf is a builtin
 * it knows; -std=c11 turns off contraction of a*b+c, so the FMA has to be
 * explicit).  Single precision: the type of nearly every model tensor. */
#define PN_FMA_LANES 256

static float __attribute__((noinline)) fma_loop(long iters, float seed)
{
	float acc[PN_FMA_LANES];
	for (int i = 0; i < PN_FMA_LANES; i++)
		acc[i] = seed + (float)i * 1e-3f;
	/* acc converges to a / (1 - m) = 1: no overflow, no denormals. */
	const float m = 0.999999f, a = 1e-6f;
	for (long it = 0; it < iters; it++)
		for (int i = 0; i < PN_FMA_LANES; i++)
			acc[i] = fmaf(acc[i], m, a);
	float s = 0;
	for (int i = 0; i < PN_FMA_LANES; i++)
		s += acc[i];
	return s;
}

/* Seconds for every one of `threads` threads to run its own loop of
 * `iters`, from a common start. */
static double fma_run(int threads, long iters)
{
	double t0 = 0, t1 = 0;
	float sum = 0;
#pragma omp parallel num_threads(threads)
	{
#pragma omp barrier
#pragma omp master
		t0 = omp_get_wtime();
		/* Every thread's result is used: GCC infers that a noinline
		 * function without side effects is pure and could drop a call
		 * whose value nobody reads. */
		float s = fma_loop(iters, 1.0f + (float)omp_get_thread_num());
#pragma omp atomic
		sum += s;
#pragma omp barrier
#pragma omp master
		t1 = omp_get_wtime();
	}
	volatile float sink = sum;
	(void)sink;
	return t1 - t0;
}

/* Iterations for about 50 ms of one thread's loop. */
static long fma_iters(void)
{
	long probe = 20000;
	double t = fma_run(1, probe);
	long n = t > 0 ? (long)(0.05 / t * (double)probe) : probe * 100;
	return n < probe ? probe : n;
}

static double peak_gflops(int threads, long iters)
{
	double r[PN_CALIB_REPS];
	for (int k = 0; k < PN_CALIB_REPS; k++) {
		double t = fma_run(threads, iters);
		r[k] = 2.0 * PN_FMA_LANES * (double)iters * threads / t / 1e9;
	}
	return pn_median(r, PN_CALIB_REPS);
}

/* --- bandwidth ------------------------------------------------------------------------ */

/* STREAM's triad a = b + s*c over three arrays of 96 MiB (288 MiB in all,
 * nine times the 32 MiB L3), so every pass streams from DRAM.  Counted as
 * STREAM counts it: 3 x 8 bytes per element (two reads, one write).  The
 * write-allocate read of a (the line is fetched before it is written,
 * without non-temporal stores) is not counted, so the figure is the
 * traffic a kernel asks for, the same convention as the cost model's
 * bytes; the bus moves up to 4/3 of it. */
#define PN_TRIAD_BYTES ((size_t)96 << 20)

typedef struct triad {
	double *a, *b, *c;
	size_t n;
} triad;

static int triad_alloc(triad *t, int threads, char *err)
{
	t->n = PN_TRIAD_BYTES / sizeof(double);
	t->a = aligned_alloc(64, PN_TRIAD_BYTES);
	t->b = aligned_alloc(64, PN_TRIAD_BYTES);
	t->c = aligned_alloc(64, PN_TRIAD_BYTES);
	if (!t->a || !t->b || !t->c)
		return pn_fail(err, "calibrate: cannot allocate %zu MiB for the bandwidth test",
			       3 * (PN_TRIAD_BYTES >> 20));
	/* First touch with the same static schedule as the timed loops, so
	 * each thread's pages are local to it on a NUMA machine. */
	long n = (long)t->n;
#pragma omp parallel for num_threads(threads) schedule(static)
	for (long i = 0; i < n; i++) {
		t->a[i] = 0;
		t->b[i] = 1;
		t->c[i] = 2;
	}
	return 0;
}

static void triad_free(triad *t)
{
	free(t->a);
	free(t->b);
	free(t->c);
}

static double triad_run(triad *t, int threads)
{
	double *restrict a = t->a;
	const double *restrict b = t->b, *restrict c = t->c;
	const double s = 3.0;
	long n = (long)t->n;
	double t0 = omp_get_wtime();
#pragma omp parallel for num_threads(threads) schedule(static)
	for (long i = 0; i < n; i++)
		a[i] = b[i] + s * c[i];
	return omp_get_wtime() - t0;
}

static double bandwidth_gbs(triad *t, int threads)
{
	double r[PN_CALIB_REPS];
	triad_run(t, threads);   /* warm-up: page tables, frequency */
	for (int k = 0; k < PN_CALIB_REPS; k++)
		r[k] = 3.0 * sizeof(double) * (double)t->n / triad_run(t, threads) / 1e9;
	return pn_median(r, PN_CALIB_REPS);
}

/* --- per-node overhead ------------------------------------------------------------------ */

/* A chain of Relu nodes on a 1-element float tensor: the kernels do
 * nothing measurable, so a run's time is the executor's own work per node
 * (inference on real inputs, buffer pool, dispatch, bookkeeping).  Relu,
 * not Identity, so the figure includes a real kernel call. */
#define PN_CHAIN_NODES 64
#define PN_CHAIN_RUNS 200

static Onnx__ValueInfoProto *float1_info(pn_arena *a, const char *name)
{
	Onnx__ValueInfoProto *vi = pn_arena_alloc(a, sizeof(*vi));
	Onnx__TypeProto *tp = pn_arena_alloc(a, sizeof(*tp));
	Onnx__TypeProto__Tensor *tt = pn_arena_alloc(a, sizeof(*tt));
	Onnx__TensorShapeProto *sh = pn_arena_alloc(a, sizeof(*sh));
	Onnx__TensorShapeProto__Dimension *d = pn_arena_alloc(a, sizeof(*d));
	Onnx__TensorShapeProto__Dimension **dims = pn_arena_alloc(a, sizeof(void *));
	if (!vi || !tp || !tt || !sh || !d || !dims)
		return NULL;
	onnx__value_info_proto__init(vi);
	onnx__type_proto__init(tp);
	onnx__type_proto__tensor__init(tt);
	onnx__tensor_shape_proto__init(sh);
	onnx__tensor_shape_proto__dimension__init(d);
	d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
	d->dim_value = 1;
	dims[0] = d;
	sh->n_dim = 1;
	sh->dim = dims;
	tt->has_elem_type = 1;
	tt->elem_type = PN_FLOAT;
	tt->shape = sh;
	tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp->tensor_type = tt;
	vi->name = pn_arena_strdup(a, name);
	vi->type = tp;
	return vi;
}

static Onnx__NodeProto *relu_node(pn_arena *a, int i)
{
	Onnx__NodeProto *n = pn_arena_alloc(a, sizeof(*n));
	char **in = pn_arena_alloc(a, sizeof(char *)), **out = pn_arena_alloc(a, sizeof(char *));
	if (!n || !in || !out)
		return NULL;
	onnx__node_proto__init(n);
	n->op_type = "Relu";
	n->name = pn_arena_printf(a, "relu%d", i);
	in[0] = i ? pn_arena_printf(a, "v%d", i - 1) : "x";
	out[0] = i == PN_CHAIN_NODES - 1 ? "y" : pn_arena_printf(a, "v%d", i);
	n->n_input = n->n_output = 1;
	n->input = in;
	n->output = out;
	return n->name && in[0] && out[0] ? n : NULL;
}

/* The chain as a model, built as an ONNX file would be and loaded through
 * the same path, so the graph is exactly what the decoder makes. */
static int chain_model(pn_model **out, char *err)
{
	pn_arena a;
	pn_arena_init(&a, 0);
	Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
	Onnx__GraphProto gp = ONNX__GRAPH_PROTO__INIT;
	Onnx__OperatorSetIdProto opset = ONNX__OPERATOR_SET_ID_PROTO__INIT, *opsets = &opset;
	Onnx__NodeProto **nodes = pn_arena_alloc(&a, sizeof(void *) * PN_CHAIN_NODES);
	Onnx__ValueInfoProto *x = float1_info(&a, "x"), *y = float1_info(&a, "y");
	int ok = nodes && x && y;
	for (int i = 0; ok && i < PN_CHAIN_NODES; i++)
		ok = (nodes[i] = relu_node(&a, i)) != NULL;
	if (!ok) {
		pn_arena_free(&a);
		return pn_fail(err, "out of memory");
	}
	opset.domain = "";
	opset.has_version = 1;
	opset.version = 13;
	gp.name = "calibration_chain";
	gp.n_node = PN_CHAIN_NODES;
	gp.node = nodes;
	gp.n_input = gp.n_output = 1;
	gp.input = &x;
	gp.output = &y;
	mp.has_ir_version = 1;
	mp.ir_version = 8;
	mp.n_opset_import = 1;
	mp.opset_import = &opsets;
	mp.graph = &gp;
	size_t len = onnx__model_proto__get_packed_size(&mp);
	uint8_t *bytes = malloc(len ? len : 1);
	int rc = bytes ? 0 : pn_fail(err, "out of memory");
	if (!rc) {
		onnx__model_proto__pack(&mp, bytes);
		rc = pn_model_load(bytes, len, NULL, 0, out, err);
	}
	free(bytes);
	pn_arena_free(&a);
	return rc;
}

/* Seconds per node of one batch of runs (outputs freed after the clock
 * stops: freeing is the caller's cost, not the executor's). */
static int chain_batch(pn_session *s, pn_tensor *x, pn_tensor **outs, double *per_node, char *err)
{
	int rc = 0;
	double t0 = omp_get_wtime();
	for (int r = 0; r < PN_CHAIN_RUNS && !rc; r++)
		rc = pn_session_run(s, &x, 1, &outs[r], err);
	double t = omp_get_wtime() - t0;
	for (int r = 0; r < PN_CHAIN_RUNS; r++) {
		pn_tensor_free(outs[r]);
		outs[r] = NULL;
	}
	*per_node = t / PN_CHAIN_RUNS / PN_CHAIN_NODES;
	return rc;
}

static int node_overhead_us(int threads, double *out, char *err)
{
	pn_model *m = NULL;
	pn_session *s = NULL;
	int64_t one = 1;
	pn_tensor *x = pn_tensor_new(PN_FLOAT, 1, &one);
	pn_tensor **outs = calloc(PN_CHAIN_RUNS, sizeof(void *));
	int rc = x && outs ? 0 : pn_fail(err, "out of memory");
	if (!rc)
		rc = chain_model(&m, err);
	pn_exec_opts o = {.seed = 1, .threads = threads};
	if (!rc)
		rc = pn_session_new(m->graph, &o, &s, err);
	double r[PN_CALIB_REPS], warm;
	if (!rc)
		rc = chain_batch(s, x, outs, &warm, err);   /* fills the buffer pool */
	for (int k = 0; k < PN_CALIB_REPS && !rc; k++)
		rc = chain_batch(s, x, outs, &r[k], err);
	if (!rc)
		*out = pn_median(r, PN_CALIB_REPS) * 1e6;
	else
		pn_errprefix(err, "calibrate: node overhead chain");
	pn_session_free(s);
	pn_model_free(m);
	pn_tensor_free(x);
	free(outs);
	return rc;
}

/* --- the machine's name ------------------------------------------------------------------ */

static void copy_text(char dst[PN_MACHINE_TEXT], const char *src)
{
	snprintf(dst, PN_MACHINE_TEXT, "%s", src ? src : "");
}

void pn_machine_host(char host[PN_MACHINE_TEXT])
{
	const char *given = getenv("PASSNET_HOSTNAME");
	if (given && *given) {
		copy_text(host, given);
		return;
	}
	char name[PN_MACHINE_TEXT];
	if (gethostname(name, sizeof name) != 0)
		copy_text(name, "unknown");
	name[sizeof name - 1] = 0;   /* gethostname may not terminate a truncated name */
	copy_text(host, name[0] ? name : "unknown");
}

/* The first "model name" line of /proc/cpuinfo: every core of a machine
 * names the same model, and a machine with two kinds of core is still one
 * machine to the roofline. */
void pn_machine_cpu_model(char model[PN_MACHINE_TEXT])
{
	copy_text(model, "unknown");
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return;
	char line[1024];
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "model name", 10) != 0)
			continue;
		char *v = strchr(line, ':');
		if (!v)
			continue;
		v += 1 + strspn(v + 1, " \t");
		v[strcspn(v, "\r\n")] = 0;
		if (*v)
			copy_text(model, v);
		break;
	}
	fclose(f);
}

/* --- the whole calibration ----------------------------------------------------------------- */

int pn_calibrate(int threads, pn_calibration *out, char *err)
{
	memset(out, 0, sizeof(*out));
	pn_machine_host(out->host);
	pn_machine_cpu_model(out->cpu_model);
	int n = pn_stage_threads(threads);
	if (n > PN_CALIB_MAX_THREADS)
		n = PN_CALIB_MAX_THREADS;
	out->max_threads = n;
	long iters = fma_iters();
	for (int t = 1; t <= n; t++)
		out->peak_gflops[t] = peak_gflops(t, iters);
	triad tr = {0};
	int rc = triad_alloc(&tr, n, err);
	for (int t = 1; t <= n && !rc; t++)
		out->bandwidth_gbs[t] = bandwidth_gbs(&tr, t);
	triad_free(&tr);
	if (!rc)
		rc = node_overhead_us(n, &out->node_overhead_us, err);
	return rc;
}

/* --- the meta records ---------------------------------------------------------------------- */

/* A calibration is a Passnet__Meta whose numbers are, in order:
 *   [0]            layout version (PN_CALIB_LAYOUT = 1)
 *   [1]            T, the largest thread count measured
 *   [2]            per-node overhead, microseconds
 *   [3 .. 3+T)     peak GFLOP/s with 1..T threads
 *   [3+T .. 3+2T)  triad bandwidth, GB/s (1e9 bytes), with 1..T threads
 * and whose host and cpu_model name the machine (absent in records of an
 * older passnet).  version is the store's schema version, like every
 * record; text says the same in words for whoever reads the store with
 * mdb_dump.  Kept twice: under "machine/<id>" as it is (the id is the hash
 * of those bytes), and under "calibration" with the machine field added. */
static const char meta_key[] = "calibration";
static const char machine_prefix[] = "machine/";
#define MACHINE_PREFIX_LEN (sizeof machine_prefix - 1)

/* c packed into *buf (malloc'd), with the machine field `id` unless NULL. */
static int pack_calibration(const pn_calibration *c, const char *id, uint8_t **buf, size_t *len,
			    char *err)
{
	int t = c->max_threads;
	if (t < 1 || t > PN_CALIB_MAX_THREADS)
		return pn_fail(err, "calibration with %d threads cannot be stored", t);
	double nums[3 + 2 * PN_CALIB_MAX_THREADS];
	nums[0] = PN_CALIB_LAYOUT;
	nums[1] = t;
	nums[2] = c->node_overhead_us;
	for (int i = 1; i <= t; i++) {
		nums[2 + i] = c->peak_gflops[i];
		nums[2 + t + i] = c->bandwidth_gbs[i];
	}
	Passnet__Meta m = PASSNET__META__INIT;
	m.has_version = 1;
	m.version = PN_SCHEMA_VERSION;
	m.text = "calibration v1: layout, threads T, node overhead us, "
		 "peak GFLOP/s for 1..T threads, triad GB/s for 1..T threads";
	m.n_numbers = (size_t)(3 + 2 * t);
	m.numbers = nums;
	/* the casts drop const for protobuf-c's struct; pack only reads */
	m.host = c->host[0] ? (char *)c->host : NULL;
	m.cpu_model = c->cpu_model[0] ? (char *)c->cpu_model : NULL;
	m.machine = (char *)id;
	*len = passnet__meta__get_packed_size(&m);
	*buf = malloc(*len ? *len : 1);
	if (!*buf)
		return pn_fail(err, "out of memory");
	passnet__meta__pack(&m, *buf);
	return 0;
}

static void id_of_bytes(const uint8_t *buf, size_t len, char id[PN_MACHINE_ID_LEN + 1])
{
	snprintf(id, PN_MACHINE_ID_LEN + 1, "%016llx", (unsigned long long)XXH3_64bits(buf, len));
}

int pn_calibration_id(const pn_calibration *c, char id[PN_MACHINE_ID_LEN + 1], char *err)
{
	uint8_t *buf;
	size_t len;
	if (pack_calibration(c, NULL, &buf, &len, err))
		return -1;
	id_of_bytes(buf, len, id);
	free(buf);
	return 0;
}

int pn_calibration_put(pn_writer *w, pn_calibration *c, char *err)
{
	uint8_t *buf;
	size_t len;
	if (pack_calibration(c, NULL, &buf, &len, err))
		return -1;
	char id[PN_MACHINE_ID_LEN + 1], key[MACHINE_PREFIX_LEN + PN_MACHINE_ID_LEN + 1];
	id_of_bytes(buf, len, id);
	snprintf(key, sizeof key, "%s%s", machine_prefix, id);
	int rc = pn_put(w, PN_T_META, key, sizeof key - 1, buf, len, err);
	free(buf);
	if (rc || pack_calibration(c, id, &buf, &len, err))
		return -1;
	rc = pn_put(w, PN_T_META, meta_key, sizeof meta_key - 1, buf, len, err);
	free(buf);
	if (!rc)
		memcpy(c->machine, id, sizeof id);
	return rc;
}

/* A machine id as keys spell it: 16 lowercase hex digits. */
static int is_machine_id(const char *id)
{
	if (!id || strlen(id) != PN_MACHINE_ID_LEN)
		return 0;
	for (int i = 0; i < PN_MACHINE_ID_LEN; i++)
		if (!id[i] || !strchr("0123456789abcdef", id[i]))
			return 0;
	return 1;
}

/* The record under `name` (for messages) into out. */
static int from_meta(const char *name, const Passnet__Meta *m, pn_calibration *out, char *err)
{
	if (m->n_numbers < 3 || m->numbers[0] != PN_CALIB_LAYOUT)
		return pn_fail(err, "meta %s has an unknown layout; run passnet calibrate again", name);
	double t = m->numbers[1];
	if (!(t >= 1 && t <= PN_CALIB_MAX_THREADS) || t != floor(t) ||
	    m->n_numbers != (size_t)(3 + 2 * t))
		return pn_fail(err, "meta %s is corrupt (%zu numbers for %g threads)", name,
			       m->n_numbers, t);
	int n = (int)t;
	out->max_threads = n;
	out->node_overhead_us = m->numbers[2];
	for (int i = 1; i <= n; i++) {
		out->peak_gflops[i] = m->numbers[2 + i];
		out->bandwidth_gbs[i] = m->numbers[2 + n + i];
	}
	copy_text(out->host, m->host);
	copy_text(out->cpu_model, m->cpu_model);
	if (is_machine_id(m->machine))
		memcpy(out->machine, m->machine, PN_MACHINE_ID_LEN + 1);
	return 0;
}

static int unpack_calibration(const char *name, pn_bytes v, pn_calibration *out, char *err)
{
	memset(out, 0, sizeof(*out));
	Passnet__Meta *m = passnet__meta__unpack(NULL, v.len, v.data);
	if (!m)
		return pn_fail(err, "meta %s is not a Meta record", name);
	int rc = from_meta(name, m, out, err);
	passnet__meta__free_unpacked(m, NULL);
	return rc;
}

int pn_calibration_get(pn_rtxn *t, pn_calibration *out, char *err)
{
	memset(out, 0, sizeof(*out));
	pn_bytes v;
	int rc = pn_get(t, PN_T_META, meta_key, sizeof meta_key - 1, &v);
	if (rc)
		return rc > 0 ? 1 : pn_fail(err, "reading meta calibration failed");
	return unpack_calibration(meta_key, v, out, err);
}

int pn_machine_get(pn_rtxn *t, const char *id, pn_calibration *out, char *err)
{
	memset(out, 0, sizeof(*out));
	if (!is_machine_id(id))
		return pn_fail(err, "'%s' is not a machine id (16 lowercase hex digits)", id ? id : "");
	char key[MACHINE_PREFIX_LEN + PN_MACHINE_ID_LEN + 1];
	snprintf(key, sizeof key, "%s%s", machine_prefix, id);
	pn_bytes v;
	int rc = pn_get(t, PN_T_META, key, sizeof key - 1, &v);
	if (rc)
		return rc > 0 ? 1 : pn_fail(err, "reading meta %s failed", key);
	if (unpack_calibration(key, v, out, err))
		return -1;
	memcpy(out->machine, id, PN_MACHINE_ID_LEN + 1);
	return 0;
}

typedef struct machine_list {
	pn_calibration *items;
	int n, cap;
} machine_list;

/* One "machine/<id>" record; a corrupt one is reported and left out, so
 * one bad record does not hide the others. */
static int on_machine(void *ud, pn_bytes key, pn_bytes val)
{
	machine_list *l = ud;
	char name[96], id[PN_MACHINE_ID_LEN + 1], err[PN_ERRLEN];
	snprintf(name, sizeof name, "%.*s", (int)(key.len < 64 ? key.len : 64), (const char *)key.data);
	snprintf(id, sizeof id, "%s", name + MACHINE_PREFIX_LEN);
	if (key.len != MACHINE_PREFIX_LEN + PN_MACHINE_ID_LEN || !is_machine_id(id)) {
		pn_warn("meta %s: not a machine id; left out", name);
		return 0;
	}
	if (l->n == l->cap) {
		int cap = l->cap ? l->cap * 2 : 8;
		pn_calibration *p = realloc(l->items, sizeof(*p) * (size_t)cap);
		if (!p)
			return -1;
		l->items = p;
		l->cap = cap;
	}
	if (unpack_calibration(name, val, &l->items[l->n], err)) {
		pn_warn("%s; left out", err);
		return 0;
	}
	memcpy(l->items[l->n++].machine, id, sizeof id);
	return 0;
}

int pn_machines_list(pn_rtxn *t, pn_calibration **out, int *n, char *err)
{
	machine_list l = {0};
	if (pn_foreach(t, PN_T_META, machine_prefix, MACHINE_PREFIX_LEN, on_machine, &l) < 0) {
		free(l.items);
		*out = NULL;
		*n = 0;
		return pn_fail(err, "out of memory listing machines");
	}
	*out = l.items;
	*n = l.n;
	return 0;
}
