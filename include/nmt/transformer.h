/* The Transformer encoder-decoder of docs/DESIGN.md, "The Transformer":
 * pre-norm layers of multi-head self-attention (and, in the decoder,
 * cross-attention) and a position-wise feed-forward network, sinusoidal
 * positions. A model is this architecture when nmt_config.arch is
 * NMT_ARCH_TRANSFORMER. */
#ifndef NMT_TRANSFORMER_H
#define NMT_TRANSFORMER_H

typedef struct nmt_transformer_config {
    int d_model;     /* d: the width of every layer's input and output */
    int heads;       /* h: attention heads, each of d / h (h divides d) */
    int ff;          /* F: the feed-forward network's inner width */
    int enc_layers;  /* L_e */
    int dec_layers;  /* L_d */
    /* Variants (Nguyen and Salazar 2019), 0 for the plain model: */
    int norm;        /* NMT_TF_NORM_LAYER or NMT_TF_NORM_SCALE (ScaleNorm) */
    int fixnorm;     /* 1: embedding rows read at unit length (FixNorm) */
} nmt_transformer_config;

/* What every norm of the model is: layer norm, or ScaleNorm's
 * g * u / max(||u||, eps) with one scalar gain. */
enum { NMT_TF_NORM_LAYER = 0, NMT_TF_NORM_SCALE = 1 };

#endif
