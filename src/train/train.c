/* The training loop: batches of an epoch's plan through forward, backward,
 * clipping and the optimizer; validation (perplexity and greedy BLEU), the
 * best model, the learning-rate schedule, early stopping, checkpoints and
 * log.tsv.
 *
 * Exact resume rests on three things: the batch plan is a pure function of
 * (corpus, batch size, seed, epoch); the only other randomness (dropout) comes
 * from one rng whose state the checkpoint stores; and checkpoints are only
 * written between steps, with the position in the plan. A streamed corpus
 * (--shuffle-buffer, stream_blocks.c) is planned block by block, and the
 * checkpoint also keeps the block and its generator's state. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nmt/average.h"
#include "nmt/error.h"
#include "nmt/dist.h"
#include "nmt/progress.h"
#include "nmt/runlog.h"
#include "nmt/text.h"
#include "nmt/threads.h"
#include "nmt/units.h"
#include "io/safetensors.h"
#include "train/trainer.h"

/* ---- the trainer ------------------------------------------------------------- */

int nmt_trainer_guide(nmt_trainer *t, const nmt_links *links)
{
    if (!t->train || !t->train->src_word || !t->train->tgt_word)
        return nmt_set_error(NMT_ERR_ARG, "guided alignment needs the training corpus read "
                             "whole with its words (nmt_corpus_opts.words)");
    if (!t->s.guided_links)
        return nmt_set_error(NMT_ERR_ARG, "guided alignment needs the settings' guided_links");
    t->links = links;
    return NMT_OK;
}

void nmt_trainer_free(nmt_trainer *t)
{
    if (!t)
        return;
    if (t->log)
        fclose(t->log);
    free(t->log_path);
    if (t->batch_log)
        fclose(t->batch_log);
    nmt_bleu_free(t->bleu);
    nmt_decoder_free(t->decoder);
    nmt_batch_plan_free(&t->plan);
    nmt_batch_free(&t->batch);
    nmt_workspace_free(t->ws);
    nmt_optim_free(&t->opt);
    nmt_corpus_free(&t->sampled);
    nmt_stream_close(t->stream);
    free(t->grad_sum);
    free(t->dir);
    free(t);
}

const nmt_train_status *nmt_trainer_status(const nmt_trainer *t)
{
    return &t->st;
}

