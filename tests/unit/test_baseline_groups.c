/*
 * test_baseline_groups.c - how `passnet stats` and the report group ONNX
 * Runtime baselines (exec/baseline.h), so that both give the same figures:
 *   1. the op set: sorted, each op once, domain:op kept whole;
 *   2. an op set cut at the buffer's end stays a whole word list;
 *   3. no ops, and NULL, give "";
 *   4. size buckets at their edges, in the order of their names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "exec/baseline.h"

static void test_op_set(void **state)
{
	(void)state;
	char out[128];
	pn_baseline_op_set("Conv BatchNormalization Conv Relu", out, sizeof out);
	assert_string_equal(out, "BatchNormalization Conv Relu");
	pn_baseline_op_set("com.microsoft.nchwc:Conv Add com.microsoft.nchwc:Conv", out, sizeof out);
	assert_string_equal(out, "Add com.microsoft.nchwc:Conv");
}

static void test_op_set_cut(void **state)
{
	(void)state;
	char out[12];
	pn_baseline_op_set("Relu Add Sigmoid", out, sizeof out);
	/* "Add Relu" fits, "Add Relu Sigmoid" does not: no half word */
	assert_string_equal(out, "Add Relu");
}

static void test_op_set_empty(void **state)
{
	(void)state;
	char out[16] = "junk";
	pn_baseline_op_set("", out, sizeof out);
	assert_string_equal(out, "");
	strcpy(out, "junk");
	pn_baseline_op_set(NULL, out, sizeof out);
	assert_string_equal(out, "");
}

static void test_size_buckets(void **state)
{
	(void)state;
	static const struct { uint32_t nodes; const char *name; } cases[] = {
		{0, "1 node"}, {1, "1 node"}, {2, "2 nodes"}, {3, "3-4 nodes"}, {4, "3-4 nodes"},
		{5, "5-8 nodes"}, {8, "5-8 nodes"}, {9, "9-16 nodes"}, {16, "9-16 nodes"},
		{17, "17+ nodes"}, {100000, "17+ nodes"},
	};
	int last = 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int b = pn_baseline_size_bucket(cases[i].nodes);
		assert_true(b >= last && b < PN_BASELINE_SIZES);
		assert_string_equal(pn_baseline_size_names[b], cases[i].name);
		last = b;
	}
	assert_int_equal(last, PN_BASELINE_SIZES - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_op_set),
		cmocka_unit_test(test_op_set_cut),
		cmocka_unit_test(test_op_set_empty),
		cmocka_unit_test(test_size_buckets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
