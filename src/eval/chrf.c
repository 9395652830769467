/* chrF and chrF++ statistics and scores as sacreBLEU 2.x computes them
 * (sacrebleu/metrics/chrf.py and helpers.py). Each rule mirrors a sacreBLEU
 * behaviour, the odd ones included (see nmt/chrf.h), and the F-score's
 * arithmetic is done in sacreBLEU's order, so that the same statistics give
 * the same double. */
#include "nmt/chrf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/bleu_internal.h"
#include "nmt/bleu.h"
#include "nmt/error.h"

void nmt_chrf_opts_init(nmt_chrf_opts *opts)
{
    opts->char_order = 6;
    opts->word_order = 0;
    opts->beta = 2;
    opts->lowercase = 0;
    opts->whitespace = 0;
    opts->eps_smoothing = 0;
}

/* ---- the score of statistics ------------------------------------------- */

double nmt_chrf_compute(const nmt_chrf_stats *st, const nmt_chrf_opts *opts)
{
    const double eps = 1e-16;
    int order = opts->char_order + opts->word_order;
    if (order <= 0 || order > NMT_CHRF_MAX_ORDER)
        return 0.0;
    /* sacreBLEU's factor is the int beta ** 2; small ints are exact doubles */
    double factor = (double)opts->beta * (double)opts->beta;
    double score = 0.0, avg_prec = 0.0, avg_rec = 0.0;
    int effective_order = 0;
    for (int k = 0; k < order; k++) {
        long n_hyp = st->hyp[k], n_ref = st->ref[k], n_match = st->match[k];
        double prec = n_hyp > 0 ? (double)n_match / (double)n_hyp : eps;
        double rec = n_ref > 0 ? (double)n_match / (double)n_ref : eps;
        /* chrF++.py's smoothing: the mean of per-order F-scores */
        double denom = factor * prec + rec;
        score += denom > 0 ? (1.0 + factor) * prec * rec / denom : eps;
        /* the default: only orders with n-grams on both sides are averaged */
        if (n_hyp > 0 && n_ref > 0) {
            avg_prec += prec;
            avg_rec += rec;
            effective_order++;
        }
    }
    if (opts->eps_smoothing)
        return 100.0 * score / order;
    if (effective_order == 0)
        return 0.0;
    avg_prec /= effective_order;
    avg_rec /= effective_order;
    if (avg_prec + avg_rec == 0.0)
        return 0.0;
    score = (1.0 + factor) * avg_prec * avg_rec;
    score /= factor * avg_prec + avg_rec;
    return 100.0 * score;
}

/* ---- one sentence's n-grams --------------------------------------------- */

/* A unit of an n-gram: one character, or one word (a run of code points). */
typedef struct unit {
    const uint32_t *p;
    size_t len;
} unit;

/* An n-gram: n units from u on. */
typedef struct gram {
    const unit *u;
    int n;
} gram;

/* One sentence ready for counting: its n-grams of order k (0-based, as in
 * nmt_chrf_stats) are grams[start[k] .. start[k + 1]), sorted so that equal
 * n-grams are neighbours. */
typedef struct sentence {
    uint32_t *cp;
    unit *chars, *words;
    size_t n_chars, n_words;
    gram *grams;
    size_t start[NMT_CHRF_MAX_ORDER + 1];
} sentence;

static void sentence_free(sentence *s)
{
    free(s->cp);
    free(s->chars);
    free(s->words);
    free(s->grams);
    memset(s, 0, sizeof *s);
}

/* Python's string.punctuation, which chrF++ splits off words: the ASCII
 * symbols, not the letters, digits or whitespace. */
static int is_ascii_punct(uint32_t c)
{
    return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
           (c >= 0x7B && c <= 0x7E);
}

static int cmp_unit(const unit *a, const unit *b)
{
    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    for (size_t i = 0; i < a->len; i++)
        if (a->p[i] != b->p[i])
            return a->p[i] < b->p[i] ? -1 : 1;
    return 0;
}

