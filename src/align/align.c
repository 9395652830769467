/* Alignments as data (TSV, JSON Lines, Pharaoh) and their quality against
 * gold links (AER). See include/nmt/align.h; the heatmaps (terminal, SVG,
 * PNG) are the command line's (src/cli/draw/: heatmap.c, svg.c, png.c). */
#include "nmt/align.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"
#include "nmt/subwords.h"

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

/* ---- attention from a model ---------------------------------------------- */

int nmt_align_forced(const nmt_model *m, nmt_infer *st, const int32_t *src, int n_src,
                     const int32_t *tgt, int n_tgt, float *att)
{
    if (nmt_model_attention_maps(m) == 0)
        return nmt_set_error(NMT_ERR_ARG,
                             "this model has no attention (attention=none): it has no alignments");
    if (n_src < 1 || n_tgt < 1)
        return nmt_set_error(NMT_ERR_ARG, "an alignment needs at least \"</s>\" on each side");
    int rc = nmt_infer_encode(m, st, src, &n_src, 1, n_src);
    if (rc)
        return rc;
    /* The log-probabilities are not needed, but a model whose outputs are
     * not finite is broken even where its attention is not (3e38 in out.W):
     * refused, as the decoder refuses it. */
    int32_t prev = NMT_BOS;
    for (int i = 0; i < n_tgt && !rc; i++) {
        const float *lse;
        rc = nmt_infer_step_logits(m, st, &prev, att + (size_t)i * n_src, &lse)
                 ? nmt_infer_check_finite(lse, 1)
                 : NMT_ERR_ARG;
        prev = tgt[i];
    }
    return rc;
}

int nmt_align_forced_maps(const nmt_model *m, nmt_infer *st, const int32_t *src, int n_src,
                          const int32_t *tgt, int n_tgt, float *att)
{
    int n_maps = nmt_model_attention_maps(m), kept = nmt_infer_attention_map(st);
    if (n_maps == 0 || n_tgt < 1 || n_src < 1)
        return nmt_align_forced(m, st, src, n_src, tgt, n_tgt, att); /* its refusals */
    /* the steps write [n_tgt][n_maps][n_src]; turned to [n_maps][n_tgt][n_src] */
    size_t plane = (size_t)n_tgt * n_src;
    float *steps = malloc((size_t)n_maps * plane * sizeof *steps);
    if (!steps)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for %d attention maps", n_maps);
    int rc = nmt_infer_set_attention_map(st, NMT_MAP_EVERY);
    if (!rc)
        rc = nmt_infer_encode(m, st, src, &n_src, 1, n_src);
    int32_t prev = NMT_BOS;
    for (int i = 0; i < n_tgt && !rc; i++) {
        const float *lse;
        rc = nmt_infer_step_logits(m, st, &prev, steps + (size_t)i * n_maps * n_src, &lse)
                 ? nmt_infer_check_finite(lse, 1)
                 : NMT_ERR_ARG;
        prev = tgt[i];
    }
    nmt_infer_set_attention_map(st, kept);
    for (int k = 0; k < n_maps && !rc; k++)
        for (int i = 0; i < n_tgt; i++)
            memcpy(att + k * plane + (size_t)i * n_src, steps + ((size_t)i * n_maps + k) * n_src,
                   (size_t)n_src * sizeof *att);
    free(steps);
    return rc;
}

/* ---- pieces and words ---------------------------------------------------- */

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
    for (int k = 0; k < n; k++)
        fprintf(f, k ? " %d-%d" : "%d-%d", links[k].src, links[k].tgt);
    fputc('\n', f);
    free(links);
    return write_status(f);
}

int nmt_align_view_gold(const nmt_align_view *v, int src, int tgt)
{
    for (size_t k = 0; v && k < v->n_gold; k++)
        if (v->gold[k].src == src && v->gold[k].tgt == tgt)
            return 1;
    return 0;
}

/* ---- quality against gold ------------------------------------------------- */

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
        int ok = 1;
        for (int side = 0; side < 2 && ok; side++) {
            if (side == 1) {
                if (*p == '-' || *p == '?')
                    p++;
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
                                 "'%.*s' is not an alignment link like 3-4", len, start);
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
        count++;
    }
    /* Duplicates would count twice in the sizes; drop them here too. */
    size_t kept = 0;
    for (size_t k = 0; k < count; k++) {
        size_t m = 0;
        while (m < kept && (out[m].src != out[k].src || out[m].tgt != out[k].tgt))
            m++;
        if (m == kept)
            out[kept++] = out[k];
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
