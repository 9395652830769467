/* The Transformer's training pass over a padded batch: the encoder, the
 * decoder up to its final layer norm (the output layer's input), and the
 * backward from the output layer's gradient. docs/DESIGN.md ("The
 * Transformer") has the equations; every layer is pre-norm:
 *
 *   x <- x + drop(MHA(LN1(x), LN1(x), pad))      encoder, each layer
 *   x <- x + drop(FFN(LN2(x)))                   H = LN_e(x) after the last
 *   z <- z + drop(MHA(LN1(z), LN1(z), causal))   decoder, each layer
 *   z <- z + drop(MHA(LN2(z), H, source pad))
 *   z <- z + drop(FFN(LN3(z)))                   t = LN_d(z) after the last
 *
 * The residual stream is kept at every sublayer's entrance (the layer
 * norms' backward reads it): x[k] of a layer is the stream before
 * sublayer k, and the next sublayer's (or layer's) stream is written into
 * a buffer of its own, so nothing is copied back. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/transformer/transformer_pass.h"
#include "nmt/error.h"

/* ---- the workspace ---- */

/* Consecutive slices of the two allocations (reals, bytes); with no base,
 * a dry run that only counts. Slices are rounded to 16 reals (64 bytes). */
typedef struct carver {
    real *reals;
    unsigned char *bytes;
    size_t n_reals, n_bytes;
} carver;

static real *carve(carver *c, size_t n)
{
    real *p = c->reals ? c->reals + c->n_reals : NULL;
    c->n_reals += (n + 15) & ~(size_t)15;
    return p;
}

static unsigned char *carve_bytes(carver *c, size_t n)
{
    unsigned char *p = c->bytes ? c->bytes + c->n_bytes : NULL;
    c->n_bytes += (n + 63) & ~(size_t)63;
    return p;
}

typedef struct sizes {
    int B, Ts, Tt, d, h, F, Le, Ld;
    int Vs, Vt, fixnorm;
    int training;
} sizes;

/* The attention's kept activations for B queries of Tq rows against keys
 * of Tk rows. */
static void carve_mha(tf_mha_acts *a, unsigned char **drop, carver *c, const sizes *z, int Tq,
                      int Tk)
{
    size_t Nq = (size_t)z->B * Tq, Nk = (size_t)z->B * Tk, d = (size_t)z->d;
    a->Q = carve(c, Nq * d);
    a->K = carve(c, Nk * d);
    a->V = carve(c, Nk * d);
    a->ctx = carve(c, Nq * d);
    a->P = carve(c, (size_t)z->B * z->h * Tq * Tk);
    *drop = z->training ? carve_bytes(c, (size_t)z->B * z->h * Tq * Tk) : NULL;
}

/* One side: L layers (the encoder's sublayers are 0 and 2, the decoder's 0,
 * 1 and 2) over B x T rows. An inference workspace keeps no layer for a
 * backward: its layers share one set of buffers, and its stream is updated
 * in place in x0 (without dropout, x + f(LN(x)) needs x only through LN(x),
 * computed first). */
