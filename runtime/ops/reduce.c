/*
 * reduce.c - reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin,
 * ReduceProd, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp,
 * ReduceSumSquare, ArgMax, ArgMin, CumSum, TopK, Det.  (The Softmax family
 * is in softmax.c.)
 *
 * Every reduction is brought to the shape (O, R, I): O outer rows, R reduced
 * elements, I inner columns.  Reduced axes that are not adjacent are first
 * gathered behind the kept ones, so only that one shape has kernels: rows
 * (I == 1) are summed with several accumulators the compiler vectorises;
 * columns (I > 1) are accumulated in blocks of the inner dimension.  Threads
 * split output elements only, so each output is always computed by one
 * thread in one order.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/infer.h"
#include "runtime/kernel.h"
#include "runtime/ops/mathutil.h"

enum red_op { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_LOGSUM, R_LSE, R_SUMSQ };

/* --- typed (O, R, I) folds ----------------------------------------------------- */

/* Lanes of independent accumulators along a row: enough for two vectors. */
#define LANES 16

/*
 * FOLD_ORI expands the two loop nests of one fold over x[O,R,I] into y[O,I]:
 * INIT starts an accumulator acc, STEP folds element v into acc and COMB
 * folds another accumulator's value v into acc (STEP without the element
 * map, e.g. plain + for a sum of squares).
 */
#define FOLD_ORI(T, x, y, O, R, I, INIT, STEP, COMB)                                      \
	do {                                                                              \
		int64_t work_ = (O) * (R) * (I);                                          \
		if ((I) == 1) {                                                           \
			_Pragma("omp parallel for if (work_ > PN_PAR_MIN_WORK) schedule(static)") \
			for (int64_t o = 0; o < (O); o++) {                               \
				const T *xr = (x) + o * (R);                              \
				T lane[LANES];                                            \
				for (int j = 0; j < LANES; j++)                           \
					lane[j] = (INIT);                                 \
				int64_t r = 0;                                            \
				for (; r + LANES <= (R); r += LANES)                      \
					_Pragma("omp simd")                               \
					for (int j = 0; j < LANES; j++) {                 \
						T acc = lane[j], v = xr[r + j];           \
						STEP;                                     \
						lane[j] = acc;                            \
					}                                                 \
				T acc = (INIT);                                           \
				for (int j = 0; j < LANES; j++) {                         \
					T v = lane[j];                                    \
					COMB;                                             \
				}                                                         \
				for (; r < (R); r++) {                                    \
					T v = xr[r];                                      \
					STEP;                                             \
				}                                                         \
				(y)[o] = acc;                                             \
			}                                                                 \
		} else {                                                                  \
			int64_t nch = ((I) + PN_MU_ICHUNK - 1) / PN_MU_ICHUNK;            \
			_Pragma("omp parallel for if (work_ > PN_PAR_MIN_WORK) schedule(static)") \
			for (int64_t t = 0; t < (O) * nch; t++) {                         \
				int64_t o = t / nch, i0 = (t % nch) * PN_MU_ICHUNK;       \
				int64_t i1 = i0 + PN_MU_ICHUNK < (I) ? i0 + PN_MU_ICHUNK : (I); \
				T *yr = (y) + o * (I);                                    \
				for (int64_t i = i0; i < i1; i++)                         \
					yr[i] = (INIT);                                   \
				for (int64_t r = 0; r < (R); r++) {                       \
					const T *xr = (x) + (o * (R) + r) * (I);          \
					for (int64_t i = i0; i < i1; i++) {               \
						T acc = yr[i], v = xr[i];                 \
						STEP;                                     \
						yr[i] = acc;                              \
					}                                                 \
				}                                                         \
			}                                                                 \
		}                                                                         \
	} while (0)

/* The folds every compute type has.  ISNAN(v) is 0 for integers; max and
 * min propagate NaN like numpy. */
#define DEF_FOLDS(T, S, LOWEST, HIGHEST, ISNAN)                                              \
	static void fold_##S(int op, const T *x, T *y, int64_t O, int64_t R, int64_t I)       \
	{                                                                                    \
		switch (op) {                                                                \
		case R_SUM:                                                                  \
		case R_MEAN:                                                                 \
		case R_LOGSUM:                                                               \
			FOLD_ORI(T, x, y, O, R, I, 0, acc += v, acc += v);                   \
			break;                                                               \
		case R_L1:                                                                   \
			FOLD_ORI(T, x, y, O, R, I, 0, acc += v < 0 ? -v : v, acc += v);      \
			break;                                                               \
		case R_SUMSQ:                                                                \
		case R_L2:                                                                   \
			FOLD_ORI(T, x, y, O, R, I, 0, acc += v * v, acc += v);               \
			break;                                                               \
		case R_PROD:                                                                 \
			FOLD_ORI(T, x, y, O, R, I, 1, acc *= v, acc *= v);                   \
			break;                                                               \
		case R_MAX:                                                                  \
		case R_LSE:                                                                  \
			FOLD_ORI(T, x, y, O, R, I, LOWEST,                                   \
				 acc = ((v > acc) | ISNAN(v)) ? v : acc,                      \
				 acc = ((v > acc) | ISNAN(v)) ? v : acc);                     \
			break;                                                               \
		case R_MIN:                                                                  \
			FOLD_ORI(T, x, y, O, R, I, HIGHEST,                                  \
				 acc = ((v < acc) | ISNAN(v)) ? v : acc,                      \
				 acc = ((v < acc) | ISNAN(v)) ? v : acc);                     \
			break;                                                               \
		}                                                                            \
	}

