/* Model files (src/io/modelfile.c), the model's tensors and settings in the
 * safetensors container (the safetensors suite's): every configuration round
 * trips through both loaders, a checkpoint's extras and metadata, the crc32,
 * truncation; settings, shapes and tensors that disagree are refused, naming
 * the file and the tensor (attention kinds, tied output embeddings, a
 * joint vocabulary's lists and tables, byte tensors). Numbers that are not
 * finite (step 8 of "Loading" in docs/DESIGN.md): a NaN, +Inf or -Inf
 * anywhere in a model's weights is
 * refused with the file, the tensor and the index of the first one; in a
 * checkpoint's optimizer moments when they are held (a resume), and not when
 * only the model is wanted. The file's CRC is right in every case:
 * nmt_model_save writes what it is given. Large finite numbers load. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nmt/error.h"
#include "nmt/modelfile.h"
#include "io/safetensors.h"
#include "test_common.h"
#include "test_files.h"

/* ---- fixtures ------------------------------------------------------------- */

static nmt_vocab *vocab_of(const char *const *extra, int n)
{
    const char *tok[16] = {"<pad>", "<unk>", "<s>", "</s>"};
    for (int k = 0; k < n; k++)
        tok[4 + k] = extra[k];
    nmt_vocab *v;
    ck_assert_int_eq(nmt_vocab_from_tokens(&v, tok, (size_t)(4 + n)), NMT_OK);
    return v;
}

/* Every test's model: emb 3, hidden 4, att_dim 5, out_dim 6, vocabularies
 * of 10 and 9, lowercased. */
static nmt_model *small_model(nmt_cell cell, nmt_attention att, int bidi)
{
    /* tokens that need escaping in JSON, and UTF-8 */
    static const char *const src[] = {"\"", "\\", "Haus", "\xc3\x84pfel", "\\n", "a\"b"};
    static const char *const tgt[] = {"house", "'s", "\xe2\x80\x9e", "}", "{"};
    nmt_config cfg = {.rnn.cell = cell, .rnn.attention = att, .rnn.bidirectional = bidi, .rnn.emb = 3,
                      .rnn.hidden = 4, .rnn.att_dim = 5, .rnn.out_dim = 6, .lowercase = 1};
    nmt_model *m;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, vocab_of(src, 6), vocab_of(tgt, 5)), NMT_OK);
    nmt_model_init(m, NMT_INIT_BAHDANAU, 0, 7);
    /* make every parameter distinct, so a mixed-up tensor would show */
    for (size_t k = 0; k < m->n_params; k++)
        m->params[k] += (float)k * 1e-3f;
    return m;
}

static void assert_same_model(const nmt_model *a, const nmt_model *b)
{
    ck_assert_int_eq(a->cfg.rnn.cell, b->cfg.rnn.cell);
    ck_assert_int_eq(a->cfg.rnn.attention, b->cfg.rnn.attention);
    ck_assert_int_eq(a->cfg.rnn.bidirectional, b->cfg.rnn.bidirectional);
    ck_assert_int_eq(a->cfg.rnn.emb, b->cfg.rnn.emb);
    ck_assert_int_eq(a->cfg.rnn.hidden, b->cfg.rnn.hidden);
    ck_assert_int_eq(a->cfg.rnn.out_dim, b->cfg.rnn.out_dim);
    ck_assert_int_eq(a->cfg.lowercase, b->cfg.lowercase);
    if (nmt_attention_uses_att_dim(a->cfg.rnn.attention))
        ck_assert_int_eq(a->cfg.rnn.att_dim, b->cfg.rnn.att_dim);
    ck_assert_uint_eq(a->n_params, b->n_params);
    ck_assert_mem_eq(a->params, b->params, a->n_params * sizeof *a->params);
    for (int pass = 0; pass < 2; pass++) {
        const nmt_vocab *va = pass ? a->tgt_vocab : a->src_vocab, *vb = pass ? b->tgt_vocab : b->src_vocab;
        ck_assert_int_eq(nmt_vocab_size(va), nmt_vocab_size(vb));
        for (int id = 0; id < nmt_vocab_size(va); id++)
            ck_assert_str_eq(nmt_vocab_token(va, id), nmt_vocab_token(vb, id));
    }
}

/* Writes m's tensors and metadata with one change: a metadata value replaced
 * (value NULL: dropped), a tensor dropped, or a tensor given another shape
 * (its data cut or padded with zeros). The crc is right, so that the
 * loader's later checks are what refuse. */
static void write_variant(const char *path, const nmt_model *m, const char *key, const char *value,
                          const char *drop, const char *reshape, int rows, int cols, const char *add)
{
    nmt_named_tensor t[64];
    int n = 0;
    static float pad[4096];
    for (int k = 0; k < m->n_tensors; k++) {
        const nmt_tensor_info *ti = &m->tensors[k];
        if (drop && !strcmp(ti->name, drop))
            continue;
        t[n] = (nmt_named_tensor){ti->name, ti->ndim, {ti->shape[0], ti->shape[1]}, m->params + ti->offset, NULL};
        if (reshape && !strcmp(ti->name, reshape)) {
            t[n].ndim = cols ? 2 : 1;
            t[n].shape[0] = rows;
            t[n].shape[1] = cols;
            t[n].data = pad;
        }
        n++;
    }
    if (add)
        t[n++] = (nmt_named_tensor){add, 1, {2, 0}, pad, NULL};
    char num[4][16];
    snprintf(num[0], 16, "%d", m->cfg.rnn.emb);
    snprintf(num[1], 16, "%d", m->cfg.rnn.hidden);
    snprintf(num[2], 16, "%d", m->cfg.rnn.att_dim);
    snprintf(num[3], 16, "%d", m->cfg.rnn.out_dim);
    nmt_meta meta[11] = {
        {"format", "nmt-1"}, {"cell", nmt_cell_name(m->cfg.rnn.cell)},
        {"attention", nmt_attention_name(m->cfg.rnn.attention)},
        {"bidirectional", m->cfg.rnn.bidirectional ? "true" : "false"},
        {"emb", num[0]}, {"hidden", num[1]}, {"att_dim", num[2]}, {"out_dim", num[3]},
        {"lowercase", "true"},
        {"src_vocab", "<pad>\n<unk>\n<s>\n</s>\n\"\n\\\nHaus\n\xc3\x84pfel\n\\n\na\"b"},
        {"tgt_vocab", "<pad>\n<unk>\n<s>\n</s>\nhouse\n's\n\xe2\x80\x9e\n}\n{"},
    };
    int n_meta = 0;
    nmt_meta kept[11];
    for (int k = 0; k < 11; k++) {
        if (key && !strcmp(meta[k].key, key)) {
            if (!value)
                continue;
            meta[k].value = value;
        }
        kept[n_meta++] = meta[k];
    }
    ck_assert_int_eq(nmt_st_write(path, t, n, kept, n_meta, "crc32"), NMT_OK);
}

