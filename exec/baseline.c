/*
 * baseline.c - the ONNX Runtime baseline stage (see baseline.h).
 *
 * Flags, each recorded with its threshold in the profile:
 *   compiler-regression  ORT at level ALL slower than ORT with optimisations
 *                        disabled by more than PN_COMPILER_REGRESSION (the
 *                        medians, 1 thread), still after both are timed again
 *                        (each keeping its lower median: contention only ever
 *                        adds time), as parallel-slowdown is confirmed
 *   compiler-gap         ORT at level ALL above PN_COMPILER_GAP x the fused
 *                        roofline bound of 1 thread (what ORT's fusions leave
 *                        to a better compiler)
 * and ort.ratio: ORT-ALL's median over passnet's 1-thread median.
 */
#include "exec/baseline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/timing.h"
#include "common/util.h"
#include "canon/decode.h"
#include "exec/calibrate.h"
#include "exec/ort.h"
#include "exec/profile.h"
#include "runtime/compare.h"
#include "runtime/session.h"
#include "store/records.h"
#include "store/subgraphs.h"
#include "store/tables.h"

#define PN_COMPILER_REGRESSION 1.1
#define PN_COMPILER_GAP 10.0
/* ORT's outputs against passnet's: float32 at ES_t level t = -3, as the
 * ORT tests use (rtol 10^(5.886 * -3 / 5), atol 10^-3). */
#define PN_ORT_RTOL 2.9e-4
#define PN_ORT_ATOL 1e-3
#define MIN_TRIAL_US 20.0
#define COMMIT_EVERY 16

/* --- grouping baselines ----------------------------------------------------------- */

const char *const pn_baseline_size_names[PN_BASELINE_SIZES] = {
	"1 node", "2 nodes", "3-4 nodes", "5-8 nodes", "9-16 nodes", "17+ nodes",
};

int pn_baseline_size_bucket(uint32_t nodes)
{
	return nodes <= 1 ? 0 : nodes == 2 ? 1 : nodes <= 4 ? 2 : nodes <= 8 ? 3 :
	       nodes <= 16 ? 4 : 5;
}

void pn_baseline_op_set(const char *ops, char *out, size_t cap)
{
	char *copy = strdup(ops ? ops : ""), *words[64];
	int n = 0;
	if (cap)
		out[0] = 0;
	if (!copy || !cap) {
		free(copy);
		return;
	}
	char *save = NULL;
	for (char *w = strtok_r(copy, " ", &save); w && n < 64; w = strtok_r(NULL, " ", &save))
		words[n++] = w;
	qsort(words, (size_t)n, sizeof(char *), pn_cmp_str);
	size_t at = 0;
	for (int i = 0; i < n; i++) {
		if (i && !strcmp(words[i], words[i - 1]))
			continue;
		int k = snprintf(out + at, cap - at, "%s%s", at ? " " : "", words[i]);
		if (k < 0 || (size_t)k >= cap - at) {
			out[at] = 0;   /* whole op names only: the cut one is left out */
			break;
		}
		at += (size_t)k;
	}
	free(copy);
}

/* --- the model ORT loads ----------------------------------------------------------- */

/* The subgraph as ONNX bytes, weights kept as metadata regenerated with
 * seed: the very weights passnet's session draws. */
static int model_bytes(const uint8_t *canon, size_t len, const pn_subgraph_weights *ws,
		       uint64_t seed, uint8_t **buf, size_t *n, char *err)
{
	pn_model *m = NULL;
	Onnx__ModelProto *mp = NULL;
	/* Not for_onnx: a boundary of unknown rank (it depends on data) goes to
	 * ORT as a tensor type without a shape, which ORT takes, since it is
	 * fed the profile's concrete inputs.  Export keeps the stricter rule. */
	int rc = pn_subgraph_decode(canon, len, 0, ws, &m, &mp, err);
	if (!rc)
		rc = pn_subgraph_fill_weights(mp, m, seed, &m->arena, err);
	if (!rc) {
		*n = protobuf_c_message_get_packed_size(&mp->base);
		*buf = malloc(*n ? *n : 1);
		if (*buf)
			protobuf_c_message_pack(&mp->base, *buf);
		else
			rc = pn_fail(err, "out of memory");
	}
	pn_model_free(m);
	return rc;
}

