/*
 * profile.c - measuring subgraphs (see profile.h).
 *
 * Flags, each recorded with its threshold in the profile:
 *   slow               median time > PN_SLOW_RATIO x the fused roofline bound
 *                      (what a kernel that keeps every intermediate in cache
 *                      and runs at the machine's peak could do)
 *   fusible            at least 2 nodes and unfused bytes > PN_FUSIBLE_RATIO x
 *                      fused bytes (fusing would save that much traffic)
 *   overhead-bound     nodes x the calibrated per-node overhead is more than
 *                      PN_OVERHEAD_SHARE of the time (launch cost dominates)
 *   parallel-slowdown  timed with more than one thread and slower than the
 *                      same trials on 1 thread by more than PN_PARALLEL_SLOWDOWN,
 *                      still after both are timed again (time_one_thread)
 *   unstable           IQR/median stayed above PN_UNSTABLE_IQR after every
 *                      repeat
 *   failed             it could not be measured (reason recorded)
 * and, set by the ONNX Runtime baseline (exec/baseline.c, which defines them):
 *   compiler-regression, compiler-gap
 */
#include "exec/profile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/timing.h"
#include "common/util.h"
#include "canon/decode.h"
#include "runtime/compare.h"
#include "runtime/cost.h"
#include "runtime/session.h"
#include "runtime/infer.h"
#include "exec_build.h"

#define PN_SLOW_RATIO 10.0
#define PN_FUSIBLE_RATIO 1.5
#define PN_OVERHEAD_SHARE 0.5
#define PN_PARALLEL_SLOWDOWN 1.1
/* A timed trial of a tiny subgraph repeats it until the trial lasts this
 * long, so the clock's resolution and the timer call do not dominate. */
#define PN_MIN_TRIAL_US 20.0

const char *const pn_flag_names[PN_N_FLAGS] = {
	"slow", "fusible", "overhead-bound", "parallel-slowdown", "failed", "unstable",
	"compiler-regression", "compiler-gap",
};
const int pn_n_flags = PN_N_FLAGS;

int pn_flag_index(const char *name)
{
	for (int f = 0; f < pn_n_flags; f++)
		if (!strcmp(name, pn_flag_names[f]))
			return f;
	return -1;
}

struct pn_measure {
	pn_model *m;
	pn_type *types;          /* inferred, per value */
	pn_tensor **in, **out;
	pn_session *s;           /* one session: weights regenerated once */
	int threads;             /* the timing thread count */
	int assumed_dims;        /* unknown input dims, run at assumed_size */
	int64_t assumed_size;
	int ranged;              /* float inputs drawn in their recorded range */
	int64_t denormal_inputs; /* subnormal values in the inputs ... */
	int64_t denormal_outputs; /* ... and in the first correctness run's outputs */
	int threads_total;       /* the profile's thread count (o->threads or the calibration's) */
	double bytes;            /* what its values hold, summed: the memory it keeps */
	int reps;                /* runs per timed trial (0: not sized yet) */
	int timing_runs;         /* warm-ups, sizing runs and trials so far */
	int runs;                /* every run of the session, a trial's repeats each */
	/* The correctness run's outputs, and the comparisons with them still
	 * owed: timing's first run on the timing threads is the "second run",
	 * its first run on 1 thread the "1 thread" one (check_outputs). */
	pn_tensor **first;
	int owe_again, owe_one;
	char err[PN_ERRLEN];
};
typedef struct pn_measure measure;

/* --- small helpers ------------------------------------------------------------- */

static void add_flag(Passnet__Profile *p, int flag)
{
	p->flags = realloc(p->flags, sizeof(char *) * (p->n_flags + 1));
	p->flags[p->n_flags++] = strdup(pn_flag_names[flag]);
}

static void add_threshold(Passnet__Profile *p, const char *text)
{
	p->thresholds = realloc(p->thresholds, sizeof(char *) * (p->n_thresholds + 1));
	p->thresholds[p->n_thresholds++] = strdup(text);
}


static void free_outputs(measure *ms)
{
	for (int i = 0; ms->m && ms->out && i < ms->m->graph->n_outputs; i++) {
		pn_tensor_free(ms->out[i]);
		ms->out[i] = NULL;
	}
}

/* One run on `threads` threads. */
static int run_once(measure *ms, int threads)
{
	free_outputs(ms);
	ms->runs++;
	pn_session_set_threads(ms->s, threads);
	return pn_session_run(ms->s, ms->in, ms->m->graph->n_inputs, ms->out, ms->err);
}

