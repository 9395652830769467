#include <math.h>
#include <string.h>

#include "nmt/error.h"
#include "nmt/optim.h"
#include "test_common.h"

START_TEST(sgd_moves_by_minus_lr_times_gradient)
{
    float p[4] = {1.0f, -2.0f, 0.5f, 3.25f};
    const float g[4] = {0.25f, -1.0f, 2.0f, 0.0f};
    nmt_optim o;
    ck_assert_int_eq(nmt_optim_init(&o, NMT_OPTIM_SGD, 4, 1.0), NMT_OK);
    ck_assert_int_eq(o.n_moments, 0);
    nmt_optim_step(&o, p, g);
    /* lr 1: exactly p - g (these values are exact in binary) */
    ck_assert_double_eq((double)(p[0]), (double)(0.75f));
    ck_assert_double_eq((double)(p[1]), (double)(-1.0f));
    ck_assert_double_eq((double)(p[2]), (double)(-1.5f));
    ck_assert_double_eq((double)(p[3]), (double)(3.25f));
    o.lr = 0.5;
    nmt_optim_step(&o, p, g);
    ck_assert_double_eq((double)(p[0]), (double)(0.625f));
    ck_assert_double_eq((double)(p[2]), (double)(-2.5f));
    nmt_optim_free(&o);
}
END_TEST

/* Adam's first step moves each weight by lr * sign(g) (m^ / sqrt(v^) = g/|g|),
 * whatever the gradient's size: a property of the method, not of our code. */
START_TEST(adam_first_step_is_lr_times_sign)
{
    float p[3] = {0.0f, 0.0f, 1.0f};
    const float g[3] = {1e-3f, -50.0f, 7.0f};
    nmt_optim o;
    ck_assert_int_eq(nmt_optim_init(&o, NMT_OPTIM_ADAM, 3, 1e-3), NMT_OK);
    nmt_optim_step(&o, p, g);
    ck_assert_double_eq_tol(p[0], -1e-3, 1e-8);
    ck_assert_double_eq_tol(p[1], 1e-3, 1e-8);
    ck_assert_double_eq_tol(p[2], 1.0 - 1e-3, 1e-7);
    ck_assert_int_eq((int)o.t, 1);
    nmt_optim_free(&o);
}
END_TEST

/* Several Adam and Adadelta steps against the rules written out in double. */
START_TEST(adam_and_adadelta_follow_their_rules)
{
    enum { N = 5, STEPS = 7 };
    for (int kind = NMT_OPTIM_ADAM; kind <= NMT_OPTIM_ADADELTA; kind++) {
        float p[N];
        double ref[N], m[N] = {0}, v[N] = {0};
        for (int i = 0; i < N; i++)
            ref[i] = p[i] = 0.1f * (float)(i - 2);
        nmt_optim o;
        double lr = kind == NMT_OPTIM_ADAM ? 0.01 : 1.0;
        ck_assert_int_eq(nmt_optim_init(&o, (nmt_optim_kind)kind, N, lr), NMT_OK);
        for (int t = 1; t <= STEPS; t++) {
            float g[N];
            for (int i = 0; i < N; i++)
                g[i] = (float)(sin(1.7 * t + i) * (i + 1));
            nmt_optim_step(&o, p, g);
            for (int i = 0; i < N; i++) {
                double gi = g[i];
                if (kind == NMT_OPTIM_ADAM) {
                    m[i] = 0.9 * m[i] + 0.1 * gi;
                    v[i] = 0.999 * v[i] + 0.001 * gi * gi;
                    double mh = m[i] / (1 - pow(0.9, t)), vh = v[i] / (1 - pow(0.999, t));
                    ref[i] -= lr * mh / (sqrt(vh) + 1e-8);
                } else {
                    m[i] = 0.95 * m[i] + 0.05 * gi * gi;
                    double d = sqrt(v[i] + 1e-6) / sqrt(m[i] + 1e-6) * gi;
                    v[i] = 0.95 * v[i] + 0.05 * d * d;
                    ref[i] -= lr * d;
                }
            }
        }
        for (int i = 0; i < N; i++)
            ck_assert_double_eq_tol(p[i], ref[i], 1e-5);
        nmt_optim_free(&o);
    }
}
END_TEST

