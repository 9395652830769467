/* The Transformer's layers (src/model/transformer): the forwards against
 * plain references written from the contract, the masks, the incremental
 * decoding step against the training forward at every position (with beam
 * search's reordering of rows), the agreement of 1 and 2 threads, and, in
 * the double build (-DNMT_REAL_DOUBLE, tests/meson.build), every gradient of
 * every layer against central differences, to a relative error of 1e-6.
 *
 * Every backward adds into its gradients; the checks start the gradient
 * buffers at TF_BASE rather than 0 and subtract it, so that a backward that
 * wrote instead of adding fails them. */
#include <math.h>
#include <stdio.h>

#include "base/pool.h"
#include "tf_fixture.h"

#define TF_BASE 0.25

static void fill_const(real *x, size_t n, double v)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (real)v;
}

/* ---- central differences (the double build) ---- */

#ifdef NMT_REAL_DOUBLE
typedef double (*objective_fn)(void *ctx);

/* x [n] against the analytic gradient g [n] - base of the objective. A
 * tensor may have no gradient only where the maths says so (zero). */
static void fd_check_any(real *x, const real *g, double base, size_t n, objective_fn f,
                         void *ctx, const char *what, int zero)
{
    const double eps = 1e-5;
    double max_g = 0, max_diff = 0;
    for (size_t i = 0; i < n; i++)
        max_g = fmax(max_g, fabs(g[i] - base));
    for (size_t i = 0; i < n; i++) {
        real keep = x[i];
        x[i] = keep + eps;
        double up = f(ctx);
        x[i] = keep - eps;
        double down = f(ctx);
        x[i] = keep;
        max_diff = fmax(max_diff, fabs((up - down) / (2 * eps) - (g[i] - base)));
    }
    if (zero) {
        ck_assert_msg(max_g < 1e-12 && max_diff < 1e-9, "%s: gradient %g, numerically %g off",
                      what, max_g, max_diff);
        return;
    }
    ck_assert_msg(max_g > 1e-6, "%s has no gradient", what);
    ck_assert_msg(max_diff / max_g < 1e-6, "%s: relative error %g", what, max_diff / max_g);
}

static void fd_check(real *x, const real *g, size_t n, objective_fn f, void *ctx,
                     const char *what)
{
    fd_check_any(x, g, TF_BASE, n, f, ctx, what, 0);
}

static double mha_objective(void *ctx)
{
    return tf_mha_case_objective(ctx);
}

/* Loops 0-17: (encoder self, decoder causal self, cross) x h (1, 2, 4) x
 * attention dropout (0, 0.3). Sentences of 5, 3 and 1 positions (4 padded
 * query rows), sources of 4, 1 and 3. */
START_TEST(mha_gradients)
{
    static const char *const uses[] = {"self", "causal", "cross"};
    int use = _i / 6, h = 1 << (_i / 2 % 3), dropout = _i % 2;
    static const int self_len[] = {5, 3, 1}, src_len[] = {4, 1, 3};
    tf_mha_case c;
    tf_mha_case_init(&c, 3, 5, 4, 8, h, use == 2 ? src_len : self_len, use != 2, use == 1,
                     dropout ? 0.3 : 0, 100 + (uint64_t)_i);
    size_t np = tf_mha_n_params(8), nq = 3 * 5 * 8, nk = 3 * 4 * 8;
    fill_const(c.dw, np, TF_BASE);
    fill_const(c.dxq, nq, TF_BASE);
    if (!c.self)
        fill_const(c.dxkv, nk, TF_BASE);
    tf_mha_case_forward(&c);
    nmt_tf_mha_backward(c.dxq, c.dxkv, &c.dp, c.G, &c.a, c.xq, c.xkv, &c.p, c.drop, c.keep,
                        c.scratch, &c.s);
    char what[64];
    static const char *const names[] = {"W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o"};
    for (int t = 0; t < 8; t++) {
        size_t at = t < 4 ? (size_t)t * 64 : 4 * 64 + (size_t)(t - 4) * 8, n = t < 4 ? 64 : 8;
        snprintf(what, sizeof what, "%s h=%d drop=%d %s", uses[use], h, dropout, names[t]);
        /* b_k adds q . b_k to all scores of a query: the softmax ignores it */
        fd_check_any(c.w + at, c.dw + at, TF_BASE, n, mha_objective, &c, what, t == 5);
    }
    snprintf(what, sizeof what, "%s h=%d drop=%d query input", uses[use], h, dropout);
    fd_check(c.xq, c.dxq, nq, mha_objective, &c, what);
    if (!c.self) {
        snprintf(what, sizeof what, "%s h=%d drop=%d key/value input", uses[use], h, dropout);
        fd_check(c.xkv, c.dxkv, nk, mha_objective, &c, what);
        for (int b = 0; b < 3; b++) /* padding keys get nothing added */
            for (size_t k = (size_t)src_len[b] * 8; k < 4 * 8; k++)
                ck_assert(c.dxkv[(size_t)b * 4 * 8 + k] == (real)TF_BASE);
    }
    tf_mha_case_free(&c);
}
END_TEST

typedef struct ln_case {
    int N, d;
    real *x, *g, *b, *y, *mean, *rstd, *G;
} ln_case;

static double ln_objective(void *arg)
{
    ln_case *c = arg;
    nmt_tf_layernorm_forward(c->y, c->mean, c->rstd, c->x, c->g, c->b, c->N, c->d);
    double sum = 0;
    for (size_t i = 0; i < (size_t)c->N * c->d; i++)
        sum += c->G[i] * c->y[i];
    return sum;
}

/* d = 7 (fewer than the 8 lanes of a sum), 13 and 32; 11 rows (more than
 * the backward's 8 chunks). */
