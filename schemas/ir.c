/*
 * ir.c - small helpers over the graph IR: attribute lookup, linking values
 * to their producers and consumers, and a stable topological sort.
 */
#include "schemas/ir.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"

const pn_attr *pn_attr_find(const pn_node *n, const char *name)
{
	for (int i = 0; i < n->n_attr; i++)
		if (!strcmp(n->attrs[i].name, name))
			return &n->attrs[i];
	return NULL;
}

int64_t pn_attr_int(const pn_node *n, const char *name, int64_t dflt)
{
	const pn_attr *a = pn_attr_find(n, name);
	return a && a->type == PN_ATTR_INT ? a->i : dflt;
}

float pn_attr_float(const pn_node *n, const char *name, float dflt)
{
	const pn_attr *a = pn_attr_find(n, name);
	if (a && a->type == PN_ATTR_FLOAT)
		return a->f;
	if (a && a->type == PN_ATTR_INT)
		return (float)a->i;
	return dflt;
}

const char *pn_attr_str(const pn_node *n, const char *name, const char *dflt)
{
	const pn_attr *a = pn_attr_find(n, name);
	return a && a->type == PN_ATTR_STRING ? a->s : dflt;
}

int pn_attr_ints(const pn_node *n, const char *name, int64_t *out, int max)
{
	const pn_attr *a = pn_attr_find(n, name);
	if (!a || a->type != PN_ATTR_INTS)
		return -1;
	int k = a->n < max ? a->n : max;
	for (int i = 0; i < k; i++)
		out[i] = a->ints[i];
	return a->n;
}

int pn_graph_find_value(const pn_graph *g, const char *name)
{
	for (int i = 0; i < g->n_values; i++)
		if (!strcmp(g->values[i].name, name))
			return i;
	return -1;
}

static int each_use(const pn_graph *g, int v, int depth, int max_depth, int (*through)(int op),
		    pn_use_fn f, void *ud)
{
	const pn_value *val = &g->values[v];
	for (int c = 0; c < val->n_consumers; c++) {
		const pn_node *n = &g->nodes[val->consumers[c]];
		for (int k = 0; k < n->n_in; k++) {
			if (n->in[k] != v)
				continue;
			int r = f(g, n, k, ud);
			if (r)
				return r;
			if (through && through(n->op) && k == 0 && depth < max_depth && n->n_out > 0 &&
			    n->out[0] >= 0 &&
			    (r = each_use(g, n->out[0], depth + 1, max_depth, through, f, ud)))
				return r;
		}
	}
	return 0;
}

int pn_each_use(const pn_graph *g, int v, int max_depth, int (*through)(int op), pn_use_fn f,
		void *ud)
{
	return v < 0 || v >= g->n_values ? 0 : each_use(g, v, 0, max_depth, through, f, ud);
}

int64_t pn_model_opset(const pn_model *m, const char *domain)
{
	if (!domain || !strcmp(domain, "ai.onnx"))
		domain = "";
	for (int i = 0; i < m->n_opsets; i++) {
		const char *d = m->opsets[i].domain;
		if (!d || !strcmp(d, "ai.onnx"))
			d = "";
		if (!strcmp(d, domain))
			return m->opsets[i].version;
	}
	return 0;
}

/* Appends v to the implicit inputs of node n unless already there. */
static int add_implicit(pn_node *n, int32_t v, int32_t *cap, pn_arena *a)
{
	for (int i = 0; i < n->n_implicit; i++)
		if (n->implicit[i] == v)
			return 0;
	if (n->n_implicit == *cap) {
		int32_t ncap = *cap ? *cap * 2 : 4;
		int32_t *p = pn_arena_alloc(a, sizeof(int32_t) * (size_t)ncap);
		if (!p)
			return -1;
		if (n->n_implicit)
			memcpy(p, n->implicit, sizeof(int32_t) * (size_t)n->n_implicit);
		n->implicit = p;
		*cap = ncap;
	}
	n->implicit[n->n_implicit++] = v;
	return 0;
}

