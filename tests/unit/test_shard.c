/*
 * test_shard.c - common/shard.c: the K/N syntax, and the rule that decides
 * which shard a key falls in (documented in shard.h and the README, so the
 * cases pin it to exact keys).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "common/shard.h"
#include "common/util.h"

/* 1. Well-formed K/N, and the malformed ones each refused with a reason. */
static void test_parse(void **state)
{
	(void)state;
	char err[PN_ERRLEN];
	pn_shard sh;
	assert_int_equal(pn_shard_parse("0/1", &sh, err), 0);
	assert_int_equal(sh.k, 0);
	assert_int_equal(sh.n, 1);
	assert_int_equal(pn_shard_parse("2/3", &sh, err), 0);
	assert_int_equal(sh.k, 2);
	assert_int_equal(sh.n, 3);
	static const char *const bad[] = {"", "3", "3/3", "4/3", "-1/3", "1/-3", "1/0", "a/3",
					  "1/3x", "1/", "/3", "1 /3", "0/1000001"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		err[0] = 0;
		assert_int_equal(pn_shard_parse(bad[i], &sh, err), -1);
		assert_true(strlen(err) > 0);
	}
}

/* 2. The rule: the first 8 bytes as a little-endian uint64, mod N. */
static void test_rule(void **state)
{
	(void)state;
	uint8_t key[16] = {0};
	key[0] = 7;   /* 7 */
	pn_shard s2 = {1, 2}, s3 = {1, 3}, s7 = {0, 7};
	assert_true(pn_shard_holds(&s2, key));
	assert_true(pn_shard_holds(&s3, key));
	assert_true(pn_shard_holds(&s7, key));
	key[0] = 0;
	key[1] = 1;   /* 256 = 85 * 3 + 1 */
	assert_true(pn_shard_holds(&s3, key));
	assert_false(pn_shard_holds(&s2, key));
	key[1] = 0;
	key[8] = 1;   /* bytes past the eighth do not count: 0 */
	pn_shard z3 = {0, 3};
	assert_true(pn_shard_holds(&z3, key));
	memset(key, 0xff, 8);   /* 2^64 - 1 = 3 * 6148914691236517205 */
	assert_true(pn_shard_holds(&z3, key));
	/* no sharding: every key */
	assert_true(pn_shard_holds(NULL, key));
	pn_shard none = {0, 0}, one = {0, 1};
	assert_true(pn_shard_holds(&none, key));
	assert_true(pn_shard_holds(&one, key));
	assert_false(pn_shard_active(&one));
	assert_true(pn_shard_active(&s2));
}

/* 3. Every key falls in exactly one shard, and real keys spread evenly. */
static void test_partition(void **state)
{
	(void)state;
	enum { N = 5, KEYS = 5000 };
	int count[N] = {0};
	for (int i = 0; i < KEYS; i++) {
		char text[32];
		int len = snprintf(text, sizeof text, "model-%d", i);
		pn_key k = pn_key_of(text, (size_t)len);
		int held = 0;
		for (uint32_t s = 0; s < N; s++) {
			pn_shard sh = {s, N};
			if (pn_shard_holds(&sh, k.b)) {
				held++;
				count[s]++;
			}
		}
		assert_int_equal(held, 1);
	}
	for (int s = 0; s < N; s++)
		assert_true(count[s] > KEYS / N * 8 / 10 && count[s] < KEYS / N * 12 / 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_rule),
		cmocka_unit_test(test_partition),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
