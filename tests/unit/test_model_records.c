/*
 * test_model_records.c - a model record as the models table keeps it
 * (store/records.h), on a real LMDB store: the main graph is kept apart,
 * once for the models that share it, packed; the record read back holds it
 * again, and a graph that does not unpack reads as missing.
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

#define NODES 200

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

/* A record as ingest packs it: a chain of NODES Relu nodes named like an
 * exporter names them, from `path`.  *graph_len: the graph's own bytes. */
static uint8_t *pack_model(const char *path, size_t *len, size_t *graph_len)
{
	static char names[NODES + 1][64];
	static char *ins[NODES], *outs[NODES];
	Onnx__NodeProto node[NODES], *nodes[NODES];
	for (int i = 0; i <= NODES; i++)
		snprintf(names[i], sizeof names[i], "/encoder/layer.%d/act/Relu_output_0", i);
	for (int i = 0; i < NODES; i++) {
		onnx__node_proto__init(&node[i]);
		node[i].op_type = "Relu";
		ins[i] = names[i];
		outs[i] = names[i + 1];
		node[i].n_input = node[i].n_output = 1;
		node[i].input = &ins[i];
		node[i].output = &outs[i];
		nodes[i] = &node[i];
	}
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	g.name = "main";
	g.n_node = NODES;
	g.node = nodes;
	*graph_len = onnx__graph_proto__get_packed_size(&g);
	Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
	mp.has_ir_version = 1;
	mp.ir_version = 8;
	mp.graph = &g;
	Passnet__Model m = PASSNET__MODEL__INIT;
	m.source = "zoo";
	m.path = (char *)path;
	m.graph = &mp;
	*len = passnet__model__get_packed_size(&m);
	uint8_t *buf = malloc(*len);
	assert_non_null(buf);
	passnet__model__pack(&m, buf);
	return buf;
}

static void put_model(struct fx *f, const uint8_t key[16], const char *path, size_t *graph_len)
{
	size_t len;
	uint8_t *rec = pack_model(path, &len, graph_len);
	pn_writer *w;
	if (pn_writer_open(f->s, &w, 0, f->err) || pn_model_record_put(w, key, rec, len, f->err) ||
	    pn_writer_close(w, f->err))
		fail_msg("put: %s", f->err);
	free(rec);
}

/* The one graphs-table value (its key in *gk). */
static pn_bytes the_graph(pn_rtxn *t, uint8_t gk[16])
{
	pn_bytes v;
	assert_int_equal(pn_get(t, PN_T_MODELS, KEY_A, 16, &v), 0);
	Passnet__Model *raw = pn_models_unpack(v);
	assert_non_null(raw);
	assert_null(raw->graph->graph);   /* kept apart */
	assert_int_equal(raw->graph_key.len, 16);
	memcpy(gk, raw->graph_key.data, 16);
	pn_models_free(raw);
	assert_int_equal(pn_get(t, PN_T_GRAPHS, gk, 16, &v), 0);
	return v;
}

/* 1. Two models of one graph: one graphs value, packed (a zstd frame,
 * a fraction of the graph), and each record read back holds the graph. */
static void test_graph_apart_packed(void **state)
{
	struct fx *f = *state;
	size_t glen;
	put_model(f, KEY_A, "a.onnx", &glen);
	put_model(f, KEY_B, "b.onnx", &glen);
	pn_rtxn *t;
	assert_int_equal(pn_rtxn_begin(f->s, &t, f->err), 0);
	assert_int_equal(pn_count(t, PN_T_GRAPHS), 1);
	uint8_t gk[16];
	pn_bytes v = the_graph(t, gk);
	static const uint8_t magic[4] = {0x28, 0xb5, 0x2f, 0xfd};
	assert_true(v.len >= 4 && !memcmp(v.data, magic, 4));
	assert_true(v.len * 4 < glen);
	pn_buf g = {0};
	assert_int_equal(pn_graph_unpack(v, &g, f->err), 0);
	assert_int_equal(g.n, glen);
	assert_memory_equal(pn_key_of(g.p, g.n).b, gk, 16);
	pn_buf_free(&g);
	for (int i = 0; i < 2; i++) {
		void *rec;
		size_t len;
		assert_int_equal(pn_model_record_copy(t, i ? KEY_B : KEY_A, &rec, &len), 0);
		Passnet__Model *m = passnet__model__unpack(NULL, len, rec);
		free(rec);
		assert_non_null(m);
		assert_string_equal(m->path, i ? "b.onnx" : "a.onnx");
		assert_non_null(m->graph->graph);
		assert_int_equal(m->graph->graph->n_node, NODES);
		assert_string_equal(m->graph->graph->node[NODES - 1]->output[0],
				    "/encoder/layer.200/act/Relu_output_0");
		passnet__model__free_unpacked(m, NULL);
	}
	pn_rtxn_end(t);
}

/* 2. A graphs value that does not unpack: the record reads as missing (1),
 * pn_graph_unpack says why. */
static void test_graph_corrupt(void **state)
{
	struct fx *f = *state;
	size_t glen;
	put_model(f, KEY_A, "a.onnx", &glen);
	pn_rtxn *t;
	assert_int_equal(pn_rtxn_begin(f->s, &t, f->err), 0);
	uint8_t gk[16];
	the_graph(t, gk);
	pn_rtxn_end(t);
	/* the graph's own bytes, unpacked, where a frame should be */
	pn_writer *w;
	if (pn_writer_open(f->s, &w, 0, f->err) ||
	    pn_put(w, PN_T_GRAPHS, gk, 16, "\x0a\x04main", 6, f->err) || pn_writer_close(w, f->err))
		fail_msg("put: %s", f->err);
	assert_int_equal(pn_rtxn_begin(f->s, &t, f->err), 0);
	void *rec;
	size_t len;
	assert_int_equal(pn_model_record_copy(t, KEY_A, &rec, &len), 1);
	pn_bytes v = the_graph(t, gk);
	pn_buf g = {0};
	assert_int_equal(pn_graph_unpack(v, &g, f->err), 1);
	assert_non_null(strstr(f->err, "zstd"));
	pn_buf_free(&g);
	pn_rtxn_end(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_graph_apart_packed),
		T(test_graph_corrupt),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
