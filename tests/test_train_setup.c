/* The set-up of a training run as a library call (nmt/train_setup.h): what
 * a front end other than `nmt train` gets from it. A fresh run comes back
 * ready to train, with its stages reported in order; the dropout and the
 * learning-rate schedule follow from what was given; refusals say why,
 * print nothing and write nothing; a resumed run takes its model from the
 * checkpoint and only the settings that may change, and one with nothing
 * left to do writes no file. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nmt/error.h"
#include "nmt/train.h"
#include "nmt/train_setup.h"
#include "test_common.h"

static char tmpdir[256];

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/nmt-test-setup-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

static char *in_tmp(const char *name)
{
    static char paths[8][512];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, sizeof paths[0], "%s/%s", tmpdir, name);
    return p;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void write_corpus(void)
{
    FILE *f = fopen(in_tmp("src.txt"), "wb");
    ck_assert_ptr_nonnull(f);
    fputs("ein Hund läuft .\neine Katze schläft .\nzwei Hunde spielen im Park .\n"
          "ein Mann liest\n", f);
    fclose(f);
    f = fopen(in_tmp("tgt.txt"), "wb");
    ck_assert_ptr_nonnull(f);
    fputs("a dog runs .\na cat sleeps .\ntwo dogs play in the park .\na man reads\n", f);
    fclose(f);
}

/* A small fresh RNN run into tmpdir/NAME. */
static void small_request(nmt_train_request *q, const char *name)
{
    nmt_train_request_default(q);
    q->s.src_path = in_tmp("src.txt");
    q->s.tgt_path = in_tmp("tgt.txt");
    q->s.model.arch = NMT_ARCH_RNN;
    q->s.model.rnn.emb = q->s.model.rnn.hidden = q->s.model.rnn.att_dim = 8;
    q->s.model.rnn.out_dim = 8;
    q->s.batch_size = 2;
    q->s.threads = 1;
    q->out_dir = in_tmp(name);
}

/* small_request's, of a tiny Transformer that writes its initial model
 * (--max-steps 0) */
static void small_tf_request(nmt_train_request *q, const char *name)
{
    small_request(q, name);
    q->s.model.arch = NMT_ARCH_TRANSFORMER;
    q->s.model.transformer = (nmt_transformer_config){.d_model = 8, .heads = 2, .ff = 16,
                                                      .enc_layers = 1, .dec_layers = 1};
    q->s.max_steps = 0;
}

/* What the set-up reported, in order: "N" a note, "R" read, "Y" ready. */
typedef struct seen {
    char events[16];
    int n;
    int dir_existed_when_read; /* the folder existed at READ (it must not) */
    const char *dir;
} seen;

static void on_event(void *user, nmt_setup_event ev, const nmt_train_run *r, const char *note)
{
    seen *s = user;
    (void)note;
    if (s->n < 15)
        s->events[s->n++] = ev == NMT_SETUP_NOTE ? 'N' : ev == NMT_SETUP_READ ? 'R' : 'Y';
    if (ev == NMT_SETUP_READ) {
        ck_assert_ptr_nonnull(r->model);
        ck_assert_uint_eq(r->train.n, 4);
        s->dir_existed_when_read = exists(s->dir);
    }
}

/* Sets up q with stderr sent to a file; returns the code and checks that
 * nothing was printed. */
