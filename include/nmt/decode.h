/* Decoding: translating batches of source sentences with a model, over the
 * step-by-step inference pass of nmt/model.h: greedy (beam 1) or beam search,
 * with length normalisation, n-best lists and, on request, the attention
 * each hypothesis was made with.
 *
 * Beam search, as src/decode/decode.c implements it, per source sentence:
 * - Up to K = beam open hypotheses, all of the same length. Each step every
 *   open one is extended by every target token but <pad> and <s>; a
 *   candidate's score is the sum of its tokens' log-probabilities. The 2K best
 *   candidates (ties: the better-ranked parent, then the lower token id) are
 *   taken in order: a </s> among the first K finishes its hypothesis; the
 *   first K others become the next open hypotheses.
 * - A finished hypothesis of t tokens has length t + 1 (its </s> counts) and
 *   is ranked by score / length^alpha; the K best finished are kept.
 * - The sentence is done when (1) K hypotheses have finished, or (2) the
 *   open ones reach the length limit (they are kept as unfinished), or (3)
 *   n_best have finished and no open hypothesis can still beat the n_best-th:
 *   scores only fall as tokens are added (log-probabilities are <= 0), so
 *   with alpha >= 0 the best an open hypothesis of score s can reach is
 *   s / limit^alpha (the longest length allowed); when that is no better
 *   than the n_best-th finished one, waiting could not change the n-best
 *   list, so rule (3) only saves time.
 * - Results: the finished hypotheses best first; when fewer than n_best
 *   finished (the limit was reached), the unfinished ones follow, best
 *   first. A translation that ended is always preferred to one cut off.
 * With K = 1 this is exactly greedy decoding: the first </s> finishes the
 * only hypothesis and ends the search.
 *
 * Sampling (opts.sample, beam 1) keeps n_best independent samples per
 * sentence instead: each step every open sample draws its next token from
 * softmax(logits / temperature) restricted to the top_k most probable tokens
 * (top_k > 0) and to the smallest set of the most probable whose probability
 * is >= top_p (top_p < 1), until </s> or the length limit. A sample's score
 * is its log-probability under the model (temperature 1, no restriction),
 * and the samples are returned as beam search returns its hypotheses: the
 * finished ones by score / length^alpha, best first, then those cut off.
 * Each sentence draws from its own generator, seeded from (seed, the
 * sentence's number given to nmt_decode_lines), so its samples do not depend
 * on the batch it is in.
 *
 * Ensembles (nmt_decoder_create_ensemble): several models decode together,
 * any mix of architectures. Each step every member runs its own step on the
 * same hypotheses, and the ensemble's log-probability of a token is the
 * mean of the members' log-probabilities (each member's log-softmax, then
 * the mean; not renormalised). Everything above then runs on those scores
 * as on one model's: beam search, n-best lists, length limits and
 * normalisation, forced prefixes (their tokens' mean log-probabilities
 * count in the score) and sampling (softmax(mean / temperature), top_k and
 * top_p on that distribution; a sample's score the sum of its tokens' mean
 * log-probabilities). A hypothesis's attention (opts.attention) is the
 * mean of the members' default maps, kept only when every member has
 * attention. One member is exactly nmt_decoder_create: the same bits. */
#ifndef NMT_DECODE_H
#define NMT_DECODE_H

#include <stdint.h>

#include "nmt/model.h"

typedef struct nmt_decode_opts {
    int beam;         /* hypotheses kept per sentence; 1 = greedy */
    float alpha;      /* length normalisation: score / length^alpha, alpha >= 0;
                       * NMT_ALPHA_OF_MODEL: the model's (nmt_models_alpha) */
    float max_ratio;  /* a translation stops after max_ratio * source tokens + max_extra */
    int max_extra;
    int n_best;       /* hypotheses returned per sentence, <= beam */
    int attention;    /* 1: keep each hypothesis's attention rows (attention models) */
    int attention_map; /* which map they are (nmt_model_attention_map_at); -1: the
                        * model's default */
    int sample;        /* 1: sampling (beam must be 1), n_best samples per sentence */
    float temperature; /* > 0; near 0 is greedy */
    int top_k;         /* >= 0; 0: no top-k restriction */
    float top_p;       /* in (0, 1]; 1: no nucleus restriction */
    uint64_t seed;
} nmt_decode_opts;

/* beam 1, alpha 1, max_ratio 2, max_extra 10, n_best 1, attention 0, the
 * default attention map; no sampling, temperature 1, top_k 0, top_p 1,
 * seed 0. */
void nmt_decode_opts_default(nmt_decode_opts *o);

/* The search every command that translates for a person uses by default
 * (`nmt translate`, `nmt compare`, `nmt align`), so that they show the same
 * translation of the same input. Alpha 1.2 gave the best Multi30k val BLEU
 * (beam 5) of 0.6, 1.0 and 1.2 averaged over five trained models: four
 * Transformers of the recipe search (+0.14 to +0.66 over 0.6; they stop
 * short, length ratio 0.96-0.98 at 0.6) and the RNN's defaults (41.12
 * against 41.10; docs/experiments/transformer-search.md). The earlier 0.6
 * was chosen on models of 25 BLEU. */
#define NMT_DEFAULT_BEAM 5
#define NMT_DEFAULT_ALPHA 1.2f
/* An alpha left to the model: a model file may carry the one nmt train
 * chose on its validation set ("decode.alpha"; De->En's models of
 * Multi30k pick 1.0, En->De's 1.6 to 2.0, transformer-search.md); a file
 * without it decodes with NMT_DEFAULT_ALPHA. */
#define NMT_ALPHA_OF_MODEL (-1.0f)
/* The alpha NMT_ALPHA_OF_MODEL stands for: each model's decode_alpha, or
 * NMT_DEFAULT_ALPHA for a model without one, and an ensemble's mean of its
 * members'. */
