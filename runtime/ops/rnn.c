/*
 * rnn.c - recurrent layers: RNN, GRU, LSTM.
 *
 * All three share one driver: the input projection X*W^T (+ biases) of all
 * time steps is one GEMM per direction, then each step does one GEMM of the
 * previous hidden state with R^T and the gate arithmetic per batch row.
 * Batch rows are independent, so the gate arithmetic is split across
 * threads by row; the GEMMs are deterministic by contract.
 *
 * Everything is computed in float32: float16 and float64 inputs are
 * converted on the way in and out.
 *
 * Layouts (opset 14 `layout`): 0 is X [seq, batch, in], Y [seq, dirs,
 * batch, hidden], Y_h/Y_c [dirs, batch, hidden]; 1 is X [batch, seq, in],
 * Y [batch, seq, dirs, hidden], Y_h/Y_c [batch, dirs, hidden].
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "runtime/gemm.h"
#include "runtime/infer.h"
#include "runtime/kernel.h"

enum { CELL_RNN, CELL_GRU, CELL_LSTM };

/* --- activations --------------------------------------------------------------------- */

enum { A_SIGMOID, A_TANH, A_RELU, A_AFFINE, A_LEAKY, A_THRESH, A_SCALEDTANH, A_HARDSIGMOID,
       A_ELU, A_SOFTSIGN, A_SOFTPLUS };

typedef struct act {
	int fn;
	float alpha, beta;
} act;

/* Name, whether it takes alpha / beta, and their defaults. */
static const struct {
	const char *name;
	int fn, has_alpha, has_beta;
	float alpha, beta;
} act_table[] = {
	{"Sigmoid", A_SIGMOID, 0, 0, 0, 0},
	{"Tanh", A_TANH, 0, 0, 0, 0},
	{"Relu", A_RELU, 0, 0, 0, 0},
	{"Affine", A_AFFINE, 1, 1, 1.0f, 0.0f},
	{"LeakyRelu", A_LEAKY, 1, 0, 0.01f, 0},
	{"ThresholdedRelu", A_THRESH, 1, 0, 1.0f, 0},
	{"ScaledTanh", A_SCALEDTANH, 1, 1, 1.0f, 1.0f},
	{"HardSigmoid", A_HARDSIGMOID, 1, 1, 0.2f, 0.5f},
	{"Elu", A_ELU, 1, 0, 1.0f, 0},
	{"Softsign", A_SOFTSIGN, 0, 0, 0, 0},
	{"Softplus", A_SOFTPLUS, 0, 0, 0, 0},
};

static inline float act_apply(const act *a, float x)
{
	switch (a->fn) {
	case A_SIGMOID: return 1.0f / (1.0f + expf(-x));
	case A_TANH: return tanhf(x);
	case A_RELU: return x > 0 ? x : 0;
	case A_AFFINE: return a->alpha * x + a->beta;
	case A_LEAKY: return x >= 0 ? x : a->alpha * x;
	case A_THRESH: return x > a->alpha ? x : 0;
	case A_SCALEDTANH: return a->alpha * tanhf(a->beta * x);
	case A_HARDSIGMOID: {
		float v = a->alpha * x + a->beta;
		return v < 0 ? 0 : v > 1 ? 1 : v;
	}
	case A_ELU: return x >= 0 ? x : a->alpha * (expf(x) - 1.0f);
	case A_SOFTSIGN: return x / (1.0f + fabsf(x));
	default: return x > 0 ? x + log1pf(expf(-x)) : log1pf(expf(x));
	}
}

/* --- configuration ------------------------------------------------------------------- */

typedef struct rnn_cfg {
	int cell, G, nact;       /* gates per step, activations per direction */
	int64_t S, B, I, H;
	int ndir, reverse_only, layout, lbr, input_forget;
	float clip;              /* <= 0: none */
	act acts[2][3];          /* per direction: f, g, h */
} rnn_cfg;

static int parse_dir(const char *s, int *ndir, int *rev)
{
	*ndir = 1;
	*rev = 0;
	if (!strcmp(s, "forward"))
		return 0;
	if (!strcmp(s, "reverse")) {
		*rev = 1;
		return 0;
	}
	if (!strcmp(s, "bidirectional")) {
		*ndir = 2;
		return 0;
	}
	return -1;
}

