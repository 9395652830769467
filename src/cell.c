/* One time step of an RNN, GRU or LSTM cell over a batch, forward and
 * backward. The products (W_ih x for all steps, W_hh h_prev per step) are
 * done by the caller with one sgemm each; this file is the fused, element-wise
 * part: gate nonlinearities, state update, and padding (inactive rows keep
 * their state). */
#include <string.h>

#include "layers.h"

void cell_forward(real *h, real *c, real *gates, const real *hh, const real *h_prev,
                  const real *c_prev, const unsigned char *active, nmt_cell cell, int B,
                  int H)
{
    /* h, c, h_prev, c_prev: [B, H]; gates, hh: [B, G*H] */
    int GH = cell_gates(cell) * H;
    for (int b = 0; b < B; b++) {
        real *hb = h + (size_t)b * H;
        const real *hp = h_prev + (size_t)b * H;
        if (!active[b]) {
            memcpy(hb, hp, (size_t)H * sizeof *hb);
            if (cell == NMT_CELL_LSTM)
                memcpy(c + (size_t)b * H, c_prev + (size_t)b * H, (size_t)H * sizeof *c);
            continue;
        }
        real *g = gates + (size_t)b * GH;
        const real *u = hh + (size_t)b * GH;
        if (cell == NMT_CELL_RNN) {
            for (int k = 0; k < H; k++) {
                g[k] = R_TANH(g[k] + u[k]);
                hb[k] = g[k];
            }
        } else if (cell == NMT_CELL_LSTM) {
            real *cb = c + (size_t)b * H;
            const real *cp = c_prev + (size_t)b * H;
            for (int k = 0; k < H; k++) {
                real i = sigmoid(g[k] + u[k]);
                real f = sigmoid(g[H + k] + u[H + k]);
                real gg = R_TANH(g[2 * H + k] + u[2 * H + k]);
                real o = sigmoid(g[3 * H + k] + u[3 * H + k]);
                g[k] = i, g[H + k] = f, g[2 * H + k] = gg, g[3 * H + k] = o;
                cb[k] = f * cp[k] + i * gg;
                hb[k] = o * R_TANH(cb[k]);
            }
        } else { /* GRU: r only scales U_n h; b_n sits with the input part. */
            for (int k = 0; k < H; k++) {
                real r = sigmoid(g[k] + u[k]);
                real z = sigmoid(g[H + k] + u[H + k]);
                real n = R_TANH(g[2 * H + k] + r * u[2 * H + k]);
                g[k] = r, g[H + k] = z, g[2 * H + k] = n;
                hb[k] = (1 - z) * n + z * hp[k];
            }
        }
    }
}

void cell_backward(real *dgates, real *dhh, real *dh_prev, real *dc_prev, const real *dh,
                   const real *dc, const real *gates, const real *hh, const real *h_prev,
                   const real *c, const real *c_prev, const unsigned char *active,
                   nmt_cell cell, int B, int H)
{
    /* dgates, dhh, gates, hh: [B, G*H]; the rest [B, H] */
    int GH = cell_gates(cell) * H;
    for (int b = 0; b < B; b++) {
        real *dg = dgates + (size_t)b * GH;
        real *du = dhh + (size_t)b * GH;
        real *dhp = dh_prev + (size_t)b * H;
        const real *dhb = dh + (size_t)b * H;
        if (!active[b]) {
            /* The state was copied: so is its gradient. */
            memset(dg, 0, (size_t)GH * sizeof *dg);
            if (du != dg)
                memset(du, 0, (size_t)GH * sizeof *du);
            memcpy(dhp, dhb, (size_t)H * sizeof *dhp);
            if (cell == NMT_CELL_LSTM)
                memcpy(dc_prev + (size_t)b * H, dc + (size_t)b * H, (size_t)H * sizeof *dc);
            continue;
        }
        const real *g = gates + (size_t)b * GH;
        if (cell == NMT_CELL_RNN) {
            for (int k = 0; k < H; k++) {
                dg[k] = dhb[k] * (1 - g[k] * g[k]);
                dhp[k] = 0;
            }
        } else if (cell == NMT_CELL_LSTM) {
            const real *cb = c + (size_t)b * H, *cp = c_prev + (size_t)b * H;
            const real *dcb = dc + (size_t)b * H;
            real *dcp = dc_prev + (size_t)b * H;
            for (int k = 0; k < H; k++) {
                real i = g[k], f = g[H + k], gg = g[2 * H + k], o = g[3 * H + k];
                real tc = R_TANH(cb[k]);
                real dct = dcb[k] + dhb[k] * o * (1 - tc * tc);
                dg[k] = dct * gg * i * (1 - i);
                dg[H + k] = dct * cp[k] * f * (1 - f);
                dg[2 * H + k] = dct * i * (1 - gg * gg);
                dg[3 * H + k] = dhb[k] * tc * o * (1 - o);
                dcp[k] = dct * f;
                dhp[k] = 0;
            }
        } else {
            const real *u = hh + (size_t)b * GH, *hp = h_prev + (size_t)b * H;
            for (int k = 0; k < H; k++) {
                real r = g[k], z = g[H + k], n = g[2 * H + k];
                real dn = dhb[k] * (1 - z) * (1 - n * n);
                real dz = dhb[k] * (hp[k] - n) * z * (1 - z);
                real dr = dn * u[2 * H + k] * r * (1 - r);
                dg[k] = du[k] = dr;
                dg[H + k] = du[H + k] = dz;
                dg[2 * H + k] = dn;
                du[2 * H + k] = dn * r;
                dhp[k] = dhb[k] * z;
            }
        }
    }
}
