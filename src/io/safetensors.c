/* The safetensors container: the checks that make a header trustworthy (its
 * JSON is parsed by json.c), reading, and atomic writing. See safetensors.h
 * for the layout and the rules. */
#include "io/safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/json.h"
#include "nmt/atomic_file.h"
#include "nmt/error.h"

/* ---- header meaning ------------------------------------------------------- */

static int cmp_str_ptr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_tensor_begin(const void *a, const void *b)
{
    const st_tensor *x = *(const st_tensor *const *)a, *y = *(const st_tensor *const *)b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* Sorted names must differ from their neighbours. */
static int check_unique(char **names, size_t n, const char *name, const char *what)
{
    qsort(names, n, sizeof *names, cmp_str_ptr);
    for (size_t k = 1; k < n; k++)
        if (!strcmp(names[k - 1], names[k]))
            return nmt_set_error(NMT_ERR_FORMAT, "%s: %s '%s' appears twice in the header", name,
                                 what, names[k]);
    return NMT_OK;
}

static const jval *member(const jval *obj, const char *key)
{
    for (size_t k = 0; k < obj->n; k++)
        if (!strcmp(obj->members[k].key, key))
            return &obj->members[k].val;
    return NULL;
}

static int tensor_from_json(st_tensor *t, const jval *v, size_t data_size, const char *name)
{
    if (v->type != J_OBJ)
        return nmt_set_error(NMT_ERR_FORMAT, "%s: tensor '%s' is not a JSON object", name, t->name);
    int seen[3] = {0, 0, 0};
    static const char *const fields[3] = {"dtype", "shape", "data_offsets"};
    for (size_t k = 0; k < v->n; k++) {
        const char *key = v->members[k].key;
        int f = 0;
        while (f < 3 && strcmp(key, fields[f]))
            f++;
        if (f == 3)
            return nmt_set_error(NMT_ERR_FORMAT, "%s: tensor '%s' has an unknown field '%s'",
                                 name, t->name, key);
        if (seen[f]++)
            return nmt_set_error(NMT_ERR_FORMAT, "%s: tensor '%s' has '%s' twice", name, t->name, key);
    }
    const jval *dtype = member(v, "dtype"), *shape = member(v, "shape"),
               *offs = member(v, "data_offsets");
    if (!dtype || !shape || !offs)
        return nmt_set_error(NMT_ERR_FORMAT, "%s: tensor '%s' lacks '%s'", name, t->name,
                             !dtype ? "dtype" : !shape ? "shape" : "data_offsets");
    if (dtype->type != J_STR)
        return nmt_set_error(NMT_ERR_FORMAT, "%s: tensor '%s': dtype is not a string", name, t->name);
    if (!strcmp(dtype->s, "F32"))
        t->dtype = ST_F32;
    else if (!strcmp(dtype->s, "U8"))
        t->dtype = ST_U8;
    else
        return nmt_set_error(NMT_ERR_FORMAT,
                             "%s: tensor '%s' has dtype '%s'; only F32 (and U8) are supported",
                             name, t->name, dtype->s);
    if (shape->type != J_ARR || shape->n > ST_MAX_NDIM)
        return nmt_set_error(NMT_ERR_FORMAT, "%s: tensor '%s': shape must be a list of at most %d sizes",
                             name, t->name, ST_MAX_NDIM);
    /* bytes = element size * prod(shape), in uint64 with an overflow check
     * per factor */
    uint64_t bytes = t->dtype == ST_F32 ? 4 : 1;
    t->ndim = (int)shape->n;
    for (size_t k = 0; k < shape->n; k++) {
        const jval *d = &shape->items[k];
        if (d->type != J_INT || d->i < 0)
            return nmt_set_error(NMT_ERR_FORMAT, "%s: tensor '%s': shape holds something other than a size",
                                 name, t->name);
        t->shape[k] = d->i;
        if (d->i && bytes > UINT64_MAX / (uint64_t)d->i)
            return nmt_set_error(NMT_ERR_FORMAT, "%s: tensor '%s': shape is absurdly large", name, t->name);
        bytes *= (uint64_t)d->i;
    }
    if (offs->type != J_ARR || offs->n != 2 || offs->items[0].type != J_INT ||
        offs->items[1].type != J_INT)
        return nmt_set_error(NMT_ERR_FORMAT, "%s: tensor '%s': data_offsets must be [begin, end]",
                             name, t->name);
    int64_t b = offs->items[0].i, e = offs->items[1].i;
    if (b < 0 || e < b || (uint64_t)e > data_size)
        return nmt_set_error(NMT_ERR_FORMAT,
                             "%s: tensor '%s': data_offsets [%lld, %lld] lie outside the data section "
                             "(%zu bytes)", name, t->name, (long long)b, (long long)e, data_size);
    t->begin = (size_t)b;
    t->end = (size_t)e;
    t->held = 1;
    if ((uint64_t)(e - b) != bytes) {
        char dims[ST_MAX_NDIM * 22 + 4] = "";
        size_t o = 0;
        for (int k = 0; k < t->ndim; k++)
            o += (size_t)snprintf(dims + o, sizeof dims - o, "%s%lld", k ? ", " : "",
                                  (long long)t->shape[k]);
        return nmt_set_error(NMT_ERR_FORMAT,
                             "%s: tensor '%s': data_offsets [%lld, %lld] hold %lld bytes but shape [%s] "
                             "needs %llu", name, t->name, (long long)b, (long long)e,
                             (long long)(e - b), dims, (unsigned long long)bytes);
    }
    return NMT_OK;
}

/* The tensors must tile [0, data_size): sorted by offset, each begins where
 * the previous ended. Overlaps and gaps both mean a corrupt or foreign file. */
static int check_tiling(const st_file *f, const char *name)
{
    if (f->n_tensors == 0) {
        if (f->data_size)
            return nmt_set_error(NMT_ERR_FORMAT, "%s: %zu bytes of data but no tensors", name,
                                 f->data_size);
        return NMT_OK;
    }
    const st_tensor **order = malloc((size_t)f->n_tensors * sizeof *order);
    if (!order)
        return nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory", name);
    for (int k = 0; k < f->n_tensors; k++)
        order[k] = &f->tensors[k];
    qsort(order, (size_t)f->n_tensors, sizeof *order, cmp_tensor_begin);
    int rc = NMT_OK;
    size_t pos = 0;
    for (int k = 0; k < f->n_tensors && !rc; k++) {
        if (order[k]->dtype == ST_F32 && order[k]->begin % 4)
            rc = nmt_set_error(NMT_ERR_FORMAT,
                               "%s: F32 tensor '%s' begins at byte %zu of the data section, not at a "
                               "multiple of 4 (byte tensors go after the floats)", name,
                               order[k]->name, order[k]->begin);
        else if (order[k]->begin < pos)
            rc = nmt_set_error(NMT_ERR_FORMAT, "%s: tensors '%s' and '%s' overlap in the data section",
                               name, order[k - 1]->name, order[k]->name);
        else if (order[k]->begin > pos)
            rc = nmt_set_error(NMT_ERR_FORMAT, "%s: bytes %zu to %zu of the data section belong to no tensor",
                               name, pos, order[k]->begin);
        pos = order[k]->end;
    }
    if (!rc && pos != f->data_size)
        rc = nmt_set_error(NMT_ERR_FORMAT, "%s: bytes %zu to %zu of the data section belong to no tensor",
                           name, pos, f->data_size);
    free(order);
    return rc;
}

/* Turns the parsed header into tensors and metadata; takes the strings out
 * of the JSON tree (so that nmt_jval_free does not free them). */
static int header_from_json(st_file *f, jval *root, const char *name)
{
    if (root->type != J_OBJ)
        return nmt_set_error(NMT_ERR_FORMAT, "%s: malformed header: not a JSON object", name);
    char **names = malloc((root->n ? root->n : 1) * sizeof *names);
    if (!names)
        return nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory", name);
    for (size_t k = 0; k < root->n; k++)
        names[k] = root->members[k].key;
    int rc = check_unique(names, root->n, name, "key");
    free(names);
    if (rc)
        return rc;

    size_t n_tensors = 0;
    const jval *meta = NULL;
    for (size_t k = 0; k < root->n; k++) {
        if (!strcmp(root->members[k].key, "__metadata__"))
            meta = &root->members[k].val;
        else
            n_tensors++;
    }
    if (meta) {
        if (meta->type != J_OBJ)
            return nmt_set_error(NMT_ERR_FORMAT, "%s: __metadata__ is not a JSON object", name);
        char **keys = malloc((meta->n ? meta->n : 1) * sizeof *keys);
        if (!keys)
            return nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory", name);
        for (size_t k = 0; k < meta->n; k++)
            keys[k] = meta->members[k].key;
        rc = check_unique(keys, meta->n, name, "metadata key");
        free(keys);
        if (rc)
            return rc;
        f->meta = calloc(meta->n ? meta->n : 1, sizeof *f->meta);
        if (!f->meta)
            return nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory", name);
        for (size_t k = 0; k < meta->n; k++) {
            jmember *m = &meta->members[k];
            if (m->val.type != J_STR)
                return nmt_set_error(NMT_ERR_FORMAT, "%s: metadata value of '%s' is not a string",
                                     name, m->key);
            f->meta[k].key = m->key;
            f->meta[k].value = m->val.s;
            m->key = m->val.s = NULL;
            f->n_meta++;
        }
    }
    f->tensors = calloc(n_tensors ? n_tensors : 1, sizeof *f->tensors);
    if (!f->tensors)
        return nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory", name);
    for (size_t k = 0; k < root->n; k++) {
        jmember *m = &root->members[k];
        if (!m->key) /* __metadata__, already taken */
            continue;
        if (!strcmp(m->key, "__metadata__"))
            continue;
        st_tensor *t = &f->tensors[f->n_tensors++];
        t->name = m->key;
        m->key = NULL;
        if ((rc = tensor_from_json(t, &m->val, f->data_size, name)))
            return rc;
    }
    return check_tiling(f, name);
}

/* ---- reading -------------------------------------------------------------- */

static uint64_t le64(const unsigned char *b)
{
    uint64_t v = 0;
    for (int k = 7; k >= 0; k--)
        v = (v << 8) | b[k];
    return v;
}

static int host_is_little_endian(void)
{
    const uint32_t one = 1;
    return *(const unsigned char *)&one == 1;
}

static void swap_floats(unsigned char *d, size_t n)
{
    for (size_t k = 0; k + 4 <= n; k += 4) {
        unsigned char t = d[k];
        d[k] = d[k + 3];
        d[k + 3] = t;
        t = d[k + 1];
        d[k + 1] = d[k + 2];
        d[k + 2] = t;
    }
}

/* The data section is stored little-endian; on a big-endian host swap each
 * float of the held F32 tensors in place so that callers see host floats. */
static void data_to_host(const st_file *f)
{
    if (host_is_little_endian())
        return;
    for (int t = 0; t < f->n_tensors; t++) {
        const st_tensor *x = &f->tensors[t];
        if (x->held && x->dtype == ST_F32)
            swap_floats(f->data + x->begin, x->end - x->begin);
    }
}

/* The 8-byte prefix against the file's size, before anything is allocated. */
static int check_prefix(st_file *f, const unsigned char prefix[8], uint64_t size, const char *name)
{
    f->file_size = size;
    if (size < 8)
        return nmt_set_error(NMT_ERR_FORMAT,
                             "%s: truncated: %llu bytes, too short for a safetensors file", name,
                             (unsigned long long)size);
    uint64_t n = le64(prefix);
    if (n > ST_MAX_HEADER)
        return nmt_set_error(NMT_ERR_FORMAT,
                             "%s: header length %llu is absurd (at most %u): not a safetensors file",
                             name, (unsigned long long)n, ST_MAX_HEADER);
    if (n > size - 8)
        return nmt_set_error(NMT_ERR_FORMAT,
                             "%s: header length %llu is beyond the end of the file (%llu bytes): "
                             "truncated or not a safetensors file", name, (unsigned long long)n,
                             (unsigned long long)size);
    if (size - 8 - n > SIZE_MAX)
        return nmt_set_error(NMT_ERR_NOMEM, "%s: too large for this machine", name);
    f->header_len = (size_t)n;
    f->data_size = (size_t)(size - 8 - n);
    return NMT_OK;
}

static int parse_header(st_file *f, const unsigned char *json, const char *name)
{
    jval root;
    int rc = nmt_json_parse(&root, json, f->header_len, name);
    if (!rc)
        rc = header_from_json(f, &root, name);
    nmt_jval_free(&root);
    return rc;
}

int nmt_st_parse(st_file *f, const unsigned char *buf, size_t size, const char *name)
{
    memset(f, 0, sizeof *f);
    int rc = check_prefix(f, buf, size, name);
    if (!rc)
        rc = parse_header(f, buf + 8, name);
    if (!rc) {
        f->data = malloc(f->data_size ? f->data_size : 1);
        if (!f->data)
            rc = nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory for %zu bytes of data", name,
                               f->data_size);
        else {
            memcpy(f->data, buf + 8 + f->header_len, f->data_size);
            f->held_size = f->data_size;
            f->data_crc = nmt_st_crc32(0, f->data, f->data_size);
            data_to_host(f);
        }
    }
    if (rc)
        nmt_st_free(f);
    return rc;
}

