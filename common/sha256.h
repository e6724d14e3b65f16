/*
 * sha256.h - FIPS 180-4 SHA-256, for manifest checksums and export manifests.
 * (xxHash is the content hash everywhere else; SHA-256 is what users compare
 * downloads against.)
 */
#ifndef PN_SHA256_H
#define PN_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct pn_sha256 {
	uint32_t h[8];
	uint64_t total;
	uint8_t buf[64];
	size_t fill;
} pn_sha256;

void pn_sha256_init(pn_sha256 *s);
void pn_sha256_update(pn_sha256 *s, const void *data, size_t len);
void pn_sha256_final(pn_sha256 *s, uint8_t out[32]);
void pn_sha256_hex(const uint8_t digest[32], char hex[65]);

#endif
