/*
 * cost.c - the default cost, the per-node dispatch and the cost of a whole
 * subgraph (see cost.h).  The per-op functions live in runtime/ops/cost_*.c,
 * one file per family, found through the op table.
 */
#include "runtime/cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "runtime/ops/cost_impl.h"

/* --- types -------------------------------------------------------------------- */

double pn_type_numel(const pn_type *t)
{
	if (!t || t->kind != PN_KIND_TENSOR || !pn_type_is_static(t))
		return 0;
	double n = 1;
	for (int i = 0; i < t->rank; i++)
		n *= (double)t->dims[i];
	return n;
}

/* Strings count no bytes: their length is not part of the type, and no
 * tensor of strings is ever on a hot path worth a roofline. */
double pn_type_bytes(const pn_type *t)
{
	if (!t || t->dtype == PN_STRING)
		return 0;
	return pn_type_numel(t) * (double)pn_dtype_size(t->dtype);
}

/* --- helpers for the op files ---------------------------------------------------- */

static const pn_type *static_tensor(const pn_type *t)
{
	return t && t->kind == PN_KIND_TENSOR && pn_type_is_static(t) ? t : NULL;
}

const pn_type *pn_cin(const pn_costctx *c, int i)
{
	return i >= 0 && i < c->n_in && c->in ? static_tensor(c->in[i]) : NULL;
}

const pn_type *pn_cout(const pn_costctx *c, int i)
{
	return i >= 0 && i < c->n_out && c->out ? static_tensor(c->out[i]) : NULL;
}

const pn_tensor *pn_cval(const pn_costctx *c, int i)
{
	const pn_tensor *t = i >= 0 && i < c->n_in && c->in_value ? c->in_value[i] : NULL;
	return t && t->kind == PN_KIND_TENSOR && t->data ? t : NULL;
}

double pn_cin_numel(const pn_costctx *c, int i)
{
	return pn_type_numel(pn_cin(c, i));
}

double pn_cout_numel(const pn_costctx *c, int i)
{
	return pn_type_numel(pn_cout(c, i));
}

int64_t pn_cdim(const pn_type *t, int64_t axis)
{
	if (!t || t->rank < 0)
		return -1;
	if (axis < 0)
		axis += t->rank;
	return axis >= 0 && axis < t->rank ? t->dims[axis] : -1;
}

double pn_clog2(double n)
{
	return n > 2 ? log2(n) : 1;
}

int pn_cost_per_output(pn_costctx *c, double per_elem)
{
	c->flops = per_elem * pn_cout_numel(c, 0);
	return 0;
}

int pn_cost_per_input(pn_costctx *c, double per_elem)
{
	c->flops = per_elem * pn_cin_numel(c, 0);
	return 0;
}

/* --- one node --------------------------------------------------------------------- */

int pn_cost_default(pn_costctx *c)
{
	c->flops = c->bytes_read = c->bytes_written = 0;
	for (int i = 0; i < c->n_in; i++)
		c->bytes_read += pn_type_bytes(pn_cin(c, i));
	for (int i = 0; i < c->n_out; i++) {
		c->flops += pn_cout_numel(c, i);
		c->bytes_written += pn_type_bytes(pn_cout(c, i));
	}
	return 0;
}

int pn_node_cost(const pn_node *n, const pn_type *const *in, const pn_type *const *out,
		 const pn_tensor *const *in_value, double *flops, double *bytes_read,
		 double *bytes_written)
{
	pn_costctx c = {
		.node = n, .opset = n->opset, .n_in = n->n_in, .n_out = n->n_out,
		.in = in, .out = out, .in_value = in_value,
	};
	pn_cost_default(&c);
	pn_cost_fn fn = pn_op_cost(n->op);
	if (fn) {
		pn_costctx dflt = c;
		/* A figure that came out negative or NaN means a shape the
		 * function did not expect: the default is the honest answer. */
		if (fn(&c) || !(c.flops >= 0 && c.bytes_read >= 0 && c.bytes_written >= 0))
			c = dflt;
	}
	*flops = c.flops;
	*bytes_read = c.bytes_read;
	*bytes_written = c.bytes_written;
	return 0;
}

/* --- a whole graph ----------------------------------------------------------------- */

/* Values a fused kernel reads from memory: graph inputs, values captured
 * from an enclosing graph, initializers and Constant outputs.  Everything
 * else is computed inside and never leaves registers or cache. */
