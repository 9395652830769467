/* A model of docs/DESIGN.md, whatever its architecture: its settings, the
 * one table of parameter tensors, the training pass (forward, loss,
 * backward) and the step-by-step inference pass used by decoding and
 * alignment. Each architecture (nmt/rnn.h, nmt/transformer.h) sits behind
 * these calls; nothing here or in the code that calls them depends on
 * which one a model is. */
#ifndef NMT_MODEL_H
#define NMT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "nmt/batch.h"
#include "nmt/rng.h"
#include "nmt/rnn.h"
#include "nmt/subwords.h"
#include "nmt/tensors.h"
#include "nmt/transformer.h"
#include "nmt/vocab.h"

/* The number type of parameters and activations: float. The gradient check
 * compiles the same model sources once more with -DNMT_REAL_DOUBLE so that
 * finite differences are not drowned in rounding noise. */
#ifdef NMT_REAL_DOUBLE
typedef double nmt_real;
#else
typedef float nmt_real;
#endif

typedef enum { NMT_ARCH_RNN = 0, NMT_ARCH_TRANSFORMER = 1 } nmt_arch;
const char *nmt_arch_name(nmt_arch a);            /* "rnn" "transformer" */
int nmt_arch_parse(const char *s, nmt_arch *out);  /* NMT_OK or NMT_ERR_ARG */
/* Whether this build has the architecture's code. */
int nmt_arch_available(nmt_arch a);

/* The cross-attention head a model's training guided toward given word
 * links (guided alignment: nmt train --guided-links; docs/DESIGN.md,
 * "Guided alignment"), which its file names by the metadata keys
 * align_layer, align_head and align_shift. All 0 (the keys absent) for a
 * model trained without links. Only an architecture whose attention maps
 * have layers and heads (nmt_model_attention_map_at) can have one. */
typedef struct nmt_trained_head {
    int trained;  /* 1: layer, head and shift are the model's */
    int layer;    /* the decoder layer, from 0 */
    int head;     /* the head of its cross-attention, from 0 */
    int shift;    /* 1: target word j was supervised at the decoder step that
                   * reads y_j (and predicts y_{j+1}); 0: at the step that
                   * predicts y_j */
} nmt_trained_head;

typedef struct nmt_config {
    nmt_arch arch;
    nmt_rnn_config rnn;                 /* the sizes of an NMT_ARCH_RNN model */
    nmt_transformer_config transformer; /* those of an NMT_ARCH_TRANSFORMER one */
    int src_vocab, tgt_vocab;           /* Vs, Vt */
    int tied;                           /* the output matrix is tgt_emb (no out.W) */
    int joint_vocab;                    /* one vocabulary (Vs = Vt, the same tokens) and
                                         * one embedding table, tgt_emb, for both
                                         * sides (no src_emb): the Transformer's
                                         * variant; the RNN refuses it */
    int lowercase;                      /* how sources were tokenized */
    nmt_trained_head align;             /* the head trained toward word links, if any */
} nmt_config;

/* NMT_OK, or NMT_ERR_ARG with the reason when the settings do not fit
 * together (dot attention over a bidirectional encoder, tied embeddings of
 * another size than the output layer's input, heads that do not divide
 * d_model, sizes out of range, ...). */
int nmt_config_check(const nmt_config *c);
/* A few words that name the model's kind in tables: "lstm/bahdanau",
 * "transformer 3+3". Returns what snprintf returns. */
int nmt_config_describe(const nmt_config *c, char *buf, size_t size);
/* The architecture's settings as `nmt info` lists them, one at a time: the
 * i-th's name (*name) and value (into value); returns 1, or 0 past the
 * last. */
int nmt_config_setting(const nmt_config *c, int i, const char **name, char *value, size_t size);
/* The architecture's own settings as checkpoints list them among the
 * training settings ("train.cell" = "lstm" ...; none for an architecture
 * whose checkpoints rely on the model's metadata alone): fills up to max
 * entries of kv, strings in buf (size bytes); returns how many, or
 * NMT_ERR_NOMEM when they do not fit. */
int nmt_config_train_meta(const nmt_config *c, nmt_meta *kv, int max, char *buf, size_t size);
/* The width of the vectors the output layer projects onto the vocabulary
 * (the RNN's deep output O, the Transformer's d): with tied embeddings it
 * must be the embedding size. */
int nmt_config_output_width(const nmt_config *c);

