/* nmt serve's HTTP side (cmd_serve_http.h), on libmicrohttpd with its own
 * polling thread. A translation request is read whole (within the body
 * limit), parsed, then its connection is suspended while the queue's
 * workers translate it, and resumed by the worker that finishes it: the
 * polling thread never waits for a model, so slow translations do not
 * hold up the page, /info or the refusals. */
#include "serve/cmd_serve_http.h"

#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cli_opts.h"
#include "serve/cmd_serve_json.h"

struct serve_http {
    struct MHD_Daemon *d;
    serve_queue *q;
    const serve_models *models;
    serve_http_opts o;
    pthread_mutex_t lock;
    pthread_cond_t idle;
    int stopping; /* under lock: translations are refused (503) */
    int inflight; /* accepted translations not yet answered (under lock) */
};

/* One POST /translate, from its headers until its answer is sent. */
typedef struct conn {
    serve_http *s;
    struct MHD_Connection *c;
    char *body;
    size_t len, cap, discarded;
    int too_large;
    enum { READING, TRANSLATING, ANSWERED } state;
    int counted; /* in s->inflight */
    serve_job job;
    char *answer; /* JSON, with its status */
    int status;
} conn;

/* Sends text (copied) with the headers every answer has. */
static enum MHD_Result send_text(struct MHD_Connection *c, int status, const char *type,
                                 const char *text, size_t len, const char *allow)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)text, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    if (allow)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    if (status == MHD_HTTP_TOO_MANY_REQUESTS || status == MHD_HTTP_SERVICE_UNAVAILABLE)
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    if (!strncmp(type, "text/html", 9)) /* the page runs its own inline script, talks
                                         * only to this server, loads nothing */
        MHD_add_response_header(r, "Content-Security-Policy",
                                "default-src 'none'; script-src 'unsafe-inline'; style-src "
                                "'unsafe-inline'; img-src data:; connect-src 'self'; "
                                "base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result send_json(struct MHD_Connection *c, int status, const char *json)
{
    static const char nomem[] = "{\"error\":\"out of memory\",\"status\":500}";
    if (!json)
        return send_text(c, 500, "application/json", nomem, sizeof nomem - 1, NULL);
    return send_text(c, status, "application/json", json, strlen(json), NULL);
}

static enum MHD_Result send_error(struct MHD_Connection *c, int status, const char *msg,
                                  const char *allow)
{
    char *json = serve_error_json(status, msg);
    enum MHD_Result ok = json ? send_text(c, status, "application/json", json, strlen(json), allow)
                              : send_json(c, 500, NULL);
    free(json);
    return ok;
}

/* GET /stats: requests in flight and what the workers have decoded. */
static enum MHD_Result send_stats(serve_http *s, struct MHD_Connection *c)
{
    serve_queue_stats q;
    serve_queue_get_stats(s->q, &q);
    pthread_mutex_lock(&s->lock);
    int inflight = s->inflight;
    pthread_mutex_unlock(&s->lock);
    char json[256];
    snprintf(json, sizeof json,
             "{\"in_flight\":%d,\"batches\":%llu,\"sentences\":%llu,\"shared_batches\":%llu}",
             inflight, q.batches, q.sentences, q.shared_batches);
    return send_json(c, 200, json);
}

/* Called by the worker that translated the last sentence of the job. */
static void job_done(serve_job *j, void *ctx)
{
    conn *x = ctx;
    x->status = j->status ? j->status : 200;
    x->answer = j->status ? serve_error_json(j->status, j->error)
                          : serve_response_json(j, x->s->models);
    if (!x->answer)
        x->status = 500;
    serve_job_clear(j); /* the results are in the answer now */
    x->state = ANSWERED;
    /* the last touch of x from this thread: once resumed the connection
     * may be answered and x freed */
    MHD_resume_connection(x->c);
}

/* Admits a parsed request and hands it to the queue, or says why not:
 * 503 once the server is stopping, 429 past --max-inflight, or the
 * queue's refusal. One decision under s->lock, which serve_http_drain
 * takes to set `stopping`: a request is either counted in flight before
 * the drain starts (and the drain waits for its answer) or refused; none
 * slips into a queue that is closing. 0 when queued. */
static int admit(serve_http *s, conn *x, char *err, size_t size)
{
    int status = 0;
    pthread_mutex_lock(&s->lock);
    if (s->stopping) {
        status = 503;
        snprintf(err, size, "the server is shutting down");
    } else if (s->inflight >= s->o.limits.max_inflight) {
        status = 429;
        snprintf(err, size, "%d requests are being translated, the most this server takes",
                 s->o.limits.max_inflight);
    } else if ((status = serve_queue_submit(s->q, &x->job))) {
        snprintf(err, size, "%s", x->job.error);
    } else {
        s->inflight++;
        x->counted = 1;
    }
    pthread_mutex_unlock(&s->lock);
    return status;
}

static enum MHD_Result start_translation(serve_http *s, conn *x)
{
    char err[512];
    if (x->too_large) {
        snprintf(err, sizeof err, "the body is larger than the limit of %zu bytes",
                 s->o.limits.max_body);
        return send_error(x->c, 413, err, NULL);
    }
    int status = serve_request_parse(x->body ? x->body : "", x->len, &s->o.limits, s->models,
                                     &x->job.req, err, sizeof err);
    free(x->body);
    x->body = NULL;
    if (status)
        return send_error(x->c, status, err, NULL);
    if (x->job.req.n == 0) { /* nothing to translate: answered here */
        pthread_mutex_lock(&s->lock);
        int stopping = s->stopping;
        pthread_mutex_unlock(&s->lock);
        if (stopping)
            return send_error(x->c, 503, "the server is shutting down", NULL);
        x->answer = serve_response_json(&x->job, s->models);
        x->state = ANSWERED;
        return send_json(x->c, 200, x->answer);
    }
    x->job.done = job_done;
    x->job.ctx = x;
    x->state = TRANSLATING;
    /* suspended before the job is queued, so that a worker cannot resume
     * it before it is suspended */
    MHD_suspend_connection(x->c);
    if ((status = admit(s, x, err, sizeof err))) {
        serve_job_clear(&x->job);
        x->status = status;
        x->answer = serve_error_json(status, err);
        x->state = ANSWERED;
        MHD_resume_connection(x->c);
    }
    return MHD_YES;
}

/* Appends a piece of the body, or past the limit counts and drops it: the
 * answer (413) can only be sent once the body is read. A client that goes
 * on sending far past the limit is cut off. */
static enum MHD_Result take_body(serve_http *s, conn *x, const char *data, size_t n)
{
    size_t max = s->o.limits.max_body;
    if (!x->too_large && x->len + n > max) {
        x->too_large = 1;
        free(x->body);
        x->body = NULL;
        x->discarded = x->len;
    }
    if (x->too_large) {
        x->discarded += n;
        return x->discarded > 4 * max + (1 << 20) ? MHD_NO : MHD_YES;
    }
    if (x->len + n + 1 > x->cap) {
        size_t cap = x->cap ? x->cap : 4096;
        while (cap < x->len + n + 1)
            cap *= 2;
        cap = cap > max + 1 ? max + 1 : cap;
        char *b = realloc(x->body, cap);
        if (!b)
            return MHD_NO;
        x->body = b;
        x->cap = cap;
    }
    memcpy(x->body + x->len, data, n);
    x->len += n;
    x->body[x->len] = '\0';
    return MHD_YES;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    serve_http *s = cls;
    conn *x = *con_cls;
    if (x) { /* POST /translate, called again */
        if (*upload_size) {
            enum MHD_Result ok = take_body(s, x, upload, *upload_size);
            *upload_size = 0;
            return ok;
        }
        if (x->state == READING)
            return start_translation(s, x);
        if (x->state == ANSWERED)
            return send_json(c, x->status, x->answer);
        return MHD_YES; /* not reached: a suspended connection is not called */
    }
    int get = !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);
    if (!strcmp(url, "/translate")) {
        if (strcmp(method, MHD_HTTP_METHOD_POST))
            return send_error(c, 405, "POST a JSON object to /translate", "POST");
        /* a declared length past the limit is refused before its body is read */
        const char *cl =
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > s->o.limits.max_body) {
            char err[128];
            snprintf(err, sizeof err, "the body is larger than the limit of %zu bytes",
                     s->o.limits.max_body);
            return send_error(c, 413, err, NULL);
        }
        if (!(x = calloc(1, sizeof *x)))
            return send_json(c, 500, NULL);
        x->s = s;
        x->c = c;
        *con_cls = x;
        return MHD_YES;
    }
    if (!strcmp(url, "/") || !strcmp(url, "/info") || !strcmp(url, "/stats")) {
        if (!get)
            return send_error(c, 405, "only GET here", "GET, HEAD");
        if (!strcmp(url, "/"))
            return send_text(c, 200, "text/html; charset=utf-8", s->o.page, strlen(s->o.page),
                             NULL);
        if (!strcmp(url, "/info"))
            return send_json(c, 200, s->o.info);
        return send_stats(s, c);
    }
    return send_error(c, 404, "no such page: POST /translate translates, GET / is the page, "
                              "GET /info describes the models, GET /stats counts the work",
                      NULL);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode why)
{
    serve_http *s = cls;
    conn *x = *con_cls;
    if (!x)
        return;
    if (x->counted) {
        pthread_mutex_lock(&s->lock);
        if (--s->inflight == 0)
            pthread_cond_broadcast(&s->idle);
        pthread_mutex_unlock(&s->lock);
    }
    serve_job_clear(&x->job);
    free(x->body);
    free(x->answer);
    free(x);
    *con_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    fprintf(stderr, "nmt serve: libmicrohttpd: ");
    vfprintf(stderr, fmt, ap);
}

