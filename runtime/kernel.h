/*
 * kernel.h - the interface between the executor and op kernels.
 *
 * A kernel is int pn_kernel_<Op>(pn_kctx *k), listed by name in
 * schemas/ops.def and found through the op table.  Before the call the
 * executor has run the op's inference on the real inputs and allocated every
 * output whose shape that fixed; a kernel whose output shape depends on data
 * (NonZero, Loop, ...) allocates it with pn_out_alloc, which any kernel may
 * call (it returns the existing buffer when dtype and dims already match).
 *
 * Kernels must be deterministic: the same inputs give bitwise identical
 * outputs whatever the thread count.  Parallelise over independent output
 * elements only (never split a reduction across threads), and only when the
 * work is large enough to pay for it (PN_PAR_MIN_WORK).
 */
#ifndef PN_KERNEL_H
#define PN_KERNEL_H

#include "schemas/ir.h"
#include "runtime/op_table.h"

struct pn_run;

struct pn_kctx {
	const pn_node *node;
	int opset;
	int n_in, n_out;
	pn_tensor **in;      /* NULL for an absent optional input */
	pn_tensor **out;     /* NULL for an output slot the node leaves empty */
	struct pn_run *run;  /* the graph run this node belongs to */
	uint64_t seed;       /* for random ops: fixed per node and run seed */
	char *err;
};

/* Below this many scalar operations a kernel stays on one thread. */
#define PN_PAR_MIN_WORK 32768

int  pn_kfail(pn_kctx *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Input i or NULL when absent. */
static inline pn_tensor *pn_kin(pn_kctx *k, int i)
{
	return i < k->n_in ? k->in[i] : NULL;
}
/* (Re)allocates output i with this dtype and shape; NULL with k->err set. */
pn_tensor *pn_out_alloc(pn_kctx *k, int i, int dtype, int rank, const int64_t *dims);
/* Scratch memory for the duration of this kernel call (64-byte aligned),
 * from the session's buffer pool: after a graph's first run, a kernel that
 * takes its scratch here allocates nothing.  NULL with k->err set if out of
 * memory.  Released automatically when the kernel returns. */
void *pn_kscratch(pn_kctx *k, size_t bytes);

/* Input `slot`, a float32 [K,N] (or [N,K] when trans_b) GEMM operand that
 * is fixed for the session (a weight), packed once for pn_sgemm_packed_b
 * and kept by the session; NULL when the input is not fixed, memory is
 * short, or the session runs once and the copy would be large, and the
 * caller then multiplies the raw matrix (same bits).  `part`
 * tells apart several matrices of one input (an RNN's per direction and
 * gate group; 0 for a whole input); B must be the same for the same part in
 * every run. */
const float *pn_kconst_packed_b(pn_kctx *k, int slot, int part, int trans_b, int64_t K, int64_t N,
				const float *B, int64_t ldb);

/* The same for A of pn_sgemm_packed_a: input `slot`'s float32 [M,K] rows
 * (a convolution's weights, one group per part), packed once. */
const float *pn_kconst_packed_a(pn_kctx *k, int slot, int part, int64_t M, int64_t K,
				const float *A, int64_t lda);

/* A buffer of `bytes` the session keeps for the running node's derived
 * constant number `tag`: what a kernel computes once from operands fixed for
 * the session (the 8-bit convolution's packed weights).  *fresh is 1 when it
 * was just made and the caller must fill it, 0 when it holds what the first
 * run wrote.  NULL when there is no memory for it, or the session runs once
 * and it would be large (the caller then uses its own).  The caller alone
 * knows that its operands are fixed. */
void *pn_kmemo(pn_kctx *k, int tag, size_t bytes, int *fresh);

/* Makes output i a sequence / optional container (items added by the kernel
 * with pn_seq_push of schemas/tensor.h, which takes ownership of a heap
 * tensor). */
pn_tensor *pn_out_container(pn_kctx *k, int i, int kind, int dtype);

/* Runs a nested graph (If branch, Loop/Scan body) with these inputs; the
 * graph's captured outer values come from the current run.  outputs[] get
 * heap tensors the caller owns (pn_tensor_free). */
int pn_run_subgraph(pn_kctx *k, const pn_graph *g, pn_tensor *const *inputs, int n_inputs,
		    pn_tensor **outputs, char *err);

/* Number of threads kernels may use (set per run). */
int pn_threads(void);

#endif
