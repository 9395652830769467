/* PNG encoding with zlib, and the heatmap raster of one sentence pair. See
 * draw/png.h. */
#include "draw/png.h"
#include "draw/heatmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "draw/font.h"
#include "nmt/error.h"

/* ---- encoding ------------------------------------------------------------- */

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* A chunk: length, type, data, then the CRC-32 of type and data. */
static unsigned char *put_chunk(unsigned char *p, const char type[4], const unsigned char *data,
                                uint32_t len)
{
    put_be32(p, len);
    memcpy(p + 4, type, 4);
    if (len)
        memcpy(p + 8, data, len);
    uLong crc = crc32(0L, p + 4, 4 + len);
    put_be32(p + 8 + len, (uint32_t)crc);
    return p + 12 + len;
}

int nmt_png_encode(const nmt_image *img, unsigned char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (!img || img->width < 1 || img->height < 1 || !img->rgb)
        return nmt_set_error(NMT_ERR_ARG, "an image needs a size and pixels");
    size_t stride = 1 + 3 * (size_t)img->width; /* a filter byte, then the row */
    size_t raw_len = stride * (size_t)img->height;
    if (raw_len > (size_t)1 << 30)
        return nmt_set_error(NMT_ERR_ARG, "a %d x %d image is too large to write",
                             img->width, img->height);
    /* Filter type 0 (none) on every row: the heatmaps are flat areas of
     * colour, which deflate packs well as they are. */
    unsigned char *raw = malloc(raw_len);
    uLongf z_len = compressBound((uLong)raw_len);
    unsigned char *buf = malloc(8 + 25 + 12 + z_len + 12);
    if (!raw || !buf) {
        free(raw);
        free(buf);
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for a PNG");
    }
    for (int y = 0; y < img->height; y++) {
        raw[y * stride] = 0;
        memcpy(raw + y * stride + 1, img->rgb + (size_t)y * 3 * img->width, stride - 1);
    }
    static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    memcpy(buf, signature, 8);
    unsigned char ihdr[13];
    put_be32(ihdr, (uint32_t)img->width);
    put_be32(ihdr + 4, (uint32_t)img->height);
    ihdr[8] = 8;  /* bits per sample */
    ihdr[9] = 2;  /* colour type: RGB */
    ihdr[10] = 0; /* deflate */
    ihdr[11] = 0; /* adaptive filtering, the only method */
    ihdr[12] = 0; /* no interlace */
    unsigned char *p = put_chunk(buf + 8, "IHDR", ihdr, 13);
    /* Deflate straight into the IDAT chunk's data field. */
    if (compress2(p + 8, &z_len, raw, (uLong)raw_len, 9) != Z_OK) {
        free(raw);
        free(buf);
        return nmt_set_error(NMT_ERR_NOMEM, "zlib could not compress the image");
    }
    free(raw);
    p = put_chunk(p, "IDAT", p + 8, (uint32_t)z_len);
    p = put_chunk(p, "IEND", NULL, 0);
    *out = buf;
    *out_len = (size_t)(p - buf);
    return NMT_OK;
}

int nmt_png_write(FILE *f, const nmt_image *img)
{
    unsigned char *buf;
    size_t len;
    int rc = nmt_png_encode(img, &buf, &len);
    if (rc)
        return rc;
    size_t wrote = fwrite(buf, 1, len, f);
    free(buf);
    if (wrote != len || ferror(f))
        return nmt_set_error(NMT_ERR_IO, "writing the PNG failed");
    return NMT_OK;
}

void nmt_image_free(nmt_image *img)
{
    if (!img)
        return;
    free(img->rgb);
    img->rgb = NULL;
    img->width = img->height = 0;
}

/* ---- drawing -------------------------------------------------------------- */

enum {
    SCALE = 2,                        /* font pixels per glyph dot */
    LINE = FONT_ROWS * SCALE,         /* height of a line of text */
    ADVANCE = FONT_ADVANCE * SCALE,   /* width of a character */
    CELL = 28,                        /* heatmap cell */
    PAD = 14,
    MAX_CHARS = 24,                   /* longer words are cut */
    MAX_TITLE = 120,
    TICK = 4,                         /* the colour bar's tick marks */
    TICK_GAP = 8,                     /* between a tick and its number */
};

#define AXIS_SOURCE "source \u2192"
#define AXIS_TARGET "target \u2193"

static const unsigned char ink[3] = {34, 34, 34};
static const unsigned char grid_grey[3] = {228, 228, 228};
static const unsigned char frame_grey[3] = {153, 153, 153};

static void fill(nmt_image *img, int x, int y, int w, int h, const unsigned char rgb[3])
{
    for (int yy = y < 0 ? 0 : y; yy < y + h && yy < img->height; yy++)
        for (int xx = x < 0 ? 0 : x; xx < x + w && xx < img->width; xx++)
            memcpy(img->rgb + 3 * ((size_t)yy * img->width + xx), rgb, 3);
}

