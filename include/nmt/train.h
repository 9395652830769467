/* Training: its settings, and the training loop with validation, best
 * model, atomic checkpoints and exact resume. The optimizers are in
 * nmt/optim.h, what the loop reports in nmt/train_status.h, and the text made
 * of it in nmt/runlog.h (log.tsv's rows) and nmt/progress.h (the progress
 * line).
 *
 * The loop is a library call that never prints: it reports through a
 * callback, and the command line (src/cli/cmd_train.c) decides what to show. */
#ifndef NMT_TRAIN_H
#define NMT_TRAIN_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "nmt/corpus.h"
#include "nmt/links.h"
#include "nmt/model.h"
#include "nmt/modelfile.h"
#include "nmt/optim.h"
#include "nmt/train_status.h"

/* ---- settings ----------------------------------------------------------- */

/* What best.safetensors, the lr decay and early stopping judge by. */
typedef enum {
    NMT_BEST_BLEU = 0, /* higher validation BLEU (ties: lower perplexity) */
    NMT_BEST_PPL = 1,  /* lower validation perplexity (ties: higher BLEU) */
} nmt_best_metric;

const char *nmt_best_metric_name(nmt_best_metric m);              /* "bleu" "ppl" */
int nmt_best_metric_parse(const char *s, nmt_best_metric *out);   /* NMT_OK or NMT_ERR_ARG */

typedef struct nmt_train_settings {
    /* corpora (not owned; from the checkpoint's metadata on resume) */
    const char *src_path, *tgt_path;
    const char *valid_src_path, *valid_tgt_path; /* NULL: no validation */
    /* what those four files and the guided links were when the run began
     * (in the order src, tgt, valid_src, valid_tgt, guided_links:
     * NMT_RUN_FILES), so that a resume finds them from any folder and
     * checks data that moved: each one's path relative to the run's folder
     * (NULL: not known) and its print (known 0: none) */
#define NMT_RUN_FILES 5
    const char *data_from_run[NMT_RUN_FILES];
    nmt_data_print data_print[NMT_RUN_FILES];
    /* guided alignment (docs/DESIGN.md, "Guided alignment"): NULL, or a file
     * of Pharaoh word links for every line of the training corpus
     * (nmt/links.h), which train head guided_head of decoder layer
     * guided_layer's cross-attention by guided_weight, each target word at
     * the step that reads it (guided_shift 1) or predicts it (0);
     * guided_digest is the file's nmt_links hash (0 until it is read) */
    const char *guided_links;
    float guided_weight;
    int guided_layer, guided_head, guided_shift;
    uint64_t guided_digest;
    /* the model: its architecture with every architecture's sizes, tied
     * output embeddings and lowercasing. A fresh run's; with --init-from and
     * --resume, the model file's (src_vocab and tgt_vocab are the model's
     * once it is made) */
    nmt_config model;
    /* data */
    int batch_size;      /* sentences per batch (with batch_tokens: at most) */
    int batch_tokens;    /* > 0: a batch takes pairs while its padded target
                          * (pairs x the longest target, </s> counted) stays
                          * within this many tokens (nmt_batch_plan_make);
                          * 0: batch_size pairs a batch */
    int accumulate;      /* batches whose gradients make one optimizer step
                          * (summed, weighted by their target tokens, as one
                          * batch of them all); 1: each batch a step */
    int max_len;         /* skip training pairs longer than this (tokens) */
    int64_t shuffle_buffer; /* > 0: stream the training corpus from its files
                          * in blocks of this many pairs, each shuffled and
                          * batched on its own (nmt/stream.h; docs/training.md,
                          * "Corpora larger than memory"); 0: read it whole */
    int min_count, max_vocab;
    int shuffle;
    float subword_alpha; /* > 0: each epoch reads the training corpus again
                          * with its pieces sampled (subword regularisation;
                          * a subword model of type unigram), seeded by
                          * (seed, epoch) so that a resumed run draws the
                          * same; 0: the best segmentation, once */
    /* optimisation */
    nmt_optim_kind optimizer;
    double lr;
    double clip;         /* global gradient norm; 0 off */
    /* dropout, each rate in [0, 1), at the sites of the model's architecture
     * (nmt_regularizer); a site it does not have is 0 */
    float dropout_emb;   /* both: the source and target embeddings */
    float dropout_enc;   /* rnn: the encoder's annotations, as attention, context and z read them */
    float dropout_out;   /* rnn: the deep output, before the vocabulary projection */
    float dropout_residual; /* transformer: each sublayer's output, before the residual sum */
    float dropout_att;   /* transformer: the attention weights */
    float dropout_ff;    /* transformer: the feed-forward network's inner layer */
    float label_smoothing; /* of the training loss only: what is reported stays -log p */
    /* word dropout, each rate in [0, 1): each real source token (not </s>)
     * and each token y1..ym of the decoder's input (not <s>) is replaced by
     * <unk> with the side's probability before the forward pass; the labels
     * are never replaced (nmt_word_dropout; docs/DESIGN.md, "Word
     * dropout"). 0: none */
    float word_dropout_src, word_dropout_tgt;
    int epochs;          /* 0: no limit (a --max-time run) */
    int64_t max_steps;   /* < 0: no limit; 0 writes the initial model */
    double max_time;     /* seconds of wall-clock time, counted across resumes
                          * (checked between steps); 0: no limit */
    uint64_t seed;
    int threads;
    /* validation and schedule */
    int64_t valid_every; /* steps; 0: only at epoch ends and the end */
    double lr_decay;     /* lr *= lr_decay after `patience` validations without improvement */
    int patience;        /* 0: never decay */
    int64_t warmup;      /* > 0: the lr of step n is lr * n / warmup up to step warmup,
                          * then lr * sqrt(warmup / n) (nmt_lr_warmup; Vaswani et
                          * al.'s schedule with lr as its peak), and patience
                          * must be 0; 0: lr, lowered by lr_decay alone */
    int linear_decay;    /* 1: after the warm-up (warmup steps of it, or none) the
                          * lr falls linearly to 0 at the run's end, the nearest
                          * of max_steps, epochs and max_time (nmt_lr_linear;
                          * by rank 0's clock), so one of them must be set (of
                          * a streamed corpus: not epochs alone) and patience
                          * must be 0; 0: warmup's decay, or plateaus' */
    double decay_from;   /* with linear_decay: the part of the run, in [0, 1), that
                          * holds the peak lr before the line down starts (0: it
                          * starts at the warm-up's end) */
    double warmup_share; /* with linear_decay and a warm-up: the part of the run,
                          * in [0, 1), by which the warm-up ends if its steps
                          * have not (0: only its steps end it), so that a short
                          * run is not all warm-up */
    int early_stop;      /* stop after this many validations without improvement; 0 off */
    nmt_best_metric best_metric;
    int keep_snapshots;  /* keep the models of the last K validations as
                          * snapshot-STEP.safetensors; 0: none */
    int average_snapshots; /* at the end, validate their mean (average.safetensors);
                            * it becomes best.safetensors if it is better */
    /* saving and reporting */
    int64_t save_every;  /* steps; 0: only at epoch ends, the end and signals */
    int64_t report_every;/* steps; 0: every report_seconds of wall time */
    double report_seconds;
    /* diagnostics of this session only (not saved in checkpoints) */
    const char *batch_log_path; /* NULL, or write every step's batch here as
                                 * JSON Lines of token ids, so that another
                                 * program can follow the same batches */
    const char *archive_dir;    /* NULL, or also save the model of every
                                 * validation here as snapshot-STEP.safetensors,
                                 * none deleted and none read by the run */
} nmt_train_settings;

