/* The Transformer's dropout masks: millions of units a step (every
 * sublayer's output, every attention weight, the feed-forward's inner
 * layer), so drawn fast and over the pool, where the RNN's few sites draw
 * one 24-bit uniform a unit from the run's generator in order.
 *
 * One number from the run's generator seeds the mask; the mask is cut into
 * a fixed number of chunks (whatever the threads), chunk c drawing from a
 * generator seeded with that number plus c, four units from each 64-bit
 * draw: a unit is kept when its 16 bits are at least the rate's threshold.
 * So a mask is the same bits at any thread count and from a resumed run
 * (the run's generator, saved in checkpoints, is advanced by one draw). */
#include "base/pool.h"
#include "model/transformer/transformer_layers.h"

/* Chunks of a mask: enough to keep two threads busy on an uneven machine. */
#define MASK_CHUNKS 16

uint32_t nmt_tf_dropout_threshold(real p)
{
    double t = (double)p * 65536.0 + 0.5;
    return t > 65535 ? 65535 : (uint32_t)t;
}

real nmt_tf_dropout_keep(real p)
{
    return (real)(65536.0 / (65536.0 - (double)nmt_tf_dropout_threshold(p)));
}

typedef struct mask_job {
    unsigned char *mask;
    size_t n;
    uint64_t seed;
    uint32_t threshold;
} mask_job;

static void mask_chunk(void *arg, int c, int n_chunks)
{
    const mask_job *j = arg;
    size_t lo = j->n * (size_t)c / (size_t)n_chunks, hi = j->n * (size_t)(c + 1) / (size_t)n_chunks;
    nmt_rng r;
    nmt_rng_seed(&r, j->seed + (uint64_t)c);
    size_t i = lo;
    for (; i + 4 <= hi; i += 4) {
        uint64_t x = nmt_rng_next(&r);
        for (int k = 0; k < 4; k++)
            j->mask[i + (size_t)k] = (uint32_t)(x >> (16 * k) & 0xffff) >= j->threshold;
    }
    if (i < hi) {
        uint64_t x = nmt_rng_next(&r);
        for (int k = 0; i < hi; i++, k++)
            j->mask[i] = (uint32_t)(x >> (16 * k) & 0xffff) >= j->threshold;
    }
}

void nmt_tf_dropout_mask(unsigned char *mask, nmt_rng *rng, real p, size_t n)
{
    /* mask: [n] */
    mask_job j = {.mask = mask, .n = n, .seed = nmt_rng_next(rng),
                  .threshold = nmt_tf_dropout_threshold(p)};
    /* the chunks are MASK_CHUNKS whatever the threads; only how many run at
     * once depends on them */
    nmt_pool_run(mask_chunk, &j, MASK_CHUNKS);
}
