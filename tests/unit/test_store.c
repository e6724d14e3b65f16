/*
 * test_store.c - the LMDB store layer on real files in a scratch directory.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/err.h"
#include "passnet.pb-c.h"
#include "store/store.h"
#include "scratch_dir.h"

#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lmdb.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

struct fx {
	char tmp[64];
	char db[96];
	char err[PN_ERRLEN];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	if (!f || scratch_dir_make(f->tmp, sizeof f->tmp, "store")) {
		free(f);
		return -1;
	}
	snprintf(f->db, sizeof f->db, "%s/db", f->tmp);
	unsetenv("PASSNET_MAPSIZE");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	scratch_dir_remove(f->tmp);
	unsetenv("PASSNET_MAPSIZE");
	free(f);
	return 0;
}

/* --- helpers ---------------------------------------------------------------- */

static pn_store *open_rw(struct fx *f)
{
	pn_store *s;
	int rc = pn_store_open(&s, f->db, 0, f->err);
	if (rc)
		fail_msg("open: %s", f->err);
	return s;
}

static pn_writer *writer(struct fx *f, pn_store *s, size_t batch)
{
	pn_writer *w;
	if (pn_writer_open(s, &w, batch, f->err))
		fail_msg("writer: %s", f->err);
	return w;
}

static void put_str(struct fx *f, pn_writer *w, int table, const char *k, const char *v)
{
	if (pn_put(w, table, k, strlen(k), v, strlen(v), f->err))
		fail_msg("put %s: %s", k, f->err);
}

static void dup_str(struct fx *f, pn_writer *w, const char *k, const char *v)
{
	if (pn_put_dup(w, PN_T_OCCURRENCES, k, strlen(k), v, strlen(v), f->err))
		fail_msg("put_dup %s: %s", k, f->err);
}

/* 0 and the value as a string, or the pn_get result. */
static int get_str(pn_rtxn *t, int table, const char *k, char *out, size_t cap)
{
	pn_bytes v;
	int rc = pn_get(t, table, k, strlen(k), &v);
	if (!rc) {
		assert_true(v.len < cap);
		memcpy(out, v.data, v.len);
		out[v.len] = 0;
	}
	return rc;
}

static void assert_get(pn_rtxn *t, int table, const char *k, const char *want)
{
	char buf[256];
	assert_int_equal(get_str(t, table, k, buf, sizeof buf), 0);
	assert_string_equal(buf, want);
}

struct seen {
	int n, stop_at;
	char keys[32][64];
	char vals[32][64];
};

static int collect(void *ud, pn_bytes k, pn_bytes v)
{
	struct seen *s = ud;
	assert_true(s->n < 32 && k.len < 64 && v.len < 64);
	memcpy(s->keys[s->n], k.data, k.len);
	s->keys[s->n][k.len] = 0;
	memcpy(s->vals[s->n], v.data, v.len);
	s->vals[s->n][v.len] = 0;
	s->n++;
	return s->n == s->stop_at ? 7 : 0;
}

/* Deterministic, incompressible-looking filler: value i of n bytes. */
static void fill(unsigned char *p, size_t n, uint32_t i)
{
	uint32_t x = i * 2654435761u + 1;
	for (size_t j = 0; j < n; j++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[j] = (unsigned char)x;
	}
}

#define BIG_N   1200
#define BIG_LEN 4000    /* 1200 * 4000 = 4.8 MB, 75x a 64 KiB map */

static void put_big(struct fx *f, pn_writer *w, uint32_t from, uint32_t to)
{
	unsigned char v[BIG_LEN];
	char k[32];
	for (uint32_t i = from; i < to; i++) {
		snprintf(k, sizeof k, "big%06u", i);
		fill(v, sizeof v, i);
		if (pn_put(w, PN_T_MODELS, k, strlen(k), v, sizeof v, f->err))
			fail_msg("put %s: %s", k, f->err);
	}
}

static void check_big(pn_store *s, uint32_t from, uint32_t to)
{
	char err[PN_ERRLEN], k[32];
	unsigned char want[BIG_LEN];
	pn_rtxn *t;
	assert_int_equal(pn_rtxn_begin(s, &t, err), 0);
	for (uint32_t i = from; i < to; i++) {
		pn_bytes v;
		snprintf(k, sizeof k, "big%06u", i);
		assert_int_equal(pn_get(t, PN_T_MODELS, k, strlen(k), &v), 0);
		assert_int_equal(v.len, BIG_LEN);
		fill(want, sizeof want, i);
		assert_memory_equal(v.data, want, BIG_LEN);
	}
	pn_rtxn_end(t);
}

/* --- tests ------------------------------------------------------------------- */

static void test_table_names(void **state)
{
	(void)state;
	assert_string_equal(pn_table_name(PN_T_META), "meta");
	assert_string_equal(pn_table_name(PN_T_MODEL_PATHS), "model_paths");
	assert_string_equal(pn_table_name(PN_T_OCCURRENCES), "occurrences");
	assert_string_equal(pn_table_name(PN_T_ERRORS), "errors");
	assert_string_equal(pn_table_name(PN_T_COUNT), "unknown");
	assert_string_equal(pn_table_name(-1), "unknown");
}