/* One parameter tensor: a slice of the one parameter allocation. Names and
 * shapes are docs/DESIGN.md's ("enc.fwd.W_ih", [G*H, E]); a vector has ndim 1. */
#define NMT_MAX_TENSOR_NAME 64
typedef struct nmt_tensor_info {
    char name[NMT_MAX_TENSOR_NAME];
    int ndim;
    int shape[NMT_MAX_NDIM];
    size_t offset;   /* in floats, from the start of the allocation */
    size_t size;     /* in floats */
} nmt_tensor_info;

/* The table of tensors for a configuration, in file order: fills up to max
 * entries of table (table may be NULL to count) and *total with the number
 * of floats. Returns the count, or NMT_ERR_ARG for settings that
 * nmt_config_check refuses. */
int nmt_tensor_table(const nmt_config *cfg, nmt_tensor_info *table, int max, size_t *total);

struct nmt_arch_ops;
typedef struct nmt_model {
    nmt_config cfg;
    nmt_vocab *src_vocab, *tgt_vocab;   /* owned */
    nmt_subwords *subwords;  /* owned; NULL: the model reads words (the
                              * tokenizer's), else SentencePiece pieces, and
                              * both vocabularies are its pieces in id order */
    int n_tensors;
    nmt_tensor_info *tensors; /* [n_tensors], owned */
    size_t n_params;
    nmt_real *params;  /* [n_params], one allocation (replace it only with
                        * nmt_model_adopt_params or nmt_model_swap_params) */
    nmt_real *grads;   /* [n_params], same layout; NULL until nmt_model_alloc_grads */
    /* the architecture behind the calls below, and its own view of the
     * parameters (named pointers into params and grads); internal */
    const struct nmt_arch_ops *ops;
    void *arch;
} nmt_model;

/* Creates a model with zeroed parameters; takes ownership of both vocabularies
 * (cfg->src_vocab / tgt_vocab are set from them). Settings that
 * nmt_config_check refuses are refused with the reason. */
int nmt_model_create(nmt_model **out, const nmt_config *cfg, nmt_vocab *src_vocab,
                     nmt_vocab *tgt_vocab);
/* Makes params (a buffer of n_params floats, malloc'ed) the model's
 * parameters, freeing the old ones. */
void nmt_model_adopt_params(nmt_model *m, nmt_real *params);
/* Makes params (n_params floats, not owned) the model's parameters for a
 * while, and returns the ones it had: every pass reads the new ones until
 * they are swapped back. params must never be assigned directly (the
 * architecture keeps pointers into them). */
nmt_real *nmt_model_swap_params(nmt_model *m, nmt_real *params);
int nmt_model_alloc_grads(nmt_model *m);
void nmt_model_zero_grad(nmt_model *m);
void nmt_model_free(nmt_model *m);
/* The tensor of that name, or NULL. */
const nmt_tensor_info *nmt_model_tensor(const nmt_model *m, const char *name);

/* ---- initial weights ---------------------------------------------------- */

typedef enum {
    /* every parameter uniform in [-scale, scale] (OpenNMT-py's param_init) */
    NMT_INIT_UNIFORM = 0,
    /* the RNN's: recurrent matrices orthogonal, biases 0 (the LSTM forget
     * bias 1), every other matrix uniform in [-scale, scale] */
    NMT_INIT_ORTHOGONAL = 1,
    /* the RNN's, Bahdanau et al.'s appendix A.2: recurrent matrices
     * orthogonal, att.W and att.U ~ N(0, 0.001^2), att.v and biases 0, the
     * rest N(0, 0.01^2); LSTM forget-gate bias 1 */
    NMT_INIT_BAHDANAU = 2,
    /* the Transformer's: matrices Xavier-uniform, biases 0, layer norms'
     * gains 1, embeddings N(0, 1/d) */
    NMT_INIT_XAVIER = 3,
} nmt_init_scheme;
const char *nmt_init_name(nmt_init_scheme s); /* "uniform" "orthogonal" "bahdanau" "xavier" */
int nmt_init_parse(const char *s, nmt_init_scheme *out);
/* The scheme an architecture starts from when none is asked for. */
nmt_init_scheme nmt_init_default(nmt_arch a);
/* Whether a run of the architecture may start from the scheme (nmt train
 * --init): the RNN's uniform, orthogonal and bahdanau, the Transformer's
 * xavier; none for an architecture not in this build. */
