/* The processes of a data-parallel run (dist.h): MPI when the build has it,
 * else a run of one. */
#include "nmt/dist.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nmt/error.h"

static double seconds, bytes_sent;

double nmt_dist_seconds(void)
{
    return seconds;
}

double nmt_dist_bytes_sent(void)
{
    return bytes_sent;
}

/* The number of processes mpirun (Open MPI, or a PMI launcher) says this
 * one belongs to, or 1. */
static int launched_size(void)
{
    const char *names[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        if (v && atoi(v) > 1)
            return atoi(v);
    }
    return 1;
}

#if NMT_HAVE_MPI
#include <mpi.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int active, rank, size = 1;

int nmt_dist_init(int *argc, char ***argv)
{
    if (launched_size() <= 1)
        return NMT_OK;
    if (MPI_Init(argc, argv) != MPI_SUCCESS)
        return nmt_set_error(NMT_ERR_IO, "MPI_Init failed");
    active = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return NMT_OK;
}

void nmt_dist_finalize(void)
{
    if (active)
        MPI_Finalize();
    active = 0;
}

void nmt_dist_abort(int code)
{
    if (active && size > 1)
        MPI_Abort(MPI_COMM_WORLD, code);
}

int nmt_dist_rank(void)
{
    return rank;
}

int nmt_dist_size(void)
{
    return size;
}

/* The sum over the processes, as a ring: rank r sends to r + 1 and
 * receives from r - 1. buf is cut into `size` segments. In the reduce-
 * scatter's round k (0 .. size-2) rank r sends segment (r - k) mod size,
 * which holds the sum of ranks r - k .. r, to r + 1, which adds it to its own
 * copy of that segment; after size - 1 rounds rank r holds the whole sum of
 * segment (r + 1) mod size. The all-gather then passes each finished
 * segment once round the ring, copied, not added.
 *
 * The order of every addition is fixed by the ring (segment s is summed as
 * ((b[s] + b[s+1]) + b[s+2]) + ... + b[s-1], ranks counted mod size), whatever the
 * network's timing, so a run with the same number of processes gives the
 * same bits, and every process ends with the same bits (the all-gather
 * copies). Each process sends 2 (size - 1) / size of buf: below twice its
 * size for any number of processes. A segment goes in pieces of at most
 * PIECE elements, so that the receive buffer stays small and counts fit in
 * an int; every process makes the same number of exchanges a round (those
 * of the longest segment, with empty pieces where its own are shorter), so
 * that each send meets its receive. */
enum { PIECE = 1 << 18 };

typedef void add_fn(void *into, const void *from, size_t n);

static void add_floats(void *into, const void *from, size_t n)
{
    float *a = into;
    const float *b = from;
    for (size_t i = 0; i < n; i++)
        a[i] += b[i];
}

static void add_doubles(void *into, const void *from, size_t n)
{
    double *a = into;
    const double *b = from;
    for (size_t i = 0; i < n; i++)
        a[i] += b[i];
}

/* Segment s of n elements over `size` segments: [*at, *at + *len). The
 * first n % size segments have one element more. */
static void segment(size_t n, int s, size_t *at, size_t *len)
{
    size_t q = n / (size_t)size, extra = n % (size_t)size, us = (size_t)s;
    *len = q + (us < extra);
    *at = us * q + (us < extra ? us : extra);
}

static int ring_sum(void *buf, size_t n, size_t width, MPI_Datatype type, add_fn *add)
{
    char *b = buf, *in = NULL;
    size_t piece = n / (size_t)size + 1 < PIECE ? n / (size_t)size + 1 : PIECE;
    if (!(in = malloc(piece * width)))
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for the gradient sum");
    size_t longest = n / (size_t)size + (n % (size_t)size != 0);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int rc = NMT_OK;
    for (int phase = 0; phase < 2 && rc == NMT_OK; phase++) {
        /* reduce-scatter: round k sends segment rank - k, receives rank - k - 1
         * and adds it; all-gather: round k sends segment rank + 1 - k (the
         * finished one, then those received), receives rank - k into place */
        for (int k = 0; k < size - 1 && rc == NMT_OK; k++) {
            int send_seg = (rank - k + phase + 2 * size) % size;
            int recv_seg = (rank - k - 1 + phase + 2 * size) % size;
            size_t s_at, s_len, r_at, r_len;
            segment(n, send_seg, &s_at, &s_len);
            segment(n, recv_seg, &r_at, &r_len);
            for (size_t off = 0; off < longest && rc == NMT_OK; off += piece) {
                int sn = (int)(off < s_len ? (s_len - off < piece ? s_len - off : piece) : 0);
                int rn = (int)(off < r_len ? (r_len - off < piece ? r_len - off : piece) : 0);
                char *into = phase == 0 ? in : b + (r_at + off) * width;
                if (MPI_Sendrecv(b + (s_at + off) * width, sn, type, next, phase, into, rn, type,
                                 prev, phase, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
                    rc = nmt_set_error(NMT_ERR_IO, "MPI_Sendrecv failed");
                    break;
                }
                if (phase == 0)
                    add(b + (r_at + off) * width, in, (size_t)rn);
                bytes_sent += (double)sn * (double)width;
            }
        }
    }
    free(in);
    return rc;
}

int nmt_dist_sum_floats(float *buf, size_t n)
{
    if (size <= 1)
        return NMT_OK;
    double t0 = now();
    int rc = ring_sum(buf, n, sizeof *buf, MPI_FLOAT, add_floats);
    seconds += now() - t0;
    return rc;
}

int nmt_dist_sum_doubles(double *buf, int n)
{
    if (size <= 1)
        return NMT_OK;
    double t0 = now();
    int rc = ring_sum(buf, (size_t)n, sizeof *buf, MPI_DOUBLE, add_doubles);
    seconds += now() - t0;
    return rc;
}

int nmt_dist_max_int(int v)
{
    if (size <= 1)
        return v;
    double t0 = now();
    int out = v;
    MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    seconds += now() - t0;
    return out;
}

int nmt_dist_bcast(void *buf, size_t bytes)
{
    if (size <= 1)
        return NMT_OK;
    double t0 = now();
    int rc = NMT_OK;
    for (size_t at = 0; at < bytes && rc == NMT_OK; at += (size_t)1 << 30) {
        size_t k = bytes - at < ((size_t)1 << 30) ? bytes - at : (size_t)1 << 30;
        if (MPI_Bcast((char *)buf + at, (int)k, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
            rc = nmt_set_error(NMT_ERR_IO, "MPI_Bcast failed");
    }
    seconds += now() - t0;
    return rc;
}

#else /* a build without MPI: one process */

int nmt_dist_init(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    int n = launched_size();
    if (n > 1)
        return nmt_set_error(NMT_ERR_ARG, "this build of nmt has no MPI, but mpirun started %d "
                             "of it: each would train alone and write the same files. Build "
                             "nmt with Open MPI (libopenmpi-dev) to train over several processes",
                             n);
    return NMT_OK;
}

void nmt_dist_finalize(void) {}
void nmt_dist_abort(int code) { (void)code; }
int nmt_dist_rank(void) { return 0; }
int nmt_dist_size(void) { return 1; }
int nmt_dist_sum_floats(float *buf, size_t n) { (void)buf, (void)n; return NMT_OK; }
int nmt_dist_sum_doubles(double *buf, int n) { (void)buf, (void)n; return NMT_OK; }
int nmt_dist_max_int(int v) { return v; }
int nmt_dist_bcast(void *buf, size_t bytes) { (void)buf, (void)bytes; return NMT_OK; }

#endif