#define NOT_NAN(v) 0
DEF_FOLDS(float, f32, -INFINITY, INFINITY, isnan)
DEF_FOLDS(double, f64, -INFINITY, INFINITY, isnan)
DEF_FOLDS(int64_t, i64, INT64_MIN, INT64_MAX, NOT_NAN)

/* Float-only finishing: the maps after a fold (mean, sqrt, log) and the
 * log-sum-exp, which needs the max before it can sum safely. */
#define DEF_FLOAT_REDUCE(T, S, EXP, LOG, SQRT)                                                \
	static void lse_##S(const T *x, T *y, int64_t O, int64_t R, int64_t I)                \
	{                                                                                    \
		/* y = max, then y = max + log(sum exp(x - max)); an infinite or NaN  \
		 * max is the answer itself (and avoids inf - inf). */                 \
		fold_##S(R_LSE, x, y, O, R, I);                                              \
		if (I == 1) {                                                                \
			_Pragma("omp parallel for if (O * R > PN_PAR_MIN_WORK / 8) schedule(static)") \
			for (int64_t o = 0; o < O; o++) {                                    \
				const T *xr = x + o * R;                                     \
				T m = y[o], lane[LANES] = {0}, s = 0;                        \
				int64_t r = 0;                                               \
				for (; r + LANES <= R; r += LANES)                           \
					_Pragma("omp simd")                                  \
					for (int j = 0; j < LANES; j++)                      \
						lane[j] += EXP(xr[r + j] - m);               \
				for (int j = 0; j < LANES; j++)                              \
					s += lane[j];                                        \
				for (; r < R; r++)                                           \
					s += EXP(xr[r] - m);                                 \
				if (isfinite(m))                                             \
					y[o] = m + LOG(s);                                   \
			}                                                                    \
			return;                                                              \
		}                                                                            \
		int64_t nch = (I + PN_MU_ICHUNK - 1) / PN_MU_ICHUNK;                          \
		_Pragma("omp parallel for if (O * R * I > PN_PAR_MIN_WORK / 8) schedule(static)") \
		for (int64_t t = 0; t < O * nch; t++) {                                      \
			int64_t o = t / nch, i0 = (t % nch) * PN_MU_ICHUNK;                  \
			int64_t i1 = i0 + PN_MU_ICHUNK < I ? i0 + PN_MU_ICHUNK : I;          \
			T s[PN_MU_ICHUNK] = {0};                                             \
			T *yr = y + o * I;                                                   \
			for (int64_t r = 0; r < R; r++) {                                    \
				const T *xr = x + (o * R + r) * I;                           \
				for (int64_t i = i0; i < i1; i++)                            \
					s[i - i0] += EXP(xr[i] - yr[i]);                     \
			}                                                                    \
			for (int64_t i = i0; i < i1; i++)                                    \
				if (isfinite(yr[i]))                                         \
					yr[i] += LOG(s[i - i0]);                             \
		}                                                                            \
	}                                                                                    \
	static void reduce_##S(int op, const T *x, T *y, int64_t O, int64_t R, int64_t I)     \
	{                                                                                    \
		if (op == R_LSE) {                                                           \
			lse_##S(x, y, O, R, I);                                              \
			return;                                                              \
		}                                                                            \
		fold_##S(op, x, y, O, R, I);                                                 \
		int64_t n = O * I;                                                           \
		if (op == R_MEAN)                                                            \
			for (int64_t i = 0; i < n; i++)                                      \
				y[i] /= (T)R;                                                \
		else if (op == R_L2)                                                         \
			for (int64_t i = 0; i < n; i++)                                      \
				y[i] = SQRT(y[i]);                                           \
		else if (op == R_LOGSUM)                                                     \
			for (int64_t i = 0; i < n; i++)                                      \
				y[i] = LOG(y[i]);                                            \
	}

DEF_FLOAT_REDUCE(float, f32, pn_mu_expf, logf, sqrtf)
DEF_FLOAT_REDUCE(double, f64, exp, log, sqrt)

/* --- axes ------------------------------------------------------------------------ */

/* ReduceSum takes its axes as an input from opset 13, the others from 18. */
static int axes_are_input(const char *op_type, int opset)
{
	return opset >= (strcmp(op_type, "ReduceSum") ? 18 : 13);
}

/*
 * Fills mask (1 = reduced) from n axes; n == 0 means all axes unless
 * noop_with_empty_axes, which reduces none (a reduction over one element
 * each: the element maps still apply).  -1 for an axis out of range.
 */
