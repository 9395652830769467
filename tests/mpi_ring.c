/* The ring all-reduce of src/train/dist.c, run by tests/cli/mpi.sh under
 * mpirun with several process counts. Every process makes every process's
 * buffer (random floats from the rank), so each can work out the sum in the
 * order dist.h promises and check the ring's result bit for bit: segment s
 * of size segments (the first n % size one element longer) is
 * ((b[s] + b[s+1]) + b[s+2]) + ... + b[s-1]. Also: doubles, every length
 * from 0 to past size (segments of one element and empty ones), a buffer
 * longer than the ring's pieces, and the bytes each process says it sent:
 * 2 n - (the lengths of segments rank + 1 and rank + 2), which is at most
 * 2 (size - 1) / size of the buffer plus two elements.
 * Prints "ok" on rank 0 and exits 0 when every check passed on every rank. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/dist.h"
#include "nmt/error.h"

static int size, rank, failed;

static void check(int ok, const char *what, size_t n)
{
    if (!ok) {
        fprintf(stderr, "rank %d: %s (n = %zu)\n", rank, what, n);
        failed = 1;
    }
}

/* A float in [-1, 1) from (seed, i): the same on every process. */
static float value(uint64_t seed, size_t i)
{
    uint64_t z = seed * 0x9e3779b97f4a7c15ULL + i * 0xbf58476d1ce4e5b9ULL + 1;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (float)((double)(z >> 40) / (double)(1ULL << 24) * 2.0 - 1.0);
}

static size_t segment_of(size_t n, size_t i)
{
    size_t q = n / (size_t)size, extra = n % (size_t)size;
    size_t big = extra * (q + 1); /* the first `extra` segments hold q + 1 */
    return i < big ? i / (q + 1) : extra + (i - big) / q;
}

static size_t segment_len(size_t n, int s)
{
    return n / (size_t)size + ((size_t)s < n % (size_t)size);
}

static void floats_of(size_t n)
{
    float *buf = malloc((n ? n : 1) * sizeof *buf);
    for (size_t i = 0; i < n; i++)
        buf[i] = value((uint64_t)rank, i);
    double before = nmt_dist_bytes_sent();
    check(nmt_dist_sum_floats(buf, n) == NMT_OK, "nmt_dist_sum_floats failed", n);
    double sent = nmt_dist_bytes_sent() - before;
    size_t mismatch = 0;
    for (size_t i = 0; i < n; i++) {
        int s = (int)segment_of(n, i);
        float sum = value((uint64_t)s, i);
        for (int k = 1; k < size; k++)
            sum += value((uint64_t)((s + k) % size), i);
        mismatch += memcmp(&sum, &buf[i], sizeof sum) != 0;
    }
    check(mismatch == 0, "float sums not those of the ring's order", n);
    double want = (double)(2 * n - segment_len(n, (rank + 1) % size) -
                           segment_len(n, (rank + 2) % size)) * sizeof(float);
    check(sent == want, "bytes sent not 2 n minus two segments", n);
    check(sent <= 2.0 * (size - 1) / size * (double)n * sizeof(float) + 2 * sizeof(float),
          "more than 2 (size - 1) / size of the buffer sent", n);
    free(buf);
}

static void doubles_of(int n)
{
    double buf[8];
    for (int i = 0; i < n; i++)
        buf[i] = (double)value((uint64_t)rank + 100, (size_t)i) * 1e10;
    check(nmt_dist_sum_doubles(buf, n) == NMT_OK, "nmt_dist_sum_doubles failed", (size_t)n);
    for (int i = 0; i < n; i++) {
        int s = (int)segment_of((size_t)n, (size_t)i);
        double sum = (double)value((uint64_t)s + 100, (size_t)i) * 1e10;
        for (int k = 1; k < size; k++)
            sum += (double)value((uint64_t)((s + k) % size) + 100, (size_t)i) * 1e10;
        check(memcmp(&sum, &buf[i], sizeof sum) == 0, "double sums not in the ring's order",
              (size_t)n);
    }
}

int main(int argc, char **argv)
{
    if (nmt_dist_init(&argc, &argv) != NMT_OK) {
        fprintf(stderr, "%s\n", nmt_error_message());
        return 1;
    }
    size = nmt_dist_size();
    rank = nmt_dist_rank();
    for (size_t n = 0; n <= (size_t)size + 3; n++)
        floats_of(n);
    floats_of(1000003);
    /* past the ring's pieces (1 << 18 elements) in every segment, and a
     * length where segments differ by one across a piece boundary */
    floats_of((size_t)size * (1u << 18) + 1);
    floats_of((size_t)size * 3 * (1u << 18) + (size_t)size - 1);
    for (int n = 0; n <= 8; n++)
        doubles_of(n);
    int any = nmt_dist_max_int(failed);
    if (rank == 0 && !any)
        printf("ok: %d processes\n", size);
    nmt_dist_finalize();
    return any ? 1 : 0;
}
