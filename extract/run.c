/*
 * run.c - the extract stage as the commands run it (see run.h).
 */
#include "extract/run.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "extract/run_gate.h"

/* One remote source into f: from the cache, or an error when there is no
 * cache folder to put it in. */
static void fetch_one(const pn_source_spec *s, const char *cache, int offline, pn_fetched *f)
{
	if (cache) {
		pn_fetch_source(s->kind, s->location, s->checksum, cache, offline, f);
	} else {
		memset(f, 0, sizeof *f);
		f->state = PN_FETCH_FAILED;
		pn_fail(f->err, "no cache folder: set PASSNET_CACHE or HOME");
	}
}

int pn_fetch_remote(pn_source_spec *src, int n, int offline, pn_fetch_report_fn report,
		    pn_fetched *f)
{
	int remote = 0, bad = 0, fetched = 0;
	unsigned long long fetched_bytes = 0;
	for (int i = 0; i < n; i++)
		remote += pn_kind_is_remote(src[i].kind);
	if (!remote)
		return 0;
	char *cache = pn_cache_dir();
	pn_fetch_global_init();
	for (int i = 0; i < n; i++) {
		if (!pn_kind_is_remote(src[i].kind))
			continue;
		fetch_one(&src[i], cache, offline, &f[i]);
		src[i].fetched = &f[i];
		bad += f[i].state == PN_FETCH_FAILED || f[i].state == PN_FETCH_MISSING;
		if (f[i].state == PN_FETCH_FETCHED) {
			fetched++;
			fetched_bytes += f[i].bytes;
		}
		if (report)
			report(src[i].name, &f[i]);
		else if (f[i].state == PN_FETCH_FETCHED && pn_verbose)
			/* Failures are reported (and recorded) by extract. */
			pn_info("fetch: %s: %llu bytes from %s%s", src[i].name, (unsigned long long)f[i].bytes,
				f[i].origin && *f[i].origin ? f[i].origin : "?",
				f[i].refetched ? " (the cached copy was corrupt)" : "");
	}
	/* one line for what was fetched, unless each source had its own */
	if (fetched && !report && !pn_verbose)
		pn_info("fetch: %d sources fetched into the cache (%.1f MB); `passnet fetch --offline "
			"--manifest FILE` lists them", fetched, (double)fetched_bytes / 1e6);
	pn_fetch_global_cleanup();
	free(cache);
	return bad;
}

int pn_fetch_and_extract(pn_store *st, pn_source_spec *src, int n, const pn_extract_opts *o,
			 pn_extract_stats *stats, char *err)
{
	pn_fetched *fetched = calloc((size_t)n + 1, sizeof *fetched);
	if (!fetched)
		return pn_fail(err, "out of memory");
	/* failures are reported and recorded by pn_extract, source by source */
	pn_fetch_remote(src, n, o->offline, NULL, fetched);
	int rc = pn_extract(st, src, n, o->threads, &o->ingest, o->shard, stats, err);
	pn_run_gate_stats g;
	pn_run_gate_stats_get(&g);
	if (pn_verbose && g.runs)
		pn_info("extract: %llu model runs, %llu waited for memory (budget %zu MiB, at most %zu MiB "
			"estimated at once: extract/run_gate.h)", (unsigned long long)g.runs,
			(unsigned long long)g.waited, pn_run_gate_budget() >> 20, g.most_held >> 20);
	for (int i = 0; i < n; i++)
		pn_fetched_clear(&fetched[i]);
	free(fetched);
	return rc;
}