/* Loading `path` (with its file) fails with NMT_ERR_FORMAT and a message
 * holding the path and `want`; nothing is handed back. */
static void expect_load_fails(const char *path, const char *want)
{
    nmt_model *m = (nmt_model *)1;
    nmt_file *f = (nmt_file *)1;
    nmt_clear_error();
    ck_assert_int_eq(nmt_model_load(&m, path, &f), NMT_ERR_FORMAT);
    ck_assert_ptr_null(m);
    ck_assert_ptr_null(f);
    ck_assert_msg(strstr(nmt_error_message(), want) != NULL, "message '%s' lacks '%s'",
                  nmt_error_message(), want);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), path));
}

/* ---- what a model file holds --------------------------------------------- */

START_TEST(model_round_trip_all_configurations)
{
    make_tmpdir();
    const char *path = tmp_path("m.safetensors");
    for (int c = 0; c < 3; c++)
        for (int a = NMT_ATT_NONE; a <= NMT_ATT_SCALED_DOT; a++)
            for (int bi = 0; bi < 2; bi++) {
                if (a == NMT_ATT_DOT && bi)
                    continue; /* refused: test_model */
                nmt_model *m = small_model((nmt_cell)c, (nmt_attention)a, bi), *back;
                ck_assert_int_eq(nmt_model_save(m, path, NULL, 0, NULL, 0), NMT_OK);
                ck_assert_int_eq(nmt_model_load(&back, path, NULL), NMT_OK);
                assert_same_model(m, back);
                nmt_model_free(back);
                /* the same bytes through the in-memory loader */
                size_t n;
                unsigned char *raw = read_bytes(path, &n);
                nmt_file *f;
                ck_assert_int_eq(nmt_model_load_memory(&back, raw, n, "mem", &f), NMT_OK);
                assert_same_model(m, back);
                ck_assert_str_eq(nmt_file_meta(f, "format"), "nmt-1");
                ck_assert_int_eq(nmt_file_n_tensors(f), m->n_tensors);
                /* tensors in table order */
                for (int k = 0; k < m->n_tensors; k++)
                    ck_assert_str_eq(nmt_file_tensor_name(f, k), m->tensors[k].name);
                ck_assert_uint_eq(nmt_file_size(f), n);
                nmt_file_free(f);
                nmt_model_free(back);
                free(raw);
                nmt_model_free(m);
            }
    remove_tmpdir();
}
END_TEST

START_TEST(checkpoint_extras)
{
    make_tmpdir();
    const char *path = tmp_path("ckpt.safetensors");
    nmt_model *m = small_model(NMT_CELL_GRU, NMT_ATT_BAHDANAU, 1), *back;
    const nmt_tensor_info *emb = nmt_model_tensor(m, "src_emb");
    float *moment = calloc(emb->size, sizeof *moment);
    for (size_t k = 0; k < emb->size; k++)
        moment[k] = -(float)k;
    nmt_named_tensor extra = {"adam.m.src_emb", 2, {emb->shape[0], emb->shape[1]}, moment, NULL};
    nmt_meta meta[2] = {{"step", "5"}, {"rng", "1 2 3 4"}};
    ck_assert_int_eq(nmt_model_save(m, path, &extra, 1, meta, 2), NMT_OK);
    nmt_file *f;
    ck_assert_int_eq(nmt_model_load(&back, path, &f), NMT_OK);
    assert_same_model(m, back);
    ck_assert_str_eq(nmt_file_meta(f, "step"), "5");
    ck_assert_str_eq(nmt_file_meta(f, "rng"), "1 2 3 4");
    ck_assert_ptr_null(nmt_file_meta(f, "epoch"));
    int ndim, shape[NMT_MAX_NDIM];
    const float *got = nmt_file_tensor(f, "adam.m.src_emb", &ndim, shape);
    ck_assert_ptr_nonnull(got);
    ck_assert_int_eq(ndim, 2);
    ck_assert_int_eq(shape[0], emb->shape[0]);
    ck_assert_int_eq(shape[1], emb->shape[1]);
    ck_assert_mem_eq(got, moment, emb->size * sizeof *moment);
    ck_assert_ptr_null(nmt_file_tensor(f, "adam.v.src_emb", NULL, NULL));
    nmt_file_free(f);
    nmt_model_free(back);

    /* reserved keys and names are refused, and nothing is written */
    nmt_meta clash = {"hidden", "9"};
    ck_assert_int_eq(nmt_model_save(m, tmp_path("x.safetensors"), NULL, 0, &clash, 1), NMT_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "'hidden' is reserved"));
    nmt_named_tensor same = {"out.b", 1, {1, 0}, moment, NULL};
    ck_assert_int_eq(nmt_model_save(m, tmp_path("x.safetensors"), &same, 1, NULL, 0), NMT_ERR_ARG);
    ck_assert_int_eq(access(tmp_path("x.safetensors"), F_OK), -1);
    free(moment);
    nmt_model_free(m);
    remove_tmpdir();
}
END_TEST

/* A model loaded without its file (to translate) holds none of the
 * checkpoint's moments, yet a damaged byte in them is still refused. */
