/*
 * forms.c - dedup's work on one structure (forms.h).
 */
#include "dedup/forms.h"

#include "common/assert.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "canon/decode.h"
#include "runtime/cost.h"
#include "store/records.h"
#include "store/tables.h"

pn_dd_cut *pn_dd_add_cut(pn_dd_job *j)
{
	if (j->n == j->cap) {
		int cap = j->cap ? j->cap * 2 : 64;
		pn_dd_cut *c = realloc(j->c, sizeof(pn_dd_cut) * (size_t)cap);
		if (!c)
			return NULL;
		j->c = c;
		j->cap = cap;
	}
	pn_dd_cut *c = &j->c[j->n++];
	memset(c, 0, sizeof(*c));
	return c;
}

/* A cut with a value whose dtype inference could not find (after an op
 * passnet does not know: damaged or custom files) is typed by what the
 * whole model told inference, which the cut alone may not reproduce (a
 * shape computed outside it, partly known).  Such a cut is stored only if
 * its canonical bytes decode into a graph that hashes back to its key, so
 * that `doctor --deep` holds for every stored subgraph; the others are
 * left out like cuts without a form.  Found by tests/cli/hostile_inputs.sh. */
static int has_inference_gap(const pn_graph *g, const pn_infer_result *r, const int32_t *nodes,
			     int n)
{
	for (int i = 0; i < n; i++) {
		const pn_node *nd = &g->nodes[nodes[i]];
		for (int k = 0; k < nd->n_in; k++)
			if (nd->in[k] >= 0 && r->v[nd->in[k]].type.dtype == PN_UNDEFINED)
				return 1;
		for (int k = 0; k < nd->n_out; k++)
			if (nd->out[k] >= 0 && r->v[nd->out[k]].type.dtype == PN_UNDEFINED)
				return 1;
	}
	return 0;
}

static int form_round_trips(const pn_form *f, char *err)
{
	pn_model *sub;
	pn_key k;
	if (pn_subgraph_model(f->bytes, f->len, &sub, err))
		return 0;
	int same = !pn_subgraph_rehash(sub, &k, err) && !memcmp(k.b, f->hash.b, 16);
	pn_model_free(sub);
	return same;
}

static void pack_records(pn_dd_job *j);

/* The cut's form and cost; types and values are the model's inferred ones. */
static void form_cut(pn_dd_cut *c, const pn_model *m, const pn_infer_result *r,
		     const pn_type *types, const pn_tensor **values, pn_form_cache *cache,
		     char *err)
{
	const pn_graph *g = m->graph;
	for (int k = 0; k < c->n; k++)
		if (c->nodes[k] < 0 || c->nodes[k] >= g->n_nodes)
			return;   /* names nodes the model does not have: left unhashed */
	if (!c->n)
		return;
	c->ok = !pn_form_of_cut_cached(g, r, c->nodes, c->n, cache, &c->form, err);
	if (c->ok && has_inference_gap(g, r, c->nodes, c->n) && !form_round_trips(&c->form, err)) {
		pn_form_free(&c->form);
		c->ok = 0;
	}
	pn_graph_cost cost = {0};
	char cerr[PN_ERRLEN];   /* a cost left at 0 only changes exec's order */
	if (c->ok && types && values &&
	    !pn_nodes_cost(g, types, values, c->nodes, c->n, &cost, cerr)) {
		c->flops = cost.flops;
		c->bytes_unfused = cost.bytes_unfused;
	}
}

void pn_dd_forms(pn_dd_job *j, const pn_model *m, const Passnet__Model *rec,
		 const pn_infer_result *r, pn_form_cache *cache)
{
	j->binding = pn_part_binding_text(m, rec);
	pn_form_cache_model(cache, m->graph);
	/* the model's inferred types and contents, for every cut's cost */
	int nv = m->graph->n_values;
	pn_type *types = malloc(sizeof(pn_type) * (size_t)(nv + 1));
	const pn_tensor **values = malloc(sizeof(void *) * (size_t)(nv + 1));
	for (int v = 0; types && values && v < nv; v++) {
		types[v] = r->v[v].type;
		values[v] = r->v[v].value;
	}
	for (int i = 0; i < j->n; i++)
		form_cut(&j->c[i], m, r, types, values, cache, j->err);
	free(types);
	free(values);
	pack_records(j);
}