START_TEST(layernorm_gradients)
{
    static const int dims[] = {7, 13, 32};
    int N = 11, d = dims[_i];
    size_t n = (size_t)N * d;
    ln_case c = {N, d, tf_alloc(n), tf_alloc(d), tf_alloc(d), tf_alloc(n), tf_alloc(N),
                 tf_alloc(N), tf_alloc(n)};
    nmt_rng r;
    nmt_rng_seed(&r, 7 + (uint64_t)_i);
    tf_fill(c.x, n, &r, 2.0), tf_fill(c.g, d, &r, 1.5), tf_fill(c.b, d, &r, 1.0);
    tf_fill(c.G, n, &r, 1.0);
    real *dx = tf_alloc(n), *dg = tf_alloc(d), *db = tf_alloc(d);
    real *scratch = tf_alloc(nmt_tf_layernorm_scratch(d));
    fill_const(dx, n, TF_BASE), fill_const(dg, d, TF_BASE), fill_const(db, d, TF_BASE);
    ln_objective(&c);
    nmt_tf_layernorm_backward(dx, dg, db, c.G, c.x, c.mean, c.rstd, c.g, scratch, N, d);
    fd_check(c.x, dx, n, ln_objective, &c, "layer norm input");
    fd_check(c.g, dg, d, ln_objective, &c, "layer norm g");
    fd_check(c.b, db, d, ln_objective, &c, "layer norm b");
    free(c.x), free(c.g), free(c.b), free(c.y), free(c.mean), free(c.rstd), free(c.G);
    free(dx), free(dg), free(db), free(scratch);
}
END_TEST

typedef struct sn_case {
    int N, d;
    real *x, *g, *y, *nrm, *rinv, *G;
} sn_case;

static double sn_objective(void *arg)
{
    sn_case *c = arg;
    nmt_tf_scalenorm_forward(c->y, c->nrm, c->rinv, c->x, c->g, c->N, c->d);
    double sum = 0;
    for (size_t i = 0; i < (size_t)c->N * c->d; i++)
        sum += c->G[i] * c->y[i];
    return sum;
}

/* ScaleNorm, as layer norm: d = 7, 13 and 32; 11 rows. The last row is 0,
 * below the clamp (its output is 0, its input gradient (g / eps) dy: the
 * clamp is a constant) and is left out of the differences, whose steps
 * would cross the clamp. */
START_TEST(scalenorm_gradients)
{
    static const int dims[] = {7, 13, 32};
    int N = 11, d = dims[_i];
    size_t n = (size_t)N * d;
    sn_case c = {N, d, tf_alloc(n), tf_alloc(1), tf_alloc(n), tf_alloc(N), tf_alloc(N),
                 tf_alloc(n)};
    nmt_rng r;
    nmt_rng_seed(&r, 17 + (uint64_t)_i);
    tf_fill(c.x, n, &r, 2.0), tf_fill(c.G, n, &r, 1.0);
    c.g[0] = (real)(1.5 * sqrt((double)d));
    int z = N - 1;
    memset(c.x + (size_t)z * d, 0, (size_t)d * sizeof *c.x);
    real *dx = tf_alloc(n), dg = (real)TF_BASE, *scratch = tf_alloc(nmt_tf_scalenorm_scratch());
    fill_const(dx, n, TF_BASE);
    sn_objective(&c);
    nmt_tf_scalenorm_backward(dx, &dg, c.G, c.x, c.nrm, c.rinv, c.g, scratch, N, d);
    for (int k = 0; k < d; k++) {
        ck_assert(c.y[z * d + k] == 0);
        double want = (double)c.g[0] / NMT_TF_SN_EPS * (double)c.G[z * d + k];
        ck_assert(fabs((double)dx[z * d + k] - TF_BASE - want) <= 1e-9 * fabs(want));
    }
    /* the other rows by central differences (the zero row's share of dg is
     * 0: its output is 0 whatever g) */
    fd_check(c.x, dx, (size_t)z * d, sn_objective, &c, "ScaleNorm input");
    fd_check(c.g, &dg, 1, sn_objective, &c, "ScaleNorm g");
    free(c.x), free(c.g), free(c.y), free(c.nrm), free(c.rinv), free(c.G);
    free(dx), free(scratch);
}
END_TEST

typedef struct fix_case {
    int V, d, N;
    real *emb, *hat, *nrm, *X, *pos, *G;
    int32_t ids[6];
} fix_case;

/* sum(G * X) of X = sqrt(d) hat[ids] + P through the table of unit rows */
static double fix_objective(void *arg)
{
    fix_case *c = arg;
    nmt_tf_fixnorm_forward(c->hat, c->nrm, c->emb, c->V, c->d);
    nmt_tf_embed_forward(c->X, c->ids, c->hat, c->pos, 1, c->N, c->d);
    double sum = 0;
    for (size_t i = 0; i < (size_t)c->N * c->d; i++)
        sum += c->G[i] * c->X[i];
    return sum;
}

/* FixNorm's table: lookups of repeated rows (their gradients gather before
 * the normalisation's backward), a row never read (no gradient: fd_check
 * of the whole table sees its zeros), a zero row below the clamp (read: its
 * gradient is dhat / eps, so left out of the differences). */
START_TEST(fixnorm_gradients)
{
    enum { V = 5, D = 6, N = 6 };
    fix_case c = {V, D, N, tf_alloc(V * D), tf_alloc(V * D), tf_alloc(V), tf_alloc(N * D),
                  tf_alloc(N * D), tf_alloc(N * D), {1, 3, 1, 0, 4, 1}};
    nmt_rng r;
    nmt_rng_seed(&r, 23);
    tf_fill(c.emb, V * D, &r, 1.0), tf_fill(c.pos, N * D, &r, 1.0), tf_fill(c.G, N * D, &r, 1.0);
    memset(c.emb + 4 * D, 0, D * sizeof *c.emb);
    fix_objective(&c);
    for (int v = 0; v < V; v++) {
        double n = 0;
        for (int k = 0; k < D; k++)
            n += (double)c.hat[v * D + k] * (double)c.hat[v * D + k];
        ck_assert_msg(v == 4 ? n == 0 : fabs(n - 1) < 1e-12, "row %d: |hat|^2 = %g", v, n);
    }
    /* decoding's lookups normalise row by row: the table's bits */
    real *X2 = tf_alloc(N * D);
    nmt_tf_embed_unit_forward(X2, c.ids, c.emb, c.pos, 1, N, D);
    ck_assert(memcmp(X2, c.X, N * D * sizeof *X2) == 0);
    real *dhat = tf_alloc(V * D), *demb = tf_alloc(V * D);
    fill_const(demb, V * D, TF_BASE);
    nmt_tf_embed_backward(dhat, c.G, c.ids, N, D);
    nmt_tf_fixnorm_backward(demb, dhat, c.hat, c.nrm, V, D);
    for (int k = 0; k < D; k++) {
        double want = (double)dhat[4 * D + k] / NMT_TF_SN_EPS;
        ck_assert(fabs((double)demb[4 * D + k] - TF_BASE - want) <= 1e-9 * fabs(want));
        demb[4 * D + k] = (real)TF_BASE;
    }
    fd_check(c.emb, demb, 4 * D, fix_objective, &c, "FixNorm table");
    for (int k = 0; k < D; k++) /* row 2 is never read */
        ck_assert(demb[2 * D + k] == (real)TF_BASE);
    free(c.emb), free(c.hat), free(c.nrm), free(c.X), free(c.pos), free(c.G);
    free(X2), free(dhat), free(demb);
}
END_TEST

