/*
 * loss.c - NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
 *
 * Scores are [N, C, d1...] and targets [N, d1...]; both ops reduce to the
 * weighted negative log-likelihood of the target class at every position.
 * Sums run in double, in index order, on one thread (reductions are never
 * split, so the result does not depend on the thread count).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/infer.h"
#include "runtime/kernel.h"

enum { RED_NONE, RED_SUM, RED_MEAN };

static int reduction_of(const pn_node *n, int *red)
{
	const char *s = pn_attr_str(n, "reduction", "mean");
	if (!strcmp(s, "none"))
		*red = RED_NONE;
	else if (!strcmp(s, "sum"))
		*red = RED_SUM;
	else if (!strcmp(s, "mean"))
		*red = RED_MEAN;
	else
		return -1;
	return 0;
}

int pn_infer_Loss(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0), *t = pn_iin(c, 1);
	int red;
	if (!x || !t)
		return pn_ifail(c, "scores and target are required");
	if (reduction_of(c->node, &red))
		return pn_ifail(c, "unknown reduction '%s'", pn_attr_str(c->node, "reduction", ""));
	if (x->type.rank >= 0 && x->type.rank < 2)
		return pn_ifail(c, "scores must have rank >= 2");
	if (red == RED_NONE)
		pn_iset(c, 0, x->type.dtype, t->type.rank, t->type.dims);
	else
		pn_iset(c, 0, x->type.dtype, 0, NULL);
	if (c->n_out > 1)
		pn_iset_like(c, 1, 0, 0);
	return 0;
}

typedef struct loss_geo {
	int64_t N, C, D;   /* scores viewed as [N, C, D] */
} loss_geo;

static int check_shapes(pn_kctx *k, const pn_tensor *x, const pn_tensor *t, const pn_tensor *w,
			loss_geo *g)
{
	if (!pn_dtype_is_float(x->dtype))
		return pn_kfail(k, "scores must be floating point");
	if (x->rank < 2 || t->rank != x->rank - 1 || !pn_dtype_is_int(t->dtype))
		return pn_kfail(k, "target must be integers of rank %d", x->rank - 1);
	if (t->dims[0] != x->dims[0])
		return pn_kfail(k, "target batch %lld, scores batch %lld", (long long)t->dims[0],
				(long long)x->dims[0]);
	for (int d = 2; d < x->rank; d++)
		if (t->dims[d - 1] != x->dims[d])
			return pn_kfail(k, "target dim %d is %lld, scores dim %d is %lld", d - 1,
					(long long)t->dims[d - 1], d, (long long)x->dims[d]);
	g->N = x->dims[0];
	g->C = x->dims[1];
	g->D = g->N && g->C ? x->numel / (g->N * g->C) : 0;
	if (w && (w->rank != 1 || w->dims[0] != g->C))
		return pn_kfail(k, "weights must be [%lld]", (long long)g->C);
	return 0;
}

/* The loss from log-probabilities lp [N, C, D] (double).  Positions whose
 * target is ignore_index count neither in the loss nor in the mean's
 * denominator. */
static int nll(pn_kctx *k, const double *lp, const loss_geo *g, const pn_tensor *t,
	       const pn_tensor *w, pn_tensor *out)
{
	int red;
	if (reduction_of(k->node, &red))
		return pn_kfail(k, "unknown reduction '%s'", pn_attr_str(k->node, "reduction", ""));
	const pn_attr *ia = pn_attr_find(k->node, "ignore_index");
	int64_t ii = ia ? ia->i : 0;
	double sum = 0, wsum = 0;
	for (int64_t n = 0; n < g->N; n++)
		for (int64_t d = 0; d < g->D; d++) {
			int64_t e = n * g->D + d, cls = pn_tensor_get_i64(t, e);
			double l = 0, wt = 0;
			if (!ia || cls != ii) {
				if (cls < 0 || cls >= g->C)
					return pn_kfail(k, "target %lld out of [0, %lld)", (long long)cls,
							(long long)g->C);
				wt = w ? pn_tensor_get_f64(w, cls) : 1.0;
				l = -lp[(n * g->C + cls) * g->D + d] * wt;
			}
			if (red == RED_NONE)
				pn_tensor_set_f64(out, e, l);
			sum += l;
			wsum += wt;
		}
	if (red == RED_SUM)
		pn_tensor_set_f64(out, 0, sum);
	else if (red == RED_MEAN)
		pn_tensor_set_f64(out, 0, sum / wsum);
	return 0;
}

static int alloc_loss(pn_kctx *k, const pn_tensor *x, const pn_tensor *t)
{
	int red;
	if (reduction_of(k->node, &red))
		return pn_kfail(k, "unknown reduction '%s'", pn_attr_str(k->node, "reduction", ""));
	if (red == RED_NONE)
		return pn_out_alloc(k, 0, x->dtype, t->rank, t->dims) ? 0 : -1;
	return pn_out_alloc(k, 0, x->dtype, 0, NULL) ? 0 : -1;
}

int pn_kernel_NegativeLogLikelihoodLoss(pn_kctx *k)
{
	const pn_tensor *x = k->in[0], *t = k->in[1], *w = pn_kin(k, 2);
	loss_geo g;
	if (check_shapes(k, x, t, w, &g) || alloc_loss(k, x, t))
		return -1;
	double *lp = malloc(sizeof(double) * (size_t)(x->numel + 1));
	if (!lp)
		return pn_kfail(k, "out of memory");
	for (int64_t i = 0; i < x->numel; i++)
		lp[i] = pn_tensor_get_f64(x, i);
	int rc = nll(k, lp, &g, t, w, k->out[0]);
	free(lp);
	return rc;
}

/* log_softmax over C at every (n, d). */
static void log_softmax(const pn_tensor *x, const loss_geo *g, double *lp)
{
	int64_t pos = g->N * g->D;
	int par = pos > 1 && x->numel >= PN_PAR_MIN_WORK;
	#pragma omp parallel for if (par) schedule(static)
	for (int64_t p = 0; p < pos; p++) {
		int64_t n = p / g->D, d = p % g->D, base = n * g->C * g->D + d;
		double mx = -INFINITY, s = 0;
		for (int64_t c = 0; c < g->C; c++) {
			double v = pn_tensor_get_f64(x, base + c * g->D);
			lp[base + c * g->D] = v;
			mx = v > mx ? v : mx;
		}
		for (int64_t c = 0; c < g->C; c++)
			s += exp(lp[base + c * g->D] - mx);
		double lse = mx + log(s);
		for (int64_t c = 0; c < g->C; c++)
			lp[base + c * g->D] -= lse;
	}
}

int pn_kernel_SoftmaxCrossEntropyLoss(pn_kctx *k)
{
	const pn_tensor *x = k->in[0], *t = k->in[1], *w = pn_kin(k, 2);
	loss_geo g;
	if (check_shapes(k, x, t, w, &g) || alloc_loss(k, x, t))
		return -1;
	double *lp = malloc(sizeof(double) * (size_t)(x->numel + 1));
	if (!lp)
		return pn_kfail(k, "out of memory");
	log_softmax(x, &g, lp);
	int rc = nll(k, lp, &g, t, w, k->out[0]);
	if (!rc && k->n_out > 1) {
		pn_tensor *o = pn_out_alloc(k, 1, x->dtype, x->rank, x->dims);
		if (!o)
			rc = -1;
		for (int64_t i = 0; !rc && i < x->numel; i++)
			pn_tensor_set_f64(o, i, lp[i]);
	}
	free(lp);
	return rc;
}