static int axes_mask(int rank, const int64_t *axes, int n, int noop, uint8_t *mask)
{
	memset(mask, n == 0 && !noop, PN_MAX_RANK);
	for (int i = 0; i < n; i++) {
		int a = pn_axis(axes[i], rank);
		if (a < 0)
			return -1;
		mask[a] = 1;
	}
	return 0;
}

/* Axes known only by their count (if that): with keepdims every dim keeps
 * its place (size-1 dims stay 1), without it the rank drops by the count. */
static int reduce_infer_unknown_axes(pn_ictx *c, const pn_tinfo *x, const pn_tinfo *a, int keep)
{
	int r = x->type.rank;
	int64_t dims[PN_MAX_RANK];
	if (r >= 0 && keep) {
		for (int d = 0; d < r; d++)
			dims[d] = x->type.dims[d] == 1 ? 1 : -1;
		pn_iset(c, 0, x->type.dtype, r, dims);
		return 0;
	}
	int64_t na = a->type.rank == 1 ? a->type.dims[0] : -1;
	if (r >= 0 && na > 0 && na <= r) {
		pn_iset(c, 0, x->type.dtype, r - (int)na, NULL);
		return 0;
	}
	pn_iset(c, 0, x->type.dtype, -1, NULL);
	return 0;
}

int pn_infer_Reduce(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0);
	int keep = (int)pn_attr_int(c->node, "keepdims", 1);
	int noop = (int)pn_attr_int(c->node, "noop_with_empty_axes", 0);
	int64_t axes[PN_MAX_RANK];
	int n;
	if (!x)
		return pn_ifail(c, "missing input");
	if (axes_are_input(c->node->op_type, c->opset)) {
		const pn_tinfo *a = pn_iin(c, 1);
		n = a ? pn_iints(c, 1, axes, PN_MAX_RANK) : 0;
		if (n < 0)
			return reduce_infer_unknown_axes(c, x, a, keep);
	} else {
		n = pn_attr_ints(c->node, "axes", axes, PN_MAX_RANK);
		if (n < 0)
			n = 0;
	}
	int rank = x->type.rank;
	if (rank < 0) {
		pn_iset(c, 0, x->type.dtype, -1, NULL);
		return 0;
	}
	if (n > PN_MAX_RANK)
		return pn_ifail(c, "too many axes");
	uint8_t mask[PN_MAX_RANK];
	if (axes_mask(rank, axes, n, noop, mask))
		return pn_ifail(c, "axis out of range for rank %d", rank);
	int64_t dims[PN_MAX_RANK];
	int r = 0;
	for (int d = 0; d < rank; d++)
		if (!mask[d])
			dims[r++] = x->type.dims[d];
		else if (keep)
			dims[r++] = 1;
	pn_iset(c, 0, x->type.dtype, r, dims);
	return 0;
}

/* Reads the axes of a Reduce node at run time into axes; returns the count. */
static int kernel_axes(pn_kctx *k, int64_t *axes)
{
	if (!axes_are_input(k->node->op_type, k->opset)) {
		int n = pn_attr_ints(k->node, "axes", axes, PN_MAX_RANK);
		return n < 0 ? 0 : n;
	}
	const pn_tensor *a = pn_kin(k, 1);
	if (!a)
		return 0;
	if (!pn_dtype_is_int(a->dtype) || a->numel > PN_MAX_RANK)
		return pn_kfail(k, "axes must be at most %d integers", PN_MAX_RANK);
	for (int64_t i = 0; i < a->numel; i++)
		axes[i] = pn_tensor_get_i64(a, i);
	return (int)a->numel;
}

/* --- Reduce* kernels ---------------------------------------------------------------- */

/*
 * The (O, R, I) form of a reduction: size-1 dims dropped, neighbouring dims
 * of the same kind merged.  When reduced dims remain in more than one run,
 * perm/pdims/pstrides describe a gather that puts every kept dim before
 * every reduced one (then I = 1).
 */
typedef struct red_plan {
	int64_t O, R, I;
	int gather, prank;
	int64_t pdims[PN_MAX_RANK], pstrides[PN_MAX_RANK];
} red_plan;

static void plan_reduction(const pn_tensor *x, const uint8_t *mask, red_plan *p)
{
	int64_t st[PN_MAX_RANK], rs[PN_MAX_RANK];
	uint8_t rr[PN_MAX_RANK];
	int nr = 0, runs_reduced = 0;
	pn_mu_strides(x->rank, x->dims, st);
	for (int d = 0; d < x->rank; d++) {
		if (x->dims[d] == 1)
			continue;
		if (nr && rr[nr - 1] == mask[d]) {
			rs[nr - 1] *= x->dims[d];
			continue;
		}
		rr[nr] = mask[d];
		rs[nr++] = x->dims[d];
		runs_reduced += mask[d];
	}
	memset(p, 0, sizeof(*p));
	p->O = p->R = p->I = 1;
	if (runs_reduced <= 1) {
		int seen = 0;
		for (int i = 0; i < nr; i++) {
			if (rr[i])
				p->R = rs[i], seen = 1;
			else if (seen)
				p->I *= rs[i];
			else
				p->O *= rs[i];
		}
		return;
	}
	p->gather = 1;
	for (int pass = 0; pass < 2; pass++)
		for (int d = 0; d < x->rank; d++) {
			if (x->dims[d] == 1 || mask[d] != pass)
				continue;
			p->pdims[p->prank] = x->dims[d];
			p->pstrides[p->prank++] = st[d];
			if (pass)
				p->R *= x->dims[d];
			else
				p->O *= x->dims[d];
		}
}

