/* Batches (layout, padding, markers) and epoch plans (coverage,
 * determinism, padding). */
#include <stdio.h>
#include <string.h>

#include "nmt/batch.h"
#include "nmt/error.h"
#include "nmt/rng.h"
#include "test_common.h"

/* A corpus of n pairs with the given lengths, built in memory; token t of
 * pair i is 10 + 1000 i + t on the source and 20 + 1000 i + t on the
 * target, so every id tells where it came from. */
static void make_corpus(nmt_corpus *c, size_t n, const size_t *src_len, const size_t *tgt_len)
{
    memset(c, 0, sizeof *c);
    c->n = c->n_lines = n;
    c->src_off = malloc((n + 1) * sizeof *c->src_off);
    c->tgt_off = malloc((n + 1) * sizeof *c->tgt_off);
    c->line = malloc(n * sizeof *c->line);
    c->src_off[0] = c->tgt_off[0] = 0;
    for (size_t i = 0; i < n; i++) {
        c->src_off[i + 1] = c->src_off[i] + src_len[i];
        c->tgt_off[i + 1] = c->tgt_off[i] + tgt_len[i];
        c->line[i] = i + 1;
    }
    c->src = malloc((c->src_off[n] + 1) * sizeof *c->src);
    c->tgt = malloc((c->tgt_off[n] + 1) * sizeof *c->tgt);
    for (size_t i = 0; i < n; i++) {
        for (size_t t = 0; t < src_len[i]; t++)
            c->src[c->src_off[i] + t] = (int32_t)(10 + 1000 * i + t);
        for (size_t t = 0; t < tgt_len[i]; t++)
            c->tgt[c->tgt_off[i] + t] = (int32_t)(20 + 1000 * i + t);
    }
}

START_TEST(fills_time_major_with_markers_and_padding)
{
    size_t ls[] = {3, 1, 5, 0}, lt[] = {2, 4, 1, 0};
    nmt_corpus c;
    make_corpus(&c, 4, ls, lt);
    nmt_batch b;
    ck_assert_int_eq(nmt_batch_alloc(&b, 4, 8, 8), 0);
    size_t pairs[] = {2, 0, 1, 3};
    /* fill twice: the second, smaller fill must not see the first's ids */
    ck_assert_int_eq(nmt_batch_fill(&b, &c, pairs, 4), 0);
    size_t pairs2[] = {1, 0, 3};
    ck_assert_int_eq(nmt_batch_fill(&b, &c, pairs2, 3), 0);
    ck_assert_int_eq(b.B, 3);
    ck_assert_int_eq(b.src_T, 4); /* pair 0: 3 tokens + </s> */
    ck_assert_int_eq(b.tgt_T, 5); /* pair 1: 4 tokens + </s> */
    ck_assert_uint_eq(b.n_tgt_tokens, 5 + 3 + 1);
    for (int k = 0; k < 3; k++) {
        size_t p = pairs2[k];
        ck_assert_uint_eq(b.pair[k], p);
        ck_assert_int_eq(b.src_len[k], (int)ls[p] + 1);
        ck_assert_int_eq(b.tgt_len[k], (int)lt[p] + 1);
        for (int t = 0; t < b.src_T; t++) {
            int32_t want = t < (int)ls[p] ? (int32_t)(10 + 1000 * p + (size_t)t)
                         : t == (int)ls[p] ? NMT_EOS : NMT_PAD;
            ck_assert_int_eq(b.src[t * 3 + k], want);
        }
        for (int t = 0; t < b.tgt_T; t++) {
            int32_t in = t == 0 ? NMT_BOS
                       : t <= (int)lt[p] ? (int32_t)(20 + 1000 * p + (size_t)t - 1) : NMT_PAD;
            int32_t out = t < (int)lt[p] ? (int32_t)(20 + 1000 * p + (size_t)t)
                        : t == (int)lt[p] ? NMT_EOS : NMT_PAD;
            ck_assert_int_eq(b.tgt_in[t * 3 + k], in);
            ck_assert_int_eq(b.tgt_out[t * 3 + k], out);
        }
    }
    /* refused: too long, too many, a pair out of range */
    nmt_batch small;
    ck_assert_int_eq(nmt_batch_alloc(&small, 2, 4, 8), 0);
    size_t p2[] = {2};
    ck_assert_int_eq(nmt_batch_fill(&small, &c, p2, 1), NMT_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "line 3"));
    ck_assert_int_eq(nmt_batch_fill(&small, &c, pairs, 3), NMT_ERR_ARG);
    size_t p9[] = {9};
    ck_assert_int_eq(nmt_batch_fill(&small, &c, p9, 1), NMT_ERR_ARG);
    nmt_batch_free(&small);
    ck_assert_int_eq(nmt_batch_alloc(&small, 0, 4, 4), NMT_ERR_ARG);
    nmt_batch_free(&b);
    ck_assert_ptr_null(b.src);
    nmt_corpus_free(&c);
}
END_TEST

