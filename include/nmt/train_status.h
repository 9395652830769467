/* What the training loop reports: its events and its status, the data that
 * log rows (nmt/runlog.h) and progress lines (nmt/progress.h) are made of. */
#ifndef NMT_TRAIN_STATUS_H
#define NMT_TRAIN_STATUS_H

#include <stddef.h>
#include <stdint.h>

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
    NMT_TRAIN_ALPHA,      /* best.safetensors was given the length normalisation
                           * of its best beam BLEU on validation (alpha_*) */
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
    int early_stopped;       /* the run ended by early stopping (saved: a resumed
                              * run stays ended unless early_stop is now 0 or
                              * above bad_validations) */
    int nothing_to_do;       /* a resumed run was past its limits with its end's
                              * work done: it trained nothing and wrote no
                              * file (early_stopped or time_up say which
                              * limit, when neither the steps or epochs) */
    int stop_signal;         /* the run was stopped by *stop: its value, the
                              * largest over the processes of an MPI run */
    int average_of;          /* with NMT_TRAIN_AVERAGE: how many snapshots */
    int64_t average_from;    /* ... the step of the oldest */
    int64_t average_to;      /* ... and of the newest (not the run's last step when
                              * the run stopped between validations) */
    double alpha;            /* with NMT_TRAIN_ALPHA: the alpha chosen */
    double alpha_bleu;       /* ... its validation BLEU with the beam */
    double alpha_default_bleu; /* ... and NMT_DEFAULT_ALPHA's */
    int alpha_tried;         /* ... how many alphas were tried */
    double alpha_seconds;    /* ... and the time they took */
} nmt_train_status;

#endif
