/* bench-sampler: the time to sample a corpus's pieces once (what nmt train
 * does at every epoch start with subword sampling), by SentencePiece's
 * SampleEncode and by nmt's own sampler (src/data/unigram_sampler.c), in
 * turn, each on a thread seeded alike; the medians over --repeats. Checks
 * on the way that the two drew the same pieces.
 *
 *   bench-sampler SRC TGT [--pieces N] [--alpha A] [--repeats R]
 *
 * The model is learned from SRC and TGT as nmt train learns it (N pieces,
 * 8000 by default); the lines are held in memory, so only sampling is
 * timed. Then the whole of what nmt train waits for at an epoch's start
 * (train.c's ensure_sample): nmt_corpus_read of the files, sampled, with the
 * default --max-len of subwords. Prints one JSON object. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "data/unigram_sampler.h"
#include "nmt/corpus.h"
#include "nmt/error.h"
#include "nmt/subwords.h"
#include "nmt/text.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct run {
    nmt_subwords *sw;
    char **line;
    size_t n;
    float alpha;
    unsigned long long sum; /* of every id drawn, position-weighted: a check */
    size_t pieces;
} run;

static int sample_all(void *ctx)
{
    run *r = ctx;
    nmt_ids ids = {0};
    r->sum = 0;
    r->pieces = 0;
    for (size_t k = 0; k < r->n; k++) {
        int rc = nmt_subwords_encode_ids(r->sw, r->line[k], strlen(r->line[k]), r->alpha, &ids);
        if (rc) {
            nmt_ids_free(&ids);
            return rc;
        }
        for (size_t i = 0; i < ids.n; i++)
            r->sum = r->sum * 1000003u + (unsigned long long)ids.id[i];
        r->pieces += ids.n;
    }
    nmt_ids_free(&ids);
    return NMT_OK;
}

static int read_into(char ***line, size_t *n, size_t *cap, const char *path)
{
    nmt_reader *r;
    int rc = nmt_reader_open(&r, path);
    const char *s;
    size_t len;
    while (!rc && (rc = nmt_reader_next(r, &s, &len)) == 1) {
        if (*n == *cap) {
            *cap = *cap ? 2 * *cap : 1 << 16;
            *line = realloc(*line, *cap * sizeof **line);
        }
        (*line)[(*n)++] = strndup(s, len);
        rc = 0;
    }
    nmt_reader_close(r);
    return rc < 0 ? rc : 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench-sampler SRC TGT [--pieces N] [--alpha A] [--repeats R]\n");
        return 2;
    }
    int pieces = 8000, repeats = 5;
    float alpha = 0.5f;
    for (int i = 3; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--pieces"))
            pieces = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--alpha"))
            alpha = (float)atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--repeats"))
            repeats = atoi(argv[i + 1]);
    }
    if (repeats < 1 || repeats > 100)
        repeats = 5;
    nmt_subwords *sw;
    if (nmt_corpus_learn_subwords(&sw, argv[1], argv[2], pieces, 0)) {
        fprintf(stderr, "bench-sampler: %s\n", nmt_error_message());
        return 1;
    }
    char **line = NULL;
    size_t n = 0, cap = 0;
    if (read_into(&line, &n, &cap, argv[1]) || read_into(&line, &n, &cap, argv[2])) {
        fprintf(stderr, "bench-sampler: %s\n", nmt_error_message());
        return 1;
    }
    double t[2][100];
    run r[2] = {{sw, line, n, alpha, 0, 0}, {sw, line, n, alpha, 0, 0}};
    for (int k = 0; k < repeats; k++)
        for (int own = 0; own < 2; own++) {
            nmt_subwords_use_own_sampler(sw, own);
            double t0 = now();
            if (nmt_subwords_run_seeded(1, sample_all, &r[own])) {
                fprintf(stderr, "bench-sampler: %s\n", nmt_error_message());
                return 1;
            }
            t[own][k] = now() - t0;
        }
    double tr[2][100];
    for (int k = 0; k < repeats; k++)
        for (int o = 0; o < 2; o++) {
            nmt_subwords_use_own_sampler(sw, o);
            nmt_corpus_opts opts = {.max_len = 100, .skip_empty = 1, .subwords = sw,
                                    .subword_alpha = alpha, .sample_seed = 1};
            nmt_corpus c;
            double t0 = now();
            if (nmt_corpus_read(&c, argv[1], argv[2], &opts, NULL, NULL)) {
                fprintf(stderr, "bench-sampler: %s\n", nmt_error_message());
                return 1;
            }
            tr[o][k] = now() - t0;
            nmt_corpus_free(&c);
        }
    qsort(tr[0], (size_t)repeats, sizeof(double), cmp_double);
    qsort(tr[1], (size_t)repeats, sizeof(double), cmp_double);
    qsort(t[0], (size_t)repeats, sizeof(double), cmp_double);
    qsort(t[1], (size_t)repeats, sizeof(double), cmp_double);
    double spm = t[0][repeats / 2], own = t[1][repeats / 2];
    printf("{\"lines\": %zu, \"pieces\": %zu, \"alpha\": %g, \"repeats\": %d, "
           "\"own_sampler\": %d, \"sentencepiece_s\": %.4f, \"nmt_s\": %.4f, \"speedup\": %.2f, "
           "\"same_pieces\": %s, \"epoch_read_sentencepiece_s\": %.4f, \"epoch_read_nmt_s\": %.4f}\n",
           n, r[1].pieces, (double)alpha, repeats, nmt_subwords_own_sampler(sw), spm, own,
           spm / own, r[0].sum == r[1].sum && r[0].pieces == r[1].pieces ? "true" : "false", tr[0][repeats / 2],
           tr[1][repeats / 2]);
    for (size_t k = 0; k < n; k++)
        free(line[k]);
    free(line);
    nmt_subwords_free(sw);
    return r[0].sum == r[1].sum ? 0 : 1;
}
