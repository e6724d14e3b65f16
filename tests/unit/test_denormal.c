/*
 * test_denormal.c - counting subnormal values for a profile
 * (pn_tensor_subnormals, exec/profile.h): the smallest and largest
 * subnormals of float32, float16, bfloat16 and float64 count, of either
 * sign; zeros, the smallest normals, ordinary values, infinities and NaNs
 * do not; a sequence counts its items, integers never count.  And the
 * report's excess time (report/rank.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/profile.h"
#include "report/rank.h"
#include "schemas/tensor.h"

static pn_tensor *vector(int dtype, int64_t n)
{
	pn_tensor *t = pn_tensor_new(dtype, 1, &n);
	assert_non_null(t);
	return t;
}

static void test_float32(void **state)
{
	(void)state;
	float v[] = {0.0f, -0.0f, FLT_MIN, -FLT_MIN, 1.0f, -3.5e10f, INFINITY, NAN,
		     FLT_MIN / 2, -FLT_MIN / 4, 1e-45f /* the smallest */, nextafterf(FLT_MIN, 0)};
	pn_tensor *t = vector(PN_FLOAT, 12);
	memcpy(t->data, v, sizeof v);
	assert_int_equal(pn_tensor_subnormals(t), 4);
	pn_tensor_free(t);
}

static void test_float64(void **state)
{
	(void)state;
	double v[] = {0.0, DBL_MIN, 1.0, DBL_MIN / 8, -4.9e-324, (double)(FLT_MIN / 2)};
	pn_tensor *t = vector(PN_DOUBLE, 6);
	memcpy(t->data, v, sizeof v);
	/* FLT_MIN / 2 is normal as a double */
	assert_int_equal(pn_tensor_subnormals(t), 2);
	pn_tensor_free(t);
}

/* Bit patterns: 0x0001 and 0x03ff are float16's smallest and largest
 * subnormals, 0x0400 its smallest normal; 0x8001 a negative subnormal. */
static void test_float16(void **state)
{
	(void)state;
	uint16_t v[] = {0x0000, 0x8000, 0x0001, 0x03ff, 0x8001, 0x0400, 0x3c00, 0x7c00, 0x7e00};
	pn_tensor *t = vector(PN_FLOAT16, 9);
	memcpy(t->data, v, sizeof v);
	assert_int_equal(pn_tensor_subnormals(t), 3);
	/* the conversion agrees: 2^-24 is float16's smallest subnormal */
	assert_int_equal(pn_f32_to_f16(ldexpf(1, -24)), 0x0001);
	pn_tensor_free(t);
}

/* bfloat16 is float32's top half: 0x0001 .. 0x007f subnormal, 0x0080 the
 * smallest normal. */
static void test_bfloat16(void **state)
{
	(void)state;
	uint16_t v[] = {0x0000, 0x8000, 0x0001, 0x007f, 0x807f, 0x0080, 0x3f80, 0x7f80, 0x7fc0,
			pn_f32_to_bf16(FLT_MIN / 4)};
	pn_tensor *t = vector(PN_BFLOAT16, 10);
	memcpy(t->data, v, sizeof v);
	assert_int_equal(pn_tensor_subnormals(t), 4);
	pn_tensor_free(t);
}

static void test_others(void **state)
{
	(void)state;
	pn_tensor *t = vector(PN_INT32, 3);
	int32_t v[] = {1, 2, 3};   /* as float32 bits, all three would be subnormal */
	memcpy(t->data, v, sizeof v);
	assert_int_equal(pn_tensor_subnormals(t), 0);
	pn_tensor_free(t);
	assert_int_equal(pn_tensor_subnormals(NULL), 0);

	pn_tensor *a = vector(PN_FLOAT, 2), *b = vector(PN_FLOAT16, 1);
	float fa[] = {FLT_MIN / 2, 1};
	uint16_t hb[] = {0x0002};
	memcpy(a->data, fa, sizeof fa);
	memcpy(b->data, hb, sizeof hb);
	pn_tensor seq;
	memset(&seq, 0, sizeof seq);
	pn_tensor *items[] = {a, b};
	seq.kind = PN_KIND_SEQUENCE;
	seq.n_items = 2;
	seq.items = items;
	assert_int_equal(pn_tensor_subnormals(&seq), 2);
	pn_tensor_free(a);
	pn_tensor_free(b);
}

static void test_excess(void **state)
{
	(void)state;
	assert_true(pn_excess_us(30, 10, 3) == 60);
	assert_true(pn_excess_us(10, 30, 3) == 0);    /* under its bound: nothing to win */
	assert_true(pn_excess_us(10, 10, 5) == 0);
	assert_true(pn_excess_us(NAN, 1, 5) == 0);
	assert_true(pn_excess_us(5, 0, 5) == 0);      /* no bound */
	assert_true(pn_excess_us(5, 1, 0) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_float32), cmocka_unit_test(test_float64),
		cmocka_unit_test(test_float16), cmocka_unit_test(test_bfloat16),
		cmocka_unit_test(test_others), cmocka_unit_test(test_excess),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