serve_http *serve_http_start(const serve_http_opts *o, serve_queue *q,
                             const serve_models *models)
{
    unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME;
    if (o->verbose)
        flags |= MHD_USE_ERROR_LOG;
    if (listen(o->fd, SOMAXCONN)) {
        cli_error("cannot listen: %s", strerror(errno));
        return NULL;
    }
    serve_http *s = calloc(1, sizeof *s);
    if (!s) {
        cli_error("out of memory");
        return NULL;
    }
    s->q = q;
    s->models = models;
    s->o = *o;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->idle, NULL);
    /* the socket that serve_socket_bind bound (port 0 is the port given
     * there, which libmicrohttpd does not use) */
    s->d = MHD_start_daemon(
        flags, 0, NULL, NULL, handle, s, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)o->fd,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)o->limits.timeout, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)o->max_connections, MHD_OPTION_NOTIFY_COMPLETED, completed, s,
        MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
    if (!s->d) {
        cli_error("cannot start the HTTP server (libmicrohttpd; -v says why)");
        pthread_mutex_destroy(&s->lock);
        pthread_cond_destroy(&s->idle);
        free(s);
        return NULL;
    }
    return s;
}

/* Waits on s->idle (s->lock held) until no request is in flight, or
 * give_up() (if not NULL) says not to wait any more, or after `polls`
 * polls (-1: no limit), polled ten times a second. */
