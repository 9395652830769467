/* The attention family, one decoder step for R rows: a score a_rj for every
 * real source position j of row r's sentence, alpha_r = softmax over j < n,
 * ctx_r = sum_j alpha_rj h_j. Only the score differs between the kinds:
 *
 *   bahdanau (additive)        a_rj = v . tanh(q_r + k_j)
 *   dot, general, scaled-dot   a_rj = (q_r . k_j) * scale
 *
 * with scale 1, or 1 / sqrt(K) for scaled-dot. The query q (W_a s, or s) and
 * the keys k (U_a h_j + b_a, U_a h_j, or h_j) are made by the caller: q with
 * one product per step, the keys with one product per batch.
 *
 * Bahdanau's tanh is recomputed in backward rather than kept: keeping it
 * would take Tt * B * Ts * A floats (170 MB at the bench's longest batch),
 * recomputing it costs one vectorized pass.
 *
 * The multiplicative scores of one row are one matrix-vector product of the
 * sentence's keys [n, K] (rows B * K apart, time-major) with the query, and
 * their backward one transposed product (dq) and one rank-1 update (dkeys),
 * all OpenBLAS level 2. At the bench's sizes (B = 64, n = 25, K = 256) that
 * was 1.7-2.5 times as fast as the vectorized dot-product loop of the
 * additive score in the forward, 1.3-1.5 times in the backward. A product
 * over the whole batch at once (queries [B, K] times every key [K, T * B])
 * would do B times the work to keep only the diagonal blocks. */
#include <string.h>

#include "model/rnn/rnn_layers.h"
#include "base/pool.h"

static real attention_score(const real *v, const real *w, const real *u, int A)
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

