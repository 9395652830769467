/* Checkpoint averaging (include/nmt/average.h): files are read one at a
 * time, their weights added into one sum in double, and everything else that
 * makes a model what it is compared with the first file, generically, so
 * that settings added later (a "tied" flag, a "subwords" tensor) are covered
 * without this file knowing them. */
#include "nmt/average.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"
#include "nmt/modelfile.h"
#include "io/safetensors.h"

/* ---- what a file is besides its weights -------------------------------------- */

static int is_weight(const nmt_model *m, const char *name)
{
    return nmt_model_tensor(m, name) != NULL;
}

/* An optimizer's state of a weight: a prefix, a dot, the weight's name
 * ("adam.m.src_emb", "adadelta.sq_avg.out.W"). */
static int is_moment(const nmt_model *m, const char *name)
{
    size_t len = strlen(name);
    for (int k = 0; k < m->n_tensors; k++) {
        size_t wl = strlen(m->tensors[k].name);
        if (len > wl + 1 && name[len - wl - 1] == '.' && !strcmp(name + len - wl, m->tensors[k].name))
            return 1;
    }
    return 0;
}

/* nmt_st_read_some's filter: hold the tensors that must be equal in every file. */
static int keep_identity(const char *name, void *ctx)
{
    const nmt_model *m = ctx;
    return !is_weight(m, name) && !is_moment(m, name);
}

/* Keys of the design's metadata have no dot; a checkpoint's or a run's own
 * (train.*, state.*, best.*, snapshot.*) do, and crc32 differs with the
 * weights. */
static int defines_model(const char *key)
{
    return !strchr(key, '.') && strcmp(key, "crc32") != 0;
}

/* docs/DESIGN.md: an absent flag means "false". */
static int same_value(const char *a, const char *b)
{
    if (!a || !b)
        return !strcmp(a ? a : "false", b ? b : "false");
    return !strcmp(a, b);
}

/* v quoted and cut to fit a message; absent values read "absent". */
static void quoted(char *buf, size_t cap, const char *v)
{
    if (!v) {
        snprintf(buf, cap, "absent");
        return;
    }
    size_t n = strcspn(v, "\n");
    if (n > 40)
        snprintf(buf, cap, "'%.37s...'", v);
    else
        snprintf(buf, cap, "'%.*s'", (int)n, v);
}

static size_t count_newlines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Newline-joined lists (the vocabularies): the first entry that differs, or
 * the lengths when one list goes on past the other. */
static void describe_lists(char *buf, size_t cap, const char *a, const char *b)
{
    for (size_t i = 0;; i++) {
        size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
        if (la != lb || strncmp(a, b, la)) {
            snprintf(buf, cap, "entry %zu is '%.*s' and '%.*s'", i, la > 40 ? 40 : (int)la, a,
                     lb > 40 ? 40 : (int)lb, b);
            return;
        }
        if (!a[la] || !b[lb]) {
            snprintf(buf, cap, "%zu and %zu entries", i + 1 + count_newlines(a + la),
                     i + 1 + count_newlines(b + lb));
            return;
        }
        a += la + 1;
        b += lb + 1;
    }
}

static int refuse(const char *pa, const char *pb, const char *what)
{
    return nmt_set_error(NMT_ERR_ARG, "%s and %s differ in %s: only files of one model (the same "
                         "architecture, vocabularies and settings) can be averaged", pa, pb, what);
}

static int compare_meta(const st_file *a, const st_file *b, const char *pa, const char *pb)
{
    for (int pass = 0; pass < 2; pass++) {
        const st_file *x = pass ? b : a;
        for (int k = 0; k < x->n_meta; k++) {
            const char *key = x->meta[k].key;
            if (!defines_model(key))
                continue;
            const char *va = nmt_st_meta(a, key), *vb = nmt_st_meta(b, key);
            if (same_value(va, vb))
                continue;
            char what[256], qa[64], qb[64];
            if (va && vb && (strchr(va, '\n') || strchr(vb, '\n'))) {
                char how[160];
                describe_lists(how, sizeof how, va, vb);
                snprintf(what, sizeof what, "'%s' (%s)", key, how);
            } else {
                quoted(qa, sizeof qa, va);
                quoted(qb, sizeof qb, vb);
                snprintf(what, sizeof what, "'%s' (%s and %s)", key, qa, qb);
            }
            return refuse(pa, pb, what);
        }
    }
    return NMT_OK;
}

static int same_shape(const st_tensor *x, const st_tensor *y)
{
    if (x->ndim != y->ndim)
        return 0;
    for (int d = 0; d < x->ndim; d++)
        if (x->shape[d] != y->shape[d])
            return 0;
    return 1;
}

