/*
 * test_model_records.c - a model record as the models table keeps it
 * (store/records.h), on a real LMDB store: its main graph and its weights'
 * long statistics are put apart, shared by the records that hold the same
 * bytes, and come back whole; the bare read leaves the statistics apart and
 * gives the same record key.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "passnet.pb-c.h"
#include "store/records.h"
#include "store/store.h"
#include "store/tables.h"
#include "scratch_dir.h"

#define CHANNELS 32   /* 32 floats of channel means: past PN_STATS_APART_MIN */

static const uint8_t KEY_A[16] = {0xa0, 1};
static const uint8_t KEY_B[16] = {0xb0, 2};

struct fx {
	char tmp[64];
	char db[96];
	char err[PN_ERRLEN];
	pn_store *s;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	if (!f || scratch_dir_make(f->tmp, sizeof f->tmp, "records"))
		return -1;
	snprintf(f->db, sizeof f->db, "%s/db", f->tmp);
	if (pn_store_open(&f->s, f->db, 0, f->err))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	pn_store_close(f->s);
	scratch_dir_remove(f->tmp);
	free(f);
	return 0;
}

/* The weights of one model: a conv weight with per-channel statistics
 * (kept apart), a scalar's whole-tensor statistics (short: kept inline) and
 * a weight whose bytes were never present (no statistics at all).  `names`
 * picks the values' names, `shift` moves the channel means. */
typedef struct weights {
	Passnet__WeightMeta w[3], *list[3];
	float mean[CHANNELS], std[CHANNELS];
	int64_t dims[4];
} weights;

static void make_weights(weights *ws, const char *const names[3], float shift)
{
	for (int i = 0; i < 3; i++) {
		passnet__weight_meta__init(&ws->w[i]);
		ws->w[i].name = (char *)names[i];
		ws->w[i].has_dtype = 1;
		ws->w[i].dtype = 1;
		ws->list[i] = &ws->w[i];
	}
	for (int c = 0; c < CHANNELS; c++) {
		ws->mean[c] = shift + 0.25f * (float)c;
		ws->std[c] = 1.0f + (float)c;
	}
	ws->dims[0] = CHANNELS, ws->dims[1] = 3, ws->dims[2] = 3, ws->dims[3] = 3;
	Passnet__WeightMeta *conv = &ws->w[0];
	conv->n_dims = 4;
	conv->dims = ws->dims;
	conv->has_has_stats = conv->has_mean = conv->has_std = conv->has_scale = 1;
	conv->has_stats = 1;
	conv->mean = 0.5;
	conv->std = 2.0;
	conv->scale = 1.5;
	conv->n_channel_mean = conv->n_channel_std = CHANNELS;
	conv->channel_mean = ws->mean;
	conv->channel_std = ws->std;
	Passnet__WeightMeta *scalar = &ws->w[1];
	scalar->has_has_stats = scalar->has_mean = scalar->has_min = scalar->has_max = 1;
	scalar->has_stats = 1;
	scalar->mean = scalar->min = scalar->max = -3.0;
}

/* A model record as ingest packs it: a main graph of one node, weights. */
static uint8_t *pack_model(const char *path, const weights *ws, size_t *len)
{
	Onnx__NodeProto node = ONNX__NODE_PROTO__INIT;
	char *in[] = {"x", "w"}, *out[] = {"y"};
	node.op_type = "Conv";
	node.n_input = 2;
	node.input = in;
	node.n_output = 1;
	node.output = out;
	Onnx__NodeProto *nodes[] = {&node};
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	g.name = "g";
	g.n_node = 1;
	g.node = nodes;
	Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
	mp.has_ir_version = 1;
	mp.ir_version = 8;
	mp.graph = &g;
	Passnet__Model m = PASSNET__MODEL__INIT;
	m.source = "zoo";
	m.path = (char *)path;
	m.graph = &mp;
	m.n_weights = 3;
	m.weights = (Passnet__WeightMeta **)ws->list;
	*len = passnet__model__get_packed_size(&m);
	uint8_t *buf = malloc(*len);
	assert_non_null(buf);
	passnet__model__pack(&m, buf);
	return buf;
}

