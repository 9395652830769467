/* The SentencePiece shim (src/data/subwords.cc) and what is built on it: learning
 * a model from a few hundred Multi30k lines, encoding and decoding raw text,
 * the special ids, determinism, sampling, the corpus read as pieces, the
 * units of a model, and the model file's "subwords" tensor, damaged in many
 * ways (the loader's regression test, without libFuzzer). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "nmt/corpus.h"
#include "nmt/error.h"
#include "nmt/modelfile.h"
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

static void read_some(lines *l, const char *name, int n)
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

static void read_lines(lines *l)
{
    memset(l, 0, sizeof *l);
    read_some(l, "train.de.gz", LEARN_LINES);
    read_some(l, "train.en.gz", LEARN_LINES);
}

static void free_lines(lines *l)
{
    for (int k = 0; k < l->n; k++)
        free(l->line[k]);
}

static int next_line(void *ctx, const char **line, size_t *len)
{
    lines *l = ctx;
    if (l->next == l->n)
        return 0;
    *line = l->line[l->next++];
    *len = strlen(*line);
    return 1;
}

static nmt_subwords *learn(int pieces)
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
static char *round_trip(const nmt_subwords *sw, const char *text)
{
    nmt_tokens t = {0};
    ck_assert_int_eq(nmt_subwords_encode(sw, text, strlen(text), &t), NMT_OK);
    char *back = nmt_subwords_decode(sw, (const char *const *)t.tok, t.n);
    ck_assert_ptr_nonnull(back);
    nmt_tokens_free(&t);
    return back;
}

START_TEST(learns_pieces_with_nmt_ids)
{
    nmt_subwords *sw = learn(PIECES);
    ck_assert_int_eq(nmt_subwords_size(sw), PIECES);
    ck_assert_str_eq(nmt_subwords_piece(sw, NMT_PAD), "<pad>");
    ck_assert_str_eq(nmt_subwords_piece(sw, NMT_UNK), "<unk>");
    ck_assert_str_eq(nmt_subwords_piece(sw, NMT_BOS), "<s>");
    ck_assert_str_eq(nmt_subwords_piece(sw, NMT_EOS), "</s>");
    ck_assert_ptr_null(nmt_subwords_piece(sw, PIECES));
    ck_assert_ptr_null(nmt_subwords_piece(sw, -1));
    ck_assert_str_eq(nmt_subwords_type(sw), "unigram");
    ck_assert_str_eq(nmt_subwords_normalization(sw), "identity");
    ck_assert_int_eq(nmt_subwords_byte_fallback(sw), 0);
    /* a word start is marked, and the marked pieces are words */
    int starts = 0;
    for (int id = NMT_N_SPECIAL; id < PIECES; id++)
        starts += nmt_piece_starts_word(nmt_subwords_piece(sw, id));
    ck_assert_int_gt(starts, 10);
    ck_assert_int_lt(starts, PIECES - NMT_N_SPECIAL);
    nmt_subwords_free(sw);
}
END_TEST

START_TEST(learning_is_deterministic)
{
    nmt_subwords *a = learn(PIECES), *b = learn(PIECES), *c = learn(PIECES + 50);
    size_t na, nb, nc;
    const unsigned char *ba = nmt_subwords_bytes(a, &na), *bb = nmt_subwords_bytes(b, &nb);
    const unsigned char *bc = nmt_subwords_bytes(c, &nc);
    ck_assert_uint_eq(na, nb);
    ck_assert_int_eq(memcmp(ba, bb, na), 0);
    ck_assert(nc != na || memcmp(ba, bc, na) != 0);
    nmt_subwords_free(a);
    nmt_subwords_free(b);
    nmt_subwords_free(c);
}
END_TEST

START_TEST(too_many_pieces_refused)
{
    lines l;
    read_lines(&l);
    nmt_subwords *sw = NULL;
    ck_assert_int_eq(nmt_subwords_learn(&sw, 100000, next_line, &l), NMT_ERR_ARG);
    ck_assert_ptr_null(sw);
    /* SentencePiece's reason names the largest size it can make */
    ck_assert_msg(strstr(nmt_error_message(), "cannot learn 100000 pieces") &&
                  strstr(nmt_error_message(), "Vocabulary size"), "%s", nmt_error_message());
    l.next = 0;
    ck_assert_int_eq(nmt_subwords_learn(&sw, 4, next_line, &l), NMT_ERR_ARG);
    free_lines(&l);
}
END_TEST

/* A line source that fails: the learner returns its error unchanged. */
static int failing_line(void *ctx, const char **line, size_t *len)
{
    int *calls = ctx;
    if ((*calls)++ < 3) {
        *line = "ein Mann";
        *len = 8;
        return 1;
    }
    return nmt_set_error(NMT_ERR_FORMAT, "corpus.de:4: invalid UTF-8");
}

START_TEST(line_source_errors_pass_through)
{
    int calls = 0;
    nmt_subwords *sw = NULL;
    ck_assert_int_eq(nmt_subwords_learn(&sw, 50, failing_line, &calls), NMT_ERR_FORMAT);
    ck_assert_str_eq(nmt_error_message(), "corpus.de:4: invalid UTF-8");
    ck_assert_ptr_null(sw);
}
END_TEST

