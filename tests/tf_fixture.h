/* Shared by the Transformer layer tests: random arrays, one multi-head
 * attention with all its buffers, and a plain reference of its forward
 * written from the contract (loops over sentences, heads and positions, in
 * double), which the layers' own code never uses. */
#ifndef NMT_TF_FIXTURE_H
#define NMT_TF_FIXTURE_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/transformer/transformer_layers.h"
#include "nmt/rng.h"
#include "test_common.h"

/* Uniform in [-scale, scale]. */
static inline void tf_fill(real *x, size_t n, nmt_rng *r, double scale)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (real)(scale * (2.0 * (double)nmt_rng_uniform(r) - 1.0));
}

static inline real *tf_alloc(size_t n)
{
    real *x = calloc(n ? n : 1, sizeof *x);
    ck_assert_ptr_nonnull(x);
    return x;
}

/* max |a - b| / max(|b|, floor) over n elements. */
static inline double tf_rel_diff(const real *a, const real *b, size_t n)
{
    double diff = 0, mag = 1e-30;
    for (size_t i = 0; i < n; i++) {
        diff = fmax(diff, fabs((double)a[i] - (double)b[i]));
        mag = fmax(mag, fabs((double)b[i]));
    }
    return diff / mag;
}

/* What agrees "to float rounding" in this precision. */
#ifdef NMT_REAL_DOUBLE
#define TF_ROUNDING 1e-12
#else
#define TF_ROUNDING 2e-5
#endif

/* One attention with its parameters in one block (W_q W_k W_v W_o b_q b_k
 * b_v b_o), their gradients alike, and every buffer of a pass. */
typedef struct tf_mha_case {
    tf_mha_shape s;
    int klen[8];
    int self;            /* xkv is xq */
    real *w, *dw;        /* [4 d d + 4 d] */
    tf_mha_params p, dp;
    real *xq, *xkv;      /* [B, Tq, d], [B, Tk, d] (xkv == xq when self) */
    real *dxq, *dxkv;
    real *out, *G;       /* [B, Tq, d]: the output, and the weights of the objective */
    tf_mha_acts a;
    unsigned char *drop; /* [B, h, Tq, Tk] or NULL */
    real keep;
    real *scratch;       /* the larger of the forward's and the backward's */
} tf_mha_case;

static inline size_t tf_mha_n_params(int d)
{
    return 4 * (size_t)d * d + 4 * (size_t)d;
}

static inline void tf_mha_point(tf_mha_params *p, real *block, int d)
{
    size_t dd = (size_t)d * d;
    p->W_q = block, p->W_k = block + dd, p->W_v = block + 2 * dd, p->W_o = block + 3 * dd;
    p->b_q = block + 4 * dd, p->b_k = p->b_q + d, p->b_v = p->b_k + d, p->b_o = p->b_v + d;
}

/* B sentences of Tq queries; keys: the same rows (self, Tk = Tq) or Tk
 * others. klen [B]. drop_p > 0 draws an attention dropout mask. */
static inline void tf_mha_case_init(tf_mha_case *c, int B, int Tq, int Tk, int d, int h,
                                    const int *klen, int self, int causal, double drop_p,
                                    uint64_t seed)
{
    memset(c, 0, sizeof *c);
    ck_assert(B <= 8);
    memcpy(c->klen, klen, (size_t)B * sizeof *klen);
    c->s = (tf_mha_shape){.B = B, .Tq = Tq, .Tk = self ? Tq : Tk, .d = d, .h = h,
                          .klen = c->klen, .causal = causal};
    Tk = c->s.Tk;
    c->self = self;
    nmt_rng r;
    nmt_rng_seed(&r, seed);
    size_t np = tf_mha_n_params(d), nq = (size_t)B * Tq * d, nk = (size_t)B * Tk * d;
    c->w = tf_alloc(np), c->dw = tf_alloc(np);
    tf_fill(c->w, np, &r, 0.6);
    tf_mha_point(&c->p, c->w, d);
    tf_mha_point(&c->dp, c->dw, d);
    c->xq = tf_alloc(nq), c->dxq = tf_alloc(nq);
    tf_fill(c->xq, nq, &r, 1.0);
    if (self) {
        c->xkv = c->xq, c->dxkv = c->dxq;
    } else {
        c->xkv = tf_alloc(nk), c->dxkv = tf_alloc(nk);
        tf_fill(c->xkv, nk, &r, 1.0);
    }
    c->out = tf_alloc(nq), c->G = tf_alloc(nq);
    tf_fill(c->G, nq, &r, 1.0);
    c->a = (tf_mha_acts){tf_alloc(nq), tf_alloc(nk), tf_alloc(nk),
                         tf_alloc((size_t)B * h * Tq * Tk), tf_alloc(nq)};
    c->keep = 1;
    if (drop_p > 0) {
        size_t n = (size_t)B * h * Tq * Tk;
        c->drop = malloc(n);
        ck_assert_ptr_nonnull(c->drop);
        nmt_dropout_mask(c->drop, &r, (real)drop_p, n);
        c->keep = (real)(1 / (1 - drop_p));
    }
    size_t f = nmt_tf_mha_forward_scratch(&c->s), b = nmt_tf_mha_backward_scratch(&c->s);
    c->scratch = tf_alloc(f > b ? f : b);
}

