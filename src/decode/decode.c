/* Batched beam search (greedy is beam 1) over the inference pass. The rows of
 * nmt_infer are the open hypotheses of all sentences still being searched,
 * grouped by sentence and, within one, best first. A sentence that is done
 * leaves the batch (nmt_infer_select drops its rows), so a batch costs what
 * its live hypotheses cost. The search rules are documented in nmt/decode.h.
 *
 * Hypotheses are not copied as they grow: each step records, for every new
 * open hypothesis, its token, the slot of its parent and (on request) the
 * attention row, and results are traced back through these records.
 *
 * Sampling and forced prefixes use the same machinery: a sampled sentence's
 * rows are its n_best samples, each extended by one drawn token a step
 * (sample.c), and within a prefix every row is extended by the prefix's
 * token alone; the bookkeeping of finished and open hypotheses is the
 * beam's.
 *
 * An ensemble (several members) runs every member's inference pass side by
 * side on the same rows: each step, each member's log-probabilities are
 * averaged into one row of scores per hypothesis, and from there on the
 * search sees one model whose log-sum-exp is 0. One member skips the
 * averaging and searches its own logits, exactly as before ensembles. */
#include "nmt/decode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"
#include "nmt/vocab.h"
#include "sample.h"


/* One extension of an open hypothesis. */
typedef struct candidate {
    double score; /* parent's score + log p(token) */
    float lp;     /* log p(token), to rank within one row */
    int slot;     /* the parent's slot (rank) in its sentence's beam */
    int32_t tok;
} candidate;

/* A hypothesis that produced </s> at position pos. */
typedef struct finished_hyp {
    double score, norm;
    int pos;    /* its token count; </s> sits at this position */
    int parent; /* slot of its last token at position pos - 1 (unused at pos 0) */
} finished_hyp;

struct nmt_decoder {
    const nmt_model **models; /* [n_models] the members (not owned) */
    int n_models;
    nmt_decode_opts opts;
    int K, C;          /* beam, candidates looked at per step (2K) */
    int V;             /* target vocabulary */
    int max_B, max_src_T, max_len; /* max_len: the longest output allowed at max_src_T */
    int keep_att;      /* attention rows are recorded */
    nmt_infer **infer; /* [n_models] each member's state */
    /* the rows of one step, [max_B * K] */
    const float *logits; /* [rows, V] the step's, held by the inference state
                          * (an ensemble's: mean_lp) */
    const float *lse;  /* [rows] their log-sum-exp: log p = logit - lse */
    float *att;        /* [rows, T] the step's attention, when keep_att */
    /* an ensemble's (n_models > 1) */
    float *mean_lp;    /* [rows, V] the members' mean log-probabilities */
    float *zero_lse;   /* [rows] zeros: mean_lp are already log-probabilities */
    float *member_att; /* [rows, T] one member's attention, when keep_att */
    int32_t *prev;     /* last token of each row */
    int *from;         /* parent row of each next row, for nmt_infer_select */
    int *row_sent, *row_sent_next;
    /* per sentence */
    int *limit;        /* [max_B] length limit */
    int *src_len;      /* [max_B] */
    int *n_open;       /* [max_B] open hypotheses */
    int *n_fin;        /* [max_B] finished ones kept (<= K) */
    int *fin_count;    /* [max_B] finished ones seen */
    double *open_score; /* [max_B, K] */
    double *next_score; /* [K] scratch */
    finished_hyp *fin; /* [max_B, K] best first */
    float *fin_att;    /* [max_B, K, max_src_T] each finished one's </s> row */
    /* history, position-major: entry (pos, b, slot) at (pos * max_B + b) * K + slot */
    int32_t *hist_tok;
    int *hist_parent;
    float *hist_att;   /* [.., max_src_T] when keep_att */
    candidate *cand;   /* [K * C] scratch of one sentence */
    /* sampling (K = n_best samples per sentence) */
    nmt_rng *rng;      /* [max_B] each sentence's generator */
    nmt_sample_cand *draw; /* [V] scratch of one draw */
    /* forced prefixes of the current call */
    const int32_t **pre; /* [max_B] */
    int *pre_len;        /* [max_B] */
    /* results */
    nmt_hypothesis *res; /* [max_B, n_best] */
    int *n_res;          /* [max_B] */
    int32_t *res_ids;    /* [max_B, n_best, max_len] */
    float *res_att;      /* [max_B, n_best, max_len, max_src_T] when keep_att */
};

