/* The thread pool (src/base/pool.h) and the products cut over it (nmt_gemm in
 * src/model/linear.c): every chunk runs exactly once, whatever the threads and
 * however long the workers slept; a cut product equals the whole one; the
 * model's gradients do not depend on the threads beyond rounding. */
#include <cblas.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/layers.h"
#include "model_fixture.h"
#include "nmt/error.h"
#include "nmt/threads.h"
#include "nmt/model.h"
#include "nmt/rng.h"
#include "base/pool.h"
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
    nmt_pool_run(count_chunk, &j, n_chunks);
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
    ck_assert_int_eq(nmt_pool_set_threads(threads), 0);
    ck_assert_int_eq(nmt_pool_threads(), threads);
    unsigned seed = 12345;
    int jobs = getenv("NMT_VALGRIND") ? 500 : 5000;
    for (int k = 0; k < jobs; k++) {
        seed = seed * 1103515245u + 12345u;
        run_and_check(1 + (int)((seed >> 16) % MAX_CHUNKS));
    }
    nmt_pool_set_threads(1);
}
END_TEST

/* Pauses longer than the workers' spin: they sleep, and each job must wake
 * them (or run on the caller) rather than wait for ever. */
START_TEST(every_chunk_once_after_sleeping)
{
    ck_assert_int_eq(nmt_pool_set_threads(3), 0);
    struct timespec pause = {0, 1000000}; /* 1 ms, over thirty times the spin */
    for (int k = 0; k < 60; k++) {
        nanosleep(&pause, NULL);
        run_and_check(2 + k % 7);
    }
    nmt_pool_set_threads(1);
}
END_TEST

/* Pauses about as long as the workers' spin (30 us, src/base/pool.c): a
 * job often comes as a worker gives up spinning and goes to sleep, where
 * the raised `sleeping` and the job number must meet. The caller busy-waits
 * (a sleep's timer slack alone is longer than the spin). */
START_TEST(every_chunk_once_around_the_spin)
{
    ck_assert_int_eq(nmt_pool_set_threads(2 + _i), 0);
    unsigned seed = 777;
    int jobs = getenv("NMT_VALGRIND") ? 200 : 3000;
    for (int k = 0; k < jobs; k++) {
        seed = seed * 1103515245u + 12345u;
        long wait_ns = (long)((seed >> 16) % 60000); /* 0 .. 60 us */
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do
            clock_gettime(CLOCK_MONOTONIC, &t);
        while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < wait_ns);
        run_and_check(2 + k % 15);
    }
    nmt_pool_set_threads(1);
}
END_TEST

/* The jump every training step makes at 2 threads: a job of few chunks
 * followed by one of many (a 2-chunk product, then the 16-chunk gradient
 * norm). A worker late for the small job must not claim a chunk of the big
 * one on the small one's state: that chunk would run twice and the call
 * could return before a chunk was written. Back to back for a few seconds
 * (NMT_POOL_STRESS_SECONDS), because the window is a few instructions wide:
 * before the fix, 4 s on two idle cores saw 14 chunks run twice (about a
 * million job pairs a second). */
typedef struct stress_job {
    atomic_int runs[16];
    int n;
} stress_job;

static void stress_chunk(void *arg, int c, int n)
{
    stress_job *j = arg;
    if (n == j->n && c >= 0 && c < n)
        atomic_fetch_add_explicit(&j->runs[c], 1, memory_order_relaxed);
}

START_TEST(small_then_large_jobs_stress)
{
    ck_assert_int_eq(nmt_pool_set_threads(2), 0);
    const char *env = getenv("NMT_POOL_STRESS_SECONDS");
    double seconds = env ? atof(env) : getenv("NMT_VALGRIND") ? 0.2 : 3.0;
    stress_job small = {.n = 2}, large = {.n = 16};
    stress_job *jobs[2] = {&small, &large};
    long pairs = 0, unfinished = 0, not_once = 0;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        for (int rep = 0; rep < 1024; rep++, pairs++) {
            for (int k = 0; k < 2; k++) {
                stress_job *j = jobs[k];
                for (int c = 0; c < j->n; c++)
                    atomic_store_explicit(&j->runs[c], 0, memory_order_relaxed);
                nmt_pool_run(stress_chunk, j, j->n);
                /* what the caller sees when the call returns */
                for (int c = 0; c < j->n; c++)
                    unfinished += atomic_load(&j->runs[c]) == 0;
            }
            /* a chunk run twice, or too early (before its counter was
             * cleared), or after its call returned */
            for (int k = 0; k < 2; k++)
                for (int c = 0; c < jobs[k]->n; c++)
                    not_once += atomic_load(&jobs[k]->runs[c]) != 1;
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) < seconds);
    nmt_pool_set_threads(1);
    ck_assert_msg(unfinished == 0 && not_once == 0,
                  "%ld job pairs: %ld chunks unfinished at return, %ld run other than once",
                  pairs, unfinished, not_once);
}
END_TEST

/* The pool can shrink, grow and go back to the caller alone. */
START_TEST(threads_can_change)
{
    int sizes[] = {2, 4, 1, 3, 3, 2, 1};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        ck_assert_int_eq(nmt_pool_set_threads(sizes[i]), 0);
        ck_assert_int_eq(nmt_pool_threads(), sizes[i]);
        run_and_check(5);
    }
    ck_assert_int_eq(nmt_pool_set_threads(0), 0); /* taken as 1 */
    ck_assert_int_eq(nmt_pool_threads(), 1);
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