/* Reads activations with their alpha/beta: the lists are consumed in order
 * by the functions that take them (as ONNX Runtime does). */
static int parse_acts(pn_kctx *k, rnn_cfg *c)
{
	static const int defaults[3][3] = {{A_TANH}, {A_SIGMOID, A_TANH}, {A_SIGMOID, A_TANH, A_TANH}};
	const pn_attr *names = pn_attr_find(k->node, "activations");
	const pn_attr *al = pn_attr_find(k->node, "activation_alpha");
	const pn_attr *be = pn_attr_find(k->node, "activation_beta");
	int na = 0, nb = 0;
	for (int d = 0; d < c->ndir; d++)
		for (int i = 0; i < c->nact; i++) {
			act *a = &c->acts[d][i];
			if (!names || !names->n) {
				*a = (act){defaults[c->cell][i], 0, 0};
				continue;
			}
			/* A list for one direction serves both. */
			int idx = names->n == c->nact ? i : d * c->nact + i;
			if (idx >= names->n)
				return pn_kfail(k, "%d activations for %d directions", names->n, c->ndir);
			size_t t = 0;
			while (t < sizeof act_table / sizeof *act_table &&
			       strcasecmp(act_table[t].name, names->strings[idx]))
				t++;
			if (t == sizeof act_table / sizeof *act_table)
				return pn_kfail(k, "unsupported activation '%s'", names->strings[idx]);
			a->fn = act_table[t].fn;
			a->alpha = act_table[t].alpha;
			a->beta = act_table[t].beta;
			if (act_table[t].has_alpha && al && na < al->n)
				a->alpha = al->floats[na++];
			if (act_table[t].has_beta && be && nb < be->n)
				a->beta = be->floats[nb++];
		}
	return 0;
}

static int cell_of(int op)
{
	return op == PN_OP_GRU ? CELL_GRU : op == PN_OP_LSTM ? CELL_LSTM : CELL_RNN;
}

static int gates_of(int cell)
{
	return cell == CELL_GRU ? 3 : cell == CELL_LSTM ? 4 : 1;
}

static int read_cfg(pn_kctx *k, rnn_cfg *c)
{
	memset(c, 0, sizeof(*c));
	const pn_tensor *x = k->in[0], *w = k->in[1], *r = k->in[2];
	c->cell = cell_of(k->node->op);
	c->G = gates_of(c->cell);
	c->nact = c->cell + 1;
	c->layout = k->opset >= 14 ? (int)pn_attr_int(k->node, "layout", 0) : 0;
	if (parse_dir(pn_attr_str(k->node, "direction", "forward"), &c->ndir, &c->reverse_only))
		return pn_kfail(k, "unknown direction '%s'", pn_attr_str(k->node, "direction", ""));
	if (x->rank != 3 || w->rank != 3 || !r || r->rank != 3)
		return pn_kfail(k, "X, W and R must be 3-D");
	c->S = x->dims[c->layout ? 1 : 0];
	c->B = x->dims[c->layout ? 0 : 1];
	c->I = x->dims[2];
	c->H = pn_attr_int(k->node, "hidden_size", w->dims[1] / c->G);
	if (w->dims[0] != c->ndir || w->dims[1] != c->G * c->H || w->dims[2] != c->I)
		return pn_kfail(k, "W has the wrong shape");
	if (r->dims[0] != c->ndir || r->dims[1] != c->G * c->H || r->dims[2] != c->H)
		return pn_kfail(k, "R has the wrong shape");
	c->clip = pn_attr_find(k->node, "clip") ? pn_attr_float(k->node, "clip", 0) : 0;
	c->lbr = c->cell == CELL_GRU && pn_attr_int(k->node, "linear_before_reset", 0);
	c->input_forget = c->cell == CELL_LSTM && pn_attr_int(k->node, "input_forget", 0);
	return parse_acts(k, c);
}

/* --- inference -------------------------------------------------------------------------- */

