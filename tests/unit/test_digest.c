/*
 * test_digest.c - common/digest.c: SHA-256 and SHA-512 of files (nettle)
 * against the FIPS 180-4 example vectors, and the base64 of npm integrity
 * strings, which must be read in their one canonical spelling.
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

#include "common/digest.h"
#include "common/err.h"
#include "common/util.h"

static char path[64];

static int setup(void **state)
{
	(void)state;
	snprintf(path, sizeof path, "/tmp/pn-digest-XXXXXX");
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return unlink(path);
}

static void put(const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static void hex_of_file(int algo, char *hex)
{
	uint8_t d[PN_DIGEST_MAX];
	char err[PN_ERRLEN];
	assert_int_equal(pn_digest_file(path, algo, d, err), 0);
	pn_hex(d, pn_digest_size(algo), hex);
}

static void test_vectors(void **state)
{
	(void)state;
	char hex[2 * PN_DIGEST_MAX + 1], err[PN_ERRLEN];
	put("", 0);
	assert_int_equal(pn_sha256_file(path, hex, err), 0);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	put("abc", 3);
	hex_of_file(PN_SHA256, hex);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	hex_of_file(PN_SHA512, hex);
	assert_string_equal(hex, "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
				 "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f");
	/* A million 'a': more than one read buffer (64 KiB) of the file. */
	char *a = malloc(1000000);
	assert_non_null(a);
	memset(a, 'a', 1000000);
	put(a, 1000000);
	free(a);
	hex_of_file(PN_SHA256, hex);
	assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	hex_of_file(PN_SHA512, hex);
	assert_string_equal(hex, "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973eb"
				 "de0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b");
	assert_int_equal(pn_digest_size(PN_SHA256), 32);
	assert_string_equal(pn_digest_name(PN_SHA512), "sha512");
	uint8_t d[PN_DIGEST_MAX];
	assert_int_equal(pn_digest_file("/nonexistent/x", PN_SHA256, d, err), -1);
	assert_string_equal(err, "/nonexistent/x: No such file or directory");
}

static void test_base64(void **state)
{
	(void)state;
	/* RFC 4648's examples, both ways. */
	static const char *const plain[] = { "f", "fo", "foo", "foob", "fooba", "foobar" };
	static const char *const coded[] = { "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy" };
	for (int i = 0; i < 6; i++) {
		char out[16];
		uint8_t back[16];
		pn_base64((const uint8_t *)plain[i], strlen(plain[i]), out);
		assert_string_equal(out, coded[i]);
		assert_int_equal(pn_base64_decode(coded[i], back, sizeof back), (long)strlen(plain[i]));
		assert_memory_equal(back, plain[i], strlen(plain[i]));
	}
	/* An npm integrity: 64 bytes, and only its canonical spelling. */
	const char *b64 = "PRE/crf8fUNCTABnmaijtk+1lAoaR+kI2E2ntYwrzGtNg3oeOsjn+jprtPDGmwF18De7a3yFTHoLhpu8/bMp9g==";
	uint8_t d[PN_DIGEST_MAX];
	assert_int_equal(pn_base64_decode(b64, d, sizeof d), 64);
	char again[100];
	pn_base64(d, 64, again);
	assert_string_equal(again, b64);
	assert_int_equal(pn_base64_decode(b64, d, 63), -1);
	static const char *const bad[] = { "", "Zg", "Zg=", "Zh==", "Z g==", "Zg==Zg==", "Zm9v\n", "Zm-v",
					   "====" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		assert_int_equal(pn_base64_decode(bad[i], d, sizeof d), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_vectors, setup, teardown),
		cmocka_unit_test(test_base64),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
