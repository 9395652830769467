/* Internal: the RNN's own layers as forward/backward pairs (llm.c style:
 * outputs first, sizes last): the recurrent cells, the attention family and
 * the deep output. The layers every architecture shares are model/layers.h's. */
#ifndef NMT_RNN_LAYERS_H
#define NMT_RNN_LAYERS_H

#include "model/layers.h"

/* ---- cell.c ---- */
/* The shape of one recurrent step: B rows of H units, cell_gates(cell) gates
 * each. The states h and h_prev have a row stride of ldh (>= H), so that the
 * encoder writes its states straight into place. */
typedef struct cell_shape {
    nmt_cell cell;
    int B, H, ldh;
} cell_shape;

/* One step's tensors (G = cell_gates(cell)). */
typedef struct cell_step {
    real *gates;                 /* [B, G*H]: W_ih x + b on entry, the activated gates after */
    const real *hh;              /* [B, G*H]: W_hh h_prev (kept: the GRU backward needs U_n h) */
    const real *h_prev;          /* [B, ldh] */
    const real *c_prev;          /* [B, H], LSTM only (else NULL) */
    real *h;                     /* [B, ldh]: the new state */
    real *c;                     /* [B, H], LSTM only: the new cell state */
    const unsigned char *active; /* [B]: 0 for a padded row, which copies its state */
} cell_step;

/* The gradients of one step: dh and dc come in, the rest go out. */
typedef struct cell_grads {
    const real *dh;              /* [B, H] of h */
    const real *dc;              /* [B, H] of c (LSTM), consumed */
    real *dgates;                /* [B, G*H] of W_ih x + b */
    real *dhh;                   /* [B, G*H] of W_hh h_prev; may alias dgates for rnn and lstm */
    real *dh_prev;               /* [B, H] without the W_hh term (the caller adds dhh . W_hh) */
    real *dc_prev;               /* [B, H] (LSTM) */
} cell_grads;

/* One step of rnn/gru/lstm: fills step->h, step->c and the activated gates. */
void nmt_cell_forward(const cell_step *step, cell_shape shape);
/* Its backward, given the step as the forward left it. Inactive rows pass
 * dh and dc straight through. */
void nmt_cell_backward(const cell_grads *grads, const cell_step *step, cell_shape shape);
static inline int cell_gates(nmt_cell cell)
{
    return cell == NMT_CELL_LSTM ? 4 : cell == NMT_CELL_GRU ? 3 : 1;
}

/* ---- attention.c ---- */
/* The scores of the attention family, from the query q_r of row r and key
 * k_j of source position j (K elements each):
 *   bahdanau    v . tanh(q_r + k_j)   q = W_a s, k = U_a h_j + b_a  (K = A)
 *   dot         q_r . k_j             q = s,     k = h_j (keys = enc) (K = H)
 *   general     q_r . k_j             q = s,     k = U_a h_j        (K = H)
 *   scaled-dot  q_r . k_j / sqrt(K)   q = W_a s, k = U_a h_j        (K = A)
 * The caller makes q and the keys (att_query_is_projected, att_keys_are_
 * projected). Positions j >= len of a source get no weight. */

/* The backward sums its rows' shares of dv in this many chunks, whatever the
 * threads, so that the sum has one order. */
#define ATT_BACKWARD_CHUNKS 8

/* What the attention reads of an encoded batch of B sources, and, for the
 * backward, where its gradients go. Made once per pass (nmt_rnn_attention). */
typedef struct attention_layer {
    nmt_attention kind;
    int B, T, K, DH;    /* sources, positions, query/key width, annotation width */
    const real *keys;   /* [T, B, K] */
    const real *enc;    /* [T, B, DH] the annotations h_j */
    const int *len;     /* [B] source lengths */
    const real *v;      /* [K] bahdanau's, else NULL */
    /* training only: */
    real *dkeys;        /* [T, B, K], added to (for dot, denc itself) */
    real *denc;         /* [T, B, DH], added to */
    real *dv;           /* [K] bahdanau's, added to */
    real *dv_part;      /* [ATT_BACKWARD_CHUNKS, K] the backward's scratch: each
                         * chunk's share of dv, summed in chunk order */
} attention_layer;

/* One step for R rows: row r attends source src_of[r] (identity if NULL)
 * with its query q [R, K]. Writes alpha [R, T] (the softmax over j < len, 0
 * past it) and ctx [R, DH] = sum_j alpha_rj h_j. */
void nmt_attention_forward(real *ctx, real *alpha, const attention_layer *L, const real *q,
                       const int *src_of, int R);
/* ctx [R, DH] again from the alpha [R, T] that nmt_attention_forward wrote, for
 * rows that are whole steps of the batch (row r attends source r % B): the
 * same bits as the forward's ctx. Training recomputes ctx in its backward
 * rather than keep [Tt, B, DH] through the whole pass. */
void nmt_attention_context(real *ctx, const attention_layer *L, const real *alpha, int R);
/* Backward, for rows r = source r (training: R = B): given dctx [R, DH],
 * adds to L's dkeys, denc and dv, and writes dq [R, K], the gradient of the
 * query (the caller turns it into dW_a and ds_prev, or adds it to ds_prev). */
void nmt_attention_backward(real *dq, const attention_layer *L, const real *dctx, const real *alpha,
                        const real *q, int R);
/* Where a kind's query and keys come from: W_a s (bahdanau, scaled-dot) or
 * s itself; U_a h_j (all but dot) or h_j itself. */
static inline int att_query_is_projected(nmt_attention kind)
{
    return kind == NMT_ATT_BAHDANAU || kind == NMT_ATT_SCALED_DOT;
}
static inline int att_keys_are_projected(nmt_attention kind)
{
    return kind == NMT_ATT_BAHDANAU || kind == NMT_ATT_GENERAL || kind == NMT_ATT_SCALED_DOT;
}
/* K, the width of a kind's query and keys: A where att_dim sizes them,
 * else the decoder state's H (for dot D*H = H). 0 without attention. */
static inline int att_key_size(const nmt_rnn_config *c)
{
    if (c->attention == NMT_ATT_NONE)
        return 0;
    return nmt_attention_uses_att_dim(c->attention) ? c->att_dim : c->hidden;
}

/* ---- deep_output.c ---- */
/* The deep output t = tanh(W_t [s ; c ; e] + b_t) of N rows: its inputs and
 * weights. W_t's column blocks are read in place (row stride H + DH + E). */
typedef struct deep_output {
    const real *s;            /* [N, H] the decoder states s_i */
    const real *c;            /* [N, DH] the contexts c_i */
    const real *e;            /* [N, E] the embeddings of y_{i-1} */
    const real *W_t, *b_t;    /* [O, H + DH + E], [O] */
    int H, DH, E, O;
} deep_output;
/* Where the backward puts its gradients: ds, dc, de are written, dW_t and
 * db_t added to. */
typedef struct deep_output_grads {
    real *ds, *dc, *de;       /* [N, H], [N, DH], [N, E] */
    real *dW_t, *db_t;        /* [O, H + DH + E], [O] */
} deep_output_grads;
/* t [N, O] */
void nmt_deep_output_forward(real *t, const deep_output *L, int N);
/* Given dpre [N, O], the gradient of the pre-activation W_t [s ; c ; e] + b_t
 * (the caller applies tanh's derivative, chunk by chunk). */
void nmt_deep_output_backward(const deep_output_grads *g, const real *dpre, const deep_output *L,
                              int N);

#endif
