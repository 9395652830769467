/* log.tsv, the training log (docs/DESIGN.md, "Training output"): its one
 * format, as the training loop writes it, cuts it back on resume, and as
 * nmt plot and nmt compare read it. A log is a tab-separated file whose
 * header line names its columns: nmt train's, or any other with some of
 * them (pytorch/torch_baseline.py train --log writes one: step, loss,
 * grad_norm). Columns are found by name; a missing column or an empty cell
 * is unknown (NaN). */
#ifndef NMT_RUNLOG_H
#define NMT_RUNLOG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "nmt/train_status.h"

/* ---- writing ------------------------------------------------------------ */

/* The header line and one row (each ending in "\n"); the validation columns
 * are empty unless st->has_valid. A row with st->average_of > 0 is the
 * validation of the mean of that many snapshots: its training columns are
 * empty and its last column, average_of, says how many (empty in other
 * rows). Return the length (as snprintf). */
int nmt_log_header(char *buf, size_t cap);
int nmt_log_row(char *buf, size_t cap, const nmt_train_status *st);

/* Opens the log at path for a run's rows (*out): a fresh run's
 * (resume_step < 0) anew, with the header; a resumed run's to append to,
 * cut back to resume_step first (rows a killed run wrote after its
 * checkpoint) and given today's header (a log written before a column was
 * added gets empty cells for it), rewritten whole or not at all
 * (nmt/atomic_file.h) and only when that changes it. */
int nmt_runlog_open(FILE **out, const char *path, int64_t resume_step);
/* Appends st's row to f (the log at path, for messages) and flushes it. */
int nmt_runlog_append(FILE *f, const char *path, const nmt_train_status *st);

/* ---- reading ------------------------------------------------------------ */

/* The columns that curves and comparisons are drawn from, [n] each. */
typedef struct nmt_runlog {
    size_t n;
    double *step;        /* never NaN */
    double *elapsed_s;   /* wall time of the run */
    double *loss;        /* training loss (nats per target token) */
    double *tok_per_s;   /* training speed: target tokens a second */
    double *valid_ppl, *valid_bleu;
    double *average_of;  /* > 0: the valid_* columns score the mean of that
                          * many snapshots, not the trained model */
} nmt_runlog;

/* Reads path. The header must name a "step" column and no column twice;
 * every row must have a step and, in the columns read, numbers or empty
 * cells, and no more cells than the header has names. Blank lines are
 * skipped. A refusal names the file, the line and the column. */
int nmt_runlog_read(nmt_runlog *log, const char *path);
void nmt_runlog_free(nmt_runlog *log);

#endif