void nmt_decode_opts_default(nmt_decode_opts *o)
{
    o->beam = 1;
    o->alpha = 1.0f;
    o->max_ratio = 2.0f;
    o->max_extra = 10;
    o->n_best = 1;
    o->attention = 0;
    o->attention_map = -1;
    o->sample = 0;
    o->temperature = 1.0f;
    o->top_k = 0;
    o->top_p = 1.0f;
    o->seed = 0;
}

void nmt_decode_opts_standard(nmt_decode_opts *o)
{
    nmt_decode_opts_default(o);
    o->beam = NMT_DEFAULT_BEAM;
    o->alpha = NMT_ALPHA_OF_MODEL;
    o->max_ratio = NMT_DEFAULT_MAX_RATIO;
    o->max_extra = NMT_DEFAULT_MAX_EXTRA;
}

void nmt_decoder_free(nmt_decoder *d)
{
    if (!d)
        return;
    for (int k = 0; d->infer && k < d->n_models; k++)
        nmt_infer_free(d->infer[k]);
    free(d->infer);
    free(d->models);
    free(d->mean_lp);
    free(d->zero_lse);
    free(d->member_att);
    free(d->att);
    free(d->prev);
    free(d->from);
    free(d->row_sent);
    free(d->row_sent_next);
    free(d->limit);
    free(d->src_len);
    free(d->n_open);
    free(d->n_fin);
    free(d->fin_count);
    free(d->open_score);
    free(d->next_score);
    free(d->fin);
    free(d->fin_att);
    free(d->hist_tok);
    free(d->hist_parent);
    free(d->hist_att);
    free(d->cand);
    free(d->rng);
    free(d->draw);
    free(d->pre);
    free(d->pre_len);
    free(d->res);
    free(d->n_res);
    free(d->res_ids);
    free(d->res_att);
    free(d);
}

int nmt_decode_length_limit(const nmt_decode_opts *o, int src_len)
{
    double n = (double)o->max_ratio * (src_len > 0 ? src_len - 1 : 0) + o->max_extra;
    return n < 1 ? 1 : n > (1 << 20) ? 1 << 20 : (int)n;
}

/* calloc of n * size bytes, refusing products that overflow. */
static void *array(size_t n, size_t size)
{
    if (n && size > SIZE_MAX / n)
        return NULL;
    return calloc(n ? n : 1, size);
}

int nmt_decoder_create(nmt_decoder **out, const nmt_model *m, int max_B, int max_src_T,
                       const nmt_decode_opts *opts)
{
    return nmt_decoder_create_ensemble(out, &m, 1, max_B, max_src_T, opts);
}

/* Whether every member has attention maps (an ensemble's attention is the
 * mean of its members', so all must have one). */
static int all_attend(const nmt_model *const *models, int n)
{
    for (int k = 0; k < n; k++)
        if (nmt_model_attention_maps(models[k]) == 0)
            return 0;
    return 1;
}

float nmt_models_alpha(const nmt_model *const *models, int n_models)
{
    double sum = 0;
    for (int k = 0; k < n_models; k++)
        sum += models[k]->decode_alpha >= 0 ? (double)models[k]->decode_alpha : (double)NMT_DEFAULT_ALPHA;
    return n_models > 0 ? (float)(sum / n_models) : NMT_DEFAULT_ALPHA;
}