START_TEST(raw_text_round_trips)
{
    nmt_subwords *sw = learn(PIECES);
    /* punctuation, accents, quotes, digits, an unknown script, symbols */
    static const char *const texts[] = {
        "Ein Mann mit einem orangefarbenen Hut, der etwas anstarrt.",
        "Zwei Männer – mit „Hüten“ – spielen Fußball (3:1)!",
        "Ärger über Öl? Ja… 100 % «sicher»; naïve café.",
        "A dog's ball isn't red: it's 2.5 m away.",
        "猫と犬 — ok",
        "x",
    };
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
        char *back = round_trip(sw, texts[k]);
        ck_assert_str_eq(back, texts[k]);
        free(back);
    }
    /* spaces at the ends and in runs are SentencePiece's to drop */
    char *back = round_trip(sw, "  zwei   Hunde  ");
    ck_assert_str_eq(back, "zwei Hunde");
    free(back);
    /* an empty line has no pieces and decodes to an empty line */
    nmt_tokens t = {0};
    nmt_ids ids = {0};
    ck_assert_int_eq(nmt_subwords_encode(sw, "", 0, &t), NMT_OK);
    ck_assert_uint_eq(t.n, 0);
    ck_assert_int_eq(nmt_subwords_encode_ids(sw, "", 0, 0, &ids), NMT_OK);
    ck_assert_uint_eq(ids.n, 0);
    back = nmt_subwords_decode(sw, NULL, 0);
    ck_assert_str_eq(back, "");
    free(back);
    nmt_tokens_free(&t);
    nmt_ids_free(&ids);
    nmt_subwords_free(sw);
}
END_TEST

START_TEST(ids_and_pieces_agree)
{
    nmt_subwords *sw = learn(PIECES);
    const char *text = "Zwei junge Männer spielen 犬 im Park.";
    nmt_tokens t = {0};
    nmt_ids ids = {0};
    ck_assert_int_eq(nmt_subwords_encode(sw, text, strlen(text), &t), NMT_OK);
    ck_assert_int_eq(nmt_subwords_encode_ids(sw, text, strlen(text), 0, &ids), NMT_OK);
    ck_assert_uint_eq(t.n, ids.n);
    ck_assert_uint_gt(t.n, 7);
    int unknown = 0;
    for (size_t k = 0; k < t.n; k++) {
        if (ids.id[k] == NMT_UNK) {
            /* an unknown stretch keeps its text */
            ck_assert_str_eq(t.tok[k], "犬");
            unknown++;
        } else {
            ck_assert_str_eq(t.tok[k], nmt_subwords_piece(sw, ids.id[k]));
        }
    }
    ck_assert_int_eq(unknown, 1);
    ck_assert(nmt_piece_starts_word(t.tok[0]));
    /* decoding the ids' pieces shows <unk> as SentencePiece's mark */
    const char *pieces[64];
    for (size_t k = 0; k < ids.n; k++)
        pieces[k] = nmt_subwords_piece(sw, ids.id[k]);
    char *text_back = nmt_subwords_decode(sw, pieces, ids.n);
    /* (the space before 犬 is a piece of its own, and the mark has spaces) */
    ck_assert_str_eq(text_back, "Zwei junge Männer spielen  \xe2\x81\x87  im Park.");
    free(text_back);
    /* </s>, <s> and <pad> vanish */
    const char *with_specials[] = {"<s>", pieces[0], "</s>", "<pad>"};
    text_back = nmt_subwords_decode(sw, with_specials, 4);
    ck_assert_str_eq(text_back, "Zwei");
    free(text_back);
    nmt_tokens_free(&t);
    nmt_ids_free(&ids);
    nmt_subwords_free(sw);
}
END_TEST

START_TEST(serialized_model_loads_the_same)
{
    nmt_subwords *sw = learn(PIECES), *back = NULL;
    size_t n;
    const unsigned char *bytes = nmt_subwords_bytes(sw, &n);
    ck_assert_uint_gt(n, 1000);
    ck_assert_int_eq(nmt_subwords_load(&back, bytes, n, "copy"), NMT_OK);
    ck_assert_int_eq(nmt_subwords_size(back), PIECES);
    for (int id = 0; id < PIECES; id++)
        ck_assert_str_eq(nmt_subwords_piece(back, id), nmt_subwords_piece(sw, id));
    size_t n2;
    const unsigned char *bytes2 = nmt_subwords_bytes(back, &n2);
    ck_assert_uint_eq(n2, n);
    ck_assert_int_eq(memcmp(bytes, bytes2, n), 0);
    const char *text = "Ein kleines Mädchen klettert in ein Spielhaus aus Holz.";
    nmt_ids a = {0}, b = {0};
    ck_assert_int_eq(nmt_subwords_encode_ids(sw, text, strlen(text), 0, &a), NMT_OK);
    ck_assert_int_eq(nmt_subwords_encode_ids(back, text, strlen(text), 0, &b), NMT_OK);
    ck_assert_uint_eq(a.n, b.n);
    ck_assert_int_eq(memcmp(a.id, b.id, a.n * sizeof *a.id), 0);
    /* and through a file */
    make_tmpdir();
    const char *path = write_file("m.model", bytes, n);
    nmt_subwords *from_file = NULL;
    ck_assert_int_eq(nmt_subwords_load_file(&from_file, path), NMT_OK);
    ck_assert_int_eq(nmt_subwords_size(from_file), PIECES);
    nmt_subwords_free(from_file);
    ck_assert_int_eq(nmt_subwords_load_file(&from_file, tmp_path("none.model")), NMT_ERR_IO);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "none.model: No such file"));
    remove_tmpdir();
    nmt_ids_free(&a);
    nmt_ids_free(&b);
    nmt_subwords_free(back);
    nmt_subwords_free(sw);
}
END_TEST

