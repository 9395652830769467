/* Subword units made by SentencePiece: the library itself (Debian's
 * libsentencepiece), reached through a small C++ shim (src/data/subwords.cc).
 *
 * A subword model is one joint SentencePiece model for both languages whose
 * pieces are the translation model's vocabularies, in id order, with ids 0-3
 * <pad>, <unk>, <s>, </s> as in every nmt vocabulary. Its serialized form is
 * stored in model files as the tensor "subwords" (U8), so that raw text goes
 * in and raw text comes out with nothing else at hand.
 *
 * The models nmt learns (nmt_subwords_learn) are unigram models with
 * identity normalization: decoding gives back exactly the characters that
 * were encoded (runs of spaces and spaces at the ends aside), which is what a
 * reader, and cased BLEU against raw references, expect; NFKC would rewrite
 * "…" as "...", "½" as "1⁄2", full-width letters and so on in the output.
 *
 * Every call returns NMT_OK or a negative NMT_ERR_* code with a message
 * (nmt_set_error); nothing prints. A model is read-only once made, and may
 * be used by several threads at once. */
#ifndef NMT_SUBWORDS_H
#define NMT_SUBWORDS_H

#include <stddef.h>
#include <stdint.h>

#include "nmt/text.h"

typedef struct nmt_subwords nmt_subwords;

/* The lines to learn from: puts the next one in *line, *len and returns 1,
 * 0 at the end, or a negative NMT_ERR_* code with its message set. */
typedef int (*nmt_line_source)(void *ctx, const char **line, size_t *len);

/* Learns a unigram model of exactly n_pieces pieces (specials included) from
 * the lines next() gives, in memory (no file is written): characters seen
 * are all kept (coverage 1), identity normalization, no byte fallback, ids
 * 0-3 the specials, and a fixed number of threads, so that the same lines
 * always give the same model on any machine. A corpus too small for
 * n_pieces is refused with SentencePiece's reason (it names the largest
 * size it can make). */
int nmt_subwords_learn(nmt_subwords **out, int n_pieces, nmt_line_source next, void *ctx);

/* A model from its serialized form (a file made by spm_train, or the
 * "subwords" tensor of a model file). `name` stands for where it came from
 * in messages. Refused: bytes that are not a SentencePiece model or that
 * SentencePiece cannot load, a damaged normalization table, special ids
 * other than 0 <pad>, 1 <unk>, 2 <s>, 3 </s> (the message says how to train
 * a suitable model with spm_train), pieces nmt cannot store (holding a
 * newline) and whitespace treated as a suffix (words are told apart by their
 * first piece). */
int nmt_subwords_load(nmt_subwords **out, const void *bytes, size_t n, const char *name);
/* The same from a file. */
int nmt_subwords_load_file(nmt_subwords **out, const char *path);
void nmt_subwords_free(nmt_subwords *sw);

/* The serialized model, as it was loaded or learned. */
const unsigned char *nmt_subwords_bytes(const nmt_subwords *sw, size_t *n);
/* The number of pieces: the vocabulary size. */
int nmt_subwords_size(const nmt_subwords *sw);
/* The piece of an id ("▁Haus", "s", "<unk>"), or NULL when out of range. */
const char *nmt_subwords_piece(const nmt_subwords *sw, int32_t id);
/* "unigram", "bpe", "word" or "char". */
const char *nmt_subwords_type(const nmt_subwords *sw);
/* The normalization rule's name ("identity", "nmt_nfkc", ...; "" if none). */
const char *nmt_subwords_normalization(const nmt_subwords *sw);
/* Whether unknown characters become byte pieces rather than <unk>. */
int nmt_subwords_byte_fallback(const nmt_subwords *sw);

/* Growing ids of one line, reused from line to line. */
typedef struct nmt_ids {
    int32_t *id;
    size_t n, cap;
} nmt_ids;
void nmt_ids_free(nmt_ids *ids);

/* The piece ids of text[0..len) (no </s>): the best segmentation, or with
 * alpha > 0 one drawn from all segmentations with probabilities
 * proportional to p^alpha (subword regularisation, Kudo 2018; unigram
 * models only: NMT_ERR_ARG otherwise). Sampling draws from this thread's
 * SentencePiece generator: see nmt_subwords_run_seeded. The draws are
 * SentencePiece's SampleEncode's, made by nmt's own sampler for the models
 * it reproduces (every model nmt learns; src/data/unigram_sampler.h) and by
 * SentencePiece for the others. */
int nmt_subwords_encode_ids(const nmt_subwords *sw, const char *text, size_t len, float alpha,
                            nmt_ids *out);
/* nmt_subwords_encode_ids (the same ids, and with alpha > 0 the same draws)
 * with each piece's span of the text kept: begin [n] the byte of text at
 * which piece k's span starts (SentencePiece's own, in the text as given),
 * which tells the word each piece belongs to (nmt_span_words). */
int nmt_subwords_encode_spans(const nmt_subwords *sw, const char *text, size_t len, float alpha,
                              nmt_ids *out, nmt_ids *begin);
/* The best segmentation as strings, for showing and for --replace-unk: each
 * piece as the model spells it, except that an unknown stretch of text is
 * given as itself (its id is <unk>, its text what was there). */
int nmt_subwords_encode(const nmt_subwords *sw, const char *text, size_t len, nmt_tokens *out);
/* Joins pieces into text: U+2581 becomes a space, the one the model put
 * before the first word is dropped, <s> </s> <pad> vanish, <unk> shows as
 * " ⁇ ", and a string that is not a piece (a source word put in by
 * --replace-unk) is taken as it is. Returns a malloc'ed string, or NULL
 * with the error set. */
char *nmt_subwords_decode(const nmt_subwords *sw, const char *const *pieces, size_t n);

/* Whether a piece begins a word: it starts with U+2581, SentencePiece's
 * mark of a space before it. */
int nmt_piece_starts_word(const char *piece);

/* Runs fn(ctx) on a new thread whose SentencePiece random generator is
 * seeded with `seed`, and returns what fn returned (NMT_ERR_NOMEM when no
 * thread can be made). SentencePiece keeps one generator per thread, seeded
 * when the thread first draws from it, and offers no way to reseed it: a
 * fresh thread is how sampling becomes a pure function of (seed, the calls
 * made in order). One at a time: the seed is handed over in a global. */
int nmt_subwords_run_seeded(uint32_t seed, int (*fn)(void *ctx), void *ctx);

#endif
