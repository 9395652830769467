/* Reading parallel corpora into ids, and every input that must be refused. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "nmt/corpus.h"
#include "nmt/error.h"
#include "nmt/text.h"
#include "test_common.h"
#include "test_files.h"

static const char *write_text(const char *name, const char *text)
{
    return write_file(name, text, strlen(text));
}

static const char *write_gzip(const char *name, const char *text)
{
    const char *p = tmp_path(name);
    gzFile g = gzopen(p, "wb");
    ck_assert_ptr_nonnull(g);
    ck_assert_int_eq(gzwrite(g, text, (unsigned)strlen(text)), (int)strlen(text));
    ck_assert_int_eq(gzclose(g), Z_OK);
    return p;
}

/* The tokens of pair i on one side, joined by spaces. */
static const char *side_text(const nmt_corpus *c, const nmt_vocab *v, int tgt, size_t i)
{
    static char out[1024];
    const int32_t *ids = tgt ? c->tgt : c->src;
    const size_t *off = tgt ? c->tgt_off : c->src_off;
    size_t used = 0;
    out[0] = '\0';
    for (size_t k = off[i]; k < off[i + 1]; k++)
        used += (size_t)snprintf(out + used, sizeof out - used, "%s%s", k > off[i] ? " " : "",
                                 nmt_vocab_token(v, ids[k]));
    return out;
}

START_TEST(reads_and_builds_vocabularies)
{
    make_tmpdir();
    /* gzip source, plain CRLF target; line 3 empty on the target, line 5
     * too long, line 6 empty on both */
    const char *src = write_gzip("s.gz", "Ein Mann.\nZwei Männer.\nDrei.\nEin Hund.\n"
                                         "a b c d e f\n\nÄrger, Mann!\n");
    const char *tgt = write_text("t.txt", "A man.\r\nTwo men.\r\n\r\nA dog.\r\n"
                                          "x\r\n\r\nTrouble, man!\r\n");
    nmt_corpus c;
    nmt_vocab *sv = NULL, *tv = NULL;
    nmt_corpus_opts o = {.lowercase = 1, .max_len = 5, .skip_empty = 1, .min_count = 2};
    ck_assert_msg(nmt_corpus_read(&c, src, tgt, &o, &sv, &tv) == 0, "%s", nmt_error_message());
    ck_assert_uint_eq(c.n_lines, 7);
    ck_assert_uint_eq(c.n, 4);
    ck_assert_uint_eq(c.skipped_empty, 2);
    ck_assert_uint_eq(c.skipped_long, 1);
    size_t want_lines[] = {1, 2, 4, 7};
    for (size_t i = 0; i < 4; i++)
        ck_assert_uint_eq(c.line[i], want_lines[i]);
    /* source counts: . 3, ein 2, mann 2, the rest once (dropped) */
    ck_assert_int_eq(nmt_vocab_size(sv), 7);
    ck_assert_str_eq(nmt_vocab_token(sv, 4), ".");
    ck_assert_str_eq(nmt_vocab_token(sv, 5), "ein");
    ck_assert_str_eq(nmt_vocab_token(sv, 6), "mann");
    ck_assert_str_eq(side_text(&c, sv, 0, 0), "ein mann .");
    ck_assert_str_eq(side_text(&c, sv, 0, 1), "<unk> <unk> .");
    ck_assert_str_eq(side_text(&c, sv, 0, 3), "<unk> <unk> mann <unk>"); /* "," once */
    /* target counts: . 3, a 2, man 2 */
    ck_assert_str_eq(side_text(&c, tv, 1, 0), "a man .");
    ck_assert_str_eq(side_text(&c, tv, 1, 2), "a <unk> .");
    ck_assert_uint_eq(c.src_off[4], 13);
    /* <unk>: 2 + 1 (hund) + 3 of the 13 source tokens, as many on the target */
    size_t unk[2], total[2];
    nmt_corpus_count_unk(&c, unk, total);
    ck_assert_uint_eq(total[0], 13);
    ck_assert_uint_eq(unk[0], 6);
    ck_assert_uint_eq(total[1], 13);
    ck_assert_uint_eq(unk[1], 6);
    nmt_corpus_free(&c);

    /* the same files with the vocabularies given: mapped, not rebuilt */
    nmt_vocab *sv2 = sv, *tv2 = tv;
    o.min_count = 1;
    o.skip_empty = 0;
    o.max_len = 0;
    ck_assert_int_eq(nmt_corpus_read(&c, src, tgt, &o, &sv2, &tv2), 0);
    ck_assert_ptr_eq(sv2, sv);
    ck_assert_ptr_eq(tv2, tv);
    ck_assert_uint_eq(c.n, 7);
    ck_assert_str_eq(side_text(&c, tv, 1, 2), "");
    ck_assert_str_eq(side_text(&c, sv, 0, 6), "<unk> <unk> mann <unk>");
    nmt_corpus_free(&c);
    nmt_vocab_free(sv);
    nmt_vocab_free(tv);

    /* without lowercasing "Ein" and "ein" differ */
    const char *s2 = write_text("s2.txt", "Ein ein Ein\n");
    sv = tv = NULL;
    nmt_corpus_opts plain = {.min_count = 1};
    ck_assert_int_eq(nmt_corpus_read(&c, s2, s2, &plain, &sv, &tv), 0);
    ck_assert_int_eq(nmt_vocab_size(sv), 6);
    ck_assert_str_eq(nmt_vocab_token(sv, 4), "Ein");
    nmt_corpus_free(&c);
    nmt_vocab_free(sv);
    nmt_vocab_free(tv);
    remove_tmpdir();
}
END_TEST

