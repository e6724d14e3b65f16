/*
 * nms.c - NonMaxSuppression: greedy per (batch, class) selection of boxes
 * by descending score, dropping boxes whose IoU with an already selected one
 * exceeds the threshold.  The output row count depends on the data, so the
 * kernel allocates it.
 */
#include <stdlib.h>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "runtime/infer.h"
#include "runtime/kernel.h"

int pn_infer_NonMaxSuppression(pn_ictx *c)
{
	pn_iset(c, 0, PN_INT64, 2, (int64_t[]){-1, 3});
	return 0;
}

typedef struct cand {
	float score;
	int64_t index;
} cand;

/* Higher score first; equal scores keep the lower box index first. */
static int cand_cmp(const void *a, const void *b)
{
	const cand *x = a, *y = b;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

/* Box as (ymin, xmin, ymax, xmax), whichever corners or centre form it came in. */
static void corners(const float *b, int center, float *o)
{
	if (center) {
		o[0] = b[1] - b[3] / 2;
		o[1] = b[0] - b[2] / 2;
		o[2] = b[1] + b[3] / 2;
		o[3] = b[0] + b[2] / 2;
		return;
	}
	o[0] = b[0] < b[2] ? b[0] : b[2];
	o[1] = b[1] < b[3] ? b[1] : b[3];
	o[2] = b[0] < b[2] ? b[2] : b[0];
	o[3] = b[1] < b[3] ? b[3] : b[1];
}

/* The boxes of one batch as corners and areas, computed once: a detector's
 * batched NMS keeps thousands of boxes of random scores, and the greedy
 * loop below compares each candidate with every box kept so far. */
typedef struct corner_boxes {
	float *y0, *x0, *y1, *x1, *area;
} corner_boxes;

static void corner_boxes_fill(corner_boxes *cb, const float *boxes, int64_t n, int center)
{
	for (int64_t i = 0; i < n; i++) {
		float o[4];
		corners(boxes + i * 4, center, o);
		cb->y0[i] = o[0];
		cb->x0[i] = o[1];
		cb->y1[i] = o[2];
		cb->x1[i] = o[3];
		cb->area[i] = (o[2] - o[0]) * (o[3] - o[1]);
	}
}

/* The kept boxes' corners and areas, in the order kept. */
typedef struct kept_boxes {
	float *y0, *x0, *y1, *x1, *area;
	int64_t n;
} kept_boxes;

/* Whether the box (y0, x0, y1, x1, area) has IoU > threshold with kept box
 * j; a degenerate kept box (no area) never suppresses. */
static inline int overlaps(const kept_boxes *kb, int64_t j, float y0, float x0, float y1, float x1,
			   float area, float threshold)
{
	float ih = (y1 < kb->y1[j] ? y1 : kb->y1[j]) - (y0 > kb->y0[j] ? y0 : kb->y0[j]);
	float iw = (x1 < kb->x1[j] ? x1 : kb->x1[j]) - (x0 > kb->x0[j] ? x0 : kb->x0[j]);
	if (ih <= 0 || iw <= 0 || kb->area[j] <= 0)
		return 0;
	float inter = ih * iw;
	return inter / (area + kb->area[j] - inter) > threshold;
}

#if defined(__AVX512F__)
/* overlaps() for kept boxes j0.. (16 lanes, the first n): the same float
 * operations lane by lane (min and max pick as its comparisons do, NaN
 * comparisons false as there), any lane's answer. */
static inline int overlaps16(const kept_boxes *kb, int64_t j0, int64_t n, float y0, float x0,
			     float y1, float x1, float area, float threshold)
{
	const __mmask16 m = n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1);
	__m512 ky0 = _mm512_maskz_loadu_ps(m, kb->y0 + j0), kx0 = _mm512_maskz_loadu_ps(m, kb->x0 + j0);
	__m512 ky1 = _mm512_maskz_loadu_ps(m, kb->y1 + j0), kx1 = _mm512_maskz_loadu_ps(m, kb->x1 + j0);
	__m512 ka = _mm512_maskz_loadu_ps(m, kb->area + j0);
	__m512 ih = _mm512_sub_ps(_mm512_min_ps(_mm512_set1_ps(y1), ky1),
				  _mm512_max_ps(_mm512_set1_ps(y0), ky0));
	__m512 iw = _mm512_sub_ps(_mm512_min_ps(_mm512_set1_ps(x1), kx1),
				  _mm512_max_ps(_mm512_set1_ps(x0), kx0));
	const __m512 zero = _mm512_setzero_ps();
	__mmask16 live = _mm512_mask_cmp_ps_mask(m, ih, zero, _CMP_NLE_UQ);
	live = _mm512_mask_cmp_ps_mask(live, iw, zero, _CMP_NLE_UQ);
	live = _mm512_mask_cmp_ps_mask(live, ka, zero, _CMP_NLE_UQ);
	__m512 inter = _mm512_mul_ps(ih, iw);
	__m512 iou = _mm512_div_ps(inter, _mm512_sub_ps(_mm512_add_ps(_mm512_set1_ps(area), ka), inter));
	return _mm512_mask_cmp_ps_mask(live, iou, _mm512_set1_ps(threshold), _CMP_GT_OQ) != 0;
}
#endif

/* Whether box i of cb has IoU > threshold with a kept box; degenerate boxes
 * (no area) never suppress nor are suppressed.  A detector's batched NMS
 * keeps thousands of boxes: with AVX-512 16 kept boxes a step. */
