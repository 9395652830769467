/* Internal: the layers of the model as forward/backward pairs (llm.c style:
 * outputs first, sizes last), and the one matrix product they all use.
 *
 * Everything is written against `real` (float, or double when compiled with
 * -DNMT_REAL_DOUBLE for the gradient check) so that the checked code is the
 * shipped code. Layouts are time-major and row-major: element (t, b, k) of a
 * [T, B, K] array is at (t * B + b) * K + k. A row is "active" at step t
 * while t < its length; inactive rows keep their state unchanged. */
#ifndef NMT_LAYERS_H
#define NMT_LAYERS_H

#include <cblas.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "nmt/model.h"

typedef nmt_real real;

#ifdef NMT_REAL_DOUBLE
#define NMT_GEMM cblas_dgemm
#define R_EXP exp
#define R_TANH tanh
#define R_LOG log
#else
#define NMT_GEMM cblas_sgemm
#define R_EXP expf
#define R_TANH tanhf
#define R_LOG logf
#endif

/* C[M,N] = alpha * op(A) op(B) + beta * C, row-major; ta/tb say whether A
 * ([K,M] instead of [M,K]) and B ([N,K] instead of [K,N]) are transposed. */
static inline void gemm(int ta, int tb, int M, int N, int K, real alpha,
                        const real *A, int lda, const real *B, int ldb, real beta,
                        real *C, int ldc)
{
    if (M <= 0 || N <= 0)
        return;
    NMT_GEMM(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
             M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

static inline real sigmoid(real x)
{
    return (real)1 / ((real)1 + R_EXP(-x));
}

/* out[N, n_out] (=, or += when accumulate) in[N, n_in] . W^T, plus bias[n_out]
 * if given. W is [n_out, n_in] with row stride ldw (>= n_in), so a block of
 * columns of a wider matrix can be used. */
void linear_forward(real *out, const real *in, const real *W, const real *bias,
                    int N, int n_in, int n_out, int ldw, int accumulate);
/* The gradients of linear_forward, each added to (NULL to skip):
 * din[N, n_in] += dout . W; dW[n_out, n_in] (row stride ldw) += dout^T . in;
 * dbias[n_out] += column sums of dout. */
void linear_backward(real *din, real *dW, real *dbias, const real *dout, const real *in,
                     const real *W, int N, int n_in, int n_out, int ldw);

/* ---- embed.c ---- */
/* out[T*B, E] = table[ids] (pad positions too: they are never read as data). */
void embed_forward(real *out, const int32_t *ids, const real *table, int n, int E);
/* dtable[ids[p]] += dout[p] for the real positions p (t < len[b]) only. */
void embed_backward(real *dtable, const real *dout, const int32_t *ids, const int *len,
                    int T, int B, int E);
/* Inverted dropout: mask[n] drawn from rng (0 or 1/(1-p)), x *= mask. */
void dropout_forward(real *x, real *mask, nmt_rng *rng, real p, size_t n);
void dropout_backward(real *dx, const real *mask, size_t n);

/* ---- cell.c ---- */
/* One step of a batch of B rows. `gates` [B, G*H] holds W_ih x + b on entry
 * and the activated gates on exit; `hh` [B, G*H] is W_hh h_prev (kept: the
 * GRU backward needs U_n h). Rows with active[b] == 0 copy h_prev and c_prev
 * (c only for LSTM; c may be NULL otherwise). */
void cell_forward(real *h, real *c, real *gates, const real *hh, const real *h_prev,
                  const real *c_prev, const unsigned char *active, nmt_cell cell, int B,
                  int H);
/* Backward of cell_forward given dh [B, H] (and dc [B, H] for LSTM, consumed).
 * Writes dgates [B, G*H] (gradient of W_ih x + b), dhh [B, G*H] (gradient of
 * W_hh h_prev; may alias dgates for rnn and lstm), dh_prev [B, H] without the
 * W_hh term (the caller adds dhh . W_hh), and dc_prev [B, H]. Inactive rows
 * pass dh and dc straight through. */
void cell_backward(real *dgates, real *dhh, real *dh_prev, real *dc_prev, const real *dh,
                   const real *dc, const real *gates, const real *hh, const real *h_prev,
                   const real *c, const real *c_prev, const unsigned char *active,
                   nmt_cell cell, int B, int H);
static inline int cell_gates(nmt_cell cell)
{
    return cell == NMT_CELL_LSTM ? 4 : cell == NMT_CELL_GRU ? 3 : 1;
}

/* ---- attention.c ---- */
/* One Bahdanau step for R rows. Row r attends source src_of[r] (identity if
 * NULL) of the encoded batch: enc [T, B, DH], uh [T, B, A] = U_a h_j + b_a,
 * length len[src]. ws [R, A] = W_a s_prev must be computed by the caller.
 * Writes alpha [R, T] (0 past the length) and ctx [R, DH]. */
void attention_forward(real *ctx, real *alpha, const real *ws, const real *uh,
                       const real *enc, const real *v, const int *len, const int *src_of,
                       int R, int B, int T, int A, int DH);
/* Backward: given dctx [R, DH], adds to denc [T, B, DH], duh [T, B, A], dv [A]
 * and writes dws [R, A] (the caller turns it into dW_a and ds_prev). */
void attention_backward(real *dws, real *duh, real *denc, real *dv, const real *dctx,
                        const real *alpha, const real *ws, const real *uh, const real *enc,
                        const real *v, const int *len, int R, int B, int T, int A, int DH);

/* ---- output.c ---- */
/* Deep output t[N, O] = tanh(W_t [s ; c ; e] + b_t), as three products with
 * column blocks of W_t [O, H + DH + E]. */
void deep_output_forward(real *t, const real *s, const real *c, const real *e,
                         const real *W_t, const real *b_t, int N, int H, int DH, int E,
                         int O);
/* dt [N, O] is turned into the pre-activation gradient in place; adds to
 * dW_t, db_t, and writes ds [N, H], dc [N, DH], de [N, E] (accumulate into
 * them when accumulate != 0). */
void deep_output_backward(real *ds, real *dc, real *de, real *dW_t, real *db_t, real *dt,
                          const real *t, const real *s, const real *c, const real *e,
                          const real *W_t, int N, int H, int DH, int E, int O,
                          int accumulate);
/* In place: logits [N, V] become log-probabilities (every row). */
void log_softmax_forward(real *x, int N, int V);
/* Softmax cross-entropy with a padding mask: logits [N, V] become
 * log-probabilities; returns the summed -log p[target] over rows with
 * active[n]; nll[n % B] (double) gets each row's share when nll != NULL. */
double cross_entropy_forward(real *logits, const int32_t *target, const unsigned char *active,
                             double *nll, int N, int B, int V);
/* dlogits [N, V] = scale * (p - onehot) on active rows, 0 elsewhere; in place
 * over the log-probabilities that cross_entropy_forward left. */
void cross_entropy_backward(real *logp, const int32_t *target, const unsigned char *active,
                            real scale, int N, int V);

#endif
