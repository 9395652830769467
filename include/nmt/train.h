/* Training: optimizers, gradient clipping, and the training loop with
 * validation, best model, atomic checkpoints and exact resume.
 *
 * The loop is a library call that never prints: it reports through a
 * callback, and the command line (src/cli/train.c) decides what to show. */
#ifndef NMT_TRAIN_H
#define NMT_TRAIN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "nmt/corpus.h"
#include "nmt/model.h"
#include "nmt/modelfile.h"

/* ---- optimizers --------------------------------------------------------- */

typedef enum {
    NMT_OPTIM_SGD = 0,
    NMT_OPTIM_ADAM = 1,
    NMT_OPTIM_ADADELTA = 2,
} nmt_optim_kind;

const char *nmt_optim_name(nmt_optim_kind k);             /* "sgd" "adam" "adadelta" */
int nmt_optim_parse(const char *s, nmt_optim_kind *out);  /* NMT_OK or NMT_ERR_ARG */
/* The usual learning rate of each: sgd 1.0, adam 1e-3, adadelta 1.0 (there
 * it multiplies the update, as in Zeiler 2012 and PyTorch). */
double nmt_optim_default_lr(nmt_optim_kind k);

/* An optimizer over one flat parameter allocation of n floats. Its moments
 * are allocations of the same layout, so the tensor table of the model names
 * their slices too (checkpoints store them as "adam.m.NAME" etc.).
 *   sgd:      p -= lr g
 *   adam:     m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;
 *             p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)
 *   adadelta: a = rho a + (1-rho) g^2;  d = sqrt(u + eps)/sqrt(a + eps) g;
 *             u = rho u + (1-rho) d^2;  p -= lr d
 * (the update rules of PyTorch's Adam and Adadelta). */
typedef struct nmt_optim {
    nmt_optim_kind kind;
    size_t n;
    double lr;
    double beta1, beta2, eps;   /* adam: 0.9, 0.999, 1e-8 */
    double rho, ada_eps;        /* adadelta: 0.95, 1e-6 */
    int64_t t;                  /* steps taken (adam's bias correction) */
    int n_moments;              /* 0 sgd, 2 adam and adadelta */
    float *moment[2];           /* [n] each: adam m, v; adadelta a (E[g^2]), u (E[dx^2]) */
} nmt_optim;

int nmt_optim_init(nmt_optim *o, nmt_optim_kind kind, size_t n, double lr);
void nmt_optim_free(nmt_optim *o);
/* One update of params[n] with grads[n]. */
void nmt_optim_step(nmt_optim *o, float *params, const float *grads);
/* Prefix of moment i's tensors in a checkpoint: "adam.m", "adam.v",
 * "adadelta.sq_avg", "adadelta.acc_delta"; NULL when out of range. */
const char *nmt_optim_moment_name(nmt_optim_kind k, int i);

/* The L2 norm of grads[n], summed in double. */
double nmt_grad_norm(const float *grads, size_t n);
/* Scales grads so that their global norm is at most max_norm (0: no
 * clipping) and returns the norm before clipping. A non-finite norm is
 * returned as is and the gradients are left alone. */
double nmt_clip_grad_norm(float *grads, size_t n, double max_norm);

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
    /* what those four files were when the run began (in the order src, tgt,
     * valid_src, valid_tgt), so that a resume finds them from any folder
     * and checks data that moved: each one's path relative to the run's
     * folder (NULL: not known) and its print (known 0: none) */
    const char *data_from_run[4];
    nmt_data_print data_print[4];
    /* model of a fresh run (ignored with --init-from and --resume) */
    nmt_cell cell;
    nmt_attention attention;
    int bidirectional;
    int emb, hidden, att_dim, out_dim;
    int tied_embeddings; /* the output matrix is tgt_emb (out_dim = emb) */
    /* data */
    int batch_size;      /* sentences per batch */
    int max_len;         /* skip training pairs longer than this (tokens) */
    int min_count, max_vocab;
    int lowercase;
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
    float dropout_emb;   /* source and target embeddings */
    float dropout_enc;   /* the encoder's annotations, as attention, context and z read them */
    float dropout_out;   /* the deep output, before the vocabulary projection */
    float label_smoothing; /* of the training loss only: what is reported stays -log p */
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

void nmt_train_settings_default(nmt_train_settings *s);

/* The settings as checkpoint metadata ("train.lr" = "0.001", ...): fills up
 * to max entries of meta, whose strings live in buf (bufsize bytes). Returns
 * the number of entries or NMT_ERR_NOMEM if they do not fit. */
int nmt_train_settings_to_meta(const nmt_train_settings *s, nmt_meta *meta, int max,
                               char *buf, size_t bufsize);
/* Reads them back from a checkpoint; every key must be present and valid,
 * but for those added later (max_time, best_metric, keep_snapshots,
 * average_snapshots), which a checkpoint written before them lacks: they
 * take their defaults, the behaviour of the program that wrote it. */
int nmt_train_settings_from_file(nmt_train_settings *s, const nmt_file *f);

/* ---- the loop ----------------------------------------------------------- */

