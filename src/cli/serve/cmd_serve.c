/* nmt serve: translations over HTTP (cmd_serve_types.h says which file does what).
 * This file is the command: its options, the models, the page put
 * together, and the signals that stop it. */
#include <errno.h>
#include <getopt.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "draw/heatmap.h"
#include "cli_opts.h"
#include "serve/cmd_serve_types.h"
#include "serve/cmd_serve_http.h"
#include "serve/cmd_serve_json.h"
#include "serve/cmd_serve_queue.h"
#include "serve/cmd_serve_socket.h"
#include "nmt/error.h"
#include "nmt/modelfile.h"
#include "nmt/threads.h"

#include "serve_html.h" /* serve_head[], serve_tail[]: generated from serve/serve.html */

enum {
    DEF_PORT = 8080,
    DEF_BATCH = 16,
    DEF_MAX_BODY = 1 << 20,
    DEF_MAX_SENTENCES = 100,
    DEF_MAX_SENTENCE_BYTES = 2000,
    DEF_MAX_INFLIGHT = 128,
    DEF_MAX_BEAM = 16,
    /* about 3 MB of JSON, some 23 MB while an answer is built (serve.md) */
    DEF_MAX_ATTENTION_CELLS = 250000,
    DEF_MAX_CONNECTIONS = 512,
    DEF_TIMEOUT = 10,
};

static void help(void)
{
    printf("Usage: nmt serve -m FILE [-m FILE ...] [OPTIONS]\n\n"
           "Translates over HTTP: POST /translate takes JSON and answers translations,\n"
           "their scores and, when asked, the attention they were made with; GET / is a\n"
           "page to type sentences into and see their translations and heatmaps as you\n"
           "type; GET /info describes the models and the limits, GET /stats counts the\n"
           "batches decoded. docs/serve.md describes the API. The page is built into the\n"
           "program: no file but the models is read.\n\n"
           "Options:\n"
           "  -m, --model FILE        the model (or checkpoint) file; given several times,\n"
           "                          an ensemble of up to %d models (as nmt translate)\n"
           "      --host HOST         the address or host name to listen on (default\n"
           "                          127.0.0.1, this machine only; localhost; 0.0.0.0 or ::\n"
           "                          for every interface); checked before the models load\n"
           "      --port N            the port (default %d; 0: any free port, which the\n"
           "                          line 'listening on' names)\n"
           "      --threads N         worker threads that decode, each with its own\n"
           "                          decoder over the shared models (default: every core\n"
           "                          this process may use)\n"
           "      --batch N           sentences a worker decodes together, taken from every\n"
           "                          waiting request that asks for the same search, 1 to\n"
           "                          64 (default %d; 1: no batching)\n"
           "      --max-body BYTES    the largest request body (default %d); larger: 413\n"
           "      --max-sentences N   sentences per request (default %d); more: 413\n"
           "      --max-sentence-bytes N  bytes of one sentence or prefix (default %d);\n"
           "                          longer: 413\n"
           "      --max-inflight N    requests being translated at once (default %d); more:\n"
           "                          429, to be tried again\n"
           "      --max-beam N        the largest beam and n_best a request may ask for\n"
           "                          (default %d)\n"
           "      --max-attention-cells N  attention weights one answer may hold (default\n"
           "                          %d): a request with alignments (and heads) whose\n"
           "                          sentences could take more, at the length limit, is\n"
           "                          refused before decoding: 413\n"
           "      --max-connections N open connections at most (default %d); past them new\n"
           "                          connections are closed at once\n"
           "      --timeout S         seconds a connection may stay idle, sending nothing\n"
           "                          (default %d), so that slow clients are cut off\n"
           "  -q, --quiet             no 'listening on' line\n"
           "  -v, --verbose           libmicrohttpd's own messages on stderr\n"
           "  -h, --help              this help\n\n"
           "SIGINT or SIGTERM: new requests are answered 503, those being translated are\n"
           "answered, then the server stops (exit 0); a second signal stops it without\n"
           "waiting (sentences not yet decoded are answered 503).\n",
           NMT_MAX_ENSEMBLE, DEF_PORT, DEF_BATCH, DEF_MAX_BODY, DEF_MAX_SENTENCES,
           DEF_MAX_SENTENCE_BYTES, DEF_MAX_INFLIGHT, DEF_MAX_BEAM, DEF_MAX_ATTENTION_CELLS,
           DEF_MAX_CONNECTIONS, DEF_TIMEOUT);
}

typedef struct serve_args {
    const char *model[NMT_MAX_ENSEMBLE];
    int n_models;
    const char *host;
    int port;
    serve_http_opts http;
    int threads, batch;
    int quiet;
} serve_args;

