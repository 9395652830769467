/* The Transformer's input (scaled embedding plus sinusoidal positions) and
 * its residual connections. Memory passes, a few per layer: they run on the
 * caller (a pass over a batch's [B*T, d] takes about 0.1 ms), each built for
 * the wide vectors too (base/simd.h). */
#include <math.h>

#include "base/simd.h"

#include "model/transformer/transformer_layers.h"

void nmt_tf_positions(real *pos, int T, int d)
{
    /* pos: [T, d]; columns 2k and 2k+1 share the frequency 10000^(-2k/d) */
    for (int k = 0; k < d; k++) {
        double inv_freq = pow(10000.0, -(double)(k - k % 2) / (double)d);
        for (int p = 0; p < T; p++) {
            double angle = (double)p * inv_freq;
            pos[(size_t)p * d + k] = (real)(k % 2 ? cos(angle) : sin(angle));
        }
    }
}

NMT_SIMD
void nmt_tf_embed_forward(real *X, const int32_t *ids, const real *emb, const real *pos, int B,
                          int T, int d)
{
    /* X: [B, T, d], ids: [B, T], emb: [V, d], pos: [T, d] */
    real scale = (real)sqrt((double)d);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            size_t n = (size_t)b * T + t;
            const real *e = emb + (size_t)ids[n] * d, *p = pos + (size_t)t * d;
            real *x = X + n * d;
            for (int k = 0; k < d; k++)
                x[k] = scale * e[k] + p[k];
        }
}

NMT_SIMD
void nmt_tf_embed_backward(real *demb, const real *dX, const int32_t *ids, int N, int d)
{
    /* demb: [V, d], dX: [N, d], ids: [N]. Rows may share an id: one thread
     * adds them in row order. */
    real scale = (real)sqrt((double)d);
    for (int n = 0; n < N; n++) {
        real *row = demb + (size_t)ids[n] * d;
        const real *g = dX + (size_t)n * d;
        for (int k = 0; k < d; k++)
            row[k] += scale * g[k];
    }
}

NMT_SIMD
void nmt_tf_residual_forward(real *out, const real *x, const real *y, const unsigned char *mask,
                             real keep, size_t n)
{
    /* out, x, y, mask: [n] */
    if (!mask) {
        for (size_t i = 0; i < n; i++)
            out[i] = x[i] + y[i];
        return;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = x[i] + y[i] * (mask[i] ? keep : 0);
}

NMT_SIMD
void nmt_tf_residual_backward(real *dy, const real *dout, const unsigned char *mask, real keep,
                              size_t n)
{
    /* dy, dout, mask: [n] */
    if (!mask) {
        for (size_t i = 0; i < n; i++)
            dy[i] += dout[i];
        return;
    }
    for (size_t i = 0; i < n; i++)
        dy[i] += dout[i] * (mask[i] ? keep : 0);
}

/* One row at unit length: out [d] = e / max(||e||, eps); returns ||e||. */
static real unit_row(real *restrict out, const real *restrict e, int d)
{
    real n = nmt_tf_row_norm(e, d);
    real rinv = (real)1 / (n > (real)NMT_TF_SN_EPS ? n : (real)NMT_TF_SN_EPS);
    for (int k = 0; k < d; k++)
        out[k] = e[k] * rinv;
    return n;
}

NMT_SIMD
void nmt_tf_fixnorm_forward(real *hat, real *nrm, const real *emb, int V, int d)
{
    /* hat, emb: [V, d]; nrm: [V] */
    for (int v = 0; v < V; v++)
        nrm[v] = unit_row(hat + (size_t)v * d, emb + (size_t)v * d, d);
}

NMT_SIMD
void nmt_tf_fixnorm_backward(real *demb, const real *dhat, const real *hat, const real *nrm,
                             int V, int d)
{
    /* demb, dhat, hat: [V, d]; nrm: [V]. A row never looked up (dhat 0)
     * gets 0 added. */
    for (int v = 0; v < V; v++) {
        const real *g = dhat + (size_t)v * d, *e = hat + (size_t)v * d;
        real *out = demb + (size_t)v * d;
        if (nrm[v] <= (real)NMT_TF_SN_EPS) {
            /* the clamp is a constant: ê = e / eps */
            for (int k = 0; k < d; k++)
                out[k] += g[k] / (real)NMT_TF_SN_EPS;
            continue;
        }
        real s = 0;
        for (int k = 0; k < d; k++)
            s += e[k] * g[k];
        real rinv = (real)1 / nrm[v];
        for (int k = 0; k < d; k++)
            out[k] += (g[k] - e[k] * s) * rinv;
    }
}

NMT_SIMD
void nmt_tf_embed_unit_forward(real *X, const int32_t *ids, const real *emb, const real *pos,
                               int B, int T, int d)
{
    /* X: [B, T, d], ids: [B, T], emb: [V, d], pos: [T, d]. Each row is
     * normalised into X first, then scaled and shifted in place, as
     * nmt_tf_embed_forward does with a row of the normalised table. */
    real scale = (real)sqrt((double)d);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            size_t n = (size_t)b * T + t;
            real *x = X + n * d;
            const real *p = pos + (size_t)t * d;
            unit_row(x, emb + (size_t)ids[n] * d, d);
            for (int k = 0; k < d; k++)
                x[k] = scale * x[k] + p[k];
        }
}
