/* The training loop's contract, checked from outside: one SGD step of
 * `nmt train` moves every weight by exactly minus its gradient; settings
 * survive a checkpoint bit for bit; the progress text has its columns. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nmt/batch.h"
#include "nmt/corpus.h"
#include "nmt/error.h"
#include "nmt/modelfile.h"
#include "nmt/rng.h"
#include "nmt/progress.h"
#include "nmt/runlog.h"
#include "nmt/train.h"
#include "test_common.h"

static char tmpdir[256];

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/nmt-test-train-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

static void write_file(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static int mkdir_in_tmp(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    return mkdir(path, 0777);
}

/* Runs `nmt train ARGS`, each "@" in ARGS standing for the temporary folder. */
static int nmt_train(const char *args)
{
    char expanded[2048], cmd[2600];
    size_t n = 0;
    for (const char *p = args; *p && n + sizeof tmpdir < sizeof expanded; p++) {
        if (*p == '@')
            n += (size_t)snprintf(expanded + n, sizeof expanded - n, "%s", tmpdir);
        else
            expanded[n++] = *p;
    }
    expanded[n] = 0;
    snprintf(cmd, sizeof cmd, "'%s' train -q %s", NMT_BIN(), expanded);
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* ---- one SGD step -------------------------------------------------------- */

static const char *const src_text =
    "ein kleiner Hund läuft über die Wiese .\n"
    "eine Katze schläft\n"
    "zwei Männer spielen Fußball im Park , und eine Frau sieht zu .\n"
    "ein Kind isst ein Eis .\n";
static const char *const tgt_text =
    "a small dog runs across the meadow .\n"
    "a cat sleeps\n"
    "two men play football in the park , and a woman watches .\n"
    "a child eats an ice cream .\n";

static void check_sgd_step(const char *arch)
{
    make_tmpdir();
    write_file("src.txt", src_text);
    write_file("tgt.txt", tgt_text);
    char args[1024];
    snprintf(args, sizeof args, "--arch rnn --src @/src.txt --tgt @/tgt.txt %s --emb 6 "
             "--hidden 5 --att-dim 4 --out-dim 7 --seed 3 --max-steps 0 --out @/init", arch);
    ck_assert_int_eq(nmt_train(args), 0);
    /* the init has zero biases and att.v (which zero the gradients of att.*):
     * start from weights perturbed everywhere instead */
    char path[512];
    nmt_model *before, *after;
    snprintf(path, sizeof path, "%s/init/checkpoint.safetensors", tmpdir);
    ck_assert_msg(nmt_model_load(&before, path, NULL) == NMT_OK, "%s", nmt_error_message());
    nmt_rng r;
    nmt_rng_seed(&r, 5);
    for (size_t i = 0; i < before->n_params; i++)
        before->params[i] += (float)(0.3 * nmt_rng_normal(&r));
    ck_assert_int_eq(mkdir_in_tmp("start"), 0);
    snprintf(path, sizeof path, "%s/start/model.safetensors", tmpdir);
    ck_assert_msg(nmt_model_save(before, path, NULL, 0, NULL, 0) == NMT_OK, "%s",
                  nmt_error_message());
    ck_assert_int_eq(nmt_train("--src @/src.txt --tgt @/tgt.txt --init-from "
                               "@/start/model.safetensors --optimizer sgd --lr 1 "
                               "--clip 0 --dropout 0 --label-smoothing 0 --no-shuffle --batch-size 4 "
                               "--max-steps 1 --out @/step"), 0);
    snprintf(path, sizeof path, "%s/step/checkpoint.safetensors", tmpdir);
    ck_assert_msg(nmt_model_load(&after, path, NULL) == NMT_OK, "%s", nmt_error_message());
    ck_assert_uint_eq(before->n_params, after->n_params);

    /* the gradient of the 4-pair batch, computed here */
    nmt_corpus c;
    nmt_corpus_opts o = {.lowercase = before->cfg.lowercase, .max_len = 50, .skip_empty = 1};
    char sp[512], tp[512];
    snprintf(sp, sizeof sp, "%s/src.txt", tmpdir);
    snprintf(tp, sizeof tp, "%s/tgt.txt", tmpdir);
    ck_assert_int_eq(nmt_corpus_read(&c, sp, tp, &o, &before->src_vocab, &before->tgt_vocab),
                     NMT_OK);
    ck_assert_uint_eq(c.n, 4);
    nmt_batch_plan plan;
    ck_assert_int_eq(nmt_batch_plan_make(&plan, &c, 4, 0, 0, 1), NMT_OK);
    ck_assert_uint_eq(plan.n_batches, 1);
    nmt_batch b;
    ck_assert_int_eq(nmt_batch_alloc(&b, 4, 64, 64), NMT_OK);
    ck_assert_int_eq(nmt_batch_fill(&b, &c, plan.index, 4), NMT_OK);
    nmt_workspace *ws;
    ck_assert_int_eq(nmt_workspace_create(&ws, before, 4, b.src_T, b.tgt_T), NMT_OK);
    ck_assert_int_eq(nmt_model_alloc_grads(before), NMT_OK);
    nmt_model_zero_grad(before);
    nmt_real loss;
    ck_assert_int_eq(nmt_forward(&loss, before, ws, &b, NULL, NULL), NMT_OK);
    ck_assert(isfinite(loss) && loss > 0);
    ck_assert_int_eq(nmt_backward(before, ws, &b), NMT_OK);

    /* every weight moved by exactly minus its gradient (float rounding of
     * p - g aside), and every tensor moved */
    double worst = 0;
    for (int k = 0; k < before->n_tensors; k++) {
        const nmt_tensor_info *ti = &before->tensors[k];
        size_t moved = 0;
        for (size_t i = ti->offset; i < ti->offset + ti->size; i++) {
            float expect = before->params[i] - before->grads[i];
            double err = fabs((double)after->params[i] - (double)expect) /
                         (1.0 + fabs((double)before->params[i]));
            if (err > worst)
                worst = err;
            moved += after->params[i] != before->params[i];
        }
        ck_assert_msg(moved > 0, "%s: tensor %s did not move", arch, ti->name);
    }
    ck_assert_msg(worst <= 1e-6, "%s: worst relative error %g", arch, worst);

    nmt_workspace_free(ws);
    nmt_batch_free(&b);
    nmt_batch_plan_free(&plan);
    nmt_corpus_free(&c);
    nmt_model_free(before);
    nmt_model_free(after);
    remove_tmpdir();
}

START_TEST(sgd_step_is_minus_the_gradient)
{
    static const char *const archs[] = {
        "--cell lstm --attention bahdanau --bidirectional",
        "--cell gru --attention none --unidirectional",
        "--cell rnn --attention bahdanau --unidirectional",
    };
    check_sgd_step(archs[_i]);
}
END_TEST

/* ---- validation ------------------------------------------------------------- */

/* A freshly initialised model predicts nearly uniformly (its logits are
 * N(0, 0.01^2) products, near 0), so its perplexity is close to the target
 * vocabulary's size; and a hypothesis equal to its reference scores 100. */
START_TEST(validation_of_an_untrained_model)
{
    make_tmpdir();
    write_file("src.txt", src_text);
    write_file("tgt.txt", tgt_text);
    char path[512], sp[512], tp[512];
    snprintf(sp, sizeof sp, "%s/src.txt", tmpdir);
    snprintf(tp, sizeof tp, "%s/tgt.txt", tmpdir);
    nmt_corpus c;
    nmt_vocab *sv = NULL, *tv = NULL;
    nmt_corpus_opts o = {.max_len = 0, .min_count = 1};
    ck_assert_int_eq(nmt_corpus_read(&c, sp, tp, &o, &sv, &tv), NMT_OK);
    nmt_config cfg = {.rnn.cell = NMT_CELL_GRU, .rnn.attention = NMT_ATT_BAHDANAU, .rnn.bidirectional = 1,
                      .rnn.emb = 8, .rnn.hidden = 8, .rnn.att_dim = 8, .rnn.out_dim = 8};
    nmt_model *m;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, sv, tv), NMT_OK);
    nmt_model_init(m, NMT_INIT_BAHDANAU, 0, 9);
    char **refs;
    size_t n_refs;
    ck_assert_int_eq(nmt_read_lines(tp, &refs, &n_refs), NMT_OK);
    ck_assert_uint_eq(n_refs, 4);
    ck_assert_str_eq(refs[1], "a cat sleeps");
    nmt_valid_set v = {.corpus = &c, .refs = refs, .n_refs = n_refs};
    double ppl, bleu;
    ck_assert_int_eq(nmt_validate(m, &v, 3, &ppl, &bleu), NMT_OK);
    int Vt = nmt_vocab_size(m->tgt_vocab);
    ck_assert_msg(fabs(ppl / Vt - 1.0) < 0.02, "ppl %g for %d target words", ppl, Vt);
    ck_assert(bleu >= 0 && bleu < 5);
    /* references that do not match the corpus are refused */
    v.n_refs = 3;
    ck_assert_int_eq(nmt_validate(m, &v, 3, &ppl, &bleu), NMT_ERR_ARG);
    nmt_free_lines(refs, n_refs);
    snprintf(path, sizeof path, "%s/missing.txt", tmpdir);
    ck_assert_int_ne(nmt_read_lines(path, &refs, &n_refs), NMT_OK);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "missing.txt"));
    nmt_model_free(m);
    nmt_corpus_free(&c);
    remove_tmpdir();
}
END_TEST

