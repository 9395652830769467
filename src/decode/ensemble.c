/* Whether models can decode together as an ensemble (nmt/decode.h): the
 * search averages their log-probabilities token by token and feeds every
 * member the same ids, so each id must mean the same unit to all of them,
 * and raw text must split into the same units for all of them. */
#include <stdio.h>
#include <string.h>

#include "nmt/decode.h"
#include "nmt/error.h"
#include "nmt/vocab.h"

/* "a and b have different source vocabularies: ..." for the first
 * difference between two vocabularies; 0 when they are the same. */
static int vocab_differs(const nmt_vocab *a, const nmt_vocab *b, const char *side,
                         const char *na, const char *nb)
{
    int n = nmt_vocab_size(a), m = nmt_vocab_size(b);
    if (n != m)
        return nmt_set_error(NMT_ERR_ARG, "%s and %s have different %s vocabularies: %d "
                             "tokens in %s, %d in %s", na, nb, side, n, na, m, nb);
    for (int32_t id = 0; id < n; id++) {
        const char *x = nmt_vocab_token(a, id), *y = nmt_vocab_token(b, id);
        if (strcmp(x, y))
            return nmt_set_error(NMT_ERR_ARG, "%s and %s have different %s vocabularies: id "
                                 "%d is \"%s\" in %s and \"%s\" in %s", na, nb, side, (int)id,
                                 x, na, y, nb);
    }
    return NMT_OK;
}

/* The reason why two members' units differ, or NMT_OK. */
static int units_differ(const nmt_model *a, const nmt_model *b, const char *na, const char *nb)
{
    if (!a->subwords != !b->subwords) {
        const nmt_model *sw = a->subwords ? a : b;
        return nmt_set_error(NMT_ERR_ARG, "%s and %s read different units: %s reads "
                             "SentencePiece pieces, %s words", na, nb, sw == a ? na : nb,
                             sw == a ? nb : na);
    }
    if (a->subwords) {
        size_t n, m;
        const unsigned char *x = nmt_subwords_bytes(a->subwords, &n);
        const unsigned char *y = nmt_subwords_bytes(b->subwords, &m);
        if (n != m || memcmp(x, y, n))
            return nmt_set_error(NMT_ERR_ARG, "%s and %s have different subword models "
                                 "(SentencePiece models of %zu and %zu bytes%s)", na, nb, n, m,
                                 n == m ? " that differ" : "");
    }
    if (!a->cfg.lowercase != !b->cfg.lowercase) {
        const char *lower = a->cfg.lowercase ? na : nb, *cased = a->cfg.lowercase ? nb : na;
        return nmt_set_error(NMT_ERR_ARG, "%s and %s split text differently: %s lowercases its "
                             "input, %s does not", na, nb, lower, cased);
    }
    int rc = vocab_differs(a->src_vocab, b->src_vocab, "source", na, nb);
    return rc ? rc : vocab_differs(a->tgt_vocab, b->tgt_vocab, "target", na, nb);
}

int nmt_ensemble_check(const nmt_model *const *models, const char *const *names, int n)
{
    char first[32], other[32];
    snprintf(first, sizeof first, "model 1");
    for (int k = 1; k < n; k++) {
        snprintf(other, sizeof other, "model %d", k + 1);
        int rc = units_differ(models[0], models[k], names ? names[0] : first,
                              names ? names[k] : other);
        if (rc)
            return rc;
    }
    return NMT_OK;
}
