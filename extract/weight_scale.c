/*
 * weight_scale.c - see weight_scale.h.
 */
#include "extract/weight_scale.h"

#include <float.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "extract/value_keys.h"
#include "model/onnx.h"
#include "runtime/feed.h"
#include "runtime/ops/vec.h"
#include "runtime/session.h"
#include "schemas/ops.h"

/* What one run showed of one value. */
typedef pn_value_seen seen;

/* The graphs of a model, the main one first, then its nested ones depth
 * first (the same order for two decodes of one proto), and the values of
 * all of them in one array: graph i's value v is at first[i] + v. */
#define MAX_GRAPHS 256
typedef struct graphs {
	const pn_graph *g[MAX_GRAPHS];
	int parent[MAX_GRAPHS];
	int first[MAX_GRAPHS];
	int n, n_values;
	seen *s;   /* the run being observed */
} graphs;

static void add_graphs(graphs *gs, const pn_graph *g, int parent)
{
	if (gs->n == MAX_GRAPHS)
		return;   /* deeper bodies are not observed */
	int me = gs->n++;
	gs->g[me] = g;
	gs->parent[me] = parent;
	gs->first[me] = gs->n_values;
	gs->n_values += g->n_values;
	for (int i = 0; i < g->n_nodes; i++)
		for (int k = 0; k < g->nodes[i].n_attr; k++) {
			const pn_attr *at = &g->nodes[i].attrs[k];
			if (at->g)
				add_graphs(gs, at->g, me);
			for (int j = 0; at->type == PN_ATTR_GRAPHS && j < at->n; j++)
				add_graphs(gs, at->graphs[j], me);
		}
}

static int graph_index(const graphs *gs, const pn_graph *g)
{
	for (int i = 0; i < gs->n; i++)
		if (gs->g[i] == g)
			return i;
	return -1;
}

/* The finite range of n floats, PN_VL at a time: what the element by
 * element loop of see gives.  x * 0 is 0 for a finite x and NaN otherwise,
 * so x + x * 0 is x or NaN, which pn_vmin and pn_vmax pass over; their sum
 * is NaN when some element is not finite.  A zero bound takes the sign of
 * the first zero, as the loop keeps the first of equal values (and a zero
 * bound means no element lies beyond it). */
static void see_f32(seen *s, const float *p, int64_t n)
{
	const pn_vf zero = pn_vzero();
	pn_vf vlo = pn_vset1(INFINITY), vhi = pn_vset1(-INFINITY), vbad = zero;
	int64_t i = 0;
	for (; i + PN_VL <= n; i += PN_VL) {
		const pn_vf x = pn_vload(p + i), z = pn_vmul(x, zero), y = pn_vadd(x, z);
		vbad = pn_vadd(vbad, z);
		vlo = pn_vmin(y, vlo);
		vhi = pn_vmax(y, vhi);
	}
	float lo_l[PN_VL], hi_l[PN_VL];
	pn_vstore(lo_l, vlo);
	pn_vstore(hi_l, vhi);
	float lo = INFINITY, hi = -INFINITY, bad = pn_vhsum(vbad);
	for (int l = 0; l < PN_VL; l++) {
		lo = lo_l[l] < lo ? lo_l[l] : lo;
		hi = hi_l[l] > hi ? hi_l[l] : hi;
	}
	for (; i < n; i++) {
		const float z = p[i] * 0.0f, y = p[i] + z;
		bad += z;
		lo = y < lo ? y : lo;
		hi = y > hi ? y : hi;
	}
	s->nonfinite |= bad != 0;    /* NaN */
	if (!(lo <= hi))
		return;    /* nothing finite */
	if (lo == 0 || hi == 0) {
		int64_t k = 0;
		while (p[k] != 0)
			k++;
		lo = lo == 0 ? p[k] : lo;
		hi = hi == 0 ? p[k] : hi;
	}
	s->lo = !s->known || lo < s->lo ? lo : s->lo;
	s->hi = !s->known || hi > s->hi ? hi : s->hi;
	s->known = 1;
}

static void see(seen *s, const pn_tensor *t)
{
	if (!t || t->kind != PN_KIND_TENSOR || !pn_dtype_is_float(t->dtype))
		return;
	if (t->dtype == PN_FLOAT) {
		see_f32(s, t->data, t->numel);
		return;
	}
	for (int64_t i = 0; i < t->numel; i++) {
		double x = t->dtype == PN_FLOAT ? ((const float *)t->data)[i] : pn_tensor_get_f64(t, i);
		if (!isfinite(x)) {
			s->nonfinite = 1;
			continue;
		}
		s->lo = !s->known || x < s->lo ? x : s->lo;
		s->hi = !s->known || x > s->hi ? x : s->hi;
		s->known = 1;
	}
}

