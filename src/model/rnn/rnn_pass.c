/* The training pass of docs/DESIGN.md's encoder-decoder: forward with the loss,
 * and backward, over a whole padded batch. Products that do not depend on
 * the recurrence (input projections, U_a h, the deep output, the vocabulary
 * projection, every weight gradient) run once over all time steps; only
 * W_hh h, W_a s and the context's share of the decoder input are per step. */
#include <stdlib.h>
#include <string.h>

#include "model/rnn/rnn_pass.h"
#include "nmt/error.h"

const weight_field nmt_weight_fields[] = {
    {"src_emb", offsetof(weights, src_emb)},
    {"tgt_emb", offsetof(weights, tgt_emb)},
    {"enc.fwd.W_ih", offsetof(weights, enc_W_ih[0])},
    {"enc.bwd.W_ih", offsetof(weights, enc_W_ih[1])},
    {"enc.fwd.W_hh", offsetof(weights, enc_W_hh[0])},
    {"enc.bwd.W_hh", offsetof(weights, enc_W_hh[1])},
    {"enc.fwd.b", offsetof(weights, enc_b[0])},
    {"enc.bwd.b", offsetof(weights, enc_b[1])},
    {"dec.init.W", offsetof(weights, init_W)},
    {"dec.init.b", offsetof(weights, init_b)},
    {"att.W", offsetof(weights, att_W)},
    {"att.U", offsetof(weights, att_U)},
    {"att.b", offsetof(weights, att_b)},
    {"att.v", offsetof(weights, att_v)},
    {"dec.W_ih", offsetof(weights, dec_W_ih)},
    {"dec.W_hh", offsetof(weights, dec_W_hh)},
    {"dec.b", offsetof(weights, dec_b)},
    {"out.W_t", offsetof(weights, out_W_t)},
    {"out.b_t", offsetof(weights, out_b_t)},
    {"out.W", offsetof(weights, out_W)},
    {"out.b", offsetof(weights, out_b)},
};
const int nmt_n_weight_fields = (int)(sizeof nmt_weight_fields / sizeof nmt_weight_fields[0]);

void nmt_weights_resolve(weights *w, const nmt_model *m, real *base)
{
    memset(w, 0, sizeof *w);
    for (int i = 0; i < nmt_n_weight_fields; i++) {
        const nmt_tensor_info *t = nmt_model_tensor(m, nmt_weight_fields[i].name);
        if (t)
            *(real **)((char *)w + nmt_weight_fields[i].offset) = base + t->offset;
    }
    if (m->cfg.tied)
        w->out_W = w->tgt_emb;
}

/* ---- workspace ---- */

typedef struct carver {
    real *base;
    size_t used;
} carver;

/* Hands out consecutive slices, each rounded to 16 reals (64-byte steps for
 * float) so that vector loads of one array never share a line with the next. */
static real *carve(carver *c, size_t n)
{
    real *p = c->base ? c->base + c->used : NULL;
    c->used += (n + 15) & ~(size_t)15;
    return p;
}

/* The gate gradients of the recurrences are kept for a window of GRAD_WINDOW
 * steps: each full window's weight gradients are one product of
 * GRAD_WINDOW * B rows (512 at B = 64, as efficient as all steps at once)
 * and [T, B, G*H] is never held. */
#define GRAD_WINDOW 8

/* n bytes, carved as whole reals */
static unsigned char *carve_bytes(carver *c, size_t n)
{
    return (unsigned char *)carve(c, (n + sizeof(real) - 1) / sizeof(real));
}