START_TEST(model_alone_from_a_checkpoint)
{
    make_tmpdir();
    const char *path = tmp_path("ckpt.safetensors");
    nmt_model *m = small_model(NMT_CELL_LSTM, NMT_ATT_BAHDANAU, 1), *back;
    const nmt_tensor_info *w = nmt_model_tensor(m, "out.W");
    float *moment = calloc(w->size, sizeof *moment);
    for (size_t k = 0; k < w->size; k++)
        moment[k] = (float)k;
    nmt_named_tensor extra = {"adam.v.out.W", 2, {w->shape[0], w->shape[1]}, moment, NULL};
    ck_assert_int_eq(nmt_model_save(m, path, &extra, 1, NULL, 0), NMT_OK);
    ck_assert_int_eq(nmt_model_load(&back, path, NULL), NMT_OK);
    assert_same_model(m, back);
    nmt_model_free(back);
    /* the moment is written last: flip a bit in it */
    size_t n;
    unsigned char *raw = read_bytes(path, &n);
    ck_assert_mem_eq(raw + n - sizeof(float) * w->size, moment, sizeof(float) * w->size);
    raw[n - 4 * (w->size / 2)] ^= 0x01;
    write_bytes(path, raw, n);
    back = (nmt_model *)1;
    ck_assert_int_eq(nmt_model_load(&back, path, NULL), NMT_ERR_FORMAT);
    ck_assert_ptr_null(back);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "crc32 mismatch"));
    free(raw);
    free(moment);
    nmt_model_free(m);
    remove_tmpdir();
}
END_TEST

START_TEST(crc_checked)
{
    make_tmpdir();
    const char *path = tmp_path("c.safetensors");
    nmt_model *m = small_model(NMT_CELL_GRU, NMT_ATT_BAHDANAU, 0), *back;
    ck_assert_int_eq(nmt_model_save(m, path, NULL, 0, NULL, 0), NMT_OK);
    size_t n;
    unsigned char *raw = read_bytes(path, &n);
    /* flip one bit of the last data byte, and of one in the middle */
    size_t at[2] = {n - 1, n - 40};
    for (int k = 0; k < 2; k++) {
        raw[at[k]] ^= 0x10;
        write_bytes(path, raw, n);
        expect_load_fails(path, "crc32 mismatch");
        raw[at[k]] ^= 0x10;
    }
    /* the crc in upper case is accepted; a decimal or short one is not */
    char *crc = strstr((char *)raw + 8, "\"crc32\":\"");
    ck_assert_ptr_nonnull(crc);
    crc += 9;
    for (int k = 0; k < 8; k++)
        if (crc[k] >= 'a' && crc[k] <= 'f')
            crc[k] = (char)(crc[k] - 'a' + 'A');
    write_bytes(path, raw, n);
    ck_assert_int_eq(nmt_model_load(&back, path, NULL), NMT_OK);
    nmt_model_free(back);
    memcpy(crc, "1234567 ", 8);
    write_bytes(path, raw, n);
    expect_load_fails(path, "crc32 '1234567 ' is not 8 hexadecimal digits");
    memcpy(crc, "-1234567", 8);
    write_bytes(path, raw, n);
    expect_load_fails(path, "is not 8 hexadecimal digits");
    free(raw);
    nmt_model_free(m);
    remove_tmpdir();
}
END_TEST

/* A model file cut anywhere is refused with a message, never a crash. */
START_TEST(truncated_model_refused)
{
    make_tmpdir();
    const char *path = tmp_path("t.safetensors");
    nmt_model *m = small_model(NMT_CELL_RNN, NMT_ATT_BAHDANAU, 1), *back;
    ck_assert_int_eq(nmt_model_save(m, path, NULL, 0, NULL, 0), NMT_OK);
    size_t n;
    unsigned char *raw = read_bytes(path, &n);
    for (size_t cut = 0; cut < n; cut += (cut < 4096 ? 1 : 97)) {
        nmt_clear_error();
        ck_assert_int_eq(nmt_model_load_memory(&back, raw, cut, "cut", NULL), NMT_ERR_FORMAT);
        ck_assert_ptr_null(back);
        ck_assert_str_ne(nmt_error_message(), "");
    }
    /* and on disk, with the path in the message */
    write_bytes(path, raw, n - 3);
    expect_load_fails(path, "outside the data section");
    write_bytes(path, raw, 100);
    expect_load_fails(path, "beyond the end of the file");
    free(raw);
    nmt_model_free(m);
    remove_tmpdir();
}
END_TEST

/* ---- settings and tensors that disagree ---------------------------------- */

