/*
 * extract.c - see extract.h.  The walk (sources.c) feeds units into a batch;
 * a full batch is screened against the store, decoded in parallel
 * (ingest.c) and committed in order.
 */
#include "extract/extract.h"

#include <omp.h>
#include <stdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "common/assert.h"
#include "common/claim.h"
#include "common/digest.h"
#include "common/err.h"
#include "common/shard.h"
#include "common/util.h"
#include "extract/ingest.h"
#include "extract/variant_memo.h"
#include "extract/weight_memo.h"
#include "extract/sources.h"
#include "store/records.h"
#include "store/tables.h"

/* units read ahead of their commit: at most this many, holding this much */
#define WINDOW_UNITS 128
#define WINDOW_BYTES ((size_t)256 << 20)
/* commits between two returns of free memory to the system */
#define TRIM_EVERY 64

enum unit_fate { FATE_DECODE, FATE_KNOWN, FATE_DUPLICATE };

typedef struct item {
	pn_unit *u;
	pn_key model, place;
	int fate;
	int stored_status;     /* FATE_KNOWN, FATE_DUPLICATE: status of the stored model */
	int done;              /* result is ready (set by the thread that claimed it) */
	pn_ingest result;
} item;

typedef struct extractor {
	pn_store *st;
	pn_writer *w;
	const pn_source_spec *src;
	int threads;
	item items[WINDOW_UNITS];   /* the window: unit k in items[k % WINDOW_UNITS] */
	int64_t read, claimed, committed;   /* units so far (common/claim.h) */
	int finished;              /* the walk is over: the team's decoders stop */
	size_t bytes;              /* of the units read and not committed */
	pn_extract_stats *stats;
	const pn_ingest_opts *ingest;
	const pn_shard *shard;   /* the model files this run takes */
	pn_progress progress;
	uint64_t ok, failed;       /* of this source, for its record */
	char *err;
	int failed_hard;           /* a store error: stop */
} extractor;

/* --- files beside a model, through its folder ----------------------------------- */

static int folder_read(void *ud, const char *rel, void **data, size_t *len, char *err)
{
	return pn_folder_read(ud, rel, data, len, err);
}

static int folder_list(void *ud, const char *rel, char ***names, char *err)
{
	return pn_folder_list(ud, rel, names, err);
}

/* --- screening: which units need decoding ----------------------------------------- */

/* (source, path) of a stored model, to pick the canonical place, and its
 * status, which every place holding the same bytes shares. */
static int stored_place(pn_writer *w, const pn_key *mk, char **source, char **path, int *status)
{
	pn_bytes v;
	if (pn_wget(w, PN_T_MODELS, mk->b, 16, &v) != 0)
		return 1;
	Passnet__Model *m = pn_models_unpack(v);
	if (!m)
		return -1;
	*source = strdup(m->source ? m->source : "");
	*path = strdup(m->path ? m->path : "");
	if (status)
		*status = (int)m->status;
	pn_models_free(m);
	return 0;
}

static int place_less(const char *s1, const char *p1, const char *s2, const char *p2)
{
	int c = strcmp(s1, s2);
	return c < 0 || (c == 0 && strcmp(p1, p2) < 0);
}

/* The place holds the same bytes as last time; *status is what they gave
 * then (a failed model is known too, and stays failed). */
static int known_place(pn_writer *w, const item *it, int *status)
{
	pn_bytes v;
	if (pn_wget(w, PN_T_MODEL_PATHS, it->place.b, 16, &v) != 0)
		return 0;
	Passnet__ModelPath *mp = pn_model_paths_unpack(v);
	int same = mp && mp->has_model && mp->model.len == 16 && !memcmp(mp->model.data, it->model.b, 16);
	if (same)
		*status = (int)mp->status;
	pn_model_paths_free(mp);
	return same;
}

/* A model whose bytes are stored already needs decoding again only if this
 * place is the new canonical (least) one. */
static int screen(extractor *x, item *it)
{
	it->model = pn_key_of(it->u->bytes, it->u->len);
	it->place = pn_place_key(it->u->source, it->u->path);
	if (known_place(x->w, it, &it->stored_status))
		return FATE_KNOWN;
	char *s = NULL, *p = NULL;
	int rc = stored_place(x->w, &it->model, &s, &p, &it->stored_status);
	int fate = FATE_DECODE;
	/* the model stored from this very place, but its place record missing:
	 * a killed run, which may have stored the model without all its shape
	 * variants, so it is decoded again */
	if (rc == 0 && !place_less(it->u->source, it->u->path, s, p) &&
	    (strcmp(it->u->source, s) || strcmp(it->u->path, p)))
		fate = FATE_DUPLICATE;
	free(s);
	free(p);
	return fate;
}

/* --- committing ------------------------------------------------------------------- */

