/*
 * session.c - sessions and runs: walks a graph node by node, feeding each
 * kernel its inputs and pooled output buffers (see session.h).
 */
#include "runtime/session.h"

#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "common/assert.h"
#include "common/err.h"
#include "common/util.h"
#include "runtime/fuse.h"
#include "runtime/infer.h"
#include "runtime/kernel.h"
#include "runtime/gemm.h"
#include "runtime/ops/conv.h"
#include "runtime/ops/quant.h"
#include "runtime/pool.h"

typedef struct weight_entry {
	const pn_graph *g;
	int value;
	pn_tensor *t;
} weight_entry;

/* A constant GEMM operand in the micro-kernel's panel layout: see
 * pn_kconst_packed_b. */
typedef struct packed_entry {
	const pn_node *node;
	char side;             /* 'a' or 'b'; 'm' for a pn_kmemo buffer (slot: its tag, rows: bytes) */
	int slot, part, trans;
	int64_t rows, cols;
	float *buf;
} packed_entry;

/* One graph of the session (the top one, or a body of an If or a Loop):
 * which of its nodes compute the same outputs in every run, and those
 * outputs once computed (see "fixed nodes" below). */
typedef struct fixed_graph {
	const pn_graph *g;
	int8_t *state;       /* per node: 0 not decided yet, 1 fixed, -1 not */
	pn_tensor **vals;    /* per value: the fixed node's output, kept */
} fixed_graph;

/* The fusion plan of one graph of the session (runtime/fuse.h). */
typedef struct fused_graph {
	const pn_graph *g;
	pn_fusion plan;
} fused_graph;

/* prepare_outputs's inference memo (below) */
typedef struct memo_out {
	int32_t dtype, rank;    /* rank -1: left to the kernel */
	int64_t dims[PN_MAX_RANK];
} memo_out;

typedef struct infer_memo {
	uint8_t *key;
	size_t len;
	memo_out *out;          /* n_out of them */
	uint64_t seed;          /* node_seed's, once seeded */
	int seeded;
} infer_memo;

struct pn_session {
	const pn_graph *g;
	pn_exec_opts o;
	pn_pool pool;
	weight_entry *w;
	int nw, maxw;
	packed_entry *pk;
	int npk, maxpk;
	fixed_graph **fg;    /* each apart: a run keeps a pointer while bodies add more */
	int nfg, maxfg;
	fused_graph **fu;    /* each apart, as fg */
	int nfu, maxfu;
	/* pn_run_once's: there is no next run, so keeping fixed outputs would
	 * only hold memory; its pool keeps at most PN_POOL_ONCE_HELD and it
	 * keeps packed operands of at most PN_ONCE_PACKED_MAX */
	int runs_once;
	double weight_seconds;   /* spent in pn_weight_regen */
	infer_memo *memo;        /* per node of g: its last inference (prepare_outputs) */
};

#define PN_MAX_SCRATCH 16

/* What a session that runs once keeps of its freed buffers for its later
 * nodes: enough for a block's repeats, not a CNN's every activation. */
#define PN_POOL_ONCE_HELD ((size_t)64 << 20)
/* The largest packed operand such a session keeps: a recurrent weight,
 * read at every step, is worth its copy; VGG-16's 400 MB fully connected
 * weight, read once, is not (the kernel packs it as it goes).  Both limits
 * took the 10,000-model build's peak from 2,276 to 1,619 MB; either alone
 * left it above 2,000. */
#define PN_ONCE_PACKED_MAX ((size_t)16 << 20)

typedef struct pn_run {
	pn_session *s;
	void *scratch[PN_MAX_SCRATCH];   /* taken by the running kernel */
	size_t scratch_cap[PN_MAX_SCRATCH];
	int n_scratch;
	const pn_graph *g;
	pn_tensor **vals;    /* tensor of each value once known */
	uint8_t *own;        /* vals[i] belongs to this run: released to the pool */
	int32_t *left;       /* readers still to come */
	fixed_graph *fixed;  /* g's fixed nodes in the session (NULL: none kept) */
	const pn_fusion *fusion;   /* g's chains run as one kernel (NULL: none) */
	struct pn_run *parent;
} pn_run;

/* Per calling thread: sessions may run on several threads at once (the
 * profiler's correctness runs), each with its own thread count. */
static _Thread_local int g_threads = 1;

int pn_threads(void)
{
	return g_threads;
}

int pn_kfail(pn_kctx *k, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pn_vfail(k->err, fmt, ap);
	va_end(ap);
	return -1;
}

/* --- tensors owned by a run ---------------------------------------------------- */

static void release(pn_pool *pool, pn_tensor *t)
{
	if (!t)
		return;
	if (t->pooled) {
		pn_pool_put(pool, t->data, t->cap);
		t->data = NULL;
		t->pooled = 0;
	}
	pn_tensor_free(t);
}

/* Gives t storage for its dtype and dims, from the pool (strings: heap). */
static int give_storage(pn_pool *pool, pn_tensor *t)
{
	t->numel = pn_numel(t->rank, t->dims);
	if (t->numel < 0)
		return -1;
	if (t->dtype == PN_STRING)
		return pn_tensor_alloc_data(t);
	size_t need = (size_t)t->numel * pn_dtype_size(t->dtype);
	t->data = pn_pool_get(pool, need ? need : 1, &t->cap);
	if (!t->data)
		return -1;
	t->pooled = 1;
	t->owns = 0;
	return 0;
}

/* Turns a run-owned tensor into one the caller frees with pn_tensor_free. */
static pn_tensor *detach(pn_tensor *t)
{
	if (t->pooled) {
		t->pooled = 0;
		t->owns = 1;
	}
	return t;
}

static pn_pool *run_pool(pn_kctx *k)
{
	return &k->run->s->pool;
}

pn_tensor *pn_out_alloc(pn_kctx *k, int i, int dtype, int rank, const int64_t *dims)
{
	if (i < 0 || i >= k->n_out)
		return pn_kfail(k, "output %d out of range", i), NULL;
	if (rank < 0 || rank > PN_MAX_RANK)
		return pn_kfail(k, "output rank %d out of range", rank), NULL;
	pn_tensor *t = k->out[i];
	int same = t->data && t->kind == PN_KIND_TENSOR && t->dtype == dtype && t->rank == rank;
	for (int d = 0; same && d < rank; d++)
		same = t->dims[d] == dims[d];
	if (same)
		return t;
	pn_pool *pool = run_pool(k);
	if (t->pooled)
		pn_pool_put(pool, t->data, t->cap);
	pn_tensor_clear(t);
	t->dtype = dtype;
	t->rank = rank;
	for (int d = 0; d < rank; d++)
		t->dims[d] = dims[d];
	if (give_storage(pool, t))
		return pn_kfail(k, "cannot allocate output %d (%d dims)", i, rank), NULL;
	return t;
}

void *pn_kscratch(pn_kctx *k, size_t bytes)
{
	pn_run *r = k->run;
	if (r->n_scratch == PN_MAX_SCRATCH)
		return pn_kfail(k, "more than %d scratch buffers", PN_MAX_SCRATCH), NULL;
	size_t cap;
	void *p = pn_pool_get(&r->s->pool, bytes ? bytes : 1, &cap);
	if (!p)
		return pn_kfail(k, "out of memory for %zu bytes of scratch", bytes), NULL;
	r->scratch[r->n_scratch] = p;
	r->scratch_cap[r->n_scratch++] = cap;
	return p;
}

