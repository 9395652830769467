/* The output side: deep output t = tanh(W_t [s ; c ; e] + b_t), the
 * projection to the vocabulary, and softmax cross-entropy with a padding
 * mask. Every product runs over all N = T*B rows at once. */
#include <string.h>

#include "model/layers.h"
#include "base/pool.h"

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

/* x = tanh(x) over a chunk of N * V elements */
static void tanh_chunk(void *arg, int c, int n)
{
    const rows_job *j = arg;
    int lo, hi;
    pool_chunk_range(j->N, 1, c, n, &lo, &hi);
    for (size_t i = (size_t)lo * j->V; i < (size_t)hi * j->V; i++)
        j->x[i] = fast_tanh(j->x[i]);
}

void nmt_deep_output_forward(real *t, const real *s, const real *c, const real *e,
                         const real *W_t, const real *b_t, int N, int H, int DH, int E,
                         int O)
{
    /* t: [N, O], s: [N, H], c: [N, DH], e: [N, E], W_t: [O, H + DH + E] */
    int ld = H + DH + E;
    nmt_linear_forward(t, s, W_t, b_t, N, H, O, ld, 0);
    nmt_linear_forward(t, c, W_t + H, NULL, N, DH, O, ld, 1);
    nmt_linear_forward(t, e, W_t + H + DH, NULL, N, E, O, ld, 1);
    rows_job j = {.x = t, .N = N, .V = O};
    nmt_pool_run(tanh_chunk, &j, n_chunks((size_t)N * O));
}

void nmt_deep_output_backward(real *ds, real *dc, real *de, real *dW_t, real *db_t,
                          const real *dpre, const real *s, const real *c, const real *e,
                          const real *W_t, int N, int H, int DH, int E, int O,
                          int accumulate)
{
    /* ds: [N, H], dc: [N, DH], de: [N, E], dW_t: [O, H + DH + E], dpre: [N, O] */
    int ld = H + DH + E;
    if (!accumulate) {
        memset(ds, 0, (size_t)N * H * sizeof *ds);
        memset(dc, 0, (size_t)N * DH * sizeof *dc);
        memset(de, 0, (size_t)N * E * sizeof *de);
    }
    nmt_linear_backward(ds, dW_t, db_t, dpre, s, W_t, N, H, O, ld);
    nmt_linear_backward(dc, dW_t + H, NULL, dpre, c, W_t + H, N, DH, O, ld);
    nmt_linear_backward(de, dW_t + H + DH, NULL, dpre, e, W_t + H + DH, N, E, O, ld);
}

/* The maximum of a row, in lanes (see lanes_total) so that it vectorizes. */
static real row_max(const real *row, int V)
{
    real mx = row[0];
    real lane[NMT_LANES];
    int k = 0;
    for (int l = 0; l < NMT_LANES; l++)
        lane[l] = row[0];
    for (; k + NMT_LANES <= V; k += NMT_LANES)
        for (int l = 0; l < NMT_LANES; l++)
            lane[l] = row[k + l] > lane[l] ? row[k + l] : lane[l];
    for (int l = 0; l < NMT_LANES; l++)
        mx = lane[l] > mx ? lane[l] : mx;
    for (; k < V; k++)
        mx = row[k] > mx ? row[k] : mx;
    return mx;
}

/* The maximum of a row and, into *total, the sum of its elements: one pass
 * for label smoothing, which needs both. */
static real row_max_sum(const real *row, int V, real *total)
{
    real mx = row[0];
    real lane[NMT_LANES], acc[NMT_LANES] = {0};
    int k = 0;
    for (int l = 0; l < NMT_LANES; l++)
        lane[l] = row[0];
    for (; k + NMT_LANES <= V; k += NMT_LANES)
        for (int l = 0; l < NMT_LANES; l++) {
            lane[l] = row[k + l] > lane[l] ? row[k + l] : lane[l];
            acc[l] += row[k + l];
        }
    for (int l = 0; l < NMT_LANES; l++)
        mx = lane[l] > mx ? lane[l] : mx;
    for (; k < V; k++) {
        mx = row[k] > mx ? row[k] : mx;
        acc[k % NMT_LANES] += row[k];
    }
    *total = lanes_total(acc);
    return mx;
}

/* sum_k x[k] over a row, in lanes */
static real row_sum(const real *row, int V)
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

/* sum_k exp(row[k] - mx), in lanes; with e != NULL (which may be row), also
 * e[k] = exp(row[k] - mx), the very values summed. */
static real row_exp_sum(real *e, const real *row, real mx, int V)
{
    real lane[NMT_LANES] = {0};
    int k = 0;
    if (e) {
        for (; k + NMT_LANES <= V; k += NMT_LANES)
            for (int l = 0; l < NMT_LANES; l++) {
                e[k + l] = fast_exp(row[k + l] - mx);
                lane[l] += e[k + l];
            }
        for (; k < V; k++) {
            e[k] = fast_exp(row[k] - mx);
            lane[k % NMT_LANES] += e[k];
        }
    } else {
        for (; k + NMT_LANES <= V; k += NMT_LANES)
            for (int l = 0; l < NMT_LANES; l++)
                lane[l] += fast_exp(row[k + l] - mx);
        for (; k < V; k++)
            lane[k % NMT_LANES] += fast_exp(row[k] - mx);
    }
    return lanes_total(lane);
}

/* log sum_k exp(row[k]) */
static real row_log_sum_exp(const real *row, int V)
{
    real mx = row_max(row, V);
    return mx + R_LOG(row_exp_sum(NULL, row, mx, V));
}

static void log_softmax_rows(real *x, int N, int V)
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
        real x_t = row[t], mx = e > 0 ? row_max_sum(row, V, &x_total) : row_max(row, V);
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
