/* The words of a line, as word links count them, and the word each of the
 * model's units (tokens or pieces) was cut from (declared in nmt/text.h;
 * docs/DESIGN.md, "Guided alignment"). A word is a maximal run of
 * characters that are not whitespace, whitespace being the tokenizer's
 * (nmt_utf8_is_token_space), so that the tokenizer, which never cuts across
 * it, cuts each token out of one word. */
#include "nmt/text.h"

#include "nmt/error.h"
#include "nmt/utf8.h"

/* Whether the character at s[i] is whitespace; *l its length. */
static int space_at(const unsigned char *s, size_t len, size_t i, size_t *l)
{
    return nmt_utf8_is_token_space(nmt_utf8_decode(s + i, len - i, l));
}

size_t nmt_count_words(const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t words = 0, l;
    int in_word = 0;
    for (size_t i = 0; i < len; i += l) {
        int space = space_at(s, len, i, &l);
        words += !space && !in_word;
        in_word = !space;
    }
    return words;
}

int nmt_token_words(int32_t *word, size_t n, const char *text, size_t len, int lowercase,
                    nmt_tokens *scratch)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t at = 0, l, i = 0;
    int32_t w = 0;
    while (i < len) {
        if (space_at(s, len, i, &l)) {
            i += l;
            continue;
        }
        size_t end = i;
        while (end < len && !space_at(s, len, end, &l))
            end += l;
        /* the word alone is cut as the line cuts it: the tokenizer looks at
         * most at the character after a word's end, which is whitespace
         * (or the line's end) either way */
        int rc = nmt_tokenize(scratch, text + i, end - i, lowercase);
        if (rc)
            return rc;
        for (size_t k = 0; k < scratch->n; k++, at++)
            if (at < n)
                word[at] = w;
        w++;
        i = end;
    }
    if (at != n)
        return nmt_set_error(NMT_ERR_FORMAT, "the line's words hold %zu tokens, not the %zu "
                             "it was cut into", at, n);
    return NMT_OK;
}

/* A walk along a line: at byte `at`, the words begun before it and
 * whether the byte before it was inside a word. */
typedef struct walk {
    size_t at;
    int32_t begun;
    int in_word;
} walk;

/* The word of byte i (not whitespace), the walk moved on to just past it;
 * a walk already past i starts over. */
static int32_t word_of_byte(walk *w, const unsigned char *s, size_t len, size_t i)
{
    if (w->at > i)
        *w = (walk){0, 0, 0};
    size_t l;
    while (w->at <= i) {
        int space = space_at(s, len, w->at, &l);
        w->begun += !space && !w->in_word;
        w->in_word = !space;
        w->at += l;
    }
    return w->begun - 1;
}

void nmt_span_words(int32_t *word, const int32_t *begin, size_t n, const char *text,
                    size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t words = nmt_count_words(text, len), l;
    walk w = {0, 0, 0};
    for (size_t k = 0; k < n; k++) {
        /* the first character at or after the piece's start that is not
         * whitespace */
        size_t i = begin[k] > 0 ? (size_t)begin[k] : 0;
        i = i < len ? i : len;
        while (i < len && space_at(s, len, i, &l))
            i += l;
        if (i >= len) /* whitespace to the end: the last word's */
            word[k] = words > 0 ? (int32_t)words - 1 : -1;
        else
            word[k] = word_of_byte(&w, s, len, i);
    }
}
