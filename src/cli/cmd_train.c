/* nmt train: the run that the library sets up (nmt/train_setup.h) from the
 * options (cmd_train_opts.c), and what the user sees of it: notes and warnings
 * before it starts, the live progress line, reports, the summary. */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "commands.h"
#include "cli_opts.h"
#include "cmd_train_opts.h"
#include "cli_unknown.h"
#include "nmt/corpus.h"
#include "nmt/dist.h"
#include "nmt/blas.h"
#include "nmt/error.h"
#include "nmt/progress.h"
#include "nmt/train.h"
#include "nmt/train_setup.h"
#include "nmt/units.h"

/* ---- before the run --------------------------------------------------------- */

/* A model's vocabularies that do not fit the corpus (--init-from a model of
 * another corpus) train on <unk>s: said before the run starts. A fresh
 * run's vocabularies are its corpus's own (or as small as --max-vocab and
 * --min-count asked), and a resumed run's corpus is the one it began on. */
static void warn_unknown(const nmt_train_run *r, const char *init_from)
{
    if (cli_verbosity == 0 || !init_from)
        return;
    size_t unk[2], total[2];
    const char *units = nmt_units_name(r->model);
    nmt_corpus_count_unk(&r->train, unk, total);
    int warned = cli_warn_unknown(r->s.src_path, unk[0], total[0], units);
    warned |= cli_warn_unknown(r->s.tgt_path, unk[1], total[1], units);
    if (r->have_valid) {
        nmt_corpus_count_unk(&r->valid, unk, total);
        warned |= cli_warn_unknown(r->s.valid_src_path, unk[0], total[0], units);
        warned |= cli_warn_unknown(r->s.valid_tgt_path, unk[1], total[1], units);
    }
    if (warned)
        fprintf(stderr, "nmt train: --init-from keeps %s's vocabularies: a model for another "
                "corpus starts afresh without --init-from\n", init_from);
}

/* ---- what the user sees ------------------------------------------------------ */

typedef struct view {
    nmt_progress progress;
    int tty;
    int line_shown; /* a live line is on screen */
    const char *dir;
    nmt_best_metric metric;
    double max_time;
    int average_pending; /* an average was validated; did it become best? */
    int64_t steps_run;   /* steps of this session (for the MPI line) */
} view;


static void clear_live(view *v)
{
    if (v->line_shown) {
        fputs("\r\033[K", stderr);
        v->line_shown = 0;
    }
}

static void on_event(void *user, nmt_train_event ev, const nmt_train_status *st)
{
    view *v = user;
    if (cli_verbosity == 0)
        return;
    double now = nmt_now();
    char line[256], dur[32];
    switch (ev) {
    case NMT_TRAIN_STEP:
        if (v->tty && nmt_progress_due(&v->progress, now)) {
            nmt_progress_line(line, sizeof line, &v->progress, st, now);
            fprintf(stderr, "\r%s\033[K", line);
            v->line_shown = 1;
        }
        break;
    case NMT_TRAIN_REPORT:
        if (v->tty && cli_verbosity < 2)
            break;
        clear_live(v);
        nmt_format_duration(dur, sizeof dur, st->elapsed_s);
        fprintf(stderr, "epoch %d step %lld: loss %.4f ppl %.2f grad-norm %.3f lr %.3g "
                "%.0f tok/s, %s\n", st->epoch, (long long)st->step, st->loss, st->ppl,
                st->grad_norm, st->lr, st->tok_per_s, dur);
        break;
    case NMT_TRAIN_VALID:
        clear_live(v);
        fprintf(stderr, "validation at step %lld (epoch %d): ppl %.3f, BLEU %.2f\n",
                (long long)st->step, st->epoch, st->valid_ppl, st->valid_bleu);
        break;
    case NMT_TRAIN_BEST:
        if (st->best_average_of > 0) {
            clear_live(v);
            fprintf(stderr, "the average beats it (--best-metric %s): it is now "
                    "%s/best.safetensors\n", nmt_best_metric_name(v->metric), v->dir);
            v->average_pending = 0;
        } else if (cli_verbosity >= 2) {
            clear_live(v);
            fprintf(stderr, "best so far: saved %s/best.safetensors\n", v->dir);
        }
        break;
    case NMT_TRAIN_SNAPSHOT:
        if (cli_verbosity >= 2) {
            clear_live(v);
            fprintf(stderr, "snapshot saved: %s/snapshot-%lld.safetensors\n", v->dir,
                    (long long)st->step);
        }
        break;
    case NMT_TRAIN_TIME_UP:
        clear_live(v);
        nmt_format_duration(dur, sizeof dur, v->max_time);
        fprintf(stderr, "time limit reached (--max-time %s) at step %lld\n", dur,
                (long long)st->step);
        break;
    case NMT_TRAIN_AVERAGE:
        clear_live(v);
        fprintf(stderr, "average of %d snapshots (steps %lld-%lld) in %s/average.safetensors: "
                "ppl %.3f, BLEU %.2f", st->average_of, (long long)st->average_from,
                (long long)st->average_to, v->dir, st->valid_ppl, st->valid_bleu);
        if (st->best_step >= 0)
            fprintf(stderr, "; best.safetensors (step %lld): ppl %.3f, BLEU %.2f",
                    (long long)st->best_step, st->best_ppl, st->best_bleu);
        fputc('\n', stderr);
        v->average_pending = 1;
        break;
    case NMT_TRAIN_LR_DECAY:
        clear_live(v);
        fprintf(stderr, "no improvement in %d validations: learning rate lowered to %g\n",
                st->bad_validations, st->lr);
        break;
    case NMT_TRAIN_EARLY_STOP:
        clear_live(v);
        fprintf(stderr, "early stop: no improvement in %d validations\n", st->bad_validations);
        break;
    case NMT_TRAIN_EPOCH:
        if (cli_verbosity >= 2) {
            clear_live(v);
            fprintf(stderr, "epoch %d done at step %lld\n", st->epoch, (long long)st->step);
        }
        break;
    case NMT_TRAIN_SAVED:
        if (cli_verbosity >= 2) {
            clear_live(v);
            fprintf(stderr, "checkpoint saved at step %lld\n", (long long)st->step);
        }
        break;
    }
}