int nmt_arch_has_init(nmt_arch a, nmt_init_scheme s);
/* Draws the parameters by the scheme from the seed: the same seed gives the
 * same model. NMT_ERR_ARG when the architecture has no such scheme. Each
 * scheme draws the tensors in file order and each tensor's elements in
 * order. */
int nmt_model_init(nmt_model *m, nmt_init_scheme scheme, double scale, uint64_t seed);

/* ---- what a run of an architecture takes when nothing else is asked ----- */

/* Every architecture's sizes at its defaults, and the first architecture of
 * the build (the RNN) chosen; nothing else of c is set (it is zeroed). */
void nmt_config_default(nmt_config *c);

/* What each architecture was measured to train well with (docs/training.md,
 * "Defaults"): the training set-up takes these where a run asks nothing
 * else, so that it never asks which architecture a model is. */
typedef struct nmt_arch_recipe {
    /* the dropout sites its passes have, in nmt_regularizer's order, named
     * as its fields without "dropout_" ("emb", "enc", "out"); NULL ends */
    const char *const *dropout_sites;
    float dropout;          /* every site's rate */
    float long_dropout;     /* every site's rate in a run given --max-time of
                             * at least long_seconds (0: no such rule) */
    double long_seconds;
    int long_rsqrt;         /* 1: such a run, given no schedule, takes the warm-up
                             * of NMT_RSQRT_WARMUP steps and 1/sqrt(step) rather
                             * than linear_decay's line */
    float subword_alpha;    /* a run under long_seconds of --max-time whose
                             * pieces are a unigram model's, its corpus read
                             * whole from files, samples them every epoch at
                             * this alpha (0: never) */
    float long_subword_alpha; /* the same in a run given at least long_seconds */
    double adam_lr;         /* Adam's lr (0: nmt_optim_default_lr's) */
    int64_t warmup;         /* the lr's warm-up steps, then its decay: 1/sqrt(step),
                             * or linear_decay's (0: a constant lr lowered on
                             * plateaus) */
    int linear_decay;       /* 1: after the warm-up the lr falls on a line to 0 at
                             * the run's end (a run that has an end) */
    int batch_tokens;       /* a batch's target tokens, padding counted (0:
                             * batches of nmt_train_settings' sentences) */
    int batch_size;         /* with batch_tokens: the most sentences a batch
                             * holds, which sizes the memory */
    nmt_init_scheme init;   /* the initial weights' scheme */
    unsigned inits;         /* the schemes a run may choose: 1 << scheme each */
    const char *sizes;      /* what sizes its memory, as nmt train's options
                             * name it, for the advice of a refusal */
} nmt_arch_recipe;
/* The architecture's (NULL: not in this build). */
const nmt_arch_recipe *nmt_arch_recipe_of(nmt_arch a);
/* Whether the architecture's passes have that dropout site (a name of
 * nmt_arch_recipe's dropout_sites), and its i-th site (NULL past the last,
 * or for an architecture not in this build). */
int nmt_arch_has_dropout(nmt_arch a, const char *site);
const char *nmt_arch_dropout_site(nmt_arch a, int i);

/* ---- training pass ------------------------------------------------------ */

/* Activations and scratch for batches up to the given sizes, allocated once. */
typedef struct nmt_workspace nmt_workspace;
int nmt_workspace_create(nmt_workspace **out, const nmt_model *m, int max_B,
                         int max_src_T, int max_tgt_T);
void nmt_workspace_free(nmt_workspace *ws);
/* The bytes a training workspace for cfg and these sizes holds (*bytes),
 * from the same sizing pass that nmt_workspace_create allocates by. */
int nmt_workspace_bytes(const nmt_config *cfg, int max_B, int max_src_T, int max_tgt_T,
                        double *bytes);

/* What training adds to the deterministic pass (all 0, or a NULL pointer,
 * is that pass): inverted dropout, each rate in [0, 1), at the sites of the
 * model's architecture (a site it does not have must be 0), and label
 * smoothing of the loss whose gradient is taken. */