static void reduce_typed(int ct, int op, const void *x, void *y, const red_plan *p)
{
	if (ct == PN_FLOAT)
		reduce_f32(op, x, y, p->O, p->R, p->I);
	else if (ct == PN_DOUBLE)
		reduce_f64(op, x, y, p->O, p->R, p->I);
	else
		fold_i64(op, x, y, p->O, p->R, p->I);
}

/* Integers: sums, products, extremes and L1 stay exact in int64; the ops
 * numpy computes in floating point (mean, L2, logs) run in double and are
 * truncated back, as numpy's astype does. */
static int reduce_ctype(int dtype, int op)
{
	int ct = pn_mu_ctype(dtype);
	if (ct == PN_INT64 && (op == R_MEAN || op == R_L2 || op == R_LOGSUM || op == R_LSE))
		return PN_DOUBLE;
	return ct;
}

/* An empty integer max (min) is the type's lowest (highest) value, not
 * int64's, which would not survive the narrowing. */
static void empty_extreme(int dtype, int is_max, int64_t *y, int64_t n)
{
	int64_t lo, hi;
	switch (dtype) {
	case PN_INT8: lo = INT8_MIN, hi = INT8_MAX; break;
	case PN_UINT8: lo = 0, hi = UINT8_MAX; break;
	case PN_INT16: lo = INT16_MIN, hi = INT16_MAX; break;
	case PN_UINT16: lo = 0, hi = UINT16_MAX; break;
	case PN_INT32: lo = INT32_MIN, hi = INT32_MAX; break;
	case PN_UINT32: lo = 0, hi = UINT32_MAX; break;
	case PN_UINT64: lo = 0, hi = -1; break;   /* all ones once narrowed */
	default: lo = INT64_MIN, hi = INT64_MAX; break;
	}
	for (int64_t i = 0; i < n; i++)
		y[i] = is_max ? lo : hi;
}

static int reduce_kernel(pn_kctx *k, int op)
{
	const pn_tensor *x = k->in[0];
	pn_tensor *y = k->out[0];
	int64_t axes[PN_MAX_RANK];
	int n = kernel_axes(k, axes);
	uint8_t mask[PN_MAX_RANK];
	if (n < 0)
		return -1;
	if (axes_mask(x->rank, axes, n, (int)pn_attr_int(k->node, "noop_with_empty_axes", 0), mask))
		return pn_kfail(k, "axis out of range for rank %d", x->rank);
	int ct = reduce_ctype(x->dtype, op);
	if (!ct || x->dtype == PN_BOOL)
		return pn_kfail(k, "unsupported type %s", pn_dtype_name(x->dtype));
	red_plan p;
	plan_reduction(x, mask, &p);
	if (p.O * p.I != y->numel)
		return pn_kfail(k, "output has %lld elements, expected %lld", (long long)y->numel,
				(long long)(p.O * p.I));
	pn_cbuf xb, yb;
	void *gathered = NULL;
	if (pn_mu_in(k, x, ct, &xb))
		return -1;
	if (pn_mu_out(k, y, ct, &yb)) {
		pn_mu_free(&xb);
		return -1;
	}
	const void *src = xb.p;
	if (p.gather) {
		size_t esz = pn_dtype_size(ct);
		gathered = malloc((size_t)(x->numel ? x->numel : 1) * esz);
		if (!gathered) {
			pn_mu_free(&xb);
			pn_mu_free(&yb);
			return pn_kfail(k, "out of memory");
		}
		pn_mu_gather(esz, p.prank, p.pdims, p.pstrides, xb.p, gathered);
		src = gathered;
	}
	reduce_typed(ct, op, src, yb.p, &p);
	if (p.R == 0 && ct == PN_INT64 && (op == R_MAX || op == R_MIN))
		empty_extreme(y->dtype, op == R_MAX, yb.p, y->numel);
	free(gathered);
	pn_mu_free(&xb);
	pn_mu_commit(y, ct, &yb);
	return 0;
}

int pn_kernel_ReduceSum(pn_kctx *k) { return reduce_kernel(k, R_SUM); }
int pn_kernel_ReduceMean(pn_kctx *k) { return reduce_kernel(k, R_MEAN); }
int pn_kernel_ReduceMax(pn_kctx *k) { return reduce_kernel(k, R_MAX); }
int pn_kernel_ReduceMin(pn_kctx *k) { return reduce_kernel(k, R_MIN); }
int pn_kernel_ReduceProd(pn_kctx *k) { return reduce_kernel(k, R_PROD); }
int pn_kernel_ReduceL1(pn_kctx *k) { return reduce_kernel(k, R_L1); }
int pn_kernel_ReduceL2(pn_kctx *k) { return reduce_kernel(k, R_L2); }
int pn_kernel_ReduceLogSum(pn_kctx *k) { return reduce_kernel(k, R_LOGSUM); }
int pn_kernel_ReduceLogSumExp(pn_kctx *k) { return reduce_kernel(k, R_LSE); }
int pn_kernel_ReduceSumSquare(pn_kctx *k) { return reduce_kernel(k, R_SUMSQ); }

