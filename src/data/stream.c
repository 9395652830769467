/* A corpus streamed in blocks (nmt/stream.h).
 *
 * The block's arrays belong to the stream and keep their capacity from
 * block to block, so that the memory a run holds is that of its largest
 * block rather than a new allocation each time. To say whether a block is
 * the last, the reader goes on to the next kept pair and holds it: it is
 * the first pair of the next block, and the line before it is the next
 * block's position (nmt_stream_tell). */
#include "nmt/stream.h"

#include <stdlib.h>
#include <string.h>

#include "data/pair_reader.h"
#include "nmt/error.h"

struct nmt_stream {
    nmt_pair_reader in;
    const char *src_path, *tgt_path;
    nmt_corpus_opts o;
    const nmt_vocab *vocab[2];
    size_t block_pairs;
    nmt_corpus block;          /* arrays owned here */
    size_t cap_pairs, cap_ids[2];
    /* the pair read ahead: its ids and line (held: 1) */
    int held;
    int32_t *ahead[2];
    size_t ahead_n[2], ahead_cap[2], ahead_line;
    int at_end;                /* the files have no line left */
};

static int grow_ids(int32_t **ids, size_t *cap, size_t need)
{
    if (need <= *cap)
        return NMT_OK;
    size_t c = *cap ? *cap : 1024;
    while (c < need)
        c *= 2;
    int32_t *p = realloc(*ids, c * sizeof *p);
    if (!p)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for a block of %zu token ids", need);
    *ids = p;
    *cap = c;
    return NMT_OK;
}

/* The ids of side k's current line into ids[0..n). */
static int line_ids(const nmt_stream *s, int k, int32_t *ids)
{
    const nmt_pair_side *ps = &s->in.side[k];
    if (s->in.subwords) {
        memcpy(ids, ps->pieces.id, ps->pieces.n * sizeof *ids);
        return NMT_OK;
    }
    for (size_t i = 0; i < ps->tokens.n; i++) {
        int32_t id = nmt_vocab_id(s->vocab[k], ps->tokens.tok[i], ps->tokens.len[i]);
        if (id < 0)
            return id;
        ids[i] = id;
    }
    return NMT_OK;
}

/* Reads up to the next kept pair and holds its ids: 1, 0 at the end, < 0. */
static int read_ahead(nmt_stream *s)
{
    while (!s->at_end) {
        int rc = nmt_pair_reader_next(&s->in, 1);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            s->at_end = 1;
            break;
        }
        size_t ns = nmt_pair_reader_len(&s->in, 0), nt = nmt_pair_reader_len(&s->in, 1);
        if (s->o.skip_empty && (!ns || !nt))
            continue;
        if (s->o.max_len > 0 && (ns > (size_t)s->o.max_len || nt > (size_t)s->o.max_len))
            continue;
        size_t n[2] = {ns, nt};
        for (int k = 0; k < 2; k++) {
            if ((rc = grow_ids(&s->ahead[k], &s->ahead_cap[k], n[k] ? n[k] : 1)) ||
                (rc = line_ids(s, k, s->ahead[k])))
                return rc;
            s->ahead_n[k] = n[k];
        }
        s->ahead_line = s->in.lines;
        s->held = 1;
        return 1;
    }
    return 0;
}

/* Appends the held pair to the block. */
static int take_ahead(nmt_stream *s)
{
    nmt_corpus *b = &s->block;
    if (b->n + 2 > s->cap_pairs) {
        size_t c = s->cap_pairs ? 2 * s->cap_pairs : 1024;
        if (c > s->block_pairs + 1)
            c = s->block_pairs + 1;
        size_t *so = realloc(b->src_off, c * sizeof *so);
        if (so)
            b->src_off = so;
        size_t *to = realloc(b->tgt_off, c * sizeof *to);
        if (to)
            b->tgt_off = to;
        size_t *line = realloc(b->line, c * sizeof *line);
        if (line)
            b->line = line;
        if (!so || !to || !line)
            return nmt_set_error(NMT_ERR_NOMEM, "out of memory for a block of %zu pairs", c);
        s->cap_pairs = c;
    }
    int32_t **ids[2] = {&b->src, &b->tgt};
    size_t *off[2] = {b->src_off, b->tgt_off};
    for (int k = 0; k < 2; k++) {
        size_t at = off[k][b->n];
        int rc = grow_ids(ids[k], &s->cap_ids[k], at + s->ahead_n[k] + 1);
        if (rc)
            return rc;
        memcpy(*ids[k] + at, s->ahead[k], s->ahead_n[k] * sizeof(int32_t));
        off[k][b->n + 1] = at + s->ahead_n[k];
    }
    b->line[b->n] = s->ahead_line;
    b->n++;
    s->held = 0;
    return NMT_OK;
}

