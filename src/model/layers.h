/* Internal: the layers every architecture shares, as forward/backward pairs
 * (llm.c style: outputs first, sizes last), and the one matrix product they
 * all use. Each architecture's own layers are in its folder's NAME_layers.h
 * (model/rnn/rnn_layers.h, model/transformer/transformer_layers.h).
 *
 * Everything is written against `real` (float, or double when compiled with
 * -DNMT_REAL_DOUBLE for the gradient check) so that the checked code is the
 * shipped code. Layouts are time-major and row-major: element (t, b, k) of a
 * [T, B, K] array is at (t * B + b) * K + k. A row is "active" at step t
 * while t < its length; inactive rows keep their state unchanged. */
#ifndef NMT_LAYERS_H
#define NMT_LAYERS_H

#include <cblas.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nmt/model.h"

typedef nmt_real real;

#ifdef NMT_REAL_DOUBLE
#define NMT_GEMM cblas_dgemm
#define NMT_GEMV cblas_dgemv
#define NMT_GER cblas_dger
#define R_EXP exp
#define R_TANH tanh
#define R_LOG log
#else
#define NMT_GEMM cblas_sgemm
#define NMT_GEMV cblas_sgemv
#define NMT_GER cblas_sger
#define R_EXP expf
#define R_TANH tanhf
#define R_LOG logf
#endif

/* C[M,N] = alpha * op(A) op(B) + beta * C, row-major; ta/tb say whether A
 * ([K,M] instead of [M,K]) and B ([N,K] instead of [K,N]) are transposed.
 * Large products are cut along the longer of M and N into one chunk per
 * thread of the pool (linear.c). The cut depends on the shape and the number
 * of threads only, so a run is reproducible at a given number of threads
 * (OpenBLAS may round the blocks of another cut differently). */
void nmt_gemm(int ta, int tb, int M, int N, int K, real alpha, const real *A, int lda,
          const real *B, int ldb, real beta, real *C, int ldc);

/* exp, tanh and the logistic function for the element-wise loops. In float
 * they are branch-free (a polynomial and a power of two built from its bits)
 * so that the compiler vectorizes the loops that call them; the relative
 * error is a few 1e-7, far inside the 1e-4 of the parity suite. The gradient
 * check's double build uses libm. */
#ifdef NMT_REAL_DOUBLE
static inline real fast_exp(real x) { return exp(x); }
static inline real fast_tanh(real x) { return tanh(x); }
#else
static inline float fast_exp(float x)
{
    /* exp(x) = 2^n e^r with n = round(x / ln 2), |r| <= ln 2 / 2; e^r by the
     * Cephes expf polynomial. Inputs are clamped where float over- or
     * underflows (exp(-87.3) is the smallest normal). */
    x = x > 88.3762626647949f ? 88.3762626647949f : x;
    x = x < -87.3365447504f ? -87.3365447504f : x;
    float t = x * 1.44269504088896341f + 12582912.0f; /* round to nearest: 1.5 * 2^23 */
    float n = t - 12582912.0f;
    float r = x - n * 0.693359375f;                   /* ln 2 in two parts */
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    /* A NaN x (weights so large that a product overflowed) makes p NaN, and
     * the result must stay NaN for the passes to notice it; the power of two
     * is built from n = 0 then, as converting NaN to an integer is undefined
     * (a select: the same bits for every other x, still vectorized) */
    n = n == n ? n : 0.0f;
    union { float f; int32_t i; } scale = {.i = ((int32_t)n + 127) * (1 << 23)};
    return p * scale.f;
}

static inline float fast_tanh(float x)
{
    /* Near 0 the odd polynomial of Cephes tanhf (|x| < 0.625); elsewhere
     * 1 - 2 / (e^2|x| + 1) with the sign put back. Both are computed so that
     * the choice is a select, not a branch. */
    float ax = x < 0 ? -x : x;
    ax = ax > 9.0f ? 9.0f : ax; /* tanh(9) is 1 in float */
    float big = 1.0f - 2.0f / (fast_exp(2.0f * ax) + 1.0f);
    big = x < 0 ? -big : big;
    float z = x * x;
    float small = -5.70498872745e-3f;
    small = small * z + 2.06390887954e-2f;
    small = small * z - 5.37397155531e-2f;
    small = small * z + 1.33314422036e-1f;
    small = small * z - 3.33332819422e-1f;
    small = small * z * x + x;
    return ax < 0.625f ? small : big;
}
#endif

/* A real's order key: an integer that compares as the real does (-0 below
 * +0, NaNs beyond the infinities). A float's bits compare as a sign and
 * magnitude; flipping the magnitude of the negative ones makes them two's
 * complement. The maxima of the element-wise loops take it because an
 * integer max vectorizes and a float compare-and-select does not. */
