/*
 * test_elemwise.c - elementwise kernels (runtime/ops/unary.c, activation.c,
 * cast.c, binary.c) run through one-node graphs: broadcasting against a
 * naive reference, results independent of the thread count, integer
 * semantics, legacy (opset < 7) broadcasting, and Cast's string forms.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/err.h"
#include "runtime/session.h"
#include "schemas/ir.h"
#include "schemas/ops.h"

/* --- a one-node graph --------------------------------------------------------------- */

static pn_attr attr_i(const char *name, int64_t v)
{
	return (pn_attr){.name = name, .type = PN_ATTR_INT, .i = v};
}

static pn_attr attr_f(const char *name, float v)
{
	return (pn_attr){.name = name, .type = PN_ATTR_FLOAT, .f = v};
}

static pn_attr attr_s(const char *name, const char *v)
{
	return (pn_attr){.name = name, .type = PN_ATTR_STRING, .s = v, .s_len = (int64_t)strlen(v)};
}

/* Runs op on in[] (NULL: absent optional input); returns output 0 or NULL
 * with err set. */
static pn_tensor *run_op(const char *op, int opset, pn_attr *attrs, int n_attr, pn_tensor **in,
			 int n_in, int threads, char *err)
{
	pn_arena a;
	pn_arena_init(&a, 0);
	pn_graph *g = pn_arena_alloc(&a, sizeof(*g));
	g->values = pn_arena_alloc(&a, sizeof(pn_value) * (size_t)(n_in + 1));
	g->inputs = pn_arena_alloc(&a, sizeof(int32_t) * (size_t)(n_in + 1));
	g->outputs = pn_arena_alloc(&a, sizeof(int32_t));
	g->nodes = pn_arena_alloc(&a, sizeof(pn_node));
	pn_node *n = &g->nodes[0];
	n->in = pn_arena_alloc(&a, sizeof(int32_t) * (size_t)(n_in + 1));
	n->out = pn_arena_alloc(&a, sizeof(int32_t));
	pn_tensor *feed[8];
	int nv = 0;
	for (int i = 0; i < n_in; i++) {
		if (!in[i]) {
			n->in[i] = -1;
			continue;
		}
		g->values[nv].name = pn_arena_printf(&a, "x%d", i);
		g->values[nv].role = PN_ROLE_INPUT;
		g->values[nv].type.rank = -1;
		g->inputs[g->n_inputs] = nv;
		feed[g->n_inputs++] = in[i];
		n->in[i] = nv++;
	}
	g->values[nv].name = "y";
	g->values[nv].is_output = 1;
	g->values[nv].type.rank = -1;
	n->out[0] = nv;
	g->outputs[0] = nv++;
	g->n_values = nv;
	g->n_outputs = 1;
	g->n_nodes = 1;
	n->name = "node";
	n->op_type = op;
	n->domain = "";
	n->op = pn_op_lookup("", op);
	n->opset = opset;
	n->n_in = n_in;
	n->n_out = 1;
	n->n_attr = n_attr;
	n->attrs = attrs;
	pn_tensor *out = NULL;
	pn_session *s = NULL;
	pn_exec_opts o = {.seed = 1, .threads = threads};
	if (!pn_graph_link(g, &a, err) && !pn_graph_toposort(g, &a, err) &&
	    !pn_session_new(g, &o, &s, err)) {
		if (pn_session_run(s, feed, g->n_inputs, &out, err))
			out = NULL;
	}
	pn_session_free(s);
	pn_arena_free(&a);
	return out;
}

static pn_tensor *mk(int dtype, int rank, const int64_t *dims, const void *data)
{
	pn_tensor *t = pn_tensor_new(dtype, rank, dims);
	assert_non_null(t);
	if (data && dtype != PN_STRING)
		memcpy(t->data, data, pn_tensor_nbytes(t));
	if (data && dtype == PN_STRING)
		for (int64_t i = 0; i < t->numel; i++)
			((char **)t->data)[i] = strdup(((char *const *)data)[i]);
	return t;
}

