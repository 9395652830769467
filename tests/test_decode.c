/* Decoding. Greedy: the batched decoder gives each sentence what a plain
 * step-by-step argmax over the inference API gives it alone. Beam search: a
 * batch gives what each sentence gives alone; a beam wide enough to hold every
 * hypothesis finds the n best of an exhaustive enumeration under each length
 * normalisation; attention rows replay; the ends (limit, empty); outputs
 * that are not finite are refused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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
    nmt_config cfg = {.rnn.cell = cell, .rnn.attention = att, .rnn.bidirectional = bidi, .rnn.emb = 6,
                      .rnn.hidden = 8, .rnn.att_dim = 5, .rnn.out_dim = 7};
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
    ck_assert_int_eq(nmt_infer_create(&st, m, 1, len, 1, 256), NMT_OK);
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
    /* refused settings: no beam, an n-best beyond the beam, a negative or
     * infinite alpha */
    int bad[4][2] = {{0, 1}, {4, 5}, {4, 0}, {1, 1}};
    float alphas[4] = {1, 1, 1, -0.5f};
    for (int i = 0; i < 4; i++) {
        nmt_decode_opts_default(&o);
        o.beam = bad[i][0];
        o.n_best = bad[i][1];
        o.alpha = alphas[i];
        ck_assert_int_eq(nmt_decoder_create(&d, m, NSENT, T, &o), NMT_ERR_ARG);
        ck_assert_ptr_null(d);
    }
    nmt_decode_opts_default(&o);
    o.alpha = INFINITY;
    ck_assert_int_eq(nmt_decoder_create(&d, m, NSENT, T, &o), NMT_ERR_ARG);
    nmt_model_free(m);
}
END_TEST

/* ---- beam search ------------------------------------------------------------ */

static void assert_same_hypothesis(const nmt_hypothesis *a, const nmt_hypothesis *b)
{
    ck_assert_int_eq(a->len, b->len);
    ck_assert_int_eq(a->finished, b->finished);
    for (int i = 0; i < a->len; i++)
        ck_assert_int_eq(a->ids[i], b->ids[i]);
    ck_assert_double_eq_tol(a->score, b->score, 1e-4);
    ck_assert_double_eq_tol(a->norm_score, b->norm_score, 1e-4);
}

/* The n-best list of one sentence: as many as asked, finished ones first,
 * each group best first, each norm_score what its score and length give. */
static void assert_nbest_list(const nmt_decoder *d, int b, int n_best, float alpha)
{
    ck_assert_int_eq(nmt_decoder_n_results(d, b), n_best);
    ck_assert_ptr_null(nmt_decoder_result(d, b, n_best));
    for (int k = 0; k < n_best; k++) {
        const nmt_hypothesis *h = nmt_decoder_result(d, b, k);
        ck_assert_ptr_nonnull(h);
        int length = h->len + h->finished;
        double score = h->score, norm = length > 0 ? score / pow(length, (double)alpha) : score;
        ck_assert_double_eq_tol((double)h->norm_score, norm, 1e-4 * (1 + fabs(norm)));
        ck_assert(h->score <= 0);
        if (k == 0)
            continue;
        const nmt_hypothesis *p = nmt_decoder_result(d, b, k - 1);
        ck_assert_int_ge(p->finished, h->finished);
        if (p->finished == h->finished)
            ck_assert(p->norm_score >= h->norm_score);
    }
}

/* A batch gives each sentence the n-best list it gets alone, for every model
 * shape, with sentences finishing at different steps. */
