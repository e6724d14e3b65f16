/*
 * test_value_keys.c - the keys of a blind check's values by what computes
 * them (extract/value_keys.h), and the book that answers for them.
 *
 *   1. A value computed alike in two models (the same node on the same
 *      drawn input and weight) has one key, whatever the models do after
 *      it and whatever the value is called.
 *   2. What decides the bytes changes the key: another input, another
 *      weight stream, another correction scale, another attribute.
 *   3. A node the session seeds by its name (a random op) is unknown, and
 *      so is all it feeds; what comes before it stays known.
 *   4. The book keeps the first observation of a key and answers for it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "extract/value_keys.h"
#include "onnx_builder.h"

/* x -> Conv(w) -> LeakyRelu(alpha) -> relu, then a tail op by name
 * ("Sigmoid", "Tanh", or "RandomNormalLike" then Add) into output "y". */
static pn_model *chain(const char *relu, const char *tail, float alpha)
{
	builder b;
	builder_init(&b);
	int64_t xd[] = {1, 2, 6, 6}, wd[] = {4, 2, 3, 3};
	b.inputs[b.nin++] = vinfo(&b, "x", 4, xd);
	b.inits[b.ni++] = tensor(&b, "w", 4, wd);   /* 72 floats: kept as statistics */
	node(&b, "Conv", "x,w", "c");
	attr_float(&b, node(&b, "LeakyRelu", "c", relu), "alpha", alpha);
	if (!strcmp(tail, "RandomNormalLike")) {
		node(&b, "RandomNormalLike", relu, "noise");
		node(&b, "Add", pn_arena_printf(&b.a, "%s,noise", relu), "y");
	} else {
		node(&b, tail, relu, "y");
	}
	b.outputs[b.nout++] = vout(&b, "y");
	pn_model *m = load_with(&b, 1);
	pn_arena_free(&b.a);
	return m;
}

static pn_tensor *input(float base)
{
	int64_t d[] = {1, 2, 6, 6};
	pn_tensor *t = pn_tensor_new(PN_FLOAT, 4, d);
	assert_non_null(t);
	for (int64_t i = 0; i < t->numel; i++)
		((float *)t->data)[i] = base + 0.01f * (float)i;
	return t;
}

/* keys of m's values on input x, into a fresh array */
static pn_key *keys_of(const pn_model *m, pn_tensor *x)
{
	pn_key *k = calloc((size_t)m->graph->n_values + 1, sizeof(pn_key));
	assert_non_null(k);
	assert_int_equal(pn_value_keys(m->graph, &x, 1, k), 0);
	return k;
}

static int same(const pn_key *a, const pn_key *b)
{
	return !memcmp(a->b, b->b, sizeof a->b);
}

static void test_alike_values_one_key(void **state)
{
	(void)state;
	pn_model *a = chain("r", "Sigmoid", 0.1f), *b = chain("other_name", "Tanh", 0.1f);
	pn_tensor *x = input(0.1f);
	pn_key *ka = keys_of(a, x), *kb = keys_of(b, x);
	int ra = value_named(a->graph, "r"), rb = value_named(b->graph, "other_name");
	assert_true(pn_value_key_known(&ka[ra]));
	assert_true(same(&ka[ra], &kb[rb]));            /* 1: the Relu's output */
	int ya = value_named(a->graph, "y"), yb = value_named(b->graph, "y");
	assert_true(pn_value_key_known(&ka[ya]));
	assert_false(same(&ka[ya], &kb[yb]));           /* Sigmoid against Tanh */
	free(ka);
	free(kb);
	pn_tensor_free(x);
	pn_model_free(a);
	pn_model_free(b);
}

static void test_what_decides_the_bytes(void **state)
{
	(void)state;
	pn_model *m = chain("r", "Sigmoid", 0.1f);
	pn_graph *g = m->graph;
	int r = value_named(g, "r"), w = value_named(g, "w");
	assert_non_null(g->values[w].meta);   /* drawn, not read */
	pn_tensor *x = input(0.1f), *x2 = input(0.2f);
	pn_key *k0 = keys_of(m, x), *k1 = keys_of(m, x2);
	assert_false(same(&k0[r], &k1[r]));             /* 2: another input */

	const char *draw[64] = {0};
	assert_true(g->n_values < 64);
	draw[w] = "another stream";
	g->draw_name = draw;
	pn_key *k2 = keys_of(m, x);
	g->draw_name = NULL;
	assert_false(same(&k0[r], &k2[r]));             /* another weight stream */

	double scale = g->values[w].meta->scale;
	g->values[w].meta->scale = 2;
	pn_key *k3 = keys_of(m, x);
	g->values[w].meta->scale = scale;
	assert_false(same(&k0[r], &k3[r]));             /* another correction scale */

	pn_model *m2 = chain("r", "Sigmoid", 0.2f);
	pn_key *k4 = keys_of(m2, x);
	assert_false(same(&k0[r], &k4[value_named(m2->graph, "r")]));   /* another attribute */
	free(k0);
	free(k1);
	free(k2);
	free(k3);
	free(k4);
	pn_tensor_free(x);
	pn_tensor_free(x2);
	pn_model_free(m);
	pn_model_free(m2);
}

static void test_seeded_node_unknown(void **state)
{
	(void)state;
	pn_model *m = chain("r", "RandomNormalLike", 0.1f);
	pn_tensor *x = input(0.1f);
	pn_key *k = keys_of(m, x);
	const pn_graph *g = m->graph;
	assert_true(pn_value_key_known(&k[value_named(g, "r")]));      /* 3: before it */
	assert_false(pn_value_key_known(&k[value_named(g, "noise")])); /* the random op */
	assert_false(pn_value_key_known(&k[value_named(g, "y")]));     /* what it feeds */
	free(k);
	pn_tensor_free(x);
	pn_model_free(m);
}

static void test_book(void **state)
{
	(void)state;
	pn_value_book *b = pn_value_book_new();
	assert_non_null(b);
	pn_key k = pn_key_of("a", 1), other = pn_key_of("b", 1);
	pn_value_seen s1 = {.lo = -1, .hi = 2, .known = 1, .observed = 1}, s2 = s1, got;
	s2.hi = 5;
	assert_int_equal(pn_value_book_get(b, &k, &got), 0);
	assert_int_equal(pn_value_book_put(b, &k, &s1), 0);
	assert_int_equal(pn_value_book_put(b, &k, &s2), 0);   /* 4: the first stays */
	assert_int_equal(pn_value_book_get(b, &k, &got), 1);
	assert_true(got.lo == -1 && got.hi == 2 && got.known && got.observed);
	assert_int_equal(pn_value_book_get(b, &other, &got), 0);
	pn_value_book_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alike_values_one_key),
		cmocka_unit_test(test_what_decides_the_bytes),
		cmocka_unit_test(test_seeded_node_unknown),
		cmocka_unit_test(test_book),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
