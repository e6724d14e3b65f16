/*
 * digest.h - SHA-256 and SHA-512 of files, and the spellings users compare
 * downloads by (hex; npm's "sha512-BASE64" integrity strings).  The hashing
 * and base64 are nettle's; xxHash stays the content hash everywhere else.
 */
#ifndef PN_DIGEST_H
#define PN_DIGEST_H

#include <stddef.h>
#include <stdint.h>

enum pn_digest_algo { PN_SHA256, PN_SHA512 };

#define PN_DIGEST_MAX 64   /* bytes of the longest digest (SHA-512) */

size_t      pn_digest_size(int algo);   /* 32 or 64 */
const char *pn_digest_name(int algo);   /* "sha256" or "sha512" */

/* The digest of a file, streamed.  -1 with "PATH: problem" on error. */
int pn_digest_file(const char *path, int algo, uint8_t out[PN_DIGEST_MAX], char *err);
/* Hex SHA-256 of a file (lower case). */
int pn_sha256_file(const char *path, char hex[65], char *err);

/* Standard, padded base64 of n bytes into out (4 * ((n + 2) / 3) + 1 bytes). */
void pn_base64(const uint8_t *data, size_t n, char *out);
/* Decodes standard base64 (padding required) into out[cap]; the byte count,
 * or -1 if s is not base64 or does not fit. */
long pn_base64_decode(const char *s, uint8_t *out, size_t cap);

#endif
