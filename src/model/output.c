/* The output side every architecture shares: the projection to the
 * vocabulary, softmax cross-entropy with a padding mask and label smoothing,
 * and the output layer that runs them chunk by chunk over a batch's rows
 * (nmt_output_loss). */
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "base/simd.h"
#include "model/workspace.h"
#include "nmt/error.h"

/* Element-wise passes are cut into chunks of at least this many elements. */
#define MIN_CHUNK 16384

static int n_chunks(size_t n)
{
    return pool_chunks(n, MIN_CHUNK);
}

/* A pass over the rows of x [N, V]; the rest is for nmt_cross_entropy_grad. */
typedef struct rows_job {
    real *x;
    real *row_out; /* a figure per row: log p of the target (nmt_cross_entropy_grad),
                    * the log-sum-exp (nmt_log_sum_exp_rows) */
    real *row_mean; /* mean log p of each row (label smoothing) */
    const int32_t *target;
    const unsigned char *active;
    real scale;
    real smooth;    /* label smoothing e; 0: the plain loss */
    int N, V;
} rows_job;

/* The maximum of a row. A running maximum of floats does not vectorize
 * (x > m ? x : m is not a reduction GCC may regroup: it cannot know there is
 * no NaN), but the same maximum of their order keys does: an integer max is
 * exact in any grouping. The value is main's lane-by-lane maximum for every
 * row without a NaN (a row with one gives NaN either way), up to the sign of
 * a zero maximum, which x - mx and mx + log(sum) do not see. */
NMT_SIMD_INLINE real row_max(const real *restrict row, int V)
{
    nmt_real_key m = nmt_real_key_of(row[0]);
    for (int k = 1; k < V; k++) {
        nmt_real_key x = nmt_real_key_of(row[k]);
        m = x > m ? x : m;
    }
    return nmt_real_of_key(m);
}

/* sum_k x[k] over a row, in lanes */
NMT_SIMD_INLINE real row_sum(const real *restrict row, int V)
{
    real acc[NMT_LANES] = {0};
    int k = 0;
    for (; k + NMT_LANES <= V; k += NMT_LANES)
        for (int l = 0; l < NMT_LANES; l++)
            acc[l] += row[k + l];
    for (; k < V; k++)
        acc[k % NMT_LANES] += row[k];
    return lanes_total(acc);
}

/* e[k] = exp(x[k] - mx), e may be x: a loop of its own, as wide as the
 * vectors go (summed in lanes, it would be held to NMT_LANES) */
NMT_SIMD_INLINE void row_exp(real *e, const real *x, real mx, int V)
{
    for (int k = 0; k < V; k++)
        e[k] = fast_exp(x[k] - mx);
}

/* sum_k exp(row[k] - mx), in lanes; with e != NULL (which may be row), also
 * e[k] = exp(row[k] - mx), the very values summed. */
NMT_SIMD_INLINE real row_exp_sum(real *e, const real *row, real mx, int V)
{
    real lane[NMT_LANES] = {0};
    int k = 0;
    if (e) {
        row_exp(e, row, mx, V);
        return row_sum(e, V);
    }
    for (; k + NMT_LANES <= V; k += NMT_LANES)
        for (int l = 0; l < NMT_LANES; l++)
            lane[l] += fast_exp(row[k + l] - mx);
    for (; k < V; k++)
        lane[k % NMT_LANES] += fast_exp(row[k] - mx);
    return lanes_total(lane);
}

/* log sum_k exp(row[k]) */
NMT_SIMD_INLINE real row_log_sum_exp(const real *row, int V)
{
    real mx = row_max(row, V);
    return mx + R_LOG(row_exp_sum(NULL, row, mx, V));
}

NMT_SIMD_INLINE void log_softmax_rows(real *x, int N, int V)
{
    /* x: [N, V] */
    for (int n = 0; n < N; n++) {
        real *row = x + (size_t)n * V;
        real lse = row_log_sum_exp(row, V);
        for (int k = 0; k < V; k++)
            row[k] -= lse;
    }
}

double nmt_cross_entropy_forward(real *logits, const int32_t *target, const unsigned char *active,
                             double *nll, double *mean_logp, int N, int B, int V)
{
    /* logits: [N, V], target: [N], active: [N], nll: [B] */
    nmt_log_softmax_forward(logits, N, V);
    double total = 0;
    for (int n = 0; n < N; n++) {
        if (!active[n])
            continue;
        double l = -(double)logits[(size_t)n * V + target[n]];
        total += l;
        if (nll)
            nll[n % B] += l;
        if (mean_logp)
            *mean_logp += (double)(row_sum(logits + (size_t)n * V, V) / (real)V);
    }
    return total;
}

