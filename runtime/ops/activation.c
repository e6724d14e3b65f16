/*
 * activation.c - activation functions: Relu ... Mish, Clip, and PRelu
 * (whose slope broadcasts onto X).
 *
 * Attribute defaults follow the ONNX spec.  Exponential forms are written in
 * their overflow-free arrangement (Sigmoid, Softplus).
 */
#include "runtime/ops/mathutil.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <tgmath.h>  /* after mathutil.h: complex.h would turn its parameter I into a macro */

#include "runtime/infer.h"
#include "runtime/kernel.h"
#include "runtime/ops/elemwise.h"

#define FLOAT_TAB(op) static const pn_seg_fn op##_tab[PN_DTYPE_COUNT] = {PN_EW_FLOATS(PN_EW_ENT, op, 0)}

/* sigmoid and softplus without overflow, in the compute type of x; float
 * sigmoid (float32, float16, bfloat16) as plain arithmetic that vectorises */
#define SIGMOID(x)                                                                        \
	_Generic((x), float: pn_mu_sigmoidf((float)(x)),                                  \
		 default: (x) >= 0 ? (ct)1 / ((ct)1 + exp(-(x))) : exp(x) / ((ct)1 + exp(x)))
#define SOFTPLUS(x) ((x) > 0 ? (x) + log1p(exp(-(x))) : log1p(exp(x)))
/* t clamped to [0, 1] by comparisons, which vectorise (fmin and fmax are
 * library calls); NaN stays NaN, as numpy.clip leaves it. */
#define CLAMP01(t) ((t) < (ct)0 ? (ct)0 : (t) > (ct)1 ? (ct)1 : (t))

/*
 * Both values computed, then one picked: a conversion of a (double)
 * parameter left inside a conditional arm may not be evaluated early (it
 * could raise a floating-point exception), which keeps the loop scalar.
 * Function arguments are evaluated unconditionally.
 */
static inline float select_f(int c, float a, float b) { return c ? a : b; }
static inline double select_d(int c, double a, double b) { return c ? a : b; }
#define SELECT(c, a, b) _Generic((a), float: select_f, default: select_d)(c, a, b)
/* x clamped to [lo, hi]; NaN stays NaN; lo > hi gives hi (numpy.clip). */
static inline float clamp_f(float x, float lo, float hi) { return x < lo ? lo : x > hi ? hi : x; }
static inline double clamp_d(double x, double lo, double hi) { return x < lo ? lo : x > hi ? hi : x; }
#define CLAMP(x, lo, hi) _Generic((x), float: clamp_f, default: clamp_d)(x, lo, hi)

/* --- Relu (float and signed integers) ----------------------------------------------- */

PN_EW_FLOATS(PN_EW_DEF1, Relu, x > 0 ? x : (x == x ? (ct)0 : x))
PN_EW_SINTS(PN_EW_DEF1, Relu, x > 0 ? x : (ct)0)
static const pn_seg_fn Relu_tab[PN_DTYPE_COUNT] = {
	PN_EW_FLOATS(PN_EW_ENT, Relu, 0) PN_EW_SINTS(PN_EW_ENT, Relu, 0)};

int pn_kernel_Relu(pn_kctx *k)
{
	return pn_ew_unary(k, Relu_tab, 0, NULL, 1);
}

/* --- parametrised float activations -------------------------------------------------- */

PN_EW_FLOATS(PN_EW_DEF1, LeakyRelu, SELECT(x < 0, x * (ct)P->a, x))
FLOAT_TAB(LeakyRelu);

int pn_kernel_LeakyRelu(pn_kctx *k)
{
	pn_ewparam p = {.a = pn_attr_float(k->node, "alpha", 0.01f)};
	return pn_ew_unary(k, LeakyRelu_tab, 0, &p, 1);
}

PN_EW_FLOATS(PN_EW_DEF1, Elu, x < 0 ? (ct)P->a * expm1(x) : x)
FLOAT_TAB(Elu);

