/*
 * einsum.c - Einsum (split from matmul.c: the equation handling is its own
 * subject; the products go through pn_mu_bmm).
 *
 * Every operand is a strided view over its labels: a label repeated in one
 * term (a diagonal) becomes one label whose stride is the sum of its dims'
 * strides, and a size-1 dim facing a larger one broadcasts with stride 0.
 * Operands are contracted left to right.  For each pair the labels split
 * into batch (in both, still needed), contracted (in both, not needed
 * later), left-only and right-only kept ones; labels found in one operand
 * and needed nowhere else are summed away while the operand is laid out as
 * [batch, left, contracted] (resp. [batch, contracted, right]), and one
 * batched matrix product does the rest.  A last layout pass orders (and, if
 * needed, sums) the result into the output labels.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/infer.h"
#include "runtime/kernel.h"
#include "runtime/ops/mathutil.h"

#define EIN_MAXIN 32                   /* operands */
#define EIN_NLAB (52 + PN_MAX_RANK)    /* a-z, A-Z, then the ellipsis dims */
#define EIN_MAXV 16                    /* labels of one intermediate result */

typedef struct ein_eq {
	int n_in;
	int nl[EIN_MAXIN];                 /* labels per operand (= its rank) */
	int8_t lab[EIN_MAXIN][PN_MAX_RANK];
	int n_out;
	int8_t out[EIN_NLAB];
	int ne;                            /* dims the ellipsis stands for */
} ein_eq;

static int letter_id(char ch)
{
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a';
	if (ch >= 'A' && ch <= 'Z')
		return 26 + ch - 'A';
	return -1;
}

/* Letters of a term and whether it has an ellipsis; -1 if malformed. */
static int term_scan(const char *t, int len, int *has_ell)
{
	int n = 0;
	*has_ell = 0;
	for (int i = 0; i < len; i++) {
		if (t[i] == '.') {
			if (*has_ell || i + 2 >= len || t[i + 1] != '.' || t[i + 2] != '.')
				return -1;
			*has_ell = 1;
			i += 2;
		} else if (letter_id(t[i]) < 0) {
			return -1;
		} else {
			n++;
		}
	}
	return n;
}

/* Expands a term into label ids; the ellipsis takes the last `ell` of the
 * ne ellipsis labels (right-aligned, as numpy broadcasts). */
static int term_labels(const char *t, int len, int ell, int ne, int8_t *lab, int max)
{
	int n = 0;
	for (int i = 0; i < len; i++) {
		if (t[i] == '.') {
			for (int j = 0; j < ell; j++) {
				if (n == max)
					return -1;
				lab[n++] = (int8_t)(52 + ne - ell + j);
			}
			i += 2;
		} else {
			if (n == max)
				return -1;
			lab[n++] = (int8_t)letter_id(t[i]);
		}
	}
	return n;
}

/*
 * Parses the equation for operands of the given ranks.  Returns 0, 1 when
 * the output cannot be known because an operand with an ellipsis has an
 * unknown rank, or -1 with a reason in why.
 */