/*
 * Whether value v of g is the same in every run: contents known or
 * regenerated, a nested graph's capture of such a value, or the output of a
 * deterministic op whose inputs all are (an exporter's Unsqueeze, Slice,
 * Concat or Cast of a weight: Silero VAD's LSTM weights are its gates
 * sliced from an initializer of the If around it and concatenated again),
 * looked up to `depth` producers back.
 */
static int fixed_value(const pn_graph *g, int v, int depth);

/* Whether n computes the same outputs from the same inputs: a known op,
 * not random, training, sequence or control flow, capturing nothing. */
static int deterministic_node(const pn_node *n)
{
	if (n->op < 0 || n->n_implicit)
		return 0;
	const pn_op_info *op = &pn_ops[n->op];
	return !(op->flags & (F_RANDOM | F_TRAINING | F_SEQ)) && op->kind != CONTROL;
}

/* 1: val holds data of its own (a weight, a Constant's, folded) or is a
 * body's capture of a fixed value of the owner; 0: neither (then only its
 * producer can make it fixed). */
static int fixed_source(const pn_graph *g, const pn_value *val, int depth)
{
	if (val->data || val->meta)
		return 1;
	return val->role == PN_ROLE_OUTER && g->parent && fixed_value(g->parent, val->outer, depth);
}

static int fixed_value(const pn_graph *g, int v, int depth)
{
	if (v < 0 || v >= g->n_values)
		return 0;
	const pn_value *val = &g->values[v];
	if (fixed_source(g, val, depth))
		return 1;
	if (val->role != PN_ROLE_NODE || val->producer < 0 || depth <= 0)
		return 0;
	const pn_node *n = &g->nodes[val->producer];
	if (!deterministic_node(n))
		return 0;
	for (int i = 0; i < n->n_in; i++)
		if (n->in[i] >= 0 && !fixed_value(g, n->in[i], depth - 1))
			return 0;
	return 1;
}

/*
 * Packing B costs a pass over it, as much as the product itself when M is
 * small (a batch-1 fully connected layer), and a weight is the same in every
 * run of a session: so it is packed on the first run and kept, as other
 * runtimes do when they load a model.  Only values fixed for the session
 * qualify (fixed_value: initializers, Constant outputs, folded values,
 * regenerated weights, a body's capture of one, and what deterministic ops
 * compute from those alone); a graph input never does.  The same holds for
 * a convolution's weights as A (pn_kconst_packed_a).
 */
/* The session's packed copy of a fixed GEMM operand (side 'a' or 'b'; for
 * A, rows x cols is M x K, for B it is K x N), packed on first use. */
/* The session's buffer for `key` (every field but buf must match), made
 * with room for `floats` floats when there is none yet (*fresh = 1: the
 * caller fills it).  NULL when out of memory. */
static float *kept_buffer(pn_session *s, const packed_entry *key, size_t floats, int *fresh)
{
	*fresh = 0;
	for (int i = 0; i < s->npk; i++) {
		packed_entry *e = &s->pk[i];
		if (e->node == key->node && e->side == key->side && e->slot == key->slot &&
		    e->part == key->part && e->trans == key->trans && e->rows == key->rows &&
		    e->cols == key->cols)
			return e->buf;
	}
	if (s->npk == s->maxpk) {
		int m = s->maxpk ? s->maxpk * 2 : 8;
		packed_entry *pk = realloc(s->pk, sizeof(*pk) * (size_t)m);
		if (!pk)
			return NULL;
		s->pk = pk;
		s->maxpk = m;
	}
	float *buf = pn_sgemm_alloc(floats);
	if (!buf)
		return NULL;
	s->pk[s->npk] = *key;
	s->pk[s->npk++].buf = buf;
	*fresh = 1;
	return buf;
}

static const float *kconst_packed(pn_kctx *k, char side, int slot, int part, int trans,
				  int64_t rows, int64_t cols, const float *src, int64_t ld)
{
	pn_run *r = k->run;
	int v = slot < k->node->n_in ? k->node->in[slot] : -1;
	if (!fixed_value(r->g, v, 4))
		return NULL;
	size_t n = side == 'a' ? pn_sgemm_pack_a_size(rows, cols) : pn_sgemm_pack_b_size(rows, cols);
	if (r->s->runs_once && n * sizeof(float) > PN_ONCE_PACKED_MAX)
		return NULL;
	packed_entry key = {k->node, side, slot, part, trans, rows, cols, NULL};
	int fresh;
	float *buf = kept_buffer(r->s, &key, n, &fresh);
	if (buf && fresh && side == 'a')
		pn_sgemm_pack_a(trans, rows, cols, src, ld, buf);
	else if (buf && fresh)
		pn_sgemm_pack_b(trans, rows, cols, src, ld, buf);
	return buf;
}

const float *pn_kconst_packed_b(pn_kctx *k, int slot, int part, int trans_b, int64_t K, int64_t N,
				const float *B, int64_t ldb)
{
	return kconst_packed(k, 'b', slot, part, trans_b, K, N, B, ldb);
}

const float *pn_kconst_packed_a(pn_kctx *k, int slot, int part, int64_t M, int64_t K,
				const float *A, int64_t lda)
{
	return kconst_packed(k, 'a', slot, part, 0, M, K, A, lda);
}

void *pn_kmemo(pn_kctx *k, int tag, size_t bytes, int *fresh)
{
	if (k->run->s->runs_once && bytes > PN_ONCE_PACKED_MAX) {
		*fresh = 0;
		return NULL;
	}
	packed_entry key = {k->node, 'm', tag, 0, 0, (int64_t)bytes, 0, NULL};
	return kept_buffer(k->run->s, &key, (bytes + sizeof(float) - 1) / sizeof(float), fresh);
}

static void release_scratch(pn_run *r)
{
	while (r->n_scratch > 0) {
		r->n_scratch--;
		pn_pool_put(&r->s->pool, r->scratch[r->n_scratch], r->scratch_cap[r->n_scratch]);
	}
}

pn_tensor *pn_out_container(pn_kctx *k, int i, int kind, int dtype)
{
	if (i < 0 || i >= k->n_out)
		return pn_kfail(k, "output %d out of range", i), NULL;
	pn_tensor *t = k->out[i];
	if (t->pooled)
		pn_pool_put(run_pool(k), t->data, t->cap);
	pn_tensor_clear(t);
	t->kind = (uint8_t)kind;
	t->dtype = dtype;
	t->rank = -1;
	t->owns = 1;
	t->elem_kind = PN_KIND_TENSOR;
	return t;
}

/* --- sessions ------------------------------------------------------------------- */

int pn_session_new(const pn_graph *g, const pn_exec_opts *o, pn_session **out, char *err)
{
	pn_session *s = calloc(1, sizeof(*s));
	if (!s)
		return pn_fail(err, "out of memory");
	s->g = g;
	if (o)
		s->o = *o;
	*out = s;
	return 0;
}

