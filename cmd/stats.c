/*
 * stats.c - `passnet stats`: what the store holds.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "common/strmap.h"
#include "common/tally.h"
#include "common/timing.h"
#include "common/util.h"
#include "runtime/infer.h"
#include "extract/ingest.h"
#include "partition/partition.h"
#include "schemas/ops.h"
#include "common/keymap.h"
#include "store/structures.h"
#include "store/subgraphs.h"
#include "exec/baseline.h"
#include "exec/calibrate.h"
#include "exec/headline.h"
#include "exec/profile.h"
#include "export/groups.h"
#include "store/query.h"
#include "store/records.h"
#include "store/tables.h"

static int opt_unknown, opt_brief;

static const pn_option options[] = {
	PN_FLAG(0, "unknown", &opt_unknown,
		"also list every value with unknown dims, model by model, with the op that "
		"produces it"),
	PN_FLAG(0, "brief", &opt_brief, "only the headline figures"),
	PN_OPT_TABLE_END,
};

typedef struct pattern_stat {
	uint8_t pattern[16];
	int64_t occurrences, variants;
	char *ops;           /* of its first variant */
} pattern_stat;

typedef struct stats {
	pn_tally sources, opsets, ops, errors, unknown_ops, roots, gaps, prof_reasons;
	int64_t models, places, failed, nodes, values, unknown, weights, n_gaps;
	int64_t variants;      /* shape variants (extract/variants.h), not counted as models */
	/* subgraphs (from occurrences and subgraphs) */
	int64_t candidates, subgraphs, once, per_cand[PN_N_STRATEGIES], per_unique[PN_N_STRATEGIES];
	pn_keymap typical_models;   /* models with a typical occurrence */
	uint8_t cur[16];
	int64_t cur_total, cur_strat[PN_N_STRATEGIES];
	int have_cur;
	pattern_stat *patterns;
	int n_patterns, cap_patterns;
	pn_strmap pattern_index;     /* pattern hex -> index in patterns */
	/* profiles */
	int64_t profiled, prof_failed, prof_unstable, flags[PN_N_FLAGS];
	int64_t prof_denormal;       /* profiles whose inputs or outputs held subnormals */
	int64_t prof_real_inputs;    /* profiles whose input ranges came from a real-weight run */
	int64_t ranged;              /* subgraphs with input ranges (exec's ranges phase) */
	int64_t range_inputs;        /* their float inputs with a known range */
	int64_t range_real;          /* of those, from a run on real weights */
	int64_t range_abnormal;      /* of those, a bound non-finite or denormal */
	pn_tally prof_machines;      /* machine id -> profiles; "" for none recorded */
	/* the ONNX Runtime baselines (passnet baseline) */
	int64_t ort_total, ort_ok, ort_refused, ort_disagree, ort_regress;
	pn_tally ort_versions, ort_by_ops, ort_reg_by_ops, ort_by_size, ort_reg_by_size;
	double *ort_ratio;           /* ORT-ALL / passnet, per ok baseline */
	pn_headline headline;        /* the compiler-regression share (exec/headline.h) */
	int64_t ort_ratio_cap;
	pn_calibration *machines;    /* meta "machine/<id>", in id order */
	int n_machines;
	char current[PN_MACHINE_ID_LEN + 1];   /* the current machine's id, or "" */
	pn_arena pattern_arena;
	pn_rtxn *t;
	int list_unknown, brief;
	Passnet__Source **srcs;      /* the sources table, in name order */
	size_t n_srcs;
} stats;

static void count_graph_ops(stats *s, const Onnx__GraphProto *g)
{
	for (size_t i = 0; i < g->n_node; i++) {
		const Onnx__NodeProto *n = g->node[i];
		char name[256];
		/* a stored node may lack op_type (a corrupt file that still
		 * decodes): "%s" of NULL is undefined, so it counts as "" */
		snprintf(name, sizeof name, "%s%s%s", n->domain && *n->domain ? n->domain : "",
			 n->domain && *n->domain ? "::" : "", n->op_type ? n->op_type : "");
		pn_tally_add(&s->ops, name, 1);
		for (size_t a = 0; a < n->n_attribute; a++) {
			if (n->attribute[a]->g)
				count_graph_ops(s, n->attribute[a]->g);
			for (size_t k = 0; k < n->attribute[a]->n_graphs; k++)
				count_graph_ops(s, n->attribute[a]->graphs[k]);
		}
	}
}

/* Why a value's shape is open.  A node whose output shape is unknown
 * although every input's shape is known is where unknown dims start (a
 * root).  That is expected when the op's output size depends on data it
 * reads: a data-dependent op (NonZero, NonMaxSuppression, Loop, ...), or an
 * integer input whose contents inference could not compute (Reshape's
 * shape, TopK's k, Range's limits, ... derived from data).  Any other root
 * is a gap in inference, counted apart so a test can insist there is none. */
static int root_is_data_dependent(const pn_graph *g, const pn_infer_result *r, const pn_node *n)
{
	if (n->op < 0)
		return 0;
	const pn_op_info *op = &pn_ops[n->op];
	if ((op->flags & (F_DATA_DEP | F_RANDOM | F_SEQ)) || op->kind == CONTROL)
		return 1;
	for (int k = 0; k < n->n_in; k++) {
		int v = n->in[k];
		if (v >= 0 && pn_dtype_is_int(r->v[v].type.dtype) && !r->v[v].value && !g->values[v].data)
			return 1;
	}
	return 0;
}

