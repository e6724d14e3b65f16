/*
 * norm_impl.h - the typed loops of norm.c, included once per compute type
 * with T (float or double), S (name suffix) and the math functions SQRT,
 * POW defined.  No include guard on purpose.
 *
 * Means and variances are accumulated in double whatever T is, with
 * several lanes so the compiler vectorises the sums; the normalised
 * outputs are computed in T.
 */
#define NI_CAT2(a, b) a##_##b
#define NI_CAT(a, b) NI_CAT2(a, b)
#define FN(name) NI_CAT(name, S)

#define NI_LANES 8

static double FN(row_sum)(const T *x, int64_t n)
{
	double lane[NI_LANES] = {0};
	int64_t i = 0;
	for (; i + NI_LANES <= n; i += NI_LANES)
		#pragma omp simd
		for (int j = 0; j < NI_LANES; j++)
			lane[j] += x[i + j];
	double s = 0;
	for (int j = 0; j < NI_LANES; j++)
		s += lane[j];
	for (; i < n; i++)
		s += x[i];
	return s;
}

/* Sum of squared deviations from mean (the two-pass variance). */
static double FN(row_sqdev)(const T *x, int64_t n, double mean)
{
	double lane[NI_LANES] = {0};
	int64_t i = 0;
	for (; i + NI_LANES <= n; i += NI_LANES)
		#pragma omp simd
		for (int j = 0; j < NI_LANES; j++) {
			double d = x[i + j] - mean;
			lane[j] += d * d;
		}
	double s = 0;
	for (int j = 0; j < NI_LANES; j++)
		s += lane[j];
	for (; i < n; i++)
		s += (x[i] - mean) * (x[i] - mean);
	return s;
}

/*
 * Normalises each of `rows` contiguous rows of n elements:
 * y = (x - mean) * inv, inv = 1 / sqrt(var + eps) (mvn: 1 / (sqrt(var) +
 * eps)), then y = y * scale + bias when scale is given.  Element j of row r
 * uses scale[(r % p->mod) * p->mul + j / p->per]: one value per row
 * (InstanceNormalization), per channel of a group, or per element
 * (LayerNormalization).  Mean and inv of each row go to mean_out/inv_out
 * when given.
 */
static void FN(rows_norm)(const T *x, T *y, int64_t rows, int64_t n, const norm_par *p,
			  const T *scale, const T *bias, double *mean_out, double *inv_out)
{
	#pragma omp parallel for if (rows * n > PN_PAR_MIN_WORK / 4) schedule(static)
	for (int64_t r = 0; r < rows; r++) {
		const T *xr = x + r * n;
		T *yr = y + r * n;
		double mean = n ? FN(row_sum)(xr, n) / (double)n : 0;
		double var = n ? FN(row_sqdev)(xr, n, mean) / (double)n : 0;
		double inv = p->mvn ? 1 / (sqrt(var) + p->eps) : 1 / sqrt(var + p->eps);
		if (mean_out)
			mean_out[r] = mean;
		if (inv_out)
			inv_out[r] = inv;
		T m = (T)mean, v = (T)inv;
		if (!scale) {
			for (int64_t j = 0; j < n; j++)
				yr[j] = (xr[j] - m) * v;
			continue;
		}
		const T *sc = scale + (r % p->mod) * p->mul;
		const T *bi = bias ? bias + (r % p->mod) * p->mul : NULL;
		if (p->per == 1) {
			for (int64_t j = 0; j < n; j++)
				yr[j] = (xr[j] - m) * v * sc[j] + (bi ? bi[j] : 0);
			continue;
		}
		for (int64_t j0 = 0; j0 < n; j0 += p->per) {
			T a = v * sc[j0 / p->per], b = bi ? bi[j0 / p->per] : 0;
			int64_t j1 = j0 + p->per < n ? j0 + p->per : n;
			for (int64_t j = j0; j < j1; j++)
				yr[j] = (xr[j] - m) * a + b;
		}
	}
}

/* BatchNormalization: y = (x - m) * a + b per channel (per element of
 * [C, S] when per_elem: opset < 9 with spatial = 0). */
