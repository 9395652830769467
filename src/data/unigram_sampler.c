/* Sampling a unigram model's segmentations as SentencePiece 0.1.97 does
 * (data/unigram_sampler.h), written from how its SampleEncode behaves:
 *
 * 1. The text is normalized: without a normalization table only spaces
 *    change (leading ones dropped, runs made one, trailing ones dropped,
 *    each written U+2581, one put before the first word); a byte that does
 *    not start valid UTF-8 becomes U+FFFD.
 * 2. A lattice over the normalized characters: at each character every
 *    piece of the vocabulary that starts there (unused pieces left out), in
 *    order of length, and where none is one character long an unknown node
 *    of one character scored min_score - 10.
 * 3. Forward: alpha at each position is the log-sum-exp, in float, of
 *    alpha[start] + a * score over the nodes ending there, in the order
 *    they were made.
 * 4. Backward from the end: among the nodes ending at the current position,
 *    one is drawn with weights exp(alpha[start] + a * score - alpha[here])
 *    by std::discrete_distribution (libstdc++: the weights in double,
 *    normalized, summed up; no draw at all when there is one node; else one
 *    uniform double and the first cumulative weight not below it).
 *
 * The bits must be SentencePiece's, so the arithmetic is its own, operation
 * for operation: the float sums, the casts to double around exp and log, the
 * order of the nodes. SentencePiece computes alpha once per node that starts
 * at a position; it is the same value for all of them, so here it is kept
 * once per position. This file is C11 (-std=c11: no contraction of a * b + c
 * into a fused multiply-add, which would round differently). */
#include "data/unigram_sampler.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"

/* The vocabulary as a byte trie: node 0 is the root, value[node] the id of
 * the piece that ends there or -1; edges in an open-addressing table keyed
 * by (node, byte). */
struct nmt_unigram {
    int32_t *value;
    size_t n_nodes;
    uint64_t *edge_key; /* (node << 8 | byte) + 1, 0 for an empty slot */
    uint32_t *edge_to;
    size_t edge_mask;
    const float *score; /* by id */
    float *scores;
    float unk_score;
    int32_t unk_id;
    int add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces;
};

/* A node of the lattice: a piece from character pos, len characters long. */
typedef struct node {
    int32_t pos, len, id;
    float score;
} lat_node;

struct nmt_lattice {
    char *norm;        /* the normalized text */
    size_t *n2o;       /* [bytes + 1] each normalized byte's offset in the text */
    uint32_t *start;   /* [chars + 1] each character's first byte */
    lat_node *nodes;       /* in SentencePiece's order */
    uint32_t *end_off; /* [chars + 2] the nodes ending at each position: */
    uint32_t *ends;    /* ends[end_off[p] .. end_off[p + 1]) */
    float *alpha;      /* [chars + 1] */
    double *cp;        /* the cumulative weights of one draw */
    int32_t *path;
    size_t norm_cap, n2o_cap, start_cap, node_cap, end_off_cap, ends_cap, alpha_cap, cp_cap,
        path_cap;
};

static const char kSpace[] = "\xe2\x96\x81"; /* U+2581 */

/* ---- the trie ----------------------------------------------------------- */

static size_t edge_slot(const nmt_unigram *u, uint64_t key)
{
    size_t h = (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 20);
    while (u->edge_key[h & u->edge_mask] && u->edge_key[h & u->edge_mask] != key)
        h++;
    return h & u->edge_mask;
}

/* The child of node by byte b, or 0 (the root is nobody's child). */
static uint32_t child(const nmt_unigram *u, uint32_t node, unsigned char b)
{
    uint64_t key = ((uint64_t)node << 8 | b) + 1;
    size_t s = edge_slot(u, key);
    return u->edge_key[s] ? u->edge_to[s] : 0;
}

static void insert(nmt_unigram *u, const char *piece, size_t len, int32_t id)
{
    uint32_t node = 0;
    for (size_t i = 0; i < len; i++) {
        uint64_t key = ((uint64_t)node << 8 | (unsigned char)piece[i]) + 1;
        size_t s = edge_slot(u, key);
        if (!u->edge_key[s]) {
            u->edge_key[s] = key;
            u->edge_to[s] = (uint32_t)u->n_nodes;
            u->value[u->n_nodes++] = -1;
        }
        node = u->edge_to[s];
    }
    u->value[node] = id;
}

