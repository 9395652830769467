/* Tokenizing and detokenizing (declared in nmt/text.h).
 *
 * Tokens are maximal runs of "word" characters; whitespace separates them and
 * every punctuation character or symbol is a token of its own (a run of the
 * same one, like "..." or "!!", stays one token, but not of brackets and
 * quotes). A few punctuation marks
 * join a word instead of splitting it, because splitting would lose how the
 * word is written and the detokenizer could not put it back:
 *   - '.' between two word characters ("3.5", "U.S", "e.g"), ',' and ':'
 *     between two ASCII digits ("1,000", "10:30");
 *   - a hyphen before a word character ("T-shirt", "3-year-old");
 *   - an apostrophe (' or U+2019) before a word character ("l'homme",
 *     "aujourd'hui", "O'Brien").
 * Hyphens also stay with a word at its edges, as in German "Ess- und
 * Wohnzimmer", "mit Tellern und -tassen" and „Open“-Schild: a hyphen ending a
 * word before a space or ',' and a lone hyphen starting one. HTML entities
 * such as "&amp;" (some corpora have them) are one token.
 * English clitics are then split off the end of a word, Penn Treebank
 * style, so that "John's" and "John" share a token: "John's" -> "John 's",
 * "they're" -> "they 're", "don't" -> "do n't", "can't" -> "ca n't" (also
 * 've 'll 'd 'm, any case, either apostrophe). The detokenizer glues them
 * back; text split that way already ("they 're") gives the same tokens.
 * Apostrophes inside other words are left alone, so French elision
 * ("l'homme") stays one token.
 *
 * Punctuation means ASCII punctuation and symbols except '_', and for the
 * rest of Unicode the general categories P* and S* of the blocks that occur in
 * text (Latin-1, General Punctuation, currency, arrows, math, dingbats, CJK
 * punctuation, full-width forms, emoji), listed in `punct_ranges`. */
#include "nmt/text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"
#include "nmt/utf8.h"

/* Non-ASCII punctuation and symbols, sorted, inclusive. Letters, digits,
 * marks and format characters (ª º µ ² ¹ soft hyphen, ...) are word
 * characters and are not listed. */
static const uint32_t punct_ranges[][2] = {
    {0x00a1, 0x00a9}, {0x00ab, 0x00ac}, {0x00ae, 0x00b1}, {0x00b4, 0x00b4},
    {0x00b6, 0x00b8}, {0x00bb, 0x00bb}, {0x00bf, 0x00bf}, {0x00d7, 0x00d7},
    {0x00f7, 0x00f7}, {0x037e, 0x037e}, {0x0387, 0x0387}, {0x055a, 0x055f},
    {0x0589, 0x058a}, {0x05be, 0x05be}, {0x05c0, 0x05c0}, {0x05c3, 0x05c3},
    {0x05c6, 0x05c6}, {0x05f3, 0x05f4}, {0x0606, 0x060f}, {0x061b, 0x061b},
    {0x061d, 0x061f}, {0x066a, 0x066d}, {0x06d4, 0x06d4}, {0x0964, 0x0965},
    {0x0970, 0x0970}, {0x0e3f, 0x0e3f}, {0x0e4f, 0x0e4f}, {0x0e5a, 0x0e5b},
    {0x10fb, 0x10fb}, {0x1360, 0x1368}, {0x166e, 0x166e}, {0x169b, 0x169c},
    {0x16eb, 0x16ed}, {0x2010, 0x2027}, {0x2030, 0x205e}, {0x20a0, 0x20c0},
    {0x2100, 0x2101}, {0x2103, 0x2103}, {0x2109, 0x2109}, {0x2116, 0x2117},
    {0x2120, 0x2120}, {0x2122, 0x2122}, {0x2190, 0x244a}, {0x2500, 0x2775},
    {0x2794, 0x2bff}, {0x2e00, 0x2e5d}, {0x3001, 0x3004}, {0x3008, 0x3020},
    {0x3030, 0x3030}, {0x303d, 0x303f}, {0x30fb, 0x30fb}, {0xfd3e, 0xfd3f},
    {0xfe10, 0xfe19}, {0xfe30, 0xfe52}, {0xfe54, 0xfe66}, {0xfe68, 0xfe6b},
    {0xff01, 0xff0f}, {0xff1a, 0xff20}, {0xff3b, 0xff40}, {0xff5b, 0xff65},
    {0xffe0, 0xffe6}, {0xffe8, 0xffee}, {0xfffc, 0xfffd}, {0x1f000, 0x1faff},
};

