/* The heatmap's colours and the terminal heatmap of an alignment
 * (src/cli/draw/heatmap.h). Only the command line shows heatmaps, so they live
 * here rather than in the library. */
#include "draw/heatmap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"
#include "nmt/utf8.h"

/* Every writer ends with this: a FILE* remembers a failed write, so checking
 * once at the end catches a full disk without testing every fprintf. */
static int write_status(FILE *f)
{
    if (ferror(f))
        return nmt_set_error(NMT_ERR_IO, "writing alignments failed");
    return NMT_OK;
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

/* Bytes of the character at p, and the characters of s (each taken as one
 * column wide). */
static int utf8_len(const char *p)
{
    return (int)nmt_utf8_char_len(p);
}

static int utf8_width(const char *s)
{
    return (int)nmt_utf8_count(s);
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
        int l = utf8_len(p);
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
        p += utf8_len(p);
    put_cp(f, p, utf8_len(p));
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
 * sure gold link (gold 1) as "[]" over it, a possible one (2) as "()"
 * (without colour "[" or "(" and the shade). */
static void put_cell(FILE *f, float w, nmt_color_mode color, int gold)
{
    int s = shade_of(w);
    const char *mark = gold == 2 ? "()" : "[]";
    if (color == NMT_COLOR_NONE) {
        if (gold)
            fputc(mark[0], f);
        else
            fputs(shades[s], f);
        if (gold && s == 0)
            fputc(mark[1], f);
        else
            fputs(shades[s], f);
        return;
    }
    if (w < TEXT_BLANK_BELOW) {
        if (gold)
            fprintf(f, "\x1b[1m%s\x1b[0m", mark);
        else
            fputs("  ", f);
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
        fprintf(f, "\x1b[1m%s%s", fg, mark);
    else
        fputs(s >= 3 ? "\x1b[97m··" : "  ", f);
    fputs("\x1b[0m", f);
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
        char label[48];
        if (k == 5)
            snprintf(label, sizeof label, "%s",
                     !v->has_gold                    ? ""
                     : nmt_align_view_has_possible(v) ? " [] sure, () possible gold link"
                                                      : " [] gold link");
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
            int gold = i < a->n_tgt - 1 && j < a->n_src - 1 ? nmt_align_view_gold(v, j, i) : 0;
            put_cell(f, a->att[(size_t)i * a->n_src + j], v->color, gold);
        }
        fputc('\n', f);
    }
}

enum { TEXT_LABEL_MIN = 6, LEGEND_COLS = 62 };

int nmt_align_write_text_view(FILE *f, const nmt_alignment *a, const nmt_align_view *view)
{
    int rc = nmt_alignment_check(a);
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

