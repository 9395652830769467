/* nmt serve's batching queue (cmd_serve_queue.h). */
#include "serve/cmd_serve_queue.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/align.h"
#include "nmt/extract.h"
#include "nmt/error.h"
#include "nmt/vocab.h"

/* One waiting sentence: sentence i of a job. */
typedef struct serve_item {
    struct serve_item *next;
    serve_job *job;
    size_t i;
} serve_item;

/* Translators differ by their search; a worker keeps a few, the least
 * recently used one made anew when a request asks for another. */
#define CACHED 6
typedef struct cached {
    int beam, n_best, alignments; /* the key; beam 0: empty slot */
    unsigned long used;
    nmt_translator *t;
} cached;

typedef struct worker {
    struct serve_queue *q;
    pthread_t thread;
    cached cache[CACHED];
    unsigned long clock;
    /* this batch */
    serve_item **items;
    const char **lines, **prefixes;
    nmt_translated *out;
    /* the per-head maps of a lone Transformer: forced decoding (nmt_align.h) */
    nmt_infer *st;
    int st_T, st_steps;
    int32_t *ids;
    float *maps;
    size_t ids_cap, maps_cap;
    /* word links: the library's one path, as nmt align's (nmt/extract.h) */
    nmt_aligner *aligner;
} worker;

struct serve_queue {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    serve_item *head, **tail; /* FIFO of waiting sentences */
    int stopping;             /* under lock: submit refuses, workers end */
    int closed;               /* the workers are joined (the closing thread's) */
    const serve_models *models;
    int batch, n_workers;
    worker *workers;
    serve_queue_stats stats; /* under lock */
};

void serve_queue_get_stats(serve_queue *q, serve_queue_stats *out)
{
    pthread_mutex_lock(&q->lock);
    *out = q->stats;
    pthread_mutex_unlock(&q->lock);
}

void serve_job_clear(serve_job *j)
{
    for (size_t i = 0; j->res && i < j->req.n; i++)
        nmt_translated_free(&j->res[i]);
    for (size_t i = 0; j->head_att && i < j->req.n; i++)
        free(j->head_att[i]);
    for (size_t i = 0; j->links && i < j->req.n; i++)
        free(j->links[i]);
    free(j->res);
    free(j->head_att);
    free(j->links);
    j->links = NULL;
    free(j->items);
    j->res = NULL;
    j->head_att = NULL;
    j->items = NULL;
    serve_request_free(&j->req);
}

static int same_search(const serve_job *a, const serve_job *b)
{
    return a->req.beam == b->req.beam && a->req.n_best == b->req.n_best &&
           a->req.alignments == b->req.alignments;
}

/* The worker's translator for job j's search. */
static nmt_translator *translator_for(worker *w, const serve_job *j)
{
    cached *slot = &w->cache[0];
    for (int k = 0; k < CACHED; k++) {
        cached *c = &w->cache[k];
        if (c->beam == j->req.beam && c->n_best == j->req.n_best &&
            c->alignments == j->req.alignments) {
            c->used = ++w->clock;
            return c->t;
        }
        if (c->used < slot->used)
            slot = c;
    }
    nmt_translator_free(slot->t);
    memset(slot, 0, sizeof *slot);
    nmt_translate_opts o;
    nmt_translate_opts_default(&o);
    o.decode.beam = j->req.beam;
    o.decode.n_best = j->req.n_best;
    o.batch_size = w->q->batch;
    o.alignments = j->req.alignments;
    const serve_models *ms = w->q->models;
    if (nmt_translator_create_ensemble(&slot->t, ms->m, ms->n, &o))
        return NULL;
    *slot = (cached){j->req.beam, j->req.n_best, j->req.alignments, ++w->clock, slot->t};
    return slot->t;
}

/* Ids of tokens (the translator's, "</s>" last when there) in vocabulary v. */
static void token_ids(const nmt_vocab *v, char *const *tok, int n, int32_t *ids)
{
    for (int k = 0; k < n; k++)
        ids[k] = k == n - 1 && !strcmp(tok[k], "</s>") ? NMT_EOS
                                                       : nmt_vocab_id(v, tok[k], strlen(tok[k]));
}