static int is_punct(uint32_t c)
{
    if (c < 0x80)
        return c > ' ' && c < 0x7f && c != '_' && !(c >= '0' && c <= '9') &&
               !((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
    size_t lo = 0, hi = sizeof punct_ranges / sizeof punct_ranges[0];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c > punct_ranges[mid][1])
            lo = mid + 1;
        else if (c < punct_ranges[mid][0])
            hi = mid;
        else
            return 1;
    }
    return 0;
}

static int is_word(uint32_t c)
{
    return !nmt_utf8_is_token_space(c) && !is_punct(c);
}

static int is_digit(uint32_t c)
{
    return c >= '0' && c <= '9';
}

/* Whether punctuation c, between word character prev and next, stays inside
 * the word (see the top of the file). */
static int joins(uint32_t prev, uint32_t c, uint32_t next)
{
    if (!is_word(next))
        return 0;
    switch (c) {
    case '.':
    case '-':
    case 0x2010: /* hyphen */
    case 0x2011: /* non-breaking hyphen */
    case '\'':
    case 0x2019: /* right single quotation mark, the typographic apostrophe */
        return 1;
    case ',':
    case ':':
        return is_digit(prev) && is_digit(next);
    default:
        return 0;
    }
}

/* Simple lowercase mapping of ASCII, Latin-1 and Latin Extended-A. In
 * Extended-A, upper and lower case mostly alternate, but the parity flips at
 * U+0139 and again at U+0179, and a few letters have no pair. */
static uint32_t lower(uint32_t c)
{
    if (c >= 'A' && c <= 'Z')
        return c + 32;
    if (c < 0xc0 || c > 0x17f)
        return c;
    if (c <= 0xde)
        return c == 0xd7 ? c : c + 32; /* × is not a letter */
    if (c < 0x100)
        return c;
    if (c == 0x130)
        return 'i';  /* İ */
    if (c == 0x178)
        return 0xff; /* Ÿ -> ÿ, back in Latin-1 */
    if (c <= 0x137)
        return (c & 1) ? c : c + 1; /* Ā..ķ; ı (U+0131) is already lower */
    if (c == 0x138 || c == 0x149 || c == 0x17f)
        return c;    /* ĸ ŉ ſ: lower case without an upper */
    if (c <= 0x148)
        return (c & 1) ? c + 1 : c; /* Ĺ..ň */
    if (c <= 0x177)
        return (c & 1) ? c : c + 1; /* Ŋ..ŷ */
    return (c & 1) ? c + 1 : c;     /* Ź..ž */
}

/* Writes s[0..n) lowercased into out and returns the bytes written, never
 * more than n (no lowercase letter here is longer than its capital). */
static size_t lower_into(char *out, const unsigned char *s, size_t n)
{
    char *w = out;
    for (size_t i = 0; i < n;) {
        if (s[i] < 0x80) {
            *w++ = (char)lower(s[i++]);
            continue;
        }
        size_t l;
        uint32_t c = nmt_utf8_decode(s + i, n - i, &l);
        uint32_t lc = c == NMT_UTF8_INVALID ? c : lower(c);
        if (lc == c) {
            memcpy(w, s + i, l);
            w += l;
        } else
            w += nmt_utf8_encode(w, lc);
        i += l;
    }
    return (size_t)(w - out);
}

size_t nmt_lowercase(char *out, const char *text, size_t len)
{
    size_t n = lower_into(out, (const unsigned char *)text, len);
    out[n] = '\0';
    return n;
}