static int setup_silently(nmt_train_run **r, const nmt_train_request *q,
                          const nmt_setup_callbacks *cb)
{
    fflush(stderr);
    int saved = dup(2);
    int fd = open(in_tmp("stderr.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
    int rc = nmt_train_setup(r, q, cb);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    struct stat st;
    ck_assert_int_eq(stat(in_tmp("stderr.txt"), &st), 0);
    ck_assert_msg(st.st_size == 0, "the set-up printed %lld bytes", (long long)st.st_size);
    return rc;
}

START_TEST(a_fresh_run_comes_back_ready)
{
    make_tmpdir();
    write_corpus();
    nmt_train_request q;
    small_request(&q, "run");
    q.s.max_steps = 2;
    seen s = {.dir = q.out_dir};
    nmt_setup_callbacks cb = {.user = &s, .on_event = on_event};
    nmt_train_run *r;
    ck_assert_msg(setup_silently(&r, &q, &cb) == NMT_OK, "%s", nmt_error_message());
    /* read and checked before anything was written, then the folder, then
     * the trainer */
    ck_assert_str_eq(s.events, "RY");
    ck_assert_int_eq(s.dir_existed_when_read, 0);
    ck_assert(exists(q.out_dir));
    ck_assert_ptr_nonnull(r->trainer);
    ck_assert_int_eq(r->resumed, 0);
    ck_assert_int_eq(r->model->cfg.arch, NMT_ARCH_RNN);
    ck_assert_int_eq(r->model->cfg.rnn.hidden, 8);
    ck_assert_int_eq(r->s.model.src_vocab, r->model->cfg.src_vocab);
    /* a corpus of few words keeps words; the settings' paths are absolute */
    ck_assert_ptr_null(r->model->subwords);
    ck_assert_int_eq(r->subwords, 0);
    ck_assert(r->s.src_path[0] == '/');
    /* the defaults that follow from what was given: adam's lr, the RNN's
     * dropout at its three sites and none at the Transformer's */
    ck_assert(r->s.lr == nmt_optim_default_lr(NMT_OPTIM_ADAM));
    ck_assert(r->s.dropout_emb == 0.3f && r->s.dropout_enc == 0.3f && r->s.dropout_out == 0.3f);
    ck_assert(r->s.dropout_residual == 0 && r->s.dropout_att == 0 && r->s.dropout_ff == 0);
    ck_assert_int_eq(nmt_trainer_run(r->trainer, NULL, NULL), NMT_OK);
    ck_assert_int_eq(nmt_trainer_status(r->trainer)->step, 2);
    nmt_train_run_free(r);

    /* resumed: the checkpoint's model and settings, with a new limit */
    nmt_train_request back;
    nmt_train_request_default(&back);
    back.resume_dir = q.out_dir;
    back.s.max_steps = 3;
    back.given.max_steps = 1;
    ck_assert_msg(setup_silently(&r, &back, NULL) == NMT_OK, "%s", nmt_error_message());
    ck_assert_int_eq(r->resumed, 1);
    ck_assert_int_eq(r->s.model.rnn.hidden, 8); /* the checkpoint's, not the default 256 */
    ck_assert_int_eq(r->s.max_steps, 3);
    ck_assert_int_eq(r->s.batch_size, 2);
    ck_assert_int_eq(nmt_trainer_status(r->trainer)->step, 2);
    nmt_train_run_free(r);
    /* a limit below where the run is: refused, naming its step */
    back.s.max_steps = 1;
    ck_assert_int_eq(setup_silently(&r, &back, NULL), NMT_ERR_ARG);
    ck_assert_ptr_null(r);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "at step 2 already"));
    remove_tmpdir();
}
END_TEST

/* A file's bytes, size and modification time, to compare. */
typedef struct file_state {
    struct stat st;
    char *bytes;
} file_state;

static void file_state_of(file_state *f, const char *path)
{
    ck_assert_int_eq(stat(path, &f->st), 0);
    f->bytes = malloc((size_t)f->st.st_size + 1);
    FILE *in = fopen(path, "rb");
    ck_assert(f->bytes && in);
    ck_assert_uint_eq(fread(f->bytes, 1, (size_t)f->st.st_size, in), (size_t)f->st.st_size);
    fclose(in);
}

static int same_file_state(const file_state *a, const file_state *b)
{
    return a->st.st_size == b->st.st_size && a->st.st_mtim.tv_sec == b->st.st_mtim.tv_sec &&
           a->st.st_mtim.tv_nsec == b->st.st_mtim.tv_nsec &&
           !memcmp(a->bytes, b->bytes, (size_t)a->st.st_size);
}

/* What a run needs: the parameters with their gradients and Adam's two
 * moments, and the workspace of its plan's largest batch, which is the
 * batch's own size (no more than the estimate for the largest batch the
 * sizes allow, which refuses runs that would not fit). */
