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
double   pn_rng_normal(pn_rng *r);            /* N(0, 1) */

/* Inline: regenerating a model's weights draws one number an element
 * (25 million for a ResNet-50), and a call each cost as much as the draw. */
static inline uint64_t pn_rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t pn_rng_next(pn_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = pn_rng_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = pn_rng_rotl(s[3], 45);
	return out;
}

/* [0, 1) */
static inline double pn_rng_uniform(pn_rng *r)
{
	return (double)(pn_rng_next(r) >> 11) * 0x1.0p-53;
}

#endif
