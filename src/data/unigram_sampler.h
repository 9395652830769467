/* Internal: nmt's own sampler of a SentencePiece unigram model's
 * segmentations (subword regularisation), the same draws as SentencePiece
 * 0.1.97's SampleEncode(text, -1, alpha) given the same generator, without
 * its per-call allocations: the vocabulary's trie is built once per model,
 * and a lattice's buffers are kept from line to line (nmt_lattice).
 *
 * It covers the models nmt learns: unigram, no normalization table (so only
 * SentencePiece's whitespace handling), no user-defined pieces, no byte
 * fallback, spaces marked before words. subwords.cc decides which models
 * those are and leaves every other one to SentencePiece. */
#ifndef NMT_UNIGRAM_SAMPLER_H
#define NMT_UNIGRAM_SAMPLER_H

#include <stddef.h>

#include "nmt/subwords.h"

/* SentencePiece's piece types (ModelProto.SentencePiece.Type). */
enum {
    NMT_PIECE_NORMAL = 1,
    NMT_PIECE_UNKNOWN = 2,
    NMT_PIECE_CONTROL = 3,
    NMT_PIECE_USER_DEFINED = 4,
    NMT_PIECE_UNUSED = 5,
    NMT_PIECE_BYTE = 6,
};

/* A model as its protobuf says (the pieces in id order). */
typedef struct nmt_unigram_spec {
    size_t n;
    const char *const *piece;
    const size_t *len;
    const float *score;
    const int *type;
    /* NormalizerSpec's whitespace flags */
    int add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces;
} nmt_unigram_spec;

typedef struct nmt_unigram nmt_unigram;
typedef struct nmt_lattice nmt_lattice;

/* The sampler of a model: NMT_OK with *out NULL when the model has what
 * this sampler does not reproduce (user-defined pieces, a piece holding a
 * NUL byte, no single unknown piece), NMT_ERR_NOMEM without a message. */
int nmt_unigram_new(nmt_unigram **out, const nmt_unigram_spec *spec);
void nmt_unigram_free(nmt_unigram *u);

/* A lattice's buffers, grown as lines need and kept (NULL when out of
 * memory). One per thread. */
nmt_lattice *nmt_lattice_new(void);
void nmt_lattice_free(nmt_lattice *l);

/* A uniform double in [0, 1): libstdc++'s generate_canonical<double, 53>
 * over the generator SentencePiece would draw from. */
typedef double (*nmt_uniform_fn)(void *ctx);

/* Lines longer than this (in bytes) are left to SentencePiece: offsets
 * here are 32-bit. */
#define NMT_UNIGRAM_MAX_BYTES ((size_t)1 << 30)

/* One segmentation of text[0..len) drawn with probability proportional to
 * p^alpha, as piece ids into ids (runs of unknown pieces made one, as
 * SentencePiece does), and with begin non-NULL the byte of text at which
 * each piece's span starts. NMT_OK; 1 for a line over NMT_UNIGRAM_MAX_BYTES
 * (nothing drawn); or NMT_ERR_NOMEM without a message. */
int nmt_unigram_sample(const nmt_unigram *u, nmt_lattice *l, const char *text, size_t len,
                       float alpha, nmt_uniform_fn uniform, void *ctx, nmt_ids *ids,
                       nmt_ids *begin);

/* subwords.cc's: whether a model is sampled by this sampler (1) or by
 * SentencePiece (0), and a switch to make SentencePiece sample a model this
 * sampler could (for the tests and benchmarks that compare the two). */
int nmt_subwords_own_sampler(const nmt_subwords *sw);
void nmt_subwords_use_own_sampler(nmt_subwords *sw, int on);

#endif
