/*
 * protocol.c - the timing protocols and their stopping rule (see protocol.h).
 */
#include "exec/protocol.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/assert.h"
#include "common/timing.h"

const char *const pn_protocol_names[PN_N_PROTOCOLS] = {"adaptive", "full"};

int pn_protocol_index(const char *name)
{
	for (int i = 0; i < PN_N_PROTOCOLS; i++)
		if (!strcmp(name, pn_protocol_names[i]))
			return i;
	return -1;
}

void pn_stop_rule_add(pn_stop_rule *r, double x, double s)
{
	if (!(x > 0) || r->n == PN_PROTOCOL_MAX_THRESHOLDS)
		return;
	r->x[r->n] = x;
	r->spread[r->n++] = s > 0 ? s : 0;
}

/* Median and IQR of t[0..n) as the profiler stores them (profile.c);
 * -1 when out of memory. */
static int median_iqr(const double *t, int n, double *m, double *q)
{
	double *s = malloc(sizeof(double) * (size_t)n);
	if (!s)
		return -1;
	memcpy(s, t, sizeof(double) * (size_t)n);
	*m = pn_median(s, (size_t)n);
	*q = pn_quantile_weighted(s, n, 0.75) - pn_quantile_weighted(s, n, 0.25);
	free(s);
	return 0;
}

/* Before the floor: whether the median of t[0..n) is further than far +
 * spread from each of r's thresholds, and r has one (a rule with none
 * has nothing to be far from, and keeps its floor). */
static int far_from_all(const double *t, int n, const pn_stop_rule *r)
{
	double m, q;
	if (n < 1 || r->n == 0 || median_iqr(t, n, &m, &q) || !(m > 0))
		return 0;
	for (int i = 0; i < r->n; i++)
		if (fabs(m / r->x[i] - 1) <= r->far + r->spread[i])
			return 0;
	return 1;
}

int pn_trials_enough(const double *t, int n, const pn_stop_rule *r)
{
	if (n >= r->max_trials)
		return 1;
	PN_ASSERT(r->min_trials >= 1);
	double m, q;
	if (n < r->min_trials)
		return r->far > 0 && far_from_all(t, n, r);
	if (median_iqr(t, n, &m, &q))
		return 0;
	if (!(m > 0) || q / m > PN_UNSTABLE_IQR)
		return 0;
	for (int i = 0; i < r->n; i++) {
		double band = fmax(PN_PROTOCOL_NEAR, q / m + r->spread[i]);
		if (fabs(m / r->x[i] - 1) <= band)
			return 0;
	}
	return 1;
}

void pn_protocol_text(int protocol, int warmups, int trials, char *buf, size_t cap)
{
	if (protocol == PN_PROTOCOL_FULL)
		snprintf(buf, cap, "protocol full: %d warm-ups, 1 sizing run, %d trials", warmups,
			 trials);
	else
		snprintf(buf, cap,
			 "protocol adaptive: 1 sizing warm-up, %d..%d trials, until iqr <= %g x median "
			 "and every threshold is further than max(%g, iqr/median) from it; "
			 "on 1 thread, 1 trial %g from the threshold",
			 trials < PN_PROTOCOL_MIN_TRIALS ? trials : PN_PROTOCOL_MIN_TRIALS, trials,
			 PN_UNSTABLE_IQR, PN_PROTOCOL_NEAR, PN_PROTOCOL_FAR);
}
