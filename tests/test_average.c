/* Checkpoint averaging: the mean is the one computed here, in double and
 * rounded once; a checkpoint's optimizer state and run metadata do not
 * matter; anything else that differs is refused naming both files and what
 * differs, generically (keys and tensors this code has never heard of). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nmt/average.h"
#include "nmt/error.h"
#include "nmt/modelfile.h"
#include "nmt/rng.h"
#include "test_common.h"
#include "test_files.h"

static const char *const src_tokens[] = {"<pad>", "<unk>", "<s>", "</s>", "ein", "Haus"};
static const char *const tgt_tokens[] = {"<pad>", "<unk>", "<s>", "</s>", "a", "house"};

/* A gru/bahdanau model of the given hidden size with random weights. */
static nmt_model *make_model(int hidden, uint64_t seed, const char *last_tgt, int lowercase)
{
    const char *tgt[6];
    memcpy(tgt, tgt_tokens, sizeof tgt);
    if (last_tgt)
        tgt[5] = last_tgt;
    nmt_vocab *sv, *tv;
    ck_assert_int_eq(nmt_vocab_from_tokens(&sv, src_tokens, 6), NMT_OK);
    ck_assert_int_eq(nmt_vocab_from_tokens(&tv, tgt, 6), NMT_OK);
    nmt_config cfg = {.rnn.cell = NMT_CELL_GRU, .rnn.attention = NMT_ATT_BAHDANAU, .rnn.bidirectional = 1,
                      .rnn.emb = 3, .rnn.hidden = hidden, .rnn.att_dim = 4, .rnn.out_dim = 5,
                      .lowercase = lowercase};
    nmt_model *m;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, sv, tv), NMT_OK);
    nmt_rng r;
    nmt_rng_seed(&r, seed);
    for (size_t i = 0; i < m->n_params; i++)
        m->params[i] = (float)(nmt_rng_normal(&r) * pow(10, (double)(i % 7) - 3));
    return m;
}

static const char *save(const nmt_model *m, const char *name, const nmt_named_tensor *extra,
                        int n_extra, const nmt_meta *meta, int n_meta)
{
    const char *path = tmp_path(name);
    ck_assert_msg(nmt_model_save(m, path, extra, n_extra, meta, n_meta) == NMT_OK, "%s",
                  nmt_error_message());
    return path;
}

START_TEST(mean_of_three_in_double)
{
    make_tmpdir();
    nmt_model *m[3];
    char paths[3][256];
    for (int k = 0; k < 3; k++) {
        m[k] = make_model(6, 10 + (uint64_t)k, NULL, 0);
        char name[32];
        snprintf(name, sizeof name, "m%d.safetensors", k);
        snprintf(paths[k], sizeof paths[k], "%s", save(m[k], name, NULL, 0, NULL, 0));
    }
    const char *const list[3] = {paths[0], paths[1], paths[2]};
    nmt_model *avg;
    ck_assert_msg(nmt_average_models(&avg, list, 3) == NMT_OK, "%s", nmt_error_message());
    ck_assert_uint_eq(avg->n_params, m[0]->n_params);
    size_t differ_from_float_sum = 0;
    for (size_t i = 0; i < avg->n_params; i++) {
        float want = (float)(((double)m[0]->params[i] + (double)m[1]->params[i] +
                              (double)m[2]->params[i]) / 3);
        ck_assert_msg(avg->params[i] == want, "weight %zu: %.9g, expected %.9g", i,
                      (double)avg->params[i], (double)want);
        differ_from_float_sum += avg->params[i] !=
                                 (m[0]->params[i] + m[1]->params[i] + m[2]->params[i]) / 3.0f;
    }
    /* the weights span seven orders of magnitude: float sums would differ */
    ck_assert_uint_gt(differ_from_float_sum, 0);
    ck_assert_int_eq(nmt_vocab_size(avg->tgt_vocab), 6);
    ck_assert_str_eq(nmt_vocab_token(avg->tgt_vocab, 5), "house");
    nmt_model_free(avg);

    /* one file: an exact copy */
    ck_assert_int_eq(nmt_average_models(&avg, list + 1, 1), NMT_OK);
    ck_assert(memcmp(avg->params, m[1]->params, m[1]->n_params * sizeof(float)) == 0);
    nmt_model_free(avg);
    for (int k = 0; k < 3; k++)
        nmt_model_free(m[k]);
    remove_tmpdir();
}
END_TEST

/* A checkpoint's moments and run metadata differ between files and do not
 * matter: only the weights are averaged. */
