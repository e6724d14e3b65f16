/*
 * elemwise.c - broadcast plans and the chunked, threaded loop driver behind
 * every elementwise kernel (see elemwise.h).
 */
#include "runtime/ops/elemwise.h"

#include <stdlib.h>
#include <string.h>

int pn_ew_bcast_dims(int ra, const int64_t *a, int rb, const int64_t *b, int *ro, int64_t *o)
{
	int r = ra > rb ? ra : rb;
	for (int i = 0; i < r; i++) {
		int ia = i - (r - ra), ib = i - (r - rb);
		int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
		if (da != db && da != 1 && db != 1)
			return -1;
		o[i] = da == 1 ? db : da;
	}
	*ro = r;
	return 0;
}

int pn_ewplan_init(pn_ewplan *p, pn_ewarg out, const pn_ewarg *in, int n_in)
{
	memset(p, 0, sizeof(*p));
	if (n_in + 1 > PN_EW_MAX_OPS || out.rank < 0 || out.rank > PN_MAX_RANK)
		return -1;
	int r = out.rank;
	p->nops = n_in + 1;
	int64_t st[PN_EW_MAX_OPS][PN_MAX_RANK];
	p->numel = 1;
	for (int d = r - 1; d >= 0; d--) {
		st[0][d] = p->numel;
		p->numel *= out.dims[d];
	}
	p->base[0] = (char *)out.data;
	p->esz[0] = out.esz;
	for (int i = 0; i < n_in; i++) {
		const pn_ewarg *a = &in[i];
		if (a->rank > r)
			return -1;
		int64_t s = 1;
		for (int d = r - 1; d >= 0; d--) {
			int ad = d - (r - a->rank);
			int64_t dim = ad >= 0 ? a->dims[ad] : 1;
			if (dim != out.dims[d] && dim != 1)
				return -1;
			st[i + 1][d] = dim == 1 ? 0 : s;
			s *= dim;
		}
		p->base[i + 1] = (char *)a->data;
		p->esz[i + 1] = a->esz;
	}
	/* Drop size-1 dims, then merge dims contiguous for every operand. */
	int n = 0;
	for (int d = 0; d < r; d++) {
		if (out.dims[d] == 1)
			continue;
		int merge = n > 0;
		for (int o = 0; merge && o < p->nops; o++)
			merge = p->st[o][n - 1] == st[o][d] * out.dims[d];
		if (merge) {
			p->dims[n - 1] *= out.dims[d];
			for (int o = 0; o < p->nops; o++)
				p->st[o][n - 1] = st[o][d];
		} else {
			p->dims[n] = out.dims[d];
			for (int o = 0; o < p->nops; o++)
				p->st[o][n] = st[o][d];
			n++;
		}
	}
	if (n == 0) {
		p->dims[0] = 1;
		for (int o = 0; o < p->nops; o++)
			p->st[o][0] = 1;
		n = 1;
	}
	p->rank = n;
	return 0;
}

/* Output elements [lo, hi) of the plan. */
static void run_range(const pn_ewplan *p, int64_t lo, int64_t hi, pn_seg_fn fn, const void *ctx)
{
	int r = p->rank, no = p->nops;
	int64_t idx[PN_MAX_RANK], sin[PN_EW_MAX_OPS];
	char *ptr[PN_EW_MAX_OPS];
	int64_t rem = lo;
	for (int d = r - 1; d >= 0; d--) {
		idx[d] = rem % p->dims[d];
		rem /= p->dims[d];
	}
	for (int o = 0; o < no; o++) {
		int64_t off = 0;
		for (int d = 0; d < r; d++)
			off += idx[d] * p->st[o][d];
		ptr[o] = p->base[o] + off * (int64_t)p->esz[o];
		sin[o] = p->st[o][r - 1] ? 1 : 0;
	}
	int64_t pos = lo;
	while (pos < hi) {
		int64_t n = p->dims[r - 1] - idx[r - 1];
		if (n > hi - pos)
			n = hi - pos;
		fn(ptr, sin, n, ctx);
		pos += n;
		if (pos >= hi)
			break;
		idx[r - 1] += n;
		for (int o = 0; o < no; o++)
			ptr[o] += n * sin[o] * (int64_t)p->esz[o];
		for (int d = r - 1; d > 0 && idx[d] == p->dims[d]; d--) {
			idx[d] = 0;
			idx[d - 1]++;
			for (int o = 0; o < no; o++)
				ptr[o] += (p->st[o][d - 1] - p->dims[d] * p->st[o][d]) *
					  (int64_t)p->esz[o];
		}
	}
}

void pn_ewplan_run(const pn_ewplan *p, pn_seg_fn fn, const void *ctx, int cost)
{
	int64_t n = p->numel;
	if (n <= 0)
		return;
	int nt = 1;
	if (n * (cost > 0 ? cost : 1) >= PN_PAR_MIN_WORK) {
		nt = pn_threads();
		if (nt > n / 1024)
			nt = (int)(n / 1024);
		if (nt < 1)
			nt = 1;
	}
	if (nt == 1) {
		run_range(p, 0, n, fn, ctx);
		return;
	}
#pragma omp parallel for num_threads(nt) schedule(static, 1)
	for (int t = 0; t < nt; t++)
		run_range(p, n * t / nt, n * (t + 1) / nt, fn, ctx);
}

void pn_ew_map(pn_tensor *out, const pn_tensor *in, pn_seg_fn fn, const void *ctx, int cost)
{
	pn_ewplan p;
	pn_ewarg a = pn_ewarg_of(in);
	/* Same element count: seen as flat arrays whatever the dims. */
	int64_t n = in->numel;
	pn_ewarg flat_o = {1, &n, out->data, pn_dtype_size(out->dtype)};
	a.rank = 1;
	a.dims = &n;
	if (pn_ewplan_init(&p, flat_o, &a, 1))
		return;
	pn_ewplan_run(&p, fn, ctx, cost);
}

int pn_ew_unary(pn_kctx *k, const pn_seg_fn *tab, int out_dtype, const pn_ewparam *prm, int cost)
{
	const pn_tensor *x = pn_kin(k, 0);
	if (!x || x->kind != PN_KIND_TENSOR)
		return pn_kfail(k, "%s needs a tensor input", k->node->op_type);
	pn_seg_fn fn = pn_ew_pick(tab, x->dtype);
	if (!fn)
		return pn_kfail(k, "%s does not support %s", k->node->op_type,
				pn_dtype_name(x->dtype));
	pn_tensor *o = pn_out_alloc(k, 0, out_dtype ? out_dtype : x->dtype, x->rank, x->dims);
	if (!o)
		return -1;
	pn_ew_map(o, x, fn, prm, cost);
	return 0;
}

int pn_ew_copy(pn_tensor *out, const pn_tensor *in)
{
	if (out->numel != in->numel || out->dtype != in->dtype)
		return -1;
	if (in->dtype == PN_STRING) {
		char **d = out->data, *const *s = in->data;
		for (int64_t i = 0; i < in->numel; i++) {
			char *c = strdup(s[i] ? s[i] : "");
			if (!c)
				return -1;
			free(d[i]);
			d[i] = c;
		}
		return 0;
	}
	if (out->data != in->data)
		memcpy(out->data, in->data, pn_tensor_nbytes(in));
	return 0;
}
