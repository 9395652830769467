/* The streamed corpus (nmt/stream.h): blocks that hold the same pairs, in
 * the same order and with the same ids, as nmt_corpus_read; positions that
 * come back to the same block; the counting pass's vocabularies equal to
 * nmt_corpus_read's; the refusals of nmt_corpus_read. */
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "nmt/corpus.h"
#include "nmt/error.h"
#include "nmt/stream.h"
#include "nmt/subwords.h"
#include "test_common.h"
#include "test_files.h"

static const char *write_gzip(const char *name, const char *text)
{
    const char *p = tmp_path(name);
    gzFile g = gzopen(p, "wb");
    ck_assert_ptr_nonnull(g);
    ck_assert_int_eq(gzwrite(g, text, (unsigned)strlen(text)), (int)strlen(text));
    ck_assert_int_eq(gzclose(g), Z_OK);
    return p;
}

/* n pairs; pair i has 1 + i % 5 source tokens and 1 + i % 3 target
 * tokens, but every 7th has an empty target and every 11th 9 source
 * tokens (skipped by max_len 8). */
static void make_corpus(char **src, char **tgt, int n)
{
    static char x[32768], y[32768];
    ck_assert_int_le(n, 400);
    *src = x;
    *tgt = y;
    size_t a = 0, b = 0;
    for (int i = 0; i < n; i++) {
        int ns = i % 11 == 10 ? 9 : 1 + i % 5, nt = i % 7 == 6 ? 0 : 1 + i % 3;
        for (int k = 0; k < ns; k++)
            a += (size_t)snprintf(x + a, sizeof x - a, "%sw%d", k ? " " : "", (i * 3 + k) % 13);
        for (int k = 0; k < nt; k++)
            b += (size_t)snprintf(y + b, sizeof y - b, "%sv%d", k ? " " : "", (i + k) % 17);
        x[a++] = '\n';
        y[b++] = '\n';
    }
    x[a] = y[b] = '\0';
}

static int same_pair(const nmt_corpus *x, size_t i, const nmt_corpus *y, size_t j)
{
    size_t ns = x->src_off[i + 1] - x->src_off[i], nt = x->tgt_off[i + 1] - x->tgt_off[i];
    return ns == y->src_off[j + 1] - y->src_off[j] && nt == y->tgt_off[j + 1] - y->tgt_off[j] &&
           !memcmp(x->src + x->src_off[i], y->src + y->src_off[j], ns * sizeof(int32_t)) &&
           !memcmp(x->tgt + x->tgt_off[i], y->tgt + y->tgt_off[j], nt * sizeof(int32_t)) &&
           x->line[i] == y->line[j];
}

START_TEST(blocks_are_the_corpus_in_order)
{
    make_tmpdir();
    char *s, *t;
    make_corpus(&s, &t, 200);
    const char *sp = write_gzip("s.gz", s), *tp = write_gzip("t.gz", t);
    nmt_corpus_opts o = {.max_len = 8, .skip_empty = 1, .min_count = 1};
    nmt_corpus whole;
    nmt_vocab *sv = NULL, *tv = NULL;
    ck_assert_int_eq(nmt_corpus_read(&whole, sp, tp, &o, &sv, &tv), NMT_OK);
    /* block sizes that divide the kept pairs, that do not, 1, and more than all */
    const size_t sizes[] = {1, 7, 10, whole.n, whole.n + 5};
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        nmt_stream *st;
        ck_assert_int_eq(nmt_stream_open(&st, sp, tp, &o, sv, tv, sizes[z]), NMT_OK);
        size_t seen = 0;
        int last = 0, blocks = 0;
        while (!last) {
            const nmt_corpus *b;
            ck_assert_int_eq(nmt_stream_next(st, &b, &last), NMT_OK);
            ck_assert_uint_ge(b->n, 1);
            ck_assert_uint_le(b->n, sizes[z]);
            if (!last)
                ck_assert_uint_eq(b->n, sizes[z]);
            for (size_t i = 0; i < b->n; i++)
                ck_assert(same_pair(b, i, &whole, seen + i));
            seen += b->n;
            blocks++;
        }
        ck_assert_uint_eq(seen, whole.n);
        ck_assert_int_eq(blocks, (int)((whole.n + sizes[z] - 1) / sizes[z]));
        /* at the end: an empty last block */
        const nmt_corpus *b;
        ck_assert_int_eq(nmt_stream_next(st, &b, &last), NMT_OK);
        ck_assert_uint_eq(b->n, 0);
        ck_assert_int_eq(last, 1);
        nmt_stream_close(st);
    }
    nmt_corpus_free(&whole);
    nmt_vocab_free(sv);
    nmt_vocab_free(tv);
    remove_tmpdir();
}
END_TEST

