/* Bahdanau additive attention, one decoder step for R rows:
 *   a_rj = v . tanh(W_a s_r + U_a h_j + b_a),  alpha_r = softmax over j < n,
 *   ctx_r = sum_j alpha_rj h_j.
 * W_a s (one product per step) and U_a h_j + b_a (one product per batch) are
 * computed by the caller; the tanh is recomputed in backward rather than kept
 * for every (step, row, position). */
#include "layers.h"

void attention_forward(real *ctx, real *alpha, const real *ws, const real *uh,
                       const real *enc, const real *v, const int *len, const int *src_of,
                       int R, int B, int T, int A, int DH)
{
    /* ctx: [R, DH], alpha: [R, T], ws: [R, A], uh: [T, B, A], enc: [T, B, DH] */
    for (int r = 0; r < R; r++) {
        int b = src_of ? src_of[r] : r, n = len[b];
        const real *w = ws + (size_t)r * A;
        real *al = alpha + (size_t)r * T;
        real mx = -INFINITY;
        for (int j = 0; j < n; j++) {
            const real *u = uh + ((size_t)j * B + b) * A;
            real a = 0;
            for (int k = 0; k < A; k++)
                a += v[k] * R_TANH(w[k] + u[k]);
            al[j] = a;
            mx = a > mx ? a : mx;
        }
        real sum = 0;
        for (int j = 0; j < n; j++) {
            al[j] = R_EXP(al[j] - mx);
            sum += al[j];
        }
        for (int j = 0; j < n; j++)
            al[j] /= sum;
        for (int j = n; j < T; j++)
            al[j] = 0; /* padding gets no weight */
        real *c = ctx + (size_t)r * DH;
        for (int k = 0; k < DH; k++)
            c[k] = 0;
        for (int j = 0; j < n; j++) {
            const real *h = enc + ((size_t)j * B + b) * DH;
            for (int k = 0; k < DH; k++)
                c[k] += al[j] * h[k];
        }
    }
}

void attention_backward(real *dws, real *duh, real *denc, real *dv, const real *dctx,
                        const real *alpha, const real *ws, const real *uh, const real *enc,
                        const real *v, const int *len, int R, int B, int T, int A, int DH)
{
    /* dws: [R, A], duh: [T, B, A], denc: [T, B, DH], dv: [A], dctx: [R, DH],
     * alpha: [R, T]; row r attends source r (training has R = B) */
    for (int r = 0; r < R; r++) {
        int b = r, n = len[b];
        const real *al = alpha + (size_t)r * T, *dc = dctx + (size_t)r * DH;
        const real *w = ws + (size_t)r * A;
        real *dw = dws + (size_t)r * A;
        for (int k = 0; k < A; k++)
            dw[k] = 0;
        /* d alpha_j = dctx . h_j; softmax backward needs sum_j alpha_j d alpha_j */
        real dot = 0;
        for (int j = 0; j < n; j++) {
            const real *h = enc + ((size_t)j * B + b) * DH;
            real *dh = denc + ((size_t)j * B + b) * DH;
            real da = 0;
            for (int k = 0; k < DH; k++) {
                da += dc[k] * h[k];
                dh[k] += al[j] * dc[k];
            }
            dot += al[j] * da;
        }
        for (int j = 0; j < n; j++) {
            const real *h = enc + ((size_t)j * B + b) * DH;
            real da = 0;
            for (int k = 0; k < DH; k++)
                da += dc[k] * h[k];
            real ds = al[j] * (da - dot); /* gradient of the score a_j */
            const real *u = uh + ((size_t)j * B + b) * A;
            real *du = duh + ((size_t)j * B + b) * A;
            for (int k = 0; k < A; k++) {
                real e = R_TANH(w[k] + u[k]);
                dv[k] += ds * e;
                real dpre = ds * v[k] * (1 - e * e);
                dw[k] += dpre;
                du[k] += dpre;
            }
        }
    }
}
