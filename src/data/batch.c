/* Padded time-major batches, and the order in which an epoch visits pairs.
 *
 * A shuffled epoch follows the usual bucketing recipe: shuffle all pairs,
 * cut the permutation into pools of POOL_BATCHES batches, sort each pool by
 * length so a batch holds sentences of about the same length (little
 * padding), cut the pools into batches and shuffle the order of the batches.
 * Everything random comes from one nmt_rng seeded from (seed, epoch), so a
 * plan is a pure function of its arguments and a resumed run can rebuild the
 * plan of its epoch and skip the batches it already did. */
#include "nmt/batch.h"

#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"
#include "nmt/rng.h"

enum { POOL_BATCHES = 100 };

int nmt_batch_alloc(nmt_batch *b, int B, int src_T, int tgt_T)
{
    memset(b, 0, sizeof *b);
    if (B < 1 || src_T < 1 || tgt_T < 1)
        return nmt_set_error(NMT_ERR_ARG, "a batch needs B, src_T and tgt_T >= 1, not %d, %d, %d", B,
                             src_T, tgt_T);
    size_t ns = (size_t)src_T * (size_t)B, nt = (size_t)tgt_T * (size_t)B;
    b->src = malloc(ns * sizeof *b->src);
    b->tgt_in = malloc(nt * sizeof *b->tgt_in);
    b->tgt_out = malloc(nt * sizeof *b->tgt_out);
    b->src_len = malloc((size_t)B * sizeof *b->src_len);
    b->tgt_len = malloc((size_t)B * sizeof *b->tgt_len);
    b->pair = malloc((size_t)B * sizeof *b->pair);
    if (!b->src || !b->tgt_in || !b->tgt_out || !b->src_len || !b->tgt_len || !b->pair) {
        nmt_batch_free(b);
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for a batch of %d x (%d + %d)", B, src_T,
                             tgt_T);
    }
    b->cap_B = B;
    b->cap_src_T = src_T;
    b->cap_tgt_T = tgt_T;
    return NMT_OK;
}

int nmt_batch_fill(nmt_batch *b, const nmt_corpus *c, const size_t *pairs, int n)
{
    if (n < 1 || n > b->cap_B)
        return nmt_set_error(NMT_ERR_ARG, "cannot fill a batch of capacity %d with %d pairs", b->cap_B, n);
    int src_T = 0, tgt_T = 0;
    for (int k = 0; k < n; k++) {
        size_t p = pairs[k];
        if (p >= c->n)
            return nmt_set_error(NMT_ERR_ARG, "pair %zu is not in a corpus of %zu", p, c->n);
        size_t ls = c->src_off[p + 1] - c->src_off[p] + 1; /* + </s> */
        size_t lt = c->tgt_off[p + 1] - c->tgt_off[p] + 1; /* + <s> in, + </s> out */
        if (ls > (size_t)b->cap_src_T || lt > (size_t)b->cap_tgt_T)
            return nmt_set_error(NMT_ERR_ARG,
                                 "pair %zu (line %zu) needs %zu source and %zu target positions, "
                                 "the batch has %d and %d",
                                 p, c->line ? c->line[p] : p + 1, ls, lt, b->cap_src_T, b->cap_tgt_T);
        b->src_len[k] = (int)ls;
        b->tgt_len[k] = (int)lt;
        if ((int)ls > src_T)
            src_T = (int)ls;
        if ((int)lt > tgt_T)
            tgt_T = (int)lt;
    }
    b->B = n;
    b->src_T = src_T;
    b->tgt_T = tgt_T;
    b->guide = NULL; /* the gold rows of other pairs, if any: a new fill has none */
    memset(b->src, 0, (size_t)src_T * (size_t)n * sizeof *b->src); /* NMT_PAD == 0 */
    memset(b->tgt_in, 0, (size_t)tgt_T * (size_t)n * sizeof *b->tgt_in);
    memset(b->tgt_out, 0, (size_t)tgt_T * (size_t)n * sizeof *b->tgt_out);
    b->n_tgt_tokens = 0;
    for (int k = 0; k < n; k++) {
        size_t p = pairs[k];
        const int32_t *x = c->src + c->src_off[p], *y = c->tgt + c->tgt_off[p];
        int ns = b->src_len[k] - 1, m = b->tgt_len[k] - 1;
        for (int t = 0; t < ns; t++)
            b->src[t * n + k] = x[t];
        b->src[ns * n + k] = NMT_EOS;
        b->tgt_in[k] = NMT_BOS;
        for (int t = 0; t < m; t++) {
            b->tgt_in[(t + 1) * n + k] = y[t];
            b->tgt_out[t * n + k] = y[t];
        }
        b->tgt_out[m * n + k] = NMT_EOS;
        b->pair[k] = p;
        b->n_tgt_tokens += (size_t)b->tgt_len[k];
    }
    return NMT_OK;
}