int nmt_trainer_create(nmt_trainer **out, nmt_model *m, const nmt_train_settings *s,
                       const nmt_corpus *train, const nmt_valid_set *valid,
                       const char *out_dir)
{
    *out = NULL;
    if (s->batch_size < 1)
        return nmt_set_error(NMT_ERR_ARG, "batch size must be at least 1");
    if (s->accumulate < 1 || s->batch_tokens < 0)
        return nmt_set_error(NMT_ERR_ARG, "accumulate must be at least 1 and batch tokens at "
                             "least 0, not %d and %d", s->accumulate, s->batch_tokens);
    if (s->shuffle_buffer < 0 || !(s->word_dropout_src >= 0 && s->word_dropout_src < 1) ||
        !(s->word_dropout_tgt >= 0 && s->word_dropout_tgt < 1))
        return nmt_set_error(NMT_ERR_ARG, "the shuffle buffer must be 0 (off) or more pairs, "
                             "word dropout rates in [0, 1)");
    /* a streamed corpus is read by the trainer (stream_blocks.c): no corpus is given */
    if (s->shuffle_buffer == 0 && (!train || train->n == 0))
        return nmt_set_error(NMT_ERR_ARG, "the training corpus has no pair left to train on");
    if (s->warmup > 0 && s->patience > 0)
        return nmt_set_error(NMT_ERR_ARG, "a warmup schedule decays the learning rate itself: "
                             "patience must be 0 (no decay on plateaus)");
    if (s->linear_decay && s->patience > 0)
        return nmt_set_error(NMT_ERR_ARG, "a linear decay lowers the learning rate itself: "
                             "patience must be 0 (no decay on plateaus)");
    if (!(s->decay_from >= 0 && s->decay_from < 1) || (s->decay_from > 0 && !s->linear_decay))
        return nmt_set_error(NMT_ERR_ARG, "the start of a linear decay must be in [0, 1), "
                             "and only a linear decay has one");
    if (!(s->warmup_share >= 0 && s->warmup_share < 1) ||
        (s->warmup_share > 0 && !s->linear_decay))
        return nmt_set_error(NMT_ERR_ARG, "the share of the run that bounds a warm-up must be "
                             "in [0, 1), and only a linear decay has one");
    /* a streamed corpus's epoch is not counted in batches until its last
     * block: its epochs cannot place the end */
    if (s->linear_decay && s->max_steps <= 0 && s->max_time <= 0 &&
        (s->epochs <= 0 || s->shuffle_buffer > 0))
        return nmt_set_error(NMT_ERR_ARG, "a linear decay needs the run's end to decay to: "
                             "a step limit, a time limit, or (a corpus read whole) an "
                             "epoch limit");
    if (s->subword_alpha > 0 && (!m->subwords || !s->src_path || !s->tgt_path))
        return nmt_set_error(NMT_ERR_ARG, "subword sampling needs a subword model and the "
                             "training corpus's files");
    nmt_trainer *t = calloc(1, sizeof *t);
    if (!t)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for the trainer");
    t->m = m;
    t->s = *s;
    t->train = train;
    if (valid && valid->corpus)
        t->valid = *valid;
    t->dir = strdup(out_dir);
    t->last_valid_step = -1;
    t->last_saved_step = -1;
    t->st.epoch = 1;
    t->st.lr = s->lr;
    t->st.best_bleu = -1;
    t->st.best_ppl = (double)INFINITY;
    t->lowest_ppl = (double)INFINITY;
    t->highest_bleu = -1;
    t->averaged_step = -1;
    t->st.best_step = -1;
    t->st.time_limit_s = s->max_time;
    /* dropout's stream, apart from the init's (seed) and the shuffles' (seed, epoch) */
    nmt_rng_seed(&t->rng, s->seed ^ 0xd1b54a32d192ed03ULL);
    t->rank = nmt_dist_rank();
    t->size = nmt_dist_size();
    t->validates_elsewhere = t->rank != 0 && s->valid_src_path != NULL;
    /* a pool short of threads would still train, but not at the speed or
     * with the cut of the products that --threads asks for */
    int rc = nmt_set_threads(s->threads);
    if (!rc && t->size > 1 && s->batch_log_path)
        rc = nmt_set_error(NMT_ERR_ARG, "--batch-log writes one process's batches: it is not "
                           "available in a run of %d processes", t->size);

    int src_T = 1, tgt_T = 1;
    if (s->shuffle_buffer > 0 && !rc)
        rc = nmt_stream_blocks_open(t);
    /* a streamed corpus's rows are sized block by block (stream_blocks.c) */
    if (s->shuffle_buffer == 0)
        nmt_corpus_max_lengths(train, &src_T, &tgt_T);
    if (t->valid.corpus)
        nmt_corpus_max_lengths(t->valid.corpus, &src_T, &tgt_T);
    if (!t->dir)
        rc = nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    if (!rc)
        rc = nmt_optim_init(&t->opt, s->optimizer, m->n_params, s->lr);
    if (!rc && !m->grads)
        rc = nmt_model_alloc_grads(m);
    if (!rc && s->accumulate > 1 && !(t->grad_sum = malloc(m->n_params * sizeof *t->grad_sum)))
        rc = nmt_set_error(NMT_ERR_NOMEM, "out of memory for --accumulate's gradient sum");
    t->src_T = src_T;
    t->tgt_T = tgt_T;
    if (!rc)
        rc = nmt_batch_alloc(&t->batch, s->batch_size, src_T, tgt_T);
    if (!rc)
        rc = nmt_workspace_create(&t->ws, m, s->batch_size, src_T, tgt_T);
    if (!rc && t->valid.corpus)
        rc = nmt_valid_decoder(&t->decoder, m, s->batch_size, src_T);
    if (!rc && t->valid.corpus)
        rc = nmt_valid_bleu(&t->bleu, m);
    if (rc) {
        nmt_trainer_free(t);
        return rc;
    }
    *out = t;
    return NMT_OK;
}

/* ---- the loop ------------------------------------------------------------------- */

static void emit(const nmt_train_callbacks *cb, nmt_train_event ev, const nmt_train_status *st)
{
    if (cb && cb->on_event)
        cb->on_event(cb->user, ev, st);
}

/* The steps the run takes at most; 0 when only --max-time limits it. A
 * step takes `accumulate` batches, fewer at the end of an epoch. */
static int64_t total_steps(const nmt_trainer *t, size_t n_batches)
{
    if (t->stream) /* an epoch's batches are known at its last block only */
        return t->s.max_steps >= 0 ? t->s.max_steps : 0;
    int64_t per_epoch = (int64_t)((n_batches + (size_t)t->s.accumulate - 1) /
                                  (size_t)t->s.accumulate);
    int64_t by_epochs = t->s.epochs > 0 ? (int64_t)t->s.epochs * per_epoch : -1;
    if (t->s.max_steps >= 0 && (by_epochs < 0 || t->s.max_steps < by_epochs))
        return t->s.max_steps;
    return by_epochs > 0 ? by_epochs : 0;
}

/* Writes a log row from what was accumulated since the last one. */
static int report(nmt_trainer *t, const nmt_train_callbacks *cb, double now)
{
    nmt_train_status *st = &t->st;
    st->elapsed_s = t->elapsed_base + (now - t->t_start);
    if (t->acc_steps > 0) {
        st->loss = t->acc_nll / t->acc_tok;
        st->ppl = exp(st->loss);
        st->grad_norm = t->acc_norm / (double)t->acc_steps;
    }
    double training = now - t->t_report - t->t_validating;
    st->tok_per_s = training > 0 ? t->rate_tok / training : 0;
    int rc = nmt_runlog_append(t->log, t->log_path, st);
    if (rc)
        return rc;
    emit(cb, NMT_TRAIN_REPORT, st);
    t->acc_nll = t->acc_tok = t->acc_norm = 0;
    t->acc_steps = 0;
    t->rate_tok = 0;
    t->t_validating = 0;
    t->t_report = now;
    return NMT_OK;
}

