/* nmt/blas.h: the kernel a CPU deserves, over a table of cases, and the
 * features' names both ways. */
#include <string.h>

#include "nmt/blas.h"
#include "nmt/error.h"
#include "test_common.h"

#define SSE ""
#define AVX "avx"
#define AVX2 "avx avx2 fma"
#define AVX512 "avx avx2 fma avx512f avx512bw avx512vl avx512dq"

static const struct {
    const char *kernel;   /* what OpenBLAS runs */
    const char *features; /* what the CPU can run */
    const char *want;     /* what nmt asks for, or NULL: leave it */
} cases[] = {
    /* the machine: a Sapphire Rapids OpenBLAS 0.3.21 does not know */
    {"Prescott", AVX512 " avx512bf16", "SkylakeX"},
    {"Prescott", AVX512, "SkylakeX"},
    {"Core2", AVX512, "SkylakeX"},
    {"Nehalem", AVX512, "SkylakeX"},
    {"Sandybridge", AVX512, "SkylakeX"},
    {"Haswell", AVX512, "SkylakeX"},
    {"Zen", AVX512, "SkylakeX"},
    /* an AVX2 CPU it does not know */
    {"Prescott", AVX2, "Haswell"},
    {"Core2", AVX2, "Haswell"},
    {"Penryn", AVX2, "Haswell"},
    {"Nehalem", AVX2, "Haswell"},
    {"Sandybridge", AVX2, "Haswell"},
    {"Prescott", AVX, "Sandybridge"},
    /* as good as the CPU allows: left alone */
    {"Haswell", AVX2, NULL},
    {"Zen", AVX2, NULL},
    {"SkylakeX", AVX512, NULL},
    {"Cooperlake", AVX512 " avx512bf16", NULL},
    {"SapphireRapids", AVX512 " avx512bf16", NULL},
    {"Sandybridge", AVX, NULL},
    {"Prescott", SSE, NULL},
    {"Nehalem", SSE, NULL},
    /* better than the features say (a test's features, a hypervisor that
     * hides some): never lowered */
    {"SkylakeX", AVX2, NULL},
    {"Haswell", SSE, NULL},
    /* AVX-512 needs F, BW, VL and DQ together for OpenBLAS's SkylakeX */
    {"Haswell", "avx avx2 fma avx512f", NULL},
    {"Haswell", "avx avx2 fma avx512f avx512bw avx512vl", NULL},
    {"Prescott", "avx avx2 fma avx512f avx512bw avx512vl", "Haswell"},
    /* AVX2 without FMA is not Haswell's */
    {"Prescott", "avx avx2", "Sandybridge"},
    /* names are the library's, compared without case */
    {"prescott", AVX512, "SkylakeX"},
    {"HASWELL", AVX512, "SkylakeX"},
    /* kernels it does not know are left alone (another architecture's,
     * a newer OpenBLAS's) */
    {"ARMV8", AVX512, NULL},
    {"NeoverseN1", AVX2, NULL},
    {"unknown", AVX512, NULL},
    {"", AVX512, NULL},
};

START_TEST(kernel_for_each_case)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        nmt_cpu_features f;
        ck_assert_int_eq(nmt_cpu_features_parse(cases[i].features, &f), NMT_OK);
        const char *got = nmt_blas_kernel_for(cases[i].kernel, &f);
        if (!cases[i].want)
            ck_assert_msg(got == NULL, "case %zu (%s on '%s'): got %s, want none", i,
                          cases[i].kernel, cases[i].features, got);
        else
            ck_assert_msg(got && !strcmp(got, cases[i].want), "case %zu (%s on '%s'): got %s, "
                          "want %s", i, cases[i].kernel, cases[i].features, got ? got : "none",
                          cases[i].want);
    }
}
END_TEST

START_TEST(levels)
{
    nmt_cpu_features f;
    ck_assert_int_eq(nmt_cpu_features_parse(AVX512, &f), NMT_OK);
    ck_assert_int_eq(nmt_cpu_level(&f), 3);
    ck_assert_int_eq(nmt_cpu_features_parse(AVX2, &f), NMT_OK);
    ck_assert_int_eq(nmt_cpu_level(&f), 2);
    ck_assert_int_eq(nmt_cpu_features_parse("none", &f), NMT_OK);
    ck_assert_int_eq(nmt_cpu_level(&f), 0);
    ck_assert_int_eq(nmt_blas_kernel_level("Prescott"), 0);
    ck_assert_int_eq(nmt_blas_kernel_level("Sandybridge"), 1);
    ck_assert_int_eq(nmt_blas_kernel_level("Zen"), 2);
    ck_assert_int_eq(nmt_blas_kernel_level("Cooperlake"), 3);
    ck_assert_int_eq(nmt_blas_kernel_level("POWER10"), -1);
    ck_assert_int_eq(nmt_blas_kernel_level(NULL), -1);
}
END_TEST

START_TEST(feature_names_round_trip)
{
    nmt_cpu_features f, g;
    ck_assert_int_eq(nmt_cpu_features_parse("avx512bf16,avx, fma avx2", &f), NMT_OK);
    ck_assert(f.avx && f.avx2 && f.fma && f.avx512bf16 && !f.avx512f);
    char buf[160];
    nmt_cpu_features_format(&f, buf, sizeof buf);
    ck_assert_str_eq(buf, "avx avx2 fma avx512bf16");
    ck_assert_int_eq(nmt_cpu_features_parse(buf, &g), NMT_OK);
    ck_assert_mem_eq(&f, &g, sizeof f);
    ck_assert_int_eq(nmt_cpu_features_parse("", &f), NMT_OK);
    nmt_cpu_features_format(&f, buf, sizeof buf);
    ck_assert_str_eq(buf, "none");
    ck_assert_int_eq(nmt_cpu_features_parse("avx sse9", &f), NMT_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "'sse9'"));
    ck_assert_int_eq(nmt_cpu_features_parse("AVX2", &f), NMT_ERR_ARG);
}
END_TEST

/* What the machine reports is consistent: AVX-512 only with AVX2, and the
 * running kernel's name is one OpenBLAS has. */
START_TEST(this_machine)
{
    nmt_cpu_features f;
    nmt_cpu_features_read(&f);
    if (f.avx512f)
        ck_assert(f.avx2 && f.avx);
    if (f.avx2)
        ck_assert(f.avx);
    ck_assert(strlen(nmt_blas_kernel()) > 0);
    ck_assert_ptr_nonnull(strstr(nmt_blas_config(), "OpenBLAS"));
    char buf[256];
    nmt_blas_describe(buf, sizeof buf);
    ck_assert(!strncmp(buf, nmt_blas_kernel(), strlen(nmt_blas_kernel())));
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("blas");
    TCase *tc = tcase_create("blas");
    tcase_add_test(tc, kernel_for_each_case);
    tcase_add_test(tc, levels);
    tcase_add_test(tc, feature_names_round_trip);
    tcase_add_test(tc, this_machine);
    suite_add_tcase(s, tc);
    return s;
}
