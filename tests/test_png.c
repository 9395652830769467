/* The PNG writer, read back by an independent little decoder (chunks, CRCs,
 * inflate), the heatmap raster and the bitmap font. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "cli/draw/font.h"
#include "cli/draw/heatmap.h"
#include "nmt/error.h"
#include "cli/draw/png.h"
#include "test_common.h"

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Decodes what nmt_png_encode writes (RGB 8-bit, filter 0), checking every
 * chunk's CRC and the order IHDR, IDAT..., IEND. Returns the pixels. */
static unsigned char *png_decode(const unsigned char *buf, size_t len, int *w, int *h)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    ck_assert_uint_ge(len, 8 + 25 + 12 + 12);
    ck_assert(memcmp(buf, sig, 8) == 0);
    size_t pos = 8, idat_len = 0;
    unsigned char *idat = NULL;
    int chunks = 0, seen_end = 0;
    while (pos < len) {
        ck_assert_msg(!seen_end, "data after IEND");
        ck_assert_uint_le(pos + 12, len);
        uint32_t n = be32(buf + pos);
        ck_assert_uint_le(pos + 12 + n, len);
        const unsigned char *type = buf + pos + 4, *data = buf + pos + 8;
        uLong crc = crc32(0L, type, 4 + n);
        ck_assert_uint_eq(crc, be32(data + n));
        if (chunks == 0) {
            ck_assert(memcmp(type, "IHDR", 4) == 0);
            ck_assert_uint_eq(n, 13);
            *w = (int)be32(data);
            *h = (int)be32(data + 4);
            ck_assert_int_eq(data[8], 8); /* bit depth */
            ck_assert_int_eq(data[9], 2); /* RGB */
            ck_assert_int_eq(data[10] | data[11] | data[12], 0);
        } else if (!memcmp(type, "IDAT", 4)) {
            idat = realloc(idat, idat_len + n);
            memcpy(idat + idat_len, data, n);
            idat_len += n;
        } else {
            ck_assert(memcmp(type, "IEND", 4) == 0);
            ck_assert_uint_eq(n, 0);
            seen_end = 1;
        }
        chunks++;
        pos += 12 + n;
    }
    ck_assert(seen_end);
    ck_assert_uint_gt(idat_len, 0);
    size_t stride = 1 + 3 * (size_t)*w, raw_len = stride * (size_t)*h;
    /* One byte more than needed: inflating must end exactly at raw_len. */
    uLongf got = (uLongf)raw_len + 1;
    unsigned char *raw = malloc(raw_len + 1);
    ck_assert_int_eq(uncompress(raw, &got, idat, (uLong)idat_len), Z_OK);
    ck_assert_uint_eq(got, raw_len);
    free(idat);
    unsigned char *rgb = malloc(raw_len);
    for (int y = 0; y < *h; y++) {
        ck_assert_int_eq(raw[y * stride], 0);
        memcpy(rgb + (size_t)y * (stride - 1), raw + y * stride + 1, stride - 1);
    }
    free(raw);
    return rgb;
}

START_TEST(png_round_trips)
{
    nmt_image img = {7, 5, malloc(7 * 5 * 3)};
    for (int k = 0; k < 7 * 5 * 3; k++)
        img.rgb[k] = (unsigned char)(k * 37 + 11);
    unsigned char *buf;
    size_t len;
    ck_assert_int_eq(nmt_png_encode(&img, &buf, &len), NMT_OK);
    int w, h;
    unsigned char *rgb = png_decode(buf, len, &w, &h);
    ck_assert_int_eq(w, 7);
    ck_assert_int_eq(h, 5);
    ck_assert(memcmp(rgb, img.rgb, 7 * 5 * 3) == 0);
    free(rgb);
    free(buf);

    /* nmt_png_write writes the same bytes to a FILE*. */
    char *fbuf = NULL;
    size_t flen = 0;
    FILE *f = open_memstream(&fbuf, &flen);
    ck_assert_int_eq(nmt_png_write(f, &img), NMT_OK);
    fclose(f);
    rgb = png_decode((unsigned char *)fbuf, flen, &w, &h);
    ck_assert(memcmp(rgb, img.rgb, 7 * 5 * 3) == 0);
    free(rgb);
    free(fbuf);
    nmt_image_free(&img);
    ck_assert_ptr_null(img.rgb);
}
END_TEST

