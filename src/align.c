/* Alignments as data (TSV, JSON Lines, Pharaoh), as a terminal heatmap, and
 * their quality against gold links (AER). See include/nmt/align.h. */
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

static int check_alignment(const nmt_alignment *a)
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
    if (m->cfg.attention == NMT_ATT_NONE)
        return nmt_set_error(NMT_ERR_ARG,
                             "this model has no attention (attention=none): it has no alignments");
    if (n_src < 1 || n_tgt < 1)
        return nmt_set_error(NMT_ERR_ARG, "an alignment needs at least \"</s>\" on each side");
    int rc = nmt_infer_encode(m, st, src, &n_src, 1, n_src);
    if (rc)
        return rc;
    /* The step writes log-probabilities too; they are not needed here. */
    float *logprobs = malloc((size_t)m->cfg.tgt_vocab * sizeof *logprobs);
    if (!logprobs)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    int32_t prev = NMT_BOS;
    for (int i = 0; i < n_tgt; i++) {
        nmt_infer_step(m, st, &prev, logprobs, att + (size_t)i * n_src);
        prev = tgt[i];
    }
    free(logprobs);
    return NMT_OK;
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
    int rc = check_alignment(p);
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
    int rc = check_alignment(a);
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
    int rc = check_alignment(a);
    if (rc)
        return rc;
    fputc('{', f);
    if (v && v->line > 0)
        fprintf(f, "\"line\": %ld, ", v->line);
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
    int rc = check_alignment(a);
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

/* ---- terminal heatmap ----------------------------------------------------- */

enum { TEXT_LABEL_MAX = 14, TEXT_HEADER_MAX = 12 };

/* Shades for weights below 0.1, 0.25, 0.5, 0.75 and above. Attention rows sum
 * to 1, so a word that takes half of it or more stands out in the two darkest
 * shades, and a diffuse row shows as light shades. */
static const char *const shades[5] = {" ", "░", "▒", "▓", "█"};
static const float shade_bounds[4] = {0.1f, 0.25f, 0.5f, 0.75f};

static int shade_of(float w)
{
    int s = 0;
    while (s < 4 && w >= shade_bounds[s])
        s++;
    return s;
}

/* Length in bytes of the UTF-8 sequence starting with byte c (1 for a stray
 * continuation byte, so that bad input still advances). */
static int utf8_len(unsigned char c)
{
    return c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
}

/* Code points in s (each taken as one column wide). */
static int utf8_width(const char *s)
{
    int w = 0;
    for (const char *p = s; *p; p += utf8_len((unsigned char)*p))
        w++;
    return w;
}

/* Writes one code point of l bytes; control characters (a tab in a token)
 * would break the layout, so they show as spaces. */
static void put_cp(FILE *f, const char *p, int l)
{
    if (l == 1 && (unsigned char)*p < 0x20)
        fputc(' ', f);
    else
        fwrite(p, 1, (size_t)l, f);
}

/* Writes the first `cols` code points of s padded with spaces to `cols`,
 * ending in '~' when s was cut. */
static void put_cut(FILE *f, const char *s, int cols)
{
    int w = utf8_width(s), shown = w > cols ? cols - 1 : w;
    const char *p = s;
    for (int k = 0; k < shown; k++) {
        int l = utf8_len((unsigned char)*p);
        put_cp(f, p, l);
        p += l;
    }
    if (w > cols)
        fputc('~', f);
    for (int k = w > cols ? cols : w; k < cols; k++)
        fputc(' ', f);
}

/* The k-th code point of s written out, or a space past its end; cut words
 * show '~' in their last row. */
static void put_letter(FILE *f, const char *s, int k, int rows)
{
    int w = utf8_width(s);
    if (k >= w) {
        fputc(' ', f);
        return;
    }
    if (w > rows && k == rows - 1) {
        fputc('~', f);
        return;
    }
    const char *p = s;
    for (int m = 0; m < k; m++)
        p += utf8_len((unsigned char)*p);
    put_cp(f, p, utf8_len((unsigned char)*p));
}