/* Marks whose runs are one token ("...", "!!", "--", "=="). Brackets and
 * quotes are not among them: "))" is two closings. */
static int repeats(uint32_t c)
{
    return c < 0x80 ? strchr(".!?-=*~+<>^|", (int)c) != NULL : c == 0x2026 || c == 0x2014;
}

/* Where an HTML entity (&amp; &#39; &#x27;) starting at s[i] == '&' ends,
 * or i if there is none. */
static size_t entity_end(const unsigned char *s, size_t i, size_t len)
{
    size_t j = i + 1, k;
    int numeric = j < len && s[j] == '#';
    int hex = numeric && j + 1 < len && (s[j + 1] | 0x20) == 'x';
    j += (size_t)numeric + (size_t)hex;
    for (k = j; k < len && k - j < 10; k++) {
        unsigned char c = s[k];
        int ok = numeric ? (c >= '0' && c <= '9') || (hex && (c | 0x20) >= 'a' && (c | 0x20) <= 'f')
                         : ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c >= '0' && c <= '9');
        if (!ok)
            break;
    }
    return k > j && k < len && s[k] == ';' ? k + 1 : i;
}

/* Appends text[a..b) as a token; the buffer was sized for the whole line. */
static int emit(nmt_tokens *out, char **w, const unsigned char *s, size_t a, size_t b,
                int lowercase)
{
    if (out->n == out->cap) {
        size_t cap = out->cap ? 2 * out->cap : 64;
        char **tok = realloc(out->tok, cap * sizeof *tok);
        if (tok)
            out->tok = tok;
        size_t *len = realloc(out->len, cap * sizeof *len);
        if (len)
            out->len = len;
        if (!tok || !len)
            return nmt_set_error(NMT_ERR_NOMEM, "out of memory tokenizing");
        out->cap = cap;
    }
    char *start = *w;
    if (!lowercase) {
        memcpy(start, s + a, b - a);
        *w += b - a;
    } else {
        *w += lower_into(start, s + a, b - a);
    }
    *(*w)++ = '\0';
    out->tok[out->n] = start;
    out->len[out->n] = (size_t)(*w - start) - 1;
    out->n++;
    return NMT_OK;
}

static int ascii_ieq(const unsigned char *s, size_t n, const char *lit)
{
    size_t k = strlen(lit);
    if (n != k)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((s[i] | 0x20) != (unsigned char)lit[i])
            return 0;
    return 1;
}

static int is_clitic_tail(const unsigned char *s, size_t n)
{
    static const char *const tails[] = {"s", "re", "ve", "ll", "d", "m"};
    for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++)
        if (ascii_ieq(s, n, tails[i]))
            return 1;
    return 0;
}

/* Where an English clitic starts in the word s[a..b), or b if none: at the
 * last apostrophe if the rest is s re ve ll d m, one byte earlier for n't. */
static size_t clitic_start(const unsigned char *s, size_t a, size_t b)
{
    size_t apo = b, apo_len = 0;
    for (size_t i = a; i < b; i++) {
        if (s[i] == '\'') {
            apo = i;
            apo_len = 1;
        } else if (i + 2 < b && s[i] == 0xe2 && s[i + 1] == 0x80 && s[i + 2] == 0x99) {
            apo = i;
            apo_len = 3;
        }
    }
    if (apo == b || apo == a)
        return b;
    const unsigned char *tail = s + apo + apo_len;
    size_t tail_len = b - apo - apo_len;
    if (is_clitic_tail(tail, tail_len))
        return apo;
    if (ascii_ieq(tail, tail_len, "t") && apo - 1 > a && (s[apo - 1] | 0x20) == 'n')
        return apo - 1;
    return b;
}

/* Already split text ("they 're"): where a clitic token starting with the
 * apostrophe s[i..a) ends, or i if what follows is not one. */
