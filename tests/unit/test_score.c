/*
 * test_score.c - the ES_t formula, the tolerance ladder and the pass_level
 * `passnet check` derives from it, pinned on cases computed by hand (the
 * arithmetic is in the comments).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>
#include <xxhash.h>

#include "common/err.h"
#include "judge/check_impl.h"
#include "export/export.h"
#include "common/jsonc.h"
#include "judge/score.h"
#include "schemas/tensor.h"

#define NEAR(x, want) near((x), (want))

static void near(double x, double want)
{
	if (!(fabs(x - want) <= 1e-9 * fmax(1, fabs(want))))
		fail_msg("got %.15g, expected %.15g", x, want);
}

static double es(const pn_sample *s, size_t n, int t, double p, double b)
{
	return pn_es_t(s, n, t, p, b);
}

/* A: speedup 2, passes from t = -6.  B: speedup 0.5, passes from t = -2
 * (so it fails at t = -3 with an accuracy problem). */
static const pn_sample two[] = {
	{.speedup = 2, .error_class = PN_EC_NONE, .pass_level = -6},
	{.speedup = 0.5, .error_class = PN_EC_NONE, .pass_level = -2},
};

static void test_es_two_samples(void **state)
{
	(void)state;
	/* t = -7: both fail, t < 1 so both score b: ES = 0.1 */
	NEAR(es(two, 2, -7, 0, 0.1), 0.1);
	/* t = -3: A correct -> 2; B fails -> b = 0.1: ES = sqrt(0.2) */
	NEAR(es(two, 2, -3, 0, 0.1), 0.4472135954999579);
	/* t = -2: A -> 2, B correct and slower: 0.5^(p+1) = 0.5: sqrt(1) = 1 */
	NEAR(es(two, 2, -2, 0, 0.1), 1.0);
	/* t = 1 and 4: judged at t = 1, both correct: 1 */
	NEAR(es(two, 2, 1, 0, 0.1), 1.0);
	NEAR(es(two, 2, 4, 0, 0.1), 1.0);
}

static void test_rectification(void **state)
{
	(void)state;
	/* p = 1: a slowdown is squared: B -> 0.5^2 = 0.25; sqrt(2 * 0.25) */
	NEAR(es(two, 2, -2, 1, 0.1), 0.7071067811865476);
	NEAR(pn_rectified(&two[1], -2, 1, 0.1), 0.25);
	/* a speedup above 1 is not touched by p */
	NEAR(pn_rectified(&two[0], -2, 1, 0.1), 2);
	/* b replaces a failure: B at t = -3 with b = 0.2 */
	NEAR(pn_rectified(&two[1], -3, 1, 0.2), 0.2);
	/* a correct sample without a measured speedup counts as 1 */
	pn_sample unmeasured = {.speedup = NAN, .error_class = PN_EC_NONE, .pass_level = -10};
	NEAR(pn_rectified(&unmeasured, 0, 0, 0.1), 1);
}

/* One failing sample of every class but none. */
static const pn_sample failures[] = {
	{.speedup = 3, .error_class = PN_EC_ACCURACY, .pass_level = PN_NO_LEVEL},
	{.speedup = 3, .error_class = PN_EC_NANINF, .pass_level = PN_NO_LEVEL},
	{.speedup = 3, .error_class = PN_EC_SHAPE, .pass_level = PN_NO_LEVEL},
	{.speedup = 3, .error_class = PN_EC_DTYPE, .pass_level = PN_NO_LEVEL},
	{.speedup = 3, .error_class = PN_EC_RUNTIME, .pass_level = PN_NO_LEVEL},
	{.speedup = 3, .error_class = PN_EC_CHEAT, .pass_level = PN_NO_LEVEL},
};

