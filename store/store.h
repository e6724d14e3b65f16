/*
 * store.h - passnet's LMDB environment: one directory, one named database
 * per table of docs/design.md, a batched single writer and per-thread
 * readers.
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
 *
 * Growing the map remaps the file, which LMDB allows only while no
 * transaction of the process is open.  So the resize waits for the last
 * open pn_rtxn (any thread) to end; meanwhile puts keep going into the
 * in-memory log without blocking (memory grows with what is written),
 * pn_wget still sees them, and new pn_rtxn_begin calls wait unless their
 * thread already holds a transaction.  Keeping a reader open while writing
 * (a foreach that writes results) is therefore fine, but the writes pile up
 * in memory until it ends.  Each open leaves room for as much again as the
 * store already holds, so this is rare.
 *
 * Limits (LMDB's): keys are 1..511 bytes, and so are values of dupsort
 * tables; longer ones are refused with an error (hash long keys).
 */
#ifndef PN_STORE_H
#define PN_STORE_H

#include <stddef.h>
#include <stdint.h>

/* Bump when a record changes meaning; stored in meta "schema_version". */
/* 2: candidates and occurrences are kept per structure (store/structures.h),
 * the structures table lists each structure's models.  3: a model record's
 * main graph is kept apart, in the graphs table (store/records.h).  4: the
 * structure key is the canonical form of the whole graph, reached through
 * the aliases table, and candidates list canonical positions.  5: the
 * graphs table holds each graph packed (a zstd frame, store/records.h).
 * 6: a (structure, strategy) pair's candidates are one list record
 * (schemas/passnet.proto, Candidate.entries), not a record each, and an
 * occurrence lists the pair's candidates with its hash (Occurrence.candidates). */
#define PN_SCHEMA_VERSION 6

enum pn_table {
	PN_T_META,
	PN_T_SOURCES,
	PN_T_MODELS,
	PN_T_MODEL_PATHS,
	PN_T_CANDIDATES,
	PN_T_SUBGRAPHS,
	PN_T_OCCURRENCES,   /* MDB_DUPSORT: many values per key */
	PN_T_STRUCTURES,    /* MDB_DUPSORT: structure key -> the models of it */
	PN_T_ALIASES,       /* record key -> its structure and canonical positions */
	PN_T_GRAPHS,        /* XXH3-128 of a model's GraphProto -> its bytes */
	PN_T_PROFILES,
	PN_T_RANGES,
	PN_T_ERRORS,
	PN_T_BLOCKS,        /* corpus block hash, structure, index -> its positions */
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
int pn_table_is_dupsort(int table);

/* Opens (creating when allowed, like mkdir -p) the store directory.  The
 * initial map size is 1 GiB, or PASSNET_MAPSIZE bytes from the environment
 * (tests use a tiny one to exercise growth), or twice the data already
 * stored if that is more.  A store whose meta "schema_version" differs from
 * PN_SCHEMA_VERSION is refused (there are no migrations). */
int  pn_store_open(pn_store **out, const char *dir, int readonly, char *err);
/* End every pn_rtxn and close the writer first (LMDB's rule). */
void pn_store_close(pn_store *s);
const char *pn_store_path(const pn_store *s);

/* Stops counting the store pages this process has read as its own
 * resident memory (madvise on LMDB's map; the pages stay in the page cache
 * and are mapped again when read).  The store calls it itself once its
 * gets, scans and puts may have mapped 128 MiB (store.c: note_mapped); the
 * stages that walk the whole store call it between chunks as well.  From
 * the writer's thread (the one that may grow the map), with or without
 * readers open, or from any thread inside a transaction. */
void pn_store_drop_pages(pn_store *s);

/* Read transactions: a consistent snapshot until pn_rtxn_end. */
int  pn_rtxn_begin(pn_store *s, pn_rtxn **out, char *err);
void pn_rtxn_end(pn_rtxn *t);
/* 0 found, 1 not found, -1 error.  *val is valid until pn_rtxn_end.  On a
 * dupsort table, the key's first value.  Read functions have no err
 * buffer: an LMDB error there (a damaged store) is printed on stderr. */
int  pn_get(pn_rtxn *t, int table, const void *key, size_t klen, pn_bytes *val);

/* Calls fn for each record whose key starts with prefix (plen may be 0), in
 * key order; for dupsort tables once per value.  fn returns 0 to go on,
 * non-zero to stop (that value is returned). */
typedef int (*pn_foreach_fn)(void *ud, pn_bytes key, pn_bytes val);
int  pn_foreach(pn_rtxn *t, int table, const void *prefix, size_t plen,
		pn_foreach_fn fn, void *ud);
/* On a dupsort table: 1 when the exact (key, value) pair is stored, 0 when
 * not, -1 on an error (a lookup, not a scan of the key's values). */
int  pn_has_pair(pn_rtxn *t, int table, const void *key, size_t klen, const void *val,
		 size_t vlen);
/* Number of records in a table (all duplicates counted). */
int64_t pn_count(pn_rtxn *t, int table);

/* The writer.  batch_bytes = 0 picks the default (8 MiB); a batch is also
 * committed after 20000 ops.  One writer per store, used from one thread:
 * LMDB's write lock belongs to the thread that began the batch, and a call
 * from another thread while a batch is open fails.  After an LMDB failure
 * other than a full map the batch is lost and every later call fails with
 * the same message (nothing after the gap gets committed).  Bad arguments
 * (wrong table kind, key too long) fail alone and leave the writer usable. */
int  pn_writer_open(pn_store *s, pn_writer **out, size_t batch_bytes, char *err);
int  pn_put(pn_writer *w, int table, const void *key, size_t klen,
	    const void *val, size_t vlen, char *err);
/* pn_put replaces the value; it refuses dupsort tables, whose values are
 * added with pn_put_dup (a no-op if that exact pair exists).  pn_del drops
 * the key with all its values; deleting a missing key is not an error. */
int  pn_put_dup(pn_writer *w, int table, const void *key, size_t klen,
		const void *val, size_t vlen, char *err);
int  pn_del(pn_writer *w, int table, const void *key, size_t klen, char *err);
/* Reads through the writer's open transaction (sees its uncommitted puts).
 * *val is valid until the next call on the writer. */
int  pn_wget(pn_writer *w, int table, const void *key, size_t klen, pn_bytes *val);
/* Commits now.  If the map must grow first, waits for the other threads'
 * readers to end; fails if this thread holds one (the batch is kept: end
 * the reader and flush again). */
int  pn_writer_flush(pn_writer *w, char *err);
/* Between hold and release a full batch is not committed: the puts of one
 * group of records (a model's candidates with their subgraphs and
 * occurrences) land in one commit, so a reader, or the store a killed run
 * leaves, never sees half a group.  release commits if the batch is full;
 * pn_writer_flush commits in any case. */
void pn_writer_hold(pn_writer *w);
int  pn_writer_release(pn_writer *w, char *err);
int  pn_writer_close(pn_writer *w, char *err);   /* flush, free either way */
/* Drops the uncommitted batch and frees the writer (tests use it to
 * simulate a crash). */
void pn_writer_abandon(pn_writer *w);

#endif
