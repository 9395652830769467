/* BLEU against sacreBLEU's own published numbers (its README and test suite)
 * and the mteval-v13a rules worked by hand on tricky strings. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/bleu.h"
#include "nmt/error.h"
#include "test_common.h"

/* sacreBLEU's README example: three sentences, two reference sets. */
static const char *const readme_hyp[] = {
    "The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."};
static const char *const readme_ref1[] = {
    "The dog bit the man.", "It was not unexpected.", "The man bit him first."};
static const char *const readme_ref2[] = {
    "The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."};

/* Corpus BLEU of parallel arrays: hyp[i] against refs[r][i]. */
static nmt_bleu_score corpus(const nmt_bleu_opts *o, const char *const *hyp,
                             const char *const *const *refs, size_t n_refs, size_t n)
{
    nmt_bleu *b;
    ck_assert_int_eq(nmt_bleu_create(&b, o), NMT_OK);
    for (size_t i = 0; i < n; i++) {
        const char *r[4];
        for (size_t k = 0; k < n_refs; k++)
            r[k] = refs[k][i];
        ck_assert_int_eq(nmt_bleu_add(b, NULL, hyp[i], r, n_refs), NMT_OK);
    }
    nmt_bleu_score s;
    nmt_bleu_result(b, &s);
    nmt_bleu_free(b);
    return s;
}

static nmt_bleu_score readme(const nmt_bleu_opts *o)
{
    const char *const *refs[] = {readme_ref1, readme_ref2};
    return corpus(o, readme_hyp, refs, 2, 3);
}

/* sacreBLEU's raw_corpus_bleu: no tokenization, floor smoothing, effective
 * order; its tests use it with one sentence and one reference. */
static double raw_bleu(const char *hyp, const char *ref, double floor_value)
{
    nmt_bleu_opts o;
    nmt_bleu_opts_init(&o);
    o.tokenize = NMT_BLEU_TOK_NONE;
    o.smooth = NMT_BLEU_SMOOTH_FLOOR;
    o.smooth_value = floor_value;
    o.effective_order = 1;
    const char *const h[] = {hyp}, *const r[] = {ref};
    const char *const *refs[] = {r};
    return corpus(&o, h, refs, 1, 1).score;
}

START_TEST(readme_example)
{
    nmt_bleu_opts o;
    nmt_bleu_opts_init(&o);
    nmt_bleu_score s = readme(&o);
    ck_assert_double_lt(fabs(s.score - 48.530827), 1e-6);
    char verbose[256], sig[256];
    nmt_bleu_verbose(verbose, sizeof verbose, &s);
    ck_assert_str_eq(verbose, "82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)");
    nmt_bleu_signature(sig, sizeof sig, &o, 2, 0);
    ck_assert_str_eq(sig, "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:" NMT_BLEU_SACREBLEU_VERSION);

    o.tokenize = NMT_BLEU_TOK_NONE;
    ck_assert_double_lt(fabs(readme(&o).score - 49.1919566), 1e-6);
    nmt_bleu_opts_init(&o);
    o.smooth = NMT_BLEU_SMOOTH_NONE;
    ck_assert_double_lt(fabs(readme(&o).score - 48.530827), 1e-6);
}
END_TEST

START_TEST(empty_hypotheses_score_zero)
{
    nmt_bleu_opts o;
    nmt_bleu_opts_init(&o);
    const char *const empty[] = {"", "", ""};
    const char *const *refs[] = {readme_ref1, readme_ref2};
    nmt_bleu_score s = corpus(&o, empty, refs, 2, 3);
    ck_assert(s.score == 0.0);
    ck_assert_int_eq(s.stats.sys_len, 0);
    ck_assert(s.bp == 0.0);
}
END_TEST