double pn_session_weight_seconds(const pn_session *s)
{
	return s->weight_seconds;
}

void pn_session_set_threads(pn_session *s, int threads)
{
	s->o.threads = threads;
}

void pn_session_free(pn_session *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nw; i++)
		pn_tensor_free(s->w[i].t);
	free(s->w);
	for (int i = 0; i < s->npk; i++)
		free(s->pk[i].buf);
	free(s->pk);
	for (int i = 0; i < s->nfg; i++) {
		for (int v = 0; v < s->fg[i]->g->n_values; v++)
			release(&s->pool, s->fg[i]->vals[v]);
		free(s->fg[i]->state);
		free(s->fg[i]->vals);
		free(s->fg[i]);
	}
	free(s->fg);
	for (int i = 0; s->memo && i < s->g->n_nodes; i++) {
		free(s->memo[i].key);
		free(s->memo[i].out);
	}
	free(s->memo);
	for (int i = 0; i < s->nfu; i++) {
		pn_fusion_free(&s->fu[i]->plan);
		free(s->fu[i]);
	}
	free(s->fu);
	pn_pool_clear(&s->pool);
	free(s);
}

/* Weights kept as metadata are regenerated once per session. */
static pn_tensor *session_weight(pn_session *s, const pn_graph *g, int v, char *err)
{
	for (int i = 0; i < s->nw; i++)
		if (s->w[i].g == g && s->w[i].value == v)
			return s->w[i].t;
	double t0 = pn_now();
	pn_tensor *t = pn_weight_regen(g, v, s->o.seed, err);
	s->weight_seconds += pn_now() - t0;
	if (!t)
		return NULL;
	if (s->nw == s->maxw) {
		int m = s->maxw ? s->maxw * 2 : 32;
		weight_entry *w = realloc(s->w, sizeof(*w) * (size_t)m);
		if (!w) {
			pn_tensor_free(t);
			return pn_fail(err, "out of memory"), NULL;
		}
		s->w = w;
		s->maxw = m;
	}
	s->w[s->nw++] = (weight_entry){g, v, t};
	return t;
}

/* --- fixed nodes ---------------------------------------------------------------- */

/*
 * A node whose inputs are all fixed for the session (weights, constants,
 * captures of such values, outputs of other fixed nodes) and whose op is
 * deterministic computes the same outputs in every run: an exporter's
 * Transpose, Slice, Concat or Unsqueeze of a weight, a DequantizeLinear of
 * int8 weights.  It runs once, in the session's first run, and its outputs
 * are kept for the next runs, as other runtimes fold such nodes when they
 * load a model (ORT's constant folding).  Outputs are bitwise those of the
 * first run (kernels are deterministic at every thread count), so only
 * time changes.  Sessions that observe values (the range and binding runs)
 * keep none: an observer must see every node run; nor does pn_run_once's,
 * which has no next run.
 */
static fixed_graph *fixed_graph_of(pn_session *s, const pn_graph *g)
{
	if (s->o.observe || s->o.observe_all || s->runs_once)
		return NULL;
	for (int i = 0; i < s->nfg; i++)
		if (s->fg[i]->g == g)
			return s->fg[i];
	if (s->nfg == s->maxfg) {
		int m = s->maxfg ? s->maxfg * 2 : 4;
		fixed_graph **fg = realloc(s->fg, sizeof(*fg) * (size_t)m);
		if (!fg)
			return NULL;
		s->fg = fg;
		s->maxfg = m;
	}
	fixed_graph *f = calloc(1, sizeof(*f));
	if (f) {
		f->g = g;
		f->state = calloc((size_t)g->n_nodes + 1, 1);
		f->vals = calloc((size_t)g->n_values + 1, sizeof(pn_tensor *));
	}
	if (!f || !f->state || !f->vals) {
		if (f) {
			free(f->state);
			free(f->vals);
		}
		free(f);
		return NULL;
	}
	return s->fg[s->nfg++] = f;
}

/* Whether value v of the graph is fixed for the session; a node's output
 * is when its producer was found fixed (producers run first). */
static int value_is_fixed(const fixed_graph *fg, int v)
{
	const pn_value *val = &fg->g->values[v];
	if (fixed_source(fg->g, val, 8))
		return 1;
	return val->role == PN_ROLE_NODE && val->producer >= 0 && fg->state[val->producer] == 1;
}

/* 1 when node n of fg's graph is fixed (decided on its first run). */
static int node_is_fixed(fixed_graph *fg, const pn_node *n)
{
	int8_t *st = &fg->state[n - fg->g->nodes];
	if (*st)
		return *st > 0;
	int ok = n->n_out > 0 && deterministic_node(n);
	for (int i = 0; ok && i < n->n_in; i++)
		ok = n->in[i] < 0 || value_is_fixed(fg, n->in[i]);
	*st = ok ? 1 : -1;
	return ok;
}

/* The kept outputs of fixed node n into the run: 1 when it has them all. */
static int take_fixed(pn_run *r, const pn_node *n)
{
	for (int i = 0; i < n->n_out; i++)
		if (n->out[i] >= 0 && !r->fixed->vals[n->out[i]])
			return 0;
	for (int i = 0; i < n->n_out; i++)
		if (n->out[i] >= 0) {
			r->vals[n->out[i]] = r->fixed->vals[n->out[i]];
			r->own[n->out[i]] = 0;
		}
	return 1;
}

/* --- fused chains ------------------------------------------------------------- */

/*
 * g's fusion plan in the session, made on first use.  Sessions that observe
 * values have none: an observer must see every node's output, and a chain
 * keeps its intermediate values to itself.  Out of memory, a graph simply
 * runs unfused.
 */
static const pn_fusion *fusion_of(pn_session *s, const pn_graph *g)
{
	if (s->o.observe || s->o.observe_all)
		return NULL;
	for (int i = 0; i < s->nfu; i++)
		if (s->fu[i]->g == g)
			return &s->fu[i]->plan;
	if (s->nfu == s->maxfu) {
		int m = s->maxfu ? s->maxfu * 2 : 4;
		fused_graph **fu = realloc(s->fu, sizeof(*fu) * (size_t)m);
		if (!fu)
			return NULL;
		s->fu = fu;
		s->maxfu = m;
	}
	fused_graph *f = calloc(1, sizeof(*f));
	if (!f || pn_fusion_plan(g, &f->plan)) {
		free(f);
		return NULL;
	}
	f->g = g;
	s->fu[s->nfu++] = f;
	return &f->plan;
}

/* --- runs ----------------------------------------------------------------------- */

static pn_tensor *value_of(pn_run *r, int v, char *err)
{
	if (r->vals[v])
		return r->vals[v];
	const pn_value *val = &r->g->values[v];
	if (val->data)
		return r->vals[v] = val->data;
	if (val->meta)
		return r->vals[v] = session_weight(r->s, r->g, v, err);
	if (val->role == PN_ROLE_OUTER && r->parent)
		return r->vals[v] = value_of(r->parent, val->outer, err);
	return NULL;
}