#ifdef NMT_REAL_DOUBLE
typedef int64_t nmt_real_key;
#define NMT_KEY_MAGNITUDE INT64_MAX
#else
typedef int32_t nmt_real_key;
#define NMT_KEY_MAGNITUDE INT32_MAX
#endif
static inline nmt_real_key nmt_real_key_of(real x)
{
    nmt_real_key b;
    memcpy(&b, &x, sizeof b);
    return b ^ ((b >> (8 * sizeof b - 1)) & NMT_KEY_MAGNITUDE);
}
static inline real nmt_real_of_key(nmt_real_key k)
{
    nmt_real_key b = k ^ ((k >> (8 * sizeof k - 1)) & NMT_KEY_MAGNITUDE);
    real x;
    memcpy(&x, &b, sizeof x);
    return x;
}

static inline real sigmoid(real x)
{
    return (real)1 / ((real)1 + fast_exp(-x));
}

/* Sums in eight interleaved lanes, added up in a fixed order at the end: the
 * compiler can keep the lanes in vector registers (a plain running sum is a
 * chain it must not reorder), and the result does not depend on threads. */
#define NMT_LANES 8
static inline real lanes_total(const real *acc)
{
    return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

/* a . b over n elements */
static inline real dot(const real *a, const real *b, int n)
{
    real acc[NMT_LANES] = {0};
    int k = 0;
    for (; k + NMT_LANES <= n; k += NMT_LANES)
        for (int l = 0; l < NMT_LANES; l++)
            acc[l] += a[k + l] * b[k + l];
    for (; k < n; k++)
        acc[k % NMT_LANES] += a[k] * b[k];
    return lanes_total(acc);
}

/* out[N, n_out] (=, or += when accumulate) in[N, n_in] . W^T, plus bias[n_out]
 * if given. W is [n_out, n_in] with row stride ldw (>= n_in), so a block of
 * columns of a wider matrix can be used. */
void nmt_linear_forward(real *out, const real *in, const real *W, const real *bias,
                    int N, int n_in, int n_out, int ldw, int accumulate);
/* The gradients of nmt_linear_forward, each added to (NULL to skip):
 * din[N, n_in] += dout . W; dW[n_out, n_in] (row stride ldw) += dout^T . in;
 * dbias[n_out] += column sums of dout. */
void nmt_linear_backward(real *din, real *dW, real *dbias, const real *dout, const real *in,
                     const real *W, int N, int n_in, int n_out, int ldw);

/* ---- embed.c ---- */
/* out[T*B, E] = table[ids] (pad positions too: they are never read as data). */
void nmt_embed_forward(real *out, const int32_t *ids, const real *table, int n, int E);
/* dtable[ids[p]] += dout[p] for the real positions p (t < len[b]) only; dout
 * and ids hold steps t0 .. t0+T-1. */
void nmt_embed_backward(real *dtable, const real *dout, const int32_t *ids, const int *len,
                    int t0, int T, int B, int E);
/* Inverted dropout: mask[n] drawn from rng, 1 (kept, with probability 1-p)
 * or 0. A kept unit is scaled by keep = 1/(1-p), so that the expectation is
 * unchanged and inference needs no rescaling; the scale is the same for every
 * unit, so the mask is one byte per unit rather than a float. */
void nmt_dropout_mask(unsigned char *mask, nmt_rng *rng, real p, size_t n);
/* x[i] *= mask[i] ? keep : 0: the forward, and alike the backward of dx. */
void nmt_dropout_apply(real *x, const unsigned char *mask, real keep, size_t n);

/* ---- output.c: softmax and cross-entropy over the vocabulary ---- */
/* In place: logits [N, V] become log-probabilities (every row). */
void nmt_log_softmax_forward(real *x, int N, int V);
/* lse [N] = log sum_v exp(x[n, v]) of logits x [N, V], as nmt_log_softmax_forward
 * computes it: x[n, v] - lse[n] is the very log-probability it writes. */
void nmt_log_sum_exp_rows(real *lse, const real *x, int N, int V);
/* Softmax cross-entropy with a padding mask: logits [N, V] become
 * log-probabilities; returns the summed -log p[target] over rows with
 * active[n]; nll[n % B] (double) gets each row's share when nll != NULL, and
 * *mean_logp (when not NULL) the active rows' sum of mean_k log p[k] (what
 * label smoothing needs). */
double nmt_cross_entropy_forward(real *logits, const int32_t *target, const unsigned char *active,
                             double *nll, double *mean_logp, int N, int B, int V);
/* The loss and its gradient at once, for training: logits [N, V] become
 * dlogits = scale * (p - (1 - e) onehot - e / V) on active rows, 0 elsewhere
 * (e: label smoothing, 0 for the plain loss), and logp_target [N] gets each
 * row's log p of its target, the same bits as nmt_cross_entropy_forward's; with
 * e > 0 logp_mean [N] gets each row's mean_k log p[k]. */
void nmt_cross_entropy_grad(real *logits, real *logp_target, real *logp_mean, const int32_t *target,
                        const unsigned char *active, real scale, real e, int N, int V);

#endif