START_TEST(beam_batched_matches_alone)
{
    static const nmt_cell cells[] = {NMT_CELL_LSTM, NMT_CELL_GRU, NMT_CELL_RNN};
    nmt_model *m = random_model(cells[_i % 3], _i < 3 ? NMT_ATT_BAHDANAU : NMT_ATT_NONE,
                                _i % 2);
    int32_t src[T * NSENT];
    int len[NSENT];
    sources(src, len);
    nmt_decode_opts o;
    nmt_decode_opts_default(&o);
    o.beam = 4;
    o.n_best = 3;
    o.alpha = 0.6f;
    o.attention = 1;
    nmt_decoder *d, *one;
    ck_assert_int_eq(nmt_decoder_create(&d, m, NSENT, T, &o), NMT_OK);
    ck_assert_int_eq(nmt_decoder_create(&one, m, 1, T, &o), NMT_OK);
    ck_assert_int_eq(nmt_decode(d, src, len, NSENT, T), NMT_OK);
    int distinct = 0;
    for (int b = 0; b < NSENT; b++) {
        int32_t alone[T];
        for (int t = 0; t < len[b]; t++)
            alone[t] = src[t * NSENT + b];
        ck_assert_int_eq(nmt_decode(one, alone, &len[b], 1, len[b]), NMT_OK);
        assert_nbest_list(d, b, 3, o.alpha);
        for (int k = 0; k < 3; k++) {
            const nmt_hypothesis *h = nmt_decoder_result(d, b, k);
            assert_same_hypothesis(h, nmt_decoder_result(one, 0, k));
            ck_assert_int_le(h->len, 2 * (len[b] - 1) + 10);
            ck_assert(h->finished || h->len == 2 * (len[b] - 1) + 10);
            if (_i < 3)
                ck_assert_ptr_nonnull(h->att);
            else
                ck_assert_ptr_null(h->att);
        }
        const nmt_hypothesis *h0 = nmt_decoder_result(d, b, 0), *h1 = nmt_decoder_result(d, b, 1);
        distinct += h0->len != h1->len || memcmp(h0->ids, h1->ids, sizeof(int32_t) * h0->len);
    }
    ck_assert_int_eq(distinct, NSENT); /* the n-best entries are different translations */
    nmt_decoder_free(one);
    nmt_decoder_free(d);
    nmt_model_free(m);
}
END_TEST

/* NMT_ALPHA_OF_MODEL, the standard search's alpha, is the model's own when
 * it has one (nmt train's choice) and NMT_DEFAULT_ALPHA when not: the
 * n-best lists are those of that alpha given outright, every norm_score is
 * the score over length^that alpha; an ensemble takes its members' mean.
 * A negative alpha other than it is still refused. */
START_TEST(alpha_of_the_model)
{
    nmt_model *m = random_model(NMT_CELL_GRU, NMT_ATT_BAHDANAU, 1);
    int32_t src[T * NSENT];
    int len[NSENT];
    sources(src, len);
    static const float own[] = {-1, 2.0f, 0.0f, 0.6f};
    for (int k = 0; k < 4; k++) {
        m->decode_alpha = own[k];
        float expect = own[k] >= 0 ? own[k] : NMT_DEFAULT_ALPHA;
        const nmt_model *one[1] = {m};
        ck_assert(nmt_models_alpha(one, 1) == expect);
        nmt_decode_opts o, given;
        nmt_decode_opts_standard(&o);
        ck_assert(o.alpha == NMT_ALPHA_OF_MODEL);
        o.n_best = 3;
        given = o;
        given.alpha = expect;
        nmt_decoder *d, *g;
        ck_assert_int_eq(nmt_decoder_create(&d, m, NSENT, T, &o), NMT_OK);
        ck_assert_int_eq(nmt_decoder_create(&g, m, NSENT, T, &given), NMT_OK);
        ck_assert_int_eq(nmt_decode(d, src, len, NSENT, T), NMT_OK);
        ck_assert_int_eq(nmt_decode(g, src, len, NSENT, T), NMT_OK);
        for (int b = 0; b < NSENT; b++) {
            assert_nbest_list(d, b, 3, expect);
            for (int r = 0; r < 3; r++)
                assert_same_hypothesis(nmt_decoder_result(d, b, r), nmt_decoder_result(g, b, r));
        }
        nmt_decoder_free(g);
        nmt_decoder_free(d);
    }
    /* an ensemble: the mean, a member without one counting as the default */
    nmt_model *m2 = random_model(NMT_CELL_GRU, NMT_ATT_BAHDANAU, 1);
    m->decode_alpha = 2.0f;
    const nmt_model *pair[2] = {m, m2};
    ck_assert_double_eq_tol((double)nmt_models_alpha(pair, 2), (2.0 + (double)NMT_DEFAULT_ALPHA) / 2, 1e-6);
    m2->decode_alpha = 1.0f;
    ck_assert_double_eq_tol((double)nmt_models_alpha(pair, 2), 1.5, 1e-6);

    nmt_decode_opts o;
    nmt_decode_opts_standard(&o);
    o.alpha = -0.5f;
    nmt_decoder *d;
    ck_assert_int_eq(nmt_decoder_create(&d, m, NSENT, T, &o), NMT_ERR_ARG);
    nmt_model_free(m2);
    nmt_model_free(m);
}
END_TEST

/* Beam 1 is greedy however the other settings are (alpha only rescales the
 * one score, attention only adds rows). */