static int run_init(pn_run *r, pn_session *s, const pn_graph *g, pn_run *parent, char *err)
{
	memset(r, 0, sizeof(*r));
	r->s = s;
	r->g = g;
	r->parent = parent;
	size_t n = (size_t)g->n_values + 1;
	r->vals = calloc(n, sizeof(*r->vals));
	r->own = calloc(n, 1);
	r->left = calloc(n, sizeof(*r->left));
	if (!r->vals || !r->own || !r->left)
		return pn_fail(err, "out of memory");
	for (int v = 0; v < g->n_values; v++)
		r->left[v] = g->values[v].n_consumers;
	r->fixed = fixed_graph_of(s, g);
	r->fusion = fusion_of(s, g);
	/* a qconv head reads its weights' DequantizeLinear's inputs too */
	for (int i = 0; r->fusion && i < g->n_nodes; i++)
		if (r->fusion->role[i] == PN_FUSE_QCONV) {
			const pn_node *dw = &g->nodes[r->fusion->qconv[i].dq_w];
			for (int j = 0; j < dw->n_in; j++)
				if (dw->in[j] >= 0)
					r->left[dw->in[j]]++;
		}
	return 0;
}

static void run_free(pn_run *r)
{
	if (r->vals)
		for (int v = 0; v < r->g->n_values; v++)
			if (r->own[v])
				release(&r->s->pool, r->vals[v]);
	free(r->vals);
	free(r->own);
	free(r->left);
}

static void type_of_tensor(const pn_tensor *t, pn_type *ty)
{
	memset(ty, 0, sizeof(*ty));
	ty->kind = t->kind;
	ty->elem_kind = (uint8_t)t->elem_kind;
	ty->dtype = t->dtype;
	ty->rank = t->kind == PN_KIND_SEQUENCE ? -1 : t->rank;
	if (t->kind == PN_KIND_OPTIONAL && (t->none || t->elem_kind == PN_KIND_SEQUENCE))
		ty->rank = -1;
	for (int d = 0; d < t->rank && d < PN_MAX_RANK; d++)
		ty->dims[d] = t->dims[d];
}

#define PN_STACK_IO 16

/*
 * The inference memo.  A node infers the same outputs from the same inputs,
 * and a session runs its graph again and again on inputs of one shape (a
 * profile's trials, a benchmark's runs): the inference each run cost as
 * much as a small model's kernels (a wake-word head's 30 nodes, 17% of its
 * run).  So each node of the session's own graph keeps the key of the
 * inputs it last inferred from and what it inferred, and a run with the
 * same key takes that instead.
 *
 * The key is what inference can read: each input's type and shape, and
 * the contents of the inputs whose values an op's inference reads (shapes,
 * axes, sizes, pads, repeats, scalars: small, or integer).  Where the
 * contents could matter but are too large to key on (an integer input of
 * more than MEMO_INTS elements; NonZero and Compress, which count the data;
 * sequences; nodes with subgraphs, whose bodies read captured values), the
 * node is inferred every run.
 */
#define MEMO_SMALL 64       /* elements: any input this small is keyed by value */
#define MEMO_INTS 1024      /* elements: an integer or bool input up to this is keyed by value */
#define MEMO_KEY_MAX 8192   /* bytes of a key; a longer one is not kept */

static size_t key_put(uint8_t *buf, size_t len, const void *p, size_t n)
{
	if (len + n <= MEMO_KEY_MAX)
		memcpy(buf + len, p, n);
	return len + n;
}

/* n's key from its inputs into buf (MEMO_KEY_MAX bytes): its length, or 0
 * when n is inferred every run. */
static size_t memo_key(const pn_node *n, pn_tensor *const *in, uint8_t *buf)
{
	if (n->op == PN_OP_NonZero || n->op == PN_OP_Compress)
		return 0;
	for (int a = 0; a < n->n_attr; a++)
		if (n->attrs[a].type == PN_ATTR_GRAPH || n->attrs[a].type == PN_ATTR_GRAPHS)
			return 0;
	size_t len = 0;
	for (int i = 0; i < n->n_in; i++) {
		const pn_tensor *t = in[i];
		const uint8_t present = t != NULL;
		len = key_put(buf, len, &present, 1);
		if (!t)
			continue;
		if (t->kind != PN_KIND_TENSOR || t->dtype == PN_STRING || t->rank < 0)
			return 0;
		const int32_t head[2] = {t->dtype, t->rank};
		len = key_put(buf, len, head, sizeof(head));
		len = key_put(buf, len, t->dims, sizeof(int64_t) * (size_t)t->rank);
		const int is_int = !pn_dtype_is_float(t->dtype);
		if (t->numel <= MEMO_SMALL || (is_int && t->numel <= MEMO_INTS)) {
			if (t->numel && !t->data)
				return 0;
			len = key_put(buf, len, t->data, (size_t)t->numel * pn_dtype_size(t->dtype));
		} else if (is_int) {
			return 0;
		}
	}
	return len <= MEMO_KEY_MAX ? len : 0;
}

/* n's memo when the run is of the session's own graph and keeps them. */
static infer_memo *memo_of(pn_run *r, const pn_node *n)
{
	pn_session *s = r->s;
	if (s->runs_once || r->g != s->g)
		return NULL;
	if (!s->memo && !(s->memo = calloc((size_t)(s->g->n_nodes ? s->g->n_nodes : 1),
					   sizeof(infer_memo))))
		return NULL;
	PN_ASSERT(n >= s->g->nodes && n < s->g->nodes + s->g->n_nodes);
	return &s->memo[n - s->g->nodes];
}

/* The outputs' storage for their types (static ones; the others rank -1,
 * left to the kernel). */
static int give_outputs(pn_run *r, const pn_node *n, const memo_out *mo, pn_tensor **out, char *err)
{
	for (int i = 0; i < n->n_out; i++) {
		pn_tensor *t = out[i];
		t->rank = -1;
		if (mo[i].rank < 0)
			continue;
		t->dtype = mo[i].dtype;
		t->rank = mo[i].rank;
		for (int d = 0; d < t->rank; d++)
			t->dims[d] = mo[i].dims[d];
		if (give_storage(&r->s->pool, t))
			return pn_fail(err, "cannot allocate output %d", i);
	}
	return 0;
}

/* What the node's memo holds for this key, when it holds it. */
static const memo_out *memo_hit(const infer_memo *m, const uint8_t *key, size_t len)
{
	return m && len && m->key && m->len == len && !memcmp(m->key, key, len) ? m->out : NULL;
}

/* Keeps (key, outputs) as the node's memo; nothing when out of memory. */
static void memo_keep(infer_memo *m, const pn_node *n, const uint8_t *key, size_t len,
		      const memo_out *mo)
{
	if (!m || !len)
		return;
	uint8_t *k = malloc(len);
	memo_out *o = malloc(sizeof(memo_out) * (size_t)(n->n_out ? n->n_out : 1));
	if (!k || !o) {
		free(k);
		free(o);
		return;
	}
	memcpy(k, key, len);
	memcpy(o, mo, sizeof(memo_out) * (size_t)n->n_out);
	free(m->key);
	free(m->out);
	m->key = k;
	m->len = len;
	m->out = o;
}

/* Infers output types from the actual inputs (or takes them from the
 * node's memo) and gives static outputs storage; the rest are left for
 * the kernel to allocate. */