/* The model in a line: its settings as nmt info lists them (the
 * architecture's own: nmt_config_setting). */
static void describe_model(const nmt_config *c, size_t n_params)
{
    char settings[512] = "", value[64];
    const char *name;
    for (int i = 0; nmt_config_setting(c, i, &name, value, sizeof value); i++) {
        size_t n = strlen(settings);
        snprintf(settings + n, sizeof settings - n, "%s%s %s", i ? ", " : "", name, value);
    }
    fprintf(stderr, "model: %s%s: %zu parameters\n", settings,
            c->tied ? " (tied to the embeddings)" : "", n_params);
}

/* The dropout rates of the model's architecture: "emb 0.3 enc 0.3 out 0.3". */
static void dropout_text(const nmt_train_settings *s, char *buf, size_t size)
{
    const char *site;
    buf[0] = '\0';
    for (int k = 0; (site = nmt_arch_dropout_site(s->model.arch, k)); k++) {
        size_t n = strlen(buf);
        snprintf(buf + n, size - n, "%s%s %g", k ? " " : "", site,
                 (double)nmt_train_settings_dropout(s, site));
    }
}

/* A schedule that ends with the run says before the first step where its
 * warm-up and its line end, which depends on the run's limits; and a
 * stream that made rsqrt of the architecture's line, why. */
/* A run's end as its limits make it: "759 steps", "the nearest of 900
 * steps, 10 epochs" (a streamed corpus's epochs end no line). */
static void limits_text(char *buf, size_t cap, int64_t max_steps, int epochs, double max_time,
                        int64_t shuffle_buffer)
{
    char ends[128] = "";
    size_t n = 0;
    if (max_steps > 0)
        n += (size_t)snprintf(ends, sizeof ends, "%lld steps", (long long)max_steps);
    if (epochs > 0 && shuffle_buffer == 0)
        n += (size_t)snprintf(ends + n, sizeof ends - n, "%s%d epochs", n ? ", " : "", epochs);
    if (max_time > 0)
        snprintf(ends + n, sizeof ends - n, "%s%g minutes", n ? ", " : "", max_time / 60);
    snprintf(buf, cap, "%s%s", strchr(ends, ',') ? "the nearest of " : "", ends);
}

/* A resumed run whose limits changed under a linear decay: the line to 0
 * was planned to the old end and now runs to the new one, from the lr the
 * new line gives the next step (a jump up when the run is extended past
 * the old end). Right, but never silent. */
