/* Reading a parallel corpus into token ids in one streaming pass.
 *
 * A side without a vocabulary is counted as it is read: each token gets a
 * provisional id from a counter (a hash table of all types seen), and the ids
 * are stored; once the file is done the vocabulary is built and the stored
 * ids are remapped in place. So the raw text is never held, only one line of
 * it at a time, and each token is hashed once. With a subword model the
 * line's piece ids are stored as they come. */
#include "nmt/corpus.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "data/pair_reader.h"
#include "nmt/error.h"
#include "nmt/text.h"

/* One side of the corpus while it is read. */
typedef struct side {
    const nmt_pair_side *in;     /* the line just read, split (pair_reader.h) */
    const nmt_vocab *vocab;      /* given: map directly */
    nmt_vocab_counter *counter;  /* or: count, remap at the end */
    int shared;                  /* counter is the other side's (a joint vocabulary) */
    const nmt_subwords *subwords; /* or: the line's pieces, in */
    int32_t *ids;                /* growing copy of the corpus ids */
    int32_t *words;              /* with opts' words: each id's word, beside ids */
    size_t n_ids, cap_ids;
    int keep_words;
    size_t *off;                 /* [pairs + 1] */
} side;

/* The current line's length in tokens or pieces. */
static size_t line_len(const side *s)
{
    return s->subwords ? s->in->pieces.n : s->in->tokens.n;
}

static int push_ids(side *s)
{
    size_t need = s->n_ids + line_len(s);
    if (need > s->cap_ids) {
        size_t cap = s->cap_ids ? s->cap_ids : 1 << 16;
        while (cap < need)
            cap *= 2;
        int32_t *ids = realloc(s->ids, cap * sizeof *ids);
        if (ids)
            s->ids = ids;
        int32_t *words = s->keep_words ? realloc(s->words, cap * sizeof *words) : NULL;
        if (words)
            s->words = words;
        if (!ids || (s->keep_words && !words))
            return nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory for %zu token ids", s->in->path, need);
        s->cap_ids = cap;
    }
    if (s->keep_words)
        memcpy(s->words + s->n_ids, s->in->word.id, line_len(s) * sizeof *s->words);
    if (s->subwords) {
        memcpy(s->ids + s->n_ids, s->in->pieces.id, s->in->pieces.n * sizeof *s->ids);
        s->n_ids += s->in->pieces.n;
        return NMT_OK;
    }
    const nmt_tokens *tokens = &s->in->tokens;
    for (size_t i = 0; i < tokens->n; i++) {
        const char *t = tokens->tok[i];
        size_t len = tokens->len[i];
        int32_t id = s->vocab ? nmt_vocab_id(s->vocab, t, len) : nmt_vocab_counter_add(s->counter, t, len);
        if (id < 0)
            return id;
        s->ids[s->n_ids++] = id;
    }
    return NMT_OK;
}

/* Grows the per-pair arrays to hold pair number n (and the offset n + 1). */
static int reserve_pairs(nmt_corpus *c, side *s, side *t, size_t n, size_t *cap)
{
    if (n + 2 <= *cap)
        return NMT_OK;
    size_t nc = *cap ? 2 * *cap : 4096;
    size_t *so = realloc(s->off, nc * sizeof *so);
    if (so)
        s->off = so;
    size_t *to = realloc(t->off, nc * sizeof *to);
    if (to)
        t->off = to;
    size_t *line = realloc(c->line, nc * sizeof *line);
    if (line)
        c->line = line;
    if (!so || !to || !line)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for %zu sentence pairs", n);
    *cap = nc;
    return NMT_OK;
}

/* Builds the vocabulary of a counted side and rewrites its ids (and those
 * of `also`, a joint vocabulary's other side, which shares the counter). */
static int finish_vocab(side *s, side *also, const nmt_corpus_opts *o, nmt_vocab **out)
{
    int32_t *remap;
    int rc = nmt_vocab_counter_build(s->counter, o->min_count, o->max_vocab, out, &remap);
    if (rc)
        return rc;
    for (size_t i = 0; i < s->n_ids; i++)
        s->ids[i] = remap[s->ids[i]];
    for (size_t i = 0; also && i < also->n_ids; i++)
        also->ids[i] = remap[also->ids[i]];
    free(remap);
    return NMT_OK;
}

/* shared: the other side's counter, when a joint vocabulary is counted */
static int open_side(side *s, const nmt_pair_side *in, nmt_vocab *const *vocab,
                     const nmt_corpus_opts *o, nmt_vocab_counter *shared)
{
    memset(s, 0, sizeof *s);
    s->in = in;
    s->subwords = o->subwords;
    s->keep_words = o->words != 0;
    s->vocab = s->subwords ? NULL : *vocab;
    if (!s->vocab && !s->subwords && shared) {
        s->counter = shared;
        s->shared = 1;
        return NMT_OK;
    }
    if (!s->vocab && !s->subwords)
        return nmt_vocab_counter_new(&s->counter);
    return NMT_OK;
}

