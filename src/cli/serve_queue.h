/* nmt serve's batching queue. A request's sentences wait in one FIFO; each
 * worker thread takes the oldest waiting sentence and every other waiting
 * one that asks for the same search (beam, n_best, attention kept), up to
 * the batch size, and decodes them in one call. So concurrent requests of
 * one sentence each are decoded together, and a request of many sentences
 * is spread over the workers. Each worker has its own translators (a
 * translator keeps decoder state and is not thread-safe); the models are
 * shared and only read. */
#ifndef NMT_CLI_SERVE_QUEUE_H
#define NMT_CLI_SERVE_QUEUE_H

#include "serve.h"

typedef struct serve_queue serve_queue;

/* Starts `workers` threads over the models (which must outlive the queue),
 * decoding up to `batch` sentences a call. NMT_OK or the library's error. */
int serve_queue_start(serve_queue **out, const serve_models *models, int workers, int batch);

/* Queues the job's sentences; j->done(j, j->ctx) is called once from a
 * worker when all are translated (or j->status says why not). A job with
 * no sentence is done at once, on the caller's thread. -1 once the queue
 * is stopping (done is then not called). */
int serve_queue_submit(serve_queue *q, serve_job *j);

/* What the workers have done so far: batches decoded, sentences in them,
 * and the batches that held sentences of more than one request (concurrent
 * requests decoded together). */
typedef struct serve_queue_stats {
    unsigned long long batches, sentences, shared_batches;
} serve_queue_stats;
void serve_queue_get_stats(serve_queue *q, serve_queue_stats *out);

/* Frees a job's results (not the job itself). */
void serve_job_clear(serve_job *j);

/* Stops the workers after the sentences already queued are translated,
 * joins them and frees the queue. */
void serve_queue_stop(serve_queue *q);

#endif