static void test_error_tolerance(void **state)
{
	(void)state;
	/* t = 0: nothing tolerated yet: all six score b = 0.1 */
	NEAR(es(failures, 6, 0, 0, 0.1), 0.1);
	/* t = 1: accuracy scores 1, five score 0.1: (0.1^5)^(1/6) = 10^(-5/6) */
	NEAR(es(failures, 6, 1, 0, 0.1), 0.14677992676220694);
	/* t = 2: + nan_inf, shape, dtype: 0.1^2 left: 10^(-2/6) */
	NEAR(es(failures, 6, 2, 0, 0.1), 0.4641588833612779);
	/* t = 3: + runtime: only cheat scores 0.1: 10^(-1/6) */
	NEAR(es(failures, 6, 3, 0, 0.1), 0.6812920690579612);
	/* t = 4: cheat is never tolerated */
	NEAR(es(failures, 6, 4, 0, 0.1), 0.6812920690579612);
	NEAR(pn_rectified(&failures[5], 4, 0, 0.1), 0.1);
	/* failing speedups never count, even when they are > 1 */
	NEAR(pn_rectified(&failures[0], 1, 0, 0.1), 1);

	/* "none" with pass_level 2: correctness is judged at t = 1 from t = 1
	 * on, so it never earns its speedup 3; as an accuracy failure it scores
	 * 1 from t = 1, b before. */
	pn_sample loose = {.speedup = 3, .error_class = PN_EC_NONE, .pass_level = 2};
	NEAR(pn_rectified(&loose, 0, 0, 0.1), 0.1);
	NEAR(pn_rectified(&loose, 1, 0, 0.1), 1);
	NEAR(pn_rectified(&loose, 2, 0, 0.1), 1);
	NEAR(pn_rectified(&loose, 4, 0, 0.1), 1);
	/* pass_level 1 is correct at t = 1 and beyond */
	loose.pass_level = 1;
	NEAR(pn_rectified(&loose, 0, 0, 0.1), 0.1);
	NEAR(pn_rectified(&loose, 1, 0, 0.1), 3);
	NEAR(pn_rectified(&loose, 4, 0, 0.1), 3);
}

static void test_weights_and_aggregate(void **state)
{
	(void)state;
	double sum = 0;
	for (int t = PN_TOL_MIN_LEVEL; t <= PN_TOL_MAX_LEVEL; t++)
		sum += pn_es_weight(t);
	/* 5 * 0.001 + 3 * 1 + 0.8 + 0.64 + 0.512 + 0.4096 + 0.32768 + 0.262144 + 0.001 */
	NEAR(sum, 5.957424);
	NEAR(pn_es_weight(-10), 0.001);
	NEAR(pn_es_weight(-6), 0.001);
	NEAR(pn_es_weight(-5), 1);
	NEAR(pn_es_weight(-3), 1);
	NEAR(pn_es_weight(-2), 0.8);
	NEAR(pn_es_weight(0), 0.512);
	NEAR(pn_es_weight(3), 0.262144);
	NEAR(pn_es_weight(4), 0.001);

	/* The two samples above: ES = 0.1 at t = -10..-7 (log10 -1, weight
	 * 4 * 0.001), sqrt(0.2) at -6..-3 (log10 (log10 2 - 1) / 2 =
	 * -0.349485002168, weight 0.001 + 3), 1 from -2 on (log10 0).
	 * num = -0.004 + 3.001 * -0.349485002168 = -1.052804491506;
	 * aggregate = 10^(num / 5.957424) = 10^-0.176721430522 = 0.665700019201 */
	double v[PN_N_LEVELS];
	for (int i = 0; i < PN_N_LEVELS; i++)
		v[i] = es(two, 2, PN_TOL_MIN_LEVEL + i, 0, 0.1);
	NEAR(pn_es_aggregate(v), 0.6657000192007189);
	/* every ES_t equal to x gives x */
	for (int i = 0; i < PN_N_LEVELS; i++)
		v[i] = 1.7;
	NEAR(pn_es_aggregate(v), 1.7);
}

