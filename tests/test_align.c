/* Alignments: AER on hand-made cases, hard links, the data formats, the
 * terminal heatmap and the SVG pictures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/align.h"
#include "cli/draw/heatmap.h"
#include "nmt/error.h"
#include "nmt/model.h"
#include "nmt/rng.h"
#include "cli/draw/svg.h"
#include "nmt/vocab.h"
#include "test_common.h"
#include "xml_check.h"

/* Runs a writer into a string (freed by the caller). */
typedef int (*writer_fn)(FILE *f, const nmt_alignment *a);
static char *capture(writer_fn w, const nmt_alignment *a, int *rc)
{
    /* Static: the stream writes through these pointers until fclose. */
    static char *buf;
    static size_t len;
    buf = NULL;
    len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    *rc = w(f, a);
    fclose(f);
    return buf;
}

/* A 3-word source and 4-word target with a few awkward tokens. */
static const char *const src3[] = {"ein", "\"Hund\"", "a&b<c>", "</s>"};
static const char *const tgt4[] = {"a", "dog", "tab\there", "x", "</s>"};
static const float att_5x4[] = {
    0.7f, 0.1f, 0.1f, 0.1f,
    0.05f, 0.8f, 0.1f, 0.05f,
    0.2f, 0.2f, 0.5f, 0.1f,
    0.1f, 0.1f, 0.1f, 0.7f, /* x looks at </s> most: its link goes to a real word */
    0.0f, 0.0f, 0.25f, 0.75f,
};
static const nmt_alignment pair = {4, 5, src3, tgt4, att_5x4};

/* ---- AER ------------------------------------------------------------------ */

static const nmt_link S3[] = {{0, 0, 0}, {1, 2, 0}, {2, 1, 0}};

START_TEST(aer_perfect_is_zero)
{
    nmt_aer acc = {0};
    ck_assert_int_eq(nmt_aer_add(&acc, S3, 3, S3, 3), NMT_OK);
    ck_assert_double_eq(nmt_aer_rate(&acc), 0.0);
    ck_assert_double_eq(nmt_aer_precision(&acc), 1.0);
    ck_assert_double_eq(nmt_aer_recall(&acc), 1.0);
    ck_assert_uint_eq(acc.pairs, 1);
    ck_assert_uint_eq(acc.both, 3);
}
END_TEST

START_TEST(aer_disjoint_is_one)
{
    static const nmt_link A[] = {{0, 1, 0}, {1, 0, 0}, {2, 2, 0}};
    nmt_aer acc = {0};
    nmt_aer_add(&acc, A, 3, S3, 3);
    ck_assert_double_eq(nmt_aer_rate(&acc), 1.0);
    ck_assert_double_eq(nmt_aer_precision(&acc), 0.0);
    ck_assert_double_eq(nmt_aer_recall(&acc), 0.0);
}
END_TEST

START_TEST(aer_partial_by_hand)
{
    /* A = {0-0, 1-1, 2-1}, S = {0-0, 1-2, 2-1}: A∩S = {0-0, 2-1}, so
     * |A∩S| = 2, AER = 1 - 2*2/(3+3) = 1/3, precision = recall = 2/3. */
    static const nmt_link A[] = {{0, 0, 0}, {1, 1, 0}, {2, 1, 0}};
    nmt_aer acc = {0};
    nmt_aer_add(&acc, A, 3, S3, 3);
    ck_assert_uint_eq(acc.both, 2);
    ck_assert_double_eq_tol(nmt_aer_rate(&acc), 1.0 / 3.0, 1e-12);
    ck_assert_double_eq_tol(nmt_aer_precision(&acc), 2.0 / 3.0, 1e-12);
    ck_assert_double_eq_tol(nmt_aer_recall(&acc), 2.0 / 3.0, 1e-12);

    /* Unequal sizes: A = {0-0, 1-1}, S = {0-0, 1-2, 2-2}: A∩S = {0-0};
     * AER = 1 - 2/5 = 0.6, precision 1/2, recall 1/3. */
    static const nmt_link A2[] = {{1, 1, 0}, {0, 0, 0}};
    static const nmt_link S2[] = {{2, 2, 0}, {0, 0, 0}, {1, 2, 0}};
    nmt_aer b = {0};
    nmt_aer_add(&b, A2, 2, S2, 3);
    ck_assert_double_eq_tol(nmt_aer_rate(&b), 0.6, 1e-12);
    ck_assert_double_eq_tol(nmt_aer_precision(&b), 0.5, 1e-12);
    ck_assert_double_eq_tol(nmt_aer_recall(&b), 1.0 / 3.0, 1e-12);
}
END_TEST

START_TEST(aer_sums_over_the_corpus)
{
    /* Pair 1: one link, right. Pair 2: three links, none in the one gold
     * link. Corpus: |A| = 4, |S| = 2, |A∩S| = 1, AER = 1 - 2/6 = 2/3 (the
     * mean of per-pair AERs, (0 + 1)/2, would be different). */
    static const nmt_link one[] = {{0, 0, 0}};
    static const nmt_link three[] = {{0, 0, 0}, {1, 1, 0}, {2, 2, 0}};
    static const nmt_link gold2[] = {{3, 3, 0}};
    nmt_aer acc = {0};
    nmt_aer_add(&acc, one, 1, one, 1);
    nmt_aer_add(&acc, three, 3, gold2, 1);
    ck_assert_uint_eq(acc.pairs, 2);
    ck_assert_double_eq_tol(nmt_aer_rate(&acc), 2.0 / 3.0, 1e-12);
    ck_assert_double_eq_tol(nmt_aer_precision(&acc), 0.25, 1e-12);
    ck_assert_double_eq_tol(nmt_aer_recall(&acc), 0.5, 1e-12);
}
END_TEST

