/*
 * svg.c - inline SVG plots for the HTML report (see svg.h).
 */
#include "report/svg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const palette[] = {"#4c78a8", "#e45756", "#f58518", "#72b7b2", "#54a24b"};
#define N_PALETTE ((int)(sizeof palette / sizeof palette[0]))
#define INK "#333"
#define GRID "#e3e3e3"

void pn_html_escape(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		switch (*p) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			/* A control character is not allowed in XML text (SVG)
			 * and means nothing to a reader. */
			if (*p < 0x20 && *p != '\t' && *p != '\n')
				fputs("&#xfffd;", f);
			else
				fputc(*p, f);
		}
	}
}

/* --- log-scale bins ------------------------------------------------------ */

static int usable(double v)
{
	return v > 0 && isfinite(v);
}

int pn_loghist_build(pn_loghist *h, const double *v, size_t nv, int per_decade)
{
	memset(h, 0, sizeof(*h));
	h->per_decade = per_decade > 0 ? per_decade : 1;
	double lo = INFINITY, hi = 0;
	for (size_t i = 0; i < nv; i++)
		if (usable(v[i])) {
			lo = v[i] < lo ? v[i] : lo;
			hi = v[i] > hi ? v[i] : hi;
		}
	if (hi == 0)
		return 0;
	h->lo_exp = (int)floor(log10(lo));
	int hi_exp = (int)ceil(log10(hi));
	/* log10 of an exact power of ten may land just below the integer:
	 * make sure the extremes are inside. */
	if (pow(10, h->lo_exp) > lo)
		h->lo_exp--;
	if (hi_exp <= h->lo_exp)
		hi_exp = h->lo_exp + 1;
	h->n = (hi_exp - h->lo_exp) * h->per_decade;
	h->counts = calloc((size_t)h->n, sizeof(*h->counts));
	if (!h->counts)
		return -1;
	for (size_t i = 0; i < nv; i++)
		if (usable(v[i])) {
			h->counts[pn_loghist_bin(h, v[i])]++;
			h->total++;
		}
	return 0;
}

void pn_loghist_free(pn_loghist *h)
{
	free(h->counts);
	memset(h, 0, sizeof(*h));
}

double pn_loghist_edge(const pn_loghist *h, int i)
{
	return pow(10, h->lo_exp + (double)i / h->per_decade);
}

int pn_loghist_bin(const pn_loghist *h, double v)
{
	int b = (int)floor((log10(v) - h->lo_exp) * h->per_decade);
	/* Rounding can put a value exactly on an edge one bin low: the edge
	 * belongs to the bin it starts. */
	if (b + 1 < h->n && v >= pn_loghist_edge(h, b + 1))
		b++;
	return b < 0 ? 0 : b >= h->n ? h->n - 1 : b;
}

const char *pn_fmt_pow10(int k, char *buf, size_t cap)
{
	static const char *const big[] = {"1", "10", "100", "1k", "10k", "100k", "1M", "10M", "100M"};
	static const char *const small[] = {"", "0.1", "0.01", "0.001"};
	if (k >= 0 && k < (int)(sizeof big / sizeof big[0]))
		snprintf(buf, cap, "%s", big[k]);
	else if (k < 0 && -k < (int)(sizeof small / sizeof small[0]))
		snprintf(buf, cap, "%s", small[-k]);
	else
		snprintf(buf, cap, "1e%d", k);
	return buf;
}

double pn_nice_step(double max, int target)
{
	if (!(max > 0) || target < 1)
		return 1;
	double raw = max / target;
	double p = pow(10, floor(log10(raw)));
	double m = raw / p;
	double step = m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10;
	step *= p;
	/* counts are integers: no fractional steps */
	return step < 1 ? 1 : step;
}

/* --- frame pieces ---------------------------------------------------------- */

static void svg_open(FILE *f, const pn_plot *p)
{
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"%s\" class=\"plot\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" font-family=\"sans-serif\" "
		"font-size=\"11\" fill=\"" INK "\"><title>",
		p->id, p->w, p->h, p->w, p->h);
	pn_html_escape(f, p->title);
	fputs("</title>\n", f);
}

