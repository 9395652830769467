/* The explorer page of nmt align --format html. See cmd_align_html.h.
 *
 * The data sit in a <script type="application/json"> element that the
 * page's script parses once. Each matrix is its weights rounded to 1/255,
 * one byte each, in base64: a 60 x 60 matrix is 4800 characters instead of
 * some 25000 as decimal numbers, so a test set of 1000 long sentences from
 * two models stays a few megabytes and opens at once. The script decodes a
 * matrix only when its pair is shown. */
#include "align/cmd_align_html.h"
#include "draw/heatmap.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "explorer_html.h" /* explorer_head[], explorer_tail[]: generated */

/* A growing string. */
typedef struct sbuf {
    char *s;
    size_t n, cap;
    int bad;
} sbuf;

static void sb_grow(sbuf *b, size_t more)
{
    if (b->bad || b->n + more + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + more + 1)
        cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->bad = 1;
        return;
    }
    b->s = s;
    b->cap = cap;
}

static void sb_put(sbuf *b, const char *s, size_t n)
{
    sb_grow(b, n);
    if (b->bad)
        return;
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

static void sb_printf(sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp) {
        b->bad = 1;
        return;
    }
    sb_put(b, tmp, (size_t)n);
}

/* A JSON string that is safe inside <script>: '<', '>' and '&' escaped too,
 * so that no "</script>" can end the element early. */
static void sb_json_str(sbuf *b, const char *s)
{
    sb_put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char e[2] = {'\\', (char)*p};
            sb_put(b, e, 2);
        } else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&') {
            sb_printf(b, "\\u%04x", *p);
        } else {
            sb_put(b, (const char *)p, 1);
        }
    }
    sb_put(b, "\"", 1);
}

static void sb_json_strs(sbuf *b, const char *const *s, int n)
{
    sb_put(b, "[", 1);
    for (int k = 0; k < n; k++) {
        if (k)
            sb_put(b, ",", 1);
        sb_json_str(b, s[k]);
    }
    sb_put(b, "]", 1);
}

static void sb_number(sbuf *b, double v, int decimals)
{
    if (v < 0 || !isfinite(v))
        sb_put(b, "null", 4);
    else
        sb_printf(b, "%.*f", decimals, v);
}

