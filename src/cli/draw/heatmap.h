/* Heatmaps of an alignment for people: the colour scale shared by the
 * pictures (SVG, PNG, the terminal) and the terminal heatmap. */
#ifndef NMT_CLI_HEATMAP_H
#define NMT_CLI_HEATMAP_H

#include <stdio.h>

#include "nmt/align.h"

/* ---- colours shared by the pictures --------------------------------------- */

/* The heatmap colour of a weight w in [0, 1] (clamped): a ramp from white
 * through light and mid blue to dark navy, lightness falling steadily so it
 * reads in grey too. */
void nmt_heat_rgb(float w, unsigned char rgb[3]);

/* ---- terminal heatmap ----------------------------------------------------- */


/* Target words down the left (cut to 14 columns), source words across,
 * written vertically above their columns (cut to 12 letters) so that each
 * column is two characters wide and a 40-word source still fits in about 100
 * columns. Each cell shows the weight as a shade; with colour, as a
 * background from white to dark blue as well. A legend line follows. */
int nmt_align_write_text(FILE *f, const nmt_alignment *a, nmt_color_mode color);

/* The same heatmap, shown as the view says:
 * - the title, when given, on a line of its own above it;
 * - at most v->width columns per line (when not 0): the target words are cut
 *   shorter (down to 6 columns) and, where the source still does not fit, its
 *   columns are wrapped into bands, each under its own source words and headed
 *   "source words J-K of N";
 * - with colour, cells below 0.1 keep the terminal's own background (a
 *   white cell glares on a dark terminal), the others are coloured;
 * - gold links as "[]" in their cells (without colour "[" and the shade);
 * - the legend names the marks. */
int nmt_align_write_text_view(FILE *f, const nmt_alignment *a, const nmt_align_view *v);

#endif
