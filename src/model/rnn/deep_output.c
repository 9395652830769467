/* The RNN's deep output t = tanh(W_t [s ; c ; e] + b_t): the layer between
 * the decoder state and the vocabulary projection. Every product runs over
 * all N = T*B rows at once. */
#include <string.h>

#include "base/pool.h"
#include "model/rnn/rnn_layers.h"

/* Element-wise passes are cut into chunks of at least this many elements. */
#define MIN_CHUNK 16384

typedef struct tanh_job {
    real *x;
    int N, V;
} tanh_job;

/* x = tanh(x) over a chunk of N * V elements */
static void tanh_chunk(void *arg, int c, int n)
{
    const tanh_job *j = arg;
    int lo, hi;
    pool_chunk_range(j->N, 1, c, n, &lo, &hi);
    for (size_t i = (size_t)lo * j->V; i < (size_t)hi * j->V; i++)
        j->x[i] = fast_tanh(j->x[i]);
}

void nmt_deep_output_forward(real *t, const deep_output *L, int N)
{
    /* t: [N, O]; W_t's column blocks read s, c and e in turn */
    int ld = L->H + L->DH + L->E, O = L->O;
    nmt_linear_forward(t, L->s, L->W_t, L->b_t, N, L->H, O, ld, 0);
    nmt_linear_forward(t, L->c, L->W_t + L->H, NULL, N, L->DH, O, ld, 1);
    nmt_linear_forward(t, L->e, L->W_t + L->H + L->DH, NULL, N, L->E, O, ld, 1);
    tanh_job j = {.x = t, .N = N, .V = O};
    nmt_pool_run(tanh_chunk, &j, pool_chunks((size_t)N * O, MIN_CHUNK));
}

void nmt_deep_output_backward(const deep_output_grads *g, const real *dpre, const deep_output *L,
                              int N)
{
    /* dpre: [N, O] */
    int ld = L->H + L->DH + L->E, O = L->O, H = L->H, DH = L->DH, E = L->E;
    memset(g->ds, 0, (size_t)N * H * sizeof *g->ds);
    memset(g->dc, 0, (size_t)N * DH * sizeof *g->dc);
    memset(g->de, 0, (size_t)N * E * sizeof *g->de);
    nmt_linear_backward(g->ds, g->dW_t, g->db_t, dpre, L->s, L->W_t, N, H, O, ld);
    nmt_linear_backward(g->dc, g->dW_t + H, NULL, dpre, L->c, L->W_t + H, N, DH, O, ld);
    nmt_linear_backward(g->de, g->dW_t + H + DH, NULL, dpre, L->e, L->W_t + H + DH, N, E, O, ld);
}
