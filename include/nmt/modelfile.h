/* Model and checkpoint files: safetensors (8-byte little-endian header
 * length, JSON header with __metadata__, raw little-endian F32 data), as
 * docs/DESIGN.md fixes. Writes are atomic: a temporary file in the same folder,
 * fsync, rename, fsync of the folder; a failed write leaves the old file
 * untouched. Loads check the header, names, shapes and the crc32 of the data
 * before trusting a byte. */
#ifndef NMT_MODELFILE_H
#define NMT_MODELFILE_H

#include "nmt/model.h"
#include "nmt/tensors.h"

/* Writes the model (its tensors in nmt_tensor_table order and the design's
 * metadata: format; arch unless the model is an RNN (absent means rnn); the
 * architecture's own settings (the RNN's cell, attention, bidirectional,
 * emb, hidden, att_dim, out_dim; the Transformer's d_model, heads, ff,
 * enc_layers, dec_layers); lowercase, src_vocab, tgt_vocab, crc32, and tied
 * = "true" when the output embeddings are tied, absent otherwise) plus the
 * extras, which
 * follow the model's tensors in the data section, and, for a model that
 * reads subwords, the serialized SentencePiece model as the U8 tensor
 * "subwords" (last, so that every float stays aligned).
 *
 * "crc32" is zlib's CRC-32 of the whole data section (every byte after the
 * JSON header) written as exactly 8 lowercase hexadecimal digits, e.g.
 * "0a1b2c3d"; Python's format(zlib.crc32(data), "08x") gives the same. The
 * reader accepts upper-case hex digits too, nothing else (a decimal value
 * could not be told from hex). Extra metadata keys must not repeat the
 * design's keys; extra tensor names must not repeat the model's (nor be "subwords"). */
int nmt_model_save(const nmt_model *m, const char *path, const nmt_named_tensor *extra,
                   int n_extra, const nmt_meta *meta, int n_meta);

/* A loaded file, kept so a checkpoint's extras can be read after the model. */
typedef struct nmt_file nmt_file;

/* Loads a model file written by nmt or by any writer of the same layout.
 * If file_out is not NULL the parsed file is returned there (free it with
 * nmt_file_free); else it is freed.
 *
 * Nothing is trusted before it is checked, in this order: the 8-byte length
 * against the file's size (and a bound of 100 MB) before any allocation; the
 * JSON; every tensor F32 with end - begin = 4 * prod(shape) and the tensors
 * tiling the data section; "format" = "nmt-1"; the crc32 of the data; the
 * settings (a known arch and none of another architecture's keys, known
 * cell and attention names, "true"/"false", sizes in
 * 1..65536, vocabularies starting with the four specials); every tensor the
 * settings need present with exactly the shape they imply; every tensor F32
 * but "subwords", which when present must be U8 of one dimension, load as a
 * SentencePiece model (see nmt_subwords_load) and have exactly the tokens of
 * both vocabularies as its pieces. Other tensors are
 * allowed (checkpoint extras, read with nmt_file_tensor), except model
 * tensors the settings have no use for (enc.bwd.* in a unidirectional model,
 * att.* without attention, out.W when tied), which betray settings that
 * disagree with the weights; tied (absent: false) needs out_dim = emb. Every refusal is NMT_ERR_FORMAT (NMT_ERR_IO when the file cannot
 * be read) with a message naming the file and what is wrong. */
int nmt_model_load(nmt_model **out, const char *path, nmt_file **file_out);
/* The same from a file image in memory (fuzzing, tests); `name` stands for
 * the path in messages. */
int nmt_model_load_memory(nmt_model **out, const void *buf, size_t size, const char *name,
                          nmt_file **file_out);
/* Whether a metadata key is one of the model's (the design's keys of any
 * architecture), rather than an extra such as a checkpoint's. */
int nmt_file_is_model_key(const char *key);
/* A metadata value, or NULL. */
const char *nmt_file_meta(const nmt_file *f, const char *key);
/* A tensor's F32 data, or NULL; fills ndim and shape (unused dimensions 0)
 * when not NULL. Tensors of more than NMT_MAX_NDIM dimensions are not
 * returned. */
const float *nmt_file_tensor(const nmt_file *f, const char *name, int *ndim,
                             int shape[NMT_MAX_NDIM]);
/* A U8 tensor's bytes ("subwords") and their number, or NULL. */
const unsigned char *nmt_file_bytes(const nmt_file *f, const char *name, size_t *n);
/* Listing (for `nmt info`): the tensors in header order and the metadata. */
int nmt_file_n_tensors(const nmt_file *f);
const char *nmt_file_tensor_name(const nmt_file *f, int i);
int nmt_file_n_meta(const nmt_file *f);
const char *nmt_file_meta_key(const nmt_file *f, int i);
/* The file's size in bytes. */
unsigned long long nmt_file_size(const nmt_file *f);
void nmt_file_free(nmt_file *f);

#endif