/* The factor of the multiplicative scores: 1 / sqrt(K) for scaled-dot. */
static real score_scale(nmt_attention kind, int K)
{
    return kind == NMT_ATT_SCALED_DOT ? (real)(1.0 / sqrt((double)K)) : (real)1;
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

/* In place: the scores al [n] become the softmax, and al [n .. T) is 0
 * (padding gets no weight). */
static void softmax_row(real *al, int n, int T)
{
    real mx = -INFINITY;
    for (int j = 0; j < n; j++)
        mx = al[j] > mx ? al[j] : mx;
    real sum = 0;
    for (int j = 0; j < n; j++) {
        al[j] = fast_exp(al[j] - mx);
        sum += al[j];
    }
    real inv = 1 / sum;
    for (int j = 0; j < n; j++)
        al[j] *= inv;
    for (int j = n; j < T; j++)
        al[j] = 0;
}

/* What one call shares out over the threads: the layer, the rows' query,
 * alpha and context or their gradients. */
typedef struct att_job {
    const attention_layer *L;
    real *ctx, *alpha, *dq;
    const real *q, *dctx, *alpha_in;
    const int *src_of;
    int R;
} att_job;

/* Rows r0 .. r1-1 of nmt_attention_forward. */
static void forward_rows(const att_job *p, int r0, int r1)
{
    /* ctx: [R, DH], alpha: [R, T], q: [R, K] */
    const attention_layer *L = p->L;
    int B = L->B, T = L->T, K = L->K;
    real scale = score_scale(L->kind, K);
    for (int r = r0; r < r1; r++) {
        int b = p->src_of ? p->src_of[r] : r, n = L->len[b];
        const real *q = p->q + (size_t)r * K, *keys = L->keys + (size_t)b * K;
        real *al = p->alpha + (size_t)r * T;
        if (L->kind == NMT_ATT_BAHDANAU) {
            for (int j = 0; j < n; j++)
                al[j] = attention_score(L->v, q, keys + (size_t)j * B * K, K);
        } else { /* al [n] = scale * keys [n, K] . q */
            NMT_GEMV(CblasRowMajor, CblasNoTrans, n, K, scale, keys, B * K, q, 1, 0, al, 1);
        }
        softmax_row(al, n, T);
        context_row(p->ctx + (size_t)r * L->DH, al, L->enc, b, n, B, L->DH);
    }
}

/* Positions whose score gradients are held at once (on the stack) for the
 * level-2 products of the multiplicative backward; sentences are shorter. */
#define SCORE_BLOCK 64

/* Rows r0 .. r1-1 of nmt_attention_backward, their share of dv added to dv. */
static void backward_rows(const att_job *p, real *dv, int r0, int r1)
{
    /* dq: [R, K], dctx: [R, DH], alpha: [R, T]; row r attends source r
     * (training has R = B), so rows write disjoint parts of dkeys and denc */
    const attention_layer *L = p->L;
    int B = L->B, T = L->T, K = L->K, DH = L->DH;
    real scale = score_scale(L->kind, K);
    for (int r = r0; r < r1; r++) {
        int b = r, n = L->len[b];
        const real *al = p->alpha_in + (size_t)r * T, *dc = p->dctx + (size_t)r * DH;
        const real *q = p->q + (size_t)r * K, *keys = L->keys + (size_t)b * K;
        real *dq = p->dq + (size_t)r * K, *dkeys = L->dkeys + (size_t)b * K;
        for (int k = 0; k < K; k++)
            dq[k] = 0;
        /* d alpha_j = dctx . h_j; softmax backward needs sum_j alpha_j d alpha_j,
         * so d alpha is computed twice rather than stored */
        real sum = 0;
        for (int j = 0; j < n; j++) {
            const real *h = L->enc + ((size_t)j * B + b) * DH;
            real *dh = L->denc + ((size_t)j * B + b) * DH;
            real a = al[j];
            sum += a * dot(dc, h, DH);
            for (int k = 0; k < DH; k++)
                dh[k] += a * dc[k];
        }
        for (int j0 = 0; j0 < n; j0 += SCORE_BLOCK) {
            int m = n - j0 < SCORE_BLOCK ? n - j0 : SCORE_BLOCK;
            real ds[SCORE_BLOCK]; /* the gradients of the scores a_j0 .. a_j0+m-1 */
            for (int j = 0; j < m; j++) {
                const real *h = L->enc + ((size_t)(j0 + j) * B + b) * DH;
                ds[j] = al[j0 + j] * (dot(dc, h, DH) - sum);
            }
            size_t at = (size_t)j0 * B * K;
            if (L->kind == NMT_ATT_BAHDANAU) {
                for (int j = 0; j < m; j++)
                    score_backward(dkeys + at + (size_t)j * B * K, dq, dv, ds[j], q,
                                   keys + at + (size_t)j * B * K, L->v, K);
                continue;
            }
            /* a_j = scale q . k_j: dq += scale keys^T ds, dk_j += scale ds_j q */
            NMT_GEMV(CblasRowMajor, CblasTrans, m, K, scale, keys + at, B * K, ds, 1, 1, dq, 1);
            NMT_GER(CblasRowMajor, m, K, scale, ds, 1, q, 1, dkeys + at, B * K);
        }
    }
}

/* ---- the rows spread over the pool's threads ---- */

static void forward_chunk(void *arg, int c, int n)
{
    const att_job *j = arg;
    int lo, hi;
    pool_chunk_range(j->R, 1, c, n, &lo, &hi);
    forward_rows(j, lo, hi);
}

void nmt_attention_forward(real *ctx, real *alpha, const attention_layer *L, const real *q,
                       const int *src_of, int R)
{
    att_job j = {.L = L, .ctx = ctx, .alpha = alpha, .q = q, .src_of = src_of, .R = R};
    nmt_pool_run(forward_chunk, &j, pool_chunks((size_t)R, 1));
}

static void context_chunk(void *arg, int c, int n)
{
    const att_job *j = arg;
    const attention_layer *L = j->L;
    int lo, hi;
    pool_chunk_range(j->R, 1, c, n, &lo, &hi);
    for (int r = lo; r < hi; r++)
        context_row(j->ctx + (size_t)r * L->DH, j->alpha_in + (size_t)r * L->T, L->enc, r % L->B,
                    L->len[r % L->B], L->B, L->DH);
}

void nmt_attention_context(real *ctx, const attention_layer *L, const real *alpha, int R)
{
    att_job j = {.L = L, .ctx = ctx, .alpha_in = alpha, .R = R};
    nmt_pool_run(context_chunk, &j, pool_chunks((size_t)R, 1));
}

static void backward_chunk(void *arg, int c, int n)
{
    const att_job *j = arg;
    int lo, hi;
    pool_chunk_range(j->R, 1, c, n, &lo, &hi);
    real *dv = NULL;
    if (j->L->kind == NMT_ATT_BAHDANAU) {
        /* this chunk's share of dv, in the layer's scratch */
        dv = j->L->dv_part + (size_t)c * j->L->K;
        memset(dv, 0, (size_t)j->L->K * sizeof *dv);
    }
    backward_rows(j, dv, lo, hi);
}

void nmt_attention_backward(real *dq, const attention_layer *L, const real *dctx, const real *alpha,
                        const real *q, int R)
{
    /* A fixed number of chunks, whatever the threads: dv's partial sums are
     * added in the same order however the chunks were shared out. */
    int n = R < ATT_BACKWARD_CHUNKS ? R : ATT_BACKWARD_CHUNKS;
    att_job j = {.L = L, .dq = dq, .dctx = dctx, .alpha_in = alpha, .q = q, .R = R};
    nmt_pool_run(backward_chunk, &j, n);
    if (L->kind != NMT_ATT_BAHDANAU)
        return;
    for (int c = 0; c < n; c++)
        for (int k = 0; k < L->K; k++)
            L->dv[k] += L->dv_part[(size_t)c * L->K + k];
}