START_TEST(aer_empty_cases)
{
    nmt_aer none = {0};
    nmt_aer_add(&none, NULL, 0, NULL, 0);
    ck_assert_double_eq(nmt_aer_rate(&none), 0.0);
    ck_assert_double_eq(nmt_aer_precision(&none), 1.0);
    ck_assert_double_eq(nmt_aer_recall(&none), 1.0);

    nmt_aer no_hyp = {0};
    nmt_aer_add(&no_hyp, NULL, 0, S3, 3);
    ck_assert_double_eq(nmt_aer_rate(&no_hyp), 1.0);
    ck_assert_double_eq(nmt_aer_precision(&no_hyp), 1.0);
    ck_assert_double_eq(nmt_aer_recall(&no_hyp), 0.0);

    nmt_aer no_gold = {0};
    nmt_aer_add(&no_gold, S3, 3, NULL, 0);
    ck_assert_double_eq(nmt_aer_rate(&no_gold), 1.0);
    ck_assert_double_eq(nmt_aer_precision(&no_gold), 0.0);
    ck_assert_double_eq(nmt_aer_recall(&no_gold), 1.0);
}
END_TEST

START_TEST(aer_counts_duplicates_once)
{
    static const nmt_link dup[] = {{0, 0, 0}, {0, 0, 0}, {1, 2, 0}};
    nmt_aer acc = {0};
    nmt_aer_add(&acc, dup, 3, S3, 3);
    ck_assert_uint_eq(acc.hyp, 2);
    ck_assert_uint_eq(acc.both, 2);
    ck_assert_double_eq_tol(nmt_aer_rate(&acc), 1.0 - 4.0 / 5.0, 1e-12);
}
END_TEST