START_TEST(seek_comes_back_to_a_block)
{
    make_tmpdir();
    char *s, *t;
    make_corpus(&s, &t, 150);
    const char *sp = write_gzip("s.gz", s), *tp = write_gzip("t.gz", t);
    nmt_corpus_opts o = {.max_len = 8, .skip_empty = 1, .min_count = 1};
    nmt_corpus whole;
    nmt_vocab *sv = NULL, *tv = NULL;
    ck_assert_int_eq(nmt_corpus_read(&whole, sp, tp, &o, &sv, &tv), NMT_OK);
    nmt_stream *a, *b;
    ck_assert_int_eq(nmt_stream_open(&a, sp, tp, &o, sv, tv, 9), NMT_OK);
    ck_assert_int_eq(nmt_stream_open(&b, sp, tp, &o, sv, tv, 9), NMT_OK);
    ck_assert_uint_eq(nmt_stream_tell(a), 0);
    int last = 0, k = 0;
    size_t first = 0;
    while (!last) {
        size_t pos = nmt_stream_tell(a);
        const nmt_corpus *x, *y;
        ck_assert_int_eq(nmt_stream_next(a, &x, &last), NMT_OK);
        /* the position is the line before the block's first pair */
        ck_assert_uint_eq(pos + 1, whole.line[first]);
        /* another stream put there reads the same block */
        ck_assert_int_eq(nmt_stream_seek(b, pos), NMT_OK);
        int last_b;
        ck_assert_int_eq(nmt_stream_next(b, &y, &last_b), NMT_OK);
        ck_assert_int_eq(last_b, last);
        ck_assert_uint_eq(x->n, y->n);
        for (size_t i = 0; i < x->n; i++)
            ck_assert(same_pair(x, i, y, i) && same_pair(x, i, &whole, first + i));
        first += x->n;
        k++;
    }
    /* a new epoch: back to the start */
    const nmt_corpus *x;
    ck_assert_int_eq(nmt_stream_seek(a, 0), NMT_OK);
    ck_assert_int_eq(nmt_stream_next(a, &x, &last), NMT_OK);
    ck_assert(same_pair(x, 0, &whole, 0));
    /* past the files' end: refused, naming the files */
    ck_assert_int_eq(nmt_stream_seek(b, 151), NMT_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "changed"));
    nmt_stream_close(a);
    nmt_stream_close(b);
    nmt_corpus_free(&whole);
    nmt_vocab_free(sv);
    nmt_vocab_free(tv);
    remove_tmpdir();
}
END_TEST

START_TEST(counting_pass_builds_the_same_vocabularies)
{
    make_tmpdir();
    char *s, *t;
    make_corpus(&s, &t, 300);
    const char *sp = write_gzip("s.gz", s), *tp = write_gzip("t.gz", t);
    const int min_counts[] = {1, 3, 30};
    for (int m = 0; m < 6; m++) { /* 3..5: a joint vocabulary */
        nmt_corpus_opts o = {.max_len = 8, .skip_empty = 1, .min_count = min_counts[m % 3],
                             .max_vocab = m % 3 == 1 ? 10 : 0, .joint_vocab = m >= 3};
        nmt_corpus whole;
        nmt_vocab *sv = NULL, *tv = NULL, *cs, *ct;
        ck_assert_int_eq(nmt_corpus_read(&whole, sp, tp, &o, &sv, &tv), NMT_OK);
        nmt_stream_counts k;
        ck_assert_int_eq(nmt_stream_count(sp, tp, &o, &cs, &ct, &k), NMT_OK);
        ck_assert_uint_eq(k.pairs, whole.n);
        ck_assert_uint_eq(k.lines, whole.n_lines);
        ck_assert_uint_eq(k.skipped_long, whole.skipped_long);
        ck_assert_uint_eq(k.skipped_empty, whole.skipped_empty);
        ck_assert_uint_eq(k.types[0], 13);
        ck_assert_uint_eq(k.types[1], 17);
        const nmt_vocab *pair[2][2] = {{sv, cs}, {tv, ct}};
        if (m >= 3) /* one list, of more tokens than either side has */
            ck_assert_int_eq(nmt_vocab_size(cs), nmt_vocab_size(ct));
        if (m == 3)
            ck_assert_int_gt(nmt_vocab_size(cs), 4 + 17);
        for (int side = 0; side < 2; side++) {
            ck_assert_int_eq(nmt_vocab_size(pair[side][0]), nmt_vocab_size(pair[side][1]));
            for (int id = 0; id < nmt_vocab_size(pair[side][0]); id++)
                ck_assert_str_eq(nmt_vocab_token(pair[side][0], id),
                                 nmt_vocab_token(pair[side][1], id));
        }
        nmt_vocab_free(sv);
        nmt_vocab_free(tv);
        nmt_vocab_free(cs);
        nmt_vocab_free(ct);
        nmt_corpus_free(&whole);
    }
    remove_tmpdir();
}
END_TEST

