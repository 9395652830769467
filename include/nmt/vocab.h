/* A vocabulary: token strings <-> ids. Ids 0-3 are always <pad>, <unk>, <s>,
 * </s>; the rest are ordered by falling frequency, ties broken by the token's
 * bytes (memcmp order), so the same corpus always gives the same ids. */
#ifndef NMT_VOCAB_H
#define NMT_VOCAB_H

#include <stddef.h>
#include <stdint.h>

enum { NMT_PAD = 0, NMT_UNK = 1, NMT_BOS = 2, NMT_EOS = 3, NMT_N_SPECIAL = 4 };

typedef struct nmt_vocab nmt_vocab;

/* A vocabulary made of the given tokens in id order; tokens[0..3] must be the
 * four specials. Used by the model loader. */
int nmt_vocab_from_tokens(nmt_vocab **out, const char *const *tokens, size_t n);
/* A copy of v (its tokens in id order), for a second owner: a joint
 * vocabulary's two sides. */
int nmt_vocab_copy(nmt_vocab **out, const nmt_vocab *v);
int nmt_vocab_size(const nmt_vocab *v);
const char *nmt_vocab_token(const nmt_vocab *v, int32_t id);
/* The id of a token, or NMT_UNK. */
int32_t nmt_vocab_id(const nmt_vocab *v, const char *tok, size_t len);
void nmt_vocab_free(nmt_vocab *v);

/* Counting the tokens of a corpus, to build its vocabulary afterwards. Each
 * new token type gets a provisional id (0, 1, 2, ... in order of first
 * appearance) so a reader can store ids in one pass and remap them once the
 * vocabulary is known. The tokens are copied; lookups never allocate. */
typedef struct nmt_vocab_counter nmt_vocab_counter;

int nmt_vocab_counter_new(nmt_vocab_counter **out);
/* Counts one occurrence of tok[0..len); returns its provisional id (>= 0) or
 * a negative NMT_ERR_* code. */
int32_t nmt_vocab_counter_add(nmt_vocab_counter *c, const char *tok, size_t len);
/* The number of distinct token types counted so far. */
size_t nmt_vocab_counter_types(const nmt_vocab_counter *c);
/* Builds the vocabulary: the four specials, then the tokens seen at least
 * min_count times by falling count, ties by memcmp order of their bytes, cut
 * to max_vocab ids in all (0: no limit; else at least NMT_N_SPECIAL). If remap
 * is not NULL, *remap is a malloc'ed array [types] that maps each provisional
 * id to its final id (NMT_UNK for a dropped token). A token spelled like a
 * special ("<unk>") maps to that special. */
int nmt_vocab_counter_build(const nmt_vocab_counter *c, int min_count, int max_vocab,
                            nmt_vocab **out, int32_t **remap);
void nmt_vocab_counter_free(nmt_vocab_counter *c);

#endif
