/*
 * random_window.c - generators of values: the random ops (RandomNormal,
 * RandomUniform, their *Like forms, Bernoulli, Multinomial), the window
 * functions (Hann, Hamming, Blackman) and MelWeightMatrix.  One file, as
 * they all write their doubles through put_f64.
 *
 * Random ops draw from runtime/rng.h seeded with the node's seed (k->seed,
 * fixed per node and run seed) or with the node's 'seed' attribute when it
 * has one, always on one thread in element order, so the values are the
 * same whatever the thread count.  They cannot match another framework's
 * generator bit for bit; only shapes, dtypes and ranges are comparable.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/ops/layout.h"
#include "runtime/rng.h"

/* Stores n doubles into a float or integer tensor (converted). */
static int put_f64(pn_kctx *k, pn_tensor *o, const double *v)
{
	int64_t n = o->numel;
	void *p = o->data;
	switch (o->dtype) {
	case PN_FLOAT:
		for (int64_t i = 0; i < n; i++)
			((float *)p)[i] = (float)v[i];
		return 0;
	case PN_DOUBLE:
		memcpy(p, v, sizeof(double) * (size_t)n);
		return 0;
	case PN_FLOAT16:
		for (int64_t i = 0; i < n; i++)
			((uint16_t *)p)[i] = pn_f32_to_f16((float)v[i]);
		return 0;
	case PN_BFLOAT16:
		for (int64_t i = 0; i < n; i++)
			((uint16_t *)p)[i] = pn_f32_to_bf16((float)v[i]);
		return 0;
	case PN_INT32:
		for (int64_t i = 0; i < n; i++)
			((int32_t *)p)[i] = (int32_t)v[i];
		return 0;
	case PN_INT64:
		for (int64_t i = 0; i < n; i++)
			((int64_t *)p)[i] = (int64_t)v[i];
		return 0;
	case PN_STRING:
	case PN_COMPLEX64:
	case PN_COMPLEX128:
	case PN_UNDEFINED:
		return pn_kfail(k, "cannot generate %s values", pn_dtype_name(o->dtype));
	default:
		for (int64_t i = 0; i < n; i++)
			pn_tensor_set_f64(o, i, v[i]);
		return 0;
	}
}

/* A tensor of doubles as doubles (probabilities, logits). */
static double *get_f64(const pn_tensor *t)
{
	double *v = malloc(sizeof(double) * (size_t)(t->numel ? t->numel : 1));
	if (!v)
		return NULL;
	if (t->dtype == PN_FLOAT)
		for (int64_t i = 0; i < t->numel; i++)
			v[i] = ((const float *)t->data)[i];
	else if (t->dtype == PN_DOUBLE)
		memcpy(v, t->data, sizeof(double) * (size_t)t->numel);
	else
		for (int64_t i = 0; i < t->numel; i++)
			v[i] = pn_tensor_get_f64(t, i);
	return v;
}

static void seed_rng(pn_kctx *k, pn_rng *r)
{
	const pn_attr *a = pn_attr_find(k->node, "seed");
	uint64_t s = k->seed;
	if (a) {
		uint32_t bits;
		memcpy(&bits, &a->f, 4);
		s = 0x5eed000000000000ull ^ bits;
	}
	pn_rng_seed(r, s, k->node->op_type);
}

/* --- RandomNormal, RandomUniform and the *Like forms ---------------------------------- */

int pn_infer_Random(pn_ictx *c)
{
	int64_t dims[PN_MAX_RANK + 1];
	int n = pn_attr_ints(c->node, "shape", dims, PN_MAX_RANK + 1);
	if (n < 0 || n > PN_MAX_RANK)
		return pn_ifail(c, "shape attribute missing or rank too large");
	pn_iset(c, 0, (int)pn_attr_int(c->node, "dtype", PN_FLOAT), n, dims);
	return 0;
}

int pn_infer_RandomLike(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0);
	pn_iset_like(c, 0, 0, 0);
	c->out[0].type.dtype = (int)pn_attr_int(c->node, "dtype", x ? x->type.dtype : PN_UNDEFINED);
	return 0;
}