/* Whether validation scores beat those of best.safetensors, by the run's
 * metric (the other breaks ties). */
static int beats_best(const nmt_trainer *t, double bleu, double ppl)
{
    const nmt_train_status *st = &t->st;
    if (t->s.best_metric == NMT_BEST_PPL)
        return ppl < st->best_ppl || (ppl == st->best_ppl && bleu > st->best_bleu);
    /* a BLEU below 1 is noise (a 60-step run: 0.0394 against 0.0389 while
     * the perplexity fell from 4743 to 1349): until BLEU reaches 1 the
     * perplexity decides */
    if (bleu < 1 && st->best_bleu < 1)
        return ppl < st->best_ppl || (ppl == st->best_ppl && bleu > st->best_bleu);
    return bleu > st->best_bleu || (bleu == st->best_bleu && ppl < st->best_ppl);
}

static int new_best(nmt_trainer *t, const nmt_train_callbacks *cb, int average_of)
{
    nmt_train_status *st = &t->st;
    st->best_bleu = st->valid_bleu;
    st->best_ppl = st->valid_ppl;
    st->best_step = st->step;
    st->best_average_of = average_of;
    int rc = nmt_trainer_save_best(t);
    if (rc == NMT_OK)
        emit(cb, NMT_TRAIN_BEST, st);
    return rc;
}

/* `what` says which number went bad at `step`: "the loss is NaN". */
static int diverged(const nmt_trainer *t, int64_t step, const char *what)
{
    return nmt_set_error(NMT_ERR_NUMERIC, "%s at step %lld (epoch %d): training diverged. The "
                         "last good checkpoint (step %lld) is kept in %s. Try a lower --lr (it "
                         "is %g) or gradient clipping (e.g. --clip 5)", what, (long long)step,
                         t->st.epoch, (long long)t->last_saved_step, t->dir, t->st.lr);
}

/* A validation and what follows from it: best model, snapshot, lr decay,
 * early stop. Sets *stop_run when early stopping ends the run.
 *
 * Only a validation of the schedule (every valid_every steps, epoch ends)
 * counts. The one a run makes where --max-steps or --max-time stopped it
 * between those is reported and may become best.safetensors, but changes
 * nothing else (no snapshot, no lr decay, no patience or early-stop count,
 * the scores that judge improvement stay): a run extended from there with
 * --resume must go on as if it had never stopped. */
static int validate_step(nmt_trainer *t, const nmt_train_callbacks *cb, int scheduled,
                         int *stop_run)
{
    nmt_train_status *st = &t->st;
    valid_tools vt = {t->ws, &t->batch, t->decoder, t->bleu};
    double t0 = nmt_now();
    int rc = NMT_OK;
    if (t->valid.corpus)
        rc = nmt_validate_with(t->m, &vt, &t->valid, t->s.batch_size, t->s.batch_tokens,
                               &st->valid_ppl, &st->valid_bleu);
    if (t->size > 1) {
        /* rank 0 validated: every process takes its scores, so that all make
         * the same decisions (best, lr decay, early stop) */
        double got[3] = {(double)rc, st->valid_ppl, st->valid_bleu};
        int brc = nmt_dist_bcast(got, sizeof got);
        if (brc)
            return brc;
        if (t->rank != 0 && got[0] != 0)
            return nmt_set_error((int)got[0], "validation failed on rank 0");
        st->valid_ppl = got[1];
        st->valid_bleu = got[2];
    }
    t->t_validating += nmt_now() - t0;
    if (rc == NMT_ERR_NUMERIC) /* finite weights so large that the outputs overflow */
        return diverged(t, st->step, "the validation's log-probabilities are not finite");
    if (rc)
        return rc;
    st->has_valid = 1;
    t->last_valid_step = st->step;
    emit(cb, NMT_TRAIN_VALID, st);
    if (beats_best(t, st->valid_bleu, st->valid_ppl) && (rc = new_best(t, cb, 0)))
        return rc;
    if (t->s.archive_dir && (rc = nmt_snapshot_archive(t)))
        return rc;
    if (!scheduled)
        return NMT_OK;
    if (t->s.keep_snapshots > 0) {
        if ((rc = nmt_snapshot_save(t)))
            return rc;
        emit(cb, NMT_TRAIN_SNAPSHOT, st);
    }
    /* By BLEU, training still improves while either BLEU or perplexity
     * does (early on, greedy BLEU stays near 0 while the perplexity falls
     * fast); by perplexity, while it falls. */
    int improved = st->valid_ppl < t->lowest_ppl ||
                   (t->s.best_metric == NMT_BEST_BLEU && st->valid_bleu > t->highest_bleu);
    if (st->valid_ppl < t->lowest_ppl)
        t->lowest_ppl = st->valid_ppl;
    if (st->valid_bleu > t->highest_bleu)
        t->highest_bleu = st->valid_bleu;
    if (improved) {
        st->bad_validations = 0;
        t->since_decay = 0;
        return NMT_OK;
    }
    st->bad_validations++;
    t->since_decay++;
    if (t->s.patience > 0 && t->since_decay >= t->s.patience && t->s.lr_decay != 1.0) {
        st->lr *= t->s.lr_decay;
        t->opt.lr = st->lr;
        t->since_decay = 0;
        emit(cb, NMT_TRAIN_LR_DECAY, st);
    }
    if (t->s.early_stop > 0 && st->bad_validations >= t->s.early_stop) {
        *stop_run = 1;
        st->early_stopped = 1;
        emit(cb, NMT_TRAIN_EARLY_STOP, st);
    }
    return NMT_OK;
}

