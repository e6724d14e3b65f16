/*
 * show.c - `passnet show KEY`: one model, or one subgraph with its profile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "canon/decode.h"
#include "exec/calibrate.h"
#include "extract/ingest.h"
#include "store/structures.h"
#include "store/query.h"
#include "store/records.h"
#include "store/subgraphs.h"
#include "store/tables.h"

typedef struct places {
	pn_key key;
	int n;
} places;

static int print_place(void *ud, pn_bytes key, pn_bytes val, const Passnet__ModelPath *mp)
{
	(void)key;
	(void)val;
	places *p = ud;
	if (!mp)
		return 0;
	if (mp->has_model && mp->model.len == 16 && !memcmp(mp->model.data, p->key.b, 16)) {
		printf("  found at   %s: %s\n", mp->source, mp->path);
		p->n++;
	}
	return 0;
}

typedef struct op_count {
	const char *op;
	int n;
} op_count;

static int cmp_count(const void *a, const void *b)
{
	const op_count *x = a, *y = b;
	return x->n != y->n ? y->n - x->n : strcmp(x->op, y->op);
}

static void count_ops(const pn_graph *g, op_count *c, int *nc)
{
	for (int i = 0; i < g->n_nodes; i++) {
		const pn_node *n = &g->nodes[i];
		int k = 0;
		while (k < *nc && strcmp(c[k].op, n->op_type))
			k++;
		if (k == *nc)
			c[(*nc)++] = (op_count){n->op_type, 0};
		c[k].n++;
		for (int a = 0; a < n->n_attr; a++) {
			if (n->attrs[a].g)
				count_ops(n->attrs[a].g, c, nc);
			for (int j = 0; n->attrs[a].type == PN_ATTR_GRAPHS && j < n->attrs[a].n; j++)
				count_ops(n->attrs[a].graphs[j], c, nc);
		}
	}
}

static void print_values(const char *what, const pn_graph *g, const int32_t *ids, int n)
{
	for (int i = 0; i < n; i++) {
		char buf[256];
		const pn_value *v = &g->values[ids[i]];
		printf("  %-10s %s  %s\n", i ? "" : what, v->name, pn_type_desc(&v->type, buf, sizeof buf));
	}
}

/* The binding every stage infers with, how it was chosen (extract/binding.h). */
static void print_binding(const Passnet__Model *rec)
{
	if (!rec->n_bound_dims && !rec->binding_how)
		return;
	printf("binding   ");
	for (size_t i = 0; i < rec->n_bound_dims; i++)
		printf(" %s", rec->bound_dims[i]);
	printf("  (%s)\n", rec->binding_how ? rec->binding_how : "given by --dim");
	for (size_t i = 0; i < rec->n_input_roles; i++)
		printf("  role     %s\n", rec->input_roles[i]);
	for (size_t i = 0; i < rec->n_binding_tries; i++)
		printf("  tried    %s\n", rec->binding_tries[i]);
}

/* A variant's place among its base's, or the base's list (extract/variants.h). */
static void print_variants(const Passnet__Model *rec)
{
	if (rec->has_variant_of && rec->variant_of.len == 16) {
		char hex[33];
		pn_hex(rec->variant_of.data, 16, hex);
		printf("variant    %u of model %s:", rec->variant, hex);
		for (size_t i = 0; i < rec->n_variant_dims; i++)
			printf(" %s", rec->variant_dims[i]);
		if (rec->has_variant_batch)
			printf(" batch=%llu (generalized)", (unsigned long long)rec->variant_batch);
		printf("  (%s)\n", rec->variant_how ? rec->variant_how : "");
		return;
	}
	for (size_t i = 0; i < rec->n_variant_notes; i++)
		printf("%s %s\n", i ? "          " : "variants  ", rec->variant_notes[i]);
}