START_TEST(beam_one_is_greedy)
{
    nmt_model *m = random_model(NMT_CELL_LSTM, NMT_ATT_BAHDANAU, 1);
    int32_t src[T * NSENT];
    int len[NSENT];
    sources(src, len);
    nmt_decode_opts o;
    nmt_decode_opts_default(&o);
    nmt_decoder *greedy, *other;
    ck_assert_int_eq(nmt_decoder_create(&greedy, m, NSENT, T, &o), NMT_OK);
    o.alpha = 0;
    o.attention = 1;
    ck_assert_int_eq(nmt_decoder_create(&other, m, NSENT, T, &o), NMT_OK);
    ck_assert_int_eq(nmt_decode(greedy, src, len, NSENT, T), NMT_OK);
    ck_assert_int_eq(nmt_decode(other, src, len, NSENT, T), NMT_OK);
    for (int b = 0; b < NSENT; b++) {
        const nmt_hypothesis *g = nmt_decoder_result(greedy, b, 0);
        const nmt_hypothesis *h = nmt_decoder_result(other, b, 0);
        ck_assert_int_eq(h->len, g->len);
        ck_assert_mem_eq(h->ids, g->ids, sizeof(int32_t) * (size_t)g->len);
        ck_assert_double_eq_tol(h->score, g->score, 1e-6);
        ck_assert_double_eq_tol(h->norm_score, h->score, 1e-6); /* alpha 0 */
        ck_assert_ptr_null(g->att);
        ck_assert_ptr_nonnull(h->att);
    }
    nmt_decoder_free(other);
    nmt_decoder_free(greedy);
    nmt_model_free(m);
}
END_TEST

/* A model over 6 tokens, so that every output of up to 5 tokens can be
 * listed: the outputs are <unk>, </s>, a, b. */
enum { SV = 6 };
static nmt_model *small_model(nmt_attention att, uint64_t seed)
{
    const char *toks[SV] = {"<pad>", "<unk>", "<s>", "</s>", "a", "b"};
    nmt_vocab *sv, *tv;
    ck_assert_int_eq(nmt_vocab_from_tokens(&sv, toks, SV), NMT_OK);
    ck_assert_int_eq(nmt_vocab_from_tokens(&tv, toks, SV), NMT_OK);
    nmt_config cfg = {.rnn.cell = NMT_CELL_GRU, .rnn.attention = att, .rnn.bidirectional = 1, .rnn.emb = 5,
                      .rnn.hidden = 6, .rnn.att_dim = 4, .rnn.out_dim = 5};
    nmt_model *m;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, sv, tv), NMT_OK);
    nmt_rng r;
    nmt_rng_seed(&r, seed);
    for (size_t i = 0; i < m->n_params; i++)
        m->params[i] = (float)(0.8 * nmt_rng_normal(&r));
    return m;
}

/* -log p of one whole output (ids then </s> when finished), by stepping the
 * inference pass; optionally its attention rows [n + finished, src_len]. */
static double sequence_score(const nmt_model *m, const int32_t *src, int src_len,
                             const int32_t *ids, int n, int finished, float *att)
{
    nmt_infer *st;
    ck_assert_int_eq(nmt_infer_create(&st, m, 1, src_len, 1, 256), NMT_OK);
    ck_assert_int_eq(nmt_infer_encode(m, st, src, &src_len, 1, src_len), NMT_OK);
    float lp[V];
    int32_t prev = NMT_BOS;
    double score = 0;
    for (int i = 0; i < n + finished; i++) {
        int32_t tok = i < n ? ids[i] : NMT_EOS;
        nmt_infer_step(m, st, &prev, lp, att ? att + (size_t)i * src_len : NULL);
        score += (double)lp[tok];
        prev = tok;
    }
    nmt_infer_free(st);
    return score;
}

/* Sentence b of the batch from sources() alone, as a batch of one. */
static void one_source(const int32_t *src, int b, int len, int32_t *src1)
{
    for (int t = 0; t < len; t++)
        src1[t] = src[t * NSENT + b];
}

