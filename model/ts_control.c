/*
 * ts_control.c - control flow that depends on values known only at run
 * time, lowered to ONNX's: an `if` on a tensor becomes an If whose two
 * bodies hold the branches' nodes, a `for` over range(n) with n a run-time
 * int becomes a Loop, and so does a `while` on a tensor (its body ends by
 * computing the condition again).  What a branch or a body hands on is the set of
 * names it rebinds (Python's scoping makes that the whole interface).
 */
#include <string.h>

#include "common/err.h"
#include "model/ts_internal.h"

/* The names a branch or a body changed: bound to another value than in
 * before (new names too), in the order the branch bound them. */
static int changed_names(const ts_frame *before, const ts_frame *after, const char **out, int max)
{
	int k = 0;
	for (int i = 0; i < after->n && k < max; i++) {
		ts_val **old = ts_lookup((ts_frame *)before, after->names[i]);
		if (!old || *old != after->vals[i])
			out[k++] = after->names[i];
	}
	return k;
}

static int has_name(const char **v, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return 1;
	return 0;
}

/* A value carried out of a body as a graph output: an Identity so that
 * the body's output has a name of its own. */
static Onnx__ValueInfoProto *body_output(ts_ctx *c, ts_val *v, ts_val *like)
{
	const char *in = ts_as_tensor(c, v);
	if (!in)
		return NULL;
	Onnx__NodeProto *n = ts_node(c->cur, "Identity", &in, 1, 1);
	if (!n)
		return NULL;
	int dtype = v->kind == TSV_TENSOR ? v->dtype : like && like->kind == TSV_TENSOR ? like->dtype : 0;
	if (!dtype)
		dtype = v->kind == TSV_FLOAT ? PN_FLOAT : v->kind == TSV_BOOL ? PN_BOOL : PN_INT64;
	return ts_value_info(c->cur, n->output[0], dtype, -1, NULL, NULL);
}

int ts_lower_if(ts_ctx *c, ts_frame *f, const pn_ts_stmt *s, ts_val *cond)
{
	ts_graph *outer = c->cur;
	ts_graph g[2];
	ts_frame bf[2];
	const pn_ts_block *blocks[2] = {&s->body, &s->orelse};
	for (int k = 0; k < 2; k++) {
		ts_graph_init(&g[k], c->a, outer, &c->counter, &c->total);
		if (ts_frame_copy(c, f, &bf[k]))
			return -1;
		c->cur = &g[k];
		int r = ts_exec_block(c, &bf[k], blocks[k]);
		c->cur = outer;
		if (r < 0)
			return -1;
		if (r != FLOW_NEXT)
			return ts_err(c, "line %d: return, break or continue inside an if on a run-time condition",
				      s->line);
	}
	const char *names[256];
	int n = changed_names(f, &bf[0], names, 256);
	const char *more[256];
	int m = changed_names(f, &bf[1], more, 256);
	for (int i = 0; i < m && n < 256; i++)
		if (!has_name(names, n, more[i]))
			names[n++] = more[i];
	/* a name bound in only one branch and not before cannot be used after */
	int k = 0;
	for (int i = 0; i < n; i++)
		if (ts_lookup(&bf[0], names[i]) && ts_lookup(&bf[1], names[i]))
			names[k++] = names[i];
	n = k;
	ts_val *first[256];
	for (int b = 0; b < 2; b++) {
		c->cur = &g[b];
		for (int i = 0; i < n; i++) {
			ts_val *v = *ts_lookup(&bf[b], names[i]);
			if (b == 0)
				first[i] = v;
			if (ts_graph_output(&g[b], body_output(c, v, b ? first[i] : NULL))) {
				c->cur = outer;
				return ts_err(c, "line %d: a branch value that is not a tensor or a number", s->line);
			}
		}
		c->cur = outer;
	}
	const char *cn = ts_as_tensor(c, cond);
	Onnx__NodeProto *node = cn ? ts_node(outer, "If", &cn, 1, n) : NULL;
	Onnx__GraphProto *then_g = ts_graph_finish(&g[0], "then_branch");
	Onnx__GraphProto *else_g = ts_graph_finish(&g[1], "else_branch");
	if (!node || !then_g || !else_g || ts_attr_graph(outer, node, "then_branch", then_g) ||
	    ts_attr_graph(outer, node, "else_branch", else_g))
		return ts_err(c, "out of memory");
	for (int i = 0; i < n; i++) {
		ts_val *v = ts_tensor(c, node->output[i], first[i]->kind == TSV_TENSOR ? first[i]->dtype : 0,
				      first[i]->kind == TSV_TENSOR ? first[i]->rank : 0);
		if (!v || ts_bind(c, f, names[i], v))
			return -1;
		if (first[i]->kind != TSV_TENSOR)
			v->scalar = 1;
	}
	return FLOW_NEXT;
}

/* An ONNX Loop whose carried values are the names the body rebinds that
 * existed before it: `for target in range(count)` (target set, cond NULL)
 * or `while s->value` (cond its value before the first step, count NULL). */