START_TEST(png_refuses_empty_images)
{
    unsigned char px[3] = {0};
    unsigned char *buf;
    size_t len;
    nmt_image zero = {0, 5, px};
    ck_assert_int_eq(nmt_png_encode(&zero, &buf, &len), NMT_ERR_ARG);
    ck_assert_ptr_null(buf);
    nmt_image none = {1, 1, NULL};
    ck_assert_int_eq(nmt_png_encode(&none, &buf, &len), NMT_ERR_ARG);
}
END_TEST

static size_t count_colour(const unsigned char *rgb, int w, int h, const unsigned char c[3])
{
    size_t n = 0;
    for (size_t k = 0; k < (size_t)w * h; k++)
        n += !memcmp(rgb + 3 * k, c, 3);
    return n;
}

START_TEST(heatmap_png_decodes_to_its_size)
{
    static const char *const src[] = {"ein", "großer", "Hund", "</s>"};
    static const char *const tgt[] = {"a", "big", "dog", "</s>"};
    static const float att[] = {
        1.0f, 0.0f, 0.0f, 0.0f,
        0.0f, 1.0f, 0.0f, 0.0f,
        0.0f, 0.0f, 0.5f, 0.5f,
        0.0f, 0.0f, 0.0f, 1.0f,
    };
    nmt_alignment a = {4, 4, src, tgt, att};
    nmt_image img;
    ck_assert_int_eq(nmt_heatmap_image(&img, &a, "test"), NMT_OK);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(nmt_png_heatmap(f, &a, "test"), NMT_OK);
    fclose(f);
    int w, h;
    unsigned char *rgb = png_decode((unsigned char *)buf, len, &w, &h);
    ck_assert_int_eq(w, img.width);
    ck_assert_int_eq(h, img.height);
    ck_assert(memcmp(rgb, img.rgb, (size_t)w * h * 3) == 0);
    /* Three weight-1 cells of 28 x 28 (less their grid lines) in the darkest
     * colour, plus the top of the colour bar; two cells of 0.5. */
    unsigned char navy[3], mid[3];
    nmt_heat_rgb(1.0f, navy);
    nmt_heat_rgb(0.5f, mid);
    ck_assert_uint_ge(count_colour(rgb, w, h, navy), 3 * 27 * 27);
    ck_assert_uint_ge(count_colour(rgb, w, h, mid), 2 * 27 * 27);
    /* The canvas is mostly white, and there is ink for the words. */
    static const unsigned char white[3] = {255, 255, 255}, ink[3] = {34, 34, 34};
    ck_assert_uint_gt(count_colour(rgb, w, h, white), (size_t)w * h / 3);
    ck_assert_uint_gt(count_colour(rgb, w, h, ink), 200);
    free(rgb);
    free(buf);

    /* Five more source words make it 5 cells wider, nothing else. */
    static const char *const src9[] = {"ein", "großer", "Hund", "x", "x", "x", "x", "x", "</s>"};
    float att9[4 * 9] = {0};
    nmt_alignment b = {9, 4, src9, tgt, att9};
    nmt_image img9;
    ck_assert_int_eq(nmt_heatmap_image(&img9, &b, "test"), NMT_OK);
    ck_assert_int_eq(img9.width - img.width, 5 * 28);
    ck_assert_int_eq(img9.height, img.height);
    nmt_image_free(&img9);
    nmt_image_free(&img);
}
END_TEST

/* ---- the font ------------------------------------------------------------- */

static int ink_rows(const uint8_t *bits, int from, int to)
{
    int n = 0;
    for (int r = from; r < to; r++)
        n += bits[r] != 0;
    return n;
}

START_TEST(font_has_every_ascii_glyph)
{
    uint8_t glyphs[95][2 * FONT_ROWS];
    for (int c = ' '; c <= '~'; c++) {
        ck_assert_int_eq(nmt_font_glyph((uint32_t)c, glyphs[c - ' ']), 1);
        int inked = ink_rows(glyphs[c - ' '], 0, FONT_ROWS);
        if (c == ' ')
            ck_assert_int_eq(inked, 0);
        else
            ck_assert_msg(inked > 0, "no ink in '%c'", c);
        /* Plain ASCII leaves the accent rows free. */
        ck_assert_int_eq(ink_rows(glyphs[c - ' '], 0, FONT_ACCENT), 0);
        for (int r = 0; r < FONT_ROWS; r++)
            ck_assert_int_lt(glyphs[c - ' '][r], 1 << FONT_COLS);
    }
    /* No two glyphs look the same. */
    for (int x = 0; x < 95; x++)
        for (int y = x + 1; y < 95; y++)
            ck_assert_msg(memcmp(glyphs[x], glyphs[y], FONT_ROWS) != 0, "'%c' looks like '%c'",
                          x + ' ', y + ' ');
    /* Descenders go below the baseline, x-height letters do not. */
    ck_assert_int_gt(ink_rows(glyphs['g' - ' '], FONT_ACCENT + 7, FONT_ROWS), 0);
    ck_assert_int_eq(ink_rows(glyphs['a' - ' '], FONT_ACCENT + 7, FONT_ROWS), 0);
    ck_assert_int_eq(ink_rows(glyphs['a' - ' '], FONT_ACCENT, FONT_ACCENT + 2), 0);
}
END_TEST

