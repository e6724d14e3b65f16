/*
 * norm.c - normalisation ops: BatchNormalization, InstanceNormalization,
 * LayerNormalization, GroupNormalization, LpNormalization,
 * MeanVarianceNormalization, LRN, Dropout.
 *
 * Float types only: float16/bfloat16 are computed in float32, float64 in
 * double; per-channel parameters may have a different float type than X
 * (BatchNormalization-15) and are converted once.  The typed loops live in
 * norm_impl.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/infer.h"
#include "runtime/kernel.h"
#include "runtime/ops/mathutil.h"
#include "runtime/rng.h"

/* How rows_norm maps a row element to its scale/bias (see norm_impl.h). */
typedef struct norm_par {
	double eps;
	int mvn;
	int64_t mod, mul, per;
} norm_par;

#define T float
#define S f32
#define SQRT sqrtf
#define POW powf
#include "runtime/ops/norm_impl.h"
#undef T
#undef S
#undef SQRT
#undef POW

#define T double
#define S f64
#define SQRT sqrt
#define POW pow
#include "runtime/ops/norm_impl.h"
#undef T
#undef S
#undef SQRT
#undef POW

/* --- helpers ---------------------------------------------------------------------- */

/* Compute type of a float input, 0 (with the failure reported) otherwise. */
static int float_ct(pn_kctx *k, const pn_tensor *x)
{
	int ct = pn_mu_ctype(x->dtype);
	if (ct != PN_FLOAT && ct != PN_DOUBLE) {
		pn_kfail(k, "unsupported type %s", pn_dtype_name(x->dtype));
		return 0;
	}
	return ct;
}

/* A parameter tensor converted to compute type ct (heap; NULL for an absent
 * tensor or on failure, which sets *bad). */
static void *param(pn_kctx *k, const pn_tensor *t, int ct, int64_t want, const char *what, int *bad)
{
	if (!t)
		return NULL;
	if (t->numel != want) {
		*bad = pn_kfail(k, "%s has %lld elements, expected %lld", what, (long long)t->numel,
				(long long)want);
		return NULL;
	}
	void *p = malloc(pn_dtype_size(ct) * (size_t)(want ? want : 1));
	if (!p) {
		*bad = pn_kfail(k, "out of memory");
		return NULL;
	}
	pn_mu_convert(t->dtype, t->data, ct, p, want);
	return p;
}

/* N, C and spatial size S of an [N, C, ...] tensor. */
static void ncs(const pn_tensor *x, int64_t *N, int64_t *C, int64_t *Sp)
{
	*N = x->rank > 0 ? x->dims[0] : 1;
	*C = x->rank > 1 ? x->dims[1] : 1;
	*Sp = 1;
	for (int d = 2; d < x->rank; d++)
		*Sp *= x->dims[d];
}

static void rows_norm(int ct, const void *x, void *y, int64_t rows, int64_t n, const norm_par *p,
		      const void *scale, const void *bias, double *mean, double *inv)
{
	if (ct == PN_FLOAT)
		rows_norm_f32(x, y, rows, n, p, scale, bias, mean, inv);
	else
		rows_norm_f64(x, y, rows, n, p, scale, bias, mean, inv);
}

/* --- BatchNormalization -------------------------------------------------------------- */

int pn_infer_BatchNormalization(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0), *m = pn_iin(c, 3);
	if (!x)
		return pn_ifail(c, "missing input");
	pn_iset_like(c, 0, 0, 0);
	int64_t C = x->type.rank > 1 ? x->type.dims[1] : x->type.rank < 0 ? -1 : 1;
	int dt = m ? m->type.dtype : x->type.dtype;
	for (int i = 1; i < c->n_out; i++)
		pn_iset(c, i, dt, 1, (int64_t[]){C});
	return 0;
}

/*
 * Training uses the batch statistics: from opset 14 when training_mode is
 * set, before opset 7 when is_test is 0, and in between when the node asks
 * for the running statistics (the outputs only training defines).
 */
static int bn_training(pn_kctx *k)
{
	if (k->opset >= 14)
		return (int)pn_attr_int(k->node, "training_mode", 0);
	if (k->opset < 7)
		return !pn_attr_int(k->node, "is_test", 0);
	for (int i = 1; i < k->node->n_out; i++)
		if (k->node->out[i] >= 0)
			return 1;
	return 0;
}

