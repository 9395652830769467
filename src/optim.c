/* Optimizers (sgd, adam, adadelta) and global-norm gradient clipping over the
 * one flat parameter allocation. Moments share the parameters' layout, so one
 * loop over n floats updates every tensor. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"
#include "nmt/train.h"

static const char *const optim_names[] = {"sgd", "adam", "adadelta"};

const char *nmt_optim_name(nmt_optim_kind k)
{
    return (unsigned)k < 3 ? optim_names[k] : "?";
}

int nmt_optim_parse(const char *s, nmt_optim_kind *out)
{
    for (int i = 0; i < 3; i++)
        if (s && !strcmp(s, optim_names[i])) {
            *out = (nmt_optim_kind)i;
            return NMT_OK;
        }
    return nmt_set_error(NMT_ERR_ARG, "unknown optimizer '%s' (expected sgd, adam or adadelta)",
                         s ? s : "");
}

double nmt_optim_default_lr(nmt_optim_kind k)
{
    return k == NMT_OPTIM_ADAM ? 1e-3 : 1.0;
}

const char *nmt_optim_moment_name(nmt_optim_kind k, int i)
{
    static const char *const adam[] = {"adam.m", "adam.v"};
    static const char *const adadelta[] = {"adadelta.sq_avg", "adadelta.acc_delta"};
    if (i < 0 || i > 1)
        return NULL;
    if (k == NMT_OPTIM_ADAM)
        return adam[i];
    if (k == NMT_OPTIM_ADADELTA)
        return adadelta[i];
    return NULL;
}

int nmt_optim_init(nmt_optim *o, nmt_optim_kind kind, size_t n, double lr)
{
    memset(o, 0, sizeof *o);
    if ((unsigned)kind > NMT_OPTIM_ADADELTA)
        return nmt_set_error(NMT_ERR_ARG, "unknown optimizer %d", (int)kind);
    o->kind = kind;
    o->n = n;
    o->lr = lr;
    o->beta1 = 0.9;
    o->beta2 = 0.999;
    o->eps = 1e-8;
    o->rho = 0.95;
    o->ada_eps = 1e-6;
    o->n_moments = kind == NMT_OPTIM_SGD ? 0 : 2;
    for (int i = 0; i < o->n_moments; i++) {
        o->moment[i] = calloc(n ? n : 1, sizeof(float));
        if (!o->moment[i]) {
            nmt_optim_free(o);
            return nmt_set_error(NMT_ERR_NOMEM, "out of memory for the optimizer's moments "
                                 "(%zu floats)", n);
        }
    }
    return NMT_OK;
}

void nmt_optim_free(nmt_optim *o)
{
    for (int i = 0; i < 2; i++) {
        free(o->moment[i]);
        o->moment[i] = NULL;
    }
    o->n_moments = 0;
}

static void sgd_step(float *p, const float *g, size_t n, float lr)
{
    for (size_t i = 0; i < n; i++)
        p[i] -= lr * g[i];
}

/* The bias corrections are computed once per step in double; the per-element
 * work stays in float like the parameters. */
static void adam_step(nmt_optim *o, float *p, const float *g)
{
    o->t++;
    double bc1 = 1.0 - pow(o->beta1, (double)o->t);
    double bc2 = 1.0 - pow(o->beta2, (double)o->t);
    float step_size = (float)(o->lr / bc1);
    float inv_sqrt_bc2 = (float)(1.0 / sqrt(bc2));
    float b1 = (float)o->beta1, b2 = (float)o->beta2, eps = (float)o->eps;
    float *m = o->moment[0], *v = o->moment[1];
    for (size_t i = 0; i < o->n; i++) {
        m[i] = b1 * m[i] + (1.0f - b1) * g[i];
        v[i] = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
        float denom = sqrtf(v[i]) * inv_sqrt_bc2 + eps;
        p[i] -= step_size * m[i] / denom;
    }
}

static void adadelta_step(nmt_optim *o, float *p, const float *g)
{
    o->t++;
    float rho = (float)o->rho, eps = (float)o->ada_eps, lr = (float)o->lr;
    float *sq_avg = o->moment[0], *acc_delta = o->moment[1];
    for (size_t i = 0; i < o->n; i++) {
        sq_avg[i] = rho * sq_avg[i] + (1.0f - rho) * g[i] * g[i];
        float delta = sqrtf(acc_delta[i] + eps) / sqrtf(sq_avg[i] + eps) * g[i];
        acc_delta[i] = rho * acc_delta[i] + (1.0f - rho) * delta * delta;
        p[i] -= lr * delta;
    }
}

void nmt_optim_step(nmt_optim *o, float *params, const float *grads)
{
    switch (o->kind) {
    case NMT_OPTIM_SGD:
        o->t++;
        sgd_step(params, grads, o->n, (float)o->lr);
        break;
    case NMT_OPTIM_ADAM:
        adam_step(o, params, grads);
        break;
    case NMT_OPTIM_ADADELTA:
        adadelta_step(o, params, grads);
        break;
    }
}

double nmt_grad_norm(const float *grads, size_t n)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += (double)grads[i] * (double)grads[i];
    return sqrt(sum);
}

double nmt_clip_grad_norm(float *grads, size_t n, double max_norm)
{
    double norm = nmt_grad_norm(grads, n);
    if (max_norm > 0 && isfinite(norm) && norm > max_norm) {
        float scale = (float)(max_norm / norm);
        for (size_t i = 0; i < n; i++)
            grads[i] *= scale;
    }
    return norm;
}
