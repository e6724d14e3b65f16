/*
 * onnx_weights.c - which constant tensors are stored by value.
 *
 * docs/design.md keeps large float weights as statistics (dtype, dims, mean, std,
 * min, max) and every small or computation-steering tensor by value.  The
 * thresholds:
 *
 *   strings                                   always by value
 *   bool, int16/32/64, uint16/32/64           by value up to 4096 elements:
 *                                             shapes, axes, pads, indices,
 *                                             gather tables (Swin's 2401-entry
 *                                             relative position index fits)
 *   float16/32/64, bfloat16, int8, uint8      by value up to 16 elements:
 *                                             scalars such as GELU's 0.5 and
 *                                             sqrt(2), Clip bounds, zero
 *                                             points; anything bigger is a
 *                                             learned weight (8-bit ones are
 *                                             quantized weights), whose values
 *                                             do not change what a subgraph
 *                                             computes, only its numbers
 *
 * So two fine-tunes of one architecture share their subgraphs, while x*0.5
 * and x*2.0 stay different computations.
 *
 * Statistics: mean, std, min and max of the whole tensor, and mean and std
 * of each of its first PN_WEIGHT_CHANNELS_MAX channels, along its first
 * axis longer than 1 (a conv's or Gemm's output channels, a norm's scale
 * and shift element by element, the channels of an NCHW-broadcast [1,C,1,1]
 * scale),
 * because trained models fold batch-norm into per-channel conv scales that
 * differ by orders of magnitude: drawn at the whole tensor's std, the
 * channels that carry a small scale explode (issue 26: outputs of 1e7
 * where the real model gives +-115).  The cap bounds a record at 32 KiB per
 * weight; 4096 covers the channels of every conv and norm of the corpus,
 * and an embedding table keeps its first 4096 rows.  The statistics are
 * not part of a model's structure key (store/records.c), so fine-tunes
 * still share their subgraphs.
 */
#include "model/onnx.h"

#include <math.h>
#include <string.h>

#define PN_BYVALUE_MAX_INDEX 4096
#define PN_BYVALUE_MAX_WEIGHT 16

int pn_weight_by_value(int dtype, int64_t numel)
{
	switch (dtype) {
	case PN_STRING:
		return 1;
	case PN_BOOL: case PN_INT16: case PN_INT32: case PN_INT64:
	case PN_UINT16: case PN_UINT32: case PN_UINT64:
		return numel <= PN_BYVALUE_MAX_INDEX;
	default:
		return numel <= PN_BYVALUE_MAX_WEIGHT;
	}
}

/* --- statistics ---------------------------------------------------------------------- */

int pn_weight_channel_axis(int rank, const int64_t *dims)
{
	for (int a = 0; a < rank; a++)
		if (dims[a] > 1)
			return a;
	return -1;
}

/* How many channels of t get statistics of their own: float weights only
 * (integer ones are indices or quantized codes, whose range the
 * whole-tensor min/max already keeps), 2 or more channels, at most
 * PN_WEIGHT_CHANNELS_MAX. */
static int64_t stat_channels(const pn_tensor *t)
{
	int a = pn_weight_channel_axis(t->rank, t->dims);
	if (!pn_dtype_is_float(t->dtype) || a < 0 || !t->numel)
		return 0;
	return t->dims[a] < PN_WEIGHT_CHANNELS_MAX ? t->dims[a] : PN_WEIGHT_CHANNELS_MAX;
}

/* Element i of t in double: float32, most weights, without a call. */
static inline double elem(const pn_tensor *t, int64_t i)
{
	return t->dtype == PN_FLOAT ? ((const float *)t->data)[i] : pn_tensor_get_f64(t, i);
}

typedef struct sums {
	double sum, sq;
} sums;

static void add(sums *s, double x)
{
	s->sum += x;
	s->sq += x * x;
}

/* mean and std of n elements from their sums, in double. */
static void moments(sums s, int64_t n, double *mean, double *std)
{
	*mean = n ? s.sum / (double)n : 0;
	double var = n ? s.sq / (double)n - *mean * *mean : 0;
	*std = var > 0 ? sqrt(var) : 0;
}

/* One pass in element order: each sum sees the additions it would see in a
 * pass of its own (channels are contiguous along the first axis longer
 * than 1), so the statistics are the same bits as three passes'. */
int pn_weight_stats(const pn_tensor *t, pn_arena *a, pn_wmeta *w)
{
	memset(w, 0, sizeof *w);
	int64_t nc = stat_channels(t);
	int64_t per = nc ? t->numel / t->dims[pn_weight_channel_axis(t->rank, t->dims)] : 0;
	if (nc) {
		w->ch_mean = pn_arena_alloc(a, sizeof(float) * (size_t)nc);
		w->ch_std = per > 1 ? pn_arena_alloc(a, sizeof(float) * (size_t)nc) : NULL;
		if (!w->ch_mean || (per > 1 && !w->ch_std))
			return -1;
		w->n_channels = (int32_t)nc;
	}
	double lo = 0, hi = 0;
	sums all = {0, 0};
	int64_t i = 0;
	for (int64_t c = 0; c <= nc; c++) {
		/* channel c's elements, then (c == nc) those after the last channel */
		int64_t end = c < nc ? i + per : t->numel;
		sums ch = {0, 0};
		for (; i < end; i++) {
			double x = elem(t, i);
			lo = i == 0 || x < lo ? x : lo;
			hi = i == 0 || x > hi ? x : hi;
			add(&all, x);
			add(&ch, x);
		}
		if (c < nc) {
			double m, s;
			moments(ch, per, &m, &s);
			w->ch_mean[c] = (float)m;
			if (w->ch_std)
				w->ch_std[c] = (float)s;
		}
	}
	w->has_stats = 1;
	w->min = lo;
	w->max = hi;
	moments(all, t->numel, &w->mean, &w->std);
	return 0;
}

void pn_weight_meta_from_record(const Passnet__WeightMeta *wm, pn_wmeta *w)
{
	memset(w, 0, sizeof *w);
	w->scale = wm && wm->has_scale ? wm->scale : 0;
	if (!wm || !wm->has_stats)
		return;
	w->has_stats = 1;
	w->mean = wm->mean;
	w->std = wm->std;
	w->min = wm->min;
	w->max = wm->max;
	if (wm->n_channel_mean && wm->n_channel_mean <= PN_WEIGHT_CHANNELS_MAX &&
	    (!wm->n_channel_std || wm->n_channel_std == wm->n_channel_mean)) {
		w->n_channels = (int32_t)wm->n_channel_mean;
		w->ch_mean = wm->channel_mean;
		w->ch_std = wm->n_channel_std ? wm->channel_std : NULL;
	}
}