typedef struct nmt_regularizer {
    float dropout_emb;     /* both: the source and target embeddings (the
                            * Transformer's: with their positions) */
    float dropout_enc;     /* rnn: the encoder's annotations h_j, as the
                            * attention, the context and the summary z read
                            * them (not inside the recurrence) */
    float dropout_out;     /* rnn: the deep output t, before the vocabulary projection */
    float label_smoothing; /* e: per token (1 - e)(-log p[y]) + e * mean_k(-log p[k])
                            * over all Vt entries (PyTorch's cross_entropy
                            * label_smoothing) */
    float dropout_residual; /* transformer: each sublayer's output, before it
                             * is added to the residual stream */
    float dropout_att;     /* transformer: the attention weights */
    float dropout_ff;      /* transformer: the feed-forward network's inner layer */
    /* Guided alignment (Garg et al. 2019; docs/DESIGN.md, "Guided
     * alignment"): with guided set and a batch that holds gold rows
     * (nmt_batch.guide), head guided_head of decoder layer guided_layer's
     * cross-attention (its weights alpha before attention dropout) is
     * trained toward them: the objective gains guided_weight / N times the
     * sum over the rows of -sum_j p_j log alpha_j, N the batch's real target
     * tokens (the translation loss's count). The model's maps must have that
     * layer and head (nmt_model_attention_map_at); the weight is at least
     * 0 (0 computes the term and adds nothing). */
    int guided;
    int guided_layer, guided_head;
    float guided_weight;
} nmt_regularizer;

/* Forward pass and loss: *loss (if loss is not NULL) gets the mean over the
 * batch's real target tokens of -log p(y), the plain loss that is reported
 * whatever the regularizer (reg may be NULL). Dropout draws its masks from
 * rng in an order fixed by the architecture (a rate of 0 draws nothing), and
 * needs rng; without rng nothing is dropped. Keeps what backward needs in ws.
 * A batch larger than the workspace or with an id outside the vocabularies
 * is refused with NMT_ERR_ARG (and *loss is NaN). A finite batch can still
 * give a NaN or infinite loss when the weights have diverged: that is the
 * caller's to judge, and not an error here. */
int nmt_forward(nmt_real *loss, const nmt_model *m, nmt_workspace *ws, const nmt_batch *b,
                const nmt_regularizer *reg, nmt_rng *rng);
/* The mean loss whose gradient nmt_backward takes, after nmt_forward, in
 * double: with label smoothing the smoothed loss, otherwise the forward's
 * return value (before its rounding to nmt_real). */
double nmt_workspace_objective(const nmt_workspace *ws);
/* The guided term of the last forward (nmt_regularizer.guided): the sum
 * over the batch's gold rows of -sum_j p_j log alpha_j (*sum, in nats;
 * the objective holds guided_weight * sum / N of it) and the number of
 * such rows (*rows); both 0 without guidance. */
void nmt_workspace_guided(const nmt_workspace *ws, double *sum, double *rows);
/* Per-sentence sum of -log p over each sentence's tokens, [B], valid after
 * nmt_forward. */
const double *nmt_workspace_sentence_nll(const nmt_workspace *ws);
/* Adds d(objective)/d(params) of the last forward into m->grads. Once per
 * forward: the backward overwrites what a second one would need, so a call
 * without a fresh successful nmt_forward of the same batch, or on a model
 * without gradients (nmt_model_alloc_grads), is refused with NMT_ERR_ARG and
 * adds nothing. */
int nmt_backward(nmt_model *m, nmt_workspace *ws, const nmt_batch *b);
/* nmt_forward then nmt_backward, for training: the same loss and the same
 * gradients, bit for bit, but faster: the vocabulary projection's gradient is
 * made chunk by chunk during the forward instead of recomputing the logits.
 * m needs gradients (nmt_model_alloc_grads). */
int nmt_forward_backward(nmt_real *loss, nmt_model *m, nmt_workspace *ws, const nmt_batch *b,
                         const nmt_regularizer *reg, nmt_rng *rng);

/* ---- attention maps ----------------------------------------------------- */

/* The attention weights over the source that a model can show for each
 * target position: the RNN has one map (none without attention), the
 * Transformer one per decoder layer and head of its cross-attention and
 * each layer's mean of heads. Maps are numbered 0 .. n-1 and named
 * ("attention"; "layer 2 head 3", "layer 2 mean"). */
int nmt_model_attention_maps(const nmt_model *m);
int nmt_model_attention_map_name(const nmt_model *m, int map, char *buf, size_t size);
/* The map that nmt align and the decoders show unless told otherwise
 * (-1 without attention). */
