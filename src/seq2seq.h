/* Internal: the workspace of the training pass and the pieces of it that the
 * inference pass reuses (the encoder, the decoder step), so that training and
 * decoding compute the same numbers with the same code. */
#ifndef NMT_SEQ2SEQ_H
#define NMT_SEQ2SEQ_H

#include "layers.h"

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
                           * hidden states are kept in enc (seq2seq.c) */
    real *dgates, *dhh;   /* [GRAD_WINDOW, B, G*H], step t in slot t % GRAD_WINDOW
                           * (dhh == dgates unless GRU) */
} enc_direction;

struct nmt_workspace {
    int max_B, max_Ts, max_Tt;
    int training;           /* 0: encoding for inference only (infer.c) */
    int B, Ts, Tt;          /* of the last forward */
    int G, E, H, D, A, O, Vt;
    nmt_cell cell;
    nmt_attention att_kind;
    int attention;          /* any kind but none */
    int att_query_proj;     /* the query is W_a s (bahdanau, scaled-dot), else s */
    int att_key_proj;       /* the keys are uh = U_a h_j (+ b_a), else (dot) ann */
    /* the last forward's regularizer: which dropouts it used (their rates
     * as keep = 1 / (1 - rate)) and its label smoothing */
    int drop_emb, drop_enc, drop_out;
    real keep_emb, keep_enc, keep_out;
    real smoothing;
    double objective;       /* the mean loss its gradient is of */
    double n_tokens;

    unsigned char *src_active, *tgt_active; /* [Ts, B], [Tt, B] */
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
    real *t;                                /* [Tt, B, O] */
    unsigned char *t_mask;                  /* [Tt, B, O] dropout mask */
    /* The vocabulary projection runs over chunks of out_rows rows (whole
     * steps), so that only [out_rows, Vt] logits are ever held, not
     * [Tt, B, Vt]. nmt_forward_backward turns each chunk into its gradient
     * during the forward (added to the out.W and out.b gradients); after a
     * plain nmt_forward, nmt_backward recomputes the chunks with the same
     * operations in the same order, so both give identical bits. Either way,
     * once a chunk's gradient is known its rows of t are overwritten with the
     * gradient of the deep output's pre-activation (t is not needed any
     * more): no [Tt, B, O] gradient is held. */
    int out_rows;
    int output_grad_done;                   /* the last forward did it */
    int backward_ready;                     /* a forward's state, not yet used */
    const nmt_batch *forward_batch;         /* the batch that forward was of */
    real *logits;                           /* [out_rows, Vt] */
    real *chunk_in, *chunk_dt;              /* [out_rows, O]: the dropped-out
                                             * input and the gradient of a chunk */
    real *chunk_logp;                       /* [out_rows] log p of the targets */
    real *chunk_logp_mean;                  /* [out_rows] mean log p over the
                                             * vocabulary (label smoothing) */
    real *dh[2], *dc[2];                    /* [B, H] carried gradients */
    double *nll;                            /* [B] */
    real *block;                            /* the one allocation */
};

/* nmt_workspace_create; training 0 makes a workspace that only encodes (for
 * the inference pass), without what a backward would need. */
int nmt_workspace_alloc(nmt_workspace **out, const nmt_model *m, int max_B, int max_src_T,
                     int max_tgt_T, int training);

/* Encodes ws->src_x (already embedded, [Ts, B, E]) with ws->src_active set
 * and sentence lengths len [B]: fills dir[], enc, ann (with annotation
 * dropout when ws->drop_enc, whose mask is drawn already), z, uh (the keys
 * of an attention that projects them) and s[0], s_cell[0] = s_0, c_0. */
void nmt_seq2seq_encode(const nmt_model *m, nmt_workspace *ws, const int *len, int B, int Ts);
/* The attention's keys [Ts, B, A] of the last encoding: uh, or for dot ann. */
static inline const real *att_keys(const nmt_workspace *ws)
{
    return ws->att_key_proj ? ws->uh : ws->ann;
}

/* The attention layer over the last encoding: what it reads of ws and, with
 * g (the gradients; training), where its gradients go. */
attention_layer nmt_seq2seq_attention(const nmt_workspace *ws, const weights *w, const weights *g);

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
                          const nmt_workspace *enc);

/* nmt_infer_step without its last pass over the vocabulary: the rows'
 * logits [R, Vt] are returned (valid until the next step) and *lse [R] gets
 * each row's log-sum-exp, so that log p of token v in row r is
 * logits[r * Vt + v] - lse[r], the very bits nmt_infer_step writes. The beam
 * search computes it only for the tokens it looks at, rather than writing
 * and copying [R, Vt] log-probabilities every step. */
const float *nmt_infer_step_logits(const nmt_model *m, nmt_infer *st, const int32_t *prev,
                               float *att, const float **lse);

/* NMT_OK when the log-sum-exps lse[0..R) of a step are all finite, else
 * NMT_ERR_NUMERIC with a message: a row's is NaN or Inf when one of its
 * logits is NaN or +Inf (or all are -Inf), that is when the model's weights
 * are not numbers or so large that the pass overflowed. */
int nmt_infer_check_finite(const float *lse, int R);

#endif
