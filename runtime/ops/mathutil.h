/*
 * mathutil.h - helpers shared by the math kernels (matmul.c, einsum.c,
 * quant.c, norm.c, reduce.c).
 *
 * Kernels compute in one of three types so that each loop is written once
 * per compute type, not once per storage dtype: float (float32, float16,
 * bfloat16), double (float64) and int64 (every integer type and bool).
 * A pn_cbuf is a tensor's contents seen in a compute type: the tensor's own
 * data when it already has that type, else a converted heap copy.
 */
#ifndef PN_OPS_MATHUTIL_H
#define PN_OPS_MATHUTIL_H

#include <stdint.h>

#include "runtime/kernel.h"

/* Compute type of a storage dtype: PN_FLOAT, PN_DOUBLE or PN_INT64; 0 when
 * the dtype is not numeric. */
int pn_mu_ctype(int dtype);

typedef struct pn_cbuf {
	void *p;      /* n elements of the compute type */
	void *heap;   /* owned copy, or NULL when p is the tensor's data */
} pn_cbuf;

/* Contents of t as compute type ct (converted copy if needed). */
int  pn_mu_in(pn_kctx *k, const pn_tensor *t, int ct, pn_cbuf *b);
/* Storage in compute type ct for output t: t's data when the types agree,
 * else scratch that pn_mu_commit converts into t. */
int  pn_mu_out(pn_kctx *k, pn_tensor *t, int ct, pn_cbuf *b);
void pn_mu_commit(pn_tensor *t, int ct, pn_cbuf *b);
void pn_mu_free(pn_cbuf *b);

/* Converts n elements between numeric dtypes (C conversion semantics;
 * float16/bfloat16 round to nearest even, bool is x != 0). */
void pn_mu_convert(int sdt, const void *src, int ddt, void *dst, int64_t n);

/* dst (contiguous, shape dims) = src read with element strides (0 for a
 * broadcast dim).  esz is the element size in bytes. */
void pn_mu_gather(size_t esz, int rank, const int64_t *dims, const int64_t *strides,
		  const void *src, void *dst);

/* Row-major element strides of a shape. */
void pn_mu_strides(int rank, const int64_t *dims, int64_t *strides);

/* Splits a shape around one axis: O = prod(dims[:axis]), R = dims[axis],
 * I = prod(dims[axis+1:]). */
void pn_mu_ori(int rank, const int64_t *dims, int axis, int64_t *O, int64_t *R, int64_t *I);

/* Reads a scalar (or one-element) integer tensor; -1 if it is not one. */
int pn_mu_scalar_i64(const pn_tensor *t, int64_t *v);

/* Batched row-major products C[b] = A[offa[b]] x B[offb[b]] ([M,K] x [K,N],
 * C items contiguous) in compute type ct, or PN_INT32 for the quantized ops
 * (matmul.c). */
void pn_mu_bmm(int ct, const void *A, const void *B, void *C, int64_t M, int64_t N, int64_t K,
	       const int64_t *offa, const int64_t *offb, int64_t nb);

/* Errors below were measured over all 2^32 floats against libm in double
 * (AVX-512 build): exp 1.02 ulp, sigmoid 1.97, tanh 1.51, erf 1.31. */

/* a * b + c, fused where the target has FMA (one rounding, half the
 * instructions); results then differ from a build without it in the last
 * bits, never between runs or thread counts of one build. */
#if defined(__FMA__)
#define PN_MU_FMA(a, b, c) __builtin_fmaf(a, b, c)
#else
#define PN_MU_FMA(a, b, c) ((a) * (b) + (c))
#endif

/*
 * exp for float32 as plain arithmetic, so loops calling it vectorise (libm's
 * expf is an opaque call).  Cody-Waite reduction x = n ln2 + f, |f| <=
 * ln2/2, a degree-6 polynomial for e^f, and 2^n applied in two halves so
 * results in the denormal range and overflow to inf come out right.  Within
 * 1.1 ulp of the exact value; NaN gives NaN (it fails both clamp tests and
 * runs through the arithmetic: no select, which would make the compiler
 * mask every vector operation), -inf gives 0, +inf gives inf.
 */