/* --- subnormal values ------------------------------------------------------------------ */

/* Subnormals by bit pattern: a zero exponent field with a nonzero fraction
 * (zeros have both zero; a normal number has a nonzero exponent).  Read as
 * integers, so no floating-point operation on them takes the slow path
 * being counted. */
static int64_t subnormals_16(const uint16_t *x, int64_t n, uint16_t exp_mask, uint16_t frac_mask)
{
	int64_t k = 0;
	for (int64_t i = 0; i < n; i++)
		k += !(x[i] & exp_mask) && (x[i] & frac_mask);
	return k;
}

static int64_t subnormals_32(const uint32_t *x, int64_t n)
{
	int64_t k = 0;
	for (int64_t i = 0; i < n; i++)
		k += !(x[i] & 0x7f800000u) && (x[i] & 0x007fffffu);
	return k;
}

static int64_t subnormals_64(const uint64_t *x, int64_t n)
{
	int64_t k = 0;
	for (int64_t i = 0; i < n; i++)
		k += !(x[i] & 0x7ff0000000000000ull) && (x[i] & 0x000fffffffffffffull);
	return k;
}

int64_t pn_tensor_subnormals(const pn_tensor *t)
{
	if (!t || t->none)
		return 0;
	if (t->kind != PN_KIND_TENSOR) {   /* a sequence or an optional: its items */
		int64_t k = 0;
		for (int32_t i = 0; i < t->n_items; i++)
			k += pn_tensor_subnormals(t->items[i]);
		return k;
	}
	if (!t->data)
		return 0;
	switch (t->dtype) {
	case PN_FLOAT16:
		return subnormals_16(t->data, t->numel, 0x7c00u, 0x03ffu);
	case PN_BFLOAT16:
		return subnormals_16(t->data, t->numel, 0x7f80u, 0x007fu);
	case PN_FLOAT:
		return subnormals_32(t->data, t->numel);
	case PN_DOUBLE:
		return subnormals_64(t->data, t->numel);
	default:
		return 0;
	}
}

static int64_t subnormals_in(pn_tensor *const *ts, int n)
{
	int64_t k = 0;
	for (int i = 0; ts && i < n; i++)
		k += pn_tensor_subnormals(ts[i]);
	return k;
}

/* --- preparing a subgraph -------------------------------------------------------- */

static int prepare(measure *ms, const uint8_t *canon, size_t len, const pn_range *ranges,
		   int n_ranges, const pn_subgraph_weights *ws, const pn_profile_opts *o,
		   pn_profile_times *tm)
{
	double t0 = pn_now();
	int dec = pn_subgraph_decode(canon, len, 0, ws, &ms->m, NULL, ms->err);
	tm->decode += pn_now() - t0;
	if (dec)
		return -1;
	t0 = pn_now();
	const pn_graph *g = ms->m->graph;
	pn_type *decl = malloc(sizeof(pn_type) * (size_t)(g->n_inputs + 1));
	if (!decl)
		return pn_fail(ms->err, "out of memory");
	ms->assumed_dims = pn_concrete_input_types(g, ranges, n_ranges, decl, &ms->assumed_size,
						   ms->err);
	pn_infer_result r;
	int rc = ms->assumed_dims < 0 ? -1 : pn_infer_graph(g, NULL, decl, &r, ms->err);
	free(decl);
	if (rc)
		return -1;
	ms->types = malloc(sizeof(pn_type) * (size_t)(g->n_values + 1));
	for (int v = 0; ms->types && v < g->n_values; v++) {
		ms->types[v] = r.v[v].type;
		double numel = pn_type_numel(&ms->types[v]);
		if (numel > 0)
			ms->bytes += numel * (double)pn_dtype_size(ms->types[v].dtype);
	}
	pn_infer_result_free(&r);
	tm->infer += pn_now() - t0;
	t0 = pn_now();
	ms->in = calloc((size_t)g->n_inputs + 1, sizeof(void *));
	ms->out = calloc((size_t)g->n_outputs + 1, sizeof(void *));
	if (!ms->types || !ms->in || !ms->out)
		return pn_fail(ms->err, "out of memory");
	for (int i = 0; i < g->n_inputs; i++) {
		const pn_range *r = i < n_ranges && n_ranges == g->n_inputs ? &ranges[i] : NULL;
		ms->ranged += r && r->known && pn_dtype_is_float(ms->types[g->inputs[i]].dtype);
		if (!(ms->in[i] = pn_input_for(g, i, &ms->types[g->inputs[i]], o->seed, r, ms->err)))
			return -1;
	}
	ms->denormal_inputs = subnormals_in(ms->in, g->n_inputs);
	tm->inputs += pn_now() - t0;
	pn_exec_opts eo = {.seed = o->seed, .threads = o->threads};
	ms->threads = o->threads;
	return pn_session_new(g, &eo, &ms->s, ms->err);
}

