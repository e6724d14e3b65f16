/*
 * test_tables.c - typed access per table (store/tables.h) on a real LMDB
 * store: records put as protobuf bytes come back as their messages, by key
 * and by walk, and a malformed record and a missing key say so.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "passnet.pb-c.h"
#include "store/records.h"
#include "store/store.h"
#include "store/tables.h"
#include "scratch_dir.h"

/* Subgraph keys: A and B share their first byte (a prefix walk finds both),
 * BAD holds bytes that do not decode, NONE is never stored. */
static const uint8_t KEY_A[16] = {0x10, 1};
static const uint8_t KEY_B[16] = {0x10, 2};
static const uint8_t KEY_BAD[16] = {0x20, 1};
static const uint8_t KEY_NONE[16] = {0x30, 1};
/* A length-delimited field 2 that claims 5 bytes where 1 follows. */
static const uint8_t MALFORMED[] = {0x12, 0x05, 'a'};

struct fx {
	char tmp[64];
	char db[96];
	char err[PN_ERRLEN];
	pn_store *s;
	pn_rtxn *t;
};

static void put_subgraph(struct fx *f, pn_writer *w, const uint8_t key[16], const char *canon,
			 uint32_t nodes)
{
	Passnet__Subgraph sg = PASSNET__SUBGRAPH__INIT;
	char *ops[] = {"Add", "Relu"};
	sg.has_canonical = 1;
	sg.canonical = (ProtobufCBinaryData){strlen(canon), (uint8_t *)canon};
	sg.n_ops = 2;
	sg.ops = ops;
	sg.has_nodes = 1;
	sg.nodes = nodes;
	if (pn_put_msg(w, PN_T_SUBGRAPHS, key, 16, &sg.base, f->err))
		fail_msg("put subgraph: %s", f->err);
}

static void put_occurrence(struct fx *f, pn_writer *w, const char *strategy, uint32_t cand)
{
	Passnet__Occurrence o = PASSNET__OCCURRENCE__INIT;
	o.strategy = (char *)strategy;
	o.has_candidate = 1;
	o.candidate = cand;
	uint8_t buf[64];
	size_t n = passnet__occurrence__pack(&o, buf);
	if (pn_put_dup(w, PN_T_OCCURRENCES, KEY_A, 16, buf, n, f->err))
		fail_msg("put occurrence: %s", f->err);
}

static void put_source_and_model(struct fx *f, pn_writer *w)
{
	Passnet__Source src = PASSNET__SOURCE__INIT;
	src.name = "zoo";
	src.kind = "dir";
	if (pn_put_msg(w, PN_T_SOURCES, "zoo", 3, &src.base, f->err))
		fail_msg("put source: %s", f->err);
	Passnet__Model m = PASSNET__MODEL__INIT;
	m.source = "zoo";
	m.path = "a.onnx";
	m.has_nodes = 1;
	m.nodes = 42;
	if (pn_put_msg(w, PN_T_MODELS, KEY_A, 16, &m.base, f->err))
		fail_msg("put model: %s", f->err);
	pn_key place = pn_place_key("zoo", "b.onnx");
	if (pn_error_put(w, &place, "extract", "zoo", "b.onnx", "not a model", f->err))
		fail_msg("put error: %s", f->err);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	if (!f || scratch_dir_make(f->tmp, sizeof f->tmp, "tables")) {
		free(f);
		return -1;
	}
	snprintf(f->db, sizeof f->db, "%s/db", f->tmp);
	pn_writer *w;
	if (pn_store_open(&f->s, f->db, 0, f->err) || pn_writer_open(f->s, &w, 0, f->err))
		fail_msg("open: %s", f->err);
	put_subgraph(f, w, KEY_A, "canon-a", 2);
	put_subgraph(f, w, KEY_B, "canon-b", 3);
	if (pn_put(w, PN_T_SUBGRAPHS, KEY_BAD, 16, MALFORMED, sizeof MALFORMED, f->err))
		fail_msg("put: %s", f->err);
	put_occurrence(f, w, "ops", 1);
	put_occurrence(f, w, "chains", 7);
	put_source_and_model(f, w);
	if (pn_writer_close(w, f->err) || pn_rtxn_begin(f->s, &f->t, f->err))
		fail_msg("close: %s", f->err);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	pn_rtxn_end(f->t);
	pn_store_close(f->s);
	scratch_dir_remove(f->tmp);
	free(f);
	return 0;
}

