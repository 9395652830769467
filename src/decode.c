/* Batched decoding over the inference pass. Greedy: every row takes its most
 * probable token each step; a row that produced </s> or reached its length
 * limit leaves the batch (nmt_infer_select compacts the rows), so a batch
 * costs what its live sentences cost. */
#include "nmt/decode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"
#include "nmt/vocab.h"

struct nmt_decoder {
    const nmt_model *model;
    nmt_decode_opts opts;
    int max_B, max_src_T, max_len; /* max_len: the longest output allowed at max_src_T */
    nmt_infer *infer;
    float *logprobs;     /* [max_B, Vt] */
    int32_t *prev;       /* [max_B] last token of each live row */
    int *row_sent;       /* [max_B] the sentence each live row translates */
    int *from;           /* [max_B] for nmt_infer_select */
    int32_t *ids;        /* [max_B, max_len] output tokens per sentence */
    int *limit;          /* [max_B] length limit per sentence */
    nmt_hypothesis *hyp; /* [max_B] */
};

void nmt_decode_opts_default(nmt_decode_opts *o)
{
    o->beam = 1;
    o->alpha = 1.0f;
    o->max_ratio = 2.0f;
    o->max_extra = 10;
    o->n_best = 1;
}

void nmt_decoder_free(nmt_decoder *d)
{
    if (!d)
        return;
    nmt_infer_free(d->infer);
    free(d->logprobs);
    free(d->prev);
    free(d->row_sent);
    free(d->from);
    free(d->ids);
    free(d->limit);
    free(d->hyp);
    free(d);
}

/* The length limit of a source of src_len positions (tokens + </s>). */
static int length_limit(const nmt_decode_opts *o, int src_len)
{
    double n = (double)o->max_ratio * (src_len > 0 ? src_len - 1 : 0) + o->max_extra;
    return n < 1 ? 1 : (int)n;
}

int nmt_decoder_create(nmt_decoder **out, const nmt_model *m, int max_B, int max_src_T,
                       const nmt_decode_opts *opts)
{
    *out = NULL;
    if (max_B < 1 || max_src_T < 1)
        return nmt_set_error(NMT_ERR_ARG, "decoder: batch %d x %d is empty", max_B, max_src_T);
    if (opts->beam != 1 || opts->n_best != 1)
        return nmt_set_error(NMT_ERR_ARG, "beam search (beam %d, n-best %d) is not "
                             "implemented yet; only greedy decoding (beam 1)",
                             opts->beam, opts->n_best);
    if (!(opts->max_ratio >= 0) || opts->max_extra < 0)
        return nmt_set_error(NMT_ERR_ARG, "decoder: bad length limit");
    nmt_decoder *d = calloc(1, sizeof *d);
    if (!d)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for the decoder");
    d->model = m;
    d->opts = *opts;
    d->max_B = max_B;
    d->max_src_T = max_src_T;
    d->max_len = length_limit(opts, max_src_T);
    size_t Vt = (size_t)m->cfg.tgt_vocab;
    size_t B = (size_t)max_B;
    d->logprobs = malloc(B * Vt * sizeof(float));
    d->prev = malloc(B * sizeof(int32_t));
    d->row_sent = malloc(B * sizeof(int));
    d->from = malloc(B * sizeof(int));
    d->ids = malloc(B * (size_t)d->max_len * sizeof(int32_t));
    d->limit = malloc(B * sizeof(int));
    d->hyp = calloc(B, sizeof(nmt_hypothesis));
    if (!d->logprobs || !d->prev || !d->row_sent || !d->from || !d->ids || !d->limit ||
        !d->hyp) {
        nmt_decoder_free(d);
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for the decoder");
    }
    int rc = nmt_infer_create(&d->infer, m, max_B, max_src_T, max_B);
    if (rc) {
        nmt_decoder_free(d);
        return rc;
    }
    *out = d;
    return NMT_OK;
}

/* The most probable token of one row; <pad> and <s> are never outputs. */
static int32_t argmax_token(const float *logprobs, int V)
{
    int32_t best = NMT_UNK;
    for (int32_t v = NMT_UNK; v < V; v++)
        if (v != NMT_BOS && logprobs[v] > logprobs[best])
            best = v;
    return best;
}

static int greedy(nmt_decoder *d, int B)
{
    const int V = d->model->cfg.tgt_vocab;
    int R = B;
    for (int r = 0; r < R; r++) {
        d->row_sent[r] = r;
        d->prev[r] = NMT_BOS;
    }
    while (R > 0) {
        nmt_infer_step(d->model, d->infer, d->prev, d->logprobs, NULL);
        int kept = 0;
        for (int r = 0; r < R; r++) {
            int b = d->row_sent[r];
            nmt_hypothesis *h = &d->hyp[b];
            const float *lp = d->logprobs + (size_t)r * (size_t)V;
            int32_t tok = argmax_token(lp, V);
            h->score += lp[tok];
            if (tok == NMT_EOS) {
                h->finished = 1;
                continue;
            }
            d->ids[(size_t)b * (size_t)d->max_len + (size_t)h->len++] = tok;
            if (h->len >= d->limit[b])
                continue;
            d->from[kept] = r;
            d->row_sent[kept] = b;
            d->prev[kept] = tok;
            kept++;
        }
        if (kept == 0)
            break;
        if (kept < R) {
            int rc = nmt_infer_select(d->infer, d->from, kept);
            if (rc)
                return rc;
        }
        R = kept;
    }
    return NMT_OK;
}

int nmt_decode(nmt_decoder *d, const int32_t *src, const int *src_len, int B, int T)
{
    if (B < 1 || B > d->max_B || T < 1 || T > d->max_src_T)
        return nmt_set_error(NMT_ERR_ARG, "decoder: batch %d x %d exceeds %d x %d", B, T,
                             d->max_B, d->max_src_T);
    for (int b = 0; b < B; b++) {
        if (src_len[b] < 1 || src_len[b] > T)
            return nmt_set_error(NMT_ERR_ARG, "decoder: source %d has length %d", b,
                                 src_len[b]);
        d->limit[b] = length_limit(&d->opts, src_len[b]);
        d->hyp[b] = (nmt_hypothesis){.ids = d->ids + (size_t)b * (size_t)d->max_len};
    }
    int rc = nmt_infer_encode(d->model, d->infer, src, src_len, B, T);
    if (rc)
        return rc;
    rc = greedy(d, B);
    if (rc)
        return rc;
    for (int b = 0; b < B; b++) {
        nmt_hypothesis *h = &d->hyp[b];
        double n = (double)(h->len + h->finished);
        h->norm_score = n > 0 ? (float)((double)h->score / pow(n, (double)d->opts.alpha)) : h->score;
    }
    return NMT_OK;
}

const nmt_hypothesis *nmt_decoder_result(const nmt_decoder *d, int b, int k)
{
    if (b < 0 || b >= d->max_B || k != 0)
        return NULL;
    return &d->hyp[b];
}
