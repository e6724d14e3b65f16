/*
 * control.c - ops that run nested graphs: If, Loop, Scan (opset 8 and 9+),
 * SequenceMap.
 *
 * Bodies run through pn_run_subgraph, which hands back heap tensors the
 * kernel owns; they move into the node's outputs with pn_out_take (no
 * copy).  Output shapes depend on the data (trip counts, branch taken), so
 * inference only gives kinds and dtypes and the kernels size their outputs.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/infer.h"
#include "runtime/kernel.h"
#include "runtime/ops/sequence.h"

/* --- helpers ------------------------------------------------------------------------ */

static const pn_graph *graph_attr(const pn_node *n, const char *name)
{
	const pn_attr *a = pn_attr_find(n, name);
	return a && a->type == PN_ATTR_GRAPH ? a->g : NULL;
}

static const pn_type *body_out_type(const pn_graph *g, int i)
{
	return &g->values[g->outputs[i]].type;
}

static void free_all(pn_tensor **t, int n)
{
	for (int i = 0; i < n; i++) {
		pn_tensor_free(t[i]);
		t[i] = NULL;
	}
}

/* Moves heap tensors t[0..n) into outputs first.. (those beyond the node's
 * outputs are dropped); always consumes every t[i]. */
static int take_all(pn_kctx *k, int first, pn_tensor **t, int n)
{
	int rc = 0;
	for (int i = 0; i < n; i++) {
		if (!rc && first + i < k->n_out)
			rc = pn_out_take(k, first + i, t[i]);
		else
			pn_tensor_free(t[i]);
		t[i] = NULL;
	}
	return rc;
}

static int run_body(pn_kctx *k, const pn_graph *g, pn_tensor *const *in, int n_in, pn_tensor **out)
{
	if (n_in != g->n_inputs)
		return pn_kfail(k, "body takes %d inputs, given %d", g->n_inputs, n_in);
	return pn_run_subgraph(k, g, in, n_in, out, k->err);
}

static int truth(const pn_tensor *t)
{
	return t && t->kind == PN_KIND_TENSOR && t->numel > 0 && pn_tensor_get_f64(t, 0) != 0;
}

static void free_strings(pn_tensor *t)
{
	if (t->dtype != PN_STRING)
		return;
	char **s = t->data;
	for (int64_t i = 0; i < t->numel; i++) {
		free(s[i]);
		s[i] = NULL;
	}
}

/* The stack of no iterations of a body output of declared type decl, for
 * loops that ran no step: the declared dims with 0 inserted at axis when
 * they are all known, else [0]. */
static pn_tensor *empty_stack(const pn_type *decl, int64_t axis)
{
	int64_t dims[PN_MAX_RANK] = {0};
	int r = 1, known = decl->rank >= 0 && decl->rank < PN_MAX_RANK;
	for (int d = 0; known && d < decl->rank; d++)
		known = decl->dims[d] >= 0;
	int a = known ? pn_axis(axis, decl->rank + 1) : -1;
	if (a >= 0) {
		r = decl->rank + 1;
		for (int d = 0, s = 0; d < r; d++)
			dims[d] = d == a ? 0 : decl->dims[s++];
	}
	return pn_tensor_new(decl->dtype ? decl->dtype : PN_FLOAT, r, dims);
}

/* --- inference ------------------------------------------------------------------------- */

/* Output i gets the kind and dtype a body declares for its output gi (the
 * fallback input's when the body does not say); the shape stays unknown,
 * since it depends on the data. */
static void iset_decl(pn_ictx *c, int i, const pn_graph *g, int gi, const pn_tinfo *fallback)
{
	if (i >= c->n_out)
		return;
	pn_iset(c, i, PN_UNDEFINED, -1, NULL);
	pn_type *t = &c->out[i].type;
	if (g && gi >= 0 && gi < g->n_outputs && body_out_type(g, gi)->dtype) {
		const pn_type *d = body_out_type(g, gi);
		t->kind = d->kind;
		t->elem_kind = d->elem_kind;
		t->dtype = d->dtype;
	} else if (fallback) {
		t->kind = fallback->type.kind;
		t->elem_kind = fallback->type.elem_kind;
		t->dtype = fallback->type.dtype;
	}
}