START_TEST(raw_corpus_cases)
{
    /* sacreBLEU's test_raw_bleu and test_effective_order */
    ck_assert_double_lt(fabs(raw_bleu("this is a test", "this is a test", 0.01) - 100.0), 1e-6);
    ck_assert_double_lt(fabs(raw_bleu("this is a fest", "this is a test", 0.01) - 22.3606797749979), 1e-6);
    ck_assert_double_lt(fabs(raw_bleu("test", "a test", 0.01) - 36.78794411714425), 1e-6);
    ck_assert_double_lt(fabs(raw_bleu("a test", "a test", 0.01) - 100.0), 1e-6);
    ck_assert_double_lt(fabs(raw_bleu("a little test", "a test", 0.01) - 3.218297948685433), 1e-6);
    /* test_offset: a floor of 0 gives 0, the default floor 0.1 does not */
    ck_assert(raw_bleu("am I am a character sequence", "I am a symbol string sequence a a", 0.0) == 0.0);
    ck_assert_double_lt(fabs(raw_bleu("am I am a character sequence",
                                      "I am a symbol string sequence a a", 0.1) - 15.55722182), 1e-6);
    /* nothing matches at all: 0 whatever the smoothing */
    nmt_bleu_opts o;
    nmt_bleu_opts_init(&o);
    o.tokenize = NMT_BLEU_TOK_NONE;
    o.smooth = NMT_BLEU_SMOOTH_FLOOR;
    o.smooth_value = 0.01;
    const char *const h[] = {"this is a test", "another test"};
    const char *const r[] = {"ref1", "ref2"};
    const char *const *refs[] = {r};
    ck_assert(corpus(&o, h, refs, 1, 2).score == 0.0);
}
END_TEST

START_TEST(clipped_statistics)
{
    /* sacreBLEU's test_statistics */
    nmt_bleu_opts o;
    nmt_bleu_opts_init(&o);
    o.tokenize = NMT_BLEU_TOK_NONE;
    nmt_bleu *b;
    ck_assert_int_eq(nmt_bleu_create(&b, &o), NMT_OK);
    const char *ref = "I am a symbol string sequence a a";
    nmt_bleu_stats st;
    ck_assert_int_eq(nmt_bleu_sentence_stats(b, &st, "am I am a character sequence", &ref, 1), NMT_OK);
    const long correct[] = {4, 2, 1, 0}, total[] = {6, 5, 4, 3};
    for (int n = 0; n < 4; n++) {
        ck_assert_int_eq(st.correct[n], correct[n]);
        ck_assert_int_eq(st.total[n], total[n]);
    }
    ck_assert_int_eq(st.sys_len, 6);
    ck_assert_int_eq(st.ref_len, 8);

    /* With two references a hypothesis n-gram is clipped by its largest count
     * in any one reference, not by the sum: "a a a" scores 2 unigram matches
     * against "a a x" and "a y z", not 3. */
    const char *two[] = {"a a x", "a y z"};
    ck_assert_int_eq(nmt_bleu_sentence_stats(b, &st, "a a a", two, 2), NMT_OK);
    ck_assert_int_eq(st.correct[0], 2);
    ck_assert_int_eq(st.correct[1], 1);
    ck_assert_int_eq(st.total[1], 2);
    nmt_bleu_free(b);
}
END_TEST

START_TEST(closest_reference_length)
{
    nmt_bleu_opts o;
    nmt_bleu_opts_init(&o);
    nmt_bleu *b;
    ck_assert_int_eq(nmt_bleu_create(&b, &o), NMT_OK);
    nmt_bleu_stats st;
    /* 3 words against 2 and 4: a tie, the shorter wins, in either order */
    const char *r1[] = {"a b c d", "a b"};
    ck_assert_int_eq(nmt_bleu_sentence_stats(b, &st, "a b c", r1, 2), NMT_OK);
    ck_assert_int_eq(st.ref_len, 2);
    const char *r2[] = {"a b", "a b c d"};
    ck_assert_int_eq(nmt_bleu_sentence_stats(b, &st, "a b c", r2, 2), NMT_OK);
    ck_assert_int_eq(st.ref_len, 2);
    /* otherwise the nearest, even if longer */
    const char *r3[] = {"a", "a b c d e f", "a b c d"};
    ck_assert_int_eq(nmt_bleu_sentence_stats(b, &st, "a b c", r3, 3), NMT_OK);
    ck_assert_int_eq(st.ref_len, 4);
    nmt_bleu_free(b);
}
END_TEST

