/*
 * test_merge.c - pn_store_merge on real LMDB stores in a scratch directory:
 * each table's rule, the least bytes on a conflict, idempotence, and that
 * neither the order nor the grouping of the inputs changes the result.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/buf.h"
#include "common/err.h"
#include "passnet.pb-c.h"
#include "store/merge.h"
#include "store/records.h"
#include "store/store.h"
#include "scratch_dir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct fx {
	char tmp[64];
	char path[160];
	char err[PN_ERRLEN];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	if (!f || scratch_dir_make(f->tmp, sizeof f->tmp, "merge")) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	scratch_dir_remove(f->tmp);
	free(f);
	return 0;
}

/* --- helpers ----------------------------------------------------------------- */

static const char *dir(struct fx *f, const char *name)
{
	snprintf(f->path, sizeof f->path, "%s/%s", f->tmp, name);
	return f->path;
}

static pn_store *open_rw(struct fx *f, const char *name)
{
	pn_store *s;
	if (pn_store_open(&s, dir(f, name), 0, f->err))
		fail_msg("open %s: %s", name, f->err);
	return s;
}

/* A store to merge from, written by fn. */
typedef void (*fill_fn)(struct fx *f, pn_writer *w);

static void make_store(struct fx *f, const char *name, fill_fn fill)
{
	pn_store *s = open_rw(f, name);
	pn_writer *w;
	if (pn_writer_open(s, &w, 0, f->err))
		fail_msg("writer: %s", f->err);
	fill(f, w);
	if (pn_writer_close(w, f->err))
		fail_msg("close: %s", f->err);
	pn_store_close(s);
}

static void put(struct fx *f, pn_writer *w, int table, const char *key, const void *v, size_t n)
{
	if (pn_put(w, table, key, strlen(key), v, n, f->err))
		fail_msg("put %s: %s", key, f->err);
}

static void put_msg(struct fx *f, pn_writer *w, int table, const char *key, const ProtobufCMessage *m)
{
	if (pn_put_msg(w, table, key, strlen(key), m, f->err))
		fail_msg("put %s: %s", key, f->err);
}

static void put_dup(struct fx *f, pn_writer *w, int table, const char *key, const char *v)
{
	if (pn_put_dup(w, table, key, strlen(key), v, strlen(v), f->err))
		fail_msg("put_dup %s: %s", key, f->err);
}

/* Merges the named inputs, in order, into a fresh store `out`. */
static pn_merge_stats merge_into(struct fx *f, const char *out, const char *const *in, int n)
{
	pn_merge_stats st = {0};
	pn_store *s = open_rw(f, out);
	char path[160];
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof path, "%s/%s", f->tmp, in[i]);
		if (pn_store_merge(s, path, &st, f->err))
			fail_msg("merge %s into %s: %s", in[i], out, f->err);
	}
	pn_store_close(s);
	return st;
}

static int dump_record(void *ud, pn_bytes key, pn_bytes val)
{
	pn_buf *b = ud;
	pn_buf_blob(b, key.data, key.len);
	pn_buf_blob(b, val.data, val.len);
	return 0;
}

/* Every table's records, in order, as one byte string (mdb_dump's content). */
static pn_buf dump(struct fx *f, const char *name)
{
	pn_store *s;
	if (pn_store_open(&s, dir(f, name), 1, f->err))
		fail_msg("open %s: %s", name, f->err);
	pn_rtxn *t;
	assert_int_equal(pn_rtxn_begin(s, &t, f->err), 0);
	pn_buf b = {0};
	for (int table = 0; table < PN_T_COUNT; table++) {
		pn_buf_varint(&b, (uint64_t)table);
		assert_int_equal(pn_foreach(t, table, NULL, 0, dump_record, &b), 0);
	}
	pn_rtxn_end(t);
	pn_store_close(s);
	assert_false(b.oom);
	return b;
}

static void assert_same_store(struct fx *f, const char *a, const char *b)
{
	pn_buf x = dump(f, a), y = dump(f, b);
	if (x.n != y.n || memcmp(x.p, y.p, x.n))
		fail_msg("stores %s and %s differ", a, b);
	pn_buf_free(&x);
	pn_buf_free(&y);
}

