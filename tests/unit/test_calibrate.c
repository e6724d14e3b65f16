/*
 * test_calibrate.c - the calibration record in meta: a round trip keeps
 * every figure, a store without one says so, and a record of another
 * layout is refused rather than misread.  (The measurements themselves are
 * exercised by tests/cli/calibrate.sh.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "exec/calibrate.h"
#include "passnet.pb-c.h"

static char tmp[64], db[96];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int setup(void **state)
{
	(void)state;
	strcpy(tmp, "/tmp/pn-calib-XXXXXX");
	if (!mkdtemp(tmp))
		return -1;
	snprintf(db, sizeof db, "%s/db", tmp);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	nftw(tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

static int get(pn_calibration *c, char *err)
{
	pn_store *s;
	pn_rtxn *t;
	assert_int_equal(pn_store_open(&s, db, 1, err), 0);
	assert_int_equal(pn_rtxn_begin(s, &t, err), 0);
	int rc = pn_calibration_get(t, c, err);
	pn_rtxn_end(t);
	pn_store_close(s);
	return rc;
}

static void put_raw(const void *key, size_t klen, const void *val, size_t vlen)
{
	char err[PN_ERRLEN];
	pn_store *s;
	pn_writer *w;
	assert_int_equal(pn_store_open(&s, db, 0, err), 0);
	assert_int_equal(pn_writer_open(s, &w, 0, err), 0);
	assert_int_equal(pn_put(w, PN_T_META, key, klen, val, vlen, err), 0);
	assert_int_equal(pn_writer_close(w, err), 0);
	pn_store_close(s);
}

static void test_round_trip(void **state)
{
	(void)state;
	char err[PN_ERRLEN] = "";
	pn_store *s;
	pn_writer *w;
	assert_int_equal(pn_store_open(&s, db, 0, err), 0);
	pn_store_close(s);
	pn_calibration c;
	assert_int_equal(get(&c, err), 1);   /* none stored yet */

	pn_calibration in;
	memset(&in, 0, sizeof(in));
	in.max_threads = 3;
	in.node_overhead_us = 0.75;
	for (int t = 1; t <= 3; t++) {
		in.peak_gflops[t] = 100.5 * t;
		in.bandwidth_gbs[t] = 20.25 + t;
	}
	assert_int_equal(pn_store_open(&s, db, 0, err), 0);
	assert_int_equal(pn_writer_open(s, &w, 0, err), 0);
	assert_int_equal(pn_calibration_put(w, &in, err), 0);
	assert_int_equal(pn_writer_close(w, err), 0);
	pn_store_close(s);

	assert_int_equal(get(&c, err), 0);
	assert_int_equal(c.max_threads, 3);
	assert_true(c.node_overhead_us == 0.75);
	for (int t = 1; t <= 3; t++) {
		assert_true(c.peak_gflops[t] == in.peak_gflops[t]);
		assert_true(c.bandwidth_gbs[t] == in.bandwidth_gbs[t]);
	}
	assert_true(c.peak_gflops[4] == 0 && c.bandwidth_gbs[0] == 0);

	in.max_threads = 0;   /* nothing measured: refused, not stored */
	assert_int_equal(pn_store_open(&s, db, 0, err), 0);
	assert_int_equal(pn_writer_open(s, &w, 0, err), 0);
	assert_int_equal(pn_calibration_put(w, &in, err), -1);
	pn_writer_abandon(w);
	pn_store_close(s);
}

/* A layout this passnet does not know (a later version, or a count that
 * does not match the thread count) is an error, never misread figures. */
static void test_foreign_layout(void **state)
{
	(void)state;
	char err[PN_ERRLEN] = "";
	double later[] = {2, 1, 0.5, 100, 20};
	double short_[] = {1, 2, 0.5, 100, 20};
	double *cases[] = {later, short_};
	for (int i = 0; i < 2; i++) {
		Passnet__Meta m = PASSNET__META__INIT;
		m.n_numbers = 5;
		m.numbers = cases[i];
		uint8_t buf[128];
		size_t n = passnet__meta__pack(&m, buf);
		put_raw("calibration", 11, buf, n);
		pn_calibration c;
		assert_int_equal(get(&c, err), -1);
		assert_non_null(strstr(err, "calibration"));
	}
	put_raw("calibration", 11, "\xff\xff\xff", 3);   /* not a protobuf */
	pn_calibration c;
	assert_int_equal(get(&c, err), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_layout, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
