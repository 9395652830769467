/* Pieces to words: a subword model's alignment regrouped so that rows and
 * columns are the words a person or a gold file speaks of (nmt/align.h,
 * "pieces and words"). */
#include "nmt/align.h"

#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"
#include "nmt/subwords.h"

#define WORD_MARK "\xe2\x96\x81" /* U+2581 */

/* Groups n pieces into words: word_of[k] is piece k's word; returns the
 * number of words. */
static int group_words(const char *const *pieces, int n, int *word_of)
{
    int words = 0;
    for (int k = 0; k < n; k++) {
        if (k == 0 || nmt_piece_starts_word(pieces[k]) || !strcmp(pieces[k], "</s>") ||
            !strcmp(pieces[k - 1], "</s>"))
            words++;
        word_of[k] = words - 1;
    }
    return words;
}

int nmt_align_word_count(const char *const *units, int n, int pieces)
{
    if (!pieces || n <= 0)
        return n > 0 ? n : 0;
    int words = 1; /* the first piece begins one, as in group_words */
    for (int k = 1; k < n; k++)
        words += nmt_piece_starts_word(units[k]) || !strcmp(units[k], "</s>") ||
                 !strcmp(units[k - 1], "</s>");
    return words;
}

/* The words' strings: their pieces joined, each piece's leading mark
 * dropped (a word that was only a mark keeps it, so that it shows). */
static int join_words(const char *const *pieces, int n, const int *word_of, char **words)
{
    const size_t mark = strlen(WORD_MARK);
    for (int k = 0, w = 0; k < n; w++) {
        int end = k;
        size_t len = 0;
        while (end < n && word_of[end] == w)
            len += strlen(pieces[end++]);
        char *s = malloc(len + 1), *o = s;
        if (!s)
            return nmt_set_error(NMT_ERR_NOMEM, "out of memory for words");
        for (; k < end; k++) {
            const char *p = pieces[k] + (nmt_piece_starts_word(pieces[k]) ? mark : 0);
            size_t l = strlen(p);
            memcpy(o, p, l);
            o += l;
        }
        if (o == s && len >= mark) {
            memcpy(o, WORD_MARK, mark);
            o += mark;
        }
        *o = '\0';
        words[w] = s;
    }
    return NMT_OK;
}

int nmt_align_words(const nmt_alignment *p, nmt_word_alignment *w)
{
    memset(w, 0, sizeof *w);
    int rc = nmt_alignment_check(p);
    if (rc)
        return rc;
    w->src_word = malloc((size_t)p->n_src * sizeof *w->src_word);
    w->tgt_word = malloc((size_t)p->n_tgt * sizeof *w->tgt_word);
    if (!w->src_word || !w->tgt_word)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for words");
    int ns = group_words(p->src, p->n_src, w->src_word);
    int nt = group_words(p->tgt, p->n_tgt, w->tgt_word);
    w->src = calloc((size_t)ns, sizeof *w->src);
    w->tgt = calloc((size_t)nt, sizeof *w->tgt);
    w->att = calloc((size_t)ns * (size_t)nt, sizeof *w->att);
    int *pieces = calloc((size_t)nt, sizeof *pieces);
    if (!w->src || !w->tgt || !w->att || !pieces) {
        free(pieces);
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for words");
    }
    w->a = (nmt_alignment){ns, nt, (const char *const *)w->src, (const char *const *)w->tgt,
                           w->att};
    /* sums over the pieces of both words, then each row over its pieces */
    for (int i = 0; i < p->n_tgt; i++) {
        float *row = w->att + (size_t)w->tgt_word[i] * (size_t)ns;
        pieces[w->tgt_word[i]]++;
        for (int j = 0; j < p->n_src; j++)
            row[w->src_word[j]] += p->att[(size_t)i * (size_t)p->n_src + (size_t)j];
    }
    for (int i = 0; i < nt; i++)
        for (int j = 0; j < ns; j++)
            w->att[(size_t)i * (size_t)ns + (size_t)j] /= (float)pieces[i];
    free(pieces);
    if ((rc = join_words(p->src, p->n_src, w->src_word, w->src)) ||
        (rc = join_words(p->tgt, p->n_tgt, w->tgt_word, w->tgt)))
        return rc;
    return NMT_OK;
}

void nmt_word_alignment_free(nmt_word_alignment *w)
{
    for (int k = 0; w->src && k < w->a.n_src; k++)
        free(w->src[k]);
    for (int k = 0; w->tgt && k < w->a.n_tgt; k++)
        free(w->tgt[k]);
    free(w->src);
    free(w->tgt);
    free(w->att);
    free(w->src_word);
    free(w->tgt_word);
    memset(w, 0, sizeof *w);
}