int nmt_decoder_create_ensemble(nmt_decoder **out, const nmt_model *const *models, int n_models,
                                int max_B, int max_src_T, const nmt_decode_opts *opts)
{
    *out = NULL;
    if (n_models < 1 || n_models > NMT_MAX_ENSEMBLE)
        return nmt_set_error(NMT_ERR_ARG, "decoder: %d models are not in 1..%d", n_models,
                             NMT_MAX_ENSEMBLE);
    int rc = nmt_ensemble_check(models, NULL, n_models);
    if (rc)
        return rc;
    if (n_models > 1 && opts->attention && opts->attention_map >= 0)
        return nmt_set_error(NMT_ERR_ARG, "decoder: an ensemble's attention is the mean of its "
                             "members' default maps; map %d cannot be chosen",
                             opts->attention_map);
    if (max_B < 1 || max_src_T < 1)
        return nmt_set_error(NMT_ERR_ARG, "decoder: batch %d x %d is empty", max_B, max_src_T);
    if (opts->beam < 1 || opts->beam > 4096)
        return nmt_set_error(NMT_ERR_ARG, "decoder: beam %d is not in 1..4096", opts->beam);
    if (opts->sample) {
        if (opts->beam != 1)
            return nmt_set_error(NMT_ERR_ARG, "decoder: sampling takes beam 1, not %d",
                                 opts->beam);
        if (!(opts->temperature > 0) || !isfinite(opts->temperature))
            return nmt_set_error(NMT_ERR_ARG, "decoder: temperature %g is not a finite "
                                 "number > 0", (double)opts->temperature);
        if (opts->top_k < 0)
            return nmt_set_error(NMT_ERR_ARG, "decoder: top-k %d is negative", opts->top_k);
        if (!(opts->top_p > 0 && opts->top_p <= 1))
            return nmt_set_error(NMT_ERR_ARG, "decoder: top-p %g is not in (0, 1]",
                                 (double)opts->top_p);
        if (opts->n_best < 1 || opts->n_best > 4096)
            return nmt_set_error(NMT_ERR_ARG, "decoder: %d samples are not in 1..4096",
                                 opts->n_best);
    } else if (opts->n_best < 1 || opts->n_best > opts->beam)
        return nmt_set_error(NMT_ERR_ARG, "decoder: n-best %d is not in 1..beam (%d)",
                             opts->n_best, opts->beam);
    if (!(opts->alpha >= 0 || opts->alpha == NMT_ALPHA_OF_MODEL) || !isfinite(opts->alpha))
        return nmt_set_error(NMT_ERR_ARG, "decoder: length normalisation alpha %g is not a "
                             "finite number >= 0", (double)opts->alpha);
    if (!(opts->max_ratio >= 0) || !isfinite(opts->max_ratio) || opts->max_extra < 0)
        return nmt_set_error(NMT_ERR_ARG, "decoder: bad length limit");
    /* with sampling, the rows of a sentence are its samples */
    int per = opts->sample ? opts->n_best : opts->beam;
    if ((long long)max_B * per > (1 << 20))
        return nmt_set_error(NMT_ERR_ARG, "decoder: %d sentences x beam %d are too many rows",
                             max_B, per);
    nmt_decoder *d = calloc(1, sizeof *d);
    if (!d)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for the decoder");
    d->models = malloc((size_t)n_models * sizeof *d->models);
    d->infer = calloc((size_t)n_models, sizeof *d->infer);
    if (!d->models || !d->infer) {
        nmt_decoder_free(d);
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for the decoder");
    }
    memcpy(d->models, models, (size_t)n_models * sizeof *d->models);
    d->n_models = n_models;
    const nmt_model *m = models[0];
    d->opts = *opts;
    if (opts->alpha == NMT_ALPHA_OF_MODEL)
        d->opts.alpha = nmt_models_alpha(models, n_models);
    d->K = per;
    d->C = 2 * per;
    d->V = m->cfg.tgt_vocab;
    d->max_B = max_B;
    d->max_src_T = max_src_T;
    d->max_len = nmt_decode_length_limit(opts, max_src_T);
    d->keep_att = opts->attention && all_attend(models, n_models);
    size_t B = (size_t)max_B, K = (size_t)d->K, rows = B * K, T = (size_t)max_src_T;
    size_t L = (size_t)d->max_len, NB = (size_t)opts->n_best;
    d->prev = array(rows, sizeof(int32_t));
    d->from = array(rows, sizeof(int));
    d->row_sent = array(rows, sizeof(int));
    d->row_sent_next = array(rows, sizeof(int));
    d->limit = array(B, sizeof(int));
    d->src_len = array(B, sizeof(int));
    d->n_open = array(B, sizeof(int));
    d->n_fin = array(B, sizeof(int));
    d->fin_count = array(B, sizeof(int));
    d->open_score = array(rows, sizeof(double));
    d->next_score = array(K, sizeof(double));
    d->fin = array(rows, sizeof(finished_hyp));
    d->hist_tok = array(L * rows, sizeof(int32_t));
    d->hist_parent = array(L * rows, sizeof(int));
    d->cand = array(K * (size_t)d->C, sizeof(candidate));
    d->res = array(B * NB, sizeof(nmt_hypothesis));
    d->n_res = array(B, sizeof(int));
    d->res_ids = array(B * NB * L, sizeof(int32_t));
    if (opts->sample) {
        d->rng = array(B, sizeof(nmt_rng));
        d->draw = array((size_t)d->V, sizeof(nmt_sample_cand));
    }
    d->pre = array(B, sizeof *d->pre);
    d->pre_len = array(B, sizeof(int));
    int ok = d->pre && d->pre_len && (!opts->sample || (d->rng && d->draw)) &&
             d->prev && d->from && d->row_sent && d->row_sent_next && d->limit &&
             d->src_len && d->n_open && d->n_fin && d->fin_count && d->open_score && d->next_score && d->fin &&
             d->hist_tok && d->hist_parent && d->cand && d->res && d->n_res && d->res_ids;
    if (ok && d->keep_att) {
        d->att = array(rows, T * sizeof(float));
        d->fin_att = array(rows, T * sizeof(float));
        d->hist_att = L * rows <= SIZE_MAX / T ? array(L * rows * T, sizeof(float)) : NULL;
        d->res_att = B * NB * L <= SIZE_MAX / T ? array(B * NB * L * T, sizeof(float)) : NULL;
        ok = d->att && d->fin_att && d->hist_att && d->res_att;
    }
    if (ok && n_models > 1) {
        d->mean_lp = rows <= SIZE_MAX / (size_t)d->V ? array(rows * (size_t)d->V, sizeof(float))
                                                    : NULL;
        d->zero_lse = array(rows, sizeof(float));
        d->member_att = d->keep_att ? array(rows, T * sizeof(float)) : NULL;
        ok = d->mean_lp && d->zero_lse && (!d->keep_att || d->member_att);
    }
    if (!ok) {
        nmt_decoder_free(d);
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for the decoder (%d sentences of "
                             "up to %d tokens, beam %d)", max_B, max_src_T, opts->beam);
    }
    /* a hypothesis takes at most max_len tokens and then </s> */
    for (int k = 0; k < n_models && !rc; k++) {
        rc = nmt_infer_create(&d->infer[k], models[k], max_B, max_src_T, (int)rows,
                              d->max_len + 1);
        if (!rc && d->keep_att && opts->attention_map >= 0)
            rc = nmt_infer_set_attention_map(d->infer[k], opts->attention_map);
    }
    if (rc) {
        nmt_decoder_free(d);
        return rc;
    }
    *out = d;
    return NMT_OK;
}

