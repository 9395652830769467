/* Reading text line by line from plain or gzip files, checking each line.
 *
 * The reader keeps one growable buffer of decoded bytes. A line is returned
 * in place (its '\n' overwritten by NUL), so the common case copies nothing;
 * a line that does not fit grows the buffer, so any length works. Gzip is
 * inflated by hand with zlib rather than gzread so that a truncated file (end
 * of input before the end of the stream) is an error, not a short file.
 * The tokenizer and detokenizer are in token.c. */
#include "nmt/text.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "nmt/error.h"
#include "nmt/utf8.h"

enum { IN_CHUNK = 1 << 18, BUF_START = 1 << 18 };
/* A longer line is refused rather than grown without bound. */
#define MAX_LINE ((size_t)1 << 30)

struct nmt_reader {
    char *path;          /* as given; "<stdin>" for "-" */
    int fd, own_fd;
    int gz;
    z_stream zs;
    int zs_live;         /* inflateInit2 succeeded */
    int member_done;     /* inflate reached the end of a gzip member */
    unsigned char *in;   /* [IN_CHUNK] compressed input */
    int src_eof;         /* the file has no more bytes */
    char *buf;           /* [cap] decoded bytes; [start, end) not yet returned */
    size_t cap, start, end, scan; /* scan: no '\n' in [start, scan) */
    int data_eof;        /* no more decoded bytes */
    size_t lineno;
    int err;             /* sticky: once an error, always that error */
};

static int read_some(nmt_reader *r, void *dst, size_t n, size_t *got)
{
    ssize_t k;
    *got = 0;
    do
        k = read(r->fd, dst, n);
    while (k < 0 && errno == EINTR);
    if (k < 0)
        return nmt_set_error(NMT_ERR_IO, "%s: read error: %s", r->path, strerror(errno));
    *got = (size_t)k;
    return NMT_OK;
}

/* Moves unconsumed input to the front and reads more after it. */
static int refill_input(nmt_reader *r)
{
    size_t keep = r->zs.avail_in, got;
    if (keep && r->zs.next_in != r->in)
        memmove(r->in, r->zs.next_in, keep);
    int rc = read_some(r, r->in + keep, IN_CHUNK - keep, &got);
    if (rc)
        return rc;
    if (!got)
        r->src_eof = 1;
    r->zs.next_in = r->in;
    r->zs.avail_in = (uInt)(keep + got);
    return NMT_OK;
}

/* Inflates into buf[end .. cap-1); returns the bytes produced (0 only at the
 * end of the data) or a negative code. A file may hold several gzip members
 * back to back (as gzip itself allows); anything else after a member is an
 * error, as is an end of file inside one. */
static long fill_gzip(nmt_reader *r)
{
    for (;;) {
        if (r->member_done) {
            if (r->zs.avail_in < 2 && !r->src_eof) {
                int rc = refill_input(r);
                if (rc)
                    return rc;
                continue;
            }
            if (r->zs.avail_in == 0) {
                r->data_eof = 1;
                return 0;
            }
            if (r->zs.avail_in < 2 || r->zs.next_in[0] != 0x1f || r->zs.next_in[1] != 0x8b)
                return nmt_set_error(NMT_ERR_FORMAT, "%s:%zu: corrupt gzip file (trailing garbage after the data)",
                                     r->path, r->lineno + 1);
            inflateReset(&r->zs);
            r->member_done = 0;
        }
        if (r->zs.avail_in == 0 && !r->src_eof) {
            int rc = refill_input(r);
            if (rc)
                return rc;
        }
        size_t room = r->cap - 1 - r->end;
        if (room > UINT32_MAX)
            room = UINT32_MAX;
        r->zs.next_out = (unsigned char *)r->buf + r->end;
        r->zs.avail_out = (uInt)room;
        int z = inflate(&r->zs, Z_NO_FLUSH);
        size_t made = room - r->zs.avail_out;
        r->end += made;
        switch (z) {
        case Z_STREAM_END:
            r->member_done = 1;
            break;
        case Z_OK:
            break;
        case Z_BUF_ERROR: /* no progress: out of input */
            if (r->zs.avail_in == 0 && r->src_eof)
                return nmt_set_error(NMT_ERR_FORMAT, "%s:%zu: truncated gzip file (it ends inside the compressed data)",
                                     r->path, r->lineno + 1);
            break;
        case Z_MEM_ERROR:
            return nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory inflating", r->path);
        default: /* Z_DATA_ERROR, Z_NEED_DICT, Z_STREAM_ERROR */
            return nmt_set_error(NMT_ERR_FORMAT, "%s:%zu: corrupt gzip data (%s)", r->path,
                                 r->lineno + 1, r->zs.msg ? r->zs.msg : "bad stream");
        }
        if (made)
            return (long)made;
    }
}