static int is_root(const pn_infer_result *r, const pn_node *n)
{
	for (int k = 0; k < n->n_in; k++) {
		int v = n->in[k];
		if (v >= 0 && r->v[v].type.kind == PN_KIND_TENSOR && !pn_type_is_static(&r->v[v].type))
			return 0;
	}
	return 1;
}

static void list_unknown(stats *s, const pn_key *key, const void *data, size_t len)
{
	pn_model *m = NULL;
	Passnet__Model *rec = NULL;
	char err[PN_ERRLEN];
	pn_infer_result r;
	if (pn_model_from_record(data, len, &m, &rec, err))
		return;
	const pn_graph *g = m->graph;
	if (pn_infer_graph(g, &m->bind, NULL, &r, err)) {
		pn_model_free(m);
		return;
	}
	char hex[33];
	pn_key_hex(key, hex);
	for (int v = 0; v < g->n_values; v++) {
		const pn_value *val = &g->values[v];
		if (val->role != PN_ROLE_NODE || r.v[v].type.kind != PN_KIND_TENSOR ||
		    pn_type_is_static(&r.v[v].type))
			continue;
		const pn_node *p = &g->nodes[val->producer];
		pn_tally_add(&s->unknown_ops, p->op_type, 1);
		const char *why = "downstream of a data-dependent size";
		if (is_root(&r, p)) {
			int legit = root_is_data_dependent(g, &r, p);
			why = legit ? "size depends on data" : "INFERENCE GAP";
			pn_tally_add(legit ? &s->roots : &s->gaps, p->op_type, 1);
			s->n_gaps += !legit;
		}
		if (s->list_unknown) {
			char buf[160];
			printf("unknown  %.12s %s  %s = %s(...)  %s  [%s]\n", hex, rec->path, val->name,
			       p->op_type, pn_type_desc(&r.v[v].type, buf, sizeof buf), why);
		}
	}
	pn_infer_result_free(&r);
	pn_model_free(m);
}

static int on_model(void *ud, pn_bytes key, pn_bytes val, const Passnet__Model *m)
{
	stats *s = ud;
	uint8_t base[16];
	if (pn_model_variant_of(val, base)) {
		s->variants++;
		return 0;
	}
	if (!m)
		return 0;
	s->models++;
	s->nodes += m->nodes;
	s->values += m->values;
	s->unknown += m->unknown_dims;
	s->weights += (int64_t)m->n_weights;
	for (size_t i = 0; i < m->n_opsets; i++) {
		char name[160];
		snprintf(name, sizeof name, "%s %lld",
			 m->opsets[i]->domain && *m->opsets[i]->domain ? m->opsets[i]->domain : "ai.onnx",
			 (long long)m->opsets[i]->version);
		pn_tally_add(&s->opsets, name, 1);
	}
	/* the graph is kept apart (store/records.h): read the record whole */
	void *whole = NULL;
	size_t len = 0;
	int have = pn_model_record_whole(s->t, val, &whole, &len) == 0;
	Passnet__Model *g = have ? pn_models_unpack((pn_bytes){whole, len}) : NULL;
	if (g && g->graph)
		count_graph_ops(s, g->graph->graph);
	pn_models_free(g);
	if (m->unknown_dims && have) {
		pn_key k;
		memcpy(k.b, key.data, 16);
		list_unknown(s, &k, whole, len);
	}
	free(whole);
	return 0;
}

static int on_place(void *ud, pn_bytes key, pn_bytes val, const Passnet__ModelPath *mp)
{
	(void)key;
	(void)val;
	stats *s = ud;
	if (!mp)
		return 0;
	char name[512];
	int failed = mp->status == PASSNET__MODEL_STATUS__MODEL_FAILED;
	snprintf(name, sizeof name, "%s (%s)", mp->source, failed ? "failed" : "stored");
	pn_tally_add(&s->sources, name, 1);
	s->places++;
	s->failed += failed;
	return 0;
}

static int on_error(void *ud, pn_bytes key, pn_bytes val, const Passnet__Error *e)
{
	(void)key;
	(void)val;
	stats *s = ud;
	if (!e)
		return 0;
	char kind[PN_ERRLEN], name[PN_ERRLEN + 32];
	pn_message_kind(e->message, kind, sizeof kind);
	snprintf(name, sizeof name, "%s: %s", e->stage, kind);
	pn_tally_add(&s->errors, name, 1);
	return 0;
}

/* Keeps every record (printed at the end), so it unpacks its own copy of
 * each value: pn_sources_foreach's are freed when the callback returns. */
