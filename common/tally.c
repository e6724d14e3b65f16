#include "common/tally.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

void pn_tally_add(pn_tally *t, const char *name, int64_t n)
{
	for (int i = 0; i < t->n; i++)
		if (!strcmp(t->items[i].name, name)) {
			t->items[i].n += n;
			return;
		}
	if (t->n == t->cap) {
		int cap = t->cap ? t->cap * 2 : 32;
		pn_tally_item *it = realloc(t->items, sizeof(*it) * (size_t)cap);
		if (!it)
			return;
		t->items = it;
		t->cap = cap;
	}
	t->items[t->n].name = strdup(name);
	t->items[t->n++].n = n;
}

static int by_count(const void *a, const void *b)
{
	const pn_tally_item *x = a, *y = b;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->name, y->name);
}

void pn_tally_sort(pn_tally *t)
{
	if (t->n)
		qsort(t->items, (size_t)t->n, sizeof(*t->items), by_count);
}

void pn_tally_free(pn_tally *t)
{
	for (int i = 0; i < t->n; i++)
		free(t->items[i].name);
	free(t->items);
	memset(t, 0, sizeof(*t));
}

void pn_tally_print(const pn_tally *t, const char *title, int max, FILE *f)
{
	fprintf(f, "%s\n", title);
	for (int i = 0; i < t->n && (!max || i < max); i++)
		fprintf(f, "  %-40s %lld\n", t->items[i].name, (long long)t->items[i].n);
	if (max && t->n > max)
		fprintf(f, "  ... %d more\n", t->n - max);
}

void pn_tally_json(const pn_tally *t, const char *key, FILE *f)
{
	fprintf(f, "\"%s\":{", key);
	for (int i = 0; i < t->n; i++) {
		if (i)
			fputc(',', f);
		pn_json_str(f, t->items[i].name);
		fprintf(f, ":%lld", (long long)t->items[i].n);
	}
	fputc('}', f);
}
