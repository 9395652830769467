/* The recurrent encoder-decoder of docs/DESIGN.md, "The model": its cells,
 * the attention family that joins encoder and decoder, and its sizes. A
 * model is this architecture when nmt_config.arch is NMT_ARCH_RNN. */
#ifndef NMT_RNN_H
#define NMT_RNN_H

typedef enum { NMT_CELL_RNN = 0, NMT_CELL_GRU = 1, NMT_CELL_LSTM = 2 } nmt_cell;
/* The attention family (docs/DESIGN.md, "Decoder"): how the score a_ij of source
 * position j at decoder step i is made from the query s_{i-1} and the
 * annotation h_j. Every kind but none shares the softmax, the mask and the
 * context c_i = sum_j alpha_ij h_j.
 *   bahdanau    v . tanh(W_a s + U_a h_j + b_a)   (additive)
 *   dot         s . h_j                           (Luong; needs D*H = H)
 *   general     s . (U_a h_j)                     (Luong, multiplicative)
 *   scaled-dot  (W_a s) . (U_a h_j) / sqrt(A)     (Vaswani et al.'s score
 *               between RNN states; the Transformer's own attention is
 *               nmt/transformer.h's)
 *   none        no scores: c_i = z at every step  (Cho et al. 2014) */
typedef enum {
    NMT_ATT_NONE = 0,
    NMT_ATT_BAHDANAU = 1,
    NMT_ATT_DOT = 2,
    NMT_ATT_GENERAL = 3,
    NMT_ATT_SCALED_DOT = 4,
} nmt_attention;

typedef struct nmt_rnn_config {
    nmt_cell cell;
    nmt_attention attention;
    int bidirectional;
    int emb, hidden, att_dim, out_dim; /* E, H, A, O */
} nmt_rnn_config;

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

#endif