static void axis_titles(FILE *f, const pn_plot *p)
{
	int pw = p->w - p->ml - p->mr, ph = p->h - p->mt - p->mb;
	if (p->xlabel) {
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"12\">",
			p->ml + pw / 2, p->h - 6);
		pn_html_escape(f, p->xlabel);
		fputs("</text>\n", f);
	}
	if (p->ylabel) {
		int cx = 14, cy = p->mt + ph / 2;
		fprintf(f,
			"<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"12\" "
			"transform=\"rotate(-90 %d %d)\">",
			cx, cy, cx, cy);
		pn_html_escape(f, p->ylabel);
		fputs("</text>\n", f);
	}
}

static void frame(FILE *f, const pn_plot *p)
{
	fprintf(f,
		"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n",
		p->ml, p->mt, p->w - p->ml - p->mr, p->h - p->mt - p->mb);
}

static void no_data(FILE *f, const pn_plot *p)
{
	fprintf(f, "<text class=\"empty\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">no data</text>\n",
		p->ml + (p->w - p->ml - p->mr) / 2, p->mt + (p->h - p->mt - p->mb) / 2);
}

/* --- histogram -------------------------------------------------------------- */

static void hist_y_axis(FILE *f, const pn_plot *p, int64_t max)
{
	int ph = p->h - p->mt - p->mb;
	double step = pn_nice_step((double)max, 5);
	for (double v = 0; v <= (double)max + 1e-9; v += step) {
		double y = p->mt + ph - v / (double)max * ph;
		fprintf(f,
			"<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"" GRID "\"/>"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.0f</text>\n",
			p->ml, y, p->w - p->mr, y, p->ml - 5, y + 4, v);
	}
}

static void hist_x_axis(FILE *f, const pn_plot *p, const pn_loghist *h, double bw)
{
	int base = p->h - p->mb;
	for (int i = 0; i <= h->n; i += h->per_decade) {
		char lab[24];
		double x = p->ml + i * bw;
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"" INK "\"/>"
			"<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
			x, base, x, base + 5, x, base + 17,
			pn_fmt_pow10(h->lo_exp + i / h->per_decade, lab, sizeof lab));
	}
}

static void hist_mark(FILE *f, const pn_plot *p, const pn_loghist *h, double bw, double mark,
		      const char *label)
{
	double lo = pn_loghist_edge(h, 0), hi = pn_loghist_edge(h, h->n);
	if (!(mark > 0) || mark < lo || mark > hi)
		return;
	double x = p->ml + (log10(mark) - h->lo_exp) * h->per_decade * bw;
	fprintf(f,
		"<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"" INK "\" "
		"stroke-dasharray=\"4 3\"/><text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">",
		x, p->mt - 16, x, p->h - p->mb, x, p->mt - 20);
	pn_html_escape(f, label);
	fputs("</text>\n", f);
}

void pn_svg_loghist(FILE *f, const pn_plot *p, const pn_loghist *h, double mark,
		    const char *mark_label)
{
	svg_open(f, p);
	int64_t max = 0;
	for (int i = 0; i < h->n; i++)
		max = h->counts[i] > max ? h->counts[i] : max;
	if (!max) {
		frame(f, p);
		no_data(f, p);
	} else {
		int ph = p->h - p->mt - p->mb;
		double bw = (double)(p->w - p->ml - p->mr) / h->n;
		hist_y_axis(f, p, max);
		for (int i = 0; i < h->n; i++) {
			if (!h->counts[i])
				continue;
			double bh = (double)h->counts[i] / (double)max * ph;
			double x = p->ml + i * bw, y = p->mt + ph - bh;
			fprintf(f,
				"<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
				"height=\"%.1f\" fill=\"%s\"><title>%.3g to %.3g: %lld</title></rect>"
				"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\">"
				"%lld</text>\n",
				x + 1, y, bw - 2, bh, palette[0], pn_loghist_edge(h, i),
				pn_loghist_edge(h, i + 1), (long long)h->counts[i], x + bw / 2, y - 3,
				(long long)h->counts[i]);
		}
		frame(f, p);
		hist_x_axis(f, p, h, bw);
		hist_mark(f, p, h, bw, mark, mark_label);
	}
	axis_titles(f, p);
	fputs("</svg>\n", f);
}

