/* libFuzzer target: the BLEU input path, the library API that `nmt bleu` and
 * the training loop's validation call.
 *
 * The first byte chooses the options: bits 0-1 the references per sentence
 * (1 + value % 3), bit 2 no tokenizer (else 13a), bit 3 lowercase, bits 4-5
 * the smoothing, bit 6 the effective order. The rest is lines: a
 * hypothesis, then its references, then the next hypothesis... (a last group
 * short of references is dropped). The lines are raw bytes (the library must
 * cope with anything, even invalid UTF-8) cut at '\n', each ending at a NUL
 * if it holds one. The groups are scored as a corpus and one by one, the
 * totals under every smoothing, and every line goes through the
 * preprocessing functions on their own. The invariants callers rely on are
 * checked (a broken one traps): counts never negative, matches never above
 * totals, the hypothesis length equal to the words of its preprocessed text,
 * scores finite in 0..100, printed forms as
 * long as they say. Seeds: tests/fuzz/bleu/. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/bleu.h"
#include "nmt/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) \
    do {            \
        if (!(cond)) \
            __builtin_trap(); \
    } while (0)

enum { MAX_LINES = 64, MAX_REFS = 3 };

static void check_stats(const nmt_bleu_stats *s)
{
    CHECK(s->sys_len >= 0 && s->ref_len >= 0);
    for (int n = 0; n < NMT_BLEU_ORDER; n++) {
        CHECK(s->correct[n] >= 0 && s->correct[n] <= s->total[n]);
        /* a hypothesis of L tokens has L - n of the (n+1)-grams */
        CHECK(s->total[n] <= s->sys_len);
    }
}

static void check_score(const nmt_bleu_score *s)
{
    CHECK(isfinite(s->score) && s->score >= 0.0 && s->score <= 100.0 + 1e-9);
    CHECK(isfinite(s->bp) && s->bp >= 0.0 && s->bp <= 1.0);
    CHECK(isfinite(s->ratio) && s->ratio >= 0.0);
    for (int n = 0; n < NMT_BLEU_ORDER; n++)
        CHECK(isfinite(s->precisions[n]) && s->precisions[n] >= 0.0 && s->precisions[n] <= 100.0 + 1e-9);
}

/* The printed forms: the length they return is the length they write. */
static void check_printed(const nmt_bleu_opts *o, long nrefs, const nmt_bleu_score *s)
{
    char small[8], big[512];
    for (int form = 0; form < 2; form++) {
        int need = nmt_bleu_signature(small, sizeof small, o, nrefs, form);
        CHECK(need > 0 && strlen(small) == sizeof small - 1);
        CHECK(nmt_bleu_signature(big, sizeof big, o, nrefs, form) == need);
        CHECK(strlen(big) == (size_t)need);
    }
    int need = nmt_bleu_verbose(small, sizeof small, s);
    CHECK(need > 0 && nmt_bleu_verbose(big, sizeof big, s) == need && strlen(big) == (size_t)need);
}

static void check_line_functions(const char *line, const nmt_bleu_opts *o)
{
    char *pre = nmt_bleu_preprocess(line, o);
    char *tok = nmt_bleu_tokenize_13a(line);
    char *low = nmt_bleu_lowercase(line);
    if (pre) {
        int b = nmt_bleu_bucket(nmt_bleu_count_words(pre));
        CHECK(b >= 0 && b < NMT_BLEU_N_BUCKETS && nmt_bleu_bucket_label(b));
    }
    free(pre);
    free(tok);
    free(low);
}

static void score_groups(char **lines, size_t n_lines, size_t n_refs, const nmt_bleu_opts *o)
{
    nmt_bleu *b;
    if (nmt_bleu_create(&b, o) != NMT_OK)
        return;
    nmt_bleu_stats sum = {0};
    for (size_t g = 0; g + 1 + n_refs <= n_lines; g += 1 + n_refs) {
        const char *hyp = lines[g];
        const char *const *refs = (const char *const *)lines + g + 1;
        nmt_bleu_stats st, added;
        if (nmt_bleu_sentence_stats(b, &st, hyp, refs, n_refs) != NMT_OK)
            continue; /* out of memory */
        check_stats(&st);
        char *pre = nmt_bleu_preprocess(hyp, o);
        if (pre) {
            CHECK((long)nmt_bleu_count_words(pre) == st.sys_len);
            free(pre);
        }
        if (nmt_bleu_add(b, &added, hyp, refs, n_refs) != NMT_OK)
            continue;
        CHECK(!memcmp(&st, &added, sizeof st)); /* the same sentence, the same counts */
        sum.sys_len += st.sys_len;
        sum.ref_len += st.ref_len;
        for (int n = 0; n < NMT_BLEU_ORDER; n++) {
            sum.correct[n] += st.correct[n];
            sum.total[n] += st.total[n];
        }
        nmt_bleu_score s;
        nmt_bleu_opts so = *o;
        so.effective_order = 1;
        nmt_bleu_compute(&s, &st, &so);
        check_score(&s);
    }
    CHECK(!memcmp(&sum, nmt_bleu_totals(b), sizeof sum));
    nmt_bleu_score s;
    nmt_bleu_result(b, &s);
    check_score(&s);
    check_printed(o, nmt_bleu_nrefs(b), &s);
    /* every smoothing of the same totals */
    for (int m = NMT_BLEU_SMOOTH_EXP; m <= NMT_BLEU_SMOOTH_ADD_K; m++) {
        nmt_bleu_opts so = *o;
        so.smooth = (nmt_bleu_smooth)m;
        so.smooth_value = nmt_bleu_smooth_default(so.smooth);
        for (so.effective_order = 0; so.effective_order < 2; so.effective_order++) {
            nmt_bleu_compute(&s, &sum, &so);
            check_score(&s);
        }
    }
    nmt_bleu_reset(b);
    CHECK(nmt_bleu_sentences(b) == 0);
    nmt_bleu_free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t n_refs = 1 + (data[0] & 3) % MAX_REFS;
    nmt_bleu_opts o;
    nmt_bleu_opts_init(&o);
    o.tokenize = data[0] & 4 ? NMT_BLEU_TOK_NONE : NMT_BLEU_TOK_13A;
    o.lowercase = !!(data[0] & 8);
    o.smooth = (nmt_bleu_smooth)((data[0] >> 4) & 3);
    o.smooth_value = nmt_bleu_smooth_default(o.smooth);
    o.effective_order = !!(data[0] & 64);
    /* a NUL-terminated copy, cut into lines in place */
    char *text = malloc(size);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    char *lines[MAX_LINES];
    size_t n_lines = 0;
    for (char *p = text; n_lines < MAX_LINES;) {
        lines[n_lines++] = p;
        char *nl = memchr(p, '\n', (size_t)(text + size - 1 - p));
        if (!nl)
            break;
        *nl = '\0';
        p = nl + 1;
    }
    score_groups(lines, n_lines, n_refs, &o);
    for (size_t i = 0; i < n_lines; i++)
        check_line_functions(lines[i], &o);
    free(text);
    return 0;
}
