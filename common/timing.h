/*
 * timing.h - the order statistics every timing in passnet reports: median,
 * quantiles, IQR and minimum of a set of trials (in whatever unit they were
 * taken).  The summary is shared by `passnet time` and the ONNX Runtime
 * harness in bench/ort/, so that both sides of a comparison are summarised
 * the same way; the profiler, calibration, `check` and the report take
 * their medians here too.
 */
#ifndef PN_TIMING_H
#define PN_TIMING_H

#include <stddef.h>

/* qsort order of doubles, ascending (a NaN compares equal to anything). */
int pn_cmp_double(const void *a, const void *b);

/* Sorts v[0..n) in place and returns its median: the middle value, or for
 * an even n the mean of the middle two, computed as (a + b) / 2.  NaN when
 * n is 0. */
double pn_median(double *v, size_t n);

/* The q-quantile of sorted x[0..n) (n >= 1), interpolated linearly between
 * the order statistics around q (n - 1) (numpy's default), computed as
 * x[lo] + f (x[hi] - x[lo]). */
double pn_quantile(const double *x, int n, double q);
/* The same quantile computed as x[lo] (1 - f) + x[hi] f.  Equal in exact
 * arithmetic, the two round differently in the last bit when f is not 0;
 * the profiler's stored IQRs have always been computed this way, so it
 * keeps doing so.  At q = 0.5 it gives pn_median's value for any finite
 * values whose sum does not overflow: x * 0.5 is exact there and halving
 * commutes with rounding (down to the subnormals, far below any time). */
double pn_quantile_weighted(const double *x, int n, double q);

typedef struct pn_time_summary {
	double median, iqr, min;
} pn_time_summary;

/* Sorts t[0..n) (n >= 1) in place and summarises it with pn_quantile, so
 * that the IQR of few trials is not all-or-nothing.  Its median (for an
 * even n, x[lo] + 0.5 (x[hi] - x[lo])) can differ from pn_median's in the
 * last bit. */
pn_time_summary pn_summarise_times(double *t, int n);

#endif