START_TEST(memory_need_follows_the_plan)
{
    make_tmpdir();
    write_corpus();
    nmt_train_request q;
    small_request(&q, "run");
    q.s.max_steps = 2;
    nmt_train_run *r;
    ck_assert_msg(setup_silently(&r, &q, NULL) == NMT_OK, "%s", nmt_error_message());
    double weights, activations;
    ck_assert_int_eq(nmt_trainer_memory_need(r->trainer, &weights, &activations), NMT_OK);
    ck_assert(weights == 4.0 * sizeof(float) * (double)r->model->n_params);
    ck_assert(activations == 0); /* no plan before the first step */
    ck_assert_int_eq(nmt_trainer_run(r->trainer, NULL, NULL), NMT_OK);
    ck_assert_int_eq(nmt_trainer_memory_need(r->trainer, &weights, &activations), NMT_OK);
    /* batches of 2 of the 4 pairs: the longest pair has 7 target words and
     * 6 source ones, each with its </s> */
    double longest, estimate;
    ck_assert_int_eq(nmt_workspace_bytes(&r->model->cfg, 2, 7, 8, &longest), NMT_OK);
    ck_assert_msg(activations > 0 && activations <= longest, "%g of %g", activations, longest);
    ck_assert_int_eq(nmt_train_memory_estimate(&r->model->cfg, r->s.optimizer, 2, 8, &estimate),
                     NMT_OK);
    ck_assert(weights + activations <= estimate);
    nmt_train_run_free(r);
    remove_tmpdir();
}
END_TEST

/* A run resumed at its --max-steps has nothing to do: nmt_trainer_run says
 * so and writes no file (the checkpoint would differ in its elapsed time
 * alone); with a larger limit it trains and writes them. */
START_TEST(a_finished_run_resumed_writes_nothing)
{
    make_tmpdir();
    write_corpus();
    nmt_train_request q;
    small_request(&q, "run");
    q.s.max_steps = 2;
    char dir[512]; /* in_tmp's buffers are reused */
    snprintf(dir, sizeof dir, "%s", q.out_dir);
    nmt_train_run *r;
    ck_assert_msg(setup_silently(&r, &q, NULL) == NMT_OK, "%s", nmt_error_message());
    ck_assert_int_eq(nmt_trainer_run(r->trainer, NULL, NULL), NMT_OK);
    ck_assert_int_eq(nmt_trainer_status(r->trainer)->nothing_to_do, 0);
    nmt_train_run_free(r);
    static const char *const files[] = {"run/checkpoint.safetensors", "run/log.tsv"};
    file_state before[2], after[2];
    for (int k = 0; k < 2; k++)
        file_state_of(&before[k], in_tmp(files[k]));
    usleep(20000); /* a file written now would have another time */
    nmt_train_request back;
    nmt_train_request_default(&back);
    back.resume_dir = dir;
    ck_assert_msg(setup_silently(&r, &back, NULL) == NMT_OK, "%s", nmt_error_message());
    ck_assert_int_eq(nmt_trainer_run(r->trainer, NULL, NULL), NMT_OK);
    ck_assert_int_eq(nmt_trainer_status(r->trainer)->nothing_to_do, 1);
    ck_assert_int_eq(nmt_trainer_status(r->trainer)->step, 2);
    nmt_train_run_free(r);
    for (int k = 0; k < 2; k++) {
        file_state_of(&after[k], in_tmp(files[k]));
        ck_assert_msg(same_file_state(&before[k], &after[k]), "%s changed", files[k]);
        free(after[k].bytes);
    }
    /* one step more: trained, and the checkpoint written */
    back.s.max_steps = 3;
    back.given.max_steps = 1;
    ck_assert_msg(setup_silently(&r, &back, NULL) == NMT_OK, "%s", nmt_error_message());
    ck_assert_int_eq(nmt_trainer_run(r->trainer, NULL, NULL), NMT_OK);
    ck_assert_int_eq(nmt_trainer_status(r->trainer)->nothing_to_do, 0);
    ck_assert_int_eq(nmt_trainer_status(r->trainer)->step, 3);
    nmt_train_run_free(r);
    file_state_of(&after[0], in_tmp(files[0]));
    ck_assert(!same_file_state(&before[0], &after[0]));
    free(after[0].bytes);
    for (int k = 0; k < 2; k++)
        free(before[k].bytes);
    remove_tmpdir();
}
END_TEST

