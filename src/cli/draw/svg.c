/* SVG pictures: an attention heatmap, a line chart and a grid of charts.
 * See draw/svg.h.
 *
 * Text widths are estimated (no font metrics here): 0.6 em per character is
 * a little wider than the average of common sans-serif fonts, so labels get
 * room to spare rather than overlap. */
#include "draw/svg.h"
#include "draw/heatmap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"
#include "nmt/utf8.h"

#define FONT "DejaVu Sans, Helvetica, Arial, sans-serif"

enum {
    CELL = 26,        /* heatmap cell, px */
    LABEL_PX = 13,    /* word labels, px */
    TITLE_PX = 16,
    PAD = 14,         /* outer margin */
};

static double text_width(const char *s, double font_px)
{
    return (double)nmt_utf8_count(s) * 0.6 * font_px; /* characters, not bytes */
}

/* Text content or attribute value: escape the five XML specials, and drop
 * control characters that XML 1.0 does not allow at all. */
static void put_xml(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            fputc(*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r' ? ' ' : *p, f);
        }
    }
}

static int finish(FILE *f)
{
    if (ferror(f))
        return nmt_set_error(NMT_ERR_IO, "writing the SVG failed");
    return NMT_OK;
}

static void svg_open(FILE *f, double w, double h)
{
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "viewBox=\"0 0 %.0f %.0f\" font-family=\"%s\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
            w, h, w, h, FONT);
}

static void put_title(FILE *f, double x, double y, const char *title)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" font-weight=\"bold\" "
               "fill=\"#222222\">", x, y, TITLE_PX);
    put_xml(f, title);
    fputs("</text>\n", f);
}

/* ---- heatmap -------------------------------------------------------------- */

/* The colours of the marks, shared with the PNG: gold links outlined in
 * amber, the model's own links as a black dot ringed in white, both seen on
 * white and on navy cells. */
#define GOLD_COLOUR "#f0a000"
/* A possible gold link's outline: dashes as long as their gaps, a few to a
 * side of a cell, so that a glance tells it from a sure link's solid one. */
#define POSSIBLE_DASH "stroke-dasharray=\"4 3\""
#define LEGEND_ROW 22

/* The marks of a view: an outline on every gold link, a dot on the model's
 * links (nmt_align_hard), then their legend from (lx, ly). */
static int put_marks(FILE *f, const nmt_alignment *a, const nmt_align_view *v, double gx,
                     double gy, double lx, double ly)
{
    nmt_link *hard = malloc((size_t)a->n_tgt * sizeof *hard);
    if (!hard)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    int n_hard = v->has_hard ? v->n_hard : nmt_align_hard(a, hard);
    if (v->has_hard)
        memcpy(hard, v->hard, (size_t)n_hard * sizeof *hard);
    int possible = nmt_align_view_has_possible(v);
    /* sure links solid, possible ones dashed: told apart without colour */
    for (int kind = 1; kind <= 1 + possible; kind++) {
        fprintf(f, kind == 1 ? "<g class=\"gold\" fill=\"none\" stroke=\"%s\" "
                               "stroke-width=\"3\">\n"
                             : "<g class=\"gold-possible\" fill=\"none\" stroke=\"%s\" "
                               "stroke-width=\"2\" " POSSIBLE_DASH ">\n",
                GOLD_COLOUR);
        for (size_t k = 0; k < v->n_gold; k++) {
            const nmt_link *l = &v->gold[k];
            if (l->src < 0 || l->tgt < 0 || l->src >= a->n_src - 1 || l->tgt >= a->n_tgt - 1 ||
                nmt_align_view_gold(v, l->src, l->tgt) != kind)
                continue;
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\"/>\n",
                    gx + l->src * CELL + 2.5, gy + l->tgt * CELL + 2.5, CELL - 5, CELL - 5);
        }
        fputs("</g>\n", f);
    }
    fputs("<g class=\"model\" fill=\"#111111\" stroke=\"#ffffff\" "
          "stroke-width=\"1.5\">\n", f);
    for (int k = 0; k < n_hard; k++)
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\"/>\n",
                gx + (hard[k].src + 0.5) * CELL, gy + (hard[k].tgt + 0.5) * CELL);
    fputs("</g>\n", f);
    free(hard);
    fprintf(f, "<g font-size=\"12\" fill=\"#444444\">\n"
               "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"14\" fill=\"none\" "
               "stroke=\"%s\" stroke-width=\"3\"/>\n"
               "<text x=\"%.1f\" y=\"%.1f\" dy=\"0.35em\">%s</text>\n"
               "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"#111111\"/>\n"
               "<text x=\"%.1f\" y=\"%.1f\" dy=\"0.35em\">the model's link (the source word "
               "it attends to most)</text>\n",
            lx, ly - 7, GOLD_COLOUR, lx + 22, ly, possible ? "gold, sure" : "gold link",
            lx + 110, ly, lx + 122, ly);
    if (possible) /* a second row: the dashed mark */
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"14\" fill=\"none\" "
                   "stroke=\"%s\" stroke-width=\"2\" " POSSIBLE_DASH "/>\n"
                   "<text x=\"%.1f\" y=\"%.1f\" dy=\"0.35em\">gold, possible</text>\n",
                lx, ly + LEGEND_ROW - 7, GOLD_COLOUR, lx + 22, ly + LEGEND_ROW);
    fputs("</g>\n", f);
    return NMT_OK;
}

