/*
 * strategies.h - names and indexes of the partition strategies of
 * schemas/strategies.def (the functions that run them are partition's).
 */
#ifndef PN_STRATEGIES_H
#define PN_STRATEGIES_H

enum pn_strategy_id {
#define PN_STRATEGY(name, summary) PN_STRATEGY_##name,
#include "schemas/strategies.def"
#undef PN_STRATEGY
	PN_N_STRATEGIES
};

extern const char *const pn_strategy_names[PN_N_STRATEGIES];
extern const char *const pn_strategy_summaries[PN_N_STRATEGIES];

/* The published corpus's size in the typical strategy's unit: GraphNet's
 * typical subgraphs (repeated blocks) from about 100K models after 10
 * shape variants and dedup (its PR #668), which `stats` and the report set
 * beside the store's. */
#define PN_PUBLISHED_TYPICAL 22115

/* The index of a strategy name in the catalogue, -1 if there is none. */
int pn_strategy_index(const char *name);

/* Parses a comma-separated list of names into a mask (bit i for strategy
 * i); -1 on an unknown name. */
int pn_strategy_mask(const char *list, unsigned *mask);

#endif
