/*
 * variants.c - choosing and validating a model's shape variants (see
 * variants.h).
 */
#include "extract/variants.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "extract/check_form.h"
#include "extract/generalize.h"
#include "extract/variant_memo.h"
#include "runtime/cost.h"
#include "runtime/infer.h"

typedef struct vctx {
	pn_model *m;
	const pn_binding *b;
	int max;
	pn_arena *a;
	pn_variants *out;
	int n_tried;
	const char **tried;   /* binding texts tried so far */
} vctx;

/* What inference says a binding costs. */
typedef struct size_of {
	double flops;
	int64_t max_elems;
	const char *biggest;   /* the value holding max_elems */
} size_of;

static int add_note(vctx *c, const char *fmt, ...)
{
	char buf[PN_ERRLEN];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	pn_variants *o = c->out;
	const char **l = pn_arena_alloc(c->a, sizeof(char *) * (size_t)(o->n_notes + 1));
	if (!l)
		return -1;
	if (o->n_notes)
		memcpy(l, o->notes, sizeof(char *) * (size_t)o->n_notes);
	l[o->n_notes] = pn_arena_strdup(c->a, buf);
	o->notes = l;
	return l[o->n_notes++] ? 0 : -1;
}

/* --- size ------------------------------------------------------------------------------ */

static int64_t type_elems(const pn_type *t)
{
	if (t->kind != PN_KIND_TENSOR || !pn_type_is_static(t))
		return 0;
	return pn_numel(t->rank, t->dims);
}

/* Infers g under b into *r (freed by the caller on 0) and costs it.  0,
 * or 1 when inference fails (why), -1 when out of memory. */
static int measure(const pn_graph *g, const pn_dimbind *b, pn_infer_result *r, size_of *sz,
		   char *why)
{
	if (pn_infer_graph(g, b, NULL, r, why))
		return 1;
	memset(sz, 0, sizeof *sz);
	pn_type *types = malloc(sizeof(pn_type) * (size_t)(g->n_values + 1));
	int rc = types ? 0 : pn_fail(why, "out of memory");
	for (int v = 0; !rc && v < g->n_values; v++) {
		types[v] = r->v[v].type;
		int64_t n = type_elems(&types[v]);
		if (n > sz->max_elems) {
			sz->max_elems = n;
			sz->biggest = g->values[v].name;
		}
	}
	pn_graph_cost cost;
	if (!rc && pn_graph_cost_of(g, types, &cost, why) == 0)
		sz->flops = cost.flops;
	free(types);
	if (rc)
		pn_infer_result_free(r);
	return rc ? -1 : 0;
}

/* 0 within the limits; 1 with the reason in why. */
static int over_limits(const size_of *sz, char *why)
{
	if (sz->max_elems > PN_VARIANT_MAX_ELEMS)
		return pn_fail(why, "value '%s' holds %lld elements, over the limit of %lld",
			       sz->biggest ? sz->biggest : "?", (long long)sz->max_elems,
			       (long long)PN_VARIANT_MAX_ELEMS), 1;
	if (sz->flops > PN_VARIANT_MAX_FLOPS)
		return pn_fail(why, "%.3g FLOPs, over the limit of %.3g", sz->flops, PN_VARIANT_MAX_FLOPS),
		       1;
	return 0;
}

/* Validates model m (the base graph, or a generalized copy) under b.
 * 0: keep it (*how says how it was validated); 1: refused (why). */