/* --- ArgMax, ArgMin ---------------------------------------------------------------- */

int pn_infer_ArgReduce(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0);
	if (!x)
		return pn_ifail(c, "missing input");
	int rank = x->type.rank;
	if (rank < 0) {
		pn_iset(c, 0, PN_INT64, -1, NULL);
		return 0;
	}
	int axis = pn_axis(pn_attr_int(c->node, "axis", 0), rank ? rank : 1);
	if (axis < 0)
		return pn_ifail(c, "axis out of range for rank %d", rank);
	int keep = (int)pn_attr_int(c->node, "keepdims", 1);
	int64_t dims[PN_MAX_RANK];
	int r = 0;
	for (int d = 0; d < rank; d++)
		if (d != axis)
			dims[r++] = x->type.dims[d];
		else if (keep)
			dims[r++] = 1;
	pn_iset(c, 0, PN_INT64, r, dims);
	return 0;
}

/* Index of the first (or, with last, the last) best element along R.  The
 * comparison flags are loop invariant: the compiler unswitches them. */
#define DEF_ARG(T, S)                                                                      \
	/* One contiguous row: the extreme with vector lanes, then the first    \
	 * (last) index holding it; a row the lanes cannot settle (NaN) is      \
	 * scanned element by element. */                                      \
	static int64_t arg_row_##S(const T *x, int64_t R, int is_max, int last)             \
	{                                                                                  \
		T lane[LANES];                                                             \
		for (int j = 0; j < LANES; j++)                                            \
			lane[j] = x[0];                                                    \
		int64_t r = 0;                                                             \
		for (; r + LANES <= R; r += LANES)                                         \
			_Pragma("omp simd")                                                \
			for (int j = 0; j < LANES; j++) {                                  \
				T v = x[r + j];                                            \
				lane[j] = (is_max ? v > lane[j] : v < lane[j]) ? v : lane[j]; \
			}                                                                  \
		T b = x[0];                                                                \
		for (int j = 0; j < LANES; j++)                                            \
			b = (is_max ? lane[j] > b : lane[j] < b) ? lane[j] : b;            \
		for (; r < R; r++)                                                         \
			b = (is_max ? x[r] > b : x[r] < b) ? x[r] : b;                     \
		if (last) {                                                                \
			for (int64_t i = R - 1; i >= 0; i--)                               \
				if (x[i] == b)                                             \
					return i;                                          \
		} else {                                                                   \
			for (int64_t i = 0; i < R; i++)                                    \
				if (x[i] == b)                                             \
					return i;                                          \
		}                                                                          \
		int64_t at = 0;                                                            \
		for (int64_t i = 1; i < R; i++)                                            \
			if (is_max ? (last ? x[i] >= x[at] : x[i] > x[at])                 \
				   : (last ? x[i] <= x[at] : x[i] < x[at]))                \
				at = i;                                                    \
		return at;                                                                 \
	}                                                                                  \
	static void arg_##S(const T *x, int64_t *y, int64_t O, int64_t R, int64_t I, int is_max, \
			    int last)                                                      \
	{                                                                                  \
		if (I == 1) {                                                              \
			_Pragma("omp parallel for if (O * R > PN_PAR_MIN_WORK) schedule(static)") \
			for (int64_t o = 0; o < O; o++)                                    \
				y[o] = arg_row_##S(x + o * R, R, is_max, last);            \
			return;                                                            \
		}                                                                          \
		int64_t nch = (I + PN_MU_ICHUNK - 1) / PN_MU_ICHUNK;                        \
		_Pragma("omp parallel for if (O * R * I > PN_PAR_MIN_WORK) schedule(static)") \
		for (int64_t t = 0; t < O * nch; t++) {                                    \
			int64_t o = t / nch, i0 = (t % nch) * PN_MU_ICHUNK;                \
			int64_t i1 = i0 + PN_MU_ICHUNK < I ? i0 + PN_MU_ICHUNK : I;        \
			T best[PN_MU_ICHUNK];                                              \
			int64_t *yr = y + o * I;                                           \
			for (int64_t i = i0; i < i1; i++) {                                \
				best[i - i0] = x[o * R * I + i];                           \
				yr[i] = 0;                                                 \
			}                                                                  \
			for (int64_t r = 1; r < R; r++) {                                  \
				const T *xr = x + (o * R + r) * I;                         \
				for (int64_t i = i0; i < i1; i++) {                        \
					T v = xr[i], b = best[i - i0];                     \
					int better = is_max ? (last ? v >= b : v > b)      \
							    : (last ? v <= b : v < b);     \
					if (better) {                                      \
						best[i - i0] = v;                          \
						yr[i] = r;                                 \
					}                                                  \
				}                                                          \
			}                                                                  \
		}                                                                          \
	}

