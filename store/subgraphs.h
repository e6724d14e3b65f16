/*
 * subgraphs.h - reading subgraphs with their occurrences, for ls/show/stats.
 */
#ifndef PN_SUBGRAPHS_H
#define PN_SUBGRAPHS_H

#include "passnet.pb-c.h"
#include "canon/decode.h"
#include "schemas/ir.h"
#include "schemas/strategies.h"
#include "store/store.h"

typedef struct pn_occ_summary {
	int64_t total;             /* occurrences */
	int64_t per_strategy[PN_N_STRATEGIES];   /* by schemas/strategies.def index */
	int64_t models;            /* distinct models */
	int in_model;              /* occurs in the model asked for */
} pn_occ_summary;

/* Summarises the occurrences of one subgraph; model (16 bytes) may be NULL. */
int pn_occurrences(pn_rtxn *t, const uint8_t hash[16], const uint8_t *model, pn_occ_summary *s);

/* True if one of the strategies of mask (bit i: schemas/strategies.def's
 * entry i) found the subgraph. */
int pn_occ_in_strategies(const pn_occ_summary *s, unsigned mask);

/* A malloc'd copy of a subgraph's canonical bytes, read in a transaction of
 * its own (callers then work for a while without holding a reader). */
uint8_t *pn_subgraph_canonical(pn_store *st, const uint8_t hash[16], size_t *len, char *err);

/* The recorded value ranges of a subgraph's inputs (ranges table), as a
 * malloc'd array of *n; NULL with *n = 0 when there are none. */
pn_range *pn_subgraph_ranges(pn_store *st, const uint8_t hash[16], int *n);
/* The same inside a reader the caller holds. */
pn_range *pn_subgraph_ranges_in(pn_rtxn *t, const uint8_t hash[16], int *n);
/* Decodes a ranges record into out[r->n_lo]; -1 when it is inconsistent. */
int pn_ranges_decode(const Passnet__InputRanges *r, pn_range *out);
/* The statistics of a subgraph's weights its ranges record keeps (from the
 * model its shapes come from), for pn_subgraph_decode: *ws empty (n 0)
 * when there are none.  Free with pn_subgraph_weights_free. */
void pn_read_subgraph_weights_in(pn_rtxn *t, const uint8_t hash[16], pn_subgraph_weights *ws);
void pn_read_subgraph_weights(pn_store *st, const uint8_t hash[16], pn_subgraph_weights *ws);
void pn_subgraph_weights_free(pn_subgraph_weights *ws);

#endif