/* nmt_gemm cut over 2 threads (along M when M >= N, else along N) against one
 * cblas_sgemm, for every transpose, with strides wider than the rows and
 * beta 0 and 1. Each element is the same kernel's sum over K, so apart from
 * OpenBLAS's choice of kernel for a narrower block the results agree to
 * float rounding. */
START_TEST(cut_product_equals_whole)
{
    ck_assert_int_eq(nmt_pool_set_threads(2), 0);
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
                    nmt_gemm(ta, tb, M, N, K, 0.5f, A, lda, B, ldb, (float)beta, C1, ldc);
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
    nmt_pool_set_threads(1);
}
END_TEST

/* The model's loss and gradients at 3 threads (products cut, rows shared)
 * against 1 thread, for each cell with attention (loops 0-2: bahdanau,
 * untied, dropout on embeddings and deep output; 3-5: bahdanau, tied, label
 * smoothing and dropout at all three sites; 6-8: general, scaled-dot and dot
 * with the regularizers of 3-5), on a batch large enough
 * that every product and every element-wise pass is cut: equal up to float
 * rounding: 1e-4 of the largest, as the parity suite allows float against
 * double (seen: at most 7e-6; a wrong row offset in a chunk is off by far
 * more). Weights of +-0.3 keep every gradient well above its rounding. */
START_TEST(gradients_agree_across_threads)
{
    enum { B = 40, D = 96, V = 300 };
    int tied = _i >= 3;
    /* bahdanau bi; then lstm general bi, gru scaled-dot bi, rnn dot uni */
    static const int scorers[] = {22, 19, 16};
    nmt_config cfg = fixture_config(_i < 6 ? 4 * (_i % 3) : scorers[_i - 6], D, D, D, D, V, V);
    cfg.tied = tied;
    const nmt_regularizer reg =
        tied ? (nmt_regularizer){.dropout_emb = 0.1f, .dropout_enc = 0.1f, .dropout_out = 0.1f,
                                 .label_smoothing = 0.1f}
             : (nmt_regularizer){.dropout_emb = 0.1f, .dropout_out = 0.1f};
    nmt_model *m;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, NULL, NULL), 0);
    ck_assert_int_eq(nmt_model_alloc_grads(m), 0);
    nmt_rng r;
    nmt_rng_seed(&r, 7);
    for (size_t i = 0; i < m->n_params; i++)
        m->params[i] = 0.6f * (nmt_rng_uniform(&r) - 0.5f);
    /* B sentence pairs of 3 .. 16 tokens, random ids past the specials */
    int *src[B], *tgt[B], src_n[B], tgt_n[B];
    for (int b = 0; b < B; b++) {
        src_n[b] = 3 + b % 14;
        tgt_n[b] = 3 + (b * 5) % 14;
        src[b] = malloc(16 * sizeof(int));
        tgt[b] = malloc(16 * sizeof(int));
        for (int t = 0; t < 16; t++) {
            src[b][t] = 4 + (int)(nmt_rng_uniform(&r) * (V - 4));
            tgt[b][t] = 4 + (int)(nmt_rng_uniform(&r) * (V - 4));
        }
    }
    nmt_batch bt;
    fixture_batch(&bt, B, (const int *const *)src, src_n, (const int *const *)tgt, tgt_n, 0);
    nmt_workspace *ws;
    ck_assert_int_eq(nmt_workspace_create(&ws, m, B, bt.src_T, bt.tgt_T), 0);
    float *one = malloc(m->n_params * sizeof *one);
    double loss[2];
    for (int k = 0; k < 2; k++) {
        nmt_set_threads(k ? 3 : 1);
        nmt_rng drop;
        nmt_rng_seed(&drop, 11);
        nmt_model_zero_grad(m);
        nmt_real l;
        ck_assert_int_eq(nmt_forward_backward(&l, m, ws, &bt, &reg, &drop), NMT_OK);
        loss[k] = (double)l;
        if (!k)
            memcpy(one, m->grads, m->n_params * sizeof *one);
    }
    nmt_set_threads(1);
    ck_assert(isfinite(loss[0]) && fabs(loss[1] - loss[0]) <= 1e-6 * fabs(loss[0]));
    for (int t = 0; t < m->n_tensors; t++) {
        const nmt_tensor_info *ti = &m->tensors[t];
        double top = 0, diff = 0;
        for (size_t i = ti->offset; i < ti->offset + ti->size; i++) {
            double a = one[i], b = m->grads[i];
            top = fabs(a) > top ? fabs(a) : top;
            diff = fabs(a - b) > diff ? fabs(a - b) : diff;
        }
        ck_assert_msg(top > 0, "%s: no gradient", ti->name);
        ck_assert_msg(diff <= 1e-4 * top, "%s: 1 vs 3 threads differ by %g of %g", ti->name,
                      diff, top);
    }
    free(one);
    nmt_workspace_free(ws);
    fixture_batch_free(&bt);
    for (int b = 0; b < B; b++) {
        free(src[b]);
        free(tgt[b]);
    }
    nmt_model_free(m);
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("pool");
    TCase *tc = tcase_create("pool");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, every_chunk_once_back_to_back, 0, 4);
    tcase_add_test(tc, every_chunk_once_after_sleeping);
    tcase_add_loop_test(tc, every_chunk_once_around_the_spin, 0, 2);
    tcase_add_test(tc, small_then_large_jobs_stress);
    tcase_add_test(tc, threads_can_change);
    tcase_add_test(tc, chunk_ranges_cover_in_order);
    tcase_add_test(tc, cut_product_equals_whole);
    tcase_add_loop_test(tc, gradients_agree_across_threads, 0, 9);
    suite_add_tcase(s, tc);
    return s;
}