static int prepare_outputs(pn_run *r, const pn_node *n, pn_tensor **in, pn_tensor **out, char *err)
{
	infer_memo *m = n->n_out <= PN_STACK_IO ? memo_of(r, n) : NULL;
	uint8_t key[MEMO_KEY_MAX];
	const size_t klen = m ? memo_key(n, in, key) : 0;
	const memo_out *hit = memo_hit(m, key, klen);
	if (hit)
		return give_outputs(r, n, hit, out, err);
	pn_infer_fn infer = pn_op_infer(n->op);
	pn_tinfo tin_s[PN_STACK_IO], tout_s[PN_STACK_IO];
	const pn_tinfo *pin_s[PN_STACK_IO];
	pn_tinfo *tin = n->n_in > PN_STACK_IO ? calloc((size_t)n->n_in, sizeof(pn_tinfo)) : tin_s;
	const pn_tinfo **pin = n->n_in > PN_STACK_IO ? calloc((size_t)n->n_in, sizeof(void *)) : pin_s;
	pn_tinfo *tout = n->n_out > PN_STACK_IO ? calloc((size_t)n->n_out, sizeof(pn_tinfo)) : tout_s;
	int rc = 0;
	if (!tin || !pin || !tout) {
		rc = pn_fail(err, "out of memory");
		goto done;
	}
	memset(tout, 0, sizeof(pn_tinfo) * (size_t)(n->n_out ? n->n_out : 1));
	for (int i = 0; i < n->n_out; i++)
		tout[i].type.rank = -1;
	for (int i = 0; i < n->n_in; i++) {
		pin[i] = NULL;
		if (in[i]) {
			type_of_tensor(in[i], &tin[i].type);
			tin[i].value = in[i];
			pin[i] = &tin[i];
		}
	}
	if (infer) {
		pn_ictx c = {.node = n, .opset = n->opset, .n_in = n->n_in, .n_out = n->n_out,
			     .in = pin, .out = tout, .err = err};
		if (infer(&c)) {
			rc = -1;
			goto done;
		}
	}
	memo_out mo[PN_STACK_IO];
	memo_out *mp = n->n_out <= PN_STACK_IO ? mo : calloc((size_t)n->n_out, sizeof(memo_out));
	if (!mp) {
		rc = pn_fail(err, "out of memory");
		goto done;
	}
	memset(mp, 0, sizeof(memo_out) * (size_t)n->n_out);
	for (int i = 0; i < n->n_out; i++) {
		const pn_type *ty = &tout[i].type;
		mp[i].rank = -1;
		if (infer && ty->kind == PN_KIND_TENSOR && pn_type_is_static(ty) &&
		    pn_dtype_size(ty->dtype)) {
			mp[i].dtype = ty->dtype;
			mp[i].rank = ty->rank;
			memcpy(mp[i].dims, ty->dims, sizeof(int64_t) * (size_t)ty->rank);
		}
	}
	rc = give_outputs(r, n, mp, out, err);
	if (!rc)
		memo_keep(m, n, key, klen, mp);
	if (mp != mo)
		free(mp);
done:
	if (tin != tin_s)
		free(tin);
	if (pin != pin_s)
		free(pin);
	if (tout != tout_s)
		free(tout);
	return rc;
}

static uint64_t node_seed(pn_run *r, const pn_node *n)
{
	infer_memo *m = memo_of(r, n);    /* a hash of the name a node and run, else */
	if (m && m->seeded)
		return m->seed;
	uint64_t seed = XXH3_64bits_withSeed(n->name, strlen(n->name), r->s->o.seed);
	if (m) {
		m->seed = seed;
		m->seeded = 1;
	}
	return seed;
}

/* Runs node n on in[] into out[] (tensor structs owned by the caller). */
static int call_kernel(pn_run *r, const pn_node *n, pn_tensor **in, pn_tensor **out, char *err)
{
	if (n->op < 0)
		return pn_fail(err, "unknown op %s%s%s", n->domain, *n->domain ? "::" : "", n->op_type);
	const pn_op_info *op = &pn_ops[n->op];
	if (op->flags & F_TRAINING)
		return pn_fail(err, "training op %s is not executed", n->op_type);
	pn_kernel_fn kernel = pn_op_kernel(n->op);
	if (!kernel)
		return pn_fail(err, "op %s is not implemented", n->op_type);
	/* every ONNX op has at least one output and kernels write out[0]
	 * unchecked; a node decoded without any is not run (constant folding
	 * met one from the fuzzer) */
	if (n->n_out < 1)
		return pn_fail(err, "%s has no outputs", n->op_type);
	/* kernels read input 0 unchecked; the tensors say whether it is there
	 * (pn_exec_node's callers give tensors, not value numbers) */
	if (pn_node_lacks_input0(n, n->n_in > 0 && in[0] != NULL))
		return pn_fail(err, "%s: input 0 is absent", n->op_type);
	if (prepare_outputs(r, n, in, out, err))
		return -1;
	pn_kctx k = {.node = n, .opset = n->opset, .n_in = n->n_in, .n_out = n->n_out, .in = in,
		     .out = out, .run = r, .seed = node_seed(r, n), .err = err};
	int rc = kernel(&k);
	release_scratch(r);
	if (rc)
		return -1;
	for (int i = 0; i < n->n_out; i++) {
		const pn_tensor *t = out[i];
		if (t->kind == PN_KIND_TENSOR && !t->data && (t->rank < 0 || t->numel))
			return pn_fail(err, "kernel left output %d unset", i);
	}
	return 0;
}

static int gather_inputs(pn_run *r, const pn_node *n, pn_tensor **in, char *err)
{
	for (int i = 0; i < n->n_in; i++) {
		in[i] = NULL;
		if (n->in[i] < 0)
			continue;
		in[i] = value_of(r, n->in[i], err);
		if (!in[i]) {
			if (!*err)
				pn_fail(err, "input '%s' has no value", r->g->values[n->in[i]].name);
			return -1;
		}
	}
	for (int i = 0; i < n->n_implicit; i++)
		if (!value_of(r, n->implicit[i], err)) {
			if (!*err)
				pn_fail(err, "captured value '%s' has no value",
					r->g->values[n->implicit[i]].name);
			return -1;
		}
	return 0;
}

static void drop_reader(pn_run *r, int v)
{
	if (v < 0 || --r->left[v] > 0 || !r->own[v] || r->g->values[v].is_output)
		return;
	release(&r->s->pool, r->vals[v]);
	r->vals[v] = NULL;
	r->own[v] = 0;
}

int pn_constant_attached(const pn_graph *g, const pn_node *n)
{
	return n->op == PN_OP_Constant && n->n_out == 1 && n->out[0] >= 0 &&
	       (g->values[n->out[0]].data || g->values[n->out[0]].meta);
}

/*
 * A node whose output is its input bit for bit (Identity; a Cast to the
 * input's own type, which QDQ exporters write after every QuantizeLinear)
 * takes over its input's buffer when it is that value's last reader and
 * the run owns it, instead of copying it: 4% of a quantized MobileNet's
 * run went to such copies.  Not when values are observed (an observer
 * may keep what it was shown) or for a node whose output the session
 * keeps.
 */