static int ein_parse(const char *eq, int n_in, const int *ranks, ein_eq *e, const char **why)
{
	char buf[512];
	int n = 0;
	for (const char *s = eq; *s; s++)
		if (*s != ' ') {
			if (n == (int)sizeof buf - 1)
				return *why = "equation too long", -1;
			buf[n++] = *s;
		}
	buf[n] = 0;
	memset(e, 0, sizeof(*e));
	if (n_in > EIN_MAXIN)
		return *why = "too many operands", -1;
	e->n_in = n_in;
	char *arrow = strstr(buf, "->");
	int lhs_len = arrow ? (int)(arrow - buf) : n;
	/* term boundaries */
	int start[EIN_MAXIN], len[EIN_MAXIN], nt = 0, s0 = 0;
	for (int i = 0; i <= lhs_len; i++)
		if (i == lhs_len || buf[i] == ',') {
			if (nt == EIN_MAXIN)
				return *why = "too many terms", -1;
			start[nt] = s0;
			len[nt++] = i - s0;
			s0 = i + 1;
		}
	if (nt != n_in)
		return *why = "term count differs from the number of inputs", -1;
	int letters[EIN_MAXIN], has_ell[EIN_MAXIN], ell[EIN_MAXIN], unknown = 0;
	for (int i = 0; i < nt; i++) {
		letters[i] = term_scan(buf + start[i], len[i], &has_ell[i]);
		ell[i] = 0;
		if (letters[i] < 0)
			return *why = "malformed term", -1;
		if (ranks[i] < 0) {
			unknown |= has_ell[i];
			continue;
		}
		if (has_ell[i])
			ell[i] = ranks[i] - letters[i];
		if (ell[i] < 0 || (!has_ell[i] && ranks[i] != letters[i]))
			return *why = "term length differs from the operand's rank", -1;
		if (ell[i] > e->ne)
			e->ne = ell[i];
	}
	if (unknown)
		return 1;
	int count[EIN_NLAB] = {0};
	for (int i = 0; i < nt; i++) {
		e->nl[i] = term_labels(buf + start[i], len[i], ell[i], e->ne, e->lab[i], PN_MAX_RANK);
		if (e->nl[i] < 0)
			return *why = "term too long", -1;
		for (int j = 0; j < e->nl[i]; j++)
			count[e->lab[i][j]]++;
	}
	if (arrow) {
		const char *o = arrow + 2;
		int has_ell, olen = (int)strlen(o);
		if (term_scan(o, olen, &has_ell) < 0)
			return *why = "malformed output term", -1;
		e->n_out = term_labels(o, olen, has_ell ? e->ne : 0, e->ne, e->out, EIN_NLAB);
		if (e->n_out < 0 || e->n_out > PN_MAX_RANK)
			return *why = "output rank too large", -1;
		int seen[EIN_NLAB] = {0};
		for (int j = 0; j < e->n_out; j++) {
			if (seen[e->out[j]]++)
				return *why = "output repeats a label", -1;
			if (!count[e->out[j]])
				return *why = "output label missing from the inputs", -1;
		}
		return 0;
	}
	/* implicit: ellipsis dims, then the labels seen once in ASCII order
	 * (upper case first) */
	for (int j = 0; j < e->ne; j++)
		e->out[e->n_out++] = (int8_t)(52 + j);
	static const int8_t ascii_order[52] = {
		26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51,
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25};
	for (int j = 0; j < 52; j++)
		if (count[ascii_order[j]] == 1) {
			if (e->n_out == PN_MAX_RANK)
				return *why = "output rank too large", -1;
			e->out[e->n_out++] = ascii_order[j];
		}
	return 0;
}

/* Size of every label from the operands' dims: equal, or 1 broadcasting.
 * Unknown dims (-1) leave a label unknown unless another operand decides. */
static int label_sizes(const ein_eq *e, const int64_t *const *dims, int64_t *size, const char **why)
{
	uint8_t unknown[EIN_NLAB] = {0};
	for (int l = 0; l < EIN_NLAB; l++)
		size[l] = 1;
	for (int i = 0; i < e->n_in; i++)
		for (int j = 0; j < e->nl[i]; j++) {
			int l = e->lab[i][j];
			int64_t d = dims[i][j];
			if (d < 0)
				unknown[l] = 1;
			else if (size[l] == 1)
				size[l] = d;
			else if (d != 1 && d != size[l])
				return *why = "a label has different sizes", -1;
		}
	for (int l = 0; l < EIN_NLAB; l++)
		if (unknown[l] && size[l] == 1)
			size[l] = -1;
	return 0;
}

int pn_infer_Einsum(pn_ictx *c)
{
	const char *eq = pn_attr_str(c->node, "equation", NULL);
	int ranks[EIN_MAXIN];
	const int64_t *dims[EIN_MAXIN];
	if (!eq)
		return pn_ifail(c, "Einsum needs an equation");
	if (c->n_in > EIN_MAXIN || c->n_in < 1)
		return pn_ifail(c, "Einsum takes 1 to %d inputs", EIN_MAXIN);
	int dt = PN_UNDEFINED;
	for (int i = 0; i < c->n_in; i++) {
		const pn_tinfo *t = pn_iin(c, i);
		if (!t)
			return pn_ifail(c, "missing input %d", i);
		ranks[i] = t->type.rank;
		dims[i] = t->type.dims;
		if (!i)
			dt = t->type.dtype;
	}
	ein_eq e;
	const char *why = NULL;
	int rc = ein_parse(eq, c->n_in, ranks, &e, &why);
	if (rc < 0)
		return pn_ifail(c, "equation '%s': %s", eq, why);
	if (rc > 0) {
		pn_iset(c, 0, dt, -1, NULL);
		return 0;
	}
	int64_t size[EIN_NLAB], od[PN_MAX_RANK];
	if (label_sizes(&e, dims, size, &why))
		return pn_ifail(c, "equation '%s': %s", eq, why);
	for (int j = 0; j < e.n_out; j++)
		od[j] = size[e.out[j]];
	pn_iset(c, 0, dt, e.n_out, od);
	return 0;
}

