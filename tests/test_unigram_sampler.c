/* nmt's own subword sampler (src/data/unigram_sampler.c) against
 * SentencePiece's SampleEncode, which it must equal draw for draw: the same
 * ids (and the same spans) line by line for the same seed, with both
 * drawing from one generator; on awkward lines of a small model, and on the
 * whole Multi30k training corpus (both sides) with nmt's own model of 8000
 * pieces at the default alpha and others. Models the sampler does not
 * reproduce are left to SentencePiece. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/unigram_sampler.h"
#include "nmt/corpus.h"
#include "nmt/error.h"
#include "nmt/subwords.h"
#include "nmt/text.h"
#include "test_common.h"
#include "test_files.h"
#include "test_subwords.h"

/* Every line's sampled ids and spans, one after the other. */
typedef struct draws {
    int32_t *v;
    size_t n, cap;
} draws;

static void push(draws *d, int32_t x)
{
    if (d->n == d->cap) {
        d->cap = d->cap ? 2 * d->cap : 1 << 16;
        d->v = realloc(d->v, d->cap * sizeof *d->v);
        ck_assert_ptr_nonnull(d->v);
    }
    d->v[d->n++] = x;
}

typedef struct job {
    nmt_subwords *sw;
    char **line;
    size_t n_lines;
    float alpha;
    int spans;
    /* who samples line k: 0 nmt, 1 SentencePiece, 2 alternating */
    int who;
    draws out;
} job;

static int sample_lines(void *ctx)
{
    job *j = ctx;
    nmt_ids ids = {0}, begin = {0};
    int rc = NMT_OK;
    for (size_t k = 0; k < j->n_lines && !rc; k++) {
        nmt_subwords_use_own_sampler(j->sw, j->who == 2 ? k % 2 == 0 : j->who == 0);
        const char *s = j->line[k];
        size_t len = strlen(s);
        if (s == j->line[k] && !strcmp(s, "NUL")) /* a line holding a NUL byte */
            s = "a\0b c", len = 5;
        rc = j->spans ? nmt_subwords_encode_spans(j->sw, s, len, j->alpha, &ids, &begin)
                      : nmt_subwords_encode_ids(j->sw, s, len, j->alpha, &ids);
        push(&j->out, -1 - (int32_t)ids.n); /* the line's length, marked */
        for (size_t i = 0; i < ids.n; i++) {
            push(&j->out, ids.id[i]);
            if (j->spans)
                push(&j->out, begin.id[i]);
        }
    }
    nmt_subwords_use_own_sampler(j->sw, 1);
    nmt_ids_free(&ids);
    nmt_ids_free(&begin);
    return rc;
}

/* The first line at which two runs differ, or -1. */
static long first_difference(const draws *a, const draws *b)
{
    long line = -1;
    for (size_t i = 0; i < a->n && i < b->n; i++) {
        line += a->v[i] < 0;
        if (a->v[i] != b->v[i])
            return line;
    }
    return a->n == b->n ? -1 : line + 1;
}

/* nmt's draws and SentencePiece's of the lines, seeded alike, compared
 * (and with `turns` theirs taking turns line by line); the number of pieces
 * drawn. */
static size_t compare_turns(nmt_subwords *sw, char **line, size_t n, float alpha, uint32_t seed,
                            int spans, int turns)
{
    job own = {sw, line, n, alpha, spans, 0, {0}}, spm = own, mixed = own;
    spm.who = 1;
    mixed.who = 2;
    ck_assert_msg(nmt_subwords_run_seeded(seed, sample_lines, &own) == NMT_OK, "%s",
                  nmt_error_message());
    ck_assert_msg(nmt_subwords_run_seeded(seed, sample_lines, &spm) == NMT_OK, "%s",
                  nmt_error_message());
    ck_assert_msg(!turns || nmt_subwords_run_seeded(seed, sample_lines, &mixed) == NMT_OK, "%s",
                  nmt_error_message());
    long d = first_difference(&own.out, &spm.out);
    ck_assert_msg(d < 0, "seed %u alpha %g%s: line %ld (\"%.60s\") differs", seed, (double)alpha,
                  spans ? " (spans)" : "", d, line[d]);
    /* one generator: taking turns draws what either alone draws */
    d = turns ? first_difference(&mixed.out, &spm.out) : -1;
    ck_assert_msg(d < 0, "seed %u alpha %g: taking turns, line %ld differs", seed, (double)alpha,
                  d);
    size_t pieces = own.out.n - n;
    free(own.out.v);
    free(spm.out.v);
    free(mixed.out.v);
    return spans ? pieces / 2 : pieces;
}

static size_t compare(nmt_subwords *sw, char **line, size_t n, float alpha, uint32_t seed,
                      int spans)
{
    return compare_turns(sw, line, n, alpha, seed, spans, 1);
}

static const float alphas[] = {0.5f, 0.1f, 1.0f, 0.01f, 5.0f};
static const uint32_t seeds[] = {1, 2, 20261202, UINT32_MAX};

/* ---- awkward lines, a small model ---- */

