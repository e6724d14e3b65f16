/*
 * matmul.c - matrix products: MatMul, Gemm, MatMulInteger, QLinearMatMul
 * (Einsum, which reuses the batched product here, is in einsum.c).
 *
 * float32 (and float16/bfloat16, converted to float32) goes through
 * pn_sgemm one batch item at a time; float64 and the integer types use the
 * row loops below (int64 accumulation, truncated to the output type like
 * numpy's wrap-around).  The quantized ops subtract zero points into int32
 * operands and multiply in int32.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/gemm.h"
#include "runtime/infer.h"
#include "runtime/kernel.h"
#include "runtime/ops/mathutil.h"

/* --- batched products -------------------------------------------------------------- */

/* C[b] = A[offa[b]] x B[offb[b]] for row-major [M,K] x [K,N]; one task per
 * output row, each row summed over k in order. */
#define DEF_MM(T, S)                                                                         \
	static void mm_##S(const T *A, const T *B, T *C, int64_t M, int64_t N, int64_t K,     \
			   const int64_t *offa, const int64_t *offb, int64_t nb)              \
	{                                                                                    \
		_Pragma("omp parallel for if (nb * M * N * K > PN_PAR_MIN_WORK) schedule(static)") \
		for (int64_t t = 0; t < nb * M; t++) {                                       \
			int64_t b = t / M, i = t % M;                                        \
			const T *a = A + offa[b] + i * K, *bb = B + offb[b];                 \
			T *c = C + t * N;                                                    \
			for (int64_t j = 0; j < N; j++)                                      \
				c[j] = 0;                                                    \
			for (int64_t p = 0; p < K; p++) {                                    \
				T av = a[p];                                                 \
				const T *br = bb + p * N;                                    \
				for (int64_t j = 0; j < N; j++)                              \
					c[j] += av * br[j];                                  \
			}                                                                    \
		}                                                                            \
	}

DEF_MM(double, f64)
DEF_MM(int64_t, i64)

/* int32 operands of the quantized ops: products fit in int32 (|a|, |b| <=
 * 510), sums wrap (in uint32 to keep the arithmetic defined). */
static void mm_i32(const int32_t *A, const int32_t *B, int32_t *C, int64_t M, int64_t N,
		   int64_t K, const int64_t *offa, const int64_t *offb, int64_t nb)
{
	#pragma omp parallel for if (nb * M * N * K > PN_PAR_MIN_WORK) schedule(static)
	for (int64_t t = 0; t < nb * M; t++) {
		int64_t b = t / M, i = t % M;
		const int32_t *a = A + offa[b] + i * K, *bb = B + offb[b];
		uint32_t *c = (uint32_t *)(C + t * N);
		for (int64_t j = 0; j < N; j++)
			c[j] = 0;
		for (int64_t p = 0; p < K; p++) {
			int32_t av = a[p];
			const int32_t *br = bb + p * N;
			for (int64_t j = 0; j < N; j++)
				c[j] += (uint32_t)(av * br[j]);
		}
	}
}

/* Many small float32 products run one per thread; large ones one after the
 * other with pn_sgemm's own threads.  Both give the bits of pn_sgemm. */
static void mm_f32(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K,
		   const int64_t *offa, const int64_t *offb, int64_t nb)
{
	int small = M * N * K < (1 << 18);
	#pragma omp parallel for if (small && nb > 1 && nb * M * N * K > PN_PAR_MIN_WORK) schedule(static)
	for (int64_t b = 0; b < nb; b++)
		pn_sgemm(0, 0, M, N, K, 1.0f, A + offa[b], K, B + offb[b], N, 0.0f, C + b * M * N, N);
}