static void test_tolerance_ladder(void **state)
{
	(void)state;
	double r, a;
	/* float32: rtol 10^(5.886t/5), atol 10^t; t = -3: 10^-3.5316 */
	pn_tolerance(PN_FLOAT, -3, &r, &a);
	NEAR(r, 0.0002940356573672507);
	NEAR(a, 1e-3);
	pn_tolerance(PN_FLOAT, 0, &r, &a);
	NEAR(r, 1);
	NEAR(a, 1);
	/* float16: rtol 10^(3t/5); t = -2: 10^-1.2 */
	pn_tolerance(PN_FLOAT16, -2, &r, &a);
	NEAR(r, 0.06309573444801933);
	NEAR(a, 0.01);
	/* bfloat16: rtol 10^(1.796t/5); t = -1: 10^-0.3592 */
	pn_tolerance(PN_BFLOAT16, -1, &r, &a);
	NEAR(r, 0.437320665169645);
	NEAR(a, 0.1);
	/* float64: both 10^(7t/5); t = -5: 10^-7 */
	pn_tolerance(PN_DOUBLE, -5, &r, &a);
	NEAR(r, 1e-7);
	NEAR(a, 1e-7);
	/* integers use the float32 ladder */
	double r32, a32;
	pn_tolerance(PN_FLOAT, 2, &r32, &a32);
	pn_tolerance(PN_INT64, 2, &r, &a);
	NEAR(r, r32);
	NEAR(a, 100);
}

static pn_tensor *vec(int dtype, int n, const double *v)
{
	pn_tensor *t = pn_tensor_new(dtype, 1, (int64_t[]){n});
	assert_non_null(t);
	for (int i = 0; i < n; i++)
		pn_tensor_set_f64(t, i, v[i]);
	return t;
}

static int level_of(int dtype, int n, const double *got, const double *want, int *cls)
{
	pn_tensor *g = vec(dtype, n, got), *w = vec(dtype, n, want);
	pn_outcmp r;
	pn_check_compare(g, w, &r);
	pn_tensor_free(g);
	pn_tensor_free(w);
	*cls = r.cls;
	return r.level;
}

/* pass_level: the least t at which every element passes the ladder. */
static void test_pass_level(void **state)
{
	(void)state;
	int cls;
	/* equal: the strictest level */
	assert_int_equal(level_of(PN_FLOAT, 3, (double[]){1, 0, -2}, (double[]){1, 0, -2}, &cls),
			 -10);
	assert_int_equal(cls, PN_EC_NONE);
	/* 1 + 1e-4 (float32: d = 1.00017e-4) against 1: t = -4 allows
	 * 1e-4 + 10^-4.7088 = 1.1955e-4, t = -5 only 1e-5 + 1.3e-6 */
	assert_int_equal(level_of(PN_FLOAT, 3, (double[]){1 + 1e-4, 0, -2}, (double[]){1, 0, -2},
				  &cls), -4);
	/* an int64 10 -> 11: t = -1 allows 0.1 + 0.0665 * 10 = 0.765 < 1, t = 0
	 * allows 1 + 10 */
	assert_int_equal(level_of(PN_INT64, 2, (double[]){11, 3}, (double[]){10, 3}, &cls), 0);
	/* a bool is a label: any flip fails at every level */
	assert_int_equal(level_of(PN_BOOL, 2, (double[]){1, 0}, (double[]){0, 0}, &cls), PN_NO_LEVEL);
	assert_int_equal(cls, PN_EC_ACCURACY);
	/* 1e5 off: beyond t = 4 (atol 1e4, rtol 10^4.7088 * 0 = 0 for a zero) */
	assert_int_equal(level_of(PN_FLOAT, 1, (double[]){1e5}, (double[]){0}, &cls), PN_NO_LEVEL);
	assert_int_equal(cls, PN_EC_ACCURACY);
	/* NaN where the reference is finite; NaN where it is NaN is fine */
	level_of(PN_FLOAT, 2, (double[]){NAN, 1}, (double[]){1, 1}, &cls);
	assert_int_equal(cls, PN_EC_NANINF);
	assert_int_equal(level_of(PN_FLOAT, 2, (double[]){NAN, 1}, (double[]){NAN, 1}, &cls), -10);
	/* shapes */
	pn_tensor *a = vec(PN_FLOAT, 2, (double[]){1, 2}), *b = vec(PN_FLOAT, 3, (double[]){1, 2, 3});
	pn_outcmp r;
	pn_check_compare(a, b, &r);
	assert_int_equal(r.cls, PN_EC_SHAPE);
	assert_int_equal(r.level, PN_NO_LEVEL);
	pn_tensor_free(a);
	pn_tensor_free(b);
}