START_TEST(model_variants_refused)
{
    make_tmpdir();
    const char *path = tmp_path("v.safetensors");
    nmt_model *m = small_model(NMT_CELL_LSTM, NMT_ATT_BAHDANAU, 1);
    /* the unchanged variant loads: the cases below differ by one thing */
    write_variant(path, m, NULL, NULL, NULL, NULL, 0, 0, NULL);
    nmt_model *back;
    ck_assert_int_eq(nmt_model_load(&back, path, NULL), NMT_OK);
    assert_same_model(m, back);
    nmt_model_free(back);

    write_variant(path, m, "cell", "transformer", NULL, NULL, 0, 0, NULL);
    expect_load_fails(path, "unknown cell 'transformer'");
    write_variant(path, m, "attention", "luong", NULL, NULL, 0, 0, NULL);
    expect_load_fails(path, "unknown attention 'luong'");
    write_variant(path, m, "format", "nmt-2", NULL, NULL, 0, 0, NULL);
    expect_load_fails(path, "format 'nmt-2' is not supported");
    write_variant(path, m, "format", NULL, NULL, NULL, 0, 0, NULL);
    expect_load_fails(path, "not an nmt model");
    write_variant(path, m, "bidirectional", "yes", NULL, NULL, 0, 0, NULL);
    expect_load_fails(path, "bidirectional is 'yes'");
    write_variant(path, m, "hidden", "0", NULL, NULL, 0, 0, NULL);
    expect_load_fails(path, "hidden is '0'");
    write_variant(path, m, "emb", "+3", NULL, NULL, 0, 0, NULL);
    expect_load_fails(path, "emb is '+3'");
    write_variant(path, m, "out_dim", "99999999", NULL, NULL, 0, 0, NULL);
    expect_load_fails(path, "out_dim is '99999999'");
    write_variant(path, m, "lowercase", NULL, NULL, NULL, 0, 0, NULL);
    expect_load_fails(path, "the metadata lacks 'lowercase'");
    write_variant(path, m, "src_vocab", "<pad>\n<s>\n<unk>\n</s>\nx", NULL, NULL, 0, 0, NULL);
    expect_load_fails(path, "src_vocab must begin with <pad>, <unk>, <s>, </s>");
    write_variant(path, m, "tgt_vocab", "<pad>\n<unk>\n<s>\n</s>\nhouse\nhouse\n\xe2\x80\x9e\n}\n{", NULL,
                  NULL, 0, 0, NULL);
    expect_load_fails(path, "appears twice");
    /* settings that disagree with the shapes: hidden 5 instead of 4 */
    write_variant(path, m, "hidden", "5", NULL, NULL, 0, 0, NULL);
    expect_load_fails(path, "tensor 'enc.fwd.W_ih' has shape [16, 3] but the settings");
    expect_load_fails(path, "need [20, 3]");
    /* a vocabulary of another size than the embedding */
    write_variant(path, m, "src_vocab", "<pad>\n<unk>\n<s>\n</s>\nx", NULL, NULL, 0, 0, NULL);
    expect_load_fails(path, "tensor 'src_emb' has shape [10, 3]");
    /* a missing tensor, a tensor of another shape */
    write_variant(path, m, NULL, NULL, "att.v", NULL, 0, 0, NULL);
    expect_load_fails(path, "tensor 'att.v' [5] is missing");
    write_variant(path, m, NULL, NULL, NULL, "dec.b", 16, 1, NULL);
    expect_load_fails(path, "tensor 'dec.b' has shape [16, 1]");
    /* unidirectional settings over a bidirectional model's tensors */
    write_variant(path, m, "bidirectional", "false", NULL, NULL, 0, 0, NULL);
    expect_load_fails(path, "has shape");
    nmt_model_free(m);

    /* att.* in a model without attention */
    m = small_model(NMT_CELL_RNN, NMT_ATT_NONE, 0);
    write_variant(path, m, NULL, NULL, NULL, NULL, 0, 0, "att.v");
    expect_load_fails(path, "tensor 'att.v' is in the file but the settings (attention none");
    /* an unrelated extra tensor is fine */
    write_variant(path, m, NULL, NULL, NULL, NULL, 0, 0, "adam.m.out.b");
    ck_assert_int_eq(nmt_model_load(&back, path, NULL), NMT_OK);
    nmt_model_free(back);
    nmt_model_free(m);
    remove_tmpdir();
}
END_TEST

/* Files whose attention tensors do not fit their kind (small_model: emb 3,
 * hidden 4, att_dim 5, bidirectional D*H 8) are refused, saying which
 * tensor and what the kind needs; so is dot over a bidirectional encoder. */
START_TEST(attention_family_files_refused)
{
    make_tmpdir();
    const char *path = tmp_path("a.safetensors");
    nmt_model *back;
    /* general: att.U [H, D*H] = [4, 8] */
    nmt_model *m = small_model(NMT_CELL_GRU, NMT_ATT_GENERAL, 1);
    write_variant(path, m, NULL, NULL, NULL, "att.U", 5, 8, NULL); /* bahdanau's shape */
    expect_load_fails(path, "tensor 'att.U' has shape [5, 8] but the settings (cell gru, "
                            "attention general, bidirectional");
    expect_load_fails(path, "need [4, 8]");
    write_variant(path, m, NULL, NULL, NULL, NULL, 0, 0, "att.b");
    expect_load_fails(path, "tensor 'att.b' is in the file but the settings (attention general");
    write_variant(path, m, NULL, NULL, "att.U", NULL, 0, 0, NULL);
    expect_load_fails(path, "tensor 'att.U' [4, 8] is missing");
    /* att_dim sizes nothing of general's: 0 loads */
    write_variant(path, m, "att_dim", "0", NULL, NULL, 0, 0, NULL);
    ck_assert_int_eq(nmt_model_load(&back, path, NULL), NMT_OK);
    ck_assert_int_eq(back->cfg.rnn.attention, NMT_ATT_GENERAL);
    nmt_model_free(back);
    /* general's tensors read as bahdanau's: it has no att.W */
    write_variant(path, m, "attention", "bahdanau", NULL, NULL, 0, 0, NULL);
    expect_load_fails(path, "tensor 'att.W' [5, 4] is missing");
    nmt_model_free(m);

    /* scaled-dot: att.W [A, H], att.U [A, D*H], no bias, no v */
    m = small_model(NMT_CELL_LSTM, NMT_ATT_SCALED_DOT, 1);
    write_variant(path, m, NULL, NULL, NULL, NULL, 0, 0, "att.v");
    expect_load_fails(path, "tensor 'att.v' is in the file but the settings (attention scaled-dot");
    write_variant(path, m, NULL, NULL, NULL, "att.W", 4, 4, NULL);
    expect_load_fails(path, "tensor 'att.W' has shape [4, 4]");
    expect_load_fails(path, "need [5, 4]");
    write_variant(path, m, "att_dim", "0", NULL, NULL, 0, 0, NULL);
    expect_load_fails(path, "att_dim is '0'");
    write_variant(path, m, "attention", "general", NULL, NULL, 0, 0, NULL);
    expect_load_fails(path, "tensor 'att.U' has shape [5, 8]");
    nmt_model_free(m);
    /* bahdanau's tensors called scaled-dot: its bias and v are of no use */
    m = small_model(NMT_CELL_LSTM, NMT_ATT_BAHDANAU, 1);
    write_variant(path, m, "attention", "scaled-dot", NULL, NULL, 0, 0, NULL);
    expect_load_fails(path, "tensor 'att.b' is in the file but the settings (attention "
                            "scaled-dot");
    nmt_model_free(m);

    /* dot: no tensors, and a unidirectional encoder */
    m = small_model(NMT_CELL_RNN, NMT_ATT_DOT, 0);
    write_variant(path, m, NULL, NULL, NULL, NULL, 0, 0, NULL);
    ck_assert_int_eq(nmt_model_load(&back, path, NULL), NMT_OK);
    assert_same_model(m, back);
    nmt_model_free(back);
    write_variant(path, m, NULL, NULL, NULL, NULL, 0, 0, "att.U");
    expect_load_fails(path, "tensor 'att.U' is in the file but the settings (attention dot");
    write_variant(path, m, "bidirectional", "true", NULL, NULL, 0, 0, NULL);
    expect_load_fails(path, "attention dot and bidirectional true do not go together: "
                            "attention dot scores s . h_j");
    expect_load_fails(path, "2H = 8");
    nmt_model_free(m);
    remove_tmpdir();
}
END_TEST

