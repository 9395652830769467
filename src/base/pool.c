/* The thread pool of pool.h.
 *
 * Why not OpenBLAS's own threads: they wait for work by spinning on
 * sched_yield, so on a machine where anything else is runnable (even a
 * process at nice 19) every yield hands the core away for a whole time
 * slice; measured, training at 2 threads then ran at a quarter of its speed,
 * slower than at 1 thread. Here OpenBLAS runs single-threaded and the
 * products are cut into chunks by the caller (linear.c), so that
 * - an idle worker spins on `pause` (which keeps its core) for a short while,
 *   then sleeps on a condition variable until the next job;
 * - chunks are taken, not assigned: if a worker is not running, the caller
 *   does its chunk and never waits for it.
 * The element-wise passes (attention, softmax, cell) use the same pool. */
#include "base/pool.h"

#include <cblas.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "nmt/error.h"
#include "nmt/threads.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

/* How long an idle worker spins before it sleeps: about what sleeping
 * costs, the rule for waiting without knowing how long (spin as long as
 * giving up would cost: never worse than twice the best choice in
 * hindsight). Measured on a 2-core machine during Transformer steps: a
 * sleeping worker ran 10-20 us after the caller's broadcast, and of the gaps
 * between jobs about 30 % were under 30 us and more than half over 200 us
 * (the caller alone on products too small to cut), where a longer spin only
 * burns a core that OpenBLAS on the caller, or another process, could use:
 * at 200 us this spin was 3-6 % of a step's cycles. */
#define SPIN_NS 30000

/* The chunk number of a job that is over: no chunk can be taken from it. */
#define CLOSED UINT32_MAX

enum { MAX_THREADS = 256 };

static struct {
    int n_threads; /* the caller included */
    int n_workers;
    pthread_t workers[MAX_THREADS];
    pthread_mutex_t lock;
    pthread_cond_t wake;
    atomic_int sleeping; /* workers blocked on `wake` */
    atomic_int quit;
    /* The job: `state` is (job number << 32) | next chunk to take. A chunk
     * is taken by a compare-and-swap of the whole state, so it is taken for
     * the job whose number the taker read. The fields below belong to that
     * job only while it is open: nmt_pool_run closes a finished job (its
     * next chunk becomes CLOSED, past any n_chunks) before it rewrites them
     * for the next, so a late worker that read the new fields cannot take a
     * chunk with the old job's state (see take_chunks). */
    _Atomic uint64_t state;
    _Atomic(pool_fn) fn;
    _Atomic(void *) ctx;
    atomic_int n_chunks;
    atomic_int done;
} pool = {.n_threads = 1, .state = CLOSED, .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Takes and runs chunks of job `job` until none is left.
 *
 * The fields are read before the chunk is claimed, and a claim succeeds only
 * on the state the taker read, still open. Why that is enough: the caller
 * writes the fields of job J+1 (release) only after it has closed job J; a
 * taker that read any of J+1's fields (acquire) therefore sees the close
 * before its compare-and-swap, which then fails on J's state, and the taker
 * finds job J over. So a chunk always runs with its own job's fn, ctx and
 * n_chunks, once, and `done` counts each of them once. */
static void take_chunks(uint32_t job)
{
    uint64_t s = atomic_load_explicit(&pool.state, memory_order_acquire);
    pool_fn fn = atomic_load_explicit(&pool.fn, memory_order_acquire);
    void *ctx = atomic_load_explicit(&pool.ctx, memory_order_acquire);
    int n = atomic_load_explicit(&pool.n_chunks, memory_order_acquire);
    for (;;) {
        uint32_t chunk = (uint32_t)s;
        if ((uint32_t)(s >> 32) != job || chunk == CLOSED || chunk >= (uint32_t)n)
            return;
        if (!atomic_compare_exchange_weak_explicit(&pool.state, &s, s + 1, memory_order_acq_rel,
                                                   memory_order_acquire))
            continue; /* s now holds the current state */
        fn(ctx, (int)chunk, n);
        atomic_fetch_add_explicit(&pool.done, 1, memory_order_release);
        s = atomic_load_explicit(&pool.state, memory_order_acquire);
    }
}

static void *worker_main(void *arg)
{
    (void)arg;
    uint32_t seen = (uint32_t)(atomic_load(&pool.state) >> 32);
    for (;;) {
        uint64_t t0 = 0;
        uint32_t job;
        for (int spins = 0;; spins++) {
            job = (uint32_t)(atomic_load_explicit(&pool.state, memory_order_acquire) >> 32);
            if (job != seen || atomic_load_explicit(&pool.quit, memory_order_relaxed))
                break;
            cpu_relax();
            if ((spins & 63) != 63)
                continue;
            uint64_t t = now_ns();
            if (!t0)
                t0 = t;
            if (t - t0 < SPIN_NS)
                continue;
            /* Sleep. `sleeping` is raised before the job number is read
             * again under the lock, and nmt_pool_run raises the job number before
             * it reads `sleeping`: one of the two sees the other. */
            pthread_mutex_lock(&pool.lock);
            atomic_fetch_add(&pool.sleeping, 1);
            while ((uint32_t)(atomic_load(&pool.state) >> 32) == seen && !atomic_load(&pool.quit))
                pthread_cond_wait(&pool.wake, &pool.lock);
            atomic_fetch_sub(&pool.sleeping, 1);
            pthread_mutex_unlock(&pool.lock);
            t0 = 0;
        }
        if (atomic_load(&pool.quit))
            return NULL;
        seen = job;
        take_chunks(job);
    }
}

static void stop_workers(void)
{
    if (!pool.n_workers)
        return;
    pthread_mutex_lock(&pool.lock);
    atomic_store(&pool.quit, 1);
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);
    for (int i = 0; i < pool.n_workers; i++)
        pthread_join(pool.workers[i], NULL);
    atomic_store(&pool.quit, 0);
    pool.n_workers = 0;
    pool.n_threads = 1;
}