static void test_put_get_foreach(void **state)
{
	struct fx *f = *state;
	pn_store *s = open_rw(f);
	assert_string_equal(pn_store_path(s), f->db);
	pn_writer *w = writer(f, s, 0);
	const char *keys[] = { "b/2", "a/1", "b/10", "c/1", "b/1", "b" };
	for (int i = 0; i < 6; i++)
		put_str(f, w, PN_T_MODELS, keys[i], keys[i]);
	put_str(f, w, PN_T_MODELS, "a/1", "replaced");
	assert_int_equal(pn_writer_close(w, f->err), 0);

	pn_rtxn *t;
	assert_int_equal(pn_rtxn_begin(s, &t, f->err), 0);
	assert_get(t, PN_T_MODELS, "a/1", "replaced");
	assert_get(t, PN_T_MODELS, "b/10", "b/10");
	char buf[64];
	assert_int_equal(get_str(t, PN_T_MODELS, "b/3", buf, sizeof buf), 1);
	assert_int_equal(get_str(t, PN_T_SOURCES, "a/1", buf, sizeof buf), 1);
	assert_int_equal(pn_count(t, PN_T_MODELS), 6);
	assert_int_equal(pn_count(t, PN_T_META), 1);   /* schema_version */
	assert_int_equal(pn_count(t, PN_T_ERRORS), 0);

	struct seen sn = { 0 };
	assert_int_equal(pn_foreach(t, PN_T_MODELS, "b/", 2, collect, &sn), 0);
	assert_int_equal(sn.n, 3);
	assert_string_equal(sn.keys[0], "b/1");
	assert_string_equal(sn.keys[1], "b/10");
	assert_string_equal(sn.keys[2], "b/2");

	memset(&sn, 0, sizeof sn);
	assert_int_equal(pn_foreach(t, PN_T_MODELS, NULL, 0, collect, &sn), 0);
	assert_int_equal(sn.n, 6);
	assert_string_equal(sn.keys[0], "a/1");
	assert_string_equal(sn.vals[0], "replaced");
	assert_string_equal(sn.keys[1], "b");
	assert_string_equal(sn.keys[5], "c/1");

	/* Stopping returns fn's value and calls no further. */
	memset(&sn, 0, sizeof sn);
	sn.stop_at = 2;
	assert_int_equal(pn_foreach(t, PN_T_MODELS, "b", 1, collect, &sn), 7);
	assert_int_equal(sn.n, 2);
	assert_string_equal(sn.keys[1], "b/1");

	/* A prefix past every key and one no key has. */
	memset(&sn, 0, sizeof sn);
	assert_int_equal(pn_foreach(t, PN_T_MODELS, "zz", 2, collect, &sn), 0);
	assert_int_equal(pn_foreach(t, PN_T_MODELS, "a/2", 3, collect, &sn), 0);
	assert_int_equal(sn.n, 0);
	pn_rtxn_end(t);
	pn_store_close(s);
}

static void test_delete(void **state)
{
	struct fx *f = *state;
	pn_store *s = open_rw(f);
	pn_writer *w = writer(f, s, 0);
	put_str(f, w, PN_T_ERRORS, "k1", "v1");
	put_str(f, w, PN_T_ERRORS, "k2", "v2");
	assert_int_equal(pn_writer_flush(w, f->err), 0);
	assert_int_equal(pn_del(w, PN_T_ERRORS, "k1", 2, f->err), 0);
	/* Deleting what is not there is a no-op, not an error. */
	assert_int_equal(pn_del(w, PN_T_ERRORS, "nope", 4, f->err), 0);
	pn_bytes v;
	assert_int_equal(pn_wget(w, PN_T_ERRORS, "k1", 2, &v), 1);
	assert_int_equal(pn_writer_close(w, f->err), 0);
	pn_rtxn *t;
	assert_int_equal(pn_rtxn_begin(s, &t, f->err), 0);
	assert_int_equal(pn_count(t, PN_T_ERRORS), 1);
	assert_get(t, PN_T_ERRORS, "k2", "v2");
	pn_rtxn_end(t);
	pn_store_close(s);
}