/* --- one backend session ------------------------------------------------------------ */

typedef struct level_run {
	pn_ort_session *s;
	const pn_graph *g;
	pn_tensor *const *in;
	const char **in_names, **out_names;
	char err[PN_ERRLEN];
} level_run;

static int run1(level_run *r)
{
	return pn_ort_run(r->s, r->in, r->in_names, r->g->n_inputs, r->out_names, r->g->n_outputs,
			  r->err);
}

/* W warm-ups, then T trials each of enough runs to last MIN_TRIAL_US. */
static int trials(level_run *r, int warmups, int n, double *times)
{
	for (int w = 0; w < warmups; w++)
		if (run1(r))
			return -1;
	double t0 = pn_now();
	if (run1(r))
		return -1;
	double us = (pn_now() - t0) * 1e6;
	int reps = us >= MIN_TRIAL_US ? 1 : (int)ceil(MIN_TRIAL_US / (us > 0.01 ? us : 0.01));
	if (reps > 10000)
		reps = 10000;
	for (int t = 0; t < n; t++) {
		t0 = pn_now();
		for (int k = 0; k < reps; k++)
			if (run1(r))
				return -1;
		times[t] = (pn_now() - t0) * 1e6 / reps;
	}
	return 0;
}

static void summarise(const double *times, int n, double *median, double *iqr)
{
	double *s = malloc(sizeof(double) * (size_t)n);
	if (!s) {
		*median = *iqr = 0;
		return;
	}
	memcpy(s, times, sizeof(double) * (size_t)n);
	*median = pn_median(s, (size_t)n);
	*iqr = pn_quantile_weighted(s, n, 0.75) - pn_quantile_weighted(s, n, 0.25);
	free(s);
}

/* The trials, measured again while unstable; *repeats counts those. */
static int time_level(level_run *r, int warmups, int n, int max_repeats, double *times,
		      double *median, double *iqr, uint32_t *repeats)
{
	for (int rep = 0;; rep++) {
		if (trials(r, warmups, n, times))
			return -1;
		summarise(times, n, median, iqr);
		if (*median <= 0 || *iqr / *median <= PN_UNSTABLE_IQR || rep == max_repeats)
			return 0;
		++*repeats;
	}
}

/* ORT's outputs of the last run against passnet's. */
static int agrees(level_run *r, pn_tensor *const *ref, double *max_abs, double *max_rel,
		  char *diff, size_t diff_size)
{
	int ok = 1;
	for (int i = 0; i < r->g->n_outputs; i++) {
		pn_tensor got;
		pn_cmp c;
		if (pn_ort_output(r->s, i, &got, r->err)) {
			snprintf(diff, diff_size, "output %d: %s", i, r->err);
			return 0;
		}
		pn_compare(&got, ref[i], PN_ORT_RTOL, PN_ORT_ATOL, &c);
		if (c.max_abs > *max_abs)
			*max_abs = c.max_abs;
		if (c.max_rel > *max_rel)
			*max_rel = c.max_rel;
		if (c.cls != PN_CMP_OK && ok) {
			ok = 0;
			snprintf(diff, diff_size, "output %d: %s", i, c.what);
		}
	}
	return ok;
}

/* --- one subgraph ----------------------------------------------------------------- */

typedef struct job {
	pn_ort *ort;
	const pn_baseline_opts *o;
	const pn_calibration *cal;
	Passnet__Profile *p;         /* the stored profile, completed in place */
	const uint8_t *canon;
	size_t len;
	const pn_range *ranges;
	int n_ranges;
	pn_subgraph_weights ws;          /* its weights' statistics (canon/decode.h) */
} job;

static char *dup_str(const char *s)
{
	return strdup(s ? s : "");
}

static void refuse(Passnet__OrtBaseline *b, const char *status, const char *msg)
{
	free(b->status);
	free(b->message);
	b->status = dup_str(status);
	b->message = dup_str(msg);
}

