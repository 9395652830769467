/* A step's batches as the model reads them: which pairs (the epoch's plan,
 * and in a run of several processes this process's share), the batch
 * filled, its words dropped out (word dropout, docs/DESIGN.md), and
 * written to the batch log; and the dropout streams of a step in a run of
 * several processes.
 *
 * Word dropout is a replacement of ids by <unk> in the filled batch, before
 * the forward pass: the model, its gradients and their checks see an
 * ordinary batch, and the batch log holds what the model read. Its draws
 * come from the step's dropout generator, before the forward's masks; each
 * token's decision is a function of one key drawn from it and of the
 * token's place in the batch, so that it does not depend on the threads,
 * nor on how a batch is shared out among processes (all of which take rank
 * 0's key). */
#include "nmt/error.h"
#include "nmt/vocab.h"
#include "train/trainer.h"

/* splitmix64's finaliser: output c of splitmix64 seeded with u is
 * mix64(u + c * 0x9e3779b97f4a7c15). */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Whether token j of side s (0 source, 1 decoder input) of the batch's
 * pair k is replaced at rate p: a 24-bit uniform of its own draw below p
 * (the comparison of the RNN's dropout masks). */
static int dropped(uint64_t key, size_t k, int s, int j, float p)
{
    uint64_t c = (((uint64_t)(2 * k + (size_t)s)) << 32) + (uint64_t)j + 1;
    uint64_t w = mix64(key + c * 0x9e3779b97f4a7c15ULL);
    return (float)(w >> 40) * (1.0f / 16777216.0f) < p;
}

size_t nmt_word_dropout(nmt_batch *b, float p_src, float p_tgt, uint64_t key, size_t first)
{
    size_t n = 0;
    for (int i = 0; i < b->B; i++) {
        size_t k = first + (size_t)i;
        /* the source's tokens, not its </s> (the last of src_len) */
        for (int j = 0; p_src > 0 && j < b->src_len[i] - 1; j++) {
            int32_t *id = &b->src[(size_t)j * b->B + i];
            if (dropped(key, k, 0, j, p_src)) {
                *id = NMT_UNK;
                n++;
            }
        }
        /* the decoder's input y1..ym, not its <s> (j = 0); the labels
         * (tgt_out) stay */
        for (int j = 1; p_tgt > 0 && j < b->tgt_len[i]; j++) {
            int32_t *id = &b->tgt_in[(size_t)j * b->B + i];
            if (dropped(key, k, 1, j, p_tgt)) {
                *id = NMT_UNK;
                n++;
            }
        }
    }
    return n;
}

void nmt_step_share(const nmt_trainer *t, const size_t *pairs, int n, int *lo, int *hi)
{
    const nmt_corpus *c = t->train;
    double total = 0;
    for (int i = 0; i < n; i++)
        total += (double)(c->tgt_off[pairs[i] + 1] - c->tgt_off[pairs[i]] + 1);
    double before = 0;
    *lo = *hi = 0;
    int found = 0;
    for (int i = 0; i < n; i++) {
        double len = (double)(c->tgt_off[pairs[i] + 1] - c->tgt_off[pairs[i]] + 1);
        int owner = (int)((before + len / 2) * t->size / total);
        owner = owner < t->size ? owner : t->size - 1;
        if (owner == t->rank) {
            if (!found)
                *lo = i, found = 1;
            *hi = i + 1;
        }
        before += len;
    }
}

void nmt_step_rng(const nmt_trainer *t, size_t batch_of_step, int rank, nmt_rng *r)
{
    uint64_t z = t->s.seed ^ 0x94d049bb133111ebULL ^ ((uint64_t)t->st.step * 0x9e3779b97f4a7c15ULL) ^
                 ((uint64_t)(rank + 1) * 0xbf58476d1ce4e5b9ULL) ^
                 ((uint64_t)batch_of_step * 0xd6e8feb86659fd93ULL); /* --accumulate's k-th */
    nmt_rng_seed(r, z);
}

void nmt_plan_batch(const nmt_trainer *t, size_t b, const size_t **pairs, int *n)
{
    b -= t->block_first; /* a streamed corpus's block (0 in memory) */
    *pairs = t->plan.index + t->plan.start[b];
    *n = (int)(t->plan.start[b + 1] - t->plan.start[b]);
}

int nmt_step_batch(nmt_trainer *t, size_t k, const size_t *pairs, int lo, int hi, nmt_rng *r)
{
    int rc = nmt_batch_fill(&t->batch, t->train, pairs + lo, hi - lo);
    if (rc)
        return rc;
    float p_src = t->s.word_dropout_src, p_tgt = t->s.word_dropout_tgt;
    if (p_src > 0 || p_tgt > 0) { /* no draw without it: runs keep their bits */
        uint64_t key;
        if (t->size > 1) {
            /* every process takes rank 0's key, the first draw of rank 0's
             * stream of this batch, so that a pair's words are dropped
             * alike whichever process trains on it; rank 0's masks follow
             * the key in its own stream, as one process's do */
            nmt_rng r0;
            nmt_step_rng(t, k, 0, &r0);
            key = nmt_rng_next(&r0);
            if (t->rank == 0)
                *r = r0;
        } else {
            key = nmt_rng_next(r);
        }
        nmt_word_dropout(&t->batch, p_src, p_tgt, key, (size_t)lo);
    }
    /* guided alignment: the pairs' gold rows, from this epoch's pieces */
    long rows = t->links ? nmt_links_guide(&t->batch, t->train, t->links, t->s.guided_shift) : 0;
    if (rows < 0)
        return (int)rows;
    return t->batch_log ? nmt_batch_log_step(t) : NMT_OK;
}