/* Every layer's and head's attention for the best translation t, by forcing
 * it through the model again: that replays the states it was decoded with
 * (nmt_align_forced). *out: [layers, heads, n_tgt, n_src], malloc'ed. */
static int head_maps(worker *w, const nmt_translated *t, float **out)
{
    const serve_models *ms = w->q->models;
    const nmt_model *m = ms->m[0];
    *out = NULL;
    if (t->n_src == 0)
        return NMT_OK;
    if (t->n_src > w->st_T || t->n_tgt > w->st_steps) {
        nmt_infer_free(w->st);
        w->st = NULL;
        w->st_T = t->n_src > w->st_T ? t->n_src : w->st_T;
        w->st_steps = t->n_tgt > w->st_steps ? t->n_tgt : w->st_steps;
        int rc = nmt_infer_create(&w->st, m, 1, w->st_T, 1, w->st_steps);
        if (rc)
            return rc;
    }
    size_t plane = (size_t)t->n_src * t->n_tgt;
    size_t n_ids = (size_t)t->n_src + t->n_tgt;
    size_t n_maps = (size_t)nmt_model_attention_maps(m);
    if (n_ids > w->ids_cap) {
        free(w->ids);
        if (!(w->ids = malloc(n_ids * sizeof *w->ids)))
            return w->ids_cap = 0, nmt_set_error(NMT_ERR_NOMEM, "out of memory");
        w->ids_cap = n_ids;
    }
    if (n_maps * plane > w->maps_cap) {
        free(w->maps);
        if (!(w->maps = malloc(n_maps * plane * sizeof *w->maps)))
            return w->maps_cap = 0, nmt_set_error(NMT_ERR_NOMEM, "out of memory");
        w->maps_cap = n_maps * plane;
    }
    int32_t *src = w->ids, *tgt = w->ids + t->n_src;
    token_ids(m->src_vocab, t->src, t->n_src, src);
    token_ids(m->tgt_vocab, t->tgt, t->n_tgt, tgt);
    int rc = nmt_align_forced_maps(m, w->st, src, t->n_src, tgt, t->n_tgt, w->maps);
    if (rc)
        return rc;
    float *o = malloc((size_t)ms->layers * ms->heads * plane * sizeof *o);
    if (!o)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    for (int l = 0; l < ms->layers; l++)
        for (int h = 0; h < ms->heads; h++) {
            int map = nmt_model_attention_map_at(m, l, h);
            memcpy(o + ((size_t)l * ms->heads + h) * plane, w->maps + (size_t)map * plane,
                   plane * sizeof *o);
        }
    *out = o;
    return NMT_OK;
}

/* The word links of source line src and its best translation t, as a
 * Pharaoh line (*out, malloc'ed): the pair forced through the model again
 * by the library's aligner, under the model's own map and step
 * (nmt_align_model_defaults), so that nmt align --tgt on the same pair
 * gives the same line. */
static int word_links(worker *w, const char *src, const nmt_translated *t, char **out)
{
    const nmt_model *m = w->q->models->m[0];
    *out = NULL;
    if (!w->aligner) {
        int map;
        nmt_link_rules rules;
        nmt_align_model_defaults(m, &map, &rules);
        int rc = nmt_aligner_create(&w->aligner, m, map, &rules, 0);
        if (rc)
            return rc;
    }
    nmt_pair_links p;
    int rc = nmt_aligner_pair(w->aligner, src, t->n_hyp ? t->hyp[0].text : "", &p);
    if (rc)
        return rc;
    size_t len = 0;
    FILE *f = open_memstream(out, &len);
    if (!f)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    rc = nmt_align_write_links(f, p.links, p.n_links);
    if (fclose(f) && !rc)
        rc = nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    if (!rc && len) /* the line without its newline, as JSON holds it */
        (*out)[len - 1] = '\0';
    return rc;
}

/* Translates the B items of this batch into their jobs' results; on a
 * failure every job of the batch gets status 500 and the library's
 * message. */
