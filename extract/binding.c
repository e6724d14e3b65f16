/*
 * binding.c - choosing a model's binding (see binding.h).
 *
 * Every symbolic name (and configuring scalar) is a variable in a group: its
 * dim kind, or its scalar rule.  The base gives each variable its group's
 * base value.  When the base fails, the search varies one group at a time,
 * all its variables together (dims of one kind usually must agree: H and W
 * of one image, the sequence of ids and mask), the other groups at their
 * base, in group order (spatial, sequence, samples, other, then the
 * scalars; batch and state are never searched).  A group's candidates are
 * its rule's alternatives and, for spatial and samples, multiples 1..8 of
 * the graph's stride, tried smallest first; the first that passes wins.  The
 * whole search stops after PN_BIND_MAX_TRIES tries (the base included).
 *
 * Dims and scalars the model's own test set shows are taken as it shows
 * them and never searched; when the test set and --dim give everything,
 * inference alone validates (the test set is an input the model takes).
 *
 * A try passes when shape inference of the whole model succeeds with every
 * input static and one run on seeded inputs (seed 1, 1 thread) succeeds.
 * A model whose inputs cannot be generated (a sequence or string input),
 * or whose weights exceed 1 GiB, is validated by inference alone, and its
 * record says so.
 * When none passes, the first try inference accepted is kept (the model's
 * run is left to fail where it fails, with the warning saying so), else the
 * base; every rejected try is recorded with its first error.
 */
#include "extract/binding.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "extract/run_gate.h"
#include "model/onnx.h"
#include "runtime/session.h"
#include "runtime/feed.h"
#include "runtime/infer.h"
#include "runtime/inputs.h"

#define ERR_SHOWN 160       /* chars of a try's error kept in the record */
/* Weights above this (bytes) are not regenerated for a validation run: the
 * extract runs models in parallel, each run would hold them all. */
#define RUN_MAX_WEIGHT_BYTES ((double)(1u << 30))
#define N_GROUPS (PN_N_DIM_KINDS + 8)

typedef struct var {
	const char *name;
	int group;              /* dim kind, or PN_N_DIM_KINDS + scalar rule */
	int given;              /* index in the --dim list, or -1 */
	int from_ts;            /* value shown by the test set */
	int64_t ts_value;
	int64_t traced;         /* the sequence length a traced export baked in, or 0 */
} var;

typedef struct chooser {
	const pn_model *m;
	const pn_dimbind *given;
	pn_arena *a;
	var *vars;
	int n_vars;
	int64_t base[N_GROUPS];
	int64_t stride;
	pn_binding *out;
	int tries;
	int kept;               /* tries index of the first one inference accepted, or -1 */
	pn_dimbind kept_bind;
	int infer_only;         /* every variable from the test set or --dim */
	const char *not_run;    /* why the passing try could not be run */
} chooser;

enum { TRY_PASS = 0, TRY_INFER, TRY_RUN, TRY_NOFEED };

/* --- variables ---------------------------------------------------------------------- */

static const pn_bind_rule *rule_of(int group)
{
	return group < PN_N_DIM_KINDS ? &pn_dim_rules[group]
				      : &pn_scalar_rules[group - PN_N_DIM_KINDS].rule;
}

static int weak_kind(int group)
{
	return group == PN_DK_STATE || group == PN_DK_OTHER;
}

static int add_var(chooser *c, const char *name, int group)
{
	for (int k = 0; k < c->n_vars; k++)
		if (!strcmp(c->vars[k].name, name)) {
			if (weak_kind(c->vars[k].group) && !weak_kind(group) && group < PN_N_DIM_KINDS)
				c->vars[k].group = group;
			return 0;
		}
	var *v = pn_arena_alloc(c->a, sizeof(var) * (size_t)(c->n_vars + 1));
	if (!v)
		return -1;
	if (c->n_vars)
		memcpy(v, c->vars, sizeof(var) * (size_t)c->n_vars);
	v[c->n_vars] = (var){.name = pn_arena_strdup(c->a, name), .group = group, .given = -1};
	c->vars = v;
	c->n_vars++;
	return v[c->n_vars - 1].name ? 0 : -1;
}