/* Glyph cells a text takes, capped at max_cells. */
static int text_cells(const char *s, int max_cells)
{
    int n = 0;
    uint8_t bits[2 * FONT_ROWS];
    while (*s)
        n += nmt_font_glyph(nmt_font_next_cp(&s), bits);
    return n > max_cells ? max_cells : n;
}

static int text_px(const char *s, int max_cells)
{
    int n = text_cells(s, max_cells);
    return n ? n * ADVANCE - SCALE : 0; /* no gap after the last letter */
}

/* Draws one glyph cell. Unturned, (x, y) is the top-left of the line box.
 * Turned (reading upwards), x is the line box's left edge (where the tops
 * of the letters face) and y the pixel row just below where the text starts. */
static void draw_cell(nmt_image *img, int x, int y, int cell, const uint8_t bits[FONT_ROWS],
                      int turned, const unsigned char rgb[3])
{
    for (int r = 0; r < FONT_ROWS; r++)
        for (int c = 0; c < FONT_COLS; c++) {
            if (!(bits[r] >> (FONT_COLS - 1 - c) & 1))
                continue;
            int u = cell * ADVANCE + c * SCALE, v = r * SCALE; /* along, down */
            if (turned)
                fill(img, x + v, y - u - SCALE, SCALE, SCALE, rgb);
            else
                fill(img, x + u, y + v, SCALE, SCALE, rgb);
        }
}

/* Draws at most max_cells glyph cells of s; a text cut short ends in '~'. */
static void draw_text(nmt_image *img, int x, int y, const char *s, int max_cells, int turned,
                      const unsigned char rgb[3])
{
    int total = text_cells(s, max_cells), cell = 0;
    uint8_t bits[2 * FONT_ROWS];
    while (*s && cell < total) {
        int n = nmt_font_glyph(nmt_font_next_cp(&s), bits);
        for (int k = 0; k < n && cell < total; k++, cell++) {
            if (cell == max_cells - 1 && (*s || k + 1 < n)) {
                nmt_font_glyph('~', bits); /* the word goes on: say so */
                draw_cell(img, x, y, cell, bits, turned, rgb);
                return;
            }
            draw_cell(img, x, y, cell, bits + k * FONT_ROWS, turned, rgb);
        }
    }
}

/* ---- the heatmap ---------------------------------------------------------- */

static const unsigned char gold_amber[3] = {240, 160, 0};
static const unsigned char axis_grey[3] = {136, 136, 136};
static const unsigned char white[3] = {255, 255, 255};
static const unsigned char dot_black[3] = {17, 17, 17};

/* A disc of radius r around (cx, cy). */
static void disc(nmt_image *img, double cx, double cy, double r, const unsigned char rgb[3])
{
    for (int y = (int)(cy - r) - 1; y <= (int)(cy + r) + 1; y++)
        for (int x = (int)(cx - r) - 1; x <= (int)(cx + r) + 1; x++)
            if ((x + 0.5 - cx) * (x + 0.5 - cx) + (y + 0.5 - cy) * (y + 0.5 - cy) <= r * r)
                fill(img, x, y, 1, 1, rgb);
}

/* An outline t pixels thick just inside the box (x, y, w, h). */
static void outline(nmt_image *img, int x, int y, int w, int h, int t, const unsigned char rgb[3])
{
    fill(img, x, y, w, t, rgb);
    fill(img, x, y + h - t, w, t, rgb);
    fill(img, x, y, t, h, rgb);
    fill(img, x + w - t, y, t, h, rgb);
}

/* The same outline dashed, for a possible gold link: runs of 4 pixels
 * with gaps of 3 along each side, as the SVG's stroke-dasharray. */
static void dashed_outline(nmt_image *img, int x, int y, int w, int h, int t,
                           const unsigned char rgb[3])
{
    for (int d = 0; d < w; d += 7) {
        int run = w - d < 4 ? w - d : 4;
        fill(img, x + d, y, run, t, rgb);
        fill(img, x + d, y + h - t, run, t, rgb);
    }
    for (int d = 0; d < h; d += 7) {
        int run = h - d < 4 ? h - d : 4;
        fill(img, x, y + d, t, run, rgb);
        fill(img, x + w - t, y + d, t, run, rgb);
    }
}

static const char model_legend[] = "the model's link (the source word it attends to most)";
/* The legend's row of a possible link, under the first, when a pair has one. */
enum { LEGEND_ROW = 24 };

/* Gold links outlined in amber, the model's links as dots ringed in white,
 * as the SVG draws them, and their legend at (lx, ly). */
