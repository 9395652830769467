/* The word aligner of nmt align --em (src/align/ibm2.c): IBM Model 2 with
 * a diagonal prior trained by EM. On hand-made corpora: co-occurrence
 * finds the links when word order says otherwise, the posterior of every
 * target word is a distribution (before and after training), a pair of
 * words seen once is aligned along the diagonal (square and not), the
 * same pairs give the same bits twice, empty sides and bad options. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nmt/error.h"
#include "nmt/ibm2.h"
#include "nmt/text.h"
#include "test_common.h"

static nmt_ibm2 *make(const char *const (*pairs)[2], size_t n, const nmt_ibm2_opts *o)
{
    nmt_ibm2 *m;
    ck_assert_int_eq(nmt_ibm2_create(&m, o), NMT_OK);
    for (size_t k = 0; k < n; k++)
        ck_assert_int_eq(nmt_ibm2_add(m, pairs[k][0], strlen(pairs[k][0]), pairs[k][1],
                                      strlen(pairs[k][1])), NMT_OK);
    return m;
}

static void train(nmt_ibm2 *m, int iterations)
{
    nmt_ibm2_stats st = {0};
    for (int k = 0; k < iterations; k++) {
        ck_assert_int_eq(nmt_ibm2_iterate(m, &st), NMT_OK);
        ck_assert_int_eq(st.iteration, k + 1);
        ck_assert(isfinite(st.log_prob) && st.log_prob < 0);
        ck_assert(st.null_share >= 0 && st.null_share <= 1);
    }
}

/* A B C D translate as x y z w: every two of them, with their
 * translations in the same order and then the other way round. Where
 * they are crossed the diagonal prior says "first to first",
 * co-occurrence says otherwise, and co-occurrence must win. */
static const char *const crossed[][2] = {
    {"A B", "x y"}, {"A B", "y x"}, {"A C", "x z"}, {"A C", "z x"}, {"A D", "x w"},
    {"A D", "w x"}, {"B C", "y z"}, {"B C", "z y"}, {"B D", "y w"}, {"B D", "w y"},
    {"C D", "z w"}, {"C D", "w z"},
};
#define N_CROSSED (sizeof crossed / sizeof crossed[0])

START_TEST(cooccurrence_finds_the_links)
{
    nmt_ibm2 *m = make(crossed, N_CROSSED, NULL);
    train(m, 5);
    nmt_link l[2];
    for (size_t k = 0; k < N_CROSSED; k++) {
        int x = (int)(k % 2); /* the odd pairs are crossed */
        ck_assert_int_eq(nmt_ibm2_links(m, k, l), 2);
        ck_assert_msg(l[0].src == x && l[0].tgt == 0 && l[1].src == 1 - x && l[1].tgt == 1,
                      "pair %zu: %d-%d %d-%d", k, l[0].src, l[0].tgt, l[1].src, l[1].tgt);
    }
    nmt_ibm2_free(m);
}
END_TEST

static void check_rows(nmt_ibm2 *m)
{
    double post[64 * 65];
    for (size_t k = 0; k < nmt_ibm2_pairs(m); k++) {
        int ns, nt;
        nmt_ibm2_pair_size(m, k, &ns, &nt);
        if (!ns || !nt)
            continue;
        ck_assert_int_eq(nmt_ibm2_posterior(m, k, post), NMT_OK);
        for (int i = 0; i < nt; i++) {
            double sum = 0;
            for (int j = 0; j <= ns; j++) {
                double p = post[i * (ns + 1) + j];
                ck_assert(p > 0 && p <= 1);
                sum += p;
            }
            ck_assert_double_eq_tol(sum, 1, 1e-12);
        }
    }
}

START_TEST(posterior_rows_are_distributions)
{
    static const char *const pairs[][2] = {
        {"the house is small", "das Haus ist klein"}, {"the house", "das Haus"},
        {"a small book", "ein kleines Buch"}, {"is", "ist ja"}, {"x", ""},
        {"the book is the book", "das Buch"},
    };
    nmt_ibm2 *m = make(pairs, 6, NULL);
    check_rows(m); /* t uniform: the prior itself */
    /* before training, row i's NULL is p0 exactly */
    double post[4 * 5];
    ck_assert_int_eq(nmt_ibm2_posterior(m, 0, post), NMT_OK);
    ck_assert_double_eq_tol(post[0], 0.08, 1e-12);
    train(m, 3);
    check_rows(m);
    /* plain maximum likelihood and a fixed tension too */
    nmt_ibm2_opts o = nmt_ibm2_defaults();
    o.alpha = 0;
    o.learn_tension = 0;
    nmt_ibm2 *ml = make(pairs, 6, &o);
    train(ml, 4);
    check_rows(ml);
    ck_assert(nmt_ibm2_tension(ml) == 4.0);
    nmt_ibm2_free(ml);
    nmt_ibm2_free(m);
}
END_TEST

/* words s0 s1 ... (or t0 ...) separated by spaces */
static void numbered(char *buf, char c, int n)
{
    buf[0] = '\0';
    for (int k = 0; k < n; k++)
        sprintf(buf + strlen(buf), "%s%c%d", k ? " " : "", c, k);
}

