/*
 * doctor.c - `passnet doctor`: checks the store's invariants and says what
 * is wrong, one line per problem.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "canon/decode.h"
#include "canon/form.h"
#include "exec/calibrate.h"
#include "runtime/infer.h"
#include "extract/ingest.h"
#include "partition/stage.h"
#include "store/structures.h"
#include "store/query.h"
#include "store/records.h"
#include "store/tables.h"

static int deep;

static const pn_option options[] = {
	PN_FLAG(0, "deep", &deep,
		"also hash the graph decoded from every subgraph's canonical bytes, which must "
		"give its key back"),
	PN_OPT_TABLE_END,
};

typedef struct place {
	pn_key place, model;
	int has_model, failed;
	char *source, *path;
} place;

typedef struct doctor {
	pn_rtxn *t;
	place *p;
	int np, cap;
	int problems;
	int64_t checked;
	int deep;
} doctor;

static void problem(doctor *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(doctor *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("problem: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	d->problems++;
}

static int collect_place(void *ud, pn_bytes key, pn_bytes val, const Passnet__ModelPath *mp)
{
	doctor *d = ud;
	d->checked++;
	if (!mp || key.len != 16) {
		problem(d, "model_paths record %zu bytes does not decode", val.len);
		return 0;
	}
	if (d->np == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 256;
		d->p = realloc(d->p, sizeof(place) * (size_t)d->cap);
	}
	place *p = &d->p[d->np++];
	memset(p, 0, sizeof(*p));
	memcpy(p->place.b, key.data, 16);
	p->has_model = mp->has_model && mp->model.len == 16;
	if (p->has_model)
		memcpy(p->model.b, mp->model.data, 16);
	p->failed = mp->status == PASSNET__MODEL_STATUS__MODEL_FAILED;
	p->source = strdup(mp->source ? mp->source : "");
	p->path = strdup(mp->path ? mp->path : "");
	pn_key expect = pn_place_key(p->source, p->path);
	if (memcmp(expect.b, p->place.b, 16))
		problem(d, "model_paths key does not match its place %s: %s", p->source, p->path);
	return 0;
}

static void check_place(doctor *d, const place *p)
{
	pn_bytes v;
	if (pn_get(d->t, PN_T_SOURCES, p->source, strlen(p->source), &v) != 0)
		problem(d, "place %s: %s names a source that is not recorded", p->source, p->path);
	if (p->failed) {
		uint8_t key[48];
		memcpy(key, p->place.b, 16);
		memcpy(key + 16, "extract", 7);
		if (pn_get(d->t, PN_T_ERRORS, key, 23, &v) != 0)
			problem(d, "place %s: %s failed but has no error record", p->source, p->path);
	} else if (!p->has_model || pn_get(d->t, PN_T_MODELS, p->model.b, 16, &v) != 0) {
		problem(d, "place %s: %s points at a model that is not stored", p->source, p->path);
	}
}

/* The model's canonical place must be the least place holding its bytes. */
static void check_canonical(doctor *d, const pn_key *key, const Passnet__Model *rec, const char *hex)
{
	const place *least = NULL;
	for (int i = 0; i < d->np; i++) {
		const place *p = &d->p[i];
		if (p->failed || !p->has_model || memcmp(p->model.b, key->b, 16))
			continue;
		if (!least || strcmp(p->source, least->source) < 0 ||
		    (!strcmp(p->source, least->source) && strcmp(p->path, least->path) < 0))
			least = p;
	}
	if (!least)
		problem(d, "model %s is not reached from any place", hex);
	else if (strcmp(least->source, rec->source) || strcmp(least->path, rec->path))
		problem(d, "model %s names %s: %s, but its least place is %s: %s", hex, rec->source,
			rec->path, least->source, least->path);
}

static int check_model(void *ud, pn_bytes key, pn_bytes val)
{
	doctor *d = ud;
	d->checked++;
	char hex[33], err[PN_ERRLEN];
	pn_hex(key.data, key.len < 16 ? key.len : 16, hex);
	if (key.len != 16) {
		problem(d, "models key %s is not 16 bytes", hex);
		return 0;
	}
	pn_model *m = NULL;
	Passnet__Model *rec = NULL;
	void *whole = NULL;
	size_t len = 0;
	pn_key k;
	memcpy(k.b, key.data, 16);
	/* a shape variant is read with its base, and reached through the base's places */
	if (pn_model_variant_of(val, k.b) && pn_get(d->t, PN_T_MODELS, k.b, 16, &(pn_bytes){0}) != 0) {
		problem(d, "model %s is a shape variant of a model that is not stored", hex);
		return 0;
	}
	int rc = pn_model_record_whole(d->t, val, &whole, &len);
	if (rc || pn_model_from_record(whole, len, &m, &rec, err)) {
		problem(d, "model %s does not decode: %s", hex,
			rc > 0 ? "its graph is missing" : rc ? "out of memory" : err);
		free(whole);
		return 0;
	}
	check_canonical(d, &k, rec, hex);
	if (rec->version > PN_SCHEMA_VERSION)
		problem(d, "model %s was written by a newer passnet (schema %u)", hex, rec->version);
	pn_model_free(m);
	free(whole);
	return 0;
}