/* small_model's tensors and settings with tied = `tied` (NULL: no such key)
 * and out_dim = `out_dim`, and its out.W as it is (out_w 0), left out (-1) or
 * added as [Vt, emb] zeros (1). The crc is right. */
static void write_tied_variant(const char *path, const nmt_model *m, const char *tied,
                               const char *out_dim, int out_w)
{
    static float zeros[4096];
    nmt_named_tensor t[64];
    int n = 0;
    for (int k = 0; k < m->n_tensors; k++) {
        const nmt_tensor_info *ti = &m->tensors[k];
        if (out_w < 0 && !strcmp(ti->name, "out.W"))
            continue;
        if (out_w > 0 && !strcmp(ti->name, "out.b"))
            t[n++] = (nmt_named_tensor){.name = "out.W", .ndim = 2,
                                        .shape = {m->cfg.tgt_vocab, m->cfg.rnn.emb}, .data = zeros};
        t[n++] = (nmt_named_tensor){.name = ti->name, .ndim = ti->ndim,
                                    .shape = {ti->shape[0], ti->shape[1]},
                                    .data = m->params + ti->offset};
    }
    char num[3][16];
    snprintf(num[0], 16, "%d", m->cfg.rnn.emb);
    snprintf(num[1], 16, "%d", m->cfg.rnn.hidden);
    snprintf(num[2], 16, "%d", m->cfg.rnn.att_dim);
    nmt_meta meta[12] = {
        {"format", "nmt-1"}, {"cell", nmt_cell_name(m->cfg.rnn.cell)},
        {"attention", nmt_attention_name(m->cfg.rnn.attention)},
        {"bidirectional", m->cfg.rnn.bidirectional ? "true" : "false"},
        {"emb", num[0]}, {"hidden", num[1]}, {"att_dim", num[2]}, {"out_dim", out_dim},
        {"lowercase", "true"},
        {"src_vocab", "<pad>\n<unk>\n<s>\n</s>\n\"\n\\\nHaus\n\xc3\x84pfel\n\\n\na\"b"},
        {"tgt_vocab", "<pad>\n<unk>\n<s>\n</s>\nhouse\n's\n\xe2\x80\x9e\n}\n{"},
        {"tied", tied},
    };
    ck_assert_int_eq(nmt_st_write(path, t, n, meta, tied ? 12 : 11, "crc32"), NMT_OK);
}

/* Tied output embeddings on disk: metadata tied = true and no out.W; an
 * untied model's file has no tied key at all (absent means false), so it is
 * what it was before tying existed. The loader refuses a file whose tied and
 * tensors disagree. */
START_TEST(tied_model_files)
{
    make_tmpdir();
    const char *path = tmp_path("tied.safetensors");
    nmt_model *m = small_model(NMT_CELL_GRU, NMT_ATT_BAHDANAU, 1), *back;
    nmt_file *f;
    ck_assert_int_eq(nmt_model_save(m, path, NULL, 0, NULL, 0), NMT_OK);
    ck_assert_int_eq(nmt_model_load(&back, path, &f), NMT_OK);
    ck_assert_ptr_null(nmt_file_meta(f, "tied"));
    ck_assert_int_eq(back->cfg.tied, 0);
    nmt_file_free(f);
    nmt_model_free(back);
    nmt_model_free(m);

    /* a tied model (out_dim = emb = 3) round trips */
    const char *toks[] = {"x", "y"};
    nmt_config cfg = {.rnn.cell = NMT_CELL_LSTM, .rnn.attention = NMT_ATT_NONE, .rnn.emb = 3, .rnn.hidden = 4,
                      .rnn.out_dim = 3, .tied = 1};
    ck_assert_int_eq(nmt_model_create(&m, &cfg, vocab_of(toks, 2), vocab_of(toks, 1)), NMT_OK);
    nmt_model_init(m, NMT_INIT_BAHDANAU, 0, 3);
    ck_assert_int_eq(nmt_model_save(m, path, NULL, 0, NULL, 0), NMT_OK);
    ck_assert_int_eq(nmt_model_load(&back, path, &f), NMT_OK);
    ck_assert_str_eq(nmt_file_meta(f, "tied"), "true");
    ck_assert_ptr_null(nmt_file_tensor(f, "out.W", NULL, NULL));
    ck_assert_int_eq(back->cfg.tied, 1);
    ck_assert_uint_eq(back->n_params, m->n_params);
    ck_assert_mem_eq(back->params, m->params, m->n_params * sizeof *m->params);
    nmt_file_free(f);
    nmt_model_free(back);
    nmt_model_free(m);
    /* "tied" is the model's key, not one a caller may add */
    m = small_model(NMT_CELL_GRU, NMT_ATT_BAHDANAU, 1);
    nmt_meta clash = {"tied", "true"};
    ck_assert_int_eq(nmt_model_save(m, tmp_path("x.safetensors"), NULL, 0, &clash, 1), NMT_ERR_ARG);

    /* small_model is untied with emb 3, out_dim 6 */
    write_tied_variant(path, m, "false", "6", 0);
    ck_assert_int_eq(nmt_model_load(&back, path, NULL), NMT_OK);
    nmt_model_free(back);
    write_tied_variant(path, m, NULL, "6", -1);
    expect_load_fails(path, "tensor 'out.W' is missing and tied is not true");
    write_tied_variant(path, m, "true", "6", -1);
    expect_load_fails(path, "tied is true but out_dim (6) is not emb (3)");
    write_tied_variant(path, m, "yes", "6", 0);
    expect_load_fails(path, "tied is 'yes' (expected true or false)");
    nmt_model_free(m);
    /* tied settings over a file that still has an out.W */
    cfg.tied = 0;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, vocab_of(toks, 2), vocab_of(toks, 1)), NMT_OK);
    write_tied_variant(path, m, "true", "3", 0);
    expect_load_fails(path, "tied is true (the output matrix is tgt_emb) but the file has an 'out.W'");
    nmt_model_free(m);
    remove_tmpdir();
}
END_TEST