/* ---- settings survive a checkpoint ------------------------------------------ */

/* The value of key among meta[n], or NULL. */
static const char *meta_value(const nmt_meta *meta, int n, const char *key)
{
    for (int k = 0; k < n; k++)
        if (!strcmp(meta[k].key, key))
            return meta[k].value;
    return NULL;
}

START_TEST(settings_round_trip)
{
    nmt_train_settings s, back;
    nmt_train_settings_default(&s);
    s.src_path = "corpus/train.de.gz";
    s.tgt_path = "corpus/train.en.gz";
    s.valid_src_path = "v.de";
    s.valid_tgt_path = "v.en";
    /* where the files lie from the run folder, and their prints */
    s.data_from_run[0] = "../corpus/train.de.gz";
    s.data_print[0] = (nmt_data_print){1, 1234567, 0xfedcba9876543210ULL};
    s.data_print[3] = (nmt_data_print){1, 7, 1};
    s.model.arch = NMT_ARCH_RNN;
    s.model.rnn.cell = NMT_CELL_GRU;
    s.model.rnn.attention = NMT_ATT_NONE;
    s.model.rnn.bidirectional = 0;
    s.model.rnn.hidden = 17;
    s.optimizer = NMT_OPTIM_ADADELTA;
    s.lr = 0.1 + 0.2; /* not exact in decimal */
    s.dropout_emb = 0.3f;
    s.dropout_enc = 0.1f;
    s.dropout_out = 0.7f / 3;
    s.label_smoothing = 0.1f;
    s.model.tied = 1;
    s.clip = 1.0 / 3.0;
    s.max_steps = 123456789012LL;
    s.seed = 18446744073709551615ULL;
    s.lr_decay = 0.7;
    s.shuffle = 0;
    s.max_time = 5400.5;
    s.best_metric = NMT_BEST_PPL;
    s.keep_snapshots = 7;
    s.average_snapshots = 1;
    s.epochs = 0;
    nmt_meta meta[64];
    char buf[8192];
    int n = nmt_train_settings_to_meta(&s, meta, 64, buf, sizeof buf);
    ck_assert_int_gt(n, 20);
    nmt_meta small_meta[64];
    char small[100];
    ck_assert_int_eq(nmt_train_settings_to_meta(&s, small_meta, 64, small, sizeof small),
                     NMT_ERR_NOMEM);
    ck_assert_int_eq(nmt_train_settings_to_meta(&s, small_meta, 5, buf + 4096, 4096),
                     NMT_ERR_NOMEM);
    /* the RNN's own settings as checkpoints have always listed them, and
     * neither the Transformer's dropouts nor a warmup */
    ck_assert_str_eq(meta_value(meta, n, "train.cell"), "gru");
    ck_assert_str_eq(meta_value(meta, n, "train.attention"), "none");
    ck_assert_str_eq(meta_value(meta, n, "train.bidirectional"), "0");
    ck_assert_str_eq(meta_value(meta, n, "train.hidden"), "17");
    ck_assert_str_eq(meta_value(meta, n, "train.tied_embeddings"), "1");
    ck_assert_str_eq(meta_value(meta, n, "train.lowercase"), "0");
    ck_assert_ptr_null(meta_value(meta, n, "train.dropout_residual"));
    ck_assert_ptr_null(meta_value(meta, n, "train.warmup"));
    ck_assert_ptr_null(meta_value(meta, n, "train.lr_schedule"));

    /* through a real file */
    make_tmpdir();
    nmt_vocab *sv, *tv;
    const char *toks[] = {"<pad>", "<unk>", "<s>", "</s>", "x"};
    ck_assert_int_eq(nmt_vocab_from_tokens(&sv, toks, 5), NMT_OK);
    ck_assert_int_eq(nmt_vocab_from_tokens(&tv, toks, 5), NMT_OK);
    nmt_config cfg = {.rnn.cell = NMT_CELL_GRU, .rnn.attention = NMT_ATT_NONE, .rnn.emb = 2, .rnn.hidden = 3,
                      .rnn.att_dim = 2, .rnn.out_dim = 2};
    nmt_model *m;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, sv, tv), NMT_OK);
    char path[512];
    snprintf(path, sizeof path, "%s/s.safetensors", tmpdir);
    ck_assert_msg(nmt_model_save(m, path, NULL, 0, meta, n) == NMT_OK, "%s",
                  nmt_error_message());
    nmt_model *m2;
    nmt_file *f;
    ck_assert_msg(nmt_model_load(&m2, path, &f) == NMT_OK, "%s", nmt_error_message());
    ck_assert_int_eq(nmt_train_settings_from_file(&back, f, &m2->cfg), NMT_OK);
    ck_assert_str_eq(back.src_path, s.src_path);
    ck_assert_str_eq(back.valid_tgt_path, s.valid_tgt_path);
    /* the model's settings are the model's (its metadata), not train.*'s */
    ck_assert_int_eq(back.model.arch, NMT_ARCH_RNN);
    ck_assert_int_eq(back.model.rnn.cell, NMT_CELL_GRU);
    ck_assert_int_eq(back.model.rnn.attention, NMT_ATT_NONE);
    ck_assert_int_eq(back.model.rnn.bidirectional, 0);
    ck_assert_int_eq(back.model.rnn.hidden, 3);
    ck_assert_int_eq(back.model.tied, 0);
    ck_assert_int_eq(back.model.src_vocab, 5);
    ck_assert_int_eq(back.optimizer, NMT_OPTIM_ADADELTA);
    ck_assert(back.lr == s.lr);
    ck_assert(back.dropout_emb == s.dropout_emb);
    ck_assert(back.dropout_enc == s.dropout_enc);
    ck_assert(back.dropout_out == s.dropout_out);
    ck_assert(back.label_smoothing == s.label_smoothing);
    ck_assert(back.dropout_residual == 0 && back.dropout_att == 0 && back.dropout_ff == 0);
    ck_assert(back.warmup == 0);
    ck_assert_int_eq(back.linear_decay, 0);
    ck_assert(back.clip == s.clip);
    ck_assert(back.lr_decay == s.lr_decay);
    ck_assert(back.max_steps == s.max_steps);
    ck_assert(back.seed == s.seed);
    ck_assert_int_eq(back.shuffle, 0);
    ck_assert_int_eq(back.epochs, 0);
    ck_assert_int_eq(back.patience, s.patience);
    ck_assert(back.max_time == s.max_time);
    ck_assert_int_eq(back.best_metric, NMT_BEST_PPL);
    ck_assert_int_eq(back.keep_snapshots, 7);
    ck_assert_int_eq(back.average_snapshots, 1);
    ck_assert_str_eq(back.data_from_run[0], "../corpus/train.de.gz");
    ck_assert_ptr_null(back.data_from_run[1]);
    ck_assert(back.data_print[0].known && back.data_print[3].known);
    ck_assert(back.data_print[0].bytes == 1234567);
    ck_assert(back.data_print[0].hash == 0xfedcba9876543210ULL);
    ck_assert(back.data_print[3].bytes == 7 && back.data_print[3].hash == 1);
    ck_assert(!back.data_print[1].known && !back.data_print[2].known);
    nmt_file_free(f);
    nmt_model_free(m2);

    /* a checkpoint written before those four settings existed: their
     * defaults, the behaviour of the program that wrote it */
    nmt_meta old[64];
    int n_old = 0;
    for (int k = 0; k < n; k++)
        if (strcmp(meta[k].key, "train.max_time") && strcmp(meta[k].key, "train.best_metric") &&
            strcmp(meta[k].key, "train.keep_snapshots") &&
            strcmp(meta[k].key, "train.average_snapshots"))
            old[n_old++] = meta[k];
    ck_assert_int_eq(n_old, n - 4);
    ck_assert_int_eq(nmt_model_save(m, path, NULL, 0, old, n_old), NMT_OK);
    ck_assert_int_eq(nmt_model_load(&m2, path, &f), NMT_OK);
    ck_assert_msg(nmt_train_settings_from_file(&back, f, &m2->cfg) == NMT_OK, "%s", nmt_error_message());
    ck_assert(back.max_time == 0);
    ck_assert_int_eq(back.best_metric, NMT_BEST_BLEU);
    ck_assert_int_eq(back.keep_snapshots, 0);
    ck_assert_int_eq(back.average_snapshots, 0);
    ck_assert(back.lr == s.lr);
    nmt_file_free(f);
    nmt_model_free(m2);
    /* but a value that is there must be valid */
    for (int k = 0; k < n; k++)
        if (!strcmp(meta[k].key, "train.best_metric"))
            meta[k].value = "loss";
    ck_assert_int_eq(nmt_model_save(m, path, NULL, 0, meta, n), NMT_OK);
    ck_assert_int_eq(nmt_model_load(&m2, path, &f), NMT_OK);
    ck_assert_int_eq(nmt_train_settings_from_file(&back, f, &m2->cfg), NMT_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "train.best_metric"));
    nmt_file_free(f);
    nmt_model_free(m2);

    /* a checkpoint from before the dropouts were apart (one train.dropout,
     * on embeddings and deep output) resumes with that meaning */
    int k_old = 0;
    nmt_meta old_meta[64];
    for (int k = 0; k < n; k++) {
        const char *key = meta[k].key;
        if (!strcmp(key, "train.dropout_emb"))
            old_meta[k_old++] = (nmt_meta){"train.dropout", "0.25"};
        else if (!strcmp(key, "train.best_metric")) /* made bad above */
            old_meta[k_old++] = (nmt_meta){key, "bleu"};
        else if (strncmp(key, "train.dropout_", 14) && strcmp(key, "train.label_smoothing") &&
                 strcmp(key, "train.tied_embeddings"))
            old_meta[k_old++] = meta[k];
    }
    ck_assert_int_eq(k_old, n - 4);
    ck_assert_int_eq(nmt_model_save(m, path, NULL, 0, old_meta, k_old), NMT_OK);
    ck_assert_int_eq(nmt_model_load(&m2, path, &f), NMT_OK);
    ck_assert_msg(nmt_train_settings_from_file(&back, f, &m2->cfg) == NMT_OK, "%s", nmt_error_message());
    ck_assert(back.dropout_emb == 0.25f && back.dropout_out == 0.25f);
    ck_assert(back.dropout_enc == 0 && back.label_smoothing == 0);
    ck_assert_int_eq(back.model.tied, 0);
    nmt_file_free(f);
    nmt_model_free(m2);

    /* a model file without them is not a resumable checkpoint */
    ck_assert_int_eq(nmt_model_save(m, path, NULL, 0, NULL, 0), NMT_OK);
    ck_assert_int_eq(nmt_model_load(&m2, path, &f), NMT_OK);
    ck_assert_int_eq(nmt_train_settings_from_file(&back, f, &m2->cfg), NMT_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "not a resumable checkpoint"));
    nmt_file_free(f);
    nmt_model_free(m2);
    nmt_model_free(m);
    remove_tmpdir();
}
END_TEST

