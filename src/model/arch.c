/* The architectures of this build (model/arch.h) and what a
 * configuration's architecture decides before there is a model: whether the
 * settings fit, their names and description, their defaults and what a run
 * of it takes (its recipe), the table of tensors, and creating a model of
 * them. model.c holds what a model does once made, so
 * that the architectures, which use it, never call back into this file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/arch.h"
#include "nmt/error.h"

/* Every architecture of this build (nmt_arch_ops_of finds one). The first is
 * the default of a fresh run: the Transformer, which beat the RNN on
 * Multi30k at 30 minutes and at 2 hours, both directions
 * (docs/experiments/transformer-search.md). Its folder may be left out of a
 * build (its meson.build says NMT_HAVE_TRANSFORMER); the RNN is then the
 * default. */
#ifndef NMT_HAVE_TRANSFORMER
#define NMT_HAVE_TRANSFORMER 0
#endif
const nmt_arch_ops *const nmt_arch_all[] = {
#if NMT_HAVE_TRANSFORMER
    &nmt_transformer_ops,
#endif
    &nmt_rnn_ops,
    NULL,
};

const nmt_arch_ops *nmt_arch_ops_of(nmt_arch a)
{
    for (int i = 0; nmt_arch_all[i]; i++)
        if (nmt_arch_all[i]->arch == a)
            return nmt_arch_all[i];
    return NULL;
}

const nmt_arch_ops *nmt_arch_implicit(void)
{
    for (int i = 0; nmt_arch_all[i]; i++)
        if (nmt_arch_all[i]->implicit)
            return nmt_arch_all[i];
    return NULL;
}

void nmt_config_default(nmt_config *c)
{
    memset(c, 0, sizeof *c);
    c->arch = nmt_arch_all[0]->arch;
    for (int i = 0; nmt_arch_all[i]; i++)
        nmt_arch_all[i]->defaults(c);
}

const nmt_arch_recipe *nmt_arch_recipe_of(nmt_arch a)
{
    const nmt_arch_ops *ops = nmt_arch_ops_of(a);
    return ops ? ops->recipe : NULL;
}

const char *nmt_arch_dropout_site(nmt_arch a, int i)
{
    const nmt_arch_recipe *r = nmt_arch_recipe_of(a);
    for (int k = 0; r && r->dropout_sites[k]; k++)
        if (k == i)
            return r->dropout_sites[k];
    return NULL;
}

int nmt_arch_has_dropout(nmt_arch a, const char *site)
{
    const char *s;
    for (int k = 0; (s = nmt_arch_dropout_site(a, k)); k++)
        if (!strcmp(s, site))
            return 1;
    return 0;
}

nmt_init_scheme nmt_init_default(nmt_arch a)
{
    const nmt_arch_recipe *r = nmt_arch_recipe_of(a);
    return r ? r->init : NMT_INIT_UNIFORM;
}

int nmt_arch_has_init(nmt_arch a, nmt_init_scheme s)
{
    const nmt_arch_recipe *r = nmt_arch_recipe_of(a);
    return r && (unsigned)s < 32 && (r->inits >> (unsigned)s & 1u);
}

const char *nmt_arch_name(nmt_arch a)
{
    switch (a) {
    case NMT_ARCH_RNN: return "rnn";
    case NMT_ARCH_TRANSFORMER: return "transformer";
    }
    return "?";
}

int nmt_arch_parse(const char *s, nmt_arch *out)
{
    static const nmt_arch all[] = {NMT_ARCH_RNN, NMT_ARCH_TRANSFORMER};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (s && strcmp(s, nmt_arch_name(all[i])) == 0) {
            *out = all[i];
            return NMT_OK;
        }
    return nmt_set_error(NMT_ERR_ARG, "unknown architecture '%s' (rnn or transformer)",
                         s ? s : "");
}

int nmt_arch_available(nmt_arch a)
{
    return nmt_arch_ops_of(a) != NULL;
}

/* A head trained toward word links must be one of the model's: a layer
 * and a head (not a mean) of maps that have them. */
static int check_trained_head(const nmt_config *c, const nmt_arch_ops *ops)
{
    const nmt_trained_head *a = &c->align;
    if (!a->trained)
        return a->layer || a->head || a->shift
                   ? nmt_set_error(NMT_ERR_ARG, "an aligned head's layer, head and shift "
                                   "without a head trained to align")
                   : NMT_OK;
    if (a->trained != 1 || (a->shift != 0 && a->shift != 1))
        return nmt_set_error(NMT_ERR_ARG, "trained %d and shift %d (each 0 or 1)", a->trained,
                             a->shift);
    if (!ops->map_at)
        return nmt_set_error(NMT_ERR_ARG, "a head trained to align needs attention of layers "
                             "and heads, which the %s has not", ops->name);
    if (a->layer < 0 || a->head < 0)
        return nmt_set_error(NMT_ERR_ARG, "layer %d, head %d: the head trained to align is "
                             "one head of one layer, each from 0", a->layer, a->head);
    int map = ops->map_at(c, a->layer, a->head);
    return map < 0 ? map : NMT_OK;
}