START_TEST(prefix_forced_then_free)
{
    nmt_model *m = random_model(NMT_CELL_GRU, NMT_ATT_BAHDANAU, 1);
    int32_t src[T * NSENT];
    int len[NSENT];
    sources(src, len);
    nmt_decode_opts o;
    nmt_decode_opts_default(&o);
    nmt_decoder *d;
    ck_assert_int_eq(nmt_decoder_create(&d, m, NSENT, T, &o), NMT_OK);
    ck_assert_int_eq(nmt_decode(d, src, len, NSENT, T), NMT_OK);
    int32_t greedy[NSENT][64];
    int glen[NSENT];
    float gscore[NSENT];
    for (int b = 0; b < NSENT; b++) {
        const nmt_hypothesis *h = nmt_decoder_result(d, b, 0);
        ck_assert_int_le(h->len, 64);
        memcpy(greedy[b], h->ids, sizeof(int32_t) * (size_t)h->len);
        glen[b] = h->len;
        gscore[b] = h->score;
    }
    /* the greedy output's first tokens as prefix: the greedy output again */
    const int32_t *pre[NSENT];
    int pre_len[NSENT];
    for (int b = 0; b < NSENT; b++) {
        pre[b] = greedy[b];
        pre_len[b] = glen[b] < 2 ? glen[b] : 2;
    }
    nmt_decode_input in = {NULL, pre, pre_len};
    ck_assert_int_eq(nmt_decode_with(d, src, len, NSENT, T, &in), NMT_OK);
    for (int b = 0; b < NSENT; b++) {
        const nmt_hypothesis *h = nmt_decoder_result(d, b, 0);
        ck_assert_int_eq(h->len, glen[b]);
        ck_assert_mem_eq(h->ids, greedy[b], sizeof(int32_t) * (size_t)glen[b]);
        ck_assert_double_eq_tol(h->score, gscore[b], 1e-5);
    }
    nmt_decoder_free(d);
    /* a prefix the model would not choose, with beam 3 and 3 best: every
     * hypothesis starts with it, and its score counts the forced tokens */
    static const int32_t forced[3] = {NMT_UNK, 11, 11};
    for (int b = 0; b < NSENT; b++) {
        pre[b] = forced;
        pre_len[b] = b % 2 ? 3 : 0; /* every other sentence free */
    }
    o.beam = 3;
    o.n_best = 3;
    ck_assert_int_eq(nmt_decoder_create(&d, m, NSENT, T, &o), NMT_OK);
    ck_assert_int_eq(nmt_decode_with(d, src, len, NSENT, T, &in), NMT_OK);
    int forced_seen = 0;
    for (int b = 0; b < NSENT; b++) {
        int32_t src1[T];
        one_source(src, b, len[b], src1);
        for (int k = 0; k < nmt_decoder_n_results(d, b); k++) {
            const nmt_hypothesis *h = nmt_decoder_result(d, b, k);
            if (pre_len[b]) {
                ck_assert_int_ge(h->len, 3);
                ck_assert_mem_eq(h->ids, forced, sizeof forced);
            }
            forced_seen += h->len >= 3 && !memcmp(h->ids, forced, sizeof forced);
            double want = sequence_score(m, src1, len[b], h->ids, h->len, h->finished, NULL);
            ck_assert_double_eq_tol(h->score, want, 1e-4);
        }
    }
    ck_assert_int_ge(forced_seen, 6);
    /* a prefix that holds </s> is no output */
    static const int32_t bad[1] = {NMT_EOS};
    pre[0] = bad;
    pre_len[0] = 1;
    ck_assert_int_eq(nmt_decode_with(d, src, len, NSENT, T, &in), NMT_ERR_ARG);
    nmt_decoder_free(d);
    nmt_model_free(m);
}
END_TEST

/* Samples depend on (seed, line) only: a batch gives each sentence what it
 * gets alone; another seed gives others; scores are the model's
 * log-probabilities; the list is sorted by score. */
