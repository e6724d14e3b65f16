/*
 * timing.h - the summary every timing in passnet reports: median, IQR and
 * minimum of a set of trials (in whatever unit they were taken).  Shared by
 * `passnet time` and the ONNX Runtime harness in bench/ort/, so that both
 * sides of a comparison are summarised the same way.
 */
#ifndef PN_TIMING_H
#define PN_TIMING_H

typedef struct pn_time_summary {
	double median, iqr, min;
} pn_time_summary;

/* Sorts t[0..n) (n >= 1) in place and summarises it.  Quantiles interpolate
 * linearly between order statistics (numpy's default), so the median of an
 * even count is the mean of the middle two and the IQR of few trials is not
 * all-or-nothing. */
pn_time_summary pn_summarise_times(double *t, int n);

#endif