static void carve_side(tf_side *s, carver *c, const sizes *z, int T, int Tk, int decoder)
{
    size_t N = (size_t)z->B * T, d = (size_t)z->d;
    int L = decoder ? z->Ld : z->Le, kept = z->training ? L : 1;
    s->T = T;
    s->L = L;
    s->x0 = carve(c, N * d);
    s->emb_mask = z->training ? carve_bytes(c, N * d) : NULL;
    for (int l = 0; l < L; l++) {
        tf_layer_acts *a = s->layers ? &s->layers[l] : NULL, dry;
        if (!a)
            a = &dry;
        if (l < kept) {
            memset(a, 0, sizeof *a);
            for (int k = 0; k < 3; k++) {
                if (!decoder && k == 1)
                    continue;
                a->u[k] = carve(c, N * d);
                a->mean[k] = carve(c, N);
                a->rstd[k] = carve(c, N);
                a->res_mask[k] = z->training ? carve_bytes(c, N * d) : NULL;
            }
            carve_mha(&a->self, &a->self_drop, c, z, T, T);
            if (decoder)
                carve_mha(&a->cross, &a->cross_drop, c, z, T, Tk);
            a->act = carve(c, N * z->F);
            a->ff_drop = z->training ? carve_bytes(c, N * z->F) : NULL;
        } else if (s->layers) {
            *a = s->layers[0];
        }
        /* the streams: layer l enters at x[0] and each sublayer writes the
         * next; training keeps them all */
        for (int k = 0; k < 3; k++) {
            if (!decoder && k == 1)
                continue;
            int first = l == 0 && k == 0;
            real *x = first || !z->training ? s->x0 : carve(c, N * d);
            if (s->layers)
                a->x[k] = x;
        }
    }
    s->top = z->training ? carve(c, N * d) : s->x0;
    s->out = carve(c, N * d);
    s->out_mean = carve(c, N);
    s->out_rstd = carve(c, N);
    s->dx = z->training ? carve(c, N * d) : NULL;
    s->du = carve(c, N * d); /* also the forward's sublayer output before dropout */
}

static size_t max_sz(size_t a, size_t b)
{
    return a > b ? a : b;
}

/* The layers' scratch at the largest batch: the attentions' (forward and
 * backward), the layer norms' and the feed-forward's. */
static size_t scratch_reals(const sizes *z)
{
    tf_mha_shape enc = {z->B, z->Ts, z->Ts, z->d, z->h, NULL, 0};
    tf_mha_shape self = {z->B, z->Tt, z->Tt, z->d, z->h, NULL, 1};
    tf_mha_shape cross = {z->B, z->Tt, z->Ts, z->d, z->h, NULL, 0};
    size_t n = max_sz(nmt_tf_layernorm_scratch(z->d), nmt_tf_scalenorm_scratch());
    const tf_mha_shape *all[3] = {&enc, &self, &cross};
    for (int k = 0; k < 3; k++)
        n = max_sz(n, z->training ? nmt_tf_mha_backward_scratch(all[k])
                                  : nmt_tf_mha_forward_scratch(all[k]));
    if (z->training)
        n = max_sz(n, nmt_tf_ffn_scratch(z->B * (z->Ts > z->Tt ? z->Ts : z->Tt), z->F));
    return n;
}

static void layout(tf_workspace *w, carver *c, const sizes *z)
{
    carve_side(&w->enc, c, z, z->Ts, z->Ts, 0);
    carve_side(&w->dec, c, z, z->Tt, z->Ts, 1);
    w->pos = carve(c, (size_t)(z->Ts > z->Tt ? z->Ts : z->Tt) * z->d);
    w->dH = z->training ? carve(c, (size_t)z->B * z->Ts * z->d) : NULL;
    w->t_rows = z->training ? carve(c, (size_t)z->B * z->Tt * z->d) : NULL;
    w->tmp = z->training ? carve(c, (size_t)z->B * (z->Ts > z->Tt ? z->Ts : z->Tt) * z->d) : NULL;
    w->scratch = carve(c, scratch_reals(z));
    if (z->training && z->fixnorm) {
        size_t d = (size_t)z->d;
        w->src_hat = carve(c, (size_t)z->Vs * d);
        w->tgt_hat = carve(c, (size_t)z->Vt * d);
        w->src_nrm = carve(c, (size_t)z->Vs);
        w->tgt_nrm = carve(c, (size_t)z->Vt);
        w->src_dhat = carve(c, (size_t)z->Vs * d);
        w->tgt_dhat = carve(c, (size_t)z->Vt * d);
    }
}