static int hands_over(const pn_run *r, const pn_node *n, pn_tensor *const *in, int fixed)
{
	const pn_exec_opts *o = &r->s->o;
	if (fixed || o->observe || o->observe_all || n->n_in != 1 || n->n_out != 1 ||
	    n->n_implicit || n->in[0] < 0 || n->out[0] < 0)
		return 0;
	const int v = n->in[0];
	if (!r->own[v] || r->left[v] != 1 || r->g->values[v].is_output || in[0] != r->vals[v] ||
	    in[0]->kind != PN_KIND_TENSOR)
		return 0;
	if (n->op == PN_OP_Identity)
		return 1;
	const pn_attr *to = n->op == PN_OP_Cast ? pn_attr_find(n, "to") : NULL;
	return to && to->i == in[0]->dtype;
}

/* out takes over input 0's tensor (buffer, pool place and all). */
static void hand_over(pn_run *r, const pn_node *n, pn_tensor *out)
{
	const int v = n->in[0];
	*out = *r->vals[v];
	memset(r->vals[v], 0, sizeof(pn_tensor));
	pn_tensor_free(r->vals[v]);
	r->vals[v] = NULL;
	r->own[v] = 0;
}

static int run_node(pn_run *r, const pn_node *n, char *err)
{
	if (pn_constant_attached(r->g, n))
		return 0;    /* value_of() serves it from the IR */
	int fixed = r->fixed && node_is_fixed(r->fixed, n);
	if (fixed && take_fixed(r, n)) {
		for (int i = 0; i < n->n_in; i++)
			drop_reader(r, n->in[i]);
		return 0;
	}
	pn_tensor *in_s[PN_STACK_IO], *out_s[PN_STACK_IO];
	pn_tensor **in = n->n_in > PN_STACK_IO ? calloc((size_t)n->n_in, sizeof(void *)) : in_s;
	pn_tensor **out = n->n_out > PN_STACK_IO ? calloc((size_t)n->n_out, sizeof(void *)) : out_s;
	int rc = (in && out) ? 0 : pn_fail(err, "out of memory");
	for (int i = 0; !rc && i < n->n_out; i++)
		if (!(out[i] = calloc(1, sizeof(pn_tensor))))
			rc = pn_fail(err, "out of memory");
	if (!rc)
		rc = gather_inputs(r, n, in, err);
	if (!rc && hands_over(r, n, in, fixed))
		hand_over(r, n, out[0]);
	else if (!rc)
		rc = call_kernel(r, n, in, out, err);
	const pn_exec_opts *o = &r->s->o;
	for (int i = 0; !rc && o->observe && !r->parent && i < n->n_out; i++)
		if (n->out[i] >= 0)
			o->observe(o->observe_ud, n->out[i], out[i]);
	for (int i = 0; !rc && o->observe_all && i < n->n_out; i++)
		if (n->out[i] >= 0)
			o->observe_all(o->observe_ud, r->g, n->out[i], out[i]);
	for (int i = 0; i < n->n_out && out; i++) {
		int v = n->out[i];
		if (!rc && v >= 0 && fixed) {
			/* kept by the session, read by this run and the next ones */
			r->vals[v] = r->fixed->vals[v] = out[i];
			r->own[v] = 0;
		} else if (!rc && v >= 0) {
			r->vals[v] = out[i];
			r->own[v] = 1;
			if (!r->g->values[v].n_consumers && !r->g->values[v].is_output)
				drop_reader(r, v), r->left[v] = 0;
		} else {
			release(&r->s->pool, out[i]);   /* unused optional output */
		}
	}
	for (int i = 0; i < n->n_in; i++)
		drop_reader(r, n->in[i]);
	for (int i = 0; i < n->n_implicit; i++)
		drop_reader(r, n->implicit[i]);
	if (in != in_s)
		free(in);
	if (out != out_s)
		free(out);
	if (rc)
		pn_errprefix(err, "node '%s' (%s)", n->name, n->op_type);
	return rc;
}

/* --- the chains (runtime/fuse.h; runtime/ops/conv_q8.c, quant.c) ------------------------ */

/* Input i of node n, or NULL when the slot is absent. */
static pn_tensor *input_of(pn_run *r, const pn_node *n, int i, char *err)
{
	return i < n->n_in && n->in[i] >= 0 ? value_of(r, n->in[i], err) : NULL;
}

static int is_scalar_of(const pn_tensor *t, int dtype)
{
	return t && t->kind == PN_KIND_TENSOR && t->dtype == dtype && t->numel == 1;
}

/* A zero point that is absent or all zeros. */
static int zero_or_absent(const pn_tensor *zp)
{
	for (int64_t i = 0; zp && i < zp->numel; i++)
		if (pn_tensor_get_i64(zp, i) != 0)
			return 0;
	return 1;
}

/* One operand's DequantizeLinear d: its input and per-tensor float32 scale
 * and zero point (of the input's type); 1 when they are such, 0 when not,
 * -1 on error. */
static int dequantized_operand(pn_run *r, const pn_node *d, const pn_tensor **x, float *scale,
			       int32_t *zp, char *err)
{
	pn_tensor *t = input_of(r, d, 0, err), *s = input_of(r, d, 1, err);
	pn_tensor *z = input_of(r, d, 2, err);
	if (*err)
		return -1;
	if (!t || !is_scalar_of(s, PN_FLOAT) || (z && !is_scalar_of(z, t->dtype)) ||
	    pn_attr_int(d, "block_size", 0))
		return 0;
	*x = t;
	*scale = *(const float *)s->data;
	*zp = z ? (int32_t)pn_tensor_get_i64(z, 0) : 0;
	return 1;
}

/* The output type and per-tensor scale and zero point of QuantizeLinear q:
 * 1 when they are such, 0 when not, -1 on error. */
static int quantized_result(pn_run *r, const pn_node *q, int *dtype, float *scale, int32_t *zp,
			    char *err)
{
	pn_tensor *s = input_of(r, q, 1, err), *z = input_of(r, q, 2, err);
	if (*err)
		return -1;
	if (!is_scalar_of(s, PN_FLOAT) || (z && (z->kind != PN_KIND_TENSOR || z->numel != 1)) ||
	    pn_attr_int(q, "block_size", 0))
		return 0;
	*dtype = z ? z->dtype : (int)pn_attr_int(q, "output_dtype", PN_UINT8);
	*scale = *(const float *)s->data;
	*zp = z ? (int32_t)pn_tensor_get_i64(z, 0) : 0;
	return 1;
}

/* A Clip's bound in slot i (opset 11 on), as its kernel reads it. */
static int clip_bound(pn_run *r, const pn_node *n, int i, float *v, char *err)
{
	pn_tensor *t = input_of(r, n, i, err);
	if (*err)
		return -1;
	if (t && t->kind == PN_KIND_TENSOR && t->numel > 0 && t->data) {
		if (t->dtype != PN_FLOAT)
			return 0;
		*v = *(const float *)t->data;
	}
	return 1;
}

/* The activation node n (or none) of a qconv chain as the kernel's enum and
 * parameters: 1, or 0 when the kernel does not take it, -1 on error. */