static double normalised(double score, int length, float alpha)
{
    return alpha == 0 || length <= 0 ? score : score / pow((double)length, (double)alpha);
}

static size_t hist_at(const nmt_decoder *d, int pos, int b, int slot)
{
    return ((size_t)pos * (size_t)d->max_B + (size_t)b) * (size_t)d->K + (size_t)slot;
}

/* The C most probable tokens of one row (logits and their log-sum-exp) into
 * top[0..n), best first; on equal log-probabilities the lower id first.
 * <pad> and <s> are never outputs. */
static int row_top(candidate *top, int C, const float *logits, float lse, int V, double base,
                   int slot)
{
    int n = 0;
    for (int32_t v = NMT_UNK; v < V; v++) {
        if (v == NMT_BOS)
            continue;
        float x = logits[v] - lse; /* rounded as nmt_infer_step rounds it */
        if (n == C && !(x > top[n - 1].lp))
            continue;
        int i = n < C ? n++ : C - 1;
        while (i > 0 && top[i - 1].lp < x) {
            top[i] = top[i - 1];
            i--;
        }
        top[i] = (candidate){.lp = x, .slot = slot, .tok = v};
    }
    for (int i = 0; i < n; i++)
        top[i].score = base + (double)top[i].lp;
    return n;
}

