/* Training on a streamed corpus (--shuffle-buffer N): the epoch is read
 * from the files in blocks of N pairs (nmt/stream.h), and each block is
 * planned as a whole corpus would be (shuffled, sorted by length in pools,
 * cut into batches, the batches shuffled), with one generator that runs on
 * from block to block of the epoch. The epoch's batches are numbered on
 * across blocks, so that the loop's position (status.batch) and a step of
 * --accumulate K batches read as they do for a corpus in memory: a step
 * whose batches run past a block's end loads the next block between two of
 * them.
 *
 * Exact resume: a checkpoint keeps the block's line position, its number,
 * the number of its first batch and the generator's state at its start;
 * restored, the block is read and planned again into the very same
 * batches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"
#include "train/trainer.h"

int nmt_stream_blocks_open(nmt_trainer *t)
{
    const nmt_model *m = t->m;
    nmt_corpus_opts o = {.lowercase = m->cfg.lowercase, .max_len = t->s.max_len,
                         .skip_empty = 1, .subwords = m->subwords};
    if (t->s.subword_alpha > 0)
        return nmt_set_error(NMT_ERR_ARG, "--subword-alpha reads the whole corpus again each "
                             "epoch: it cannot go with --shuffle-buffer");
    if (!strcmp(t->s.src_path, "-") || !strcmp(t->s.tgt_path, "-"))
        return nmt_set_error(NMT_ERR_ARG, "--shuffle-buffer reads the files again each epoch "
                             "(and on resume): not from standard input");
    return nmt_stream_open(&t->stream, t->s.src_path, t->s.tgt_path, &o, m->src_vocab,
                           m->tgt_vocab, (size_t)t->s.shuffle_buffer);
}

void nmt_stream_blocks_epoch_rng(const nmt_trainer *t, nmt_rng *r)
{
    /* the in-memory plan's: a buffer larger than the corpus makes one
     * block, planned into the very batches of the corpus read whole */
    nmt_rng_seed(r, nmt_batch_epoch_seed(t->s.seed, t->st.epoch));
}

/* Grows the batch and the workspace for a block's longest rows, so that
 * they are sized by the longest pair read so far, as a corpus in memory
 * sizes them by its longest. A capacity changes no result (the passes
 * read the batch's own lengths), so a resumed run, which has seen fewer
 * blocks, trains to the same bits; it may happen between two batches of
 * a step, whose gradient sum lives outside the workspace. */
static int fit_rows(nmt_trainer *t)
{
    int src_T = t->src_T, tgt_T = t->tgt_T;
    nmt_corpus_max_lengths(t->train, &src_T, &tgt_T);
    if (src_T <= t->src_T && tgt_T <= t->tgt_T)
        return NMT_OK;
    nmt_batch_free(&t->batch);
    nmt_workspace_free(t->ws);
    t->ws = NULL;
    int rc = nmt_batch_alloc(&t->batch, t->s.batch_size, src_T, tgt_T);
    if (!rc)
        rc = nmt_workspace_create(&t->ws, t->m, t->s.batch_size, src_T, tgt_T);
    if (!rc) {
        t->src_T = src_T;
        t->tgt_T = tgt_T;
    }
    return rc;
}

/* Reads the block at the stream's position and plans it. */
static int load(nmt_trainer *t)
{
    const nmt_corpus *block;
    int last;
    t->block_line = nmt_stream_tell(t->stream);
    t->block_rng = t->shuffle_rng;
    nmt_batch_plan_free(&t->plan);
    int rc = nmt_stream_next(t->stream, &block, &last);
    if (rc)
        return rc;
    if (block->n == 0)
        return nmt_set_error(NMT_ERR_FORMAT, "%s: no pair to train on after line %zu (of "
                             "epoch %d's block %zu): were the files changed?", t->s.src_path,
                             t->block_line, t->st.epoch, t->block_index);
    t->train = block;
    t->block_last = last;
    rc = nmt_batch_plan_make_rng(&t->plan, block, t->s.batch_size, t->s.batch_tokens,
                                 t->s.shuffle, &t->shuffle_rng);
    if (!rc)
        rc = fit_rows(t);
    /* the epoch's batches are known once its last block is */
    t->st.n_batches = last ? t->block_first + t->plan.n_batches : 0;
    return rc;
}

int nmt_stream_blocks_at(nmt_trainer *t, size_t b)
{
    int rc;
    if (t->plan_epoch != t->st.epoch) {
        if (t->block_restored) { /* the checkpoint's block, its fields restored */
            t->block_restored = 0;
            t->shuffle_rng = t->block_rng;
            rc = nmt_stream_seek(t->stream, t->block_line);
        } else {
            t->block_first = t->block_index = 0;
            nmt_stream_blocks_epoch_rng(t, &t->shuffle_rng);
            rc = nmt_stream_seek(t->stream, 0);
        }
        if (rc || (rc = load(t)))
            return rc;
        t->plan_epoch = t->st.epoch;
    }
    while (b >= t->block_first + t->plan.n_batches) {
        if (t->block_last)
            return 0;
        t->block_first += t->plan.n_batches;
        t->block_index++;
        if ((rc = load(t)))
            return rc;
    }
    if (b < t->block_first)
        return nmt_set_error(NMT_ERR_FORMAT, "batch %zu of epoch %d is before the block read "
                             "(its first batch is %zu)", b, t->st.epoch, t->block_first);
    return 1;
}