static void sb_base64(sbuf *b, const unsigned char *d, size_t n)
{
    static const char digits[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    sb_grow(b, 4 * ((n + 2) / 3));
    for (size_t k = 0; k < n && !b->bad; k += 3) {
        unsigned v = (unsigned)d[k] << 16 | (k + 1 < n ? (unsigned)d[k + 1] << 8 : 0) |
                     (k + 2 < n ? d[k + 2] : 0);
        char q[4] = {digits[v >> 18 & 63], digits[v >> 12 & 63],
                     k + 1 < n ? digits[v >> 6 & 63] : '=', k + 2 < n ? digits[v & 63] : '='};
        sb_put(b, q, 4);
    }
}

struct html_doc {
    size_t n_pairs;
    int n_models, has_gold, has_ref;
    char **pair;   /* [n_pairs] the pair's own fields, JSON */
    char **cell;   /* [n_pairs * n_models] a model's view of a pair, JSON */
    char **model;  /* [n_models] JSON */
};

html_doc *html_create(size_t n_pairs, int n_models)
{
    html_doc *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->n_pairs = n_pairs;
    h->n_models = n_models;
    h->pair = calloc(n_pairs ? n_pairs : 1, sizeof *h->pair);
    h->cell = calloc((n_pairs ? n_pairs : 1) * (size_t)n_models, sizeof *h->cell);
    h->model = calloc((size_t)n_models, sizeof *h->model);
    if (!h->pair || !h->cell || !h->model) {
        html_free(h);
        return NULL;
    }
    return h;
}

void html_free(html_doc *h)
{
    if (!h)
        return;
    for (size_t k = 0; h->pair && k < h->n_pairs; k++)
        free(h->pair[k]);
    for (size_t k = 0; h->cell && k < h->n_pairs * (size_t)h->n_models; k++)
        free(h->cell[k]);
    for (int k = 0; h->model && k < h->n_models; k++)
        free(h->model[k]);
    free(h->pair);
    free(h->cell);
    free(h->model);
    free(h);
}

/* Keeps a finished buffer in *slot. */
static int keep(sbuf *b, char **slot)
{
    if (b->bad) {
        free(b->s);
        return -1;
    }
    free(*slot);
    *slot = b->s;
    return 0;
}

int html_set_model(html_doc *h, int mi, const char *file, const char *kind, const char *mode,
                   double aer, double bleu, const html_grid *grid)
{
    const char *base = strrchr(file, '/');
    sbuf b = {0};
    sb_put(&b, "{\"name\":", 8);
    sb_json_str(&b, base && base[1] ? base + 1 : file);
    sb_put(&b, ",\"path\":", 8);
    sb_json_str(&b, file);
    sb_put(&b, ",\"kind\":", 8);
    sb_json_str(&b, kind);
    sb_put(&b, ",\"mode\":", 8);
    sb_json_str(&b, mode);
    sb_put(&b, ",\"aer\":", 7);
    sb_number(&b, aer, 4);
    sb_put(&b, ",\"bleu\":", 8);
    sb_number(&b, bleu, 2);
    if (grid && grid->rows > 0) {
        sb_printf(&b, ",\"grid\":{\"rows\":%d,\"cols\":%d,\"shown\":%d,\"names\":", grid->rows,
                  grid->cols, grid->shown);
        sb_json_strs(&b, grid->names, grid->rows * grid->cols);
        sb_put(&b, "}", 1);
    }
    sb_put(&b, "}", 1);
    return keep(&b, &h->model[mi]);
}

int html_set_pair(html_doc *h, size_t k, long line, const char *src, const char *ref,
                  const nmt_link *gold, size_t n_gold, int has_gold)
{
    sbuf b = {0};
    size_t words = 0;
    for (const char *p = src; *p;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p)
            words++;
        while (*p && *p != ' ' && *p != '\t')
            p++;
    }
    sb_printf(&b, "\"line\":%ld,\"n\":%zu,\"src\":", line, words);
    sb_json_str(&b, src);
    if (ref) {
        sb_put(&b, ",\"ref\":", 7);
        sb_json_str(&b, ref);
        h->has_ref = 1;
    }
    if (has_gold) {
        /* flat: source, target, source, target ... */
        sb_put(&b, ",\"gold\":[", 9);
        for (size_t g = 0; g < n_gold; g++)
            sb_printf(&b, g ? ",%d,%d" : "%d,%d", gold[g].src, gold[g].tgt);
        sb_put(&b, "]", 1);
        /* "gp": those of them only possible (flat too), when there are any */
        for (size_t g = 0, n = 0; g < n_gold; g++)
            if (gold[g].possible)
                sb_printf(&b, n++ ? ",%d,%d" : ",\"gp\":[%d,%d", gold[g].src, gold[g].tgt);
        for (size_t g = 0; g < n_gold; g++)
            if (gold[g].possible) {
                sb_put(&b, "]", 1);
                break;
            }
        h->has_gold = 1;
    }
    return keep(&b, &h->pair[k]);
}

/* "a": the weights, "h": the model's link of each target word (its source
 * word, -1: none), as fields of an object being written. */
static void sb_weights_links(sbuf *b, const nmt_alignment *a, const nmt_link *hard, int n_hard)
{
    size_t cells = (size_t)a->n_src * (size_t)a->n_tgt;
    unsigned char *q = malloc(cells ? cells : 1);
    if (!q) {
        b->bad = 1;
        return;
    }
    for (size_t c = 0; c < cells; c++) {
        float w = a->att[c];
        q[c] = (unsigned char)lroundf((w > 1.0f ? 1.0f : w > 0.0f ? w : 0.0f) * 255.0f);
    }
    sb_put(b, "\"a\":\"", 5);
    sb_base64(b, q, cells);
    free(q);
    sb_put(b, "\",\"h\":[", 7);
    for (int i = 0, l = 0; i < a->n_tgt - 1; i++) {
        int j = l < n_hard && hard[l].tgt == i ? hard[l++].src : -1;
        sb_printf(b, i ? ",%d" : "%d", j);
    }
    sb_put(b, "]", 1);
}