static size_t clitic_end(const unsigned char *s, size_t i, size_t a, size_t len)
{
    size_t k = a, l;
    while (k < len && is_word(nmt_utf8_decode(s + k, len - k, &l)))
        k += l;
    return k > a && is_clitic_tail(s + a, k - a) ? k : i;
}

int nmt_tokenize(nmt_tokens *out, const char *text, size_t len, int lowercase)
{
    out->n = 0;
    /* Tokens never grow under lowercasing, and each adds one NUL: 2 len + 1
     * bytes always suffice, so the pointers never move. */
    if (len > (SIZE_MAX - 1) / 2)
        return nmt_set_error(NMT_ERR_NOMEM, "line too long to tokenize");
    if (out->buf_cap < 2 * len + 1) {
        char *b = realloc(out->buf, 2 * len + 1);
        if (!b)
            return nmt_set_error(NMT_ERR_NOMEM, "out of memory tokenizing");
        out->buf = b;
        out->buf_cap = 2 * len + 1;
    }
    const unsigned char *s = (const unsigned char *)text;
    char *w = out->buf;
    size_t i = 0;
    while (i < len) {
        size_t l;
        uint32_t c = nmt_utf8_decode(s + i, len - i, &l);
        if (nmt_utf8_is_token_space(c)) {
            i += l;
            continue;
        }
        size_t start = i, end = i + l;
        int rc;
        size_t l2, l3;
        int hyphen_led = c == '-' && end < len && is_word(nmt_utf8_decode(s + end, len - end, &l2));
        if (is_punct(c) && !hyphen_led) {
            size_t e = c == '&'                    ? entity_end(s, i, len)
                       : c == '\'' || c == 0x2019 ? clitic_end(s, i, end, len)
                                                   : i;
            if (e > i)
                end = e;
            while (e == i && repeats(c) && end < len && nmt_utf8_decode(s + end, len - end, &l2) == c)
                end += l2;
            if ((rc = emit(out, &w, s, start, end, lowercase)))
                return rc;
            i = end;
            continue;
        }
        uint32_t prev = c;
        while (end < len) {
            uint32_t c2 = nmt_utf8_decode(s + end, len - end, &l2);
            if (is_punct(c2)) {
                uint32_t c3 = end + l2 < len ? nmt_utf8_decode(s + end + l2, len - end - l2, &l3) : ' ';
                if (!joins(prev, c2, c3)) {
                    if (c2 == '-' && (nmt_utf8_is_token_space(c3) || c3 == ','))
                        end += l2; /* "Ess-" of "Ess- und Wohnzimmer" */
                    break;
                }
            } else if (nmt_utf8_is_token_space(c2))
                break;
            prev = c2;
            end += l2;
        }
        size_t split = clitic_start(s, start, end);
        if ((rc = emit(out, &w, s, start, split, lowercase)))
            return rc;
        if (split < end && (rc = emit(out, &w, s, split, end, lowercase)))
            return rc;
        i = end;
    }
    return NMT_OK;
}

int nmt_tokens_push(nmt_tokens *t, const char *s, size_t len)
{
    size_t used = t->n ? (size_t)(t->tok[t->n - 1] - t->buf) + t->len[t->n - 1] + 1 : 0;
    if (len > SIZE_MAX / 2 - used)
        return nmt_set_error(NMT_ERR_NOMEM, "token too long");
    if (used + len + 1 > t->buf_cap) {
        size_t cap = t->buf_cap ? t->buf_cap : 256;
        while (cap < used + len + 1)
            cap *= 2;
        char *b = realloc(t->buf, cap);
        if (!b)
            return nmt_set_error(NMT_ERR_NOMEM, "out of memory for tokens");
        for (size_t k = 0; k < t->n; k++) /* the tokens moved with the buffer */
            t->tok[k] = b + (t->tok[k] - t->buf);
        t->buf = b;
        t->buf_cap = cap;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        char **tok = realloc(t->tok, cap * sizeof *tok);
        if (tok)
            t->tok = tok;
        size_t *l = realloc(t->len, cap * sizeof *l);
        if (l)
            t->len = l;
        if (!tok || !l)
            return nmt_set_error(NMT_ERR_NOMEM, "out of memory for tokens");
        t->cap = cap;
    }
    char *at = t->buf + used;
    memcpy(at, s, len);
    at[len] = '\0';
    t->tok[t->n] = at;
    t->len[t->n] = len;
    t->n++;
    return NMT_OK;
}