/* Sessions of both levels on n threads; 0, or -1 with ORT's message in err. */
static int open_levels(job *j, const uint8_t *model, size_t n, int threads, level_run lv[2],
		       pn_ort_graph *graphs, char *err)
{
	const int levels[2] = {PN_ORT_ENABLE_ALL, PN_ORT_DISABLE_ALL};
	for (int k = 0; k < 2; k++)
		if (pn_ort_session_new(j->ort, model, n, levels[k], threads, graphs ? &graphs[k] : NULL,
				       &lv[k].s, err))
			return -1;
	return 0;
}

static void close_levels(level_run lv[2])
{
	for (int k = 0; k < 2; k++) {
		pn_ort_session_free(lv[k].s);
		lv[k].s = NULL;
	}
}

static double *dup_times(const double *t, int n)
{
	double *d = malloc(sizeof(double) * (size_t)n);
	if (d)
		memcpy(d, t, sizeof(double) * (size_t)n);
	return d;
}

/* Both levels timed; a regression timed once more, the lower medians kept. */
static int time_both(job *j, level_run lv[2], Passnet__OrtBaseline *b, char *err)
{
	const Passnet__Profile *p = j->p;
	int n = (int)(p->trials ? p->trials : 5), w = (int)p->warmups;
	double *t[2] = {malloc(sizeof(double) * (size_t)n), malloc(sizeof(double) * (size_t)n)};
	double med[2] = {0, 0}, iqr[2] = {0, 0};
	int rc = t[0] && t[1] ? 0 : pn_fail(err, "out of memory");
	for (int k = 0; k < 2 && !rc; k++)
		if ((rc = time_level(&lv[k], w, n, j->o->max_repeats, t[k], &med[k], &iqr[k],
				     &b->repeats)))
			pn_fail(err, "%s", lv[k].err);
	if (!rc) {
		b->n_times_all_us = b->n_times_disabled_us = (size_t)n;
		b->times_all_us = dup_times(t[0], n);
		b->times_disabled_us = dup_times(t[1], n);
	}
	if (!rc && med[0] > PN_COMPILER_REGRESSION * med[1]) {
		for (int k = 0; k < 2 && !rc; k++) {
			double m2, q2;
			if ((rc = time_level(&lv[k], w, n, 0, t[k], &m2, &q2, &b->repeats))) {
				pn_fail(err, "%s", lv[k].err);
			} else if (m2 < med[k]) {
				med[k] = m2;
				iqr[k] = q2;
				memcpy(k ? b->times_disabled_us : b->times_all_us, t[k],
				       sizeof(double) * (size_t)n);
			}
		}
	}
	b->has_median_all_us = b->has_iqr_all_us = b->has_median_disabled_us =
		b->has_iqr_disabled_us = b->has_repeats = !rc;
	b->median_all_us = med[0];
	b->iqr_all_us = iqr[0];
	b->median_disabled_us = med[1];
	b->iqr_disabled_us = iqr[1];
	free(t[0]);
	free(t[1]);
	return rc;
}

/* Where the profile is multi-threaded: both medians on its threads. */
static void time_threads(job *j, const uint8_t *model, size_t len, level_run base[2],
			 Passnet__OrtBaseline *b)
{
	int threads = (int)j->p->threads, n = (int)(j->p->trials ? j->p->trials : 5);
	if (threads <= 1)
		return;
	level_run lv[2];
	char err[PN_ERRLEN];
	memcpy(lv, base, sizeof lv);
	lv[0].s = lv[1].s = NULL;
	double *t = malloc(sizeof(double) * (size_t)n), med[2], iqr;
	int rc = t ? open_levels(j, model, len, threads, lv, NULL, err) : -1;
	uint32_t reps = 0;
	for (int k = 0; k < 2 && !rc; k++)
		rc = time_level(&lv[k], (int)j->p->warmups, n, 0, t, &med[k], &iqr, &reps);
	if (!rc) {
		b->has_threads_n = b->has_median_all_n_us = b->has_median_disabled_n_us = 1;
		b->threads_n = (uint32_t)threads;
		b->median_all_n_us = med[0];
		b->median_disabled_n_us = med[1];
	}
	close_levels(lv);
	free(t);
}