int nmt_svg_heatmap(FILE *f, const nmt_alignment *a, const char *title)
{
    nmt_align_view v = {.title = title};
    return nmt_svg_heatmap_view(f, a, &v);
}

int nmt_svg_heatmap_view(FILE *f, const nmt_alignment *a, const nmt_align_view *v)
{
    const char *title = v ? v->title : NULL;
    int marks = v && v->has_gold;
    if (!a || a->n_src < 1 || a->n_tgt < 1 || !a->src || !a->tgt || !a->att)
        return nmt_set_error(NMT_ERR_ARG, "an alignment needs at least \"</s>\" on each side");
    for (size_t k = 0; k < (size_t)a->n_src * (size_t)a->n_tgt; k++)
        if (!isfinite(a->att[k]))
            return nmt_set_error(NMT_ERR_NUMERIC, "the attention weights hold NaN or Inf");
    if (!title)
        title = "Attention";
    double src_label = 0, tgt_label = 0;
    for (int j = 0; j < a->n_src; j++)
        src_label = fmax(src_label, text_width(a->src[j], LABEL_PX));
    for (int i = 0; i < a->n_tgt; i++)
        tgt_label = fmax(tgt_label, text_width(a->tgt[i], LABEL_PX));

    /* Title, then the turned source words, then the grid; the target words
     * on its left and the colour bar on its right. */
    double grid_w = (double)a->n_src * CELL, grid_h = (double)a->n_tgt * CELL;
    double gx = PAD + fmax(tgt_label, 40) + 8;
    double gy = PAD + TITLE_PX + 12 + src_label + 8;
    double bar_h = fmax(grid_h, 120), bar_w = 14;
    double bar_x = gx + grid_w + 24;
    double width = fmax(bar_x + bar_w + 40 + PAD, PAD + text_width(title, TITLE_PX) + PAD);
    double height = gy + fmax(grid_h, bar_h) + PAD + 16;
    double legend_y = gy + fmax(grid_h, bar_h) + 34;
    if (marks) {
        height += 30 + (nmt_align_view_has_possible(v) ? LEGEND_ROW : 0);
        width = fmax(width, PAD + 122 + text_width("the model's link (the source word it "
                                                   "attends to most)", 12) + PAD);
    }

    svg_open(f, width, height);
    put_title(f, PAD, PAD + TITLE_PX, title);
    /* Axis names, small and grey, where the eye starts reading each axis. */
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#888888\" "
               "text-anchor=\"end\">source →</text>\n", gx - 8, gy - 8);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#888888\" "
               "text-anchor=\"end\">target ↓</text>\n", gx - 8, gy + grid_h + 16);

    fprintf(f, "<g font-size=\"%d\" fill=\"#222222\">\n", LABEL_PX);
    for (int j = 0; j < a->n_src; j++) {
        double x = gx + (j + 0.5) * CELL, y = gy - 6;
        fprintf(f, "<text transform=\"translate(%.1f %.1f) rotate(-90)\" dy=\"0.35em\">",
                x, y);
        put_xml(f, a->src[j]);
        fputs("</text>\n", f);
    }
    for (int i = 0; i < a->n_tgt; i++) {
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" dy=\"0.35em\" text-anchor=\"end\">",
                gx - 8, gy + (i + 0.5) * CELL);
        put_xml(f, a->tgt[i]);
        fputs("</text>\n", f);
    }
    fputs("</g>\n<g>\n", f);
    for (int i = 0; i < a->n_tgt; i++)
        for (int j = 0; j < a->n_src; j++) {
            float w = a->att[(size_t)i * a->n_src + j];
            unsigned char rgb[3];
            nmt_heat_rgb(w, rgb);
            fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%d\" height=\"%d\" "
                       "fill=\"#%02x%02x%02x\"><title>",
                    gx + j * CELL, gy + i * CELL, CELL, CELL, rgb[0], rgb[1], rgb[2]);
            put_xml(f, a->src[j]);
            fputs(" → ", f);
            put_xml(f, a->tgt[i]);
            fprintf(f, ": %.3f</title></rect>\n", (double)w);
        }
    fputs("</g>\n", f);
    /* Faint lines between cells keep rows and columns traceable where the
     * weights are near 0 and the cells are white. */
    fputs("<g stroke=\"#e4e4e4\" stroke-width=\"1\">\n", f);
    for (int j = 1; j < a->n_src; j++)
        fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/>\n", gx + j * CELL,
                gy, gx + j * CELL, gy + grid_h);
    for (int i = 1; i < a->n_tgt; i++)
        fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/>\n", gx,
                gy + i * CELL, gx + grid_w, gy + i * CELL);
    fputs("</g>\n", f);
    fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
               "stroke=\"#999999\"/>\n", gx, gy, grid_w, grid_h);
    if (marks) {
        int rc = put_marks(f, a, v, gx, gy, PAD, legend_y);
        if (rc)
            return rc;
    }

    /* Colour bar: 1 at the top, 0 at the bottom, sampled from the same ramp
     * as the cells so the two cannot disagree. */
    fputs("<defs><linearGradient id=\"heat\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n", f);
    for (int k = 0; k <= 16; k++) {
        unsigned char rgb[3];
        nmt_heat_rgb(k / 16.0f, rgb);
        fprintf(f, "<stop offset=\"%.4f\" stop-color=\"#%02x%02x%02x\"/>\n", k / 16.0, rgb[0],
                rgb[1], rgb[2]);
    }
    fputs("</linearGradient></defs>\n", f);
    fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"url(#heat)\" "
               "stroke=\"#999999\"/>\n", bar_x, gy, bar_w, bar_h);
    fputs("<g font-size=\"11\" fill=\"#444444\">\n", f);
    for (int t = 0; t <= 2; t++) {
        double y = gy + bar_h - t * 0.5 * bar_h;
        fprintf(f, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#444444\"/>\n",
                bar_x + bar_w, y, bar_x + bar_w + 4, y);
        fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" dy=\"0.35em\">%s</text>\n", bar_x + bar_w + 7,
                y, t == 0 ? "0" : t == 1 ? "0.5" : "1");
    }
    fputs("</g>\n</svg>\n", f);
    return finish(f);
}

