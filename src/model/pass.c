/* The training pass of nmt/model.h, the same for every architecture: the
 * checks of a batch and a regularizer, the architecture's forward up to the
 * output layer, the loss (model/output.c), and the architecture's backward
 * from the output layer's input gradient. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/workspace.h"
#include "nmt/error.h"

int nmt_workspace_create(nmt_workspace **out, const nmt_model *m, int max_B, int max_src_T,
                         int max_tgt_T)
{
    *out = NULL;
    if (max_B < 1 || max_src_T < 1 || max_tgt_T < 1 || max_B > (1 << 20) ||
        max_src_T > (1 << 16) || max_tgt_T > (1 << 16))
        return nmt_set_error(NMT_ERR_ARG, "bad workspace sizes %d x %d x %d", max_B, max_src_T,
                             max_tgt_T);
    return m->ops->workspace_create(out, m, max_B, max_src_T, max_tgt_T);
}

int nmt_workspace_bytes(const nmt_config *cfg, int max_B, int max_src_T, int max_tgt_T,
                        double *bytes)
{
    const nmt_arch_ops *ops = nmt_arch_ops_of(cfg->arch);
    int rc = nmt_config_check(cfg);
    if (rc)
        return rc;
    if (max_B < 1 || max_src_T < 1 || max_tgt_T < 1 || max_B > (1 << 20) ||
        max_src_T > (1 << 16) || max_tgt_T > (1 << 16))
        return nmt_set_error(NMT_ERR_ARG, "bad workspace sizes %d x %d x %d", max_B, max_src_T,
                             max_tgt_T);
    *bytes = 0;
    rc = ops->workspace_bytes(cfg, max_B, max_src_T, max_tgt_T, bytes);
    if (rc)
        return rc;
    return nmt_workspace_base_init(NULL, ops, nmt_config_output_width(cfg), cfg->tgt_vocab, max_B,
                                   max_src_T, max_tgt_T, bytes);
}

void nmt_workspace_free(nmt_workspace *ws)
{
    if (ws)
        ws->ops->workspace_free(ws);
}

const double *nmt_workspace_sentence_nll(const nmt_workspace *ws)
{
    return ws->nll;
}

double nmt_workspace_objective(const nmt_workspace *ws)
{
    return ws->objective;
}

void nmt_workspace_guided(const nmt_workspace *ws, double *sum, double *rows)
{
    *sum = ws->guided;
    *rows = ws->guided_rows;
}

static int check_batch(const nmt_model *m, const nmt_workspace *ws, const nmt_batch *b)
{
    if (b->B < 1 || b->B > ws->max_B || b->src_T < 1 || b->src_T > ws->max_Ts ||
        b->tgt_T < 1 || b->tgt_T > ws->max_Tt)
        return nmt_set_error(NMT_ERR_ARG, "batch %d x %d x %d exceeds the workspace %d x %d x %d",
                             b->B, b->src_T, b->tgt_T, ws->max_B, ws->max_Ts, ws->max_Tt);
    for (int i = 0; i < b->B; i++)
        if (b->src_len[i] < 1 || b->src_len[i] > b->src_T || b->tgt_len[i] < 1 ||
            b->tgt_len[i] > b->tgt_T)
            return nmt_set_error(NMT_ERR_ARG, "sentence %d of the batch has a bad length", i);
    for (size_t p = 0; p < (size_t)b->src_T * b->B; p++)
        if (b->src[p] < 0 || b->src[p] >= m->cfg.src_vocab)
            return nmt_set_error(NMT_ERR_ARG, "source id %d out of range", (int)b->src[p]);
    for (size_t p = 0; p < (size_t)b->tgt_T * b->B; p++)
        if (b->tgt_in[p] < 0 || b->tgt_in[p] >= m->cfg.tgt_vocab || b->tgt_out[p] < 0 ||
            b->tgt_out[p] >= m->cfg.tgt_vocab)
            return nmt_set_error(NMT_ERR_ARG, "target id out of range");
    return NMT_OK;
}

/* Every dropout rate in [0, 1), the label smoothing in [0, 1]. */
static int check_regularizer(const nmt_regularizer *r)
{
    const float p[6] = {r->dropout_emb, r->dropout_enc, r->dropout_out,
                        r->dropout_residual, r->dropout_att, r->dropout_ff};
    for (int k = 0; k < 6; k++)
        if (!(p[k] >= 0 && p[k] < 1))
            return nmt_set_error(NMT_ERR_ARG, "a dropout rate must be in [0, 1), not %g",
                                 (double)p[k]);
    if (!(r->label_smoothing >= 0 && r->label_smoothing <= 1))
        return nmt_set_error(NMT_ERR_ARG, "label smoothing must be in [0, 1], not %g",
                             (double)r->label_smoothing);
    return NMT_OK;
}

