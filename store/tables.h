/*
 * tables.h - typed access per table: the store's records as the messages of
 * schemas/passnet.proto, decoded here rather than by every reader.
 *
 * For each table of PN_RECORD_TABLES, named after the table (pn_table_name),
 * not its message: pn_model_free, pn_model_fn, pn_foreach_occurrence and
 * pn_ranges_decode already name other things.
 *
 *   T   *pn_<table>_unpack(pn_bytes val);
 *         a value already read, as its message (malloc'd, yours), or NULL
 *         when it does not decode (or memory ran out: protobuf-c does not
 *         tell them apart);
 *   int  pn_<table>_get(pn_rtxn *t, const void *key, size_t klen, T **out);
 *         the record under key (on a dupsort table, its first value):
 *         0 and *out, or *out = NULL and PN_REC_MISSING (no such key),
 *         PN_REC_MALFORMED (stored, but does not decode) or -1 (a read
 *         error, warned on stderr by pn_get);
 *   void pn_<table>_free(T *rec);
 *         frees what unpack and get return (NULL is fine);
 *   int  pn_<table>_foreach(pn_rtxn *t, const void *prefix, size_t plen,
 *                           pn_<table>_fn fn, void *ud);
 *         pn_foreach's walk with each value decoded: fn(ud, key, val, rec);
 *         fn's non-zero value stops it and is returned, else pn_foreach's.
 *
 * A malformed record is not skipped: the foreach still calls fn, with rec
 * NULL, so that a reader that counts or reports them (`passnet doctor`)
 * sees every record and one that does not skips it with one test.  rec is
 * freed when fn returns (unpack the val to keep one).  val is the raw value,
 * for what the message does not say: its size, or a models record's variant
 * tag (store/records.h: pn_model_variant_of).
 *
 * Records come as stored: a models record holds neither its main graph
 * (kept apart) nor, for a shape variant, its base's fields; unpack
 * pn_model_record_whole's bytes for the whole model.  The ranges table
 * also holds each model's 17-byte marker (a RangesDone, not InputRanges):
 * its rec means nothing, so readers go by the key's length.
 */
#ifndef PN_TABLES_H
#define PN_TABLES_H

#include <stddef.h>

#include "passnet.pb-c.h"
#include "store/store.h"

/* pn_<table>_get's results besides 0 and -1. */
#define PN_REC_MISSING 1
#define PN_REC_MALFORMED 2

/* X(table name, PN_T_ table, message type, protobuf-c's prefix of it) */
#define PN_RECORD_TABLES(X)                                                        \
	X(models, PN_T_MODELS, Passnet__Model, passnet__model)                     \
	X(model_paths, PN_T_MODEL_PATHS, Passnet__ModelPath, passnet__model_path)  \
	X(candidates, PN_T_CANDIDATES, Passnet__Candidate, passnet__candidate)     \
	X(subgraphs, PN_T_SUBGRAPHS, Passnet__Subgraph, passnet__subgraph)         \
	X(occurrences, PN_T_OCCURRENCES, Passnet__Occurrence, passnet__occurrence) \
	X(profiles, PN_T_PROFILES, Passnet__Profile, passnet__profile)             \
	X(ranges, PN_T_RANGES, Passnet__InputRanges, passnet__input_ranges)        \
	X(errors, PN_T_ERRORS, Passnet__Error, passnet__error)                     \
	X(aliases, PN_T_ALIASES, Passnet__Alias, passnet__alias)                   \
	X(sources, PN_T_SOURCES, Passnet__Source, passnet__source)                 \
	X(blocks, PN_T_BLOCKS, Passnet__Block, passnet__block)

#define PN_RECORD_TABLE_DECLARE(name, table, type, pb)                                 \
	typedef int (*pn_##name##_fn)(void *ud, pn_bytes key, pn_bytes val,            \
				      const type *rec);                                \
	type *pn_##name##_unpack(pn_bytes val);                                        \
	int pn_##name##_get(pn_rtxn *t, const void *key, size_t klen, type **out);     \
	void pn_##name##_free(type *rec);                                              \
	int pn_##name##_foreach(pn_rtxn *t, const void *prefix, size_t plen,           \
				pn_##name##_fn fn, void *ud);

PN_RECORD_TABLES(PN_RECORD_TABLE_DECLARE)

#endif