/* A protobuf varint at p: its length, and its value in *v. */
static size_t varint_at(const unsigned char *p, uint64_t *v)
{
    size_t n = 0;
    *v = 0;
    do
        *v |= (uint64_t)(p[n] & 0x7f) << (7 * n);
    while (p[n++] & 0x80);
    return n;
}

/* ---- models made by spm_train (Debian's sentencepiece tools) ---- */

static unsigned char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "%s: cannot open", path);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(*n ? *n : 1);
    ck_assert_uint_eq(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

/* A model spm_train makes from the learning lines with these options (in
 * the temp dir, which the caller made); its bytes. */
static unsigned char *spm_train(const char *options, size_t *n)
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
    return read_all(tmp_path("spm.model"), n);
}

START_TEST(spm_train_models)
{
    make_tmpdir();
    size_t n;
    /* spm_train's defaults: <unk> 0, <s> 1, </s> 2, no <pad> */
    unsigned char *bytes = spm_train("", &n);
    nmt_subwords *sw = NULL;
    ck_assert_int_eq(nmt_subwords_load(&sw, bytes, n, "default.model"), NMT_ERR_FORMAT);
    ck_assert_ptr_null(sw);
    const char *msg = nmt_error_message();
    ck_assert_msg(strstr(msg, "default.model: ") && strstr(msg, "at ids -1 0 1 2") &&
                  strstr(msg, "spm_train --pad_id=0 --unk_id=1 --bos_id=2 --eos_id=3"), "%s", msg);
    free(bytes);
    /* with nmt's ids, and spm_train's own normalization (nmt_nfkc) */
    bytes = spm_train("--pad_id=0 --unk_id=1 --bos_id=2 --eos_id=3", &n);
    ck_assert_msg(nmt_subwords_load(&sw, bytes, n, "nfkc.model") == NMT_OK, "%s",
                  nmt_error_message());
    ck_assert_str_eq(nmt_subwords_normalization(sw), "nmt_nfkc");
    char *back = round_trip(sw, "Zwei ｆｕｌｌ  Männer");
    ck_assert_str_eq(back, "Zwei full Männer"); /* NFKC: full-width letters become ASCII */
    free(back);
    nmt_subwords_free(sw);
    free(bytes);
    /* a BPE model loads, but cannot sample */
    bytes = spm_train("--pad_id=0 --unk_id=1 --bos_id=2 --eos_id=3 --model_type=bpe", &n);
    ck_assert_int_eq(nmt_subwords_load(&sw, bytes, n, "bpe.model"), NMT_OK);
    ck_assert_str_eq(nmt_subwords_type(sw), "bpe");
    nmt_ids ids = {0};
    ck_assert_int_eq(nmt_subwords_encode_ids(sw, "ein Mann", 8, 0, &ids), NMT_OK);
    ck_assert_uint_gt(ids.n, 0);
    ck_assert_int_eq(nmt_subwords_encode_ids(sw, "ein Mann", 8, 0.1f, &ids), NMT_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "needs a unigram model, not bpe"));
    nmt_ids_free(&ids);
    nmt_subwords_free(sw);
    free(bytes);
    /* words told apart by their last piece cannot be grouped */
    bytes = spm_train("--pad_id=0 --unk_id=1 --bos_id=2 --eos_id=3 "
                      "--treat_whitespace_as_suffix=true", &n);
    ck_assert_int_eq(nmt_subwords_load(&sw, bytes, n, "suffix.model"), NMT_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "treat_whitespace_as_suffix"));
    free(bytes);
    remove_tmpdir();
}
END_TEST

/* Where a NormalizerSpec's precompiled charsmap is in a serialized model:
 * field 3 of the model, field 2 inside it. */
static void find_charsmap(const unsigned char *b, size_t n, size_t *begin, size_t *end)
{
    size_t at = 0;
    while (at < n) {
        uint64_t key, len = 0;
        at += varint_at(b + at, &key);
        ck_assert_uint_eq(key & 7, 2);
        at += varint_at(b + at, &len);
        if (key >> 3 == 3) {
            size_t in = at;
            while (in < at + len) {
                uint64_t k2, l2 = 0;
                in += varint_at(b + in, &k2);
                if ((k2 & 7) == 0) {
                    in += varint_at(b + in, &l2);
                    continue;
                }
                in += varint_at(b + in, &l2);
                if (k2 >> 3 == 2) {
                    *begin = in;
                    *end = in + l2;
                    return;
                }
                in += l2;
            }
        }
        at += len;
    }
    ck_abort_msg("no charsmap");
}