/* The value of key in a store's table, copied (malloc'd), NULL if absent. */
static uint8_t *get(struct fx *f, const char *name, int table, const char *key, size_t *len)
{
	pn_store *s;
	if (pn_store_open(&s, dir(f, name), 1, f->err))
		fail_msg("open %s: %s", name, f->err);
	pn_rtxn *t;
	assert_int_equal(pn_rtxn_begin(s, &t, f->err), 0);
	pn_bytes v;
	uint8_t *copy = NULL;
	if (pn_get(t, table, key, strlen(key), &v) == 0) {
		copy = malloc(v.len + 1);
		memcpy(copy, v.data, v.len);
		*len = v.len;
	}
	pn_rtxn_end(t);
	pn_store_close(s);
	return copy;
}

static int64_t count(struct fx *f, const char *name, int table)
{
	pn_store *s;
	if (pn_store_open(&s, dir(f, name), 1, f->err))
		fail_msg("open %s: %s", name, f->err);
	pn_rtxn *t;
	assert_int_equal(pn_rtxn_begin(s, &t, f->err), 0);
	int64_t n = pn_count(t, table);
	pn_rtxn_end(t);
	pn_store_close(s);
	return n;
}

/* --- records ------------------------------------------------------------------- */

static void put_model(struct fx *f, pn_writer *w, const char *key, const char *source,
		      const char *path, const char *producer)
{
	Passnet__Model m = PASSNET__MODEL__INIT;
	m.has_version = 1;
	m.version = PN_SCHEMA_VERSION;
	m.source = (char *)source;
	m.path = (char *)path;
	m.producer = (char *)producer;
	put_msg(f, w, PN_T_MODELS, key, &m.base);
}

static void put_candidate(struct fx *f, pn_writer *w, const char *key, uint32_t node,
			  const char *hash)
{
	Passnet__Candidate c = PASSNET__CANDIDATE__INIT;
	c.has_version = 1;
	c.version = PN_SCHEMA_VERSION;
	c.strategy = "sole";
	c.n_nodes = 1;
	c.nodes = &node;
	if (hash) {
		c.has_subgraph = 1;
		c.subgraph.data = (uint8_t *)hash;
		c.subgraph.len = strlen(hash);
	}
	put_msg(f, w, PN_T_CANDIDATES, key, &c.base);
}

static void put_source(struct fx *f, pn_writer *w, const char *name, const char *licence,
		       uint64_t seen, int complete)
{
	Passnet__Source s = PASSNET__SOURCE__INIT;
	s.has_version = 1;
	s.version = PN_SCHEMA_VERSION;
	s.name = (char *)name;
	s.kind = "dir";
	s.location = (char *)name;
	s.licence = (char *)licence;
	s.has_files_seen = s.has_models_ok = s.has_models_failed = s.has_complete = 1;
	s.files_seen = seen;
	s.models_ok = seen;
	s.complete = complete;
	put_msg(f, w, PN_T_SOURCES, name, &s.base);
}

static void put_place(struct fx *f, pn_writer *w, const char *key, const char *source,
		      const char *path, int failed)
{
	Passnet__ModelPath p = PASSNET__MODEL_PATH__INIT;
	p.has_version = 1;
	p.version = PN_SCHEMA_VERSION;
	p.has_status = 1;
	p.status = failed ? PASSNET__MODEL_STATUS__MODEL_FAILED : PASSNET__MODEL_STATUS__MODEL_OK;
	p.source = (char *)source;
	p.path = (char *)path;
	put_msg(f, w, PN_T_MODEL_PATHS, key, &p.base);
}

static Passnet__Source *source_of(struct fx *f, const char *store, const char *name)
{
	size_t n;
	uint8_t *v = get(f, store, PN_T_SOURCES, name, &n);
	assert_non_null(v);
	Passnet__Source *s = passnet__source__unpack(NULL, n, v);
	free(v);
	assert_non_null(s);
	return s;
}

/* --- 1. meta: the current calibration is settled (least bytes), machine/ keys
 * add up, another meta key with other bytes is a conflict ---------------------- */