/* The nearest xterm-256 colour: the 6x6x6 cube or the grey ramp. */
static int xterm256(const unsigned char rgb[3])
{
    static const int level[6] = {0, 95, 135, 175, 215, 255};
    int idx[3], best_cube = 0;
    long d_cube = 0;
    for (int c = 0; c < 3; c++) {
        int b = 0;
        for (int k = 1; k < 6; k++)
            if (abs(level[k] - rgb[c]) < abs(level[b] - rgb[c]))
                b = k;
        idx[c] = b;
        d_cube += (long)(level[b] - rgb[c]) * (level[b] - rgb[c]);
    }
    best_cube = 16 + 36 * idx[0] + 6 * idx[1] + idx[2];
    int grey = (rgb[0] + rgb[1] + rgb[2]) / 3;
    int g = grey < 8 ? 0 : grey > 238 ? 23 : (grey - 8) / 10;
    int gv = 8 + 10 * g;
    long d_grey = 0;
    for (int c = 0; c < 3; c++)
        d_grey += (long)(gv - rgb[c]) * (gv - rgb[c]);
    return d_grey < d_cube ? 232 + g : best_cube;
}

/* Below this a coloured cell keeps the terminal's own background: the
 * lightest colours of the ramp are near white, which glares on a dark
 * terminal, and the eye looks for the dark cells anyway. */
#define TEXT_BLANK_BELOW 0.1f

/* One cell of two columns: its shade, or with colour its background; a
 * gold link as "[]" over it (without colour "[" and the shade). */
static void put_cell(FILE *f, float w, nmt_color_mode color, int gold)
{
    int s = shade_of(w);
    if (color == NMT_COLOR_NONE) {
        fputs(gold ? "[" : shades[s], f);
        fputs(gold && s == 0 ? "]" : shades[s], f);
        return;
    }
    if (w < TEXT_BLANK_BELOW) {
        fputs(gold ? "\x1b[1m[]\x1b[0m" : "  ", f);
        return;
    }
    unsigned char rgb[3];
    nmt_heat_rgb(w, rgb);
    if (color == NMT_COLOR_TRUE)
        fprintf(f, "\x1b[48;2;%d;%d;%dm", rgb[0], rgb[1], rgb[2]);
    else
        fprintf(f, "\x1b[48;5;%dm", xterm256(rgb));
    /* The background carries the weight; a white '·' marks strong cells so
     * the peak of each row is found even on a terminal with odd colours.
     * Marks are white on dark cells, black on light ones. */
    const char *fg = w >= 0.4f ? "\x1b[97m" : "\x1b[30m";
    if (gold)
        fprintf(f, "\x1b[1m%s[]", fg);
    else
        fputs(s >= 3 ? "\x1b[97m··" : "  ", f);
    fputs("\x1b[0m", f);
}

int nmt_align_view_gold(const nmt_align_view *v, int src, int tgt)
{
    for (size_t k = 0; v && k < v->n_gold; k++)
        if (v->gold[k].src == src && v->gold[k].tgt == tgt)
            return 1;
    return 0;
}

/* The legend: the shades (or colours) and what they mean, and the marks,
 * wrapped to the width (when not 0) after `indent` columns. */
static void put_legend(FILE *f, int indent, int width, const nmt_align_view *v)
{
    static const float at[5] = {0.0f, 0.25f, 0.5f, 0.75f, 1.0f};
    static const char *const colour_label[5] = {"<0.1", "0.25", "0.5", "0.75", "1"};
    fprintf(f, "%*sweight:", indent, "");
    int col = indent + 7;
    for (int k = 0; k < 6; k++) {
        char label[32];
        if (k == 5)
            snprintf(label, sizeof label, "%s", v->has_gold ? " [] gold link" : "");
        else if (v->color != NMT_COLOR_NONE)
            snprintf(label, sizeof label, " %s", colour_label[k]);
        else
            snprintf(label, sizeof label, k < 4 ? " %.2g-%.2g" : " %.2g-1",
                     (double)(k ? shade_bounds[k - 1] : 0.0f),
                     (double)(k < 4 ? shade_bounds[k] : 1.0f));
        int need = k < 5 ? 3 + utf8_width(label) : utf8_width(label);
        if (!need)
            break;
        if (width > 0 && col + need > width) {
            fprintf(f, "\n%*s", indent + 7, "");
            col = indent + 7;
        }
        if (k < 5) {
            fputc(' ', f);
            if (v->color == NMT_COLOR_NONE)
                fprintf(f, "%s%s", shades[k], shades[k]);
            else
                put_cell(f, at[k], v->color, 0);
        }
        fputs(label, f);
        col += need;
    }
    fputc('\n', f);
}

