/* Attention forced through a given pair: the decoder reads the target one
 * token at a time, as in training, and each step's attention weights are
 * kept (nmt/align.h, "attention from a model"). */
#include "nmt/align.h"

#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"

int nmt_align_forced(const nmt_model *m, nmt_infer *st, const int32_t *src, int n_src,
                     const int32_t *tgt, int n_tgt, float *att)
{
    if (nmt_model_attention_maps(m) == 0)
        return nmt_set_error(NMT_ERR_ARG,
                             "this model has no attention (attention=none): it has no alignments");
    if (n_src < 1 || n_tgt < 1)
        return nmt_set_error(NMT_ERR_ARG, "an alignment needs at least \"</s>\" on each side");
    int rc = nmt_infer_encode(m, st, src, &n_src, 1, n_src);
    if (rc)
        return rc;
    /* The log-probabilities are not needed, but a model whose outputs are
     * not finite is broken even where its attention is not (3e38 in out.W):
     * refused, as the decoder refuses it. */
    int32_t prev = NMT_BOS;
    for (int i = 0; i < n_tgt && !rc; i++) {
        const float *lse;
        rc = nmt_infer_step_logits(m, st, &prev, att + (size_t)i * n_src, &lse)
                 ? nmt_infer_check_finite(lse, 1)
                 : NMT_ERR_ARG;
        prev = tgt[i];
    }
    return rc;
}

int nmt_align_forced_maps(const nmt_model *m, nmt_infer *st, const int32_t *src, int n_src,
                          const int32_t *tgt, int n_tgt, float *att)
{
    int n_maps = nmt_model_attention_maps(m), kept = nmt_infer_attention_map(st);
    if (n_maps == 0 || n_tgt < 1 || n_src < 1)
        return nmt_align_forced(m, st, src, n_src, tgt, n_tgt, att); /* its refusals */
    /* the steps write [n_tgt][n_maps][n_src]; turned to [n_maps][n_tgt][n_src] */
    size_t plane = (size_t)n_tgt * n_src;
    float *steps = malloc((size_t)n_maps * plane * sizeof *steps);
    if (!steps)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for %d attention maps", n_maps);
    int rc = nmt_infer_set_attention_map(st, NMT_MAP_EVERY);
    if (!rc)
        rc = nmt_infer_encode(m, st, src, &n_src, 1, n_src);
    int32_t prev = NMT_BOS;
    for (int i = 0; i < n_tgt && !rc; i++) {
        const float *lse;
        rc = nmt_infer_step_logits(m, st, &prev, steps + (size_t)i * n_maps * n_src, &lse)
                 ? nmt_infer_check_finite(lse, 1)
                 : NMT_ERR_ARG;
        prev = tgt[i];
    }
    nmt_infer_set_attention_map(st, kept);
    for (int k = 0; k < n_maps && !rc; k++)
        for (int i = 0; i < n_tgt; i++)
            memcpy(att + k * plane + (size_t)i * n_src, steps + ((size_t)i * n_maps + k) * n_src,
                   (size_t)n_src * sizeof *att);
    free(steps);
    return rc;
}
