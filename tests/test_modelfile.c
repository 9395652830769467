/* Model files whose numbers are not finite (src/modelfile.c, step 8 of
 * "Loading" in docs/DESIGN.md): a NaN, +Inf or -Inf anywhere in a model's
 * weights is refused with the file, the tensor and the index of the first
 * one; in a checkpoint's optimizer moments when they are held (a resume),
 * and not when only the model is wanted. The file's CRC is right in every
 * case: nmt_model_save writes what it is given. Large finite numbers load. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"
#include "nmt/modelfile.h"
#include "test_common.h"
#include "test_files.h"

static nmt_vocab *vocab_of(const char *const *extra, int n)
{
    const char *tok[16] = {"<pad>", "<unk>", "<s>", "</s>"};
    for (int k = 0; k < n; k++)
        tok[4 + k] = extra[k];
    nmt_vocab *v;
    ck_assert_int_eq(nmt_vocab_from_tokens(&v, tok, (size_t)(4 + n)), NMT_OK);
    return v;
}

static nmt_model *small_model(void)
{
    static const char *const src[] = {"ein", "Hund", "läuft"};
    static const char *const tgt[] = {"a", "dog", "runs", "."};
    nmt_config cfg = {.rnn.cell = NMT_CELL_GRU, .rnn.attention = NMT_ATT_BAHDANAU, .rnn.bidirectional = 1,
                      .rnn.emb = 3, .rnn.hidden = 4, .rnn.att_dim = 5, .rnn.out_dim = 6};
    nmt_model *m;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, vocab_of(src, 3), vocab_of(tgt, 4)), NMT_OK);
    nmt_model_init(m, NMT_INIT_BAHDANAU, 0, 7);
    return m;
}

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
    nmt_model *m = small_model();
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
    nmt_model *m = small_model(), *back;
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
    nmt_model *m = small_model(), *back;
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
    TCase *tc = tcase_create("finite");
    tcase_add_test(tc, non_finite_weights_refused);
    tcase_add_test(tc, large_finite_weights_load);
    tcase_add_test(tc, non_finite_moments_refused_on_resume);
    suite_add_tcase(s, tc);
    return s;
}