/* The pieces that can be in a lattice: SentencePiece's trie holds the
 * normal, user-defined and unused ones, and never puts an unused one in a
 * lattice (leaving them out is the same); user-defined pieces are not
 * handled here. */
static int in_trie(int type)
{
    return type == NMT_PIECE_NORMAL;
}

int nmt_unigram_new(nmt_unigram **out, const nmt_unigram_spec *sp)
{
    *out = NULL;
    size_t bytes = 0;
    int32_t unk = -1;
    /* SentencePiece's own starting values, FLT_MIN (the smallest positive
     * float) among them; only normal pieces count */
    float min_score = FLT_MAX;
    for (size_t i = 0; i < sp->n; i++) {
        if (sp->type[i] == NMT_PIECE_USER_DEFINED || !sp->len[i] ||
            memchr(sp->piece[i], '\0', sp->len[i]))
            return NMT_OK; /* user-defined pieces change the normalizer too */
        if (sp->type[i] == NMT_PIECE_UNKNOWN) {
            if (unk >= 0)
                return NMT_OK;
            unk = (int32_t)i;
        }
        if (sp->type[i] == NMT_PIECE_NORMAL)
            min_score = sp->score[i] < min_score ? sp->score[i] : min_score;
        if (in_trie(sp->type[i]))
            bytes += sp->len[i];
    }
    if (unk < 0 || sp->n > INT32_MAX || bytes >= UINT32_MAX / 4)
        return NMT_OK;
    nmt_unigram *u = calloc(1, sizeof *u);
    if (!u)
        return NMT_ERR_NOMEM;
    size_t cap = 64;
    while (cap < 2 * (bytes + 1))
        cap *= 2;
    u->value = malloc((bytes + 1) * sizeof *u->value);
    u->edge_key = calloc(cap, sizeof *u->edge_key);
    u->edge_to = malloc(cap * sizeof *u->edge_to);
    u->scores = malloc((sp->n ? sp->n : 1) * sizeof *u->scores);
    if (!u->value || !u->edge_key || !u->edge_to || !u->scores) {
        nmt_unigram_free(u);
        return NMT_ERR_NOMEM;
    }
    u->edge_mask = cap - 1;
    u->value[0] = -1;
    u->n_nodes = 1;
    for (size_t i = 0; i < sp->n; i++) {
        u->scores[i] = sp->score[i];
        if (in_trie(sp->type[i]))
            insert(u, sp->piece[i], sp->len[i], (int32_t)i);
    }
    u->score = u->scores;
    u->unk_id = unk;
    u->unk_score = min_score - 10.0f; /* kUnkPenalty, in float */
    u->add_dummy_prefix = sp->add_dummy_prefix;
    u->remove_extra_whitespaces = sp->remove_extra_whitespaces;
    u->escape_whitespaces = sp->escape_whitespaces;
    *out = u;
    return NMT_OK;
}

void nmt_unigram_free(nmt_unigram *u)
{
    if (!u)
        return;
    free(u->value);
    free(u->edge_key);
    free(u->edge_to);
    free(u->scores);
    free(u);
}

/* ---- buffers ------------------------------------------------------------ */

nmt_lattice *nmt_lattice_new(void)
{
    return calloc(1, sizeof(nmt_lattice));
}

void nmt_lattice_free(nmt_lattice *l)
{
    if (!l)
        return;
    free(l->norm);
    free(l->n2o);
    free(l->start);
    free(l->nodes);
    free(l->end_off);
    free(l->ends);
    free(l->alpha);
    free(l->cp);
    free(l->path);
    free(l);
}

/* Room for n elements of `size` bytes in the array whose pointer is at pp
 * (capacity *cap, in elements): 0, or -1 with the array as it was. The
 * pointer is copied in and out by memcpy, as pp points at pointers of
 * several types. */
