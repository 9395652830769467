/* Guided alignment's data (nmt/links.h, and the words of nmt/text.h and
 * nmt/subwords.h): the words of a line, the word of each token and each
 * piece, links files read and refused, and the gold rows that word links
 * make of a batch of words and of pieces, shifted and not, after pairs
 * dropped by --max-len. */
#include <math.h>
#include <string.h>

#include "nmt/batch.h"
#include "nmt/corpus.h"
#include "nmt/error.h"
#include "nmt/links.h"
#include "nmt/subwords.h"
#include "nmt/text.h"
#include "test_common.h"
#include "test_files.h"

/* ---- words ---- */

START_TEST(words_are_what_whitespace_separates)
{
    static const struct {
        const char *text;
        size_t words;
    } cases[] = {
        {"", 0}, {"   ", 0}, {"a", 1}, {"a b", 2}, {"  a \t b  c  ", 3},
        {"don't, John's dog.", 3}, {"a\xc2\xa0" "b", 2},       /* no-break space */
        {"x\xe3\x80\x80y z", 3},                                  /* ideographic space */
        {"Fu\xc3\x9f" "ball-Spiel (3.5)", 2},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        ck_assert_msg(nmt_count_words(cases[k].text, strlen(cases[k].text)) == cases[k].words,
                      "'%s'", cases[k].text);
}
END_TEST

/* The tokenizer cuts punctuation and clitics off inside a word: every
 * token of a word is that word's. */
START_TEST(tokens_belong_to_their_word)
{
    const char *line = "Don't, John's  \"dog\" ate 3.5 T-shirts...";
    nmt_tokens t = {0}, scratch = {0};
    ck_assert_int_eq(nmt_tokenize(&t, line, strlen(line), 1), NMT_OK);
    /* do n't , | john 's | " dog " | ate | 3.5 | t-shirts ... */
    static const int32_t want[] = {0, 0, 0, 1, 1, 2, 2, 2, 3, 4, 5, 5};
    ck_assert_uint_eq(t.n, sizeof want / sizeof want[0]);
    int32_t word[16];
    ck_assert_int_eq(nmt_token_words(word, t.n, line, strlen(line), 1, &scratch), NMT_OK);
    for (size_t k = 0; k < t.n; k++)
        ck_assert_msg(word[k] == want[k], "token %zu '%s': word %d, not %d", k, t.tok[k],
                      word[k], want[k]);
    /* a count that is not the line's tokens is refused */
    ck_assert_int_eq(nmt_token_words(word, t.n - 1, line, strlen(line), 1, &scratch),
                     NMT_ERR_FORMAT);
    nmt_tokens_free(&t);
    nmt_tokens_free(&scratch);
}
END_TEST

/* A piece's word is the one holding the first non-space character at or
 * after its start: "▁Haus" starting at the space before "Haus", a lone
 * "▁", the first word's dummy prefix at 0; trailing whitespace is the last
 * word's. */
START_TEST(pieces_belong_to_the_word_they_start_in)
{
    const char *text = "ab  cd\tef ";
    /* begins: "▁" at 0 (dummy prefix), "ab" 0, "b" 1, "▁cd" 2, "▁" 3 (a
     * space of the run), "ef" 7, a piece of the tab 6, trailing space 9 */
    static const int32_t begin[] = {0, 0, 1, 2, 3, 7, 6, 9};
    static const int32_t want[] = {0, 0, 0, 1, 1, 2, 2, 2};
    int32_t word[8];
    nmt_span_words(word, begin, 8, text, strlen(text));
    for (int k = 0; k < 8; k++)
        ck_assert_msg(word[k] == want[k], "piece %d: word %d, not %d", k, word[k], want[k]);
    nmt_span_words(word, begin, 1, "   ", 3);
    ck_assert_int_eq(word[0], -1);
}
END_TEST

/* Lines to learn a small subword model from. */
static const char *const learn_lines[] = {
    "ein Mann f\xc3\xa4hrt Fahrrad .", "zwei Hunde spielen im Schnee",
    "a man rides a bike .", "two dogs play in the snow", "der Fu\xc3\x9f" "ball ist rund",
};
enum { N_LEARN = sizeof learn_lines / sizeof learn_lines[0] };

static int next_learn(void *ctx, const char **line, size_t *len)
{
    int *k = ctx;
    if (*k >= 40 * N_LEARN)
        return 0;
    *line = learn_lines[*k % N_LEARN];
    *len = strlen(*line);
    (*k)++;
    return 1;
}

static nmt_subwords *small_model(void)
{
    nmt_subwords *sw;
    int k = 0;
    ck_assert_msg(nmt_subwords_learn(&sw, 40, next_learn, &k) == NMT_OK, "%s",
                  nmt_error_message());
    return sw;
}

typedef struct spans_call {
    const nmt_subwords *sw;
    float alpha;
    nmt_ids ids[8], spans[8];
    int with_spans;
} spans_call;

/* Encodes every learning line, sampled, on a seeded thread. */
static int encode_all(void *ctx)
{
    spans_call *c = ctx;
    for (int k = 0; k < N_LEARN; k++) {
        const char *t = learn_lines[k];
        int rc = c->with_spans
                     ? nmt_subwords_encode_spans(c->sw, t, strlen(t), c->alpha, &c->ids[k],
                                                 &c->spans[k])
                     : nmt_subwords_encode_ids(c->sw, t, strlen(t), c->alpha, &c->ids[k]);
        if (rc)
            return rc;
    }
    return NMT_OK;
}

/* nmt_subwords_encode_spans gives the ids of nmt_subwords_encode_ids, best
 * and sampled (the same draws from the same seed), and each piece's word
 * is its word: the pieces of a word, and only they, start it. */
START_TEST(spans_keep_the_pieces_and_find_their_words)
{
    nmt_subwords *sw = small_model();
    for (int sampled = 0; sampled < 2; sampled++) {
        spans_call plain = {.sw = sw, .alpha = sampled ? 0.5f : 0}, with = plain;
        with.with_spans = 1;
        ck_assert_int_eq(nmt_subwords_run_seeded(7, encode_all, &plain), NMT_OK);
        ck_assert_int_eq(nmt_subwords_run_seeded(7, encode_all, &with), NMT_OK);
        for (int k = 0; k < N_LEARN; k++) {
            const char *t = learn_lines[k];
            ck_assert_uint_eq(plain.ids[k].n, with.ids[k].n);
            ck_assert_int_eq(memcmp(plain.ids[k].id, with.ids[k].id,
                                    plain.ids[k].n * sizeof(int32_t)), 0);
            int32_t word[64];
            size_t n = with.ids[k].n;
            nmt_span_words(word, with.spans[k].id, n, t, strlen(t));
            ck_assert_int_eq(word[0], 0);
            ck_assert_int_eq(word[n - 1], (int32_t)nmt_count_words(t, strlen(t)) - 1);
            for (size_t q = 1; q < n; q++) {
                const char *piece = nmt_subwords_piece(sw, with.ids[k].id[q]);
                int starts = nmt_piece_starts_word(piece);
                ck_assert_msg(word[q] == word[q - 1] + starts, "'%s' piece %zu '%s': word %d "
                              "after %d", t, q, piece, word[q], word[q - 1]);
            }
            nmt_ids_free(&plain.ids[k]);
            nmt_ids_free(&with.ids[k]);
            nmt_ids_free(&with.spans[k]);
        }
    }
    nmt_subwords_free(sw);
}
END_TEST

/* ---- links files ---- */

static void write_text(const char *name, const char *text)
{
    write_file(name, text, strlen(text));
}

static const char *const SRC = "a b c\nd e\n\nf g h i\n";
static const char *const TGT = "x y\nz\nw\nv u t\n";

static int read_links(nmt_links *l, const char *links)
{
    write_text("s", SRC);
    write_text("t", TGT);
    write_text("l", links);
    char s[400], t[400];
    snprintf(s, sizeof s, "%s", tmp_path("s"));
    snprintf(t, sizeof t, "%s", tmp_path("t"));
    return nmt_links_read(l, tmp_path("l"), s, t);
}

/* One line per pair: sorted by target word, each link once, i?j a link,
 * empty lines without links; the print covers the whole file. */
START_TEST(reads_a_links_file)
{
    make_tmpdir();
    nmt_links l;
    ck_assert_msg(read_links(&l, "2-1 0-0 1?1 0-0\n1-0\n\n3-2\t0?0  2-2\n") == NMT_OK, "%s",
                  nmt_error_message());
    ck_assert_uint_eq(l.n_lines, 4);
    ck_assert_uint_eq(l.possible, 2);
    ck_assert_uint_eq(l.empty, 1);
    static const size_t off[] = {0, 3, 4, 4, 7};
    static const int32_t src[] = {0, 1, 2, 1, 0, 2, 3}, tgt[] = {0, 1, 1, 0, 0, 2, 2};
    for (int k = 0; k < 5; k++)
        ck_assert_uint_eq(l.off[k], off[k]);
    for (int k = 0; k < 7; k++) {
        ck_assert_int_eq(l.src[k], src[k]);
        ck_assert_int_eq(l.tgt[k], tgt[k]);
    }
    uint64_t hash = l.hash;
    ck_assert_uint_eq(l.bytes, strlen("2-1 0-0 1?1 0-0\n1-0\n\n3-2\t0?0  2-2\n"));
    nmt_links_free(&l);
    /* one link more is another print */
    ck_assert_int_eq(read_links(&l, "2-1 0-0 1?1 0-0\n1-0\n\n3-2\t0?0  2-2 1-1\n"), NMT_OK);
    ck_assert(l.hash != hash);
    nmt_links_free(&l);
    remove_tmpdir();
}
END_TEST

/* Refusals name the file and the line, and the link and the words. */
START_TEST(refuses_bad_links_files)
{
    make_tmpdir();
    static const struct {
        const char *links, *says;
    } bad[] = {
        {"0-0\n0-0\n\n", "ended after line 3"},           /* a line short */
        {"0-0\n0-0\n\n0-0\n1-1\n", "l:5: "},               /* a line too many */
        {"0-0\n0-0\n\n0-0 1_1\n", "l:4: '1_1' is not a word link"},
        {"0-0 -1-0\n\n\n\n", "'-1-0' is not a word link"},
        {"0-0\n01-0\n\n\n", "'01-0' is not a word link"},
        {"0-0\n0-\n\n\n", "'0-' is not a word link"},
        {"0-0\n2-0\n\n\n", "l:2: link '2-0' is outside its pair: the source line has 2 words "
                           "and the target line 1"},
        {"0-2\n\n\n\n", "link '0-2' is outside"},
        {"\n\n0-0\n\n", "l:3: link '0-0' is outside its pair: the source line has 0 words"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        nmt_links l;
        ck_assert_int_eq(read_links(&l, bad[k].links), NMT_ERR_FORMAT);
        ck_assert_msg(strstr(nmt_error_message(), bad[k].says), "%s: %s", bad[k].links,
                      nmt_error_message());
    }
    nmt_links l;
    ck_assert_int_eq(nmt_links_read(&l, tmp_path("none"), tmp_path("s"), tmp_path("t")),
                     NMT_ERR_IO);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "none: cannot open"));
    remove_tmpdir();
}
END_TEST