/* --dropout sets every site of the model's architecture, each site's own
 * option overrides it, and --dropout 0 turns every kind off. Word dropout:
 * --word-dropout sets both sides, a side's own option overrides it,
 * --dropout 0 turns it off unless it is given, --dropout above 0 does not
 * set it; the rates are the checkpoint's on resume. */
START_TEST(dropout_follows_the_architecture)
{
    make_tmpdir();
    write_corpus();
    nmt_train_request q;
    small_request(&q, "d1");
    q.s.max_steps = 0;
    q.given.dropout = 1;
    q.dropout = 0.1f;
    q.s.dropout_out = 0.25f;
    q.given.dropout_out = 1;
    q.given.word_dropout = 1;
    q.word_dropout = 0.2f;
    q.given.word_dropout_tgt = 1;
    q.s.word_dropout_tgt = 0.15f;
    nmt_train_run *r;
    ck_assert_msg(setup_silently(&r, &q, NULL) == NMT_OK, "%s", nmt_error_message());
    ck_assert(r->s.dropout_emb == 0.1f && r->s.dropout_enc == 0.1f);
    ck_assert(r->s.dropout_out == 0.25f);
    ck_assert(r->s.dropout_residual == 0 && r->s.dropout_att == 0 && r->s.dropout_ff == 0);
    ck_assert(r->s.word_dropout_src == 0.2f && r->s.word_dropout_tgt == 0.15f);
    ck_assert_int_eq(nmt_trainer_run(r->trainer, NULL, NULL), NMT_OK);
    nmt_train_run_free(r);
    nmt_train_request back;
    nmt_train_request_default(&back);
    back.resume_dir = in_tmp("d1");
    ck_assert_msg(setup_silently(&r, &back, NULL) == NMT_OK, "%s", nmt_error_message());
    ck_assert(r->s.word_dropout_src == 0.2f && r->s.word_dropout_tgt == 0.15f);
    nmt_train_run_free(r);
    /* --dropout 0.5 drops units, not words; with 0 a given word dropout stays */
    const float all[2] = {0.5f, 0};
    for (int k = 0; k < 2; k++) {
        small_request(&q, k ? "d6" : "d5");
        q.s.max_steps = 0;
        q.given.dropout = 1;
        q.dropout = all[k];
        q.given.word_dropout_src = k;
        q.s.word_dropout_src = 0.3f;
        ck_assert_msg(setup_silently(&r, &q, NULL) == NMT_OK, "%s", nmt_error_message());
        ck_assert(r->s.dropout_emb == all[k]);
        float unset = nmt_train_default_word_dropout(NMT_ARCH_RNN);
        ck_assert(r->s.word_dropout_src == (k ? 0.3f : unset));
        ck_assert(r->s.word_dropout_tgt == (k ? 0 : unset));
        nmt_train_run_free(r);
    }

    /* --init-from takes the architecture from the file: its dropouts are
     * chosen after it is read, and a site it has not is refused */
    char model[512];
    snprintf(model, sizeof model, "%s/d1/checkpoint.safetensors", tmpdir);
    small_request(&q, "d2");
    q.init_from = model;
    q.given.dropout = 1;
    q.dropout = 0;
    ck_assert_msg(setup_silently(&r, &q, NULL) == NMT_OK, "%s", nmt_error_message());
    ck_assert(r->s.dropout_emb == 0 && r->s.dropout_enc == 0 && r->s.dropout_out == 0);
    ck_assert_int_eq(r->model->cfg.rnn.hidden, 8);
    nmt_train_run_free(r);
    small_request(&q, "d3");
    q.init_from = model;
    q.s.dropout_att = 0.2f;
    q.given.dropout_att = 1;
    ck_assert_int_eq(setup_silently(&r, &q, NULL), NMT_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "--dropout-att: the model of"));
    ck_assert(!exists(q.out_dir));
    /* and so in a fresh run */
    small_request(&q, "d4");
    q.s.dropout_ff = 0.2f;
    q.given.dropout_ff = 1;
    ck_assert_int_eq(setup_silently(&r, &q, NULL), NMT_ERR_ARG);
    ck_assert_str_eq(nmt_error_message(), "--dropout-ff: --arch rnn has no such dropout (its own: "
                     "--dropout-emb, --dropout-enc, --dropout-out)");
    ck_assert(!exists(q.out_dir));
    remove_tmpdir();
}
END_TEST

