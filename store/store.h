/*
 * store.h - passnet's LMDB environment: one directory, one named database
 * per table of DESIGN.md, a batched single writer and per-thread readers.
 *
 * Keys and values are opaque bytes here; the records are protobuf-c messages
 * from schemas/passnet.proto, packed by the callers.
 *
 * Concurrency model: one writer (the thread that owns the pn_writer) and any
 * number of readers, each thread with its own pn_rtxn (the environment is
 * opened with MDB_NOTLS, so OpenMP worker threads may each hold one).
 *
 * Durability: writes go into an open LMDB write transaction that is
 * committed every batch (bytes or puts, whichever first) and on flush/close.
 * A process killed between commits loses only the uncommitted batch, and
 * every stage recomputes exactly what is missing, so a rerun converges to the
 * same state.  On MDB_MAP_FULL the writer aborts, doubles the map size and
 * replays the batch it keeps in memory, so callers never see MAP_FULL.
 */
#ifndef PN_STORE_H
#define PN_STORE_H

#include <stddef.h>
#include <stdint.h>

/* Bump when a record changes meaning; stored in meta "schema_version". */
#define PN_SCHEMA_VERSION 1

enum pn_table {
	PN_T_META,
	PN_T_SOURCES,
	PN_T_MODELS,
	PN_T_MODEL_PATHS,
	PN_T_CANDIDATES,
	PN_T_SUBGRAPHS,
	PN_T_OCCURRENCES,   /* MDB_DUPSORT: many values per key */
	PN_T_PROFILES,
	PN_T_ERRORS,
	PN_T_COUNT
};

typedef struct pn_store pn_store;
typedef struct pn_rtxn pn_rtxn;
typedef struct pn_writer pn_writer;

typedef struct pn_bytes {
	const void *data;
	size_t len;
} pn_bytes;

const char *pn_table_name(int table);   /* "models", ... */

/* Opens (creating when allowed) the store directory.  The initial map size
 * is 1 GiB, or PASSNET_MAPSIZE bytes from the environment (tests use a tiny
 * one to exercise growth). */
int  pn_store_open(pn_store **out, const char *dir, int readonly, char *err);
void pn_store_close(pn_store *s);
const char *pn_store_path(const pn_store *s);

/* Read transactions: a consistent snapshot until pn_rtxn_end. */
int  pn_rtxn_begin(pn_store *s, pn_rtxn **out, char *err);
void pn_rtxn_end(pn_rtxn *t);
/* 0 found, 1 not found, -1 error.  *val is valid until pn_rtxn_end. */
int  pn_get(pn_rtxn *t, int table, const void *key, size_t klen, pn_bytes *val);

/* Calls fn for each record whose key starts with prefix (plen may be 0), in
 * key order; for dupsort tables once per value.  fn returns 0 to go on,
 * non-zero to stop (that value is returned). */
typedef int (*pn_foreach_fn)(void *ud, pn_bytes key, pn_bytes val);
int  pn_foreach(pn_rtxn *t, int table, const void *prefix, size_t plen,
		pn_foreach_fn fn, void *ud);
/* Number of records in a table (all duplicates counted). */
int64_t pn_count(pn_rtxn *t, int table);

/* The writer.  batch_bytes = 0 picks the default (8 MiB). */
int  pn_writer_open(pn_store *s, pn_writer **out, size_t batch_bytes, char *err);
int  pn_put(pn_writer *w, int table, const void *key, size_t klen,
	    const void *val, size_t vlen, char *err);
/* Dupsort tables: adds a value under key (no-op if that exact pair exists). */
int  pn_put_dup(pn_writer *w, int table, const void *key, size_t klen,
		const void *val, size_t vlen, char *err);
int  pn_del(pn_writer *w, int table, const void *key, size_t klen, char *err);
/* Reads through the writer's open transaction (sees its uncommitted puts). */
int  pn_wget(pn_writer *w, int table, const void *key, size_t klen, pn_bytes *val);
int  pn_writer_flush(pn_writer *w, char *err);   /* commit now */
int  pn_writer_close(pn_writer *w, char *err);   /* flush and free */
/* Drops the uncommitted batch (used by tests to simulate a crash). */
void pn_writer_abandon(pn_writer *w);

#endif