/* --- bars ------------------------------------------------------------------- */

void pn_svg_bars(FILE *f, const pn_plot *p, const char *const *labels, const int64_t *counts,
		 int n, int64_t total)
{
	svg_open(f, p);
	int pw = p->w - p->ml - p->mr, ph = p->h - p->mt - p->mb;
	double row = n ? (double)ph / n : ph;
	for (int i = 0; i < n; i++) {
		double y = p->mt + i * row;
		double share = total > 0 ? (double)counts[i] / (double)total : 0;
		double bw = share * (pw - 90);   /* room for the figure after it */
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", p->ml - 6,
			y + row / 2 + 4);
		pn_html_escape(f, labels[i]);
		fprintf(f,
			"</text><rect class=\"bar\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" "
			"height=\"%.1f\" fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">%lld (%.1f%%)</text>\n",
			p->ml, y + row * 0.15, bw, row * 0.7, palette[i % N_PALETTE], p->ml + bw + 5,
			y + row / 2 + 4, (long long)counts[i], 100 * share);
	}
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"" INK "\"/>\n", p->ml,
		p->mt, p->ml, p->mt + ph);
	axis_titles(f, p);
	fputs("</svg>\n", f);
}

/* --- scatter ---------------------------------------------------------------- */

typedef struct pix {
	int x, y, cls;
} pix;

static int cmp_pix(const void *a, const void *b)
{
	const pix *p = a, *q = b;
	if (p->cls != q->cls)
		return p->cls - q->cls;
	if (p->y != q->y)
		return p->y - q->y;
	return p->x - q->x;
}

typedef struct logaxes {
	int lo, hi;          /* decades */
	double x0, y0, scale; /* pixel of 10^lo on each axis, pixels per decade */
} logaxes;

static double ax_x(const logaxes *a, double v)
{
	return a->x0 + (log10(v) - a->lo) * a->scale;
}

static double ax_y(const logaxes *a, double v)
{
	return a->y0 - (log10(v) - a->lo) * a->scale;
}

static void scatter_grid(FILE *f, const pn_plot *p, const logaxes *a)
{
	for (int k = a->lo; k <= a->hi; k++) {
		char lab[24];
		double v = pow(10, k), x = ax_x(a, v), y = ax_y(a, v);
		pn_fmt_pow10(k, lab, sizeof lab);
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"" GRID "\"/>"
			"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
			x, p->mt, x, a->y0, x, a->y0 + 16, lab);
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"" GRID "\"/>"
			"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			a->x0, y, a->x0 + (a->hi - a->lo) * a->scale, y, a->x0 - 5, y + 4, lab);
	}
}

/* y = factor * x across the square, labelled at its upper end. */
static void scatter_diagonal(FILE *f, const logaxes *a, int decades_up, const char *dash,
			     const char *label)
{
	int span = a->hi - a->lo - decades_up;
	if (span <= 0)
		return;
	double x1 = a->x0, y1 = a->y0 - decades_up * a->scale;
	double x2 = a->x0 + span * a->scale, y2 = a->y0 - (a->hi - a->lo) * a->scale;
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"" INK "\"%s/>",
		x1, y1, x2, y2, dash);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">", x2 + 3, y2 + 10);
	pn_html_escape(f, label);
	fputs("</text>\n", f);
}

static void scatter_legend(FILE *f, const pn_plot *p, const size_t *per_cls,
			   const char *const *cls_names, int n_cls)
{
	for (int c = 0; c < n_cls; c++) {
		/* below the diagonals' labels at the top right */
		int y = p->mt + 60 + 16 * c, x = p->w - p->mr + 12;
		fprintf(f,
			"<circle cx=\"%d\" cy=\"%d\" r=\"4\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">",
			x, y - 4, palette[c % N_PALETTE], x + 8, y);
		pn_html_escape(f, cls_names[c]);
		fprintf(f, " (%zu)</text>\n", per_cls[c]);
	}
}