/* --- execution --------------------------------------------------------------------- */

typedef struct ein_view {
	int n;
	int8_t lab[EIN_MAXV];
	int64_t dim[EIN_MAXV], str[EIN_MAXV];
	const void *p;
} ein_view;

static int view_find(const ein_view *v, int l)
{
	for (int i = 0; i < v->n; i++)
		if (v->lab[i] == l)
			return i;
	return -1;
}

/* The view of operand i: repeated labels merge into a diagonal. */
static int view_of_operand(const ein_eq *e, int i, const pn_tensor *t, const void *p, ein_view *v)
{
	int64_t st[PN_MAX_RANK];
	pn_mu_strides(t->rank, t->dims, st);
	v->n = 0;
	v->p = p;
	for (int j = 0; j < e->nl[i]; j++) {
		int at = view_find(v, e->lab[i][j]);
		if (at >= 0) {
			if (v->dim[at] != t->dims[j])
				return -1;
			v->str[at] += st[j];
			continue;
		}
		v->lab[v->n] = e->lab[i][j];
		v->dim[v->n] = t->dims[j];
		v->str[v->n++] = st[j];
	}
	return 0;
}

/* True when laying v out as want[] would copy it unchanged. */
static int layout_is_identity(const ein_view *v, const int8_t *want, int nw, const int64_t *size)
{
	if (v->n != nw)
		return 0;
	int64_t s = 1;
	for (int i = nw - 1; i >= 0; i--) {
		if (v->lab[i] != want[i] || v->dim[i] != size[want[i]] || (v->dim[i] != 1 && v->str[i] != s))
			return 0;
		s *= v->dim[i];
	}
	return 1;
}

/* dst[o] = sum over the summed index space of src[base(o) + off]. */
#define DEF_EIN_SUM(T, S)                                                                       \
	static void ein_sum_##S(const T *src, T *dst, int nw, const int64_t *wd, const int64_t *ws, \
				int ns, const int64_t *sd, const int64_t *ss)                   \
	{                                                                                       \
		int64_t n = pn_numel(nw, wd), m = pn_numel(ns, sd);                             \
		_Pragma("omp parallel for if (n * m > PN_PAR_MIN_WORK) schedule(static)")       \
		for (int64_t o = 0; o < n; o++) {                                               \
			int64_t base = 0, rem = o, off = 0, idx[EIN_MAXV] = {0};                \
			for (int d = nw - 1; d >= 0; d--) {                                     \
				base += (rem % wd[d]) * ws[d];                                  \
				rem /= wd[d];                                                   \
			}                                                                       \
			T acc = 0;                                                              \
			for (int64_t t = 0; t < m; t++) {                                       \
				acc += src[base + off];                                         \
				for (int d = ns - 1; d >= 0; d--) {                             \
					if (++idx[d] < sd[d]) {                                 \
						off += ss[d];                                   \
						break;                                          \
					}                                                       \
					off -= (sd[d] - 1) * ss[d];                             \
					idx[d] = 0;                                             \
				}                                                               \
			}                                                                       \
			dst[o] = acc;                                                           \
		}                                                                               \
	}

DEF_EIN_SUM(float, f32)
DEF_EIN_SUM(double, f64)
DEF_EIN_SUM(int64_t, i64)

/* Writes v laid out as want[] (global sizes) into dst, summing the labels
 * of v that want[] lacks. */
