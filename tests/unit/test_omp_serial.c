/*
 * test_omp_serial.c - common/omp_serial.c: a parallel region that one
 * thread would run is a plain call on the calling thread (no team: OpenMP's
 * nesting level stays 0), and still computes what the region computes
 * (a worksharing loop covers every iteration, a reduction adds them all);
 * a region of two threads still gets its two threads from libgomp; and a
 * region of one met inside a team of two is still a team of its own, whose
 * loop each of the two threads runs whole (a plain call there would bind
 * the loop to the outer team and split it); nor may a region of one inside
 * one run as a call take its loop's work-share over.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <omp.h>

/* 1. if(0): no team, every iteration, the reduction whole. */
static void test_1_if_false_is_a_call(void **state)
{
	(void)state;
	int off = 0, level = -1, threads = -1;
	long sum = 0;
	#pragma omp parallel if (off) reduction(+ : sum)
	{
		level = omp_get_level();
		threads = omp_get_num_threads();
		#pragma omp for schedule(dynamic, 3)
		for (int i = 0; i < 1000; i++)
			sum += i;
	}
	assert_int_equal(level, 0);
	assert_int_equal(threads, 1);
	assert_int_equal(sum, 499500);
}

/* 2. num_threads(1), and no clause at all with the thread count set to 1. */
static void test_2_one_thread_is_a_call(void **state)
{
	(void)state;
	int level = -1;
	#pragma omp parallel num_threads(1)
	level = omp_get_level();
	assert_int_equal(level, 0);
	int saved = omp_get_max_threads();
	omp_set_num_threads(1);
	level = -1;
	#pragma omp parallel
	level = omp_get_level();
	omp_set_num_threads(saved);
	assert_int_equal(level, 0);
}

/* 3. Two threads: libgomp's team, at level 1, each thread its share. */
static void test_3_two_threads_are_a_team(void **state)
{
	(void)state;
	int threads = 0, level = -1;
	long sum = 0;
	#pragma omp parallel num_threads(2) reduction(+ : sum)
	{
		#pragma omp single
		{
			threads = omp_get_num_threads();
			level = omp_get_level();
		}
		#pragma omp for schedule(static)
		for (int i = 0; i < 1000; i++)
			sum += i;
	}
	assert_int_equal(threads, 2);
	assert_int_equal(level, 1);
	assert_int_equal(sum, 499500);
}

/* 4. if(0) inside a team of two: each thread's loop is its own, whole. */
static void test_4_nested_in_a_team(void **state)
{
	(void)state;
	int off = 0;
	long sums[2] = {0, 0};
	#pragma omp parallel num_threads(2)
	{
		int me = omp_get_thread_num();
		long sum = 0;
		#pragma omp parallel if (off) reduction(+ : sum)
		{
			#pragma omp for schedule(static)
			for (int i = 0; i < 1000; i++)
				sum += i;
		}
		sums[me] = sum;
	}
	assert_int_equal(sums[0], 499500);
	assert_int_equal(sums[1], 499500);
}

/* 5. A region of one run as a call whose dynamic loop's body enters another
 * region of one with a dynamic loop of its own: neither loop loses
 * iterations to the other (the inner one must not take the thread's
 * work-share over). */
static void test_5_nested_in_a_plain_region(void **state)
{
	(void)state;
	int off = 0;
	long outer = 0, inner_total = 0;
	#pragma omp parallel if (off) reduction(+ : outer, inner_total)
	{
		#pragma omp for schedule(dynamic, 1)
		for (int i = 0; i < 50; i++) {
			long inner = 0;
			#pragma omp parallel if (off) reduction(+ : inner)
			{
				#pragma omp for schedule(dynamic, 2)
				for (int j = 0; j < 20; j++)
					inner += j;
			}
			outer += i;
			inner_total += inner;
		}
	}
	assert_int_equal(outer, 1225);
	assert_int_equal(inner_total, 50 * 190);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_1_if_false_is_a_call),
		cmocka_unit_test(test_2_one_thread_is_a_call),
		cmocka_unit_test(test_3_two_threads_are_a_team),
		cmocka_unit_test(test_4_nested_in_a_team),
		cmocka_unit_test(test_5_nested_in_a_plain_region),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