typedef struct ffn_case {
    int N, d, F;
    real *u, *W1, *b1, *W2, *b2, *act, *out, *G, keep;
    unsigned char *drop;
} ffn_case;

static double ffn_objective(void *arg)
{
    ffn_case *c = arg;
    nmt_tf_ffn_forward(c->out, c->act, c->u, c->W1, c->b1, c->W2, c->b2, c->drop, c->keep, c->N,
                       c->d, c->F, 0);
    double sum = 0;
    for (size_t i = 0; i < (size_t)c->N * c->d; i++)
        sum += c->G[i] * c->out[i];
    return sum;
}

/* Loop 0 without dropout, 1 with a fixed mask of rate 0.4. */
START_TEST(ffn_gradients)
{
    int N = 7, d = 6, F = 9;
    size_t nu = (size_t)N * d, nh = (size_t)N * F, nw = (size_t)F * d;
    ffn_case c = {N, d, F, tf_alloc(nu), tf_alloc(nw), tf_alloc(F), tf_alloc(nw), tf_alloc(d),
                  tf_alloc(nh), tf_alloc(nu), tf_alloc(nu), 1, NULL};
    nmt_rng r;
    nmt_rng_seed(&r, 31);
    tf_fill(c.u, nu, &r, 1.0), tf_fill(c.W1, nw, &r, 0.8), tf_fill(c.b1, F, &r, 0.5);
    tf_fill(c.W2, nw, &r, 0.8), tf_fill(c.b2, d, &r, 0.5), tf_fill(c.G, nu, &r, 1.0);
    if (_i) {
        c.drop = malloc(nh);
        ck_assert_ptr_nonnull(c.drop);
        nmt_dropout_mask(c.drop, &r, (real)0.4, nh);
        c.keep = (real)(1 / 0.6);
    }
    real *du = tf_alloc(nu), *dW1 = tf_alloc(nw), *db1 = tf_alloc(F), *dW2 = tf_alloc(nw);
    real *db2 = tf_alloc(d), *scratch = tf_alloc(nmt_tf_ffn_scratch(N, F));
    fill_const(du, nu, TF_BASE), fill_const(dW1, nw, TF_BASE), fill_const(db1, F, TF_BASE);
    fill_const(dW2, nw, TF_BASE), fill_const(db2, d, TF_BASE);
    ffn_objective(&c);
    nmt_tf_ffn_backward(du, dW1, db1, dW2, db2, c.G, c.act, c.u, c.W1, c.W2, c.keep, scratch, N,
                        d, F);
    fd_check(c.u, du, nu, ffn_objective, &c, "ffn input");
    fd_check(c.W1, dW1, nw, ffn_objective, &c, "ffn W_1");
    fd_check(c.b1, db1, F, ffn_objective, &c, "ffn b_1");
    fd_check(c.W2, dW2, nw, ffn_objective, &c, "ffn W_2");
    fd_check(c.b2, db2, d, ffn_objective, &c, "ffn b_2");
    free(c.u), free(c.W1), free(c.b1), free(c.W2), free(c.b2), free(c.act), free(c.out);
    free(c.G), free(c.drop), free(du), free(dW1), free(db1), free(dW2), free(db2), free(scratch);
}
END_TEST

typedef struct embed_case {
    real *emb, *pos, *X, *y, *out, *G, keep;
    const int32_t *ids;
    unsigned char *mask;
} embed_case;

enum { EB = 2, ET = 4, ED = 6, EV = 5 };

/* sum(G * (X + dropout(y))) with X the embedded input: the embedding and a
 * residual connection with its dropout. */
static double embed_objective(void *arg)
{
    embed_case *c = arg;
    nmt_tf_embed_forward(c->X, c->ids, c->emb, c->pos, EB, ET, ED);
    nmt_tf_residual_forward(c->out, c->X, c->y, c->mask, c->keep, EB * ET * ED);
    double sum = 0;
    for (size_t i = 0; i < EB * ET * ED; i++)
        sum += c->G[i] * c->out[i];
    return sum;
}

/* Ids repeat (1 twice) and include <pad> (0), whose row is a parameter. */
START_TEST(embed_and_residual_gradients)
{
    static const int32_t ids[EB * ET] = {1, 2, 0, 0, 3, 1, 4, 0};
    size_t n = EB * ET * ED;
    embed_case c = {tf_alloc(EV * ED), tf_alloc(ET * ED), tf_alloc(n), tf_alloc(n), tf_alloc(n),
                    tf_alloc(n), (real)(1 / 0.7), ids, malloc(n)};
    ck_assert_ptr_nonnull(c.mask);
    nmt_rng r;
    nmt_rng_seed(&r, 5);
    tf_fill(c.emb, EV * ED, &r, 1.0), tf_fill(c.y, n, &r, 1.0), tf_fill(c.G, n, &r, 1.0);
    nmt_dropout_mask(c.mask, &r, (real)0.3, n);
    nmt_tf_positions(c.pos, ET, ED);
    real *demb = tf_alloc(EV * ED), *dy = tf_alloc(n);
    fill_const(demb, EV * ED, TF_BASE), fill_const(dy, n, TF_BASE);
    embed_objective(&c);
    nmt_tf_embed_backward(demb, c.G, ids, EB * ET, ED); /* dout of X is G itself */
    nmt_tf_residual_backward(dy, c.G, c.mask, c.keep, n);
    fd_check(c.emb, demb, EV * ED, embed_objective, &c, "embedding");
    fd_check(c.y, dy, n, embed_objective, &c, "residual branch");
    free(c.emb), free(c.pos), free(c.X), free(c.y), free(c.out), free(c.G), free(c.mask);
    free(demb), free(dy);
}
END_TEST
/* Two pre-norm decoder layers chained as the model will chain them:
 * z += MHA_self(LN1(z)); z += MHA_cross(LN2(z), H); z += FFN(LN3(z)). The
 * forwards add into the residual stream (accumulate); the backwards add the
 * layer norms' share into the stream's gradient, and both layers' cross-
 * attention into dH. Every parameter, z and H against central differences. */
