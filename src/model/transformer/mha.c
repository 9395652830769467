/* Multi-head attention for training: encoder self-attention, decoder
 * self-attention (causal) and cross-attention, forward and backward.
 *
 * The projections (Q, K, V, the output) are one product each over all rows
 * of the batch. What is left is per (sentence b, head t) and small (a
 * [Tq, dk] by [dk, Tk] product at the bench's sizes is 25 x 25 x 64): the
 * scores S = Q_t K_t^T / sqrt(dk), the softmax with its mask, and
 * ctx_t = alpha_t V_t, forward; five such products and the softmax's
 * gradient, backward. The pairs are spread over the pool, each pair's
 * products single-threaded OpenBLAS calls on views of the row-major arrays
 * (head t's columns of Q are a [Tq, dk] matrix with a row stride of d). The
 * pairs are independent and write disjoint blocks, so their results do not
 * depend on the threads.
 *
 * Only keys j < klen[b] enter the products (a shorter sentence costs less);
 * the weights of the other keys are written as exact zeros. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "base/pool.h"
#include "base/simd.h"
#include "model/transformer/transformer_layers.h"

/* Chunks of (sentence, head) pairs, at most: more than threads, so that a
 * thread the system has not scheduled leaves little for the others to wait
 * on; each has its own [2, Tq, Tk] of scratch. */
#define MHA_CHUNKS 16

static int pair_chunks(const tf_mha_shape *s)
{
    int pairs = s->B * s->h;
    return pairs < MHA_CHUNKS ? (pairs > 0 ? pairs : 1) : MHA_CHUNKS;
}

/* The keys query i sees: j < klen, and j <= i when causal. */
static int keys_seen(const tf_mha_shape *s, int klen, int i)
{
    return s->causal && i + 1 < klen ? i + 1 : klen;
}

static real score_scale(int dk)
{
    return (real)(1.0 / sqrt((double)dk));
}

NMT_SIMD
void nmt_tf_softmax_row(real *restrict p, int n, int T)
{
    /* p: [T], scores in p [0, n). The maximum by order keys (exact in any
     * grouping, see nmt_real_key_of), the sum in lanes, the exponentials
     * and the scaling in loops of their own: all four vectorize. */
    nmt_real_key m = nmt_real_key_of(-INFINITY);
    for (int j = 0; j < n; j++) {
        nmt_real_key x = nmt_real_key_of(p[j]);
        m = x > m ? x : m;
    }
    real mx = nmt_real_of_key(m);
    for (int j = 0; j < n; j++)
        p[j] = fast_exp(p[j] - mx);
    real lane[NMT_LANES] = {0};
    int j = 0;
    for (; j + NMT_LANES <= n; j += NMT_LANES)
        for (int l = 0; l < NMT_LANES; l++)
            lane[l] += p[j + l];
    for (; j < n; j++)
        lane[j % NMT_LANES] += p[j];
    real sum = lanes_total(lane);
    real inv = n > 0 ? 1 / sum : 0;
    for (j = 0; j < n; j++)
        p[j] *= inv;
    for (j = n; j < T; j++)
        p[j] = 0;
}

void nmt_tf_mha_project_kv(real *K, real *V, const real *xkv, const tf_mha_params *p, int N,
                           int d)
{
    /* K, V, xkv: [N, d] */
    nmt_linear_forward(K, xkv, p->W_k, p->b_k, N, d, d, d, 0);
    nmt_linear_forward(V, xkv, p->W_v, p->b_v, N, d, d, d, 0);
}

/* What the per-pair passes share. */
typedef struct pair_job {
    const tf_mha_shape *s;
    const tf_mha_acts *a;
    const unsigned char *drop; /* [B, h, Tq, Tk] or NULL */
    real keep;
    real *scratch;             /* [chunks, 2, Tq, Tk] */
    /* backward */
    const real *dctx;          /* [B, Tq, d] */
    real *dQ, *dK, *dV;        /* [B, Tq, d], [B, Tk, d], [B, Tk, d] */
    const tf_mha_guide *guide; /* the guided head, or NULL */
} pair_job;