static sizes sizes_of(const nmt_config *cfg, int B, int Ts, int Tt, int training)
{
    const nmt_transformer_config *t = &cfg->transformer;
    return (sizes){.B = B, .Ts = Ts, .Tt = Tt, .d = t->d_model, .h = t->heads, .F = t->ff,
                   .Le = t->enc_layers, .Ld = t->dec_layers, .Vs = cfg->src_vocab,
                   .Vt = cfg->tgt_vocab, .fixnorm = t->fixnorm, .training = training};
}

int nmt_tf_workspace_bytes(const nmt_config *cfg, int max_B, int max_Ts, int max_Tt,
                           double *bytes)
{
    sizes z = sizes_of(cfg, max_B, max_Ts, max_Tt, 1);
    carver c = {0};
    tf_workspace w = {0};
    layout(&w, &c, &z);
    *bytes += (double)c.n_reals * sizeof(real) + (double)c.n_bytes +
              (double)max_B * (max_Ts + max_Tt) * sizeof(int32_t);
    return NMT_OK;
}

void nmt_tf_workspace_free(tf_workspace *ws)
{
    if (!ws)
        return;
    if (ws->training)
        nmt_workspace_base_free(&ws->base);
    free(ws->enc.layers);
    free(ws->dec.layers);
    free(ws->enc.ids);
    free(ws->dec.ids);
    free(ws->enc.len);
    free(ws->dec.len);
    free(ws->block);
    free(ws->bytes);
    free(ws);
}

int nmt_tf_workspace_alloc(tf_workspace **out, const nmt_model *m, int max_B, int max_Ts,
                           int max_Tt, int training)
{
    *out = NULL;
    sizes z = sizes_of(&m->cfg, max_B, max_Ts, max_Tt, training);
    tf_workspace *w = calloc(1, sizeof *w);
    if (!w)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for the workspace");
    w->training = training;
    w->guided_layer = -1; /* no guidance until a forward asks for it */
    w->B = max_B, w->d = z.d, w->h = z.h, w->F = z.F;
    w->scale_norm = m->cfg.transformer.norm == NMT_TF_NORM_SCALE;
    w->fixnorm = m->cfg.transformer.fixnorm;
    w->keep_emb = w->keep_res = w->keep_att = w->keep_ff = 1;
    int rc = training ? nmt_workspace_base_init(&w->base, m->ops, z.d, m->cfg.tgt_vocab, max_B,
                                                max_Ts, max_Tt, NULL)
                      : NMT_OK;
    if (rc) {
        free(w);
        return rc;
    }
    carver dry = {0};
    tf_workspace sizing = {0};
    layout(&sizing, &dry, &z);
    w->enc.layers = calloc((size_t)z.Le, sizeof *w->enc.layers);
    w->dec.layers = calloc((size_t)z.Ld, sizeof *w->dec.layers);
    w->enc.ids = calloc((size_t)max_B * max_Ts, sizeof *w->enc.ids);
    w->dec.ids = calloc((size_t)max_B * max_Tt, sizeof *w->dec.ids);
    w->enc.len = calloc((size_t)max_B, sizeof *w->enc.len);
    w->dec.len = calloc((size_t)max_B, sizeof *w->dec.len);
    w->block = calloc(dry.n_reals ? dry.n_reals : 1, sizeof(real));
    w->bytes = calloc(dry.n_bytes ? dry.n_bytes : 1, 1);
    if (!w->enc.layers || !w->dec.layers || !w->enc.ids || !w->dec.ids || !w->enc.len ||
        !w->dec.len || !w->block || !w->bytes) {
        nmt_tf_workspace_free(w);
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for a Transformer workspace of %zu MB",
                             (dry.n_reals * sizeof(real) + dry.n_bytes) >> 20);
    }
    carver c = {.reals = w->block, .bytes = w->bytes};
    layout(w, &c, &z);
    nmt_tf_positions(w->pos, max_Ts > max_Tt ? max_Ts : max_Tt, z.d);
    *out = w;
    return NMT_OK;
}

