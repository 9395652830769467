/* Learning subwords from a sample of a corpus too large to hold
 * (nmt/corpus.h, nmt_corpus_learn_subwords_sample). SentencePiece keeps
 * every sentence it is given; a streamed corpus gives it a reservoir
 * sample of pairs instead (Vitter's algorithm R: pair i, past the first
 * max_pairs, replaces a random one with probability max_pairs / i), its
 * source lines then its target lines, as the whole-corpus learner does. */
#include <stdlib.h>
#include <string.h>

#include "nmt/corpus.h"
#include "nmt/error.h"
#include "nmt/rng.h"
#include "nmt/text.h"

typedef struct sample {
    char **line[2];    /* [room] each side's kept lines */
    size_t n, room, max;
    int at_side;       /* the learner's read position: side, then pair */
    size_t at;
    int lowercase;
    char *lower;
    size_t lower_cap;
} sample;

static char *copy_line(const char *s, size_t len)
{
    char *p = malloc(len + 1);
    if (p) {
        memcpy(p, s, len);
        p[len] = '\0';
    }
    return p;
}

/* The current lines of the reader into slot i of the sample. */
static int keep(sample *sm, const char *const text[2], const size_t len[2], size_t i)
{
    for (int k = 0; k < 2; k++) {
        char *p = copy_line(text[k], len[k]);
        if (!p)
            return nmt_set_error(NMT_ERR_NOMEM, "out of memory for the subword sample");
        free(sm->line[k][i]);
        sm->line[k][i] = p;
    }
    return NMT_OK;
}

/* Room for more kept pairs (up to max): the arrays grow as pairs come, so
 * that a small corpus takes little. */
static int grow(sample *sm)
{
    size_t room = sm->room ? 2 * sm->room : 4096;
    room = room < sm->max ? room : sm->max;
    for (int k = 0; k < 2; k++) {
        char **p = realloc(sm->line[k], room * sizeof *p);
        if (!p)
            return nmt_set_error(NMT_ERR_NOMEM, "out of memory for the subword sample");
        sm->line[k] = p;
    }
    sm->room = room;
    return NMT_OK;
}

/* One pass over the files into the reservoir. */
static int draw(sample *sm, const char *src_path, const char *tgt_path)
{
    nmt_reader *r[2] = {NULL, NULL};
    int rc = nmt_reader_open(&r[0], src_path);
    if (!rc)
        rc = nmt_reader_open(&r[1], tgt_path);
    nmt_rng g;
    nmt_rng_seed(&g, 0x5eed5a3b1e5ULL);
    size_t seen = 0;
    while (!rc) {
        const char *text[2];
        size_t len[2];
        int got[2];
        for (int k = 0; k < 2 && !rc; k++)
            if ((got[k] = nmt_reader_next(r[k], &text[k], &len[k])) < 0)
                rc = got[k];
        if (rc)
            break;
        if (got[0] != got[1]) {
            rc = nmt_set_error(NMT_ERR_FORMAT, "%s and %s: the two sides of a parallel corpus "
                               "must have the same number of lines", src_path, tgt_path);
            break;
        }
        if (!got[0])
            break;
        /* the reader reuses its line buffers: kept lines are copied (keep) */
        seen++;
        if (sm->n < sm->max) {
            if (sm->n == sm->room && (rc = grow(sm)))
                break;
            /* counted before it is filled, so that a failed copy is freed */
            sm->line[0][sm->n] = sm->line[1][sm->n] = NULL;
            sm->n++;
            rc = keep(sm, text, len, sm->n - 1);
        } else {
            uint64_t j = nmt_rng_below(&g, seen);
            if (j < sm->max)
                rc = keep(sm, text, len, (size_t)j);
        }
    }
    nmt_reader_close(r[0]);
    nmt_reader_close(r[1]);
    return rc;
}

static int next_sampled(void *ctx, const char **line, size_t *len)
{
    sample *sm = ctx;
    if (sm->at == sm->n && sm->at_side == 0) {
        sm->at_side = 1;
        sm->at = 0;
    }
    if (sm->at == sm->n)
        return 0;
    const char *s = sm->line[sm->at_side][sm->at++];
    size_t n = strlen(s);
    if (sm->lowercase) {
        if (n + 1 > sm->lower_cap) {
            char *b = realloc(sm->lower, n + 1);
            if (!b)
                return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
            sm->lower = b;
            sm->lower_cap = n + 1;
        }
        n = nmt_lowercase(sm->lower, s, n);
        s = sm->lower;
    }
    *line = s;
    *len = n;
    return 1;
}

int nmt_corpus_learn_subwords_sample(nmt_subwords **out, const char *src_path,
                                     const char *tgt_path, int n_pieces, int lowercase,
                                     size_t max_pairs)
{
    *out = NULL;
    if (max_pairs < 1)
        return nmt_set_error(NMT_ERR_ARG, "a subword sample needs at least 1 pair");
    sample sm = {.max = max_pairs, .lowercase = lowercase};
    int rc = draw(&sm, src_path, tgt_path);
    if (!rc)
        rc = nmt_subwords_learn(out, n_pieces, next_sampled, &sm);
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; sm.line[k] && i < sm.n; i++)
            free(sm.line[k][i]);
        free(sm.line[k]);
    }
    free(sm.lower);
    return rc;
}