/* ---- gold rows ---- */

/* The row of decoder position i of pair k. */
static const float *row_of(const nmt_batch *b, int k, int i)
{
    return b->guide + ((size_t)k * b->tgt_T + i) * b->src_T;
}

/* Expects row (k, i) to be uniform over the source positions in `on`
 * (n of them; n 0: all 0). */
static void expect_row(const nmt_batch *b, int k, int i, const int *on, int n)
{
    const float *r = row_of(b, k, i);
    for (int j = 0; j < b->src_T; j++) {
        int in = 0;
        for (int q = 0; q < n; q++)
            in |= on[q] == j;
        float want = in ? 1.0f / (float)n : 0;
        ck_assert_msg(fabsf(r[j] - want) < 1e-7f, "pair %d row %d source %d: %g, not %g", k, i,
                      j, (double)r[j], (double)want);
    }
}

/* Word units: a word the tokenizer cuts in three ("don't," -> do n't ,)
 * gives its three target rows the same gold, and a link to it covers its
 * three source tokens; shifted, each row moves one step on; pairs that
 * --max-len dropped keep the lines of the links right. */
START_TEST(word_links_make_rows_of_tokens)
{
    make_tmpdir();
    /* line 2 is dropped by max_len 6 */
    write_text("s", "don't, go\na b c d e f g h\nyes no\n");
    write_text("t", "nicht gehen !\nx\nja nein\n");
    write_text("l", "0-0 1-1 1-2\n0-0\n1-0 0-1\n");
    char s[400], t[400];
    snprintf(s, sizeof s, "%s", tmp_path("s"));
    snprintf(t, sizeof t, "%s", tmp_path("t"));
    nmt_links l;
    ck_assert_msg(nmt_links_read(&l, tmp_path("l"), s, t) == NMT_OK, "%s", nmt_error_message());
    nmt_corpus c;
    nmt_vocab *sv = NULL, *tv = NULL;
    nmt_corpus_opts o = {.max_len = 6, .skip_empty = 1, .words = 1};
    ck_assert_int_eq(nmt_corpus_read(&c, s, t, &o, &sv, &tv), NMT_OK);
    ck_assert_uint_eq(c.n, 2);
    ck_assert_uint_eq(c.line[1], 3);
    nmt_batch b;
    ck_assert_int_eq(nmt_batch_alloc(&b, 2, 8, 8), NMT_OK);
    const size_t pairs[2] = {0, 1};
    for (int shift = 0; shift < 2; shift++) {
        ck_assert_int_eq(nmt_batch_fill(&b, &c, pairs, 2), NMT_OK);
        ck_assert_ptr_null(b.guide);
        /* pair 0: source do n't , go (+ </s>); target nicht gehen ! */
        ck_assert_int_eq(nmt_links_guide(&b, &c, &l, shift), 3 + 2);
        const int first[] = {0, 1, 2}, go[] = {3};
        expect_row(&b, 0, 0 + shift, first, 3);
        expect_row(&b, 0, 1 + shift, go, 1);
        expect_row(&b, 0, 2 + shift, go, 1);
        expect_row(&b, 0, shift ? 0 : 3, NULL, 0); /* <s>'s step, or </s>'s */
        /* pair 1 (line 3): ja <- no, nein <- yes */
        const int no[] = {1}, yes[] = {0};
        expect_row(&b, 1, 0 + shift, no, 1);
        expect_row(&b, 1, 1 + shift, yes, 1);
        /* a new fill has no gold rows until they are made */
        ck_assert_int_eq(nmt_batch_fill(&b, &c, pairs, 1), NMT_OK);
        ck_assert_ptr_null(b.guide);
    }
    /* a corpus read without its words cannot make rows */
    nmt_corpus plain;
    o.words = 0;
    ck_assert_int_eq(nmt_corpus_read(&plain, s, t, &o, &sv, &tv), NMT_OK);
    ck_assert_ptr_null(plain.src_word);
    ck_assert_int_eq(nmt_batch_fill(&b, &plain, pairs, 2), NMT_OK);
    ck_assert_int_eq(nmt_links_guide(&b, &plain, &l, 0), NMT_ERR_ARG);
    nmt_corpus_free(&plain);
    nmt_batch_free(&b);
    nmt_corpus_free(&c);
    nmt_vocab_free(sv);
    nmt_vocab_free(tv);
    nmt_links_free(&l);
    remove_tmpdir();
}
END_TEST

