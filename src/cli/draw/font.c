/* The bitmap font of the PNG pictures: 95 ASCII glyphs drawn for this
 * project on a 5 x 9 grid, and the folding of accented Latin letters onto
 * them. See draw/font.h. */
#include "draw/font.h"

#include "nmt/utf8.h"

#include <string.h>

/* The glyphs for ' ' .. '~' as a sheet that can be read (and edited) by eye:
 * bands of 8 glyphs, 9 rows each, '#' for ink. Rows 0-6 hold capitals and
 * ascenders, row 6 sits on the baseline, rows 7-8 are descenders. */
static const char *const sheet[] = {
    /* ' ' '!' '"' '#' '$' '%' '&' "'" */
    "..... ..#.. .#.#. .#.#. ..#.. ##... .##.. ..#..",
    "..... ..#.. .#.#. .#.#. .#### ##..# #..#. ..#..",
    "..... ..#.. .#.#. ##### #.#.. ...#. #.#.. .#...",
    "..... ..#.. ..... .#.#. .###. ..#.. .#... .....",
    "..... ..#.. ..... ##### ..#.# .#... #.#.# .....",
    "..... ..... ..... .#.#. ####. #..## #..#. .....",
    "..... ..#.. ..... .#.#. ..#.. ...## .##.# .....",
    "..... ..... ..... ..... ..... ..... ..... .....",
    "..... ..... ..... ..... ..... ..... ..... .....",
    /* '(' ')' '*' '+' ',' '-' '.' '/' */
    "...#. .#... ..... ..... ..... ..... ..... ....#",
    "..#.. ..#.. ..#.. ..#.. ..... ..... ..... ....#",
    ".#... ...#. #.#.# ..#.. ..... ..... ..... ...#.",
    ".#... ...#. .###. ##### ..... .###. ..... ..#..",
    ".#... ...#. #.#.# ..#.. ..... ..... ..... .#...",
    "..#.. ..#.. ..#.. ..#.. .##.. ..... .##.. #....",
    "...#. .#... ..... ..... .##.. ..... .##.. #....",
    "..... ..... ..... ..... ..#.. ..... ..... .....",
    "..... ..... ..... ..... .#... ..... ..... .....",
    /* '0' '1' '2' '3' '4' '5' '6' '7' */
    ".###. ..#.. .###. ##### ...#. ##### ..##. #####",
    "#...# .##.. #...# ...#. ..##. #.... .#... ....#",
    "#..## ..#.. ....# ..#.. .#.#. ####. #.... ...#.",
    "#.#.# ..#.. ...#. ...#. #..#. ....# ####. ..#..",
    "##..# ..#.. ..#.. ....# ##### ....# #...# .#...",
    "#...# ..#.. .#... #...# ...#. #...# #...# .#...",
    ".###. .###. ##### .###. ...#. .###. .###. .#...",
    "..... ..... ..... ..... ..... ..... ..... .....",
    "..... ..... ..... ..... ..... ..... ..... .....",
    /* '8' '9' ':' ';' '<' '=' '>' '?' */
    ".###. .###. ..... ..... ...#. ..... .#... .###.",
    "#...# #...# ..... ..... ..#.. ..... ..#.. #...#",
    "#...# #...# .##.. .##.. .#... ##### ...#. ....#",
    ".###. .#### .##.. .##.. #.... ..... ....# ...#.",
    "#...# ....# ..... ..... .#... ##### ...#. ..#..",
    "#...# ...#. .##.. .##.. ..#.. ..... ..#.. .....",
    ".###. .##.. .##.. .##.. ...#. ..... .#... ..#..",
    "..... ..... ..... ..#.. ..... ..... ..... .....",
    "..... ..... ..... .#... ..... ..... ..... .....",
    /* '@' 'A' 'B' 'C' 'D' 'E' 'F' 'G' */
    ".###. .###. ####. .###. ###.. ##### ##### .###.",
    "#...# #...# #...# #...# #..#. #.... #.... #...#",
    "#.### #...# #...# #.... #...# #.... #.... #....",
    "#.#.# ##### ####. #.... #...# ####. ####. #.###",
    "#.### #...# #...# #.... #...# #.... #.... #...#",
    "#.... #...# #...# #...# #..#. #.... #.... #...#",
    ".#### #...# ####. .###. ###.. ##### #.... .####",
    "..... ..... ..... ..... ..... ..... ..... .....",
    "..... ..... ..... ..... ..... ..... ..... .....",
    /* 'H' 'I' 'J' 'K' 'L' 'M' 'N' 'O' */
    "#...# .###. ..### #...# #.... #...# #...# .###.",
    "#...# ..#.. ...#. #..#. #.... ##.## #...# #...#",
    "#...# ..#.. ...#. #.#.. #.... #.#.# ##..# #...#",
    "##### ..#.. ...#. ##... #.... #.#.# #.#.# #...#",
    "#...# ..#.. ...#. #.#.. #.... #...# #..## #...#",
    "#...# ..#.. #..#. #..#. #.... #...# #...# #...#",
    "#...# .###. .##.. #...# ##### #...# #...# .###.",
    "..... ..... ..... ..... ..... ..... ..... .....",
    "..... ..... ..... ..... ..... ..... ..... .....",
    /* 'P' 'Q' 'R' 'S' 'T' 'U' 'V' 'W' */
    "####. .###. ####. .#### ##### #...# #...# #...#",
    "#...# #...# #...# #.... ..#.. #...# #...# #...#",
    "#...# #...# #...# #.... ..#.. #...# #...# #...#",
    "####. #...# ####. .###. ..#.. #...# #...# #.#.#",
    "#.... #.#.# #.#.. ....# ..#.. #...# #...# #.#.#",
    "#.... #..#. #..#. ....# ..#.. #...# .#.#. #.#.#",
    "#.... .##.# #...# ####. ..#.. .###. ..#.. .#.#.",
    "..... ..... ..... ..... ..... ..... ..... .....",
    "..... ..... ..... ..... ..... ..... ..... .....",
    /* 'X' 'Y' 'Z' '[' '\\' ']' '^' '_' */
    "#...# #...# ##### .###. #.... .###. ..#.. .....",
    "#...# #...# ....# .#... #.... ...#. .#.#. .....",
    ".#.#. .#.#. ...#. .#... .#... ...#. #...# .....",
    "..#.. ..#.. ..#.. .#... ..#.. ...#. ..... .....",
    ".#.#. ..#.. .#... .#... ...#. ...#. ..... .....",
    "#...# ..#.. #.... .#... ....# ...#. ..... .....",
    "#...# ..#.. ##### .###. ....# .###. ..... .....",
    "..... ..... ..... ..... ..... ..... ..... #####",
    "..... ..... ..... ..... ..... ..... ..... .....",
    /* '`' 'a' 'b' 'c' 'd' 'e' 'f' 'g' */
    ".#... ..... #.... ..... ....# ..... ..##. .....",
    "..#.. ..... #.... ..... ....# ..... .#..# .....",
    "..... .###. ####. .#### .#### .###. .#... .####",
    "..... ....# #...# #.... #...# #...# ###.. #...#",
    "..... .#### #...# #.... #...# ##### .#... #...#",
    "..... #...# #...# #.... #...# #.... .#... #...#",
    "..... .#### ####. .#### .#### .###. .#... .####",
    "..... ..... ..... ..... ..... ..... ..... ....#",
    "..... ..... ..... ..... ..... ..... ..... .###.",
    /* 'h' 'i' 'j' 'k' 'l' 'm' 'n' 'o' */
    "#.... ..#.. ...#. #.... .##.. ..... ..... .....",
    "#.... ..... ..... #.... ..#.. ..... ..... .....",
    "#.##. .##.. ..##. #..#. ..#.. ##.#. #.##. .###.",
    "##..# ..#.. ...#. #.#.. ..#.. #.#.# ##..# #...#",
    "#...# ..#.. ...#. ##... ..#.. #.#.# #...# #...#",
    "#...# ..#.. ...#. #.#.. ..#.. #.#.# #...# #...#",
    "#...# .###. ...#. #..#. .###. #.#.# #...# .###.",
    "..... ..... #..#. ..... ..... ..... ..... .....",
    "..... ..... .##.. ..... ..... ..... ..... .....",
    /* 'p' 'q' 'r' 's' 't' 'u' 'v' 'w' */
    "..... ..... ..... ..... .#... ..... ..... .....",
    "..... ..... ..... ..... .#... ..... ..... .....",
    "####. .#### #.##. .#### ####. #...# #...# #...#",
    "#...# #...# ##..# #.... .#... #...# #...# #...#",
    "#...# #...# #.... .###. .#... #...# #...# #.#.#",
    "#...# #...# #.... ....# .#..# #..## .#.#. #.#.#",
    "####. .#### #.... ####. ..##. .##.# ..#.. .#.#.",
    "#.... ....# ..... ..... ..... ..... ..... .....",
    "#.... ....# ..... ..... ..... ..... ..... .....",
    /* 'x' 'y' 'z' '{' '|' '}' '~' */
    "..... ..... ..... ...## ..#.. ##... .....",
    "..... ..... ..... ..#.. ..#.. ..#.. .....",
    "#...# #...# ##### ..#.. ..#.. ..#.. .#...",
    ".#.#. #...# ...#. .#... ..#.. ...#. #.#.#",
    "..#.. #...# ..#.. ..#.. ..#.. ..#.. ...#.",
    ".#.#. #...# .#... ..#.. ..#.. ..#.. .....",
    "#...# .#### ##### ...## ..#.. ##... .....",
    "..... ....# ..... ..... ..#.. ..... .....",
    "..... .###. ..... ..... ..... ..... .....",

};

