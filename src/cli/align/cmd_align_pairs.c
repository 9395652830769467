/* nmt align's links of given pairs, split over threads (cmd_align_pairs.h).
 *
 * Why threads of our own rather than the library's pool: one pair's forced
 * pass is a chain of small products (a decoder step per target unit), too
 * small to share, while the pairs are independent. Each thread has its own
 * aligner (inference state and buffers) and takes the next pair not taken;
 * the library's pool is set to one thread, so a pair's bits never depend on
 * how many threads ran, and the main thread writes the pairs in input order
 * once a block of them is done. */
#include "align/cmd_align_pairs.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cli_opts.h"
#include "nmt/error.h"
#include "nmt/threads.h"

enum { BLOCK = 512 }; /* pairs held at once (a multiple of --batch-size's
                       * most): links written as blocks finish */

typedef struct done_pair {
    nmt_link *links;
    int n_links, rc;
    char *message;  /* the library's message when rc */
    size_t line;    /* when rc: the 0-based line it names */
    int unk[2], units[2];
} done_pair;

typedef struct shared {
    const align_args *a;
    const inputs *in;
    size_t first, n;    /* this block: pairs first .. first + n - 1 */
    size_t per;         /* pairs a thread takes at once: --batch-size */
    atomic_size_t next; /* the next chunk of `per` pairs of the block not taken */
    done_pair *done;    /* [BLOCK] */
} shared;

typedef struct worker {
    shared *sh;
    nmt_aligner *al;
    pthread_t thread;
} worker;

static void one_pair(worker *w, size_t k)
{
    shared *sh = w->sh;
    done_pair *d = &sh->done[k - sh->first];
    size_t line = sh->in->sel[k];
    nmt_pair_links p;
    memset(d, 0, sizeof *d);
    d->rc = nmt_aligner_pair(w->al, sh->in->src.line[line], sh->in->tgt.line[line], &p);
    if (!d->rc && p.n_links && !(d->links = malloc((size_t)p.n_links * sizeof *d->links)))
        d->rc = nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    if (d->rc) {
        d->message = strdup(nmt_error_message());
        d->line = line;
        return;
    }
    if (p.n_links)
        memcpy(d->links, p.links, (size_t)p.n_links * sizeof *d->links);
    d->n_links = p.n_links;
    d->unk[0] = p.src_unk;
    d->unk[1] = p.tgt_unk;
    d->units[0] = p.src_units;
    d->units[1] = p.tgt_units;
}

/* Pairs first .. first + n - 1 by one forward over them as a batch (the
 * chunks are fixed by the pairs' places, not by the thread that takes
 * them: the same batches, so the same bits, for any --threads). */
static void batch_of_pairs(worker *w, size_t first, int n)
{
    shared *sh = w->sh;
    const char *src[BLOCK] = {0}, *tgt[BLOCK] = {0};
    nmt_pair_links p[BLOCK];
    for (int i = 0; i < n; i++) {
        size_t line = sh->in->sel[first + i];
        src[i] = sh->in->src.line[line];
        tgt[i] = sh->in->tgt.line[line];
    }
    int failed;
    int rc = nmt_aligner_batch(w->al, src, tgt, n, p, &failed);
    for (int i = 0; i < n; i++) {
        done_pair *d = &sh->done[first + i - sh->first];
        memset(d, 0, sizeof *d);
        if (!rc && p[i].n_links && !(d->links = malloc((size_t)p[i].n_links * sizeof *d->links)))
            rc = nmt_set_error(NMT_ERR_NOMEM, "out of memory");
        if (rc) {
            /* said at the batch's first pair, before any of its lines is
             * written, naming the pair refused (the first for the forward) */
            d = &sh->done[first - sh->first];
            d->rc = rc;
            d->message = strdup(nmt_error_message());
            d->line = sh->in->sel[first + (failed > 0 ? failed : 0)];
            return;
        }
        if (p[i].n_links)
            memcpy(d->links, p[i].links, (size_t)p[i].n_links * sizeof *d->links);
        d->n_links = p[i].n_links;
        d->unk[0] = p[i].src_unk;
        d->unk[1] = p[i].tgt_unk;
        d->units[0] = p[i].src_units;
        d->units[1] = p[i].tgt_units;
    }
}

