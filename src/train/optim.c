/* Optimizers (sgd, adam, adadelta) and global-norm gradient clipping over the
 * one flat parameter allocation. Moments share the parameters' layout, so one
 * loop over n floats updates every tensor. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "base/simd.h"
#include "nmt/error.h"
#include "nmt/optim.h"

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

/* The updates and the norm run over chunks of the parameters on the pool's
 * threads (they read and write every parameter, gradient and moment: memory
 * bound, and two cores move more than one), each chunk's loop built for the
 * wide vectors too (base/simd.h). */
typedef struct optim_job {
    const nmt_optim *o;
    float *p;
    const float *g;
    float step_size, inv_sqrt_bc2; /* Adam */
} optim_job;

/* A fixed number of chunks for the norm, whatever the threads: the partial
 * sums are added in the same order, so the norm does not depend on threads
 * or on which thread took which chunk. */
#define NORM_CHUNKS 16

static void chunk_bounds(size_t n, int c, int n_chunks, size_t *lo, size_t *hi)
{
    /* multiples of 16 elements, so that chunks do not share a cache line */
    size_t blocks = (n + 15) / 16;
    *lo = blocks * (size_t)c / (size_t)n_chunks * 16;
    *hi = blocks * (size_t)(c + 1) / (size_t)n_chunks * 16;
    *lo = *lo < n ? *lo : n;
    *hi = *hi < n ? *hi : n;
}

NMT_SIMD
static void sgd_chunk(void *arg, int c, int n_chunks)
{
    const optim_job *j = arg;
    size_t lo, hi;
    chunk_bounds(j->o->n, c, n_chunks, &lo, &hi);
    float lr = (float)j->o->lr, *restrict p = j->p;
    const float *restrict g = j->g;
    for (size_t i = lo; i < hi; i++)
        p[i] -= lr * g[i];
}

/* The bias corrections are computed once per step in double; the per-element
 * work stays in float like the parameters. */
NMT_SIMD
static void adam_chunk(void *arg, int c, int n_chunks)
{
    const optim_job *j = arg;
    const nmt_optim *o = j->o;
    size_t lo, hi;
    chunk_bounds(o->n, c, n_chunks, &lo, &hi);
    float b1 = (float)o->beta1, b2 = (float)o->beta2, eps = (float)o->eps;
    float step_size = j->step_size, inv_sqrt_bc2 = j->inv_sqrt_bc2;
    /* separate allocations: restrict spares the loop its overlap checks */
    float *restrict m = o->moment[0], *restrict v = o->moment[1], *restrict p = j->p;
    const float *restrict g = j->g;
    for (size_t i = lo; i < hi; i++) {
        m[i] = b1 * m[i] + (1.0f - b1) * g[i];
        v[i] = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
        float denom = sqrtf(v[i]) * inv_sqrt_bc2 + eps;
        p[i] -= step_size * m[i] / denom;
    }
}

NMT_SIMD
static void adadelta_chunk(void *arg, int c, int n_chunks)
{
    const optim_job *j = arg;
    const nmt_optim *o = j->o;
    size_t lo, hi;
    chunk_bounds(o->n, c, n_chunks, &lo, &hi);
    float rho = (float)o->rho, eps = (float)o->ada_eps, lr = (float)o->lr;
    float *restrict sq_avg = o->moment[0], *restrict acc_delta = o->moment[1];
    float *restrict p = j->p;
    const float *restrict g = j->g;
    for (size_t i = lo; i < hi; i++) {
        sq_avg[i] = rho * sq_avg[i] + (1.0f - rho) * g[i] * g[i];
        float delta = sqrtf(acc_delta[i] + eps) / sqrtf(sq_avg[i] + eps) * g[i];
        acc_delta[i] = rho * acc_delta[i] + (1.0f - rho) * delta * delta;
        p[i] -= lr * delta;
    }
}

static int update_chunks(size_t n)
{
    return pool_chunks(n, 65536);
}

void nmt_optim_step(nmt_optim *o, float *params, const float *grads)
{
    optim_job j = {.o = o, .p = params, .g = grads};
    o->t++;
    switch (o->kind) {
    case NMT_OPTIM_SGD:
        nmt_pool_run(sgd_chunk, &j, update_chunks(o->n));
        break;
    case NMT_OPTIM_ADAM: {
        double bc1 = 1.0 - pow(o->beta1, (double)o->t);
        double bc2 = 1.0 - pow(o->beta2, (double)o->t);
        j.step_size = (float)(o->lr / bc1);
        j.inv_sqrt_bc2 = (float)(1.0 / sqrt(bc2));
        nmt_pool_run(adam_chunk, &j, update_chunks(o->n));
        break;
    }
    case NMT_OPTIM_ADADELTA:
        nmt_pool_run(adadelta_chunk, &j, update_chunks(o->n));
        break;
    }
}

typedef struct norm_job {
    const float *g;
    size_t n;
    double part[NORM_CHUNKS];
} norm_job;

NMT_SIMD
static void norm_chunk(void *arg, int c, int n_chunks)
{
    norm_job *j = arg;
    size_t lo, hi;
    chunk_bounds(j->n, c, n_chunks, &lo, &hi);
    /* four double lanes, added up in a fixed order: the compiler keeps them
     * in one vector register (a single running sum is a chain it must not
     * reorder) */
    double lane[4] = {0, 0, 0, 0};
    size_t i = lo;
    for (; i + 4 <= hi; i += 4)
        for (int l = 0; l < 4; l++)
            lane[l] += (double)j->g[i + l] * (double)j->g[i + l];
    for (; i < hi; i++)
        lane[i % 4] += (double)j->g[i] * (double)j->g[i];
    j->part[c] = (lane[0] + lane[2]) + (lane[1] + lane[3]);
}

double nmt_grad_norm(const float *grads, size_t n)
{
    norm_job j = {.g = grads, .n = n};
    nmt_pool_run(norm_chunk, &j, NORM_CHUNKS);
    double sum = 0.0;
    for (int c = 0; c < NORM_CHUNKS; c++)
        sum += j.part[c];
    return sqrt(sum);
}

NMT_SIMD
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
