/* SVG pictures: the attention heatmap of one sentence pair, a generic line
 * chart (BLEU against sentence length for several runs, say) and a grid of
 * such charts (training curves: small multiples). All write
 * plain, valid XML (UTF-8, escaped text, width/height/viewBox set) to a FILE*
 * the caller gives, and return NMT_OK or an NMT_ERR_* code. */
#ifndef NMT_SVG_H
#define NMT_SVG_H

#include <stddef.h>
#include <stdio.h>

#include "nmt/align.h"

/* Source words across the top (labels turned 90°), target words down the
 * left, one square cell per weight shaded white → navy (nmt_heat_rgb), a
 * colour bar with ticks 0, 0.5 and 1, and the title (NULL: "Attention").
 * Cells are a constant size, so the canvas grows with the sentence. Each
 * cell carries a tooltip ("source → target: weight"). */
int nmt_svg_heatmap(FILE *f, const nmt_alignment *a, const char *title);

/* The same with v->title, and when v->has_gold the marks: each gold link
 * (v->gold) outlined in amber (class "gold"), each of the model's own links
 * (nmt_align_hard) a black dot ringed in white (class "model"), and a
 * legend of both under the grid. */
int nmt_svg_heatmap_view(FILE *f, const nmt_alignment *a, const nmt_align_view *v);

/* One line of a chart: n points (x[k], y[k]); a NaN y leaves a gap (an empty
 * length bucket, say). */
typedef struct nmt_svg_series {
    const char *name;
    size_t n;
    const double *x; /* [n] */
    const double *y; /* [n] */
} nmt_svg_series;

typedef struct nmt_svg_chart {
    const char *title;    /* may be NULL */
    const char *x_title;  /* may be NULL */
    const char *y_title;  /* may be NULL */
    const nmt_svg_series *series;
    int n_series;
    /* Axis ranges; when min == max the range is taken from the data and
     * widened to round tick values. The y axis starts at 0 unless data go
     * below it. */
    double x_min, x_max, y_min, y_max;
} nmt_svg_chart;

/* Axes with round ticks and grid lines, axis titles, one coloured line per
 * series, with point markers when it has at most 60 points (a
 * colour-blind-safe palette, cycling after 7), and a legend at the right.
 * 720 × 420 px plus room for the legend. */
int nmt_svg_line_chart(FILE *f, const nmt_svg_chart *chart);

/* One panel of a grid: a chart (its title goes above the panel), a y axis on
 * a log scale if asked (ticks at 1, 2, 5 times powers of ten, decades alone
 * over more than three; values <= 0 are not drawn), and per series extra
 * points drawn apart as hollow squares, not joined to the line. */
typedef struct nmt_svg_panel {
    nmt_svg_chart chart;
    int log_y;
    const nmt_svg_series *marks; /* NULL, or [chart.n_series] */
} nmt_svg_panel;

/* Small multiples: n panels of 300 × 190 px, `columns` to a row, under the
 * title (may be NULL), with one legend at the right from the first panel's
 * series names, and an entry for the marks (mark_label) when any panel has
 * some. Every panel must have the same series in the same order, so that a
 * colour means one series everywhere. */
int nmt_svg_panel_grid(FILE *f, const char *title, const nmt_svg_panel *panels, int n,
                       int columns, const char *mark_label);

#endif
