/*
 * cost_linalg.c - costs of convolutions, matrix products, Einsum, Det and
 * the recurrent ops: the multiply-accumulate families.
 *
 * A multiply-accumulate counts 2 FLOPs (integer ones too).  The bias is the
 * accumulator's starting value and adds nothing, nor do Gemm's alpha and
 * beta or the requantization of the QLinear ops: they are per output, a
 * K-th of the work or less.  The traffic is the default: every operand
 * (input, weights, bias, scales) read once and the output written once,
 * which is what a kernel that keeps its tiles in cache moves.
 */
#include <ctype.h>
#include <string.h>

#include "runtime/ops/cost_impl.h"

/* --- convolutions ------------------------------------------------------------------ */

/* Kernel elements of a weight [M, C/group, k1, k2, ...]: what one output
 * element accumulates over. */
static double weight_fan_in(const pn_type *w)
{
	double n = 1;
	for (int i = 1; i < w->rank; i++)
		n *= (double)w->dims[i];
	return n;
}

/* Conv: 2 * N * M * (output spatial) * (C/group) * (kernel elements), i.e.
 * two FLOPs per output element per weight of its group's filter. */
static int conv(pn_costctx *c, int w_slot)
{
	const pn_type *w = pn_cin(c, w_slot), *y = pn_cout(c, 0);
	if (!w || !y || w->rank < 2)
		return 1;
	c->flops = 2 * pn_type_numel(y) * weight_fan_in(w);
	return 0;
}

int pn_cost_Conv(pn_costctx *c)
{
	return conv(c, 1);
}

int pn_cost_ConvInteger(pn_costctx *c)
{
	return conv(c, 1);
}

int pn_cost_QLinearConv(pn_costctx *c)
{
	return conv(c, 3);
}

/* ConvTranspose: W is [C, M/group, k...] and every input element is
 * scattered into (M/group) * (kernel elements) outputs: 2 * N * C * (input
 * spatial) * (M/group) * (kernel elements).  Counting from the input leaves
 * out the taps that fall into the cropped padding, which are not computed. */
int pn_cost_ConvTranspose(pn_costctx *c)
{
	const pn_type *x = pn_cin(c, 0), *w = pn_cin(c, 1);
	if (!x || !w || w->rank < 2)
		return 1;
	c->flops = 2 * pn_type_numel(x) * weight_fan_in(w);
	return 0;
}

/* --- matrix products --------------------------------------------------------------- */

/* MatMul family: 2 * M * N * K per batch, where the output [..., M, N]
 * already holds the broadcast batch, so it is 2 * K per output element.
 * K is A's last dim (A 1-D: its only dim). */
static int matmul(pn_costctx *c, int a_slot)
{
	const pn_type *a = pn_cin(c, a_slot), *y = pn_cout(c, 0);
	if (!a || !y || a->rank < 1)
		return 1;
	c->flops = 2 * pn_type_numel(y) * (double)a->dims[a->rank - 1];
	return 0;
}

int pn_cost_MatMul(pn_costctx *c)
{
	return matmul(c, 0);
}

int pn_cost_MatMulInteger(pn_costctx *c)
{
	return matmul(c, 0);
}

int pn_cost_QLinearMatMul(pn_costctx *c)
{
	return matmul(c, 0);
}

/* Gemm: A is [M, K], or [K, M] with transA. */
int pn_cost_Gemm(pn_costctx *c)
{
	const pn_type *a = pn_cin(c, 0), *y = pn_cout(c, 0);
	if (!a || !y || a->rank != 2)
		return 1;
	int64_t k = a->dims[pn_attr_int(c->node, "transA", 0) ? 0 : 1];
	c->flops = 2 * pn_type_numel(y) * (double)k;
	return 0;
}

/* --- Einsum ------------------------------------------------------------------------ */

typedef struct einsum_dims {
	int64_t letter[128];
	uint8_t seen[128];
	int64_t ell[PN_MAX_RANK];   /* broadcast ellipsis dims, right-aligned */
	int ell_rank;
} einsum_dims;

static int is_term_end(const char *p)
{
	return !*p || *p == ',' || (p[0] == '-' && p[1] == '>');
}