START_TEST(pharaoh_parse_lines)
{
    nmt_link *l;
    size_t n;
    ck_assert_int_eq(nmt_pharaoh_parse("0-0 12-3\t3?4 0-0\r\n", &l, &n), NMT_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(l[1].src, 12);
    ck_assert_int_eq(l[1].tgt, 3);
    ck_assert_int_eq(l[2].src, 3);
    ck_assert_int_eq(l[2].tgt, 4);
    free(l);
    ck_assert_int_eq(nmt_pharaoh_parse("   ", &l, &n), NMT_OK);
    ck_assert_uint_eq(n, 0);
    ck_assert_ptr_null(l);
    static const char *const bad[] = {"1-", "a-b", "1-2x", "-1-2", "1--2", "1-2 3", "1:2",
                                      "99999999-1"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        ck_assert_int_eq(nmt_pharaoh_parse(bad[k], &l, &n), NMT_ERR_FORMAT);
        ck_assert_ptr_nonnull(strstr(nmt_error_message(), "is not an alignment link"));
    }
}
END_TEST

START_TEST(links_outside_their_pair)
{
    /* a pair of 3 source and 2 target words: indices 0..2 and 0..1 */
    static const nmt_link inside[] = {{0, 0, 0}, {2, 1, 0}, {1, 0, 0}};
    ck_assert_int_eq(nmt_links_outside(inside, 3, 3, 2), -1);
    ck_assert_int_eq(nmt_links_outside(NULL, 0, 0, 0), -1);
    static const nmt_link past_src[] = {{0, 0, 0}, {3, 1, 0}}, past_tgt[] = {{2, 2, 0}, {9, 9, 0}};
    static const nmt_link huge[] = {{0, 1, 0}, {99, 99, 0}}, negative[] = {{-1, 0, 0}};
    ck_assert_int_eq(nmt_links_outside(past_src, 2, 3, 2), 1); /* on </s> */
    ck_assert_int_eq(nmt_links_outside(past_tgt, 2, 3, 2), 0); /* the first bad one */
    ck_assert_int_eq(nmt_links_outside(huge, 2, 3, 2), 1);
    ck_assert_int_eq(nmt_links_outside(negative, 1, 3, 2), 0);
    /* the target side unchecked (a translation's): only the source counts */
    ck_assert_int_eq(nmt_links_outside(past_tgt, 1, 3, -1), -1);
    ck_assert_int_eq(nmt_links_outside(past_src, 2, 3, -1), 1);
}
END_TEST

START_TEST(words_counted_as_grouped)
{
    /* the words nmt_align_words makes, without the "</s>" it adds */
    static const char *const pieces[] = {"▁Fuß", "ball", "▁spielen", "▁", "(", "x", ")"};
    ck_assert_int_eq(nmt_align_word_count(pieces, 7, 1), 3);
    ck_assert_int_eq(nmt_align_word_count(pieces + 1, 1, 1), 1); /* a first piece begins one */
    ck_assert_int_eq(nmt_align_word_count(pieces, 0, 1), 0);
    ck_assert_int_eq(nmt_align_word_count(pieces, 7, 0), 7); /* a word model's tokens */
    /* and what nmt_align_words makes of them with "</s>" */
    static const char *const with_end[] = {"▁Fuß", "ball", "▁spielen", "▁", "(", "x", ")",
                                           "</s>"};
    float att[8] = {0.125f, 0.125f, 0.125f, 0.125f, 0.125f, 0.125f, 0.125f, 0.125f};
    static const char *const one[] = {"</s>"};
    nmt_alignment a = {8, 1, with_end, one, att};
    nmt_word_alignment w;
    ck_assert_int_eq(nmt_align_words(&a, &w), NMT_OK);
    ck_assert_int_eq(w.a.n_src - 1, nmt_align_word_count(with_end, 7, 1));
    nmt_word_alignment_free(&w);
}
END_TEST

/* ---- hard links ----------------------------------------------------------- */

START_TEST(hard_links_take_the_argmax)
{
    nmt_link links[5];
    int n = nmt_align_hard(&pair, links);
    /* 4 real target words; the </s> row is left out. */
    ck_assert_int_eq(n, 4);
    ck_assert_int_eq(links[0].src, 0);
    ck_assert_int_eq(links[1].src, 1);
    ck_assert_int_eq(links[2].src, 2);
    /* Row 3 is 0.1 0.1 0.1 | 0.7 on </s>: </s> is left out, and among the
     * three tied words the lowest index wins. */
    ck_assert_int_eq(links[3].src, 0);
    for (int k = 0; k < n; k++)
        ck_assert_int_eq(links[k].tgt, k);

    int rc;
    char *s = capture(nmt_align_write_pharaoh, &pair, &rc);
    ck_assert_int_eq(rc, NMT_OK);
    ck_assert_str_eq(s, "0-0 1-1 2-2 0-3\n");
    free(s);
}
END_TEST

START_TEST(hard_links_of_an_empty_source)
{
    static const char *const s1[] = {"</s>"};
    static const char *const t2[] = {"hallo", "</s>"};
    static const float att[] = {1.0f, 1.0f};
    nmt_alignment a = {1, 2, s1, t2, att};
    nmt_link links[2];
    ck_assert_int_eq(nmt_align_hard(&a, links), 0);
    int rc;
    char *s = capture(nmt_align_write_pharaoh, &a, &rc);
    ck_assert_str_eq(s, "\n");
    free(s);
}
END_TEST

/* ---- pieces grouped into words -------------------------------------------- */

/* "▁Fuß ball ▁spielen ▁ ( x ) </s>" and "▁foot ball ▁. </s>": source words
 * Fußball, spielen, (x), </s>; target words football, ., </s>. */
START_TEST(pieces_grouped_into_words)
{
    static const char *const src[] = {"▁Fuß", "ball", "▁spielen", "▁", "(", "x", ")", "</s>"};
    static const char *const tgt[] = {"▁foot", "ball", "▁.", "</s>"};
    enum { S = 8, T = 4 };
    float att[T * S];
    /* rows that sum to 1, each different */
    for (int i = 0; i < T; i++) {
        float sum = 0;
        for (int j = 0; j < S; j++)
            sum += att[i * S + j] = (float)((i + 1) * (j + 2) % 7 + 1);
        for (int j = 0; j < S; j++)
            att[i * S + j] /= sum;
    }
    nmt_alignment pieces = {S, T, src, tgt, att};
    nmt_word_alignment w;
    ck_assert_int_eq(nmt_align_words(&pieces, &w), NMT_OK);
    ck_assert_int_eq(w.a.n_src, 4);
    ck_assert_int_eq(w.a.n_tgt, 3);
    ck_assert_str_eq(w.a.src[0], "Fußball");
    ck_assert_str_eq(w.a.src[1], "spielen");
    ck_assert_str_eq(w.a.src[2], "(x)");
    ck_assert_str_eq(w.a.src[3], "</s>");
    ck_assert_str_eq(w.a.tgt[0], "football");
    ck_assert_str_eq(w.a.tgt[1], ".");
    ck_assert_str_eq(w.a.tgt[2], "</s>");
    static const int src_word[S] = {0, 0, 1, 2, 2, 2, 2, 3}, tgt_word[T] = {0, 0, 1, 2};
    for (int j = 0; j < S; j++)
        ck_assert_int_eq(w.src_word[j], src_word[j]);
    for (int i = 0; i < T; i++)
        ck_assert_int_eq(w.tgt_word[i], tgt_word[i]);
    /* a target word's row: the mean of its pieces' rows; a source word's
     * column: the sum of its pieces' columns */
    for (int I = 0; I < 3; I++) {
        double row_sum = 0;
        for (int J = 0; J < 4; J++) {
            double want = 0;
            int pieces_of_I = 0;
            for (int i = 0; i < T; i++) {
                if (tgt_word[i] != I)
                    continue;
                pieces_of_I++;
                for (int j = 0; j < S; j++)
                    want += src_word[j] == J ? (double)att[i * S + j] : 0;
            }
            want /= pieces_of_I;
            ck_assert_double_eq_tol((double)w.a.att[I * 4 + J], want, 1e-6);
            row_sum += (double)w.a.att[I * 4 + J];
        }
        ck_assert_double_eq_tol(row_sum, 1.0, 1e-5);
    }
    /* the words' hard links, as Pharaoh writes them: each target word but
     * </s> to its most attended source word but </s> */
    char want[64] = "";
    for (int I = 0; I < 2; I++) {
        int best = 0;
        for (int J = 1; J < 3; J++)
            best = w.a.att[I * 4 + J] > w.a.att[I * 4 + best] ? J : best;
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%d-%d", I ? " " : "", best, I);
    }
    strcat(want, "\n");
    int rc;
    char *links = capture(nmt_align_write_pharaoh, &w.a, &rc);
    ck_assert_int_eq(rc, NMT_OK);
    ck_assert_str_eq(links, want);
    free(links);
    nmt_word_alignment_free(&w);
    /* a word that is only the mark keeps it; pieces without marks at the
     * start are one word */
    static const char *const s2[] = {"ab", "c", "▁", "</s>"};
    static const float a2[4] = {0.25f, 0.25f, 0.25f, 0.25f};
    nmt_alignment p2 = {4, 1, s2, tgt + 3, a2};
    ck_assert_int_eq(nmt_align_words(&p2, &w), NMT_OK);
    ck_assert_int_eq(w.a.n_src, 3);
    ck_assert_str_eq(w.a.src[0], "abc");
    ck_assert_str_eq(w.a.src[1], "▁");
    ck_assert_double_eq_tol((double)w.a.att[0], 0.5, 1e-6);
    nmt_word_alignment_free(&w);
    /* NaN is refused as by the writers */
    float bad[4] = {0.5f, NAN, 0.25f, 0.25f};
    nmt_alignment p3 = {4, 1, s2, tgt + 3, bad};
    ck_assert_int_eq(nmt_align_words(&p3, &w), NMT_ERR_NUMERIC);
    nmt_word_alignment_free(&w);
}
END_TEST

/* ---- attention of a model under teacher forcing -------------------------- */

/* A small random model whose weights are large enough for the attention to
 * be far from uniform. */
static nmt_model *tiny_model(nmt_attention att)
{
    static const char *const words[] = {"<pad>", "<unk>", "<s>", "</s>", "a", "b", "c", "d", "e"};
    nmt_vocab *sv, *tv;
    ck_assert_int_eq(nmt_vocab_from_tokens(&sv, words, 9), NMT_OK);
    ck_assert_int_eq(nmt_vocab_from_tokens(&tv, words, 9), NMT_OK);
    nmt_config cfg = {.rnn.cell = NMT_CELL_GRU, .rnn.attention = att, .rnn.bidirectional = 1, .rnn.emb = 6,
                      .rnn.hidden = 5, .rnn.att_dim = 4, .rnn.out_dim = 7, .src_vocab = 9, .tgt_vocab = 9};
    nmt_model *m;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, sv, tv), NMT_OK);
    nmt_rng r;
    nmt_rng_seed(&r, 11);
    for (size_t k = 0; k < m->n_params; k++)
        m->params[k] = 2.0f * nmt_rng_uniform(&r) - 1.0f;
    return m;
}

