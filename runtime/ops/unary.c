/*
 * unary.c - elementwise math on one tensor: Abs ... Tanh, Not, BitwiseNot,
 * IsNaN, IsInf, and Identity (tensors, sequences and optionals).
 *
 * Float ops compute in the storage type (float16 and bfloat16 in float);
 * integer ops wrap like two's complement hardware does.
 */
#include "runtime/ops/mathutil.h"

#include <stdlib.h>
#include <string.h>
#include <tgmath.h>  /* after mathutil.h: complex.h would turn its parameter I into a macro */

#include "runtime/kernel.h"
#include "runtime/ops/elemwise.h"

/* f32(x) for float compute types (float32, float16, bfloat16): the
 * vectorisable versions in mathutil.h; E for double. */
#define F32_OR(x, f32, E) _Generic((x), float: f32((float)(x)), default: (E))

/* Defines pn_kernel_<op> over the float types with expression E. */
#define FLOAT_OP(op, cost, E)                                                          \
	PN_EW_FLOATS(PN_EW_DEF1, op, E)                                                 \
	static const pn_seg_fn op##_tab[PN_DTYPE_COUNT] = {PN_EW_FLOATS(PN_EW_ENT, op, 0)}; \
	int pn_kernel_##op(pn_kctx *k)                                                  \
	{                                                                               \
		return pn_ew_unary(k, op##_tab, 0, NULL, cost);                         \
	}

FLOAT_OP(Acos, 20, acos(x))
FLOAT_OP(Acosh, 20, acosh(x))
FLOAT_OP(Asin, 20, asin(x))
FLOAT_OP(Asinh, 20, asinh(x))
FLOAT_OP(Atan, 20, atan(x))
FLOAT_OP(Atanh, 20, atanh(x))
FLOAT_OP(Ceil, 1, ceil(x))
FLOAT_OP(Cos, 20, cos(x))
FLOAT_OP(Cosh, 20, cosh(x))
FLOAT_OP(Erf, 20, F32_OR(x, pn_mu_erff, erf(x)))
FLOAT_OP(Exp, 10, F32_OR(x, pn_mu_expf, exp(x)))
FLOAT_OP(Floor, 1, floor(x))
FLOAT_OP(Log, 10, log(x))
FLOAT_OP(Reciprocal, 2, (ct)1 / x)
FLOAT_OP(Round, 1, rint(x))   /* default rounding mode: half to even */
FLOAT_OP(Sin, 20, sin(x))
FLOAT_OP(Sinh, 20, sinh(x))
FLOAT_OP(Sqrt, 4, sqrt(x))
FLOAT_OP(Tan, 20, tan(x))
FLOAT_OP(Tanh, 10, F32_OR(x, pn_mu_tanhf, tanh(x)))

/* --- ops on integers too ---------------------------------------------------------- */

PN_EW_FLOATS(PN_EW_DEF1, Abs, fabs(x))
PN_EW_SINTS(PN_EW_DEF1, Abs, x < 0 ? (ct)(0 - (ut)x) : x)
PN_EW_UINTS(PN_EW_DEF1, Abs, x)
static const pn_seg_fn Abs_tab[PN_DTYPE_COUNT] = {
	PN_EW_FLOATS(PN_EW_ENT, Abs, 0) PN_EW_SINTS(PN_EW_ENT, Abs, 0) PN_EW_UINTS(PN_EW_ENT, Abs, 0)};

int pn_kernel_Abs(pn_kctx *k)
{
	return pn_ew_unary(k, Abs_tab, 0, NULL, 1);
}

PN_EW_FLOATS(PN_EW_DEF1, Neg, -x)
PN_EW_SINTS(PN_EW_DEF1, Neg, (ct)(0 - (ut)x))
static const pn_seg_fn Neg_tab[PN_DTYPE_COUNT] = {
	PN_EW_FLOATS(PN_EW_ENT, Neg, 0) PN_EW_SINTS(PN_EW_ENT, Neg, 0)};

int pn_kernel_Neg(pn_kctx *k)
{
	return pn_ew_unary(k, Neg_tab, 0, NULL, 1);
}

/* NaN stays NaN, as numpy.sign does. */
PN_EW_FLOATS(PN_EW_DEF1, Sign, x > 0 ? (ct)1 : x < 0 ? (ct)-1 : x)
PN_EW_SINTS(PN_EW_DEF1, Sign, (ct)((x > 0) - (x < 0)))
PN_EW_UINTS(PN_EW_DEF1, Sign, (ct)(x > 0))
static const pn_seg_fn Sign_tab[PN_DTYPE_COUNT] = {
	PN_EW_FLOATS(PN_EW_ENT, Sign, 0) PN_EW_SINTS(PN_EW_ENT, Sign, 0)
	PN_EW_UINTS(PN_EW_ENT, Sign, 0)};

int pn_kernel_Sign(pn_kctx *k)
{
	return pn_ew_unary(k, Sign_tab, 0, NULL, 1);
}

PN_EW_BOOLS(PN_EW_DEF1, Not, (ct)!x)
static const pn_seg_fn Not_tab[PN_DTYPE_COUNT] = {PN_EW_BOOLS(PN_EW_ENT, Not, 0)};

int pn_kernel_Not(pn_kctx *k)
{
	return pn_ew_unary(k, Not_tab, 0, NULL, 1);
}

PN_EW_SINTS(PN_EW_DEF1, BitwiseNot, (ct)~(ut)x)
PN_EW_UINTS(PN_EW_DEF1, BitwiseNot, (ct)~x)
static const pn_seg_fn BitwiseNot_tab[PN_DTYPE_COUNT] = {
	PN_EW_SINTS(PN_EW_ENT, BitwiseNot, 0) PN_EW_UINTS(PN_EW_ENT, BitwiseNot, 0)};

int pn_kernel_BitwiseNot(pn_kctx *k)
{
	return pn_ew_unary(k, BitwiseNot_tab, 0, NULL, 1);
}

/* --- predicates -------------------------------------------------------------------- */

PN_EW_FLOATS(PN_EW_DEF1B, IsNaN, x != x)
static const pn_seg_fn IsNaN_tab[PN_DTYPE_COUNT] = {PN_EW_FLOATS(PN_EW_ENT, IsNaN, 0)};

int pn_kernel_IsNaN(pn_kctx *k)
{
	return pn_ew_unary(k, IsNaN_tab, PN_BOOL, NULL, 1);
}

/* P->ia: detect_positive, P->ib: detect_negative. */
PN_EW_FLOATS(PN_EW_DEF1B, IsInf, isinf(x) && (x > 0 ? P->ia : P->ib))
static const pn_seg_fn IsInf_tab[PN_DTYPE_COUNT] = {PN_EW_FLOATS(PN_EW_ENT, IsInf, 0)};

int pn_kernel_IsInf(pn_kctx *k)
{
	pn_ewparam prm = {.ia = pn_attr_int(k->node, "detect_positive", 1) != 0,
			  .ib = pn_attr_int(k->node, "detect_negative", 1) != 0};
	return pn_ew_unary(k, IsInf_tab, PN_BOOL, &prm, 1);
}

/* --- Identity ----------------------------------------------------------------------- */

int pn_kernel_Identity(pn_kctx *k)
{
	const pn_tensor *x = pn_kin(k, 0);
	if (!x)
		return pn_kfail(k, "Identity has no input");
	if (x->kind == PN_KIND_TENSOR) {
		pn_tensor *o = pn_out_alloc(k, 0, x->dtype, x->rank, x->dims);
		if (!o)
			return -1;
		if (pn_ew_copy(o, x))
			return pn_kfail(k, "out of memory");
		return 0;
	}
	/* Sequence or optional: a deep copy takes the place of the output. */
	pn_tensor *c = pn_tensor_clone(x);
	if (!c)
		return pn_kfail(k, "out of memory");
	pn_tensor *o = pn_out_container(k, 0, x->kind, x->dtype);
	if (!o) {
		pn_tensor_free(c);
		return -1;
	}
	*o = *c;
	free(c);
	return 0;
}