static int put_model_path(extractor *x, const item *it, int status)
{
	Passnet__ModelPath mp;
	passnet__model_path__init(&mp);
	mp.has_version = 1;
	mp.version = PN_SCHEMA_VERSION;
	mp.has_model = 1;
	mp.model.data = (uint8_t *)it->model.b;
	mp.model.len = 16;
	mp.has_status = 1;
	mp.status = (Passnet__ModelStatus)status;
	mp.source = it->u->source;
	mp.path = it->u->path;
	return pn_put_msg(x->w, PN_T_MODEL_PATHS, it->place.b, 16, &mp.base, x->err);
}

static int commit_failed(extractor *x, item *it)
{
	pn_error_line("%s: %s: %s", it->u->source, it->u->path, it->result.err);
	x->stats->failed++;
	x->failed++;
	if (pn_error_put(x->w, &it->place, "extract", it->u->source, it->u->path, it->result.err,
			 x->err))
		return -1;
	return put_model_path(x, it, PASSNET__MODEL_STATUS__MODEL_FAILED);
}

/* Two places of one batch may hold the same bytes: the second finds the
 * first's record and keeps whichever place is less. */
static int commit_ok(extractor *x, item *it)
{
	char *s = NULL, *p = NULL;
	int have = stored_place(x->w, &it->model, &s, &p, NULL) == 0;
	int same = have && !strcmp(it->u->source, s) && !strcmp(it->u->path, p);
	int replace = !have || same || place_less(it->u->source, it->u->path, s, p);
	/* counted as the run that was killed would have counted it */
	have &= !same;
	free(s);
	free(p);
	if (replace && pn_model_record_put(x->w, it->model.b, it->result.record,
					   it->result.record_len, x->err))
		return -1;
	/* the variants after their base: a kill between leaves a base whose
	 * variants are missing, which the rerun (the place is not yet in
	 * model_paths) decodes and stores again */
	for (int k = 0; replace && k < it->result.n_variants; k++) {
		const pn_ingest_variant *v = &it->result.variants[k];
		if (pn_put(x->w, PN_T_MODELS, v->key.b, 16, v->record, v->record_len, x->err))
			return -1;
		if (!have)
			x->stats->variants++;
	}
	if (have)
		x->stats->duplicates++;
	else
		x->stats->new_models++;
	/* its warnings are kept in its record (`passnet ls --warnings`) */
	if (!have && it->result.status == PASSNET__MODEL_STATUS__MODEL_WARNING)
		x->stats->warned++;
	if (!have && it->result.check_reused)
		x->stats->checks_reused++;
	if (!have && it->result.check_booked)
		x->stats->checks_booked++;
	if (!have && it->result.variants_reused)
		x->stats->variants_reused++;
	if (!have && it->result.independence_reused)
		x->stats->independence_reused++;
	x->ok++;
	if (pn_error_del(x->w, &it->place, "extract", x->err))
		return -1;
	return put_model_path(x, it, it->result.status);
}

static int commit(extractor *x, item *it)
{
	if (it->fate == FATE_KNOWN) {
		/* Counted as the first run counted it, so that the source's
		 * record comes out the same. */
		x->stats->known++;
		if (it->stored_status == PASSNET__MODEL_STATUS__MODEL_FAILED)
			x->failed++;
		else
			x->ok++;
		return 0;
	}
	if (it->fate == FATE_DUPLICATE) {
		x->stats->duplicates++;
		x->ok++;
		return put_model_path(x, it, it->stored_status);
	}
	if (it->result.status == PASSNET__MODEL_STATUS__MODEL_FAILED)
		return commit_failed(x, it);
	return commit_ok(x, it);
}

/* --- the window of units in flight ------------------------------------------------ */

/*
 * The walker's thread (thread 0 of pn_extract's team, which owns the
 * writer) reads units into a ring, screens each and commits them in read
 * order; every thread of the team claims the next unit read and not yet
 * claimed and decodes it.  So reading, decoding and committing overlap,
 * and no thread waits at the end of a batch for the slowest model of it:
 * thread 0 decodes too while the window is full.  Commits stay in read
 * order, so the store does not depend on which thread decoded what.
 *
 * A unit's slot is written by thread 0 before `read` passes it, by its
 * claimer before its `done`, and reused only after its commit.
 */

/* Any thread: claims the next unit read and not yet claimed and decodes
 * it (no store access).  1, or 0 when every unit read is claimed. */
static int claim_and_decode(void *ud)
{
	extractor *x = ud;
	int64_t k = pn_claim_next(&x->claimed, &x->read);
	if (k < 0)
		return 0;
	item *it = &x->items[k % WINDOW_UNITS];
	if (it->fate == FATE_DECODE) {
		pn_fileio io = {folder_read, folder_list, it->u->folder};
		pn_ingest_model(it->u->bytes, it->u->len, &io, it->u->source, it->u->path,
				x->ingest, &it->result);
	}
	__atomic_store_n(&it->done, 1, __ATOMIC_RELEASE);
	return 1;
}