static void close_side(side *s)
{
    if (!s->shared)
        nmt_vocab_counter_free(s->counter);
    free(s->ids);
    free(s->words);
    free(s->off);
}

static int read_pairs(nmt_corpus *c, nmt_pair_reader *r, side *s, side *t,
                      const nmt_corpus_opts *o)
{
    size_t cap = 0;
    int rc = reserve_pairs(c, s, t, 0, &cap);
    if (rc)
        return rc;
    s->off[0] = t->off[0] = 0;
    for (;;) {
        int rs = nmt_pair_reader_next(r, 1);
        if (rs < 0)
            return rs;
        if (!rs)
            return NMT_OK;
        c->n_lines++;
        size_t ns = line_len(s), nt = line_len(t);
        if (o->skip_empty && (!ns || !nt)) {
            c->skipped_empty++;
            continue;
        }
        if (o->max_len > 0 && (ns > (size_t)o->max_len || nt > (size_t)o->max_len)) {
            c->skipped_long++;
            continue;
        }
        if ((rc = reserve_pairs(c, s, t, c->n, &cap)) || (rc = push_ids(s)) || (rc = push_ids(t)))
            return rc;
        c->line[c->n] = c->n_lines;
        c->n++;
        s->off[c->n] = s->n_ids;
        t->off[c->n] = t->n_ids;
    }
}

/* The arguments of nmt_corpus_read, for reading on another thread. */
typedef struct read_call {
    nmt_corpus *c;
    const char *src_path, *tgt_path;
    const nmt_corpus_opts *o;
    nmt_vocab **src_vocab, **tgt_vocab;
} read_call;

static int read_corpus(nmt_corpus *c, const char *src_path, const char *tgt_path,
                       const nmt_corpus_opts *opts, nmt_vocab **src_vocab, nmt_vocab **tgt_vocab);

static int read_call_run(void *ctx)
{
    read_call *r = ctx;
    return read_corpus(r->c, r->src_path, r->tgt_path, r->o, r->src_vocab, r->tgt_vocab);
}

int nmt_corpus_read(nmt_corpus *c, const char *src_path, const char *tgt_path,
                    const nmt_corpus_opts *opts, nmt_vocab **src_vocab, nmt_vocab **tgt_vocab)
{
    memset(c, 0, sizeof *c);
    nmt_corpus_opts o = {0};
    if (opts)
        o = *opts;
    if (o.max_len < 0 || o.min_count < 0 || o.max_vocab < 0 || o.subword_alpha < 0)
        return nmt_set_error(NMT_ERR_ARG, "corpus options must not be negative");
    if (o.subword_alpha > 0 && !o.subwords)
        return nmt_set_error(NMT_ERR_ARG, "subword sampling needs a subword model");
    if (!o.subwords && (!src_vocab || !tgt_vocab))
        return nmt_set_error(NMT_ERR_ARG, "a corpus of words needs its vocabularies' places");
    if (o.subword_alpha == 0)
        return read_corpus(c, src_path, tgt_path, &o, src_vocab, tgt_vocab);
    /* sampling: on a thread whose SentencePiece generator starts from the seed */
    read_call r = {c, src_path, tgt_path, &o, src_vocab, tgt_vocab};
    return nmt_subwords_run_seeded(o.sample_seed, read_call_run, &r);
}

