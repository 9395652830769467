/* Checkpoint metadata, written and read back (train/ckpt_meta.h). */
#include "train/ckpt_meta.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"

void nmt_ckpt_put(nmt_ckpt_writer *w, const char *key, const char *fmt, ...)
{
    if (w->n >= w->max || w->used >= w->cap) {
        w->overflow = 1;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(w->buf + w->used, w->cap - w->used, fmt, ap);
    va_end(ap);
    if (len < 0 || (size_t)len >= w->cap - w->used) {
        w->overflow = 1;
        return;
    }
    w->meta[w->n].key = key;
    w->meta[w->n].value = w->buf + w->used;
    w->n++;
    w->used += (size_t)len + 1;
}

const char *nmt_ckpt_get(nmt_ckpt_reader *r, const char *key)
{
    const char *v = nmt_file_meta(r->f, key);
    if (!v && r->rc == NMT_OK)
        r->rc = nmt_set_error(NMT_ERR_FORMAT, "checkpoint has no '%s': not a resumable "
                              "checkpoint of nmt train", key);
    return v;
}

int nmt_ckpt_has(const nmt_ckpt_reader *r, const char *key)
{
    return nmt_file_meta(r->f, key) != NULL;
}

void nmt_ckpt_bad(nmt_ckpt_reader *r, const char *key, const char *v)
{
    if (r->rc == NMT_OK)
        r->rc = nmt_set_error(NMT_ERR_FORMAT, "checkpoint: bad value '%s' for '%s'", v, key);
}

int64_t nmt_ckpt_get_i64(nmt_ckpt_reader *r, const char *key, int64_t min, int64_t max)
{
    const char *v = nmt_ckpt_get(r, key);
    if (!v)
        return 0;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (!*v || *end || errno || x < min || x > max) {
        nmt_ckpt_bad(r, key, v);
        return 0;
    }
    return (int64_t)x;
}

int nmt_ckpt_get_int(nmt_ckpt_reader *r, const char *key, int min, int max)
{
    return (int)nmt_ckpt_get_i64(r, key, min, max);
}

double nmt_ckpt_get_double(nmt_ckpt_reader *r, const char *key, int allow_inf)
{
    const char *v = nmt_ckpt_get(r, key);
    if (!v)
        return 0;
    char *end;
    double x = strtod(v, &end);
    if (!*v || *end || isnan(x) || (!allow_inf && isinf(x))) {
        nmt_ckpt_bad(r, key, v);
        return 0;
    }
    return x;
}

double nmt_ckpt_get_double_in(nmt_ckpt_reader *r, const char *key, double min, double max)
{
    double x = nmt_ckpt_get_double(r, key, 0);
    if (r->rc == NMT_OK && !(x >= min && x < max))
        nmt_ckpt_bad(r, key, nmt_ckpt_get(r, key));
    return x;
}

uint64_t nmt_ckpt_get_u64(nmt_ckpt_reader *r, const char *key)
{
    const char *v = nmt_ckpt_get(r, key);
    if (!v)
        return 0;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (!*v || *end || errno || *v == '-') {
        nmt_ckpt_bad(r, key, v);
        return 0;
    }
    return (uint64_t)x;
}

uint64_t nmt_ckpt_get_hex64(nmt_ckpt_reader *r, const char *key)
{
    const char *v = nmt_ckpt_get(r, key);
    if (!v)
        return 0;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 16);
    size_t digits = strspn(v, "0123456789abcdefABCDEF");
    if (digits != 16 || v[digits] || *end || errno) {
        nmt_ckpt_bad(r, key, v);
        return 0;
    }
    return (uint64_t)x;
}

const char *nmt_ckpt_get_path(nmt_ckpt_reader *r, const char *key)
{
    const char *v = nmt_ckpt_get(r, key);
    return v && *v ? v : NULL;
}