/* ---- line charts ----------------------------------------------------------- */

/* Okabe & Ito's colour-blind-safe palette, without its yellow (too light on
 * white). */
static const char *const palette[7] = {
    "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000",
};

/* Point markers on a line of at most this many points; a longer one (a
 * training curve of thousands of rows) is a line alone. */
enum { MAX_MARKED = 60 };

/* A round step (1, 2 or 5 times a power of ten) giving about `n` ticks. */
static double nice_step(double range, int n)
{
    if (!(range > 0))
        return 1;
    double raw = range / n, p = pow(10, floor(log10(raw))), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

/* One axis: [lo, hi] with ticks every `step`, or on a log scale at the
 * round values 1, 2, 5 times a power of ten (decades alone when the range
 * spans more than three). */
typedef struct axis {
    double lo, hi, step;
    int log, decades_only;
} axis;

static int drawable(const axis *a, double v)
{
    return isfinite(v) && (!a->log || v > 0);
}

static double axis_frac(const axis *a, double v)
{
    if (a->log)
        return (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
    return (v - a->lo) / (a->hi - a->lo);
}

/* The round log tick at or below v (dir < 0) or at or above it (dir > 0). */
static double log_tick(double v, int dir)
{
    static const double m[3] = {1, 2, 5};
    double p = pow(10, floor(log10(v)));
    if (dir < 0) {
        for (int k = 2; k >= 0; k--)
            if (m[k] * p <= v * (1 + 1e-9))
                return m[k] * p;
        return p / 2;
    }
    for (int k = 0; k < 3; k++)
        if (m[k] * p >= v * (1 - 1e-9))
            return m[k] * p;
    return 10 * p;
}

/* The smallest and largest drawable value of one axis over some series. */
static void data_range(const nmt_svg_series *series, int n, int is_y, const axis *a,
                       double *mn, double *mx)
{
    for (int s = 0; s < n; s++)
        for (size_t k = 0; k < series[s].n; k++) {
            double v = is_y ? series[s].y[k] : series[s].x[k];
            if (drawable(a, v) && isfinite(series[s].y[k]) && isfinite(series[s].x[k])) {
                *mn = fmin(*mn, v);
                *mx = fmax(*mx, v);
            }
        }
}

/* The data range of one axis of c (and of the marks, when not NULL),
 * widened to round ticks. */
static void axis_range(const nmt_svg_chart *c, const nmt_svg_series *marks, int is_y,
                       int log_scale, axis *a)
{
    double mn = is_y ? c->y_min : c->x_min, mx = is_y ? c->y_max : c->x_max;
    int fixed = mn != mx;
    *a = (axis){.log = log_scale};
    if (!fixed) {
        mn = (double)INFINITY;
        mx = -(double)INFINITY;
        data_range(c->series, c->n_series, is_y, a, &mn, &mx);
        if (marks)
            data_range(marks, c->n_series, is_y, a, &mn, &mx);
        if (!isfinite(mn)) {
            mn = log_scale ? 1 : 0;
            mx = log_scale ? 10 : 1;
        }
        if (is_y && mn > 0 && !log_scale)
            mn = 0; /* a BLEU or loss axis from 0 does not exaggerate */
        if (mx == mn)
            mx = log_scale ? mn * 2 : mn + 1;
    }
    if (log_scale) {
        a->lo = fixed ? mn : log_tick(mn, -1);
        a->hi = fixed ? mx : log_tick(mx, 1);
        a->decades_only = a->hi / a->lo > 1000;
        if (a->decades_only && !fixed) { /* the ends on ticks too */
            a->lo = pow(10, floor(log10(a->lo) + 1e-9));
            a->hi = pow(10, ceil(log10(a->hi) - 1e-9));
        }
        return;
    }
    a->step = nice_step(mx - mn, 5);
    if (!fixed) {
        mn = floor(mn / a->step) * a->step;
        mx = ceil(mx / a->step) * a->step;
    }
    a->lo = mn;
    a->hi = mx;
}

/* The axis's ticks in order: returns how many were written to v (at most max). */
static int axis_ticks(const axis *a, double *v, int max)
{
    int n = 0;
    if (!a->log) {
        for (int k = 0; a->lo + k * a->step <= a->hi + a->step * 1e-9 && n < max; k++)
            v[n++] = a->lo + k * a->step;
        return n;
    }
    static const double m[3] = {1, 2, 5};
    for (int e = (int)floor(log10(a->lo)); e <= (int)ceil(log10(a->hi)) && n < max; e++)
        for (int k = 0; k < (a->decades_only ? 1 : 3) && n < max; k++) {
            double t = m[k] * pow(10, e);
            if (t >= a->lo * (1 - 1e-9) && t <= a->hi * (1 + 1e-9))
                v[n++] = t;
        }
    return n;
}

static void put_number(FILE *f, double v, const axis *a)
{
    if (a->log) {
        fprintf(f, "%g", v);
        return;
    }
    /* As many decimals as the step needs, and no "-0". */
    int dec = a->step >= 1 ? 0 : (int)ceil(-log10(a->step) - 1e-9);
    if (fabs(v) < a->step * 1e-6)
        v = 0;
    fprintf(f, "%.*f", dec, v);
}

/* Where a chart goes on the canvas: the plot area and the clip path's id. */
typedef struct frame {
    double left, top, w, h;
    int id;
} frame;

static void draw_axes(FILE *f, const nmt_svg_chart *c, const frame *fr, const axis *ax,
                      const axis *ay)
{
    double left = fr->left, top = fr->top, pw = fr->w, ph = fr->h, ticks[64];
    fputs("<g font-size=\"12\" fill=\"#444444\">\n", f);
    int n = axis_ticks(ax, ticks, 64);
    for (int k = 0; k < n; k++) {
        double x = left + axis_frac(ax, ticks[k]) * pw;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eeeeee\"/>\n",
                x, top, x, top + ph);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, top + ph + 18);
        put_number(f, ticks[k], ax);
        fputs("</text>\n", f);
    }
    n = axis_ticks(ay, ticks, 64);
    for (int k = 0; k < n; k++) {
        double y = top + ph - axis_frac(ay, ticks[k]) * ph;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eeeeee\"/>\n",
                left, y, left + pw, y);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" dy=\"0.35em\" text-anchor=\"end\">", left - 8, y);
        put_number(f, ticks[k], ay);
        fputs("</text>\n", f);
    }
    fputs("</g>\n", f);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
               "stroke=\"#888888\"/>\n", left, top, pw, ph);
    if (c->x_title) {
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\" text-anchor=\"middle\" "
                   "fill=\"#222222\">", left + pw / 2, top + ph + 44);
        put_xml(f, c->x_title);
        fputs("</text>\n", f);
    }
    if (c->y_title) {
        fprintf(f, "<text transform=\"translate(%.1f %.1f) rotate(-90)\" font-size=\"13\" "
                   "text-anchor=\"middle\" fill=\"#222222\">", left - 50, top + ph / 2);
        put_xml(f, c->y_title);
        fputs("</text>\n", f);
    }
}

