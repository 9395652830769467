/* nmt serve's JSON (cmd_serve_json.h): requests through Jansson's parser,
 * checked strictly (an unknown field is refused, so that a typo such as
 * "nbest" is not silently ignored), and answers built as Jansson values. */
#include "serve/cmd_serve_json.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"
#include "nmt/units.h"

void serve_request_free(serve_request *r)
{
    for (size_t i = 0; r->text && i < r->n; i++)
        free(r->text[i]);
    for (size_t i = 0; r->prefix && i < r->n; i++)
        free(r->prefix[i]);
    free(r->text);
    free(r->prefix);
    memset(r, 0, sizeof *r);
}

/* Writes the refusal's message and returns its status. */
static int refuse(char *err, size_t size, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static int refuse(char *err, size_t size, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
    return status;
}

/* An optional whole number in [lo, hi] (a JSON integer: 5.0 is refused as
 * the command line refuses "5.0"). */
static int int_field(json_t *root, const char *key, int lo, int hi, int *out, char *err,
                     size_t size)
{
    json_t *v = json_object_get(root, key);
    if (!v)
        return 0;
    if (!json_is_integer(v))
        return refuse(err, size, 400, "\"%s\" must be a whole number", key);
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi)
        return refuse(err, size, 400, "\"%s\": %lld is out of range (%d to %d)", key,
                      (long long)x, lo, hi);
    *out = (int)x;
    return 0;
}

static int bool_field(json_t *root, const char *key, int *out, char *err, size_t size)
{
    json_t *v = json_object_get(root, key);
    if (!v)
        return 0;
    if (!json_is_boolean(v))
        return refuse(err, size, 400, "\"%s\" must be true or false", key);
    *out = json_is_true(v);
    return 0;
}

/* A copy of string v as one sentence or prefix, within the length limit. */
static int sentence(json_t *v, const char *what, size_t i, const serve_limits *lim, char **out,
                    char *err, size_t size)
{
    if (!json_is_string(v))
        return refuse(err, size, 400, "\"%s\"[%zu] must be a string", what, i);
    size_t len = json_string_length(v);
    if (len > (size_t)lim->max_sentence_bytes)
        return refuse(err, size, 413, "\"%s\"[%zu] has %zu bytes, more than the limit of %d", what,
                      i, len, lim->max_sentence_bytes);
    if (!(*out = strdup(json_string_value(v))))
        return refuse(err, size, 500, "out of memory");
    return 0;
}

static int parse_prefix(json_t *root, const serve_limits *lim, serve_request *r, char *err,
                        size_t size)
{
    json_t *p = json_object_get(root, "prefix");
    if (!p || json_is_null(p))
        return 0;
    if (!json_is_string(p) && !json_is_array(p))
        return refuse(err, size, 400,
                      "\"prefix\" must be a string (for every sentence) or an array with one "
                      "string or null per sentence");
    if (json_is_array(p) && json_array_size(p) != r->n)
        return refuse(err, size, 400, "\"prefix\" has %zu entries for %zu sentences",
                      json_array_size(p), r->n);
    if (!(r->prefix = calloc(r->n ? r->n : 1, sizeof *r->prefix)))
        return refuse(err, size, 500, "out of memory");
    for (size_t i = 0; i < r->n; i++) {
        json_t *v = json_is_array(p) ? json_array_get(p, i) : p;
        if (json_is_null(v))
            continue;
        int rc = sentence(v, "prefix", i, lim, &r->prefix[i], err, size);
        if (rc)
            return rc;
    }
    return 0;
}

static int parse_fields(json_t *root, const serve_limits *lim, const serve_models *models,
                        serve_request *r, char *err, size_t size)
{
    static const char *const known[] = {"text", "beam", "n_best", "alignments", "heads",
                                        "prefix"};
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v) {
        size_t k = 0;
        while (k < sizeof known / sizeof *known && strcmp(key, known[k]))
            k++;
        if (k == sizeof known / sizeof *known)
            return refuse(err, size, 400,
                          "unknown field \"%.40s\" (known: text, beam, n_best, alignments, "
                          "heads, prefix)", key);
    }
    json_t *text = json_object_get(root, "text");
    if (!text)
        return refuse(err, size, 400, "\"text\" is missing: an array of sentences");
    if (!json_is_array(text))
        return refuse(err, size, 400, "\"text\" must be an array of strings");
    r->n = json_array_size(text);
    if (r->n > (size_t)lim->max_sentences)
        return refuse(err, size, 413, "%zu sentences, more than the limit of %d per request",
                      r->n, lim->max_sentences);
    if (!(r->text = calloc(r->n ? r->n : 1, sizeof *r->text)))
        return refuse(err, size, 500, "out of memory");
    for (size_t i = 0; i < r->n; i++) {
        int rc = sentence(json_array_get(text, i), "text", i, lim, &r->text[i], err, size);
        if (rc)
            return rc;
    }
    int rc;
    r->beam = NMT_TRANSLATE_BEAM < lim->max_beam ? NMT_TRANSLATE_BEAM : lim->max_beam;
    r->n_best = 1;
    if ((rc = int_field(root, "beam", 1, lim->max_beam, &r->beam, err, size)) ||
        (rc = int_field(root, "n_best", 1, lim->max_beam, &r->n_best, err, size)) ||
        (rc = bool_field(root, "alignments", &r->alignments, err, size)) ||
        (rc = bool_field(root, "heads", &r->heads, err, size)))
        return rc;
    if (r->n_best > r->beam)
        return refuse(err, size, 400, "\"n_best\": %d is more than the beam (%d)", r->n_best,
                      r->beam);
    if (r->alignments && !models->has_attention)
        return refuse(err, size, 400, "\"alignments\": the model has no attention");
    if (r->heads && !r->alignments)
        return refuse(err, size, 400, "\"heads\" needs \"alignments\": true");
    if (r->heads && !models->layers)
        return refuse(err, size, 400,
                      "\"heads\": only a single Transformer has a map per layer and head");
    return parse_prefix(root, lim, r, err, size);
}

