/* Reading a training log: nmt train's log.tsv, or any tab-separated file
 * with a header line that names some of its columns (scripts/torch_baseline.py
 * train --log writes one: step, loss, grad_norm). Columns are found by name;
 * a missing column or an empty cell is unknown (NaN). */
#ifndef NMT_RUNLOG_H
#define NMT_RUNLOG_H

#include <stddef.h>

/* The columns that curves are drawn from, [n] each. */
typedef struct nmt_runlog {
    size_t n;
    double *step;        /* never NaN */
    double *elapsed_s;   /* wall time of the run */
    double *loss;        /* training loss (nats per target token) */
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
