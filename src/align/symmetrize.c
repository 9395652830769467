/* Symmetrisation of two directions' links (nmt/symmetrize.h). The pair is
 * held as a grid of source words by target words, each cell a few bits:
 * which direction has the link, and whether the alignment being built has
 * it; beside it, how many links each word has in that alignment, which is
 * what "a word not linked yet" asks. Written from the description of the
 * heuristics (Koehn et al. 2003; the Moses manual's grow-diag-final), not
 * from any program's code. */
#include "nmt/symmetrize.h"

#include <stdlib.h>

#include "nmt/error.h"

const char *const nmt_symmetrize_names[] = {"intersection", "union", "grow-diag",
                                             "grow-diag-final", "grow-diag-final-and", NULL};

enum { FWD = 1, REV = 2, IN = 4 };
#define MAX_CELLS ((size_t)1 << 26)

typedef struct grid {
    int ns, nt;
    unsigned char *cell; /* [ns * nt], cell[i * nt + j] for link i-j */
    int *row, *col;      /* [ns], [nt]: the alignment's links of each word */
} grid;

static void add(grid *g, int i, int j)
{
    g->cell[(size_t)i * g->nt + j] |= IN;
    g->row[i]++;
    g->col[j]++;
}

/* Grows the alignment from each of its links into the neighbouring cells
 * (the four sides and the four corners) that either direction has and
 * that link a word (source or target) with no link yet, sweeping the grid
 * in order (source words, then target words) until a sweep adds none. A
 * link added counts at once: the words it links are linked from then on,
 * and the sweep grows from it when it reaches it. */
static void grow_diag(grid *g)
{
    static const int di[8] = {-1, 0, 1, 0, -1, -1, 1, 1};
    static const int dj[8] = {0, -1, 0, 1, -1, 1, -1, 1};
    for (int added = 1; added;) {
        added = 0;
        for (int i = 0; i < g->ns; i++)
            for (int j = 0; j < g->nt; j++) {
                if (!(g->cell[(size_t)i * g->nt + j] & IN))
                    continue;
                for (int k = 0; k < 8; k++) {
                    int a = i + di[k], b = j + dj[k];
                    if (a < 0 || b < 0 || a >= g->ns || b >= g->nt)
                        continue;
                    unsigned char c = g->cell[(size_t)a * g->nt + b];
                    if ((c & IN) || !(c & (FWD | REV)) || (g->row[a] && g->col[b]))
                        continue;
                    add(g, a, b);
                    added = 1;
                }
            }
    }
}

/* Adds the links of one direction that link a word with no link yet
 * (both words, with `both`), in the grid's order. */
static void final(grid *g, unsigned char dir, int both)
{
    for (int i = 0; i < g->ns; i++)
        for (int j = 0; j < g->nt; j++) {
            unsigned char c = g->cell[(size_t)i * g->nt + j];
            if ((c & IN) || !(c & dir))
                continue;
            int free_src = !g->row[i], free_tgt = !g->col[j];
            if (both ? free_src && free_tgt : free_src || free_tgt)
                add(g, i, j);
        }
}

/* The grid's size from the largest indices; -1 for a negative one. */
static int extent(const nmt_link *l, size_t n, int *ns, int *nt)
{
    for (size_t k = 0; k < n; k++) {
        if (l[k].src < 0 || l[k].tgt < 0)
            return -1;
        if (l[k].src >= *ns)
            *ns = l[k].src + 1;
        if (l[k].tgt >= *nt)
            *nt = l[k].tgt + 1;
    }
    return 0;
}

int nmt_symmetrize(nmt_symmetrize_method method, const nmt_link *fwd, size_t n_fwd,
                   const nmt_link *rev, size_t n_rev, nmt_link **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    if ((int)method < 0 || method > NMT_SYM_GROW_DIAG_FINAL_AND)
        return nmt_set_error(NMT_ERR_ARG, "unknown symmetrisation method %d", (int)method);
    grid g = {0};
    if (extent(fwd, n_fwd, &g.ns, &g.nt) || extent(rev, n_rev, &g.ns, &g.nt))
        return nmt_set_error(NMT_ERR_ARG, "a link with a negative index");
    if (!g.ns || !g.nt)
        return NMT_OK; /* both empty */
    if ((size_t)g.ns * (size_t)g.nt > MAX_CELLS)
        return nmt_set_error(NMT_ERR_ARG, "a pair of %d by %d words is too long to symmetrise",
                             g.ns, g.nt);
    g.cell = calloc((size_t)g.ns * g.nt, 1);
    g.row = calloc((size_t)g.ns, sizeof *g.row);
    g.col = calloc((size_t)g.nt, sizeof *g.col);
    int rc = NMT_OK;
    if (!g.cell || !g.row || !g.col) {
        rc = nmt_set_error(NMT_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (size_t k = 0; k < n_fwd; k++)
        g.cell[(size_t)fwd[k].src * g.nt + fwd[k].tgt] |= FWD;
    for (size_t k = 0; k < n_rev; k++)
        g.cell[(size_t)rev[k].src * g.nt + rev[k].tgt] |= REV;
    size_t n = 0;
    for (int i = 0; i < g.ns; i++)
        for (int j = 0; j < g.nt; j++) {
            unsigned char c = g.cell[(size_t)i * g.nt + j];
            if (method == NMT_SYM_UNION ? c & (FWD | REV) : (c & FWD) && (c & REV))
                add(&g, i, j);
        }
    if (method >= NMT_SYM_GROW_DIAG)
        grow_diag(&g);
    if (method >= NMT_SYM_GROW_DIAG_FINAL) {
        int both = method == NMT_SYM_GROW_DIAG_FINAL_AND;
        final(&g, FWD, both);
        final(&g, REV, both);
    }
    for (int i = 0; i < g.ns; i++)
        n += (size_t)g.row[i];
    if (n && !(*out = malloc(n * sizeof **out))) {
        rc = nmt_set_error(NMT_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int i = 0; i < g.ns; i++)
        for (int j = 0; j < g.nt; j++)
            if (g.cell[(size_t)i * g.nt + j] & IN)
                (*out)[(*n_out)++] = (nmt_link){i, j, 0};
done:
    free(g.cell);
    free(g.row);
    free(g.col);
    return rc;
}

void nmt_links_agree(nmt_link *a, size_t *n_a, const nmt_link *b, size_t n_b)
{
    size_t kept = 0;
    for (size_t k = 0; k < *n_a; k++) {
        int in_b = 0, seen = 0;
        for (size_t m = 0; m < n_b && !in_b; m++)
            in_b = a[k].src == b[m].src && a[k].tgt == b[m].tgt;
        for (size_t m = 0; m < kept && !seen; m++)
            seen = a[k].src == a[m].src && a[k].tgt == a[m].tgt;
        if (in_b && !seen)
            a[kept++] = (nmt_link){a[k].src, a[k].tgt, 0};
    }
    *n_a = kept;
}