int html_add(html_doc *h, int mi, size_t k, const nmt_alignment *a, const nmt_link *hard,
             int n_hard, const char *hyp, double aer, double bleu, const html_map *maps,
             int n_maps)
{
    sbuf b = {0};
    sb_put(&b, "{\"s\":", 5);
    sb_json_strs(&b, a->src, a->n_src);
    sb_put(&b, ",\"t\":", 5);
    sb_json_strs(&b, a->tgt, a->n_tgt);
    sb_put(&b, ",", 1);
    sb_weights_links(&b, a, hard, n_hard);
    /* the grid's maps, each of the shape of the one above */
    if (n_maps > 0) {
        sb_put(&b, ",\"g\":[", 6);
        for (int mp = 0; mp < n_maps; mp++) {
            sb_put(&b, mp ? ",{" : "{", mp ? 2 : 1);
            sb_weights_links(&b, maps[mp].a, maps[mp].hard, maps[mp].n_hard);
            sb_put(&b, ",\"aer\":", 7);
            sb_number(&b, maps[mp].aer, 4);
            sb_put(&b, "}", 1);
        }
        sb_put(&b, "]", 1);
    }
    if (hyp) {
        sb_put(&b, ",\"hyp\":", 7);
        sb_json_str(&b, hyp);
    }
    sb_put(&b, ",\"aer\":", 7);
    sb_number(&b, aer, 4);
    sb_put(&b, ",\"bleu\":", 8);
    sb_number(&b, bleu, 2);
    sb_put(&b, "}", 1);
    return keep(&b, &h->cell[k * (size_t)h->n_models + (size_t)mi]);
}

static void put_lines(FILE *f, const char *const *lines)
{
    for (const char *const *l = lines; *l; l++)
        fputs(*l, f);
}

int html_write(FILE *f, const html_doc *h, const char *title)
{
    put_lines(f, explorer_head);
    sbuf b = {0};
    sb_put(&b, "{\"title\":", 9);
    sb_json_str(&b, title);
    sb_printf(&b, ",\"gold\":%s,\"ref\":%s,\"palette\":[", h->has_gold ? "true" : "false",
              h->has_ref ? "true" : "false");
    /* the colours of the pictures (nmt_heat_rgb), one per byte value */
    for (int k = 0; k < 256; k++) {
        unsigned char rgb[3];
        nmt_heat_rgb((float)k / 255.0f, rgb);
        sb_printf(&b, k ? ",\"#%02x%02x%02x\"" : "\"#%02x%02x%02x\"", rgb[0], rgb[1], rgb[2]);
    }
    sb_put(&b, "],\"models\":[", 12);
    for (int m = 0; m < h->n_models; m++) {
        if (m)
            sb_put(&b, ",", 1);
        sb_put(&b, h->model[m] ? h->model[m] : "{}", strlen(h->model[m] ? h->model[m] : "{}"));
    }
    sb_put(&b, "],\"pairs\":[\n", 12);
    if (b.bad) {
        free(b.s);
        return -1;
    }
    fputs(b.s, f);
    free(b.s);
    for (size_t k = 0; k < h->n_pairs; k++) {
        fprintf(f, "%s{%s,\"m\":[", k ? ",\n" : "", h->pair[k] ? h->pair[k] : "\"line\":0");
        for (int m = 0; m < h->n_models; m++) {
            const char *c = h->cell[k * (size_t)h->n_models + (size_t)m];
            fprintf(f, "%s%s", m ? "," : "", c ? c : "null");
        }
        fputs("]}", f);
    }
    fputs("\n]}", f);
    put_lines(f, explorer_tail);
    return ferror(f) ? -1 : 0;
}
