/* Word links from attention (include/nmt/extract.h): Shift-Att's rows,
 * unaligned words, and one pair's text in, links out. */
#include "nmt/extract.h"

#include <stdlib.h>
#include <string.h>

#include <math.h>

#include "nmt/error.h"
#include "nmt/rng.h"
#include "nmt/text.h"
#include "nmt/units.h"
#include "nmt/vocab.h"

int nmt_align_model_defaults(const nmt_model *m, int *map, nmt_link_rules *r)
{
    memset(r, 0, sizeof *r);
    int trained = nmt_model_trained_attention_map(m);
    if (trained >= 0) {
        *map = trained;
        r->shift = m->cfg.align.shift;
        return 1;
    }
    *map = nmt_model_default_attention_map(m);
    return 0;
}

int nmt_align_rules_check(const nmt_model *m, const nmt_link_rules *r)
{
    if (!(r->min_weight >= 0 && r->min_weight <= 1))
        return nmt_set_error(NMT_ERR_ARG, "the least weight of a link must be within 0 to 1");
    /* Only maps that have layers (a Transformer's cross-attention) are read
     * after their step has embedded its input; the probe's refusal is no
     * error of the caller's. */
    if (r->shift && nmt_model_attention_map_at(m, NMT_MAP_DEFAULT, NMT_MAP_MEAN) < 0) {
        nmt_clear_error();
        return nmt_set_error(NMT_ERR_ARG,
                             "this model's attention at a step is computed from the state "
                             "before the step reads its input word, so no row belongs to the "
                             "step that reads a word: the shift is for a Transformer");
    }
    return NMT_OK;
}

void nmt_align_shift_rows(float *att, int n_tgt, int n_src)
{
    if (n_tgt < 1 || n_src < 1)
        return;
    memmove(att, att + n_src, (size_t)(n_tgt - 1) * n_src * sizeof *att);
    float *last = att + (size_t)(n_tgt - 1) * n_src;
    memset(last, 0, (size_t)n_src * sizeof *last);
    last[n_src - 1] = 1.0f;
}

int nmt_align_links(const nmt_alignment *a, const nmt_link_rules *r, nmt_link *links)
{
    int n = 0, real_src = a->n_src - 1, real_tgt = a->n_tgt - 1; /* "</s>" left out */
    if (real_src < 1)
        return 0;
    for (int i = 0; i < real_tgt; i++) {
        const float *row = a->att + (size_t)i * a->n_src;
        int best = 0;
        for (int j = 1; j < real_src; j++)
            if (row[j] > row[best]) /* strict: the lower index keeps a tie */
                best = j;
        /* strict too: a tie with "</s>" keeps the word's link */
        if (r && r->eos_unaligned && row[real_src] > row[best])
            continue;
        if (r && row[best] < r->min_weight)
            continue;
        links[n++] = (nmt_link){best, i, 0};
    }
    return n;
}

int nmt_align_write_links(FILE *f, const nmt_link *links, int n)
{
    return nmt_pharaoh_write(f, links, n > 0 ? (size_t)n : 0);
}

/* ---- one pair's text in, word links out ------------------------------------ */

struct nmt_aligner {
    const nmt_model *m;
    int map, pieces;
    nmt_link_rules rules;
    nmt_infer *st;
    int st_T, st_steps;      /* the sizes st was made for */
    nmt_tokens tok[2];
    const char **units[2];   /* [n] as split, "</s>" last */
    int32_t *ids[2];
    int cap[2];
    float *att;
    size_t att_cap;
    nmt_link *links;
    int links_cap;
    /* nmt_aligner_batch: each pair's units (two a pair), the batch, the
     * training workspace, the links of every pair */
    nmt_tokens *btok;
    int btok_cap;
    nmt_batch batch;
    nmt_workspace *ws;
    int ws_B, ws_Ts, ws_Tt;
    nmt_link *blinks;
    size_t blinks_cap;
    size_t *boff;
    int boff_cap;
};

static int grow(void *p, size_t n, size_t size)
{
    void *q = realloc(*(void **)p, (n ? n : 1) * size);
    if (!q)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    *(void **)p = q;
    return NMT_OK;
}

int nmt_aligner_create(nmt_aligner **out, const nmt_model *m, int map, const nmt_link_rules *r,
                       int pieces)
{
    *out = NULL;
    if (nmt_model_attention_maps(m) == 0)
        return nmt_set_error(NMT_ERR_ARG,
                             "this model has no attention (attention=none): it has no alignments");
    if (map < 0 || map >= nmt_model_attention_maps(m))
        return nmt_set_error(NMT_ERR_ARG, "the model has no attention map %d", map);
    int rc = nmt_align_rules_check(m, r);
    if (rc)
        return rc;
    nmt_aligner *al = calloc(1, sizeof *al);
    if (!al)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    al->m = m;
    al->map = map;
    al->rules = *r;
    al->pieces = pieces || !m->subwords;
    *out = al;
    return NMT_OK;
}

