/*
 * test_protocol.c - the adaptive protocol's stopping rule (exec/protocol.h)
 * on synthetic trial times: a stable sample far from every threshold stops
 * at the floor, one near a threshold or unstable goes on to the cap, the
 * full protocol never stops early, and the 1-thread rule stops after one
 * trial only far from its threshold.  Medians and IQRs in the comments
 * are computed by hand (IQR interpolated between ranks, numpy's default).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "exec/protocol.h"

static pn_stop_rule adaptive(void)
{
	return (pn_stop_rule){.min_trials = PN_PROTOCOL_MIN_TRIALS, .max_trials = 5};
}

/* How many of t[0..cap) the rule takes: the first n it calls enough. */
static int stops_at(const double *t, int cap, const pn_stop_rule *r)
{
	for (int n = 1; n <= cap; n++)
		if (pn_trials_enough(t, n, r))
			return n;
	return 0;
}

/* 1. Stable (median 100, IQR 1 over 3: 1%) and every threshold far: the
 * floor of 3 trials, not before. */
static void test_1_stable_far(void **state)
{
	(void)state;
	double t[] = {100, 99, 101, 100, 100};
	pn_stop_rule r = adaptive();
	pn_stop_rule_add(&r, 1000, 0);  /* slow at 10 x a bound of 100: 90% away */
	pn_stop_rule_add(&r, 20, 0);    /* overhead-bound below 20 */
	assert_int_equal(pn_trials_enough(t, 2, &r), 0);
	assert_int_equal(stops_at(t, 5, &r), 3);
}

/* 2. Stable but 3% from a threshold (inside the 5% band): all 5 trials,
 * the published floor near a flag. */
static void test_2_stable_near_threshold(void **state)
{
	(void)state;
	double t[] = {100, 99, 101, 100, 100};
	pn_stop_rule r = adaptive();
	pn_stop_rule_add(&r, 103, 0);
	assert_int_equal(pn_trials_enough(t, 3, &r), 0);
	assert_int_equal(pn_trials_enough(t, 4, &r), 0);
	assert_int_equal(stops_at(t, 5, &r), 5);
}

/* 3. Unstable: 3 trials 100, 150, 60 (median 100, IQR 125 - 80 = 45: 45%
 * > 20%): no threshold at all, still every trial. */
static void test_3_unstable(void **state)
{
	(void)state;
	double t[] = {100, 150, 60, 100, 130};
	pn_stop_rule r = adaptive();
	assert_int_equal(stops_at(t, 5, &r), 5);
}

/* 4. The band widens with the spread: IQR/median 10% (100, 90, 110: IQR
 * 105 - 95 = 10) puts a threshold 8% away inside it, and one 15% away out;
 * a threshold's own spread adds (parallel-slowdown's, from the N-thread
 * sample): 15% away with 6% more spread is inside again. */
static void test_4_band_follows_spread(void **state)
{
	(void)state;
	double t[] = {100, 90, 110, 100, 100};
	pn_stop_rule r = adaptive();
	pn_stop_rule_add(&r, 108, 0);
	assert_int_equal(pn_trials_enough(t, 3, &r), 0);
	r = adaptive();
	pn_stop_rule_add(&r, 115, 0);
	assert_int_equal(pn_trials_enough(t, 3, &r), 1);
	r = adaptive();
	pn_stop_rule_add(&r, 115, 0.06);
	assert_int_equal(pn_trials_enough(t, 3, &r), 0);
}

/* 5. The full protocol (min = max = T) runs every trial however stable. */
static void test_5_full_never_early(void **state)
{
	(void)state;
	double t[] = {100, 100, 100, 100, 100};
	pn_stop_rule r = {.min_trials = 5, .max_trials = 5};
	assert_int_equal(stops_at(t, 5, &r), 5);
}

/* 6. Thresholds that are none (<= 0: no bound, no overhead) are ignored,
 * and the names parse both ways. */
static void test_6_no_threshold_and_names(void **state)
{
	(void)state;
	double t[] = {5, 5, 5};
	pn_stop_rule r = adaptive();
	pn_stop_rule_add(&r, 0, 0);
	pn_stop_rule_add(&r, -1, 0);
	assert_int_equal(r.n, 0);
	assert_int_equal(stops_at(t, 3, &r), 3);
	assert_int_equal(pn_protocol_index("adaptive"), PN_PROTOCOL_ADAPTIVE);
	assert_int_equal(pn_protocol_index("full"), PN_PROTOCOL_FULL);
	assert_int_equal(pn_protocol_index("fast"), -1);
}

/* 7. far (the 1-thread phase's rule): one trial is enough 80% from the
 * threshold (1-thread 180 against 100 = an N-thread median of 110 / 1.1),
 * not 30% from it, nor 60% away when the threshold's own spread (15%)
 * brings it within far + spread; a rule without far, or without any
 * threshold, keeps its floor. */
static void test_7_far_single_trial(void **state)
{
	(void)state;
	double split[] = {180, 181, 179}, unsplit[] = {130, 131, 129}, mid[] = {160, 160, 160};
	pn_stop_rule r = adaptive();
	r.far = PN_PROTOCOL_FAR;
	pn_stop_rule_add(&r, 100, 0.05);
	assert_int_equal(stops_at(split, 3, &r), 1);
	assert_int_equal(stops_at(unsplit, 3, &r), 3);
	r = adaptive();
	r.far = PN_PROTOCOL_FAR;
	pn_stop_rule_add(&r, 100, 0.15);
	assert_int_equal(stops_at(mid, 3, &r), 3);
	r = adaptive();
	pn_stop_rule_add(&r, 100, 0.05);
	assert_int_equal(stops_at(split, 3, &r), 3);
	r = adaptive();
	r.far = PN_PROTOCOL_FAR;
	assert_int_equal(stops_at(split, 3, &r), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_1_stable_far),
		cmocka_unit_test(test_2_stable_near_threshold),
		cmocka_unit_test(test_3_unstable),
		cmocka_unit_test(test_4_band_follows_spread),
		cmocka_unit_test(test_5_full_never_early),
		cmocka_unit_test(test_6_no_threshold_and_names),
		cmocka_unit_test(test_7_far_single_trial),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