/* SentencePiece walks the normalization table with the offsets in it; a
 * damaged table must be refused before it does. Thousands of damaged
 * tables, seeded; each either refused or, if it loads, safe to use. */
START_TEST(damaged_normalization_table)
{
    make_tmpdir();
    size_t n, begin = 0, end = 0;
    unsigned char *good = spm_train("--pad_id=0 --unk_id=1 --bos_id=2 --eos_id=3", &n);
    remove_tmpdir();
    find_charsmap(good, n, &begin, &end);
    ck_assert_uint_gt(end - begin, 10000);
    unsigned char *bad = malloc(n);
    uint64_t s = 0x2545f4914f6cdd1dULL;
    int loaded = 0, refused = 0;
    int cases = getenv("NMT_VALGRIND") ? 40 : 1500;
    const char *line = "Zwei ｆｕｌｌ Männer ½ spielen\t Fußball… ﬁ ㈱ Ⅻ";
    for (int k = 0; k < cases; k++) {
        memcpy(bad, good, n);
        for (int f = 0; f < 1 + k % 4; f++) {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            /* mostly the trie's first units, which every lookup reads */
            size_t span = k % 2 ? end - begin : 4096;
            size_t at = begin + (size_t)(s % span);
            bad[at] = k % 3 ? (unsigned char)(bad[at] ^ (1u << (s >> 61))) : (unsigned char)(s >> 40);
        }
        nmt_subwords *sw = NULL;
        int rc = nmt_subwords_load(&sw, bad, n, "damaged.model");
        if (rc) {
            ck_assert_int_eq(rc, NMT_ERR_FORMAT);
            ck_assert_ptr_nonnull(strstr(nmt_error_message(), "damaged.model: "));
            refused++;
            continue;
        }
        loaded++;
        char *back = round_trip(sw, line);
        free(back);
        nmt_subwords_free(sw);
    }
    ck_assert_int_gt(refused, cases / 10);
    ck_assert_int_gt(loaded, 0);
    /* The root unit's offset sent to 2^29 units: SentencePiece would read
     * 2 GB past the table at the first character (a crash; ASan cannot see
     * it, the library is not instrumented). 4 bytes of length come first. */
    memcpy(bad, good, n);
    uint32_t root = (0x1fffffu << 10) | (1u << 9);
    for (int k = 0; k < 4; k++)
        bad[begin + 4 + (size_t)k] = (unsigned char)(root >> (8 * k));
    nmt_subwords *sw = NULL;
    ck_assert_int_eq(nmt_subwords_load(&sw, bad, n, "far.model"), NMT_ERR_FORMAT);
    ck_assert_str_eq(nmt_error_message(),
                     "far.model: the SentencePiece model's normalization table is damaged");
    free(bad);
    free(good);
}
END_TEST

START_TEST(not_a_model_refused)
{
    nmt_subwords *sw = learn(PIECES), *bad = NULL;
    size_t n;
    const unsigned char *bytes = nmt_subwords_bytes(sw, &n);
    static const char text[] = "just some text, not a model";
    ck_assert_int_eq(nmt_subwords_load(&bad, text, sizeof text - 1, "text"), NMT_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "text: not a SentencePiece model"));
    ck_assert_int_eq(nmt_subwords_load(&bad, bytes, 0, "empty"), NMT_ERR_FORMAT);
    /* every cut through the four specials, the model's first four fields */
    size_t specials = 0;
    for (int k = 0; k < 4; k++) {
        uint64_t key, len;
        specials += varint_at(bytes + specials, &key);
        specials += varint_at(bytes + specials, &len);
        specials += len;
    }
    for (size_t cut = 1; cut < specials; cut++) {
        int rc = nmt_subwords_load(&bad, bytes, cut, "cut");
        ck_assert_msg(rc == NMT_ERR_FORMAT, "a model cut to %zu bytes loaded", cut);
        ck_assert_ptr_null(bad);
    }
    /* further cuts: refused, or a smaller model that is whole up to there */
    for (size_t cut = specials; cut < n; cut += 97) {
        int rc = nmt_subwords_load(&bad, bytes, cut, "cut");
        ck_assert(rc == NMT_OK || rc == NMT_ERR_FORMAT);
        nmt_subwords_free(bad);
    }
    nmt_subwords_free(sw);
}
END_TEST

static int failing_job(void *ctx)
{
    (void)ctx;
    return nmt_set_error(NMT_ERR_IO, "raised on the other thread");
}

/* Sampling in a thread seeded by seed: each line's ids, joined. */
typedef struct sample_job {
    const nmt_subwords *sw;
    const lines *l;
    float alpha;
    char out[1 << 16];
} sample_job;