/* The batches the step at the current position takes: `accumulate` of
 * them, fewer at the end of an epoch. */
static size_t step_batches(const nmt_trainer *t)
{
    size_t left = t->st.n_batches - t->st.batch, k = (size_t)t->s.accumulate;
    return left < k ? left : k;
}

/* The gradient and loss of the step's batches (--accumulate), or of this
 * process's share of them (several processes), made into those of one
 * batch of all their pairs: each batch's gradient is of the mean over its
 * own tokens, so it is weighted by its token count, summed over the batches
 * and the processes (round a ring in a fixed order: the same bits
 * everywhere and every run) and divided by the step's count. *loss and
 * *tokens are the whole step's. The caller zeroed the gradient. */
static int summed_forward_backward(nmt_trainer *t, const nmt_regularizer *reg, double *loss,
                                   double *tokens)
{
    nmt_real *g = t->m->grads, *sum = t->grad_sum;
    size_t n_params = t->m->n_params, nb = t->stream ? (size_t)t->s.accumulate : step_batches(t);
    int rc = NMT_OK;
    double mine[2] = {0, 0}; /* summed -log p and tokens */
    if (sum)
        memset(sum, 0, n_params * sizeof *sum);
    for (size_t k = 0; k < nb; k++) {
        const size_t *pairs;
        int n, lo = 0, hi;
        /* a streamed epoch ends where its last block does */
        if (t->stream && (rc = nmt_stream_blocks_at(t, t->st.batch + k)) <= 0) {
            if (rc < 0)
                return rc;
            if (k == 0) {
                nmt_set_error(NMT_ERR_FORMAT, "no batch %zu in epoch %d", t->st.batch,
                              t->st.epoch);
                return NMT_ERR_FORMAT;
            }
            break;
        }
        t->step_took = k + 1;
        nmt_plan_batch(t, t->st.batch + k, &pairs, &n);
        hi = n;
        if (t->size > 1)
            nmt_step_share(t, pairs, n, &lo, &hi);
        if (hi <= lo)
            continue; /* adds a zero gradient */
        nmt_rng own, *r = &t->rng;
        if (t->size > 1) /* one process's stream goes on from batch to batch */
            nmt_step_rng(t, k, t->rank, r = &own);
        if ((rc = nmt_step_batch(t, k, pairs, lo, hi, r)))
            return rc;
        if (k > 0)
            nmt_model_zero_grad(t->m);
        nmt_real l;
        if ((rc = nmt_forward_backward(&l, t->m, t->ws, &t->batch, reg, r)))
            return rc;
        double tok = (double)t->batch.n_tgt_tokens;
        mine[0] += (double)l * tok;
        mine[1] += tok;
        float w = (float)tok;
        if (sum)
            for (size_t i = 0; i < n_params; i++)
                sum[i] += w * g[i];
        else
            for (size_t i = 0; i < n_params; i++)
                g[i] *= w;
    }
    if (sum)
        memcpy(g, sum, n_params * sizeof *g);
    if ((rc = nmt_dist_sum_floats(g, n_params)) || (rc = nmt_dist_sum_doubles(mine, 2)))
        return rc;
    float inv = (float)(1.0 / mine[1]);
    for (size_t i = 0; i < n_params; i++)
        g[i] *= inv;
    *loss = mine[0] / mine[1];
    *tokens = mine[1];
    return NMT_OK;
}

double nmt_lr_warmup(double lr, int64_t warmup, int64_t step)
{
    if (step <= warmup)
        return lr * (double)step / (double)warmup;
    return lr * sqrt((double)warmup / (double)step);
}

double nmt_lr_linear(double lr, int64_t warmup, double share, int64_t step, double progress,
                     double from)
{
    if (step <= warmup && !(share > 0 && progress >= share)) {
        /* the steps' ramp as it always was, bit for bit, unless the run's
         * share is nearer its end */
        double by_steps = lr * (double)step / (double)warmup;
        double by_share = share > 0 ? lr * progress / share : 0;
        return by_share > by_steps ? by_share : by_steps;
    }
    if (!(progress > from)) /* NaN too */
        return lr;
    return progress >= 1 ? 0 : lr * (1 - progress) / (1 - from);
}

