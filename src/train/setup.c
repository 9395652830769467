/* Setting up a training run (nmt/train_setup.h): a fresh run's units,
 * subwords, corpora and model, or a resumed run's checkpoint and the
 * settings that may change; then the run's folder and the trainer (the
 * memory estimate is memory.c's). Every input is read and checked before
 * anything is written.
 * The corpora's files (recorded, found again on resume) are run_data.c's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nmt/dist.h"
#include "nmt/error.h"
#include "nmt/progress.h"
#include "nmt/stream.h"
#include "nmt/text.h"
#include "nmt/units.h"
#include "base/path.h"
#include "train/guided.h"
#include "train/run_data.h"

void nmt_train_request_default(nmt_train_request *q)
{
    memset(q, 0, sizeof *q);
    nmt_train_settings_default(&q->s);
    q->init_scale = 0.1;
}

static void emit(const nmt_setup_callbacks *cb, nmt_setup_event ev, const nmt_train_run *r)
{
    if (cb && cb->on_event)
        cb->on_event(cb->user, ev, r, NULL);
}

/* A refusal whose reason starts with what the library said (the message
 * is copied first: it is rewritten from itself). */
static int refuse_with(int rc, const char *prefix)
{
    char why[1024];
    snprintf(why, sizeof why, "%s", nmt_error_message());
    return nmt_set_error(rc, "%s%s", prefix, why);
}

/* ---- the run's folder ----------------------------------------------------------- */

static int check_out_dir(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return NMT_OK; /* created later, once every input has been read */
    if (!S_ISDIR(st.st_mode))
        return nmt_set_error(NMT_ERR_ARG, "--out %s: exists and is not a folder", dir);
    char path[4096];
    snprintf(path, sizeof path, "%s/checkpoint.safetensors", dir);
    if (access(path, F_OK) == 0)
        return nmt_set_error(NMT_ERR_ARG, "--out %s: already holds a run (continue it with "
                             "--resume %s, or choose another folder)", dir, dir);
    if (access(dir, W_OK | X_OK) != 0)
        return nmt_set_error(NMT_ERR_IO, "--out %s: %s", dir, strerror(errno));
    return NMT_OK;
}

/* mkdir -p */
static int make_dir(const char *dir)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return nmt_set_error(NMT_ERR_ARG, "--out: path too long");
    for (char *p = path + 1;; p++) {
        if (*p == '/' || *p == 0) {
            char keep = *p;
            *p = 0;
            if (mkdir(path, 0777) != 0 && errno != EEXIST)
                return nmt_set_error(NMT_ERR_IO, "--out %s: cannot create %s: %s", dir, path,
                                     strerror(errno));
            *p = keep;
            if (!keep)
                break;
        }
    }
    return NMT_OK;
}

/* ---- a resumed run ------------------------------------------------------------ */

/* A metadata number of the checkpoint (its validity was checked by the
 * settings' reader for train.*; state.* is checked again on restore). */
static long long ckpt_number(const nmt_train_run *r, const char *key)
{
    const char *v = nmt_file_meta(r->ckpt, key);
    return v ? strtoll(v, NULL, 10) : 0;
}

/* --max-steps or --epochs on --resume below where the run already is would
 * stop it at once and write the lower limit into its checkpoint: refused,
 * naming the run's step. */
static int check_limits_ahead(const nmt_train_run *r, const nmt_train_request *q)
{
    long long step = ckpt_number(r, "state.step"), epoch = ckpt_number(r, "state.epoch");
    long long batch = ckpt_number(r, "state.batch"), done = epoch - 1;
    if (q->given.max_steps && q->s.max_steps < step)
        return nmt_set_error(NMT_ERR_ARG, "--max-steps %lld: the run in %s is at step %lld "
                             "already; give a --max-steps above %lld to train on (nothing was "
                             "changed)", (long long)q->s.max_steps, q->resume_dir, step, step);
    if (q->given.epochs && (q->s.epochs < done || (q->s.epochs == done && batch > 0)))
        return nmt_set_error(NMT_ERR_ARG, "--epochs %d: the run in %s is past %d epochs "
                             "already (step %lld, in epoch %lld); give a larger --epochs to "
                             "train on (nothing was changed)", q->s.epochs, q->resume_dir,
                             q->s.epochs, step, epoch);
    return NMT_OK;
}

