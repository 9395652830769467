/* nmt serve: the types its parts share. The server is five files of one
 * idea each: cmd_serve.c (the command: options, models, signals),
 * cmd_serve_socket.c (the address listened on, bound before the models
 * load), cmd_serve_http.c (libmicrohttpd: routes, limits, statuses),
 * cmd_serve_json.c (requests in, responses out, with Jansson) and
 * cmd_serve_queue.c (the worker threads that decode the waiting sentences
 * together). The parts include this header and not the command's file,
 * which includes theirs: no part depends back on what uses it
 * (tests/module_cycles.py). serve_request_free is cmd_serve_json.c's, which
 * makes requests. */
#ifndef NMT_CLI_SERVE_TYPES_H
#define NMT_CLI_SERVE_TYPES_H

#include <stddef.h>

#include "nmt/model.h"
#include "nmt/translator.h"

/* What one request may ask for; past them the server answers 413 (sizes,
 * the attention an answer could hold) or 400 (values), and 429 past
 * max_inflight requests being translated. */
typedef struct serve_limits {
    size_t max_body;        /* bytes of a request body */
    int max_sentences;      /* sentences per request */
    int max_sentence_bytes; /* bytes of one sentence (and of one prefix) */
    int max_inflight;       /* requests accepted and not yet answered */
    int max_beam;           /* beam and n_best at most this */
    int timeout;            /* seconds a connection may stay idle */
    long max_attention_cells; /* attention weights an answer may hold at most (413) */
} serve_limits;

/* The models being served, read-only once loaded and shared by every
 * worker thread. */
typedef struct serve_models {
    const nmt_model *const *m;
    const char *const *names; /* as given to -m */
    int n;
    /* the attention grid of a lone Transformer (per-head maps); 0 and 0
     * for an RNN or an ensemble, whose one map is the default one */
    int layers, heads;
    int has_attention; /* every member has attention */
} serve_models;

/* One request, parsed. */
typedef struct serve_request {
    size_t n;          /* sentences */
    char **text;       /* [n] */
    char **prefix;     /* [n], NULL entries for none; NULL for no prefix at all */
    int beam, n_best;
    int alignments;    /* 1: the best hypothesis's attention */
    int heads;         /* 1: also every layer's and head's (a lone Transformer) */
} serve_request;

void serve_request_free(serve_request *r);

/* A request's work and results: filled by the queue, answered by the HTTP
 * side through done(). */
typedef struct serve_job {
    serve_request req;
    nmt_translated *res; /* [req.n] */
    float **head_att;    /* [req.n] with req.heads: [layers, heads, n_tgt, n_src] each */
    char **links;        /* [req.n] with req.alignments and a lone model: the best
                          * translation's word links, a Pharaoh line, made as nmt
                          * align --tgt makes them (nmt_aligner_pair) */
    size_t left;         /* sentences not yet translated (under the queue's lock) */
    int status;          /* 0, or the HTTP status of a failure */
    char error[256];     /* its message */
    void (*done)(struct serve_job *j, void *ctx); /* called once, by a worker */
    void *ctx;
    struct serve_item *items; /* the queue's: one per sentence */
} serve_job;

#endif