/* Writes the running statistics (and, before opset 14, the saved batch
 * statistics) into the optional outputs. */
static void bn_outputs(pn_kctx *k, int64_t C, const double *run_m, const double *run_v,
		       const double *bm, const double *bv)
{
	const double *src[5] = {NULL, run_m, run_v, bm, bv};
	for (int i = 1; i < k->n_out && i < 5; i++) {
		pn_tensor *o = k->out[i];
		if (o->data && o->numel == C)
			pn_mu_convert(PN_DOUBLE, src[i], o->dtype, o->data, C);
	}
}

int pn_kernel_BatchNormalization(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	pn_tensor *y = k->out[0];
	int ct = float_ct(k, x);
	if (!ct)
		return -1;
	for (int i = 1; i < 5; i++)
		if (!pn_kin(k, i))
			return pn_kfail(k, "input %d is required", i);
	int64_t N, C, Sp;
	ncs(x, &N, &C, &Sp);
	/* spatial = 0 (opsets < 9): parameters per element of [C, S] */
	int64_t P = k->in[1]->numel == C * Sp && Sp > 1 ? C * Sp : C;
	double eps = pn_attr_float(k->node, "epsilon", 1e-5f);
	double mom = pn_attr_float(k->node, "momentum", 0.9f);
	double *pd = malloc(sizeof(double) * (size_t)(6 * P + 1));
	void *pt = malloc(pn_dtype_size(ct) * (size_t)(3 * P + 1));
	if (!pd || !pt) {
		free(pd);
		free(pt);
		return pn_kfail(k, "out of memory");
	}
	double *sc = pd, *bi = pd + P, *mu = pd + 2 * P, *var = pd + 3 * P;
	double *bm = pd + 4 * P, *bv = pd + 5 * P;
	int bad = 0;
	const char *names[4] = {"scale", "B", "mean", "var"};
	for (int i = 0; i < 4 && !bad; i++) {
		if (k->in[i + 1]->numel != P)
			bad = pn_kfail(k, "%s has %lld elements, expected %lld", names[i],
				       (long long)k->in[i + 1]->numel, (long long)P);
		else
			pn_mu_convert(k->in[i + 1]->dtype, k->in[i + 1]->data, PN_DOUBLE, pd + i * P, P);
	}
	pn_cbuf xb = {0}, yb = {0};
	if (!bad && (pn_mu_in(k, x, ct, &xb) || pn_mu_out(k, y, ct, &yb)))
		bad = -1;
	if (bad) {
		free(pd);
		free(pt);
		pn_mu_free(&xb);
		pn_mu_free(&yb);
		return -1;
	}
	int train = bn_training(k) && P == C;
	if (train) {
		if (ct == PN_FLOAT)
			bn_stats_f32(xb.p, N, C, Sp, bm, bv);
		else
			bn_stats_f64(xb.p, N, C, Sp, bm, bv);
	}
	/* y = (x - m) * a + b with a = scale / sqrt(var + eps), b = B */
	double *ad = malloc(sizeof(double) * (size_t)(3 * P + 1));
	if (!ad) {
		free(pd);
		free(pt);
		pn_mu_free(&xb);
		pn_mu_free(&yb);
		return pn_kfail(k, "out of memory");
	}
	for (int64_t c = 0; c < P; c++) {
		double m = train ? bm[c] : mu[c], v = train ? bv[c] : var[c];
		ad[c] = m;
		ad[P + c] = sc[c] / sqrt(v + eps);
		ad[2 * P + c] = bi[c];
	}
	pn_mu_convert(PN_DOUBLE, ad, ct, pt, 3 * P);
	size_t es = pn_dtype_size(ct);
	void *tm = pt, *ta = (char *)pt + es * (size_t)P, *tb = (char *)pt + 2 * es * (size_t)P;
	if (ct == PN_FLOAT)
		bn_apply_f32(xb.p, yb.p, N, C, Sp, tm, ta, tb, P != C);
	else
		bn_apply_f64(xb.p, yb.p, N, C, Sp, tm, ta, tb, P != C);
	if (train) {
		for (int64_t c = 0; c < C; c++) {
			ad[c] = mu[c] * mom + bm[c] * (1 - mom);
			ad[P + c] = var[c] * mom + bv[c] * (1 - mom);
		}
		bn_outputs(k, C, ad, ad + P, bm, bv);
	} else {
		bn_outputs(k, C, mu, var, mu, var);
	}
	free(ad);
	free(pd);
	free(pt);
	pn_mu_free(&xb);
	pn_mu_commit(y, ct, &yb);
	return 0;
}