/* The checkpoint's model and settings, with those that may change on
 * resume (the limits, the threads, and the observers of this session);
 * its corpora found again. */
static int resume(nmt_train_run *r, const nmt_train_request *q, const nmt_setup_callbacks *cb)
{
    const nmt_train_given *g = &q->given;
    char path[4096];
    snprintf(path, sizeof path, "%s/checkpoint.safetensors", q->resume_dir);
    if (access(path, F_OK) != 0)
        return nmt_set_error(NMT_ERR_ARG, "--resume %s: no checkpoint.safetensors there to "
                             "resume", q->resume_dir);
    int rc = nmt_model_load(&r->model, path, &r->ckpt);
    if (!rc)
        rc = nmt_train_settings_from_file(&r->s, r->ckpt, &r->model->cfg);
    if (!rc)
        rc = check_limits_ahead(r, q);
    if (rc)
        return rc;
    r->planned_max_steps = r->s.max_steps;
    r->planned_epochs = r->s.epochs;
    r->planned_max_time = r->s.max_time;
    if (g->max_steps)
        r->s.max_steps = q->s.max_steps;
    if (g->epochs)
        r->s.epochs = q->s.epochs;
    if (g->threads)
        r->s.threads = q->s.threads;
    if (g->max_time)
        r->s.max_time = q->s.max_time;
    if (g->early_stop)
        r->s.early_stop = q->s.early_stop;
    /* the line to 0 is planned to the run's end: another end moves it */
    r->replanned = r->s.linear_decay &&
                   (r->s.max_steps != r->planned_max_steps || r->s.epochs != r->planned_epochs ||
                    r->s.max_time != r->planned_max_time);
    if (r->s.epochs == 0 && r->s.max_time <= 0 && r->s.max_steps < 0)
        return nmt_set_error(NMT_ERR_ARG, "--resume %s: the run has no limit but --max-time, "
                             "and --max-time 0 removes it: give --max-time, --epochs or "
                             "--max-steps too", q->resume_dir);
    r->s.batch_log_path = q->s.batch_log_path;
    r->s.archive_dir = q->s.archive_dir;
    r->dir = q->resume_dir;
    r->resumed = 1;
    const char *given[NMT_RUN_FILES] = {g->src ? q->s.src_path : NULL,
                                        g->tgt ? q->s.tgt_path : NULL,
                                        g->valid_src ? q->s.valid_src_path : NULL,
                                        g->valid_tgt ? q->s.valid_tgt_path : NULL,
                                        g->guided_links ? q->s.guided_links : NULL};
    return nmt_run_data_resume(r, given, cb);
}

/* On a run that early stopping ended, an --early-stop below the validations
 * it has had without improvement would have ended it sooner: refused before
 * anything is written, as a --max-steps below the run's step is. */
static int check_early_stop_ahead(const nmt_train_run *r, const nmt_train_request *q)
{
    const nmt_train_status *st = nmt_trainer_status(r->trainer);
    if (!q->given.early_stop || !st->early_stopped || q->s.early_stop == 0 ||
        q->s.early_stop >= st->bad_validations)
        return NMT_OK;
    return nmt_set_error(NMT_ERR_ARG, "--early-stop %d: the run in %s was ended by early "
                         "stopping after %d validations without improvement; give "
                         "--early-stop above %d to train on, or 0 to turn it off (nothing was "
                         "changed)", q->s.early_stop, r->dir, st->bad_validations,
                         st->bad_validations);
}

/* ---- a fresh run ---------------------------------------------------------------- */

/* "--dropout-emb, --dropout-enc, --dropout-out": the architecture's sites,
 * for a refusal. */
static void sites_text(nmt_arch a, char *buf, size_t size)
{
    const char *site;
    buf[0] = '\0';
    for (int k = 0; (site = nmt_arch_dropout_site(a, k)); k++) {
        size_t n = strlen(buf);
        snprintf(buf + n, size - n, "%s--dropout-%s", k ? ", " : "", site);
    }
}