static void test_dupsort(void **state)
{
	struct fx *f = *state;
	pn_store *s = open_rw(f);
	pn_writer *w = writer(f, s, 0);
	dup_str(f, w, "h1", "v2");
	dup_str(f, w, "h1", "v1");
	dup_str(f, w, "h1", "v3");
	dup_str(f, w, "h1", "v1");      /* the same pair again: no-op */
	dup_str(f, w, "h2", "x");
	assert_int_equal(pn_writer_flush(w, f->err), 0);
	dup_str(f, w, "h1", "v2");      /* and across a commit */
	/* Plain put would not replace on a dupsort table: refused. */
	assert_int_equal(pn_put(w, PN_T_OCCURRENCES, "h1", 2, "v9", 2, f->err), -1);
	assert_non_null(strstr(f->err, "dupsort"));
	assert_int_equal(pn_put_dup(w, PN_T_MODELS, "h1", 2, "v9", 2, f->err), -1);
	assert_non_null(strstr(f->err, "not a dupsort"));
	assert_int_equal(pn_writer_close(w, f->err), 0);

	pn_rtxn *t;
	assert_int_equal(pn_rtxn_begin(s, &t, f->err), 0);
	assert_int_equal(pn_count(t, PN_T_OCCURRENCES), 4);
	struct seen sn = { 0 };
	assert_int_equal(pn_foreach(t, PN_T_OCCURRENCES, "h1", 2, collect, &sn), 0);
	assert_int_equal(sn.n, 3);
	assert_string_equal(sn.vals[0], "v1");
	assert_string_equal(sn.vals[1], "v2");
	assert_string_equal(sn.vals[2], "v3");
	assert_string_equal(sn.keys[2], "h1");
	assert_get(t, PN_T_OCCURRENCES, "h1", "v1");   /* the first value */
	/* pair lookups: each stored pair, and misses by value, key and length */
	assert_int_equal(pn_has_pair(t, PN_T_OCCURRENCES, "h1", 2, "v3", 2), 1);
	assert_int_equal(pn_has_pair(t, PN_T_OCCURRENCES, "h2", 2, "x", 1), 1);
	assert_int_equal(pn_has_pair(t, PN_T_OCCURRENCES, "h1", 2, "v4", 2), 0);
	assert_int_equal(pn_has_pair(t, PN_T_OCCURRENCES, "h2", 2, "v1", 2), 0);
	assert_int_equal(pn_has_pair(t, PN_T_OCCURRENCES, "h3", 2, "x", 1), 0);
	assert_int_equal(pn_has_pair(t, PN_T_OCCURRENCES, "h1", 2, "v", 1), 0);
	assert_int_equal(pn_has_pair(t, PN_T_MODELS, "h1", 2, "v1", 2), -1);   /* not dupsort */
	pn_rtxn_end(t);

	/* Deleting a dupsort key drops all its values. */
	w = writer(f, s, 0);
	assert_int_equal(pn_del(w, PN_T_OCCURRENCES, "h1", 2, f->err), 0);
	assert_int_equal(pn_writer_close(w, f->err), 0);
	assert_int_equal(pn_rtxn_begin(s, &t, f->err), 0);
	assert_int_equal(pn_count(t, PN_T_OCCURRENCES), 1);
	pn_rtxn_end(t);
	pn_store_close(s);
}

static void test_reopen_persists(void **state)
{
	struct fx *f = *state;
	pn_store *s = open_rw(f);
	pn_writer *w = writer(f, s, 0);
	put_str(f, w, PN_T_SOURCES, "zoo", "onnx model zoo");
	dup_str(f, w, "h", "occ");
	assert_int_equal(pn_writer_close(w, f->err), 0);
	pn_store_close(s);

	s = open_rw(f);
	pn_rtxn *t;
	assert_int_equal(pn_rtxn_begin(s, &t, f->err), 0);
	assert_get(t, PN_T_SOURCES, "zoo", "onnx model zoo");
	assert_get(t, PN_T_OCCURRENCES, "h", "occ");
	assert_int_equal(pn_count(t, PN_T_META), 1);
	pn_rtxn_end(t);
	pn_store_close(s);

	assert_int_equal(pn_store_open(&s, f->db, 1, f->err), 0);
	assert_int_equal(pn_rtxn_begin(s, &t, f->err), 0);
	assert_get(t, PN_T_SOURCES, "zoo", "onnx model zoo");
	pn_rtxn_end(t);
	pn_writer *w2;
	assert_int_equal(pn_writer_open(s, &w2, 0, f->err), -1);
	assert_non_null(strstr(f->err, "read-only"));
	assert_null(w2);
	pn_store_close(s);
}

static void test_creates_nested_dir(void **state)
{
	struct fx *f = *state;
	char dir[160];
	snprintf(dir, sizeof dir, "%s/a/b/c.lmdb", f->tmp);
	pn_store *s;
	assert_int_equal(pn_store_open(&s, dir, 0, f->err), 0);
	pn_store_close(s);
	struct stat st;
	snprintf(dir, sizeof dir, "%s/a/b/c.lmdb/data.mdb", f->tmp);
	assert_int_equal(stat(dir, &st), 0);
}

/* A hold inside a hold is a bug of the caller (common/assert.h): the
 * process ends at once with SIGABRT and one "internal error" line naming
 * the rule, before any of the group is committed.  In a child process. */