static void translate_batch(worker *w, int B)
{
    serve_job *first = w->items[0]->job;
    int any_prefix = 0;
    for (int b = 0; b < B; b++) {
        const serve_item *it = w->items[b];
        w->lines[b] = it->job->req.text[it->i];
        w->prefixes[b] = it->job->req.prefix ? it->job->req.prefix[it->i] : NULL;
        any_prefix |= w->prefixes[b] != NULL;
    }
    memset(w->out, 0, (size_t)B * sizeof *w->out);
    nmt_translator *t = translator_for(w, first);
    int rc = !t ? -1
             : any_prefix
                 ? nmt_translator_run_prefixed(t, w->lines, w->prefixes, (size_t)B, w->out, NULL, NULL)
                 : nmt_translator_run(t, w->lines, (size_t)B, w->out, NULL, NULL);
    for (int b = 0; b < B && !rc; b++) {
        serve_item *it = w->items[b];
        if (it->job->req.heads)
            rc = head_maps(w, &w->out[b], &it->job->head_att[it->i]);
        if (!rc && it->job->links)
            rc = word_links(w, w->lines[b], &w->out[b], &it->job->links[it->i]);
    }
    if (rc) {
        const char *msg = nmt_error_message();
        pthread_mutex_lock(&w->q->lock);
        for (int b = 0; b < B; b++) {
            serve_job *j = w->items[b]->job;
            j->status = 500;
            snprintf(j->error, sizeof j->error, "translation failed: %s",
                     msg && *msg ? msg : "unknown error");
        }
        pthread_mutex_unlock(&w->q->lock);
        for (int b = 0; b < B; b++)
            nmt_translated_free(&w->out[b]);
        return;
    }
    /* each item owns its own slot of its job's results: no lock needed */
    for (int b = 0; b < B; b++)
        w->items[b]->job->res[w->items[b]->i] = w->out[b];
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    serve_queue *q = w->q;
    pthread_mutex_lock(&q->lock);
    for (;;) {
        while (!q->head && !q->stopping)
            pthread_cond_wait(&q->wake, &q->lock);
        if (!q->head)
            break;
        /* the oldest sentence and those that share its search, in order; a
         * walk of the whole queue, which holds at most --max-inflight x
         * --max-sentences sentences */
        serve_job *key = q->head->job;
        int B = 0;
        for (serve_item **p = &q->head; *p && B < q->batch;) {
            if (same_search((*p)->job, key)) {
                w->items[B++] = *p;
                *p = (*p)->next;
            } else {
                p = &(*p)->next;
            }
        }
        q->tail = &q->head;
        while (*q->tail)
            q->tail = &(*q->tail)->next;
        q->stats.batches++;
        q->stats.sentences += (unsigned long long)B;
        for (int b = 1; b < B; b++)
            if (w->items[b]->job != w->items[0]->job) {
                q->stats.shared_batches++;
                break;
            }
        if (q->head) /* more work: another worker may take it meanwhile */
            pthread_cond_signal(&q->wake);
        pthread_mutex_unlock(&q->lock);

        translate_batch(w, B);

        /* a job is done when its last sentence is: its callback then runs
         * here, outside the lock (it writes the answer) */
        serve_job *finished[64];
        int n_finished = 0;
        pthread_mutex_lock(&q->lock);
        for (int b = 0; b < B; b++) {
            serve_job *j = w->items[b]->job;
            if (--j->left == 0)
                finished[n_finished++] = j; /* B <= batch <= 64 jobs */
        }
        pthread_mutex_unlock(&q->lock);
        for (int k = 0; k < n_finished; k++)
            finished[k]->done(finished[k], finished[k]->ctx);
        pthread_mutex_lock(&q->lock);
    }
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

static void worker_free(worker *w)
{
    for (int k = 0; k < CACHED; k++)
        nmt_translator_free(w->cache[k].t);
    nmt_infer_free(w->st);
    nmt_aligner_free(w->aligner);
    free(w->items);
    free(w->lines);
    free(w->prefixes);
    free(w->out);
    free(w->ids);
    free(w->maps);
}

int serve_queue_start(serve_queue **out, const serve_models *models, int workers, int batch)
{
    *out = NULL;
    if (batch < 1 || batch > 64 || workers < 1)
        return nmt_set_error(NMT_ERR_ARG, "a batch of 1 to 64 sentences and at least one worker");
    serve_queue *q = calloc(1, sizeof *q);
    if (!q || !(q->workers = calloc((size_t)workers, sizeof *q->workers))) {
        free(q);
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    }
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->wake, NULL);
    q->tail = &q->head;
    q->models = models;
    q->batch = batch;
    for (int k = 0; k < workers; k++) {
        worker *w = &q->workers[k];
        w->q = q;
        w->items = calloc((size_t)batch, sizeof *w->items);
        w->lines = calloc((size_t)batch, sizeof *w->lines);
        w->prefixes = calloc((size_t)batch, sizeof *w->prefixes);
        w->out = calloc((size_t)batch, sizeof *w->out);
        if (!w->items || !w->lines || !w->prefixes || !w->out ||
            pthread_create(&w->thread, NULL, worker_main, w)) {
            worker_free(w);
            serve_queue_free(q);
            return nmt_set_error(NMT_ERR_NOMEM, "could not start worker thread %d", k + 1);
        }
        q->n_workers++;
    }
    *out = q;
    return NMT_OK;
}

