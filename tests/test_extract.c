/* Links from attention (src/align/extract.c) on hand-made matrices:
 * Shift-Att's rows, unaligned words (--eos-unaligned, --min-weight), the
 * Pharaoh line, and that rules of zero are nmt_align_hard's. */
#include <string.h>

#include "nmt/align.h"
#include "nmt/error.h"
#include "nmt/extract.h"
#include "test_common.h"

/* 3 source words and </s> across, 3 target words and </s> down. */
static const char *const SRC[] = {"a", "b", "c", "</s>"};
static const char *const TGT[] = {"x", "y", "z", "</s>"};

START_TEST(shift_reads_the_next_row_and_ends_on_source_eos)
{
    float att[4 * 4] = {
        0.7f, 0.1f, 0.1f, 0.1f, /* step 1, predicts x */
        0.1f, 0.6f, 0.2f, 0.1f, /* step 2, reads x */
        0.1f, 0.1f, 0.5f, 0.3f, /* step 3, reads y */
        0.2f, 0.1f, 0.1f, 0.6f, /* step 4, reads z, predicts </s> */
    };
    float want[4 * 4] = {
        0.1f, 0.6f, 0.2f, 0.1f, 0.1f, 0.1f, 0.5f, 0.3f,
        0.2f, 0.1f, 0.1f, 0.6f, 0.0f, 0.0f, 0.0f, 1.0f,
    };
    nmt_align_shift_rows(att, 4, 4);
    ck_assert(memcmp(att, want, sizeof att) == 0);
    /* the links read off the shifted rows: x-b, y-c, z-a */
    nmt_alignment a = {4, 4, SRC, TGT, att};
    nmt_link l[4];
    nmt_link_rules r = {0};
    ck_assert_int_eq(nmt_align_links(&a, &r, l), 3);
    ck_assert_int_eq(l[0].src, 1);
    ck_assert_int_eq(l[1].src, 2);
    ck_assert_int_eq(l[2].src, 0);
    ck_assert_int_eq(l[2].tgt, 2);
}
END_TEST

START_TEST(zero_rules_are_the_hard_links)
{
    float att[4 * 4] = {
        0.1f, 0.2f, 0.1f, 0.6f, 0.3f, 0.3f, 0.2f, 0.2f,
        0.1f, 0.1f, 0.1f, 0.7f, 0.2f, 0.2f, 0.2f, 0.4f,
    };
    nmt_alignment a = {4, 4, SRC, TGT, att};
    nmt_link h[4], l[4];
    int n = nmt_align_hard(&a, h);
    ck_assert_int_eq(nmt_align_links(&a, NULL, l), n);
    nmt_link_rules r = {0};
    ck_assert_int_eq(nmt_align_links(&a, &r, l), n);
    ck_assert(memcmp(h, l, (size_t)n * sizeof *h) == 0);
    /* row 1 ties a and b: the lower index, as nmt_align_hard */
    ck_assert_int_eq(l[1].src, 0);
}
END_TEST

START_TEST(eos_unaligned_drops_words_on_source_eos)
{
    float att[4 * 4] = {
        0.1f, 0.2f, 0.1f, 0.6f, /* most on </s>: dropped */
        0.4f, 0.1f, 0.1f, 0.4f, /* a tie with </s>: kept, on a */
        0.1f, 0.1f, 0.5f, 0.3f, /* on c */
        0.2f, 0.2f, 0.2f, 0.4f,
    };
    nmt_alignment a = {4, 4, SRC, TGT, att};
    nmt_link l[4];
    nmt_link_rules r = {.eos_unaligned = 1};
    ck_assert_int_eq(nmt_align_links(&a, &r, l), 2);
    ck_assert(l[0].src == 0 && l[0].tgt == 1);
    ck_assert(l[1].src == 2 && l[1].tgt == 2);
    /* without the rule every word is linked, x to b */
    ck_assert_int_eq(nmt_align_links(&a, NULL, l), 3);
    ck_assert(l[0].src == 1 && l[0].tgt == 0);
}
END_TEST

START_TEST(min_weight_drops_weak_links)
{
    float att[4 * 4] = {
        0.3f, 0.3f, 0.2f, 0.2f, /* best 0.3 */
        0.1f, 0.5f, 0.1f, 0.3f, /* best 0.5 */
        0.1f, 0.1f, 0.1f, 0.7f, /* best 0.1 (on c's tie: a) */
        0.2f, 0.2f, 0.2f, 0.4f,
    };
    nmt_alignment a = {4, 4, SRC, TGT, att};
    nmt_link l[4];
    nmt_link_rules r = {.min_weight = 0.3f};
    ck_assert_int_eq(nmt_align_links(&a, &r, l), 2); /* 0.3 is not below 0.3 */
    ck_assert(l[0].tgt == 0 && l[1].tgt == 1 && l[1].src == 1);
    r.min_weight = 0.31f;
    ck_assert_int_eq(nmt_align_links(&a, &r, l), 1);
    r.min_weight = 0;
    ck_assert_int_eq(nmt_align_links(&a, &r, l), 3);
    r.min_weight = 1;
    ck_assert_int_eq(nmt_align_links(&a, &r, l), 0);
}
END_TEST

START_TEST(pharaoh_line_of_links)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    const nmt_link l[] = {{0, 0}, {12, 1}, {3, 7}};
    ck_assert_int_eq(nmt_align_write_links(f, l, 3), NMT_OK);
    ck_assert_int_eq(nmt_align_write_links(f, l, 0), NMT_OK);
    fclose(f);
    ck_assert_str_eq(buf, "0-0 12-1 3-7\n\n");
    free(buf);
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("extract");
    TCase *tc = tcase_create("links");
    tcase_add_test(tc, shift_reads_the_next_row_and_ends_on_source_eos);
    tcase_add_test(tc, zero_rules_are_the_hard_links);
    tcase_add_test(tc, eos_unaligned_drops_words_on_source_eos);
    tcase_add_test(tc, min_weight_drops_weak_links);
    tcase_add_test(tc, pharaoh_line_of_links);
    suite_add_tcase(s, tc);
    return s;
}
