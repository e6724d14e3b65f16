/*
 * test_onnx_external.c - model/onnx_external.c: a tensor whose bytes live in
 * a file beside the model gets them inline, and then no longer claims to be
 * external, so a proto written from the resolved one (the store's copy,
 * `run --write-model`, export-onnx) loads in other runtimes without that
 * file; a missing file leaves the tensor external, without bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "common/err.h"
#include "model/onnx.h"

static const uint8_t weights[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };

/* A folder holding only "w.bin" (the 16 bytes above). */
static int read_file(void *ud, const char *rel, void **data, size_t *len, char *err)
{
	(void)ud;
	(void)err;
	if (strcmp(rel, "w.bin"))
		return 1;
	*data = malloc(sizeof weights);
	memcpy(*data, weights, sizeof weights);
	*len = sizeof weights;
	return 0;
}

static Onnx__StringStringEntryProto *entry(pn_arena *a, const char *k, const char *v)
{
	Onnx__StringStringEntryProto *e = pn_arena_alloc(a, sizeof(*e));
	onnx__string_string_entry_proto__init(e);
	e->key = (char *)k;
	e->value = (char *)v;
	return e;
}

/* A graph with one uint8 initializer [8] at LOCATION, offset 4, length 8. */
static Onnx__ModelProto *model_with_external(pn_arena *a, const char *location)
{
	Onnx__TensorProto *t = pn_arena_alloc(a, sizeof(*t));
	onnx__tensor_proto__init(t);
	t->name = "w";
	t->has_data_type = 1;
	t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__UINT8;
	t->n_dims = 1;
	t->dims = pn_arena_alloc(a, sizeof(int64_t));
	t->dims[0] = 8;
	t->has_data_location = 1;
	t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	t->n_external_data = 3;
	t->external_data = pn_arena_alloc(a, 3 * sizeof(void *));
	t->external_data[0] = entry(a, "location", location);
	t->external_data[1] = entry(a, "offset", "4");
	t->external_data[2] = entry(a, "length", "8");
	Onnx__GraphProto *g = pn_arena_alloc(a, sizeof(*g));
	onnx__graph_proto__init(g);
	g->n_initializer = 1;
	g->initializer = pn_arena_alloc(a, sizeof(void *));
	g->initializer[0] = t;
	Onnx__ModelProto *mp = pn_arena_alloc(a, sizeof(*mp));
	onnx__model_proto__init(mp);
	mp->has_ir_version = 1;
	mp->ir_version = 8;
	mp->graph = g;
	return mp;
}

/* Packs and unpacks the model, as a file written from it would be read. */
static Onnx__TensorProto *written_initializer(Onnx__ModelProto *mp, pn_arena *a)
{
	size_t n = protobuf_c_message_get_packed_size(&mp->base);
	uint8_t *buf = pn_arena_alloc(a, n ? n : 1);
	protobuf_c_message_pack(&mp->base, buf);
	char err[PN_ERRLEN];
	Onnx__ModelProto *back = pn_onnx_unpack(buf, n, a, err);
	if (!back)
		fail_msg("%s", err);
	assert_int_equal(back->graph->n_initializer, 1);
	return back->graph->initializer[0];
}

/* 1. Resolved bytes are inline and the tensor is no longer external. */
static void test_resolved_is_inline(void **state)
{
	(void)state;
	pn_model m;
	memset(&m, 0, sizeof m);
	pn_arena_init(&m.arena, 0);
	Onnx__ModelProto *mp = model_with_external(&m.arena, "w.bin");
	pn_fileio io = { .read = read_file };
	char err[PN_ERRLEN] = "";
	assert_int_equal(pn_onnx_resolve_external(mp, &io, &m, err), 0);
	Onnx__TensorProto *t = written_initializer(mp, &m.arena);
	assert_true(t->has_raw_data);
	assert_int_equal(t->raw_data.len, 8);
	assert_memory_equal(t->raw_data.data, weights + 4, 8);
	assert_false(t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL);
	assert_int_equal(t->n_external_data, 0);
	pn_arena_free(&m.arena);
}

/* 2. A missing file leaves the tensor external, with no bytes (counted). */
static void test_missing_stays_external(void **state)
{
	(void)state;
	pn_model m;
	memset(&m, 0, sizeof m);
	pn_arena_init(&m.arena, 0);
	Onnx__ModelProto *mp = model_with_external(&m.arena, "absent.bin");
	pn_fileio io = { .read = read_file };
	char err[PN_ERRLEN] = "";
	assert_int_equal(pn_onnx_resolve_external(mp, &io, &m, err), 1);
	Onnx__TensorProto *t = mp->graph->initializer[0];
	assert_false(t->has_raw_data);
	assert_true(t->has_data_location);
	assert_int_equal(t->data_location, ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL);
	assert_int_equal(t->n_external_data, 3);
	assert_int_equal(m.n_warnings, 1);
	pn_arena_free(&m.arena);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolved_is_inline),
		cmocka_unit_test(test_missing_stays_external),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