START_TEST(forced_attention_rows_are_causal_distributions)
{
    nmt_model *m = tiny_model(NMT_ATT_BAHDANAU);
    nmt_infer *st;
    ck_assert_int_eq(nmt_infer_create(&st, m, 1, 10, 1, 256), NMT_OK);
    const int32_t src[] = {4, 5, 6, 7, 8, NMT_EOS};
    const int32_t t1[] = {5, 6, 7, 4, NMT_EOS}, t2[] = {5, 6, 8, 4, NMT_EOS};
    float a1[5 * 6], a2[5 * 6];
    ck_assert_int_eq(nmt_align_forced(m, st, src, 6, t1, 5, a1), NMT_OK);
    ck_assert_int_eq(nmt_align_forced(m, st, src, 6, t2, 5, a2), NMT_OK);
    for (int i = 0; i < 5; i++) {
        double sum = 0;
        for (int j = 0; j < 6; j++) {
            ck_assert(a1[i * 6 + j] >= 0.0f);
            sum += (double)a1[i * 6 + j];
        }
        ck_assert_double_eq_tol(sum, 1.0, 1e-5);
    }
    /* Row i attends from the state s_i, made from <s> y1 .. y_i (the design's
     * a_ij uses s_{i-1} at 1-based step i). The targets differ only in y3, so
     * rows 0-3 agree exactly and row 4 does not: no row looks ahead, and the
     * tokens are fed in their places. */
    ck_assert(memcmp(a1, a2, 4 * 6 * sizeof *a1) == 0);
    ck_assert(memcmp(a1 + 24, a2 + 24, 6 * sizeof *a1) != 0);
    /* Not uniform: these weights carry information. */
    float lo = 1, hi = 0;
    for (int k = 0; k < 30; k++) {
        lo = a1[k] < lo ? a1[k] : lo;
        hi = a1[k] > hi ? a1[k] : hi;
    }
    ck_assert(hi - lo > 0.05f);
    /* A shorter source: rows of its own length, still distributions. */
    const int32_t short_src[] = {6, NMT_EOS};
    float a3[5 * 2];
    ck_assert_int_eq(nmt_align_forced(m, st, short_src, 2, t1, 5, a3), NMT_OK);
    for (int i = 0; i < 5; i++)
        ck_assert(fabsf(a3[2 * i] + a3[2 * i + 1] - 1.0f) < 1e-5f);
    nmt_infer_free(st);
    nmt_model_free(m);

    m = tiny_model(NMT_ATT_NONE);
    ck_assert_int_eq(nmt_infer_create(&st, m, 1, 10, 1, 256), NMT_OK);
    ck_assert_int_eq(nmt_align_forced(m, st, src, 6, t1, 5, a1), NMT_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "has no attention (attention=none)"));
    nmt_infer_free(st);
    nmt_model_free(m);
}
END_TEST

/* A model whose output layer overflows (3e38 in every weight of out.W) is
 * refused, though its attention, which does not depend on out.W, is fine. */