int pn_infer_If(pn_ictx *c)
{
	const pn_graph *t = graph_attr(c->node, "then_branch"), *e = graph_attr(c->node, "else_branch");
	if (!t || !e)
		return pn_ifail(c, "If needs then_branch and else_branch graphs");
	for (int i = 0; i < c->n_out; i++) {
		iset_decl(c, i, t, i, NULL);
		if (!c->out[i].type.dtype)
			iset_decl(c, i, e, i, NULL);
	}
	return 0;
}

int pn_infer_Loop(pn_ictx *c)
{
	const pn_graph *g = graph_attr(c->node, "body");
	if (!g)
		return pn_ifail(c, "Loop needs a body graph");
	int n = c->n_in - 2;
	for (int i = 0; i < c->n_out; i++) {
		iset_decl(c, i, g, 1 + i, i < n ? pn_iin(c, 2 + i) : NULL);
		if (i >= n)
			c->out[i].type.kind = PN_KIND_TENSOR;
	}
	return 0;
}

static int scan_state_count(const pn_node *n, int n_in, int opset)
{
	return n_in - (int)pn_attr_int(n, "num_scan_inputs", 0) - (opset < 9 ? 1 : 0);
}

int pn_infer_Scan(pn_ictx *c)
{
	const pn_graph *g = graph_attr(c->node, "body");
	if (!g)
		return pn_ifail(c, "Scan needs a body graph");
	int ns = scan_state_count(c->node, c->n_in, c->opset), first = c->opset < 9 ? 1 : 0;
	for (int i = 0; i < c->n_out; i++) {
		iset_decl(c, i, g, i, i < ns ? pn_iin(c, first + i) : NULL);
		c->out[i].type.kind = PN_KIND_TENSOR;
	}
	return 0;
}

int pn_infer_SequenceMap(pn_ictx *c)
{
	const pn_graph *g = graph_attr(c->node, "body");
	if (!g)
		return pn_ifail(c, "SequenceMap needs a body graph");
	for (int i = 0; i < c->n_out; i++) {
		iset_decl(c, i, g, i, NULL);
		c->out[i].type.kind = PN_KIND_SEQUENCE;
	}
	return 0;
}

/* --- If ---------------------------------------------------------------------------------- */

int pn_kernel_If(pn_kctx *k)
{
	const pn_tensor *cond = k->in[0];
	if (cond->kind != PN_KIND_TENSOR || cond->numel != 1)
		return pn_kfail(k, "condition must be a single element");
	const pn_graph *g = graph_attr(k->node, truth(cond) ? "then_branch" : "else_branch");
	if (!g)
		return pn_kfail(k, "If needs then_branch and else_branch graphs");
	if (g->n_outputs < k->n_out)
		return pn_kfail(k, "branch has %d outputs, node %d", g->n_outputs, k->n_out);
	pn_tensor **out = calloc((size_t)g->n_outputs + 1, sizeof(*out));
	if (!out)
		return pn_kfail(k, "out of memory");
	int rc = run_body(k, g, NULL, 0, out);
	if (!rc)
		rc = take_all(k, 0, out, g->n_outputs);
	free_all(out, g->n_outputs);
	free(out);
	return rc;
}

/* --- stacking per-iteration outputs ------------------------------------------------------ */

/* A growing list of per-iteration tensors that end up stacked along a new
 * axis (Loop scan outputs). */
typedef struct stack {
	pn_tensor **t;
	int64_t n, cap;
} stack;

static int stack_push(stack *s, pn_tensor *t)
{
	if (s->n == s->cap) {
		int64_t c = s->cap ? s->cap * 2 : 16;
		pn_tensor **p = realloc(s->t, sizeof(*p) * (size_t)c);
		if (!p)
			return -1;
		s->t = p;
		s->cap = c;
	}
	s->t[s->n++] = t;
	return 0;
}

static void stack_free(stack *s)
{
	free_all(s->t, (int)s->n);
	free(s->t);
	memset(s, 0, sizeof(*s));
}