static int sample_all(void *ctx)
{
    sample_job *j = ctx;
    nmt_ids ids = {0};
    size_t used = 0;
    for (int k = 0; k < 40; k++) {
        const char *line = j->l->line[k];
        int rc = nmt_subwords_encode_ids(j->sw, line, strlen(line), j->alpha, &ids);
        if (rc)
            return rc;
        for (size_t i = 0; i < ids.n && used + 16 < sizeof j->out; i++)
            used += (size_t)snprintf(j->out + used, sizeof j->out - used, "%d ", ids.id[i]);
        used += (size_t)snprintf(j->out + used, sizeof j->out - used, "|");
    }
    nmt_ids_free(&ids);
    return NMT_OK;
}

START_TEST(sampling_is_a_function_of_the_seed)
{
    nmt_subwords *sw = learn(PIECES);
    lines l;
    read_lines(&l);
    sample_job *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b), *c = calloc(1, sizeof *c),
               *best = calloc(1, sizeof *best);
    *a = (sample_job){.sw = sw, .l = &l, .alpha = 0.2f};
    *b = *a;
    *c = *a;
    *best = (sample_job){.sw = sw, .l = &l, .alpha = 0};
    ck_assert_int_eq(nmt_subwords_run_seeded(7, sample_all, a), NMT_OK);
    ck_assert_int_eq(nmt_subwords_run_seeded(7, sample_all, b), NMT_OK);
    ck_assert_int_eq(nmt_subwords_run_seeded(8, sample_all, c), NMT_OK);
    ck_assert_int_eq(sample_all(best), NMT_OK);
    ck_assert_str_eq(a->out, b->out);
    ck_assert_str_ne(a->out, c->out);
    ck_assert_str_ne(a->out, best->out);
    /* a sampled segmentation spells the same text */
    nmt_ids ids = {0};
    for (int k = 0; k < 20; k++) {
        const char *line = l.line[k];
        ck_assert_int_eq(nmt_subwords_encode_ids(sw, line, strlen(line), 0.1f, &ids), NMT_OK);
        const char *pieces[512];
        ck_assert_uint_lt(ids.n, 512);
        for (size_t i = 0; i < ids.n; i++)
            pieces[i] = nmt_subwords_piece(sw, ids.id[i]);
        char *back = nmt_subwords_decode(sw, pieces, ids.n);
        ck_assert_str_eq(back, line);
        free(back);
    }
    nmt_ids_free(&ids);
    /* an error on the sampling thread comes back with its message */
    ck_assert_int_eq(nmt_subwords_run_seeded(1, failing_job, NULL), NMT_ERR_IO);
    ck_assert_str_eq(nmt_error_message(), "raised on the other thread");
    free(a);
    free(b);
    free(c);
    free(best);
    free_lines(&l);
    nmt_subwords_free(sw);
}
END_TEST

/* ---- the corpus as pieces ---- */

START_TEST(corpus_reads_pieces)
{
    nmt_subwords *sw = learn(PIECES);
    make_tmpdir();
    static const char src_text[] = "Ein Mann schläft.\nZWEI HUNDE\n\nein sehr sehr sehr sehr "
                                   "sehr sehr sehr sehr sehr sehr sehr sehr langer Satz\n";
    static const char tgt_text[] = "A man sleeps.\nTWO DOGS\nnothing\nshort\n";
    const char *src = write_file("s.de", src_text, sizeof src_text - 1);
    char src_path[256];
    snprintf(src_path, sizeof src_path, "%s", src);
    const char *tgt = write_file("t.en", tgt_text, sizeof tgt_text - 1);
    nmt_corpus c;
    nmt_corpus_opts o = {.lowercase = 1, .max_len = 12, .skip_empty = 1, .subwords = sw};
    ck_assert_msg(nmt_corpus_read(&c, src_path, tgt, &o, NULL, NULL) == NMT_OK, "%s",
                  nmt_error_message());
    ck_assert_uint_eq(c.n_lines, 4);
    ck_assert_uint_eq(c.skipped_empty, 1);
    ck_assert_uint_eq(c.skipped_long, 1); /* line 4: more than 12 pieces */
    ck_assert_uint_eq(c.n, 2);
    /* each side's ids are the pieces of the lowercased line */
    static const char *const want_src[] = {"ein mann schläft.", "zwei hunde"};
    static const char *const want_tgt[] = {"a man sleeps.", "two dogs"};
    nmt_ids ids = {0};
    for (size_t i = 0; i < 2; i++) {
        for (int side = 0; side < 2; side++) {
            const char *text = side ? want_tgt[i] : want_src[i];
            ck_assert_int_eq(nmt_subwords_encode_ids(sw, text, strlen(text), 0, &ids), NMT_OK);
            const size_t *off = side ? c.tgt_off : c.src_off;
            const int32_t *got = side ? c.tgt : c.src;
            ck_assert_uint_eq(off[i + 1] - off[i], ids.n);
            ck_assert_int_eq(memcmp(got + off[i], ids.id, ids.n * sizeof *ids.id), 0);
        }
    }
    nmt_corpus_free(&c);
    /* sampled: the same seed reads the same ids */
    o = (nmt_corpus_opts){.subwords = sw, .subword_alpha = 0.3f, .sample_seed = 11};
    nmt_corpus c1, c2, c3;
    ck_assert_int_eq(nmt_corpus_read(&c1, src_path, tgt, &o, NULL, NULL), NMT_OK);
    ck_assert_int_eq(nmt_corpus_read(&c2, src_path, tgt, &o, NULL, NULL), NMT_OK);
    o.sample_seed = 12;
    ck_assert_int_eq(nmt_corpus_read(&c3, src_path, tgt, &o, NULL, NULL), NMT_OK);
    ck_assert_uint_eq(c1.src_off[c1.n], c2.src_off[c2.n]);
    ck_assert_int_eq(memcmp(c1.src, c2.src, c1.src_off[c1.n] * sizeof *c1.src), 0);
    ck_assert(c1.src_off[c1.n] != c3.src_off[c3.n] ||
              memcmp(c1.src, c3.src, c1.src_off[c1.n] * sizeof *c1.src) != 0 ||
              c1.tgt_off[c1.n] != c3.tgt_off[c3.n] ||
              memcmp(c1.tgt, c3.tgt, c1.tgt_off[c1.n] * sizeof *c1.tgt) != 0);
    nmt_corpus_free(&c1);
    nmt_corpus_free(&c2);
    nmt_corpus_free(&c3);
    /* a bad line is named by file and line, from the sampling thread too */
    static const char bad_text[] = "gut\nschlecht \xff\nok\nmehr\n";
    const char *bad = write_file("bad.de", bad_text, sizeof bad_text - 1);
    char bad_path[256];
    snprintf(bad_path, sizeof bad_path, "%s", bad);
    ck_assert_int_eq(nmt_corpus_read(&c1, bad_path, tgt, &o, NULL, NULL), NMT_ERR_FORMAT);
    ck_assert_msg(strstr(nmt_error_message(), "bad.de:2:"), "%s", nmt_error_message());
    remove_tmpdir();
    nmt_ids_free(&ids);
    nmt_subwords_free(sw);
}
END_TEST