static int add_role(chooser *c, const char *input, int role)
{
	const char **l = pn_arena_alloc(c->a, sizeof(char *) * (size_t)(c->out->n_roles + 1));
	if (!l)
		return -1;
	if (c->out->n_roles)
		memcpy(l, c->out->roles, sizeof(char *) * (size_t)c->out->n_roles);
	l[c->out->n_roles] = pn_arena_printf(c->a, "%s=%s", input, pn_input_role_name(role));
	c->out->roles = l;
	return l[c->out->n_roles++] ? 0 : -1;
}

static int collect_input(chooser *c, int i)
{
	const pn_graph *g = c->m->graph;
	const pn_value *val = &g->values[g->inputs[i]];
	int role = pn_input_role(g, i);
	if (role == PN_IR_NONE)
		return 0;
	if (add_role(c, val->name, role))
		return -1;
	if (role == PN_IR_CONFIG)
		return add_var(c, val->name, PN_N_DIM_KINDS + pn_scalar_rule_of(val->name));
	char buf[256];
	for (int d = 0; d < val->type.rank; d++)
		if (val->type.dims[d] < 0 &&
		    add_var(c, pn_dim_bind_name(val->name, &val->type, d, buf, sizeof buf),
			    pn_dim_kind(g, i, role, d)))
			return -1;
	return 0;
}

/* A lengths input compared with a constant arange (runtime/inputs.h): the
 * sequence axis it describes is bound to that arange's length before its
 * kind's base, the only length the traced model runs at. */
static void pin_traced_lengths(chooser *c)
{
	const pn_graph *g = c->m->graph;
	char buf[256];
	for (int i = 0; i < g->n_inputs; i++) {
		int axis, p;
		int64_t n = pn_lengths_traced(g, i);
		if (!n || (p = pn_lengths_described(g, i, NULL, &axis)) < 0)
			continue;
		const pn_value *val = &g->values[g->inputs[p]];
		if (val->type.dims[axis] >= 0)
			continue;
		const char *name = pn_dim_bind_name(val->name, &val->type, axis, buf, sizeof buf);
		for (int k = 0; k < c->n_vars; k++)
			if (!strcmp(c->vars[k].name, name) && !c->vars[k].traced)
				c->vars[k].traced = n;
	}
}

static void set_bases(chooser *c)
{
	for (int k = 0; k < N_GROUPS && k < PN_N_DIM_KINDS + pn_n_scalar_rules; k++)
		c->base[k] = rule_of(k)->base;
	/* 224 is a multiple of 32; a backbone striding by 64 needs 256 */
	int64_t s = c->stride;
	if (s > 1 && s <= 256 && c->base[PN_DK_SPATIAL] % s)
		c->base[PN_DK_SPATIAL] += s - c->base[PN_DK_SPATIAL] % s;
	for (int k = 0; k < c->n_vars; k++)
		for (int j = 0; c->given && j < c->given->n; j++)
			if (!strcmp(c->given->names[j], c->vars[k].name))
				c->vars[k].given = j;
}

/* --- bindings --------------------------------------------------------------------------- */

static int given_used(const chooser *c, int j)
{
	for (int k = 0; k < c->n_vars; k++)
		if (c->vars[k].given == j)
			return 1;
	return 0;
}

/* The --dim entries this model uses, then every variable not given; group
 * `vary` at v. */
static int make_bind(chooser *c, int vary, int64_t v, pn_dimbind *b)
{
	int ng = c->given ? c->given->n : 0;
	b->n = 0;
	b->names = pn_arena_alloc(c->a, sizeof(char *) * (size_t)(ng + c->n_vars + 1));
	b->values = pn_arena_alloc(c->a, sizeof(int64_t) * (size_t)(ng + c->n_vars + 1));
	if (!b->names || !b->values)
		return -1;
	for (int j = 0; j < ng; j++)
		if (given_used(c, j)) {
			b->names[b->n] = c->given->names[j];
			b->values[b->n++] = c->given->values[j];
		}
	for (int k = 0; k < c->n_vars; k++) {
		const var *x = &c->vars[k];
		if (x->given >= 0)
			continue;
		b->names[b->n] = x->name;
		b->values[b->n++] = x->from_ts ? x->ts_value : x->group == vary ? v
				  : x->traced ? x->traced : c->base[x->group];
	}
	return 0;
}

