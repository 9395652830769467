/* IBM Model 2 with a diagonal prior, trained by EM (nmt/ibm2.h), written
 * from the equations of Dyer, Chahuneau and Smith (2013).
 *
 * The words of each side get ids from a hash of their bytes (source id 0
 * is NULL). The table t holds one entry per (source word, target word)
 * that share a pair, found once, when the table is made: each pair then
 * keeps, for every target position i and source position j = 0..n (0 the
 * NULL), the entry's index, so an iteration reads the table without
 * hashing. The expected counts of an iteration go into an array beside t.
 *
 * λ's M-step: with q_ij the posterior and h_ij = -|i/m - j/n|, the
 * expected complete log-likelihood's part in λ is
 *   F(λ) = λ Σ q_ij h_ij - Σ_i w_i log Z_i(λ),   w_i = Σ_{j>=1} q_ij,
 * concave, with F'(λ) = Σ q h - Σ_i w_i E_λ[h | i, m, n] and F'' = -Σ w_i
 * Var_λ[h]. Z_i depends on i, m and n alone, so w_i is summed per pair
 * shape (n, m) and position i, and each Newton step costs one pass over
 * the shapes, not over the corpus. */
#include "nmt/ibm2.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"
#include "nmt/utf8.h"

enum { MAX_WORDS = 65535 };
/* The least t(f | e): times the least prior (exp(-λ) / n, λ at most 100)
 * still far above the smallest double. */
#define T_FLOOR 1e-200

/* ---- vocabularies ------------------------------------------------------- */

typedef struct vocab {
    char *bytes;          /* the words, each NUL-terminated */
    size_t n_bytes, cap_bytes;
    size_t *at;           /* [n] each word's offset in bytes */
    size_t n, cap;
    uint32_t *slot;       /* [n_slots] id + 1, 0 empty */
    size_t n_slots;
} vocab;

static uint64_t fnv1a(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t k = 0; k < len; k++)
        h = (h ^ (unsigned char)s[k]) * 1099511628211ull;
    return h;
}

static int grow(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*(void **)p, c * size);
    if (!q)
        return nmt_set_error(NMT_ERR_NOMEM, "word aligner: out of memory");
    *(void **)p = q;
    *cap = c;
    return 0;
}

static int vocab_rehash(vocab *v, size_t n_slots)
{
    uint32_t *s = calloc(n_slots, sizeof *s);
    if (!s)
        return nmt_set_error(NMT_ERR_NOMEM, "word aligner: out of memory");
    for (size_t id = 0; id < v->n; id++) {
        const char *w = v->bytes + v->at[id];
        size_t h = (size_t)fnv1a(w, strlen(w)) & (n_slots - 1);
        while (s[h])
            h = (h + 1) & (n_slots - 1);
        s[h] = (uint32_t)id + 1;
    }
    free(v->slot);
    v->slot = s;
    v->n_slots = n_slots;
    return 0;
}

/* The id of word w[0..len), added when new; -1 after an error. */
static int32_t vocab_id(vocab *v, const char *w, size_t len)
{
    if (2 * (v->n + 1) > v->n_slots && vocab_rehash(v, v->n_slots ? 2 * v->n_slots : 1024))
        return -1;
    size_t h = (size_t)fnv1a(w, len) & (v->n_slots - 1);
    for (; v->slot[h]; h = (h + 1) & (v->n_slots - 1)) {
        const char *s = v->bytes + v->at[v->slot[h] - 1];
        if (!strncmp(s, w, len) && s[len] == '\0')
            return (int32_t)v->slot[h] - 1;
    }
    if (v->n >= INT32_MAX - 1)
        return nmt_set_error(NMT_ERR_NOMEM, "word aligner: too many words"), -1;
    if (grow(&v->bytes, &v->cap_bytes, v->n_bytes + len + 1, 1) ||
        grow(&v->at, &v->cap, v->n + 1, sizeof *v->at))
        return -1;
    memcpy(v->bytes + v->n_bytes, w, len);
    v->bytes[v->n_bytes + len] = '\0';
    v->at[v->n] = v->n_bytes;
    v->n_bytes += len + 1;
    v->slot[h] = (uint32_t)v->n + 1;
    return (int32_t)v->n++;
}

