/*
 * ls.c - `passnet ls`: the models in the store, one line (or JSON object)
 * each, in key order.
 */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "exec/profile.h"
#include "export/left_out.h"
#include "passnet.pb-c.h"
#include "partition/partition.h"
#include "store/query.h"
#include "store/records.h"
#include "store/subgraphs.h"
#include "store/tables.h"
#include "store/warnings.h"

typedef struct ls_opts {
	const char *source, *status, *strategy, *flag;
	int json;
	int shown;
	int subgraphs;
	int variants;          /* list shape variants too */
	int has_model;
	pn_key model;
	int strategy_index;
	pn_rtxn *t;
} ls_opts;

static const char *status_name(int s)
{
	return s == PASSNET__MODEL_STATUS__MODEL_FAILED    ? "failed"
	       : s == PASSNET__MODEL_STATUS__MODEL_WARNING ? "warning"
							   : "ok";
}

static int64_t default_opset(const Passnet__Model *m)
{
	for (size_t i = 0; i < m->n_opsets; i++)
		if (!m->opsets[i]->domain || !*m->opsets[i]->domain ||
		    !strcmp(m->opsets[i]->domain, "ai.onnx"))
			return m->opsets[i]->version;
	return 0;
}

static int list_model(void *ud, pn_bytes key, pn_bytes val, const Passnet__Model *m)
{
	ls_opts *o = ud;
	uint8_t base[16];
	if (!o->variants && pn_model_variant_of(val, base))
		return 0;
	if (!m)
		return 0;
	const char *st = status_name(m->status);
	if ((!o->source || !strcmp(o->source, m->source)) && (!o->status || !strcmp(o->status, st))) {
		char hex[33];
		pn_hex(key.data, 16, hex);
		o->shown++;
		if (o->json) {
			printf("{\"key\":\"%s\",\"status\":\"%s\",\"nodes\":%u,\"opset\":%lld,\"source\":",
			       hex, st, m->nodes, (long long)default_opset(m));
			pn_json_str(stdout, m->source);
			printf(",\"path\":");
			pn_json_str(stdout, m->path);
			printf(",\"bytes\":%llu,\"unknown_dims\":%u", (unsigned long long)m->file_bytes,
			       m->unknown_dims);
			if (m->has_variant_of && m->variant_of.len == 16) {
				char base[33];
				pn_hex(m->variant_of.data, 16, base);
				printf(",\"variant_of\":\"%s\",\"variant\":%u", base, m->variant);
			}
			printf("}\n");
		} else if (m->has_variant_of && m->variant_of.len == 16) {
			char base[33];
			pn_hex(m->variant_of.data, 16, base);
			printf("%s  %-7s variant %u of %.12s  %s: %s\n", hex, st, m->variant, base,
			       m->source, m->path);
		} else {
			printf("%s  %-7s %6u nodes  opset %-2lld  %s: %s\n", hex, st, m->nodes,
			       (long long)default_opset(m), m->source, m->path);
		}
	}
	return 0;
}

static int list_failed(void *ud, pn_bytes key, pn_bytes val, const Passnet__Error *e)
{
	(void)key;
	(void)val;
	ls_opts *o = ud;
	if (!e)
		return 0;
	if (!strcmp(e->stage, "extract") && (!o->source || !strcmp(o->source, e->source))) {
		o->shown++;
		if (o->json) {
			printf("{\"status\":\"failed\",\"source\":");
			pn_json_str(stdout, e->source);
			printf(",\"path\":");
			pn_json_str(stdout, e->path);
			printf(",\"error\":");
			pn_json_str(stdout, e->message);
			printf("}\n");
		} else {
			printf("failed  %s: %s: %s\n", e->source, e->path, e->message);
		}
	}
	return 0;
}

static int has_flag(const Passnet__Profile *p, const char *flag)
{
	for (size_t i = 0; p && i < p->n_flags; i++)
		if (!strcmp(p->flags[i], flag))
			return 1;
	return 0;
}

/* The ONNX Runtime baseline of a profile (passnet baseline), when it has one. */
static void json_ort(const Passnet__OrtBaseline *b)
{
	if (!b)
		return;
	printf(",\"ort\":{\"status\":");
	pn_json_str(stdout, b->status ? b->status : "");
	if (b->message) {
		printf(",\"message\":");
		pn_json_str(stdout, b->message);
	}
	if (b->has_median_all_us)
		printf(",\"median_all_us\":%.4g,\"median_disabled_us\":%.4g", b->median_all_us,
		       b->median_disabled_us);
	if (b->has_ratio)
		printf(",\"ratio\":%.4g", b->ratio);
	if (b->has_agree)
		printf(",\"agree\":%s", b->agree ? "true" : "false");
	putchar('}');
}

