/* BLEU's text preprocessing, as sacreBLEU 2.x does it: Python's notion of
 * whitespace and of lowercase, and the mteval-v13a tokenizer. Each rule
 * mirrors a sacreBLEU behaviour, since a different token is a different
 * score. */
#include "nmt/bleu.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eval/bleu_internal.h"

size_t nmt_bleu_count_words(const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t n = 0;
    int in_word = 0;
    while (*s) {
        uint32_t cp;
        size_t k = bleu_decode(s, &cp);
        if (nmt_utf8_is_python_space(cp))
            in_word = 0;
        else if (!in_word)
            in_word = 1, n++;
        s += k;
    }
    return n;
}

/* The length of text without its trailing whitespace (Python's rstrip). */
static size_t rstrip_len(const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t end = 0, i = 0;
    while (s[i]) {
        uint32_t cp;
        size_t k = bleu_decode(s + i, &cp);
        i += k;
        if (!nmt_utf8_is_python_space(cp))
            end = i;
    }
    return end;
}

/* ---- the mteval-v13a tokenizer ------------------------------------------ */

/* A growable output string for the tokenizer's passes. */
typedef struct strbuf {
    char *s;
    size_t n, cap;
    int failed;
} strbuf;

static void sb_reserve(strbuf *b, size_t more)
{
    if (b->failed || b->n + more + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->n + more + 1)
        cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->failed = 1;
        return;
    }
    b->s = s;
    b->cap = cap;
}

static void sb_put(strbuf *b, const char *s, size_t n)
{
    sb_reserve(b, n);
    if (b->failed)
        return;
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

static void sb_clear(strbuf *b)
{
    b->n = 0;
    if (b->s)
        b->s[0] = '\0';
}

static void sb_putc(strbuf *b, char c)
{
    sb_put(b, &c, 1);
}

/* Python's str.replace(from, to): every non-overlapping occurrence, left to
 * right. Returns the new string (the input is freed) or NULL. */
static char *replace_all(char *text, const char *from, const char *to)
{
    if (!strstr(text, from))
        return text;
    strbuf b = {0};
    size_t nf = strlen(from), nt = strlen(to);
    const char *p = text, *hit;
    while ((hit = strstr(p, from))) {
        sb_put(&b, p, (size_t)(hit - p));
        sb_put(&b, to, nt);
        p = hit + nf;
    }
    sb_put(&b, p, strlen(p));
    free(text);
    if (b.failed) {
        free(b.s);
        return NULL;
    }
    return b.s ? b.s : calloc(1, 1);
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* The symbols 13a separates from everything: ASCII punctuation except the
 * apostrophe, comma, hyphen and period (which have their own rules), and the
 * space itself (harmless: spaces are collapsed at the end). */
static int is_13a_symbol(char c)
{
    return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') ||
           (c >= '(' && c <= '+') || (c >= ':' && c <= '@') || c == '/';
}

/* The four regular-expression passes of sacreBLEU's tokenizer_re, each a
 * left-to-right scan for non-overlapping matches as re.sub does. They work on
 * bytes: the patterns name only ASCII characters, and a "not a digit" that
 * Python matches as one multi-byte character is matched here at its last byte
 * (before a period) or its first (after one), which inserts the same spaces. */
static void pass_symbols(strbuf *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (is_13a_symbol(s[i])) {
            char t[3] = {' ', s[i], ' '};
            sb_put(out, t, 3);
        } else {
            sb_putc(out, s[i]);
        }
    }
}

/* ([^0-9])([\.,]) -> "\1 \2 ": a period or comma after a non-digit. */
static void pass_punct_after_nondigit(strbuf *out, const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (i + 1 < n && !is_digit(s[i]) && (s[i + 1] == '.' || s[i + 1] == ',')) {
            char t[4] = {s[i], ' ', s[i + 1], ' '};
            sb_put(out, t, 4);
            i += 2;
        } else {
            sb_putc(out, s[i++]);
        }
    }
}

/* ([\.,])([^0-9]) -> " \1 \2": a period or comma before a non-digit. */
static void pass_punct_before_nondigit(strbuf *out, const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (i + 1 < n && (s[i] == '.' || s[i] == ',') && !is_digit(s[i + 1])) {
            char t[4] = {' ', s[i], ' ', s[i + 1]};
            sb_put(out, t, 4);
            i += 2;
        } else {
            sb_putc(out, s[i++]);
        }
    }
}

/* ([0-9])(-) -> "\1 \2 ": a hyphen after a digit. */
static void pass_dash_after_digit(strbuf *out, const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (i + 1 < n && is_digit(s[i]) && s[i + 1] == '-') {
            char t[4] = {s[i], ' ', '-', ' '};
            sb_put(out, t, 4);
            i += 2;
        } else {
            sb_putc(out, s[i++]);
        }
    }
}

/* ' '.join(text.split()): words separated by single spaces. */
static void join_words(strbuf *out, const char *text, size_t n)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0, word = 0;
    int in_word = 0;
    sb_reserve(out, n);
    while (i < n) {
        uint32_t cp;
        size_t k = bleu_decode(s + i, &cp);
        if (nmt_utf8_is_python_space(cp)) {
            if (in_word) {
                if (out->n)
                    sb_putc(out, ' ');
                sb_put(out, text + word, i - word);
                in_word = 0;
            }
        } else if (!in_word) {
            in_word = 1;
            word = i;
        }
        i += k;
    }
    if (in_word) {
        if (out->n)
            sb_putc(out, ' ');
        sb_put(out, text + word, n - word);
    }
}

char *nmt_bleu_tokenize_13a(const char *text)
{
    /* The language-independent part, in sacreBLEU's order: the entity
     * replacements run one after another, so "&amp;lt;" ends as "<". */
    char *line = strdup(text);
    if (!line)
        return NULL;
    static const char *const subs[][2] = {
        {"<skipped>", ""}, {"-\n", ""}, {"\n", " "},
        {"&quot;", "\""}, {"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"},
    };
    for (size_t k = 0; k < sizeof subs / sizeof subs[0] && line; k++)
        line = replace_all(line, subs[k][0], subs[k][1]);
    if (!line)
        return NULL;

    /* The line is padded with a space on each side before the passes, which
     * lets a leading period or comma split off. */
    strbuf a = {0}, b = {0};
    sb_putc(&a, ' ');
    sb_put(&a, line, strlen(line));
    sb_putc(&a, ' ');
    free(line);
    if (a.failed)
        goto fail;
    pass_symbols(&b, a.s, a.n);
    sb_clear(&a);
    pass_punct_after_nondigit(&a, b.s, b.n);
    sb_clear(&b);
    pass_punct_before_nondigit(&b, a.s, a.n);
    sb_clear(&a);
    pass_dash_after_digit(&a, b.s, b.n);
    sb_clear(&b);
    join_words(&b, a.s, a.n);
    if (a.failed || b.failed)
        goto fail;
    free(a.s);
    return b.s ? b.s : calloc(1, 1);
fail:
    free(a.s);
    free(b.s);
    return NULL;
}

char *nmt_bleu_preprocess(const char *text, const nmt_bleu_opts *opts)
{
    char *s = opts->lowercase ? nmt_bleu_lowercase(text) : strdup(text);
    if (!s)
        return NULL;
    s[rstrip_len(s)] = '\0';
    if (opts->tokenize == NMT_BLEU_TOK_NONE)
        return s;
    char *t = nmt_bleu_tokenize_13a(s);
    free(s);
    return t;
}