int pn_infer_Recurrent(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0), *w = pn_iin(c, 1);
	int cell = cell_of(c->node->op), G = gates_of(cell), ndir, rev;
	int layout = c->opset >= 14 ? (int)pn_attr_int(c->node, "layout", 0) : 0;
	if (!x || !w)
		return pn_ifail(c, "X and W are required");
	if (parse_dir(pn_attr_str(c->node, "direction", "forward"), &ndir, &rev))
		return pn_ifail(c, "unknown direction '%s'", pn_attr_str(c->node, "direction", ""));
	int64_t S = -1, B = -1, H = pn_attr_int(c->node, "hidden_size", -1);
	if (x->type.rank == 3) {
		S = x->type.dims[layout ? 1 : 0];
		B = x->type.dims[layout ? 0 : 1];
	} else if (x->type.rank >= 0) {
		return pn_ifail(c, "X must be 3-D");
	}
	if (H < 0 && w->type.rank == 3 && w->type.dims[1] >= 0)
		H = w->type.dims[1] / G;
	int dt = x->type.dtype;
	if (layout)
		pn_iset(c, 0, dt, 4, (int64_t[]){B, S, ndir, H});
	else
		pn_iset(c, 0, dt, 4, (int64_t[]){S, ndir, B, H});
	for (int i = 1; i < c->n_out; i++)
		pn_iset(c, i, dt, 3, layout ? (int64_t[]){B, ndir, H} : (int64_t[]){ndir, B, H});
	return 0;
}

/* --- float32 staging ---------------------------------------------------------------------- */

/* The tensor's contents as float32: its own data, or a converted copy in
 * *tmp (freed by the caller). */
static const float *as_f32(const pn_tensor *t, float **tmp)
{
	*tmp = NULL;
	if (!t)
		return NULL;
	if (t->dtype == PN_FLOAT)
		return t->data;
	*tmp = malloc(sizeof(float) * (size_t)(t->numel ? t->numel : 1));
	if (*tmp)
		for (int64_t i = 0; i < t->numel; i++)
			(*tmp)[i] = (float)pn_tensor_get_f64(t, i);
	return *tmp;
}

/* Output storage as float32: the output itself, or a scratch buffer that
 * store_out() converts back. */
static float *out_f32(pn_tensor *o)
{
	if (o->dtype == PN_FLOAT)
		return o->data;
	return calloc((size_t)(o->numel ? o->numel : 1), sizeof(float));
}

static void store_out(pn_tensor *o, float *buf, int ok)
{
	if (o->dtype == PN_FLOAT || !buf)
		return;
	for (int64_t i = 0; ok && i < o->numel; i++)
		pn_tensor_set_f64(o, i, buf[i]);
	free(buf);
}

/* --- the recurrence ------------------------------------------------------------------------- */

typedef struct rnn_io {
	pn_kctx *k;                   /* for the session's packed weights */
	const float *x, *w, *r, *b, *h0, *c0, *p;
	const int64_t *lens;          /* per batch row, or NULL */
	float *y, *yh, *yc;
} rnn_io;

typedef struct rnn_work {
	float *xw;    /* [S*B rows in X order, G*H]: input projection plus biases */
	float *hr;    /* [B, G*H]: H_{t-1} * R^T */
	float *h, *c; /* [B, H] running state */
	float *rh;    /* GRU: r (.) H_{t-1}, then its product with Rh^T */
	/* R^T (GRU without linear_before_reset: its z and r rows) and Rh^T
	 * packed for pn_sgemm_packed_b, or NULL: every step multiplies by the
	 * same R, which pn_sgemm would pack again each time.  A weight's are
	 * the session's (pn_kconst_packed_b: packed in its first run, kept),
	 * others are packed per direction here and freed (own_*). */
	const float *rp, *rhp;
	float *own_rp, *own_rhp;
} rnn_work;

static inline float clipf(float v, float c)
{
	return c > 0 ? (v < -c ? -c : v > c ? c : v) : v;
}

static int64_t x_row(const rnn_cfg *c, int64_t t, int64_t b)
{
	return c->layout ? b * c->S + t : t * c->B + b;
}