START_TEST(samples_follow_seed_and_line)
{
    nmt_model *m = random_model(NMT_CELL_LSTM, NMT_ATT_BAHDANAU, 1);
    int32_t src[T * NSENT];
    int len[NSENT];
    sources(src, len);
    nmt_decode_opts o;
    nmt_decode_opts_default(&o);
    o.sample = 1;
    o.n_best = 4;
    o.seed = 9;
    o.temperature = 1.5f;
    nmt_decoder *all, *one, *other;
    ck_assert_int_eq(nmt_decoder_create(&all, m, NSENT, T, &o), NMT_OK);
    ck_assert_int_eq(nmt_decoder_create(&one, m, 1, T, &o), NMT_OK);
    o.seed = 10;
    ck_assert_int_eq(nmt_decoder_create(&other, m, NSENT, T, &o), NMT_OK);
    const uint64_t lines[NSENT] = {10, 11, 12, 13, 14};
    nmt_decode_input in = {lines, NULL, NULL};
    ck_assert_int_eq(nmt_decode_with(all, src, len, NSENT, T, &in), NMT_OK);
    ck_assert_int_eq(nmt_decode_with(other, src, len, NSENT, T, &in), NMT_OK);
    int differ = 0;
    for (int b = 0; b < NSENT; b++) {
        int32_t src1[T];
        one_source(src, b, len[b], src1);
        nmt_decode_input in1 = {&lines[b], NULL, NULL};
        ck_assert_int_eq(nmt_decode_with(one, src1, &len[b], 1, len[b], &in1), NMT_OK);
        ck_assert_int_eq(nmt_decoder_n_results(all, b), 4);
        ck_assert_int_eq(nmt_decoder_n_results(one, 0), 4);
        for (int k = 0; k < 4; k++) {
            const nmt_hypothesis *a = nmt_decoder_result(all, b, k);
            const nmt_hypothesis *s = nmt_decoder_result(one, 0, k);
            const nmt_hypothesis *x = nmt_decoder_result(other, b, k);
            ck_assert_int_eq(a->len, s->len);
            ck_assert_mem_eq(a->ids, s->ids, sizeof(int32_t) * (size_t)a->len);
            differ += x->len != a->len || memcmp(x->ids, a->ids, sizeof(int32_t) * (size_t)a->len);
            double want = sequence_score(m, src1, len[b], a->ids, a->len, a->finished, NULL);
            ck_assert_double_eq_tol(a->score, want, 1e-4);
            if (k > 0)
                ck_assert_double_le((double)a->norm_score,
                                    (double)nmt_decoder_result(all, b, k - 1)->norm_score);
        }
    }
    ck_assert_int_gt(differ, 0);
    nmt_decoder_free(other);
    nmt_decoder_free(one);
    nmt_decoder_free(all);
    nmt_model_free(m);
}
END_TEST

typedef struct listed {
    int32_t ids[5];
    int n;
    double norm;
} listed;

static int listed_order(const void *pa, const void *pb)
{
    const listed *a = pa, *b = pb;
    return (a->norm < b->norm) - (a->norm > b->norm);
}

/* A beam of 512 holds every hypothesis of a 6-token vocabulary up to the
 * limit of 5 tokens, so its 10 best must be the 10 best finished outputs of
 * the exhaustive list (0..4 tokens, then </s>), ranked by
 * score / length^alpha, for each alpha. The early stop (rule 3) is what ends
 * most of these searches, so this also checks that it never stops too soon.
 * Larger alpha never picks a shorter best output. */
START_TEST(beam_finds_exhaustive_best)
{
    static const float alphas[] = {0, 0.6f, 1, 2.5f};
    enum { NA = 4, NB = 10, LIMIT = 5, MAXLIST = 1 + 3 + 9 + 27 + 81 };
    static const int32_t outputs[3] = {NMT_UNK, 4, 5};
    nmt_model *m = small_model(_i % 2 ? NMT_ATT_BAHDANAU : NMT_ATT_NONE, 11 + (uint64_t)_i);
    const int32_t sources_[3][4] = {{4, NMT_EOS}, {5, 4, 5, NMT_EOS}, {NMT_EOS}};
    const int lens[3] = {2, 4, 1};
    int longer = 0;
    for (int s = 0; s < 3; s++) {
        const int32_t *src = sources_[s];
        listed all[MAXLIST];
        int n_all = 0;
        for (int n = 0; n < LIMIT; n++) {
            int count = 1;
            for (int i = 0; i < n; i++)
                count *= 3;
            for (int c = 0; c < count; c++, n_all++) {
                all[n_all].n = n;
                for (int i = 0, x = c; i < n; i++, x /= 3)
                    all[n_all].ids[i] = outputs[x % 3];
            }
        }
        ck_assert_int_eq(n_all, MAXLIST);
        double raw[MAXLIST];
        for (int i = 0; i < n_all; i++)
            raw[i] = sequence_score(m, src, lens[s], all[i].ids, all[i].n, 1, NULL);
        int prev_len = -1;
        for (int a = 0; a < NA; a++) {
            for (int i = 0; i < n_all; i++)
                all[i].norm = raw[i] / pow(all[i].n + 1, alphas[a]);
            listed sorted[MAXLIST];
            memcpy(sorted, all, sizeof sorted);
            qsort(sorted, MAXLIST, sizeof *sorted, listed_order);
            nmt_decode_opts o;
            nmt_decode_opts_default(&o);
            o.beam = 512;
            o.n_best = NB;
            o.alpha = alphas[a];
            o.max_ratio = 0;
            o.max_extra = LIMIT;
            nmt_decoder *d;
            ck_assert_int_eq(nmt_decoder_create(&d, m, 1, lens[s], &o), NMT_OK);
            ck_assert_int_eq(nmt_decode(d, src, &lens[s], 1, lens[s]), NMT_OK);
            assert_nbest_list(d, 0, NB, alphas[a]);
            for (int k = 0; k < NB; k++) {
                const nmt_hypothesis *h = nmt_decoder_result(d, 0, k);
                ck_assert_int_eq(h->finished, 1);
                ck_assert_int_eq(h->len, sorted[k].n);
                for (int i = 0; i < h->len; i++)
                    ck_assert_int_eq(h->ids[i], sorted[k].ids[i]);
                ck_assert_double_eq_tol(h->norm_score, sorted[k].norm, 1e-4);
            }
            int best_len = nmt_decoder_result(d, 0, 0)->len;
            ck_assert_int_ge(best_len, prev_len);
            longer += prev_len >= 0 && best_len > prev_len;
            prev_len = best_len;
            nmt_decoder_free(d);
        }
    }
    /* the models are such that length normalisation changes some choice */
    ck_assert_int_gt(longer, 0);
    nmt_model_free(m);
}
END_TEST

