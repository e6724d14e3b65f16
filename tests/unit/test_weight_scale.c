/*
 * test_weight_scale.c - weights regenerated on the real scale: per-channel
 * statistics (model/onnx_weights.c) drawn channel by channel
 * (pn_weight_regen), the correction scale, the statistics' round trip
 * through a record, and extract's check (extract/weight_scale.h) bringing a
 * model whose regenerated output is far off the real one within 10x.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "extract/weight_scale.h"
#include "model/onnx.h"
#include "runtime/feed.h"
#include "runtime/session.h"
#include "onnx_builder.h"

#define OUT_CH 8
#define IN_CH 4
#define PER (IN_CH * 9)

/* Channel c's scale: 1e-4 .. 1e3, seven decades across the tensor. */
static double chan_scale(int c)
{
	return pow(10.0, c - 4);
}

/* A conv weight [OUT_CH, IN_CH, 3, 3] whose channels differ by their
 * scales, as a folded batch-norm leaves them. */
static void folded_weight(float *w)
{
	uint32_t s = 26;
	for (int c = 0; c < OUT_CH; c++)
		for (int i = 0; i < PER; i++) {
			s = s * 1103515245u + 12345u;
			w[c * PER + i] = (float)(chan_scale(c) * (((s >> 8) % 2001) / 1000.0 - 1.0));
		}
}

static double chan_std(const float *w, int c, int per)
{
	double sum = 0, sq = 0;
	for (int i = 0; i < per; i++) {
		sum += w[c * per + i];
		sq += (double)w[c * per + i] * w[c * per + i];
	}
	double m = sum / per;
	return sqrt(fmax(sq / per - m * m, 0));
}

static pn_model *conv_model(const float *w)
{
	builder b;
	builder_init(&b);
	int64_t xd[] = {1, IN_CH, 8, 8}, wd[] = {OUT_CH, IN_CH, 3, 3};
	b.inputs[b.nin++] = vinfo(&b, "x", 4, xd);
	b.inits[b.ni++] = tensor_of(&b, "w", 4, wd, w);
	node(&b, "Conv", "x,w", "y");
	b.outputs[b.nout++] = vout(&b, "y");
	pn_model *m = load_with(&b, 1);
	pn_arena_free(&b.a);
	return m;
}

/* Each channel is regenerated at its own spread; drawn from the whole
 * tensor's statistics instead, the smallest channels are orders of
 * magnitude too large. */
static void test_channels_keep_their_scale(void **state)
{
	(void)state;
	float w[OUT_CH * PER];
	folded_weight(w);
	pn_model *m = conv_model(w);
	int v = value_named(m->graph, "w");
	pn_wmeta *meta = m->graph->values[v].meta;
	assert_non_null(meta);
	assert_int_equal(meta->n_channels, OUT_CH);
	assert_non_null(meta->ch_std);
	char err[PN_ERRLEN];
	pn_tensor *t = pn_weight_regen(m->graph, v, 1, err);
	assert_non_null(t);
	for (int c = 0; c < OUT_CH; c++) {
		double real = chan_std(w, c, PER), got = chan_std(t->data, c, PER);
		assert_true(fabs(meta->ch_std[c] - real) <= 1e-5 * real);
		/* a uniform draw of 36 elements: its spread within 35% */
		if (fabs(got - real) > 0.35 * real)
			fail_msg("channel %d: std %g regenerated, %g real", c, got, real);
	}
	pn_tensor_free(t);
	/* without the channels: the whole tensor's draw */
	meta->n_channels = 0;
	t = pn_weight_regen(m->graph, v, 1, err);
	assert_true(chan_std(t->data, 0, PER) > 1e4 * chan_std(w, 0, PER));
	pn_tensor_free(t);
	pn_model_free(m);
}

/* A [1,C,1,1] broadcast scale has its channels on axis 1; one element per
 * channel is regenerated exactly. */