/* --deep: the graph decoded from a subgraph's canonical bytes must hash
 * back to the subgraph's key (the bytes are the graph, nothing is lost). */
static void check_roundtrip(doctor *d, const char *hex, const pn_model *m, const uint8_t *key)
{
	char err[PN_ERRLEN];
	pn_key k;
	if (pn_subgraph_rehash(m, &k, err))
		problem(d, "subgraph %s: %s", hex, err);
	else if (memcmp(k.b, key, 16))
		problem(d, "subgraph %s: its decoded graph hashes to another key", hex);
}

static int check_subgraph(void *ud, pn_bytes key, pn_bytes val, const Passnet__Subgraph *sg)
{
	(void)val;
	doctor *d = ud;
	d->checked++;
	char hex[33], err[PN_ERRLEN];
	pn_hex(key.data, key.len < 16 ? key.len : 16, hex);
	if (!sg || !sg->has_canonical || key.len != 16) {
		problem(d, "subgraph %s does not decode", hex);
	} else {
		pn_key k = pn_key_of(sg->canonical.data, sg->canonical.len);
		if (memcmp(k.b, key.data, 16))
			problem(d, "subgraph %s: its canonical bytes hash to another key", hex);
		if (sg->pattern.len != 16)
			problem(d, "subgraph %s has no pattern hash", hex);
		pn_model *m = NULL;
		if (pn_subgraph_model(sg->canonical.data, sg->canonical.len, &m, err))
			problem(d, "subgraph %s does not decode into a graph: %s", hex, err);
		else if (d->deep)
			check_roundtrip(d, hex, m, key.data);
		pn_model_free(m);
		pn_bytes o;
		if (pn_get(d->t, PN_T_OCCURRENCES, key.data, 16, &o) != 0)
			problem(d, "subgraph %s occurs nowhere", hex);
	}
	return 0;
}

static int check_occurrence(void *ud, pn_bytes key, pn_bytes val, const Passnet__Occurrence *o)
{
	(void)val;
	doctor *d = ud;
	d->checked++;
	char hex[33];
	pn_hex(key.data, key.len < 16 ? key.len : 16, hex);
	pn_bytes v;
	const uint8_t *st = pn_occurrence_structure(o);
	if (!st || !o->strategy) {
		problem(d, "an occurrence of %s does not decode", hex);
	} else {
		if (pn_get(d->t, PN_T_SUBGRAPHS, key.data, 16, &v) != 0)
			problem(d, "occurrence of missing subgraph %s", hex);
		if (!o->n_candidates)
			problem(d, "an occurrence of %s lists no candidate", hex);
		for (size_t i = 0; i < o->n_candidates; i++) {
			pn_key h;
			if (i && o->candidates[i] <= o->candidates[i - 1])
				problem(d, "an occurrence of %s lists its candidates out of order", hex);
			if (pn_candidate_hash(d->t, st, o->strategy, o->candidates[i], &h) ||
			    memcmp(h.b, key.data, 16))
				problem(d, "occurrence of %s names candidate %u of %s, which does not hash to it",
					hex, o->candidates[i], o->strategy);
		}
	}
	return 0;
}

static int check_candidate(void *ud, pn_bytes key, pn_bytes val, const Passnet__Candidate *c)
{
	(void)val;
	doctor *d = ud;
	d->checked++;
	pn_bytes v;
	char hex[33];
	pn_hex(key.data, 16, hex);
	/* a structure lists no model between partition's candidates and its
	 * listing of the model (a killed run): the next run lists it */
	if (!c || key.len < 21) {
		problem(d, "a candidate of structure %s does not decode", hex);
	} else if (c->has_subgraph && pn_get(d->t, PN_T_SUBGRAPHS, c->subgraph.data, 16, &v) != 0) {
		problem(d, "a candidate of structure %s hashes to a missing subgraph", hex);
	} else if (c->n_entries != c->count) {
		problem(d, "the %s list of structure %s counts %u candidates and holds %zu", c->strategy,
			hex, c->count, c->n_entries);
	}
	for (size_t i = 0; c && i < c->n_entries; i++) {
		const Passnet__CandidateEntry *e = c->entries[i];
		if (e->has_subgraph && (e->subgraph.len != 16 ||
					pn_get(d->t, PN_T_SUBGRAPHS, e->subgraph.data, 16, &v) != 0))
			problem(d, "candidate %zu of %s of structure %s hashes to a missing subgraph", i,
				c->strategy, hex);
	}
	return 0;
}

