/* A small, seedable, serialisable random generator (xoshiro256**).
 * All randomness of a run (init, shuffling, dropout) comes from one of these so
 * that a run can be resumed bit for bit from its saved state. */
#ifndef NMT_RNG_H
#define NMT_RNG_H

#include <stdint.h>

typedef struct nmt_rng {
    uint64_t s[4];
} nmt_rng;

void nmt_rng_seed(nmt_rng *r, uint64_t seed);
uint64_t nmt_rng_next(nmt_rng *r);
/* Uniform in [0, 1) with 24 random bits (exact as a float). */
float nmt_rng_uniform(nmt_rng *r);
/* Uniform integer in [0, n), unbiased. n > 0. */
uint64_t nmt_rng_below(nmt_rng *r, uint64_t n);
/* Standard normal (Box-Muller, computed in double). */
double nmt_rng_normal(nmt_rng *r);

#endif