static int read_exact(FILE *fp, void *buf, size_t n, const char *path)
{
    if (n && fread(buf, 1, n, fp) != n) {
        if (ferror(fp))
            return nmt_set_error(NMT_ERR_IO, "%s: read error: %s", path, strerror(errno));
        return nmt_set_error(NMT_ERR_FORMAT, "%s: truncated (the file shrank while being read)", path);
    }
    return NMT_OK;
}

/* The data section from fp, holding the tensors that keep accepts (all when
 * keep is NULL): read in pieces, each added to the CRC and its overlap with
 * every held tensor copied out, so that only the held bytes are ever in
 * memory. The tensors tile the section (check_tiling), so each held byte is
 * copied once. */
static int read_data(st_file *f, FILE *fp, const char *path,
                     int (*keep)(const char *name, void *ctx), void *ctx)
{
    /* where each held tensor goes in data, in header order, F32 ones at
     * multiples of 4 */
    size_t *at = malloc((f->n_tensors ? f->n_tensors : 1) * sizeof *at);
    if (!at)
        return nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory for reading", path);
    size_t held = 0;
    int all = 1;
    for (int k = 0; k < f->n_tensors; k++) {
        st_tensor *t = &f->tensors[k];
        t->held = !keep || keep(t->name, ctx);
        all &= t->held;
        if (t->held && t->dtype == ST_F32)
            held = (held + 3) & ~(size_t)3;
        at[k] = held;
        held += t->held ? t->end - t->begin : 0;
    }
    if (all)
        held = f->data_size;
    f->held_size = held;
    if (!(f->data = malloc(held ? held : 1))) {
        free(at);
        return nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory for %zu bytes of data", path, held);
    }
    if (all) { /* everything: straight in, as laid out in the file */
        free(at);
        int rc = read_exact(fp, f->data, f->data_size, path);
        if (!rc)
            f->data_crc = nmt_st_crc32(0, f->data, f->data_size);
        return rc;
    }
    enum { PIECE = 1 << 20 };
    unsigned char *piece = malloc(PIECE);
    int rc = piece ? NMT_OK : nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory for reading", path);
    if (!rc)
        memset(f->data, 0, held); /* the padding, if any */
    uint32_t crc = 0;
    for (size_t p0 = 0; !rc && p0 < f->data_size; p0 += PIECE) {
        size_t n = f->data_size - p0 < PIECE ? f->data_size - p0 : PIECE;
        if ((rc = read_exact(fp, piece, n, path)))
            break;
        crc = nmt_st_crc32(crc, piece, n);
        for (int k = 0; k < f->n_tensors; k++) {
            const st_tensor *t = &f->tensors[k];
            size_t lo = t->begin > p0 ? t->begin : p0, hi = t->end < p0 + n ? t->end : p0 + n;
            if (t->held && lo < hi)
                memcpy(f->data + at[k] + (lo - t->begin), piece + (lo - p0), hi - lo);
        }
    }
    if (!rc) {
        f->data_crc = crc;
        for (int k = 0; k < f->n_tensors; k++) {
            st_tensor *t = &f->tensors[k];
            size_t size = t->end - t->begin;
            t->begin = t->held ? at[k] : 0;
            t->end = t->held ? at[k] + size : 0;
        }
    }
    free(piece);
    free(at);
    return rc;
}

