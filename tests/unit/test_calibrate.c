/*
 * test_calibrate.c - the calibration record in meta: a round trip keeps
 * every figure, a store without one says so, and a record of another
 * layout is refused rather than misread; every calibration stored is also
 * a machine record whose id is the hash of its bytes.  (The measurements
 * themselves are exercised by tests/cli/calibrate.sh.)
 *
 *   1. round trip of the current calibration
 *   2. a foreign layout is refused
 *   3. the machine id is derived from the record's content
 *   4. two different calibrations give two machine records
 *   5. a machine is found by its id; unknown and malformed ids are not
 *   6. a record of the old layout (no host) reads as naming no machine
 *   7. the host name is $PASSNET_HOSTNAME when set
 *   8. exec adopts a calibration of the old layout as this machine's
 *      (without measuring) and keeps it as a machine record
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "exec/calibrate.h"
#include "exec/profile.h"
#include "scratch_dir.h"
#include <xxhash.h>
#include "passnet.pb-c.h"

static char tmp[64], db[96];

static int setup(void **state)
{
	(void)state;
	if (scratch_dir_make(tmp, sizeof tmp, "calib"))
		return -1;
	snprintf(db, sizeof db, "%s/db", tmp);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	scratch_dir_remove(tmp);
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

/* A two-thread calibration with figures derived from base. */
static pn_calibration sample(double base, const char *host, const char *cpu)
{
	pn_calibration c;
	memset(&c, 0, sizeof(c));
	c.max_threads = 2;
	c.node_overhead_us = base / 100;
	for (int t = 1; t <= 2; t++) {
		c.peak_gflops[t] = base * t;
		c.bandwidth_gbs[t] = base / 10 + t;
	}
	snprintf(c.host, sizeof c.host, "%s", host);
	snprintf(c.cpu_model, sizeof c.cpu_model, "%s", cpu);
	return c;
}

static void put_cal(pn_calibration *c)
{
	char err[PN_ERRLEN] = "";
	pn_store *s;
	pn_writer *w;
	assert_int_equal(pn_store_open(&s, db, 0, err), 0);
	assert_int_equal(pn_writer_open(s, &w, 0, err), 0);
	assert_int_equal(pn_calibration_put(w, c, err), 0);
	assert_int_equal(pn_writer_close(w, err), 0);
	pn_store_close(s);
}

typedef struct meta_seen {
	int machines;
	char first_id[32];
	uint64_t hash_of_first;   /* XXH3-64 of its stored bytes */
} meta_seen;

static int on_meta(void *ud, pn_bytes key, pn_bytes val)
{
	meta_seen *m = ud;
	if (key.len < 8 || memcmp(key.data, "machine/", 8))
		return 0;
	if (!m->machines++) {
		snprintf(m->first_id, sizeof m->first_id, "%.*s", (int)key.len - 8,
			 (const char *)key.data + 8);
		m->hash_of_first = XXH3_64bits(val.data, val.len);
	}
	return 0;
}

static meta_seen scan_meta(void)
{
	char err[PN_ERRLEN];
	pn_store *s;
	pn_rtxn *t;
	meta_seen m = {0};
	assert_int_equal(pn_store_open(&s, db, 1, err), 0);
	assert_int_equal(pn_rtxn_begin(s, &t, err), 0);
	pn_foreach(t, PN_T_META, NULL, 0, on_meta, &m);
	pn_rtxn_end(t);
	pn_store_close(s);
	return m;
}