/* A joint vocabulary (--joint-vocab): one list of both sides' tokens, each
 * counted on both sides together, ordered by that count then bytes, with
 * --min-count on that count and --max-vocab on the one list; both sides'
 * ids index it, and both places get it (two copies of one list). With no
 * minimum and no cap it is the union of the two sides' words. */
START_TEST(joint_vocabulary_counts_both_sides)
{
    make_tmpdir();
    const char *src = write_text("s.txt", "Ein Mann.\nZwei Männer.\nDrei.\nEin Hund.\n"
                                          "a b c d e f\n\nÄrger, Mann!\n");
    const char *tgt = write_text("t.txt", "A man.\nTwo men.\n\nA dog.\nx\n\nTrouble, man!\n");
    nmt_corpus c;
    nmt_vocab *sv = NULL, *tv = NULL;
    nmt_corpus_opts o = {.lowercase = 1, .max_len = 5, .skip_empty = 1, .min_count = 2,
                         .joint_vocab = 1};
    ck_assert_msg(nmt_corpus_read(&c, src, tgt, &o, &sv, &tv) == 0, "%s", nmt_error_message());
    ck_assert_uint_eq(c.n, 4);
    /* . 6 times, then twice each (by bytes): ! , a ein man mann; "," and
     * "!" occur once a side, which two vocabularies of --min-count 2 drop */
    static const char *const want[] = {"<pad>", "<unk>", "<s>", "</s>", ".", "!", ",", "a",
                                       "ein", "man", "mann"};
    ck_assert_int_eq(nmt_vocab_size(sv), 11);
    ck_assert_int_eq(nmt_vocab_size(tv), 11);
    ck_assert_ptr_ne(sv, tv);
    for (int id = 0; id < 11; id++) {
        ck_assert_str_eq(nmt_vocab_token(sv, id), want[id]);
        ck_assert_str_eq(nmt_vocab_token(tv, id), want[id]);
    }
    ck_assert_str_eq(side_text(&c, sv, 0, 0), "ein mann .");
    ck_assert_str_eq(side_text(&c, sv, 0, 3), "<unk> , mann !");
    ck_assert_str_eq(side_text(&c, tv, 1, 0), "a man .");
    ck_assert_str_eq(side_text(&c, tv, 1, 3), "<unk> , man !");
    nmt_corpus_free(&c);
    nmt_vocab_free(sv);
    nmt_vocab_free(tv);
    /* --max-vocab 6 caps the one list */
    sv = tv = NULL;
    o.max_vocab = 6;
    ck_assert_int_eq(nmt_corpus_read(&c, src, tgt, &o, &sv, &tv), 0);
    ck_assert_int_eq(nmt_vocab_size(sv), 6);
    ck_assert_str_eq(nmt_vocab_token(tv, 5), "!");
    ck_assert_str_eq(side_text(&c, tv, 1, 3), "<unk> <unk> <unk> !");
    nmt_corpus_free(&c);
    nmt_vocab_free(sv);
    nmt_vocab_free(tv);
    /* no minimum, no cap: the union (9 words a side, 3 of them shared) */
    sv = tv = NULL;
    o.max_vocab = 0;
    o.min_count = 1;
    ck_assert_int_eq(nmt_corpus_read(&c, src, tgt, &o, &sv, &tv), 0);
    ck_assert_int_eq(nmt_vocab_size(sv), 4 + 15);
    size_t unk[2], total[2];
    nmt_corpus_count_unk(&c, unk, total);
    ck_assert_uint_eq(unk[0] + unk[1], 0);
    ck_assert_str_eq(side_text(&c, sv, 0, 1), "zwei männer .");
    ck_assert_str_eq(side_text(&c, tv, 1, 2), "a dog .");
    nmt_corpus_free(&c);
    nmt_vocab_free(sv);
    nmt_vocab_free(tv);
    remove_tmpdir();
}
END_TEST

