/* Alignments as data: the check every writer makes, TSV, JSON Lines, the
 * hard links and their Pharaoh lines, and which links a view draws as gold
 * (nmt/align.h). The heatmaps (terminal, SVG, PNG) are the command line's
 * (src/cli/draw/: heatmap.c, svg.c, png.c). */
#include "nmt/align.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"

/* Every writer ends with this: a FILE* remembers a failed write, so checking
 * once at the end catches a full disk without testing every fprintf. */
static int write_status(FILE *f)
{
    if (ferror(f))
        return nmt_set_error(NMT_ERR_IO, "writing alignments failed");
    return NMT_OK;
}

int nmt_alignment_check(const nmt_alignment *a)
{
    if (!a || a->n_src < 1 || a->n_tgt < 1 || !a->src || !a->tgt || !a->att)
        return nmt_set_error(NMT_ERR_ARG, "an alignment needs at least \"</s>\" on each side");
    for (size_t k = 0; k < (size_t)a->n_src * (size_t)a->n_tgt; k++)
        if (!isfinite(a->att[k]))
            return nmt_set_error(NMT_ERR_NUMERIC, "the attention weights hold NaN or Inf");
    return NMT_OK;
}

/* ---- TSV ------------------------------------------------------------------ */

/* A token as a TSV cell: tabs and line breaks would break the table. */
static void put_tsv_cell(FILE *f, const char *tok)
{
    for (const char *p = tok; *p; p++)
        fputc(*p == '\t' || *p == '\n' || *p == '\r' ? ' ' : *p, f);
}

int nmt_align_write_tsv(FILE *f, const nmt_alignment *a)
{
    int rc = nmt_alignment_check(a);
    if (rc)
        return rc;
    for (int j = 0; j < a->n_src; j++) {
        fputc('\t', f);
        put_tsv_cell(f, a->src[j]);
    }
    fputc('\n', f);
    for (int i = 0; i < a->n_tgt; i++) {
        put_tsv_cell(f, a->tgt[i]);
        for (int j = 0; j < a->n_src; j++)
            fprintf(f, "\t%.6f", (double)a->att[(size_t)i * a->n_src + j]);
        fputc('\n', f);
    }
    fputc('\n', f);
    return write_status(f);
}

/* ---- JSON Lines ----------------------------------------------------------- */

static void put_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        default:
            /* UTF-8 passes through (JSON text is UTF-8); other control
             * characters must be escaped. */
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

static void put_json_tokens(FILE *f, const char *const *tok, int n)
{
    fputc('[', f);
    for (int k = 0; k < n; k++) {
        if (k)
            fputs(", ", f);
        put_json_string(f, tok[k]);
    }
    fputc(']', f);
}

int nmt_align_write_json(FILE *f, const nmt_alignment *a)
{
    return nmt_align_write_json_view(f, a, NULL);
}

int nmt_align_write_json_view(FILE *f, const nmt_alignment *a, const nmt_align_view *v)
{
    int rc = nmt_alignment_check(a);
    if (rc)
        return rc;
    fputc('{', f);
    if (v && v->line > 0)
        fprintf(f, "\"line\": %ld, ", v->line);
    if (v && v->model) {
        fputs("\"model\": ", f);
        put_json_string(f, v->model);
        fputs(", ", f);
    }
    fputs("\"source\": ", f);
    put_json_tokens(f, a->src, a->n_src);
    fputs(", \"target\": ", f);
    put_json_tokens(f, a->tgt, a->n_tgt);
    fputs(", \"attention\": [", f);
    for (int i = 0; i < a->n_tgt; i++) {
        fputs(i ? ", [" : "[", f);
        for (int j = 0; j < a->n_src; j++)
            /* 9 significant digits read back as the same float. */
            fprintf(f, j ? ", %.9g" : "%.9g", (double)a->att[(size_t)i * a->n_src + j]);
        fputc(']', f);
    }
    fputc(']', f);
    if (v && v->has_gold) {
        fputs(", \"gold\": [", f);
        for (size_t k = 0; k < v->n_gold; k++)
            fprintf(f, k ? ", [%d, %d]" : "[%d, %d]", v->gold[k].src, v->gold[k].tgt);
        fputc(']', f);
        /* the possible ones again, apart: "gold" stays every link, as a
         * reader of the sure-only files had it */
        if (nmt_align_view_has_possible(v)) {
            fputs(", \"possible\": [", f);
            for (size_t k = 0, n = 0; k < v->n_gold; k++)
                if (v->gold[k].possible)
                    fprintf(f, n++ ? ", [%d, %d]" : "[%d, %d]", v->gold[k].src,
                            v->gold[k].tgt);
            fputc(']', f);
        }
    }
    fputs("}\n", f);
    return write_status(f);
}

/* ---- hard links and Pharaoh ----------------------------------------------- */

int nmt_align_hard(const nmt_alignment *a, nmt_link *links)
{
    int n = 0;
    int real_src = a->n_src - 1, real_tgt = a->n_tgt - 1; /* "</s>" left out */
    if (real_src < 1)
        return 0;
    for (int i = 0; i < real_tgt; i++) {
        const float *row = a->att + (size_t)i * a->n_src;
        int best = 0;
        for (int j = 1; j < real_src; j++)
            if (row[j] > row[best]) /* strict: the lower index keeps a tie */
                best = j;
        links[n].src = best;
        links[n].tgt = i;
        links[n].possible = 0;
        n++;
    }
    return n;
}

int nmt_align_write_pharaoh(FILE *f, const nmt_alignment *a)
{
    int rc = nmt_alignment_check(a);
    if (rc)
        return rc;
    nmt_link *links = malloc((size_t)a->n_tgt * sizeof *links);
    if (!links)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    int n = nmt_align_hard(a, links);
    rc = nmt_pharaoh_write(f, links, (size_t)n);
    free(links);
    return rc;
}

int nmt_pharaoh_write(FILE *f, const nmt_link *links, size_t n)
{
    for (size_t k = 0; k < n; k++)
        fprintf(f, k ? " %d-%d" : "%d-%d", links[k].src, links[k].tgt);
    fputc('\n', f);
    return write_status(f);
}

int nmt_align_view_gold(const nmt_align_view *v, int src, int tgt)
{
    int found = 0;
    for (size_t k = 0; v && k < v->n_gold; k++)
        if (v->gold[k].src == src && v->gold[k].tgt == tgt) {
            if (!v->gold[k].possible)
                return 1; /* sure, whatever else the list says */
            found = 2;
        }
    return found;
}

int nmt_align_view_has_possible(const nmt_align_view *v)
{
    for (size_t k = 0; v && k < v->n_gold; k++)
        if (v->gold[k].possible)
            return 1;
    return 0;
}
