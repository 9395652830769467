/* Internal: the Transformer's layers as forward/backward pairs (docs/DESIGN.md
 * and the project contract, "The Transformer"), in the style of
 * model/layers.h: outputs first, sizes last, a shape comment on every array.
 *
 * Layout. Activations are batch-major rows: a batch of B sentences padded to
 * T positions of width d is [B, T, d], row (b, t) at (b * T + t) * d, so
 * that every projection is one product over all N = B * T rows. Padded rows
 * are computed like the others (they are never read by a real row: attention
 * gives their keys no weight) and never produce NaN.
 *
 * Gradients. Every backward ADDS into every gradient it produces: parameter
 * gradients (a zero_grad clears them) and input gradients alike, so that the
 * residual stream's gradient and the encoder output's (read by every decoder
 * layer's cross-attention) sum their terms in place. The caller zeroes a
 * fresh input-gradient buffer before the first backward that adds into it.
 *
 * Buffers. Nothing here allocates: the caller passes every array, and the
 * *_scratch functions say how many reals of scratch a call needs. The
 * element-wise and per-(sentence, head) work is spread over the pool
 * (base/pool.h); products go through nmt_gemm. Results at different thread
 * counts agree to float rounding (nmt_gemm's cut of a product depends on the
 * threads; everything else is the same bits at any count). */
#ifndef NMT_TF_LAYERS_H
#define NMT_TF_LAYERS_H

#include <stddef.h>
#include <stdint.h>

#include "model/layers.h"

/* ---- layernorm.c ---- */
/* LN(u) = g * (u - mean) / sqrt(var + 1e-5) + b over the d features of each
 * row, var the biased variance. */
#define NMT_TF_LN_EPS 1e-5
/* out [N, d] (may not alias in); mean, rstd [N]: kept for the backward
 * (rstd = 1 / sqrt(var + eps)). Each row's bits depend on that row alone. */
void nmt_tf_layernorm_forward(real *out, real *mean, real *rstd, const real *in, const real *g,
                              const real *b, int N, int d);
/* Adds: din [N, d] += dLN/din . dout, dg [d] and db [d] += their gradients.
 * in, mean, rstd as the forward had them. scratch: nmt_tf_layernorm_scratch(d)
 * reals (the per-chunk partial sums of dg and db, added in a fixed order). */
void nmt_tf_layernorm_backward(real *din, real *dg, real *db, const real *dout, const real *in,
                               const real *mean, const real *rstd, const real *g, real *scratch,
                               int N, int d);
size_t nmt_tf_layernorm_scratch(int d);

/* ---- scalenorm.c: ScaleNorm (Nguyen and Salazar 2019) ---- */
/* SN(u) = g * u / max(||u||, 1e-5) over the d features of each row, one
 * scalar gain g [1]. FixNorm's embedding rows use the same eps. */
#define NMT_TF_SN_EPS 1e-5
/* ||x|| of x [d], summed in lanes: the one norm of a row that ScaleNorm
 * and FixNorm compute (the same bits wherever a row is normalised). */
real nmt_tf_row_norm(const real *x, int d);
/* out [N, d] (may not alias in); nrm [N] = ||u|| and rinv [N] =
 * 1 / max(||u||, eps), kept for the backward. Each row's bits depend on
 * that row alone. */
void nmt_tf_scalenorm_forward(real *out, real *nrm, real *rinv, const real *in, const real *g,
                              int N, int d);
/* Adds: din [N, d] += dSN/din . dout, dg [1] += the gain's gradient. in,
 * nrm, rinv as the forward had them. scratch: nmt_tf_scalenorm_scratch()
 * reals (the per-chunk partial sums of dg, added in a fixed order). */
void nmt_tf_scalenorm_backward(real *din, real *dg, const real *dout, const real *in,
                               const real *nrm, const real *rinv, const real *g, real *scratch,
                               int N, int d);
size_t nmt_tf_scalenorm_scratch(void);

