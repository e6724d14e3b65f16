/*
 * store.c - see store.h.
 *
 * Two things here are more than plain LMDB calls.
 *
 * The remap gate.  mdb_env_set_mapsize() unmaps and remaps the file, so it
 * may only run while no transaction of this process is open (LMDB does not
 * check readers: they would be left with dangling pointers).  Each pn_rtxn
 * is linked into its store, and the write txn is flagged, under one mutex.
 * A resize is *requested*; it runs as soon as the last transaction ends,
 * in whichever thread ends it.  While it is pending, new readers wait,
 * unless their thread already holds a transaction (it could be the one the
 * resize waits for).
 *
 * The writer's log.  Every put/del of the current batch is also copied into
 * an in-memory log.  On MDB_MAP_FULL the writer aborts its txn, requests a
 * doubled map, and replays the log into a fresh txn once the resize is done.
 * Until then (readers still open, maybe in the writer's own thread) it
 * keeps logging without blocking, and pn_wget answers from the log plus the
 * last commit.  Callers never see a full map; only a flush must wait.
 */
#include "store/store.h"
#include "store/writer_lock.h"
#include "common/assert.h"
#include "common/err.h"
#include "common/util.h"
#include "passnet.pb-c.h"

#include <errno.h>
#include <lmdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define PN_MAPSIZE_DEFAULT  ((size_t)1 << 30)
#define PN_BATCH_BYTES      ((size_t)8 << 20)
#define PN_BATCH_PUTS       20000
#define PN_MAXDBS           32
/* Reader slots are tied to pn_rtxn objects (MDB_NOTLS), not threads, and a
 * thread may hold several; 64 bytes each in lock.mdb. */
#define PN_MAXREADERS       1024
/* A flush waiting this long for readers to end says so once. */
#define PN_WAIT_WARN_SECS   10
/* Free space below which a failed commit blames the disk (store.c: space_hint). */
#define PN_LOW_SPACE        (64ull << 20)
/* "A resize is pending": distinct from -1, errno values and LMDB's codes. */
#define PN_WAIT             (-2)

static const char *const table_names[PN_T_COUNT] = {
	[PN_T_META] = "meta",
	[PN_T_SOURCES] = "sources",
	[PN_T_MODELS] = "models",
	[PN_T_MODEL_PATHS] = "model_paths",
	[PN_T_CANDIDATES] = "candidates",
	[PN_T_SUBGRAPHS] = "subgraphs",
	[PN_T_OCCURRENCES] = "occurrences",
	[PN_T_STRUCTURES] = "structures",
	[PN_T_ALIASES] = "aliases",
	[PN_T_GRAPHS] = "graphs",
	[PN_T_PROFILES] = "profiles",
	[PN_T_RANGES] = "ranges",
	[PN_T_ERRORS] = "errors",
	[PN_T_BLOCKS] = "blocks",
};

int pn_table_is_dupsort(int table)
{
	return table == PN_T_OCCURRENCES || table == PN_T_STRUCTURES;
}

static const char schema_key[] = "schema_version";

struct pn_store {
	MDB_env *env;
	MDB_dbi dbi[PN_T_COUNT];
	unsigned char has[PN_T_COUNT];  /* a read-only open may miss tables */
	char *path;
	int readonly;
	size_t maxkey;                  /* LMDB's key (and dupsort value) limit */
	pn_writer *writer;              /* LMDB allows one per environment */

	/* The remap gate; everything below is under mu. */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pn_rtxn *readers;
	int wtxn_open;
	pthread_t wtxn_owner;
	int grow;                       /* a resize is pending */
	size_t grow_size;               /* 0: adopt another process's size */
	int remap_rc;                   /* a failed remap leaves no map */

	size_t mapped;                  /* atomic: note_mapped's count since the last drop */
};

struct pn_rtxn {
	pn_store *s;
	MDB_txn *txn;
	pthread_t owner;
	pn_rtxn *prev, *next;
};

enum pn_opkind { PN_OP_PUT, PN_OP_PUT_DUP, PN_OP_DEL };

struct pn_op {
	unsigned char kind, table;
	size_t off, klen, vlen;         /* key then value at buf + off */
};

/* Every read of the map leaves the pages it touched mapped, counted in the
 * process's resident memory until it unmaps them, and each read fault maps
 * the pages around it as well (the kernel's fault-around, 64 KiB, which
 * MADV_RANDOM does not turn off).  A stage that scans 100K model records or
 * puts thousands of occurrences under hashed keys would so map most of a
 * 4 GB store within seconds.  So the store keeps a rough count of what its
 * reads and puts may have mapped since the last drop (note_mapped), and
 * drops the map's pages (pn_store_drop_pages) past MAPPED_BUDGET. */
#define FAULT_AROUND ((size_t)64 << 10)
#define MAPPED_BUDGET ((size_t)128 << 20)
#define MAPPED_SHARE ((size_t)4 << 20)   /* a thread's count joins the store's */

struct pn_writer {
	pn_store *s;
	MDB_txn *txn;
	size_t batch_bytes;
	struct pn_op *ops;              /* the log of what is not committed */
	size_t nops, capops;
	size_t first;                   /* ops before it are committed */
	size_t txn_ops, txn_bytes;      /* ops from first on that txn holds */
	char *buf;
	size_t used, cap;
	char *scratch;                  /* pn_wget's copy of a committed value */
	size_t scratch_cap;
	char failed[PN_ERRLEN];         /* non-empty: the writer is unusable */
	int held;                       /* pn_writer_hold: no commit until released */
	int lock_fd;                    /* writer_lock.h: one writing process */
};

