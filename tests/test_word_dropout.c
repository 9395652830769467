/* Word dropout (nmt_word_dropout, src/train/step_batch.c; docs/DESIGN.md,
 * "Word dropout"): on batches filled from a corpus, the replaced ids follow
 * the rate (within 4 standard deviations, for several rates and keys), are
 * <unk> and nothing else, never touch a source's </s>, the decoder's <s>,
 * padding or the labels; the same key gives the same replacements at any
 * thread count, and a batch shared out among processes (pairs lo..hi-1 in
 * a batch of their own, counted from lo) is replaced as the whole batch
 * is; another key gives other replacements. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nmt/batch.h"
#include "nmt/error.h"
#include "nmt/rng.h"
#include "nmt/threads.h"
#include "nmt/train.h"
#include "test_common.h"

enum { PAIRS = 48, MAX_LEN = 40 };

/* PAIRS pairs of 1 to MAX_LEN tokens a side, ids 4..99 (never <unk>), drawn
 * from a fixed seed. */
static void make_corpus(nmt_corpus *c)
{
    nmt_rng r;
    nmt_rng_seed(&r, 2026);
    memset(c, 0, sizeof *c);
    c->n = c->n_lines = PAIRS;
    c->src_off = malloc((PAIRS + 1) * sizeof *c->src_off);
    c->tgt_off = malloc((PAIRS + 1) * sizeof *c->tgt_off);
    c->line = malloc(PAIRS * sizeof *c->line);
    c->src = malloc(PAIRS * MAX_LEN * sizeof *c->src);
    c->tgt = malloc(PAIRS * MAX_LEN * sizeof *c->tgt);
    ck_assert(c->src_off && c->tgt_off && c->line && c->src && c->tgt);
    c->src_off[0] = c->tgt_off[0] = 0;
    for (size_t i = 0; i < PAIRS; i++) {
        size_t ls = 1 + nmt_rng_below(&r, MAX_LEN), lt = 1 + nmt_rng_below(&r, MAX_LEN);
        for (size_t t = 0; t < ls; t++)
            c->src[c->src_off[i] + t] = (int32_t)(4 + nmt_rng_below(&r, 96));
        for (size_t t = 0; t < lt; t++)
            c->tgt[c->tgt_off[i] + t] = (int32_t)(4 + nmt_rng_below(&r, 96));
        c->src_off[i + 1] = c->src_off[i] + ls;
        c->tgt_off[i + 1] = c->tgt_off[i] + lt;
        c->line[i] = i + 1;
    }
}

/* A batch of the corpus's pairs [lo, hi). */
static void fill(nmt_batch *b, const nmt_corpus *c, size_t lo, size_t hi)
{
    size_t pairs[PAIRS];
    for (size_t i = lo; i < hi; i++)
        pairs[i - lo] = i;
    ck_assert_int_eq(nmt_batch_alloc(b, PAIRS, MAX_LEN + 1, MAX_LEN + 1), NMT_OK);
    ck_assert_int_eq(nmt_batch_fill(b, c, pairs, (int)(hi - lo)), NMT_OK);
}

/* Position (t, k)'s id in a time-major matrix of B columns. */
static int32_t at(const int32_t *ids, int B, int t, int k)
{
    return ids[(size_t)t * B + k];
}

/* The rate: of the tokens that may be replaced (source tokens before </s>,
 * decoder inputs after <s>), the share replaced is within 4 standard
 * deviations of p on each side, for several keys; every other position is
 * as filled; a replaced id is <unk>; the count returned is what changed. */