static int lower_loop(ts_ctx *c, ts_frame *f, const pn_ts_stmt *s, const char *target,
		      ts_val *count, ts_val *cond)
{
	ts_graph *outer = c->cur;
	/* first pass: which names does the body rebind? run it on a scratch
	 * graph and throw the nodes away */
	ts_graph scratch;
	ts_frame sf;
	ts_graph_init(&scratch, c->a, outer, &c->counter, &c->total);
	if (ts_frame_copy(c, f, &sf))
		return -1;
	ts_val *iv = ts_tensor(c, ts_fresh_name(outer, "iter"), PN_INT64, 0);
	if (!iv)
		return -1;
	iv->scalar = 1;
	if (target && ts_bind(c, &sf, target, iv))
		return -1;
	c->cur = &scratch;
	int r = ts_exec_block(c, &sf, &s->body);
	c->cur = outer;
	if (r < 0)
		return -1;
	if (r != FLOW_NEXT)
		return ts_err(c, "line %d: return, break or continue inside a run-time loop", s->line);
	const char *names[256];
	int n0 = changed_names(f, &sf, names, 256), n = 0;
	for (int i = 0; i < n0; i++)
		if (ts_lookup(f, names[i]) && (!target || strcmp(names[i], target)))
			names[n++] = names[i];
	/* second pass: the body proper, its carried values as inputs */
	ts_graph body;
	ts_frame bf;
	ts_graph_init(&body, c->a, outer, &c->counter, &c->total);
	if (ts_frame_copy(c, f, &bf))
		return -1;
	c->cur = &body;
	const char *iname = ts_fresh_name(&body, "iter");
	const char *cname = ts_fresh_name(&body, "cond");
	ts_val *it = ts_tensor(c, iname, PN_INT64, 0);
	if (!it || (target && ts_bind(c, &bf, target, it)) ||
	    ts_graph_input(&body, ts_value_info(&body, iname, PN_INT64, 0, NULL, NULL)) ||
	    ts_graph_input(&body, ts_value_info(&body, cname, PN_BOOL, 0, NULL, NULL))) {
		c->cur = outer;
		return -1;
	}
	it->scalar = 1;
	const char *init[258];
	ts_val *before[256];
	for (int i = 0; i < n; i++) {
		before[i] = *ts_lookup(f, names[i]);
		c->cur = outer;
		init[2 + i] = ts_as_tensor(c, before[i]);
		c->cur = &body;
		int dt = before[i]->kind == TSV_TENSOR ? before[i]->dtype
			 : before[i]->kind == TSV_FLOAT ? PN_FLOAT : PN_INT64;
		const char *in = ts_fresh_name(&body, "carried");
		ts_val *cv = ts_tensor(c, in, dt, before[i]->kind == TSV_TENSOR ? before[i]->rank : 0);
		if (!init[2 + i] || !cv || ts_bind(c, &bf, names[i], cv) ||
		    ts_graph_input(&body, ts_value_info(&body, in, dt, -1, NULL, NULL))) {
			c->cur = outer;
			return -1;
		}
		cv->scalar = before[i]->kind != TSV_TENSOR;
		memcpy(cv->dims, before[i]->dims, sizeof(cv->dims));
	}
	r = ts_exec_block(c, &bf, &s->body);
	if (r == FLOW_NEXT && cond) {   /* the condition, for the next step */
		ts_val *again = ts_eval(c, &bf, s->value);
		cname = again ? ts_as_tensor(c, again) : NULL;
		if (!cname)
			r = -1;
	}
	if (r == FLOW_NEXT) {
		Onnx__NodeProto *cid = ts_node(&body, "Identity", &cname, 1, 1);
		if (!cid || ts_graph_output(&body, ts_value_info(&body, cid->output[0], PN_BOOL, 0, NULL, NULL)))
			r = -1;
		for (int i = 0; r == FLOW_NEXT && i < n; i++)
			if (ts_graph_output(&body, body_output(c, *ts_lookup(&bf, names[i]), before[i])))
				r = ts_err(c, "line %d: a loop value that is not a tensor or a number", s->line);
	}
	c->cur = outer;
	if (r < 0)
		return -1;
	init[0] = count ? ts_as_tensor(c, count) : "";
	init[1] = cond ? ts_as_tensor(c, cond) : "";
	Onnx__NodeProto *node = init[0] && init[1] ? ts_node(outer, "Loop", init, 2 + n, n) : NULL;
	Onnx__GraphProto *bg = ts_graph_finish(&body, "body");
	if (!node || !bg || ts_attr_graph(outer, node, "body", bg))
		return ts_err(c, "out of memory");
	for (int i = 0; i < n; i++) {
		ts_val *v = ts_tensor(c, node->output[i], before[i]->kind == TSV_TENSOR ? before[i]->dtype : PN_INT64,
				      before[i]->kind == TSV_TENSOR ? before[i]->rank : 0);
		if (!v || ts_bind(c, f, names[i], v))
			return -1;
		v->scalar = before[i]->kind != TSV_TENSOR;
	}
	return FLOW_NEXT;
}

int ts_lower_loop(ts_ctx *c, ts_frame *f, const pn_ts_stmt *s, ts_val *count)
{
	if (s->targets[0]->kind != PN_TSE_NAME)
		return ts_err(c, "line %d: a run-time loop with a tuple target", s->line);
	return lower_loop(c, f, s, s->targets[0]->s, count, NULL);
}

int ts_lower_while(ts_ctx *c, ts_frame *f, const pn_ts_stmt *s, ts_val *cond)
{
	return lower_loop(c, f, s, NULL, NULL, cond);
}