static int on_source(void *ud, pn_bytes key, pn_bytes val)
{
	(void)key;
	stats *s = ud;
	Passnet__Source *r = pn_sources_unpack(val);
	Passnet__Source **v = r ? realloc(s->srcs, (s->n_srcs + 1) * sizeof *v) : NULL;
	if (!v) {
		pn_sources_free(r);
		return 0;
	}
	s->srcs = v;
	s->srcs[s->n_srcs++] = r;
	return 0;
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

/* Provenance of every source: what it is, where it came from, its licence. */
static void print_sources(const stats *s)
{
	printf("sources     %zu\n", s->n_srcs);
	for (size_t i = 0; i < s->n_srcs; i++) {
		const Passnet__Source *r = s->srcs[i];
		printf("  %s  %s %s  %s  licence %s  %llu stored, %llu failed%s", r->name, or_empty(r->kind),
		       or_empty(r->location), r->checksum ? r->checksum : or_empty(r->sha256),
		       or_empty(r->licence), (unsigned long long)r->models_ok,
		       (unsigned long long)r->models_failed, r->complete ? "" : ", incomplete");
		if (r->origin && *r->origin)
			printf("  from %s", r->origin);
		putchar('\n');
	}
}

static void print_sources_json(const stats *s)
{
	printf("\"source_records\":[");
	for (size_t i = 0; i < s->n_srcs; i++) {
		const Passnet__Source *r = s->srcs[i];
		printf("%s{\"name\":", i ? "," : "");
		pn_json_str(stdout, or_empty(r->name));
		const char *f[] = {"kind", or_empty(r->kind), "location", or_empty(r->location),
				   "checksum", r->checksum ? r->checksum : or_empty(r->sha256),
				   "licence", or_empty(r->licence), "origin", or_empty(r->origin)};
		for (size_t k = 0; k < sizeof f / sizeof *f; k += 2) {
			printf(",\"%s\":", f[k]);
			pn_json_str(stdout, f[k + 1]);
		}
		printf(",\"models_ok\":%llu,\"models_failed\":%llu,\"complete\":%s}",
		       (unsigned long long)r->models_ok, (unsigned long long)r->models_failed,
		       r->complete ? "true" : "false");
	}
	printf("]");
}

/* --- subgraphs ------------------------------------------------------------------ */

static void close_hash(stats *s)
{
	if (!s->have_cur)
		return;
	s->subgraphs++;
	s->once += s->cur_total == 1;
	for (int i = 0; i < PN_N_STRATEGIES; i++)
		s->per_unique[i] += s->cur_strat[i] > 0;
	s->have_cur = 0;
}

/* Occurrences come grouped by hash (dupsort), so one pass counts both the
 * candidates and the distinct subgraphs of every strategy. */
/* One call per (occurrence, model of its structure): store/structures.h. */
static int on_occurrence(void *ud, const uint8_t hash[16], const Passnet__Occurrence *o,
			 const uint8_t model[16])
{
	stats *s = ud;
	if (!s->have_cur || memcmp(s->cur, hash, 16)) {
		close_hash(s);
		memcpy(s->cur, hash, 16);
		s->have_cur = 1;
		s->cur_total = 0;
		memset(s->cur_strat, 0, sizeof s->cur_strat);
	}
	s->cur_total++;
	s->candidates++;
	int i = pn_strategy_index(o->strategy);
	if (i >= 0) {
		s->cur_strat[i]++;
		s->per_cand[i]++;
	}
	pn_key m;
	memcpy(m.b, model, 16);
	int added;
	if (i == pn_strategy_index("typical") && !pn_keymap_put(&s->typical_models, &m, &added))
		return -1;
	return 0;
}

static pattern_stat *pattern_slot(stats *s, const uint8_t *p)
{
	char hex[33];
	pn_hex(p, 16, hex);
	if (!s->pattern_index.keys) {
		pn_arena_init(&s->pattern_arena, 0);
		pn_strmap_init(&s->pattern_index, &s->pattern_arena, 1024);
	}
	int32_t at = pn_strmap_get(&s->pattern_index, hex);
	if (at >= 0)
		return &s->patterns[at];
	pn_strmap_put(&s->pattern_index, pn_arena_strdup(&s->pattern_arena, hex), s->n_patterns);
	if (s->n_patterns == s->cap_patterns) {
		s->cap_patterns = s->cap_patterns ? s->cap_patterns * 2 : 1024;
		s->patterns = realloc(s->patterns, sizeof(pattern_stat) * (size_t)s->cap_patterns);
	}
	pattern_stat *ps = &s->patterns[s->n_patterns++];
	memset(ps, 0, sizeof(*ps));
	memcpy(ps->pattern, p, 16);
	return ps;
}

static int on_subgraph(void *ud, pn_bytes key, pn_bytes val, const Passnet__Subgraph *sg)
{
	(void)val;
	stats *s = ud;
	if (!sg || sg->pattern.len != 16)
		return 0;
	pn_occ_summary occ;
	pn_occurrences(s->t, key.data, NULL, &occ);
	pattern_stat *ps = pattern_slot(s, sg->pattern.data);
	ps->variants++;
	ps->occurrences += occ.total;
	if (!ps->ops) {
		size_t len = 1;
		for (size_t i = 0; i < sg->n_ops; i++)
			len += strlen(sg->ops[i]) + 1;
		ps->ops = calloc(1, len);
		for (size_t i = 0; ps->ops && i < sg->n_ops; i++) {
			if (i)
				strcat(ps->ops, " ");
			strcat(ps->ops, sg->ops[i]);
		}
	}
	return 0;
}

static int by_occurrences(const void *a, const void *b)
{
	const pattern_stat *x = a, *y = b;
	if (x->occurrences != y->occurrences)
		return x->occurrences > y->occurrences ? -1 : 1;
	return memcmp(x->pattern, y->pattern, 16);
}

/* The kind of a profile failure, so that like failures count together: a
 * node's run-time error counts by op ("run-time error in Gemm"), anything
 * else by its reason up to the first ':' (the details: values, shapes). */
static const char *reason_kind(const char *reason, char *buf, size_t cap)
{
	if (!reason || !*reason)
		return "(no reason recorded)";
	const char *op = strstr(reason, "' (");
	if (!strncmp(reason, "node '", 6) && op) {
		op += 3;
		int n = (int)strcspn(op, ")");
		snprintf(buf, cap, "run-time error in %.*s", n, op);
		return buf;
	}
	size_t n = strcspn(reason, ":");
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, reason, n);
	buf[n] = 0;
	return buf;
}