/* ---- embed.c: input embedding, positions, residual connections ---- */
/* The sinusoidal table pos [T, d] of positions 0 .. T-1:
 * P(p, 2k) = sin(p / 10000^(2k/d)), P(p, 2k+1) = cos(p / 10000^(2k/d)),
 * computed in double and rounded once. Row p does not depend on T. */
void nmt_tf_positions(real *pos, int T, int d);
/* X [B, T, d] = sqrt(d) * emb[ids[b*T + t]] + pos[t]; ids [B, T], emb [V, d],
 * pos [T, d] (for one decoding step at position i: T = 1, pos + i * d). */
void nmt_tf_embed_forward(real *X, const int32_t *ids, const real *emb, const real *pos, int B,
                          int T, int d);
/* FixNorm: hat [V, d] = every row of emb [V, d] at unit length,
 * e / max(||e||, eps), and nrm [V] = ||e|| (kept for the backward). */
void nmt_tf_fixnorm_forward(real *hat, real *nrm, const real *emb, int V, int d);
/* Adds: demb [V, d] += (dhat - hat (hat . dhat)) / ||e|| for each row (dhat / eps
 * where ||e|| <= eps), the gradient through the normalisation of the table
 * gradient dhat [V, d]. hat, nrm as the forward had them. */
void nmt_tf_fixnorm_backward(real *demb, const real *dhat, const real *hat, const real *nrm,
                             int V, int d);
/* nmt_tf_embed_forward of the rows of emb read at unit length, each
 * normalised as it is looked up (decoding, which needs no table): the same
 * bits as nmt_tf_fixnorm_forward's table through nmt_tf_embed_forward. */
void nmt_tf_embed_unit_forward(real *X, const int32_t *ids, const real *emb, const real *pos,
                               int B, int T, int d);
/* Adds: demb[ids[n]] += sqrt(d) * dX[n] for every row n of dX [N, d],
 * padded rows included (their gradient is 0 in the model; <pad> is an
 * ordinary parameter). */
void nmt_tf_embed_backward(real *demb, const real *dX, const int32_t *ids, int N, int d);
/* out [n] = x + y, or with residual dropout x + y * mask * keep (mask [n]
 * from nmt_dropout_mask, NULL for none). out may alias x or y. */
void nmt_tf_residual_forward(real *out, const real *x, const real *y, const unsigned char *mask,
                             real keep, size_t n);
/* Adds: dy [n] += dout * mask * keep (dout alone without mask). The
 * gradient of x is dout itself: the caller keeps dout as it. */
void nmt_tf_residual_backward(real *dy, const real *dout, const unsigned char *mask, real keep,
                              size_t n);

/* ---- dropout.c: the masks of inverted dropout ---- */
/* mask [n]: each unit kept (1) with probability 1 - p, from one draw of rng
 * (the same bits at any number of threads). The rate is rounded to a
 * multiple of 1/65536 (the threshold of a 16-bit draw); a kept unit is
 * scaled by nmt_tf_dropout_keep(p), one over that rounded keep rate, so that
 * the expectation is unchanged. */
void nmt_tf_dropout_mask(unsigned char *mask, nmt_rng *rng, real p, size_t n);
uint32_t nmt_tf_dropout_threshold(real p);
real nmt_tf_dropout_keep(real p);

/* ---- mha.c, mha_step.c: multi-head attention ---- */
/* The tensors of one attention (weights, or their gradients): W_* [d, d],
 * b_* [d]. Head t uses columns t*dk .. (t+1)*dk - 1 of Q, K, V (rows of
 * W_q, W_k, W_v) and of the concatenation (columns of W_o), dk = d / h. */
typedef struct tf_mha_params {
    real *W_q, *W_k, *W_v, *W_o;
    real *b_q, *b_k, *b_v, *b_o;
} tf_mha_params;

/* Guided alignment (docs/DESIGN.md, "Guided alignment") on one head of a
 * cross-attention: gold [B, Tq, Tk] holds a distribution over the keys in
 * each row that has one (0 everywhere in the others), and the objective
 * gains weight * sum over those rows of -sum_j gold_j log alpha_j (weight:
 * the guided weight over the batch's target tokens). */
