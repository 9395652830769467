/* A strict little JSON parser, enough for safetensors headers: objects,
 * arrays, strings (every escape, \uXXXX with surrogate pairs, UTF-8
 * checked), whole numbers and the three literals. Written for hostile input:
 * no read past the end, bounded depth, bounded item counts and a memory
 * budget for the tree. See json.h. */
#include "base/json.h"

#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"
#include "nmt/utf8.h"

void nmt_jval_free(jval *v)
{
    free(v->s);
    for (size_t k = 0; k < v->n && v->items; k++)
        nmt_jval_free(&v->items[k]);
    for (size_t k = 0; k < v->n && v->members; k++) {
        free(v->members[k].key);
        nmt_jval_free(&v->members[k].val);
    }
    free(v->items);
    free(v->members);
    memset(v, 0, sizeof *v);
}

typedef struct jparser {
    const unsigned char *p, *start, *end;
    const char *name;   /* file, for messages */
    int depth;
    size_t budget;      /* bytes left for item and member arrays */
} jparser;

/* A syntax error: names the file and the byte offset within the header. */
static int jerr(jparser *ps, const char *what)
{
    return nmt_set_error(NMT_ERR_FORMAT, "%s: malformed header at byte %zu: %s", ps->name,
                         (size_t)(ps->p - ps->start), what);
}

static void skip_ws(jparser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static int hex4(const unsigned char *p, unsigned *out)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        unsigned c = p[k], d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return -1;
        v = v * 16 + d;
    }
    *out = v;
    return 0;
}

/* A string starting at the opening quote. The decoded text is never longer
 * than the raw one (every escape shrinks), so one allocation of the raw
 * length suffices. */
static int parse_string(jparser *ps, char **out)
{
    ps->p++; /* the opening quote */
    const unsigned char *q = ps->p;
    while (q < ps->end && *q != '"') {
        if (*q == '\\') {
            if (q + 1 >= ps->end)
                break;
            q++;
        }
        q++;
    }
    if (q >= ps->end)
        return jerr(ps, "unterminated string");
    char *s = malloc((size_t)(q - ps->p) + 1);
    if (!s)
        return nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory reading the header", ps->name);
    size_t o = 0;
    while (ps->p < q) {
        unsigned c = *ps->p;
        if (c < 0x20) {
            free(s);
            return jerr(ps, "control character in a string (must be escaped)");
        }
        if (c >= 0x80) {
            size_t n = nmt_utf8_valid_len(ps->p, (size_t)(q - ps->p));
            if (!n) {
                free(s);
                return jerr(ps, "invalid UTF-8 in a string");
            }
            memcpy(s + o, ps->p, n);
            o += n;
            ps->p += n;
            continue;
        }
        if (c != '\\') {
            s[o++] = (char)c;
            ps->p++;
            continue;
        }
        /* an escape: q marks the closing quote, so ps->p + 1 < q + 1 holds */
        unsigned e = ps->p[1];
        ps->p += 2;
        const char *simple = strchr("\"\\/bfnrt", (int)e);
        if (e && simple) {
            static const char decoded[] = "\"\\/\b\f\n\r\t";
            s[o++] = decoded[simple - "\"\\/bfnrt"];
            continue;
        }
        if (e != 'u') {
            ps->p -= 2;
            free(s);
            return jerr(ps, "unknown escape in a string");
        }
        unsigned cp;
        if (q - ps->p < 4 || hex4(ps->p, &cp)) {
            ps->p -= 2;
            free(s);
            return jerr(ps, "bad \\u escape (needs 4 hex digits)");
        }
        ps->p += 4;
        if (cp >= 0xDC00 && cp <= 0xDFFF) {
            ps->p -= 6;
            free(s);
            return jerr(ps, "lone low surrogate in a \\u escape");
        }
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            unsigned lo;
            if (q - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u' || hex4(ps->p + 2, &lo) ||
                lo < 0xDC00 || lo > 0xDFFF) {
                ps->p -= 6;
                free(s);
                return jerr(ps, "high surrogate not followed by a low surrogate");
            }
            ps->p += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        if (cp == 0) {
            free(s);
            return jerr(ps, "\\u0000 in a string is not supported");
        }
        o += nmt_utf8_encode(s + o, cp);
    }
    s[o] = '\0';
    ps->p = q + 1;
    *out = s;
    return NMT_OK;
}

/* -?(0|[1-9][0-9]*): JSON's whole numbers. Fractions and exponents are
 * refused: no safetensors field needs them. */
static int parse_int(jparser *ps, int64_t *out)
{
    int neg = 0;
    if (*ps->p == '-') {
        neg = 1;
        ps->p++;
    }
    if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
        return jerr(ps, "expected a digit");
    if (*ps->p == '0' && ps->p + 1 < ps->end && ps->p[1] >= '0' && ps->p[1] <= '9')
        return jerr(ps, "leading zero in a number");
    uint64_t v = 0;
    while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
        unsigned d = (unsigned)(*ps->p - '0');
        if (v > (UINT64_MAX - d) / 10 || v * 10 + d > (uint64_t)INT64_MAX)
            return jerr(ps, "number too large");
        v = v * 10 + d;
        ps->p++;
    }
    if (ps->p < ps->end && (*ps->p == '.' || *ps->p == 'e' || *ps->p == 'E'))
        return jerr(ps, "only whole numbers are allowed");
    *out = neg ? -(int64_t)v : (int64_t)v;
    return NMT_OK;
}