/* Any total order does, as long as equal n-grams compare equal. */
static int cmp_gram(const void *pa, const void *pb)
{
    const gram *a = pa, *b = pb;
    for (int i = 0; i < a->n; i++) {
        int c = cmp_unit(&a->u[i], &b->u[i]);
        if (c)
            return c;
    }
    return 0;
}

/* sacreBLEU's _remove_punctuation: a word of two or more characters loses
 * one punctuation character at its end, or else at its start, which becomes
 * a word of its own ("(hi)" gives "(hi" and ")"). */
static void split_words(sentence *s, const uint32_t *cp, size_t n)
{
    size_t i = 0;
    while (i < n) {
        while (i < n && nmt_utf8_is_python_space(cp[i]))
            i++;
        size_t w = i;
        while (i < n && !nmt_utf8_is_python_space(cp[i]))
            i++;
        size_t len = i - w;
        if (len == 0)
            break;
        if (len > 1 && is_ascii_punct(cp[w + len - 1])) {
            s->words[s->n_words++] = (unit){cp + w, len - 1};
            s->words[s->n_words++] = (unit){cp + w + len - 1, 1};
        } else if (len > 1 && is_ascii_punct(cp[w])) {
            s->words[s->n_words++] = (unit){cp + w, 1};
            s->words[s->n_words++] = (unit){cp + w + 1, len - 1};
        } else {
            s->words[s->n_words++] = (unit){cp + w, len};
        }
    }
}

/* Reads a sentence: lowercasing, code points, trailing whitespace removed,
 * the character and word units, and every order's sorted n-grams. Returns
 * 0 or -1 when out of memory. */
static int sentence_read(sentence *s, const char *text, const nmt_chrf_opts *o)
{
    memset(s, 0, sizeof *s);
    char *lower = NULL;
    if (o->lowercase && !(text = lower = nmt_bleu_lowercase(text)))
        return -1;
    const unsigned char *b = (const unsigned char *)text;
    size_t bytes = strlen(text), n = 0, end = 0;
    /* a code point takes at least one byte; +1 keeps malloc away from 0 */
    s->cp = malloc((bytes + 1) * sizeof *s->cp);
    s->chars = malloc((bytes + 1) * sizeof *s->chars);
    s->words = malloc((bytes + 1) * sizeof *s->words);
    if (!s->cp || !s->chars || !s->words)
        goto fail;
    for (size_t i = 0; b[i];) {
        i += bleu_decode(b + i, &s->cp[n]);
        if (!nmt_utf8_is_python_space(s->cp[n++]))
            end = n;
    }
    n = end; /* rstrip */
    free(lower);
    lower = NULL;

    for (size_t i = 0; i < n; i++)
        if (o->whitespace || !nmt_utf8_is_python_space(s->cp[i]))
            s->chars[s->n_chars++] = (unit){s->cp + i, 1};
    if (o->word_order > 0)
        split_words(s, s->cp, n);

    int order = o->char_order + o->word_order;
    size_t total = 0;
    for (int k = 0; k < order; k++) {
        size_t units = k < o->char_order ? s->n_chars : s->n_words;
        size_t len = (size_t)(k < o->char_order ? k + 1 : k - o->char_order + 1);
        s->start[k] = total;
        total += units >= len ? units - len + 1 : 0;
    }
    s->start[order] = total;
    s->grams = malloc((total + 1) * sizeof *s->grams);
    if (!s->grams)
        goto fail;
    for (int k = 0; k < order; k++) {
        const unit *u = k < o->char_order ? s->chars : s->words;
        int len = k < o->char_order ? k + 1 : k - o->char_order + 1;
        size_t m = s->start[k + 1] - s->start[k];
        gram *g = s->grams + s->start[k];
        for (size_t i = 0; i < m; i++)
            g[i] = (gram){u + i, len};
        if (m > 1)
            qsort(g, m, sizeof *g, cmp_gram);
    }
    return 0;
fail:
    free(lower);
    sentence_free(s);
    return -1;
}