/* Guided alignment's weight and step rule when none is given
 * (docs/training.md, "Guided alignment"): Garg et al.'s weight, and each
 * target word at the step that reads it (1; 0: the step that predicts it),
 * chosen on validation. */
#define NMT_GUIDED_WEIGHT 0.05f
#define NMT_GUIDED_SHIFT 1

/* The defaults: the first architecture of the build (the RNN) with its
 * recipe (nmt_arch_recipe_of), the recipe measured on Multi30k. */
void nmt_train_settings_default(nmt_train_settings *s);
/* What an architecture's recipe (nmt/model.h) sets when nothing is asked:
 * the dropout rate of every site it has (the RNN's 0.3, measured on
 * Multi30k; the Transformer's 0.1, Vaswani et al.'s P_drop); the learning
 * rate, the optimizer's usual one (nmt_optim_default_lr) but the
 * architecture's own for Adam (the Transformer's 4e-3, the peak of its
 * warm-up, chosen with its batches on Multi30k: docs/training.md); the
 * warm-up steps (the RNN's 0: a constant lr lowered on plateaus; the
 * Transformer's 2000, of its linear decay). */
float nmt_train_default_dropout(nmt_arch a);
/* The dropout of a fresh run given max_time seconds of --max-time (0: none):
 * the default, or the recipe's long_dropout from its long_seconds on (the
 * Transformer's 0.2 from an hour: docs/training.md). */
float nmt_train_rule_dropout(nmt_arch a, double max_time);
/* Whether a fresh run given max_time seconds of --max-time and no schedule
 * takes the rsqrt schedule rather than the recipe's line: the Transformer's
 * from an hour, as its dropout (docs/training.md). */
