/*
 * structures.h - models that share a structure share their candidates and
 * occurrences.
 *
 * A model's structure key (store/records.h: pn_model_structure_key) is a
 * function of everything partition and dedup read from its record, and
 * nothing they do not (where it came from, its weights' values).  So the
 * candidates table is keyed by structure, each subgraph's occurrences name
 * structures, and the structures table lists the models of each: a
 * fine-tune (the same graph with other weights) adds its model record and
 * one line in the structures table, not another copy of its candidates and
 * occurrences, and partition and dedup never see it again.
 *
 * Queries about models go through here: pn_foreach_occurrence gives one call
 * per (occurrence, model of its structure), which is what an occurrence was
 * before structures were shared, so counts and lists answer the same.
 */
#ifndef PN_STRUCTURES_H
#define PN_STRUCTURES_H

#include <stdint.h>

#include "common/util.h"
#include "passnet.pb-c.h"
#include "store/store.h"

/* The structure key of a stored model: 0, 1 when there is no such model
 * (or a variant's base is missing), -1 when out of memory. */
int pn_model_structure(pn_rtxn *t, const uint8_t model[16], pn_key *out);

/* Calls fn(ud, model) for every model of structure s, in key order; fn
 * returns non-zero to stop (that value is returned). */
typedef int (*pn_model_fn)(void *ud, const uint8_t model[16]);
int pn_structure_models(pn_rtxn *t, const uint8_t s[16], pn_model_fn fn, void *ud);
/* The least model key of structure s into model: 0, or 1 when it has none. */
int pn_structure_first_model(pn_rtxn *t, const uint8_t s[16], uint8_t model[16]);
/* 1 when model is listed under structure s. */
int pn_structure_has_model(pn_rtxn *t, const uint8_t s[16], const uint8_t model[16]);

/* The structure an occurrence names (NULL for a malformed record). */
const uint8_t *pn_occurrence_structure(const Passnet__Occurrence *o);

/* Calls fn once per (occurrence, model of its structure): for the
 * occurrences of subgraph `hash`, or of every subgraph when hash is NULL,
 * in key order, then each occurrence's models in key order.  fn returns
 * non-zero to stop (that value is returned); -1 on a read error. */
typedef int (*pn_occ_fn)(void *ud, const uint8_t hash[16], const Passnet__Occurrence *o,
			 const uint8_t model[16]);
int pn_foreach_occurrence(pn_rtxn *t, const uint8_t *hash, pn_occ_fn fn, void *ud);

#endif
