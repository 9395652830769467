/* Internal: what every architecture's training workspace shares (its first
 * member): the batch's sizes, the output layer with the loss, and the
 * check that a backward follows a forward of the same batch.
 *
 * The pass of nmt/model.h is the same for every architecture (pass.c):
 * the architecture's forward fills the output layer's input, the output
 * layer makes the loss (and, when training, the gradient of its input), and
 * the architecture's backward goes on from that gradient. */
#ifndef NMT_WORKSPACE_H
#define NMT_WORKSPACE_H

#include "model/arch.h"
#include "model/layers.h"

/* The vocabulary projection p = softmax(W x + b) of a batch's N = Tt * B
 * rows and their loss. It runs over chunks of `rows` rows (whole steps), so
 * that only [rows, Vt] logits are ever held, not [Tt, B, Vt]; when asked for
 * the gradient it turns each chunk's logits into their gradient at once and
 * hands the chunk's input gradient to the architecture (sink). */
typedef struct output_layer {
    int K, Vt;              /* the input width, the vocabulary */
    int rows;               /* rows per chunk: whole steps of the widest batch */
    /* set by the architecture's forward: */
    const real *W, *b;      /* [Vt, K], [Vt]: out.W (or tgt_emb when tied), out.b */
    real *dW, *db;          /* their gradients (training) */
    const real *in;         /* [N, K] the rows' inputs (time-major) */
    const unsigned char *mask; /* [N, K] dropout on in, or NULL */
    real keep;              /* 1 / (1 - rate) when mask */
    /* dx [rows, K] of rows r0 .. r0+rows-1 (the gradient of in, through the
     * dropout) goes to sink(ctx, dx, r0, rows), chunk by chunk */
    void (*sink)(void *ctx, const real *dx, size_t r0, int rows);
    void *sink_ctx;
    /* scratch of one chunk */
    real *logits;           /* [rows, Vt] */
    real *chunk_in, *chunk_dx; /* [rows, K] */
    real *logp, *logp_mean; /* [rows] log p of the targets, mean log p (smoothing) */
} output_layer;

struct nmt_workspace {
    const nmt_arch_ops *ops;
    int max_B, max_Ts, max_Tt;
    int B, Ts, Tt;                  /* of the last forward */
    unsigned char *tgt_active;      /* [max_Tt, max_B]: t < tgt_len[b] */
    output_layer out;
    /* the loss of the last forward */
    real smoothing;                 /* label smoothing e of its regularizer */
    double n_tokens;                /* real target tokens */
    double objective;               /* the mean loss its gradient is of */
    double *nll;                    /* [max_B] per sentence */
    /* guided alignment (nmt_regularizer.guided), set by the architecture's
     * forward: the sum over the gold rows of -sum_j p_j log alpha_j, and
     * the rows; both 0 without guidance */
    double guided, guided_rows;
    /* nmt_backward takes the gradient of the last nmt_forward, once: the
     * batch it was of, or NULL when there is none to take */
    const nmt_batch *forward_batch;
};

/* The shared part of a workspace for an architecture whose output layer
 * reads K-wide rows: allocates it (nmt_workspace_base_free frees it), or,
 * with ws NULL, adds its bytes to *bytes. */
int nmt_workspace_base_init(nmt_workspace *ws, const nmt_arch_ops *ops, int K, int Vt,
                            int max_B, int max_Ts, int max_Tt, double *bytes);
void nmt_workspace_base_free(nmt_workspace *ws);

/* The loss of the last forward's rows through the output layer: returns the
 * summed -log p, adds each sentence's to nll [B] and the summed objective
 * (the loss the gradient is of: with label smoothing e, (1 - e)(-log p[y])
 * + e * mean_k(-log p[k])) to *objective, each if not NULL. With grad, also
 * adds the layer's share into dW and db and hands each chunk's input
 * gradient to the sink. The loss is the same bits either way. */
double nmt_output_loss(nmt_workspace *ws, const nmt_batch *batch, int grad, double *nll,
                       double *objective);

#endif