static int draw_marks(nmt_image *img, const nmt_alignment *a, const nmt_align_view *v, int gx,
                      int gy, int lx, int ly)
{
    nmt_link *hard = malloc((size_t)a->n_tgt * sizeof *hard);
    if (!hard)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    int n_hard = v->has_hard ? v->n_hard : nmt_align_hard(a, hard);
    if (v->has_hard)
        memcpy(hard, v->hard, (size_t)n_hard * sizeof *hard);
    for (size_t k = 0; k < v->n_gold; k++) {
        const nmt_link *l = &v->gold[k];
        if (l->src < 0 || l->tgt < 0 || l->src >= a->n_src - 1 || l->tgt >= a->n_tgt - 1)
            continue;
        if (nmt_align_view_gold(v, l->src, l->tgt) == 2)
            dashed_outline(img, gx + l->src * CELL + 2, gy + l->tgt * CELL + 2, CELL - 4,
                           CELL - 4, 2, gold_amber);
        else
            outline(img, gx + l->src * CELL + 2, gy + l->tgt * CELL + 2, CELL - 4, CELL - 4, 3,
                    gold_amber);
    }
    for (int k = 0; k < n_hard; k++) {
        double cx = gx + (hard[k].src + 0.5) * CELL, cy = gy + (hard[k].tgt + 0.5) * CELL;
        disc(img, cx, cy, 5.0, white);
        disc(img, cx, cy, 3.6, dot_black);
    }
    free(hard);
    int possible = nmt_align_view_has_possible(v);
    const char *sure = possible ? "gold, sure" : "gold link";
    outline(img, lx, ly, 16, 16, 3, gold_amber);
    draw_text(img, lx + 24, ly + 8 - LINE / 2 - SCALE, sure, MAX_TITLE, 0, ink);
    if (possible) {
        dashed_outline(img, lx, ly + LEGEND_ROW, 16, 16, 2, gold_amber);
        draw_text(img, lx + 24, ly + LEGEND_ROW + 8 - LINE / 2 - SCALE, "gold, possible",
                  MAX_TITLE, 0, ink);
    }
    int mx = lx + 24 + text_px(sure, MAX_TITLE) + 24;
    disc(img, mx + 8, ly + 8, 3.6, dot_black);
    draw_text(img, mx + 22, ly + 8 - LINE / 2 - SCALE, model_legend, MAX_TITLE, 0, ink);
    return NMT_OK;
}

int nmt_heatmap_image(nmt_image *img, const nmt_alignment *a, const char *title)
{
    nmt_align_view v = {.title = title};
    return nmt_heatmap_image_view(img, a, &v);
}