enum { SB = 2, STT = 4, STS = 3, SD = 8, SH = 2, SF = 12, SL = 2 };
enum { SNQ = SB * STT * SD, SNK = SB * STS * SD };

typedef struct stack_layer {
    real *ln[3][2];        /* g, b */
    tf_mha_params self, cross;
    real *W1, *b1, *W2, *b2;
    real *z_in[3];         /* [SNQ] the stream before each sublayer */
    real *u[3];            /* [SNQ] the layer norms' outputs */
    real *mean[3], *rstd[3];
    tf_mha_acts a_self, a_cross;
    real *act;             /* [SB*STT, SF] */
} stack_layer;

typedef struct stack_case {
    real *w, *dw;          /* every parameter, one block */
    size_t n_w;
    stack_layer L[SL], dL[SL]; /* dL: the gradients' pointers only */
    int tlen[SB], slen[SB];
    real *z0, *H, *z, *G, *dz, *dH, *du, *scratch;
} stack_case;

/* Lays the tensors of SL layers out over block (NULL: just count). */
static size_t stack_point(stack_layer *L, real *block)
{
    size_t at = 0, mha = tf_mha_n_params(SD);
    for (int l = 0; l < SL; l++) {
        real *p = block ? block + at : NULL;
        for (int k = 0; k < 3; k++)
            for (int gb = 0; gb < 2; gb++)
                if (L)
                    L[l].ln[k][gb] = p + (2 * k + gb) * SD;
        at += 6 * SD;
        if (L) {
            tf_mha_point(&L[l].self, block + at, SD);
            tf_mha_point(&L[l].cross, block + at + mha, SD);
        }
        at += 2 * mha;
        if (L) {
            L[l].W1 = block + at, L[l].b1 = L[l].W1 + SF * SD;
            L[l].W2 = L[l].b1 + SF, L[l].b2 = L[l].W2 + SD * SF;
        }
        at += 2 * SF * SD + SF + SD;
    }
    return at;
}

static double stack_objective(void *arg)
{
    stack_case *c = arg;
    memcpy(c->z, c->z0, SNQ * sizeof *c->z);
    tf_mha_shape self = {SB, STT, STT, SD, SH, c->tlen, 1};
    tf_mha_shape cross = {SB, STT, STS, SD, SH, c->slen, 0};
    for (int l = 0; l < SL; l++) {
        stack_layer *L = &c->L[l];
        for (int k = 0; k < 3; k++) {
            memcpy(L->z_in[k], c->z, SNQ * sizeof *c->z);
            nmt_tf_layernorm_forward(L->u[k], L->mean[k], L->rstd[k], c->z, L->ln[k][0],
                                     L->ln[k][1], SB * STT, SD);
            if (k == 0)
                nmt_tf_mha_forward(c->z, &L->a_self, L->u[0], L->u[0], &L->self, NULL, 1,
                                   c->scratch, &self, 1);
            else if (k == 1)
                nmt_tf_mha_forward(c->z, &L->a_cross, L->u[1], c->H, &L->cross, NULL, 1,
                                   c->scratch, &cross, 1);
            else
                nmt_tf_ffn_forward(c->z, L->act, L->u[2], L->W1, L->b1, L->W2, L->b2, NULL, 1,
                                   SB * STT, SD, SF, 1);
        }
    }
    double sum = 0;
    for (size_t i = 0; i < SNQ; i++)
        sum += c->G[i] * c->z[i];
    return sum;
}

static void stack_backward(stack_case *c)
{
    tf_mha_shape self = {SB, STT, STT, SD, SH, c->tlen, 1};
    tf_mha_shape cross = {SB, STT, STS, SD, SH, c->slen, 0};
    memcpy(c->dz, c->G, SNQ * sizeof *c->dz); /* the gradient of the objective's z */
    for (int l = SL - 1; l >= 0; l--) {
        stack_layer *L = &c->L[l], *dL = &c->dL[l];
        for (int k = 2; k >= 0; k--) {
            memset(c->du, 0, SNQ * sizeof *c->du);
            if (k == 2)
                nmt_tf_ffn_backward(c->du, dL->W1, dL->b1, dL->W2, dL->b2, c->dz, L->act, L->u[2],
                                    L->W1, L->W2, 1, c->scratch, SB * STT, SD, SF);
            else if (k == 1)
                nmt_tf_mha_backward(c->du, c->dH, &dL->cross, c->dz, &L->a_cross, L->u[1], c->H,
                                    &L->cross, NULL, 1, c->scratch, &cross);
            else
                nmt_tf_mha_backward(c->du, c->du, &dL->self, c->dz, &L->a_self, L->u[0], L->u[0],
                                    &L->self, NULL, 1, c->scratch, &self);
            nmt_tf_layernorm_backward(c->dz, dL->ln[k][0], dL->ln[k][1], c->du, L->z_in[k],
                                      L->mean[k], L->rstd[k], L->ln[k][0], c->scratch, SB * STT,
                                      SD);
        }
    }
}