START_TEST(corpus_learns_from_both_files)
{
    char src[1024], tgt[1024];
    snprintf(src, sizeof src, "%s/multi30k/val.de.gz", NMT_CORPORA());
    snprintf(tgt, sizeof tgt, "%s/multi30k/val.en.gz", NMT_CORPORA());
    nmt_subwords *sw = NULL, *lower = NULL;
    ck_assert_msg(nmt_corpus_learn_subwords(&sw, src, tgt, 500, 0) == NMT_OK, "%s",
                  nmt_error_message());
    ck_assert_msg(nmt_corpus_learn_subwords(&lower, src, tgt, 500, 1) == NMT_OK, "%s",
                  nmt_error_message());
    /* pieces of both languages; capitals only without lowercasing */
    int de = 0, en = 0, caps = 0, caps_lower = 0;
    for (int id = NMT_N_SPECIAL; id < 500; id++) {
        const char *p = nmt_subwords_piece(sw, id), *q = nmt_subwords_piece(lower, id);
        de += !strcmp(p, "▁und") || !strcmp(p, "▁ein") || !strcmp(p, "▁Mann");
        en += !strcmp(p, "▁and") || !strcmp(p, "▁the") || !strcmp(p, "▁man");
        caps += strpbrk(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != NULL;
        caps_lower += strpbrk(q, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != NULL;
    }
    ck_assert_int_eq(de, 3);
    ck_assert_int_eq(en, 3);
    ck_assert_int_gt(caps, 0);
    ck_assert_int_eq(caps_lower, 0);
    nmt_subwords_free(sw);
    nmt_subwords_free(lower);
    /* the files' own errors, by file */
    ck_assert_int_eq(nmt_corpus_learn_subwords(&sw, src, "/nonexistent/t.en", 500, 0), NMT_ERR_IO);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "/nonexistent/t.en"));
}
END_TEST

/* ---- a model's units ---- */

/* A small model that reads subwords (weights zero: only text matters here). */
static nmt_model *subword_model(nmt_subwords *sw, int lowercase)
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

START_TEST(units_of_a_subword_model)
{
    nmt_model *m = subword_model(learn(PIECES), 1);
    nmt_tokens t = {0};
    const char *line = "ZWEI Männer Spielen.";
    ck_assert_int_eq(nmt_units_split(m, line, strlen(line), &t), NMT_OK);
    char *text = nmt_units_join(m, (const char *const *)t.tok, t.n);
    ck_assert_str_eq(text, "zwei männer spielen.");
    free(text);
    for (size_t k = 0; k < t.n; k++)
        ck_assert_int_ne(nmt_vocab_id(m->src_vocab, t.tok[k], t.len[k]), NMT_UNK);
    ck_assert_str_eq(nmt_units_name(m), "pieces");
    /* the target's ids: <unk> shows as SentencePiece's mark, </s> vanishes */
    int32_t ids[64];
    ck_assert_uint_lt(t.n + 2, 64);
    for (size_t k = 0; k < t.n; k++)
        ids[k] = nmt_vocab_id(m->tgt_vocab, t.tok[k], t.len[k]);
    ids[t.n] = NMT_UNK;
    ids[t.n + 1] = NMT_EOS;
    text = nmt_units_join_ids(m, ids, t.n + 2);
    ck_assert_str_eq(text, "zwei männer spielen. \xe2\x81\x87 ");
    free(text);
    nmt_tokens_free(&t);
    nmt_model_free(m);
}
END_TEST