/* ---- progress text --------------------------------------------------------------- */

static int count_char(const char *s, char c)
{
    int n = 0;
    for (; *s; s++)
        n += *s == c;
    return n;
}

/* The linear schedule's lr: the warm-up's ramp, then the share of the run
 * left; at or past the end, 0. */
START_TEST(linear_schedule)
{
    ck_assert(nmt_lr_linear(0.5, 4, 0, 1, 0.9, 0) == 0.125); /* the ramp ignores progress */
    ck_assert(nmt_lr_linear(0.5, 4, 0, 4, 0.9, 0) == 0.5);
    ck_assert(nmt_lr_linear(0.5, 4, 0, 5, 0.25, 0) == 0.375);
    ck_assert(nmt_lr_linear(0.5, 0, 0, 1, 0, 0) == 0.5);
    ck_assert(nmt_lr_linear(0.5, 0, 0, 9, 1, 0) == 0);
    ck_assert(nmt_lr_linear(0.5, 0, 0, 9, 1.5, 0) == 0);
    ck_assert(nmt_lr_linear(0.5, 0, 0, 9, -0.1, 0) == 0.5);
    /* a late start: the peak held up to it, then the line from the peak to 0 */
    ck_assert(nmt_lr_linear(0.5, 0, 0, 9, 0.5, 0.75) == 0.5);
    ck_assert(nmt_lr_linear(0.5, 0, 0, 9, 0.75, 0.75) == 0.5);
    ck_assert(fabs(nmt_lr_linear(0.5, 0, 0, 9, 0.875, 0.75) - 0.25) < 1e-15);
    ck_assert(nmt_lr_linear(0.5, 0, 0, 9, 1, 0.75) == 0);
    ck_assert(nmt_lr_linear(0.5, 4, 0, 2, 0.9, 0.75) == 0.25); /* the ramp still first */
    ck_assert(nmt_lr_linear(0.5, 0, 0, 9, NAN, 0.75) == 0.5);
    /* a warm-up bounded by a share of the run: the nearer end sets the
     * slope, and once the share is reached the line starts however few
     * steps were taken */
    ck_assert(nmt_lr_linear(0.5, 100, 0.25, 10, 0.0625, 0) == 0.125); /* 0.0625 / 0.25 */
    ck_assert(nmt_lr_linear(0.5, 100, 0.25, 10, 0.001, 0) == 0.05); /* 10 / 100 */
    ck_assert(nmt_lr_linear(0.5, 100, 0.25, 50, 0.25, 0) == 0.375); /* the line's */
    ck_assert(nmt_lr_linear(0.5, 100, 0.25, 100, 0.2, 0) == 0.5);   /* the steps' end */
    ck_assert(nmt_lr_linear(0.5, 100, 0.25, 101, 0.5, 0) == 0.25);
    /* a share that does not bind leaves the steps' ramp bit for bit */
    ck_assert(nmt_lr_linear(4e-3, 2000, 0.25, 1999, 1998.0 / 8600, 0) ==
              4e-3 * 1999.0 / 2000.0);
}
END_TEST