NMT_SIMD
static void log_softmax_chunk(void *arg, int c, int n)
{
    const rows_job *j = arg;
    int lo, hi;
    pool_chunk_range(j->N, 1, c, n, &lo, &hi);
    log_softmax_rows(j->x + (size_t)lo * j->V, hi - lo, j->V);
}

void nmt_log_softmax_forward(real *x, int N, int V)
{
    rows_job j = {.x = x, .N = N, .V = V};
    nmt_pool_run(log_softmax_chunk, &j, n_chunks((size_t)N * V));
}

NMT_SIMD
static void log_sum_exp_chunk(void *arg, int c, int n)
{
    const rows_job *j = arg;
    int lo, hi;
    pool_chunk_range(j->N, 1, c, n, &lo, &hi);
    for (int r = lo; r < hi; r++)
        j->row_out[r] = row_log_sum_exp(j->x + (size_t)r * j->V, j->V);
}

void nmt_log_sum_exp_rows(real *lse, const real *x, int N, int V)
{
    rows_job j = {.x = (real *)x, .row_out = lse, .N = N, .V = V};
    nmt_pool_run(log_sum_exp_chunk, &j, n_chunks((size_t)N * V));
}

/* ---- the loss and its gradient in one pass (training) ---- */

/* The chunk's rows, each in five passes over its V logits (the maximum, the
 * sum for label smoothing, the exponentials, their sum, the gradient), each
 * a loop that vectorizes; a row of 8000 floats stays in the core's cache. */
NMT_SIMD
static void xent_grad_chunk(void *arg, int c, int n_chunks)
{
    const rows_job *j = arg;
    int lo, hi, V = j->V;
    pool_chunk_range(j->N, 1, c, n_chunks, &lo, &hi);
    for (int n = lo; n < hi; n++) {
        real *row = j->x + (size_t)n * V;
        if (!j->active[n]) { /* padding: no loss, no gradient */
            j->row_out[n] = 0;
            memset(row, 0, (size_t)V * sizeof *row);
            continue;
        }
        int t = j->target[n];
        real e = j->smooth, x_total = 0;
        real x_t = row[t], mx = row_max(row, V);
        if (e > 0)
            x_total = row_sum(row, V);
        real sum = row_exp_sum(row, row, mx, V); /* row becomes exp(x - mx) */
        /* log p of the target as nmt_log_softmax_forward rounds it */
        real lse = mx + R_LOG(sum);
        j->row_out[n] = x_t - lse;
        real f = j->scale / sum;
        if (e > 0) {
            /* d/dx_k of (1 - e)(-log p[t]) + e mean_k(-log p[k]), times scale:
             * p_k - (1 - e) [k = t] - e / V */
            j->row_mean[n] = x_total / (real)V - lse;
            real u = j->scale * e / (real)V;
            for (int k = 0; k < V; k++)
                row[k] = row[k] * f - u;
            row[t] -= j->scale * (1 - e);
        } else {
            for (int k = 0; k < V; k++)
                row[k] *= f;
            row[t] -= j->scale;
        }
    }
}

void nmt_cross_entropy_grad(real *logits, real *logp_target, real *logp_mean, const int32_t *target,
                        const unsigned char *active, real scale, real e, int N, int V)
{
    rows_job j = {.x = logits, .row_out = logp_target, .row_mean = logp_mean, .target = target,
                  .active = active, .scale = scale, .smooth = e, .N = N, .V = V};
    nmt_pool_run(xent_grad_chunk, &j, n_chunks((size_t)N * V));
}

/* ---- the output layer over a batch ---- */

int nmt_workspace_base_init(nmt_workspace *ws, const nmt_arch_ops *ops, int K, int Vt,
                            int max_B, int max_Ts, int max_Tt, double *bytes)
{
    /* whole steps of at least 128 rows: big enough for an efficient product
     * (256 rows were no faster on the bench), small enough (3 MB at B = 64,
     * Vt = 6000) to stay in cache and off the peak memory */
    int steps = (128 + max_B - 1) / max_B;
    int rows = max_B * (steps < max_Tt ? steps : max_Tt);
    size_t reals = (size_t)rows * Vt + 2 * (size_t)rows * K + 2 * (size_t)rows;
    size_t side = (size_t)max_B * max_Tt + (size_t)max_B * sizeof(double);
    if (!ws) {
        *bytes += (double)reals * sizeof(real) + (double)side;
        return NMT_OK;
    }
    ws->ops = ops;
    ws->max_B = max_B, ws->max_Ts = max_Ts, ws->max_Tt = max_Tt;
    output_layer *o = &ws->out;
    o->K = K, o->Vt = Vt, o->rows = rows;
    o->logits = calloc((size_t)rows * Vt, sizeof(real));
    o->chunk_in = calloc((size_t)rows * K, sizeof(real));
    o->chunk_dx = calloc((size_t)rows * K, sizeof(real));
    o->logp = calloc((size_t)rows, sizeof(real));
    o->logp_mean = calloc((size_t)rows, sizeof(real));
    ws->tgt_active = calloc((size_t)max_B * max_Tt, 1);
    ws->nll = calloc((size_t)max_B, sizeof *ws->nll);
    if (!o->logits || !o->chunk_in || !o->chunk_dx || !o->logp || !o->logp_mean ||
        !ws->tgt_active || !ws->nll) {
        nmt_workspace_base_free(ws);
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for the output layer's %zu MB",
                             reals * sizeof(real) >> 20);
    }
    return NMT_OK;
}