static int same_type(const pn_tensor *a, const pn_tensor *b)
{
	if (a->kind != b->kind || a->dtype != b->dtype || a->rank != b->rank)
		return 0;
	for (int d = 0; d < a->rank; d++)
		if (a->dims[d] != b->dims[d])
			return 0;
	return 1;
}

/* Stacks s along a new leading axis into a heap tensor. */
static pn_tensor *stack_join(pn_kctx *k, stack *s, const pn_type *decl)
{
	if (!s->n) {
		pn_tensor *t = empty_stack(decl, 0);
		if (!t)
			pn_kfail(k, "out of memory");
		return t;
	}
	const pn_tensor *t0 = s->t[0];
	if (t0->kind != PN_KIND_TENSOR || t0->rank + 1 > PN_MAX_RANK)
		return pn_kfail(k, "scan outputs must be tensors of rank < %d", PN_MAX_RANK), NULL;
	for (int64_t i = 1; i < s->n; i++)
		if (!same_type(s->t[i], t0))
			return pn_kfail(k, "scan output changes type or shape at iteration %lld",
					(long long)i), NULL;
	int64_t dims[PN_MAX_RANK];
	dims[0] = s->n;
	for (int d = 0; d < t0->rank; d++)
		dims[d + 1] = t0->dims[d];
	pn_tensor *o = pn_tensor_new(t0->dtype, t0->rank + 1, dims);
	if (!o)
		return pn_kfail(k, "cannot allocate a scan output of %lld iterations", (long long)s->n),
		       NULL;
	for (int64_t i = 0; i < s->n; i++)
		pn_axis_copy(o->data, s->n, i, s->t[i]->data, 1, 0, 1, 1, t0->numel, t0->dtype);
	return o;
}

/* --- Loop ---------------------------------------------------------------------------------- */

typedef struct loop_state {
	int n_carry, n_scan;
	pn_tensor **cur;      /* loop-carried values */
	uint8_t *owned;       /* cur[i] is a heap tensor of ours (else a node input) */
	stack *scans;
	pn_tensor **in, **out; /* body inputs and outputs of one iteration */
} loop_state;

static void loop_free(loop_state *s)
{
	for (int i = 0; s->cur && i < s->n_carry; i++)
		if (s->owned[i])
			pn_tensor_free(s->cur[i]);
	for (int i = 0; s->scans && i < s->n_scan; i++)
		stack_free(&s->scans[i]);
	if (s->out)
		free_all(s->out, 1 + s->n_carry + s->n_scan);
	free(s->cur);
	free(s->owned);
	free(s->scans);
	free(s->in);
	free(s->out);
}

/* One iteration: runs the body and takes in what it produced.  *cond gets
 * the body's condition output. */
static int loop_step(pn_kctx *k, const pn_graph *g, loop_state *s, int *cond)
{
	int n_out = 1 + s->n_carry + s->n_scan;
	for (int i = 0; i < s->n_carry; i++)
		s->in[2 + i] = s->cur[i];
	if (run_body(k, g, s->in, 2 + s->n_carry, s->out))
		return -1;
	*cond = truth(s->out[0]);
	for (int i = 0; i < s->n_carry; i++) {
		if (s->owned[i])
			pn_tensor_free(s->cur[i]);
		s->cur[i] = s->out[1 + i];
		s->owned[i] = 1;
		s->out[1 + i] = NULL;
	}
	for (int i = 0; i < s->n_scan; i++) {
		if (stack_push(&s->scans[i], s->out[1 + s->n_carry + i]))
			return pn_kfail(k, "out of memory");
		s->out[1 + s->n_carry + i] = NULL;
	}
	free_all(s->out, n_out);
	return 0;
}

static int loop_outputs(pn_kctx *k, const pn_graph *g, loop_state *s)
{
	for (int i = 0; i < s->n_carry && i < k->n_out; i++) {
		pn_tensor *t = s->owned[i] ? s->cur[i] : s->cur[i] ? pn_tensor_clone(s->cur[i]) : NULL;
		s->owned[i] = 0;
		if (!s->cur[i])
			return pn_kfail(k, "loop-carried value %d is absent", i);
		if (pn_out_take(k, i, t))
			return -1;
	}
	for (int i = 0; i < s->n_scan && s->n_carry + i < k->n_out; i++) {
		pn_tensor *t = stack_join(k, &s->scans[i], body_out_type(g, 1 + s->n_carry + i));
		if (!t || pn_out_take(k, s->n_carry + i, t))
			return -1;
		stack_free(&s->scans[i]);
	}
	return 0;
}

