/* The corpora's files of a training run: recorded when it begins (absolute
 * paths, paths relative to the run's folder, prints of their contents) and
 * found again when it resumes, from whatever folder it is resumed in, or
 * where the command line says the data moved to (checked to be the same). */
#ifndef NMT_CLI_TRAIN_DATA_H
#define NMT_CLI_TRAIN_DATA_H

#include "nmt/train.h"

/* The strings the settings' paths point at (owned). Slots: src, tgt,
 * valid_src, valid_tgt. */
typedef struct train_data {
    char *path[4];
    char *from_run[4];
} train_data;

/* A run that begins: the files' prints, and the settings' paths made
 * absolute (regular files only: a pipe is left as given, unprinted). -1
 * after printing why. */
int train_data_record(train_data *d, nmt_train_settings *s);

/* Each file's path as seen from the run's folder `dir`, which exists. */
void train_data_relate(train_data *d, nmt_train_settings *s, const char *dir);

/* A run that resumes from dir, s holding its checkpoint's settings: each
 * file is the one given on the command line (given[k], NULL for none),
 * else the checkpoint's path, else the checkpoint's path from the run's
 * folder (with a note). Each must have the print the checkpoint keeps;
 * the settings then point at the absolute paths found. -1 after printing
 * why. */
int train_data_resume(train_data *d, nmt_train_settings *s, const char *dir,
                      const char *const given[4]);

void train_data_free(train_data *d);

/* Refuses a --batch-log that is one of the files the run reads (the
 * corpora, --spm, --init-from, the run folder of --resume): it is written
 * from the start, and would overwrite it. 0, or 2 after naming both. */
int train_check_batch_log(const nmt_train_settings *s, const char *spm, const char *init_from,
                          const char *resume);

#endif
