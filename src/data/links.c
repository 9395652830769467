/* Word links for a corpus and the gold rows of a batch (nmt/links.h).
 *
 * The links file is read in step with the corpus's two files, so that each
 * line's links are checked against the words of its own pair before any
 * training: the words are counted on the raw lines (nmt_count_words), as
 * the links count them. The links are held whole (a few bytes a link), by
 * line, each line's sorted by target word so that the rows of a target
 * word's pieces are made from one run of them. */
#include "nmt/links.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nmt/error.h"
#include "nmt/text.h"

/* The most words a side of a line may have for a link to name. */
#define MAX_WORD (1 << 24)

typedef struct link {
    int32_t src, tgt;
} link;

static int by_target(const void *a, const void *b)
{
    const link *x = a, *y = b;
    if (x->tgt != y->tgt)
        return x->tgt < y->tgt ? -1 : 1;
    return (x->src > y->src) - (x->src < y->src);
}

/* A word index: digits without a sign or leading zero, below MAX_WORD. */
static int parse_index(const char *s, size_t n, int32_t *out)
{
    if (n == 0 || n > 8 || (n > 1 && s[0] == '0'))
        return -1;
    long v = 0;
    for (size_t k = 0; k < n; k++) {
        if (s[k] < '0' || s[k] > '9')
            return -1;
        v = v * 10 + (s[k] - '0');
    }
    if (v >= MAX_WORD)
        return -1;
    *out = (int32_t)v;
    return 0;
}

/* A growing array of links. */
typedef struct links_buf {
    link *at;
    size_t n, cap;
} links_buf;

static int push(links_buf *b, link x)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 1024;
        link *grown = realloc(b->at, cap * sizeof *grown);
        if (!grown)
            return nmt_set_error(NMT_ERR_NOMEM, "out of memory for %zu word links", cap);
        b->at = grown;
        b->cap = cap;
    }
    b->at[b->n++] = x;
    return NMT_OK;
}

/* One line's links, appended to b (sorted, each once), checked against its
 * pair's ns source and nt target words. */
static int parse_line(links_buf *b, size_t *possible, const char *line, size_t len,
                      const char *path, size_t lineno, size_t ns, size_t nt)
{
    size_t first = b->n;
    for (size_t i = 0; i < len;) {
        if (line[i] == ' ' || line[i] == '\t') {
            i++;
            continue;
        }
        size_t end = i;
        while (end < len && line[end] != ' ' && line[end] != '\t')
            end++;
        const char *tok = line + i;
        size_t n = end - i, sep = strcspn(tok, "-?");
        link x;
        if (sep >= n || parse_index(tok, sep, &x.src) ||
            parse_index(tok + sep + 1, n - sep - 1, &x.tgt))
            return nmt_set_error(NMT_ERR_FORMAT, "%s:%zu: '%.*s' is not a word link (i-j: "
                                 "source word i, target word j, from 0; or i?j)", path, lineno,
                                 (int)(n > 60 ? 60 : n), tok);
        if ((size_t)x.src >= ns || (size_t)x.tgt >= nt)
            return nmt_set_error(NMT_ERR_FORMAT, "%s:%zu: link '%.*s' is outside its pair: the "
                                 "source line has %zu words and the target line %zu (words "
                                 "from 0, as the lines' spaces separate them)", path, lineno,
                                 (int)n, tok, ns, nt);
        *possible += tok[sep] == '?';
        int rc = push(b, x);
        if (rc)
            return rc;
        i = end;
    }
    link *at = b->at + first;
    size_t n = b->n - first, kept = 0;
    if (n)
        qsort(at, n, sizeof *at, by_target);
    for (size_t k = 0; k < n; k++)
        if (kept == 0 || by_target(&at[kept - 1], &at[k]))
            at[kept++] = at[k];
    b->n = first + kept;
    return NMT_OK;
}

/* The three files read line by line in step. */
typedef struct three {
    const char *path[3];   /* links, source, target */
    nmt_reader *r[3];
} three;

static void three_close(three *t)
{
    for (int k = 0; k < 3; k++)
        nmt_reader_close(t->r[k]);
}

/* The next line of each (1), the end of all three (0), or a refusal: one
 * file ends before another, or a reader's error. */
static int three_next(three *t, const char *line[3], size_t len[3])
{
    int got[3];
    for (int k = 0; k < 3; k++) {
        got[k] = nmt_reader_next(t->r[k], &line[k], &len[k]);
        if (got[k] < 0)
            return got[k];
    }
    if (got[0] == got[1] && got[1] == got[2])
        return got[0];
    int ended = !got[0] ? 0 : !got[1] ? 1 : 2, goes = got[0] ? 0 : got[1] ? 1 : 2;
    return nmt_set_error(NMT_ERR_FORMAT, "%s:%zu: %s ended after line %zu but this file goes "
                         "on: the links need one line for every line of the corpus",
                         t->path[goes], nmt_reader_lineno(t->r[goes]), t->path[ended],
                         nmt_reader_lineno(t->r[ended]));
}

static uint64_t fnv_line(uint64_t h, const char *line, size_t len)
{
    for (size_t i = 0; i <= len; i++) {
        h ^= i < len ? (unsigned char)line[i] : (unsigned char)'\n';
        h *= 0x100000001b3ULL;
    }
    return h;
}