float nmt_models_alpha(const nmt_model *const *models, int n_models);
#define NMT_DEFAULT_MAX_RATIO 2.0f
#define NMT_DEFAULT_MAX_EXTRA 10

/* nmt_decode_opts_default with the search above: beam NMT_DEFAULT_BEAM,
 * alpha NMT_ALPHA_OF_MODEL and the length limit NMT_DEFAULT_MAX_RATIO x
 * source tokens + NMT_DEFAULT_MAX_EXTRA. */
void nmt_decode_opts_standard(nmt_decode_opts *o);

/* One translation of one source sentence. */
typedef struct nmt_hypothesis {
    const int32_t *ids; /* [len] target ids, without </s> (owned by the decoder) */
    int len;
    float score;        /* sum of the log-probabilities of the ids (and of </s> if finished) */
    float norm_score;   /* score / (len + finished)^alpha: what beam search ranks by */
    int finished;       /* 1 if </s> was produced, 0 if cut at the length limit */
    /* With opts.attention and an attention model: the attention weights the
     * decoder used for each produced token, [len + finished, src_len] with
     * src_len the source's length (tokens + </s>); row i belongs to ids[i]
     * (the last row to </s> when finished). NULL otherwise. */
    const float *att;
} nmt_hypothesis;

typedef struct nmt_decoder nmt_decoder;

/* A decoder for batches of up to max_B sources of up to max_src_T positions
 * (tokens + </s>). The model must outlive it. Refuses beam < 1, n_best
 * outside 1..beam, a negative (but NMT_ALPHA_OF_MODEL) or non-finite alpha and a negative length
 * limit with NMT_ERR_ARG; with sampling, n_best may exceed the beam (it is
 * the number of samples), and a beam > 1, a temperature <= 0, a negative
 * top_k or a top_p outside (0, 1] are refused. */
int nmt_decoder_create(nmt_decoder **out, const nmt_model *m, int max_B, int max_src_T,
                       const nmt_decode_opts *opts);
void nmt_decoder_free(nmt_decoder *d);

/* The most members an ensemble may have. */
#define NMT_MAX_ENSEMBLE 64

/* Whether models[0..n) can decode together: they must agree on everything
 * the source and target units depend on, namely both vocabularies (the same
 * tokens in the same order), the subword model (the same SentencePiece
 * model, or none for all) and the lowercase setting. Architectures and
 * sizes may differ. NMT_OK, or NMT_ERR_ARG with a message that names the
 * first member that differs from models[0], models[0] and what differs
 * ("a.safetensors and b.safetensors have different target vocabularies:
 * id 7 is "Hund" in one and "Katze" in the other"). names[k] names member
 * k in the message; names NULL: "model 1", "model 2", ... */
int nmt_ensemble_check(const nmt_model *const *models, const char *const *names, int n);

/* A decoder over an ensemble of n_models members (1..NMT_MAX_ENSEMBLE; see
 * the top of this file): as nmt_decoder_create, plus nmt_ensemble_check's
 * refusals. The models must outlive it (the array itself is copied). With
 * more than one member and opts.attention, opts.attention_map must be -1
 * (each member's default map; their numbering differs between
 * architectures). n_models 1 is nmt_decoder_create. */
int nmt_decoder_create_ensemble(nmt_decoder **out, const nmt_model *const *models, int n_models,
                                int max_B, int max_src_T, const nmt_decode_opts *opts);

/* The length limit (target tokens, </s> not counted) for a source of
 * src_len positions (tokens + </s>): max_ratio * (src_len - 1) + max_extra,
 * at least 1. */
int nmt_decode_length_limit(const nmt_decode_opts *o, int src_len);

/* Translates B sources: time-major ids src[T, B] (element (t, b) at
 * [t * B + b]), each ending in </s>, lengths src_len[B] including it, as in
 * nmt_batch. Results stay valid until the next call. NMT_ERR_NUMERIC when a
 * step's log-probabilities are not finite: the model's weights are NaN, or
 * so large that the pass overflows (nothing is searched on NaN scores). */
int nmt_decode(nmt_decoder *d, const int32_t *src, const int *src_len, int B, int T);
/* What nmt_decode_with takes per sentence besides its source; any field may
 * be NULL. */
typedef struct nmt_decode_input {
    /* [B] the sentences' numbers (their lines in the input), which seed
     * their samples; NULL: 0..B-1 */
    const uint64_t *line;
    /* [B] target prefixes: sentence b's outputs all start with the
     * prefix_len[b] ids prefix[b] (no <pad>, <s> or </s>): the decoder is
     * forced through them (their log-probabilities count in the score), then
     * searches or samples on. Beam search keeps one hypothesis through the
     * prefix, then expands. prefix_len[b] 0 (or prefix NULL): none. A prefix
     * must be shorter than the longest output the decoder was made for
     * (nmt_decode_length_limit at max_src_T); the sentence's own length
     * limit grows to the prefix's length + 1 when it is shorter. */
    const int32_t *const *prefix;
    const int *prefix_len;
} nmt_decode_input;

/* nmt_decode with per-sentence inputs (in may be NULL). */
int nmt_decode_with(nmt_decoder *d, const int32_t *src, const int *src_len, int B, int T,
                    const nmt_decode_input *in);
/* How many hypotheses source b of the last call has: n_best, or fewer when
 * the target vocabulary is too small to give that many. */
int nmt_decoder_n_results(const nmt_decoder *d, int b);
/* The k-th best hypothesis (k < nmt_decoder_n_results) of source b of the
 * last call, or NULL. */
const nmt_hypothesis *nmt_decoder_result(const nmt_decoder *d, int b, int k);

#endif