START_TEST(font_folds_accented_letters)
{
    uint8_t a[2 * FONT_ROWS], ae[2 * FONT_ROWS], A[2 * FONT_ROWS], AE[2 * FONT_ROWS];
    nmt_font_glyph('a', a);
    nmt_font_glyph(0xE4, ae); /* ä */
    /* ä is a with ink added above it (the two dots) and nothing else. */
    ck_assert(memcmp(a + FONT_ACCENT, ae + FONT_ACCENT, FONT_ROWS - FONT_ACCENT) == 0 ||
              memcmp(a + FONT_ACCENT + 1, ae + FONT_ACCENT + 1, FONT_ROWS - FONT_ACCENT - 1) == 0);
    ck_assert(memcmp(a, ae, FONT_ROWS) != 0);
    nmt_font_glyph('A', A);
    nmt_font_glyph(0xC4, AE); /* Ä: dots in the free rows above the capital */
    ck_assert(memcmp(A + FONT_ACCENT, AE + FONT_ACCENT, FONT_ROWS - FONT_ACCENT) == 0);
    ck_assert_int_gt(ink_rows(AE, 0, FONT_ACCENT), 0);
    /* é and è differ; í loses the dot of i. */
    uint8_t e1[2 * FONT_ROWS], e2[2 * FONT_ROWS], i1[2 * FONT_ROWS], i0[2 * FONT_ROWS];
    nmt_font_glyph(0xE9, e1);
    nmt_font_glyph(0xE8, e2);
    ck_assert(memcmp(e1, e2, FONT_ROWS) != 0);
    nmt_font_glyph('i', i0);
    nmt_font_glyph(0xED, i1);
    ck_assert(memcmp(i0 + FONT_ACCENT + 1, i1 + FONT_ACCENT + 1, FONT_ROWS - FONT_ACCENT - 1) == 0);
    /* č is c with a caron. */
    uint8_t c[2 * FONT_ROWS], cv[2 * FONT_ROWS];
    nmt_font_glyph('c', c);
    nmt_font_glyph(0x10D, cv);
    ck_assert(memcmp(c + FONT_ACCENT, cv + FONT_ACCENT, FONT_ROWS - FONT_ACCENT) == 0 ||
              memcmp(c + FONT_ACCENT + 1, cv + FONT_ACCENT + 1, FONT_ROWS - FONT_ACCENT - 1) == 0);
    ck_assert(memcmp(c, cv, FONT_ROWS) != 0);
    /* Typographic quotes look like ASCII ones; other scripts get a box. */
    uint8_t q[2 * FONT_ROWS], lq[2 * FONT_ROWS], box[2 * FONT_ROWS];
    nmt_font_glyph('"', q);
    nmt_font_glyph(0x201E, lq);
    ck_assert(memcmp(q, lq, FONT_ROWS) == 0);
    ck_assert_int_eq(nmt_font_glyph(0x4E2D, box), 1); /* 中 */
    ck_assert_int_eq(box[FONT_ACCENT], 0x1f);
    ck_assert_int_eq(box[FONT_ACCENT + 1], 0x11);
}
END_TEST

/* The letters of German, French and Czech text are drawn as themselves:
 * one glyph each, not folded onto other letters. */
