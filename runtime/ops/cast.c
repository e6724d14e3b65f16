/*
 * cast.c - Cast and CastLike between every numeric dtype, bool and string.
 *
 * Numbers convert the way numpy's astype does on x86-64, which is what the
 * ONNX reference implementation and its test data use:
 *   float -> float    round to nearest even (double -> float16 is rounded
 *                     once, through a round-to-odd float), except that
 *                     bfloat16 results are truncated (see f2bf_trunc)
 *   float -> integer  truncation toward zero; NaN and out-of-range values
 *                     give the hardware's "integer indefinite" (INT_MIN of
 *                     the 32- or 64-bit conversion), narrower types keep the
 *                     low bits
 *   integer -> integer  two's complement wrap
 *   anything -> bool  nonzero (NaN included) is true
 * Strings are formatted as numpy's str() does (shortest repr that reads back
 * to the same value: "0.1", "1.0", "1e-05", "nan", "inf") and parsed as
 * Python's float()/int() do ("NaN", "INF", "+INF", "-1.5e3", surrounding
 * spaces); bool formats as "True"/"False".
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "runtime/infer.h"
#include "runtime/kernel.h"
#include "runtime/ops/elemwise.h"

/* --- scalar conversions ------------------------------------------------------------- */

/* double -> float rounding to odd: rounding that float again to a format at
 * least 2 bits narrower gives the correctly rounded result. */
static inline float d2f_odd(double d)
{
	float f = (float)d;
	if ((double)f != d && isfinite(f)) {
		uint32_t u;
		memcpy(&u, &f, 4);
		if (!(u & 1))
			f = nextafterf(f, d > (double)f ? INFINITY : -INFINITY);
	}
	return f;
}

/* float -> bfloat16 by dropping the low 16 bits (rounding toward zero), NaN
 * kept quiet.  This is what ONNX 1.12's Cast test data expects
 * (test_cast_FLOAT_to_BFLOAT16); after d2f_odd it truncates doubles too.
 * Arithmetic on bfloat16 elsewhere rounds to nearest even. */
