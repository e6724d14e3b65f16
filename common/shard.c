/* shard.c - see shard.h. */
#include "common/shard.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/err.h"

#define PN_SHARD_MAX 1000000u

int pn_shard_parse(const char *text, pn_shard *out, char *err)
{
	char *end;
	unsigned long k = strtoul(text, &end, 10);
	if (end == text || *end != '/' || text[0] == '-')
		return pn_fail(err, "wants K/N, got '%s'", text);
	const char *ns = end + 1;
	unsigned long n = strtoul(ns, &end, 10);
	if (end == ns || *end || ns[0] == '-' || n < 1 || n > PN_SHARD_MAX)
		return pn_fail(err, "wants K/N with N from 1 to %u, got '%s'", PN_SHARD_MAX, text);
	if (k >= n)
		return pn_fail(err, "K must be below N (0..%lu), got '%s'", n - 1, text);
	out->k = (uint32_t)k;
	out->n = (uint32_t)n;
	return 0;
}

int pn_shard_holds(const pn_shard *sh, const uint8_t key[16])
{
	if (!sh || sh->n <= 1)
		return 1;
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | key[i];
	return v % sh->n == sh->k;
}

int pn_shard_active(const pn_shard *sh)
{
	return sh && sh->n > 1;
}
