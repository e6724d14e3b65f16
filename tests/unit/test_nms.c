/*
 * test_nms.c - NonMaxSuppression on thousands of boxes (the vector path
 * compares 16 kept boxes a step) against a plain greedy loop written here
 * from the operator's definition: the same selected rows, in order, with
 * degenerate, flipped and NaN boxes among them, and kept-box counts that
 * leave every remainder of 16.
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

#include "common/err.h"
#include "runtime/session.h"
#include "schemas/ops.h"

/* A deterministic stream of floats in [0, 1). */
static float next(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (float)(*s >> 40) / (float)(1 << 24);
}

/* Boxes as (y0, x0, y1, x1) clustered in a small field, so that many
 * overlap; every 97th degenerate, every 89th flipped, every 211th NaN. */
static pn_tensor *make_boxes(int64_t S, uint64_t seed)
{
	int64_t dims[3] = {1, S, 4};
	pn_tensor *t = pn_tensor_new(PN_FLOAT, 3, dims);
	float *b = t->data;
	for (int64_t i = 0; i < S; i++) {
		float y = next(&seed) * 40, x = next(&seed) * 40;
		float h = 1 + next(&seed) * 6, w = 1 + next(&seed) * 6;
		float *o = b + i * 4;
		o[0] = y;
		o[1] = x;
		o[2] = i % 97 == 0 ? y : y + h;
		o[3] = x + w;
		if (i % 89 == 0) {
			float tmp = o[0];
			o[0] = o[2];
			o[2] = tmp;
		}
		if (i % 211 == 0)
			o[1] = NAN;
	}
	return t;
}

static pn_tensor *make_scores(int64_t C, int64_t S, uint64_t seed)
{
	int64_t dims[3] = {1, C, S};
	pn_tensor *t = pn_tensor_new(PN_FLOAT, 3, dims);
	float *sc = t->data;
	for (int64_t i = 0; i < C * S; i++)
		sc[i] = (float)(int)(next(&seed) * 4096) / 4096;    /* ties happen */
	return t;
}

static pn_tensor *scalar_f(float v)
{
	int64_t one = 1;
	pn_tensor *t = pn_tensor_new(PN_FLOAT, 1, &one);
	((float *)t->data)[0] = v;
	return t;
}

static pn_tensor *scalar_i(int64_t v)
{
	int64_t one = 1;
	pn_tensor *t = pn_tensor_new(PN_INT64, 1, &one);
	((int64_t *)t->data)[0] = v;
	return t;
}

/* The reference: per class, candidates above the score threshold by
 * descending score (lower index first on ties), each kept unless its IoU
 * with a kept box exceeds iou; boxes without area neither suppress nor are
 * suppressed.  Returns the number of box indices written to out. */