/* --- Instance, Group, Layer, MeanVariance normalisation --------------------------------- */

/* Runs rows_norm on x -> output 0 with optional scale/bias inputs
 * (si, bi: input indices, -1 for none) of `want` elements each. */
static int norm_rows_kernel(pn_kctx *k, int64_t rows, int64_t n, const norm_par *p, int si,
			    int bi_in, int64_t want, double *mean, double *inv)
{
	const pn_tensor *x = k->in[0];
	pn_tensor *y = k->out[0];
	int ct = float_ct(k, x);
	if (!ct)
		return -1;
	int bad = 0;
	void *sc = si >= 0 ? param(k, pn_kin(k, si), ct, want, "scale", &bad) : NULL;
	void *bi = !bad && bi_in >= 0 ? param(k, pn_kin(k, bi_in), ct, want, "bias", &bad) : NULL;
	pn_cbuf xb = {0}, yb = {0};
	if (!bad && (pn_mu_in(k, x, ct, &xb) || pn_mu_out(k, y, ct, &yb)))
		bad = -1;
	if (!bad)
		rows_norm(ct, xb.p, yb.p, rows, n, p, sc, bi, mean, inv);
	free(sc);
	free(bi);
	pn_mu_free(&xb);
	if (bad) {
		pn_mu_free(&yb);
		return -1;
	}
	pn_mu_commit(y, ct, &yb);
	return 0;
}

int pn_kernel_InstanceNormalization(pn_kctx *k)
{
	int64_t N, C, Sp;
	ncs(k->in[0], &N, &C, &Sp);
	if (!pn_kin(k, 1) || !pn_kin(k, 2))
		return pn_kfail(k, "scale and B are required");
	norm_par p = {.eps = pn_attr_float(k->node, "epsilon", 1e-5f), .mod = C, .mul = 1, .per = Sp};
	return norm_rows_kernel(k, N * C, Sp, &p, 1, 2, C, NULL, NULL);
}

/* Opset 18 gives scale and bias one value per group; opset 21 one per
 * channel: the element count tells which. */
int pn_kernel_GroupNormalization(pn_kctx *k)
{
	int64_t N, C, Sp;
	ncs(k->in[0], &N, &C, &Sp);
	int64_t G = pn_attr_int(k->node, "num_groups", 0);
	if (G <= 0 || C % G)
		return pn_kfail(k, "num_groups %lld does not divide %lld channels", (long long)G,
				(long long)C);
	if (!pn_kin(k, 1) || !pn_kin(k, 2))
		return pn_kfail(k, "scale and bias are required");
	int64_t Cg = C / G, want = k->in[1]->numel == C ? C : G;
	norm_par p = {.eps = pn_attr_float(k->node, "epsilon", 1e-5f)};
	if (want == C)
		p.mod = G, p.mul = Cg, p.per = Sp;
	else
		p.mod = G, p.mul = 1, p.per = Cg * Sp;
	return norm_rows_kernel(k, N * G, Cg * Sp, &p, 1, 2, want, NULL, NULL);
}

/* Mean and InvStdDev keep the leading dims and get 1 for each normalised one. */
static int ln_axis(const pn_node *n, int rank)
{
	return pn_axis(pn_attr_int(n, "axis", -1), rank);
}