void nmt_aligner_free(nmt_aligner *al)
{
    if (!al)
        return;
    nmt_infer_free(al->st);
    for (int s = 0; s < 2; s++) {
        nmt_tokens_free(&al->tok[s]);
        free(al->units[s]);
        free(al->ids[s]);
    }
    free(al->att);
    free(al->links);
    for (int k = 0; k < al->btok_cap; k++)
        nmt_tokens_free(&al->btok[k]);
    free(al->btok);
    nmt_batch_free(&al->batch);
    nmt_workspace_free(al->ws);
    free(al->blinks);
    free(al->boff);
    free(al);
}

/* One side into units and ids, "</s>" appended; an unknown unit keeps its
 * spelling (as nmt align shows it). Returns the count, "</s>" included. */
static int side(nmt_aligner *al, int s, const char *line, int *unk)
{
    const nmt_vocab *v = s ? al->m->tgt_vocab : al->m->src_vocab;
    nmt_tokens *t = &al->tok[s];
    int rc = nmt_units_split(al->m, line, strlen(line), t);
    if (rc)
        return rc;
    if (t->n > 100000)
        return nmt_set_error(NMT_ERR_ARG, "a line of %zu tokens is too long to align", t->n);
    int n = (int)t->n + 1;
    if (n > al->cap[s]) {
        if ((rc = grow(&al->units[s], (size_t)n, sizeof *al->units[s])) ||
            (rc = grow(&al->ids[s], (size_t)n, sizeof *al->ids[s])))
            return rc;
        al->cap[s] = n;
    }
    *unk = 0;
    for (size_t k = 0; k < t->n; k++) {
        al->units[s][k] = t->tok[k];
        al->ids[s][k] = nmt_vocab_id(v, t->tok[k], t->len[k]);
        *unk += al->ids[s][k] == NMT_UNK;
    }
    al->units[s][n - 1] = "</s>";
    al->ids[s][n - 1] = NMT_EOS;
    return n;
}

/* The state, remade when this pair is longer than it was made for. */
static int ready_state(nmt_aligner *al, int n_src, int n_tgt)
{
    if (al->st && n_src <= al->st_T && n_tgt <= al->st_steps)
        return NMT_OK;
    nmt_infer_free(al->st);
    al->st = NULL;
    al->st_T = n_src > 2 * al->st_T ? n_src : 2 * al->st_T;
    al->st_steps = n_tgt > 2 * al->st_steps ? n_tgt : 2 * al->st_steps;
    int rc = nmt_infer_create(&al->st, al->m, 1, al->st_T, 1, al->st_steps);
    return rc ? rc : nmt_infer_set_attention_map(al->st, al->map);
}

int nmt_aligner_pair(nmt_aligner *al, const char *src, const char *tgt, nmt_pair_links *out)
{
    memset(out, 0, sizeof *out);
    int n_src = side(al, 0, src, &out->src_unk);
    if (n_src < 0)
        return n_src;
    int n_tgt = side(al, 1, tgt, &out->tgt_unk);
    if (n_tgt < 0)
        return n_tgt;
    out->src_units = n_src - 1;
    out->tgt_units = n_tgt - 1;
    size_t plane = (size_t)n_src * n_tgt;
    int rc = ready_state(al, n_src, n_tgt);
    if (!rc && plane > al->att_cap && !(rc = grow(&al->att, plane, sizeof *al->att)))
        al->att_cap = plane;
    if (!rc)
        rc = nmt_align_forced(al->m, al->st, al->ids[0], n_src, al->ids[1], n_tgt, al->att);
    if (rc)
        return rc;
    if (al->rules.shift)
        nmt_align_shift_rows(al->att, n_tgt, n_src);
    nmt_alignment a = {n_src, n_tgt, al->units[0], al->units[1], al->att};
    nmt_word_alignment words = {0};
    if (!al->pieces && (rc = nmt_align_words(&a, &words))) {
        nmt_word_alignment_free(&words);
        return rc;
    }
    const nmt_alignment *by = al->pieces ? &a : &words.a;
    if (by->n_tgt > al->links_cap) {
        if ((rc = grow(&al->links, (size_t)by->n_tgt, sizeof *al->links))) {
            nmt_word_alignment_free(&words);
            return rc;
        }
        al->links_cap = by->n_tgt;
    }
    out->links = al->links;
    out->n_links = nmt_align_links(by, &al->rules, al->links);
    out->n_src = by->n_src - 1;
    out->n_tgt = by->n_tgt - 1;
    nmt_word_alignment_free(&words);
    return NMT_OK;
}