/* "name=v,name=v", for a try's record. */
static char *bind_text(chooser *c, const pn_dimbind *b)
{
	char buf[256];
	int off = 0;
	buf[0] = 0;
	for (int k = 0; k < b->n && off < (int)sizeof buf - 1; k++)
		off += snprintf(buf + off, sizeof buf - (size_t)off, "%s%s=%lld", k ? "," : "",
				b->names[k], (long long)b->values[k]);
	return pn_arena_strdup(c->a, buf);
}

/* --- one try ------------------------------------------------------------------------------ */

static int inputs_static(const pn_graph *g, const pn_infer_result *r, char *err)
{
	for (int i = 0; i < g->n_inputs; i++)
		if (r->v[g->inputs[i]].type.kind == PN_KIND_TENSOR &&
		    !pn_type_is_static(&r->v[g->inputs[i]].type))
			return pn_fail(err, "input '%s' has no static shape", g->values[g->inputs[i]].name);
	return 0;
}

static int run_once(const pn_model *m, const pn_dimbind *b, char *err)
{
	const pn_graph *g = m->graph;
	pn_feed f;
	if (pn_feed_prepare(m, NULL, b, 1, &f, err))
		return TRY_NOFEED;
	pn_exec_opts eo = {.seed = 1, .threads = 1};
	int rc = pn_run_once(g, &eo, f.v, f.n, err);
	pn_feed_free(&f);
	return rc ? TRY_RUN : TRY_PASS;
}

static double weight_bytes(const pn_graph *g)
{
	double n = 0;
	for (int i = 0; i < g->n_inits; i++) {
		const pn_type *t = &g->values[g->inits[i]].type;
		n += (double)pn_numel(t->rank, t->dims) * (double)pn_dtype_size(t->dtype);
	}
	return n;
}

/* What follows inference r of m under b: every input static, then (unless
 * infer_only) one run. */
static int after_inference(const pn_model *m, const pn_dimbind *b, const pn_infer_result *r,
			   int infer_only, char *err)
{
	if (inputs_static(m->graph, r, err))
		return TRY_INFER;
	if (infer_only)
		return TRY_PASS;
	if (weight_bytes(m->graph) > RUN_MAX_WEIGHT_BYTES)
		return pn_fail(err, "weights over 1 GiB are not regenerated for a run"), TRY_NOFEED;
	size_t bytes = pn_infer_peak_bytes(m->graph, r);
	if (pn_run_too_big(bytes, err))
		return TRY_NOFEED;    /* inference has the last word */
	size_t counted = pn_run_gate_enter(bytes);
	int rc = run_once(m, b, err);
	pn_run_gate_leave(counted);
	return rc;
}

static int validate(const pn_model *m, const pn_dimbind *b, int infer_only, char *err)
{
	pn_infer_result r;
	if (pn_infer_graph(m->graph, b, NULL, &r, err))
		return TRY_INFER;
	int rc = after_inference(m, b, &r, infer_only, err);
	pn_infer_result_free(&r);
	return rc;
}

static int note_try(chooser *c, const pn_dimbind *b, const char *why)
{
	pn_binding *o = c->out;
	const char **l = pn_arena_alloc(c->a, sizeof(char *) * (size_t)(o->n_tries + 1));
	if (!l)
		return -1;
	if (o->n_tries)
		memcpy(l, o->tries, sizeof(char *) * (size_t)o->n_tries);
	l[o->n_tries] = pn_arena_printf(c->a, "%s: %.*s", bind_text(c, b), ERR_SHOWN, why);
	o->tries = l;
	return l[o->n_tries++] ? 0 : -1;
}

/* 0: passed, 1: rejected (recorded), -1: out of memory. */
static int try_bind(chooser *c, const pn_dimbind *b)
{
	char why[PN_ERRLEN] = "";
	c->tries++;
	int rc = validate(c->m, b, c->infer_only, why);
	if (rc == TRY_NOFEED)   /* a sequence or string input: inference has the last word */
		c->not_run = pn_arena_printf(c->a, "%.*s", ERR_SHOWN, why);
	if (rc == TRY_PASS || rc == TRY_NOFEED)
		return 0;
	if (rc == TRY_RUN && c->kept < 0) {
		c->kept = c->tries;
		c->kept_bind = *b;
	}
	return note_try(c, b, why) ? -1 : 1;
}

/* --- the search ------------------------------------------------------------------------------ */

