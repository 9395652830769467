/* Internal: guided alignment's part of setting up a run (setup.c calls it;
 * docs/DESIGN.md, "Guided alignment"): what a run with word links may be,
 * the head it trains (the model's cfg.align), and its links read and
 * checked. */
#ifndef NMT_TRAIN_GUIDED_H
#define NMT_TRAIN_GUIDED_H

#include "nmt/train_setup.h"

/* Before the corpora are read: a run with links reads its corpus whole
 * and from files (the links are checked against each line). NMT_OK, or
 * NMT_ERR_ARG with the reason. */
int nmt_guided_check(const nmt_train_run *r);

/* Once the model and the corpora are read: a fresh run's head (the
 * request's layer, or the rule's, and head) checked against the model's
 * maps and made the model's cfg.align; a resumed run's from its
 * checkpoint. Then the links, read with the training corpus's files into
 * r->links (a resumed run's checked to be the ones it began with). */
int nmt_guided_setup(nmt_train_run *r, const nmt_train_request *q);

#endif
