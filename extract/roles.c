/*
 * roles.c - what each graph input is, and what each of its symbolic dims
 * is (see binding.h and the table in binding_rules.c).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "extract/binding.h"
#include "runtime/inputs.h"
#include "schemas/ops.h"

static const char *const role_names[PN_N_INPUT_ROLES] = {
	[PN_IR_NONE] = "none", [PN_IR_IMAGE_NCHW] = "image NCHW", [PN_IR_IMAGE_NHWC] = "image NHWC",
	[PN_IR_AUDIO] = "audio", [PN_IR_TOKENS] = "token ids", [PN_IR_MASK] = "mask",
	[PN_IR_STATE] = "state", [PN_IR_CONFIG] = "config scalar", [PN_IR_LENGTHS] = "lengths",
	[PN_IR_OTHER] = "other",
};

const char *pn_input_role_name(int role)
{
	return role >= 0 && role < PN_N_INPUT_ROLES ? role_names[role] : "?";
}

/* --- names ------------------------------------------------------------------------- */

static int has_word(const char *s, const char *w)
{
	size_t n = strlen(w);
	for (; s && *s; s++)
		if (!strncasecmp(s, w, n))
			return 1;
	return 0;
}

/* name is one of the '|'-separated words of list (no case). */
static int name_in(const char *name, const char *list)
{
	size_t n = strlen(name);
	for (const char *p = list; *p;) {
		const char *e = strchr(p, '|');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l == n && !strncasecmp(p, name, n))
			return 1;
		p += l + (e ? 1 : 0);
	}
	return 0;
}

int pn_scalar_rule_of(const char *name)
{
	for (int i = 0; name && i < pn_n_scalar_rules; i++)
		if (name_in(name, pn_scalar_rules[i].names))
			return i;
	return -1;
}

static int state_name(const char *name)
{
	return name_in(name, "state|h|c|h0|c0|hx|cx|hidden|cell|h_in|c_in|hidden_state|cell_state") ||
	       !strncasecmp(name, "past", 4) || !strncasecmp(name, "cache", 5) ||
	       !strncasecmp(name, "state", 5);
}

/* --- how the graph reads an input --------------------------------------------------- */

enum { READ_GATHER = 1, READ_STFT = 2 };

/* A 1-D Conv with a window of 64 or more is an STFT written as a
 * convolution (Silero, openWakeWord's melspectrogram). */
static int stft_conv(const pn_graph *g, const pn_node *n)
{
	int64_t k[4];
	if (pn_attr_ints(n, "kernel_shape", k, 4) == 1)
		return k[0] >= 64;
	const pn_value *w = n->n_in > 1 && n->in[1] >= 0 ? &g->values[n->in[1]] : NULL;
	return w && w->type.rank == 3 && w->type.dims[2] >= 64;
}

/* What the nodes within `depth` steps downstream of v do with it; *budget
 * bounds the nodes looked at (fan-out compounds with depth). */
static int reads_within(const pn_graph *g, int v, int depth, int *budget)
{
	int got = 0;
	const pn_value *val = &g->values[v];
	for (int c = 0; c < val->n_consumers && depth > 0 && (*budget)-- > 0; c++) {
		const pn_node *n = &g->nodes[val->consumers[c]];
		if (n->op == PN_OP_Gather && n->n_in > 1 && n->in[1] == v)
			got |= READ_GATHER;
		if ((n->op == PN_OP_Conv && stft_conv(g, n)) || n->op == PN_OP_DFT || n->op == PN_OP_STFT)
			got |= READ_STFT;
		for (int k = 0; k < n->n_out && k < 2; k++)
			if (n->out[k] >= 0)
				got |= reads_within(g, n->out[k], depth - 1, budget);
	}
	return got;
}

static int reads_of(const pn_graph *g, int v, int depth)
{
	int budget = 512;
	return reads_within(g, v, depth, &budget);
}

/* --- roles ------------------------------------------------------------------------------ */

static int symbolic(const pn_type *t)
{
	for (int d = 0; d < t->rank; d++)
		if (t->dims[d] < 0)
			return 1;
	return 0;
}

static int channels(int64_t d)
{
	return d == 1 || d == 3 || d == 4;
}

static int int_type(int dtype)
{
	return dtype == PN_INT64 || dtype == PN_INT32;
}

static int float_role(const pn_graph *g, int v, const pn_type *t)
{
	const char *name = g->values[v].name;
	if (state_name(name) && t->rank >= 3 && t->dims[t->rank - 1] > 0)
		return PN_IR_STATE;
	if (t->rank == 4 && t->dims[1] > 0 && channels(t->dims[1]))
		return PN_IR_IMAGE_NCHW;
	if (t->rank == 4 && t->dims[3] > 0 && channels(t->dims[3]))
		return PN_IR_IMAGE_NHWC;
	if (t->rank >= 1 && t->rank <= 2 && t->dims[t->rank - 1] < 0)
		return PN_IR_AUDIO;
	if (t->rank == 3 && t->dims[2] < 0 && (reads_of(g, v, 8) & READ_STFT))
		return PN_IR_AUDIO;
	return PN_IR_OTHER;
}

