/* Shared by the model's test suites: small models and hand-made batches. */
#ifndef NMT_TEST_MODEL_FIXTURE_H
#define NMT_TEST_MODEL_FIXTURE_H

#include <stdlib.h>
#include <string.h>

#include "nmt/model.h"

/* A batch built by hand from token lists (no corpus needed). src[b] holds
 * src_n[b] tokens (without </s>), tgt[b] tgt_n[b] tokens; `extra` adds that
 * many padding steps on both sides beyond the longest sentence. */
static inline void fixture_batch(nmt_batch *bt, int B, const int *const *src, const int *src_n,
                                 const int *const *tgt, const int *tgt_n, int extra)
{
    memset(bt, 0, sizeof *bt);
    bt->B = B;
    for (int b = 0; b < B; b++) {
        if (src_n[b] + 1 > bt->src_T)
            bt->src_T = src_n[b] + 1;
        if (tgt_n[b] + 1 > bt->tgt_T)
            bt->tgt_T = tgt_n[b] + 1;
    }
    bt->src_T += extra;
    bt->tgt_T += extra;
    bt->src = calloc((size_t)bt->src_T * B, sizeof *bt->src);
    bt->tgt_in = calloc((size_t)bt->tgt_T * B, sizeof *bt->tgt_in);
    bt->tgt_out = calloc((size_t)bt->tgt_T * B, sizeof *bt->tgt_out);
    bt->src_len = calloc((size_t)B, sizeof *bt->src_len);
    bt->tgt_len = calloc((size_t)B, sizeof *bt->tgt_len);
    for (int b = 0; b < B; b++) {
        for (int t = 0; t < src_n[b]; t++)
            bt->src[t * B + b] = src[b][t];
        bt->src[src_n[b] * B + b] = NMT_EOS;
        bt->src_len[b] = src_n[b] + 1;
        bt->tgt_in[b] = NMT_BOS;
        for (int t = 0; t < tgt_n[b]; t++) {
            bt->tgt_in[(t + 1) * B + b] = tgt[b][t];
            bt->tgt_out[t * B + b] = tgt[b][t];
        }
        bt->tgt_out[tgt_n[b] * B + b] = NMT_EOS;
        bt->tgt_len[b] = tgt_n[b] + 1;
        bt->n_tgt_tokens += (size_t)bt->tgt_len[b];
    }
    bt->cap_B = B, bt->cap_src_T = bt->src_T, bt->cap_tgt_T = bt->tgt_T;
}

static inline void fixture_batch_free(nmt_batch *bt)
{
    free(bt->src);
    free(bt->tgt_in);
    free(bt->tgt_out);
    free(bt->src_len);
    free(bt->tgt_len);
}

/* The configurations the model's tests run: every cell, attention kind and
 * encoder that go together. 0-11: cell k / 4, attention bahdanau or none
 * ((k / 2) % 2), bidirectional when k is even; 12-26: for each cell
 * ((k - 12) / 5: rnn, gru, lstm) general bi, general uni, scaled-dot bi,
 * scaled-dot uni and dot uni (dot needs a unidirectional encoder). */
#define FIXTURE_CONFIGS 27
static inline nmt_config fixture_config(int k, int E, int H, int A, int O, int Vs, int Vt)
{
    nmt_config c;
    memset(&c, 0, sizeof c);
    if (k < 12) {
        c.rnn.cell = (nmt_cell)(k / 4);
        c.rnn.attention = (k / 2) % 2 ? NMT_ATT_NONE : NMT_ATT_BAHDANAU;
        c.rnn.bidirectional = k % 2 == 0;
    } else {
        static const nmt_attention kinds[] = {NMT_ATT_GENERAL, NMT_ATT_GENERAL,
                                              NMT_ATT_SCALED_DOT, NMT_ATT_SCALED_DOT,
                                              NMT_ATT_DOT};
        int r = (k - 12) % 5;
        c.rnn.cell = (nmt_cell)((k - 12) / 5);
        c.rnn.attention = kinds[r];
        c.rnn.bidirectional = r == 0 || r == 2;
    }
    c.arch = NMT_ARCH_RNN;
    c.rnn.emb = E, c.rnn.hidden = H, c.rnn.att_dim = A, c.rnn.out_dim = O;
    c.src_vocab = Vs, c.tgt_vocab = Vt;
    return c;
}

/* Three sentence pairs of different lengths on both sides. */
static const int fx_s0[] = {4, 5, 6, 7, 8}, fx_s1[] = {6}, fx_s2[] = {8, 4, 4};
static const int fx_t0[] = {5, 6}, fx_t1[] = {4, 7, 7, 5}, fx_t2[] = {6, 6, 4};
static const int *const fx_src[] = {fx_s0, fx_s1, fx_s2};
static const int *const fx_tgt[] = {fx_t0, fx_t1, fx_t2};
static const int fx_src_n[] = {5, 1, 3}, fx_tgt_n[] = {2, 4, 3};

#endif
