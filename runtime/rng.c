#include "runtime/rng.h"

#include <math.h>
#include <string.h>
#include <xxhash.h>

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void pn_rng_seed(pn_rng *r, uint64_t seed, const char *stream)
{
	uint64_t x = seed ^ (stream ? XXH3_64bits(stream, strlen(stream)) : 0);
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

double pn_rng_normal(pn_rng *r)
{
	/* Box-Muller; one draw per call keeps the stream position simple. */
	double u = pn_rng_uniform(r), v = pn_rng_uniform(r);
	return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}
