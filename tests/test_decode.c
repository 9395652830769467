/* Greedy decoding: the batched decoder gives each sentence what a plain
 * step-by-step argmax over the inference API gives it alone. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nmt/decode.h"
#include "nmt/error.h"
#include "nmt/rng.h"
#include "test_common.h"

enum { V = 12, NSENT = 5, T = 7 };

/* A small model with weights large enough that its outputs differ from
 * sentence to sentence (the real init is too close to uniform). */
static nmt_model *random_model(nmt_cell cell, nmt_attention att, int bidi)
{
    const char *toks[V] = {"<pad>", "<unk>", "<s>", "</s>", "a", "b", "c", "d", "e", "f", "g", "h"};
    nmt_vocab *sv, *tv;
    ck_assert_int_eq(nmt_vocab_from_tokens(&sv, toks, V), NMT_OK);
    ck_assert_int_eq(nmt_vocab_from_tokens(&tv, toks, V), NMT_OK);
    nmt_config cfg = {.cell = cell, .attention = att, .bidirectional = bidi, .emb = 6,
                      .hidden = 8, .att_dim = 5, .out_dim = 7};
    nmt_model *m;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, sv, tv), NMT_OK);
    nmt_rng r;
    nmt_rng_seed(&r, 3);
    for (size_t i = 0; i < m->n_params; i++)
        m->params[i] = (float)(0.5 * nmt_rng_normal(&r));
    /* a </s> bias that gives a mix of sentences ending early, late and at
     * the length limit (so that rows leave the batch at different steps) */
    const nmt_tensor_info *ob = nmt_model_tensor(m, "out.b");
    ck_assert_ptr_nonnull(ob);
    m->params[ob->offset + NMT_EOS] = 0.5f;
    return m;
}

/* Sources of lengths 1..7 (tokens + </s>), time-major, padded with 0. */
static void sources(int32_t src[T * NSENT], int len[NSENT])
{
    static const int lens[NSENT] = {4, 7, 1, 3, 6};
    memset(src, 0, sizeof(int32_t) * T * NSENT);
    for (int b = 0; b < NSENT; b++) {
        len[b] = lens[b];
        for (int t = 0; t < lens[b] - 1; t++)
            src[t * NSENT + b] = 4 + (b * 3 + t * 5) % 8;
        src[(lens[b] - 1) * NSENT + b] = NMT_EOS;
    }
}

/* The greedy translation of one source, written out over nmt_infer_*. */
static int plain_greedy(const nmt_model *m, const int32_t *src1, int len, int limit,
                        int32_t *out, float *score)
{
    nmt_infer *st;
    ck_assert_int_eq(nmt_infer_create(&st, m, 1, len, 1), NMT_OK);
    ck_assert_int_eq(nmt_infer_encode(m, st, src1, &len, 1, len), NMT_OK);
    float lp[V];
    int32_t prev = NMT_BOS;
    int n = 0;
    *score = 0;
    for (;;) {
        nmt_infer_step(m, st, &prev, lp, NULL);
        int best = 1;
        for (int v = 1; v < V; v++)
            if (v != NMT_BOS && lp[v] > lp[best])
                best = v;
        *score += lp[best];
        if (best == NMT_EOS)
            break;
        out[n++] = best;
        prev = best;
        if (n >= limit)
            break;
    }
    nmt_infer_free(st);
    return n;
}

START_TEST(batched_greedy_matches_one_at_a_time)
{
    static const nmt_cell cells[] = {NMT_CELL_LSTM, NMT_CELL_GRU, NMT_CELL_RNN};
    nmt_model *m = random_model(cells[_i % 3], _i < 3 ? NMT_ATT_BAHDANAU : NMT_ATT_NONE,
                                _i % 2);
    int32_t src[T * NSENT];
    int len[NSENT];
    sources(src, len);
    nmt_decode_opts o;
    nmt_decode_opts_default(&o);
    nmt_decoder *d;
    ck_assert_int_eq(nmt_decoder_create(&d, m, NSENT, T, &o), NMT_OK);
    ck_assert_int_eq(nmt_decode(d, src, len, NSENT, T), NMT_OK);
    int nonempty = 0;
    for (int b = 0; b < NSENT; b++) {
        int32_t one[T], out[64];
        for (int t = 0; t < len[b]; t++)
            one[t] = src[t * NSENT + b];
        float score;
        int limit = 2 * (len[b] - 1) + 10;
        int n = plain_greedy(m, one, len[b], limit, out, &score);
        const nmt_hypothesis *h = nmt_decoder_result(d, b, 0);
        ck_assert_ptr_nonnull(h);
        ck_assert_int_eq(h->len, n);
        ck_assert_int_le(h->len, limit);
        for (int i = 0; i < n; i++)
            ck_assert_int_eq(h->ids[i], out[i]);
        ck_assert_double_eq_tol(h->score, score, 1e-4);
        ck_assert_int_eq(h->finished, n < limit || h->finished);
        ck_assert_double_eq_tol(h->norm_score, h->score / (h->len + h->finished), 1e-5);
        nonempty += n > 0;
    }
    ck_assert_int_gt(nonempty, 0);
    ck_assert_ptr_null(nmt_decoder_result(d, 0, 1));
    nmt_decoder_free(d);
    nmt_model_free(m);
}
END_TEST

START_TEST(length_limit_and_options)
{
    nmt_model *m = random_model(NMT_CELL_GRU, NMT_ATT_BAHDANAU, 1);
    int32_t src[T * NSENT];
    int len[NSENT];
    sources(src, len);
    nmt_decode_opts o;
    nmt_decode_opts_default(&o);
    ck_assert_int_eq(o.beam, 1);
    o.max_ratio = 0;
    o.max_extra = 1;
    nmt_decoder *d;
    ck_assert_int_eq(nmt_decoder_create(&d, m, NSENT, T, &o), NMT_OK);
    ck_assert_int_eq(nmt_decode(d, src, len, NSENT, T), NMT_OK);
    for (int b = 0; b < NSENT; b++)
        ck_assert_int_le(nmt_decoder_result(d, b, 0)->len, 1);
    /* a batch beyond the decoder's size is refused, not overrun */
    ck_assert_int_eq(nmt_decode(d, src, len, NSENT + 1, T), NMT_ERR_ARG);
    nmt_decoder_free(d);
    nmt_decode_opts_default(&o);
    o.beam = 4;
    ck_assert_int_eq(nmt_decoder_create(&d, m, NSENT, T, &o), NMT_ERR_ARG);
    ck_assert_ptr_null(d);
    nmt_model_free(m);
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("decode");
    TCase *tc = tcase_create("decode");
    tcase_add_loop_test(tc, batched_greedy_matches_one_at_a_time, 0, 6);
    tcase_add_test(tc, length_limit_and_options);
    suite_add_tcase(s, tc);
    return s;
}
