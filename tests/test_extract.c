/* Links from attention (src/align/extract.c) on hand-made matrices:
 * Shift-Att's rows, unaligned words (--eos-unaligned, --min-weight), the
 * Pharaoh line, and that rules of zero are nmt_align_hard's. */
#include <math.h>
#include <string.h>

#include "nmt/align.h"
#include "nmt/batch.h"
#include "nmt/rng.h"
#include "nmt/vocab.h"
#include "nmt/error.h"
#include "nmt/extract.h"
#include "test_common.h"

/* 3 source words and </s> across, 3 target words and </s> down. */
static const char *const SRC[] = {"a", "b", "c", "</s>"};
static const char *const TGT[] = {"x", "y", "z", "</s>"};

START_TEST(shift_reads_the_next_row_and_ends_on_source_eos)
{
    float att[4 * 4] = {
        0.7f, 0.1f, 0.1f, 0.1f, /* step 1, predicts x */
        0.1f, 0.6f, 0.2f, 0.1f, /* step 2, reads x */
        0.1f, 0.1f, 0.5f, 0.3f, /* step 3, reads y */
        0.2f, 0.1f, 0.1f, 0.6f, /* step 4, reads z, predicts </s> */
    };
    float want[4 * 4] = {
        0.1f, 0.6f, 0.2f, 0.1f, 0.1f, 0.1f, 0.5f, 0.3f,
        0.2f, 0.1f, 0.1f, 0.6f, 0.0f, 0.0f, 0.0f, 1.0f,
    };
    nmt_align_shift_rows(att, 4, 4);
    ck_assert(memcmp(att, want, sizeof att) == 0);
    /* the links read off the shifted rows: x-b, y-c, z-a */
    nmt_alignment a = {4, 4, SRC, TGT, att};
    nmt_link l[4];
    nmt_link_rules r = {0};
    ck_assert_int_eq(nmt_align_links(&a, &r, l), 3);
    ck_assert_int_eq(l[0].src, 1);
    ck_assert_int_eq(l[1].src, 2);
    ck_assert_int_eq(l[2].src, 0);
    ck_assert_int_eq(l[2].tgt, 2);
}
END_TEST

START_TEST(zero_rules_are_the_hard_links)
{
    float att[4 * 4] = {
        0.1f, 0.2f, 0.1f, 0.6f, 0.3f, 0.3f, 0.2f, 0.2f,
        0.1f, 0.1f, 0.1f, 0.7f, 0.2f, 0.2f, 0.2f, 0.4f,
    };
    nmt_alignment a = {4, 4, SRC, TGT, att};
    nmt_link h[4], l[4];
    int n = nmt_align_hard(&a, h);
    ck_assert_int_eq(nmt_align_links(&a, NULL, l), n);
    nmt_link_rules r = {0};
    ck_assert_int_eq(nmt_align_links(&a, &r, l), n);
    ck_assert(memcmp(h, l, (size_t)n * sizeof *h) == 0);
    /* row 1 ties a and b: the lower index, as nmt_align_hard */
    ck_assert_int_eq(l[1].src, 0);
}
END_TEST

START_TEST(eos_unaligned_drops_words_on_source_eos)
{
    float att[4 * 4] = {
        0.1f, 0.2f, 0.1f, 0.6f, /* most on </s>: dropped */
        0.4f, 0.1f, 0.1f, 0.4f, /* a tie with </s>: kept, on a */
        0.1f, 0.1f, 0.5f, 0.3f, /* on c */
        0.2f, 0.2f, 0.2f, 0.4f,
    };
    nmt_alignment a = {4, 4, SRC, TGT, att};
    nmt_link l[4];
    nmt_link_rules r = {.eos_unaligned = 1};
    ck_assert_int_eq(nmt_align_links(&a, &r, l), 2);
    ck_assert(l[0].src == 0 && l[0].tgt == 1);
    ck_assert(l[1].src == 2 && l[1].tgt == 2);
    /* without the rule every word is linked, x to b */
    ck_assert_int_eq(nmt_align_links(&a, NULL, l), 3);
    ck_assert(l[0].src == 1 && l[0].tgt == 0);
}
END_TEST

