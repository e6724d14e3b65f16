/*
 * rng.h - the seeded generator behind regenerated weights, random inputs and
 * random ops: splitmix64 to seed, xoshiro256** to draw.  A stream is derived
 * from (seed, name) so every tensor gets the same numbers whatever order it
 * is generated in and however many threads run.
 */
#ifndef PN_RNG_H
#define PN_RNG_H

#include <stdint.h>

typedef struct pn_rng {
	uint64_t s[4];
} pn_rng;

void     pn_rng_seed(pn_rng *r, uint64_t seed, const char *stream);
uint64_t pn_rng_next(pn_rng *r);
double   pn_rng_uniform(pn_rng *r);           /* [0, 1) */
double   pn_rng_normal(pn_rng *r);            /* N(0, 1) */

#endif
