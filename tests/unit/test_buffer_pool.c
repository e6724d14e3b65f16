/*
 * test_buffer_pool.c - the executor's buffer pool (runtime/pool.h): a freed
 * buffer is handed out again for a request it can hold, the smallest that
 * fits first, but not for one far smaller; and the pool keeps no more than
 * its limit (a session that runs once sets a small one, so that a CNN's
 * shrinking activations do not pile up in it: 2.3 GB at the peak of the
 * 10,000-model build).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "runtime/pool.h"

/* 1. A freed buffer comes back for a request it holds; the smallest first. */
static void test_reuse(void **state)
{
	(void)state;
	pn_pool p = {0};
	size_t cap_big, cap_small, cap;
	void *big = pn_pool_get(&p, 10000, &cap_big), *small = pn_pool_get(&p, 6000, &cap_small);
	assert_non_null(big);
	assert_non_null(small);
	assert_true(cap_big >= 10000 && cap_small >= 6000);
	assert_int_equal((uintptr_t)big % 64, 0);
	pn_pool_put(&p, big, cap_big);
	pn_pool_put(&p, small, cap_small);
	assert_int_equal(p.held, cap_big + cap_small);
	assert_ptr_equal(pn_pool_get(&p, 5000, &cap), small);
	assert_int_equal(cap, cap_small);
	assert_ptr_equal(pn_pool_get(&p, 7000, &cap), big);
	assert_int_equal(p.held, 0);
	pn_pool_put(&p, big, cap_big);
	pn_pool_put(&p, small, cap_small);
	pn_pool_clear(&p);
	assert_int_equal(p.n, 0);
}

/* 2. A buffer far larger than asked stays for a request of its size. */
static void test_no_tiny_in_huge(void **state)
{
	(void)state;
	pn_pool p = {0};
	size_t cap_huge, cap;
	void *huge = pn_pool_get(&p, 1 << 20, &cap_huge);
	pn_pool_put(&p, huge, cap_huge);
	void *tiny = pn_pool_get(&p, 100, &cap);
	assert_ptr_not_equal(tiny, huge);
	assert_int_equal(p.held, cap_huge);
	pn_pool_put(&p, tiny, cap);
	pn_pool_clear(&p);
}

/* 3. With a limit, what would take the pool past it is freed at once; with
 * none, the default keeps it all. */
static void test_limit(void **state)
{
	(void)state;
	for (int limited = 0; limited <= 1; limited++) {
		pn_pool p = {.limit = limited ? 3 * 4096 : 0};
		void *b[6];
		size_t cap[6];
		for (int i = 0; i < 6; i++)
			assert_non_null(b[i] = pn_pool_get(&p, 4096, &cap[i]));
		for (int i = 0; i < 6; i++)
			pn_pool_put(&p, b[i], cap[i]);
		assert_int_equal(p.n, limited ? 3 : 6);
		assert_int_equal(p.held, (size_t)(limited ? 3 : 6) * 4096);
		pn_pool_clear(&p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reuse),
		cmocka_unit_test(test_no_tiny_in_huge),
		cmocka_unit_test(test_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
