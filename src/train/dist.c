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

/* Floats per gathered chunk: rank 0 holds size of them at once. */
enum { CHUNK = 1 << 18 };

int nmt_dist_sum_floats(float *buf, size_t n)
{
    if (size <= 1)
        return NMT_OK;
    double t0 = now();
    float *all = NULL;
    if (rank == 0 && !(all = malloc((size_t)size * CHUNK * sizeof *all)))
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for the gradient sum");
    int rc = NMT_OK;
    for (size_t at = 0; at < n && rc == NMT_OK; at += CHUNK) {
        int k = (int)(n - at < CHUNK ? n - at : CHUNK);
        if (MPI_Gather(buf + at, k, MPI_FLOAT, all, k, MPI_FLOAT, 0, MPI_COMM_WORLD) !=
            MPI_SUCCESS) {
            rc = nmt_set_error(NMT_ERR_IO, "MPI_Gather failed");
            break;
        }
        if (rank == 0)
            for (int r = 1; r < size; r++) /* rank order, whatever the network */
                for (int i = 0; i < k; i++)
                    buf[at + (size_t)i] += all[(size_t)r * (size_t)k + (size_t)i];
        if (MPI_Bcast(buf + at, k, MPI_FLOAT, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
            rc = nmt_set_error(NMT_ERR_IO, "MPI_Bcast failed");
    }
    free(all);
    /* a rank sends its share to rank 0; rank 0 sends the sum to the others */
    bytes_sent += (double)n * sizeof(float) * (rank == 0 ? (double)(size - 1) : 1.0);
    seconds += now() - t0;
    return rc;
}

int nmt_dist_sum_doubles(double *buf, int n)
{
    if (size <= 1)
        return NMT_OK;
    double t0 = now();
    double *all = malloc((size_t)size * (size_t)n * sizeof *all);
    if (!all)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    int rc = MPI_Allgather(buf, n, MPI_DOUBLE, all, n, MPI_DOUBLE, MPI_COMM_WORLD) == MPI_SUCCESS
                 ? NMT_OK
                 : nmt_set_error(NMT_ERR_IO, "MPI_Allgather failed");
    for (int i = 0; rc == NMT_OK && i < n; i++) {
        double s = all[i];
        for (int r = 1; r < size; r++)
            s += all[(size_t)r * (size_t)n + (size_t)i];
        buf[i] = s;
    }
    free(all);
    bytes_sent += (double)n * sizeof(double) * (double)(size - 1);
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