static inline uint16_t f2bf_trunc(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	if ((u & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((u >> 16) | 0x40);
	return (uint16_t)(u >> 16);
}

static inline int32_t f2i32(double v)
{
	return v > -2147483649.0 && v < 2147483648.0 ? (int32_t)v : INT32_MIN;
}

static inline int64_t f2i64(double v)
{
	return v >= -9223372036854775808.0 && v < 9223372036854775808.0 ? (int64_t)v : INT64_MIN;
}

static inline uint64_t f2u64(double v)
{
	if (v >= 9223372036854775808.0 && v < 18446744073709551616.0)
		return (uint64_t)v;
	return (uint64_t)f2i64(v);
}

/* Per destination: from float, double, int64 and uint64 (the compute types
 * sources load into), picked with _Generic. */
#define DST_FNS(name, T, FF, FD, FI, FU)                                                 \
	static inline T name##_f(float v) { return FF; }                                  \
	static inline T name##_d(double v) { return FD; }                                 \
	static inline T name##_i(int64_t v) { return FI; }                                \
	static inline T name##_u(uint64_t v) { return FU; }
#define TO(name, v)                                                                      \
	_Generic((v), float: name##_f, double: name##_d, int64_t: name##_i, uint64_t: name##_u)(v)

DST_FNS(to_f32, float, v, (float)v, (float)v, (float)v)
DST_FNS(to_f64, double, v, v, (double)v, (double)v)
DST_FNS(to_f16, uint16_t, pn_f32_to_f16(v), pn_f32_to_f16(d2f_odd(v)), pn_f32_to_f16(d2f_odd((double)v)),
	pn_f32_to_f16(d2f_odd((double)v)))
DST_FNS(to_bf16, uint16_t, f2bf_trunc(v), f2bf_trunc(d2f_odd(v)), f2bf_trunc(d2f_odd((double)v)),
	f2bf_trunc(d2f_odd((double)v)))
DST_FNS(to_i8, int8_t, (int8_t)f2i32(v), (int8_t)f2i32(v), (int8_t)v, (int8_t)v)
DST_FNS(to_i16, int16_t, (int16_t)f2i32(v), (int16_t)f2i32(v), (int16_t)v, (int16_t)v)
DST_FNS(to_i32, int32_t, f2i32(v), f2i32(v), (int32_t)v, (int32_t)v)
DST_FNS(to_i64, int64_t, f2i64(v), f2i64(v), v, (int64_t)v)
DST_FNS(to_u8, uint8_t, (uint8_t)f2i32(v), (uint8_t)f2i32(v), (uint8_t)v, (uint8_t)v)
DST_FNS(to_u16, uint16_t, (uint16_t)f2i32(v), (uint16_t)f2i32(v), (uint16_t)v, (uint16_t)v)
DST_FNS(to_u32, uint32_t, (uint32_t)f2i64(v), (uint32_t)f2i64(v), (uint32_t)v, (uint32_t)v)
DST_FNS(to_u64, uint64_t, f2u64(v), f2u64(v), (uint64_t)v, v)
DST_FNS(to_b, uint8_t, v != 0, v != 0, v != 0, v != 0)

/* --- the numeric table: every (source, destination) pair -------------------------------- */

/* X(sfx, dtype, storage type, compute type, load) */
#define SRCS(X)                                                                          \
	X(f32, PN_FLOAT, float, float, PN_ID)                                            \
	X(f64, PN_DOUBLE, double, double, PN_ID)                                         \
	X(f16, PN_FLOAT16, uint16_t, float, pn_h2f)                                      \
	X(bf16, PN_BFLOAT16, uint16_t, float, pn_b2f)                                    \
	X(i8, PN_INT8, int8_t, int64_t, PN_ID)                                           \
	X(i16, PN_INT16, int16_t, int64_t, PN_ID)                                        \
	X(i32, PN_INT32, int32_t, int64_t, PN_ID)                                        \
	X(i64, PN_INT64, int64_t, int64_t, PN_ID)                                        \
	X(u8, PN_UINT8, uint8_t, uint64_t, PN_ID)                                        \
	X(u16, PN_UINT16, uint16_t, uint64_t, PN_ID)                                     \
	X(u32, PN_UINT32, uint32_t, uint64_t, PN_ID)                                     \
	X(u64, PN_UINT64, uint64_t, uint64_t, PN_ID)                                     \
	X(b, PN_BOOL, uint8_t, uint64_t, PN_ID)

/* Y(source args..., dst sfx, dst dtype, dst storage type) */
#define DSTS(Y, ...)                                                                     \
	Y(__VA_ARGS__, f32, PN_FLOAT, float)                                             \
	Y(__VA_ARGS__, f64, PN_DOUBLE, double)                                           \
	Y(__VA_ARGS__, f16, PN_FLOAT16, uint16_t)                                        \
	Y(__VA_ARGS__, bf16, PN_BFLOAT16, uint16_t)                                      \
	Y(__VA_ARGS__, i8, PN_INT8, int8_t)                                              \
	Y(__VA_ARGS__, i16, PN_INT16, int16_t)                                           \
	Y(__VA_ARGS__, i32, PN_INT32, int32_t)                                           \
	Y(__VA_ARGS__, i64, PN_INT64, int64_t)                                           \
	Y(__VA_ARGS__, u8, PN_UINT8, uint8_t)                                            \
	Y(__VA_ARGS__, u16, PN_UINT16, uint16_t)                                         \
	Y(__VA_ARGS__, u32, PN_UINT32, uint32_t)                                         \
	Y(__VA_ARGS__, u64, PN_UINT64, uint64_t)                                         \
	Y(__VA_ARGS__, b, PN_BOOL, uint8_t)

#define DEF_PAIR(ssfx, SDT, ST, SCT, SLD, dsfx, DDT, DT)                                 \
	static void cast_##ssfx##_##dsfx(char *const *p, const int64_t *s, int64_t n,    \
					 const void *ctx)                                \
	{                                                                                \
		DT *o = (DT *)p[0];                                                      \
		const ST *a = (const ST *)p[1];                                          \
		(void)s;                                                                 \
		(void)ctx;                                                               \
		for (int64_t i = 0; i < n; i++) {                                        \
			SCT v = SLD(a[i]);                                               \
			o[i] = TO(to_##dsfx, v);                                         \
		}                                                                        \
	}
#define DEF_SRC(ssfx, SDT, ST, SCT, SLD) DSTS(DEF_PAIR, ssfx, SDT, ST, SCT, SLD)
SRCS(DEF_SRC)

#define ENT_PAIR(ssfx, SDT, ST, SCT, SLD, dsfx, DDT, DT) [DDT] = cast_##ssfx##_##dsfx,
#define ENT_SRC(ssfx, SDT, ST, SCT, SLD) [SDT] = {DSTS(ENT_PAIR, ssfx, SDT, ST, SCT, SLD)},
static const pn_seg_fn cast_tab[PN_DTYPE_COUNT][PN_DTYPE_COUNT] = {SRCS(ENT_SRC)};

/* --- numbers to strings ------------------------------------------------------------------ */

/* Does text read back as v in dtype's precision? */
static int reads_back(const char *text, double v, int dtype)
{
	switch (dtype) {
	case PN_FLOAT:
		return strtof(text, NULL) == (float)v;
	case PN_FLOAT16:
		return pn_f32_to_f16(strtof(text, NULL)) == pn_f32_to_f16((float)v);
	case PN_BFLOAT16:
		return pn_f32_to_bf16(strtof(text, NULL)) == pn_f32_to_bf16((float)v);
	default:
		return strtod(text, NULL) == v;
	}
}

/* numpy's str() of a float scalar: the shortest digits that read back,
 * positional for 1e-4 <= |v| < 1e16 (and 0), scientific otherwise. */
static void format_float(double v, int dtype, char *out, size_t cap)
{
	if (isnan(v)) {
		snprintf(out, cap, "nan");
		return;
	}
	if (isinf(v)) {
		snprintf(out, cap, v < 0 ? "-inf" : "inf");
		return;
	}
	char sci[64];
	int maxp = dtype == PN_DOUBLE ? 17 : 9;
	for (int p = 1; p <= maxp; p++) {
		snprintf(sci, sizeof sci, "%.*e", p - 1, v);
		if (reads_back(sci, v, dtype))
			break;
	}
	/* Split "-d.ddde+XX" into sign, digits (trailing zeros dropped), exponent. */
	const char *q = sci;
	int neg = *q == '-';
	if (neg)
		q++;
	char dig[40];
	int nd = 0;
	for (; *q && *q != 'e'; q++)
		if (isdigit((unsigned char)*q) && nd < (int)sizeof dig - 1)
			dig[nd++] = *q;
	int e = *q == 'e' ? atoi(q + 1) : 0;
	while (nd > 1 && dig[nd - 1] == '0')
		nd--;
	dig[nd] = 0;
	double a = fabs(v);
	size_t o = 0;
	char buf[400];
	if (neg)
		buf[o++] = '-';
	if (a == 0 || (a >= 1e-4 && a < 1e16)) {
		if (e >= 0) {
			for (int i = 0; i <= e; i++)
				buf[o++] = i < nd ? dig[i] : '0';
			buf[o++] = '.';
			if (nd > e + 1)
				for (int i = e + 1; i < nd; i++)
					buf[o++] = dig[i];
			else
				buf[o++] = '0';
		} else {
			buf[o++] = '0';
			buf[o++] = '.';
			for (int i = 0; i < -e - 1; i++)
				buf[o++] = '0';
			for (int i = 0; i < nd; i++)
				buf[o++] = dig[i];
		}
		buf[o] = 0;
	} else {
		buf[o++] = dig[0];
		if (nd > 1) {
			buf[o++] = '.';
			for (int i = 1; i < nd; i++)
				buf[o++] = dig[i];
		}
		snprintf(buf + o, sizeof buf - o, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
	}
	snprintf(out, cap, "%s", buf);
}

static char *number_to_string(const pn_tensor *x, int64_t i)
{
	char buf[128];
	switch (x->dtype) {
	case PN_FLOAT: case PN_DOUBLE: case PN_FLOAT16: case PN_BFLOAT16:
		format_float(pn_tensor_get_f64(x, i), x->dtype, buf, sizeof buf);
		break;
	case PN_BOOL:
		snprintf(buf, sizeof buf, "%s", ((const uint8_t *)x->data)[i] ? "True" : "False");
		break;
	case PN_UINT64:
		snprintf(buf, sizeof buf, "%llu",
			 (unsigned long long)((const uint64_t *)x->data)[i]);
		break;
	default:
		snprintf(buf, sizeof buf, "%lld", (long long)pn_tensor_get_i64(x, i));
		break;
	}
	return strdup(buf);
}

/* --- strings to numbers ------------------------------------------------------------------ */

/* Converts one value of dtype src at v into element i of o (numeric). */
static void cast_one(int src, const void *v, pn_tensor *o, int64_t i)
{
	char *p[2] = {(char *)o->data + i * (int64_t)pn_dtype_size(o->dtype), (char *)v};
	static const int64_t s[2] = {1, 1};
	cast_tab[src][o->dtype](p, s, 1, NULL);
}

/* The whole of s (spaces around allowed) as a base-10 integer: as uint64
 * (src PN_UINT64) when it has no minus sign, else int64.  -1 if it is not
 * one, or is out of range. */
static int parse_int(const char *s, uint64_t *bits, int *src)
{
	char *end;
	errno = 0;
	if (strchr(s, '-')) {
		int64_t v = strtoll(s, &end, 10);
		memcpy(bits, &v, 8);
		*src = PN_INT64;
	} else {
		*bits = strtoull(s, &end, 10);
		*src = PN_UINT64;
	}
	if (end == s || errno)
		return -1;
	while (isspace((unsigned char)*end))
		end++;
	return *end ? -1 : 0;
}

static void string_to_number(const char *s, pn_tensor *o, int64_t i)
{
	if (!s)
		s = "";
	while (isspace((unsigned char)*s))
		s++;
	if (o->dtype == PN_BOOL && (!strncasecmp(s, "true", 4) || !strncasecmp(s, "false", 5))) {
		((uint8_t *)o->data)[i] = (*s == 't' || *s == 'T');
		return;
	}
	uint64_t bits;
	int src;
	if (pn_dtype_is_int(o->dtype) && parse_int(s, &bits, &src) == 0) {
		cast_one(src, &bits, o, i);
		return;
	}
	double v = strtod(s, NULL);
	cast_one(PN_DOUBLE, &v, o, i);
}

/* --- kernels ------------------------------------------------------------------------------ */

static int cast_to(pn_kctx *k, int to)
{
	const pn_tensor *x = pn_kin(k, 0);
	if (!x || x->kind != PN_KIND_TENSOR)
		return pn_kfail(k, "%s needs a tensor input", k->node->op_type);
	if (!pn_dtype_size(to) || to == PN_COMPLEX64 || to == PN_COMPLEX128)
		return pn_kfail(k, "%s to %s is not supported", k->node->op_type, pn_dtype_name(to));
	pn_tensor *o = pn_out_alloc(k, 0, to, x->rank, x->dims);
	if (!o)
		return -1;
	if (x->dtype == to) {
		if (pn_ew_copy(o, x))
			return pn_kfail(k, "out of memory");
		return 0;
	}
	if (to == PN_STRING) {
		if (x->dtype == PN_COMPLEX64 || x->dtype == PN_COMPLEX128 || !pn_dtype_size(x->dtype))
			return pn_kfail(k, "Cast from %s to string is not supported",
					pn_dtype_name(x->dtype));
		char **s = o->data;
		for (int64_t i = 0; i < x->numel; i++) {
			free(s[i]);
			if (!(s[i] = number_to_string(x, i)))
				return pn_kfail(k, "out of memory");
		}
		return 0;
	}
	if (x->dtype == PN_STRING) {
		if (!cast_tab[PN_DOUBLE][to])
			return pn_kfail(k, "Cast from string to %s is not supported", pn_dtype_name(to));
		char *const *s = x->data;
		for (int64_t i = 0; i < x->numel; i++)
			string_to_number(s[i], o, i);
		return 0;
	}
	pn_seg_fn fn = x->dtype > 0 && x->dtype < PN_DTYPE_COUNT ? cast_tab[x->dtype][to] : NULL;
	if (!fn)
		return pn_kfail(k, "Cast from %s to %s is not supported", pn_dtype_name(x->dtype),
				pn_dtype_name(to));
	pn_ew_map(o, x, fn, NULL, 1);
	return 0;
}

/* The `to` attribute: a TensorProto.DataType number, or before opset 6 its
 * name ("FLOAT", "INT64", ...).  0 if absent or unknown. */
static int cast_target(const pn_node *n)
{
	static const char *const names[PN_DTYPE_COUNT] = {
		"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING",
		"BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16"};
	const pn_attr *to = pn_attr_find(n, "to");
	if (!to)
		return 0;
	if (to->type == PN_ATTR_STRING) {
		for (int i = 1; i < PN_DTYPE_COUNT; i++)
			if (!strcasecmp(to->s, names[i]))
				return i;
		return 0;
	}
	return to->type == PN_ATTR_INT && to->i > 0 && to->i < PN_DTYPE_COUNT ? (int)to->i : 0;
}

int pn_infer_Cast(pn_ictx *c)
{
	int to = cast_target(c->node);
	if (!to)
		return pn_ifail(c, "Cast has no supported 'to' attribute");
	pn_iset_like(c, 0, 0, to);
	return 0;
}

int pn_kernel_Cast(pn_kctx *k)
{
	int to = cast_target(k->node);
	if (!to)
		return pn_kfail(k, "Cast has no supported 'to' attribute");
	return cast_to(k, to);
}

int pn_infer_CastLike(pn_ictx *c)
{
	const pn_tinfo *like = pn_iin(c, 1);
	if (!like)
		return pn_ifail(c, "CastLike needs a target_type input");
	pn_iset_like(c, 0, 0, like->type.dtype);
	if (!like->type.dtype)
		c->out[0].type.dtype = PN_UNDEFINED;
	return 0;
}

int pn_kernel_CastLike(pn_kctx *k)
{
	const pn_tensor *like = pn_kin(k, 1);
	if (!like)
		return pn_kfail(k, "CastLike needs a target_type input");
	return cast_to(k, like->dtype);
}
