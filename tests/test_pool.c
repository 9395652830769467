/* The thread pool (src/pool.h) and the products cut over it (gemm in
 * src/linear.c): every chunk runs exactly once, whatever the threads and
 * however long the workers slept; a cut product equals the whole one. */
#include <cblas.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "layers.h"
#include "pool.h"
#include "test_common.h"

enum { MAX_CHUNKS = 64 };

typedef struct count_job {
    atomic_int runs[MAX_CHUNKS];
    atomic_int bad_total; /* a chunk told the wrong n_chunks */
    int expect_chunks;
} count_job;

static void count_chunk(void *arg, int c, int n)
{
    count_job *j = arg;
    if (n != j->expect_chunks || c < 0 || c >= n)
        atomic_fetch_add(&j->bad_total, 1);
    else
        atomic_fetch_add(&j->runs[c], 1);
}

static void run_and_check(int n_chunks)
{
    count_job j = {.expect_chunks = n_chunks};
    for (int c = 0; c < MAX_CHUNKS; c++)
        atomic_init(&j.runs[c], 0);
    atomic_init(&j.bad_total, 0);
    pool_run(count_chunk, &j, n_chunks);
    ck_assert_int_eq(atomic_load(&j.bad_total), 0);
    for (int c = 0; c < n_chunks; c++)
        ck_assert_msg(atomic_load(&j.runs[c]) == 1, "chunk %d of %d ran %d times", c, n_chunks,
                      atomic_load(&j.runs[c]));
}

/* Many small jobs back to back: the workers spin between them, and a late
 * worker must never take a chunk of the next job for the last one's. */
START_TEST(every_chunk_once_back_to_back)
{
    int threads = 1 + _i; /* 1 .. 4 */
    ck_assert_int_eq(pool_set_threads(threads), 0);
    ck_assert_int_eq(pool_threads(), threads);
    unsigned seed = 12345;
    int jobs = getenv("NMT_VALGRIND") ? 500 : 5000;
    for (int k = 0; k < jobs; k++) {
        seed = seed * 1103515245u + 12345u;
        run_and_check(1 + (int)((seed >> 16) % MAX_CHUNKS));
    }
    pool_set_threads(1);
}
END_TEST

/* Pauses longer than the workers' spin: they sleep, and each job must wake
 * them (or run on the caller) rather than wait for ever. */
START_TEST(every_chunk_once_after_sleeping)
{
    ck_assert_int_eq(pool_set_threads(3), 0);
    struct timespec pause = {0, 1000000}; /* 1 ms, five times the spin */
    for (int k = 0; k < 60; k++) {
        nanosleep(&pause, NULL);
        run_and_check(2 + k % 7);
    }
    pool_set_threads(1);
}
END_TEST

/* The pool can shrink, grow and go back to the caller alone. */
START_TEST(threads_can_change)
{
    int sizes[] = {2, 4, 1, 3, 3, 2, 1};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        ck_assert_int_eq(pool_set_threads(sizes[i]), 0);
        ck_assert_int_eq(pool_threads(), sizes[i]);
        run_and_check(5);
    }
    ck_assert_int_eq(pool_set_threads(0), 0); /* taken as 1 */
    ck_assert_int_eq(pool_threads(), 1);
}
END_TEST

/* pool_chunk_range cuts [0, n) into aligned, ordered, covering parts. */
START_TEST(chunk_ranges_cover_in_order)
{
    for (int n = 0; n < 300; n += 7)
        for (int align = 1; align <= 16; align *= 4)
            for (int parts = 1; parts <= 9; parts++) {
                int next = 0;
                for (int c = 0; c < parts; c++) {
                    int lo, hi;
                    pool_chunk_range(n, align, c, parts, &lo, &hi);
                    ck_assert_int_eq(lo, next);
                    ck_assert_int_le(lo, hi);
                    if (hi < n)
                        ck_assert_int_eq(hi % align, 0);
                    next = hi;
                }
                ck_assert_int_eq(next, n);
            }
}
END_TEST

static void fill(float *x, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        x[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
}

/* gemm cut over 2 threads (along M when M >= N, else along N) against one
 * cblas_sgemm, for every transpose, with strides wider than the rows and
 * beta 0 and 1. Each element is the same kernel's sum over K, so apart from
 * OpenBLAS's choice of kernel for a narrower block the results agree to
 * float rounding. */
START_TEST(cut_product_equals_whole)
{
    ck_assert_int_eq(pool_set_threads(2), 0);
    int shapes[][3] = {{64, 1024, 256}, {700, 96, 130}, {33, 250, 64}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++)
                for (int beta = 0; beta < 2; beta++) {
                    int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
                    int lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 5, ldc = N + 2;
                    size_t na = (size_t)(ta ? K : M) * lda, nb = (size_t)(tb ? N : K) * ldb;
                    float *A = malloc(na * sizeof *A), *B = malloc(nb * sizeof *B);
                    float *C1 = malloc((size_t)M * ldc * sizeof *C1);
                    float *C2 = malloc((size_t)M * ldc * sizeof *C2);
                    fill(A, na, 1);
                    fill(B, nb, 2);
                    fill(C1, (size_t)M * ldc, 3);
                    memcpy(C2, C1, (size_t)M * ldc * sizeof *C2);
                    gemm(ta, tb, M, N, K, 0.5f, A, lda, B, ldb, (float)beta, C1, ldc);
                    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
                                tb ? CblasTrans : CblasNoTrans, M, N, K, 0.5f, A, lda, B, ldb,
                                (float)beta, C2, ldc);
                    double worst = 0;
                    for (int i = 0; i < M; i++)
                        for (int k = 0; k < ldc; k++) {
                            double d = fabs((double)C1[(size_t)i * ldc + k] -
                                            (double)C2[(size_t)i * ldc + k]);
                            if (k >= N) /* the padding between rows is never written */
                                ck_assert(d == 0);
                            worst = d > worst ? d : worst;
                        }
                    ck_assert_msg(worst < 1e-4, "%dx%dx%d ta %d tb %d: off by %g", M, N, K, ta,
                                  tb, worst);
                    free(A);
                    free(B);
                    free(C1);
                    free(C2);
                }
    pool_set_threads(1);
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("pool");
    TCase *tc = tcase_create("pool");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, every_chunk_once_back_to_back, 0, 4);
    tcase_add_test(tc, every_chunk_once_after_sleeping);
    tcase_add_test(tc, threads_can_change);
    tcase_add_test(tc, chunk_ranges_cover_in_order);
    tcase_add_test(tc, cut_product_equals_whole);
    suite_add_tcase(s, tc);
    return s;
}