static void vocab_free(vocab *v)
{
    free(v->bytes);
    free(v->at);
    free(v->slot);
}

/* ---- the aligner ---------------------------------------------------------- */

/* A pair shape (n source, m target words) and its w_i, at w + off. */
typedef struct shape {
    int n, m;
    size_t off;
} shape;

struct nmt_ibm2 {
    nmt_ibm2_opts o;
    double tension;
    int iterations;          /* done */
    vocab vs, vt;            /* vs's id 0 is NULL */
    size_t n_pairs, cap_pairs;
    struct { size_t s, t; } *at; /* [n_pairs + 1] where each pair's words start
                                  * in src and tgt */
    int32_t *src, *tgt;
    size_t n_src, cap_src, n_tgt, cap_tgt;
    /* made at the first iteration */
    int built;
    size_t *cell_at;         /* [n_pairs + 1] each pair's cells: [m][n + 1] */
    uint32_t *cell;          /* indices into t */
    size_t n_t;
    double *t, *count;       /* [n_t] */
    int32_t *t_src;          /* [n_t] each entry's source word */
    double *total;           /* [source words] */
    shape *shapes;           /* the distinct pair shapes */
    size_t n_shapes;
    uint32_t *pair_shape;    /* [n_pairs] (UINT32_MAX: an empty side) */
    double *w;               /* the shapes' w_i, summed over their pairs */
    size_t n_w;
    double *row;             /* [MAX_WORDS + 1] scratch for one target word */
};

nmt_ibm2_opts nmt_ibm2_defaults(void)
{
    return (nmt_ibm2_opts){.p_null = 0.08, .tension = 4.0, .learn_tension = 1, .alpha = 1e-4};
}

int nmt_ibm2_create(nmt_ibm2 **out, const nmt_ibm2_opts *opts)
{
    *out = NULL;
    nmt_ibm2_opts o = opts ? *opts : nmt_ibm2_defaults();
    if (!(o.p_null >= 0 && o.p_null < 1))
        return nmt_set_error(NMT_ERR_ARG, "the NULL probability must be in [0, 1), not %g",
                             o.p_null);
    if (!(o.tension >= NMT_IBM2_TENSION_MIN && o.tension <= NMT_IBM2_TENSION_MAX))
        return nmt_set_error(NMT_ERR_ARG, "the tension must be in [%g, %g], not %g",
                             NMT_IBM2_TENSION_MIN, NMT_IBM2_TENSION_MAX, o.tension);
    if (!(o.alpha >= 0 && o.alpha <= 1e6))
        return nmt_set_error(NMT_ERR_ARG, "the Dirichlet prior alpha must be in [0, 1e6], "
                             "not %g", o.alpha);
    nmt_ibm2 *m = calloc(1, sizeof *m);
    if (!m)
        return nmt_set_error(NMT_ERR_NOMEM, "word aligner: out of memory");
    m->o = o;
    m->tension = o.tension;
    if (grow(&m->at, &m->cap_pairs, 1, sizeof *m->at) || vocab_id(&m->vs, "", 0) != 0) {
        nmt_ibm2_free(m);
        return nmt_set_error(NMT_ERR_NOMEM, "word aligner: out of memory");
    }
    m->at[0].s = m->at[0].t = 0;
    *out = m;
    return NMT_OK;
}

void nmt_ibm2_free(nmt_ibm2 *m)
{
    if (!m)
        return;
    vocab_free(&m->vs);
    vocab_free(&m->vt);
    free(m->at);
    free(m->src);
    free(m->tgt);
    free(m->cell_at);
    free(m->cell);
    free(m->t);
    free(m->count);
    free(m->t_src);
    free(m->total);
    free(m->shapes);
    free(m->pair_shape);
    free(m->w);
    free(m->row);
    free(m);
}

