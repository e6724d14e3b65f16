/*
 * value_keys.c - see value_keys.h.
 */
#include "extract/value_keys.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "canon/labels.h"
#include "common/buf.h"
#include "common/keymap.h"
#include "runtime/session.h"
#include "schemas/ops.h"

int pn_value_key_known(const pn_key *k)
{
	static const pn_key zero;
	return memcmp(k->b, zero.b, sizeof zero.b) != 0;
}

static void put_key(pn_buf *b, const pn_key *k)
{
	pn_buf_put(b, k->b, sizeof k->b);
}

/* A graph input: its type and the bytes drawn for it. */
static pn_key input_key(const pn_tensor *t)
{
	pn_key k = {{0}};
	if (!t || t->kind != PN_KIND_TENSOR || t->dtype == PN_STRING || !t->data)
		return k;
	pn_key data = pn_key_of(t->data, pn_tensor_nbytes(t));
	pn_buf b = {0};
	pn_buf_u8(&b, 'i');
	pn_buf_varint(&b, (uint64_t)t->dtype);
	pn_buf_varint(&b, (uint64_t)t->rank);
	for (int i = 0; i < t->rank; i++)
		pn_buf_varint(&b, (uint64_t)t->dims[i]);
	put_key(&b, &data);
	if (!b.oom)
		k = pn_key_of(b.p, b.n);
	pn_buf_free(&b);
	return k;
}

/* A weight pn_weight_regen draws: all that decides its bytes. */
static void put_drawn(pn_buf *b, const pn_graph *g, int v)
{
	const pn_value *val = &g->values[v];
	const pn_wmeta *m = val->meta;
	const char *stream = pn_draw_stream(g, v);
	double d[4];
	pn_weight_draw(g, v, d);
	pn_buf_u8(b, 'w');
	pn_buf_blob(b, stream, strlen(stream));
	pn_type_label(&val->type, PN_LABEL_EXACT, b);
	pn_buf_put(b, d, sizeof d);
	double scale = m->scale != 0 ? m->scale : 1;
	pn_buf_put(b, &scale, sizeof scale);
	pn_buf_svarint(b, m->n_channels);
	if (m->n_channels > 0) {
		pn_buf_put(b, m->ch_mean, sizeof(float) * (size_t)m->n_channels);
		pn_buf_u8(b, m->ch_std != NULL);
		if (m->ch_std)
			pn_buf_put(b, m->ch_std, sizeof(float) * (size_t)m->n_channels);
	}
}

int pn_contents_key(const pn_tensor *t, pn_key *out)
{
	pn_buf b = {0};
	pn_buf_u8(&b, 'd');
	pn_tensor_label(t, &b);
	int oom = b.oom;
	if (!oom)
		*out = pn_key_of(b.p, b.n);
	pn_buf_free(&b);
	return oom ? -1 : 0;
}

int pn_node_operands(const pn_node *n, pn_operand_writer put, void *ud, pn_buf *b)
{
	pn_captures caps = {0};
	if (pn_node_label(n, PN_LABEL_EXACT, NULL, b, &caps))
		return -1;
	int known = 1;
	for (int k = 0; k < n->n_in; k++)
		known &= put(b, n->in[k], ud);
	for (int c = 0; c < caps.n; c++)
		known &= put(b, caps.v[c], ud);
	free(caps.v);
	return b->oom ? -1 : known;
}

pn_key pn_key_tagged(pn_buf *b, int64_t tag)
{
	size_t at = b->n;
	pn_buf_svarint(b, tag);
	pn_key k = b->oom ? (pn_key){{0}} : pn_key_of(b->p, b->n);
	b->n = at;
	return k;
}

/* A value the run does not compute: an input, a drawn weight or a
 * constant (an initializer, or a Constant node's contents attached to its
 * output, which the session serves without running the node). */
static pn_key source_key(const pn_graph *g, int v, pn_tensor *const *in, int n)
{
	pn_key k = {{0}};
	const pn_value *val = &g->values[v];
	if (val->role == PN_ROLE_INPUT) {
		for (int i = 0; i < g->n_inputs && i < n; i++)
			if (g->inputs[i] == v)
				return input_key(in[i]);
		return k;
	}
	if (!val->meta) {
		if (val->data)
			pn_contents_key(val->data, &k);   /* out of memory: unknown */
		return k;
	}
	pn_buf b = {0};
	put_drawn(&b, g, v);
	if (!b.oom)
		k = pn_key_of(b.p, b.n);
	pn_buf_free(&b);
	return k;
}

/* Appends the key of value v (keys: ud) to b; 0 when it is unknown (and
 * so is whatever reads it). */