static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return a < b ? -1 : a > b;
}

/* Candidates of a group, ascending, without its base; returns the count. */
static int candidates(const chooser *c, int group, int64_t *out)
{
	const pn_bind_rule *r = rule_of(group);
	int n = 0;
	for (int k = 0; k < r->n_alt; k++)
		out[n++] = r->alt[k];
	if ((group == PN_DK_SPATIAL || group == PN_DK_SAMPLES) && c->stride > 1)
		for (int k = 1; k <= 8; k++)
			out[n++] = c->stride * k;
	qsort(out, (size_t)n, sizeof(int64_t), cmp_i64);
	int m = 0;
	for (int k = 0; k < n; k++)
		if (out[k] != c->base[group] && (m == 0 || out[k] != out[m - 1]))
			out[m++] = out[k];
	return m;
}

static int group_free(const chooser *c, int group)
{
	for (int k = 0; k < c->n_vars; k++)
		if (c->vars[k].group == group && c->vars[k].given < 0 && !c->vars[k].from_ts)
			return 1;
	return 0;
}

/* 0: found (in c->out->bind), 1: nothing passed, -1: out of memory. */
static int search(chooser *c)
{
	for (int group = 1; group < PN_N_DIM_KINDS + pn_n_scalar_rules; group++) {
		if (group == PN_DK_STATE || !group_free(c, group))
			continue;
		int64_t cand[PN_RULE_MAX_ALT + 8];
		int n = candidates(c, group, cand);
		for (int k = 0; k < n && c->tries < PN_BIND_MAX_TRIES; k++) {
			pn_dimbind b;
			if (make_bind(c, group, cand[k], &b))
				return -1;
			int rc = try_bind(c, &b);
			if (rc <= 0) {
				c->out->bind = b;
				return rc;
			}
		}
	}
	return 1;
}

static int n_given_vars(const chooser *c)
{
	int n = 0;
	for (int k = 0; k < c->n_vars; k++)
		n += c->vars[k].given >= 0;
	return n;
}

static int n_ts_vars(const chooser *c)
{
	int n = 0;
	for (int k = 0; k < c->n_vars; k++)
		n += c->vars[k].given < 0 && c->vars[k].from_ts;
	return n;
}

static const char *first_how(const chooser *c)
{
	int ng = n_given_vars(c), nt = n_ts_vars(c);
	if (nt + ng == c->n_vars && nt)
		return ng ? "test set, with --dim" : "test set";
	if (ng == c->n_vars)
		return "given by --dim";
	if (nt)
		return ng ? "rule, with test set and --dim" : "rule, with test set";
	return ng ? "rule, with --dim" : "rule";
}

static int conclude(chooser *c, int found)
{
	pn_binding *o = c->out;
	if (found && c->tries == 1)
		o->how = first_how(c);
	else if (found)
		o->how = pn_arena_printf(c->a, "searched: passed at try %d (at most %d)", c->tries,
					 PN_BIND_MAX_TRIES);
	else if (n_given_vars(c) + n_ts_vars(c) == c->n_vars)
		o->how = pn_arena_printf(c->a, "%s, which fails", first_how(c));
	else if (c->kept > 0)
		o->how = pn_arena_printf(c->a, "none of %d tries ran; kept try %d, which inference accepts",
					 c->tries, c->kept);
	else
		o->how = pn_arena_printf(c->a, "none of %d tries passes inference; kept the base", c->tries);
	for (int k = 0; found && o->how && k < c->n_vars; k++)
		if (c->vars[k].traced && c->vars[k].given < 0 && !c->vars[k].from_ts)
			o->how = pn_arena_printf(c->a, "%s; %s=%lld as the export traced it", o->how,
						 c->vars[k].name, (long long)c->vars[k].traced);
	if (found && c->not_run && o->how)
		o->how = pn_arena_printf(c->a, "%s; inference only, not run: %s", o->how, c->not_run);
	if (!found)
		o->warning = pn_arena_printf(c->a, "binding: %s (first: %s)", o->how, o->tries[0]);
	return o->how && (found || o->warning) ? 0 : -1;
}

/* The kind of each entry of the chosen binding, for the shape variants:
 * only dims the rule chose or the test set showed vary, never a --dim value,
 * a configuring scalar or a length a traced export baked in. */