/* Saves a model with the metadata meta[0..n), loads it back and reads the
 * training settings from it into *back; the reading's result. */
static int settings_through_file(nmt_model *m, const char *path, const nmt_meta *meta, int n,
                                 nmt_train_settings *back)
{
    ck_assert_int_eq(nmt_model_save(m, path, NULL, 0, meta, n), NMT_OK);
    nmt_model *m2;
    nmt_file *f;
    ck_assert_int_eq(nmt_model_load(&m2, path, &f), NMT_OK);
    int rc = nmt_train_settings_from_file(back, f, &m2->cfg);
    nmt_file_free(f);
    nmt_model_free(m2);
    return rc;
}

/* A linear run's settings keep it through a checkpoint's metadata, and
 * a schedule other than linear is refused there. */
START_TEST(linear_schedule_round_trip)
{
    nmt_train_settings s, back;
    nmt_train_settings_default(&s);
    s.src_path = "a.de";
    s.tgt_path = "a.en";
    s.linear_decay = 1;
    s.patience = 0;
    s.max_steps = 100;
    nmt_meta meta[64];
    char buf[8192];
    int n = nmt_train_settings_to_meta(&s, meta, 64, buf, sizeof buf);
    ck_assert_int_gt(n, 20);
    ck_assert_str_eq(meta_value(meta, n, "train.lr_schedule"), "linear");
    make_tmpdir();
    nmt_vocab *sv, *tv;
    const char *toks[] = {"<pad>", "<unk>", "<s>", "</s>", "x"};
    ck_assert_int_eq(nmt_vocab_from_tokens(&sv, toks, 5), NMT_OK);
    ck_assert_int_eq(nmt_vocab_from_tokens(&tv, toks, 5), NMT_OK);
    nmt_config cfg = {.rnn.cell = NMT_CELL_GRU, .rnn.emb = 2, .rnn.hidden = 3, .rnn.att_dim = 2,
                      .rnn.out_dim = 2};
    nmt_model *m;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, sv, tv), NMT_OK);
    char path[512];
    snprintf(path, sizeof path, "%s/lin.safetensors", tmpdir);
    ck_assert_int_eq(settings_through_file(m, path, meta, n, &back), NMT_OK);
    ck_assert_int_eq(back.linear_decay, 1);
    ck_assert_int_eq(back.patience, 0);
    ck_assert(back.decay_from == 0);
    ck_assert_ptr_null(meta_value(meta, n, "train.decay_from"));
    /* a line that starts late keeps its start */
    s.decay_from = 0.7;
    n = nmt_train_settings_to_meta(&s, meta, 64, buf, sizeof buf);
    ck_assert_int_eq(settings_through_file(m, path, meta, n, &back), NMT_OK);
    ck_assert(back.linear_decay == 1 && back.decay_from == 0.7);
    ck_assert(back.warmup_share == 0); /* absent: a ramp ended by its steps alone */
    /* a warm-up bounded by a share of the run keeps its share */
    s.warmup = 20;
    s.warmup_share = 0.25;
    n = nmt_train_settings_to_meta(&s, meta, 64, buf, sizeof buf);
    ck_assert_str_eq(meta_value(meta, n, "train.warmup_share"), "0.25");
    ck_assert_int_eq(settings_through_file(m, path, meta, n, &back), NMT_OK);
    ck_assert(back.warmup == 20 && back.warmup_share == 0.25);
    /* a schedule this program does not know */
    for (int i = 0; i < n; i++)
        if (!strcmp(meta[i].key, "train.lr_schedule"))
            meta[i].value = "cosine";
    ck_assert_int_eq(settings_through_file(m, path, meta, n, &back), NMT_ERR_FORMAT);
    nmt_model_free(m);
    remove(path);
}
END_TEST