START_TEST(decoder_stack_gradients)
{
    stack_case c = {.tlen = {4, 2}, .slen = {3, 1}};
    c.n_w = stack_point(NULL, NULL);
    c.w = tf_alloc(c.n_w), c.dw = tf_alloc(c.n_w);
    stack_point(c.L, c.w);
    stack_point(c.dL, c.dw);
    nmt_rng r;
    nmt_rng_seed(&r, 900);
    tf_fill(c.w, c.n_w, &r, 0.5);
    for (int l = 0; l < SL; l++) {
        stack_layer *L = &c.L[l];
        for (int k = 0; k < 3; k++) {
            L->z_in[k] = tf_alloc(SNQ), L->u[k] = tf_alloc(SNQ);
            L->mean[k] = tf_alloc(SB * STT), L->rstd[k] = tf_alloc(SB * STT);
            for (int i = 0; i < SD; i++)
                L->ln[k][0][i] += 1; /* gains near 1 */
        }
        L->a_self = (tf_mha_acts){tf_alloc(SNQ), tf_alloc(SNQ), tf_alloc(SNQ),
                                  tf_alloc(SB * SH * STT * STT), tf_alloc(SNQ)};
        L->a_cross = (tf_mha_acts){tf_alloc(SNQ), tf_alloc(SNK), tf_alloc(SNK),
                                   tf_alloc(SB * SH * STT * STS), tf_alloc(SNQ)};
        L->act = tf_alloc(SB * STT * SF);
    }
    c.z0 = tf_alloc(SNQ), c.H = tf_alloc(SNK), c.z = tf_alloc(SNQ), c.G = tf_alloc(SNQ);
    c.dz = tf_alloc(SNQ), c.dH = tf_alloc(SNK), c.du = tf_alloc(SNQ);
    c.scratch = tf_alloc(4096); /* more than any layer's scratch here */
    tf_mha_shape big = {SB, STT, STT, SD, SH, c.tlen, 1};
    ck_assert(nmt_tf_mha_backward_scratch(&big) < 4096 && nmt_tf_ffn_scratch(SB * STT, SF) < 4096);
    tf_fill(c.z0, SNQ, &r, 1.0), tf_fill(c.H, SNK, &r, 1.0), tf_fill(c.G, SNQ, &r, 1.0);
    fill_const(c.dw, c.n_w, TF_BASE), fill_const(c.dH, SNK, TF_BASE);
    stack_objective(&c);
    stack_backward(&c);
    fd_check_any(c.z0, c.dz, 0, SNQ, stack_objective, &c, "decoder stack input z", 0);
    fd_check(c.H, c.dH, SNK, stack_objective, &c, "decoder stack encoder output H");
    for (int l = 0; l < SL; l++) {
        const stack_layer *L = &c.L[l];
        struct { const char *name; real *p; int n; } t[] = {
            {"ln1.g", L->ln[0][0], SD}, {"ln1.b", L->ln[0][1], SD}, {"ln2.g", L->ln[1][0], SD},
            {"ln2.b", L->ln[1][1], SD}, {"ln3.g", L->ln[2][0], SD}, {"ln3.b", L->ln[2][1], SD},
            {"self.W_q", L->self.W_q, 4 * SD * SD}, /* W_q W_k W_v W_o */
            {"self.b_q", L->self.b_q, SD}, {"self.b_k", L->self.b_k, SD},
            {"self.b_v", L->self.b_v, 2 * SD}, /* b_v b_o */
            {"cross.W_q", L->cross.W_q, 4 * SD * SD}, {"cross.b_q", L->cross.b_q, SD},
            {"cross.b_k", L->cross.b_k, SD}, {"cross.b_v", L->cross.b_v, 2 * SD},
            {"ff", L->W1, 2 * SF * SD + SF + SD}};
        for (size_t k = 0; k < sizeof t / sizeof *t; k++) {
            char what[64];
            snprintf(what, sizeof what, "decoder stack layer %d %s", l, t[k].name);
            /* b_k has no gradient (see mha_gradients) */
            fd_check_any(t[k].p, c.dw + (t[k].p - c.w), TF_BASE, (size_t)t[k].n, stack_objective,
                         &c, what, strstr(t[k].name, "b_k") != NULL);
        }
    }
    for (int l = 0; l < SL; l++) {
        stack_layer *L = &c.L[l];
        for (int k = 0; k < 3; k++)
            free(L->z_in[k]), free(L->u[k]), free(L->mean[k]), free(L->rstd[k]);
        free(L->a_self.Q), free(L->a_self.K), free(L->a_self.V), free(L->a_self.P);
        free(L->a_self.ctx), free(L->a_cross.Q), free(L->a_cross.K), free(L->a_cross.V);
        free(L->a_cross.P), free(L->a_cross.ctx), free(L->act);
    }
    free(c.w), free(c.dw), free(c.z0), free(c.H), free(c.z), free(c.G), free(c.dz), free(c.dH);
    free(c.du), free(c.scratch);
}
END_TEST

#endif /* NMT_REAL_DOUBLE */

/* ---- forwards (both precisions) ---- */

/* The 18 configurations of mha_gradients, against tf_mha_reference; the
 * accumulating forward adds the same output onto what was there. */
START_TEST(mha_matches_reference)
{
    int use = _i / 6, h = 1 << (_i / 2 % 3), dropout = _i % 2;
    static const int self_len[] = {5, 3, 1}, src_len[] = {4, 1, 3};
    tf_mha_case c;
    tf_mha_case_init(&c, 3, 5, 4, 8, h, use == 2 ? src_len : self_len, use != 2, use == 1,
                     dropout ? 0.3 : 0, 200 + (uint64_t)_i);
    size_t nq = 3 * 5 * 8, np = (size_t)3 * h * 5 * c.s.Tk;
    double *ref = calloc(nq, sizeof *ref), *refP = calloc(np, sizeof *refP);
    real *want = tf_alloc(nq), *wantP = tf_alloc(np);
    ck_assert(ref && refP);
    tf_mha_reference(ref, refP, &c);
    for (size_t i = 0; i < nq; i++)
        want[i] = (real)ref[i];
    for (size_t i = 0; i < np; i++)
        wantP[i] = (real)refP[i];
    tf_mha_case_forward(&c);
    ck_assert_msg(tf_rel_diff(c.out, want, nq) < TF_ROUNDING, "loop %d: out differs by %g", _i,
                  tf_rel_diff(c.out, want, nq));
    ck_assert_msg(tf_rel_diff(c.a.P, wantP, np) < TF_ROUNDING, "loop %d: weights differ", _i);
    real *sum = tf_alloc(nq);
    fill_const(sum, nq, 3.0);
    nmt_tf_mha_forward(sum, &c.a, c.xq, c.xkv, &c.p, c.drop, c.keep, c.scratch, &c.s, 1);
    for (size_t i = 0; i < nq; i++)
        sum[i] -= 3;
    ck_assert(tf_rel_diff(sum, want, nq) < TF_ROUNDING);
    free(ref), free(refP), free(want), free(wantP), free(sum);
    tf_mha_case_free(&c);
}
END_TEST

/* Large scores (inputs 40 times larger): the weights of masked keys are
 * exactly 0, the others sum to 1, nothing is NaN, padded query rows
 * included; a sentence with no key at all (klen 0) gives weights 0 and
 * output b_o, and its backward stays finite. */