/* A profile's ONNX Runtime baseline: counted among the ok ones when ORT
 * timed it, by op set and size, with whether it is a compiler regression. */
static void count_ort(stats *s, const Passnet__Profile *p)
{
	const Passnet__OrtBaseline *b = p->ort;
	s->ort_total++;
	pn_tally_add(&s->ort_versions, b->ort_version ? b->ort_version : "?", 1);
	if (!b->status || strcmp(b->status, "ok")) {
		s->ort_refused += b->status && !strcmp(b->status, "refused");
		return;
	}
	s->ort_ok++;
	s->ort_disagree += b->has_agree && (!b->agree || !b->agree_disabled);
	int reg = 0;
	for (size_t i = 0; i < p->n_flags; i++)
		reg |= pn_flag_index(p->flags[i]) == PN_FLAG_COMPILER_REGRESSION;
	s->ort_regress += reg;
	char ops[512];
	pn_baseline_op_set(b->ops_disabled, ops, sizeof ops);
	pn_tally_add(&s->ort_by_ops, ops, 1);
	const char *size = pn_baseline_size_names[pn_baseline_size_bucket(p->nodes)];
	pn_tally_add(&s->ort_by_size, size, 1);
	if (reg) {
		pn_tally_add(&s->ort_reg_by_ops, ops, 1);
		pn_tally_add(&s->ort_reg_by_size, size, 1);
	}
	if (b->has_ratio && s->ort_ok > s->ort_ratio_cap) {
		s->ort_ratio_cap = s->ort_ratio_cap ? 2 * s->ort_ratio_cap : 1024;
		s->ort_ratio = realloc(s->ort_ratio, sizeof(double) * (size_t)s->ort_ratio_cap);
	}
	if (b->has_ratio && s->ort_ratio)
		s->ort_ratio[s->ort_ok - 1] = b->ratio;
}

static int on_profile(void *ud, pn_bytes key, pn_bytes val, const Passnet__Profile *p)
{
	(void)val;
	stats *s = ud;
	if (!p)
		return 0;
	if (key.len == 16 && pn_headline_add(s->t, key.data, p, &s->headline))
		pn_warn("stats: the occurrences of a profiled subgraph could not be read");
	s->profiled++;
	if (p->status && !strcmp(p->status, "failed")) {
		s->prof_failed++;
		char kind[96];
		pn_tally_add(&s->prof_reasons, reason_kind(p->reason, kind, sizeof kind), 1);
	}
	s->prof_unstable += p->status && !strcmp(p->status, "unstable");
	s->prof_denormal += p->denormal_inputs > 0 || p->denormal_outputs > 0;
	s->prof_real_inputs += p->inputs_from_real_run;
	pn_tally_add(&s->prof_machines, p->machine ? p->machine : "", 1);
	if (p->ort)
		count_ort(s, p);
	for (size_t i = 0; i < p->n_flags; i++) {
		int f = pn_flag_index(p->flags[i]);
		if (f >= 0)
			s->flags[f]++;
	}
	return 0;
}

/* A range bound a run should not give: infinite, NaN, or denormal. */
static int abnormal(double x)
{
	return !isfinite(x) || (x != 0 && fabs(x) < FLT_MIN);
}

static int on_ranges(void *ud, pn_bytes key, pn_bytes val, const Passnet__InputRanges *r)
{
	(void)val;
	stats *s = ud;
	if (key.len != 16 || !r)
		return 0;
	s->ranged++;
	for (size_t i = 0; i < r->n_known && i < r->n_lo && i < r->n_hi; i++) {
		if (!r->known[i])
			continue;
		s->range_inputs++;
		s->range_real += i < r->n_real_run && r->real_run[i];
		s->range_abnormal += abnormal(r->lo[i]) || abnormal(r->hi[i]);
	}
	return 0;
}

static void print_range_stats(const stats *s)
{
	if (!s->ranged)
		return;
	printf("ranges      %lld subgraphs with input ranges: %lld float inputs (%lld from a "
	       "real-weight run), %lld with a non-finite or denormal bound\n", (long long)s->ranged,
	       (long long)s->range_inputs, (long long)s->range_real, (long long)s->range_abnormal);
}