/*
 * The loop runs while (no trip count or i < M) and cond.  The body's
 * condition output is honoured even when the node has no cond input: the
 * spec's table calls it ignored there, but ONNX Runtime and the ONNX
 * reference implementation both stop on it, and models rely on that.
 */
int pn_kernel_Loop(pn_kctx *k)
{
	const pn_graph *g = graph_attr(k->node, "body");
	if (!g)
		return pn_kfail(k, "Loop needs a body graph");
	const pn_tensor *m = pn_kin(k, 0), *c = pn_kin(k, 1);
	loop_state s = {.n_carry = k->n_in - 2};
	s.n_scan = g->n_outputs - 1 - s.n_carry;
	if (s.n_carry < 0 || s.n_scan < 0 || g->n_inputs != 2 + s.n_carry)
		return pn_kfail(k, "body has %d inputs and %d outputs for %d loop-carried values",
				g->n_inputs, g->n_outputs, s.n_carry);
	if ((m && (m->kind != PN_KIND_TENSOR || m->numel != 1)) ||
	    (c && (c->kind != PN_KIND_TENSOR || c->numel != 1)))
		return pn_kfail(k, "M and cond must be single elements");
	int64_t trip = m ? pn_tensor_get_i64(m, 0) : INT64_MAX;
	int cond = c ? truth(c) : 1;
	size_t nc = (size_t)s.n_carry + 1, no = (size_t)g->n_outputs + 1;
	s.cur = calloc(nc, sizeof(*s.cur));
	s.owned = calloc(nc, 1);
	s.scans = calloc((size_t)s.n_scan + 1, sizeof(*s.scans));
	s.in = calloc(nc + 2, sizeof(*s.in));
	s.out = calloc(no, sizeof(*s.out));
	pn_tensor *iter = pn_tensor_new(PN_INT64, 0, NULL), *cin = pn_tensor_new(PN_BOOL, 0, NULL);
	int rc = (s.cur && s.owned && s.scans && s.in && s.out && iter && cin)
			 ? 0 : pn_kfail(k, "out of memory");
	for (int i = 0; !rc && i < s.n_carry; i++)
		s.cur[i] = pn_kin(k, 2 + i);
	if (!rc) {
		s.in[0] = iter;
		s.in[1] = cin;
	}
	for (int64_t i = 0; !rc && i < trip && cond; i++) {
		((int64_t *)iter->data)[0] = i;
		((uint8_t *)cin->data)[0] = 1;
		rc = loop_step(k, g, &s, &cond);
	}
	if (!rc)
		rc = loop_outputs(k, g, &s);
	pn_tensor_free(iter);
	pn_tensor_free(cin);
	loop_free(&s);
	return rc;
}

/* --- Scan ----------------------------------------------------------------------------------- */

/* One scan over T steps (for opset 8: one batch entry).  Inputs are
 * borrowed; final states and stacked scan outputs come back as heap
 * tensors. */
typedef struct scan_job {
	int n_state, n_in, n_out;          /* states, scan inputs, scan outputs */
	const pn_tensor **state0, **xs;
	int64_t T;
	const int64_t *in_axis, *in_dir;   /* normalised */
	const int64_t *out_axis, *out_dir; /* out_axis may be negative */
	pn_tensor **final, **ys;           /* results */
} scan_job;

/* The slices of each scan input for one step, as reusable tensors. */
static int scan_slices(pn_kctx *k, const scan_job *j, pn_tensor **el)
{
	for (int i = 0; i < j->n_in; i++) {
		const pn_tensor *x = j->xs[i];
		int64_t dims[PN_MAX_RANK];
		int a = (int)j->in_axis[i], r = 0;
		for (int d = 0; d < x->rank; d++)
			if (d != a)
				dims[r++] = x->dims[d];
		el[i] = pn_tensor_new(x->dtype, r, dims);
		if (!el[i])
			return pn_kfail(k, "out of memory");
	}
	return 0;
}

