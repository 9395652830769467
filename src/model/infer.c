/* The inference pass of nmt/model.h, the same for every architecture: it
 * checks the calls, keeps which source each decoder row reads, and turns
 * the architecture's logits into log-probabilities; the architecture
 * encodes and steps. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/arch.h"
#include "model/layers.h"
#include "nmt/error.h"

struct nmt_infer {
    const nmt_arch_ops *ops;
    void *arch;                   /* the architecture's decoding state */
    int max_B, max_T, max_rows, max_steps;
    int B, T, R;                  /* the encoded sources, their steps, the rows */
    int steps;                    /* decoder steps taken since encoding */
    int map, n_maps;              /* the attention map nmt_infer_step writes (or
                                   * NMT_MAP_EVERY), of n_maps */
    int Vt;
    int *row_src, *row_src_next;  /* [max_rows] */
    int32_t *ids;                 /* [max_rows] checked copy of prev */
    real *lse;                    /* [max_rows] log-sum-exp of each row's logits */
};

void nmt_infer_free(nmt_infer *st)
{
    if (!st)
        return;
    if (st->arch)
        st->ops->infer_free(st->arch);
    free(st->row_src);
    free(st->row_src_next);
    free(st->ids);
    free(st->lse);
    free(st);
}

int nmt_infer_create(nmt_infer **out, const nmt_model *m, int max_B, int max_src_T,
                     int max_rows, int max_steps)
{
    *out = NULL;
    if (max_rows < 1 || max_rows > (1 << 20))
        return nmt_set_error(NMT_ERR_ARG, "bad number of decoding rows %d", max_rows);
    if (max_src_T > (1 << 16) || max_steps > (1 << 17))
        return nmt_set_error(NMT_ERR_ARG, "a sentence of %d positions is too long to decode "
                             "(at most %d)", max_src_T > (1 << 16) ? max_src_T : max_steps,
                             max_src_T > (1 << 16) ? 1 << 16 : 1 << 17);
    if (max_B < 1 || max_B > (1 << 20) || max_src_T < 1 || max_steps < 1)
        return nmt_set_error(NMT_ERR_ARG, "bad decoding sizes %d x %d, %d steps", max_B,
                             max_src_T, max_steps);
    nmt_infer *st = calloc(1, sizeof *st);
    if (!st)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for decoding");
    st->ops = m->ops;
    st->max_B = max_B, st->max_T = max_src_T, st->max_rows = max_rows;
    st->max_steps = max_steps;
    st->Vt = m->cfg.tgt_vocab;
    st->map = nmt_model_default_attention_map(m);
    st->n_maps = nmt_model_attention_maps(m);
    size_t R = (size_t)max_rows;
    st->row_src = calloc(R, sizeof *st->row_src);
    st->row_src_next = calloc(R, sizeof *st->row_src_next);
    st->ids = calloc(R, sizeof *st->ids);
    st->lse = calloc(R, sizeof *st->lse);
    if (!st->row_src || !st->row_src_next || !st->ids || !st->lse) {
        nmt_infer_free(st);
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for %d decoding rows", max_rows);
    }
    st->arch = m->ops->infer_create(m, max_B, max_src_T, max_rows, max_steps);
    if (!st->arch) {
        nmt_infer_free(st);
        return NMT_ERR_NOMEM; /* the architecture said why */
    }
    *out = st;
    return NMT_OK;
}

int nmt_infer_set_attention_map(nmt_infer *st, int map)
{
    if ((map < 0 || map >= st->n_maps) && map != NMT_MAP_EVERY)
        return nmt_set_error(NMT_ERR_ARG, "attention map %d of %d", map, st->n_maps);
    st->map = map;
    return NMT_OK;
}

int nmt_infer_attention_map(const nmt_infer *st)
{
    return st->map;
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
    int rc = st->ops->infer_encode(m, st->arch, src, src_len, B, T);
    if (rc)
        return rc;
    st->B = B, st->T = T, st->R = B;
    st->steps = 0;
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
    int rc = st->ops->infer_select(st->arch, from, R, st->R);
    if (rc)
        return rc;
    for (int r = 0; r < R; r++)
        st->row_src_next[r] = st->row_src[from[r]];
    int *tmp = st->row_src;
    st->row_src = st->row_src_next;
    st->row_src_next = tmp;
    st->R = R;
    return NMT_OK;
}

const float *nmt_infer_step_logits(const nmt_model *m, nmt_infer *st, const int32_t *prev,
                                   float *att, const float **lse)
{
    if (st->steps >= st->max_steps) {
        nmt_set_error(NMT_ERR_ARG, "decoding step %d past the decoder's %d", st->steps + 1,
                      st->max_steps);
        return NULL;
    }
    int R = st->R, Vt = st->Vt;
    /* An id the model does not know reads as <unk> rather than out of bounds. */
    for (int r = 0; r < R; r++)
        st->ids[r] = prev[r] >= 0 && prev[r] < Vt ? prev[r] : NMT_UNK;
    const real *logits = st->ops->infer_step(m, st->arch, st->ids, st->row_src, R, st->map, att);
    nmt_log_sum_exp_rows(st->lse, logits, R, Vt);
    st->steps++;
    *lse = st->lse;
    return logits;
}

int nmt_infer_step(const nmt_model *m, nmt_infer *st, const int32_t *prev, float *logprobs,
                   float *att)
{
    const float *lse;
    const float *logits = nmt_infer_step_logits(m, st, prev, att, &lse);
    if (!logits)
        return NMT_ERR_ARG;
    size_t Vt = (size_t)st->Vt;
    for (int r = 0; r < st->R; r++)
        for (size_t v = 0; v < Vt; v++)
            logprobs[r * Vt + v] = logits[r * Vt + v] - lse[r];
    return NMT_OK;
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

int nmt_infer_rows(const nmt_infer *st)
{
    return st->R;
}

const int *nmt_infer_row_src(const nmt_infer *st)
{
    return st->row_src;
}