static void layout(rnn_workspace *w, carver *c)
{
    size_t B = w->max_B, Ts = w->max_Ts, Tt = w->max_Tt, GH = (size_t)w->G * w->H;
    size_t H = w->H, E = w->E, DH = (size_t)w->D * w->H, A = w->A, O = w->O;
    int lstm = w->cell == NMT_CELL_LSTM, gru = w->cell == NMT_CELL_GRU;
    size_t WIN = GRAD_WINDOW;
    w->src_mask = carve_bytes(c, Ts * B * E);
    /* Inference keeps no step for a backward: the encoder's gates for one
     * window, its cell state for two steps (enc_gates, enc_cell). */
    int train = w->training;
    for (int d = 0; d < w->D; d++) {
        enc_direction *e = &w->dir[d];
        e->gates = carve(c, (train ? Ts : WIN) * B * GH);
        e->hh = carve(c, (gru && train ? Ts : 1) * B * GH);
        e->c = lstm ? carve(c, (train ? Ts + 1 : 2) * B * H) : NULL;
        e->dgates = carve(c, WIN * B * GH);
        e->dhh = gru ? carve(c, WIN * B * GH) : e->dgates;
    }
    /* enc has a row of padding before and after: the states that are no
     * output, fwd state 0 and bwd state Ts (see enc_state) */
    real *enc_rows = carve(c, (Ts + 2) * B * DH);
    w->enc = enc_rows ? enc_rows + B * DH : NULL; /* NULL in the sizing dry run */
    w->ann_buf = train ? carve(c, Ts * B * DH) : NULL;
    w->enc_mask = train ? carve_bytes(c, Ts * B * DH) : NULL;
    w->denc = carve(c, Ts * B * DH);
    size_t keys = w->att_key_proj ? Ts * B * A : 0; /* dot reads ann */
    w->uh = carve(c, keys);
    w->duh = carve(c, keys);
    w->z = carve(c, B * DH);
    w->dz = carve(c, B * DH);
    w->s = carve(c, (Tt + 1) * B * H);
    w->s_cell = carve(c, (Tt + 1) * B * H);
    w->tgt_mask = carve_bytes(c, Tt * B * E);
    w->e_win = carve(c, WIN * B * E);
    w->ctx_win = carve(c, WIN * B * DH);
    w->wa_s_win = carve(c, w->att_query_proj ? WIN * B * A : 0);
    w->dtgt_x = carve(c, WIN * B * E);
    /* the decoder's gates and the source embeddings and their gradient
     * share memory (see src_x) */
    w->gates = carve(c, Tt * B * GH > Ts * B * E ? Tt * B * GH : Ts * B * E);
    w->src_x = w->dsrc_x = w->gates;
    w->hh = carve(c, (gru ? Tt : 1) * B * GH);
    w->dgates = carve(c, WIN * B * GH);
    w->dhh = gru ? carve(c, WIN * B * GH) : w->dgates;
    w->dwa_s = carve(c, WIN * B * A);
    w->alpha = carve(c, Tt * B * Ts);
    w->dctx = carve(c, WIN * B * DH);
    w->t = carve(c, Tt * B * O);
    w->t_mask = carve_bytes(c, Tt * B * O);
    /* the chunks' shares of bahdanau's dv */
    w->dv_part = carve(c, w->att_kind == NMT_ATT_BAHDANAU ? (size_t)ATT_BACKWARD_CHUNKS * A : 0);
    w->ds_out = carve(c, WIN * B * H);
    for (int k = 0; k < 2; k++) {
        w->dh[k] = carve(c, B * H);
        w->dc[k] = carve(c, B * H);
    }
}

/* The sizes of a workspace for cfg, before its memory is carved. */
static void workspace_sizes(rnn_workspace *w, const nmt_config *cfg, int max_B, int max_src_T,
                            int max_tgt_T, int training)
{
    const nmt_rnn_config *r = &cfg->rnn;
    w->max_B = max_B, w->max_Ts = max_src_T, w->max_Tt = max_tgt_T;
    w->training = training;
    w->cell = r->cell;
    w->att_kind = r->attention;
    w->attention = r->attention != NMT_ATT_NONE;
    w->att_query_proj = att_query_is_projected(r->attention);
    w->att_key_proj = att_keys_are_projected(r->attention);
    w->G = cell_gates(r->cell), w->E = r->emb, w->H = r->hidden;
    w->D = r->bidirectional ? 2 : 1, w->A = att_key_size(r);
    w->O = r->out_dim, w->Vt = cfg->tgt_vocab;
}

/* The reals of the one allocation (a dry run of the layout that carves it). */
static size_t workspace_reals(rnn_workspace *w)
{
    carver c = {NULL, 0};
    layout(w, &c);
    return c.used;
}

int nmt_rnn_workspace_bytes(const nmt_config *cfg, int max_B, int max_Ts, int max_Tt, double *bytes)
{
    rnn_workspace w = {0};
    workspace_sizes(&w, cfg, max_B, max_Ts, max_Tt, 1);
    *bytes += (double)workspace_reals(&w) * sizeof(real) + (double)max_B * max_Ts;
    return NMT_OK;
}

int nmt_rnn_workspace_alloc(rnn_workspace **out, const nmt_model *m, int max_B, int max_src_T,
                        int max_tgt_T, int training)
{
    *out = NULL;
    rnn_workspace *w = calloc(1, sizeof *w);
    if (!w)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for the workspace");
    workspace_sizes(w, &m->cfg, max_B, max_src_T, max_tgt_T, training);
    size_t used = workspace_reals(w); /* a dry run to size the one allocation */
    size_t bytes = used * sizeof(real);
    if (bytes / sizeof(real) != used || used > ((size_t)1 << 40) / sizeof(real)) {
        free(w);
        return nmt_set_error(NMT_ERR_NOMEM, "workspace too large");
    }
    int rc = training ? nmt_workspace_base_init(&w->base, m->ops, w->O, w->Vt, max_B,
                                                max_src_T, max_tgt_T, NULL)
                      : NMT_OK;
    if (rc) {
        free(w);
        return rc;
    }
    w->block = calloc(used, sizeof(real));
    w->src_active = calloc((size_t)max_B * max_src_T, 1);
    if (!w->block || !w->src_active) {
        nmt_rnn_workspace_free(w);
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for a workspace of %zu MB",
                             bytes >> 20);
    }
    carver c = {w->block, 0};
    layout(w, &c);
    *out = w;
    return NMT_OK;
}

