/* Internal: writing and reading the metadata of checkpoints (the training
 * settings, train.*, in settings.c; the loop's state, state.*, and the
 * best model's, best.*, in checkpoint.c). Numbers are written so that they
 * read back to the same bits (%.17g for doubles, %.9g for floats, the rng
 * state in hex); every value read is checked, since metadata is not covered
 * by the crc32. */
#ifndef NMT_CKPT_META_H
#define NMT_CKPT_META_H

#include <stddef.h>
#include <stdint.h>

#include "nmt/modelfile.h"
#include "nmt/tensors.h"
#include "nmt/train.h"

/* Entries into meta[max], their strings into buf[cap]; overflow is set
 * (and the entry dropped) when either is full. Keys are not copied: they
 * must outlive the writer (string literals). */
typedef struct nmt_ckpt_writer {
    nmt_meta *meta;
    int n, max;
    char *buf;
    size_t used, cap;
    int overflow;
} nmt_ckpt_writer;

void nmt_ckpt_put(nmt_ckpt_writer *w, const char *key, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The training settings (settings.c): what nmt_train_settings_to_meta
 * writes, here into a checkpoint's metadata. */
void nmt_train_settings_put(nmt_ckpt_writer *w, const nmt_train_settings *s);

/* The first refusal is kept in rc (NMT_ERR_FORMAT, with a message naming
 * the key); later reads return 0 and change nothing. */
typedef struct nmt_ckpt_reader {
    const nmt_file *f;
    int rc;
} nmt_ckpt_reader;

/* A key that must be there (absent: "not a resumable checkpoint"). */
const char *nmt_ckpt_get(nmt_ckpt_reader *r, const char *key);
/* Whether a key is there: those added after checkpoints were first written
 * are read only when present, and absent mean the behaviour before them. */
int nmt_ckpt_has(const nmt_ckpt_reader *r, const char *key);
void nmt_ckpt_bad(nmt_ckpt_reader *r, const char *key, const char *v);
int64_t nmt_ckpt_get_i64(nmt_ckpt_reader *r, const char *key, int64_t min, int64_t max);
int nmt_ckpt_get_int(nmt_ckpt_reader *r, const char *key, int min, int max);
double nmt_ckpt_get_double(nmt_ckpt_reader *r, const char *key, int allow_inf);
/* A double in [min, max) (a value the command line would refuse is
 * refused here too). */
double nmt_ckpt_get_double_in(nmt_ckpt_reader *r, const char *key, double min, double max);
uint64_t nmt_ckpt_get_u64(nmt_ckpt_reader *r, const char *key);
/* Exactly 16 hexadecimal digits. */
uint64_t nmt_ckpt_get_hex64(nmt_ckpt_reader *r, const char *key);
/* A path; the empty string is NULL (none). */
const char *nmt_ckpt_get_path(nmt_ckpt_reader *r, const char *key);

#endif