START_TEST(min_weight_drops_weak_links)
{
    float att[4 * 4] = {
        0.3f, 0.3f, 0.2f, 0.2f, /* best 0.3 */
        0.1f, 0.5f, 0.1f, 0.3f, /* best 0.5 */
        0.1f, 0.1f, 0.1f, 0.7f, /* best 0.1 (on c's tie: a) */
        0.2f, 0.2f, 0.2f, 0.4f,
    };
    nmt_alignment a = {4, 4, SRC, TGT, att};
    nmt_link l[4];
    nmt_link_rules r = {.min_weight = 0.3f};
    ck_assert_int_eq(nmt_align_links(&a, &r, l), 2); /* 0.3 is not below 0.3 */
    ck_assert(l[0].tgt == 0 && l[1].tgt == 1 && l[1].src == 1);
    r.min_weight = 0.31f;
    ck_assert_int_eq(nmt_align_links(&a, &r, l), 1);
    r.min_weight = 0;
    ck_assert_int_eq(nmt_align_links(&a, &r, l), 3);
    r.min_weight = 1;
    ck_assert_int_eq(nmt_align_links(&a, &r, l), 0);
}
END_TEST

START_TEST(pharaoh_line_of_links)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    const nmt_link l[] = {{0, 0, 0}, {12, 1, 0}, {3, 7, 0}};
    ck_assert_int_eq(nmt_align_write_links(f, l, 3), NMT_OK);
    ck_assert_int_eq(nmt_align_write_links(f, l, 0), NMT_OK);
    fclose(f);
    ck_assert_str_eq(buf, "0-0 12-1 3-7\n\n");
    free(buf);
}
END_TEST

/* A Transformer of 2 decoder layers and 2 heads over the words a-e, with
 * random weights (gains near 1 so that no layer is silenced). */
static nmt_model *tiny_transformer(void)
{
    static const char *const words[] = {"<pad>", "<unk>", "<s>", "</s>", "a", "b", "c", "d", "e"};
    nmt_vocab *sv, *tv;
    ck_assert_int_eq(nmt_vocab_from_tokens(&sv, words, 9), NMT_OK);
    ck_assert_int_eq(nmt_vocab_from_tokens(&tv, words, 9), NMT_OK);
    nmt_config c;
    memset(&c, 0, sizeof c);
    c.arch = NMT_ARCH_TRANSFORMER;
    c.transformer = (nmt_transformer_config){.d_model = 8, .heads = 2, .ff = 16,
                                             .enc_layers = 1, .dec_layers = 2};
    c.src_vocab = c.tgt_vocab = 9;
    nmt_model *m;
    ck_assert_int_eq(nmt_model_create(&m, &c, sv, tv), NMT_OK);
    nmt_rng r;
    nmt_rng_seed(&r, 5);
    for (size_t k = 0; k < m->n_params; k++)
        m->params[k] = 1.5f * (2.0f * nmt_rng_uniform(&r) - 1.0f);
    return m;
}

static const char *const P_SRC[] = {"a b c d", "d e", "e a a b c d e", ""};
static const char *const P_TGT[] = {"b c a", "e e d c b", "a", "c d"};
enum { N_PAIRS = 4 };

/* The training forward's maps over a batch of pairs of other lengths are
 * the decoding steps' (nmt_align_forced_maps), every map of every pair,
 * within float rounding; an RNN keeps none and says so. */
