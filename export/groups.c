/* groups.c - per-group counts over the store (groups.h). */
#include "export/groups.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "exec/profile.h"
#include "passnet.pb-c.h"
#include "store/structures.h"
#include "store/records.h"
#include "store/tables.h"

typedef struct keyed {
	uint8_t key[16];
	uint32_t groups;       /* a model: 1 << its group; a subgraph: the groups it is in */
} keyed;

typedef struct walk {
	pn_group_stat *g;
	int n;
	char **src_names;      /* sources table order (sorted by name) */
	int *src_group;
	int n_src;
	keyed *models, *subgraphs;
	int n_models, n_subgraphs, cap_models, cap_subgraphs;
	keyed cur;             /* the subgraph whose occurrences are being read */
	int have_cur;
	int oom;
} walk;

static int group_index(walk *w, const char *name)
{
	for (int i = 0; i < w->n; i++)
		if (!strcmp(w->g[i].name, name))
			return i;
	if (w->n == PN_MAX_GROUPS)
		return PN_MAX_GROUPS - 1;   /* more groups than masks hold: the last takes the rest */
	char *copy = strdup(name);
	if (!copy)
		return w->oom = 1, 0;
	w->g[w->n] = (pn_group_stat){.name = copy};
	return w->n++;
}

static int push(keyed **v, int *n, int *cap, const keyed *k)
{
	if (*n == *cap) {
		int c = *cap ? *cap * 2 : 1024;
		keyed *nv = realloc(*v, sizeof(keyed) * (size_t)c);
		if (!nv)
			return -1;
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = *k;
	return 0;
}

static int cmp_key(const void *a, const void *b)
{
	return memcmp(a, b, 16);
}

static const keyed *find(const keyed *v, int n, const uint8_t *key)
{
	return bsearch(key, v, (size_t)n, sizeof(keyed), cmp_key);
}

static int on_source(void *ud, pn_bytes key, pn_bytes val, const Passnet__Source *s)
{
	(void)key;
	(void)val;
	walk *w = ud;
	if (!s || !s->name)
		return 0;
	char **names = realloc(w->src_names, sizeof(char *) * (size_t)(w->n_src + 1));
	int *groups = realloc(w->src_group, sizeof(int) * (size_t)(w->n_src + 1));
	if (names)
		w->src_names = names;
	if (groups)
		w->src_group = groups;
	if (!names || !groups || !(w->src_names[w->n_src] = strdup(s->name))) {
		w->oom = 1;
		return 0;
	}
	int g = group_index(w, s->group ? s->group : "");
	w->src_group[w->n_src++] = g;
	w->g[g].sources++;
	return 0;
}

static int cmp_name(const void *key, const void *elem)
{
	return strcmp(key, *(char *const *)elem);
}

static int on_model(void *ud, pn_bytes key, pn_bytes val, const Passnet__Model *m)
{
	walk *w = ud;
	if (key.len != 16 || !m)
		return 0;
	char **at = m->source ? bsearch(m->source, w->src_names, (size_t)w->n_src, sizeof(char *),
					cmp_name) : NULL;
	int g = at ? w->src_group[at - w->src_names] : group_index(w, "");
	keyed k;
	memcpy(k.key, key.data, 16);
	k.groups = 1u << g;
	/* a shape variant is listed (its occurrences name it) but not counted */
	uint8_t base[16];
	if (!pn_model_variant_of(val, base))
		w->g[g].models++;
	if (push(&w->models, &w->n_models, &w->cap_models, &k))
		w->oom = 1;
	return 0;
}

static void close_subgraph(walk *w)
{
	if (!w->have_cur)
		return;
	for (int g = 0; g < w->n; g++)
		w->g[g].subgraphs += w->cur.groups >> g & 1;
	if (push(&w->subgraphs, &w->n_subgraphs, &w->cap_subgraphs, &w->cur))
		w->oom = 1;
	w->have_cur = 0;
}

/* Occurrences come grouped by hash, one call per model of each
 * (store/structures.h). */
static int on_occurrence(void *ud, const uint8_t hash[16], const Passnet__Occurrence *o,
			 const uint8_t model[16])
{
	(void)o;
	walk *w = ud;
	if (!w->have_cur || memcmp(w->cur.key, hash, 16)) {
		close_subgraph(w);
		memcpy(w->cur.key, hash, 16);
		w->cur.groups = 0;
		w->have_cur = 1;
	}
	const keyed *m = find(w->models, w->n_models, model);
	if (m)
		w->cur.groups |= m->groups;
	return 0;
}

static int has_flag(const Passnet__Profile *p, const char *flag)
{
	for (size_t i = 0; i < p->n_flags; i++)
		if (p->flags[i] && !strcmp(p->flags[i], flag))
			return 1;
	return 0;
}

static int on_profile(void *ud, pn_bytes key, pn_bytes val, const Passnet__Profile *p)
{
	(void)val;
	walk *w = ud;
	const keyed *sg = key.len == 16 ? find(w->subgraphs, w->n_subgraphs, key.data) : NULL;
	if (!sg || !p)
		return 0;
	int failed = p->status && !strcmp(p->status, "failed");
	int slow = has_flag(p, pn_flag_names[PN_FLAG_SLOW]);
	for (int g = 0; g < w->n; g++)
		if (sg->groups >> g & 1) {
			w->g[g].profiled++;
			w->g[g].measured += !failed;
			w->g[g].slow += slow;
		}
	return 0;
}

int pn_group_stats(pn_rtxn *t, pn_group_stat **out, int *n, char *err)
{
	walk w = {.g = calloc(PN_MAX_GROUPS, sizeof(pn_group_stat))};
	if (!w.g)
		return pn_fail(err, "out of memory");
	pn_sources_foreach(t, NULL, 0, on_source, &w);
	pn_models_foreach(t, NULL, 0, on_model, &w);
	pn_foreach_occurrence(t, NULL, on_occurrence, &w);
	close_subgraph(&w);
	pn_profiles_foreach(t, NULL, 0, on_profile, &w);
	for (int i = 0; i < w.n_src; i++)
		free(w.src_names[i]);
	free(w.src_names);
	free(w.src_group);
	free(w.models);
	free(w.subgraphs);
	if (w.oom) {
		pn_group_stats_free(w.g, w.n);
		return pn_fail(err, "out of memory");
	}
	*out = w.g;
	*n = w.n;
	return 0;
}

void pn_group_stats_free(pn_group_stat *g, int n)
{
	for (int i = 0; g && i < n; i++)
		free((char *)g[i].name);
	free(g);
}