static int chain_activation(pn_run *r, const pn_node *n, pn_conv_q8 *a, char *err)
{
	a->act = PN_Q8_NONE;
	if (!n)
		return 1;
	switch (n->op) {
	case PN_OP_Relu:
		a->act = PN_Q8_RELU;
		return 1;
	case PN_OP_HardSwish:
		a->act = PN_Q8_HARDSWISH;
		return 1;
	case PN_OP_HardSigmoid:
		a->act = PN_Q8_HARDSIGMOID;
		a->act_a = pn_attr_float(n, "alpha", 0.2f);
		a->act_b = pn_attr_float(n, "beta", 0.5f);
		return 1;
	case PN_OP_Clip:
		a->act = PN_Q8_CLIP;
		a->act_a = -INFINITY;
		a->act_b = INFINITY;
		if (n->opset < 11) {
			const pn_attr *lo = pn_attr_find(n, "min"), *hi = pn_attr_find(n, "max");
			a->act_a = lo ? lo->f : a->act_a;
			a->act_b = hi ? hi->f : a->act_b;
			return 1;
		}
		int rc = clip_bound(r, n, 1, &a->act_a, err);
		return rc == 1 ? clip_bound(r, n, 2, &a->act_b, err) : rc;
	default:
		return 0;
	}
}

/* A linear Gemm's x [N, K] and W [M, K] as the 1x1 convolution's
 * [N, K, 1] and [M, K, 1] in view[]: the same data, owned by the values. */
static int linear_views(const pn_tensor *x, const pn_tensor *w, pn_tensor view[2])
{
	if (x->rank != 2 || w->rank != 2)
		return 0;
	view[0] = *x;
	view[1] = *w;
	for (int i = 0; i < 2; i++) {
		view[i].rank = 3;
		view[i].dims[2] = 1;
		view[i].owns = 0;
		view[i].pooled = 0;
	}
	return 1;
}

/*
 * The chain's operands, read from the values its nodes would read: 1 when
 * they suit the 8-bit kernel, 0 when not (the chain then runs node by
 * node), -1 on error.  A Gemm head's x and W are seen through view[]
 * (linear_views).  What the kernel assumes beyond pn_conv_q8_fits is
 * checked here: per-tensor float32 scales and zero points for x and y
 * (dequantized_operand, quantized_result), per-tensor or
 * per-output-channel (axis 0) weight scales, weight zero points of 0.
 */
static int qconv_operands(pn_run *r, const pn_node *c, const pn_fuse_qconv *f, pn_conv_q8 *a,
			  pn_tensor view[2], char *err)
{
	const pn_node *dw = &r->g->nodes[f->dq_w];
	const pn_tensor *x = NULL;
	int32_t x_zp = 0;
	memset(a, 0, sizeof(*a));
	int rc = dequantized_operand(r, &r->g->nodes[f->dq_x], &x, &a->x_scale, &x_zp, err);
	if (rc == 1)
		rc = quantized_result(r, &r->g->nodes[f->q], &a->y_dtype, &a->y_scale, &a->y_zp, err);
	if (rc != 1)
		return rc;
	pn_tensor *w = input_of(r, dw, 0, err), *ws = input_of(r, dw, 1, err);
	pn_tensor *wz = input_of(r, dw, 2, err), *b = input_of(r, c, 2, err);
	if (*err)
		return -1;
	if (!w || !ws || x->kind != PN_KIND_TENSOR || x->dtype != PN_UINT8 ||
	    w->kind != PN_KIND_TENSOR || ws->kind != PN_KIND_TENSOR || ws->dtype != PN_FLOAT ||
	    !zero_or_absent(wz) || pn_attr_int(dw, "block_size", 0))
		return 0;
	if (ws->numel != 1 && (ws->rank != 1 || w->rank < 1 ||
			       pn_axis(pn_attr_int(dw, "axis", 1), w->rank) != 0))
		return 0;
	int w_fixed = 1;
	for (int i = 0; i < dw->n_in; i++)
		w_fixed = w_fixed && (dw->in[i] < 0 || fixed_value(r->g, dw->in[i], 4));
	if (c->op == PN_OP_Gemm) {
		if (!linear_views(x, w, view))
			return 0;
		x = &view[0];
		w = &view[1];
	}
	a->x = x;
	a->x_zp = (uint8_t)x_zp;
	a->w = w;
	a->w_scale = ws;
	a->w_fixed = w_fixed;
	a->bias = b;
	rc = chain_activation(r, f->act >= 0 ? &r->g->nodes[f->act] : NULL, a, err);
	return rc == 1 ? pn_conv_q8_fits(a) : rc;
}

/* Sets the chain's output value v to out, as run_node does a node's. */
static void chain_output(pn_run *r, int v, pn_tensor *out)
{
	r->vals[v] = out;
	r->own[v] = 1;
	if (!r->g->values[v].n_consumers && !r->g->values[v].is_output)
		drop_reader(r, v), r->left[v] = 0;
}

/* The readers of node n's inputs are done with them. */
static void drop_inputs(pn_run *r, const pn_node *n)
{
	for (int i = 0; i < n->n_in; i++)
		drop_reader(r, n->in[i]);
}

/*
 * A chain is its nodes in the graph's order (NULL for an absent
 * activation), the head among them and the QuantizeLinear last.
 * chain_nodes runs them one by one, where the kernel does not take the
 * operands; chain_kernel_ctx and chain_done wrap the kernel that runs them
 * as one: a context at the head writing one new tensor, then that tensor
 * as the QuantizeLinear's output and every node's inputs read.
 */
typedef struct chain {
	const pn_node *node[5];
	int n;
} chain;

static int chain_nodes(pn_run *r, const chain *ch, char *err)
{
	for (int i = 0; i < ch->n; i++)
		if (ch->node[i] && run_node(r, ch->node[i], err))
			return -1;
	return 0;
}

static int chain_kernel_ctx(pn_run *r, const pn_node *head, pn_tensor **out, pn_kctx *k,
			    char *err)
{
	if (!(*out = calloc(1, sizeof(pn_tensor))))
		return pn_fail(err, "out of memory");
	*k = (pn_kctx){.node = head, .opset = head->opset, .n_in = 0, .n_out = 1, .in = NULL,
		       .out = out, .run = r, .seed = node_seed(r, head), .err = err};
	return 0;
}

/* After the chain's kernel returned rc. */
static int chain_done(pn_run *r, const chain *ch, const pn_node *head, pn_tensor *out, int rc,
		      char *err)
{
	release_scratch(r);
	if (rc) {
		release(&r->s->pool, out);
		return pn_errprefix(err, "node '%s' (%s)", head->name, head->op_type), -1;
	}
	chain_output(r, ch->node[ch->n - 1]->out[0], out);
	for (int i = 0; i < ch->n; i++)
		if (ch->node[i])
			drop_inputs(r, ch->node[i]);
	return 0;
}

/* Runs the qconv chain headed by Conv c, at c's place in the order (the
 * swallowed x DequantizeLinear came before and was passed over; the
 * activation and QuantizeLinear come after and will be).  The weights'
 * DequantizeLinear ran as itself; the head reads its inputs too. */
