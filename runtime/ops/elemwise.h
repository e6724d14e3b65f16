/*
 * elemwise.h - the loop machinery shared by the elementwise op files
 * (unary.c, activation.c, cast.c, binary.c).
 *
 * An elementwise op is a "segment function" applied over a broadcast plan.
 * The plan describes the output and every input as strided views over one
 * iteration shape; dims of size 1 are dropped and neighbouring dims that are
 * contiguous for every operand are merged, so the common cases collapse to
 * one long inner loop:
 *
 *   same shape            rank 1, every inner stride 1
 *   scalar operand        rank 1, that operand's inner stride 0
 *   row / channel bcast   rank 2-3, inner loop over a whole row or plane
 *
 * The innermost stride of each operand is therefore 0 or 1, and a segment
 * function only has to handle those two cases (which lets it vectorise).
 * Work is split into contiguous chunks of the output, one per thread, only
 * when it is large (PN_PAR_MIN_WORK); every output element is computed the
 * same way whatever the split, so results do not depend on thread count.
 */
#ifndef PN_ELEMWISE_H
#define PN_ELEMWISE_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/kernel.h"

/* Operands of a plan: the output (0) and up to 3 inputs. */
#define PN_EW_MAX_OPS 4

/* Runs n elements of one op.  p[0] is the output, p[1..] the inputs, each
 * already offset to the segment start; s[i] is 0 (broadcast: the same
 * element throughout) or 1 (contiguous).  ctx: op parameters. */
typedef void (*pn_seg_fn)(char *const *p, const int64_t *s, int64_t n, const void *ctx);

typedef struct pn_ewplan {
	int rank;                    /* >= 1 after simplification */
	int nops;                    /* output + inputs */
	int64_t numel;
	int64_t dims[PN_MAX_RANK];
	int64_t st[PN_EW_MAX_OPS][PN_MAX_RANK];  /* element strides, 0 = broadcast */
	size_t esz[PN_EW_MAX_OPS];
	char *base[PN_EW_MAX_OPS];
} pn_ewplan;

/* One operand as a plan sees it. */
typedef struct pn_ewarg {
	int rank;
	const int64_t *dims;
	const void *data;
	size_t esz;
} pn_ewarg;

static inline pn_ewarg pn_ewarg_of(const pn_tensor *t)
{
	return (pn_ewarg){t->rank, t->dims, t->data, pn_dtype_size(t->dtype)};
}

/* Plans out (rank, dims, data, esz) from inputs that broadcast into it
 * (numpy rules, each input of rank <= out rank).  -1 if an input does not
 * broadcast. */
int pn_ewplan_init(pn_ewplan *p, pn_ewarg out, const pn_ewarg *in, int n_in);

/* Runs fn over the whole plan; cost is the rough scalar operations per
 * element, used to decide whether to use threads. */
void pn_ewplan_run(const pn_ewplan *p, pn_seg_fn fn, const void *ctx, int cost);

/* The common case of one input and one output of the same shape. */
void pn_ew_map(pn_tensor *out, const pn_tensor *in, pn_seg_fn fn, const void *ctx, int cost);

/* Numpy broadcast of two shapes; -1 if incompatible. */
int pn_ew_bcast_dims(int ra, const int64_t *a, int rb, const int64_t *b, int *ro, int64_t *o);

/* --- scalar helpers ----------------------------------------------------------- */

/* Half and bfloat16 in registers, for per-element loops. */
static inline float pn_h2f(uint16_t h)
{
	return pn_f16_to_f32(h);
}
static inline uint16_t pn_f2h(float f)
{
	return pn_f32_to_f16(f);
}
static inline float pn_b2f(uint16_t h)
{
	return pn_bf16_to_f32(h);
}
static inline uint16_t pn_f2b(float f)
{
	return pn_f32_to_bf16(f);
}

/* Copies a tensor (strings duplicated) into an allocated output of the same
 * dtype and size. */
