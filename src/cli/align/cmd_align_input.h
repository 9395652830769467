/* The inputs of nmt align: the lines of its files, the lines chosen with
 * --line, and the gold links of each chosen pair, read and checked before
 * any model runs. */
#ifndef NMT_CLI_ALIGN_INPUT_H
#define NMT_CLI_ALIGN_INPUT_H

#include <stddef.h>

#include "nmt/align.h"
#include "nmt/model.h"

/* Every line of a file (plain or gzip), kept: pictures and pages need the
 * number of pairs before the first is written. */
typedef struct lines {
    char **line;
    size_t n, cap;
} lines;

/* Reads every line of path (plain or gzip) into *l: 0, or -1 with the
 * library's error set (nmt_error_message). */
int align_lines_read(lines *l, const char *path);
void align_lines_free(lines *l);
/* 0 when x and y have as many lines, else -1 after saying so, naming both
 * files (xp "-" is standard input). */
int align_lines_same_count(const lines *x, const char *xp, const lines *y, const char *yp);

/* The files and the choice of lines (NULL: none given; src "-" is
 * standard input). */
typedef struct align_files {
    const char *src, *tgt, *gold, *ref, *line_spec;
    int gold_reverse;      /* the gold file lists target-source links */
    unsigned aer_flags;    /* nmt_aer_add_opts's: NMT_AER_PARTIAL */
} align_files;

/* Everything read before the first model runs: the lines, which of them,
 * the gold links of each chosen pair. */
typedef struct inputs {
    lines src, tgt, gold, ref;
    size_t *sel;           /* [n] 0-based line indices, in file order */
    size_t n;
    nmt_link **gold_links; /* [n], source-target (turned so with gold_reverse) */
    size_t *n_gold;        /* [n] */
    unsigned aer_flags;    /* as the files said: how AER counts */
} inputs;

/* Reads the files, checks they pair up line by line, chooses the lines of
 * --line (N, N-M or lists of them, 1-based) and parses the gold links of
 * the chosen pairs (turning them to source-target with f->gold_reverse).
 * Returns 0, or -1 after saying what is wrong on stderr. */
int align_read_inputs(const align_files *f, inputs *in);
void align_inputs_free(inputs *in);

/* Refuses gold links that are not inside their pair as model m splits it
 * into words: past the source's words, or past the given target's (with
 * f->tgt; without it the target is the model's translation, and a link
 * past it counts as one the model missed). The message names the gold
 * file, the line and the link, and the model when `whose` is not NULL
 * (several models may split a line into different words). 0, or -1 after saying what is wrong on stderr. */
int align_check_gold(const align_files *f, const inputs *in, const nmt_model *m,
                     const char *whose);

#endif