void nmt_tokens_free(nmt_tokens *t)
{
    free(t->tok);
    free(t->len);
    free(t->buf);
    memset(t, 0, sizeof *t);
}

/* ---- detokenizer ---- */

enum { GLUE_LEFT = 1, GLUE_RIGHT = 2 }; /* no space before / after a token */

/* Which quotes are open in the sentence so far. */
typedef struct quote_state {
    int straight_double, straight_single;
    int low_double, low_single; /* German „ ‚ open, closed by “ ‘ */
    int guillemet, guillemet_rev; /* « » open (French) or » « (German) */
    size_t singles_left, doubles_left; /* lone ' and " tokens still to come */
    int after_close; /* the last token closed a quote */
} quote_state;

static int in_list(const char *t, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(t, *list))
            return 1;
    return 0;
}

static const char *const closers[] = {")", "]", "}", "%", "‰", "›", "°", NULL};
static const char *const openers[] = {"(", "[", "{", "¿", "¡", "‹", "$", "£", "¥", "#", NULL};
/* CJK and full-width punctuation: no spaces on either side. */
static const char *const cjk[] = {
    "。", "、", "，", "！", "？", "：", "；", "（", "）", "［", "］", "｛", "｝",
    "「", "」", "『", "』", "【", "】", "〈", "〉", "《", "》", NULL};

/* Sentence punctuation: a token made only of . , ! ? ; : … ("...", "?!"). */
static int is_sentence_punct(const char *t)
{
    if (!*t)
        return 0;
    for (const unsigned char *p = (const unsigned char *)t; *p;) {
        if (*p < 0x80 && strchr(".,!?;:", *p))
            p++;
        else if (p[0] == 0xe2 && p[1] == 0x80 && p[2] == 0xa6) /* … */
            p += 3;
        else
            return 0;
    }
    return 1;
}

static int is_clitic(const char *t)
{
    const unsigned char *s = (const unsigned char *)t;
    size_t n = strlen(t);
    size_t apo = s[0] == '\'' ? 1 : (n >= 3 && s[0] == 0xe2 && s[1] == 0x80 && s[2] == 0x99) ? 3 : 0;
    if (apo)
        return is_clitic_tail(s + apo, n - apo);
    if (n >= 3 && (s[0] | 0x20) == 'n' && (s[n - 1] | 0x20) == 't') {
        size_t mid = n - 2;
        return (mid == 1 && s[1] == '\'') ||
               (mid == 3 && s[1] == 0xe2 && s[2] == 0x80 && s[3] == 0x99);
    }
    return 0;
}

static int ends_in_digit(const char *t)
{
    size_t n = strlen(t);
    return n && t[n - 1] >= '0' && t[n - 1] <= '9';
}

/* A straight quote opens when another one follows to close it, or when it
 * cannot be a mark of feet or inches (4' 6"); then it closes or, for ', marks
 * a plural possessive (the dogs' bowls). */
static int straight_quote(int *open, size_t *left, const char *prev, int single)
{
    (*left)--;
    if (*open) {
        *open = 0;
        return GLUE_LEFT;
    }
    int after_digit = prev && ends_in_digit(prev);
    if (!after_digit && (*left > 0 || !single)) {
        *open = 1;
        return GLUE_RIGHT;
    }
    return GLUE_LEFT;
}

static int glue_quote(const char *t, const char *prev, quote_state *q);

