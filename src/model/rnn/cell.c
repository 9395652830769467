/* One time step of an RNN, GRU or LSTM cell over a batch, forward and
 * backward. The products (W_ih x for all steps, W_hh h_prev per step) are
 * done by the caller with one sgemm each; this file is the fused, element-wise
 * part: gate nonlinearities, state update, and padding (inactive rows keep
 * their state). */
#include <string.h>

#include "model/rnn/rnn_layers.h"
#include "base/pool.h"

/* One active row of each cell. The arrays of a row are distinct (restrict),
 * which lets the compiler vectorize the loops over k. */
static void rnn_row(real *restrict h, real *restrict g, const real *restrict u, int H)
{
    for (int k = 0; k < H; k++) {
        g[k] = fast_tanh(g[k] + u[k]);
        h[k] = g[k];
    }
}

static void lstm_row(real *restrict h, real *restrict c, real *restrict g,
                     const real *restrict u, const real *restrict c_prev, int H)
{
    /* g, u: [4H] as [i f g o]; h, c, c_prev: [H] */
    for (int k = 0; k < H; k++) {
        real i = sigmoid(g[k] + u[k]);
        real f = sigmoid(g[H + k] + u[H + k]);
        real gg = fast_tanh(g[2 * H + k] + u[2 * H + k]);
        real o = sigmoid(g[3 * H + k] + u[3 * H + k]);
        g[k] = i, g[H + k] = f, g[2 * H + k] = gg, g[3 * H + k] = o;
        c[k] = f * c_prev[k] + i * gg;
        h[k] = o * fast_tanh(c[k]);
    }
}

static void gru_row(real *restrict h, real *restrict g, const real *restrict u,
                    const real *restrict h_prev, int H)
{
    /* g, u: [3H] as [r z n]; r only scales U_n h; b_n sits with the input part */
    for (int k = 0; k < H; k++) {
        real r = sigmoid(g[k] + u[k]);
        real z = sigmoid(g[H + k] + u[H + k]);
        real n = fast_tanh(g[2 * H + k] + r * u[2 * H + k]);
        g[k] = r, g[H + k] = z, g[2 * H + k] = n;
        h[k] = (1 - z) * n + z * h_prev[k];
    }
}

/* Rows 0 .. sh.B-1 of one step. */
static void cell_forward_rows(const cell_step *st, cell_shape sh)
{
    int H = sh.H, GH = cell_gates(sh.cell) * H;
    for (int b = 0; b < sh.B; b++) {
        real *hb = st->h + (size_t)b * sh.ldh;
        const real *hp = st->h_prev + (size_t)b * sh.ldh;
        if (!st->active[b]) {
            memcpy(hb, hp, (size_t)H * sizeof *hb);
            if (sh.cell == NMT_CELL_LSTM)
                memcpy(st->c + (size_t)b * H, st->c_prev + (size_t)b * H, (size_t)H * sizeof(real));
            continue;
        }
        real *g = st->gates + (size_t)b * GH;
        const real *u = st->hh + (size_t)b * GH;
        if (sh.cell == NMT_CELL_RNN)
            rnn_row(hb, g, u, H);
        else if (sh.cell == NMT_CELL_LSTM)
            lstm_row(hb, st->c + (size_t)b * H, g, u, st->c_prev + (size_t)b * H, H);
        else
            gru_row(hb, g, u, hp, H);
    }
}

static void lstm_row_backward(real *restrict dg, real *restrict dc_prev,
                              real *restrict dh_prev, const real *restrict dh,
                              const real *restrict dc, const real *restrict g,
                              const real *restrict c, const real *restrict c_prev, int H)
{
    /* dg, g: [4H] as [i f g o]; the rest [H] */
    for (int k = 0; k < H; k++) {
        real i = g[k], f = g[H + k], gg = g[2 * H + k], o = g[3 * H + k];
        real tc = fast_tanh(c[k]);
        real dct = dc[k] + dh[k] * o * (1 - tc * tc);
        dg[k] = dct * gg * i * (1 - i);
        dg[H + k] = dct * c_prev[k] * f * (1 - f);
        dg[2 * H + k] = dct * i * (1 - gg * gg);
        dg[3 * H + k] = dh[k] * tc * o * (1 - o);
        dc_prev[k] = dct * f;
        dh_prev[k] = 0;
    }
}