/* structures: each listed model is stored, has that structure, and the
 * structure has its candidates (partition lists a model after them). */
static int check_structure(void *ud, pn_bytes key, pn_bytes val)
{
	doctor *d = ud;
	d->checked++;
	char hex[33], mhex[33] = "?";
	pn_hex(key.data, key.len < 16 ? key.len : 16, hex);
	if (val.len == 16)
		pn_hex(val.data, 16, mhex);
	pn_key st;
	int got = key.len == 16 && val.len == 16 ? pn_model_structure(d->t, val.data, &st) : 1;
	if (key.len != 16 || val.len != 16)
		problem(d, "a structures record (%s) does not decode", hex);
	else if (got > 0)
		problem(d, "structure %s lists model %s, which is not stored or has no alias", hex,
			mhex);
	else if (got == 0 && memcmp(st.b, key.data, 16))
		problem(d, "structure %s lists model %s, whose structure is another", hex, mhex);
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* aliases: each names a structure and lists distinct nodes (a canonical
 * position per compute node, store/structures.h). */
static int check_alias(void *ud, pn_bytes key, pn_bytes val, const Passnet__Alias *a)
{
	(void)val;
	doctor *d = ud;
	d->checked++;
	char hex[33];
	pn_hex(key.data, key.len < 16 ? key.len : 16, hex);
	if (key.len != 16 || !a || a->structure.len != 16) {
		problem(d, "alias %s does not decode", hex);
		return 0;
	}
	if (!a->n_nodes)
		return 0;   /* a graph without compute nodes */
	uint32_t *sorted = malloc(sizeof(uint32_t) * a->n_nodes);
	if (!sorted)
		return 0;
	memcpy(sorted, a->nodes, sizeof(uint32_t) * a->n_nodes);
	qsort(sorted, a->n_nodes, sizeof(uint32_t), cmp_u32);
	for (size_t i = 1; i < a->n_nodes; i++)
		if (sorted[i] == sorted[i - 1]) {
			problem(d, "alias %s puts node %u at two positions", hex, sorted[i]);
			break;
		}
	free(sorted);
	return 0;
}

/* graphs: each is stored under the hash of its bytes (store/records.h). */
static int check_graph(void *ud, pn_bytes key, pn_bytes val)
{
	doctor *d = ud;
	d->checked++;
	char hex[33];
	pn_hex(key.data, key.len < 16 ? key.len : 16, hex);
	pn_buf g = {0};
	char err[PN_ERRLEN];
	int rc = pn_graph_unpack(val, &g, err);
	if (rc > 0)
		problem(d, "graph %s does not unpack: %s", hex, err);
	else if (rc < 0)
		problem(d, "graph %s: out of memory", hex);
	else if (key.len != 16 || memcmp(pn_key_of(g.p, g.n).b, key.data, 16))
		problem(d, "graph %s: its bytes hash to another key", hex);
	pn_buf_free(&g);
	return 0;
}

/* ranges: a subgraph's input ranges, or a model's "has contributed" marker. */
static int check_ranges(void *ud, pn_bytes key, pn_bytes val, const Passnet__InputRanges *rec)
{
	(void)val;
	doctor *d = ud;
	d->checked++;
	char hex[33];
	pn_hex(key.data, key.len < 16 ? key.len : 16, hex);
	pn_bytes v;
	if (key.len == 17 && ((const uint8_t *)key.data)[16] == 'R') {
		if (pn_get(d->t, PN_T_MODELS, key.data, 16, &v) != 0)
			problem(d, "ranges of model %s, which is not stored", hex);
		return 0;
	}
	const Passnet__InputRanges *r = key.len == 16 ? rec : NULL;
	if (!r || r->n_lo != r->n_hi || r->n_lo != r->n_known)
		problem(d, "a ranges record (%s) does not decode", hex);
	else if (pn_get(d->t, PN_T_SUBGRAPHS, key.data, 16, &v) != 0)
		problem(d, "input ranges of missing subgraph %s", hex);
	for (size_t i = 0; r && i < r->n_lo && i < r->n_known; i++)
		if (r->known[i] && !(r->lo[i] <= r->hi[i]))
			problem(d, "input %zu of subgraph %s has an empty range", i, hex);
	return 0;
}

static int check_error(void *ud, pn_bytes key, pn_bytes val, const Passnet__Error *e)
{
	(void)val;
	doctor *d = ud;
	d->checked++;
	if (!e || key.len < 17)
		problem(d, "an errors record does not decode");
	return 0;
}

/* meta "machine/<id>": its id is the hash of its bytes, and it reads as a
 * calibration. */
static int check_machine(void *ud, pn_bytes key, pn_bytes val)
{
	doctor *d = ud;
	char name[80], id[PN_MACHINE_ID_LEN + 1], err[PN_ERRLEN];
	snprintf(name, sizeof name, "%.*s", (int)(key.len < 64 ? key.len : 64), (const char *)key.data);
	snprintf(id, sizeof id, "%016llx", (unsigned long long)XXH3_64bits(val.data, val.len));
	if (strcmp(name + 8, id)) {
		problem(d, "meta %s: its bytes hash to machine %s", name, id);
		return 0;
	}
	pn_calibration c;
	if (pn_machine_get(d->t, id, &c, err))
		problem(d, "%s", err);
	return 0;
}

/* The current calibration is one of the machines, with the same figures. */
static void check_current_machine(doctor *d)
{
	pn_calibration cur, m;
	char err[PN_ERRLEN];
	int rc = pn_calibration_get(d->t, &cur, err);
	if (rc < 0)
		problem(d, "%s", err);
	if (rc || !cur.machine[0])
		return;   /* none, or one of an older passnet: exec names it */
	rc = pn_machine_get(d->t, cur.machine, &m, err);
	if (rc)
		problem(d, "meta calibration names machine %s, which is not stored", cur.machine);
	else if (m.max_threads != cur.max_threads || strcmp(m.host, cur.host) ||
		 memcmp(m.peak_gflops, cur.peak_gflops, sizeof m.peak_gflops) ||
		 memcmp(m.bandwidth_gbs, cur.bandwidth_gbs, sizeof m.bandwidth_gbs))
		problem(d, "meta calibration differs from its machine %s", cur.machine);
}

/* A profile decodes and names a stored machine (or none: an older passnet). */
static int check_profile(void *ud, pn_bytes key, pn_bytes val, const Passnet__Profile *p)
{
	(void)val;
	doctor *d = ud;
	d->checked++;
	char hex[33] = "?";
	if (key.len == 16)
		pn_hex(key.data, 16, hex);
	if (!p) {
		problem(d, "the profile of %s does not decode", hex);
		return 0;
	}
	pn_calibration c;
	char err[PN_ERRLEN];
	if (p->machine && pn_machine_get(d->t, p->machine, &c, err))
		problem(d, "the profile of %s names machine %s, which is not stored", hex, p->machine);
	return 0;
}

static int run(pn_ctx *ctx)
{
	doctor d = {.t = ctx->txn, .deep = deep};
	pn_model_paths_foreach(d.t, NULL, 0, collect_place, &d);
	for (int i = 0; i < d.np; i++)
		check_place(&d, &d.p[i]);
	pn_foreach(d.t, PN_T_MODELS, NULL, 0, check_model, &d);
	pn_errors_foreach(d.t, NULL, 0, check_error, &d);
	pn_candidates_foreach(d.t, NULL, 0, check_candidate, &d);
	pn_foreach(d.t, PN_T_STRUCTURES, NULL, 0, check_structure, &d);
	pn_aliases_foreach(d.t, NULL, 0, check_alias, &d);
	pn_foreach(d.t, PN_T_GRAPHS, NULL, 0, check_graph, &d);
	pn_subgraphs_foreach(d.t, NULL, 0, check_subgraph, &d);
	pn_occurrences_foreach(d.t, NULL, 0, check_occurrence, &d);
	pn_ranges_foreach(d.t, NULL, 0, check_ranges, &d);
	pn_profiles_foreach(d.t, NULL, 0, check_profile, &d);
	pn_foreach(d.t, PN_T_META, "machine/", 8, check_machine, &d);
	check_current_machine(&d);
	for (int i = 0; i < d.np; i++) {
		free(d.p[i].source);
		free(d.p[i].path);
	}
	free(d.p);
	if (d.problems) {
		printf("doctor: %d problems in %lld records\n", d.problems, (long long)d.checked);
		return 1;
	}
	printf("doctor: %lld records checked, no problems\n", (long long)d.checked);
	return 0;
}

const pn_cmd_spec pn_cmd_doctor = {
	.options = options,
	.summary = "check the store's invariants",
	.description = "check the store's invariants; one line per problem; `--deep` also checks "
		       "that every subgraph's canonical bytes decode into a graph that hashes back to "
		       "its key",
	.details = "Checks the store: every record decodes; every stored model decodes into\n"
		   "a graph and is reached from model_paths, with its canonical place the\n"
		   "least of them; every place points at a stored model or at an error;\n"
		   "every place's source is recorded; every candidate belongs to a stored\n"
		   "model; every subgraph's key is the hash of its canonical bytes, which\n"
		   "decode into a graph, and it occurs somewhere; every occurrence names a\n"
		   "candidate that hashes to it; every profile decodes and names a stored\n"
		   "machine, whose id is the hash of its record, as the current calibration's\n"
		   "is.  Prints one line per problem and exits 1 if\n"
		   "there is any.\n",
	.run = run,
};
