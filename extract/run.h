/*
 * run.h - the extract stage as `passnet extract`, `fetch` and `build` run
 * it: the remote sources fetched into the cache (extract/fetch.h), then
 * every source extracted (extract/extract.h).  The commands parse, print
 * and call; the work is here.
 */
#ifndef PN_EXTRACT_RUN_H
#define PN_EXTRACT_RUN_H

#include "common/shard.h"
#include "extract/extract.h"
#include "extract/fetch.h"
#include "extract/sources.h"
#include "store/store.h"

/* Called once per remote source when it has been looked up (`passnet
 * fetch` prints its line). */
typedef void (*pn_fetch_report_fn)(const char *name, const pn_fetched *f);

/* Fetches (offline: only looks up) every npm, deb and url source of
 * src[0..n) in the cache, fills f[i] and points src[i].fetched at it.
 * report non-NULL: called for each source (`passnet fetch`); NULL: what
 * was fetched is noted on stderr and failures are left to extract, which
 * reports and records them.  Returns how many failed or are missing. */
int pn_fetch_remote(pn_source_spec *src, int n, int offline, pn_fetch_report_fn report,
		    pn_fetched *f);

/* The options of one extract run (see pn_extract for bind, variants and
 * shard; shard NULL: every file). */
typedef struct pn_extract_opts {
	int offline;               /* remote sources from the cache only */
	int threads;
	pn_ingest_opts ingest;
	const pn_shard *shard;
} pn_extract_opts;

/* Fetches src's remote sources, then extracts src[0..n) into st; the
 * fetched files are released before it returns.  Fills stats; -1 with the
 * reason in err when the store fails (a source's failure is recorded, not
 * returned). */
int pn_fetch_and_extract(pn_store *st, pn_source_spec *src, int n, const pn_extract_opts *o,
			 pn_extract_stats *stats, char *err);

#endif