static void meta_a(struct fx *f, pn_writer *w)
{
	put(f, w, PN_T_META, "calibration", "\x08\x02", 2);
	put(f, w, PN_T_META, "machine/00000000000000aa", "A", 1);
	put(f, w, PN_T_META, "other", "x", 1);
}

static void meta_b(struct fx *f, pn_writer *w)
{
	put(f, w, PN_T_META, "calibration", "\x08\x01", 2);
	put(f, w, PN_T_META, "machine/00000000000000bb", "B", 1);
	put(f, w, PN_T_META, "other", "y", 1);
}

static void test1_meta(void **state)
{
	struct fx *f = *state;
	make_store(f, "a", meta_a);
	make_store(f, "b", meta_b);
	pn_merge_stats st = merge_into(f, "ab", (const char *[]){"a", "b"}, 2);
	assert_int_equal(st.table[PN_T_META].conflicts, 1);    /* "other" */
	assert_int_equal(st.table[PN_T_META].resolved, 1);     /* "calibration" */
	assert_int_equal(st.table[PN_T_META].added, 4);
	assert_int_equal(pn_merge_total_conflicts(&st), 1);
	merge_into(f, "ba", (const char *[]){"b", "a"}, 2);
	size_t n;
	uint8_t *v = get(f, "ab", PN_T_META, "calibration", &n);
	assert_non_null(v);
	assert_int_equal(n, 2);
	assert_memory_equal(v, "\x08\x01", 2);   /* the least bytes */
	free(v);
	assert_non_null(v = get(f, "ab", PN_T_META, "machine/00000000000000aa", &n));
	free(v);
	assert_non_null(v = get(f, "ab", PN_T_META, "machine/00000000000000bb", &n));
	free(v);
	assert_same_store(f, "ab", "ba");
}

/* --- 2. sources: complete is the AND, counts come from model_paths ---------------- */

static void src_a(struct fx *f, pn_writer *w)
{
	put_source(f, w, "zoo", "MIT", 1, 1);
	put_place(f, w, "place-1", "zoo", "x.onnx", 0);
}

static void src_b(struct fx *f, pn_writer *w)
{
	put_source(f, w, "zoo", "MIT", 2, 0);
	put_place(f, w, "place-2", "zoo", "y.onnx", 0);
	put_place(f, w, "place-3", "zoo", "z.onnx", 1);
}

static void src_c(struct fx *f, pn_writer *w)
{
	put_source(f, w, "zoo", "Apache-2.0", 0, 1);
}

static void test2_sources(void **state)
{
	struct fx *f = *state;
	make_store(f, "a", src_a);
	make_store(f, "b", src_b);
	make_store(f, "c", src_c);
	pn_merge_stats st = merge_into(f, "ab", (const char *[]){"a", "b"}, 2);
	assert_int_equal(st.table[PN_T_SOURCES].conflicts, 0);
	Passnet__Source *s = source_of(f, "ab", "zoo");
	assert_int_equal(s->files_seen, 3);
	assert_int_equal(s->models_ok, 2);
	assert_int_equal(s->models_failed, 1);
	assert_true(s->has_complete);
	assert_false(s->complete);   /* b's scan did not finish */
	assert_string_equal(s->licence, "MIT");
	passnet__source__free_unpacked(s, NULL);
	/* another licence: a conflict, the least description kept */
	st = merge_into(f, "abc", (const char *[]){"a", "b", "c"}, 3);
	assert_int_equal(st.table[PN_T_SOURCES].conflicts, 1);
	merge_into(f, "cba", (const char *[]){"c", "b", "a"}, 3);
	s = source_of(f, "abc", "zoo");
	/* the length comes before the text: "MIT" packs to less bytes */
	assert_string_equal(s->licence, "MIT");
	assert_int_equal(s->files_seen, 3);
	passnet__source__free_unpacked(s, NULL);
	assert_same_store(f, "abc", "cba");
}

/* --- 3. models: the least (source, path) wins; the same place: a conflict --------- */