static void test_broadcast_scale_channels(void **state)
{
	(void)state;
	builder b;
	builder_init(&b);
	int64_t xd[] = {1, 32, 2, 2}, sd[] = {1, 32, 1, 1};
	float s[32];
	for (int i = 0; i < 32; i++)
		s[i] = (float)pow(10.0, (i % 8) - 4) * (i % 2 ? -1.0f : 1.0f);
	b.inputs[b.nin++] = vinfo(&b, "x", 4, xd);
	b.inits[b.ni++] = tensor_of(&b, "s", 4, sd, s);
	node(&b, "Mul", "x,s", "y");
	b.outputs[b.nout++] = vout(&b, "y");
	pn_model *m = load_with(&b, 1);
	pn_arena_free(&b.a);
	int v = value_named(m->graph, "s");
	assert_int_equal(m->graph->values[v].meta->n_channels, 32);
	assert_null(m->graph->values[v].meta->ch_std);
	assert_int_equal(pn_weight_channel_axis(4, sd), 1);
	char err[PN_ERRLEN];
	pn_tensor *t = pn_weight_regen(m->graph, v, 7, err);
	assert_memory_equal(t->data, s, sizeof s);
	pn_tensor_free(t);
	pn_model_free(m);
}

/* The correction scale multiplies the draw (a negative one flips it). */
static void test_scale_multiplies(void **state)
{
	(void)state;
	float w[OUT_CH * PER];
	folded_weight(w);
	pn_model *m = conv_model(w);
	int v = value_named(m->graph, "w");
	char err[PN_ERRLEN];
	pn_tensor *plain = pn_weight_regen(m->graph, v, 3, err);
	m->graph->values[v].meta->scale = -2;
	pn_tensor *scaled = pn_weight_regen(m->graph, v, 3, err);
	for (int i = 0; i < OUT_CH * PER; i++)
		assert_true(((float *)scaled->data)[i] == -2 * ((float *)plain->data)[i]);
	pn_tensor_free(plain);
	pn_tensor_free(scaled);
	pn_model_free(m);
}

/* What a record keeps comes back as the same statistics. */
static void test_record_round_trip(void **state)
{
	(void)state;
	float mean[3] = {1, -2, 3}, std[3] = {0.5f, 0.25f, 0};
	Passnet__WeightMeta wm;
	passnet__weight_meta__init(&wm);
	wm.has_has_stats = wm.has_stats = 1;
	wm.has_mean = wm.has_std = wm.has_min = wm.has_max = 1;
	wm.mean = 0.5, wm.std = 2, wm.min = -3, wm.max = 4;
	wm.n_channel_mean = wm.n_channel_std = 3;
	wm.channel_mean = mean;
	wm.channel_std = std;
	wm.has_scale = 1;
	wm.scale = 0.125;
	pn_wmeta w;
	pn_weight_meta_from_record(&wm, &w);
	assert_true(w.has_stats && w.mean == 0.5 && w.std == 2 && w.min == -3 && w.max == 4);
	assert_int_equal(w.n_channels, 3);
	assert_true(w.ch_mean[1] == -2 && w.ch_std[0] == 0.5f && w.scale == 0.125);
	/* a weight without statistics keeps its (blind) scale */
	wm.has_stats = 0;
	pn_weight_meta_from_record(&wm, &w);
	assert_false(w.has_stats);
	assert_true(w.scale == 0.125);
	/* channel counts that disagree are not trusted */
	wm.has_stats = 1;
	wm.n_channel_std = 2;
	pn_weight_meta_from_record(&wm, &w);
	assert_int_equal(w.n_channels, 0);
}

/* --- extract's check ------------------------------------------------------- */

static double out_amp(const pn_graph *g, pn_tensor *const *in)
{
	pn_session *s;
	char err[PN_ERRLEN];
	pn_exec_opts o = {.seed = 1, .threads = 1};
	pn_tensor *out[1] = {NULL};
	if (pn_session_new(g, &o, &s, err) || pn_session_run(s, in, 1, out, err))
		fail_msg("run: %s", err);
	double a = 0;
	for (int64_t i = 0; i < out[0]->numel; i++)
		a = fmax(a, fabs(((float *)out[0]->data)[i]));
	pn_tensor_free(out[0]);
	pn_session_free(s);
	return a;
}

/* Conv, Relu, Conv where the second undoes the first's channel scales along
 * its input channels: per-output-channel statistics cannot keep that, so
 * the regenerated output is far off until the check rescales. */
