/* Decoding: translating batches of source sentences with a model, over the
 * step-by-step inference pass of nmt/model.h. Greedy now (beam = 1); beam
 * search fills in the same API. */
#ifndef NMT_DECODE_H
#define NMT_DECODE_H

#include <stdint.h>

#include "nmt/model.h"

typedef struct nmt_decode_opts {
    int beam;         /* hypotheses kept per sentence; 1 = greedy */
    float alpha;      /* length normalisation: score / length^alpha (beam > 1) */
    float max_ratio;  /* a translation stops after max_ratio * source tokens + max_extra */
    int max_extra;
    int n_best;       /* hypotheses returned per sentence, <= beam */
} nmt_decode_opts;

/* beam 1, alpha 1, max_ratio 2, max_extra 10, n_best 1. */
void nmt_decode_opts_default(nmt_decode_opts *o);

/* One translation of one source sentence. */
typedef struct nmt_hypothesis {
    const int32_t *ids; /* [len] target ids, without </s> (owned by the decoder) */
    int len;
    float score;        /* sum of the log-probabilities of the ids (and of </s> if finished) */
    float norm_score;   /* score / (len + finished)^alpha: what beam search ranks by */
    int finished;       /* 1 if </s> was produced, 0 if cut at the length limit */
} nmt_hypothesis;

typedef struct nmt_decoder nmt_decoder;

/* A decoder for batches of up to max_B sources of up to max_src_T positions
 * (tokens + </s>). The model must outlive it. */
int nmt_decoder_create(nmt_decoder **out, const nmt_model *m, int max_B, int max_src_T,
                       const nmt_decode_opts *opts);
void nmt_decoder_free(nmt_decoder *d);

/* Translates B sources: time-major ids src[T, B] (element (t, b) at
 * [t * B + b]), each ending in </s>, lengths src_len[B] including it, as in
 * nmt_batch. Results stay valid until the next call. */
int nmt_decode(nmt_decoder *d, const int32_t *src, const int *src_len, int B, int T);
/* The k-th best hypothesis (k < n_best) of source b of the last call. */
const nmt_hypothesis *nmt_decoder_result(const nmt_decoder *d, int b, int k);

#endif
