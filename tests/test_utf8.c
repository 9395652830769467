/* utf8.c: encoding and decoding agree over every code point, malformed bytes
 * are stepped over one at a time, the strict validator refuses what RFC 3629
 * refuses, and the two whitespace classes differ exactly where they mean to. */
#include <stdint.h>
#include <string.h>

#include "test_common.h"
#include "nmt/utf8.h"

START_TEST(round_trip_every_code_point)
{
    /* plain checks in the loop (a ck_assert per code point is too slow), one
     * assertion naming the first failure */
    char buf[8];
    long bad = -1;
    for (uint32_t cp = 0; cp < 0x110000 && bad < 0; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF)
            continue;
        const unsigned char *u = (const unsigned char *)buf;
        size_t n = nmt_utf8_encode(buf, cp), len = 0;
        int ok = n == (size_t)(cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4) &&
                 nmt_utf8_decode(u, n, &len) == cp && len == n && nmt_utf8_valid_len(u, n) == n;
        /* cut short by the end of the input: invalid, one byte long */
        if (ok && n > 1)
            ok = nmt_utf8_decode(u, n - 1, &len) == NMT_UTF8_INVALID && len == 1 &&
                 nmt_utf8_valid_len(u, n - 1) == 0;
        if (!ok)
            bad = (long)cp;
    }
    ck_assert_msg(bad < 0, "U+%04lX does not round-trip", bad);
}
END_TEST

START_TEST(malformed_bytes)
{
    size_t len;
    /* a stray continuation byte, a lead byte F8..FF, a lead byte before ASCII */
    const unsigned char stray[] = {0x80}, high[] = {0xF8, 0x80, 0x80, 0x80}, cut[] = {0xC3, 'a'};
    ck_assert_uint_eq(nmt_utf8_decode(stray, 1, &len), NMT_UTF8_INVALID);
    ck_assert_uint_eq(len, 1);
    ck_assert_uint_eq(nmt_utf8_decode(high, 4, &len), NMT_UTF8_INVALID);
    ck_assert_uint_eq(nmt_utf8_decode(cut, 2, &len), NMT_UTF8_INVALID);
    ck_assert_uint_eq(len, 1);
    /* a NUL-terminated string ends any sequence */
    const unsigned char z[] = {0xE2, 0x82, 0};
    ck_assert_uint_eq(nmt_utf8_decode(z, SIZE_MAX, &len), NMT_UTF8_INVALID);
    /* the lenient decoder reads an overlong form, the validator refuses it,
     * and surrogates and code points past U+10FFFF */
    const unsigned char overlong[] = {0xC0, 0xAF}, surrogate[] = {0xED, 0xA0, 0x80},
                        past[] = {0xF4, 0x90, 0x80, 0x80};
    ck_assert_uint_eq(nmt_utf8_decode(overlong, 2, &len), '/');
    ck_assert_uint_eq(nmt_utf8_valid_len(overlong, 2), 0);
    ck_assert_uint_eq(nmt_utf8_valid_len(surrogate, 3), 0);
    ck_assert_uint_eq(nmt_utf8_valid_len(past, 4), 0);
    /* the first bad byte of a line, past an ASCII run longer than 8 */
    const char *line = "abcdefghijkl\xc3\xa4x\xffy";
    ck_assert_uint_eq(nmt_utf8_invalid_at((const unsigned char *)line, strlen(line)), 15);
    ck_assert_uint_eq(nmt_utf8_invalid_at((const unsigned char *)line, 15), 15);
}
END_TEST

START_TEST(two_whitespace_classes)
{
    /* shared: ASCII blanks, NEL, no-break space, the U+2000 spaces */
    const uint32_t both[] = {' ', '\t', '\n', '\r', 0x0B, 0x0C, 0x85, 0xA0, 0x1680, 0x2000,
                             0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000};
    for (size_t i = 0; i < sizeof both / sizeof both[0]; i++) {
        ck_assert_msg(nmt_utf8_is_python_space(both[i]), "U+%04X", (unsigned)both[i]);
        ck_assert_msg(nmt_utf8_is_token_space(both[i]), "U+%04X", (unsigned)both[i]);
    }
    /* Python counts the information separators, the tokenizer does not */
    for (uint32_t c = 0x1C; c <= 0x1F; c++) {
        ck_assert(nmt_utf8_is_python_space(c));
        ck_assert(!nmt_utf8_is_token_space(c));
    }
    /* the tokenizer splits on the invisible zero-width space and BOM, Python does not */
    ck_assert(!nmt_utf8_is_python_space(0x200B) && nmt_utf8_is_token_space(0x200B));
    ck_assert(!nmt_utf8_is_python_space(0xFEFF) && nmt_utf8_is_token_space(0xFEFF));
    /* and neither calls a letter, NUL or the invalid marker a space */
    const uint32_t neither[] = {'a', 0, 0xE4, 0x2060, NMT_UTF8_INVALID};
    for (size_t i = 0; i < sizeof neither / sizeof neither[0]; i++)
        ck_assert(!nmt_utf8_is_python_space(neither[i]) && !nmt_utf8_is_token_space(neither[i]));
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("utf8");
    TCase *tc = tcase_create("utf8");
    tcase_add_test(tc, round_trip_every_code_point);
    tcase_add_test(tc, malformed_bytes);
    tcase_add_test(tc, two_whitespace_classes);
    suite_add_tcase(s, tc);
    return s;
}