START_TEST(mha_masks)
{
    static const int lens[] = {6, 2, 0};
    int causal = _i;
    tf_mha_case c;
    tf_mha_case_init(&c, 3, 6, 0, 8, 2, lens, 1, causal, 0, 300 + (uint64_t)_i);
    for (size_t i = 0; i < 3 * 6 * 8; i++)
        c.xq[i] *= 40;
    tf_mha_case_forward(&c);
    for (int b = 0; b < 3; b++)
        for (int t = 0; t < 2; t++)
            for (int i = 0; i < 6; i++) {
                const real *p = c.a.P + (((size_t)b * 2 + t) * 6 + i) * 6;
                double total = 0;
                for (int j = 0; j < 6; j++) {
                    ck_assert(isfinite(p[j]) && p[j] >= 0);
                    if (j >= lens[b] || (causal && j > i))
                        ck_assert_msg(p[j] == 0, "b %d head %d query %d key %d: %g", b, t, i, j,
                                      (double)p[j]);
                    total += (double)p[j];
                }
                ck_assert(lens[b] == 0 ? total == 0 : fabs(total - 1) < 1e-5);
            }
    for (size_t i = 0; i < 3 * 6 * 8; i++)
        ck_assert(isfinite(c.out[i]));
    for (int i = 0; i < 6; i++)
        for (int k = 0; k < 8; k++)
            ck_assert(c.out[(2 * 6 + i) * 8 + k] == c.p.b_o[k]);
    nmt_tf_mha_backward(c.dxq, c.dxkv, &c.dp, c.G, &c.a, c.xq, c.xkv, &c.p, NULL, 1, c.scratch,
                        &c.s);
    for (size_t i = 0; i < tf_mha_n_params(8); i++)
        ck_assert(isfinite(c.dw[i]));
    for (size_t i = 0; i < 3 * 6 * 8; i++)
        ck_assert(isfinite(c.dxq[i]));
    real p[5] = {1, 2, 3, 4, 5};
    nmt_tf_softmax_row(p, 0, 5); /* no key: all 0 */
    for (int j = 0; j < 5; j++)
        ck_assert(p[j] == 0);
    tf_mha_case_free(&c);
}
END_TEST

/* Decoding position by position gives the training forward's rows: the
 * self-attention step against the causal forward at every position, with
 * the rows reordered before position 3 as beam search does (a row copied
 * twice, one dropped); the forward then sees sequences whose first 3
 * positions are those of the rows they were copied from. Loops: h 1, 2, 4. */
START_TEST(step_self_matches_forward)
{
    enum { R = 4, T = 7, D = 8, AT = 3 };
    int h = 1 << _i;
    static const int from[R] = {2, 0, 0, 3}, full[R] = {T, T, T, T};
    tf_mha_case c0, c1; /* the same weights and inputs (seed), then c1 reordered */
    tf_mha_case_init(&c0, R, T, 0, D, h, full, 1, 1, 0, 400 + (uint64_t)_i);
    tf_mha_case_init(&c1, R, T, 0, D, h, full, 1, 1, 0, 400 + (uint64_t)_i);
    for (int r = 0; r < R; r++)
        memcpy(c1.xq + (size_t)r * T * D, c0.xq + (size_t)from[r] * T * D,
               AT * D * sizeof *c1.xq);
    tf_mha_case_forward(&c0);
    tf_mha_case_forward(&c1);
    /* the cache has a slot more than rows, which reordering may use */
    enum { SLOTS = R + 1 };
    real *Kc = tf_alloc(SLOTS * T * D), *Vc = tf_alloc(SLOTS * T * D);
    real *P = tf_alloc((size_t)R * h * T), *out = tf_alloc(R * D);
    real *x = tf_alloc(R * D), *scratch = tf_alloc(nmt_tf_mha_step_scratch(R, D));
    int slot[R] = {3, 1, 4, 0}, slot_scratch[4 * SLOTS]; /* rows start in scattered slots */
    real *const caches[2] = {Kc, Vc};
    int same = 0;
    for (int i = 0; i < T; i++) {
        if (i == AT)
            nmt_tf_slots_select(slot, from, R, R, SLOTS, caches, 2, i, T, D, slot_scratch);
        for (int r = 0; r < R; r++) /* from position AT on, c0's inputs are c1's */
            memcpy(x + r * D, c0.xq + ((size_t)r * T + i) * D, D * sizeof *x);
        nmt_tf_mha_step_self(out, P, Kc, Vc, slot, x, &c0.p, scratch, i, T, R, D, h, 0);
        const tf_mha_case *ref = i < AT ? &c0 : &c1;
        for (int r = 0; r < R; r++) {
            const real *want = ref->out + ((size_t)r * T + i) * D;
            ck_assert_msg(tf_rel_diff(out + r * D, want, D) < TF_ROUNDING,
                          "position %d row %d differs by %g", i, r,
                          tf_rel_diff(out + r * D, want, D));
            same += memcmp(out + r * D, want, D * sizeof *out) == 0;
            for (int t = 0; t < h; t++) {
                const real *wp = ref->a.P + (((size_t)r * h + t) * T + i) * T;
                ck_assert(tf_rel_diff(P + ((size_t)r * h + t) * T, wp, (size_t)i + 1) <
                          TF_ROUNDING);
            }
        }
    }
    printf("step (self, h=%d): %d of %d output rows bit-identical to the training forward\n",
           h, same, R * T);
    free(Kc), free(Vc), free(P), free(out), free(x), free(scratch);
    tf_mha_case_free(&c0);
    tf_mha_case_free(&c1);
}
END_TEST

/* The cross-attention step: rows share sources (beam hypotheses of one
 * sentence) and read their keys, made once per source, through src_of; the
 * weights are 0 past a source's length. Loops: h 1, 2, 4. */
