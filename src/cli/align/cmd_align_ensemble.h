/* nmt align --ensemble: the -m models translate every chosen source
 * together (nmt_decoder_create_ensemble), before each model's attention on
 * those translations is drawn by the usual loop over the models. */
#ifndef NMT_CLI_ALIGN_ENSEMBLE_H
#define NMT_CLI_ALIGN_ENSEMBLE_H

#include <stddef.h>
#include <stdint.h>

#include "align/cmd_align_args.h"
#include "align/cmd_align_input.h"

/* The ensemble's translation of each chosen pair. */
typedef struct ensemble_targets {
    int32_t **ids; /* [n] target ids, without </s> */
    int *len;      /* [n] */
    size_t n;
} ensemble_targets;

/* Loads every -m model, refuses models that cannot translate together or
 * have no attention (naming the files), and translates the chosen sources
 * with the search of nmt translate (a->beam). Returns 0, or -1 after
 * saying what is wrong on stderr. */
int align_ensemble_translate(const align_args *a, const inputs *in, ensemble_targets *out);
void align_ensemble_free(ensemble_targets *t);

#endif
