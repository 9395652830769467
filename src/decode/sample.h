/* Drawing one token of a sampled translation (see nmt/decode.h). */
#ifndef NMT_DECODE_SAMPLE_H
#define NMT_DECODE_SAMPLE_H

#include <stdint.h>

#include "nmt/decode.h"
#include "nmt/rng.h"

/* One token the draw may pick. */
typedef struct nmt_sample_cand {
    double w; /* its logit while ranking, then its weight */
    int32_t tok;
} nmt_sample_cand;

/* A token from one row of logits[V] (any shift: only differences count)
 * drawn with o's temperature, top_k and top_p, using scratch[V]. <pad> and
 * <s> are never drawn. */
int32_t nmt_sample_draw(const float *logits, int V, const nmt_decode_opts *o, nmt_rng *r,
                        nmt_sample_cand *scratch);

/* The generator of sentence `line` of a run seeded with seed. */
void nmt_sample_seed(nmt_rng *r, uint64_t seed, uint64_t line);

#endif
