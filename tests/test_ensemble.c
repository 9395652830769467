/* Ensembles (nmt/decode.h, "Ensembles"; src/decode/ensemble.c and the
 * ensemble's step in src/decode/decode.c): a model with itself decodes as
 * the model alone (greedy, beam with n-best, samples, attention); an RNN
 * and a Transformer together decode greedily as a plain loop that averages
 * their log-probabilities step by step; n-best lists are sorted and start
 * with the beam's output; samples follow their seed, a temperature near 0
 * is greedy, and forced prefixes start every output; models whose units
 * differ are refused with the reason. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/decode.h"
#include "nmt/error.h"
#include "nmt/rng.h"
#include "nmt/translator.h"
#include "test_common.h"

enum { V = 12, NSENT = 5, T = 7 };

static const char *const toks[V] = {"<pad>", "<unk>", "<s>", "</s>", "a", "b",
                                    "c",     "d",     "e",   "f",    "g", "h"};

/* A model over toks with random weights large enough that sentences differ
 * (the real inits are too close to uniform): an attention RNN, or a
 * Transformer of one layer each side. */
static nmt_model *random_model(nmt_arch arch, uint64_t seed, const char *const *tgt_toks)
{
    nmt_vocab *sv, *tv;
    ck_assert_int_eq(nmt_vocab_from_tokens(&sv, toks, V), NMT_OK);
    ck_assert_int_eq(nmt_vocab_from_tokens(&tv, tgt_toks ? tgt_toks : toks, V), NMT_OK);
    nmt_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.arch = arch;
    if (arch == NMT_ARCH_RNN)
        cfg.rnn = (nmt_rnn_config){.cell = NMT_CELL_GRU, .attention = NMT_ATT_BAHDANAU,
                                   .bidirectional = 1, .emb = 6, .hidden = 8, .att_dim = 5,
                                   .out_dim = 7};
    else
        cfg.transformer = (nmt_transformer_config){.d_model = 8, .heads = 2, .ff = 12,
                                                   .enc_layers = 1, .dec_layers = 1};
    nmt_model *m;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, sv, tv), NMT_OK);
    nmt_rng r;
    nmt_rng_seed(&r, seed);
    for (int i = 0; i < m->n_tensors; i++) {
        const nmt_tensor_info *t = &m->tensors[i];
        const char *dot = strrchr(t->name, '.');
        int gain = arch == NMT_ARCH_TRANSFORMER && dot && !strcmp(dot, ".g");
        for (size_t k = 0; k < t->size; k++) {
            double u = 2.0 * ((double)nmt_rng_uniform(&r) - 0.5);
            m->params[t->offset + k] = (nmt_real)(gain ? 1 + 0.5 * u : 0.9 * u);
        }
    }
    /* a </s> bias that ends some sentences early and lets others run to
     * the length limit */
    const nmt_tensor_info *ob = nmt_model_tensor(m, "out.b");
    if (ob)
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

static nmt_decoder *decoder(const nmt_model *const *models, int n, const nmt_decode_opts *o)
{
    nmt_decoder *d;
    int rc = nmt_decoder_create_ensemble(&d, models, n, NSENT, T, o);
    ck_assert_msg(rc == NMT_OK, "%s", nmt_error_message());
    return d;
}

static nmt_decoder *decode_all(const nmt_model *const *models, int n, const nmt_decode_opts *o,
                               const nmt_decode_input *in)
{
    int32_t src[T * NSENT];
    int len[NSENT];
    sources(src, len);
    nmt_decoder *d = decoder(models, n, o);
    ck_assert_int_eq(nmt_decode_with(d, src, len, NSENT, T, in), NMT_OK);
    return d;
}

static int same_ids(const nmt_hypothesis *a, const nmt_hypothesis *b)
{
    return a->len == b->len && a->finished == b->finished &&
           !memcmp(a->ids, b->ids, (size_t)a->len * sizeof *a->ids);
}

