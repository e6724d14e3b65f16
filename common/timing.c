/* timing.c - median, quantiles, IQR and minimum of timed trials (see
 * timing.h). */
#include <math.h>
#include <stdlib.h>

#include "common/timing.h"

int pn_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double pn_median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof *v, pn_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double pn_quantile(const double *x, int n, double q)
{
	double pos = q * (n - 1);
	int lo = (int)floor(pos);
	int hi = lo + 1 < n ? lo + 1 : lo;
	return x[lo] + (pos - lo) * (x[hi] - x[lo]);
}

double pn_quantile_weighted(const double *x, int n, double q)
{
	double pos = q * (n - 1);
	int lo = (int)pos;
	double f = pos - lo;
	return lo + 1 < n ? x[lo] * (1 - f) + x[lo + 1] * f : x[lo];
}

pn_time_summary pn_summarise_times(double *t, int n)
{
	qsort(t, (size_t)n, sizeof *t, pn_cmp_double);
	pn_time_summary s = {
		.median = pn_quantile(t, n, 0.5),
		.iqr = pn_quantile(t, n, 0.75) - pn_quantile(t, n, 0.25),
		.min = t[0],
	};
	return s;
}
