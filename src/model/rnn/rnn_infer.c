/* The RNN's inference pass: encode a batch of sources once, then step R
 * decoder rows (hypotheses) one token at a time, each row attending its own
 * source. It calls the same encoder, decoder step and output layers as
 * training, so teacher-forced decoding reproduces the training forward's
 * numbers. model/infer.c checks the arguments and keeps the rows' sources. */
#include <stdlib.h>
#include <string.h>

#include "model/rnn/rnn_pass.h"
#include "nmt/error.h"

typedef struct rnn_infer {
    rnn_workspace *ws;            /* encoder activations (decoder part unused) */
    int T;                        /* the encoded sources' steps */
    unsigned char *active;        /* [max_rows] all 1: every row steps */
    real *s, *c, *s_next, *c_next; /* [max_rows, H] */
    real *emb;                    /* [max_rows, E] */
    real *gates, *hh;             /* [max_rows, G*H] */
    real *wa_s;                   /* [max_rows, A] */
    real *alpha;                  /* [max_rows, max_T] */
    real *ctx;                    /* [max_rows, D*H] */
    real *t;                      /* [max_rows, O] */
    real *logits;                 /* [max_rows, Vt] */
} rnn_infer;

void nmt_rnn_infer_free(void *arg)
{
    rnn_infer *st = arg;
    if (!st)
        return;
    nmt_rnn_workspace_free(st->ws);
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
    free(st);
}

static real *reals(size_t n)
{
    return calloc(n ? n : 1, sizeof(real));
}

void *nmt_rnn_infer_create(const nmt_model *m, int max_B, int max_Ts, int max_rows, int max_steps)
{
    (void)max_steps; /* a step reads only the last state */
    rnn_infer *st = calloc(1, sizeof *st);
    if (!st) {
        nmt_set_error(NMT_ERR_NOMEM, "out of memory for decoding");
        return NULL;
    }
    if (nmt_rnn_workspace_alloc(&st->ws, m, max_B, max_Ts, 1, 0)) {
        free(st);
        return NULL;
    }
    const rnn_workspace *ws = st->ws;
    size_t R = (size_t)max_rows, H = ws->H;
    st->active = malloc(R);
    st->s = reals(R * H), st->c = reals(R * H);
    st->s_next = reals(R * H), st->c_next = reals(R * H);
    st->emb = reals(R * ws->E);
    st->gates = reals(R * ws->G * H), st->hh = reals(R * ws->G * H);
    st->wa_s = reals(R * ws->A);
    st->alpha = reals(R * (size_t)max_Ts);
    st->ctx = reals(R * ws->D * H);
    st->t = reals(R * ws->O);
    st->logits = reals(R * ws->Vt);
    if (!st->active || !st->s || !st->c || !st->s_next || !st->c_next || !st->emb ||
        !st->gates || !st->hh || !st->wa_s || !st->alpha || !st->ctx || !st->t || !st->logits) {
        nmt_rnn_infer_free(st);
        nmt_set_error(NMT_ERR_NOMEM, "out of memory for %d decoding rows", max_rows);
        return NULL;
    }
    memset(st->active, 1, R);
    return st;
}

int nmt_rnn_infer_encode(const nmt_model *m, void *arg, const int32_t *src, const int *src_len, int B,
                     int T)
{
    rnn_infer *st = arg;
    rnn_workspace *ws = st->ws;
    st->T = T;
    for (int t = 0; t < T; t++)
        for (int b = 0; b < B; b++)
            ws->src_active[(size_t)t * B + b] = t < src_len[b];
    nmt_embed_forward(ws->src_x, src, rnn_weights(m)->src_emb, T * B, ws->E);
    nmt_rnn_encode(m, ws, src_len, B, T);
    size_t BH = (size_t)B * ws->H;
    memcpy(st->s, ws->s, BH * sizeof(real));
    memset(st->c, 0, BH * sizeof(real));
    return NMT_OK;
}

int nmt_rnn_infer_select(void *arg, const int *from, int R, int old_R)
{
    (void)old_R;
    rnn_infer *st = arg;
    size_t H = st->ws->H;
    for (int r = 0; r < R; r++) {
        memcpy(st->s_next + r * H, st->s + (size_t)from[r] * H, H * sizeof(real));
        memcpy(st->c_next + r * H, st->c + (size_t)from[r] * H, H * sizeof(real));
    }
    real *tmp = st->s; st->s = st->s_next; st->s_next = tmp;
    tmp = st->c; st->c = st->c_next; st->c_next = tmp;
    return NMT_OK;
}

const nmt_real *nmt_rnn_infer_step(const nmt_model *m, void *arg, const int32_t *prev,
                               const int *row_src, int R, int map, float *att)
{
    (void)map; /* one map, the attention: NMT_MAP_EVERY writes the same [1, R, T] */
    rnn_infer *st = arg;
    const rnn_workspace *ws = st->ws;
    const weights *w = rnn_weights(m);
    int E = ws->E, H = ws->H, GH = ws->G * ws->H, DH = ws->D * ws->H, O = ws->O;
    /* The same sequence of operations as the training forward's decoder. */
    nmt_embed_forward(st->emb, prev, w->tgt_emb, R, E);
    nmt_linear_forward(st->gates, st->emb, w->dec_W_ih, w->dec_b, R, E, GH, E + DH, 0);
    decoder_step step = {.gates = st->gates, .hh = st->hh, .wa_s = st->wa_s, .alpha = st->alpha,
                         .ctx = st->ctx, .s = st->s_next, .c = st->c_next, .s_prev = st->s,
                         .c_prev = st->c, .active = st->active, .src_of = row_src, .R = R};
    nmt_decoder_step_forward(&step, m, w, ws);
    deep_output L = {.s = st->s_next, .c = st->ctx, .e = st->emb, .W_t = w->out_W_t,
                     .b_t = w->out_b_t, .H = H, .DH = DH, .E = E, .O = O};
    nmt_deep_output_forward(st->t, &L, R);
    nmt_linear_forward(st->logits, st->t, w->out_W, w->out_b, R, O, ws->Vt, O, 0);
    if (att && ws->attention)
        memcpy(att, st->alpha, (size_t)R * st->T * sizeof *att);
    real *tmp = st->s; st->s = st->s_next; st->s_next = tmp;
    tmp = st->c; st->c = st->c_next; st->c_next = tmp;
    return st->logits;
}