/* --- get ------------------------------------------------------------------------ */

static void test_get_found(void **state)
{
	struct fx *f = *state;
	Passnet__Subgraph *sg = NULL;
	assert_int_equal(pn_subgraphs_get(f->t, KEY_B, 16, &sg), 0);
	assert_non_null(sg);
	assert_true(sg->has_canonical);
	assert_int_equal(sg->canonical.len, 7);
	assert_memory_equal(sg->canonical.data, "canon-b", 7);
	assert_int_equal(sg->nodes, 3);
	assert_int_equal(sg->n_ops, 2);
	assert_string_equal(sg->ops[1], "Relu");
	pn_subgraphs_free(sg);

	Passnet__Source *src = NULL;
	assert_int_equal(pn_sources_get(f->t, "zoo", 3, &src), 0);
	assert_string_equal(src->kind, "dir");
	pn_sources_free(src);

	/* the same key in another table is another record */
	Passnet__Model *m = NULL;
	assert_int_equal(pn_models_get(f->t, KEY_A, 16, &m), 0);
	assert_string_equal(m->path, "a.onnx");
	assert_int_equal(m->nodes, 42);
	pn_models_free(m);
}

static void test_get_missing(void **state)
{
	struct fx *f = *state;
	Passnet__Subgraph *sg = (Passnet__Subgraph *)&sg;   /* must be cleared */
	assert_int_equal(pn_subgraphs_get(f->t, KEY_NONE, 16, &sg), PN_REC_MISSING);
	assert_null(sg);
	Passnet__Profile *p = (Passnet__Profile *)&p;
	assert_int_equal(pn_profiles_get(f->t, KEY_A, 16, &p), PN_REC_MISSING);
	assert_null(p);
	Passnet__Source *src = NULL;
	assert_int_equal(pn_sources_get(f->t, "zo", 2, &src), PN_REC_MISSING);
	assert_null(src);
}

static void test_get_malformed(void **state)
{
	struct fx *f = *state;
	Passnet__Subgraph *sg = (Passnet__Subgraph *)&sg;
	assert_int_equal(pn_subgraphs_get(f->t, KEY_BAD, 16, &sg), PN_REC_MALFORMED);
	assert_null(sg);
}

/* --- foreach -------------------------------------------------------------------- */

struct walk_seen {
	int calls, malformed, stop_at;
	uint32_t nodes;            /* summed over the records that decode */
	size_t bad_len;            /* the raw size of the malformed one */
	uint8_t first[8];          /* each call's key's first two bytes, in order */
	uint8_t second[8];
};

static int on_subgraph(void *ud, pn_bytes key, pn_bytes val, const Passnet__Subgraph *sg)
{
	struct walk_seen *w = ud;
	assert_true(w->calls < 8 && key.len == 16);
	w->first[w->calls] = ((const uint8_t *)key.data)[0];
	w->second[w->calls] = ((const uint8_t *)key.data)[1];
	w->calls++;
	if (!sg) {
		w->malformed++;
		w->bad_len = val.len;
	} else {
		w->nodes += sg->nodes;
	}
	return w->calls == w->stop_at ? 7 : 0;
}