static int collect_implicit(pn_node *n, pn_arena *a)
{
	int32_t cap = 0;
	n->n_implicit = 0;
	for (int i = 0; i < n->n_attr; i++) {
		const pn_attr *at = &n->attrs[i];
		int ng = at->type == PN_ATTR_GRAPH ? 1 : at->type == PN_ATTR_GRAPHS ? at->n : 0;
		for (int k = 0; k < ng; k++) {
			const pn_graph *sub = at->type == PN_ATTR_GRAPH ? at->g : at->graphs[k];
			if (!sub)
				continue;
			for (int j = 0; j < sub->n_outer; j++)
				if (add_implicit(n, sub->values[sub->outer[j]].outer, &cap, a))
					return -1;
		}
	}
	return 0;
}

int pn_graph_link(pn_graph *g, pn_arena *a, char *err)
{
	int32_t *count = calloc((size_t)g->n_values + 1, sizeof(int32_t));
	if (!count)
		return pn_fail(err, "out of memory");
	for (int v = 0; v < g->n_values; v++) {
		g->values[v].producer = -1;
		g->values[v].n_consumers = 0;
	}
	for (int i = 0; i < g->n_nodes; i++) {
		pn_node *n = &g->nodes[i];
		if (collect_implicit(n, a)) {
			free(count);
			return pn_fail(err, "out of memory");
		}
		for (int k = 0; k < n->n_out; k++) {
			int v = n->out[k];
			if (v < 0)
				continue;
			if (g->values[v].producer >= 0) {
				free(count);
				return pn_fail(err, "value '%s' is produced twice (nodes '%s' and '%s')",
					       g->values[v].name, g->nodes[g->values[v].producer].name,
					       n->name);
			}
			g->values[v].producer = i;
			g->values[v].producer_slot = k;
		}
		for (int k = 0; k < n->n_in; k++)
			if (n->in[k] >= 0)
				count[n->in[k]]++;
		for (int k = 0; k < n->n_implicit; k++)
			count[n->implicit[k]]++;
	}
	for (int v = 0; v < g->n_values; v++) {
		g->values[v].consumers = count[v] ? pn_arena_alloc(a, sizeof(int32_t) * (size_t)count[v]) : NULL;
		if (count[v] && !g->values[v].consumers) {
			free(count);
			return pn_fail(err, "out of memory");
		}
	}
	free(count);
	for (int i = 0; i < g->n_nodes; i++) {
		pn_node *n = &g->nodes[i];
		for (int k = 0; k < n->n_in; k++)
			if (n->in[k] >= 0) {
				pn_value *v = &g->values[n->in[k]];
				v->consumers[v->n_consumers++] = i;
			}
		for (int k = 0; k < n->n_implicit; k++) {
			pn_value *v = &g->values[n->implicit[k]];
			v->consumers[v->n_consumers++] = i;
		}
	}
	return 0;
}

/* Binary min-heap of node indices: the ready node that came first in the
 * file is emitted first, so an already sorted file keeps its order. */
static void heap_push(int32_t *h, int *n, int32_t x)
{
	int i = (*n)++;
	while (i > 0 && h[(i - 1) / 2] > x) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = x;
}

static int32_t heap_pop(int32_t *h, int *n)
{
	int32_t top = h[0], x = h[--(*n)];
	int i = 0;
	for (;;) {
		int c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] < h[c])
			c++;
		if (h[c] >= x)
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
	return top;
}

static void node_deps(const pn_graph *g, const pn_node *n, int32_t *pending, int delta, int32_t self)
{
	(void)self;
	for (int k = 0; k < n->n_in; k++)
		if (n->in[k] >= 0 && g->values[n->in[k]].producer >= 0)
			pending[0] += delta;
	for (int k = 0; k < n->n_implicit; k++)
		if (g->values[n->implicit[k]].producer >= 0)
			pending[0] += delta;
}

