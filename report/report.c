/*
 * report.c - `passnet report`: one HTML page on the profiled subgraphs
 * (see report.h for what is read from a Profile).
 *
 * The store is read in key order, table by table: subgraphs, profiles
 * (joined by hash), sources, model places, then occurrences, which tie each
 * subgraph to the sources of the models it was found in.  Everything the
 * page shows is then sorted on full keys, so nothing depends on timing.
 */
#include "report/report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/keymap.h"
#include "common/tally.h"
#include "common/timing.h"
#include "common/util.h"
#include "canon/decode.h"
#include "exec/baseline.h"
#include "exec/calibrate.h"
#include "exec/headline.h"
#include "exec/profile.h"
#include "export/groups.h"
#include "report/rank.h"
#include "report/svg.h"
#include "passnet.pb-c.h"
#include "runtime/infer.h"
#include "schemas/strategies.h"
#include "runtime/session.h"
#include "store/query.h"
#include "store/subgraphs.h"
#include "store/records.h"
#include "store/structures.h"
#include "store/tables.h"

_Static_assert(PN_N_FLAGS <= 8, "rsub.flags has a bit for every flag");

#define DEFAULT_TOP 25
#define SET_APART_TOP 10   /* rows of the table of cuts with nothing to win */
#define MAX_OPS_SHOWN 12
#define MAX_SHAPES_SHOWN 6

typedef struct rsub {
	uint8_t hash[16], pattern[16];
	int64_t occurrences;
	double time, bound;    /* median_us, bound_fused_us */
	double flops, bytes;   /* the profile's cost: flops, bytes_fused */
	uint8_t profiled, measured, flags;   /* flags: bit k is pn_flag_names[k] */
	uint16_t strategies;   /* bit k: cut by pn_strategy_names[k] somewhere */
} rsub;

typedef struct rsource {
	char *name, *kind;
	int64_t models, subgraphs, profiled, flags[PN_N_FLAGS];
	double *ratios;
	size_t n_ratios, cap_ratios;
	size_t stamp;          /* 1 + last subgraph counted: each counts once */
} rsource;

typedef struct mplace {
	uint8_t model[16];
	int src;
} mplace;

typedef struct rpattern {
	uint8_t pattern[16];
	size_t example;        /* subs index of the measured variant with the worst ratio */
	size_t most_work;      /* subs index of the measured variant with the most work */
	int64_t variants, measured, occurrences, slow;
	double time, bound;
	double excess;         /* summed over measured variants (report/rank.h) */
	int kind;              /* enum pn_cut_kind, of measured patterns */
} rpattern;

/* A baseline ORT timed (exec/baseline.h): its 1-thread medians. */
typedef struct rort {
	size_t sub;            /* subs index */
	double all, disabled;  /* level ALL and optimisations disabled, us */
	double ratio;          /* ALL / passnet's 1-thread median (0: none) */
	uint8_t regression;    /* flagged compiler-regression */
} rort;

typedef struct report {
	pn_rtxn *t;
	rsub *subs;
	size_t n_subs, cap_subs;
	rsource *srcs;
	int n_srcs, n_sorted_srcs, cap_srcs;
	mplace *places;
	size_t n_places, cap_places;
	rpattern *pats;
	size_t n_pats;
	double *ratios;        /* of every measured subgraph, sorted */
	size_t n_measured;
	double median;         /* of ratios */
	int64_t models, occurrences, profiled, orphans, flags[PN_N_FLAGS];
	int64_t with_variants;  /* models and their shape variants */
	pn_keymap typical_models;   /* those with a typical occurrence */
	int64_t denormal;      /* profiles whose inputs or outputs held subnormals */
	pn_tally other_flags, builds, threads, thresholds, reasons;
	pn_tally machine_profiles;   /* machine id -> profiles measured there; "": not recorded */
	size_t cur;            /* occurrence walk: subs index of the current key */
	int have_cur;
	int top;
	pn_calibration calib;
	int have_calib;
	rort *orts;            /* in hash order, as profiles are read */
	size_t n_orts, cap_orts;
	int64_t ort_total, ort_refused, ort_skipped, ort_disagree, ort_regressions;
	pn_headline headline;  /* the share in all, by size and strategy (exec/headline.h) */
	pn_tally ort_versions, ort_ops, ort_ops_reg, ort_refusals;
	pn_calibration *machines;    /* meta "machine/<id>", in id order */
	int n_machines;
	char *err;
} report;

/* Grows *p (n used of *cap) to hold one more element of size sz. */
static int grow(void *p, size_t n, size_t *cap, size_t sz)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 64;
	void *q = realloc(*(void **)p, c * sz);
	if (!q)
		return -1;
	*(void **)p = q;
	*cap = c;
	return 0;
}

/* --- reading the store ---------------------------------------------------- */

static int on_subgraph(void *ud, pn_bytes key, pn_bytes val, const Passnet__Subgraph *sg)
{
	(void)val;
	report *r = ud;
	if (key.len != 16 || !sg)
		return 0;
	int rc = grow(&r->subs, r->n_subs, &r->cap_subs, sizeof(*r->subs));
	if (!rc) {
		rsub *s = &r->subs[r->n_subs++];
		memset(s, 0, sizeof(*s));
		memcpy(s->hash, key.data, 16);
		if (sg->has_pattern && sg->pattern.len == 16)
			memcpy(s->pattern, sg->pattern.data, 16);
		s->flops = sg->flops;
		s->bytes = sg->bytes_fused;
	}
	return rc ? pn_fail(r->err, "out of memory") : 0;
}

static int cmp_hash(const void *key, const void *elem)
{
	return memcmp(key, ((const rsub *)elem)->hash, 16);
}

/* Subgraphs were read in key order, so they are sorted by hash. */
static rsub *find_sub(report *r, const void *hash)
{
	return bsearch(hash, r->subs, r->n_subs, sizeof(*r->subs), cmp_hash);
}

static void profile_flags(report *r, rsub *s, const Passnet__Profile *p)
{
	for (size_t i = 0; i < p->n_flags; i++) {
		int k = pn_flag_index(p->flags[i]);
		if (k >= 0)
			s->flags |= (uint8_t)(1u << k);
		else
			pn_tally_add(&r->other_flags, p->flags[i], 1);
	}
	if (p->status && !strcmp(p->status, "failed"))
		s->flags |= 1u << PN_FLAG_FAILED;
	if (p->status && !strcmp(p->status, "unstable"))
		s->flags |= 1u << PN_FLAG_UNSTABLE;
}

static void profile_notes(report *r, const Passnet__Profile *p, int failed)
{
	char buf[64];
	pn_tally_add(&r->builds, p->executor_build ? p->executor_build : "(not recorded)", 1);
	pn_tally_add(&r->machine_profiles, p->machine ? p->machine : "", 1);
	if (p->has_threads) {
		snprintf(buf, sizeof buf, "%u", p->threads);
		pn_tally_add(&r->threads, buf, 1);
	}
	for (size_t i = 0; i < p->n_thresholds; i++)
		pn_tally_add(&r->thresholds, p->thresholds[i], 1);
	if (failed) {
		char kind[256];
		pn_message_kind(p->reason ? p->reason : "(no reason recorded)", kind, sizeof kind);
		pn_tally_add(&r->reasons, kind, 1);
	}
}

/* The ONNX Runtime baseline of a profile, grouped as `passnet stats`
 * groups it (exec/baseline.h), so the page and stats agree. */
