/* chrF against sacreBLEU's own published numbers (its test_chrf.py) and
 * statistics worked by hand: the best of several references, empty
 * references, code points rather than bytes, chrF++'s word splitting. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/chrf.h"
#include "nmt/error.h"
#include "test_common.h"

/* Corpus chrF of parallel arrays: hyp[i] against refs[r][i]. */
static double corpus(const nmt_chrf_opts *o, const char *const *hyp,
                     const char *const *const *refs, size_t n_refs, size_t n)
{
    nmt_chrf *c;
    ck_assert_int_eq(nmt_chrf_create(&c, o), NMT_OK);
    for (size_t i = 0; i < n; i++) {
        const char *r[4];
        for (size_t k = 0; k < n_refs; k++)
            r[k] = refs[k][i];
        ck_assert_int_eq(nmt_chrf_add(c, NULL, hyp[i], r, n_refs), NMT_OK);
    }
    double s = nmt_chrf_result(c);
    nmt_chrf_free(c);
    return s;
}

/* One hypothesis against one reference as sacreBLEU's tests call it:
 * corpus_chrf(char_order=6, word_order=0, beta=3, ...). */
static double one(const char *hyp, const char *ref, int eps, int whitespace)
{
    nmt_chrf_opts o;
    nmt_chrf_opts_init(&o);
    o.beta = 3;
    o.eps_smoothing = eps;
    o.whitespace = whitespace;
    const char *const h[] = {hyp}, *const r[] = {ref};
    const char *const *refs[] = {r};
    return corpus(&o, h, refs, 1, 1);
}

static void near(double got, double want, double tol, const char *what)
{
    ck_assert_msg(fabs(got - want) < tol, "%s: %.10f, sacreBLEU %.10f", what, got, want);
}

