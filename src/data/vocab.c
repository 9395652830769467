/* Vocabularies and token counting.
 *
 * Both are one open-addressing hash table over a single byte arena: the
 * tokens are stored back to back, NUL-terminated, and the table holds entry
 * indexes. A lookup hashes the bytes and compares the stored hash before the
 * bytes, so it allocates nothing and rarely calls memcmp more than once. */
#include "nmt/vocab.h"

#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"

static const char *const special_tokens[NMT_N_SPECIAL] = {"<pad>", "<unk>", "<s>", "</s>"};

/* A set of distinct byte strings, each with an index in insertion order. */
typedef struct strtab {
    char *bytes;          /* [bytes_len] the strings, each followed by NUL */
    size_t bytes_len, bytes_cap;
    size_t *off;          /* [n] where string i starts in bytes */
    uint32_t *len;        /* [n] its length */
    uint64_t *hash;       /* [n] its hash */
    size_t n, cap;
    int32_t *slot;        /* [mask + 1] entry index or -1 */
    size_t mask;
} strtab;

/* Mixes 8 bytes at a time; the hash never leaves this file, so byte order
 * does not matter. */
static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)n;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
        s += 8;
        n -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, s, n);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ULL;
    return h ^ (h >> 32);
}

static int strtab_init(strtab *t, size_t expected)
{
    memset(t, 0, sizeof *t);
    size_t slots = 64;
    while (slots < 2 * expected)
        slots *= 2;
    t->slot = malloc(slots * sizeof *t->slot);
    if (!t->slot)
        return NMT_ERR_NOMEM;
    memset(t->slot, 0xff, slots * sizeof *t->slot); /* all -1 */
    t->mask = slots - 1;
    return NMT_OK;
}

static void strtab_free(strtab *t)
{
    free(t->bytes);
    free(t->off);
    free(t->len);
    free(t->hash);
    free(t->slot);
    memset(t, 0, sizeof *t);
}

/* The slot where tok is, or the empty slot where it would go. */
static size_t strtab_probe(const strtab *t, const char *tok, size_t len, uint64_t h)
{
    size_t i = (size_t)h & t->mask;
    for (;;) {
        int32_t e = t->slot[i];
        if (e < 0)
            return i;
        if (t->hash[e] == h && t->len[e] == len && !memcmp(t->bytes + t->off[e], tok, len))
            return i;
        i = (i + 1) & t->mask;
    }
}

static int32_t strtab_find(const strtab *t, const char *tok, size_t len)
{
    return t->slot[strtab_probe(t, tok, len, hash_bytes(tok, len))];
}

/* Doubles the table when it is half full, so probes stay short. */
static int strtab_grow_slots(strtab *t)
{
    size_t slots = 2 * (t->mask + 1);
    int32_t *s = malloc(slots * sizeof *s);
    if (!s)
        return NMT_ERR_NOMEM;
    memset(s, 0xff, slots * sizeof *s);
    size_t mask = slots - 1;
    for (size_t e = 0; e < t->n; e++) {
        size_t i = (size_t)t->hash[e] & mask;
        while (s[i] >= 0)
            i = (i + 1) & mask;
        s[i] = (int32_t)e;
    }
    free(t->slot);
    t->slot = s;
    t->mask = mask;
    return NMT_OK;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return NMT_OK;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q)
        return NMT_ERR_NOMEM;
    *p = q;
    *cap = c;
    return NMT_OK;
}

/* Adds a string known to be absent at the empty slot `at`; returns its index
 * or a negative code. */
static int32_t strtab_insert(strtab *t, size_t at, const char *tok, size_t len, uint64_t h)
{
    if (t->n >= INT32_MAX || len > UINT32_MAX)
        return nmt_set_error(NMT_ERR_NOMEM, "too many or too long tokens");
    if (t->n == t->cap) {
        size_t c = t->cap ? 2 * t->cap : 1024;
        size_t *off = realloc(t->off, c * sizeof *off);
        if (off)
            t->off = off;
        uint32_t *l = realloc(t->len, c * sizeof *l);
        if (l)
            t->len = l;
        uint64_t *hs = realloc(t->hash, c * sizeof *hs);
        if (hs)
            t->hash = hs;
        if (!off || !l || !hs)
            return nmt_set_error(NMT_ERR_NOMEM, "out of memory for the vocabulary");
        t->cap = c;
    }
    size_t bcap = t->bytes_cap;
    if (grow((void **)&t->bytes, &bcap, t->bytes_len + len + 1, 1))
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for the vocabulary");
    t->bytes_cap = bcap;
    size_t e = t->n++;
    t->off[e] = t->bytes_len;
    t->len[e] = (uint32_t)len;
    t->hash[e] = h;
    memcpy(t->bytes + t->bytes_len, tok, len);
    t->bytes[t->bytes_len + len] = '\0';
    t->bytes_len += len + 1;
    t->slot[at] = (int32_t)e;
    if (2 * t->n > t->mask + 1 && strtab_grow_slots(t))
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for the vocabulary");
    return (int32_t)e;
}

