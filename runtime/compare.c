#include "runtime/compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const class_names[] = {"ok", "accuracy", "nan/inf", "shape", "dtype", "kind"};

const char *pn_cmp_class_name(int cls)
{
	return cls >= 0 && cls <= PN_CMP_KIND ? class_names[cls] : "?";
}

static void compare_strings(const pn_tensor *got, const pn_tensor *want, pn_cmp *r)
{
	char *const *g = got->data, *const *w = want->data;
	for (int64_t i = 0; i < want->numel; i++)
		if (strcmp(g[i] ? g[i] : "", w[i] ? w[i] : "")) {
			if (!r->bad++) {
				r->worst = i;
				snprintf(r->what, sizeof r->what, "string %lld: '%.40s' vs '%.40s'",
					 (long long)i, g[i], w[i]);
			}
			r->cls = PN_CMP_ACCURACY;
		}
}

static void compare_numbers(const pn_tensor *got, const pn_tensor *want, double rtol, double atol,
			    pn_cmp *r)
{
	int exact = !pn_dtype_is_float(want->dtype);
	int64_t n = want->numel;
	if (want->dtype == PN_COMPLEX64 || want->dtype == PN_COMPLEX128)
		n *= 2;   /* compared as interleaved real/imaginary parts */
	for (int64_t i = 0; i < n; i++) {
		double g, w;
		if (want->dtype == PN_COMPLEX64) {
			g = ((const float *)got->data)[i];
			w = ((const float *)want->data)[i];
		} else if (want->dtype == PN_COMPLEX128) {
			g = ((const double *)got->data)[i];
			w = ((const double *)want->data)[i];
		} else if (exact) {
			int64_t gi = pn_tensor_get_i64(got, i), wi = pn_tensor_get_i64(want, i);
			if (gi != wi) {
				if (!r->bad++) {
					r->worst = i;
					snprintf(r->what, sizeof r->what, "element %lld: %lld vs %lld",
						 (long long)i, (long long)gi, (long long)wi);
				}
				r->cls = PN_CMP_ACCURACY;
				double d = fabs((double)gi - (double)wi);
				if (d > r->max_abs)
					r->max_abs = d;
			}
			continue;
		} else {
			g = pn_tensor_get_f64(got, i);
			w = pn_tensor_get_f64(want, i);
		}
		if (isnan(w) && isnan(g))
			continue;
		if (isinf(w) && g == w)
			continue;
		double d = fabs(g - w);
		double rel = w != 0 ? d / fabs(w) : (d ? INFINITY : 0);
		if (!(d <= r->max_abs))
			r->max_abs = isnan(d) ? INFINITY : d;
		if (rel > r->max_rel)
			r->max_rel = rel;
		if (d <= atol + rtol * fabs(w))
			continue;
		int naninf = !isfinite(g) && isfinite(w);
		if (!r->bad++ || (naninf && r->cls != PN_CMP_NANINF)) {
			r->worst = i;
			snprintf(r->what, sizeof r->what, "element %lld: %.9g vs %.9g", (long long)i, g, w);
		}
		if (naninf)
			r->cls = PN_CMP_NANINF;
		else if (r->cls == PN_CMP_OK)
			r->cls = PN_CMP_ACCURACY;
	}
}

int pn_compare(const pn_tensor *got, const pn_tensor *want, double rtol, double atol, pn_cmp *r)
{
	memset(r, 0, sizeof(*r));
	if (got->kind != want->kind) {
		r->cls = PN_CMP_KIND;
		snprintf(r->what, sizeof r->what, "kind %d vs %d", got->kind, want->kind);
		return r->cls;
	}
	if (want->kind == PN_KIND_OPTIONAL && (got->none || want->none)) {
		if (got->none != want->none) {
			r->cls = PN_CMP_KIND;
			snprintf(r->what, sizeof r->what, "optional %s vs %s",
				 got->none ? "empty" : "set", want->none ? "empty" : "set");
		}
		return r->cls;
	}
	if (want->kind == PN_KIND_SEQUENCE ||
	    (want->kind == PN_KIND_OPTIONAL && want->elem_kind == PN_KIND_SEQUENCE)) {
		if (got->n_items != want->n_items) {
			r->cls = PN_CMP_SHAPE;
			snprintf(r->what, sizeof r->what, "sequence of %d vs %d", got->n_items,
				 want->n_items);
			return r->cls;
		}
		for (int i = 0; i < want->n_items; i++) {
			pn_cmp sub;
			pn_compare(got->items[i], want->items[i], rtol, atol, &sub);
			if (sub.max_abs > r->max_abs)
				r->max_abs = sub.max_abs;
			if (sub.max_rel > r->max_rel)
				r->max_rel = sub.max_rel;
			if (sub.cls && !r->cls) {
				*r = sub;
				snprintf(r->what, sizeof r->what, "item %d: %s", i, sub.what);
			}
		}
		return r->cls;
	}
	if (got->dtype != want->dtype) {
		r->cls = PN_CMP_DTYPE;
		snprintf(r->what, sizeof r->what, "dtype %s vs %s", pn_dtype_name(got->dtype),
			 pn_dtype_name(want->dtype));
		return r->cls;
	}
	if (!pn_tensor_same_shape(got, want)) {
		char a[96], b[96];
		r->cls = PN_CMP_SHAPE;
		snprintf(r->what, sizeof r->what, "shape %s vs %s", pn_tensor_desc(got, a, sizeof a),
			 pn_tensor_desc(want, b, sizeof b));
		return r->cls;
	}
	if (want->dtype == PN_STRING)
		compare_strings(got, want, r);
	else
		compare_numbers(got, want, rtol, atol, r);
	return r->cls;
}

/* Bitwise, not within a tolerance: the export and the judge ask whether a
 * run repeats exactly or whether outputs follow a change of inputs. */
int pn_tensor_same_bits(const pn_tensor *a, const pn_tensor *b)
{
	if (a->kind != b->kind || a->none != b->none || a->n_items != b->n_items)
		return 0;
	if (a->kind != PN_KIND_TENSOR) {
		for (int i = 0; i < a->n_items; i++)
			if (!pn_tensor_same_bits(a->items[i], b->items[i]))
				return 0;
		return 1;
	}
	if (a->dtype != b->dtype || !pn_tensor_same_shape(a, b))
		return 0;
	if (a->dtype != PN_STRING)
		return !memcmp(a->data, b->data, pn_tensor_nbytes(a));
	char *const *x = a->data, *const *y = b->data;
	for (int64_t i = 0; i < a->numel; i++)
		if (strcmp(x[i] ? x[i] : "", y[i] ? y[i] : ""))
			return 0;
	return 1;
}
