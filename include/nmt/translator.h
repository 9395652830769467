/* Translating raw sentences with a model or an ensemble of models (what
 * `nmt translate` and `nmt compare` do): tokenize with the model's
 * settings, map to ids, decode in batches of similar length, map back
 * (optionally replacing <unk> by the most attended source word) and
 * detokenize. */
#ifndef NMT_TRANSLATOR_H
#define NMT_TRANSLATOR_H

#include <stddef.h>

#include "nmt/decode.h"
#include "nmt/model.h"

/* The defaults of a translator (nmt translate's, compare's and align's
 * search): the library's standard search (nmt/decode.h). */
#define NMT_TRANSLATE_BEAM NMT_DEFAULT_BEAM
#define NMT_TRANSLATE_ALPHA NMT_DEFAULT_ALPHA
#define NMT_TRANSLATE_MAX_RATIO NMT_DEFAULT_MAX_RATIO
#define NMT_TRANSLATE_MAX_EXTRA NMT_DEFAULT_MAX_EXTRA
#define NMT_TRANSLATE_BATCH 32

typedef struct nmt_translate_opts {
    nmt_decode_opts decode; /* beam, alpha, limits, n_best */
    int batch_size;         /* sentences per decoder call */
    int replace_unk;        /* needs an attention model */
    int alignments;         /* keep the best hypothesis's attention */
} nmt_translate_opts;

/* nmt_translate_opts with the defaults above. */
void nmt_translate_opts_default(nmt_translate_opts *o);

/* One hypothesis of one line. */
typedef struct nmt_translated_hyp {
    char *text;       /* detokenized, malloc'ed */
    float score;      /* log-probability */
    float norm_score; /* what the search ranked by */
} nmt_translated_hyp;

/* The result of one input line. An empty line (no tokens) gets n_hyp = 1,
 * an empty text and score 0, and was not decoded. */
typedef struct nmt_translated {
    int n_hyp;
    nmt_translated_hyp *hyp;   /* [n_hyp], best first */
    /* with opts.alignments, of the best hypothesis (n_src = 0 for an empty
     * line): tokens with "</s>" (the target's only when it finished) and
     * the attention [n_tgt, n_src] */
    int n_src, n_tgt;
    char **src, **tgt;
    float *att;
} nmt_translated;

void nmt_translated_free(nmt_translated *t);

typedef struct nmt_translator nmt_translator;

/* The model must outlive the translator. --replace-unk and alignments on a
 * model without attention are refused with NMT_ERR_ARG. */
int nmt_translator_create(nmt_translator **out, const nmt_model *m, const nmt_translate_opts *o);

/* A translator over an ensemble of n_models models (nmt/decode.h,
 * "Ensembles"): each step's log-probabilities are the mean of the members',
 * for every search, sampling and prefix the options ask for. The models
 * must pass nmt_ensemble_check (which the caller may call first, with file
 * names, for a message that names them) and outlive the translator; the
 * array is copied. Text is split and joined with models[0]'s units, which
 * are every member's. replace_unk and alignments need attention in every
 * member and use the mean of the members' default attention maps (each row
 * still sums to 1). n_models 1 is nmt_translator_create. Refusals:
 * NMT_ERR_ARG with the reason. */
int nmt_translator_create_ensemble(nmt_translator **out, const nmt_model *const *models,
                                   int n_models, const nmt_translate_opts *o);
void nmt_translator_free(nmt_translator *t);

/* Translates n raw lines into out[n] (in input order), calling progress (if
 * not NULL) after each batch with the number of lines done so far. */
int nmt_translator_run(nmt_translator *t, const char *const *lines, size_t n, nmt_translated *out,
                   void (*progress)(void *ctx, size_t done), void *ctx);

/* nmt_translator_run with a target prefix per line (prefixes[n]; NULL or ""
 * for none): each line's translations are forced through its prefix's
 * units (split as the model splits text), decoded from there on
 * (nmt_decode_input), and their text starts with the prefix exactly as
 * given but for the whitespace at its ends (nmt_units_join_prefixed). An
 * empty source line still gives an empty translation. */
int nmt_translator_run_prefixed(nmt_translator *t, const char *const *lines,
                                const char *const *prefixes, size_t n, nmt_translated *out,
                                void (*progress)(void *ctx, size_t done), void *ctx);

/* The source units of every line translated so far, and those <unk> to the
 * model (for a warning when the text does not fit it). */
void nmt_translator_unknown(const nmt_translator *t, size_t *unk, size_t *units);

#endif