/* The units of a raw line as the model splits it (words or pieces), or -1
 * with the library's error. */
static long units_of(const nmt_model *m, const char *line, nmt_tokens *tok)
{
    return nmt_units_split(m, line, strlen(line), tok) ? -1 : (long)tok->n;
}

/* The most attention weights the answer to r can hold, worked out before
 * anything is decoded: for each sentence, its maps (the default one, and
 * with "heads" every layer's and head's), each of one column per source
 * unit and </s> and one row per target unit, which the search every
 * request gets stops at the length limit for that source
 * (nmt_decode_length_limit; a longer prefix lengthens it), with </s>. An
 * empty sentence is not decoded and has none. A double, which cannot
 * overflow; -1 with the library's error. */
static double attention_cells(const serve_request *r, const serve_models *models)
{
    nmt_translate_opts o;
    nmt_translate_opts_default(&o);
    double maps = 1 + (r->heads ? (double)models->layers * models->heads : 0), cells = 0;
    nmt_tokens tok = {0};
    for (size_t i = 0; i < r->n && cells >= 0; i++) {
        long n_src = units_of(models->m[0], r->text[i], &tok);
        long n_pre = n_src > 0 && r->prefix && r->prefix[i]
                         ? units_of(models->m[0], r->prefix[i], &tok) : 0;
        if (n_src < 0 || n_pre < 0)
            cells = -1;
        else if (n_src > 0) {
            long rows = nmt_decode_length_limit(&o.decode, (int)n_src + 1);
            rows = (rows > n_pre + 1 ? rows : n_pre + 1) + 1;
            cells += maps * (double)(n_src + 1) * (double)rows;
        }
    }
    nmt_tokens_free(&tok);
    return cells;
}

/* 413 when the answer to r could hold more attention than the limit: a
 * request of a few hundred bytes may otherwise ask for an answer of
 * megabytes (a long sentence that the model translates to the length
 * limit, with every head's map). */
static int check_attention(const serve_request *r, const serve_limits *lim,
                           const serve_models *models, char *err, size_t size)
{
    if (!r->alignments)
        return 0;
    double cells = attention_cells(r, models);
    if (cells < 0)
        return refuse(err, size, 500, "%s", nmt_error_message());
    if (cells > (double)lim->max_attention_cells)
        return refuse(err, size, 413,
                      "the alignments asked for could hold up to %.0f attention weights, more "
                      "than this server's limit of %ld (max_attention_cells in GET /info): ask "
                      "for fewer or shorter sentences%s",
                      cells, lim->max_attention_cells, r->heads ? ", or without \"heads\"" : "");
    return 0;
}

int serve_request_parse(const char *body, size_t len, const serve_limits *lim,
                        const serve_models *models, serve_request *r, char *err,
                        size_t err_size)
{
    memset(r, 0, sizeof *r);
    json_error_t je;
    /* duplicate keys are refused: which one would count is a guess */
    json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return refuse(err, err_size, 400, "malformed JSON at byte %d: %s", je.position, je.text);
    int rc = json_is_object(root)
                 ? parse_fields(root, lim, models, r, err, err_size)
                 : refuse(err, err_size, 400, "the body must be a JSON object");
    json_decref(root);
    if (!rc)
        rc = check_attention(r, lim, models, err, err_size);
    if (rc)
        serve_request_free(r);
    return rc;
}

/* A number, or null where it is not finite (JSON has no infinity). */
static json_t *real(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

static char *dump(json_t *v)
{
    char *s = v ? json_dumps(v, JSON_COMPACT | JSON_REAL_PRECISION(7))
                : NULL;
    json_decref(v);
    return s;
}

char *serve_error_json(int status, const char *msg)
{
    return dump(json_pack("{s:s, s:i}", "error", msg, "status", status));
}

static json_t *strings(char *const *s, int n)
{
    json_t *a = json_array();
    for (int i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_string(s[i])))
            return json_decref(a), NULL;
    return a;
}