static void free_first(measure *ms)
{
	for (int i = 0; ms->first && i < ms->m->graph->n_outputs; i++)
		pn_tensor_free(ms->first[i]);
	free(ms->first);
	ms->first = NULL;
}

static void release(measure *ms)
{
	free_outputs(ms);
	free_first(ms);
	for (int i = 0; ms->m && ms->in && i < ms->m->graph->n_inputs; i++)
		pn_tensor_free(ms->in[i]);
	free(ms->in);
	free(ms->out);
	free(ms->types);
	pn_session_free(ms->s);
	pn_model_free(ms->m);
}

/* --- the correctness run ---------------------------------------------------------- */

/* 1 when t holds no NaN, and no infinity unless `inf_ok`. */
static int all_finite(const pn_tensor *t, int inf_ok)
{
	if (t->kind != PN_KIND_TENSOR || !pn_dtype_is_float(t->dtype))
		return 1;
	for (int64_t i = 0; i < t->numel; i++) {
		double x = pn_tensor_get_f64(t, i);
		if (isnan(x) || (!inf_ok && isinf(x)))
			return 0;
	}
	return 1;
}

/* Whether one of g's constants holds an infinity: a causal mask filled with
 * -inf means its infinities, and they reach the outputs of a cut that ends
 * before the Softmax. */
static int has_infinite_constant(const pn_graph *g)
{
	for (int v = 0; v < g->n_values; v++) {
		const pn_tensor *t = g->values[v].data;
		if (!t || t->kind != PN_KIND_TENSOR || !pn_dtype_is_float(t->dtype))
			continue;
		for (int64_t i = 0; i < t->numel; i++)
			if (isinf(pn_tensor_get_f64(t, i)))
				return 1;
	}
	return 0;
}

/* Finite (no NaN; no infinity the subgraph's constants do not explain), and
 * bitwise equal across two runs and across thread counts.  Only the first
 * run is made here: its outputs are kept, and the other two comparisons are
 * owed to timing (settle_checks), whose first run on the timing threads is
 * the second run and whose first on 1 thread the 1-thread one; they used to
 * be two runs more of every subgraph, each the length of a warm-up.  A
 * measurement never timed (the ORT baseline's, of a subgraph exec already
 * profiled) settles neither. */
static int check_outputs(measure *ms, int threads)
{
	const pn_graph *g = ms->m->graph;
	int inf_ok = has_infinite_constant(g);
	ms->first = calloc((size_t)g->n_outputs + 1, sizeof(void *));
	int rc = ms->first ? run_once(ms, threads) : pn_fail(ms->err, "out of memory");
	if (!rc)
		ms->denormal_outputs = subnormals_in(ms->out, g->n_outputs);
	for (int i = 0; !rc && i < g->n_outputs; i++) {
		if (!all_finite(ms->out[i], inf_ok))
			rc = pn_fail(ms->err, "non-finite output: %s on the seeded inputs",
				     g->values[g->outputs[i]].name);
		/* kept apart from out, which the next run frees; the bytes count
		 * in what the measurement holds */
		ms->first[i] = ms->out[i];
		ms->out[i] = NULL;
		if (ms->first[i] && ms->first[i]->kind == PN_KIND_TENSOR)
			ms->bytes += (double)ms->first[i]->numel *
				     (double)pn_dtype_size(ms->first[i]->dtype);
	}
	ms->owe_again = 1;
	ms->owe_one = threads > 1;
	return rc;
}

/* After a run of timing on `threads` threads: the comparison with the
 * correctness run that this run settles, if one is owed.  Outside the
 * timed interval: the caller has read the clock. */