START_TEST(forced_alignment_refuses_outputs_that_are_not_finite)
{
    nmt_model *m = tiny_model(NMT_ATT_BAHDANAU);
    const nmt_tensor_info *w = nmt_model_tensor(m, "out.W");
    for (size_t k = 0; k < w->size; k++)
        m->params[w->offset + k] = 3e38f;
    nmt_infer *st;
    ck_assert_int_eq(nmt_infer_create(&st, m, 1, 10, 1, 256), NMT_OK);
    const int32_t src[] = {4, 5, NMT_EOS}, tgt[] = {5, 6, NMT_EOS};
    float att[3 * 3];
    ck_assert_int_eq(nmt_align_forced(m, st, src, 3, tgt, 3, att), NMT_ERR_NUMERIC);
    ck_assert_msg(strstr(nmt_error_message(), "log-probabilities are not finite"), "%s",
                  nmt_error_message());
    nmt_infer_free(st);
    nmt_model_free(m);
}
END_TEST

/* ---- data formats --------------------------------------------------------- */

START_TEST(tsv_is_a_rectangle_of_distributions)
{
    int rc;
    char *s = capture(nmt_align_write_tsv, &pair, &rc);
    ck_assert_int_eq(rc, NMT_OK);
    /* Header: an empty cell and the 4 source tokens. */
    ck_assert_int_eq(strncmp(s, "\tein\t\"Hund\"\ta&b<c>\t</s>\n", 24), 0);
    char *line = strchr(s, '\n') + 1;
    for (int i = 0; i < pair.n_tgt; i++) {
        char *end = strchr(line, '\n');
        ck_assert_ptr_nonnull(end);
        *end = 0;
        int tabs = 0;
        for (char *p = line; *p; p++)
            tabs += *p == '\t';
        ck_assert_int_eq(tabs, pair.n_src); /* "tab\there" written with a space */
        double sum = 0;
        char *p = strchr(line, '\t');
        for (int j = 0; j < pair.n_src; j++) {
            char *next;
            double w = strtod(p + 1, &next);
            ck_assert_double_eq_tol(w, att_5x4[i * 4 + j], 1e-6);
            sum += w;
            p = next;
        }
        ck_assert_double_eq_tol(sum, 1.0, 1e-4);
        line = end + 1;
    }
    ck_assert_str_eq(line, "\n"); /* a blank line ends the pair */
    free(s);
}
END_TEST

START_TEST(json_escapes_and_round_trips)
{
    static const char *const s2[] = {"q\"uote", "back\\slash", "</s>"};
    static const char *const t2[] = {"new\nline", "ctl\x01", "grün", "</s>"};
    static const float att[] = {
        0.123456789f, 0.5f, 0.376543211f,
        1.0f / 3.0f, 1.0f / 3.0f, 1.0f / 3.0f,
        0.0f, 1e-7f, 1.0f - 1e-7f,
        0.25f, 0.25f, 0.5f,
    };
    nmt_alignment a = {3, 4, s2, t2, att};
    int rc;
    char *s = capture(nmt_align_write_json, &a, &rc);
    ck_assert_int_eq(rc, NMT_OK);
    ck_assert_ptr_nonnull(strstr(s, "\"source\": [\"q\\\"uote\", \"back\\\\slash\", \"</s>\"]"));
    ck_assert_ptr_nonnull(
        strstr(s, "\"target\": [\"new\\nline\", \"ctl\\u0001\", \"grün\", \"</s>\"]"));
    /* One line: the only newline is the last character. */
    ck_assert_ptr_eq(strchr(s, '\n'), s + strlen(s) - 1);
    /* Every weight reads back as the same float, and each row sums to 1. */
    char *p = strstr(s, "\"attention\": [") + strlen("\"attention\": [");
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(*p, '[');
        p++;
        double sum = 0;
        for (int j = 0; j < 3; j++) {
            char *next;
            double w = strtod(p, &next);
            ck_assert_ptr_ne(next, p);
            ck_assert(fabsf((float)w - att[i * 3 + j]) == 0.0f);
            sum += w;
            p = next;
            if (j < 2) {
                ck_assert_int_eq(*p, ',');
                p += 2;
            }
        }
        ck_assert_double_eq_tol(sum, 1.0, 1e-4);
        ck_assert_int_eq(*p, ']');
        p += i < 3 ? 3 : 1;
    }
    ck_assert_str_eq(p, "]}\n");
    free(s);
}
END_TEST

START_TEST(writers_refuse_nan)
{
    static const char *const s1[] = {"a", "</s>"};
    static const char *const t1[] = {"</s>"};
    float att[] = {NAN, 1.0f};
    nmt_alignment a = {2, 1, s1, t1, att};
    int rc;
    free(capture(nmt_align_write_json, &a, &rc));
    ck_assert_int_eq(rc, NMT_ERR_NUMERIC);
    free(capture(nmt_align_write_tsv, &a, &rc));
    ck_assert_int_eq(rc, NMT_ERR_NUMERIC);
}
END_TEST

/* ---- terminal heatmap ----------------------------------------------------- */

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)); p++)
        n++;
    return n;
}

static nmt_align_view text_view;
static int json_with_view(FILE *f, const nmt_alignment *a)
{
    return nmt_align_write_json_view(f, a, &text_view);
}
#define capture_json_view(a, rc) capture(json_with_view, (a), (rc))

static int text_plain(FILE *f, const nmt_alignment *a) { return nmt_align_write_text(f, a, NMT_COLOR_NONE); }
static int text_256(FILE *f, const nmt_alignment *a) { return nmt_align_write_text(f, a, NMT_COLOR_256); }
static int text_true(FILE *f, const nmt_alignment *a) { return nmt_align_write_text(f, a, NMT_COLOR_TRUE); }