/* The views of one pair: head t's columns of sentence b's rows. */
typedef struct pair_view {
    int n, dk;
    size_t q_at, kv_at; /* offsets of head t's first column in [B, Tq, d], [B, Tk, d] */
    size_t p_at;        /* offset of the pair's [Tq, Tk] in P */
} pair_view;

static pair_view view_of(const tf_mha_shape *s, int b, int t)
{
    pair_view v;
    v.n = s->klen[b];
    v.dk = s->d / s->h;
    v.q_at = (size_t)b * s->Tq * s->d + (size_t)t * v.dk;
    v.kv_at = (size_t)b * s->Tk * s->d + (size_t)t * v.dk;
    v.p_at = ((size_t)b * s->h + t) * s->Tq * s->Tk;
    return v;
}

/* The weights ctx is made of: alpha itself, or with dropout alpha * mask *
 * keep in w [Tq, Tk] (keys 0 .. n-1). */
NMT_SIMD_INLINE const real *dropped_weights(real *w, const pair_job *j, const pair_view *v)
{
    const real *P = j->a->P + v->p_at;
    if (!j->drop)
        return P;
    const unsigned char *m = j->drop + v->p_at;
    size_t Tq = (size_t)j->s->Tq, Tk = (size_t)j->s->Tk;
    for (size_t i = 0; i < Tq; i++)
        for (int k = 0; k < v->n; k++)
            w[i * Tk + k] = P[i * Tk + k] * (m[i * Tk + k] ? j->keep : 0);
    return w;
}

/* Zeroes rows [r0, r1) of a [rows, dk] view with row stride d. */
NMT_SIMD_INLINE void zero_rows(real *x, int r0, int r1, int dk, int d)
{
    for (int r = r0; r < r1; r++)
        memset(x + (size_t)r * d, 0, (size_t)dk * sizeof *x);
}

NMT_SIMD_INLINE void forward_pair(const pair_job *j, real *tmp, int b, int t)
{
    const tf_mha_shape *s = j->s;
    const tf_mha_acts *a = j->a;
    pair_view v = view_of(s, b, t);
    int Tq = s->Tq, Tk = s->Tk, d = s->d, n = v.n, dk = v.dk;
    real *P = a->P + v.p_at, *ctx = a->ctx + v.q_at;
    /* S [Tq, n] = scale Q_t [Tq, dk] K_t^T [dk, n], into P */
    if (n > 0)
        NMT_GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, Tq, n, dk, score_scale(dk), a->Q + v.q_at,
                 d, a->K + v.kv_at, d, 0, P, Tk);
    for (int i = 0; i < Tq; i++)
        nmt_tf_softmax_row(P + (size_t)i * Tk, keys_seen(s, n, i), Tk);
    if (n == 0) {
        zero_rows(ctx, 0, Tq, dk, d);
        return;
    }
    /* ctx_t [Tq, dk] = alpha [Tq, n] V_t [n, dk] */
    NMT_GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, Tq, dk, n, 1, dropped_weights(tmp, j, &v),
             Tk, a->V + v.kv_at, d, 0, ctx, d);
}

/* Guided alignment's share of a row's score gradient ds [seen] (before
 * the scale): weight * (alpha_j sum_k gold_k - gold_j), the softmax's
 * backward of weight * -sum_j gold_j log alpha_j. A row without gold adds
 * nothing. */
NMT_SIMD_INLINE void guided_row(real *ds, const real *al, const float *gold, int seen, real weight)
{
    real mass = 0;
    for (int k = 0; k < seen; k++)
        mass += (real)gold[k];
    if (mass == 0)
        return;
    for (int k = 0; k < seen; k++)
        ds[k] += weight * (al[k] * mass - (real)gold[k]);
}

double nmt_tf_mha_guided_loss(const tf_mha_acts *a, const tf_mha_shape *s,
                              const tf_mha_guide *g, double *rows)
{
    double sum = 0, n = 0;
    for (int b = 0; g && b < s->B; b++) {
        const real *P = a->P + ((size_t)b * s->h + g->head) * s->Tq * s->Tk;
        const float *gold = g->gold + (size_t)b * s->Tq * s->Tk;
        for (size_t i = 0; i < (size_t)s->Tq; i++) {
            int any = 0;
            for (int k = 0; k < s->klen[b]; k++) {
                double p = gold[i * s->Tk + k];
                if (p == 0)
                    continue;
                double al = P[i * s->Tk + k];
                sum -= p * log(al > (double)FLT_MIN ? al : (double)FLT_MIN);
                any = 1;
            }
            n += any;
        }
    }
    *rows = n;
    return sum;
}

