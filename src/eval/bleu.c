/* BLEU statistics and scores as sacreBLEU 2.x computes them: n-gram matches
 * clipped by the references, the closest reference length, smoothing, the
 * brevity penalty and the printed forms. Every rule mirrors a sacreBLEU
 * behaviour, including the odd ones (zero when nothing matches at all, the
 * 1/2^k of exp smoothing, a log of zero taken as -9999999999), because users
 * compare our numbers with its. */
#include "nmt/bleu.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/bleu_internal.h"
#include "nmt/error.h"

void nmt_bleu_opts_init(nmt_bleu_opts *opts)
{
    opts->tokenize = NMT_BLEU_TOK_13A;
    opts->lowercase = 0;
    opts->smooth = NMT_BLEU_SMOOTH_EXP;
    opts->smooth_value = 0.0;
    opts->effective_order = 0;
}

double nmt_bleu_smooth_default(nmt_bleu_smooth method)
{
    switch (method) {
    case NMT_BLEU_SMOOTH_FLOOR: return 0.1;
    case NMT_BLEU_SMOOTH_ADD_K: return 1.0;
    default: return 0.0;
    }
}

/* ---- the score of statistics ------------------------------------------- */

/* sacreBLEU's my_log: the log of a zero precision is a huge negative number
 * rather than -inf, so that the score comes out as exactly 0. */
static double floored_log(double x)
{
    return x == 0.0 ? -9999999999.0 : log(x);
}

void nmt_bleu_compute(nmt_bleu_score *out, const nmt_bleu_stats *stats,
                      const nmt_bleu_opts *opts)
{
    memset(out, 0, sizeof *out);
    out->stats = *stats;
    double sys_len = (double)stats->sys_len, ref_len = (double)stats->ref_len;
    out->ratio = stats->ref_len ? sys_len / ref_len : 0.0;
    out->bp = 1.0;
    if (stats->sys_len < stats->ref_len)
        out->bp = stats->sys_len > 0 ? exp(1.0 - ref_len / sys_len) : 0.0;

    /* No match of any order: 0, whatever the smoothing (sacreBLEU #141). */
    int any = 0;
    for (int n = 0; n < NMT_BLEU_ORDER; n++)
        any |= stats->correct[n] != 0;
    if (!any)
        return;

    double correct[NMT_BLEU_ORDER], total[NMT_BLEU_ORDER];
    for (int n = 0; n < NMT_BLEU_ORDER; n++) {
        correct[n] = (double)stats->correct[n];
        total[n] = (double)stats->total[n];
    }
    double value = opts->smooth_value;
    double smooth_mteval = 1.0;
    int eff_order = NMT_BLEU_ORDER;
    for (int n = 0; n < NMT_BLEU_ORDER; n++) {
        if (opts->smooth == NMT_BLEU_SMOOTH_ADD_K && n > 0) {
            correct[n] += value;
            total[n] += value;
        }
        /* An order without n-grams (a short hypothesis) stops the loop; its
         * precision and those above stay 0 unless the effective order leaves
         * them out of the mean. */
        if (total[n] == 0.0)
            break;
        if (opts->effective_order)
            eff_order = n + 1;
        if (correct[n] == 0.0) {
            if (opts->smooth == NMT_BLEU_SMOOTH_EXP) {
                smooth_mteval *= 2.0;
                out->precisions[n] = 100.0 / (smooth_mteval * total[n]);
            } else if (opts->smooth == NMT_BLEU_SMOOTH_FLOOR) {
                out->precisions[n] = 100.0 * value / total[n];
            }
        } else {
            out->precisions[n] = 100.0 * correct[n] / total[n];
        }
    }
    double sum = 0.0;
    for (int n = 0; n < eff_order; n++)
        sum += floored_log(out->precisions[n]);
    out->score = out->bp * exp(sum / eff_order);
}

/* ---- sentence statistics ------------------------------------------------ */

/* One n-gram occurrence: `n` tokens from `tok` on, found in the hypothesis
 * (src 0) or in reference src - 1. */