const char *pn_table_name(int table)
{
	if (table < 0 || table >= PN_T_COUNT)
		return "unknown";
	return table_names[table];
}

/* The address and length of LMDB's map of data.mdb, found in
 * /proc/self/maps by the file's device and inode (LMDB does not give it
 * out: mdb_env_info's me_mapaddr is only set with MDB_FIXEDMAP).  0, or -1
 * when not found. */
static int map_of_data_file(pn_store *s, void **addr, size_t *len)
{
	int fd;
	struct stat st;
	if (mdb_env_get_fd(s->env, &fd) || fstat(fd, &st))
		return -1;
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	char line[4096];
	int rc = -1;
	while (rc && fgets(line, sizeof line, f)) {
		unsigned long lo, hi, ino;
		unsigned maj, min;
		if (sscanf(line, "%lx-%lx %*s %*s %x:%x %lu", &lo, &hi, &maj, &min, &ino) == 5 &&
		    ino == (unsigned long)st.st_ino && makedev(maj, min) == st.st_dev) {
			*addr = (void *)lo;
			*len = hi - lo;
			rc = 0;
		}
	}
	fclose(f);
	return rc;
}

void pn_store_drop_pages(pn_store *s)
{
	void *addr;
	size_t len;
	/* LMDB's map is read-only and shared (no MDB_WRITEMAP): dropping its
	 * pages loses nothing, a later read maps them again from the page
	 * cache or the file. */
	if (!map_of_data_file(s, &addr, &len))
		madvise(addr, len, MADV_DONTNEED);
}

/* Counts bytes a read or put may have mapped; past MAPPED_BUDGET, one of
 * the threads that pass it drops the pages.  Each thread adds up its own
 * first (a shared counter bumped on every get cost the streamed pass 10% of
 * its CPU), so the count is rough, as it is anyway.  Called inside a
 * transaction only: the remap gate then keeps the map where
 * pn_store_drop_pages finds it, and a pointer a caller holds into it stays
 * good (the next read faults the page in again). */
static void note_mapped(pn_store *s, size_t bytes)
{
	static _Thread_local size_t mine;
	if ((mine += bytes) < MAPPED_SHARE)
		return;
	size_t add = mine;
	mine = 0;
	if (__atomic_add_fetch(&s->mapped, add, __ATOMIC_RELAXED) >= MAPPED_BUDGET &&
	    __atomic_exchange_n(&s->mapped, 0, __ATOMIC_RELAXED) >= MAPPED_BUDGET)
		pn_store_drop_pages(s);
}

/* What reading a record of k and v bytes may map: a record on a page of
 * its own (a large value) maps itself and what fault-around adds at its
 * end; small records share pages, each page found mapping FAULT_AROUND. */
static size_t record_mapped(size_t k, size_t v)
{
	return v >= 4096 ? v + FAULT_AROUND : (k + v + 16) * (FAULT_AROUND / 4096);
}

const char *pn_store_path(const pn_store *s)
{
	return s->path;
}

static int lmdb_fail(const pn_store *s, char *err, const char *what, int rc)
{
	return pn_fail(err, "store %s: %s: %s", s->path, what, mdb_strerror(rc));
}

static int valid_table(int table)
{
	return table >= 0 && table < PN_T_COUNT;
}

/* --- opening --------------------------------------------------------------- */

static int env_mapsize(size_t *out, char *err)
{
	const char *e = getenv("PASSNET_MAPSIZE");
	*out = PN_MAPSIZE_DEFAULT;
	if (!e || !*e)
		return 0;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(e, &end, 10);
	if (errno || *end || v == 0 || e[0] == '-')
		return pn_fail(err, "PASSNET_MAPSIZE: not a byte count: '%s'", e);
	/* LMDB wants a multiple of the OS page size. */
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	*out = (size_t)((v + page - 1) / page * page);
	return 0;
}

/* mkdir -p: `--db out/new/x.lmdb` should just work. */
static int make_dirs(const char *dir, char *err)
{
	if (!pn_mkdirs(dir, 0777, err))
		return 0;
	char why[PN_ERRLEN];
	snprintf(why, sizeof why, "%s", err);
	return pn_fail(err, "store %s: cannot create %s", dir, why);
}

static int write_schema(pn_store *s, MDB_txn *txn, char *err)
{
	Passnet__Meta m = PASSNET__META__INIT;
	m.has_version = 1;
	m.version = PN_SCHEMA_VERSION;
	unsigned char buf[64];
	size_t n = passnet__meta__pack(&m, buf);
	MDB_val k = { sizeof schema_key - 1, (void *)schema_key };
	MDB_val v = { n, buf };
	int rc = mdb_put(txn, s->dbi[PN_T_META], &k, &v, 0);
	return rc ? lmdb_fail(s, err, "writing meta schema_version", rc) : 0;
}

/* No named table and no record: an LMDB environment nothing was committed to. */
static int env_is_empty(MDB_txn *txn)
{
	MDB_dbi main;
	MDB_stat st;
	return mdb_dbi_open(txn, NULL, 0, &main) == 0 && mdb_stat(txn, main, &st) == 0 &&
	       st.ms_entries == 0;
}

/* Records change meaning across schema versions and there are no
 * migrations, so both a newer and an older store are refused. */