int nmt_st_read(st_file *f, const char *path)
{
    return nmt_st_read_some(f, path, NULL, NULL);
}

int nmt_st_read_some(st_file *f, const char *path, int (*keep)(const char *name, void *ctx),
                 void *ctx)
{
    memset(f, 0, sizeof *f);
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return nmt_set_error(NMT_ERR_IO, "%s: %s", path, strerror(errno));
    struct stat sb;
    int rc = NMT_OK;
    unsigned char prefix[8] = {0};
    unsigned char *json = NULL;
    if (fstat(fileno(fp), &sb))
        rc = nmt_set_error(NMT_ERR_IO, "%s: %s", path, strerror(errno));
    else if (S_ISDIR(sb.st_mode))
        rc = nmt_set_error(NMT_ERR_IO, "%s: is a directory, not a model file", path);
    else if (!S_ISREG(sb.st_mode))
        rc = nmt_set_error(NMT_ERR_IO, "%s: not a regular file", path);
    if (!rc && sb.st_size >= 8)
        rc = read_exact(fp, prefix, 8, path);
    if (!rc)
        rc = check_prefix(f, prefix, (uint64_t)sb.st_size, path);
    if (!rc && !(json = malloc(f->header_len)))
        rc = nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory for the header", path);
    if (!rc)
        rc = read_exact(fp, json, f->header_len, path);
    if (!rc)
        rc = parse_header(f, json, path);
    free(json);
    /* only now, with every tensor known to lie inside the file, the data */
    if (!rc)
        rc = read_data(f, fp, path, keep, ctx);
    if (!rc)
        data_to_host(f);
    fclose(fp);
    if (rc)
        nmt_st_free(f);
    return rc;
}