static void print_model(const pn_key *key, const Passnet__Model *rec, const pn_model *m)
{
	char hex[33];
	pn_key_hex(key, hex);
	printf("model      %s\n", hex);
	printf("source     %s\npath       %s\n", rec->source, rec->path);
	printf("size       %llu bytes\nir_version %lld\nproducer   %s\n",
	       (unsigned long long)rec->file_bytes, (long long)rec->ir_version,
	       rec->producer ? rec->producer : "");
	for (size_t i = 0; i < rec->n_opsets; i++)
		printf("opset      %s %lld\n",
		       rec->opsets[i]->domain && *rec->opsets[i]->domain ? rec->opsets[i]->domain : "ai.onnx",
		       (long long)rec->opsets[i]->version);
	printf("status     %s\n", rec->status == PASSNET__MODEL_STATUS__MODEL_WARNING ? "warning" : "ok");
	for (size_t i = 0; i < rec->n_warnings; i++)
		printf("warning    %s\n", rec->warnings[i]);
	print_binding(rec);
	print_variants(rec);
	printf("nodes      %u (with nested graphs)\nvalues     %u, %u with unknown dims\n", rec->nodes,
	       rec->values, rec->unknown_dims);
	printf("weights    %zu kept as metadata\ntest sets  %zu\n", rec->n_weights, rec->n_testsets);
	print_values("inputs", m->graph, m->graph->inputs, m->graph->n_inputs);
	print_values("outputs", m->graph, m->graph->outputs, m->graph->n_outputs);
	op_count *c = calloc((size_t)rec->nodes + 1, sizeof(*c));
	int nc = 0;
	count_ops(m->graph, c, &nc);
	qsort(c, (size_t)nc, sizeof(*c), cmp_count);
	printf("ops       ");
	for (int i = 0; i < nc; i++)
		printf(" %s:%d", c[i].op, c[i].n);
	printf("\n");
	free(c);
}

/* --- subgraphs ------------------------------------------------------------------ */

static void print_attr(const pn_attr *a)
{
	printf(" %s=", a->name);
	switch (a->type) {
	case PN_ATTR_FLOAT: printf("%g", a->f); break;
	case PN_ATTR_INT: printf("%lld", (long long)a->i); break;
	case PN_ATTR_STRING: printf("'%s'", a->s); break;
	case PN_ATTR_INTS:
		printf("[");
		for (int i = 0; i < a->n; i++)
			printf(i ? ",%lld" : "%lld", (long long)a->ints[i]);
		printf("]");
		break;
	case PN_ATTR_FLOATS:
		printf("[");
		for (int i = 0; i < a->n; i++)
			printf(i ? ",%g" : "%g", a->floats[i]);
		printf("]");
		break;
	case PN_ATTR_GRAPH: printf("<graph of %d nodes>", a->g->n_nodes); break;
	default: printf("<%d>", a->type); break;
	}
}

static void print_value_line(const char *what, const pn_value *v)
{
	char buf[160];
	printf("  %-9s %s  %s%s\n", what, v->name, pn_type_desc(&v->type, buf, sizeof buf),
	       v->meta ? "  (weight, regenerated)" : v->data ? "  (constant)" : "");
}

static void print_subgraph_nodes(const pn_graph *g)
{
	for (int i = 0; i < g->n_inputs; i++)
		print_value_line("input", &g->values[g->inputs[i]]);
	for (int i = 0; i < g->n_inits; i++)
		print_value_line("constant", &g->values[g->inits[i]]);
	for (int t = 0; t < g->n_nodes; t++) {
		const pn_node *n = &g->nodes[g->topo[t]];
		printf("  %-4s ", n->name);
		for (int k = 0; k < n->n_out; k++)
			printf("%s%s", k ? ", " : "", n->out[k] >= 0 ? g->values[n->out[k]].name : "_");
		printf(" = %s(", n->op_type);
		for (int k = 0; k < n->n_in; k++)
			printf("%s%s", k ? ", " : "", n->in[k] >= 0 ? g->values[n->in[k]].name : "_");
		printf(")");
		for (int a = 0; a < n->n_attr; a++)
			print_attr(&n->attrs[a]);
		char buf[160];
		if (n->n_out && n->out[0] >= 0)
			printf("  -> %s", pn_type_desc(&g->values[n->out[0]].type, buf, sizeof buf));
		printf("\n");
	}
	for (int i = 0; i < g->n_outputs; i++)
		print_value_line("output", &g->values[g->outputs[i]]);
}

/* A subgraph's places, one per (occurrence, model of its structure),
 * printed in model order. */
typedef struct place_line {
	uint8_t model[16];
	char *strategy, *binding;
	uint32_t candidate;
} place_line;

typedef struct place_lines {
	place_line *l;
	size_t n, cap;
} place_lines;

static int collect_place(void *ud, const uint8_t hash[16], const Passnet__Occurrence *o,
			 const uint8_t model[16])
{
	(void)hash;
	place_lines *p = ud;
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 16;
		place_line *l = realloc(p->l, sizeof(*l) * cap);
		if (!l)
			return 0;
		p->l = l;
		p->cap = cap;
	}
	place_line *l = &p->l[p->n++];
	memcpy(l->model, model, 16);
	l->strategy = strdup(o->strategy ? o->strategy : "");
	l->binding = o->binding ? strdup(o->binding) : NULL;
	l->candidate = o->candidate;
	return 0;
}

