/* What training holds in memory (nmt/train_setup.h, nmt/train.h): the
 * estimate that refuses a run that would not fit, made from the largest
 * batch the sizes allow, and the need of a run under way, made from the
 * largest batch its plan really has. The workspace is allocated for the
 * former, but a batch writes only its own rows of each buffer, so the
 * pages the process touches follow the latter. */
#include <unistd.h>

#include "nmt/error.h"
#include "nmt/train_setup.h"
#include "train/trainer.h"

static int weights_bytes(const nmt_config *cfg, nmt_optim_kind opt, double *bytes)
{
    size_t n_params;
    int rc = nmt_tensor_table(cfg, NULL, 0, &n_params);
    if (rc < 0)
        return rc;
    int moments = 0;
    while (nmt_optim_moment_name(opt, moments))
        moments++;
    /* the parameters, their gradients and the moments */
    *bytes = (double)sizeof(float) * (double)n_params * (2 + moments);
    return NMT_OK;
}

int nmt_train_memory_estimate(const nmt_config *cfg, nmt_optim_kind opt, int B, int T,
                              double *bytes)
{
    double weights, workspace;
    int rc = weights_bytes(cfg, opt, &weights);
    if (!rc)
        rc = nmt_workspace_bytes(cfg, B, T, T, &workspace);
    /* validation's decoder, far smaller, is left out */
    if (!rc)
        *bytes = weights + workspace;
    return rc;
}

int nmt_train_check_memory(const nmt_config *cfg, nmt_optim_kind opt, int B, int T)
{
    double need;
    int rc = nmt_train_memory_estimate(cfg, opt, B, T, &need);
    if (rc)
        return rc;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    double have = pages > 0 && page > 0 ? (double)pages * (double)page : 8.0 * (1 << 30);
    double limit = have < 8.0 * (1 << 30) ? have : 8.0 * (1 << 30);
    const nmt_arch_recipe *recipe = nmt_arch_recipe_of(cfg->arch);
    if (need > limit)
        return nmt_set_error(NMT_ERR_NOMEM, "these sizes would need about %.1f GiB (more than "
                             "%.1f GiB): lower %s, --batch-size, --max-len or --max-vocab",
                             need / (1 << 30), limit / (1 << 30),
                             recipe ? recipe->sizes : "the model's sizes");
    return NMT_OK;
}

int nmt_trainer_memory_need(const nmt_trainer *t, double *weights, double *activations)
{
    *weights = *activations = 0;
    int rc = weights_bytes(&t->m->cfg, t->s.optimizer, weights);
    const nmt_batch_plan *p = &t->plan;
    const nmt_corpus *c = t->train; /* a streamed corpus's: the current block */
    for (size_t k = 0; !rc && c && k < p->n_batches; k++) {
        int Ts = 1, Tt = 1;
        for (size_t i = p->start[k]; i < p->start[k + 1]; i++) {
            size_t q = p->index[i];
            int s = (int)(c->src_off[q + 1] - c->src_off[q]) + 1;
            int u = (int)(c->tgt_off[q + 1] - c->tgt_off[q]) + 1;
            Ts = s > Ts ? s : Ts;
            Tt = u > Tt ? u : Tt;
        }
        double bytes;
        rc = nmt_workspace_bytes(&t->m->cfg, (int)(p->start[k + 1] - p->start[k]), Ts, Tt, &bytes);
        if (!rc && bytes > *activations)
            *activations = bytes;
    }
    return rc;
}