/* The file at in, written again to out with one change: metadata key set
 * to value (NULL: dropped), and, with add, a tensor of that name [rows,
 * cols] of zeros. The crc is right. */
static void rewrite(const char *in, const char *out, const char *key, const char *value,
                    const char *add, int rows, int cols)
{
    static float zeros[4096];
    nmt_model *m;
    nmt_file *f;
    ck_assert_int_eq(nmt_model_load(&m, in, &f), NMT_OK);
    nmt_named_tensor t[64];
    nmt_meta meta[32];
    int n = 0, n_meta = 0, set = 0;
    for (int k = 0; k < nmt_file_n_tensors(f); k++) {
        const char *name = nmt_file_tensor_name(f, k);
        t[n] = (nmt_named_tensor){.name = name};
        t[n].data = nmt_file_tensor(f, name, &t[n].ndim, t[n].shape);
        ck_assert_ptr_nonnull(t[n].data);
        n++;
    }
    if (add)
        t[n++] = (nmt_named_tensor){.name = add, .ndim = 2, .shape = {rows, cols}, .data = zeros};
    for (int k = 0; k < nmt_file_n_meta(f); k++) {
        const char *k_name = nmt_file_meta_key(f, k);
        if (!strcmp(k_name, "crc32"))
            continue;
        int here = key && !strcmp(k_name, key);
        set |= here;
        if (!here || value)
            meta[n_meta++] = (nmt_meta){k_name, here ? value : nmt_file_meta(f, k_name)};
    }
    if (key && value && !set)
        meta[n_meta++] = (nmt_meta){key, value};
    ck_assert_int_eq(nmt_st_write(out, t, n, meta, n_meta, "crc32"), NMT_OK);
    nmt_file_free(f);
    nmt_model_free(m);
}

/* A joint vocabulary on disk: joint_vocab = true, no src_emb, src_vocab and
 * tgt_vocab both written and equal; a plain Transformer's file has no such
 * key (absent means two vocabularies). The loader refuses a joint file
 * whose lists differ, that holds a src_emb or says neither true nor
 * false, and an RNN's file that claims one, naming why. */
START_TEST(joint_vocab_model_files)
{
    make_tmpdir();
    const char *path = tmp_path("joint.safetensors"), *bad = tmp_path("bad.safetensors");
    const char *toks[] = {"Haus", "house", "\\"};
    nmt_config cfg = {.arch = NMT_ARCH_TRANSFORMER, .tied = 1,
                      .transformer = {.d_model = 4, .heads = 2, .ff = 6, .enc_layers = 1,
                                      .dec_layers = 1}};
    nmt_model *m, *back;
    nmt_file *f;
    for (int joint = 0; joint < 2; joint++) {
        cfg.joint_vocab = joint;
        ck_assert_int_eq(nmt_model_create(&m, &cfg, vocab_of(toks, 3), vocab_of(toks, 3)), NMT_OK);
        nmt_model_init(m, NMT_INIT_XAVIER, 0, 3);
        ck_assert_int_eq(nmt_model_save(m, path, NULL, 0, NULL, 0), NMT_OK);
        ck_assert_int_eq(nmt_model_load(&back, path, &f), NMT_OK);
        ck_assert_int_eq(back->cfg.joint_vocab, joint);
        if (joint) {
            ck_assert_str_eq(nmt_file_meta(f, "joint_vocab"), "true");
            ck_assert_str_eq(nmt_file_meta(f, "src_vocab"), nmt_file_meta(f, "tgt_vocab"));
            ck_assert_ptr_null(nmt_file_tensor(f, "src_emb", NULL, NULL));
        } else {
            ck_assert_ptr_null(nmt_file_meta(f, "joint_vocab"));
            ck_assert_ptr_nonnull(nmt_file_tensor(f, "src_emb", NULL, NULL));
        }
        ck_assert_uint_eq(back->n_params, m->n_params);
        ck_assert_mem_eq(back->params, m->params, m->n_params * sizeof *m->params);
        nmt_file_free(f);
        nmt_model_free(back);
        if (!joint)
            nmt_model_free(m);
    }
    /* the model's key, not one a caller may add */
    nmt_meta clash = {"joint_vocab", "true"};
    ck_assert_int_eq(nmt_model_save(m, bad, NULL, 0, &clash, 1), NMT_ERR_ARG);
    nmt_model_free(m);
    rewrite(path, bad, "joint_vocab", "false", NULL, 0, 0);
    expect_load_fails(bad, "tensor 'src_emb' [7, 4] is missing");
    rewrite(path, bad, "joint_vocab", "yes", NULL, 0, 0);
    expect_load_fails(bad, "joint_vocab is 'yes' (expected true or false)");
    rewrite(path, bad, "tgt_vocab", "<pad>\n<unk>\n<s>\n</s>\nHaus\nhaus\n\\", NULL, 0, 0);
    expect_load_fails(bad, "joint_vocab is true but src_vocab and tgt_vocab differ at id 5 "
                      "('house' and 'haus'");
    rewrite(path, bad, "tgt_vocab", "<pad>\n<unk>\n<s>\n</s>\nHaus\nhouse", NULL, 0, 0);
    expect_load_fails(bad, "src_vocab has 7 tokens and tgt_vocab 6");
    rewrite(path, bad, NULL, NULL, "src_emb", 7, 4);
    expect_load_fails(bad, "joint_vocab is true (tgt_emb embeds both sides) but the file has "
                      "a 'src_emb'");
    /* an RNN of one list on both sides that claims a joint vocabulary */
    nmt_config rnn = {.rnn.cell = NMT_CELL_GRU, .rnn.attention = NMT_ATT_NONE, .rnn.emb = 3,
                      .rnn.hidden = 4, .rnn.out_dim = 3, .tied = 1};
    ck_assert_int_eq(nmt_model_create(&m, &rnn, vocab_of(toks, 3), vocab_of(toks, 3)), NMT_OK);
    ck_assert_int_eq(nmt_model_save(m, path, NULL, 0, NULL, 0), NMT_OK);
    nmt_model_free(m);
    rewrite(path, bad, "joint_vocab", "true", NULL, 0, 0);
    expect_load_fails(bad, "a joint vocabulary (one embedding table for both sides) is a "
                      "Transformer's");
    remove_tmpdir();
}
END_TEST