START_TEST(score_from_statistics)
{
    /* sacreBLEU's test_scoring (compute_bleu defaults to no smoothing) */
    nmt_bleu_opts o;
    nmt_bleu_opts_init(&o);
    o.smooth = NMT_BLEU_SMOOTH_NONE;
    nmt_bleu_stats st = {.sys_len = 11, .ref_len = 11, .correct = {9, 7, 5, 3}, .total = {10, 8, 6, 4}};
    nmt_bleu_score s;
    nmt_bleu_compute(&s, &st, &o);
    ck_assert_double_lt(fabs(s.score - 83.75922397), 1e-6);

    /* test_degenerate_statistics: floor smoothing of hopeless statistics */
    o.smooth = NMT_BLEU_SMOOTH_FLOOR;
    const nmt_bleu_stats deg[] = {
        {.sys_len = 0, .ref_len = 1, .correct = {0, 0, 0, 0}, .total = {4, 4, 2, 1}},
        {.sys_len = 14, .ref_len = 10, .correct = {0, 0, 0, 0}, .total = {10, 11, 12, 0}},
        {.sys_len = 0, .ref_len = 0, .correct = {0, 0, 0, 0}, .total = {0, 0, 0, 0}},
        {.sys_len = 6, .ref_len = 6, .correct = {6, 5, 4, 0}, .total = {6, 5, 4, 3}},
        {.sys_len = 1, .ref_len = 5, .correct = {0, 0, 0, 0}, .total = {0, 0, 0, 0}},
    };
    const double offsets[] = {0.0, 0.0, 0.1, 0.0, 0.01};
    for (size_t i = 0; i < sizeof deg / sizeof deg[0]; i++) {
        o.smooth_value = offsets[i];
        nmt_bleu_compute(&s, &deg[i], &o);
        ck_assert_msg(s.score == 0.0, "degenerate case %zu: %g", i, s.score);
    }
}
END_TEST

/* sacreBLEU's test_sentence_bleu: one Romanian sentence, effective order. */
static double ro_sentence(nmt_bleu_smooth smooth, double value, nmt_bleu_tokenize tok)
{
    nmt_bleu_opts o;
    nmt_bleu_opts_init(&o);
    o.smooth = smooth;
    o.smooth_value = value;
    o.tokenize = tok;
    o.effective_order = 1;
    const char *const h[] = {"Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;"};
    const char *const r[] = {"producţia de zahăr brut se exprimă în zahăr alb;"};
    const char *const *refs[] = {r};
    return corpus(&o, h, refs, 1, 1).score;
}