static void test_hold_nesting_asserts(void **state)
{
	struct fx *f = *state;
	char path[200];
	snprintf(path, sizeof path, "%s/assert.err", f->tmp);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (!freopen(path, "w", stderr))
			_exit(3);
		pn_store *s;
		pn_writer *w;
		if (pn_store_open(&s, f->db, 0, f->err) || pn_writer_open(s, &w, 0, f->err))
			_exit(4);
		pn_writer_hold(w);
		pn_writer_hold(w);
		_exit(0);   /* not reached */
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);
	char line[512] = "";
	FILE *e = fopen(path, "r");
	assert_non_null(e);
	assert_non_null(fgets(line, sizeof line, e));
	fclose(e);
	assert_non_null(strstr(line, "passnet: internal error: "));
	assert_non_null(strstr(line, "pn_writer_hold: !w->held"));
}

/* A held group commits whole: a 1 KiB batch that would commit every 10
 * puts commits none of a held group's 35, and release commits them, with
 * everything before. */
static void test_hold_group(void **state)
{
	struct fx *f = *state;
	pn_store *s = open_rw(f);
	pn_writer *w = writer(f, s, 1024);
	char k[16], val[100];
	memset(val, 'x', sizeof val);
	pn_rtxn *t;
	for (int i = 0; i < 5; i++) {   /* before the group: under one batch */
		snprintf(k, sizeof k, "a%03d", i);
		assert_int_equal(pn_put(w, PN_T_CANDIDATES, k, strlen(k), val, sizeof val, f->err), 0);
	}
	pn_writer_hold(w);
	for (int i = 0; i < 35; i++) {
		snprintf(k, sizeof k, "g%03d", i);
		assert_int_equal(pn_put(w, PN_T_CANDIDATES, k, strlen(k), val, sizeof val, f->err), 0);
	}
	assert_int_equal(pn_rtxn_begin(s, &t, f->err), 0);
	assert_int_equal(pn_count(t, PN_T_CANDIDATES), 0);
	pn_rtxn_end(t);
	assert_int_equal(pn_writer_release(w, f->err), 0);
	assert_int_equal(pn_rtxn_begin(s, &t, f->err), 0);
	assert_int_equal(pn_count(t, PN_T_CANDIDATES), 40);
	pn_rtxn_end(t);
	/* released: batches commit on their own again */
	for (int i = 0; i < 15; i++) {
		snprintf(k, sizeof k, "b%03d", i);
		assert_int_equal(pn_put(w, PN_T_CANDIDATES, k, strlen(k), val, sizeof val, f->err), 0);
	}
	assert_int_equal(pn_rtxn_begin(s, &t, f->err), 0);
	assert_int_equal(pn_count(t, PN_T_CANDIDATES), 50);
	pn_rtxn_end(t);
	assert_int_equal(pn_writer_close(w, f->err), 0);
	pn_store_close(s);
}

static void test_batches_commit(void **state)
{
	struct fx *f = *state;
	pn_store *s = open_rw(f);
	pn_writer *w = writer(f, s, 1 << 20);
	put_str(f, w, PN_T_MODELS, "m1", "one");

	/* Not committed yet: a new reader misses it, the writer sees it. */
	pn_rtxn *t;
	assert_int_equal(pn_rtxn_begin(s, &t, f->err), 0);
	char buf[64];
	assert_int_equal(get_str(t, PN_T_MODELS, "m1", buf, sizeof buf), 1);
	pn_rtxn_end(t);
	pn_bytes v;
	assert_int_equal(pn_wget(w, PN_T_MODELS, "m1", 2, &v), 0);
	assert_int_equal(v.len, 3);
	assert_memory_equal(v.data, "one", 3);
	assert_int_equal(pn_wget(w, PN_T_MODELS, "m2", 2, &v), 1);

	assert_int_equal(pn_writer_flush(w, f->err), 0);
	assert_int_equal(pn_rtxn_begin(s, &t, f->err), 0);
	assert_get(t, PN_T_MODELS, "m1", "one");
	pn_rtxn_end(t);
	assert_int_equal(pn_writer_close(w, f->err), 0);

	/* A 1 KiB batch commits on its own every 10 puts of 104 bytes. */
	w = writer(f, s, 1024);
	char k[16], val[100];
	memset(val, 'x', sizeof val);
	for (int i = 0; i < 95; i++) {
		snprintf(k, sizeof k, "k%03d", i);
		assert_int_equal(pn_put(w, PN_T_CANDIDATES, k, strlen(k), val, sizeof val, f->err), 0);
	}
	assert_int_equal(pn_rtxn_begin(s, &t, f->err), 0);
	int64_t n = pn_count(t, PN_T_CANDIDATES);
	pn_rtxn_end(t);
	assert_int_equal(n, 90);
	assert_int_equal(pn_writer_close(w, f->err), 0);
	assert_int_equal(pn_rtxn_begin(s, &t, f->err), 0);
	assert_int_equal(pn_count(t, PN_T_CANDIDATES), 95);
	pn_rtxn_end(t);
	pn_store_close(s);
}

