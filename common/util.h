/*
 * util.h - small shared helpers: hex, 128-bit content keys, JSON strings,
 * string arrays, writing files, making directories, the progress line.
 */
#ifndef PN_UTIL_H
#define PN_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* A 128-bit content key (XXH3-128), stored big-endian so keys sort the same
 * way as their hex spelling. */
typedef struct pn_key {
	uint8_t b[16];
} pn_key;

pn_key pn_key_of(const void *data, size_t len);
void   pn_key_hex(const pn_key *k, char hex[33]);
/* Parses a full 32-digit hex key; -1 if malformed. */
int    pn_key_parse(const char *hex, pn_key *k);

void pn_hex(const void *data, size_t len, char *out);   /* out: 2*len+1 */

/* Writes s as a JSON string literal (with quotes). */
void pn_json_str(FILE *f, const char *s);

/* qsort order of C strings held in an array (char *[]), by strcmp. */
int  pn_cmp_str(const void *a, const void *b);
/* Frees v[0..n) and v itself; v may be NULL when n is 0. */
void pn_strv_free(char **v, int n);

/* Writes len bytes to path (created or truncated); on failure the message
 * is "PATH: cannot write". */
int pn_write_file(const char *path, const void *data, size_t len, char *err);

/* mkdir -p: creates path and every missing folder above it with mode
 * (before the umask); folders that exist already are fine.  On failure the
 * message names the folder that could not be made: "DIR: strerror". */
int pn_mkdirs(const char *path, mode_t mode, char *err);

/* A progress line on stderr, drawn only when stderr is a terminal and the
 * run is not quiet.  total may be 0 (unknown). */
typedef struct pn_progress {
	const char *what;
	uint64_t done, total;
	double start, last;
	int active;
} pn_progress;

void   pn_progress_start(pn_progress *p, const char *what, uint64_t total);
void   pn_progress_step(pn_progress *p, uint64_t done, const char *note);
void   pn_progress_end(pn_progress *p);
double pn_now(void);   /* monotonic seconds */
/* The threads a stage runs on: `requested` when positive, else OpenMP's
 * default (OMP_NUM_THREADS, or every core).  Every stage resolves its
 * thread count here, once, at its start (passnet -j N, 0 when not given). */
int pn_stage_threads(int requested);

#endif
