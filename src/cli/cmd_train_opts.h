/* nmt train's command line: its options parsed into a request for the
 * library's set-up of a run (nmt/train_setup.h). */
#ifndef NMT_CLI_TRAIN_OPTS_H
#define NMT_CLI_TRAIN_OPTS_H

#include "nmt/train_setup.h"

/* Parses argv into *q: 0, or -1 with *exit_code set (2 after naming a bad
 * option or combination, 0 after --help). */
int train_parse_args(nmt_train_request *q, int argc, char **argv, int *exit_code);
/* nmt train --help's text, on standard output. */
void train_help(void);

#endif