static int random_fill(pn_kctx *k, int normal)
{
	pn_tensor *o = pn_lay_out(k, 0);
	if (!o)
		return -1;
	double *v = malloc(sizeof(double) * (size_t)(o->numel ? o->numel : 1));
	if (!v)
		return pn_kfail(k, "out of memory");
	pn_rng r;
	seed_rng(k, &r);
	if (normal) {
		double mean = pn_attr_float(k->node, "mean", 0), scale = pn_attr_float(k->node, "scale", 1);
		for (int64_t i = 0; i < o->numel; i++)
			v[i] = mean + scale * pn_rng_normal(&r);
	} else {
		double lo = pn_attr_float(k->node, "low", 0), hi = pn_attr_float(k->node, "high", 1);
		for (int64_t i = 0; i < o->numel; i++)
			v[i] = lo + (hi - lo) * pn_rng_uniform(&r);
	}
	int rc = put_f64(k, o, v);
	free(v);
	return rc;
}

int pn_kernel_RandomNormal(pn_kctx *k)
{
	return random_fill(k, 1);
}

int pn_kernel_RandomUniform(pn_kctx *k)
{
	return random_fill(k, 0);
}

int pn_kernel_RandomNormalLike(pn_kctx *k)
{
	return random_fill(k, 1);
}

int pn_kernel_RandomUniformLike(pn_kctx *k)
{
	return random_fill(k, 0);
}

/* --- Bernoulli, Multinomial ----------------------------------------------------------- */

int pn_kernel_Bernoulli(pn_kctx *k)
{
	pn_tensor *o = pn_lay_out(k, 0);
	if (!o)
		return -1;
	double *p = get_f64(k->in[0]);
	if (!p)
		return pn_kfail(k, "out of memory");
	pn_rng r;
	seed_rng(k, &r);
	for (int64_t i = 0; i < o->numel; i++)
		p[i] = pn_rng_uniform(&r) < p[i] ? 1.0 : 0.0;
	int rc = o->dtype == PN_BOOL ? 0 : put_f64(k, o, p);
	if (o->dtype == PN_BOOL)
		for (int64_t i = 0; i < o->numel; i++)
			((uint8_t *)o->data)[i] = p[i] != 0;
	free(p);
	return rc;
}

int pn_infer_Multinomial(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0);
	int64_t dims[2] = {-1, pn_attr_int(c->node, "sample_size", 1)};
	if (x && x->type.rank >= 0) {
		if (x->type.rank != 2)
			return pn_ifail(c, "input must be [batch, classes]");
		dims[0] = x->type.dims[0];
	}
	pn_iset(c, 0, (int)pn_attr_int(c->node, "dtype", PN_INT32), 2, dims);
	return 0;
}

int pn_kernel_Multinomial(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	pn_tensor *o = pn_lay_out(k, 0);
	if (!o)
		return -1;
	if (x->rank != 2 || o->rank != 2 || x->dims[1] < 1)
		return pn_kfail(k, "input must be [batch, classes] with classes >= 1");
	int64_t B = x->dims[0], C = x->dims[1], S = o->dims[1];
	double *lp = get_f64(x), *v = malloc(sizeof(double) * (size_t)(o->numel + 1)),
	       *cdf = malloc(sizeof(double) * (size_t)C);
	int rc = 0;
	if (!lp || !v || !cdf) {
		rc = pn_kfail(k, "out of memory");
		goto done;
	}
	pn_rng r;
	seed_rng(k, &r);
	for (int64_t b = 0; b < B; b++) {
		/* unnormalised log-probabilities: cumulative exp(x - max) */
		const double *row = lp + b * C;
		double mx = row[0], acc = 0;
		for (int64_t j = 1; j < C; j++)
			mx = row[j] > mx ? row[j] : mx;
		for (int64_t j = 0; j < C; j++)
			cdf[j] = acc += exp(row[j] - mx);
		for (int64_t s = 0; s < S; s++) {
			double u = pn_rng_uniform(&r) * acc;
			int64_t j = 0;
			while (j < C - 1 && cdf[j] <= u)
				j++;
			v[b * S + s] = (double)j;
		}
	}
	rc = put_f64(k, o, v);
done:
	free(lp);
	free(v);
	free(cdf);
	return rc;
}

/* --- window functions --------------------------------------------------------------- */

int pn_infer_Window(pn_ictx *c)
{
	int64_t n = -1;
	if (pn_iints(c, 0, &n, 1) != 1)
		n = -1;
	else if (n < 0)
		return pn_ifail(c, "window size %lld is negative", (long long)n);
	pn_iset(c, 0, (int)pn_attr_int(c->node, "output_datatype", PN_FLOAT), 1, &n);
	return 0;
}