static void print_profile_stats(stats *s)
{
	if (!s->profiled)
		return;
	int64_t measured = s->profiled - s->prof_failed;
	printf("profiles    %lld subgraphs profiled (%lld failed, %lld unstable); slow: %.1f%% of "
	       "those measured\nflags      ", (long long)s->profiled, (long long)s->prof_failed,
	       (long long)s->prof_unstable, measured ? 100.0 * (double)s->flags[0] / (double)measured : 0.0);
	for (int f = 0; f < pn_n_flags; f++)
		printf(" %s %lld", pn_flag_names[f], (long long)s->flags[f]);
	printf("\nvalues      %lld profiles ran on or gave denormal values; %lld drew their inputs "
	       "from a real-weight run\n", (long long)s->prof_denormal,
	       (long long)s->prof_real_inputs);
	if (!s->brief)
		pn_tally_print(&s->prof_reasons, "profile failures by reason:", 0, stdout);
}

static int64_t tally_of(const pn_tally *t, const char *name)
{
	for (int i = 0; i < t->n; i++)
		if (!strcmp(t->items[i].name, name))
			return t->items[i].n;
	return 0;
}

/* regressions of a group over the baselines of that group, most first */
/* One row: r regressions of the n subgraphs ORT timed in the group name. */
static void print_regress_row(int64_t r, int64_t n, const char *name)
{
	printf("  %6lld of %6lld (%5.1f%%)  %s\n", (long long)r, (long long)n,
	       n ? 100.0 * (double)r / (double)n : 0.0, name);
}

static void print_regress_by(const pn_tally *reg, const pn_tally *all, const char *title, int max)
{
	if (!reg->n)
		return;
	printf("%s\n", title);
	for (int i = 0; i < reg->n && (max <= 0 || i < max); i++)
		print_regress_row(reg->items[i].n, tally_of(all, reg->items[i].name), reg->items[i].name);
}

/* Sizes in their own order, every size ORT timed (0 regressions too). */
static void print_regress_by_size(const pn_tally *reg, const pn_tally *all)
{
	if (!all->n)
		return;
	printf("compiler regressions by size:\n");
	for (int b = 0; b < PN_BASELINE_SIZES; b++) {
		const char *name = pn_baseline_size_names[b];
		int64_t n = tally_of(all, name);
		if (n)
			print_regress_row(tally_of(reg, name), n, name);
	}
}

static double ratio_median(stats *s)
{
	int64_t n = s->ort_ratio ? s->ort_ok : 0;
	return n ? pn_median(s->ort_ratio, (size_t)n) : 0;
}

/* The analogue of the published benchmark's share of subgraphs slower
 * under the default compiler: ORT at ALL against ORT disabled. */
static void print_ort_stats(stats *s)
{
	/* the headline once there is something ORT could time: not measured
	 * until it has */
	if (s->profiled)
		pn_headline_print(stdout, &s->headline, "headline    ");
	if (!s->ort_total)
		return;
	printf("ort         %lld baselines (ONNX Runtime", (long long)s->ort_total);
	for (int i = 0; i < s->ort_versions.n; i++)
		printf(" %s", s->ort_versions.items[i].name);
	printf("): %lld timed, %lld refused by ORT, %lld disagree with passnet\n",
	       (long long)s->ort_ok, (long long)s->ort_refused, (long long)s->ort_disagree);
	printf("ort         compiler-regression: %lld of %lld timed (%.1f%%) slower at level ALL "
	       "than with optimisations disabled; ORT-ALL / passnet median ratio %.3f\n",
	       (long long)s->ort_regress, (long long)s->ort_ok,
	       s->ort_ok ? 100.0 * (double)s->ort_regress / (double)s->ort_ok : 0.0, ratio_median(s));
	if (s->brief)
		return;
	print_regress_by_size(&s->ort_reg_by_size, &s->ort_by_size);
	print_regress_by(&s->ort_reg_by_ops, &s->ort_by_ops, "compiler regressions by op set:", 15);
}

/* --- machines ------------------------------------------------------------------- */

static void read_machines(stats *s)
{
	char err[PN_ERRLEN];
	if (pn_machines_list(s->t, &s->machines, &s->n_machines, err))
		pn_warn("stats: machines: %s", err);
	pn_calibration cur;
	if (pn_calibration_get(s->t, &cur, err) == 0)
		memcpy(s->current, cur.machine, sizeof s->current);
}

static int64_t profiles_of(const stats *s, const char *id)
{
	for (int i = 0; i < s->prof_machines.n; i++)
		if (!strcmp(s->prof_machines.items[i].name, id))
			return s->prof_machines.items[i].n;
	return 0;
}

/* Profiles that name no machine (an older passnet) or one the store does
 * not hold. */
static void unlisted_profiles(const stats *s, int64_t *none, int64_t *unknown)
{
	*none = profiles_of(s, "");
	*unknown = 0;
	for (int i = 0; i < s->prof_machines.n; i++) {
		const char *id = s->prof_machines.items[i].name;
		int known = 0;
		for (int k = 0; k < s->n_machines && !known; k++)
			known = !strcmp(s->machines[k].machine, id);
		if (id[0] && !known)
			*unknown += s->prof_machines.items[i].n;
	}
}

