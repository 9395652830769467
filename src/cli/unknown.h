/* A warning for text a model does not know. Every unit outside a model's
 * vocabulary becomes <unk>, and a model given the wrong text (another
 * language, the toy corpus through a Multi30k model, --init-from onto
 * another corpus) runs on without a word of complaint, producing nonsense;
 * a high share of <unk> in the input is the sign of it. */
#ifndef NMT_CLI_UNKNOWN_H
#define NMT_CLI_UNKNOWN_H

#include <stddef.h>

/* The share of <unk> above which the commands warn: far above real use,
 * where a model trained on a corpus of the text's kind leaves a few percent
 * of words unknown (fewer still with subwords), and far below the
 * mismatches, which leave nearly every word unknown (figures measured in
 * the commit that set it). Small corpora, or a small --max-vocab, leave
 * more unknown: 30% gives them room. */
#define CLI_UNK_WARN 0.30

/* Whether unk of n units is more than CLI_UNK_WARN. */
int cli_unknown_high(size_t unk, size_t n);

/* Warns on stderr when more than CLI_UNK_WARN of the n units of `what` (a
 * file, "the source text") are <unk>; `units` names them ("tokens",
 * "pieces"). Returns 1 if it warned, else 0. */
int cli_warn_unknown(const char *what, size_t unk, size_t n, const char *units);

#endif
