/*
 * test_sha256.c - SHA-256 against the FIPS 180-4 / NIST example vectors,
 * against itself fed in odd pieces, and against sha256sum(1) on files whose
 * lengths sit on every padding boundary.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/sha256.h"
#include "extract/sources.h"

static void hex_of(const void *p, size_t n, char hex[65])
{
	pn_sha256 s;
	uint8_t d[32];
	pn_sha256_init(&s);
	pn_sha256_update(&s, p, n);
	pn_sha256_final(&s, d);
	pn_sha256_hex(d, hex);
}

static void test_vectors(void **state)
{
	(void)state;
	char hex[65];
	hex_of("", 0, hex);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	hex_of("abc", 3, hex);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	hex_of(m448, strlen(m448), hex);
	assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
	hex_of(m896, strlen(m896), hex);
	assert_string_equal(hex, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

static void test_million_a(void **state)
{
	(void)state;
	char *a = malloc(1000000);
	assert_non_null(a);
	memset(a, 'a', 1000000);
	char hex[65];
	hex_of(a, 1000000, hex);
	assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");

	/* The same million fed in uneven pieces must give the same digest. */
	pn_sha256 s;
	uint8_t d[32];
	char hex2[65];
	pn_sha256_init(&s);
	size_t off = 0, step = 1;
	while (off < 1000000) {
		size_t n = step < 1000000 - off ? step : 1000000 - off;
		pn_sha256_update(&s, a + off, n);
		off += n;
		step = step * 7 % 131 + 1;
	}
	pn_sha256_final(&s, d);
	pn_sha256_hex(d, hex2);
	assert_string_equal(hex2, hex);
	free(a);
}

/* Runs sha256sum on path and returns its hex digest. */
static void sha256sum(const char *path, char hex[65])
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "sha256sum '%s'", path);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	assert_int_equal(fscanf(p, "%64s", hex), 1);
	assert_int_equal(pclose(p), 0);
}

static void test_against_sha256sum(void **state)
{
	(void)state;
	char dir[] = "/tmp/pn-sha-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256];
	snprintf(path, sizeof path, "%s/f", dir);
	/* Every length around the padding boundaries, and one large file that
	 * crosses pn_sha256_file's read buffer. */
	size_t lens[] = { 0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000, 3 * 65536 + 17 };
	unsigned seed = 12345;
	for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
		FILE *f = fopen(path, "wb");
		assert_non_null(f);
		for (size_t j = 0; j < lens[i]; j++) {
			seed = seed * 1103515245u + 12345u;
			fputc((int)(seed >> 16) & 255, f);
		}
		fclose(f);
		char want[65], got[65], err[PN_ERRLEN];
		sha256sum(path, want);
		assert_int_equal(pn_sha256_file(path, got, err), 0);
		assert_string_equal(got, want);
	}
	char hex[65], err[PN_ERRLEN];
	snprintf(path, sizeof path, "%s/missing", dir);
	assert_int_equal(pn_sha256_file(path, hex, err), -1);
	assert_non_null(strstr(err, "missing"));
	unlink(path);
	snprintf(path, sizeof path, "%s/f", dir);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_million_a),
		cmocka_unit_test(test_against_sha256sum),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
