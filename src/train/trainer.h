/* The trainer's state, shared by train.c (the loop, validation) and
 * checkpoint.c (saving it and restoring it). Not a public header. */
#ifndef NMT_TRAINER_H
#define NMT_TRAINER_H

#include <stdio.h>

#include "base/path.h"
#include "nmt/batch.h"
#include "nmt/bleu.h"
#include "nmt/decode.h"
#include "nmt/rng.h"
#include "nmt/stream.h"
#include "nmt/train.h"

struct nmt_trainer {
    nmt_model *m;
    nmt_train_settings s;
    const nmt_corpus *train;  /* the given corpus, or &sampled */
    nmt_corpus sampled;       /* subword sampling: this epoch's draw of the pieces */
    const nmt_links *links;   /* guided alignment (nmt_trainer_guide), or NULL */
    int sampled_epoch;        /* the epoch `sampled` was drawn for; 0: none */
    int src_T, tgt_T;         /* the longest rows batch and ws hold */
    nmt_valid_set valid;      /* valid.corpus NULL: no validation here */
    char *dir;
    /* data-parallel training (dist.h): this process's rank of size; only
     * rank 0 reads the validation set, validates and writes files, and the
     * others learn its results (validates_elsewhere) */
    int rank, size;
    int validates_elsewhere;

    nmt_optim opt;
    nmt_real *grad_sum;       /* --accumulate: the step's batches' gradients, each
                               * times its tokens; NULL for one batch a step */
    nmt_rng rng;              /* dropout; its state is saved in checkpoints */
    nmt_workspace *ws;
    nmt_batch batch;
    nmt_batch_plan plan;
    int plan_epoch;           /* the epoch `plan` was made for; 0: none */
    /* a streamed corpus (settings.shuffle_buffer > 0; stream_blocks.c): `train` is
     * the block being trained on and `plan` its plan, so that the epoch's
     * batch b is the plan's batch b - block_first. For a corpus in memory
     * block_first stays 0 and the rest unused */
    nmt_stream *stream;
    size_t block_first;       /* the epoch's number of the block's first batch */
    size_t block_index;       /* the block's number in its epoch (0: the first) */
    size_t block_line;        /* lines of the files before the block */
    nmt_rng block_rng;        /* the shuffles' generator at the block's start */
    nmt_rng shuffle_rng;      /* ... and as planning the block left it */
    int block_last;           /* the epoch's last block */
    int block_restored;       /* the checkpoint's block is the first to load */
    size_t step_took;         /* the batches the last step took */
    nmt_decoder *decoder;     /* for validation BLEU */
    nmt_bleu *bleu;

    /* the loop's position and schedule: everything here is saved */
    nmt_train_status st;      /* step, epoch, batch, lr, best_* ... */
    int since_decay;          /* validations without improvement since the last lr decay */
    /* what an improvement must beat: the scheduled validations only (an
     * average that became best, or the validation at a stop between them,
     * would stall the lr schedule, or make it other than an uninterrupted
     * run's) */
    double lowest_ppl;        /* the lowest validation perplexity so far */
    double highest_bleu;      /* the highest validation BLEU so far */
    int64_t averaged_step;    /* the step the snapshots were last averaged at; -1 */
    int64_t last_valid_step;  /* -1: none yet */
    double elapsed_base;      /* elapsed seconds of earlier sessions */

    /* this session only */
    double t_start;
    int64_t last_saved_step;  /* -1: nothing saved yet */
    int restored;
    double acc_nll, acc_tok, acc_norm; /* since the last log row (saved) */
    int64_t acc_steps;
    double rate_tok, t_report; /* tokens and time since the last row of this session */
    double t_validating;       /* of that time, spent validating (not training) */
    FILE *log;                 /* log.tsv (rank 0; nmt/runlog.h) */
    char *log_path;
    FILE *batch_log;           /* settings.batch_log_path, opened by the run */
};

/* validate.c: the longest source and target rows (tokens + </s>) of a
 * corpus, raised into *src_T and *tgt_T */
void nmt_corpus_max_lengths(const nmt_corpus *c, int *src_T, int *tgt_T);
/* What a validation runs on: the trainer's own, or nmt_validate's. */
typedef struct valid_tools {
    nmt_workspace *ws;
    nmt_batch *batch;
    nmt_decoder *decoder;
    nmt_bleu *bleu;
} valid_tools;
/* The perplexity and BLEU of m on v (through vt, sized for v's batches),
 * in batches of batch_size pairs within batch_tokens target tokens (0: no
 * token bound). */