/* ---- many pairs by one forward ----------------------------------------------- */

/* Pair k's units as a's sides, "</s>" last; its links after the rules,
 * into al->links (words unless pieces). The matrix is al->att. */
static int links_of(nmt_aligner *al, nmt_alignment *a, nmt_pair_links *out)
{
    int rc;
    if (al->rules.shift)
        nmt_align_shift_rows(al->att, a->n_tgt, a->n_src);
    nmt_word_alignment words = {0};
    if (!al->pieces && (rc = nmt_align_words(a, &words))) {
        nmt_word_alignment_free(&words);
        return rc;
    }
    const nmt_alignment *by = al->pieces ? a : &words.a;
    if (by->n_tgt > al->links_cap) {
        if ((rc = grow(&al->links, (size_t)by->n_tgt, sizeof *al->links))) {
            nmt_word_alignment_free(&words);
            return rc;
        }
        al->links_cap = by->n_tgt;
    }
    out->links = al->links;
    out->n_links = nmt_align_links(by, &al->rules, al->links);
    out->n_src = by->n_src - 1;
    out->n_tgt = by->n_tgt - 1;
    nmt_word_alignment_free(&words);
    return NMT_OK;
}

/* The pairs' units split, the batch filled (as nmt_batch_fill lays one out)
 * and the workspace made large enough. */
static int batch_ready(nmt_aligner *al, const char *const *src, const char *const *tgt, int n,
                       nmt_pair_links *out, int *failed)
{
    int rc;
    if (2 * n > al->btok_cap) {
        if ((rc = grow(&al->btok, (size_t)(2 * n), sizeof *al->btok)))
            return rc;
        memset(al->btok + al->btok_cap, 0, (size_t)(2 * n - al->btok_cap) * sizeof *al->btok);
        al->btok_cap = 2 * n;
    }
    int Ts = 1, Tt = 1;
    for (int k = 0; k < n; k++)
        for (int s = 0; s < 2; s++) {
            nmt_tokens *t = &al->btok[2 * k + s];
            const char *line = s ? tgt[k] : src[k];
            if ((rc = nmt_units_split(al->m, line, strlen(line), t)) ||
                (t->n > 100000 && (rc = nmt_set_error(NMT_ERR_ARG, "a line of %zu tokens is "
                                                       "too long to align", t->n)))) {
                *failed = k;
                return rc;
            }
            int len = (int)t->n + 1;
            if (s)
                Tt = len > Tt ? len : Tt;
            else
                Ts = len > Ts ? len : Ts;
        }
    nmt_batch *b = &al->batch;
    if (n > b->cap_B || Ts > b->cap_src_T || Tt > b->cap_tgt_T) {
        int cB = n > b->cap_B ? n : b->cap_B, cs = Ts > b->cap_src_T ? Ts : b->cap_src_T,
            ct = Tt > b->cap_tgt_T ? Tt : b->cap_tgt_T;
        nmt_batch_free(b);
        if ((rc = nmt_batch_alloc(b, cB, cs, ct)))
            return rc;
    }
    if (!al->ws || n > al->ws_B || Ts > al->ws_Ts || Tt > al->ws_Tt) {
        nmt_workspace_free(al->ws);
        al->ws = NULL;
        al->ws_B = n > al->ws_B ? n : al->ws_B;
        al->ws_Ts = Ts > 2 * al->ws_Ts ? Ts : 2 * al->ws_Ts;
        al->ws_Tt = Tt > 2 * al->ws_Tt ? Tt : 2 * al->ws_Tt;
        if ((rc = nmt_workspace_create(&al->ws, al->m, al->ws_B, al->ws_Ts, al->ws_Tt)))
            return rc;
    }
    b->B = n, b->src_T = Ts, b->tgt_T = Tt, b->guide = NULL, b->n_tgt_tokens = 0;
    memset(b->src, 0, (size_t)Ts * n * sizeof *b->src); /* NMT_PAD == 0 */
    memset(b->tgt_in, 0, (size_t)Tt * n * sizeof *b->tgt_in);
    memset(b->tgt_out, 0, (size_t)Tt * n * sizeof *b->tgt_out);
    for (int k = 0; k < n; k++) {
        const nmt_tokens *x = &al->btok[2 * k], *y = &al->btok[2 * k + 1];
        memset(&out[k], 0, sizeof out[k]);
        for (size_t t = 0; t < x->n; t++) {
            int32_t id = nmt_vocab_id(al->m->src_vocab, x->tok[t], x->len[t]);
            b->src[t * n + k] = id;
            out[k].src_unk += id == NMT_UNK;
        }
        b->src[x->n * n + k] = NMT_EOS;
        b->tgt_in[k] = NMT_BOS;
        for (size_t t = 0; t < y->n; t++) {
            int32_t id = nmt_vocab_id(al->m->tgt_vocab, y->tok[t], y->len[t]);
            b->tgt_in[(t + 1) * n + k] = id;
            b->tgt_out[t * n + k] = id;
            out[k].tgt_unk += id == NMT_UNK;
        }
        b->tgt_out[y->n * n + k] = NMT_EOS;
        b->src_len[k] = (int)x->n + 1;
        b->tgt_len[k] = (int)y->n + 1;
        b->pair[k] = (size_t)k;
        b->n_tgt_tokens += (size_t)b->tgt_len[k];
        out[k].src_units = (int)x->n;
        out[k].tgt_units = (int)y->n;
    }
    return NMT_OK;
}