static void FN(bn_apply)(const T *x, T *y, int64_t N, int64_t C, int64_t Sp, const T *m,
			 const T *a, const T *b, int per_elem)
{
	#pragma omp parallel for if (N * C * Sp > PN_PAR_MIN_WORK) schedule(static)
	for (int64_t nc = 0; nc < N * C; nc++) {
		int64_t c = nc % C;
		const T *xr = x + nc * Sp;
		T *yr = y + nc * Sp;
		if (per_elem) {
			const T *mr = m + c * Sp, *ar = a + c * Sp, *br = b + c * Sp;
			for (int64_t s = 0; s < Sp; s++)
				yr[s] = (xr[s] - mr[s]) * ar[s] + br[s];
		} else {
			T mc = m[c], ac = a[c], bc = b[c];
			for (int64_t s = 0; s < Sp; s++)
				yr[s] = (xr[s] - mc) * ac + bc;
		}
	}
}

/* Batch mean and (population) variance of each channel of x[N, C, S]. */
static void FN(bn_stats)(const T *x, int64_t N, int64_t C, int64_t Sp, double *mean, double *var)
{
	#pragma omp parallel for if (N * C * Sp > PN_PAR_MIN_WORK) schedule(static)
	for (int64_t c = 0; c < C; c++) {
		double s = 0, q = 0, cnt = (double)(N * Sp);
		for (int64_t n = 0; n < N; n++)
			s += FN(row_sum)(x + (n * C + c) * Sp, Sp);
		double mu = cnt ? s / cnt : 0;
		for (int64_t n = 0; n < N; n++)
			q += FN(row_sqdev)(x + (n * C + c) * Sp, Sp, mu);
		mean[c] = mu;
		var[c] = cnt ? q / cnt : 0;
	}
}

/* LpNormalization along R of x[O, R, I]: y = x / ||x||_p. */
static void FN(lp_norm)(const T *x, T *y, int64_t O, int64_t R, int64_t I, int p)
{
	int64_t nch = (I + PN_MU_ICHUNK - 1) / PN_MU_ICHUNK;
	#pragma omp parallel for if (O * R * I > PN_PAR_MIN_WORK) schedule(static)
	for (int64_t t = 0; t < O * nch; t++) {
		int64_t o = t / nch, i0 = (t % nch) * PN_MU_ICHUNK;
		int64_t i1 = i0 + PN_MU_ICHUNK < I ? i0 + PN_MU_ICHUNK : I, w = i1 - i0;
		const T *xs = x + o * R * I + i0;
		T *ys = y + o * R * I + i0;
		T acc[PN_MU_ICHUNK];
		for (int64_t i = 0; i < w; i++)
			acc[i] = 0;
		for (int64_t r = 0; r < R; r++)
			for (int64_t i = 0; i < w; i++) {
				T v = xs[r * I + i];
				acc[i] += p == 1 ? (v < 0 ? -v : v) : v * v;
			}
		if (p != 1)
			for (int64_t i = 0; i < w; i++)
				acc[i] = SQRT(acc[i]);
		for (int64_t r = 0; r < R; r++)
			for (int64_t i = 0; i < w; i++)
				ys[r * I + i] = xs[r * I + i] / acc[i];
	}
}

/* LRN across channels of x[N, C, S]: y = x / (bias + alpha/size * sum of
 * squares over the channel window)^beta. */
static void FN(lrn)(const T *x, T *y, int64_t N, int64_t C, int64_t Sp, int64_t size, T alpha,
		    T beta, T bias)
{
	int64_t lo = (size - 1) / 2, hi = size - 1 - lo;   /* floor and ceil of (size-1)/2 */
	T coef = alpha / (T)size;
	#pragma omp parallel for if (N * C * Sp * size > PN_PAR_MIN_WORK) schedule(static)
	for (int64_t nc = 0; nc < N * C; nc++) {
		int64_t n = nc / C, c = nc % C;
		int64_t c0 = c - lo < 0 ? 0 : c - lo, c1 = c + hi >= C ? C - 1 : c + hi;
		T *yr = y + nc * Sp;
		const T *xr = x + nc * Sp;
		for (int64_t s = 0; s < Sp; s++)
			yr[s] = 0;
		for (int64_t cc = c0; cc <= c1; cc++) {
			const T *xc = x + (n * C + cc) * Sp;
			for (int64_t s = 0; s < Sp; s++)
				yr[s] += xc[s] * xc[s];
		}
		for (int64_t s = 0; s < Sp; s++)
			yr[s] = xr[s] / POW(bias + coef * yr[s], beta);
	}
}

#undef FN
#undef NI_CAT
#undef NI_CAT2
#undef NI_LANES
