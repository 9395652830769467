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

/* Sorts a copy and drops repeats; returns the count kept. */
static size_t sorted_set(nmt_link *dst, const nmt_link *src, size_t n)
{
    if (!n)
        return 0;
    memcpy(dst, src, n * sizeof *dst);
    qsort(dst, n, sizeof *dst, link_cmp);
    size_t kept = 1;
    for (size_t k = 1; k < n; k++)
        if (link_cmp(&dst[k], &dst[kept - 1]))
            dst[kept++] = dst[k];
    return kept;
}

int nmt_aer_add(nmt_aer *acc, const nmt_link *hyp, size_t n_hyp, const nmt_link *gold,
                size_t n_gold)
{
    nmt_link *h = malloc((n_hyp + n_gold + 1) * sizeof *h);
    if (!h)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    nmt_link *g = h + n_hyp;
    size_t nh = sorted_set(h, hyp, n_hyp), ng = sorted_set(g, gold, n_gold);
    size_t both = 0;
    for (size_t x = 0, y = 0; x < nh && y < ng;) {
        int c = link_cmp(&h[x], &g[y]);
        if (c == 0)
            both++;
        x += c <= 0;
        y += c >= 0;
    }
    free(h);
    acc->pairs++;
    acc->hyp += nh;
    acc->gold += ng;
    acc->both += both;
    return NMT_OK;
}

double nmt_aer_rate(const nmt_aer *acc)
{
    if (acc->hyp + acc->gold == 0)
        return 0.0;
    return 1.0 - 2.0 * (double)acc->both / (double)(acc->hyp + acc->gold);
}

double nmt_aer_precision(const nmt_aer *acc)
{
    return acc->hyp ? (double)acc->both / (double)acc->hyp : 1.0;
}

double nmt_aer_recall(const nmt_aer *acc)
{
    return acc->gold ? (double)acc->both / (double)acc->gold : 1.0;
}