/* The series of c (and their marks, when not NULL) inside the frame. */
static void draw_lines(FILE *f, const nmt_svg_chart *c, const nmt_svg_series *marks,
                       const frame *fr, const axis *ax, const axis *ay)
{
    char clip[16] = "plot";
    if (fr->id >= 0)
        snprintf(clip, sizeof clip, "plot%d", fr->id);
    /* Clip the lines to the plot so fixed ranges may cut data off cleanly. */
    fprintf(f, "<defs><clipPath id=\"%s\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
               "height=\"%.1f\"/></clipPath></defs>\n", clip, fr->left, fr->top, fr->w, fr->h);
#define PX(v) (fr->left + axis_frac(ax, (v)) * fr->w)
#define PY(v) (fr->top + fr->h - axis_frac(ay, (v)) * fr->h)
    for (int s = 0; s < c->n_series; s++) {
        const nmt_svg_series *sr = &c->series[s];
        const char *col = palette[s % 7];
        fprintf(f, "<g clip-path=\"url(#%s)\" stroke=\"%s\" fill=\"%s\">\n", clip, col, col);
        /* One polyline per run of drawable points: NaN leaves a gap. */
        int open = 0;
        for (size_t k = 0; k <= sr->n; k++) {
            int ok = k < sr->n && drawable(ax, sr->x[k]) && drawable(ay, sr->y[k]);
            if (ok && !open) {
                fputs("<polyline fill=\"none\" stroke-width=\"2\" points=\"", f);
                open = 1;
            }
            if (ok)
                fprintf(f, "%.1f,%.1f ", PX(sr->x[k]), PY(sr->y[k]));
            if (!ok && open) {
                fputs("\"/>\n", f);
                open = 0;
            }
        }
        for (size_t k = 0; sr->n <= MAX_MARKED && k < sr->n; k++)
            if (drawable(ax, sr->x[k]) && drawable(ay, sr->y[k]))
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\"/>\n", PX(sr->x[k]),
                        PY(sr->y[k]));
        const nmt_svg_series *mk = marks ? &marks[s] : NULL;
        for (size_t k = 0; mk && k < mk->n; k++)
            if (drawable(ax, mk->x[k]) && drawable(ay, mk->y[k]))
                fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"9\" height=\"9\" "
                           "fill=\"#ffffff\" stroke-width=\"2\"/>\n",
                        PX(mk->x[k]) - 4.5, PY(mk->y[k]) - 4.5);
        fputs("</g>\n", f);
    }
