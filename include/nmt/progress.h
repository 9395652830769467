/* Text made of the training loop's status for the caller to show: the live
 * progress line (src/train/progress.c). log.tsv's rows are nmt/runlog.h's. */
#ifndef NMT_PROGRESS_H
#define NMT_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

#include "nmt/train_status.h"

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