void nmt_batch_free(nmt_batch *b)
{
    free(b->src);
    free(b->tgt_in);
    free(b->tgt_out);
    free(b->src_len);
    free(b->tgt_len);
    free(b->pair);
    free(b->guide_buf);
    memset(b, 0, sizeof *b);
}

/* ---- epoch plans ---- */

typedef struct sort_key {
    size_t src_len, tgt_len, pair;
} sort_key;

static int by_lengths(const void *pa, const void *pb)
{
    const sort_key *a = pa, *b = pb;
    if (a->src_len != b->src_len)
        return a->src_len < b->src_len ? -1 : 1;
    if (a->tgt_len != b->tgt_len)
        return a->tgt_len < b->tgt_len ? -1 : 1;
    return (a->pair > b->pair) - (a->pair < b->pair); /* a total order: qsort's instability cannot show */
}

static void shuffle(size_t *x, size_t n, nmt_rng *r)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)nmt_rng_below(r, i);
        size_t t = x[i - 1];
        x[i - 1] = x[j];
        x[j] = t;
    }
}

/* The seed of an epoch's generator: distinct epochs give unrelated streams
 * (nmt_rng_seed mixes the value through splitmix64). */
static uint64_t epoch_seed(uint64_t seed, int epoch)
{
    return seed ^ (0x9e3779b97f4a7c15ULL * ((uint64_t)(unsigned)epoch + 1));
}

uint64_t nmt_batch_epoch_seed(uint64_t seed, int epoch)
{
    return epoch_seed(seed, epoch);
}

static int plan_alloc(nmt_batch_plan *p, size_t n, size_t n_batches)
{
    p->index = malloc((n ? n : 1) * sizeof *p->index);
    p->start = malloc((n_batches + 1) * sizeof *p->start);
    if (!p->index || !p->start) {
        nmt_batch_plan_free(p);
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for an epoch plan of %zu pairs", n);
    }
    p->n_batches = n_batches;
    return NMT_OK;
}

/* A plan of batch_size pairs a batch, its shuffles drawn from r. */
static int plan_fixed(nmt_batch_plan *p, const nmt_corpus *c, int batch_size, int shuffle_on,
                      nmt_rng *rng)
{
    memset(p, 0, sizeof *p);
    if (batch_size < 1)
        return nmt_set_error(NMT_ERR_ARG, "batch size must be at least 1, not %d", batch_size);
    size_t n = c->n, bs = (size_t)batch_size;
    size_t n_batches = (n + bs - 1) / bs;
    int rc = plan_alloc(p, n, n_batches);
    if (rc)
        return rc;
    for (size_t b = 0; b <= n_batches; b++)
        p->start[b] = b * bs < n ? b * bs : n;
    if (!shuffle_on) {
        for (size_t i = 0; i < n; i++)
            p->index[i] = i;
        return NMT_OK;
    }

    size_t *perm = malloc((n ? n : 1) * sizeof *perm);
    size_t *order = malloc((n_batches ? n_batches : 1) * sizeof *order);
    size_t pool = POOL_BATCHES * bs;
    sort_key *keys = malloc((n < pool ? (n ? n : 1) : pool) * sizeof *keys);
    if (!perm || !order || !keys) {
        free(perm);
        free(order);
        free(keys);
        nmt_batch_plan_free(p);
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for an epoch plan of %zu pairs", n);
    }
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    shuffle(perm, n, rng);
    for (size_t a = 0; a < n; a += pool) {
        size_t m = n - a < pool ? n - a : pool;
        for (size_t k = 0; k < m; k++) {
            size_t q = perm[a + k];
            keys[k] = (sort_key){c->src_off[q + 1] - c->src_off[q], c->tgt_off[q + 1] - c->tgt_off[q], q};
        }
        qsort(keys, m, sizeof *keys, by_lengths);
        for (size_t k = 0; k < m; k++)
            perm[a + k] = keys[k].pair;
    }
    /* Batch b of the sorted permutation is perm[b bs ..]; visit them in a
     * random order. Every batch is full but possibly the last one. */
    for (size_t b = 0; b < n_batches; b++)
        order[b] = b;
    shuffle(order, n_batches, rng);
    size_t w = 0;
    for (size_t b = 0; b < n_batches; b++) {
        size_t from = order[b] * bs, to = from + bs < n ? from + bs : n;
        p->start[b] = w;
        for (size_t i = from; i < to; i++)
            p->index[w++] = perm[i];
    }
    p->start[n_batches] = w;
    free(perm);
    free(order);
    free(keys);
    return NMT_OK;
}