static int set_kinds(chooser *c)
{
	pn_binding *o = c->out;
	o->kinds = pn_arena_alloc(c->a, sizeof(int) * (size_t)(o->bind.n + 1));
	if (!o->kinds)
		return -1;
	for (int i = 0; i < o->bind.n; i++) {
		o->kinds[i] = -1;
		for (int k = 0; k < c->n_vars; k++)
			if (!strcmp(c->vars[k].name, o->bind.names[i]) && c->vars[k].given < 0 &&
			    !c->vars[k].traced && c->vars[k].group < PN_N_DIM_KINDS)
				o->kinds[i] = c->vars[k].group;
	}
	return 0;
}

/* --- the test set ------------------------------------------------------------------------------ */

static void from_testset(chooser *c, int i, const pn_tensor *t)
{
	const pn_graph *g = c->m->graph;
	const pn_value *val = &g->values[g->inputs[i]];
	char buf[256];
	for (int k = 0; k < c->n_vars; k++) {
		var *x = &c->vars[k];
		if (x->given >= 0 || x->from_ts)
			continue;
		if (x->group >= PN_N_DIM_KINDS && !strcmp(x->name, val->name) && t->numel == 1 &&
		    !pn_dtype_is_float(t->dtype)) {
			x->from_ts = 1;
			x->ts_value = (int64_t)pn_tensor_get_f64(t, 0);
		}
		for (int d = 0; x->group < PN_N_DIM_KINDS && d < val->type.rank && !x->from_ts; d++)
			if (val->type.dims[d] < 0 &&
			    !strcmp(x->name, pn_dim_bind_name(val->name, &val->type, d, buf, sizeof buf))) {
				x->from_ts = 1;
				x->ts_value = t->dims[d];
			}
	}
}

/* Values the model's own test set shows; a file that does not decode, or
 * whose ranks differ from the graph's, shows nothing. */
static void read_testset(chooser *c, const pn_bind_testset *ts)
{
	const pn_graph *g = c->m->graph;
	for (int i = 0; ts && i < ts->n && i < g->n_inputs; i++) {
		const pn_value *val = &g->values[g->inputs[i]];
		pn_tensor *t = NULL;
		char why[PN_ERRLEN];
		if (val->type.kind != PN_KIND_TENSOR ||
		    pn_tensor_read_pb(ts->bytes[i], ts->len[i], PN_KIND_TENSOR, &t, NULL, why))
			continue;
		if (t->rank == val->type.rank)
			from_testset(c, i, t);
		pn_tensor_free(t);
	}
	int all = 1;
	for (int k = 0; k < c->n_vars; k++)
		all &= c->vars[k].given >= 0 || c->vars[k].from_ts;
	c->infer_only = all && n_ts_vars(c) > 0;
}

int pn_binding_choose(const pn_model *m, const pn_dimbind *given, const pn_bind_testset *ts,
		      pn_arena *a, pn_binding *out, char *err)
{
	memset(out, 0, sizeof *out);
	chooser c = {.m = m, .given = given, .a = a, .out = out, .kept = -1};
	const pn_graph *g = m->graph;
	for (int i = 0; i < g->n_inputs; i++)
		if (collect_input(&c, i))
			return pn_fail(err, "out of memory");
	if (!c.n_vars)
		return 0;
	c.stride = pn_graph_stride(g);
	set_bases(&c);
	pin_traced_lengths(&c);
	read_testset(&c, ts);
	pn_dimbind base;
	if (make_bind(&c, -1, 0, &base))
		return pn_fail(err, "out of memory");
	out->bind = base;
	int rc = try_bind(&c, &base);
	if (rc > 0 && n_given_vars(&c) + n_ts_vars(&c) < c.n_vars)
		rc = search(&c);
	if (rc < 0)
		return pn_fail(err, "out of memory");
	if (rc > 0)
		out->bind = c.kept > 0 ? c.kept_bind : base;
	if (set_kinds(&c))
		return pn_fail(err, "out of memory");
	return conclude(&c, rc == 0) ? pn_fail(err, "out of memory") : 0;
}

int pn_binding_run(const pn_model *m, const pn_dimbind *b, const pn_infer_result *r, char *err)
{
	int rc = after_inference(m, b, r, 0, err);
	return rc == TRY_PASS ? 0 : rc == TRY_NOFEED ? 2 : 1;
}