static int reserve(void *pp, size_t *cap, size_t n, size_t size)
{
    if (n <= *cap)
        return 0;
    size_t c = *cap ? *cap : 64;
    while (c < n)
        c *= 2;
    if (c > SIZE_MAX / size)
        return -1;
    void *p, *q;
    memcpy(&p, pp, sizeof p);
    if (!(q = realloc(p, c * size)))
        return -1;
    memcpy(pp, &q, sizeof q);
    *cap = c;
    return 0;
}

static int reserve_ids(nmt_ids *ids, size_t n)
{
    return reserve(&ids->id, &ids->cap, n, sizeof *ids->id);
}

/* ---- 1. normalization ----------------------------------------------------- */

/* SentencePiece's test of a valid UTF-8 character at s (n bytes left): its
 * length, or 0 when s does not start one. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
#define TRAIL(k) (((unsigned)s[k] & 0xc0) == 0x80)
    if (n >= 2 && (c & 0xe0) == 0xc0) {
        unsigned cp = (c & 0x1f) << 6 | (s[1] & 0x3f);
        return TRAIL(1) && cp >= 0x80 ? 2 : 0;
    }
    if (n >= 3 && (c & 0xf0) == 0xe0) {
        unsigned cp = (c & 0x0f) << 12 | (s[1] & 0x3fu) << 6 | (s[2] & 0x3f);
        return TRAIL(1) && TRAIL(2) && cp >= 0x800 && (cp < 0xd800 || cp >= 0xe000) ? 3 : 0;
    }
    if (n >= 4 && (c & 0xf8) == 0xf0) {
        unsigned cp = (c & 0x07) << 18 | (s[1] & 0x3fu) << 12 | (s[2] & 0x3fu) << 6 |
                      (s[3] & 0x3f);
        return TRAIL(1) && TRAIL(2) && TRAIL(3) && cp >= 0x10000 && cp <= 0x10ffff ? 4 : 0;
    }
#undef TRAIL
    return 0;
}

/* Appends what one input character becomes; every byte of it maps to the
 * text's offset `at`. */
static void put(nmt_lattice *l, size_t *n, const char *s, size_t k, size_t at)
{
    memcpy(l->norm + *n, s, k);
    if (l->n2o)
        for (size_t i = 0; i < k; i++)
            l->n2o[*n + i] = at;
    *n += k;
}

/* The normalized text into l->norm (its length returned in *out_n), and
 * with spans each byte's offset in the text into l->n2o. */
static int normalize(const nmt_unigram *u, nmt_lattice *l, const char *text, size_t len,
                     int spans, size_t *out_n)
{
    *out_n = 0;
    size_t i = 0;
    if (u->remove_extra_whitespaces)
        while (i < len && text[i] == ' ')
            i++;
    if (i == len)
        return 0;
    /* each input byte becomes at most 3 (U+FFFD, U+2581), and the prefix */
    size_t room = 3 * (len - i) + 3;
    if (reserve(&l->norm, &l->norm_cap, room, 1) ||
        (spans && reserve(&l->n2o, &l->n2o_cap, room + 1, sizeof *l->n2o)))
        return -1;
    size_t *keep_n2o = l->n2o;
    if (!spans)
        l->n2o = NULL;
    const char *ws = u->escape_whitespaces ? kSpace : " ";
    size_t ws_len = u->escape_whitespaces ? 3 : 1;
    size_t n = 0;
    if (u->add_dummy_prefix)
        put(l, &n, ws, ws_len, i);
    int prev_space = u->remove_extra_whitespaces;
    while (i < len) {
        size_t k = utf8_len((const unsigned char *)text + i, len - i);
        if (!k) /* one byte becomes U+FFFD */
            put(l, &n, "\xef\xbf\xbd", 3, i), k = 1, prev_space = 0;
        else if (text[i] == ' ') {
            if (!prev_space)
                put(l, &n, ws, ws_len, i);
            prev_space = 1;
        } else {
            put(l, &n, text + i, k, i);
            prev_space = 0;
        }
        i += k;
        if (!u->remove_extra_whitespaces)
            prev_space = 0;
    }
    size_t consumed = len;
    if (u->remove_extra_whitespaces)
        while (n >= ws_len && !memcmp(l->norm + n - ws_len, ws, ws_len)) {
            n -= ws_len;
            if (l->n2o)
                consumed = l->n2o[n];
        }
    if (l->n2o)
        l->n2o[n] = consumed;
    l->n2o = keep_n2o;
    *out_n = n;
    return 0;
}

