/* PNG pictures written with zlib alone: an encoder for 8-bit RGB images and
 * the attention heatmap of one sentence pair, words drawn in a built-in
 * bitmap font. */
#ifndef NMT_PNG_H
#define NMT_PNG_H

#include <stddef.h>
#include <stdio.h>

#include "nmt/align.h"

/* An 8-bit RGB raster, rows top to bottom: pixel (x, y) at rgb[3 * (y * w + x)]. */
typedef struct nmt_image {
    int width, height;
    unsigned char *rgb; /* [height, width, 3], malloc'ed */
} nmt_image;

/* Encodes the image as a PNG (signature, IHDR, one IDAT, IEND; colour type 2,
 * 8 bits, no interlace; crc32 and deflate from zlib) into a malloc'ed buffer
 * that the caller frees. */
int nmt_png_encode(const nmt_image *img, unsigned char **out, size_t *out_len);
/* Encodes and writes to f. */
int nmt_png_write(FILE *f, const nmt_image *img);

/* Renders the heatmap of one pair: the title (NULL: "Attention") on top,
 * source words turned 90° (reading upwards) above their columns, target
 * words left of their rows, cells of 28 px shaded by nmt_heat_rgb, and a
 * colour bar with ticks 0, 0.5 and 1 on the right. Letters are drawn at
 * twice the font's size; the Latin letters of western and central European
 * languages as themselves, other scripts as hollow boxes (see draw/font.h). Words longer than
 * 24 characters are cut, ending in '~'. Free the image with nmt_image_free. */
int nmt_heatmap_image(nmt_image *img, const nmt_alignment *a, const char *title);
/* nmt_heatmap_image then nmt_png_write. */
int nmt_png_heatmap(FILE *f, const nmt_alignment *a, const char *title);

/* The same with v->title and, when v->has_gold, the marks of the SVG
 * (nmt_svg_heatmap_view): gold links outlined in amber (240, 160, 0), the
 * model's own links as black dots ringed in white, and their legend. The
 * axis names "source →" and "target ↓" are drawn in grey as in the SVG. */
int nmt_heatmap_image_view(nmt_image *img, const nmt_alignment *a, const nmt_align_view *v);
int nmt_png_heatmap_view(FILE *f, const nmt_alignment *a, const nmt_align_view *v);

void nmt_image_free(nmt_image *img);

#endif
