/*
 * binary.c - broadcasting binary and variadic ops: arithmetic (Add, Sub,
 * Mul, Div, Pow, Mod, BitShift), Max/Min/Sum/Mean, logic, bitwise ops,
 * comparisons and Where.
 *
 * Shapes broadcast the numpy way (runtime/ops/elemwise.h plans the loops and
 * its fast paths).  Before opset 7, Add & co. broadcast only with the
 * `broadcast` attribute, B aligned onto A at `axis` (trailing by default).
 *
 * Integer semantics follow numpy, which the ONNX reference implementation
 * uses: arithmetic wraps, Div truncates, Mod takes the divisor's sign unless
 * fmod=1; division or modulo by zero gives 0 instead of trapping.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <tgmath.h>

#include "runtime/infer.h"
#include "runtime/kernel.h"
#include "runtime/ops/elemwise.h"

/* --- scalar helpers ------------------------------------------------------------------ */

static inline int64_t idiv(int64_t x, int64_t y)
{
	if (y == 0)
		return 0;
	if (y == -1)
		return (int64_t)(0 - (uint64_t)x);
	return x / y;
}

static inline uint64_t udiv(uint64_t x, uint64_t y)
{
	return y ? x / y : 0;
}

/* Remainder with the sign of the dividend (C, numpy.fmod). */
static inline int64_t imod_c(int64_t x, int64_t y)
{
	return y == 0 || y == -1 ? 0 : x % y;
}

/* Remainder with the sign of the divisor (Python, numpy.mod). */
static inline int64_t imod_py(int64_t x, int64_t y)
{
	int64_t r = imod_c(x, y);
	return r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
}

static inline uint64_t umod(uint64_t x, uint64_t y)
{
	return y ? x % y : 0;
}

static inline double fmod_py(double x, double y)
{
	double m = fmod(x, y);
	if (m != 0 && ((y < 0) != (m < 0)))
		m += y;
	else if (m == 0)
		m = copysign(0.0, y);
	return m;
}

/* double to int64 like x86 conversion does: out of range and NaN give
 * INT64_MIN (narrower types then keep the low bits). */
static inline int64_t d2i(double v)
{
	return v >= -9223372036854775808.0 && v < 9223372036854775808.0 ? (int64_t)v : INT64_MIN;
}

/* x^y in wrapping integer arithmetic; negative y gives 0 unless |x| = 1. */
static inline int64_t ipow(int64_t x, int64_t y)
{
	if (y < 0)
		return x == 1 ? 1 : x == -1 ? (y & 1 ? -1 : 1) : 0;
	uint64_t r = 1, b = (uint64_t)x;
	while (y) {
		if (y & 1)
			r *= b;
		b *= b;
		y >>= 1;
	}
	return (int64_t)r;
}

/* --- operands and broadcasting ------------------------------------------------------- */

/* A tensor input, or NULL with k->err set. */
static const pn_tensor *need_in(pn_kctx *k, int i)
{
	const pn_tensor *t = pn_kin(k, i);
	if (!t || t->kind != PN_KIND_TENSOR || (!t->data && t->numel)) {
		pn_kfail(k, "%s input %d is missing or not a tensor", k->node->op_type, i);
		return NULL;
	}
	return t;
}

/* Operand b as it broadcasts against a: before opset 7 with broadcast=1 it
 * is aligned onto a at `axis`; buf holds the dims then. */
static pn_ewarg legacy_operand(pn_kctx *k, const pn_tensor *a, const pn_tensor *b, int64_t *buf)
{
	pn_ewarg e = pn_ewarg_of(b);
	if (k->opset >= 7 || !pn_attr_int(k->node, "broadcast", 0) || b->rank > a->rank)
		return e;
	int64_t axis = pn_attr_int(k->node, "axis", a->rank - b->rank);
	if (axis < 0)
		axis += a->rank;
	if (axis < 0 || axis + b->rank > a->rank)
		return e;
	for (int d = 0; d < a->rank; d++)
		buf[d] = d >= axis && d < axis + b->rank ? b->dims[d - axis] : 1;
	e.rank = a->rank;
	e.dims = buf;
	return e;
}