/* sacreBLEU's _get_match_statistics for one order: each distinct hypothesis
 * n-gram matches as often as it occurs, clipped by its reference count; the
 * hypothesis count is 0 when the reference has no n-gram of this order. */
static void count_order(const sentence *h, const sentence *r, int k, long *n_hyp, long *n_ref,
                        long *n_match)
{
    const gram *a = h->grams + h->start[k], *b = r->grams + r->start[k];
    size_t na = h->start[k + 1] - h->start[k], nb = r->start[k + 1] - r->start[k];
    long match = 0;
    size_t i = 0, j = 0;
    while (i < na && j < nb) {
        int c = cmp_gram(&a[i], &b[j]);
        if (c < 0) {
            i++;
        } else if (c > 0) {
            j++;
        } else {
            long ca = 0, cb = 0;
            const gram *g = &a[i];
            while (i < na && !cmp_gram(&a[i], g))
                i++, ca++;
            while (j < nb && !cmp_gram(&b[j], g))
                j++, cb++;
            match += ca < cb ? ca : cb;
        }
    }
    *n_hyp = nb ? (long)na : 0;
    *n_ref = (long)nb;
    *n_match = match;
}

/* ---- the accumulator ------------------------------------------------------ */

struct nmt_chrf {
    nmt_chrf_opts opts;
    nmt_chrf_stats sum;
    size_t sentences;
    long nrefs; /* 0 before the first sentence, -1 when it varied */
};

int nmt_chrf_create(nmt_chrf **out, const nmt_chrf_opts *opts)
{
    *out = NULL;
    if (opts->char_order < 0 || opts->char_order > NMT_CHRF_MAX_CHAR_ORDER)
        return nmt_set_error(NMT_ERR_ARG, "chrf: character order %d is not in 0..%d",
                             opts->char_order, NMT_CHRF_MAX_CHAR_ORDER);
    if (opts->word_order < 0 || opts->word_order > NMT_CHRF_MAX_WORD_ORDER)
        return nmt_set_error(NMT_ERR_ARG, "chrf: word order %d is not in 0..%d",
                             opts->word_order, NMT_CHRF_MAX_WORD_ORDER);
    if (opts->char_order + opts->word_order == 0)
        return nmt_set_error(NMT_ERR_ARG, "chrf: the character and word orders are both 0");
    if (opts->beta < 0 || opts->beta > NMT_CHRF_MAX_BETA)
        return nmt_set_error(NMT_ERR_ARG, "chrf: beta %d is not in 0..%d", opts->beta,
                             NMT_CHRF_MAX_BETA);
    nmt_chrf *c = calloc(1, sizeof *c);
    if (!c)
        return nmt_set_error(NMT_ERR_NOMEM, "chrf: out of memory");
    c->opts = *opts;
    *out = c;
    return NMT_OK;
}

void nmt_chrf_free(nmt_chrf *c)
{
    free(c);
}

void nmt_chrf_reset(nmt_chrf *c)
{
    memset(&c->sum, 0, sizeof c->sum);
    c->sentences = 0;
    c->nrefs = 0;
}

const nmt_chrf_opts *nmt_chrf_options(const nmt_chrf *c)
{
    return &c->opts;
}

