/* Optimizers over one flat parameter allocation, and gradient clipping. */
#ifndef NMT_OPTIM_H
#define NMT_OPTIM_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    NMT_OPTIM_SGD = 0,
    NMT_OPTIM_ADAM = 1,
    NMT_OPTIM_ADADELTA = 2,
} nmt_optim_kind;

const char *nmt_optim_name(nmt_optim_kind k);             /* "sgd" "adam" "adadelta" */
int nmt_optim_parse(const char *s, nmt_optim_kind *out);  /* NMT_OK or NMT_ERR_ARG */
/* The usual learning rate of each: sgd 1.0, adam 1e-3, adadelta 1.0 (there
 * it multiplies the update, as in Zeiler 2012 and PyTorch). */
double nmt_optim_default_lr(nmt_optim_kind k);

/* An optimizer over one flat parameter allocation of n floats. Its moments
 * are allocations of the same layout, so the tensor table of the model names
 * their slices too (checkpoints store them as "adam.m.NAME" etc.).
 *   sgd:      p -= lr g
 *   adam:     m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;
 *             p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)
 *   adadelta: a = rho a + (1-rho) g^2;  d = sqrt(u + eps)/sqrt(a + eps) g;
 *             u = rho u + (1-rho) d^2;  p -= lr d
 * (the update rules of PyTorch's Adam and Adadelta). */
typedef struct nmt_optim {
    nmt_optim_kind kind;
    size_t n;
    double lr;
    double beta1, beta2, eps;   /* adam: 0.9, 0.999, 1e-8 */
    double rho, ada_eps;        /* adadelta: 0.95, 1e-6 */
    int64_t t;                  /* steps taken (adam's bias correction) */
    int n_moments;              /* 0 sgd, 2 adam and adadelta */
    float *moment[2];           /* [n] each: adam m, v; adadelta a (E[g^2]), u (E[dx^2]) */
} nmt_optim;

int nmt_optim_init(nmt_optim *o, nmt_optim_kind kind, size_t n, double lr);
void nmt_optim_free(nmt_optim *o);
/* One update of params[n] with grads[n]. */
void nmt_optim_step(nmt_optim *o, float *params, const float *grads);
/* Prefix of moment i's tensors in a checkpoint: "adam.m", "adam.v",
 * "adadelta.sq_avg", "adadelta.acc_delta"; NULL when out of range. */
const char *nmt_optim_moment_name(nmt_optim_kind k, int i);

/* The L2 norm of grads[n], summed in double. */
double nmt_grad_norm(const float *grads, size_t n);
/* Scales grads so that their global norm is at most max_norm (0: no
 * clipping) and returns the norm before clipping. A non-finite norm is
 * returned as is and the gradients are left alone. */
double nmt_clip_grad_norm(float *grads, size_t n, double max_norm);

#endif
