/* Model and checkpoint files: safetensors (8-byte little-endian header
 * length, JSON header with __metadata__, raw little-endian F32 data), as
 * DESIGN.md fixes. Writes are atomic: a temporary file in the same folder,
 * fsync, rename, fsync of the folder; a failed write leaves the old file
 * untouched. Loads check the header, names, shapes and the crc32 of the data
 * before trusting a byte. */
#ifndef NMT_MODELFILE_H
#define NMT_MODELFILE_H

#include "nmt/model.h"

/* Extra tensors a checkpoint adds (optimizer moments "adam.m.NAME", ...). */
typedef struct nmt_named_tensor {
    const char *name;
    int ndim;
    int shape[2];
    const float *data;
} nmt_named_tensor;

/* Extra metadata a checkpoint adds (step, epoch, rng state, settings...). */
typedef struct nmt_meta {
    const char *key;
    const char *value;
} nmt_meta;

/* Writes the model (its tensors and the design's metadata: format, cell,
 * attention, bidirectional, emb, hidden, att_dim, out_dim, lowercase,
 * src_vocab, tgt_vocab, crc32) plus the extras. */
int nmt_model_save(const nmt_model *m, const char *path, const nmt_named_tensor *extra,
                   int n_extra, const nmt_meta *meta, int n_meta);

/* A loaded file, kept so a checkpoint's extras can be read after the model. */
typedef struct nmt_file nmt_file;

/* Loads a model file written by nmt or by any writer of the same layout.
 * If file_out is not NULL the parsed file is returned there (free it with
 * nmt_file_free); else it is freed. */
int nmt_model_load(nmt_model **out, const char *path, nmt_file **file_out);
/* A metadata value, or NULL. */
const char *nmt_file_meta(const nmt_file *f, const char *key);
/* A tensor's F32 data, or NULL; fills ndim and shape when not NULL. */
const float *nmt_file_tensor(const nmt_file *f, const char *name, int *ndim, int shape[2]);
void nmt_file_free(nmt_file *f);

#endif