/* The dropout of every site of the model's architecture: its own option,
 * else --dropout, else the architecture's default. A site the architecture
 * does not have is 0, and asking for it is refused. Word dropout likewise:
 * a side's own option, else --word-dropout, else 0 with --dropout 0, else
 * the default. *rule tells whether the architecture's rule by --max-time
 * (nmt_train_rule_dropout) set a site, for nmt train to say so
 * (nmt_train_run's dropout_rule). */
static int choose_dropout(nmt_train_settings *s, const nmt_train_request *q, int *rule)
{
    static const char *const sites[6] = {"emb", "enc", "out", "residual", "att", "ff"};
    const nmt_train_given *g = &q->given;
    const int given[6] = {g->dropout_emb, g->dropout_enc, g->dropout_out,
                          g->dropout_residual, g->dropout_att, g->dropout_ff};
    float *rate[6] = {&s->dropout_emb, &s->dropout_enc, &s->dropout_out,
                      &s->dropout_residual, &s->dropout_att, &s->dropout_ff};
    nmt_arch a = s->model.arch;
    float all = q->given.dropout ? q->dropout : nmt_train_rule_dropout(a, s->max_time);
    const nmt_arch_recipe *rec = nmt_arch_recipe_of(a);
    int by_rule = !q->given.dropout && rec && rec->long_seconds > 0;
    *rule = 0;
    for (int k = 0; k < 6; k++) {
        int has = nmt_arch_has_dropout(a, sites[k]);
        char own[128];
        if (given[k] && !has) {
            sites_text(a, own, sizeof own);
            if (q->init_from)
                return nmt_set_error(NMT_ERR_ARG, "--dropout-%s: the model of %s is of --arch "
                                     "%s, which has no such dropout (its own: %s)", sites[k],
                                     q->init_from, nmt_arch_name(a), own);
            return nmt_set_error(NMT_ERR_ARG, "--dropout-%s: --arch %s has no such dropout "
                                 "(its own: %s)", sites[k], nmt_arch_name(a), own);
        }
        if (!given[k])
            *rate[k] = has ? all : 0;
        if (!given[k] && has && by_rule)
            *rule = s->max_time >= rec->long_seconds ? 1 : -1;
    }
    /* word dropout replaces words, where --dropout drops units: --dropout 0
     * turns it off (every kind of dropout off, as the reference checks
     * need), a rate above 0 leaves it at its default */
    float words = g->word_dropout ? q->word_dropout
                  : g->dropout && q->dropout == 0 ? 0 : nmt_train_default_word_dropout(a);
    if (!g->word_dropout_src)
        s->word_dropout_src = words;
    if (!g->word_dropout_tgt)
        s->word_dropout_tgt = words;
    return NMT_OK;
}

/* The settings that follow from others given or not, once the model's
 * architecture is known: the lr of the optimizer and architecture, the
 * Transformer's schedule (a warm-up and a line to the run's end, unless
 * another schedule or a plateau decay was asked for) and batches by
 * tokens, a run limited by time alone, a warm-up's own decay. */