static void put_record(struct fx *f, const uint8_t key[16], const uint8_t *rec, size_t len)
{
	pn_writer *w;
	if (pn_writer_open(f->s, &w, 0, f->err) || pn_model_record_put(w, key, rec, len, f->err) ||
	    pn_writer_close(w, f->err))
		fail_msg("put: %s", f->err);
}

static Passnet__Model *read_record(struct fx *f, const uint8_t key[16], int bare, pn_key *rk)
{
	pn_rtxn *t;
	void *rec;
	size_t len;
	assert_int_equal(pn_rtxn_begin(f->s, &t, f->err), 0);
	int rc = bare ? pn_model_record_copy_bare(t, key, &rec, &len)
		      : pn_model_record_copy(t, key, &rec, &len);
	assert_int_equal(rc, 0);
	pn_rtxn_end(t);
	*rk = pn_model_record_key(rec, len);
	Passnet__Model *m = passnet__model__unpack(NULL, len, rec);
	free(rec);
	assert_non_null(m);
	return m;
}

static int64_t count(struct fx *f, int table)
{
	pn_rtxn *t;
	assert_int_equal(pn_rtxn_begin(f->s, &t, f->err), 0);
	int64_t n = pn_count(t, table);
	pn_rtxn_end(t);
	return n;
}

/* The statistics read back equal what was put, field by field. */
static void assert_same_weight(const Passnet__WeightMeta *got, const Passnet__WeightMeta *want)
{
	assert_string_equal(got->name ? got->name : "", want->name ? want->name : "");
	assert_int_equal(got->n_dims, want->n_dims);
	assert_int_equal(got->has_stats, want->has_stats);
	assert_true(got->mean == want->mean && got->std == want->std);
	assert_true(got->min == want->min && got->max == want->max && got->scale == want->scale);
	assert_int_equal(got->n_channel_mean, want->n_channel_mean);
	assert_int_equal(got->n_channel_std, want->n_channel_std);
	if (want->n_channel_mean)
		assert_memory_equal(got->channel_mean, want->channel_mean,
				    sizeof(float) * want->n_channel_mean);
	if (want->n_channel_std)
		assert_memory_equal(got->channel_std, want->channel_std,
				    sizeof(float) * want->n_channel_std);
	assert_false(got->has_stats_key);
}

/* 1. The long statistics are apart, the short ones inline; the record read
 * back is the record put; the bare read keeps the key instead and has the
 * same record key.  (Not the key of the record as ingest packed it: the
 * graph's key is part of that of a stored record.) */
static void test_stats_apart_and_back(void **state)
{
	struct fx *f = *state;
	static const char *const names[3] = {"conv.w", "s", "absent"};
	weights ws;
	make_weights(&ws, names, 0.0f);
	size_t len;
	uint8_t *rec = pack_model("a.onnx", &ws, &len);
	put_record(f, KEY_A, rec, len);
	free(rec);
	assert_int_equal(count(f, PN_T_WEIGHT_STATS), 1);
	assert_int_equal(count(f, PN_T_GRAPHS), 1);

	/* as stored: the conv weight's statistics are a key */
	pn_rtxn *t;
	pn_bytes v;
	assert_int_equal(pn_rtxn_begin(f->s, &t, f->err), 0);
	assert_int_equal(pn_get(t, PN_T_MODELS, KEY_A, 16, &v), 0);
	Passnet__Model *raw = pn_models_unpack(v);
	pn_rtxn_end(t);
	assert_non_null(raw);
	assert_int_equal(raw->n_weights, 3);
	assert_true(raw->weights[0]->has_stats_key);
	assert_int_equal(raw->weights[0]->n_channel_mean, 0);
	assert_false(raw->weights[0]->has_mean);
	assert_int_equal(raw->weights[0]->n_dims, 4);
	assert_false(raw->weights[1]->has_stats_key);
	assert_true(raw->weights[1]->has_mean);
	pn_models_free(raw);

	pn_key want_key;
	Passnet__Model *m = read_record(f, KEY_A, 0, &want_key);
	assert_int_equal(m->n_weights, 3);
	for (int i = 0; i < 3; i++)
		assert_same_weight(m->weights[i], &ws.w[i]);
	assert_non_null(m->graph);
	assert_non_null(m->graph->graph);
	assert_int_equal(m->graph->graph->n_node, 1);
	passnet__model__free_unpacked(m, NULL);

	pn_key rk;
	m = read_record(f, KEY_A, 1, &rk);
	assert_memory_equal(rk.b, want_key.b, 16);
	assert_true(m->weights[0]->has_stats_key);
	assert_int_equal(m->weights[0]->n_channel_mean, 0);
	assert_int_equal(m->graph->graph->n_node, 1);
	passnet__model__free_unpacked(m, NULL);
}