static void mod_a(struct fx *f, pn_writer *w)
{
	put_model(f, w, "model-1", "zoo", "b/model.onnx", "torch");
	put_model(f, w, "model-2", "zoo", "c.onnx", "torch");
}

static void mod_b(struct fx *f, pn_writer *w)
{
	put_model(f, w, "model-1", "zoo", "a/model.onnx", "torch");
	put_model(f, w, "model-2", "zoo", "c.onnx", "keras");
}

/* Merges a and b into "ab" and "ba": each order resolves and conflicts on
 * table as many times, and the two stores are the same bytes. */
static void merge_both_ways(struct fx *f, int table, int resolved, int conflicts)
{
	pn_merge_stats st = merge_into(f, "ab", (const char *[]){"a", "b"}, 2);
	assert_int_equal(st.table[table].resolved, resolved);
	assert_int_equal(st.table[table].conflicts, conflicts);
	st = merge_into(f, "ba", (const char *[]){"b", "a"}, 2);
	assert_int_equal(st.table[table].resolved, resolved);
	assert_int_equal(st.table[table].conflicts, conflicts);
	assert_same_store(f, "ab", "ba");
}

static void test3_models(void **state)
{
	struct fx *f = *state;
	make_store(f, "a", mod_a);
	make_store(f, "b", mod_b);
	merge_both_ways(f, PN_T_MODELS, 1, 1);
	size_t n;
	uint8_t *v = get(f, "ab", PN_T_MODELS, "model-1", &n);
	Passnet__Model *m = passnet__model__unpack(NULL, n, v);
	assert_non_null(m);
	assert_string_equal(m->path, "a/model.onnx");
	passnet__model__free_unpacked(m, NULL);
	free(v);
	v = get(f, "ab", PN_T_MODELS, "model-2", &n);
	m = passnet__model__unpack(NULL, n, v);
	assert_non_null(m);
	assert_string_equal(m->producer, "keras");   /* "keras" < "torch": the least bytes */
	passnet__model__free_unpacked(m, NULL);
	free(v);
}

/* --- 4. candidates: the hashed one wins; two hashes: a conflict ------------------- */

static void cand_a(struct fx *f, pn_writer *w)
{
	put_candidate(f, w, "cand-1", 3, NULL);
	put_candidate(f, w, "cand-2", 4, "hash-x");
	put_candidate(f, w, "cand-3", 5, NULL);
}

static void cand_b(struct fx *f, pn_writer *w)
{
	put_candidate(f, w, "cand-1", 3, "hash-a");
	put_candidate(f, w, "cand-2", 4, "hash-y");
	put_candidate(f, w, "cand-3", 6, NULL);
}

static void test4_candidates(void **state)
{
	struct fx *f = *state;
	make_store(f, "a", cand_a);
	make_store(f, "b", cand_b);
	pn_merge_stats st = merge_into(f, "ab", (const char *[]){"a", "b"}, 2);
	assert_int_equal(st.table[PN_T_CANDIDATES].resolved, 1);
	assert_int_equal(st.table[PN_T_CANDIDATES].conflicts, 2);
	st = merge_into(f, "ba", (const char *[]){"b", "a"}, 2);
	assert_int_equal(st.table[PN_T_CANDIDATES].resolved, 1);   /* b's hashed one kept */
	assert_int_equal(st.table[PN_T_CANDIDATES].equal, 0);
	assert_int_equal(st.table[PN_T_CANDIDATES].conflicts, 2);
	assert_same_store(f, "ab", "ba");
	const char *want[] = {"hash-a", "hash-x"};
	const char *keys[] = {"cand-1", "cand-2"};
	for (int i = 0; i < 2; i++) {
		size_t n;
		uint8_t *v = get(f, "ab", PN_T_CANDIDATES, keys[i], &n);
		Passnet__Candidate *c = passnet__candidate__unpack(NULL, n, v);
		assert_non_null(c);
		assert_true(c->has_subgraph);
		assert_int_equal(c->subgraph.len, 6);
		assert_memory_equal(c->subgraph.data, want[i], 6);
		passnet__candidate__free_unpacked(c, NULL);
		free(v);
	}
	size_t n;
	uint8_t *v = get(f, "ab", PN_T_CANDIDATES, "cand-3", &n);
	Passnet__Candidate *c = passnet__candidate__unpack(NULL, n, v);
	assert_non_null(c);
	assert_int_equal(c->nodes[0], 5);   /* node 5 packs to less bytes than 6 */
	passnet__candidate__free_unpacked(c, NULL);
	free(v);
}