int nmt_chrf_sentence_stats(nmt_chrf *c, nmt_chrf_stats *out, const char *hyp,
                            const char *const *refs, size_t n_refs)
{
    if (!hyp || !refs || n_refs == 0)
        return nmt_set_error(NMT_ERR_ARG, "chrf: a sentence needs a hypothesis and a reference");
    for (size_t r = 0; r < n_refs; r++)
        if (!refs[r])
            return nmt_set_error(NMT_ERR_ARG, "chrf: reference %zu is missing", r + 1);
    const nmt_chrf_opts *o = &c->opts;
    int order = o->char_order + o->word_order;
    sentence h, r;
    if (sentence_read(&h, hyp, o))
        return nmt_set_error(NMT_ERR_NOMEM, "chrf: out of memory");
    /* sacreBLEU's best starts at -1, so the first reference is always taken
     * and a later one only when strictly better */
    double best = -1.0;
    for (size_t k = 0; k < n_refs; k++) {
        if (sentence_read(&r, refs[k], o)) {
            sentence_free(&h);
            return nmt_set_error(NMT_ERR_NOMEM, "chrf: out of memory");
        }
        nmt_chrf_stats st;
        memset(&st, 0, sizeof st);
        for (int i = 0; i < order; i++)
            count_order(&h, &r, i, &st.hyp[i], &st.ref[i], &st.match[i]);
        sentence_free(&r);
        double f = nmt_chrf_compute(&st, o);
        if (f > best) {
            best = f;
            *out = st;
        }
    }
    sentence_free(&h);
    return NMT_OK;
}

void nmt_chrf_add_stats(nmt_chrf *c, const nmt_chrf_stats *st, size_t n_refs)
{
    for (int k = 0; k < NMT_CHRF_MAX_ORDER; k++) {
        c->sum.hyp[k] += st->hyp[k];
        c->sum.ref[k] += st->ref[k];
        c->sum.match[k] += st->match[k];
    }
    if (c->sentences == 0)
        c->nrefs = (long)n_refs;
    else if (c->nrefs != (long)n_refs)
        c->nrefs = -1;
    c->sentences++;
}

int nmt_chrf_add(nmt_chrf *c, nmt_chrf_stats *out, const char *hyp,
                 const char *const *refs, size_t n_refs)
{
    nmt_chrf_stats st;
    int rc = nmt_chrf_sentence_stats(c, &st, hyp, refs, n_refs);
    if (rc)
        return rc;
    nmt_chrf_add_stats(c, &st, n_refs);
    if (out)
        *out = st;
    return NMT_OK;
}

double nmt_chrf_result(const nmt_chrf *c)
{
    return nmt_chrf_compute(&c->sum, &c->opts);
}

const nmt_chrf_stats *nmt_chrf_totals(const nmt_chrf *c)
{
    return &c->sum;
}

size_t nmt_chrf_sentences(const nmt_chrf *c)
{
    return c->sentences;
}

long nmt_chrf_nrefs(const nmt_chrf *c)
{
    return c->nrefs;
}

/* ---- printed forms ------------------------------------------------------- */

int nmt_chrf_name(char *buf, size_t cap, const nmt_chrf_opts *opts)
{
    static const char plus[NMT_CHRF_MAX_WORD_ORDER + 1] = "++++++++++";
    int w = opts->word_order < 0 ? 0 : opts->word_order;
    w = w > NMT_CHRF_MAX_WORD_ORDER ? NMT_CHRF_MAX_WORD_ORDER : w;
    return snprintf(buf, cap, "chrF%d%.*s", opts->beta, w, plus);
}

int nmt_chrf_signature(char *buf, size_t cap, const nmt_chrf_opts *opts, long nrefs,
                       int short_form)
{
    char refs[32];
    if (nrefs < 0)
        snprintf(refs, sizeof refs, "var");
    else
        snprintf(refs, sizeof refs, "%ld", nrefs);
    return snprintf(buf, cap, "%s:%s|%s:%s|%s:%s|nc:%d|nw:%d|%s:%s|%s:%s",
                    short_form ? "#" : "nrefs", refs,
                    short_form ? "c" : "case", opts->lowercase ? "lc" : "mixed",
                    short_form ? "e" : "eff", opts->eps_smoothing ? "no" : "yes",
                    opts->char_order, opts->word_order,
                    short_form ? "s" : "space", opts->whitespace ? "yes" : "no",
                    short_form ? "v" : "version", NMT_BLEU_SACREBLEU_VERSION);
}
