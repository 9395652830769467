#include <math.h>

#include "nmt/rng.h"
#include "test_common.h"

START_TEST(same_seed_same_stream)
{
    nmt_rng a, b;
    nmt_rng_seed(&a, 42);
    nmt_rng_seed(&b, 42);
    for (int i = 0; i < 1000; i++)
        ck_assert_uint_eq(nmt_rng_next(&a), nmt_rng_next(&b));
    nmt_rng_seed(&b, 43);
    ck_assert_uint_ne(nmt_rng_next(&a), nmt_rng_next(&b));
}
END_TEST

START_TEST(state_copy_resumes_stream)
{
    nmt_rng a;
    nmt_rng_seed(&a, 7);
    for (int i = 0; i < 10; i++)
        nmt_rng_next(&a);
    nmt_rng saved = a;
    uint64_t x = nmt_rng_next(&a);
    ck_assert_uint_eq(nmt_rng_next(&saved), x);
}
END_TEST

START_TEST(distributions_look_right)
{
    nmt_rng r;
    nmt_rng_seed(&r, 1);
    double sum = 0, sq = 0;
    int n = 200000, hist[10] = {0};
    for (int i = 0; i < n; i++) {
        double z = nmt_rng_normal(&r);
        sum += z;
        sq += z * z;
        float u = nmt_rng_uniform(&r);
        ck_assert(u >= 0.0f && u < 1.0f);
        hist[nmt_rng_below(&r, 10)]++;
    }
    ck_assert_double_lt(fabs(sum / n), 0.01);
    ck_assert_double_lt(fabs(sq / n - 1.0), 0.02);
    for (int k = 0; k < 10; k++)
        ck_assert_int_gt(hist[k], n / 10 - n / 50);
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("rng");
    TCase *tc = tcase_create("rng");
    tcase_add_test(tc, same_seed_same_stream);
    tcase_add_test(tc, state_copy_resumes_stream);
    tcase_add_test(tc, distributions_look_right);
    suite_add_tcase(s, tc);
    return s;
}
