/* A warning for text a model does not know. Every unit outside a model's
 * vocabulary becomes <unk>, and a model given the wrong text (another
 * language, the toy corpus through a Multi30k model, --init-from onto
 * another corpus) runs on without a word of complaint, producing nonsense;
 * a high share of <unk> in the input is the sign of it. */
#ifndef NMT_CLI_UNKNOWN_H
#define NMT_CLI_UNKNOWN_H

#include <stddef.h>

/* The share of <unk> above which the commands warn. Measured (nmt score,
 * source / target side): Multi30k val through a word model of all of
 * Multi30k's training words 3.2% / 1.4% (test 2016: 2.8% / 1.3%), through a
 * word model of its first 2000 pairs 11.4% / 6.5%, through an 8000-piece
 * subword model 0.0%; the mismatches: the toy test set through the Multi30k
 * word model 97.9% / 91.5%, Multi30k val through the toy model (and so
 * --init-from the toy model onto Multi30k) 100% / 99.9%. 30% is far from
 * both. A subword model leaves nearly nothing unknown whatever the text (the
 * toy test set through the subword model: 0.0%): this warning cannot see a
 * mismatch there. */
#ifndef CLI_UNK_WARN /* -DCLI_UNK_WARN=-1: always say the share (to measure it) */
#define CLI_UNK_WARN 0.30
#endif

/* Whether unk of n units is more than CLI_UNK_WARN. */
int cli_unknown_high(size_t unk, size_t n);

/* Warns on stderr when more than CLI_UNK_WARN of the n units of `what` (a
 * file, "the source text") are <unk>; `units` names them ("tokens",
 * "pieces"). Returns 1 if it warned, else 0. */
int cli_warn_unknown(const char *what, size_t unk, size_t n, const char *units);

#endif
