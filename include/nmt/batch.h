/* Batches: padded, time-major id matrices for the model, and the order in
 * which an epoch visits them. */
#ifndef NMT_BATCH_H
#define NMT_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "nmt/corpus.h"
#include "nmt/rng.h"

/* One batch of B sentence pairs, time-major: element (t, b) is at [t * B + b].
 * Source rows hold the tokens then </s> (src_len[b] = tokens + 1); the decoder
 * input is <s> y1..ym and the output y1..ym </s> (tgt_len[b] = m + 1). Every
 * position past a sentence's length is NMT_PAD (0). */
typedef struct nmt_batch {
    int B;           /* sentences */
    int src_T;       /* max src_len */
    int tgt_T;       /* max tgt_len */
    int32_t *src;    /* [src_T, B] */
    int32_t *tgt_in; /* [tgt_T, B] */
    int32_t *tgt_out;/* [tgt_T, B] */
    int *src_len;    /* [B] */
    int *tgt_len;    /* [B] */
    size_t *pair;    /* [B] index of each pair in the corpus */
    size_t n_tgt_tokens; /* sum of tgt_len: the tokens the loss averages over */
    /* guided alignment's gold rows (nmt/links.h, nmt_links_guide), or NULL:
     * [B, tgt_T, src_T] batch-major, row (b, i) at (b * tgt_T + i) * src_T,
     * the distribution over pair b's source positions that decoder position
     * i is trained toward, or all 0 for a position without one. A fill
     * sets it to NULL; guide_buf [guide_cap] is where it is made */
    float *guide;
    float *guide_buf;
    size_t guide_cap;
    /* capacity */
    int cap_B, cap_src_T, cap_tgt_T;
} nmt_batch;

/* Allocates a batch able to hold B pairs of up to src_T / tgt_T positions. */
int nmt_batch_alloc(nmt_batch *b, int B, int src_T, int tgt_T);
/* Fills b with the given pairs of the corpus (n <= cap_B, lengths must fit). */
int nmt_batch_fill(nmt_batch *b, const nmt_corpus *c, const size_t *pairs, int n);
void nmt_batch_free(nmt_batch *b);

/* The batches of one epoch: each a list of pair indexes. Made from
 * length-sorted pools (so padding is small) and shuffled with (seed, epoch);
 * with shuffle = 0, consecutive pairs in corpus order. Deterministic: the
 * same arguments give the same plan, which is what makes resume exact. */
typedef struct nmt_batch_plan {
    size_t n_batches;
    size_t *start;   /* [n_batches + 1] into index */
    size_t *index;   /* [corpus n] pair indexes */
} nmt_batch_plan;

int nmt_batch_plan_make(nmt_batch_plan *p, const nmt_corpus *c, int batch_size,
                        int shuffle, uint64_t seed, int epoch);
/* Batches by target tokens: each batch takes the next pairs (of a sorted
 * pool of 100 x batch_size pairs, or of the corpus without shuffling) while
 * its padded target, pairs x the longest target with its </s>, stays within
 * max_tokens and its pairs within batch_size; a pair longer than max_tokens
 * makes a batch alone. The batches' order is shuffled as above. max_tokens
 * 0 is nmt_batch_plan_make. */
int nmt_batch_plan_make_tokens(nmt_batch_plan *p, const nmt_corpus *c, int batch_size,
                               int max_tokens, int shuffle, uint64_t seed, int epoch);
/* nmt_batch_plan_make_tokens (max_tokens 0: nmt_batch_plan_make) with its
 * shuffles drawn from r, which is advanced: a streamed corpus plans each
 * block with one generator that runs on from block to block, so that the
 * state at a block's start (kept in checkpoints) is all a resume needs. */
int nmt_batch_plan_make_rng(nmt_batch_plan *p, const nmt_corpus *c, int batch_size,
                            int max_tokens, int shuffle, nmt_rng *r);
void nmt_batch_plan_free(nmt_batch_plan *p);
/* The seed of the generator of an epoch's plan (what nmt_batch_plan_make
 * seeds with): a streamed corpus's first block starts from it too, so that
 * a block that holds the whole corpus is planned as the corpus is. */
uint64_t nmt_batch_epoch_seed(uint64_t seed, int epoch);

#endif