static long fill_plain(nmt_reader *r)
{
    size_t got;
    int rc = read_some(r, r->buf + r->end, r->cap - 1 - r->end, &got);
    if (rc)
        return rc;
    if (!got)
        r->data_eof = 1;
    r->end += got;
    return (long)got;
}

/* Makes room after the pending bytes (moving them to the front, growing the
 * buffer if the line fills it) and decodes more into it. One byte is always
 * kept free past `end` for the NUL of a last line without '\n'. */
static int fill(nmt_reader *r)
{
    if (r->start) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->end -= r->start;
        r->scan -= r->start;
        r->start = 0;
    }
    if (r->end + 1 >= r->cap) {
        if (r->cap >= MAX_LINE)
            return nmt_set_error(NMT_ERR_FORMAT, "%s:%zu: line longer than %zu bytes", r->path,
                                 r->lineno + 1, MAX_LINE);
        char *b = realloc(r->buf, 2 * r->cap);
        if (!b)
            return nmt_set_error(NMT_ERR_NOMEM, "%s:%zu: out of memory for a long line", r->path,
                                 r->lineno + 1);
        r->buf = b;
        r->cap *= 2;
    }
    long got = r->gz ? fill_gzip(r) : fill_plain(r);
    return got < 0 ? (int)got : NMT_OK;
}

