/* SVG pictures: an attention heatmap and a line chart. See include/nmt/svg.h.
 *
 * Text widths are estimated (no font metrics here): 0.6 em per character is
 * a little wider than the average of common sans-serif fonts, so labels get
 * room to spare rather than overlap. */
#include "nmt/svg.h"

#include <math.h>
#include <string.h>

#include "nmt/error.h"

#define FONT "DejaVu Sans, Helvetica, Arial, sans-serif"

enum {
    CELL = 26,        /* heatmap cell, px */
    LABEL_PX = 13,    /* word labels, px */
    TITLE_PX = 16,
    PAD = 14,         /* outer margin */
};

static double text_width(const char *s, double font_px)
{
    int chars = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        chars += (*p & 0xc0) != 0x80; /* count code points, not bytes */
    return chars * 0.6 * font_px;
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

int nmt_svg_heatmap(FILE *f, const nmt_alignment *a, const char *title)
{
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

/* ---- line chart ----------------------------------------------------------- */

/* Okabe & Ito's colour-blind-safe palette, without its yellow (too light on
 * white). */
static const char *const palette[7] = {
    "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000",
};

/* A round step (1, 2 or 5 times a power of ten) giving about `n` ticks. */
static double nice_step(double range, int n)
{
    if (!(range > 0))
        return 1;
    double raw = range / n, p = pow(10, floor(log10(raw))), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

/* The data range of one axis, widened to whole steps. */
static void axis_range(const nmt_svg_chart *c, int axis, double *lo, double *hi, double *step)
{
    double mn = axis ? c->y_min : c->x_min, mx = axis ? c->y_max : c->x_max;
    int fixed = mn != mx;
    if (!fixed) {
        mn = (double)INFINITY;
        mx = -(double)INFINITY;
        for (int s = 0; s < c->n_series; s++)
            for (size_t k = 0; k < c->series[s].n; k++) {
                double v = axis ? c->series[s].y[k] : c->series[s].x[k];
                if (isfinite(v) && isfinite(c->series[s].y[k])) {
                    mn = fmin(mn, v);
                    mx = fmax(mx, v);
                }
            }
        if (!isfinite(mn)) {
            mn = 0;
            mx = 1;
        }
        if (axis && mn > 0)
            mn = 0; /* a BLEU or loss axis from 0 does not exaggerate */
        if (mx == mn)
            mx = mn + 1;
    }
    *step = nice_step(mx - mn, 5);
    if (!fixed) {
        mn = floor(mn / *step) * *step;
        mx = ceil(mx / *step) * *step;
    }
    *lo = mn;
    *hi = mx;
}

static void put_number(FILE *f, double v, double step)
{
    /* As many decimals as the step needs, and no "-0". */
    int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    if (fabs(v) < step * 1e-6)
        v = 0;
    fprintf(f, "%.*f", dec, v);
}

int nmt_svg_line_chart(FILE *f, const nmt_svg_chart *c)
{
    if (!c || c->n_series < 0 || (c->n_series && !c->series))
        return nmt_set_error(NMT_ERR_ARG, "a chart needs its series");
    for (int s = 0; s < c->n_series; s++)
        if (c->series[s].n && (!c->series[s].x || !c->series[s].y))
            return nmt_set_error(NMT_ERR_ARG, "series %d has no points", s);
    double legend_w = 0;
    for (int s = 0; s < c->n_series; s++)
        legend_w = fmax(legend_w, text_width(c->series[s].name ? c->series[s].name : "", 12));
    legend_w = c->n_series ? legend_w + 40 : 0;

    double left = 70, top = PAD + TITLE_PX + 20, pw = 560, ph = 300;
    double width = left + pw + 24 + legend_w + PAD, height = top + ph + 60;
    double x0, x1, xs, y0, y1, ys;
    axis_range(c, 0, &x0, &x1, &xs);
    axis_range(c, 1, &y0, &y1, &ys);
#define PX(v) (left + ((v) - x0) / (x1 - x0) * pw)
#define PY(v) (top + ph - ((v) - y0) / (y1 - y0) * ph)

    svg_open(f, width, height);
    if (c->title)
        put_title(f, left, PAD + TITLE_PX, c->title);
    fputs("<g font-size=\"12\" fill=\"#444444\">\n", f);
    for (int k = 0; x0 + k * xs <= x1 + xs * 1e-9; k++) {
        double v = x0 + k * xs, x = PX(v);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eeeeee\"/>\n",
                x, top, x, top + ph);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, top + ph + 18);
        put_number(f, v, xs);
        fputs("</text>\n", f);
    }
    for (int k = 0; y0 + k * ys <= y1 + ys * 1e-9; k++) {
        double v = y0 + k * ys, y = PY(v);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eeeeee\"/>\n",
                left, y, left + pw, y);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" dy=\"0.35em\" text-anchor=\"end\">", left - 8, y);
        put_number(f, v, ys);
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

    /* Clip the lines to the plot so fixed ranges may cut data off cleanly. */
    fprintf(f, "<defs><clipPath id=\"plot\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
               "height=\"%.1f\"/></clipPath></defs>\n", left, top, pw, ph);
    for (int s = 0; s < c->n_series; s++) {
        const nmt_svg_series *sr = &c->series[s];
        const char *col = palette[s % 7];
        fprintf(f, "<g clip-path=\"url(#plot)\" stroke=\"%s\" fill=\"%s\">\n", col, col);
        /* One polyline per run of finite points: NaN leaves a gap. */
        int open = 0;
        for (size_t k = 0; k <= sr->n; k++) {
            int ok = k < sr->n && isfinite(sr->x[k]) && isfinite(sr->y[k]);
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
        for (size_t k = 0; k < sr->n; k++)
            if (isfinite(sr->x[k]) && isfinite(sr->y[k]))
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\"/>\n", PX(sr->x[k]),
                        PY(sr->y[k]));
        fputs("</g>\n", f);
        double lx = left + pw + 24, ly = top + 10 + s * 22;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                   "stroke-width=\"2\"/><circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n",
                lx, ly, lx + 24, ly, col, lx + 12, ly, col);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" dy=\"0.35em\" font-size=\"12\" fill=\"#222222\">",
                lx + 32, ly);
        put_xml(f, sr->name ? sr->name : "");
        fputs("</text>\n", f);
    }
#undef PX
#undef PY
    fputs("</svg>\n", f);
    return finish(f);
}