/* Appends the ids of line's words (whitespace-separated) to *ids. */
static int add_words(vocab *v, const char *line, size_t len, int32_t **ids, size_t *n,
                     size_t *cap)
{
    const unsigned char *s = (const unsigned char *)line;
    size_t i = 0, l, words = 0;
    while (i < len) {
        if (nmt_utf8_is_token_space(nmt_utf8_decode(s + i, len - i, &l))) {
            i += l;
            continue;
        }
        size_t end = i;
        while (end < len && !nmt_utf8_is_token_space(nmt_utf8_decode(s + end, len - end, &l)))
            end += l;
        if (++words > MAX_WORDS)
            return nmt_set_error(NMT_ERR_ARG, "a line of over %d words is too long to align",
                                 MAX_WORDS);
        int32_t id = vocab_id(v, line + i, end - i);
        if (id < 0 || grow(ids, cap, *n + 1, sizeof **ids))
            return NMT_ERR_NOMEM;
        (*ids)[(*n)++] = id;
        i = end;
    }
    return NMT_OK;
}

int nmt_ibm2_add(nmt_ibm2 *m, const char *src, size_t src_len, const char *tgt,
                 size_t tgt_len)
{
    if (m->built)
        return nmt_set_error(NMT_ERR_ARG, "word aligner: no pair can be added once trained");
    size_t ns = m->n_src, nt = m->n_tgt;
    int rc = add_words(&m->vs, src, src_len, &m->src, &m->n_src, &m->cap_src);
    if (!rc)
        rc = add_words(&m->vt, tgt, tgt_len, &m->tgt, &m->n_tgt, &m->cap_tgt);
    if (!rc)
        rc = grow(&m->at, &m->cap_pairs, m->n_pairs + 2, sizeof *m->at);
    if (rc) { /* the pair is not added; words new to the vocabularies stay */
        m->n_src = ns;
        m->n_tgt = nt;
        return rc;
    }
    m->n_pairs++;
    m->at[m->n_pairs].s = m->n_src;
    m->at[m->n_pairs].t = m->n_tgt;
    return NMT_OK;
}

size_t nmt_ibm2_pairs(const nmt_ibm2 *m) { return m->n_pairs; }

void nmt_ibm2_pair_size(const nmt_ibm2 *m, size_t k, int *n_src, int *n_tgt)
{
    *n_src = (int)(m->at[k + 1].s - m->at[k].s);
    *n_tgt = (int)(m->at[k + 1].t - m->at[k].t);
}

void nmt_ibm2_vocab_sizes(const nmt_ibm2 *m, size_t *src, size_t *tgt)
{
    *src = m->vs.n - 1;
    *tgt = m->vt.n;
}

double nmt_ibm2_tension(const nmt_ibm2 *m) { return m->tension; }

/* ---- the table ------------------------------------------------------------ */

/* An open-addressing map from 64-bit keys to indices 0, 1, ... in the order
 * the keys came. */
typedef struct keymap {
    uint64_t *key;  /* [n] */
    size_t n, cap;
    uint32_t *slot; /* [n_slots] index + 1, 0 empty */
    size_t n_slots;
} keymap;

static size_t mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return (size_t)k;
}

static int keymap_rehash(keymap *h, size_t n_slots)
{
    uint32_t *s = calloc(n_slots, sizeof *s);
    if (!s)
        return nmt_set_error(NMT_ERR_NOMEM, "word aligner: out of memory");
    for (size_t k = 0; k < h->n; k++) {
        size_t at = mix(h->key[k]) & (n_slots - 1);
        while (s[at])
            at = (at + 1) & (n_slots - 1);
        s[at] = (uint32_t)k + 1;
    }
    free(h->slot);
    h->slot = s;
    h->n_slots = n_slots;
    return 0;
}

/* The index of key, added when new; -1 after an error. */
static long keymap_get(keymap *h, uint64_t key)
{
    if (2 * (h->n + 1) > h->n_slots && keymap_rehash(h, h->n_slots ? 2 * h->n_slots : 4096))
        return -1;
    size_t at = mix(key) & (h->n_slots - 1);
    for (; h->slot[at]; at = (at + 1) & (h->n_slots - 1))
        if (h->key[h->slot[at] - 1] == key)
            return (long)h->slot[at] - 1;
    if (h->n >= UINT32_MAX - 1)
        return nmt_set_error(NMT_ERR_NOMEM, "word aligner: too many word pairs"), -1;
    if (grow(&h->key, &h->cap, h->n + 1, sizeof *h->key))
        return -1;
    h->key[h->n] = key;
    h->slot[at] = (uint32_t)h->n + 1;
    return (long)h->n++;
}