static void cell_backward_rows(const cell_grads *d, const cell_step *st, cell_shape sh)
{
    int H = sh.H, GH = cell_gates(sh.cell) * H;
    for (int b = 0; b < sh.B; b++) {
        real *dg = d->dgates + (size_t)b * GH;
        real *du = d->dhh + (size_t)b * GH;
        real *dhp = d->dh_prev + (size_t)b * H;
        const real *dhb = d->dh + (size_t)b * H;
        if (!st->active[b]) {
            /* The state was copied: so is its gradient. */
            memset(dg, 0, (size_t)GH * sizeof *dg);
            if (du != dg)
                memset(du, 0, (size_t)GH * sizeof *du);
            memcpy(dhp, dhb, (size_t)H * sizeof *dhp);
            if (sh.cell == NMT_CELL_LSTM)
                memcpy(d->dc_prev + (size_t)b * H, d->dc + (size_t)b * H, (size_t)H * sizeof(real));
            continue;
        }
        const real *g = st->gates + (size_t)b * GH;
        if (sh.cell == NMT_CELL_RNN) {
            for (int k = 0; k < H; k++) {
                dg[k] = dhb[k] * (1 - g[k] * g[k]);
                dhp[k] = 0;
            }
        } else if (sh.cell == NMT_CELL_LSTM) {
            lstm_row_backward(dg, d->dc_prev + (size_t)b * H, dhp, dhb, d->dc + (size_t)b * H, g,
                              st->c + (size_t)b * H, st->c_prev + (size_t)b * H, H);
        } else {
            const real *u = st->hh + (size_t)b * GH, *hp = st->h_prev + (size_t)b * sh.ldh;
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

/* ---- the rows spread over the pool's threads ---- */

/* Rows are independent; a chunk is a block of them. Below this many rows a
 * step is not worth handing over. */
#define CELL_MIN_ROWS 16

/* A step's job: the step (and for the backward its gradients) and its
 * shape; each chunk works on a block of rows. */
typedef struct cell_job {
    const cell_step *step;
    const cell_grads *grads;
    cell_shape shape;
} cell_job;

static int cell_chunks(int B)
{
    return pool_chunks((size_t)B, CELL_MIN_ROWS);
}

#define ROWS(p, lo, width) ((p) ? (p) + (size_t)(lo) * (width) : NULL)

/* The rows lo .. hi-1 of a step, its gradients and its shape. */
static cell_shape shape_rows(cell_shape sh, int lo, int hi)
{
    sh.B = hi - lo;
    return sh;
}

static cell_step step_rows(const cell_step *s, cell_shape sh, int lo)
{
    int GH = cell_gates(sh.cell) * sh.H;
    return (cell_step){.gates = ROWS(s->gates, lo, GH), .hh = ROWS(s->hh, lo, GH),
                       .h_prev = ROWS(s->h_prev, lo, sh.ldh), .c_prev = ROWS(s->c_prev, lo, sh.H),
                       .h = ROWS(s->h, lo, sh.ldh), .c = ROWS(s->c, lo, sh.H),
                       .active = s->active + lo};
}

static cell_grads grads_rows(const cell_grads *d, cell_shape sh, int lo)
{
    int GH = cell_gates(sh.cell) * sh.H;
    return (cell_grads){.dh = ROWS(d->dh, lo, sh.H), .dc = ROWS(d->dc, lo, sh.H),
                        .dgates = ROWS(d->dgates, lo, GH), .dhh = ROWS(d->dhh, lo, GH),
                        .dh_prev = ROWS(d->dh_prev, lo, sh.H),
                        .dc_prev = ROWS(d->dc_prev, lo, sh.H)};
}

static void cell_forward_chunk(void *arg, int chunk, int n_chunks)
{
    const cell_job *j = arg;
    int lo, hi;
    pool_chunk_range(j->shape.B, 1, chunk, n_chunks, &lo, &hi);
    cell_step rows = step_rows(j->step, j->shape, lo);
    cell_forward_rows(&rows, shape_rows(j->shape, lo, hi));
}

void nmt_cell_forward(const cell_step *step, cell_shape shape)
{
    cell_job j = {.step = step, .shape = shape};
    nmt_pool_run(cell_forward_chunk, &j, cell_chunks(shape.B));
}

static void cell_backward_chunk(void *arg, int chunk, int n_chunks)
{
    const cell_job *j = arg;
    int lo, hi;
    pool_chunk_range(j->shape.B, 1, chunk, n_chunks, &lo, &hi);
    cell_step rows = step_rows(j->step, j->shape, lo);
    cell_grads grads = grads_rows(j->grads, j->shape, lo);
    cell_backward_rows(&grads, &rows, shape_rows(j->shape, lo, hi));
}

void nmt_cell_backward(const cell_grads *grads, const cell_step *step, cell_shape shape)
{
    cell_job j = {.step = step, .grads = grads, .shape = shape};
    nmt_pool_run(cell_backward_chunk, &j, cell_chunks(shape.B));
}