/* ---- the model file's "subwords" tensor ---- */

/* The first place of needle in hay, or NULL (memmem is a GNU extension). */
static unsigned char *find_bytes(unsigned char *hay, size_t n, const char *needle, size_t k)
{
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(hay + i, needle, k))
            return hay + i;
    return NULL;
}

/* Where the data section and the "subwords" tensor are in a file image. */
static void locate_subwords(const unsigned char *img, size_t n, size_t *data, size_t *begin,
                            size_t *end)
{
    size_t header = 0;
    for (int k = 7; k >= 0; k--)
        header = (header << 8) | img[k];
    *data = 8 + header;
    char *json = strndup((const char *)img + 8, header);
    const char *at = strstr(json, "\"subwords\":");
    ck_assert_ptr_nonnull(at);
    ck_assert_ptr_nonnull(strstr(at, "\"U8\""));
    ck_assert_int_eq(sscanf(strstr(at, "data_offsets") + 14, "[%zu,%zu]", begin, end), 2);
    ck_assert_uint_eq(*data + *end, n); /* the last tensor */
    free(json);
}

/* The crc32 of the data section, written over the header's old one. */
static void fix_crc(unsigned char *img, size_t n, size_t data)
{
    uint32_t crc = (uint32_t)crc32(0, img + data, (uInt)(n - data));
    unsigned char *key = find_bytes(img, data, "\"crc32\":\"", 9);
    ck_assert_ptr_nonnull(key);
    char hex[9];
    snprintf(hex, sizeof hex, "%08x", crc);
    memcpy(key + 9, hex, 8);
}

START_TEST(model_file_carries_subwords)
{
    make_tmpdir();
    nmt_model *m = subword_model(learn(PIECES), 0);
    const char *path = tmp_path("m.safetensors");
    ck_assert_int_eq(nmt_model_save(m, path, NULL, 0, NULL, 0), NMT_OK);
    nmt_model *back;
    nmt_file *f;
    ck_assert_msg(nmt_model_load(&back, path, &f) == NMT_OK, "%s", nmt_error_message());
    ck_assert_ptr_nonnull(back->subwords);
    size_t n, n_back;
    const unsigned char *b = nmt_subwords_bytes(m->subwords, &n);
    const unsigned char *bb = nmt_subwords_bytes(back->subwords, &n_back);
    ck_assert_uint_eq(n, n_back);
    ck_assert_int_eq(memcmp(b, bb, n), 0);
    /* the tensor: U8 bytes, not floats */
    size_t n_file;
    ck_assert_ptr_nonnull(nmt_file_bytes(f, "subwords", &n_file));
    ck_assert_uint_eq(n_file, n);
    ck_assert_ptr_null(nmt_file_tensor(f, "subwords", NULL, NULL));
    ck_assert_ptr_null(nmt_file_bytes(f, "out.b", &n_file));
    nmt_file_free(f);
    nmt_model_free(back);
    /* loaded to translate (the file not kept): the parameters are the
     * file's buffer, the pieces follow them */
    ck_assert_int_eq(nmt_model_load(&back, path, NULL), NMT_OK);
    ck_assert_ptr_nonnull(back->subwords);
    ck_assert_int_eq(memcmp(back->params, m->params, m->n_params * sizeof *m->params), 0);
    nmt_model_free(back);
    /* a model without subwords has no such tensor */
    nmt_subwords *sw = m->subwords;
    m->subwords = NULL;
    ck_assert_int_eq(nmt_model_save(m, path, NULL, 0, NULL, 0), NMT_OK);
    ck_assert_int_eq(nmt_model_load(&back, path, &f), NMT_OK);
    ck_assert_ptr_null(back->subwords);
    ck_assert_ptr_null(nmt_file_bytes(f, "subwords", &n_file));
    nmt_file_free(f);
    nmt_model_free(back);
    m->subwords = sw;
    /* an extra tensor may not take the name */
    float x = 0;
    nmt_named_tensor extra = {.name = "subwords", .ndim = 1, .shape = {1, 0}, .data = &x};
    ck_assert_int_eq(nmt_model_save(m, path, &extra, 1, NULL, 0), NMT_ERR_ARG);
    nmt_model_free(m);
    remove_tmpdir();
}
END_TEST

/* A file image of a model with subwords, and where its parts are. */
typedef struct image {
    unsigned char *bytes;
    size_t n, data, begin, end;
} image;

static image model_image(void)
{
    make_tmpdir();
    nmt_model *m = subword_model(learn(PIECES), 0);
    const char *path = tmp_path("m.safetensors");
    ck_assert_int_eq(nmt_model_save(m, path, NULL, 0, NULL, 0), NMT_OK);
    nmt_model_free(m);
    image im;
    im.bytes = read_all(path, &im.n);
    remove_tmpdir();
    locate_subwords(im.bytes, im.n, &im.data, &im.begin, &im.end);
    return im;
}

/* Loads a changed image with its crc fixed: OK, or refused naming the
 * file; never a crash (ASan and valgrind watch). A model that loads must
 * still encode and decode. */
