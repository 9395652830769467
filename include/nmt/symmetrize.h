/* Symmetrisation: one alignment made of two, the links of a model run in
 * each direction (source to target and target to source), by the
 * heuristics of Och and Ney (2003) and Koehn et al. (2003) as Moses
 * describes them (docs/alignments.md, "Symmetrisation"). */
#ifndef NMT_SYMMETRIZE_H
#define NMT_SYMMETRIZE_H

#include <stddef.h>

#include "nmt/align.h"

typedef enum nmt_symmetrize_method {
    NMT_SYM_INTERSECTION = 0,   /* the links both directions have */
    NMT_SYM_UNION,              /* the links either has */
    NMT_SYM_GROW_DIAG,          /* the intersection grown into neighbouring links
                                 * of the union (diagonals included) that link a
                                 * word not linked yet */
    NMT_SYM_GROW_DIAG_FINAL,    /* then each direction's links (forward first)
                                 * that link a word not linked yet */
    NMT_SYM_GROW_DIAG_FINAL_AND,/* then each direction's links (forward first)
                                 * whose two words are both unlinked */
} nmt_symmetrize_method;

/* The methods' names, in the enum's order, NULL last: "intersection",
 * "union", "grow-diag", "grow-diag-final", "grow-diag-final-and". */
extern const char *const nmt_symmetrize_names[];

/* Joins fwd (the source-to-target direction's links) and rev (the
 * target-to-source direction's, already turned to source-target: see
 * nmt_links_reverse) of one pair by `method`. *out is malloc'ed (NULL when
 * *n_out is 0), each link once, sorted by source word then target word,
 * all sure. Either list may be empty or hold repeats. NMT_OK, NMT_ERR_ARG
 * (an unknown method, a negative index, or a pair too long to hold as a
 * grid: more than 2^26 cells) or NMT_ERR_NOMEM. */
int nmt_symmetrize(nmt_symmetrize_method method, const nmt_link *fwd, size_t n_fwd,
                   const nmt_link *rev, size_t n_rev, nmt_link **out, size_t *n_out);

/* The links of one pair that both a and b have (two aligners of the same
 * direction agreeing), written over a: *n_a becomes their count, in a's
 * order, each once. Sorting is not needed: pairs are short, so a linear
 * scan of b per link is cheaper than any index. */
void nmt_links_agree(nmt_link *a, size_t *n_a, const nmt_link *b, size_t n_b);

#endif