/* With w the weights ctx was made of (alpha, or alpha dropped) and dw =
 * dctx_t V_t^T their gradient:
 *   dV_t = w^T dctx_t
 *   dalpha = dw (* mask * keep with dropout)
 *   dS_ij = alpha_ij (dalpha_ij - sum_k alpha_ik dalpha_ik) / sqrt(dk)
 *           (+ the guided share of a guided head's gold row, guided_row)
 *   dQ_t = dS K_t, dK_t = dS^T Q_t. */
NMT_SIMD_INLINE void backward_pair(const pair_job *j, real *tmp, int b, int t)
{
    const tf_mha_shape *s = j->s;
    const tf_mha_acts *a = j->a;
    pair_view v = view_of(s, b, t);
    int Tq = s->Tq, Tk = s->Tk, d = s->d, n = v.n, dk = v.dk;
    real *dS = tmp, *w_buf = tmp + (size_t)Tq * Tk; /* [Tq, Tk] each */
    const real *P = a->P + v.p_at, *dctx = j->dctx + v.q_at;
    real *dQ = j->dQ + v.q_at, *dK = j->dK + v.kv_at, *dV = j->dV + v.kv_at;
    zero_rows(dK, n, Tk, dk, d); /* padding keys get nothing */
    zero_rows(dV, n, Tk, dk, d);
    if (n == 0) {
        zero_rows(dQ, 0, Tq, dk, d);
        return;
    }
    NMT_GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, n, dk, Tq, 1, dropped_weights(w_buf, j, &v),
             Tk, dctx, d, 0, dV, d);
    NMT_GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, Tq, n, dk, 1, dctx, d, a->V + v.kv_at, d, 0,
             dS, Tk);
    real scale = score_scale(dk);
    for (int i = 0; i < Tq; i++) {
        real *ds = dS + (size_t)i * Tk;
        const real *al = P + (size_t)i * Tk;
        int seen = keys_seen(s, n, i);
        if (j->drop) {
            const unsigned char *m = j->drop + v.p_at + (size_t)i * Tk;
            for (int k = 0; k < seen; k++)
                ds[k] *= m[k] ? j->keep : 0;
        }
        real sum = 0;
        for (int k = 0; k < seen; k++)
            sum += al[k] * ds[k];
        for (int k = 0; k < seen; k++)
            ds[k] = al[k] * (ds[k] - sum) * scale;
        if (j->guide && t == j->guide->head)
            guided_row(ds, al, j->guide->gold + ((size_t)b * Tq + i) * Tk, seen,
                       j->guide->weight * scale);
        for (int k = seen; k < n; k++)
            ds[k] = 0;
    }
    NMT_GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, Tq, dk, n, 1, dS, Tk, a->K + v.kv_at, d,
             0, dQ, d);
    NMT_GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, n, dk, Tq, 1, dS, Tk, a->Q + v.q_at, d, 0,
             dK, d);
}

NMT_SIMD_INLINE void run_pairs(const pair_job *j, int c, int n_chunks, int backward)
{
    const tf_mha_shape *s = j->s;
    real *tmp = j->scratch + (size_t)c * 2 * s->Tq * s->Tk;
    int lo, hi;
    pool_chunk_range(s->B * s->h, 1, c, n_chunks, &lo, &hi);
    for (int pair = lo; pair < hi; pair++) {
        if (backward)
            backward_pair(j, tmp, pair / s->h, pair % s->h);
        else
            forward_pair(j, tmp, pair / s->h, pair % s->h);
    }
}

/* The pairs' element-wise loops (the dropped weights, the softmax's
 * gradient) are compiled into each clone of these two (base/simd.h). */