static void test_map_growth(void **state)
{
	struct fx *f = *state;
	setenv("PASSNET_MAPSIZE", "65536", 1);
	pn_store *s = open_rw(f);
	pn_writer *w = writer(f, s, 0);
	put_big(f, w, 0, BIG_N);
	dup_str(f, w, "h", "after growth");
	pn_bytes v;
	assert_int_equal(pn_wget(w, PN_T_MODELS, "big000007", 9, &v), 0);
	assert_int_equal(v.len, BIG_LEN);
	assert_int_equal(pn_writer_close(w, f->err), 0);
	check_big(s, 0, BIG_N);
	pn_store_close(s);

	/* Reopened with the same tiny setting, it still holds it all. */
	s = open_rw(f);
	check_big(s, 0, BIG_N);
	pn_rtxn *t;
	assert_int_equal(pn_rtxn_begin(s, &t, f->err), 0);
	assert_get(t, PN_T_OCCURRENCES, "h", "after growth");
	assert_int_equal(pn_count(t, PN_T_MODELS), BIG_N);
	pn_rtxn_end(t);
	pn_store_close(s);
	struct stat st;
	char path[160];
	snprintf(path, sizeof path, "%s/data.mdb", f->db);
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size > (off_t)BIG_N * BIG_LEN);
}

/* Resident file pages of this process (RssFile of /proc/self/status), kB. */
static long rss_file_kb(void)
{
	FILE *fp = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (fp && fgets(line, sizeof line, fp))
		if (!strncmp(line, "RssFile:", 8))
			kb = atol(line + 8);
	if (fp)
		fclose(fp);
	return kb;
}

struct scan_sum {
	size_t bytes;
	unsigned sum;
};

static int sum_record(void *ud, pn_bytes k, pn_bytes v)
{
	struct scan_sum *ss = ud;
	(void)k;
	ss->bytes += v.len;
	for (size_t i = 0; i < v.len; i += 4096)   /* touch every page */
		ss->sum += ((const unsigned char *)v.data)[i];
	return 0;
}

/* Reads of a store four times its budget do not leave it all mapped (store.c:
 * note_mapped): a scan of every record, then a get of each, keep this
 * process's resident file pages within the budget and what the last reads
 * before a drop touched, where the whole store would be 256 MiB. */
static void test_mapped_pages_dropped(void **state)
{
	struct fx *f = *state;
	enum { LEN = 1 << 20, N = 256 };
	pn_store *s = open_rw(f);
	pn_writer *w = writer(f, s, 0);
	char *val = malloc(LEN);
	assert_non_null(val);
	for (int i = 0; i < N; i++) {
		char key[16];
		memset(val, i % 200 + 1, LEN);
		snprintf(key, sizeof key, "m%05d", i);
		assert_int_equal(pn_put(w, PN_T_MODELS, key, strlen(key), val, LEN, f->err), 0);
	}
	assert_int_equal(pn_writer_close(w, f->err), 0);
	free(val);

	long before = rss_file_kb();
	assert_true(before >= 0);
	pn_rtxn *t;
	assert_int_equal(pn_rtxn_begin(s, &t, f->err), 0);
	struct scan_sum ss = {0, 0};
	assert_int_equal(pn_foreach(t, PN_T_MODELS, NULL, 0, sum_record, &ss), 0);
	assert_int_equal(ss.bytes, (size_t)N * LEN);
	long after_scan = rss_file_kb();
	for (int i = N - 1; i >= 0; i--) {
		char key[16];
		pn_bytes v;
		snprintf(key, sizeof key, "m%05d", i);
		assert_int_equal(pn_get(t, PN_T_MODELS, key, strlen(key), &v), 0);
		assert_int_equal(v.len, LEN);
		assert_int_equal(((const unsigned char *)v.data)[LEN - 1], i % 200 + 1);
		assert_int_equal(((const unsigned char *)v.data)[0], i % 200 + 1);
	}
	long after_gets = rss_file_kb();
	pn_rtxn_end(t);
	pn_store_close(s);
	/* every page was read: the sum says the scan did not skip any */
	unsigned want = 0;
	for (int i = 0; i < N; i++)
		want += (unsigned)(i % 200 + 1) * (LEN / 4096);
	assert_int_equal(ss.sum, want);
	/* 128 MiB budget, 4 MiB per thread before it counts, 64 KiB around */
	assert_true(after_scan - before < 140 * 1024);
	assert_true(after_gets - before < 140 * 1024);
}

/* The writer's own thread holds a reader while the map fills: writes go on
 * from the log, pn_wget answers from it, a flush must wait for the reader. */
