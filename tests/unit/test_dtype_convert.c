/*
 * test_dtype_convert.c - float16 to and from float32 (schemas/tensor.h):
 * the branch-free conversions kernels inline give the bits of the plain
 * field-by-field definitions, on every half and on float32 patterns around
 * every rounding boundary of a half; the whole-array versions (F16C where
 * the build has it) equal them at every length (the vector body and its
 * tail); rounding is to nearest even, and a NaN stays a quiet NaN; and
 * bfloat16 alike.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schemas/tensor.h"

static uint32_t bits_of(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static float float_of(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* 1. Every one of the 65,536 halves widens to the same float32 bits. */
static void test_1_every_half_widens_alike(void **state)
{
	(void)state;
	int nan = 0;
	for (uint32_t h = 0; h <= 0xffff; h++) {
		uint32_t a = bits_of(pn_f16_to_f32((uint16_t)h));
		uint32_t b = bits_of(pn_f16_to_f32_soft((uint16_t)h));
		if (a != b)
			fail_msg("half 0x%04x: 0x%08x against the plain 0x%08x", h, a, b);
		if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) {
			assert_true(isnan(float_of(a)) && (a & 0x400000)); /* quiet */
			nan++;
		}
	}
	assert_int_equal(nan, 2 * 1023);
}

/* 2. Narrowing: every half's value, the float32 patterns one ulp either side
 * of it, and the midpoints to the next half and one ulp either side of
 * them (ties go to the even half), give the same bits; so do values past
 * the largest half and under the smallest subnormal. */
static void test_2_narrowing_at_every_boundary(void **state)
{
	(void)state;
	long checked = 0;
	for (uint32_t h = 0; h < 0x7c00; h++)
		for (int sign = 0; sign < 2; sign++) {
			float lo = pn_f16_to_f32_soft((uint16_t)h);
			float hi = pn_f16_to_f32_soft((uint16_t)(h + 1));
			float mid = lo + (hi - lo) / 2;   /* exact in float32 */
			float pts[] = {lo, mid};
			for (int p = 0; p < 2; p++)
				for (int d = -1; d <= 1; d++) {
					uint32_t u = bits_of(pts[p]) + (uint32_t)d;
					if (pts[p] == 0 && d < 0)
						continue;
					u |= sign ? 0x80000000u : 0;
					uint16_t a = pn_f32_to_f16(float_of(u)), b = pn_f32_to_f16_soft(float_of(u));
					if (a != b)
						fail_msg("float 0x%08x: 0x%04x against the plain 0x%04x", u, a, b);
					checked++;
				}
		}
	assert_true(checked > 300000);
	/* ties to even: 1 + 2^-11 lies halfway between 1 and 1 + 2^-10 */
	assert_int_equal(pn_f32_to_f16(1.0f + ldexpf(1, -11)), 0x3c00);
	assert_int_equal(pn_f32_to_f16(1.0f + 3 * ldexpf(1, -11)), 0x3c02);
	assert_int_equal(pn_f32_to_f16(65520.0f), 0x7c00);         /* rounds to infinity */
	assert_int_equal(pn_f32_to_f16(65519.0f), 0x7bff);
	assert_int_equal(pn_f32_to_f16(ldexpf(1, -26)), 0x0000);    /* under half the least subnormal */
	assert_int_equal(pn_f32_to_f16(-INFINITY), 0xfc00);
	uint16_t n = pn_f32_to_f16(NAN);
	assert_true((n & 0x7c00) == 0x7c00 && (n & 0x200));
	assert_int_equal(pn_f32_to_f16_soft(NAN), n);
}

/* 3. The whole-tensor conversions equal the scalar ones for every length
 * from 0 to 40 (vectors of 8 and a tail) and any alignment. */
static void test_3_bulk_equals_scalar(void **state)
{
	(void)state;
	enum { N = 48 };
	uint16_t h[N], h2[N];
	float f[N], back[N];
	for (int i = 0; i < N; i++)
		h[i] = (uint16_t)(i * 2654435761u >> 16);
	for (int off = 0; off < 3; off++)
		for (int n = 0; n + off <= 40; n++) {
			memset(f, 0, sizeof f);
			pn_f16_to_f32_n(h + off, f, n);
			for (int i = 0; i < n; i++)
				assert_int_equal(bits_of(f[i]), bits_of(pn_f16_to_f32(h[off + i])));
			for (int i = 0; i < n; i++)
				back[i] = f[i] * 1.37f;
			memset(h2, 0xab, sizeof h2);
			pn_f32_to_f16_n(back, h2, n);
			for (int i = 0; i < n; i++)
				assert_int_equal(h2[i], pn_f32_to_f16(back[i]));
			assert_int_equal(h2[n], 0xabab);   /* nothing past n */
		}
}

/* 4. bfloat16: every value survives the round trip (a NaN comes back a
 * quiet NaN), ties between two bfloat16 values go to the even one, and
 * the rest to the nearest. */
static void test_4_bfloat16(void **state)
{
	(void)state;
	for (uint32_t h = 0; h <= 0xffff; h++) {
		float f = pn_bf16_to_f32((uint16_t)h);
		uint16_t back = pn_f32_to_bf16(f);
		if (isnan(f))
			assert_int_equal(back, h | 0x40);
		else
			assert_int_equal(back, h);
	}
	assert_int_equal(pn_f32_to_bf16(float_of(0x3f808000u)), 0x3f80);  /* tie, even below */
	assert_int_equal(pn_f32_to_bf16(float_of(0x3f818000u)), 0x3f82);  /* tie, even above */
	assert_int_equal(pn_f32_to_bf16(float_of(0x3f808001u)), 0x3f81);
	assert_int_equal(pn_f32_to_bf16(float_of(0x7f7fffffu)), 0x7f80);  /* rounds to infinity */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_1_every_half_widens_alike),
		cmocka_unit_test(test_2_narrowing_at_every_boundary),
		cmocka_unit_test(test_3_bulk_equals_scalar),
		cmocka_unit_test(test_4_bfloat16),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