static int settle_checks(measure *ms, int threads)
{
	const char *what;
	if (ms->owe_again && (threads != 1 || !ms->owe_one)) {
		ms->owe_again = 0;
		what = "a second run";
	} else if (ms->owe_one && threads == 1 && !ms->owe_again) {
		ms->owe_one = 0;
		what = "1 thread";
	} else {
		return 0;
	}
	const pn_graph *g = ms->m->graph;
	for (int i = 0; i < g->n_outputs; i++)
		if (!pn_tensor_same_bits(ms->first[i], ms->out[i]))
			return pn_fail(ms->err, "output %s differs on %s (not deterministic)",
				       g->values[g->outputs[i]].name, what);
	return 0;
}

/* --- timing --------------------------------------------------------------------------- */

/* One run on `threads` threads, timed into *us, counted among the timing runs. */
static int timed_run(measure *ms, int threads, double *us)
{
	double t0 = pn_now();
	int rc = run_once(ms, threads);
	*us = (pn_now() - t0) * 1e6;
	ms->timing_runs++;
	return rc ? rc : settle_checks(ms, threads);
}

/* Runs per timed trial, so that a trial of a run of `us` lasts PN_MIN_TRIAL_US. */
static int reps_for(double us)
{
	int reps = us >= PN_MIN_TRIAL_US ? 1 : (int)ceil(PN_MIN_TRIAL_US / (us > 0.01 ? us : 0.01));
	return reps > 10000 ? 10000 : reps;
}

/* The runs before the trials: full's W warm-ups and its sizing run every
 * time; adaptive's one warm-up, which sizes the trial, only when *reps is
 * not known yet (the session stays warm between its phases). */
static int warm_up(measure *ms, int threads, const pn_profile_opts *o, int *reps)
{
	int full = o->protocol == PN_PROTOCOL_FULL;
	if (!full && *reps)
		return 0;
	double us = 0;
	for (int w = 0; w < (full ? o->warmups + 1 : 1); w++)
		if (timed_run(ms, threads, &us))
			return -1;
	*reps = reps_for(us);
	return 0;
}

/* Trials into times[0..*n) until `rule` says they are enough. */
static int trials(measure *ms, int threads, const pn_profile_opts *o, const pn_stop_rule *rule,
		  int *reps, double *times, int *n)
{
	if (warm_up(ms, threads, o, reps))
		return -1;
	*n = 0;
	do {
		double t0 = pn_now();
		for (int r = 0; r < *reps; r++)
			if (run_once(ms, threads))
				return -1;
		times[(*n)++] = (pn_now() - t0) * 1e6 / *reps;
		ms->timing_runs++;
		if (settle_checks(ms, threads))
			return -1;
	} while (!pn_trials_enough(times, *n, rule));
	return 0;
}

static void summarise(const double *times, int n, double *median, double *iqr)
{
	double *s = malloc(sizeof(double) * (size_t)n);
	memcpy(s, times, sizeof(double) * (size_t)n);
	/* Median, then the quartiles of the now sorted copy, interpolated
	 * between ranks as stored IQRs always were (common/timing.h). */
	*median = pn_median(s, (size_t)n);
	*iqr = pn_quantile_weighted(s, n, 0.75) - pn_quantile_weighted(s, n, 0.25);
	free(s);
}

/* The stopping rule of a phase, before its thresholds. */
static pn_stop_rule stop_rule(const pn_profile_opts *o)
{
	pn_stop_rule r = {.min_trials = o->trials, .max_trials = o->trials};
	if (o->protocol == PN_PROTOCOL_ADAPTIVE && o->trials > PN_PROTOCOL_MIN_TRIALS)
		r.min_trials = PN_PROTOCOL_MIN_TRIALS;
	return r;
}

/* One phase: trials on `threads` threads, measured again while unstable
 * (up to max_repeats times); the last measurement into times[0..*n). */
static int phase(measure *ms, int threads, const pn_profile_opts *o, const pn_stop_rule *rule,
		 int *reps, double *times, int *n, double *median, double *iqr, int *repeats)
{
	for (*repeats = 0;; ++*repeats) {
		if (trials(ms, threads, o, rule, reps, times, n))
			return -1;
		summarise(times, *n, median, iqr);
		if (*median <= 0 || *iqr / *median <= PN_UNSTABLE_IQR || *repeats == o->max_repeats)
			return 0;
	}
}

/* The N-thread phase's rule: its median against the thresholds of slow
 * and overhead-bound (bounds(), before timing). */