static void release_item(extractor *x, item *it)
{
	if (it->fate == FATE_DECODE)
		x->stats->bytes += it->u->len;
	x->bytes -= it->u->len;
	pn_ingest_clear(&it->result);
	pn_unit_free(it->u);
	it->u = NULL;
}

/* Thread 0: commits the units decoded, in read order, up to the first one
 * still being decoded.  0, or -1 when the store failed (the run stops; the
 * units after it are released uncommitted). */
static int commit_ready(extractor *x)
{
	while (x->committed < x->read) {
		item *it = &x->items[x->committed % WINDOW_UNITS];
		if (!__atomic_load_n(&it->done, __ATOMIC_ACQUIRE))
			return 0;
		int rc = x->failed_hard ? 0 : commit(x, it);
		release_item(x, it);
		x->committed++;
		/* The checks' runs free large and small blocks in every
		 * worker's malloc arena; without handing the free pages back
		 * every so often, the process kept the sum of each arena's worst
		 * batch: 2.4 GB at 3,000 hub models against 1.6 GB with it
		 * (docs/benchmarks.md, Scale). */
		if (x->committed % TRIM_EVERY == 0)
			malloc_trim(0);
		if (rc) {
			x->failed_hard = 1;
			return -1;
		}
	}
	return 0;
}

/* Thread 0: commits while the window is full, decoding meanwhile; with
 * `all`, until every unit read is committed (or, after a failure,
 * released). */
static int make_room(extractor *x, int all)
{
	int rc = 0;
	for (;;) {
		rc |= commit_ready(x);
		int64_t held = x->read - x->committed;
		if (held == 0 ||
		    (!all && (rc || (held < WINDOW_UNITS && x->bytes < WINDOW_BYTES))))
			return rc ? -1 : 0;
		if (!claim_and_decode(x))
			pn_idle_wait();   /* the others decode what is left */
	}
}

/* Thread 0, from the walker: the unit joins the window, screened. */
static int on_unit(void *ud, pn_unit *u)
{
	extractor *x = ud;
	if (pn_shard_active(x->shard)) {
		pn_key place = pn_place_key(u->source, u->path);
		if (!pn_shard_holds(x->shard, place.b)) {
			pn_unit_free(u);   /* another shard's file */
			return 0;
		}
	}
	if (x->failed_hard || make_room(x, 0)) {
		pn_unit_free(u);
		return -1;
	}
	item *it = &x->items[x->read % WINDOW_UNITS];
	PN_ASSERT(!it->u);
	*it = (item){.u = u};
	x->bytes += u->len;
	x->stats->files++;
	/* a unit holding the bytes of one still in flight is decoded too: the
	 * commit keeps the least place, as for two places read together */
	it->fate = screen(x, it);
	__atomic_store_n(&x->read, x->read + 1, __ATOMIC_RELEASE);
	char note[64];
	snprintf(note, sizeof note, "%llu new", (unsigned long long)x->stats->new_models);
	pn_progress_step(&x->progress, x->stats->files, note);
	return commit_ready(x);
}

static void on_error(void *ud, const char *source, const char *path, const char *msg)
{
	extractor *x = ud;
	pn_key id = pn_place_key(source, path);
	/* a member belongs to one shard; the source as a whole to every one */
	if (path && *path && !pn_shard_holds(x->shard, id.b))
		return;
	pn_error_line("%s: %s: %s", source, path, msg);
	x->stats->source_errors++;
	char err[PN_ERRLEN];
	if (pn_error_put(x->w, &id, "extract", source, path, msg, err))
		x->failed_hard = 1;
}

/* --- sources --------------------------------------------------------------------- */

static int put_source(extractor *x, int complete)
{
	const pn_source_spec *s = x->src;
	Passnet__Source rec;
	passnet__source__init(&rec);
	rec.has_version = 1;
	rec.version = PN_SCHEMA_VERSION;
	rec.name = (char *)s->name;
	rec.kind = (char *)(s->kind ? s->kind : "auto");
	rec.location = (char *)s->location;
	/* sha256 keeps its meaning (a SHA-256, or "-"); checksum holds what
	 * the manifest gave, whatever its kind. */
	const char *sum = s->checksum ? s->checksum : "-";
	if (strncmp(sum, "sha512-", 7))
		rec.sha256 = (char *)sum;
	rec.checksum = (char *)sum;
	if (s->fetched && s->fetched->origin)
		rec.origin = s->fetched->origin;
	rec.licence = (char *)(s->licence ? s->licence : "");
	rec.note = (char *)(s->note ? s->note : "");
	rec.group = (char *)s->group;
	rec.has_files_seen = rec.has_models_ok = rec.has_models_failed = rec.has_complete = 1;
	rec.files_seen = x->ok + x->failed;
	rec.models_ok = x->ok;
	rec.models_failed = x->failed;
	rec.complete = complete;
	return pn_put_msg(x->w, PN_T_SOURCES, s->name, strlen(s->name), &rec.base, x->err);
}