/* --- 5. occurrences and structures: the union of the pairs ----------------------- */

static void dup_a(struct fx *f, pn_writer *w)
{
	put_dup(f, w, PN_T_OCCURRENCES, "sub-1", "occ-1");
	put_dup(f, w, PN_T_OCCURRENCES, "sub-1", "occ-2");
	put_dup(f, w, PN_T_STRUCTURES, "struct-1", "model-1");
}

static void dup_b(struct fx *f, pn_writer *w)
{
	put_dup(f, w, PN_T_OCCURRENCES, "sub-1", "occ-2");
	put_dup(f, w, PN_T_OCCURRENCES, "sub-1", "occ-3");
	put_dup(f, w, PN_T_STRUCTURES, "struct-1", "model-2");
}

static void test5_dupsort_union(void **state)
{
	struct fx *f = *state;
	make_store(f, "a", dup_a);
	make_store(f, "b", dup_b);
	pn_merge_stats st = merge_into(f, "ab", (const char *[]){"a", "b"}, 2);
	assert_int_equal(st.table[PN_T_OCCURRENCES].added, 3);
	assert_int_equal(st.table[PN_T_OCCURRENCES].equal, 1);
	assert_int_equal(st.table[PN_T_STRUCTURES].added, 2);
	assert_int_equal(pn_merge_total_conflicts(&st), 0);
	assert_int_equal(count(f, "ab", PN_T_OCCURRENCES), 3);
	assert_int_equal(count(f, "ab", PN_T_STRUCTURES), 2);
	merge_into(f, "ba", (const char *[]){"b", "a"}, 2);
	assert_same_store(f, "ab", "ba");
}

/* --- 6. the other tables: equal, or a conflict keeping the least bytes ----------- */

static void sub_a(struct fx *f, pn_writer *w)
{
	put(f, w, PN_T_SUBGRAPHS, "sub-1", "\x12\x03" "abc", 5);
	put(f, w, PN_T_PROFILES, "sub-1", "\x28\x07", 2);
	put(f, w, PN_T_ERRORS, "err-1", "\x12\x04" "dedu", 6);
}

static void sub_b(struct fx *f, pn_writer *w)
{
	put(f, w, PN_T_SUBGRAPHS, "sub-1", "\x12\x02" "ab", 4);
	put(f, w, PN_T_PROFILES, "sub-1", "\x28\x07", 2);
	put(f, w, PN_T_ERRORS, "err-1", "\x12\x04" "dedu", 6);
}

static void test6_conflict_least_bytes(void **state)
{
	struct fx *f = *state;
	make_store(f, "a", sub_a);
	make_store(f, "b", sub_b);
	pn_merge_stats st = merge_into(f, "ab", (const char *[]){"a", "b"}, 2);
	assert_int_equal(st.table[PN_T_SUBGRAPHS].conflicts, 1);
	assert_int_equal(st.table[PN_T_PROFILES].equal, 1);
	assert_int_equal(st.table[PN_T_ERRORS].equal, 1);
	merge_into(f, "ba", (const char *[]){"b", "a"}, 2);
	assert_same_store(f, "ab", "ba");
	size_t n;
	uint8_t *v = get(f, "ab", PN_T_SUBGRAPHS, "sub-1", &n);
	assert_int_equal(n, 4);   /* "\x12\x02ab" < "\x12\x03abc" */
	assert_memory_equal(v, "\x12\x02" "ab", 4);
	free(v);
}

/* --- 7. idempotence: merging again adds nothing and changes no byte -------------- */

static void all_a(struct fx *f, pn_writer *w)
{
	meta_a(f, w);
	src_a(f, w);
	mod_a(f, w);
	cand_a(f, w);
	dup_a(f, w);
	sub_a(f, w);
}

