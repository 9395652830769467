/* Translating raw sentences with a model, shared by `nmt translate` and
 * `nmt compare`: tokenize with the model's settings, map to ids, decode in
 * batches of similar length, map back (optionally replacing <unk> by the
 * most attended source word) and detokenize. */
#ifndef NMT_CLI_TRANSLATE_H
#define NMT_CLI_TRANSLATE_H

#include <stddef.h>

#include "nmt/decode.h"
#include "nmt/model.h"

/* The defaults of `nmt translate` (and `nmt compare`, and `nmt align`'s
 * search): the library's standard search (nmt/decode.h). */
#define TRANSLATE_BEAM NMT_DEFAULT_BEAM
#define TRANSLATE_ALPHA NMT_DEFAULT_ALPHA
#define TRANSLATE_MAX_RATIO NMT_DEFAULT_MAX_RATIO
#define TRANSLATE_MAX_EXTRA NMT_DEFAULT_MAX_EXTRA
#define TRANSLATE_BATCH 32

typedef struct translate_opts {
    nmt_decode_opts decode; /* beam, alpha, limits, n_best */
    int batch_size;         /* sentences per decoder call */
    int replace_unk;        /* needs an attention model */
    int alignments;         /* keep the best hypothesis's attention */
} translate_opts;

/* translate_opts with the defaults above. */
void translate_opts_default(translate_opts *o);

/* One hypothesis of one line. */
typedef struct translated_hyp {
    char *text;       /* detokenized, malloc'ed */
    float score;      /* log-probability */
    float norm_score; /* what the search ranked by */
} translated_hyp;

/* The result of one input line. An empty line (no tokens) gets n_hyp = 1,
 * an empty text and score 0, and was not decoded. */
typedef struct translated {
    int n_hyp;
    translated_hyp *hyp;   /* [n_hyp], best first */
    /* with opts.alignments, of the best hypothesis (n_src = 0 for an empty
     * line): tokens with "</s>" (the target's only when it finished) and
     * the attention [n_tgt, n_src] */
    int n_src, n_tgt;
    char **src, **tgt;
    float *att;
} translated;

void translated_free(translated *t);

typedef struct translator translator;

/* The model must outlive the translator. --replace-unk and alignments on a
 * model without attention are refused with NMT_ERR_ARG. */
int translator_create(translator **out, const nmt_model *m, const translate_opts *o);
void translator_free(translator *t);

/* Translates n raw lines into out[n] (in input order), calling progress (if
 * not NULL) after each batch with the number of lines done so far. */
int translator_run(translator *t, const char *const *lines, size_t n, translated *out,
                   void (*progress)(void *ctx, size_t done), void *ctx);

/* The source units of every line translated so far, and those <unk> to the
 * model (for a warning when the text does not fit it). */
void translator_unknown(const translator *t, size_t *unk, size_t *units);

#endif