/* n pairs with random lengths 1..40 (target about the source's). */
static void random_corpus(nmt_corpus *c, size_t n, uint64_t seed)
{
    size_t *ls = malloc(n * sizeof *ls), *lt = malloc(n * sizeof *lt);
    nmt_rng r;
    nmt_rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++) {
        ls[i] = 1 + (size_t)nmt_rng_below(&r, 40);
        lt[i] = 1 + (ls[i] + (size_t)nmt_rng_below(&r, 9)) % 40;
    }
    make_corpus(c, n, ls, lt);
    free(ls);
    free(lt);
}

/* Every pair exactly once; all batches full but at most one. */
static void assert_covers(const nmt_batch_plan *p, size_t n, int bs)
{
    char *seen = calloc(n, 1);
    size_t partial = 0;
    ck_assert_uint_eq(p->n_batches, (n + (size_t)bs - 1) / (size_t)bs);
    ck_assert_uint_eq(p->start[0], 0);
    ck_assert_uint_eq(p->start[p->n_batches], n);
    for (size_t b = 0; b < p->n_batches; b++) {
        size_t size = p->start[b + 1] - p->start[b];
        ck_assert_uint_ge(size, 1);
        ck_assert_uint_le(size, (size_t)bs);
        partial += size < (size_t)bs;
        for (size_t i = p->start[b]; i < p->start[b + 1]; i++) {
            ck_assert_uint_lt(p->index[i], n);
            ck_assert(!seen[p->index[i]]);
            seen[p->index[i]] = 1;
        }
    }
    ck_assert_uint_le(partial, 1);
    free(seen);
}

/* Padded source positions over real ones, summed over the plan. */
static double padding(const nmt_batch_plan *p, const nmt_corpus *c)
{
    size_t pad = 0, real = 0;
    for (size_t b = 0; b < p->n_batches; b++) {
        size_t max = 0, sum = 0, size = p->start[b + 1] - p->start[b];
        for (size_t i = p->start[b]; i < p->start[b + 1]; i++) {
            size_t q = p->index[i], l = c->src_off[q + 1] - c->src_off[q] + 1;
            sum += l;
            max = l > max ? l : max;
        }
        pad += max * size - sum;
        real += sum;
    }
    return (double)pad / (double)real;
}

START_TEST(plan_without_shuffle_is_corpus_order)
{
    nmt_corpus c;
    random_corpus(&c, 1003, 5);
    nmt_batch_plan p;
    ck_assert_int_eq(nmt_batch_plan_make(&p, &c, 10, 0, 1, 0), 0);
    assert_covers(&p, 1003, 10);
    for (size_t i = 0; i < 1003; i++)
        ck_assert_uint_eq(p.index[i], i);
    ck_assert_uint_eq(p.start[100], 1000);
    nmt_batch_plan_free(&p);
    ck_assert_int_eq(nmt_batch_plan_make(&p, &c, 0, 1, 1, 0), NMT_ERR_ARG);
    nmt_corpus_free(&c);
}
END_TEST

START_TEST(plan_with_shuffle_covers_and_is_deterministic)
{
    nmt_corpus c;
    random_corpus(&c, 12345, 9);
    int sizes[] = {1, 7, 64, 20000};
    for (int s = 0; s < 4; s++) {
        nmt_batch_plan a, b, e, f;
        ck_assert_int_eq(nmt_batch_plan_make(&a, &c, sizes[s], 1, 42, 3), 0);
        ck_assert_int_eq(nmt_batch_plan_make(&b, &c, sizes[s], 1, 42, 3), 0);
        ck_assert_int_eq(nmt_batch_plan_make(&e, &c, sizes[s], 1, 42, 4), 0);
        ck_assert_int_eq(nmt_batch_plan_make(&f, &c, sizes[s], 1, 43, 3), 0);
        assert_covers(&a, c.n, sizes[s]);
        assert_covers(&e, c.n, sizes[s]);
        ck_assert_uint_eq(a.n_batches, b.n_batches);
        ck_assert(!memcmp(a.index, b.index, c.n * sizeof *a.index));
        ck_assert(!memcmp(a.start, b.start, (a.n_batches + 1) * sizeof *a.start));
        if (a.n_batches > 1) { /* another epoch or seed: another order */
            ck_assert(memcmp(a.index, e.index, c.n * sizeof *a.index));
            ck_assert(memcmp(a.index, f.index, c.n * sizeof *a.index));
        }
        nmt_batch_plan_free(&a);
        nmt_batch_plan_free(&b);
        nmt_batch_plan_free(&e);
        nmt_batch_plan_free(&f);
    }
    nmt_corpus_free(&c);
}
END_TEST