/* Best first; ties to the better parent, then the lower token: a total order,
 * so the search is deterministic. */
static int candidate_order(const void *pa, const void *pb)
{
    const candidate *a = pa, *b = pb;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    if (a->slot != b->slot)
        return a->slot < b->slot ? -1 : 1;
    return (a->tok > b->tok) - (a->tok < b->tok);
}

/* Adds a finished hypothesis to sentence b's list of the K best (by
 * normalised score; an equal one found later ranks after). */
static void add_finished(nmt_decoder *d, int b, const candidate *c, int pos, const float *att_row)
{
    int K = d->K, n = d->n_fin[b];
    finished_hyp *list = d->fin + (size_t)b * K;
    double norm = normalised(c->score, pos + 1, d->opts.alpha);
    d->fin_count[b]++;
    if (n == K && !(norm > list[K - 1].norm))
        return;
    int i = n < K ? n++ : K - 1;
    size_t T = (size_t)d->max_src_T;
    float *rows = d->keep_att ? d->fin_att + (size_t)b * K * T : NULL;
    while (i > 0 && list[i - 1].norm < norm) {
        list[i] = list[i - 1];
        if (rows)
            memcpy(rows + (size_t)i * T, rows + (size_t)(i - 1) * T, T * sizeof(float));
        i--;
    }
    list[i] = (finished_hyp){.score = c->score, .norm = norm, .pos = pos, .parent = c->slot};
    if (rows)
        memcpy(rows + (size_t)i * T, att_row, (size_t)d->src_len[b] * sizeof(float));
    d->n_fin[b] = n;
}

/* Writes result k of sentence b: the open hypothesis in `slot` at position
 * pos traced back, plus a final </s> row when finished. */
static void trace(nmt_decoder *d, int b, int k, int pos, int slot, double score, int finished,
                  const float *eos_att)
{
    size_t L = (size_t)d->max_len, T = (size_t)d->max_src_T, NB = (size_t)d->opts.n_best;
    size_t idx = (size_t)b * NB + (size_t)k;
    int32_t *ids = d->res_ids + idx * L;
    int len = pos + 1, n = d->src_len[b];
    float *att = d->keep_att ? d->res_att + idx * L * T : NULL;
    for (int p = pos; p >= 0; p--) {
        size_t h = hist_at(d, p, b, slot);
        ids[p] = d->hist_tok[h];
        if (att)
            memcpy(att + (size_t)p * n, d->hist_att + h * T, (size_t)n * sizeof(float));
        slot = d->hist_parent[h];
    }
    if (att && finished)
        memcpy(att + (size_t)len * n, eos_att, (size_t)n * sizeof(float));
    d->res[idx] = (nmt_hypothesis){
        .ids = ids, .len = len, .score = (float)score, .finished = finished, .att = att,
        .norm_score = (float)normalised(score, len + finished, d->opts.alpha)};
}

/* Sentence b is done after position pos: its n-best list from the finished
 * hypotheses, then (if too few) the open ones, best first. */
