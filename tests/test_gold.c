/* Gold with sure and possible links (src/align/gold.c, score.c) and
 * symmetrisation (src/align/symmetrize.c): the two notations of possible
 * links, duplicates and bad tokens; AER, precision and recall by Och and
 * Ney's formula against values worked out by hand, with partial
 * annotation; and each symmetrisation method on a pair where all five
 * give different links. */
#include <stdlib.h>
#include <string.h>

#include "nmt/align.h"
#include "nmt/error.h"
#include "nmt/symmetrize.h"
#include "test_common.h"

/* ---- reading gold lines ---------------------------------------------------- */

START_TEST(sure_and_possible_in_both_notations)
{
    static const char *const lines[] = {"0-0 1?2 3-1", "0-0 1p2 3-1"};
    for (int k = 0; k < 2; k++) {
        nmt_link *l;
        size_t n;
        ck_assert_int_eq(nmt_pharaoh_parse(lines[k], &l, &n), NMT_OK);
        ck_assert_uint_eq(n, 3);
        ck_assert_int_eq(l[0].possible, 0);
        ck_assert_int_eq(l[1].src, 1);
        ck_assert_int_eq(l[1].tgt, 2);
        ck_assert_int_eq(l[1].possible, 1);
        ck_assert_int_eq(l[2].possible, 0);
        free(l);
    }
}
END_TEST

START_TEST(duplicates_once_and_sure_wins)
{
    /* 2-2 possible then sure, 1-1 sure then possible (other notation),
     * 0-0 twice possible: three links, 2-2 and 1-1 sure, 0-0 possible */
    nmt_link *l;
    size_t n;
    ck_assert_int_eq(nmt_pharaoh_parse("2?2 1-1 0p0 2-2 1p1 0?0", &l, &n), NMT_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(l[0].src, 2);
    ck_assert_int_eq(l[0].possible, 0);
    ck_assert_int_eq(l[1].src, 1);
    ck_assert_int_eq(l[1].possible, 0);
    ck_assert_int_eq(l[2].src, 0);
    ck_assert_int_eq(l[2].possible, 1);
    free(l);
}
END_TEST

START_TEST(bad_tokens_named)
{
    static const char *const bad[] = {"1p", "p1", "1P2", "1?-2", "1pp2", "?1", "1?",
                                      "1-2p", "0-0 1s2", "1 p 2"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        nmt_link *l = (nmt_link *)1;
        size_t n = 7;
        ck_assert_int_eq(nmt_pharaoh_parse(bad[k], &l, &n), NMT_ERR_FORMAT);
        ck_assert_ptr_null(l);
        ck_assert_uint_eq(n, 0);
        ck_assert_ptr_nonnull(strstr(nmt_error_message(), "is not an alignment link"));
    }
    nmt_pharaoh_parse("0-0 1s2", &(nmt_link *){NULL}, &(size_t){0});
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "'1s2'"));
}
END_TEST

START_TEST(reverse_swaps_the_sides)
{
    nmt_link l[] = {{3, 1, 0}, {0, 2, 1}};
    nmt_links_reverse(l, 2);
    ck_assert_int_eq(l[0].src, 1);
    ck_assert_int_eq(l[0].tgt, 3);
    ck_assert_int_eq(l[1].src, 2);
    ck_assert_int_eq(l[1].tgt, 0);
    ck_assert_int_eq(l[1].possible, 1);
    nmt_links_reverse(NULL, 0);
}
END_TEST

START_TEST(views_tell_sure_from_possible)
{
    /* 1-1 listed possible then sure: sure; 2-0 possible; 0-0 sure */
    static const nmt_link g[] = {{0, 0, 0}, {1, 1, 1}, {1, 1, 0}, {2, 0, 1}};
    nmt_align_view v = {.gold = g, .n_gold = 4, .has_gold = 1};
    ck_assert_int_eq(nmt_align_view_gold(&v, 0, 0), 1);
    ck_assert_int_eq(nmt_align_view_gold(&v, 1, 1), 1);
    ck_assert_int_eq(nmt_align_view_gold(&v, 2, 0), 2);
    ck_assert_int_eq(nmt_align_view_gold(&v, 0, 2), 0);
    ck_assert_int_eq(nmt_align_view_has_possible(&v), 1);
    v.n_gold = 1;
    ck_assert_int_eq(nmt_align_view_has_possible(&v), 0);
    ck_assert_int_eq(nmt_align_view_has_possible(NULL), 0);
}
END_TEST