static int64_t reference(const float *b, const float *sc, int64_t S, float iou, float thr,
			 int64_t max_out, int64_t *out)
{
	int64_t *order = malloc(sizeof(int64_t) * (size_t)S), *kept = malloc(sizeof(int64_t) * (size_t)S);
	int64_t n = 0, nk = 0;
	for (int64_t i = 0; i < S; i++)
		if (sc[i] > thr)
			order[n++] = i;
	for (int64_t i = 1; i < n; i++)    /* insertion sort: stable, so ties keep index order */
		for (int64_t j = i; j > 0 && sc[order[j]] > sc[order[j - 1]]; j--) {
			int64_t t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (int64_t i = 0; i < n && nk < max_out; i++) {
		const float *p = b + order[i] * 4;
		float py0 = p[0] < p[2] ? p[0] : p[2], py1 = p[0] < p[2] ? p[2] : p[0];
		float px0 = p[1] < p[3] ? p[1] : p[3], px1 = p[1] < p[3] ? p[3] : p[1];
		float pa = (py1 - py0) * (px1 - px0);
		int drop = 0;
		for (int64_t k = 0; pa > 0 && k < nk && !drop; k++) {
			const float *q = b + kept[k] * 4;
			float qy0 = q[0] < q[2] ? q[0] : q[2], qy1 = q[0] < q[2] ? q[2] : q[0];
			float qx0 = q[1] < q[3] ? q[1] : q[3], qx1 = q[1] < q[3] ? q[3] : q[1];
			float qa = (qy1 - qy0) * (qx1 - qx0);
			float ih = (py1 < qy1 ? py1 : qy1) - (py0 > qy0 ? py0 : qy0);
			float iw = (px1 < qx1 ? px1 : qx1) - (px0 > qx0 ? px0 : qx0);
			if (ih <= 0 || iw <= 0 || qa <= 0)
				continue;
			float inter = ih * iw;
			drop = inter / (pa + qa - inter) > iou;
		}
		if (!drop)
			out[nk] = kept[nk] = order[i], nk++;
	}
	free(order);
	free(kept);
	return nk;
}

static void check(int64_t S, int64_t C, float iou, float thr, int64_t max_out, uint64_t seed)
{
	pn_tensor *boxes = make_boxes(S, seed), *scores = make_scores(C, S, seed + 1);
	pn_tensor *mo = scalar_i(max_out), *it = scalar_f(iou), *st = scalar_f(thr);
	int32_t idx[6] = {0, 1, 2, 3, 4, 5};
	pn_node n = {.name = "nms", .op_type = "NonMaxSuppression", .domain = "",
		     .op = PN_OP_NonMaxSuppression, .opset = 11, .n_in = 5, .n_out = 1,
		     .in = idx, .out = idx + 5};
	pn_tensor *in[5] = {boxes, scores, mo, it, st}, *y[1] = {NULL};
	char err[PN_ERRLEN] = "";
	int rc = pn_exec_node(&n, in, 5, y, 0, err);
	if (rc)
		fprintf(stderr, "nms: %s\n", err);
	assert_int_equal(rc, 0);
	const int64_t *sel = y[0]->data;
	int64_t *want = malloc(sizeof(int64_t) * (size_t)S), row = 0, kept_most = 0;
	for (int64_t c = 0; c < C; c++) {
		int64_t nk = reference(boxes->data, (const float *)scores->data + c * S, S, iou, thr,
				       max_out, want);
		kept_most = nk > kept_most ? nk : kept_most;
		for (int64_t k = 0; k < nk; k++, row++) {
			assert_true(row < y[0]->dims[0]);
			assert_int_equal(sel[row * 3], 0);
			assert_int_equal(sel[row * 3 + 1], c);
			assert_int_equal(sel[row * 3 + 2], want[k]);
		}
	}
	assert_int_equal(y[0]->dims[0], row);
	/* enough kept boxes that the vector path's blocks and remainders ran */
	assert_true(max_out < 40 || kept_most > 40);
	free(want);
	pn_tensor_free(y[0]);
	pn_tensor_free(boxes);
	pn_tensor_free(scores);
	pn_tensor_free(mo);
	pn_tensor_free(it);
	pn_tensor_free(st);
}

/* 1: many boxes, two classes, a loose threshold: hundreds kept. */
static void test_many_boxes(void **state)
{
	(void)state;
	check(3000, 2, 0.5f, 0.1f, 3000, 7);
}

/* 2: a tight IoU threshold and every score: most boxes suppressed. */
static void test_tight_threshold(void **state)
{
	(void)state;
	check(2000, 1, 0.05f, -1.0f, 2000, 11);
}

/* 3: max_output_boxes_per_class cuts the selection at every count up to
 * past a vector. */
static void test_max_out(void **state)
{
	(void)state;
	for (int64_t m = 1; m <= 35; m++)
		check(500, 1, 0.6f, 0.0f, m, 100 + (uint64_t)m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many_boxes),
		cmocka_unit_test(test_tight_threshold),
		cmocka_unit_test(test_max_out),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