START_TEST(step_cross_matches_forward)
{
    enum { S = 3, TS = 5, R = 5, T = 4, D = 8 };
    int h = 1 << _i;
    static const int slen[S] = {5, 2, 4}, src_of[R] = {0, 2, 2, 1, 0};
    int rlen[R];
    for (int r = 0; r < R; r++)
        rlen[r] = slen[src_of[r]];
    tf_mha_case c;
    tf_mha_case_init(&c, R, T, TS, D, h, rlen, 0, 0, 0, 500 + (uint64_t)_i);
    real *H = tf_alloc(S * TS * D);
    nmt_rng rng;
    nmt_rng_seed(&rng, 77);
    tf_fill(H, S * TS * D, &rng, 1.0);
    for (int r = 0; r < R; r++)
        memcpy(c.xkv + (size_t)r * TS * D, H + (size_t)src_of[r] * TS * D,
               TS * D * sizeof *H);
    tf_mha_case_forward(&c);
    real *K = tf_alloc(S * TS * D), *V = tf_alloc(S * TS * D), *P = tf_alloc((size_t)R * h * TS);
    real *out = tf_alloc(R * D), *x = tf_alloc(R * D);
    real *scratch = tf_alloc(nmt_tf_mha_step_scratch(R, D));
    nmt_tf_mha_project_kv(K, V, H, &c.p, S * TS, D);
    for (int i = 0; i < T; i++) {
        for (int r = 0; r < R; r++)
            memcpy(x + r * D, c.xq + ((size_t)r * T + i) * D, D * sizeof *x);
        nmt_tf_mha_step_cross(out, P, K, V, slen, src_of, x, &c.p, scratch, TS, R, D, h, 0);
        for (int r = 0; r < R; r++) {
            const real *want = c.out + ((size_t)r * T + i) * D;
            ck_assert_msg(tf_rel_diff(out + r * D, want, D) < TF_ROUNDING,
                          "position %d row %d differs by %g", i, r,
                          tf_rel_diff(out + r * D, want, D));
            for (int t = 0; t < h; t++) {
                const real *p = P + ((size_t)r * h + t) * TS;
                ck_assert(tf_rel_diff(p, c.a.P + (((size_t)r * h + t) * T + i) * TS, TS) <
                          TF_ROUNDING);
                for (int j = rlen[r]; j < TS; j++)
                    ck_assert(p[j] == 0);
            }
        }
    }
    free(H), free(K), free(V), free(P), free(out), free(x), free(scratch);
    tf_mha_case_free(&c);
}
END_TEST

/* Layer norm and the feed-forward network against loops in double. */
START_TEST(layernorm_and_ffn_match_reference)
{
    enum { N = 5, D = 12, F = 10 };
    nmt_rng r;
    nmt_rng_seed(&r, 11);
    real *x = tf_alloc(N * D), *g = tf_alloc(D), *b = tf_alloc(D), *y = tf_alloc(N * D);
    real *mean = tf_alloc(N), *rstd = tf_alloc(N), *want = tf_alloc(N * D);
    tf_fill(x, N * D, &r, 3.0), tf_fill(g, D, &r, 1.0), tf_fill(b, D, &r, 1.0);
    for (int k = 0; k < D; k++)
        x[k] += 100; /* a large mean */
    nmt_tf_layernorm_forward(y, mean, rstd, x, g, b, N, D);
    for (int n = 0; n < N; n++) {
        double m = 0, v = 0;
        for (int k = 0; k < D; k++)
            m += (double)x[n * D + k] / D;
        for (int k = 0; k < D; k++)
            v += ((double)x[n * D + k] - m) * ((double)x[n * D + k] - m) / D;
        for (int k = 0; k < D; k++)
            want[n * D + k] = (real)((double)g[k] * ((double)x[n * D + k] - m) / sqrt(v + 1e-5) + (double)b[k]);
    }
    ck_assert(tf_rel_diff(y, want, N * D) < TF_ROUNDING);
    /* ScaleNorm: g u / max(|u|, 1e-5) */
    real sg = (real)2.5, *nrm = tf_alloc(N), *rinv = tf_alloc(N), *sy = tf_alloc(N * D);
    nmt_tf_scalenorm_forward(sy, nrm, rinv, x, &sg, N, D);
    for (int n = 0; n < N; n++) {
        double s2 = 0;
        for (int k = 0; k < D; k++)
            s2 += (double)x[n * D + k] * (double)x[n * D + k];
        for (int k = 0; k < D; k++)
            want[n * D + k] = (real)(2.5 * (double)x[n * D + k] / fmax(sqrt(s2), 1e-5));
    }
    ck_assert(tf_rel_diff(sy, want, N * D) < TF_ROUNDING);
    free(nrm), free(rinv), free(sy);

    real *W1 = tf_alloc(F * D), *b1 = tf_alloc(F), *W2 = tf_alloc(D * F), *b2 = tf_alloc(D);
    real *act = tf_alloc(N * F), *out = tf_alloc(N * D);
    tf_fill(W1, F * D, &r, 1.0), tf_fill(b1, F, &r, 1.0), tf_fill(W2, D * F, &r, 1.0);
    tf_fill(b2, D, &r, 1.0);
    nmt_tf_ffn_forward(out, act, y, W1, b1, W2, b2, NULL, 1, N, D, F, 0);
    for (int n = 0; n < N; n++)
        for (int o = 0; o < D; o++) {
            double s = (double)b2[o];
            for (int f = 0; f < F; f++) {
                double a = (double)b1[f];
                for (int k = 0; k < D; k++)
                    a += (double)W1[f * D + k] * (double)y[n * D + k];
                s += (double)W2[o * F + f] * fmax(a, 0);
            }
            want[n * D + o] = (real)s;
        }
    ck_assert(tf_rel_diff(out, want, N * D) < TF_ROUNDING);
    free(x), free(g), free(b), free(y), free(mean), free(rstd), free(want);
    free(W1), free(b1), free(W2), free(b2), free(act), free(out);
}
END_TEST

/* The sinusoidal table: the contract's formula (odd d included), and a row
 * whatever the table's length. The embedding: sqrt(d) emb[id] + P(t). */
START_TEST(positions_and_embedding)
{
    enum { T = 50, D = 7 };
    real *pos = tf_alloc(T * D), *short_pos = tf_alloc(3 * D);
    nmt_tf_positions(pos, T, D);
    nmt_tf_positions(short_pos, 3, D);
    ck_assert(memcmp(pos, short_pos, 3 * D * sizeof *pos) == 0);
    for (int p = 0; p < T; p++)
        for (int k = 0; k < D; k++) {
            double angle = p / pow(10000.0, 2.0 * (k / 2) / D);
            double want = k % 2 ? cos(angle) : sin(angle);
            ck_assert(fabs((double)pos[p * D + k] - want) < 1e-7);
        }
    ck_assert(pos[0] == 0 && pos[1] == 1);
    real emb[3 * D], X[2 * D];
    for (int i = 0; i < 3 * D; i++)
        emb[i] = (real)(i * 0.25);
    const int32_t ids[2] = {2, 0};
    nmt_tf_embed_forward(X, ids, emb, pos + 4 * D, 1, 2, D); /* positions 4 and 5 */
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < D; k++)
            ck_assert(fabs((double)X[t * D + k] -
                           (sqrt(D) * (double)emb[ids[t] * D + k] + (double)pos[(4 + t) * D + k])) <
                      1e-5);
    free(pos), free(short_pos);
}
END_TEST