int nmt_config_check(const nmt_config *c)
{
    const nmt_arch_ops *ops = nmt_arch_ops_of(c->arch);
    if (!ops)
        return nmt_set_error(NMT_ERR_ARG, "architecture %s is not in this build of nmt",
                             nmt_arch_name(c->arch));
    int rc = ops->check(c);
    if (rc)
        return rc;
    if (c->src_vocab < NMT_N_SPECIAL || c->tgt_vocab < NMT_N_SPECIAL || c->src_vocab > (1 << 24) ||
        c->tgt_vocab > (1 << 24))
        return nmt_set_error(NMT_ERR_ARG, "vocabulary sizes must be between %d and %d",
                             NMT_N_SPECIAL, 1 << 24);
    return check_trained_head(c, ops);
}

int nmt_config_describe(const nmt_config *c, char *buf, size_t size)
{
    const nmt_arch_ops *ops = nmt_arch_ops_of(c->arch);
    return ops ? ops->describe(c, buf, size) : snprintf(buf, size, "%s", nmt_arch_name(c->arch));
}

int nmt_config_setting(const nmt_config *c, int i, const char **name, char *value, size_t size)
{
    const nmt_arch_ops *ops = nmt_arch_ops_of(c->arch);
    return ops && i >= 0 ? ops->setting(c, i, name, value, size) : 0;
}

int nmt_config_train_meta(const nmt_config *c, nmt_meta *kv, int max, char *buf, size_t size)
{
    const nmt_arch_ops *ops = nmt_arch_ops_of(c->arch);
    return ops && ops->train_meta ? ops->train_meta(c, kv, max, buf, size) : 0;
}

int nmt_config_output_width(const nmt_config *c)
{
    const nmt_arch_ops *ops = nmt_arch_ops_of(c->arch);
    return ops ? ops->output_width(c) : 0;
}

int nmt_tensor_table(const nmt_config *cfg, nmt_tensor_info *table, int max, size_t *total)
{
    int rc = nmt_config_check(cfg);
    if (rc)
        return rc;
    return nmt_arch_ops_of(cfg->arch)->tensor_table(cfg, table, max, total);
}

int nmt_model_create(nmt_model **out, const nmt_config *cfg, nmt_vocab *src_vocab,
                     nmt_vocab *tgt_vocab)
{
    *out = NULL;
    nmt_config c = *cfg;
    if (src_vocab)
        c.src_vocab = nmt_vocab_size(src_vocab);
    if (tgt_vocab)
        c.tgt_vocab = nmt_vocab_size(tgt_vocab);
    c.tied = c.tied != 0;
    c.joint_vocab = c.joint_vocab != 0;
    const nmt_arch_ops *ops = nmt_arch_ops_of(c.arch);
    if (ops && ops->normalize)
        ops->normalize(&c);
    int rc = nmt_config_check(&c);
    if (rc)
        return rc;
    /* one table embeds both sides' ids: an id must name one token on both */
    for (int id = 0; c.joint_vocab && src_vocab && tgt_vocab && id < c.src_vocab; id++)
        if (strcmp(nmt_vocab_token(src_vocab, id), nmt_vocab_token(tgt_vocab, id)))
            return nmt_set_error(NMT_ERR_ARG, "a joint vocabulary is one list for both sides, "
                                 "but id %d is '%s' on the source side and '%s' on the target "
                                 "side", id, nmt_vocab_token(src_vocab, id),
                                 nmt_vocab_token(tgt_vocab, id));
    nmt_model *m = calloc(1, sizeof *m);
    if (!m)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for the model");
    m->cfg = c;
    m->ops = ops;
    int n = ops->tensor_table(&c, NULL, 0, &m->n_params);
    m->tensors = calloc((size_t)n, sizeof *m->tensors);
    m->params = calloc(m->n_params ? m->n_params : 1, sizeof *m->params);
    if (!m->tensors || !m->params) {
        size_t np = m->n_params;
        free(m->tensors);
        free(m->params);
        free(m);
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for %zu parameters", np);
    }
    m->n_tensors = ops->tensor_table(&c, m->tensors, n, &m->n_params);
    if ((rc = ops->bind(m))) {
        free(m->tensors);
        free(m->params);
        free(m);
        return rc;
    }
    m->src_vocab = src_vocab;
    m->tgt_vocab = tgt_vocab;
    *out = m;
    return NMT_OK;
}