static void keymap_free(keymap *h)
{
    free(h->key);
    free(h->slot);
}

static int empty_pair(const nmt_ibm2 *m, size_t k)
{
    return m->at[k + 1].s == m->at[k].s || m->at[k + 1].t == m->at[k].t;
}

/* Finds the pairs' word pairs and shapes: the cells, t (uniform), the
 * counts, w. */
static int build(nmt_ibm2 *m)
{
    if (m->built)
        return NMT_OK;
    keymap words = {0}, shapes = {0};
    int rc = NMT_ERR_NOMEM;
    size_t cells = 0, n_w = 0, max_n = 1;
    if (!(m->cell_at = malloc((m->n_pairs + 1) * sizeof *m->cell_at)) ||
        !(m->pair_shape = malloc((m->n_pairs ? m->n_pairs : 1) * sizeof *m->pair_shape)))
        goto fail;
    for (size_t k = 0; k < m->n_pairs; k++) {
        m->cell_at[k] = cells;
        int n, t;
        nmt_ibm2_pair_size(m, k, &n, &t);
        m->pair_shape[k] = UINT32_MAX;
        if (empty_pair(m, k))
            continue;
        cells += (size_t)t * (size_t)(n + 1);
        max_n = (size_t)n > max_n ? (size_t)n : max_n;
        size_t before = shapes.n;
        long s = keymap_get(&shapes, (uint64_t)n << 32 | (uint64_t)t);
        if (s < 0)
            goto fail;
        if (shapes.n > before)
            n_w += (size_t)t;
        m->pair_shape[k] = (uint32_t)s;
    }
    m->cell_at[m->n_pairs] = cells;
    if (!(m->cell = malloc((cells ? cells : 1) * sizeof *m->cell)) ||
        !(m->shapes = malloc((shapes.n ? shapes.n : 1) * sizeof *m->shapes)) ||
        !(m->w = calloc(n_w ? n_w : 1, sizeof *m->w)) ||
        !(m->row = malloc(2 * (max_n + 1) * sizeof *m->row)))
        goto fail;
    for (size_t s = 0, off = 0; s < shapes.n; s++) {
        m->shapes[s] = (shape){(int)(shapes.key[s] >> 32), (int)(shapes.key[s] & 0xffffffffu),
                               off};
        off += (size_t)m->shapes[s].m;
    }
    m->n_shapes = shapes.n;
    m->n_w = n_w;
    for (size_t k = 0; k < m->n_pairs; k++) {
        if (empty_pair(m, k))
            continue;
        const int32_t *e = m->src + m->at[k].s, *f = m->tgt + m->at[k].t;
        int n, t;
        nmt_ibm2_pair_size(m, k, &n, &t);
        uint32_t *c = m->cell + m->cell_at[k];
        for (int i = 0; i < t; i++)
            for (int j = 0; j <= n; j++) {
                uint64_t src = j ? (uint64_t)e[j - 1] : 0;
                long x = keymap_get(&words, src << 32 | (uint64_t)f[i]);
                if (x < 0)
                    goto fail;
                *c++ = (uint32_t)x;
            }
    }
    m->n_t = words.n;
    if (!(m->t = malloc((m->n_t ? m->n_t : 1) * sizeof *m->t)) ||
        !(m->count = calloc(m->n_t ? m->n_t : 1, sizeof *m->count)) ||
        !(m->t_src = malloc((m->n_t ? m->n_t : 1) * sizeof *m->t_src)) ||
        !(m->total = calloc(m->vs.n, sizeof *m->total)))
        goto fail;
    double uniform = 1.0 / (double)(m->vt.n ? m->vt.n : 1);
    for (size_t x = 0; x < m->n_t; x++) {
        m->t[x] = uniform;
        m->t_src[x] = (int32_t)(words.key[x] >> 32);
    }
    m->built = 1;
    rc = NMT_OK;
fail:
    keymap_free(&words);
    keymap_free(&shapes);
    if (rc)
        nmt_set_error(rc, "word aligner: out of memory (%zu cells)", cells);
    return rc;
}