static pn_stop_rule n_thread_rule(const pn_profile_opts *o, const Passnet__Profile *p)
{
	pn_stop_rule rule = stop_rule(o);
	if (p->bound_fused_us > 0)
		pn_stop_rule_add(&rule, PN_SLOW_RATIO * p->bound_fused_us, 0);
	pn_stop_rule_add(&rule, p->overhead_us / PN_OVERHEAD_SHARE, 0);
	return rule;
}

/* The N-thread trials. */
static int time_subgraph(measure *ms, const pn_profile_opts *o, Passnet__Profile *p)
{
	double *times = malloc(sizeof(double) * (size_t)o->trials);
	if (!times)
		return pn_fail(ms->err, "out of memory");
	pn_stop_rule rule = n_thread_rule(o, p);
	double median = 0, iqr = 0;
	int n = 0, rep = 0;
	int rc = phase(ms, ms->threads, o, &rule, &ms->reps, times, &n, &median, &iqr, &rep);
	p->n_times_us = (size_t)n;
	p->times_us = times;
	p->has_median_us = p->has_iqr_us = p->has_repeats = 1;
	p->median_us = median;
	p->iqr_us = iqr;
	p->repeats = (uint32_t)rep;
	return rc;
}

/* The 1-thread phase: its median is compared with the N-thread median /
 * PN_PARALLEL_SLOWDOWN, a threshold known to the N-thread sample's spread. */
static int one_thread_phase(measure *ms, const pn_profile_opts *o, const Passnet__Profile *p,
			    double *times, double *median)
{
	pn_stop_rule rule = stop_rule(o);
	if (o->protocol == PN_PROTOCOL_ADAPTIVE)
		rule.far = PN_PROTOCOL_FAR;
	if (p->median_us > 0)
		pn_stop_rule_add(&rule, p->median_us / PN_PARALLEL_SLOWDOWN, p->iqr_us / p->median_us);
	double iqr;
	int n, rep;
	return phase(ms, 1, o, &rule, &ms->reps, times, &n, median, &iqr, &rep);
}

/*
 * The same trials on 1 thread, when timing uses more.  A parallel slowdown
 * must survive a second look: another process taking a core stalls every
 * fork-join of an N-thread run (the team waits for its descheduled thread)
 * but hardly touches a 1-thread run.  So when N threads look slower than 1
 * by more than PN_PARALLEL_SLOWDOWN, both are timed once more and each keeps
 * the trials with the lower median (contention only ever adds time).
 */
static int time_one_thread(measure *ms, const pn_profile_opts *o, Passnet__Profile *p)
{
	size_t cap = (size_t)o->trials;
	double *t1 = malloc(sizeof(double) * cap), *tn = malloc(sizeof(double) * cap), med, iqr;
	int rc = t1 && tn ? one_thread_phase(ms, o, p, t1, &med) : pn_fail(ms->err, "out of memory");
	if (!rc) {
		p->has_median_1thread_us = 1;
		p->median_1thread_us = med;
	}
	if (!rc && p->median_us > PN_PARALLEL_SLOWDOWN * p->median_1thread_us) {
		pn_stop_rule rule = n_thread_rule(o, p);
		int n, rep;
		rc = phase(ms, ms->threads, o, &rule, &ms->reps, tn, &n, &med, &iqr, &rep);
		if (!rc && med < p->median_us) {
			memcpy(p->times_us, tn, sizeof(double) * (size_t)n);
			p->n_times_us = (size_t)n;
			p->median_us = med;
			p->iqr_us = iqr;
		}
		if (!rc && !(rc = one_thread_phase(ms, o, p, t1, &med)) && med < p->median_1thread_us)
			p->median_1thread_us = med;
	}
	free(t1);
	free(tn);
	return rc;
}

/* --- cost, bounds and flags ------------------------------------------------------------ */

/* The cost and the roofline bounds, before timing: the adaptive protocol
 * stops its trials by how far the median is from them. */