static void collect(nmt_decoder *d, int b, int pos)
{
    int NB = d->opts.n_best, K = d->K, k = 0;
    size_t T = (size_t)d->max_src_T;
    for (int i = 0; i < d->n_fin[b] && k < NB; i++, k++) {
        const finished_hyp *f = &d->fin[(size_t)b * K + i];
        const float *eos_att = d->keep_att ? d->fin_att + ((size_t)b * K + i) * T : NULL;
        /* pos - 1 = -1: the empty translation, just </s> */
        trace(d, b, k, f->pos - 1, f->parent, f->score, 1, eos_att);
    }
    for (int s = 0; s < d->n_open[b] && k < NB; s++, k++)
        trace(d, b, k, pos, s, d->open_score[(size_t)b * K + s], 0, NULL);
    d->n_res[b] = k;
    if (d->opts.sample) {
        /* samples are listed by score alone, finished or cut: a stable
         * insertion sort, so equal scores keep the order they were drawn in */
        nmt_hypothesis *r = d->res + (size_t)b * NB;
        for (int i = 1; i < k; i++) {
            nmt_hypothesis h = r[i];
            int j = i;
            for (; j > 0 && r[j - 1].norm_score < h.norm_score; j--)
                r[j] = r[j - 1];
            r[j] = h;
        }
    }
}

/* Sampling: each open sample of sentence b (rows r0..) draws its one
 * candidate, in slot order, from the sentence's own generator. At position 0
 * the sentence has one row, <s>, from which all K samples draw their first
 * token. */
static int draw_candidates(nmt_decoder *d, int b, int r0, int pos, const double *score)
{
    int V = d->V, n = pos == 0 ? d->K : d->n_open[b];
    for (int i = 0; i < n; i++) {
        int s = pos == 0 ? 0 : i;
        const float *row = d->logits + (size_t)(r0 + s) * V;
        int32_t tok = nmt_sample_draw(row, V, &d->opts, &d->rng[b], d->draw);
        float lp = row[tok] - d->lse[r0 + s]; /* as nmt_infer_step rounds it */
        d->cand[i] = (candidate){.score = score[s] + (double)lp, .lp = lp, .slot = s, .tok = tok};
    }
    return n;
}

/* Within a prefix: every open hypothesis of sentence b (rows r0..) takes
 * the forced token, in slot order (at position 0 a sampled sentence's K
 * samples all start from its one row). */
static int forced_candidates(nmt_decoder *d, int b, int r0, int pos, const double *score)
{
    int V = d->V, n = d->opts.sample && pos == 0 ? d->K : d->n_open[b];
    int32_t tok = d->pre[b][pos];
    for (int i = 0; i < n; i++) {
        int s = pos == 0 ? 0 : i;
        float lp = d->logits[(size_t)(r0 + s) * V + tok] - d->lse[r0 + s];
        d->cand[i] = (candidate){.score = score[s] + (double)lp, .lp = lp, .slot = s, .tok = tok};
    }
    return n;
}

/* One step of sentence b, whose n_open rows start at row r0: picks the next
 * open hypotheses (recorded at position pos) and the finished ones. Returns 1
 * when the sentence is done. */