static int put_input(pn_buf *b, int v, void *ud)
{
	const pn_key *keys = ud;
	if (v < 0) {
		pn_buf_u8(b, 0);   /* an omitted optional input */
		return 1;
	}
	pn_buf_u8(b, 1);
	put_key(b, &keys[v]);
	return pn_value_key_known(&keys[v]);
}

static int seeded_by_name(const pn_node *n);

/* 1 when a node of g or of a graph nested in it draws from its seed. */
static int graph_seeded(const pn_graph *g)
{
	for (int i = 0; i < g->n_nodes; i++)
		if (seeded_by_name(&g->nodes[i]))
			return 1;
	return 0;
}

/* 1 when n's outputs may depend on its seed, which the session makes from
 * the node's name (runtime/session.c: node_seed), not from what it
 * computes: the random ops, Dropout (in training mode), and any node whose
 * nested graphs hold one. */
static int seeded_by_name(const pn_node *n)
{
	if (n->op < 0 || (pn_ops[n->op].flags & F_RANDOM) || n->op == PN_OP_Dropout)
		return 1;
	for (int k = 0; k < n->n_attr; k++) {
		const pn_attr *a = &n->attrs[k];
		if (a->g && graph_seeded(a->g))
			return 1;
		for (int j = 0; a->type == PN_ATTR_GRAPHS && j < a->n; j++)
			if (graph_seeded(a->graphs[j]))
				return 1;
	}
	return 0;
}

/* The outputs of node n from its label and its inputs' keys; -1 when out
 * of memory.  Unknown inputs, or a node seeded by its name, leave them
 * unknown. */
static int node_keys(const pn_node *n, pn_key *keys)
{
	if (seeded_by_name(n))
		return 0;
	pn_buf b = {0};
	int known = pn_node_operands(n, put_input, keys, &b);
	for (int k = 0; known > 0 && k < n->n_out; k++)
		if (n->out[k] >= 0 && !pn_value_key_known(&keys[n->out[k]]))
			keys[n->out[k]] = pn_key_tagged(&b, k);   /* else a constant, by contents */
	int oom = known < 0 || b.oom;
	pn_buf_free(&b);
	return oom ? -1 : 0;
}

int pn_value_keys(const pn_graph *g, pn_tensor *const *in, int n, pn_key *keys)
{
	memset(keys, 0, sizeof(pn_key) * (size_t)g->n_values);
	for (int v = 0; v < g->n_values; v++)
		if (g->values[v].role != PN_ROLE_NODE || g->values[v].meta || g->values[v].data)
			keys[v] = source_key(g, v, in, n);
	for (int i = 0; i < g->n_nodes; i++)
		if (node_keys(&g->nodes[g->topo[i]], keys))
			return -1;
	return 0;
}

/* --- the book ----------------------------------------------------------------------- */

/* What the book may hold: about 80 bytes an entry with its index, so at
 * most about 80 MiB whatever the run's size; the values booked first stay
 * (on a hub, the popular models', which their cuts read). */
#define BOOK_ENTRIES ((size_t)1 << 20)

struct pn_value_book {
	pthread_mutex_t lock;
	pn_keymap index;   /* key -> entry number + 1 */
	pn_value_seen *e;
	size_t n, cap;
};

pn_value_book *pn_value_book_new(void)
{
	pn_value_book *b = calloc(1, sizeof(*b));
	if (b && pthread_mutex_init(&b->lock, NULL)) {
		free(b);
		return NULL;
	}
	return b;
}

void pn_value_book_free(pn_value_book *b)
{
	if (!b)
		return;
	free(b->e);
	pn_keymap_free(&b->index);
	pthread_mutex_destroy(&b->lock);
	free(b);
}

int pn_value_book_get(pn_value_book *b, const pn_key *k, pn_value_seen *out)
{
	pthread_mutex_lock(&b->lock);
	uint64_t *slot = pn_keymap_find(&b->index, k);
	if (slot)
		*out = b->e[*slot - 1];
	pthread_mutex_unlock(&b->lock);
	return slot != NULL;
}

int pn_value_book_put(pn_value_book *b, const pn_key *k, const pn_value_seen *s)
{
	int rc = 0;
	pthread_mutex_lock(&b->lock);
	if (b->n == b->cap && b->n < BOOK_ENTRIES) {
		size_t cap = b->cap ? b->cap * 2 : 1024;
		pn_value_seen *e = realloc(b->e, sizeof(*e) * cap);
		if (e) {
			b->e = e;
			b->cap = cap;
		} else {
			rc = -1;
		}
	}
	if (!rc && b->n < b->cap) {
		int added = 0;
		uint64_t *slot = pn_keymap_put(&b->index, k, &added);
		if (!slot) {
			rc = -1;
		} else if (added) {
			b->e[b->n++] = *s;
			*slot = b->n;
		}
	}
	pthread_mutex_unlock(&b->lock);
	return rc;
}