/* In a model file only "subwords" holds bytes, and it must hold bytes. */
/* The length normalisation nmt train chose ("decode.alpha"): absent in a
 * model that has none (decode_alpha -1, and the file is what it was),
 * written in the fewest digits that read back as the same float, kept by
 * both loaders; a value that is not a number in 0..10 is refused by name,
 * and an extra key may not take the name. */
START_TEST(decode_alpha_in_files)
{
    make_tmpdir();
    const char *path = tmp_path("alpha.safetensors"), *bad = tmp_path("bad.safetensors");
    nmt_model *m = small_model(NMT_CELL_GRU, NMT_ATT_BAHDANAU, 1), *back;
    nmt_file *f;
    ck_assert(m->decode_alpha == -1);
    ck_assert_int_eq(nmt_model_save(m, path, NULL, 0, NULL, 0), NMT_OK);
    ck_assert_int_eq(nmt_model_load(&back, path, &f), NMT_OK);
    ck_assert(back->decode_alpha == -1);
    ck_assert_ptr_null(nmt_file_meta(f, "decode.alpha"));
    nmt_file_free(f);
    nmt_model_free(back);

    static const float alphas[] = {1.6f, 0.6f, 2.0f, 0.0f, 1.0f / 3.0f};
    static const char *const texts[] = {"1.6", "0.6", "2", "0", "0.33333334"};
    for (int k = 0; k < 5; k++) {
        m->decode_alpha = alphas[k];
        ck_assert_int_eq(nmt_model_save(m, path, NULL, 0, NULL, 0), NMT_OK);
        ck_assert_int_eq(nmt_model_load(&back, path, &f), NMT_OK);
        ck_assert_str_eq(nmt_file_meta(f, "decode.alpha"), texts[k]);
        ck_assert(back->decode_alpha == alphas[k]);
        ck_assert(nmt_file_is_model_key("decode.alpha"));
        assert_same_model(m, back);
        nmt_file_free(f);
        nmt_model_free(back);
        /* the loader that keeps no file */
        ck_assert_int_eq(nmt_model_load(&back, path, NULL), NMT_OK);
        ck_assert(back->decode_alpha == alphas[k]);
        nmt_model_free(back);
    }

    m->decode_alpha = 1.2f;
    ck_assert_int_eq(nmt_model_save(m, path, NULL, 0, NULL, 0), NMT_OK);
    static const char *const refused[] = {"", "abc", "-0.5", "10.5", "nan", "inf", "1.2x", "0x1p0 "};
    for (int k = 0; k < 8; k++) {
        rewrite(path, bad, "decode.alpha", refused[k], NULL, 0, 0);
        expect_load_fails(bad, "decode.alpha");
    }
    rewrite(path, bad, "decode.alpha", "10", NULL, 0, 0);
    ck_assert_int_eq(nmt_model_load(&back, bad, NULL), NMT_OK);
    ck_assert(back->decode_alpha == 10.0f);
    nmt_model_free(back);

    nmt_meta extra = {"decode.alpha", "1.0"};
    nmt_clear_error();
    ck_assert_int_ne(nmt_model_save(m, bad, NULL, 0, &extra, 1), NMT_OK);
    nmt_model_free(m);
}
END_TEST

START_TEST(model_byte_tensors_refused)
{
    make_tmpdir();
    const char *path = tmp_path("b.safetensors");
    nmt_model *m = small_model(NMT_CELL_GRU, NMT_ATT_BAHDANAU, 1);
    static const unsigned char junk[3] = {1, 2, 3};
    nmt_named_tensor extra = {.name = "junk", .ndim = 1, .shape = {3, 0}, .bytes = junk};
    ck_assert_int_eq(nmt_model_save(m, path, &extra, 1, NULL, 0), NMT_OK);
    expect_load_fails(path, "tensor 'junk' has dtype U8: only 'subwords' holds bytes");
    float x[2] = {0, 0};
    extra = (nmt_named_tensor){.name = "subwords", .ndim = 1, .shape = {2, 0}, .data = x};
    ck_assert_int_eq(nmt_model_save(m, path, &extra, 1, NULL, 0), NMT_ERR_ARG);
    write_variant(path, m, NULL, NULL, NULL, NULL, 0, 0, "subwords");
    expect_load_fails(path, "tensor 'subwords' must be U8 bytes of one dimension");
    nmt_model_free(m);
    remove_tmpdir();
}
END_TEST

/* ---- numbers that are not finite ----------------------------------------- */

/* Loading `path` (with its file when with_file) fails with NMT_ERR_NUMERIC
 * and a message holding the path and `want`; nothing is handed back. */
static void expect_numeric(const char *path, int with_file, const char *want)
{
    nmt_model *m = (nmt_model *)1;
    nmt_file *f = (nmt_file *)1;
    nmt_clear_error();
    ck_assert_int_eq(nmt_model_load(&m, path, with_file ? &f : NULL), NMT_ERR_NUMERIC);
    ck_assert_ptr_null(m);
    if (with_file)
        ck_assert_ptr_null(f);
    const char *msg = nmt_error_message();
    ck_assert_msg(strstr(msg, path) && strstr(msg, want), "'%s' lacks '%s'", msg, want);
}

/* A NaN, +Inf and -Inf at the first number of the first tensor, the last of
 * the last, and inside a matrix, through both loaders. */