static int validate(vctx *c, const pn_model *m, const pn_dimbind *b, const char **how, int *ran,
		    char *why)
{
	size_of sz;
	pn_infer_result r;
	int rc = measure(m->graph, b, &r, &sz, why);
	if (rc)
		return rc;
	if (over_limits(&sz, why)) {
		pn_infer_result_free(&r);
		return 1;
	}
	if (sz.flops > PN_VARIANT_RUN_FLOPS || sz.max_elems > PN_VARIANT_RUN_ELEMS) {
		pn_infer_result_free(&r);
		*how = pn_arena_printf(c->a, "inference only: %.3g FLOPs, largest value %lld elements, "
					     "over the run limit",
				       sz.flops, (long long)sz.max_elems);
		return *how ? 0 : -1;
	}
	rc = pn_binding_run(m, b, &r, why);
	pn_infer_result_free(&r);
	if (rc == 1)
		return 1;
	*ran = rc == 0;
	*how = rc == 2 ? pn_arena_printf(c->a, "inference only: %s", why) : "inference and one run";
	return *how ? 0 : -1;
}

/* --- the symbolic dims' variants --------------------------------------------------------- */

static int varies(const pn_binding *b, int i)
{
	int k = b->kinds ? b->kinds[i] : -1;
	return k >= 0 && pn_variant_ladder[k][0] != 0;
}

/* The passes over the slots: first every varying kind together (the
 * diagonal), then the batch alone, for models whose other dims admit one
 * value only (a VAD that takes a chunk of exactly 512 samples). */
enum { PASS_ALL, PASS_BATCH, N_PASSES };

static int64_t slot_value(const pn_binding *b, int i, int slot, int pass, int paired, int64_t base)
{
	int k = b->kinds[i];
	if (pass == PASS_BATCH)
		return k == PN_DK_BATCH ? pn_variant_ladder[k][slot] : base;
	if (k == PN_DK_BATCH && paired)
		return pn_variant_paired_batch[slot];
	return pn_variant_ladder[k][slot];
}

/* The binding of slot `slot` in pass `pass`: a copy of the base with every
 * varying entry at the slot's value, spatial ones rounded up to the graph's
 * stride. */
static int slot_binding(vctx *c, int slot, int pass, int64_t stride, pn_variant *v)
{
	const pn_binding *b = c->b;
	int paired = 0;
	for (int i = 0; i < b->bind.n; i++)
		paired |= varies(b, i) && b->kinds[i] != PN_DK_BATCH;
	v->bind.n = b->bind.n;
	v->bind.names = b->bind.names;
	v->bind.values = pn_arena_alloc(c->a, sizeof(int64_t) * (size_t)(b->bind.n + 1));
	v->changed = pn_arena_alloc(c->a, sizeof(char *) * (size_t)(b->bind.n + 1));
	if (!v->bind.values || !v->changed)
		return -1;
	v->n_changed = 0;
	char text[512];
	int off = 0;
	text[0] = 0;
	for (int i = 0; i < b->bind.n; i++) {
		int64_t x = b->bind.values[i];
		if (varies(b, i)) {
			x = slot_value(b, i, slot, pass, paired, x);
			if (b->kinds[i] == PN_DK_SPATIAL && stride > 1 && x % stride)
				x += stride - x % stride;
		}
		v->bind.values[i] = x;
		if (x != b->bind.values[i])
			v->changed[v->n_changed++] =
				pn_arena_printf(c->a, "%s=%lld", b->bind.names[i], (long long)x);
		off += snprintf(text + off, sizeof text - (size_t)off, "%s%s=%lld", i ? "," : "",
				b->bind.names[i], (long long)x);
		if (off >= (int)sizeof text)
			off = (int)sizeof text - 1;
	}
	v->text = pn_arena_strdup(c->a, text);
	return v->text ? 0 : -1;
}

/* Every binding a pass tried is remembered, so the next does not try it again. */
static int tried_before(vctx *c, const char *text)
{
	for (int i = 0; i < c->n_tried; i++)
		if (!strcmp(c->tried[i], text))
			return 1;
	const char **l = pn_arena_alloc(c->a, sizeof(char *) * (size_t)(c->n_tried + 1));
	if (!l)
		return -1;
	if (c->n_tried)
		memcpy(l, c->tried, sizeof(char *) * (size_t)c->n_tried);
	l[c->n_tried++] = text;
	c->tried = l;
	return 0;
}

