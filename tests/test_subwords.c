/* The SentencePiece shim (src/data/subwords.cc) and what is built on it: learning
 * a model from a few hundred Multi30k lines, encoding and decoding raw text,
 * the special ids, determinism, sampling, models made by spm_train, the
 * corpus read as pieces, the units of a model, and the model file's
 * "subwords" tensor. Damaged models are the subwords-damaged suite's
 * (tests/test_subwords_damaged.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/corpus.h"
#include "nmt/error.h"
#include "nmt/modelfile.h"
#include "nmt/subwords.h"
#include "nmt/text.h"
#include "nmt/units.h"
#include "test_common.h"
#include "test_files.h"
#include "test_subwords.h"

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

/* ---- models made by spm_train (Debian's sentencepiece tools) ---- */

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
    /* a prefix's pieces written as its text: capitals the model lowered and
     * doubled spaces SentencePiece dropped come back, and the pieces after
     * it follow as they would */
    nmt_tokens p = {0};
    const char *head = "ZWEI  Männer";
    ck_assert_int_eq(nmt_units_split(m, head, strlen(head), &p), NMT_OK);
    const char *units[64];
    ck_assert_uint_lt(p.n + t.n, 64);
    for (size_t k = 0; k < p.n; k++)
        units[k] = p.tok[k];
    for (size_t k = 0; k < t.n; k++)
        units[p.n + k] = t.tok[k];
    text = nmt_units_join_prefixed(m, units, p.n + t.n, p.n, head);
    ck_assert_str_eq(text, "ZWEI  Männer zwei männer spielen.");
    free(text);
    text = nmt_units_join_prefixed(m, units, p.n + t.n, 0, head);
    ck_assert_str_eq(text, "zwei männer zwei männer spielen.");
    free(text);
    nmt_tokens_free(&p);
    nmt_tokens_free(&t);
    nmt_model_free(m);
}
END_TEST

/* ---- the model file's "subwords" tensor ---- */

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
    tcase_set_timeout(tc, 300);
    suite_add_tcase(s, tc);
    return s;
}
