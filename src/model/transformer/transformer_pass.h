/* Internal: the Transformer encoder-decoder of docs/DESIGN.md ("The
 * Transformer") built from the layers of transformer_layers.h: its view of
 * the parameters, the training workspace, and the pieces its table of
 * operations (transformer.c) calls from the other files of the folder: the
 * training pass (transformer_pass.c) and decoding (transformer_infer.c).
 *
 * Activations are batch-major (transformer_layers.h): a batch's [B, T, d]
 * rows are sentence by sentence. The batch's ids (nmt_batch) are time-major
 * and the output layer reads time-major rows, so the ids are turned on
 * entry and the decoder's output on exit. */
#ifndef NMT_TF_PASS_H
#define NMT_TF_PASS_H

#include "model/transformer/transformer_layers.h"
#include "model/workspace.h"

/* One layer's tensors (or their gradients). The encoder's layers have
 * ln1, self, ln2 and the feed-forward network; the decoder's have ln1,
 * self, ln2, cross, ln3 and the feed-forward network. */
typedef struct tf_layer {
    real *ln1_g, *ln1_b, *ln2_g, *ln2_b, *ln3_g, *ln3_b; /* [d] each; ScaleNorm: g [1], b NULL */
    tf_mha_params self, cross;
    real *W_1, *b_1, *W_2, *b_2;  /* [F, d], [F], [d, F], [d] */
} tf_layer;

typedef struct tf_weights {
    real *src_emb, *tgt_emb;      /* [Vs, d], [Vt, d]; a joint vocabulary: both tgt_emb */
    tf_layer *enc, *dec;          /* [L_e], [L_d] (into tf_model.layers) */
    real *enc_ln_g, *enc_ln_b;    /* [d] */
    real *dec_ln_g, *dec_ln_b;    /* [d] */
    real *out_W, *out_b;          /* [Vt, d] (tgt_emb when tied), [Vt] */
} tf_weights;

/* The model's own state (m->arch): the named pointers into the parameters
 * and the gradients, bound once whenever either moves. */
typedef struct tf_model {
    tf_weights w, g;
    tf_layer *layers;             /* [2 (L_e + L_d)]: w's then g's */
} tf_model;

static inline const tf_weights *tf_params(const nmt_model *m)
{
    return &((const tf_model *)m->arch)->w;
}
static inline const tf_weights *tf_grads(const nmt_model *m)
{
    return &((const tf_model *)m->arch)->g;
}

/* transformer.c: the tensors in file order, and (with w and base) the named
 * pointers to them. Returns the count. */
int nmt_tf_layout(const nmt_config *c, nmt_tensor_info *table, int max, size_t *total,
                  tf_weights *w, real *base);

/* Every norm of the model, layer norm or ScaleNorm (cfg.transformer.norm):
 * out [N, d] of in [N, d]; a [N], r [N] kept for the backward (layer
 * norm's mean and 1/sigma, ScaleNorm's ||u|| and 1/max(||u||, eps)); g, b
 * the norm's tensors (ScaleNorm: g [1], b NULL). */
static inline void tf_norm_forward(int scale, real *out, real *a, real *r, const real *in,
                                   const real *g, const real *b, int N, int d)
{
    if (scale)
        nmt_tf_scalenorm_forward(out, a, r, in, g, N, d);
    else
        nmt_tf_layernorm_forward(out, a, r, in, g, b, N, d);
}

/* Adds into din [N, d], dg and db (NULL for ScaleNorm). */
static inline void tf_norm_backward(int scale, real *din, real *dg, real *db, const real *dout,
                                    const real *in, const real *a, const real *r,
                                    const real *g, real *scratch, int N, int d)
{
    if (scale)
        nmt_tf_scalenorm_backward(din, dg, dout, in, a, r, g, scratch, N, d);
    else
        nmt_tf_layernorm_backward(din, dg, db, dout, in, a, r, g, scratch, N, d);
}

/* What one layer keeps of its forward for the backward. Sublayer k of a
 * layer (0 self-attention, 1 cross-attention, 2 feed-forward; the
 * encoder's are 0 and 2) reads the residual stream x[k] through a norm
 * (u[k], with what tf_norm_forward keeps in mean[k] and rstd[k]), and its
 * output, dropped out with res_mask[k], is added to the stream. */
typedef struct tf_layer_acts {
    real *x[3];                   /* [N, d] the stream entering sublayer k */
    real *u[3];                   /* [N, d] its layer norm */
    real *mean[3], *rstd[3];      /* [N] (ScaleNorm: ||u||, 1/max(||u||, eps)) */
    unsigned char *res_mask[3];   /* [N, d] residual dropout, or NULL */
    tf_mha_acts self, cross;      /* the attentions' Q, K, V, P, ctx */
    unsigned char *self_drop, *cross_drop; /* attention dropout, or NULL */
    real *act;                    /* [N, F] the feed-forward's inner layer */
    unsigned char *ff_drop;       /* [N, F] its dropout, or NULL */
} tf_layer_acts;

