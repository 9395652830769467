/* Internal: the RNN encoder-decoder: its view of the parameters, the
 * workspace of the training pass (rnn_pass.c) and the pieces of it that the
 * inference pass (rnn_infer.c) reuses (the encoder, the decoder step), so
 * that training and decoding compute the same numbers with the same code. */
#ifndef NMT_RNN_PASS_H
#define NMT_RNN_PASS_H

#include "model/rnn/rnn_layers.h"
#include "model/workspace.h"

/* Pointers to each tensor of a parameter (or gradient) allocation. With tied
 * embeddings out_W is tgt_emb: the projection reads the embedding table and
 * adds its gradient into the table's. */
typedef struct weights {
    real *src_emb;      /* [Vs, E] */
    real *tgt_emb;      /* [Vt, E] */
    real *enc_W_ih[2];  /* [G*H, E]   [0] the forward direction, [1] the backward */
    real *enc_W_hh[2];  /* [G*H, H] */
    real *enc_b[2];     /* [G*H] */
    real *init_W;       /* [H, D*H]   s_0 = tanh(W_init z + b_init) */
    real *init_b;       /* [H] */
    real *att_W;        /* [A, H]     the query's projection (bahdanau, scaled-dot) */
    real *att_U;        /* [K, D*H]   the keys' (K = A; general: K = H) */
    real *att_b;        /* [A]        bahdanau's */
    real *att_v;        /* [A]        bahdanau's */
    real *dec_W_ih;     /* [G*H, E + D*H] column blocks [embedding | context] */
    real *dec_W_hh;     /* [G*H, H] */
    real *dec_b;        /* [G*H] */
    real *out_W_t;      /* [O, H + D*H + E] column blocks [s | c | embedding] */
    real *out_b_t;      /* [O] */
    real *out_W;        /* [Vt, O]    tied: tgt_emb itself (O = E) */
    real *out_b;        /* [Vt] */
} weights;
void nmt_weights_resolve(weights *w, const nmt_model *m, real *base);

/* The model's named pointers (m->arch), resolved once by rnn_bind whenever
 * the parameters or the gradients move: w into params, g into grads (all
 * NULL until the model has gradients). */
typedef struct rnn_model {
    weights w, g;
} rnn_model;
static inline const weights *rnn_weights(const nmt_model *m)
{
    return &((const rnn_model *)m->arch)->w;
}
static inline const weights *rnn_grads(const nmt_model *m)
{
    return &((const rnn_model *)m->arch)->g;
}

/* The tensor name behind each field of weights, in the struct's order, so
 * that a test can check that the two stay one to one. */
typedef struct weight_field {
    const char *name;
    size_t offset;      /* of the field in weights */
} weight_field;
extern const weight_field nmt_weight_fields[];
extern const int nmt_n_weight_fields;

/* One direction of the encoder: everything its backward needs. */
typedef struct enc_direction {
    real *gates;          /* [T, B, G*H] activated gates */
    real *hh;             /* W_hh h_prev: [T, B, G*H] for GRU (its backward
                           * needs U_n h), else one step's [B, G*H] */
    real *c;              /* [T+1, B, H] cell states (LSTM only); the
                           * hidden states are kept in enc (rnn_pass.c) */
    real *dgates, *dhh;   /* [GRAD_WINDOW, B, G*H], step t in slot t % GRAD_WINDOW
                           * (dhh == dgates unless GRU) */
} enc_direction;

typedef struct rnn_workspace {
    nmt_workspace base;     /* what every architecture's workspace shares
                             * (the output layer reads t); unused by an
                             * inference workspace */
    int max_B, max_Ts, max_Tt;
    int training;           /* 0: encoding for inference only (rnn_infer.c) */
    int B, Ts, Tt;          /* of the last forward (or encoding) */
    int G, E, H, D, A, O, Vt;
    nmt_cell cell;
    nmt_attention att_kind;
    int attention;          /* any kind but none */
    int att_query_proj;     /* the query is W_a s (bahdanau, scaled-dot), else s */
    int att_key_proj;       /* the keys are uh = U_a h_j (+ b_a), else (dot) ann */
    /* the last forward's regularizer: which dropouts it used (their rates
     * as keep = 1 / (1 - rate)) */
    int drop_emb, drop_enc, drop_out;
    real keep_emb, keep_enc, keep_out;

    unsigned char *src_active;              /* [Ts, B] (the target's is base.tgt_active) */
    unsigned char *src_mask;                /* [Ts, B, E] dropout mask */
    real *src_x, *dsrc_x;                   /* [Ts, B, E]; src_x and dsrc_x
                                             * share the decoder gates' memory:
                                             * src_x is read only by the
                                             * encoder's input products, before
                                             * the decoder runs, and dsrc_x is
                                             * written only after its backward */
    enc_direction dir[2];
    const int *src_len;                     /* [B] of the last encoding (not owned) */
    real *enc, *denc;                       /* [Ts, B, D*H]; enc has a row of
                                             * padding before and after */
    /* The annotations as the attention, the context and z read them: enc
     * itself, or with annotation dropout a dropped-out copy in ann_buf
     * (training workspaces only: the encoder's backward needs its states
     * undropped), and its mask. denc is their gradient. */
    real *ann, *ann_buf;                    /* [Ts, B, D*H] */
    unsigned char *enc_mask;                /* [Ts, B, D*H] */
    /* The attention's keys and their gradient, [Ts, B, A] where A is the
     * width of the kind's query and keys (att_key_size: att_dim, or H);
     * empty for dot, whose keys are ann itself (and their gradient denc). */
    real *uh, *duh;
    real *z, *dz;                           /* [B, D*H] */

    real *s;                                /* [Tt+1, B, H] the decoder's states s_i */
    real *s_cell;                           /* [Tt+1, B, H] its LSTM cell states */
    unsigned char *tgt_mask;                /* [Tt, B, E] dropout mask */
    /* The decoder runs in windows of GRAD_WINDOW steps, forward and
     * backward, and what only its products need is held for one window:
     * the target embeddings (looked up again from the ids), the context
     * vectors (recomputed from alpha) and W_a s (recomputed from s). The
     * backward recomputes them for its window (and the encoder's backward
     * looks up its window of source embeddings into e_win): keeping
     * [Tt, B, E + D*H + A] instead would cost 4 KB per target word. */
    real *e_win;                            /* [GRAD_WINDOW, B, E] */
    real *ctx_win;                          /* [GRAD_WINDOW, B, D*H] */
    real *wa_s_win;                           /* [GRAD_WINDOW, B, A]; when
                                             * att_query_proj */
    /* The gradients of the decoder's per-step inputs, kept for one window: */
    real *dtgt_x;                           /* [GRAD_WINDOW, B, E] */
    real *dctx;                             /* [GRAD_WINDOW, B, D*H] */
    real *ds_out;                           /* [GRAD_WINDOW, B, H] */
    real *gates;                            /* [Tt, B, G*H] (see src_x) */
    real *dgates, *dhh;                     /* as in enc_direction */
    real *hh;                               /* as in enc_direction */
    real *dwa_s;                              /* [GRAD_WINDOW, B, A], as dgates:
                                             * the queries' gradient */
    real *dv_part;                          /* [ATT_BACKWARD_CHUNKS, A] */
    real *alpha;                            /* [Tt, B, Ts] */
    /* The deep output of every step: the output layer's input (base.out).
     * Once the output layer has made a chunk's gradient, the chunk's rows of
     * t are overwritten with the gradient of the deep output's
     * pre-activation (t is not needed any more): no [Tt, B, O] gradient is
     * held. */
    real *t;                                /* [Tt, B, O] */
    unsigned char *t_mask;                  /* [Tt, B, O] dropout mask */
    real *dh[2], *dc[2];                    /* [B, H] carried gradients */
    real *block;                            /* the one allocation */
} rnn_workspace;

