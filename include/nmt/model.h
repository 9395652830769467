/* The encoder-decoder model of docs/DESIGN.md: settings, the one table of
 * parameter tensors, the training pass (forward, loss, backward) and the
 * step-by-step inference pass used by decoding and alignment. */
#ifndef NMT_MODEL_H
#define NMT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "nmt/batch.h"
#include "nmt/rng.h"
#include "nmt/subwords.h"
#include "nmt/vocab.h"

/* The number type of parameters and activations: float. The gradient check
 * compiles the same model sources once more with -DNMT_REAL_DOUBLE so that
 * finite differences are not drowned in rounding noise. */
#ifdef NMT_REAL_DOUBLE
typedef double nmt_real;
#else
typedef float nmt_real;
#endif

typedef enum { NMT_CELL_RNN = 0, NMT_CELL_GRU = 1, NMT_CELL_LSTM = 2 } nmt_cell;
/* The attention family (docs/DESIGN.md, "Decoder"): how the score a_ij of source
 * position j at decoder step i is made from the query s_{i-1} and the
 * annotation h_j. Every kind but none shares the softmax, the mask and the
 * context c_i = sum_j alpha_ij h_j.
 *   bahdanau    v . tanh(W_a s + U_a h_j + b_a)   (additive)
 *   dot         s . h_j                           (Luong; needs D*H = H)
 *   general     s . (U_a h_j)                     (Luong, multiplicative)
 *   scaled-dot  (W_a s) . (U_a h_j) / sqrt(A)     (Vaswani et al.)
 *   none        no scores: c_i = z at every step  (Cho et al. 2014) */
typedef enum {
    NMT_ATT_NONE = 0,
    NMT_ATT_BAHDANAU = 1,
    NMT_ATT_DOT = 2,
    NMT_ATT_GENERAL = 3,
    NMT_ATT_SCALED_DOT = 4,
} nmt_attention;

typedef struct nmt_config {
    nmt_cell cell;
    nmt_attention attention;
    int bidirectional;
    int emb, hidden, att_dim, out_dim; /* E, H, A, O */
    int lowercase;                     /* how sources were tokenized */
    int src_vocab, tgt_vocab;          /* Vs, Vt */
    int tied;                          /* the output matrix is tgt_emb (no
                                        * out.W); needs out_dim = emb */
} nmt_config;

const char *nmt_cell_name(nmt_cell c);             /* "rnn" "gru" "lstm" */
/* "bahdanau" "dot" "general" "scaled-dot" "none" */
const char *nmt_attention_name(nmt_attention a);
int nmt_cell_parse(const char *s, nmt_cell *out);  /* NMT_OK or NMT_ERR_ARG */
int nmt_attention_parse(const char *s, nmt_attention *out);
/* Whether att_dim sizes the kind's tensors (bahdanau and scaled-dot: A is
 * the width of W_a s and U_a h_j); the others ignore it. */
int nmt_attention_uses_att_dim(nmt_attention a);
/* NMT_OK, or NMT_ERR_ARG with the reason when that kind of attention cannot
 * read such an encoder's annotations: dot needs them of the decoder state's
 * size, so no bidirectional encoder. */
int nmt_attention_check(nmt_attention a, int bidirectional, int hidden);

/* One parameter tensor: a slice of the one parameter allocation. Names and
 * shapes are docs/DESIGN.md's ("enc.fwd.W_ih", [G*H, E]); a vector has ndim 1. */
#define NMT_MAX_TENSORS 24
typedef struct nmt_tensor_info {
    const char *name;
    int ndim;
    int shape[2];
    size_t offset;   /* in floats, from the start of the allocation */
    size_t size;     /* in floats */
} nmt_tensor_info;

/* The table of tensors for a configuration, in file order. Returns the count
 * and the total number of floats. */
int nmt_tensor_table(const nmt_config *cfg, nmt_tensor_info *table, size_t *total);

typedef struct nmt_model {
    nmt_config cfg;
    nmt_vocab *src_vocab, *tgt_vocab;   /* owned */
    nmt_subwords *subwords;  /* owned; NULL: the model reads words (the
                              * tokenizer's), else SentencePiece pieces, and
                              * both vocabularies are its pieces in id order */
    int n_tensors;
    nmt_tensor_info tensors[NMT_MAX_TENSORS];
    size_t n_params;
    nmt_real *params;  /* [n_params], one allocation */
    nmt_real *grads;   /* [n_params], same layout; NULL until nmt_model_alloc_grads */
} nmt_model;

/* Creates a model with zeroed parameters; takes ownership of both vocabularies
 * (cfg->src_vocab / tgt_vocab are set from them). Settings that do not fit
 * together (dot attention over a bidirectional encoder, tied embeddings of
 * another size than the deep output, ...) are refused with the reason. */
int nmt_model_create(nmt_model **out, const nmt_config *cfg, nmt_vocab *src_vocab,
                     nmt_vocab *tgt_vocab);