/* --- packing, in the worker ------------------------------------------------------------ */

/* Appends msg packed to b; its offset and length into *off, *len. */
static void pack_into(pn_buf *b, const ProtobufCMessage *msg, size_t *off, size_t *len)
{
	size_t n = protobuf_c_message_get_packed_size(msg);
	uint8_t tmp[1024];
	uint8_t *p = n <= sizeof tmp ? tmp : malloc(n);
	if (!p) {
		b->oom = 1;
		return;
	}
	protobuf_c_message_pack(msg, p);
	*off = b->n;
	*len = n;
	pn_buf_put(b, p, n);
	if (p != tmp)
		free(p);
}

static void pack_subgraph(pn_buf *b, pn_dd_cut *c)
{
	const pn_form *f = &c->form;
	Passnet__Subgraph s;
	passnet__subgraph__init(&s);
	s.has_version = 1;
	s.version = PN_SCHEMA_VERSION;
	s.has_canonical = 1;
	s.canonical.data = f->bytes;
	s.canonical.len = f->len;
	s.has_pattern = 1;
	s.pattern.data = (uint8_t *)f->pattern.b;
	s.pattern.len = 16;
	s.n_ops = (size_t)f->n_nodes;
	s.ops = (char **)f->ops;
	s.has_nodes = s.has_inputs = s.has_outputs = s.has_constants = 1;
	s.nodes = (uint32_t)f->n_nodes;
	s.inputs = (uint32_t)f->n_inputs;
	s.outputs = (uint32_t)f->n_outputs;
	s.constants = (uint32_t)f->n_consts;
	s.has_flops = s.has_bytes_unfused = 1;
	s.flops = c->flops;
	s.bytes_unfused = c->bytes_unfused;
	pack_into(b, &s.base, &c->sub_off, &c->sub_len);
}

/* The occurrence values of a group (its candidates idx, ascending), as
 * few as fit a dupsort value (at most 511 bytes), each a 2-byte length then
 * the value, appended to b. */
static void pack_occurrences(pn_buf *b, const pn_dd_job *j, pn_dd_cut *c, uint32_t *idx, int n)
{
	Passnet__Occurrence o;
	passnet__occurrence__init(&o);
	o.has_version = 1;
	o.version = PN_SCHEMA_VERSION;
	o.has_structure = 1;
	o.structure.data = (uint8_t *)j->structure;
	o.structure.len = 16;
	o.strategy = (char *)c->strategy;
	o.binding = j->binding;
	c->occ_off = b->n;
	for (int at = 0; at < n;) {
		/* as many candidates as fit: a varint takes at most 5 bytes */
		o.candidates = idx + at;
		o.n_candidates = 1;
		if (passnet__occurrence__get_packed_size(&o) > 511) {
			c->occ_too_large = 1;
			return;
		}
		while (at + (int)o.n_candidates < n &&
		       passnet__occurrence__get_packed_size(&o) + 5 + 1 <= 511)
			o.n_candidates++;
		size_t len = passnet__occurrence__get_packed_size(&o);
		uint8_t v[512];
		protobuf_c_message_pack(&o.base, v);
		uint8_t hdr[2] = {(uint8_t)(len >> 8), (uint8_t)len};
		pn_buf_put(b, hdr, 2);
		pn_buf_put(b, v, len);
		at += (int)o.n_candidates;
	}
	c->occ_len = b->n - c->occ_off;
}

/* Orders two cuts' forms: strategy, hash, then canonical bytes. */
static int form_cmp(const pn_dd_cut *x, const pn_dd_cut *y)
{
	int c = strcmp(x->strategy, y->strategy);
	if (!c)
		c = memcmp(x->form.hash.b, y->form.hash.b, 16);
	if (!c)
		c = (x->form.len > y->form.len) - (x->form.len < y->form.len);
	return c ? c : memcmp(x->form.bytes, y->form.bytes, x->form.len);
}