static void observe_all(void *ud, const pn_graph *g, int v, const pn_tensor *t)
{
	graphs *gs = ud;
	int i = graph_index(gs, g);
	if (i >= 0) {
		gs->s[gs->first[i] + v].observed = 1;
		see(&gs->s[gs->first[i] + v], t);
	}
}

/* What the run showed of value v of graph i, through captured values to
 * the graph that computes them. */
static const seen *seen_of(const graphs *gs, const seen *s, int i, int v)
{
	while (gs->g[i]->values[v].role == PN_ROLE_OUTER && gs->parent[i] >= 0) {
		v = gs->g[i]->values[v].outer;
		i = gs->parent[i];
	}
	return &s[gs->first[i] + v];
}

/* Largest magnitude of what s saw; -1 when nothing finite. */
static double amp(const seen *s)
{
	return s->known ? fmax(fabs(s->lo), fabs(s->hi)) : -1;
}

/* Runs the main graph of gs on in[0..n) with 1 thread, recording every
 * value of every graph into s (cleared). */
static int run_seen(graphs *gs, pn_tensor *const *in, int n, seen *s, char *err)
{
	const pn_graph *g = gs->g[0];
	memset(s, 0, sizeof(seen) * (size_t)gs->n_values);
	for (int i = 0; i < g->n_inputs && i < n; i++) {
		s[g->inputs[i]].observed = 1;
		see(&s[g->inputs[i]], in[i]);
	}
	gs->s = s;
	pn_exec_opts eo = {.seed = 1, .threads = 1, .observe_all = observe_all, .observe_ud = gs};
	return pn_run_once(g, &eo, in, n, err);
}

/* --- the inputs ------------------------------------------------------------------ */

typedef struct inputs {
	pn_feed f;
	pn_tensor **read;   /* from the test set */
	int n;
} inputs;

static int testset_inputs(const pn_graph *g, const Passnet__TestSet *ts, inputs *in, char *err)
{
	in->read = calloc((size_t)g->n_inputs + 1, sizeof(pn_tensor *));
	if (!in->read)
		return pn_fail(err, "out of memory");
	for (int i = 0; i < g->n_inputs; i++) {
		in->n = i;
		if (pn_tensor_read_pb(ts->inputs[i].data, ts->inputs[i].len,
				      g->values[g->inputs[i]].type.kind, &in->read[i], NULL, err))
			return -1;
	}
	in->n = g->n_inputs;
	return 0;
}

/* The record's complete test set, else the seeded inputs of the binding's
 * validation run (seed 1). */
static int prepare(const pn_model *m, const pn_dimbind *bind, const Passnet__TestSet *ts,
		   inputs *in, char *err)
{
	memset(in, 0, sizeof *in);
	if (ts && ts->n_inputs == (size_t)m->graph->n_inputs && ts->n_inputs)
		return testset_inputs(m->graph, ts, in, err);
	return pn_feed_prepare(m, NULL, bind, 1, &in->f, err);
}

static pn_tensor *const *input_v(const inputs *in)
{
	return in->read ? in->read : in->f.v;
}

static int input_n(const inputs *in)
{
	return in->read ? in->n : in->f.n;
}

static void inputs_free(inputs *in)
{
	for (int i = 0; in->read && i < in->n; i++)
		pn_tensor_free(in->read[i]);
	free(in->read);
	pn_feed_free(&in->f);
}

/* --- layers ------------------------------------------------------------------------ */

/* Value v of graph i, through captured values to the graph that holds it
 * (a weight of the main graph read in an If branch). */
static const pn_value *value_of(const graphs *gs, int i, int v)
{
	while (gs->g[i]->values[v].role == PN_ROLE_OUTER && gs->parent[i] >= 0) {
		v = gs->g[i]->values[v].outer;
		i = gs->parent[i];
	}
	return &gs->g[i]->values[v];
}

/* The slot of n (in graph i) that reads a weight linearly (its output
 * scales with it) and the slot of the data it multiplies, and the weight's
 * statistics; NULL when n has none. */