int nmt_pool_set_threads(int n)
{
    /* The products run single-threaded inside OpenBLAS, whichever n. */
    openblas_set_num_threads(1);
    n = n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : n;
    if (n == pool.n_threads)
        return 0;
    stop_workers();
    for (int i = 0; i < n - 1; i++) {
        if (pthread_create(&pool.workers[i], NULL, worker_main, NULL) != 0)
            break;
        pool.n_workers++;
    }
    pool.n_threads = pool.n_workers + 1;
    return pool.n_threads == n ? 0 : -1;
}

int nmt_set_threads(int n)
{
    int want = n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : n;
    if (nmt_pool_set_threads(n) == 0)
        return NMT_OK;
    return nmt_set_error(NMT_ERR_NOMEM, "could start only %d of %d threads; the work goes on with those",
                         pool.n_threads, want);
}

int nmt_pool_threads(void)
{
    /* A program that never set the threads still gets single-threaded
     * OpenBLAS (its default is every core, with the waiting described above). */
    static atomic_int blas_set;
    if (!atomic_load_explicit(&blas_set, memory_order_relaxed)) {
        openblas_set_num_threads(1);
        atomic_store(&blas_set, 1);
    }
    return pool.n_threads;
}

void nmt_pool_run(pool_fn fn, void *ctx, int n_chunks)
{
    if (n_chunks <= 0)
        return;
    if (pool.n_workers == 0 || n_chunks == 1) {
        for (int c = 0; c < n_chunks; c++)
            fn(ctx, c, n_chunks);
        return;
    }
    /* The last job is closed (nmt_pool_run closes each before it returns),
     * so no worker can claim a chunk while its fields are rewritten. Publish
     * the fields, then the new job number with chunk 0. */
    atomic_store_explicit(&pool.fn, fn, memory_order_release);
    atomic_store_explicit(&pool.ctx, ctx, memory_order_release);
    atomic_store_explicit(&pool.n_chunks, n_chunks, memory_order_release);
    atomic_store_explicit(&pool.done, 0, memory_order_relaxed);
    uint32_t job = (uint32_t)(atomic_load(&pool.state) >> 32) + 1;
    atomic_store(&pool.state, (uint64_t)job << 32);
    if (atomic_load(&pool.sleeping)) {
        pthread_mutex_lock(&pool.lock);
        pthread_cond_broadcast(&pool.wake);
        pthread_mutex_unlock(&pool.lock);
    }
    take_chunks(job);
    /* Wait for chunks that workers took and still run. If that takes long,
     * the worker has been descheduled: give it the core. */
    for (int spins = 0;
         atomic_load_explicit(&pool.done, memory_order_acquire) < n_chunks; spins++) {
        if (spins < 4096)
            cpu_relax();
        else
            sched_yield();
    }
    /* Every chunk was claimed and has run; close the job before the next
     * call rewrites the fields (take_chunks says why). */
    atomic_store(&pool.state, ((uint64_t)job << 32) | CLOSED);
}
