/* The translator: raw sentences in, translations out (nmt/translator.h). */
#include "nmt/translator.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"
#include "nmt/text.h"
#include "nmt/units.h"
#include "nmt/utf8.h"
#include "nmt/vocab.h"

struct nmt_translator {
    const nmt_model *model;     /* the first member: its units stand for all */
    const nmt_model **models;   /* [n_models] the ensemble (not owned) */
    int n_models;
    nmt_translate_opts opts;
    nmt_decoder *decoder;
    int dec_B, dec_T;   /* the decoder's batch and longest source (units + </s>) */
    int32_t *src;       /* [dec_B * dec_T] time-major ids */
    int *src_len;       /* [dec_B] */
    uint64_t *line;     /* [dec_B] each source's 0-based line in the input: seeds its samples */
    const int32_t **pre; /* [dec_B] each source's forced target prefix (ids), */
    int *pre_len;        /* [dec_B] and its length */
    const char **words; /* [words_cap] target units (words or pieces) of one hypothesis */
    size_t words_cap;
    size_t lines_done;  /* lines of earlier calls, so messages number lines as the input does */
    size_t n_units, n_unk; /* source units decoded so far, and those <unk> */
};

void nmt_translate_opts_default(nmt_translate_opts *o)
{
    nmt_decode_opts_standard(&o->decode);
    o->batch_size = NMT_TRANSLATE_BATCH;
    o->replace_unk = 0;
    o->alignments = 0;
}

void nmt_translated_free(nmt_translated *t)
{
    for (int k = 0; k < t->n_hyp; k++)
        free(t->hyp[k].text);
    free(t->hyp);
    for (int j = 0; j < t->n_src; j++)
        free(t->src[j]);
    for (int i = 0; i < t->n_tgt; i++)
        free(t->tgt[i]);
    free(t->src);
    free(t->tgt);
    free(t->att);
    memset(t, 0, sizeof *t);
}

int nmt_translator_create(nmt_translator **out, const nmt_model *m, const nmt_translate_opts *o)
{
    return nmt_translator_create_ensemble(out, &m, 1, o);
}

int nmt_translator_create_ensemble(nmt_translator **out, const nmt_model *const *models,
                                   int n_models, const nmt_translate_opts *o)
{
    *out = NULL;
    if (n_models < 1 || n_models > NMT_MAX_ENSEMBLE)
        return nmt_set_error(NMT_ERR_ARG, "%d models are not in 1..%d", n_models,
                             NMT_MAX_ENSEMBLE);
    int rc = nmt_ensemble_check(models, NULL, n_models);
    if (rc)
        return rc;
    for (int k = 0; k < n_models; k++)
        if (nmt_model_attention_maps(models[k]) == 0 && (o->replace_unk || o->alignments)) {
            const char *what = o->replace_unk ? "--replace-unk" : "--alignments";
            if (n_models == 1)
                return nmt_set_error(NMT_ERR_ARG, "%s needs a model with attention (this one "
                                     "has attention none)", what);
            return nmt_set_error(NMT_ERR_ARG, "%s needs attention in every model of the "
                                 "ensemble (model %d has attention none)", what, k + 1);
        }
    if (o->batch_size < 1)
        return nmt_set_error(NMT_ERR_ARG, "bad batch size %d", o->batch_size);
    nmt_translator *t = calloc(1, sizeof *t);
    if (!t || !(t->models = malloc((size_t)n_models * sizeof *t->models))) {
        free(t);
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    }
    memcpy(t->models, models, (size_t)n_models * sizeof *t->models);
    t->n_models = n_models;
    t->model = models[0];
    t->opts = *o;
    t->opts.decode.attention = o->replace_unk || o->alignments;
    *out = t;
    return NMT_OK;
}

void nmt_translator_free(nmt_translator *t)
{
    if (!t)
        return;
    nmt_decoder_free(t->decoder);
    free(t->models);
    free(t->src);
    free(t->src_len);
    free(t->line);
    free(t->pre);
    free(t->pre_len);
    free(t->words);
    free(t);
}

/* A decoder for B sources of up to T positions (made again when a longer
 * source or a larger batch comes, so memory follows what is needed). */
static int ensure_decoder(nmt_translator *t, int B, int T)
{
    if (t->decoder && T <= t->dec_T && B <= t->dec_B)
        return NMT_OK;
    nmt_decoder_free(t->decoder);
    t->decoder = NULL;
    free(t->src);
    free(t->src_len);
    free(t->line);
    free(t->pre);
    free(t->pre_len);
    t->pre = malloc((size_t)B * sizeof *t->pre);
    t->pre_len = malloc((size_t)B * sizeof *t->pre_len);
    t->src = malloc((size_t)B * (size_t)T * sizeof *t->src);
    t->src_len = malloc((size_t)B * sizeof *t->src_len);
    t->line = malloc((size_t)B * sizeof *t->line);
    if (!t->src || !t->src_len || !t->line || !t->pre || !t->pre_len)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for a batch of %d x %d", B, T);
    t->dec_B = B;
    t->dec_T = T;
    return nmt_decoder_create_ensemble(&t->decoder, t->models, t->n_models, B, T,
                                       &t->opts.decode);
}