/* What the loop tells its caller. */
typedef enum {
    NMT_TRAIN_STEP,       /* after every step (for a live progress line) */
    NMT_TRAIN_REPORT,     /* a row of log.tsv was written */
    NMT_TRAIN_VALID,      /* a validation ran (valid_* set) */
    NMT_TRAIN_BEST,       /* best.safetensors was written */
    NMT_TRAIN_LR_DECAY,   /* the learning rate was lowered */
    NMT_TRAIN_EARLY_STOP, /* validation stopped improving: the run ends */
    NMT_TRAIN_EPOCH,      /* an epoch ended */
    NMT_TRAIN_SAVED,      /* checkpoint.safetensors was written */
    NMT_TRAIN_SNAPSHOT,   /* snapshot-STEP.safetensors was written */
    NMT_TRAIN_TIME_UP,    /* --max-time has passed: the run validates, saves, ends */
    NMT_TRAIN_AVERAGE,    /* the mean of the snapshots was validated (valid_* and
                           * average_of set; best_* still the best before it) */
} nmt_train_event;

typedef struct nmt_train_status {
    int64_t step;            /* steps taken so far */
    int epoch;               /* 1-based, the epoch being trained */
    size_t batch, n_batches; /* position in this epoch's plan */
    int64_t total_steps;     /* steps the run will take at most (for an ETA) */
    double lr;
    double loss, ppl;        /* mean over the target tokens since the last report */
    double grad_norm;        /* before clipping; mean since the last report */
    double tok_per_s;        /* target tokens per second since the last report */
    double elapsed_s;        /* wall time of the whole run, across resumes */
    int has_valid;
    double valid_ppl, valid_bleu;
    double best_bleu, best_ppl;
    int64_t best_step;
    int bad_validations;     /* validations since the last improvement */
    int best_average_of;     /* best.safetensors is the mean of this many snapshots;
                              * 0: a model of the run */
    double time_limit_s;     /* the settings' max_time (0: none), for an ETA */
    int time_up;             /* the run ended because max_time passed */
    int average_of;          /* with NMT_TRAIN_AVERAGE: how many snapshots */
    int64_t average_from;    /* ... and the step of the oldest */
} nmt_train_status;

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
 * the corpus train, writing into out_dir (which must exist). valid may be
 * NULL. A fresh run starts at step 0 of epoch 1; call nmt_trainer_restore to
 * continue a checkpoint instead. */
int nmt_trainer_create(nmt_trainer **out, nmt_model *m, const nmt_train_settings *s,
                       const nmt_corpus *train, const nmt_valid_set *valid,
                       const char *out_dir);
/* Takes the optimizer moments and the loop state (step, epoch, position,
 * random state, lr, best scores, counters, elapsed time) from a checkpoint
 * written by this trainer; the model's weights must already be loaded from
 * it. */
int nmt_trainer_restore(nmt_trainer *t, const nmt_file *checkpoint);
/* Trains until --epochs, --max-steps or --max-time is reached, early
 * stopping, or *stop becomes non-zero (a signal); saves the checkpoint
 * and writes a log.tsv row for the steps since the last row whenever the
 * run ends. When it ends by any but a signal and the settings
 * ask for it, the last keep_snapshots snapshots are averaged into
 * average.safetensors and validated, and the mean replaces best.safetensors
 * if it is better by best_metric (once per step: a resumed run that has
 * nothing left to do does not average again).
 * Returns NMT_OK, NMT_ERR_INTERRUPTED (stopped by *stop, state saved),
 * NMT_ERR_NUMERIC (NaN/Inf: nothing saved, the last checkpoint stays) or
 * another error. */
int nmt_trainer_run(nmt_trainer *t, const nmt_train_callbacks *cb,
                    volatile sig_atomic_t *stop);
/* The status as it stands (for a summary at the end). */
const nmt_train_status *nmt_trainer_status(const nmt_trainer *t);
void nmt_trainer_free(nmt_trainer *t);

/* Validation alone: the perplexity of m on the set (no dropout) and the
 * BLEU of its greedy translations against the references. */
int nmt_validate(const nmt_model *m, const nmt_valid_set *v, int batch_size,
                 double *ppl, double *bleu);

/* Reads the lines of a text file (plain or gzip) into a malloc'ed array of
 * malloc'ed strings. */
int nmt_read_lines(const char *path, char ***lines, size_t *n);
void nmt_free_lines(char **lines, size_t n);

/* ---- progress (src/progress.c): text for the caller to show ------------- */

/* log.tsv: the header line and one row (each ending in "\n"); the validation
 * columns are empty unless st->has_valid. A row with st->average_of > 0 is
 * the validation of the mean of that many snapshots: its training columns are
 * empty and its last column, average_of, says how many (empty in other rows).
 * Return the length (as snprintf). */
int nmt_log_header(char *buf, size_t cap);
int nmt_log_row(char *buf, size_t cap, const nmt_train_status *st);

/* A live progress line: rate-limited, with an ETA from this session's speed. */
typedef struct nmt_progress {
    double t0;          /* when this session started (seconds, monotonic) */
    int64_t step0;      /* the step it started at */
    double last_draw;   /* when a line was last drawn; < 0: never */
    double interval;    /* seconds between lines */
} nmt_progress;

/* Monotonic seconds. */
double nmt_now(void);
void nmt_progress_start(nmt_progress *p, int64_t step, double interval);
/* 1 if a line is due now (and marks it drawn), else 0. */
int nmt_progress_due(nmt_progress *p, double now);
/* Seconds left at this session's pace, or until st->time_limit_s if that
 * comes first; < 0 when unknown. */
double nmt_progress_eta(const nmt_progress *p, const nmt_train_status *st, double now);
/* "epoch 2 | step 1200/5000 | loss 3.214 | 5321 tok/s | ETA 12m03s" (no newline). */
int nmt_progress_line(char *buf, size_t cap, const nmt_progress *p,
                      const nmt_train_status *st, double now);
/* "1h02m03s", "12m03s", "7.2s". */
int nmt_format_duration(char *buf, size_t cap, double seconds);

#endif