static void test_foreach_all(void **state)
{
	struct fx *f = *state;
	struct walk_seen w = {0};
	assert_int_equal(pn_subgraphs_foreach(f->t, NULL, 0, on_subgraph, &w), 0);
	assert_int_equal(w.calls, 3);
	assert_int_equal(w.malformed, 1);
	assert_int_equal(w.bad_len, sizeof MALFORMED);
	assert_int_equal(w.nodes, 5);
	/* key order: A, B, then the malformed one, passed on as NULL */
	assert_int_equal(w.first[0], 0x10);
	assert_int_equal(w.second[0], 1);
	assert_int_equal(w.second[1], 2);
	assert_int_equal(w.first[2], 0x20);
}

static void test_foreach_prefix_and_stop(void **state)
{
	struct fx *f = *state;
	struct walk_seen w = {0};
	assert_int_equal(pn_subgraphs_foreach(f->t, "\x10", 1, on_subgraph, &w), 0);
	assert_int_equal(w.calls, 2);
	assert_int_equal(w.malformed, 0);
	assert_int_equal(w.nodes, 5);

	struct walk_seen stop = {.stop_at = 1};
	assert_int_equal(pn_subgraphs_foreach(f->t, NULL, 0, on_subgraph, &stop), 7);
	assert_int_equal(stop.calls, 1);
	assert_int_equal(stop.nodes, 2);

	struct walk_seen none = {0};
	assert_int_equal(pn_subgraphs_foreach(f->t, "\x30", 1, on_subgraph, &none), 0);
	assert_int_equal(none.calls, 0);
}

struct occ_seen {
	int n;
	char strategies[4][16];
	uint32_t sum;
};

static int on_occurrence(void *ud, pn_bytes key, pn_bytes val, const Passnet__Occurrence *o)
{
	(void)val;
	struct occ_seen *s = ud;
	assert_int_equal(key.len, 16);
	assert_memory_equal(key.data, KEY_A, 16);
	assert_non_null(o);
	assert_true(s->n < 4);
	snprintf(s->strategies[s->n++], sizeof s->strategies[0], "%s", o->strategy);
	s->sum += o->candidate;
	return 0;
}

/* A dupsort table: one call per value, all under the same key. */
static void test_foreach_dupsort(void **state)
{
	struct fx *f = *state;
	struct occ_seen s = {0};
	assert_int_equal(pn_occurrences_foreach(f->t, KEY_A, 16, on_occurrence, &s), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.sum, 8);
	int ops = !strcmp(s.strategies[0], "ops") || !strcmp(s.strategies[1], "ops");
	int chains = !strcmp(s.strategies[0], "chains") || !strcmp(s.strategies[1], "chains");
	assert_true(ops && chains);
}

static int on_error(void *ud, pn_bytes key, pn_bytes val, const Passnet__Error *e)
{
	(void)val;
	char *msg = ud;
	assert_int_equal(key.len, 16 + strlen("extract"));
	assert_non_null(e);
	assert_string_equal(e->stage, "extract");
	snprintf(msg, 64, "%s: %s", e->path, e->message);
	return 0;
}

/* A record written by the store's own writer (store/records.h). */
static void test_foreach_errors(void **state)
{
	struct fx *f = *state;
	char msg[64] = "";
	assert_int_equal(pn_errors_foreach(f->t, NULL, 0, on_error, msg), 0);
	assert_string_equal(msg, "b.onnx: not a model");
}

/* --- unpack and free ------------------------------------------------------------ */

static void test_unpack(void **state)
{
	struct fx *f = *state;
	pn_bytes v;
	assert_int_equal(pn_get(f->t, PN_T_MODELS, KEY_A, 16, &v), 0);
	Passnet__Model *m = pn_models_unpack(v);
	assert_non_null(m);
	assert_string_equal(m->source, "zoo");
	pn_models_free(m);
	assert_null(pn_subgraphs_unpack((pn_bytes){MALFORMED, sizeof MALFORMED}));
	pn_subgraphs_free(NULL);
	pn_errors_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_get_found),
		T(test_get_missing),
		T(test_get_malformed),
		T(test_foreach_all),
		T(test_foreach_prefix_and_stop),
		T(test_foreach_dupsort),
		T(test_foreach_errors),
		T(test_unpack),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
