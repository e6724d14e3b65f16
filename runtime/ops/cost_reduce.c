/*
 * cost_reduce.c - costs of reductions, pooling, softmax, normalisation,
 * sorting and losses: ops whose output elements each combine many input
 * elements, so their work follows the input (or the window), not the
 * output.
 *
 * Traffic is the default: the input read once and the output written once,
 * as a kernel that keeps a row (or a window's rows) in cache does.
 */
#include <string.h>

#include "runtime/ops/cost_impl.h"

#define T PN_COST_TRANS

/* --- reductions ---------------------------------------------------------------------- */

/* One operation per input element (add, max, multiply, compare), two when
 * the element is first transformed (|x|, x*x), a transcendental plus the
 * max subtraction and the add for LogSumExp; then the finishing step per
 * output element: Mean's division, L2's square root, a log. */
static int reduce(pn_costctx *c, double per_in, double per_out)
{
	c->flops = per_in * pn_cin_numel(c, 0) + per_out * pn_cout_numel(c, 0);
	return 0;
}

int pn_cost_ReduceSum(pn_costctx *c)
{
	return reduce(c, 1, 0);
}

int pn_cost_ReduceMean(pn_costctx *c)
{
	return reduce(c, 1, 1);
}

int pn_cost_ReduceMax(pn_costctx *c)
{
	return reduce(c, 1, 0);
}

int pn_cost_ReduceMin(pn_costctx *c)
{
	return reduce(c, 1, 0);
}

int pn_cost_ReduceProd(pn_costctx *c)
{
	return reduce(c, 1, 0);
}

int pn_cost_ReduceL1(pn_costctx *c)
{
	return reduce(c, 2, 0);
}

int pn_cost_ReduceL2(pn_costctx *c)
{
	return reduce(c, 2, 1);
}

int pn_cost_ReduceSumSquare(pn_costctx *c)
{
	return reduce(c, 2, 0);
}

int pn_cost_ReduceLogSum(pn_costctx *c)
{
	return reduce(c, 1, T);
}

int pn_cost_ReduceLogSumExp(pn_costctx *c)
{
	return reduce(c, T + 3, T);
}

int pn_cost_ArgMax(pn_costctx *c)
{
	return reduce(c, 1, 0);
}

int pn_cost_ArgMin(pn_costctx *c)
{
	return reduce(c, 1, 0);
}

/* A running sum: one add per element. */
int pn_cost_CumSum(pn_costctx *c)
{
	return reduce(c, 1, 0);
}

/* --- softmax and normalisation --------------------------------------------------------- */

/* Softmax and LogSoftmax per element: max, subtract, exp, sum, normalise
 * (a multiply, or LogSoftmax's subtraction of the log-sum; the one log per
 * row is negligible).  Hardmax is one comparison per element (default). */
#define PN_COST_SOFTMAX (T + 4)

int pn_cost_Softmax(pn_costctx *c)
{
	return pn_cost_per_input(c, PN_COST_SOFTMAX);
}

int pn_cost_LogSoftmax(pn_costctx *c)
{
	return pn_cost_per_input(c, PN_COST_SOFTMAX);
}

/* Normalisations per element: statistics 3 (add for the mean, subtract and
 * multiply-add for the variance) and the apply step 4 (subtract the mean,
 * multiply by 1/sigma, scale, shift).  The one square root per group is
 * negligible.  MeanVarianceNormalization has no scale and shift (5).
 * Inference BatchNormalization uses running statistics: per channel they
 * fold into one scale and one shift, a multiply-add per element (2);
 * training mode computes the statistics like the others (7). */
#define PN_COST_NORM 7.0

int pn_cost_LayerNormalization(pn_costctx *c)
{
	return pn_cost_per_input(c, PN_COST_NORM);
}

int pn_cost_InstanceNormalization(pn_costctx *c)
{
	return pn_cost_per_input(c, PN_COST_NORM);
}

int pn_cost_GroupNormalization(pn_costctx *c)
{
	return pn_cost_per_input(c, PN_COST_NORM);
}

int pn_cost_MeanVarianceNormalization(pn_costctx *c)
{
	return pn_cost_per_input(c, PN_COST_NORM - 2);
}

int pn_cost_BatchNormalization(pn_costctx *c)
{
	int training = pn_attr_int(c->node, "training_mode", 0) ||
		       (c->opset < 14 && c->n_out > 1 && c->out && c->out[1]);
	return pn_cost_per_input(c, training ? PN_COST_NORM : 2);
}

/* Lp normalisation: |x| or x*x, the sum, and the division (3). */
int pn_cost_LpNormalization(pn_costctx *c)
{
	return pn_cost_per_input(c, 3);
}

