/* nmt align without a model: a links file scored against gold (--links
 * with --gold), or two directions' links symmetrised (--symmetrize with
 * --reverse-links) and written, and scored too with --gold. And the line
 * of scores, which the model's alignments print as well. */
#ifndef NMT_CLI_ALIGN_LINKS_H
#define NMT_CLI_ALIGN_LINKS_H

#include <stdio.h>

#include "align/cmd_align_args.h"
#include "nmt/align.h"

/* The scores of alignments against gold: "AER a  precision p  recall r  (N
 * pairs, A model links, S gold links, X in both; possible: P links, Y in
 * both)", without a newline. S counts the sure links, P the only possible
 * ones (so |P| of the formula is S + P), X = |A∩S| and Y the links of A on
 * a possible link that is not sure (so |A∩P| = X + Y). */
void align_put_aer(FILE *f, const nmt_aer *aer);

/* Runs nmt align with --links; the exit status. */
int align_links_run(const align_args *a);

#endif
