/* Helpers shared by the BLEU files (bleu.c, bleu_text.c, bleu_lower.c); not
 * part of the public API. */
#ifndef NMT_BLEU_INTERNAL_H
#define NMT_BLEU_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* Decodes the UTF-8 code point at s (NUL-terminated) into *cp and returns its
 * byte length; a malformed byte decodes as itself, one byte long. */
size_t nmt_bleu_utf8_decode(const unsigned char *s, uint32_t *cp);
/* Python's str.isspace() for one code point (what str.split() splits on). */
int nmt_bleu_is_space(uint32_t cp);

/* The simple lowercase mapping of one code point (itself if none). */
uint32_t nmt_bleu_lower_codepoint(uint32_t cp);

#endif