int nmt_tf_workspace_create(nmt_workspace **out, const nmt_model *m, int max_B, int max_Ts,
                            int max_Tt)
{
    tf_workspace *ws;
    int rc = nmt_tf_workspace_alloc(&ws, m, max_B, max_Ts, max_Tt, 1);
    *out = rc ? NULL : &ws->base;
    return rc;
}

void nmt_tf_workspace_destroy(nmt_workspace *ws)
{
    nmt_tf_workspace_free((tf_workspace *)ws);
}

/* ---- forward ---- */

/* A dropout mask of n units drawn from rng at rate p, or NULL when this
 * forward does not drop there. */
static const unsigned char *draw(unsigned char *mask, int on, nmt_rng *rng, float p, size_t n)
{
    if (!on)
        return NULL;
    nmt_tf_dropout_mask(mask, rng, (real)p, n);
    return mask;
}

/* next = x + drop(sublayer output), where the sublayer has just written its
 * output into out (when dropping out) or added it into next (filled with x
 * before: the residual for free). */
static void residual_begin(real *next, const real *x, size_t n, const unsigned char *mask)
{
    if (!mask && next != x)
        memcpy(next, x, n * sizeof(real));
}

static void residual_end(real *next, const real *x, const real *out, const unsigned char *mask,
                         real keep, size_t n)
{
    if (mask)
        nmt_tf_residual_forward(next, x, out, mask, keep, n);
}

/* The stream after sublayer k of layer l (the next sublayer's, the next
 * layer's, or the side's top). */
static real *next_stream(const tf_side *s, int l, int k, int decoder)
{
    int kn = k + 1 + (!decoder && k == 0); /* the encoder has no sublayer 1 */
    if (kn < 3)
        return s->layers[l].x[kn];
    return l + 1 < s->L ? s->layers[l + 1].x[0] : s->top;
}

/* The guidance of sublayer k of layer l (NULL: none): the cross-attention
 * of the guided decoder layer. */
static const tf_mha_guide *guided_at(const tf_workspace *ws, int l, int k, int decoder)
{
    return decoder && k == 1 && l == ws->guided_layer ? &ws->guide : NULL;
}

typedef struct fwd_ctx {
    tf_workspace *ws;
    const nmt_regularizer *reg;   /* NULL: no dropout */
    nmt_rng *rng;
} fwd_ctx;

/* Sublayer k of layer l on one side: u = LN(x); the stream after it is
 * x + drop(f(u)), f the self-attention (k = 0), the cross-attention over H
 * (k = 1) or the feed-forward network (k = 2). */