#undef PX
#undef PY
}

/* One legend entry per series from (x, y) down, and one for the marks. */
static void draw_legend(FILE *f, const nmt_svg_series *series, int n, double x, double y,
                        const char *mark_label)
{
    for (int s = 0; s < n; s++) {
        const char *col = palette[s % 7];
        double ly = y + s * 22;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                   "stroke-width=\"2\"/><circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n",
                x, ly, x + 24, ly, col, x + 12, ly, col);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" dy=\"0.35em\" font-size=\"12\" fill=\"#222222\">",
                x + 32, ly);
        put_xml(f, series[s].name ? series[s].name : "");
        fputs("</text>\n", f);
    }
    if (mark_label) {
        double ly = y + n * 22 + 6;
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"9\" height=\"9\" fill=\"#ffffff\" "
                   "stroke=\"#444444\" stroke-width=\"2\"/>\n", x + 7.5, ly - 4.5);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" dy=\"0.35em\" font-size=\"12\" fill=\"#222222\">",
                x + 32, ly);
        put_xml(f, mark_label);
        fputs("</text>\n", f);
    }
}

static double legend_width(const nmt_svg_series *series, int n, const char *mark_label)
{
    double w = mark_label ? text_width(mark_label, 12) : 0;
    for (int s = 0; s < n; s++)
        w = fmax(w, text_width(series[s].name ? series[s].name : "", 12));
    return n || mark_label ? w + 40 : 0;
}

