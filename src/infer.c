/* The inference pass: encode a batch of sources once, then step R decoder
 * rows (hypotheses) one token at a time, each row attending its own source.
 * It calls the same encoder, decoder step and output layers as training, so
 * teacher-forced decoding reproduces the training forward's numbers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"
#include "seq2seq.h"

struct nmt_infer {
    nmt_workspace *ws;            /* encoder activations (decoder part unused) */
    int max_B, max_T, max_rows;
    int B, T, R;
    int *src_len;                 /* [max_B] */
    int *row_src, *row_src_next;  /* [max_rows] */
    int32_t *ids;                 /* [max_rows] checked copy of prev */
    unsigned char *active;        /* [max_rows] all 1: every row steps */
    real *s, *c, *s_next, *c_next; /* [max_rows, H] */
    real *emb;                    /* [max_rows, E] */
    real *gates, *hh;             /* [max_rows, G*H] */
    real *wa_s;                    /* [max_rows, A] */
    real *alpha;                  /* [max_rows, max_T] */
    real *ctx;                    /* [max_rows, D*H] */
    real *t;                      /* [max_rows, O] */
    real *logits;                 /* [max_rows, Vt] */
    real *lse;                    /* [max_rows] log-sum-exp of each row's logits */
};

void nmt_infer_free(nmt_infer *st)
{
    if (!st)
        return;
    nmt_workspace_free(st->ws);
    free(st->src_len);
    free(st->row_src);
    free(st->row_src_next);
    free(st->ids);
    free(st->active);
    free(st->s);
    free(st->c);
    free(st->s_next);
    free(st->c_next);
    free(st->emb);
    free(st->gates);
    free(st->hh);
    free(st->wa_s);
    free(st->alpha);
    free(st->ctx);
    free(st->t);
    free(st->logits);
    free(st->lse);
    free(st);
}

static real *reals(size_t n)
{
    return calloc(n ? n : 1, sizeof(real));
}

int nmt_infer_create(nmt_infer **out, const nmt_model *m, int max_B, int max_src_T,
                     int max_rows)
{
    *out = NULL;
    if (max_rows < 1 || max_rows > (1 << 20))
        return nmt_set_error(NMT_ERR_ARG, "bad number of decoding rows %d", max_rows);
    nmt_infer *st = calloc(1, sizeof *st);
    if (!st)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for decoding");
    int rc = nmt_workspace_alloc(&st->ws, m, max_B, max_src_T, 1, 0);
    if (rc) {
        free(st);
        return rc;
    }
    const nmt_workspace *ws = st->ws;
    size_t R = (size_t)max_rows, H = ws->H;
    st->max_B = max_B, st->max_T = max_src_T, st->max_rows = max_rows;
    st->src_len = calloc((size_t)max_B, sizeof *st->src_len);
    st->row_src = calloc(R, sizeof *st->row_src);
    st->row_src_next = calloc(R, sizeof *st->row_src_next);
    st->ids = calloc(R, sizeof *st->ids);
    st->active = malloc(R);
    st->s = reals(R * H), st->c = reals(R * H);
    st->s_next = reals(R * H), st->c_next = reals(R * H);
    st->emb = reals(R * ws->E);
    st->gates = reals(R * ws->G * H), st->hh = reals(R * ws->G * H);
    st->wa_s = reals(R * ws->A);
    st->alpha = reals(R * (size_t)max_src_T);
    st->ctx = reals(R * ws->D * H);
    st->t = reals(R * ws->O);
    st->logits = reals(R * ws->Vt);
    st->lse = reals(R);
    if (!st->src_len || !st->row_src || !st->row_src_next || !st->ids || !st->active ||
        !st->s || !st->c || !st->s_next || !st->c_next || !st->emb || !st->gates || !st->hh ||
        !st->wa_s || !st->alpha || !st->ctx || !st->t || !st->logits || !st->lse) {
        nmt_infer_free(st);
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for %d decoding rows", max_rows);
    }
    memset(st->active, 1, R);
    *out = st;
    return NMT_OK;
}

int nmt_infer_encode(const nmt_model *m, nmt_infer *st, const int32_t *src, const int *src_len,
                     int B, int T)
{
    if (B < 1 || B > st->max_B || B > st->max_rows || T < 1 || T > st->max_T)
        return nmt_set_error(NMT_ERR_ARG, "%d sources of %d steps exceed the decoder's %d x %d",
                             B, T, st->max_B, st->max_T);
    for (int b = 0; b < B; b++)
        if (src_len[b] < 1 || src_len[b] > T)
            return nmt_set_error(NMT_ERR_ARG, "source %d has a bad length %d", b, src_len[b]);
    for (size_t p = 0; p < (size_t)T * B; p++)
        if (src[p] < 0 || src[p] >= m->cfg.src_vocab)
            return nmt_set_error(NMT_ERR_ARG, "source id %d out of range", (int)src[p]);
    nmt_workspace *ws = st->ws;
    weights w;
    nmt_weights_resolve(&w, m, m->params);
    st->B = B, st->T = T, st->R = B;
    memcpy(st->src_len, src_len, (size_t)B * sizeof *src_len);
    for (int t = 0; t < T; t++)
        for (int b = 0; b < B; b++)
            ws->src_active[(size_t)t * B + b] = t < src_len[b];
    nmt_embed_forward(ws->src_x, src, w.src_emb, T * B, ws->E);
    nmt_seq2seq_encode(m, ws, st->src_len, B, T);
    size_t BH = (size_t)B * ws->H;
    memcpy(st->s, ws->s, BH * sizeof(real));
    memset(st->c, 0, BH * sizeof(real));
    for (int r = 0; r < B; r++)
        st->row_src[r] = r;
    return NMT_OK;
}