static void sublayer_forward(const fwd_ctx *f, tf_side *s, const tf_layer *W, int l, int k,
                             int decoder, const real *H)
{
    tf_workspace *ws = f->ws;
    tf_layer_acts *a = &s->layers[l];
    int d = ws->d, B = ws->B;
    size_t N = (size_t)B * s->T, nd = N * d;
    const real *g[3] = {W->ln1_g, W->ln2_g, W->ln3_g}, *b[3] = {W->ln1_b, W->ln2_b, W->ln3_b};
    int gk = decoder ? k : k / 2; /* the encoder's ff reads ln2 */
    real *x = a->x[k], *next = next_stream(s, l, k, decoder);
    tf_norm_forward(ws->scale_norm, a->u[k], a->mean[k], a->rstd[k], x, g[gk], b[gk], (int)N, d);
    const unsigned char *res = f->reg ? draw(a->res_mask[k], ws->drop_res, f->rng,
                                             f->reg->dropout_residual, nd)
                                      : NULL;
    real *out = res ? s->du : next;
    residual_begin(next, x, nd, res);
    if (k < 2) {
        int self = k == 0;
        tf_mha_acts *acts = self ? &a->self : &a->cross;
        unsigned char *dm = self ? a->self_drop : a->cross_drop;
        tf_mha_shape sh = {.B = B, .Tq = s->T, .Tk = self ? s->T : ws->enc.T, .d = d,
                           .h = ws->h, .klen = self ? s->len : ws->enc.len,
                           .causal = decoder && self};
        const tf_mha_guide *guide = guided_at(ws, l, k, decoder);
        const unsigned char *drop =
            f->reg ? draw(dm, ws->drop_att, f->rng, f->reg->dropout_att,
                          (size_t)B * ws->h * sh.Tq * sh.Tk)
                   : NULL;
        nmt_tf_mha_forward(out, acts, a->u[k], self ? a->u[k] : H, self ? &W->self : &W->cross,
                           drop, ws->keep_att, ws->scratch, &sh, !res);
        if (guide)
            ws->base.guided = nmt_tf_mha_guided_loss(acts, &sh, guide, &ws->base.guided_rows);
    } else {
        const unsigned char *drop =
            f->reg ? draw(a->ff_drop, ws->drop_ff, f->rng, f->reg->dropout_ff, N * ws->F) : NULL;
        nmt_tf_ffn_forward(out, a->act, a->u[k], W->W_1, W->b_1, W->W_2, W->b_2, drop,
                           ws->keep_ff, (int)N, d, ws->F, !res);
    }
    residual_end(next, x, out, res, ws->keep_res, nd);
}

/* A side's input sqrt(d) emb + P (unit: emb's rows read at unit length,
 * each as it is looked up), dropped out, its layers, and its final norm
 * into s->out. */
static void side_forward(const fwd_ctx *f, tf_side *s, const real *emb, int unit,
                         const tf_layer *layers, const real *ln_g, const real *ln_b, int decoder,
                         const real *H)
{
    tf_workspace *ws = f->ws;
    int d = ws->d;
    size_t N = (size_t)ws->B * s->T;
    if (unit)
        nmt_tf_embed_unit_forward(s->x0, s->ids, emb, ws->pos, ws->B, s->T, d);
    else
        nmt_tf_embed_forward(s->x0, s->ids, emb, ws->pos, ws->B, s->T, d);
    const unsigned char *m = f->reg ? draw(s->emb_mask, ws->drop_emb, f->rng,
                                           f->reg->dropout_emb, N * d)
                                    : NULL;
    if (m)
        nmt_dropout_apply(s->x0, m, ws->keep_emb, N * d);
    for (int l = 0; l < s->L; l++)
        for (int k = 0; k < 3; k++)
            if (decoder || k != 1)
                sublayer_forward(f, s, &layers[l], l, k, decoder, H);
    tf_norm_forward(ws->scale_norm, s->out, s->out_mean, s->out_rstd, s->top, ln_g, ln_b, (int)N,
                    d);
}

/* Decoding's encoder: with FixNorm it normalises the rows it looks up
 * (the same bits as the training forward's table, with no table). */
void nmt_tf_encode(const nmt_model *m, tf_workspace *ws)
{
    const tf_weights *w = tf_params(m);
    fwd_ctx f = {.ws = ws};
    side_forward(&f, &ws->enc, w->src_emb, ws->fixnorm, w->enc, w->enc_ln_g, w->enc_ln_b, 0,
                 NULL);
}

/* Batch-major ids [B, T] and the lengths from the batch's time-major ones. */
static void take_ids(tf_side *s, const int32_t *ids, const int *len, int B, int T)
{
    s->T = T;
    for (int b = 0; b < B; b++) {
        s->len[b] = len[b];
        for (int t = 0; t < T; t++)
            s->ids[(size_t)b * T + t] = ids[(size_t)t * B + b];
    }
}

/* Which dropouts a forward uses and their keep factors: each site whose
 * rate is above 0, given an rng. */