/* A workspace for batches up to these sizes; training 0 makes one that only
 * encodes (for the inference pass), without what a backward would need. */
int nmt_rnn_workspace_alloc(rnn_workspace **out, const nmt_model *m, int max_B, int max_src_T,
                        int max_tgt_T, int training);
void nmt_rnn_workspace_free(rnn_workspace *ws);

/* Encodes ws->src_x (already embedded, [Ts, B, E]) with ws->src_active set
 * and sentence lengths len [B]: fills dir[], enc, ann (with annotation
 * dropout when ws->drop_enc, whose mask is drawn already), z, uh (the keys
 * of an attention that projects them) and s[0], s_cell[0] = s_0, c_0. */
void nmt_rnn_encode(const nmt_model *m, rnn_workspace *ws, const int *len, int B, int Ts);
/* The attention's keys [Ts, B, A] of the last encoding: uh, or for dot ann. */
static inline const real *att_keys(const rnn_workspace *ws)
{
    return ws->att_key_proj ? ws->uh : ws->ann;
}

/* The attention layer over the last encoding: what it reads of ws and, with
 * g (the gradients; training), where its gradients go. */
attention_layer nmt_rnn_attention(const rnn_workspace *ws, const weights *w, const weights *g);

/* One decoder step for R rows of an encoded batch (enc). */
typedef struct decoder_step {
    real *gates;                 /* [R, G*H]: W_ih[:, :E] e + b on entry */
    real *hh;                    /* [R, G*H]: W_hh s_prev, written here */
    real *wa_s;                  /* [R, A]: the query W_a s_prev, when the kind projects it */
    real *alpha;                 /* [R, Ts] */
    real *ctx;                   /* [R, D*H]: the context, or z without attention */
    real *s, *c;                 /* [R, H]: the new state (c: LSTM) */
    const real *s_prev, *c_prev; /* [R, H] */
    const unsigned char *active; /* [R] */
    const int *src_of;           /* [R]: the source of each row (NULL: row r reads r) */
    int R;
} decoder_step;

/* Computes the attention (or copies z into ctx), then the cell. */
void nmt_decoder_step_forward(const decoder_step *st, const nmt_model *m, const weights *w,
                          const rnn_workspace *enc);

/* The pieces the architecture's table of operations (rnn.c) calls from
 * the other files of the folder. */
/* rnn_pass.c: the training pass */
int nmt_rnn_workspace_create(nmt_workspace **out, const nmt_model *m, int max_B, int max_Ts,
                         int max_Tt);
int nmt_rnn_workspace_bytes(const nmt_config *c, int max_B, int max_Ts, int max_Tt, double *bytes);
void nmt_rnn_workspace_destroy(nmt_workspace *ws);
int nmt_rnn_forward(const nmt_model *m, nmt_workspace *ws, const nmt_batch *b,
                const nmt_regularizer *reg, nmt_rng *rng);
void nmt_rnn_backward(nmt_model *m, nmt_workspace *ws, const nmt_batch *b);
/* rnn_infer.c: the inference pass */
void *nmt_rnn_infer_create(const nmt_model *m, int max_B, int max_Ts, int max_rows, int max_steps);
void nmt_rnn_infer_free(void *st);
int nmt_rnn_infer_encode(const nmt_model *m, void *st, const int32_t *src, const int *src_len, int B,
                     int T);
int nmt_rnn_infer_select(void *st, const int *from, int R, int old_R);
const nmt_real *nmt_rnn_infer_step(const nmt_model *m, void *st, const int32_t *prev,
                               const int *row_src, int R, int map, float *att);


#endif
