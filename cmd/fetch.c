/*
 * fetch.c - `passnet fetch --manifest FILE [--offline]`: the manifest's npm,
 * deb and url sources into the cache (extract/fetch.h), nothing extracted.
 * extract and build run the same fetch first (pn_fetch_remote, extract/run.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "common/util.h"
#include "extract/extract.h"
#include "extract/fetch.h"
#include "extract/run.h"
#include "extract/sources.h"

static struct {
	const char *manifest;
	int offline;
} fo;

static const pn_option options[] = {
	PN_REQUIRED(0, "manifest", "FILE", &fo.manifest, "the sources (see data-manifest.txt)"),
	PN_FLAG(0, "offline", &fo.offline, "only look in the cache, and name what is missing"),
	PN_OPT_TABLE_END,
};

static const char *state_name(int s)
{
	switch (s) {
	case PN_FETCH_CACHED: return "cached";
	case PN_FETCH_FETCHED: return "fetched";
	case PN_FETCH_MISSING: return "missing";
	default: return "failed";
	}
}

static void print_line(const char *name, const pn_fetched *f)
{
	if (pn_json) {
		printf("{\"source\":");
		pn_json_str(stdout, name);
		printf(",\"state\":\"%s\",\"bytes\":%llu,\"origin\":", state_name(f->state),
		       (unsigned long long)f->bytes);
		pn_json_str(stdout, f->origin ? f->origin : "");
		printf(",\"reason\":");
		pn_json_str(stdout, f->state == PN_FETCH_FAILED || f->state == PN_FETCH_MISSING ? f->err : "");
		printf("}\n");
	} else if (f->state == PN_FETCH_FETCHED) {
		printf("%s: fetched (%llu bytes from %s%s)\n", name, (unsigned long long)f->bytes,
		       f->origin && *f->origin ? f->origin : "?",
		       f->refetched ? "; the cached copy was corrupt" : "");
	} else if (f->state == PN_FETCH_CACHED) {
		printf("%s: cached\n", name);
	} else {
		printf("%s: %s: %s\n", name, state_name(f->state), f->err);
	}
	fflush(stdout);
}

static int run(pn_ctx *ctx)
{
	(void)ctx;
	pn_manifest_entry *me = NULL;
	int n = 0;
	char err[PN_ERRLEN];
	if (pn_manifest_read(fo.manifest, &me, &n, err))
		return pn_die("%s", err);
	pn_source_spec *src = calloc((size_t)n + 1, sizeof *src);
	pn_fetched *f = calloc((size_t)n + 1, sizeof *f);
	if (!src || !f) {
		free(src);
		free(f);
		pn_manifest_free(me, n);
		return pn_die("out of memory");
	}
	for (int i = 0; i < n; i++)
		src[i] = (pn_source_spec){me[i].name, me[i].kind, me[i].location, me[i].checksum,
					  me[i].licence, me[i].note, NULL, me[i].group};
	int bad = pn_fetch_remote(src, n, fo.offline, print_line, f);
	for (int i = 0; i < n; i++)
		pn_fetched_clear(&f[i]);
	free(f);
	free(src);
	pn_manifest_free(me, n);
	return bad ? 1 : 0;
}

const pn_cmd_spec pn_cmd_fetch = {
	.options = options,
	.summary = "fetch a manifest's npm, deb and url sources into the cache",
	.description = "fetch every npm, deb and url source of the manifest into the "
		       "content-addressed cache (`$PASSNET_CACHE`, default `~/.cache/passnet`), "
		       "verified against its checksum, without extracting; one line per source: "
		       "fetched, cached, failed or missing (`--offline`)",
	.details = "Fetches every npm, deb and url source of the manifest into the cache\n"
		   "($PASSNET_CACHE, default ~/.cache/passnet), each stored under its\n"
		   "checksum and verified against it, without extracting anything.  A\n"
		   "source already cached (and still matching) is not fetched again; a\n"
		   "cached copy that no longer matches is fetched again.  One line per\n"
		   "source: NAME: fetched | cached | failed: REASON | missing: REASON.\n"
		   "Exit status 1 when any source failed or is missing.\n",
	.run = run,
};