static pn_wmeta *linear_weight(const graphs *gs, int i, const pn_node *n, int *w, int *x)
{
	switch (n->op) {
	case PN_OP_Conv: case PN_OP_ConvTranspose:
	case PN_OP_BatchNormalization: case PN_OP_LayerNormalization:
	case PN_OP_InstanceNormalization: case PN_OP_GroupNormalization:
		*w = 1, *x = 0;
		break;
	case PN_OP_MatMul: case PN_OP_Gemm: case PN_OP_Mul:
		if (n->n_in >= 2 && n->in[0] >= 0 && value_of(gs, i, n->in[0])->meta)
			*w = 0, *x = 1;
		else
			*w = 1, *x = 0;
		break;
	default:
		return NULL;
	}
	if (n->n_in <= *w || n->n_in <= *x || n->in[*w] < 0 || n->in[*x] < 0 || n->n_out < 1 ||
	    n->out[0] < 0)
		return NULL;
	const pn_value *wv = value_of(gs, i, n->in[*w]), *xv = value_of(gs, i, n->in[*x]);
	return !xv->meta && !xv->data && pn_dtype_is_float(wv->type.dtype) ? wv->meta : NULL;
}

/* The factor that brings gain `have` to `want`, or 1 when either is not a
 * usable ratio or they are within 10%. */
static double factor(double want, double have)
{
	if (!(want > 0) || !(have > 0) || !isfinite(want) || !isfinite(have))
		return 1;
	double f = want / have;
	f = f < 1e-4 ? 1e-4 : f > 1e4 ? 1e4 : f;
	return f > 1 / 1.1 && f < 1.1 ? 1 : f;
}

/* One correction round: real (NULL in the blind case: target gain 1 for the
 * weights without statistics) against regen.  Returns the layers changed. */
/* The two runs gave a value of one sign each, not the same one (a logit
 * that the real weights keep negative, whose sigmoid says "no speech"). */
static int opposite(const seen *a, const seen *b)
{
	return a->known && b->known &&
	       ((a->hi < 0 && b->lo > 0) || (a->lo > 0 && b->hi < 0));
}

static int correct_graph(const graphs *gs, int gi, const seen *real, const seen *regen)
{
	const pn_graph *g = gs->g[gi];
	int changed = 0;
	for (int i = 0; i < g->n_nodes; i++) {
		const pn_node *n = &g->nodes[i];
		int w, x;
		pn_wmeta *meta = linear_weight(gs, gi, n, &w, &x);
		if (!meta || (!real && meta->has_stats))
			continue;
		int o = n->out[0], in = n->in[x];
		double gin = amp(seen_of(gs, regen, gi, in)), gout = amp(seen_of(gs, regen, gi, o));
		double rin = real ? amp(seen_of(gs, real, gi, in)) : 1;
		double rout = real ? amp(seen_of(gs, real, gi, o)) : 1;
		if (!(gin > 0) || !(rin > 0))
			continue;
		double f = factor(rout / rin, gout / gin);
		if (real && opposite(seen_of(gs, real, gi, o), seen_of(gs, regen, gi, o)))
			f = -f;
		if (f != 1) {
			meta->scale = (meta->scale != 0 ? meta->scale : 1) * f;
			changed++;
		}
	}
	return changed;
}

static int correct(const graphs *gs, const seen *real, const seen *regen)
{
	int changed = 0;
	for (int i = 0; i < gs->n; i++)
		changed += correct_graph(gs, i, real, regen);
	return changed;
}

/* The worst float output's factor off the real magnitude (>= 1), or in the
 * blind case off finite and normal (1: all are; infinity: one is not). */
static double worst_output(const pn_graph *g, const seen *real, const seen *regen, int *which)
{
	double worst = 1;
	*which = -1;
	for (int k = 0; k < g->n_outputs; k++) {
		int o = g->outputs[k];
		double off = 1;
		if (!regen[o].known && !regen[o].nonfinite)
			continue;   /* not a float output */
		if (real) {
			double r = amp(&real[o]), gm = amp(&regen[o]);
			if (!(r > 0))
				continue;
			off = regen[o].nonfinite && !real[o].nonfinite ? INFINITY
			      : gm <= 0 ? INFINITY : fmax(gm / r, r / gm);
		} else {
			double gm = amp(&regen[o]);
			off = regen[o].nonfinite || (gm > 0 && gm < FLT_MIN) ? INFINITY : 1;
		}
		if (off > worst) {
			worst = off;
			*which = k;
		}
	}
	return worst;
}

/* --- what goes on the record ------------------------------------------------------- */