static void describe_replanned(const nmt_train_run *r)
{
    const nmt_train_settings *s = &r->s;
    char was[160], now[160];
    limits_text(was, sizeof was, r->planned_max_steps, r->planned_epochs, r->planned_max_time,
                s->shuffle_buffer);
    limits_text(now, sizeof now, s->max_steps, s->epochs, s->max_time, s->shuffle_buffer);
    const nmt_train_status *st = nmt_trainer_status(r->trainer);
    fprintf(stderr, "lr: re-planned: the line to 0 was planned to end at %s and now ends at "
            "%s: step %lld takes lr %.3g (step %lld took %.3g) and the line falls from there "
            "to 0 (a run planned to that end from the start differs; docs/training.md)\n", was,
            now, (long long)st->step + 1, nmt_trainer_lr_ahead(r->trainer), (long long)st->step,
            st->lr);
}

static void describe_schedule(const nmt_train_settings *s, nmt_arch arch)
{
    const nmt_arch_recipe *rec = nmt_arch_recipe_of(arch);
    if (s->linear_decay) {
        char ramp[128] = "", hold[64] = "", ends[160];
        if (s->warmup > 0 && s->warmup_share > 0)
            snprintf(ramp, sizeof ramp, "a warm-up to %g over %lld steps or the first %g %% of "
                     "the run, whichever ends first, then ", s->lr, (long long)s->warmup,
                     100 * s->warmup_share);
        else if (s->warmup > 0)
            snprintf(ramp, sizeof ramp, "a warm-up to %g over %lld steps, then ", s->lr,
                     (long long)s->warmup);
        if (s->decay_from > 0)
            snprintf(hold, sizeof hold, "%g until %g %% of the run, then ", s->lr,
                     100 * s->decay_from);
        limits_text(ends, sizeof ends, s->max_steps, s->epochs, s->max_time, s->shuffle_buffer);
        fprintf(stderr, "lr: %s%sa line from %g down to 0 at the run's end (%s; "
                "docs/training.md)\n", ramp, hold, s->lr, ends);
    } else if (s->warmup > 0 && rec && rec->linear_decay && nmt_train_rule_rsqrt(arch, s->max_time)) {
        fprintf(stderr, "lr: a warm-up to %g over %lld steps, then lr * sqrt(warm-up / step), "
                "the %s's schedule for runs given at least %g minutes of --max-time (a line "
                "to 0 below; docs/training.md)\n", s->lr, (long long)s->warmup,
                nmt_arch_name(arch), rec->long_seconds / 60);
    } else if (s->warmup > 0 && rec && rec->linear_decay && s->shuffle_buffer > 0 &&
               s->max_steps <= 0 && s->max_time <= 0) {
        fprintf(stderr, "lr: a warm-up to %g over %lld steps, then lr * sqrt(warm-up / step), "
                "not the %s's line to 0: a streamed corpus without --max-steps or --max-time "
                "gives the line no end (docs/training.md)\n", s->lr, (long long)s->warmup,
                nmt_arch_name(arch));
    }
}