void nmt_st_free(st_file *f)
{
    for (int k = 0; k < f->n_tensors; k++)
        free(f->tensors[k].name);
    for (int k = 0; k < f->n_meta; k++) {
        free(f->meta[k].key);
        free(f->meta[k].value);
    }
    free(f->tensors);
    free(f->meta);
    free(f->data);
    memset(f, 0, sizeof *f);
}

const st_tensor *nmt_st_find(const st_file *f, const char *name)
{
    for (int k = 0; k < f->n_tensors; k++)
        if (f->tensors[k].held && !strcmp(f->tensors[k].name, name))
            return &f->tensors[k];
    return NULL;
}

const char *nmt_st_meta(const st_file *f, const char *key)
{
    for (int k = 0; k < f->n_meta; k++)
        if (!strcmp(f->meta[k].key, key))
            return f->meta[k].value;
    return NULL;
}

uint32_t nmt_st_crc32(uint32_t crc, const void *data, size_t n)
{
    const unsigned char *p = data;
    uLong c = crc;
    while (n) {
        uInt chunk = n > (1u << 30) ? (1u << 30) : (uInt)n;
        c = crc32(c, p, chunk);
        p += chunk;
        n -= chunk;
    }
    return (uint32_t)c;
}

/* ---- writing -------------------------------------------------------------- */