/* Reading src/tgt must fail with code `code` and a message containing each
 * of the given pieces; nothing may be returned. */
static void assert_refused(const char *src, const char *tgt, int code, const char *a, const char *b,
                           const char *d)
{
    nmt_corpus c;
    nmt_vocab *sv = NULL, *tv = NULL;
    nmt_corpus_opts o = {.skip_empty = 1, .max_len = 50, .min_count = 1};
    ck_assert_int_eq(nmt_corpus_read(&c, src, tgt, &o, &sv, &tv), code);
    ck_assert_ptr_null(sv);
    ck_assert_ptr_null(tv);
    ck_assert_uint_eq(c.n, 0);
    ck_assert_ptr_null(c.src);
    const char *m = nmt_error_message();
    const char *parts[] = {a, b, d};
    for (int i = 0; i < 3; i++)
        if (parts[i])
            ck_assert_msg(strstr(m, parts[i]), "message '%s' lacks '%s'", m, parts[i]);
    ck_assert_ptr_null(strchr(m, '\n')); /* one line */
}

static const char *good(void)
{
    return write_text("good.txt", "eins\nzwei\ndrei\n");
}

START_TEST(refuses_missing_file)
{
    make_tmpdir();
    const char *g = good();
    char missing[300];
    snprintf(missing, sizeof missing, "%s", tmp_path("missing.txt"));
    assert_refused(missing, g, NMT_ERR_IO, missing, "No such file", NULL);
    assert_refused(g, missing, NMT_ERR_IO, missing, NULL, NULL);
    remove_tmpdir();
}
END_TEST

START_TEST(refuses_directory)
{
    make_tmpdir();
    const char *g = good();
    assert_refused(g, tmpdir, NMT_ERR_IO, tmpdir, "is a directory", NULL);
    assert_refused(tmpdir, g, NMT_ERR_IO, tmpdir, "is a directory", NULL);
    remove_tmpdir();
}
END_TEST

START_TEST(refuses_empty_corpus)
{
    make_tmpdir();
    char e1[300], e2[300];
    snprintf(e1, sizeof e1, "%s", write_text("e1.txt", ""));
    snprintf(e2, sizeof e2, "%s", write_gzip("e2.gz", ""));
    assert_refused(e1, e2, NMT_ERR_FORMAT, e1, e2, "empty corpus: no lines");
    /* lines, but every pair skipped: say why */
    char s[300], t[300];
    snprintf(s, sizeof s, "%s", write_text("s.txt", "a\n\n   \n"));
    snprintf(t, sizeof t, "%s", write_text("t.txt", "\nb\n\t\n"));
    assert_refused(s, t, NMT_ERR_FORMAT, s, "all 3 pairs were skipped", "3 with an empty side");
    remove_tmpdir();
}
END_TEST

START_TEST(refuses_different_line_counts)
{
    make_tmpdir();
    char three[300], four[300], msg[700];
    snprintf(three, sizeof three, "%s", write_text("three.txt", "a\nb\nc\n"));
    snprintf(four, sizeof four, "%s", write_gzip("four.gz", "a\nb\nc\nd")); /* no final newline */
    snprintf(msg, sizeof msg, "%s:4: %s ended after line 3", four, three);
    assert_refused(three, four, NMT_ERR_FORMAT, msg, "same number of lines", NULL);
    assert_refused(four, three, NMT_ERR_FORMAT, msg, NULL, NULL);
    remove_tmpdir();
}
END_TEST