static void test_growth_with_own_reader(void **state)
{
	struct fx *f = *state;
	setenv("PASSNET_MAPSIZE", "65536", 1);
	pn_store *s = open_rw(f);
	pn_writer *w = writer(f, s, 0);
	put_str(f, w, PN_T_SOURCES, "old", "committed");
	put_str(f, w, PN_T_SOURCES, "gone", "to be deleted");
	dup_str(f, w, "h", "m");
	assert_int_equal(pn_writer_flush(w, f->err), 0);

	pn_rtxn *t;
	assert_int_equal(pn_rtxn_begin(s, &t, f->err), 0);
	pn_bytes old;
	assert_int_equal(pn_get(t, PN_T_SOURCES, "old", 3, &old), 0);
	put_big(f, w, 0, BIG_N);
	assert_int_equal(pn_del(w, PN_T_SOURCES, "gone", 4, f->err), 0);
	put_str(f, w, PN_T_SOURCES, "new", "logged");
	put_str(f, w, PN_T_SOURCES, "new", "logged twice");
	dup_str(f, w, "h", "z");
	dup_str(f, w, "h", "a");

	pn_bytes v;
	assert_int_equal(pn_wget(w, PN_T_SOURCES, "old", 3, &v), 0);
	assert_int_equal(v.len, 9);
	assert_memory_equal(v.data, "committed", 9);
	assert_int_equal(pn_wget(w, PN_T_SOURCES, "gone", 4, &v), 1);
	assert_int_equal(pn_wget(w, PN_T_SOURCES, "new", 3, &v), 0);
	assert_int_equal(v.len, 12);
	assert_memory_equal(v.data, "logged twice", 12);
	assert_int_equal(pn_wget(w, PN_T_OCCURRENCES, "h", 1, &v), 0);
	assert_int_equal(v.len, 1);
	assert_memory_equal(v.data, "a", 1);     /* smallest of a, m, z */
	assert_int_equal(pn_wget(w, PN_T_MODELS, "big000999", 9, &v), 0);
	assert_int_equal(v.len, BIG_LEN);

	assert_int_equal(pn_writer_flush(w, f->err), -1);
	assert_non_null(strstr(f->err, "holds a read transaction"));
	assert_non_null(strstr(f->err, f->db));
	/* The snapshot and its pointers survived all of that. */
	assert_memory_equal(old.data, "committed", 9);
	assert_get(t, PN_T_SOURCES, "gone", "to be deleted");
	assert_int_equal(pn_count(t, PN_T_MODELS), 0);
	pn_rtxn_end(t);

	assert_int_equal(pn_writer_close(w, f->err), 0);
	check_big(s, 0, BIG_N);
	assert_int_equal(pn_rtxn_begin(s, &t, f->err), 0);
	assert_get(t, PN_T_SOURCES, "new", "logged twice");
	char buf[64];
	assert_int_equal(get_str(t, PN_T_SOURCES, "gone", buf, sizeof buf), 1);
	assert_int_equal(pn_count(t, PN_T_OCCURRENCES), 3);
	pn_rtxn_end(t);
	pn_store_close(s);
}

/* Another thread holds a reader across the growth: it keeps a stable
 * snapshot; the writer's flush waits for it to end. */
static void test_growth_with_other_reader(void **state)
{
	struct fx *f = *state;
	setenv("PASSNET_MAPSIZE", "65536", 1);
	pn_store *s = open_rw(f);
	pn_writer *w = writer(f, s, 0);
	put_str(f, w, PN_T_SOURCES, "old", "committed");
	assert_int_equal(pn_writer_flush(w, f->err), 0);

	atomic_int reader_in = 0, written = 0, reader_ok = 0, threads = 0;
#pragma omp parallel num_threads(2)
	{
		atomic_fetch_add(&threads, 1);
		char err[PN_ERRLEN];
		if (omp_get_thread_num() == 1) {
			pn_rtxn *t;
			if (!pn_rtxn_begin(s, &t, err)) {
				pn_bytes v;
				int ok = !pn_get(t, PN_T_SOURCES, "old", 3, &v);
				atomic_store(&reader_in, 1);
				while (ok && !atomic_load(&written)) {
					ok = v.len == 9 && !memcmp(v.data, "committed", 9) &&
					     pn_count(t, PN_T_MODELS) == 0;
					usleep(1000);
				}
				atomic_store(&reader_ok, ok);
				usleep(50000);  /* the flush below has to wait */
				pn_rtxn_end(t);
			} else {
				atomic_store(&reader_in, 1);
			}
		} else {
			while (!atomic_load(&reader_in))
				usleep(1000);
			put_big(f, w, 0, BIG_N);
			atomic_store(&written, 1);
			if (pn_writer_flush(w, err))
				fail_msg("flush: %s", err);
		}
	}
	assert_int_equal(threads, 2);
	assert_int_equal(reader_ok, 1);
	assert_int_equal(pn_writer_close(w, f->err), 0);
	check_big(s, 0, BIG_N);
	pn_store_close(s);
}