static void fill_defaults(nmt_train_settings *s, const nmt_train_request *q)
{
    const nmt_train_given *g = &q->given;
    if (!g->lr)
        s->lr = nmt_train_default_lr(s->model.arch, s->optimizer);
    const nmt_arch_recipe *rec = nmt_arch_recipe_of(s->model.arch);
    int plateaus_asked = g->lr_decay || (g->patience && s->patience > 0);
    /* the architecture's schedule unless one was asked for, by name or by
     * its parts (a warm-up alone is the rsqrt schedule's; a plateau's decay
     * or patience, the plateaus'); the Transformer's line needs the run's
     * end, which a streamed corpus's epochs do not give, and gives way to
     * the rsqrt schedule in a run given a long --max-time (its recipe's
     * long_rsqrt: nmt_train_rule_rsqrt) */
    int has_end = s->max_steps > 0 || s->max_time > 0 ||
                  (s->epochs > 0 && s->shuffle_buffer == 0);
    if (g->schedule == NMT_SCHEDULE_LINEAR)
        s->linear_decay = 1;
    else if (g->schedule == NMT_SCHEDULE_GIVEN_NONE && rec && rec->linear_decay && !g->warmup &&
             s->warmup == 0 && !plateaus_asked && has_end &&
             !nmt_train_rule_rsqrt(s->model.arch, s->max_time))
        s->linear_decay = 1;
    /* a warm-up in the settings stands even when not marked given; plateaus
     * asked for have none; rsqrt asked for, or the Transformer's line that
     * a stream without a step or time limit cannot draw, 300 steps */
    if (g->schedule == NMT_SCHEDULE_PLATEAU)
        s->warmup = 0;
    else if (!g->warmup && s->warmup == 0 && !plateaus_asked &&
             nmt_train_default_warmup(s->model.arch) > 0)
        s->warmup = s->linear_decay ? nmt_train_default_warmup(s->model.arch) : NMT_RSQRT_WARMUP;
    if (g->schedule == NMT_SCHEDULE_RSQRT && s->warmup == 0)
        s->warmup = NMT_RSQRT_WARMUP;
    /* a line's warm-up ends by a quarter of the run at the latest */
    if (s->linear_decay && s->warmup > 0 && !g->warmup_share && s->warmup_share == 0)
        s->warmup_share = NMT_WARMUP_SHARE;
    /* the architecture's batches by tokens unless a size was given: a
     * --batch-size alone asks for batches of that many sentences, a
     * --batch-tokens alone for the recipe's most sentences beside it */
    if (rec && rec->batch_tokens > 0 && !g->batch_size) {
        if (!g->batch_tokens)
            s->batch_tokens = rec->batch_tokens;
        s->batch_size = rec->batch_size;
    }
    /* a validated run hands over the mean of its last validations' models
     * when that validates better than the best of them */
    if (!g->keep_snapshots && !g->average_snapshots && s->valid_src_path &&
        s->keep_snapshots == 0) {
        s->keep_snapshots = NMT_DEFAULT_SNAPSHOTS;
        s->average_snapshots = 1;
    }
    /* a run limited by time alone: it goes on for as many epochs as fit */
    if (s->max_time > 0 && !g->epochs)
        s->epochs = 0;
    /* the schedule decays the lr itself (docs/training.md) */
    if ((s->warmup > 0 || s->linear_decay) && !g->patience)
        s->patience = 0;
}

/* A fresh run's model settings, and --init-from's model. */
static int begin(nmt_train_run *r, const nmt_train_request *q)
{
    r->s = q->s;
    r->dir = q->out_dir;
    if ((q->subwords || q->spm) && !q->given.max_len)
        r->s.max_len = NMT_SUBWORD_MAX_LEN;
    /* rank 0 makes and writes the run's folder (the others only train) */
    int rc;
    if (nmt_dist_rank() == 0 && (rc = check_out_dir(q->out_dir)))
        return rc;
    if (!q->init_from) {
        /* absurd sizes are refused at once, before the corpus is read (the
         * vocabularies are counted as if tiny; checked again once known) */
        nmt_config lower = r->s.model;
        lower.src_vocab = lower.tgt_vocab = NMT_N_SPECIAL;
        /* an architecture this build lacks has no recipe to choose by */
        if (!nmt_arch_available(lower.arch))
            return nmt_config_check(&lower);
        fill_defaults(&r->s, q);
        if ((rc = choose_dropout(&r->s, q, &r->dropout_rule)))
            return rc;
        return nmt_train_check_memory(&lower, r->s.optimizer, r->s.batch_size,
                                      r->s.max_len + 1);
    }
    if ((rc = nmt_model_load(&r->model, q->init_from, NULL)))
        return rc;
    r->s.model = r->model->cfg;
    fill_defaults(&r->s, q);
    if (r->model->subwords && !q->given.max_len)
        r->s.max_len = NMT_SUBWORD_MAX_LEN;
    return choose_dropout(&r->s, q, &r->dropout_rule);
}

/* In a run of several processes rank 0 learns the pieces and sends them to
 * the others (learning them again on each could differ). */