static int ort_add(report *r, const rsub *s, const Passnet__Profile *p)
{
	const Passnet__OrtBaseline *b = p->ort;
	r->ort_total++;
	pn_tally_add(&r->ort_versions, b->ort_version ? b->ort_version : "?", 1);
	if (!b->status || strcmp(b->status, "ok")) {
		char kind[256];
		pn_message_kind(b->message ? b->message : "(no message recorded)", kind, sizeof kind);
		pn_tally_add(&r->ort_refusals, kind, 1);
		int refused = b->status && !strcmp(b->status, "refused");
		r->ort_refused += refused;
		r->ort_skipped += !refused;   /* passnet could not hand it to ORT */
		return 0;
	}
	r->ort_disagree += b->has_agree && (!b->agree || !b->agree_disabled);
	int reg = (s->flags >> PN_FLAG_COMPILER_REGRESSION) & 1;
	r->ort_regressions += reg;
	char ops[512];
	pn_baseline_op_set(b->ops_disabled, ops, sizeof ops);
	pn_tally_add(&r->ort_ops, ops, 1);
	if (reg)
		pn_tally_add(&r->ort_ops_reg, ops, 1);
	if (grow(&r->orts, r->n_orts, &r->cap_orts, sizeof(*r->orts)))
		return -1;
	r->orts[r->n_orts++] = (rort){.sub = (size_t)(s - r->subs), .all = b->median_all_us,
				      .disabled = b->median_disabled_us,
				      .ratio = b->has_ratio ? b->ratio : 0, .regression = (uint8_t)reg};
	return 0;
}

static int on_profile(void *ud, pn_bytes key, pn_bytes val, const Passnet__Profile *p)
{
	(void)val;
	report *r = ud;
	rsub *s = key.len == 16 ? find_sub(r, key.data) : NULL;
	if (!s || !p) {
		r->orphans++;
		return 0;
	}
	s->profiled = 1;
	r->profiled++;
	r->denormal += p->denormal_inputs > 0 || p->denormal_outputs > 0;
	profile_flags(r, s, p);
	int failed = (s->flags >> PN_FLAG_FAILED) & 1;
	s->time = p->has_median_us ? p->median_us : 0;
	s->bound = p->has_bound_fused_us ? p->bound_fused_us : 0;
	if (p->has_flops && p->has_bytes_fused) {   /* else the subgraph record's */
		s->flops = p->flops;
		s->bytes = p->bytes_fused;
	}
	s->measured = !failed && s->time > 0 && s->bound > 0 && isfinite(s->time) &&
		      isfinite(s->bound);
	for (int k = 0; k < PN_N_FLAGS; k++)
		r->flags[k] += (s->flags >> k) & 1;
	profile_notes(r, p, failed);
	int rc = p->ort ? ort_add(r, s, p) : 0;
	if (!rc && pn_headline_add(r->t, key.data, p, &r->headline))
		return pn_fail(r->err, "reading the occurrences of a profiled subgraph failed");
	return rc ? pn_fail(r->err, "out of memory") : 0;
}

static int add_source(report *r, const char *name, const char *kind)
{
	size_t cap = (size_t)r->cap_srcs;
	if (grow(&r->srcs, (size_t)r->n_srcs, &cap, sizeof(*r->srcs)))
		return -1;
	r->cap_srcs = (int)cap;
	rsource *s = &r->srcs[r->n_srcs];
	memset(s, 0, sizeof(*s));
	s->name = strdup(name);
	s->kind = strdup(kind ? kind : "");
	if (!s->name || !s->kind)
		return -1;
	return r->n_srcs++;
}

static int on_source(void *ud, pn_bytes key, pn_bytes val, const Passnet__Source *s)
{
	(void)val;
	report *r = ud;
	/* The key is the name; the record's copy is only informative. */
	char *name = strndup(key.data, key.len);
	int rc = name ? add_source(r, name, s ? s->kind : NULL) : -1;
	free(name);
	return rc < 0 ? pn_fail(r->err, "out of memory") : 0;
}

static int cmp_source_name(const void *key, const void *elem)
{
	return strcmp(key, ((const rsource *)elem)->name);
}

/* Sources read from their table are in key (byte) order; a place naming a
 * source missing there (a damaged store) is appended after them. */
static int source_index(report *r, const char *name)
{
	rsource *s = bsearch(name, r->srcs, (size_t)r->n_sorted_srcs, sizeof(*r->srcs),
			     cmp_source_name);
	if (s)
		return (int)(s - r->srcs);
	for (int i = r->n_sorted_srcs; i < r->n_srcs; i++)
		if (!strcmp(r->srcs[i].name, name))
			return i;
	return add_source(r, name, "?");
}

static int on_place(void *ud, pn_bytes key, pn_bytes val, const Passnet__ModelPath *mp)
{
	(void)key;
	(void)val;
	report *r = ud;
	if (!mp)
		return 0;
	int rc = 0;
	if (mp->has_model && mp->model.len == 16 && mp->source) {
		int src = source_index(r, mp->source);
		rc = src < 0 || grow(&r->places, r->n_places, &r->cap_places, sizeof(*r->places));
		if (!rc) {
			memcpy(r->places[r->n_places].model, mp->model.data, 16);
			r->places[r->n_places++].src = src;
		}
	}
	return rc ? pn_fail(r->err, "out of memory") : 0;
}

static int cmp_place(const void *a, const void *b)
{
	const mplace *x = a, *y = b;
	int c = memcmp(x->model, y->model, 16);
	return c ? c : (x->src > y->src) - (x->src < y->src);
}

/* Sorts places by model, drops repeats (one model twice in one source),
 * and counts each source's distinct models. */
static void index_places(report *r)
{
	if (r->n_places)
		qsort(r->places, r->n_places, sizeof(*r->places), cmp_place);
	size_t n = 0;
	for (size_t i = 0; i < r->n_places; i++)
		if (!n || cmp_place(&r->places[i], &r->places[n - 1]))
			r->places[n++] = r->places[i];
	r->n_places = n;
	for (size_t i = 0; i < n; i++)
		r->srcs[r->places[i].src].models++;
}