START_TEST(checkpoints_average_their_weights_only)
{
    make_tmpdir();
    nmt_model *a = make_model(6, 1, NULL, 0), *b = make_model(6, 2, NULL, 0);
    const nmt_tensor_info *emb = nmt_model_tensor(a, "src_emb");
    float moment_a[18], moment_b[18];
    for (int i = 0; i < 18; i++) {
        moment_a[i] = (float)i;
        moment_b[i] = (float)-i;
    }
    nmt_named_tensor ea = {"adam.m.src_emb", 2, {emb->shape[0], emb->shape[1]}, moment_a, NULL};
    nmt_named_tensor eb = {"adam.m.src_emb", 2, {emb->shape[0], emb->shape[1]}, moment_b, NULL};
    nmt_meta ma[2] = {{"state.step", "100"}, {"train.lr", "0.001"}};
    nmt_meta mb[2] = {{"state.step", "200"}, {"best.valid_bleu", "3.5"}};
    const char *list[2];
    char pa[256], pb[256];
    snprintf(pa, sizeof pa, "%s", save(a, "a.safetensors", &ea, 1, ma, 2));
    snprintf(pb, sizeof pb, "%s", save(b, "b.safetensors", &eb, 1, mb, 2));
    list[0] = pa;
    list[1] = pb;
    nmt_model *avg;
    ck_assert_msg(nmt_average_models(&avg, list, 2) == NMT_OK, "%s", nmt_error_message());
    for (size_t i = 0; i < avg->n_params; i++)
        ck_assert(avg->params[i] == (float)(((double)a->params[i] + (double)b->params[i]) / 2));
    /* written and read back, it is a plain model */
    const char *out = tmp_path("avg.safetensors");
    ck_assert_int_eq(nmt_model_save(avg, out, NULL, 0, NULL, 0), NMT_OK);
    nmt_model *back;
    nmt_file *f;
    ck_assert_int_eq(nmt_model_load(&back, out, &f), NMT_OK);
    ck_assert_int_eq(nmt_file_n_tensors(f), back->n_tensors);
    ck_assert_ptr_null(nmt_file_meta(f, "state.step"));
    ck_assert(memcmp(back->params, avg->params, avg->n_params * sizeof(float)) == 0);
    nmt_file_free(f);
    nmt_model_free(back);
    nmt_model_free(avg);
    nmt_model_free(a);
    nmt_model_free(b);
    remove_tmpdir();
}
END_TEST

/* Averages a (written plainly, or with extra tensors/metadata) with b and
 * expects a refusal whose message names both files and holds `what`. */
static void expect_refusal(const char *pa, const char *pb, int code, const char *what)
{
    const char *list[2] = {pa, pb};
    nmt_model *avg = (nmt_model *)1;
    ck_assert_int_eq(nmt_average_models(&avg, list, 2), code);
    ck_assert_ptr_null(avg);
    const char *msg = nmt_error_message();
    ck_assert_msg(strstr(msg, what), "'%s' lacks '%s'", msg, what);
    if (code == NMT_ERR_ARG) {
        ck_assert_msg(strstr(msg, pa) && strstr(msg, pb), "'%s' does not name both files", msg);
    }
}

