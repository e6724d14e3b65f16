/*
 * tally.h - counting strings (op types, sources, error kinds) for summaries.
 */
#ifndef PN_TALLY_H
#define PN_TALLY_H

#include <stdint.h>
#include <stdio.h>

typedef struct pn_tally_item {
	char *name;
	int64_t n;
} pn_tally_item;

typedef struct pn_tally {
	pn_tally_item *items;
	int n, cap;
} pn_tally;

void pn_tally_add(pn_tally *t, const char *name, int64_t n);
/* Sorts by count (descending), then name. */
void pn_tally_sort(pn_tally *t);
void pn_tally_free(pn_tally *t);
/* Prints "title" then "  name  count" lines (at most max, 0 = all). */
void pn_tally_print(const pn_tally *t, const char *title, int max, FILE *f);
/* Prints "\"key\":{\"name\":n,...}" for JSON output. */
void pn_tally_json(const pn_tally *t, const char *key, FILE *f);

#endif