static void test_check_rescales(void **state)
{
	(void)state;
	builder b;
	builder_init(&b);
	int64_t xd[] = {1, IN_CH, 8, 8}, w1d[] = {OUT_CH, IN_CH, 3, 3}, w2d[] = {4, OUT_CH, 1, 1};
	float w1[OUT_CH * PER], w2[4 * OUT_CH];
	folded_weight(w1);
	for (int o = 0; o < 4; o++)
		for (int c = 0; c < OUT_CH; c++)
			w2[o * OUT_CH + c] = (float)(((c + o) % 3 ? 0.5 : -0.3) / chan_scale(c));
	b.inputs[b.nin++] = vinfo(&b, "x", 4, xd);
	b.inits[b.ni++] = tensor_of(&b, "w1", 4, w1d, w1);
	b.inits[b.ni++] = tensor_of(&b, "w2", 4, w2d, w2);
	node(&b, "Conv", "x,w1", "c1");
	node(&b, "Relu", "c1", "r1");
	node(&b, "Conv", "r1,w2", "y");
	b.outputs[b.nout++] = vout(&b, "y");
	pn_model *real = load_with(&b, 0);

	/* the model as extract holds it: decoded with statistics from the proto
	 * it still has the bytes of */
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT, *osp = &os;
	os.has_version = 1;
	os.version = 17;
	g.name = "g";
	g.n_node = b.nn, g.node = b.nodes;
	g.n_initializer = b.ni, g.initializer = b.inits;
	g.n_input = b.nin, g.input = b.inputs;
	g.n_output = b.nout, g.output = b.outputs;
	mp.has_ir_version = 1, mp.ir_version = 8;
	mp.n_opset_import = 1, mp.opset_import = &osp;
	mp.graph = &g;
	pn_model *m = pn_model_new();
	char err[PN_ERRLEN] = "";
	pn_decode_opts o = {.weights_as_meta = 1};
	if (pn_model_from_proto(&mp, &o, m, err))
		fail_msg("decode: %s", err);

	/* the seeded inputs the check runs on (those of the binding's run) */
	pn_dimbind none = {0};
	pn_feed f;
	if (pn_feed_prepare(m, NULL, &none, 1, &f, err))
		fail_msg("feed: %s", err);
	pn_tensor *x = f.v[0];
	double want = out_amp(real->graph, &x);
	double before = out_amp(m->graph, &x);
	assert_true(before > 10 * want || before < want / 10);

	pn_weight_check wc;
	if (pn_weight_scale_check(m, &mp, &none, NULL, NULL, &m->arena, &wc, err))
		fail_msg("check: %s", err);
	print_message("check: %s\n", wc.how);
	assert_true(!strncmp(wc.how, "outputs within 10x of the real run: yes after", 45));
	assert_int_equal(wc.n_absent, 0);
	assert_int_equal(wc.n_regen, 1);
	assert_string_equal(wc.regen[0]->name, "y");
	/* x, c1, r1, y: every float value of the real run */
	assert_int_equal(wc.n_real, 4);
	double after = out_amp(m->graph, &x);
	print_message("real %g, regenerated %g before, %g after\n", want, before, after);
	assert_true(after <= 10 * want && after >= want / 10);
	pn_feed_free(&f);
	pn_model_free(m);
	pn_model_free(real);
	pn_arena_free(&b.a);
}

/* --- statistics in one pass against the plain three ------------------------------- */

/* The definition, pass by pass: min and max, the whole tensor's moments,
 * each of the first `nc` channels' moments (doubles, in element order). */
static void stats_by_definition(const pn_tensor *t, int64_t nc, int64_t per, double out[4],
				double *ch_mean, double *ch_std)
{
	double lo = 0, hi = 0, sum = 0, sq = 0;
	for (int64_t i = 0; i < t->numel; i++) {
		double x = pn_tensor_get_f64(t, i);
		lo = i == 0 || x < lo ? x : lo;
		hi = i == 0 || x > hi ? x : hi;
	}
	for (int64_t i = 0; i < t->numel; i++) {
		double x = pn_tensor_get_f64(t, i);
		sum += x;
		sq += x * x;
	}
	double mean = sum / (double)t->numel, var = sq / (double)t->numel - mean * mean;
	out[0] = lo, out[1] = hi, out[2] = mean, out[3] = var > 0 ? sqrt(var) : 0;
	for (int64_t c = 0; c < nc; c++) {
		double cs = 0, cq = 0;
		for (int64_t i = c * per; i < (c + 1) * per; i++) {
			double x = pn_tensor_get_f64(t, i);
			cs += x;
			cq += x * x;
		}
		double m = cs / (double)per, v = cq / (double)per - m * m;
		ch_mean[c] = m;
		ch_std[c] = v > 0 ? sqrt(v) : 0;
	}
}