void pn_mu_bmm(int ct, const void *A, const void *B, void *C, int64_t M, int64_t N, int64_t K,
	       const int64_t *offa, const int64_t *offb, int64_t nb)
{
	if (!nb || !M || !N)
		return;
	if (!K) {
		memset(C, 0, pn_dtype_size(ct) * (size_t)(nb * M * N));
		return;
	}
	switch (ct) {
	case PN_FLOAT: mm_f32(A, B, C, M, N, K, offa, offb, nb); break;
	case PN_DOUBLE: mm_f64(A, B, C, M, N, K, offa, offb, nb); break;
	case PN_INT64: mm_i64(A, B, C, M, N, K, offa, offb, nb); break;
	case PN_INT32: mm_i32(A, B, C, M, N, K, offa, offb, nb); break;
	}
}

/* --- numpy matmul shapes -------------------------------------------------------------- */

/*
 * MatMul shapes: a 1-D A is [1, K] and a 1-D B is [K, 1] (the added dim is
 * dropped from the result); the batch dims broadcast.  offa/offb give each
 * output batch item's operand offsets in elements.
 */
typedef struct mm_plan {
	int64_t M, N, K, nb;
	int out_rank;
	int64_t out_dims[PN_MAX_RANK];
	int64_t *offa, *offb;
} mm_plan;

static void mm_plan_free(mm_plan *p)
{
	free(p->offa);
	free(p->offb);
	p->offa = p->offb = NULL;
}

/* Batch dims of an operand of rank r (matrix dims excluded). */
static int batch_rank(int r)
{
	return r > 2 ? r - 2 : 0;
}

static int mm_plan_make(pn_kctx *k, const pn_tensor *a, const pn_tensor *b, mm_plan *p)
{
	memset(p, 0, sizeof(*p));
	if (a->rank < 1 || b->rank < 1)
		return pn_kfail(k, "MatMul operands must have rank >= 1");
	p->M = a->rank >= 2 ? a->dims[a->rank - 2] : 1;
	p->K = a->dims[a->rank - 1];
	int64_t kb = b->rank >= 2 ? b->dims[b->rank - 2] : b->dims[0];
	p->N = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
	if (kb != p->K)
		return pn_kfail(k, "inner dims differ: %lld vs %lld", (long long)p->K, (long long)kb);
	int ba = batch_rank(a->rank), bb = batch_rank(b->rank);
	int br = ba > bb ? ba : bb;
	int64_t bd[PN_MAX_RANK], sa[PN_MAX_RANK], sb[PN_MAX_RANK];
	int64_t stra = p->M * p->K, strb = p->K * p->N;
	/* broadcast batch dims, and each operand's stride per batch dim (0 when
	 * the operand has size 1 or lacks the dim) */
	for (int d = br - 1; d >= 0; d--) {
		int da = d - (br - ba), db = d - (br - bb);
		int64_t xa = da >= 0 ? a->dims[da] : 1, xb = db >= 0 ? b->dims[db] : 1;
		if (xa != xb && xa != 1 && xb != 1)
			return pn_kfail(k, "batch dims do not broadcast: %lld vs %lld", (long long)xa,
					(long long)xb);
		bd[d] = xa == 1 ? xb : xa;
		sa[d] = xa == 1 ? 0 : stra;
		sb[d] = xb == 1 ? 0 : strb;
		stra *= xa;
		strb *= xb;
	}
	p->nb = pn_numel(br, bd);
	if (p->nb < 0)
		return pn_kfail(k, "batch dims exceed %lld elements", (long long)PN_MAX_NUMEL);
	memcpy(p->out_dims, bd, sizeof(int64_t) * (size_t)br);
	p->out_rank = br;
	if (a->rank >= 2)
		p->out_dims[p->out_rank++] = p->M;
	if (b->rank >= 2)
		p->out_dims[p->out_rank++] = p->N;
	p->offa = malloc(sizeof(int64_t) * (size_t)(p->nb + 1));
	p->offb = malloc(sizeof(int64_t) * (size_t)(p->nb + 1));
	if (!p->offa || !p->offb) {
		mm_plan_free(p);
		return pn_kfail(k, "out of memory");
	}
	for (int64_t i = 0; i < p->nb; i++) {
		int64_t rem = i, oa = 0, ob = 0;
		for (int d = br - 1; d >= 0; d--) {
			int64_t x = rem % bd[d];
			rem /= bd[d];
			oa += x * sa[d];
			ob += x * sb[d];
		}
		p->offa[i] = oa;
		p->offb[i] = ob;
	}
	/* B shared by every item (a weight): one product with M' = nb * M, as
	 * A's items are then contiguous. */
	int b_shared = 1;
	for (int64_t i = 0; i < p->nb; i++)
		b_shared &= p->offb[i] == 0 && p->offa[i] == i * p->M * p->K;
	if (b_shared && p->nb > 1) {
		p->M *= p->nb;
		p->nb = 1;
	}
	return 0;
}

