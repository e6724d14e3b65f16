#include "store/query.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/err.h"

typedef struct prefix_search {
	const char *hex;
	size_t n;
	int found;
	pn_key key;
} prefix_search;

static int match_prefix(void *ud, pn_bytes key, pn_bytes val)
{
	(void)val;
	prefix_search *ps = ud;
	char hex[33];
	if (key.len != 16)
		return 0;
	pn_hex(key.data, 16, hex);
	if (strncasecmp(hex, ps->hex, ps->n))
		return 0;
	if (ps->found++ == 0)
		memcpy(ps->key.b, key.data, 16);
	return ps->found > 1;   /* a second match is enough to know */
}

int pn_find_key(pn_rtxn *t, int table, const char *hex_prefix, pn_key *out, char *err)
{
	size_t n = strlen(hex_prefix);
	if (n < 4 || n > 32 || strspn(hex_prefix, "0123456789abcdefABCDEF") != n)
		return pn_fail(err, "'%s' is not a key (4 to 32 hex digits)", hex_prefix);
	/* Keys sort as their hex spelling, so the prefix's whole bytes narrow
	 * the scan to the matching range. */
	uint8_t prefix[16];
	size_t whole = n / 2;
	for (size_t i = 0; i < whole; i++) {
		unsigned v;
		sscanf(hex_prefix + 2 * i, "%2x", &v);
		prefix[i] = (uint8_t)v;
	}
	prefix_search ps = {.hex = hex_prefix, .n = n};
	pn_foreach(t, table, prefix, whole, match_prefix, &ps);
	if (!ps.found)
		return 1;
	if (ps.found > 1)
		return pn_fail(err, "key prefix '%s' is ambiguous", hex_prefix);
	*out = ps.key;
	return 0;
}

int pn_open_for_reading(const char *db, pn_store **st, pn_rtxn **t)
{
	char err[PN_ERRLEN];
	struct stat sb;
	if (stat(db, &sb)) {
		pn_die("no store at %s (create one with `passnet extract`)", db);
		return -1;
	}
	if (pn_store_open(st, db, 1, err)) {
		pn_die("%s", err);
		return -1;
	}
	if (pn_rtxn_begin(*st, t, err)) {
		pn_store_close(*st);
		pn_die("%s", err);
		return -1;
	}
	return 0;
}

void pn_message_kind(const char *msg, char *out, size_t cap)
{
	size_t o = 0;
	for (const char *p = msg; *p && o + 2 < cap; p++) {
		if (*p == '\'') {
			const char *q = strchr(p + 1, '\'');
			if (q) {
				out[o++] = '*';
				p = q;
				continue;
			}
		}
		if (isdigit((unsigned char)*p)) {
			while (isdigit((unsigned char)p[1]))
				p++;
			out[o++] = '#';
			continue;
		}
		out[o++] = *p;
	}
	out[o] = 0;
}