/* One tensor of dtype (float32 or float16) and dims, values of a wide
 * range drawn from `seed`, and `nan_at` >= 0 a NaN there. */
static void check_stats(int dtype, int rank, const int64_t *dims, unsigned seed, int64_t nan_at)
{
	pn_tensor t = {.dtype = dtype, .rank = rank, .numel = 1};
	for (int d = 0; d < rank; d++) {
		t.dims[d] = dims[d];
		t.numel *= dims[d];
	}
	float *f = malloc(sizeof(float) * (size_t)t.numel);
	uint16_t *h = malloc(sizeof(uint16_t) * (size_t)t.numel);
	assert_true(f && h);
	srand(seed);
	for (int64_t i = 0; i < t.numel; i++) {
		f[i] = (float)((rand() / (double)RAND_MAX - 0.3) * pow(10, rand() % 7 - 3));
		h[i] = (uint16_t)(0x3000 + rand() % 0x1800);   /* float16 of about 0.1 to 4 */
	}
	if (nan_at >= 0)
		f[nan_at] = NAN;
	t.data = dtype == PN_FLOAT ? (void *)f : (void *)h;
	int a = pn_weight_channel_axis(rank, dims);
	int64_t nc = a < 0 ? 0 : dims[a] < PN_WEIGHT_CHANNELS_MAX ? dims[a] : PN_WEIGHT_CHANNELS_MAX;
	int64_t per = a < 0 ? 0 : t.numel / dims[a];
	double want[4];
	double *cm = calloc((size_t)nc + 1, sizeof(double)), *cs = calloc((size_t)nc + 1, sizeof(double));
	assert_true(cm && cs);
	stats_by_definition(&t, nc, per, want, cm, cs);

	pn_arena ar;
	pn_arena_init(&ar, 0);
	pn_wmeta w;
	assert_int_equal(pn_weight_stats(&t, &ar, &w), 0);
	/* bit for bit: the same sums in the same order (NaN compares by bits) */
	assert_memory_equal(&w.min, &want[0], sizeof(double));
	assert_memory_equal(&w.max, &want[1], sizeof(double));
	assert_memory_equal(&w.mean, &want[2], sizeof(double));
	assert_memory_equal(&w.std, &want[3], sizeof(double));
	assert_int_equal(w.n_channels, nc > 1 ? nc : 0);
	for (int64_t c = 0; nc > 1 && c < nc; c++) {
		float m = (float)cm[c], sd = (float)cs[c];
		assert_memory_equal(&w.ch_mean[c], &m, sizeof(float));
		if (per > 1)
			assert_memory_equal(&w.ch_std[c], &sd, sizeof(float));
	}
	assert_true(per > 1 || !w.ch_std);
	pn_arena_free(&ar);
	free(cm);
	free(cs);
	free(f);
	free(h);
}

static void test_stats_one_pass(void **state)
{
	(void)state;
	check_stats(PN_FLOAT, 4, (int64_t[]){16, 3, 3, 3}, 1, -1);     /* a conv's weight */
	check_stats(PN_FLOAT, 4, (int64_t[]){1, 24, 1, 1}, 2, -1);     /* a broadcast scale */
	check_stats(PN_FLOAT, 1, (int64_t[]){64}, 3, -1);              /* a bias: no std */
	check_stats(PN_FLOAT, 2, (int64_t[]){4100, 3}, 4, -1);         /* rows past the cap */
	check_stats(PN_FLOAT, 2, (int64_t[]){7, 5}, 5, 0);             /* NaN first */
	check_stats(PN_FLOAT, 2, (int64_t[]){7, 5}, 6, 17);            /* NaN inside */
	check_stats(PN_FLOAT16, 3, (int64_t[]){1, 1, 9}, 7, -1);       /* the generic path */
	check_stats(PN_FLOAT16, 2, (int64_t[]){5000, 2}, 8, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_channels_keep_their_scale),
		cmocka_unit_test(test_broadcast_scale_channels),
		cmocka_unit_test(test_scale_multiplies),
		cmocka_unit_test(test_record_round_trip),
		cmocka_unit_test(test_stats_one_pass),
		cmocka_unit_test(test_check_rescales),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