/* The choice of the length normalisation at the end is a setting a resumed
 * run keeps: written only when on (a checkpoint without it is a run that
 * did not choose, as before it existed), read back, and a value other than
 * 0 or 1 refused. */
START_TEST(tune_alpha_round_trip)
{
    nmt_train_settings s, back;
    nmt_train_settings_default(&s);
    ck_assert_int_eq(s.tune_alpha, 0);
    s.src_path = "a.de";
    s.tgt_path = "a.en";
    nmt_meta meta[64];
    char buf[8192];
    int n = nmt_train_settings_to_meta(&s, meta, 64, buf, sizeof buf);
    ck_assert_ptr_null(meta_value(meta, n, "train.tune_alpha"));
    make_tmpdir();
    nmt_vocab *sv, *tv;
    const char *toks[] = {"<pad>", "<unk>", "<s>", "</s>", "x"};
    ck_assert_int_eq(nmt_vocab_from_tokens(&sv, toks, 5), NMT_OK);
    ck_assert_int_eq(nmt_vocab_from_tokens(&tv, toks, 5), NMT_OK);
    nmt_config cfg = {.rnn.cell = NMT_CELL_GRU, .rnn.emb = 2, .rnn.hidden = 3, .rnn.att_dim = 2,
                      .rnn.out_dim = 2};
    nmt_model *m;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, sv, tv), NMT_OK);
    char path[512];
    snprintf(path, sizeof path, "%s/tune.safetensors", tmpdir);
    back.tune_alpha = 1;
    ck_assert_int_eq(settings_through_file(m, path, meta, n, &back), NMT_OK);
    ck_assert_int_eq(back.tune_alpha, 0);
    s.tune_alpha = 1;
    n = nmt_train_settings_to_meta(&s, meta, 64, buf, sizeof buf);
    ck_assert_str_eq(meta_value(meta, n, "train.tune_alpha"), "1");
    ck_assert_int_eq(settings_through_file(m, path, meta, n, &back), NMT_OK);
    ck_assert_int_eq(back.tune_alpha, 1);
    for (int i = 0; i < n; i++)
        if (!strcmp(meta[i].key, "train.tune_alpha"))
            meta[i].value = "2";
    ck_assert_int_eq(settings_through_file(m, path, meta, n, &back), NMT_ERR_FORMAT);
    nmt_model_free(m);
    remove(path);
}
END_TEST