START_TEST(words_seen_once_follow_the_diagonal)
{
    char s20[256], t20[256], s10[256], t30[256];
    numbered(s20, 's', 20);
    numbered(t20, 't', 20);
    numbered(s10, 'u', 10);
    numbered(t30, 'v', 30);
    const char *const pairs[][2] = {{s20, t20}, {s10, t30}};
    /* with t uniform the first posterior is the prior itself, so the first
     * M-step must find the tension it started from */
    nmt_ibm2_opts o = nmt_ibm2_defaults();
    o.tension = 7;
    nmt_ibm2 *m = make(pairs, 2, &o);
    train(m, 1);
    ck_assert_double_eq_tol(nmt_ibm2_tension(m), 7, 1e-9);
    nmt_ibm2_free(m);
    m = make(pairs, 2, NULL);
    train(m, 5);
    /* nothing but the prior tells the words apart, and EM sharpens it */
    ck_assert(nmt_ibm2_tension(m) > 4);
    nmt_link l[30];
    ck_assert_int_eq(nmt_ibm2_links(m, 0, l), 20);
    for (int k = 0; k < 20; k++) {
        ck_assert_int_eq(l[k].tgt, k);
        ck_assert_int_eq(l[k].src, k);
    }
    /* 10 source words, 30 target: target i (from 0) near source (i + 1) / 3 */
    int n = nmt_ibm2_links(m, 1, l);
    ck_assert_int_eq(n, 30);
    for (int k = 0; k < n; k++) {
        double want = (l[k].tgt + 1) / 3.0 - 1;
        ck_assert_msg(fabs(l[k].src - want) <= 1, "target %d linked to %d", l[k].tgt,
                      l[k].src);
    }
    nmt_ibm2_free(m);
}
END_TEST

START_TEST(same_bits_twice)
{
    double a[2 * 3], b[2 * 3];
    nmt_ibm2 *x = make(crossed, N_CROSSED, NULL), *y = make(crossed, N_CROSSED, NULL);
    train(x, 4);
    train(y, 4);
    double tx = nmt_ibm2_tension(x), ty = nmt_ibm2_tension(y);
    ck_assert(!memcmp(&tx, &ty, sizeof tx));
    for (size_t k = 0; k < N_CROSSED; k++) {
        ck_assert_int_eq(nmt_ibm2_posterior(x, k, a), NMT_OK);
        ck_assert_int_eq(nmt_ibm2_posterior(y, k, b), NMT_OK);
        ck_assert(!memcmp(a, b, sizeof a));
    }
    nmt_ibm2_free(x);
    nmt_ibm2_free(y);
}
END_TEST

START_TEST(empty_sides_words_and_refusals)
{
    static const char *const pairs[][2] = {{"", "a b"}, {"a b", ""}, {"", ""},
                                           {"a\xc2\xa0" "b\tc  d", "e"}};
    nmt_ibm2 *m = make(pairs, 4, NULL);
    int ns, nt;
    nmt_ibm2_pair_size(m, 3, &ns, &nt);
    /* words as links files count them: a no-break space and a tab separate */
    const char *w = pairs[3][0];
    ck_assert_int_eq(ns, (int)nmt_count_words(w, strlen(w)));
    ck_assert_int_eq(ns, 4);
    size_t vs, vt;
    nmt_ibm2_vocab_sizes(m, &vs, &vt);
    ck_assert_uint_eq(vs, 4);
    ck_assert_uint_eq(vt, 3);
    train(m, 2);
    nmt_link l[4];
    for (size_t k = 0; k < 3; k++)
        ck_assert_int_eq(nmt_ibm2_links(m, k, l), 0);
    double post[8];
    ck_assert_int_eq(nmt_ibm2_posterior(m, 0, post), NMT_ERR_ARG);
    ck_assert_int_eq(nmt_ibm2_links(m, 4, l), NMT_ERR_ARG);
    ck_assert_int_eq(nmt_ibm2_add(m, "a", 1, "b", 1), NMT_ERR_ARG);
    nmt_ibm2_free(m);

    nmt_ibm2_opts o = nmt_ibm2_defaults();
    o.p_null = 1;
    ck_assert_int_eq(nmt_ibm2_create(&m, &o), NMT_ERR_ARG);
    ck_assert_ptr_null(m);
    o = nmt_ibm2_defaults();
    o.tension = 0;
    ck_assert_int_eq(nmt_ibm2_create(&m, &o), NMT_ERR_ARG);
    o = nmt_ibm2_defaults();
    o.alpha = -1;
    ck_assert_int_eq(nmt_ibm2_create(&m, &o), NMT_ERR_ARG);
    /* no pairs: an iteration does nothing, and says so with zeros */
    ck_assert_int_eq(nmt_ibm2_create(&m, NULL), NMT_OK);
    nmt_ibm2_stats st;
    ck_assert_int_eq(nmt_ibm2_iterate(m, &st), NMT_OK);
    ck_assert(st.log_prob == 0);
    nmt_ibm2_free(m);
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("ibm2");
    TCase *tc = tcase_create("em");
    tcase_add_test(tc, cooccurrence_finds_the_links);
    tcase_add_test(tc, posterior_rows_are_distributions);
    tcase_add_test(tc, words_seen_once_follow_the_diagonal);
    tcase_add_test(tc, same_bits_twice);
    tcase_add_test(tc, empty_sides_words_and_refusals);
    suite_add_tcase(s, tc);
    return s;
}