static int check_chart(const nmt_svg_chart *c, const nmt_svg_series *marks)
{
    if (!c || c->n_series < 0 || (c->n_series && !c->series))
        return nmt_set_error(NMT_ERR_ARG, "a chart needs its series");
    for (int s = 0; s < c->n_series; s++) {
        if (c->series[s].n && (!c->series[s].x || !c->series[s].y))
            return nmt_set_error(NMT_ERR_ARG, "series %d has no points", s);
        if (marks && marks[s].n && (!marks[s].x || !marks[s].y))
            return nmt_set_error(NMT_ERR_ARG, "series %d has no marks", s);
    }
    return NMT_OK;
}

int nmt_svg_line_chart(FILE *f, const nmt_svg_chart *c)
{
    int rc = check_chart(c, NULL);
    if (rc)
        return rc;
    double legend_w = legend_width(c->series, c->n_series, NULL);
    frame fr = {.left = 70, .top = PAD + TITLE_PX + 20, .w = 560, .h = 300, .id = -1};
    double width = fr.left + fr.w + 24 + legend_w + PAD, height = fr.top + fr.h + 60;
    axis ax, ay;
    axis_range(c, NULL, 0, 0, &ax);
    axis_range(c, NULL, 1, 0, &ay);
    svg_open(f, width, height);
    if (c->title)
        put_title(f, fr.left, PAD + TITLE_PX, c->title);
    draw_axes(f, c, &fr, &ax, &ay);
    draw_lines(f, c, NULL, &fr, &ax, &ay);
    draw_legend(f, c->series, c->n_series, fr.left + fr.w + 24, fr.top + 10, NULL);
    fputs("</svg>\n", f);
    return finish(f);
}