/* ---- a plain beam search to compare with --------------------------------------- */

enum { REF_MAX = 64 };
typedef struct ref_hyp {
    int32_t ids[REF_MAX];
    int n, finished;
    double score, norm;
} ref_hyp;

typedef struct ref_cand {
    double score;
    int slot;
    int32_t tok;
} ref_cand;

static int ref_cand_order(const void *pa, const void *pb)
{
    const ref_cand *a = pa, *b = pb;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    if (a->slot != b->slot)
        return a->slot - b->slot;
    return a->tok - b->tok;
}

/* The log-probabilities after a prefix, by replaying it from scratch. */
static void next_logprobs(const nmt_model *m, const int32_t *src, int src_len,
                          const int32_t *ids, int n, float lp[V])
{
    nmt_infer *st;
    ck_assert_int_eq(nmt_infer_create(&st, m, 1, src_len, 1, 256), NMT_OK);
    ck_assert_int_eq(nmt_infer_encode(m, st, src, &src_len, 1, src_len), NMT_OK);
    int32_t prev = NMT_BOS;
    for (int i = 0; i <= n; i++) {
        nmt_infer_step(m, st, &prev, lp, NULL);
        if (i < n)
            prev = ids[i];
    }
    nmt_infer_free(st);
}

/* nmt/decode.h's rules written out the plain way: one sentence, hypotheses
 * copied whole, every prefix replayed. Returns the number of results. */
static int reference_beam(const nmt_model *m, const int32_t *src, int src_len,
                          const nmt_decode_opts *o, ref_hyp *out)
{
    int K = o->beam, limit = nmt_decode_length_limit(o, src_len);
    ck_assert_int_le(limit, REF_MAX - 1);
    ck_assert_int_le(K, 8);
    ref_hyp open[8], next[8], fin[8];
    ref_cand cands[8 * V];
    int n_open = 1, n_fin = 0, fin_count = 0;
    open[0] = (ref_hyp){.n = 0};
    for (int pos = 0;; pos++) {
        int nc = 0;
        for (int s = 0; s < n_open; s++) {
            float lp[V];
            next_logprobs(m, src, src_len, open[s].ids, open[s].n, lp);
            for (int32_t v = NMT_UNK; v < V; v++)
                if (v != NMT_BOS)
                    cands[nc++] = (ref_cand){open[s].score + (double)lp[v], s, v};
        }
        qsort(cands, (size_t)nc, sizeof *cands, ref_cand_order);
        int n_next = 0;
        for (int i = 0; i < nc && i < 2 * K; i++) {
            const ref_cand *c = &cands[i];
            ref_hyp h = open[c->slot];
            h.score = c->score;
            if (c->tok == NMT_EOS) {
                if (i >= K)
                    continue;
                fin_count++;
                h.finished = 1;
                h.norm = h.score / pow(h.n + 1, (double)o->alpha);
                int j = n_fin < K ? n_fin++ : K;   /* K: past the end */
                while (j > 0 && fin[j - 1].norm < h.norm) {
                    if (j < K)
                        fin[j] = fin[j - 1];
                    j--;
                }
                if (j < K)
                    fin[j] = h;
                continue;
            }
            if (n_next < K) {
                h.ids[h.n++] = c->tok;
                h.norm = h.score / pow(h.n, (double)o->alpha);
                next[n_next++] = h;
            }
        }
        memcpy(open, next, sizeof(ref_hyp) * (size_t)n_next);
        n_open = n_next;
        int done = fin_count >= K || pos + 1 >= limit || n_open == 0;
        if (!done && n_fin >= o->n_best)
            done = open[0].score / pow(limit, (double)o->alpha) <= fin[o->n_best - 1].norm;
        if (done)
            break;
    }
    int k = 0;
    for (int i = 0; i < n_fin && k < o->n_best; i++)
        out[k++] = fin[i];
    for (int s = 0; s < n_open && k < o->n_best; s++)
        out[k++] = open[s];
    return k;
}