int nmt_links_read(nmt_links *l, const char *path, const char *src_path, const char *tgt_path)
{
    memset(l, 0, sizeof *l);
    struct stat st;
    if (stat(path, &st) != 0)
        return nmt_set_error(NMT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    three t = {.path = {path, src_path, tgt_path}};
    links_buf b = {0};
    size_t cap = 0;
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a 64 */
    int rc = NMT_OK;
    for (int k = 0; k < 3 && !rc; k++)
        rc = nmt_reader_open(&t.r[k], t.path[k]);
    for (;;) {
        const char *line[3];
        size_t len[3];
        int got = rc ? rc : three_next(&t, line, len);
        if (got <= 0) {
            rc = got;
            break;
        }
        if (l->n_lines + 2 > cap) {
            size_t nc = cap ? 2 * cap : 4096;
            size_t *off = realloc(l->off, nc * sizeof *off);
            if (!off) {
                rc = nmt_set_error(NMT_ERR_NOMEM, "out of memory for the links of %zu lines", nc);
                break;
            }
            l->off = off;
            cap = nc;
        }
        l->off[l->n_lines] = b.n;
        h = fnv_line(h, line[0], len[0]);
        rc = parse_line(&b, &l->possible, line[0], len[0], path, l->n_lines + 1,
                        nmt_count_words(line[1], len[1]), nmt_count_words(line[2], len[2]));
        if (rc)
            break;
        l->empty += b.n == l->off[l->n_lines];
        l->n_lines++;
    }
    three_close(&t);
    if (!rc && l->n_lines == 0)
        rc = nmt_set_error(NMT_ERR_FORMAT, "%s: no lines (the corpus %s has none either)", path,
                           src_path);
    if (!rc) {
        l->off[l->n_lines] = b.n;
        l->src = malloc((b.n ? b.n : 1) * sizeof *l->src);
        l->tgt = malloc((b.n ? b.n : 1) * sizeof *l->tgt);
        if (!l->src || !l->tgt)
            rc = nmt_set_error(NMT_ERR_NOMEM, "out of memory for %zu word links", b.n);
        for (size_t k = 0; !rc && k < b.n; k++) {
            l->src[k] = b.at[k].src;
            l->tgt[k] = b.at[k].tgt;
        }
        l->bytes = (uint64_t)st.st_size;
        l->hash = h;
    }
    free(b.at);
    if (rc)
        nmt_links_free(l);
    return rc;
}

void nmt_links_free(nmt_links *l)
{
    free(l->off);
    free(l->src);
    free(l->tgt);
    memset(l, 0, sizeof *l);
}

/* ---- a batch's gold rows ---------------------------------------------------- */

/* Pair k's rows: for each target piece, the source pieces whose words are
 * linked to its word, uniform. mark [ns]: scratch. */
static long pair_rows(float *rows, int src_T, const int32_t *sw, int ns, const int32_t *tw,
                      int m, const int32_t *ls, const int32_t *lt, size_t nl, int shift,
                      unsigned char *mark)
{
    long made = 0;
    for (int q = 0; q < m; q++) {
        if (tw[q] < 0)
            continue;
        /* the run of links of the piece's word (sorted by target word) */
        size_t lo = 0, hi = nl;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (lt[mid] < tw[q])
                lo = mid + 1;
            else
                hi = mid;
        }
        size_t end = lo;
        while (end < nl && lt[end] == tw[q])
            end++;
        if (end == lo)
            continue;
        int count = 0;
        for (int j = 0; j < ns; j++) {
            mark[j] = 0;
            for (size_t k = lo; k < end && sw[j] >= 0; k++)
                if (ls[k] == sw[j]) {
                    mark[j] = 1;
                    break;
                }
            count += mark[j];
        }
        if (count == 0)
            continue;
        float *row = rows + (size_t)(q + shift) * src_T, p = 1.0f / (float)count;
        for (int j = 0; j < ns; j++)
            row[j] = mark[j] ? p : 0;
        made++;
    }
    return made;
}

long nmt_links_guide(nmt_batch *b, const nmt_corpus *c, const nmt_links *l, int shift)
{
    b->guide = NULL;
    if (!c->src_word || !c->tgt_word)
        return nmt_set_error(NMT_ERR_ARG, "guided alignment needs the corpus's words "
                             "(nmt_corpus_opts.words)");
    size_t need = (size_t)b->cap_B * b->cap_src_T * b->cap_tgt_T;
    if (need > b->guide_cap) {
        float *grown = realloc(b->guide_buf, need * sizeof *grown);
        if (!grown)
            return nmt_set_error(NMT_ERR_NOMEM, "out of memory for a batch's gold rows");
        b->guide_buf = grown;
        b->guide_cap = need;
    }
    unsigned char *mark = malloc((size_t)b->src_T);
    if (!mark)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for a batch's gold rows");
    size_t per = (size_t)b->tgt_T * b->src_T;
    memset(b->guide_buf, 0, (size_t)b->B * per * sizeof *b->guide_buf);
    long made = 0;
    shift = shift != 0;
    for (int k = 0; k < b->B; k++) {
        size_t p = b->pair[k], line = c->line[p] - 1;
        if (line >= l->n_lines) {
            free(mark);
            return nmt_set_error(NMT_ERR_ARG, "line %zu of the corpus has no links (the links "
                                 "have %zu lines)", line + 1, l->n_lines);
        }
        size_t at = l->off[line];
        made += pair_rows(b->guide_buf + k * per, b->src_T, c->src_word + c->src_off[p],
                          b->src_len[k] - 1, c->tgt_word + c->tgt_off[p], b->tgt_len[k] - 1,
                          l->src + at, l->tgt + at, l->off[line + 1] - at, shift, mark);
    }
    free(mark);
    b->guide = b->guide_buf;
    return made;
}