static void scan_fill(const scan_job *j, pn_tensor **el, int64_t t)
{
	for (int i = 0; i < j->n_in; i++) {
		const pn_tensor *x = j->xs[i];
		int a = (int)j->in_axis[i];
		int64_t idx = j->in_dir[i] ? j->T - 1 - t : t;
		free_strings(el[i]);
		pn_axis_copy(el[i]->data, 1, 0, x->data, x->dims[a], idx, 1,
			     pn_dims_prod(x->dims, 0, a), pn_dims_prod(x->dims, a + 1, x->rank), x->dtype);
	}
}

/* Places step t's output y into scan output i (allocated at the first step). */
static int scan_put(pn_kctx *k, const scan_job *j, int i, const pn_tensor *y, int64_t t)
{
	if (y->kind != PN_KIND_TENSOR)
		return pn_kfail(k, "scan output %d is not a tensor", i);
	int r = y->rank + 1;
	int a = pn_axis(j->out_axis[i], r);
	if (a < 0 || r > PN_MAX_RANK)
		return pn_kfail(k, "scan output axis %lld out of range", (long long)j->out_axis[i]);
	pn_tensor *o = j->ys[i];
	if (!o) {
		int64_t dims[PN_MAX_RANK];
		for (int d = 0, s = 0; d < r; d++)
			dims[d] = d == a ? j->T : y->dims[s++];
		o = j->ys[i] = pn_tensor_new(y->dtype, r, dims);
		if (!o)
			return pn_kfail(k, "out of memory");
	}
	for (int d = 0, s = 0; d < r; d++)
		if (d != a && o->dims[d] != y->dims[s++])
			return pn_kfail(k, "scan output %d changes shape at step %lld", i, (long long)t);
	if (o->dtype != y->dtype)
		return pn_kfail(k, "scan output %d changes dtype at step %lld", i, (long long)t);
	int64_t pos = j->out_dir[i] ? j->T - 1 - t : t;
	pn_axis_copy(o->data, j->T, pos, y->data, 1, 0, 1, pn_dims_prod(o->dims, 0, a),
		     pn_dims_prod(o->dims, a + 1, r), y->dtype);
	return 0;
}

static int scan_run(pn_kctx *k, const pn_graph *g, scan_job *j)
{
	int nb_in = j->n_state + j->n_in, nb_out = j->n_state + j->n_out;
	pn_tensor **in = calloc((size_t)nb_in + 1, sizeof(*in));
	pn_tensor **out = calloc((size_t)nb_out + 1, sizeof(*out));
	pn_tensor **el = calloc((size_t)j->n_in + 1, sizeof(*el));
	int rc = in && out && el ? 0 : pn_kfail(k, "out of memory");
	for (int i = 0; !rc && i < j->n_state; i++)
		j->final[i] = NULL;
	if (!rc)
		rc = scan_slices(k, j, el);
	for (int64_t t = 0; !rc && t < j->T; t++) {
		for (int i = 0; i < j->n_state; i++)
			in[i] = j->final[i] ? j->final[i] : (pn_tensor *)j->state0[i];
		scan_fill(j, el, t);
		for (int i = 0; i < j->n_in; i++)
			in[j->n_state + i] = el[i];
		rc = run_body(k, g, in, nb_in, out);
		for (int i = 0; !rc && i < j->n_state; i++) {
			pn_tensor_free(j->final[i]);
			j->final[i] = out[i];
			out[i] = NULL;
		}
		for (int i = 0; !rc && i < j->n_out; i++)
			rc = scan_put(k, j, i, out[j->n_state + i], t);
		if (out)
			free_all(out, nb_out);
	}
	for (int i = 0; !rc && i < j->n_state; i++)
		if (!j->final[i] && !(j->final[i] = pn_tensor_clone(j->state0[i])))
			rc = pn_kfail(k, "out of memory");
	for (int i = 0; !rc && i < j->n_out; i++)
		if (!j->ys[i] &&
		    !(j->ys[i] = empty_stack(body_out_type(g, j->n_state + i), j->out_axis[i])))
			rc = pn_kfail(k, "out of memory");
	if (el)
		free_all(el, j->n_in);
	free(in);
	free(out);
	free(el);
	return rc;
}