static inline float pn_mu_expf(float x)
{
	float c = x < -104.0f ? -104.0f : x > 89.0f ? 89.0f : x;
	float n = __builtin_rintf(c * 1.44269504088896341f);
	float f = PN_MU_FMA(n, -0.693359375f, c);
	f = PN_MU_FMA(n, 2.12194440e-4f, f);
	float p = 1.9875691500e-4f;
	p = PN_MU_FMA(p, f, 1.3981999507e-3f);
	p = PN_MU_FMA(p, f, 8.3334519073e-3f);
	p = PN_MU_FMA(p, f, 4.1665795894e-2f);
	p = PN_MU_FMA(p, f, 1.6666665459e-1f);
	p = PN_MU_FMA(p, f, 5.0000001201e-1f);
	p = PN_MU_FMA(p * f, f, f) + 1.0f;
	/* The exponent from a NaN-free n: converting NaN to an integer is
	 * undefined (p carries the NaN). */
	int32_t ni = (int32_t)(n == n ? n : 0.0f), h = ni / 2;
	union { int32_t i; float f; } s1 = {.i = (h + 127) << 23}, s2 = {.i = (ni - h + 127) << 23};
	return p * s1.f * s2.f;
}

/*
 * The logistic function 1 / (1 + e^-x) from one pn_mu_expf of -|x| (never
 * overflows): e / (1 + e) for negative x, 1 / (1 + e) otherwise.  The
 * rounding error of 1 + e is carried (d + lo = 1 + e exactly, as 1 >= e)
 * and corrected for, else it alone could cost an ulp.  Within 2 ulp; NaN
 * gives NaN.
 */
static inline float pn_mu_sigmoidf(float x)
{
	float e = pn_mu_expf(-__builtin_fabsf(x));
	float d = 1.0f + e, lo = (1.0f - d) + e;
	float r = (x >= 0.0f ? 1.0f : e) / d;
	return r - r * lo / d;
}

/*
 * tanh for float32, branch-free so loops calling it vectorise: an odd
 * polynomial below |x| = 0.625, where (1 - e) / (1 + e) would cancel, and
 * (1 - e) / (1 + e) with e = e^-2|x| above (fitted by weighted least squares
 * for relative error; the polynomial alone is within 5e-9).  Within 2 ulp;
 * NaN gives NaN, +-inf gives +-1.
 */
static inline float pn_mu_tanhf(float x)
{
	float a = __builtin_fabsf(x), s = x * x;
	float p = -5.7049887e-3f;
	p = p * s + 2.0639090e-2f;
	p = p * s - 5.3739715e-2f;
	p = p * s + 1.3331442e-1f;
	p = p * s - 3.3333282e-1f;
	float small = x + x * s * p;
	float e = pn_mu_expf(-2.0f * a);
	float big = __builtin_copysignf((1.0f - e) / (1.0f + e), x);
	return a < 0.625f ? small : big;
}

/*
 * erf for float32, branch-free: x + x Q(x^2) below |x| = 0.921875 and
 * 1 - e^P(|x|) above, P fitted to log(erfc) on [0.921875, 4] (erf rounds
 * to 1 beyond).  Coefficients fitted by weighted least squares for the
 * relative error of erf (below 1e-9 before rounding).  Within 2 ulp; NaN
 * gives NaN, +-inf gives +-1.
 */
static inline float pn_mu_erff(float x)
{
	float a = __builtin_fabsf(x), s = x * x;
	float q = 8.3701853e-5f;
	q = q * s - 8.1427279e-4f;
	q = q * s + 5.2010348e-3f;
	q = q * s - 2.6859399e-2f;
	q = q * s + 1.1283696e-1f;
	q = q * s - 3.7612634e-1f;
	q = q * s + 1.2837917e-1f;
	float small = x + x * q;
	float t = a > 4.0f ? 4.0f : a;
	float p = -5.0287098e-7f;
	p = p * t - 1.4577662e-5f;
	p = p * t + 3.9830318e-4f;
	p = p * t - 4.0588462e-3f;
	p = p * t + 2.4906261e-2f;
	p = p * t - 1.0802613e-1f;
	p = p * t - 6.3353233e-1f;
	p = p * t - 1.1294390e+0f;
	p = p * t + 1.6132858e-4f;
	float big = __builtin_copysignf(1.0f - pn_mu_expf(p), x);
	return a < 0.921875f ? small : big;
}

/* Chunk of the inner dimension that (O, R, I) loops process per task:
 * big enough for vector loops, small enough to stay in L1. */
#define PN_MU_ICHUNK 256

#endif