void nmt_rnn_workspace_free(rnn_workspace *ws)
{
    if (!ws)
        return;
    if (ws->training)
        nmt_workspace_base_free(&ws->base);
    free(ws->block);
    free(ws->src_active);
    free(ws);
}

int nmt_rnn_workspace_create(nmt_workspace **out, const nmt_model *m, int max_B, int max_Ts,
                         int max_Tt)
{
    rnn_workspace *ws;
    int rc = nmt_rnn_workspace_alloc(&ws, m, max_B, max_Ts, max_Tt, 1);
    *out = rc ? NULL : &ws->base;
    return rc;
}

void nmt_rnn_workspace_destroy(nmt_workspace *ws)
{
    nmt_rnn_workspace_free((rnn_workspace *)ws);
}

/* ---- forward ---- */

/* Where step t's W_hh h_prev lives: GRU keeps every step's, the others
 * reuse one step's buffer. */
static size_t hh_at(const rnn_workspace *ws, size_t t, size_t step_size)
{
    return ws->cell == NMT_CELL_GRU && ws->training ? t * step_size : 0;
}

/* The window of GRAD_WINDOW steps (they start at multiples of it) that
 * holds step t of T: its first step *t0; returns its length. */
static int window_of(int t, int T, int *t0)
{
    *t0 = t - t % GRAD_WINDOW;
    return T - *t0 < GRAD_WINDOW ? T - *t0 : GRAD_WINDOW;
}

/* Encoder step t's gates [B, G*H]: every step's for training, a window's
 * (windows start at multiples of GRAD_WINDOW) for inference. */
static real *enc_gates(const rnn_workspace *ws, const enc_direction *e, int t)
{
    size_t BGH = (size_t)ws->B * ws->G * ws->H;
    return e->gates + (size_t)(ws->training ? t : t % GRAD_WINDOW) * BGH;
}

/* Encoder cell state k (0 .. Ts) [B, H], LSTM only: every state for
 * training, the last two for inference (a step reads k and writes k +- 1). */
static real *enc_cell(const rnn_workspace *ws, const enc_direction *e, int k)
{
    if (!e->c)
        return NULL;
    return e->c + (size_t)(ws->training ? k : k % 2) * ws->B * ws->H;
}

static void set_active(unsigned char *active, const int *len, int T, int B)
{
    for (int t = 0; t < T; t++)
        for (int b = 0; b < B; b++)
            active[(size_t)t * B + b] = t < len[b];
}

/* The encoder's hidden states live in enc itself, whose row j is
 * h_j = [fwd state j+1 ; bwd state j]: direction d's state k is [B, H] with a
 * row stride of D*H, at enc row k-1 (fwd) or k (bwd), and the states that
 * are no output (fwd 0, bwd Ts) fall on enc's padding rows. */
static real *enc_state(const rnn_workspace *ws, int d, int k)
{
    size_t BDH = (size_t)ws->B * ws->D * ws->H;
    return d == 0 ? ws->enc + ((ptrdiff_t)k - 1) * (ptrdiff_t)BDH : ws->enc + k * BDH + ws->H;
}

/* Step t of encoder direction d as the cell sees it, forward and backward. */
static cell_step enc_step(const rnn_workspace *ws, int d, int t)
{
    const enc_direction *e = &ws->dir[d];
    int prev = d == 0 ? t : t + 1, next = d == 0 ? t + 1 : t;
    size_t BGH = (size_t)ws->B * ws->G * ws->H;
    return (cell_step){.gates = enc_gates(ws, e, t), .hh = e->hh + hh_at(ws, t, BGH),
                       .h_prev = enc_state(ws, d, prev), .c_prev = enc_cell(ws, e, prev),
                       .h = enc_state(ws, d, next), .c = enc_cell(ws, e, next),
                       .active = ws->src_active + (size_t)t * ws->B};
}

/* The shape of an encoder step: its states are written into enc, a row of D*H. */
static cell_shape enc_shape(const rnn_workspace *ws)
{
    return (cell_shape){.cell = ws->cell, .B = ws->B, .H = ws->H, .ldh = ws->D * ws->H};
}