/* The batched search gives the plain one's n-best lists, for narrow beams
 * where its rules (2K candidates, </s> only among the first K, stop at K
 * finished, early stop) decide the outcome. */
START_TEST(beam_matches_plain_search)
{
    static const int beams[] = {2, 3, 5};
    static const float alphas[] = {0, 0.6f, 1};
    nmt_model *m = random_model(_i % 2 ? NMT_CELL_GRU : NMT_CELL_LSTM,
                                _i < 3 ? NMT_ATT_BAHDANAU : NMT_ATT_NONE, 1);
    int32_t src[T * NSENT];
    int len[NSENT];
    sources(src, len);
    nmt_decode_opts o;
    nmt_decode_opts_default(&o);
    o.beam = beams[_i % 3];
    o.n_best = 2;
    o.alpha = alphas[(_i + 1) % 3];
    o.max_ratio = 1;
    o.max_extra = 5;
    nmt_decoder *d;
    ck_assert_int_eq(nmt_decoder_create(&d, m, NSENT, T, &o), NMT_OK);
    ck_assert_int_eq(nmt_decode(d, src, len, NSENT, T), NMT_OK);
    for (int b = 0; b < NSENT; b++) {
        int32_t one[T];
        for (int t = 0; t < len[b]; t++)
            one[t] = src[t * NSENT + b];
        ref_hyp want[8];
        int n = reference_beam(m, one, len[b], &o, want);
        ck_assert_int_eq(nmt_decoder_n_results(d, b), n);
        for (int k = 0; k < n; k++) {
            const nmt_hypothesis *h = nmt_decoder_result(d, b, k);
            ck_assert_int_eq(h->finished, want[k].finished);
            ck_assert_int_eq(h->len, want[k].n);
            for (int i = 0; i < h->len; i++)
                ck_assert_int_eq(h->ids[i], want[k].ids[i]);
            ck_assert_double_eq_tol((double)h->score, want[k].score, 1e-4);
            ck_assert_double_eq_tol((double)h->norm_score, want[k].norm, 1e-4);
        }
    }
    nmt_decoder_free(d);
    nmt_model_free(m);
}
END_TEST

/* The attention kept with each hypothesis is the one its tokens are produced
 * with: the same rows as replaying them through the inference pass, each a
 * distribution over the source. */
START_TEST(beam_attention_replays)
{
    nmt_model *m = random_model(NMT_CELL_LSTM, NMT_ATT_BAHDANAU, _i);
    int32_t src[T * NSENT];
    int len[NSENT];
    sources(src, len);
    nmt_decode_opts o;
    nmt_decode_opts_default(&o);
    o.beam = 3;
    o.n_best = 3;
    o.attention = 1;
    nmt_decoder *d;
    ck_assert_int_eq(nmt_decoder_create(&d, m, NSENT, T, &o), NMT_OK);
    ck_assert_int_eq(nmt_decode(d, src, len, NSENT, T), NMT_OK);
    for (int b = 0; b < NSENT; b++) {
        int32_t one[T];
        for (int t = 0; t < len[b]; t++)
            one[t] = src[t * NSENT + b];
        for (int k = 0; k < nmt_decoder_n_results(d, b); k++) {
            const nmt_hypothesis *h = nmt_decoder_result(d, b, k);
            int rows = h->len + h->finished;
            float att[64 * T];
            ck_assert_int_le(rows, 64);
            double score = sequence_score(m, one, len[b], h->ids, h->len, h->finished, att);
            ck_assert_double_eq_tol(h->score, score, 1e-3);
            for (int i = 0; i < rows; i++) {
                double sum = 0;
                for (int j = 0; j < len[b]; j++) {
                    ck_assert(fabsf(h->att[i * len[b] + j] - att[i * len[b] + j]) < 1e-5f);
                    sum += (double)h->att[i * len[b] + j];
                }
                ck_assert_double_eq_tol(sum, 1, 1e-4);
            }
        }
    }
    nmt_decoder_free(d);
    nmt_model_free(m);
}
END_TEST

/* The ends: when </s> is impossible every hypothesis is cut at the limit
 * (unfinished, best first); when it is certain each sentence gets the empty
 * translation first. */
