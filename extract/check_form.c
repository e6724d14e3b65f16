/*
 * check_form.c - see check_form.h.
 */
#include "extract/check_form.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canon/form.h"
#include "canon/labels.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/keymap.h"
#include "extract/value_keys.h"
#include "extract/weight_scale.h"
#include "runtime/inputs.h"

/* 1 when a graph nested in g holds a weight kept as statistics (its draw
 * would be seeded by its file's name), -1 when out of memory: the weights
 * of g and its nested graphs (pn_weight_metas) less g's own. */
static int nested_metas(const pn_graph *g)
{
	pn_wmeta **all = NULL;
	int n = pn_weight_metas(g, &all);
	free(all);
	for (int v = 0; n > 0 && v < g->n_values; v++)
		n -= g->values[v].meta != NULL;
	return n < 0 ? -1 : n > 0;
}

/* Names every value of g by canonical position (node_at: position ->
 * node): outputs by their producer, the rest by their first explicit use
 * (two passes: positions are not a topological order).  0, or 1 when a
 * value the run draws or reports has no such name. */
static int name_values(const pn_graph *g, const int32_t *node_at, pn_check_form *f)
{
	char buf[40];
	for (int p = 0; p < g->n_nodes; p++) {
		const pn_node *n = &g->nodes[node_at[p]];
		for (int k = 0; k < n->n_out; k++)
			if (n->out[k] >= 0) {
				snprintf(buf, sizeof buf, "n%d.%d", p, k);
				if (!(f->draw[n->out[k]] = strdup(buf)))
					return -1;
			}
	}
	for (int p = 0; p < g->n_nodes; p++) {
		const pn_node *n = &g->nodes[node_at[p]];
		for (int k = 0; k < n->n_in; k++) {
			int v = n->in[k];
			if (v < 0 || f->draw[v])
				continue;
			snprintf(buf, sizeof buf, "u%d.%d", p, k);
			if (!(f->draw[v] = strdup(buf)))
				return -1;
		}
	}
	for (int i = 0; i < g->n_inputs; i++)
		if (!f->draw[g->inputs[i]] && g->values[g->inputs[i]].n_consumers)
			return 1;   /* read only inside a nested graph */
	for (int v = 0; v < g->n_values; v++)
		if (!f->draw[v] && g->values[v].meta && g->values[v].n_consumers)
			return 1;
	for (int i = 0; i < g->n_outputs; i++)
		if (!f->draw[g->outputs[i]])
			return 1;
	return 0;
}

/* x at 4 significant bits. */
static double coarse(double x)
{
	if (x == 0 || !isfinite(x))
		return x;
	int e;
	double m = frexp(x, &e);
	return ldexp(round(m * 16) / 16, e);
}

/* The statistics the check draws m's weight from (check_form.h). */
static pn_wmeta coarse_meta(const pn_wmeta *m)
{
	pn_wmeta c = *m;
	if (!m->has_stats)
		return c;
	c.std = coarse(m->std);
	c.min = coarse(m->min);
	c.max = coarse(m->max);
	c.mean = c.std > 0 ? round(m->mean / (c.std / 16)) * (c.std / 16) : coarse(m->mean);
	c.n_channels = 0;
	c.ch_mean = c.ch_std = NULL;
	return c;
}

/* --- draw streams named by what reads them ------------------------------------------ */

/* A graph and the keys of its values so far, for put_operand. */
typedef struct named {
	const pn_graph *g;
	const pn_key *skey;
} named;

/* The key of what value v is to the node reading it, for naming streams
 * only (a pn_operand_writer, ud a named): a drawn weight by its type and
 * coarse statistics (its stream is what is being named), anything else by
 * its key so far.  Always 1: naming goes on whatever is unknown. */
