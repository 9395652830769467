/* The fully connected layer y = W x + b over N rows at once: one product. */
#include <string.h>

#include "model/layers.h"
#include "base/pool.h"
#include "base/simd.h"

/* Products under this many FLOPs run on the caller: cutting them would cost
 * more in hand-over than it saves (2 MFLOP is about 20 us on one core). */
#define GEMM_SPLIT_FLOPS 2e6
/* Chunk edges fall on multiples of the kernels' register blocks. */
#define GEMM_ALIGN 16

static void gemm_whole(int ta, int tb, int M, int N, int K, real alpha, const real *A, int lda,
                       const real *B, int ldb, real beta, real *C, int ldc)
{
    NMT_GEMM(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
             M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

typedef struct gemm_job {
    int ta, tb, M, N, K, lda, ldb, ldc, split_rows;
    real alpha, beta;
    const real *A, *B;
    real *C;
} gemm_job;

/* Chunk c: a block of rows of C (and of op(A)) or of columns (and of op(B)). */
static void gemm_chunk(void *arg, int c, int n_chunks)
{
    const gemm_job *j = arg;
    int lo, hi;
    if (j->split_rows) {
        pool_chunk_range(j->M, GEMM_ALIGN, c, n_chunks, &lo, &hi);
        const real *A = j->ta ? j->A + lo : j->A + (size_t)lo * j->lda;
        if (hi > lo)
            gemm_whole(j->ta, j->tb, hi - lo, j->N, j->K, j->alpha, A, j->lda, j->B, j->ldb,
                       j->beta, j->C + (size_t)lo * j->ldc, j->ldc);
    } else {
        pool_chunk_range(j->N, GEMM_ALIGN, c, n_chunks, &lo, &hi);
        const real *B = j->tb ? j->B + (size_t)lo * j->ldb : j->B + lo;
        if (hi > lo)
            gemm_whole(j->ta, j->tb, j->M, hi - lo, j->K, j->alpha, j->A, j->lda, B, j->ldb,
                       j->beta, j->C + lo, j->ldc);
    }
}

void nmt_gemm(int ta, int tb, int M, int N, int K, real alpha, const real *A, int lda,
          const real *B, int ldb, real beta, real *C, int ldc)
{
    if (M <= 0 || N <= 0)
        return;
    int threads = nmt_pool_threads();
    if (threads == 1 || 2.0 * M * N * K < GEMM_SPLIT_FLOPS) {
        gemm_whole(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    /* Cut the longer side: each chunk then re-reads all of the smaller
     * operand only. */
    gemm_job j = {ta, tb, M, N, K, lda, ldb, ldc, M >= N, alpha, beta, A, B, C};
    int blocks = ((j.split_rows ? M : N) + GEMM_ALIGN - 1) / GEMM_ALIGN;
    nmt_pool_run(gemm_chunk, &j, blocks < threads ? blocks : threads);
}

NMT_SIMD
void nmt_linear_forward(real *out, const real *in, const real *W, const real *bias,
                    int N, int n_in, int n_out, int ldw, int accumulate)
{
    /* out: [N, n_out], in: [N, n_in], W: [n_out, ldw], bias: [n_out] */
    real beta = accumulate ? 1 : 0;
    if (bias) {
        /* The bias goes in first and the product is accumulated onto it, in
         * training and inference alike, so both round the same way. */
        for (int n = 0; n < N; n++) {
            real *o = out + (size_t)n * n_out;
            if (accumulate)
                for (int k = 0; k < n_out; k++)
                    o[k] += bias[k];
            else
                memcpy(o, bias, (size_t)n_out * sizeof *o);
        }
        beta = 1;
    }
    nmt_gemm(0, 1, N, n_out, n_in, 1, in, n_in, W, ldw, beta, out, n_out);
}

NMT_SIMD
void nmt_linear_backward(real *din, real *dW, real *dbias, const real *dout, const real *in,
                     const real *W, int N, int n_in, int n_out, int ldw)
{
    /* din: [N, n_in], dW: [n_out, ldw], dbias: [n_out], dout: [N, n_out] */
    if (din)
        nmt_gemm(0, 0, N, n_in, n_out, 1, dout, n_out, W, ldw, 1, din, n_in);
    if (dW)
        nmt_gemm(1, 0, n_out, n_in, N, 1, dout, n_out, in, n_in, 1, dW, ldw);
    if (dbias)
        for (int n = 0; n < N; n++) {
            const real *d = dout + (size_t)n * n_out;
            for (int k = 0; k < n_out; k++)
                dbias[k] += d[k];
        }
}