static int check_schema(pn_store *s, MDB_txn *txn, char *err)
{
	MDB_val k = { sizeof schema_key - 1, (void *)schema_key }, v;
	int rc = s->has[PN_T_META] ? mdb_get(txn, s->dbi[PN_T_META], &k, &v)
				   : MDB_NOTFOUND;
	if (rc == MDB_NOTFOUND && !s->readonly)
		return write_schema(s, txn, err);
	/* a store whose first commit never happened (a run killed at once)
	 * holds no table at all: an empty store, not another program's */
	if (rc == MDB_NOTFOUND && env_is_empty(txn))
		return 0;
	if (rc == MDB_NOTFOUND)
		return pn_fail(err, "store %s: not a passnet store (no meta schema_version)",
			       s->path);
	if (rc)
		return lmdb_fail(s, err, "reading meta schema_version", rc);
	Passnet__Meta *m = passnet__meta__unpack(NULL, v.mv_size, v.mv_data);
	if (!m || !m->has_version) {
		if (m)
			passnet__meta__free_unpacked(m, NULL);
		return pn_fail(err, "store %s: corrupt meta schema_version", s->path);
	}
	uint32_t ver = m->version;
	passnet__meta__free_unpacked(m, NULL);
	if (ver > PN_SCHEMA_VERSION)
		return pn_fail(err, "store %s: schema version %u is newer than this passnet's (%u); use a newer passnet",
			       s->path, ver, PN_SCHEMA_VERSION);
	if (ver < PN_SCHEMA_VERSION)
		return pn_fail(err, "store %s: schema version %u is older than this passnet's (%u); rebuild the store",
			       s->path, ver, PN_SCHEMA_VERSION);
	return 0;
}

/* Opens every named database (creating them unless read-only) and checks
 * the schema, in one transaction: committing it makes the handles usable by
 * every later transaction. */
static int open_tables(pn_store *s, char *err)
{
	MDB_txn *txn;
	int rc = mdb_txn_begin(s->env, NULL, s->readonly ? MDB_RDONLY : 0, &txn);
	if (rc)
		return lmdb_fail(s, err, "opening tables", rc);
	for (int t = 0; t < PN_T_COUNT; t++) {
		unsigned flags = s->readonly ? 0 : MDB_CREATE;
		if (pn_table_is_dupsort(t))
			flags |= MDB_DUPSORT;
		rc = mdb_dbi_open(txn, table_names[t], flags, &s->dbi[t]);
		if (rc == MDB_NOTFOUND && s->readonly)
			continue;       /* reads of it find nothing */
		if (rc) {
			mdb_txn_abort(txn);
			char what[64];
			snprintf(what, sizeof what, "opening table %s", table_names[t]);
			return lmdb_fail(s, err, what, rc);
		}
		s->has[t] = 1;
	}
	if (check_schema(s, txn, err)) {
		mdb_txn_abort(txn);
		return -1;
	}
	rc = mdb_txn_commit(txn);
	return rc ? lmdb_fail(s, err, "opening tables", rc) : 0;
}

/* A resize must wait for every reader of the process (see the top), so
 * start each run with room for as much again as the store holds. */
static int add_headroom(pn_store *s, char *err)
{
	MDB_envinfo info;
	MDB_stat st;
	int rc = mdb_env_info(s->env, &info);
	if (!rc)
		rc = mdb_env_stat(s->env, &st);
	if (rc)
		return lmdb_fail(s, err, "reading environment info", rc);
	size_t used = ((size_t)info.me_last_pgno + 1) * st.ms_psize;
	if (info.me_mapsize >= 2 * used)
		return 0;
	rc = mdb_env_set_mapsize(s->env, 2 * used);
	return rc ? lmdb_fail(s, err, "resizing the map", rc) : 0;
}

static int open_env(pn_store *s, char *err)
{
	size_t mapsize;
	if (env_mapsize(&mapsize, err))
		return -1;
	int rc = mdb_env_create(&s->env);
	if (rc) {
		s->env = NULL;
		return lmdb_fail(s, err, "mdb_env_create", rc);
	}
	if ((rc = mdb_env_set_maxdbs(s->env, PN_MAXDBS)) ||
	    (rc = mdb_env_set_maxreaders(s->env, PN_MAXREADERS)) ||
	    (rc = mdb_env_set_mapsize(s->env, mapsize)))
		return lmdb_fail(s, err, "configuring environment", rc);
	/* NOTLS: read slots belong to txns, so OpenMP threads can each hold one.
	 * NORDAHEAD: the stages read records by key, scattered over a file
	 * larger than memory at corpus scale; the kernel's read-ahead would
	 * fill the map with pages nobody asked for.  NOMETASYNC: a commit syncs
	 * the data pages but not the meta page (the next commit's sync carries
	 * it): a system crash may undo the last commit, never corrupt the store,
	 * and a killed process loses nothing it committed; every stage redoes
	 * what is missing.  Half the fsyncs of a build. */
	unsigned flags = MDB_NOTLS | MDB_NORDAHEAD | MDB_NOMETASYNC | (s->readonly ? MDB_RDONLY : 0);
	rc = mdb_env_open(s->env, s->path, flags, 0666);
	if (rc)
		return lmdb_fail(s, err, "open", rc);
	s->maxkey = (size_t)mdb_env_get_maxkeysize(s->env);
	return s->readonly ? 0 : add_headroom(s, err);
}

/* LMDB writes the data file's meta pages when it creates the file, in the
 * writer's first open: a run killed between its mkdir and that write leaves
 * a directory with no data file, or an empty one.  Nothing was stored, so
 * there is nothing to lose, but a reader must say so rather than "ENOENT". */