static int compare_tensors(const st_file *a, const st_file *b, const char *pa, const char *pb)
{
    char what[256];
    for (int pass = 0; pass < 2; pass++) {
        const st_file *x = pass ? b : a, *y = pass ? a : b;
        for (int k = 0; k < x->n_tensors; k++) {
            const st_tensor *tx = &x->tensors[k];
            if (!tx->held)
                continue;
            const st_tensor *ty = nmt_st_find(y, tx->name);
            if (!ty) {
                snprintf(what, sizeof what, "tensor '%.100s' (only %s has it)", tx->name,
                         pass ? "the second" : "the first");
                return refuse(pa, pb, what);
            }
            if (pass)
                continue; /* compared in the first pass */
            if (!same_shape(tx, ty)) {
                snprintf(what, sizeof what, "the shape of tensor '%.100s'", tx->name);
                return refuse(pa, pb, what);
            }
            if (tx->end - tx->begin != ty->end - ty->begin ||
                memcmp(x->data + tx->begin, y->data + ty->begin, tx->end - tx->begin)) {
                snprintf(what, sizeof what, "the contents of tensor '%.100s'", tx->name);
                return refuse(pa, pb, what);
            }
        }
    }
    return NMT_OK;
}

/* ---- the mean ----------------------------------------------------------------- */

/* Adds m's weights into sum; refuses a weight that is not finite (a mean
 * with it would be NaN or Inf everywhere it is). */
static int add_weights(double *sum, const nmt_model *m, const char *path)
{
    for (int k = 0; k < m->n_tensors; k++) {
        const nmt_tensor_info *ti = &m->tensors[k];
        const nmt_real *p = m->params + ti->offset;
        for (size_t j = 0; j < ti->size; j++) {
            if (!isfinite(p[j]))
                return nmt_set_error(NMT_ERR_NUMERIC, "%s: tensor '%s' holds NaN or Inf (at "
                                     "%zu): it cannot be averaged", path, ti->name, j);
            sum[ti->offset + j] += (double)p[j];
        }
    }
    return NMT_OK;
}

/* The weights' layout must match too (the metadata implies it; this guards
 * the sum). */
static int same_layout(const nmt_model *a, const nmt_model *b, const char *pa, const char *pb)
{
    int same = a->n_tensors == b->n_tensors && a->n_params == b->n_params;
    for (int k = 0; same && k < a->n_tensors; k++)
        same = !strcmp(a->tensors[k].name, b->tensors[k].name) &&
               a->tensors[k].offset == b->tensors[k].offset &&
               a->tensors[k].size == b->tensors[k].size;
    return same ? NMT_OK : refuse(pa, pb, "their tensors' names or shapes");
}

int nmt_average_models(nmt_model **out, const char *const *paths, int n)
{
    *out = NULL;
    if (n < 1 || !paths)
        return nmt_set_error(NMT_ERR_ARG, "no model files to average");
    nmt_model *first = NULL;
    st_file first_id, id;
    memset(&first_id, 0, sizeof first_id);
    memset(&id, 0, sizeof id);
    double *sum = NULL;
    int rc = NMT_OK;
    for (int i = 0; i < n && rc == NMT_OK; i++) {
        nmt_model *m = NULL;
        /* the model (every check of a load, its weights only), then the
         * same file's metadata and other tensors */
        rc = nmt_model_load(&m, paths[i], NULL);
        if (!rc)
            rc = nmt_st_read_some(i ? &id : &first_id, paths[i], keep_identity, m);
        if (!rc && i == 0) {
            first = m;
            m = NULL;
            sum = calloc(first->n_params ? first->n_params : 1, sizeof *sum);
            if (!sum)
                rc = nmt_set_error(NMT_ERR_NOMEM, "out of memory for the sum of %zu weights",
                                   first->n_params);
        } else if (!rc) {
            if (!(rc = compare_meta(&first_id, &id, paths[0], paths[i])) &&
                !(rc = compare_tensors(&first_id, &id, paths[0], paths[i])))
                rc = same_layout(first, m, paths[0], paths[i]);
        }
        if (!rc)
            rc = add_weights(sum, m ? m : first, paths[i]);
        nmt_model_free(m);
        nmt_st_free(&id);
    }
    if (!rc)
        for (size_t j = 0; j < first->n_params; j++)
            first->params[j] = (nmt_real)(sum[j] / n);
    free(sum);
    nmt_st_free(&first_id);
    if (rc) {
        nmt_model_free(first);
        return rc;
    }
    *out = first;
    return NMT_OK;
}