/* ---- 2. the lattice ------------------------------------------------------- */

static int add_node(nmt_lattice *l, size_t *n_nodes, int32_t pos, int32_t len, int32_t id,
                    float score)
{
    if (reserve(&l->nodes, &l->node_cap, *n_nodes + 1, sizeof *l->nodes))
        return -1;
    l->nodes[(*n_nodes)++] = (lat_node){pos, len, id, score};
    return 0;
}

/* The nodes, in SentencePiece's order, and the lists of those ending at
 * each position (in that order too). */
static int build(const nmt_unigram *u, nmt_lattice *l, size_t n, size_t chars,
                 size_t *out_nodes)
{
    const unsigned char *s = (const unsigned char *)l->norm;
    size_t n_nodes = 0;
    for (size_t b = 0; b < chars; b++) {
        int single = 0;
        uint32_t node = 0;
        size_t c = b; /* the character the match has reached into */
        for (size_t k = l->start[b]; k < n; k++) {
            if (!(node = child(u, node, s[k])))
                break;
            int32_t id = u->value[node];
            if (id < 0)
                continue;
            /* its length in characters: those that start before its end
             * (a piece that ends inside a character takes all of it) */
            while (c < chars && l->start[c] < k + 1)
                c++;
            int32_t len = (int32_t)(c - b);
            if (add_node(l, &n_nodes, (int32_t)b, len, id, u->score[id]))
                return -1;
            single |= len == 1;
        }
        if (!single && add_node(l, &n_nodes, (int32_t)b, 1, u->unk_id, u->unk_score))
            return -1;
    }
    if (reserve(&l->end_off, &l->end_off_cap, chars + 2, sizeof *l->end_off) ||
        reserve(&l->ends, &l->ends_cap, n_nodes, sizeof *l->ends))
        return -1;
    memset(l->end_off, 0, (chars + 2) * sizeof *l->end_off);
    for (size_t i = 0; i < n_nodes; i++)
        l->end_off[l->nodes[i].pos + l->nodes[i].len + 1]++;
    for (size_t p = 1; p < chars + 2; p++)
        l->end_off[p] += l->end_off[p - 1];
    for (size_t i = 0; i < n_nodes; i++) /* end_off[p] counts up to its final value */
        l->ends[l->end_off[l->nodes[i].pos + l->nodes[i].len]++] = (uint32_t)i;
    for (size_t p = chars + 1; p > 0; p--)
        l->end_off[p] = l->end_off[p - 1];
    l->end_off[0] = 0;
    *out_nodes = n_nodes;
    return 0;
}

/* ---- 3. forward, 4. backward ---------------------------------------------- */

/* SentencePiece's LogSumExp(x, y): std::min and std::max, then the sum in
 * double, rounded to float on return. */
static float log_sum_exp(float x, float y)
{
    float vmin = y < x ? y : x, vmax = x < y ? y : x;
    if (vmax > vmin + 50.0f)
        return vmax;
    return (float)((double)vmax + log(exp((double)(vmin - vmax)) + 1.0));
}

static void forward(nmt_lattice *l, size_t chars, float a)
{
    /* from the start node (score 0, alpha 0) */
    l->alpha[0] = a * 0.0f + 0.0f;
    for (size_t p = 1; p <= chars; p++) {
        float acc = 0.0f;
        for (uint32_t e = l->end_off[p]; e < l->end_off[p + 1]; e++) {
            const lat_node *nd = &l->nodes[l->ends[e]];
            float v = a * nd->score + l->alpha[nd->pos];
            acc = e == l->end_off[p] ? v : log_sum_exp(acc, v);
        }
        l->alpha[p] = acc;
    }
}