static void json_profile(const Passnet__Profile *p)
{
	if (!p)
		return;
	printf(",\"profile\":{\"status\":");
	pn_json_str(stdout, p->status ? p->status : "");
	if (p->has_median_us)
		printf(",\"median_us\":%.4g,\"iqr_us\":%.4g,\"bound_fused_us\":%.4g,"
		       "\"bound_unfused_us\":%.4g", p->median_us, p->iqr_us, p->bound_fused_us,
		       p->bound_unfused_us);
	if (p->has_bound_fused_us)
		printf(",\"flops\":%.17g,\"bytes_fused\":%.17g", p->flops, p->bytes_fused);
	if (p->has_overhead_us)
		printf(",\"overhead_us\":%.17g", p->overhead_us);
	if (p->has_median_1thread_us)
		printf(",\"median_1thread_us\":%.17g", p->median_1thread_us);
	if (p->protocol) {
		printf(",\"protocol\":");
		pn_json_str(stdout, p->protocol);
		printf(",\"timing_runs\":%u,\"trials_kept\":%zu", p->timing_runs, p->n_times_us);
	}
	if (p->machine) {
		printf(",\"machine\":");
		pn_json_str(stdout, p->machine);
	}
	printf(",\"flags\":[");
	for (size_t i = 0; i < p->n_flags; i++) {
		if (i)
			putchar(',');
		pn_json_str(stdout, p->flags[i]);
	}
	putchar(']');
	if (p->reason) {
		printf(",\"reason\":");
		pn_json_str(stdout, p->reason);
	}
	json_ort(p->ort);
	putchar('}');
}

static Passnet__Profile *profile_of(pn_rtxn *t, const uint8_t *hash)
{
	Passnet__Profile *p;
	pn_profiles_get(t, hash, 16, &p);
	return p;
}

static int list_subgraph(void *ud, pn_bytes key, pn_bytes val, const Passnet__Subgraph *sg)
{
	(void)val;
	ls_opts *o = ud;
	if (key.len != 16)
		return 0;
	pn_occ_summary occ;
	pn_occurrences(o->t, key.data, o->has_model ? o->model.b : NULL, &occ);
	if ((o->has_model && !occ.in_model) ||
	    (o->strategy && !occ.per_strategy[o->strategy_index]))
		return 0;
	Passnet__Profile *prof = profile_of(o->t, key.data);
	if ((o->flag && !has_flag(prof, o->flag)) || !sg) {
		pn_profiles_free(prof);
		return 0;
	}
	char hex[33], pat[33] = "";
	pn_hex(key.data, 16, hex);
	if (sg->has_pattern && sg->pattern.len == 16)
		pn_hex(sg->pattern.data, 16, pat);
	o->shown++;
	if (o->json) {
		printf("{\"hash\":\"%s\",\"pattern\":\"%s\",\"nodes\":%u,\"inputs\":%u,\"outputs\":%u,"
		       "\"occurrences\":%lld,\"models\":%lld,\"ops\":[",
		       hex, pat, sg->nodes, sg->inputs, sg->outputs, (long long)occ.total,
		       (long long)occ.models);
		for (size_t i = 0; i < sg->n_ops; i++) {
			if (i)
				putchar(',');
			pn_json_str(stdout, sg->ops[i]);
		}
		printf("],\"strategies\":{");
		for (int i = 0, first = 1; i < PN_N_STRATEGIES; i++)
			if (occ.per_strategy[i]) {
				printf("%s\"%s\":%lld", first ? "" : ",", pn_strategies[i].name,
				       (long long)occ.per_strategy[i]);
				first = 0;
			}
		putchar('}');
		json_profile(prof);
		printf("}\n");
	} else {
		char t[32] = "-";
		if (prof && prof->has_median_us)
			snprintf(t, sizeof t, "%.2f us", prof->median_us);
		else if (prof)
			snprintf(t, sizeof t, "%s", prof->status ? prof->status : "?");
		printf("%s  %.12s  %3u nodes  %5lld occurrences  %12s  ", hex, pat, sg->nodes,
		       (long long)occ.total, t);
		for (size_t i = 0; i < sg->n_ops; i++)
			printf("%s%s", i ? " " : "", sg->ops[i]);
		printf("\n");
	}
	pn_profiles_free(prof);
	return 0;
}

static ls_opts lo;
static const char *model_prefix;
static int warnings;
static const char *warn_kind, *export_dir;
/* --kind's help names every kind of store/warning_kinds.def */
#define PN_WARNING_KIND(stage, kind, what) " " kind
static const char kind_help[] = "with --warnings: only those of this kind (the export's with --export):"
#include "store/warning_kinds.def"
	;
#undef PN_WARNING_KIND

static int list_warning(void *ud, const pn_warning *w)
{
	(void)ud;
	pn_warning_print(stdout, w, lo.json);
	return 0;
}