static int share_subwords(int rc, nmt_subwords **out)
{
    if (nmt_dist_size() <= 1)
        return rc;
    size_t n = 0;
    const unsigned char *bytes = rc == NMT_OK && *out ? nmt_subwords_bytes(*out, &n) : NULL;
    unsigned long long len = nmt_dist_rank() == 0 ? (unsigned long long)n : 0;
    if (nmt_dist_bcast(&len, sizeof len))
        return NMT_ERR_IO;
    if (len == 0) /* rank 0 failed and says why */
        return rc ? rc : nmt_set_error(NMT_ERR_IO, "rank 0 could not learn the subwords");
    unsigned char *buf = nmt_dist_rank() == 0 ? (unsigned char *)bytes : malloc(len);
    if (!buf)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    rc = nmt_dist_bcast(buf, len);
    if (nmt_dist_rank() != 0) {
        if (!rc)
            rc = nmt_subwords_load(out, buf, len, "rank 0's subwords");
        free(buf);
    }
    return rc;
}

/* --subwords N learns the pieces from the training corpus; --spm reads them. */
static int make_subwords(nmt_train_run *r, const nmt_train_request *q, nmt_subwords **out)
{
    double t0 = nmt_now();
    int rc = NMT_OK;
    *out = NULL;
    if (q->spm)
        rc = nmt_subwords_load_file(out, q->spm);
    else if (nmt_dist_rank() == 0 && r->s.shuffle_buffer > 0) /* a corpus too large to hold */
        rc = nmt_corpus_learn_subwords_sample(out, r->s.src_path, r->s.tgt_path, r->subwords,
                                              r->s.model.lowercase, NMT_SUBWORD_SAMPLE_PAIRS);
    else if (nmt_dist_rank() == 0)
        rc = nmt_corpus_learn_subwords(out, r->s.src_path, r->s.tgt_path, r->subwords,
                                       r->s.model.lowercase);
    if (!q->spm)
        rc = share_subwords(rc, out);
    if (rc) {
        char prefix[64];
        if (q->spm)
            return refuse_with(rc, "--spm ");
        snprintf(prefix, sizeof prefix, "--subwords %d: ", r->subwords);
        return refuse_with(rc, prefix);
    }
    if (!q->spm)
        r->learn_s = nmt_now() - t0;
    return NMT_OK;
}

/* Subword sampling draws from a unigram model's segmentations. */
static int check_sampling(const nmt_train_run *r, const nmt_subwords *sw)
{
    if (r->s.subword_alpha <= 0)
        return NMT_OK;
    if (!sw)
        return nmt_set_error(NMT_ERR_ARG, "--subword-alpha samples subwords: give --subwords N "
                             "or --spm FILE (or --init-from a model that reads subwords)");
    if (strcmp(nmt_subwords_type(sw), "unigram"))
        return nmt_set_error(NMT_ERR_ARG, "--subword-alpha samples from a unigram model's "
                             "segmentations; this SentencePiece model is %s",
                             nmt_subwords_type(sw));
    return NMT_OK;
}

/* The counting pass of a streamed corpus (nmt_stream_count): a fresh word
 * model's vocabularies into sv and tv (NULL: not wanted), and the pairs
 * into r->train's counts (its arrays stay empty: the trainer reads the
 * corpus in blocks). */
static int count_streamed(nmt_train_run *r, const nmt_subwords *sw, nmt_vocab **sv,
                          nmt_vocab **tv, size_t types[2])
{
    const nmt_train_settings *s = &r->s;
    nmt_corpus_opts o = {.lowercase = s->model.lowercase, .max_len = s->max_len,
                         .skip_empty = 1, .min_count = s->min_count,
                         .max_vocab = s->max_vocab, .joint_vocab = s->model.joint_vocab,
                         .subwords = sw};
    nmt_stream_counts k;
    int rc = nmt_stream_count(s->src_path, s->tgt_path, &o, sv, tv, &k);
    if (rc)
        return rc;
    memset(&r->train, 0, sizeof r->train);
    r->train.n = k.pairs;
    r->train.n_lines = k.lines;
    r->train.skipped_long = k.skipped_long;
    r->train.skipped_empty = k.skipped_empty;
    if (types) {
        types[0] = k.types[0];
        types[1] = k.types[1];
    }
    return NMT_OK;
}