static int parse_value(jparser *ps, jval *v);

/* Every array of items or members comes from here, charged to the parser's
 * budget, so that a header of many small containers cannot cost much more
 * memory than its size suggests. */
static void *grow(jparser *ps, void *p, size_t *cap, size_t n, size_t elem, size_t max)
{
    if (n < *cap)
        return p;
    size_t ncap = *cap ? *cap * 2 : 2;
    if (ncap > max)
        ncap = max;
    if (ncap <= n) {
        jerr(ps, "too many items in one array or object");
        return NULL;
    }
    if ((ncap - *cap) * elem > ps->budget) {
        jerr(ps, "too many values");
        return NULL;
    }
    void *q = realloc(p, ncap * elem);
    if (!q) {
        nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory reading the header", ps->name);
        return NULL;
    }
    memset((char *)q + *cap * elem, 0, (ncap - *cap) * elem);
    ps->budget -= (ncap - *cap) * elem;
    *cap = ncap;
    return q;
}

static int parse_array(jparser *ps, jval *v)
{
    v->type = J_ARR;
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ']') {
        ps->p++;
        return NMT_OK;
    }
    size_t cap = 0;
    for (;;) {
        jval *items = grow(ps, v->items, &cap, v->n, sizeof *items, JSON_MAX_ARRAY);
        if (!items)
            return NMT_ERR_FORMAT;
        v->items = items;
        int rc = parse_value(ps, &v->items[v->n]);
        v->n++; /* counted even on failure so that nmt_jval_free frees it */
        if (rc)
            return rc;
        skip_ws(ps);
        if (ps->p >= ps->end)
            return jerr(ps, "unterminated array");
        if (*ps->p == ']') {
            ps->p++;
            return NMT_OK;
        }
        if (*ps->p != ',')
            return jerr(ps, "expected ',' or ']' in an array");
        ps->p++;
    }
}

static int parse_object(jparser *ps, jval *v)
{
    v->type = J_OBJ;
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == '}') {
        ps->p++;
        return NMT_OK;
    }
    size_t cap = 0;
    for (;;) {
        jmember *members = grow(ps, v->members, &cap, v->n, sizeof *members, JSON_MAX_MEMBERS);
        if (!members)
            return NMT_ERR_FORMAT;
        v->members = members;
        skip_ws(ps);
        if (ps->p >= ps->end)
            return jerr(ps, "unexpected end of the header");
        if (*ps->p != '"')
            return jerr(ps, "expected a string key in an object");
        jmember *m = &v->members[v->n++];
        int rc = parse_string(ps, &m->key);
        if (rc)
            return rc;
        skip_ws(ps);
        if (ps->p >= ps->end || *ps->p != ':')
            return jerr(ps, "expected ':' after a key");
        ps->p++;
        if ((rc = parse_value(ps, &m->val)))
            return rc;
        skip_ws(ps);
        if (ps->p >= ps->end)
            return jerr(ps, "unterminated object");
        if (*ps->p == '}') {
            ps->p++;
            return NMT_OK;
        }
        if (*ps->p != ',')
            return jerr(ps, "expected ',' or '}' in an object");
        ps->p++;
    }
}

static int parse_literal(jparser *ps, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n))
        return jerr(ps, "unexpected character");
    ps->p += n;
    return NMT_OK;
}

static int parse_value(jparser *ps, jval *v)
{
    memset(v, 0, sizeof *v);
    skip_ws(ps);
    if (ps->p >= ps->end)
        return jerr(ps, "unexpected end of the header");
    if (ps->depth >= JSON_MAX_DEPTH)
        return jerr(ps, "nested too deeply");
    int rc;
    ps->depth++;
    switch (*ps->p) {
    case '{':
        rc = parse_object(ps, v);
        break;
    case '[':
        rc = parse_array(ps, v);
        break;
    case '"':
        v->type = J_STR;
        rc = parse_string(ps, &v->s);
        break;
    case 't':
        v->type = J_BOOL;
        v->i = 1;
        rc = parse_literal(ps, "true");
        break;
    case 'f':
        v->type = J_BOOL;
        rc = parse_literal(ps, "false");
        break;
    case 'n':
        v->type = J_NULL;
        rc = parse_literal(ps, "null");
        break;
    default:
        v->type = J_INT;
        if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9'))
            rc = parse_int(ps, &v->i);
        else
            rc = jerr(ps, "unexpected character");
        break;
    }
    ps->depth--;
    return rc;
}

int nmt_json_parse(jval *root, const unsigned char *json, size_t n, const char *name)
{
    jparser ps = {json, json, json + n, name, 0, JSON_BUDGET};
    memset(root, 0, sizeof *root);
    int rc = parse_value(&ps, root);
    if (rc)
        return rc;
    skip_ws(&ps);
    if (ps.p != ps.end)
        return jerr(&ps, "trailing characters after the header object");
    return NMT_OK;
}