/* Allocates output 0 with the broadcast shape of n operands. */
static pn_tensor *alloc_bcast(pn_kctx *k, int dtype, const pn_ewarg *in, int n)
{
	int r = in[0].rank;
	int64_t dims[PN_MAX_RANK];
	for (int d = 0; d < r; d++)
		dims[d] = in[0].dims[d];
	for (int i = 1; i < n; i++) {
		int64_t nd[PN_MAX_RANK];
		if (in[i].rank > PN_MAX_RANK ||
		    pn_ew_bcast_dims(r, dims, in[i].rank, in[i].dims, &r, nd)) {
			pn_kfail(k, "%s: input shapes do not broadcast", k->node->op_type);
			return NULL;
		}
		memcpy(dims, nd, sizeof(int64_t) * (size_t)r);
	}
	return pn_out_alloc(k, 0, dtype, r, dims);
}

/* out = fn(a, b) over the broadcast of a and b. */
static int run_plan(pn_kctx *k, pn_tensor *o, const pn_ewarg *in, int n, pn_seg_fn fn,
		    const pn_ewparam *prm, int cost)
{
	pn_ewplan p;
	if (pn_ewplan_init(&p, pn_ewarg_of(o), in, n))
		return pn_kfail(k, "%s: input shapes do not broadcast", k->node->op_type);
	pn_ewplan_run(&p, fn, prm, cost);
	return 0;
}

/* Binary op with both inputs of one dtype; output that dtype or bool. */
static int run_binary(pn_kctx *k, const pn_seg_fn *tab, int bool_out, const pn_ewparam *prm,
		      int cost)
{
	const pn_tensor *a = need_in(k, 0), *b = a ? need_in(k, 1) : NULL;
	if (!b)
		return -1;
	if (a->dtype != b->dtype)
		return pn_kfail(k, "%s: inputs are %s and %s", k->node->op_type,
				pn_dtype_name(a->dtype), pn_dtype_name(b->dtype));
	pn_seg_fn fn = pn_ew_pick(tab, a->dtype);
	if (!fn)
		return pn_kfail(k, "%s does not support %s", k->node->op_type,
				pn_dtype_name(a->dtype));
	int64_t buf[PN_MAX_RANK];
	pn_ewarg in[2] = {pn_ewarg_of(a), legacy_operand(k, a, b, buf)};
	pn_tensor *o = alloc_bcast(k, bool_out ? PN_BOOL : a->dtype, in, 2);
	if (!o)
		return -1;
	return run_plan(k, o, in, 2, fn, prm, cost);
}

#define ALL_NUM_TAB(op)                                                                  \
	static const pn_seg_fn op##_tab[PN_DTYPE_COUNT] = {                              \
		PN_EW_FLOATS(PN_EW_ENT, op, 0) PN_EW_SINTS(PN_EW_ENT, op, 0)             \
		PN_EW_UINTS(PN_EW_ENT, op, 0)}
#define INT_TAB(op)                                                                      \
	static const pn_seg_fn op##_tab[PN_DTYPE_COUNT] = {                              \
		PN_EW_SINTS(PN_EW_ENT, op, 0) PN_EW_UINTS(PN_EW_ENT, op, 0)}

/* --- Add, Sub, Mul, Div ------------------------------------------------------------------ */

PN_EW_FLOATS(PN_EW_DEF2, Add, x + y)
PN_EW_SINTS(PN_EW_DEF2, Add, (ct)((ut)x + (ut)y))
PN_EW_UINTS(PN_EW_DEF2, Add, (ct)((ut)x + (ut)y))
ALL_NUM_TAB(Add);

PN_EW_FLOATS(PN_EW_DEF2, Sub, x - y)
PN_EW_SINTS(PN_EW_DEF2, Sub, (ct)((ut)x - (ut)y))
PN_EW_UINTS(PN_EW_DEF2, Sub, (ct)((ut)x - (ut)y))
ALL_NUM_TAB(Sub);