static int put_operand(pn_buf *b, int v, void *ud)
{
	const named *nm = ud;
	if (v < 0) {
		pn_buf_u8(b, 0);
		return 1;
	}
	const pn_value *val = &nm->g->values[v];
	if (!val->meta) {
		pn_buf_u8(b, 1);
		pn_buf_put(b, nm->skey[v].b, sizeof nm->skey[v].b);
		return 1;
	}
	pn_wmeta m = coarse_meta(val->meta);
	double st[5] = {m.mean, m.std, m.min, m.max, m.scale};
	pn_buf_u8(b, 'W');
	pn_type_label(&val->type, PN_LABEL_EXACT, b);
	pn_buf_u8(b, m.has_stats);
	pn_buf_put(b, st, sizeof st);
	return 1;
}

/* Input v's stream, "i<type>.<j>": its declared type, and j its rank among
 * the inputs of that type by first use in canonical order (counted in
 * seen); its key for naming the weights is the same.  0, or -1 when out of
 * memory. */
static int name_input(const pn_graph *g, int v, pn_keymap *seen, pn_key *skey,
		      pn_check_form *f)
{
	pn_buf b = {0};
	pn_type_label(&g->values[v].type, PN_LABEL_EXACT, &b);
	int oom = b.oom;
	pn_key type = oom ? (pn_key){{0}} : pn_key_of(b.p, b.n);
	pn_buf_free(&b);
	int added;
	uint64_t *rank = oom ? NULL : pn_keymap_put(seen, &type, &added);
	if (!rank)
		return -1;
	char hex[33], buf[48];
	pn_key_hex(&type, hex);
	snprintf(buf, sizeof buf, "i%s.%llu", hex, (unsigned long long)(*rank)++);
	skey[v] = pn_key_of(buf, strlen(buf));
	free(f->draw[v]);
	return (f->draw[v] = strdup(buf)) ? 0 : -1;
}

/* Every graph input named by name_input, in canonical order of first use. */
static int name_inputs(const pn_graph *g, const int32_t *node_at, pn_key *skey,
		       pn_check_form *f)
{
	uint8_t *named = calloc((size_t)g->n_values + 1, 1);
	pn_keymap same_type = {0};
	int rc = named ? 0 : -1;
	for (int p = 0; !rc && p < g->n_nodes; p++) {
		const pn_node *n = &g->nodes[node_at[p]];
		for (int k = 0; !rc && k < n->n_in; k++) {
			int v = n->in[k];
			if (v < 0 || g->values[v].role != PN_ROLE_INPUT || named[v])
				continue;
			named[v] = 1;
			rc = name_input(g, v, &same_type, skey, f);
		}
	}
	pn_keymap_free(&same_type);
	free(named);
	return rc;
}

/* The constants kept by value, keyed by their contents. */
static int key_constants(const pn_graph *g, pn_key *skey)
{
	for (int v = 0; v < g->n_values; v++) {
		const pn_value *val = &g->values[v];
		if (val->data && !val->meta && val->role != PN_ROLE_NODE &&
		    pn_contents_key(val->data, &skey[v]))
			return -1;
	}
	return 0;
}

/* Node by node in topological order: each output keyed by the node's label
 * and operands, and each weight the node reads (read[v] = 1) by the least
 * (reader, slot) so far.  0, or -1 when out of memory. */
static int key_readers(const pn_graph *g, pn_key *skey, pn_key *wkey, uint8_t *read)
{
	named nm = {g, skey};
	for (int i = 0; i < g->n_nodes; i++) {
		const pn_node *n = &g->nodes[g->topo[i]];
		pn_buf b = {0};
		int rc = pn_node_operands(n, put_operand, &nm, &b);
		for (int k = 0; rc > 0 && k < n->n_in; k++) {
			int v = n->in[k];
			if (v < 0 || !g->values[v].meta)
				continue;
			pn_key r = pn_key_tagged(&b, -1 - k);
			if (!read[v] || memcmp(r.b, wkey[v].b, sizeof r.b) < 0)
				wkey[v] = r;
			read[v] = 1;
		}
		for (int k = 0; rc > 0 && k < n->n_out; k++)
			if (n->out[k] >= 0)
				skey[n->out[k]] = pn_key_tagged(&b, k);
		int oom = rc < 0 || b.oom;
		pn_buf_free(&b);
		if (oom)
			return -1;
	}
	return 0;
}