START_TEST(font_draws_european_letters)
{
    uint8_t g[2 * FONT_ROWS], other[2 * FONT_ROWS];
    /* ß, æ, œ and their capitals: one cell of their own, not "ss", "ae", "oe" */
    static const struct { uint32_t cp; const char *folded; } whole[] = {
        {0xDF, "sb"}, {0xE6, "ae"}, {0xC6, "AE"}, {0x153, "oe"}, {0x152, "OE"},
    };
    for (size_t k = 0; k < sizeof whole / sizeof whole[0]; k++) {
        ck_assert_int_eq(nmt_font_glyph(whole[k].cp, g), 1);
        ck_assert_int_gt(ink_rows(g, FONT_ACCENT, FONT_ACCENT + 7), 4);
        for (const char *p = whole[k].folded; *p; p++) {
            nmt_font_glyph((uint32_t)*p, other);
            ck_assert_msg(memcmp(g, other, FONT_ROWS) != 0, "U+%04X looks like '%c'",
                          (unsigned)whole[k].cp, *p);
        }
    }
    /* ß reaches the ascender row like b, s does not */
    nmt_font_glyph(0xDF, g);
    ck_assert_int_ne(g[FONT_ACCENT], 0);
    /* every letter of the three alphabets: one cell, ink, and unlike its
     * base letter and unlike every other letter of the list */
    static const uint32_t letters[] = {
        0xE4, 0xF6, 0xFC, 0xC4, 0xD6, 0xDC, 0xDF,                               /* de */
        0xE9, 0xE8, 0xEA, 0xE0, 0xE2, 0xE7, 0x153, 0xE6, 0xEB, 0xEF, 0xEE, 0xF4, /* fr */
        0xFB, 0xF9, 0xFF, 0xC9, 0xC8, 0xC7, 0x152, 0xC6,
        0x10D, 0x159, 0x161, 0x17E, 0xFD, 0xE1, 0xED, 0xFA, 0x16F, 0x11B, 0x148, /* cs */
        0x165, 0x10F, 0x10C, 0x158, 0x160, 0x17D, 0xDD, 0xC1, 0xCD, 0xDA, 0x16E, 0x11A,
        0x147, 0x164, 0x10E,
    };
    enum { N = sizeof letters / sizeof letters[0] };
    uint8_t all[N][2 * FONT_ROWS];
    for (int k = 0; k < N; k++) {
        ck_assert_int_eq(nmt_font_glyph(letters[k], all[k]), 1);
        for (int j = 0; j < k; j++)
            ck_assert_msg(memcmp(all[j], all[k], FONT_ROWS) != 0, "U+%04X looks like U+%04X",
                          (unsigned)letters[k], (unsigned)letters[j]);
    }
    /* ů has a ring, not û's circumflex; ç a cedilla below the baseline */
    uint8_t u_ring[2 * FONT_ROWS], u_circ[2 * FONT_ROWS], c[2 * FONT_ROWS], cc[2 * FONT_ROWS];
    nmt_font_glyph(0x16F, u_ring);
    nmt_font_glyph(0xFB, u_circ);
    ck_assert(memcmp(u_ring, u_circ, FONT_ROWS) != 0);
    ck_assert_int_eq(ink_rows(u_ring, FONT_ACCENT - 1, FONT_ACCENT + 2), 3); /* 3 rows */
    nmt_font_glyph('c', c);
    nmt_font_glyph(0xE7, cc);
    ck_assert_int_eq(ink_rows(c, FONT_ACCENT + 7, FONT_ROWS), 0);
    ck_assert_int_gt(ink_rows(cc, FONT_ACCENT + 7, FONT_ROWS), 0);
    ck_assert(memcmp(c, cc, FONT_ACCENT + 7) == 0);
    /* the arrows of the axis names */
    ck_assert_int_eq(nmt_font_glyph(0x2192, g), 1);
    ck_assert_int_ne(g[FONT_ACCENT + 3], 0);
    ck_assert_int_eq(nmt_font_glyph(0x2193, other), 1);
    ck_assert(memcmp(g, other, FONT_ROWS) != 0);
}
END_TEST

/* A rendered label: "Straße" is six glyph cells, not seven ("Strasse"), and its
 * pixels differ from those of "Strase"; the axis names are there in grey; the
 * colour bar's numbers stand clear of the tick marks. */
static unsigned char *render(const char *word, int *w, int *h, const nmt_align_view *v)
{
    const char *src[] = {word, "</s>"}, *tgt[] = {"x", "</s>"};
    static const float att[] = {0.9f, 0.1f, 0.2f, 0.8f};
    nmt_alignment a = {2, 2, src, tgt, att};
    nmt_image img;
    ck_assert_int_eq(nmt_heatmap_image_view(&img, &a, v), NMT_OK);
    *w = img.width;
    *h = img.height;
    return img.rgb;
}

