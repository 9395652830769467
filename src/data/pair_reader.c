/* Two files of a parallel corpus read in step (data/pair_reader.h). The
 * checks and messages are those of nmt_corpus_read, so that a streamed
 * corpus is refused for what an in-memory one is. */
#include "data/pair_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"

int nmt_pair_reader_open(nmt_pair_reader *r, const char *src_path, const char *tgt_path,
                     const nmt_subwords *subwords, int lowercase)
{
    memset(r, 0, sizeof *r);
    r->subwords = subwords;
    r->lowercase = lowercase;
    r->side[0].path = src_path;
    r->side[1].path = tgt_path;
    int rc = nmt_reader_open(&r->side[0].reader, src_path);
    if (!rc)
        rc = nmt_reader_open(&r->side[1].reader, tgt_path);
    if (rc)
        nmt_pair_reader_close(r);
    return rc;
}

int nmt_lowercase_into(char **buf, size_t *cap, const char **line, size_t *len)
{
    if (*len + 1 > *cap) {
        char *b = realloc(*buf, *len + 1);
        if (!b)
            return NMT_ERR_NOMEM;
        *buf = b;
        *cap = *len + 1;
    }
    *len = nmt_lowercase(*buf, *line, *len);
    *line = *buf;
    return NMT_OK;
}

/* Room for n words in ids. */
static int reserve_words(nmt_ids *ids, size_t n, const char *path)
{
    if (n <= ids->cap)
        return NMT_OK;
    int32_t *grown = realloc(ids->id, n * sizeof *grown);
    if (!grown)
        return nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory", path);
    ids->id = grown;
    ids->cap = n;
    return NMT_OK;
}

/* The line's pieces (lowercased first when asked), and with words the word
 * of each. */
static int encode(nmt_pair_side *s, const nmt_subwords *sw, float alpha, const char *line,
                  size_t len, int lowercase, int words)
{
    if (lowercase && nmt_lowercase_into(&s->lower, &s->lower_cap, &line, &len))
        return nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory", s->path);
    int rc = words ? nmt_subwords_encode_spans(sw, line, len, alpha, &s->pieces, &s->begin)
                   : nmt_subwords_encode_ids(sw, line, len, alpha, &s->pieces);
    if (!rc && words && !(rc = reserve_words(&s->word, s->pieces.n, s->path))) {
        nmt_span_words(s->word.id, s->begin.id, s->pieces.n, line, len);
        s->word.n = s->pieces.n;
    }
    if (rc) {
        char why[512];
        snprintf(why, sizeof why, "%s", nmt_error_message());
        return nmt_set_error(rc, "%s:%zu: %s", s->path, nmt_reader_lineno(s->reader), why);
    }
    return NMT_OK;
}

static int next_line(nmt_pair_reader *r, int k, int split)
{
    nmt_pair_side *s = &r->side[k];
    const char *line;
    size_t len;
    int rc = nmt_reader_next(s->reader, &line, &len);
    if (rc == 1 && split) {
        int t = r->subwords ? encode(s, r->subwords, r->alpha, line, len, r->lowercase, r->words)
                            : nmt_tokenize(&s->tokens, line, len, r->lowercase);
        if (!t && r->words && !r->subwords && !(t = reserve_words(&s->word, s->tokens.n, s->path)))
            t = nmt_token_words(s->word.id, s->tokens.n, line, len, r->lowercase, &s->scratch);
        s->word.n = r->words ? nmt_pair_reader_len(r, k) : 0;
        if (t)
            return t;
    }
    return rc;
}

int nmt_pair_reader_next(nmt_pair_reader *r, int split)
{
    int rs = next_line(r, 0, split);
    if (rs < 0)
        return rs;
    int rt = next_line(r, 1, split);
    if (rt < 0)
        return rt;
    if (rs != rt) {
        const nmt_pair_side *shorter = rs ? &r->side[1] : &r->side[0];
        const nmt_pair_side *longer = rs ? &r->side[0] : &r->side[1];
        return nmt_set_error(NMT_ERR_FORMAT,
                             "%s:%zu: %s ended after line %zu but this file goes on: the two "
                             "sides of a parallel corpus must have the same number of lines",
                             longer->path, nmt_reader_lineno(longer->reader), shorter->path,
                             nmt_reader_lineno(shorter->reader));
    }
    if (rs)
        r->lines++;
    return rs;
}

size_t nmt_pair_reader_len(const nmt_pair_reader *r, int k)
{
    return r->subwords ? r->side[k].pieces.n : r->side[k].tokens.n;
}

void nmt_pair_reader_close(nmt_pair_reader *r)
{
    for (int k = 0; k < 2; k++) {
        nmt_pair_side *s = &r->side[k];
        nmt_reader_close(s->reader);
        nmt_tokens_free(&s->tokens);
        nmt_ids_free(&s->pieces);
        nmt_ids_free(&s->word);
        nmt_ids_free(&s->begin);
        nmt_tokens_free(&s->scratch);
        free(s->lower);
    }
    memset(r, 0, sizeof *r);
}
