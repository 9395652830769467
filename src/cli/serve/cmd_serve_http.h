/* nmt serve's HTTP side, on libmicrohttpd: the routes (GET / the page,
 * GET /info, POST /translate), the limits on what a client may send and
 * the statuses that refuse it, and the drain and stop on shutdown. */
#ifndef NMT_CLI_SERVE_HTTP_H
#define NMT_CLI_SERVE_HTTP_H

#include "serve/cmd_serve_types.h"
#include "serve/cmd_serve_queue.h"

typedef struct serve_http serve_http;

typedef struct serve_http_opts {
    int fd;                /* a bound socket (serve_socket_bind), listened on here */
    int max_connections;   /* open connections at most */
    serve_limits limits;
    const char *page;      /* GET /: the whole page */
    const char *info;      /* GET /info: JSON */
    int verbose;           /* libmicrohttpd's own messages on stderr */
} serve_http_opts;

/* Listens on o->fd and answers from libmicrohttpd's thread, handing
 * translations to q. The strings of o must outlive the server; so must q,
 * which is called until serve_http_stop returns. NULL after saying why on
 * stderr (the socket is then still the caller's to close). */
serve_http *serve_http_start(const serve_http_opts *o, serve_queue *q,
                             const serve_models *models);
/* From now on new translations are refused with 503; then waits until
 * every accepted request has been answered, or until `give_up` returns
 * nonzero (polled about ten times a second). */
void serve_http_drain(serve_http *s, int (*give_up)(void));
/* Stops the server, after serve_queue_close (every translation it
 * accepted has its answer, and no connection is left suspended): no new
 * connection is accepted, the answers not yet sent are sent (for up to a
 * few seconds), then the daemon stops, its thread ends and the server is
 * freed. Only then may the queue be freed. */
void serve_http_stop(serve_http *s);

#endif