void nmt_rnn_encode(const nmt_model *m, rnn_workspace *ws, const int *len, int B, int Ts)
{
    const weights w = *rnn_weights(m);
    int E = ws->E, H = ws->H, GH = ws->G * ws->H, DH = ws->D * ws->H;
    size_t BH = (size_t)B * H, BGH = (size_t)B * GH;
    ws->B = B, ws->Ts = Ts;
    ws->src_len = len;
    for (int d = 0; d < ws->D; d++) {
        enc_direction *e = &ws->dir[d];
        /* The forward direction starts at state 0 and runs t = 0 .. T-1; the
         * backward one starts at state T and runs down. Inactive (padded)
         * rows keep their state, so each sentence's backward pass really
         * starts from 0 at its own last token. */
        int first = d == 0 ? 0 : Ts;
        real *h0 = enc_state(ws, d, first);
        for (int b = 0; b < B; b++)
            memset(h0 + (size_t)b * DH, 0, H * sizeof(real));
        if (e->c)
            memset(enc_cell(ws, e, first), 0, BH * sizeof(real));
        for (int k = 0; k < Ts; k++) {
            int t = d == 0 ? k : Ts - 1 - k;
            /* W_ih x + b of a window of steps [t0, t0 + n) when it is entered
             * (the same products for training and inference, so the same
             * bits) */
            int t0, n = window_of(t, Ts, &t0);
            if (t == (d == 0 ? t0 : t0 + n - 1))
                nmt_linear_forward(enc_gates(ws, e, t0), ws->src_x + (size_t)t0 * B * E,
                               w.enc_W_ih[d], w.enc_b[d], n * B, E, GH, E, 0);
            cell_step step = enc_step(ws, d, t);
            real *hh = e->hh + hh_at(ws, t, BGH); /* step.hh, written here */
            nmt_gemm(0, 1, B, GH, H, 1, step.h_prev, DH, w.enc_W_hh[d], H, 0, hh, GH);
            nmt_cell_forward(&step, enc_shape(ws));
        }
    }
    /* What the decoder reads of the encoder: the annotations, dropped out
     * or not (the states in enc stay as they are for the backward). */
    ws->ann = ws->enc;
    if (ws->drop_enc) {
        size_t n = (size_t)Ts * B * DH;
        memcpy(ws->ann_buf, ws->enc, n * sizeof(real));
        nmt_dropout_apply(ws->ann_buf, ws->enc_mask, ws->keep_enc, n);
        ws->ann = ws->ann_buf;
    }
    /* z = [fwd annotation of the last token ; bwd annotation of the first]
     * (the fwd state at the last token is the one at Ts - 1 too, as padding
     * keeps the state, but its annotation has its own dropout mask) */
    for (int b = 0; b < B; b++) {
        real *o = ws->z + (size_t)b * DH;
        memcpy(o, ws->ann + ((size_t)(len[b] - 1) * B + b) * DH, H * sizeof(real));
        if (ws->D == 2)
            memcpy(o + H, ws->ann + (size_t)b * DH + H, H * sizeof(real));
    }
    nmt_linear_forward(ws->s, ws->z, w.init_W, w.init_b, B, DH, H, DH, 0);
    for (size_t i = 0; i < BH; i++)
        ws->s[i] = fast_tanh(ws->s[i]);
    memset(ws->s_cell, 0, BH * sizeof(real));
    /* the keys, once per batch (att.b is bahdanau's only: NULL otherwise) */
    if (ws->att_key_proj)
        nmt_linear_forward(ws->uh, ws->ann, w.att_U, w.att_b, Ts * B, DH, ws->A, DH, 0);
}

attention_layer nmt_rnn_attention(const rnn_workspace *ws, const weights *w, const weights *g)
{
    attention_layer L = {.kind = ws->att_kind, .B = ws->B, .T = ws->Ts, .K = ws->A,
                         .DH = ws->D * ws->H, .keys = att_keys(ws), .enc = ws->ann,
                         .len = ws->src_len, .v = w->att_v};
    if (g) {
        /* for dot the keys are the annotations, and so are their gradients */
        L.dkeys = ws->att_key_proj ? ws->duh : ws->denc;
        L.denc = ws->denc;
        L.dv = g->att_v;
        L.dv_part = ws->dv_part;
    }
    return L;
}

void nmt_decoder_step_forward(const decoder_step *st, const nmt_model *m, const weights *w,
                          const rnn_workspace *enc)
{
    int E = enc->E, H = enc->H, GH = enc->G * enc->H, DH = enc->D * enc->H, A = enc->A;
    int R = st->R;
    if (enc->attention) {
        const real *q = st->s_prev; /* dot and general ask with the state itself */
        if (enc->att_query_proj) {
            nmt_linear_forward(st->wa_s, st->s_prev, w->att_W, NULL, R, H, A, H, 0);
            q = st->wa_s;
        }
        attention_layer L = nmt_rnn_attention(enc, w, NULL);
        nmt_attention_forward(st->ctx, st->alpha, &L, q, st->src_of, R);
    } else {
        for (int r = 0; r < R; r++)
            memcpy(st->ctx + (size_t)r * DH, enc->z + (size_t)(st->src_of ? st->src_of[r] : r) * DH,
                   (size_t)DH * sizeof(real));
    }
    nmt_linear_forward(st->gates, st->ctx, w->dec_W_ih + E, NULL, R, DH, GH, E + DH, 1);
    nmt_linear_forward(st->hh, st->s_prev, w->dec_W_hh, NULL, R, H, GH, H, 0);
    cell_step step = {.gates = st->gates, .hh = st->hh, .h_prev = st->s_prev, .c_prev = st->c_prev,
                      .h = st->s, .c = st->c, .active = st->active};
    nmt_cell_forward(&step, (cell_shape){.cell = enc->cell, .B = R, .H = H, .ldh = H});
}

