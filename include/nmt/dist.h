/* The processes of one data-parallel training run (MPI), or just
 * this one. Every call works without MPI too, as a run of one process, so
 * the trainer is written once. */
#ifndef NMT_DIST_H
#define NMT_DIST_H

#include <stddef.h>

/* Joins the run when this process was started by mpirun (MPI's environment
 * says so); otherwise, or in a build without MPI, it is a run of one. A
 * build without MPI started by mpirun with more than one process refuses
 * with NMT_ERR_ARG ("this build of nmt has no MPI ..."), rather than let N
 * copies train alone and write the same files. */
int nmt_dist_init(int *argc, char ***argv);
/* Leaves the run (at the end, on every process). */
void nmt_dist_finalize(void);
/* Ends every process of the run at once (after an error on one of them). */
void nmt_dist_abort(int code);

int nmt_dist_rank(void);  /* 0 .. size-1; 0 without MPI */
int nmt_dist_size(void);  /* 1 without MPI */

/* buf[n] becomes the sum over the processes of their buf, the same bits on
 * every process and from run to run with the same number of processes: a
 * ring all-reduce over MPI_Sendrecv (a reduce-scatter, then an all-gather)
 * whose additions come in an order fixed by the ring, not by the network
 * (MPI's own reductions promise no order). Each process sends
 * 2 (size - 1) / size of buf, whatever the number of processes. */
int nmt_dist_sum_floats(float *buf, size_t n);
int nmt_dist_sum_doubles(double *buf, int n);
/* The largest of the processes' v (to agree on a stop). */
int nmt_dist_max_int(int v);
/* Rank 0's buf[n] to every process. */
int nmt_dist_bcast(void *buf, size_t bytes);

/* Seconds spent in the calls above, and the bytes this process sent in
 * the sums (for the measurements of scripts/bench/bench-mpi; the few bytes of
 * nmt_dist_max_int and nmt_dist_bcast, routed as MPI chooses, are not
 * counted). */
double nmt_dist_seconds(void);
double nmt_dist_bytes_sent(void);

#endif