int nmt_train_rule_rsqrt(nmt_arch a, double max_time);
/* The subword sampling alpha of a fresh run given max_time seconds of
 * --max-time and no --subword-alpha, where its pieces can be sampled (a
 * unigram model, a corpus read whole from files): the recipe's
 * subword_alpha below its long_seconds, its long_subword_alpha from there
 * (the Transformer's 0.5 in both). */
float nmt_train_rule_subword_alpha(nmt_arch a, double max_time);
double nmt_train_default_lr(nmt_arch a, nmt_optim_kind k);
int64_t nmt_train_default_warmup(nmt_arch a);
/* The warm-up of the rsqrt schedule when none is given (--lr-schedule rsqrt
 * of either architecture): the Transformer's 300 steps, its default before
 * the linear decay. */
#define NMT_RSQRT_WARMUP 300
/* The part of the run by which a linear decay's warm-up ends, unless
 * --warmup-share says otherwise: a quarter, just above the share the
 * Transformer's measured 2000-step ramps took of Multi30k's 30 minutes
 * (21 % and 23 %), so that those runs are what they were and a short run
 * (the toy corpus's 6 minutes) warms up over its first quarter. */
#define NMT_WARMUP_SHARE 0.25
/* The word dropout rate of each side when none is asked for (and --dropout
 * is not 0): 0, not yet measured here. */
float nmt_train_default_word_dropout(nmt_arch a);
/* Sets every dropout site of s->model.arch to rate, and the others to 0. */
void nmt_train_settings_set_dropout(nmt_train_settings *s, float rate);
/* The rate of a dropout site ("emb", "enc", ...: nmt_arch_dropout_site);
 * 0 for a name that is none. */
float nmt_train_settings_dropout(const nmt_train_settings *s, const char *site);

/* The settings as checkpoint metadata ("train.lr" = "0.001", ...): fills up
 * to max entries of meta, whose strings live in buf (bufsize bytes). The
 * model's architecture lists its own (nmt_config_train_meta: train.cell ...
 * for the RNN); the Transformer's dropouts and the warmup are written only
 * where they apply, so that the checkpoints of runs without them stay what
 * they were. Returns the number of entries or NMT_ERR_NOMEM if they do not
 * fit. */
int nmt_train_settings_to_meta(const nmt_train_settings *s, nmt_meta *meta, int max,
                               char *buf, size_t bufsize);
/* Reads them back from a checkpoint whose model (as nmt_model_load made it
 * from the same file) has the configuration `model`: that is the settings'
 * model (train.cell ..., train.tied_embeddings and train.lowercase are not
 * read back). Every key must be present
 * and valid, but for those added later (max_time, best_metric,
 * keep_snapshots, average_snapshots, warmup), which a checkpoint written
 * before them lacks: they take their defaults, the behaviour of the
 * program that wrote it. */
int nmt_train_settings_from_file(nmt_train_settings *s, const nmt_file *f,
                                 const nmt_config *model);

/* Word dropout on a filled batch (docs/DESIGN.md, "Word dropout"): each
 * real source token (not </s>) at rate p_src, and each token y1..ym of the
 * decoder's input (not <s>) at rate p_tgt, becomes <unk>; the labels
 * (tgt_out), </s>, <s> and padding are left alone. Token j of side s (0
 * source, 1 decoder input) of the batch's pair i is replaced when output
 * c = ((2 (first + i) + s) << 32) + j + 1 of splitmix64 seeded with key,
 * as a 24-bit uniform, is below the rate: a function of key and the
 * token's place alone, so that the pairs first.. of a batch shared out
 * among processes are replaced as in the whole batch. Returns the number
 * of tokens replaced. */
size_t nmt_word_dropout(nmt_batch *b, float p_src, float p_tgt, uint64_t key, size_t first);

/* The learning rate of step `step` (1 for the first) under a warmup of
 * `warmup` steps to the peak lr: lr * step / warmup, then
 * lr * sqrt(warmup / step). */
double nmt_lr_warmup(double lr, int64_t warmup, int64_t step);
/* The learning rate of step `step` (1 for the first) under a linear decay
 * with a warm-up of `warmup` steps (0: none), where progress is how much of
 * the run, in [0, 1], is done when the step starts. The warm-up lasts while
 * step <= warmup and (share > 0) progress < share, and gives
 * lr * max(step / warmup, progress / share): the nearer of its two ends
 * sets its slope. Then lr while progress is at most `from`, then a line
 * from lr down to 0 at progress 1: lr * (1 - progress) / (1 - from). A
 * budget of time (or of steps) ends with a small lr, whose last steps
 * settle the weights; with `from` > 0 the run learns at the peak lr until
 * the line starts. */