typedef struct tf_mha_guide {
    const float *gold; /* [B, Tq, Tk] */
    int head;
    real weight;
} tf_mha_guide;

/* The sizes and mask of one use. Queries [B, Tq, d], keys and values
 * [B, Tk, d]: the same rows for self-attention, the encoder output H for
 * cross-attention (Tk = the source batch's T). Query t of sentence b sees
 * keys j < klen[b] (the others are padding: -inf, weight exactly 0), and,
 * causal, j <= t only. A padded query row (t >= its sentence's length)
 * sees all real keys. klen[b] >= 1 (a row with no key gets weights 0 and
 * output b_o, never NaN). */
typedef struct tf_mha_shape {
    int B, Tq, Tk, d, h;
    const int *klen; /* [B] */
    int causal;      /* 1: decoder self-attention */
} tf_mha_shape;

/* What the forward keeps for the backward (every array written by it). */
typedef struct tf_mha_acts {
    real *Q;   /* [B, Tq, d] */
    real *K;   /* [B, Tk, d] */
    real *V;   /* [B, Tk, d] */
    real *P;   /* [B, h, Tq, Tk] the attention weights alpha (before dropout);
                * row (b, t, i) is 0 at every key query i does not see */
    real *ctx; /* [B, Tq, d] concat_t(alpha_t V_t), before W_o */
} tf_mha_acts;

/* K [N, d] = xkv W_k^T + b_k, V [N, d] = xkv W_v^T + b_v: the keys and
 * values of N rows (the forward's first step; decoding makes a source's
 * once with this). */
void nmt_tf_mha_project_kv(real *K, real *V, const real *xkv, const tf_mha_params *p, int N,
                           int d);
/* out [B, Tq, d] (=, or += when accumulate: the residual add for free) =
 * MHA(xq [B, Tq, d], xkv [B, Tk, d]); xkv may be xq (self-attention).
 * drop [B, h, Tq, Tk]: attention dropout on the weights (kept * keep,
 * dropped 0), NULL for none. scratch: nmt_tf_mha_forward_scratch reals. */
void nmt_tf_mha_forward(real *out, const tf_mha_acts *a, const real *xq, const real *xkv,
                        const tf_mha_params *p, const unsigned char *drop, real keep,
                        real *scratch, const tf_mha_shape *s, int accumulate);
size_t nmt_tf_mha_forward_scratch(const tf_mha_shape *s);
/* Given dout [B, Tq, d], adds into every tensor of dp and into dxq
 * [B, Tq, d] and dxkv [B, Tk, d] (the same array for self-attention; for
 * cross-attention, dH, which every decoder layer adds into). a, xq, xkv,
 * drop and keep as the forward had them. Padding keys' rows of dxkv get
 * nothing. scratch: nmt_tf_mha_backward_scratch reals. */
void nmt_tf_mha_backward(real *dxq, real *dxkv, const tf_mha_params *dp, const real *dout,
                         const tf_mha_acts *a, const real *xq, const real *xkv,
                         const tf_mha_params *p, const unsigned char *drop, real keep,
                         real *scratch, const tf_mha_shape *s);
size_t nmt_tf_mha_backward_scratch(const tf_mha_shape *s);
/* nmt_tf_mha_backward with guided alignment on one head (guide, NULL for
 * none: nmt_tf_mha_backward itself): the head's scores' gradient gains
 * guide->weight (alpha_j sum_k gold_k - gold_j) in each gold row. */
void nmt_tf_mha_backward_guided(real *dxq, real *dxkv, const tf_mha_params *dp,
                                const real *dout, const tf_mha_acts *a, const real *xq,
                                const real *xkv, const tf_mha_params *p,
                                const unsigned char *drop, real keep, real *scratch,
                                const tf_mha_shape *s, const tf_mha_guide *guide);
/* The guided term of guide's head before its weight, from the forward's
 * weights a->P: the sum over the gold rows of -sum_j gold_j log alpha_j,
 * in double (a weight that underflowed to 0 counts as the least normal
 * float, so that the term stays finite), and the rows it took (*rows). The
 * gradient of weight times it goes into the head's scores in
 * nmt_tf_mha_backward_guided. */