static int mm_infer_shape(pn_ictx *c, const pn_tinfo *a, const pn_tinfo *b, int dtype)
{
	if (!a || !b)
		return pn_ifail(c, "missing input");
	int ra = a->type.rank, rb = b->type.rank;
	if (ra < 0 || rb < 0) {
		pn_iset(c, 0, dtype, -1, NULL);
		return 0;
	}
	if (ra < 1 || rb < 1)
		return pn_ifail(c, "MatMul operands must have rank >= 1");
	const int64_t *da = a->type.dims, *db = b->type.dims;
	int64_t ka = da[ra - 1], kb = rb >= 2 ? db[rb - 2] : db[0];
	if (ka >= 0 && kb >= 0 && ka != kb)
		return pn_ifail(c, "inner dims differ: %lld vs %lld", (long long)ka, (long long)kb);
	pn_type ta = {.rank = batch_rank(ra)}, tb = {.rank = batch_rank(rb)}, to;
	memcpy(ta.dims, da, sizeof(int64_t) * (size_t)ta.rank);
	memcpy(tb.dims, db, sizeof(int64_t) * (size_t)tb.rank);
	if (pn_bcast_shape(c, &ta, &tb, &to))
		return -1;
	if (ra >= 2)
		to.dims[to.rank++] = da[ra - 2];
	if (rb >= 2)
		to.dims[to.rank++] = db[rb - 1];
	if (to.rank > PN_MAX_RANK)
		return pn_ifail(c, "result rank exceeds %d", PN_MAX_RANK);
	pn_iset(c, 0, dtype, to.rank, to.dims);
	return 0;
}

/* MatMul, MatMulInteger (A, B = inputs 0, 1; int32 result) and
 * QLinearMatMul (A, B = inputs 0, 3; result typed like y_zero_point). */
int pn_infer_MatMul(pn_ictx *c)
{
	const char *op = c->node->op_type;
	const pn_tinfo *a = pn_iin(c, 0);
	if (!strcmp(op, "QLinearMatMul")) {
		const pn_tinfo *zp = pn_iin(c, 7);
		return mm_infer_shape(c, a, pn_iin(c, 3), zp ? zp->type.dtype : PN_UINT8);
	}
	if (!strcmp(op, "MatMulInteger"))
		return mm_infer_shape(c, a, pn_iin(c, 1), PN_INT32);
	return mm_infer_shape(c, a, pn_iin(c, 1), a ? a->type.dtype : PN_UNDEFINED);
}

/* --- MatMul ---------------------------------------------------------------------------------- */