static int load_changed(unsigned char *img, size_t n, size_t data)
{
    fix_crc(img, n, data);
    nmt_model *m = NULL;
    int rc = nmt_model_load_memory(&m, img, n, "changed.safetensors", NULL);
    if (rc == NMT_OK) {
        nmt_tokens t = {0};
        const char *line = "Zwei Männer ｆｕｌｌ ½ spielen\t Fußball…";
        ck_assert_int_eq(nmt_units_split(m, line, strlen(line), &t), NMT_OK);
        char *text = nmt_units_join(m, (const char *const *)t.tok, t.n);
        free(text);
        nmt_tokens_free(&t);
        nmt_model_free(m);
    } else {
        ck_assert_int_eq(rc, NMT_ERR_FORMAT);
        ck_assert_msg(!strncmp(nmt_error_message(), "changed.safetensors: ", 21), "%s",
                      nmt_error_message());
    }
    return rc;
}

START_TEST(damaged_subwords_refused)
{
    image im = model_image();
    size_t sw_n = im.end - im.begin;
    unsigned char *img = malloc(im.n);
    /* garbage in place of the model */
    memcpy(img, im.bytes, im.n);
    memset(img + im.data + im.begin, 0xff, sw_n);
    ck_assert_int_eq(load_changed(img, im.n, im.data), NMT_ERR_FORMAT);
    ck_assert_msg(strstr(nmt_error_message(), "changed.safetensors: tensor 'subwords': not a "
                                               "SentencePiece model"), "%s", nmt_error_message());
    /* one piece renamed ("▁a..." to "▁Q..."): the vocabularies no longer agree */
    memcpy(img, im.bytes, im.n);
    unsigned char *at = find_bytes(img + im.data + im.begin, sw_n, "\xe2\x96\x81" "a", 4);
    ck_assert_ptr_nonnull(at);
    at[3] = 'Q';
    int rc = load_changed(img, im.n, im.data);
    ck_assert_int_eq(rc, NMT_ERR_FORMAT);
    ck_assert_msg(strstr(nmt_error_message(), "(they must be the same)") ||
                  strstr(nmt_error_message(), "already defined"), "%s", nmt_error_message());
    /* a model whose crc does not match is refused before SentencePiece sees it */
    memcpy(img, im.bytes, im.n);
    img[im.data + im.begin + 10] ^= 0x20;
    nmt_model *m = NULL;
    ck_assert_int_eq(nmt_model_load_memory(&m, img, im.n, "flipped", NULL), NMT_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "crc32 mismatch"));
    free(img);
    free(im.bytes);
}
END_TEST

/* The loader's regression test: thousands of damaged subword models, each
 * with a valid crc so that the damage reaches SentencePiece. Seeded, so
 * the same cases run every time. */
START_TEST(loader_survives_damage)
{
    image im = model_image();
    size_t sw_n = im.end - im.begin;
    unsigned char *img = malloc(im.n);
    uint64_t s = 0x9e3779b97f4a7c15ULL;
    int loaded = 0, refused = 0;
    int cases = getenv("NMT_VALGRIND") ? 60 : 1500;
    for (int k = 0; k < cases; k++) {
        memcpy(img, im.bytes, im.n);
        int flips = 1 + k % 8;
        for (int f = 0; f < flips; f++) {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            size_t at = im.data + im.begin + (size_t)(s % sw_n);
            img[at] = k % 3 ? (unsigned char)(img[at] ^ (1u << (s >> 60) % 8)) : (unsigned char)(s >> 32);
        }
        if (load_changed(img, im.n, im.data) == NMT_OK)
            loaded++;
        else
            refused++;
    }
    /* most damage to a piece is caught; a damaged score is not damage */
    ck_assert_int_gt(refused, cases / 4);
    ck_assert_int_gt(loaded, 0);
    free(img);
    free(im.bytes);
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("subwords");
    TCase *tc = tcase_create("learn");
    tcase_add_test(tc, learns_pieces_with_nmt_ids);
    tcase_add_test(tc, learning_is_deterministic);
    tcase_add_test(tc, too_many_pieces_refused);
    tcase_add_test(tc, line_source_errors_pass_through);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    tc = tcase_create("text");
    tcase_add_test(tc, raw_text_round_trips);
    tcase_add_test(tc, ids_and_pieces_agree);
    tcase_add_test(tc, serialized_model_loads_the_same);
    tcase_add_test(tc, spm_train_models);
    tcase_add_test(tc, damaged_normalization_table);
    tcase_add_test(tc, not_a_model_refused);
    tcase_add_test(tc, sampling_is_a_function_of_the_seed);
    tcase_add_test(tc, units_of_a_subword_model);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    tc = tcase_create("corpus");
    tcase_add_test(tc, corpus_reads_pieces);
    tcase_add_test(tc, corpus_learns_from_both_files);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    tc = tcase_create("model file");
    tcase_add_test(tc, model_file_carries_subwords);
    tcase_add_test(tc, damaged_subwords_refused);
    tcase_add_test(tc, loader_survives_damage);
    tcase_set_timeout(tc, 300);
    suite_add_tcase(s, tc);
    return s;
}