int nmt_stream_open(nmt_stream **out, const char *src_path, const char *tgt_path,
                    const nmt_corpus_opts *opts, const nmt_vocab *sv, const nmt_vocab *tv,
                    size_t block_pairs)
{
    *out = NULL;
    if (block_pairs < 1)
        return nmt_set_error(NMT_ERR_ARG, "a stream's blocks need at least 1 pair");
    if (!opts || opts->max_len < 0)
        return nmt_set_error(NMT_ERR_ARG, "a stream needs corpus options, max_len >= 0");
    if (opts->subword_alpha != 0)
        return nmt_set_error(NMT_ERR_ARG, "a streamed corpus cannot sample subwords");
    if (!opts->subwords && (!sv || !tv))
        return nmt_set_error(NMT_ERR_ARG, "a streamed corpus of words needs its vocabularies");
    nmt_stream *s = calloc(1, sizeof *s);
    if (!s)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    s->src_path = src_path;
    s->tgt_path = tgt_path;
    s->o = *opts;
    s->vocab[0] = sv;
    s->vocab[1] = tv;
    s->block_pairs = block_pairs;
    int rc = nmt_stream_seek(s, 0);
    if (rc) {
        nmt_stream_close(s);
        return rc;
    }
    *out = s;
    return NMT_OK;
}

int nmt_stream_seek(nmt_stream *s, size_t lines)
{
    nmt_pair_reader_close(&s->in);
    s->held = 0;
    s->at_end = 0;
    s->block.n = 0;
    int rc = nmt_pair_reader_open(&s->in, s->src_path, s->tgt_path, s->o.subwords, s->o.lowercase);
    while (!rc && s->in.lines < lines) {
        rc = nmt_pair_reader_next(&s->in, 0);
        if (rc == 0)
            rc = nmt_set_error(NMT_ERR_FORMAT, "%s and %s: %zu lines, but the position to "
                               "continue from is after line %zu: were the files changed?",
                               s->src_path, s->tgt_path, s->in.lines, lines);
        else if (rc == 1)
            rc = NMT_OK;
    }
    return rc;
}

size_t nmt_stream_tell(const nmt_stream *s)
{
    return s->held ? s->ahead_line - 1 : s->in.lines;
}

int nmt_stream_next(nmt_stream *s, const nmt_corpus **block, int *last)
{
    nmt_corpus *b = &s->block;
    *block = b;
    *last = 1;
    b->n = 0;
    if (!b->src_off) { /* the first block: its offsets' first place */
        int rc = NMT_OK;
        s->cap_pairs = 0;
        b->src_off = malloc(sizeof *b->src_off);
        b->tgt_off = malloc(sizeof *b->tgt_off);
        if (!b->src_off || !b->tgt_off)
            rc = nmt_set_error(NMT_ERR_NOMEM, "out of memory");
        s->cap_pairs = 1;
        if (rc)
            return rc;
    }
    b->src_off[0] = b->tgt_off[0] = 0;
    size_t first_line = nmt_stream_tell(s);
    while (b->n < s->block_pairs) {
        int rc = s->held ? 1 : read_ahead(s);
        if (rc < 0)
            return rc;
        if (rc == 0)
            break;
        if ((rc = take_ahead(s)))
            return rc;
    }
    b->n_lines = (b->n ? b->line[b->n - 1] : s->in.lines) - first_line;
    int rc = s->held ? 1 : read_ahead(s);
    if (rc < 0)
        return rc;
    *last = rc == 0;
    return NMT_OK;
}

void nmt_stream_close(nmt_stream *s)
{
    if (!s)
        return;
    nmt_pair_reader_close(&s->in);
    nmt_corpus_free(&s->block);
    free(s->ahead[0]);
    free(s->ahead[1]);
    free(s);
}