START_TEST(beam_ends)
{
    nmt_model *m = random_model(NMT_CELL_GRU, NMT_ATT_BAHDANAU, 1);
    const nmt_tensor_info *ob = nmt_model_tensor(m, "out.b");
    int32_t src[T * NSENT];
    int len[NSENT];
    sources(src, len);
    nmt_decode_opts o;
    nmt_decode_opts_default(&o);
    o.beam = 5;
    o.n_best = 5;
    o.max_extra = 3;
    o.max_ratio = 0.5f;
    nmt_decoder *d;
    ck_assert_int_eq(nmt_decoder_create(&d, m, NSENT, T, &o), NMT_OK);
    m->params[ob->offset + NMT_EOS] = -1e4f;
    ck_assert_int_eq(nmt_decode(d, src, len, NSENT, T), NMT_OK);
    for (int b = 0; b < NSENT; b++) {
        int limit = nmt_decode_length_limit(&o, len[b]);
        ck_assert_int_eq(limit, (int)(0.5 * (len[b] - 1)) + 3);
        assert_nbest_list(d, b, 5, o.alpha);
        for (int k = 0; k < 5; k++) {
            const nmt_hypothesis *h = nmt_decoder_result(d, b, k);
            ck_assert_int_eq(h->finished, 0);
            ck_assert_int_eq(h->len, limit);
        }
    }
    m->params[ob->offset + NMT_EOS] = 1e4f;
    ck_assert_int_eq(nmt_decode(d, src, len, NSENT, T), NMT_OK);
    for (int b = 0; b < NSENT; b++) {
        const nmt_hypothesis *h = nmt_decoder_result(d, b, 0);
        ck_assert_int_eq(h->finished, 1);
        ck_assert_int_eq(h->len, 0);
        ck_assert(h->norm_score <= 0);
        assert_nbest_list(d, b, 5, o.alpha);
    }
    nmt_decoder_free(d);
    nmt_model_free(m);
}
END_TEST

/* Weights that are NaN, or finite but so large that the output layer
 * overflows (3e38 times a tanh, summed), give log-probabilities of NaN:
 * nmt_decode refuses rather than rank them (a word over and over, or
 * empty translations). Greedy and beam; the same decoder works again once
 * the weights are good. */
START_TEST(outputs_that_are_not_finite_refused)
{
    nmt_model *m = random_model(NMT_CELL_LSTM, NMT_ATT_BAHDANAU, 1);
    const nmt_tensor_info *w = nmt_model_tensor(m, "out.W"), *v = nmt_model_tensor(m, "att.v");
    int32_t src[T * NSENT];
    int len[NSENT];
    sources(src, len);
    nmt_decode_opts o;
    nmt_decode_opts_default(&o);
    o.beam = _i ? 4 : 1;
    nmt_decoder *d;
    ck_assert_int_eq(nmt_decoder_create(&d, m, NSENT, T, &o), NMT_OK);
    float *keep = malloc(w->size * sizeof *keep);
    memcpy(keep, m->params + w->offset, w->size * sizeof *keep);
    for (size_t k = 0; k < w->size; k++)
        m->params[w->offset + k] = 3e38f;
    nmt_clear_error();
    ck_assert_int_eq(nmt_decode(d, src, len, NSENT, T), NMT_ERR_NUMERIC);
    ck_assert_msg(strstr(nmt_error_message(), "log-probabilities are not finite"), "%s",
                  nmt_error_message());
    memcpy(m->params + w->offset, keep, w->size * sizeof *keep);
    ck_assert_int_eq(nmt_decode(d, src, len, NSENT, T), NMT_OK);
    m->params[v->offset] = NAN;
    ck_assert_int_eq(nmt_decode(d, src, len, NSENT, T), NMT_ERR_NUMERIC);
    free(keep);
    nmt_decoder_free(d);
    nmt_model_free(m);
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("decode");
    TCase *tc = tcase_create("decode");
    tcase_add_loop_test(tc, batched_greedy_matches_one_at_a_time, 0, 6);
    tcase_add_test(tc, length_limit_and_options);
    tcase_add_loop_test(tc, beam_batched_matches_alone, 0, 6);
    tcase_add_test(tc, beam_one_is_greedy);
    tcase_add_test(tc, alpha_of_the_model);
    tcase_add_loop_test(tc, beam_matches_plain_search, 0, 6);
    tcase_add_loop_test(tc, beam_finds_exhaustive_best, 0, 4);
    tcase_add_loop_test(tc, beam_attention_replays, 0, 2);
    tcase_add_test(tc, beam_ends);
    tcase_add_loop_test(tc, outputs_that_are_not_finite_refused, 0, 2);
    tcase_add_test(tc, prefix_forced_then_free);
    tcase_add_test(tc, samples_follow_seed_and_line);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}