static int read_corpus(nmt_corpus *c, const char *src_path, const char *tgt_path,
                       const nmt_corpus_opts *opts, nmt_vocab **src_vocab, nmt_vocab **tgt_vocab)
{
    const nmt_corpus_opts o = *opts;
    nmt_pair_reader r;
    side s, t;
    nmt_vocab *sv = NULL, *tv = NULL;
    memset(&s, 0, sizeof s);
    memset(&t, 0, sizeof t);
    int rc = nmt_pair_reader_open(&r, src_path, tgt_path, o.subwords, o.lowercase);
    if (rc)
        goto fail;
    r.alpha = o.subword_alpha;
    r.words = o.words != 0;
    /* a joint vocabulary is counted when neither side's is given */
    int joint = o.joint_vocab && !o.subwords && !*src_vocab && !*tgt_vocab;
    if ((rc = open_side(&s, &r.side[0], src_vocab, &o, NULL)) ||
        (rc = open_side(&t, &r.side[1], tgt_vocab, &o, joint ? s.counter : NULL)))
        goto fail;
    if ((rc = read_pairs(c, &r, &s, &t, &o)))
        goto fail;
    if (!c->n) {
        if (!c->n_lines)
            rc = nmt_set_error(NMT_ERR_FORMAT, "%s and %s: empty corpus: no lines", src_path, tgt_path);
        else
            rc = nmt_set_error(NMT_ERR_FORMAT,
                               "%s and %s: empty corpus: all %zu pairs were skipped (%zu with more "
                               "than %d tokens on a side, %zu with an empty side)",
                               src_path, tgt_path, c->n_lines, c->skipped_long, o.max_len,
                               c->skipped_empty);
        goto fail;
    }
    if (s.counter && (rc = finish_vocab(&s, joint ? &t : NULL, &o, &sv)))
        goto fail;
    if (joint ? (rc = nmt_vocab_copy(&tv, sv)) != NMT_OK
              : t.counter && (rc = finish_vocab(&t, NULL, &o, &tv))) {
        nmt_vocab_free(sv);
        goto fail;
    }
    if (sv)
        *src_vocab = sv;
    if (tv)
        *tgt_vocab = tv;
    /* hand the arrays over to the corpus */
    c->src = s.ids;
    c->tgt = t.ids;
    c->src_off = s.off;
    c->tgt_off = t.off;
    c->src_word = s.words;
    c->tgt_word = t.words;
    s.ids = t.ids = NULL;
    s.words = t.words = NULL;
    s.off = t.off = NULL;
    close_side(&s);
    close_side(&t);
    nmt_pair_reader_close(&r);
    return NMT_OK;
fail:
    close_side(&s);
    close_side(&t);
    nmt_pair_reader_close(&r);
    nmt_corpus_free(c);
    return rc;
}

/* ---- learning a subword model from the files ---------------------------- */

/* Both files' lines, one after the other, as an nmt_line_source. */
typedef struct file_lines {
    const char *path[2];
    int at;             /* the file being read */
    nmt_reader *reader;
    int lowercase;
    char *lower;
    size_t lower_cap;
} file_lines;

static int next_file_line(void *ctx, const char **line, size_t *len)
{
    file_lines *f = ctx;
    while (f->at < 2) {
        int rc = f->reader ? NMT_OK : nmt_reader_open(&f->reader, f->path[f->at]);
        if (rc)
            return rc;
        rc = nmt_reader_next(f->reader, line, len);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            nmt_reader_close(f->reader);
            f->reader = NULL;
            f->at++;
            continue;
        }
        if (f->lowercase && nmt_lowercase_into(&f->lower, &f->lower_cap, line, len))
            return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
        return 1;
    }
    return 0;
}

int nmt_corpus_learn_subwords(nmt_subwords **out, const char *src_path, const char *tgt_path,
                              int n_pieces, int lowercase)
{
    file_lines f = {.path = {src_path, tgt_path}, .lowercase = lowercase};
    int rc = nmt_subwords_learn(out, n_pieces, next_file_line, &f);
    nmt_reader_close(f.reader);
    free(f.lower);
    return rc;
}

void nmt_corpus_free(nmt_corpus *c)
{
    free(c->src);
    free(c->tgt);
    free(c->src_off);
    free(c->tgt_off);
    free(c->src_word);
    free(c->tgt_word);
    free(c->line);
    memset(c, 0, sizeof *c);
}

void nmt_corpus_count_unk(const nmt_corpus *c, size_t unk[2], size_t total[2])
{
    unk[0] = unk[1] = 0;
    /* a streamed corpus's counts have no ids (nmt_train_run's train) */
    total[0] = c->n && c->src_off ? c->src_off[c->n] : 0;
    total[1] = c->n && c->tgt_off ? c->tgt_off[c->n] : 0;
    for (size_t i = 0; i < total[0]; i++)
        unk[0] += c->src[i] == NMT_UNK;
    for (size_t i = 0; i < total[1]; i++)
        unk[1] += c->tgt[i] == NMT_UNK;
}

int nmt_data_print_of(const char *path, nmt_data_print *out)
{
    memset(out, 0, sizeof *out);
    struct stat st;
    if (stat(path, &st) != 0)
        return nmt_set_error(NMT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    nmt_reader *r;
    int rc = nmt_reader_open(&r, path);
    if (rc)
        return rc;
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a 64 */
    const char *line;
    size_t len, n = 0;
    while (n < NMT_DATA_PRINT_LINES && (rc = nmt_reader_next(r, &line, &len)) == 1) {
        for (size_t i = 0; i <= len; i++) {
            h ^= i < len ? (unsigned char)line[i] : (unsigned char)'\n';
            h *= 0x100000001b3ULL;
        }
        n++;
    }
    nmt_reader_close(r);
    if (rc < 0)
        return rc;
    out->known = 1;
    out->bytes = (uint64_t)st.st_size;
    out->hash = h;
    return NMT_OK;
}