START_TEST(non_finite_weights_refused)
{
    make_tmpdir();
    nmt_model *m = small_model(NMT_CELL_GRU, NMT_ATT_BAHDANAU, 1);
    const nmt_tensor_info *first = &m->tensors[0], *last = &m->tensors[m->n_tensors - 1];
    const nmt_tensor_info *att = nmt_model_tensor(m, "att.U");
    ck_assert_int_eq(first->ndim, 2);
    ck_assert_int_eq(last->ndim, 1);
    struct {
        const nmt_tensor_info *t;
        size_t at;
        char where[32];
    } spots[3] = {{first, 0, " (row 0, column 0)"}, {last, last->size - 1, ""},
                  {att, (size_t)att->shape[1] + 2, " (row 1, column 2)"}};
    const float values[3] = {NAN, INFINITY, -INFINITY};
    const char *const names[3] = {"NaN", "+Inf", "-Inf"};
    const char *path = tmp_path("bad.safetensors");
    char want[160];
    for (int s = 0; s < 3; s++)
        for (int v = 0; v < 3; v++) {
            nmt_real *x = m->params + spots[s].t->offset + spots[s].at, keep = *x;
            *x = values[v];
            ck_assert_int_eq(nmt_model_save(m, path, NULL, 0, NULL, 0), NMT_OK);
            *x = keep;
            snprintf(want, sizeof want, ": tensor '%s' holds %s at index %zu%s: ",
                     spots[s].t->name, names[v], spots[s].at, spots[s].where);
            expect_numeric(path, 0, want);
            expect_numeric(path, 1, want);
            /* the in-memory loader, as the fuzzers and Python give it bytes */
            FILE *f = fopen(path, "rb");
            static unsigned char buf[1 << 16];
            size_t n = fread(buf, 1, sizeof buf, f);
            fclose(f);
            ck_assert_uint_lt(n, sizeof buf);
            nmt_model *back = (nmt_model *)1;
            ck_assert_int_eq(nmt_model_load_memory(&back, buf, n, "mem.safetensors", NULL),
                             NMT_ERR_NUMERIC);
            ck_assert_ptr_null(back);
            ck_assert_ptr_nonnull(strstr(nmt_error_message(), "mem.safetensors: tensor"));
        }
    /* the first bad number is the one named */
    m->params[last->offset + 1] = NAN;
    m->params[first->offset + 5] = INFINITY;
    ck_assert_int_eq(nmt_model_save(m, path, NULL, 0, NULL, 0), NMT_OK);
    snprintf(want, sizeof want, "tensor '%s' holds +Inf at index 5 ", first->name);
    expect_numeric(path, 0, want);
    nmt_model_free(m);
    remove_tmpdir();
}
END_TEST

/* The largest finite floats, and the smallest denormal, are numbers like
 * any other. */
START_TEST(large_finite_weights_load)
{
    make_tmpdir();
    nmt_model *m = small_model(NMT_CELL_GRU, NMT_ATT_BAHDANAU, 1), *back;
    m->params[0] = 3.4028235e38f;
    m->params[1] = -3.4028235e38f;
    m->params[m->n_params - 1] = 1e-45f;
    const char *path = tmp_path("big.safetensors");
    ck_assert_int_eq(nmt_model_save(m, path, NULL, 0, NULL, 0), NMT_OK);
    ck_assert_msg(nmt_model_load(&back, path, NULL) == NMT_OK, "%s", nmt_error_message());
    ck_assert_mem_eq(back->params, m->params, m->n_params * sizeof *m->params);
    nmt_model_free(back);
    nmt_model_free(m);
    remove_tmpdir();
}
END_TEST

/* A checkpoint's moments are checked when the file is held, as a resume
 * holds it (a NaN there would poison every step after), and not read when
 * only the model is wanted (translation never uses them). The moment is the
 * file's last tensor, and the NaN its last number. */
START_TEST(non_finite_moments_refused_on_resume)
{
    make_tmpdir();
    nmt_model *m = small_model(NMT_CELL_GRU, NMT_ATT_BAHDANAU, 1), *back;
    const nmt_tensor_info *b = nmt_model_tensor(m, "out.b");
    float first[16] = {0}, moment[16] = {0};
    ck_assert_uint_le(b->size, 16);
    nmt_named_tensor extra[2] = {{"adam.m.out.b", 1, {b->shape[0], 0}, first, NULL},
                                 {"adam.v.out.b", 1, {b->shape[0], 0}, moment, NULL}};
    const char *path = tmp_path("checkpoint.safetensors");
    char want[160];
    const float values[2] = {NAN, -INFINITY};
    for (int v = 0; v < 2; v++) {
        moment[b->size - 1] = values[v];
        ck_assert_int_eq(nmt_model_save(m, path, extra, 2, NULL, 0), NMT_OK);
        snprintf(want, sizeof want, "tensor 'adam.v.out.b' holds %s at index %zu: ",
                 v ? "-Inf" : "NaN", b->size - 1);
        expect_numeric(path, 1, want);
        ck_assert_msg(nmt_model_load(&back, path, NULL) == NMT_OK, "%s", nmt_error_message());
        nmt_model_free(back);
    }
    /* finite moments: the checkpoint loads with its file */
    moment[b->size - 1] = 0.5f;
    ck_assert_int_eq(nmt_model_save(m, path, extra, 2, NULL, 0), NMT_OK);
    nmt_file *f;
    ck_assert_msg(nmt_model_load(&back, path, &f) == NMT_OK, "%s", nmt_error_message());
    nmt_file_free(f);
    nmt_model_free(back);
    nmt_model_free(m);
    remove_tmpdir();
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("modelfile");
    TCase *tc = tcase_create("model");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, model_round_trip_all_configurations);
    tcase_add_test(tc, checkpoint_extras);
    tcase_add_test(tc, model_alone_from_a_checkpoint);
    tcase_add_test(tc, crc_checked);
    tcase_add_test(tc, truncated_model_refused);
    tcase_add_test(tc, model_variants_refused);
    tcase_add_test(tc, attention_family_files_refused);
    tcase_add_test(tc, tied_model_files);
    tcase_add_test(tc, joint_vocab_model_files);
    tcase_add_test(tc, model_byte_tensors_refused);
    tcase_add_test(tc, decode_alpha_in_files);
    suite_add_tcase(s, tc);
    tc = tcase_create("finite");
    tcase_add_test(tc, non_finite_weights_refused);
    tcase_add_test(tc, large_finite_weights_load);
    tcase_add_test(tc, non_finite_moments_refused_on_resume);
    suite_add_tcase(s, tc);
    return s;
}