static size_t first_place(const report *r, const uint8_t *model)
{
	size_t lo = 0, hi = r->n_places;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (memcmp(r->places[mid].model, model, 16) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int source_counts(report *r, rsource *src, size_t sub)
{
	const rsub *s = &r->subs[sub];
	if (src->stamp == sub + 1)
		return 0;
	src->stamp = sub + 1;
	src->subgraphs++;
	if (!s->profiled)
		return 0;
	src->profiled++;
	for (int k = 0; k < PN_N_FLAGS; k++)
		src->flags[k] += (s->flags >> k) & 1;
	if (!s->measured)
		return 0;
	if (grow(&src->ratios, src->n_ratios, &src->cap_ratios, sizeof(double)))
		return -1;
	src->ratios[src->n_ratios++] = s->time / s->bound;
	return 0;
}

/* One call per (occurrence, model of its structure): store/structures.h. */
static int on_occurrence(void *ud, const uint8_t hash[16], const Passnet__Occurrence *o,
			 const uint8_t model[16])
{
	report *r = ud;
	r->occurrences++;
	if (!r->have_cur || memcmp(r->subs[r->cur].hash, hash, 16)) {
		rsub *s = find_sub(r, hash);
		r->have_cur = s != NULL;
		if (!s)
			return 0;
		r->cur = (size_t)(s - r->subs);
	}
	r->subs[r->cur].occurrences++;
	int k = o && o->strategy ? pn_strategy_index(o->strategy) : -1;
	if (k >= 0)
		r->subs[r->cur].strategies |= (uint16_t)(1u << k);
	pn_key m;
	memcpy(m.b, model, 16);
	int added;
	if (k == PN_STRATEGY_typical && !pn_keymap_put(&r->typical_models, &m, &added))
		return pn_fail(r->err, "out of memory");
	int rc = 0;
	for (size_t i = first_place(r, model);
	     !rc && i < r->n_places && !memcmp(r->places[i].model, model, 16); i++)
		rc = source_counts(r, &r->srcs[r->places[i].src], r->cur);
	return rc ? pn_fail(r->err, "out of memory") : 0;
}

/* Models, not their shape variants (extract/variants.h). */
static int count_model(void *ud, pn_bytes key, pn_bytes val)
{
	(void)key;
	uint8_t base[16];
	((report *)ud)->models += !pn_model_variant_of(val, base);
	((report *)ud)->with_variants++;
	return 0;
}

static int load(report *r)
{
	r->models = 0;
	if (pn_foreach(r->t, PN_T_MODELS, NULL, 0, count_model, r))
		return -1;
	r->occurrences = 0;
	if (pn_subgraphs_foreach(r->t, NULL, 0, on_subgraph, r) ||
	    pn_profiles_foreach(r->t, NULL, 0, on_profile, r) ||
	    pn_sources_foreach(r->t, NULL, 0, on_source, r))
		return -1;
	r->n_sorted_srcs = r->n_srcs;
	if (pn_model_paths_foreach(r->t, NULL, 0, on_place, r))
		return -1;
	index_places(r);
	if (pn_foreach_occurrence(r->t, NULL, on_occurrence, r))
		return -1;
	/* a store without calibration leaves the figures out, no error */
	char err[PN_ERRLEN];
	r->have_calib = pn_calibration_get(r->t, &r->calib, err) == 0;
	if (pn_machines_list(r->t, &r->machines, &r->n_machines, err))
		pn_warn("report: %s", err);
	return 0;
}

/* --- patterns and medians ------------------------------------------------------ */

static int cmp_by_pattern(const void *a, const void *b)
{
	const rsub *x = *(rsub *const *)a, *y = *(rsub *const *)b;
	int c = memcmp(x->pattern, y->pattern, 16);
	return c ? c : memcmp(x->hash, y->hash, 16);
}

static void pattern_add(rpattern *p, const rsub *s, size_t idx, const rsub *subs)
{
	memcpy(p->pattern, s->pattern, 16);
	p->variants++;
	p->occurrences += s->occurrences;
	if (!s->measured)
		return;
	p->slow += (s->flags >> PN_FLAG_SLOW) & 1;
	p->time += s->time;
	p->bound += s->bound;
	p->excess += pn_excess_us(s->time, s->bound, s->occurrences);
	/* Variants arrive in hash order: the first of equal ratios stays. */
	const rsub *e = &subs[p->example], *w = &subs[p->most_work];
	if (!p->measured || s->flops + s->bytes > w->flops + w->bytes)
		p->most_work = idx;
	if (!p->measured++ || s->time / s->bound > e->time / e->bound)
		p->example = idx;
}

/* Most excess time first; equal ones by pattern hash, so the order is
 * total. */
static int pattern_order(const void *a, const void *b)
{
	const rpattern *x = a, *y = b;
	if (x->excess != y->excess)
		return x->excess < y->excess ? 1 : -1;
	return memcmp(x->pattern, y->pattern, 16);
}

/* Whether every value of g has static dims as the profiler typed it: its
 * inputs at the shapes the models' runs showed (or the assumed size), as
 * exec/profile.c does, then inferred.  Else the cost counted some values as
 * no bytes. */
static int cost_known(report *r, const rsub *s, const pn_graph *g)
{
	int n_ranges;
	pn_range *ranges = pn_subgraph_ranges_in(r->t, s->hash, &n_ranges);
	pn_type *decl = malloc(sizeof(pn_type) * (size_t)(g->n_inputs + 1));
	char err[PN_ERRLEN];
	int64_t size;
	pn_infer_result res;
	int known = decl && pn_concrete_input_types(g, ranges, n_ranges, decl, &size, err) >= 0 &&
		    !pn_infer_graph(g, NULL, decl, &res, err);
	if (known) {
		for (int v = 0; v < g->n_values && known; v++)
			known = res.v[v].type.kind != PN_KIND_TENSOR ||
				pn_type_is_static(&res.v[v].type);
		pn_infer_result_free(&res);
	}
	free(decl);
	free(ranges);
	return known;
}

/* The kind of a measured pattern (report/rank.h), judged on its variant
 * with the most work: a pattern has little work only when every measured
 * variant has.  Its ops are the same in every variant. */
static int pattern_kind(report *r, const rpattern *p)
{
	const rsub *s = &r->subs[p->most_work];
	Passnet__Subgraph *sg;
	pn_subgraphs_get(r->t, s->hash, 16, &sg);
	pn_model *m = NULL;
	char err[PN_ERRLEN];
	int kind = PN_CUT_WORK;   /* a record that does not decode stays ranked */
	if (sg && sg->has_canonical &&
	    !pn_subgraph_model(sg->canonical.data, sg->canonical.len, &m, err))
		kind = pn_cut_kind(m->graph, s->flops, s->bytes,
				   pn_little_work(s->flops, s->bytes) && cost_known(r, s, m->graph));
	pn_model_free(m);
	pn_subgraphs_free(sg);
	return kind;
}

static int build_patterns(report *r)
{
	rsub **by = malloc(sizeof(*by) * (r->n_subs ? r->n_subs : 1));
	r->pats = calloc(r->n_subs ? r->n_subs : 1, sizeof(*r->pats));
	if (!by || !r->pats) {
		free(by);
		return pn_fail(r->err, "out of memory");
	}
	for (size_t i = 0; i < r->n_subs; i++)
		by[i] = &r->subs[i];
	if (r->n_subs)
		qsort(by, r->n_subs, sizeof(*by), cmp_by_pattern);
	size_t n = 0;
	for (size_t i = 0; i < r->n_subs; i++) {
		if (!i || memcmp(by[i]->pattern, by[i - 1]->pattern, 16))
			n++;
		pattern_add(&r->pats[n - 1], by[i], (size_t)(by[i] - r->subs), r->subs);
	}
	r->n_pats = n;
	free(by);
	return 0;
}

/* Only patterns with a measured variant can be ranked; they go first,
 * most excess time first, each with its kind. */
static size_t rank_patterns(report *r)
{
	size_t m = 0;
	for (size_t i = 0; i < r->n_pats; i++)
		if (r->pats[i].measured) {
			rpattern tmp = r->pats[m];
			r->pats[m++] = r->pats[i];
			r->pats[i] = tmp;
		}
	if (m)
		qsort(r->pats, m, sizeof(*r->pats), pattern_order);
	for (size_t i = 0; i < m; i++)
		r->pats[i].kind = pattern_kind(r, &r->pats[i]);
	return m;
}

static int collect_ratios(report *r)
{
	r->ratios = malloc(sizeof(double) * (r->n_subs ? r->n_subs : 1));
	if (!r->ratios)
		return pn_fail(r->err, "out of memory");
	for (size_t i = 0; i < r->n_subs; i++)
		if (r->subs[i].measured)
			r->ratios[r->n_measured++] = r->subs[i].time / r->subs[i].bound;
	r->median = pn_median(r->ratios, r->n_measured);
	return 0;
}

/* --- HTML ------------------------------------------------------------------------ */

static const char css[] =
	"body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:24px 40px;"
	"color:#222;background:#fff;max-width:1300px}\n"
	"h1{font-size:26px;margin:0 0 4px}h2{font-size:19px;margin:28px 0 8px;"
	"border-bottom:1px solid #ddd;padding-bottom:4px}\n"
	".lede,.note{color:#555;font-size:14px;max-width:900px}\n"
	".headline{font-size:17px;font-weight:600;max-width:900px}\n"
	".cards{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0;padding:0}\n"
	".card{border:1px solid #ddd;border-radius:6px;padding:8px 14px;min-width:110px;"
	"background:#fafafa}\n"
	".card dt{font-size:12px;color:#666}.card dd{margin:2px 0 0;font-size:22px;"
	"font-weight:600}\n"
	"table{border-collapse:collapse;font-size:13px;margin:8px 0}\n"
	"th,td{border-bottom:1px solid #e5e5e5;padding:4px 8px;text-align:left;"
	"vertical-align:top}\n"
	"th{background:#f3f3f3}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}\n"
	"code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}\n"
	".ops{max-width:380px}.shapes{max-width:360px;color:#444}\n"
	".plots{display:flex;flex-wrap:wrap;gap:24px;align-items:flex-start}\n"
	"figure{margin:0}figcaption{font-size:13px;color:#555;max-width:620px}\n"
	"svg.plot{background:#fff}\n";

static void fmt_num(double v, char *buf, size_t cap)
{
	if (!isfinite(v))
		snprintf(buf, cap, "&ndash;");
	else if (fabs(v) >= 1000)
		snprintf(buf, cap, "%.0f", v);
	else if (fabs(v) >= 10)
		snprintf(buf, cap, "%.1f", v);
	else
		snprintf(buf, cap, "%.3g", v);
}

static void card(FILE *f, const char *id, const char *label, const char *value)
{
	fprintf(f, "<div class=\"card\"><dt>%s</dt><dd id=\"%s\">%s</dd></div>\n", label, id, value);
}

static void card_int(FILE *f, const char *id, const char *label, int64_t v)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%lld", (long long)v);
	card(f, id, label, buf);
}

static int64_t patterns_profiled(const report *r)
{
	int64_t n = 0;
	for (size_t i = 0; i < r->n_pats; i++)
		n += r->pats[i].measured > 0;
	return n;
}

static double share_pct(int64_t part, int64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void ort_share_row(FILE *f, const char *label, int64_t reg, int64_t timed)
{
	fputs("<tr><td>", f);
	pn_html_escape(f, label);
	fprintf(f, "</td><td class=\"n\">%lld</td><td class=\"n\">%lld</td>"
		"<td class=\"n\">%.1f%%</td></tr>\n", (long long)reg, (long long)timed,
		share_pct(reg, timed));
}

static void ort_share_head(FILE *f, const char *id, const char *what)
{
	fprintf(f, "<table id=\"%s\"><thead><tr><th>%s</th><th class=\"n\">regressions</th>"
		"<th class=\"n\">timed</th><th class=\"n\">share</th></tr></thead><tbody>\n", id, what);
}

/* One row per group ORT timed, in the groups' own order. */
static void ort_share_rows(FILE *f, const char *const *names, const pn_share *s, int n)
{
	for (int i = 0; i < n; i++)
		if (s[i].timed)
			ort_share_row(f, names[i], s[i].regressions, s[i].timed);
}

/* The published benchmark's headline measured here (exec/headline.h): the
 * sentence, then the share by size and by strategy; or that it was not
 * measured. */
static void write_ort_headline(FILE *f, const report *r)
{
	char line[512];
	pn_headline_sentence(&r->headline, line, sizeof line);
	fputs("<p class=\"headline\" id=\"ort-headline\">", f);
	pn_html_escape(f, line);
	fputs("</p>\n", f);
	if (!pn_headline_measured(&r->headline))
		return;
	fputs("<div class=\"plots\"><div><h3>Slower with ORT's optimisations, by size</h3>", f);
	ort_share_head(f, "ort-headline-by-size", "nodes");
	ort_share_rows(f, pn_baseline_size_names, r->headline.size, PN_BASELINE_SIZES);
	fputs("</tbody></table></div>\n<div><h3>By strategy</h3>", f);
	ort_share_head(f, "ort-headline-by-strategy", "strategy (a subgraph counts in each that "
		       "cut it)");
	ort_share_rows(f, pn_strategy_names, r->headline.strategy, PN_N_STRATEGIES);
	fputs("</tbody></table></div></div>\n<p class=\"note\">By op set, and the subgraphs "
	      "ORT did not time: the section on ONNX Runtime below.</p>\n", f);
}

static void write_headline(FILE *f, const report *r)
{
	char buf[64];
	fputs("<section id=\"headline\"><h2>Headline</h2><dl class=\"cards\">\n", f);
	card_int(f, "n-models", "models", r->models);
	card_int(f, "n-sources", "sources", r->n_srcs);
	card_int(f, "n-subgraphs", "unique subgraphs", (int64_t)r->n_subs);
	card_int(f, "n-patterns", "patterns", (int64_t)r->n_pats);
	card_int(f, "n-occurrences", "occurrences", r->occurrences);
	card_int(f, "n-profiled", "profiled", r->profiled);
	card_int(f, "n-measured", "measured", (int64_t)r->n_measured);
	card_int(f, "n-failed", "failed", r->flags[PN_FLAG_FAILED]);
	card_int(f, "n-slow", "slow", r->flags[PN_FLAG_SLOW]);
	card_int(f, "n-denormal", "on denormal values", r->denormal);
	fmt_num(r->median, buf, sizeof buf);
	card(f, "median-ratio", "median time / bound", buf);
	fputs("</dl>\n", f);
	if (r->profiled)
		write_ort_headline(f, r);
	else
		fputs("<p class=\"note\" id=\"no-profiles\">No subgraph has been profiled yet: "
		      "run <code>passnet exec</code> to measure them.</p>\n", f);
	if (r->orphans)
		fprintf(f, "<p class=\"note\">%lld profile records name no stored subgraph "
			"(or do not decode) and are left out.</p>\n", (long long)r->orphans);
	fputs("</section>\n", f);
}

static void write_calibration(FILE *f, const report *r)
{
	if (!r->have_calib)
		return;
	const pn_calibration *c = &r->calib;
	int mt = c->max_threads < 1 ? 1 : c->max_threads > PN_CALIB_MAX_THREADS
						 ? PN_CALIB_MAX_THREADS : c->max_threads;
	char a[32], b[32], d[32], e[32], g[32], lab[64];
	fmt_num(c->peak_gflops[1], a, sizeof a);
	fmt_num(c->peak_gflops[mt], b, sizeof b);
	fmt_num(c->bandwidth_gbs[1], d, sizeof d);
	fmt_num(c->bandwidth_gbs[mt], e, sizeof e);
	fmt_num(c->node_overhead_us, g, sizeof g);
	fputs("<section id=\"calibration\"><h2>Machine calibration</h2><dl class=\"cards\">\n", f);
	card(f, "cal-gflops-1", "peak GFLOP/s, 1 thread", a);
	snprintf(lab, sizeof lab, "peak GFLOP/s, %d threads", mt);
	card(f, "cal-gflops-n", lab, b);
	card(f, "cal-gbs-1", "bandwidth GB/s, 1 thread", d);
	snprintf(lab, sizeof lab, "bandwidth GB/s, %d threads", mt);
	card(f, "cal-gbs-n", lab, e);
	card(f, "cal-overhead", "overhead per node (&micro;s)", g);
	fputs("</dl></section>\n", f);
}

static int64_t machine_profiles(const report *r, const char *id)
{
	for (int i = 0; i < r->machine_profiles.n; i++)
		if (!strcmp(r->machine_profiles.items[i].name, id))
			return r->machine_profiles.items[i].n;
	return 0;
}

/* Every machine the store's profiles were measured on: a profile's bounds
 * and flags are against its own machine's roofline (at max threads here). */
static void write_machines(FILE *f, const report *r)
{
	int64_t none = machine_profiles(r, "");
	if (!r->n_machines && !none)
		return;
	fputs("<section id=\"machines\"><h2>Machines</h2>\n<p class=\"note\">The calibrations "
	      "profiles were measured against; each profile's bounds and flags come from its own "
	      "machine's roofline (* the store's current machine).</p>\n<table id=\"machine-table\">"
	      "<thead><tr><th>machine</th><th>host</th><th>CPU</th><th class=\"n\">threads</th>"
	      "<th class=\"n\">peak GFLOP/s</th><th class=\"n\">bandwidth GB/s</th>"
	      "<th class=\"n\">profiles</th></tr></thead><tbody>\n", f);
	for (int i = 0; i < r->n_machines; i++) {
		const pn_calibration *c = &r->machines[i];
		int t = c->max_threads < 1 ? 1 : c->max_threads;
		char peak[32], bw[32];
		fmt_num(c->peak_gflops[t], peak, sizeof peak);
		fmt_num(c->bandwidth_gbs[t], bw, sizeof bw);
		int current = r->have_calib && !strcmp(c->machine, r->calib.machine);
		fprintf(f, "<tr><td><code>%s</code>%s</td><td>", c->machine, current ? " *" : "");
		pn_html_escape(f, c->host[0] ? c->host : "(not recorded)");
		fputs("</td><td>", f);
		pn_html_escape(f, c->cpu_model[0] ? c->cpu_model : "?");
		fprintf(f, "</td><td class=\"n\">%d</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
			"<td class=\"n\">%lld</td></tr>\n", t, peak, bw,
			(long long)machine_profiles(r, c->machine));
	}
	if (none)
		fprintf(f, "<tr><td colspan=\"6\">no machine recorded (an older passnet)</td>"
			"<td class=\"n\">%lld</td></tr>\n", (long long)none);
	fputs("</tbody></table></section>\n", f);
}

static void write_histogram(FILE *f, const report *r)
{
	pn_loghist h;
	if (pn_loghist_build(&h, r->ratios, r->n_measured, 4))
		memset(&h, 0, sizeof h);
	pn_plot p = {.id = "efficiency-histogram",
		     .title = "distribution of measured time / fused roofline bound",
		     .xlabel = "time / fused roofline bound (log scale)",
		     .ylabel = "subgraphs",
		     .w = 620, .h = 360, .ml = 56, .mr = 16, .mt = 40, .mb = 46};
	fputs("<figure>", f);
	pn_svg_loghist(f, &p, &h, 1, "time = bound");
	fprintf(f, "<figcaption>%zu measured subgraphs, four bins per factor of ten. Left of the "
		"dashed line a subgraph ran faster than its fused roofline bound (the bound "
		"assumes perfect fusion and peak hardware).</figcaption></figure>\n",
		r->n_measured);
	pn_loghist_free(&h);
}

static void write_flag_bars(FILE *f, const report *r)
{
	const char *labels[PN_N_FLAGS + 16];
	int64_t counts[PN_N_FLAGS + 16];
	int n = 0;
	for (int k = 0; k < PN_N_FLAGS; k++) {
		labels[n] = pn_flag_names[k];
		counts[n++] = r->flags[k];
	}
	/* other flags a profiler may add, most frequent first */
	for (int i = 0; i < r->other_flags.n && n < PN_N_FLAGS + 16; i++) {
		labels[n] = r->other_flags.items[i].name;
		counts[n++] = r->other_flags.items[i].n;
	}
	pn_plot p = {.id = "flag-shares", .title = "share of profiled subgraphs with each flag",
		     .w = 560, .h = 40 + 30 * n, .ml = 130, .mr = 10, .mt = 10, .mb = 30,
		     .xlabel = "share of profiled subgraphs"};
	fputs("<figure>", f);
	pn_svg_bars(f, &p, labels, counts, n, r->profiled);
	fprintf(f, "<figcaption>Flags of the %lld profiled subgraphs; one subgraph may carry "
		"several.</figcaption></figure>\n", (long long)r->profiled);
}

static void write_scatter(FILE *f, const report *r)
{
	pn_point *pts = malloc(sizeof(*pts) * (r->n_subs ? r->n_subs : 1));
	size_t n = 0;
	for (size_t i = 0; pts && i < r->n_subs; i++) {
		const rsub *s = &r->subs[i];
		if (s->measured)
			pts[n++] = (pn_point){s->bound, s->time, (s->flags >> PN_FLAG_SLOW) & 1};
	}
	static const char *const cls[] = {"not slow", "slow"};
	pn_plot p = {.id = "time-vs-bound", .title = "measured time against fused roofline bound",
		     .xlabel = "fused roofline bound (\xc2\xb5s, log)",
		     .ylabel = "measured median time (\xc2\xb5s, log)",
		     .w = 640, .h = 540, .ml = 60, .mr = 130, .mt = 16, .mb = 74};
	fputs("<figure>", f);
	pn_svg_scatter(f, &p, pts, n, cls, 2);
	fputs("<figcaption>One point per measured subgraph (points on the same pixel are drawn "
	      "once). On the solid line a subgraph runs at its bound; the dotted lines are 10 and "
	      "100 times slower.</figcaption></figure>\n", f);
	free(pts);
}

static void write_plots(FILE *f, const report *r)
{
	fputs("<section id=\"plots\"><h2>Efficiency and flags</h2><div class=\"plots\">\n", f);
	write_histogram(f, r);
	write_flag_bars(f, r);
	fputs("</div><h2>Time against bound</h2><div class=\"plots\">\n", f);
	write_scatter(f, r);
	fputs("</div></section>\n", f);
}

static void write_ops(FILE *f, const Passnet__Subgraph *sg)
{
	for (size_t i = 0; i < sg->n_ops && i < MAX_OPS_SHOWN; i++) {
		if (i)
			fputc(' ', f);
		pn_html_escape(f, sg->ops[i]);
	}
	if (sg->n_ops > MAX_OPS_SHOWN)
		fprintf(f, " &hellip; (+%zu)", sg->n_ops - MAX_OPS_SHOWN);
}

static void write_types(FILE *f, const pn_graph *g, const int32_t *ids, int n)
{
	for (int i = 0; i < n && i < MAX_SHAPES_SHOWN; i++) {
		char buf[256];
		if (i)
			fputs(", ", f);
		pn_html_escape(f, pn_type_desc(&g->values[ids[i]].type, buf, sizeof buf));
	}
	if (n > MAX_SHAPES_SHOWN)
		fprintf(f, ", &hellip; (+%d)", n - MAX_SHAPES_SHOWN);
	if (!n)
		fputs("(none)", f);
}

/* The ops and boundary types of one variant, decoded from its canonical
 * bytes (the same whichever model it came from). */
static void write_example(FILE *f, report *r, const rsub *s)
{
	Passnet__Subgraph *sg;
	pn_subgraphs_get(r->t, s->hash, 16, &sg);
	fputs("<td class=\"ops\">", f);
	if (sg)
		write_ops(f, sg);
	fputs("</td><td class=\"shapes\"><code>", f);
	pn_model *m = NULL;
	char err[PN_ERRLEN];
	if (sg && sg->has_canonical &&
	    !pn_subgraph_model(sg->canonical.data, sg->canonical.len, &m, err)) {
		write_types(f, m->graph, m->graph->inputs, m->graph->n_inputs);
		fputs(" &rarr; ", f);
		write_types(f, m->graph, m->graph->outputs, m->graph->n_outputs);
	} else {
		fputs("?", f);
	}
	fputs("</code></td>", f);
	pn_model_free(m);
	pn_subgraphs_free(sg);
}

static void write_pattern_row(FILE *f, report *r, size_t rank, const rpattern *p, int kind)
{
	const rsub *e = &r->subs[p->example];
	char pat[33], hash[33], t[32], b[32], q[32], x[32];
	pn_hex(e->pattern, 16, pat);
	pn_hex(e->hash, 16, hash);
	fmt_num(p->time, t, sizeof t);
	fmt_num(p->bound, b, sizeof b);
	fmt_num(p->time / p->bound, q, sizeof q);
	fmt_num(p->excess, x, sizeof x);
	fprintf(f, "<tr><td class=\"n\">%zu</td><td><code title=\"%s\">%.12s</code><br>"
		"<small>e.g. <code title=\"%s\">%.12s</code></small></td>",
		rank, pat, pat, hash, hash);
	if (kind)
		fprintf(f, "<td class=\"kind\">%s</td>", pn_cut_kind_name(p->kind));
	write_example(f, r, e);
	fprintf(f, "<td class=\"n\">%lld / %lld</td><td class=\"n\">%lld</td>"
		"<td class=\"n excess\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
		"<td class=\"n\">%s</td><td class=\"n\">%lld</td></tr>\n",
		(long long)p->measured, (long long)p->variants, (long long)p->occurrences, x, t, b,
		q, (long long)p->slow);
}

static void pattern_table_head(FILE *f, const char *id, int kind)
{
	fprintf(f, "<table id=\"%s\"><thead><tr><th class=\"n\">#</th><th>pattern</th>%s"
		"<th>ops</th><th>example shapes (inputs &rarr; outputs)</th>"
		"<th class=\"n\">variants measured / all</th><th class=\"n\">occurrences</th>"
		"<th class=\"n\">excess time (&micro;s)</th>"
		"<th class=\"n\">time (&micro;s)</th><th class=\"n\">bound (&micro;s)</th>"
		"<th class=\"n\">time / bound</th><th class=\"n\">slow variants</th></tr></thead>"
		"<tbody>\n", id, kind ? "<th>kind</th>" : "");
}

/* Rows for the first `max` ranked patterns whose kind is (work) or is not
 * (!work) PN_CUT_WORK, in rank order; returns how many such there are. */
static size_t write_pattern_rows(FILE *f, report *r, size_t ranked, int work, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < ranked; i++) {
		const rpattern *p = &r->pats[i];
		if ((p->kind == PN_CUT_WORK) != work)
			continue;
		if (n < max)
			write_pattern_row(f, r, n + 1, p, !work);
		n++;
	}
	return n;
}

/* The patterns with nothing a compiler could win, by kind, most excess
 * time first. */
static void write_set_apart(FILE *f, report *r, size_t ranked)
{
	int64_t by_kind[PN_CUT_KINDS] = {0};
	for (size_t i = 0; i < ranked; i++)
		by_kind[r->pats[i].kind]++;
	int64_t apart = (int64_t)ranked - by_kind[PN_CUT_WORK];
	fprintf(f, "<h3>Set apart: nothing to win</h3>\n<p class=\"note\" id=\"set-apart-note\">"
		"%lld measured patterns are control flow (%lld), shape-only (%lld) or do less than "
		"%.0f flops + bytes of work (%lld): however far above its bound, such a cut's time is "
		"the interpreter's or the per-node dispatch, which no pass over the cut wins back. "
		"The first %d by excess time:</p>\n", (long long)apart,
		(long long)by_kind[PN_CUT_CONTROL], (long long)by_kind[PN_CUT_SHAPE_ONLY], PN_MIN_WORK,
		(long long)by_kind[PN_CUT_LITTLE], SET_APART_TOP);
	if (!apart)
		return;
	pattern_table_head(f, "set-apart-patterns", 1);
	write_pattern_rows(f, r, ranked, 0, SET_APART_TOP);
	fputs("</tbody></table>\n", f);
}

static void write_patterns(FILE *f, report *r)
{
	size_t ranked = rank_patterns(r);
	size_t work = 0;
	for (size_t i = 0; i < ranked; i++)
		work += r->pats[i].kind == PN_CUT_WORK;
	size_t top = (size_t)r->top < work ? (size_t)r->top : work;
	fprintf(f, "<section id=\"patterns\"><h2>Top patterns by excess time</h2>\n"
		"<p class=\"note\" id=\"rank-rule\">Ranked by what a compiler could win: excess "
		"time, (time &minus; bound) &times; occurrences summed over the measured variants, "
		"with control-flow, shape-only and little-work (under %.0f flops + bytes) cuts set "
		"apart in the table below.</p>\n<p class=\"note\">The %zu patterns (of %zu "
		"with real work, %lld with a measured variant) with the most excess time: time and "
		"bound are sums over the measured variants, ratio is their quotient. Ops and shapes "
		"are those of the worst variant (<code>passnet show HASH</code> shows it); "
		"occurrences count every variant in every model.</p>\n",
		PN_MIN_WORK, top, work, (long long)patterns_profiled(r));
	if (!top) {
		fputs("<p class=\"note\">No measured subgraph with real work yet.</p>\n", f);
	} else {
		pattern_table_head(f, "slow-patterns", 0);
		write_pattern_rows(f, r, ranked, 1, top);
		fputs("</tbody></table>\n", f);
	}
	if (ranked)
		write_set_apart(f, r, ranked);
	fputs("</section>\n", f);
}

static int cmp_src_name(const void *a, const void *b)
{
	return strcmp(((const rsource *)a)->name, ((const rsource *)b)->name);
}

/* Trained models apart from op tests: the manifest's groups
 * (export/groups.h), when the sources are grouped. */
static void write_groups(FILE *f, report *r)
{
	pn_group_stat *g;
	int n, named = 0;
	char err[PN_ERRLEN];
	if (pn_group_stats(r->t, &g, &n, err))
		return;
	for (int i = 0; i < n; i++)
		named |= g[i].name[0] != 0;
	if (named) {
		fputs("<section id=\"groups\"><h2>Groups</h2>\n<p class=\"note\">The manifest's "
		      "groups of sources: a subgraph counts for every group holding a model it was "
		      "found in.</p>\n<table id=\"group-table\"><thead><tr><th>group</th>"
		      "<th class=\"n\">sources</th><th class=\"n\">models</th>"
		      "<th class=\"n\">subgraphs</th><th class=\"n\">profiled</th>"
		      "<th class=\"n\">slow</th><th class=\"n\">slow share</th></tr></thead><tbody>\n",
		      f);
		for (int i = 0; i < n; i++) {
			fputs("<tr><td>", f);
			pn_html_escape(f, g[i].name[0] ? g[i].name : "(no group)");
			fprintf(f, "</td><td class=\"n\">%lld</td><td class=\"n\">%lld</td>"
				"<td class=\"n\">%lld</td><td class=\"n\">%lld</td><td class=\"n\">%lld</td>"
				"<td class=\"n\">%.1f%%</td></tr>\n", (long long)g[i].sources,
				(long long)g[i].models, (long long)g[i].subgraphs, (long long)g[i].profiled,
				(long long)g[i].slow,
				g[i].measured ? 100.0 * (double)g[i].slow / (double)g[i].measured : 0.0);
		}
		fputs("</tbody></table></section>\n", f);
	}
	pn_group_stats_free(g, n);
}

static void write_sources(FILE *f, report *r)
{
	/* Appended unknown sources join the sorted ones for display. */
	if (r->n_srcs)
		qsort(r->srcs, (size_t)r->n_srcs, sizeof(*r->srcs), cmp_src_name);
	fputs("<section id=\"sources\"><h2>Sources</h2>\n<p class=\"note\">A subgraph counts for "
	      "every source holding a model it was found in; the median is over that source's "
	      "measured subgraphs.</p>\n<table id=\"source-table\"><thead><tr><th>source</th>"
	      "<th>kind</th><th class=\"n\">models</th><th class=\"n\">subgraphs</th>"
	      "<th class=\"n\">profiled</th><th class=\"n\">median time / bound</th>", f);
	for (int k = 0; k < PN_N_FLAGS; k++)
		fprintf(f, "<th class=\"n\">%s</th>", pn_flag_names[k]);
	fputs("</tr></thead><tbody>\n", f);
	for (int i = 0; i < r->n_srcs; i++) {
		rsource *s = &r->srcs[i];
		char med[32];
		fmt_num(pn_median(s->ratios, s->n_ratios), med, sizeof med);
		fputs("<tr><td>", f);
		pn_html_escape(f, s->name);
		fputs("</td><td>", f);
		pn_html_escape(f, s->kind);
		fprintf(f, "</td><td class=\"n\">%lld</td><td class=\"n\">%lld</td>"
			"<td class=\"n\">%lld</td><td class=\"n\">%s</td>",
			(long long)s->models, (long long)s->subgraphs, (long long)s->profiled, med);
		for (int k = 0; k < PN_N_FLAGS; k++)
			fprintf(f, "<td class=\"n\">%lld</td>", (long long)s->flags[k]);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table></section>\n", f);
}

static void write_tally(FILE *f, const char *title, pn_tally *t, int max)
{
	if (!t->n)
		return;
	pn_tally_sort(t);
	fputs("<h3>", f);
	pn_html_escape(f, title);
	fputs("</h3><table><tbody>\n", f);
	for (int i = 0; i < t->n && (!max || i < max); i++) {
		fputs("<tr><td><code>", f);
		pn_html_escape(f, t->items[i].name);
		fprintf(f, "</code></td><td class=\"n\">%lld</td></tr>\n", (long long)t->items[i].n);
	}
	fputs("</tbody></table>\n", f);
}

/* --- the ONNX Runtime baseline --------------------------------------------------- */

#define ORT_OPS_SHOWN 15
#define ORT_WORST_SHOWN 10

static void write_ort_cards(FILE *f, const report *r)
{
	char buf[64];
	int64_t timed = (int64_t)r->n_orts;
	fputs("<dl class=\"cards\">\n", f);
	card_int(f, "ort-baselines", "baselines", r->ort_total);
	card_int(f, "ort-timed", "timed by ORT", timed);
	card_int(f, "ort-refused", "refused by ORT", r->ort_refused);
	card_int(f, "ort-skipped", "not given to ORT", r->ort_skipped);
	card_int(f, "ort-disagree", "disagree with passnet", r->ort_disagree);
	card_int(f, "ort-regressions", "compiler regressions", r->ort_regressions);
	snprintf(buf, sizeof buf, "%.1f%%", share_pct(r->ort_regressions, timed));
	card(f, "ort-regression-share", "slower with ORT's optimisations", buf);
	double *ratios = malloc(sizeof(double) * (r->n_orts ? r->n_orts : 1));
	size_t n = 0;
	for (size_t i = 0; ratios && i < r->n_orts; i++)
		if (r->orts[i].ratio > 0)
			ratios[n++] = r->orts[i].ratio;
	fmt_num(n ? pn_median(ratios, n) : NAN, buf, sizeof buf);
	free(ratios);
	card(f, "ort-ratio", "median ORT ALL / passnet", buf);
	fputs("</dl>\n", f);
}

/* x: ORT without its optimisations, y: with them; above the diagonal the
 * optimised graph is slower.  Regressions are the last class, drawn on top. */
static void write_ort_scatter(FILE *f, const report *r)
{
	pn_point *pts = malloc(sizeof(*pts) * (r->n_orts ? r->n_orts : 1));
	size_t n = 0;
	for (size_t i = 0; pts && i < r->n_orts; i++)
		pts[n++] = (pn_point){r->orts[i].disabled, r->orts[i].all, r->orts[i].regression};
	static const char *const cls[] = {"no regression", "compiler regression"};
	pn_plot p = {.id = "ort-all-vs-disabled",
		     .title = "ONNX Runtime with its optimisations (ALL) against without (disabled)",
		     .xlabel = "ORT, optimisations disabled (\xc2\xb5s, log)",
		     .ylabel = "ORT, level ALL (\xc2\xb5s, log)",
		     .w = 640, .h = 540, .ml = 60, .mr = 160, .mt = 16, .mb = 74};
	fputs("<figure>", f);
	pn_svg_scatter_diagonal(f, &p, pts, n, cls, 2, "ALL = disabled");
	fprintf(f, "<figcaption>One point per subgraph ORT timed (%zu; points on the same pixel are "
		"drawn once), 1 thread, medians. Above the line ORT's optimised graph is slower than "
		"its unoptimised one.</figcaption></figure>\n", n);
	free(pts);
}

static int64_t tally_count(const pn_tally *t, const char *name)
{
	for (int i = 0; i < t->n; i++)
		if (!strcmp(t->items[i].name, name))
			return t->items[i].n;
	return 0;
}

/* Sizes in their own order; op sets with the most regressions first. */
static void write_ort_distribution(FILE *f, report *r)
{
	fputs("<div class=\"plots\"><div><h3>By size</h3>", f);
	ort_share_head(f, "ort-by-size", "nodes");
	ort_share_rows(f, pn_baseline_size_names, r->headline.size, PN_BASELINE_SIZES);
	fputs("</tbody></table></div>\n<div><h3>By op set</h3>", f);
	pn_tally_sort(&r->ort_ops_reg);
	ort_share_head(f, "ort-by-ops", "op set (ORT's unoptimised graph)");
	for (int i = 0; i < r->ort_ops_reg.n && i < ORT_OPS_SHOWN; i++)
		ort_share_row(f, r->ort_ops_reg.items[i].name, r->ort_ops_reg.items[i].n,
			      tally_count(&r->ort_ops, r->ort_ops_reg.items[i].name));
	fputs("</tbody></table>", f);
	if (r->ort_ops_reg.n > ORT_OPS_SHOWN)
		fprintf(f, "<p class=\"note\">and %d more op sets with a regression.</p>",
			r->ort_ops_reg.n - ORT_OPS_SHOWN);
	fputs("</div></div>\n", f);
}

/* Worst slowdown first; equal ones by hash, so the order is total. */
static int cmp_ort_worst(const void *a, const void *b, void *ud)
{
	const rort *x = a, *y = b;
	const report *r = ud;
	double qx = x->all / x->disabled, qy = y->all / y->disabled;
	if (qx != qy)
		return qx < qy ? 1 : -1;
	return memcmp(r->subs[x->sub].hash, r->subs[y->sub].hash, 16);
}

static void write_ort_worst(FILE *f, report *r)
{
	rort *w = malloc(sizeof(*w) * (r->n_orts ? r->n_orts : 1));
	size_t n = 0;
	for (size_t i = 0; w && i < r->n_orts; i++)
		if (r->orts[i].regression && r->orts[i].disabled > 0)
			w[n++] = r->orts[i];
	if (n)
		qsort_r(w, n, sizeof(*w), cmp_ort_worst, r);
	if (n) {
		fputs("<h3>Worst compiler regressions</h3>\n<table id=\"ort-worst\"><thead><tr>"
		      "<th>subgraph</th><th>ops</th><th>shapes (inputs &rarr; outputs)</th>"
		      "<th class=\"n\">ALL (&micro;s)</th><th class=\"n\">disabled (&micro;s)</th>"
		      "<th class=\"n\">ALL / disabled</th></tr></thead><tbody>\n", f);
	}
	for (size_t i = 0; i < n && i < ORT_WORST_SHOWN; i++) {
		const rsub *s = &r->subs[w[i].sub];
		char hash[33], a[32], d[32], q[32];
		pn_hex(s->hash, 16, hash);
		fmt_num(w[i].all, a, sizeof a);
		fmt_num(w[i].disabled, d, sizeof d);
		fmt_num(w[i].all / w[i].disabled, q, sizeof q);
		fprintf(f, "<tr><td><code title=\"%s\">%.12s</code></td>", hash, hash);
		write_example(f, r, s);
		fprintf(f, "<td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td></tr>\n",
			a, d, q);
	}
	if (n)
		fputs("</tbody></table>\n", f);
	free(w);
}

static void write_ort(FILE *f, report *r)
{
	fputs("<section id=\"ort\"><h2>Compiler baseline: ONNX Runtime</h2>\n", f);
	if (!r->ort_total) {
		fputs("<p class=\"note\" id=\"no-ort\">No ONNX Runtime baseline yet: run "
		      "<code>passnet baseline</code> (or <code>passnet exec --baseline ort</code>) to "
		      "time every profiled subgraph under ORT.</p></section>\n", f);
		return;
	}
	pn_tally_sort(&r->ort_versions);
	fputs("<p class=\"note\">Every profiled subgraph run by ONNX Runtime (", f);
	for (int i = 0; i < r->ort_versions.n; i++) {
		fputs(i ? ", " : "", f);
		pn_html_escape(f, r->ort_versions.items[i].name);
	}
	fputs(") on passnet's inputs with passnet's protocol, 1 thread, at graph optimisation "
	      "level ALL (its default: the compiler) and with every optimisation disabled (eager). "
	      "A compiler regression is ALL slower than disabled by more than the stored threshold, "
	      "confirmed by a second timing. The published benchmark's figure is 43% of real "
	      "subgraphs slower under TorchInductor than under eager PyTorch; here the compiler is "
	      "ORT's CPU graph optimiser and the baseline ORT's own unoptimised kernels.</p>\n", f);
	write_ort_cards(f, r);
	fputs("<div class=\"plots\">\n", f);
	write_ort_scatter(f, r);
	fputs("</div>\n", f);
	write_ort_distribution(f, r);
	write_ort_worst(f, r);
	write_tally(f, "why ORT did not time them (kinds of message)", &r->ort_refusals, 20);
	fputs("</section>\n", f);
}

static void write_measurement(FILE *f, report *r)
{
	if (!r->profiled)
		return;
	fputs("<section id=\"measurement\"><h2>How it was measured</h2>\n", f);
	write_tally(f, "executor builds (profiles)", &r->builds, 0);
	write_tally(f, "threads (profiles)", &r->threads, 0);
	write_tally(f, "flag thresholds as applied (profiles)", &r->thresholds, 0);
	write_tally(f, "why profiling failed (kinds of message)", &r->reasons, 20);
	fputs("</section>\n", f);
}

/* The corpus's shape beside the published one: unique subgraphs per
 * strategy, and how much of it is the published corpus's unit, typical
 * subgraphs (as `passnet stats` counts them). */
static void write_shape(FILE *f, const report *r)
{
	int64_t unique[PN_N_STRATEGIES] = {0};
	for (size_t i = 0; i < r->n_subs; i++)
		for (int k = 0; k < PN_N_STRATEGIES; k++)
			unique[k] += (r->subs[i].strategies >> k) & 1;
	int64_t typical = unique[PN_STRATEGY_typical];
	fputs("<section id=\"shape\"><h2>The corpus beside the published one</h2>\n<p id=\"typical\">", f);
	fprintf(f, "<span id=\"typical-unique\">%lld</span> typical subgraphs (repeated blocks of 4 to "
		"64 ops) in <span id=\"typical-models\">%zu</span> of %lld models and shape variants, "
		"%.1f%% of the unique subgraphs.  The published corpus is %d typical subgraphs from "
		"about 100K models after 10 shape variants.</p>\n", (long long)typical,
		r->typical_models.n, (long long)r->with_variants,
		r->n_subs ? 100.0 * (double)typical / (double)r->n_subs : 0.0, PN_PUBLISHED_TYPICAL);
	fputs("<table id=\"strategy-table\"><thead><tr><th>strategy</th><th class=\"n\">unique "
	      "subgraphs</th></tr></thead><tbody>\n", f);
	for (int k = 0; k < PN_N_STRATEGIES; k++)
		fprintf(f, "<tr><td>%s</td><td class=\"n\">%lld</td></tr>\n", pn_strategy_names[k],
			(long long)unique[k]);
	fputs("</tbody></table>\n<p class=\"note\">A subgraph cut by two strategies counts under "
	      "each.</p></section>\n", f);
}

static void write_page(FILE *f, report *r)
{
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		"<title>passnet report</title>\n<style>\n%s</style></head>\n<body>\n"
		"<h1>passnet report</h1>\n<p class=\"lede\">The unique subgraphs mined from the "
		"store's models, as timed on passnet's reference executor and compared with their "
		"fused roofline bound (what the machine could do if the subgraph were one kernel "
		"reading its inputs and weights and writing its outputs once).</p>\n", css);
	write_headline(f, r);
	write_shape(f, r);
	write_calibration(f, r);
	write_machines(f, r);
	write_plots(f, r);
	write_ort(f, r);
	write_patterns(f, r);
	write_groups(f, r);
	write_sources(f, r);
	write_measurement(f, r);
	fputs("<footer class=\"note\">Written by <code>passnet report</code>.</footer>\n"
	      "</body></html>\n", f);
}

/* --- files ------------------------------------------------------------------------- */

/* Written beside the page and renamed over it: a reader never sees half a
 * page. */
static int write_file(report *r, const char *path)
{
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return pn_fail(r->err, "%s: %s", tmp, strerror(errno));
	write_page(f, r);
	int bad = ferror(f);
	if (fclose(f) || bad) {
		remove(tmp);
		return pn_fail(r->err, "%s: write failed", tmp);
	}
	if (rename(tmp, path))
		return pn_fail(r->err, "%s: %s", path, strerror(errno));
	return 0;
}

static void report_free(report *r)
{
	for (int i = 0; i < r->n_srcs; i++) {
		free(r->srcs[i].name);
		free(r->srcs[i].kind);
		free(r->srcs[i].ratios);
	}
	free(r->srcs);
	free(r->subs);
	free(r->places);
	free(r->pats);
	free(r->ratios);
	pn_tally_free(&r->other_flags);
	pn_tally_free(&r->builds);
	pn_keymap_free(&r->typical_models);
	pn_tally_free(&r->threads);
	pn_tally_free(&r->thresholds);
	pn_tally_free(&r->reasons);
	pn_tally_free(&r->machine_profiles);
	pn_tally_free(&r->ort_versions);
	pn_tally_free(&r->ort_ops);
	pn_tally_free(&r->ort_ops_reg);
	pn_tally_free(&r->ort_refusals);
	free(r->orts);
	free(r->machines);
}

int pn_report_write(pn_rtxn *t, const pn_report_opts *o, pn_report_summary *sum, char *err)
{
	report r = {.t = t, .err = err, .top = o->top > 0 ? o->top : DEFAULT_TOP};
	memset(sum, 0, sizeof(*sum));
	err[0] = 0;
	int rc = pn_mkdirs(o->out_dir, 0777, err);
	if (!rc && snprintf(sum->path, sizeof sum->path, "%s/index.html", o->out_dir) >=
			   (int)sizeof sum->path)
		rc = pn_fail(err, "%s: path too long", o->out_dir);
	if (!rc && load(&r))
		rc = err[0] ? -1 : pn_fail(err, "reading the store failed");
	if (!rc)
		rc = build_patterns(&r);
	if (!rc)
		rc = collect_ratios(&r);
	if (!rc) {
		pn_tally_sort(&r.other_flags);
		rc = write_file(&r, sum->path);
	}
	sum->models = r.models;
	sum->sources = r.n_srcs;
	sum->subgraphs = (int64_t)r.n_subs;
	sum->patterns = (int64_t)r.n_pats;
	sum->profiled = r.profiled;
	sum->measured = (int64_t)r.n_measured;
	sum->orphans = r.orphans;
	report_free(&r);
	return rc;
}
