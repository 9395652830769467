/* bench-sgemm: the machine's limit for scripts/bench/bench. Times OpenBLAS sgemm
 * (row-major, as the model calls it) on the given shapes at a thread count
 * and prints one JSON object a line:
 *   {"label": "...", "M": .., "N": .., "K": .., "ta": 0, "tb": 1,
 *    "gflops_median": .., "gflops_max": .., "repeats": ..}
 * A shape is LABEL:M,N,K[,TA,TB]; TA/TB say whether A/B are stored
 * transposed, as in the model's own calls. Each repeat runs the product until
 * --min-time has passed; the median over repeats is what scripts/bench/bench uses,
 * the maximum shows what an unloaded machine would give. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static float *random_matrix(size_t n, unsigned *seed)
{
    float *p = malloc(n * sizeof *p);
    if (!p)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        *seed = *seed * 1103515245u + 12345u;
        p[i] = (float)((*seed >> 8) & 0xffff) / 65536.0f - 0.5f;
    }
    return p;
}

typedef struct shape {
    char label[64];
    int M, N, K, ta, tb;
} shape;

static int parse_shape(const char *s, shape *out)
{
    memset(out, 0, sizeof *out);
    const char *colon = strchr(s, ':');
    if (!colon || colon == s || (size_t)(colon - s) >= sizeof out->label)
        return -1;
    memcpy(out->label, s, (size_t)(colon - s));
    for (const char *c = out->label; *c; c++) /* printed into JSON as is */
        if (!(*c == '_' || *c == '-' || *c == '.' || (*c >= '0' && *c <= '9') ||
              (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')))
            return -1;
    char tail;
    int n = sscanf(colon + 1, "%d,%d,%d,%d,%d%c", &out->M, &out->N, &out->K, &out->ta,
                   &out->tb, &tail);
    if (n != 3 && n != 5)
        return -1;
    if (out->M < 1 || out->N < 1 || out->K < 1 || out->M > 65536 || out->N > 65536 ||
        out->K > 65536 || (unsigned)out->ta > 1 || (unsigned)out->tb > 1)
        return -1;
    return 0;
}

/* GFLOP/s of repeats runs of C = A . B, each lasting at least min_time. */
static int time_shape(const shape *sh, int repeats, double min_time, double *median,
                      double *best)
{
    size_t M = (size_t)sh->M, N = (size_t)sh->N, K = (size_t)sh->K;
    unsigned seed = 12345;
    float *A = random_matrix(M * K, &seed), *B = random_matrix(K * N, &seed);
    float *C = calloc(M * N, sizeof *C);
    double *rates = calloc((size_t)repeats, sizeof *rates);
    if (!A || !B || !C || !rates) {
        free(A), free(B), free(C), free(rates);
        return -1;
    }
    /* stored layouts: A is [M, K] or, transposed, [K, M]; B is [K, N] or [N, K] */
    int lda = sh->ta ? sh->M : sh->K, ldb = sh->tb ? sh->K : sh->N;
    enum CBLAS_TRANSPOSE ta = sh->ta ? CblasTrans : CblasNoTrans;
    enum CBLAS_TRANSPOSE tb = sh->tb ? CblasTrans : CblasNoTrans;
    double flops = 2.0 * (double)M * (double)N * (double)K;
    /* warm-up: thread start, page faults, caches */
    cblas_sgemm(CblasRowMajor, ta, tb, sh->M, sh->N, sh->K, 1, A, lda, B, ldb, 0, C, sh->N);
    for (int r = 0; r < repeats; r++) {
        long calls = 0;
        double t0 = now(), t;
        do {
            cblas_sgemm(CblasRowMajor, ta, tb, sh->M, sh->N, sh->K, 1, A, lda, B, ldb, 0, C,
                        sh->N);
            calls++;
            t = now() - t0;
        } while (t < min_time);
        rates[r] = flops * (double)calls / t * 1e-9;
    }
    qsort(rates, (size_t)repeats, sizeof *rates, cmp_double);
    *median = repeats % 2 ? rates[repeats / 2]
                          : 0.5 * (rates[repeats / 2 - 1] + rates[repeats / 2]);
    *best = rates[repeats - 1];
    free(A), free(B), free(C), free(rates);
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "Usage: bench-sgemm [--threads N] [--repeats R] [--min-time S] "
               "LABEL:M,N,K[,TA,TB]...\n");
}

int main(int argc, char **argv)
{
    int threads = 2, repeats = 5;
    double min_time = 0.2;
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (i + 1 >= argc) {
            usage(stderr);
            return 2;
        }
        char *end;
        if (strcmp(argv[i], "--threads") == 0)
            threads = (int)strtol(argv[++i], &end, 10);
        else if (strcmp(argv[i], "--repeats") == 0)
            repeats = (int)strtol(argv[++i], &end, 10);
        else if (strcmp(argv[i], "--min-time") == 0)
            min_time = strtod(argv[++i], &end);
        else {
            usage(stderr);
            return 2;
        }
        if (*end || threads < 1 || threads > 256 || repeats < 1 || repeats > 1000 ||
            !(min_time >= 0 && min_time <= 60)) {
            fprintf(stderr, "bench-sgemm: bad value for %s: '%s'\n", argv[i - 1], argv[i]);
            return 2;
        }
    }
    if (i == argc) {
        usage(stderr);
        return 2;
    }
    openblas_set_num_threads(threads);
    for (; i < argc; i++) {
        shape sh;
        if (parse_shape(argv[i], &sh)) {
            fprintf(stderr, "bench-sgemm: bad shape '%s' (LABEL:M,N,K[,TA,TB])\n", argv[i]);
            return 2;
        }
        double median, best;
        if (time_shape(&sh, repeats, min_time, &median, &best)) {
            fprintf(stderr, "bench-sgemm: out of memory for %s\n", argv[i]);
            return 1;
        }
        printf("{\"label\": \"%s\", \"M\": %d, \"N\": %d, \"K\": %d, \"ta\": %d, \"tb\": %d, "
               "\"threads\": %d, \"gflops_median\": %.3f, \"gflops_max\": %.3f, "
               "\"repeats\": %d}\n",
               sh.label, sh.M, sh.N, sh.K, sh.ta, sh.tb, threads, median, best, repeats);
        fflush(stdout);
    }
    return 0;
}