/* The batch size for sources of up to T positions. Keeping attention costs
 * the decoder about 2 * beam * length limit * T floats per sentence; a
 * batch of very long sentences is made smaller to stay within 64 M floats
 * (256 MB). */
static int batch_for(const nmt_translator *t, int T)
{
    int B = t->opts.batch_size;
    if (!t->opts.decode.attention)
        return B;
    const nmt_decode_opts *dec = &t->opts.decode;
    double per = 2.0 * (dec->sample ? dec->n_best : dec->beam) * nmt_decode_length_limit(&t->opts.decode, T) * T;
    double fit = (double)(64 << 20) / per;
    return fit < 1 ? 1 : fit < B ? (int)fit : B;
}

static char *copy_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    return c ? memcpy(c, s, n) : NULL;
}

/* The source unit (not </s>) row i of the attention looks at most; ties go
 * to the first. */
static int most_attended(const float *att, int i, int src_len)
{
    const float *row = att + (size_t)i * (size_t)src_len;
    int best = 0;
    for (int j = 1; j < src_len - 1; j++)
        if (row[j] > row[best])
            best = j;
    return best;
}

/* The attention of the best hypothesis, with its tokens, into out. */
static int keep_alignment(nmt_translated *out, const nmt_tokens *src, const nmt_hypothesis *h,
                          const char *const *words)
{
    int n_src = (int)src->n + 1, n_tgt = h->len + h->finished;
    out->src = calloc((size_t)n_src, sizeof *out->src);
    out->tgt = calloc((size_t)n_tgt, sizeof *out->tgt);
    out->att = malloc((size_t)n_src * (size_t)n_tgt * sizeof *out->att);
    if (!out->src || !out->tgt || !out->att)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for alignments");
    out->n_src = n_src;
    out->n_tgt = n_tgt;
    int ok = 1;
    for (int j = 0; j < n_src; j++)
        ok &= (out->src[j] = copy_string(j < n_src - 1 ? src->tok[j] : "</s>")) != NULL;
    for (int i = 0; i < n_tgt; i++)
        ok &= (out->tgt[i] = copy_string(i < h->len ? words[i] : "</s>")) != NULL;
    memcpy(out->att, h->att, (size_t)n_src * (size_t)n_tgt * sizeof *out->att);
    return ok ? NMT_OK : nmt_set_error(NMT_ERR_NOMEM, "out of memory for alignments");
}

/* A line's forced target prefix: its units and their ids, and its text
 * without the whitespace at its ends, which the output starts with. */
typedef struct prefix_ids {
    nmt_tokens units;
    int32_t *ids;
    int n;
    char *head;
} prefix_ids;

/* The decoder's hypotheses of batch row b (source tokens src, forced prefix
 * pre or NULL) as text. */
static int fill_result(nmt_translator *t, nmt_translated *out, int b, const nmt_tokens *src,
                       const prefix_ids *pre)
{
    const nmt_vocab *tv = t->model->tgt_vocab;
    int n = nmt_decoder_n_results(t->decoder, b);
    out->hyp = calloc((size_t)(n ? n : 1), sizeof *out->hyp);
    if (!out->hyp)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    for (int k = 0; k < n; k++) {
        const nmt_hypothesis *h = nmt_decoder_result(t->decoder, b, k);
        if ((size_t)h->len > t->words_cap) {
            const char **w = realloc(t->words, (size_t)h->len * sizeof *w);
            if (!w)
                return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
            t->words = w;
            t->words_cap = (size_t)h->len;
        }
        for (int i = 0; i < h->len; i++) {
            /* <unk>: the source unit the decoder looked at most while
             * producing it (the source has one: empty lines are not
             * decoded); a source piece the model does not know is its
             * text, which decoding keeps as it is */
            /* the forced units are written as the prefix's text (below) */
            if (pre && i < pre->n)
                t->words[i] = pre->units.tok[i];
            else if (h->ids[i] == NMT_UNK && t->opts.replace_unk && h->att)
                t->words[i] = src->tok[most_attended(h->att, i, (int)src->n + 1)];
            else
                t->words[i] = nmt_vocab_token(tv, h->ids[i]);
        }
        nmt_translated_hyp *r = &out->hyp[k];
        /* the prefix as its writer wrote it, even where the units could not
         * spell it back (nmt_units_join_prefixed): every translation
         * starts with it */
        int forced = !pre ? 0 : pre->n < h->len ? pre->n : h->len;
        r->text = forced ? nmt_units_join_prefixed(t->model, t->words, (size_t)h->len,
                                                   (size_t)forced, pre->head)
                         : nmt_units_join(t->model, t->words, (size_t)h->len);
        r->score = h->score;
        r->norm_score = h->norm_score;
        out->n_hyp = k + 1;
        if (!r->text)
            return NMT_ERR_NOMEM; /* the message is set */
        if (k == 0 && t->opts.alignments && h->att) {
            int rc = keep_alignment(out, src, h, t->words);
            if (rc)
                return rc;
        }
    }
    return NMT_OK;
}