static void all_b(struct fx *f, pn_writer *w)
{
	meta_b(f, w);
	src_b(f, w);
	mod_b(f, w);
	cand_b(f, w);
	dup_b(f, w);
	sub_b(f, w);
}

static void all_c(struct fx *f, pn_writer *w)
{
	src_c(f, w);
	put_model(f, w, "model-1", "aaa", "first.onnx", "onnx");
	put_candidate(f, w, "cand-3", 5, "hash-c");
	put_dup(f, w, PN_T_OCCURRENCES, "sub-1", "occ-0");
}

static void test7_idempotent(void **state)
{
	struct fx *f = *state;
	make_store(f, "a", all_a);
	make_store(f, "b", all_b);
	merge_into(f, "ab", (const char *[]){"a", "b"}, 2);
	merge_into(f, "ab2", (const char *[]){"a", "b"}, 2);
	pn_merge_stats st = merge_into(f, "ab2", (const char *[]){"b", "a", "b"}, 3);
	for (int t = 0; t < PN_T_COUNT; t++)
		assert_int_equal(st.table[t].added, 0);
	assert_int_equal(st.recounted, 0);
	assert_same_store(f, "ab", "ab2");
}

/* --- 8. order and grouping: every way of merging three stores gives one store ---- */

static void test8_order_independent(void **state)
{
	struct fx *f = *state;
	make_store(f, "a", all_a);
	make_store(f, "b", all_b);
	make_store(f, "c", all_c);
	merge_into(f, "abc", (const char *[]){"a", "b", "c"}, 3);
	merge_into(f, "cab", (const char *[]){"c", "a", "b"}, 3);
	merge_into(f, "bca", (const char *[]){"b", "c", "a"}, 3);
	/* grouped: (c + a) merged first, then merged with b; and (a + b), then c */
	merge_into(f, "ca", (const char *[]){"c", "a"}, 2);
	merge_into(f, "b_ca", (const char *[]){"b", "ca"}, 2);
	merge_into(f, "ab", (const char *[]){"a", "b"}, 2);
	merge_into(f, "ab", (const char *[]){"c"}, 1);
	assert_same_store(f, "abc", "cab");
	assert_same_store(f, "abc", "bca");
	assert_same_store(f, "abc", "b_ca");
	assert_same_store(f, "abc", "ab");
	size_t n;
	uint8_t *v = get(f, "abc", PN_T_MODELS, "model-1", &n);
	Passnet__Model *m = passnet__model__unpack(NULL, n, v);
	assert_non_null(m);
	assert_string_equal(m->source, "aaa");   /* the least place of the three */
	passnet__model__free_unpacked(m, NULL);
	free(v);
}

/* --- 9. an input of another schema version, and the store itself, are refused --- */

static void other_schema(struct fx *f, pn_writer *w)
{
	Passnet__Meta m = PASSNET__META__INIT;
	m.has_version = 1;
	m.version = PN_SCHEMA_VERSION;
	m.text = "not the store's record";
	put_msg(f, w, PN_T_META, "schema_version", &m.base);
	put_model(f, w, "model-9", "zoo", "n.onnx", "x");
}

static void test9_refused(void **state)
{
	struct fx *f = *state;
	make_store(f, "odd", other_schema);
	pn_store *s = open_rw(f, "out");
	pn_merge_stats st = {0};
	char in[160];
	snprintf(in, sizeof in, "%s/odd", f->tmp);
	assert_int_equal(pn_store_merge(s, in, &st, f->err), -1);
	assert_non_null(strstr(f->err, in));
	assert_non_null(strstr(f->err, "schema_version"));
	assert_int_equal(st.table[PN_T_MODELS].added, 0);
	snprintf(in, sizeof in, "%s/out", f->tmp);
	assert_int_equal(pn_store_merge(s, in, &st, f->err), -1);
	snprintf(in, sizeof in, "%s/missing", f->tmp);
	assert_int_equal(pn_store_merge(s, in, &st, f->err), -1);
	assert_non_null(strstr(f->err, "missing"));
	pn_store_close(s);
	assert_int_equal(count(f, "out", PN_T_MODELS), 0);
}

