/* Running again with the BLAS kernel the CPU deserves (cli_blas.h). */
#include "cli_blas.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "nmt/blas.h"
#include "nmt/error.h"

/* Whether one of the arguments (before "--") is one of the names. */
static int has_arg(int argc, char **argv, const char *a, const char *b)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--"))
            break;
        if (!strcmp(argv[i], a) || !strcmp(argv[i], b))
            return 1;
    }
    return 0;
}

/* -q or --quiet: the command will be quiet, so is this. */
static int quiet(int argc, char **argv)
{
    return has_arg(argc, argv, "-q", "--quiet");
}

/* Under mpirun only rank 0 prints; MPI has not started yet, so its rank is
 * read from what the launcher put in the environment. */
static int rank_zero(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *r = getenv(vars[i]);
        if (r)
            return atoi(r) == 0;
    }
    return 1;
}

static int say(int argc, char **argv)
{
    return !quiet(argc, argv) && rank_zero();
}

static const char *level_name(int level)
{
    static const char *const names[] = {"SSE only", "AVX", "AVX2 and FMA", "AVX-512"};
    return names[level < 0 ? 0 : level > 3 ? 3 : level];
}

/* The process run again: did OpenBLAS take the kernel asked for? */
static void check_taken(int argc, char **argv, const char *chosen)
{
    char from[64] = "", to[64] = "";
    if (sscanf(chosen, "%63s %63s", from, to) != 2)
        return;
    const char *kernel = nmt_blas_kernel();
    if (strcasecmp(kernel, to) && say(argc, argv))
        fprintf(stderr, "nmt: warning: OpenBLAS did not take OPENBLAS_CORETYPE=%s: it runs %s\n", to,
                kernel);
}

void cli_blas_choose(int argc, char **argv)
{
    if (has_arg(argc, argv, "-h", "--help"))
        return; /* a help runs no product */
    const char *chosen = getenv(NMT_BLAS_CHOSEN_ENV);
    if (chosen) {
        check_taken(argc, argv, chosen);
        return;
    }
    const char *keep = getenv(NMT_BLAS_KERNEL_ENV);
    if (keep && *keep && strcmp(keep, "auto")) {
        if (strcmp(keep, "keep") && say(argc, argv))
            fprintf(stderr, "nmt: warning: %s=%s is neither 'keep' nor 'auto': OpenBLAS's choice "
                            "is kept\n", NMT_BLAS_KERNEL_ENV, keep);
        return;
    }
    const char *fallback = getenv("NMT_TEST_BLAS_FALLBACK");
    if (getenv("OPENBLAS_CORETYPE") && !(fallback && !strcmp(fallback, "1")))
        return; /* the user's: never touched */

    nmt_cpu_features f;
    const char *test_cpu = getenv("NMT_TEST_CPU_FEATURES");
    if (test_cpu) {
        if (nmt_cpu_features_parse(test_cpu, &f)) {
            fprintf(stderr, "nmt: NMT_TEST_CPU_FEATURES: %s\n", nmt_error_message());
            return;
        }
    } else {
        nmt_cpu_features_read(&f);
    }
    const char *kernel = nmt_blas_kernel();
    const char *better = nmt_blas_kernel_for(kernel, &f);
    if (!better)
        return;

    char marker[160];
    snprintf(marker, sizeof marker, "%s %s", kernel, better);
    if (setenv("OPENBLAS_CORETYPE", better, 1) || setenv(NMT_BLAS_CHOSEN_ENV, marker, 1))
        return;
    if (say(argc, argv))
        fprintf(stderr, "nmt: OpenBLAS chose its %s kernel on a CPU with %s: running with "
                        "OPENBLAS_CORETYPE=%s (%s=keep keeps OpenBLAS's choice)\n",
                kernel, level_name(nmt_cpu_level(&f)), better, NMT_BLAS_KERNEL_ENV);
    fflush(NULL);
    execv("/proc/self/exe", argv);
    int err = errno;
    if (say(argc, argv))
        fprintf(stderr, "nmt: warning: could not run again with OPENBLAS_CORETYPE=%s (%s): "
                        "going on with %s\n", better, strerror(err), kernel);
    unsetenv(NMT_BLAS_CHOSEN_ENV);
    if (fallback && !strcmp(fallback, "1"))
        setenv("OPENBLAS_CORETYPE", kernel, 1);
    else
        unsetenv("OPENBLAS_CORETYPE");
}