/* The stream each drawn value is seeded by: a graph input by name_input,
 * a weight "w" and the least key of (reader, slot) over its readers, where
 * a reader is keyed by its label and its operands, recursively, with
 * weights by their type and coarse statistics.  A cut of a model that
 * keeps a weight's readers and what they read names it as the model does,
 * and so draws it alike (value_keys.h).  Weights whose readers are alike
 * in all of that (the query, key and value projections of one input, each
 * published without its bytes) draw alike: nothing but what comes after
 * them tells them apart, and a cut does not keep that.  0, or -1 when out
 * of memory. */
static int name_draws(const pn_graph *g, const int32_t *node_at, pn_check_form *f)
{
	pn_key *skey = calloc((size_t)g->n_values + 1, sizeof(pn_key));
	pn_key *wkey = calloc((size_t)g->n_values + 1, sizeof(pn_key));
	uint8_t *read = calloc((size_t)g->n_values + 1, 1);
	int rc = skey && wkey && read ? 0 : -1;
	if (!rc)
		rc = name_inputs(g, node_at, skey, f);
	if (!rc)
		rc = key_constants(g, skey);
	if (!rc)
		rc = key_readers(g, skey, wkey, read);
	for (int v = 0; !rc && v < g->n_values; v++) {
		if (!read[v] || !g->values[v].meta)
			continue;
		char hex[33], buf[40];
		pn_key_hex(&wkey[v], hex);
		snprintf(buf, sizeof buf, "w%s", hex);
		free(f->draw[v]);
		if (!(f->draw[v] = strdup(buf)))
			rc = -1;
	}
	free(skey);
	free(wkey);
	free(read);
	return rc;
}

/* The binding a key covers, then its end. */
static void put_bind(pn_buf *b, const pn_dimbind *bind)
{
	for (int i = 0; bind && i < bind->n; i++) {
		pn_buf_blob(b, bind->names[i], strlen(bind->names[i]));
		pn_buf_svarint(b, bind->values[i]);
	}
	pn_buf_u8(b, 0xfe);
}

/* What the check reads of value v beside the form: its coarse statistics
 * or its bytes. */
static void put_weight(pn_buf *b, const pn_value *v)
{
	if (v->meta) {
		pn_wmeta m = coarse_meta(v->meta);
		double s[5] = {m.mean, m.std, m.min, m.max, m.scale};
		pn_buf_u8(b, 'm');
		pn_buf_u8(b, m.has_stats);
		pn_buf_put(b, s, sizeof s);
	} else if (v->data && v->role != PN_ROLE_NODE) {
		pn_buf_u8(b, 'd');
		pn_tensor_label(v->data, b);
	}
}

/* What graph input v's draw reads of its name: its meaning (a mask by
 * name; runtime/inputs.h), which the form does not hold. */
static void put_meaning(pn_buf *b, const pn_graph *g, int v)
{
	for (int i = 0; i < g->n_inputs; i++)
		if (g->inputs[i] == v)
			pn_buf_u8(b, (uint8_t)pn_input_meaning(g, i));
}

/* Emits value v once: its canonical name and what the check reads of it. */
static void put_value(pn_buf *b, const pn_graph *g, int v, const pn_check_form *f, uint8_t *seen,
		      int32_t *metas, int *n)
{
	if (v < 0 || seen[v])
		return;
	seen[v] = 1;
	pn_buf_blob(b, f->draw[v], strlen(f->draw[v]));
	put_weight(b, &g->values[v]);
	if (g->values[v].role == PN_ROLE_INPUT)
		put_meaning(b, g, v);
	if (g->values[v].meta)
		metas[(*n)++] = v;
}