int nmt_heatmap_image_view(nmt_image *img, const nmt_alignment *a, const nmt_align_view *v)
{
    const char *title = v ? v->title : NULL;
    int marks = v && v->has_gold;
    img->rgb = NULL;
    img->width = img->height = 0;
    if (!a || a->n_src < 1 || a->n_tgt < 1 || !a->src || !a->tgt || !a->att)
        return nmt_set_error(NMT_ERR_ARG, "an alignment needs at least \"</s>\" on each side");
    if (a->n_src > 2000 || a->n_tgt > 2000)
        return nmt_set_error(NMT_ERR_ARG, "a %d x %d alignment is too large for a picture",
                             a->n_tgt, a->n_src);
    if (!title)
        title = "Attention";
    int src_label = 0, tgt_label = text_px(AXIS_SOURCE, MAX_CHARS);
    for (int j = 0; j < a->n_src; j++) {
        int px = text_px(a->src[j], MAX_CHARS);
        src_label = px > src_label ? px : src_label;
    }
    for (int i = 0; i < a->n_tgt; i++) {
        int px = text_px(a->tgt[i], MAX_CHARS);
        tgt_label = px > tgt_label ? px : tgt_label;
    }

    /* Title, turned source words, grid; target words left, colour bar right;
     * the axis names where the eye starts reading each axis, as in the SVG;
     * the marks' legend below. */
    int grid_w = a->n_src * CELL, grid_h = a->n_tgt * CELL;
    int gx = PAD + tgt_label + 10, gy = PAD + LINE + 12 + src_label + 8;
    int bar_h = grid_h > 120 ? grid_h : 120, bar_w = 16;
    int bar_x = gx + grid_w + 22;
    int tick_x = bar_x + bar_w + TICK + TICK_GAP;
    int width = tick_x + text_px("0.5", MAX_CHARS) + PAD;
    int title_w = PAD + text_px(title, MAX_TITLE) + 1 + PAD;
    if (width < title_w)
        width = title_w;
    int below = gy + (grid_h > bar_h ? grid_h : bar_h);
    int height = below + 6 + LINE + PAD;
    int legend_y = below + 6 + LINE + 8;
    if (marks) {
        int legend_w = PAD + 24 + text_px("gold link", MAX_TITLE) + 46 +
                       text_px(model_legend, MAX_TITLE) + PAD;
        width = width > legend_w ? width : legend_w;
        height += 16 + 10 + (nmt_align_view_has_possible(v) ? LEGEND_ROW : 0);
    }

    img->width = width;
    img->height = height;
    img->rgb = malloc((size_t)width * height * 3);
    if (!img->rgb) {
        img->width = img->height = 0;
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for a %d x %d picture", width, height);
    }
    memset(img->rgb, 255, (size_t)width * height * 3);

    /* A bold title: the same text twice, one pixel apart. */
    draw_text(img, PAD, PAD, title, MAX_TITLE, 0, ink);
    draw_text(img, PAD + 1, PAD, title, MAX_TITLE, 0, ink);
    draw_text(img, gx - 10 - text_px(AXIS_SOURCE, MAX_CHARS), gy - 8 - LINE + 2 * SCALE,
              AXIS_SOURCE, MAX_CHARS, 0, axis_grey);
    draw_text(img, gx - 10 - text_px(AXIS_TARGET, MAX_CHARS), below + 6, AXIS_TARGET, MAX_CHARS,
              0, axis_grey);
    for (int j = 0; j < a->n_src; j++)
        draw_text(img, gx + j * CELL + (CELL - LINE) / 2, gy - 6, a->src[j], MAX_CHARS, 1, ink);
    for (int i = 0; i < a->n_tgt; i++)
        draw_text(img, gx - 10 - text_px(a->tgt[i], MAX_CHARS), gy + i * CELL + (CELL - LINE) / 2,
                  a->tgt[i], MAX_CHARS, 0, ink);

    for (int i = 0; i < a->n_tgt; i++)
        for (int j = 0; j < a->n_src; j++) {
            unsigned char rgb[3];
            nmt_heat_rgb(a->att[(size_t)i * a->n_src + j], rgb);
            fill(img, gx + j * CELL, gy + i * CELL, CELL, CELL, rgb);
        }
    /* Faint lines between cells keep rows and columns traceable where the
     * weights are near 0 and the cells white; a frame around the whole. */
    for (int j = 1; j < a->n_src; j++)
        fill(img, gx + j * CELL, gy, 1, grid_h, grid_grey);
    for (int i = 1; i < a->n_tgt; i++)
        fill(img, gx, gy + i * CELL, grid_w, 1, grid_grey);
    fill(img, gx - 1, gy - 1, grid_w + 2, 1, frame_grey);
    fill(img, gx - 1, gy + grid_h, grid_w + 2, 1, frame_grey);
    fill(img, gx - 1, gy - 1, 1, grid_h + 2, frame_grey);
    fill(img, gx + grid_w, gy - 1, 1, grid_h + 2, frame_grey);
    if (marks) {
        int rc = draw_marks(img, a, v, gx, gy, PAD, legend_y);
        if (rc) {
            nmt_image_free(img);
            return rc;
        }
    }

    /* Colour bar, 1 at the top, from the same ramp as the cells. */
    for (int y = 0; y < bar_h; y++) {
        unsigned char rgb[3];
        nmt_heat_rgb(1.0f - (float)y / (float)(bar_h - 1), rgb);
        fill(img, bar_x, gy + y, bar_w, 1, rgb);
    }
    fill(img, bar_x - 1, gy - 1, bar_w + 2, 1, frame_grey);
    fill(img, bar_x - 1, gy + bar_h, bar_w + 2, 1, frame_grey);
    fill(img, bar_x - 1, gy - 1, 1, bar_h + 2, frame_grey);
    fill(img, bar_x + bar_w, gy - 1, 1, bar_h + 2, frame_grey);
    static const char *const ticks[3] = {"1", "0.5", "0"};
    for (int t = 0; t < 3; t++) {
        int y = gy + t * (bar_h - 1) / 2;
        fill(img, bar_x + bar_w, y, TICK, 1, ink);
        /* Centre the digits (glyph rows 0-6) on the tick, a clear gap after
         * it so that the tick does not read as a minus sign. */
        draw_text(img, tick_x, y - (FONT_ACCENT + 3) * SCALE - 1, ticks[t], MAX_CHARS, 0, ink);
    }
    return NMT_OK;
}

int nmt_png_heatmap(FILE *f, const nmt_alignment *a, const char *title)
{
    nmt_align_view v = {.title = title};
    return nmt_png_heatmap_view(f, a, &v);
}

int nmt_png_heatmap_view(FILE *f, const nmt_alignment *a, const nmt_align_view *v)
{
    nmt_image img;
    int rc = nmt_heatmap_image_view(&img, a, v);
    if (!rc)
        rc = nmt_png_write(f, &img);
    nmt_image_free(&img);
    return rc;
}
