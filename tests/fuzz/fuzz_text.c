/* libFuzzer target: the corpus reader and the tokenizer, plain and gzip.
 *
 * The input is one or two files: split at the first "|||tgt|||" if there is
 * one (a source side and a target side), else used whole and also cut in
 * half for the corpus. Each file is read line by line with nmt_reader; every
 * line is tokenized as is and lowercased, and detokenized. Then the two
 * files are read as a parallel corpus, once counting vocabularies and once
 * with the vocabularies that made. Every input must end in lines or in an
 * error with a message, never in a crash, a leak or a sanitizer report; the
 * invariants the callers rely on are checked on the way (a broken one traps).
 * Seeds: tests/fuzz/text/. */
#define _GNU_SOURCE /* memmem */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_file.h"
#include "nmt/corpus.h"
#include "nmt/error.h"
#include "nmt/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) \
    do {            \
        if (!(cond)) \
            __builtin_trap(); \
    } while (0)

static const char split_mark[] = "|||tgt|||";

/* Decoded bytes looked at per file: a gzip bomb of a few kilobytes could
 * otherwise make one input take seconds. */
enum { MAX_TEXT = 4 << 20 };

static void check_tokens(const nmt_tokens *t, size_t line_len)
{
    size_t total = 0;
    for (size_t i = 0; i < t->n; i++) {
        CHECK(t->len[i] > 0 && strlen(t->tok[i]) == t->len[i]);
        /* no token holds ASCII whitespace: the corpus joins tokens by spaces */
        CHECK(!strpbrk(t->tok[i], " \t\n\r\v\f"));
        total += t->len[i];
    }
    /* lowercasing never lengthens a character (İ is 2 bytes, i is 1) */
    CHECK(total <= line_len);
}

static void tokenize_round_trip(nmt_tokens *t, const char *line, size_t len, int lowercase)
{
    if (nmt_tokenize(t, line, len, lowercase) != NMT_OK)
        return; /* out of memory: allowed */
    check_tokens(t, len);
    char *text = nmt_detokenize((const char *const *)t->tok, t->n);
    if (!text)
        return;
    /* the detokenized line is at most the tokens and one space between each */
    size_t text_len = strlen(text);
    CHECK(text_len <= len + t->n);
    if (nmt_tokenize(t, text, text_len, lowercase) == NMT_OK)
        check_tokens(t, text_len);
    free(text);
}

static void read_lines(const char *path)
{
    nmt_reader *r;
    if (nmt_reader_open(&r, path) != NMT_OK) {
        CHECK(nmt_error_message()[0]);
        return;
    }
    nmt_tokens t = {0};
    const char *line;
    size_t len, seen = 0;
    int rc;
    while (seen < MAX_TEXT && (rc = nmt_reader_next(r, &line, &len)) == 1) {
        /* the reader's promises: NUL-terminated, no NUL inside, no line end */
        CHECK(strlen(line) == len);
        CHECK(!memchr(line, '\n', len));
        CHECK(nmt_reader_lineno(r) > 0);
        tokenize_round_trip(&t, line, len, 0);
        tokenize_round_trip(&t, line, len, 1);
        seen += len + 1;
    }
    if (seen < MAX_TEXT && rc < 0) {
        CHECK(nmt_error_message()[0]);
        /* errors are sticky */
        CHECK(nmt_reader_next(r, &line, &len) == rc);
    }
    nmt_tokens_free(&t);
    nmt_reader_close(r);
}

static void check_corpus(const nmt_corpus *c, const nmt_vocab *sv, const nmt_vocab *tv)
{
    CHECK(c->n > 0 && c->n <= c->n_lines);
    CHECK(c->src_off[0] == 0 && c->tgt_off[0] == 0);
    for (size_t i = 0; i < c->n; i++) {
        CHECK(c->src_off[i] <= c->src_off[i + 1] && c->tgt_off[i] <= c->tgt_off[i + 1]);
        CHECK(c->line[i] >= 1 && c->line[i] <= c->n_lines);
        CHECK(i == 0 || c->line[i] > c->line[i - 1]);
    }
    for (size_t k = 0; k < c->src_off[c->n]; k++)
        CHECK(c->src[k] >= 0 && c->src[k] < nmt_vocab_size(sv) && c->src[k] != NMT_PAD);
    for (size_t k = 0; k < c->tgt_off[c->n]; k++)
        CHECK(c->tgt[k] >= 0 && c->tgt[k] < nmt_vocab_size(tv) && c->tgt[k] != NMT_PAD);
}

static void read_corpus(const char *src, const char *tgt, size_t size)
{
    /* options vary with the input's size, so every setting gets its turn */
    nmt_corpus_opts o = {
        .lowercase = (int)(size & 1),
        .max_len = (int)(size % 5),
        .skip_empty = (int)((size >> 1) & 1),
        .min_count = 1 + (int)(size % 3),
        .max_vocab = size % 4 ? 0 : 4 + (int)(size % 9),
    };
    nmt_corpus c;
    nmt_vocab *sv = NULL, *tv = NULL;
    if (nmt_corpus_read(&c, src, tgt, &o, &sv, &tv) != NMT_OK) {
        CHECK(nmt_error_message()[0] && !sv && !tv);
        return;
    }
    CHECK(sv && tv);
    CHECK(o.max_vocab == 0 || (nmt_vocab_size(sv) <= o.max_vocab && nmt_vocab_size(tv) <= o.max_vocab));
    check_corpus(&c, sv, tv);
    nmt_corpus_free(&c);

    /* again with the vocabularies just made, as validation data is read */
    o.lowercase = !o.lowercase;
    o.skip_empty = 0;
    nmt_vocab *sv2 = sv, *tv2 = tv;
    if (nmt_corpus_read(&c, src, tgt, &o, &sv2, &tv2) == NMT_OK) {
        CHECK(sv2 == sv && tv2 == tv);
        check_corpus(&c, sv, tv);
        nmt_corpus_free(&c);
    }
    nmt_vocab_free(sv);
    nmt_vocab_free(tv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *mark = memmem(data, size, split_mark, sizeof split_mark - 1);
    const char *src, *tgt;
    if (mark) {
        size_t a = (size_t)(mark - data), skip = a + sizeof split_mark - 1;
        src = fuzz_file(0, data, a);
        tgt = fuzz_file(1, data + skip, size - skip);
        read_lines(src);
        read_lines(tgt);
    } else {
        read_lines(fuzz_file(0, data, size));
        src = fuzz_file(0, data, size / 2);
        tgt = fuzz_file(1, data + size / 2, size - size / 2);
    }
    read_corpus(src, tgt, size);
    return 0;
}