/* How much of the run is done as step `step` (1 for the first) starts, for
 * a linear decay: the furthest of the steps made against the step limit,
 * the epochs made against the epoch limit (the step's first batch placed
 * in its epoch's batches, so that an epoch of more or fewer batches than
 * the last is still one epoch) and the time spent against the time limit,
 * by rank 0's clock on every process (their lr must be one). Time makes it
 * the one part of a run that is not a function of the step and the
 * position: two runs of one seed and time limit differ. */
static double progress_at(const nmt_trainer *t, int64_t step, double elapsed)
{
    double p = 0;
    if (t->s.max_steps > 0)
        p = (double)(step - 1) / (double)t->s.max_steps;
    if (t->s.epochs > 0 && !t->stream && t->st.n_batches > 0) {
        double e = ((double)(t->st.epoch - 1) +
                    (double)t->st.batch / (double)t->st.n_batches) / (double)t->s.epochs;
        if (e > p)
            p = e;
    }
    if (t->s.max_time > 0 && elapsed / t->s.max_time > p)
        p = elapsed / t->s.max_time;
    return p;
}

static int run_progress(double *progress, const nmt_trainer *t, int64_t step)
{
    double p = progress_at(t, step, t->elapsed_base + (nmt_now() - t->t_start));
    /* the clocks of the processes differ: rank 0's decides for all, or their
     * lrs, and so their weights, would part */
    if (t->size > 1 && t->s.max_time > 0) {
        int rc = nmt_dist_bcast(&p, sizeof p);
        if (rc)
            return rc;
    }
    *progress = p;
    return 0;
}

double nmt_trainer_lr_ahead(const nmt_trainer *t)
{
    int64_t step = t->st.step + 1;
    if (t->s.linear_decay)
        return nmt_lr_linear(t->s.lr, t->s.warmup, t->s.warmup_share, step,
                             progress_at(t, step, t->elapsed_base), t->s.decay_from);
    if (t->s.warmup > 0)
        return nmt_lr_warmup(t->s.lr, t->s.warmup, step);
    return t->st.lr;
}

/* One optimizer step on the batch at the current position (on the
 * `accumulate` batches from there). */
static int train_step(nmt_trainer *t)
{
    int rc;
    if (t->stream && t->size == 1 && t->s.accumulate == 1) {
        if ((rc = nmt_stream_blocks_at(t, t->st.batch)) < 0)
            return rc;
        if (rc == 0) {
            nmt_set_error(NMT_ERR_FORMAT, "no batch %zu in epoch %d", t->st.batch, t->st.epoch);
            return NMT_ERR_FORMAT;
        }
        t->step_took = 1;
    }
    nmt_model_zero_grad(t->m);
    /* the gradients of a diverged step are made but never applied; the loss
     * is the plain -log p, with label smoothing or not */
    const nmt_regularizer reg = {.dropout_emb = t->s.dropout_emb,
                                 .dropout_enc = t->s.dropout_enc,
                                 .dropout_out = t->s.dropout_out,
                                 .label_smoothing = t->s.label_smoothing,
                                 .dropout_residual = t->s.dropout_residual,
                                 .dropout_att = t->s.dropout_att,
                                 .dropout_ff = t->s.dropout_ff,
                                 .guided = t->links != NULL,
                                 .guided_layer = t->s.guided_layer,
                                 .guided_head = t->s.guided_head,
                                 .guided_weight = t->s.guided_weight};
    /* the schedule's lr for this step, before the batch log names it and
     * the optimizer uses it: a function of the step alone, so that a
     * resumed run takes the same (a linear decay by time: of the time) */
    if (t->s.linear_decay) {
        double progress;
        if ((rc = run_progress(&progress, t, t->st.step + 1)))
            return rc;
        t->st.lr = nmt_lr_linear(t->s.lr, t->s.warmup, t->s.warmup_share, t->st.step + 1,
                                 progress, t->s.decay_from);
        t->opt.lr = t->st.lr;
    } else if (t->s.warmup > 0) {
        t->st.lr = nmt_lr_warmup(t->s.lr, t->s.warmup, t->st.step + 1);
        t->opt.lr = t->st.lr;
    }
    double loss, tokens;
    if (t->size > 1 || t->s.accumulate > 1) {
        if ((rc = summed_forward_backward(t, &reg, &loss, &tokens)))
            return rc;
    } else { /* one batch, one process: its own gradient, as it comes */
        const size_t *pairs;
        int n;
        nmt_plan_batch(t, t->st.batch, &pairs, &n);
        if ((rc = nmt_step_batch(t, 0, pairs, 0, n, &t->rng)))
            return rc;
        nmt_real step_loss;
        if ((rc = nmt_forward_backward(&step_loss, t->m, t->ws, &t->batch, &reg, &t->rng)))
            return rc; /* a refused batch is a bug or bad data, not divergence */
        loss = (double)step_loss;
        tokens = (double)t->batch.n_tgt_tokens;
    }
    char what[96];
    if (!isfinite(loss)) {
        snprintf(what, sizeof what, "the loss is %s", isnan(loss) ? "NaN" : "infinite");
        return diverged(t, t->st.step + 1, what);
    }
    /* a log-softmax keeps the loss finite when the weights blow up; a mean
     * of more than ~709 nats a token (an infinite perplexity) is divergence */
    if (!isfinite(exp(loss))) {
        snprintf(what, sizeof what, "the perplexity is infinite (loss %.4g)", loss);
        return diverged(t, t->st.step + 1, what);
    }
    double norm = nmt_clip_grad_norm(t->m->grads, t->m->n_params, t->s.clip);
    if (!isfinite(norm)) {
        snprintf(what, sizeof what, "the gradient norm is %s", isnan(norm) ? "NaN" : "infinite");
        return diverged(t, t->st.step + 1, what);
    }
    nmt_optim_step(&t->opt, t->m->params, t->m->grads);
    t->st.step++;
    t->acc_nll += loss * tokens;
    t->acc_tok += tokens;
    t->rate_tok += tokens;
    t->acc_norm += norm;
    t->acc_steps++;
    return NMT_OK;
}

