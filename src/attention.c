/* Bahdanau additive attention, one decoder step for R rows:
 *   a_rj = v . tanh(W_a s_r + U_a h_j + b_a),  alpha_r = softmax over j < n,
 *   ctx_r = sum_j alpha_rj h_j.
 * W_a s (one product per step) and U_a h_j + b_a (one product per batch) are
 * computed by the caller. The tanh is recomputed in backward rather than kept:
 * keeping it would take Tt * B * Ts * A floats (170 MB at the bench's
 * longest batch), recomputing it costs one vectorized pass. */
#include "layers.h"

real attention_score(const real *v, const real *w, const real *u, int A)
{
    /* v, w, u: [A] */
    real acc[NMT_LANES] = {0};
    int k = 0;
    for (; k + NMT_LANES <= A; k += NMT_LANES)
        for (int l = 0; l < NMT_LANES; l++)
            acc[l] += v[k + l] * fast_tanh(w[k + l] + u[k + l]);
    for (; k < A; k++)
        acc[k % NMT_LANES] += v[k] * fast_tanh(w[k] + u[k]);
    return lanes_total(acc);
}

/* The gradient ds of one score v . tanh(w + u), spread over its inputs. The
 * arrays are distinct; saying so (restrict) lets the loop vectorize. */
static void score_backward(real *restrict du, real *restrict dw, real *restrict dv, real ds,
                           const real *restrict w, const real *restrict u,
                           const real *restrict v, int A)
{
    /* du, dw, dv, w, u, v: [A] */
    for (int k = 0; k < A; k++) {
        real e = fast_tanh(w[k] + u[k]);
        real dpre = ds * v[k] * (1 - e * e);
        dv[k] += ds * e;
        dw[k] += dpre;
        du[k] += dpre;
    }
}

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
            al[j] = attention_score(v, w, uh + ((size_t)j * B + b) * A, A);
            mx = al[j] > mx ? al[j] : mx;
        }
        real sum = 0;
        for (int j = 0; j < n; j++) {
            al[j] = fast_exp(al[j] - mx);
            sum += al[j];
        }
        real inv = 1 / sum;
        for (int j = 0; j < n; j++)
            al[j] *= inv;
        for (int j = n; j < T; j++)
            al[j] = 0; /* padding gets no weight */
        real *c = ctx + (size_t)r * DH;
        for (int k = 0; k < DH; k++)
            c[k] = 0;
        for (int j = 0; j < n; j++) {
            const real *h = enc + ((size_t)j * B + b) * DH;
            real a = al[j];
            for (int k = 0; k < DH; k++)
                c[k] += a * h[k];
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
        /* d alpha_j = dctx . h_j; softmax backward needs sum_j alpha_j d alpha_j,
         * so d alpha is computed twice rather than stored */
        real sum = 0;
        for (int j = 0; j < n; j++) {
            const real *h = enc + ((size_t)j * B + b) * DH;
            real *dh = denc + ((size_t)j * B + b) * DH;
            real a = al[j];
            sum += a * dot(dc, h, DH);
            for (int k = 0; k < DH; k++)
                dh[k] += a * dc[k];
        }
        for (int j = 0; j < n; j++) {
            const real *h = enc + ((size_t)j * B + b) * DH;
            real ds = al[j] * (dot(dc, h, DH) - sum); /* gradient of the score a_j */
            const real *u = uh + ((size_t)j * B + b) * A;
            real *du = duh + ((size_t)j * B + b) * A;
            score_backward(du, dw, dv, ds, w, u, v, A);
        }
    }
}
