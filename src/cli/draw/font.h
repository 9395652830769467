/* A small bitmap font for the PNG pictures (internal to libnmt). */
#ifndef NMT_FONT_H
#define NMT_FONT_H

#include <stdint.h>

/* Each glyph is 5 columns by FONT_ROWS rows: FONT_ACCENT rows kept free for an
 * accent above, then the letter itself (capitals and ascenders 7 rows, the
 * baseline under the 7th, then 2 rows of descenders). */
enum { FONT_COLS = 5, FONT_ACCENT = 3, FONT_ROWS = FONT_ACCENT + 9, FONT_ADVANCE = 6 };

/* Draws one code point into bits[FONT_ROWS] (bit 4 = leftmost column) and
 * returns the number of glyph cells it takes (1, or 2 for Ĳ → "IJ" and "…":
 * bits must then have room for 2 * FONT_ROWS rows, the second glyph
 * following the first). ASCII is drawn as itself; ß, æ, Æ, œ, Œ and the
 * arrows → ↓ as glyphs of their own; the other Latin-1 and Latin
 * Extended-A letters as their base letter with the accent drawn above
 * (ä → a with two dots, é, è, â, ñ, č, ř, ő, a ring on å and ů ...) or the
 * cedilla or ogonek below (ç, ş, ą, ę); typographic quotes and dashes as
 * their ASCII look-alikes; any other character as a hollow box. */
int nmt_font_glyph(uint32_t cp, uint8_t bits[2 * FONT_ROWS]);

/* Decodes one UTF-8 sequence at *s, advancing it; bad bytes give U+FFFD. */
uint32_t nmt_font_next_cp(const char **s);

#endif