START_TEST(heatmap_png_draws_labels_and_marks)
{
    static const unsigned char ink[3] = {34, 34, 34}, grey[3] = {136, 136, 136};
    static const unsigned char amber[3] = {240, 160, 0}, white[3] = {255, 255, 255};
    nmt_align_view plain = {.title = "t"};
    int w1, h1, w2, h2, w3, h3;
    unsigned char *fuss = render("Straße", &w1, &h1, &plain);
    unsigned char *fus = render("Strase", &w2, &h2, &plain);
    unsigned char *fusss = render("Strasse", &w3, &h3, &plain);
    /* the turned source word: Straße as tall as Strase, shorter than Strasse */
    ck_assert_int_eq(h1, h2);
    ck_assert_int_lt(h1, h3);
    ck_assert(memcmp(fuss, fus, (size_t)w1 * h1 * 3) != 0);
    ck_assert_uint_gt(count_colour(fuss, w1, h1, ink), count_colour(fus, w2, h2, ink));
    /* "source →" and "target ↓" in grey: 8 glyphs each, dozens of pixels */
    ck_assert_uint_gt(count_colour(fuss, w1, h1, grey), 150);
    /* the tick marks: no ink in the gap between a tick's end and its number */
    int bar_right = -1;
    for (int x = w1 - 1; x >= 0 && bar_right < 0; x--) {
        unsigned char navy[3];
        nmt_heat_rgb(1.0f, navy);
        for (int y = 0; y < h1; y++)
            if (!memcmp(fuss + 3 * ((size_t)y * w1 + x), navy, 3)) {
                bar_right = x;
                break;
            }
    }
    ck_assert_int_gt(bar_right, 0);
    int ticks = 0;
    for (int y = 0; y < h1; y++) {
        const unsigned char *px = fuss + 3 * ((size_t)y * w1 + bar_right + 2);
        if (memcmp(px, ink, 3))
            continue;
        ticks++;
        /* the tick is 4 px long, then at least 6 px of white */
        for (int x = bar_right + 6; x < bar_right + 12; x++)
            ck_assert(!memcmp(fuss + 3 * ((size_t)y * w1 + x), white, 3));
    }
    ck_assert_int_eq(ticks, 3);
    /* no marks without gold; with gold an amber outline and a legend */
    ck_assert_uint_eq(count_colour(fuss, w1, h1, amber), 0);
    nmt_link gold = {0, 0, 0};
    nmt_align_view marked = {.title = "t", .gold = &gold, .n_gold = 1, .has_gold = 1};
    int w4, h4;
    unsigned char *m = render("Straße", &w4, &h4, &marked);
    ck_assert_int_gt(h4, h1);
    /* one cell's outline (24 x 24 less 18 x 18) and the legend's (16 x 16 less 10 x 10) */
    ck_assert_uint_eq(count_colour(m, w4, h4, amber), (24 * 24 - 18 * 18) + (16 * 16 - 10 * 10));
    free(m);
    free(fuss);
    free(fus);
    free(fusss);
}
END_TEST

START_TEST(font_decodes_utf8)
{
    const char *s = "aä€😀\xff";
    ck_assert_uint_eq(nmt_font_next_cp(&s), 'a');
    ck_assert_uint_eq(nmt_font_next_cp(&s), 0xE4);
    ck_assert_uint_eq(nmt_font_next_cp(&s), 0x20AC);
    ck_assert_uint_eq(nmt_font_next_cp(&s), 0x1F600);
    ck_assert_uint_eq(nmt_font_next_cp(&s), 0xFFFD);
    ck_assert_int_eq(*s, 0);
    const char *cut = "\xc3";
    ck_assert_uint_eq(nmt_font_next_cp(&cut), 0xFFFD);
    ck_assert_int_eq(*cut, 0); /* stops at the NUL, never past it */
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("png");
    TCase *tc = tcase_create("png");
    tcase_add_test(tc, png_round_trips);
    tcase_add_test(tc, png_refuses_empty_images);
    tcase_add_test(tc, heatmap_png_decodes_to_its_size);
    tcase_add_test(tc, font_has_every_ascii_glyph);
    tcase_add_test(tc, font_folds_accented_letters);
    tcase_add_test(tc, font_draws_european_letters);
    tcase_add_test(tc, heatmap_png_draws_labels_and_marks);
    tcase_add_test(tc, font_decodes_utf8);
    suite_add_tcase(s, tc);
    return s;
}