START_TEST(sacrebleu_eps_smoothing)
{
    /* test_chrf: eps smoothing, beta 3 (1e-4 as sacreBLEU's test allows) */
    static const struct {
        const char *hyp, *ref;
        double want;
    } cases[] = {
        {"abcdefg", "hijklmnop", 0.0},
        {"a", "b", 0.0},
        {"", "b", 0.0},
        {"", "ref", 0.0},
        {"", "reference", 0.0},
        {"aa", "ab", 8.3333},
        {"a", "a", 16.6667},
        {"a b c", "a b c", 50.0},
        {"a b c", "abc", 50.0},
        {" risk assessment must be made of those who are qualified and expertise in the sector - these are the scientists .",
         "risk assessment has to be undertaken by those who are qualified and expert in that area - that is the scientists .",
         63.361730},
        {" Die    Beziehung zwischen  Obama und Netanjahu ist nicht gerade  freundlich. ",
         "Das Verh\xc3\xa4ltnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich.", 64.1302698},
        {"Niemand hat die Absicht, eine Mauer zu errichten", "Niemand hat die Absicht, eine Mauer zu errichten",
         100.0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        near(one(cases[i].hyp, cases[i].ref, 1, 0), cases[i].want, 1e-4, cases[i].hyp);
    /* the two-sentence corpus ["a", "b"] against ["a", "c"] */
    nmt_chrf_opts o;
    nmt_chrf_opts_init(&o);
    o.beta = 3;
    o.eps_smoothing = 1;
    const char *const h[] = {"a", "b"}, *const r[] = {"a", "c"};
    const char *const *refs[] = {r};
    near(corpus(&o, h, refs, 1, 2), 8.3333, 1e-4, "a b / a c");
}
END_TEST

START_TEST(sacrebleu_effective_order)
{
    /* test_chrf_eff_order: sacreBLEU's default smoothing, beta 3 */
    near(one("a", "a", 0, 0), 100.0, 1e-4, "a");
    near(one("", "reference", 0, 0), 0.0, 1e-4, "empty");
    near(one("a b c", "a b c", 0, 0), 100.0, 1e-4, "a b c");
    near(one("a b c", "abc", 0, 0), 100.0, 1e-4, "abc");
    near(one("", "c", 0, 0), 0.0, 1e-4, "empty / c");
    near(one("aa", "ab", 0, 0), 25.0, 1e-4, "aa / ab");
    nmt_chrf_opts o;
    nmt_chrf_opts_init(&o);
    o.beta = 3;
    const char *const h[] = {"a", "b"}, *const r[] = {"a", "c"};
    const char *const *refs[] = {r};
    near(corpus(&o, h, refs, 1, 2), 50.0, 1e-4, "a b / a c");
}
END_TEST

START_TEST(sacrebleu_keep_whitespace)
{
    /* test_chrf_keep_whitespace */
    near(one("Die Beziehung zwischen Obama und Netanjahu ist nicht gerade freundlich.",
             "Das Verh\xc3\xa4ltnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich.", 0, 1),
         67.3481606, 1e-4, "de");
    near(one("risk assessment must be made of those who are qualified and expertise in the sector - these are the scientists .",
             "risk assessment has to be undertaken by those who are qualified and expert in that area - that is the scientists .",
             0, 1),
         65.2414427, 1e-4, "en");
}
END_TEST

START_TEST(sacrebleu_sentence_level)
{
    /* test_chrf_sentence_level: Czech, default chrF2 with eps smoothing */
    static const struct {
        const char *hyp, *ref;
        double want;
    } cases[] = {
        {"Co n\xc3\xa1s nejv\xc3\xad" "c tr\xc3\xa1p\xc3\xad, proto\xc5\xbe" "e l\xc3\xa9ka\xc5\x99i si vyb\xc3\xadraj\xc3\xad, kdo bude \xc5\xbe\xc3\xadt a kdo zem\xc5\x99" "e.",
         "Nejv\xc3\xad" "ce smutn\xc3\xad jsme z toho, \xc5\xbe" "e mus\xc3\xadme rozhodovat o tom, kdo bude \xc5\xbe\xc3\xadt a kdo zem\xc5\x99" "e.",
         39.14078509},
        {"Nebo prost\xc4\x9b nemaj\xc3\xad vybaven\xc3\xad, kter\xc3\xa9 by jim pomohlo, uvedli l\xc3\xa9ka\xc5\x99i.",
         "A n\xc4\x9bkdy nem\xc3\xa1me ani pot\xc5\x99" "ebn\xc3\xbd materi\xc3\xa1l, abychom jim pomohli, popsali l\xc3\xa9ka\xc5\x99i.",
         31.22557079},
        {"Lapali po dechu, jejich \xc5\xbeivoty skon\xc4\x8dily d\xc5\x99\xc3\xadv, ne\xc5\xbe skute\xc4\x8dn\xc4\x9b za\xc4\x8d" "aly.",
         "Lapali po dechu a pak jejich \xc5\xbeivot skon\xc4\x8dil - d\xc5\x99\xc3\xadv, ne\xc5\xbe skute\xc4\x8dn\xc4\x9b mohl za\xc4\x8d\xc3\xadt, p\xc5\x99ipomn\xc4\x9bli.",
         57.15704367},
    };
    nmt_chrf_opts o;
    nmt_chrf_opts_init(&o);
    o.eps_smoothing = 1;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *const h[] = {cases[i].hyp}, *const r[] = {cases[i].ref};
        const char *const *refs[] = {r};
        near(corpus(&o, h, refs, 1, 1), cases[i].want, 1e-4, cases[i].hyp);
    }
}
END_TEST

/* sacreBLEU's README example (as in test_bleu.c): chrF2 59.73, chrF2++ 59.15. */
START_TEST(readme_example)
{
    static const char *const hyp[] = {
        "The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."};
    static const char *const ref1[] = {
        "The dog bit the man.", "It was not unexpected.", "The man bit him first."};
    static const char *const ref2[] = {
        "The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."};
    const char *const *refs[] = {ref1, ref2};
    nmt_chrf_opts o;
    nmt_chrf_opts_init(&o);
    /* the numbers sacreBLEU 2.6.0 prints with full precision */
    ck_assert_double_eq(corpus(&o, hyp, refs, 2, 3), 59.72751782684763);
    o.word_order = 2;
    ck_assert_double_eq(corpus(&o, hyp, refs, 2, 3), 59.15310444399262);
}
END_TEST

/* The statistics of one sentence, flattened as sacreBLEU's lists are. */
static void stats_of(const nmt_chrf_opts *o, const char *hyp, const char *const *refs, size_t n,
                     long *flat)
{
    nmt_chrf *c;
    ck_assert_int_eq(nmt_chrf_create(&c, o), NMT_OK);
    nmt_chrf_stats st;
    ck_assert_int_eq(nmt_chrf_sentence_stats(c, &st, hyp, refs, n), NMT_OK);
    for (int k = 0; k < o->char_order + o->word_order; k++) {
        flat[3 * k] = st.hyp[k];
        flat[3 * k + 1] = st.ref[k];
        flat[3 * k + 2] = st.match[k];
    }
    for (int k = o->char_order + o->word_order; k < NMT_CHRF_MAX_ORDER; k++)
        ck_assert(st.hyp[k] == 0 && st.ref[k] == 0 && st.match[k] == 0);
    nmt_chrf_free(c);
}

static void check_flat(const long *got, const long *want, int n, const char *what)
{
    for (int i = 0; i < n; i++)
        ck_assert_msg(got[i] == want[i], "%s: statistic %d is %ld, want %ld", what, i, got[i], want[i]);
}

START_TEST(best_reference)
{
    nmt_chrf_opts o;
    nmt_chrf_opts_init(&o);
    long got[3 * NMT_CHRF_MAX_ORDER];
    /* the second reference scores higher, so its counts are kept */
    const long want[] = {9, 13, 9, 8, 12, 8, 7, 11, 7, 6, 10, 6, 5, 9, 5, 4, 8, 4};
    const char *two[] = {"a dog ran", "the cat sat down"};
    stats_of(&o, "the cat sat", two, 2, got);
    check_flat(got, want, 18, "best of two");
    /* a later reference must be strictly better: "ac" and "aacbb" give
     * "abab" the same F-score (20.833333333333336) from different counts,
     * and the first one named stays */
    const char *tie[] = {"ac", "aacbb"}, *tie_rev[] = {"aacbb", "ac"};
    const long want_ac[] = {4, 2, 1, 3, 1, 0, 0, 0, 0, 0, 0, 0};
    const long want_aacbb[] = {4, 5, 4, 3, 4, 0, 2, 3, 0, 1, 2, 0};
    stats_of(&o, "abab", tie, 2, got);
    check_flat(got, want_ac, 12, "tie, ac first");
    stats_of(&o, "abab", tie_rev, 2, got);
    check_flat(got, want_aacbb, 12, "tie, aacbb first");
    /* "aaa" scores 20.833333333333332, one ulp less: "ac" wins after it */
    const char *ulp[] = {"aaa", "ac"};
    stats_of(&o, "abab", ulp, 2, got);
    check_flat(got, want_ac, 12, "one ulp");
}
END_TEST

START_TEST(empty_reference_counts_nothing)
{
    nmt_chrf_opts o;
    nmt_chrf_opts_init(&o);
    long got[3 * NMT_CHRF_MAX_ORDER];
    const char *empty = "";
    stats_of(&o, "abc", &empty, 1, got);
    for (int i = 0; i < 18; i++)
        ck_assert_int_eq(got[i], 0);
    /* so a corpus of one empty and one perfect reference scores 100 */
    const char *const h[] = {"abc", "abc"}, *const r[] = {"", "abc"};
    const char *const *refs[] = {r};
    ck_assert_double_eq(corpus(&o, h, refs, 1, 2), 100.0);
    /* a reference of 2 characters has no 3-grams: the hypothesis' are not counted */
    const char *ab = "ab";
    stats_of(&o, "abcd", &ab, 1, got);
    const long want[] = {4, 2, 2, 3, 1, 1, 0, 0, 0};
    check_flat(got, want, 9, "short reference");
    /* an empty hypothesis: nothing matches */
    const char *const eh[] = {"", ""}, *const er[] = {"abc", "b"};
    const char *const *erefs[] = {er};
    ck_assert_double_eq(corpus(&o, eh, erefs, 1, 2), 0.0);
}
END_TEST

START_TEST(characters_are_code_points)
{
    nmt_chrf_opts o;
    nmt_chrf_opts_init(&o);
    long got[3 * NMT_CHRF_MAX_ORDER];
    /* "žít 😀x" is 5 characters without its space (ž, í, 😀: 2, 2, 4 bytes) */
    const char *ref = "\xc5\xbeit \xf0\x9f\x98\x80x";
    stats_of(&o, "\xc5\xbe\xc3\xadt \xf0\x9f\x98\x80x", &ref, 1, got);
    const long want[] = {5, 5, 4, 4, 4, 2, 3, 3, 1, 2, 2, 0, 1, 1, 0, 0, 0, 0};
    check_flat(got, want, 18, "code points");
    /* every Unicode space goes: no-break space, ideographic space, tab */
    const char *spaced = "a\xc2\xa0" "b\xe3\x80\x80" "c\t";
    stats_of(&o, "abc", &spaced, 1, got);
    const long want_sp[] = {3, 3, 3, 2, 2, 2, 1, 1, 1};
    check_flat(got, want_sp, 9, "unicode spaces");
    /* with whitespace kept, the inner spaces count and trailing ones do not */
    o.whitespace = 1;
    const char *ws = "a b  ";
    stats_of(&o, "a b", &ws, 1, got);
    const long want_ws[] = {3, 3, 3, 2, 2, 2, 1, 1, 1, 0, 0, 0};
    check_flat(got, want_ws, 12, "whitespace kept");
}
END_TEST

START_TEST(lowercase)
{
    nmt_chrf_opts o;
    nmt_chrf_opts_init(&o);
    const char *const h[] = {"\xc3\x84RGER"}, *const r[] = {"\xc3\xa4rger"};
    const char *const *refs[] = {r};
    /* Ä and ä differ in case only; the cased 1-grams still match r, g, e, r */
    ck_assert_double_lt(corpus(&o, h, refs, 1, 1), 100.0);
    o.lowercase = 1;
    ck_assert_double_eq(corpus(&o, h, refs, 1, 1), 100.0);
}
END_TEST

START_TEST(chrf_plus_plus_words)
{
    nmt_chrf_opts o;
    nmt_chrf_opts_init(&o);
    o.word_order = 2;
    long got[3 * NMT_CHRF_MAX_ORDER];
    /* "(hi) there, you!" splits into "(hi" ")" "there" "," "you" "!": one
     * punctuation character comes off each word, at the end first */
    const char *ref = "hi there you";
    stats_of(&o, "(hi) there, you!", &ref, 1, got);
    const long want[] = {14, 10, 10, 13, 9, 7, 12, 8, 4, 11, 7, 2, 10, 6, 1, 9, 5, 0,
                         6, 3, 2, 5, 2, 0};
    check_flat(got, want, 24, "chrF++");
    /* word n-grams alone (character order 0): a lone punctuation stays */
    o.char_order = 0;
    const char *bang = "! a";
    stats_of(&o, "! a", &bang, 1, got);
    const long want_w[] = {2, 2, 2, 1, 1, 1};
    check_flat(got, want_w, 6, "words only");
}
END_TEST

START_TEST(score_from_statistics)
{
    nmt_chrf_opts o;
    nmt_chrf_opts_init(&o);
    nmt_chrf_stats st;
    memset(&st, 0, sizeof st);
    ck_assert_double_eq(nmt_chrf_compute(&st, &o), 0.0);
    /* one order of 2 matches in 4 hypothesis and 2 reference n-grams:
     * P = 0.5, R = 1, F2 = 5 * 0.5 / (4 * 0.5 + 1) */
    st.hyp[0] = 4;
    st.ref[0] = 2;
    st.match[0] = 2;
    ck_assert_double_eq(nmt_chrf_compute(&st, &o), 100.0 * (5.0 * 0.5 * 1.0 / 3.0));
    /* eps smoothing: that F, and 1e-16 for each of the 5 empty orders, over 6 */
    o.eps_smoothing = 1;
    ck_assert_double_lt(fabs(nmt_chrf_compute(&st, &o) - 100.0 * (2.5 / 3.0) / 6.0), 1e-12);
    /* beta 0 is precision alone */
    o.eps_smoothing = 0;
    o.beta = 0;
    ck_assert_double_eq(nmt_chrf_compute(&st, &o), 50.0);
}
END_TEST

START_TEST(names_and_signatures)
{
    nmt_chrf_opts o;
    nmt_chrf_opts_init(&o);
    char buf[256];
    nmt_chrf_name(buf, sizeof buf, &o);
    ck_assert_str_eq(buf, "chrF2");
    nmt_chrf_signature(buf, sizeof buf, &o, 1, 0);
    ck_assert_str_eq(buf, "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0");
    o.word_order = 2;
    o.lowercase = 1;
    o.whitespace = 1;
    o.eps_smoothing = 1;
    o.beta = 3;
    nmt_chrf_name(buf, sizeof buf, &o);
    ck_assert_str_eq(buf, "chrF3++");
    nmt_chrf_signature(buf, sizeof buf, &o, -1, 1);
    ck_assert_str_eq(buf, "#:var|c:lc|e:no|nc:6|nw:2|s:yes|v:2.6.0");
    /* the length needed, as snprintf */
    char small[4];
    ck_assert_int_eq(nmt_chrf_signature(small, sizeof small, &o, 2, 0),
                     (int)strlen("nrefs:2|case:lc|eff:no|nc:6|nw:2|space:yes|version:2.6.0"));
    ck_assert_str_eq(small, "nre");
}
END_TEST

START_TEST(accumulator)
{
    nmt_chrf_opts o;
    nmt_chrf_opts_init(&o);
    nmt_chrf *c;
    ck_assert_int_eq(nmt_chrf_create(&c, &o), NMT_OK);
    const char *two[] = {"a b", "a c"};
    nmt_chrf_stats st, again;
    ck_assert_int_eq(nmt_chrf_add(c, &st, "a b", two, 2), NMT_OK);
    ck_assert_int_eq(nmt_chrf_sentence_stats(c, &again, "a b", two, 2), NMT_OK);
    ck_assert(!memcmp(&st, &again, sizeof st));
    ck_assert_int_eq(nmt_chrf_nrefs(c), 2);
    ck_assert_double_eq(nmt_chrf_result(c), 100.0);
    ck_assert_int_eq(nmt_chrf_add(c, NULL, "x", two, 1), NMT_OK);
    ck_assert_int_eq(nmt_chrf_nrefs(c), -1);
    ck_assert_int_eq(nmt_chrf_sentences(c), 2);
    ck_assert_int_eq(nmt_chrf_totals(c)->hyp[0], 2 + 1);
    /* statistics from elsewhere add as they are */
    nmt_chrf_add_stats(c, &st, 1);
    ck_assert_int_eq(nmt_chrf_totals(c)->match[0], 2 + 0 + 2);
    nmt_chrf_reset(c);
    ck_assert_int_eq(nmt_chrf_sentences(c), 0);
    ck_assert_int_eq(nmt_chrf_totals(c)->hyp[0], 0);
    ck_assert_double_eq(nmt_chrf_result(c), 0.0);
    /* refusals */
    ck_assert_int_eq(nmt_chrf_add(c, NULL, "x", NULL, 0), NMT_ERR_ARG);
    const char *missing[] = {"a", NULL};
    ck_assert_int_eq(nmt_chrf_add(c, NULL, "x", missing, 2), NMT_ERR_ARG);
    ck_assert_int_eq(nmt_chrf_sentences(c), 0);
    nmt_chrf_free(c);

    nmt_chrf_opts bad = o;
    bad.char_order = 0;
    ck_assert_int_eq(nmt_chrf_create(&c, &bad), NMT_ERR_ARG);
    ck_assert_ptr_null(c);
    bad = o;
    bad.char_order = NMT_CHRF_MAX_CHAR_ORDER + 1;
    ck_assert_int_eq(nmt_chrf_create(&c, &bad), NMT_ERR_ARG);
    bad = o;
    bad.word_order = -1;
    ck_assert_int_eq(nmt_chrf_create(&c, &bad), NMT_ERR_ARG);
    bad = o;
    bad.beta = NMT_CHRF_MAX_BETA + 1;
    ck_assert_int_eq(nmt_chrf_create(&c, &bad), NMT_ERR_ARG);
    /* the widest orders work */
    bad = o;
    bad.char_order = NMT_CHRF_MAX_CHAR_ORDER;
    bad.word_order = NMT_CHRF_MAX_WORD_ORDER;
    ck_assert_int_eq(nmt_chrf_create(&c, &bad), NMT_OK);
    const char *ref = "one two three four five six seven eight nine ten eleven";
    ck_assert_int_eq(nmt_chrf_add(c, NULL, ref, &ref, 1), NMT_OK);
    ck_assert_double_eq(nmt_chrf_result(c), 100.0);
    nmt_chrf_free(c);
}
END_TEST

/* Invalid UTF-8 is not refused by the library: each bad byte is a character. */
START_TEST(invalid_utf8)
{
    nmt_chrf_opts o;
    nmt_chrf_opts_init(&o);
    long got[3 * NMT_CHRF_MAX_ORDER];
    const char *ref = "\xff\xfe" "a";
    stats_of(&o, "\xff\xc3" "a", &ref, 1, got);
    ck_assert_int_eq(got[0], 3);
    ck_assert_int_eq(got[2], 2); /* 0xff and a */
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("chrf");
    TCase *tc = tcase_create("chrf");
    tcase_add_test(tc, sacrebleu_eps_smoothing);
    tcase_add_test(tc, sacrebleu_effective_order);
    tcase_add_test(tc, sacrebleu_keep_whitespace);
    tcase_add_test(tc, sacrebleu_sentence_level);
    tcase_add_test(tc, readme_example);
    tcase_add_test(tc, best_reference);
    tcase_add_test(tc, empty_reference_counts_nothing);
    tcase_add_test(tc, characters_are_code_points);
    tcase_add_test(tc, lowercase);
    tcase_add_test(tc, chrf_plus_plus_words);
    tcase_add_test(tc, score_from_statistics);
    tcase_add_test(tc, names_and_signatures);
    tcase_add_test(tc, accumulator);
    tcase_add_test(tc, invalid_utf8);
    suite_add_tcase(s, tc);
    return s;
}