/* Reads an ints attribute of n entries (default 0 each). */
static int ints_attr(pn_kctx *k, const char *name, int64_t *out, int n)
{
	for (int i = 0; i < n; i++)
		out[i] = 0;
	const pn_attr *a = pn_attr_find(k->node, name);
	if (!a)
		return 0;
	if (a->n != n)
		return pn_kfail(k, "%s has %d entries, expected %d", name, a->n, n);
	for (int i = 0; i < n; i++)
		out[i] = a->ints[i];
	return 0;
}

typedef struct scan_attrs {
	int64_t *in_axis, *in_dir, *out_axis, *out_dir;
} scan_attrs;

static int scan_attrs_read(pn_kctx *k, int n_in, int n_out, int v8, scan_attrs *a)
{
	int64_t *buf = calloc((size_t)(2 * n_in + 2 * n_out) + 1, sizeof(int64_t));
	if (!buf)
		return pn_kfail(k, "out of memory");
	a->in_axis = buf;
	a->in_dir = buf + n_in;
	a->out_axis = buf + 2 * n_in;
	a->out_dir = buf + 2 * n_in + n_out;
	if (v8)
		return ints_attr(k, "directions", a->in_dir, n_in);
	if (ints_attr(k, "scan_input_axes", a->in_axis, n_in) ||
	    ints_attr(k, "scan_input_directions", a->in_dir, n_in) ||
	    ints_attr(k, "scan_output_axes", a->out_axis, n_out) ||
	    ints_attr(k, "scan_output_directions", a->out_dir, n_out))
		return -1;
	return 0;
}

/* Opset 9+: scan axes and directions per input and output, no batch axis. */
static int scan9(pn_kctx *k, const pn_graph *g, scan_job *j, scan_attrs *a)
{
	j->T = -1;
	for (int i = 0; i < j->n_in; i++) {
		const pn_tensor *x = j->xs[i];
		int ax = x->kind == PN_KIND_TENSOR ? pn_axis(a->in_axis[i], x->rank) : -1;
		if (ax < 0)
			return pn_kfail(k, "scan input %d: axis %lld out of range", i,
					(long long)a->in_axis[i]);
		a->in_axis[i] = ax;
		if (j->T >= 0 && x->dims[ax] != j->T)
			return pn_kfail(k, "scan inputs differ in length (%lld vs %lld)",
					(long long)x->dims[ax], (long long)j->T);
		j->T = x->dims[ax];
	}
	if (j->T < 0)
		return pn_kfail(k, "Scan needs at least one scan input");
	j->in_axis = a->in_axis;
	j->in_dir = a->in_dir;
	j->out_axis = a->out_axis;
	j->out_dir = a->out_dir;
	if (scan_run(k, g, j))
		return -1;
	int rc = take_all(k, 0, j->final, j->n_state);
	int rc2 = take_all(k, j->n_state, j->ys, j->n_out);
	return rc ? rc : rc2;
}

/* Entry b of tensor x along axis 0, as a new heap tensor. */
static pn_tensor *batch_entry(const pn_tensor *x, int64_t b)
{
	pn_tensor *t = pn_tensor_new(x->dtype, x->rank - 1, x->dims + 1);
	if (t)
		pn_axis_copy(t->data, 1, 0, x->data, x->dims[0], b, 1, 1, t->numel, x->dtype);
	return t;
}

/* Writes per-batch result y into entry b of the batched output *o, made at
 * the first batch: [B, y dims] with y's axis 0 widened to pad when pad >= 0
 * (scan outputs of shorter sequences leave the rest zero). */