/* LRN: each element squared once (1), a sum over `size` neighbouring
 * channels (size), then bias + alpha/size * sum (2), the pow (T) and the
 * division (1). */
int pn_cost_LRN(pn_costctx *c)
{
	double size = (double)pn_attr_int(c->node, "size", 1);
	return pn_cost_per_input(c, size + T + 4);
}

/* --- pooling ----------------------------------------------------------------------------- */

/* One operation (compare or add) per window tap per output element; LpPool
 * raises every tap (x*x for the usual p = 2) before adding (2).  The
 * division or root per output is negligible. */
static int pool(pn_costctx *c, double per_tap)
{
	int64_t k[PN_MAX_RANK];
	int n = pn_attr_ints(c->node, "kernel_shape", k, PN_MAX_RANK);
	if (n < 1 || !pn_cout(c, 0))
		return 1;
	double taps = 1;
	for (int i = 0; i < n && i < PN_MAX_RANK; i++)
		taps *= (double)k[i];
	c->flops = per_tap * taps * pn_cout_numel(c, 0);
	return 0;
}

int pn_cost_MaxPool(pn_costctx *c)
{
	return pool(c, 1);
}

int pn_cost_AveragePool(pn_costctx *c)
{
	return pool(c, 1);
}

int pn_cost_LpPool(pn_costctx *c)
{
	return pool(c, 2);
}

/* Global pools: the window is the whole plane, one op per input element. */
int pn_cost_GlobalAveragePool(pn_costctx *c)
{
	return pn_cost_per_input(c, 1);
}

int pn_cost_GlobalMaxPool(pn_costctx *c)
{
	return pn_cost_per_input(c, 1);
}

int pn_cost_GlobalLpPool(pn_costctx *c)
{
	return pn_cost_per_input(c, 2);
}

/* --- sorting and selection ------------------------------------------------------------------ */

/* TopK keeps a heap of k per slice: log2(k) comparisons per input element
 * (k is the output's size along the axis). */
int pn_cost_TopK(pn_costctx *c)
{
	int64_t k = pn_cdim(pn_cout(c, 0), pn_attr_int(c->node, "axis", -1));
	if (k < 0)
		return 1;
	return pn_cost_per_input(c, pn_clog2((double)k));
}

/* Unique sorts the input: n log2 n comparisons. */
int pn_cost_Unique(pn_costctx *c)
{
	double n = pn_cin_numel(c, 0);
	return pn_cost_per_input(c, pn_clog2(n));
}

/* One IoU between two boxes: corner max/min (4), widths and heights with
 * clamps (4), intersection and union areas (4), the division and the
 * threshold test (2). */
#define PN_COST_IOU 14.0

/* NonMaxSuppression per batch and class: sort the N scores (N log2 N),
 * then every box kept (at most max_output_boxes_per_class, N if unknown)
 * is tested against the N candidates.  An upper bound: suppression can
 * only shorten the candidate list. */
int pn_cost_NonMaxSuppression(pn_costctx *c)
{
	const pn_type *boxes = pn_cin(c, 0), *scores = pn_cin(c, 1);
	if (!boxes || !scores || scores->rank != 3)
		return 1;
	double b = (double)scores->dims[0], k = (double)scores->dims[1];
	double n = (double)scores->dims[2], kept = n;
	const pn_tensor *m = pn_cval(c, 2);
	if (m && m->numel >= 1 && pn_dtype_is_int(m->dtype)) {
		double mo = (double)pn_tensor_get_i64(m, 0);
		kept = mo < 0 ? 0 : mo < n ? mo : n;
	} else if (c->n_in < 3 || !c->in || !c->in[2]) {
		kept = 0;   /* absent: ONNX's default of 0 boxes kept */
	}
	c->flops = b * k * (n * pn_clog2(n) + kept * n * PN_COST_IOU);
	return 0;
}

/* --- losses ------------------------------------------------------------------------------ */

/* Negative log-likelihood: per target a gather, the class weight multiply
 * and the add into the reduction (2). */
int pn_cost_NegativeLogLikelihoodLoss(pn_costctx *c)
{
	c->flops = 2 * pn_cin_numel(c, 1);
	return 0;
}

/* Softmax cross-entropy: a log-softmax over the scores, then the
 * likelihood as above. */
int pn_cost_SoftmaxCrossEntropyLoss(pn_costctx *c)
{
	c->flops = PN_COST_SOFTMAX * pn_cin_numel(c, 0) + 2 * pn_cin_numel(c, 1);
	return 0;
}