/* The thread count a machine's row shows: the most it was calibrated for. */
static int max_threads(const pn_calibration *c)
{
	return c->max_threads < 1 ? 1 : c->max_threads;
}

static void print_machines(const stats *s)
{
	int64_t none, unknown;
	unlisted_profiles(s, &none, &unknown);
	if (!s->n_machines && !none && !unknown)
		return;
	printf("machines    %d calibrated (* current); roofline at max threads, profiles measured "
	       "there:\n", s->n_machines);
	for (int i = 0; i < s->n_machines; i++) {
		const pn_calibration *c = &s->machines[i];
		int t = max_threads(c);
		printf("  %s %c %s, %s: %d thread%s, %.1f GFLOP/s, %.2f GB/s, %lld profiles\n",
		       c->machine, strcmp(c->machine, s->current) ? ' ' : '*',
		       c->host[0] ? c->host : "(host not recorded)", c->cpu_model[0] ? c->cpu_model : "?",
		       t, t == 1 ? "" : "s", c->peak_gflops[t], c->bandwidth_gbs[t],
		       (long long)profiles_of(s, c->machine));
	}
	if (none)
		printf("  %lld profiles name no machine (an older passnet; read as the current one)\n",
		       (long long)none);
	if (unknown)
		printf("  %lld profiles name a machine this store does not hold\n", (long long)unknown);
}

static void print_machines_json(const stats *s)
{
	printf("\"machines\":[");
	for (int i = 0; i < s->n_machines; i++) {
		const pn_calibration *c = &s->machines[i];
		int t = max_threads(c);
		printf("%s{\"id\":\"%s\",\"current\":%s,\"host\":", i ? "," : "", c->machine,
		       strcmp(c->machine, s->current) ? "false" : "true");
		pn_json_str(stdout, c->host);
		printf(",\"cpu_model\":");
		pn_json_str(stdout, c->cpu_model);
		printf(",\"threads\":%d,\"peak_gflops\":%.6g,\"bandwidth_gbs\":%.6g,\"profiles\":%lld}",
		       t, c->peak_gflops[t], c->bandwidth_gbs[t], (long long)profiles_of(s, c->machine));
	}
	int64_t none, unknown;
	unlisted_profiles(s, &none, &unknown);
	printf("],\"profiles_without_machine\":%lld,\"profiles_unknown_machine\":%lld",
	       (long long)none, (long long)unknown);
}

/* The corpus's shape beside the published one (PN_PUBLISHED_TYPICAL). */
static void print_typical(const stats *s)
{
	int t = pn_strategy_index("typical");
	/* occurrences name the model or shape variant they were cut from */
	printf("typical     %lld repeated blocks (unique) in %zu of %lld models and shape variants, "
	       "%.1f candidates per one with any; %.1f%% of unique subgraphs (published corpus: "
	       "%d typical subgraphs)\n",
	       (long long)s->per_unique[t], s->typical_models.n, (long long)(s->models + s->variants),
	       s->typical_models.n ? (double)s->per_cand[t] / (double)s->typical_models.n : 0.0,
	       s->subgraphs ? 100.0 * (double)s->per_unique[t] / (double)s->subgraphs : 0.0,
	       PN_PUBLISHED_TYPICAL);
}

static void print_subgraph_stats(stats *s)
{
	if (!s->candidates)
		return;
	printf("candidates  %lld hashed (", (long long)s->candidates);
	for (int i = 0; i < PN_N_STRATEGIES; i++)
		printf("%s%s %lld", i ? ", " : "", pn_strategies[i].name, (long long)s->per_cand[i]);
	printf(")\nsubgraphs   %lld unique; dedup ratio %.2f candidates per subgraph\n",
	       (long long)s->subgraphs, (double)s->candidates / (double)s->subgraphs);
	for (int i = 0; i < PN_N_STRATEGIES; i++)
		if (s->per_unique[i])
			printf("  %-8s %8lld candidates -> %7lld unique (ratio %.2f)\n", pn_strategies[i].name,
			       (long long)s->per_cand[i], (long long)s->per_unique[i],
			       (double)s->per_cand[i] / (double)s->per_unique[i]);
	print_typical(s);
	printf("long tail   %lld subgraphs occur once (%.1f%%)\n", (long long)s->once,
	       100.0 * (double)s->once / (double)s->subgraphs);
	printf("patterns    %d (shape/dtype variants grouped); most frequent:\n", s->n_patterns);
	for (int i = 0; i < s->n_patterns && i < 10; i++) {
		char hex[33];
		pn_hex(s->patterns[i].pattern, 16, hex);
		printf("  %.12s %7lld occurrences %5lld variants  %.80s\n", hex,
		       (long long)s->patterns[i].occurrences, (long long)s->patterns[i].variants,
		       s->patterns[i].ops ? s->patterns[i].ops : "");
	}
}

/* The store per manifest group, when the sources are grouped: trained
 * models apart from op tests (export/groups.h). */