int pn_kernel_Elu(pn_kctx *k)
{
	pn_ewparam p = {.a = pn_attr_float(k->node, "alpha", 1.0f)};
	return pn_ew_unary(k, Elu_tab, 0, &p, 10);
}

/* a: alpha, b: gamma */
PN_EW_FLOATS(PN_EW_DEF1, Selu, (ct)P->b * (x <= 0 ? (ct)P->a * expm1(x) : x))
FLOAT_TAB(Selu);

int pn_kernel_Selu(pn_kctx *k)
{
	pn_ewparam p = {.a = pn_attr_float(k->node, "alpha", 1.67326319217681884765625f),
			.b = pn_attr_float(k->node, "gamma", 1.05070102214813232421875f)};
	return pn_ew_unary(k, Selu_tab, 0, &p, 10);
}

PN_EW_FLOATS(PN_EW_DEF1, Celu, x > 0 ? x : (ct)P->a * expm1(x / (ct)P->a))
FLOAT_TAB(Celu);

int pn_kernel_Celu(pn_kctx *k)
{
	pn_ewparam p = {.a = pn_attr_float(k->node, "alpha", 1.0f)};
	return pn_ew_unary(k, Celu_tab, 0, &p, 10);
}

PN_EW_FLOATS(PN_EW_DEF1, Sigmoid, SIGMOID(x))
FLOAT_TAB(Sigmoid);

int pn_kernel_Sigmoid(pn_kctx *k)
{
	return pn_ew_unary(k, Sigmoid_tab, 0, NULL, 10);
}

/* a: alpha, b: beta */
PN_EW_FLOATS(PN_EW_DEF1, HardSigmoid, CLAMP01((ct)P->a * x + (ct)P->b))
FLOAT_TAB(HardSigmoid);

int pn_kernel_HardSigmoid(pn_kctx *k)
{
	pn_ewparam p = {.a = pn_attr_float(k->node, "alpha", 0.2f),
			.b = pn_attr_float(k->node, "beta", 0.5f)};
	return pn_ew_unary(k, HardSigmoid_tab, 0, &p, 2);
}

PN_EW_FLOATS(PN_EW_DEF1, HardSwish, x * CLAMP01(x * (ct)(1.0 / 6.0) + (ct)0.5))
FLOAT_TAB(HardSwish);

int pn_kernel_HardSwish(pn_kctx *k)
{
	return pn_ew_unary(k, HardSwish_tab, 0, NULL, 2);
}

PN_EW_FLOATS(PN_EW_DEF1, Softplus, SOFTPLUS(x))
FLOAT_TAB(Softplus);

int pn_kernel_Softplus(pn_kctx *k)
{
	return pn_ew_unary(k, Softplus_tab, 0, NULL, 20);
}

PN_EW_FLOATS(PN_EW_DEF1, Softsign, x / ((ct)1 + fabs(x)))
FLOAT_TAB(Softsign);

int pn_kernel_Softsign(pn_kctx *k)
{
	return pn_ew_unary(k, Softsign_tab, 0, NULL, 2);
}

PN_EW_FLOATS(PN_EW_DEF1, ThresholdedRelu, x > (ct)P->a ? x : (ct)0)
FLOAT_TAB(ThresholdedRelu);

int pn_kernel_ThresholdedRelu(pn_kctx *k)
{
	pn_ewparam p = {.a = pn_attr_float(k->node, "alpha", 1.0f)};
	return pn_ew_unary(k, ThresholdedRelu_tab, 0, &p, 1);
}

PN_EW_FLOATS(PN_EW_DEF1, Mish, x * tanh(SOFTPLUS(x)))
FLOAT_TAB(Mish);

int pn_kernel_Mish(pn_kctx *k)
{
	return pn_ew_unary(k, Mish_tab, 0, NULL, 30);
}

/* --- Shrink (every numeric type) ------------------------------------------------------- */