/* ---- the model ------------------------------------------------------------ */

/* Target word i's (from 0) prior over the n source words into r [n + 1]
 * (r[0] the NULL's), and each source word's feature h = -|i/m - j/n| into
 * h [n + 1] (h[0] unused). */
static void prior_row(double lambda, double p0, int i, int t, int n, double *r, double *h)
{
    double pos = (double)(i + 1) / t, z = 0;
    for (int j = 1; j <= n; j++) {
        h[j] = -fabs(pos - (double)j / n);
        r[j] = exp(lambda * h[j]);
        z += r[j];
    }
    double scale = (1 - p0) / z;
    r[0] = p0;
    for (int j = 1; j <= n; j++)
        r[j] *= scale;
}

/* Target word i's joint p(a_i = j, f_i | e) for j = 0..n into s [n + 1];
 * returns their sum. */
static double joint_row(const nmt_ibm2 *m, const uint32_t *c, int i, int t, int n, double *s,
                        double *h)
{
    prior_row(m->tension, m->o.p_null, i, t, n, s, h);
    double sum = 0;
    for (int j = 0; j <= n; j++) {
        s[j] *= m->t[c[j]];
        sum += s[j];
    }
    return sum;
}

/* Σ_i w_i E_λ[h] and Σ_i w_i Var_λ[h] over the shapes. */
static void expected_h(const nmt_ibm2 *m, double lambda, double *mean, double *var)
{
    double sm = 0, sv = 0;
    for (size_t s = 0; s < m->n_shapes; s++) {
        const shape *sh = &m->shapes[s];
        for (int i = 0; i < sh->m; i++) {
            double w = m->w[sh->off + (size_t)i];
            if (w == 0)
                continue;
            double pos = (double)(i + 1) / sh->m, z = 0, e1 = 0, e2 = 0;
            for (int j = 1; j <= sh->n; j++) {
                double h = -fabs(pos - (double)j / sh->n), r = exp(lambda * h);
                z += r;
                e1 += r * h;
                e2 += r * h * h;
            }
            double mu = e1 / z;
            sm += w * mu;
            sv += w * (e2 / z - mu * mu);
        }
    }
    *mean = sm;
    *var = sv;
}

/* λ's M-step: the root of H - Σ w E_λ[h] (a decreasing function of λ)
 * within the bounds, by Newton's method kept inside a bracket. */
static double new_tension(const nmt_ibm2 *m, double h_post, double lambda)
{
    double lo = NMT_IBM2_TENSION_MIN, hi = NMT_IBM2_TENSION_MAX, mean, var;
    expected_h(m, lo, &mean, &var);
    if (h_post - mean <= 0)
        return lo;
    expected_h(m, hi, &mean, &var);
    if (h_post - mean >= 0)
        return hi;
    for (int step = 0; step < 100; step++) {
        expected_h(m, lambda, &mean, &var);
        double d = h_post - mean;
        if (d > 0)
            lo = lambda;
        else
            hi = lambda;
        double next = var > 0 ? lambda + d / var : 0.5 * (lo + hi);
        if (!(next > lo && next < hi))
            next = 0.5 * (lo + hi);
        if (fabs(next - lambda) <= 1e-10 * lambda || hi - lo <= 1e-10 * lambda)
            return next;
        lambda = next;
    }
    return lambda;
}

/* ψ(x) for x > 0: the recurrence up to 6, then the asymptotic series. */
static double digamma(double x)
{
    double r = 0;
    while (x < 6) {
        r -= 1 / x;
        x += 1;
    }
    double f = 1 / (x * x);
    return r + log(x) - 0.5 / x -
           f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))));
}