int pn_kernel_MatMul(pn_kctx *k)
{
	const pn_tensor *a = k->in[0], *b = k->in[1];
	pn_tensor *y = k->out[0];
	if (a->dtype != b->dtype)
		return pn_kfail(k, "operand types differ: %s vs %s", pn_dtype_name(a->dtype),
				pn_dtype_name(b->dtype));
	int ct = pn_mu_ctype(a->dtype);
	if (!ct || a->dtype == PN_BOOL)
		return pn_kfail(k, "unsupported type %s", pn_dtype_name(a->dtype));
	mm_plan p;
	if (mm_plan_make(k, a, b, &p))
		return -1;
	if (!pn_out_alloc(k, 0, a->dtype, p.out_rank, p.out_dims)) {
		mm_plan_free(&p);
		return -1;
	}
	pn_cbuf ab = {0}, bb = {0}, yb = {0};
	int rc = 0;
	if (pn_mu_in(k, a, ct, &ab) || pn_mu_in(k, b, ct, &bb) || pn_mu_out(k, y, ct, &yb))
		rc = -1;
	const float *pb = NULL;
	if (!rc && ct == PN_FLOAT && p.nb == 1 && p.K > 0 && pn_sgemm_packs_b(0, p.M, p.N))
		pb = pn_kconst_packed_b(k, 1, 0, 0, p.K, p.N, bb.p, p.N);
	if (pb)
		pn_sgemm_packed_b(0, p.M, p.N, p.K, 1.0f, ab.p, p.K, pb, 0.0f, yb.p, p.N);
	else if (!rc)
		pn_mu_bmm(ct, ab.p, bb.p, yb.p, p.M, p.N, p.K, p.offa, p.offb, p.nb);
	pn_mu_free(&ab);
	pn_mu_free(&bb);
	if (rc)
		pn_mu_free(&yb);
	else
		pn_mu_commit(y, ct, &yb);
	mm_plan_free(&p);
	return rc;
}

/* --- Gemm -------------------------------------------------------------------------------------- */

static int gemm_dims(const int64_t *da, const int64_t *db, int ta, int tb, int64_t *M, int64_t *N,
		     int64_t *K, int64_t *Kb)
{
	*M = ta ? da[1] : da[0];
	*K = ta ? da[0] : da[1];
	*Kb = tb ? db[1] : db[0];
	*N = tb ? db[0] : db[1];
	return 0;
}

int pn_infer_Gemm(pn_ictx *c)
{
	const pn_tinfo *a = pn_iin(c, 0), *b = pn_iin(c, 1);
	if (!a || !b)
		return pn_ifail(c, "missing input");
	int dt = a->type.dtype;
	if (a->type.rank < 0 || b->type.rank < 0) {
		pn_iset(c, 0, dt, 2, NULL);
		return 0;
	}
	if (a->type.rank != 2 || b->type.rank != 2)
		return pn_ifail(c, "Gemm needs 2-D A and B");
	int64_t M, N, K, Kb;
	gemm_dims(a->type.dims, b->type.dims, (int)pn_attr_int(c->node, "transA", 0),
		  (int)pn_attr_int(c->node, "transB", 0), &M, &N, &K, &Kb);
	if (K >= 0 && Kb >= 0 && K != Kb)
		return pn_ifail(c, "inner dims differ: %lld vs %lld", (long long)K, (long long)Kb);
	pn_iset(c, 0, dt, 2, (int64_t[]){M, N});
	return 0;
}

/* Y = beta * C broadcast to [M, N] (unidirectional), in compute type ct. */
static int gemm_bias(pn_kctx *k, const pn_tensor *cm, int ct, int64_t M, int64_t N, void *y)
{
	if (cm->rank > 2)
		return pn_kfail(k, "C must have rank <= 2");
	int64_t cM = cm->rank == 2 ? cm->dims[0] : 1, cN = cm->rank >= 1 ? cm->dims[cm->rank - 1] : 1;
	if ((cM != 1 && cM != M) || (cN != 1 && cN != N))
		return pn_kfail(k, "C does not broadcast to [%lld, %lld]", (long long)M, (long long)N);
	pn_cbuf cb;
	if (pn_mu_in(k, cm, ct, &cb))
		return -1;
	int64_t st[2] = {cM == 1 ? 0 : cN, cN == 1 ? 0 : 1};
	pn_mu_gather(pn_dtype_size(ct), 2, (int64_t[]){M, N}, st, cb.p, y);
	pn_mu_free(&cb);
	return 0;
}

