/* Internal: the corpora's files of a training run (setup.c). Recorded when
 * it begins (absolute paths, paths relative to the run's folder, prints of
 * their contents) and found again when it resumes, from whatever folder it
 * is resumed in, or where the caller says the data moved to (checked to be
 * the same). The strings the settings' paths point at are the run's
 * (data_path, data_from_run); slots: src, tgt, valid_src, valid_tgt,
 * guided_links (NMT_RUN_FILES). */
#ifndef NMT_RUN_DATA_H
#define NMT_RUN_DATA_H

#include "nmt/train_setup.h"

/* A run that begins: the files' prints, and the settings' paths made
 * absolute (regular files only: a pipe is left as given, unprinted). */
int nmt_run_data_record(nmt_train_run *r);

/* Each file's path as seen from the run's folder `dir`, which exists. */
void nmt_run_data_relate(nmt_train_run *r, const char *dir);

/* A run that resumes from r->dir, r->s holding its checkpoint's settings:
 * each file is the one given (given[k], NULL for none), else the
 * checkpoint's path, else the checkpoint's path from the run's folder
 * (with a note). Each must have the print the checkpoint keeps; the
 * settings then point at the absolute paths found. */
int nmt_run_data_resume(nmt_train_run *r, const char *const given[NMT_RUN_FILES],
                        const nmt_setup_callbacks *cb);

void nmt_run_data_free(nmt_train_run *r);

#endif