static int suppressed(const corner_boxes *cb, int64_t i, const kept_boxes *kb, float threshold)
{
	float y0 = cb->y0[i], x0 = cb->x0[i], y1 = cb->y1[i], x1 = cb->x1[i], area = cb->area[i];
	if (area <= 0)
		return 0;
	int64_t j = 0;
#if defined(__AVX512F__)
	for (; j < kb->n; j += 16)
		if (overlaps16(kb, j, kb->n - j, y0, x0, y1, x1, area, threshold))
			return 1;
#endif
	for (; j < kb->n; j++)
		if (overlaps(kb, j, y0, x0, y1, x1, area, threshold))
			return 1;
	return 0;
}

static void keep_box(kept_boxes *kb, const corner_boxes *cb, int64_t i)
{
	int64_t j = kb->n++;
	kb->y0[j] = cb->y0[i];
	kb->x0[j] = cb->x0[i];
	kb->y1[j] = cb->y1[i];
	kb->x1[j] = cb->x1[i];
	kb->area[j] = cb->area[i];
}

static float *as_f32(const pn_tensor *t)
{
	float *f = malloc(sizeof(float) * (size_t)(t->numel + 1));
	for (int64_t i = 0; f && i < t->numel; i++)
		f[i] = (float)pn_tensor_get_f64(t, i);
	return f;
}

typedef struct nms_args {
	int64_t B, C, S, max_out;
	float iou, score_thr;
	int has_score_thr, center;
} nms_args;

/* Selects the boxes of one (batch, class) of cb (batch b's boxes); appends
 * [b, c, box] rows to sel. */
static int64_t select_class(const nms_args *a, const corner_boxes *cb, const float *scores,
			    int64_t b, int64_t c, cand *cands, kept_boxes *kb, int64_t *sel,
			    int64_t n_sel)
{
	const float *sc = scores + (b * a->C + c) * a->S;
	int64_t n = 0;
	for (int64_t i = 0; i < a->S; i++)
		if (!a->has_score_thr || sc[i] > a->score_thr)
			cands[n++] = (cand){sc[i], i};
	qsort(cands, (size_t)n, sizeof(*cands), cand_cmp);
	kb->n = 0;
	for (int64_t i = 0; i < n && kb->n < a->max_out; i++) {
		if (suppressed(cb, cands[i].index, kb, a->iou))
			continue;
		keep_box(kb, cb, cands[i].index);
		sel[n_sel * 3] = b;
		sel[n_sel * 3 + 1] = c;
		sel[n_sel * 3 + 2] = cands[i].index;
		n_sel++;
	}
	return n_sel;
}

int pn_kernel_NonMaxSuppression(pn_kctx *k)
{
	const pn_tensor *bt = pn_kin(k, 0), *st = pn_kin(k, 1);
	const pn_tensor *mo = pn_kin(k, 2), *iou = pn_kin(k, 3), *thr = pn_kin(k, 4);
	if (!bt || !st || bt->rank != 3 || bt->dims[2] != 4 || st->rank != 3 ||
	    st->dims[0] != bt->dims[0] || st->dims[2] != bt->dims[1])
		return pn_kfail(k, "boxes must be [B, S, 4] and scores [B, C, S]");
	nms_args a = {.B = bt->dims[0], .C = st->dims[1], .S = bt->dims[1]};
	a.max_out = mo && mo->numel ? pn_tensor_get_i64(mo, 0) : 0;
	a.iou = iou && iou->numel ? (float)pn_tensor_get_f64(iou, 0) : 0.0f;
	a.has_score_thr = thr && thr->numel;
	a.score_thr = a.has_score_thr ? (float)pn_tensor_get_f64(thr, 0) : 0.0f;
	a.center = (int)pn_attr_int(k->node, "center_point_box", 0);
	if (a.max_out < 0)
		a.max_out = 0;
	if (a.max_out > a.S)
		a.max_out = a.S;
	if (a.iou < 0 || a.iou > 1)
		return pn_kfail(k, "iou_threshold %g outside [0, 1]", (double)a.iou);
	int64_t cap = a.B * a.C * a.max_out;
	float *boxes = as_f32(bt), *scores = as_f32(st);
	cand *cands = malloc(sizeof(cand) * (size_t)(a.S + 1));
	/* five float arrays of S for the batch's boxes, five for the kept ones */
	float *f = malloc(sizeof(float) * (size_t)(10 * a.S + 1));
	int64_t *sel = malloc(sizeof(int64_t) * (size_t)(3 * cap + 1));
	int rc = (!boxes || !scores || !cands || !f || !sel) ? pn_kfail(k, "out of memory") : 0;
	corner_boxes cb = {0};
	kept_boxes kb = {0};
	if (!rc) {
		cb = (corner_boxes){f, f + a.S, f + 2 * a.S, f + 3 * a.S, f + 4 * a.S};
		kb = (kept_boxes){f + 5 * a.S, f + 6 * a.S, f + 7 * a.S, f + 8 * a.S, f + 9 * a.S, 0};
	}
	int64_t n_sel = 0;
	for (int64_t b = 0; !rc && b < a.B; b++) {
		corner_boxes_fill(&cb, boxes + b * a.S * 4, a.S, a.center);
		for (int64_t c = 0; c < a.C; c++)
			n_sel = select_class(&a, &cb, scores, b, c, cands, &kb, sel, n_sel);
	}
	pn_tensor *y = rc ? NULL : pn_out_alloc(k, 0, PN_INT64, 2, (int64_t[]){n_sel, 3});
	if (!rc && !y)
		rc = -1;
	for (int64_t i = 0; !rc && i < 3 * n_sel; i++)
		((int64_t *)y->data)[i] = sel[i];
	free(boxes);
	free(scores);
	free(cands);
	free(f);
	free(sel);
	return rc;
}