typedef struct ngram {
    char *const *tok;
    int n;
    int src;
} ngram;

struct nmt_bleu {
    nmt_bleu_opts opts;
    nmt_bleu_stats sum;
    size_t sentences;
    long nrefs; /* 0 before the first sentence, -1 when it varied */
    /* scratch reused from sentence to sentence */
    char **tok;    /* [tok_cap] token pointers of hyp then each ref */
    size_t tok_cap;
    ngram *grams; /* [gram_cap] */
    size_t gram_cap;
};

int nmt_bleu_create(nmt_bleu **out, const nmt_bleu_opts *opts)
{
    *out = NULL;
    if (opts->tokenize != NMT_BLEU_TOK_13A && opts->tokenize != NMT_BLEU_TOK_NONE)
        return nmt_set_error(NMT_ERR_ARG, "bleu: unknown tokenizer %d", (int)opts->tokenize);
    if ((unsigned)opts->smooth > NMT_BLEU_SMOOTH_ADD_K)
        return nmt_set_error(NMT_ERR_ARG, "bleu: unknown smoothing %d", (int)opts->smooth);
    if (!isfinite(opts->smooth_value))
        return nmt_set_error(NMT_ERR_ARG, "bleu: smoothing value is not finite");
    nmt_bleu *b = calloc(1, sizeof *b);
    if (!b)
        return nmt_set_error(NMT_ERR_NOMEM, "bleu: out of memory");
    b->opts = *opts;
    *out = b;
    return NMT_OK;
}

void nmt_bleu_free(nmt_bleu *b)
{
    if (!b)
        return;
    free(b->tok);
    free(b->grams);
    free(b);
}

void nmt_bleu_reset(nmt_bleu *b)
{
    memset(&b->sum, 0, sizeof b->sum);
    b->sentences = 0;
    b->nrefs = 0;
}

