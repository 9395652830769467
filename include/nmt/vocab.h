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
int nmt_vocab_size(const nmt_vocab *v);
const char *nmt_vocab_token(const nmt_vocab *v, int32_t id);
/* The id of a token, or NMT_UNK. */
int32_t nmt_vocab_id(const nmt_vocab *v, const char *tok, size_t len);
void nmt_vocab_free(nmt_vocab *v);

#endif