/* A growing text buffer for the header. */
typedef struct sbuf {
    char *s;
    size_t n, cap;
    int failed;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->failed = 1;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

static void sb_str(sbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

/* A JSON string literal: quote, backslash and the controls escaped; every
 * other byte (UTF-8 included) as is, which JSON allows. */
static void sb_json_string(sbuf *b, const char *s)
{
    sb_add(b, "\"", 1);
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        char esc[8];
        switch (c) {
        case '"': sb_add(b, "\\\"", 2); break;
        case '\\': sb_add(b, "\\\\", 2); break;
        case '\n': sb_add(b, "\\n", 2); break;
        case '\r': sb_add(b, "\\r", 2); break;
        case '\t': sb_add(b, "\\t", 2); break;
        case '\b': sb_add(b, "\\b", 2); break;
        case '\f': sb_add(b, "\\f", 2); break;
        default:
            if (c < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", c);
                sb_add(b, esc, 6);
            } else {
                sb_add(b, p, 1);
            }
        }
    }
    sb_add(b, "\"", 1);
}

char *nmt_st_json_quote(const char *s)
{
    sbuf b = {0};
    sb_json_string(&b, s);
    if (b.failed) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

static size_t tensor_count(const nmt_named_tensor *t)
{
    size_t n = 1;
    for (int k = 0; k < t->ndim; k++)
        n *= (size_t)t->shape[k];
    return n;
}

static int has_negative_size(const nmt_named_tensor *t)
{
    for (int k = 0; k < t->ndim; k++)
        if (t->shape[k] < 0)
            return 1;
    return 0;
}

/* Its bytes in the data section. */
static size_t tensor_bytes(const nmt_named_tensor *t)
{
    return (t->bytes ? 1 : 4) * tensor_count(t);
}

static int write_all(int fd, const void *buf, size_t n)
{
    const unsigned char *p = buf;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (w == 0) {
            errno = ENOSPC;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Writes n host floats little-endian (through a small buffer on big-endian
 * hosts) unless fd < 0, and folds the same bytes into *crc if crc is given. */
static int write_floats(int fd, const float *x, size_t n, uint32_t *crc)
{
    if (host_is_little_endian()) {
        if (crc)
            *crc = nmt_st_crc32(*crc, x, n * 4);
        return fd < 0 ? 0 : write_all(fd, x, n * 4);
    }
    unsigned char buf[4096];
    while (n) {
        size_t m = n > sizeof buf / 4 ? sizeof buf / 4 : n;
        for (size_t k = 0; k < m; k++) {
            uint32_t u;
            memcpy(&u, &x[k], 4);
            for (int j = 0; j < 4; j++)
                buf[4 * k + (size_t)j] = (unsigned char)(u >> (8 * j));
        }
        if (crc)
            *crc = nmt_st_crc32(*crc, buf, m * 4);
        if (fd >= 0 && write_all(fd, buf, m * 4))
            return -1;
        x += m;
        n -= m;
    }
    return 0;
}

/* Writes a tensor's bytes as write_floats does (U8 ones as they are). */
static int write_tensor(int fd, const nmt_named_tensor *t, uint32_t *crc)
{
    if (!t->bytes)
        return write_floats(fd, t->data, tensor_count(t), crc);
    size_t n = tensor_count(t);
    if (crc)
        *crc = nmt_st_crc32(*crc, t->bytes, n);
    return fd < 0 ? 0 : write_all(fd, t->bytes, n);
}

static int check_write_args(const char *path, const nmt_named_tensor *t, int n, const nmt_meta *meta,
                            int n_meta, const char *crc_key)
{
    if (n < 0 || n_meta < 0)
        return nmt_set_error(NMT_ERR_ARG, "%s: negative tensor or metadata count", path);
    char **names = malloc((size_t)(n + n_meta + 2) * sizeof *names);
    if (!names)
        return nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory", path);
    int rc = NMT_OK;
    size_t offset = 0;
    for (int k = 0; k < n && !rc; k++) {
        if (!t[k].name || !*t[k].name || !strcmp(t[k].name, "__metadata__"))
            rc = nmt_set_error(NMT_ERR_ARG, "%s: tensor %d has no usable name", path, k);
        else if (t[k].ndim < 0 || t[k].ndim > NMT_MAX_NDIM)
            rc = nmt_set_error(NMT_ERR_ARG, "%s: tensor '%s' has %d dimensions (0 to %d allowed)",
                               path, t[k].name, t[k].ndim, NMT_MAX_NDIM);
        else if (has_negative_size(&t[k]))
            rc = nmt_set_error(NMT_ERR_ARG, "%s: tensor '%s' has a negative size", path, t[k].name);
        else if (!t[k].data && !t[k].bytes && tensor_count(&t[k]))
            rc = nmt_set_error(NMT_ERR_ARG, "%s: tensor '%s' has no data", path, t[k].name);
        else if (t[k].bytes && t[k].ndim != 1)
            rc = nmt_set_error(NMT_ERR_ARG, "%s: byte tensor '%s' must have one dimension", path,
                               t[k].name);
        else if (!t[k].bytes && offset % 4)
            rc = nmt_set_error(NMT_ERR_ARG, "%s: float tensor '%s' after byte tensors would be "
                               "unaligned: write byte tensors last", path, t[k].name);
        names[k] = (char *)t[k].name;
        offset += rc ? 0 : tensor_bytes(&t[k]);
    }
    if (!rc)
        rc = check_unique(names, (size_t)n, path, "tensor") ? NMT_ERR_ARG : NMT_OK;
    int nk = 0;
    for (int k = 0; k < n_meta && !rc; k++) {
        if (!meta[k].key || !meta[k].value)
            rc = nmt_set_error(NMT_ERR_ARG, "%s: metadata entry %d lacks a key or value", path, k);
        names[nk++] = (char *)meta[k].key;
    }
    if (!rc && crc_key)
        names[nk++] = (char *)crc_key;
    if (!rc)
        rc = check_unique(names, (size_t)nk, path, "metadata key") ? NMT_ERR_ARG : NMT_OK;
    free(names);
    return rc;
}

/* The JSON header, padded with spaces so that the data starts at a multiple
 * of 8 bytes from the file's start (floats stay aligned when mapped). */
static int build_header(sbuf *h, const nmt_named_tensor *t, int n, const nmt_meta *meta, int n_meta,
                        const char *crc_key, uint32_t crc)
{
    char num[96];
    sb_str(h, "{");
    if (n_meta || crc_key) {
        sb_str(h, "\"__metadata__\":{");
        for (int k = 0; k < n_meta; k++) {
            if (k)
                sb_str(h, ",");
            sb_json_string(h, meta[k].key);
            sb_str(h, ":");
            sb_json_string(h, meta[k].value);
        }
        if (crc_key) {
            if (n_meta)
                sb_str(h, ",");
            sb_json_string(h, crc_key);
            snprintf(num, sizeof num, ":\"%08lx\"", (unsigned long)crc);
            sb_str(h, num);
        }
        sb_str(h, "}");
    }
    size_t off = 0;
    for (int k = 0; k < n; k++) {
        if (k || n_meta || crc_key)
            sb_str(h, ",");
        sb_json_string(h, t[k].name);
        sb_str(h, t[k].bytes ? ":{\"dtype\":\"U8\",\"shape\":[" : ":{\"dtype\":\"F32\",\"shape\":[");
        for (int d = 0; d < t[k].ndim; d++) {
            snprintf(num, sizeof num, "%s%d", d ? "," : "", t[k].shape[d]);
            sb_str(h, num);
        }
        size_t bytes = tensor_bytes(&t[k]);
        snprintf(num, sizeof num, "],\"data_offsets\":[%zu,%zu]}", off, off + bytes);
        sb_str(h, num);
        off += bytes;
    }
    sb_str(h, "}");
    while (!h->failed && h->n % 8)
        sb_str(h, " ");
    return h->failed ? NMT_ERR_NOMEM : NMT_OK;
}

int nmt_st_write(const char *path, const nmt_named_tensor *t, int n, const nmt_meta *meta, int n_meta,
             const char *crc_key)
{
    int rc = check_write_args(path, t, n, meta, n_meta, crc_key);
    if (rc)
        return rc;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (!*base)
        return nmt_set_error(NMT_ERR_ARG, "%s: a model file needs a file name, not a folder", path);

    uint32_t crc = 0;
    for (int k = 0; k < n; k++)
        write_tensor(-1, &t[k], &crc);
    sbuf h = {0};
    if (build_header(&h, t, n, meta, n_meta, crc_key, crc)) {
        free(h.s);
        return nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory for the header", path);
    }

    unsigned char prefix[8];
    for (int k = 0; k < 8; k++)
        prefix[k] = (unsigned char)((uint64_t)h.n >> (8 * k));

    /* whole or not at all (nmt/atomic_file.h); a symbolic link at path is
     * replaced itself */
    nmt_atomic_file out;
    rc = nmt_atomic_open(&out, path, NULL, 0);
    if (rc) {
        free(h.s);
        return rc;
    }
    /* written with write(2) past the stream, whose buffer stays empty */
    int fd = fileno(out.f);
    int ok = !write_all(fd, prefix, 8) && !write_all(fd, h.s, h.n);
    for (int k = 0; ok && k < n; k++)
        ok = !write_tensor(fd, &t[k], NULL);
    if (ok) {
        rc = nmt_atomic_commit(&out);
    } else {
        rc = nmt_set_error(NMT_ERR_IO, "%s: write failed: %s", path, strerror(errno));
        nmt_atomic_abort(&out);
    }
    free(h.s);
    return rc;
}