static pn_tensor *mk_random(int rank, const int64_t *dims, unsigned *seed)
{
	pn_tensor *t = mk(PN_FLOAT, rank, dims, NULL);
	for (int64_t i = 0; i < t->numel; i++) {
		*seed = *seed * 1103515245u + 12345u;
		((float *)t->data)[i] = (float)((*seed >> 8) % 2000) / 100.0f - 10.0f;
	}
	return t;
}

/* Index into t of the broadcast element at output multi-index idx. */
static int64_t bcast_index(const pn_tensor *t, int out_rank, const int64_t *idx)
{
	int64_t off = 0;
	for (int d = 0; d < t->rank; d++) {
		int od = d + out_rank - t->rank;
		off = off * t->dims[d] + (t->dims[d] == 1 ? 0 : idx[od]);
	}
	return off;
}

static void unravel(int64_t i, int rank, const int64_t *dims, int64_t *idx)
{
	for (int d = rank - 1; d >= 0; d--) {
		idx[d] = i % dims[d];
		i /= dims[d];
	}
}

/* --- broadcasting ----------------------------------------------------------------------- */

typedef struct shape {
	int rank;
	int64_t dims[6];
} shape;

static void check_sub(const shape *sa, const shape *sb, int threads)
{
	char err[PN_ERRLEN] = "";
	unsigned seed = 7;
	pn_tensor *a = mk_random(sa->rank, sa->dims, &seed), *b = mk_random(sb->rank, sb->dims, &seed);
	pn_tensor *in[2] = {a, b};
	pn_tensor *y = run_op("Sub", 14, NULL, 0, in, 2, threads, err);
	assert_non_null(y);
	assert_int_equal(y->rank, sa->rank > sb->rank ? sa->rank : sb->rank);
	for (int64_t i = 0; i < y->numel; i++) {
		int64_t idx[8];
		unravel(i, y->rank, y->dims, idx);
		float want = ((float *)a->data)[bcast_index(a, y->rank, idx)] -
			     ((float *)b->data)[bcast_index(b, y->rank, idx)];
		assert_true(((float *)y->data)[i] == want);
	}
	pn_tensor_free(a);
	pn_tensor_free(b);
	pn_tensor_free(y);
}

