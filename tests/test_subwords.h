/* What the subwords suites share (tests/test_subwords.c,
 * tests/test_subwords_damaged.c): a few hundred Multi30k lines to learn
 * from, a learned model, models made by Debian's spm_train, and a small
 * model that reads subwords. */
#ifndef NMT_TEST_SUBWORDS_H
#define NMT_TEST_SUBWORDS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/corpus.h"
#include "nmt/error.h"
#include "nmt/model.h"
#include "nmt/subwords.h"
#include "nmt/text.h"
#include "nmt/units.h"
#include "test_common.h"
#include "test_files.h"

enum { LEARN_LINES = 300, PIECES = 400 };

/* The first LEARN_LINES lines of Multi30k train, German then English. */
typedef struct lines {
    char *line[2 * LEARN_LINES];
    int n, next;
} lines;

static inline void read_some(lines *l, const char *name, int n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/multi30k/%s", NMT_CORPORA(), name);
    nmt_reader *r;
    ck_assert_msg(nmt_reader_open(&r, path) == 0, "%s", nmt_error_message());
    const char *s;
    size_t len;
    for (int k = 0; k < n; k++) {
        ck_assert_int_eq(nmt_reader_next(r, &s, &len), 1);
        l->line[l->n++] = strdup(s);
    }
    nmt_reader_close(r);
}

static inline void read_lines(lines *l)
{
    memset(l, 0, sizeof *l);
    read_some(l, "train.de.gz", LEARN_LINES);
    read_some(l, "train.en.gz", LEARN_LINES);
}

static inline void free_lines(lines *l)
{
    for (int k = 0; k < l->n; k++)
        free(l->line[k]);
}

static inline int next_line(void *ctx, const char **line, size_t *len)
{
    lines *l = ctx;
    if (l->next == l->n)
        return 0;
    *line = l->line[l->next++];
    *len = strlen(*line);
    return 1;
}

static inline nmt_subwords *learn(int pieces)
{
    lines l;
    read_lines(&l);
    nmt_subwords *sw = NULL;
    int rc = nmt_subwords_learn(&sw, pieces, next_line, &l);
    ck_assert_msg(rc == NMT_OK, "%s", nmt_error_message());
    free_lines(&l);
    return sw;
}

/* decode(encode(text)) through the piece strings. */
static inline char *round_trip(const nmt_subwords *sw, const char *text)
{
    nmt_tokens t = {0};
    ck_assert_int_eq(nmt_subwords_encode(sw, text, strlen(text), &t), NMT_OK);
    char *back = nmt_subwords_decode(sw, (const char *const *)t.tok, t.n);
    ck_assert_ptr_nonnull(back);
    nmt_tokens_free(&t);
    return back;
}

/* A model spm_train (Debian's sentencepiece tools) makes from the learning
 * lines with these options (in the temp dir, which the caller made); its
 * bytes. */
static inline unsigned char *spm_train(const char *options, size_t *n)
{
    lines l;
    read_lines(&l);
    FILE *f = fopen(tmp_path("corpus.txt"), "w");
    ck_assert_ptr_nonnull(f);
    for (int k = 0; k < l.n; k++)
        fprintf(f, "%s\n", l.line[k]);
    fclose(f);
    free_lines(&l);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "spm_train --input=%s/corpus.txt --model_prefix=%s/spm "
             "--vocab_size=300 --minloglevel=2 %s >/dev/null 2>&1", tmpdir, tmpdir, options);
    ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
    return read_bytes(tmp_path("spm.model"), n);
}

/* A small model that reads subwords (weights zero: only text matters here). */
static inline nmt_model *subword_model(nmt_subwords *sw, int lowercase)
{
    nmt_vocab *sv, *tv;
    ck_assert_int_eq(nmt_vocab_of_pieces(sw, &sv), NMT_OK);
    ck_assert_int_eq(nmt_vocab_of_pieces(sw, &tv), NMT_OK);
    nmt_config cfg = {.rnn.cell = NMT_CELL_GRU, .rnn.attention = NMT_ATT_BAHDANAU, .rnn.bidirectional = 1,
                      .rnn.emb = 4, .rnn.hidden = 3, .rnn.att_dim = 2, .rnn.out_dim = 2, .lowercase = lowercase};
    nmt_model *m;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, sv, tv), NMT_OK);
    ck_assert_int_eq(m->cfg.src_vocab, nmt_subwords_size(sw));
    m->subwords = sw;
    return m;
}

#endif