static int parse_args(serve_args *a, int argc, char **argv)
{
    enum { OPT_HOST = 256, OPT_PORT, OPT_BATCH, OPT_MAX_BODY, OPT_MAX_SENT, OPT_MAX_BYTES,
           OPT_MAX_INFLIGHT, OPT_MAX_BEAM, OPT_MAX_CELLS, OPT_MAX_CONN, OPT_TIMEOUT };
    static const struct option long_options[] = {
        {"model", required_argument, NULL, 'm'},
        {"host", required_argument, NULL, OPT_HOST},
        {"port", required_argument, NULL, OPT_PORT},
        CLI_OPTION_THREADS,
        {"batch", required_argument, NULL, OPT_BATCH},
        {"max-body", required_argument, NULL, OPT_MAX_BODY},
        {"max-sentences", required_argument, NULL, OPT_MAX_SENT},
        {"max-sentence-bytes", required_argument, NULL, OPT_MAX_BYTES},
        {"max-inflight", required_argument, NULL, OPT_MAX_INFLIGHT},
        {"max-beam", required_argument, NULL, OPT_MAX_BEAM},
        {"max-attention-cells", required_argument, NULL, OPT_MAX_CELLS},
        {"max-connections", required_argument, NULL, OPT_MAX_CONN},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof *a);
    a->host = "127.0.0.1";
    a->port = DEF_PORT;
    a->http.max_connections = DEF_MAX_CONNECTIONS;
    a->http.limits = (serve_limits){DEF_MAX_BODY,     DEF_MAX_SENTENCES, DEF_MAX_SENTENCE_BYTES,
                                    DEF_MAX_INFLIGHT, DEF_MAX_BEAM,      DEF_TIMEOUT,
                                    DEF_MAX_ATTENTION_CELLS};
    a->threads = cli_default_threads();
    a->batch = DEF_BATCH;
    serve_limits *l = &a->http.limits;
    const cli_model_opts shared = {.threads = &a->threads};
    long body;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "m:qvh", long_options, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 'm':
            if (opt_model(optarg, a->model, &a->n_models, NMT_MAX_ENSEMBLE))
                return 2;
            break;
        case OPT_HOST: a->host = optarg; break;
        case OPT_PORT: bad = opt_int("--port", optarg, 0, 65535, &a->port); break;
        case OPT_BATCH: bad = opt_int("--batch", optarg, 1, 64, &a->batch); break;
        case OPT_MAX_BODY:
            bad = opt_long("--max-body", optarg, 2, 1L << 30, &body);
            l->max_body = (size_t)body;
            break;
        case OPT_MAX_SENT:
            bad = opt_int("--max-sentences", optarg, 1, 100000, &l->max_sentences);
            break;
        case OPT_MAX_BYTES:
            bad = opt_int("--max-sentence-bytes", optarg, 1, 1 << 20, &l->max_sentence_bytes);
            break;
        case OPT_MAX_INFLIGHT:
            bad = opt_int("--max-inflight", optarg, 1, 100000, &l->max_inflight);
            break;
        case OPT_MAX_BEAM: bad = opt_int("--max-beam", optarg, 1, 100, &l->max_beam); break;
        case OPT_MAX_CELLS:
            bad = opt_long("--max-attention-cells", optarg, 1, 1L << 40, &l->max_attention_cells);
            break;
        case OPT_MAX_CONN:
            bad = opt_int("--max-connections", optarg, 1, 100000, &a->http.max_connections);
            break;
        case OPT_TIMEOUT: bad = opt_int("--timeout", optarg, 1, 3600, &l->timeout); break;
        case 'q': a->quiet = 1; break;
        case 'v': a->http.verbose = 1; break;
        case 'h': help(); return -1;
        default:
            if (cli_model_option_or_usage(c, optarg, &shared))
                return 2;
        }
        if (bad)
            return 2;
    }
    if (cli_no_operands(argc, argv))
        return 2;
    if (!a->n_models) {
        cli_error("--model is required");
        return cli_usage_error();
    }
    return 0;
}

/* The attention grid of a lone Transformer (layers x heads), as nmt align
 * finds it: layers while a layer's mean exists, heads while layer 0's head
 * does. */
static void grid_shape(const nmt_model *m, int *layers, int *heads)
{
    *layers = *heads = 0;
    while (nmt_model_attention_map_at(m, *layers, NMT_MAP_MEAN) >= 0)
        ++*layers;
    while (*layers && nmt_model_attention_map_at(m, 0, *heads) >= 0)
        ++*heads;
    nmt_clear_error(); /* the probes' refusals */
}

/* The page: its head, then its data (the heatmap colours and /info), then
 * its tail, as one string. */
static char *make_page(const char *info)
{
    char *page = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&page, &len);
    if (!f)
        return NULL;
    for (const char *const *l = serve_head; *l; l++)
        fputs(*l, f);
    fputs("{\"palette\":[", f);
    for (int k = 0; k < 256; k++) { /* the colours of nmt align's pictures */
        unsigned char rgb[3];
        nmt_heat_rgb((float)k / 255.0f, rgb);
        fprintf(f, "%s\"#%02x%02x%02x\"", k ? "," : "", rgb[0], rgb[1], rgb[2]);
    }
    fputs("],\"info\":", f);
    /* inside a <script>: "</" written "<\/" (the same JSON string), so that
     * no model name can end the element */
    for (const char *i = info; *i; i++) {
        if (*i == '<' && i[1] == '/')
            fputc('<', f), fputc('\\', f);
        else
            fputc(*i, f);
    }
    fputc('}', f);
    for (const char *const *l = serve_tail; *l; l++)
        fputs(*l, f);
    if (fclose(f)) {
        free(page);
        return NULL;
    }
    return page;
}