/* ---- AER with sure and possible links ------------------------------------- */

/* Parses a gold line and a hypothesis line and adds them to acc. */
static void add_lines(nmt_aer *acc, const char *hyp, const char *gold, unsigned flags)
{
    nmt_link *h, *g;
    size_t nh, ng;
    ck_assert_int_eq(nmt_pharaoh_parse(hyp, &h, &nh), NMT_OK);
    ck_assert_int_eq(nmt_pharaoh_parse(gold, &g, &ng), NMT_OK);
    ck_assert_int_eq(nmt_aer_add_opts(acc, h, nh, g, ng, flags), NMT_OK);
    free(h);
    free(g);
}

START_TEST(aer_with_possible_links_by_hand)
{
    /* S = {0-0}, P = {0-0, 1-1, 2-1}; A = {0-0, 1-1, 2-2}.
     * |A| = 3, |S| = 1, |P| = 3, |A∩S| = 1, |A∩P| = 2:
     * AER = 1 - (1 + 2) / (3 + 1) = 0.25, precision 2/3, recall 1/1.
     * (Counted all sure, S = P = 3 links: 1 - 2*2/6 = 1/3.) */
    static const char *const golds[] = {"0-0 1?1 2?1", "0-0 1p1 2p1"};
    for (int k = 0; k < 2; k++) {
        nmt_aer acc = {0};
        add_lines(&acc, "0-0 1-1 2-2", golds[k], 0);
        ck_assert_uint_eq(acc.hyp, 3);
        ck_assert_uint_eq(acc.gold, 1);
        ck_assert_uint_eq(acc.possible, 3);
        ck_assert_uint_eq(acc.both, 1);
        ck_assert_uint_eq(acc.both_possible, 2);
        ck_assert_double_eq_tol(nmt_aer_rate(&acc), 0.25, 1e-12);
        ck_assert_double_eq_tol(nmt_aer_precision(&acc), 2.0 / 3.0, 1e-12);
        ck_assert_double_eq_tol(nmt_aer_recall(&acc), 1.0, 1e-12);
    }
    nmt_aer sure = {0};
    add_lines(&sure, "0-0 1-1 2-2", "0-0 1-1 2-1", 0);
    ck_assert_double_eq_tol(nmt_aer_rate(&sure), 1.0 / 3.0, 1e-12);

    /* Over two pairs: the pair above, and A = {0-1, 1-0}, S = {0-0},
     * P = {0-0, 0-1}: |A| 3+2 = 5, |S| 1+1 = 2, |A∩S| 1+0 = 1,
     * |A∩P| 2+1 = 3: AER = 1 - 4/7, precision 3/5, recall 1/2. */
    nmt_aer two = {0};
    add_lines(&two, "0-0 1-1 2-2", "0-0 1?1 2?1", 0);
    add_lines(&two, "0-1 1-0", "0-0 0p1", 0);
    ck_assert_uint_eq(two.pairs, 2);
    ck_assert_double_eq_tol(nmt_aer_rate(&two), 3.0 / 7.0, 1e-12);
    ck_assert_double_eq_tol(nmt_aer_precision(&two), 0.6, 1e-12);
    ck_assert_double_eq_tol(nmt_aer_recall(&two), 0.5, 1e-12);
}
END_TEST

START_TEST(aer_a_link_sure_and_possible_is_sure)
{
    /* not through the parser: the scorer merges a gold link given twice */
    static const nmt_link g[] = {{1, 1, 1}, {0, 0, 0}, {1, 1, 0}};
    static const nmt_link h[] = {{1, 1, 0}};
    nmt_aer acc = {0};
    ck_assert_int_eq(nmt_aer_add(&acc, h, 1, g, 3), NMT_OK);
    ck_assert_uint_eq(acc.gold, 2);
    ck_assert_uint_eq(acc.possible, 2);
    ck_assert_uint_eq(acc.both, 1);
    /* 1 - (1 + 1) / (1 + 2) */
    ck_assert_double_eq_tol(nmt_aer_rate(&acc), 1.0 / 3.0, 1e-12);
}
END_TEST

