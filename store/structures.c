/*
 * structures.c - the structures table and occurrences by model (see
 * structures.h).
 */
#include "store/structures.h"
#include "store/tables.h"

#include <stdlib.h>
#include <string.h>

#include "common/assert.h"
#include "common/err.h"
#include "store/records.h"

int pn_alias_get(pn_rtxn *t, const pn_key *record_key, pn_alias *out)
{
	memset(out, 0, sizeof *out);
	Passnet__Alias *a;
	int rc = pn_aliases_get(t, record_key->b, 16, &a);
	if (rc == PN_REC_MISSING)
		return 1;
	if (rc || a->structure.len != 16 || a->n_nodes > INT32_MAX) {
		pn_aliases_free(a);
		return -1;
	}
	memcpy(out->structure.b, a->structure.data, 16);
	out->n = (int)a->n_nodes;
	out->node_of = malloc(sizeof(int32_t) * (a->n_nodes + 1));
	for (size_t i = 0; out->node_of && i < a->n_nodes; i++)
		out->node_of[i] = a->nodes[i] > INT32_MAX ? -1 : (int32_t)a->nodes[i];
	pn_aliases_free(a);
	return out->node_of ? 0 : -1;
}

int pn_alias_put(pn_writer *w, const pn_key *record_key, const pn_alias *a, char *err)
{
	Passnet__Alias m;
	passnet__alias__init(&m);
	m.has_version = 1;
	m.version = PN_SCHEMA_VERSION;
	m.has_structure = 1;
	m.structure.data = (uint8_t *)a->structure.b;
	m.structure.len = 16;
	uint32_t *nodes = malloc(sizeof(uint32_t) * ((size_t)a->n + 1));
	if (!nodes)
		return pn_fail(err, "out of memory");
	for (int i = 0; i < a->n; i++) {
		PN_ASSERT(a->node_of[i] >= 0);
		nodes[i] = (uint32_t)a->node_of[i];
	}
	m.n_nodes = (size_t)a->n;
	m.nodes = nodes;
	int rc = pn_put_msg(w, PN_T_ALIASES, record_key->b, 16, &m.base, err);
	free(nodes);
	return rc;
}

void pn_alias_free(pn_alias *a)
{
	free(a->node_of);
	memset(a, 0, sizeof *a);
}

int pn_alias_nodes(const pn_alias *a, const uint32_t *pos, size_t n, int32_t *nodes)
{
	for (size_t i = 0; i < n; i++) {
		if (pos[i] >= (uint32_t)a->n)
			return 1;
		nodes[i] = a->node_of[pos[i]];
	}
	return 0;
}

int pn_model_alias(pn_rtxn *t, const uint8_t model[16], pn_alias *out)
{
	void *rec;
	size_t len;
	memset(out, 0, sizeof *out);
	int rc = pn_model_record_copy(t, model, &rec, &len);
	if (rc)
		return rc;
	rc = pn_record_alias(t, rec, len, out);
	free(rec);
	return rc;
}

int pn_record_alias(pn_rtxn *t, const void *rec, size_t len, pn_alias *out)
{
	pn_key rk = pn_model_record_key(rec, len);
	return pn_alias_get(t, &rk, out);
}

int pn_model_structure(pn_rtxn *t, const uint8_t model[16], pn_key *out)
{
	pn_alias a;
	int rc = pn_model_alias(t, model, &a);
	if (!rc)
		*out = a.structure;
	pn_alias_free(&a);
	return rc;
}

typedef struct models_walk {
	pn_model_fn fn;
	void *ud;
} models_walk;

static int on_model(void *ud, pn_bytes key, pn_bytes val)
{
	(void)key;
	models_walk *w = ud;
	return val.len == 16 ? w->fn(w->ud, val.data) : 0;
}

int pn_structure_models(pn_rtxn *t, const uint8_t s[16], pn_model_fn fn, void *ud)
{
	models_walk w = {fn, ud};
	return pn_foreach(t, PN_T_STRUCTURES, s, 16, on_model, &w);
}

static int take_first(void *ud, const uint8_t model[16])
{
	memcpy(ud, model, 16);
	return 1;
}

int pn_structure_first_model(pn_rtxn *t, const uint8_t s[16], uint8_t model[16])
{
	return pn_structure_models(t, s, take_first, model) == 1 ? 0 : 1;
}

int pn_structure_has_model(pn_rtxn *t, const uint8_t s[16], const uint8_t model[16])
{
	/* a lookup: a structure of 10,000 fine-tunes is checked once per model */
	return pn_has_pair(t, PN_T_STRUCTURES, s, 16, model, 16) == 1;
}

const uint8_t *pn_occurrence_structure(const Passnet__Occurrence *o)
{
	return o && o->has_structure && o->structure.len == 16 ? o->structure.data : NULL;
}

typedef struct occ_walk {
	pn_rtxn *t;
	pn_occ_fn fn;
	void *ud;
	const uint8_t *hash;
	const Passnet__Occurrence *o;
} occ_walk;

static int on_occ_model(void *ud, const uint8_t model[16])
{
	occ_walk *w = ud;
	return w->fn(w->ud, w->hash, w->o, model);
}

/* A value lists the candidates of one (structure, strategy) pair with the
 * hash (schemas/passnet.proto): fn sees one place at a time, its
 * candidate set in a view of the value. */
static int on_occurrence(void *ud, pn_bytes key, pn_bytes val)
{
	occ_walk *w = ud;
	if (key.len != 16)
		return 0;
	Passnet__Occurrence *o = pn_occurrences_unpack(val);
	const uint8_t *s = pn_occurrence_structure(o);
	int rc = 0;
	if (s) {
		Passnet__Occurrence place = *o;
		size_t n = o->n_candidates ? o->n_candidates : 1;
		w->hash = key.data;
		w->o = &place;
		for (size_t i = 0; i < n && !rc; i++) {
			if (o->n_candidates) {
				place.has_candidate = 1;
				place.candidate = o->candidates[i];
			}
			rc = pn_structure_models(w->t, s, on_occ_model, w);
		}
	}
	if (o)
		pn_occurrences_free(o);
	return rc;
}

int pn_foreach_occurrence(pn_rtxn *t, const uint8_t *hash, pn_occ_fn fn, void *ud)
{
	occ_walk w = {t, fn, ud, NULL, NULL};
	return pn_foreach(t, PN_T_OCCURRENCES, hash, hash ? 16 : 0, on_occurrence, &w);
}