/* SIGINT and SIGTERM are caught by a handler, not waited for with a mask:
 * the kernel hands a process's signal to any thread that does not block
 * it, and OpenBLAS starts its threads when the library loads, before main,
 * so no mask set here reaches them (nor could one reach a library's
 * threads started later). The handler, on whichever thread it runs, counts
 * the signal and wakes the main thread (sem_post is async-signal-safe). */
static atomic_int stop_count, stop_first;
static sem_t stop_sem;
/* a handler may only touch lock-free atomics */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "atomic_int is lock-free");

static void on_stop_signal(int sig)
{
    int saved = errno, none = 0; /* the interrupted code's errno is its own */
    atomic_compare_exchange_strong(&stop_first, &none, sig);
    atomic_fetch_add(&stop_count, 1);
    sem_post(&stop_sem);
    errno = saved;
}

static int catch_stop_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sa.sa_flags = SA_RESTART; /* the other threads' system calls carry on */
    sigemptyset(&sa.sa_mask);
    if (sem_init(&stop_sem, 0, 0) || sigaction(SIGINT, &sa, NULL) ||
        sigaction(SIGTERM, &sa, NULL)) {
        cli_error("cannot catch SIGINT and SIGTERM: %s", strerror(errno));
        return -1;
    }
    /* a client that goes away mid-answer must not kill the server */
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

/* Until the first signal. */
static int wait_stop_signal(void)
{
    while (sem_wait(&stop_sem) && errno == EINTR)
        ;
    return atomic_load(&stop_first);
}

/* The drain's give_up: a second signal came. */
static int signalled_again(void)
{
    return atomic_load(&stop_count) > 1;
}

int cmd_serve(int argc, char **argv)
{
    serve_args a;
    serve_socket sock = {.fd = -1};
    int rc = parse_args(&a, argc, argv);
    if (rc)
        return rc < 0 ? 0 : rc;
    /* the address before the models: a host that does not resolve is a bad
     * option like any other, and a port in use need not wait for a load */
    if ((rc = serve_socket_bind(&sock, a.host, a.port)))
        return rc;
    if (catch_stop_signals()) {
        close(sock.fd);
        return 1;
    }
    /* the workers decode side by side: each pass runs on its caller alone
     * (the library's pool is one per process and runs one job at a time) */
    nmt_set_threads(1);

    nmt_model *models[NMT_MAX_ENSEMBLE] = {0};
    serve_queue *q = NULL;
    serve_http *http = NULL;
    char *info = NULL, *page = NULL;
    int status = 1;
    for (int k = 0; k < a.n_models; k++)
        if (nmt_model_load(&models[k], a.model[k], NULL)) {
            cli_lib_error();
            goto done;
        }
    if (nmt_ensemble_check((const nmt_model *const *)models, a.model, a.n_models)) {
        cli_lib_error();
        goto done;
    }
    serve_models ms = {(const nmt_model *const *)models, a.model, a.n_models, 0, 0, 1};
    for (int k = 0; k < a.n_models; k++)
        ms.has_attention &= nmt_model_attention_maps(models[k]) > 0;
    if (a.n_models == 1)
        grid_shape(models[0], &ms.layers, &ms.heads);
    if (!(info = serve_info_json(&ms, &a.http.limits, a.batch, a.threads)) ||
        !(page = make_page(info))) {
        cli_error("out of memory");
        goto done;
    }
    a.http.page = page;
    a.http.info = info;
    a.http.fd = sock.fd;
    if (serve_queue_start(&q, &ms, a.threads, a.batch)) {
        cli_lib_error();
        goto done;
    }
    if (!(http = serve_http_start(&a.http, q, &ms)))
        goto done;
    sock.fd = -1; /* the daemon's now */
    if (!a.quiet) {
        fprintf(stderr, "nmt serve: listening on http://%s:%d/ (%d worker%s, batch %d)\n",
                sock.url_host, sock.port, a.threads, a.threads == 1 ? "" : "s", a.batch);
        fflush(stderr);
    }
    int sig = wait_stop_signal();
    if (!a.quiet)
        fprintf(stderr, "nmt serve: %s: answering the requests in flight, then stopping\n",
                sig == SIGINT ? "SIGINT" : "SIGTERM");
    serve_http_drain(http, signalled_again);
    status = 0;
done:
    /* in this order: the queue answers what it holds and its workers end;
     * the HTTP side sends those answers and its thread ends; only then is
     * the queue, which that thread reads (GET /stats, POST /translate),
     * freed */
    serve_queue_close(q);
    serve_http_stop(http);
    serve_queue_free(q);
    if (sock.fd >= 0)
        close(sock.fd);
    free(info);
    free(page);
    for (int k = 0; k < a.n_models; k++)
        nmt_model_free(models[k]);
    if (!status && !a.quiet)
        fprintf(stderr, "nmt serve: stopped\n");
    return status;
}