static int is_source(const pn_graph *g, const pn_value *v)
{
	if (v->role == PN_ROLE_NODE)
		return v->producer >= 0 && g->nodes[v->producer].op == PN_OP_Constant;
	return 1;
}

/* Bytes that cross the boundary of a fused graph: each source as much as
 * its readers touch, but at most once whole however many nodes read it (an
 * unread initializer never leaves memory; a table the graph only gathers
 * from counts the rows gathered), and each graph output once. */
static int fused_bytes(const pn_graph *g, const pn_type *types, double *out, char *err)
{
	double *touched = calloc((size_t)g->n_values + 1, sizeof(double));
	if (!touched)
		return pn_fail(err, "out of memory");
	for (int i = 0; i < g->n_nodes; i++) {
		const pn_node *n = &g->nodes[i];
		const pn_type *out0 = n->n_out > 0 && n->out[0] >= 0 ? &types[n->out[0]] : NULL;
		for (int k = 0; k < n->n_in; k++)
			if (n->in[k] >= 0)
				touched[n->in[k]] += pn_cost_slot_read(n, k, &types[n->in[k]], out0);
		for (int k = 0; k < n->n_implicit; k++)
			touched[n->implicit[k]] += pn_type_bytes(&types[n->implicit[k]]);
	}
	double b = 0;
	for (int v = 0; v < g->n_values; v++) {
		double whole = pn_type_bytes(&types[v]);
		if (is_source(g, &g->values[v]))
			b += touched[v] < whole ? touched[v] : whole;
		if (g->values[v].is_output)
			b += whole;
	}
	free(touched);
	*out = b;
	return 0;
}

/* FLOPs and unfused traffic: every node on its own, each intermediate
 * written by its producer and read by each consumer. */
int pn_nodes_cost(const pn_graph *g, const pn_type *types, const pn_tensor *const *values,
		  const int32_t *nodes, int n_nodes, pn_graph_cost *out, char *err)
{
	int count = nodes ? n_nodes : g->n_nodes;
	int most = 1;
	for (int i = 0; i < count; i++) {
		const pn_node *n = &g->nodes[nodes ? nodes[i] : i];
		most = n->n_in > most ? n->n_in : most;
		most = n->n_out > most ? n->n_out : most;
	}
	const pn_type **in = calloc((size_t)most, sizeof(void *));
	const pn_type **outs = calloc((size_t)most, sizeof(void *));
	const pn_tensor **val = calloc((size_t)most, sizeof(void *));
	for (int i = 0; in && outs && val && i < count; i++) {
		const pn_node *n = &g->nodes[nodes ? nodes[i] : i];
		for (int k = 0; k < n->n_in; k++) {
			int v = n->in[k];
			in[k] = v >= 0 ? &types[v] : NULL;
			val[k] = v < 0 ? NULL : values ? values[v] : g->values[v].data;
		}
		for (int k = 0; k < n->n_out; k++)
			outs[k] = n->out[k] >= 0 ? &types[n->out[k]] : NULL;
		double f, r, w;
		pn_node_cost(n, in, outs, val, &f, &r, &w);
		out->flops += f;
		out->bytes_unfused += r + w;
	}
	int ok = in && outs && val;
	free(in);
	free(outs);
	free(val);
	return ok ? 0 : pn_fail(err, "out of memory");
}

int pn_graph_cost_of(const pn_graph *g, const pn_type *types, pn_graph_cost *out, char *err)
{
	memset(out, 0, sizeof(*out));
	if (!types) {
		pn_type *own = malloc(sizeof(pn_type) * (size_t)(g->n_values + 1));
		if (!own)
			return pn_fail(err, "out of memory");
		for (int v = 0; v < g->n_values; v++)
			own[v] = g->values[v].type;
		int rc = pn_graph_cost_of(g, own, out, err);
		free(own);
		return rc;
	}
	out->nodes = g->n_nodes;
	if (pn_nodes_cost(g, types, NULL, NULL, 0, out, err))
		return -1;
	return fused_bytes(g, types, &out->bytes_fused, err);
}

void pn_body_cost(const pn_graph *body, pn_graph_cost *out)
{
	char err[PN_ERRLEN];
	if (!body || pn_graph_cost_of(body, NULL, out, err))
		memset(out, 0, sizeof(*out));
}