double nmt_tf_mha_guided_loss(const tf_mha_acts *a, const tf_mha_shape *s,
                              const tf_mha_guide *guide, double *rows);
/* In place: scores p [n] become the softmax over them (max subtracted
 * first), and p [n .. T) exactly 0. n = 0 gives all 0. */
void nmt_tf_softmax_row(real *p, int n, int T);

/* Incremental decoding (forward only), one new position i for R rows at
 * once. A row's self-attention cache holds the K and V rows of its positions
 * 0 .. i: Kc, Vc [R, Tmax, d], row r's position j at (r * Tmax + j) * d. The
 * results are those of nmt_tf_mha_forward at position i (to float rounding:
 * the products are cut differently). scratch: nmt_tf_mha_step_scratch. */
size_t nmt_tf_mha_step_scratch(int R, int d);
/* Self-attention of position i: writes the K, V of xq [R, d] at position i
 * of row r's cache row slot[r] (NULL: r) of Kc, Vc [slots, Tmax, d], then
 * attends positions 0 .. i of it. out [R, d] (=, or +=); P [R, h, Tmax]:
 * the weights, row (r, t) 0 .. i written. A beam search moves rows among
 * the slots instead of moving the cache (copying a slot only for a row
 * that another row also continues). */
void nmt_tf_mha_step_self(real *out, real *P, real *Kc, real *Vc, const int *slot,
                          const real *xq, const tf_mha_params *p, real *scratch, int i, int Tmax,
                          int R, int d, int h, int accumulate);
/* Cross-attention of xq [R, d]: row r attends source src_of[r] (NULL: r),
 * whose keys and values are rows of K, V [S, Ts, d] (nmt_tf_mha_project_kv
 * of the encoder output, once per source) and klen[src] long. out [R, d]
 * (=, or +=); P [R, h, Ts] the weights (0 past klen): the alignments. */
void nmt_tf_mha_step_cross(real *out, real *P, const real *K, const real *V, const int *klen,
                           const int *src_of, const real *xq, const tf_mha_params *p,
                           real *scratch, int Ts, int R, int d, int h, int accumulate);
/* Beam search's reordering of self-attention caches kept in slots: row r
 * of the next step continues old row from[r] (R rows, of old_R), and
 * slot [old_R] becomes the rows' slots [R]. The first row that continues a
 * row takes over its slot; any other takes a free slot (of a row nobody
 * continues, or never used) into which positions 0 .. n_pos-1 of every cache
 * (caches[k], k < n_caches, each [n_slots, Tmax, d]) are copied. So a beam
 * search moves the cache only for the hypotheses it duplicates. scratch:
 * [4 * n_slots] ints. */
void nmt_tf_slots_select(int *slot, const int *from, int R, int old_R, int n_slots,
                         real *const *caches, int n_caches, int n_pos, int Tmax, int d,
                         int *scratch);

/* ---- ffn.c: position-wise feed-forward ---- */
/* act [N, F] = dropout(relu(u W_1^T + b_1)) (drop [N, F] from
 * nmt_dropout_mask, NULL for none), kept for the backward; out [N, d] (=, or
 * += when accumulate) = act W_2^T + b_2. u [N, d], W_1 [F, d], W_2 [d, F]. */
void nmt_tf_ffn_forward(real *out, real *act, const real *u, const real *W_1, const real *b_1,
                        const real *W_2, const real *b_2, const unsigned char *drop, real keep,
                        int N, int d, int F, int accumulate);
/* Adds into du [N, d], dW_1, db_1, dW_2, db_2, given dout [N, d] and the
 * forward's act (a unit's mask is act > 0: relu and dropout both give 0).
 * scratch: nmt_tf_ffn_scratch reals. */
void nmt_tf_ffn_backward(real *du, real *dW_1, real *db_1, real *dW_2, real *db_2,
                         const real *dout, const real *act, const real *u, const real *W_1,
                         const real *W_2, real keep, real *scratch, int N, int d, int F);
size_t nmt_tf_ffn_scratch(int N, int F);

#endif
