/* Internal: the threads that share the work of one training or decoding
 * pass. A job is cut into a fixed number of chunks; the caller and the
 * workers each take the next chunk not yet taken until none is left, so a
 * worker that the system has not scheduled costs nothing but its chunk
 * (the caller takes the rest itself).
 *
 * Chunk boundaries depend only on the job, never on which thread ran a
 * chunk, so a result is the same bits whichever thread computed it. */
#ifndef NMT_POOL_H
#define NMT_POOL_H

#include <stddef.h>

/* Runs chunk `chunk` of `n_chunks`. */
typedef void (*pool_fn)(void *ctx, int chunk, int n_chunks);

/* Sets the number of threads (the caller included; 1 = no workers). Not to
 * be called while a job runs. Returns 0, or -1 if no worker could be started
 * (then the work runs on the caller alone). */
int nmt_pool_set_threads(int n);
/* The number of threads set, at least 1. */
int nmt_pool_threads(void);
/* Runs fn(ctx, c, n_chunks) for c = 0 .. n_chunks-1, spread over the
 * threads, and returns when all are done. One job at a time: the pool is
 * the process's, and a job must not start another. */
void nmt_pool_run(pool_fn fn, void *ctx, int n_chunks);

/* How many chunks to cut `work` units into (elements, rows): one per thread,
 * but none smaller than `min_per_chunk` units, and at least one. Below that
 * size handing a chunk to another thread costs more than it saves. */
static inline int pool_chunks(size_t work, size_t min_per_chunk)
{
    size_t most = work / (min_per_chunk ? min_per_chunk : 1);
    size_t t = (size_t)nmt_pool_threads();
    return (int)(t < most ? t : most > 1 ? most : 1);
}

/* The rows [lo, hi) of chunk c when n rows are cut into n_chunks parts whose
 * sizes are multiples of `align` (but the last). */
static inline void pool_chunk_range(int n, int align, int c, int n_chunks, int *lo, int *hi)
{
    int blocks = (n + align - 1) / align;
    int b0 = (int)((long long)blocks * c / n_chunks);
    int b1 = (int)((long long)blocks * (c + 1) / n_chunks);
    *lo = b0 * align < n ? b0 * align : n;
    *hi = b1 * align < n ? b1 * align : n;
}

#endif