static void bounds(measure *ms, const pn_calibration *cal, int threads, Passnet__Profile *p)
{
	pn_graph_cost gc;
	char err[PN_ERRLEN];
	if (pn_graph_cost_of(ms->m->graph, ms->types, &gc, err))
		memset(&gc, 0, sizeof(gc));
	p->has_flops = p->has_bytes_fused = p->has_bytes_unfused = 1;
	p->flops = gc.flops;
	p->bytes_fused = gc.bytes_fused;
	p->bytes_unfused = gc.bytes_unfused;
	int t = threads <= cal->max_threads ? threads : cal->max_threads;
	double peak = cal->peak_gflops[t] * 1e9, bw = cal->bandwidth_gbs[t] * 1e9;
	if (peak > 0 && bw > 0) {
		p->has_bound_fused_us = p->has_bound_unfused_us = 1;
		p->bound_fused_us = fmax(gc.flops / peak, gc.bytes_fused / bw) * 1e6;
		p->bound_unfused_us = fmax(gc.flops / peak, gc.bytes_unfused / bw) * 1e6;
	}
	p->has_overhead_us = 1;
	p->overhead_us = ms->m->graph->n_nodes * cal->node_overhead_us;
}

static void flags(measure *ms, const pn_profile_opts *o, Passnet__Profile *p)
{
	char text[192];
	snprintf(text, sizeof text, "slow: median > %g x bound_fused", PN_SLOW_RATIO);
	add_threshold(p, text);
	snprintf(text, sizeof text, "fusible: nodes >= 2 and bytes_unfused > %g x bytes_fused",
		 PN_FUSIBLE_RATIO);
	add_threshold(p, text);
	snprintf(text, sizeof text, "overhead-bound: overhead > %g x median", PN_OVERHEAD_SHARE);
	add_threshold(p, text);
	snprintf(text, sizeof text, "parallel-slowdown: median > %g x median_1thread",
		 PN_PARALLEL_SLOWDOWN);
	add_threshold(p, text);
	snprintf(text, sizeof text, "unstable: iqr > %g x median after %d repeats", PN_UNSTABLE_IQR,
		 o->max_repeats);
	add_threshold(p, text);
	pn_protocol_text(o->protocol, o->warmups, o->trials, text, sizeof text);
	add_threshold(p, text);
	if (p->bound_fused_us > 0 && p->median_us > PN_SLOW_RATIO * p->bound_fused_us)
		add_flag(p, PN_FLAG_SLOW);
	if (ms->m->graph->n_nodes >= 2 && p->bytes_fused > 0 &&
	    p->bytes_unfused > PN_FUSIBLE_RATIO * p->bytes_fused)
		add_flag(p, PN_FLAG_FUSIBLE);
	if (p->overhead_us > PN_OVERHEAD_SHARE * p->median_us)
		add_flag(p, PN_FLAG_OVERHEAD);
	if (p->has_median_1thread_us && p->median_us > PN_PARALLEL_SLOWDOWN * p->median_1thread_us)
		add_flag(p, PN_FLAG_PARALLEL);
}

/* --- one subgraph ------------------------------------------------------------------------ */

/* A profile that failed during timing (a run's error, or outputs that
 * differ from the correctness run's) keeps no times: a median of a
 * subgraph that computes two answers measures nothing. */
static void drop_times(Passnet__Profile *p)
{
	free(p->times_us);
	p->times_us = NULL;
	p->n_times_us = 0;
	p->has_median_us = p->has_iqr_us = p->has_repeats = p->has_median_1thread_us = 0;
	p->median_us = p->iqr_us = p->median_1thread_us = 0;
	p->repeats = 0;
}

static void fail(Passnet__Profile *p, const char *why)
{
	p->status = strdup("failed");
	p->reason = strdup(why);
	add_flag(p, PN_FLAG_FAILED);
}

/* The profile's fixed fields, before anything runs. */
static void profile_header(const pn_profile_opts *o, int threads, Passnet__Profile *p)
{
	passnet__profile__init(p);
	p->has_version = p->has_threads = p->has_warmups = p->has_trials = p->has_seed = 1;
	p->version = 1;
	p->executor_build = strdup(PN_EXECUTOR_BUILD);
	p->threads = (uint32_t)threads;
	p->warmups = (uint32_t)o->warmups;
	p->trials = (uint32_t)o->trials;
	p->seed = o->seed;
}

