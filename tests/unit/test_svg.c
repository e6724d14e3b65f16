/*
 * test_svg.c - the report's plotting helpers: escaping, log-scale bins
 * (edges, exact powers of ten, values that cannot be binned), tick labels
 * and steps, and what the SVG writers put on the page (points on one pixel
 * drawn once but counted, "no data" when empty, shares of bars, the
 * diagonal-only scatter of ORT against ORT).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/svg.h"

/* Output of the writers is captured in memory. */
typedef struct capture {
	char *buf;
	size_t len;
	FILE *f;
} capture;

static FILE *cap_open(capture *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	assert_non_null(c->f);
	return c->f;
}

static const char *cap_text(capture *c)
{
	fclose(c->f);
	return c->buf;
}

static int count_of(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void test_escape(void **state)
{
	(void)state;
	capture c;
	pn_html_escape(cap_open(&c), "<a href=\"x\">&'\x01 \xc2\xb5s");
	assert_string_equal(cap_text(&c), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&#xfffd; \xc2\xb5s");
	free(c.buf);
	pn_html_escape(cap_open(&c), NULL);
	assert_string_equal(cap_text(&c), "");
	free(c.buf);
}

static void test_loghist_decades(void **state)
{
	(void)state;
	double v[] = {1, 9.99, 10, 100, 0, -3, NAN, INFINITY};
	pn_loghist h;
	assert_int_equal(pn_loghist_build(&h, v, 8, 1), 0);
	/* 1 .. 100 spans two decades; 100 closes the last bin */
	assert_int_equal(h.lo_exp, 0);
	assert_int_equal(h.n, 2);
	assert_int_equal(h.total, 4);
	assert_int_equal(h.counts[0], 2);
	assert_int_equal(h.counts[1], 2);
	assert_true(fabs(pn_loghist_edge(&h, 0) - 1) < 1e-12);
	assert_true(fabs(pn_loghist_edge(&h, 2) - 100) < 1e-9);
	pn_loghist_free(&h);
}

static void test_loghist_edges(void **state)
{
	(void)state;
	double v[] = {0.001, 0.5, 3};
	pn_loghist h;
	assert_int_equal(pn_loghist_build(&h, v, 3, 4), 0);
	assert_int_equal(h.lo_exp, -3);
	assert_int_equal(h.n, 16);
	/* an edge belongs to the bin it starts */
	for (int i = 0; i < h.n; i++)
		assert_int_equal(pn_loghist_bin(&h, pn_loghist_edge(&h, i)), i);
	assert_int_equal(pn_loghist_bin(&h, 1e-9), 0);
	assert_int_equal(pn_loghist_bin(&h, 1e9), h.n - 1);
	pn_loghist_free(&h);
	/* one value, or equal values: still one whole decade */
	double same[] = {5, 5};
	assert_int_equal(pn_loghist_build(&h, same, 2, 3), 0);
	assert_int_equal(h.lo_exp, 0);
	assert_int_equal(h.n, 3);
	assert_int_equal(h.counts[2], 2);
	pn_loghist_free(&h);
	double none[] = {0, -1};
	assert_int_equal(pn_loghist_build(&h, none, 2, 4), 0);
	assert_int_equal(h.n, 0);
	assert_int_equal(h.total, 0);
	pn_loghist_free(&h);
}

static void test_ticks(void **state)
{
	(void)state;
	char b[24];
	assert_string_equal(pn_fmt_pow10(0, b, sizeof b), "1");
	assert_string_equal(pn_fmt_pow10(3, b, sizeof b), "1k");
	assert_string_equal(pn_fmt_pow10(6, b, sizeof b), "1M");
	assert_string_equal(pn_fmt_pow10(-2, b, sizeof b), "0.01");
	assert_string_equal(pn_fmt_pow10(-5, b, sizeof b), "1e-5");
	assert_string_equal(pn_fmt_pow10(9, b, sizeof b), "1e9");
	assert_true(pn_nice_step(3, 5) == 1);
	assert_true(pn_nice_step(47, 5) == 10);
	assert_true(pn_nice_step(120, 5) == 50);
	assert_true(pn_nice_step(1000, 5) == 200);
	assert_true(pn_nice_step(0, 5) == 1);
}

static const pn_plot frame = {.id = "p", .title = "t <&>", .xlabel = "x", .ylabel = "y",
			      .w = 400, .h = 300, .ml = 40, .mr = 100, .mt = 10, .mb = 40};

static void test_scatter(void **state)
{
	(void)state;
	enum { N = 1000 };
	pn_point *pts = calloc(N + 2, sizeof(*pts));
	for (int i = 0; i < N; i++)
		pts[i] = (pn_point){10, 200, 0};
	pts[N] = (pn_point){1, 1000, 1};
	pts[N + 1] = (pn_point){-1, 5, 1};   /* not on a log axis: left out */
	const char *cls[] = {"ok", "slow"};
	capture c;
	pn_svg_scatter(cap_open(&c), &frame, pts, N + 2, cls, 2);
	const char *s = cap_text(&c);
	/* two distinct pixels and two legend marks */
	assert_int_equal(count_of(s, "<circle"), 4);
	assert_non_null(strstr(s, "ok (1000)"));
	assert_non_null(strstr(s, "slow (1)"));
	assert_non_null(strstr(s, "y = x"));
	assert_non_null(strstr(s, "<title>t &lt;&amp;&gt;</title>"));
	assert_null(strstr(s, "no data"));
	free(c.buf);
	pn_svg_scatter(cap_open(&c), &frame, pts, 0, cls, 2);
	s = cap_text(&c);
	assert_non_null(strstr(s, "no data"));
	assert_int_equal(count_of(s, "<circle"), 0);
	free(c.buf);
	free(pts);
}

/* The ORT scatter: only the labelled y = x line, no 10x/100x guides, and a
 * point above it (a regression) counted in its own class. */
static void test_scatter_diagonal(void **state)
{
	(void)state;
	pn_point pts[] = {{10, 8, 0}, {100, 90, 0}, {5, 20, 1}};
	const char *cls[] = {"no regression", "compiler regression"};
	capture c;
	pn_svg_scatter_diagonal(cap_open(&c), &frame, pts, 3, cls, 2, "ALL = disabled");
	const char *s = cap_text(&c);
	assert_non_null(strstr(s, "ALL = disabled"));
	assert_null(strstr(s, "y = x"));
	assert_null(strstr(s, "10x"));
	assert_null(strstr(s, "stroke-dasharray"));
	assert_non_null(strstr(s, "no regression (2)"));
	assert_non_null(strstr(s, "compiler regression (1)"));
	assert_int_equal(count_of(s, "<circle"), 3 + 2);
	free(c.buf);
}

static void test_bars_and_hist(void **state)
{
	(void)state;
	const char *labels[] = {"slow", "a<b"};
	int64_t counts[] = {3, 0};
	capture c;
	pn_svg_bars(cap_open(&c), &frame, labels, counts, 2, 6);
	const char *s = cap_text(&c);
	assert_non_null(strstr(s, "3 (50.0%)"));
	assert_non_null(strstr(s, "0 (0.0%)"));
	assert_non_null(strstr(s, "a&lt;b"));
	assert_int_equal(count_of(s, "class=\"bar\""), 2);
	free(c.buf);

	double v[] = {0.5, 2, 2, 30};
	pn_loghist h;
	assert_int_equal(pn_loghist_build(&h, v, 4, 2), 0);
	pn_svg_loghist(cap_open(&c), &frame, &h, 1, "time = bound");
	s = cap_text(&c);
	/* one rect per non-empty bin, each with its count */
	assert_int_equal(count_of(s, "class=\"bar\""), 3);
	assert_non_null(strstr(s, ">2</text>"));
	assert_non_null(strstr(s, "time = bound"));
	assert_non_null(strstr(s, ">0.1</text>"));
	assert_non_null(strstr(s, ">100</text>"));
	free(c.buf);
	pn_loghist_free(&h);
	pn_svg_loghist(cap_open(&c), &frame, &h, 1, "time = bound");
	s = cap_text(&c);
	assert_non_null(strstr(s, "no data"));
	free(c.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_loghist_decades),
		cmocka_unit_test(test_loghist_edges),
		cmocka_unit_test(test_ticks),
		cmocka_unit_test(test_scatter),
		cmocka_unit_test(test_scatter_diagonal),
		cmocka_unit_test(test_bars_and_hist),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
