/* Multi-head attention for decoding: one new query position for R rows
 * (hypotheses) at once, against the keys and values of the positions before
 * it (self-attention, kept in a cache that grows by one position a step) or
 * of the source (cross-attention, made once per sentence).
 *
 * The projections are products over the R rows; each (row, head) pair is
 * then two matrix-vector products (scores, context) around the softmax of
 * the training forward (nmt_tf_softmax_row), spread over the pool when there
 * is enough work. */
#include <math.h>
#include <string.h>

#include "base/pool.h"
#include "model/transformer/layers.h"

/* Multiply-adds below which one thread does the pairs. */
#define STEP_MIN_WORK 65536

typedef struct step_job {
    real *ctx, *P;          /* [R, d], [R, h, ldp] */
    const real *Q;          /* [R, d] */
    const real *K, *V;      /* a row's keys at src * kv_stride, [n, d] each */
    size_t kv_stride;
    const int *src_of;      /* [R] or NULL (row r reads keys r) */
    const int *klen;        /* [S] keys of each source, or NULL: n_keys for all */
    int n_keys, ldp, P_cols; /* P row: n weights, zeros up to P_cols */
    int R, d, h;
} step_job;

static void step_pair(const step_job *j, int r, int t)
{
    int d = j->d, dk = d / j->h;
    int src = j->src_of ? j->src_of[r] : r;
    int n = j->klen ? j->klen[src] : j->n_keys;
    const real *K = j->K + (size_t)src * j->kv_stride + (size_t)t * dk;
    const real *V = j->V + (size_t)src * j->kv_stride + (size_t)t * dk;
    const real *q = j->Q + (size_t)r * d + (size_t)t * dk;
    real *p = j->P + ((size_t)r * j->h + t) * j->ldp, *c = j->ctx + (size_t)r * d + (size_t)t * dk;
    if (n > 0)
        NMT_GEMV(CblasRowMajor, CblasNoTrans, n, dk, (real)(1.0 / sqrt((double)dk)), K, d, q, 1,
                 0, p, 1);
    nmt_tf_softmax_row(p, n, j->P_cols > n ? j->P_cols : n);
    if (n > 0)
        NMT_GEMV(CblasRowMajor, CblasTrans, n, dk, 1, V, d, p, 1, 0, c, 1);
    else
        memset(c, 0, (size_t)dk * sizeof *c);
}

static void step_chunk(void *arg, int c, int n_chunks)
{
    const step_job *j = arg;
    int lo, hi;
    pool_chunk_range(j->R * j->h, 1, c, n_chunks, &lo, &hi);
    for (int pair = lo; pair < hi; pair++)
        step_pair(j, pair / j->h, pair % j->h);
}

static void run_step(step_job *j, int max_keys)
{
    size_t work = (size_t)j->R * j->d * (size_t)(max_keys > 0 ? max_keys : 1);
    int n_chunks = pool_chunks(work, STEP_MIN_WORK);
    if (n_chunks > j->R * j->h)
        n_chunks = j->R * j->h > 0 ? j->R * j->h : 1;
    nmt_pool_run(step_chunk, j, n_chunks);
}

/* out [R, ldo] = in [R, d] W^T + b, the bias first as nmt_linear_forward does. */
static void linear_strided(real *out, size_t ldo, const real *in, const real *W, const real *b,
                           int R, int d)
{
    for (int r = 0; r < R; r++)
        memcpy(out + (size_t)r * ldo, b, (size_t)d * sizeof *out);
    nmt_gemm(0, 1, R, d, d, 1, in, d, W, d, 1, out, (int)ldo);
}

size_t nmt_tf_mha_step_scratch(int R, int d)
{
    return 2 * (size_t)R * d;
}

void nmt_tf_mha_step_self(real *out, real *P, real *Kc, real *Vc, const real *xq,
                          const tf_mha_params *p, real *scratch, int i, int Tmax, int R, int d,
                          int h, int accumulate)
{
    /* out, xq: [R, d]; P: [R, h, Tmax]; Kc, Vc: [R, Tmax, d]; scratch: Q, ctx [R, d] */
    real *Q = scratch, *ctx = Q + (size_t)R * d;
    size_t stride = (size_t)Tmax * d;
    nmt_linear_forward(Q, xq, p->W_q, p->b_q, R, d, d, d, 0);
    linear_strided(Kc + (size_t)i * d, stride, xq, p->W_k, p->b_k, R, d);
    linear_strided(Vc + (size_t)i * d, stride, xq, p->W_v, p->b_v, R, d);
    step_job j = {.ctx = ctx, .P = P, .Q = Q, .K = Kc, .V = Vc, .kv_stride = stride,
                  .n_keys = i + 1, .ldp = Tmax, .P_cols = i + 1, .R = R, .d = d, .h = h};
    run_step(&j, i + 1);
    nmt_linear_forward(out, ctx, p->W_o, p->b_o, R, d, d, d, accumulate);
}

void nmt_tf_mha_step_cross(real *out, real *P, const real *K, const real *V, const int *klen,
                           const int *src_of, const real *xq, const tf_mha_params *p,
                           real *scratch, int Ts, int R, int d, int h, int accumulate)
{
    /* out, xq: [R, d]; P: [R, h, Ts]; K, V: [S, Ts, d]; klen: [S];
     * src_of: [R]; scratch: Q, ctx [R, d] */
    real *Q = scratch, *ctx = Q + (size_t)R * d;
    nmt_linear_forward(Q, xq, p->W_q, p->b_q, R, d, d, d, 0);
    step_job j = {.ctx = ctx, .P = P, .Q = Q, .K = K, .V = V, .kv_stride = (size_t)Ts * d,
                  .src_of = src_of, .klen = klen, .ldp = Ts, .P_cols = Ts, .R = R, .d = d,
                  .h = h};
    run_step(&j, Ts);
    nmt_linear_forward(out, ctx, p->W_o, p->b_o, R, d, d, d, accumulate);
}

void nmt_tf_cache_reorder(real *dst, const real *src, const int *from, int n_pos, int Tmax,
                          int R, int d)
{
    /* dst: [R, Tmax, d]; src: [R_src, Tmax, d]; from: [R] */
    size_t stride = (size_t)Tmax * d;
    for (int r = 0; r < R; r++)
        memcpy(dst + (size_t)r * stride, src + (size_t)from[r] * stride,
               (size_t)n_pos * d * sizeof *dst);
}