static int64_t y_off(const rnn_cfg *c, int64_t t, int d, int64_t b)
{
	return (c->layout ? (b * c->S + t) * c->ndir + d : (t * c->ndir + d) * c->B + b) * c->H;
}

static int64_t h_off(const rnn_cfg *c, int d, int64_t b)
{
	return (c->layout ? b * c->ndir + d : d * c->B + b) * c->H;
}

/* Projects every time step at once and folds in the biases: Wb always, Rb
 * too except for GRU's h gate with linear_before_reset (there Rbh sits
 * inside r (.) (...)). */
static void project(const rnn_cfg *c, const rnn_io *io, int d, rnn_work *w)
{
	int64_t GH = c->G * c->H, rows = c->S * c->B;
	const float *W = io->w + d * GH * c->I;
	/* W is a weight in nearly every model: packed in the session's first run */
	const float *wp = pn_sgemm_packs_b(1, rows, GH) ?
		pn_kconst_packed_b(io->k, 1, d, 1, c->I, GH, W, c->I) : NULL;
	if (wp)
		pn_sgemm_packed_b(0, rows, GH, c->I, 1.0f, io->x, c->I, wp, 0.0f, w->xw, GH);
	else
		pn_sgemm(0, 1, rows, GH, c->I, 1.0f, io->x, c->I, W, c->I, 0.0f, w->xw, GH);
	if (!io->b)
		return;
	const float *wb = io->b + d * 2 * GH, *rb = wb + GH;
	float *bias = malloc(sizeof(float) * (size_t)GH);
	if (!bias)
		return;
	for (int64_t g = 0; g < GH; g++)
		bias[g] = wb[g] + ((c->lbr && g >= 2 * c->H) ? 0.0f : rb[g]);
	for (int64_t i = 0; i < rows; i++)
		for (int64_t g = 0; g < GH; g++)
			w->xw[i * GH + g] += bias[g];
	free(bias);
}

/* Row b is active at step t (shorter sequences stop early); *time is the
 * position it reads and writes (reverse runs from its own last step). */
static int step_time(const rnn_cfg *c, const rnn_io *io, int rev, int64_t t, int64_t b, int64_t *time)
{
	int64_t len = io->lens ? io->lens[b] : c->S;
	if (t >= len)
		return 0;
	*time = rev ? len - 1 - t : t;
	return 1;
}

static void cell_rnn(const rnn_cfg *c, const act *a, const float *xw, const float *hr, float *h)
{
	for (int64_t j = 0; j < c->H; j++)
		h[j] = act_apply(&a[0], clipf(xw[j] + hr[j], c->clip));
}

static void cell_lstm(const rnn_cfg *c, const act *a, const float *xw, const float *hr,
		      const float *p, float *h, float *cs)
{
	int64_t H = c->H;
	for (int64_t j = 0; j < H; j++) {
		float pi = p ? p[j] : 0, po = p ? p[H + j] : 0, pf = p ? p[2 * H + j] : 0;
		float f = act_apply(&a[0], clipf(xw[2 * H + j] + hr[2 * H + j] + pf * cs[j], c->clip));
		float i = c->input_forget ? 1.0f - f
					  : act_apply(&a[0], clipf(xw[j] + hr[j] + pi * cs[j], c->clip));
		float g = act_apply(&a[1], clipf(xw[3 * H + j] + hr[3 * H + j], c->clip));
		float cn = f * cs[j] + i * g;
		float o = act_apply(&a[0], clipf(xw[H + j] + hr[H + j] + po * cn, c->clip));
		cs[j] = cn;
		h[j] = o * act_apply(&a[2], cn);
	}
}

/* GRU, first half: z into hr[0..H), r (.) H_{t-1} into rh (for the h gate
 * when linear_before_reset is 0) or r into rh (when it is 1). */
static void gru_gates(const rnn_cfg *c, const act *a, const float *xw, float *hr, const float *h,
		      float *rh)
{
	int64_t H = c->H;
	for (int64_t j = 0; j < H; j++) {
		hr[j] = act_apply(&a[0], clipf(xw[j] + hr[j], c->clip));
		float r = act_apply(&a[0], clipf(xw[H + j] + hr[H + j], c->clip));
		rh[j] = c->lbr ? r : r * h[j];
	}
}