START_TEST(sentence_bleu_smoothing)
{
    const double eps = 1e-3;
    ck_assert_double_lt(fabs(ro_sentence(NMT_BLEU_SMOOTH_EXP, 0, NMT_BLEU_TOK_13A) - 8.493), eps);
    ck_assert_double_lt(fabs(ro_sentence(NMT_BLEU_SMOOTH_NONE, 0, NMT_BLEU_TOK_13A) - 0.0), eps);
    ck_assert_double_lt(fabs(ro_sentence(NMT_BLEU_SMOOTH_FLOOR, 0.1, NMT_BLEU_TOK_13A) - 4.51688), eps);
    ck_assert_double_lt(fabs(ro_sentence(NMT_BLEU_SMOOTH_FLOOR, 0.5, NMT_BLEU_TOK_13A) - 10.10), 1e-2);
    ck_assert_double_lt(fabs(ro_sentence(NMT_BLEU_SMOOTH_ADD_K, 1, NMT_BLEU_TOK_13A) - 14.882), eps);
    ck_assert_double_lt(fabs(ro_sentence(NMT_BLEU_SMOOTH_ADD_K, 2, NMT_BLEU_TOK_13A) - 21.389), eps);
    ck_assert_double_lt(fabs(ro_sentence(NMT_BLEU_SMOOTH_EXP, 0, NMT_BLEU_TOK_NONE) - 7.347), eps);
    ck_assert_double_eq(nmt_bleu_smooth_default(NMT_BLEU_SMOOTH_FLOOR), 0.1);
    ck_assert_double_eq(nmt_bleu_smooth_default(NMT_BLEU_SMOOTH_ADD_K), 1.0);

    /* "this is a cat" against "okay thanks": 0 for every smoothing */
    nmt_bleu_opts o;
    nmt_bleu_opts_init(&o);
    o.effective_order = 1;
    for (int m = NMT_BLEU_SMOOTH_EXP; m <= NMT_BLEU_SMOOTH_ADD_K; m++) {
        o.smooth = (nmt_bleu_smooth)m;
        o.smooth_value = nmt_bleu_smooth_default(o.smooth);
        const char *const h[] = {"this is a cat"}, *const r[] = {"okay thanks"};
        const char *const *refs[] = {r};
        ck_assert(corpus(&o, h, refs, 1, 1).score == 0.0);
    }
}
END_TEST

static void check_13a(const char *in, const char *want)
{
    char *got = nmt_bleu_tokenize_13a(in);
    ck_assert_ptr_nonnull(got);
    ck_assert_msg(!strcmp(got, want), "13a('%s') = '%s', want '%s'", in, got, want);
    free(got);
}

START_TEST(tokenizer_13a)
{
    /* entities are decoded, then the quotes and & split off */
    check_13a("He said &quot;hi&quot; &amp; left.", "He said \" hi \" & left .");
    /* the replacements run in turn, so &amp;lt; ends as < */
    check_13a("&amp;lt;b&amp;gt;", "< b >");
    /* periods and commas stay inside numbers, split off elsewhere */
    check_13a("3.5 and 1,000 but 5.", "3.5 and 1,000 but 5 .");
    check_13a(".5 ,5 x.y", ". 5 , 5 x . y");
    check_13a("it's U.S.A.", "it's U . S . A .");
    /* a hyphen splits off only after a digit */
    check_13a("pages 10-20, a-b", "pages 10 - 20 , a-b");
    check_13a("e-mail 2-", "e-mail 2 -");
    /* the ASCII symbols, each its own token */
    check_13a("(1+2)*3=9; ok?{x}[y]|~`^_@#$%/\\", "( 1 + 2 ) * 3 = 9 ; ok ? { x } [ y ] | ~ ` ^ _ @ # $ % / \\");
    check_13a("<skipped>word", "word");
    /* Unicode whitespace separates, other non-ASCII stays in words */
    check_13a("a\xc2\xa0" "b\xe3\x80\x80" "c ", "a b c");
    check_13a("x\xe2\x80\xa6y", "x\xe2\x80\xa6y");
    check_13a("", "");
    check_13a("   ", "");
}
END_TEST

START_TEST(lowercase_like_python)
{
    char *s = nmt_bleu_lowercase("\xc3\x84RGER \xc4\xb0stanbul \xce\xa3\xce\x9f\xce\xa6\xce\x9f\xce\xa3.");
    /* Ä → ä; İ → i + combining dot; final capital sigma → ς, the inner one σ */
    ck_assert_str_eq(s, "\xc3\xa4rger i\xcc\x87stanbul \xcf\x83\xce\xbf\xcf\x86\xce\xbf\xcf\x82.");
    free(s);
    s = nmt_bleu_lowercase("\xce\xa3"); /* a lone Σ is not at the end of a word */
    ck_assert_str_eq(s, "\xcf\x83");
    free(s);

    nmt_bleu_opts o;
    nmt_bleu_opts_init(&o);
    o.lowercase = 1;
    s = nmt_bleu_preprocess("The DOG, Bit.  \t", &o);
    ck_assert_str_eq(s, "the dog , bit .");
    free(s);
}
END_TEST