int pn_ew_copy(pn_tensor *out, const pn_tensor *in);

/* --- generating segment functions ------------------------------------------------
 *
 * An op is written once as an expression over x (and y) of the compute type
 * `ct` (the storage type, or float for float16/bfloat16; `ut` is an unsigned
 * type at least as wide and at least unsigned int, so that integer arithmetic
 * done in it wraps instead of overflowing) with parameters
 * in P (a pn_ewparam).  The type lists below instantiate it per dtype, and
 * PN_EW_ENT builds the dtype-indexed dispatch table:
 *
 *   PN_EW_FLOATS(PN_EW_DEF1, Exp, exp(x))
 *   static const pn_seg_fn Exp_tab[PN_DTYPE_COUNT] = {PN_EW_FLOATS(PN_EW_ENT, Exp, 0)};
 */
typedef struct pn_ewparam {
	double a, b;
	int64_t ia, ib;
	int flag;
} pn_ewparam;

/* The whole kernel of a one-input elementwise op (unary.c, activation.c):
 * the function of tab for input 0's dtype, over input 0 into output 0 of
 * the same shape and of dtype out_dtype (0: the input's), with parameters
 * prm; fails for an input that is not a tensor or a dtype tab lacks. */
int pn_ew_unary(pn_kctx *k, const pn_seg_fn *tab, int out_dtype, const pn_ewparam *prm, int cost);

#define PN_ID(v) (v)

#define PN_EW_FLOATS(X, op, ...)                                                         \
	X(op, f32, PN_FLOAT, float, float, float, PN_ID, PN_ID, __VA_ARGS__)             \
	X(op, f64, PN_DOUBLE, double, double, double, PN_ID, PN_ID, __VA_ARGS__)         \
	X##_F16(op, f16, PN_FLOAT16, uint16_t, float, float, pn_h2f, pn_f2h, __VA_ARGS__) \
	X(op, bf16, PN_BFLOAT16, uint16_t, float, float, pn_b2f, pn_f2b, __VA_ARGS__)
#define PN_EW_SINTS(X, op, ...)                                                          \
	X(op, i8, PN_INT8, int8_t, int8_t, unsigned, PN_ID, PN_ID, __VA_ARGS__)           \
	X(op, i16, PN_INT16, int16_t, int16_t, unsigned, PN_ID, PN_ID, __VA_ARGS__)      \
	X(op, i32, PN_INT32, int32_t, int32_t, uint32_t, PN_ID, PN_ID, __VA_ARGS__)      \
	X(op, i64, PN_INT64, int64_t, int64_t, uint64_t, PN_ID, PN_ID, __VA_ARGS__)
#define PN_EW_UINTS(X, op, ...)                                                          \
	X(op, u8, PN_UINT8, uint8_t, uint8_t, unsigned, PN_ID, PN_ID, __VA_ARGS__)        \
	X(op, u16, PN_UINT16, uint16_t, uint16_t, unsigned, PN_ID, PN_ID, __VA_ARGS__)   \
	X(op, u32, PN_UINT32, uint32_t, uint32_t, uint32_t, PN_ID, PN_ID, __VA_ARGS__)   \
	X(op, u64, PN_UINT64, uint64_t, uint64_t, uint64_t, PN_ID, PN_ID, __VA_ARGS__)
#define PN_EW_BOOLS(X, op, ...)                                                          \
	X(op, b, PN_BOOL, uint8_t, uint8_t, unsigned, PN_ID, PN_ID, __VA_ARGS__)

/* Table entry [dtype] = op_sfx. */
#define PN_EW_ENT(op, sfx, DT, ...) [DT] = op##_##sfx,

