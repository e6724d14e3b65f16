/*
 * softmax.c - Softmax, LogSoftmax, Hardmax (part of the reduction family,
 * see reduce.c; inference is the shared `unary`).
 *
 * Before opset 13 the input is coerced to 2-D at `axis` (default 1) and
 * every row of the flattened tail is normalised; from 13 the op works along
 * the single axis (default -1).  Both become the (O, R, I) form: rows
 * (I == 1) or blocks of inner columns, one output slice per task.
 */
#include <math.h>

#include "runtime/infer.h"
#include "runtime/kernel.h"
#include "runtime/ops/mathutil.h"

enum sm_op { SM_SOFTMAX, SM_LOG, SM_HARD };

#define LANES 16

/* exp in the compute type: the vectorisable float32 version, libm's for
 * double. */
static inline float exp_f32(float x) { return pn_mu_expf(x); }
static inline double exp_f64(double x) { return exp(x); }

/*
 * Row form (I == 1, the usual last-axis softmax): max, exponentials and
 * their sum, each a loop over contiguous elements with independent lanes
 * so the compiler vectorises it.  Column form (I > 1): blocks of inner
 * columns, every loop running along the contiguous i.
 */
#define DEF_SOFTMAX(T, S, LOG)                                                               \
	static T row_max_##S(const T *x, int64_t n)                                          \
	{                                                                                    \
		T lane[LANES];                                                               \
		for (int j = 0; j < LANES; j++)                                              \
			lane[j] = -INFINITY;                                                 \
		int64_t r = 0;                                                               \
		for (; r + LANES <= n; r += LANES)                                           \
			_Pragma("omp simd")                                                  \
			for (int j = 0; j < LANES; j++)                                      \
				lane[j] = x[r + j] > lane[j] ? x[r + j] : lane[j];           \
		T m = -INFINITY;                                                             \
		for (int j = 0; j < LANES; j++)                                              \
			m = lane[j] > m ? lane[j] : m;                                       \
		for (; r < n; r++)                                                           \
			m = x[r] > m ? x[r] : m;                                             \
		return m;                                                                    \
	}                                                                                    \
	/* y = exp(x - m); returns the sum of y */                                           \
	static T row_exp_##S(const T *x, T *y, int64_t n, T m)                               \
	{                                                                                    \
		T lane[LANES] = {0};                                                         \
		int64_t r = 0;                                                               \
		for (; r + LANES <= n; r += LANES)                                           \
			_Pragma("omp simd")                                                  \
			for (int j = 0; j < LANES; j++) {                                    \
				T e = exp_##S(x[r + j] - m);                                 \
				y[r + j] = e;                                                \
				lane[j] += e;                                                \
			}                                                                    \
		T s = 0;                                                                     \
		for (int j = 0; j < LANES; j++)                                              \
			s += lane[j];                                                        \
		for (; r < n; r++) {                                                         \
			y[r] = exp_##S(x[r] - m);                                            \
			s += y[r];                                                           \
		}                                                                            \
		return s;                                                                    \
	}                                                                                    \
	static void softmax_row_##S(int op, const T *x, T *y, int64_t n)                     \
	{                                                                                    \
		T m = row_max_##S(x, n);                                                     \
		if (op == SM_HARD) {                                                         \
			int64_t at = 0;                                                      \
			while (at < n && !(x[at] >= m))                                      \
				at++;                                                        \
			for (int64_t r = 0; r < n; r++)                                      \
				y[r] = r == at;                                              \
			return;                                                              \
		}                                                                            \
		T s = row_exp_##S(x, y, n, m);                                               \
		if (op == SM_SOFTMAX) {                                                      \
			for (int64_t r = 0; r < n; r++)                                      \
				y[r] /= s;                                                   \
			return;                                                              \
		}                                                                            \
		T ls = m + LOG(s);                                                           \
		for (int64_t r = 0; r < n; r++)                                              \
			y[r] = x[r] - ls;                                                    \
	}                                                                                    \
	static void softmax_cols_##S(int op, const T *xs, T *ys, int64_t R, int64_t I, int64_t w) \
	{                                                                                    \
		T m[PN_MU_ICHUNK], s[PN_MU_ICHUNK];                                          \
		for (int64_t i = 0; i < w; i++) {                                            \
			m[i] = -INFINITY;                                                    \
			s[i] = 0;                                                            \
		}                                                                            \
		for (int64_t r = 0; r < R; r++)                                              \
			for (int64_t i = 0; i < w; i++)                                      \
				m[i] = xs[r * I + i] > m[i] ? xs[r * I + i] : m[i];          \
		if (op == SM_HARD) {                                                         \
			/* first index reaching the max: s marks columns still open */      \
			for (int64_t r = 0; r < R; r++)                                      \
				for (int64_t i = 0; i < w; i++) {                            \
					int hit = s[i] == 0 && xs[r * I + i] >= m[i];        \
					ys[r * I + i] = hit;                                 \
					s[i] = hit ? 1 : s[i];                               \
				}                                                            \
			return;                                                              \
		}                                                                            \
		for (int64_t r = 0; r < R; r++)                                              \
			for (int64_t i = 0; i < w; i++) {                                    \
				T e = exp_##S(xs[r * I + i] - m[i]);                         \
				s[i] += e;                                                   \
				ys[r * I + i] = e;                                           \
			}                                                                    \
		if (op == SM_SOFTMAX) {                                                      \
			for (int64_t r = 0; r < R; r++)                                      \
				for (int64_t i = 0; i < w; i++)                              \
					ys[r * I + i] /= s[i];                               \
			return;                                                              \
		}                                                                            \
		for (int64_t i = 0; i < w; i++)                                              \
			s[i] = m[i] + LOG(s[i]);                                             \
		for (int64_t r = 0; r < R; r++)                                              \
			for (int64_t i = 0; i < w; i++)                                      \
				ys[r * I + i] = xs[r * I + i] - s[i];                        \
	}                                                                                    \
	static void softmax_##S(int op, const T *x, T *y, int64_t O, int64_t R, int64_t I)    \
	{                                                                                    \
		if (I == 1) {                                                                \
			_Pragma("omp parallel for if (O * R > PN_PAR_MIN_WORK / 8) schedule(static)") \
			for (int64_t o = 0; o < O; o++)                                      \
				softmax_row_##S(op, x + o * R, y + o * R, R);                \
			return;                                                              \
		}                                                                            \
		int64_t nch = (I + PN_MU_ICHUNK - 1) / PN_MU_ICHUNK;                          \
		_Pragma("omp parallel for if (O * R * I > PN_PAR_MIN_WORK / 8) schedule(static)") \
		for (int64_t t = 0; t < O * nch; t++) {                                      \
			int64_t o = t / nch, i0 = (t % nch) * PN_MU_ICHUNK;                  \
			int64_t i1 = i0 + PN_MU_ICHUNK < I ? i0 + PN_MU_ICHUNK : I;          \
			softmax_cols_##S(op, x + o * R * I + i0, y + o * R * I + i0, R, I, i1 - i0); \
		}                                                                            \
	}