/* Rows r0 .. r0+rows-1 of a batch's embeddings into ws->e_win [rows, E]:
 * table[ids], times the last forward's dropout mask [T*B, E] when it used
 * one. The same bits, window by window, as looking up and dropping out every
 * step at once. */
static void window_embeddings(rnn_workspace *ws, const int32_t *ids, const real *table,
                              const unsigned char *mask, size_t r0, int rows)
{
    size_t E = (size_t)ws->E;
    nmt_embed_forward(ws->e_win, ids + r0, table, rows, ws->E);
    if (ws->drop_emb)
        nmt_dropout_apply(ws->e_win, mask + r0 * E, ws->keep_emb, (size_t)rows * E);
}

/* The output layer's sink: the gradient dt of rows r0 .. r0+rows-1 of the
 * deep output t (through its dropout), which the layer has made from those
 * rows' logits, becomes the gradient of the deep output's pre-activation,
 * through tanh, in place of those rows of t (t is not needed any more). */
static void deep_output_grad(void *ctx, const real *dt, size_t r0, int rows)
{
    rnn_workspace *ws = ctx;
    size_t n = (size_t)rows * ws->O;
    real *t = ws->t + r0 * ws->O;
    for (size_t i = 0; i < n; i++)
        t[i] = dt[i] * (1 - t[i] * t[i]);
}

/* The regularizer of a forward into ws: which dropouts it uses (a rate of
 * 0, or no rng, drops nothing) with their keep factors. The rates are
 * checked (pass.c). */
static void set_regularizer(rnn_workspace *ws, const nmt_regularizer *r, const nmt_rng *rng)
{
    const float p[3] = {r->dropout_emb, r->dropout_enc, r->dropout_out};
    ws->drop_emb = p[0] > 0 && rng;
    ws->drop_enc = p[1] > 0 && rng;
    ws->drop_out = p[2] > 0 && rng;
    ws->keep_emb = ws->drop_emb ? (real)1 / ((real)1 - (real)p[0]) : 1;
    ws->keep_enc = ws->drop_enc ? (real)1 / ((real)1 - (real)p[1]) : 1;
    ws->keep_out = ws->drop_out ? (real)1 / ((real)1 - (real)p[2]) : 1;
}