PN_EW_FLOATS(PN_EW_DEF2, Mul, x * y)
PN_EW_SINTS(PN_EW_DEF2, Mul, (ct)((ut)x * (ut)y))
PN_EW_UINTS(PN_EW_DEF2, Mul, (ct)((ut)x * (ut)y))
ALL_NUM_TAB(Mul);

PN_EW_FLOATS(PN_EW_DEF2, Div, x / y)
PN_EW_SINTS(PN_EW_DEF2, Div, (ct)idiv(x, y))
PN_EW_UINTS(PN_EW_DEF2, Div, (ct)udiv(x, y))
ALL_NUM_TAB(Div);

int pn_kernel_Add(pn_kctx *k)
{
	return run_binary(k, Add_tab, 0, NULL, 1);
}

int pn_kernel_Sub(pn_kctx *k)
{
	return run_binary(k, Sub_tab, 0, NULL, 1);
}

int pn_kernel_Mul(pn_kctx *k)
{
	return run_binary(k, Mul_tab, 0, NULL, 1);
}

int pn_kernel_Div(pn_kctx *k)
{
	return run_binary(k, Div_tab, 0, NULL, 2);
}

/* --- Mod ------------------------------------------------------------------------------------ */

PN_EW_FLOATS(PN_EW_DEF2, ModF, (ct)fmod((double)x, (double)y))
PN_EW_SINTS(PN_EW_DEF2, ModF, (ct)imod_c(x, y))
PN_EW_UINTS(PN_EW_DEF2, ModF, (ct)umod(x, y))
ALL_NUM_TAB(ModF);

PN_EW_FLOATS(PN_EW_DEF2, ModP, (ct)fmod_py((double)x, (double)y))
PN_EW_SINTS(PN_EW_DEF2, ModP, (ct)imod_py(x, y))
PN_EW_UINTS(PN_EW_DEF2, ModP, (ct)umod(x, y))
ALL_NUM_TAB(ModP);

int pn_kernel_Mod(pn_kctx *k)
{
	int f = (int)pn_attr_int(k->node, "fmod", 0);
	return run_binary(k, f ? ModF_tab : ModP_tab, 0, NULL, 4);
}

/* --- BitShift and bitwise ops ---------------------------------------------------------------- */

/* P->flag: 1 for LEFT; shifting by the width or more gives 0. */
PN_EW_UINTS(PN_EW_DEF2, BitShift,
	    y >= sizeof(ct) * 8 ? (ct)0 : P->flag ? (ct)((ut)x << y) : (ct)(x >> y))
static const pn_seg_fn BitShift_tab[PN_DTYPE_COUNT] = {PN_EW_UINTS(PN_EW_ENT, BitShift, 0)};

int pn_kernel_BitShift(pn_kctx *k)
{
	const char *dir = pn_attr_str(k->node, "direction", "");
	pn_ewparam p = {.flag = !strcmp(dir, "LEFT")};
	if (!p.flag && strcmp(dir, "RIGHT"))
		return pn_kfail(k, "BitShift direction '%s' is not LEFT or RIGHT", dir);
	return run_binary(k, BitShift_tab, 0, &p, 1);
}

PN_EW_SINTS(PN_EW_DEF2, BitwiseAnd, (ct)(x & y))
PN_EW_UINTS(PN_EW_DEF2, BitwiseAnd, (ct)(x & y))
INT_TAB(BitwiseAnd);
PN_EW_SINTS(PN_EW_DEF2, BitwiseOr, (ct)(x | y))
PN_EW_UINTS(PN_EW_DEF2, BitwiseOr, (ct)(x | y))
INT_TAB(BitwiseOr);
PN_EW_SINTS(PN_EW_DEF2, BitwiseXor, (ct)(x ^ y))
PN_EW_UINTS(PN_EW_DEF2, BitwiseXor, (ct)(x ^ y))
INT_TAB(BitwiseXor);

int pn_kernel_BitwiseAnd(pn_kctx *k)
{
	return run_binary(k, BitwiseAnd_tab, 0, NULL, 1);
}

int pn_kernel_BitwiseOr(pn_kctx *k)
{
	return run_binary(k, BitwiseOr_tab, 0, NULL, 1);
}

int pn_kernel_BitwiseXor(pn_kctx *k)
{
	return run_binary(k, BitwiseXor_tab, 0, NULL, 1);
}