START_TEST(aer_only_possible_gold)
{
    /* no sure link: recall is 1 (none to miss); no hypothesis either: AER 0 */
    nmt_aer none = {0};
    add_lines(&none, "", "0?0 1p1", 0);
    ck_assert_double_eq(nmt_aer_rate(&none), 0.0);
    ck_assert_double_eq(nmt_aer_precision(&none), 1.0);
    ck_assert_double_eq(nmt_aer_recall(&none), 1.0);
    /* A = {0-0, 2-2}, P = {0-0, 1-1}, S empty: 1 - (0 + 1) / (2 + 0) */
    nmt_aer half = {0};
    add_lines(&half, "0-0 2-2", "0?0 1p1", 0);
    ck_assert_double_eq_tol(nmt_aer_rate(&half), 0.5, 1e-12);
    ck_assert_double_eq_tol(nmt_aer_precision(&half), 0.5, 1e-12);
    ck_assert_double_eq(nmt_aer_recall(&half), 1.0);
}
END_TEST

START_TEST(aer_partial_annotation_by_hand)
{
    /* gold 0-0 (sure), 2?2 (possible): annotated source words {0, 2},
     * target words {0, 2}. A = {0-0, 1-1, 2-2, 0-2, 2-1}:
     * - whole: |A| 5, |S| 1, |A∩S| 1, |A∩P| 2: AER 1 - 3/6 = 0.5,
     *   precision 2/5, recall 1;
     * - partial: 1-1 (source word 1 unannotated) and 2-1 (target word 1)
     *   are left out, A = {0-0, 2-2, 0-2}: |A| 3, AER 1 - 3/4 = 0.25,
     *   precision 2/3, recall 1. */
    nmt_aer whole = {0}, part = {0};
    add_lines(&whole, "0-0 1-1 2-2 0-2 2-1", "0-0 2?2", 0);
    add_lines(&part, "0-0 1-1 2-2 0-2 2-1", "0-0 2?2", NMT_AER_PARTIAL);
    ck_assert_uint_eq(whole.hyp, 5);
    ck_assert_double_eq_tol(nmt_aer_rate(&whole), 0.5, 1e-12);
    ck_assert_double_eq_tol(nmt_aer_precision(&whole), 0.4, 1e-12);
    ck_assert_uint_eq(part.hyp, 3);
    ck_assert_uint_eq(part.both_possible, 2);
    ck_assert_double_eq_tol(nmt_aer_rate(&part), 0.25, 1e-12);
    ck_assert_double_eq_tol(nmt_aer_precision(&part), 2.0 / 3.0, 1e-12);
    ck_assert_double_eq_tol(nmt_aer_recall(&part), 1.0, 1e-12);
    /* a pair without gold links was not annotated at all: nothing counts */
    nmt_aer empty = {0};
    add_lines(&empty, "0-0 1-1", "", NMT_AER_PARTIAL);
    ck_assert_uint_eq(empty.hyp, 0);
    ck_assert_double_eq(nmt_aer_rate(&empty), 0.0);
}
END_TEST

START_TEST(aer_merge_adds_every_size)
{
    nmt_aer a = {1, 2, 3, 4, 5, 6}, b = {10, 20, 30, 40, 50, 60};
    nmt_aer_merge(&a, &b);
    ck_assert_uint_eq(a.pairs, 11);
    ck_assert_uint_eq(a.hyp, 22);
    ck_assert_uint_eq(a.gold, 33);
    ck_assert_uint_eq(a.both, 44);
    ck_assert_uint_eq(a.possible, 55);
    ck_assert_uint_eq(a.both_possible, 66);
}
END_TEST

/* ---- symmetrisation ------------------------------------------------------- */

/* The links as a Pharaoh line, for comparing. */
static char *as_line(const nmt_link *l, size_t n)
{
    static char *buf;
    static size_t len;
    buf = NULL;
    len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(nmt_pharaoh_write(f, l, n), NMT_OK);
    fclose(f);
    return buf;
}