/* The forward pass up to the deep output t, the output layer's input. */
int nmt_rnn_forward(const nmt_model *m, nmt_workspace *base, const nmt_batch *b,
                const nmt_regularizer *reg, nmt_rng *rng)
{
    rnn_workspace *ws = (rnn_workspace *)base;
    const nmt_regularizer r = *reg;
    set_regularizer(ws, &r, rng);
    const weights w = *rnn_weights(m);
    int B = b->B, Ts = b->src_T, Tt = b->tgt_T;
    int E = ws->E, H = ws->H, GH = ws->G * ws->H, DH = ws->D * ws->H, O = ws->O;
    size_t BH = (size_t)B * H, N = (size_t)Tt * B;
    ws->B = B, ws->Ts = Ts, ws->Tt = Tt;
    set_active(ws->src_active, b->src_len, Ts, B);

    /* Dropout masks are drawn in a fixed order: source embeddings,
     * annotations, target embeddings, deep output (each only if used). */
    nmt_embed_forward(ws->src_x, b->src, w.src_emb, Ts * B, E);
    if (ws->drop_emb) {
        nmt_dropout_mask(ws->src_mask, rng, (real)r.dropout_emb, (size_t)Ts * B * E);
        nmt_dropout_apply(ws->src_x, ws->src_mask, ws->keep_emb, (size_t)Ts * B * E);
    }
    if (ws->drop_enc)
        nmt_dropout_mask(ws->enc_mask, rng, (real)r.dropout_enc, (size_t)Ts * B * DH);
    nmt_rnn_encode(m, ws, b->src_len, B, Ts);

    if (ws->drop_emb)
        nmt_dropout_mask(ws->tgt_mask, rng, (real)r.dropout_emb, N * E);
    for (int i0 = 0; i0 < Tt; i0 += GRAD_WINDOW) {
        int n = Tt - i0 < GRAD_WINDOW ? Tt - i0 : GRAD_WINDOW;
        size_t a0 = (size_t)i0 * B;
        window_embeddings(ws, b->tgt_in, w.tgt_emb, ws->tgt_mask, a0, n * B);
        nmt_linear_forward(ws->gates + a0 * GH, ws->e_win, w.dec_W_ih, w.dec_b, n * B, E, GH, E + DH,
                       0);
        for (int k = 0; k < n; k++) {
            size_t at = a0 + (size_t)k * B;
            real *s_prev = ws->s + at * H, *c_prev = ws->s_cell + at * H;
            decoder_step step = {.gates = ws->gates + at * GH, .hh = ws->hh + hh_at(ws, at, GH),
                                 .wa_s = ws->wa_s_win + (size_t)k * B * ws->A,
                                 .alpha = ws->alpha + at * Ts,
                                 .ctx = ws->ctx_win + (size_t)k * B * DH, .s = s_prev + BH,
                                 .c = c_prev + BH, .s_prev = s_prev, .c_prev = c_prev,
                                 .active = ws->base.tgt_active + at, .R = B};
            nmt_decoder_step_forward(&step, m, &w, ws);
        }
        deep_output L = {.s = ws->s + BH + a0 * H, .c = ws->ctx_win, .e = ws->e_win,
                         .W_t = w.out_W_t, .b_t = w.out_b_t, .H = H, .DH = DH, .E = E, .O = O};
        nmt_deep_output_forward(ws->t + a0 * O, &L, n * B);
    }
    if (ws->drop_out)
        nmt_dropout_mask(ws->t_mask, rng, (real)r.dropout_out, N * O);
    /* the output layer reads t (out.W is tgt_emb when tied) */
    output_layer *o = &ws->base.out;
    o->in = ws->t;
    o->mask = ws->drop_out ? ws->t_mask : NULL;
    o->keep = ws->keep_out;
    o->W = w.out_W, o->b = w.out_b;
    o->dW = m->grads ? rnn_grads(m)->out_W : NULL;
    o->db = m->grads ? rnn_grads(m)->out_b : NULL;
    o->sink = deep_output_grad;
    o->sink_ctx = ws;
    return NMT_OK;
}

/* ---- backward ---- */

static void add(real *y, const real *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] += x[i];
}

/* Backward through one encoder direction, given the gradient of its outputs
 * (denc, column block d; z's share included). */
static void encode_backward(const weights *w, const weights *g, rnn_workspace *ws,
                            const nmt_batch *batch, int d)
{
    int B = ws->B, Ts = ws->Ts;
    enc_direction *e = &ws->dir[d];
    int E = ws->E, H = ws->H, GH = ws->G * ws->H, DH = ws->D * ws->H;
    size_t BH = (size_t)B * H, BGH = (size_t)B * GH, BE = (size_t)B * E;
    real *dh = ws->dh[0], *dh_prev = ws->dh[1], *dc = ws->dc[0], *dc_prev = ws->dc[1];
    /* the final state's gradient (z's) came in through denc */
    memset(dh, 0, BH * sizeof(real));
    memset(dc, 0, BH * sizeof(real));
    for (int k = 0; k < Ts; k++) {
        /* Reverse of the forward order. */
        int t = d == 0 ? Ts - 1 - k : k;
        size_t slot = (size_t)(t % GRAD_WINDOW) * BGH;
        for (int b = 0; b < B; b++)
            add(dh + (size_t)b * H, ws->denc + ((size_t)t * B + b) * DH + d * H, H);
        cell_step step = enc_step(ws, d, t);
        cell_grads grads = {.dh = dh, .dc = dc, .dgates = e->dgates + slot, .dhh = e->dhh + slot,
                            .dh_prev = dh_prev, .dc_prev = dc_prev};
        nmt_cell_backward(&grads, &step, enc_shape(ws));
        nmt_gemm(0, 0, B, H, GH, 1, e->dhh + slot, GH, w->enc_W_hh[d], H, 1, dh_prev, H);
        real *tmp = dh; dh = dh_prev; dh_prev = tmp;
        tmp = dc; dc = dc_prev; dc_prev = tmp;
        /* The window [t0, t0 + n) is complete when its last step in this
         * direction's order is done: then its weight gradients. h_prev of
         * step t is state t for the forward direction, t+1 for the backward. */
        int t0, n = window_of(t, Ts, &t0);
        if (t != (d == 0 ? t0 : t0 + n - 1))
            continue;
        const real *h_prev = enc_state(ws, d, d == 0 ? t0 : t0 + 1);
        nmt_gemm(1, 0, GH, H, n * B, 1, e->dhh, GH, h_prev, DH, 1, g->enc_W_hh[d], H);
        window_embeddings(ws, batch->src, w->src_emb, ws->src_mask, (size_t)t0 * B, n * B);
        nmt_linear_backward(ws->dsrc_x + t0 * BE, g->enc_W_ih[d], g->enc_b[d], e->dgates, ws->e_win,
                        w->enc_W_ih[d], n * B, E, GH, E);
    }
}