static void test_parse(void **state)
{
	(void)state;
	pn_sample s;
	char err[PN_ERRLEN];
	const char *ok = "{\"task\":\"t0001-abc\",\"variant\":\"v01-abc\",\"dtype\":\"float32\","
			 "\"error_class\":\"none\",\"pass_level\":-4,\"max_abs\":1e-5,\"max_rel\":null,"
			 "\"speedup\":1.25,\"time_ref_us\":10,\"time_cand_us\":8,\"reason\":\"\"}\n";
	assert_int_equal(pn_sample_parse(ok, strlen(ok), &s, err), 0);
	assert_int_equal(s.error_class, PN_EC_NONE);
	assert_int_equal(s.pass_level, -4);
	NEAR(s.speedup, 1.25);
	assert_string_equal(s.check_seed, "");   /* a line of a check before seeds */
	assert_string_equal(s.check_build, "");
	const char *seeded = "{\"error_class\":\"none\",\"pass_level\":0,\"speedup\":2,"
			     "\"check_seed\":9007199254740991,\"check_build\":\"0123abcd\"}";
	assert_int_equal(pn_sample_parse(seeded, strlen(seeded), &s, err), 0);
	assert_string_equal(s.check_seed, "9007199254740991");
	assert_string_equal(s.check_build, "0123abcd");
	assert_string_equal(s.backend, "");   /* a line of a check before backends */
	const char *ort = "{\"error_class\":\"none\",\"pass_level\":0,\"speedup\":2,"
			  "\"backend\":\"ort\",\"ort_version\":\"1.30.0\"}";
	assert_int_equal(pn_sample_parse(ort, strlen(ort), &s, err), 0);
	assert_string_equal(s.backend, "ort 1.30.0");   /* the version is part of it */
	const char *own = "{\"error_class\":\"none\",\"pass_level\":0,\"backend\":\"passnet\"}";
	assert_int_equal(pn_sample_parse(own, strlen(own), &s, err), 0);
	assert_string_equal(s.backend, "passnet");
	const char *null_level = "{\"error_class\":\"runtime\",\"pass_level\":null,\"speedup\":null}";
	assert_int_equal(pn_sample_parse(null_level, strlen(null_level), &s, err), 0);
	assert_int_equal(s.error_class, PN_EC_RUNTIME);
	assert_int_equal(s.pass_level, PN_NO_LEVEL);
	assert_true(isnan(s.speedup));
	const char *bad_class = "{\"error_class\":\"fast\",\"pass_level\":0}";
	assert_int_equal(pn_sample_parse(bad_class, strlen(bad_class), &s, err), -1);
	const char *bad_level = "{\"error_class\":\"none\",\"pass_level\":5}";
	assert_int_equal(pn_sample_parse(bad_level, strlen(bad_level), &s, err), -1);
	const char *bad_json = "{\"error_class\":\"none\",";
	assert_int_equal(pn_sample_parse(bad_json, strlen(bad_json), &s, err), -1);
}

/* The JSON reading behind both (json-c, strict, through common/jsonc.h):
 * escapes, 64-bit literals, the nesting limit, and text that is not one
 * JSON value. */