static void test_abandon(void **state)
{
	struct fx *f = *state;
	pn_store *s = open_rw(f);
	pn_writer *w = writer(f, s, 0);
	put_str(f, w, PN_T_MODELS, "kept", "1");
	assert_int_equal(pn_writer_flush(w, f->err), 0);
	put_str(f, w, PN_T_MODELS, "lost", "2");
	dup_str(f, w, "h", "lost too");
	pn_writer_abandon(w);
	pn_store_close(s);

	s = open_rw(f);
	pn_rtxn *t;
	assert_int_equal(pn_rtxn_begin(s, &t, f->err), 0);
	assert_get(t, PN_T_MODELS, "kept", "1");
	char buf[64];
	assert_int_equal(get_str(t, PN_T_MODELS, "lost", buf, sizeof buf), 1);
	assert_int_equal(pn_count(t, PN_T_OCCURRENCES), 0);
	pn_rtxn_end(t);
	/* The store takes a new writer afterwards. */
	w = writer(f, s, 0);
	put_str(f, w, PN_T_MODELS, "again", "3");
	assert_int_equal(pn_writer_close(w, f->err), 0);
	pn_store_close(s);
}

static void test_one_writer(void **state)
{
	struct fx *f = *state;
	pn_store *s = open_rw(f);
	pn_writer *w = writer(f, s, 0), *w2;
	assert_int_equal(pn_writer_open(s, &w2, 0, f->err), -1);
	assert_non_null(strstr(f->err, "already open"));
	assert_int_equal(pn_writer_close(w, f->err), 0);
	w = writer(f, s, 0);
	assert_int_equal(pn_writer_close(w, f->err), 0);
	pn_store_close(s);
}

static void test_readonly_missing(void **state)
{
	struct fx *f = *state;
	pn_store *s = (pn_store *)1;
	assert_int_equal(pn_store_open(&s, f->db, 1, f->err), -1);
	assert_null(s);
	assert_non_null(strstr(f->err, f->db));
	assert_non_null(strstr(f->err, "No such file"));
	assert_null(strchr(f->err, '\n'));
	struct stat st;
	assert_int_equal(stat(f->db, &st), -1);   /* and nothing was created */
}

static void test_bad_mapsize_env(void **state)
{
	struct fx *f = *state;
	setenv("PASSNET_MAPSIZE", "12abc", 1);
	pn_store *s;
	assert_int_equal(pn_store_open(&s, f->db, 0, f->err), -1);
	assert_non_null(strstr(f->err, "PASSNET_MAPSIZE"));
}

static void test_key_limits(void **state)
{
	struct fx *f = *state;
	pn_store *s = open_rw(f);
	pn_writer *w = writer(f, s, 0);
	char big[600];
	memset(big, 'k', sizeof big);
	assert_int_equal(pn_put(w, PN_T_MODEL_PATHS, big, sizeof big, "v", 1, f->err), -1);
	assert_non_null(strstr(f->err, "key of 600 bytes"));
	assert_int_equal(pn_put(w, PN_T_MODEL_PATHS, "", 0, "v", 1, f->err), -1);
	assert_int_equal(pn_put_dup(w, PN_T_OCCURRENCES, "h", 1, big, sizeof big, f->err), -1);
	assert_non_null(strstr(f->err, "dupsort value"));
	/* Refusals do not break the writer. */
	put_str(f, w, PN_T_MODEL_PATHS, "src\0path", "m");
	assert_int_equal(pn_put(w, PN_T_MODEL_PATHS, big, 511, "v", 1, f->err), 0);
	assert_int_equal(pn_writer_close(w, f->err), 0);
	pn_rtxn *t;
	assert_int_equal(pn_rtxn_begin(s, &t, f->err), 0);
	pn_bytes v;
	assert_int_equal(pn_get(t, PN_T_MODEL_PATHS, big, sizeof big, &v), 1);
	assert_int_equal(pn_get(t, PN_T_MODEL_PATHS, big, 511, &v), 0);
	assert_int_equal(pn_count(t, PN_T_MODEL_PATHS), 2);
	pn_rtxn_end(t);
	pn_store_close(s);
}

struct sum {
	int64_t n, bytes;
};

static int add_up(void *ud, pn_bytes k, pn_bytes v)
{
	struct sum *s = ud;
	(void)k;
	s->n++;
	s->bytes += (int64_t)v.len;
	return 0;
}

