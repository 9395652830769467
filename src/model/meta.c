/* Reading settings from a model file's metadata (model/arch.h): the
 * helpers every architecture and io/modelfile.c share, so that each
 * refusal reads alike: "PATH: KEY is 'VALUE' (expected ...)". */
#include <string.h>

#include "model/arch.h"
#include "nmt/error.h"

const char *nmt_meta_need(const meta_source *src, const char *key)
{
    const char *v = src->get(src->ctx, key);
    if (!v)
        nmt_set_error(NMT_ERR_FORMAT, "%s: the metadata lacks '%s'", src->path, key);
    return v;
}

int nmt_meta_bool(const meta_source *src, const char *key, int *out)
{
    const char *v = nmt_meta_need(src, key);
    if (!v)
        return NMT_ERR_FORMAT;
    if (!strcmp(v, "true") || !strcmp(v, "false")) {
        *out = !strcmp(v, "true");
        return NMT_OK;
    }
    return nmt_set_error(NMT_ERR_FORMAT, "%s: %s is '%s' (expected true or false)", src->path, key,
                         v);
}

int nmt_meta_size(const meta_source *src, const char *key, int min, int max, int *out)
{
    const char *v = nmt_meta_need(src, key);
    if (!v)
        return NMT_ERR_FORMAT;
    long x = 0;
    size_t n = strlen(v);
    int ok = n > 0 && n <= 7 && !(n > 1 && v[0] == '0');
    for (size_t k = 0; ok && k < n; k++) {
        ok = v[k] >= '0' && v[k] <= '9';
        x = x * 10 + (v[k] - '0');
    }
    if (!ok || x < min || x > max)
        return nmt_set_error(NMT_ERR_FORMAT, "%s: %s is '%s' (expected a whole number from %d to %d)",
                             src->path, key, v, min, max);
    *out = (int)x;
    return NMT_OK;
}