/* --- 10. ranges: a subgraph's records are joined (bounds widened, shapes
 * from the least model), in either order; another input count conflicts ---- */

static void put_ranges(struct fx *f, pn_writer *w, const char *key, int n, double *lo,
		       double *hi, protobuf_c_boolean *known, int32_t *rank, int64_t *dims,
		       size_t n_dims, int32_t *counts, int64_t *ints, size_t n_ints,
		       const char *from)
{
	Passnet__InputRanges r = PASSNET__INPUT_RANGES__INIT;
	r.has_version = 1;
	r.version = PN_SCHEMA_VERSION;
	r.n_lo = r.n_hi = r.n_known = r.n_rank = r.n_int_counts = (size_t)n;
	r.lo = lo;
	r.hi = hi;
	r.known = known;
	r.rank = rank;
	r.int_counts = counts;
	r.n_dims = n_dims;
	r.dims = dims;
	r.n_int_values = n_ints;
	r.int_values = ints;
	r.has_shapes_from = 1;
	r.shapes_from.data = (uint8_t *)from;
	r.shapes_from.len = 16;
	put_msg(f, w, PN_T_RANGES, key, &r.base);
}

static void ranges_a(struct fx *f, pn_writer *w)
{
	double lo[] = {0, 5}, hi[] = {1, 6};
	protobuf_c_boolean known[] = {1, 0};
	int32_t rank[] = {1, 1}, counts[] = {0, 0};
	int64_t dims[] = {3, 3};
	put_ranges(f, w, "subgraph-hash-01", 2, lo, hi, known, rank, dims, 2, counts, NULL, 0,
		   "BBBBBBBBBBBBBBBB");
	double lo1[] = {0}, hi1[] = {1};
	protobuf_c_boolean k1[] = {1};
	int32_t r1[] = {0}, c1[] = {0};
	put_ranges(f, w, "subgraph-hash-02", 1, lo1, hi1, k1, r1, NULL, 0, c1, NULL, 0,
		   "BBBBBBBBBBBBBBBB");
}

static void ranges_b(struct fx *f, pn_writer *w)
{
	double lo[] = {-2, 7}, hi[] = {0.5, 9};
	protobuf_c_boolean known[] = {1, 1};
	int32_t rank[] = {2, 1}, counts[] = {0, 1};
	int64_t dims[] = {2, 2, 4}, ints[] = {42};
	put_ranges(f, w, "subgraph-hash-01", 2, lo, hi, known, rank, dims, 3, counts, ints, 1,
		   "AAAAAAAAAAAAAAAA");
	double lo2[] = {0, 0}, hi2[] = {1, 1};
	protobuf_c_boolean k2[] = {1, 1};
	int32_t r2[] = {0, 0}, c2[] = {0, 0};
	put_ranges(f, w, "subgraph-hash-02", 2, lo2, hi2, k2, r2, NULL, 0, c2, NULL, 0,
		   "AAAAAAAAAAAAAAAA");
}

static void test10_ranges_join(void **state)
{
	struct fx *f = *state;
	make_store(f, "a", ranges_a);
	make_store(f, "b", ranges_b);
	pn_merge_stats st = merge_into(f, "ab", (const char *[]){"a", "b"}, 2);
	assert_int_equal(st.table[PN_T_RANGES].resolved, 1);
	assert_int_equal(st.table[PN_T_RANGES].conflicts, 1);   /* hash-02: 1 input or 2 */
	merge_into(f, "ba", (const char *[]){"b", "a"}, 2);
	assert_same_store(f, "ab", "ba");
	size_t n;
	uint8_t *v = get(f, "ab", PN_T_RANGES, "subgraph-hash-01", &n);
	assert_non_null(v);
	Passnet__InputRanges *r = passnet__input_ranges__unpack(NULL, n, v);
	assert_non_null(r);
	assert_int_equal(r->n_lo, 2);
	assert_true(r->lo[0] == -2 && r->hi[0] == 1);   /* widened */
	assert_true(r->lo[1] == 7 && r->hi[1] == 9);    /* known on one side only */
	assert_true(r->known[0] && r->known[1]);
	assert_int_equal(r->rank[0], 2);                /* shapes of the least model, A */
	assert_int_equal(r->n_dims, 3);
	assert_int_equal(r->n_int_values, 1);
	assert_int_equal(r->int_values[0], 42);
	assert_memory_equal(r->shapes_from.data, "AAAAAAAAAAAAAAAA", 16);
	passnet__input_ranges__free_unpacked(r, NULL);
	free(v);
	/* merging either side again changes nothing */
	pn_merge_stats again = merge_into(f, "ab", (const char *[]){"a", "b"}, 2);
	assert_int_equal(again.table[PN_T_RANGES].added, 0);
	assert_same_store(f, "ab", "ba");
}

