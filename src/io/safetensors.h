/* Internal: the safetensors container, read strictly and written atomically.
 *
 * Layout: an 8-byte little-endian header length N, N bytes of JSON, then the
 * data section. The JSON is one object: "__metadata__" maps keys to string
 * values; every other key is a tensor {"dtype": "F32", "shape": [..],
 * "data_offsets": [begin, end]} with byte offsets relative to the data
 * section. A file is accepted only if the header fits in the file, the JSON
 * parses, every tensor is F32 or U8 with end - begin == (4 or 1) * prod(shape),
 * every F32 tensor begins at a multiple of 4 bytes (so that it can be read in
 * place as floats; writers put byte tensors last, as the reference library
 * does by ordering tensors by the size of their elements), and the tensors
 * tile the data section exactly (no overlap, no gap, nothing after), which is
 * what the reference safetensors library demands as well. Only model files
 * use this; which tensor may be U8 is modelfile.c's to say.
 *
 * Only model files use this, but the reader is written for hostile input:
 * every length is checked against what remains before it is used, sizes are
 * multiplied with overflow checks, the JSON nesting depth and the element
 * counts are bounded, and nothing is allocated from a length that has not been
 * checked against the file's real size. */
#ifndef NMT_SAFETENSORS_H
#define NMT_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "nmt/tensors.h"

/* A header longer than this is refused before anything is allocated (the
 * reference library uses the same bound). A model with two 100k-token
 * vocabularies needs about 2 MB. */
#define ST_MAX_HEADER 100000000u
#define ST_MAX_NDIM 8

enum { ST_F32 = 0, ST_U8 = 1 };

typedef struct st_tensor {
    char *name;
    int dtype;          /* ST_F32 or ST_U8 */
    int ndim;
    int64_t shape[ST_MAX_NDIM];
    size_t begin, end;  /* bytes, relative to the data section, or with
                         * nmt_st_read_some to data */
    int held;           /* its bytes are in data (nmt_st_read_some may skip it) */
} st_tensor;

typedef struct st_kv {
    char *key, *value;
} st_kv;

typedef struct st_file {
    st_tensor *tensors;  /* in header order */
    int n_tensors;
    st_kv *meta;         /* "__metadata__", in header order */
    int n_meta;
    uint64_t file_size;
    size_t header_len;   /* N: the JSON's bytes, padding included */
    size_t data_size;    /* the data section's, as stored */
    unsigned char *data; /* the held tensors' bytes, malloc'ed: every F32
                          * tensor aligned for floats */
    size_t held_size;    /* data's bytes: data_size unless nmt_st_read_some
                          * skipped some tensors (or padded F32 ones to 4) */
    uint32_t data_crc;   /* CRC-32 of the data section as stored */
} st_file;

/* Reads and validates a whole file. `path` names it in messages. On failure
 * *f is left empty (nmt_st_free is still safe). */
int nmt_st_read(st_file *f, const char *path);
/* nmt_st_read, holding the bytes of only the tensors keep(name, ctx) accepts.
 * The others are checked alike (header, tiling, and the CRC, which covers
 * the whole data section as stored) but their bytes are read past, not
 * kept, and nmt_st_find does not find them: a model loaded to translate needs
 * its parameters, not the optimizer's moments beside them in a checkpoint
 * (two thirds of an Adam checkpoint). keep NULL: nmt_st_read. */
int nmt_st_read_some(st_file *f, const char *path, int (*keep)(const char *name, void *ctx),
                 void *ctx);
/* The same on a file already in memory (for fuzzing); `name` is used in
 * messages in place of a path. The data is copied out of buf. */
int nmt_st_parse(st_file *f, const unsigned char *buf, size_t size, const char *name);
void nmt_st_free(st_file *f);

const st_tensor *nmt_st_find(const st_file *f, const char *name);
const char *nmt_st_meta(const st_file *f, const char *key);

/* zlib's CRC-32 over any length (zlib takes at most 4 GiB per call). */
uint32_t nmt_st_crc32(uint32_t crc, const void *data, size_t n);

/* Writes tensors (ndim 0..2, data in host floats, stored little-endian; or
 * U8 bytes, ndim 1, when `bytes` is set) and metadata to `path` atomically.
 * A U8 tensor whose size is not a multiple of 4 must come after every F32
 * one (NMT_ERR_ARG otherwise), so that floats stay aligned. The file goes
 * to a temporary ".NAME.tmp.PID" in the same folder, written in full, fsync'ed, closed, renamed over `path`, and the
 * folder fsync'ed. If crc_key is not NULL, the metadata also gets
 * crc_key = the CRC-32 of the data section as 8 lowercase hex digits. On
 * any failure the temporary file is removed, an existing `path` is left as it
 * was, and NMT_ERR_IO is returned with a message naming `path` and the
 * system's reason. Tensor names and metadata keys must be unique. */
int nmt_st_write(const char *path, const nmt_named_tensor *tensors, int n_tensors,
             const nmt_meta *meta, int n_meta, const char *crc_key);

/* Appends s to a JSON string body with every character escaped that JSON
 * requires (quote, backslash, controls as \n \t ... or \u00XX); UTF-8 is
 * passed through. Exposed for the tests. Returns a malloc'ed string with the
 * quotes, or NULL on allocation failure. */
char *nmt_st_json_quote(const char *s);

#endif
