/*
 * query.h - lookups the read-only commands share.
 */
#ifndef PN_QUERY_H
#define PN_QUERY_H

#include "common/util.h"
#include "store/store.h"

/* Finds the one key of table (16-byte keys) starting with the hex prefix
 * (at least 4 digits).  0 found, 1 none, -1 ambiguous or malformed (err). */
int pn_find_key(pn_rtxn *t, int table, const char *hex_prefix, pn_key *out, char *err);

/* Opens the store read-only for a command; prints the reason and returns -1
 * on failure (a missing store says how to create one). */
int pn_open_for_reading(const char *db, pn_store **st, pn_rtxn **t);

/* Groups messages into kinds: quoted names become '*' and digit runs '#',
 * so "node 'a' reads undefined value 'b'" and "... 'c' ... 'd'" share one. */
void pn_message_kind(const char *msg, char *out, size_t cap);

#endif