/* One side (encoder or decoder) of a pass over a batch. */
typedef struct tf_side {
    int T, L;                     /* positions of the batch, layers */
    int32_t *ids;                 /* [B, T] batch-major */
    int *len;                     /* [B] */
    real *x0;                     /* [N, d] the input: sqrt(d) emb + P */
    unsigned char *emb_mask;      /* [N, d] embedding dropout, or NULL */
    tf_layer_acts *layers;        /* [L] */
    real *top;                    /* [N, d] the stream after the last layer */
    real *out;                    /* [N, d] its final layer norm: H, or t */
    real *out_mean, *out_rstd;    /* [N] */
    real *dx;                     /* [N, d] the stream's gradient */
    real *du;                     /* [N, d] a layer norm output's gradient */
} tf_side;

typedef struct tf_workspace {
    nmt_workspace base;           /* the output layer reads t_rows */
    int training;                 /* 0: encoding for inference only */
    int B, d, h, F;
    int scale_norm, fixnorm;      /* the variants (cfg.transformer.norm, .fixnorm) */
    real keep_emb, keep_res, keep_att, keep_ff; /* 1 / (1 - rate) of each dropout */
    int drop_emb, drop_res, drop_att, drop_ff;  /* which the last forward used */
    /* guided alignment of the last forward: the head of decoder layer
     * guided_layer's cross-attention that its backward guides (guided_layer
     * -1: none) */
    int guided_layer;
    tf_mha_guide guide;
    tf_side enc, dec;
    real *pos;                    /* [max(Ts, Tt), d] the sinusoidal table, made once */
    real *dH;                     /* [B*Ts, d] the annotations' gradient */
    real *t_rows;                 /* [Tt, B, d] the decoder's output, time-major,
                                   * then its gradient (the output layer's sink) */
    real *tmp;                    /* [B * max(Ts, Tt), d] a sublayer output's
                                   * gradient through its residual dropout */
    real *scratch;                /* the layers' scratch, sized for the largest */
    /* FixNorm, training only (NULL otherwise): each embedding table at unit
     * rows, made by every forward, the rows' norms, and the gradient of the
     * normalised table (every lookup's and, tied, the output layer's),
     * which the backward takes through the normalisation */
    real *src_hat, *tgt_hat;      /* [Vs, d], [Vt, d] */
    real *src_nrm, *tgt_nrm;      /* [Vs], [Vt] */
    real *src_dhat, *tgt_dhat;    /* [Vs, d], [Vt, d] */
    real *block;                  /* the one allocation of reals */
    unsigned char *bytes;         /* the one allocation of masks */
} tf_workspace;

/* transformer_pass.c: the training pass */
int nmt_tf_workspace_alloc(tf_workspace **out, const nmt_model *m, int max_B, int max_Ts,
                           int max_Tt, int training);
void nmt_tf_workspace_free(tf_workspace *ws);
int nmt_tf_workspace_create(nmt_workspace **out, const nmt_model *m, int max_B, int max_Ts,
                            int max_Tt);
int nmt_tf_workspace_bytes(const nmt_config *c, int max_B, int max_Ts, int max_Tt,
                           double *bytes);
void nmt_tf_workspace_destroy(nmt_workspace *ws);
/* The encoder over enc.ids and enc.len (B sentences of T = enc.T
 * positions, set by the caller) without dropout: enc.out is H. */
void nmt_tf_encode(const nmt_model *m, tf_workspace *ws);
/* Map `map` (layer l's head k, or k = h its mean) of sentence s of the
 * last forward: its cross-attention weights P, [n_tgt, n_src]. */
int nmt_tf_workspace_map(const nmt_workspace *ws, int map, int s, int n_tgt, int n_src,
                         float *out);
int nmt_tf_forward(const nmt_model *m, nmt_workspace *ws, const nmt_batch *b,
                   const nmt_regularizer *reg, nmt_rng *rng);
void nmt_tf_backward(nmt_model *m, nmt_workspace *ws, const nmt_batch *b);

/* transformer_infer.c: the inference pass with a key/value cache */
void *nmt_tf_infer_create(const nmt_model *m, int max_B, int max_Ts, int max_rows,
                          int max_steps);
void nmt_tf_infer_free(void *st);
int nmt_tf_infer_encode(const nmt_model *m, void *st, const int32_t *src, const int *src_len,
                        int B, int T);
int nmt_tf_infer_select(void *st, const int *from, int R, int old_R);
const nmt_real *nmt_tf_infer_step(const nmt_model *m, void *st, const int32_t *prev,
                                  const int *row_src, int R, int map, float *att);

#endif