/* The key: the form, the binding, then what the check reads of each value
 * beside the form, in canonical order (node by node: its inputs not seen
 * yet, then its outputs kept as statistics, Constant nodes' among them). */
static int make_key(const pn_graph *g, const int32_t *node_at, const pn_key *form,
		    const pn_dimbind *bind, const char *tag, pn_check_form *f)
{
	pn_buf b = {0};
	pn_buf_put(&b, tag, strlen(tag) + 1);
	pn_buf_put(&b, form->b, sizeof form->b);
	put_bind(&b, bind);
	int32_t *metas = malloc(sizeof(int32_t) * ((size_t)g->n_values + 1));
	uint8_t *seen = calloc((size_t)g->n_values + 1, 1);
	int n = 0;
	for (int p = 0; metas && seen && p < g->n_nodes; p++) {
		const pn_node *nd = &g->nodes[node_at[p]];
		for (int k = 0; k < nd->n_in; k++)
			put_value(&b, g, nd->in[k], f, seen, metas, &n);
		for (int k = 0; k < nd->n_out; k++)
			if (nd->out[k] >= 0 && g->values[nd->out[k]].meta)
				put_value(&b, g, nd->out[k], f, seen, metas, &n);
	}
	int rc = b.oom || !metas || !seen ? -1 : 0;
	if (!rc) {
		f->key = pn_key_of(b.p, b.n);
		f->metas = metas;
		f->n_metas = n;
	} else {
		free(metas);
	}
	free(seen);
	pn_buf_free(&b);
	return rc;
}

int pn_check_form_make(const pn_model *m, const pn_infer_result *r, const pn_dimbind *bind,
		       pn_check_form *f)
{
	memset(f, 0, sizeof *f);
	if (!pn_weights_absent(m->graph))
		return 0;
	return pn_run_form_make(m, r, bind, "passnet blind check 1", f);
}

int pn_run_form_make(const pn_model *m, const pn_infer_result *r, const pn_dimbind *bind,
		     const char *tag, pn_check_form *f)
{
	const pn_graph *g = m->graph;
	memset(f, 0, sizeof *f);
	if (g->n_nodes == 0)
		return 0;
	int nested = nested_metas(g);
	if (nested)
		return nested < 0 ? -1 : 0;
	int32_t *all = malloc(sizeof(int32_t) * (size_t)g->n_nodes);
	int32_t *node_at = malloc(sizeof(int32_t) * (size_t)g->n_nodes);
	f->draw = calloc((size_t)g->n_values + 1, sizeof(char *));
	f->n_values = g->n_values;
	int rc = all && node_at && f->draw ? 0 : -1;
	for (int i = 0; !rc && i < g->n_nodes; i++)
		all[i] = i;
	pn_key form;
	int approximate = 0;
	char err[PN_ERRLEN];
	if (!rc && pn_form_positions(g, r, all, g->n_nodes, &form, node_at, &approximate, err))
		rc = -1;
	if (!rc && approximate)
		rc = 1;
	if (!rc)
		rc = name_values(g, node_at, f);
	if (!rc)
		rc = name_draws(g, node_at, f);
	if (!rc)
		rc = make_key(g, node_at, &form, bind, tag, f);
	free(all);
	free(node_at);
	if (rc)
		pn_check_form_free(f);
	return rc < 0 ? -1 : rc ? 0 : 1;
}

/* A value id, as the file numbers it (a pn_operand_writer). */
static int put_id(pn_buf *b, int v, void *ud)
{
	(void)ud;
	pn_buf_svarint(b, v);
	return 1;
}