static void layout_into(int ct, const ein_view *v, const int8_t *want, int nw, const int64_t *size,
			void *dst)
{
	int64_t wd[EIN_MAXV], ws[EIN_MAXV], sd[EIN_MAXV], ss[EIN_MAXV];
	int ns = 0;
	for (int i = 0; i < nw; i++) {
		int at = view_find(v, want[i]);
		wd[i] = size[want[i]];
		ws[i] = at < 0 || v->dim[at] == 1 ? 0 : v->str[at];
	}
	for (int i = 0; i < v->n; i++) {
		int kept = 0;
		for (int j = 0; j < nw; j++)
			kept |= want[j] == v->lab[i];
		if (!kept) {
			sd[ns] = v->dim[i];
			ss[ns++] = v->str[i];
		}
	}
	if (!ns) {
		pn_mu_gather(pn_dtype_size(ct), nw, wd, ws, v->p, dst);
		return;
	}
	if (ct == PN_FLOAT)
		ein_sum_f32(v->p, dst, nw, wd, ws, ns, sd, ss);
	else if (ct == PN_DOUBLE)
		ein_sum_f64(v->p, dst, nw, wd, ws, ns, sd, ss);
	else
		ein_sum_i64(v->p, dst, nw, wd, ws, ns, sd, ss);
}

/* v laid out as want[]: v's own data when already so, else a heap copy
 * (*owned set).  NULL when out of memory. */
static const void *layout(int ct, const ein_view *v, const int8_t *want, int nw, const int64_t *size,
			  void **owned)
{
	*owned = NULL;
	if (layout_is_identity(v, want, nw, size))
		return v->p;
	int64_t n = 1;
	for (int i = 0; i < nw; i++)
		n *= size[want[i]];
	*owned = malloc(pn_dtype_size(ct) * (size_t)(n + 1));
	if (*owned)
		layout_into(ct, v, want, nw, size, *owned);
	return *owned;
}

/* Labels needed after operand i: the output's and later operands'. */
static void needed_after(const ein_eq *e, int i, uint8_t *need)
{
	memset(need, 0, EIN_NLAB);
	for (int j = 0; j < e->n_out; j++)
		need[e->out[j]] = 1;
	for (int o = i + 1; o < e->n_in; o++)
		for (int j = 0; j < e->nl[o]; j++)
			need[e->lab[o][j]] = 1;
}

/* cur <- cur x opnd; *buf owns cur's data when not NULL (freed here and
 * replaced by the new result). */
static int contract(pn_kctx *k, int ct, ein_view *cur, void **buf, const ein_view *opnd,
		    const uint8_t *need, const int64_t *size)
{
	int8_t la[EIN_MAXV * 2], lb[EIN_MAXV * 2], lc[EIN_MAXV * 2];
	int nbt = 0, nl = 0, nk = 0, nr = 0;
	int8_t bt[EIN_MAXV], left[EIN_MAXV], con[EIN_MAXV], right[EIN_MAXV];
	int64_t Bt = 1, M = 1, K = 1, N = 1;
	for (int i = 0; i < cur->n; i++) {
		int l = cur->lab[i], in_o = view_find(opnd, l) >= 0;
		if (in_o && need[l])
			bt[nbt++] = (int8_t)l, Bt *= size[l];
		else if (in_o)
			con[nk++] = (int8_t)l, K *= size[l];
		else if (need[l])
			left[nl++] = (int8_t)l, M *= size[l];
	}
	for (int i = 0; i < opnd->n; i++) {
		int l = opnd->lab[i];
		if (view_find(cur, l) < 0 && need[l])
			right[nr++] = (int8_t)l, N *= size[l];
	}
	if (nbt + nl + nr > EIN_MAXV)
		return pn_kfail(k, "intermediate result has more than %d labels", EIN_MAXV);
	/* checked before allocating: an outer product can outgrow any limit */
	if ((double)Bt * (double)M * (double)N > (double)PN_MAX_NUMEL ||
	    (double)Bt * (double)M * (double)K > (double)PN_MAX_NUMEL ||
	    (double)Bt * (double)K * (double)N > (double)PN_MAX_NUMEL)
		return pn_kfail(k, "intermediate result exceeds %lld elements", (long long)PN_MAX_NUMEL);
	int na = 0, nbl = 0, nc = 0;
	for (int i = 0; i < nbt; i++)
		la[na++] = lb[nbl++] = lc[nc++] = bt[i];
	for (int i = 0; i < nl; i++)
		la[na++] = lc[nc++] = left[i];
	for (int i = 0; i < nk; i++)
		la[na++] = lb[nbl++] = con[i];
	for (int i = 0; i < nr; i++)
		lb[nbl++] = lc[nc++] = right[i];
	void *oa = NULL, *ob = NULL;
	const void *A = layout(ct, cur, la, na, size, &oa);
	const void *B = A ? layout(ct, opnd, lb, nbl, size, &ob) : NULL;
	void *C = B ? malloc(pn_dtype_size(ct) * (size_t)(Bt * M * N + 1)) : NULL;
	int64_t *off = C ? malloc(sizeof(int64_t) * (size_t)(2 * Bt + 1)) : NULL;
	if (off) {
		for (int64_t b = 0; b < Bt; b++) {
			off[b] = b * M * K;
			off[Bt + b] = b * K * N;
		}
		pn_mu_bmm(ct, A, B, C, M, N, K, off, off + Bt, Bt);
	}
	free(oa);
	free(ob);
	free(off);
	if (!off) {
		free(C);
		return pn_kfail(k, "out of memory");
	}
	free(*buf);
	*buf = C;
	cur->n = nc;
	cur->p = C;
	int64_t s = 1;
	for (int i = nc - 1; i >= 0; i--) {
		cur->lab[i] = lc[i];
		cur->dim[i] = size[lc[i]];
		cur->str[i] = s;
		s *= cur->dim[i];
	}
	return 0;
}

