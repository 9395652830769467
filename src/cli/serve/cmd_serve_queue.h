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

#include "serve/cmd_serve_types.h"

typedef struct serve_queue serve_queue;

/* Starts `workers` threads over the models (which must outlive the queue),
 * decoding up to `batch` sentences a call. NMT_OK or the library's error. */
int serve_queue_start(serve_queue **out, const serve_models *models, int workers, int batch);

/* Queues the job's sentences (at least one); j->done(j, j->ctx) is then
 * called once, from a worker when all are translated or from
 * serve_queue_close when it answers those not yet decoded (j->status says
 * why not). 0, or the HTTP status of a refusal with its message in
 * j->error: 503 once the queue is closing, 500 out of memory (done is
 * then not called). */
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

/* Closes the queue: from now on submit refuses (503), the sentences not
 * yet taken are answered 503, and the workers end after their batches and
 * are joined. Every job submitted has been done when it returns. The queue
 * itself stays (submit and serve_queue_get_stats still work on it) until
 * serve_queue_free, so that the HTTP side may go on calling it until its
 * daemon has stopped. Closing twice is closing once. */
void serve_queue_close(serve_queue *q);

/* Closes the queue if it is not yet, and frees it. */
void serve_queue_free(serve_queue *q);

#endif
