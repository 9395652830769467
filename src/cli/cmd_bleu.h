/* nmt bleu's two halves: the options (cmd_bleu.c) and the run that reads the
 * files, scores them with each chosen metric and prints (cmd_bleu_run.c). */
#ifndef NMT_CLI_BLEU_CMD_H
#define NMT_CLI_BLEU_CMD_H

#include <stddef.h>

#include "nmt/bleu.h"
#include "nmt/chrf.h"

/* The metrics, in the order they are printed: sacreBLEU prints its metrics
 * sorted by name (BLEU before CHRF) whatever order -m names them in, and
 * chrF++ is its chrF with word order 2. */
enum { METRIC_BLEU, METRIC_CHRF, METRIC_CHRFPP, N_METRICS };

typedef struct bleu_args {
    const char *hyp;
    const char **refs;
    size_t n_refs;
    const char *src;
    int metric[N_METRICS];           /* which metrics to compute */
    nmt_bleu_opts opts;              /* BLEU's */
    nmt_chrf_opts chrf[N_METRICS];   /* [METRIC_CHRF] and [METRIC_CHRFPP] */
    int width, json, short_sig, score_only, sentence, stats, by_length;
} bleu_args;

/* Scores and prints; returns the exit code. */
int bleu_run(const bleu_args *a);

#endif