static Passnet__ValueRange *range_of(pn_arena *a, const char *name, const seen *s)
{
	Passnet__ValueRange *r = pn_arena_alloc(a, sizeof(*r));
	if (!r)
		return NULL;
	passnet__value_range__init(r);
	r->name = (char *)name;
	r->has_lo = r->has_hi = s->known;
	r->lo = (float)s->lo;
	r->hi = (float)s->hi;
	r->has_nonfinite = s->nonfinite;
	r->nonfinite = s->nonfinite;
	return r;
}

/* Every float value s saw (outputs_only: the graph outputs). */
static int record(const pn_graph *g, const seen *s, int outputs_only, pn_arena *a,
		  Passnet__ValueRange ***out, size_t *n)
{
	*out = pn_arena_alloc(a, sizeof(void *) * (size_t)(g->n_values + 1));
	if (!*out)
		return -1;
	*n = 0;
	for (int v = 0; v < g->n_values; v++) {
		if ((!s[v].known && !s[v].nonfinite) || (outputs_only && !g->values[v].is_output))
			continue;
		if (!((*out)[(*n)++] = range_of(a, g->values[v].name, &s[v])))
			return -1;
	}
	return 0;
}

/* --- the check --------------------------------------------------------------------- */

static void count_weights(const pn_graph *g, uint32_t *absent, double *bytes)
{
	for (int v = 0; v < g->n_values; v++) {
		const pn_value *val = &g->values[v];
		if (!val->meta)
			continue;
		*absent += !val->meta->has_stats;
		double n = pn_dtype_size(val->type.dtype);
		for (int d = 0; d < val->type.rank; d++)
			n *= val->type.dims[d] > 0 ? (double)val->type.dims[d] : 1;
		*bytes += n;
	}
	for (int i = 0; i < g->n_nodes; i++)
		for (int k = 0; k < g->nodes[i].n_attr; k++) {
			const pn_attr *at = &g->nodes[i].attrs[k];
			if (at->g)
				count_weights(at->g, absent, bytes);
			for (int j = 0; at->type == PN_ATTR_GRAPHS && j < at->n; j++)
				count_weights(at->graphs[j], absent, bytes);
		}
}

uint32_t pn_weights_absent(const pn_graph *g)
{
	uint32_t absent = 0;
	double bytes = 0;
	count_weights(g, &absent, &bytes);
	return absent;
}

/* The real model's run into real[]: mp decoded again with every byte. */
static int run_real(const Onnx__ModelProto *mp, const graphs *gs, const inputs *in, seen *real,
		    char *err)
{
	const pn_graph *g = gs->g[0];
	pn_model *rm = pn_model_new();
	if (!rm)
		return pn_fail(err, "out of memory");
	pn_decode_opts o = {.weights_as_meta = 0};
	int rc = pn_model_from_proto(mp, &o, rm, err);
	if (!rc && rm->graph->n_values != g->n_values)
		rc = pn_fail(err, "the real weights decode to another graph");
	for (int v = 0; !rc && v < g->n_values; v++)
		if (strcmp(rm->graph->values[v].name, g->values[v].name))
			rc = pn_fail(err, "the real weights decode to another graph");
	graphs rs = {.n = 0};
	if (!rc) {
		add_graphs(&rs, rm->graph, -1);
		if (rs.n != gs->n || rs.n_values != gs->n_values)
			rc = pn_fail(err, "the real weights decode to other nested graphs");
	}
	if (!rc)
		rc = run_seen(&rs, input_v(in), input_n(in), real, err);
	pn_model_free(rm);
	return rc;
}

/* The correction scales of every weight of the model, and a copy of them:
 * the check keeps the best round's, since a round may make things worse
 * (a recurrent refinement whose gains no single factor fits). */
typedef struct scales {
	pn_wmeta **meta;
	double *kept;
	int n;
} scales;

/* The weight statistics of gs's graphs in their order (values in order):
 * into out when not NULL; returns how many. */
static int metas_of(const graphs *gs, pn_wmeta **out)
{
	int n = 0;
	for (int i = 0; i < gs->n; i++)
		for (int v = 0; v < gs->g[i]->n_values; v++)
			if (gs->g[i]->values[v].meta) {
				if (out)
					out[n] = gs->g[i]->values[v].meta;
				n++;
			}
	return n;
}

static int collect_scales(const graphs *gs, scales *sc)
{
	int cap = metas_of(gs, NULL);
	sc->meta = malloc(sizeof(pn_wmeta *) * (size_t)(cap + 1));
	sc->kept = malloc(sizeof(double) * (size_t)(cap + 1));
	if (!sc->meta || !sc->kept)
		return -1;
	sc->n = metas_of(gs, sc->meta);
	return 0;
}