START_TEST(replacements_follow_the_rate_and_spare_the_rest)
{
    nmt_corpus c;
    make_corpus(&c);
    const float rates[] = {0, 0.1f, 0.3f, 0.5f, 0.9f};
    for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
        float p = rates[r];
        size_t n[2] = {0, 0}, hit[2] = {0, 0}, reported = 0;
        for (uint64_t key = 1; key <= 6; key++) {
            nmt_batch orig, b;
            fill(&orig, &c, 0, PAIRS);
            fill(&b, &c, 0, PAIRS);
            /* the source side at p, the decoder's at p / 2 */
            reported += nmt_word_dropout(&b, p, p / 2, key * 0x51ed27a7ULL, 0);
            int B = b.B;
            for (int k = 0; k < B; k++) {
                for (int t = 0; t < b.src_T; t++) {
                    int32_t was = at(orig.src, B, t, k), is = at(b.src, B, t, k);
                    if (t < b.src_len[k] - 1) {
                        n[0]++;
                        hit[0] += is != was;
                        ck_assert(is == was || is == NMT_UNK);
                    } else {
                        ck_assert_int_eq(is, was); /* </s> and padding */
                    }
                }
                for (int t = 0; t < b.tgt_T; t++) {
                    int32_t was = at(orig.tgt_in, B, t, k), is = at(b.tgt_in, B, t, k);
                    if (t >= 1 && t < b.tgt_len[k]) {
                        n[1]++;
                        hit[1] += is != was;
                        ck_assert(is == was || is == NMT_UNK);
                    } else {
                        ck_assert_int_eq(is, was); /* <s> and padding */
                    }
                }
                ck_assert_int_eq(at(b.src, B, b.src_len[k] - 1, k), NMT_EOS);
                ck_assert_int_eq(at(b.tgt_in, B, 0, k), NMT_BOS);
            }
            /* the labels, lengths and pairs are never touched */
            ck_assert_mem_eq(b.tgt_out, orig.tgt_out, (size_t)b.tgt_T * B * sizeof *b.tgt_out);
            ck_assert_mem_eq(b.src_len, orig.src_len, (size_t)B * sizeof *b.src_len);
            ck_assert_mem_eq(b.tgt_len, orig.tgt_len, (size_t)B * sizeof *b.tgt_len);
            ck_assert_uint_eq(b.n_tgt_tokens, orig.n_tgt_tokens);
            nmt_batch_free(&orig);
            nmt_batch_free(&b);
        }
        ck_assert_uint_eq(reported, hit[0] + hit[1]);
        for (int s = 0; s < 2; s++) {
            double q = s ? p / 2 : p, want = q * (double)n[s];
            double sd = sqrt((double)n[s] * q * (1 - q));
            ck_assert_msg(fabs((double)hit[s] - want) <= 4 * sd + 1e-9,
                          "rate %g, side %d: %zu of %zu replaced, expected %.0f +- %.0f", q, s,
                          hit[s], n[s], want, 4 * sd);
            if (q == 0)
                ck_assert_uint_eq(hit[s], 0);
        }
    }
    nmt_corpus_free(&c);
}
END_TEST

/* The same key gives the same ids at 1 and 3 threads and twice; another
 * key gives others; pairs lo..hi-1 filled as a batch of their own (one
 * process's share, counted from lo) are replaced as in the whole batch,
 * for every cut into three shares. */
START_TEST(same_at_any_thread_count_and_in_shares)
{
    nmt_corpus c;
    make_corpus(&c);
    const uint64_t key = 0x9a3c5e7f11d2b4a6ULL;
    nmt_batch whole, again, other;
    fill(&whole, &c, 0, PAIRS);
    fill(&again, &c, 0, PAIRS);
    fill(&other, &c, 0, PAIRS);
    nmt_set_threads(1);
    nmt_word_dropout(&whole, 0.3f, 0.2f, key, 0);
    nmt_set_threads(3);
    nmt_word_dropout(&again, 0.3f, 0.2f, key, 0);
    nmt_word_dropout(&other, 0.3f, 0.2f, key + 1, 0);
    nmt_set_threads(1);
    size_t ns = (size_t)whole.src_T * whole.B, nt = (size_t)whole.tgt_T * whole.B;
    ck_assert_mem_eq(whole.src, again.src, ns * sizeof *whole.src);
    ck_assert_mem_eq(whole.tgt_in, again.tgt_in, nt * sizeof *whole.tgt_in);
    ck_assert(memcmp(whole.src, other.src, ns * sizeof *whole.src) != 0);
    ck_assert(memcmp(whole.tgt_in, other.tgt_in, nt * sizeof *whole.tgt_in) != 0);
    const size_t cuts[][2] = {{1, 2}, {7, 30}, {16, 32}, {24, 47}};
    for (size_t q = 0; q < sizeof cuts / sizeof cuts[0]; q++) {
        size_t edge[4] = {0, cuts[q][0], cuts[q][1], PAIRS};
        for (int s = 0; s < 3; s++) {
            nmt_batch part;
            fill(&part, &c, edge[s], edge[s + 1]);
            nmt_word_dropout(&part, 0.3f, 0.2f, key, edge[s]);
            for (int k = 0; k < part.B; k++) {
                int w = (int)edge[s] + k;
                for (int t = 0; t < part.src_len[k]; t++)
                    ck_assert_int_eq(at(part.src, part.B, t, k), at(whole.src, whole.B, t, w));
                for (int t = 0; t < part.tgt_len[k]; t++)
                    ck_assert_int_eq(at(part.tgt_in, part.B, t, k),
                                     at(whole.tgt_in, whole.B, t, w));
            }
            nmt_batch_free(&part);
        }
    }
    nmt_batch_free(&whole);
    nmt_batch_free(&again);
    nmt_batch_free(&other);
    nmt_corpus_free(&c);
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("word-dropout");
    TCase *tc = tcase_create("word-dropout");
    tcase_add_test(tc, replacements_follow_the_rate_and_spare_the_rest);
    tcase_add_test(tc, same_at_any_thread_count_and_in_shares);
    suite_add_tcase(s, tc);
    return s;
}