static void test_broadcast_shapes(void **state)
{
	(void)state;
	static const shape cases[][2] = {
		{{4, {2, 3, 4, 5}}, {3, {3, 1, 5}}},
		{{1, {5}}, {3, {2, 3, 5}}},
		{{0, {0}}, {2, {2, 3}}},
		{{2, {2, 3}}, {0, {0}}},
		{{3, {2, 1, 4}}, {3, {1, 3, 1}}},
		{{1, {1}}, {1, {1}}},
		{{4, {2, 3, 1, 1}}, {3, {3, 4, 5}}},
		{{2, {4, 1}}, {2, {4, 6}}},
		{{2, {0, 3}}, {2, {1, 3}}},
		{{2, {3, 4}}, {1, {4}}},
		{{4, {2, 3, 4, 5}}, {4, {2, 3, 1, 1}}},
		{{4, {2, 3, 4, 5}}, {4, {1, 3, 1, 5}}},
		{{5, {2, 1, 3, 1, 2}}, {4, {4, 1, 5, 1}}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		check_sub(&cases[i][0], &cases[i][1], 1);
		check_sub(&cases[i][1], &cases[i][0], 1);
	}
}

/* Large enough to be split across threads: every split gives the same bits. */
static void test_threads_deterministic(void **state)
{
	(void)state;
	static const shape big[][2] = {
		{{3, {64, 128, 33}}, {2, {128, 1}}},
		{{2, {1000, 257}}, {2, {1000, 257}}},
		{{3, {7, 9, 4099}}, {0, {0}}},
	};
	for (size_t c = 0; c < sizeof big / sizeof *big; c++) {
		check_sub(&big[c][0], &big[c][1], 3);
		char err[PN_ERRLEN] = "";
		unsigned seed = 11;
		pn_tensor *a = mk_random(big[c][0].rank, big[c][0].dims, &seed);
		pn_tensor *in[1] = {a};
		pn_tensor *y1 = run_op("Tanh", 13, NULL, 0, in, 1, 1, err);
		pn_tensor *y4 = run_op("Tanh", 13, NULL, 0, in, 1, 4, err);
		assert_non_null(y1);
		assert_non_null(y4);
		assert_memory_equal(y1->data, y4->data, pn_tensor_nbytes(y1));
		pn_tensor_free(a);
		pn_tensor_free(y1);
		pn_tensor_free(y4);
	}
}

/* Opset < 7: B aligned onto A at `axis`, where numpy would not broadcast. */
static void test_legacy_broadcast(void **state)
{
	(void)state;
	char err[PN_ERRLEN] = "";
	unsigned seed = 3;
	int64_t da[4] = {2, 3, 4, 5}, db[2] = {3, 4};
	pn_tensor *a = mk_random(4, da, &seed), *b = mk_random(2, db, &seed);
	pn_attr at[2] = {attr_i("broadcast", 1), attr_i("axis", 1)};
	pn_tensor *in[2] = {a, b};
	pn_tensor *y = run_op("Add", 6, at, 2, in, 2, 1, err);
	assert_non_null(y);
	assert_int_equal(y->rank, 4);
	for (int64_t i = 0; i < y->numel; i++) {
		int64_t idx[4];
		unravel(i, 4, da, idx);
		float want = ((float *)a->data)[i] + ((float *)b->data)[idx[1] * 4 + idx[2]];
		assert_true(((float *)y->data)[i] == want);
	}
	pn_tensor_free(y);
	/* without the attribute, numpy rules apply: [3,4] does not fit [.., 4, 5] */
	y = run_op("Add", 6, NULL, 0, in, 2, 1, err);
	assert_null(y);
	pn_tensor_free(a);
	pn_tensor_free(b);
}

/* PRelu-6: a slope of C values applies per channel. */
static void test_prelu_legacy_channel(void **state)
{
	(void)state;
	char err[PN_ERRLEN] = "";
	int64_t dx[3] = {1, 2, 2}, ds[1] = {2};
	float xv[4] = {-1, 2, -3, -4}, sv[2] = {0.5f, 0.25f};
	pn_tensor *x = mk(PN_FLOAT, 3, dx, xv), *s = mk(PN_FLOAT, 1, ds, sv);
	pn_tensor *in[2] = {x, s};
	pn_tensor *y = run_op("PRelu", 6, NULL, 0, in, 2, 1, err);
	assert_non_null(y);
	float want[4] = {-0.5f, 2, -0.75f, -1};
	assert_memory_equal(y->data, want, sizeof want);
	pn_tensor_free(x);
	pn_tensor_free(s);
	pn_tensor_free(y);
}

/* --- integer semantics ------------------------------------------------------------------- */

static pn_tensor *run2_i32(const char *op, int opset, pn_attr *at, int nat, const int32_t *a,
			   const int32_t *b, int n)
{
	char err[PN_ERRLEN] = "";
	int64_t d[1] = {n};
	pn_tensor *ta = mk(PN_INT32, 1, d, a), *tb = mk(PN_INT32, 1, d, b);
	pn_tensor *in[2] = {ta, tb};
	pn_tensor *y = run_op(op, opset, at, nat, in, 2, 1, err);
	pn_tensor_free(ta);
	pn_tensor_free(tb);
	assert_non_null(y);
	return y;
}

static void test_integer_ops(void **state)
{
	(void)state;
	int32_t a[6] = {-7, 7, -7, 7, INT32_MIN, 5}, b[6] = {2, -2, -2, 0, -1, 3};
	pn_tensor *y = run2_i32("Mod", 13, NULL, 0, a, b, 6);
	int32_t mod_py[6] = {1, -1, -1, 0, 0, 2};
	assert_memory_equal(y->data, mod_py, sizeof mod_py);
	pn_tensor_free(y);
	pn_attr fm = attr_i("fmod", 1);
	y = run2_i32("Mod", 13, &fm, 1, a, b, 6);
	int32_t mod_c[6] = {-1, 1, -1, 0, 0, 2};
	assert_memory_equal(y->data, mod_c, sizeof mod_c);
	pn_tensor_free(y);
	y = run2_i32("Div", 14, NULL, 0, a, b, 6);
	int32_t quo[6] = {-3, -3, 3, 0, INT32_MIN, 1};
	assert_memory_equal(y->data, quo, sizeof quo);
	pn_tensor_free(y);
	y = run2_i32("Add", 14, NULL, 0, a, b, 6);
	int32_t sum[6] = {-5, 5, -9, 7, INT32_MAX, 8};
	assert_memory_equal(y->data, sum, sizeof sum);
	pn_tensor_free(y);
	/* Pow with integers is exact (and wraps), not computed in double */
	int32_t pa[3] = {3, -2, 7}, pb[3] = {19, 3, 0};
	y = run2_i32("Pow", 15, NULL, 0, pa, pb, 3);
	int32_t pw[3] = {1162261467, -8, 1};
	assert_memory_equal(y->data, pw, sizeof pw);
	pn_tensor_free(y);

	char err[PN_ERRLEN] = "";
	int64_t d[1] = {4};
	uint8_t x8[4] = {1, 0x80, 3, 255}, s8[4] = {7, 1, 8, 9};
	pn_tensor *tx = mk(PN_UINT8, 1, d, x8), *ts = mk(PN_UINT8, 1, d, s8);
	pn_tensor *in[2] = {tx, ts};
	pn_attr left = attr_s("direction", "LEFT"), right = attr_s("direction", "RIGHT");
	y = run_op("BitShift", 11, &left, 1, in, 2, 1, err);
	assert_non_null(y);
	uint8_t l[4] = {0x80, 0, 0, 0};
	assert_memory_equal(y->data, l, 4);
	pn_tensor_free(y);
	y = run_op("BitShift", 11, &right, 1, in, 2, 1, err);
	assert_non_null(y);
	uint8_t r[4] = {0, 0x40, 0, 0};
	assert_memory_equal(y->data, r, 4);
	pn_tensor_free(y);
	pn_tensor_free(tx);
	pn_tensor_free(ts);
}

/* Clip on integers (optional bounds, one absent) and Clip-6 attributes. */
static void test_clip(void **state)
{
	(void)state;
	char err[PN_ERRLEN] = "";
	int64_t d[1] = {4};
	int8_t xv[4] = {-128, -3, 5, 127}, lo = -4;
	pn_tensor *x = mk(PN_INT8, 1, d, xv), *tlo = mk(PN_INT8, 0, NULL, &lo);
	pn_tensor *in[3] = {x, tlo, NULL};
	pn_tensor *y = run_op("Clip", 13, NULL, 0, in, 3, 1, err);
	assert_non_null(y);
	int8_t want[4] = {-4, -3, 5, 127};
	assert_memory_equal(y->data, want, 4);
	pn_tensor_free(y);
	pn_tensor_free(x);
	pn_tensor_free(tlo);

	float fv[4] = {-2, 0.25f, NAN, 3};
	pn_tensor *fx = mk(PN_FLOAT, 1, d, fv);
	pn_attr at[2] = {attr_f("min", -1), attr_f("max", 1)};
	pn_tensor *fin[1] = {fx};
	y = run_op("Clip", 6, at, 2, fin, 1, 1, err);
	assert_non_null(y);
	const float *o = y->data;
	assert_true(o[0] == -1 && o[1] == 0.25f && isnan(o[2]) && o[3] == 1);
	pn_tensor_free(y);
	pn_tensor_free(fx);
}

/* Sum and Mean of three broadcast inputs. */
static void test_variadic(void **state)
{
	(void)state;
	char err[PN_ERRLEN] = "";
	int64_t d23[2] = {2, 3}, d3[1] = {3}, d21[2] = {2, 1};
	float a[6] = {1, 2, 3, 4, 5, 6}, b[3] = {10, 20, 30}, c[2] = {100, 200};
	pn_tensor *ta = mk(PN_FLOAT, 1, d3, b), *tb = mk(PN_FLOAT, 2, d21, c),
		  *tc = mk(PN_FLOAT, 2, d23, a);
	pn_tensor *in[3] = {ta, tb, tc};
	pn_tensor *y = run_op("Sum", 13, NULL, 0, in, 3, 1, err);
	assert_non_null(y);
	float want[6] = {111, 122, 133, 214, 225, 236};
	assert_int_equal(y->rank, 2);
	assert_memory_equal(y->data, want, sizeof want);
	pn_tensor_free(y);
	y = run_op("Mean", 13, NULL, 0, in, 3, 1, err);
	assert_non_null(y);
	for (int i = 0; i < 6; i++)
		assert_true(((float *)y->data)[i] == want[i] / 3);
	pn_tensor_free(y);
	y = run_op("Max", 13, NULL, 0, in, 3, 1, err);
	assert_non_null(y);
	float mx[6] = {100, 100, 100, 200, 200, 200};
	assert_memory_equal(y->data, mx, sizeof mx);
	pn_tensor_free(y);
	pn_tensor_free(ta);
	pn_tensor_free(tb);
	pn_tensor_free(tc);
}

/* Where on strings with the three operands broadcast differently. */
static void test_where_strings(void **state)
{
	(void)state;
	char err[PN_ERRLEN] = "";
	int64_t dc[2] = {2, 1}, dx[1] = {3}, dy[1] = {1};
	uint8_t cv[2] = {1, 0};
	const char *xv[3] = {"a", "b", "c"}, *yv[1] = {"z"};
	pn_tensor *c = mk(PN_BOOL, 2, dc, cv), *x = mk(PN_STRING, 1, dx, xv),
		  *y = mk(PN_STRING, 0, dy, yv);
	pn_tensor *in[3] = {c, x, y};
	pn_tensor *o = run_op("Where", 16, NULL, 0, in, 3, 1, err);
	assert_non_null(o);
	assert_int_equal(o->numel, 6);
	const char *want[6] = {"a", "b", "c", "z", "z", "z"};
	for (int i = 0; i < 6; i++)
		assert_string_equal(((char **)o->data)[i], want[i]);
	pn_tensor_free(o);
	pn_tensor *eq_in[2] = {x, y};
	o = run_op("Equal", 19, NULL, 0, eq_in, 2, 1, err);
	assert_non_null(o);
	assert_int_equal(o->dtype, PN_BOOL);
	pn_tensor_free(o);
	pn_tensor_free(c);
	pn_tensor_free(x);
	pn_tensor_free(y);
}

/* --- Cast ---------------------------------------------------------------------------------- */

static pn_tensor *cast(pn_tensor *x, int to)
{
	char err[PN_ERRLEN] = "";
	pn_attr at = attr_i("to", to);
	pn_tensor *in[1] = {x};
	pn_tensor *y = run_op("Cast", 13, &at, 1, in, 1, 1, err);
	assert_non_null(y);
	assert_int_equal(y->dtype, to);
	return y;
}

static void test_cast_to_string(void **state)
{
	(void)state;
	float fv[] = {1.0f, 0.1f, 1e-5f, 1.5e16f, -0.0f, 100.0f, 0.039187793f, NAN, -INFINITY,
		      123456.79f, 1e-4f, 3.4028235e38f};
	const char *fs[] = {"1.0", "0.1", "1e-05", "1.5e+16", "-0.0", "100.0", "0.039187793",
			    "nan", "-inf", "123456.79", "1e-04", "3.4028235e+38"};
	int64_t d[1] = {sizeof fv / sizeof *fv};
	pn_tensor *x = mk(PN_FLOAT, 1, d, fv);
	pn_tensor *y = cast(x, PN_STRING);
	for (int i = 0; i < d[0]; i++)
		assert_string_equal(((char **)y->data)[i], fs[i]);
	pn_tensor_free(x);
	pn_tensor_free(y);

	double dv[] = {0.1, 1.0 / 3, 1e300, 2.5};
	const char *ds[] = {"0.1", "0.3333333333333333", "1e+300", "2.5"};
	int64_t dd[1] = {4};
	x = mk(PN_DOUBLE, 1, dd, dv);
	y = cast(x, PN_STRING);
	for (int i = 0; i < 4; i++)
		assert_string_equal(((char **)y->data)[i], ds[i]);
	pn_tensor_free(x);
	pn_tensor_free(y);

	int64_t iv[] = {-5, INT64_MAX};
	int64_t di[1] = {2};
	x = mk(PN_INT64, 1, di, iv);
	y = cast(x, PN_STRING);
	assert_string_equal(((char **)y->data)[0], "-5");
	assert_string_equal(((char **)y->data)[1], "9223372036854775807");
	pn_tensor_free(x);
	pn_tensor_free(y);
}

static void test_cast_from_string(void **state)
{
	(void)state;
	const char *sv[] = {"0.47892547", "NaN", "+INF", "-inf", " 42 ", "1e3", "-7"};
	int64_t d[1] = {7};
	pn_tensor *x = mk(PN_STRING, 1, d, sv);
	pn_tensor *f = cast(x, PN_FLOAT);
	const float *fv = f->data;
	assert_true(fv[0] == 0.47892547f && isnan(fv[1]) && fv[2] == INFINITY &&
		    fv[3] == -INFINITY && fv[4] == 42 && fv[5] == 1000 && fv[6] == -7);
	pn_tensor *i = cast(x, PN_INT32);
	const int32_t *iv = i->data;
	assert_int_equal(iv[4], 42);
	assert_int_equal(iv[5], 1000);
	assert_int_equal(iv[6], -7);
	pn_tensor_free(x);
	pn_tensor_free(f);
	pn_tensor_free(i);
}

static void test_cast_numbers(void **state)
{
	(void)state;
	float fv[] = {300.0f, -1.5f, NAN, 2.5f, 65520.0f, 1e-8f};
	int64_t d[1] = {6};
	pn_tensor *x = mk(PN_FLOAT, 1, d, fv);
	pn_tensor *u8 = cast(x, PN_UINT8), *i32 = cast(x, PN_INT32), *b = cast(x, PN_BOOL),
		  *h = cast(x, PN_FLOAT16);
	uint8_t u8w[6] = {44, 255, 0, 2, 240, 0};
	assert_memory_equal(u8->data, u8w, 6);
	int32_t i32w[6] = {300, -1, INT32_MIN, 2, 65520, 0};
	assert_memory_equal(i32->data, i32w, sizeof i32w);
	uint8_t bw[6] = {1, 1, 1, 1, 1, 1};
	assert_memory_equal(b->data, bw, 6);
	const uint16_t *hv = h->data;
	assert_int_equal(hv[4], 0x7c00);   /* 65520 rounds up to inf in float16 */
	assert_int_equal(hv[5], 0);
	pn_tensor_free(u8);
	pn_tensor_free(i32);
	pn_tensor_free(b);
	pn_tensor_free(h);
	pn_tensor_free(x);

	/* double -> float16 is rounded once: 1 + 2^-11 + 2^-40 is just above the
	 * halfway point between 1 and the next float16, which rounding through a
	 * nearest-even float would lose. */
	double dv[1] = {1.0 + ldexp(1, -11) + ldexp(1, -40)};
	int64_t d1[1] = {1};
	x = mk(PN_DOUBLE, 1, d1, dv);
	h = cast(x, PN_FLOAT16);
	assert_int_equal(((uint16_t *)h->data)[0], 0x3c01);
	pn_tensor_free(h);
	pn_tensor_free(x);

	/* int64 -> uint64 -> int64 keeps every bit */
	int64_t iv[2] = {-1, INT64_MIN};
	int64_t d2[1] = {2};
	x = mk(PN_INT64, 1, d2, iv);
	pn_tensor *u = cast(x, PN_UINT64);
	pn_tensor *back = cast(u, PN_INT64);
	assert_memory_equal(back->data, iv, sizeof iv);
	pn_tensor_free(x);
	pn_tensor_free(u);
	pn_tensor_free(back);
}

/* Cast-1 names its target type with a string. */
static void test_cast_legacy_to(void **state)
{
	(void)state;
	char err[PN_ERRLEN] = "";
	float fv[2] = {1.75f, -2.5f};
	int64_t d[1] = {2};
	pn_tensor *x = mk(PN_FLOAT, 1, d, fv);
	pn_attr at = attr_s("to", "INT64");
	pn_tensor *in[1] = {x};
	pn_tensor *y = run_op("Cast", 1, &at, 1, in, 1, 1, err);
	assert_non_null(y);
	assert_int_equal(y->dtype, PN_INT64);
	int64_t want[2] = {1, -2};
	assert_memory_equal(y->data, want, sizeof want);
	pn_tensor_free(x);
	pn_tensor_free(y);
}

/* Opset-18 ops the 1.12 test data does not cover. */
static void test_opset18_ops(void **state)
{
	(void)state;
	char err[PN_ERRLEN] = "";
	int64_t d[1] = {4};
	int32_t a[4] = {0x0f0f, -1, 6, 0}, b[4] = {0x00ff, 5, 3, -8};
	pn_tensor *ta = mk(PN_INT32, 1, d, a), *tb = mk(PN_INT32, 1, d, b);
	pn_tensor *in[2] = {ta, tb};
	struct { const char *op; int32_t want[4]; } cases[] = {
		{"BitwiseAnd", {0x000f, 5, 2, 0}},
		{"BitwiseOr", {0x0fff, -1, 7, -8}},
		{"BitwiseXor", {0x0ff0, -6, 5, -8}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		pn_tensor *y = run_op(cases[i].op, 18, NULL, 0, in, 2, 1, err);
		assert_non_null(y);
		assert_memory_equal(y->data, cases[i].want, sizeof cases[i].want);
		pn_tensor_free(y);
	}
	pn_tensor *y = run_op("BitwiseNot", 18, NULL, 0, in, 1, 1, err);
	assert_non_null(y);
	int32_t nw[4] = {~0x0f0f, 0, -7, -1};
	assert_memory_equal(y->data, nw, sizeof nw);
	pn_tensor_free(y);
	pn_tensor_free(ta);
	pn_tensor_free(tb);

	double xv[4] = {-30, -1, 0.5, 40};
	pn_tensor *x = mk(PN_DOUBLE, 1, d, xv);
	pn_tensor *xin[1] = {x};
	y = run_op("Mish", 18, NULL, 0, xin, 1, 1, err);
	assert_non_null(y);
	for (int i = 0; i < 4; i++) {
		double want = xv[i] * tanh(log1p(exp(xv[i])));
		assert_true(fabs(((double *)y->data)[i] - want) <= 1e-15 * (1 + fabs(want)));
	}
	pn_tensor_free(y);
	pn_tensor_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_broadcast_shapes),
		cmocka_unit_test(test_threads_deterministic),
		cmocka_unit_test(test_legacy_broadcast),
		cmocka_unit_test(test_prelu_legacy_channel),
		cmocka_unit_test(test_integer_ops),
		cmocka_unit_test(test_clip),
		cmocka_unit_test(test_variadic),
		cmocka_unit_test(test_where_strings),
		cmocka_unit_test(test_cast_to_string),
		cmocka_unit_test(test_cast_from_string),
		cmocka_unit_test(test_cast_numbers),
		cmocka_unit_test(test_cast_legacy_to),
		cmocka_unit_test(test_opset18_ops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