START_TEST(log_rows_have_the_header_columns)
{
    char head[256], row[256];
    nmt_log_header(head, sizeof head);
    ck_assert_str_eq(head, "step\tepoch\tlr\tloss\tppl\tgrad_norm\ttok_per_s\telapsed_s"
                           "\tvalid_ppl\tvalid_bleu\taverage_of\n");
    nmt_train_status st = {.step = 1200, .epoch = 3, .lr = 5e-4, .loss = 2.5, .ppl = exp(2.5),
                           .grad_norm = 1.25, .tok_per_s = 4321.4, .elapsed_s = 62.25};
    nmt_log_row(row, sizeof row, &st);
    ck_assert_int_eq(count_char(row, '\t'), count_char(head, '\t'));
    ck_assert_str_eq(row, "1200\t3\t0.0005\t2.5000\t12.182\t1.2500\t4321\t62.2\t\t\t\n");
    st.has_valid = 1;
    st.valid_ppl = 20.125;
    st.valid_bleu = 31.456;
    nmt_log_row(row, sizeof row, &st);
    ck_assert_int_eq(count_char(row, '\t'), 10);
    ck_assert_ptr_nonnull(strstr(row, "\t20.125\t31.46\t\n"));
    /* the validation of an average: no training columns, and how many */
    st.average_of = 5;
    st.elapsed_s = 63;
    nmt_log_row(row, sizeof row, &st);
    ck_assert_str_eq(row, "1200\t3\t0.0005\t\t\t\t\t63.0\t20.125\t31.46\t5\n");
}
END_TEST