int nmt_model_default_attention_map(const nmt_model *m);
/* The map of a layer's head (a Transformer's cross-attention; layers and
 * heads count from 0 as the tensor names do): layer NMT_MAP_DEFAULT is the
 * default map's layer, head NMT_MAP_MEAN the mean of the layer's heads.
 * Returns the map, or NMT_ERR_ARG with the reason (no such layer or head; a
 * model whose one map has neither). */
#define NMT_MAP_DEFAULT (-1)
#define NMT_MAP_MEAN (-1)
int nmt_model_attention_map_at(const nmt_model *m, int layer, int head);
/* The map of the head the model was trained to align with (its
 * cfg.align), or -1 when it has none. */
int nmt_model_trained_attention_map(const nmt_model *m);
/* After a successful nmt_forward of batch b through ws (without dropout:
 * the regularizer zero), map `map` of sentence s: [b->tgt_len[s],
 * b->src_len[s]] into out, the rows of the decoder positions, as
 * nmt_align_forced gives them from decoding steps (within float rounding:
 * the batch's products round otherwise). NMT_ERR_ARG when the architecture
 * keeps no maps in its workspace (the RNN), or for a map or sentence the
 * forward has not. */
int nmt_workspace_attention_map(const nmt_model *m, const nmt_workspace *ws,
                                const nmt_batch *b, int map, int s, float *out);
/* 1 when m's training forward keeps its attention maps for
 * nmt_workspace_attention_map, else 0. */
int nmt_model_workspace_maps(const nmt_model *m);

/* ---- inference pass ----------------------------------------------------- */

/* State of decoding R rows ("hypotheses") against B encoded sources. Each row
 * belongs to one source sentence; beam search keeps K rows per source. A
 * row may take up to max_steps decoder steps after encoding. */
typedef struct nmt_infer nmt_infer;
int nmt_infer_create(nmt_infer **out, const nmt_model *m, int max_B, int max_src_T,
                     int max_rows, int max_steps);
void nmt_infer_free(nmt_infer *st);
/* Which attention map nmt_infer_step writes (default: the model's default),
 * or NMT_MAP_EVERY: all n maps of the model, att [n, R, T], map k at
 * att + k * R * T (nmt align --per-head compares them in one pass). */
#define NMT_MAP_EVERY (-2)
int nmt_infer_set_attention_map(nmt_infer *st, int map);
/* The map nmt_infer_step writes: a map's number or NMT_MAP_EVERY. */
int nmt_infer_attention_map(const nmt_infer *st);

/* Encodes B sources (time-major ids [T, B], lengths including </s>) and sets
 * R = B rows, row b on source b, each at its first decoder step. */
int nmt_infer_encode(const nmt_model *m, nmt_infer *st, const int32_t *src,
                     const int *src_len, int B, int T);
/* Points the R rows at sources: row r continues from old row from[r] (its
 * state is copied) and decodes that row's source. Used to expand to K beams
 * per sentence and to reorder them after each step. */
int nmt_infer_select(nmt_infer *st, const int *from, int R);
/* One decoder step for all R rows: prev[r] is the last token (NMT_BOS at
 * first). Writes log-probabilities [R, Vt] and, if att is not NULL and the
 * model has attention, the weights of the chosen map [R, T] (0 past each
 * source's length). Refused (NMT_ERR_ARG) past max_steps. */
int nmt_infer_step(const nmt_model *m, nmt_infer *st, const int32_t *prev, float *logprobs,
                   float *att);
/* nmt_infer_step without its last pass over the vocabulary: the rows'
 * logits [R, Vt] are returned (valid until the next step) and *lse [R] gets
 * each row's log-sum-exp, so that log p of token v in row r is
 * logits[r * Vt + v] - lse[r], the very bits nmt_infer_step writes. The beam
 * search computes it only for the tokens it looks at, rather than writing
 * and copying [R, Vt] log-probabilities every step. NULL past max_steps. */
const float *nmt_infer_step_logits(const nmt_model *m, nmt_infer *st, const int32_t *prev,
                                   float *att, const float **lse);
/* NMT_OK when the log-sum-exps lse[0..R) of a step are all finite, else
 * NMT_ERR_NUMERIC with a message: a row's is NaN or Inf when one of its
 * logits is NaN or +Inf (or all are -Inf), that is when the model's weights
 * are not numbers or so large that the pass overflowed. */
int nmt_infer_check_finite(const float *lse, int R);
int nmt_infer_rows(const nmt_infer *st);
/* The source sentence of each row, [R]. */
const int *nmt_infer_row_src(const nmt_infer *st);

#endif