/* A line to decode: its length in units, and its place in the input. */
typedef struct line_at {
    size_t len, i;
} line_at;

/* Shorter sources first, then input order: batches of similar lengths. */
static int by_length(const void *pa, const void *pb)
{
    const line_at *a = pa, *b = pb;
    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

/* order[n] (indices into toks) sorted by by_length. */
static int sort_by_length(size_t *order, size_t n, const nmt_tokens *toks)
{
    line_at *at = malloc((n ? n : 1) * sizeof *at);
    if (!at)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    for (size_t k = 0; k < n; k++)
        at[k] = (line_at){toks[order[k]].n, order[k]};
    qsort(at, n, sizeof *at, by_length);
    for (size_t k = 0; k < n; k++)
        order[k] = at[k].i;
    free(at);
    return NMT_OK;
}


static int run_batches(nmt_translator *t, const nmt_tokens *toks, const prefix_ids *pre,
                       const size_t *order, size_t n_order, nmt_translated *out, size_t n_empty,
                       void (*progress)(void *ctx, size_t done), void *ctx)
{
    const nmt_vocab *sv = t->model->src_vocab;
    for (size_t start = 0; start < n_order;) {
        /* sorted shortest first: a batch's last source is its longest */
        size_t left = n_order - start;
        int B = left < (size_t)t->opts.batch_size ? (int)left : t->opts.batch_size;
        const size_t *idx = order + start;
        int fit = batch_for(t, (int)toks[idx[B - 1]].n + 1);
        B = fit < B ? fit : B;
        int T = (int)toks[idx[B - 1]].n + 1;
        /* the decoder's longest output follows its longest source: a long
         * prefix asks for a decoder made as for a longer source (a
         * sentence's own limit then grows to its prefix, nmt_decode_input) */
        int longest_pre = 0, dec_T = T;
        for (int b = 0; pre && b < B; b++)
            longest_pre = pre[idx[b]].n > longest_pre ? pre[idx[b]].n : longest_pre;
        const nmt_decode_opts *o = &t->opts.decode;
        if (nmt_decode_length_limit(o, dec_T) <= longest_pre && o->max_ratio > 0) {
            /* the least source length whose limit exceeds the prefix; with
             * max_ratio 0 no source length helps, and the decoder refuses */
            double need = ceil((longest_pre + 1 - o->max_extra) / (double)o->max_ratio) + 1;
            dec_T = need < 1 << 16 ? (int)need : 1 << 16;
            while (nmt_decode_length_limit(o, dec_T) <= longest_pre && dec_T < 1 << 16)
                dec_T++; /* rounding */
        }
        int rc = ensure_decoder(t, B, dec_T);
        if (rc)
            return rc;
        memset(t->src, 0, (size_t)B * (size_t)T * sizeof *t->src);
        for (int b = 0; b < B; b++) {
            const nmt_tokens *s = &toks[idx[b]];
            for (size_t j = 0; j < s->n; j++) {
                int32_t id = nmt_vocab_id(sv, s->tok[j], s->len[j]);
                t->src[j * (size_t)B + (size_t)b] = id;
                t->n_unk += id == NMT_UNK;
            }
            t->n_units += s->n;
            t->src[s->n * (size_t)B + (size_t)b] = NMT_EOS;
            t->src_len[b] = (int)s->n + 1;
            t->line[b] = (uint64_t)(t->lines_done + idx[b]);
            t->pre[b] = pre ? pre[idx[b]].ids : NULL;
            t->pre_len[b] = pre ? pre[idx[b]].n : 0;
        }
        const nmt_decode_input in = {t->line, t->pre, t->pre_len};
        if ((rc = nmt_decode_with(t->decoder, t->src, t->src_len, B, T, &in)))
            return rc;
        for (int b = 0; b < B; b++)
            if ((rc = fill_result(t, &out[idx[b]], b, &toks[idx[b]], pre ? &pre[idx[b]] : NULL)))
                return rc;
        start += (size_t)B;
        if (progress)
            progress(ctx, n_empty + start);
    }
    return NMT_OK;
}

int nmt_translator_run(nmt_translator *t, const char *const *lines, size_t n, nmt_translated *out,
                   void (*progress)(void *ctx, size_t done), void *ctx)
{
    return nmt_translator_run_prefixed(t, lines, NULL, n, out, progress, ctx);
}

/* A copy of s without the whitespace (as the tokenizer sees it) at its
 * ends, or NULL when out of memory. */
static char *trimmed(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), start = n, end = 0, l;
    for (size_t i = 0; i < n; i += l) {
        uint32_t c = nmt_utf8_decode(p + i, n - i, &l);
        if (nmt_utf8_is_token_space(c))
            continue;
        start = start < i ? start : i;
        end = i + l;
    }
    if (end < start)
        start = end = 0;
    char *c = malloc(end - start + 1);
    if (c) {
        memcpy(c, s + start, end - start);
        c[end - start] = '\0';
    }
    return c;
}