int nmt_align_write_text(FILE *f, const nmt_alignment *a, nmt_color_mode color)
{
    nmt_align_view v = {.color = color};
    return nmt_align_write_text_view(f, a, &v);
}

/* The source columns [j0, j1) under their words, with every target row. */
static void put_band(FILE *f, const nmt_alignment *a, const nmt_align_view *v, int j0, int j1,
                     int label, int rows)
{
    /* Source words written downwards, one letter per row, above their
     * column; the margin left of them is as wide as the target labels. */
    for (int k = 0; k < rows; k++) {
        fprintf(f, "%*s │", label, "");
        for (int j = j0; j < j1; j++) {
            put_letter(f, a->src[j], k, rows);
            fputc(' ', f);
        }
        fputc('\n', f);
    }
    fprintf(f, "%*s ┼", label, "");
    for (int j = j0; j < j1; j++)
        fputs("──", f);
    fputc('\n', f);
    for (int i = 0; i < a->n_tgt; i++) {
        put_cut(f, a->tgt[i], label);
        fputs(" │", f);
        for (int j = j0; j < j1; j++) {
            int gold = i < a->n_tgt - 1 && j < a->n_src - 1 && nmt_align_view_gold(v, j, i);
            put_cell(f, a->att[(size_t)i * a->n_src + j], v->color, gold);
        }
        fputc('\n', f);
    }
}

enum { TEXT_LABEL_MIN = 6, LEGEND_COLS = 62 };

int nmt_align_write_text_view(FILE *f, const nmt_alignment *a, const nmt_align_view *view)
{
    int rc = check_alignment(a);
    if (rc)
        return rc;
    nmt_align_view none = {0};
    const nmt_align_view *v = view ? view : &none;
    int label = 1, rows = 1;
    for (int i = 0; i < a->n_tgt; i++) {
        int w = utf8_width(a->tgt[i]);
        label = w > label ? w : label;
    }
    for (int j = 0; j < a->n_src; j++) {
        int w = utf8_width(a->src[j]);
        rows = w > rows ? w : rows;
    }
    label = label > TEXT_LABEL_MAX ? TEXT_LABEL_MAX : label;
    rows = rows > TEXT_HEADER_MAX ? TEXT_HEADER_MAX : rows;

    /* A line is the label, " │" and two columns per source word. Within a
     * width, the labels give way first (down to TEXT_LABEL_MIN), then the
     * source is wrapped into bands of equal size. */
    int per_band = a->n_src;
    if (v->width > 0) {
        int want = a->n_src < 12 ? a->n_src : 12;
        while (label > TEXT_LABEL_MIN && label + 2 + 2 * want > v->width)
            label--;
        int fit = (v->width - label - 2) / 2;
        per_band = fit < 1 ? 1 : fit < a->n_src ? fit : a->n_src;
    }
    int bands = (a->n_src + per_band - 1) / per_band;
    per_band = (a->n_src + bands - 1) / bands;

    if (v->title)
        fprintf(f, "%s\n", v->title);
    for (int b = 0; b < bands; b++) {
        int j0 = b * per_band, j1 = j0 + per_band < a->n_src ? j0 + per_band : a->n_src;
        if (bands > 1)
            fprintf(f, "source words %d-%d of %d\n", j0 + 1, j1, a->n_src);
        put_band(f, a, v, j0, j1, label, rows);
    }
    int indent = label + 2;
    if (v->width > 0 && indent + LEGEND_COLS > v->width)
        indent = 0;
    put_legend(f, indent, v->width, v);
    fputc('\n', f);
    return write_status(f);
}

/* ---- colours -------------------------------------------------------------- */

void nmt_heat_rgb(float w, unsigned char rgb[3])
{
    /* White to navy through light and mid blue; lightness falls evenly along
     * the ramp, so weight order survives greyscale printing. */
    static const unsigned char stops[5][3] = {
        {255, 255, 255}, {197, 219, 240}, {105, 165, 214}, {35, 105, 175}, {10, 40, 100},
    };
    if (!(w > 0.0f))
        w = 0.0f;
    if (w > 1.0f)
        w = 1.0f;
    float t = w * 4.0f;
    int k = (int)t;
    if (k > 3)
        k = 3;
    float u = t - (float)k;
    for (int c = 0; c < 3; c++)
        rgb[c] = (unsigned char)lroundf((1.0f - u) * stops[k][c] + u * stops[k + 1][c]);
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