static const pn_option options[] = {
	PN_STRING(0, "source", "NAME", &lo.source, NULL, "only models of this source"),
	PN_STRING(0, "status", "ok|warning|failed", &lo.status, NULL,
		  "only models of this status; failed lists the places whose model could not be "
		  "stored, with the reason"),
	PN_FLAG(0, "variants", &lo.variants,
		"list the models' shape variants too (each a model of its own: key, 'variant N of' "
		"its base)"),
	PN_FLAG(0, "subgraphs", &lo.subgraphs, "list the unique subgraphs instead"),
	PN_STRING(0, "model", "KEY", &model_prefix, NULL, "with --subgraphs: those found in this model"),
	PN_STRING(0, "strategy", "S", &lo.strategy, NULL,
		  "with --subgraphs: those found by this strategy"),
	PN_STRING(0, "flag", "F", &lo.flag, NULL,
		  "with --subgraphs: those the profiler flagged F (slow, fusible, overhead-bound, "
		  "parallel-slowdown, failed, unstable)"),
	PN_FLAG(0, "warnings", &warnings,
		"list the warnings the stages counted in their summaries instead (one line each, "
		"as -v prints them): stage, kind, subject, place, message"),
	PN_STRING(0, "kind", "KIND", &warn_kind, NULL,
		  kind_help),
	PN_STRING(0, "export", "DIR", &export_dir, NULL,
		  "with --warnings: the variants the export written to DIR left out (its "
		  "left_out.tsv) instead of the store's warnings"),
	PN_OPT_TABLE_END,
};

static int check(pn_ctx *ctx)
{
	(void)ctx;
	if (lo.status && strcmp(lo.status, "ok") && strcmp(lo.status, "warning") &&
	    strcmp(lo.status, "failed"))
		return pn_die("--status must be ok, warning or failed");
	if (lo.flag && pn_flag_index(lo.flag) < 0)
		return pn_die("unknown flag '%s' (slow, fusible, overhead-bound, parallel-slowdown, "
			      "failed, unstable)", lo.flag);
	if ((warn_kind || export_dir) && !warnings)
		return pn_die("--kind and --export go with --warnings");
	if (warn_kind && !pn_warning_kind_find(warn_kind))
		return pn_die("unknown warning kind '%s' (see passnet ls --help)", warn_kind);
	if (lo.strategy) {
		const pn_strategy *sp = pn_strategy_find(lo.strategy);
		if (!sp)
			return pn_die("unknown strategy '%s'", lo.strategy);
		lo.strategy_index = (int)(sp - pn_strategies);
	}
	return 0;
}

static int run(pn_ctx *ctx)
{
	lo.json = ctx->json;
	lo.t = ctx->txn;
	char err[PN_ERRLEN];
	if (model_prefix) {
		int rc = pn_find_key(lo.t, PN_T_MODELS, model_prefix, &lo.model, err);
		if (rc)
			return pn_die("%s", rc > 0 ? "no such model" : err);
		lo.has_model = 1;
	}
	if (warnings && export_dir) {
		if (pn_left_out_foreach(export_dir, warn_kind, list_warning, NULL, err) < 0)
			return pn_die("%s", err);
	} else if (warnings) {
		if (pn_foreach_warning(lo.t, warn_kind, list_warning, NULL) < 0)
			return pn_die("cannot read the warnings of %s", ctx->db);
	} else if (lo.subgraphs)
		pn_subgraphs_foreach(lo.t, NULL, 0, list_subgraph, &lo);
	else if (lo.status && !strcmp(lo.status, "failed"))
		pn_errors_foreach(lo.t, NULL, 0, list_failed, &lo);
	else
		pn_models_foreach(lo.t, NULL, 0, list_model, &lo);
	return 0;
}

const pn_cmd_spec pn_cmd_ls = {
	.options = options,
	.summary = "list models in the store",
	.description = "list stored models (or the places that failed, with the reason); with "
		       "`--subgraphs` the unique subgraphs (of one model, strategy, or profiler "
		       "flag): hash, pattern, nodes, occurrences, median time, ops (`--json`: one "
		       "object each, with bounds, flags and a failure's reason); with `--warnings` "
		       "the warnings the stages counted in their summaries (`--kind`; an export's "
		       "left-out variants with `--export DIR`)",
	.details = "Lists stored models: key, status, nodes, ai.onnx opset, source and path\n"
		   "(the canonical place when the same bytes were found at several).\n"
		   "--subgraphs lists the unique subgraphs instead: hash, pattern, nodes,\n"
		   "occurrences, the profiled median time and the ops; with --json also the\n"
		   "bounds (with the FLOPs and fused bytes they come from), flags, the\n"
		   "machine that measured it, the reason of a failed profile and its ONNX\n"
		   "Runtime baseline (status, message, medians, ratio, agreement).\n"
		   "--warnings lists the warnings the stages counted by kind in their summary\n"
		   "lines (-v prints each as it happens), one a line: stage, kind, subject\n"
		   "(model key, subgraph hash, or TASK/VARIANT), place and message; --kind\n"
		   "keeps one kind.  The store keeps those of extract (model: a stored\n"
		   "model's warnings), exec (ranges-not-run, ranges-too-big, profile-failed)\n"
		   "and baseline (ort-refused, ort-skipped) in their records; --export DIR\n"
		   "lists instead the variants the export in DIR left out, from its\n"
		   "left_out.tsv (float16-overflow, bfloat16-overflow, pinned-inputs,\n"
		   "constant-outputs, variant-failed).\n"
		   "--json prints one object per line.\n",
	.check = check,
	.run = run,
};