/* Binds the letters of one operand's term (up to ',' or "->") to t's dims. */
static int einsum_term(einsum_dims *e, const char **pp, const pn_type *t)
{
	int letters = 0;
	const char *p = *pp;
	for (const char *q = p; !is_term_end(q); q++)
		letters += isalpha((unsigned char)*q) != 0;
	int ne = t->rank - letters, d = 0;
	for (; !is_term_end(p); p++) {
		if (isalpha((unsigned char)*p)) {
			if (d >= t->rank)
				return -1;
			int l = (unsigned char)*p;
			e->letter[l] = e->seen[l] && e->letter[l] > t->dims[d] ? e->letter[l] : t->dims[d];
			e->seen[l] = 1;
			d++;
		} else if (!strncmp(p, "...", 3)) {
			if (ne < 0)
				return -1;
			for (int k = 0; k < ne; k++) {
				int64_t *slot = &e->ell[ne - 1 - k];
				*slot = *slot > t->dims[d + k] ? *slot : t->dims[d + k];
			}
			e->ell_rank = ne > e->ell_rank ? ne : e->ell_rank;
			d += ne;
			p += 2;
		}
	}
	*pp = p;
	return 0;
}

/* Einsum evaluated as one loop nest over every index (and the broadcast
 * ellipsis): each point multiplies its n operands and adds into the output,
 * n FLOPs (at least 1): 2 * M * N * K per batch for a matrix product, one
 * add per element for a sum or a trace. */
int pn_cost_Einsum(pn_costctx *c)
{
	const char *p = pn_attr_str(c->node, "equation", NULL);
	einsum_dims e;
	memset(&e, 0, sizeof(e));
	int n = 0;
	if (!p)
		return 1;
	while (*p && strncmp(p, "->", 2)) {
		const pn_type *t = pn_cin(c, n);
		if (!t || einsum_term(&e, &p, t))
			return 1;
		n++;
		if (*p == ',')
			p++;
	}
	if (n != c->n_in)
		return 1;
	double points = 1;
	for (int l = 0; l < 128; l++)
		if (e.seen[l])
			points *= (double)e.letter[l];
	for (int i = 0; i < e.ell_rank; i++)
		points *= (double)e.ell[i];
	c->flops = points * (n > 1 ? n : 1);
	return 0;
}

/* --- Det --------------------------------------------------------------------------- */

/* LU factorisation: (2/3) n^3 per [n, n] matrix. */
int pn_cost_Det(pn_costctx *c)
{
	const pn_type *x = pn_cin(c, 0);
	if (!x || x->rank < 2 || !x->dims[x->rank - 1])
		return 1;
	double n = (double)x->dims[x->rank - 1];
	c->flops = pn_type_numel(x) / (n * n) * (2.0 / 3.0) * n * n * n;
	return 0;
}

/* --- recurrent ---------------------------------------------------------------------- */

/* Per step, per batch row and direction: the input and recurrent products
 * of every gate (2*G*H*I + 2*G*H*H, G = 1, 3, 4 gates; W is [dirs, G*H, I])
 * plus the gate
 * arithmetic per hidden unit, counted from the ONNX equations:
 *   RNN   bias adds (2), tanh                                  T + 2
 *   GRU   3 gates (2 adds, activation), r*(Rh), (1-z)*h~ + z*h 3T + 10
 *   LSTM  4 gates (2 adds, activation), c = f*c + i*g (3),
 *         h = o*tanh(c)                                        5T + 12
 * Peepholes and clipping are ignored (at most a few ops per unit). */
static int recurrent(pn_costctx *c, double per_unit)
{
	const pn_type *x = pn_cin(c, 0), *w = pn_cin(c, 1), *r = pn_cin(c, 2);
	if (!x || !w || !r || x->rank != 3 || w->rank != 3 || r->rank != 3)
		return 1;
	int batch_first = pn_attr_int(c->node, "layout", 0) == 1;
	double seq = (double)x->dims[batch_first ? 1 : 0];
	double batch = (double)x->dims[batch_first ? 0 : 1];
	double dirs = (double)w->dims[0], gh = (double)w->dims[1], in = (double)w->dims[2];
	double h = (double)r->dims[2];
	double step = 2 * gh * in + 2 * gh * h + per_unit * h;
	c->flops = dirs * seq * batch * step;
	return 0;
}

int pn_cost_RNN(pn_costctx *c)
{
	return recurrent(c, PN_COST_TRANS + 2);
}

int pn_cost_GRU(pn_costctx *c)
{
	return recurrent(c, 3 * PN_COST_TRANS + 10);
}

int pn_cost_LSTM(pn_costctx *c)
{
	return recurrent(c, 5 * PN_COST_TRANS + 12);
}