static int scatter_range(const pn_point *pts, size_t n, logaxes *a)
{
	double lo = INFINITY, hi = 0;
	for (size_t i = 0; i < n; i++) {
		if (!usable(pts[i].x) || !usable(pts[i].y))
			continue;
		double m = pts[i].x < pts[i].y ? pts[i].x : pts[i].y;
		double M = pts[i].x > pts[i].y ? pts[i].x : pts[i].y;
		lo = m < lo ? m : lo;
		hi = M > hi ? M : hi;
	}
	if (hi == 0)
		return -1;
	a->lo = (int)floor(log10(lo));
	a->hi = (int)ceil(log10(hi));
	if (pow(10, a->lo) > lo)
		a->lo--;
	if (a->hi <= a->lo)
		a->hi = a->lo + 1;
	return 0;
}

static void scatter_points(FILE *f, const logaxes *a, const pn_point *pts, size_t n, int n_cls,
			   size_t *per_cls)
{
	pix *px = malloc(sizeof(*px) * (n ? n : 1));
	size_t np = 0;
	for (size_t i = 0; px && i < n; i++) {
		if (!usable(pts[i].x) || !usable(pts[i].y))
			continue;
		int c = pts[i].cls < 0 ? 0 : pts[i].cls >= n_cls ? n_cls - 1 : pts[i].cls;
		per_cls[c]++;
		px[np++] = (pix){(int)lround(ax_x(a, pts[i].x)), (int)lround(ax_y(a, pts[i].y)), c};
	}
	if (np)
		qsort(px, np, sizeof(*px), cmp_pix);
	/* Later classes are drawn last, on top: put the rare, flagged class
	 * last in cls_names. */
	for (size_t i = 0; i < np; i++) {
		if (i && !cmp_pix(&px[i], &px[i - 1]))
			continue;
		fprintf(f, "<circle cx=\"%d\" cy=\"%d\" r=\"2.5\" fill=\"%s\" fill-opacity=\"0.6\"/>\n",
			px[i].x, px[i].y, palette[px[i].cls % N_PALETTE]);
	}
	free(px);
}

static void scatter_draw(FILE *f, const pn_plot *p, const pn_point *pts, size_t n,
			 const char *const *cls_names, int n_cls, const char *diag_label,
			 int guides)
{
	svg_open(f, p);
	logaxes a;
	if (n_cls < 1 || scatter_range(pts, n, &a)) {
		frame(f, p);
		no_data(f, p);
		axis_titles(f, p);
		fputs("</svg>\n", f);
		return;
	}
	/* One scale for both axes, so y = x is the diagonal of a square. */
	int pw = p->w - p->ml - p->mr, ph = p->h - p->mt - p->mb;
	int side = pw < ph ? pw : ph;
	a.scale = (double)side / (a.hi - a.lo);
	a.x0 = p->ml;
	a.y0 = p->mt + side;
	scatter_grid(f, p, &a);
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n",
		p->ml, p->mt, side, side);
	size_t per_cls[16] = {0};
	if (n_cls > 16)
		n_cls = 16;
	scatter_points(f, &a, pts, n, n_cls, per_cls);
	scatter_diagonal(f, &a, 0, "", diag_label);
	if (guides) {
		scatter_diagonal(f, &a, 1, " stroke-dasharray=\"2 3\"", "10x");
		scatter_diagonal(f, &a, 2, " stroke-dasharray=\"2 3\"", "100x");
	}
	scatter_legend(f, p, per_cls, cls_names, n_cls);
	axis_titles(f, p);
	fputs("</svg>\n", f);
}

void pn_svg_scatter(FILE *f, const pn_plot *p, const pn_point *pts, size_t n,
		    const char *const *cls_names, int n_cls)
{
	scatter_draw(f, p, pts, n, cls_names, n_cls, "y = x", 1);
}

void pn_svg_scatter_diagonal(FILE *f, const pn_plot *p, const pn_point *pts, size_t n,
			     const char *const *cls_names, int n_cls, const char *diag_label)
{
	scatter_draw(f, p, pts, n, cls_names, n_cls, diag_label, 0);
}