static void print_groups(pn_rtxn *t, int json)
{
	pn_group_stat *g;
	int n;
	char err[PN_ERRLEN];
	if (pn_group_stats(t, &g, &n, err)) {
		pn_warn("stats: groups: %s", err);
		return;
	}
	int named = 0;
	for (int i = 0; i < n; i++)
		named |= g[i].name[0] != 0;
	for (int i = 0; named && i < n; i++) {
		const pn_group_stat *x = &g[i];
		const char *name = x->name[0] ? x->name : "(no group)";
		if (json) {
			printf("%s", i ? "," : "\"groups\":[");
			printf("{\"group\":");
			pn_json_str(stdout, name);
			printf(",\"sources\":%lld,\"models\":%lld,\"subgraphs\":%lld,\"profiled\":%lld,"
			       "\"measured\":%lld,\"slow\":%lld}", (long long)x->sources, (long long)x->models,
			       (long long)x->subgraphs, (long long)x->profiled, (long long)x->measured,
			       (long long)x->slow);
			continue;
		}
		printf("group %s: %lld sources, %lld models, %lld unique subgraphs", name,
		       (long long)x->sources, (long long)x->models, (long long)x->subgraphs);
		if (x->profiled)
			printf("; %lld profiled, slow: %.1f%% of those measured", (long long)x->profiled,
			       x->measured ? 100.0 * (double)x->slow / (double)x->measured : 0.0);
		putchar('\n');
	}
	if (json)
		printf(named ? "]," : "\"groups\":[],");
	pn_group_stats_free(g, n);
}

static void print_brief(stats *s)
{
	printf("store: %lld models (%lld places, %lld failed; %lld shape variants), %lld nodes; %lld "
	       "candidates -> %lld unique subgraphs (dedup ratio %.2f, %lld occur once), %d patterns\n",
	       (long long)s->models, (long long)s->places, (long long)s->failed,
	       (long long)s->variants, (long long)s->nodes,
	       (long long)s->candidates, (long long)s->subgraphs,
	       s->subgraphs ? (double)s->candidates / (double)s->subgraphs : 0.0, (long long)s->once,
	       s->n_patterns);
	print_profile_stats(s);
	print_ort_stats(s);
	print_groups(s->t, 0);
}

static void print_text(stats *s)
{
	printf("models      %lld unique, found at %lld places (%lld failed)\n", (long long)s->models,
	       (long long)s->places, (long long)s->failed);
	printf("variants    %lld shape variants of them (extract/variants.h)\n",
	       (long long)s->variants);
	printf("nodes       %lld (with nested graphs)\n", (long long)s->nodes);
	printf("values      %lld, %lld with unknown dims\n", (long long)s->values,
	       (long long)s->unknown);
	printf("weights     %lld kept as metadata\n", (long long)s->weights);
	print_sources(s);
	print_groups(s->t, 0);
	pn_tally_print(&s->sources, "places by source:", 0, stdout);
	pn_tally_print(&s->opsets, "models by opset:", 0, stdout);
	pn_tally_print(&s->ops, "op histogram:", 0, stdout);
	pn_tally_print(&s->unknown_ops, "unknown dims by producing op:", 0, stdout);
	pn_tally_print(&s->roots, "where unknown dims start (size depends on data):", 0, stdout);
	printf("inference gaps (unknown dims that do not depend on data): %lld\n",
	       (long long)s->n_gaps);
	if (s->n_gaps)
		pn_tally_print(&s->gaps, "gaps by op:", 0, stdout);
	pn_tally_print(&s->errors, "errors by kind:", 0, stdout);
	print_subgraph_stats(s);
	print_range_stats(s);
	print_profile_stats(s);
	print_ort_stats(s);
	print_machines(s);
}

