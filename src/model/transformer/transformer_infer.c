/* The Transformer's inference pass: the encoder once per batch of sources,
 * then one decoder position at a time for R rows (hypotheses), each new
 * position computed against cached keys and values, never the whole
 * prefix again:
 *   - every decoder layer's cross-attention keys and values of the sources
 *     are made once, at encoding, and rows reach their source's through
 *     row_src (a beam's reordering does not touch them);
 *   - every decoder layer's self-attention keys and values of the positions
 *     so far are kept per row in slots (nmt_tf_slots_select), which beam
 *     search reorders by moving rows among slots.
 * The numbers are those of the training forward at each position, to float
 * rounding (the products are cut into other blocks). model/infer.c checks
 * the arguments and keeps the rows' sources.
 *
 * The variants: ScaleNorm in place of every layer norm (tf_norm_forward);
 * FixNorm reads each embedding row it looks up at unit length, and with
 * tied embeddings projects onto the normalised target table, made once per
 * encoding (the weights cannot change within a batch's decoding). */
#include <stdlib.h>
#include <string.h>

#include "model/transformer/transformer_pass.h"
#include "nmt/error.h"

typedef struct tf_infer {
    tf_workspace *ws;             /* the encoder (an inference workspace) */
    int max_B, max_Ts, max_rows, max_steps;
    int d, h, F, L;               /* L: decoder layers */
    int scale_norm, fixnorm;      /* the variants */
    int T, step;                  /* the encoded sources' positions; the position next */
    real *cross_K, *cross_V;      /* [L, max_B, max_Ts, d]: layer l's at l * max_B * max_Ts * d */
    real **self_cache;            /* [2 L]: layer l's K, V caches [max_rows, max_steps, d] */
    int *slot;                    /* [max_rows] each row's cache slot */
    int *slot_scratch;            /* [4 max_rows] */
    real *pos;                    /* [max_steps, d] */
    real *z, *u, *act;            /* [R, d], [R, d], [R, F] */
    real *mean, *rstd;            /* [R] */
    real *P_self;                 /* [R, h, max_steps] */
    real *P_cross;                /* [L][R, h, T]: every layer's, for the maps (a
                                   * layer's at l * max_rows * h * max_Ts) */
    real *scratch;                /* [4 R d] */
    real *logits;                 /* [R, Vt] */
    real *out_hat, *out_nrm;      /* FixNorm and tied: [Vt, d] tgt_emb at unit rows, [Vt] */
    real *block;                  /* the one allocation of reals */
} tf_infer;

void nmt_tf_infer_free(void *arg)
{
    tf_infer *st = arg;
    if (!st)
        return;
    nmt_tf_workspace_free(st->ws);
    free(st->self_cache);
    free(st->slot);
    free(st->slot_scratch);
    free(st->block);
    free(st);
}

void *nmt_tf_infer_create(const nmt_model *m, int max_B, int max_Ts, int max_rows, int max_steps)
{
    const nmt_transformer_config *c = &m->cfg.transformer;
    tf_infer *st = calloc(1, sizeof *st);
    if (!st) {
        nmt_set_error(NMT_ERR_NOMEM, "out of memory for decoding");
        return NULL;
    }
    st->max_B = max_B, st->max_Ts = max_Ts, st->max_rows = max_rows, st->max_steps = max_steps;
    st->d = c->d_model, st->h = c->heads, st->F = c->ff, st->L = c->dec_layers;
    size_t d = (size_t)st->d, R = (size_t)max_rows, L = (size_t)st->L, S = (size_t)max_steps;
    size_t cross = L * max_B * (size_t)max_Ts * d, cache = R * S * d;
    st->scale_norm = c->norm == NMT_TF_NORM_SCALE, st->fixnorm = c->fixnorm;
    size_t Vt = (size_t)m->cfg.tgt_vocab, hat = c->fixnorm && m->cfg.tied ? Vt * (d + 1) : 0;
    size_t n = 2 * cross + 2 * L * cache + S * d + 2 * R * d + R * st->F + 2 * R +
               R * st->h * S + L * R * st->h * (size_t)max_Ts + 4 * R * d + R * Vt + hat;
    if (nmt_tf_workspace_alloc(&st->ws, m, max_B, max_Ts, 1, 0)) {
        free(st);
        return NULL;
    }
    st->self_cache = calloc(2 * L, sizeof *st->self_cache);
    st->slot = calloc(R, sizeof *st->slot);
    st->slot_scratch = calloc(4 * R, sizeof *st->slot_scratch);
    st->block = malloc(n * sizeof(real));
    if (!st->self_cache || !st->slot || !st->slot_scratch || !st->block) {
        nmt_tf_infer_free(st);
        nmt_set_error(NMT_ERR_NOMEM, "out of memory for decoding %d rows of up to %d steps "
                      "(%zu MB)", max_rows, max_steps, n * sizeof(real) >> 20);
        return NULL;
    }
    real *p = st->block;
    st->cross_K = p, p += cross;
    st->cross_V = p, p += cross;
    for (size_t k = 0; k < 2 * L; k++)
        st->self_cache[k] = p, p += cache;
    st->pos = p, p += S * d;
    st->z = p, p += R * d;
    st->u = p, p += R * d;
    st->act = p, p += R * st->F;
    st->mean = p, p += R;
    st->rstd = p, p += R;
    st->P_self = p, p += R * st->h * S;
    st->P_cross = p, p += L * R * st->h * (size_t)max_Ts;
    st->scratch = p, p += 4 * R * d;
    st->logits = p, p += R * Vt;
    if (hat) {
        st->out_hat = p, p += Vt * d;
        st->out_nrm = p;
    }
    nmt_tf_positions(st->pos, max_steps, st->d);
    return st;
}

