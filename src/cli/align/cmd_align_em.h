/* nmt align --em: word links without a model, from IBM Model 2 with a
 * diagonal prior trained by EM on the pairs themselves (nmt/ibm2.h),
 * written as Pharaoh lines and scored with --gold. */
#ifndef NMT_CLI_ALIGN_EM_H
#define NMT_CLI_ALIGN_EM_H

#include "align/cmd_align_args.h"

/* Runs nmt align --em; the exit status. */
int align_em_run(const align_args *a);

#endif