/* a: lambd, b: bias; integers compare and subtract in double, as the spec's
 * float attributes imply, then convert back. */
PN_EW_FLOATS(PN_EW_DEF1, Shrink,
	     x < -(ct)P->a ? x + (ct)P->b : x > (ct)P->a ? x - (ct)P->b : (ct)0)
PN_EW_SINTS(PN_EW_DEF1, Shrink,
	    (double)x < -P->a ? (ct)((double)x + P->b) : (double)x > P->a ? (ct)((double)x - P->b) : (ct)0)
PN_EW_UINTS(PN_EW_DEF1, Shrink,
	    (double)x < -P->a ? (ct)((double)x + P->b) : (double)x > P->a ? (ct)((double)x - P->b) : (ct)0)
static const pn_seg_fn Shrink_tab[PN_DTYPE_COUNT] = {
	PN_EW_FLOATS(PN_EW_ENT, Shrink, 0) PN_EW_SINTS(PN_EW_ENT, Shrink, 0)
	PN_EW_UINTS(PN_EW_ENT, Shrink, 0)};

int pn_kernel_Shrink(pn_kctx *k)
{
	pn_ewparam p = {.a = pn_attr_float(k->node, "lambd", 0.5f),
			.b = pn_attr_float(k->node, "bias", 0.0f)};
	return pn_ew_unary(k, Shrink_tab, 0, &p, 2);
}

/* --- Clip ------------------------------------------------------------------------------ */

/* Bounds: a/b for floats, ia/ib for integers.  NaN passes through; with
 * min > max every element becomes max (numpy.clip). */
PN_EW_FLOATS(PN_EW_DEF1, Clip, CLAMP(x, (ct)P->a, (ct)P->b))
PN_EW_SINTS(PN_EW_DEF1, Clip, (x < (ct)P->ia ? (ct)P->ia : x) > (ct)P->ib ? (ct)P->ib
							     : (x < (ct)P->ia ? (ct)P->ia : x))
PN_EW_UINTS(PN_EW_DEF1, Clip, (x < (ct)P->ia ? (ct)P->ia : x) > (ct)P->ib ? (ct)P->ib
							     : (x < (ct)P->ia ? (ct)P->ia : x))
static const pn_seg_fn Clip_tab[PN_DTYPE_COUNT] = {
	PN_EW_FLOATS(PN_EW_ENT, Clip, 0) PN_EW_SINTS(PN_EW_ENT, Clip, 0)
	PN_EW_UINTS(PN_EW_ENT, Clip, 0)};

static void int_limits(int dtype, int64_t *lo, int64_t *hi)
{
	switch (dtype) {
	case PN_INT8: *lo = INT8_MIN; *hi = INT8_MAX; break;
	case PN_INT16: *lo = INT16_MIN; *hi = INT16_MAX; break;
	case PN_INT32: *lo = INT32_MIN; *hi = INT32_MAX; break;
	case PN_UINT8: *lo = 0; *hi = UINT8_MAX; break;
	case PN_UINT16: *lo = 0; *hi = UINT16_MAX; break;
	case PN_UINT32: *lo = 0; *hi = UINT32_MAX; break;
	case PN_UINT64: *lo = 0; *hi = -1; break;   /* all ones: UINT64_MAX once cast */
	default: *lo = INT64_MIN; *hi = INT64_MAX; break;
	}
}

/* A bound input of Clip-11+, NULL when absent or empty. */
static const pn_tensor *clip_bound(pn_kctx *k, int i)
{
	const pn_tensor *t = pn_kin(k, i);
	return t && t->kind == PN_KIND_TENSOR && t->numel > 0 && t->data ? t : NULL;
}