/* choose_units for a streamed corpus: one counting pass, whose
 * vocabularies are kept for the model when words are chosen. */
static int choose_units_streamed(nmt_train_run *r, const nmt_train_request *q)
{
    size_t types[2];
    int rc = count_streamed(r, NULL, &r->counted[0], &r->counted[1], types);
    if (rc)
        return rc;
    size_t words = types[0] > types[1] ? types[0] : types[1];
    if (words > NMT_AUTO_SUBWORDS) {
        nmt_vocab_free(r->counted[0]);
        nmt_vocab_free(r->counted[1]);
        r->counted[0] = r->counted[1] = NULL;
        r->subwords = NMT_AUTO_SUBWORDS;
        r->subwords_auto = (int)words;
        if (!q->given.max_len)
            r->s.max_len = NMT_SUBWORD_MAX_LEN;
    }
    return NMT_OK;
}

/* The default units of a fresh run (NMT_AUTO_SUBWORDS): the words of the
 * corpus are counted first. */
static int choose_units(nmt_train_run *r, const nmt_train_request *q)
{
    r->subwords = q->subwords;
    if (r->model || q->given.subwords || q->spm || q->given.min_count || q->given.max_vocab)
        return NMT_OK;
    if (r->s.shuffle_buffer > 0)
        return choose_units_streamed(r, q);
    nmt_corpus c;
    nmt_vocab *sv = NULL, *tv = NULL;
    nmt_corpus_opts o = {.lowercase = r->s.model.lowercase, .max_len = r->s.max_len,
                         .skip_empty = 1, .min_count = 1};
    int rc = nmt_corpus_read(&c, r->s.src_path, r->s.tgt_path, &o, &sv, &tv);
    if (rc)
        return rc;
    int words = nmt_vocab_size(sv) > nmt_vocab_size(tv) ? nmt_vocab_size(sv) : nmt_vocab_size(tv);
    nmt_corpus_free(&c);
    nmt_vocab_free(sv);
    nmt_vocab_free(tv);
    if (words - NMT_N_SPECIAL > NMT_AUTO_SUBWORDS) {
        r->subwords = NMT_AUTO_SUBWORDS;
        r->subwords_auto = words - NMT_N_SPECIAL;
        if (!q->given.max_len)
            r->s.max_len = NMT_SUBWORD_MAX_LEN;
    }
    return NMT_OK;
}

/* A fresh model of the corpus's vocabularies (counted on the corpus, or
 * the pieces of sw on both sides), which takes sw, with its initial
 * weights. */
static int make_model(nmt_train_run *r, const nmt_train_request *q, nmt_subwords *sw,
                      nmt_vocab *sv, nmt_vocab *tv)
{
    const nmt_train_settings *s = &r->s;
    int rc = NMT_OK;
    if (sw && ((rc = nmt_vocab_of_pieces(sw, &sv)) || (rc = nmt_vocab_of_pieces(sw, &tv)))) {
        nmt_vocab_free(sv);
        nmt_subwords_free(sw);
        return rc;
    }
    nmt_config cfg = s->model;
    cfg.src_vocab = nmt_vocab_size(sv);
    cfg.tgt_vocab = nmt_vocab_size(tv);
    if ((rc = nmt_train_check_memory(&cfg, s->optimizer, s->batch_size, s->max_len + 1))) {
        nmt_vocab_free(sv);
        nmt_vocab_free(tv);
        nmt_subwords_free(sw);
        return rc;
    }
    if ((rc = nmt_model_create(&r->model, &cfg, sv, tv))) {
        nmt_vocab_free(sv); /* a model that is not made takes nothing */
        nmt_vocab_free(tv);
        nmt_subwords_free(sw);
        return rc;
    }
    r->model->subwords = sw;
    r->s.model = r->model->cfg;
    /* the architecture's recipe when not asked (the RNN's: uniform in
     * +-init_scale) */
    nmt_init_scheme scheme = q->given.init ? q->init : nmt_init_default(cfg.arch);
    return nmt_model_init(r->model, scheme, q->init_scale, s->seed);
}

