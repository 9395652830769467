/* Helpers shared by the BLEU and chrF files (bleu.c, bleu_text.c, bleu_lower.c,
 * chrf.c); not
 * part of the public API. */
#ifndef NMT_BLEU_INTERNAL_H
#define NMT_BLEU_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "nmt/utf8.h"

/* Decodes the UTF-8 code point at s (NUL-terminated) into *cp and returns its
 * byte length. A malformed byte decodes as itself, one byte long, so that any
 * input is processed without loss (sacreBLEU would refuse it earlier, on
 * reading); whitespace is Python's (nmt_utf8_is_python_space). */
static inline size_t bleu_decode(const unsigned char *s, uint32_t *cp)
{
    size_t len;
    *cp = nmt_utf8_decode(s, SIZE_MAX, &len);
    if (*cp == NMT_UTF8_INVALID)
        *cp = s[0];
    return len;
}

/* The simple lowercase mapping of one code point (itself if none). */
uint32_t nmt_bleu_lower_codepoint(uint32_t cp);

#endif