int pn_infer_LayerNormalization(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0);
	if (!x)
		return pn_ifail(c, "missing input");
	pn_iset_like(c, 0, 0, 0);
	int stash = (int)pn_attr_int(c->node, "stash_type", PN_FLOAT);
	int rank = x->type.rank;
	if (rank < 0) {
		pn_iset(c, 1, stash, -1, NULL);
		pn_iset(c, 2, stash, -1, NULL);
		return 0;
	}
	int axis = ln_axis(c->node, rank);
	if (axis < 0)
		return pn_ifail(c, "axis out of range for rank %d", rank);
	int64_t dims[PN_MAX_RANK];
	for (int d = 0; d < rank; d++)
		dims[d] = d < axis ? x->type.dims[d] : 1;
	pn_iset(c, 1, stash, rank, dims);
	pn_iset(c, 2, stash, rank, dims);
	return 0;
}

/* Expands a Scale/B input to the normalised shape dims[axis:] by numpy
 * broadcasting (converted to ct; NULL when absent). */
static void *ln_param(pn_kctx *k, const pn_tensor *t, int ct, int axis, int *bad)
{
	const pn_tensor *x = k->in[0];
	int nr = x->rank - axis;
	int64_t n = pn_numel(nr, x->dims + axis);
	if (!t)
		return NULL;
	if (t->numel == n)
		return param(k, t, ct, n, "scale/bias", bad);
	int64_t st[PN_MAX_RANK], bst[PN_MAX_RANK];
	int off = nr - t->rank;
	pn_mu_strides(t->rank, t->dims, st);
	for (int d = 0; d < nr; d++) {
		int td = d - off;
		int64_t td_dim = td >= 0 ? t->dims[td] : 1;
		if (td_dim != 1 && td_dim != x->dims[axis + d]) {
			*bad = pn_kfail(k, "scale/bias do not broadcast to the normalised shape");
			return NULL;
		}
		bst[d] = td >= 0 && td_dim != 1 ? st[td] : 0;
	}
	for (int td = 0; td < off * -1; td++)
		if (t->dims[td] != 1) {
			*bad = pn_kfail(k, "scale/bias have more dims than the normalised shape");
			return NULL;
		}
	size_t es = pn_dtype_size(ct);
	void *full = malloc(es * (size_t)(n ? n : 1));
	void *conv = malloc(es * (size_t)(t->numel ? t->numel : 1));
	if (!full || !conv) {
		free(full);
		free(conv);
		*bad = pn_kfail(k, "out of memory");
		return NULL;
	}
	pn_mu_convert(t->dtype, t->data, ct, conv, t->numel);
	pn_mu_gather(es, nr, x->dims + axis, bst, conv, full);
	free(conv);
	return full;
}

int pn_kernel_LayerNormalization(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	pn_tensor *y = k->out[0];
	int axis = ln_axis(k->node, x->rank);
	int ct = float_ct(k, x);
	if (axis < 0)
		return pn_kfail(k, "axis out of range for rank %d", x->rank);
	if (!ct)
		return -1;
	int64_t rows = pn_numel(axis, x->dims), n = pn_numel(x->rank - axis, x->dims + axis);
	norm_par p = {.eps = pn_attr_float(k->node, "epsilon", 1e-5f), .mod = 1, .mul = 0, .per = 1};
	int bad = 0;
	void *sc = ln_param(k, pn_kin(k, 1), ct, axis, &bad);
	void *bi = bad ? NULL : ln_param(k, pn_kin(k, 2), ct, axis, &bad);
	double *stats = bad ? NULL : malloc(sizeof(double) * (size_t)(2 * rows + 1));
	pn_cbuf xb = {0}, yb = {0};
	if (!bad && !stats)
		bad = pn_kfail(k, "out of memory");
	if (!bad && !sc)
		bad = pn_kfail(k, "Scale is required");
	if (!bad && (pn_mu_in(k, x, ct, &xb) || pn_mu_out(k, y, ct, &yb)))
		bad = -1;
	if (!bad) {
		rows_norm(ct, xb.p, yb.p, rows, n, &p, sc, bi, stats, stats + rows);
		for (int i = 1; i < 3 && i < k->n_out; i++)
			if (k->out[i]->numel == rows)
				pn_mu_convert(PN_DOUBLE, stats + (i - 1) * rows, k->out[i]->dtype,
					      k->out[i]->data, rows);
	}
	free(sc);
	free(bi);
	free(stats);
	pn_mu_free(&xb);
	if (bad) {
		pn_mu_free(&yb);
		return -1;
	}
	pn_mu_commit(y, ct, &yb);
	return 0;
}

