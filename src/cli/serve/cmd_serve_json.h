/* nmt serve's JSON: the request body checked field by field into a
 * serve_request, and the answers (translations, errors, the server's
 * description) written as JSON text. Jansson parses; it also refuses
 * invalid UTF-8 and NUL characters in strings, so every string that gets
 * past serve_request_parse is valid UTF-8. */
#ifndef NMT_CLI_SERVE_JSON_H
#define NMT_CLI_SERVE_JSON_H

#include "serve/cmd_serve_types.h"

/* Parses body[len] into r. 0, or the HTTP status of the refusal (400 for
 * malformed JSON, wrong types and values out of range, 413 for too many
 * sentences, a sentence too long, or alignments that could hold more than
 * lim->max_attention_cells weights) with its message in err. r is freed
 * on a refusal. */
int serve_request_parse(const char *body, size_t len, const serve_limits *lim,
                        const serve_models *models, serve_request *r, char *err,
                        size_t err_size);

/* {"error": msg, "status": status} (malloc'ed, NULL when out of memory). */
char *serve_error_json(int status, const char *msg);

/* The answer to a finished job (malloc'ed, NULL when out of memory). */
char *serve_response_json(const serve_job *j, const serve_models *models);

/* GET /info: the models, their attention grid and the limits. */
char *serve_info_json(const serve_models *models, const serve_limits *lim, int batch,
                      int workers);

#endif
