/* timing.c - median, IQR and minimum of timed trials (see timing.h). */
#include <math.h>
#include <stdlib.h>

#include "common/timing.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double quantile(const double *x, int n, double q)
{
	double pos = q * (n - 1);
	int lo = (int)floor(pos);
	int hi = lo + 1 < n ? lo + 1 : lo;
	return x[lo] + (pos - lo) * (x[hi] - x[lo]);
}

pn_time_summary pn_summarise_times(double *t, int n)
{
	qsort(t, (size_t)n, sizeof *t, cmp_double);
	pn_time_summary s = {
		.median = quantile(t, n, 0.5),
		.iqr = quantile(t, n, 0.75) - quantile(t, n, 0.25),
		.min = t[0],
	};
	return s;
}