/* Validation keeps every pair (--max-len skips training pairs only), so a
 * pair too long for the passes (1 << 16 positions: tokens + </s>) or for
 * memory is refused here, by file and line, before the run starts. */
static int check_valid_lengths(const nmt_train_run *r)
{
    const nmt_corpus *c = &r->valid;
    const size_t limit = ((size_t)1 << 16) - 1;
    size_t longest = 0;
    for (size_t i = 0; i < c->n; i++) {
        size_t ls = c->src_off[i + 1] - c->src_off[i], lt = c->tgt_off[i + 1] - c->tgt_off[i];
        if (ls > limit || lt > limit)
            return nmt_set_error(NMT_ERR_ARG, "%s:%zu: a validation sentence of %zu tokens is "
                                 "too long (at most %zu)",
                                 ls > limit ? r->s.valid_src_path : r->s.valid_tgt_path,
                                 c->line[i], ls > limit ? ls : lt, limit);
        longest = ls > longest ? ls : longest;
        longest = lt > longest ? lt : longest;
    }
    return nmt_train_check_memory(&r->model->cfg, r->s.optimizer, r->s.batch_size,
                                  (int)longest + 1);
}

/* The validation set, read by rank 0 alone (it validates for all). */
static int read_valid(nmt_train_run *r)
{
    const nmt_train_settings *s = &r->s;
    if (!s->valid_src_path || nmt_dist_rank() != 0)
        return NMT_OK;
    nmt_corpus_opts vo = {.lowercase = s->model.lowercase, .max_len = 0, .skip_empty = 0,
                          .subwords = r->model->subwords};
    nmt_vocab *sv = r->model->src_vocab, *tv = r->model->tgt_vocab;
    int rc = nmt_corpus_read(&r->valid, s->valid_src_path, s->valid_tgt_path, &vo, &sv, &tv);
    if (rc)
        return rc;
    r->have_valid = 1;
    if ((rc = check_valid_lengths(r)) ||
        (rc = nmt_read_lines(s->valid_tgt_path, &r->refs, &r->n_refs)))
        return rc;
    if (r->n_refs != r->valid.n)
        return nmt_set_error(NMT_ERR_FORMAT, "%s: %zu lines but %zu validation pairs",
                             s->valid_tgt_path, r->n_refs, r->valid.n);
    r->valid_set = (nmt_valid_set){.corpus = &r->valid, .refs = r->refs, .n_refs = r->n_refs};
    return NMT_OK;
}

/* The training corpus in the model's units (a fresh model is made of it
 * here), then the validation set. */
static int read_corpora(nmt_train_run *r, const nmt_train_request *q)
{
    const nmt_train_settings *s = &r->s;
    int rc = choose_units(r, q);
    if (rc)
        return rc;
    nmt_subwords *fresh_sw = NULL; /* a fresh subword run's, until the model takes it */
    if (!r->model && (r->subwords || q->spm) && (rc = make_subwords(r, q, &fresh_sw)))
        return rc;
    const nmt_subwords *sw = r->model ? r->model->subwords : fresh_sw;
    nmt_corpus_opts o = {.lowercase = s->model.lowercase, .max_len = s->max_len, .skip_empty = 1,
                         .min_count = s->min_count, .max_vocab = s->max_vocab,
                         .joint_vocab = s->model.joint_vocab, .subwords = sw,
                         .words = s->guided_links != NULL};
    nmt_vocab *sv = r->model ? r->model->src_vocab : NULL;
    nmt_vocab *tv = r->model ? r->model->tgt_vocab : NULL;
    /* the architecture's sampling where the pieces can be sampled (a
     * resumed run keeps its checkpoint's) */
    if (!q->given.subword_alpha && !r->resumed && sw && s->shuffle_buffer == 0 &&
        !strcmp(nmt_subwords_type(sw), "unigram") && s->src_path && s->tgt_path &&
        strcmp(s->src_path, "-") && strcmp(s->tgt_path, "-")) {
        r->s.subword_alpha = nmt_train_rule_subword_alpha(s->model.arch, s->max_time);
        r->sampling_rule = r->s.subword_alpha > 0;
    }
    if ((rc = check_sampling(r, sw))) {
        nmt_subwords_free(fresh_sw);
        return rc;
    }
    if (s->shuffle_buffer > 0) {
        /* streamed: counted (a resumed run's corpus was, when it began) */
        if (!r->model && !sw && r->counted[0]) {
            sv = r->counted[0];
            tv = r->counted[1];
            r->counted[0] = r->counted[1] = NULL;
        } else if (!r->resumed) {
            rc = count_streamed(r, sw, r->model || sw ? NULL : &sv, r->model || sw ? NULL : &tv,
                                NULL);
        }
        if (rc) {
            nmt_subwords_free(fresh_sw);
            return rc;
        }
        if (r->resumed)
            return read_valid(r);
    } else if ((rc = nmt_corpus_read(&r->train, s->src_path, s->tgt_path, &o, &sv, &tv))) {
        nmt_subwords_free(fresh_sw);
        return rc;
    } else {
        r->have_train = 1;
    }
    if (r->train.n == 0) {
        if (!r->model) {
            nmt_vocab_free(sv);
            nmt_vocab_free(tv);
        }
        nmt_subwords_free(fresh_sw);
        return nmt_set_error(NMT_ERR_ARG, "%s: no pair left to train on (%zu longer than "
                             "--max-len %d, %zu with an empty side)", s->src_path,
                             r->train.skipped_long, s->max_len, r->train.skipped_empty);
    }
    if (!r->model && (rc = make_model(r, q, fresh_sw, sv, tv)))
        return rc;
    return read_valid(r);
}

