/* libFuzzer target: the chrF statistics and scores (nmt/chrf.h), the library
 * API that `nmt bleu -m chrf` and `nmt compare` call.
 *
 * The first two bytes choose the options: byte 0 bits 0-1 the references
 * per sentence (1 + value % 3), bit 2 lowercase, bit 3 whitespace kept,
 * bit 4 eps smoothing, bits 5-7 the word order (0..7); byte 1 the character
 * order (value % 11) and beta (value / 11 % 5). The rest is lines, as for
 * fuzz_bleu: a hypothesis, its references, the next hypothesis... (a last
 * group short of references is dropped), raw bytes cut at '\n'. The
 * invariants callers rely on are checked (a broken one traps): counts never
 * negative, matches within both counts, no hypothesis count where the
 * reference has none, n-gram counts falling by one per character order,
 * nothing past the orders in use; the statistics of several references
 * equal those of the first best single one; a sentence against itself
 * matches everything and scores 100; scores finite in 0..100; corpus totals
 * the sums of the sentences'; printed forms as long as they say. Options
 * with no order at all must be refused. Seeds: tests/fuzz/chrf/. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/chrf.h"
#include "nmt/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) \
    do {            \
        if (!(cond)) \
            __builtin_trap(); \
    } while (0)

enum { MAX_LINES = 64, MAX_REFS = 3 };

static void check_stats(const nmt_chrf_stats *s, const nmt_chrf_opts *o)
{
    int order = o->char_order + o->word_order;
    for (int k = 0; k < NMT_CHRF_MAX_ORDER; k++) {
        CHECK(s->hyp[k] >= 0 && s->ref[k] >= 0 && s->match[k] >= 0);
        CHECK(s->match[k] <= s->hyp[k] && s->match[k] <= s->ref[k]);
        CHECK(s->ref[k] > 0 || s->hyp[k] == 0);
        if (k >= order)
            CHECK(s->hyp[k] == 0 && s->ref[k] == 0);
    }
    /* L characters make L - n + 1 n-grams: one fewer per order */
    for (int k = 0; k + 1 < o->char_order; k++) {
        if (s->ref[k + 1] > 0)
            CHECK(s->ref[k + 1] == s->ref[k] - 1);
        if (s->hyp[k + 1] > 0)
            CHECK(s->hyp[k + 1] == s->hyp[k] - 1);
    }
}

static void check_score(double f)
{
    CHECK(isfinite(f) && f >= 0.0 && f <= 100.0 + 1e-9);
}

static void check_printed(const nmt_chrf_opts *o, long nrefs)
{
    char small[6], big[256];
    for (int form = 0; form < 2; form++) {
        int need = nmt_chrf_signature(small, sizeof small, o, nrefs, form);
        CHECK(need > 0 && strlen(small) == sizeof small - 1);
        CHECK(nmt_chrf_signature(big, sizeof big, o, nrefs, form) == need && strlen(big) == (size_t)need);
    }
    int need = nmt_chrf_name(small, sizeof small, o);
    CHECK(need >= 5 && nmt_chrf_name(big, sizeof big, o) == need && strlen(big) == (size_t)need);
}

/* A sentence against itself: every n-gram matches; 100 unless it has none. */
static void check_self(nmt_chrf *c, const char *line)
{
    const nmt_chrf_opts *o = nmt_chrf_options(c);
    nmt_chrf_stats st;
    if (nmt_chrf_sentence_stats(c, &st, line, &line, 1) != NMT_OK)
        return;
    check_stats(&st, o);
    int any = 0;
    for (int k = 0; k < NMT_CHRF_MAX_ORDER; k++) {
        CHECK(st.hyp[k] == st.ref[k] && st.match[k] == st.ref[k]);
        any |= st.hyp[k] > 0;
    }
    double f = nmt_chrf_compute(&st, o);
    check_score(f);
    if (!o->eps_smoothing)
        CHECK(f == (any ? 100.0 : 0.0));
}