/* A gzip file of 3000 distinct lines, as bytes. */
static unsigned char *gzip_bytes(size_t *n)
{
    char *text = malloc(100000);
    size_t used = 0;
    for (int i = 0; i < 3000; i++)
        used += (size_t)snprintf(text + used, 100000 - used, "zeile %d hat %d\n", i, i * 7919 % 10007);
    const char *p = write_gzip("whole.gz", text);
    free(text);
    unsigned char *z = malloc(100000);
    FILE *f = fopen(p, "rb");
    *n = fread(z, 1, 100000, f);
    fclose(f);
    return z;
}

/* A plain file longer than the gzip one, so that the gzip side always ends
 * (or fails) first. */
static const char *lines_many(void)
{
    char *text = malloc(100000);
    size_t used = 0;
    for (int i = 0; i < 6000; i++)
        used += (size_t)snprintf(text + used, 100000 - used, "line %d\n", i);
    const char *p = write_text("lines.txt", text);
    free(text);
    return p;
}

START_TEST(refuses_truncated_gzip)
{
    make_tmpdir();
    size_t n;
    unsigned char *z = gzip_bytes(&n);
    char cut[300], other[300];
    snprintf(cut, sizeof cut, "%s", write_file("cut.gz", z, n / 2));
    snprintf(other, sizeof other, "%s", lines_many());
    char where[320];
    snprintf(where, sizeof where, "%s:", cut);
    assert_refused(cut, other, NMT_ERR_FORMAT, where, "truncated gzip", NULL);
    assert_refused(other, cut, NMT_ERR_FORMAT, where, "truncated gzip", NULL);
    free(z);
    remove_tmpdir();
}
END_TEST

START_TEST(refuses_corrupt_gzip)
{
    make_tmpdir();
    size_t n;
    unsigned char *z = gzip_bytes(&n);
    for (size_t i = n / 2; i < n / 2 + 8; i++)
        z[i] ^= 0xa5;
    char bad[300], other[300];
    snprintf(bad, sizeof bad, "%s", write_file("bad.gz", z, n));
    snprintf(other, sizeof other, "%s", lines_many());
    char where[320];
    snprintf(where, sizeof where, "%s:", bad);
    assert_refused(other, bad, NMT_ERR_FORMAT, where, "corrupt gzip", NULL);
    free(z);
    remove_tmpdir();
}
END_TEST

START_TEST(refuses_invalid_utf8)
{
    make_tmpdir();
    const char *g = good();
    char bad[300], where[320];
    snprintf(bad, sizeof bad, "%s", write_text("latin1.txt", "eins\nzwei\nM\xe4nner\n"));
    snprintf(where, sizeof where, "%s:3: invalid UTF-8", bad);
    assert_refused(g, bad, NMT_ERR_FORMAT, where, NULL, NULL);
    assert_refused(bad, g, NMT_ERR_FORMAT, where, NULL, NULL);
    remove_tmpdir();
}
END_TEST

START_TEST(refuses_nul_byte)
{
    make_tmpdir();
    const char *g = good();
    char bad[300], where[320];
    snprintf(bad, sizeof bad, "%s", write_file("nul.txt", "eins\nzw\0ei\ndrei\n", 16));
    snprintf(where, sizeof where, "%s:2: NUL byte", bad);
    assert_refused(g, bad, NMT_ERR_FORMAT, where, NULL, NULL);
    remove_tmpdir();
}
END_TEST

/* The acceptance figure: Multi30k train, lowercased, min-count 2. Prints
 * the time (not asserted: the machine may be busy) and the sizes. */