int pn_weight_metas(const pn_graph *g, pn_wmeta ***out)
{
	graphs *gs = calloc(1, sizeof(graphs));
	if (!gs)
		return -1;
	add_graphs(gs, g, -1);
	int n = metas_of(gs, NULL);
	*out = malloc(sizeof(pn_wmeta *) * (size_t)(n + 1));
	if (*out)
		metas_of(gs, *out);
	free(gs);
	return *out ? n : -1;
}

static void keep_scales(scales *sc)
{
	for (int i = 0; i < sc->n; i++)
		sc->kept[i] = sc->meta[i]->scale;
}

static void restore_scales(const scales *sc)
{
	for (int i = 0; i < sc->n; i++)
		sc->meta[i]->scale = sc->kept[i];
}

/* The best round so far: its worst output, its number, the corrections up
 * to it, and its regenerated run. */
typedef struct best {
	double worst;
	int round, layers;
	seen *regen;
} best;

/* The one line saying what the check found: b the round kept of rounds
 * run, first the worst output of round 0, regen the kept round's run. */
static const char *verdict(const pn_graph *g, const seen *real, const seen *regen, const best *b,
			   int rounds, double first, pn_arena *a)
{
	int which = -1;
	worst_output(g, real, regen, &which);
	const char *head = real ? pn_arena_printf(a, "outputs within %gx of the real run", PN_WS_RULE)
				: "outputs finite and normal";
	if (!head)
		return NULL;
	if (b->worst > PN_WS_RULE)
		return pn_arena_printf(a, "%s: NO, output %s off by %.3gx, kept round %d of %d "
				       "(%d layer corrections; %.3gx before)", head,
				       g->values[g->outputs[which]].name, b->worst, b->round, rounds,
				       b->layers, first);
	if (!b->round)
		return pn_arena_printf(a, "%s: yes, worst %.3gx, no rescaling", head, b->worst);
	return pn_arena_printf(a, "%s: yes after %d rounds (%d layer corrections), worst "
			       "%.3gx (%.3gx before)", head, b->round, b->layers, b->worst, first);
}

/* Books what round 0 of a blind check saw of every keyed value of the main
 * graph (value_keys.h). */
static void book_run(const pn_graph *g, const seen *s, const pn_key *keys, pn_value_book *book)
{
	for (int v = 0; v < g->n_values; v++)
		if (s[v].observed && pn_value_key_known(&keys[v]))
			pn_value_book_put(book, &keys[v], &s[v]);   /* a cache: a miss costs a run */
}

/* An output the run never shows: a Constant's contents attached to it,
 * which the session serves without running the node. */
static int never_observed(const pn_graph *g, int v)
{
	const pn_value *val = &g->values[v];
	return val->role == PN_ROLE_NODE && val->producer >= 0 &&
	       pn_constant_attached(g, &g->nodes[val->producer]);
}

/* A blind check's round 0 from the book: 1 when every output of g is
 * booked (into regen) and keeps the rule there, so that round 0 would be
 * the last and kept; 0 when it must run. */
static int from_book(const pn_graph *g, const pn_key *keys, pn_value_book *book, seen *regen,
		     double *worst)
{
	for (int k = 0; k < g->n_outputs; k++) {
		int o = g->outputs[k];
		if (never_observed(g, o))
			continue;
		if (!pn_value_key_known(&keys[o]) || !pn_value_book_get(book, &keys[o], &regen[o]))
			return 0;
	}
	int which;
	*worst = worst_output(g, NULL, regen, &which);
	return *worst <= PN_WS_RULE;
}

/* Regenerated runs, corrected until the outputs keep the rule (blind:
 * finite and normal); the scales of the best round (the
 * least worst output, the later of equals) stay, and regen holds its run.
 * keys and book (blind checks, else NULL): round 0's values are booked.
 * Returns the one line saying what happened, NULL when out of memory. */