START_TEST(text_heatmap_shades_and_colours)
{
    int rc;
    char *s = capture(text_plain, &pair, &rc);
    ck_assert_int_eq(rc, NMT_OK);
    ck_assert_ptr_null(strchr(s, '\x1b'));
    /* Source words run downwards: the first header row holds their first
     * letters, two columns apart. */
    ck_assert_ptr_nonnull(strstr(s, "│e \" a < \n"));
    ck_assert_ptr_nonnull(strstr(s, "│i H & / \n"));
    /* Row "dog": 0.05 0.8 0.1 0.05 → blank, full, light, blank. */
    ck_assert_ptr_nonnull(strstr(s, "dog      │  ██░░  \n"));
    /* Row "a": 0.7 0.1 0.1 0.1 → dark, light, light, light. */
    ck_assert_ptr_nonnull(strstr(s, "a        │▓▓░░░░░░\n"));
    ck_assert_ptr_nonnull(strstr(s, "weight:"));
    free(s);

    s = capture(text_true, &pair, &rc);
    unsigned char rgb[3];
    char want[64];
    nmt_heat_rgb(0.8f, rgb);
    snprintf(want, sizeof want, "\x1b[48;2;%d;%d;%dm", rgb[0], rgb[1], rgb[2]);
    ck_assert_ptr_nonnull(strstr(s, want));
    free(s);
    s = capture(text_256, &pair, &rc);
    ck_assert_ptr_nonnull(strstr(s, "\x1b[48;5;"));
    ck_assert_ptr_null(strstr(s, "\x1b[48;2;"));
    free(s);
}
END_TEST

START_TEST(text_heatmap_cuts_long_words)
{
    static const char *const s1[] = {"Donaudampfschifffahrt", "</s>"};
    static const char *const t1[] = {"Donaudampfschifffahrtsgesellschaft", "</s>"};
    static const float att[] = {1.0f, 0.0f, 0.5f, 0.5f};
    nmt_alignment a = {2, 2, s1, t1, att};
    int rc;
    char *s = capture(text_plain, &a, &rc);
    ck_assert_int_eq(rc, NMT_OK);
    ck_assert_ptr_nonnull(strstr(s, "Donaudampfsch~ │██  \n"));
    /* 12 header rows at most, the 12th showing the cut. */
    int rows = 0;
    for (char *p = s; (p = strstr(p, "│")) && p < strstr(s, "┼"); p++)
        rows++;
    ck_assert_int_eq(rows, 12);
    ck_assert_ptr_nonnull(strstr(s, "│~   \n"));
    free(s);
}
END_TEST

/* The display width of one line of the heatmap: code points, escape
 * sequences left out. */
static int line_width(const char *p, const char *end)
{
    int w = 0;
    while (p < end) {
        if (*p == '\x1b') {
            while (p < end && *p != 'm')
                p++;
            p++;
            continue;
        }
        w += ((unsigned char)*p & 0xc0) != 0x80;
        p++;
    }
    return w;
}

static int widest_line(const char *s)
{
    int most = 0;
    for (const char *p = s; *p;) {
        const char *nl = strchr(p, '\n');
        if (!nl)
            nl = p + strlen(p);
        int w = line_width(p, nl);
        most = w > most ? w : most;
        p = *nl ? nl + 1 : nl;
    }
    return most;
}

/* A 47-word source (the finding: 104 columns, wrapped by an 80-column
 * terminal) within 80 columns: bands of columns under their own words. */
static int text_with_view(FILE *f, const nmt_alignment *a)
{
    return nmt_align_write_text_view(f, a, &text_view);
}

START_TEST(text_heatmap_fits_the_width)
{
    enum { NS = 48, NT = 30 };
    static char words[NS][16];
    const char *src[NS], *tgt[NT];
    static float att[NT * NS];
    for (int j = 0; j < NS; j++) {
        snprintf(words[j], sizeof words[j], j == NS - 1 ? "</s>" : "word%d", j + 1);
        src[j] = words[j];
    }
    for (int i = 0; i < NT; i++) {
        tgt[i] = i == NT - 1 ? "</s>" : "Zielwortlänge";
        for (int j = 0; j < NS; j++)
            att[i * NS + j] = j == i ? 1.0f : 0.0f;
    }
    nmt_alignment a = {NS, NT, src, tgt, att};
    int rc;
    for (int color = 0; color < 3; color++) {
        text_view = (nmt_align_view){.width = 0, .color = (nmt_color_mode)color};
        char *s = capture(text_with_view, &a, &rc);
        ck_assert_int_eq(rc, NMT_OK);
        ck_assert_int_gt(widest_line(s), 100); /* no limit: one band */
        ck_assert_ptr_null(strstr(s, "source words"));
        free(s);
        for (int width = 40; width <= 120; width += 40) {
            text_view = (nmt_align_view){.width = width, .color = (nmt_color_mode)color,
                                         .title = "line 7"};
            s = capture(text_with_view, &a, &rc);
            ck_assert_int_eq(rc, NMT_OK);
            ck_assert_msg(widest_line(s) <= width, "%d columns in %d", widest_line(s), width);
            ck_assert(!strncmp(s, "line 7\n", 7));
            if (width < 100) {
                ck_assert_ptr_nonnull(strstr(s, "source words 1-"));
                ck_assert_ptr_nonnull(strstr(s, " of 48\n"));
            }
            /* every target row in every band */
            int bands = count(s, "┼");
            ck_assert_int_eq(count(s, "│"), bands * (6 + NT)); /* "word47": 6 header rows */
            free(s);
        }
    }
}
END_TEST