/* A matrix [rows, cols] as an array of rows. */
static json_t *matrix(const float *w, int rows, int cols)
{
    json_t *a = json_array();
    for (int i = 0; a && i < rows; i++) {
        json_t *row = json_array();
        for (int j = 0; row && j < cols; j++)
            if (json_array_append_new(row, real(w[(size_t)i * cols + j])))
                row = (json_decref(row), NULL);
        if (!row || json_array_append_new(a, row))
            return json_decref(a), NULL;
    }
    return a;
}

/* Every layer's and head's map of one translation: layers x heads
 * matrices, [n_tgt, n_src] each. An empty sentence (not decoded, so
 * without maps) has as many empty ones, so that every sentence of an
 * answer has the same shape. */
static json_t *head_grid(const nmt_translated *t, const float *heads, const serve_models *models)
{
    size_t plane = (size_t)t->n_tgt * t->n_src;
    if (!heads && plane)
        return NULL;
    json_t *layers = json_array();
    for (int l = 0; layers && l < models->layers; l++) {
        json_t *hs = json_array();
        for (int h = 0; hs && h < models->heads; h++)
            if (json_array_append_new(
                    hs, matrix(plane ? heads + ((size_t)l * models->heads + h) * plane : NULL,
                               t->n_tgt, t->n_src)))
                hs = (json_decref(hs), NULL);
        if (!hs || json_array_append_new(layers, hs))
            layers = (json_decref(layers), NULL);
    }
    return layers;
}

/* heads: the maps of head_grid, or NULL without "heads": true */
static json_t *alignment(const nmt_translated *t, int with_heads, const float *heads,
                         const char *links, const serve_models *models)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    int bad = json_object_set_new(o, "source", strings(t->src, t->n_src)) ||
              json_object_set_new(o, "target", strings(t->tgt, t->n_tgt)) ||
              json_object_set_new(o, "attention", matrix(t->att, t->n_tgt, t->n_src)) ||
              (with_heads && json_object_set_new(o, "heads", head_grid(t, heads, models))) ||
              (links && json_object_set_new(o, "links", json_string(links)));
    return bad ? (json_decref(o), NULL) : o;
}

static json_t *translation(const serve_job *j, size_t i, const serve_models *models)
{
    const nmt_translated *t = &j->res[i];
    json_t *o = json_object(), *list = json_array();
    if (!o || !list)
        goto fail;
    for (int k = 0; k < t->n_hyp; k++)
        if (json_array_append_new(list, json_pack("{s:s, s:o, s:o}", "text", t->hyp[k].text,
                                                  "score", real(t->hyp[k].score), "norm_score",
                                                  real(t->hyp[k].norm_score))))
            goto fail;
    if (json_object_set_new(o, "text", json_string(t->hyp[0].text)) ||
        json_object_set_new(o, "score", real(t->hyp[0].score)) ||
        json_object_set_new(o, "norm_score", real(t->hyp[0].norm_score)) ||
        json_object_set_new(o, "n_best", list))
        goto fail_o;
    if (j->req.alignments &&
        json_object_set_new(o, "alignment",
                            alignment(t, j->req.heads, j->head_att ? j->head_att[i] : NULL,
                                      j->links ? j->links[i] : NULL, models)))
        goto fail_o;
    return o;
fail:
    json_decref(list);
fail_o:
    json_decref(o);
    return NULL;
}

char *serve_response_json(const serve_job *j, const serve_models *models)
{
    json_t *list = json_array();
    for (size_t i = 0; list && i < j->req.n; i++)
        if (json_array_append_new(list, translation(j, i, models)))
            list = (json_decref(list), NULL);
    if (!list)
        return NULL;
    return dump(json_pack("{s:o, s:i, s:i}", "translations", list, "beam", j->req.beam, "n_best",
                          j->req.n_best));
}

char *serve_info_json(const serve_models *models, const serve_limits *lim, int batch,
                      int workers)
{
    json_t *names = json_array();
    for (int k = 0; names && k < models->n; k++) {
        const char *path = models->names[k], *slash = strrchr(path, '/');
        /* the file's name only: where it lies on the server is none of a
         * client's business */
        if (json_array_append_new(names, json_pack("{s:s, s:s}", "name", slash ? slash + 1 : path,
                                                   "arch", nmt_arch_name(models->m[k]->cfg.arch))))
            names = (json_decref(names), NULL);
    }
    if (!names)
        return NULL;
    return dump(json_pack(
        "{s:o, s:b, s:i, s:i, s:{s:I, s:i, s:i, s:i, s:i, s:i, s:I}, s:i, s:i, s:i}", "models",
        names, "attention", models->has_attention, "layers", models->layers, "heads",
        models->heads, "limits", "max_body", (json_int_t)lim->max_body, "max_sentences",
        lim->max_sentences, "max_sentence_bytes", lim->max_sentence_bytes, "max_inflight",
        lim->max_inflight, "max_beam", lim->max_beam, "timeout", lim->timeout,
        "max_attention_cells", (json_int_t)lim->max_attention_cells, "default_beam",
        NMT_TRANSLATE_BEAM < lim->max_beam ? NMT_TRANSLATE_BEAM : lim->max_beam, "batch", batch,
        "workers", workers));
}
