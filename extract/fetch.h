/*
 * fetch.h - remote sources (npm packages, Debian packages, URLs), fetched
 * into a content-addressed cache that extraction then reads from.
 *
 * The cache is one folder, $PASSNET_CACHE or else ~/.cache/passnet, holding
 * every fetched file under the checksum the manifest gives for it:
 * sha256/<hex> (deb and url sources) or sha512/<hex> (npm, whose integrity
 * is a SHA-512), with <hex>.origin beside it naming where it came from.
 * Nothing else names a file, so a cached file is found again whatever the
 * source is called, and a file can only be there under a checksum it has:
 *   - a file found there is hashed on every use; if it matches, nothing is
 *     fetched; if it does not (a damaged disk, a hand edit), it is removed
 *     and fetched again (offline: an error);
 *   - a download goes to a temporary name in the same folder (".part-*",
 *     ".npm-*", ".apt-*") and is renamed into place only once complete and
 *     verified, so a killed fetch never leaves a half file under the final
 *     name (the temporary one is left, and never reused).
 *
 * How each kind is fetched, each with its ordinary client:
 *   npm  NAME@VERSION  `npm pack --json --ignore-scripts` into a temporary
 *                      folder: npm's registry and configuration, and its own
 *                      integrity check; `npm view NAME@VERSION dist.tarball`
 *                      names the origin.
 *   deb  NAME=VERSION  `apt-get download --print-uris` (the origin), then
 *                      `apt-get download` in a temporary folder: apt's
 *                      sources as configured, APT_CONFIG included.
 *   url  URL           libcurl: http and https only, redirects followed (to
 *                      http and https only), an HTTP error status fails, a
 *                      body shorter than its Content-Length is "truncated".
 * Then the bytes must hash to the manifest's checksum.  No package script
 * runs and nothing is unpacked.
 *
 * Every failure is one line naming the problem (the caller adds the source):
 * "sha256 mismatch: manifest says X, fetched file is Y", "package not
 * found: ...", "HTTP 404", "truncated body: ...", "not in the cache
 * (offline): sha256/<hex>".  The lines hold no temporary paths or times, so
 * the errors a store records are the same from run to run.
 */
#ifndef PN_FETCH_H
#define PN_FETCH_H

#include <stdint.h>

#include "common/err.h"

enum pn_fetch_state {
	PN_FETCH_CACHED,    /* found in the cache, verified */
	PN_FETCH_FETCHED,   /* fetched now, verified, in the cache */
	PN_FETCH_FAILED,    /* could not be fetched or verified: err says why */
	PN_FETCH_MISSING,   /* offline and not in the cache */
};

typedef struct pn_fetched {
	int state;
	char *disk;        /* CACHED, FETCHED: the file in the cache */
	char *display;     /* the file name the source's paths start with */
	char *origin;      /* where the bytes came from ("" if the cache does not say) */
	uint64_t bytes;
	int refetched;     /* FETCHED: a corrupt cached copy was replaced */
	char err[PN_ERRLEN];
} pn_fetched;

/* The cache folder (malloc'd): $PASSNET_CACHE, else $HOME/.cache/passnet;
 * NULL when neither is set. */
char *pn_cache_dir(void);

/* Makes sure the source (kind npm, deb or url; the manifest's location and
 * checksum, already checked by pn_manifest_read) is in the cache under
 * cache, fetching it unless offline.  Fills *out (pn_fetched_clear frees
 * it); returns its state. */
int pn_fetch_source(const char *kind, const char *location, const char *checksum,
		    const char *cache, int offline, pn_fetched *out);
void pn_fetched_clear(pn_fetched *f);

/* libcurl's global state, set up once per process before the first fetch
 * and torn down after the last (not thread-safe: call from main). */
void pn_fetch_global_init(void);
void pn_fetch_global_cleanup(void);

#endif