START_TEST(durations_and_eta)
{
    char buf[32];
    nmt_format_duration(buf, sizeof buf, 7.24);
    ck_assert_str_eq(buf, "7.2s");
    nmt_format_duration(buf, sizeof buf, 723);
    ck_assert_str_eq(buf, "12m03s");
    nmt_format_duration(buf, sizeof buf, 3723);
    ck_assert_str_eq(buf, "1h02m03s");
    nmt_format_duration(buf, sizeof buf, -1);
    ck_assert_str_eq(buf, "?");

    nmt_progress p;
    nmt_progress_start(&p, 100, 0.25);
    p.t0 = 1000.0;
    nmt_train_status st = {.step = 150, .total_steps = 350, .epoch = 2, .loss = 3.0};
    /* 50 steps in 10 s: 200 left take 40 s */
    ck_assert_double_eq_tol(nmt_progress_eta(&p, &st, 1010.0), 40.0, 1e-9);
    st.total_steps = 0;
    ck_assert_double_lt(nmt_progress_eta(&p, &st, 1010.0), 0);
    ck_assert_int_eq(nmt_progress_due(&p, 1010.0), 1);
    ck_assert_int_eq(nmt_progress_due(&p, 1010.1), 0);
    ck_assert_int_eq(nmt_progress_due(&p, 1010.3), 1);
    st.total_steps = 350;
    char line[128];
    nmt_progress_line(line, sizeof line, &p, &st, 1010.0);
    ck_assert_ptr_nonnull(strstr(line, "epoch 2"));
    ck_assert_ptr_nonnull(strstr(line, "step 150/350"));
    ck_assert_ptr_nonnull(strstr(line, "ETA 40.0s"));

    /* a time limit that binds first: the time left (100 - 70 s) */
    st.time_limit_s = 100;
    st.elapsed_s = 70;
    ck_assert_double_eq_tol(nmt_progress_eta(&p, &st, 1010.0), 30.0, 1e-9);
    /* one that does not: the steps' */
    st.time_limit_s = 1000;
    ck_assert_double_eq_tol(nmt_progress_eta(&p, &st, 1010.0), 40.0, 1e-9);
    /* no step limit (epochs unlimited): the time alone, and no total shown */
    st.total_steps = 0;
    ck_assert_double_eq_tol(nmt_progress_eta(&p, &st, 1010.0), 930.0, 1e-9);
    nmt_progress_line(line, sizeof line, &p, &st, 1010.0);
    ck_assert_ptr_nonnull(strstr(line, "step 150 |"));
    ck_assert_ptr_nonnull(strstr(line, "ETA 15m30s"));
    st.elapsed_s = 1200; /* past it: nothing left */
    ck_assert_double_eq_tol(nmt_progress_eta(&p, &st, 1010.0), 0.0, 1e-9);
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("train");
    TCase *tc = tcase_create("train");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, sgd_step_is_minus_the_gradient, 0, 3);
    tcase_add_test(tc, validation_of_an_untrained_model);
    tcase_add_test(tc, settings_round_trip);
    tcase_add_test(tc, linear_schedule);
    tcase_add_test(tc, tune_alpha_round_trip);
    tcase_add_test(tc, linear_schedule_round_trip);
    tcase_add_test(tc, log_rows_have_the_header_columns);
    tcase_add_test(tc, durations_and_eta);
    suite_add_tcase(s, tc);
    return s;
}
