/* Alignment quality: the alignment error rate, precision and recall of
 * hypothesis links against gold ones, summed over a corpus (nmt/align.h,
 * "quality against gold"). */
#include "nmt/align.h"

#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"

static int link_cmp(const void *x, const void *y)
{
    const nmt_link *a = x, *b = y;
    if (a->src != b->src)
        return a->src < b->src ? -1 : 1;
    return (a->tgt > b->tgt) - (a->tgt < b->tgt);
}

/* Sorts a copy and drops repeats; returns the count kept. A link given as
 * sure and as possible is kept sure (sure links are possible too). */
static size_t sorted_set(nmt_link *dst, const nmt_link *src, size_t n)
{
    if (!n)
        return 0;
    memcpy(dst, src, n * sizeof *dst);
    qsort(dst, n, sizeof *dst, link_cmp);
    size_t kept = 1;
    for (size_t k = 1; k < n; k++) {
        if (link_cmp(&dst[k], &dst[kept - 1]))
            dst[kept++] = dst[k];
        else
            dst[kept - 1].possible &= dst[k].possible;
    }
    return kept;
}

/* Whether a word (source side or target side) stands in one of the gold
 * links. Linear: a pair has tens of links, and this runs once a link. */
static int annotated(const nmt_link *g, size_t n, int word, int target)
{
    for (size_t k = 0; k < n; k++)
        if ((target ? g[k].tgt : g[k].src) == word)
            return 1;
    return 0;
}

int nmt_aer_add(nmt_aer *acc, const nmt_link *hyp, size_t n_hyp, const nmt_link *gold,
                size_t n_gold)
{
    return nmt_aer_add_opts(acc, hyp, n_hyp, gold, n_gold, 0);
}

int nmt_aer_add_opts(nmt_aer *acc, const nmt_link *hyp, size_t n_hyp, const nmt_link *gold,
                     size_t n_gold, unsigned flags)
{
    nmt_link *h = malloc((n_hyp + n_gold + 1) * sizeof *h);
    if (!h)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    nmt_link *g = h + n_hyp;
    size_t nh = sorted_set(h, hyp, n_hyp), ng = sorted_set(g, gold, n_gold);
    if (flags & NMT_AER_PARTIAL) {
        /* partial annotation: a word no gold link names was not annotated,
         * so a link on it is neither right nor wrong and is left out */
        size_t kept = 0;
        for (size_t x = 0; x < nh; x++)
            if (annotated(g, ng, h[x].src, 0) && annotated(g, ng, h[x].tgt, 1))
                h[kept++] = h[x];
        nh = kept;
    }
    nmt_aer one = {.pairs = 1, .hyp = nh};
    for (size_t y = 0; y < ng; y++)
        one.gold += !g[y].possible;
    one.possible = ng;
    for (size_t x = 0, y = 0; x < nh && y < ng;) {
        int c = link_cmp(&h[x], &g[y]);
        if (c == 0) {
            one.both += !g[y].possible;
            one.both_possible++;
        }
        x += c <= 0;
        y += c >= 0;
    }
    free(h);
    nmt_aer_merge(acc, &one);
    return NMT_OK;
}

void nmt_aer_merge(nmt_aer *acc, const nmt_aer *more)
{
    acc->pairs += more->pairs;
    acc->hyp += more->hyp;
    acc->gold += more->gold;
    acc->both += more->both;
    acc->possible += more->possible;
    acc->both_possible += more->both_possible;
}

/* Och and Ney (2003): AER = 1 - (|A∩S| + |A∩P|) / (|A| + |S|). */
double nmt_aer_rate(const nmt_aer *acc)
{
    if (acc->hyp + acc->gold == 0)
        return 0.0;
    return 1.0 - (double)(acc->both + acc->both_possible) / (double)(acc->hyp + acc->gold);
}

double nmt_aer_precision(const nmt_aer *acc)
{
    return acc->hyp ? (double)acc->both_possible / (double)acc->hyp : 1.0;
}

double nmt_aer_recall(const nmt_aer *acc)
{
    return acc->gold ? (double)acc->both / (double)acc->gold : 1.0;
}
