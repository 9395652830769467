/* Embedding lookup and inverted dropout. */
#include <string.h>

#include "base/simd.h"
#include "model/layers.h"

void nmt_embed_forward(real *out, const int32_t *ids, const real *table, int n, int E)
{
    /* out: [n, E], ids: [n], table: [V, E] */
    for (int p = 0; p < n; p++)
        memcpy(out + (size_t)p * E, table + (size_t)ids[p] * E, (size_t)E * sizeof *out);
}

void nmt_embed_backward(real *dtable, const real *dout, const int32_t *ids, const int *len,
                    int t0, int T, int B, int E)
{
    /* dtable: [V, E], dout: [T, B, E], ids: [T, B] (steps t0 .. t0+T-1), len: [B] */
    for (int t = 0; t < T; t++)
        for (int b = 0; b < B; b++) {
            if (t0 + t >= len[b])
                continue; /* padding is not a word: its row gets nothing */
            size_t p = (size_t)t * B + b;
            real *row = dtable + (size_t)ids[p] * E;
            const real *d = dout + p * E;
            for (int k = 0; k < E; k++)
                row[k] += d[k];
        }
}

void nmt_dropout_mask(unsigned char *mask, nmt_rng *rng, real p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        mask[i] = (real)nmt_rng_uniform(rng) >= p;
}

NMT_SIMD
void nmt_dropout_apply(real *x, const unsigned char *mask, real keep, size_t n)
{
    /* x, mask: [n]; a dropped unit times 0, as by a float mask of 0 */
    for (size_t i = 0; i < n; i++)
        x[i] *= mask[i] ? keep : 0;
}