static void describe(const nmt_train_run *r)
{
    if (cli_verbosity == 0)
        return;
    const nmt_config *c = &r->model->cfg;
    const nmt_train_settings *s = &r->s;
    if (r->resumed)
        fprintf(stderr, "resuming %s\n", r->dir);
    const nmt_subwords *sw = r->model->subwords;
    if (sw) {
        fprintf(stderr, "subwords: SentencePiece %s model of %d pieces", nmt_subwords_type(sw),
                nmt_subwords_size(sw));
        if (r->learn_s > 0)
            fprintf(stderr, ", learned from both sides in %.1f s", r->learn_s);
        if (s->subword_alpha > 0 && r->sampling_rule)
            fprintf(stderr, "; sampled every epoch (alpha %g, the %s's default; --subword-alpha "
                    "0 keeps the best pieces)", (double)s->subword_alpha, nmt_arch_name(c->arch));
        else if (s->subword_alpha > 0)
            fprintf(stderr, "; sampled every epoch (alpha %g)", (double)s->subword_alpha);
        if (r->subwords_auto)
            fprintf(stderr, " (the default: a side has %d distinct words; --subwords 0 for "
                    "words)", r->subwords_auto);
        fputc('\n', stderr);
    }
    if (s->shuffle_buffer > 0 && r->resumed) /* a resume counts nothing: the blocks are read */
        fprintf(stderr, "corpus: streamed in blocks of %lld pairs; vocabularies %d / %d%s\n",
                (long long)s->shuffle_buffer, c->src_vocab, c->tgt_vocab, sw ? " pieces" : "");
    else
        fprintf(stderr, "corpus: %zu pairs of %zu lines (%zu skipped by --max-len %d, %zu "
                "with an empty side); vocabularies %d / %d%s\n", r->train.n, r->train.n_lines,
                r->train.skipped_long, s->max_len, r->train.skipped_empty, c->src_vocab,
                c->tgt_vocab, sw ? " pieces" : "");
    if (s->shuffle_buffer > 0 && !r->resumed)
        fprintf(stderr, "streamed: read in blocks of %lld pairs, each shuffled on its own\n",
                (long long)s->shuffle_buffer);
    describe_model(c, r->model->n_params);
    /* the speed of every figure of a run depends on it (docs/benchmarks.md) */
    char blas[256];
    nmt_blas_describe(blas, sizeof blas);
    fprintf(stderr, "blas: kernel %s, %d threads (%s)\n", blas, s->threads, nmt_blas_config());
    if (r->links) {
        const nmt_links *l = r->links;
        fprintf(stderr, "guided: decoder layer %d head %d trained toward the word links of %s "
                "(%zu links on %zu lines, %zu of them i?j, %zu lines without), by %g per "
                "target token, each target word at the step that %s it\n", s->guided_layer,
                s->guided_head, s->guided_links, l->off[l->n_lines], l->n_lines, l->possible,
                l->empty, (double)s->guided_weight, s->guided_shift ? "reads" : "predicts");
    }
    const nmt_arch_recipe *rec = nmt_arch_recipe_of(c->arch);
    if (r->dropout_rule && rec) { /* a rule by the time given is never silent */
        int long_run = r->dropout_rule > 0;
        fprintf(stderr, "dropout: %g at every site not given its own, the %s's default for "
                "%s %g minutes of --max-time (%g %s; docs/training.md)\n",
                (double)(long_run ? rec->long_dropout : rec->dropout), nmt_arch_name(c->arch),
                long_run ? "runs given at least" : "runs without --max-time or under",
                rec->long_seconds / 60, (double)(long_run ? rec->dropout : rec->long_dropout),
                long_run ? "below" : "from there on");
    }
    if (!r->resumed)
        describe_schedule(s, c->arch);
    if (cli_verbosity < 2)
        return;
    char dropout[128], warmup[96] = "";
    dropout_text(s, dropout, sizeof dropout);
    if (s->warmup > 0)
        snprintf(warmup, sizeof warmup, " warmup %lld", (long long)s->warmup);
    if (s->linear_decay)
        snprintf(warmup + strlen(warmup), sizeof warmup - strlen(warmup), " linear decay");
    if (s->decay_from > 0)
        snprintf(warmup + strlen(warmup), sizeof warmup - strlen(warmup), " from %g",
                 s->decay_from);
    if (s->warmup_share > 0)
        snprintf(warmup + strlen(warmup), sizeof warmup - strlen(warmup), " warmup-share %g",
                 s->warmup_share);
    char batching[64] = "";
    if (s->batch_tokens > 0)
        snprintf(batching, sizeof batching, " (up to %d target tokens)", s->batch_tokens);
    if (s->accumulate > 1)
        snprintf(batching + strlen(batching), sizeof batching - strlen(batching),
                 " x %d a step", s->accumulate);
    fprintf(stderr, "training: %s lr %g%s clip %g dropout %s label smoothing %g batch %d%s "
            "epochs %d max-steps %lld max-time %gs seed %llu threads %d best-metric %s%s%s\n",
            nmt_optim_name(s->optimizer), s->lr, warmup, s->clip, dropout,
            (double)s->label_smoothing, s->batch_size, batching, s->epochs, (long long)s->max_steps,
            s->max_time, (unsigned long long)s->seed, s->threads,
            nmt_best_metric_name(s->best_metric), s->shuffle ? "" : " no-shuffle",
            r->have_valid ? ", validating" : "");
}

/* -v: the process's peak beside what training needs at the least, so that
 * a user sees what the rest costs (the corpus, the subword model, the
 * validation's decoder, the allocator's slack). */