int pn_kernel_Clip(pn_kctx *k)
{
	const pn_tensor *x = pn_kin(k, 0);
	if (!x)
		return pn_kfail(k, "Clip has no input");
	pn_ewparam p = {.a = -INFINITY, .b = INFINITY};
	int_limits(x->dtype, &p.ia, &p.ib);
	if (k->opset < 11) {
		const pn_attr *lo = pn_attr_find(k->node, "min"), *hi = pn_attr_find(k->node, "max");
		if (lo) {
			p.a = lo->f;
			p.ia = (int64_t)lo->f;
		}
		if (hi) {
			p.b = hi->f;
			p.ib = (int64_t)hi->f;
		}
	} else {
		const pn_tensor *lo = clip_bound(k, 1), *hi = clip_bound(k, 2);
		if (lo) {
			p.a = pn_tensor_get_f64(lo, 0);
			p.ia = pn_tensor_get_i64(lo, 0);
		}
		if (hi) {
			p.b = pn_tensor_get_f64(hi, 0);
			p.ib = pn_tensor_get_i64(hi, 0);
		}
	}
	return pn_ew_unary(k, Clip_tab, 0, &p, 1);
}

/* --- PRelu ------------------------------------------------------------------------------- */

/* y = x < 0 ? slope * x : x, slope broadcast onto x. */
#define PRELU_DEF(op, sfx, DT, T, CT, UT, LD, ST, ...)                                 \
	PN_EW_SEG2(op##_##sfx, T, T, T, CT, UT, LD, LD, ST, __VA_ARGS__)
#define PRELU_DEF_F16(op, sfx, ...) PN_EW_STAGED2(op##_##sfx, op##_f32, 1)
PN_EW_FLOATS(PRELU_DEF, PRelu, x < 0 ? x * y : x)
PN_EW_SINTS(PRELU_DEF, PRelu, x < 0 ? (ct)((ut)x * (ut)y) : x)
PN_EW_UINTS(PRELU_DEF, PRelu, ((void)y, x))
static const pn_seg_fn PRelu_tab[PN_DTYPE_COUNT] = {
	PN_EW_FLOATS(PN_EW_ENT, PRelu, 0) PN_EW_SINTS(PN_EW_ENT, PRelu, 0)
	PN_EW_UINTS(PN_EW_ENT, PRelu, 0)};

/* Output has the shape and type of X in every opset. */
int pn_infer_PRelu(pn_ictx *c)
{
	pn_iset_like(c, 0, 0, 0);
	return 0;
}

int pn_kernel_PRelu(pn_kctx *k)
{
	const pn_tensor *x = pn_kin(k, 0), *s = pn_kin(k, 1);
	if (!x || !s)
		return pn_kfail(k, "PRelu needs X and slope");
	if (x->dtype != s->dtype)
		return pn_kfail(k, "PRelu slope is %s, X is %s", pn_dtype_name(s->dtype),
				pn_dtype_name(x->dtype));
	pn_seg_fn fn = pn_ew_pick(PRelu_tab, x->dtype);
	if (!fn)
		return pn_kfail(k, "PRelu does not support %s", pn_dtype_name(x->dtype));
	pn_tensor *o = pn_out_alloc(k, 0, x->dtype, x->rank, x->dims);
	if (!o)
		return -1;
	pn_ewarg in[2] = {pn_ewarg_of(x), pn_ewarg_of(s)};
	/* Before opset 7 a 1-D slope of C values applies per channel (axis 1). */
	int64_t sdims[PN_MAX_RANK];
	if (k->opset < 7 && s->numel > 1 && s->rank == 1 && x->rank >= 2 && s->dims[0] == x->dims[1]) {
		for (int d = 0; d < x->rank; d++)
			sdims[d] = d == 1 ? s->dims[0] : 1;
		in[1].rank = x->rank;
		in[1].dims = sdims;
	}
	pn_ewplan p;
	if (pn_ewplan_init(&p, pn_ewarg_of(o), in, 2))
		return pn_kfail(k, "PRelu slope does not broadcast onto X");
	pn_ewplan_run(&p, fn, NULL, 1);
	return 0;
}