enum { SHEET_PER_BAND = 8, SHEET_ROWS = 9 };

/* Accents drawn just above the letter, 2 rows (the ring 3), and the marks
 * drawn below the baseline in the descender rows: cedilla 'C', ogonek 'O'. */
static const char *const accent_art[][3] = {
    ['a'] = {"...#.", "..#..", NULL}, /* acute */
    ['g'] = {".#...", "..#..", NULL}, /* grave */
    ['c'] = {"..#..", ".#.#.", NULL}, /* circumflex */
    ['u'] = {".....", ".#.#.", NULL}, /* diaeresis */
    ['t'] = {".##.#", "#..#.", NULL}, /* tilde */
    ['r'] = {"..#..", ".#.#.", "..#.."}, /* ring (å, ů) */
    ['v'] = {".#.#.", "..#..", NULL}, /* caron */
    ['m'] = {".....", "####.", NULL}, /* macron */
    ['b'] = {"#...#", ".###.", NULL}, /* breve */
    ['d'] = {".....", "..#..", NULL}, /* dot above */
    ['h'] = {".#.#.", "#.#..", NULL}, /* double acute */
    ['C'] = {"..#..", ".##..", NULL}, /* cedilla, below */
    ['O'] = {"..#..", "...##", NULL}, /* ogonek, below */
};