int serve_queue_submit(serve_queue *q, serve_job *j)
{
    j->left = j->req.n;
    j->status = 0;
    j->res = calloc(j->req.n, sizeof *j->res);
    j->head_att = j->req.heads ? calloc(j->req.n, sizeof *j->head_att) : NULL;
    int want_links = j->req.alignments && q->models->n == 1;
    j->links = want_links ? calloc(j->req.n, sizeof *j->links) : NULL;
    j->items = calloc(j->req.n, sizeof *j->items);
    if (!j->req.n || !j->res || !j->items || (j->req.heads && !j->head_att) ||
        (want_links && !j->links)) {
        snprintf(j->error, sizeof j->error, j->req.n ? "out of memory" : "no sentence to queue");
        return 500;
    }
    /* the check and the queueing under one lock: a job is either queued
     * before serve_queue_close takes the waiting ones (and is answered by
     * it or by a worker) or refused here, never left in a closed queue */
    pthread_mutex_lock(&q->lock);
    if (q->stopping) {
        pthread_mutex_unlock(&q->lock);
        snprintf(j->error, sizeof j->error, "the server is shutting down");
        return 503;
    }
    for (size_t i = 0; i < j->req.n; i++) {
        j->items[i] = (serve_item){NULL, j, i};
        *q->tail = &j->items[i];
        q->tail = &j->items[i].next;
    }
    pthread_cond_signal(&q->wake);
    pthread_mutex_unlock(&q->lock);
    return 0;
}

void serve_queue_close(serve_queue *q)
{
    if (!q || q->closed)
        return;
    /* sentences not yet taken are not translated: their requests are
     * answered 503 (the batches being decoded finish first) */
    pthread_mutex_lock(&q->lock);
    q->stopping = 1;
    serve_item *waiting = q->head;
    q->head = NULL;
    q->tail = &q->head;
    pthread_cond_broadcast(&q->wake);
    for (serve_item *it = waiting; it; it = it->next) {
        serve_job *j = it->job;
        j->status = 503;
        snprintf(j->error, sizeof j->error, "the server is shutting down");
    }
    pthread_mutex_unlock(&q->lock);
    for (serve_item *it = waiting, *next; it; it = next) {
        next = it->next; /* before done() frees the item */
        pthread_mutex_lock(&q->lock);
        int last = --it->job->left == 0;
        pthread_mutex_unlock(&q->lock);
        if (last)
            it->job->done(it->job, it->job->ctx);
    }
    for (int k = 0; k < q->n_workers; k++) {
        pthread_join(q->workers[k].thread, NULL);
        worker_free(&q->workers[k]);
    }
    q->closed = 1;
}

void serve_queue_free(serve_queue *q)
{
    if (!q)
        return;
    serve_queue_close(q);
    pthread_mutex_destroy(&q->lock);
    pthread_cond_destroy(&q->wake);
    free(q->workers);
    free(q);
}