DEF_ARG(float, f32)
DEF_ARG(double, f64)
DEF_ARG(int64_t, i64)

static int arg_kernel(pn_kctx *k, int is_max)
{
	const pn_tensor *x = k->in[0];
	int axis = pn_axis(pn_attr_int(k->node, "axis", 0), x->rank ? x->rank : 1);
	int last = (int)pn_attr_int(k->node, "select_last_index", 0);
	int ct = pn_mu_ctype(x->dtype);
	if (axis < 0)
		return pn_kfail(k, "axis out of range for rank %d", x->rank);
	if (!ct)
		return pn_kfail(k, "unsupported type %s", pn_dtype_name(x->dtype));
	int64_t O, R, I;
	pn_mu_ori(x->rank, x->dims, axis, &O, &R, &I);
	if (R == 0 && O * I > 0)
		return pn_kfail(k, "cannot take the arg%s of an empty axis", is_max ? "max" : "min");
	if (O * I == 0)
		return 0;
	pn_cbuf xb;
	if (pn_mu_in(k, x, ct, &xb))
		return -1;
	int64_t *y = k->out[0]->data;
	if (ct == PN_FLOAT)
		arg_f32(xb.p, y, O, R, I, is_max, last);
	else if (ct == PN_DOUBLE)
		arg_f64(xb.p, y, O, R, I, is_max, last);
	else
		arg_i64(xb.p, y, O, R, I, is_max, last);
	pn_mu_free(&xb);
	return 0;
}

int pn_kernel_ArgMax(pn_kctx *k) { return arg_kernel(k, 1); }
int pn_kernel_ArgMin(pn_kctx *k) { return arg_kernel(k, 0); }

/* --- CumSum ---------------------------------------------------------------------------- */

/* Running sums along R; reverse walks r backwards, exclusive writes the sum
 * before adding the element. */
#define DEF_CUMSUM(T, S)                                                                   \
	static void cumsum_##S(const T *x, T *y, int64_t O, int64_t R, int64_t I, int excl,    \
			       int rev)                                                    \
	{                                                                                  \
		if (I == 1) {                                                              \
			_Pragma("omp parallel for if (O * R > PN_PAR_MIN_WORK) schedule(static)") \
			for (int64_t o = 0; o < O; o++) {                                  \
				const T *xr = x + o * R;                                   \
				T *yr = y + o * R, acc = 0;                                \
				int64_t step = rev ? -1 : 1, r = rev ? R - 1 : 0;          \
				for (int64_t s = 0; s < R; s++, r += step) {               \
					T v = xr[r];                                       \
					yr[r] = excl ? acc : acc + v;                      \
					acc += v;                                          \
				}                                                          \
			}                                                                  \
			return;                                                            \
		}                                                                          \
		int64_t nch = (I + PN_MU_ICHUNK - 1) / PN_MU_ICHUNK;                        \
		_Pragma("omp parallel for if (O * R * I > PN_PAR_MIN_WORK) schedule(static)") \
		for (int64_t t = 0; t < O * nch; t++) {                                    \
			int64_t o = t / nch, i0 = (t % nch) * PN_MU_ICHUNK;                \
			int64_t i1 = i0 + PN_MU_ICHUNK < I ? i0 + PN_MU_ICHUNK : I;        \
			T acc[PN_MU_ICHUNK];                                               \
			for (int64_t i = 0; i < i1 - i0; i++)                              \
				acc[i] = 0;                                                \
			for (int64_t s = 0; s < R; s++) {                                  \
				int64_t r = rev ? R - 1 - s : s;                           \
				const T *xr = x + (o * R + r) * I;                         \
				T *yr = y + (o * R + r) * I;                               \
				if (excl)                                                  \
					for (int64_t i = i0; i < i1; i++) {                \
						yr[i] = acc[i - i0];                       \
						acc[i - i0] += xr[i];                      \
					}                                                  \
				else                                                       \
					for (int64_t i = i0; i < i1; i++)                  \
						yr[i] = acc[i - i0] += xr[i];              \
			}                                                                  \
		}                                                                          \
	}

DEF_CUMSUM(float, f32)
DEF_CUMSUM(double, f64)
DEF_CUMSUM(int64_t, i64)

int pn_kernel_CumSum(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	pn_tensor *y = k->out[0];
	int64_t ax;
	if (pn_mu_scalar_i64(pn_kin(k, 1), &ax))
		return pn_kfail(k, "axis must be a scalar integer");
	int axis = pn_axis(ax, x->rank);
	int ct = pn_mu_ctype(x->dtype);
	if (axis < 0)
		return pn_kfail(k, "axis %lld out of range for rank %d", (long long)ax, x->rank);
	if (!ct)
		return pn_kfail(k, "unsupported type %s", pn_dtype_name(x->dtype));
	int excl = (int)pn_attr_int(k->node, "exclusive", 0);
	int rev = (int)pn_attr_int(k->node, "reverse", 0);
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
		cumsum_f32(xb.p, yb.p, O, R, I, excl, rev);
	else if (ct == PN_DOUBLE)
		cumsum_f64(xb.p, yb.p, O, R, I, excl, rev);
	else
		cumsum_i64(xb.p, yb.p, O, R, I, excl, rev);
	pn_mu_free(&xb);
	pn_mu_commit(y, ct, &yb);
	return 0;
}