static int has_commit(const char *dir)
{
	char path[4096];
	struct stat st;
	snprintf(path, sizeof path, "%s/data.mdb", dir);
	return !stat(path, &st) && st.st_size > 0;
}

int pn_store_open(pn_store **out, const char *dir, int readonly, char *err)
{
	*out = NULL;
	pn_store *s = calloc(1, sizeof *s);
	if (!s || !(s->path = strdup(dir))) {
		free(s);
		return pn_fail(err, "store %s: out of memory", dir);
	}
	s->readonly = readonly;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	struct stat st;
	/* LMDB would say ENOENT too, but not that it is the directory. */
	if (readonly && stat(dir, &st))
		pn_fail(err, "store %s: %s", dir, strerror(errno));
	else if (readonly && !S_ISDIR(st.st_mode))
		pn_fail(err, "store %s: not a directory", dir);
	else if (readonly && !has_commit(dir))
		pn_fail(err, "store %s: empty: nothing was ever committed (a run stopped before its first "
			"commit leaves this; run it again)", dir);
	else if (!readonly && make_dirs(dir, err))
		;
	else if (!open_env(s, err) && !open_tables(s, err)) {
		*out = s;
		return 0;
	}
	pn_store_close(s);
	return -1;
}

/* Open read transactions and the writer must be ended first (LMDB's rule). */
void pn_store_close(pn_store *s)
{
	if (!s)
		return;
	PN_ASSERT(!s->writer && !s->readers);
	if (s->env)
		mdb_env_close(s->env);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s->path);
	free(s);
}

/* --- the remap gate (all under s->mu) -------------------------------------- */

static int holds_reader(const pn_store *s, pthread_t self)
{
	for (const pn_rtxn *t = s->readers; t; t = t->next)
		if (pthread_equal(t->owner, self))
			return 1;
	return 0;
}

/* A thread holding a transaction of this store must never wait for the
 * resize: the resize is waiting for that transaction. */
static int may_wait(const pn_store *s, pthread_t self)
{
	if (s->wtxn_open && pthread_equal(s->wtxn_owner, self))
		return 0;
	return !holds_reader(s, self);
}

static void try_remap(pn_store *s)
{
	if (!s->grow || s->readers || s->wtxn_open)
		return;
	int rc = mdb_env_set_mapsize(s->env, s->grow_size);
	if (rc && !s->remap_rc)
		s->remap_rc = rc;
	s->grow = 0;
	s->grow_size = 0;
	pthread_cond_broadcast(&s->cv);
}

/* Asks for a map twice the current size (or, twice == 0, the size another
 * process has set); it happens now if nothing is open. */
static void request_grow(pn_store *s, int twice)
{
	pthread_mutex_lock(&s->mu);
	size_t size = 0;
	if (twice) {
		MDB_envinfo info;
		mdb_env_info(s->env, &info);
		size = info.me_mapsize * 2;
	}
	s->grow = 1;
	if (size > s->grow_size)
		s->grow_size = size;
	try_remap(s);
	pthread_mutex_unlock(&s->mu);
}

static int remap_failed(pn_store *s, char *err)
{
	return lmdb_fail(s, err, "resizing the map", s->remap_rc);
}

static int gate_enter(pn_store *s, pn_rtxn *t, char *err)
{
	pthread_mutex_lock(&s->mu);
	while (s->grow && may_wait(s, t->owner))
		pthread_cond_wait(&s->cv, &s->mu);
	int rc = s->remap_rc;
	if (!rc) {
		t->prev = NULL;
		t->next = s->readers;
		if (s->readers)
			s->readers->prev = t;
		s->readers = t;
	}
	pthread_mutex_unlock(&s->mu);
	return rc ? remap_failed(s, err) : 0;
}

static void gate_leave(pn_store *s, pn_rtxn *t)
{
	pthread_mutex_lock(&s->mu);
	if (t->prev)
		t->prev->next = t->next;
	else
		s->readers = t->next;
	if (t->next)
		t->next->prev = t->prev;
	try_remap(s);
	pthread_mutex_unlock(&s->mu);
}

/* Blocks until a pending resize is done; the caller has checked may_wait. */
static void wait_remap(pn_store *s)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += PN_WAIT_WARN_SECS;
	int warned = 0;
	pthread_mutex_lock(&s->mu);
	while (s->grow) {
		if (pthread_cond_timedwait(&s->cv, &s->mu, &until) == ETIMEDOUT &&
		    !warned && s->grow) {
			pn_warn("store %s: growing the map waits for read transactions to end",
				s->path);
			warned = 1;
		}
	}
	pthread_mutex_unlock(&s->mu);
}

/* Begins the write txn unless a resize is pending: PN_WAIT, 0 or an LMDB
 * error. */
static int wtxn_begin(pn_store *s, MDB_txn **txn)
{
	pthread_mutex_lock(&s->mu);
	int rc = s->remap_rc ? s->remap_rc : s->grow ? PN_WAIT : 0;
	if (!rc) {
		s->wtxn_open = 1;
		s->wtxn_owner = pthread_self();
	}
	pthread_mutex_unlock(&s->mu);
	if (rc)
		return rc;
	rc = mdb_txn_begin(s->env, NULL, 0, txn);
	if (rc) {
		pthread_mutex_lock(&s->mu);
		s->wtxn_open = 0;
		try_remap(s);
		pthread_mutex_unlock(&s->mu);
	}
	return rc;
}

