/* libFuzzer target: the model-file loader (safetensors header, metadata,
 * shapes, crc32, vocabularies) on arbitrary bytes.
 *
 * The bytes are loaded twice, from memory and from a file (two readers of
 * the prefix and the data, which must agree; the file's reader keeps only
 * the model's tensors, and must give the same model). Every input must end in NMT_OK
 * or an error code with a message, never a crash, a leak or a sanitizer
 * report. A model that loads must be what it claims: each tensor the model
 * holds equal to the file's tensor of that name, the vocabularies as large as
 * the settings, and usable: one sentence is encoded and one decoder step
 * taken, as `nmt translate` and `nmt info -v` would; the training settings of
 * a checkpoint are read as `nmt train --resume` reads them (the metadata is
 * not covered by the crc32). A broken invariant traps.
 * Seeds: tests/fuzz/modelfile/ (small models written by nmt train, one of
 * them reading subwords). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_file.h"
#include "nmt/error.h"
#include "nmt/modelfile.h"
#include "nmt/train.h"
#include "nmt/units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) \
    do {            \
        if (!(cond)) \
            __builtin_trap(); \
    } while (0)

/* What nmt info -v lists: every tensor and every metadata value. */
static void list_file(const nmt_file *f)
{
    for (int i = 0; i < nmt_file_n_tensors(f); i++) {
        const char *name = nmt_file_tensor_name(f, i);
        CHECK(name);
        int ndim = -1, shape[NMT_MAX_NDIM] = {-1, -1, -1, -1};
        if (nmt_file_tensor(f, name, &ndim, shape)) {
            CHECK(ndim >= 0 && ndim <= NMT_MAX_NDIM);
            for (int d = 0; d < NMT_MAX_NDIM; d++)
                CHECK(shape[d] >= 0 && (d < ndim || shape[d] == 0));
        }
    }
    for (int i = 0; i < nmt_file_n_meta(f); i++) {
        const char *key = nmt_file_meta_key(f, i);
        CHECK(key && nmt_file_meta(f, key));
    }
    CHECK(!nmt_file_tensor(f, "no such tensor", NULL, NULL));
    CHECK(!nmt_file_meta(f, "no such key"));
}

static void check_model(const nmt_model *m, const nmt_file *f)
{
    CHECK(nmt_vocab_size(m->src_vocab) == m->cfg.src_vocab);
    CHECK(nmt_vocab_size(m->tgt_vocab) == m->cfg.tgt_vocab);
    CHECK(m->cfg.src_vocab >= NMT_N_SPECIAL && m->cfg.tgt_vocab >= NMT_N_SPECIAL);
    for (int i = 0; i < m->n_tensors; i++) {
        const nmt_tensor_info *t = &m->tensors[i];
        int ndim, shape[NMT_MAX_NDIM];
        const float *x = nmt_file_tensor(f, t->name, &ndim, shape);
        CHECK(x && ndim == t->ndim && shape[0] == t->shape[0]);
        CHECK(ndim == 1 || shape[1] == t->shape[1]);
        CHECK(t->offset + t->size <= m->n_params);
        CHECK(!memcmp(x, m->params + t->offset, t->size * sizeof *x));
    }
}

/* One source sentence "<unk> </s>" encoded and one step from <s>. */
static void run_model(const nmt_model *m)
{
    nmt_infer *st;
    if (nmt_infer_create(&st, m, 1, 2, 1, 256) != NMT_OK)
        return; /* out of memory is allowed */
    const int32_t src[2] = {NMT_UNK, NMT_EOS};
    const int src_len[1] = {2};
    const int32_t prev[1] = {NMT_BOS};
    float *logprobs = malloc((size_t)m->cfg.tgt_vocab * sizeof *logprobs);
    float att[2];
    if (logprobs && nmt_infer_encode(m, st, src, src_len, 1, 2) == NMT_OK)
        nmt_infer_step(m, st, prev, logprobs, att);
    free(logprobs);
    nmt_infer_free(st);
}