/* GRU, second half: hrh is (r (.) H) * Rh^T (lbr 0) or H * Rh^T (lbr 1). */
static void gru_update(const rnn_cfg *c, const act *a, const float *xw, const float *z,
		       const float *hrh, const float *r, const float *rbh, float *h)
{
	int64_t H = c->H;
	for (int64_t j = 0; j < H; j++) {
		float pre = c->lbr ? xw[2 * H + j] + r[j] * (hrh[j] + (rbh ? rbh[j] : 0))
				   : xw[2 * H + j] + hrh[j];
		float hh = act_apply(&a[1], clipf(pre, c->clip));
		h[j] = (1.0f - z[j]) * hh + z[j] * h[j];
	}
}

/* Rows of R multiplied by H_{t-1} at each step: all G*H, except that GRU
 * without linear_before_reset multiplies its h gate by a different left
 * operand, (r (.) H), so only the first 2H rows go here. */
static int64_t r_cols(const rnn_cfg *c)
{
	return c->cell == CELL_GRU && !c->lbr ? 2 * c->H : c->G * c->H;
}

/* One time step for every active batch row of direction d. */
static void step(const rnn_cfg *c, const rnn_io *io, int d, int rev, int64_t t, rnn_work *w)
{
	int64_t GH = c->G * c->H, H = c->H, B = c->B;
	const float *R = io->r + d * GH * H;
	const act *a = c->acts[d];
	int par = B > 1 && B * GH >= PN_PAR_MIN_WORK;
	int64_t ncols = r_cols(c);
	if (w->rp)
		pn_sgemm_packed_b(0, B, ncols, H, 1.0f, w->h, H, w->rp, 0.0f, w->hr, GH);
	else
		pn_sgemm(0, 1, B, ncols, H, 1.0f, w->h, H, R, H, 0.0f, w->hr, GH);
	if (c->cell == CELL_GRU) {
		#pragma omp parallel for if (par) schedule(static)
		for (int64_t b = 0; b < B; b++) {
			int64_t tm;
			if (step_time(c, io, rev, t, b, &tm))
				gru_gates(c, a, w->xw + x_row(c, tm, b) * GH, w->hr + b * GH, w->h + b * H,
					  w->rh + b * H);
		}
		/* (r (.) H) * Rh^T, written over the unused h-gate columns. */
		if (!c->lbr && w->rhp)
			pn_sgemm_packed_b(0, B, H, H, 1.0f, w->rh, H, w->rhp, 0.0f, w->hr + 2 * H, GH);
		else if (!c->lbr)
			pn_sgemm(0, 1, B, H, H, 1.0f, w->rh, H, R + 2 * H * H, H, 0.0f, w->hr + 2 * H,
				 GH);
	}
	const float *rbh = io->b ? io->b + d * 2 * GH + GH + 2 * H : NULL;
	#pragma omp parallel for if (par) schedule(static)
	for (int64_t b = 0; b < B; b++) {
		int64_t tm;
		if (!step_time(c, io, rev, t, b, &tm))
			continue;
		const float *xw = w->xw + x_row(c, tm, b) * GH;
		float *hr = w->hr + b * GH, *h = w->h + b * H;
		if (c->cell == CELL_RNN)
			cell_rnn(c, a, xw, hr, h);
		else if (c->cell == CELL_LSTM)
			cell_lstm(c, a, xw, hr, io->p ? io->p + d * 3 * H : NULL, h, w->c + b * H);
		else
			gru_update(c, a, xw, hr, hr + 2 * H, w->rh + b * H, rbh, h);
		memcpy(io->y + y_off(c, tm, d, b), h, sizeof(float) * (size_t)H);
	}
}

/* Packs this direction's R for the steps when that pays (see rnn_work);
 * left NULL when not, or when memory is short (the steps then read R raw,
 * with the same bits). */
/* R (or Rh) packed: the session's when R is a weight, else packed here
 * when the steps are enough to pay for it (*own set), else NULL. */