/* ---- threads ---- */

enum { TB = 6, TT = 20, TS = 15, TD = 128, TH = 4, TF = 512, TN = TB * TT, MAX_PIECES = 24 };

/* Every layer's forward and backward at sizes where nmt_gemm cuts the
 * products, at the pool's current threads: the outputs and gradients, in
 * pieces[] (allocated here). */
static int all_layers(real **pieces, size_t *sizes)
{
    static const int lens[TB] = {20, 13, 7, 20, 1, 16}, src_lens[TB] = {15, 3, 9, 1, 15, 12};
    int n = 0;
    for (int use = 0; use < 2; use++) { /* causal self-attention, cross-attention */
        tf_mha_case c;
        tf_mha_case_init(&c, TB, TT, TS, TD, TH, use ? src_lens : lens, !use, !use, 0.1, 600);
        tf_mha_case_forward(&c);
        nmt_tf_mha_backward(c.dxq, c.dxkv, &c.dp, c.G, &c.a, c.xq, c.xkv, &c.p, c.drop, c.keep,
                            c.scratch, &c.s);
        real *keep[] = {c.out, c.a.P, c.dw, c.dxq, c.dxkv};
        size_t n_keep[] = {TN * TD, (size_t)TB * TH * TT * c.s.Tk, tf_mha_n_params(TD), TN * TD,
                           (size_t)TB * c.s.Tk * TD};
        for (int k = 0; k < (use ? 5 : 4); k++) {
            pieces[n] = tf_alloc(n_keep[k]);
            memcpy(pieces[n], keep[k], n_keep[k] * sizeof *pieces[n]);
            sizes[n++] = n_keep[k];
        }
        tf_mha_case_free(&c);
    }
    nmt_rng r;
    nmt_rng_seed(&r, 601);
    real *x = tf_alloc(TN * TD), *g = tf_alloc(TD), *b = tf_alloc(TD), *G = tf_alloc(TN * TD);
    real *mean = tf_alloc(TN), *rstd = tf_alloc(TN), *ln_scratch = tf_alloc(nmt_tf_layernorm_scratch(TD));
    real *W1 = tf_alloc(TF * TD), *b1 = tf_alloc(TF), *W2 = tf_alloc(TD * TF), *b2 = tf_alloc(TD);
    real *ffn_scratch = tf_alloc(nmt_tf_ffn_scratch(TN, TF));
    tf_fill(x, TN * TD, &r, 1.0), tf_fill(g, TD, &r, 1.0), tf_fill(b, TD, &r, 1.0);
    tf_fill(G, TN * TD, &r, 1.0), tf_fill(W1, TF * TD, &r, 0.1), tf_fill(b1, TF, &r, 0.1);
    tf_fill(W2, TD * TF, &r, 0.1), tf_fill(b2, TD, &r, 0.1);
    size_t n_of[] = {TN * TD, TN * TD, TD, TD, TN * TF, TN * TD, TN * TD, TF * TD, TF, TD * TF, TD};
    for (int k = 0; k < 11; k++) {
        pieces[n + k] = tf_alloc(n_of[k]);
        sizes[n + k] = n_of[k];
    }
    real **p = pieces + n; /* y dx dg db act out du dW1 db1 dW2 db2 */
    nmt_tf_layernorm_forward(p[0], mean, rstd, x, g, b, TN, TD);
    nmt_tf_layernorm_backward(p[1], p[2], p[3], G, x, mean, rstd, g, ln_scratch, TN, TD);
    nmt_tf_ffn_forward(p[5], p[4], p[0], W1, b1, W2, b2, NULL, 1, TN, TD, TF, 0);
    nmt_tf_ffn_backward(p[6], p[7], p[8], p[9], p[10], G, p[4], p[0], W1, W2, 1, ffn_scratch, TN,
                        TD, TF);
    free(x), free(g), free(b), free(G), free(mean), free(rstd), free(ln_scratch);
    free(W1), free(b1), free(W2), free(b2), free(ffn_scratch);
    return n + 11;
}

START_TEST(threads_agree)
{
    real *one[MAX_PIECES], *two[MAX_PIECES];
    size_t n_one[MAX_PIECES], n_two[MAX_PIECES];
    ck_assert_int_eq(nmt_pool_set_threads(1), 0);
    int n = all_layers(one, n_one);
    ck_assert_int_eq(nmt_pool_set_threads(2), 0);
    ck_assert_int_eq(all_layers(two, n_two), n);
    nmt_pool_set_threads(1);
    for (int k = 0; k < n; k++) {
        ck_assert(n_one[k] == n_two[k]);
        ck_assert_msg(tf_rel_diff(two[k], one[k], n_one[k]) < TF_ROUNDING,
                      "piece %d differs by %g", k, tf_rel_diff(two[k], one[k], n_one[k]));
        free(one[k]), free(two[k]);
    }
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("transformer-layers");
    TCase *tc = tcase_create("transformer-layers");
    tcase_set_timeout(tc, 60);
#ifdef NMT_REAL_DOUBLE
    tcase_add_loop_test(tc, mha_gradients, 0, 18);
    tcase_add_loop_test(tc, layernorm_gradients, 0, 3);
    tcase_add_loop_test(tc, scalenorm_gradients, 0, 3);
    tcase_add_test(tc, fixnorm_gradients);
    tcase_add_loop_test(tc, ffn_gradients, 0, 2);
    tcase_add_test(tc, embed_and_residual_gradients);
    tcase_add_test(tc, decoder_stack_gradients);
#endif
    tcase_add_loop_test(tc, mha_matches_reference, 0, 18);
    tcase_add_loop_test(tc, mha_masks, 0, 2);
    tcase_add_loop_test(tc, step_self_matches_forward, 0, 3);
    tcase_add_loop_test(tc, step_cross_matches_forward, 0, 3);
    tcase_add_test(tc, layernorm_and_ffn_match_reference);
    tcase_add_test(tc, positions_and_embedding);
    tcase_add_test(tc, threads_agree);
    suite_add_tcase(s, tc);
    return s;
}