static void test_json(void **state)
{
	(void)state;
	char err[PN_ERRLEN];
	const char *text = "{\"s\":\"a\\u00e9\\ud83d\\ude00\\n\",\"seed\":18446744073709551615,"
			   "\"l\":[1,2.5e1,true,null]}";
	json_object *v = pn_json_parse(text, strlen(text), err);
	assert_non_null(v);
	assert_string_equal(pn_json_str_of(v, "s"), "a\xc3\xa9\xf0\x9f\x98\x80\n");
	uint64_t seed;
	assert_int_equal(pn_json_u64(v, "seed", &seed), 0);
	assert_true(seed == UINT64_MAX);
	json_object *l = pn_json_get(v, "l");
	assert_int_equal(pn_json_len(l), 4);
	NEAR(json_object_get_double(pn_json_item(l, 1)), 25);
	assert_true(json_object_is_type(pn_json_item(l, 3), json_type_null));
	assert_null(pn_json_item(l, 4));
	assert_int_equal(pn_json_u64(v, "l", &seed), -1);
	assert_int_equal(pn_json_u64(v, "missing", &seed), -1);
	json_object_put(v);
	/* A top-level number ends at the end of the text (json-c needs the
	 * NUL pn_json_parse adds), and blanks may surround a value. */
	v = pn_json_parse("2.5", 3, err);
	assert_non_null(v);
	NEAR(json_object_get_double(v), 2.5);
	json_object_put(v);
	v = pn_json_parse(" [1] \n", 6, err);
	assert_non_null(v);
	json_object_put(v);
	const char *neg = "{\"seed\":-1}";
	v = pn_json_parse(neg, strlen(neg), err);
	assert_int_equal(pn_json_u64(v, "seed", &seed), -1);
	json_object_put(v);
	char deep[200];
	memset(deep, '[', sizeof deep);
	assert_null(pn_json_parse(deep, sizeof deep, err));
	static const char *const bad[] = {"{\"a\":1,}", "[1 2]", "{\"a\"}", "01x", "[1] 2", "",
					  "\"\xff\"", "[1]\0"};
	static const size_t bad_len[] = {0, 0, 0, 0, 0, 0, 0, 4};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		size_t n = bad_len[i] ? bad_len[i] : strlen(bad[i]);
		assert_null(pn_json_parse(bad[i], n, err));
		assert_non_null(strstr(err, "offset "));
	}
}

/* The check seed rule: input set k of a variant is drawn with XXH64 of
 * "passnet-check/<S>/<variant>/<k>" (the text task.json states), so a seed
 * repeats a check; a drawn check seed fits 53 bits and two draws differ
 * (2^-53 odds of a false failure). */
static void test_check_seed(void **state)
{
	(void)state;
	const char *text = "passnet-check/123456789/v01-0123456789ab/1";
	assert_true(pn_check_seed(123456789, "v01-0123456789ab", 1) == XXH64(text, strlen(text), 0));
	assert_true(pn_check_seed(123456789, "v01-0123456789ab", 0) !=
		    pn_check_seed(123456789, "v01-0123456789ab", 1));
	assert_true(pn_check_seed(123456789, "v01-0123456789ab", 0) !=
		    pn_check_seed(123456790, "v01-0123456789ab", 0));
	assert_non_null(strstr(PN_CHECK_SEED_RULE, "passnet-check/<S>/<variant>/<k>"));
	uint64_t a, b;
	char err[PN_ERRLEN];
	assert_int_equal(pn_check_random_seed(&a, err), 0);
	assert_int_equal(pn_check_random_seed(&b, err), 0);
	assert_true(a <= PN_CHECK_SEED_MAX && b <= PN_CHECK_SEED_MAX);
	assert_true(a != b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_es_two_samples),
		cmocka_unit_test(test_rectification),
		cmocka_unit_test(test_error_tolerance),
		cmocka_unit_test(test_weights_and_aggregate),
		cmocka_unit_test(test_tolerance_ladder),
		cmocka_unit_test(test_pass_level),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_check_seed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