static void memory_line(const nmt_train_run *r)
{
    struct rusage ru;
    double weights, activations;
    if (cli_verbosity < 2 || getrusage(RUSAGE_SELF, &ru) ||
        nmt_trainer_memory_need(r->trainer, &weights, &activations))
        return;
    fprintf(stderr, "memory: peak resident %.0f MB; training needs %.0f MB: %.0f MB of "
            "parameters, gradients and optimizer moments, %.0f MB of activations for the "
            "largest batch of this epoch\n", (double)ru.ru_maxrss / 1024,
            (weights + activations) / (1 << 20), weights / (1 << 20), activations / (1 << 20));
}

static void summary(const nmt_train_run *r, const view *v, const nmt_train_status *st, int interrupted)
{
    if (cli_verbosity == 0)
        return;
    char dur[32], limit[32];
    nmt_format_duration(dur, sizeof dur, st->elapsed_s);
    nmt_format_duration(limit, sizeof limit, r->s.max_time);
    double epochs = st->epoch - 1 + (st->n_batches ? (double)st->batch / (double)st->n_batches : 0);
    if (v->average_pending)
        fprintf(stderr, "the average does not beat it (--best-metric %s): best.safetensors "
                "stays\n", nmt_best_metric_name(r->s.best_metric));
    /* a streamed epoch's batches are known at its last block only */
    char where[64];
    if (st->n_batches == 0 && st->batch > 0)
        snprintf(where, sizeof where, "batch %zu of epoch %d", st->batch, st->epoch);
    else
        snprintf(where, sizeof where, "%.2f epochs", epochs);
    fprintf(stderr, "%s at step %lld (%s) after %s%s%s%s; checkpoint: "
            "%s/checkpoint.safetensors\n", interrupted ? "stopped" : "done",
            (long long)st->step, where, dur, st->time_up ? " (--max-time " : "",
            st->time_up ? limit : "", st->time_up ? ")" : "", r->dir);
    memory_line(r);
    if (nmt_dist_size() > 1 && v->steps_run > 0)
        fprintf(stderr, "MPI, %d processes: rank 0 spent %.3f s in collectives, %.2f ms a step, "
                "and sent %.2f MB a step\n", nmt_dist_size(), nmt_dist_seconds(),
                1e3 * nmt_dist_seconds() / (double)v->steps_run,
                nmt_dist_bytes_sent() / (double)v->steps_run / 1e6);
    if (st->best_step < 0)
        return;
    char what[64] = "";
    if (st->best_average_of > 0)
        snprintf(what, sizeof what, " (the average of %d snapshots)", st->best_average_of);
    if (r->s.best_metric == NMT_BEST_PPL)
        fprintf(stderr, "best validation perplexity %.3f (BLEU %.2f) at step %lld%s: "
                "%s/best.safetensors\n", st->best_ppl, st->best_bleu,
                (long long)st->best_step, what, r->dir);
    else
        fprintf(stderr, "best validation BLEU %.2f (ppl %.3f) at step %lld%s: "
                "%s/best.safetensors\n", st->best_bleu, st->best_ppl,
                (long long)st->best_step, what, r->dir);
}

/* A resumed run that was already past its limits, and the limit to raise
 * to train on (it trained nothing and changed no file). */
static void nothing_note(const nmt_train_run *r, const nmt_train_status *st)
{
    if (cli_verbosity == 0)
        return;
    const nmt_train_settings *s = &r->s;
    const char *unchanged = "nothing to do (no file was changed)";
    if (st->early_stopped) {
        fprintf(stderr, "the run in %s ended by early stopping at step %lld (%d validations "
                "without improvement, --early-stop %d): %s. To train on, resume it with "
                "--early-stop 0 (off) or a larger --early-stop\n", r->dir, (long long)st->step,
                st->bad_validations, s->early_stop, unchanged);
    } else if (s->max_steps >= 0 && st->step >= s->max_steps) {
        fprintf(stderr, "the run in %s is at its --max-steps %lld: %s. To train on, resume it "
                "with a larger --max-steps\n", r->dir, (long long)s->max_steps, unchanged);
    } else if (s->epochs > 0 && st->epoch > s->epochs) {
        fprintf(stderr, "the run in %s has trained its --epochs %d (step %lld): %s. To train "
                "on, resume it with a larger --epochs\n", r->dir, s->epochs,
                (long long)st->step, unchanged);
    } else {
        char used[32], limit[32];
        nmt_format_duration(used, sizeof used, st->elapsed_s);
        nmt_format_duration(limit, sizeof limit, s->max_time);
        fprintf(stderr, "the run in %s has used its --max-time %s (%s): %s. To train on, "
                "resume it with a larger --max-time\n", r->dir, limit, used, unchanged);
    }
}