DEF_SOFTMAX(float, f32, logf)
DEF_SOFTMAX(double, f64, log)

static int softmax_kernel(pn_kctx *k, int op)
{
	const pn_tensor *x = k->in[0];
	pn_tensor *y = k->out[0];
	int ct = pn_mu_ctype(x->dtype);
	if (ct != PN_FLOAT && ct != PN_DOUBLE)
		return pn_kfail(k, "unsupported type %s", pn_dtype_name(x->dtype));
	int old = k->opset < 13;
	int rank = x->rank ? x->rank : 1;
	int axis = pn_axis(pn_attr_int(k->node, "axis", old ? 1 : -1), rank);
	if (axis < 0)
		return pn_kfail(k, "axis out of range for rank %d", x->rank);
	int64_t O, R, I;
	if (old) {
		/* coerced to [prod(dims[:axis]), prod(dims[axis:])] */
		O = 1;
		R = 1;
		I = 1;
		for (int d = 0; d < x->rank; d++)
			*(d < axis ? &O : &R) *= x->dims[d];
	} else {
		pn_mu_ori(x->rank, x->dims, axis, &O, &R, &I);
	}
	pn_cbuf xb, yb;
	if (pn_mu_in(k, x, ct, &xb))
		return -1;
	if (pn_mu_out(k, y, ct, &yb)) {
		pn_mu_free(&xb);
		return -1;
	}
	if (ct == PN_FLOAT)
		softmax_f32(op, xb.p, yb.p, O, R, I);
	else
		softmax_f64(op, xb.p, yb.p, O, R, I);
	pn_mu_free(&xb);
	pn_mu_commit(y, ct, &yb);
	return 0;
}

int pn_kernel_Softmax(pn_kctx *k) { return softmax_kernel(k, SM_SOFTMAX); }
int pn_kernel_LogSoftmax(pn_kctx *k) { return softmax_kernel(k, SM_LOG); }
int pn_kernel_Hardmax(pn_kctx *k) { return softmax_kernel(k, SM_HARD); }
