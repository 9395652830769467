/* The three BLAS calls nmt makes (single precision), computed so that each
 * output element is the same function of its own row and column whatever
 * the shape of the call: one dot product in index order, no blocking, no
 * vector kernels. LD_PRELOADed in front of OpenBLAS by batch_invariance.sh,
 * it shows that nmt's own arithmetic does not depend on which sentences
 * share a batch: with it, every --batch-size and --threads give the same
 * bytes. OpenBLAS rounds a row differently by where it falls in its
 * register blocks, which depends on how many rows share the product. */
#include <cblas.h>
#include <stddef.h>

/* Element (i, k) of op(X), X stored with leading dimension ld. */
static float at(const float *X, int trans, size_t i, size_t k, size_t ld, int row_major)
{
    if (trans) {
        size_t t = i;
        i = k;
        k = t;
    }
    return row_major ? X[i * ld + k] : X[k * ld + i];
}

void cblas_sgemm(OPENBLAS_CONST enum CBLAS_ORDER Order, OPENBLAS_CONST enum CBLAS_TRANSPOSE TransA,
                 OPENBLAS_CONST enum CBLAS_TRANSPOSE TransB, OPENBLAS_CONST blasint M,
                 OPENBLAS_CONST blasint N, OPENBLAS_CONST blasint K, OPENBLAS_CONST float alpha,
                 OPENBLAS_CONST float *A, OPENBLAS_CONST blasint lda, OPENBLAS_CONST float *B,
                 OPENBLAS_CONST blasint ldb, OPENBLAS_CONST float beta, float *C,
                 OPENBLAS_CONST blasint ldc)
{
    int rm = Order == CblasRowMajor, ta = TransA != CblasNoTrans, tb = TransB != CblasNoTrans;
    for (blasint i = 0; i < M; i++)
        for (blasint j = 0; j < N; j++) {
            float acc = 0;
            for (blasint k = 0; k < K; k++)
                acc += at(A, ta, (size_t)i, (size_t)k, (size_t)lda, rm) *
                       at(B, tb, (size_t)k, (size_t)j, (size_t)ldb, rm);
            float *c = rm ? &C[(size_t)i * (size_t)ldc + (size_t)j]
                          : &C[(size_t)j * (size_t)ldc + (size_t)i];
            *c = alpha * acc + (beta == 0 ? 0 : beta * *c);
        }
}

void cblas_sgemv(OPENBLAS_CONST enum CBLAS_ORDER order, OPENBLAS_CONST enum CBLAS_TRANSPOSE trans,
                 OPENBLAS_CONST blasint m, OPENBLAS_CONST blasint n, OPENBLAS_CONST float alpha,
                 OPENBLAS_CONST float *a, OPENBLAS_CONST blasint lda, OPENBLAS_CONST float *x,
                 OPENBLAS_CONST blasint incx, OPENBLAS_CONST float beta, float *y,
                 OPENBLAS_CONST blasint incy)
{
    int rm = order == CblasRowMajor, t = trans != CblasNoTrans;
    blasint rows = t ? n : m, cols = t ? m : n;
    for (blasint i = 0; i < rows; i++) {
        float acc = 0;
        for (blasint k = 0; k < cols; k++)
            acc += at(a, t, (size_t)i, (size_t)k, (size_t)lda, rm) * x[(size_t)k * (size_t)incx];
        float *o = &y[(size_t)i * (size_t)incy];
        *o = alpha * acc + (beta == 0 ? 0 : beta * *o);
    }
}

void cblas_sger(OPENBLAS_CONST enum CBLAS_ORDER order, OPENBLAS_CONST blasint M,
                OPENBLAS_CONST blasint N, OPENBLAS_CONST float alpha, OPENBLAS_CONST float *X,
                OPENBLAS_CONST blasint incX, OPENBLAS_CONST float *Y, OPENBLAS_CONST blasint incY,
                float *A, OPENBLAS_CONST blasint lda)
{
    int rm = order == CblasRowMajor;
    for (blasint i = 0; i < M; i++)
        for (blasint j = 0; j < N; j++) {
            float *a = rm ? &A[(size_t)i * (size_t)lda + (size_t)j]
                          : &A[(size_t)j * (size_t)lda + (size_t)i];
            *a += alpha * X[(size_t)i * (size_t)incX] * Y[(size_t)j * (size_t)incY];
        }
}