/* Guided alignment trains one head of one layer of the model's maps, by a
 * weight of at least 0. */
static int check_guided(const nmt_model *m, const nmt_regularizer *r)
{
    if (!r->guided)
        return NMT_OK;
    if (!(r->guided_weight >= 0 && r->guided_weight < INFINITY))
        return nmt_set_error(NMT_ERR_ARG, "the guided alignment weight must be 0 or more, "
                             "not %g", (double)r->guided_weight);
    if (r->guided_layer < 0 || r->guided_head < 0)
        return nmt_set_error(NMT_ERR_ARG, "guided alignment trains one head of one layer "
                             "(layer %d, head %d)", r->guided_layer, r->guided_head);
    int map = nmt_model_attention_map_at(m, r->guided_layer, r->guided_head);
    if (map < 0) {
        char why[512];
        snprintf(why, sizeof why, "%s", nmt_error_message());
        return nmt_set_error(map, "guided alignment: %s", why);
    }
    return NMT_OK;
}

/* The forward pass and the loss; with grad, also the output layer's
 * gradient (added into the model's, and its input's handed to the
 * architecture). */
static int forward_pass(nmt_real *loss, const nmt_model *m, nmt_workspace *ws,
                        const nmt_batch *b, const nmt_regularizer *reg, nmt_rng *rng, int grad)
{
    ws->forward_batch = NULL;
    if (loss)
        *loss = (nmt_real)NAN;
    const nmt_regularizer r = reg ? *reg : (nmt_regularizer){0};
    int rc = check_batch(m, ws, b);
    if (rc || (rc = check_regularizer(&r)) || (rc = check_guided(m, &r)))
        return rc;
    int B = b->B, Tt = b->tgt_T;
    ws->B = B, ws->Ts = b->src_T, ws->Tt = Tt;
    for (int t = 0; t < Tt; t++)
        for (int i = 0; i < B; i++)
            ws->tgt_active[(size_t)t * B + i] = t < b->tgt_len[i];
    ws->smoothing = (real)r.label_smoothing;
    ws->guided = ws->guided_rows = 0;
    ws->n_tokens = 0;
    for (int i = 0; i < B; i++)
        ws->n_tokens += b->tgt_len[i];
    if ((rc = m->ops->forward(m, ws, b, &r, rng)))
        return rc;
    memset(ws->nll, 0, (size_t)B * sizeof *ws->nll);
    double objective = 0;
    double total = nmt_output_loss(ws, b, grad, ws->nll, &objective);
    /* the guided term per target token, as the translation loss */
    if (r.guided)
        objective += (double)r.guided_weight * ws->guided;
    ws->objective = objective / ws->n_tokens;
    ws->forward_batch = b;
    if (loss)
        *loss = (nmt_real)(total / ws->n_tokens);
    return NMT_OK;
}

int nmt_forward(nmt_real *loss, const nmt_model *m, nmt_workspace *ws, const nmt_batch *b,
                const nmt_regularizer *reg, nmt_rng *rng)
{
    return forward_pass(loss, m, ws, b, reg, rng, 0);
}

int nmt_backward(nmt_model *m, nmt_workspace *ws, const nmt_batch *b)
{
    if (!m->grads)
        return nmt_set_error(NMT_ERR_ARG, "the model has no gradients (nmt_model_alloc_grads)");
    /* once per forward: the first backward overwrites what a second needs */
    if (!ws->forward_batch)
        return nmt_set_error(NMT_ERR_ARG, "backward without a fresh forward (it runs once per forward)");
    if (b != ws->forward_batch)
        return nmt_set_error(NMT_ERR_ARG, "backward of another batch than the forward's");
    ws->forward_batch = NULL;
    /* the output layer's gradient, by the forward's operations again */
    nmt_output_loss(ws, b, 1, NULL, NULL);
    m->ops->backward(m, ws, b);
    return NMT_OK;
}

int nmt_forward_backward(nmt_real *loss, nmt_model *m, nmt_workspace *ws, const nmt_batch *b,
                         const nmt_regularizer *reg, nmt_rng *rng)
{
    if (loss)
        *loss = (nmt_real)NAN;
    if (!m->grads)
        return nmt_set_error(NMT_ERR_ARG, "the model has no gradients (nmt_model_alloc_grads)");
    int rc = forward_pass(loss, m, ws, b, reg, rng, 1);
    if (rc)
        return rc;
    ws->forward_batch = NULL;
    m->ops->backward(m, ws, b);
    return NMT_OK;
}