/* A model that reads subwords: its pieces are both vocabularies, the file
 * holds them, and a sentence goes to pieces and back as nmt translate does
 * (SentencePiece walks the model's normalization table here). */
static void run_subwords(const nmt_model *m, const nmt_file *f)
{
    size_t n_file, n_model;
    const unsigned char *in_file = nmt_file_bytes(f, "subwords", &n_file);
    if (!m->subwords) {
        CHECK(!in_file);
        return;
    }
    const unsigned char *in_model = nmt_subwords_bytes(m->subwords, &n_model);
    CHECK(in_file && n_file == n_model && !memcmp(in_file, in_model, n_file));
    CHECK(nmt_subwords_size(m->subwords) == m->cfg.src_vocab);
    CHECK(nmt_subwords_size(m->subwords) == m->cfg.tgt_vocab);
    nmt_tokens t = {0};
    static const char line[] = "Zwei Männer ｆｕｌｌ ½ spielen\t Fußball… ﬁ 犬";
    if (nmt_units_split(m, line, sizeof line - 1, &t) == NMT_OK) {
        for (size_t k = 0; k < t.n; k++)
            CHECK(nmt_vocab_id(m->src_vocab, t.tok[k], t.len[k]) < m->cfg.src_vocab);
        free(nmt_units_join(m, (const char *const *)t.tok, t.n));
    }
    nmt_tokens_free(&t);
}

/* A checkpoint's settings: refused with a message, or within the ranges the
 * command line allows. */
static void read_settings(const nmt_model *m, const nmt_file *f)
{
    nmt_train_settings s;
    if (nmt_train_settings_from_file(&s, f, &m->cfg) != NMT_OK) {
        CHECK(nmt_error_message()[0]);
        return;
    }
    CHECK(s.src_path && s.tgt_path);
    CHECK(s.batch_size >= 1 && s.threads >= 1);
    CHECK(!memcmp(&s.model, &m->cfg, sizeof s.model)); /* the model's, whatever train.* says */
    CHECK(s.lr > 0 && s.clip >= 0 && s.dropout_emb >= 0 && s.dropout_emb < 1 &&
          s.dropout_enc >= 0 && s.dropout_enc < 1 && s.dropout_out >= 0 && s.dropout_out < 1 &&
          s.dropout_residual >= 0 && s.dropout_residual < 1 && s.dropout_att >= 0 &&
          s.dropout_att < 1 && s.dropout_ff >= 0 && s.dropout_ff < 1 &&
          s.label_smoothing >= 0 && s.label_smoothing < 1 && s.warmup >= 0 &&
          (s.warmup == 0 || s.patience == 0));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nmt_model *m = NULL, *m2 = NULL;
    nmt_file *f = NULL;
    int rc = nmt_model_load_memory(&m, data, size, "fuzz", &f);
    if (rc == NMT_OK) {
        CHECK(m && f && nmt_file_size(f) == size);
        list_file(f);
        check_model(m, f);
        run_model(m);
        run_subwords(m, f);
        read_settings(m, f);
    } else {
        CHECK(!m && !f);
        CHECK(nmt_error_message()[0]); /* a refusal must say why */
    }
    /* the same bytes from a file: the same verdict */
    int rc2 = nmt_model_load(&m2, fuzz_file(0, data, size), NULL);
    CHECK(rc2 == rc || (rc != NMT_OK && rc2 != NMT_OK));
    /* ... and the same model, though the file reader holds only the model's
     * tensors (nmt_st_read_some) */
    if (rc == NMT_OK)
        CHECK(m2->n_params == m->n_params &&
              !memcmp(m2->params, m->params, m->n_params * sizeof *m->params) &&
              !m2->subwords == !m->subwords);
    nmt_file_free(f);
    nmt_model_free(m);
    nmt_model_free(m2);
    return 0;
}
