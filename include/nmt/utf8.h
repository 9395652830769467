/* UTF-8 encoding and decoding, and the two notions of whitespace
 * the project needs, in one place. */
#ifndef NMT_UTF8_H
#define NMT_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* What nmt_utf8_decode gives for a byte that does not start a well-formed
 * sequence: one past the last code point, so no character class holds it. */
#define NMT_UTF8_INVALID 0x110000u

/* The code point at s[0..n) (n > 0; n may be SIZE_MAX for a NUL-terminated
 * string, whose NUL ends any sequence); *len gets its byte length. Lenient:
 * a lead byte C0..F7 with its continuation bytes decodes (overlong forms
 * included), and any other byte, or a sequence cut short, is
 * NMT_UTF8_INVALID with *len = 1, so that a caller can step over any input.
 * Text that the reader has validated (nmt_utf8_invalid_at) never has one. */
uint32_t nmt_utf8_decode(const unsigned char *s, size_t n, size_t *len);

/* The byte length of the character at s (NUL-terminated), as
 * nmt_utf8_decode steps over it: 1 for a malformed byte; never past the NUL. */
size_t nmt_utf8_char_len(const char *s);
/* The characters (code points, malformed bytes one each) of a NUL-terminated
 * string: its width where every character takes one column. */
size_t nmt_utf8_count(const char *s);

/* Writes cp (< 0x110000) as 1 to 4 bytes at out; returns how many. */
size_t nmt_utf8_encode(char *out, uint32_t cp);

/* The byte length of the well-formed UTF-8 character at s[0..n) (RFC 3629:
 * no overlong form, no surrogate, nothing above U+10FFFF), or 0. */
size_t nmt_utf8_valid_len(const unsigned char *s, size_t n);

/* The offset of the first byte of s[0..n) that is not well-formed UTF-8,
 * or n if all of it is. */
size_t nmt_utf8_invalid_at(const unsigned char *s, size_t n);

/* Two whitespace classes, on purpose different:
 * - nmt_utf8_is_python_space is Python's str.isspace(), what sacreBLEU's
 *   str.split() and rstrip() use: it must match Python to the character, so
 *   it includes the ASCII information separators 0x1C..0x1F and leaves out
 *   the invisible U+200B and U+FEFF, as Python does;
 * - nmt_utf8_is_token_space is what the word tokenizer splits on: Unicode's
 *   White_Space without the information separators (control codes, not
 *   spaces, in a corpus line), plus the zero-width space U+200B and the
 *   byte order mark U+FEFF, which separate words invisibly and would
 *   otherwise glue them into one unknown token. */
int nmt_utf8_is_python_space(uint32_t cp);
int nmt_utf8_is_token_space(uint32_t cp);

#endif