static void set_regularizer(tf_workspace *ws, const nmt_regularizer *r, const nmt_rng *rng)
{
    const float p[4] = {r->dropout_emb, r->dropout_residual, r->dropout_att, r->dropout_ff};
    int *on[4] = {&ws->drop_emb, &ws->drop_res, &ws->drop_att, &ws->drop_ff};
    real *keep[4] = {&ws->keep_emb, &ws->keep_res, &ws->keep_att, &ws->keep_ff};
    for (int k = 0; k < 4; k++) {
        *on[k] = p[k] > 0 && rng;
        *keep[k] = *on[k] ? nmt_tf_dropout_keep((real)p[k]) : 1;
    }
}

/* The output layer's sink: the gradient of rows r0 .. r0+rows-1 of t
 * (time-major) replaces those rows of t_rows, which the layer has read for
 * the last time. */
static void output_grad(void *ctx, const real *dt, size_t r0, int rows)
{
    tf_workspace *ws = ctx;
    memcpy(ws->t_rows + r0 * ws->d, dt, (size_t)rows * ws->d * sizeof(real));
}

int nmt_tf_workspace_map(const nmt_workspace *base, int map, int s, int n_tgt, int n_src,
                         float *out)
{
    const tf_workspace *ws = (const tf_workspace *)base;
    int h = ws->h, l = map / (h + 1), k = map % (h + 1), Tq = ws->dec.T, Tk = ws->enc.T;
    if (map < 0 || l >= ws->dec.L || s < 0 || s >= ws->B || n_tgt > Tq || n_src > Tk)
        return nmt_set_error(NMT_ERR_ARG, "no map %d of sentence %d in this forward", map, s);
    const real *P = ws->dec.layers[l].cross.P + (size_t)s * h * Tq * Tk;
    for (int i = 0; i < n_tgt; i++)
        for (int j = 0; j < n_src; j++) {
            if (k < h) {
                out[(size_t)i * n_src + j] = (float)P[((size_t)k * Tq + i) * Tk + j];
                continue;
            }
            double sum = 0; /* as the decoding step's mean (transformer_infer.c) */
            for (int t = 0; t < h; t++)
                sum += (double)P[((size_t)t * Tq + i) * Tk + j];
            out[(size_t)i * n_src + j] = (float)(sum / h);
        }
    return NMT_OK;
}