static void wait_idle(serve_http *s, int (*give_up)(void), int polls)
{
    for (; s->inflight > 0 && polls != 0 && !(give_up && give_up()); polls -= polls > 0) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 100000000;
        if (t.tv_nsec >= 1000000000) {
            t.tv_sec++;
            t.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&s->idle, &s->lock, &t);
    }
}

void serve_http_drain(serve_http *s, int (*give_up)(void))
{
    pthread_mutex_lock(&s->lock);
    s->stopping = 1; /* under the lock that admit() decides under */
    wait_idle(s, give_up, -1);
    pthread_mutex_unlock(&s->lock);
}

/* How long serve_http_stop waits for the answers still unsent, in tenths
 * of a second: those to clients that do not read them are then dropped
 * with their connections. */
enum { SEND_WAIT_TENTHS = 30 };

void serve_http_stop(serve_http *s)
{
    if (!s)
        return;
    /* no new connection from here on: the listening socket is ours again
     * and closed once the daemon has stopped (libmicrohttpd's rule) */
    MHD_socket listening = MHD_quiesce_daemon(s->d);
    /* the answers the queue made on closing (503 for the sentences it did
     * not decode) are sent before the connections close */
    pthread_mutex_lock(&s->lock);
    wait_idle(s, NULL, SEND_WAIT_TENTHS);
    pthread_mutex_unlock(&s->lock);
    MHD_stop_daemon(s->d);
    if (listening != MHD_INVALID_SOCKET)
        close(listening);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->idle);
    free(s);
}