START_TEST(refuses_what_the_reader_refuses)
{
    make_tmpdir();
    const char *sp = write_gzip("s.gz", "a b\nc\nd\n"), *tp = write_gzip("t.gz", "x\ny\n");
    nmt_corpus_opts o = {.skip_empty = 1, .min_count = 1};
    nmt_vocab *sv, *tv;
    nmt_stream_counts k;
    ck_assert_int_eq(nmt_stream_count(sp, tp, &o, &sv, &tv, &k), NMT_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "same number of lines"));
    ck_assert_ptr_null(sv);
    const char *tp3 = write_gzip("t3.gz", "x\ny\nz\n");
    ck_assert_int_eq(nmt_stream_count(sp, tp3, &o, &sv, &tv, &k), NMT_OK);
    nmt_stream *st;
    ck_assert_int_eq(nmt_stream_open(&st, sp, tp, &o, sv, tv, 0), NMT_ERR_ARG);
    ck_assert_int_eq(nmt_stream_open(&st, sp, tp, &o, NULL, NULL, 2), NMT_ERR_ARG);
    ck_assert_int_eq(nmt_stream_open(&st, tmp_path("nope"), tp, &o, sv, tv, 2), NMT_ERR_IO);
    /* differing line counts: found when the stream gets there */
    ck_assert_int_eq(nmt_stream_open(&st, sp, tp, &o, sv, tv, 1), NMT_OK);
    const nmt_corpus *b;
    int last;
    ck_assert_int_eq(nmt_stream_next(st, &b, &last), NMT_OK);
    ck_assert_int_eq(nmt_stream_next(st, &b, &last), NMT_ERR_FORMAT);
    nmt_stream_close(st);
    /* invalid UTF-8, named by file and line */
    const char *bad = write_gzip("bad.gz", "ok\n\xff\xfe\n");
    ck_assert_int_eq(nmt_stream_open(&st, bad, write_gzip("t2.gz", "x\ny\n"), &o, sv, tv, 8),
                     NMT_OK);
    ck_assert_int_lt(nmt_stream_next(st, &b, &last), 0);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "bad.gz:2"));
    nmt_stream_close(st);
    nmt_vocab_free(sv);
    nmt_vocab_free(tv);
    remove_tmpdir();
}
END_TEST

/* The model's bytes equal to those of another model. */
static int same_model(const nmt_subwords *a, const nmt_subwords *b)
{
    size_t na, nb;
    const unsigned char *x = nmt_subwords_bytes(a, &na), *y = nmt_subwords_bytes(b, &nb);
    return na == nb && !memcmp(x, y, na);
}

START_TEST(subwords_from_a_sample)
{
    make_tmpdir();
    char *s, *t;
    make_corpus(&s, &t, 300);
    const char *sp = write_gzip("s.gz", s), *tp = write_gzip("t.gz", t);
    nmt_subwords *whole, *all, *a, *b;
    ck_assert_int_eq(nmt_corpus_learn_subwords(&whole, sp, tp, 24, 0), NMT_OK);
    /* a sample as large as the corpus is the corpus, in order */
    ck_assert_int_eq(nmt_corpus_learn_subwords_sample(&all, sp, tp, 24, 0, 300), NMT_OK);
    ck_assert(same_model(whole, all));
    /* a reservoir of 40 pairs: the same draw twice */
    ck_assert_int_eq(nmt_corpus_learn_subwords_sample(&a, sp, tp, 24, 0, 40), NMT_OK);
    ck_assert_int_eq(nmt_corpus_learn_subwords_sample(&b, sp, tp, 24, 0, 40), NMT_OK);
    ck_assert(same_model(a, b));
    nmt_subwords_free(b);
    ck_assert_int_eq(nmt_corpus_learn_subwords_sample(&b, sp, tp, 24, 0, 0), NMT_ERR_ARG);
    nmt_subwords_free(whole);
    nmt_subwords_free(all);
    nmt_subwords_free(a);
    remove_tmpdir();
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("stream");
    TCase *tc = tcase_create("stream");
    tcase_add_test(tc, blocks_are_the_corpus_in_order);
    tcase_add_test(tc, seek_comes_back_to_a_block);
    tcase_add_test(tc, counting_pass_builds_the_same_vocabularies);
    tcase_add_test(tc, refuses_what_the_reader_refuses);
    tcase_add_test(tc, subwords_from_a_sample);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