/* Initialisation of Bahdanau et al. (appendix A.2): recurrent matrices
 * orthogonal, att.W and att.U ~ N(0, 0.001^2), att.v and biases 0, the rest
 * N(0, 0.01^2); LSTM forget-gate bias 1. With adam the deep output's tanh
 * saturates into a constant that fits the target unigram, and training sits
 * at that loss for hundreds to thousands of steps. */
void nmt_model_init(nmt_model *m, uint64_t seed);
/* Every parameter, recurrent matrices and biases included, uniform in
 * [-scale, scale] (OpenNMT-py's param_init, PyTorch-like; nmt train's
 * default, with 0.1). On Multi30k it learns far faster than the scheme
 * below, and its attention aligns: see the README, "Initial weights". */
void nmt_model_init_uniform(nmt_model *m, uint64_t seed, double scale);
/* The paper's recurrent matrices (orthogonal) and biases (0, the LSTM forget
 * bias 1), every other matrix and att.v uniform in [-scale, scale]. The
 * forget bias keeps the encoder's cells integrating over many words, so its
 * annotations are alike and the attention learns to read one summary
 * position; it was nmt train's default before --init uniform. */
void nmt_model_init_orthogonal(nmt_model *m, uint64_t seed, double scale);
int nmt_model_alloc_grads(nmt_model *m);
void nmt_model_zero_grad(nmt_model *m);
void nmt_model_free(nmt_model *m);
/* The tensor of that name, or NULL. */
const nmt_tensor_info *nmt_model_tensor(const nmt_model *m, const char *name);

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
 * is that pass): inverted dropout at three places, each rate in [0, 1),
 * and label smoothing of the loss whose gradient is taken. */
typedef struct nmt_regularizer {
    float dropout_emb;     /* the source and target embeddings */
    float dropout_enc;     /* the encoder's annotations h_j, as the attention,
                            * the context and the summary z read them (not
                            * inside the recurrence) */
    float dropout_out;     /* the deep output t, before the vocabulary projection */
    float label_smoothing; /* e: per token (1 - e)(-log p[y]) + e * mean_k(-log p[k])
                            * over all Vt entries (PyTorch's cross_entropy
                            * label_smoothing) */
} nmt_regularizer;

/* Forward pass and loss: *loss (if loss is not NULL) gets the mean over the
 * batch's real target tokens of -log p(y), the plain loss that is reported
 * whatever the regularizer (reg may be NULL). Dropout draws its masks from
 * rng in a fixed order (source embeddings, annotations, target embeddings,
 * deep output; a rate of 0 draws nothing), and needs rng; without rng
 * nothing is dropped. Keeps what backward needs in ws. A batch larger than
 * the workspace or with an id outside the vocabularies is refused with
 * NMT_ERR_ARG (and *loss is NaN). A finite batch can still give a NaN or
 * infinite loss when the weights have diverged: that is the caller's to
 * judge, and not an error here. */
int nmt_forward(nmt_real *loss, const nmt_model *m, nmt_workspace *ws, const nmt_batch *b,
                const nmt_regularizer *reg, nmt_rng *rng);
/* The mean loss whose gradient nmt_backward takes, after nmt_forward, in
 * double: with label smoothing the smoothed loss, otherwise the forward's
 * return value (before its rounding to nmt_real). */
double nmt_workspace_objective(const nmt_workspace *ws);
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

/* ---- inference pass ----------------------------------------------------- */

/* State of decoding R rows ("hypotheses") against B encoded sources. Each row
 * belongs to one source sentence; beam search keeps K rows per source. */
typedef struct nmt_infer nmt_infer;
int nmt_infer_create(nmt_infer **out, const nmt_model *m, int max_B, int max_src_T,
                     int max_rows);
void nmt_infer_free(nmt_infer *st);

/* Encodes B sources (time-major ids [T, B], lengths including </s>) and sets
 * R = B rows, row b on source b, each with the initial decoder state s_0. */
int nmt_infer_encode(const nmt_model *m, nmt_infer *st, const int32_t *src,
                     const int *src_len, int B, int T);
/* Points the R rows at sources: row r continues from old row from[r] (its
 * state is copied) and decodes source row_src[r]. Used to expand to K beams
 * per sentence and to reorder them after each step. */
int nmt_infer_select(nmt_infer *st, const int *from, int R);
/* One decoder step for all R rows: prev[r] is the last token (NMT_BOS at
 * first). Writes log-probabilities [R, Vt] and, if att is not NULL and the
 * model has attention, the weights [R, T] (0 past each source's length). */
void nmt_infer_step(const nmt_model *m, nmt_infer *st, const int32_t *prev,
                    float *logprobs, float *att);
int nmt_infer_rows(const nmt_infer *st);
/* The source sentence of each row, [R]. */
const int *nmt_infer_row_src(const nmt_infer *st);

#endif