static int advance(nmt_decoder *d, int b, int r0, int pos, int T)
{
    int K = d->K, C = d->C, V = d->V, n = d->n_open[b];
    double *score = d->open_score + (size_t)b * K;
    int total = 0;
    if (pos < d->pre_len[b]) {
        total = forced_candidates(d, b, r0, pos, score);
    } else if (d->opts.sample) {
        /* one candidate per sample, kept in slot order: no ranking */
        total = draw_candidates(d, b, r0, pos, score);
    } else {
        for (int s = 0; s < n; s++)
            total += row_top(d->cand + total, C, d->logits + (size_t)(r0 + s) * V,
                             d->lse[r0 + s], V, score[s], s);
        qsort(d->cand, (size_t)total, sizeof *d->cand, candidate_order);
        if (total > C)
            total = C;
    }
    double *next = d->next_score;
    int n_next = 0;
    for (int i = 0; i < total; i++) {
        const candidate *c = &d->cand[i];
        const float *att_row = d->keep_att ? d->att + (size_t)(r0 + c->slot) * T : NULL;
        if (c->tok == NMT_EOS) {
            if (i < K)
                add_finished(d, b, c, pos, att_row);
            continue;
        }
        if (n_next == K)
            continue;
        size_t h = hist_at(d, pos, b, n_next);
        d->hist_tok[h] = c->tok;
        d->hist_parent[h] = c->slot;
        if (att_row)
            memcpy(d->hist_att + h * (size_t)d->max_src_T, att_row,
                   (size_t)d->src_len[b] * sizeof(float));
        next[n_next++] = c->score;
    }
    memcpy(score, next, (size_t)n_next * sizeof *score);
    d->n_open[b] = n_next;
    int done = d->fin_count[b] >= K || pos + 1 >= d->limit[b] || n_next == 0;
    int NB = d->opts.n_best;
    /* samples are not searched best first: every one runs to its end */
    if (!done && !d->opts.sample && d->n_fin[b] >= NB) {
        /* rule (3) of nmt/decode.h: the best score the leading open
         * hypothesis could still reach */
        double s = score[0];
        double best = normalised(s, s <= 0 ? d->limit[b] : pos + 2, d->opts.alpha);
        done = best <= d->fin[(size_t)b * K + NB - 1].norm;
    }
    if (done)
        collect(d, b, pos);
    return done;
}

/* One decoder step of every member for the R rows: d->logits, d->lse and
 * (keep_att) d->att for the search. One member's are its own; an
 * ensemble's log-probability of a token is the mean of its members'
 * (log-softmax, then the mean), and its attention the mean of theirs. */
static int step(nmt_decoder *d, int R, int T)
{
    size_t V = (size_t)d->V, plane = (size_t)R * V, att_n = (size_t)R * (size_t)T;
    for (int k = 0; k < d->n_models; k++) {
        float *att = !d->keep_att ? NULL : k == 0 ? d->att : d->member_att;
        const float *lse;
        const float *logits = nmt_infer_step_logits(d->models[k], d->infer[k], d->prev, att,
                                                    &lse);
        if (!logits) /* past the steps the decoder was made for: cannot be */
            return NMT_ERR_ARG;
        /* NaN scores would otherwise be ranked (a word repeated to the
         * length limit, or an empty line) and the search succeed */
        int rc = nmt_infer_check_finite(lse, R);
        if (rc)
            return rc;
        if (d->n_models == 1) {
            d->logits = logits;
            d->lse = lse;
            return NMT_OK;
        }
        for (size_t r = 0; r < (size_t)R; r++) {
            const float *row = logits + r * V;
            float *sum = d->mean_lp + r * V, z = lse[r];
            if (k == 0)
                for (size_t v = 0; v < V; v++)
                    sum[v] = row[v] - z; /* rounded as nmt_infer_step rounds it */
            else
                for (size_t v = 0; v < V; v++)
                    sum[v] += row[v] - z;
        }
        if (att && k > 0)
            for (size_t i = 0; i < att_n; i++)
                d->att[i] += att[i];
    }
    float n = (float)d->n_models;
    for (size_t i = 0; i < plane; i++)
        d->mean_lp[i] /= n;
    for (size_t i = 0; d->keep_att && i < att_n; i++)
        d->att[i] /= n;
    d->logits = d->mean_lp;
    d->lse = d->zero_lse;
    return NMT_OK;
}