/* Pair k's side s as units, "</s>" last, in al->units[s]. */
static int units_of(nmt_aligner *al, int s, const nmt_tokens *t)
{
    int n = (int)t->n + 1, rc;
    if (n > al->cap[s]) {
        if ((rc = grow(&al->units[s], (size_t)n, sizeof *al->units[s])) ||
            (rc = grow(&al->ids[s], (size_t)n, sizeof *al->ids[s])))
            return rc;
        al->cap[s] = n;
    }
    for (size_t k = 0; k < t->n; k++)
        al->units[s][k] = t->tok[k];
    al->units[s][n - 1] = "</s>";
    return n;
}

/* Keeps pair k's links (out->links, the aligner's one buffer) among the
 * batch's, at al->boff[k]. */
static int keep_links(nmt_aligner *al, int k, size_t *used, const nmt_pair_links *p)
{
    int rc;
    if (*used + (size_t)p->n_links > al->blinks_cap) {
        size_t cap = 2 * (*used + (size_t)p->n_links) + 64;
        if ((rc = grow(&al->blinks, cap, sizeof *al->blinks)))
            return rc;
        al->blinks_cap = cap;
    }
    if (p->n_links)
        memcpy(al->blinks + *used, p->links, (size_t)p->n_links * sizeof *al->blinks);
    al->boff[k] = *used;
    *used += (size_t)p->n_links;
    return NMT_OK;
}

int nmt_aligner_batch(nmt_aligner *al, const char *const *src, const char *const *tgt, int n,
                      nmt_pair_links *out, int *failed)
{
    int rc;
    size_t used = 0;
    *failed = -1;
    if (n < 1)
        return NMT_OK;
    if (n > al->boff_cap) {
        if ((rc = grow(&al->boff, (size_t)n, sizeof *al->boff)))
            return rc;
        al->boff_cap = n;
    }
    if (!nmt_model_workspace_maps(al->m)) {
        /* no maps in the training pass: the decoding steps, pair by pair */
        for (int k = 0; k < n; k++) {
            if ((rc = nmt_aligner_pair(al, src[k], tgt[k], &out[k]))) {
                *failed = k;
                return rc;
            }
            if ((rc = keep_links(al, k, &used, &out[k])))
                return rc;
        }
    } else {
        if ((rc = batch_ready(al, src, tgt, n, out, failed)))
            return rc;
        /* no dropout: the regularizer zero, whose rates draw nothing */
        nmt_rng rng;
        nmt_rng_seed(&rng, 1);
        const nmt_regularizer none = {0};
        nmt_real loss;
        if ((rc = nmt_forward(&loss, al->m, al->ws, &al->batch, &none, &rng)))
            return rc;
        if (!isfinite((double)loss))
            return nmt_set_error(NMT_ERR_NUMERIC,
                                 "the model's log-probabilities are not finite: its weights are "
                                 "not numbers, or so large that its forward pass overflows");
        for (int k = 0; k < n; k++) {
            int ns = units_of(al, 0, &al->btok[2 * k]), nt = units_of(al, 1, &al->btok[2 * k + 1]);
            if (ns < 0 || nt < 0)
                return ns < 0 ? ns : nt;
            size_t plane = (size_t)ns * nt;
            if (plane > al->att_cap) {
                if ((rc = grow(&al->att, plane, sizeof *al->att)))
                    return rc;
                al->att_cap = plane;
            }
            if ((rc = nmt_workspace_attention_map(al->m, al->ws, &al->batch, al->map, k, al->att)))
                return rc;
            nmt_alignment a = {ns, nt, al->units[0], al->units[1], al->att};
            if ((rc = links_of(al, &a, &out[k])) || (rc = keep_links(al, k, &used, &out[k])))
                return rc;
        }
    }
    for (int k = 0; k < n; k++)
        out[k].links = al->blinks + al->boff[k];
    return NMT_OK;
}
