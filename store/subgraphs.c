#include "store/subgraphs.h"
#include "store/tables.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"

#include "schemas/strategies.h"
#include "store/structures.h"

typedef struct occ_walk {
	pn_occ_summary *s;
	const uint8_t *model;
	uint8_t last[16];
	int have_last;
} occ_walk;

/* One call per (occurrence, model of its structure): a subgraph's
 * occurrences sort by structure, and a model has one structure, so its
 * calls come together and counting distinct models needs only the
 * previous one. */
static int count_occ(void *ud, const uint8_t hash[16], const Passnet__Occurrence *o,
		     const uint8_t model[16])
{
	(void)hash;
	occ_walk *w = ud;
	w->s->total++;
	int i = pn_strategy_index(o->strategy);
	if (i >= 0)
		w->s->per_strategy[i]++;
	if (!w->have_last || memcmp(w->last, model, 16))
		w->s->models++;
	memcpy(w->last, model, 16);
	w->have_last = 1;
	if (w->model && !memcmp(w->model, model, 16))
		w->s->in_model = 1;
	return 0;
}

int pn_occ_in_strategies(const pn_occ_summary *s, unsigned mask)
{
	for (int i = 0; i < PN_N_STRATEGIES; i++)
		if ((mask >> i & 1) && s->per_strategy[i])
			return 1;
	return 0;
}

int pn_occurrences(pn_rtxn *t, const uint8_t hash[16], const uint8_t *model, pn_occ_summary *s)
{
	memset(s, 0, sizeof(*s));
	occ_walk w = {.s = s, .model = model};
	return pn_foreach_occurrence(t, hash, count_occ, &w) < 0 ? -1 : 0;
}

uint8_t *pn_subgraph_canonical(pn_store *st, const uint8_t hash[16], size_t *len, char *err)
{
	pn_rtxn *t;
	if (pn_rtxn_begin(st, &t, err))
		return NULL;
	pn_bytes v;
	uint8_t *out = NULL;
	if (pn_get(t, PN_T_SUBGRAPHS, hash, 16, &v) == 0) {
		Passnet__Subgraph *sg = pn_subgraphs_unpack(v);
		if (sg && sg->has_canonical && (out = malloc(sg->canonical.len + 1))) {
			memcpy(out, sg->canonical.data, sg->canonical.len);
			*len = sg->canonical.len;
		}
		if (sg)
			pn_subgraphs_free(sg);
	}
	pn_rtxn_end(t);
	if (!out)
		pn_fail(err, "subgraph record is missing or corrupt");
	return out;
}

pn_range *pn_subgraph_ranges(pn_store *st, const uint8_t hash[16], int *n)
{
	*n = 0;
	pn_rtxn *t;
	char err[PN_ERRLEN];
	if (pn_rtxn_begin(st, &t, err))
		return NULL;
	pn_range *out = pn_subgraph_ranges_in(t, hash, n);
	pn_rtxn_end(t);
	return out;
}

int pn_ranges_decode(const Passnet__InputRanges *r, pn_range *out)
{
	size_t n = r->n_lo;
	if (r->n_hi != n || r->n_known != n)
		return -1;
	int shapes = r->n_rank == n, ints = r->n_int_counts == n;
	size_t d = 0, k = 0;
	for (size_t i = 0; i < n; i++) {
		out[i] = (pn_range){.lo = r->lo[i], .hi = r->hi[i], .known = r->known[i], .rank = -1,
				    .real = r->n_real_run == n && r->real_run[i]};
		int32_t rank = shapes ? r->rank[i] : -1;
		if (rank > PN_MAX_RANK || (rank > 0 && d + (size_t)rank > r->n_dims))
			return -1;
		/* The copies run only for a non-empty run: a record with no dims
		 * (or no ints) has NULL arrays, which memcpy must not get even
		 * for 0 bytes. */
		if (rank >= 0) {
			out[i].rank = rank;
			if (rank > 0)
				memcpy(out[i].dims, r->dims + d, sizeof(int64_t) * (size_t)rank);
			d += (size_t)rank;
		}
		int32_t m = ints ? r->int_counts[i] : 0;
		if (m < 0 || m > PN_SEEN_INTS || k + (size_t)m > r->n_int_values)
			return -1;
		out[i].n_ints = m;
		if (m > 0)
			memcpy(out[i].ints, r->int_values + k, sizeof(int64_t) * (size_t)m);
		k += (size_t)m;
	}
	return 0;
}

pn_range *pn_subgraph_ranges_in(pn_rtxn *t, const uint8_t hash[16], int *n)
{
	*n = 0;
	pn_bytes v;
	Passnet__InputRanges *r = pn_get(t, PN_T_RANGES, hash, 16, &v) == 0
					  ? pn_ranges_unpack(v) : NULL;
	pn_range *out = r ? calloc(r->n_lo + 1, sizeof *out) : NULL;
	if (out && !pn_ranges_decode(r, out)) {
		*n = (int)r->n_lo;
	} else {
		free(out);
		out = NULL;
	}
	if (r)
		pn_ranges_free(r);
	return out;
}

void pn_read_subgraph_weights_in(pn_rtxn *t, const uint8_t hash[16], pn_subgraph_weights *ws)
{
	pn_bytes v;
	Passnet__InputRanges *r = pn_get(t, PN_T_RANGES, hash, 16, &v) == 0
					  ? pn_ranges_unpack(v) : NULL;
	*ws = (pn_subgraph_weights){0};
	if (r && r->n_weights)
		*ws = (pn_subgraph_weights){r->weights, r->n_weights, r};
	else if (r)
		pn_ranges_free(r);
}

void pn_read_subgraph_weights(pn_store *st, const uint8_t hash[16], pn_subgraph_weights *ws)
{
	pn_rtxn *t;
	char err[PN_ERRLEN];
	*ws = (pn_subgraph_weights){0};
	if (pn_rtxn_begin(st, &t, err))
		return;
	pn_read_subgraph_weights_in(t, hash, ws);
	pn_rtxn_end(t);
}

void pn_subgraph_weights_free(pn_subgraph_weights *ws)
{
	if (ws->record)
		pn_ranges_free(ws->record);
	*ws = (pn_subgraph_weights){0};
}