/* Generalised cosine window a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N),
 * N = size when periodic, size - 1 when symmetric. */
static int cosine_window(pn_kctx *k, double a0, double a1, double a2)
{
	pn_tensor *o = pn_lay_out(k, 0);
	if (!o)
		return -1;
	double *v = malloc(sizeof(double) * (size_t)(o->numel + 1));
	if (!v)
		return pn_kfail(k, "out of memory");
	int64_t size = o->numel, N = pn_attr_int(k->node, "periodic", 1) ? size : size - 1;
	const double two_pi = 6.283185307179586;
	for (int64_t i = 0; i < size; i++) {
		double t = N > 0 ? two_pi * (double)i / (double)N : 0;
		v[i] = a0 - a1 * cos(t) + a2 * cos(2 * t);
	}
	int rc = put_f64(k, o, v);
	free(v);
	return rc;
}

int pn_kernel_HannWindow(pn_kctx *k)
{
	return cosine_window(k, 0.5, 0.5, 0);
}

int pn_kernel_HammingWindow(pn_kctx *k)
{
	return cosine_window(k, 25.0 / 46.0, 21.0 / 46.0, 0);
}

int pn_kernel_BlackmanWindow(pn_kctx *k)
{
	return cosine_window(k, 0.42, 0.5, 0.08);
}

/* --- MelWeightMatrix ------------------------------------------------------------------ */

int pn_infer_MelWeightMatrix(pn_ictx *c)
{
	int64_t mel = -1, dft = -1;
	if (pn_iints(c, 0, &mel, 1) != 1)
		mel = -1;
	if (pn_iints(c, 1, &dft, 1) != 1)
		dft = -1;
	if ((mel != -1 && mel < 0) || (dft != -1 && dft < 0))
		return pn_ifail(c, "num_mel_bins and dft_length must be non-negative");
	int64_t dims[2] = {dft < 0 ? -1 : dft / 2 + 1, mel};
	pn_iset(c, 0, (int)pn_attr_int(c->node, "output_datatype", PN_FLOAT), 2, dims);
	return 0;
}

static double scalar_f64(const pn_tensor *t)
{
	return t && t->numel == 1 ? pn_tensor_get_f64(t, 0) : NAN;
}

/* Triangular filters between mel-spaced points, each point snapped to a
 * spectrogram bin, as the ONNX reference does it (so its bin rounding is
 * reproduced exactly). */
int pn_kernel_MelWeightMatrix(pn_kctx *k)
{
	pn_tensor *o = pn_lay_out(k, 0);
	if (!o)
		return -1;
	int64_t M = o->dims[1], bins = o->dims[0];
	double dft = scalar_f64(k->in[1]), rate = scalar_f64(k->in[2]);
	double lo = scalar_f64(k->in[3]), hi = scalar_f64(k->in[4]);
	if (!(rate > 0) || isnan(dft) || isnan(lo) || isnan(hi))
		return pn_kfail(k, "inputs must be scalars and sample_rate positive");
	double *v = calloc((size_t)(o->numel + 1), sizeof(double));
	int64_t *pt = malloc(sizeof(int64_t) * (size_t)(M + 2));
	if (!v || !pt) {
		free(v);
		free(pt);
		return pn_kfail(k, "out of memory");
	}
	double mlo = 2595 * log10(1 + lo / 700), mhi = 2595 * log10(1 + hi / 700);
	double step = (mhi - mlo) / (double)(M + 2);
	for (int64_t i = 0; i < M + 2; i++) {
		double hz = 700 * (pow(10, ((double)i * step + mlo) / 2595) - 1);
		pt[i] = (int64_t)floor((dft + 1) * hz / rate);
	}
	int rc = 0;
	for (int64_t m = 0; m < M && !rc; m++) {
		int64_t l = pt[m], c = pt[m + 1], h = pt[m + 2];
		if (l < 0 || c >= bins || h > bins) {
			rc = pn_kfail(k, "mel band %lld falls outside the %lld spectrogram bins",
				      (long long)m, (long long)bins);
			break;
		}
		if (c == l)
			v[c * M + m] = 1;
		else
			for (int64_t j = l; j <= c; j++)
				v[j * M + m] = (double)(j - l) / (double)(c - l);
		for (int64_t j = c; j < h; j++)
			v[j * M + m] = (double)(h - j) / (double)(h - c);
	}
	if (!rc)
		rc = put_f64(k, o, v);
	free(v);
	free(pt);
	return rc;
}
