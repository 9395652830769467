/* Word links extracted from attention: which step's row stands for a
 * target word (Shift-Att), which words get no link (unaligned), and one
 * pair's text in, word links out (nmt_aligner), the one path that nmt align's
 * Pharaoh output and nmt serve's "links" share (docs/alignments.md).
 *
 * Nothing here prints or exits; errors are NMT_ERR_* with a message. */
#ifndef NMT_EXTRACT_H
#define NMT_EXTRACT_H

#include "nmt/align.h"
#include "nmt/model.h"

/* How links are read off a matrix. Zero everywhere ({0}) is nmt_align_hard's
 * rule: the step that predicts each word, every word linked. */
typedef struct nmt_link_rules {
    int shift;          /* 1: a target unit's row is the step that reads it
                         * (Chen et al. 2020, Shift-Att): row i + 1 of the
                         * forced pass; "</s>", read by no step, gets a row all
                         * on the source "</s>" (nmt_align_shift_rows) */
    int eos_unaligned;  /* 1: a target word whose largest weight is on the
                         * source "</s>" gets no link */
    float min_weight;   /* a word whose largest weight over the real source
                         * words is below this gets no link (0: none dropped) */
} nmt_link_rules;

/* The map and rules a model aligns with when nothing else is asked: the
 * head its training guided toward word links (cfg.align), read at the
 * step it was trained at (align_shift), else its default map unshifted.
 * Returns 1 when the trained head was chosen, 0 otherwise. */
int nmt_align_model_defaults(const nmt_model *m, int *map, nmt_link_rules *r);

/* NMT_OK when the rules can be applied to model m's maps, else NMT_ERR_ARG
 * with the reason: shift on a model whose attention is computed before its
 * step reads the input unit (the RNN's query is the previous state, so its
 * row at a step has not seen the unit that step reads), min_weight outside
 * [0, 1]. */
int nmt_align_rules_check(const nmt_model *m, const nmt_link_rules *r);

/* Shift-Att in place on one [n_tgt, n_src] matrix of a forced pass: row i
 * becomes row i + 1 (the step whose input is target unit i), and the last
 * row, "</s>"'s, which no step reads, becomes 1 on the source "</s>" (the
 * last column) and 0 elsewhere, so every row still sums to 1. */
void nmt_align_shift_rows(float *att, int n_tgt, int n_src);

/* nmt_align_hard under rules r (r->shift is not applied here: the matrix
 * is already the one shown, shifted or not): every target word but the
 * final "</s>" is linked to the real source word it attends to most (the
 * lower index on a tie), unless r drops it. Returns the count written to
 * links (room for a->n_tgt), in target order. */
int nmt_align_links(const nmt_alignment *a, const nmt_link_rules *r, nmt_link *links);

/* Pharaoh: links "i-j" (source-target) separated by spaces, then a newline
 * (an empty line when there are none). NMT_OK or NMT_ERR_IO. */
int nmt_align_write_links(FILE *f, const nmt_link *links, int n);

/* ---- one pair's text in, word links out ------------------------------------ */

/* Everything one pair needs: the model's units of both lines, their ids,
 * the inference state (grown for longer pairs), the matrix. One per thread. */
typedef struct nmt_aligner nmt_aligner;

/* The links of one pair and what its lines held. */
typedef struct nmt_pair_links {
    nmt_link *links;       /* [n_links] source-target indices, malloc'ed by the
                            * aligner and kept until its next pair */
    int n_links;
    int n_src, n_tgt;      /* the words (or pieces) of each side, "</s>" left out */
    int src_unk, tgt_unk;  /* units of each side that are <unk> */
    int src_units, tgt_units; /* the units of each side ("</s>" left out) */
} nmt_pair_links;

/* An aligner of model m's map `map` (a number of nmt_model_attention_map_name)
 * under rules r; pieces = 1 keeps a subword model's links between pieces,
 * else they are between words, as gold links are. NMT_ERR_ARG for a model
 * without attention, a map it has not, or rules it cannot take. */
int nmt_aligner_create(nmt_aligner **out, const nmt_model *m, int map, const nmt_link_rules *r,
                       int pieces);
void nmt_aligner_free(nmt_aligner *al);

/* Splits the two lines into the model's units, forces the target through
 * the decoder (nmt_align_forced), applies the rules and, for words, groups
 * pieces (nmt_align_words), filling *out. NMT_ERR_NUMERIC when the model's
 * outputs are not finite, NMT_ERR_ARG for a line too long to align. */
int nmt_aligner_pair(nmt_aligner *al, const char *src, const char *tgt, nmt_pair_links *out);

/* nmt_aligner_pair for n pairs at once, by one teacher-forced training
 * forward over them as a batch, which holds every cross-attention map
 * (nmt_workspace_attention_map): a Transformer's. A model whose training
 * pass keeps no maps (the RNN) is aligned pair by pair, as
 * nmt_aligner_pair does. out[k] is pair k's, its links kept until the
 * aligner's next call. The batch's products round otherwise than the
 * decoding steps' do (within 1e-5 of each weight, measured), so a link can
 * move where two weights of a row nearly tie. On a failure *failed is the
 * pair whose line was refused, or -1 for the forward as a whole. */
int nmt_aligner_batch(nmt_aligner *al, const char *const *src, const char *const *tgt, int n,
                      nmt_pair_links *out, int *failed);

#endif