/* Every result of d equals e's: ids, scores and (when kept) attention. */
static void assert_same_results(const nmt_decoder *d, const nmt_decoder *e)
{
    int32_t src[T * NSENT];
    int len[NSENT];
    sources(src, len);
    for (int b = 0; b < NSENT; b++) {
        ck_assert_int_eq(nmt_decoder_n_results(d, b), nmt_decoder_n_results(e, b));
        for (int k = 0; k < nmt_decoder_n_results(d, b); k++) {
            const nmt_hypothesis *x = nmt_decoder_result(d, b, k);
            const nmt_hypothesis *y = nmt_decoder_result(e, b, k);
            ck_assert_msg(same_ids(x, y), "sentence %d, result %d differs", b, k);
            ck_assert_double_eq_tol(x->score, y->score, 1e-6);
            ck_assert_double_eq_tol(x->norm_score, y->norm_score, 1e-6);
            ck_assert_int_eq(!x->att, !y->att);
            for (int i = 0; x->att && i < (x->len + x->finished) * len[b]; i++)
                ck_assert_double_eq_tol(x->att[i], y->att[i], 1e-6);
        }
    }
}

/* An ensemble of a model with itself is the model: greedy, beam 4 with its
 * 4 best and their attention, and 3 samples per sentence; for an RNN and a
 * Transformer. */
START_TEST(self_ensemble_is_the_model)
{
    nmt_model *m = random_model(_i ? NMT_ARCH_TRANSFORMER : NMT_ARCH_RNN, 11, NULL);
    const nmt_model *one[1] = {m}, *two[2] = {m, m};
    nmt_decode_opts o[3];
    for (int c = 0; c < 3; c++)
        nmt_decode_opts_default(&o[c]);
    o[1].beam = 4, o[1].n_best = 4, o[1].attention = 1, o[1].alpha = 0.6f;
    o[2].sample = 1, o[2].n_best = 3, o[2].seed = 9;
    for (int c = 0; c < 3; c++) {
        nmt_decoder *d = decode_all(one, 1, &o[c], NULL), *e = decode_all(two, 2, &o[c], NULL);
        assert_same_results(d, e);
        nmt_decoder_free(d);
        nmt_decoder_free(e);
    }
    nmt_model_free(m);
}
END_TEST

/* The greedy output of two models, written out over nmt_infer_step: each
 * step the mean of their log-probabilities, its argmax (the lower id on a
 * tie; never <pad> or <s>), until </s> or the length limit. */
static int plain_ensemble_greedy(const nmt_model *const *m, const int32_t *src1, int len,
                                 int limit, int32_t *out, double *score)
{
    nmt_infer *st[2];
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(nmt_infer_create(&st[k], m[k], 1, len, 1, 256), NMT_OK);
        ck_assert_int_eq(nmt_infer_encode(m[k], st[k], src1, &len, 1, len), NMT_OK);
    }
    float lp[2][V];
    int32_t prev = NMT_BOS;
    int n = 0;
    *score = 0;
    for (;;) {
        for (int k = 0; k < 2; k++)
            ck_assert_int_eq(nmt_infer_step(m[k], st[k], &prev, lp[k], NULL), NMT_OK);
        int best = NMT_UNK;
        float best_lp = -INFINITY;
        for (int v = NMT_UNK; v < V; v++) {
            float mean = (lp[0][v] + lp[1][v]) / 2;
            if (v != NMT_BOS && mean > best_lp)
                best = v, best_lp = mean;
        }
        *score += (double)best_lp;
        if (best == NMT_EOS)
            break;
        out[n++] = best;
        prev = best;
        if (n >= limit)
            break;
    }
    for (int k = 0; k < 2; k++)
        nmt_infer_free(st[k]);
    return n;
}

/* An RNN and a Transformer: the ensemble's greedy output and score are the
 * plain loop's, and differ from each member's alone on some sentence. */