static void baseline_runs(job *j, pn_measure *ms, const uint8_t *model, size_t len,
			  Passnet__OrtBaseline *b)
{
	const pn_graph *g = pn_measure_graph(ms);
	level_run lv[2];
	memset(lv, 0, sizeof lv);
	const char **names = calloc((size_t)(g->n_inputs + g->n_outputs) + 1, sizeof(char *));
	char err[PN_ERRLEN];
	pn_ort_graph graphs[2];
	if (!names) {
		refuse(b, "skipped", "out of memory");
		return;
	}
	for (int i = 0; i < g->n_inputs; i++)
		names[i] = g->values[g->inputs[i]].name;
	for (int i = 0; i < g->n_outputs; i++)
		names[g->n_inputs + i] = g->values[g->outputs[i]].name;
	for (int k = 0; k < 2; k++) {
		lv[k].g = g;
		lv[k].in = pn_measure_inputs(ms);
		lv[k].in_names = names;
		lv[k].out_names = names + g->n_inputs;
	}
	int rc = open_levels(j, model, len, 1, lv, graphs, err);
	for (int k = 0; k < 2 && !rc; k++)
		if ((rc = run1(&lv[k])))
			snprintf(err, sizeof err, "%s", lv[k].err);
	if (rc) {
		refuse(b, "refused", err);
	} else {
		b->has_nodes_all = graphs[0].nodes >= 0;
		b->nodes_all = (uint32_t)(graphs[0].nodes > 0 ? graphs[0].nodes : 0);
		b->has_nodes_disabled = graphs[1].nodes >= 0;
		b->nodes_disabled = (uint32_t)(graphs[1].nodes > 0 ? graphs[1].nodes : 0);
		if (graphs[0].nodes >= 0)
			b->ops_all = dup_str(graphs[0].ops);
		if (graphs[1].nodes >= 0)
			b->ops_disabled = dup_str(graphs[1].ops);
		char diff[200] = "", diff2[200] = "";
		double ma = 0, mr = 0, ma2 = 0, mr2 = 0;
		pn_tensor *const *ref = pn_measure_outputs(ms);
		b->has_agree = b->has_agree_disabled = b->has_max_abs = b->has_max_rel = 1;
		b->agree = agrees(&lv[0], ref, &ma, &mr, diff, sizeof diff);
		b->agree_disabled = agrees(&lv[1], ref, &ma2, &mr2, diff2, sizeof diff2);
		b->max_abs = ma;
		b->max_rel = mr;
		if (!b->agree)
			b->diff = dup_str(diff);
		else if (!b->agree_disabled)
			b->diff = dup_str(diff2);
		if (time_both(j, lv, b, err))
			refuse(b, "refused", err);
		else
			b->status = dup_str("ok");
	}
	close_levels(lv);
	if (!rc && !strcmp(b->status, "ok"))
		time_threads(j, model, len, lv, b);
	free(names);
}

/* Drops the flags and thresholds of an earlier baseline. */
static void drop_compiler_flags(Passnet__Profile *p)
{
	size_t n = 0;
	for (size_t i = 0; i < p->n_flags; i++) {
		if (!strncmp(p->flags[i], "compiler-", 9))
			free(p->flags[i]);
		else
			p->flags[n++] = p->flags[i];
	}
	p->n_flags = n;
	n = 0;
	for (size_t i = 0; i < p->n_thresholds; i++) {
		if (!strncmp(p->thresholds[i], "compiler-", 9))
			free(p->thresholds[i]);
		else
			p->thresholds[n++] = p->thresholds[i];
	}
	p->n_thresholds = n;
}

static void push_str(char ***v, size_t *n, const char *s)
{
	char **g = realloc(*v, sizeof(char *) * (*n + 1));
	if (!g)
		return;
	*v = g;
	g[(*n)++] = strdup(s);
}