START_TEST(reads_multi30k_train)
{
    char src[1024], tgt[1024];
    snprintf(src, sizeof src, "%s/multi30k/train.de.gz", NMT_CORPORA());
    snprintf(tgt, sizeof tgt, "%s/multi30k/train.en.gz", NMT_CORPORA());
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    nmt_corpus c;
    nmt_vocab *sv = NULL, *tv = NULL;
    nmt_corpus_opts o = {.lowercase = 1, .min_count = 2, .skip_empty = 1};
    ck_assert_msg(nmt_corpus_read(&c, src, tgt, &o, &sv, &tv) == 0, "%s", nmt_error_message());
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("multi30k train: %zu pairs read, tokenized and both vocabularies built in %.3f s; "
           "vocabularies (lowercase, min-count 2): de %d, en %d; tokens de %zu, en %zu\n",
           c.n, secs, nmt_vocab_size(sv), nmt_vocab_size(tv), c.src_off[c.n], c.tgt_off[c.n]);
    ck_assert_uint_eq(c.n, 29000);
    ck_assert_uint_eq(c.n_lines, 29000);

    /* Re-tokenize the first 500 target lines: each stored id must be the
     * token's id, or <unk> for a token seen once. */
    nmt_reader *r;
    ck_assert_int_eq(nmt_reader_open(&r, tgt), 0);
    nmt_tokens t = {0};
    const char *line;
    size_t len, unk = 0;
    for (size_t i = 0; i < 500; i++) {
        ck_assert_int_eq(nmt_reader_next(r, &line, &len), 1);
        ck_assert_int_eq(nmt_tokenize(&t, line, len, 1), 0);
        ck_assert_uint_eq(t.n, c.tgt_off[i + 1] - c.tgt_off[i]);
        for (size_t k = 0; k < t.n; k++) {
            int32_t id = c.tgt[c.tgt_off[i] + k];
            if (id == NMT_UNK)
                unk++;
            else
                ck_assert_str_eq(nmt_vocab_token(tv, id), t.tok[k]);
        }
    }
    ck_assert_uint_lt(unk, 100);
    nmt_tokens_free(&t);
    nmt_reader_close(r);
    /* Ids follow falling counts, ties in byte order, and every kept token
     * was seen at least twice. */
    for (int side = 0; side < 2; side++) {
        const nmt_vocab *v = side ? tv : sv;
        const int32_t *ids = side ? c.tgt : c.src;
        size_t n_ids = side ? c.tgt_off[c.n] : c.src_off[c.n];
        size_t *count = calloc((size_t)nmt_vocab_size(v), sizeof *count);
        for (size_t k = 0; k < n_ids; k++)
            count[ids[k]]++;
        ck_assert_uint_eq(count[NMT_PAD] + count[NMT_BOS] + count[NMT_EOS], 0);
        for (int id = NMT_N_SPECIAL; id < nmt_vocab_size(v); id++) {
            ck_assert_uint_ge(count[id], 2);
            if (id > NMT_N_SPECIAL) {
                ck_assert_uint_ge(count[id - 1], count[id]);
                if (count[id - 1] == count[id])
                    ck_assert_int_lt(strcmp(nmt_vocab_token(v, id - 1), nmt_vocab_token(v, id)), 0);
            }
        }
        free(count);
    }
    nmt_corpus_free(&c);
    nmt_vocab_free(sv);
    nmt_vocab_free(tv);
}
END_TEST

/* A file's print: its size and the hash of its first lines as read, so a
 * gzip file hashes as its text does but differs in size. */
START_TEST(prints_files)
{
    make_tmpdir();
    nmt_data_print a, gz, swapped, missing;
    ck_assert_int_eq(nmt_data_print_of(write_text("a", "x\ny\n"), &a), NMT_OK);
    ck_assert_int_eq(nmt_data_print_of(write_gzip("a.gz", "x\ny\n"), &gz), NMT_OK);
    ck_assert_int_eq(nmt_data_print_of(write_text("b", "y\nx\n"), &swapped), NMT_OK);
    ck_assert(a.known && gz.known && swapped.known);
    ck_assert_uint_eq(a.bytes, 4);
    ck_assert(a.hash == gz.hash);
    ck_assert_uint_ne(gz.bytes, 4);
    ck_assert_uint_eq(swapped.bytes, 4);
    ck_assert(swapped.hash != a.hash);
    ck_assert_int_eq(nmt_data_print_of(tmp_path("nope"), &missing), NMT_ERR_IO);
    ck_assert(!missing.known);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "nope"));
    remove_tmpdir();
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("corpus");
    TCase *tc = tcase_create("read");
    tcase_add_test(tc, reads_and_builds_vocabularies);
    tcase_add_test(tc, joint_vocabulary_counts_both_sides);
    tcase_add_test(tc, reads_multi30k_train);
    tcase_add_test(tc, prints_files);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    tc = tcase_create("refused");
    tcase_add_test(tc, refuses_missing_file);
    tcase_add_test(tc, refuses_directory);
    tcase_add_test(tc, refuses_empty_corpus);
    tcase_add_test(tc, refuses_different_line_counts);
    tcase_add_test(tc, refuses_truncated_gzip);
    tcase_add_test(tc, refuses_corrupt_gzip);
    tcase_add_test(tc, refuses_invalid_utf8);
    tcase_add_test(tc, refuses_nul_byte);
    suite_add_tcase(s, tc);
    return s;
}