const nmt_bleu_opts *nmt_bleu_options(const nmt_bleu *b)
{
    return &b->opts;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* Splits text in place on Unicode whitespace (Python's str.split()),
 * appending the tokens to b->tok from index `at`. Returns the count or -1. */
static long split_words(nmt_bleu *b, size_t at, char *text)
{
    unsigned char *s = (unsigned char *)text;
    size_t n = 0, i = 0;
    int in_word = 0;
    while (s[i]) {
        uint32_t cp;
        size_t k = bleu_decode(s + i, &cp);
        if (nmt_utf8_is_python_space(cp)) {
            s[i] = '\0'; /* ends the word before; the rest of cp is skipped */
            in_word = 0;
        } else if (!in_word) {
            in_word = 1;
            if (grow((void **)&b->tok, &b->tok_cap, at + n + 1, sizeof *b->tok))
                return -1;
            b->tok[at + n++] = (char *)s + i;
        }
        i += k;
    }
    return (long)n;
}

/* Orders n-grams by their tokens, then by where they were found, so that
 * equal n-grams are neighbours with the hypothesis' occurrences first. */
static int cmp_ngram(const void *pa, const void *pb)
{
    const ngram *a = pa, *b = pb;
    for (int k = 0; k < a->n; k++) {
        int c = strcmp(a->tok[k], b->tok[k]);
        if (c)
            return c;
    }
    return (a->src > b->src) - (a->src < b->src);
}

static int same_tokens(const ngram *a, const ngram *b)
{
    for (int k = 0; k < a->n; k++)
        if (strcmp(a->tok[k], b->tok[k]))
            return 0;
    return 1;
}

/* sacreBLEU's _get_closest_ref_len: the reference length nearest the
 * hypothesis length; on a tie the shorter reference. */
static long closest_ref_len(long hyp_len, const long *ref_lens, size_t n_refs)
{
    long best_diff = -1, best = -1;
    for (size_t r = 0; r < n_refs; r++) {
        long diff = labs(hyp_len - ref_lens[r]);
        if (best_diff == -1 || diff < best_diff) {
            best_diff = diff;
            best = ref_lens[r];
        } else if (diff == best_diff && ref_lens[r] < best) {
            best = ref_lens[r];
        }
    }
    return best;
}

/* Counts order-n matches: each distinct hypothesis n-gram scores as many
 * matches as it occurs, clipped by its largest count in any one reference. */
static int count_order(nmt_bleu *b, int n, const size_t *start, const long *len, size_t n_src,
                       long *correct, long *total)
{
    size_t m = 0;
    for (size_t s = 0; s < n_src; s++)
        if (len[s] >= n)
            m += (size_t)(len[s] - n + 1);
    if (grow((void **)&b->grams, &b->gram_cap, m, sizeof *b->grams))
        return -1;
    m = 0;
    for (size_t s = 0; s < n_src; s++)
        for (long i = 0; i + n <= len[s]; i++)
            b->grams[m++] = (ngram){b->tok + start[s] + i, n, (int)s};
    if (m > 1) /* grams may still be NULL when m is 0, and qsort wants a pointer */
        qsort(b->grams, m, sizeof *b->grams, cmp_ngram);

    *correct = *total = 0;
    for (size_t i = 0; i < m;) {
        /* The group of n-grams equal to grams[i], one run per source. */
        long hyp = 0, ref_max = 0;
        size_t j = i;
        while (j < m && same_tokens(&b->grams[j], &b->grams[i])) {
            int src = b->grams[j].src;
            long count = 0;
            while (j < m && b->grams[j].src == src && same_tokens(&b->grams[j], &b->grams[i]))
                count++, j++;
            if (src == 0)
                hyp = count;
            else if (count > ref_max)
                ref_max = count;
        }
        *total += hyp;
        *correct += hyp < ref_max ? hyp : ref_max;
        i = j;
    }
    return 0;
}

int nmt_bleu_sentence_stats(nmt_bleu *b, nmt_bleu_stats *out, const char *hyp,
                            const char *const *refs, size_t n_refs)
{
    if (!hyp || !refs || n_refs == 0)
        return nmt_set_error(NMT_ERR_ARG, "bleu: a sentence needs a hypothesis and a reference");
    size_t n_src = n_refs + 1;
    char **text = calloc(n_src, sizeof *text);
    size_t *start = calloc(n_src, sizeof *start);
    long *len = calloc(n_src, sizeof *len);
    int rc = NMT_OK;
    if (!text || !start || !len)
        goto nomem;
    size_t at = 0;
    for (size_t s = 0; s < n_src; s++) {
        const char *raw = s == 0 ? hyp : refs[s - 1];
        if (!raw) {
            rc = nmt_set_error(NMT_ERR_ARG, "bleu: reference %zu is missing", s);
            goto done;
        }
        if (!(text[s] = nmt_bleu_preprocess(raw, &b->opts)))
            goto nomem;
        long n = split_words(b, at, text[s]);
        if (n < 0)
            goto nomem;
        start[s] = at;
        len[s] = n;
        at += (size_t)n;
    }
    memset(out, 0, sizeof *out);
    out->sys_len = len[0];
    out->ref_len = closest_ref_len(len[0], len + 1, n_refs);
    for (int n = 1; n <= NMT_BLEU_ORDER; n++)
        if (count_order(b, n, start, len, n_src, &out->correct[n - 1], &out->total[n - 1]))
            goto nomem;
    goto done;
nomem:
    rc = nmt_set_error(NMT_ERR_NOMEM, "bleu: out of memory");
done:
    if (text)
        for (size_t s = 0; s < n_src; s++)
            free(text[s]);
    free(text);
    free(start);
    free(len);
    return rc;
}

void nmt_bleu_add_stats(nmt_bleu *b, const nmt_bleu_stats *st, size_t n_refs)
{
    b->sum.sys_len += st->sys_len;
    b->sum.ref_len += st->ref_len;
    for (int n = 0; n < NMT_BLEU_ORDER; n++) {
        b->sum.correct[n] += st->correct[n];
        b->sum.total[n] += st->total[n];
    }
    if (b->sentences == 0)
        b->nrefs = (long)n_refs;
    else if (b->nrefs != (long)n_refs)
        b->nrefs = -1;
    b->sentences++;
}

int nmt_bleu_add(nmt_bleu *b, nmt_bleu_stats *out, const char *hyp,
                 const char *const *refs, size_t n_refs)
{
    nmt_bleu_stats st;
    int rc = nmt_bleu_sentence_stats(b, &st, hyp, refs, n_refs);
    if (rc)
        return rc;
    nmt_bleu_add_stats(b, &st, n_refs);
    if (out)
        *out = st;
    return NMT_OK;
}

void nmt_bleu_result(const nmt_bleu *b, nmt_bleu_score *out)
{
    nmt_bleu_compute(out, &b->sum, &b->opts);
}

const nmt_bleu_stats *nmt_bleu_totals(const nmt_bleu *b)
{
    return &b->sum;
}

size_t nmt_bleu_sentences(const nmt_bleu *b)
{
    return b->sentences;
}

long nmt_bleu_nrefs(const nmt_bleu *b)
{
    return b->nrefs;
}

/* ---- printed forms ------------------------------------------------------- */

static const char *smooth_name(nmt_bleu_smooth s)
{
    switch (s) {
    case NMT_BLEU_SMOOTH_NONE: return "none";
    case NMT_BLEU_SMOOTH_FLOOR: return "floor";
    case NMT_BLEU_SMOOTH_ADD_K: return "add-k";
    default: return "exp";
    }
}

int nmt_bleu_signature(char *buf, size_t cap, const nmt_bleu_opts *opts, long nrefs,
                       int short_form)
{
    char refs[32], smooth[64];
    if (nrefs < 0)
        snprintf(refs, sizeof refs, "var");
    else
        snprintf(refs, sizeof refs, "%ld", nrefs);
    /* Methods that take a value show it: "floor[0.10]", "add-k[1.00]". */
    if (opts->smooth == NMT_BLEU_SMOOTH_FLOOR || opts->smooth == NMT_BLEU_SMOOTH_ADD_K)
        snprintf(smooth, sizeof smooth, "%s[%.2f]", smooth_name(opts->smooth), opts->smooth_value);
    else
        snprintf(smooth, sizeof smooth, "%s", smooth_name(opts->smooth));
    return snprintf(buf, cap, "%s:%s|%s:%s|%s:%s|tok:%s|%s:%s|%s:%s",
                    short_form ? "#" : "nrefs", refs,
                    short_form ? "c" : "case", opts->lowercase ? "lc" : "mixed",
                    short_form ? "e" : "eff", opts->effective_order ? "yes" : "no",
                    opts->tokenize == NMT_BLEU_TOK_NONE ? "none" : "13a",
                    short_form ? "s" : "smooth", smooth,
                    short_form ? "v" : "version", NMT_BLEU_SACREBLEU_VERSION);
}

int nmt_bleu_verbose(char *buf, size_t cap, const nmt_bleu_score *s)
{
    return snprintf(buf, cap, "%.1f/%.1f/%.1f/%.1f (BP = %.3f ratio = %.3f hyp_len = %ld ref_len = %ld)",
                    s->precisions[0], s->precisions[1], s->precisions[2], s->precisions[3],
                    s->bp, s->ratio, s->stats.sys_len, s->stats.ref_len);
}

/* ---- length buckets ------------------------------------------------------ */

int nmt_bleu_bucket(size_t n_tokens)
{
    if (n_tokens == 0)
        return 0;
    size_t k = (n_tokens - 1) / 10;
    return k < NMT_BLEU_N_BUCKETS - 1 ? (int)k : NMT_BLEU_N_BUCKETS - 1;
}

const char *nmt_bleu_bucket_label(int bucket)
{
    static const char *const labels[NMT_BLEU_N_BUCKETS] = {
        "1-10", "11-20", "21-30", "31-40", "41-50", "51+",
    };
    return bucket >= 0 && bucket < NMT_BLEU_N_BUCKETS ? labels[bucket] : "?";
}