/* Pieces: hand-made pairs of subword-like units (each word two or three
 * pieces), links many-to-many: a target piece's row is uniform over the
 * pieces of every source word linked to its word. */
START_TEST(word_links_make_rows_of_pieces)
{
    /* pair 0: source words 0 (pieces 0 1), 1 (2), 2 (3 4 5); target words
     * 0 (0 1), 1 (2); links 0-0 2-0 1-1. pair 1: source 0 (0), 1 (1 2);
     * target 0 (0), 1 (1 2 3); links 1-1 */
    static const int32_t src_ids[] = {4, 5, 6, 7, 8, 9, 4, 5, 6};
    static const int32_t src_word[] = {0, 0, 1, 2, 2, 2, 0, 1, 1};
    static const int32_t tgt_ids[] = {4, 5, 6, 7, 4, 5, 6, 7};
    static const int32_t tgt_word[] = {0, 0, 1, 0, 1, 1, 1};
    size_t src_off[] = {0, 6, 9}, tgt_off[] = {0, 3, 7}, line[] = {1, 2};
    nmt_corpus c = {.n = 2, .src = (int32_t *)src_ids, .tgt = (int32_t *)tgt_ids,
                    .src_off = src_off, .tgt_off = tgt_off, .line = line,
                    .src_word = (int32_t *)src_word, .tgt_word = (int32_t *)tgt_word};
    size_t off[] = {0, 3, 4};
    int32_t ls[] = {0, 2, 1, 1}, lt[] = {0, 0, 1, 1};
    nmt_links l = {.n_lines = 2, .off = off, .src = ls, .tgt = lt};
    nmt_batch b;
    ck_assert_int_eq(nmt_batch_alloc(&b, 2, 8, 8), NMT_OK);
    const size_t pairs[2] = {1, 0};
    for (int shift = 0; shift < 2; shift++) {
        ck_assert_int_eq(nmt_batch_fill(&b, &c, pairs, 2), NMT_OK);
        ck_assert_int_eq(nmt_links_guide(&b, &c, &l, shift), 3 + 3);
        /* batch pair 0 is corpus pair 1 */
        const int w1[] = {1, 2};
        expect_row(&b, 0, 0 + shift, NULL, 0);
        for (int q = 1; q < 4; q++)
            expect_row(&b, 0, q + shift, w1, 2);
        const int w02[] = {0, 1, 3, 4, 5}, w1s[] = {2};
        expect_row(&b, 1, 0 + shift, w02, 5);
        expect_row(&b, 1, 1 + shift, w02, 5);
        expect_row(&b, 1, 2 + shift, w1s, 1);
        expect_row(&b, 1, shift ? 0 : 3, NULL, 0);
        for (int i = 0; i < b.tgt_T; i++) /* padding rows: nothing */
            if (i > 3)
                expect_row(&b, 1, i, NULL, 0);
    }
    /* a line beyond the links */
    line[1] = 3;
    ck_assert_int_eq(nmt_batch_fill(&b, &c, pairs, 2), NMT_OK);
    ck_assert_int_eq(nmt_links_guide(&b, &c, &l, 0), NMT_ERR_ARG);
    nmt_batch_free(&b);
}
END_TEST

