/* Gold links: Pharaoh lines read into links, and links checked against the
 * words of their pair (nmt/align.h, "quality against gold"). */
#include "nmt/align.h"

#include <stdlib.h>

#include "nmt/error.h"

int nmt_pharaoh_parse(const char *line, nmt_link **links, size_t *n)
{
    size_t cap = 0, count = 0;
    nmt_link *out = NULL;
    const char *p = line;
    *links = NULL;
    *n = 0;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
            p++;
        if (!*p)
            break;
        const char *start = p;
        long v[2];
        int ok = 1, possible = 0;
        for (int side = 0; side < 2 && ok; side++) {
            if (side == 1) {
                /* '-' sure; '?' possible (the JHU and WPT files), 'p'
                 * possible (the talp notation of the WPT03 gold) */
                if (*p == '-' || *p == '?' || *p == 'p')
                    possible = *p++ != '-';
                else
                    ok = 0;
            }
            if (ok && !(*p >= '0' && *p <= '9'))
                ok = 0;
            v[side] = 0;
            while (ok && *p >= '0' && *p <= '9') {
                v[side] = v[side] * 10 + (*p++ - '0');
                if (v[side] > 1000000)
                    ok = 0; /* no sentence is that long */
            }
        }
        if (ok && *p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
            ok = 0;
        if (!ok) {
            int len = 0;
            while (start[len] && start[len] != ' ' && start[len] != '\t' && len < 40)
                len++;
            free(out);
            return nmt_set_error(NMT_ERR_FORMAT,
                                 "'%.*s' is not an alignment link like 3-4 (sure) or 3?4, "
                                 "3p4 (possible)", len, start);
        }
        if (count == cap) {
            cap = cap ? 2 * cap : 16;
            nmt_link *grown = realloc(out, cap * sizeof *out);
            if (!grown) {
                free(out);
                return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
            }
            out = grown;
        }
        out[count].src = (int)v[0];
        out[count].tgt = (int)v[1];
        out[count].possible = possible;
        count++;
    }
    /* Duplicates would count twice in the sizes; drop them here too. A link
     * given as sure and as possible is sure: S is a part of P, so a sure
     * link is possible as well. */
    size_t kept = 0;
    for (size_t k = 0; k < count; k++) {
        size_t m = 0;
        while (m < kept && (out[m].src != out[k].src || out[m].tgt != out[k].tgt))
            m++;
        if (m == kept)
            out[kept++] = out[k];
        else
            out[m].possible &= out[k].possible;
    }
    if (!kept) {
        free(out);
        out = NULL;
    }
    *links = out;
    *n = kept;
    return NMT_OK;
}

long nmt_links_outside(const nmt_link *links, size_t n, int n_src, int n_tgt)
{
    for (size_t k = 0; k < n; k++)
        if (links[k].src < 0 || links[k].src >= n_src ||
            (n_tgt >= 0 && (links[k].tgt < 0 || links[k].tgt >= n_tgt)))
            return (long)k;
    return -1;
}

void nmt_links_reverse(nmt_link *links, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        int s = links[k].src;
        links[k].src = links[k].tgt;
        links[k].tgt = s;
    }
}