static int place_cmp(const void *a, const void *b)
{
	const place_line *x = a, *y = b;
	int c = memcmp(x->model, y->model, 16);
	if (!c)
		c = strcmp(x->strategy ? x->strategy : "", y->strategy ? y->strategy : "");
	return c ? c : (x->candidate > y->candidate) - (x->candidate < y->candidate);
}

static void print_occurrences(pn_rtxn *t, const pn_key *key)
{
	place_lines p = {0};
	pn_foreach_occurrence(t, key->b, collect_place, &p);
	qsort(p.l, p.n, sizeof(*p.l), place_cmp);
	for (size_t i = 0; i < p.n; i++) {
		place_line *l = &p.l[i];
		char hex[33];
		pn_hex(l->model, 16, hex);
		Passnet__Model *m;
		pn_models_get(t, l->model, 16, &m);
		printf("  found in  %.12s %s: %s  (%s, candidate %u)%s%s\n", hex, m ? m->source : "?",
		       m ? m->path : "?", l->strategy ? l->strategy : "", l->candidate,
		       l->binding ? " at " : "", l->binding ? l->binding : "");
		pn_models_free(m);
		free(l->strategy);
		free(l->binding);
	}
	free(p.l);
}

/* What its inputs were in the models it comes from (exec/ranges.h): shape
 * in one run, range of values over all. */
static void print_ranges(pn_rtxn *t, const pn_key *key, const pn_graph *g)
{
	int n = 0;
	pn_range *r = pn_subgraph_ranges_in(t, key->b, &n);
	for (int i = 0; r && n == g->n_inputs && i < n; i++) {
		printf("  in models %s  [", g->values[g->inputs[i]].name);
		for (int d = 0; d < r[i].rank; d++)
			printf(d ? ",%lld" : "%lld", (long long)r[i].dims[d]);
		printf(r[i].rank < 0 ? "?]" : "]");
		if (r[i].known)
			printf(", values in [%.6g, %.6g]", r[i].lo, r[i].hi);
		printf("\n");
	}
	free(r);
}

/* The machine a profile was measured on, with the roofline its bounds were
 * taken against (its figures at the profile's thread count); a profile of
 * an older passnet names none and is read as the current machine's. */
static void print_profile_machine(pn_rtxn *t, const Passnet__Profile *p)
{
	pn_calibration c;
	char err[PN_ERRLEN];
	int rc = p->machine ? pn_machine_get(t, p->machine, &c, err) : pn_calibration_get(t, &c, err);
	const char *how = p->machine ? "" : " (not recorded: an older passnet; the current machine)";
	if (rc > 0) {
		printf("  machine    %s, not in this store%s\n", p->machine ? p->machine : "none",
		       how);
		return;
	}
	if (rc < 0) {
		printf("  machine    %s: %s\n", p->machine ? p->machine : "current", err);
		return;
	}
	int th = (int)p->threads < c.max_threads ? (int)p->threads : c.max_threads;
	if (th < 1)
		th = 1;
	printf("  machine    %s %s, %s%s; roofline at %d thread%s: %.1f GFLOP/s, %.2f GB/s\n",
	       c.machine[0] ? c.machine : "(no id)", c.host[0] ? c.host : "(host not recorded)",
	       c.cpu_model[0] ? c.cpu_model : "?", how, th, th == 1 ? "" : "s", c.peak_gflops[th],
	       c.bandwidth_gbs[th]);
}

/* The subgraph's profile, if this store has one: times, bounds, flags with
 * the thresholds that were applied, or why it could not be measured. */
/* The ONNX Runtime baseline (passnet baseline), when there is one. */
static void print_ort_baseline(const Passnet__OrtBaseline *b)
{
	printf("  ort        ONNX Runtime %s, %s", b->ort_version ? b->ort_version : "?",
	       b->status ? b->status : "?");
	if (b->message && b->message[0])
		printf(": %s", b->message);
	printf("\n");
	if (b->has_median_all_us)
		printf("  ort time   level ALL median %.3f us (IQR %.3f), disabled median %.3f us "
		       "(IQR %.3f), %u thread, %u repeats\n", b->median_all_us, b->iqr_all_us,
		       b->median_disabled_us, b->iqr_disabled_us, b->threads, b->repeats);
	if (b->has_ratio)
		printf("  ort ratio  ORT ALL / passnet (1 thread) %.3f\n", b->ratio);
	if (b->has_median_all_n_us)
		printf("  ort %u thr level ALL median %.3f us, disabled median %.3f us\n", b->threads_n,
		       b->median_all_n_us, b->median_disabled_n_us);
	if (b->has_nodes_all || b->has_nodes_disabled)
		printf("  ort nodes  %u at level ALL, %u disabled\n", b->nodes_all, b->nodes_disabled);
	if (b->ops_all)
		printf("  ort ALL    %s\n", b->ops_all);
	if (b->ops_disabled)
		printf("  ort eager  %s\n", b->ops_disabled);
	if (b->has_agree)
		printf("  ort check  %s (max abs %.3g, max rel %.3g; rtol %g, atol %g)%s%s\n",
		       b->agree && b->agree_disabled ? "agrees with passnet" : "DISAGREES with passnet",
		       b->max_abs, b->max_rel, b->rtol, b->atol, b->diff ? ": " : "",
		       b->diff ? b->diff : "");
}