START_TEST(clipping_scales_to_the_max_norm)
{
    float g[4] = {3.0f, 4.0f, 0.0f, 0.0f};
    ck_assert_double_eq_tol(nmt_grad_norm(g, 4), 5.0, 1e-12);
    double norm = nmt_clip_grad_norm(g, 4, 1.0);
    ck_assert_double_eq_tol(norm, 5.0, 1e-12);
    ck_assert_double_eq_tol(g[0], 0.6, 1e-7);
    ck_assert_double_eq_tol(g[1], 0.8, 1e-7);
    ck_assert_double_eq_tol(nmt_grad_norm(g, 4), 1.0, 1e-6);
    /* below the limit, or with clipping off: untouched */
    float h[2] = {0.3f, 0.4f};
    nmt_clip_grad_norm(h, 2, 1.0);
    ck_assert_double_eq((double)(h[0]), (double)(0.3f));
    float k[2] = {30.0f, 40.0f};
    ck_assert_double_eq_tol(nmt_clip_grad_norm(k, 2, 0.0), 50.0, 1e-9);
    ck_assert_double_eq((double)(k[1]), (double)(40.0f));
}
END_TEST

/* The norm is summed in double: float would overflow on 1e20^2. */
START_TEST(norm_in_double_and_non_finite)
{
    float g[2] = {1e20f, 1e20f};
    double norm = nmt_grad_norm(g, 2);
    ck_assert(isfinite(norm));
    ck_assert_double_eq_tol(norm / 1e20, sqrt(2.0), 1e-6);
    float bad[3] = {1.0f, NAN, 2.0f};
    double n2 = nmt_clip_grad_norm(bad, 3, 1.0);
    ck_assert(!isfinite(n2));
    ck_assert_double_eq((double)(bad[0]), (double)(1.0f)); /* left alone */
    float inf[2] = {INFINITY, 0.0f};
    ck_assert(isinf(nmt_grad_norm(inf, 2)));
}
END_TEST

START_TEST(names_and_defaults)
{
    nmt_optim_kind k;
    ck_assert_int_eq(nmt_optim_parse("adam", &k), NMT_OK);
    ck_assert_int_eq(k, NMT_OPTIM_ADAM);
    ck_assert_int_eq(nmt_optim_parse("adadelta", &k), NMT_OK);
    ck_assert_int_eq(k, NMT_OPTIM_ADADELTA);
    ck_assert_int_eq(nmt_optim_parse("rmsprop", &k), NMT_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "rmsprop"));
    ck_assert_str_eq(nmt_optim_name(NMT_OPTIM_SGD), "sgd");
    ck_assert_double_eq(nmt_optim_default_lr(NMT_OPTIM_ADAM), 1e-3);
    ck_assert_double_eq(nmt_optim_default_lr(NMT_OPTIM_ADADELTA), 1.0);
    ck_assert_str_eq(nmt_optim_moment_name(NMT_OPTIM_ADAM, 1), "adam.v");
    ck_assert_ptr_null(nmt_optim_moment_name(NMT_OPTIM_SGD, 0));
    ck_assert_ptr_null(nmt_optim_moment_name(NMT_OPTIM_ADAM, 2));
    nmt_optim o;
    ck_assert_int_eq(nmt_optim_init(&o, NMT_OPTIM_ADADELTA, 10, 1.0), NMT_OK);
    ck_assert_int_eq(o.n_moments, 2);
    for (int i = 0; i < 10; i++)
        ck_assert_double_eq((double)(o.moment[0][i] + o.moment[1][i]), (double)(0.0f));
    nmt_optim_free(&o);
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("optim");
    TCase *tc = tcase_create("optim");
    tcase_add_test(tc, sgd_moves_by_minus_lr_times_gradient);
    tcase_add_test(tc, adam_first_step_is_lr_times_sign);
    tcase_add_test(tc, adam_and_adadelta_follow_their_rules);
    tcase_add_test(tc, clipping_scales_to_the_max_norm);
    tcase_add_test(tc, norm_in_double_and_non_finite);
    tcase_add_test(tc, names_and_defaults);
    suite_add_tcase(s, tc);
    return s;
}