START_TEST(two_models_greedy_is_mean_of_logprobs)
{
    nmt_model *a = random_model(NMT_ARCH_RNN, 5, NULL);
    nmt_model *b = random_model(NMT_ARCH_TRANSFORMER, 6, NULL);
    const nmt_model *both[2] = {a, b};
    nmt_decode_opts o;
    nmt_decode_opts_default(&o);
    nmt_decoder *d = decode_all(both, 2, &o, NULL);
    nmt_decoder *da = decode_all(both, 1, &o, NULL), *db = decode_all(both + 1, 1, &o, NULL);
    int32_t src[T * NSENT];
    int len[NSENT], differs = 0;
    sources(src, len);
    for (int b_ = 0; b_ < NSENT; b_++) {
        int32_t one[T], out[64];
        for (int t = 0; t < len[b_]; t++)
            one[t] = src[t * NSENT + b_];
        double score;
        int limit = nmt_decode_length_limit(&o, len[b_]);
        int n = plain_ensemble_greedy(both, one, len[b_], limit, out, &score);
        const nmt_hypothesis *h = nmt_decoder_result(d, b_, 0);
        ck_assert_ptr_nonnull(h);
        ck_assert_int_eq(h->len, n);
        for (int i = 0; i < n; i++)
            ck_assert_int_eq(h->ids[i], out[i]);
        ck_assert_double_eq_tol(h->score, score, 1e-4);
        differs += !same_ids(h, nmt_decoder_result(da, b_, 0)) ||
                   !same_ids(h, nmt_decoder_result(db, b_, 0));
    }
    ck_assert_int_gt(differs, 0);
    nmt_decoder_free(d);
    nmt_decoder_free(da);
    nmt_decoder_free(db);
    nmt_model_free(a);
    nmt_model_free(b);
}
END_TEST

/* An ensemble's n-best list: finished hypotheses by falling normalised
 * score, then any cut at the limit by falling score; its first entry is
 * the output of the same beam asked for one. */
START_TEST(nbest_sorted_first_is_beam)
{
    nmt_model *a = random_model(NMT_ARCH_RNN, 5, NULL);
    nmt_model *b = random_model(NMT_ARCH_TRANSFORMER, 6, NULL);
    const nmt_model *both[2] = {a, b};
    nmt_decode_opts o;
    nmt_decode_opts_standard(&o);
    o.beam = 5;
    nmt_decoder *best = decode_all(both, 2, &o, NULL);
    o.n_best = 5;
    nmt_decoder *list = decode_all(both, 2, &o, NULL);
    for (int s = 0; s < NSENT; s++) {
        int n = nmt_decoder_n_results(list, s);
        ck_assert_int_gt(n, 1);
        ck_assert_msg(same_ids(nmt_decoder_result(list, s, 0), nmt_decoder_result(best, s, 0)),
                      "sentence %d: the n-best list's first is not the beam's output", s);
        for (int k = 1; k < n; k++) {
            const nmt_hypothesis *p = nmt_decoder_result(list, s, k - 1);
            const nmt_hypothesis *q = nmt_decoder_result(list, s, k);
            ck_assert_int_ge(p->finished, q->finished);
            if (p->finished == q->finished)
                ck_assert_double_ge((double)p->norm_score, (double)q->norm_score);
        }
    }
    nmt_decoder_free(best);
    nmt_decoder_free(list);
    nmt_model_free(a);
    nmt_model_free(b);
}
END_TEST

/* Sampling from an ensemble: the same seed gives the same samples, another
 * seed others; temperature 1e-4 gives the greedy output. */