/* What the forward held for one window only, again for steps i0 .. i0+n-1:
 * their embeddings (e_win), context vectors (ctx_win) and, for the kinds
 * that project the query, W_a s (wa_s_win). */
static void decoder_window_inputs(const weights *w, rnn_workspace *ws, const nmt_batch *b,
                                  int i0, int n)
{
    int B = ws->B, H = ws->H, DH = ws->D * ws->H, R = n * B;
    size_t a0 = (size_t)i0 * B;
    window_embeddings(ws, b->tgt_in, w->tgt_emb, ws->tgt_mask, a0, R);
    if (ws->attention) {
        attention_layer L = nmt_rnn_attention(ws, w, NULL);
        nmt_attention_context(ws->ctx_win, &L, ws->alpha + a0 * ws->Ts, R);
        /* W_a s where the kind asks with it: step i read state i; one
         * product per step, as in the forward, for the same bits (OpenBLAS
         * may round a product of 8 steps otherwise) */
        if (ws->att_query_proj)
            for (int k = 0; k < n; k++)
                nmt_linear_forward(ws->wa_s_win + (size_t)k * B * ws->A,
                               ws->s + (a0 + (size_t)k * B) * H, w->att_W, NULL, B, H, ws->A, H,
                               0);
    } else {
        for (int r = 0; r < R; r++)
            memcpy(ws->ctx_win + (size_t)r * DH, ws->z + (size_t)(r % B) * DH,
                   (size_t)DH * sizeof(real));
    }
}

/* The decoder's weight gradients of steps i0 .. i0+n-1, whose gate gradients
 * are the window's (step i read state i), and the window's target
 * embeddings' gradient. */
static void decoder_window_grads(const weights *w, const weights *g, rnn_workspace *ws,
                                 const nmt_batch *b, int i0, int n)
{
    int B = ws->B, E = ws->E, H = ws->H, GH = ws->G * ws->H, DH = ws->D * ws->H;
    size_t at = (size_t)i0 * B;
    nmt_gemm(1, 0, GH, H, n * B, 1, ws->dhh, GH, ws->s + at * H, H, 1, g->dec_W_hh, H);
    nmt_linear_backward(ws->dtgt_x, g->dec_W_ih, g->dec_b, ws->dgates, ws->e_win, w->dec_W_ih,
                    n * B, E, GH, E + DH);
    nmt_linear_backward(NULL, g->dec_W_ih + E, NULL, ws->dgates, ws->ctx_win, w->dec_W_ih + E,
                    n * B, DH, GH, E + DH);
    /* W_a s_prev: step i read state i */
    if (ws->att_query_proj)
        nmt_linear_backward(NULL, g->att_W, NULL, ws->dwa_s, ws->s + at * H, w->att_W, n * B, H, ws->A,
                        H);
    if (ws->drop_emb)
        nmt_dropout_apply(ws->dtgt_x, ws->tgt_mask + at * E, ws->keep_emb, (size_t)n * B * E);
    nmt_embed_backward(g->tgt_emb, ws->dtgt_x, b->tgt_in + at, b->tgt_len, i0, n, B, E);
}

/* The backward from the gradient of the deep output's pre-activation,
 * which the output layer left in t (deep_output_grad). */
