/* The sampling draw of src/decode/sample.c: the frequencies of softmax(logits
 * / T), the top-k and nucleus restrictions, the greedy limits (T near 0,
 * top-k 1), <pad> and <s> never drawn, and the per-sentence seeding. */
#include <math.h>
#include <string.h>

#include "decode/sample.h"
#include "nmt/error.h"
#include "nmt/vocab.h"
#include "test_common.h"

enum { V = 8, DRAWS = 200000 };

/* Logits whose softmax over the drawable tokens (1, 3..7) is known: p[v]
 * proportional to w[v]; <pad> and <s> get the largest logits of all. */
static const double w[V] = {0, 0.05, 0, 0.4, 0.25, 0.15, 0.1, 0.05};

static void make_logits(float *logits)
{
    for (int v = 0; v < V; v++)
        logits[v] = w[v] > 0 ? (float)log(w[v]) + 3.0f : 50.0f;
}

/* Draw counts of each token over DRAWS draws with o. */
static void count(const nmt_decode_opts *o, int *n, uint64_t seed)
{
    float logits[V];
    make_logits(logits);
    nmt_sample_cand scratch[V];
    nmt_rng r;
    nmt_sample_seed(&r, seed, 0);
    memset(n, 0, V * sizeof *n);
    for (int i = 0; i < DRAWS; i++) {
        int32_t t = nmt_sample_draw(logits, V, o, &r, scratch);
        ck_assert(t >= 0 && t < V);
        n[t]++;
    }
    ck_assert_int_eq(n[NMT_PAD], 0);
    ck_assert_int_eq(n[NMT_BOS], 0);
}

static void sampling(nmt_decode_opts *o)
{
    nmt_decode_opts_default(o);
    o->sample = 1;
}

START_TEST(frequencies_follow_softmax)
{
    nmt_decode_opts o;
    sampling(&o);
    int n[V];
    count(&o, n, 1);
    for (int v = 0; v < V; v++)
        ck_assert_double_lt(fabs((double)n[v] / DRAWS - w[v]), 0.006);
    /* temperature 2: p proportional to w^(1/2) */
    o.temperature = 2;
    count(&o, n, 2);
    double z = 0;
    for (int v = 0; v < V; v++)
        z += sqrt(w[v]);
    for (int v = 0; v < V; v++)
        ck_assert_double_lt(fabs((double)n[v] / DRAWS - sqrt(w[v]) / z), 0.006);
}
END_TEST

START_TEST(greedy_limits)
{
    nmt_decode_opts o;
    sampling(&o);
    int n[V];
    o.temperature = 1e-4f;
    count(&o, n, 3);
    ck_assert_int_eq(n[NMT_EOS], DRAWS);
    o.temperature = 1;
    o.top_k = 1;
    count(&o, n, 4);
    ck_assert_int_eq(n[NMT_EOS], DRAWS);
}
END_TEST

START_TEST(top_k_and_top_p)
{
    nmt_decode_opts o;
    sampling(&o);
    int n[V];
    /* top-k 2: tokens 3 and 4 only, in proportion 0.4 : 0.25 */
    o.top_k = 2;
    count(&o, n, 5);
    ck_assert_int_eq(n[3] + n[4], DRAWS);
    ck_assert_double_lt(fabs((double)n[3] / DRAWS - 0.4 / 0.65), 0.006);
    /* top-p 0.6: 0.4 is not enough, 0.4 + 0.25 is: tokens 3 and 4 */
    o.top_k = 0;
    o.top_p = 0.6f;
    count(&o, n, 6);
    ck_assert_int_eq(n[3] + n[4], DRAWS);
    ck_assert_int_gt(n[4], DRAWS / 4);
    /* top-p 0.3: token 3 alone reaches it */
    o.top_p = 0.3f;
    count(&o, n, 7);
    ck_assert_int_eq(n[3], DRAWS);
    /* top-p 0.85 after top-k 3 (0.4, 0.25, 0.15 renormalised: 0.5, 0.3125,
     * 0.1875): the first two reach 0.8125, all three are needed */
    o.top_k = 3;
    o.top_p = 0.85f;
    count(&o, n, 8);
    ck_assert_int_eq(n[3] + n[4] + n[5], DRAWS);
    ck_assert_int_gt(n[5], DRAWS / 8);
}
END_TEST

START_TEST(seeds_per_sentence)
{
    nmt_rng a, b;
    nmt_sample_seed(&a, 7, 3);
    nmt_sample_seed(&b, 7, 3);
    for (int i = 0; i < 100; i++)
        ck_assert_uint_eq(nmt_rng_next(&a), nmt_rng_next(&b));
    nmt_sample_seed(&a, 7, 3);
    nmt_sample_seed(&b, 7, 4);
    ck_assert_uint_ne(nmt_rng_next(&a), nmt_rng_next(&b));
    nmt_sample_seed(&a, 7, 3);
    nmt_sample_seed(&b, 8, 3);
    ck_assert_uint_ne(nmt_rng_next(&a), nmt_rng_next(&b));
}
END_TEST

START_TEST(decoder_refuses_bad_settings)
{
    /* the checks come before the model is looked at */
    nmt_decode_opts o;
    nmt_decoder *d = NULL;
    sampling(&o);
    o.temperature = 0;
    ck_assert_int_eq(nmt_decoder_create(&d, NULL, 1, 1, &o), NMT_ERR_ARG);
    sampling(&o);
    o.top_k = -1;
    ck_assert_int_eq(nmt_decoder_create(&d, NULL, 1, 1, &o), NMT_ERR_ARG);
    sampling(&o);
    o.top_p = 0;
    ck_assert_int_eq(nmt_decoder_create(&d, NULL, 1, 1, &o), NMT_ERR_ARG);
    o.top_p = 1.5f;
    ck_assert_int_eq(nmt_decoder_create(&d, NULL, 1, 1, &o), NMT_ERR_ARG);
    sampling(&o);
    o.beam = 2;
    ck_assert_int_eq(nmt_decoder_create(&d, NULL, 1, 1, &o), NMT_ERR_ARG);
    ck_assert_ptr_null(d);
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("sample");
    TCase *tc = tcase_create("sample");
    tcase_add_test(tc, frequencies_follow_softmax);
    tcase_add_test(tc, greedy_limits);
    tcase_add_test(tc, top_k_and_top_p);
    tcase_add_test(tc, seeds_per_sentence);
    tcase_add_test(tc, decoder_refuses_bad_settings);
    suite_add_tcase(s, tc);
    return s;
}
