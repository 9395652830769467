/* The position-wise feed-forward network FFN(u) = W_2 relu(W_1 u + b_1) + b_2
 * over all rows at once: two products forward, four backward, and one
 * element-wise pass between them (relu and its dropout, or their gradient).
 *
 * Only the activation after relu and dropout is kept: a unit's gradient
 * passes (times keep) exactly where it is > 0, since relu and a dropped unit
 * both give 0 and keep >= 1 never rounds a positive value to 0. */
#include "base/pool.h"
#include "base/simd.h"
#include "model/transformer/transformer_layers.h"

/* Elements below which one thread does the element-wise pass. */
#define FFN_MIN_ELEMENTS 16384

typedef struct relu_job {
    real *x;
    const unsigned char *drop;
    real keep;
    size_t n;
    int backward;
    const real *act;
} relu_job;

/* Three loops, the branch between them taken once a chunk: each loop is a
 * select per element, with no call and no short-circuit (a && b is a
 * branch), which the vectorizer turns into compares and blends. */
NMT_SIMD
static void relu_chunk(void *arg, int c, int n_chunks)
{
    const relu_job *j = arg;
    size_t lo = j->n * (size_t)c / (size_t)n_chunks, hi = j->n * (size_t)(c + 1) / (size_t)n_chunks;
    real *restrict x = j->x, keep = j->keep;
    if (j->backward) {
        const real *restrict act = j->act;
        for (size_t i = lo; i < hi; i++)
            x[i] *= act[i] > 0 ? keep : 0;
    } else if (j->drop) {
        const unsigned char *restrict drop = j->drop;
        for (size_t i = lo; i < hi; i++)
            x[i] = (x[i] > 0) & (drop[i] != 0) ? x[i] * keep : 0;
    } else {
        for (size_t i = lo; i < hi; i++)
            x[i] = x[i] > 0 ? x[i] : 0;
    }
}

static void run_relu(relu_job *j)
{
    nmt_pool_run(relu_chunk, j, pool_chunks(j->n, FFN_MIN_ELEMENTS));
}

void nmt_tf_ffn_forward(real *out, real *act, const real *u, const real *W_1, const real *b_1,
                        const real *W_2, const real *b_2, const unsigned char *drop, real keep,
                        int N, int d, int F, int accumulate)
{
    /* out, u: [N, d]; act, drop: [N, F]; W_1: [F, d]; b_1: [F]; W_2: [d, F]; b_2: [d] */
    nmt_linear_forward(act, u, W_1, b_1, N, d, F, d, 0);
    relu_job j = {.x = act, .drop = drop, .keep = keep, .n = (size_t)N * F};
    run_relu(&j);
    nmt_linear_forward(out, act, W_2, b_2, N, F, d, F, accumulate);
}

size_t nmt_tf_ffn_scratch(int N, int F)
{
    return (size_t)N * F;
}

void nmt_tf_ffn_backward(real *du, real *dW_1, real *db_1, real *dW_2, real *db_2,
                         const real *dout, const real *act, const real *u, const real *W_1,
                         const real *W_2, real keep, real *scratch, int N, int d, int F)
{
    /* du, dout, u: [N, d]; act: [N, F]; dW_1: [F, d]; dW_2: [d, F];
     * scratch: [N, F] the gradient of act, then of W_1 u + b_1 */
    real *dact = scratch;
    nmt_gemm(0, 0, N, F, d, 1, dout, d, W_2, F, 0, dact, F);
    nmt_linear_backward(NULL, dW_2, db_2, dout, act, W_2, N, F, d, F);
    relu_job j = {.x = dact, .keep = keep, .n = (size_t)N * F, .backward = 1, .act = act};
    run_relu(&j);
    nmt_linear_backward(du, dW_1, db_1, dact, u, W_1, N, d, F, d);
}