START_TEST(plan_with_shuffle_pads_little)
{
    nmt_corpus c;
    random_corpus(&c, 20000, 11);
    nmt_batch_plan sorted, plain;
    ck_assert_int_eq(nmt_batch_plan_make(&sorted, &c, 32, 1, 7, 0), 0);
    ck_assert_int_eq(nmt_batch_plan_make(&plain, &c, 32, 0, 7, 0), 0);
    double ps = padding(&sorted, &c), pp = padding(&plain, &c);
    printf("padding with pools: %.2f%%, in corpus order: %.2f%%\n", 100 * ps, 100 * pp);
    /* Lengths are uniform on 1..40: unsorted batches pad about 80%; a pool
     * of 3200 pairs puts ~80 of each length in it, so sorted batches of 32
     * rarely straddle two lengths. */
    ck_assert_double_lt(ps, 0.02);
    ck_assert_double_gt(pp, 0.5);
    /* the batches are not visited shortest first */
    size_t runs_up = 0;
    for (size_t b = 1; b < sorted.n_batches; b++) {
        size_t q0 = sorted.index[sorted.start[b - 1]], q1 = sorted.index[sorted.start[b]];
        runs_up += c.src_off[q1 + 1] - c.src_off[q1] >= c.src_off[q0 + 1] - c.src_off[q0];
    }
    ck_assert_uint_lt(runs_up, sorted.n_batches * 3 / 4);
    nmt_batch_plan_free(&sorted);
    nmt_batch_plan_free(&plain);
    nmt_corpus_free(&c);
}
END_TEST

/* --batch-tokens: every pair once; each batch's padded target (pairs x
 * the longest target with </s>) within the budget, or one pair alone, and
 * within the cap of pairs; greedy (in corpus order, the next pair would not
 * have fitted); 0 tokens is the plain plan; the same arguments the same
 * plan. */
static size_t tgt_positions(const nmt_corpus *c, size_t q)
{
    return c->tgt_off[q + 1] - c->tgt_off[q] + 1;
}

START_TEST(plan_by_tokens)
{
    nmt_corpus c;
    random_corpus(&c, 5000, 13);
    const int budget = 300, cap = 25;
    for (int shuffle = 0; shuffle <= 1; shuffle++) {
        nmt_batch_plan p, again, plain, zero;
        ck_assert_int_eq(nmt_batch_plan_make_tokens(&p, &c, cap, budget, shuffle, 5, 2), 0);
        ck_assert_int_eq(nmt_batch_plan_make_tokens(&again, &c, cap, budget, shuffle, 5, 2), 0);
        ck_assert_uint_eq(p.n_batches, again.n_batches);
        ck_assert(!memcmp(p.index, again.index, c.n * sizeof *p.index));
        char *seen = calloc(c.n, 1);
        size_t alone = 0, pairs = 0;
        for (size_t b = 0; b < p.n_batches; b++) {
            size_t n = p.start[b + 1] - p.start[b], longest = 0;
            ck_assert_uint_ge(n, 1);
            ck_assert_uint_le(n, (size_t)cap);
            for (size_t i = p.start[b]; i < p.start[b + 1]; i++) {
                ck_assert(!seen[p.index[i]]);
                seen[p.index[i]] = 1;
                size_t l = tgt_positions(&c, p.index[i]);
                longest = l > longest ? l : longest;
            }
            pairs += n;
            if (n * longest > (size_t)budget) {
                ck_assert_uint_eq(n, 1);
                alone++;
            }
            if (!shuffle && b + 1 < p.n_batches && n < (size_t)cap) {
                size_t next = tgt_positions(&c, p.index[p.start[b + 1]]);
                ck_assert_uint_gt((n + 1) * (next > longest ? next : longest), (size_t)budget);
            }
        }
        ck_assert_uint_eq(pairs, c.n);
        ck_assert_uint_eq(alone, 0); /* targets of at most 41 positions fit 300 */
        if (!shuffle)
            for (size_t i = 0; i < c.n; i++)
                ck_assert_uint_eq(p.index[i], i);
        ck_assert_int_eq(nmt_batch_plan_make_tokens(&zero, &c, cap, 0, shuffle, 5, 2), 0);
        ck_assert_int_eq(nmt_batch_plan_make(&plain, &c, cap, shuffle, 5, 2), 0);
        ck_assert_uint_eq(zero.n_batches, plain.n_batches);
        ck_assert(!memcmp(zero.index, plain.index, c.n * sizeof *p.index));
        free(seen);
        nmt_batch_plan_free(&p);
        nmt_batch_plan_free(&again);
        nmt_batch_plan_free(&plain);
        nmt_batch_plan_free(&zero);
    }
    /* a budget below every pair: each pair alone */
    nmt_batch_plan one;
    ck_assert_int_eq(nmt_batch_plan_make_tokens(&one, &c, cap, 1, 1, 5, 2), 0);
    ck_assert_uint_eq(one.n_batches, c.n);
    nmt_batch_plan_free(&one);
    nmt_corpus_free(&c);
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("batch");
    TCase *tc = tcase_create("batch");
    tcase_add_test(tc, fills_time_major_with_markers_and_padding);
    tcase_add_test(tc, plan_without_shuffle_is_corpus_order);
    tcase_add_test(tc, plan_with_shuffle_covers_and_is_deterministic);
    tcase_add_test(tc, plan_with_shuffle_pads_little);
    tcase_add_test(tc, plan_by_tokens);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