static void flags_of(job *j, Passnet__OrtBaseline *b)
{
	Passnet__Profile *p = j->p;
	char text[128];
	snprintf(text, sizeof text, "compiler-regression: ort.median_all > %g x ort.median_disabled "
		 "(1 thread, confirmed by a second timing)", PN_COMPILER_REGRESSION);
	push_str(&p->thresholds, &p->n_thresholds, text);
	snprintf(text, sizeof text, "compiler-gap: ort.median_all > %g x bound_fused of 1 thread",
		 PN_COMPILER_GAP);
	push_str(&p->thresholds, &p->n_thresholds, text);
	double passnet = p->has_median_1thread_us ? p->median_1thread_us : p->median_us;
	if (passnet > 0) {
		b->has_ratio = 1;
		b->ratio = b->median_all_us / passnet;
	}
	if (b->median_all_us > PN_COMPILER_REGRESSION * b->median_disabled_us)
		push_str(&p->flags, &p->n_flags, pn_flag_names[PN_FLAG_COMPILER_REGRESSION]);
	double peak = j->cal->peak_gflops[1] * 1e9, bw = j->cal->bandwidth_gbs[1] * 1e9;
	double bound = peak > 0 && bw > 0 ? fmax(p->flops / peak, p->bytes_fused / bw) * 1e6 : 0;
	if (bound > 0 && b->median_all_us > PN_COMPILER_GAP * bound)
		push_str(&p->flags, &p->n_flags, pn_flag_names[PN_FLAG_COMPILER_GAP]);
}

/* The baseline of one profile, into j->p->ort (replacing any). */
static void baseline_one(job *j)
{
	Passnet__Profile *p = j->p;
	if (p->ort) {
		passnet__ort_baseline__free_unpacked(p->ort, NULL);
		p->ort = NULL;
	}
	drop_compiler_flags(p);
	Passnet__OrtBaseline *b = malloc(sizeof *b);
	if (!b)
		return;
	passnet__ort_baseline__init(b);
	p->ort = b;
	b->ort_version = dup_str(pn_ort_version(j->ort));
	b->has_threads = b->has_rtol = b->has_atol = 1;
	b->threads = 1;
	b->rtol = PN_ORT_RTOL;
	b->atol = PN_ORT_ATOL;
	pn_profile_opts po = {.threads = 1, .warmups = 0, .trials = 1, .seed = p->seed};
	Passnet__Profile scratch;
	pn_profile_times tm;
	memset(&tm, 0, sizeof tm);
	pn_measure *ms = pn_profile_check(j->canon, j->len, j->ranges, j->n_ranges, &j->ws, &po, j->cal,
					  &scratch, &tm);
	uint8_t *model = NULL;
	size_t len = 0;
	char err[PN_ERRLEN];
	if (!ms)
		refuse(b, "skipped", scratch.reason ? scratch.reason : "passnet could not run it");
	else if (model_bytes(j->canon, j->len, &j->ws, p->seed, &model, &len, err))
		refuse(b, "skipped", err);
	else
		baseline_runs(j, ms, model, len, b);
	if (b->status && !strcmp(b->status, "ok"))
		flags_of(j, b);
	free(model);
	pn_profile_drop(ms);
	pn_profile_clear(&scratch);
}

/* --- the stage -------------------------------------------------------------------- */

typedef struct plan {
	const pn_baseline_opts *o;
	const char *version;
	uint8_t (*keys)[16];
	int64_t n, cap;
} plan;

static int plan_profile(void *ud, pn_bytes key, pn_bytes val, const Passnet__Profile *p)
{
	(void)val;
	plan *pl = ud;
	if (key.len != 16)
		return 0;
	/* Skipped baselines hold no answer of ORT's, only a limit of the passnet
	 * that wrote them, and cost no timing: each run tries them again. */
	int want = p && p->status && (!strcmp(p->status, "ok") || !strcmp(p->status, "unstable")) &&
		   (pl->o->redo || !p->ort || !p->ort->ort_version ||
		    strcmp(p->ort->ort_version, pl->version) ||
		    (p->ort->status && !strcmp(p->ort->status, "skipped")));
	if (!want)
		return 0;
	if (pl->n == pl->cap) {
		pl->cap = pl->cap ? pl->cap * 2 : 256;
		void *g = realloc(pl->keys, 16 * (size_t)pl->cap);
		if (!g)
			return -1;
		pl->keys = g;
	}
	memcpy(pl->keys[pl->n++], key.data, 16);
	return 0;
}