/* Commits or aborts; either way the txn is gone afterwards. */
static int wtxn_end(pn_store *s, MDB_txn *txn, int commit)
{
	int rc = 0;
	if (commit)
		rc = mdb_txn_commit(txn);
	else
		mdb_txn_abort(txn);
	pthread_mutex_lock(&s->mu);
	s->wtxn_open = 0;
	try_remap(s);
	pthread_mutex_unlock(&s->mu);
	return rc;
}

/* --- readers --------------------------------------------------------------- */

/* Another process grew the map beyond ours: adopt its size, waiting for
 * our other transactions unless this thread holds one. */
static int adopt_size(pn_store *s, char *err)
{
	request_grow(s, 0);
	pthread_mutex_lock(&s->mu);
	int stuck = s->grow && !may_wait(s, pthread_self());
	pthread_mutex_unlock(&s->mu);
	if (stuck)
		return pn_fail(err, "store %s: another process grew the map; this thread must end its transactions before reading on",
			       s->path);
	return 0;
}

int pn_rtxn_begin(pn_store *s, pn_rtxn **out, char *err)
{
	*out = NULL;
	pn_rtxn *t = calloc(1, sizeof *t);
	if (!t)
		return pn_fail(err, "store %s: out of memory", s->path);
	t->s = s;
	t->owner = pthread_self();
	for (;;) {
		if (gate_enter(s, t, err))
			break;
		int rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &t->txn);
		if (!rc) {
			*out = t;
			return 0;
		}
		gate_leave(s, t);
		if (rc != MDB_MAP_RESIZED) {
			lmdb_fail(s, err, "beginning a read transaction", rc);
			break;
		}
		if (adopt_size(s, err))
			break;
	}
	free(t);
	return -1;
}

void pn_rtxn_end(pn_rtxn *t)
{
	if (!t)
		return;
	mdb_txn_abort(t->txn);
	gate_leave(t->s, t);
	free(t);
}

/* A key LMDB cannot store cannot be in the store. */
static int searchable(const pn_store *s, int table, size_t klen)
{
	return s->has[table] && klen > 0 && klen <= s->maxkey;
}

/* Reads have no err buffer: an error there means a damaged store or a bug,
 * so it is said on stderr and -1 returned. */
static int read_get(pn_store *s, MDB_txn *txn, int table, const void *key,
		    size_t klen, pn_bytes *val)
{
	if (!valid_table(table))
		return -1;
	if (!searchable(s, table, klen))
		return 1;
	MDB_val k = { klen, (void *)key }, v;
	int rc = mdb_get(txn, s->dbi[table], &k, &v);
	if (rc == MDB_NOTFOUND)
		return 1;
	if (rc) {
		pn_warn("store %s: get from %s: %s", s->path, table_names[table],
			mdb_strerror(rc));
		return -1;
	}
	note_mapped(s, FAULT_AROUND + record_mapped(klen, v.mv_size));   /* path + record */
	val->data = v.mv_data;
	val->len = v.mv_size;
	return 0;
}

int pn_get(pn_rtxn *t, int table, const void *key, size_t klen, pn_bytes *val)
{
	return read_get(t->s, t->txn, table, key, klen, val);
}

/* A cursor on one table of t's snapshot; -1 (warned) on an LMDB error. */
static int open_cursor(pn_rtxn *t, int table, MDB_cursor **c)
{
	int rc = mdb_cursor_open(t->txn, t->s->dbi[table], c);
	if (rc)
		pn_warn("store %s: cursor on %s: %s", t->s->path, table_names[table],
			mdb_strerror(rc));
	return rc ? -1 : 0;
}

int pn_has_pair(pn_rtxn *t, int table, const void *key, size_t klen, const void *val,
		size_t vlen)
{
	pn_store *s = t->s;
	if (!valid_table(table) || !pn_table_is_dupsort(table))
		return -1;
	if (!s->has[table] || klen == 0 || klen > s->maxkey)
		return 0;
	MDB_cursor *c;
	if (open_cursor(t, table, &c))
		return -1;
	MDB_val k = { klen, (void *)key }, v = { vlen, (void *)val };
	int rc = mdb_cursor_get(c, &k, &v, MDB_GET_BOTH);
	mdb_cursor_close(c);
	if (rc && rc != MDB_NOTFOUND) {
		pn_warn("store %s: looking up a pair in %s: %s", s->path, table_names[table],
			mdb_strerror(rc));
		return -1;
	}
	return rc == 0;
}

/* An empty prefix (NULL, 0: the whole table) matches every key without
 * calling memcmp, whose arguments must not be NULL even for 0 bytes. */
static int has_prefix(const MDB_val *k, const void *prefix, size_t plen)
{
	return plen == 0 || (k->mv_size >= plen && !memcmp(k->mv_data, prefix, plen));
}

int pn_foreach(pn_rtxn *t, int table, const void *prefix, size_t plen,
	       pn_foreach_fn fn, void *ud)
{
	pn_store *s = t->s;
	if (!valid_table(table))
		return -1;
	if (!s->has[table] || plen > s->maxkey)
		return 0;
	MDB_cursor *c;
	if (open_cursor(t, table, &c))
		return -1;
	MDB_val k = { plen, (void *)prefix }, v;
	int ret = 0;
	int rc = mdb_cursor_get(c, &k, &v, plen ? MDB_SET_RANGE : MDB_FIRST);
	while (!rc && has_prefix(&k, prefix, plen)) {
		pn_bytes kb = { k.mv_data, k.mv_size }, vb = { v.mv_data, v.mv_size };
		note_mapped(s, record_mapped(k.mv_size, v.mv_size));
		if ((ret = fn(ud, kb, vb)))
			break;
		rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
	}
	if (rc && rc != MDB_NOTFOUND) {
		pn_warn("store %s: scanning %s: %s", s->path, table_names[table],
			mdb_strerror(rc));
		ret = -1;
	}
	mdb_cursor_close(c);
	return ret;
}