/* With colour, a weight near 0 keeps the terminal's background: no
 * background escape for the cell at all. */
START_TEST(text_heatmap_keeps_the_terminal_background)
{
    static const char *const s1[] = {"a", "b", "</s>"};
    static const char *const t1[] = {"x", "</s>"};
    static const float att[] = {0.0f, 1.0f, 0.0f, 0.01f, 0.0f, 0.99f};
    nmt_alignment a = {3, 2, s1, t1, att};
    int rc;
    for (int color = 1; color < 3; color++) {
        text_view = (nmt_align_view){.color = (nmt_color_mode)color};
        char *s = capture(text_with_view, &a, &rc);
        ck_assert_int_eq(rc, NMT_OK);
        /* row x: the first cell plain, then the coloured one */
        const char *row = strstr(s, "x    │");
        ck_assert_ptr_nonnull(row);
        ck_assert(!strncmp(row + strlen("x    │"), "  \x1b[48;", 7));
        /* and never a white background */
        ck_assert_ptr_null(strstr(s, "\x1b[48;2;255;255;255m"));
        ck_assert_ptr_null(strstr(s, "\x1b[48;5;231m"));
        ck_assert_ptr_null(strstr(s, "\x1b[48;5;255m"));
        free(s);
    }
}
END_TEST

/* Gold links are drawn in their cells, with a legend entry; links past
 * the words are not drawn. */
START_TEST(text_heatmap_marks_gold_links)
{
    nmt_link gold[] = {{0, 1, 0}, {2, 0, 0}, {9, 9, 0}};
    text_view = (nmt_align_view){.gold = gold, .n_gold = 3, .has_gold = 1};
    int rc;
    char *s = capture(text_with_view, &pair, &rc);
    ck_assert_int_eq(rc, NMT_OK);
    /* pair: rows a, dog, </s> ... see above; (2, 0) on row "a", (0, 1) on "dog" */
    ck_assert_ptr_nonnull(strstr(s, "a        │▓▓░░[░░░\n"));
    ck_assert_ptr_nonnull(strstr(s, "dog      │[]██░░  \n"));
    ck_assert_ptr_nonnull(strstr(s, "[] gold link"));
    ck_assert_int_eq(count(s, "["), 3); /* two cells and the legend */
    free(s);
    text_view = (nmt_align_view){.gold = gold, .n_gold = 3, .has_gold = 1,
                                 .color = NMT_COLOR_TRUE};
    s = capture(text_with_view, &pair, &rc);
    ck_assert_int_eq(count(s, "[]"), 3);
    free(s);
}
END_TEST

/* JSON Lines with the line number and the gold links. */
START_TEST(json_view_adds_line_and_gold)
{
    nmt_link gold[] = {{0, 1, 0}, {2, 0, 0}};
    text_view = (nmt_align_view){.line = 42, .gold = gold, .n_gold = 2, .has_gold = 1};
    int rc;
    char *s = capture_json_view(&pair, &rc);
    ck_assert_int_eq(rc, NMT_OK);
    ck_assert(!strncmp(s, "{\"line\": 42, \"source\": [", strlen("{\"line\": 42, \"source\": [")));
    ck_assert_ptr_nonnull(strstr(s, "]], \"gold\": [[0, 1], [2, 0]]}\n"));
    free(s);
    text_view = (nmt_align_view){.has_gold = 1};
    s = capture_json_view(&pair, &rc);
    ck_assert(!strncmp(s, "{\"source\": [", strlen("{\"source\": [")));
    ck_assert_ptr_nonnull(strstr(s, "]], \"gold\": []}\n"));
    free(s);
}
END_TEST

START_TEST(heat_ramp_darkens_steadily)
{
    unsigned char rgb[3];
    nmt_heat_rgb(0.0f, rgb);
    ck_assert(rgb[0] == 255 && rgb[1] == 255 && rgb[2] == 255);
    nmt_heat_rgb(-3.0f, rgb);
    ck_assert_int_eq(rgb[0], 255);
    nmt_heat_rgb(NAN, rgb);
    ck_assert_int_eq(rgb[0], 255);
    double last = 1e9;
    for (int k = 0; k <= 100; k++) {
        nmt_heat_rgb(k / 100.0f, rgb);
        double luma = 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2];
        ck_assert_double_lt(luma, last);
        ck_assert_int_ge(rgb[2], rgb[0]); /* blue throughout, never a rainbow */
        last = luma;
    }
    unsigned char top[3];
    nmt_heat_rgb(5.0f, top);
    ck_assert(memcmp(top, rgb, 3) == 0);
}
END_TEST

/* ---- SVG ------------------------------------------------------------------ */

static int svg_heatmap_titled(FILE *f, const nmt_alignment *a) { return nmt_svg_heatmap(f, a, "pair <1> & \"co\""); }
static int svg_heatmap_default(FILE *f, const nmt_alignment *a) { return nmt_svg_heatmap(f, a, NULL); }