START_TEST(accumulator)
{
    nmt_bleu_opts o;
    nmt_bleu_opts_init(&o);
    nmt_bleu *b;
    ck_assert_int_eq(nmt_bleu_create(&b, &o), NMT_OK);
    /* the README corpus, one sentence at a time, equals readme() */
    for (int i = 0; i < 3; i++) {
        const char *r[] = {readme_ref1[i], readme_ref2[i]};
        ck_assert_int_eq(nmt_bleu_add(b, NULL, readme_hyp[i], r, 2), NMT_OK);
    }
    nmt_bleu_score s;
    nmt_bleu_result(b, &s);
    ck_assert_double_lt(fabs(s.score - 48.530827), 1e-6);
    ck_assert_int_eq(nmt_bleu_sentences(b), 3);
    ck_assert_int_eq(nmt_bleu_nrefs(b), 2);
    /* a sentence with one reference makes the count vary */
    const char *one = "x";
    ck_assert_int_eq(nmt_bleu_add(b, NULL, "x", &one, 1), NMT_OK);
    ck_assert_int_eq(nmt_bleu_nrefs(b), -1);
    char sig[256];
    nmt_bleu_signature(sig, sizeof sig, &o, -1, 1);
    ck_assert_str_eq(sig, "#:var|c:mixed|e:no|tok:13a|s:exp|v:" NMT_BLEU_SACREBLEU_VERSION);
    /* reset forgets the sentences */
    nmt_bleu_reset(b);
    ck_assert_int_eq(nmt_bleu_sentences(b), 0);
    ck_assert_int_eq(nmt_bleu_totals(b)->sys_len, 0);
    ck_assert_int_eq(nmt_bleu_add(b, NULL, "x", NULL, 0), NMT_ERR_ARG);
    nmt_bleu_free(b);

    o.smooth = 17;
    ck_assert_int_eq(nmt_bleu_create(&b, &o), NMT_ERR_ARG);
}
END_TEST

START_TEST(length_buckets)
{
    ck_assert_int_eq(nmt_bleu_bucket(0), 0);
    ck_assert_int_eq(nmt_bleu_bucket(1), 0);
    ck_assert_int_eq(nmt_bleu_bucket(10), 0);
    ck_assert_int_eq(nmt_bleu_bucket(11), 1);
    ck_assert_int_eq(nmt_bleu_bucket(50), 4);
    ck_assert_int_eq(nmt_bleu_bucket(51), 5);
    ck_assert_int_eq(nmt_bleu_bucket(1000), 5);
    ck_assert_str_eq(nmt_bleu_bucket_label(1), "11-20");
    ck_assert_str_eq(nmt_bleu_bucket_label(5), "51+");
    ck_assert_int_eq(nmt_bleu_count_words("  a b\xc2\xa0" "c\t"), 3);
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("bleu");
    TCase *tc = tcase_create("bleu");
    tcase_add_test(tc, readme_example);
    tcase_add_test(tc, empty_hypotheses_score_zero);
    tcase_add_test(tc, raw_corpus_cases);
    tcase_add_test(tc, clipped_statistics);
    tcase_add_test(tc, closest_reference_length);
    tcase_add_test(tc, score_from_statistics);
    tcase_add_test(tc, sentence_bleu_smoothing);
    tcase_add_test(tc, tokenizer_13a);
    tcase_add_test(tc, lowercase_like_python);
    tcase_add_test(tc, accumulator);
    tcase_add_test(tc, length_buckets);
    suite_add_tcase(s, tc);
    return s;
}