static void print_json(stats *s)
{
	printf("{\"models\":%lld,\"variants\":%lld,\"places\":%lld,\"failed\":%lld,\"nodes\":%lld,"
	       "\"values\":%lld,\"unknown_dims\":%lld,\"weights_as_metadata\":%lld,",
	       (long long)s->models, (long long)s->variants, (long long)s->places,
	       (long long)s->failed, (long long)s->nodes,
	       (long long)s->values, (long long)s->unknown, (long long)s->weights);
	pn_tally_json(&s->sources, "sources", stdout);
	putchar(',');
	print_groups(s->t, 1);
	print_sources_json(s);
	putchar(',');
	pn_tally_json(&s->opsets, "opsets", stdout);
	putchar(',');
	pn_tally_json(&s->ops, "ops", stdout);
	putchar(',');
	pn_tally_json(&s->unknown_ops, "unknown_by_op", stdout);
	putchar(',');
	pn_tally_json(&s->roots, "unknown_roots", stdout);
	printf(",\"inference_gaps\":%lld,", (long long)s->n_gaps);
	pn_tally_json(&s->gaps, "gaps_by_op", stdout);
	putchar(',');
	pn_tally_json(&s->errors, "errors", stdout);
	printf(",\"candidates\":%lld,\"subgraphs\":%lld,\"long_tail\":%lld,\"patterns\":%d,"
	       "\"dedup_ratio\":%.4f,\"strategies\":{", (long long)s->candidates,
	       (long long)s->subgraphs, (long long)s->once, s->n_patterns,
	       s->subgraphs ? (double)s->candidates / (double)s->subgraphs : 0.0);
	for (int i = 0; i < PN_N_STRATEGIES; i++)
		printf("%s\"%s\":{\"candidates\":%lld,\"unique\":%lld}", i ? "," : "",
		       pn_strategies[i].name, (long long)s->per_cand[i], (long long)s->per_unique[i]);
	printf("},\"typical_models\":%zu", s->typical_models.n);
	printf(",\"profiled\":%lld,\"profile_failed\":%lld,\"profile_unstable\":%lld,\"flags\":{",
	       (long long)s->profiled, (long long)s->prof_failed, (long long)s->prof_unstable);
	for (int f = 0; f < pn_n_flags; f++)
		printf("%s\"%s\":%lld", f ? "," : "", pn_flag_names[f], (long long)s->flags[f]);
	printf("},\"profile_denormal\":%lld,\"profile_real_inputs\":%lld,",
	       (long long)s->prof_denormal, (long long)s->prof_real_inputs);
	printf("\"ranged_subgraphs\":%lld,\"range_inputs\":%lld,\"range_inputs_real\":%lld,"
	       "\"range_inputs_abnormal\":%lld,", (long long)s->ranged, (long long)s->range_inputs,
	       (long long)s->range_real, (long long)s->range_abnormal);
	pn_tally_json(&s->prof_reasons, "profile_failures", stdout);
	printf(",\"ort\":{\"baselines\":%lld,\"timed\":%lld,\"refused\":%lld,\"disagree\":%lld,"
	       "\"compiler_regression\":%lld,\"compiler_regression_share\":%.4f,"
	       "\"ratio_median\":%.4f,", (long long)s->ort_total, (long long)s->ort_ok,
	       (long long)s->ort_refused, (long long)s->ort_disagree, (long long)s->ort_regress,
	       s->ort_ok ? (double)s->ort_regress / (double)s->ort_ok : 0.0, ratio_median(s));
	pn_tally_json(&s->ort_versions, "versions", stdout);
	putchar(',');
	pn_tally_json(&s->ort_reg_by_size, "regressions_by_size", stdout);
	putchar(',');
	pn_tally_json(&s->ort_reg_by_ops, "regressions_by_ops", stdout);
	printf("},");
	pn_headline_json(stdout, &s->headline);
	putchar(',');
	print_machines_json(s);
	printf("}\n");
}

static int run(pn_ctx *ctx)
{
	stats s;
	memset(&s, 0, sizeof(s));
	s.list_unknown = opt_unknown;
	s.brief = opt_brief;
	pn_rtxn *t = ctx->txn;
	s.t = t;
	pn_models_foreach(t, NULL, 0, on_model, &s);
	pn_model_paths_foreach(t, NULL, 0, on_place, &s);
	pn_errors_foreach(t, NULL, 0, on_error, &s);
	pn_foreach(t, PN_T_SOURCES, NULL, 0, on_source, &s);
	s.t = t;
	pn_foreach_occurrence(t, NULL, on_occurrence, &s);
	close_hash(&s);
	pn_subgraphs_foreach(t, NULL, 0, on_subgraph, &s);
	pn_profiles_foreach(t, NULL, 0, on_profile, &s);
	pn_ranges_foreach(t, NULL, 0, on_ranges, &s);
	read_machines(&s);
	if (s.n_patterns)
		qsort(s.patterns, (size_t)s.n_patterns, sizeof(pattern_stat), by_occurrences);
	pn_tally *all[] = {&s.sources, &s.opsets, &s.ops,  &s.errors,
			   &s.unknown_ops, &s.roots, &s.gaps, &s.prof_reasons, &s.ort_versions,
			   &s.ort_by_ops, &s.ort_reg_by_ops, &s.ort_by_size, &s.ort_reg_by_size};
	for (size_t i = 0; i < sizeof all / sizeof *all; i++)
		pn_tally_sort(all[i]);
	if (ctx->json)
		print_json(&s);
	else if (s.brief)
		print_brief(&s);
	else
		print_text(&s);
	for (size_t i = 0; i < sizeof all / sizeof *all; i++)
		pn_tally_free(all[i]);
	pn_tally_free(&s.prof_machines);
	free(s.ort_ratio);
	free(s.machines);
	for (size_t i = 0; i < s.n_srcs; i++)
		pn_sources_free(s.srcs[i]);
	free(s.srcs);
	for (int i = 0; i < s.n_patterns; i++)
		free(s.patterns[i].ops);
	free(s.patterns);
	if (s.pattern_index.keys)
		pn_arena_free(&s.pattern_arena);
	pn_keymap_free(&s.typical_models);
	return 0;
}

const pn_cmd_spec pn_cmd_stats = {
	.options = options,
	.summary = "summarise the store",
	.description = "counts by source, opset and op type; values with unknown dims, where they "
		       "start and whether any is an inference gap; errors by kind; candidates and "
		       "unique subgraphs per strategy, dedup ratio, most frequent patterns, long tail; "
		       "the compiler-regression share of the ORT baseline (by size and strategy, or "
		       "not measured); the machines profiles were measured on",
	.details = "Summarises the store: models by source and opset, the op histogram,\n"
		   "values whose shape is not fully known, and errors by kind.\n",
	.run = run,
};