static inline void tf_mha_case_free(tf_mha_case *c)
{
    free(c->w), free(c->dw), free(c->xq), free(c->dxq), free(c->out), free(c->G);
    if (!c->self)
        free(c->xkv), free(c->dxkv);
    free(c->a.Q), free(c->a.K), free(c->a.V), free(c->a.P), free(c->a.ctx);
    free(c->drop), free(c->scratch);
}

static inline void tf_mha_case_forward(tf_mha_case *c)
{
    nmt_tf_mha_forward(c->out, &c->a, c->xq, c->xkv, &c->p, c->drop, c->keep, c->scratch, &c->s,
                       0);
}

/* The objective sum(G * out) of a fresh forward, in double. */
static inline double tf_mha_case_objective(tf_mha_case *c)
{
    tf_mha_case_forward(c);
    double sum = 0;
    for (size_t i = 0; i < (size_t)c->s.B * c->s.Tq * c->s.d; i++)
        sum += (double)c->G[i] * (double)c->out[i];
    return sum;
}

/* The reference: out [B, Tq, d] and P [B, h, Tq, Tk] in double, from the
 * contract's formulas, loop by loop. */
static inline void tf_mha_reference(double *out, double *P, const tf_mha_case *c)
{
    const tf_mha_shape *s = &c->s;
    int B = s->B, Tq = s->Tq, Tk = s->Tk, d = s->d, h = s->h, dk = d / h;
    const tf_mha_params *p = &c->p;
    double *Q = calloc((size_t)B * Tq * d, sizeof *Q), *K = calloc((size_t)B * Tk * d, sizeof *K);
    double *V = calloc((size_t)B * Tk * d, sizeof *V), *ctx = calloc((size_t)d, sizeof *ctx);
    double *sc = calloc((size_t)Tk, sizeof *sc);
    ck_assert(Q && K && V && ctx && sc);
    for (int b = 0; b < B; b++) {
        for (int i = 0; i < Tq; i++)
            for (int o = 0; o < d; o++) {
                double q = (double)p->b_q[o];
                for (int k = 0; k < d; k++)
                    q += (double)p->W_q[o * d + k] * (double)c->xq[((size_t)b * Tq + i) * d + k];
                Q[((size_t)b * Tq + i) * d + o] = q;
            }
        for (int j = 0; j < Tk; j++)
            for (int o = 0; o < d; o++) {
                double kk = (double)p->b_k[o], vv = (double)p->b_v[o];
                for (int k = 0; k < d; k++) {
                    double x = (double)c->xkv[((size_t)b * Tk + j) * d + k];
                    kk += (double)p->W_k[o * d + k] * x;
                    vv += (double)p->W_v[o * d + k] * x;
                }
                K[((size_t)b * Tk + j) * d + o] = kk;
                V[((size_t)b * Tk + j) * d + o] = vv;
            }
        for (int i = 0; i < Tq; i++) {
            for (int t = 0; t < h; t++) {
                double mx = -(double)INFINITY, sum = 0;
                for (int j = 0; j < Tk; j++) {
                    int masked = j >= c->klen[b] || (s->causal && j > i);
                    double dotp = 0;
                    for (int k = 0; k < dk; k++)
                        dotp += Q[((size_t)b * Tq + i) * d + t * dk + k] *
                                K[((size_t)b * Tk + j) * d + t * dk + k];
                    sc[j] = masked ? -(double)INFINITY : dotp / sqrt((double)dk);
                    mx = fmax(mx, sc[j]);
                }
                for (int j = 0; j < Tk; j++) {
                    sc[j] = sc[j] == -(double)INFINITY ? 0 : exp(sc[j] - mx);
                    sum += sc[j];
                }
                for (int k = 0; k < dk; k++)
                    ctx[t * dk + k] = 0;
                for (int j = 0; j < Tk; j++) {
                    size_t at = (((size_t)b * h + t) * Tq + i) * Tk + j;
                    P[at] = sc[j] / sum;
                    double w = P[at] * (c->drop ? (c->drop[at] ? (double)c->keep : 0) : 1);
                    for (int k = 0; k < dk; k++)
                        ctx[t * dk + k] += w * V[((size_t)b * Tk + j) * d + t * dk + k];
                }
            }
            for (int o = 0; o < d; o++) {
                double y = (double)p->b_o[o];
                for (int k = 0; k < d; k++)
                    y += (double)p->W_o[o * d + k] * ctx[k];
                out[((size_t)b * Tq + i) * d + o] = y;
            }
        }
    }
    free(Q), free(K), free(V), free(ctx), free(sc);
}

#endif