/* ---- vocabulary ---- */

struct nmt_vocab {
    strtab t; /* entry index = id */
};

int nmt_vocab_from_tokens(nmt_vocab **out, const char *const *tokens, size_t n)
{
    *out = NULL;
    if (n < NMT_N_SPECIAL || n > INT32_MAX)
        return nmt_set_error(NMT_ERR_FORMAT, "a vocabulary needs 4 to 2^31-1 tokens, not %zu", n);
    for (int i = 0; i < NMT_N_SPECIAL; i++)
        if (!tokens[i] || strcmp(tokens[i], special_tokens[i]))
            return nmt_set_error(NMT_ERR_FORMAT, "vocabulary id %d must be %s, not %s", i,
                                 special_tokens[i], tokens[i] ? tokens[i] : "(null)");
    nmt_vocab *v = calloc(1, sizeof *v);
    if (!v || strtab_init(&v->t, n)) {
        free(v);
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for a vocabulary of %zu tokens", n);
    }
    for (size_t i = 0; i < n; i++) {
        const char *tok = tokens[i];
        size_t len = tok ? strlen(tok) : 0;
        /* Tokens are stored joined by '\n' in model files and come from
         * splitting on whitespace, so neither an empty one nor a newline in
         * one can be meant. */
        if (!len || memchr(tok, '\n', len)) {
            nmt_vocab_free(v);
            return nmt_set_error(NMT_ERR_FORMAT, "vocabulary id %zu is empty or holds a newline", i);
        }
        uint64_t h = hash_bytes(tok, len);
        size_t at = strtab_probe(&v->t, tok, len, h);
        int32_t first = v->t.slot[at];
        if (first >= 0) {
            nmt_vocab_free(v);
            return nmt_set_error(NMT_ERR_FORMAT, "vocabulary token '%s' appears twice (ids %d and %zu)",
                                 tok, (int)first, i);
        }
        int32_t e = strtab_insert(&v->t, at, tok, len, h);
        if (e < 0) {
            nmt_vocab_free(v);
            return e;
        }
    }
    *out = v;
    return NMT_OK;
}

int nmt_vocab_copy(nmt_vocab **out, const nmt_vocab *v)
{
    *out = NULL;
    size_t n = v->t.n;
    const char **tok = malloc((n ? n : 1) * sizeof *tok);
    if (!tok)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for a vocabulary of %zu tokens", n);
    for (size_t i = 0; i < n; i++)
        tok[i] = v->t.bytes + v->t.off[i];
    int rc = nmt_vocab_from_tokens(out, tok, n);
    free(tok);
    return rc;
}

int nmt_vocab_size(const nmt_vocab *v)
{
    return (int)v->t.n;
}

const char *nmt_vocab_token(const nmt_vocab *v, int32_t id)
{
    if (id < 0 || (size_t)id >= v->t.n)
        return NULL;
    return v->t.bytes + v->t.off[id];
}

int32_t nmt_vocab_id(const nmt_vocab *v, const char *tok, size_t len)
{
    int32_t e = strtab_find(&v->t, tok, len);
    return e < 0 ? NMT_UNK : e;
}

void nmt_vocab_free(nmt_vocab *v)
{
    if (!v)
        return;
    strtab_free(&v->t);
    free(v);
}

/* ---- counting ---- */

struct nmt_vocab_counter {
    strtab t;       /* entry index = provisional id */
    int64_t *count; /* [t.cap] */
};

int nmt_vocab_counter_new(nmt_vocab_counter **out)
{
    *out = NULL;
    nmt_vocab_counter *c = calloc(1, sizeof *c);
    if (!c || strtab_init(&c->t, 4096)) {
        free(c);
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for counting tokens");
    }
    *out = c;
    return NMT_OK;
}