int pn_kernel_Einsum(pn_kctx *k)
{
	const char *eq = pn_attr_str(k->node, "equation", NULL);
	int ranks[EIN_MAXIN];
	const int64_t *dims[EIN_MAXIN];
	if (!eq)
		return pn_kfail(k, "Einsum needs an equation");
	if (k->n_in > EIN_MAXIN || k->n_in < 1)
		return pn_kfail(k, "Einsum takes 1 to %d inputs", EIN_MAXIN);
	int dt = k->in[0]->dtype, ct = pn_mu_ctype(dt);
	for (int i = 0; i < k->n_in; i++) {
		if (!k->in[i] || k->in[i]->dtype != dt)
			return pn_kfail(k, "inputs must be present and of one type");
		ranks[i] = k->in[i]->rank;
		dims[i] = k->in[i]->dims;
	}
	if (!ct || dt == PN_BOOL)
		return pn_kfail(k, "unsupported type %s", pn_dtype_name(dt));
	ein_eq e;
	const char *why = NULL;
	int64_t size[EIN_NLAB], od[PN_MAX_RANK];
	if (ein_parse(eq, k->n_in, ranks, &e, &why) || label_sizes(&e, dims, size, &why))
		return pn_kfail(k, "equation '%s': %s", eq, why ? why : "cannot be parsed");
	for (int j = 0; j < e.n_out; j++)
		od[j] = size[e.out[j]];
	pn_tensor *y = pn_out_alloc(k, 0, dt, e.n_out, od);
	if (!y)
		return -1;
	pn_cbuf in[EIN_MAXIN], yb = {0};
	int got = 0, rc = 0;
	for (; got < k->n_in && !rc; got++)
		rc = pn_mu_in(k, k->in[got], ct, &in[got]);
	if (rc)
		got--;
	if (!rc)
		rc = pn_mu_out(k, y, ct, &yb);
	ein_view cur, opnd;
	void *buf = NULL;
	uint8_t need[EIN_NLAB];
	if (!rc && view_of_operand(&e, 0, k->in[0], in[0].p, &cur))
		rc = pn_kfail(k, "a repeated label has different sizes");
	for (int i = 1; i < k->n_in && !rc; i++) {
		if (view_of_operand(&e, i, k->in[i], in[i].p, &opnd)) {
			rc = pn_kfail(k, "a repeated label has different sizes");
			break;
		}
		needed_after(&e, i, need);
		rc = contract(k, ct, &cur, &buf, &opnd, need, size);
	}
	if (!rc)
		layout_into(ct, &cur, e.out, e.n_out, size, yb.p);
	free(buf);
	for (int i = 0; i < got; i++)
		pn_mu_free(&in[i]);
	if (rc)
		pn_mu_free(&yb);
	else
		pn_mu_commit(y, ct, &yb);
	return rc;
}