/* Letters that are not a base letter with an accent, each drawn whole for
 * this project on the full 5 x 12 cell (rows 0-2 above the capitals, 3-9
 * the letter with its baseline under row 9, 10-11 descenders): the German
 * sharp s, the ligatures of French and Danish, and the arrows the pictures
 * label their axes with. */
static const struct {
    uint32_t cp;
    const char *rows[FONT_ROWS];
} whole[] = {
    {0xDF, /* ß */ {".....", ".....", ".....", ".##..", "#..#.", "#..#.", "#.##.", "#...#",
                    "#...#", "#.##.", "#....", "....."}},
    {0xE6, /* æ */ {".....", ".....", ".....", ".....", ".....", "##.#.", "..#.#", ".####",
                    "#.#..", ".#.##", ".....", "....."}},
    {0xC6, /* Æ */ {".....", ".....", ".....", ".####", "#.#..", "#.#..", "####.", "#.#..",
                    "#.#..", "#.###", ".....", "....."}},
    {0x153, /* œ */ {".....", ".....", ".....", ".....", ".....", ".#.#.", "#.#.#", "#.###",
                     "#.#..", ".#.##", ".....", "....."}},
    {0x152, /* Œ */ {".....", ".....", ".....", ".####", "#.#..", "#.#..", "#.##.", "#.#..",
                     "#.#..", ".####", ".....", "....."}},
    {0x2192, /* → */ {".....", ".....", ".....", ".....", "..#..", "...#.", "#####", "...#.",
                      "..#..", ".....", ".....", "....."}},
    {0x2193, /* ↓ */ {".....", ".....", ".....", "..#..", "..#..", "..#..", "..#..", "#.#.#",
                      ".###.", "..#..", ".....", "....."}},
};

static int whole_glyph(uint32_t cp, uint8_t bits[FONT_ROWS])
{
    for (size_t k = 0; k < sizeof whole / sizeof whole[0]; k++) {
        if (whole[k].cp != cp)
            continue;
        for (int r = 0; r < FONT_ROWS; r++) {
            uint8_t b = 0;
            for (int x = 0; x < FONT_COLS; x++)
                b = (uint8_t)(b << 1 | (whole[k].rows[r][x] == '#'));
            bits[r] = b;
        }
        return 1;
    }
    return 0;
}

/* Base letters and accents of U+00C0..U+00FF and U+0100..U+017F. '*' marks
 * the letters drawn whole (Æ æ ß Œ œ) or as two (Ĳ ĳ), handled in
 * nmt_font_glyph(). */
static const char latin1_base[] = "AAAAAA*CEEEEIIIIDNOOOOOxOUUUUYP*"
                                  "aaaaaa*ceeeeiiiidnooooo/ouuuuypy";
static const char latin1_accent[] = "gactur-Cgacugacu-tgactu--gacua--"
                                    "gactur-Cgacugacu-tgactu--gacua-u";
static const char latin_a_base[] =
    "AaAaAaCcCcCcCcDdDdEeEeEeEeEeGgGgGgGgHhHhIiIiIiIiIi**JjKkkLlLlLlLlLlNnNnNnnNn"
    "OoOoOo**RrRrRrSsSsSsSsTtTtTtUuUuUuUuUuUuWwYyYZzZzZzs";