NMT_SIMD
static void forward_chunk(void *arg, int c, int n_chunks)
{
    run_pairs(arg, c, n_chunks, 0);
}

NMT_SIMD
static void backward_chunk(void *arg, int c, int n_chunks)
{
    run_pairs(arg, c, n_chunks, 1);
}

size_t nmt_tf_mha_forward_scratch(const tf_mha_shape *s)
{
    return (size_t)pair_chunks(s) * 2 * s->Tq * s->Tk;
}

void nmt_tf_mha_forward(real *out, const tf_mha_acts *a, const real *xq, const real *xkv,
                        const tf_mha_params *p, const unsigned char *drop, real keep,
                        real *scratch, const tf_mha_shape *s, int accumulate)
{
    /* out, xq: [B, Tq, d]; xkv: [B, Tk, d]; drop: [B, h, Tq, Tk];
     * scratch: [chunks, 2, Tq, Tk] */
    int d = s->d, Nq = s->B * s->Tq, Nk = s->B * s->Tk;
    nmt_linear_forward(a->Q, xq, p->W_q, p->b_q, Nq, d, d, d, 0);
    nmt_tf_mha_project_kv(a->K, a->V, xkv, p, Nk, d);
    pair_job j = {.s = s, .a = a, .drop = drop, .keep = keep, .scratch = scratch};
    nmt_pool_run(forward_chunk, &j, pair_chunks(s));
    nmt_linear_forward(out, a->ctx, p->W_o, p->b_o, Nq, d, d, d, accumulate);
}

size_t nmt_tf_mha_backward_scratch(const tf_mha_shape *s)
{
    size_t Nq = (size_t)s->B * s->Tq, Nk = (size_t)s->B * s->Tk;
    return (2 * Nq + 2 * Nk) * (size_t)s->d + nmt_tf_mha_forward_scratch(s);
}

void nmt_tf_mha_backward(real *dxq, real *dxkv, const tf_mha_params *dp, const real *dout,
                         const tf_mha_acts *a, const real *xq, const real *xkv,
                         const tf_mha_params *p, const unsigned char *drop, real keep,
                         real *scratch, const tf_mha_shape *s)
{
    nmt_tf_mha_backward_guided(dxq, dxkv, dp, dout, a, xq, xkv, p, drop, keep, scratch, s, NULL);
}

void nmt_tf_mha_backward_guided(real *dxq, real *dxkv, const tf_mha_params *dp,
                                const real *dout, const tf_mha_acts *a, const real *xq,
                                const real *xkv, const tf_mha_params *p,
                                const unsigned char *drop, real keep, real *scratch,
                                const tf_mha_shape *s, const tf_mha_guide *guide)
{
    /* dxq, dout, xq: [B, Tq, d]; dxkv, xkv: [B, Tk, d]; scratch: dctx and dQ
     * [B, Tq, d], dK and dV [B, Tk, d], then the pairs' [chunks, 2, Tq, Tk] */
    int d = s->d, Nq = s->B * s->Tq, Nk = s->B * s->Tk;
    real *dctx = scratch, *dQ = dctx + (size_t)Nq * d, *dK = dQ + (size_t)Nq * d;
    real *dV = dK + (size_t)Nk * d, *rest = dV + (size_t)Nk * d;
    nmt_gemm(0, 0, Nq, d, d, 1, dout, d, p->W_o, d, 0, dctx, d);
    nmt_linear_backward(NULL, dp->W_o, dp->b_o, dout, a->ctx, p->W_o, Nq, d, d, d);
    pair_job j = {.s = s, .a = a, .drop = drop, .keep = keep, .scratch = rest, .dctx = dctx,
                  .dQ = dQ, .dK = dK, .dV = dV, .guide = guide};
    nmt_pool_run(backward_chunk, &j, pair_chunks(s));
    nmt_linear_backward(dxq, dp->W_q, dp->b_q, dQ, xq, p->W_q, Nq, d, d, d);
    nmt_linear_backward(dxkv, dp->W_k, dp->b_k, dK, xkv, p->W_k, Nk, d, d, d);
    nmt_linear_backward(dxkv, dp->W_v, dp->b_v, dV, xkv, p->W_v, Nk, d, d, d);
}