pn_measure *pn_profile_check(const uint8_t *canon, size_t len, const pn_range *ranges,
			     int n_ranges, const pn_subgraph_weights *ws, const pn_profile_opts *o,
			     const pn_calibration *cal, Passnet__Profile *p, pn_profile_times *tm)
{
	int threads = o->threads > 0 ? o->threads : cal->max_threads > 0 ? cal->max_threads : 1;
	profile_header(o, threads, p);
	/* the machine whose roofline the bounds and flags are judged on */
	if (cal->machine[0])
		p->machine = strdup(cal->machine);
	measure *ms = calloc(1, sizeof(*ms));
	if (!ms) {
		fail(p, "out of memory");
		return NULL;
	}
	ms->threads_total = threads;
	int rc = prepare(ms, canon, len, ranges, n_ranges, ws, o, tm);
	if (!rc) {
		p->has_nodes = 1;
		p->nodes = (uint32_t)ms->m->graph->n_nodes;
		p->has_assumed_dims = p->has_assumed_size = ms->assumed_dims > 0;
		p->assumed_dims = (uint32_t)ms->assumed_dims;
		p->assumed_size = (uint32_t)ms->assumed_size;
		p->has_ranged_inputs = 1;
		p->ranged_inputs = (uint32_t)ms->ranged;
		double t0 = pn_now();
		rc = check_outputs(ms, threads);
		tm->check_runs += ms->runs;
		double weights = pn_session_weight_seconds(ms->s);
		tm->weights += weights;
		tm->correct += pn_now() - t0 - weights;
		p->has_denormal_inputs = p->has_denormal_outputs = 1;
		p->denormal_inputs = (uint64_t)ms->denormal_inputs;
		p->denormal_outputs = (uint64_t)ms->denormal_outputs;
	}
	if (rc) {
		fail(p, ms->err);
		pn_profile_drop(ms);
		return NULL;
	}
	return ms;
}

void pn_profile_time(pn_measure *ms, const pn_profile_opts *o, const pn_calibration *cal,
		     Passnet__Profile *p, pn_profile_times *tm)
{
	int threads = ms->threads_total;
	bounds(ms, cal, threads, p);
	double t0 = pn_now();
	int rc = time_subgraph(ms, o, p);
	if (!rc && threads > 1)
		rc = time_one_thread(ms, o, p);
	double t1 = pn_now();
	tm->timing += t1 - t0;
	p->protocol = strdup(pn_protocol_names[o->protocol]);
	p->has_timing_runs = 1;
	p->timing_runs = (uint32_t)ms->timing_runs;
	if (rc) {
		drop_times(p);
		fail(p, ms->err);
	} else {
		if (p->median_us > 0 && p->iqr_us / p->median_us > PN_UNSTABLE_IQR)
			add_flag(p, PN_FLAG_UNSTABLE);
		flags(ms, o, p);
		int unstable = 0;
		for (size_t i = 0; i < p->n_flags; i++)
			unstable |= !strcmp(p->flags[i], "unstable");
		p->status = strdup(unstable ? "unstable" : "ok");
	}
	pn_profile_drop(ms);
	tm->cost += pn_now() - t1;
}

void pn_profile_input_source(Passnet__Profile *p, int from_real_run)
{
	p->has_inputs_from_real_run = 1;
	p->inputs_from_real_run = from_real_run != 0;
}

double pn_measure_bytes(const pn_measure *ms)
{
	return ms ? ms->bytes : 0;
}

const pn_graph *pn_measure_graph(const pn_measure *ms)
{
	return ms->m->graph;
}

pn_tensor *const *pn_measure_inputs(const pn_measure *ms)
{
	return ms->in;
}

pn_tensor *const *pn_measure_outputs(const pn_measure *ms)
{
	return ms->first;
}

void pn_profile_drop(pn_measure *ms)
{
	if (!ms)
		return;
	release(ms);
	free(ms);
}

void pn_profile_one(const uint8_t *canon, size_t len, const pn_range *ranges, int n_ranges,
		    const pn_subgraph_weights *ws, const pn_profile_opts *o, const pn_calibration *cal,
		    Passnet__Profile *p)
{
	pn_profile_times tm;
	memset(&tm, 0, sizeof(tm));
	pn_measure *ms = pn_profile_check(canon, len, ranges, n_ranges, ws, o, cal, p, &tm);
	if (ms)
		pn_profile_time(ms, o, cal, p, &tm);
}

void pn_profile_clear(Passnet__Profile *p)
{
	free(p->executor_build);
	free(p->times_us);
	for (size_t i = 0; i < p->n_flags; i++)
		free(p->flags[i]);
	free(p->flags);
	for (size_t i = 0; i < p->n_thresholds; i++)
		free(p->thresholds[i]);
	free(p->thresholds);
	free(p->status);
	free(p->reason);
	free(p->machine);
	free(p->protocol);
	passnet__profile__init(p);
}