/* Orders a job's cuts by group (form_cmp), then index. */
static int group_cmp(const void *a, const void *b)
{
	const pn_dd_cut *x = *(pn_dd_cut *const *)a, *y = *(pn_dd_cut *const *)b;
	int c = form_cmp(x, y);
	return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* A kept block is a group of its own: the corpus keeps blocks run by run,
 * and a block's occurrence must not depend on which others were kept with
 * it. */
static int same_group(const pn_dd_cut *x, const pn_dd_cut *y)
{
	return x->index < PN_BLOCK_INDEX0 && y->index < PN_BLOCK_INDEX0 && !form_cmp(x, y);
}

static void pack_records(pn_dd_job *j)
{
	pn_dd_cut **order = malloc(sizeof(*order) * ((size_t)j->n + 1));
	uint32_t *idx = malloc(sizeof(uint32_t) * ((size_t)j->n + 1));
	int n = 0;
	for (int i = 0; order && i < j->n; i++)
		if (j->c[i].ok)
			order[n++] = &j->c[i];
	if (!order || !idx) {
		j->packed.oom = 1;
		n = 0;
	}
	qsort(order, (size_t)n, sizeof(*order), group_cmp);
	for (int g = 0; g < n;) {
		int end = g + 1;
		while (end < n && same_group(order[g], order[end]))
			end++;
		pn_dd_cut *lead = order[g];
		for (int k = g; k < end; k++) {
			order[k]->leader = (int)(lead - j->c);
			idx[k - g] = order[k]->index;
		}
		lead->members = end - g;
		lead->committed = -1;
		pack_subgraph(&j->packed, lead);
		pack_occurrences(&j->packed, j, lead, idx, end - g);
		g = end;
	}
	free(order);
	free(idx);
	if (j->packed.oom) {
		j->failed = 1;
		pn_fail(j->err, "out of memory");
	}
}

/* --- committing ------------------------------------------------------------------------ */

/* --- the subgraphs seen -------------------------------------------------------------- */

struct pn_dd_seen {
	pn_keymap map;        /* subgraph hash -> XXH3-64 of its record */
};

#define SEEN_CHECK_SEED 0x7061737365656e31ull   /* any constant but XXH3-128's 0 */

pn_dd_seen *pn_dd_seen_new(void)
{
	return calloc(1, sizeof(pn_dd_seen));
}

void pn_dd_seen_free(pn_dd_seen *s)
{
	if (!s)
		return;
	pn_keymap_free(&s->map);
	free(s);
}

static int seen_has(const pn_dd_seen *s, const pn_key *k, uint64_t check)
{
	const uint64_t *v = s ? pn_keymap_find(&s->map, k) : NULL;
	return v && *v == check;
}

static void seen_add(pn_dd_seen *s, const pn_key *k, uint64_t check)
{
	if (!s || s->map.n >= PN_DD_SEEN_MAX)
		return;
	int added;
	uint64_t *v = pn_keymap_put(&s->map, k, &added);
	if (v)   /* else no room: this one is read back next time */
		*v = check;
}

/* 1 = new, 0 = the same computation is stored, -1 = error, -2 = collision. */
static int store_subgraph(pn_writer *w, const pn_dd_job *j, const pn_dd_cut *c,
			  pn_dd_seen *seen, pn_stage_stats *stats, char *err)
{
	const pn_form *f = &c->form;
	const uint8_t *rec = j->packed.p + c->sub_off;
	uint64_t check = XXH3_64bits_withSeed(rec, c->sub_len, SEEN_CHECK_SEED);
	if (seen_has(seen, &f->hash, check))
		return 0;
	pn_bytes v;
	if (pn_wget(w, PN_T_SUBGRAPHS, f->hash.b, 16, &v) != 0) {
		stats->new_subgraphs++;
		if (pn_put(w, PN_T_SUBGRAPHS, f->hash.b, 16, rec, c->sub_len, err))
			return -1;
		seen_add(seen, &f->hash, check);
		return 1;
	}
	/* the same record bytes hold the same canonical bytes */
	if (v.len == c->sub_len && !memcmp(v.data, rec, v.len)) {
		seen_add(seen, &f->hash, check);
		return 0;
	}
	Passnet__Subgraph *s = pn_subgraphs_unpack(v);
	int same = s && s->has_canonical && s->canonical.len == f->len &&
		   !memcmp(s->canonical.data, f->bytes, f->len);
	pn_subgraphs_free(s);
	if (same)
		return 0;
	stats->collisions++;
	return -2;
}

/* The group's occurrence values (pack_occurrences) into the table. */
static int put_occurrences(pn_writer *w, const pn_dd_job *j, const pn_dd_cut *c, char *err)
{
	const uint8_t *p = j->packed.p + c->occ_off, *end = p + c->occ_len;
	PN_ASSERT(c->occ_len && c->occ_off + c->occ_len <= j->packed.n);
	while (p < end) {
		size_t len = (size_t)p[0] << 8 | p[1];
		PN_ASSERT(len && p + 2 + len <= end);
		if (pn_put_dup(w, PN_T_OCCURRENCES, c->form.hash.b, 16, p + 2, len, err))
			return -1;
		p += 2 + len;
	}
	return 0;
}

int pn_dd_commit_cut(pn_writer *w, pn_dd_job *j, pn_dd_cut *c, pn_dd_seen *seen,
		     pn_stage_stats *stats, char *err)
{
	if (!c->ok)
		return 0;
	PN_ASSERT(c->leader >= 0 && c->leader < j->n);
	const pn_dd_cut *lead = &j->c[c->leader];
	if (lead != c) {
		/* its leader, of a lesser index, was committed first */
		PN_ASSERT(lead->committed >= 0 && lead->index < c->index);
		return lead->committed;
	}
	c->committed = 0;
	int rc = store_subgraph(w, j, c, seen, stats, err);
	if (rc == -2) {
		char hex[33], msg[PN_ERRLEN];
		pn_key_hex(&c->form.hash, hex);
		snprintf(msg, sizeof msg, "hash collision: two different computations hash to %s", hex);
		pn_error_line("dedup: %s", msg);
		/* the group stays unhashed, as the dedup stage leaves it */
		return pn_error_put(w, &c->form.hash, "dedup", "", hex, msg, err) ? -1 : 0;
	}
	if (rc < 0)
		return -1;
	if (c->occ_too_large)
		return pn_fail(err, "occurrence record too large");
	/* the worker packed the records of every group */
	PN_ASSERT(c->sub_len && c->members > 0);
	if (put_occurrences(w, j, c, err))
		return -1;
	stats->approximate += c->form.approximate ? (uint64_t)c->members : 0;
	stats->candidates += (uint64_t)c->members;
	c->committed = 1;
	return 1;
}

void pn_dd_job_free(pn_dd_job *j)
{
	for (int i = 0; i < j->n; i++) {
		if (j->c[i].owns_nodes)
			free(j->c[i].nodes);
		pn_form_free(&j->c[i].form);
	}
	free(j->c);
	free(j->binding);
	pn_buf_free(&j->packed);
	memset(j, 0, sizeof(*j));
}

/* --- the caches ------------------------------------------------------------------------ */

void pn_dd_caches_open(pn_dd_caches *cs, int threads)
{
	memset(cs, 0, sizeof(*cs));
	const char *e = getenv("PASSNET_FORM_CACHE");
	if (e && !strcmp(e, "0"))
		return;
	cs->n = pn_stage_threads(threads);
	cs->c = calloc((size_t)cs->n, sizeof(*cs->c));
	for (int i = 0; cs->c && i < cs->n; i++)
		cs->c[i] = pn_form_cache_new(0);
}

pn_form_cache *pn_dd_cache_of_thread(pn_dd_caches *cs)
{
	int t = omp_get_thread_num();
	return cs->c && t < cs->n ? cs->c[t] : NULL;
}

void pn_dd_caches_close(pn_dd_caches *cs)
{
	if (getenv("PASSNET_DEDUP_STATS")) {
		uint64_t lookups = 0, hits = 0, phits = 0;
		for (int i = 0; cs->c && i < cs->n; i++) {
			uint64_t l, h, ph;
			pn_form_cache_counts(cs->c[i], &l, &h, &ph);
			lookups += l;
			hits += h;
			phits += ph;
		}
		fprintf(stderr, "dedup: form cache: %llu lookups, %llu hits, %llu pattern hits\n",
			(unsigned long long)lookups, (unsigned long long)hits, (unsigned long long)phits);
	}
	for (int i = 0; cs->c && i < cs->n; i++)
		pn_form_cache_free(cs->c[i]);
	free(cs->c);
	memset(cs, 0, sizeof(*cs));
}