/* --- 11. candidate lists: the list with more hashes wins; other nodes: a conflict --- */

/* A list of n sole candidates at nodes[i], the first `hashed` with a hash
 * ("hash-" then the candidate's letter). */
static void put_list(struct fx *f, pn_writer *w, const char *key, const uint32_t *nodes, int n,
		     int hashed)
{
	Passnet__CandidateEntry e[4], *ep[4];
	char hash[4][8];
	assert_true(n <= 4);
	for (int i = 0; i < n; i++) {
		passnet__candidate_entry__init(&e[i]);
		e[i].n_nodes = 1;
		e[i].nodes = (uint32_t *)&nodes[i];
		snprintf(hash[i], sizeof hash[i], "hash-%c", 'a' + i);
		if (i < hashed) {
			e[i].has_subgraph = 1;
			e[i].subgraph.data = (uint8_t *)hash[i];
			e[i].subgraph.len = 6;
		}
		ep[i] = &e[i];
	}
	Passnet__Candidate c = PASSNET__CANDIDATE__INIT;
	c.has_version = 1;
	c.version = PN_SCHEMA_VERSION;
	c.strategy = "sole";
	c.has_count = 1;
	c.count = (uint32_t)n;
	c.n_entries = (size_t)n;
	c.entries = ep;
	put_msg(f, w, PN_T_CANDIDATES, key, &c.base);
}

static void lists_a(struct fx *f, pn_writer *w)
{
	put_list(f, w, "list-1", (const uint32_t[]){1, 2, 3}, 3, 0);   /* partition alone */
	put_list(f, w, "list-2", (const uint32_t[]){1, 2}, 2, 2);
}

static void lists_b(struct fx *f, pn_writer *w)
{
	put_list(f, w, "list-1", (const uint32_t[]){1, 2, 3}, 3, 3);   /* deduped */
	put_list(f, w, "list-2", (const uint32_t[]){1, 7}, 2, 2);      /* cut otherwise */
}

static void test11_candidate_lists(void **state)
{
	struct fx *f = *state;
	make_store(f, "a", lists_a);
	make_store(f, "b", lists_b);
	merge_both_ways(f, PN_T_CANDIDATES, 1, 1);
	size_t n;
	uint8_t *v = get(f, "ab", PN_T_CANDIDATES, "list-1", &n);
	Passnet__Candidate *c = passnet__candidate__unpack(NULL, n, v);
	assert_non_null(c);
	assert_int_equal(c->n_entries, 3);
	for (int i = 0; i < 3; i++) {   /* the deduped list, every entry hashed */
		assert_true(c->entries[i]->has_subgraph);
		assert_int_equal(c->entries[i]->nodes[0], i + 1);
	}
	passnet__candidate__free_unpacked(c, NULL);
	free(v);
	v = get(f, "ab", PN_T_CANDIDATES, "list-2", &n);
	c = passnet__candidate__unpack(NULL, n, v);
	assert_non_null(c);
	assert_int_equal(c->entries[1]->nodes[0], 2);   /* the least list without hashes */
	passnet__candidate__free_unpacked(c, NULL);
	free(v);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test1_meta),
		T(test2_sources),
		T(test3_models),
		T(test4_candidates),
		T(test5_dupsort_union),
		T(test6_conflict_least_bytes),
		T(test7_idempotent),
		T(test8_order_independent),
		T(test9_refused),
		T(test10_ranges_join),
		T(test11_candidate_lists),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
