/* One time step of an RNN, GRU or LSTM cell over a batch, forward and
 * backward. The products (W_ih x for all steps, W_hh h_prev per step) are
 * done by the caller with one sgemm each; this file is the fused, element-wise
 * part: gate nonlinearities, state update, and padding (inactive rows keep
 * their state). */
#include <string.h>

#include "layers.h"
#include "pool.h"

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

static void cell_forward_rows(real *h, real *c, real *gates, const real *hh, const real *h_prev,
                              const real *c_prev, const unsigned char *active, nmt_cell cell,
                              int B, int H, int ldh)
{
    /* h, h_prev: [B, H] with row stride ldh; c, c_prev: [B, H]; gates, hh: [B, G*H] */
    int GH = cell_gates(cell) * H;
    for (int b = 0; b < B; b++) {
        real *hb = h + (size_t)b * ldh;
        const real *hp = h_prev + (size_t)b * ldh;
        if (!active[b]) {
            memcpy(hb, hp, (size_t)H * sizeof *hb);
            if (cell == NMT_CELL_LSTM)
                memcpy(c + (size_t)b * H, c_prev + (size_t)b * H, (size_t)H * sizeof *c);
            continue;
        }
        real *g = gates + (size_t)b * GH;
        const real *u = hh + (size_t)b * GH;
        if (cell == NMT_CELL_RNN)
            rnn_row(hb, g, u, H);
        else if (cell == NMT_CELL_LSTM)
            lstm_row(hb, c + (size_t)b * H, g, u, c_prev + (size_t)b * H, H);
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

static void cell_backward_rows(real *dgates, real *dhh, real *dh_prev, real *dc_prev,
                               const real *dh, const real *dc, const real *gates, const real *hh,
                               const real *h_prev, const real *c, const real *c_prev,
                               const unsigned char *active, nmt_cell cell, int B, int H, int ldh)
{
    /* dgates, dhh, gates, hh: [B, G*H]; the rest [B, H] */
    int GH = cell_gates(cell) * H;
    for (int b = 0; b < B; b++) {
        real *dg = dgates + (size_t)b * GH;
        real *du = dhh + (size_t)b * GH;
        real *dhp = dh_prev + (size_t)b * H;
        const real *dhb = dh + (size_t)b * H;
        if (!active[b]) {
            /* The state was copied: so is its gradient. */
            memset(dg, 0, (size_t)GH * sizeof *dg);
            if (du != dg)
                memset(du, 0, (size_t)GH * sizeof *du);
            memcpy(dhp, dhb, (size_t)H * sizeof *dhp);
            if (cell == NMT_CELL_LSTM)
                memcpy(dc_prev + (size_t)b * H, dc + (size_t)b * H, (size_t)H * sizeof *dc);
            continue;
        }
        const real *g = gates + (size_t)b * GH;
        if (cell == NMT_CELL_RNN) {
            for (int k = 0; k < H; k++) {
                dg[k] = dhb[k] * (1 - g[k] * g[k]);
                dhp[k] = 0;
            }
        } else if (cell == NMT_CELL_LSTM) {
            lstm_row_backward(dg, dc_prev + (size_t)b * H, dhp, dhb, dc + (size_t)b * H, g,
                              c + (size_t)b * H, c_prev + (size_t)b * H, H);
        } else {
            const real *u = hh + (size_t)b * GH, *hp = h_prev + (size_t)b * ldh;
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

typedef struct cell_job {
    real *h, *c, *gates, *dgates, *dhh, *dh_prev, *dc_prev;
    const real *hh, *h_prev, *c_prev, *dh, *dc, *c_now, *gates_in; /* gates_in: backward */
    const unsigned char *active;
    nmt_cell cell;
    int B, H, ldh;
} cell_job;

static int cell_chunks(int B)
{
    return pool_chunks((size_t)B, CELL_MIN_ROWS);
}

#define ROWS(p, lo, width) ((p) ? (p) + (size_t)(lo) * (width) : NULL)

static void cell_forward_chunk(void *arg, int chunk, int n_chunks)
{
    const cell_job *j = arg;
    int lo, hi, H = j->H, GH = cell_gates(j->cell) * H;
    pool_chunk_range(j->B, 1, chunk, n_chunks, &lo, &hi);
    cell_forward_rows(ROWS(j->h, lo, j->ldh), ROWS(j->c, lo, H), ROWS(j->gates, lo, GH),
                      ROWS(j->hh, lo, GH), ROWS(j->h_prev, lo, j->ldh), ROWS(j->c_prev, lo, H),
                      j->active + lo, j->cell, hi - lo, H, j->ldh);
}

void cell_forward(real *h, real *c, real *gates, const real *hh, const real *h_prev,
                  const real *c_prev, const unsigned char *active, nmt_cell cell, int B,
                  int H, int ldh)
{
    cell_job j = {.h = h, .c = c, .gates = gates, .hh = hh, .h_prev = h_prev,
                  .c_prev = c_prev, .active = active, .cell = cell, .B = B, .H = H, .ldh = ldh};
    pool_run(cell_forward_chunk, &j, cell_chunks(B));
}

static void cell_backward_chunk(void *arg, int chunk, int n_chunks)
{
    const cell_job *j = arg;
    int lo, hi, H = j->H, GH = cell_gates(j->cell) * H;
    pool_chunk_range(j->B, 1, chunk, n_chunks, &lo, &hi);
    cell_backward_rows(ROWS(j->dgates, lo, GH), ROWS(j->dhh, lo, GH), ROWS(j->dh_prev, lo, H),
                       ROWS(j->dc_prev, lo, H), ROWS(j->dh, lo, H), ROWS(j->dc, lo, H),
                       ROWS(j->gates_in, lo, GH), ROWS(j->hh, lo, GH),
                       ROWS(j->h_prev, lo, j->ldh), ROWS(j->c_now, lo, H), ROWS(j->c_prev, lo, H),
                       j->active + lo, j->cell, hi - lo, H, j->ldh);
}

void cell_backward(real *dgates, real *dhh, real *dh_prev, real *dc_prev, const real *dh,
                   const real *dc, const real *gates, const real *hh, const real *h_prev,
                   const real *c, const real *c_prev, const unsigned char *active,
                   nmt_cell cell, int B, int H, int ldh)
{
    cell_job j = {.dgates = dgates, .dhh = dhh, .dh_prev = dh_prev, .dc_prev = dc_prev,
                  .dh = dh, .dc = dc, .gates_in = gates, .hh = hh, .h_prev = h_prev,
                  .c_now = c, .c_prev = c_prev, .active = active, .cell = cell, .B = B, .H = H,
                  .ldh = ldh};
    pool_run(cell_backward_chunk, &j, cell_chunks(B));
}
