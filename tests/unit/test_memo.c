/*
 * test_memo.c - the run's memo of results (common/memo.h) that extract's
 * weight-check and variant memos keep their entries in.
 *
 *   1. An entry put under a key is the one used under it; another key has
 *      none.
 *   2. The first entry under a key stays: a second one is freed.
 *   3. Past the byte budget an entry is freed and not kept; the ones kept
 *      before stay.
 *   4. Threads putting the same keys at once keep one entry per key, and
 *      every other entry is freed exactly once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/memo.h"

typedef struct item {
	int value;
	int *freed;   /* counts the frees of this item */
} item;

static void item_free(void *p)
{
	item *it = p;
	#pragma omp atomic
	(*it->freed)++;
}

static pn_key key_of(int i)
{
	return pn_key_of(&i, sizeof i);
}

/* A pn_memo_use callback: the entry's value, or -1 when there is none. */
static int value_of(const void *e, void *ud)
{
	(void)ud;
	return e ? ((const item *)e)->value : -1;
}

static void test_1_round_trip(void **state)
{
	(void)state;
	pn_memo m;
	int freed = 0;
	assert_int_equal(pn_memo_init(&m, sizeof(item), 1 << 20, item_free), 0);
	pn_key k1 = key_of(1), k2 = key_of(2);
	item a = {41, &freed};
	assert_int_equal(pn_memo_put(&m, &k1, &a, 100), 0);
	assert_int_equal(pn_memo_use(&m, &k1, value_of, NULL), 41);
	assert_int_equal(pn_memo_use(&m, &k2, value_of, NULL), -1);
	assert_int_equal(freed, 0);
	pn_memo_destroy(&m);
	assert_int_equal(freed, 1);   /* the memo frees what it kept */
}

static void test_2_first_stays(void **state)
{
	(void)state;
	pn_memo m;
	int freed_a = 0, freed_b = 0;
	assert_int_equal(pn_memo_init(&m, sizeof(item), 1 << 20, item_free), 0);
	pn_key k = key_of(7);
	item a = {1, &freed_a}, b = {2, &freed_b};
	assert_int_equal(pn_memo_put(&m, &k, &a, 10), 0);
	assert_int_equal(pn_memo_put(&m, &k, &b, 10), 0);
	assert_int_equal(freed_b, 1);
	assert_int_equal(pn_memo_use(&m, &k, value_of, NULL), 1);
	pn_memo_destroy(&m);
	assert_int_equal(freed_a, 1);
}

static void test_3_budget(void **state)
{
	(void)state;
	pn_memo m;
	int freed = 0;
	assert_int_equal(pn_memo_init(&m, sizeof(item), 250, item_free), 0);
	for (int i = 0; i < 3; i++) {
		pn_key k = key_of(i);
		item it = {i, &freed};
		assert_int_equal(pn_memo_put(&m, &k, &it, 100), 0);
	}
	assert_int_equal(freed, 1);   /* the third would pass 250 bytes */
	for (int i = 0; i < 3; i++) {
		pn_key k = key_of(i);
		assert_int_equal(pn_memo_use(&m, &k, value_of, NULL), i < 2 ? i : -1);
	}
	pn_memo_destroy(&m);
	assert_int_equal(freed, 3);
}

static void test_4_threads(void **state)
{
	(void)state;
	enum { KEYS = 500, COPIES = 4 };
	pn_memo m;
	int *freed = calloc(KEYS * COPIES, sizeof(int));
	assert_non_null(freed);
	assert_int_equal(pn_memo_init(&m, sizeof(item), (size_t)1 << 30, item_free), 0);
	int failed = 0;
	#pragma omp parallel for num_threads(4) schedule(dynamic, 7) reduction(+ : failed)
	for (int j = 0; j < KEYS * COPIES; j++) {
		pn_key k = key_of(j % KEYS);
		item it = {j % KEYS, &freed[j]};
		failed += pn_memo_put(&m, &k, &it, 1) != 0;
	}
	assert_int_equal(failed, 0);
	assert_int_equal((int)m.n, KEYS);
	for (int i = 0; i < KEYS; i++) {
		pn_key k = key_of(i);
		assert_int_equal(pn_memo_use(&m, &k, value_of, NULL), i);
	}
	int kept_freed = 0;
	for (int j = 0; j < KEYS * COPIES; j++)
		kept_freed += freed[j];
	assert_int_equal(kept_freed, KEYS * (COPIES - 1));   /* the ones not kept */
	pn_memo_destroy(&m);
	for (int j = 0; j < KEYS * COPIES; j++)
		assert_int_equal(freed[j], 1);   /* each exactly once in all */
	free(freed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_1_round_trip),
		cmocka_unit_test(test_2_first_stays),
		cmocka_unit_test(test_3_budget),
		cmocka_unit_test(test_4_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
