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
#include "model/transformer/transformer_layers.h"

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

size_t nmt_tf_mha_step_scratch(int R, int d)
{
    return 4 * (size_t)R * d;
}

void nmt_tf_mha_step_self(real *out, real *P, real *Kc, real *Vc, const int *slot,
                          const real *xq, const tf_mha_params *p, real *scratch, int i, int Tmax,
                          int R, int d, int h, int accumulate)
{
    /* out, xq: [R, d]; P: [R, h, Tmax]; Kc, Vc: [slots, Tmax, d]; slot: [R];
     * scratch: Q, ctx, and this position's K and V [R, d] */
    real *Q = scratch, *ctx = Q + (size_t)R * d, *K = ctx + (size_t)R * d, *V = K + (size_t)R * d;
    size_t stride = (size_t)Tmax * d;
    nmt_linear_forward(Q, xq, p->W_q, p->b_q, R, d, d, d, 0);
    nmt_tf_mha_project_kv(K, V, xq, p, R, d);
    for (int r = 0; r < R; r++) {
        size_t at = (size_t)(slot ? slot[r] : r) * stride + (size_t)i * d;
        memcpy(Kc + at, K + (size_t)r * d, (size_t)d * sizeof *K);
        memcpy(Vc + at, V + (size_t)r * d, (size_t)d * sizeof *V);
    }
    step_job j = {.ctx = ctx, .P = P, .Q = Q, .K = Kc, .V = Vc, .kv_stride = stride,
                  .src_of = slot, .n_keys = i + 1, .ldp = Tmax, .P_cols = i + 1, .R = R, .d = d,
                  .h = h};
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

void nmt_tf_slots_select(int *slot, const int *from, int R, int old_R, int n_slots,
                         real *const *caches, int n_caches, int n_pos, int Tmax, int d,
                         int *scratch)
{
    /* slot: [old_R] on entry, [R] on return; from: [R]; caches: n_caches of
     * [n_slots, Tmax, d]; scratch: the old slots [old_R], each old row's
     * continuations [old_R], the slots in use [n_slots], the free ones */
    int *old = scratch, *count = old + n_slots, *used = count + n_slots, *free_list = used + n_slots;
    size_t stride = (size_t)Tmax * d, n = (size_t)n_pos * d;
    memcpy(old, slot, (size_t)old_R * sizeof *old);
    memset(count, 0, (size_t)old_R * sizeof *count);
    memset(used, 0, (size_t)n_slots * sizeof *used);
    for (int r = 0; r < R; r++)
        count[from[r]]++;
    for (int r = 0; r < old_R; r++)
        if (count[r] > 0)
            used[old[r]] = 1;
    int n_free = 0;
    for (int s = 0; s < n_slots; s++)
        if (!used[s])
            free_list[n_free++] = s;
    for (int r = 0; r < R; r++) {
        int p = from[r];
        if (count[p] > 0) { /* the first to continue row p keeps its slot */
            slot[r] = old[p];
            count[p] = -count[p];
            continue;
        }
        /* another continuation of p: a free slot with p's positions so far
         * (p's own slot is not written before the next step) */
        int s = free_list[--n_free];
        slot[r] = s;
        for (int k = 0; k < n_caches; k++)
            memcpy(caches[k] + (size_t)s * stride, caches[k] + (size_t)old[p] * stride,
                   n * sizeof(real));
    }
}
