/*
 * groups.h - what the store holds per manifest group (a "[NAME]" section of
 * data-manifest.txt: trained models apart from op tests), for `passnet
 * stats` and the report.  A model belongs to the group of the source that
 * holds its canonical place; a subgraph to every group one of its models
 * is in, so the groups' subgraph counts may add up to more than the store's.
 */
#ifndef PN_GROUPS_H
#define PN_GROUPS_H

#include <stdint.h>

#include "store/store.h"

#define PN_MAX_GROUPS 32

typedef struct pn_group_stat {
	const char *name;      /* "" for sources outside any group (malloc'd with the array) */
	int64_t sources, models;
	int64_t subgraphs;     /* unique subgraphs found in the group's models */
	int64_t profiled, measured, slow;   /* of those: profiles, not failed, flagged slow */
} pn_group_stat;

/* Fills *out (malloc'd, *n entries, in the order the sources table first
 * names each group; free with pn_group_stats_free). */
int  pn_group_stats(pn_rtxn *t, pn_group_stat **out, int *n, char *err);
void pn_group_stats_free(pn_group_stat *g, int n);

#endif