/* --- TopK ------------------------------------------------------------------------------- */

/* TopK reads k from an attribute before opset 10, from input 1 after. */
static int topk_k(const pn_node *n, int opset, const pn_tensor *kin, int64_t *kv)
{
	if (opset < 10) {
		*kv = pn_attr_int(n, "k", -1);
		return *kv < 0 ? -1 : 0;
	}
	return pn_mu_scalar_i64(kin, kv);
}

int pn_infer_TopK(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0);
	if (!x)
		return pn_ifail(c, "missing input");
	int rank = x->type.rank;
	if (rank < 0) {
		pn_iset(c, 0, x->type.dtype, -1, NULL);
		pn_iset(c, 1, PN_INT64, -1, NULL);
		return 0;
	}
	int axis = pn_axis(pn_attr_int(c->node, "axis", -1), rank);
	if (axis < 0)
		return pn_ifail(c, "axis out of range for rank %d", rank);
	int64_t kv = -1;
	const pn_tinfo *kt = pn_iin(c, 1);
	if (c->opset < 10)
		kv = pn_attr_int(c->node, "k", -1);
	else if (kt && kt->value && pn_mu_scalar_i64(kt->value, &kv))
		return pn_ifail(c, "k must be a single integer");
	if (kv >= 0 && x->type.dims[axis] >= 0 && kv > x->type.dims[axis])
		return pn_ifail(c, "k = %lld exceeds axis size %lld", (long long)kv,
				(long long)x->type.dims[axis]);
	int64_t dims[PN_MAX_RANK];
	memcpy(dims, x->type.dims, sizeof(int64_t) * (size_t)rank);
	dims[axis] = kv;
	pn_iset(c, 0, x->type.dtype, rank, dims);
	pn_iset(c, 1, PN_INT64, rank, dims);
	return 0;
}

/* A candidate: its value as an order-preserving unsigned key (flipped for
 * largest-first) and its index; smaller (key, index) ranks first, so equal
 * values keep the lower index first. */
typedef struct tk_item {
	uint64_t key;
	int64_t idx;
} tk_item;

static inline int tk_less(tk_item a, tk_item b)
{
	return a.key < b.key || (a.key == b.key && a.idx < b.idx);
}

static inline uint64_t key_f64(double v)
{
	uint64_t b;
	memcpy(&b, &v, sizeof b);
	return b >> 63 ? ~b : b | (UINT64_C(1) << 63);
}

static inline uint64_t key_i64(int64_t v)
{
	return (uint64_t)v ^ (UINT64_C(1) << 63);
}

