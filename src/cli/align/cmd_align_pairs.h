/* nmt align's links of given pairs (--tgt, pharaoh or --gold's scores
 * alone): each pair through the library's one path (nmt_aligner_pair), the
 * pairs split over --threads threads, the output in input order. */
#ifndef NMT_CLI_ALIGN_PAIRS_H
#define NMT_CLI_ALIGN_PAIRS_H

#include <stdio.h>

#include "align/cmd_align_args.h"
#include "align/cmd_align_input.h"
#include "nmt/extract.h"

/* Aligns every chosen pair of in with model m's map under rules: writes
 * each pair's Pharaoh line to out (when not NULL), adds its links against
 * the gold to *aer (when not NULL) and counts <unk> units (unk, units: source
 * and target). 0, or -1 after saying what is wrong on stderr. */
int align_pairs_run(const align_args *a, const inputs *in, const nmt_model *m, int map,
                    const nmt_link_rules *rules, FILE *out, nmt_aer *aer, size_t unk[2],
                    size_t units[2]);

#endif