static const char latin_a_accent[] =
    "mmbbOOaaccddvvvv--mmbbddOOvvccbbddC-cc--ttmmbbOOd---ccCC-aaCCvv----aaCCvv---"
    "mmbbhh--aaCCvvaaccCCvvCCvv--ttmmbbrrhhOOccccuaaddvv-";

_Static_assert(sizeof latin1_base == 65 && sizeof latin1_accent == 65, "Latin-1 tables");
_Static_assert(sizeof latin_a_base == 129 && sizeof latin_a_accent == 129, "Latin-A tables");

static void ascii_glyph(char c, uint8_t bits[FONT_ROWS])
{
    memset(bits, 0, FONT_ROWS);
    if (c < ' ' || c > '~')
        return;
    int k = c - ' ', band = k / SHEET_PER_BAND, col = k % SHEET_PER_BAND;
    for (int r = 0; r < SHEET_ROWS; r++) {
        const char *row = sheet[band * SHEET_ROWS + r] + col * (FONT_COLS + 1);
        uint8_t b = 0;
        for (int x = 0; x < FONT_COLS; x++)
            b = (uint8_t)(b << 1 | (row[x] == '#'));
        bits[FONT_ACCENT + r] = b;
    }
}

static void add_accent(char accent, char base, uint8_t bits[FONT_ROWS])
{
    const char *const *art = accent_art[(unsigned char)accent];
    if (accent == '-' || !art[0])
        return;
    /* Above a capital or an ascender the accent sits in the free rows on top;
     * above a lower-case letter, in its (empty) ascender rows. An i loses
     * its dot first. Cedillas and ogoneks go in the descender rows. */
    int top = base >= 'a' && base <= 'z' && base != 'b' && base != 'd' && base != 'h' &&
                      base != 'k' && base != 'l' && base != 't' && base != 'f'
                  ? FONT_ACCENT - 1
                  : 0;
    if (accent == 'C' || accent == 'O')
        top = FONT_ROWS - 2;
    else if ((base == 'i' || base == 'j') && top)
        bits[FONT_ACCENT] = 0;
    for (int r = 0; r < 3 && art[r]; r++) {
        uint8_t b = 0;
        for (int x = 0; x < FONT_COLS; x++)
            b = (uint8_t)(b << 1 | (art[r][x] == '#'));
        bits[top + r] |= b;
    }
}

static int two_letters(const char *pair, uint8_t bits[2 * FONT_ROWS])
{
    ascii_glyph(pair[0], bits);
    ascii_glyph(pair[1], bits + FONT_ROWS);
    return 2;
}

int nmt_font_glyph(uint32_t cp, uint8_t bits[2 * FONT_ROWS])
{
    char base = 0, accent = '-';
    if (cp >= ' ' && cp <= '~') {
        ascii_glyph((char)cp, bits);
        return 1;
    }
    if (cp >= 0xC0 && cp <= 0xFF) {
        base = latin1_base[cp - 0xC0];
        accent = latin1_accent[cp - 0xC0];
    } else if (cp >= 0x100 && cp <= 0x17F) {
        base = latin_a_base[cp - 0x100];
        accent = latin_a_accent[cp - 0x100];
    }
    if (whole_glyph(cp, bits))
        return 1;
    switch (cp) {
    case 0x132: return two_letters("IJ", bits);
    case 0x133: return two_letters("ij", bits);
    case 0xA0: base = ' '; break;
    case 0xAB: case 0xBB: case 0x201C: case 0x201D: case 0x201E: case 0x201F:
        base = '"';
        break;
    case 0x2018: case 0x2019: case 0x201A: case 0x201B: case 0x2032: case 0xB4:
        base = '\'';
        break;
    case 0x2010: case 0x2011: case 0x2012: case 0x2013: case 0x2014: case 0x2212:
        base = '-';
        break;
    case 0x2026: return two_letters("..", bits);
    case 0xB7: case 0x2022: base = '.'; break;
    default: break;
    }
    if (!base) {
        /* Not drawable: a hollow box says "a character is here". */
        memset(bits, 0, FONT_ROWS);
        for (int r = FONT_ACCENT; r < FONT_ACCENT + 7; r++)
            bits[r] = r == FONT_ACCENT || r == FONT_ACCENT + 6 ? 0x1f : 0x11;
        return 1;
    }
    ascii_glyph(base, bits);
    add_accent(accent, base, bits);
    return 1;
}

uint32_t nmt_font_next_cp(const char **s)
{
    size_t len;
    uint32_t cp = nmt_utf8_decode((const unsigned char *)*s, SIZE_MAX, &len);
    *s += len; /* one byte for a malformed one, never past the NUL */
    return cp == NMT_UTF8_INVALID ? 0xFFFD : cp;
}
