/*
 * structures.c - the structures table and occurrences by model (see
 * structures.h).
 */
#include "store/structures.h"
#include "store/tables.h"

#include <stdlib.h>
#include <string.h>

#include "store/records.h"

int pn_model_structure(pn_rtxn *t, const uint8_t model[16], pn_key *out)
{
	void *rec;
	size_t len;
	int rc = pn_model_record_copy(t, model, &rec, &len);
	if (rc)
		return rc;
	*out = pn_model_structure_key(rec, len);
	free(rec);
	return 0;
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

static int on_occurrence(void *ud, pn_bytes key, pn_bytes val)
{
	occ_walk *w = ud;
	if (key.len != 16)
		return 0;
	Passnet__Occurrence *o = pn_occurrences_unpack(val);
	const uint8_t *s = pn_occurrence_structure(o);
	int rc = 0;
	if (s) {
		w->hash = key.data;
		w->o = o;
		rc = pn_structure_models(w->t, s, on_occ_model, w);
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