/* A warmup schedule decays the lr itself: without a given patience there
 * is no decay on plateaus, and one given is refused by the trainer. */
START_TEST(warmup_turns_plateau_decay_off)
{
    make_tmpdir();
    write_corpus();
    nmt_train_request q;
    small_request(&q, "w1");
    q.s.warmup = 10;
    nmt_train_run *r;
    ck_assert_msg(setup_silently(&r, &q, NULL) == NMT_OK, "%s", nmt_error_message());
    ck_assert_int_eq(r->s.patience, 0);
    ck_assert(r->s.warmup == 10);
    nmt_train_run_free(r);
    small_request(&q, "w2");
    q.s.warmup = 10;
    q.s.patience = 2;
    q.given.patience = 1;
    ck_assert_int_eq(setup_silently(&r, &q, NULL), NMT_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "patience must be 0"));

    /* the schedule: linear to the peak at the warmup's last step, then
     * lr * sqrt(warmup / step) */
    ck_assert(nmt_lr_warmup(2.0, 4, 1) == 0.5);
    ck_assert(nmt_lr_warmup(2.0, 4, 4) == 2.0);
    ck_assert(nmt_lr_warmup(2.0, 4, 16) == 1.0);
    ck_assert(fabs(nmt_lr_warmup(1e-3, 4000, 8000) - 1e-3 / sqrt(2.0)) < 1e-18);
    remove_tmpdir();
}
END_TEST