int nmt_tf_forward(const nmt_model *m, nmt_workspace *base, const nmt_batch *b,
                   const nmt_regularizer *reg, nmt_rng *rng)
{
    tf_workspace *ws = (tf_workspace *)base;
    const tf_weights *w = tf_params(m);
    int B = b->B, d = ws->d, Tt = b->tgt_T;
    ws->B = B;
    set_regularizer(ws, reg, rng);
    /* guided alignment: the batch's gold rows on the regularizer's head,
     * weighted per target token of the batch (pass.c counted them) */
    ws->guided_layer = -1;
    if (reg->guided && b->guide) {
        ws->guided_layer = reg->guided_layer;
        ws->guide = (tf_mha_guide){.gold = b->guide, .head = reg->guided_head,
                                   .weight = (real)((double)reg->guided_weight /
                                                    ws->base.n_tokens)};
    }
    take_ids(&ws->enc, b->src, b->src_len, B, b->src_T);
    take_ids(&ws->dec, b->tgt_in, b->tgt_len, B, Tt);
    /* Masks are drawn in the order the forward meets them: the source
     * embeddings, each encoder layer's attention weights, residual,
     * feed-forward and residual; the target embeddings, each decoder
     * layer's self-attention and residual, cross-attention and residual,
     * feed-forward and residual (a site at rate 0 draws nothing). */
    fwd_ctx f = {.ws = ws, .reg = reg, .rng = rng};
    const real *src_emb = w->src_emb, *tgt_emb = w->tgt_emb, *out_W = w->out_W;
    real *dout_W = m->grads ? tf_grads(m)->out_W : NULL;
    if (ws->fixnorm) {
        /* FixNorm: both tables at unit rows, once per forward (V x d: less
         * than one layer's work); the lookups and, tied, the output layer
         * read them, and their gradients gather in the dhat tables, which
         * the backward takes through the normalisation */
        int Vs = m->cfg.src_vocab, Vt = m->cfg.tgt_vocab;
        nmt_tf_fixnorm_forward(ws->src_hat, ws->src_nrm, w->src_emb, Vs, d);
        nmt_tf_fixnorm_forward(ws->tgt_hat, ws->tgt_nrm, w->tgt_emb, Vt, d);
        memset(ws->src_dhat, 0, (size_t)Vs * d * sizeof(real));
        memset(ws->tgt_dhat, 0, (size_t)Vt * d * sizeof(real));
        src_emb = ws->src_hat, tgt_emb = ws->tgt_hat;
        if (m->cfg.tied) {
            out_W = ws->tgt_hat;
            dout_W = m->grads ? ws->tgt_dhat : NULL;
        }
    }
    side_forward(&f, &ws->enc, src_emb, 0, w->enc, w->enc_ln_g, w->enc_ln_b, 0, NULL);
    side_forward(&f, &ws->dec, tgt_emb, 0, w->dec, w->dec_ln_g, w->dec_ln_b, 1, ws->enc.out);
    /* the output layer reads time-major rows: t [B, Tt, d] turned */
    for (int t = 0; t < Tt; t++)
        for (int s = 0; s < B; s++)
            memcpy(ws->t_rows + ((size_t)t * B + s) * d, ws->dec.out + ((size_t)s * Tt + t) * d,
                   (size_t)d * sizeof(real));
    output_layer *o = &ws->base.out;
    o->in = ws->t_rows;
    o->mask = NULL;
    o->keep = 1;
    o->W = out_W, o->b = w->out_b;
    o->dW = dout_W;
    o->db = m->grads ? tf_grads(m)->out_b : NULL;
    o->sink = output_grad;
    o->sink_ctx = ws;
    return NMT_OK;
}

/* ---- backward ---- */

/* The backward of sublayer k of layer l: s->dx holds the gradient of the
 * stream after it and becomes that of the stream before it. */
static void sublayer_backward(tf_workspace *ws, tf_side *s, const tf_layer *W, const tf_layer *G,
                              int l, int k, int decoder, const real *H)
{
    tf_layer_acts *a = &s->layers[l];
    int d = ws->d, B = ws->B;
    size_t N = (size_t)B * s->T, nd = N * d;
    const real *g[3] = {W->ln1_g, W->ln2_g, W->ln3_g};
    real *dg[3] = {G->ln1_g, G->ln2_g, G->ln3_g}, *db[3] = {G->ln1_b, G->ln2_b, G->ln3_b};
    int gk = decoder ? k : k / 2;
    const unsigned char *res = ws->drop_res ? a->res_mask[k] : NULL;
    /* the sublayer's output gradient: the stream's, through its dropout */
    real *dout = s->dx;
    if (res) {
        dout = ws->tmp;
        memset(dout, 0, nd * sizeof(real));
        nmt_tf_residual_backward(dout, s->dx, res, ws->keep_res, nd);
    }
    memset(s->du, 0, nd * sizeof(real));
    if (k < 2) {
        int self = k == 0;
        tf_mha_shape sh = {.B = B, .Tq = s->T, .Tk = self ? s->T : ws->enc.T, .d = d,
                           .h = ws->h, .klen = self ? s->len : ws->enc.len,
                           .causal = decoder && self};
        const unsigned char *drop = ws->drop_att ? (self ? a->self_drop : a->cross_drop) : NULL;
        nmt_tf_mha_backward_guided(s->du, self ? s->du : ws->dH, self ? &G->self : &G->cross,
                                   dout, self ? &a->self : &a->cross, a->u[k],
                                   self ? a->u[k] : H, self ? &W->self : &W->cross, drop,
                                   ws->keep_att, ws->scratch, &sh, guided_at(ws, l, k, decoder));
    } else {
        nmt_tf_ffn_backward(s->du, G->W_1, G->b_1, G->W_2, G->b_2, dout, a->act, a->u[k],
                            W->W_1, W->W_2, ws->keep_ff, ws->scratch, (int)N, d, ws->F);
    }
    /* through the layer norm into the stream's gradient (which carries the
     * residual path as it is) */
    tf_norm_backward(ws->scale_norm, s->dx, dg[gk], db[gk], s->du, a->x[k], a->mean[k],
                     a->rstd[k], g[gk], ws->scratch, (int)N, d);
}