int32_t nmt_vocab_counter_add(nmt_vocab_counter *c, const char *tok, size_t len)
{
    uint64_t h = hash_bytes(tok, len);
    size_t at = strtab_probe(&c->t, tok, len, h);
    int32_t e = c->t.slot[at];
    if (e >= 0) {
        c->count[e]++;
        return e;
    }
    size_t old_cap = c->t.cap;
    e = strtab_insert(&c->t, at, tok, len, h);
    if (e < 0)
        return e;
    if (c->t.cap != old_cap) {
        int64_t *cnt = realloc(c->count, c->t.cap * sizeof *cnt);
        if (!cnt)
            return nmt_set_error(NMT_ERR_NOMEM, "out of memory for counting tokens");
        c->count = cnt;
    }
    c->count[e] = 1;
    return e;
}

size_t nmt_vocab_counter_types(const nmt_vocab_counter *c)
{
    return c->t.n;
}

void nmt_vocab_counter_free(nmt_vocab_counter *c)
{
    if (!c)
        return;
    strtab_free(&c->t);
    free(c->count);
    free(c);
}

/* qsort has no context argument in C11, hence this file-level pointer; it is
 * set and used only inside nmt_vocab_counter_build. */
static _Thread_local const nmt_vocab_counter *sort_counter;

static int by_count_then_bytes(const void *pa, const void *pb)
{
    const nmt_vocab_counter *c = sort_counter;
    int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
    if (c->count[a] != c->count[b])
        return c->count[a] > c->count[b] ? -1 : 1;
    size_t la = c->t.len[a], lb = c->t.len[b];
    int r = memcmp(c->t.bytes + c->t.off[a], c->t.bytes + c->t.off[b], la < lb ? la : lb);
    if (r)
        return r;
    return la < lb ? -1 : la > lb; /* a prefix sorts first; equal is impossible */
}

static int special_id(const char *tok, size_t len)
{
    for (int i = 0; i < NMT_N_SPECIAL; i++)
        if (strlen(special_tokens[i]) == len && !memcmp(special_tokens[i], tok, len))
            return i;
    return -1;
}

int nmt_vocab_counter_build(const nmt_vocab_counter *c, int min_count, int max_vocab,
                            nmt_vocab **out, int32_t **remap)
{
    *out = NULL;
    if (remap)
        *remap = NULL;
    if (max_vocab < 0 || (max_vocab > 0 && max_vocab < NMT_N_SPECIAL))
        return nmt_set_error(NMT_ERR_ARG, "max_vocab must be 0 (no limit) or at least %d, not %d",
                             NMT_N_SPECIAL, max_vocab);
    size_t n = c->t.n;
    int32_t *order = malloc((n ? n : 1) * sizeof *order);
    int32_t *map = malloc((n ? n : 1) * sizeof *map);
    const char **toks = NULL;
    int rc = NMT_ERR_NOMEM;
    if (!order || !map)
        goto fail;

    size_t kept = 0;
    for (size_t e = 0; e < n; e++) {
        int sp = special_id(c->t.bytes + c->t.off[e], c->t.len[e]);
        map[e] = sp >= 0 ? sp : NMT_UNK;
        if (sp < 0 && c->count[e] >= (int64_t)min_count)
            order[kept++] = (int32_t)e;
    }
    sort_counter = c;
    qsort(order, kept, sizeof *order, by_count_then_bytes);
    sort_counter = NULL;
    if (max_vocab > 0 && kept > (size_t)(max_vocab - NMT_N_SPECIAL))
        kept = (size_t)(max_vocab - NMT_N_SPECIAL);

    toks = malloc((kept + NMT_N_SPECIAL) * sizeof *toks);
    if (!toks)
        goto fail;
    for (int i = 0; i < NMT_N_SPECIAL; i++)
        toks[i] = special_tokens[i];
    for (size_t k = 0; k < kept; k++) {
        toks[NMT_N_SPECIAL + k] = c->t.bytes + c->t.off[order[k]];
        map[order[k]] = (int32_t)(NMT_N_SPECIAL + k);
    }
    rc = nmt_vocab_from_tokens(out, toks, kept + NMT_N_SPECIAL);
    if (rc)
        goto fail;
    free(order);
    free(toks);
    if (remap)
        *remap = map;
    else
        free(map);
    return NMT_OK;
fail:
    free(order);
    free(map);
    free(toks);
    if (rc == NMT_ERR_NOMEM)
        nmt_set_error(rc, "out of memory building a vocabulary of %zu types", n);
    return rc;
}