int nmt_validate_with(const nmt_model *m, const valid_tools *vt, const nmt_valid_set *v,
                      int batch_size, int batch_tokens, double *ppl_out, double *bleu_out);
/* The greedy decoder validation translates with, for B sources of up to src_T. */
int nmt_valid_decoder(nmt_decoder **d, const nmt_model *m, int B, int src_T);
/* Validation's BLEU: case-insensitive for a model of lowercased text. */
int nmt_valid_bleu(nmt_bleu **b, const nmt_model *m);

/* batch_log.c (--batch-log): the first line, the weights the logged steps
 * start from; then, before each step, the batch at the current position
 * (t->batch filled) with the lr its update uses. */
int nmt_batch_log_start(nmt_trainer *t);
int nmt_batch_log_step(nmt_trainer *t);

/* step_batch.c: a step's batches. The pairs of the epoch's batch b (the one
 * place that reads the plan for a step). */
void nmt_plan_batch(const nmt_trainer *t, size_t b, const size_t **pairs, int *n);
/* This process's share of a batch's pairs[n] in a run of t->size: a run of
 * consecutive pairs [lo, hi), cut so that the processes get about the same
 * number of target tokens (each pair goes where the middle of its tokens
 * falls). */
void nmt_step_share(const nmt_trainer *t, const size_t *pairs, int n, int *lo, int *hi);
/* Dropout's stream in a run of several processes: each step, batch of the
 * step (--accumulate's k-th) and process its own, made from (seed, step,
 * rank), so that no state must be kept per process and a resumed run draws
 * what the uninterrupted one drew. */
void nmt_step_rng(const nmt_trainer *t, size_t batch_of_step, int rank, nmt_rng *r);
/* Fills t->batch with pairs[lo, hi) (pairs the whole batch k of the step),
 * drops out its words at the settings' rates with a key drawn first from r,
 * the batch's dropout stream (several processes: rank 0's key on every
 * process, and rank 0's r goes on past it), and writes it to the batch
 * log. */
int nmt_step_batch(nmt_trainer *t, size_t k, const size_t *pairs, int lo, int hi, nmt_rng *r);

/* stream_blocks.c: a streamed corpus. Opens the stream over settings' files in
 * the model's units. */
int nmt_stream_blocks_open(nmt_trainer *t);
/* Makes the block that holds the epoch's batch b current (t->train,
 * t->plan), reading on through the files (or starting the epoch, or the
 * checkpoint's block) as needed: 1, 0 when the epoch has no batch b, or
 * < 0. */
int nmt_stream_blocks_at(nmt_trainer *t, size_t b);
/* The shuffles' generator of the first block of the current epoch. */
void nmt_stream_blocks_epoch_rng(const nmt_trainer *t, nmt_rng *r);

/* checkpoint.c */
int nmt_trainer_save_checkpoint(nmt_trainer *t);
int nmt_trainer_save_best(nmt_trainer *t);

/* snapshots.c: dir/snapshot-STEP.safetensors, the model of a validation.
 * Kept: the keep_snapshots newest, and the keep_snapshots newest up to the
 * checkpoint's step (so that a run resumed from it, which first drops the
 * snapshots past its step, finds those an uninterrupted run has). */
int nmt_snapshot_save(nmt_trainer *t);
void nmt_snapshots_prune(const nmt_trainer *t);
/* Deletes the snapshots past `step` (all of them for step -1). */
void nmt_snapshots_drop_after(const nmt_trainer *t, int64_t step);
/* The paths of the keep_snapshots newest snapshots up to the current step,
 * oldest first, in *paths (free with nmt_snapshot_paths_free), and the
 * steps of the oldest and the newest. */
int nmt_snapshot_paths(const nmt_trainer *t, char ***paths, int *n, int64_t *first_step,
                       int64_t *last_step);
void nmt_snapshot_paths_free(char **paths, int n);
/* --archive-snapshots: the same model file in settings.archive_dir, which
 * nothing prunes or reads. */
int nmt_snapshot_archive(const nmt_trainer *t);

#endif