static int batch_put(pn_kctx *k, pn_tensor **o, const pn_tensor *y, int64_t B, int64_t b,
		     int64_t pad)
{
	if (y->rank + 1 > PN_MAX_RANK)
		return pn_kfail(k, "output rank too large");
	int64_t dims[PN_MAX_RANK];
	dims[0] = B;
	for (int d = 0; d < y->rank; d++)
		dims[d + 1] = y->dims[d];
	if (pad >= 0 && y->rank > 0)
		dims[1] = pad;
	if (!*o && !(*o = pn_tensor_new(y->dtype, y->rank + 1, dims)))
		return pn_kfail(k, "out of memory");
	pn_tensor *t = *o;
	int same = t->dtype == y->dtype && t->rank == y->rank + 1;
	for (int d = 1; same && d < t->rank; d++)
		same = t->dims[d] == dims[d];
	if (!same)
		return pn_kfail(k, "Scan output differs in type or shape between batches");
	int64_t stride = pn_dims_prod(t->dims, 1, t->rank);
	char *dst = (char *)t->data + (size_t)(b * stride) * pn_dtype_size(t->dtype);
	pn_axis_copy(dst, 1, 0, y->data, 1, 0, 1, 1, y->numel, y->dtype);
	return 0;
}

/* Opset 8: axis 0 is the batch, axis 1 the sequence; optional
 * sequence_lens gives each batch entry its own length. */
static int scan8(pn_kctx *k, const pn_graph *g, scan_job *j, scan_attrs *a)
{
	const pn_tensor *lens = pn_kin(k, 0);
	if (!j->n_in)
		return pn_kfail(k, "Scan needs at least one scan input");
	int64_t B = j->xs[0]->dims[0], T = j->xs[0]->rank > 1 ? j->xs[0]->dims[1] : -1;
	for (int i = 0; i < j->n_in; i++)
		if (j->xs[i]->rank < 2 || j->xs[i]->dims[0] != B || j->xs[i]->dims[1] != T)
			return pn_kfail(k, "scan inputs must share [batch, sequence] leading dims");
	for (int i = 0; i < j->n_state; i++)
		if (j->state0[i]->rank < 1 || j->state0[i]->dims[0] != B)
			return pn_kfail(k, "state %d has no batch dimension of %lld", i, (long long)B);
	if (lens && lens->numel != B)
		return pn_kfail(k, "sequence_lens has %lld entries for batch %lld",
				(long long)lens->numel, (long long)B);
	int ns = j->n_state, nx = j->n_in, ny = j->n_out;
	pn_tensor **res = calloc((size_t)(ns + ny) + 1, sizeof(*res));
	pn_tensor **tmp = calloc((size_t)(ns + nx) + 1, sizeof(*tmp));
	const pn_tensor **state0 = j->state0, **xs = j->xs;
	int rc = res && tmp ? 0 : pn_kfail(k, "out of memory");
	j->in_axis = a->in_axis;   /* zeros: the batch entry's axis 0 is the sequence */
	j->in_dir = a->in_dir;
	j->out_axis = a->out_axis;
	j->out_dir = a->out_dir;
	for (int64_t b = 0; !rc && b < B; b++) {
		for (int i = 0; i < ns + nx && !rc; i++)
			if (!(tmp[i] = batch_entry(i < ns ? state0[i] : xs[i - ns], b)))
				rc = pn_kfail(k, "out of memory");
		int64_t len = lens ? pn_tensor_get_i64(lens, b) : T;
		if (!rc && (len < 0 || len > T))
			rc = pn_kfail(k, "sequence length %lld out of [0, %lld]", (long long)len,
				      (long long)T);
		if (!rc) {
			j->state0 = (const pn_tensor **)tmp;
			j->xs = (const pn_tensor **)tmp + ns;
			j->T = len;
			rc = scan_run(k, g, j);
		}
		for (int i = 0; !rc && i < ns; i++)
			rc = batch_put(k, &res[i], j->final[i], B, b, -1);
		for (int i = 0; !rc && len && i < ny; i++)
			rc = batch_put(k, &res[ns + i], j->ys[i], B, b, T);
		free_all(j->final, ns);
		free_all(j->ys, ny);
		if (tmp)
			free_all(tmp, ns + nx);
	}
	for (int i = 0; !rc && i < ns + ny; i++)
		if (!res[i] && !(res[i] = empty_stack(body_out_type(g, i), 0)))
			rc = pn_kfail(k, "out of memory");
	if (!rc)
		rc = take_all(k, 0, res, ns + ny);
	if (res)
		free_all(res, ns + ny);
	free(res);
	free(tmp);
	return rc;
}