int pn_graph_toposort(pn_graph *g, pn_arena *a, char *err)
{
	int nn = g->n_nodes;
	g->topo = pn_arena_alloc(a, sizeof(int32_t) * (size_t)(nn ? nn : 1));
	int32_t *pending = calloc((size_t)nn + 1, sizeof(int32_t));
	int32_t *heap = malloc(sizeof(int32_t) * ((size_t)nn + 1));
	if (!g->topo || !pending || !heap) {
		free(pending);
		free(heap);
		return pn_fail(err, "out of memory");
	}
	int hn = 0, done = 0;
	for (int i = 0; i < nn; i++) {
		node_deps(g, &g->nodes[i], &pending[i], 1, i);
		if (!pending[i])
			heap_push(heap, &hn, i);
	}
	while (hn) {
		int32_t i = heap_pop(heap, &hn);
		g->topo[done++] = i;
		const pn_node *n = &g->nodes[i];
		for (int k = 0; k < n->n_out; k++) {
			if (n->out[k] < 0)
				continue;
			const pn_value *v = &g->values[n->out[k]];
			/* A consumer appears once per use, matching the pending count. */
			for (int c = 0; c < v->n_consumers; c++)
				if (--pending[v->consumers[c]] == 0)
					heap_push(heap, &hn, v->consumers[c]);
		}
	}
	int rc = 0;
	if (done < nn) {
		int culprit = 0;
		while (culprit < nn && !pending[culprit])
			culprit++;
		rc = pn_fail(err, "graph '%s' has a cycle through node '%s' (%s)",
			     g->name ? g->name : "", g->nodes[culprit].name, g->nodes[culprit].op_type);
	}
	free(pending);
	free(heap);
	return rc;
}

int pn_type_is_static(const pn_type *t)
{
	if (t->kind != PN_KIND_TENSOR || t->rank < 0)
		return 0;
	for (int i = 0; i < t->rank; i++)
		if (t->dims[i] < 0)
			return 0;
	return 1;
}

char *pn_type_desc(const pn_type *t, char *buf, int n)
{
	int off;
	if (t->kind == PN_KIND_SEQUENCE)
		off = snprintf(buf, (size_t)n, "seq(%s", pn_dtype_name(t->dtype));
	else if (t->kind == PN_KIND_OPTIONAL)
		off = snprintf(buf, (size_t)n, "optional(%s", pn_dtype_name(t->dtype));
	else
		off = snprintf(buf, (size_t)n, "%s", pn_dtype_name(t->dtype));
	if (t->rank < 0) {
		off += snprintf(buf + off, (size_t)(n > off ? n - off : 0), "[?*]");
	} else {
		off += snprintf(buf + off, (size_t)(n > off ? n - off : 0), "[");
		for (int i = 0; i < t->rank && off < n; i++) {
			if (i)
				off += snprintf(buf + off, (size_t)(n - off), ",");
			if (off >= n)
				break;
			if (t->dims[i] >= 0)
				off += snprintf(buf + off, (size_t)(n - off), "%lld", (long long)t->dims[i]);
			else if (t->dim_names[i])
				off += snprintf(buf + off, (size_t)(n - off), "%s", t->dim_names[i]);
			else
				off += snprintf(buf + off, (size_t)(n - off), "?");
		}
		if (off < n)
			off += snprintf(buf + off, (size_t)(n - off), "]");
	}
	if (t->kind != PN_KIND_TENSOR && off < n)
		snprintf(buf + off, (size_t)(n - off), ")");
	return buf;
}

pn_model *pn_model_new(void)
{
	pn_model *m = calloc(1, sizeof(*m));
	if (m)
		pn_arena_init(&m->arena, 0);
	return m;
}

void pn_model_free(pn_model *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->n_testsets; i++) {
		for (int k = 0; k < m->testsets[i].n_inputs; k++)
			pn_tensor_free(m->testsets[i].inputs[k]);
		for (int k = 0; k < m->testsets[i].n_outputs; k++)
			pn_tensor_free(m->testsets[i].outputs[k]);
		free(m->testsets[i].inputs);
		free(m->testsets[i].outputs);
	}
	pn_arena_free(&m->arena);
	free(m);
}

void pn_model_warn(pn_model *m, const char *fmt, ...)
{
	char buf[PN_ERRLEN];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	const char **w = pn_arena_alloc(&m->arena, sizeof(char *) * (size_t)(m->n_warnings + 1));
	if (!w)
		return;
	if (m->n_warnings)
		memcpy(w, m->warnings, sizeof(char *) * (size_t)m->n_warnings);
	w[m->n_warnings++] = pn_arena_strdup(&m->arena, buf);
	m->warnings = w;
}