static void test_id_from_content(void **state)
{
	(void)state;
	char err[PN_ERRLEN] = "", id[PN_MACHINE_ID_LEN + 1], again[PN_MACHINE_ID_LEN + 1];
	pn_calibration c = sample(100, "node-a", "Test CPU @ 1 GHz");
	assert_int_equal(pn_calibration_id(&c, id, err), 0);
	assert_int_equal(strlen(id), 16);
	assert_int_equal(strspn(id, "0123456789abcdef"), 16);
	pn_calibration same = sample(100, "node-a", "Test CPU @ 1 GHz");
	assert_int_equal(pn_calibration_id(&same, again, err), 0);
	assert_string_equal(id, again);
	put_cal(&c);
	assert_string_equal(c.machine, id);
	put_cal(&same);   /* the same figures again: the same, single record */
	meta_seen m = scan_meta();
	assert_int_equal(m.machines, 1);
	assert_string_equal(m.first_id, id);
	/* the id is the hash of the bytes stored under it, as 16 hex digits */
	char hex[32];
	snprintf(hex, sizeof hex, "%016llx", (unsigned long long)m.hash_of_first);
	assert_string_equal(hex, id);
	pn_calibration cur;
	assert_int_equal(get(&cur, err), 0);
	assert_string_equal(cur.machine, id);
	assert_string_equal(cur.host, "node-a");
	assert_string_equal(cur.cpu_model, "Test CPU @ 1 GHz");
	/* any figure changes the id */
	pn_calibration other = sample(100, "node-a", "Test CPU @ 1 GHz");
	other.bandwidth_gbs[2] += 1e-9;
	assert_int_equal(pn_calibration_id(&other, again, err), 0);
	assert_string_not_equal(id, again);
}

static void list_machines(pn_calibration **l, int *n)
{
	char err[PN_ERRLEN] = "";
	pn_store *s;
	pn_rtxn *t;
	assert_int_equal(pn_store_open(&s, db, 1, err), 0);
	assert_int_equal(pn_rtxn_begin(s, &t, err), 0);
	assert_int_equal(pn_machines_list(t, l, n, err), 0);
	pn_rtxn_end(t);
	pn_store_close(s);
}

static void test_two_machines(void **state)
{
	(void)state;
	char err[PN_ERRLEN] = "";
	pn_calibration a = sample(100, "node-a", "cpu"), b = sample(100, "node-b", "cpu");
	put_cal(&a);
	put_cal(&b);
	assert_string_not_equal(a.machine, b.machine);
	pn_calibration *l;
	int n;
	list_machines(&l, &n);
	assert_int_equal(n, 2);
	assert_true(strcmp(l[0].machine, l[1].machine) < 0);   /* in id order */
	int ia = !strcmp(l[1].machine, a.machine);
	assert_string_equal(l[ia].machine, a.machine);
	assert_string_equal(l[ia].host, "node-a");
	assert_string_equal(l[!ia].machine, b.machine);
	assert_string_equal(l[!ia].host, "node-b");
	assert_true(l[!ia].peak_gflops[2] == 200);
	free(l);
	pn_calibration cur;
	assert_int_equal(get(&cur, err), 0);
	assert_string_equal(cur.machine, b.machine);   /* the last put is current */
	put_cal(&a);   /* back to a: no third machine, a current again */
	list_machines(&l, &n);
	free(l);
	assert_int_equal(n, 2);
	assert_int_equal(get(&cur, err), 0);
	assert_string_equal(cur.machine, a.machine);
}

static int machine_get(const char *id, pn_calibration *c, char *err)
{
	pn_store *s;
	pn_rtxn *t;
	assert_int_equal(pn_store_open(&s, db, 1, err), 0);
	assert_int_equal(pn_rtxn_begin(s, &t, err), 0);
	int rc = pn_machine_get(t, id, c, err);
	pn_rtxn_end(t);
	pn_store_close(s);
	return rc;
}

static void test_get_by_id(void **state)
{
	(void)state;
	char err[PN_ERRLEN] = "";
	pn_calibration a = sample(50, "node-a", "cpu a"), b = sample(70, "node-b", "cpu b");
	put_cal(&a);
	put_cal(&b);
	pn_calibration c;
	assert_int_equal(machine_get(a.machine, &c, err), 0);
	assert_string_equal(c.machine, a.machine);
	assert_string_equal(c.host, "node-a");
	assert_string_equal(c.cpu_model, "cpu a");
	assert_int_equal(c.max_threads, 2);
	assert_true(c.peak_gflops[1] == 50 && c.bandwidth_gbs[2] == 7);
	assert_true(c.node_overhead_us == 0.5);
	assert_int_equal(machine_get(b.machine, &c, err), 0);
	assert_string_equal(c.host, "node-b");
	assert_true(c.peak_gflops[2] == 140);
	/* an id no calibration has */
	char unknown[PN_MACHINE_ID_LEN + 1];
	snprintf(unknown, sizeof unknown, "%s", a.machine);
	unknown[0] = unknown[0] == '0' ? '1' : '0';
	assert_int_equal(machine_get(unknown, &c, err), 1);
	/* not an id: an error naming it, never a lookup */
	assert_int_equal(machine_get("ABCDEF0123456789", &c, err), -1);
	assert_non_null(strstr(err, "ABCDEF0123456789"));
	assert_int_equal(machine_get("0123", &c, err), -1);
}

