/* Raw text to a model's units and back: words for word models, SentencePiece
 * pieces for subword models (see units.h). */
#include "nmt/units.h"

#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"

int nmt_units_split(const nmt_model *m, const char *line, size_t len, nmt_tokens *out)
{
    if (!m->subwords)
        return nmt_tokenize(out, line, len, m->cfg.lowercase);
    if (!m->cfg.lowercase)
        return nmt_subwords_encode(m->subwords, line, len, out);
    char *lower = malloc(len + 1);
    if (!lower)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    size_t n = nmt_lowercase(lower, line, len);
    int rc = nmt_subwords_encode(m->subwords, lower, n, out);
    free(lower);
    return rc;
}

char *nmt_units_join(const nmt_model *m, const char *const *units, size_t n)
{
    char *text = m->subwords ? nmt_subwords_decode(m->subwords, units, n)
                             : nmt_detokenize(units, n);
    if (!text && !m->subwords)
        nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    return text;
}

char *nmt_units_join_prefixed(const nmt_model *m, const char *const *units, size_t n, size_t k,
                              const char *head)
{
    if (!head || k == 0 || k > n)
        return nmt_units_join(m, units, n);
    if (!m->subwords) {
        char *text = nmt_detokenize_head(units, n, k, head);
        if (!text)
            nmt_set_error(NMT_ERR_NOMEM, "out of memory");
        return text;
    }
    /* SentencePiece decodes piece by piece, so the first k pieces' text
     * begins the whole's; the head takes its place */
    char *all = nmt_units_join(m, units, n), *first = all ? nmt_units_join(m, units, k) : NULL;
    char *text = NULL;
    if (first) {
        size_t lf = strlen(first), lh = strlen(head);
        if (strncmp(all, first, lf) != 0) { /* cannot be; the model's text, then */
            text = all;
            all = NULL;
        } else if ((text = malloc(lh + strlen(all + lf) + 1))) {
            memcpy(text, head, lh);
            strcpy(text + lh, all + lf);
        } else {
            nmt_set_error(NMT_ERR_NOMEM, "out of memory");
        }
    }
    free(all);
    free(first);
    return text;
}

char *nmt_units_join_ids(const nmt_model *m, const int32_t *ids, size_t n)
{
    const char **units = malloc((n ? n : 1) * sizeof *units);
    if (!units) {
        nmt_set_error(NMT_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        units[i] = nmt_vocab_token(m->tgt_vocab, ids[i]);
    char *text = nmt_units_join(m, units, n);
    free(units);
    return text;
}

int nmt_vocab_of_pieces(const nmt_subwords *sw, nmt_vocab **out)
{
    int n = nmt_subwords_size(sw);
    const char **pieces = malloc((size_t)n * sizeof *pieces);
    if (!pieces)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    for (int id = 0; id < n; id++)
        pieces[id] = nmt_subwords_piece(sw, id);
    int rc = nmt_vocab_from_tokens(out, pieces, (size_t)n);
    free(pieces);
    return rc;
}

const char *nmt_units_name(const nmt_model *m)
{
    return m->subwords ? "pieces" : "tokens";
}