int pn_input_role(const pn_graph *g, int i)
{
	int v = g->inputs[i];
	const pn_type *t = &g->values[v].type;
	const char *name = g->values[v].name;
	if (t->kind != PN_KIND_TENSOR || t->rank < 0)
		return PN_IR_NONE;
	/* rank 0 only: a [1] tensor named steps is Slice's steps operand */
	if (t->rank == 0 && int_type(t->dtype) && pn_scalar_rule_of(name) >= 0)
		return PN_IR_CONFIG;
	if (!symbolic(t))
		return PN_IR_NONE;
	if (has_word(name, "mask"))
		return PN_IR_MASK;
	/* one source for what a lengths input is: the seeded inputs' rules */
	if (pn_input_meaning(g, i) == PN_IM_LENGTHS)
		return PN_IR_LENGTHS;
	if (int_type(t->dtype) && t->rank <= 2 &&
	    (has_word(name, "ids") || has_word(name, "token") || (reads_of(g, v, 3) & READ_GATHER)))
		return PN_IR_TOKENS;
	if (pn_dtype_is_float(t->dtype))
		return float_role(g, v, t);
	return PN_IR_OTHER;
}

/* --- kinds of dims ------------------------------------------------------------------------- */

static int kind_by_name(const char *dn)
{
	if (!dn)
		return -1;
	if (has_word(dn, "batch") || !strcmp(dn, "N"))
		return PN_DK_BATCH;
	if (has_word(dn, "height") || has_word(dn, "width"))
		return PN_DK_SPATIAL;
	if (has_word(dn, "sample"))
		return PN_DK_SAMPLES;
	if (has_word(dn, "seq") || has_word(dn, "len") || has_word(dn, "time") || has_word(dn, "frame"))
		return PN_DK_SEQUENCE;
	return -1;
}

int pn_dim_kind(const pn_graph *g, int i, int role, int axis)
{
	const pn_type *t = &g->values[g->inputs[i]].type;
	int named = kind_by_name(t->dim_names[axis]);
	if (named == PN_DK_BATCH)
		return PN_DK_BATCH;
	int last = axis == t->rank - 1;
	switch (role) {
	case PN_IR_IMAGE_NCHW:
		return axis == 0 ? PN_DK_BATCH : axis >= 2 ? PN_DK_SPATIAL : PN_DK_OTHER;
	case PN_IR_IMAGE_NHWC:
		return axis == 0 ? PN_DK_BATCH : axis <= 2 ? PN_DK_SPATIAL : PN_DK_OTHER;
	case PN_IR_AUDIO:
		return last ? PN_DK_SAMPLES : axis == 0 ? PN_DK_BATCH : PN_DK_OTHER;
	case PN_IR_TOKENS:
	case PN_IR_MASK:
		return axis == 0 && t->rank >= 2 ? PN_DK_BATCH : PN_DK_SEQUENCE;
	case PN_IR_STATE:
		return PN_DK_STATE;
	case PN_IR_LENGTHS:   /* one length per batch element */
		return PN_DK_BATCH;
	default:
		if (named >= 0)
			return named;
		return axis == 0 && t->rank >= 2 ? PN_DK_BATCH : PN_DK_OTHER;
	}
}

/* --- the graph's stride ----------------------------------------------------------------------- */

static int64_t node_stride(const pn_node *n)
{
	if (n->op != PN_OP_Conv && n->op != PN_OP_MaxPool && n->op != PN_OP_AveragePool)
		return 1;
	int64_t s[4];
	return pn_attr_ints(n, "strides", s, 4) >= 1 && s[0] > 1 ? s[0] : 1;
}

int64_t pn_graph_stride(const pn_graph *g)
{
	enum { CAP = 1024 };
	int64_t *f = malloc(sizeof(int64_t) * (size_t)(g->n_values + 1));
	if (!f)
		return 1;
	for (int v = 0; v < g->n_values; v++)
		f[v] = 1;
	int64_t best = 1;
	for (int k = 0; k < g->n_nodes; k++) {
		const pn_node *n = &g->nodes[g->topo[k]];
		int64_t in = 1;
		for (int j = 0; j < n->n_in; j++)
			if (n->in[j] >= 0 && f[n->in[j]] > in)
				in = f[n->in[j]];
		int64_t out = in * node_stride(n);
		out = out > CAP ? CAP : out;
		for (int j = 0; j < n->n_out; j++)
			if (n->out[j] >= 0)
				f[n->out[j]] = out;
		best = out > best ? out : best;
	}
	free(f);
	return best;
}