static int keep(vctx *c, const pn_variant *v)
{
	pn_variant *l = pn_arena_alloc(c->a, sizeof(pn_variant) * (size_t)(c->out->n + 1));
	if (!l)
		return -1;
	if (c->out->n)
		memcpy(l, c->out->v, sizeof(pn_variant) * (size_t)c->out->n);
	l[c->out->n++] = *v;
	c->out->v = l;
	return add_note(c, "%s: %s", v->text, v->how);
}

static int try_slot(vctx *c, int slot, int pass, int64_t stride)
{
	pn_variant v = {0};
	if (slot_binding(c, slot, pass, stride, &v))
		return -1;
	if (!v.n_changed)
		return 0;
	int rc = tried_before(c, v.text);
	if (rc)
		return rc < 0 ? -1 : 0;
	char why[PN_ERRLEN] = "";
	rc = validate(c, c->m, &v.bind, &v.how, &v.ran, why);
	if (rc < 0)
		return -1;
	return rc ? add_note(c, "%s: refused: %s", v.text, why) : keep(c, &v);
}

static int symbolic_variants(vctx *c)
{
	int any = 0;
	for (int i = 0; i < c->b->bind.n; i++)
		any |= varies(c->b, i);
	if (!any)
		return add_note(c, "no variants: no dim of the binding varies (--dim values, state "
				   "and unnamed kinds keep theirs)");
	int64_t stride = pn_graph_stride(c->m->graph);
	for (int p = 0; p < N_PASSES; p++)
		for (int s = 0; s < PN_VARIANT_SLOTS && c->out->n < c->max; s++)
			if (try_slot(c, s, p, stride))
				return -1;
	return 0;
}

/* --- the generalized batch's variants ----------------------------------------------------- */

typedef struct gen_ctx {
	vctx *c;
	pn_variant_src *src;
} gen_ctx;

/* A fresh copy generalized to `batch`; NULL (why set) when that fails. */
static pn_model *generalized(gen_ctx *g, int64_t batch, char *why)
{
	pn_model *m = g->src->copy(g->src->copy_ud, why);
	if (m && pn_generalize_batch(m, batch, why)) {
		pn_model_free(m);
		return NULL;
	}
	if (m)
		pn_coarsen_weights(m->graph, NULL);   /* as the base's: generalized_variants */
	return m;
}

/* The independence check's form (pn_run_form_make) of the base, whose
 * value numbers the batch-2 copy m2 shares: 1, 0 when there is none (the
 * runs draw by the file's names, and nothing is remembered), -1. */
static int check_form(gen_ctx *g, const pn_model *m2, pn_check_form *f)
{
	const pn_model *m = g->c->m;
	memset(f, 0, sizeof *f);
	if (!g->src->r || m2->graph->n_values != m->graph->n_values)
		return 0;
	return pn_run_form_make(m, g->src->r, NULL, "passnet batch independence 1", f);
}

typedef struct known_form {
	gen_ctx *g;
	const pn_key *key;
} known_form;

static int known(void *ud)
{
	known_form *k = ud;
	int found = pn_variant_memo_independent(k->g->src->memo, k->key);
	k->g->src->independence_reused = found;
	return found;
}

static int learn(void *ud)
{
	known_form *k = ud;
	return pn_variant_memo_learn_independent(k->g->src->memo, k->key);
}

/* pn_batch_independent of the base and m2, drawn by the canonical names
 * of the base's form when it has one, its verdict kept in the run's memo. */
static int independent(gen_ctx *g, pn_model *m2, char *why)
{
	pn_check_form f;
	int formed = check_form(g, m2, &f);
	if (formed < 0)
		return pn_fail(why, "out of memory");
	pn_graph *base = g->c->m->graph;
	if (formed)
		base->draw_name = m2->graph->draw_name = (const char *const *)f.draw;
	known_form k = {g, &f.key};
	pn_indep_memory memory = {known, learn, &k};
	int rc = pn_batch_independent(g->c->m, m2, 2, 1, PN_GENERALIZE_RTOL, PN_GENERALIZE_ATOL,
				      formed && g->src->memo ? &memory : NULL, why);
	base->draw_name = m2->graph->draw_name = NULL;
	pn_check_form_free(&f);
	return rc;
}