int64_t pn_count(pn_rtxn *t, int table)
{
	pn_store *s = t->s;
	if (!valid_table(table))
		return -1;
	if (!s->has[table])
		return 0;
	MDB_stat st;
	int rc = mdb_stat(t->txn, s->dbi[table], &st);
	if (rc) {
		pn_warn("store %s: stat of %s: %s", s->path, table_names[table],
			mdb_strerror(rc));
		return -1;
	}
	return (int64_t)st.ms_entries;   /* counts every duplicate */
}

/* --- the writer: log and transaction --------------------------------------- */

int pn_writer_open(pn_store *s, pn_writer **out, size_t batch_bytes, char *err)
{
	*out = NULL;
	if (s->readonly)
		return pn_fail(err, "store %s: opened read-only, cannot write", s->path);
	if (s->writer)
		return pn_fail(err, "store %s: a writer is already open", s->path);
	pn_writer *w = calloc(1, sizeof *w);
	if (!w)
		return pn_fail(err, "store %s: out of memory", s->path);
	if (pn_writer_lock(s->path, &w->lock_fd, err)) {
		free(w);
		return -1;
	}
	w->s = s;
	/* PASSNET_WRITE_BATCH shrinks the default so tests can kill a run
	 * between many small commits. */
	const char *env = getenv("PASSNET_WRITE_BATCH");
	if (!batch_bytes && env && atoll(env) > 0)
		batch_bytes = (size_t)atoll(env);
	w->batch_bytes = batch_bytes ? batch_bytes : PN_BATCH_BYTES;
	s->writer = w;
	*out = w;
	return 0;
}

/* The ops the open txn holds go back to being only logged. */
static void w_abort(pn_writer *w)
{
	if (w->txn)
		wtxn_end(w->s, w->txn, 0);
	w->txn = NULL;
	w->txn_ops = 0;
	w->txn_bytes = 0;
}

/* Failures other than a full map leave the LMDB txn unusable and the batch
 * lost.  Later calls keep failing, so that nothing after the gap gets
 * committed as if the batch had been. */
/* LMDB reports a short write (a full disk) as EIO: say when the store's
 * filesystem is nearly full, so the one line names the cause. */
static void space_hint(const pn_store *s, char *buf, size_t n)
{
	struct statvfs v;
	buf[0] = 0;
	if (statvfs(s->path, &v) == 0) {
		unsigned long long avail = (unsigned long long)v.f_bavail * v.f_frsize;
		if (avail < PN_LOW_SPACE)
			snprintf(buf, n, "; the store's filesystem is full (%llu KiB free)", avail >> 10);
	}
}

static int w_broken(pn_writer *w, char *err)
{
	char hint[96];
	space_hint(w->s, hint, sizeof hint);
	snprintf(w->failed, PN_ERRLEN,
		 "%s%s (the last %zu writes are not committed; what was committed is kept, and "
		 "running the command again resumes)", err, hint, w->nops - w->first);
	w_abort(w);
	w->nops = w->first = w->used = 0;
	return pn_fail(err, "%s", w->failed);
}

/* Applies one logged op; the no-op outcomes are not errors. */
static int w_apply(pn_writer *w, const struct pn_op *op)
{
	MDB_dbi dbi = w->s->dbi[op->table];
	MDB_val k = { op->klen, w->buf + op->off };
	MDB_val v = { op->vlen, w->buf + op->off + op->klen };
	int rc;
	switch (op->kind) {
	case PN_OP_PUT:
		return mdb_put(w->txn, dbi, &k, &v, 0);
	case PN_OP_PUT_DUP:
		rc = mdb_put(w->txn, dbi, &k, &v, MDB_NODUPDATA);
		return rc == MDB_KEYEXIST ? 0 : rc;
	default:
		rc = mdb_del(w->txn, dbi, &k, NULL);
		return rc == MDB_NOTFOUND ? 0 : rc;
	}
}

static int w_batch_full(const pn_writer *w)
{
	return w->txn_bytes >= w->batch_bytes || w->txn_ops >= PN_BATCH_PUTS;
}

/* Commits the open txn: 0, MDB_MAP_FULL (txn gone, its ops only logged
 * again) or -1 (writer broken). */
static int w_commit_txn(pn_writer *w, char *err)
{
	int rc = wtxn_end(w->s, w->txn, 1);
	w->txn = NULL;
	if (rc == MDB_MAP_FULL) {
		w->txn_ops = w->txn_bytes = 0;
		return rc;
	}
	if (rc) {
		lmdb_fail(w->s, err, "commit", rc);
		return w_broken(w, err);
	}
	w->first += w->txn_ops;
	w->txn_ops = w->txn_bytes = 0;
	if (w->first == w->nops)
		w->nops = w->first = w->used = 0;
	return 0;
}

/* Opens the write txn if needed.  0, -1 (err set) or PN_WAIT. */
static int w_begin(pn_writer *w, char *err)
{
	while (!w->txn) {
		int rc = wtxn_begin(w->s, &w->txn);
		if (rc == PN_WAIT)
			return PN_WAIT;
		if (!rc)
			break;
		w->txn = NULL;
		if (rc != MDB_MAP_RESIZED) {
			lmdb_fail(w->s, err, "beginning a write transaction", rc);
			return w_broken(w, err);
		}
		request_grow(w->s, 0);  /* another process grew it: adopt */
	}
	return 0;
}