/* A side's backward from the gradient of its output (the final layer
 * norm's) in s->du, down to its embeddings. */
static void side_backward(tf_workspace *ws, tf_side *s, const tf_layer *W, const tf_layer *G,
                          const real *ln_g, real *dln_g, real *dln_b, real *demb, int decoder,
                          const real *H)
{
    int d = ws->d;
    size_t N = (size_t)ws->B * s->T, nd = N * d;
    memset(s->dx, 0, nd * sizeof(real));
    tf_norm_backward(ws->scale_norm, s->dx, dln_g, dln_b, s->du, s->top, s->out_mean,
                     s->out_rstd, ln_g, ws->scratch, (int)N, d);
    for (int l = s->L - 1; l >= 0; l--)
        for (int k = 2; k >= 0; k--)
            if (decoder || k != 1)
                sublayer_backward(ws, s, &W[l], &G[l], l, k, decoder, H);
    if (ws->drop_emb)
        nmt_dropout_apply(s->dx, s->emb_mask, ws->keep_emb, nd);
    nmt_tf_embed_backward(demb, s->dx, s->ids, (int)N, d);
}

void nmt_tf_backward(nmt_model *m, nmt_workspace *base, const nmt_batch *b)
{
    (void)b;
    tf_workspace *ws = (tf_workspace *)base;
    const tf_weights *w = tf_params(m), *g = tf_grads(m);
    int B = ws->B, d = ws->d, Tt = ws->dec.T;
    /* t's gradient, time-major in t_rows (output_grad), batch-major in du */
    for (int t = 0; t < Tt; t++)
        for (int s = 0; s < B; s++)
            memcpy(ws->dec.du + ((size_t)s * Tt + t) * d, ws->t_rows + ((size_t)t * B + s) * d,
                   (size_t)d * sizeof(real));
    memset(ws->dH, 0, (size_t)B * ws->enc.T * d * sizeof(real));
    /* FixNorm: the lookups' gradients gather in the normalised tables' */
    real *dsrc = ws->fixnorm ? ws->src_dhat : g->src_emb;
    real *dtgt = ws->fixnorm ? ws->tgt_dhat : g->tgt_emb;
    side_backward(ws, &ws->dec, w->dec, g->dec, w->dec_ln_g, g->dec_ln_g, g->dec_ln_b, dtgt, 1,
                  ws->enc.out);
    /* H = LN_e(x): every decoder layer's cross-attention added into dH */
    memcpy(ws->enc.du, ws->dH, (size_t)B * ws->enc.T * d * sizeof(real));
    side_backward(ws, &ws->enc, w->enc, g->enc, w->enc_ln_g, g->enc_ln_g, g->enc_ln_b, dsrc, 0,
                  NULL);
    if (ws->fixnorm) {
        /* the tables' gradients (tgt's with the output layer's share when
         * tied) through the normalisation of their rows */
        nmt_tf_fixnorm_backward(g->src_emb, ws->src_dhat, ws->src_hat, ws->src_nrm,
                                m->cfg.src_vocab, d);
        nmt_tf_fixnorm_backward(g->tgt_emb, ws->tgt_dhat, ws->tgt_hat, ws->tgt_nrm,
                                m->cfg.tgt_vocab, d);
    }
}