/* Refusals: the reason, nothing printed, no folder made. */
START_TEST(refusals_say_why)
{
    make_tmpdir();
    write_corpus();
    nmt_train_request q;
    nmt_train_run *r;
    /* a Transformer: made when this build has it, else refused by name */
    small_tf_request(&q, "tf");
    int rc = setup_silently(&r, &q, NULL);
    if (nmt_arch_available(NMT_ARCH_TRANSFORMER)) {
        ck_assert_msg(rc == NMT_OK, "%s", nmt_error_message());
        ck_assert_int_eq(r->model->cfg.arch, NMT_ARCH_TRANSFORMER);
        /* its own dropout sites, and none of the RNN's */
        ck_assert(r->s.dropout_emb == 0.1f && r->s.dropout_residual == 0.1f);
        ck_assert(r->s.dropout_att == 0.1f && r->s.dropout_ff == 0.1f);
        ck_assert(r->s.dropout_enc == 0 && r->s.dropout_out == 0);
        /* its lr schedule: Adam's peak 4e-3 after 2000 steps or a quarter of
         * the run, then a line to 0 at its end (here its 10 epochs), no
         * plateau decay */
        ck_assert(r->s.lr == 4e-3 && r->s.warmup == 2000 && r->s.patience == 0);
        ck_assert(r->s.linear_decay == 1 && r->s.warmup_share == NMT_WARMUP_SHARE);
        /* its batches: 2048 target tokens of at most 256 pairs, the size set
         * by small_request not being marked given */
        ck_assert_int_eq(r->s.batch_tokens, 2048);
        ck_assert_int_eq(r->s.batch_size, 256);
        nmt_train_run_free(r);
        /* a plateau decay asked for instead: no warm-up, a constant lr */
        small_tf_request(&q, "tf-patience");
        q.s.patience = 3;
        q.given.patience = 1;
        ck_assert_msg(setup_silently(&r, &q, NULL) == NMT_OK, "%s", nmt_error_message());
        ck_assert(r->s.warmup == 0 && r->s.patience == 3 && r->s.lr == 4e-3);
        ck_assert(r->s.linear_decay == 0 && r->s.warmup_share == 0);
        nmt_train_run_free(r);
        /* rsqrt asked for by name: the old default's 300 steps, no line */
        small_tf_request(&q, "tf-rsqrt");
        q.given.schedule = NMT_SCHEDULE_RSQRT;
        ck_assert_msg(setup_silently(&r, &q, NULL) == NMT_OK, "%s", nmt_error_message());
        ck_assert(r->s.warmup == NMT_RSQRT_WARMUP && r->s.linear_decay == 0);
        ck_assert(r->s.warmup_share == 0 && r->s.patience == 0);
        nmt_train_run_free(r);
    } else {
        ck_assert_int_eq(rc, NMT_ERR_ARG);
        ck_assert_str_eq(nmt_error_message(), "architecture transformer is not in this build of "
                                              "nmt");
        ck_assert(!exists(q.out_dir));
    }
    /* a joint vocabulary: one list of both sides' words, made a Transformer's
     * one table; refused for the RNN, saying why */
    small_tf_request(&q, "joint");
    q.s.model.joint_vocab = 1;
    if (nmt_arch_available(NMT_ARCH_TRANSFORMER)) {
        ck_assert_msg(setup_silently(&r, &q, NULL) == NMT_OK, "%s", nmt_error_message());
        const nmt_model *m = r->model;
        ck_assert_int_eq(m->cfg.joint_vocab, 1);
        ck_assert_ptr_null(nmt_model_tensor(m, "src_emb"));
        /* 4 specials, 14 source words and 14 target words, "." shared */
        ck_assert_int_eq(nmt_vocab_size(m->src_vocab), 4 + 14 + 14 - 1);
        ck_assert_int_eq(nmt_vocab_size(m->tgt_vocab), nmt_vocab_size(m->src_vocab));
        for (int id = 0; id < nmt_vocab_size(m->src_vocab); id++)
            ck_assert_str_eq(nmt_vocab_token(m->src_vocab, id),
                             nmt_vocab_token(m->tgt_vocab, id));
        ck_assert_str_eq(nmt_vocab_token(m->src_vocab, 4), "."); /* 3 + 3 times */
        nmt_train_run_free(r);
    }
    small_request(&q, "joint-rnn");
    q.s.model.joint_vocab = 1;
    ck_assert_int_eq(setup_silently(&r, &q, NULL), NMT_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "a joint vocabulary (one embedding table "
                                                      "for both sides) is a Transformer's"));
    ck_assert(!exists(q.out_dir));
    /* a folder that holds a run */
    small_request(&q, "twice");
    q.s.max_steps = 0; /* the run writes its initial model */
    ck_assert_int_eq(setup_silently(&r, &q, NULL), NMT_OK);
    ck_assert_int_eq(nmt_trainer_run(r->trainer, NULL, NULL), NMT_OK);
    nmt_train_run_free(r);
    ck_assert_int_eq(setup_silently(&r, &q, NULL), NMT_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "already holds a run"));
    /* a corpus that is not there: named, and nothing made */
    small_request(&q, "missing");
    q.s.src_path = in_tmp("nope.txt");
    ck_assert_int_ne(setup_silently(&r, &q, NULL), NMT_OK);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "nope.txt"));
    ck_assert(!exists(q.out_dir));
    /* absurd sizes, before the corpus is read */
    small_request(&q, "huge");
    q.s.model.rnn.emb = q.s.model.rnn.hidden = q.s.model.rnn.out_dim = 65536;
    ck_assert_int_eq(setup_silently(&r, &q, NULL), NMT_ERR_NOMEM);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "GiB"));
    ck_assert(!exists(q.out_dir));
    remove_tmpdir();
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("train-setup");
    TCase *tc = tcase_create("train-setup");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, a_fresh_run_comes_back_ready);
    tcase_add_test(tc, a_finished_run_resumed_writes_nothing);
    tcase_add_test(tc, memory_need_follows_the_plan);
    tcase_add_test(tc, dropout_follows_the_architecture);
    tcase_add_test(tc, warmup_turns_plateau_decay_off);
    tcase_add_test(tc, refusals_say_why);
    suite_add_tcase(s, tc);
    return s;
}
