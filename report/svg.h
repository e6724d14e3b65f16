/*
 * svg.h - the plots of `passnet report`, drawn as inline SVG: a histogram
 * over log-scale bins, a horizontal bar chart, a log-log scatter.
 *
 * Colours are presentation attributes, not CSS classes, so a plot copied
 * out of the page still looks right.  Coordinates are printed with one
 * decimal and the inputs are sorted where order could show, so the same
 * data gives the same bytes.  All text goes through pn_html_escape.
 */
#ifndef PN_SVG_H
#define PN_SVG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Writes s with &, <, >, " and ' escaped (valid in text and in quoted
 * attributes); control characters become U+FFFD. */
void pn_html_escape(FILE *f, const char *s);

/* Counts over bins of equal width in log10: per_decade bins per factor of
 * ten, from 10^lo_exp to 10^(lo_exp + n / per_decade). */
typedef struct pn_loghist {
	int lo_exp, per_decade, n;
	int64_t *counts;
	int64_t total;      /* values binned (the positive ones) */
} pn_loghist;

/* Bins the positive finite values of v over the whole decades that hold
 * them (at least one).  With none, n = 0. */
int    pn_loghist_build(pn_loghist *h, const double *v, size_t nv, int per_decade);
void   pn_loghist_free(pn_loghist *h);
/* Lower edge of bin i (i = n: upper edge of the last). */
double pn_loghist_edge(const pn_loghist *h, int i);
/* Bin of a positive value, clamped into [0, n). */
int    pn_loghist_bin(const pn_loghist *h, double v);

/* "0.01", "0.1", "1", "10", "1k", "1M", or "1e-5" beyond: tick labels of a
 * log axis. */
const char *pn_fmt_pow10(int k, char *buf, size_t cap);
/* A round step (1, 2 or 5 times a power of ten) giving at most about
 * target ticks from 0 to max. */
double pn_nice_step(double max, int target);

/* One chart's frame: the SVG's size and the margins around the plotting
 * area (for tick labels and axis titles). */
typedef struct pn_plot {
	const char *id;      /* element id: what tests and links look for */
	const char *title;   /* accessible name (<title>) */
	const char *xlabel, *ylabel;
	int w, h;
	int ml, mr, mt, mb;
} pn_plot;

/* Histogram bars with their counts; a dashed vertical line at mark (a value
 * on the x axis, e.g. 1 where time equals the bound) labelled mark_label
 * above the frame (keep 40 px of top margin for it and the counts),
 * if mark > 0 and within range. */
void pn_svg_loghist(FILE *f, const pn_plot *p, const pn_loghist *h, double mark,
		    const char *mark_label);

/* Horizontal bars, one per label, as shares of total ("count (pct%)"). */
void pn_svg_bars(FILE *f, const pn_plot *p, const char *const *labels, const int64_t *counts,
		 int n, int64_t total);

/* A point of the scatter; cls picks its colour and legend entry. */
typedef struct pn_point {
	double x, y;
	int cls;
} pn_point;

/* Log-log scatter of positive points over one shared decade range on both
 * axes, with the y = x line and dotted y = 10x and y = 100x guides.  Points
 * falling on the same pixel are drawn once (the page stays small for any
 * number of points); the legend still counts every point. */
void pn_svg_scatter(FILE *f, const pn_plot *p, const pn_point *pts, size_t n,
		    const char *const *cls_names, int n_cls);

/* The same scatter with only the y = x line, labelled diag_label: for two
 * times of one thing (ORT optimised against unoptimised), where being on
 * either side of the line is what matters. */
void pn_svg_scatter_diagonal(FILE *f, const pn_plot *p, const pn_point *pts, size_t n,
			     const char *const *cls_names, int n_cls, const char *diag_label);

#endif