/* --- logic ---------------------------------------------------------------------------------- */

PN_EW_BOOLS(PN_EW_DEF2, And, (ct)(x && y))
PN_EW_BOOLS(PN_EW_DEF2, Or, (ct)(x || y))
PN_EW_BOOLS(PN_EW_DEF2, Xor, (ct)(!x != !y))
static const pn_seg_fn And_tab[PN_DTYPE_COUNT] = {PN_EW_BOOLS(PN_EW_ENT, And, 0)};
static const pn_seg_fn Or_tab[PN_DTYPE_COUNT] = {PN_EW_BOOLS(PN_EW_ENT, Or, 0)};
static const pn_seg_fn Xor_tab[PN_DTYPE_COUNT] = {PN_EW_BOOLS(PN_EW_ENT, Xor, 0)};

int pn_kernel_And(pn_kctx *k)
{
	return run_binary(k, And_tab, 1, NULL, 1);
}

int pn_kernel_Or(pn_kctx *k)
{
	return run_binary(k, Or_tab, 1, NULL, 1);
}

int pn_kernel_Xor(pn_kctx *k)
{
	return run_binary(k, Xor_tab, 1, NULL, 1);
}

/* --- comparisons ----------------------------------------------------------------------------- */

#define CMP(op, E)                                                                       \
	PN_EW_FLOATS(PN_EW_DEF2B, op, E)                                                  \
	PN_EW_SINTS(PN_EW_DEF2B, op, E)                                                   \
	PN_EW_UINTS(PN_EW_DEF2B, op, E)                                                   \
	PN_EW_BOOLS(PN_EW_DEF2B, op, E)                                                   \
	static const pn_seg_fn op##_tab[PN_DTYPE_COUNT] = {                               \
		PN_EW_FLOATS(PN_EW_ENT, op, 0) PN_EW_SINTS(PN_EW_ENT, op, 0)              \
		PN_EW_UINTS(PN_EW_ENT, op, 0) PN_EW_BOOLS(PN_EW_ENT, op, 0)};           \
	int pn_kernel_##op(pn_kctx *k)                                                   \
	{                                                                                \
		return run_binary(k, op##_tab, 1, NULL, 1);                              \
	}

CMP(Greater, x > y)
CMP(GreaterOrEqual, x >= y)
CMP(Less, x < y)
CMP(LessOrEqual, x <= y)

PN_EW_FLOATS(PN_EW_DEF2B, Equal, x == y)
PN_EW_SINTS(PN_EW_DEF2B, Equal, x == y)
PN_EW_UINTS(PN_EW_DEF2B, Equal, x == y)
PN_EW_BOOLS(PN_EW_DEF2B, Equal, x == y)

static void Equal_str(char *const *p, const int64_t *s, int64_t n, const void *ctx)
{
	uint8_t *o = (uint8_t *)p[0];
	char *const *a = (char *const *)p[1], *const *b = (char *const *)p[2];
	(void)ctx;
	for (int64_t i = 0; i < n; i++) {
		const char *x = a[i * s[1]], *y = b[i * s[2]];
		o[i] = !strcmp(x ? x : "", y ? y : "");
	}
}

static const pn_seg_fn Equal_tab[PN_DTYPE_COUNT] = {
	PN_EW_FLOATS(PN_EW_ENT, Equal, 0) PN_EW_SINTS(PN_EW_ENT, Equal, 0)
	PN_EW_UINTS(PN_EW_ENT, Equal, 0) PN_EW_BOOLS(PN_EW_ENT, Equal, 0)[PN_STRING] = Equal_str};

int pn_kernel_Equal(pn_kctx *k)
{
	return run_binary(k, Equal_tab, 1, NULL, 1);
}

/* --- Max, Min, Sum, Mean (variadic) ----------------------------------------------------------- */

/* NaN wins, as in numpy.maximum / numpy.minimum. */
PN_EW_FLOATS(PN_EW_DEF2, Max, x > y || x != x ? x : y)
PN_EW_SINTS(PN_EW_DEF2, Max, x > y ? x : y)
PN_EW_UINTS(PN_EW_DEF2, Max, x > y ? x : y)
ALL_NUM_TAB(Max);

PN_EW_FLOATS(PN_EW_DEF2, Min, x < y || x != x ? x : y)
PN_EW_SINTS(PN_EW_DEF2, Min, x < y ? x : y)
PN_EW_UINTS(PN_EW_DEF2, Min, x < y ? x : y)
ALL_NUM_TAB(Min);

/* Mean = Sum / n, divided in the element type. */
PN_EW_FLOATS(PN_EW_DEF1, MeanDiv, x / (ct)P->a)
PN_EW_SINTS(PN_EW_DEF1, MeanDiv, (ct)idiv(x, P->ia))
PN_EW_UINTS(PN_EW_DEF1, MeanDiv, (ct)udiv(x, (uint64_t)P->ia))
ALL_NUM_TAB(MeanDiv);

/* out = in0 op in1 op ... (broadcast), folding left to right. */
static int run_variadic(pn_kctx *k, const pn_seg_fn *tab, int mean)
{
	int n = k->n_in;
	pn_ewarg in[2];
	if (n < 1)
		return pn_kfail(k, "%s needs at least one input", k->node->op_type);
	const pn_tensor *first = need_in(k, 0);
	if (!first)
		return -1;
	pn_seg_fn fn = pn_ew_pick(tab, first->dtype);
	if (!fn)
		return pn_kfail(k, "%s does not support %s", k->node->op_type,
				pn_dtype_name(first->dtype));
	/* Output shape: fold the broadcast over every input. */
	int r = first->rank;
	int64_t dims[PN_MAX_RANK];
	memcpy(dims, first->dims, sizeof(int64_t) * (size_t)r);
	for (int i = 1; i < n; i++) {
		const pn_tensor *t = need_in(k, i);
		if (!t)
			return -1;
		if (t->dtype != first->dtype)
			return pn_kfail(k, "%s: inputs are %s and %s", k->node->op_type,
					pn_dtype_name(first->dtype), pn_dtype_name(t->dtype));
		int64_t nd[PN_MAX_RANK];
		if (pn_ew_bcast_dims(r, dims, t->rank, t->dims, &r, nd))
			return pn_kfail(k, "%s: input shapes do not broadcast", k->node->op_type);
		memcpy(dims, nd, sizeof(int64_t) * (size_t)r);
	}
	pn_tensor *o = pn_out_alloc(k, 0, first->dtype, r, dims);
	if (!o)
		return -1;
	if (n == 1) {
		if (pn_ew_copy(o, first))
			return pn_kfail(k, "out of memory");
	} else {
		in[0] = pn_ewarg_of(first);
		in[1] = pn_ewarg_of(k->in[1]);
		if (run_plan(k, o, in, 2, fn, NULL, 1))
			return -1;
		for (int i = 2; i < n; i++) {
			in[0] = pn_ewarg_of(o);
			in[1] = pn_ewarg_of(k->in[i]);
			if (run_plan(k, o, in, 2, fn, NULL, 1))
				return -1;
		}
	}
	if (mean && n > 1) {
		pn_ewparam p = {.a = n, .ia = n};
		pn_ew_map(o, o, pn_ew_pick(MeanDiv_tab, o->dtype), &p, 1);
	}
	return 0;
}

int pn_kernel_Max(pn_kctx *k)
{
	return run_variadic(k, Max_tab, 0);
}

int pn_kernel_Min(pn_kctx *k)
{
	return run_variadic(k, Min_tab, 0);
}

int pn_kernel_Sum(pn_kctx *k)
{
	return run_variadic(k, Add_tab, 0);
}

int pn_kernel_Mean(pn_kctx *k)
{
	return run_variadic(k, Add_tab, 1);
}

/* --- Pow ---------------------------------------------------------------------------------------- */

/* Same-dtype float fast paths. */
PN_EW_FLOATS(PN_EW_DEF2, PowSame, pow(x, y))
static const pn_seg_fn PowSame_tab[PN_DTYPE_COUNT] = {PN_EW_FLOATS(PN_EW_ENT, PowSame, 0)};
PN_EW_FLOATS(PN_EW_DEF1, Square, x * x)
static const pn_seg_fn Square_tab[PN_DTYPE_COUNT] = {PN_EW_FLOATS(PN_EW_ENT, Square, 0)};
/* x^3 as (x * x) * x, as ONNX Runtime computes it: GELU's tanh form raises
 * every activation to the third power, and pow() per element is most of
 * that subgraph's time.  Within an ulp of pow. */
PN_EW_FLOATS(PN_EW_DEF1, Cube, x * x * x)
static const pn_seg_fn Cube_tab[PN_DTYPE_COUNT] = {PN_EW_FLOATS(PN_EW_ENT, Cube, 0)};

/* Any base with the exponent converted to double (float bases, and integer
 * bases with a float exponent: computed in double, truncated like numpy's
 * astype), or integer bases with an int64 exponent (exact). */
#define POW_D(op, sfx, DT, T, CT, UT, LD, ST, ...)                                       \
	PN_EW_SEG2(op##_##sfx, T, double, T, double, UT, LD, PN_ID, ST, __VA_ARGS__)
#define POW_D_F16 POW_D   /* a double exponent: not the float32 segment */
#define POW_I(op, sfx, DT, T, CT, UT, LD, ST, ...)                                       \
	PN_EW_SEG2(op##_##sfx, T, int64_t, T, int64_t, UT, LD, PN_ID, ST, __VA_ARGS__)
PN_EW_FLOATS(POW_D, PowD, pow(x, y))
PN_EW_SINTS(POW_D, PowD, d2i(pow(x, y)))
PN_EW_UINTS(POW_D, PowD, d2i(pow(x, y)))
PN_EW_SINTS(POW_I, PowI, ipow(x, y))
PN_EW_UINTS(POW_I, PowI, ipow(x, y))
static const pn_seg_fn PowD_tab[PN_DTYPE_COUNT] = {
	PN_EW_FLOATS(PN_EW_ENT, PowD, 0) PN_EW_SINTS(PN_EW_ENT, PowD, 0)
	PN_EW_UINTS(PN_EW_ENT, PowD, 0)};
static const pn_seg_fn PowI_tab[PN_DTYPE_COUNT] = {
	PN_EW_SINTS(PN_EW_ENT, PowI, 0) PN_EW_UINTS(PN_EW_ENT, PowI, 0)};

int pn_kernel_Pow(pn_kctx *k)
{
	const pn_tensor *a = need_in(k, 0), *b = a ? need_in(k, 1) : NULL;
	if (!b)
		return -1;
	int fa = pn_dtype_is_float(a->dtype), ia = pn_dtype_is_int(a->dtype);
	if (!fa && !ia)
		return pn_kfail(k, "Pow does not support base %s", pn_dtype_name(a->dtype));
	if (!pn_dtype_is_float(b->dtype) && !pn_dtype_is_int(b->dtype))
		return pn_kfail(k, "Pow does not support exponent %s", pn_dtype_name(b->dtype));
	int64_t buf[PN_MAX_RANK];
	pn_ewarg in[2] = {pn_ewarg_of(a), legacy_operand(k, a, b, buf)};
	pn_tensor *o = alloc_bcast(k, a->dtype, in, 2);
	if (!o)
		return -1;
	if (fa && b->dtype == a->dtype) {
		double e = b->numel == 1 ? pn_tensor_get_f64(b, 0) : 0;
		if (e == 2.0 || e == 3.0) {
			/* a one-element exponent leaves the element count alone */
			pn_ew_map(o, a, pn_ew_pick(e == 2.0 ? Square_tab : Cube_tab, a->dtype), NULL, 1);
			return 0;
		}
		return run_plan(k, o, in, 2, pn_ew_pick(PowSame_tab, a->dtype), NULL, 10);
	}
	/* Mixed dtypes: the exponent converted once to double or int64. */
	int as_int = ia && pn_dtype_is_int(b->dtype);
	void *conv = malloc(8 * (size_t)(b->numel ? b->numel : 1));
	if (!conv)
		return pn_kfail(k, "out of memory");
	for (int64_t i = 0; i < b->numel; i++) {
		if (as_int)
			((int64_t *)conv)[i] = pn_tensor_get_i64(b, i);
		else
			((double *)conv)[i] = pn_tensor_get_f64(b, i);
	}
	in[1].data = conv;
	in[1].esz = 8;
	int rc = run_plan(k, o, in, 2, pn_ew_pick(as_int ? PowI_tab : PowD_tab, a->dtype), NULL, 10);
	free(conv);
	return rc;
}

/* --- Where ----------------------------------------------------------------------------------------- */

#define WHERE_SEG(name, T)                                                               \
	static void name(char *const *p, const int64_t *s, int64_t n, const void *ctx)  \
	{                                                                                \
		T *o = (T *)p[0];                                                        \
		const uint8_t *c = (const uint8_t *)p[1];                                \
		const T *x = (const T *)p[2], *y = (const T *)p[3];                      \
		(void)ctx;                                                               \
		for (int64_t i = 0; i < n; i++)                                          \
			o[i] = c[i * s[1]] ? x[i * s[2]] : y[i * s[3]];                  \
	}
typedef struct { uint64_t lo, hi; } u128;
WHERE_SEG(Where_1, uint8_t)
WHERE_SEG(Where_2, uint16_t)
WHERE_SEG(Where_4, uint32_t)
WHERE_SEG(Where_8, uint64_t)
WHERE_SEG(Where_16, u128)

static void Where_str(char *const *p, const int64_t *s, int64_t n, const void *ctx)
{
	char **o = (char **)p[0];
	const uint8_t *c = (const uint8_t *)p[1];
	char *const *x = (char *const *)p[2], *const *y = (char *const *)p[3];
	(void)ctx;
	for (int64_t i = 0; i < n; i++) {
		const char *v = c[i * s[1]] ? x[i * s[2]] : y[i * s[3]];
		free(o[i]);
		o[i] = strdup(v ? v : "");
	}
}

int pn_infer_Where(pn_ictx *c)
{
	const pn_tinfo *cond = pn_iin(c, 0), *x = pn_iin(c, 1), *y = pn_iin(c, 2);
	if (!cond || !x || !y)
		return pn_ifail(c, "Where needs three inputs");
	pn_type t1, t2;
	if (pn_bcast_shape(c, &cond->type, &x->type, &t1) || pn_bcast_shape(c, &t1, &y->type, &t2))
		return -1;
	t2.kind = PN_KIND_TENSOR;
	t2.dtype = x->type.dtype;
	for (int d = 0; d < PN_MAX_RANK; d++)
		t2.dim_names[d] = NULL;
	c->out[0].type = t2;
	return 0;
}

int pn_kernel_Where(pn_kctx *k)
{
	const pn_tensor *c = need_in(k, 0), *x = c ? need_in(k, 1) : NULL,
			*y = x ? need_in(k, 2) : NULL;
	if (!y)
		return -1;
	if (c->dtype != PN_BOOL)
		return pn_kfail(k, "Where condition is %s, not bool", pn_dtype_name(c->dtype));
	if (x->dtype != y->dtype)
		return pn_kfail(k, "Where: X is %s, Y is %s", pn_dtype_name(x->dtype),
				pn_dtype_name(y->dtype));
	pn_seg_fn fn;
	switch (x->dtype == PN_STRING ? 0 : pn_dtype_size(x->dtype)) {
	case 0: fn = x->dtype == PN_STRING ? Where_str : NULL; break;
	case 1: fn = Where_1; break;
	case 2: fn = Where_2; break;
	case 4: fn = Where_4; break;
	case 8: fn = Where_8; break;
	case 16: fn = Where_16; break;
	default: fn = NULL; break;
	}
	if (!fn)
		return pn_kfail(k, "Where does not support %s", pn_dtype_name(x->dtype));
	pn_ewarg in[3] = {pn_ewarg_of(c), pn_ewarg_of(x), pn_ewarg_of(y)};
	pn_tensor *o = alloc_bcast(k, x->dtype, in, 3);
	if (!o)
		return -1;
	return run_plan(k, o, in, 3, fn, NULL, 1);
}