static int run_qconv(pn_run *r, const pn_node *c, const pn_fuse_qconv *f, char *err)
{
	chain ch = {.node = {&r->g->nodes[f->dq_x], c, f->act >= 0 ? &r->g->nodes[f->act] : NULL,
			     &r->g->nodes[f->q]},
		    .n = 4};
	pn_conv_q8 a;
	pn_tensor *out, view[2];
	pn_kctx k;
	int rc = qconv_operands(r, c, f, &a, view, err);
	if (rc < 0) {
		pn_errprefix(err, "node '%s' (%s)", c->name, c->op_type);
	} else if (rc == 0) {
		rc = chain_nodes(r, &ch, err);
	} else if (chain_kernel_ctx(r, c, &out, &k, err)) {
		rc = -1;
	} else {
		int krc = pn_conv_q8_run(&k, &a);
		if (!krc && c->op == PN_OP_Gemm) {
			out->rank = 2;    /* [N, M, 1] is the Gemm's [N, M] */
			out->dims[2] = 0;
		}
		rc = chain_done(r, &ch, c, out, krc, err);
	}
	drop_inputs(r, &r->g->nodes[f->dq_w]);
	return rc;
}

/* Runs the qadd chain headed by Add n, at n's place in the order. */
static int run_qadd(pn_run *r, const pn_node *n, const pn_fuse_qadd *f, char *err)
{
	chain ch = {.node = {&r->g->nodes[f->dq_a], &r->g->nodes[f->dq_b], n,
			     f->relu >= 0 ? &r->g->nodes[f->relu] : NULL, &r->g->nodes[f->q]},
		    .n = 5};
	pn_qadd a = {.relu = f->relu >= 0};
	pn_tensor *out;
	pn_kctx k;
	int rc = dequantized_operand(r, ch.node[0], &a.a, &a.a_scale, &a.a_zp, err);
	if (rc == 1)
		rc = dequantized_operand(r, ch.node[1], &a.b, &a.b_scale, &a.b_zp, err);
	if (rc == 1)
		rc = quantized_result(r, ch.node[4], &a.y_dtype, &a.y_scale, &a.y_zp, err);
	if (rc == 1)
		rc = pn_qadd_fits(&a);
	if (rc < 0)
		return pn_errprefix(err, "node '%s' (%s)", n->name, n->op_type), -1;
	if (rc == 0)
		return chain_nodes(r, &ch, err);
	if (chain_kernel_ctx(r, n, &out, &k, err))
		return -1;
	return chain_done(r, &ch, n, out, pn_qadd_run(&k, &a), err);
}

static int run_graph(pn_run *r, pn_tensor *const *inputs, int n_inputs, pn_tensor **outputs,
		     char *err)
{
	const pn_graph *g = r->g;
	for (int i = 0; i < g->n_inputs; i++)
		r->vals[g->inputs[i]] = i < n_inputs ? inputs[i] : NULL;
	for (int i = 0; i < g->n_nodes; i++) {
		int ni = g->topo[i];
		int role = r->fusion ? r->fusion->role[ni] : PN_FUSE_NONE;
		if (role == PN_FUSE_SWALLOWED)
			continue;    /* run by its chain's head */
		const pn_node *n = &g->nodes[ni];
		int rc = role == PN_FUSE_QCONV	? run_qconv(r, n, &r->fusion->qconv[ni], err)
			 : role == PN_FUSE_QADD ? run_qadd(r, n, &r->fusion->qadd[ni], err)
						: run_node(r, n, err);
		if (rc)
			return -1;
	}
	for (int i = 0; i < g->n_outputs; i++) {
		int v = g->outputs[i];
		pn_tensor *t = value_of(r, v, err);
		if (!t)
			return pn_fail(err, "graph output '%s' was not computed", g->values[v].name);
		if (r->own[v]) {
			outputs[i] = detach(t);
			r->own[v] = 0;   /* the caller owns it now */
		} else {
			outputs[i] = pn_tensor_clone(t);
			if (!outputs[i])
				return pn_fail(err, "out of memory");
		}
	}
	return 0;
}

int pn_session_run(pn_session *s, pn_tensor *const *inputs, int n_inputs, pn_tensor **outputs,
		   char *err)
{
	pn_run r;
	*err = 0;
	if (s->o.threads > 0) {
		omp_set_num_threads(s->o.threads);
		g_threads = s->o.threads;
	} else {
		g_threads = omp_get_max_threads();
	}
	for (int i = 0; i < s->g->n_outputs; i++)
		outputs[i] = NULL;
	int rc = run_init(&r, s, s->g, NULL, err);
	if (!rc)
		rc = run_graph(&r, inputs, n_inputs, outputs, err);
	if (rc)
		for (int i = 0; i < s->g->n_outputs; i++) {
			pn_tensor_free(outputs[i]);
			outputs[i] = NULL;
		}
	run_free(&r);
	return rc;
}

int pn_run_subgraph(pn_kctx *k, const pn_graph *g, pn_tensor *const *inputs, int n_inputs,
		    pn_tensor **outputs, char *err)
{
	pn_run r;
	for (int i = 0; i < g->n_outputs; i++)
		outputs[i] = NULL;
	int rc = run_init(&r, k->run->s, g, k->run, err);
	if (!rc)
		rc = run_graph(&r, inputs, n_inputs, outputs, err);
	if (rc)
		for (int i = 0; i < g->n_outputs; i++) {
			pn_tensor_free(outputs[i]);
			outputs[i] = NULL;
		}
	run_free(&r);
	return rc;
}

int pn_exec_node(const pn_node *n, pn_tensor *const *inputs, int n_inputs, pn_tensor **outputs,
		 uint64_t seed, char *err)
{
	pn_session s = {.o = {.seed = seed}};
	pn_run r = {.s = &s};
	pn_graph empty = {0};
	r.g = &empty;
	pn_tensor **in = calloc((size_t)n->n_in + 1, sizeof(void *));
	int rc = in ? 0 : pn_fail(err, "out of memory");
	for (int i = 0; i < n->n_in && i < n_inputs; i++)
		in[i] = inputs[i];
	for (int i = 0; !rc && i < n->n_out; i++)
		if (!(outputs[i] = calloc(1, sizeof(pn_tensor))))
			rc = pn_fail(err, "out of memory");
	if (!rc)
		rc = call_kernel(&r, n, in, outputs, err);
	for (int i = 0; i < n->n_out; i++) {
		if (rc) {
			release(&s.pool, outputs[i]);
			outputs[i] = NULL;
		} else if (outputs[i]) {
			detach(outputs[i]);
		}
	}
	free(in);
	pn_pool_clear(&s.pool);
	return rc;
}

int pn_run_once(const pn_graph *g, const pn_exec_opts *o, pn_tensor *const *inputs, int n_inputs,
		char *err)
{
	pn_session *s = NULL;
	pn_tensor **out = calloc((size_t)g->n_outputs + 1, sizeof(pn_tensor *));
	int rc = out ? pn_session_new(g, o, &s, err) : pn_fail(err, "out of memory");
	if (!rc) {
		s->runs_once = 1;
		s->pool.limit = PN_POOL_ONCE_HELD;
		rc = pn_session_run(s, inputs, n_inputs, out, err);
	}
	for (int i = 0; out && i < g->n_outputs; i++)
		pn_tensor_free(out[i]);
	free(out);
	pn_session_free(s);
	return rc;
}