/* What the subgraph ran on: where its input ranges came from, and whether
 * any input or output held subnormal values (a slow path on many CPUs, so
 * the time may not be that of values of a normal scale). */
static void print_profile_values(const Passnet__Profile *p)
{
	if (p->has_inputs_from_real_run || p->has_ranged_inputs)
		printf("  inputs     %u drawn in recorded ranges, %s\n", p->ranged_inputs,
		       p->inputs_from_real_run ? "from the model's run on its real weights"
					       : "not from a run on real weights");
	if (p->has_denormal_inputs || p->has_denormal_outputs)
		printf("  denormals  %s: %llu in the inputs, %llu in the outputs\n",
		       p->denormal_inputs || p->denormal_outputs ? "yes" : "no",
		       (unsigned long long)p->denormal_inputs,
		       (unsigned long long)p->denormal_outputs);
}

static void print_profile(pn_rtxn *t, const pn_key *key)
{
	Passnet__Profile *p;
	int rc = pn_profiles_get(t, key->b, 16, &p);
	if (rc == PN_REC_MALFORMED)
		return;   /* stored but unreadable: nothing to show (doctor reports it) */
	if (rc) {
		printf("profile    none (passnet exec measures it)\n");
		return;
	}
	printf("profile    %s, executor build %s, %u thread%s, %u warm-up, %u trials, seed %llu\n",
	       p->status ? p->status : "?", p->executor_build ? p->executor_build : "?", p->threads,
	       p->threads == 1 ? "" : "s", p->warmups, p->trials, (unsigned long long)p->seed);
	print_profile_machine(t, p);
	if (p->reason)
		printf("  failed     %s\n", p->reason);
	if (p->has_median_us)
		printf("  time       median %.3f us, IQR %.3f us\n", p->median_us, p->iqr_us);
	if (p->has_median_1thread_us)
		printf("  1 thread   median %.3f us\n", p->median_1thread_us);
	if (p->has_bound_fused_us)
		printf("  bound      fused %.3f us, unfused %.3f us (%.0f FLOP, %.0f / %.0f bytes)\n",
		       p->bound_fused_us, p->bound_unfused_us, p->flops, p->bytes_fused, p->bytes_unfused);
	if (p->has_assumed_dims)
		printf("  assumed    %u input dim%s unknown in the model, run at %u\n", p->assumed_dims,
		       p->assumed_dims == 1 ? "" : "s", p->assumed_size);
	print_profile_values(p);
	printf("  flags     ");
	for (size_t i = 0; i < p->n_flags; i++)
		printf(" %s", p->flags[i]);
	printf("%s\n", p->n_flags ? "" : " none");
	for (size_t i = 0; i < p->n_thresholds; i++)
		printf("  threshold  %s\n", p->thresholds[i]);
	if (p->ort)
		print_ort_baseline(p->ort);
	pn_profiles_free(p);
}

static int show_subgraph(pn_rtxn *t, const pn_key *key, char *err)
{
	Passnet__Subgraph *sg;
	int got = pn_subgraphs_get(t, key->b, 16, &sg);
	if (got && got != PN_REC_MALFORMED)
		return pn_fail(err, "subgraph vanished while reading");
	if (!sg || !sg->has_canonical) {
		pn_subgraphs_free(sg);
		return pn_fail(err, "subgraph record does not decode");
	}
	pn_model *m = NULL;
	int rc = pn_subgraph_model(sg->canonical.data, sg->canonical.len, &m, err);
	if (!rc) {
		char hex[33], pat[33] = "";
		pn_key_hex(key, hex);
		if (sg->pattern.len == 16)
			pn_hex(sg->pattern.data, 16, pat);
		printf("subgraph   %s\npattern    %s\nnodes      %u\ncanonical  %zu bytes\n", hex, pat,
		       sg->nodes, sg->canonical.len);
		print_subgraph_nodes(m->graph);
		print_occurrences(t, key);
		print_ranges(t, key, m->graph);
		print_profile(t, key);
	}
	pn_model_free(m);
	pn_subgraphs_free(sg);
	return rc;
}

