/* ScaleNorm (Nguyen and Salazar 2019; docs/DESIGN.md, "The Transformer",
 * Variants): SN(u) = g * u / max(||u||, eps) over the d features of each
 * row, one scalar gain. Rows are spread over the pool as layer norm's are:
 * a row's forward bits depend on that row alone, and the backward's gain
 * gradient is summed per fixed chunk of rows, the chunks added in order,
 * so that it does not depend on the threads. */
#include <math.h>

#include "base/pool.h"
#include "base/simd.h"
#include "model/transformer/transformer_layers.h"

/* The backward's chunks of rows, whatever the threads. */
#define SN_CHUNKS 8

/* Rows below which one thread does the whole pass. */
#define SN_MIN_ROWS 32

/* sum_k a[k] b[k] over [d], in lanes (a fixed order of additions). */
NMT_SIMD_INLINE real dot_lanes(const real *restrict a, const real *restrict b, int d)
{
    real acc[NMT_LANES] = {0};
    int k = 0;
    for (; k + NMT_LANES <= d; k += NMT_LANES)
        for (int l = 0; l < NMT_LANES; l++)
            acc[l] += a[k + l] * b[k + l];
    for (; k < d; k++)
        acc[k % NMT_LANES] += a[k] * b[k];
    return lanes_total(acc);
}

real nmt_tf_row_norm(const real *x, int d)
{
    return (real)sqrt((double)dot_lanes(x, x, d));
}

typedef struct sn_job {
    real *out, *nrm, *rinv, *din, *partial;
    const real *in, *dout, *nrm_in, *rinv_in;
    real g;
    int N, d;
} sn_job;

NMT_SIMD
static void forward_chunk(void *arg, int c, int n_chunks)
{
    const sn_job *j = arg;
    int d = j->d, lo, hi;
    pool_chunk_range(j->N, 1, c, n_chunks, &lo, &hi);
    for (int r = lo; r < hi; r++) {
        const real *x = j->in + (size_t)r * d;
        real *y = j->out + (size_t)r * d;
        real n = nmt_tf_row_norm(x, d);
        /* the clamp keeps a zero row (a padded row's stream can be one)
         * finite: its output is 0, never NaN */
        real rinv = (real)1 / (n > (real)NMT_TF_SN_EPS ? n : (real)NMT_TF_SN_EPS);
        real scale = j->g * rinv;
        for (int k = 0; k < d; k++)
            y[k] = x[k] * scale;
        j->nrm[r] = n;
        j->rinv[r] = rinv;
    }
}

void nmt_tf_scalenorm_forward(real *out, real *nrm, real *rinv, const real *in, const real *g,
                              int N, int d)
{
    /* out, in: [N, d]; nrm, rinv: [N]; g: [1] */
    sn_job j = {.out = out, .nrm = nrm, .rinv = rinv, .in = in, .g = g[0], .N = N, .d = d};
    nmt_pool_run(forward_chunk, &j, pool_chunks((size_t)N, SN_MIN_ROWS));
}

/* Row r: with xhat = u rinv and s = xhat . dy, dg += s and
 * du += g rinv (dy - xhat s) where the norm was not clamped; where it was
 * (||u|| <= eps), rinv = 1/eps is a constant and du += g rinv dy. */
NMT_SIMD
static void backward_chunk(void *arg, int c, int n_chunks)
{
    const sn_job *j = arg;
    int d = j->d, lo, hi;
    real dg = 0;
    pool_chunk_range(j->N, 1, c, n_chunks, &lo, &hi);
    for (int r = lo; r < hi; r++) {
        const real *x = j->in + (size_t)r * d, *dy = j->dout + (size_t)r * d;
        real *dx = j->din + (size_t)r * d;
        real rinv = j->rinv_in[r], s = dot_lanes(x, dy, d) * rinv, a = j->g * rinv;
        dg += s;
        if (j->nrm_in[r] > (real)NMT_TF_SN_EPS) {
            for (int k = 0; k < d; k++)
                dx[k] += a * (dy[k] - x[k] * rinv * s);
        } else {
            for (int k = 0; k < d; k++)
                dx[k] += a * dy[k];
        }
    }
    j->partial[c] = dg;
}

size_t nmt_tf_scalenorm_scratch(void)
{
    return SN_CHUNKS;
}

void nmt_tf_scalenorm_backward(real *din, real *dg, const real *dout, const real *in,
                               const real *nrm, const real *rinv, const real *g, real *scratch,
                               int N, int d)
{
    /* din, dout, in: [N, d]; dg, g: [1]; nrm, rinv: [N]; scratch: [SN_CHUNKS] */
    if (N <= 0)
        return;
    int n_chunks = N < SN_CHUNKS ? N : SN_CHUNKS;
    sn_job j = {.din = din, .partial = scratch, .dout = dout, .in = in, .nrm_in = nrm,
                .rinv_in = rinv, .g = g[0], .N = N, .d = d};
    nmt_pool_run(backward_chunk, &j, n_chunks);
    for (int c = 0; c < n_chunks; c++)
        dg[0] += scratch[c];
}