/*
 * MeanVarianceNormalization over `axes` (default N, H, W):
 * y = (x - mean) / (sqrt(var) + 1e-9).  The reduced axes are gathered behind
 * the kept ones so every normalisation is one contiguous row, then the rows
 * are scattered back.
 */
int pn_kernel_MeanVarianceNormalization(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	pn_tensor *y = k->out[0];
	int64_t axes[PN_MAX_RANK] = {0, 2, 3};
	int na = pn_attr_ints(k->node, "axes", axes, PN_MAX_RANK);
	if (na < 0)
		na = 3;
	uint8_t mask[PN_MAX_RANK] = {0};
	for (int i = 0; i < na; i++) {
		int a = pn_axis(axes[i], x->rank);
		if (a < 0)
			return pn_kfail(k, "axis %lld out of range for rank %d", (long long)axes[i], x->rank);
		mask[a] = 1;
	}
	int ct = float_ct(k, x);
	if (!ct)
		return -1;
	/* permuted order: kept dims, then reduced dims */
	int64_t st[PN_MAX_RANK], pdims[PN_MAX_RANK], pst[PN_MAX_RANK], back[PN_MAX_RANK];
	int perm[PN_MAX_RANK], np = 0;
	int64_t rows = 1, n = 1;
	pn_mu_strides(x->rank, x->dims, st);
	for (int pass = 0; pass < 2; pass++)
		for (int d = 0; d < x->rank; d++)
			if (mask[d] == pass) {
				perm[np] = d;
				pdims[np] = x->dims[d];
				pst[np++] = st[d];
				*(pass ? &n : &rows) *= x->dims[d];
			}
	/* strides of the permuted buffer, seen from the original dims */
	int64_t bst[PN_MAX_RANK];
	pn_mu_strides(np, pdims, bst);
	for (int i = 0; i < np; i++)
		back[perm[i]] = bst[i];
	size_t es = pn_dtype_size(ct);
	pn_cbuf xb = {0}, yb = {0};
	void *a = malloc(es * (size_t)(x->numel + 1)), *b = malloc(es * (size_t)(x->numel + 1));
	int bad = !a || !b ? pn_kfail(k, "out of memory") : 0;
	if (!bad && (pn_mu_in(k, x, ct, &xb) || pn_mu_out(k, y, ct, &yb)))
		bad = -1;
	if (!bad) {
		norm_par p = {.eps = 1e-9, .mvn = 1};
		pn_mu_gather(es, np, pdims, pst, xb.p, a);
		rows_norm(ct, a, b, rows, n, &p, NULL, NULL, NULL, NULL);
		pn_mu_gather(es, x->rank, x->dims, back, b, yb.p);
	}
	free(a);
	free(b);
	pn_mu_free(&xb);
	if (bad) {
		pn_mu_free(&yb);
		return -1;
	}
	pn_mu_commit(y, ct, &yb);
	return 0;
}

/* --- LpNormalization, LRN --------------------------------------------------------------- */

int pn_kernel_LpNormalization(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	pn_tensor *y = k->out[0];
	int axis = pn_axis(pn_attr_int(k->node, "axis", -1), x->rank);
	int p = (int)pn_attr_int(k->node, "p", 2);
	int ct = float_ct(k, x);
	if (axis < 0)
		return pn_kfail(k, "axis out of range for rank %d", x->rank);
	if (p != 1 && p != 2)
		return pn_kfail(k, "p must be 1 or 2, got %d", p);
	if (!ct)
		return -1;
	int64_t O, R, I;
	pn_mu_ori(x->rank, x->dims, axis, &O, &R, &I);
	pn_cbuf xb, yb;
	if (pn_mu_in(k, x, ct, &xb))
		return -1;
	if (pn_mu_out(k, y, ct, &yb)) {
		pn_mu_free(&xb);
		return -1;
	}
	if (ct == PN_FLOAT)
		lp_norm_f32(xb.p, yb.p, O, R, I, p);
	else
		lp_norm_f64(xb.p, yb.p, O, R, I, p);
	pn_mu_free(&xb);
	pn_mu_commit(y, ct, &yb);
	return 0;
}