START_TEST(ensemble_samples)
{
    nmt_model *a = random_model(NMT_ARCH_RNN, 5, NULL);
    nmt_model *b = random_model(NMT_ARCH_TRANSFORMER, 6, NULL);
    const nmt_model *both[2] = {a, b};
    nmt_decode_opts o, g;
    nmt_decode_opts_default(&o);
    nmt_decode_opts_default(&g);
    o.sample = 1, o.n_best = 4, o.seed = 3;
    nmt_decoder *s1 = decode_all(both, 2, &o, NULL), *s2 = decode_all(both, 2, &o, NULL);
    assert_same_results(s1, s2);
    o.seed = 4;
    nmt_decoder *s3 = decode_all(both, 2, &o, NULL);
    int other = 0;
    for (int s = 0; s < NSENT; s++)
        for (int k = 0; k < nmt_decoder_n_results(s1, s); k++)
            other += !same_ids(nmt_decoder_result(s1, s, k), nmt_decoder_result(s3, s, k));
    ck_assert_int_gt(other, 0);
    o.n_best = 1, o.temperature = 1e-4f;
    nmt_decoder *cold = decode_all(both, 2, &o, NULL), *greedy = decode_all(both, 2, &g, NULL);
    for (int s = 0; s < NSENT; s++)
        ck_assert(same_ids(nmt_decoder_result(cold, s, 0), nmt_decoder_result(greedy, s, 0)));
    nmt_decoder_free(s1);
    nmt_decoder_free(s2);
    nmt_decoder_free(s3);
    nmt_decoder_free(cold);
    nmt_decoder_free(greedy);
    nmt_model_free(a);
    nmt_model_free(b);
}
END_TEST

/* Forced prefixes on an ensemble: every output of greedy, beam (n-best)
 * and sampling starts with its sentence's prefix. */
START_TEST(ensemble_prefixes)
{
    nmt_model *a = random_model(NMT_ARCH_RNN, 5, NULL);
    nmt_model *b = random_model(NMT_ARCH_TRANSFORMER, 6, NULL);
    const nmt_model *both[2] = {a, b};
    static const int32_t p0[] = {9, 9, 4}, p1[] = {NMT_UNK}, p3[] = {11, 5};
    const int32_t *pre[NSENT] = {p0, p1, NULL, p3, NULL};
    const int pre_len[NSENT] = {3, 1, 0, 2, 0};
    const nmt_decode_input in = {NULL, pre, pre_len};
    nmt_decode_opts o[3];
    for (int c = 0; c < 3; c++)
        nmt_decode_opts_default(&o[c]);
    o[1].beam = 3, o[1].n_best = 3;
    o[2].sample = 1, o[2].n_best = 3, o[2].temperature = 2;
    for (int c = 0; c < 3; c++) {
        nmt_decoder *d = decode_all(both, 2, &o[c], &in);
        for (int s = 0; s < NSENT; s++) {
            ck_assert_int_gt(nmt_decoder_n_results(d, s), 0);
            for (int k = 0; k < nmt_decoder_n_results(d, s); k++) {
                const nmt_hypothesis *h = nmt_decoder_result(d, s, k);
                ck_assert_int_ge(h->len, pre_len[s]);
                for (int i = 0; i < pre_len[s]; i++)
                    ck_assert_int_eq(h->ids[i], pre[s][i]);
            }
        }
        nmt_decoder_free(d);
    }
    nmt_model_free(a);
    nmt_model_free(b);
}
END_TEST

/* Members that do not read and write the same units are refused, naming
 * both and what differs; the translator refuses them too. */
START_TEST(mismatches_refused)
{
    nmt_model *a = random_model(NMT_ARCH_RNN, 5, NULL);
    const char *other[V];
    memcpy(other, toks, sizeof other);
    other[7] = "z";
    nmt_model *b = random_model(NMT_ARCH_TRANSFORMER, 6, other);
    nmt_model *c = random_model(NMT_ARCH_RNN, 7, NULL);
    c->cfg.lowercase = 1;
    const char *names[2] = {"a.safetensors", "b.safetensors"};
    const nmt_model *ab[2] = {a, b}, *ac[2] = {a, c};
    ck_assert_int_eq(nmt_ensemble_check(ab, names, 2), NMT_ERR_ARG);
    ck_assert_str_eq(nmt_error_message(),
                     "a.safetensors and b.safetensors have different target vocabularies: id 7 "
                     "is \"d\" in a.safetensors and \"z\" in b.safetensors");
    ck_assert_int_eq(nmt_ensemble_check(ac, names, 2), NMT_ERR_ARG);
    ck_assert_str_eq(nmt_error_message(), "a.safetensors and b.safetensors split text "
                                          "differently: b.safetensors lowercases its input, "
                                          "a.safetensors does not");
    nmt_decoder *d = NULL;
    nmt_decode_opts o;
    nmt_decode_opts_default(&o);
    ck_assert_int_eq(nmt_decoder_create_ensemble(&d, ab, 2, 1, 4, &o), NMT_ERR_ARG);
    ck_assert_ptr_null(d);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "model 1 and model 2 have different "
                                                      "target vocabularies"));
    nmt_translator *t = NULL;
    nmt_translate_opts to;
    nmt_translate_opts_default(&to);
    ck_assert_int_eq(nmt_translator_create_ensemble(&t, ac, 2, &to), NMT_ERR_ARG);
    ck_assert_ptr_null(t);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "lowercases"));
    /* the same models with the same units are accepted */
    const nmt_model *aa[2] = {a, a};
    ck_assert_int_eq(nmt_ensemble_check(aa, names, 2), NMT_OK);
    nmt_model_free(a);
    nmt_model_free(b);
    nmt_model_free(c);
}
END_TEST