/* Max-heap of the k best so far: the root is the worst kept item. */
static void tk_sift(tk_item *h, int64_t n, int64_t i)
{
	for (;;) {
		int64_t l = 2 * i + 1, m = i;
		if (l < n && tk_less(h[m], h[l]))
			m = l;
		if (l + 1 < n && tk_less(h[m], h[l + 1]))
			m = l + 1;
		if (m == i)
			return;
		tk_item t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* Selects the k best of one slice into h, sorted best first. */
static void tk_slice(const void *x, int ct, int64_t base, int64_t R, int64_t I, int64_t kv,
		     int largest, tk_item *h)
{
	int64_t n = 0;
	uint64_t flip = largest ? ~UINT64_C(0) : 0;
	for (int64_t r = 0; r < R; r++) {
		int64_t at = base + r * I;
		uint64_t key = ct == PN_FLOAT    ? key_f64(((const float *)x)[at])
			       : ct == PN_DOUBLE ? key_f64(((const double *)x)[at])
						 : key_i64(((const int64_t *)x)[at]);
		tk_item it = {key ^ flip, r};
		if (n < kv) {
			/* sift up */
			int64_t i = n++;
			h[i] = it;
			while (i && tk_less(h[(i - 1) / 2], h[i])) {
				tk_item t = h[i];
				h[i] = h[(i - 1) / 2];
				h[(i - 1) / 2] = t;
				i = (i - 1) / 2;
			}
		} else if (kv && tk_less(it, h[0])) {
			h[0] = it;
			tk_sift(h, n, 0);
		}
	}
	/* Heap sort in place: popping the worst to the end leaves best first. */
	for (int64_t m = n - 1; m > 0; m--) {
		tk_item t = h[0];
		h[0] = h[m];
		h[m] = t;
		tk_sift(h, m, 0);
	}
}

int pn_kernel_TopK(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	int axis = pn_axis(pn_attr_int(k->node, "axis", -1), x->rank);
	int largest = (int)pn_attr_int(k->node, "largest", 1);
	int64_t kv;
	int ct = pn_mu_ctype(x->dtype);
	if (axis < 0)
		return pn_kfail(k, "axis out of range for rank %d", x->rank);
	if (topk_k(k->node, k->opset, pn_kin(k, 1), &kv))
		return pn_kfail(k, "k must be a single integer");
	if (!ct)
		return pn_kfail(k, "unsupported type %s", pn_dtype_name(x->dtype));
	int64_t O, R, I;
	pn_mu_ori(x->rank, x->dims, axis, &O, &R, &I);
	if (kv < 0 || kv > R)
		return pn_kfail(k, "k = %lld out of range for axis size %lld", (long long)kv,
				(long long)R);
	int64_t dims[PN_MAX_RANK];
	memcpy(dims, x->dims, sizeof dims);
	dims[axis] = kv;
	pn_tensor *vo = pn_out_alloc(k, 0, x->dtype, x->rank, dims);
	pn_tensor *io = vo ? pn_out_alloc(k, 1, PN_INT64, x->rank, dims) : NULL;
	if (!io)
		return -1;
	if (!kv || !O || !I)
		return 0;
	pn_cbuf xb;
	if (pn_mu_in(k, x, ct, &xb))
		return -1;
	size_t esz = pn_dtype_size(x->dtype);
	int failed = 0;
	#pragma omp parallel if (O * I * R > PN_PAR_MIN_WORK)
	{
		tk_item *h = malloc(sizeof(tk_item) * (size_t)kv);
		if (!h) {
			#pragma omp atomic write
			failed = 1;
		}
		#pragma omp for schedule(static)
		for (int64_t s = 0; s < O * I; s++) {
			if (!h)
				continue;
			int64_t o = s / I, i = s % I;
			tk_slice(xb.p, ct, o * R * I + i, R, I, kv, largest, h);
			for (int64_t j = 0; j < kv; j++) {
				int64_t at = (o * kv + j) * I + i;
				memcpy((char *)vo->data + at * esz,
				       (const char *)x->data + ((o * R + h[j].idx) * I + i) * esz, esz);
				((int64_t *)io->data)[at] = h[j].idx;
			}
		}
		free(h);
	}
	pn_mu_free(&xb);
	return failed ? pn_kfail(k, "out of memory") : 0;
}

/* --- Det -------------------------------------------------------------------------------- */

int pn_infer_Det(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0);
	if (!x)
		return pn_ifail(c, "missing input");
	int rank = x->type.rank;
	if (rank < 0) {
		pn_iset(c, 0, x->type.dtype, -1, NULL);
		return 0;
	}
	if (rank < 2)
		return pn_ifail(c, "Det needs rank >= 2, got %d", rank);
	const int64_t *d = x->type.dims;
	if (d[rank - 1] >= 0 && d[rank - 2] >= 0 && d[rank - 1] != d[rank - 2])
		return pn_ifail(c, "Det needs square matrices, got %lldx%lld", (long long)d[rank - 2],
				(long long)d[rank - 1]);
	pn_iset(c, 0, x->type.dtype, rank - 2, d);
	return 0;
}

/* Determinant of one n x n matrix a (destroyed) by LU with partial pivoting. */
static double det_lu(double *a, int64_t n)
{
	double det = 1;
	for (int64_t c = 0; c < n; c++) {
		int64_t piv = c;
		for (int64_t r = c + 1; r < n; r++)
			if (fabs(a[r * n + c]) > fabs(a[piv * n + c]))
				piv = r;
		if (a[piv * n + c] == 0)
			return 0;
		if (piv != c) {
			for (int64_t j = 0; j < n; j++) {
				double t = a[c * n + j];
				a[c * n + j] = a[piv * n + j];
				a[piv * n + j] = t;
			}
			det = -det;
		}
		double p = a[c * n + c];
		det *= p;
		for (int64_t r = c + 1; r < n; r++) {
			double f = a[r * n + c] / p;
			for (int64_t j = c + 1; j < n; j++)
				a[r * n + j] -= f * a[c * n + j];
		}
	}
	return det;
}

int pn_kernel_Det(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	pn_tensor *y = k->out[0];
	if (!pn_dtype_is_float(x->dtype))
		return pn_kfail(k, "Det needs a float input, got %s", pn_dtype_name(x->dtype));
	if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
		return pn_kfail(k, "Det needs square matrices");
	int64_t n = x->dims[x->rank - 1], nb = y->numel;
	pn_cbuf xb, yb;
	size_t cells = (size_t)(n * n * nb);
	double *lu = malloc(sizeof(double) * (cells ? cells : 1));
	if (!lu)
		return pn_kfail(k, "out of memory");
	if (pn_mu_in(k, x, PN_DOUBLE, &xb)) {
		free(lu);
		return -1;
	}
	if (pn_mu_out(k, y, PN_DOUBLE, &yb)) {
		free(lu);
		pn_mu_free(&xb);
		return -1;
	}
	memcpy(lu, xb.p, sizeof(double) * cells);
	double *yd = yb.p;
	#pragma omp parallel for if (nb * n * n * n > PN_PAR_MIN_WORK) schedule(static)
	for (int64_t b = 0; b < nb; b++)
		yd[b] = det_lu(lu + b * n * n, n);
	free(lu);
	pn_mu_free(&xb);
	pn_mu_commit(y, PN_DOUBLE, &yb);
	return 0;
}
