/* nmt align --format html: one self-contained page for browsing the
 * alignments of a whole test set, from one or several models. The pairs are
 * collected as they are aligned and the page is written at the end: the
 * explorer's HTML, CSS and JavaScript (src/cli/align/explorer.html, built into the
 * program) with the data embedded as JSON. */
#ifndef NMT_CLI_ALIGN_HTML_H
#define NMT_CLI_ALIGN_HTML_H

#include <stddef.h>
#include <stdio.h>

#include "nmt/align.h"

typedef struct html_doc html_doc;

/* Room for n_pairs pairs of n_models models. NULL when out of memory. */
html_doc *html_create(size_t n_pairs, int n_models);
void html_free(html_doc *h);

/* A model's maps as the explorer's grid (a Transformer's decoder layers
 * down, their heads and mean across): rows x cols names, map r * cols + c
 * at row r, column c; `shown` the map drawn large at first. rows 0: one
 * map, no grid. */
typedef struct html_grid {
    int rows, cols, shown;
    const char *const *names;
} html_grid;

/* Model mi: its file, attention, cell, how its targets were made ("given
 * target", "beam 5 translation"), its corpus figures (aer < 0 or bleu < 0:
 * none) and its grid of maps (NULL: none). Returns 0, or -1 when out of
 * memory. */
int html_set_model(html_doc *h, int mi, const char *file, const char *kind, const char *mode,
                   double aer, double bleu, const html_grid *grid);

/* Pair k: its line in the corpus (1-based), the source line, the reference
 * (NULL: none) and the gold links (has_gold 0: none given). */
int html_set_pair(html_doc *h, size_t k, long line, const char *src, const char *ref,
                  const nmt_link *gold, size_t n_gold, int has_gold);

/* One map of a pair for the grid: its weights in the units shown, its hard
 * links and the pair's AER under it (< 0: no gold). */
typedef struct html_map {
    const nmt_alignment *a;
    const nmt_link *hard;
    int n_hard;
    double aer;
} html_map;

/* Model mi's alignment of pair k as shown (its units), its hard links
 * (nmt_align_hard), its translation (NULL when the target was given), the
 * pair's AER and sentence BLEU (< 0: none), and every map of the model's
 * grid (n_maps of them, in the grid's order; NULL, 0: no grid). */
int html_add(html_doc *h, int mi, size_t k, const nmt_alignment *a, const nmt_link *hard,
             int n_hard, const char *hyp, double aer, double bleu, const html_map *maps,
             int n_maps);

/* Writes the page. Returns 0, or -1 when the write failed. */
int html_write(FILE *f, const html_doc *h, const char *title);

#endif