static void *work(void *arg)
{
    worker *w = arg;
    shared *sh = w->sh;
    for (size_t c; (c = atomic_fetch_add(&sh->next, 1)) * sh->per < sh->n;) {
        size_t lo = c * sh->per, hi = lo + sh->per < sh->n ? lo + sh->per : sh->n;
        if (sh->per == 1)
            one_pair(w, sh->first + lo);
        else
            batch_of_pairs(w, sh->first + lo, (int)(hi - lo));
    }
    return NULL;
}

/* Runs the block on n_workers threads (the first is this one). */
static void run_block(worker *ws, int n_workers)
{
    int started = 1;
    for (; started < n_workers; started++)
        if (pthread_create(&ws[started].thread, NULL, work, &ws[started]))
            break; /* fewer threads: the others take their pairs */
    work(&ws[0]);
    for (int t = 1; t < started; t++)
        pthread_join(ws[t].thread, NULL);
}

int align_pairs_run(const align_args *a, const inputs *in, const nmt_model *m, int map,
                    const nmt_link_rules *rules, FILE *out, nmt_aer *aer, size_t unk[2],
                    size_t units[2])
{
    int n_workers = a->threads > 0 ? a->threads : 1, status = -1;
    if ((size_t)n_workers > in->n)
        n_workers = in->n ? (int)in->n : 1;
    shared sh = {.a = a, .in = in, .per = (size_t)(a->batch > 0 ? a->batch : 1)};
    worker *ws = calloc((size_t)n_workers, sizeof *ws);
    sh.done = calloc(BLOCK, sizeof *sh.done);
    if (!ws || !sh.done) {
        cli_error("out of memory");
        goto done;
    }
    int pieces = a->units == UNITS_PIECES;
    for (int t = 0; t < n_workers; t++) {
        ws[t].sh = &sh;
        if (nmt_aligner_create(&ws[t].al, m, map, rules, pieces)) {
            cli_lib_error();
            goto done;
        }
    }
    nmt_set_threads(1); /* one pair, one thread: the same bits for any --threads */
    for (sh.first = 0; sh.first < in->n; sh.first += sh.n) {
        sh.n = in->n - sh.first < BLOCK ? in->n - sh.first : BLOCK;
        atomic_store(&sh.next, 0);
        run_block(ws, n_workers);
        for (size_t i = 0; i < sh.n; i++) {
            done_pair *d = &sh.done[i];
            size_t k = sh.first + i;
            if (d->rc) {
                cli_error("%s: line %zu: %s", d->rc == NMT_ERR_NUMERIC ? a->model[0] : a->src,
                          d->line + 1, d->message ? d->message : "out of memory");
                goto done;
            }
            for (int s = 0; s < 2; s++) {
                unk[s] += (size_t)d->unk[s];
                units[s] += (size_t)d->units[s];
            }
            if (out && nmt_align_write_links(out, d->links, d->n_links)) {
                cli_lib_error();
                goto done;
            }
            if (aer && nmt_aer_add_opts(aer, d->links, (size_t)d->n_links, in->gold_links[k],
                                        in->n_gold[k], in->aer_flags)) {
                cli_lib_error();
                goto done;
            }
            free(d->links);
            free(d->message);
            memset(d, 0, sizeof *d);
        }
    }
    status = 0;
done:
    for (size_t i = 0; sh.done && i < BLOCK; i++) {
        free(sh.done[i].links);
        free(sh.done[i].message);
    }
    for (int t = 0; ws && t < n_workers; t++)
        nmt_aligner_free(ws[t].al);
    free(ws);
    free(sh.done);
    return status;
}