/* Brings the open txn up to the end of the log, committing every batch on
 * the way (a log that waited for a resize can be far larger than one txn
 * should be) and growing the map when full.  0, -1 (err set) or PN_WAIT. */
static int w_start(pn_writer *w, char *err)
{
	for (;;) {
		int rc = w_begin(w, err);
		if (rc)
			return rc;
		size_t i = w->first + w->txn_ops;
		if (i == w->nops)
			return 0;
		if (w->txn_ops && !w->held && w_batch_full(w))
			rc = w_commit_txn(w, err);
		else if (!(rc = w_apply(w, &w->ops[i]))) {
			w->txn_ops++;
			w->txn_bytes += w->ops[i].klen + w->ops[i].vlen;
			/* a put reads the pages on its key's path */
			note_mapped(w->s, FAULT_AROUND + w->ops[i].klen + w->ops[i].vlen);
			continue;
		} else if (rc == MDB_MAP_FULL) {
			w_abort(w);
		} else {
			char what[64];
			snprintf(what, sizeof what, "writing to %s",
				 table_names[w->ops[i].table]);
			lmdb_fail(w->s, err, what, rc);
			return w_broken(w, err);
		}
		if (rc == MDB_MAP_FULL)
			request_grow(w->s, 1);
		else if (rc)
			return -1;
	}
}

static int self_may_wait(pn_store *s)
{
	pthread_mutex_lock(&s->mu);
	int ok = may_wait(s, pthread_self());
	pthread_mutex_unlock(&s->mu);
	return ok;
}

/* Commits all of the log.  A pending resize is waited for when `must`
 * (flush), else the log just stays pending (batch boundaries). */
static int w_commit(pn_writer *w, int must, char *err)
{
	for (;;) {
		int rc = w_start(w, err);
		if (rc == PN_WAIT && !must)
			return 0;
		if (rc == PN_WAIT && !self_may_wait(w->s))
			return pn_fail(err, "store %s: cannot commit: the map must grow, and this thread holds a read transaction",
				       w->s->path);
		if (rc == PN_WAIT) {
			wait_remap(w->s);
			continue;
		}
		if (rc)
			return -1;
		rc = w_commit_txn(w, err);
		if (rc != MDB_MAP_FULL)
			return rc;
		request_grow(w->s, 1);
	}
}

static int w_log(pn_writer *w, int kind, int table, const void *key, size_t klen,
		 const void *val, size_t vlen, char *err)
{
	if (w->nops == w->capops) {
		size_t n = w->capops ? 2 * w->capops : 1024;
		struct pn_op *ops = realloc(w->ops, n * sizeof *ops);
		if (!ops)
			return pn_fail(err, "store %s: out of memory", w->s->path);
		w->ops = ops;
		w->capops = n;
	}
	if (w->used + klen + vlen > w->cap) {
		size_t n = w->cap ? w->cap : 1 << 16;
		while (n < w->used + klen + vlen)
			n *= 2;
		char *buf = realloc(w->buf, n);
		if (!buf)
			return pn_fail(err, "store %s: out of memory", w->s->path);
		w->buf = buf;
		w->cap = n;
	}
	w->ops[w->nops++] = (struct pn_op){ kind, table, w->used, klen, vlen };
	memcpy(w->buf + w->used, key, klen);
	if (vlen)
		memcpy(w->buf + w->used + klen, val, vlen);
	w->used += klen + vlen;
	return 0;
}

/* LMDB's write lock is a mutex owned by the thread that began the txn. */
static int w_check_thread(pn_writer *w, char *err)
{
	pn_store *s = w->s;
	pthread_mutex_lock(&s->mu);
	int other = w->txn && !pthread_equal(s->wtxn_owner, pthread_self());
	pthread_mutex_unlock(&s->mu);
	if (other)
		return pn_fail(err, "store %s: writer used from a thread other than the one that began its batch",
			       s->path);
	return 0;
}

/* Refuses what LMDB would refuse, before it reaches the log. */
static int w_check(pn_writer *w, int kind, int table, size_t klen, size_t vlen,
		   char *err)
{
	pn_store *s = w->s;
	if (w->failed[0])
		return pn_fail(err, "%s", w->failed);
	if (!valid_table(table))
		return pn_fail(err, "store %s: no table %d", s->path, table);
	int dup = pn_table_is_dupsort(table);
	if (kind == PN_OP_PUT && dup)
		return pn_fail(err, "store %s: %s is a dupsort table, use pn_put_dup",
			       s->path, table_names[table]);
	if (kind == PN_OP_PUT_DUP && !dup)
		return pn_fail(err, "store %s: %s is not a dupsort table",
			       s->path, table_names[table]);
	if (klen == 0 || klen > s->maxkey)
		return pn_fail(err, "store %s: %s: key of %zu bytes (LMDB allows 1..%zu)",
			       s->path, table_names[table], klen, s->maxkey);
	if (dup && vlen > s->maxkey)
		return pn_fail(err, "store %s: %s: dupsort value of %zu bytes (LMDB allows up to %zu)",
			       s->path, table_names[table], vlen, s->maxkey);
	return w_check_thread(w, err);
}

/* Logs the op and brings the txn up to date.  While a resize is pending
 * the op stays in the log only: writes never block. */