static const float *packed_r(const rnn_cfg *c, const rnn_io *io, int part, int64_t ncols,
			     const float *R, float **own)
{
	int64_t H = c->H;
	*own = NULL;
	if (H == 0 || !pn_sgemm_packs_b(1, c->B, ncols))
		return NULL;
	const float *kept = pn_kconst_packed_b(io->k, 2, part, 1, H, ncols, R, H);
	if (kept || c->S < 2)
		return kept;
	if ((*own = pn_sgemm_alloc(pn_sgemm_pack_b_size(H, ncols))))
		pn_sgemm_pack_b(1, H, ncols, R, H, *own);
	return *own;
}

static void pack_recurrence(const rnn_cfg *c, const rnn_io *io, int d, rnn_work *w)
{
	int64_t GH = c->G * c->H, H = c->H;
	const float *R = io->r + d * GH * H;
	w->rp = packed_r(c, io, 2 * d, r_cols(c), R, &w->own_rp);
	w->rhp = c->cell == CELL_GRU && !c->lbr ?
		packed_r(c, io, 2 * d + 1, H, R + 2 * H * H, &w->own_rhp) : NULL;
}

static int run_direction(const rnn_cfg *c, const rnn_io *io, int d, rnn_work *w)
{
	int rev = c->reverse_only || d == 1;
	int64_t H = c->H;
	project(c, io, d, w);
	for (int64_t b = 0; b < c->B; b++) {
		float *h = w->h + b * H, *cs = w->c + b * H;
		if (io->h0)
			memcpy(h, io->h0 + h_off(c, d, b), sizeof(float) * (size_t)H);
		else
			memset(h, 0, sizeof(float) * (size_t)H);
		if (io->c0)
			memcpy(cs, io->c0 + h_off(c, d, b), sizeof(float) * (size_t)H);
		else
			memset(cs, 0, sizeof(float) * (size_t)H);
	}
	pack_recurrence(c, io, d, w);
	for (int64_t t = 0; t < c->S; t++)
		step(c, io, d, rev, t, w);
	free(w->own_rp);
	free(w->own_rhp);
	w->rp = w->rhp = NULL;
	w->own_rp = w->own_rhp = NULL;
	for (int64_t b = 0; b < c->B; b++) {
		memcpy(io->yh + h_off(c, d, b), w->h + b * H, sizeof(float) * (size_t)H);
		if (io->yc)
			memcpy(io->yc + h_off(c, d, b), w->c + b * H, sizeof(float) * (size_t)H);
	}
	return 0;
}

/* --- the kernels -------------------------------------------------------------------------------- */

static int check_opt(pn_kctx *k, const pn_tensor *t, const char *what, int64_t n)
{
	if (t && t->numel != n)
		return pn_kfail(k, "%s has %lld elements, expected %lld", what, (long long)t->numel,
				(long long)n);
	return 0;
}

static int alloc_outputs(pn_kctx *k, const rnn_cfg *c, int dtype)
{
	int64_t y[4], s[3];
	if (c->layout) {
		memcpy(y, (int64_t[]){c->B, c->S, c->ndir, c->H}, sizeof y);
		memcpy(s, (int64_t[]){c->B, c->ndir, c->H}, sizeof s);
	} else {
		memcpy(y, (int64_t[]){c->S, c->ndir, c->B, c->H}, sizeof y);
		memcpy(s, (int64_t[]){c->ndir, c->B, c->H}, sizeof s);
	}
	if (!pn_out_alloc(k, 0, dtype, 4, y))
		return -1;
	for (int i = 1; i < k->n_out; i++)
		if (!pn_out_alloc(k, i, dtype, 3, s))
			return -1;
	return 0;
}

static int read_lens(pn_kctx *k, const rnn_cfg *c, int64_t **lens)
{
	const pn_tensor *sl = pn_kin(k, 4);
	*lens = NULL;
	if (!sl)
		return 0;
	if (sl->numel != c->B || !pn_dtype_is_int(sl->dtype))
		return pn_kfail(k, "sequence_lens must be %lld integers", (long long)c->B);
	*lens = malloc(sizeof(int64_t) * (size_t)(c->B ? c->B : 1));
	if (!*lens)
		return pn_kfail(k, "out of memory");
	for (int64_t b = 0; b < c->B; b++) {
		(*lens)[b] = pn_tensor_get_i64(sl, b);
		if ((*lens)[b] < 0 || (*lens)[b] > c->S)
			return pn_kfail(k, "sequence length %lld out of [0, %lld]", (long long)(*lens)[b],
					(long long)c->S);
	}
	return 0;
}