/* ---- small multiples ------------------------------------------------------- */

enum {
    PANEL_W = 300, PANEL_H = 190,
    PANEL_LEFT = 70,   /* y tick labels and title */
    PANEL_TOP = 26,    /* the panel's title */
    PANEL_BOTTOM = 56, /* x tick labels and title */
    PANEL_GAP = 18,
};

int nmt_svg_panel_grid(FILE *f, const char *title, const nmt_svg_panel *panels, int n,
                       int columns, const char *mark_label)
{
    if (n < 1 || !panels || columns < 1)
        return nmt_set_error(NMT_ERR_ARG, "a grid needs panels and columns");
    for (int p = 0; p < n; p++) {
        int rc = check_chart(&panels[p].chart, panels[p].marks);
        if (rc)
            return rc;
        if (panels[p].chart.n_series != panels[0].chart.n_series)
            return nmt_set_error(NMT_ERR_ARG, "every panel needs the same series");
    }
    int rows = (n + columns - 1) / columns, cols = n < columns ? n : columns;
    const nmt_svg_chart *first = &panels[0].chart;
    double cell_w = PANEL_LEFT + PANEL_W + PANEL_GAP, cell_h = PANEL_TOP + PANEL_H + PANEL_BOTTOM;
    double top0 = PAD + (title ? TITLE_PX + 12 : 0);
    double legend_x = PAD + cols * cell_w + 6;
    double width = legend_x + legend_width(first->series, first->n_series, mark_label) + PAD;
    double height = top0 + rows * cell_h + PAD;
    svg_open(f, width, height);
    if (title)
        put_title(f, PAD, PAD + TITLE_PX, title);
    for (int p = 0; p < n; p++) {
        const nmt_svg_chart *c = &panels[p].chart;
        frame fr = {.left = PAD + (p % columns) * cell_w + PANEL_LEFT,
                    .top = top0 + (p / columns) * cell_h + PANEL_TOP,
                    .w = PANEL_W, .h = PANEL_H, .id = p};
        axis ax, ay;
        axis_range(c, panels[p].marks, 0, 0, &ax);
        axis_range(c, panels[p].marks, 1, panels[p].log_y, &ay);
        if (c->title) {
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\" font-weight=\"bold\" "
                       "fill=\"#222222\">", fr.left, fr.top - 9);
            put_xml(f, c->title);
            fputs("</text>\n", f);
        }
        draw_axes(f, c, &fr, &ax, &ay);
        draw_lines(f, c, panels[p].marks, &fr, &ax, &ay);
    }
    int any_mark = 0;
    for (int p = 0; p < n; p++)
        for (int s = 0; panels[p].marks && s < panels[p].chart.n_series; s++)
            any_mark |= panels[p].marks[s].n > 0;
    draw_legend(f, first->series, first->n_series, legend_x, top0 + PANEL_TOP + 10,
                any_mark ? mark_label : NULL);
    fputs("</svg>\n", f);
    return finish(f);
}