static int search(nmt_decoder *d, int B, int T)
{
    int R = B;
    for (int b = 0; b < B; b++) {
        d->n_open[b] = 1;
        d->open_score[(size_t)b * d->K] = 0;
        d->n_fin[b] = d->fin_count[b] = 0;
        d->n_res[b] = 0;
        d->row_sent[b] = b;
        d->prev[b] = NMT_BOS;
    }
    for (int pos = 0; R > 0; pos++) {
        int rc = step(d, R, T);
        if (rc)
            return rc;
        int next = 0, identity = 1;
        for (int r = 0; r < R;) {
            int b = d->row_sent[r], n = d->n_open[b];
            if (!advance(d, b, r, pos, T)) {
                for (int s = 0; s < d->n_open[b]; s++, next++) {
                    size_t h = hist_at(d, pos, b, s);
                    d->from[next] = r + d->hist_parent[h];
                    d->prev[next] = d->hist_tok[h];
                    d->row_sent_next[next] = b;
                    identity &= d->from[next] == next;
                }
            }
            r += n;
        }
        if (next == 0)
            break;
        for (int k = 0; k < d->n_models && (next != R || !identity); k++)
            if ((rc = nmt_infer_select(d->infer[k], d->from, next)))
                return rc;
        int *tmp = d->row_sent;
        d->row_sent = d->row_sent_next;
        d->row_sent_next = tmp;
        R = next;
    }
    return NMT_OK;
}

int nmt_decode(nmt_decoder *d, const int32_t *src, const int *src_len, int B, int T)
{
    return nmt_decode_with(d, src, src_len, B, T, NULL);
}

int nmt_decode_with(nmt_decoder *d, const int32_t *src, const int *src_len, int B, int T,
                    const nmt_decode_input *in)
{
    const uint64_t *line = in ? in->line : NULL;
    if (B < 1 || B > d->max_B || T < 1 || T > d->max_src_T)
        return nmt_set_error(NMT_ERR_ARG, "decoder: batch %d x %d exceeds %d x %d", B, T,
                             d->max_B, d->max_src_T);
    for (int b = 0; b < B; b++) {
        if (src_len[b] < 1 || src_len[b] > T)
            return nmt_set_error(NMT_ERR_ARG, "decoder: source %d has length %d", b,
                                 src_len[b]);
        d->src_len[b] = src_len[b];
        d->limit[b] = nmt_decode_length_limit(&d->opts, src_len[b]);
        int np = in && in->prefix && in->prefix_len ? in->prefix_len[b] : 0;
        if (np < 0 || np >= d->max_len)
            return nmt_set_error(NMT_ERR_ARG, "decoder: a prefix of %d tokens is not in "
                                 "0..%d (the length limit - 1)", np, d->max_len - 1);
        for (int i = 0; i < np; i++) {
            int32_t v = in->prefix[b][i];
            if (v < NMT_UNK || v >= d->V || v == NMT_BOS || v == NMT_EOS)
                return nmt_set_error(NMT_ERR_ARG, "decoder: prefix %d has token %d, not "
                                     "an output", b, (int)v);
        }
        d->pre[b] = np ? in->prefix[b] : NULL;
        d->pre_len[b] = np;
        /* the prefix and then at least one token of the decoder's own */
        if (d->limit[b] < np + 1)
            d->limit[b] = np + 1;
        if (d->opts.sample)
            nmt_sample_seed(&d->rng[b], d->opts.seed, line ? line[b] : (uint64_t)b);
    }
    for (int b = B; b < d->max_B; b++)
        d->n_res[b] = 0;
    for (int k = 0; k < d->n_models; k++) {
        int rc = nmt_infer_encode(d->models[k], d->infer[k], src, src_len, B, T);
        if (rc)
            return rc;
    }
    return search(d, B, T);
}

int nmt_decoder_n_results(const nmt_decoder *d, int b)
{
    return b < 0 || b >= d->max_B ? 0 : d->n_res[b];
}

const nmt_hypothesis *nmt_decoder_result(const nmt_decoder *d, int b, int k)
{
    if (b < 0 || b >= d->max_B || k < 0 || k >= d->n_res[b])
        return NULL;
    return &d->res[(size_t)b * d->opts.n_best + k];
}