/* y = f(x), same dtype (p[0] = out, p[1] = in, both contiguous). */
#define PN_EW_SEG1(name, TI, TO, CT, UT, LD, ST, ...)                                    \
	static void name(char *const *p, const int64_t *s, int64_t n, const void *ctx)  \
	{                                                                                \
		typedef CT ct;                                                           \
		typedef UT ut;                                                           \
		(void)sizeof(ut);                                                        \
		TO *o = (TO *)p[0];                                                      \
		const TI *A = (const TI *)p[1];                                          \
		/* A local copy: the compiler then knows the output stores leave \
		 * the parameters alone and hoists them out of the loop. */      \
		pn_ewparam Pv = {0};                                                     \
		if (ctx)                                                                 \
			Pv = *(const pn_ewparam *)ctx;                                   \
		const pn_ewparam *P = &Pv;                                               \
		(void)P;                                                                 \
		(void)s;                                                                 \
		for (int64_t i = 0; i < n; i++) {                                        \
			ct x = LD(A[i]);                                                 \
			o[i] = ST(__VA_ARGS__);                                          \
		}                                                                        \
	}
#define PN_EW_DEF1(op, sfx, DT, T, CT, UT, LD, ST, ...)                                  \
	PN_EW_SEG1(op##_##sfx, T, T, CT, UT, LD, ST, __VA_ARGS__)
/* Unary predicate: bool output. */
#define PN_EW_DEF1B(op, sfx, DT, T, CT, UT, LD, ST, ...)                                 \
	PN_EW_SEG1(op##_##sfx, T, uint8_t, CT, UT, LD, PN_ID, __VA_ARGS__)

/* o = f(x, y) with either operand possibly broadcast (stride 0). */
#define PN_EW_SEG2(name, TA, TB, TO, CT, UT, LA, LB, ST, ...)                            \
	static void name(char *const *p, const int64_t *s, int64_t n, const void *ctx)  \
	{                                                                                \
		typedef CT ct;                                                           \
		typedef UT ut;                                                           \
		(void)sizeof(ut);                                                        \
		TO *o = (TO *)p[0];                                                      \
		const TA *A = (const TA *)p[1];                                          \
		const TB *B = (const TB *)p[2];                                          \
		/* A local copy: the compiler then knows the output stores leave \
		 * the parameters alone and hoists them out of the loop. */      \
		pn_ewparam Pv = {0};                                                     \
		if (ctx)                                                                 \
			Pv = *(const pn_ewparam *)ctx;                                   \
		const pn_ewparam *P = &Pv;                                               \
		(void)P;                                                                 \
		if (s[1] && s[2]) {                                                      \
			for (int64_t i = 0; i < n; i++) {                                \
				ct x = LA(A[i]), y = LB(B[i]);                           \
				o[i] = ST(__VA_ARGS__);                                  \
			}                                                                \
		} else if (s[1]) {                                                       \
			ct y = LB(B[0]);                                                 \
			for (int64_t i = 0; i < n; i++) {                                \
				ct x = LA(A[i]);                                         \
				o[i] = ST(__VA_ARGS__);                                  \
			}                                                                \
		} else if (s[2]) {                                                       \
			ct x = LA(A[0]);                                                 \
			for (int64_t i = 0; i < n; i++) {                                \
				ct y = LB(B[i]);                                         \
				o[i] = ST(__VA_ARGS__);                                  \
			}                                                                \
		} else {                                                                 \
			ct x = LA(A[0]), y = LB(B[0]);                                   \
			TO v = ST(__VA_ARGS__);                                          \
			for (int64_t i = 0; i < n; i++)                                  \
				o[i] = v;                                                \
		}                                                                        \
	}
#define PN_EW_DEF2(op, sfx, DT, T, CT, UT, LD, ST, ...)                                  \
	PN_EW_SEG2(op##_##sfx, T, T, T, CT, UT, LD, LD, ST, __VA_ARGS__)
/* Binary predicate: bool output. */
#define PN_EW_DEF2B(op, sfx, DT, T, CT, UT, LD, ST, ...)                                 \
	PN_EW_SEG2(op##_##sfx, T, T, uint8_t, CT, UT, LD, LD, PN_ID, __VA_ARGS__)

/*
 * float16 through the float32 segment of the same op (the X##_F16 of
 * PN_EW_FLOATS): a block of each input converted with F16C's vector form,
 * the float32 loop, the result converted back.  The arithmetic is the
 * float32 one either way, so the bits are those of a loop converting each
 * element, which stays scalar (5x ORT's time on float16 MatMul + Add +
 * Sigmoid + Mul at batch 512).  The f32 entry comes first in PN_EW_FLOATS,
 * so op_f32 is defined; an output may be an input (in place): each block
 * is read before it is written.
 */
#define PN_EW_STAGE 256
#define PN_EW_STAGED1(name, f32, HALF_OUT)                                                       \
	static void name(char *const *p, const int64_t *s, int64_t n, const void *ctx)          \
	{                                                                                        \
		float a[PN_EW_STAGE], y[PN_EW_STAGE];                                            \
		for (int64_t i = 0; i < n; i += PN_EW_STAGE) {                                   \
			int64_t m = n - i < PN_EW_STAGE ? n - i : PN_EW_STAGE;                   \
			pn_f16_to_f32_n((const uint16_t *)p[1] + i, a, m);                       \
			char *q[2] = {HALF_OUT ? (char *)y : p[0] + i, (char *)a};               \
			f32(q, s, m, ctx);                                                       \
			if (HALF_OUT)                                                            \
				pn_f32_to_f16_n(y, (uint16_t *)p[0] + i, m);                     \
		}                                                                                \
	}
#define PN_EW_STAGED2(name, f32, HALF_OUT)                                                       \
	static void name(char *const *p, const int64_t *s, int64_t n, const void *ctx)          \
	{                                                                                        \
		float a[PN_EW_STAGE], b[PN_EW_STAGE], y[PN_EW_STAGE];                            \
		const uint16_t *A = (const uint16_t *)p[1], *B = (const uint16_t *)p[2];        \
		if (!s[1])   /* broadcast: one element, converted once */                       \
			pn_f16_to_f32_n(A, a, 1);                                                \
		if (!s[2])                                                                       \
			pn_f16_to_f32_n(B, b, 1);                                                \
		for (int64_t i = 0; i < n; i += PN_EW_STAGE) {                                   \
			int64_t m = n - i < PN_EW_STAGE ? n - i : PN_EW_STAGE;                   \
			if (s[1])                                                                \
				pn_f16_to_f32_n(A + i, a, m);                                    \
			if (s[2])                                                                \
				pn_f16_to_f32_n(B + i, b, m);                                    \
			char *q[3] = {HALF_OUT ? (char *)y : p[0] + i, (char *)a, (char *)b};    \
			f32(q, s, m, ctx);                                                       \
			if (HALF_OUT)                                                            \
				pn_f32_to_f16_n(y, (uint16_t *)p[0] + i, m);                     \
		}                                                                                \
	}
#define PN_EW_ENT_F16 PN_EW_ENT
#define PN_EW_DEF1_F16(op, sfx, ...) PN_EW_STAGED1(op##_##sfx, op##_f32, 1)
#define PN_EW_DEF1B_F16(op, sfx, ...) PN_EW_STAGED1(op##_##sfx, op##_f32, 0)
#define PN_EW_DEF2_F16(op, sfx, ...) PN_EW_STAGED2(op##_##sfx, op##_f32, 1)
#define PN_EW_DEF2B_F16(op, sfx, ...) PN_EW_STAGED2(op##_##sfx, op##_f32, 0)

/* Looks up fn for dtype in a table; NULL if the dtype is not supported. */
static inline pn_seg_fn pn_ew_pick(const pn_seg_fn *tab, int dtype)
{
	return dtype > 0 && dtype < PN_DTYPE_COUNT ? tab[dtype] : NULL;
}

#endif
