/* A model whatever its architecture: its one parameter allocation and its
 * gradients, the lookup of its tensors, initialisation and attention maps,
 * each handed to the architecture's table of operations (m->ops). Which
 * architectures there are, and making a model of one, is arch.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/arch.h"
#include "nmt/error.h"

nmt_real *nmt_model_swap_params(nmt_model *m, nmt_real *params)
{
    nmt_real *old = m->params;
    m->params = params;
    m->ops->bind(m); /* only pointers move: nothing to allocate */
    return old;
}

void nmt_model_adopt_params(nmt_model *m, nmt_real *params)
{
    free(nmt_model_swap_params(m, params));
}

int nmt_model_alloc_grads(nmt_model *m)
{
    if (m->grads)
        return NMT_OK;
    m->grads = calloc(m->n_params ? m->n_params : 1, sizeof *m->grads);
    if (!m->grads)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for %zu gradients", m->n_params);
    return m->ops->bind(m);
}

void nmt_model_zero_grad(nmt_model *m)
{
    if (m->grads)
        memset(m->grads, 0, m->n_params * sizeof *m->grads);
}

void nmt_model_free(nmt_model *m)
{
    if (!m)
        return;
    m->ops->unbind(m);
    if (m->src_vocab)
        nmt_vocab_free(m->src_vocab);
    if (m->tgt_vocab)
        nmt_vocab_free(m->tgt_vocab);
    nmt_subwords_free(m->subwords);
    free(m->tensors);
    free(m->params);
    free(m->grads);
    free(m);
}

const nmt_tensor_info *nmt_model_tensor(const nmt_model *m, const char *name)
{
    for (int i = 0; i < m->n_tensors; i++)
        if (strcmp(m->tensors[i].name, name) == 0)
            return &m->tensors[i];
    return NULL;
}

/* ---- initial weights ---- */

const char *nmt_init_name(nmt_init_scheme s)
{
    switch (s) {
    case NMT_INIT_UNIFORM: return "uniform";
    case NMT_INIT_ORTHOGONAL: return "orthogonal";
    case NMT_INIT_BAHDANAU: return "bahdanau";
    case NMT_INIT_XAVIER: return "xavier";
    }
    return "?";
}

int nmt_init_parse(const char *s, nmt_init_scheme *out)
{
    static const nmt_init_scheme all[] = {NMT_INIT_UNIFORM, NMT_INIT_ORTHOGONAL,
                                          NMT_INIT_BAHDANAU, NMT_INIT_XAVIER};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (s && strcmp(s, nmt_init_name(all[i])) == 0) {
            *out = all[i];
            return NMT_OK;
        }
    return nmt_set_error(NMT_ERR_ARG,
                         "unknown init '%s' (uniform, orthogonal, bahdanau or xavier)", s ? s : "");
}

int nmt_model_init(nmt_model *m, nmt_init_scheme scheme, double scale, uint64_t seed)
{
    return m->ops->init(m, scheme, scale, seed);
}

/* ---- attention maps ---- */

int nmt_model_attention_maps(const nmt_model *m)
{
    return m->ops->n_maps(&m->cfg);
}

int nmt_model_attention_map_name(const nmt_model *m, int map, char *buf, size_t size)
{
    if (map < 0 || map >= nmt_model_attention_maps(m))
        return nmt_set_error(NMT_ERR_ARG, "the model has no attention map %d", map);
    return m->ops->map_name(&m->cfg, map, buf, size);
}

int nmt_model_default_attention_map(const nmt_model *m)
{
    return nmt_model_attention_maps(m) > 0 ? m->ops->default_map(&m->cfg) : -1;
}

int nmt_model_attention_map_at(const nmt_model *m, int layer, int head)
{
    if (!m->ops->map_at)
        return nmt_set_error(NMT_ERR_ARG, "this model has %s: it has no layers and heads to "
                             "choose from", nmt_model_attention_maps(m) ? "one attention map"
                                                                          : "no attention");
    return m->ops->map_at(&m->cfg, layer, head);
}

int nmt_model_workspace_maps(const nmt_model *m)
{
    return m->ops->workspace_map != NULL && nmt_model_attention_maps(m) > 0;
}

int nmt_workspace_attention_map(const nmt_model *m, const nmt_workspace *ws,
                                const nmt_batch *b, int map, int s, float *out)
{
    if (!m->ops->workspace_map)
        return nmt_set_error(NMT_ERR_ARG, "this model's training pass keeps no attention maps");
    if (s < 0 || s >= b->B || map < 0 || map >= nmt_model_attention_maps(m))
        return nmt_set_error(NMT_ERR_ARG, "no map %d of sentence %d in this batch", map, s);
    return m->ops->workspace_map(ws, map, s, b->tgt_len[s], b->src_len[s], out);
}

int nmt_model_trained_attention_map(const nmt_model *m)
{
    const nmt_trained_head *a = &m->cfg.align;
    if (!a->trained || !m->ops->map_at)
        return -1;
    int map = m->ops->map_at(&m->cfg, a->layer, a->head);
    return map < 0 ? -1 : map;
}