/* Own-loop Gemm (float64, integers): transposed operands are gathered
 * upright, the product computed, then alpha and beta * C applied. */
#define DEF_GEMM_FINISH(T, S)                                                                 \
	static void gemm_finish_##S(T *y, const T *prod, int64_t n, double alpha, double beta, \
				    int has_c)                                                \
	{                                                                                     \
		for (int64_t i = 0; i < n; i++)                                               \
			y[i] = (T)(alpha * (double)prod[i] + (has_c ? beta * (double)y[i] : 0)); \
	}

DEF_GEMM_FINISH(double, f64)
DEF_GEMM_FINISH(int64_t, i64)

static int gemm_rows(pn_kctx *k, int ct, const void *A, const void *B, void *y, int64_t M, int64_t N,
		     int64_t K, int ta, int tb, double alpha, double beta, int has_c)
{
	size_t es = pn_dtype_size(ct);
	void *au = NULL, *bu = NULL, *prod = malloc(es * (size_t)(M * N + 1));
	if (ta && (au = malloc(es * (size_t)(M * K + 1))))
		pn_mu_gather(es, 2, (int64_t[]){M, K}, (int64_t[]){1, M}, A, au);
	if (tb && (bu = malloc(es * (size_t)(K * N + 1))))
		pn_mu_gather(es, 2, (int64_t[]){K, N}, (int64_t[]){1, K}, B, bu);
	int rc = 0;
	if (!prod || (ta && !au) || (tb && !bu)) {
		rc = pn_kfail(k, "out of memory");
	} else {
		int64_t zero = 0;
		pn_mu_bmm(ct, ta ? au : A, tb ? bu : B, prod, M, N, K, &zero, &zero, 1);
		if (ct == PN_DOUBLE)
			gemm_finish_f64(y, prod, M * N, alpha, beta, has_c);
		else
			gemm_finish_i64(y, prod, M * N, alpha, beta, has_c);
	}
	free(au);
	free(bu);
	free(prod);
	return rc;
}

int pn_kernel_Gemm(pn_kctx *k)
{
	const pn_tensor *a = k->in[0], *b = k->in[1], *cm = pn_kin(k, 2);
	pn_tensor *y = k->out[0];
	int ta = (int)pn_attr_int(k->node, "transA", 0), tb = (int)pn_attr_int(k->node, "transB", 0);
	double alpha = pn_attr_float(k->node, "alpha", 1.0f), beta = pn_attr_float(k->node, "beta", 1.0f);
	if (a->rank != 2 || b->rank != 2)
		return pn_kfail(k, "Gemm needs 2-D A and B");
	int ct = pn_mu_ctype(a->dtype);
	if (!ct || a->dtype == PN_BOOL || b->dtype != a->dtype)
		return pn_kfail(k, "unsupported types %s, %s", pn_dtype_name(a->dtype),
				pn_dtype_name(b->dtype));
	int64_t M, N, K, Kb;
	gemm_dims(a->dims, b->dims, ta, tb, &M, &N, &K, &Kb);
	if (K != Kb)
		return pn_kfail(k, "inner dims differ: %lld vs %lld", (long long)K, (long long)Kb);
	if (!pn_out_alloc(k, 0, a->dtype, 2, (int64_t[]){M, N}))
		return -1;
	/* beta == 0 drops C, as BLAS does (0 * inf in C is not propagated) */
	int has_c = cm && beta != 0 && cm->numel > 0;
	pn_cbuf ab = {0}, bb = {0}, yb = {0};
	int rc = 0;
	if (pn_mu_in(k, a, ct, &ab) || pn_mu_in(k, b, ct, &bb) || pn_mu_out(k, y, ct, &yb))
		rc = -1;
	if (!rc && has_c)
		rc = gemm_bias(k, cm, ct, M, N, yb.p);
	if (!rc && ct == PN_FLOAT) {
		float *yd = yb.p;
		if (has_c && beta != 1)
			for (int64_t i = 0; i < M * N; i++)
				yd[i] *= (float)beta;
		const float *pb = pn_sgemm_packs_b(tb, M, N) ?
			pn_kconst_packed_b(k, 1, 0, tb, K, N, bb.p, tb ? K : N) : NULL;
		if (pb)
			pn_sgemm_packed_b(ta, M, N, K, (float)alpha, ab.p, ta ? M : K, pb,
					  has_c ? 1.0f : 0.0f, yd, N);
		else
			pn_sgemm(ta, tb, M, N, K, (float)alpha, ab.p, ta ? M : K, bb.p, tb ? K : N,
				 has_c ? 1.0f : 0.0f, yd, N);
	} else if (!rc) {
		rc = gemm_rows(k, ct, ab.p, bb.p, yb.p, M, N, K, ta, tb, alpha, beta, has_c);
	}
	pn_mu_free(&ab);
	pn_mu_free(&bb);
	if (rc)
		pn_mu_free(&yb);
	else
		pn_mu_commit(y, ct, &yb);
	return rc;
}