/* The prefixes of n lines as target ids (none when prefixes is NULL). */
static int prefix_ids_of(nmt_translator *t, const char *const *prefixes, size_t n,
                         prefix_ids *pre)
{
    for (size_t i = 0; i < n; i++) {
        if (!prefixes[i] || !*prefixes[i])
            continue;
        if (!(pre[i].head = trimmed(prefixes[i])))
            return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
        nmt_tokens *u = &pre[i].units; /* freed by the caller, like ids */
        int rc = nmt_units_split(t->model, prefixes[i], strlen(prefixes[i]), u);
        if (rc)
            return rc;
        if (u->n >= (size_t)1 << 16)
            return nmt_set_error(NMT_ERR_ARG, "line %zu: a prefix of %zu %s is too long",
                                 t->lines_done + i + 1, u->n, nmt_units_name(t->model));
        pre[i].ids = malloc((u->n ? u->n : 1) * sizeof *pre[i].ids);
        if (!pre[i].ids)
            return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
        for (size_t j = 0; j < u->n; j++)
            pre[i].ids[j] = nmt_vocab_id(t->model->tgt_vocab, u->tok[j], u->len[j]);
        pre[i].n = (int)u->n;
    }
    return NMT_OK;
}

int nmt_translator_run_prefixed(nmt_translator *t, const char *const *lines,
                                const char *const *prefixes, size_t n, nmt_translated *out,
                                void (*progress)(void *ctx, size_t done), void *ctx)
{
    memset(out, 0, n * sizeof *out);
    prefix_ids *pre = prefixes ? calloc(n ? n : 1, sizeof *pre) : NULL;
    if (prefixes && !pre)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    int prc = prefixes ? prefix_ids_of(t, prefixes, n, pre) : NMT_OK;
    nmt_tokens *toks = calloc(n ? n : 1, sizeof *toks);
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    int rc = prc ? prc : toks && order ? NMT_OK : nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    size_t n_order = 0;
    for (size_t i = 0; i < n && rc == NMT_OK; i++) {
        rc = nmt_units_split(t->model, lines[i], strlen(lines[i]), &toks[i]);
        /* the model's passes take at most 1 << 16 positions (units + </s>) */
        if (rc == NMT_OK && toks[i].n >= (size_t)1 << 16)
            rc = nmt_set_error(NMT_ERR_ARG, "line %zu: a sentence of %zu %s is too long "
                               "(at most %d)", t->lines_done + i + 1, toks[i].n,
                               nmt_units_name(t->model), (1 << 16) - 1);
        if (rc == NMT_OK && toks[i].n > 0) {
            order[n_order++] = i;
        } else if (rc == NMT_OK) {
            /* an empty line stays empty */
            out[i].hyp = calloc(1, sizeof *out[i].hyp);
            if (out[i].hyp && (out[i].hyp[0].text = copy_string("")))
                out[i].n_hyp = 1;
            else
                rc = nmt_set_error(NMT_ERR_NOMEM, "out of memory");
        }
    }
    if (rc == NMT_OK) {
        rc = sort_by_length(order, n_order, toks);
    if (rc == NMT_OK)
        rc = run_batches(t, toks, pre, order, n_order, out, n - n_order, progress, ctx);
    }
    for (size_t i = 0; toks && i < n; i++)
        nmt_tokens_free(&toks[i]);
    free(toks);
    free(order);
    for (size_t i = 0; pre && i < n; i++) {
        nmt_tokens_free(&pre[i].units);
        free(pre[i].ids);
        free(pre[i].head);
    }
    free(pre);
    t->lines_done += n;
    return rc;
}

void nmt_translator_unknown(const nmt_translator *t, size_t *unk, size_t *units)
{
    *unk = t->n_unk;
    *units = t->n_units;
}