double nmt_lr_linear(double lr, int64_t warmup, double share, int64_t step, double progress,
                     double from);

/* ---- the loop ----------------------------------------------------------- */

typedef struct nmt_train_callbacks {
    void *user;
    void (*on_event)(void *user, nmt_train_event ev, const nmt_train_status *st);
} nmt_train_callbacks;

/* A validation set: its ids (every line kept, none skipped) and the raw
 * reference lines of the target side, for BLEU. */
typedef struct nmt_valid_set {
    const nmt_corpus *corpus;
    char *const *refs;       /* [n_refs] */
    size_t n_refs;           /* = corpus->n */
} nmt_valid_set;

typedef struct nmt_trainer nmt_trainer;

/* A trainer for model m (not owned; its parameters are trained in place) on
 * the corpus train, writing into out_dir (which must exist). With
 * s->shuffle_buffer > 0 train is NULL: the trainer streams the corpus from
 * s->src_path and s->tgt_path in the model's units (nmt/stream.h). valid
 * may be NULL. A fresh run starts at step 0 of epoch 1; call nmt_trainer_restore to
 * continue a checkpoint instead. */
int nmt_trainer_create(nmt_trainer **out, nmt_model *m, const nmt_train_settings *s,
                       const nmt_corpus *train, const nmt_valid_set *valid,
                       const char *out_dir);
/* Takes the optimizer moments and the loop state (step, epoch, position,
 * random state, lr, best scores, counters, elapsed time) from a checkpoint
 * written by this trainer; the model's weights must already be loaded from
 * it. */
int nmt_trainer_restore(nmt_trainer *t, const nmt_file *checkpoint);
/* Guided alignment: the trainer's batches get the gold rows that links
 * (not owned; read for the settings' guided_links) make of them, and train
 * the settings' head toward them. The corpus the trainer was made with,
 * and each epoch's sampled pieces, keep their words (nmt_corpus_opts.words).
 * Before nmt_trainer_run. */
int nmt_trainer_guide(nmt_trainer *t, const nmt_links *links);
/* Trains until --epochs, --max-steps or --max-time is reached, early
 * stopping, or *stop becomes non-zero (a signal; the status's stop_signal
 * is then its value, the largest over the processes; an atomic, since a
 * signal handler may set it on any thread: OpenBLAS's and the pool's
 * take signals too); saves the checkpoint
 * and writes a log.tsv row for the steps since the last row whenever the
 * run ends. A run that --max-steps or --max-time ends between scheduled
 * validations (valid_every, epoch ends) validates its last model: that
 * may write best.safetensors but counts for nothing else (no snapshot, lr
 * decay or early-stop count), so that the run extended with more steps goes
 * on as if it had not stopped. A run that early stopping ended stays ended
 * (status early_stopped) unless early_stop is now 0 or above the count of
 * validations without improvement. When it ends by any but a signal and
 * the settings ask for it, the last keep_snapshots snapshots are averaged
 * into average.safetensors and validated, and the mean replaces
 * best.safetensors if it is better by best_metric (once per step: a resumed
 * run that has nothing left to do does not average again). A restored run
 * that is past its limits (steps, epochs, time used, early stopped) with
 * its end's validation, log row and average done does nothing and writes
 * no file, not even the checkpoint: the status's nothing_to_do says so.
 * Returns NMT_OK, NMT_ERR_INTERRUPTED (stopped by *stop, state saved),
 * NMT_ERR_NUMERIC (NaN/Inf: nothing saved, the last checkpoint stays) or
 * another error. */
int nmt_trainer_run(nmt_trainer *t, const nmt_train_callbacks *cb, const atomic_int *stop);
/* The status as it stands (for a summary at the end). */
const nmt_train_status *nmt_trainer_status(const nmt_trainer *t);
/* The learning rate the schedule gives the next step, by the run's time as
 * its checkpoint left it (a resumed run's first step: what a changed limit
 * does to a linear decay is said with it). */
double nmt_trainer_lr_ahead(const nmt_trainer *t);
/* The bytes training needs at the least: *weights, the parameters with
 * their gradients and the optimizer's moments; *activations, the workspace
 * of the largest batch of the plan being trained (its own pairs and
 * lengths; 0 before the first step). */
int nmt_trainer_memory_need(const nmt_trainer *t, double *weights, double *activations);
void nmt_trainer_free(nmt_trainer *t);

/* Validation alone: the perplexity of m on the set (no dropout) and the
 * BLEU of its greedy translations against the references. */
int nmt_validate(const nmt_model *m, const nmt_valid_set *v, int batch_size,
                 double *ppl, double *bleu);

#endif