/* The stored profile, canonical bytes and input ranges of one subgraph. */
static int read_one(pn_store *st, const uint8_t *key, Passnet__Profile **p, uint8_t **canon,
		    size_t *len, pn_range **ranges, int *n_ranges, pn_subgraph_weights *ws, char *err)
{
	pn_rtxn *t;
	if (pn_rtxn_begin(st, &t, err))
		return -1;
	*canon = NULL;
	pn_profiles_get(t, key, 16, p);
	Passnet__Subgraph *sg;
	pn_subgraphs_get(t, key, 16, &sg);
	if (sg && sg->has_canonical && (*canon = malloc(sg->canonical.len + 1))) {
		memcpy(*canon, sg->canonical.data, sg->canonical.len);
		*len = sg->canonical.len;
	}
	pn_subgraphs_free(sg);
	*ranges = pn_subgraph_ranges_in(t, key, n_ranges);
	pn_read_subgraph_weights_in(t, key, ws);
	pn_rtxn_end(t);
	if (*p && *canon)
		return 0;
	pn_profiles_free(*p);
	free(*canon);
	free(*ranges);
	pn_subgraph_weights_free(ws);
	return pn_fail(err, "subgraph or profile record is missing or corrupt");
}

static void count(const Passnet__Profile *p, pn_baseline_stats *s)
{
	const Passnet__OrtBaseline *b = p->ort;
	s->done++;
	s->refused += b && b->status && !strcmp(b->status, "refused");
	s->skipped += b && b->status && !strcmp(b->status, "skipped");
	s->disagree += b && b->has_agree && (!b->agree || !b->agree_disabled);
	for (size_t i = 0; i < p->n_flags; i++) {
		s->regressions += !strcmp(p->flags[i], pn_flag_names[PN_FLAG_COMPILER_REGRESSION]);
		s->gaps += !strcmp(p->flags[i], pn_flag_names[PN_FLAG_COMPILER_GAP]);
	}
}

static int plan_all(pn_store *st, plan *pl, pn_calibration *cal, char *err)
{
	pn_rtxn *t;
	if (pn_rtxn_begin(st, &t, err))
		return -1;
	int rc = pn_calibration_get(t, cal, err) < 0 ? -1 : 0;
	if (!rc && pn_profiles_foreach(t, NULL, 0, plan_profile, pl) < 0)
		rc = pn_fail(err, "out of memory");
	pn_rtxn_end(t);
	return rc;
}

int pn_baseline_stage(pn_store *st, const pn_baseline_opts *o, pn_baseline_stats *s, char *err)
{
	memset(s, 0, sizeof *s);
	double t0 = pn_now();
	pn_ort *ort;
	if (pn_ort_open(o->ort_lib, &ort, err))
		return -1;
	snprintf(s->ort_version, sizeof s->ort_version, "%s", pn_ort_version(ort));
	pn_calibration cal;
	memset(&cal, 0, sizeof cal);
	plan pl = {.o = o, .version = pn_ort_version(ort)};
	int rc = plan_all(st, &pl, &cal, err);
	s->todo = pl.n;
	int64_t n = o->limit > 0 && o->limit < pl.n ? o->limit : pl.n;
	pn_writer *w = NULL;
	if (!rc)
		rc = pn_writer_open(st, &w, 0, err);
	pn_progress prog;
	pn_progress_start(&prog, "baseline", (uint64_t)n);
	int64_t i = 0;
	for (; !rc && i < n; i++) {
		if (o->budget_s > 0 && pn_now() - t0 > o->budget_s)
			break;
		job j = {.ort = ort, .o = o, .cal = &cal};
		uint8_t *canon;
		pn_range *ranges;
		if ((rc = read_one(st, pl.keys[i], &j.p, &canon, &j.len, &ranges, &j.n_ranges, &j.ws, err)))
			break;
		j.canon = canon;
		j.ranges = ranges;
		baseline_one(&j);
		count(j.p, s);
		rc = pn_put_msg(w, PN_T_PROFILES, pl.keys[i], 16, &j.p->base, err);
		pn_profiles_free(j.p);
		free(canon);
		free(ranges);
		pn_subgraph_weights_free(&j.ws);
		if (!rc && s->done % COMMIT_EVERY == 0)
			rc = pn_writer_flush(w, err);
		pn_progress_step(&prog, (uint64_t)(i + 1), NULL);
	}
	pn_progress_end(&prog);
	s->left = pl.n - s->done;
	if (w) {
		char cerr[PN_ERRLEN];
		if (pn_writer_close(w, rc ? cerr : err))
			rc = -1;
	}
	free(pl.keys);
	pn_ort_close(ort);
	s->seconds = pn_now() - t0;
	return rc;
}