/* The batch-2 check: 0 independent, 1 not (why), -1 error. */
static int check_independence(gen_ctx *g, char *why)
{
	pn_model *m2 = generalized(g, 2, why);
	if (!m2)
		return 1;
	size_of sz;
	pn_infer_result r;
	int rc = measure(m2->graph, &m2->bind, &r, &sz, why);
	if (!rc)
		pn_infer_result_free(&r);
	if (!rc && 2 * sz.flops > PN_GENERALIZE_CHECK_FLOPS) {
		pn_fail(why, "checking batch independence takes %.3g FLOPs, over the limit of %.3g",
			2 * sz.flops, PN_GENERALIZE_CHECK_FLOPS);
		rc = 1;
	}
	if (rc) {
		pn_model_free(m2);
		return rc < 0 ? -1 : 1;
	}
	rc = independent(g, m2, why);
	pn_model_free(m2);
	return rc < 0 ? 1 : rc;
}

static int batch_variant(gen_ctx *g, int64_t batch)
{
	vctx *c = g->c;
	char why[PN_ERRLEN] = "";
	pn_variant v = {.batch = batch};
	v.text = pn_arena_printf(c->a, "batch=%lld (generalized)", (long long)batch);
	if (!v.text)
		return -1;
	pn_model *m = generalized(g, batch, why);
	int rc = m ? validate(c, m, &m->bind, &v.how, &v.ran, why) : 1;
	if (m)
		pn_model_free(m);
	if (rc < 0)
		return -1;
	return rc ? add_note(c, "%s: refused: %s", v.text, why) : keep(c, &v);
}

/* The batch-2 check, then one variant per ladder batch.  Their runs draw
 * each weight from its coarse statistics (check_form.h), the base's and
 * the copies' alike, so that what is chosen is a function of the model's
 * file key, which copies of it below those statistics share
 * (variant_memo.h). */
static int generalized_variants(vctx *c, pn_variant_src *src)
{
	char why[PN_ERRLEN] = "";
	int64_t base = 0;
	int rc = pn_generalize_plan(c->m, &base, why);
	if (rc)
		return rc < 0 ? -1 : add_note(c, "no variants: batch not generalized: %s", why);
	pn_wmeta *full = malloc(sizeof(pn_wmeta) * ((size_t)c->m->graph->n_values + 1));
	if (!full)
		return -1;
	pn_coarsen_weights(c->m->graph, full);
	gen_ctx g = {c, src};
	int refused = check_independence(&g, why);
	if (refused)
		rc = refused < 0 ? -1 : add_note(c, "no variants: batch not generalized: %s", why);
	const int64_t *ladder = pn_variant_ladder[PN_DK_BATCH];
	for (int s = 0; !refused && s < PN_VARIANT_SLOTS && c->out->n < c->max; s++)
		if (ladder[s] != base && batch_variant(&g, ladder[s])) {
			rc = -1;
			break;
		}
	pn_restore_weights(c->m->graph, full);
	free(full);
	return rc;
}

int pn_variants_choose(pn_model *m, const pn_binding *b, int max, pn_variant_src *src,
		       pn_arena *a, pn_variants *out, char *err)
{
	memset(out, 0, sizeof *out);
	if (max <= 0)
		return 0;
	vctx c = {.m = m, .b = b, .max = max < PN_VARIANTS_MAX ? max : PN_VARIANTS_MAX, .a = a,
		  .out = out};
	int rc;
	if (b->how)
		rc = symbolic_variants(&c);
	else if (src->copy)
		rc = generalized_variants(&c, src);
	else
		rc = 0;
	return rc ? pn_fail(err, "out of memory") : 0;
}