START_TEST(awkward_lines_match)
{
    nmt_subwords *sw = learn(PIECES);
    ck_assert_int_eq(nmt_subwords_own_sampler(sw), 1);
    static char long_line[40000];
    size_t at = 0;
    while (at + 40 < sizeof long_line)
        at += (size_t)snprintf(long_line + at, sizeof long_line - at, "Ein Mann  mit %zu Hunden ",
                               at);
    char *line[] = {
        "", " ", "   ", "a", "Ein Mann", "  Ein   Mann  läuft ", "trailing   ", "\tTab\t und ",
        "日本語のテキスト ☃ ☃☃", "x\xff\xfey \xc3", "\xed\xa0\x80 surrogate \xf4\x90\x80\x80",
        "\xe2\x96\x81 literal \xe2\x96\x81\xe2\x96\x81", "\xe2\x96\x81", "  \xe2\x96\x81  ",
        "Q Q Q Z X J", "Zwei Männer (\"?!\") – 42 × 7 ½ €", "\xef\xbf\xbd", "NUL", long_line,
    };
    size_t n = sizeof line / sizeof *line;
    for (size_t s = 0; s < sizeof seeds / sizeof *seeds; s++)
        for (size_t a = 0; a < sizeof alphas / sizeof *alphas; a++)
            for (int spans = 0; spans < 2; spans++)
                compare(sw, line, n, alphas[a], seeds[s], spans);
    nmt_subwords_free(sw);
}
END_TEST

/* ---- SentencePiece's own models ---- */

START_TEST(other_models_left_to_sentencepiece)
{
    make_tmpdir();
    struct {
        const char *options;
        int own;
    } cases[] = {
        /* spm_train's default normalization is nmt_nfkc: a table */
        {"--model_type=unigram", 0},
        {"--model_type=unigram --normalization_rule_name=identity --byte_fallback --vocab_size=600", 0},
        {"--model_type=unigram --normalization_rule_name=identity --user_defined_symbols=Mann", 0},
        {"--model_type=bpe --normalization_rule_name=identity", 0},
        {"--model_type=unigram --normalization_rule_name=identity --remove_extra_whitespaces=false "
         "--add_dummy_prefix=false", 1},
        {"--model_type=unigram --normalization_rule_name=identity --control_symbols='<x>,<y>'", 1},
    };
    lines l;
    read_lines(&l);
    char *extra[] = {"  two  spaces  ", "<x> Mann<y>", "x\xff"};
    char *line[2 * LEARN_LINES + 3];
    memcpy(line, l.line, (size_t)l.n * sizeof *line);
    memcpy(line + l.n, extra, sizeof extra);
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char opts[512];
        snprintf(opts, sizeof opts, "--pad_id=0 --unk_id=1 --bos_id=2 --eos_id=3 %s",
                 cases[c].options);
        size_t nb;
        unsigned char *b = spm_train(opts, &nb);
        nmt_subwords *sw;
        ck_assert_msg(nmt_subwords_load(&sw, b, nb, "spm") == NMT_OK, "%s", nmt_error_message());
        ck_assert_msg(nmt_subwords_own_sampler(sw) == cases[c].own, "%s", cases[c].options);
        if (!strcmp(nmt_subwords_type(sw), "unigram"))
            compare(sw, line, (size_t)l.n + 3, 0.3f, 5, c % 2);
        nmt_subwords_free(sw);
        free(b);
    }
    free_lines(&l);
    remove_tmpdir();
}
END_TEST

/* ---- the whole of Multi30k, nmt's own model ---- */

static char **read_side(const char *name, size_t *n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/multi30k/%s", NMT_CORPORA(), name);
    nmt_reader *r;
    ck_assert_msg(nmt_reader_open(&r, path) == 0, "%s", nmt_error_message());
    size_t cap = 1 << 15;
    char **line = malloc(cap * sizeof *line);
    const char *s;
    size_t len;
    *n = 0;
    while (nmt_reader_next(r, &s, &len) == 1) {
        if (*n == cap)
            line = realloc(line, (cap *= 2) * sizeof *line);
        line[(*n)++] = strndup(s, len);
    }
    nmt_reader_close(r);
    return line;
}

START_TEST(multi30k_matches)
{
    char src[1024], tgt[1024];
    snprintf(src, sizeof src, "%s/multi30k/train.de.gz", NMT_CORPORA());
    snprintf(tgt, sizeof tgt, "%s/multi30k/train.en.gz", NMT_CORPORA());
    nmt_subwords *sw;
    ck_assert_msg(nmt_corpus_learn_subwords(&sw, src, tgt, 8000, 0) == NMT_OK, "%s",
                  nmt_error_message());
    ck_assert_int_eq(nmt_subwords_own_sampler(sw), 1);
    size_t nd, ne;
    char **de = read_side("train.de.gz", &nd), **en = read_side("train.en.gz", &ne);
    /* the corpus reader's order: a pair's source line, then its target */
    char **both = malloc((nd + ne) * sizeof *both);
    ck_assert_uint_eq(nd, ne);
    for (size_t k = 0; k < nd; k++) {
        both[2 * k] = de[k];
        both[2 * k + 1] = en[k];
    }
    /* a seed for each alpha (the default first, taking turns): each pass
     * draws some 900 k pieces, and the suite's time is short */
    size_t pieces = 0, lines_compared = 0;
    for (size_t a = 0; a < 3; a++) {
        pieces += compare_turns(sw, both, nd + ne, alphas[a], seeds[a], 0, a == 0);
        lines_compared += nd + ne;
    }
    pieces += compare_turns(sw, both, nd + ne, 0.5f, 3, 1, 0); /* spans */
    lines_compared += nd + ne;
    fprintf(stderr, "multi30k: %zu lines compared, %zu pieces, all equal\n", lines_compared,
            pieces);
    for (size_t k = 0; k < nd + ne; k++)
        free(both[k]);
    free(both);
    free(de);
    free(en);
    nmt_subwords_free(sw);
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("unigram-sampler");
    TCase *tc = tcase_create("sampler");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, awkward_lines_match);
    tcase_add_test(tc, other_models_left_to_sentencepiece);
    tcase_add_test(tc, multi30k_matches);
    suite_add_tcase(s, tc);
    return s;
}