int pn_kernel_LRN(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	pn_tensor *y = k->out[0];
	int64_t size = pn_attr_int(k->node, "size", 0);
	double alpha = pn_attr_float(k->node, "alpha", 1e-4f);
	double beta = pn_attr_float(k->node, "beta", 0.75f);
	double bias = pn_attr_float(k->node, "bias", 1.0f);
	int ct = float_ct(k, x);
	if (size <= 0)
		return pn_kfail(k, "size must be positive");
	if (!ct)
		return -1;
	int64_t N, C, Sp;
	ncs(x, &N, &C, &Sp);
	pn_cbuf xb, yb;
	if (pn_mu_in(k, x, ct, &xb))
		return -1;
	if (pn_mu_out(k, y, ct, &yb)) {
		pn_mu_free(&xb);
		return -1;
	}
	if (ct == PN_FLOAT)
		lrn_f32(xb.p, yb.p, N, C, Sp, size, (float)alpha, (float)beta, (float)bias);
	else
		lrn_f64(xb.p, yb.p, N, C, Sp, size, alpha, beta, bias);
	pn_mu_free(&xb);
	pn_mu_commit(y, ct, &yb);
	return 0;
}

/* --- Dropout --------------------------------------------------------------------------------- */

int pn_infer_Dropout(pn_ictx *c)
{
	pn_iset_like(c, 0, 0, 0);
	pn_iset_like(c, 1, 0, c->opset >= 10 ? PN_BOOL : 0);
	return 0;
}

/*
 * Dropout is the identity (mask all true) unless training: opset 12+ reads
 * ratio and training_mode from inputs 1 and 2, older opsets ratio from an
 * attribute and, before opset 7, training from is_test = 0.  Training masks
 * come from the node's seeded generator, so they cannot match another
 * framework's random draws.
 */
int pn_kernel_Dropout(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	pn_tensor *y = k->out[0], *mask = k->n_out > 1 ? k->out[1] : NULL;
	double ratio = 0.5;
	int train = 0;
	if (k->opset >= 12) {
		const pn_tensor *r = pn_kin(k, 1), *t = pn_kin(k, 2);
		if (r && r->numel == 1)
			ratio = pn_tensor_get_f64(r, 0);
		train = t && t->numel == 1 && pn_tensor_get_i64(t, 0);
	} else {
		ratio = pn_attr_float(k->node, "ratio", 0.5f);
		train = k->opset < 7 && !pn_attr_int(k->node, "is_test", 0);
	}
	if (train && (ratio < 0 || ratio >= 1))
		return pn_kfail(k, "ratio must be in [0, 1), got %g", ratio);
	if (!train || ratio == 0) {
		memcpy(y->data, x->data, pn_tensor_nbytes(x));
		if (mask && pn_dtype_size(mask->dtype) == 1)
			memset(mask->data, 1, (size_t)mask->numel);
		else if (mask)   /* before opset 10 the mask has x's type */
			for (int64_t i = 0; i < mask->numel; i++)
				pn_tensor_set_f64(mask, i, 1.0);
		return 0;
	}
	int ct = float_ct(k, x);
	if (!ct)
		return -1;
	pn_cbuf xb, yb;
	if (pn_mu_in(k, x, PN_DOUBLE, &xb))
		return -1;
	if (pn_mu_out(k, y, PN_DOUBLE, &yb)) {
		pn_mu_free(&xb);
		return -1;
	}
	uint8_t *keep = malloc((size_t)(x->numel + 1));
	if (!keep) {
		pn_mu_free(&xb);
		pn_mu_free(&yb);
		return pn_kfail(k, "out of memory");
	}
	pn_rng rng;
	pn_rng_seed(&rng, k->seed, "dropout");
	double scale = 1 / (1 - ratio);
	const double *xd = xb.p;
	double *yd = yb.p;
	for (int64_t i = 0; i < x->numel; i++) {
		keep[i] = pn_rng_uniform(&rng) >= ratio;
		yd[i] = keep[i] ? xd[i] * scale : 0;
	}
	if (mask)
		pn_mu_convert(PN_BOOL, keep, mask->dtype, mask->data, mask->numel);
	free(keep);
	pn_mu_free(&xb);
	pn_mu_commit(y, PN_DOUBLE, &yb);
	return 0;
}
