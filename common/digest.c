/*
 * digest.c - see digest.h.  nettle does the hashing and the base64; this
 * file only streams files through it and checks the strings it is given.
 */
#include "common/digest.h"

#include "common/err.h"

#include <errno.h>
#include <fcntl.h>
#include <nettle/base64.h>
#include <nettle/sha2.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"

size_t pn_digest_size(int algo)
{
	return algo == PN_SHA512 ? SHA512_DIGEST_SIZE : SHA256_DIGEST_SIZE;
}

const char *pn_digest_name(int algo)
{
	return algo == PN_SHA512 ? "sha512" : "sha256";
}

int pn_digest_file(const char *path, int algo, uint8_t out[PN_DIGEST_MAX], char *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pn_fail(err, "%s: %s", path, strerror(errno));
	struct sha256_ctx s256;
	struct sha512_ctx s512;
	sha256_init(&s256);
	sha512_init(&s512);
	static const size_t bufsize = 1 << 16;
	uint8_t *buf = malloc(bufsize);
	if (!buf) {
		close(fd);
		return pn_fail(err, "%s: out of memory", path);
	}
	for (;;) {
		ssize_t r = read(fd, buf, bufsize);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			close(fd);
			return pn_fail(err, "%s: read error: %s", path, strerror(e));
		}
		if (r == 0)
			break;
		if (algo == PN_SHA512)
			sha512_update(&s512, (size_t)r, buf);
		else
			sha256_update(&s256, (size_t)r, buf);
	}
	free(buf);
	close(fd);
	if (algo == PN_SHA512)
		sha512_digest(&s512, SHA512_DIGEST_SIZE, out);
	else
		sha256_digest(&s256, SHA256_DIGEST_SIZE, out);
	return 0;
}

int pn_sha256_file(const char *path, char hex[65], char *err)
{
	uint8_t d[PN_DIGEST_MAX];
	if (pn_digest_file(path, PN_SHA256, d, err))
		return -1;
	pn_hex(d, SHA256_DIGEST_SIZE, hex);
	return 0;
}

void pn_base64(const uint8_t *data, size_t n, char *out)
{
	base64_encode_raw(out, n, data);
	out[BASE64_ENCODE_RAW_LENGTH(n)] = '\0';
}

long pn_base64_decode(const char *s, uint8_t *out, size_t cap)
{
	/* nettle's decoder skips blanks; integrity strings are compared as
	 * written, so only the characters of base64 are let in. */
	size_t n = strlen(s);
	if (n == 0 || n % 4 || strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") != n)
		return -1;
	if (BASE64_DECODE_LENGTH(n) > cap + 2)
		return -1;
	uint8_t *tmp = malloc(BASE64_DECODE_LENGTH(n) + 1);
	if (!tmp)
		return -1;
	struct base64_decode_ctx ctx;
	base64_decode_init(&ctx);
	size_t got = BASE64_DECODE_LENGTH(n);
	int ok = base64_decode_update(&ctx, &got, tmp, n, s) && base64_decode_final(&ctx);
	long rc = -1;
	if (ok && got <= cap) {
		/* Only the canonical spelling of those bytes is accepted. */
		char *again = malloc(BASE64_ENCODE_RAW_LENGTH(got) + 1);
		if (again) {
			pn_base64(tmp, got, again);
			if (!strcmp(again, s)) {
				memcpy(out, tmp, got);
				rc = (long)got;
			}
			free(again);
		}
	}
	free(tmp);
	return rc;
}
