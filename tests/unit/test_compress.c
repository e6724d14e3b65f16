/*
 * test_compress.c - zstd frames through libarchive (common/compress.h):
 * bytes come back as they went in, the same bytes give the same frame, and
 * what is not one whole frame says so.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/compress.h"
#include "common/err.h"

/* Text like a graph's: names that repeat with other numbers. */
static size_t fill_names(char *p, size_t cap)
{
	size_t n = 0;
	for (int i = 0; n + 64 < cap; i++)
		n += (size_t)snprintf(p + n, cap - n, "/encoder/layer.%d/attention/MatMul_%d_output_0;",
				      i % 24, i);
	return n;
}

/* xorshift bytes: what compresses not at all */
static void fill_noise(uint8_t *p, size_t n)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		p[i] = (uint8_t)x;
	}
}

static void round_trip(const void *in, size_t n, pn_buf *frame)
{
	char err[PN_ERRLEN];
	assert_int_equal(pn_zstd_pack(in, n, 1, frame, err), 0);
	pn_buf back = {0};
	int rc = pn_zstd_unpack(frame->p, frame->n, &back, err);
	if (rc)
		fail_msg("%zu bytes: %s", n, err);
	assert_int_equal(back.n, n);
	if (n)
		assert_memory_equal(back.p, in, n);
	pn_buf_free(&back);
}

/* 1. Names come back whole, in a frame a fraction of their size; noise and
 * nothing at all come back too. */
static void test_round_trip(void **state)
{
	(void)state;
	size_t cap = 1 << 20;
	char *text = malloc(cap);
	uint8_t *noise = malloc(cap);
	assert_true(text && noise);
	size_t n = fill_names(text, cap);
	pn_buf frame = {0};
	round_trip(text, n, &frame);
	assert_true(frame.n * 4 < n);
	frame.n = 0;
	fill_noise(noise, cap);
	round_trip(noise, cap, &frame);
	assert_true(frame.n >= cap);
	frame.n = 0;
	round_trip("", 0, &frame);
	assert_int_equal(frame.n, 0);
	pn_buf_free(&frame);
	free(text);
	free(noise);
}

/* 2. The same bytes give the same frame: the store is a function of its
 * sources.  And a frame appends to what the buffer holds. */
static void test_same_frame(void **state)
{
	(void)state;
	char text[8192];
	size_t n = fill_names(text, sizeof text);
	char err[PN_ERRLEN];
	pn_buf a = {0}, b = {0};
	pn_buf_put(&b, "head", 4);
	assert_int_equal(pn_zstd_pack(text, n, 1, &a, err), 0);
	assert_int_equal(pn_zstd_pack(text, n, 1, &b, err), 0);
	assert_int_equal(b.n, a.n + 4);
	assert_memory_equal(b.p + 4, a.p, a.n);
	pn_buf_free(&a);
	pn_buf_free(&b);
}

/* 3. Not a frame, a frame cut short, and another format: 1, with a reason. */
static void test_not_a_frame(void **state)
{
	(void)state;
	char text[8192];
	size_t n = fill_names(text, sizeof text);
	char err[PN_ERRLEN];
	pn_buf frame = {0}, out = {0};
	assert_int_equal(pn_zstd_pack(text, n, 1, &frame, err), 0);
	err[0] = 0;
	assert_int_equal(pn_zstd_unpack(text, n, &out, err), 1);
	assert_non_null(strstr(err, "not a zstd frame"));
	assert_int_equal(pn_zstd_unpack(frame.p, 3, &out, err), 1);
	out.n = 0;
	err[0] = 0;
	assert_int_equal(pn_zstd_unpack(frame.p, frame.n / 2, &out, err), 1);
	assert_true(err[0] != 0);
	out.n = 0;
	err[0] = 0;
	/* a gzip stream is not taken for a zstd frame */
	static const uint8_t gz[] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	assert_int_equal(pn_zstd_unpack(gz, sizeof gz, &out, err), 1);
	pn_buf_free(&frame);
	pn_buf_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_same_frame),
		cmocka_unit_test(test_not_a_frame),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
