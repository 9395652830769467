/* The Transformer's input (scaled embedding plus sinusoidal positions) and
 * its residual connections. Memory passes, a few per layer: they run on the
 * caller (a pass over a batch's [B*T, d] takes about 0.1 ms). */
#include <math.h>

#include "model/transformer/layers.h"

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