static void check_method(nmt_symmetrize_method m, const nmt_link *fwd, size_t nf,
                         const nmt_link *rev, size_t nr, const char *want)
{
    nmt_link *out;
    size_t n;
    ck_assert_int_eq(nmt_symmetrize(m, fwd, nf, rev, nr, &out, &n), NMT_OK);
    char *got = as_line(out, n);
    ck_assert_msg(!strcmp(got, want), "%s: got '%s', want '%s'", nmt_symmetrize_names[m], got,
                  want);
    free(got);
    free(out);
}

/* A pair of 4 source by 4 target words where every method differs:
 *   FWD = {0-0, 1-1, 3-2}, REV (source-target) = {0-0, 0-3, 3-0}.
 *        t0 t1 t2 t3
 *   s0   FR  .  .  R
 *   s1   .   F  .  .
 *   s2   .   .  .  .
 *   s3   R   .  F  .
 * - intersection: {0-0}.
 * - union: {0-0, 0-3, 1-1, 3-0, 3-2}.
 * - grow-diag: from 0-0 the neighbours in the union are 1-1 (a corner;
 *   source 1 and target 1 unlinked): added. From 1-1 no neighbour is in
 *   the union; 0-3, 3-0 and 3-2 touch neither. {0-0, 1-1}.
 * - grow-diag-final: then FWD's links: 3-2 (source 3 and target 2
 *   unlinked) added; then REV's: 0-3 (target 3 unlinked) added, 3-0 (source
 *   3 linked by 3-2, target 0 by 0-0) not. {0-0, 0-3, 1-1, 3-2}.
 * - grow-diag-final-and: FWD's 3-2 (both unlinked) added; REV's 0-3 not
 *   (source 0 is linked), 3-0 not. {0-0, 1-1, 3-2}. */
static const nmt_link fwd4[] = {{0, 0, 0}, {1, 1, 0}, {3, 2, 0}};
static const nmt_link rev4[] = {{0, 0, 0}, {0, 3, 0}, {3, 0, 0}};

START_TEST(symmetrize_each_method_by_hand)
{
    check_method(NMT_SYM_INTERSECTION, fwd4, 3, rev4, 3, "0-0\n");
    check_method(NMT_SYM_UNION, fwd4, 3, rev4, 3, "0-0 0-3 1-1 3-0 3-2\n");
    check_method(NMT_SYM_GROW_DIAG, fwd4, 3, rev4, 3, "0-0 1-1\n");
    check_method(NMT_SYM_GROW_DIAG_FINAL, fwd4, 3, rev4, 3, "0-0 0-3 1-1 3-2\n");
    check_method(NMT_SYM_GROW_DIAG_FINAL_AND, fwd4, 3, rev4, 3, "0-0 1-1 3-2\n");
    ck_assert_str_eq(nmt_symmetrize_names[NMT_SYM_GROW_DIAG_FINAL_AND], "grow-diag-final-and");
    ck_assert_ptr_null(nmt_symmetrize_names[NMT_SYM_GROW_DIAG_FINAL_AND + 1]);
}
END_TEST

/* grow-diag keeps growing from the links it added: a diagonal of links in
 * FWD only, from the one link both have, is grown link by link.
 *   FWD = {0-0, 1-1, 2-2, 3-3}, REV = {0-0, 1-0}.
 * Intersection {0-0}; from 0-0: 1-0 (a side; source 1 unlinked) is
 * taken first (the sides come before the corners), then 1-1 (target 1
 * unlinked), then the sweep reaches 1-1 and takes 2-2, then 3-3. */
START_TEST(symmetrize_grows_from_what_it_added)
{
    static const nmt_link fwd[] = {{0, 0, 0}, {1, 1, 0}, {2, 2, 0}, {3, 3, 0}};
    static const nmt_link rev[] = {{0, 0, 0}, {1, 0, 0}};
    check_method(NMT_SYM_GROW_DIAG, fwd, 4, rev, 2, "0-0 1-0 1-1 2-2 3-3\n");
    /* without the shared link there is nothing to grow from */
    check_method(NMT_SYM_GROW_DIAG, fwd + 1, 3, rev + 1, 1, "\n");
    /* the finals then take FWD's links 1-1, 2-2, 3-3 (each links two new
     * words), then REV's 1-0: source 1 is linked by then, target 0 is new,
     * so final takes it and final-and does not */
    check_method(NMT_SYM_GROW_DIAG_FINAL, fwd + 1, 3, rev + 1, 1, "1-0 1-1 2-2 3-3\n");
    check_method(NMT_SYM_GROW_DIAG_FINAL_AND, fwd + 1, 3, rev + 1, 1, "1-1 2-2 3-3\n");
}
END_TEST

