/* Bahdanau additive attention, one decoder step for R rows:
 *   a_rj = v . tanh(W_a s_r + U_a h_j + b_a),  alpha_r = softmax over j < n,
 *   ctx_r = sum_j alpha_rj h_j.
 * W_a s (one product per step) and U_a h_j + b_a (one product per batch) are
 * computed by the caller. The tanh is recomputed in backward rather than kept:
 * keeping it would take Tt * B * Ts * A floats (170 MB at the bench's
 * longest batch), recomputing it costs one vectorized pass. */
#include <string.h>

#include "layers.h"
#include "pool.h"

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

/* c [DH] = sum_j al[j] h_j over the n positions of source b: one row of the
 * context, shared by the forward and its recomputation in training's
 * backward, so that both give the same bits. */
static void context_row(real *c, const real *al, const real *enc, int b, int n, int B, int DH)
{
    /* al: [n], enc: [T, B, DH] */
    for (int k = 0; k < DH; k++)
        c[k] = 0;
    for (int j = 0; j < n; j++) {
        const real *h = enc + ((size_t)j * B + b) * DH;
        real a = al[j];
        for (int k = 0; k < DH; k++)
            c[k] += a * h[k];
    }
}

/* Rows r0 .. r1-1 of attention_forward. */
static void forward_rows(real *ctx, real *alpha, const real *ws, const real *uh,
                         const real *enc, const real *v, const int *len, const int *src_of,
                         int r0, int r1, int B, int T, int A, int DH)
{
    /* ctx: [R, DH], alpha: [R, T], ws: [R, A], uh: [T, B, A], enc: [T, B, DH] */
    for (int r = r0; r < r1; r++) {
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
        context_row(ctx + (size_t)r * DH, al, enc, b, n, B, DH);
    }
}

/* Rows r0 .. r1-1 of attention_backward, their share of dv added to dv. */
static void backward_rows(real *dws, real *duh, real *denc, real *dv, const real *dctx,
                          const real *alpha, const real *ws, const real *uh, const real *enc,
                          const real *v, const int *len, int r0, int r1, int B, int T, int A,
                          int DH)
{
    /* dws: [R, A], duh: [T, B, A], denc: [T, B, DH], dv: [A], dctx: [R, DH],
     * alpha: [R, T]; row r attends source r (training has R = B), so rows
     * write disjoint parts of duh and denc */
    for (int r = r0; r < r1; r++) {
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

/* ---- the rows spread over the pool's threads ---- */

typedef struct att_job {
    real *ctx, *alpha, *dws, *duh, *denc, *dv_part;
    const real *ws, *uh, *enc, *v, *dctx, *alpha_in;
    const int *len, *src_of;
    int R, B, T, A, DH;
} att_job;

static void forward_chunk(void *arg, int c, int n)
{
    const att_job *j = arg;
    int lo, hi;
    pool_chunk_range(j->R, 1, c, n, &lo, &hi);
    forward_rows(j->ctx, j->alpha, j->ws, j->uh, j->enc, j->v, j->len, j->src_of, lo, hi, j->B,
                 j->T, j->A, j->DH);
}

void attention_forward(real *ctx, real *alpha, const real *ws, const real *uh,
                       const real *enc, const real *v, const int *len, const int *src_of,
                       int R, int B, int T, int A, int DH)
{
    att_job j = {.ctx = ctx, .alpha = alpha, .ws = ws, .uh = uh, .enc = enc, .v = v,
                 .len = len, .src_of = src_of, .R = R, .B = B, .T = T, .A = A, .DH = DH};
    pool_run(forward_chunk, &j, pool_chunks((size_t)R, 1));
}

static void context_chunk(void *arg, int c, int n)
{
    const att_job *j = arg;
    int lo, hi;
    pool_chunk_range(j->R, 1, c, n, &lo, &hi);
    for (int r = lo; r < hi; r++)
        context_row(j->ctx + (size_t)r * j->DH, j->alpha_in + (size_t)r * j->T, j->enc, r % j->B,
                    j->len[r % j->B], j->B, j->DH);
}

void attention_context(real *ctx, const real *alpha, const real *enc, const int *len, int R,
                       int B, int T, int DH)
{
    att_job j = {.ctx = ctx, .alpha_in = alpha, .enc = enc, .len = len, .R = R, .B = B, .T = T,
                 .DH = DH};
    pool_run(context_chunk, &j, pool_chunks((size_t)R, 1));
}

static void backward_chunk(void *arg, int c, int n)
{
    const att_job *j = arg;
    int lo, hi;
    pool_chunk_range(j->R, 1, c, n, &lo, &hi);
    real *dv = j->dv_part + (size_t)c * j->A;
    memset(dv, 0, (size_t)j->A * sizeof *dv);
    backward_rows(j->dws, j->duh, j->denc, dv, j->dctx, j->alpha_in, j->ws, j->uh, j->enc, j->v,
                  j->len, lo, hi, j->B, j->T, j->A, j->DH);
}

void attention_backward(real *dws, real *duh, real *denc, real *dv, real *dv_part,
                        const real *dctx, const real *alpha, const real *ws, const real *uh,
                        const real *enc, const real *v, const int *len, int R, int B, int T,
                        int A, int DH)
{
    /* A fixed number of chunks, whatever the threads: dv's partial sums are
     * added in the same order however the chunks were shared out. */
    int n = R < ATT_BACKWARD_CHUNKS ? R : ATT_BACKWARD_CHUNKS;
    att_job j = {.dws = dws, .duh = duh, .denc = denc, .dv_part = dv_part, .dctx = dctx,
                 .alpha_in = alpha, .ws = ws, .uh = uh, .enc = enc, .v = v, .len = len, .R = R,
                 .B = B, .T = T, .A = A, .DH = DH};
    pool_run(backward_chunk, &j, n);
    for (int c = 0; c < n; c++)
        for (int k = 0; k < A; k++)
            dv[k] += dv_part[(size_t)c * A + k];
}