int nmt_reader_open(nmt_reader **out, const char *path)
{
    *out = NULL;
    int is_stdin = !strcmp(path, "-");
    nmt_reader *r = calloc(1, sizeof *r);
    if (!r)
        return nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory", path);
    r->fd = -1;
    r->path = strdup(is_stdin ? "<stdin>" : path);
    r->cap = BUF_START;
    r->buf = malloc(r->cap);
    r->in = malloc(IN_CHUNK);
    int rc = NMT_ERR_NOMEM;
    if (!r->path || !r->buf || !r->in) {
        nmt_set_error(rc, "%s: out of memory", path);
        goto fail;
    }
    if (is_stdin) {
        r->fd = STDIN_FILENO;
    } else {
        r->fd = open(path, O_RDONLY);
        if (r->fd < 0) {
            rc = nmt_set_error(NMT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
            goto fail;
        }
        r->own_fd = 1;
    }
    struct stat st;
    if (fstat(r->fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        rc = nmt_set_error(NMT_ERR_IO, "%s: is a directory, not a file", r->path);
        goto fail;
    }

    /* Peek at the first two bytes for the gzip magic. */
    size_t have = 0, got;
    do {
        if ((rc = read_some(r, r->in + have, IN_CHUNK - have, &got)))
            goto fail;
        have += got;
    } while (got && have < 2);
    if (!got)
        r->src_eof = 1;
    if (have >= 2 && r->in[0] == 0x1f && r->in[1] == 0x8b) {
        r->gz = 1;
        /* 15 + 16: a gzip wrapper only, with the largest window. */
        if (inflateInit2(&r->zs, 15 + 16) != Z_OK) {
            rc = nmt_set_error(NMT_ERR_NOMEM, "%s: cannot start zlib", r->path);
            goto fail;
        }
        r->zs_live = 1;
        r->zs.next_in = r->in;
        r->zs.avail_in = (uInt)have;
    } else {
        memcpy(r->buf, r->in, have);
        r->end = have;
        if (r->src_eof)
            r->data_eof = 1;
    }
    *out = r;
    return NMT_OK;
fail:
    nmt_reader_close(r);
    return rc;
}

/* Before blaming a line's bytes, reads the rest of a gzip stream: corrupt
 * compressed data usually shows first as garbage bytes, and the real cause
 * (bad data, a failed CRC) is the more useful message. */
static int gzip_error_behind(nmt_reader *r)
{
    if (!r->gz)
        return NMT_OK;
    while (!r->data_eof) {
        r->start = r->end = r->scan = 0;
        int rc = fill(r);
        if (rc)
            return rc;
    }
    return NMT_OK;
}

static int check_line(nmt_reader *r, const char *line, size_t len)
{
    const char *nul = memchr(line, '\0', len);
    size_t bad = nmt_utf8_invalid_at((const unsigned char *)line, nul ? (size_t)(nul - line) : len);
    if (!nul && bad == len)
        return NMT_OK;
    char msg[160];
    if (bad < (nul ? (size_t)(nul - line) : len))
        snprintf(msg, sizeof msg, "%s:%zu: invalid UTF-8 (byte 0x%02x at column %zu)", r->path,
                 r->lineno, (unsigned char)line[bad], bad + 1);
    else
        snprintf(msg, sizeof msg, "%s:%zu: NUL byte at column %zu", r->path, r->lineno,
                 (size_t)(nul - line) + 1);
    int rc = gzip_error_behind(r);
    if (rc)
        return rc;
    return nmt_set_error(NMT_ERR_FORMAT, "%s", msg);
}

int nmt_reader_next(nmt_reader *r, const char **line, size_t *len)
{
    *line = NULL;
    *len = 0;
    if (r->err)
        return r->err;
    char *s, *nl;
    size_t n;
    for (;;) {
        nl = memchr(r->buf + r->scan, '\n', r->end - r->scan);
        if (nl) {
            s = r->buf + r->start;
            n = (size_t)(nl - s);
            r->start = r->scan = (size_t)(nl - r->buf) + 1;
            break;
        }
        r->scan = r->end;
        if (r->data_eof) {
            if (r->start == r->end)
                return 0;
            s = r->buf + r->start; /* a last line without '\n' */
            n = r->end - r->start;
            r->start = r->scan = r->end;
            break;
        }
        int rc = fill(r);
        if (rc)
            return r->err = rc;
    }
    r->lineno++;
    if (n && s[n - 1] == '\r')
        n--;
    s[n] = '\0';
    /* A UTF-8 byte order mark is not part of the text. */
    if (r->lineno == 1 && n >= 3 && !memcmp(s, "\xef\xbb\xbf", 3)) {
        s += 3;
        n -= 3;
    }
    int rc = check_line(r, s, n);
    if (rc)
        return r->err = rc;
    *line = s;
    *len = n;
    return 1;
}

size_t nmt_reader_lineno(const nmt_reader *r)
{
    return r->lineno;
}

const char *nmt_reader_path(const nmt_reader *r)
{
    return r->path;
}

void nmt_reader_close(nmt_reader *r)
{
    if (!r)
        return;
    if (r->zs_live)
        inflateEnd(&r->zs);
    if (r->own_fd && r->fd >= 0)
        close(r->fd);
    free(r->path);
    free(r->buf);
    free(r->in);
    free(r);
}

/* ---- whole files as lines ---------------------------------------------------- */

void nmt_free_lines(char **lines, size_t n)
{
    if (!lines)
        return;
    for (size_t i = 0; i < n; i++)
        free(lines[i]);
    free(lines);
}

int nmt_read_lines(const char *path, char ***lines_out, size_t *n_out)
{
    *lines_out = NULL;
    *n_out = 0;
    nmt_reader *r;
    int rc = nmt_reader_open(&r, path);
    if (rc)
        return rc;
    char **lines = NULL;
    size_t n = 0, cap = 0;
    const char *line;
    size_t len;
    while ((rc = nmt_reader_next(r, &line, &len)) == 1) {
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            char **grown = realloc(lines, cap * sizeof *lines);
            if (!grown) {
                rc = NMT_ERR_NOMEM;
                break;
            }
            lines = grown;
        }
        lines[n] = malloc(len + 1);
        if (!lines[n]) {
            rc = NMT_ERR_NOMEM;
            break;
        }
        memcpy(lines[n], line, len + 1);
        n++;
    }
    nmt_reader_close(r);
    if (rc < 0) {
        nmt_free_lines(lines, n);
        if (rc == NMT_ERR_NOMEM)
            return nmt_set_error(rc, "%s: out of memory reading its lines", path);
        return rc;
    }
    *lines_out = lines;
    *n_out = n;
    return NMT_OK;
}