/* A corpus of pieces read with its words: each piece's word as the spans
 * say, and the pieces the same as without them. */
START_TEST(corpus_of_pieces_keeps_words)
{
    make_tmpdir();
    nmt_subwords *sw = small_model();
    write_text("s", "ein Mann f\xc3\xa4hrt Fahrrad .\nder Fu\xc3\x9f" "ball ist rund\n");
    write_text("t", "a man rides a bike .\ntwo dogs\n");
    char s[400], t[400];
    snprintf(s, sizeof s, "%s", tmp_path("s"));
    snprintf(t, sizeof t, "%s", tmp_path("t"));
    nmt_corpus with, without;
    nmt_corpus_opts o = {.skip_empty = 1, .subwords = sw, .words = 1};
    ck_assert_int_eq(nmt_corpus_read(&with, s, t, &o, NULL, NULL), NMT_OK);
    o.words = 0;
    ck_assert_int_eq(nmt_corpus_read(&without, s, t, &o, NULL, NULL), NMT_OK);
    ck_assert_uint_eq(with.src_off[2], without.src_off[2]);
    ck_assert_int_eq(memcmp(with.src, without.src, with.src_off[2] * sizeof(int32_t)), 0);
    ck_assert_int_eq(memcmp(with.tgt, without.tgt, with.tgt_off[2] * sizeof(int32_t)), 0);
    for (size_t p = 0; p < with.n; p++) {
        const int32_t *ids = with.src + with.src_off[p], *word = with.src_word + with.src_off[p];
        size_t n = with.src_off[p + 1] - with.src_off[p];
        ck_assert_int_eq(word[0], 0);
        for (size_t q = 1; q < n; q++)
            ck_assert_int_eq(word[q], word[q - 1] +
                             nmt_piece_starts_word(nmt_subwords_piece(sw, ids[q])));
        ck_assert_int_eq(word[n - 1], p == 0 ? 4 : 3);
    }
    nmt_corpus_free(&with);
    nmt_corpus_free(&without);
    nmt_subwords_free(sw);
    remove_tmpdir();
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("links");
    TCase *tc = tcase_create("links");
    tcase_add_test(tc, words_are_what_whitespace_separates);
    tcase_add_test(tc, tokens_belong_to_their_word);
    tcase_add_test(tc, pieces_belong_to_the_word_they_start_in);
    tcase_add_test(tc, spans_keep_the_pieces_and_find_their_words);
    tcase_add_test(tc, reads_a_links_file);
    tcase_add_test(tc, refuses_bad_links_files);
    tcase_add_test(tc, word_links_make_rows_of_tokens);
    tcase_add_test(tc, word_links_make_rows_of_pieces);
    tcase_add_test(tc, corpus_of_pieces_keeps_words);
    suite_add_tcase(s, tc);
    return s;
}
