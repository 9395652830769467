/* Layer normalization over the d features of each row, rows spread over the
 * pool. The forward's row is a function of that row alone (the same bits in
 * training and in a decoding step of one row); the backward's parameter
 * gradients are summed per chunk of rows, the chunks being fixed in number
 * and added in order, so that they do not depend on the threads. */
#include <string.h>

#include "base/pool.h"
#include "base/simd.h"
#include "model/transformer/transformer_layers.h"

/* The backward's chunks of rows, whatever the threads. */
#define LN_CHUNKS 8

/* Rows below which one thread does the whole pass. */
#define LN_MIN_ROWS 32

NMT_SIMD_INLINE void forward_row(real *restrict y, real *mean_out, real *rstd_out,
                                 const real *restrict x, const real *restrict g,
                                 const real *restrict b, int d)
{
    /* y, x, g, b: [d]. Two passes (mean, then the mean square deviation):
     * no cancellation as in E[x^2] - E[x]^2. */
    real acc[NMT_LANES] = {0};
    int k = 0;
    for (; k + NMT_LANES <= d; k += NMT_LANES)
        for (int l = 0; l < NMT_LANES; l++)
            acc[l] += x[k + l];
    for (; k < d; k++)
        acc[k % NMT_LANES] += x[k];
    real mean = lanes_total(acc) / (real)d;
    real dev[NMT_LANES] = {0};
    for (k = 0; k + NMT_LANES <= d; k += NMT_LANES)
        for (int l = 0; l < NMT_LANES; l++)
            dev[l] += (x[k + l] - mean) * (x[k + l] - mean);
    for (; k < d; k++)
        dev[k % NMT_LANES] += (x[k] - mean) * (x[k] - mean);
    real var = lanes_total(dev) / (real)d;
    real rstd = (real)1 / (real)sqrt((double)var + NMT_TF_LN_EPS);
    for (k = 0; k < d; k++)
        y[k] = (x[k] - mean) * rstd * g[k] + b[k];
    *mean_out = mean;
    *rstd_out = rstd;
}

typedef struct ln_job {
    real *out, *mean, *rstd, *din, *partial;
    const real *in, *g, *b, *dout, *mean_in, *rstd_in;
    int N, d;
} ln_job;

NMT_SIMD
static void forward_chunk(void *arg, int c, int n_chunks)
{
    const ln_job *j = arg;
    int lo, hi;
    pool_chunk_range(j->N, 1, c, n_chunks, &lo, &hi);
    for (int r = lo; r < hi; r++) {
        size_t at = (size_t)r * j->d;
        forward_row(j->out + at, j->mean + r, j->rstd + r, j->in + at, j->g, j->b, j->d);
    }
}

void nmt_tf_layernorm_forward(real *out, real *mean, real *rstd, const real *in, const real *g,
                              const real *b, int N, int d)
{
    /* out, in: [N, d]; mean, rstd: [N]; g, b: [d] */
    ln_job j = {.out = out, .mean = mean, .rstd = rstd, .in = in, .g = g, .b = b, .N = N, .d = d};
    nmt_pool_run(forward_chunk, &j, pool_chunks((size_t)N, LN_MIN_ROWS));
}

/* Row r of the backward: with xhat = (x - mean) rstd and dxhat = dy * g,
 * dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat)); dg += dy xhat,
 * db += dy (into the chunk's partial sums). */
NMT_SIMD_INLINE void backward_row(real *restrict dx, real *restrict dg, real *restrict db,
                         const real *restrict dy, const real *restrict x,
                         const real *restrict g, real mean, real rstd, int d)
{
    real s1[NMT_LANES] = {0}, s2[NMT_LANES] = {0};
    int k = 0;
    for (; k + NMT_LANES <= d; k += NMT_LANES)
        for (int l = 0; l < NMT_LANES; l++) {
            real xhat = (x[k + l] - mean) * rstd, dxhat = dy[k + l] * g[k + l];
            s1[l] += dxhat;
            s2[l] += dxhat * xhat;
        }
    for (; k < d; k++) {
        real xhat = (x[k] - mean) * rstd, dxhat = dy[k] * g[k];
        s1[k % NMT_LANES] += dxhat;
        s2[k % NMT_LANES] += dxhat * xhat;
    }
    real m1 = lanes_total(s1) / (real)d, m2 = lanes_total(s2) / (real)d;
    for (k = 0; k < d; k++) {
        real xhat = (x[k] - mean) * rstd;
        dx[k] += rstd * (dy[k] * g[k] - m1 - xhat * m2);
        dg[k] += dy[k] * xhat;
        db[k] += dy[k];
    }
}

NMT_SIMD
static void backward_chunk(void *arg, int c, int n_chunks)
{
    const ln_job *j = arg;
    int d = j->d, lo, hi;
    real *dg = j->partial + (size_t)c * 2 * d, *db = dg + d;
    memset(dg, 0, 2 * (size_t)d * sizeof *dg);
    pool_chunk_range(j->N, 1, c, n_chunks, &lo, &hi);
    for (int r = lo; r < hi; r++) {
        size_t at = (size_t)r * d;
        backward_row(j->din + at, dg, db, j->dout + at, j->in + at, j->g, j->mean_in[r],
                     j->rstd_in[r], d);
    }
}

size_t nmt_tf_layernorm_scratch(int d)
{
    return (size_t)LN_CHUNKS * 2 * (size_t)d;
}

void nmt_tf_layernorm_backward(real *din, real *dg, real *db, const real *dout, const real *in,
                               const real *mean, const real *rstd, const real *g, real *scratch,
                               int N, int d)
{
    /* din, dout, in: [N, d]; dg, db, g: [d]; mean, rstd: [N];
     * scratch: [LN_CHUNKS, 2, d] */
    if (N <= 0)
        return;
    int n_chunks = N < LN_CHUNKS ? N : LN_CHUNKS;
    ln_job j = {.din = din, .partial = scratch, .dout = dout, .in = in, .g = g, .mean_in = mean,
                .rstd_in = rstd, .N = N, .d = d};
    nmt_pool_run(backward_chunk, &j, n_chunks);
    for (int c = 0; c < n_chunks; c++) {
        const real *pg = scratch + (size_t)c * 2 * d, *pb = pg + d;
        for (int k = 0; k < d; k++) {
            dg[k] += pg[k];
            db[k] += pb[k];
        }
    }
}
