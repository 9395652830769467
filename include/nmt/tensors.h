/* What a model file is written from: named tensors and metadata entries.
 * Both the model files (nmt/modelfile.h) and the container below them
 * (src/io/safetensors.c) use these, so they live below both. */
#ifndef NMT_TENSORS_H
#define NMT_TENSORS_H

/* The most dimensions a model's tensor has (nmt writes files of these; it
 * reads any safetensors file, whatever its tensors' dimensions). */
#define NMT_MAX_NDIM 4

/* A tensor to write: a model's, or one a checkpoint adds (optimizer
 * moments "adam.m.NAME", ...). */
typedef struct nmt_named_tensor {
    const char *name;
    int ndim;
    int shape[NMT_MAX_NDIM];
    const float *data;
    const unsigned char *bytes; /* instead of data: a U8 tensor of shape[0]
                                 * bytes, ndim 1 (the model's "subwords") */
} nmt_named_tensor;

/* A metadata entry (a model's settings, or what a checkpoint adds: step,
 * epoch, rng state, training settings...). */
typedef struct nmt_meta {
    const char *key;
    const char *value;
} nmt_meta;

#endif