static void score_groups(char **lines, size_t n_lines, size_t n_refs, const nmt_chrf_opts *o)
{
    nmt_chrf *c;
    if (nmt_chrf_create(&c, o) != NMT_OK)
        return;
    nmt_chrf_stats sum;
    memset(&sum, 0, sizeof sum);
    for (size_t g = 0; g + 1 + n_refs <= n_lines; g += 1 + n_refs) {
        const char *hyp = lines[g];
        const char *const *refs = (const char *const *)lines + g + 1;
        nmt_chrf_stats st, added, one;
        if (nmt_chrf_sentence_stats(c, &st, hyp, refs, n_refs) != NMT_OK)
            continue; /* out of memory */
        check_stats(&st, o);
        check_score(nmt_chrf_compute(&st, o));
        /* the first reference with the highest F-score gives the statistics */
        double best = -1.0;
        nmt_chrf_stats want;
        memset(&want, 0, sizeof want);
        for (size_t r = 0; r < n_refs; r++) {
            if (nmt_chrf_sentence_stats(c, &one, hyp, refs + r, 1) != NMT_OK)
                goto next;
            double f = nmt_chrf_compute(&one, o);
            if (f > best) {
                best = f;
                want = one;
            }
        }
        CHECK(!memcmp(&st, &want, sizeof st));
        if (nmt_chrf_add(c, &added, hyp, refs, n_refs) != NMT_OK)
            continue;
        CHECK(!memcmp(&st, &added, sizeof st)); /* the same sentence, the same counts */
        for (int k = 0; k < NMT_CHRF_MAX_ORDER; k++) {
            sum.hyp[k] += st.hyp[k];
            sum.ref[k] += st.ref[k];
            sum.match[k] += st.match[k];
        }
    next:;
    }
    CHECK(!memcmp(&sum, nmt_chrf_totals(c), sizeof sum));
    check_score(nmt_chrf_result(c));
    check_printed(o, nmt_chrf_nrefs(c));
    /* the other smoothing and other betas of the same totals */
    nmt_chrf_opts so = *o;
    for (so.eps_smoothing = 0; so.eps_smoothing < 2; so.eps_smoothing++)
        for (so.beta = 0; so.beta <= 3; so.beta++)
            check_score(nmt_chrf_compute(&sum, &so));
    for (size_t i = 0; i < n_lines; i++)
        check_self(c, lines[i]);
    /* nothing left: 0, or with eps smoothing 1e-14 (1e-16 per order, in percent) */
    nmt_chrf_reset(c);
    CHECK(nmt_chrf_sentences(c) == 0 && nmt_chrf_result(c) < 1e-12);
    nmt_chrf_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t n_refs = 1 + (data[0] & 3) % MAX_REFS;
    nmt_chrf_opts o;
    nmt_chrf_opts_init(&o);
    o.lowercase = !!(data[0] & 4);
    o.whitespace = !!(data[0] & 8);
    o.eps_smoothing = !!(data[0] & 16);
    o.word_order = data[0] >> 5;
    o.char_order = data[1] % (NMT_CHRF_MAX_CHAR_ORDER + 1);
    o.beta = data[1] / (NMT_CHRF_MAX_CHAR_ORDER + 1) % 5;
    if (o.char_order + o.word_order == 0) {
        static char sentinel;
        nmt_chrf *c = (nmt_chrf *)(void *)&sentinel; /* must become NULL */
        CHECK(nmt_chrf_create(&c, &o) == NMT_ERR_ARG && c == NULL);
        o.char_order = 1;
    }
    /* a NUL-terminated copy, cut into lines in place */
    char *text = malloc(size - 1);
    if (!text)
        return 0;
    memcpy(text, data + 2, size - 2);
    text[size - 2] = '\0';
    char *lines[MAX_LINES];
    size_t n_lines = 0;
    for (char *p = text; n_lines < MAX_LINES;) {
        lines[n_lines++] = p;
        char *nl = memchr(p, '\n', (size_t)(text + size - 2 - p));
        if (!nl)
            break;
        *nl = '\0';
        p = nl + 1;
    }
    score_groups(lines, n_lines, n_refs, &o);
    free(text);
    return 0;
}