void nmt_workspace_base_free(nmt_workspace *ws)
{
    free(ws->out.logits);
    free(ws->out.chunk_in);
    free(ws->out.chunk_dx);
    free(ws->out.logp);
    free(ws->out.logp_mean);
    free(ws->tgt_active);
    free(ws->nll);
}

/* The input of the vocabulary projection for rows r0 .. r0+rows-1: in, or
 * with dropout in times its mask (made here, chunk by chunk, rather than
 * held for all rows). */
static const real *chunk_input(const output_layer *o, size_t r0, int rows)
{
    size_t K = (size_t)o->K;
    const real *x = o->in + r0 * K;
    if (!o->mask)
        return x;
    memcpy(o->chunk_in, x, (size_t)rows * K * sizeof(real));
    nmt_dropout_apply(o->chunk_in, o->mask + r0 * K, o->keep, (size_t)rows * K);
    return o->chunk_in;
}

/* The projection and the loss of rows r0 .. r0+rows-1 (whole steps) into
 * o->logits; returns their summed -log p, and adds their summed objective to
 * *objective if given. With grad, the logits become their gradient at the
 * same time (nmt_cross_entropy_grad). */
static double chunk_loss(const nmt_workspace *ws, const real *x, const nmt_batch *batch,
                         double *nll, double *objective, size_t r0, int rows, int grad)
{
    const output_layer *o = &ws->out;
    int K = o->K, Vt = o->Vt;
    const int32_t *target = batch->tgt_out + r0;
    const unsigned char *active = ws->tgt_active + r0;
    real e = ws->smoothing;
    double total = 0, mean_logp = 0; /* summed over the active rows */
    nmt_linear_forward(o->logits, x, o->W, o->b, rows, K, Vt, K, 0);
    if (!grad) {
        total = nmt_cross_entropy_forward(o->logits, target, active, nll, e > 0 ? &mean_logp : NULL,
                                          rows, ws->B, Vt);
    } else {
        nmt_cross_entropy_grad(o->logits, o->logp, o->logp_mean, target, active,
                               (real)(1.0 / ws->n_tokens), e, rows, Vt);
        /* summed as nmt_cross_entropy_forward sums */
        for (int n = 0; n < rows; n++) {
            if (!active[n])
                continue;
            double l = -(double)o->logp[n];
            total += l;
            if (nll)
                nll[n % ws->B] += l;
            if (e > 0)
                mean_logp += (double)o->logp_mean[n];
        }
    }
    if (objective)
        *objective += e > 0 ? (1 - (double)e) * total - (double)e * mean_logp : total;
    return total;
}

/* The chunk's logit gradient into its share of dW and db, and the gradient
 * of its input rows, through the dropout, to the sink. */
static void chunk_backward(const output_layer *o, const real *x, size_t r0, int rows)
{
    size_t n = (size_t)rows * o->K;
    real *dx = o->chunk_dx;
    memset(dx, 0, n * sizeof(real));
    nmt_linear_backward(dx, o->dW, o->db, o->logits, x, o->W, rows, o->K, o->Vt, o->K);
    if (o->mask)
        nmt_dropout_apply(dx, o->mask + r0 * o->K, o->keep, n);
    o->sink(o->sink_ctx, dx, r0, rows);
}

double nmt_output_loss(nmt_workspace *ws, const nmt_batch *batch, int grad, double *nll,
                       double *objective)
{
    const output_layer *o = &ws->out;
    size_t N = (size_t)ws->Tt * ws->B;
    double total = 0;
    for (size_t r0 = 0; r0 < N; r0 += o->rows) {
        int rows = (int)(N - r0 < (size_t)o->rows ? N - r0 : (size_t)o->rows);
        const real *x = chunk_input(o, r0, rows);
        total += chunk_loss(ws, x, batch, nll, objective, r0, rows, grad);
        if (grad)
            chunk_backward(o, x, r0, rows);
    }
    return total;
}