/* ---- the run ------------------------------------------------------------------ */

void nmt_train_run_free(nmt_train_run *r)
{
    if (!r)
        return;
    nmt_trainer_free(r->trainer);
    nmt_free_lines(r->refs, r->n_refs);
    if (r->have_valid)
        nmt_corpus_free(&r->valid);
    if (r->have_train)
        nmt_corpus_free(&r->train);
    nmt_model_free(r->model);
    nmt_vocab_free(r->counted[0]);
    nmt_vocab_free(r->counted[1]);
    nmt_file_free(r->ckpt);
    nmt_run_data_free(r);
    if (r->links)
        nmt_links_free(r->links);
    free(r->links);
    free(r);
}

/* The run's folder and the trainer, restored from the checkpoint on resume. */
static int start(nmt_train_run *r, const nmt_train_request *q, const nmt_setup_callbacks *cb)
{
    int rc;
    /* a fresh run's checkpoint names its corpora by absolute path, with
     * their path from the run folder and their prints, so that a resume
     * finds them from any folder and can check data that moved */
    if (!r->resumed) {
        if ((rc = nmt_run_data_record(r)) ||
            (nmt_dist_rank() == 0 && (rc = make_dir(r->dir))))
            return rc;
        nmt_run_data_relate(r, r->dir);
    }
    emit(cb, NMT_SETUP_READY, r);
    rc = nmt_trainer_create(&r->trainer, r->model, &r->s, r->s.shuffle_buffer > 0 ? NULL : &r->train,
                            r->have_valid ? &r->valid_set : NULL, r->dir);
    if (!rc && r->links)
        rc = nmt_trainer_guide(r->trainer, r->links);
    if (!rc && r->resumed)
        rc = nmt_trainer_restore(r->trainer, r->ckpt);
    if (!rc && r->resumed)
        rc = check_early_stop_ahead(r, q);
    return rc;
}

int nmt_train_setup(nmt_train_run **out, const nmt_train_request *q,
                    const nmt_setup_callbacks *cb)
{
    *out = NULL;
    nmt_train_run *r = calloc(1, sizeof *r);
    if (!r)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    /* every input is read and checked before anything is written */
    int rc = q->resume_dir ? resume(r, q, cb) : begin(r, q);
    if (!rc)
        rc = nmt_guided_check(r);
    if (!rc)
        rc = read_corpora(r, q);
    if (!rc)
        rc = nmt_guided_setup(r, q);
    if (!rc)
        emit(cb, NMT_SETUP_READ, r);
    if (!rc)
        rc = start(r, q, cb);
    if (rc) {
        nmt_train_run_free(r);
        return rc;
    }
    *out = r;
    return NMT_OK;
}