/* 2. A re-export (other names, the same statistics) shares the stored
 * statistics and gets its own names back; other statistics are stored on
 * their own. */
static void test_stats_shared(void **state)
{
	struct fx *f = *state;
	static const char *const first[3] = {"conv.w", "s", "absent"};
	static const char *const second[3] = {"renamed_7", "renamed_8", "renamed_9"};
	weights wa, wb;
	make_weights(&wa, first, 0.0f);
	make_weights(&wb, second, 0.0f);
	size_t la, lb;
	uint8_t *ra = pack_model("a.onnx", &wa, &la), *rb = pack_model("b.onnx", &wb, &lb);
	put_record(f, KEY_A, ra, la);
	put_record(f, KEY_B, rb, lb);
	assert_int_equal(count(f, PN_T_WEIGHT_STATS), 1);
	pn_key rk;
	Passnet__Model *m = read_record(f, KEY_B, 0, &rk);
	for (int i = 0; i < 3; i++)
		assert_same_weight(m->weights[i], &wb.w[i]);
	passnet__model__free_unpacked(m, NULL);
	free(ra);
	free(rb);

	/* a fine-tune: other channel means, other statistics */
	weights wc;
	make_weights(&wc, first, 0.125f);
	size_t lc;
	uint8_t *rc = pack_model("c.onnx", &wc, &lc);
	put_record(f, KEY_B, rc, lc);
	free(rc);
	assert_int_equal(count(f, PN_T_WEIGHT_STATS), 2);
	m = read_record(f, KEY_B, 0, &rk);
	assert_same_weight(m->weights[0], &wc.w[0]);
	passnet__model__free_unpacked(m, NULL);
}

/* 3. Statistics that are not stored: the whole read says the record is
 * missing something (1), the bare read does not need them. */
static void test_stats_missing(void **state)
{
	struct fx *f = *state;
	static const char *const names[3] = {"conv.w", "s", "absent"};
	weights ws;
	make_weights(&ws, names, 0.0f);
	size_t len;
	uint8_t *rec = pack_model("a.onnx", &ws, &len);
	put_record(f, KEY_A, rec, len);
	pn_key sk = pn_key_of("", 0);
	{
		/* the conv weight's key, as the stored record holds it */
		pn_rtxn *t;
		assert_int_equal(pn_rtxn_begin(f->s, &t, f->err), 0);
		pn_bytes v;
		assert_int_equal(pn_get(t, PN_T_MODELS, KEY_A, 16, &v), 0);
		Passnet__Model *raw = pn_models_unpack(v);
		assert_non_null(raw);
		assert_int_equal(raw->weights[0]->stats_key.len, 16);
		memcpy(sk.b, raw->weights[0]->stats_key.data, 16);
		pn_models_free(raw);
		pn_rtxn_end(t);
	}
	pn_key before;
	Passnet__Model *m = read_record(f, KEY_A, 1, &before);
	passnet__model__free_unpacked(m, NULL);
	pn_writer *w;
	if (pn_writer_open(f->s, &w, 0, f->err) ||
	    pn_del(w, PN_T_WEIGHT_STATS, sk.b, 16, f->err) || pn_writer_close(w, f->err))
		fail_msg("del: %s", f->err);
	pn_rtxn *t;
	void *out;
	size_t n;
	assert_int_equal(pn_rtxn_begin(f->s, &t, f->err), 0);
	assert_int_equal(pn_model_record_copy(t, KEY_A, &out, &n), 1);
	assert_int_equal(pn_model_record_copy_bare(t, KEY_A, &out, &n), 0);
	pn_rtxn_end(t);
	assert_memory_equal(pn_model_record_key(out, n).b, before.b, 16);
	free(out);
	free(rec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_stats_apart_and_back),
		T(test_stats_shared),
		T(test_stats_missing),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