/* --- MatMulInteger, QLinearMatMul ------------------------------------------------------------- */

/*
 * x - zero_point as int32 for an operand of shape [..., R, C] (A: R = M
 * rows, per-row zero points; B: R = K, per-column zero points, C = N).  A
 * zero point is a scalar, one value per row (per column), or one per batch
 * item and row (column).
 */
static int32_t *zp_sub(pn_kctx *k, const pn_tensor *x, const pn_tensor *zp, int per_row)
{
	int64_t C = x->dims[x->rank - 1], R = x->rank >= 2 ? x->dims[x->rank - 2] : 1;
	int64_t per = per_row ? R : C;
	if (zp && zp->numel != 1 && zp->numel % (per ? per : 1)) {
		pn_kfail(k, "zero point of %lld elements does not fit the operand", (long long)zp->numel);
		return NULL;
	}
	int32_t *q = malloc(sizeof(int32_t) * (size_t)(x->numel + 1));
	if (!q) {
		pn_kfail(k, "out of memory");
		return NULL;
	}
	pn_mu_convert(x->dtype, x->data, PN_INT32, q, x->numel);
	if (!zp)
		return q;
	int64_t nz = zp->numel;
	int32_t *z = malloc(sizeof(int32_t) * (size_t)nz);
	if (!z) {
		free(q);
		pn_kfail(k, "out of memory");
		return NULL;
	}
	pn_mu_convert(zp->dtype, zp->data, PN_INT32, z, nz);
	#pragma omp parallel for if (x->numel > PN_PAR_MIN_WORK) schedule(static)
	for (int64_t i = 0; i < x->numel; i++) {
		int64_t item = i / (R * C), r = (i / C) % R, c = i % C;
		int64_t w = per_row ? r : c;
		q[i] -= z[nz == 1 ? 0 : (item * per + w) % nz];
	}
	free(z);
	return q;
}

/* int32 product of the zero-point corrected operands into acc (heap);
 * fills the plan (output shape). */
static int32_t *q_product(pn_kctx *k, const pn_tensor *a, const pn_tensor *azp, const pn_tensor *b,
			  const pn_tensor *bzp, mm_plan *p)
{
	if (!pn_dtype_is_int(a->dtype) || !pn_dtype_is_int(b->dtype)) {
		pn_kfail(k, "quantized operands must be integers");
		return NULL;
	}
	if (mm_plan_make(k, a, b, p))
		return NULL;
	int32_t *qa = zp_sub(k, a, azp, 1);
	int32_t *qb = qa ? zp_sub(k, b, bzp, 0) : NULL;
	int32_t *acc = qb ? malloc(sizeof(int32_t) * (size_t)(p->nb * p->M * p->N + 1)) : NULL;
	if (qb && !acc)
		pn_kfail(k, "out of memory");
	if (acc)
		pn_mu_bmm(PN_INT32, qa, qb, acc, p->M, p->N, p->K, p->offa, p->offb, p->nb);
	free(qa);
	free(qb);
	if (!acc)
		mm_plan_free(p);
	return acc;
}