/* The translator over an ensemble: a model with itself translates as the
 * model alone, and its alignments (the members' mean) are each a
 * distribution. */
START_TEST(translator_over_ensemble)
{
    nmt_model *a = random_model(NMT_ARCH_RNN, 5, NULL);
    nmt_model *b = random_model(NMT_ARCH_TRANSFORMER, 6, NULL);
    const char *lines[3] = {"a b c", "", "h g f e d"};
    nmt_translate_opts o;
    nmt_translate_opts_default(&o);
    o.alignments = 1;
    o.decode.n_best = 2;
    const nmt_model *one[1] = {a}, *self[2] = {a, a}, *both[2] = {a, b};
    nmt_translated r1[3], r2[3], r3[3];
    nmt_translator *t;
    ck_assert_int_eq(nmt_translator_create_ensemble(&t, one, 1, &o), NMT_OK);
    ck_assert_int_eq(nmt_translator_run(t, lines, 3, r1, NULL, NULL), NMT_OK);
    nmt_translator_free(t);
    ck_assert_int_eq(nmt_translator_create_ensemble(&t, self, 2, &o), NMT_OK);
    ck_assert_int_eq(nmt_translator_run(t, lines, 3, r2, NULL, NULL), NMT_OK);
    nmt_translator_free(t);
    ck_assert_int_eq(nmt_translator_create_ensemble(&t, both, 2, &o), NMT_OK);
    ck_assert_int_eq(nmt_translator_run(t, lines, 3, r3, NULL, NULL), NMT_OK);
    nmt_translator_free(t);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(r1[i].n_hyp, r2[i].n_hyp);
        for (int k = 0; k < r1[i].n_hyp; k++) {
            ck_assert_str_eq(r1[i].hyp[k].text, r2[i].hyp[k].text);
            ck_assert_double_eq_tol(r1[i].hyp[k].score, r2[i].hyp[k].score, 1e-6);
        }
        for (int row = 0; row < r3[i].n_tgt; row++) {
            double sum = 0;
            for (int j = 0; j < r3[i].n_src; j++)
                sum += (double)r3[i].att[row * r3[i].n_src + j];
            ck_assert_double_eq_tol(sum, 1, 1e-5);
        }
        ck_assert_int_eq(r3[i].n_src, i == 1 ? 0 : (i == 0 ? 4 : 6));
        nmt_translated_free(&r1[i]);
        nmt_translated_free(&r2[i]);
        nmt_translated_free(&r3[i]);
    }
    nmt_model_free(a);
    nmt_model_free(b);
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("ensemble");
    TCase *tc = tcase_create("ensemble");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, self_ensemble_is_the_model, 0, 2);
    tcase_add_test(tc, two_models_greedy_is_mean_of_logprobs);
    tcase_add_test(tc, nbest_sorted_first_is_beam);
    tcase_add_test(tc, ensemble_samples);
    tcase_add_test(tc, ensemble_prefixes);
    tcase_add_test(tc, mismatches_refused);
    tcase_add_test(tc, translator_over_ensemble);
    suite_add_tcase(s, tc);
    return s;
}
