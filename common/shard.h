/*
 * shard.h - which shard a key falls in, so that N machines (or MPI ranks,
 * or Slurm array tasks) can split one job without talking to each other.
 *
 * The rule depends on the key alone: a 16-byte key falls in shard K of N
 * when its first 8 bytes, read as a little-endian uint64, are K mod N.  The
 * keys are XXH3-128 hashes, so shards come out even, and a key's shard
 * never depends on the order of the arguments or on what else is stored.
 * Which key a stage shards by: extract (and build) the place key of each
 * model file (pn_place_key(source, path): known before the file is
 * decoded), partition and dedup the structure key, exec the subgraph hash.
 */
#ifndef PN_SHARD_H
#define PN_SHARD_H

#include <stdint.h>

typedef struct pn_shard {
	uint32_t k, n;   /* n = 0: no sharding (every key is held) */
} pn_shard;

/* "K/N" with 0 <= K < N, 1 <= N <= 1000000.  -1 with a message in err. */
int pn_shard_parse(const char *text, pn_shard *out, char *err);
/* 1 when key falls in the shard (always, for NULL or n = 0). */
int pn_shard_holds(const pn_shard *sh, const uint8_t key[16]);
/* 1 when sh splits the work (n > 1). */
int pn_shard_active(const pn_shard *sh);

#endif