int nmt_ibm2_iterate(nmt_ibm2 *m, nmt_ibm2_stats *st)
{
    int rc = build(m);
    if (rc)
        return rc;
    double log_prob = 0, null_mass = 0, h_post = 0;
    size_t words = 0;
    m->iterations++;
    memset(m->w, 0, (m->n_w ? m->n_w : 1) * sizeof *m->w);
    double *s = m->row, *h;
    for (size_t k = 0; k < m->n_pairs; k++) {
        if (empty_pair(m, k))
            continue;
        int n, t;
        nmt_ibm2_pair_size(m, k, &n, &t);
        const uint32_t *c = m->cell + m->cell_at[k];
        double *w = m->w + m->shapes[m->pair_shape[k]].off;
        h = s + n + 1;
        for (int i = 0; i < t; i++, c += n + 1) {
            double sum = joint_row(m, c, i, t, n, s, h);
            if (!(sum > 0) || !isfinite(sum))
                return nmt_set_error(NMT_ERR_NUMERIC, "word aligner: pair %zu, target word "
                                     "%d: its probability is %g", k + 1, i, sum);
            log_prob += log(sum);
            double inv = 1 / sum, q0 = s[0] * inv;
            m->count[c[0]] += q0;
            null_mass += q0;
            for (int j = 1; j <= n; j++) {
                double q = s[j] * inv;
                m->count[c[j]] += q;
                h_post += q * h[j];
            }
            w[i] += 1 - q0;
        }
        words += (size_t)t;
    }
    /* the M-step: t from the counts, then λ */
    memset(m->total, 0, m->vs.n * sizeof *m->total);
    for (size_t x = 0; x < m->n_t; x++)
        m->total[m->t_src[x]] += m->count[x];
    double alpha = m->o.alpha, v_alpha = alpha * (double)m->vt.n;
    if (alpha > 0)
        for (size_t e = 0; e < m->vs.n; e++)
            m->total[e] = digamma(m->total[e] + v_alpha);
    for (size_t x = 0; x < m->n_t; x++) {
        double tot = m->total[m->t_src[x]];
        double t = alpha > 0 ? exp(digamma(m->count[x] + alpha) - tot)
                             : (tot > 0 ? m->count[x] / tot : 0);
        /* ψ(α) is about -1/α: a word pair of almost no count would get 0
         * and, with its neighbours, a target word of no probability */
        m->t[x] = t > T_FLOOR ? t : T_FLOOR;
        m->count[x] = 0;
    }
    if (m->o.learn_tension && m->n_shapes)
        m->tension = new_tension(m, h_post, m->tension);
    if (st) {
        st->iteration = m->iterations;
        st->tension = m->tension;
        st->log_prob = words ? log_prob / (double)words : 0;
        st->null_share = words ? null_mass / (double)words : 0;
    }
    return NMT_OK;
}

int nmt_ibm2_posterior(nmt_ibm2 *m, size_t k, double *post)
{
    if (k >= m->n_pairs || empty_pair(m, k))
        return nmt_set_error(NMT_ERR_ARG, "word aligner: pair %zu %s", k + 1,
                             k >= m->n_pairs ? "is past the pairs" : "has an empty side");
    int rc = build(m);
    if (rc)
        return rc;
    int n, t;
    nmt_ibm2_pair_size(m, k, &n, &t);
    const uint32_t *c = m->cell + m->cell_at[k];
    for (int i = 0; i < t; i++, c += n + 1) {
        double *s = post + (size_t)i * (size_t)(n + 1);
        double sum = joint_row(m, c, i, t, n, s, m->row);
        for (int j = 0; j <= n; j++)
            s[j] /= sum;
    }
    return NMT_OK;
}

int nmt_ibm2_links(nmt_ibm2 *m, size_t k, nmt_link *links)
{
    if (k >= m->n_pairs)
        return nmt_set_error(NMT_ERR_ARG, "word aligner: pair %zu is past the pairs", k + 1);
    if (empty_pair(m, k))
        return 0;
    int rc = build(m);
    if (rc)
        return rc;
    int n, t, found = 0;
    nmt_ibm2_pair_size(m, k, &n, &t);
    const uint32_t *c = m->cell + m->cell_at[k];
    double *s = m->row, *h = m->row + n + 1;
    for (int i = 0; i < t; i++, c += n + 1) {
        joint_row(m, c, i, t, n, s, h);
        int best = 0;
        for (int j = 1; j <= n; j++)
            if (s[j] > s[best])
                best = j;
        if (best)
            links[found++] = (nmt_link){best - 1, i, 0};
    }
    return found;
}