/* A local file or archive must match its checksum; a remote source must
 * have been fetched (and so verified).  0 to go on, 1 when the source is
 * skipped (recorded in errors), -1 on a store error. */
static int verify_checksum(extractor *x)
{
	const pn_source_spec *s = x->src;
	char hex[65], msg[PN_ERRLEN];
	if (pn_kind_is_remote(s->kind)) {
		const pn_fetched *f = s->fetched;
		if (f && (f->state == PN_FETCH_CACHED || f->state == PN_FETCH_FETCHED))
			return 0;
		snprintf(msg, sizeof msg, "%s", f ? f->err : "not fetched");
	} else if (!s->checksum || !strcmp(s->checksum, "-")) {
		return 0;
	} else if (pn_sha256_file(s->location, hex, msg)) {
		;
	} else if (strcasecmp(hex, s->checksum)) {
		snprintf(msg, sizeof msg, "sha256 mismatch: manifest says %s, file is %s", s->checksum, hex);
	} else {
		return 0;
	}
	pn_error_line("%s: %s: %s", s->name, s->location, msg);
	x->stats->source_errors++;
	pn_key id = pn_place_key(s->name, "");
	return pn_error_put(x->w, &id, "extract", s->name, "", msg, x->err) ? -1 : 1;
}

static int extract_source(extractor *x)
{
	x->ok = x->failed = 0;
	int rc = verify_checksum(x);
	if (rc)
		return rc < 0 ? -1 : put_source(x, 0);
	pn_walk_cb cb = {on_unit, on_error, x};
	char werr[PN_ERRLEN];
	const pn_fetched *f = x->src->fetched;
	if (pn_kind_is_remote(x->src->kind))
		rc = pn_source_walk_fetched(x->src->name, f->disk, f->display, &cb, werr);
	else
		rc = pn_source_walk(x->src->name, x->src->location, &cb, werr);
	make_room(x, 1);   /* the source's record counts every unit */
	if (x->failed_hard)
		return -1;
	if (rc < 0) {
		on_error(x, x->src->name, "", werr);
		return x->failed_hard ? -1 : put_source(x, 0);
	}
	pn_key id = pn_place_key(x->src->name, "");
	if (pn_error_del(x->w, &id, "extract", x->err))
		return -1;
	return put_source(x, 1);
}

int pn_extract(pn_store *st, const pn_source_spec *src, int n_src, int threads,
	       const pn_ingest_opts *ingest, const pn_shard *shard, pn_extract_stats *stats,
	       char *err)
{
	extractor *x = calloc(1, sizeof(*x));
	if (!x)
		return pn_fail(err, "out of memory");
	memset(stats, 0, sizeof(*stats));
	x->st = st;
	x->threads = pn_stage_threads(threads);
	x->stats = stats;
	pn_ingest_opts with_memo = *ingest;
	if (!ingest->no_weight_check && !ingest->memo)
		with_memo.memo = pn_weight_memo_new();   /* NULL: every model checked alone */
	if (ingest->variants > 0 && !ingest->variant_memo)
		with_memo.variant_memo = pn_variant_memo_new();   /* NULL: each chooses alone */
	x->ingest = &with_memo;
	x->shard = shard;
	x->err = err;
	double t0 = pn_now();
	int rc = pn_writer_open(st, &x->w, 0, err);
	pn_progress_start(&x->progress, "extract", 0);
	/* the walker and every commit on this thread (the writer's), the
	 * units decoded by the whole team (the window above) */
	#pragma omp parallel num_threads(x->threads)
	{
		if (omp_get_thread_num() == 0) {
			for (int i = 0; !rc && i < n_src; i++) {
				x->src = &src[i];
				rc = extract_source(x);
			}
			__atomic_store_n(&x->finished, 1, __ATOMIC_RELEASE);
		} else {
			pn_claim_until_finished(claim_and_decode, x, &x->finished);
		}
	}
	pn_progress_end(&x->progress);
	if (x->w) {
		char cerr[PN_ERRLEN];
		if (pn_writer_close(x->w, rc ? cerr : err))
			rc = -1;
	}
	stats->seconds = pn_now() - t0;
	if (with_memo.memo != ingest->memo)
		pn_weight_memo_free(with_memo.memo);
	if (with_memo.variant_memo != ingest->variant_memo)
		pn_variant_memo_free(with_memo.variant_memo);
	free(x);
	return rc;
}