static void test_concurrent_readers(void **state)
{
	struct fx *f = *state;
	pn_store *s = open_rw(f);
	pn_writer *w = writer(f, s, 0);
	char k[16], v[16];
	for (int i = 0; i < 5000; i++) {
		snprintf(k, sizeof k, "k%05d", i);
		snprintf(v, sizeof v, "v%d", i);
		put_str(f, w, PN_T_SUBGRAPHS, k, v);
	}
	assert_int_equal(pn_writer_close(w, f->err), 0);

	int64_t n[2] = { 0 }, hits[2] = { 0 };
	int threads = 0;
	pn_rtxn *mine[2] = { 0 };
#pragma omp parallel num_threads(2)
	{
		int me = omp_get_thread_num();
		char err[PN_ERRLEN], kk[16], want[16];
		pn_rtxn *t = NULL;
		if (!pn_rtxn_begin(s, &t, err))
			mine[me] = t;
#pragma omp barrier
		/* Both transactions are open at once from here on. */
		if (t) {
			struct sum sm = { 0, 0 };
			pn_foreach(t, PN_T_SUBGRAPHS, "k", 1, add_up, &sm);
			n[me] = sm.n;
			for (int i = me; i < 5000; i += 2) {
				pn_bytes val;
				snprintf(kk, sizeof kk, "k%05d", i);
				snprintf(want, sizeof want, "v%d", i);
				if (!pn_get(t, PN_T_SUBGRAPHS, kk, strlen(kk), &val) &&
				    val.len == strlen(want) && !memcmp(val.data, want, val.len))
					hits[me]++;
			}
		}
#pragma omp barrier
		pn_rtxn_end(t);
#pragma omp atomic
		threads++;
	}
	assert_int_equal(threads, 2);
	assert_non_null(mine[0]);
	assert_non_null(mine[1]);
	assert_ptr_not_equal(mine[0], mine[1]);
	assert_int_equal(n[0], 5000);
	assert_int_equal(n[1], 5000);
	assert_int_equal(hits[0], 2500);
	assert_int_equal(hits[1], 2500);
	pn_store_close(s);
}

static void write_schema(struct fx *f, uint32_t version)
{
	pn_store *s = open_rw(f);
	pn_writer *w = writer(f, s, 0);
	Passnet__Meta m = PASSNET__META__INIT;
	m.has_version = 1;
	m.version = version;
	unsigned char buf[32];
	size_t n = passnet__meta__pack(&m, buf);
	assert_int_equal(pn_put(w, PN_T_META, "schema_version", 14, buf, n, f->err), 0);
	assert_int_equal(pn_writer_close(w, f->err), 0);
	pn_store_close(s);
}

static void test_schema_version(void **state)
{
	struct fx *f = *state;
	pn_store *s = open_rw(f);
	pn_rtxn *t;
	assert_int_equal(pn_rtxn_begin(s, &t, f->err), 0);
	pn_bytes v;
	assert_int_equal(pn_get(t, PN_T_META, "schema_version", 14, &v), 0);
	Passnet__Meta *m = passnet__meta__unpack(NULL, v.len, v.data);
	assert_non_null(m);
	assert_true(m->has_version);
	assert_int_equal(m->version, PN_SCHEMA_VERSION);
	passnet__meta__free_unpacked(m, NULL);
	pn_rtxn_end(t);
	pn_store_close(s);

	write_schema(f, PN_SCHEMA_VERSION + 1);
	for (int ro = 0; ro < 2; ro++) {
		s = (pn_store *)1;
		assert_int_equal(pn_store_open(&s, f->db, ro, f->err), -1);
		assert_null(s);
		assert_non_null(strstr(f->err, f->db));
		assert_non_null(strstr(f->err, "is newer"));
		assert_null(strchr(f->err, '\n'));
	}
}

/* An environment nothing was committed to (a run killed before its first
 * commit) opens read-only as an empty store; a read-write open makes it a
 * passnet store. */
static void test_schema_empty_env(void **state)
{
	struct fx *f = *state;
	MDB_env *e;
	assert_int_equal(mkdir(f->db, 0755), 0);
	assert_int_equal(mdb_env_create(&e), 0);
	assert_int_equal(mdb_env_set_maxdbs(e, 32), 0);
	assert_int_equal(mdb_env_open(e, f->db, 0, 0644), 0);
	mdb_env_close(e);
	pn_store *s;
	assert_int_equal(pn_store_open(&s, f->db, 1, f->err), 0);
	pn_rtxn *t;
	assert_int_equal(pn_rtxn_begin(s, &t, f->err), 0);
	assert_int_equal(pn_count(t, PN_T_MODELS), 0);
	pn_rtxn_end(t);
	pn_store_close(s);
	assert_int_equal(pn_store_open(&s, f->db, 0, f->err), 0);
	pn_store_close(s);
}

static void test_schema_version_older(void **state)
{
	struct fx *f = *state;
	write_schema(f, 0);
	pn_store *s;
	assert_int_equal(pn_store_open(&s, f->db, 0, f->err), -1);
	assert_non_null(strstr(f->err, "is older"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_names),
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_put_get_foreach),
		T(test_delete),
		T(test_dupsort),
		T(test_reopen_persists),
		T(test_creates_nested_dir),
		T(test_batches_commit),
		T(test_hold_group),
		T(test_hold_nesting_asserts),
		T(test_map_growth),
		T(test_mapped_pages_dropped),
		T(test_growth_with_own_reader),
		T(test_growth_with_other_reader),
		T(test_abandon),
		T(test_one_writer),
		T(test_readonly_missing),
		T(test_bad_mapsize_env),
		T(test_key_limits),
		T(test_concurrent_readers),
		T(test_schema_version),
		T(test_schema_version_older),
		T(test_schema_empty_env),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