/* Two aligners of one direction agreeing: a keeps, in its own order and
 * once each, the links b has too; b's order and repeats do not matter. */
START_TEST(links_agree_keeps_the_common_ones)
{
    nmt_link a[] = {{0, 0, 0}, {2, 1, 0}, {1, 1, 0}, {0, 0, 0}, {3, 2, 0}};
    const nmt_link b[] = {{3, 2, 0}, {0, 0, 0}, {1, 2, 0}, {3, 2, 0}, {2, 1, 1}};
    size_t n = 5;
    nmt_links_agree(a, &n, b, 5);
    ck_assert_uint_eq(n, 3);
    ck_assert(a[0].src == 0 && a[0].tgt == 0);
    ck_assert(a[1].src == 2 && a[1].tgt == 1 && a[1].possible == 0);
    ck_assert(a[2].src == 3 && a[2].tgt == 2);
    nmt_links_agree(a, &n, NULL, 0); /* an aligner with no links agrees on none */
    ck_assert_uint_eq(n, 0);
}
END_TEST

START_TEST(symmetrize_empty_sides_and_refusals)
{
    nmt_link *out = (nmt_link *)1;
    size_t n = 9;
    /* one side empty: the intersection is empty, the union the other side */
    check_method(NMT_SYM_INTERSECTION, fwd4, 3, NULL, 0, "\n");
    check_method(NMT_SYM_UNION, NULL, 0, rev4, 3, "0-0 0-3 3-0\n");
    check_method(NMT_SYM_GROW_DIAG_FINAL, fwd4, 3, NULL, 0, "0-0 1-1 3-2\n");
    ck_assert_int_eq(nmt_symmetrize(NMT_SYM_UNION, NULL, 0, NULL, 0, &out, &n), NMT_OK);
    ck_assert_ptr_null(out);
    ck_assert_uint_eq(n, 0);
    /* repeats are one link */
    static const nmt_link twice[] = {{1, 0, 0}, {1, 0, 0}};
    check_method(NMT_SYM_UNION, twice, 2, twice, 2, "1-0\n");
    static const nmt_link negative[] = {{-1, 0, 0}};
    ck_assert_int_eq(nmt_symmetrize(NMT_SYM_UNION, negative, 1, NULL, 0, &out, &n),
                     NMT_ERR_ARG);
    ck_assert_int_eq(nmt_symmetrize((nmt_symmetrize_method)99, fwd4, 3, rev4, 3, &out, &n),
                     NMT_ERR_ARG);
    static const nmt_link huge[] = {{100000, 100000, 0}};
    ck_assert_int_eq(nmt_symmetrize(NMT_SYM_UNION, huge, 1, NULL, 0, &out, &n), NMT_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "too long"));
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("gold");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, sure_and_possible_in_both_notations);
    tcase_add_test(tc, duplicates_once_and_sure_wins);
    tcase_add_test(tc, bad_tokens_named);
    tcase_add_test(tc, reverse_swaps_the_sides);
    tcase_add_test(tc, views_tell_sure_from_possible);
    suite_add_tcase(s, tc);
    tc = tcase_create("aer");
    tcase_add_test(tc, aer_with_possible_links_by_hand);
    tcase_add_test(tc, aer_a_link_sure_and_possible_is_sure);
    tcase_add_test(tc, aer_only_possible_gold);
    tcase_add_test(tc, aer_partial_annotation_by_hand);
    tcase_add_test(tc, aer_merge_adds_every_size);
    suite_add_tcase(s, tc);
    tc = tcase_create("symmetrize");
    tcase_add_test(tc, symmetrize_each_method_by_hand);
    tcase_add_test(tc, symmetrize_grows_from_what_it_added);
    tcase_add_test(tc, symmetrize_empty_sides_and_refusals);
    tcase_add_test(tc, links_agree_keeps_the_common_ones);
    suite_add_tcase(s, tc);
    return s;
}