/* --- sources -------------------------------------------------------------------- */

static int print_source_error(void *ud, pn_bytes key, pn_bytes val, const Passnet__Error *e)
{
	(void)key;
	(void)val;
	const char *name = ud;
	if (!e)
		return 0;
	if (e->source && !strcmp(e->source, name))
		printf("error      %s: %s%s%s\n", e->stage, e->path && *e->path ? e->path : "",
		       e->path && *e->path ? ": " : "", e->message);
	return 0;
}

/* 0 shown, 1 no source of that name. */
static int show_source(pn_rtxn *t, const char *name)
{
	Passnet__Source *s;
	if (pn_sources_get(t, name, strlen(name), &s) != 0)
		return 1;
	printf("source     %s\nkind       %s\nlocation   %s\n", s->name, s->kind, s->location);
	printf("checksum   %s\n", s->checksum ? s->checksum : s->sha256 ? s->sha256 : "-");
	if (s->origin)
		printf("origin     %s\n", *s->origin ? s->origin : "(not known: the cache does not say)");
	printf("licence    %s\n", s->licence ? s->licence : "");
	if (s->note && *s->note)
		printf("note       %s\n", s->note);
	printf("models     %llu stored, %llu failed, of %llu model files (%s)\n",
	       (unsigned long long)s->models_ok, (unsigned long long)s->models_failed,
	       (unsigned long long)s->files_seen,
	       s->complete ? "the last scan was complete" : "the last scan did not finish");
	pn_sources_free(s);
	pn_errors_foreach(t, NULL, 0, print_source_error, (void *)name);
	return 0;
}

static int run(pn_ctx *ctx)
{
	pn_rtxn *t = ctx->txn;
	const char *arg = ctx->argv[0];
	char err[PN_ERRLEN];
	if (show_source(t, arg) == 0)
		return 0;
	pn_key key;
	size_t len = strlen(arg);
	int rc = strspn(arg, "0123456789abcdefABCDEF") == len
		 ? pn_find_key(t, PN_T_MODELS, arg, &key, err)
		 : pn_fail(err, "no source named '%s', and it is not a key (4 to 32 hex digits)", arg);
	if (rc == 1) {
		rc = pn_find_key(t, PN_T_SUBGRAPHS, arg, &key, err);
		if (rc == 0) {
			rc = show_subgraph(t, &key, err);
			return rc ? pn_die("show: %s", err) : 0;
		}
		if (rc == 1)
			rc = pn_fail(err, "no source, model or subgraph %s", arg);
	}
	void *whole = NULL;
	size_t whole_len = 0;
	pn_model *m = NULL;
	Passnet__Model *rec = NULL;
	if (!rc && pn_model_record_copy(t, key.b, &whole, &whole_len) != 0)
		rc = pn_fail(err, "model (or the base of this variant) vanished while reading");
	if (!rc)
		rc = pn_model_from_record(whole, whole_len, &m, &rec, err);
	if (!rc) {
		print_model(&key, rec, m);
		places p = {.key = key};
		pn_model_paths_foreach(t, NULL, 0, print_place, &p);
	}
	pn_model_free(m);
	free(whole);
	return rc ? pn_die("show: %s", err) : 0;
}

const pn_cmd_spec pn_cmd_show = {
	.args = "KEY | SOURCE",
	.min_args = 1,
	.max_args = 1,
	.summary = "show one model, subgraph or source",
	.description = "a source (kind, location, checksum, licence, where it was fetched from, "
		       "what its last scan found, its errors), a model (source, every place it was found, opsets, inputs/outputs with "
		       "shapes, op histogram, warnings) or a subgraph (pattern, nodes with edges and "
		       "shapes, every occurrence, its profile: times, bounds, assumed dims, flags "
		       "with their thresholds or why it failed)",
	.details = "Shows a stored model: source, path and every other place it was found,\n"
		   "opsets, inputs and outputs with shapes, its op histogram and warnings.\n"
		   "Or a subgraph: its pattern, its nodes with their edges and shapes, and\n"
		   "every model and strategy it was found by, and its profile when `passnet\n"
		   "exec` has measured it.\n"
		   "KEY is a model key or a subgraph hash, or a unique prefix of at least 4\n"
		   "hex digits of one.  SOURCE is a source's name (an exact name wins over a\n"
		   "key prefix): its kind, location, checksum, licence, where it was fetched\n"
		   "from, what its last scan found, and its errors.\n",
	.run = run,
};