START_TEST(batched_maps_are_the_decoding_steps)
{
    nmt_model *m = tiny_transformer();
    ck_assert(nmt_model_workspace_maps(m));
    const int32_t src[N_PAIRS][8] = {{4, 5, 6, 7, 3}, {7, 8, 3}, {8, 4, 4, 5, 6, 7, 8, 3}, {3}};
    const int32_t tgt[N_PAIRS][6] = {{5, 6, 4, 3}, {8, 8, 7, 6, 5, 3}, {4, 3}, {6, 7, 3}};
    const int ns[N_PAIRS] = {5, 3, 8, 1}, nt[N_PAIRS] = {4, 6, 2, 3};
    nmt_batch b;
    ck_assert_int_eq(nmt_batch_alloc(&b, N_PAIRS, 8, 6), NMT_OK);
    b.B = N_PAIRS, b.src_T = 8, b.tgt_T = 6, b.guide = NULL, b.n_tgt_tokens = 0;
    memset(b.src, 0, 8 * N_PAIRS * sizeof *b.src);
    memset(b.tgt_in, 0, 6 * N_PAIRS * sizeof *b.tgt_in);
    memset(b.tgt_out, 0, 6 * N_PAIRS * sizeof *b.tgt_out);
    for (int k = 0; k < N_PAIRS; k++) {
        for (int t = 0; t < ns[k]; t++)
            b.src[t * N_PAIRS + k] = src[k][t];
        for (int t = 0; t < nt[k]; t++) {
            b.tgt_in[t * N_PAIRS + k] = t ? tgt[k][t - 1] : NMT_BOS;
            b.tgt_out[t * N_PAIRS + k] = tgt[k][t];
        }
        b.src_len[k] = ns[k], b.tgt_len[k] = nt[k], b.pair[k] = (size_t)k;
        b.n_tgt_tokens += (size_t)nt[k];
    }
    nmt_workspace *ws;
    ck_assert_int_eq(nmt_workspace_create(&ws, m, N_PAIRS, 8, 6), NMT_OK);
    nmt_rng rng;
    nmt_rng_seed(&rng, 1);
    const nmt_regularizer none = {0};
    nmt_real loss;
    ck_assert_int_eq(nmt_forward(&loss, m, ws, &b, &none, &rng), NMT_OK);
    nmt_infer *st;
    ck_assert_int_eq(nmt_infer_create(&st, m, 1, 8, 1, 8), NMT_OK);
    int n_maps = nmt_model_attention_maps(m);
    ck_assert_int_eq(n_maps, 6);
    float steps[6 * 6 * 8], batched[6 * 8];
    double worst = 0;
    for (int k = 0; k < N_PAIRS; k++) {
        ck_assert_int_eq(nmt_align_forced_maps(m, st, src[k], ns[k], tgt[k], nt[k], steps), NMT_OK);
        for (int mp = 0; mp < n_maps; mp++) {
            ck_assert_int_eq(nmt_workspace_attention_map(m, ws, &b, mp, k, batched), NMT_OK);
            for (int q = 0; q < ns[k] * nt[k]; q++) {
                double e = fabs((double)batched[q] - (double)steps[mp * ns[k] * nt[k] + q]);
                worst = e > worst ? e : worst;
            }
        }
    }
    ck_assert_msg(worst < 1e-5, "batched maps differ from the steps' by %g", worst);
    ck_assert_int_eq(nmt_workspace_attention_map(m, ws, &b, n_maps, 0, batched), NMT_ERR_ARG);
    ck_assert_int_eq(nmt_workspace_attention_map(m, ws, &b, 0, N_PAIRS, batched), NMT_ERR_ARG);
    nmt_infer_free(st);
    nmt_workspace_free(ws);
    nmt_batch_free(&b);
    nmt_model_free(m);
}
END_TEST

/* nmt_aligner_batch gives nmt_aligner_pair's links and counts, shifted or
 * not, words and pieces alike (the weights here are far from ties). */
START_TEST(aligner_batch_gives_the_pairs_links)
{
    nmt_model *m = tiny_transformer();
    for (int shift = 0; shift < 2; shift++) {
        nmt_link_rules r = {.shift = shift};
        nmt_aligner *one, *many;
        int map = nmt_model_default_attention_map(m);
        ck_assert_int_eq(nmt_aligner_create(&one, m, map, &r, 0), NMT_OK);
        ck_assert_int_eq(nmt_aligner_create(&many, m, map, &r, 0), NMT_OK);
        nmt_pair_links got[N_PAIRS];
        int failed;
        ck_assert_int_eq(nmt_aligner_batch(many, P_SRC, P_TGT, N_PAIRS, got, &failed), NMT_OK);
        for (int k = 0; k < N_PAIRS; k++) {
            nmt_pair_links want;
            ck_assert_int_eq(nmt_aligner_pair(one, P_SRC[k], P_TGT[k], &want), NMT_OK);
            ck_assert_int_eq(got[k].n_links, want.n_links);
            ck_assert_int_eq(got[k].n_src, want.n_src);
            ck_assert_int_eq(got[k].tgt_units, want.tgt_units);
            ck_assert(!want.n_links ||
                      !memcmp(got[k].links, want.links, (size_t)want.n_links * sizeof *want.links));
        }
        ck_assert_int_eq(got[3].n_links, 0); /* an empty source links nothing */
        ck_assert_int_eq(got[0].n_links, 3);
        nmt_aligner_free(one);
        nmt_aligner_free(many);
    }
    nmt_model_free(m);
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("extract");
    TCase *tc = tcase_create("links");
    tcase_add_test(tc, shift_reads_the_next_row_and_ends_on_source_eos);
    tcase_add_test(tc, zero_rules_are_the_hard_links);
    tcase_add_test(tc, eos_unaligned_drops_words_on_source_eos);
    tcase_add_test(tc, min_weight_drops_weak_links);
    tcase_add_test(tc, pharaoh_line_of_links);
    suite_add_tcase(s, tc);
    tc = tcase_create("batched");
    tcase_add_test(tc, batched_maps_are_the_decoding_steps);
    tcase_add_test(tc, aligner_batch_gives_the_pairs_links);
    suite_add_tcase(s, tc);
    return s;
}