static void test_old_layout(void **state)
{
	(void)state;
	char err[PN_ERRLEN] = "";
	double old[] = {1, 1, 0.5, 100, 20};
	Passnet__Meta m = PASSNET__META__INIT;
	m.n_numbers = 5;
	m.numbers = old;
	uint8_t buf[128];
	size_t n = passnet__meta__pack(&m, buf);
	put_raw("calibration", 11, buf, n);
	pn_calibration c;
	assert_int_equal(get(&c, err), 0);
	assert_string_equal(c.host, "");
	assert_string_equal(c.machine, "");
	assert_true(c.peak_gflops[1] == 100 && c.bandwidth_gbs[1] == 20);
	pn_calibration *l;
	int k;
	list_machines(&l, &k);
	free(l);
	assert_int_equal(k, 0);   /* the old record is no machine record */
}

static void test_host_override(void **state)
{
	(void)state;
	char host[PN_MACHINE_TEXT], model[PN_MACHINE_TEXT];
	setenv("PASSNET_HOSTNAME", "pretend-node-7", 1);
	pn_machine_host(host);
	assert_string_equal(host, "pretend-node-7");
	unsetenv("PASSNET_HOSTNAME");
	pn_machine_host(host);
	assert_string_not_equal(host, "pretend-node-7");
	assert_true(host[0] != 0);
	pn_machine_cpu_model(model);
	assert_true(model[0] != 0);
}

/* On a store with no models, exec's only work is the calibration: the old
 * record gets this machine's name and an id, its figures unchanged (had
 * exec measured instead, they would not be these made-up ones). */
static void test_exec_adopts_old_layout(void **state)
{
	(void)state;
	char err[PN_ERRLEN] = "";
	double old[] = {1, 1, 0.5, 123.25, 45.5};
	Passnet__Meta m = PASSNET__META__INIT;
	m.n_numbers = 5;
	m.numbers = old;
	uint8_t buf[128];
	size_t n = passnet__meta__pack(&m, buf);
	put_raw("calibration", 11, buf, n);
	setenv("PASSNET_HOSTNAME", "old-node", 1);
	pn_store *s;
	assert_int_equal(pn_store_open(&s, db, 0, err), 0);
	pn_profile_opts o = {.threads = 1, .warmups = 0, .trials = 1, .max_repeats = 1, .seed = 1};
	pn_profile_stats st;
	assert_int_equal(pn_exec_stage(s, &o, &st, err), 0);
	pn_store_close(s);
	unsetenv("PASSNET_HOSTNAME");
	assert_int_equal(st.profiled, 0);
	pn_calibration c;
	assert_int_equal(get(&c, err), 0);
	assert_string_equal(c.host, "old-node");
	assert_true(c.cpu_model[0] != 0);
	assert_int_equal(strlen(c.machine), 16);
	assert_true(c.peak_gflops[1] == 123.25 && c.bandwidth_gbs[1] == 45.5);
	assert_true(c.node_overhead_us == 0.5);
	pn_calibration *l;
	int k;
	list_machines(&l, &k);
	assert_int_equal(k, 1);
	assert_string_equal(l[0].machine, c.machine);
	assert_string_equal(l[0].host, "old-node");
	free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_id_from_content, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_machines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_get_by_id, setup, teardown),
		cmocka_unit_test_setup_teardown(test_old_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_override, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_adopts_old_layout, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
