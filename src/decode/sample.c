/* Sampling one token: softmax(logits / temperature), restricted to the top-k
 * and to the nucleus, as nmt/decode.h describes. */
#include "sample.h"

#include <math.h>
#include <stdlib.h>

#include "nmt/vocab.h"

void nmt_sample_seed(nmt_rng *r, uint64_t seed, uint64_t line)
{
    /* a generator per (seed, line): one key from the seed, the line mixed in
     * by nmt_rng_seed's own splitmix64 expansion, so that neighbouring lines
     * and seeds get unrelated streams */
    nmt_rng k;
    nmt_rng_seed(&k, seed);
    nmt_rng_seed(r, nmt_rng_next(&k) ^ (line * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL));
}

/* Highest logit first, then the lower id: the order greedy decoding breaks
 * ties in. */
static int by_logit(const void *pa, const void *pb)
{
    const nmt_sample_cand *a = pa, *b = pb;
    if (a->w != b->w)
        return a->w > b->w ? -1 : 1;
    return (a->tok > b->tok) - (a->tok < b->tok);
}

int32_t nmt_sample_draw(const float *logits, int V, const nmt_decode_opts *o, nmt_rng *r,
                        nmt_sample_cand *c)
{
    int n = 0;
    double best = -INFINITY;
    for (int32_t v = NMT_UNK; v < V; v++) {
        if (v == NMT_BOS)
            continue;
        c[n++] = (nmt_sample_cand){.w = logits[v], .tok = v};
        if ((double)logits[v] > best)
            best = logits[v];
    }
    if (n == 0)
        return NMT_EOS;
    /* only a restriction needs the tokens ranked; without one the draw walks
     * them in id order, which gives the same distribution */
    int top_k = o->top_k > 0 && o->top_k < n ? o->top_k : n;
    if (top_k < n || o->top_p < 1) {
        qsort(c, (size_t)n, sizeof *c, by_logit);
        n = top_k;
    }
    /* weights relative to the best token, so the best one weighs 1 and a
     * temperature near 0 sends the others to 0: greedy */
    double z = 0, T = (double)o->temperature;
    for (int i = 0; i < n; i++) {
        c[i].w = exp((c[i].w - best) / T);
        z += c[i].w;
    }
    if (o->top_p < 1) {
        /* the smallest set of the most probable whose mass reaches top_p */
        double acc = 0, want = (double)o->top_p * z;
        int m = 0;
        while (m < n) {
            acc += c[m++].w;
            if (acc >= want)
                break;
        }
        n = m;
        z = acc;
    }
    double u = (double)nmt_rng_uniform(r) * z;
    int last = 0;
    for (int i = 0; i < n; i++) {
        if (c[i].w > 0)
            last = i;
        u -= c[i].w;
        if (u < 0 && c[i].w > 0)
            return c[i].tok;
    }
    return c[last].tok; /* u rounded past the end: the last token that can be drawn */
}