int nmt_infer_select(nmt_infer *st, const int *from, int R)
{
    if (R < 1 || R > st->max_rows)
        return nmt_set_error(NMT_ERR_ARG, "%d rows exceed the decoder's %d", R, st->max_rows);
    for (int r = 0; r < R; r++)
        if (from[r] < 0 || from[r] >= st->R)
            return nmt_set_error(NMT_ERR_ARG, "row %d selects row %d of %d", r, from[r], st->R);
    size_t H = st->ws->H;
    for (int r = 0; r < R; r++) {
        memcpy(st->s_next + r * H, st->s + (size_t)from[r] * H, H * sizeof(real));
        memcpy(st->c_next + r * H, st->c + (size_t)from[r] * H, H * sizeof(real));
        st->row_src_next[r] = st->row_src[from[r]];
    }
    real *tmp = st->s; st->s = st->s_next; st->s_next = tmp;
    tmp = st->c; st->c = st->c_next; st->c_next = tmp;
    int *itmp = st->row_src; st->row_src = st->row_src_next; st->row_src_next = itmp;
    st->R = R;
    return NMT_OK;
}

const float *nmt_infer_step_logits(const nmt_model *m, nmt_infer *st, const int32_t *prev,
                               float *att, const float **lse)
{
    const nmt_workspace *ws = st->ws;
    weights w;
    nmt_weights_resolve(&w, m, m->params);
    int R = st->R, E = ws->E, H = ws->H, GH = ws->G * ws->H, DH = ws->D * ws->H, O = ws->O;
    int Vt = ws->Vt;
    /* An id the model does not know reads as <unk> rather than out of bounds. */
    for (int r = 0; r < R; r++)
        st->ids[r] = prev[r] >= 0 && prev[r] < Vt ? prev[r] : NMT_UNK;
    /* The same sequence of operations as nmt_forward's decoder. */
    nmt_embed_forward(st->emb, st->ids, w.tgt_emb, R, E);
    nmt_linear_forward(st->gates, st->emb, w.dec_W_ih, w.dec_b, R, E, GH, E + DH, 0);
    decoder_step step = {.gates = st->gates, .hh = st->hh, .wa_s = st->wa_s, .alpha = st->alpha,
                         .ctx = st->ctx, .s = st->s_next, .c = st->c_next, .s_prev = st->s,
                         .c_prev = st->c, .active = st->active, .src_of = st->row_src, .R = R};
    nmt_decoder_step_forward(&step, m, &w, ws);
    nmt_deep_output_forward(st->t, st->s_next, st->ctx, st->emb, w.out_W_t, w.out_b_t, R, H, DH, E, O);
    nmt_linear_forward(st->logits, st->t, w.out_W, w.out_b, R, O, Vt, O, 0);
    nmt_log_sum_exp_rows(st->lse, st->logits, R, Vt);
    if (att && ws->attention)
        memcpy(att, st->alpha, (size_t)R * st->T * sizeof *att);
    real *tmp = st->s; st->s = st->s_next; st->s_next = tmp;
    tmp = st->c; st->c = st->c_next; st->c_next = tmp;
    *lse = st->lse;
    return st->logits;
}

int nmt_infer_check_finite(const float *lse, int R)
{
    for (int r = 0; r < R; r++)
        if (!isfinite(lse[r]))
            return nmt_set_error(NMT_ERR_NUMERIC,
                                 "the model's log-probabilities are not finite (%s): its weights "
                                 "are not numbers, or so large that its forward pass overflows",
                                 isnan(lse[r]) ? "NaN" : "Inf");
    return NMT_OK;
}

void nmt_infer_step(const nmt_model *m, nmt_infer *st, const int32_t *prev, float *logprobs,
                    float *att)
{
    const float *lse;
    const float *logits = nmt_infer_step_logits(m, st, prev, att, &lse);
    size_t Vt = (size_t)st->ws->Vt;
    for (int r = 0; r < st->R; r++)
        for (size_t v = 0; v < Vt; v++)
            logprobs[r * Vt + v] = logits[r * Vt + v] - lse[r];
}

int nmt_infer_rows(const nmt_infer *st)
{
    return st->R;
}

const int *nmt_infer_row_src(const nmt_infer *st)
{
    return st->row_src;
}