/* The target positions of pair q: its tokens and </s>. */
static size_t tgt_positions(const nmt_corpus *c, size_t q)
{
    return c->tgt_off[q + 1] - c->tgt_off[q] + 1;
}

/* Cuts order[0..n) into batches of consecutive pairs within the budgets,
 * never across a multiple of `pool` (0: no pools): start[0..nb] (start has
 * n + 1 places); returns nb. */
static size_t cut_by_tokens(const nmt_corpus *c, const size_t *order, size_t n, size_t pool,
                            size_t max_pairs, size_t max_tokens, size_t *start)
{
    size_t nb = 0, longest = 0, pairs = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = tgt_positions(c, order[i]), wider = len > longest ? len : longest;
        if (pairs == 0 || (pool && i % pool == 0) || pairs + 1 > max_pairs ||
            (pairs + 1) * wider > max_tokens) {
            start[nb++] = i;
            longest = len;
            pairs = 1;
        } else {
            longest = wider;
            pairs++;
        }
    }
    start[nb] = n;
    return nb;
}

/* A plan by target tokens (max_tokens > 0), its shuffles drawn from r. */
static int plan_tokens(nmt_batch_plan *p, const nmt_corpus *c, int batch_size, int max_tokens,
                       int shuffle_on, nmt_rng *rng)
{
    memset(p, 0, sizeof *p);
    if (batch_size < 1)
        return nmt_set_error(NMT_ERR_ARG, "batch size must be at least 1, not %d", batch_size);
    size_t n = c->n, bs = (size_t)batch_size, pool = POOL_BATCHES * bs;
    size_t *perm = malloc((n ? n : 1) * sizeof *perm);
    size_t *cut = malloc((n + 1) * sizeof *cut);
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    sort_key *keys = malloc((n < pool ? (n ? n : 1) : pool) * sizeof *keys);
    int rc = perm && cut && order && keys
                 ? NMT_OK
                 : nmt_set_error(NMT_ERR_NOMEM, "out of memory for an epoch plan of %zu pairs", n);
    for (size_t i = 0; !rc && i < n; i++)
        perm[i] = i;
    if (!rc && shuffle_on) {
        /* as nmt_batch_plan_make: shuffled, then sorted by length in pools */
        shuffle(perm, n, rng);
        for (size_t a = 0; a < n; a += pool) {
            size_t m = n - a < pool ? n - a : pool;
            for (size_t k = 0; k < m; k++) {
                size_t q = perm[a + k];
                keys[k] = (sort_key){c->src_off[q + 1] - c->src_off[q],
                                     c->tgt_off[q + 1] - c->tgt_off[q], q};
            }
            qsort(keys, m, sizeof *keys, by_lengths);
            for (size_t k = 0; k < m; k++)
                perm[a + k] = keys[k].pair;
        }
    }
    size_t nb = rc ? 0 : cut_by_tokens(c, perm, n, shuffle_on ? pool : 0, bs,
                                       (size_t)max_tokens, cut);
    if (!rc)
        rc = plan_alloc(p, n, nb);
    if (!rc) {
        for (size_t b = 0; b < nb; b++)
            order[b] = b;
        if (shuffle_on)
            shuffle(order, nb, rng);
        size_t w = 0;
        for (size_t b = 0; b < nb; b++) {
            p->start[b] = w;
            for (size_t i = cut[order[b]]; i < cut[order[b] + 1]; i++)
                p->index[w++] = perm[i];
        }
        p->start[nb] = w;
    }
    free(perm);
    free(cut);
    free(order);
    free(keys);
    return rc;
}

int nmt_batch_plan_make(nmt_batch_plan *p, const nmt_corpus *c, int batch_size, int shuffle_on,
                        uint64_t seed, int epoch)
{
    nmt_rng r;
    nmt_rng_seed(&r, epoch_seed(seed, epoch));
    return plan_fixed(p, c, batch_size, shuffle_on, &r);
}

int nmt_batch_plan_make_tokens(nmt_batch_plan *p, const nmt_corpus *c, int batch_size,
                               int max_tokens, int shuffle_on, uint64_t seed, int epoch)
{
    nmt_rng r;
    nmt_rng_seed(&r, epoch_seed(seed, epoch));
    return nmt_batch_plan_make_rng(p, c, batch_size, max_tokens, shuffle_on, &r);
}

int nmt_batch_plan_make_rng(nmt_batch_plan *p, const nmt_corpus *c, int batch_size,
                            int max_tokens, int shuffle_on, nmt_rng *r)
{
    if (max_tokens <= 0)
        return plan_fixed(p, c, batch_size, shuffle_on, r);
    return plan_tokens(p, c, batch_size, max_tokens, shuffle_on, r);
}

void nmt_batch_plan_free(nmt_batch_plan *p)
{
    free(p->start);
    free(p->index);
    memset(p, 0, sizeof *p);
}
