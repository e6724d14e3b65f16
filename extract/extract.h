/*
 * extract.h - stage 1: sources -> models in the store.
 *
 * For every model file a source yields, the model key (XXH3-128 of its
 * bytes) is compared with what model_paths remembers for that place; only
 * new or changed files are decoded.  This thread reads the files into a
 * window of at most 128 units (256 MiB) and commits them, in walk order,
 * with one batched writer; every thread, this one too while the window is
 * full, takes the next unit read and decodes it, so reading, decoding and
 * committing overlap and no thread waits for the slowest model of a
 * batch (extract.c).  Every record is keyed by content or place and holds
 * no time, so the store ends the same whatever the thread count or the
 * order of the sources.
 */
#ifndef PN_EXTRACT_H
#define PN_EXTRACT_H

#include <stdint.h>

#include "common/shard.h"
#include "extract/fetch.h"
#include "extract/ingest.h"
#include "schemas/ir.h"
#include "store/store.h"

typedef struct pn_source_spec {
	const char *name;
	const char *kind;       /* file, dir, archive, npm, deb, url, or NULL to detect */
	const char *location;
	const char *checksum;   /* hex SHA-256, npm's sha512-BASE64, "-" or NULL: not verified */
	const char *licence;
	const char *note;
	/* npm, deb, url: what pn_fetch_source made of it (NULL: not fetched,
	 * an error).  Read from the cache; its checksum is verified there. */
	const pn_fetched *fetched;
	const char *group;      /* the manifest's [section] (NULL: none) */
} pn_source_spec;

typedef struct pn_extract_stats {
	uint64_t files;         /* model files seen */
	uint64_t new_models;    /* decoded and stored */
	uint64_t known;         /* unchanged since the last run */
	uint64_t duplicates;    /* same bytes already stored from another place */
	uint64_t failed;        /* recorded in errors */
	uint64_t source_errors; /* sources or archive members that could not be read */
	uint64_t bytes;         /* model bytes decoded */
	uint64_t variants;      /* shape variants stored with the new models */
	uint64_t warned;        /* new models stored with warnings (Model.warnings) */
	uint64_t checks_reused; /* weight checks taken from a same file's (weight_memo.h) */
	uint64_t checks_booked; /* blind checks whose outputs another check's run computed
				   (value_keys.h) */
	uint64_t variants_reused; /* models whose generalized variants a same file key's
				     choice gave (variant_memo.h) */
	uint64_t independence_reused; /* models whose batch independence verdict a
					 copy of the same form gave (variant_memo.h) */
	double seconds;
} pn_extract_stats;

/* ingest says what is made of each new model (extract/ingest.h): the
 * binding of symbolic input dims for shape inference (recorded with every
 * model this run stores), up to `variants` shape variants
 * (extract/variants.h) stored with it, the weights' check.  shard
 * (NULL: all) takes only the model files whose place key falls in it
 * (common/shard.h); every shard walks every source, and records a source's
 * own errors (a checksum, an unreadable archive), so the shard stores of
 * one job merge into what one run would have stored. */
int pn_extract(pn_store *st, const pn_source_spec *src, int n_src, int threads,
	       const pn_ingest_opts *ingest, const pn_shard *shard, pn_extract_stats *stats,
	       char *err);

#endif
