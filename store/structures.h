/*
 * structures.h - models that share a structure share their candidates and
 * occurrences.
 *
 * A model's structure key is the canonical form of its whole graph at its
 * binding (partition/stage.c says what goes in): a function of everything
 * partition and dedup read, and nothing they do not (where it came from,
 * its weights' values, how the file named and ordered its values and
 * nodes).  So the candidates table is keyed by structure, each subgraph's
 * occurrences name structures, and the structures table lists the models
 * of each: a fine-tune (the same graph with other weights) or a re-export
 * (renamed, reordered, another opset with the same ops) adds its model
 * record and one line in the structures table, not another copy of its
 * candidates and occurrences.
 *
 * Two steps lead from a model to its structure.  Its record key
 * (store/records.h: pn_model_record_key, a hash of the record's bytes less
 * weights and provenance) is free to compute and equal for fine-tunes; the
 * aliases table maps a record key to the structure and to the canonical
 * positions of the graph's compute nodes.  Candidates list positions, so
 * every model of the structure finds a cut's nodes in its own graph through
 * its alias (pn_alias_nodes); partition computes an alias once per record
 * key, and a record key already aliased costs a lookup.
 *
 * Queries about models go through here: pn_foreach_occurrence gives one call
 * per (place, model of its structure), which is what an occurrence was
 * before structures were shared and an occurrence listed a structure's
 * places of one strategy, so counts and lists answer the same.
 */
#ifndef PN_STRUCTURES_H
#define PN_STRUCTURES_H

#include <stdint.h>

#include "common/util.h"
#include "passnet.pb-c.h"
#include "store/store.h"

/* A record key's alias: its structure, and node_of[p] the node index (in
 * the graph of records with that key) at canonical position p < n. */
typedef struct pn_alias {
	pn_key structure;
	int32_t *node_of;      /* malloc'd */
	int n;
} pn_alias;

/* 0 and *out, 1 when the record key has no alias (partition has not seen
 * it), -1 on a malformed alias or no memory. */
int  pn_alias_get(pn_rtxn *t, const pn_key *record_key, pn_alias *out);
int  pn_alias_put(pn_writer *w, const pn_key *record_key, const pn_alias *a, char *err);
void pn_alias_free(pn_alias *a);
/* Maps the positions pos[0..n) to node indices into nodes: 0, or 1 when a
 * position is out of the alias's range. */
int  pn_alias_nodes(const pn_alias *a, const uint32_t *pos, size_t n, int32_t *nodes);

/* The alias of a stored model (and so its structure): 0, 1 when there is
 * no such model, a variant's base is missing, or partition has not aliased
 * its record key yet; -1 when out of memory. */
int pn_model_alias(pn_rtxn *t, const uint8_t model[16], pn_alias *out);
/* The alias of a whole model record (pn_model_record_whole), as
 * pn_model_alias. */
int pn_record_alias(pn_rtxn *t, const void *rec, size_t len, pn_alias *out);
/* The structure key of a stored model, as pn_model_alias. */
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
 * in key order, each value's candidates in turn (o->candidate set to it),
 * then each one's models in key order.  fn returns
 * non-zero to stop (that value is returned); -1 on a read error. */
typedef int (*pn_occ_fn)(void *ud, const uint8_t hash[16], const Passnet__Occurrence *o,
			 const uint8_t model[16]);
int pn_foreach_occurrence(pn_rtxn *t, const uint8_t *hash, pn_occ_fn fn, void *ud);

#endif