int nmt_tf_infer_encode(const nmt_model *m, void *arg, const int32_t *src, const int *src_len,
                        int B, int T)
{
    tf_infer *st = arg;
    tf_workspace *ws = st->ws;
    const tf_weights *w = tf_params(m);
    ws->B = B;
    ws->enc.T = T;
    for (int b = 0; b < B; b++) {
        ws->enc.len[b] = src_len[b];
        for (int t = 0; t < T; t++)
            ws->enc.ids[(size_t)b * T + t] = src[(size_t)t * B + b];
    }
    nmt_tf_encode(m, ws);
    /* every decoder layer's cross-attention keys and values, once */
    size_t per_layer = (size_t)st->max_B * st->max_Ts * st->d;
    for (int l = 0; l < st->L; l++)
        nmt_tf_mha_project_kv(st->cross_K + l * per_layer, st->cross_V + l * per_layer,
                              ws->enc.out, &w->dec[l].cross, B * T, st->d);
    if (st->out_hat)
        nmt_tf_fixnorm_forward(st->out_hat, st->out_nrm, w->tgt_emb, m->cfg.tgt_vocab, st->d);
    st->T = T;
    st->step = 0;
    for (int r = 0; r < B; r++)
        st->slot[r] = r;
    return NMT_OK;
}

int nmt_tf_infer_select(void *arg, const int *from, int R, int old_R)
{
    tf_infer *st = arg;
    nmt_tf_slots_select(st->slot, from, R, old_R, st->max_rows, st->self_cache, 2 * st->L,
                        st->step, st->max_steps, st->d, st->slot_scratch);
    return NMT_OK;
}

/* Decoder layer l's cross-attention weights of the step, [R, h, T] (the
 * layers lie max_rows * h * max_Ts apart): the one place that says where. */
static real *layer_P_cross(const tf_infer *st, int l)
{
    return st->P_cross + (size_t)l * st->max_rows * st->h * st->max_Ts;
}

/* att [R, T] of map `map` (layer l's head k, or k = h its mean of heads)
 * from that layer's cross-attention weights P [R, h, T]. */
static void write_map(const tf_infer *st, float *att, int map, int R)
{
    int h = st->h, l = map / (h + 1), k = map % (h + 1), T = st->T, ldp = T;
    const real *P = layer_P_cross(st, l);
    for (int r = 0; r < R; r++) {
        float *a = att + (size_t)r * T;
        const real *row = P + (size_t)r * h * ldp;
        if (k < h) {
            for (int j = 0; j < T; j++)
                a[j] = (float)row[(size_t)k * ldp + j];
            continue;
        }
        for (int j = 0; j < T; j++) {
            double sum = 0;
            for (int t = 0; t < h; t++)
                sum += (double)row[(size_t)t * ldp + j];
            a[j] = (float)(sum / h);
        }
    }
}

const nmt_real *nmt_tf_infer_step(const nmt_model *m, void *arg, const int32_t *prev,
                                  const int *row_src, int R, int map, float *att)
{
    tf_infer *st = arg;
    const tf_weights *w = tf_params(m);
    int d = st->d, h = st->h, i = st->step;
    /* position i of each row: sqrt(d) emb[y_{i-1}] + P(i) (FixNorm: the
     * row at unit length) */
    if (st->fixnorm)
        nmt_tf_embed_unit_forward(st->z, prev, w->tgt_emb, st->pos + (size_t)i * d, R, 1, d);
    else
        nmt_tf_embed_forward(st->z, prev, w->tgt_emb, st->pos + (size_t)i * d, R, 1, d);
    int sn = st->scale_norm;
    size_t per_layer = (size_t)st->max_B * st->max_Ts * d;
    for (int l = 0; l < st->L; l++) {
        const tf_layer *W = &w->dec[l];
        real *P_cross = layer_P_cross(st, l);
        tf_norm_forward(sn, st->u, st->mean, st->rstd, st->z, W->ln1_g, W->ln1_b, R, d);
        nmt_tf_mha_step_self(st->z, st->P_self, st->self_cache[2 * l], st->self_cache[2 * l + 1],
                             st->slot, st->u, &W->self, st->scratch, i, st->max_steps, R, d, h,
                             1);
        tf_norm_forward(sn, st->u, st->mean, st->rstd, st->z, W->ln2_g, W->ln2_b, R, d);
        nmt_tf_mha_step_cross(st->z, P_cross, st->cross_K + l * per_layer,
                              st->cross_V + l * per_layer, st->ws->enc.len, row_src, st->u,
                              &W->cross, st->scratch, st->T, R, d, h, 1);
        tf_norm_forward(sn, st->u, st->mean, st->rstd, st->z, W->ln3_g, W->ln3_b, R, d);
        nmt_tf_ffn_forward(st->z, st->act, st->u, W->W_1, W->b_1, W->W_2, W->b_2, NULL, 1, R, d,
                           st->F, 1);
    }
    tf_norm_forward(sn, st->u, st->mean, st->rstd, st->z, w->dec_ln_g, w->dec_ln_b, R, d);
    nmt_linear_forward(st->logits, st->u, st->out_hat ? st->out_hat : w->out_W, w->out_b, R, d,
                       m->cfg.tgt_vocab, d, 0);
    if (att && map == NMT_MAP_EVERY)
        for (int k = 0; k < st->L * (h + 1); k++)
            write_map(st, att + (size_t)k * R * st->T, k, R);
    else if (att)
        write_map(st, att, map, R);
    st->step++;
    return st->logits;
}