START_TEST(different_models_are_refused)
{
    make_tmpdir();
    nmt_model *a = make_model(6, 1, NULL, 0);
    char pa[256], p[256];
    snprintf(pa, sizeof pa, "%s", save(a, "a.safetensors", NULL, 0, NULL, 0));

    nmt_model *m = make_model(7, 1, NULL, 0);
    snprintf(p, sizeof p, "%s", save(m, "hidden.safetensors", NULL, 0, NULL, 0));
    expect_refusal(pa, p, NMT_ERR_ARG, "'hidden' ('6' and '7')");
    nmt_model_free(m);

    m = make_model(6, 1, "home", 0);
    snprintf(p, sizeof p, "%s", save(m, "vocab.safetensors", NULL, 0, NULL, 0));
    expect_refusal(pa, p, NMT_ERR_ARG, "'tgt_vocab' (entry 5 is 'house' and 'home')");
    nmt_model_free(m);

    m = make_model(6, 1, NULL, 1);
    snprintf(p, sizeof p, "%s", save(m, "lower.safetensors", NULL, 0, NULL, 0));
    expect_refusal(pa, p, NMT_ERR_ARG, "'lowercase'");
    nmt_model_free(m);

    /* a setting this code has never heard of (a dot-free key, as the
     * design's are) is compared too; absent counts as "false" */
    nmt_meta flag_on = {"future_flag", "true"}, flag_off = {"future_flag", "false"};
    snprintf(p, sizeof p, "%s", save(a, "flag.safetensors", NULL, 0, &flag_on, 1));
    expect_refusal(pa, p, NMT_ERR_ARG, "'future_flag' (absent and 'true')");
    expect_refusal(p, pa, NMT_ERR_ARG, "'future_flag' ('true' and absent)");
    snprintf(p, sizeof p, "%s", save(a, "off.safetensors", NULL, 0, &flag_off, 1));
    const char *list[2] = {pa, p};
    nmt_model *avg;
    ck_assert_msg(nmt_average_models(&avg, list, 2) == NMT_OK, "%s", nmt_error_message());
    nmt_model_free(avg);

    /* so is any tensor that is neither a weight nor an optimizer moment
     * (a serialized tokenizer, say) */
    float blob_a[3] = {1, 2, 3}, blob_b[3] = {1, 2, 4};
    nmt_named_tensor ta = {"tokenizer", 1, {3, 0}, blob_a, NULL}, tb = {"tokenizer", 1, {3, 0}, blob_b, NULL};
    char pt[256];
    snprintf(pt, sizeof pt, "%s", save(a, "ta.safetensors", &ta, 1, NULL, 0));
    snprintf(p, sizeof p, "%s", save(a, "tb.safetensors", &tb, 1, NULL, 0));
    expect_refusal(pt, p, NMT_ERR_ARG, "the contents of tensor 'tokenizer'");
    expect_refusal(pa, pt, NMT_ERR_ARG, "tensor 'tokenizer' (only the second has it)");
    expect_refusal(pt, pa, NMT_ERR_ARG, "tensor 'tokenizer' (only the first has it)");
    nmt_named_tensor tc = {"tokenizer", 2, {1, 3}, blob_a, NULL};
    snprintf(p, sizeof p, "%s", save(a, "tc.safetensors", &tc, 1, NULL, 0));
    expect_refusal(pt, p, NMT_ERR_ARG, "the shape of tensor 'tokenizer'");
    list[1] = pt;
    list[0] = save(a, "td.safetensors", &ta, 1, NULL, 0);
    ck_assert_msg(nmt_average_models(&avg, list, 2) == NMT_OK, "%s", nmt_error_message());
    nmt_model_free(avg);
    nmt_model_free(a);
    remove_tmpdir();
}
END_TEST

START_TEST(hostile_inputs_are_refused)
{
    make_tmpdir();
    nmt_model *a = make_model(6, 1, NULL, 0);
    char pa[256], p[256];
    snprintf(pa, sizeof pa, "%s", save(a, "a.safetensors", NULL, 0, NULL, 0));
    a->params[nmt_model_tensor(a, "dec.b")->offset + 2] = NAN;
    snprintf(p, sizeof p, "%s", save(a, "nan.safetensors", NULL, 0, NULL, 0));
    /* the loader refuses it (before the mean would) */
    expect_refusal(pa, p, NMT_ERR_NUMERIC, "nan.safetensors: tensor 'dec.b' holds NaN at index 2");
    a->params[nmt_model_tensor(a, "dec.b")->offset + 2] = INFINITY;
    snprintf(p, sizeof p, "%s", save(a, "inf.safetensors", NULL, 0, NULL, 0));
    expect_refusal(p, pa, NMT_ERR_NUMERIC, "inf.safetensors: tensor 'dec.b'");

    snprintf(p, sizeof p, "%s", tmp_path("missing.safetensors"));
    expect_refusal(pa, p, NMT_ERR_IO, "missing.safetensors");
    snprintf(p, sizeof p, "%s", write_file("junk.safetensors", "not a model at all", 18));
    expect_refusal(pa, p, NMT_ERR_FORMAT, "junk.safetensors");
    expect_refusal(p, pa, NMT_ERR_FORMAT, "junk.safetensors");

    nmt_model *avg = (nmt_model *)1;
    ck_assert_int_eq(nmt_average_models(&avg, NULL, 0), NMT_ERR_ARG);
    ck_assert_ptr_null(avg);
    nmt_model_free(a);
    remove_tmpdir();
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("average");
    TCase *tc = tcase_create("average");
    tcase_add_test(tc, mean_of_three_in_double);
    tcase_add_test(tc, checkpoints_average_their_weights_only);
    tcase_add_test(tc, different_models_are_refused);
    tcase_add_test(tc, hostile_inputs_are_refused);
    suite_add_tcase(s, tc);
    return s;
}