/* How token t attaches to its neighbours; updates the open quotes. */
static int glue(const char *t, const char *prev, quote_state *q)
{
    int after_close = q->after_close;
    q->after_close = 0;
    int g = glue_quote(t, prev, q);
    if (g >= 0) {
        q->after_close = g == GLUE_LEFT;
        return g;
    }
    /* „Open“-Schild: a hyphen-led word right after a closing quote */
    if (t[0] == '-' && t[1] && t[1] != '-' && after_close)
        return GLUE_LEFT;
    if (is_sentence_punct(t) || is_clitic(t) || in_list(t, closers))
        return GLUE_LEFT;
    if (in_list(t, openers))
        return GLUE_RIGHT;
    if (!strcmp(t, "/") || in_list(t, cjk))
        return GLUE_LEFT | GLUE_RIGHT; /* and/or, km/h, 1/2 */
    return 0;
}

/* Quotes: GLUE_LEFT when t closes one, GLUE_RIGHT when it opens one, -1 when
 * t is not a quote. */
static int glue_quote(const char *t, const char *prev, quote_state *q)
{
    if (!strcmp(t, "\""))
        return straight_quote(&q->straight_double, &q->doubles_left, prev, 0);
    if (!strcmp(t, "'"))
        return straight_quote(&q->straight_single, &q->singles_left, prev, 1);
    if (!strcmp(t, "„")) {
        q->low_double = 1;
        return GLUE_RIGHT;
    }
    if (!strcmp(t, "‚")) {
        q->low_single = 1;
        return GLUE_RIGHT;
    }
    if (!strcmp(t, "“")) { /* closes German „, opens English */
        if (q->low_double) {
            q->low_double = 0;
            return GLUE_LEFT;
        }
        return GLUE_RIGHT;
    }
    if (!strcmp(t, "‘")) {
        if (q->low_single) {
            q->low_single = 0;
            return GLUE_LEFT;
        }
        return GLUE_RIGHT;
    }
    if (!strcmp(t, "”")) {
        q->low_double = 0;
        return GLUE_LEFT;
    }
    if (!strcmp(t, "’")) {
        q->low_single = 0;
        return GLUE_LEFT;
    }
    if (!strcmp(t, "«")) {
        if (q->guillemet_rev) {
            q->guillemet_rev = 0;
            return GLUE_LEFT;
        }
        q->guillemet = 1;
        return GLUE_RIGHT;
    }
    if (!strcmp(t, "»")) {
        if (q->guillemet) {
            q->guillemet = 0;
            return GLUE_LEFT;
        }
        q->guillemet_rev = 1;
        return GLUE_RIGHT;
    }
    return -1;
}

char *nmt_detokenize(const char *const *tokens, size_t n)
{
    return nmt_detokenize_head(tokens, n, 0, NULL);
}

char *nmt_detokenize_head(const char *const *tokens, size_t n, size_t k, const char *head)
{
    k = head && k <= n ? k : 0;
    size_t total = 1 + (k ? strlen(head) : 0);
    for (size_t i = k; i < n; i++)
        total += strlen(tokens[i]) + 1;
    char *out = malloc(total);
    if (!out)
        return NULL;
    quote_state q = {0};
    for (size_t i = 0; i < n; i++) {
        q.singles_left += !strcmp(tokens[i], "'");
        q.doubles_left += !strcmp(tokens[i], "\"");
    }
    char *w = out;
    int glue_next = 1; /* nothing before the first token */
    for (size_t i = 0; i < n; i++) {
        /* the head's tokens still pass through glue: the quotes they open
         * and whether the next token joins the last of them are theirs */
        int g = glue(tokens[i], i ? tokens[i - 1] : NULL, &q);
        const char *t = i + 1 == k ? head : tokens[i];
        if (i + 1 < k) {
            glue_next = g & GLUE_RIGHT;
            continue;
        }
        if (!glue_next && !(g & GLUE_LEFT) && i >= k)
            *w++ = ' ';
        size_t len = strlen(t);
        memcpy(w, t, len);
        w += len;
        glue_next = g & GLUE_RIGHT;
    }
    *w = '\0';
    return out;
}