static int recurrent(pn_kctx *k)
{
	rnn_cfg c;
	if (read_cfg(k, &c))
		return -1;
	int lstm = c.cell == CELL_LSTM;
	const pn_tensor *B = pn_kin(k, 3), *h0 = pn_kin(k, 5), *c0 = lstm ? pn_kin(k, 6) : NULL,
			*P = lstm ? pn_kin(k, 7) : NULL;
	int64_t GH = c.G * c.H, state = c.ndir * c.B * c.H;
	if (check_opt(k, B, "B", c.ndir * 2 * GH) || check_opt(k, h0, "initial_h", state) ||
	    check_opt(k, c0, "initial_c", state) || check_opt(k, P, "P", c.ndir * 3 * c.H))
		return -1;
	int dtype = k->in[0]->dtype;
	if (dtype != PN_FLOAT && dtype != PN_DOUBLE && dtype != PN_FLOAT16)
		return pn_kfail(k, "unsupported dtype %s", pn_dtype_name(dtype));
	if (alloc_outputs(k, &c, dtype))
		return -1;
	float *tmp[7];
	rnn_io io = {.k = k};
	io.x = as_f32(k->in[0], &tmp[0]);
	io.w = as_f32(k->in[1], &tmp[1]);
	io.r = as_f32(k->in[2], &tmp[2]);
	io.b = as_f32(B, &tmp[3]);
	io.h0 = as_f32(h0, &tmp[4]);
	io.c0 = as_f32(c0, &tmp[5]);
	io.p = as_f32(P, &tmp[6]);
	io.y = out_f32(k->out[0]);
	io.yh = k->n_out > 1 ? out_f32(k->out[1]) : calloc((size_t)state + 1, sizeof(float));
	io.yc = lstm && k->n_out > 2 ? out_f32(k->out[2]) : NULL;
	rnn_work w = {0};
	size_t bh = (size_t)(c.B * c.H) + 1;
	w.xw = malloc(sizeof(float) * ((size_t)(c.S * c.B * GH) + 1));
	w.hr = malloc(sizeof(float) * ((size_t)(c.B * GH) + 1));
	w.h = malloc(sizeof(float) * bh);
	w.c = calloc(bh, sizeof(float));
	w.rh = calloc(bh, sizeof(float));
	int64_t *lens = NULL;
	int rc = read_lens(k, &c, &lens);
	int ok = io.x && io.w && io.r && (io.b || !B) && (io.h0 || !h0) && (io.c0 || !c0) &&
		 (io.p || !P) && io.y && io.yh && (io.yc || !(lstm && k->n_out > 2)) && w.xw && w.hr &&
		 w.h && w.c && w.rh;
	if (!rc && !ok)
		rc = pn_kfail(k, "out of memory");
	io.lens = lens;
	if (!rc) {
		/* Steps past a row's sequence length stay zero in Y. */
		memset(io.y, 0, sizeof(float) * (size_t)k->out[0]->numel);
		for (int d = 0; d < c.ndir; d++)
			run_direction(&c, &io, d, &w);
	}
	store_out(k->out[0], io.y, !rc);
	if (k->n_out > 1)
		store_out(k->out[1], io.yh, !rc);
	else
		free(io.yh);
	if (io.yc)
		store_out(k->out[2], io.yc, !rc);
	for (int i = 0; i < 7; i++)
		free(tmp[i]);
	free(w.xw);
	free(w.hr);
	free(w.h);
	free(w.c);
	free(w.rh);
	free(lens);
	return rc;
}

int pn_kernel_RNN(pn_kctx *k)
{
	return recurrent(k);
}

int pn_kernel_GRU(pn_kctx *k)
{
	return recurrent(k);
}

int pn_kernel_LSTM(pn_kctx *k)
{
	return recurrent(k);
}