/* ---- signals ------------------------------------------------------------------ */

/* Set by the handler, on whichever thread the kernel hands the signal to
 * (OpenBLAS's threads and the pool's take them as well as the main one):
 * so an atomic, read by the training loop on the main thread, and
 * lock-free, as a handler may only touch such. */
static atomic_int stop_signal;
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "atomic_int is lock-free");

static void on_signal(int sig)
{
    atomic_store(&stop_signal, sig);
}

static void catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART; /* the loop polls the flag; system calls carry on */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* a file too large must fail the write (EFBIG), not kill the run */
    signal(SIGXFSZ, SIG_IGN);
}

/* What the set-up says on its way, as the command line shows it. */
typedef struct setup_view {
    const char *init_from;
} setup_view;

static void on_setup(void *user, nmt_setup_event ev, const nmt_train_run *r, const char *note)
{
    const setup_view *sv = user;
    switch (ev) {
    case NMT_SETUP_NOTE:
        if (cli_verbosity > 0)
            fprintf(stderr, "nmt train: %s\n", note);
        break;
    case NMT_SETUP_READ:
        warn_unknown(r, sv->init_from);
        break;
    case NMT_SETUP_READY:
        describe(r);
        if (nmt_dist_size() > 1 && cli_verbosity > 0)
            fprintf(stderr, "data-parallel over %d processes (MPI): each step's batch is shared "
                    "out by target tokens and the gradients summed round a ring in a fixed order\n",
                    nmt_dist_size());
        break;
    }
}

static int train_main(int argc, char **argv)
{
    nmt_train_request q;
    int code = 1;
    if (train_parse_args(&q, argc, argv, &code))
        return code;
    if (nmt_dist_rank() != 0)
        cli_verbosity = 0; /* rank 0 speaks for the run; the others only of errors */
    /* every input is read and checked before anything is written */
    setup_view sv = {.init_from = q.init_from};
    nmt_setup_callbacks scb = {.user = &sv, .on_event = on_setup};
    nmt_train_run *r;
    if (nmt_train_setup(&r, &q, &scb)) {
        cli_lib_error();
        return 1;
    }
    nmt_trainer *t = r->trainer;
    if (r->replanned && cli_verbosity > 0) /* the trainer knows the step and the time */
        describe_replanned(r);
    view v = {.tty = isatty(STDERR_FILENO) && nmt_dist_rank() == 0, .dir = r->dir,
              .metric = r->s.best_metric, .max_time = r->s.max_time};
    nmt_progress_start(&v.progress, nmt_trainer_status(t)->step, 0.25);
    nmt_train_callbacks cb = {.user = &v, .on_event = on_event};
    catch_signals();
    int64_t first_step = nmt_trainer_status(t)->step;
    int rc = nmt_trainer_run(t, &cb, &stop_signal);
    v.steps_run = nmt_trainer_status(t)->step - first_step;
    clear_live(&v);
    const nmt_train_status *st = nmt_trainer_status(t);
    if (rc == NMT_OK) {
        if (st->nothing_to_do)
            nothing_note(r, st);
        summary(r, &v, st, 0);
        code = 0;
    } else if (rc == NMT_ERR_INTERRUPTED) {
        /* every process exits with the signal's code (any of them may have
         * received it: the loop shared its number), and rank 0 alone says so */
        if (nmt_dist_rank() == 0)
            cli_lib_error();
        summary(r, &v, st, 1);
        code = 128 + st->stop_signal;
    } else {
        cli_lib_error();
        code = 1;
    }
    nmt_train_run_free(r);
    return code;
}

/* Under mpirun every process runs this; the library shares the work out
 * (src/dist.c). Only rank 0 prints more than its errors. */
int cmd_train(int argc, char **argv)
{
    if (nmt_dist_init(&argc, &argv)) {
        cli_lib_error();
        return 1;
    }
    int code = train_main(argc, argv);
    /* an error on one process leaves the others waiting in a collective:
     * end them all (a signal ends them together, at one step) */
    if (code != 0 && code < 128 && nmt_dist_size() > 1)
        nmt_dist_abort(code);
    nmt_dist_finalize();
    return code;
}