int pn_kernel_Scan(pn_kctx *k)
{
	const pn_graph *g = graph_attr(k->node, "body");
	if (!g)
		return pn_kfail(k, "Scan needs a body graph");
	int v8 = k->opset < 9, first = v8 ? 1 : 0;
	scan_job j = {.n_in = (int)pn_attr_int(k->node, "num_scan_inputs", 0)};
	j.n_state = k->n_in - first - j.n_in;
	j.n_out = g->n_outputs - j.n_state;
	if (j.n_in < 1 || j.n_state < 0 || j.n_out < 0 || g->n_inputs != j.n_state + j.n_in)
		return pn_kfail(k, "body has %d inputs and %d outputs for %d states and %d scan inputs",
				g->n_inputs, g->n_outputs, j.n_state, j.n_in);
	pn_tensor **in = k->in + first;
	for (int i = 0; i < j.n_state + j.n_in; i++)
		if (!in[i] || in[i]->kind != PN_KIND_TENSOR)
			return pn_kfail(k, "input %d must be a tensor", first + i);
	j.state0 = (const pn_tensor **)in;
	j.xs = (const pn_tensor **)in + j.n_state;
	j.final = calloc((size_t)j.n_state + 1, sizeof(*j.final));
	j.ys = calloc((size_t)j.n_out + 1, sizeof(*j.ys));
	scan_attrs a = {0};
	int rc = j.final && j.ys ? 0 : pn_kfail(k, "out of memory");
	if (!rc)
		rc = scan_attrs_read(k, j.n_in, j.n_out, v8, &a);
	if (!rc)
		rc = v8 ? scan8(k, g, &j, &a) : scan9(k, g, &j, &a);
	if (j.final)
		free_all(j.final, j.n_state);
	if (j.ys)
		free_all(j.ys, j.n_out);
	free(j.final);
	free(j.ys);
	free(a.in_axis);
	return rc;
}

/* --- SequenceMap ------------------------------------------------------------------------------ */

static int is_seq_value(const pn_tensor *t)
{
	return t && (t->kind == PN_KIND_SEQUENCE ||
		     (t->kind == PN_KIND_OPTIONAL && !t->none && t->elem_kind == PN_KIND_SEQUENCE));
}

int pn_kernel_SequenceMap(pn_kctx *k)
{
	const pn_graph *g = graph_attr(k->node, "body");
	if (!g)
		return pn_kfail(k, "SequenceMap needs a body graph");
	if (!is_seq_value(k->in[0]))
		return pn_kfail(k, "input 0 must be a sequence");
	int n = k->in[0]->n_items;
	for (int i = 1; i < k->n_in; i++)
		if (is_seq_value(k->in[i]) && k->in[i]->n_items != n)
			return pn_kfail(k, "input %d has %d items, input 0 has %d", i,
					k->in[i]->n_items, n);
	if (g->n_outputs < k->n_out)
		return pn_kfail(k, "body has %d outputs, node %d", g->n_outputs, k->n_out);
	for (int o = 0; o < k->n_out; o++)
		if (!pn_out_container(k, o, PN_KIND_SEQUENCE, body_out_type(g, o)->dtype))
			return -1;
	pn_tensor **in = calloc((size_t)k->n_in + 1, sizeof(*in));
	pn_tensor **out = calloc((size_t)g->n_outputs + 1, sizeof(*out));
	int rc = in && out ? 0 : pn_kfail(k, "out of memory");
	for (int s = 0; !rc && s < n; s++) {
		for (int i = 0; i < k->n_in; i++)
			in[i] = is_seq_value(k->in[i]) ? k->in[i]->items[s] : k->in[i];
		rc = run_body(k, g, in, k->n_in, out);
		for (int o = 0; !rc && o < k->n_out; o++) {
			if (out[o]->kind != PN_KIND_TENSOR) {
				rc = pn_kfail(k, "body output %d is not a tensor", o);
				break;
			}
			k->out[o]->dtype = out[o]->dtype;
			if (pn_seq_push(k->out[o], out[o]))
				rc = pn_kfail(k, "out of memory");
			else
				out[o] = NULL;
		}
		if (out)
			free_all(out, g->n_outputs);
	}
	free(in);
	free(out);
	return rc;
}