void nmt_rnn_backward(nmt_model *m, nmt_workspace *base, const nmt_batch *b)
{
    rnn_workspace *ws = (rnn_workspace *)base;
    const weights w = *rnn_weights(m), g = *rnn_grads(m);
    int B = ws->B, Ts = ws->Ts, Tt = ws->Tt;
    int E = ws->E, H = ws->H, GH = ws->G * ws->H, DH = ws->D * ws->H, A = ws->A, O = ws->O;
    size_t BH = (size_t)B * H;

    /* Decoder recurrence, last step first. */
    memset(ws->denc, 0, (size_t)Ts * B * DH * sizeof(real));
    memset(ws->dz, 0, (size_t)B * DH * sizeof(real));
    if (ws->att_key_proj)
        memset(ws->duh, 0, (size_t)Ts * B * A * sizeof(real));
    real *dh = ws->dh[0], *dh_prev = ws->dh[1], *dc = ws->dc[0], *dc_prev = ws->dc[1];
    memset(dh, 0, BH * sizeof(real));
    memset(dc, 0, BH * sizeof(real));
    attention_layer att = nmt_rnn_attention(ws, &w, &g);
    for (int i = Tt - 1; i >= 0; i--) {
        size_t at = (size_t)i * B, slot = (size_t)(i % GRAD_WINDOW) * B * GH;
        size_t row = (size_t)(i % GRAD_WINDOW) * B; /* the step's first row in a window */
        real *dwa_s = ws->dwa_s + row * A;
        int i0, n = window_of(i, Tt, &i0);
        if (i == i0 + n - 1) {
            /* A new window: the deep output's backward for its rows, products
             * of n * B rows, into the window's ds_out, dctx and dtgt_x. */
            size_t a0 = (size_t)i0 * B;
            decoder_window_inputs(&w, ws, b, i0, n);
            deep_output L = {.s = ws->s + BH + a0 * H, .c = ws->ctx_win, .e = ws->e_win,
                             .W_t = w.out_W_t, .b_t = w.out_b_t, .H = H, .DH = DH, .E = E,
                             .O = O};
            deep_output_grads dL = {.ds = ws->ds_out, .dc = ws->dctx, .de = ws->dtgt_x,
                                    .dW_t = g.out_W_t, .db_t = g.out_b_t};
            nmt_deep_output_backward(&dL, ws->t + a0 * O, &L, n * B);
        }
        add(dh, ws->ds_out + row * H, BH);
        cell_step step = {.gates = ws->gates + at * GH, .hh = ws->hh + hh_at(ws, at, GH),
                          .h_prev = ws->s + i * BH, .c_prev = ws->s_cell + i * BH,
                          .c = ws->s_cell + (i + 1) * BH, .active = ws->base.tgt_active + at};
        cell_grads grads = {.dh = dh, .dc = dc, .dgates = ws->dgates + slot, .dhh = ws->dhh + slot,
                            .dh_prev = dh_prev, .dc_prev = dc_prev};
        nmt_cell_backward(&grads, &step, (cell_shape){.cell = ws->cell, .B = B, .H = H, .ldh = H});
        nmt_gemm(0, 0, B, H, GH, 1, ws->dhh + slot, GH, w.dec_W_hh, H, 1, dh_prev, H);
        real *dctx = ws->dctx + row * DH;
        nmt_gemm(0, 0, B, DH, GH, 1, ws->dgates + slot, GH, w.dec_W_ih + E, E + DH, 1, dctx, DH);
        if (ws->attention) {
            /* the query: W_a s_prev as the window recomputed it, or s_prev
             * (state i); for dot the keys' gradient is the annotations' */
            const real *q = ws->att_query_proj ? ws->wa_s_win + row * A : ws->s + i * BH;
            nmt_attention_backward(dwa_s, &att, dctx, ws->alpha + at * Ts, q, B);
            if (ws->att_query_proj)
                nmt_gemm(0, 0, B, H, A, 1, dwa_s, A, w.att_W, H, 1, dh_prev, H);
            else
                add(dh_prev, dwa_s, BH);
        } else {
            add(ws->dz, dctx, (size_t)B * DH);
        }
        real *tmp = dh; dh = dh_prev; dh_prev = tmp;
        tmp = dc; dc = dc_prev; dc_prev = tmp;
        if (i == i0) /* the window's first step: it is complete */
            decoder_window_grads(&w, &g, ws, b, i0, n);
    }
    if (ws->att_key_proj)
        nmt_linear_backward(ws->denc, g.att_U, g.att_b, ws->duh, ws->ann, w.att_U, Ts * B, DH, A, DH);
    /* s_0 = tanh(W_init z + b_init); dh now holds d s_0. */
    for (size_t k = 0; k < BH; k++)
        dh[k] *= 1 - ws->s[k] * ws->s[k];
    nmt_linear_backward(ws->dz, g.init_W, g.init_b, dh, ws->z, w.init_W, B, DH, H, DH);
    /* z read the annotations of each sentence's last token (fwd half) and
     * first (bwd half); then every annotation's gradient through its
     * dropout */
    for (int s = 0; s < B; s++) {
        const real *dz = ws->dz + (size_t)s * DH;
        add(ws->denc + ((size_t)(b->src_len[s] - 1) * B + s) * DH, dz, H);
        if (ws->D == 2)
            add(ws->denc + (size_t)s * DH + H, dz + H, H);
    }
    if (ws->drop_enc)
        nmt_dropout_apply(ws->denc, ws->enc_mask, ws->keep_enc, (size_t)Ts * B * DH);

    memset(ws->dsrc_x, 0, (size_t)Ts * B * E * sizeof(real));
    for (int d = 0; d < ws->D; d++)
        encode_backward(&w, &g, ws, b, d);

    if (ws->drop_emb)
        nmt_dropout_apply(ws->dsrc_x, ws->src_mask, ws->keep_emb, (size_t)Ts * B * E);
    nmt_embed_backward(g.src_emb, ws->dsrc_x, b->src, b->src_len, 0, Ts, B, E);
}