int pn_form_file_key(const pn_model *m, const pn_infer_result *r, const pn_dimbind *bind,
		     const char *tag, pn_key *key)
{
	const pn_graph *g = m->graph;
	int nested = nested_metas(g);
	if (nested)   /* their statistics are not in the nodes' labels */
		return nested < 0 ? -1 : 0;
	pn_buf b = {0};
	pn_buf_blob(&b, tag, strlen(tag));
	put_bind(&b, bind);
	for (int v = 0; v < g->n_values; v++) {
		const pn_value *val = &g->values[v];
		pn_buf_blob(&b, val->name, strlen(val->name));
		pn_buf_u8(&b, val->role);
		pn_buf_u8(&b, val->is_output);
		pn_buf_svarint(&b, val->outer);
		pn_type_label(&r->v[v].type, PN_LABEL_EXACT, &b);
		if (val->role == PN_ROLE_INPUT)   /* its stream's name reads it */
			pn_type_label(&val->type, PN_LABEL_EXACT, &b);
		put_weight(&b, val);
	}
	for (int i = 0; i < g->n_nodes; i++) {
		const pn_node *n = &g->nodes[i];
		pn_buf_blob(&b, n->name ? n->name : "", n->name ? strlen(n->name) : 0);
		if (pn_node_operands(n, put_id, NULL, &b) < 0)
			b.oom = 1;
		for (int k = 0; k < n->n_out; k++)
			pn_buf_svarint(&b, n->out[k]);
		pn_buf_u8(&b, 0xff);
	}
	for (int i = 0; i < g->n_inputs; i++)
		pn_buf_svarint(&b, g->inputs[i]);
	for (int i = 0; i < g->n_outputs; i++)
		pn_buf_svarint(&b, g->outputs[i]);
	int rc = b.oom ? -1 : 1;
	if (rc > 0)
		*key = pn_key_of(b.p, b.n);
	pn_buf_free(&b);
	return rc;
}

int pn_check_form_file_key(const pn_model *m, const pn_infer_result *r, const pn_dimbind *bind,
			   pn_key *key)
{
	if (!pn_weights_absent(m->graph) || m->graph->n_nodes == 0)
		return 0;
	return pn_form_file_key(m, r, bind, "passnet blind check file 1", key);
}

void pn_coarsen_weights(pn_graph *g, pn_wmeta *full)
{
	for (int v = 0; v < g->n_values; v++)
		if (g->values[v].meta) {
			pn_wmeta was = *g->values[v].meta;
			*g->values[v].meta = coarse_meta(&was);
			if (full)
				full[v] = was;
		}
}

void pn_restore_weights(pn_graph *g, const pn_wmeta *full)
{
	for (int v = 0; v < g->n_values; v++)
		if (g->values[v].meta)
			*g->values[v].meta = full[v];
}

int pn_check_form_begin(pn_check_form *f, pn_model *m)
{
	pn_graph *g = m->graph;
	f->full = malloc(sizeof(pn_wmeta) * ((size_t)f->n_metas + 1));
	if (!f->full)
		return -1;
	for (int i = 0; i < f->n_metas; i++) {
		pn_wmeta *w = g->values[f->metas[i]].meta;
		f->full[i] = *w;
		*w = coarse_meta(w);
	}
	g->draw_name = (const char *const *)f->draw;
	return 0;
}

void pn_check_form_end(pn_check_form *f, pn_model *m)
{
	pn_graph *g = m->graph;
	for (int i = 0; f->full && i < f->n_metas; i++) {
		pn_wmeta *w = g->values[f->metas[i]].meta;
		double scale = w->scale;
		*w = f->full[i];
		w->scale = scale;
	}
	free(f->full);
	f->full = NULL;
	g->draw_name = NULL;
}

void pn_check_form_free(pn_check_form *f)
{
	for (int v = 0; f->draw && v < f->n_values; v++)
		free(f->draw[v]);
	free(f->draw);
	free(f->metas);
	memset(f, 0, sizeof *f);
}

int pn_check_form_output(const pn_check_form *f, const pn_graph *g, const char *name)
{
	for (int i = 0; i < g->n_outputs; i++) {
		int v = g->outputs[i];
		if (f->draw[v] && !strcmp(f->draw[v], name))
			return v;
	}
	return -1;
}
