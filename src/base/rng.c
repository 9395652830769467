#include "nmt/rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void nmt_rng_seed(nmt_rng *r, uint64_t seed)
{
    /* splitmix64 expands one seed into a state that is never all zero. */
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t nmt_rng_next(nmt_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

float nmt_rng_uniform(nmt_rng *r)
{
    return (float)(nmt_rng_next(r) >> 40) * (1.0f / 16777216.0f);
}

uint64_t nmt_rng_below(nmt_rng *r, uint64_t n)
{
    /* Rejection sampling: draw again from the biased tail. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = nmt_rng_next(r);
    while (x >= limit);
    return x % n;
}

double nmt_rng_normal(nmt_rng *r)
{
    /* 53-bit uniforms; u1 in (0, 1] so the log is finite. */
    double u1 = ((double)(nmt_rng_next(r) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
    double u2 = (double)(nmt_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}