static const char *rescale(graphs *gs, const inputs *in, const seen *real, seen *regen,
			   const pn_key *keys, pn_value_book *book, pn_arena *a)
{
	const pn_graph *g = gs->g[0];
	char why[PN_ERRLEN];
	int layers = 0, rounds = 0, which = -1;
	double first = 0;
	scales sc = {0};
	best b = {.worst = INFINITY, .round = -1,
		  .regen = malloc(sizeof(seen) * (size_t)(gs->n_values + 1))};
	const char *res = NULL;
	if (!b.regen || collect_scales(gs, &sc))
		goto done;
	for (;; rounds++) {
		if (run_seen(gs, input_v(in), input_n(in), regen, why)) {
			res = pn_arena_printf(a, "not run: regenerated weights: %s", why);
			goto done;
		}
		double worst = worst_output(g, real, regen, &which);
		if (!rounds)
			first = worst;
		if (!rounds && book)
			book_run(g, regen, keys, book);
		if (worst <= b.worst) {
			b = (best){worst, rounds, layers, b.regen};
			keep_scales(&sc);
			memcpy(b.regen, regen, sizeof(seen) * (size_t)gs->n_values);
		}
		if (worst <= PN_WS_RULE || rounds == PN_WS_ROUNDS)
			break;
		int changed = correct(gs, real, regen);
		if (!changed)
			break;
		layers += changed;
	}
	restore_scales(&sc);
	memcpy(regen, b.regen, sizeof(seen) * (size_t)gs->n_values);
	res = verdict(g, real, regen, &b, rounds, first, a);
done:
	free(sc.meta);
	free(sc.kept);
	free(b.regen);
	return res;
}

/* A blind check's run: from the book when it answers for every output
 * (value_keys.h), else rescale's, booking round 0. */
static const char *blind_run(graphs *gs, const inputs *in, seen *regen, pn_value_book *book,
			     pn_arena *a, int *booked, int *oom)
{
	const pn_graph *g = gs->g[0];
	pn_key *keys = book ? malloc(sizeof(pn_key) * ((size_t)g->n_values + 1)) : NULL;
	if (book && (!keys || pn_value_keys(g, input_v(in), input_n(in), keys))) {
		free(keys);
		*oom = 1;
		return NULL;
	}
	double worst = 0;
	const char *how;
	if (book && from_book(g, keys, book, regen, &worst)) {
		best b = {.worst = worst};
		how = verdict(g, NULL, regen, &b, 0, worst, a);
		*booked = 1;
	} else {
		memset(regen, 0, sizeof(seen) * (size_t)gs->n_values);
		how = rescale(gs, in, NULL, regen, keys, book, a);
	}
	free(keys);
	return how;
}

int pn_weight_scale_check(pn_model *m, const Onnx__ModelProto *mp, const pn_dimbind *bind,
			  const Passnet__TestSet *testset, pn_value_book *book, pn_arena *a,
			  pn_weight_check *out, char *err)
{
	memset(out, 0, sizeof *out);
	const pn_graph *g = m->graph;
	double bytes = 0;
	count_weights(g, &out->n_absent, &bytes);
	if (bytes == 0) {
		out->how = "no weights kept as statistics";
		return 0;
	}
	if (bytes > PN_WS_MAX_WEIGHT_BYTES) {
		out->how = pn_arena_printf(a, "not run: %.0f MiB of weights", bytes / (1 << 20));
		return out->how ? 0 : pn_fail(err, "out of memory");
	}
	inputs in;
	char why[PN_ERRLEN];
	graphs *gs = calloc(1, sizeof(graphs));
	if (!gs)
		return pn_fail(err, "out of memory");
	add_graphs(gs, g, -1);
	seen *real = calloc((size_t)gs->n_values + 1, sizeof(seen));
	seen *regen = calloc((size_t)gs->n_values + 1, sizeof(seen));
	int rc = real && regen ? 0 : pn_fail(err, "out of memory");
	if (!rc && prepare(m, bind, testset, &in, why)) {
		out->how = pn_arena_printf(a, "not run: inputs: %s", why);
		inputs_free(&in);
	} else if (!rc) {
		int have_real = !out->n_absent, oom = 0;
		if (have_real && run_real(mp, gs, &in, real, why))
			out->how = pn_arena_printf(a, "not run: real weights: %s", why);
		else if (have_real)
			out->how = rescale(gs, &in, real, regen, NULL, NULL, a);
		else
			out->how = blind_run(gs, &in, regen, book, a, &out->booked, &oom);
		if (have_real && out->how && strncmp(out->how, "not run", 7))
			rc = record(g, real, 0, a, &out->real, &out->n_real) ||
			     record(g, regen, 1, a, &out->regen, &out->n_regen);
		else if (out->how && strncmp(out->how, "not run", 7))
			rc = record(g, regen, 1, a, &out->regen, &out->n_regen);
		inputs_free(&in);
	}
	free(real);
	free(regen);
	free(gs);
	if (!rc && !out->how)
		rc = -1;
	return rc ? pn_fail(err, "out of memory") : 0;
}
