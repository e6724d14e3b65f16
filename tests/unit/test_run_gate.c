/*
 * test_run_gate.c - the extract workers' memory gate (extract/run_gate.h)
 * and the estimate it is fed (pn_infer_peak_bytes, runtime/infer.h).
 *
 * 1. The estimate of a chain counts its weights and the two largest
 *    neighbouring outputs, not every output; a value whose dims no
 *    inference knows counts nothing.
 * 2. Eight threads enter and leave the gate with runs of several sizes:
 *    whenever two or more are inside, what they hold is within the budget;
 *    a run over the budget (and a SIZE_MAX one) is counted as the budget
 *    and is alone inside; runs that cannot share did wait.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/err.h"
#include "extract/run_gate.h"
#include "model/onnx.h"
#include "runtime/infer.h"
#include "onnx_builder.h"

/* 1. X [1,1000] -> MatMul W [1000,1000] -> Relu -> MatMul W2 [1000,10] */
static void test_peak_estimate(void **state)
{
	(void)state;
	builder b;
	builder_init(&b);
	b.inputs[b.nin++] = vinfo(&b, "X", 2, (int64_t[]){1, 1000});
	b.inits[b.ni++] = tensor(&b, "W", 2, (int64_t[]){1000, 1000});
	b.inits[b.ni++] = tensor(&b, "W2", 2, (int64_t[]){1000, 10});
	node(&b, "MatMul", "X,W", "a");
	node(&b, "Relu", "a", "r");
	node(&b, "MatMul", "r,W2", "y");
	b.outputs[b.nout++] = vinfo(&b, "y", 2, (int64_t[]){1, 10});
	pn_model *m = load(&b);
	pn_infer_result r;
	char err[PN_ERRLEN];
	assert_int_equal(pn_infer_graph(m->graph, NULL, NULL, &r, err), 0);
	size_t weights = (1000 * 1000 + 1000 * 10) * 4;
	/* X held throughout (the caller's), then a and r at once (4,000 each) */
	size_t want = weights + 4000 + 4000 + 4000;
	assert_int_equal(pn_infer_peak_bytes(m->graph, &r), want);
	pn_infer_result_free(&r);
	pn_model_free(m);
	pn_arena_free(&b.a);

	/* NonZero: its output's length is known only when it runs, so only X
	 * (4 x 4 floats) is counted */
	builder_init(&b);
	b.inputs[b.nin++] = vinfo(&b, "X", 2, (int64_t[]){4, 4});
	node(&b, "NonZero", "X", "nz");
	node(&b, "Transpose", "nz", "t");
	b.outputs[b.nout++] = vout(&b, "t");
	m = load(&b);
	assert_int_equal(pn_infer_graph(m->graph, NULL, NULL, &r, err), 0);
	assert_int_equal(pn_infer_peak_bytes(m->graph, &r), 64);
	pn_infer_result_free(&r);
	pn_model_free(m);
	pn_arena_free(&b.a);
}

/* --- 2. the gate under threads ------------------------------------------------------ */

#define BUDGET 100
#define THREADS 8
#define ROUNDS 40

static pthread_mutex_t watch = PTHREAD_MUTEX_INITIALIZER;
static size_t inside_bytes;
static int inside_runs, broken, big_shared;

static void *worker(void *arg)
{
	static const size_t sizes[] = {60, 30, 10, 45, 0, 150, SIZE_MAX, 55};
	int id = (int)(intptr_t)arg;
	for (int k = 0; k < ROUNDS; k++) {
		size_t want = sizes[(id + k) % 8];
		size_t counted = pn_run_gate_enter(want);
		pthread_mutex_lock(&watch);
		if (counted != (want > BUDGET ? BUDGET : want))
			broken = 1;
		inside_bytes += counted;
		inside_runs++;
		if (inside_runs > 1 && inside_bytes > BUDGET)
			broken = 1;
		if (counted == BUDGET && inside_runs > 1) {
			/* only runs counting nothing may share with a whole-budget one */
			if (inside_bytes != BUDGET)
				big_shared = 1;
		}
		pthread_mutex_unlock(&watch);
		nanosleep(&(struct timespec){0, 200000}, NULL);
		pthread_mutex_lock(&watch);
		inside_bytes -= counted;
		inside_runs--;
		pthread_mutex_unlock(&watch);
		pn_run_gate_leave(counted);
	}
	return NULL;
}

static void test_gate_threads(void **state)
{
	(void)state;
	pn_run_gate_set_budget(BUDGET);
	assert_int_equal(pn_run_gate_budget(), BUDGET);
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	assert_false(broken);
	assert_false(big_shared);
	pn_run_gate_stats s;
	pn_run_gate_stats_get(&s);
	assert_int_equal(s.runs, THREADS * ROUNDS);
	assert_true(s.waited > 0);
	assert_true(s.most_held <= BUDGET);
	pn_run_gate_set_budget(0);
	assert_int_equal(pn_run_gate_budget(), (size_t)1024 << 20);
}

int main(void)
{
	unsetenv("PASSNET_RUN_MEMORY_MB");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_peak_estimate),
		cmocka_unit_test(test_gate_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
