/* A model's units of text: the tokenizer's words, or the pieces of its
 * SentencePiece model. Every command goes from raw text to units and back
 * through these calls, so that word models and subword models both take
 * raw text and give raw text. */
#ifndef NMT_UNITS_H
#define NMT_UNITS_H

#include <stddef.h>
#include <stdint.h>

#include "nmt/model.h"
#include "nmt/text.h"

/* Splits a raw line into the model's units, lowercased first if the model
 * lowercases: its words (nmt_tokenize) or its pieces
 * (nmt_subwords_encode). Units keep their spelling when the model does not
 * know them; nmt_vocab_id gives <unk> for those. */
int nmt_units_split(const nmt_model *m, const char *line, size_t len, nmt_tokens *out);

/* Joins units into text a person reads: detokenized words (nmt_detokenize)
 * or decoded pieces (nmt_subwords_decode). A unit the vocabulary lacks (a
 * source word put in for <unk>) is taken as written. Returns a malloc'ed
 * string, or NULL with the error set. */
char *nmt_units_join(const nmt_model *m, const char *const *units, size_t n);

/* nmt_units_join with the first k units written as `head` (a target
 * prefix as its writer wrote it, which those units were split from), byte
 * for byte, and the units after them joined to it as nmt_units_join joins
 * them: so the text starts with head whatever the units make of it ("</s>"
 * is four words to the tokenizer, which would join them as "</s >";
 * SentencePiece would drop doubled spaces, and a lowercasing model the
 * capitals). k 0 or head NULL: nmt_units_join. */
char *nmt_units_join_prefixed(const nmt_model *m, const char *const *units, size_t n, size_t k,
                              const char *head);

/* The same for target ids (a translation without </s>). */
char *nmt_units_join_ids(const nmt_model *m, const int32_t *ids, size_t n);

/* A vocabulary of a subword model's pieces, in id order. */
int nmt_vocab_of_pieces(const nmt_subwords *sw, nmt_vocab **out);

/* "tokens" (the tokenizer's words and marks) or "pieces": what the model's
 * units are called in messages. */
const char *nmt_units_name(const nmt_model *m);

#endif
