/* The threads that share the work of a training or decoding pass: the
 * matrix products and the element-wise work (src/base/pool.c). */
#ifndef NMT_THREADS_H
#define NMT_THREADS_H

/* Sets the number of threads, the caller's included (below 1 means 1). Not
 * to be called while a pass runs. If not every thread could be started,
 * returns NMT_ERR_NOMEM with a message that says how many run: the work
 * still goes on, on those. */
int nmt_set_threads(int n);

#endif