START_TEST(svg_heatmap_is_well_formed)
{
    int rc;
    char *s = capture(svg_heatmap_titled, &pair, &rc);
    ck_assert_int_eq(rc, NMT_OK);
    const char *why = "";
    int elements = xml_check(s, &why);
    ck_assert_msg(elements > 0, "not well-formed: %s", why);
    ck_assert_ptr_nonnull(strstr(s, "pair &lt;1&gt; &amp; &quot;co&quot;"));
    ck_assert_ptr_nonnull(strstr(s, ">a&amp;b&lt;c&gt;</text>"));
    ck_assert_ptr_nonnull(strstr(s, ">&quot;Hund&quot;</text>"));
    ck_assert_ptr_nonnull(strstr(s, "viewBox=\"0 0 "));
    ck_assert_ptr_nonnull(strstr(s, "xmlns=\"http://www.w3.org/2000/svg\""));
    /* One cell per weight, each with its tooltip, and the bar's 3 ticks. */
    ck_assert_int_eq(count(s, "<title>"), pair.n_src * pair.n_tgt);
    ck_assert_ptr_nonnull(strstr(s, ">0.5</text>"));
    ck_assert_ptr_nonnull(strstr(s, "rotate(-90)"));
    free(s);

    s = capture(svg_heatmap_default, &pair, &rc);
    ck_assert_ptr_nonnull(strstr(s, ">Attention</text>"));
    free(s);
}
END_TEST

static int svg_width(const char *s)
{
    const char *w = strstr(s, " width=\"");
    return w ? atoi(w + 8) : -1;
}

START_TEST(svg_heatmap_grows_with_the_sentence)
{
    static const char *const words[] = {"w", "w", "w", "w", "w", "w", "w", "w", "w", "</s>"};
    float att[10 * 10];
    for (int k = 0; k < 100; k++)
        att[k] = 0.1f;
    nmt_alignment small = {5, 5, words + 5, words + 5, att};
    nmt_alignment big = {10, 10, words, words, att};
    int rc;
    char *a = capture(svg_heatmap_default, &small, &rc);
    char *b = capture(svg_heatmap_default, &big, &rc);
    ck_assert_int_eq(svg_width(b) - svg_width(a), 5 * 26);
    free(a);
    free(b);
}
END_TEST

START_TEST(svg_line_chart_is_well_formed)
{
    const double x[] = {5, 15, 25, 35, 45, 55};
    const double y1[] = {30.5, 28.1, 25.0, 22.2, 20.0, 18.4};
    const double y2[] = {29.0, 24.0, NAN, 12.5, 8.0, 6.1};
    nmt_svg_series series[2] = {{"attention", 6, x, y1}, {"none <baseline>", 6, x, y2}};
    nmt_svg_chart chart = {"BLEU by length", "source length", "BLEU", series, 2, 0, 0, 0, 0};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(nmt_svg_line_chart(f, &chart), NMT_OK);
    fclose(f);
    const char *why = "";
    ck_assert_msg(xml_check(buf, &why) > 0, "not well-formed: %s", why);
    ck_assert_ptr_nonnull(strstr(buf, ">none &lt;baseline&gt;</text>"));
    ck_assert_ptr_nonnull(strstr(buf, ">source length</text>"));
    /* The NaN splits the second line in two: 3 polylines in all. */
    ck_assert_int_eq(count(buf, "<polyline"), 3);
    ck_assert_int_eq(count(buf, "<circle"), 6 + 5 + 2); /* points + legend */
    /* y from 0 to a round 35 (step 5), x to 60 (step 10). */
    ck_assert_ptr_nonnull(strstr(buf, ">35</text>"));
    ck_assert_ptr_nonnull(strstr(buf, ">60</text>"));
    ck_assert_ptr_null(strstr(buf, ">70</text>"));
    free(buf);
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("align");
    TCase *tc = tcase_create("aer");
    tcase_add_test(tc, aer_perfect_is_zero);
    tcase_add_test(tc, aer_disjoint_is_one);
    tcase_add_test(tc, aer_partial_by_hand);
    tcase_add_test(tc, aer_sums_over_the_corpus);
    tcase_add_test(tc, aer_empty_cases);
    tcase_add_test(tc, aer_counts_duplicates_once);
    tcase_add_test(tc, pharaoh_parse_lines);
    tcase_add_test(tc, links_outside_their_pair);
    tcase_add_test(tc, words_counted_as_grouped);
    suite_add_tcase(s, tc);
    tc = tcase_create("forced");
    tcase_add_test(tc, forced_attention_rows_are_causal_distributions);
    tcase_add_test(tc, forced_alignment_refuses_outputs_that_are_not_finite);
    suite_add_tcase(s, tc);
    tc = tcase_create("formats");
    tcase_add_test(tc, hard_links_take_the_argmax);
    tcase_add_test(tc, hard_links_of_an_empty_source);
    tcase_add_test(tc, pieces_grouped_into_words);
    tcase_add_test(tc, tsv_is_a_rectangle_of_distributions);
    tcase_add_test(tc, json_escapes_and_round_trips);
    tcase_add_test(tc, writers_refuse_nan);
    tcase_add_test(tc, text_heatmap_shades_and_colours);
    tcase_add_test(tc, text_heatmap_cuts_long_words);
    tcase_add_test(tc, text_heatmap_fits_the_width);
    tcase_add_test(tc, text_heatmap_keeps_the_terminal_background);
    tcase_add_test(tc, text_heatmap_marks_gold_links);
    tcase_add_test(tc, json_view_adds_line_and_gold);
    tcase_add_test(tc, heat_ramp_darkens_steadily);
    suite_add_tcase(s, tc);
    tc = tcase_create("svg");
    tcase_add_test(tc, svg_heatmap_is_well_formed);
    tcase_add_test(tc, svg_heatmap_grows_with_the_sentence);
    tcase_add_test(tc, svg_line_chart_is_well_formed);
    suite_add_tcase(s, tc);
    return s;
}