int pn_kernel_MatMulInteger(pn_kctx *k)
{
	mm_plan p;
	int32_t *acc = q_product(k, k->in[0], pn_kin(k, 2), k->in[1], pn_kin(k, 3), &p);
	if (!acc)
		return -1;
	pn_tensor *y = pn_out_alloc(k, 0, PN_INT32, p.out_rank, p.out_dims);
	if (y)
		memcpy(y->data, acc, sizeof(int32_t) * (size_t)y->numel);
	free(acc);
	mm_plan_free(&p);
	return y ? 0 : -1;
}

/* Per-tensor or per-row (A) / per-column (B) scale value for output
 * element (row i, column j). */
static float q_scale(const float *s, int64_t n, int64_t idx)
{
	return s[n == 1 ? 0 : idx % n];
}

int pn_kernel_QLinearMatMul(pn_kctx *k)
{
	for (int i = 0; i < 8; i++)
		if (i != 2 && i != 5 && !pn_kin(k, i))
			return pn_kfail(k, "input %d is required", i);
	const pn_tensor *as = k->in[1], *bs = k->in[4], *ys = k->in[6], *yzp = pn_kin(k, 7);
	int odt = yzp ? yzp->dtype : PN_UINT8;
	int32_t lo = odt == PN_INT8 ? -128 : 0, hi = odt == PN_INT8 ? 127 : 255;
	if (odt != PN_UINT8 && odt != PN_INT8)
		return pn_kfail(k, "unsupported output type %s", pn_dtype_name(odt));
	mm_plan p;
	int32_t *acc = q_product(k, k->in[0], pn_kin(k, 2), k->in[3], pn_kin(k, 5), &p);
	if (!acc)
		return -1;
	pn_tensor *y = pn_out_alloc(k, 0, odt, p.out_rank, p.out_dims);
	float *sa = malloc(sizeof(float) * (size_t)(as->numel + bs->numel + 1));
	int32_t *q = malloc(sizeof(int32_t) * (size_t)(p.nb * p.M * p.N + 1));
	int rc = !y ? -1 : !sa || !q ? pn_kfail(k, "out of memory") : 0;
	if (!rc) {
		float *sb = sa + as->numel, sy;
		pn_mu_convert(as->dtype, as->data, PN_FLOAT, sa, as->numel);
		pn_mu_convert(bs->dtype, bs->data, PN_FLOAT, sb, bs->numel);
		pn_mu_convert(ys->dtype, ys->data, PN_FLOAT, &sy, 1);
		int32_t zy = yzp ? (int32_t)pn_tensor_get_i64(yzp, 0) : 0;
		/* rows of the original (unfolded) product: M0 per batch item */
		const pn_tensor *a = k->in[0];
		int64_t M0 = a->rank >= 2 ? a->dims[a->rank - 2] : 1, N = p.N, n = y->numel;
		#pragma omp parallel for if (n > PN_PAR_MIN_WORK) schedule(static)
		for (int64_t e = 0; e < n; e++) {
			int64_t row = (e / N) % M0, col = e % N;
			float mult = q_scale(sa, as->numel, row) * q_scale(sb, bs->numel, col) / sy;
			float v = nearbyintf((float)acc[e] * mult) + (float)zy;
			q[e] = (int32_t)(v < lo ? lo : v > hi ? hi : v);
		}
		pn_mu_convert(PN_INT32, q, odt, y->data, n);
	}
	free(sa);
	free(q);
	free(acc);
	mm_plan_free(&p);
	return rc;
}
