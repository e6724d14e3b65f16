/*
 * test_check_form.c - the file key of a blind check (extract/check_form.h,
 * pn_check_form_file_key): the shortcut that lets a copy of a file take
 * its check without the canonical labelling must never join two models
 * whose check forms differ.
 *
 *   1. A fine-tune (a present weight moved below the coarse statistics)
 *      has the file key and the check form of the model.
 *   2. A renamed value gives another file key, still one check form.
 *   3. What the check reads gives another file key and another form: a
 *      present weight's coarse statistics, an attribute, an input's type.
 *   4. A model with every weight present has no file key (nor a form).
 *   5. Its run form (pn_run_form_make, for runs that draw every weight)
 *      exists, keyed by its tag, and a renamed copy has that key too.
 *   6. An integer input's name decides what its draw holds (a "mask" holds
 *      0 and 1, token ids index the table): the forms of a model and of
 *      its copy with the input named as a mask have two keys; a copy with
 *      another name of the same meaning has the model's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "extract/check_form.h"
#include "onnx_builder.h"

/* x -> Conv(w, absent) -> Mul(k, present, 72 floats times `k_scale`) ->
 * LeakyRelu(alpha) -> y; `mid` names the Conv's output. */
static pn_model *net(const char *mid, float k_scale, float alpha, int64_t side, int absent)
{
	builder b;
	builder_init(&b);
	int64_t xd[] = {1, 2, side, side}, wd[] = {72, 2, 3, 3}, kd[] = {1, 72, 1, 1};
	float k[72];
	for (int i = 0; i < 72; i++)
		k[i] = k_scale * (0.25f + 0.01f * (float)i);
	b.inputs[b.nin++] = vinfo(&b, "x", 4, xd);
	b.inits[b.ni++] = tensor(&b, "w", 4, wd);
	b.inits[b.ni++] = tensor_of(&b, "k", 4, kd, k);
	node(&b, "Conv", "x,w", mid);
	node(&b, "Mul", pn_arena_printf(&b.a, "%s,k", mid), "m");
	attr_float(&b, node(&b, "LeakyRelu", "m", "y"), "alpha", alpha);
	b.outputs[b.nout++] = vout(&b, "y");
	pn_model *m = load_with(&b, 1);
	pn_arena_free(&b.a);
	pn_wmeta *w = m->graph->values[value_named(m->graph, "w")].meta;
	assert_non_null(w);
	if (absent)
		w->has_stats = 0;   /* as when its weight file is missing */
	return m;
}

typedef struct keys {
	int file, form;       /* pn_check_form_file_key's and _make's returns */
	pn_key file_key, form_key;
} keys;

static keys keys_of(const pn_model *m)
{
	keys k = {0};
	pn_infer_result r;
	char err[PN_ERRLEN];
	if (pn_infer_graph(m->graph, NULL, NULL, &r, err))
		fail_msg("infer: %s", err);
	k.file = pn_check_form_file_key(m, &r, NULL, &k.file_key);
	pn_check_form f;
	k.form = pn_check_form_make(m, &r, NULL, &f);
	if (k.form == 1) {
		k.form_key = f.key;
		pn_check_form_free(&f);
	}
	pn_infer_result_free(&r);
	return k;
}

static int same(const pn_key *a, const pn_key *b)
{
	return !memcmp(a->b, b->b, sizeof a->b);
}

static keys of_net(const char *mid, float k_scale, float alpha, int64_t side)
{
	pn_model *m = net(mid, k_scale, alpha, side, 1);
	keys k = keys_of(m);
	pn_model_free(m);
	assert_int_equal(k.file, 1);
	assert_int_equal(k.form, 1);
	return k;
}

static void test_1_fine_tune(void **state)
{
	(void)state;
	keys a = of_net("c", 1.0f, 0.1f, 6), b = of_net("c", 1.0f + 1e-6f, 0.1f, 6);
	assert_true(same(&a.file_key, &b.file_key));
	assert_true(same(&a.form_key, &b.form_key));
}

static void test_2_renamed(void **state)
{
	(void)state;
	keys a = of_net("c", 1.0f, 0.1f, 6), b = of_net("renamed", 1.0f, 0.1f, 6);
	assert_false(same(&a.file_key, &b.file_key));
	assert_true(same(&a.form_key, &b.form_key));
}

static void test_3_what_the_check_reads(void **state)
{
	(void)state;
	keys a = of_net("c", 1.0f, 0.1f, 6);
	keys other[] = {of_net("c", 2.0f, 0.1f, 6),    /* coarse statistics */
			of_net("c", 1.0f, 0.2f, 6),    /* an attribute */
			of_net("c", 1.0f, 0.1f, 8)};   /* an input's type */
	for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
		assert_false(same(&a.file_key, &other[i].file_key));
		assert_false(same(&a.form_key, &other[i].form_key));
	}
}

static void test_4_nothing_absent(void **state)
{
	(void)state;
	pn_model *m = net("c", 1.0f, 0.1f, 6, 0);
	keys k = keys_of(m);
	assert_int_equal(k.file, 0);
	assert_int_equal(k.form, 0);
	pn_model_free(m);
}

static pn_key run_form_key(const pn_model *m, const char *tag)
{
	pn_infer_result r;
	char err[PN_ERRLEN];
	if (pn_infer_graph(m->graph, NULL, NULL, &r, err))
		fail_msg("infer: %s", err);
	pn_check_form f;
	assert_int_equal(pn_run_form_make(m, &r, NULL, tag, &f), 1);
	pn_key k = f.key;
	pn_check_form_free(&f);
	pn_infer_result_free(&r);
	return k;
}

static void test_5_run_form(void **state)
{
	(void)state;
	pn_model *m = net("c", 1.0f, 0.1f, 6, 0), *r = net("renamed", 1.0f, 0.1f, 6, 0);
	pn_key a = run_form_key(m, "one"), b = run_form_key(m, "two"), c = run_form_key(r, "one");
	assert_false(same(&a, &b));
	assert_true(same(&a, &c));
	pn_model_free(m);
	pn_model_free(r);
}

/* ids (int64 [1, 4], named `ids`) -> Gather(emb [10, 8]) -> y. */
static pn_model *lookup(const char *ids)
{
	builder b;
	builder_init(&b);
	int64_t xd[] = {1, 4}, ed[] = {10, 8};
	b.inputs[b.nin++] = vinfo_t(&b, ids, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 2, xd);
	b.inits[b.ni++] = tensor(&b, "emb", 2, ed);
	node(&b, "Gather", pn_arena_printf(&b.a, "emb,%s", ids), "y");
	b.outputs[b.nout++] = vout(&b, "y");
	pn_model *m = load_with(&b, 1);
	pn_arena_free(&b.a);
	return m;
}

static void test_6_input_meaning(void **state)
{
	(void)state;
	pn_model *ids = lookup("ids"), *tokens = lookup("tokens"), *mask = lookup("mask");
	pn_key a = run_form_key(ids, "t"), b = run_form_key(tokens, "t"), c = run_form_key(mask, "t");
	assert_true(same(&a, &b));
	assert_false(same(&a, &c));
	pn_model_free(ids);
	pn_model_free(tokens);
	pn_model_free(mask);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_1_fine_tune),
		cmocka_unit_test(test_2_renamed),
		cmocka_unit_test(test_3_what_the_check_reads),
		cmocka_unit_test(test_4_nothing_absent),
		cmocka_unit_test(test_5_run_form),
		cmocka_unit_test(test_6_input_meaning),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