/* std::discrete_distribution<int>(w, w + n)(g) as libstdc++ 12 computes
 * it, with w already in cp. */
static size_t draw(double *cp, size_t n, nmt_uniform_fn uniform, void *ctx)
{
    if (n < 2)
        return 0;
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += cp[i];
    double run = 0.0;
    for (size_t i = 0; i < n; i++) {
        run += cp[i] / sum;
        cp[i] = run;
    }
    cp[n - 1] = 1.0;
    double p = uniform(ctx);
    /* std::lower_bound: the first not below p */
    size_t lo = 0, count = n;
    while (count > 0) {
        size_t half = count / 2;
        if (cp[lo + half] < p) {
            lo += half + 1;
            count -= half + 1;
        } else {
            count = half;
        }
    }
    return lo;
}

int nmt_unigram_sample(const nmt_unigram *u, nmt_lattice *l, const char *text, size_t len,
                       float alpha, nmt_uniform_fn uniform, void *ctx, nmt_ids *ids,
                       nmt_ids *begin)
{
    ids->n = 0;
    if (begin)
        begin->n = 0;
    if (len > NMT_UNIGRAM_MAX_BYTES)
        return 1;
    size_t n, chars = 0, n_nodes;
    if (normalize(u, l, text, len, begin != NULL, &n))
        return NMT_ERR_NOMEM;
    if (n == 0)
        return NMT_OK;
    if (reserve(&l->start, &l->start_cap, n + 1, sizeof *l->start))
        return NMT_ERR_NOMEM;
    /* the characters by their first byte alone (the text is valid UTF-8 now) */
    for (size_t i = 0; i < n; chars++) {
        l->start[chars] = (uint32_t)i;
        size_t k = "\1\1\1\1\1\1\1\1\1\1\1\1\2\2\3\4"[(unsigned char)l->norm[i] >> 4];
        i += k < n - i ? k : n - i;
    }
    l->start[chars] = (uint32_t)n;
    if (build(u, l, n, chars, &n_nodes) ||
        reserve(&l->alpha, &l->alpha_cap, chars + 1, sizeof *l->alpha))
        return NMT_ERR_NOMEM;
    forward(l, chars, alpha);
    size_t most = 0;
    for (size_t p = 1; p <= chars; p++)
        if (l->end_off[p + 1] - l->end_off[p] > most)
            most = l->end_off[p + 1] - l->end_off[p];
    if (reserve(&l->cp, &l->cp_cap, most, sizeof *l->cp) ||
        reserve(&l->path, &l->path_cap, chars, sizeof *l->path))
        return NMT_ERR_NOMEM;
    size_t steps = 0, pos = chars;
    float z = l->alpha[chars];
    while (pos > 0) {
        uint32_t first = l->end_off[pos], k = l->end_off[pos + 1] - first;
        for (uint32_t j = 0; j < k; j++) {
            const lat_node *nd = &l->nodes[l->ends[first + j]];
            /* a weight is a float in SentencePiece (a vector<float>) */
            float w = (float)exp((double)(l->alpha[nd->pos] + alpha * nd->score - z));
            l->cp[j] = w;
        }
        uint32_t i = l->ends[first + draw(l->cp, k, uniform, ctx)];
        l->path[steps++] = (int32_t)i;
        pos = (size_t)l->nodes[i].pos;
        z = l->alpha[pos];
    }
    /* the path from the start; a run of unknown pieces is one */
    if (reserve_ids(ids, steps) || (begin && reserve_ids(begin, steps)))
        return NMT_ERR_NOMEM;
    int prev_unk = 0;
    for (size_t s = steps; s-- > 0;) {
        const lat_node *nd = &l->nodes[l->path[s]];
        int unk = nd->id == u->unk_id;
        if (!(unk && prev_unk)) {
            if (begin)
                begin->id[ids->n] = (int32_t)l->n2o[l->start[nd->pos]];
            ids->id[ids->n++] = nd->id;
        }
        prev_unk = unk;
    }
    if (begin)
        begin->n = ids->n;
    return NMT_OK;
}
