/* UTF-8 and whitespace (utf8.h). */
#include "nmt/utf8.h"

#include <string.h>

uint32_t nmt_utf8_decode(const unsigned char *s, size_t n, size_t *len)
{
    uint32_t c = s[0];
    size_t need;
    *len = 1;
    if (c < 0x80)
        return c;
    if ((c & 0xE0) == 0xC0)
        need = 1, c &= 0x1F;
    else if ((c & 0xF0) == 0xE0)
        need = 2, c &= 0x0F;
    else if ((c & 0xF8) == 0xF0)
        need = 3, c &= 0x07;
    else
        return NMT_UTF8_INVALID;
    if (need >= n)
        return NMT_UTF8_INVALID;
    for (size_t k = 1; k <= need; k++) {
        if ((s[k] & 0xC0) != 0x80)
            return NMT_UTF8_INVALID;
        c = (c << 6) | (s[k] & 0x3F);
    }
    *len = need + 1;
    return c;
}

size_t nmt_utf8_char_len(const char *s)
{
    size_t len;
    nmt_utf8_decode((const unsigned char *)s, SIZE_MAX, &len);
    return len;
}

size_t nmt_utf8_count(const char *s)
{
    size_t n = 0;
    for (; *s; s += nmt_utf8_char_len(s))
        n++;
    return n;
}

size_t nmt_utf8_encode(char *out, uint32_t cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

size_t nmt_utf8_valid_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    unsigned lo = 0x80, hi = 0xBF; /* the allowed range of the second byte */
    size_t need;
    if (c >= 0xC2 && c <= 0xDF)
        need = 1;
    else if (c >= 0xE0 && c <= 0xEF) {
        need = 2;
        if (c == 0xE0)
            lo = 0xA0; /* overlong below U+0800 */
        if (c == 0xED)
            hi = 0x9F; /* surrogates U+D800..DFFF */
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 3;
        if (c == 0xF0)
            lo = 0x90; /* overlong below U+10000 */
        if (c == 0xF4)
            hi = 0x8F; /* above U+10FFFF */
    } else
        return 0; /* a continuation byte, C0/C1 (overlong) or F5..FF */
    if (need >= n || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t k = 2; k <= need; k++)
        if ((s[k] & 0xC0) != 0x80)
            return 0;
    return need + 1;
}

size_t nmt_utf8_invalid_at(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        /* Most text is ASCII: skip it 8 bytes at a time. */
        while (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (w & 0x8080808080808080ULL)
                break;
            i += 8;
        }
        if (i >= n)
            break;
        size_t k = nmt_utf8_valid_len(s + i, n - i);
        if (!k)
            return i;
        i += k;
    }
    return n;
}

int nmt_utf8_is_python_space(uint32_t cp)
{
    if (cp <= 0x20)
        return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1F);
    if (cp < 0x85)
        return 0;
    return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
           cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

int nmt_utf8_is_token_space(uint32_t cp)
{
    if (cp < 0x80)
        return cp == ' ' || (cp >= '\t' && cp <= '\r');
    return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200B) ||
           cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000 ||
           cp == 0xFEFF;
}