/* The seed of an epoch's subword sampling: a mix of (seed, epoch), apart
 * from the streams of the init, the shuffles and dropout. */
static uint32_t sample_seed(uint64_t seed, int epoch)
{
    uint64_t z = seed ^ 0x5bd1e9955bd1e995ULL ^ ((uint64_t)epoch * 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return (uint32_t)(z ^ (z >> 31));
}

/* With subword sampling: reads this epoch's draw of the training corpus,
 * and grows the batch and the workspace if its rows are longer. */
static int ensure_sample(nmt_trainer *t)
{
    if (t->s.subword_alpha <= 0 || t->sampled_epoch == t->st.epoch)
        return NMT_OK;
    nmt_corpus_free(&t->sampled);
    t->sampled_epoch = 0;
    t->train = &t->sampled; /* never the given corpus again */
    nmt_corpus_opts o = {.lowercase = t->m->cfg.lowercase, .max_len = t->s.max_len, .skip_empty = 1,
                         .subwords = t->m->subwords, .subword_alpha = t->s.subword_alpha,
                         .sample_seed = sample_seed(t->s.seed, t->st.epoch),
                         .words = t->links != NULL};
    int rc = nmt_corpus_read(&t->sampled, t->s.src_path, t->s.tgt_path, &o, NULL, NULL);
    if (rc)
        return rc;
    int src_T = 1, tgt_T = 1;
    nmt_corpus_max_lengths(&t->sampled, &src_T, &tgt_T);
    if (src_T > t->src_T || tgt_T > t->tgt_T) {
        src_T = src_T > t->src_T ? src_T : t->src_T;
        tgt_T = tgt_T > t->tgt_T ? tgt_T : t->tgt_T;
        nmt_batch_free(&t->batch);
        nmt_workspace_free(t->ws);
        t->ws = NULL;
        if ((rc = nmt_batch_alloc(&t->batch, t->s.batch_size, src_T, tgt_T)) ||
            (rc = nmt_workspace_create(&t->ws, t->m, t->s.batch_size, src_T, tgt_T)))
            return rc;
        t->src_T = src_T;
        t->tgt_T = tgt_T;
    }
    t->sampled_epoch = t->st.epoch;
    return NMT_OK;
}

static int ensure_plan(nmt_trainer *t)
{
    if (t->stream) /* the block of the step's first batch: at the step */
        return NMT_OK;
    if (t->plan_epoch == t->st.epoch)
        return NMT_OK;
    nmt_batch_plan_free(&t->plan);
    t->plan_epoch = 0;
    int rc = ensure_sample(t);
    if (rc)
        return rc;
    rc = nmt_batch_plan_make_tokens(&t->plan, t->train, t->s.batch_size, t->s.batch_tokens,
                                    t->s.shuffle, t->s.seed, t->st.epoch);
    if (rc)
        return rc;
    if (t->st.batch > t->plan.n_batches)
        return nmt_set_error(NMT_ERR_FORMAT, "checkpoint position %zu is past the %zu batches "
                             "of epoch %d: was the corpus changed?", t->st.batch,
                             t->plan.n_batches, t->st.epoch);
    t->plan_epoch = t->st.epoch;
    t->st.n_batches = t->plan.n_batches;
    return NMT_OK;
}

static int finished(const nmt_trainer *t)
{
    return t->st.time_up || t->st.early_stopped ||
           (t->s.epochs > 0 && t->st.epoch > t->s.epochs) ||
           (t->s.max_steps >= 0 && t->st.step >= t->s.max_steps);
}

/* Whether a restored run has nothing left to do: it is past a limit
 * (finished, or its --max-time used up), and the work of its end was done
 * before its checkpoint was written (the last step validated, the log row
 * since the last one written, the snapshots averaged), so that the run
 * would only write its checkpoint again. Every process decides alike, from
 * the checkpoint's state and the settings (no clock). */
static int nothing_left(const nmt_trainer *t)
{
    const nmt_train_status *st = &t->st;
    int valid = t->valid.corpus || t->validates_elsewhere;
    int time_used = t->s.max_time > 0 && t->elapsed_base >= t->s.max_time;
    return t->restored && (finished(t) || time_used) && t->acc_steps == 0 &&
           !(valid && st->step > 0 && t->last_valid_step != st->step) &&
           !(valid && t->s.average_snapshots && t->averaged_step != st->step);
}

/* --max-time counts the run's wall time across resumes. */
/* Rank 0's answer, on every process (its clock decides --max-time). */
static int agreed(const nmt_trainer *t, int v)
{
    if (t->size > 1 && nmt_dist_bcast(&v, sizeof v))
        return 1; /* a run whose processes cannot agree stops */
    return v;
}

static int time_is_up(const nmt_trainer *t, double now)
{
    return t->s.max_time > 0 && t->elapsed_base + (now - t->t_start) >= t->s.max_time;
}

/* A log row for the validation of an average: no training columns. */
static int log_average(nmt_trainer *t)
{
    t->st.elapsed_s = t->elapsed_base + (nmt_now() - t->t_start);
    return nmt_runlog_append(t->log, t->log_path, &t->st);
}

/* Validates the model whose parameters are `params` with the trainer's own
 * workspace and decoder (they read the weights through t->m at each pass),
 * and, if it beats best.safetensors, saves it as the best. */
static int validate_average(nmt_trainer *t, const nmt_train_callbacks *cb, nmt_real *params,
                            int n)
{
    nmt_train_status *st = &t->st;
    valid_tools vt = {t->ws, &t->batch, t->decoder, t->bleu};
    nmt_real *own = nmt_model_swap_params(t->m, params);
    int rc = nmt_validate_with(t->m, &vt, &t->valid, t->s.batch_size, t->s.batch_tokens,
                               &st->valid_ppl, &st->valid_bleu);
    if (rc == NMT_OK) {
        st->has_valid = 1;
        st->average_of = n;
        emit(cb, NMT_TRAIN_AVERAGE, st);
        if (beats_best(t, st->valid_bleu, st->valid_ppl))
            rc = new_best(t, cb, n);
    }
    nmt_model_swap_params(t->m, own);
    return rc;
}

/* The end of a run with --average-snapshots: the mean of the newest
 * snapshots is written to average.safetensors, validated (a log.tsv row of
 * its own) and made best.safetensors if it is better. */
static int average_snapshots(nmt_trainer *t, const nmt_train_callbacks *cb)
{
    nmt_train_status *st = &t->st;
    if (!t->s.average_snapshots || !t->valid.corpus || t->averaged_step == st->step)
        return NMT_OK;
    char **paths;
    int n;
    int rc = nmt_snapshot_paths(t, &paths, &n, &st->average_from, &st->average_to);
    if (rc)
        return rc;
    nmt_model *avg = NULL;
    char *out = nmt_path_join(t->dir, "average.safetensors");
    if (!out)
        rc = nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    /* the mean of one model is that model, validated already */
    if (!rc && n >= 2 && !(rc = nmt_average_models(&avg, (const char *const *)paths, n))) {
        char count[16], from[32], to[32];
        snprintf(count, sizeof count, "%d", n);
        snprintf(from, sizeof from, "%lld", (long long)st->average_from);
        snprintf(to, sizeof to, "%lld", (long long)st->average_to);
        const nmt_meta meta[3] = {{"average.of", count}, {"average.from_step", from},
                                  {"average.to_step", to}};
        rc = nmt_model_save(avg, out, NULL, 0, meta, 3);
        if (!rc)
            rc = validate_average(t, cb, avg->params, n);
        if (!rc)
            rc = log_average(t);
        st->average_of = 0;
        st->has_valid = 0;
    }
    free(out);
    nmt_model_free(avg);
    nmt_snapshot_paths_free(paths, n);
    if (!rc)
        t->averaged_step = st->step;
    return rc;
}

int nmt_trainer_run(nmt_trainer *t, const nmt_train_callbacks *cb, const atomic_int *stop)
{
    nmt_train_status *st = &t->st;
    t->t_start = t->t_report = nmt_now();
    /* a run that ended by early stopping stays ended, unless its settings
     * now allow more validations without improvement */
    if (t->s.early_stop == 0 || st->bad_validations < t->s.early_stop)
        st->early_stopped = 0;
    /* a run resumed after its end changes no file: the checkpoint written
     * again would differ in its elapsed time alone, and the log, the
     * snapshots and the observers' files are left unopened */
    if (nothing_left(t)) {
        st->time_up = !finished(t);
        st->nothing_to_do = 1;
        return NMT_OK;
    }
    /* rank 0 writes the run's files: log.tsv a fresh run's anew, a
     * restored run's cut back to the checkpoint's step */
    int rc = NMT_OK;
    if (t->rank == 0 && !(t->log_path = nmt_path_join(t->dir, "log.tsv")))
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    if (t->rank == 0 && (rc = nmt_runlog_open(&t->log, t->log_path, t->restored ? st->step : -1)))
        return rc;
    if (t->rank == 0 && t->s.archive_dir && mkdir(t->s.archive_dir, 0777) != 0 && errno != EEXIST)
        return nmt_set_error(NMT_ERR_IO, "--archive-snapshots %s: cannot create it: %s",
                             t->s.archive_dir, strerror(errno));
    if (t->s.batch_log_path && !t->batch_log) {
        t->batch_log = fopen(t->s.batch_log_path, "wb");
        if (!t->batch_log)
            return nmt_set_error(NMT_ERR_IO, "%s: cannot open for writing: %s",
                                 t->s.batch_log_path, strerror(errno));
        if ((rc = nmt_batch_log_start(t)))
            return rc;
    }
    /* snapshots past the checkpoint are of a run that went on and was lost
     * (they will be made again); in a fresh run none is this run's */
    if (t->s.keep_snapshots > 0 && t->rank == 0)
        nmt_snapshots_drop_after(t, t->restored ? st->step : -1);
    /* a run always has a checkpoint to fall back on, even if step 1 diverges */
    if (!t->restored && (rc = nmt_trainer_save_checkpoint(t)))
        return rc;
    int stop_run = 0, interrupted = 0;
    while (!finished(t) && !stop_run) {
        if ((rc = ensure_plan(t)))
            return rc;
        st->total_steps = total_steps(t, t->plan.n_batches);
        /* a signal to any process stops them all at this step, and all
         * take its number (the largest, if several arrived) */
        int sig = nmt_dist_max_int(stop ? atomic_load(stop) : 0);
        if (sig) {
            st->stop_signal = sig;
            interrupted = 1;
            break;
        }
        if (agreed(t, time_is_up(t, nmt_now()))) { /* resumed with no time left */
            st->time_up = 1;
            emit(cb, NMT_TRAIN_TIME_UP, st);
            break;
        }
        size_t took = t->stream ? 0 : step_batches(t);
        if ((rc = train_step(t)))
            return rc;
        if (t->stream)
            took = t->step_took;
        st->has_valid = 0;
        double now = nmt_now();
        st->elapsed_s = t->elapsed_base + (now - t->t_start);
        st->loss = t->acc_nll / t->acc_tok;
        st->tok_per_s = now > t->t_report ? t->rate_tok / (now - t->t_report) : 0;
        emit(cb, NMT_TRAIN_STEP, st);

        int end_of_epoch = t->stream ? t->block_last && st->batch + took == st->n_batches
                                     : st->batch + took == st->n_batches;
        if (agreed(t, time_is_up(t, now))) {
            st->time_up = 1;
            emit(cb, NMT_TRAIN_TIME_UP, st);
        }
        int last = (t->s.max_steps >= 0 && st->step >= t->s.max_steps) ||
                   (t->s.epochs > 0 && end_of_epoch && st->epoch >= t->s.epochs) || st->time_up;
        int scheduled = (t->s.valid_every > 0 && st->step % t->s.valid_every == 0) ||
                        end_of_epoch;
        int want_valid = (t->valid.corpus || t->validates_elsewhere) && (scheduled || last);
        if (want_valid && (rc = validate_step(t, cb, scheduled, &stop_run)))
            return rc;
        int want_report = t->s.report_every > 0 ? st->step % t->s.report_every == 0
                                                : now - t->t_report >= t->s.report_seconds;
        if ((want_report || want_valid || last || stop_run) && (rc = report(t, cb, nmt_now())))
            return rc;
        int want_save = t->s.save_every > 0 && st->step % t->s.save_every == 0;
        if (end_of_epoch) {
            emit(cb, NMT_TRAIN_EPOCH, st);
            st->epoch++;
            st->batch = 0;
            want_save = 1;
        } else {
            st->batch += took;
        }
        if (want_save && !last && !stop_run) {
            st->elapsed_s = t->elapsed_base + (nmt_now() - t->t_start);
            if ((rc = nmt_trainer_save_checkpoint(t)))
                return rc;
            emit(cb, NMT_TRAIN_SAVED, st);
        }
    }
    /* the end, whatever ended it: a run resumed after its end validates
     * nothing new, and one stopped by a signal does not validate at all (so
     * that resuming it continues exactly); a step of the schedule was
     * validated in the loop, so this one is off it and counts for nothing */
    if (!interrupted && (t->valid.corpus || t->validates_elsewhere) &&
        t->last_valid_step != st->step && st->step > 0) {
        if ((rc = validate_step(t, cb, 0, &stop_run)))
            return rc;
        if ((rc = report(t, cb, nmt_now())))
            return rc;
    }
    /* every stop, a signal's too, leaves a row for the steps since the last
     * one: log.tsv never ends short of the checkpoint's step */
    if (t->acc_steps > 0 && (rc = report(t, cb, nmt_now())))
        return rc;
    if (!interrupted && (rc = average_snapshots(t, cb)))
        return rc;
    st->elapsed_s = t->elapsed_base + (nmt_now() - t->t_start);
    if ((rc = nmt_trainer_save_checkpoint(t)))
        return rc;
    emit(cb, NMT_TRAIN_SAVED, st);
    if (interrupted)
        return nmt_set_error(NMT_ERR_INTERRUPTED, "interrupted at step %lld; the checkpoint "
                             "in %s continues it (nmt train --resume %s)",
                             (long long)st->step, t->dir, t->dir);
    return NMT_OK;
}