static int w_do(pn_writer *w, int kind, int table, const void *key, size_t klen,
		const void *val, size_t vlen, char *err)
{
	if (w_check(w, kind, table, klen, vlen, err) ||
	    w_log(w, kind, table, key, klen, val, vlen, err))
		return -1;
	int rc = w_start(w, err);
	if (rc == PN_WAIT)
		return 0;
	if (rc)
		return -1;
	return !w->held && w_batch_full(w) ? w_commit(w, 0, err) : 0;
}

int pn_put(pn_writer *w, int table, const void *key, size_t klen,
	   const void *val, size_t vlen, char *err)
{
	return w_do(w, PN_OP_PUT, table, key, klen, val, vlen, err);
}

int pn_put_dup(pn_writer *w, int table, const void *key, size_t klen,
	       const void *val, size_t vlen, char *err)
{
	return w_do(w, PN_OP_PUT_DUP, table, key, klen, val, vlen, err);
}

int pn_del(pn_writer *w, int table, const void *key, size_t klen, char *err)
{
	return w_do(w, PN_OP_DEL, table, key, klen, NULL, 0, err);
}

/* --- the writer: reads, flush, close --------------------------------------- */

/* LMDB's default order of duplicates: bytes, then the shorter first. */
static int dup_cmp(const void *a, size_t alen, const void *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);
	return c ? c : (alen > blen) - (alen < blen);
}

/* The last commit's value of key, copied: no reader stays open, so the
 * pending resize is not held up. */
static int w_get_committed(pn_writer *w, int table, const void *key, size_t klen,
			   pn_bytes *val)
{
	char err[PN_ERRLEN];
	pn_rtxn *t;
	if (pn_rtxn_begin(w->s, &t, err)) {
		pn_warn("%s", err);
		return -1;
	}
	int rc = pn_get(t, table, key, klen, val);
	if (!rc && val->len > w->scratch_cap) {
		char *p = realloc(w->scratch, val->len);
		if (p) {
			w->scratch = p;
			w->scratch_cap = val->len;
		} else {
			rc = -1;
		}
	}
	if (!rc) {
		if (val->len)
			memcpy(w->scratch, val->data, val->len);
		val->data = w->scratch;
	}
	pn_rtxn_end(t);
	return rc;
}

/* pn_wget while the log waits for a resize: the newest logged op on key
 * decides; for dupsort tables the smallest value logged since the last
 * delete competes with the committed first value. */
static int w_get_logged(pn_writer *w, int table, const void *key, size_t klen,
			pn_bytes *val)
{
	const struct pn_op *best = NULL;
	int deleted = 0, dup = pn_table_is_dupsort(table);
	for (size_t i = w->nops; i-- > w->first;) {
		const struct pn_op *op = &w->ops[i];
		const char *k = w->buf + op->off;
		if (op->table != table || op->klen != klen || memcmp(k, key, klen))
			continue;
		if (op->kind == PN_OP_DEL) {
			deleted = 1;
			break;
		}
		if (!best || dup_cmp(k + klen, op->vlen, w->buf + best->off + klen,
				     best->vlen) < 0)
			best = op;
		if (!dup)
			break;
	}
	int rc = 1;
	if (!deleted && (!best || dup))
		rc = w_get_committed(w, table, key, klen, val);
	if (rc < 0 || !best)
		return rc;
	const char *bv = w->buf + best->off + klen;
	if (rc == 1 || dup_cmp(bv, best->vlen, val->data, val->len) < 0)
		*val = (pn_bytes){ bv, best->vlen };
	return 0;
}

int pn_wget(pn_writer *w, int table, const void *key, size_t klen, pn_bytes *val)
{
	char err[PN_ERRLEN];
	if (!valid_table(table) || w->failed[0])
		return -1;
	if (w_check_thread(w, err)) {
		pn_warn("%s", err);
		return -1;
	}
	if (!searchable(w->s, table, klen))
		return 1;
	int rc = w_start(w, err);
	if (rc == PN_WAIT)
		return w_get_logged(w, table, key, klen, val);
	if (rc) {
		pn_warn("%s", err);
		return -1;
	}
	return read_get(w->s, w->txn, table, key, klen, val);
}

void pn_writer_hold(pn_writer *w)
{
	PN_ASSERT(!w->held);   /* one group at a time: holds do not nest */
	w->held = 1;
}

/* The group is whole: commit now if the batch is full (w_commit without
 * waiting for a pending resize: the next put or flush commits then). */
int pn_writer_release(pn_writer *w, char *err)
{
	PN_ASSERT(w->held);
	w->held = 0;
	if (w->failed[0])
		return pn_fail(err, "%s", w->failed);
	if (!w->txn || !w->txn_ops || !w_batch_full(w))
		return 0;
	return w_commit(w, 0, err);
}

int pn_writer_flush(pn_writer *w, char *err)
{
	if (w->failed[0])
		return pn_fail(err, "%s", w->failed);
	if (w_check_thread(w, err))
		return -1;
	if (!w->txn && !w->nops)
		return 0;
	return w_commit(w, 1, err);
}

static void w_free(pn_writer *w)
{
	w_abort(w);
	pn_writer_unlock(w->lock_fd);
	w->s->writer = NULL;
	free(w->ops);
	free(w->buf);
	free(w->scratch);
	free(w);
}

int pn_writer_close(pn_writer *w, char *err)
{
	if (!w)
		return 0;
	int rc = pn_writer_flush(w, err);
	w_free(w);
	return rc;
}

void pn_writer_abandon(pn_writer *w)
{
	if (w)
		w_free(w);
}
